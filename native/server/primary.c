/* primary.c — goblin as a primary (primary.h): SYNC/PSYNC served to redis-server and goblin
 * replicas, as Redis 7.0's replication.c does it, in both forms of the full sync:
 *
 *   PSYNC id off  -> within the backlog: +CONTINUE [replid], the backlog's tail, online
 *                 -> else: WAIT_BGSAVE_START; when no child runs a fork writes the keyspace as a
 *                    Redis RDB (persist/rdb_save.c); at the fork each waiting replica gets
 *                    +FULLRESYNC <replid> <offset> and the stream from then on is kept for it
 *                    (WAIT_BGSAVE_END). Where the RDB goes:
 *     disk form      (repl-diskless-sync no, or a waiting replica without REPLCONF capa eof): a
 *                    file in --dir; when the child is done the file is opened and unlinked and
 *                    sent as $<len> + bytes as the socket drains (SEND_BULK), then what was
 *                    kept, and the replica is online. A replica that asks while such a child
 *                    runs joins it (Redis's "can attach"): it gets the same +FULLRESYNC offset
 *                    and a copy of what another waiting replica kept since the fork.
 *     diskless form  (repl-diskless-sync yes, Redis 7.0's default, and every waiting replica
 *                    said capa eof): the fork starts when the oldest waiting replica has waited
 *                    repl-diskless-sync-delay seconds (or repl-diskless-sync-max-replicas are
 *                    waiting); the child writes "$EOF:<40 random hex>\r\n", the RDB and the
 *                    40-byte mark into a pipe (its descriptor 3, exec/child.h); the loop reads
 *                    the pipe only while every receiving replica's output is under 1 MiB (the
 *                    slowest paces the child, as Redis's rdbPipeReadHandler) and copies each
 *                    chunk to all of them. When the pipe ends and the child exited with 0, each
 *                    is online but gets nothing more until its next REPLCONF ACK (Redis's
 *                    repl_put_online_on_ack: the replica finds the mark with no stream glued
 *                    after it), then what was kept. A receiving replica that dies leaves the
 *                    others going; when none is left the child is killed. One whose output does
 *                    not drain for repl-timeout is dropped ("timedout replica (full sync)").
 *                    Replicas that ask meanwhile wait for the next fork.
 *   SYNC          -> the same without +FULLRESYNC (no PSYNC later); REPLCONF rdb-only 1
 *                    (redis-cli --rdb) is closed once the payload is written.
 *
 * repl-backlog-ttl: with no replica for that many seconds, a primary frees its backlog and
 * takes a new replication id (so nobody continues a history it no longer holds), as Redis.
 *
 * Chained replication: a replica serves replicas the same way, from its own data and backlog;
 * the backlog is fed by server/replica.c with the primary's stream as applied (so the replid and
 * offsets are the primary's), none of our PINGs/GETACKs go into it, and the replicas are
 * disconnected when its history changes (it became a replica, a full sync, a new replid).
 *
 * Nothing here blocks on a replica: all output goes through the connection's buffer and the
 * loop's non-blocking writes; the replica class of client-output-buffer-limit (256mb 64mb 60)
 * counts the buffer plus the stream kept during the sync.
 */
#include "server/primary.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "exec/child.h"
#include "persist/rdb_format.h"
#include "persist/snapshot.h"

#define BULK_CHUNK (256 * 1024)          /* read from the RDB file at a time */
#define BULK_HIGH_WATER (1024 * 1024)    /* fill a replica's output up to this while sending the RDB */

typedef struct sync_file {
    int fd;
    int64_t size;
    int refs;
} sync_file_t;

typedef struct replica {
    gr_connection_t *state;
    int fd;
    uint8_t pre_psync;            /* SYNC: no +FULLRESYNC, no PSYNC later */
    uint8_t dirty;                /* output to write */
    uint8_t *kept;                /* the stream since the fork, until the payload is sent */
    size_t kept_length, kept_capacity;
    sync_file_t *file;
    int64_t file_sent;            /* bytes of the file in the output so far */
    int64_t soft_since_ms;        /* over the soft output limit since */
    int64_t asked_ms;             /* when it asked for the full sync (repl-diskless-sync-delay) */
    int64_t stall_since_ms;       /* diskless: its output held the pipe back since (0: not) */
    uint8_t await_ack;            /* diskless payload sent: online at the next REPLCONF ACK */
    uint32_t acks_at_end;         /* its ack_count when the payload ended */
    struct replica *prev, *next;
} replica_t;

