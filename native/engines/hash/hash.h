/* hash.h — the hash value: a map of byte-string fields to byte-string values, with optional
 * per-field expiry. The implementation is hash.c; the command layer over it is
 * commands/cmd_hash.c, and its row in the type registry is exec/value_type.c (GR_TYPE_HASH).
 *
 * Memory layout
 * -------------
 *
 *   gr_hash_t (40 bytes)
 *   +-----------------------------+--------------+---------+
 *   | fields: compact (16 bytes)  | fields.table | ttl     |
 *   +-----------------------------+--------------+---------+
 *         |                              |            |
 *         v                              v            v  NULL unless some field has a TTL
 *   hash_compact.h's packed pairs   engines/table's    gr_hash_ttl: a second map, field ->
 *   (table == NULL: "listpack")     open-addressing    8-byte expiry (unix ms, little endian),
 *                                   table ("hashtable") in the same two encodings, and a
 *                                                      min-heap of (expiry, field copy) over it
 *
 * A hash starts compact and moves to the table, once, when it would hold more than
 * limits->max_compact_entries fields or a field or value longer than
 * limits->max_compact_value bytes (Redis's hash-max-listpack-entries / -value, passed in by
 * the command layer); it never moves back, as in Redis. The table's incremental rehash means
 * no single operation pays for a whole-table move.
 *
 * Field expiry costs nothing for a hash without TTLs (ttl is NULL: one branch). With TTLs,
 * gr_hash_expire_due removes every field whose time has passed: the command layer calls it
 * before it reads or writes a hash (lazy expiry), and the server's cron for the hashes it
 * visits (active expiry); it is one comparison when nothing is due and O(log n) per field
 * removed (the heap's items are validated against the map as they pop: an expiry replaced or
 * dropped leaves a stale item, and the heap is rebuilt once stale items outnumber live ones). Setting a field's value
 * drops its TTL unless asked to keep it (HINCRBY, HSETEX KEEPTTL), as in Redis.
 *
 * Pointers handed out (gr_hash_entry_t) point into the hash and stay valid until its next
 * mutation. Fields and values passed in must not point into the same hash.
 */
#ifndef GR_HASH_H
#define GR_HASH_H

#include <stddef.h>
#include <stdint.h>

#include "engines/hash/hash_compact.h"   /* GR_MEM_HASH */
#include "engines/table/table.h"

typedef struct gr_hash gr_hash_t;

/* When a compact hash moves to the table (the server's hash-max-listpack-* settings). */
typedef struct gr_hash_limits {
    int64_t max_compact_entries;   /* 128 */
    int64_t max_compact_value;     /* 64 */
} gr_hash_limits_t;

/* One field and its value, pointing into the hash. */
typedef struct gr_hash_entry {
    const uint8_t *field;
    size_t field_length;
    const uint8_t *value;
    size_t value_length;
} gr_hash_entry_t;

/* A cursor over every field (any order); invalidated by a mutation. */
typedef struct gr_hash_iter {
    const gr_hash_t *hash;
    uint32_t offset;          /* compact */
    gr_table_iter_t table;    /* table */
} gr_hash_iter_t;

typedef void (*gr_hash_visit_t)(void *context, const gr_hash_entry_t *entry);

/* ---- Lifecycle ---- */
gr_hash_t *gr_hash_new(void);                 /* empty, compact; NULL on OOM */
void gr_hash_free(gr_hash_t *hash);           /* NULL ok */
/* Bulk loads (snapshots, RESTORE): a hash about to receive `count` fields moves to its table
 * encoding at once when count passes limits' compact size, its index sized for them (no
 * conversion or resize on the way). 0, or -1 out of memory (nothing changed). */
int gr_hash_reserve(gr_hash_t *hash, size_t count, const gr_hash_limits_t *limits);
/* Bulk loads: `count` fields that must all be new (no TTLs), fields[i] -> values[i]; a hash in
 * its table encoding takes them in one batched insert (engines/table's gr_table_add_many).
 * 0, -1 out of memory, -2 a field repeated (the fields before it stay set). */
int gr_hash_add_many(gr_hash_t *hash, const gr_bytes_t *fields, const gr_bytes_t *values, size_t count,
                     const gr_hash_limits_t *limits);
gr_hash_t *gr_hash_duplicate(const gr_hash_t *hash);   /* fields, values and TTLs; NULL on OOM */

/* ---- Access ---- */
/* 1 found (*entry filled; entry may be NULL), 0 absent. */
int gr_hash_get(const gr_hash_t *hash, const uint8_t *field, size_t field_length, gr_hash_entry_t *entry);
/* 1 added, 0 replaced, -1 out of memory (unchanged). keep_ttl: a replaced field keeps its TTL. */
int gr_hash_set(gr_hash_t *hash, const uint8_t *field, size_t field_length, const uint8_t *value,
                size_t value_length, int keep_ttl, const gr_hash_limits_t *limits);
/* 1 removed (and its TTL), 0 absent. */
int gr_hash_delete(gr_hash_t *hash, const uint8_t *field, size_t field_length);

/* ---- Field expiry ---- */
/* The field's expiry in unix ms; -1 the field has none; -2 no such field. */
int64_t gr_hash_field_expire(const gr_hash_t *hash, const uint8_t *field, size_t field_length);
/* Give an existing field an expiry (unix ms >= 0): 0, or -1 out of memory / no such field. */
int gr_hash_set_field_expire(gr_hash_t *hash, const uint8_t *field, size_t field_length, int64_t at_ms,
                             const gr_hash_limits_t *limits);
/* Drop a field's expiry: 1 dropped, 0 it had none (or no such field). */
int gr_hash_persist_field(gr_hash_t *hash, const uint8_t *field, size_t field_length);
/* Remove every field whose expiry is at or before now_ms; returns how many. One comparison
 * when nothing is due. */
size_t gr_hash_expire_due(gr_hash_t *hash, int64_t now_ms);
/* The earliest field expiry, or INT64_MAX when no field has one. */
int64_t gr_hash_next_expire(const gr_hash_t *hash);
/* Hashes in this process that hold any field TTL (the cron skips its walk at 0). */
size_t gr_hash_volatile_hashes(void);

/* ---- Queries ---- */
size_t gr_hash_count(const gr_hash_t *hash);
size_t gr_hash_allocated_bytes(const gr_hash_t *hash);   /* everything, the struct included */
/* OBJECT ENCODING: "listpack", "listpackex" (compact with field TTLs) or "hashtable". */
const char *gr_hash_encoding_name(const gr_hash_t *hash);
int gr_hash_is_compact(const gr_hash_t *hash);

/* ---- Bulk ---- */
void gr_hash_iter_start(const gr_hash_t *hash, gr_hash_iter_t *iter);
int gr_hash_iter_next(gr_hash_iter_t *iter, gr_hash_entry_t *entry);   /* 1, or 0 at the end */
/* One HSCAN step from cursor (0 to start): visits about count fields (a compact hash: all of
 * them, and the cursor returned is 0), returns the next cursor, 0 when done. Redis's SCAN
 * guarantee: a field present for the whole scan is visited at least once. */
uint64_t gr_hash_scan(const gr_hash_t *hash, uint64_t cursor, size_t count, gr_hash_visit_t visit, void *context);
/* A uniformly random field (HRANDFIELD) from a random number: 1, or 0 when empty. */
int gr_hash_random(const gr_hash_t *hash, uint64_t random, gr_hash_entry_t *entry);

#endif
