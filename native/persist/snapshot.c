/* snapshot.c — writing and reading goblin's snapshot file (the layout is in snapshot.h). The
 * values' bytes are their types' business (exec/value_type.h's save and load hooks, in
 * core/snapshot_io.h's encoding); this file lays out the databases and keys around them,
 * streams the bytes to the file with their checksums, and checks a file before loading it.
 */
#include "persist/snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "core/snapshot_io.h"
#include "exec/child.h"

#ifndef GR_PACKAGE_VERSION
#define GR_PACKAGE_VERSION "dev"
#endif

enum { OP_FUNCTION = 0xF5, OP_SELECT_DB = 0xFE, OP_END = 0xFF };
enum { KEY_HAS_EXPIRY = 1 };
#define FLUSH_AT ((size_t)1 << 20)   /* hand the buffer to write(2) once it holds this much */
#define MAX_CHUNKS ((size_t)1 << 26)

/* ---- writing: a buffer streamed to a file, with the whole and per-chunk CRCs ---- */

typedef struct file_sink {
    int fd;
    gr_snapshot_writer_t buffer;   /* bytes not yet written */
    uint64_t crc;                  /* of every byte handed to the file */
    uint64_t written;
    uint64_t chunk_crc;            /* of the chunk in progress */
    uint64_t *chunks;              /* finished chunks' CRCs */
    size_t chunk_count, chunk_capacity;
    int error;                     /* errno of the first failure; ENOMEM for the buffer */
} file_sink_t;

int gr_persist_write_all(int fd, const uint8_t *data, size_t length) {
    while (length) {
        ssize_t n = write(fd, data, length);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        data += n;
        length -= (size_t)n;
    }
    return 0;
}

static int push_chunk(file_sink_t *sink) {
    if (sink->chunk_count == sink->chunk_capacity) {
        size_t capacity = sink->chunk_capacity ? sink->chunk_capacity * 2 : 64;
        uint64_t *grown = gr_mem_realloc(sink->chunks, capacity * sizeof *grown, GR_MEM_OTHER);
        if (!grown) return -1;
        sink->chunks = grown;
        sink->chunk_capacity = capacity;
    }
    sink->chunks[sink->chunk_count++] = sink->chunk_crc;
    sink->chunk_crc = 0;
    return 0;
}

/* Checksum the buffered bytes (whole and per chunk), write them, empty the buffer. */
static int sink_flush(file_sink_t *sink) {
    if (sink->error) return -1;
    if (sink->buffer.oom) {
        sink->error = ENOMEM;
        return -1;
    }
    const uint8_t *data = sink->buffer.data;
    size_t length = sink->buffer.length;
    sink->crc = gr_crc64(sink->crc, data, length);
    for (size_t done = 0; done < length;) {
        size_t in_chunk = (size_t)(sink->written % GR_SNAPSHOT_CHUNK);
        size_t take = GR_SNAPSHOT_CHUNK - in_chunk;
        if (take > length - done) take = length - done;
        sink->chunk_crc = gr_crc64(sink->chunk_crc, data + done, take);
        done += take;
        sink->written += take;
        if (sink->written % GR_SNAPSHOT_CHUNK == 0 && push_chunk(sink) != 0) {
            sink->error = ENOMEM;
            return -1;
        }
    }
    if (gr_persist_write_all(sink->fd, data, length) != 0) {
        sink->error = errno;
        return -1;
    }
    sink->buffer.length = 0;
    return 0;
}

typedef struct save_pass {
    file_sink_t *sink;
    int64_t key_delay_us;
    int64_t keys;
    const char *failure;   /* a type that cannot be saved */
} save_pass_t;

static void sleep_us(int64_t us) {
    struct timespec pause = {us / 1000000, (long)(us % 1000000) * 1000};
    while (nanosleep(&pause, &pause) != 0 && errno == EINTR) {}
}