struct gr_primary {
    gr_server_t *db;
    gr_primary_io_t io;
    replica_t *replicas;
    int child_running;            /* our sync child (db->child's pid) */
    int child_done, child_ok;     /* its done ran (gr_child_reap, here or in the cron) */
    char path[4096];
    int64_t fork_offset;
    int64_t last_second_ms, last_ping_ms;
    uint8_t was_replica;
    char seen_replid[41];         /* as a replica: the history our replicas follow */
    int64_t seen_syncs;           /* and the full syncs it had (db->repl.sync_full) */
    /* the diskless form: the running child writes to the pipe */
    uint8_t socket_target;        /* the running child's RDB goes to pipe_fd */
    uint8_t pipe_eof;             /* the pipe ended (the child closed its end) */
    int pipe_fd;                  /* the read end (non-blocking), or -1 */
    uint8_t *chunk;               /* BULK_CHUNK bytes read from the pipe */
    int64_t no_replicas_since_ms; /* repl-backlog-ttl's clock */
};

static void plog(gr_primary_t *p, const char *format, ...) __attribute__((format(printf, 2, 3)));
static void plog(gr_primary_t *p, const char *format, ...) {
    if (!p->io.log) return;
    char line[600];
    va_list args;
    va_start(args, format);
    vsnprintf(line, sizeof line, format, args);
    va_end(args);
    p->io.log(p->io.context, line);
}

/* "127.0.0.1:6380": the replica as Redis names it in its log lines (ip:listening-port). */
static void replica_name(const gr_connection_t *state, char *out, size_t size) {
    char ip[64];
    snprintf(ip, sizeof ip, "%s", state->addr);
    char *colon = strrchr(ip, ':');
    if (colon) *colon = '\0';
    snprintf(out, size, "%s:%d", ip, (int)state->repl_peer.listening_port);
}

static gr_resp_conn_t *conn_of(gr_primary_t *p, replica_t *r) { return p->io.conn_of(p->io.context, r->state); }

static void file_release(sync_file_t *file) {
    if (file && --file->refs == 0) {
        close(file->fd);
        free(file);
    }
}

static void replica_drop(gr_primary_t *p, replica_t *r) {
    if (r->prev) r->prev->next = r->next;
    else p->replicas = r->next;
    if (r->next) r->next->prev = r->prev;
    file_release(r->file);
    free(r->kept);
    r->state->repl_peer.link = NULL;
    r->state->repl_peer.state = GR_REPLICA_NONE;
    free(r);
}

void gr_primary_forget(gr_primary_t *p, gr_connection_t *state) {
    replica_t *r = state->repl_peer.link;
    if (!r) return;
    char name[96];
    replica_name(state, name, sizeof name);
    if (state->repl_peer.state == GR_REPLICA_ONLINE) plog(p, "Connection with replica %s lost.", name);
    replica_drop(p, r);
}

/* Close it (its output dropped): why goes to the log. */
static void replica_close(gr_primary_t *p, replica_t *r, const char *why) {
    gr_resp_conn_t *conn = conn_of(p, r);
    int fd = r->fd;
    if (!conn) { replica_drop(p, r); return; }
    gr_resp_conn_mark_closing(conn, why);
    p->io.flush(p->io.context, fd);   /* the loop closes it at once and calls gr_primary_forget: r is gone */
}

static void keep(replica_t *r, const uint8_t *data, size_t length) {
    if (r->kept_length + length > r->kept_capacity) {
        size_t capacity = r->kept_capacity ? r->kept_capacity : 64 * 1024;
        while (capacity < r->kept_length + length) capacity *= 2;
        uint8_t *grown = realloc(r->kept, capacity);
        if (!grown) { r->soft_since_ms = -1; return; }   /* closed by the limit check */
        r->kept = grown;
        r->kept_capacity = capacity;
    }
    memcpy(r->kept + r->kept_length, data, length);
    r->kept_length += length;
}

static void send_raw(gr_primary_t *p, replica_t *r, const void *data, size_t length) {
    gr_resp_conn_t *conn = conn_of(p, r);
    if (!conn) return;
    if (gr_resp_conn_write_raw(conn, data, length) != 0) r->soft_since_ms = -1;
    r->dirty = 1;
}

/* The backlog's feed: each replica gets the stream as its state allows. */
static void feed(void *context, const uint8_t *data, size_t length) {
    gr_primary_t *p = context;
    for (replica_t *r = p->replicas; r; r = r->next) {
        switch (r->state->repl_peer.state) {
        case GR_REPLICA_ONLINE:
            if (r->await_ack) keep(r, data, length);   /* nothing glued after the EOF mark */
            else send_raw(p, r, data, length);
            break;
        case GR_REPLICA_WAIT_BGSAVE_END:
        case GR_REPLICA_SEND_BULK: keep(r, data, length); break;
        default: break;   /* WAIT_BGSAVE_START: the coming fork's RDB has it */
        }
    }
}

/* The propagation's tap: a primary's stream into the backlog (a replica's applied stream is
 * its primary's, not ours). */
static void tap(void *context, gr_server_t *db, const uint8_t *data, size_t length) {
    (void)context;
    if (db->repl.master_port) return;
    gr_repl_backlog_feed(db, data, length);
}

