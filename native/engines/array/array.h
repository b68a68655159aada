/* array.h — the ARRAY value the keyspace holds (type id GR_TYPE_ARRAY) and every function the
 * AR* commands (commands/cmd_array.c) call. The value is engine-neutral: array.c keeps the
 * append cursor, count and length and forwards storage to one engine's ops table
 * (array_engine.h: classic in array_classic.c, rt in array_rt.c).
 *
 *   gr_array_t
 *   +--------+------+--------+-------+--------+
 *   | engine | impl | cursor | count | length |     engine: its ops table, impl: its value
 *   +--------+------+--------+-------+--------+
 *
 * Semantics (Redis 8.8's, redis.io's arrays page and the 18 AR* pages; the command layer
 * enforces the argument rules, this layer the state rules):
 * - Indexes are unsigned 64-bit, 0 .. 2^64-2 (GR_ARRAY_INDEX_MAX); "-1", "abc" or 2^64-1 are
 *   refused with "ERR invalid array index" (ARSEEK alone accepts 2^64-1: the terminal cursor).
 *   A write whose last index would pass 2^64-2 fails whole with "ERR array index overflow".
 * - count (ARCOUNT) is the number of set slots; length (ARLEN) is the highest set index + 1;
 *   both 0 for a missing key. An empty string is a value (a set slot), not a hole.
 * - Deleting the last set slot (ARDEL, ARDELRANGE) deletes the key. A key is never empty —
 *   except an RT reservation (GOBLIN.RT.ARRESERVE; the engine's keeps_empty), which is a key
 *   from its reservation on and keeps its memory until the key is deleted.
 * - The append cursor ("insert_idx") is the index the last append wrote, or NONE: only
 *   ARINSERT and ARRING move it (and ARSEEK sets it); ARSET/ARMSET/ARDEL never do. ARINSERT
 *   writes at cursor+1 (0 when NONE) onwards, fails whole with "ERR insert index overflow"
 *   past 2^64-2, and replies the last index written. ARNEXT: 0 when NONE, nil when the
 *   cursor is 2^64-2 (nothing more can be appended), else cursor+1. ARSEEK idx: cursor =
 *   idx-1 (NONE for 0), 0 for a missing key. ARRING size v..: writes at (cursor+1) mod size
 *   per value after first re-packing the array when size shrinks below ARLEN (or grows after
 *   a wrap): the newest contiguous run of up to size set slots, walking back from the cursor,
 *   becomes indexes 0.. with the cursor on its newest.
 * - ARGETRANGE and ARLASTITEMS walk positions (holes are nil). ARGETRANGE refuses spans over
 *   1,000,000 ("ERR range exceeds maximum of 1000000 items"); ARLASTITEMS clamps COUNT to the
 *   number of set slots (as Redis's t_array.c does), so it needs no cap.
 *   ARSCAN, ARGREP, AROP visit set slots only: their cost follows the set slots, not the span.
 *   A range given high-to-low is walked high-to-low.
 * - The engine is chosen when an array is created (--array-implementation, or a GOBLIN.RT.
 *   command) and kept for the array's life, through COPY, RENAME, DUMP/RESTORE.
 */
#ifndef GR_ARRAY_H
#define GR_ARRAY_H

#include <stddef.h>
#include <stdint.h>

#include "core/snapshot_io.h"
#include "engines/array/array_engine.h"

#define GR_ARRAY_CURSOR_NONE UINT64_MAX     /* no append yet (or ARSEEK 0) */
#define GR_ARRAY_MAX_REPLY_ITEMS 1000000    /* ARGETRANGE span limit */

typedef struct gr_array {
    const gr_array_engine_t *engine;
    void *impl;
    uint64_t cursor;    /* index of the last append, or GR_ARRAY_CURSOR_NONE */
    uint64_t count;     /* set slots */
    uint64_t length;    /* highest set index + 1; 0 when empty */
} gr_array_t;

