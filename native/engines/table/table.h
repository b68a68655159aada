/* table.h — the table engine: a hash table of binary-safe byte-string keys, each with an
 * optional byte-string value, built for memory. Sets (engines/set/, "hashtable" encoding)
 * and hashes (engines/hash/) share it. The implementation is table.c; its tests are
 * native/tests/test_table.c (a model test against a reference, SCAN during resizes, and a
 * bytes-per-entry / ns-per-op report with `test_table --measure N`).
 *
 * Memory layout
 * -------------
 * Entries live in an arena of blocks; an open-addressing index finds them. Neither holds a
 * per-entry heap object or pointer: an entry is its bytes in a block, plus 5 bytes in the
 * index (a tag byte and a 32-bit reference).
 *
 *   gr_table_t
 *   +-------------+     blocks[]: numbered, NULL = a free number (reused by new blocks)
 *   | blocks -----+---->+----+----+----+----+----+
 *   | index       |     | b0 | b1 |NULL| b3 | b4 |       b4: the append block
 *   | old index   |     +-+--+----+----+----+----+
 *   | count ...   |       v
 *   +-------------+     block: one allocation, header + up to GR_TABLE_BLOCK_BYTES of entries
 *                       +------+------+------------------------------------------+
 *                       | used | dead | entry entry entry ...                      |
 *                       +------+------+------------------------------------------+
 *                       0      4      8
 *
 *   entry   [ varint: key_length << 1 | dead ][ varint: value_length (tables with values) ]
 *           [ key bytes ][ value bytes ]
 *           A 16-byte key costs 17 bytes; a 16-byte key with a 16-byte value 34.
 *
 *   index   capacity slots of 5 bytes, [tag][ref] (any capacity, not only powers of two):
 *             tag      0 empty, 1 tombstone (only in an old index being emptied),
 *                      occupied: 0x80 | min(displacement from home, 7) << 4 | 4 hash bits
 *             ref      block number << 12 | byte offset of the entry in its block's data
 *           An entry's home slot is (hash >> 32) * capacity >> 32; linear probing from
 *           there; a lookup compares the key only where the whole tag matches (same hash
 *           bits, same displacement), and deletion knows most homes from the tag alone.
 *
 * Blocks. New entries are appended to the append block; when it is full a new one is taken
 * (the lowest free number, or the next) and the old one is reallocated down to its used
 * bytes. An entry bigger than a block gets a block of its own, of its exact size. Deleting
 * an entry sets its dead bit; an empty block is freed at once; once half a block's bytes
 * are dead, its live entries move to the append block (their refs are updated) and it is
 * freed; the append block itself is compacted in place. So at least half of every block's
 * bytes are live, the space of deleted entries goes back to the allocator, and blocks[]
 * shrinks with the table. A value replaced by one of the same encoded size is overwritten
 * in place; otherwise the entry is appended anew and the old one dies.
 *
 * Index. Resizes keep the load between 0.25 and 0.8 (a resize targets 0.5), and are
 * incremental: the new index is allocated, new entries go to it, and each write moves up
 * to GR_TABLE_MIGRATE_STEP entries from the old one (recomputing their hashes from the
 * arena); lookups probe both until the old one is empty, then it is freed. No operation
 * pays for a whole-table rehash, nor for touching the new index: it comes zeroed from calloc
 * (fresh pages past the allocator's mmap threshold), faulted in page by page as it is used. Deletion in the current index is backward-shift (Knuth's
 * algorithm R for linear probing): no tombstones. In an old index still being emptied a
 * deleted slot becomes a tombstone, which goes away with the old index.
 *
 * SCAN. The cursor is a position in hash space: the high 32 bits of an entry's hash. A call
 * visits every entry whose position lies in [cursor, next) and returns next (0 after the
 * last range), choosing next so that about `count` entries fall in the range. Because home
 * slots are monotone in the hash, the entries of a range sit in the runs of occupied slots
 * from the range's first home slot to the first empty slot after its last; both indexes are
 * walked while resizing. Positions never change, so an entry present for the whole scan is
 * visited exactly once, across growth, shrink, rehash, compaction and value changes (an
 * entry added or deleted meanwhile may or may not be). Each visited slot costs a hash.
 *
 * Random. A uniformly random occupied index slot (across both indexes while resizing),
 * drawn by rejection from a generator seeded with the caller's number: uniform over
 * entries, O(1) expected (the load stays >= 0.25 outside a resize).
 *
 * Hashing: SipHash-1-2 (core/siphash.h) keyed by gr_table_set_hash_seed: process-wide, and
 * fixed by its first call or the first table made, whichever comes first (later calls are
 * ignored, since a table's entries sit where their hashes put them). gr_db_new passes its
 * seed; a process without a db uses a built-in key.
 *
 * Limits: 2^20 block numbers, so about 4 GiB of entry bytes per table (126M entries of a
 * 16-byte field and value); beyond that a write fails as out of memory, as it does for one
 * entry (key, value, lengths) over UINT32_MAX - 64 bytes.
 *
 * Measured (test_table --measure 1000000): 23.7 allocated bytes per entry for a 16-byte
 * key alone, 40.9 for a 16-byte key with a 16-byte value; the keyspace's chained table,
 * Redis's dict layout, takes 64.4 for the key alone. During a resize both indexes are
 * held: up to 5 x (1.25 + 2) bytes per entry of index instead of 5 / load.
 *
 * Single-threaded. Returned gr_bytes_t point into blocks and stay valid until the next
 * write (set, add, delete, reserve) to the table. A key or value passed in may point into
 * the table itself (gr_table_delete of a key from gr_table_random, as SPOP does); it is
 * read before anything moves, and is invalid once the call returns. No writes during an
 * iteration or a scan call.
 */