static int save_key(void *context, gr_ks_entry_t *entry) {
    save_pass_t *pass = context;
    gr_snapshot_writer_t *out = &pass->sink->buffer;
    const gr_value_type_t *row = gr_value_type(entry->type);
    if (!row || !row->save) {
        pass->failure = row ? row->name : "unknown";
        return 1;
    }
    gr_snapshot_write_u8(out, entry->type);
    gr_snapshot_write_u8(out, entry->expire_at_ms >= 0 ? KEY_HAS_EXPIRY : 0);
    if (entry->expire_at_ms >= 0) gr_snapshot_write_u64(out, (uint64_t)entry->expire_at_ms);
    gr_snapshot_write_bytes(out, entry->key, entry->key_length);
    if (row->save(entry->value, out) != 0 || out->oom) {
        pass->sink->error = ENOMEM;
        return 1;
    }
    pass->keys++;
    if (out->length >= FLUSH_AT && sink_flush(pass->sink) != 0) return 1;
    if (pass->key_delay_us > 0) sleep_us(pass->key_delay_us);
    return 0;
}

const gr_function_hooks_t *gr_function_hooks;

void gr_persist_set_function_hooks(const gr_function_hooks_t *hooks) { gr_function_hooks = hooks; }

static int write_function(void *context, const uint8_t *code, size_t length) {
    gr_snapshot_writer_t *out = context;
    gr_snapshot_write_u8(out, OP_FUNCTION);
    gr_snapshot_write_bytes(out, code, length);
    return out->oom ? -1 : 0;
}

static int64_t unix_ms(void) {
    struct timeval now;
    gettimeofday(&now, NULL);
    return (int64_t)now.tv_sec * 1000 + now.tv_usec / 1000;
}

/* Everything but the final seal goes through the sink; returns 0 or -1 (sink->error or pass). */
static int write_snapshot(gr_server_t *db, file_sink_t *sink, save_pass_t *pass) {
    gr_snapshot_writer_t *out = &sink->buffer;
    gr_snapshot_write_raw(out, (const uint8_t *)GR_SNAPSHOT_MAGIC, 8);
    gr_snapshot_write_u16(out, GR_SNAPSHOT_FORMAT);
    gr_snapshot_write_u64(out, (uint64_t)unix_ms());
    static const char producer[] = "goblin-ring " GR_PACKAGE_VERSION;
    gr_snapshot_write_bytes(out, (const uint8_t *)producer, sizeof producer - 1);
    if (gr_function_hooks && gr_function_hooks->each(db, write_function, out) != 0) {
        sink->error = ENOMEM;
        return -1;
    }
    for (int i = 0; i < GR_DB_COUNT; i++) {
        gr_keyspace_t *ks = db->keyspaces[i];
        if (gr_ks_size(ks) == 0) continue;
        gr_snapshot_write_u8(out, OP_SELECT_DB);
        gr_snapshot_write_varint(out, (uint64_t)i);
        gr_snapshot_write_varint(out, gr_ks_size(ks));
        gr_snapshot_write_varint(out, gr_ks_expires_count(ks));
        gr_ks_iterate(ks, save_key, pass);
        if (pass->failure || sink->error) return -1;
    }
    gr_snapshot_write_u8(out, OP_END);
    gr_snapshot_write_varint(out, (uint64_t)pass->keys);
    if (sink_flush(sink) != 0) return -1;
    /* The chunk table: the chunk in progress is the last one (short, or empty when the body
     * ended on a boundary: then it is not listed). */
    if (sink->written % GR_SNAPSHOT_CHUNK != 0 && push_chunk(sink) != 0) {
        sink->error = ENOMEM;
        return -1;
    }
    size_t chunk_count = sink->chunk_count;
    for (size_t i = 0; i < chunk_count; i++) gr_snapshot_write_u64(out, sink->chunks[i]);
    gr_snapshot_write_u32(out, (uint32_t)chunk_count);
    gr_snapshot_write_u32(out, GR_SNAPSHOT_CHUNK);
    gr_snapshot_write_u16(out, GR_SNAPSHOT_FORMAT);
    /* The seal's CRC covers every byte before it: the flushed bytes' CRC continued over these. */
    uint64_t crc = gr_crc64(sink->crc, out->data, out->length);
    gr_snapshot_write_u64(out, crc);
    if (out->oom) {
        sink->error = ENOMEM;
        return -1;
    }
    if (gr_persist_write_all(sink->fd, out->data, out->length) != 0) {
        sink->error = errno;
        return -1;
    }
    sink->written += out->length;
    out->length = 0;
    return 0;
}

/* fsync the directory holding path, so that the rename itself is durable. */
static int fsync_directory_of(const char *path) {
    char copy[4096];
    snprintf(copy, sizeof copy, "%s", path);
    int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -1;
    int result = fsync(fd);
    close(fd);
    return result;
}

