/* keyspace.h — the key table: binary-safe keys to typed values, after Redis's dict.
 *
 * The implementation is keyspace.c. The keyspace does not know what values are: it stores
 * a type byte and a pointer, and frees values through the callback given to gr_ks_new
 * (db.c passes gr_free_value). The command layer over it is cmd_keys.c; the glob matcher
 * for KEYS and SCAN MATCH is glob.h.
 *
 * Layout. Two power-of-two tables of bucket pointers; each bucket is a chain of entries,
 * newest first. table[1] exists only while the table is being resized:
 *
 *   gr_keyspace_t
 *   +-------------+     +----+----+----+----+
 *   | table[0] ---+---->| b0 | b1 | b2 | b3 |        2^n bucket pointers
 *   | table[1]    |     +----+-+--+----+----+
 *   | rehash_index|            |
 *   | seed, stats |            v
 *   +-------------+         entry --> entry --> NULL
 *
 * One entry is one allocation, the key bytes inline at its end (no NUL terminator):
 *
 *   0      8       16             24          32           36     37
 *   +------+-------+--------------+-----------+------------+------+-----------------+
 *   | next | value | expire_at_ms | access_ms | key_length | type | key bytes ...   |
 *   +------+-------+--------------+-----------+------------+------+-----------------+
 *
 * so with glibc a key of up to 3 bytes fits a 40-byte allocation, up to 19 bytes a 56-byte one.
 *
 * access_ms is the caller's 64 bits of access metadata; the server (exec/evict.h) packs Redis's
 * LRU clock and LFU counter into it, so eviction adds no byte per key:
 *
 *   63                                24 23               8 7         0
 *   +-----------------------------------+------------------+-----------+
 *   | last access, unix ms mod 2^40     | LFU decrement    | LFU log   |
 *   | (LRU clock: ~34.8 years to wrap)  | time, minutes    | counter   |
 *   |                                   | mod 2^16         | (0..255)  |
 *   +-----------------------------------+------------------+-----------+
 *
 * The keyspace does not read these bits: it writes the stamp set with gr_ks_set_clock into a
 * new entry, and into an entry whose value is replaced or renamed (keeping the bits of the
 * mask set with gr_ks_set_keep_bits: the LFU counter under an LFU policy, as Redis's
 * dbOverwrite keeps the old object's counter).
 *
 * Hashing: SipHash-1-2 keyed from the seed given to gr_ks_new (pass a random one, e.g.
 * from os.urandom, so that clients cannot choose colliding keys; a fixed seed gives a
 * reproducible table order, which the tests use).
 *
 * Resizing is incremental, so no command pays for a whole table. The table grows (to the
 * next power of two above the key count, so it doubles) when keys == buckets, and shrinks
 * (to the next power of two at or above the key count, never below GR_KS_MIN_BUCKETS)
 * when keys < buckets / 8. A resize has two phases, each advanced by one step per
 * find/add/delete/unlink/rename/random call (and by gr_ks_rehash, for a server's idle
 * time): first the new bucket array is zeroed GR_KS_ZERO_CHUNK buckets per step (a large
 * memset, like a full rehash, would stall one command), while table[0] alone serves;
 * then one bucket chain moves per step (skipping at most 10 empty buckets), new keys go to
 * table[1], and lookups search both. Moving relinks entries; it never reallocates them, so
 * a gr_ks_entry_t pointer stays valid until its key is deleted, unlinked or renamed away,
 * or the keyspace is cleared. Allocation failure while starting a resize is not an error:
 * the table keeps its size and the next operation tries again.
 *
 * SCAN is Redis's reverse-binary cursor (dictScan): the cursor's bits are incremented from
 * the top, so that when the table doubles or halves between calls the buckets already
 * visited map onto buckets the cursor has already passed. Every key present for the whole
 * scan is visited at least once; a key may be visited twice if the table shrank.
 *
 * Time: the keyspace knows no clock of its own. gr_ks_set_clock gives it the stamp of "now"
 * (the server sets it once per command, packed as above); gr_ks_add, gr_ks_replace_value,
 * gr_ks_rename and gr_ks_touch write it into access_ms (the last three keeping the
 * gr_ks_set_keep_bits bits). gr_ks_find does not touch, so OBJECT IDLETIME can read
 * access_ms through it; a lookup that counts as an access (gr_db_lookup) updates it.
 *
 * Single-threaded, like the rest of the server. Callbacks (the value destructor and the
 * visitors) must not add, delete, unlink, rename or clear; during gr_ks_iterate and
 * gr_ks_scan resizing is paused, so a visitor may call gr_ks_find and gr_ks_touch.
 */