/* The backlog's feed to our replicas, and on a primary the tap that fills the backlog (a
 * replica's backlog is filled by server/replica.c with the stream it applies: no tap, so a
 * replica without an AOF records no effects). */
static void install_tap(gr_primary_t *p) {
    gr_server_t *db = p->db;
    db->repl_primary.feed = feed;
    db->repl_primary.feed_context = p;
    if (db->propagation.tap || db->repl.master_port) return;
    db->propagation.tap = tap;
    db->propagation.tap_context = p;
    db->propagation.tapped = db->propagation.length;   /* what is pending predates the backlog */
    db->propagation.selected = -1;
}

static void remove_tap(gr_primary_t *p) {
    gr_server_t *db = p->db;
    if (db->propagation.tap_context != p) return;
    gr_propagate_flush(db);   /* what is pending belongs to the history so far */
    db->propagation.tap = NULL;
    db->propagation.tap_context = NULL;
}

gr_primary_t *gr_primary_new(gr_server_t *db, const gr_primary_io_t *io) {
    gr_primary_t *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->db = db;
    p->io = *io;
    p->was_replica = db->repl.master_port != 0;
    p->pipe_fd = -1;
    p->no_replicas_since_ms = gr_unix_ms();
    if (db->repl_primary.backlog) install_tap(p);
    return p;
}

void gr_primary_free(gr_primary_t *p) {
    if (!p) return;
    while (p->replicas) replica_drop(p, p->replicas);
    gr_server_t *db = p->db;
    if (db->propagation.tap_context == p) db->propagation.tap = NULL, db->propagation.tap_context = NULL;
    if (db->repl_primary.feed_context == p) db->repl_primary.feed = NULL, db->repl_primary.feed_context = NULL;
    if (p->child_running && gr_child_running(db) == GR_CHILD_REPL_SYNC) gr_child_kill(db);
    if (p->path[0]) unlink(p->path);
    if (p->pipe_fd >= 0) close(p->pipe_fd);
    free(p->chunk);
    free(p);
}

int gr_primary_busy(const gr_primary_t *p) {
    if (p->child_running) return 1;
    for (const replica_t *r = p->replicas; r; r = r->next)
        if (r->state->repl_peer.state == GR_REPLICA_SEND_BULK || r->state->repl_peer.state == GR_REPLICA_WAIT_BGSAVE_START)
            return 1;
    return 0;
}

/* ---- taking SYNC / PSYNC ---- */

static void backlog_out(void *context, const uint8_t *data, size_t length) {
    void **pair = context;
    send_raw(pair[0], pair[1], data, length);
}

static void attach(gr_primary_t *p, replica_t *r);

static void take_request(gr_primary_t *p, gr_connection_t *state) {
    gr_server_t *db = p->db;
    gr_repl_peer_t *peer = &state->repl_peer;
    int is_psync = peer->sync_request == 2;
    peer->sync_request = 0;
    if (peer->link) return;   /* already a replica: ignored, as Redis */
    gr_resp_conn_t *conn = p->io.conn_of(p->io.context, state);
    if (!conn) { peer->state = GR_REPLICA_NONE; return; }
    replica_t *r = calloc(1, sizeof *r);
    if (!r) { gr_resp_conn_mark_closing(conn, "out of memory for a replica"); peer->state = GR_REPLICA_NONE; return; }
    r->state = state;
    r->fd = state->fd;
    r->pre_psync = !is_psync;
    r->next = p->replicas;
    if (p->replicas) p->replicas->prev = r;
    p->replicas = r;
    peer->link = r;
    peer->ack_ms = gr_unix_ms();
    char name[96];
    replica_name(state, name, sizeof name);
    if (gr_repl_backlog_create(db) != 0) { replica_close(p, r, "out of memory for the replication backlog"); return; }
    install_tap(p);
    gr_propagate_flush(db);   /* the backlog holds every write so far */
    if (is_psync && gr_repl_backlog_can_continue(db, peer->psync_replid, peer->psync_offset)) {
        char line[80];
        int n = peer->capa_psync2 ? snprintf(line, sizeof line, "+CONTINUE %s\r\n", db->repl.replid)
                                  : snprintf(line, sizeof line, "+CONTINUE\r\n");
        send_raw(p, r, line, (size_t)n);
        int64_t bytes = db->repl.offset + 1 - peer->psync_offset;
        void *pair[2] = {p, r};
        gr_repl_backlog_read(db, peer->psync_offset, backlog_out, pair);
        peer->state = GR_REPLICA_ONLINE;
        db->repl_primary.sync_partial_ok++;
        plog(p, "Partial resynchronization request from %s accepted. Sending %lld bytes of backlog starting from "
                "offset %lld.", name, (long long)bytes, (long long)peer->psync_offset);
        return;
    }
    if (is_psync) {
        if (peer->psync_replid[0] != '?') {
            db->repl_primary.sync_partial_err++;
            plog(p, "Partial resynchronization not accepted: Replication ID mismatch or offset out of range "
                    "(Replica asked for '%s', my replication IDs are '%s' and '%s')",
                 peer->psync_replid, db->repl.replid, db->repl.replid2);
        } else {
            plog(p, "Full resync requested by replica %s", name);
        }
    } else {
        plog(p, "Replica %s asks for synchronization", name);
    }
    db->repl_primary.sync_full++;
    peer->state = GR_REPLICA_WAIT_BGSAVE_START;
    r->asked_ms = gr_unix_ms();
    attach(p, r);
}

