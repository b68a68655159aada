/* array_rt.h — the RT ("real-time") sparse-array engine: predictable mutations first, memory
 * second. The implementation is array_rt.c; engines/array/array.h wraps it (and the Classic
 * engine) behind one ops table, and commands/cmd_array_rt.c reaches it as GOBLIN.RT.<ARCMD>.
 *
 * Memory layout
 * -------------
 *   gr_art_t
 *   +--------------+    a radix directory of FIXED depth (chosen at creation, never rebuilt):
 *   | root    -----+--> node (256 children, 8 index bits each level)
 *   | levels       |      +----------------+--------------------------+
 *   | max_index    |      | occupied[4]    | child[256]               |  occupied bit = the
 *   | arena chunks |      +----------------+-----|--------------------+  child's subtree holds
 *   | free[class]  |                             v                        a value
 *   +--------------+                  ... levels - 1 more node levels ...
 *                                                v
 *                        leaf (256 slots: index bits 0..7), fixed size, dense:
 *                        +-------------+-------+-------------------------------------+
 *                        | present[4]  | count | slot[256] = { u32 len, u32 offset8 } |
 *                        +-------------+-------+--------------|----------------------+
 *                                                             v
 *   value arena: chunk k holds arena bytes [B(2^k - 1), B(2^(k+1) - 1)), B = 4 KiB, so it
 *   grows 2x per chunk WITHOUT moving a byte (no realloc copy: a value's offset is forever).
 *   A value of length n takes cap(n) bytes: n rounded up to 8 up to 512, then the next power
 *   of two (0 bytes for the empty string). A freed value goes on its class's free list (the
 *   next offset in its first 8 bytes); a write takes its class's list first, else the bump
 *   pointer. An overwrite with a value of the same class reuses its bytes in place.
 *
 *   depth     An unreserved array covers the whole index space 0 .. 2^64-2: 7 node levels
 *             above the leaves. A reserved one covers 0 .. max_index with just enough levels.
 *             The depth never changes, so no mutation ever rebuilds or copies a directory.
 *   costs     Every get/set/delete walks `levels` nodes (a one-leaf cache skips the walk for
 *             repeated and sequential indexes) and touches one slot: O(1) worst case. A set
 *             allocates at most one leaf, `levels` nodes and one arena chunk (unreserved), or
 *             nothing at all (reserved). next/prev skip empty subtrees by their bitmaps.
 *   unreserved  Leaves and nodes are allocated on first use and freed when they empty.
 *   reserved  gr_art_reserve allocates ONE block holding every node, every leaf of 0 ..
 *             max_index and a value arena of value_bytes, prefaults it (every page written)
 *             and, with lock, mlocks it. After that nothing is ever allocated or freed until
 *             the array is: a write past max_index or past the byte budget fails (a bound
 *             error, the array unchanged) instead of growing.
 *
 * Values handed out point into the arena and stay valid until the next mutation. All memory
 * goes through core/alloc.h under the category given at creation. Errors are GR_ART_* codes
 * (negative); the array is unchanged after any error.
 */
#ifndef GR_ARRAY_RT_H
#define GR_ARRAY_RT_H

#include <stddef.h>
#include <stdint.h>

#include "core/alloc.h"
#include "core/snapshot_io.h"

enum {
    GR_ART_OK = 0,
    GR_ART_OOM = -1,           /* the allocator refused (unreserved arrays only) */
    GR_ART_INDEX_BOUND = -2,   /* index past the reserved max_index */
    GR_ART_BYTES_BOUND = -3,   /* the reserved value-byte budget cannot hold the value */
    GR_ART_LOCK_FAILED = -4,   /* mlock refused (errno in gr_art_last_errno) */
    GR_ART_TOO_LARGE = -5      /* a reservation larger than the machine's memory, or past 32 GiB of values */
};
/* The array ops table's reserve (array_rt_ops.c) returns this for a refused mlock, beside
 * array_engine.h's GR_ARRAY_E_* codes; gr_art_last_errno() says why. */
#define GR_ART_E_LOCK (-4)
#define GR_ART_MAX_INDEX 18446744073709551614ull   /* 2^64 - 2, as Redis's arrays */
#define GR_ART_MAX_VALUE_BYTES 34359738368ull      /* 32 GiB: arena offsets are u32 units of 8 */

typedef struct gr_art gr_art_t;