/* ---- Engines ---- */
/* Register an engine's ops table (its kind must be free): 0, or -1. Classic is built in. */
int gr_array_register_engine(const gr_array_engine_t *engine);
/* The table of a kind, or NULL when no such engine is linked. */
const gr_array_engine_t *gr_array_engine_of_kind(uint8_t kind);
/* The table named ("classic", "rt"; case-insensitive), or NULL. */
const gr_array_engine_t *gr_array_engine_named(const char *name, size_t length);

/* ---- Lifecycle ---- */
gr_array_t *gr_array_new(uint8_t kind);            /* empty; NULL on OOM or an unknown kind */
void gr_array_free(gr_array_t *array);
gr_array_t *gr_array_duplicate(const gr_array_t *array);   /* same engine, cursor, slots; NULL on OOM */

/* ---- Access ---- */
/* index <= GR_ARRAY_INDEX_MAX. 1 the slot was empty, 0 overwritten, negative GR_ARRAY_E_*. */
int gr_array_set(gr_array_t *array, uint64_t index, const uint8_t *data, size_t length);
/* 1 and the value (valid until the next mutation; may point into scratch), 0 for a hole. */
int gr_array_get(const gr_array_t *array, uint64_t index, const uint8_t **data, size_t *length,
                 uint8_t scratch[GR_ARRAY_SCRATCH_BYTES]);
int gr_array_delete(gr_array_t *array, uint64_t index);            /* 1 deleted, 0 hole */
uint64_t gr_array_delete_range(gr_array_t *array, uint64_t lo, uint64_t hi);   /* lo <= hi */

/* ---- Queries ---- */
static inline uint64_t gr_array_count(const gr_array_t *array) { return array->count; }
static inline uint64_t gr_array_length(const gr_array_t *array) { return array->length; }
int gr_array_next_at_or_after(const gr_array_t *array, uint64_t index, uint64_t *found);
int gr_array_last_before(const gr_array_t *array, uint64_t index, uint64_t *found);
size_t gr_array_allocated_bytes(const gr_array_t *array);   /* gr_array_t and the engine's */
const char *gr_array_encoding_name(const gr_array_t *array);
static inline uint8_t gr_array_engine_kind(const gr_array_t *array) { return array->engine->kind; }

/* Visit the set slots of [lo, hi] in index order (reverse: hi down to lo), stopping when
 * visit returns nonzero. The array must not change meanwhile. Returns how many were visited. */
typedef int (*gr_array_visit_t)(void *context, uint64_t index, const uint8_t *data, size_t length);
uint64_t gr_array_visit(const gr_array_t *array, uint64_t lo, uint64_t hi, int reverse,
                        gr_array_visit_t visit, void *context);

/* ---- Bulk ---- */
/* The engine's reserve (array_engine.h): 0, or GR_ARRAY_E_UNSUPPORTED / _NOMEM / _BOUND. */
int gr_array_reserve(gr_array_t *array, uint64_t max_index, uint64_t value_bytes, int lock);
/* The engine's check_writes (array_engine.h): 0 (always, for an engine without bounds), or
 * GR_ARRAY_E_BOUND when one of the n writes would pass a bound. */
typedef void (*gr_array_write_at_t)(void *context, size_t i, uint64_t *index, size_t *length);
int gr_array_check_writes(const gr_array_t *array, size_t n, gr_array_write_at_t write_at, void *context);
/* The engine's keeps_empty: 1 when this array stays a key with no set slot (RT reservations). */
int gr_array_keeps_empty(const gr_array_t *array);

/* ---- Snapshots (DUMP/RESTORE, snapshot files) ---- */
/* Header (engine kind, cursor + 1 or 0), then the engine's body. 0, or -1 (writer OOM). */
int gr_array_save(const gr_array_t *array, gr_snapshot_writer_t *out);
/* An equal array on the saved engine (an engine not linked fails), or NULL with the reader's
 * error set (none: out of memory). An empty array is refused. */
gr_array_t *gr_array_load(gr_snapshot_reader_t *in);
/* A body any engine may use: count, then per set slot its index delta and bytes. */
int gr_array_save_entries(const gr_array_engine_t *engine, const void *impl, gr_snapshot_writer_t *out);
void *gr_array_load_entries(const gr_array_engine_t *engine, gr_snapshot_reader_t *in);

#endif