/* A full sync asked while our disk-form child runs joins that child's RDB when another replica
 * waits for it (Redis's syncCommand): both start at the fork's offset, so what that one kept
 * since the fork is what this one needs too. A diskless child's stream cannot be joined. */
static void attach(gr_primary_t *p, replica_t *r) {
    gr_repl_primary_t *rp = &p->db->repl_primary;
    if (!p->child_running) {
        if (rp->diskless_sync && r->state->repl_peer.capa_eof && rp->diskless_delay_s)
            plog(p, "Delay next BGSAVE for diskless SYNC");
        return;
    }
    if (p->socket_target) {
        plog(p, "Current BGSAVE has socket target. Waiting for next BGSAVE for SYNC");
        return;
    }
    replica_t *donor = NULL;
    for (replica_t *other = p->replicas; other && !donor; other = other->next)
        if (other != r && other->state->repl_peer.state == GR_REPLICA_WAIT_BGSAVE_END) donor = other;
    if (!donor) {
        plog(p, "Can't attach the replica to the current BGSAVE. Waiting for next BGSAVE for SYNC");
        return;
    }
    if (donor->kept_length) keep(r, donor->kept, donor->kept_length);
    r->state->repl_peer.state = GR_REPLICA_WAIT_BGSAVE_END;
    if (!r->pre_psync) {
        char line[128];
        int n = snprintf(line, sizeof line, "+FULLRESYNC %s %lld\r\n", p->db->repl.replid, (long long)p->fork_offset);
        send_raw(p, r, line, (size_t)n);
    }
    plog(p, "Waiting for end of BGSAVE for SYNC");
}

/* ---- the sync child ---- */

static void child_done(gr_server_t *db, gr_child_kind_t kind, int ok, int signal, int by_parent, void *context) {
    (void)db, (void)kind, (void)signal, (void)by_parent;
    gr_primary_t *p = context;
    p->child_done = 1;
    p->child_ok = ok;
}

/* 40 random hex characters: the diskless payload's end mark (as Redis's getRandomHexChars). */
static void random_mark(char *out) {
    static const char hex[] = "0123456789abcdef";
    uint8_t bytes[40];
    if (getrandom(bytes, sizeof bytes, 0) != (ssize_t)sizeof bytes) {
        uint64_t x = (uint64_t)gr_unix_ms() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)out;
        for (size_t i = 0; i < sizeof bytes; i++) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            bytes[i] = (uint8_t)x;
        }
    }
    for (int i = 0; i < 40; i++) out[i] = hex[bytes[i] & 15];
    out[40] = '\0';
}

/* The diskless child: "$EOF:<mark>\r\n", the RDB, the mark, into the pipe (descriptor 3). */
static _Noreturn void diskless_child(gr_server_t *db, const char *mark) {
    char header[64];
    int n = snprintf(header, sizeof header, "$EOF:%s\r\n", mark);
    char error[600];
    int ok = gr_persist_write_all(GR_CHILD_KEPT_FD, (const uint8_t *)header, (size_t)n) == 0;
    if (ok && gr_rdb_save_fd(db, GR_CHILD_KEPT_FD, NULL, error, sizeof error) != 0) {
        gr_log_to_stderr("Replication RDB (diskless): %s", error);
        ok = 0;
    }
    if (ok) ok = gr_persist_write_all(GR_CHILD_KEPT_FD, (const uint8_t *)mark, 40) == 0;
    close(GR_CHILD_KEPT_FD);
    gr_child_exit(ok);
}

