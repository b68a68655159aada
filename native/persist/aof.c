/* aof.c — the append-only log's file (aof.h): the sink that writes exec's write-effect stream
 * (exec/propagate.c) with appendfsync's policy, the fsync worker thread, replay at start with
 * aof-load-truncated, and BGREWRITEAOF's forked child and the parent's side of it.
 */
#include "core/clock.h"
#include "persist/aof.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/snapshot_io.h"
#include "persist/snapshot.h"
#include "exec/child.h"
#include "exec/command.h"
#include "exec/value_type.h"

struct gr_aof {
    int fd;
    int retry_failed_write;        /* set by the cron, shutdown and stop: where a failed write is retried */
    char path[1024];
    int64_t current_size;          /* bytes in the file */
    int64_t base_size;             /* its size after the last rewrite (or at start) */
    int64_t unsynced;              /* bytes written since the last fdatasync began */
    int64_t last_fsync_ms;
    int last_write_ok;
    int last_write_errno;
    int64_t lost_entries;          /* entries the stream could not hold (out of memory, no rendering) */
    /* WAITAOF on a primary counts replicas by these (a replica's REPLCONF ACK .. FACK <offset>) */
    int64_t written_reploff;       /* db->repl.offset when the file last held every write */
    int64_t fsynced_reploff;       /* the same, once fdatasynced (atomic: the worker sets it) */
    int64_t fsync_reploff_pending; /* written_reploff when the worker's fsync was asked for */
    int fsynced_held;              /* a replica's full sync: the file holds the old data until the rewrite ends */
    uint32_t fsynced_epoch;        /* +1 at each hold: a worker's fsync asked for before it sets nothing */
    uint32_t fsync_epoch_pending;  /* fsynced_epoch when the worker's fsync was asked for */
    int rewrite_releases_hold;     /* the running rewrite was forked during the hold: its file has the new data */
    /* everysec's worker: fdatasyncs a dup of fd when asked */
    pthread_t worker;
    int worker_started;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int fsync_fd;                  /* the descriptor asked for, -1 none */
    int fsync_running;
    int stop;
    int64_t delayed_fsync;         /* asked while the previous one still ran (aof_delayed_fsync) */
    int32_t *fsync_errno;          /* db->persistence.aof_fsync_errno: 0 after a good fsync, else its errno */
    /* BGREWRITEAOF */
    pid_t child;
    char temp_path[1100];
    uint8_t *rewrite_buffer;       /* the stream since the fork, appended to the new file */
    size_t rewrite_length, rewrite_capacity;
    int rewrite_buffer_failed;
    int64_t rewrite_started_ms;
    int64_t last_rewrite_seconds;
    int last_rewrite_ok;
    int64_t rewrites;
    int64_t consecutive_failures;
    int rewrite_scheduled;
};

static int fsync_directory_of(const char *path) {
    char copy[1100];
    snprintf(copy, sizeof copy, "%s", path);
    int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY);
    if (fd < 0) return -1;
    int status = fsync(fd);
    close(fd);
    return status;
}

/* ---- the everysec worker ---- */