/* What ARINFO and INFO memory report about one RT array. */
typedef struct gr_art_stats {
    uint64_t count;            /* set slots */
    uint64_t max_index;        /* the highest index the array can hold */
    uint32_t levels;           /* node levels above the leaves */
    uint32_t reserved;         /* 1 for gr_art_reserve's arrays */
    uint64_t leaves;           /* leaves allocated */
    uint64_t nodes;            /* directory nodes allocated */
    uint64_t value_bytes_live; /* sum of the set values' lengths */
    uint64_t arena_used;       /* arena bytes handed out (live + free-listed) */
    uint64_t arena_in_use;     /* arena bytes holding live values (their classes' capacity) */
    uint64_t arena_capacity;   /* arena bytes allocated (the budget when reserved) */
    uint64_t reserved_bytes;   /* the reserved block's size, 0 when unreserved */
    uint64_t locked_bytes;     /* bytes mlocked (page-rounded), 0 when not locked */
    uint64_t allocated_bytes;  /* everything the array holds, the struct included */
} gr_art_stats_t;

/* Lifecycle */
gr_art_t *gr_art_new(gr_mem_category_t category);   /* unreserved; NULL on OOM */
/* Reserved: 0 .. max_index and value_bytes of values, prefaulted, mlocked when lock != 0.
 * GR_ART_OK with *out set, or an error with nothing allocated. */
int gr_art_reserve(gr_mem_category_t category, uint64_t max_index, uint64_t value_bytes, int lock,
                   gr_art_t **out);
/* Reserve an existing array in place (GOBLIN.RT.ARRESERVE on a key that holds one): its values
 * are copied into a fresh reservation, which then replaces its contents. Any error (a value
 * outside the new bounds: GR_ART_INDEX_BOUND / GR_ART_BYTES_BOUND) leaves it unchanged. */
int gr_art_reserve_into(gr_art_t *a, uint64_t max_index, uint64_t value_bytes, int lock);
void gr_art_free(gr_art_t *a);
/* An equal array of the same kind (a reserved one re-reserved with the same bounds and lock);
 * NULL when it cannot be made. */
gr_art_t *gr_art_duplicate(const gr_art_t *a);
int gr_art_last_errno(void);   /* errno of the last GR_ART_LOCK_FAILED / GR_ART_OOM */

/* Access */
/* Store value at index; *created (may be NULL) = 1 when the slot was empty. */
int gr_art_set(gr_art_t *a, uint64_t index, const uint8_t *value, size_t length, int *created);
/* Whether a run of writes would pass every bound, without changing anything: writes are
 * (indexes[i], lengths[i]) in order, or, with indexes NULL, first_index + i. GR_ART_OK or the
 * bound error the run would hit (an unreserved array only checks the index range). */
int gr_art_check_writes(const gr_art_t *a, size_t n, const uint64_t *indexes, uint64_t first_index,
                        const size_t *lengths);
/* The same, with write i named by write_at(context, i, &index, &length). */
int gr_art_check_writes_by(const gr_art_t *a, size_t n, void (*write_at)(void *context, size_t i, uint64_t *index,
                           size_t *length), void *context);
/* 1 and the value when set, 0 when empty. */
int gr_art_get(const gr_art_t *a, uint64_t index, const uint8_t **value, size_t *length);
/* 1 when a value was removed. */
int gr_art_delete(gr_art_t *a, uint64_t index);
/* Removes every value in [first, last]; returns how many. */
uint64_t gr_art_delete_range(gr_art_t *a, uint64_t first, uint64_t last);

/* Queries */
uint64_t gr_art_count(const gr_art_t *a);
/* The first set index >= from (1), or 0 when there is none. */
int gr_art_next(const gr_art_t *a, uint64_t from, uint64_t *found);
/* The last set index <= at (1), or 0 when there is none. */
int gr_art_prev(const gr_art_t *a, uint64_t at, uint64_t *found);
size_t gr_art_allocated_bytes(const gr_art_t *a);
int gr_art_is_reserved(const gr_art_t *a);
uint64_t gr_art_max_index(const gr_art_t *a);
void gr_art_stats(const gr_art_t *a, gr_art_stats_t *out);
/* Every RT array's reserved and locked bytes together (INFO memory); process-wide. */
uint64_t gr_art_total_reserved_bytes(void);
uint64_t gr_art_total_locked_bytes(void);
uint64_t gr_art_total_reserved_used_bytes(void);   /* arena bytes live values hold in reserved arrays */
/* The process's VmLck (/proc/self/status) in bytes, or -1 when the kernel does not say. */
int64_t gr_art_process_locked_bytes(void);

/* Bulk: snapshots. The body: u8 kind (0 unreserved, 1 reserved), for reserved u64 max_index,
 * u64 value_bytes, u8 lock; then varint count and count x (varint index delta, bytes). */
int gr_art_save(const gr_art_t *a, gr_snapshot_writer_t *out);
/* NULL with the reader's error set on bad bytes, or none set on OOM / a failed reservation. */
gr_art_t *gr_art_load(gr_mem_category_t category, gr_snapshot_reader_t *in);

/* Debug: verify every invariant (counts, bitmaps, free lists against the arena); 0 when
 * sound, else a description of the first broken one. */
const char *gr_art_check(const gr_art_t *a);

#endif