int gr_snapshot_save(gr_server_t *db, const char *path, int64_t key_delay_us, gr_snapshot_stats_t *stats, char *error,
                     size_t error_size) {
    char temp[4096], directory[4096];
    snprintf(directory, sizeof directory, "%s", path);
    int n = snprintf(temp, sizeof temp, "%s/temp-%d.grdb", dirname(directory), (int)getpid());
    if (n < 0 || (size_t)n >= sizeof temp) {
        snprintf(error, error_size, "Failed opening the temp file for saving: path too long");
        return -1;
    }
    int fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(error, error_size, "Failed opening the temp file %s for saving: %s", temp, strerror(errno));
        return -1;
    }
    file_sink_t sink = {.fd = fd};
    gr_snapshot_writer_init(&sink.buffer, GR_MEM_OTHER);
    gr_snapshot_writer_reserve(&sink.buffer, FLUSH_AT + 4096);
    save_pass_t pass = {.sink = &sink, .key_delay_us = key_delay_us};
    int result = write_snapshot(db, &sink, &pass);
    if (result == 0 && fsync(fd) != 0) {
        sink.error = errno;
        result = -1;
    }
    if (close(fd) != 0 && result == 0) {
        sink.error = errno;
        result = -1;
    }
    if (result == 0 && rename(temp, path) != 0) {
        snprintf(error, error_size, "Error moving temp DB file %s on the final destination %s: %s", temp, path,
                 strerror(errno));
        unlink(temp);
        result = -2;
    }
    if (result == 0 && fsync_directory_of(path) != 0)   /* the file is whole; its rename may not last: as Redis, logged */
        gr_log_to_stderr("Failed to fsync the directory of %s after the rename: %s", path, strerror(errno));
    if (result == -1) {
        if (pass.failure)
            snprintf(error, error_size, "Error saving DB: values of type %s cannot be saved", pass.failure);
        else
            snprintf(error, error_size, "Write error saving DB on disk: %s", strerror(sink.error ? sink.error : EIO));
        unlink(temp);
    }
    if (stats) *stats = (gr_snapshot_stats_t){.keys = pass.keys, .bytes = (int64_t)sink.written};
    gr_snapshot_writer_release(&sink.buffer);
    gr_mem_free(sink.chunks, GR_MEM_OTHER);
    return result == 0 ? 0 : -1;
}

/* ---- reading ---- */

static uint64_t read_le(const uint8_t *p, int bytes) {
    uint64_t value = 0;
    for (int i = bytes - 1; i >= 0; i--) value = (value << 8) | p[i];
    return value;
}

/* The whole-file CRC disagrees: say where. A trailer that adds up lets the chunk CRCs name
 * the first chunk whose bytes changed; otherwise the file was cut short (or its end damaged). */
static void describe_bad_checksum(const uint8_t *data, size_t length, const char *path, char *error,
                                  size_t error_size) {
    const size_t seal = 10, counts = 8;
    if (length >= seal + counts) {
        uint64_t chunk_count = read_le(data + length - seal - counts, 4);
        uint64_t chunk_bytes = read_le(data + length - seal - 4, 4);
        size_t table = (size_t)chunk_count * 8;
        if (chunk_bytes == GR_SNAPSHOT_CHUNK && chunk_count <= MAX_CHUNKS && table + seal + counts <= length) {
            size_t body = length - seal - counts - table;
            if ((body + GR_SNAPSHOT_CHUNK - 1) / GR_SNAPSHOT_CHUNK == chunk_count) {
                const uint8_t *crcs = data + body;
                for (size_t i = 0; i < chunk_count; i++) {
                    size_t start = i * GR_SNAPSHOT_CHUNK, end = start + GR_SNAPSHOT_CHUNK < body ? start + GR_SNAPSHOT_CHUNK : body;
                    if (gr_crc64(0, data + start, end - start) != read_le(crcs + i * 8, 8)) {
                        snprintf(error, error_size, "%s: checksum mismatch: corrupt bytes between offsets %zu and %zu",
                                 path, start, end);
                        return;
                    }
                }
                snprintf(error, error_size, "%s: checksum mismatch: corrupt bytes in the trailer (offsets %zu to %zu)",
                         path, body, length);
                return;
            }
        }
    }
    snprintf(error, error_size, "%s: truncated or corrupt: the file ends at offset %zu without a valid trailer",
             path, length);
}