static void *fsync_worker(void *argument) {
    gr_aof_t *aof = argument;
    pthread_mutex_lock(&aof->lock);
    while (!aof->stop) {
        if (aof->fsync_fd < 0) {
            pthread_cond_wait(&aof->wake, &aof->lock);
            continue;
        }
        int fd = aof->fsync_fd;
        aof->fsync_fd = -1;
        aof->fsync_running = 1;
        pthread_mutex_unlock(&aof->lock);
        /* As Redis's bio: a failed fsync is an error state admission sees (-MISCONF to writes)
         * until one succeeds; the cron asks again each second while it lasts. */
        int status = fdatasync(fd) == 0 ? 0 : errno;
        close(fd);                         /* the dup made for this fsync */
        int before = __atomic_exchange_n(aof->fsync_errno, status, __ATOMIC_RELAXED);
        if (status && !before) gr_log_to_stderr("Fail to fsync the AOF file: %s", strerror(status));
        else if (!status && before) gr_log_to_stderr("AOF fsync error looks solved, writes are accepted again.");
        pthread_mutex_lock(&aof->lock);
        aof->fsync_running = 0;
        if (!status && !aof->fsynced_held && aof->fsync_epoch_pending == aof->fsynced_epoch)
            __atomic_store_n(&aof->fsynced_reploff, aof->fsync_reploff_pending, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&aof->lock);
    return NULL;
}

/* Ask the worker to fsync the current file (a dup, so a rewrite may replace fd meanwhile). */
static void request_background_fsync(gr_aof_t *aof) {
    pthread_mutex_lock(&aof->lock);
    if (aof->fsync_running || aof->fsync_fd >= 0) {
        aof->delayed_fsync++;
        pthread_mutex_unlock(&aof->lock);
        return;
    }
    int fd = dup(aof->fd);
    if (fd >= 0) {
        aof->fsync_fd = fd;
        aof->fsync_reploff_pending = aof->written_reploff;
        aof->fsync_epoch_pending = aof->fsynced_epoch;
        aof->unsynced = 0;
        aof->last_fsync_ms = gr_monotonic_ms();
        pthread_cond_signal(&aof->wake);
    }
    pthread_mutex_unlock(&aof->lock);
}

/* ---- the sink: exec's pending stream to the file ---- */

static void rewrite_buffer_append(gr_aof_t *aof, const uint8_t *data, size_t length) {
    if (aof->rewrite_buffer_failed) return;
    if (aof->rewrite_length + length > aof->rewrite_capacity) {
        size_t capacity = aof->rewrite_capacity ? aof->rewrite_capacity : 1 << 16;
        while (capacity < aof->rewrite_length + length) capacity *= 2;
        uint8_t *grown = realloc(aof->rewrite_buffer, capacity);
        if (!grown) { aof->rewrite_buffer_failed = 1; return; }
        aof->rewrite_buffer = grown;
        aof->rewrite_capacity = capacity;
    }
    memcpy(aof->rewrite_buffer + aof->rewrite_length, data, length);
    aof->rewrite_length += length;
}

/* write() as much as it takes; the bytes that reached the file (a short count: errno says why). */
static size_t write_some(int fd, const uint8_t *data, size_t length) {
    size_t done = 0;
    while (done < length) {
        ssize_t n = write(fd, data + done, length - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            if (n == 0) errno = ENOSPC;
            break;
        }
        done += (size_t)n;
    }
    return done;
}

/* appendfsync always promised that no reply leaves before its write is on disk, and replies
 * of this batch are already staged in both transports: as Redis, the process ends here,
 * before any of them can leave (nothing acknowledged is lost; the client sees the connection
 * close). */
static _Noreturn void exit_for_always(const char *what, int error) {
    gr_log_to_stderr("Can't persist the append only file to disk with appendfsync always (%s: %s). Exiting...",
                     what, strerror(error));
    _exit(1);
}

/* The pending stream to the file, as Redis 7's flushAppendOnlyFile: a short write is cut back
 * off the file with ftruncate, so the file always ends on a whole command; a failed write
 * keeps the bytes for the next flush (the cron retries) and sets the error state admission
 * answers -MISCONF from, until a write succeeds; under appendfsync always it ends the process. */
static void aof_sink(void *context, gr_server_t *db) {
    gr_aof_t *aof = context;
    gr_propagation_t *p = &db->propagation;
    if (p->failed) {                       /* an entry was lost: say so in INFO, keep going */
        aof->lost_entries++;
        aof->last_write_ok = 0;
        p->failed = 0;
    }
    if (!p->length) {
        aof->written_reploff = db->repl.offset;   /* everything applied so far is in the file */
        return;
    }
    /* After a failed write the cron retries it (ten times a second; shutdown and stop too), not every batch: a busy-polled
     * ring would otherwise write and cut back a partial command in a loop, and a kill -9 between
     * the two would leave it in the file. */
    if (db->persistence.aof_write_errno && !aof->retry_failed_write) return;
    size_t written = write_some(aof->fd, p->data, p->length);
    if (written < p->length) {
        int error = errno;
        if (written > 0 && ftruncate(aof->fd, (off_t)aof->current_size) == 0) written = 0;   /* nothing partial stays */
        if (db->config.appendfsync == GR_APPENDFSYNC_ALWAYS) exit_for_always("write", error);
        if (!db->persistence.aof_write_errno)
            gr_log_to_stderr(written ? "Short write while writing to the AOF file, and it could not be removed: %s"
                                     : "Error writing to the AOF file: %s", strerror(error));
        db->persistence.aof_write_errno = error;
        aof->last_write_errno = error;
        aof->last_write_ok = 0;
        if (written > 0) {                 /* it could not be cut back: it stays, and is not written twice */
            if (aof->child > 0) rewrite_buffer_append(aof, p->data, written);
            aof->current_size += (int64_t)written;
            aof->unsynced += (int64_t)written;
            memmove(p->data, p->data + written, p->length - written);
            p->length -= written;
        }
        return;
    }
    if (db->persistence.aof_write_errno) {
        gr_log_to_stderr("AOF write error looks solved, writes are accepted again.");
        db->persistence.aof_write_errno = 0;
    }
    if (aof->child > 0) rewrite_buffer_append(aof, p->data, p->length);
    aof->current_size += (int64_t)p->length;
    aof->unsynced += (int64_t)p->length;
    if (!aof->lost_entries) aof->last_write_ok = 1;
    p->length = 0;
    aof->written_reploff = db->repl.offset;
    if (db->config.appendfsync == GR_APPENDFSYNC_ALWAYS) p->sync_pending = 1;   /* aof_sync, before the replies */
}

/* appendfsync always: what the batches since the last call wrote reaches the disk, or the
 * process ends before their replies leave. */
static void aof_sync(void *context, gr_server_t *db) {
    gr_aof_t *aof = context;
    (void)db;
    if (fdatasync(aof->fd) != 0) exit_for_always("fsync", errno);
    if (!aof->fsynced_held) __atomic_store_n(&aof->fsynced_reploff, aof->written_reploff, __ATOMIC_RELEASE);
    aof->unsynced = 0;
    aof->last_fsync_ms = gr_monotonic_ms();
}

/* ---- the dataset as commands (BGREWRITEAOF's child, CONFIG SET appendonly yes) ---- */

typedef struct dataset_writer {
    gr_server_t *db;
    int fd;
    uint8_t buffer[1 << 16];
    size_t used;
    int failed;
    int64_t now_ms;
    int64_t keys;
    int64_t key_delay_us;
} dataset_writer_t;

static void out_bytes(dataset_writer_t *w, const void *data, size_t length) {
    if (w->failed) return;
    if (w->used + length > sizeof w->buffer) {
        if (gr_persist_write_all(w->fd, w->buffer, w->used) != 0) { w->failed = 1; return; }
        w->used = 0;
        if (length > sizeof w->buffer) {
            if (gr_persist_write_all(w->fd, data, length) != 0) w->failed = 1;
            return;
        }
    }
    memcpy(w->buffer + w->used, data, length);
    w->used += length;
}

static void out_bulk(dataset_writer_t *w, const void *data, size_t length) {
    char header[32];
    int n = snprintf(header, sizeof header, "$%zu\r\n", length);
    out_bytes(w, header, (size_t)n);
    out_bytes(w, data, length);
    out_bytes(w, "\r\n", 2);
}

static void out_int(dataset_writer_t *w, int64_t value) {
    char text[24];
    int n = snprintf(text, sizeof text, "%lld", (long long)value);
    out_bulk(w, text, (size_t)n);
}

static int write_key(void *context, gr_ks_entry_t *entry) {
    dataset_writer_t *w = context;
    if (entry->expire_at_ms >= 0 && entry->expire_at_ms <= w->now_ms) return 0;   /* expired: left out */
    if (w->key_delay_us > 0) {             /* rdb-key-save-delay, as Redis's rewrite honours it (tests) */
        struct timespec pause = {w->key_delay_us / 1000000, (w->key_delay_us % 1000000) * 1000};
        nanosleep(&pause, NULL);
    }
    const gr_value_type_t *row = gr_value_type(entry->type);
    if (!row || !row->save) { w->failed = 1; return 1; }
    /* goblin's sealed payload, not DUMP's Redis one: it keeps what a Redis payload cannot
     * (the engine a list was made on) for the restart, front-codes lists and loads streams
     * faster (ARCHITECTURE.md, "Redis's RDB files") */
    gr_snapshot_writer_t payload;
    gr_snapshot_writer_init(&payload, GR_MEM_OTHER);
    if (gr_snapshot_write_u8(&payload, entry->type) != 0 || row->save(entry->value, &payload) != 0 ||
        gr_snapshot_seal(&payload, GR_DUMP_VERSION) != 0) {
        gr_snapshot_writer_release(&payload);
        w->failed = 1;
        return 1;
    }
    out_bytes(w, "*6\r\n$7\r\nRESTORE\r\n", 17);
    out_bulk(w, entry->key, entry->key_length);
    out_int(w, entry->expire_at_ms >= 0 ? entry->expire_at_ms : 0);
    out_bulk(w, payload.data, payload.length);
    out_bytes(w, "$7\r\nREPLACE\r\n$6\r\nABSTTL\r\n", 25);
    gr_snapshot_writer_release(&payload);
    w->keys++;
    return w->failed;
}

static int write_function(void *context, const uint8_t *code, size_t length) {
    dataset_writer_t *w = context;
    out_bytes(w, "*3\r\n$8\r\nFUNCTION\r\n$4\r\nLOAD\r\n", 28);
    out_bulk(w, code, length);
    return w->failed;
}

/* The function libraries as FUNCTION LOADs (as Redis's rewrite), then every database's live
 * keys as SELECT + RESTOREs into fd, pausing key_delay_us per key; 0, or -1 (errno or an
 * unsavable type). */
static int write_dataset(gr_server_t *db, int fd, int64_t key_delay_us) {
    dataset_writer_t *w = calloc(1, sizeof *w);
    if (!w) return -1;
    w->db = db, w->fd = fd, w->now_ms = gr_unix_ms(), w->key_delay_us = key_delay_us;
    if (gr_function_hooks) gr_function_hooks->each(db, write_function, w);
    for (int i = 0; i < GR_DB_COUNT && !w->failed; i++) {
        if (gr_ks_size(db->keyspaces[i]) == 0) continue;
        char select[64];
        int n = snprintf(select, sizeof select, "*2\r\n$6\r\nSELECT\r\n$%d\r\n%d\r\n", i >= 10 ? 2 : 1, i);
        out_bytes(w, select, (size_t)n);
        gr_ks_iterate(db->keyspaces[i], write_key, w);
    }
    if (!w->failed && w->used && gr_persist_write_all(fd, w->buffer, w->used) != 0) w->failed = 1;
    int failed = w->failed;
    free(w);
    return failed ? -1 : 0;
}

/* ---- start, stop ---- */

static void path_of(const gr_server_t *db, char *out, size_t size) {
    const char *dir = db->config.dir[0] ? db->config.dir : ".";
    snprintf(out, size, "%s/%s", dir, db->config.appendfilename[0] ? db->config.appendfilename : "appendonly.aof");
}

/* Replace path with the dataset (temp file, fsync, rename, dir fsync). */
static int write_dataset_file(gr_server_t *db, const char *path, char *message, size_t message_size) {
    char temp[1100];
    snprintf(temp, sizeof temp, "%s.temp-%d", path, (int)getpid());
    int fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(message, message_size, "can't open the append only file %s for writing: %s", temp, strerror(errno));
        return -1;
    }
    if (write_dataset(db, fd, 0) != 0 || fsync(fd) != 0) {
        snprintf(message, message_size, "can't write the append only file %s: %s", temp,
                 errno ? strerror(errno) : "a value could not be saved");
        close(fd);
        unlink(temp);
        return -1;
    }
    close(fd);
    if (rename(temp, path) != 0) {
        snprintf(message, message_size, "can't rename %s to %s: %s", temp, path, strerror(errno));
        unlink(temp);
        return -1;
    }
    if (fsync_directory_of(path) != 0)
        gr_log_to_stderr("Failed to fsync the directory of %s after the rename: %s", path, strerror(errno));
    return 0;
}

