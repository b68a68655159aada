/* set.h — the set engine: an unordered collection of distinct byte strings, held in one of
 * three encodings chosen as Redis 7.2 chooses them. The implementation is set.c (with the
 * integer set in set_intset.c and the table in engines/table/); the command layer over it is
 * commands/cmd_set.c. The engine knows nothing of replies or keys; its thresholds come in a
 * gr_set_config_t (the server's set-max-* settings).
 *
 * Memory layout
 * -------------
 *     gr_set_t (one allocation)
 *     +----------+--------------------------------------------------+
 *     | encoding | intset: count, capacity, width, values ----------+--> sorted int16/32/64 array
 *     |          | compact: buffer, bytes, count, capacity ---------+--> packed entries
 *     |          | table: gr_table_t * ------------------------------+--> engines/table/
 *     +----------+--------------------------------------------------+
 *
 *   intset   ("intset")    every member is an integer in Redis's canonical text (no leading
 *                          zeros, no '+', fits int64); set_intset.h, binary search.
 *   compact  ("listpack")  one buffer of entries in insertion order, searched linearly:
 *
 *       +-----------------------+-----------------------+-----+---------+
 *       | len : varint | bytes  | len : varint | bytes  | ... | unused  |
 *       +-----------------------+-----------------------+-----+---------+
 *       a 16-byte member costs 17 bytes; removal is a memmove.
 *
 *   table    ("hashtable") engines/table/'s gr_table of keys without values: inline entries,
 *                          incremental rehash, Redis's SCAN guarantee.
 *
 * Conversions (Redis 7.2's t_set.c, one way only, never back):
 *   new set: intset if its first member is an integer and the size hint is at most
 *            max_intset_entries; else compact if the hint is at most max_compact_entries;
 *            else a table reserved for the hint.
 *   intset -> table    when it passes max_intset_entries;
 *   intset -> compact  when a non-integer arrives, if the intset has fewer than
 *                      max_compact_entries members, the new member is at most
 *                      max_compact_value bytes and so is every integer's text; else -> table;
 *   compact -> table   when an add would pass max_compact_entries or brings a member longer
 *                      than max_compact_value.
 *
 * Member pointers handed out (iteration, random) stay valid until the next write to the set;
 * an intset member is written as text into the gr_set_member_t itself.
 */
#ifndef GR_SET_H
#define GR_SET_H

#include <stddef.h>
#include <stdint.h>

#include "core/alloc.h"
#include "engines/set/set_intset.h"
#include "engines/table/table.h"

/* The allocator category sets count under (GOBLIN.MEMORY's "set" row). */
#define GR_MEM_SET ((gr_mem_category_t)(GR_MEM_FIRST_FREE + 0))

typedef enum gr_set_encoding { GR_SET_INTSET = 0, GR_SET_COMPACT = 1, GR_SET_TABLE = 2 } gr_set_encoding_t;

/* Redis's set-max-intset-entries, set-max-listpack-entries, set-max-listpack-value. */
typedef struct gr_set_config {
    size_t max_intset_entries;
    size_t max_compact_entries;
    size_t max_compact_value;
} gr_set_config_t;

typedef struct gr_set_compact {
    uint8_t *buffer;     /* NULL while never grown */
    uint32_t bytes;      /* bytes of entries */
    uint32_t count;
    uint32_t capacity;
} gr_set_compact_t;

typedef struct gr_set {
    uint8_t encoding;    /* gr_set_encoding_t */
    union {
        gr_intset_t intset;
        gr_set_compact_t compact;
        gr_table_t *table;
    } as;
} gr_set_t;

/* One member: data/length, valid until the next write to its set. For an intset member,
 * data points at text, so copy the bytes (not the struct) to keep them. */
typedef struct gr_set_member {
    const uint8_t *data;
    size_t length;
    char text[24];
} gr_set_member_t;

/* A cursor over every member once, in the encoding's order (ascending for an intset,
 * insertion order for compact). Invalidated by any write to the set. */
typedef struct gr_set_iter {
    const gr_set_t *set;
    size_t index;        /* intset and compact: members returned */
    size_t offset;       /* compact: where the next entry starts */
    gr_table_iter_t table;
} gr_set_iter_t;

/* ---- Lifecycle ---- */
/* An empty set of that encoding (NULL on OOM). */
gr_set_t *gr_set_new(gr_set_encoding_t encoding);
/* An empty set for a first member and an expected size, as Redis's setTypeCreate. */
gr_set_t *gr_set_new_for(const gr_set_config_t *config, const uint8_t *first, size_t first_length, size_t size_hint);
void gr_set_free(gr_set_t *set);
/* An equal set in the same encoding (COPY), or NULL on OOM. */
gr_set_t *gr_set_duplicate(const gr_set_t *set);

/* ---- Access ---- */
/* 1 added, 0 already present, -1 out of memory (the set still holds what it held). Converts
 * per the rules above. data must not point into this set. */
int gr_set_add(gr_set_t *set, const gr_set_config_t *config, const uint8_t *data, size_t length);
/* Bulk loads: `count` members that must all be new; a set in its table encoding takes them in
 * one batched insert (engines/table's gr_table_add_many), others one by one as gr_set_add.
 * 0, -1 out of memory, -2 a member repeated (the members before it stay added). */
int gr_set_add_many(gr_set_t *set, const gr_set_config_t *config, const gr_bytes_t *members, size_t count);
/* 1 removed, 0 absent. data must not point into this set. Never converts. */
int gr_set_remove(gr_set_t *set, const uint8_t *data, size_t length);
int gr_set_contains(const gr_set_t *set, const uint8_t *data, size_t length);
/* A uniformly random member from a random 64-bit number: 1, or 0 when empty. */
int gr_set_random(const gr_set_t *set, uint64_t random, gr_set_member_t *member);

/* ---- Queries ---- */
size_t gr_set_count(const gr_set_t *set);
gr_set_encoding_t gr_set_encoding(const gr_set_t *set);
const char *gr_set_encoding_name(const gr_set_t *set);   /* OBJECT ENCODING's word */
size_t gr_set_allocated_bytes(const gr_set_t *set);      /* everything it holds, the struct included */
int gr_set_check(const gr_set_t *set);                   /* 0 when every invariant holds */

/* ---- Bulk ---- */
void gr_set_iter_start(const gr_set_t *set, gr_set_iter_t *iter);
int gr_set_iter_next(gr_set_iter_t *iter, gr_set_member_t *member);   /* 1 with a member, 0 at the end */
/* SSCAN: visits some members and returns the next cursor, 0 when done. An intset or compact
 * set is visited whole in one call (cursor 0), as Redis does; a table follows gr_table_scan
 * (every member present for the whole scan is visited at least once). */
typedef void (*gr_set_visit_t)(void *context, const uint8_t *data, size_t length);
uint64_t gr_set_scan(const gr_set_t *set, uint64_t cursor, size_t count, gr_set_visit_t visit, void *context);

#endif