static void start_child(gr_primary_t *p, int socket_target) {
    gr_server_t *db = p->db;
    int pipe_fds[2] = {-1, -1};
    char mark[41] = {0};
    if (socket_target) {
        if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
            plog(p, "Can't start the replication RDB child: pipe: %s", strerror(errno));
            return;
        }
        fcntl(pipe_fds[1], F_SETPIPE_SZ, 1024 * 1024);   /* fewer wake-ups; the system's limit may refuse it */
        fcntl(pipe_fds[0], F_SETFL, fcntl(pipe_fds[0], F_GETFL) | O_NONBLOCK);
        random_mark(mark);
    } else {
        const char *dir = db->config.dir[0] ? db->config.dir : ".";
        snprintf(p->path, sizeof p->path, "%s/goblin-repl-sync-%d.rdb", dir, (int)getpid());
    }
    gr_propagate_flush(db);   /* the fork's RDB ends at this offset */
    p->fork_offset = db->repl.offset;
    int32_t pid = gr_child_fork_keeping(db, GR_CHILD_REPL_SYNC, child_done, p, socket_target ? pipe_fds[1] : -1);
    if (pid == 0) {
        if (socket_target) diskless_child(db, mark);
        char error[600];
        int ok = gr_rdb_save(db, p->path, NULL, error, sizeof error) == 0;
        if (!ok) gr_log_to_stderr("Replication RDB: %s", error);
        gr_child_exit(ok);
    }
    if (socket_target) close(pipe_fds[1]);
    if (pid < 0) {
        int why = errno;
        if (socket_target) close(pipe_fds[0]);
        p->path[0] = '\0';
        if (why == EBUSY) return;   /* another child: wait for it, as Redis */
        plog(p, "Can't start the replication RDB child: %s", strerror(why));
        for (replica_t *r = p->replicas, *next; r; r = next) {
            next = r->next;
            if (r->state->repl_peer.state == GR_REPLICA_WAIT_BGSAVE_START) replica_close(p, r, "BGSAVE for replication failed");
        }
        return;
    }
    p->child_running = 1;
    p->child_done = 0;
    p->socket_target = (uint8_t)socket_target;
    p->pipe_fd = socket_target ? pipe_fds[0] : -1;
    p->pipe_eof = 0;
    if (socket_target) {
        plog(p, "Starting BGSAVE for SYNC with target: replicas sockets");
        plog(p, "Background RDB transfer started by pid %d", (int)pid);
    } else {
        plog(p, "Starting BGSAVE for SYNC with target: disk");
        plog(p, "Background saving started by pid %d", (int)pid);
    }
    db->propagation.selected = -1;   /* the replicas start at db 0: the next entry SELECTs */
    for (replica_t *r = p->replicas; r; r = r->next) {
        if (r->state->repl_peer.state != GR_REPLICA_WAIT_BGSAVE_START) continue;
        r->state->repl_peer.state = GR_REPLICA_WAIT_BGSAVE_END;
        r->stall_since_ms = 0;
        if (!r->pre_psync) {
            char line[128];
            int n = snprintf(line, sizeof line, "+FULLRESYNC %s %lld\r\n", db->repl.replid, (long long)p->fork_offset);
            send_raw(p, r, line, (size_t)n);
        }
    }
}

/* Whether to fork now, and in which form (Redis's shouldStartChildForReplication): with
 * repl-diskless-sync, once the longest-waiting replica waited repl-diskless-sync-delay seconds
 * or repl-diskless-sync-max-replicas wait; the pipe only when every waiting replica reads
 * $EOF payloads (capa eof), and at once in the disk form when one does not. */
static void maybe_start_child(gr_primary_t *p, int64_t now) {
    gr_repl_primary_t *rp = &p->db->repl_primary;
    int64_t waiting = 0, oldest = now;
    int all_eof = 1;
    for (replica_t *r = p->replicas; r; r = r->next) {
        if (r->state->repl_peer.state != GR_REPLICA_WAIT_BGSAVE_START) continue;
        waiting++;
        if (r->asked_ms < oldest) oldest = r->asked_ms;
        if (!r->state->repl_peer.capa_eof) all_eof = 0;
    }
    if (!waiting) return;
    /* a replica without capa eof gets the disk form at once (Redis's syncCommand starts it there) */
    if (rp->diskless_sync && all_eof && !(rp->diskless_max_replicas > 0 && waiting >= rp->diskless_max_replicas) &&
        now - oldest < rp->diskless_delay_s * 1000)
        return;
    start_child(p, rp->diskless_sync && all_eof);
}

/* Diskless: copy what the child wrote to every receiving replica, as fast as the slowest
 * takes it. */
static void pump_pipe(gr_primary_t *p, int64_t now) {
    gr_server_t *db = p->db;
    for (int rounds = 0; rounds < 64 && !p->pipe_eof; rounds++) {
        int receivers = 0, held = 0;
        for (replica_t *r = p->replicas; r; r = r->next) {
            if (r->state->repl_peer.state != GR_REPLICA_WAIT_BGSAVE_END) continue;
            gr_resp_conn_t *conn = conn_of(p, r);
            if (!conn) continue;
            receivers++;
            if (gr_resp_conn_output_pending(conn) >= BULK_HIGH_WATER) {
                held = 1;
                if (!r->stall_since_ms) r->stall_since_ms = now;
            } else {
                r->stall_since_ms = 0;
            }
        }
        if (!receivers) {
            plog(p, "Diskless rdb transfer, last replica dropped, killing fork child.");
            close(p->pipe_fd);
            p->pipe_fd = -1;
            p->pipe_eof = 1;
            if (gr_child_running(db) == GR_CHILD_REPL_SYNC) gr_child_kill(db);   /* done: child_done */
            p->child_ok = 0;
            return;
        }
        if (held) return;
        if (!p->chunk && !(p->chunk = malloc(BULK_CHUNK))) return;
        ssize_t n = read(p->pipe_fd, p->chunk, BULK_CHUNK);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        if (n <= 0) {   /* the child closed its end (or the pipe broke: its exit status says) */
            plog(p, "Diskless rdb transfer, done reading from pipe, %d replicas still up.", receivers);
            close(p->pipe_fd);
            p->pipe_fd = -1;
            p->pipe_eof = 1;
            return;
        }
        for (replica_t *r = p->replicas; r; r = r->next)
            if (r->state->repl_peer.state == GR_REPLICA_WAIT_BGSAVE_END) send_raw(p, r, p->chunk, (size_t)n);
    }
}