#ifndef GR_KEYSPACE_H
#define GR_KEYSPACE_H

#include <stddef.h>
#include <stdint.h>

/* cffi-cdef-begin */
#define GR_KS_MIN_BUCKETS 4
#define GR_KS_ZERO_CHUNK 4096

/* One key. type, value and access_ms belong to the caller (write them freely; the
 * keyspace never looks at value except to hand it to the destructor). next, key and
 * key_length are the keyspace's. expire_at_ms is read-only: change it with
 * gr_ks_set_expire, which keeps gr_ks_expires_count right. */
typedef struct gr_ks_entry {
    struct gr_ks_entry *next;   /* bucket chain */
    void *value;
    int64_t expire_at_ms;       /* unix ms; -1: no expire */
    uint64_t access_ms;         /* access metadata (LRU clock, LFU counter): see the layout above */
    uint32_t key_length;
    uint8_t type;               /* GR_TYPE_* (db.h); opaque here */
    uint8_t key[];
} gr_ks_entry_t;

typedef struct gr_keyspace gr_keyspace_t;

/* Frees one value when its key is deleted, overwritten by RENAME, or cleared. May be NULL
 * (values are then never freed by the keyspace). Must not call back into the keyspace. */
typedef void (*gr_ks_value_free_t)(uint8_t type, void *value, void *context);
/* Visitors for gr_ks_scan and gr_ks_iterate (nonzero from the latter stops it). */
typedef void (*gr_ks_scan_visit_t)(void *context, gr_ks_entry_t *entry);
typedef int (*gr_ks_iterate_visit_t)(void *context, gr_ks_entry_t *entry);

/* Called by gr_ks_add after it adds key, with the keyspace's context (keyspace
 * notifications' "new" event). Must not change the keyspace. */
typedef void (*gr_ks_add_observer_t)(void *context, gr_keyspace_t *ks, const uint8_t *key, size_t length);

/* Lifecycle */
/* An empty keyspace (no table is allocated until the first key); NULL on OOM. */
gr_keyspace_t *gr_ks_new(gr_ks_value_free_t free_value, void *context, uint64_t seed);
/* Frees every entry (values through the callback), the tables and the keyspace. NULL ok. */
void gr_ks_free(gr_keyspace_t *ks);
/* Set (or clear, with NULL) the observer of added keys. None by default. */
void gr_ks_set_add_observer(gr_keyspace_t *ks, gr_ks_add_observer_t observer);
/* Set (or clear) the observer gr_ks_delete calls with the key it deleted, after freeing its
 * value (the blocking layer's deleted-key signal). Must not change the keyspace. */
void gr_ks_set_delete_observer(gr_keyspace_t *ks, gr_ks_add_observer_t observer);
/* The stamp ("now") written into access_ms; set it before each command. Starts at 0. */
void gr_ks_set_clock(gr_keyspace_t *ks, uint64_t now_ms);
/* Bits of access_ms that replace_value, rename and touch keep from the entry (the rest come
 * from the clock). 0 by default: the whole stamp is written. */
void gr_ks_set_keep_bits(gr_keyspace_t *ks, uint64_t mask);

/* Access */
/* The entry for key, or NULL. Does not touch access_ms. */
gr_ks_entry_t *gr_ks_find(gr_keyspace_t *ks, const uint8_t *key, size_t length);
/* Bulk loads: start fetching the bucket key would be found in or added to, so that the miss
 * overlaps with building its value (a hint: nothing changes). */
void gr_ks_prefetch(const gr_keyspace_t *ks, const uint8_t *key, size_t length);
/* Bulk loads (an RDB file's RESIZEDB hint): an empty keyspace sized for `count` keys at once,
 * so that no resize runs while they are added. 0, or -1 out of memory (nothing changed). */
int gr_ks_reserve(gr_keyspace_t *ks, size_t count);
/* Adds key, which must not exist (check with gr_ks_find: a duplicate is not detected).
 * The entry has no expire and access_ms = the clock. NULL on OOM, or for a key longer than
 * UINT32_MAX bytes; nothing changes then, and value is not freed. */
gr_ks_entry_t *gr_ks_add(gr_keyspace_t *ks, const uint8_t *key, size_t length, uint8_t type, void *value);
/* Redis's dbOverwrite: entry's value becomes value of type (the old one freed through the
 * callback), its expire is removed and access_ms becomes the clock; the key stays where it is
 * (no add observer call: the key is not new). */