#ifndef GR_TABLE_H
#define GR_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "core/alloc.h"
#include "core/bytes.h"

#define GR_TABLE_BLOCK_BYTES 4096   /* entry bytes per block (a bigger entry: own block) */
#define GR_TABLE_MIGRATE_STEP 16    /* entries moved to the new index per write */

typedef struct gr_table gr_table_t;

/* Lifecycle */
/* An empty table (nothing but the struct is allocated until the first entry); NULL on OOM.
 * with_values: 1 for key -> value entries (hashes), 0 for keys alone (sets). Every byte
 * is allocated under category. */
gr_table_t *gr_table_new(int with_values, gr_mem_category_t category);
void gr_table_free(gr_table_t *t);   /* NULL ok */
/* A deep copy (same entries, same iteration order); NULL on OOM. */
gr_table_t *gr_table_duplicate(const gr_table_t *t);
/* Sizes the index for `entries` entries at once (bulk loads: RESTORE, COPY, SINTERSTORE);
 * optional, and a no-op when already big enough or on OOM. */
void gr_table_reserve(gr_table_t *t, size_t entries);
/* The key for SipHash (process-wide; only the first call before any table counts). */
void gr_table_set_hash_seed(uint64_t k0, uint64_t k1);
/* The tables' keyed hash of a key, for an engine that keeps its own index under the same
 * process-wide key (engines/zset's member index). Fixes the key, as a first table does. */
uint64_t gr_table_hash(const uint8_t *key, size_t length);

/* Access */
/* 1 found (value filled in if not NULL; an empty value for a table without values), 0 absent. */
int gr_table_get(const gr_table_t *t, const uint8_t *key, size_t key_length, gr_bytes_t *value);
/* Sets key's value: 1 added, 0 replaced, -1 OOM (nothing changed). In a table without
 * values the value is ignored (as gr_table_add). */
int gr_table_set(gr_table_t *t, const uint8_t *key, size_t key_length,
                 const uint8_t *value, size_t value_length);
/* Sets: 1 added, 0 already present, -1 OOM (nothing changed). In a table with values the
 * new entry's value is empty. */
int gr_table_add(gr_table_t *t, const uint8_t *key, size_t key_length);
/* 1 removed, 0 absent. */
int gr_table_delete(gr_table_t *t, const uint8_t *key, size_t key_length);

/* Queries */
size_t gr_table_count(const gr_table_t *t);
/* Every byte the table holds from the allocator (its struct, blocks and index). */
size_t gr_table_allocated_bytes(const gr_table_t *t);
/* Redis's SCAN guarantee, and more (see SCAN above): start with cursor 0, pass back what it
 * returns until that is 0. About `count` entries per call (at least one range). The visitor
 * must not write to the table. */
typedef void (*gr_table_visit_t)(void *context, gr_bytes_t key, gr_bytes_t value);
uint64_t gr_table_scan(const gr_table_t *t, uint64_t cursor, size_t count,
                       gr_table_visit_t visit, void *context);
/* A uniformly random entry (SRANDMEMBER, SPOP, HRANDFIELD) chosen by `random` (any 64-bit
 * number; different numbers give independent draws): 1, or 0 when the table is empty. */
int gr_table_random(const gr_table_t *t, uint64_t random, gr_bytes_t *key, gr_bytes_t *value);

/* Bulk: adds `count` entries that must all be new (snapshot loads, RESTORE): keys[i] with
 * values[i] (values NULL, or ignored, in a table without values). Hashes a batch ahead and
 * prefetches its index slots. The number added (count), -1 on OOM or -2 when a key is already
 * there (a repeated key); on failure the entries before it stay added. */
int gr_table_add_many(gr_table_t *t, const gr_bytes_t *keys, const gr_bytes_t *values, size_t count);

/* Bulk: iteration over all entries in block order (SMEMBERS, HGETALL, COPY, DUMP). */
typedef struct gr_table_iter {
    const gr_table_t *table;
    uint32_t block;    /* block number */
    uint32_t offset;   /* byte offset in the block's data */
} gr_table_iter_t;
void gr_table_iter_start(const gr_table_t *t, gr_table_iter_t *it);
/* 1 and the next entry, or 0 at the end. */
int gr_table_iter_next(gr_table_iter_t *it, gr_bytes_t *key, gr_bytes_t *value);

#endif
