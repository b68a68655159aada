/* rdb_format.h — Redis's RDB file format, read and written: the numbers (opcodes, value type
 * ids, versions) as redis-server 5.0–7.4 and Valkey 7–9 use them (checked against their rdb.h),
 * and the two entry points. rdb_load.c reads a Redis (or Valkey) RDB file into the keyspace;
 * rdb_save.c writes the keyspace as an RDB file redis-server 7.0 loads (version 10).
 *
 * A file is "REDIS" + 4 decimal digits of version (Valkey 9: "VALKEY" + 3 digits, 80), then
 * opcodes and keys, EOF (0xFF) and, from version 5 on, a little-endian CRC-64/Jones of every
 * byte before it (core/snapshot_io.h's gr_crc64; 0 means the writer did not compute one).
 * Lengths and strings are core/rdb_string.h's encodings. A key is [EXPIRETIME_MS u64 LE]
 * [IDLE len | FREQ u8] type-id key-string value; the value's layout is the type's.
 */
#ifndef GR_RDB_FORMAT_H
#define GR_RDB_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "core/snapshot_io.h"
#include "exec/db.h"

/* Versions: 9 is 5.0–6.2, 10 is 7.0, 11 is 7.2, 12 is 7.4; Valkey 9 writes 80 ("VALKEY080"). */
#define GR_RDB_VERSION_WRITTEN 10
#define GR_RDB_VERSION_MAX_REDIS 12
#define GR_RDB_VERSION_VALKEY 80

/* Value types */
enum {
    GR_RDB_TYPE_STRING = 0,
    GR_RDB_TYPE_LIST = 1,
    GR_RDB_TYPE_SET = 2,
    GR_RDB_TYPE_ZSET = 3,            /* scores as text */
    GR_RDB_TYPE_HASH = 4,
    GR_RDB_TYPE_ZSET_2 = 5,          /* scores as binary doubles */
    GR_RDB_TYPE_MODULE_PRE_GA = 6,
    GR_RDB_TYPE_MODULE_2 = 7,
    GR_RDB_TYPE_HASH_ZIPMAP = 9,
    GR_RDB_TYPE_LIST_ZIPLIST = 10,
    GR_RDB_TYPE_SET_INTSET = 11,
    GR_RDB_TYPE_ZSET_ZIPLIST = 12,
    GR_RDB_TYPE_HASH_ZIPLIST = 13,
    GR_RDB_TYPE_LIST_QUICKLIST = 14, /* nodes of ziplists */
    GR_RDB_TYPE_STREAM_LISTPACKS = 15,
    GR_RDB_TYPE_HASH_LISTPACK = 16,
    GR_RDB_TYPE_ZSET_LISTPACK = 17,
    GR_RDB_TYPE_LIST_QUICKLIST_2 = 18, /* nodes of listpacks or plain elements */
    GR_RDB_TYPE_STREAM_LISTPACKS_2 = 19,
    GR_RDB_TYPE_SET_LISTPACK = 20,
    GR_RDB_TYPE_STREAM_LISTPACKS_3 = 21,
    /* Redis 7.4: hashes with field TTLs (in a Redis-magic file; Valkey 9 uses 22 for its own) */
    GR_RDB_TYPE_HASH_METADATA_PRE_GA = 22,
    GR_RDB_TYPE_HASH_LISTPACK_EX_PRE_GA = 23,
    GR_RDB_TYPE_HASH_METADATA = 24,
    GR_RDB_TYPE_HASH_LISTPACK_EX = 25,
    /* Valkey 9 (a VALKEY-magic file): a hash with field TTLs, each field, value, i64 LE expiry (-1 none) */
    GR_RDB_TYPE_VALKEY_HASH_2 = 22,
};

/* Opcodes */
enum {
    GR_RDB_OPCODE_SLOT_INFO = 244,
    GR_RDB_OPCODE_FUNCTION2 = 245,
    GR_RDB_OPCODE_FUNCTION_PRE_GA = 246,
    GR_RDB_OPCODE_MODULE_AUX = 247,
    GR_RDB_OPCODE_IDLE = 248,
    GR_RDB_OPCODE_FREQ = 249,
    GR_RDB_OPCODE_AUX = 250,
    GR_RDB_OPCODE_RESIZEDB = 251,
    GR_RDB_OPCODE_EXPIRETIME_MS = 252,
    GR_RDB_OPCODE_EXPIRETIME = 253,
    GR_RDB_OPCODE_SELECTDB = 254,
    GR_RDB_OPCODE_EOF = 255,
};

/* A module's serialized value, as MODULE_AUX and redis-check-rdb walk it */
enum { GR_RDB_MODULE_EOF = 0, GR_RDB_MODULE_SINT = 1, GR_RDB_MODULE_UINT = 2, GR_RDB_MODULE_FLOAT = 3,
       GR_RDB_MODULE_DOUBLE = 4, GR_RDB_MODULE_STRING = 5 };

/* A quicklist-2 node's container */
enum { GR_RDB_QUICKLIST_PLAIN = 1, GR_RDB_QUICKLIST_PACKED = 2 };