void gr_ks_replace_value(gr_keyspace_t *ks, gr_ks_entry_t *entry, uint8_t type, void *value);
/* Deletes key, freeing its value through the callback: 1 deleted, 0 absent. */
int gr_ks_delete(gr_keyspace_t *ks, const uint8_t *key, size_t length);
/* Removes key without freeing anything and returns its entry (NULL: absent). The caller
 * owns it now: read it, then free it with gr_ks_entry_free (it cannot be re-added). */
gr_ks_entry_t *gr_ks_unlink(gr_keyspace_t *ks, const uint8_t *key, size_t length);
/* Frees an entry from gr_ks_unlink, and its value through the callback if free_value. */
void gr_ks_entry_free(gr_keyspace_t *ks, gr_ks_entry_t *entry, int free_value);
/* Redis RENAME: from's value, type and expire move to the key to, overwriting (and
 * freeing the value of) an existing to, whose own expire is dropped; access_ms becomes the
 * clock. Entry pointers to from and to are invalid afterwards: look to up again.
 * 0 done (also when from == to and it exists), -1 from is missing, -2 OOM (nothing changed).
 * from and to may point into entries' own key bytes. */
int gr_ks_rename(gr_keyspace_t *ks, const uint8_t *from, size_t from_length,
                 const uint8_t *to, size_t to_length);
/* Sets (expire_at_ms >= 0) or removes (< 0) the expire of an entry in the keyspace. */
void gr_ks_set_expire(gr_keyspace_t *ks, gr_ks_entry_t *entry, int64_t expire_at_ms);
/* Stamps entry->access_ms with the clock. */
void gr_ks_touch(gr_keyspace_t *ks, gr_ks_entry_t *entry);

/* Queries */
size_t gr_ks_size(const gr_keyspace_t *ks);            /* keys (DBSIZE) */
size_t gr_ks_expires_count(const gr_keyspace_t *ks);   /* keys with an expire (INFO keyspace) */
/* Bytes the keyspace holds: itself, its bucket arrays and its entries (key bytes
 * included), as the allocator counts them; values are not included. */
size_t gr_ks_allocated_bytes(const gr_keyspace_t *ks);
/* Bytes of one entry's allocation, key included (MEMORY USAGE adds the value's bytes). */
size_t gr_ks_entry_bytes(const gr_ks_entry_t *entry);
/* Buckets allocated, both tables counted while resizing (0 for an empty keyspace). */
size_t gr_ks_bucket_count(const gr_keyspace_t *ks);
/* 1 while a resize is in progress (zeroing the new table or moving buckets into it). */
int gr_ks_is_rehashing(const gr_keyspace_t *ks);

/* Bulk */
/* FLUSHDB: frees every entry (values through the callback) and the tables; the keyspace
 * is as gr_ks_new left it. */
void gr_ks_clear(gr_keyspace_t *ks);
/* One SCAN step: visits the bucket the cursor names (and, while resizing, the buckets it
 * expands to in the larger table) and returns the next cursor, 0 when the scan is done.
 * Start with 0; the caller loops until it has COUNT keys. */
uint64_t gr_ks_scan(gr_keyspace_t *ks, uint64_t cursor, gr_ks_scan_visit_t visit, void *context);
/* A random entry (a random non-empty bucket, then a random entry of its chain), or NULL
 * when empty. Keys in longer chains are a little less likely; fine for expiry sampling. */
gr_ks_entry_t *gr_ks_random(gr_keyspace_t *ks);
/* Redis's dictGetSomeKeys, for eviction sampling: from a random bucket, walks consecutive
 * buckets (both tables while resizing) collecting up to count entries (only those with an
 * expire when only_volatile), visiting at most max_buckets buckets; returns how many it
 * wrote to out. Entries are valid until the keyspace next changes. */
size_t gr_ks_sample(gr_keyspace_t *ks, gr_ks_entry_t **out, size_t count, int only_volatile, size_t max_buckets);
/* Visits every entry once (KEYS), until visit returns nonzero. */
void gr_ks_iterate(gr_keyspace_t *ks, gr_ks_iterate_visit_t visit, void *context);
/* Advances a resize by up to steps steps (a server's idle time, like Redis's
 * databasesCron); returns 1 while a resize is still in progress. */
int gr_ks_rehash(gr_keyspace_t *ks, size_t steps);
/* cffi-cdef-end */

#endif