/* Diskless: the child is gone and the pipe read to its end. */
static void diskless_finished(gr_primary_t *p) {
    int ok = p->child_ok && p->pipe_eof;
    if (p->pipe_fd >= 0) close(p->pipe_fd);
    p->pipe_fd = -1;
    p->socket_target = 0;
    p->child_running = 0;
    p->child_done = 0;
    if (ok) plog(p, "Background RDB transfer terminated with success");
    else plog(p, "Background RDB transfer error");
    for (replica_t *r = p->replicas, *next; r; r = next) {
        next = r->next;
        gr_repl_peer_t *peer = &r->state->repl_peer;
        if (peer->state != GR_REPLICA_WAIT_BGSAVE_END) continue;
        if (!ok) { replica_close(p, r, "SYNC failed. BGSAVE child returned an error"); continue; }
        char name[96];
        replica_name(r->state, name, sizeof name);
        peer->state = GR_REPLICA_ONLINE;
        peer->ack_ms = gr_unix_ms();   /* repl-timeout counts from here */
        r->stall_since_ms = 0;
        if (peer->rdb_only) {   /* redis-cli --rdb: the payload was all it wanted */
            gr_resp_conn_t *conn = conn_of(p, r);
            if (conn) gr_resp_conn_close_after_write(conn);
            continue;
        }
        r->await_ack = 1;
        r->acks_at_end = peer->ack_count;
        plog(p, "Streamed RDB transfer with replica %s succeeded (socket). Waiting for REPLCONF ACK from replica "
                "to enable streaming", name);
    }
}

/* Diskless: an ACK after the payload puts the replica online for real (Redis's putSlaveOnline). */
static void online_at_ack(gr_primary_t *p, replica_t *r) {
    r->await_ack = 0;
    if (r->kept_length) send_raw(p, r, r->kept, r->kept_length);
    free(r->kept);
    r->kept = NULL;
    r->kept_length = r->kept_capacity = 0;
    r->state->repl_peer.ack_ms = gr_unix_ms();
    char name[96];
    replica_name(r->state, name, sizeof name);
    plog(p, "Synchronization with replica %s succeeded", name);
}

static void child_finished(gr_primary_t *p) {
    if (p->socket_target) { diskless_finished(p); return; }
    p->child_running = 0;
    p->child_done = 0;
    sync_file_t *file = NULL;
    if (p->child_ok) {
        int fd = open(p->path, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd >= 0 && fstat(fd, &st) == 0 && (file = calloc(1, sizeof *file)) != NULL) {
            file->fd = fd;
            file->size = (int64_t)st.st_size;
            file->refs = 1;   /* ours until every waiting replica holds it */
        } else if (fd >= 0) {
            close(fd);
        }
    }
    unlink(p->path);   /* the open descriptor keeps it for the transfers */
    p->path[0] = '\0';
    if (!file) plog(p, "Background saving error: the replication RDB could not be written");
    else plog(p, "Background saving terminated with success");
    for (replica_t *r = p->replicas, *next; r; r = next) {
        next = r->next;
        if (r->state->repl_peer.state != GR_REPLICA_WAIT_BGSAVE_END) continue;
        if (!file) { replica_close(p, r, "SYNC failed. BGSAVE child returned an error"); continue; }
        char header[48];
        int n = snprintf(header, sizeof header, "$%lld\r\n", (long long)file->size);
        send_raw(p, r, header, (size_t)n);
        r->file = file;
        file->refs++;
        r->file_sent = 0;
        r->state->repl_peer.state = GR_REPLICA_SEND_BULK;
    }
    file_release(file);
}