/* A stream listpack entry's flags */
enum { GR_RDB_STREAM_DELETED = 1, GR_RDB_STREAM_SAMEFIELDS = 2 };

typedef struct gr_rdb_stats {
    int64_t keys;            /* loaded or written */
    int64_t keys_expired;    /* load: skipped, their time had passed */
    int64_t keys_skipped;    /* save: values with no Redis form (arrays), skipped with a warning */
    int64_t fields_ttl_dropped; /* save: hash field TTLs RDB 10 cannot carry */
    int64_t functions;       /* function libraries loaded or written */
    int64_t bytes;
    int version;             /* load: the file's RDB version */
} gr_rdb_stats_t;

/* 1 when the bytes begin as a Redis or Valkey RDB file ("REDIS" or "VALKEY" magic). */
int gr_rdb_is_rdb(const uint8_t *data, size_t length);
/* Whether the file at path begins as one (0 when it does not, or cannot be read). */
int gr_rdb_file_is_rdb(const char *path);

/* Load a Redis RDB file into the databases (keys already there are replaced; keys whose
 * expiry has passed are skipped). 1 loaded, 0 no such file, -1 refused: error names the file,
 * what is wrong and the byte offset; a refused file leaves every database empty. */
int gr_rdb_load(gr_server_t *db, const char *path, gr_rdb_stats_t *stats, char *error, size_t error_size);

/* Loading aside (a replica's full sync, server/replica.c): the file is read into keyspaces of
 * the caller's, away from the server's, on any thread, while the serving thread goes on with
 * the old data. Nothing of the server is touched: the settings that shape values are copies,
 * the keyspaces are the caller's (empty, without observers), and the file's function libraries
 * are kept (malloc'd copies of their code) for the serving thread to load at the swap. The
 * engines' allocation counters are the calling thread's (core/alloc.h: a helper thread counts
 * into its own and the serving thread absorbs them). *cancel nonzero stops it between keys
 * (-1, "cancelled"). 1 loaded, 0 no such file, -1 refused (error as gr_rdb_load's); whatever
 * was added stays in the keyspaces for the caller to free. */
typedef struct gr_rdb_library {
    uint8_t *code;
    size_t length;
} gr_rdb_library_t;
typedef struct gr_rdb_target {
    gr_keyspace_t *keyspaces[GR_DB_COUNT];
    gr_db_config_t config;
    gr_list_config_t list_config;
    gr_list_encoding_t list_target;
    const int *cancel;
    gr_rdb_library_t *libraries;
    size_t library_count, library_capacity;
} gr_rdb_target_t;
int gr_rdb_load_aside(gr_rdb_target_t *target, const char *path, gr_rdb_stats_t *stats, char *error, size_t error_size);
void gr_rdb_target_free_libraries(gr_rdb_target_t *target);

/* Write every database as an RDB version 10 file (temp file, fsync, rename). Arrays have no
 * Redis form: each is skipped and counted (stats->keys_skipped), as are hash field TTLs.
 * 0, or -1 with error set. */
int gr_rdb_save(gr_server_t *db, const char *path, gr_rdb_stats_t *stats, char *error, size_t error_size);
/* The same RDB written to an open descriptor as it is made (blocking writes, no fsync, the
 * descriptor left open): a diskless replication sync's pipe (server/primary.c). */
int gr_rdb_save_fd(gr_server_t *db, int fd, gr_rdb_stats_t *stats, char *error, size_t error_size);

/* ---- one value: DUMP and RESTORE in Redis's payload format ----
 * A Redis DUMP payload is the value's RDB type byte and its RDB encoding (no key), then the RDB
 * version as a u16 LE and a CRC-64/Jones of every byte before it, LE. */

/* Write the value (goblin type id gtype) as type byte + RDB body into w, and the RDB version its
 * trailer should carry into *version (10: redis-server 7.0 reads it). Goblin's compact
 * encodings Redis 7.0 also has go as Redis writes them (listpack hash and sorted set, intset),
 * others in their plain forms. 0 written; 1 no RDB 10 form (arrays; a hash with field TTLs):
 * w is untouched and the caller uses goblin's own payload; -1 out of memory. */
int gr_rdb_dump_value(uint8_t gtype, const void *value, gr_snapshot_writer_t *w, int *version);

/* Whether RESTORE reads a Redis payload of this RDB version: Redis's 1..12 and Valkey 9's 80,
 * every version rdb_load.c reads. */
int gr_rdb_dump_version_readable(int version);

/* Decode a Redis DUMP payload's body (data, length: type byte + value, the trailer already
 * checked and cut off) of RDB version `version` into a new value of goblin type *gtype,
 * shaped by db's settings. NULL with *status one of: */
enum { GR_RDB_VALUE_OK = 0, GR_RDB_VALUE_BAD = 1, GR_RDB_VALUE_MODULE = 2, GR_RDB_VALUE_OOM = 3 };
void *gr_rdb_restore_value(gr_server_t *db, int version, const uint8_t *data, size_t length, uint8_t *gtype,
                           int *status);

#endif