static void clear_databases(gr_server_t *db) {
    for (int i = 0; i < GR_DB_COUNT; i++) gr_ks_clear(db->keyspaces[i]);
}

/* Build the keyspace from a file whose checksum is already good. 0, or -1 with error set. */
static int load_body(gr_server_t *db, gr_snapshot_reader_t *in, const char *path, gr_snapshot_stats_t *stats, char *error,
                     size_t error_size) {
    const uint8_t *magic, *producer;
    size_t producer_length;
    uint16_t format;
    uint64_t written_at;
    gr_snapshot_read_raw(in, 8, &magic);
    gr_snapshot_read_u16(in, &format);
    gr_snapshot_read_u64(in, &written_at);
    gr_snapshot_read_bytes(in, &producer, &producer_length);
    if (in->error) goto bad;
    const int64_t now = unix_ms();
    gr_keyspace_t *ks = NULL;
    uint64_t keys_total = 0;
    for (;;) {
        size_t at = in->offset;
        uint8_t op;
        if (gr_snapshot_read_u8(in, &op) != 0) goto bad;
        if (op == OP_END) {
            uint64_t count;
            if (gr_snapshot_read_varint(in, &count) != 0) goto bad;
            if (count != keys_total) {
                in->offset = at;
                gr_snapshot_reader_fail(in, "the key count at the end disagrees with the keys read");
                goto bad;
            }
            break;
        }
        if (op == OP_FUNCTION && format >= 2 && !ks) {
            const uint8_t *code;
            size_t code_length;
            if (gr_snapshot_read_bytes(in, &code, &code_length) != 0) goto bad;
            char why[512] = "functions are not available";
            if (!gr_function_hooks || gr_function_hooks->load(db, code, code_length, why, sizeof why) != 0) {
                snprintf(error, error_size, "%s: the function library at offset %zu does not load: %s", path, at, why);
                return -1;
            }
            continue;
        }
        if (op == OP_SELECT_DB) {
            uint64_t index, keys, expires;
            if (gr_snapshot_read_varint(in, &index) != 0 || gr_snapshot_read_varint(in, &keys) != 0 ||
                gr_snapshot_read_varint(in, &expires) != 0)
                goto bad;
            if (index >= GR_DB_COUNT) {
                in->offset = at;
                gr_snapshot_reader_fail(in, "database index out of range");
                goto bad;
            }
            ks = db->keyspaces[index];
            continue;
        }
        const gr_value_type_t *row = gr_value_type(op);
        if (!ks || !row || !row->load) {
            in->offset = at;
            gr_snapshot_reader_fail(in, ks ? "unknown value type" : "a key before any database");
            goto bad;
        }
        uint8_t flags;
        uint64_t expire = 0;
        const uint8_t *key;
        size_t key_length;
        if (gr_snapshot_read_u8(in, &flags) != 0 ||
            ((flags & KEY_HAS_EXPIRY) && gr_snapshot_read_u64(in, &expire) != 0) ||
            gr_snapshot_read_bytes(in, &key, &key_length) != 0)
            goto bad;
        size_t value_at = in->offset;
        void *value = row->load(db, in);
        if (!value) {
            if (!in->error) {
                snprintf(error, error_size, "%s: out of memory loading the value at offset %zu", path, value_at);
                return -1;
            }
            goto bad;
        }
        keys_total++;
        if ((flags & KEY_HAS_EXPIRY) && (int64_t)expire <= now) {   /* its time has passed: not loaded */
            row->free(value);
            stats->keys_expired++;
            continue;
        }
        gr_ks_entry_t *old = gr_ks_find(ks, key, key_length);
        if (old) gr_ks_delete(ks, key, key_length);
        gr_ks_entry_t *entry = gr_ks_add(ks, key, key_length, op, value);
        if (!entry) {
            row->free(value);
            snprintf(error, error_size, "%s: out of memory loading the key at offset %zu", path, value_at);
            return -1;
        }
        if (flags & KEY_HAS_EXPIRY) gr_ks_set_expire(ks, entry, (int64_t)expire);
        stats->keys++;
    }
    return 0;
bad:
    snprintf(error, error_size, "%s: %s at offset %zu", path, in->error ? in->error : "malformed", in->error_offset);
    return -1;
}

/* The whole-file CRC, computed on a second thread while the first builds the keyspace (this
 * machine's second core; the build reads the same mapped bytes and writes nothing they share). */