/* Feed the RDB file into a SEND_BULK replica's output while it drains; online when all is in. */
static void send_bulk(gr_primary_t *p, replica_t *r) {
    gr_resp_conn_t *conn = conn_of(p, r);
    if (!conn) return;
    uint8_t *chunk = NULL;
    while (r->file_sent < r->file->size && gr_resp_conn_output_pending(conn) < BULK_HIGH_WATER) {
        if (!chunk && !(chunk = malloc(BULK_CHUNK))) return;
        int64_t want = r->file->size - r->file_sent;
        if (want > BULK_CHUNK) want = BULK_CHUNK;
        ssize_t n = pread(r->file->fd, chunk, (size_t)want, (off_t)r->file_sent);
        if (n <= 0) {
            free(chunk);
            replica_close(p, r, "Read error sending DB to replica");
            return;
        }
        send_raw(p, r, chunk, (size_t)n);
        r->file_sent += n;
    }
    free(chunk);
    if (r->file_sent < r->file->size) return;
    file_release(r->file);
    r->file = NULL;
    char name[96];
    replica_name(r->state, name, sizeof name);
    if (r->state->repl_peer.rdb_only) {   /* redis-cli --rdb: the payload was all it wanted */
        r->state->repl_peer.state = GR_REPLICA_ONLINE;
        gr_resp_conn_close_after_write(conn);
        return;
    }
    if (r->kept_length) send_raw(p, r, r->kept, r->kept_length);
    free(r->kept);
    r->kept = NULL;
    r->kept_length = r->kept_capacity = 0;
    r->state->repl_peer.state = GR_REPLICA_ONLINE;
    r->state->repl_peer.ack_ms = gr_unix_ms();
    plog(p, "Synchronization with replica %s succeeded", name);
}

/* client-output-buffer-limit replica: the buffer plus what is kept for after the payload. */
static int over_limit(gr_primary_t *p, replica_t *r) {
    gr_resp_conn_t *conn = conn_of(p, r);
    if (!conn) return 0;
    if (r->soft_since_ms < 0) return 1;   /* out of memory for it */
    const int64_t *limit = p->db->config.output_limit[GR_CLIENT_CLASS_REPLICA];
    int64_t used = (int64_t)gr_resp_conn_output_pending(conn) + (int64_t)r->kept_length;
    if (r->state->repl_peer.state == GR_REPLICA_SEND_BULK ||
        (p->socket_target && r->state->repl_peer.state == GR_REPLICA_WAIT_BGSAVE_END))
        used -= BULK_HIGH_WATER + BULK_CHUNK;   /* the payload's window */
    if (limit[GR_LIMIT_HARD] && used >= limit[GR_LIMIT_HARD]) return 1;
    if (limit[GR_LIMIT_SOFT] && used >= limit[GR_LIMIT_SOFT]) {
        int64_t now = p->db->now_ms ? p->db->now_ms : gr_unix_ms();
        if (!r->soft_since_ms) r->soft_since_ms = now;
        else if (now - r->soft_since_ms > limit[GR_LIMIT_SOFT_SECONDS] * 1000) return 1;
    } else {
        r->soft_since_ms = 0;
    }
    return 0;
}

static void feed_all(gr_server_t *db, const char *command, size_t length) {
    gr_propagate_flush(db);   /* after every pending write */
    gr_repl_backlog_feed(db, (const uint8_t *)command, length);
}

/* Once a second: keepalives, PING, timeouts, the good-replicas count's lag. */
static void every_second(gr_primary_t *p, int64_t now) {
    gr_server_t *db = p->db;
    gr_repl_primary_t *rp = &db->repl_primary;
    for (replica_t *r = p->replicas, *next; r; r = next) {
        next = r->next;
        int state = r->state->repl_peer.state;
        /* keepalives before the payload; never inside a diskless one */
        if (state == GR_REPLICA_WAIT_BGSAVE_START || (state == GR_REPLICA_WAIT_BGSAVE_END && !p->socket_target))
            send_raw(p, r, "\n", 1);
        if (state == GR_REPLICA_WAIT_BGSAVE_END && p->socket_target && r->stall_since_ms &&
            now - r->stall_since_ms > rp->repl_timeout_s * 1000) {
            char name[96];
            replica_name(r->state, name, sizeof name);
            plog(p, "Disconnecting timedout replica (full sync): %s", name);
            replica_close(p, r, "replica timed out during the full sync");
            continue;
        }
        if (state == GR_REPLICA_ONLINE && !r->pre_psync && now - r->state->repl_peer.ack_ms > rp->repl_timeout_s * 1000) {
            char name[96];
            replica_name(r->state, name, sizeof name);
            plog(p, "Disconnecting timedout replica (streaming sync): %s", name);
            replica_close(p, r, "replica timed out");
        }
    }
    /* a replica's replicas get its primary's PINGs in the stream it proxies, none of its own */
    if (p->replicas && !db->repl.master_port && rp->ping_period_s > 0 && now - p->last_ping_ms >= rp->ping_period_s * 1000) {
        p->last_ping_ms = now;
        static const char ping[] = "*1\r\n$4\r\nPING\r\n";
        feed_all(db, ping, sizeof ping - 1);
    }
}

