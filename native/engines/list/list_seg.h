/* list_seg.h — the segmented list engine ("quicklist" in OBJECT ENCODING): values packed
 * varint-length-prefixed into leaves of bounded size, found through a directory of leaf
 * start positions. The implementation is list_seg.c; list.c wraps it together with the
 * compact encoding (list_compact.h) behind the gr_list_* API the command layer uses.
 *
 * Memory layout
 * -------------
 *   gr_lseg_t                 directory: one allocation, a deque of 16-byte slots
 *   +-------------+     +-------+------------+------------+-----+------------+-------+
 *   | slots  -----+---->| (gap) | start0 | * | start1 | * | ... | startN | * | (gap) |
 *   | first,count |     +-------+--------|---+------------+-----+------------+-------+
 *   | length ...  |                      v
 *   +-------------+      leaf: one allocation of leaf_bytes (a "plain" leaf: one value, exact size)
 *        +--------+-------------------+-----+---------------------------------+-----+
 *        | header | cp[0] .. cp[cap-1]| gap | [len][bytes][len][bytes] ...    | gap |
 *        +--------+-------------------+-----+---------------------------------+-----+
 *        0        24                        lo                                hi    size
 *
 *   entry     [ length : LEB128 varint, 7 bits a byte, 0x80 = more ][ value bytes ]
 *             A 16-byte value costs 17 bytes; there is no back length (see checkpoints).
 *   header    lo, hi (the entries' byte range), size, base, count, cp_count, cp_cap, flags.
 *   start     Each slot records the position of its leaf's first value in a virtual
 *             coordinate: index i is at virtual position slots[first].start + i, and lives
 *             in the last slot whose start is <= that (binary search, O(log leaves)). A head
 *             push decrements the first slot's start only, so it touches no other slot; a
 *             head pop or a delete from the head increments it. Inserts and deletes in the
 *             middle shift the starts of the slots after them: O(leaves), no leaf touched.
 *   gaps      A leaf's entries occupy [lo, hi) and may grow in both directions: a leaf made
 *             by a head push is filled from its end toward its front, one made by a tail
 *             push from its front toward its end; neither end push moves existing bytes.
 *             When one side runs out while the leaf is still at least 1/8 free, the entries
 *             are re-centred (one memmove, amortised over that 1/8); otherwise a new leaf is
 *             started. The directory deque grows the same way (1.5x, gap on the growing side).
 *   checkpoints  Entry i of a leaf has ordinal base+i; ordinals fall into groups of
 *             GR_LSEG_CHECKPOINT_EVERY (16). cp[k] is the uint16 byte offset of the first
 *             entry of the (k+1)-th group after the leaf's first one, so finding entry i is
 *             one table read and at most 15 varint skips. A head push decrements base (a
 *             new checkpoint is prepended once every 16 pushes), a tail push appends one
 *             every 16, so both end pushes stay O(1). Backward iteration re-scans one group
 *             forward from its checkpoint into a 16-slot stack in the iterator. The table's
 *             capacity is sized from the values' average size when a leaf is made and grows
 *             into the gap before lo.
 *   plain     A value whose entry is more than half a leaf's data space gets a leaf of its
 *             own, allocated to its exact size, into which nothing else is ever packed.
 *
 * Costs: get O(log leaves + 16); push and pop at either end O(1) amortised (a tail pop
 * skips up to 15 entries to find the new last one); set in place when the encoded size is
 * unchanged, otherwise a memmove within the leaf; insert/delete in the middle memmove within
 * one leaf, splitting it when full and merging neighbours left under 3/4 full together,
 * plus O(leaves) slot updates. Empty leaves are freed at once.
 *
 * Value pointers handed out point into leaf storage and stay valid until the next mutation;
 * iterators are invalidated by any mutation. Values passed in must not point into the same
 * list. All memory is allocated through alloc.h under GR_MEM_LIST.
 */
#ifndef GR_LIST_SEG_H
#define GR_LIST_SEG_H

#include <stddef.h>
#include <stdint.h>

#include "core/bytes.h"

#define GR_LSEG_CHECKPOINT_EVERY 16
/* leaf_bytes is clamped to this range: checkpoints are 16-bit offsets. */
#define GR_LSEG_MIN_LEAF_BYTES 256u
#define GR_LSEG_MAX_LEAF_BYTES 32768u
/* Largest value the engine stores (its offsets are 32-bit); longer pushes fail with -1. */
#define GR_LSEG_MAX_VALUE 0xFFFFFF00u

typedef enum gr_lseg_end { GR_LSEG_HEAD = 0, GR_LSEG_TAIL = 1 } gr_lseg_end_t;

typedef struct gr_lseg_leaf gr_lseg_leaf_t;   /* private to list_seg.c */

typedef struct gr_lseg_slot {
    uint64_t start;           /* virtual position of the leaf's first value */
    gr_lseg_leaf_t *leaf;
} gr_lseg_slot_t;

typedef struct gr_lseg {
    gr_lseg_slot_t *slots;    /* slots[first .. first+count) are in use */
    size_t capacity, first, count;
    size_t length;            /* values */
    size_t allocated;         /* usable bytes of the directory and every leaf */
    uint32_t leaf_request;    /* bytes asked of the allocator for a leaf */
    uint32_t plain_threshold; /* entries bigger than this get a plain leaf */
} gr_lseg_t;

