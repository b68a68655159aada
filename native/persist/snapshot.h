/* snapshot.h — goblin's snapshot file: the whole keyspace (every database, its keys, their
 * types, encodings and absolute expiry times) in one checksummed file. The implementation is
 * snapshot.c; persistence.c decides when to write one (SAVE, BGSAVE, the save rules,
 * SHUTDOWN) and loads it at start.
 *
 * Layout (every integer little-endian; varint and bytes as core/snapshot_io.h):
 *
 *   header   "GRSNAPSH" (8)  u16 format  u64 written at (unix ms)  bytes producer ("goblin-ring 0.x")
 *   function u8 0xF5  bytes code    one per function library, its FUNCTION LOAD code (format 2 on;
 *                                   format 1 files, which have none, still load)
 *   database u8 0xFE  varint db index  varint keys  varint keys with an expiry      (non-empty dbs)
 *     key    u8 type id  u8 flags (bit 0: expiry follows)  [u64 expiry, unix ms]
 *            bytes key   the type's save body (exec/value_type.h: encoding and layout are the type's)
 *   end      u8 0xFF  varint keys in the file
 *   chunks   u64 CRC-64 of each GR_SNAPSHOT_CHUNK bytes of everything above (the last one short)
 *            u32 chunk count  u32 chunk bytes
 *   seal     u16 format  u64 CRC-64 of every byte before it (core/snapshot_io.h's gr_snapshot_seal)
 *
 * The whole-file CRC decides whether a file is sound; when it disagrees, the chunk CRCs say
 * where (the first chunk whose bytes changed), and a file whose trailer does not add up is
 * reported as truncated at its end. Load checks the CRC on a second thread while it builds each
 * value through its type's load hook; a mismatch throws the whole build away before any client is
 * served, and a structural error names its offset.
 *
 * A save writes "temp-<pid>.grdb" beside the target, fsyncs it, renames it over the target and
 * fsyncs the directory, so a crash at any moment leaves either the old file or the new one.
 */
#ifndef GR_SNAPSHOT_H
#define GR_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "exec/db.h"

#define GR_SNAPSHOT_MAGIC "GRSNAPSH"
#define GR_SNAPSHOT_FORMAT 2          /* 2: function libraries after the header */
#define GR_SNAPSHOT_FORMAT_OLDEST 1   /* the oldest format load reads */
#define GR_SNAPSHOT_CHUNK (1u << 20)

typedef struct gr_snapshot_stats {
    int64_t keys;            /* keys written, or loaded */
    int64_t keys_expired;    /* load: keys skipped because their time had passed */
    int64_t bytes;           /* file bytes */
} gr_snapshot_stats_t;

/* The function libraries (FUNCTION LOAD's code), which script/ keeps. A layer above persist, it
 * installs these hooks from a constructor; until then (and in C tests without script/) there
 * are no libraries to save and a file's libraries are refused.
 *   each: write(context, code, length) for every library, stopping at (and returning) the first
 *         non-zero return;
 *   load: make a library from its code as FUNCTION LOAD REPLACE would: 0, or -1 with error;
 *   flush: remove every library (a replica's full sync replaces them with the primary's). */
typedef struct gr_function_hooks {
    int (*each)(gr_server_t *db, int (*write)(void *context, const uint8_t *code, size_t length), void *context);
    int (*load)(gr_server_t *db, const uint8_t *code, size_t length, char *error, size_t error_size);
    void (*flush)(gr_server_t *db);
} gr_function_hooks_t;
void gr_persist_set_function_hooks(const gr_function_hooks_t *hooks);
extern const gr_function_hooks_t *gr_function_hooks;

/* Write the whole keyspace to path (temp file, fsync, rename, directory fsync). key_delay_us
 * > 0 sleeps that long after each key (rdb-key-save-delay, for tests). 0, or -1 with a
 * Redis-like message ("Write error saving DB on disk: No space left on device") in error. */
int gr_snapshot_save(gr_server_t *db, const char *path, int64_t key_delay_us, gr_snapshot_stats_t *stats, char *error,
                     size_t error_size);

/* Load path into the db's databases, which should be empty (keys already present are
 * replaced). 1 loaded, 0 there is no such file, -1 refused: error names the file, what is wrong
 * and the offset ("dump.grdb: checksum mismatch: corrupt bytes between offsets 0 and 1048576").
 * A refused file leaves every database empty. */
int gr_snapshot_load(gr_server_t *db, const char *path, gr_snapshot_stats_t *stats, char *error, size_t error_size);

/* Map a file to load (read-only, populated, read sequentially): 1 with *data and *length (unmap
 * with munmap), 0 when it does not exist, -1 with the error written. A file shorter than
 * min_length is "not <kind>: truncated at offset N (no header)". Snapshots and Redis RDB files. */
/* write() all of it, resuming after EINTR and short writes: 0, or -1 with errno set. The one
 * loop the snapshot, the append-only file and the Redis RDB writer share. */
int gr_persist_write_all(int fd, const uint8_t *data, size_t length);

int gr_persist_map_file(const char *path, size_t min_length, const char *kind, const uint8_t **data, size_t *length,
                        char *error, size_t error_size);

#endif