/* repl-backlog-ttl: no replica for that long -> the backlog is freed and the history renamed. */
static void backlog_ttl(gr_primary_t *p) {
    gr_server_t *db = p->db;
    gr_repl_primary_t *rp = &db->repl_primary;
    if (!rp->backlog || !rp->backlog_ttl_s || db->repl.master_port) return;
    int64_t now = gr_unix_ms();
    if (now - p->no_replicas_since_ms <= rp->backlog_ttl_s * 1000) return;
    remove_tap(p);   /* what is pending belongs to the old history */
    gr_repl_new_replid(db);
    memset(db->repl.replid2, '0', 40);
    db->repl.second_offset = -1;
    gr_repl_backlog_free(db);
    if (db->repl_primary.feed_context == p) db->repl_primary.feed = NULL, db->repl_primary.feed_context = NULL;
    plog(p, "Replication backlog freed after %lld seconds without connected replicas.", (long long)rp->backlog_ttl_s);
}

void gr_primary_tick(gr_primary_t *p) {
    gr_server_t *db = p->db;
    gr_repl_primary_t *rp = &db->repl_primary;
    if (db->repl.master_port) {
        /* A replica serves its own replicas the stream it applies (chained: server/replica.c
         * feeds the backlog); when it became a replica or its history changed (a full sync, a
         * new replication id) they resync with the new history, as Redis's disconnectSlaves. */
        if (!p->was_replica || strcmp(p->seen_replid, db->repl.replid) != 0 || p->seen_syncs != db->repl.sync_full) {
            const char *why = p->was_replica ? "the replication history changed" : "the server became a replica";
            p->was_replica = 1;
            memcpy(p->seen_replid, db->repl.replid, sizeof p->seen_replid);
            p->seen_syncs = db->repl.sync_full;
            while (p->replicas) replica_close(p, p->replicas, why);   /* a diskless child is killed below */
            remove_tap(p);
        }
    } else if (p->was_replica) {   /* promoted: the backlog goes on (PSYNC replid2 continues from it) */
        p->was_replica = 0;
        p->no_replicas_since_ms = gr_unix_ms();
        if (gr_repl_backlog_create(db) == 0) install_tap(p);
    }
    if (rp->backlog) install_tap(p);
    /* what the cron propagated (active expiry's DELs) does not wait for the next command */
    if (db->propagation.tap && db->propagation.length > db->propagation.tapped && !db->propagation.in_exec)
        gr_propagate_flush(db);
    if (rp->sync_requests) {
        rp->sync_requests = 0;
        for (gr_connection_t *state = db->connections; state; state = state->next)
            if (state->repl_peer.sync_request) take_request(p, state);
    }
    if (!p->replicas && !p->child_running) {
        rp->connected = rp->good = 0;
        rp->getack = 0;
        backlog_ttl(p);
        return;
    }
    int64_t now = gr_unix_ms();
    p->no_replicas_since_ms = now;
    if (p->pipe_fd >= 0) pump_pipe(p, now);
    if (p->child_running && !p->child_done) gr_child_reap(db);
    if (p->child_running && p->child_done && (!p->socket_target || p->pipe_eof)) child_finished(p);
    if (!p->child_running && gr_child_running(db) == GR_CHILD_NONE) maybe_start_child(p, now);
    for (replica_t *r = p->replicas; r; r = r->next)
        if (r->await_ack && r->state->repl_peer.ack_count != r->acks_at_end) online_at_ack(p, r);
    if (rp->getack) {
        rp->getack = 0;
        static const char getack[] = "*3\r\n$8\r\nREPLCONF\r\n$6\r\nGETACK\r\n$1\r\n*\r\n";
        if (!db->repl.master_port) feed_all(db, getack, sizeof getack - 1);   /* a replica proxies its primary's */
    }
    if (now - p->last_second_ms >= 1000) {
        p->last_second_ms = now;
        every_second(p, now);
    }
    int64_t connected = 0, good = 0;
    for (replica_t *r = p->replicas, *next; r; r = next) {
        next = r->next;
        if (r->state->repl_peer.state == GR_REPLICA_SEND_BULK) send_bulk(p, r);
        if (over_limit(p, r)) {
            char name[96];
            replica_name(r->state, name, sizeof name);
            plog(p, "Client id=%lld addr=%s (replica %s) scheduled to be closed ASAP for overcoming of output buffer "
                    "limits.", (long long)r->state->id, r->state->addr, name);
            replica_close(p, r, "output buffer limits");
            continue;
        }
        if (r->state->repl_peer.state == GR_REPLICA_ONLINE && !r->state->repl_peer.rdb_only) {
            connected++;
            if ((now - r->state->repl_peer.ack_ms) / 1000 <= rp->min_replicas_max_lag) good++;
        }
        if (r->dirty) {
            r->dirty = 0;
            p->io.flush(p->io.context, r->fd);   /* may close it: forget drops r */
        }
    }
    rp->connected = connected;
    rp->good = good;
}