/* A cursor; see gr_lseg_iter_init. Invalidated by any mutation. */
typedef struct gr_lseg_iter {
    const gr_lseg_t *list;
    const gr_lseg_leaf_t *leaf;
    const uint8_t *cursor;    /* forward: the next entry */
    size_t slot;              /* the leaf's slot, relative to first */
    size_t remaining;         /* values still to return */
    uint32_t local;           /* backward: index in the leaf of the next group's successor */
    uint32_t pending;         /* forward: entries left in the leaf; backward: offsets stacked */
    int backward;
    uint32_t stack[GR_LSEG_CHECKPOINT_EVERY];   /* backward: offsets of one group's entries */
} gr_lseg_iter_t;

/* Lifecycle */
/* leaf_bytes: the size of one leaf allocation (clamped to the range above; 0 means 8192). */
void gr_lseg_init(gr_lseg_t *list, uint32_t leaf_bytes);
void gr_lseg_release(gr_lseg_t *list);   /* frees every leaf and the directory; empty again */

/* Access. Return 0, or -1 (index out of range, or out of memory with the list unchanged). */
int gr_lseg_get(const gr_lseg_t *list, size_t index, const uint8_t **data, size_t *length);
int gr_lseg_peek(const gr_lseg_t *list, gr_lseg_end_t end, const uint8_t **data, size_t *length);
int gr_lseg_push(gr_lseg_t *list, gr_lseg_end_t end, const uint8_t *data, size_t length);
/* Appends count values at the tail, as count tail pushes would leave them, in one call that
 * keeps the tail leaf at hand (a snapshot load, RPUSH with many values). Returns 0, or -1 when
 * out of memory or a value is too long, with the values before it appended. */
int gr_lseg_push_tail_many(gr_lseg_t *list, const uint8_t *const *data, const size_t *lengths, size_t count);
int gr_lseg_pop(gr_lseg_t *list, gr_lseg_end_t end);
/* gr_lseg_pop of the value gr_lseg_peek(list, end) just returned (data, length), unchanged
 * since: at the tail its position is taken from data instead of found again by a checkpoint
 * walk. */
int gr_lseg_pop_peeked(gr_lseg_t *list, gr_lseg_end_t end, const uint8_t *data, size_t length);
int gr_lseg_set(gr_lseg_t *list, size_t index, const uint8_t *data, size_t length);
/* The new value ends up at index; index == length appends. */
int gr_lseg_insert(gr_lseg_t *list, size_t index, const uint8_t *data, size_t length);
/* Removes [start, start+count), clamped to the list; never allocates. */
int gr_lseg_delete_range(gr_lseg_t *list, size_t start, size_t count);

/* A visitor is handed values a run at a time: count > 0 values, in order, all pointing into
 * the leaf they lie in (a run never spans two leaves, and has at most GR_LSEG_VISIT_RUN), valid
 * during the call only. */
#define GR_LSEG_VISIT_RUN 32
typedef void (*gr_lseg_visit_fn)(void *context, const gr_bytes_t *values, size_t count);

/* Hands the first min(count, length) values, in order, to visit, then removes them exactly as
 * gr_lseg_delete_range(list, 0, count) would. Returns how many. Never allocates. */
size_t gr_lseg_pop_head_each(gr_lseg_t *list, size_t count, gr_lseg_visit_fn visit, void *context);

/* Hands values [start, start+count) (clamped to the list), in order, to visit: LRANGE's
 * walk without an iterator's per-value bookkeeping. One seek, then a scan of each leaf. */
void gr_lseg_each(const gr_lseg_t *list, size_t start, size_t count, gr_lseg_visit_fn visit, void *context);

/* Iteration from start_index (inclusive), forward or backward: one O(log n) seek, then
 * O(1) a step. next returns 1 with a value, 0 when done. */
void gr_lseg_iter_init(gr_lseg_iter_t *iter, const gr_lseg_t *list, size_t start_index, int backward);
int gr_lseg_iter_next(gr_lseg_iter_t *iter, const uint8_t **data, size_t *length);

/* Queries */
size_t gr_lseg_length(const gr_lseg_t *list);
size_t gr_lseg_allocated_bytes(const gr_lseg_t *list);   /* directory + leaves, usable sizes */
size_t gr_lseg_leaf_count(const gr_lseg_t *list);
int gr_lseg_check(const gr_lseg_t *list);   /* 0 when every invariant holds, else -1 */

/* What GOBLIN.LIST.INTERNALS reports for a segmented list (bytes are usable sizes). Leaves
 * close their gaps at once, so dead value bytes are always 0; a leaf's free space is its
 * data space (value_bytes_allocated) minus the live entries. Slack is counted in directory
 * slots; the order structure is the directory plus every leaf's header and checkpoints. */
typedef struct gr_lseg_internals {
    size_t elements;
    size_t live_value_bytes;        /* entries in use, length prefixes included */
    size_t dead_value_bytes;        /* always 0 */
    size_t value_bytes_allocated;   /* leaves' data space (after header and checkpoints) */
    size_t leaves;
    size_t front_slack, back_slack; /* free directory slots before the first / after the last leaf */
    size_t order_structure_bytes;   /* the directory, leaf headers and checkpoint tables */
    size_t total_allocated_bytes;   /* == gr_lseg_allocated_bytes */
} gr_lseg_internals_t;
void gr_lseg_internals(const gr_lseg_t *list, gr_lseg_internals_t *out);   /* O(leaves) */

/* Bulk */
/* Redis LREM semantics (see gr_lcompact_remove_matching). Never allocates. */
int64_t gr_lseg_remove_matching(gr_lseg_t *list, const uint8_t *data, size_t length, int64_t count);

#endif