int gr_aof_start(gr_server_t *db, int write_dataset_first, char *message, size_t message_size) {
    if (message_size) message[0] = '\0';
    if (db->aof) return 0;
    gr_aof_t *aof = calloc(1, sizeof *aof);
    if (!aof) { snprintf(message, message_size, "out of memory"); return -1; }
    path_of(db, aof->path, sizeof aof->path);
    if (write_dataset_first && write_dataset_file(db, aof->path, message, message_size) != 0) {
        free(aof);
        return -1;
    }
    aof->fd = open(aof->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (aof->fd < 0) {
        snprintf(message, message_size, "can't open the append only file %s: %s", aof->path, strerror(errno));
        free(aof);
        return -1;
    }
    struct stat info;
    if (fstat(aof->fd, &info) == 0) aof->current_size = aof->base_size = (int64_t)info.st_size;
    aof->last_write_ok = aof->last_rewrite_ok = 1;
    aof->last_rewrite_seconds = -1;
    aof->fsync_errno = &db->persistence.aof_fsync_errno;
    db->persistence.aof_write_errno = 0;
    __atomic_store_n(&db->persistence.aof_fsync_errno, 0, __ATOMIC_RELAXED);
    aof->fsync_fd = -1;
    aof->last_fsync_ms = gr_monotonic_ms();
    aof->written_reploff = db->repl.offset;  /* the file holds the dataset: loaded from it, or just written */
    aof->fsynced_reploff = db->config.appendfsync == GR_APPENDFSYNC_NO ? 0 : aof->written_reploff;
    pthread_mutex_init(&aof->lock, NULL);
    pthread_cond_init(&aof->wake, NULL);
    aof->worker_started = pthread_create(&aof->worker, NULL, fsync_worker, aof) == 0;
    db->aof = aof;
    db->propagation.selected = -1;          /* the file's next entry says its database */
    if (db->propagation.tap) gr_propagate_flush(db);   /* the replicas get what is pending */
    db->propagation.length = db->propagation.tapped = 0;
    db->propagation.failed = 0;
    db->propagation.sink_context = aof;
    db->propagation.sync = aof_sync;
    db->propagation.sync_pending = 0;
    db->propagation.sink = aof_sink;
    return 0;
}

static void abandon_rewrite(gr_server_t *db, gr_aof_t *aof) {
    if (aof->child > 0 && gr_child_running(db) == GR_CHILD_AOF_REWRITE) gr_child_kill(db);   /* its done cleans up */
    aof->child = 0;
    free(aof->rewrite_buffer);
    aof->rewrite_buffer = NULL;
    aof->rewrite_length = aof->rewrite_capacity = 0;
    aof->rewrite_buffer_failed = 0;
}

int gr_aof_flush_for_shutdown(gr_server_t *db, char *message, size_t message_size) {
    gr_aof_t *aof = db->aof;
    if (!aof) return 0;
    aof->retry_failed_write = 1;
    gr_propagate_flush(db);
    aof->retry_failed_write = 0;
    if (db->propagation.length) {
        snprintf(message, message_size, "can't write the append only file %s: %s", aof->path,
                 strerror(db->persistence.aof_write_errno ? db->persistence.aof_write_errno : EIO));
        return -1;
    }
    if (fdatasync(aof->fd) != 0) {
        snprintf(message, message_size, "can't fsync the append only file %s: %s", aof->path, strerror(errno));
        return -1;
    }
    db->propagation.sync_pending = 0;
    aof->unsynced = 0;
    return 0;
}

void gr_aof_stop(gr_server_t *db) {
    gr_aof_t *aof = db->aof;
    if (!aof) return;
    aof->retry_failed_write = 1;
    gr_propagate_sync(db);
    db->propagation.sink = NULL;
    db->propagation.sync = NULL;
    db->propagation.sync_pending = 0;
    db->propagation.sink_context = NULL;
    db->propagation.length = db->propagation.tapped = 0;
    abandon_rewrite(db, aof);
    if (aof->worker_started) {
        pthread_mutex_lock(&aof->lock);
        aof->stop = 1;
        pthread_cond_signal(&aof->wake);
        pthread_mutex_unlock(&aof->lock);
        pthread_join(aof->worker, NULL);
    }
    if (aof->fsync_fd >= 0) close(aof->fsync_fd);
    if (fdatasync(aof->fd) != 0) gr_log_to_stderr("Fail to fsync the AOF file %s: %s", aof->path, strerror(errno));
    close(aof->fd);
    db->persistence.aof_write_errno = 0;
    __atomic_store_n(&db->persistence.aof_fsync_errno, 0, __ATOMIC_RELAXED);
    pthread_mutex_destroy(&aof->lock);
    pthread_cond_destroy(&aof->wake);
    free(aof);
    db->aof = NULL;
}

/* ---- BGREWRITEAOF ---- */

static void finish_rewrite(gr_server_t *db, int ok);

/* exec/child's done: the rewrite child ended (reaped by the cron, or killed). */
static void rewrite_done(gr_server_t *db, gr_child_kind_t kind, int ok, int signal_number, int by_parent, void *context) {
    (void)kind, (void)signal_number, (void)context;
    if (db->aof && db->aof->child > 0) finish_rewrite(db, ok && !by_parent);
}

int gr_aof_rewrite_in_progress(gr_server_t *db) { return db->aof && db->aof->child > 0; }

int gr_aof_rewrite_background(gr_server_t *db, char *message, size_t message_size) {
    if (message_size) message[0] = '\0';
    gr_aof_t *aof = db->aof;
    if (!aof) {
        snprintf(message, message_size, "ERR appendonly is no: there is no append only file to rewrite");
        return -1;
    }
    if (aof->child > 0) {
        snprintf(message, message_size, "ERR Background append only file rewriting already in progress");
        return -1;
    }
    if (gr_child_running(db) != GR_CHILD_NONE) {   /* a BGSAVE: one child at a time, as Redis */
        aof->rewrite_scheduled = 1;
        return 1;
    }
    gr_propagate_flush(db);                /* the old file has everything up to the fork */
    snprintf(aof->temp_path, sizeof aof->temp_path, "%s.temp-rewrite-%d", aof->path, (int)getpid());
    pid_t child = gr_child_fork(db, GR_CHILD_AOF_REWRITE, rewrite_done, NULL);
    if (child < 0 && errno == EBUSY) {
        aof->rewrite_scheduled = 1;
        return 1;
    }
    if (child < 0) {
        snprintf(message, message_size, "ERR Can't rewrite append only file in background: fork: %s", strerror(errno));
        aof->last_rewrite_ok = 0;
        return -1;
    }
    if (child == 0) {                      /* the child: the dataset as it was at the fork */
        int fd = open(aof->temp_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int ok = fd >= 0 && write_dataset(db, fd, db->persistence.key_save_delay_us) == 0 && fsync(fd) == 0;
        if (!ok) gr_log_to_stderr("Background append only file rewriting failed: %s", strerror(errno));
        gr_child_exit(ok);
    }
    aof->child = child;
    aof->rewrite_releases_hold = aof->fsynced_held;
    db->propagation.selected = -1;         /* the buffered tail starts with its SELECT in the new file */
    aof->rewrite_started_ms = gr_monotonic_ms();
    aof->rewrite_length = 0;
    aof->rewrite_buffer_failed = 0;
    aof->rewrite_scheduled = 0;
    return 0;
}

/* The child is done: on success, the new file gets what the parent wrote meanwhile and takes
 * the old one's place. */
static void finish_rewrite(gr_server_t *db, int ok) {
    gr_aof_t *aof = db->aof;
    aof->child = 0;
    aof->last_rewrite_seconds = (gr_monotonic_ms() - aof->rewrite_started_ms + 500) / 1000;
    int fd = -1;
    if (ok && !aof->rewrite_buffer_failed) {
        gr_propagate_flush(db);            /* anything pending reaches both files */
        fd = open(aof->temp_path, O_WRONLY | O_APPEND | O_CLOEXEC);
        ok = fd >= 0 && gr_persist_write_all(fd, aof->rewrite_buffer, aof->rewrite_length) == 0 && fdatasync(fd) == 0 &&
             rename(aof->temp_path, aof->path) == 0;
    } else {
        ok = 0;
    }
    if (ok) {
        if (fsync_directory_of(aof->path) != 0)   /* the new file is whole; its rename may not last: logged */
            gr_log_to_stderr("Failed to fsync the directory of %s after the rewrite's rename: %s", aof->path,
                             strerror(errno));
        pthread_mutex_lock(&aof->lock);    /* the worker fsyncs dups: closing fd is safe */
        close(aof->fd);
        aof->fd = fd;
        pthread_mutex_unlock(&aof->lock);
        struct stat info;
        if (fstat(fd, &info) == 0) aof->current_size = aof->base_size = (int64_t)info.st_size;
        aof->unsynced = 0;
        /* the new file holds every write, fdatasynced (appendfsync no acknowledges nothing) */
        aof->written_reploff = db->repl.offset;
        pthread_mutex_lock(&aof->lock);
        if (!aof->fsynced_held || aof->rewrite_releases_hold) {   /* not a rewrite of the data before a full sync */
            aof->fsynced_held = 0;
            aof->fsynced_epoch++;          /* an fsync of the old file asked for earlier sets nothing */
            if (db->config.appendfsync != GR_APPENDFSYNC_NO)
                __atomic_store_n(&aof->fsynced_reploff, aof->written_reploff, __ATOMIC_RELEASE);
        }
        pthread_mutex_unlock(&aof->lock);
        aof->rewrites++;
        aof->consecutive_failures = 0;
    } else {
        if (fd >= 0) close(fd);
        unlink(aof->temp_path);
        aof->consecutive_failures++;
    }
    aof->last_rewrite_ok = ok;
    aof->rewrite_releases_hold = 0;
    free(aof->rewrite_buffer);
    aof->rewrite_buffer = NULL;
    aof->rewrite_length = aof->rewrite_capacity = 0;
    aof->rewrite_buffer_failed = 0;
}

void gr_aof_cron(gr_server_t *db) {
    gr_aof_t *aof = db->aof;
    if (!aof) return;
    aof->retry_failed_write = 1;
    gr_propagate_sync(db);
    aof->retry_failed_write = 0;
    if (aof->child <= 0 && aof->rewrite_scheduled && gr_child_running(db) == GR_CHILD_NONE) {
        char ignored[256];
        gr_aof_rewrite_background(db, ignored, sizeof ignored);
    }
    if (aof->child <= 0 && gr_child_running(db) == GR_CHILD_NONE && db->config.auto_aof_rewrite_percentage > 0 &&
        aof->current_size > db->config.auto_aof_rewrite_min_size && aof->base_size > 0 &&
        (aof->current_size - aof->base_size) * 100 / aof->base_size >= db->config.auto_aof_rewrite_percentage) {
        char ignored[256];
        gr_aof_rewrite_background(db, ignored, sizeof ignored);
    }
    if (db->config.appendfsync == GR_APPENDFSYNC_EVERYSEC &&
        (aof->unsynced > 0 || __atomic_load_n(aof->fsync_errno, __ATOMIC_RELAXED)) &&
        gr_monotonic_ms() - aof->last_fsync_ms >= 1000)
        request_background_fsync(aof);    /* a failed fsync is retried each second until one succeeds */
}

void gr_aof_info(gr_server_t *db, gr_text_t *text) {
    gr_aof_t *aof = db->aof;
    int64_t current = aof && aof->child > 0 ? (gr_monotonic_ms() - aof->rewrite_started_ms) / 1000 : -1;
    gr_text_append(text,
        "aof_enabled:%d\r\naof_rewrite_in_progress:%d\r\naof_rewrite_scheduled:%d\r\naof_last_rewrite_time_sec:%lld\r\n"
        "aof_current_rewrite_time_sec:%lld\r\naof_last_bgrewrite_status:%s\r\naof_rewrites:%lld\r\n"
        "aof_rewrites_consecutive_failures:%lld\r\naof_last_write_status:%s\r\naof_last_cow_size:0\r\n",
        aof != NULL, aof && aof->child > 0, aof && aof->rewrite_scheduled,
        (long long)(aof ? aof->last_rewrite_seconds : -1), (long long)current,
        !aof || aof->last_rewrite_ok ? "ok" : "err", (long long)(aof ? aof->rewrites : 0),
        (long long)(aof ? aof->consecutive_failures : 0),
        !aof || (aof->last_write_ok && !__atomic_load_n(aof->fsync_errno, __ATOMIC_RELAXED)) ? "ok" : "err");
    if (!aof) return;
    int pending;
    pthread_mutex_lock(&aof->lock);
    pending = aof->fsync_running || aof->fsync_fd >= 0;
    int64_t delayed = aof->delayed_fsync;
    pthread_mutex_unlock(&aof->lock);
    gr_text_append(text,
        "aof_current_size:%lld\r\naof_base_size:%lld\r\naof_pending_rewrite:%d\r\naof_buffer_length:%zu\r\n"
        "aof_pending_bio_fsync:%d\r\naof_delayed_fsync:%lld\r\ngoblin_aof_lost_entries:%lld\r\n",
        (long long)aof->current_size, (long long)aof->base_size, aof->rewrite_scheduled, db->propagation.length,
        pending, (long long)delayed, (long long)aof->lost_entries);
}

/* ---- replay ---- */

static void discard_integer(gr_reply_t *r, int64_t v) { (void)r, (void)v; }
static void discard_bulk(gr_reply_t *r, const uint8_t *d, size_t n) { (void)r, (void)d, (void)n; }
static void discard_nil(gr_reply_t *r) { (void)r; }
static void discard_status(gr_reply_t *r, const char *t, size_t n) { (void)r, (void)t, (void)n; }
/* The replay's reply writer: every reply dropped, but the last error's text kept, so that a
 * RESTORE the file carries is checked (its payload's checksum, its body). */
typedef struct loader_reply {
    gr_reply_t base;
    char last_error[200];
} loader_reply_t;

static void keep_error(gr_reply_t *r, gr_error_code_t c, const char *t, size_t n) {
    (void)c;
    loader_reply_t *reply = (loader_reply_t *)r;
    snprintf(reply->last_error, sizeof reply->last_error, "%.*s", (int)(n < 199 ? n : 199), t);
}
static void discard_count(gr_reply_t *r, size_t n) { (void)r, (void)n; }
static void discard_keyed(gr_reply_t *r, const uint8_t *k, size_t kn, size_t n) { (void)r, (void)k, (void)kn, (void)n; }
static void discard_pair(gr_reply_t *r, const uint8_t *k, size_t kn, const uint8_t *v, size_t vn) {
    (void)r, (void)k, (void)kn, (void)v, (void)vn;
}
static void discard_double(gr_reply_t *r, double v) { (void)r, (void)v; }

static const gr_reply_ops_t discard_ops = {
    .integer = discard_integer, .bulk = discard_bulk, .nil = discard_nil, .nil_array = discard_nil,
    .status = discard_status, .error = keep_error, .array_begin = discard_count, .keyed_array_begin = discard_keyed,
    .pair = discard_pair, .map_begin = discard_count, .verbatim = discard_bulk, .double_value = discard_double,
    .set_begin = discard_count, .push_begin = discard_count};

/* One RESP array of bulk strings at data[*offset]: 1 parsed (argv points into data), 0 cut
 * short by the end, -1 malformed. */
static int parse_command(const uint8_t *data, size_t size, size_t *offset, size_t *argc, const uint8_t ***argv,
                         size_t **lengths, size_t *capacity) {
    size_t at = *offset;
    if (at >= size) return 0;
    if (data[at] != '*') return -1;
    uint64_t count = 0;
    for (at++;; at++) {
        if (at >= size) return 0;
        if (data[at] == '\r') break;
        if (data[at] < '0' || data[at] > '9' || count > 100000000) return -1;
        count = count * 10 + (uint64_t)(data[at] - '0');
    }
    if (at + 1 >= size) return 0;
    if (data[at + 1] != '\n' || count == 0) return -1;
    at += 2;
    if (count > *capacity) {
        const uint8_t **grown_argv = realloc(*argv, count * sizeof **argv);
        if (grown_argv) *argv = grown_argv;
        size_t *grown_lengths = realloc(*lengths, count * sizeof **lengths);
        if (grown_lengths) *lengths = grown_lengths;
        if (!grown_argv || !grown_lengths) return -1;
        *capacity = count;
    }
    for (uint64_t i = 0; i < count; i++) {
        if (at >= size) return 0;
        if (data[at] != '$') return -1;
        uint64_t length = 0;
        for (at++;; at++) {
            if (at >= size) return 0;
            if (data[at] == '\r') break;
            if (data[at] < '0' || data[at] > '9' || length > (1ULL << 40)) return -1;
            length = length * 10 + (uint64_t)(data[at] - '0');
        }
        if (at + 1 >= size) return 0;
        if (data[at + 1] != '\n') return -1;
        at += 2;
        if (length + 2 > size - at) return 0;
        if (data[at + length] != '\r' || data[at + length + 1] != '\n') return -1;
        (*argv)[i] = data + at;
        (*lengths)[i] = (size_t)length;
        at += length + 2;
    }
    *argc = (size_t)count;
    *offset = at;
    return 1;
}

static int word_is(const uint8_t *data, size_t length, const char *word) {
    return strlen(word) == length && strncasecmp((const char *)data, word, length) == 0;
}

int gr_aof_load(gr_server_t *db, const char *path, int allow_truncated, int64_t *commands, char *message,
                size_t message_size) {
    if (message_size) message[0] = '\0';
    *commands = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return 1;
        snprintf(message, message_size, "can't open the append only file %s: %s", path, strerror(errno));
        return -1;
    }
    struct stat info;
    if (fstat(fd, &info) != 0) {
        snprintf(message, message_size, "can't stat the append only file %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    size_t size = (size_t)info.st_size;
    const uint8_t *data = NULL;
    if (size) {
        data = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (data == MAP_FAILED) {
            snprintf(message, message_size, "can't map the append only file %s: %s", path, strerror(errno));
            close(fd);
            return -1;
        }
        madvise((void *)data, size, MADV_SEQUENTIAL);
    }
    gr_connection_t *conn = calloc(1, sizeof *conn);
    loader_reply_t loader_reply = {{&discard_ops, 0, 0, {0}}, {0}};
    gr_reply_t *reply = &loader_reply.base;
    if (!conn) { snprintf(message, message_size, "out of memory"); if (data) munmap((void *)data, size); close(fd); return -1; }
    gr_connection_register(db, conn, -1, GR_CONN_UNIX);
    conn->user = db->acl->default_user;   /* the log replays as the server itself */
    snprintf(conn->name, sizeof conn->name, "aof-loader");
    conn->reply = reply;
    const uint8_t **argv = NULL;
    size_t *lengths = NULL, capacity = 0, argc = 0, offset = 0, valid_end = 0, multi_start = 0;
    int in_multi = 0, restore_in_block = 0, status = 0;
    int64_t count = 0;
    for (;;) {
        size_t start = offset;
        int parsed = parse_command(data, size, &offset, &argc, &argv, &lengths, &capacity);
        if (parsed == 0) {                 /* the end, or a command cut short */
            size_t keep = in_multi ? multi_start : start;
            if (start == size && !in_multi) break;
            if (!allow_truncated) {
                snprintf(message, message_size,
                         "Unexpected end of file reading the append only file %s at offset %zu: the last command "
                         "is cut short (start with aof-load-truncated yes to drop it)", path, keep);
                status = -1;
                break;
            }
            snprintf(message, message_size,
                     "!!! Warning: short read while loading the AOF file %s!!! AOF loaded anyway because "
                     "aof-load-truncated is enabled; the file was truncated to offset %zu (%zu bytes dropped)",
                     path, keep, size - keep);
            if (truncate(path, (off_t)keep) != 0) {
                snprintf(message, message_size, "can't truncate the append only file %s to offset %zu: %s", path,
                         keep, strerror(errno));
                status = -1;
            }
            valid_end = keep;
            break;
        }
        if (parsed < 0) {
            snprintf(message, message_size, "Bad file format reading the append only file %s at offset %zu", path,
                     start);
            status = -1;
            break;
        }
        if (gr_command_index(argv[0], lengths[0]) < 0) {
            snprintf(message, message_size, "Unknown command '%.*s' reading the append only file %s at offset %zu",
                     (int)(lengths[0] > 64 ? 64 : lengths[0]), (const char *)argv[0], path, start);
            status = -1;
            break;
        }
        int is_restore = word_is(argv[0], lengths[0], "restore");
        int is_exec = word_is(argv[0], lengths[0], "exec");
        if (word_is(argv[0], lengths[0], "multi")) in_multi = 1, multi_start = start, restore_in_block = 0;
        else if (is_exec) in_multi = 0;
        else if (in_multi && is_restore) restore_in_block = 1;
        uint32_t errors_before = reply->errors;
        gr_db_execute_argv(db, conn, argc, argv, lengths, reply);
        if (reply->errors != errors_before && ((is_restore && !in_multi) || (is_exec && restore_in_block))) {
            /* a payload that fails its checksum (or does not load) is data the file lost: refuse */
            snprintf(message, message_size, "Bad RESTORE payload reading the append only file %s at offset %zu (%s)",
                     path, is_exec ? multi_start : start, loader_reply.last_error);
            status = -1;
            break;
        }
        count++;
        valid_end = offset;
    }
    (void)valid_end;
    gr_connection_unregister(db, conn);
    free(conn);
    free(argv);
    free(lengths);
    if (data) munmap((void *)data, size);
    close(fd);
    *commands = count;
    return status;
}

/* ---- WAITAOF ---- */

int gr_aof_local_ack(gr_server_t *db, int wait) {
    gr_aof_t *aof = db->aof;
    if (!aof) return 0;
    if (db->config.appendfsync == GR_APPENDFSYNC_ALWAYS) return aof->last_write_ok;
    if (db->config.appendfsync != GR_APPENDFSYNC_EVERYSEC) return 0;
    if (!wait) {                                 /* on disk already? */
        pthread_mutex_lock(&aof->lock);
        int in_flight = aof->fsync_running || aof->fsync_fd >= 0;
        pthread_mutex_unlock(&aof->lock);
        return !db->propagation.length && aof->unsynced == 0 && !in_flight && aof->last_write_ok;
    }
    if (db->propagation.tap) gr_propagate_flush(db);   /* the backlog sees each byte once */
    else aof_sink(aof, db);                      /* what this batch propagated so far */
    if (db->propagation.length || !aof->last_write_ok) return 0;
    if (fdatasync(aof->fd) != 0) return 0;       /* also when the worker's fsync is under way */
    if (!aof->fsynced_held) __atomic_store_n(&aof->fsynced_reploff, aof->written_reploff, __ATOMIC_RELEASE);
    aof->unsynced = 0;
    aof->last_fsync_ms = gr_monotonic_ms();
    return 1;
}

int64_t gr_aof_fsynced_reploff(gr_server_t *db) {
    return db->aof ? __atomic_load_n(&db->aof->fsynced_reploff, __ATOMIC_ACQUIRE) : -1;
}

void gr_aof_hold_fsynced_reploff(gr_server_t *db) {
    gr_aof_t *aof = db->aof;
    if (!aof) return;
    pthread_mutex_lock(&aof->lock);
    aof->fsynced_held = 1;
    aof->fsynced_epoch++;
    __atomic_store_n(&aof->fsynced_reploff, 0, __ATOMIC_RELEASE);   /* the old history's offsets mean nothing now */
    pthread_mutex_unlock(&aof->lock);
    /* a rewrite already running writes the data before the sync: another follows it (the cron) */
    if (aof->child > 0) aof->rewrite_scheduled = 1;
}