typedef struct crc_job {
    const uint8_t *data;
    size_t length;
    uint64_t crc;
} crc_job_t;

static void *crc_worker(void *argument) {
    crc_job_t *job = argument;
    job->crc = gr_crc64(0, job->data, job->length);
    return NULL;
}

int gr_persist_map_file(const char *path, size_t min_length, const char *kind, const uint8_t **data, size_t *length,
                        char *error, size_t error_size) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return 0;
        snprintf(error, error_size, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    struct stat info;
    if (fstat(fd, &info) != 0) {
        snprintf(error, error_size, "%s: cannot examine: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    *length = (size_t)info.st_size;
    if (*length < min_length || *length == 0) {
        snprintf(error, error_size, "%s: not %s: truncated at offset %zu (no header)", path, kind, *length);
        close(fd);
        return -1;
    }
    const uint8_t *mapped = mmap(NULL, *length, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    close(fd);
    if (mapped == MAP_FAILED) {
        snprintf(error, error_size, "%s: cannot map: %s", path, strerror(errno));
        return -1;
    }
    madvise((void *)mapped, *length, MADV_SEQUENTIAL);
    *data = mapped;
    return 1;
}

int gr_snapshot_load(gr_server_t *db, const char *path, gr_snapshot_stats_t *stats, char *error, size_t error_size) {
    gr_snapshot_stats_t local = {0};
    if (!stats) stats = &local;
    *stats = (gr_snapshot_stats_t){0};
    const uint8_t *data;
    size_t length;
    int mapped = gr_persist_map_file(path, 8, "a goblin snapshot", &data, &length, error, error_size);
    if (mapped <= 0) return mapped;
    stats->bytes = (int64_t)length;
    int result = -1;
    /* seal: u16 format, u64 CRC; before it the chunk table and its two u32 counts */
    const size_t seal = 10;
    if (memcmp(data, GR_SNAPSHOT_MAGIC, 8) != 0) {
        snprintf(error, error_size, "%s: not a goblin snapshot (bad signature at offset 0)", path);
    } else if (length >= 10 && (read_le(data + 8, 2) < GR_SNAPSHOT_FORMAT_OLDEST || read_le(data + 8, 2) > GR_SNAPSHOT_FORMAT)) {
        snprintf(error, error_size, "%s: snapshot format %u is not supported (this server reads %u to %u) at offset 8",
                 path, (unsigned)read_le(data + 8, 2), GR_SNAPSHOT_FORMAT_OLDEST, GR_SNAPSHOT_FORMAT);
    } else if (length < seal + 8 || read_le(data + length - seal, 2) != read_le(data + 8, 2) ||
               read_le(data + length - seal - 8, 4) > MAX_CHUNKS ||
               8 + read_le(data + length - seal - 8, 4) * 8 > length - seal) {
        describe_bad_checksum(data, length, path, error, error_size);   /* the trailer does not add up */
    } else {
        const size_t seal_less = length - seal;
        const size_t trailer = 8 + (size_t)read_le(data + seal_less - 8, 4) * 8;
        /* build while the CRC is computed; a mismatch throws the build away, so no client ever
         * sees data from a file that is not sound (the server serves nobody until this returns) */
        (void)gr_crc64(0, NULL, 0);   /* its tables, before two threads could both build them */
        crc_job_t job = {data, length - 8, 0};
        pthread_t worker;
        const int threaded = pthread_create(&worker, NULL, crc_worker, &job) == 0;
        if (!threaded) crc_worker(&job);
        gr_snapshot_reader_t in;
        gr_snapshot_reader_init(&in, data, seal_less - trailer);
        char body_error[1024] = "";
        int built = load_body(db, &in, path, stats, body_error, sizeof body_error);
        if (built == 0 && gr_snapshot_reader_remaining(&in) != 0) {
            snprintf(body_error, sizeof body_error, "%s: unexpected bytes after the end marker at offset %zu", path,
                     in.offset);
            built = -1;
        }
        if (threaded) pthread_join(worker, NULL);
        if (job.crc != read_le(data + length - 8, 8)) {
            describe_bad_checksum(data, length, path, error, error_size);
        } else if (built != 0) {
            snprintf(error, error_size, "%s", body_error);
        } else {
            result = 1;
        }
    }
    munmap((void *)data, length);
    if (result < 0) {
        clear_databases(db);
        stats->keys = 0;
        stats->keys_expired = 0;
    }
    return result;
}
