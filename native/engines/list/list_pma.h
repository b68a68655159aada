/* list_pma.h — the adaptive PMA list engine (packed memory array): value bytes appended to
 * an arena, list order kept in a gapped array of 4-byte slots cut into segments, found
 * through a tree of per-window counts. The implementation is list_pma.c; it has the same
 * API shape as the segmented engine (list_seg.h) so that list.c can wrap either.
 *
 * Memory layout
 * -------------
 *   gr_lpma_t               block: one allocation per capacity
 *   +-------------+     +---------------------------+---------------------------+------+
 *   | block   ----+---->| tree[2*nseg] (uint32)     | slots[nseg*S] (uint32)    | lo[] |
 *   | arena   --+ |     +---------------------------+---------------------------+------+
 *   | first,last| |       tree[1] = length; tree[i] = tree[2i] + tree[2i+1];
 *   +-----------|-+       tree[nseg+k] = values in segment k
 *               |
 *               |     segment k (S = GR_LPMA_SEGMENT_SLOTS slots), values dense inside:
 *               |       +-----+-----+-----+-----+-----+-----+
 *               |       |     | o0  | o1  | o2  |     |     |    lo[k] = 1, count 3
 *               |       +-----+--|--+-----+-----+-----+-----+
 *               v                v
 *   arena  [len][bytes][len][bytes] ... (dead) ... [len][bytes]          | free |
 *          0                                                   used      capacity
 *
 *   slot      The uint32 byte offset of an arena entry; an entry is a LEB128 length then
 *             the bytes (a 16-byte value costs 17 arena bytes + one 4-byte slot).
 *   segments  The slot array is nseg (a power of two) segments of S slots. Segment k holds
 *             its count values contiguously at slots [lo[k], lo[k] + count), so index i is
 *             found by descending the count tree (O(log nseg)) then one slot read, and the
 *             iterator steps through slots, skipping empty segments.
 *   windows   Each tree node is a window: an aligned run of 2^h segments (h = its height,
 *             0 at the leaves, H = log2 nseg at the root). Per-segment bounds, linear in h:
 *               upper A(h) = S - (S/4)*h/H       1.0 at leaves ... 0.75 at the root
 *               lower B(h) = S/8 + (3S/16)*h/H   0.125 at leaves ... 0.3125 at the root
 *             (rounded to whole slots per segment, so that a window within its bound split
 *             evenly gives children within theirs).
 *   slack     The values occupy segments [first, last]; the segments before and after are
 *             front and back slack. End pushes fill the end segment up to A(H) and then open
 *             the next slack segment, touching nothing else: O(1). When an end push finds
 *             no slack segment left, the engine rebuilds at the same capacity (recentre) or
 *             twice it (grow, when above 5/8 full), putting the slack on the side(s) the
 *             recent pushes came from (the "adaptive" part: a queue gets all its slack at the
 *             tail).
 *   pending   Pushes and pops that stay inside an end segment do not walk the count tree:
 *             they add to head_pending (segment first) or tail_pending (segment last), so
 *             the true count of segment k is tree[nseg+k] plus the pending of each end it is.
 *             The pendings are flushed into the tree (and upper bounds on their paths
 *             restored) when an end segment fills or empties, and before any operation
 *             that reads the tree or changes the layout (middle inserts and deletes,
 *             rebalances, rebuilds); locate adds them in as it descends.
 *   invariants (at rest; gr_lpma_check verifies them)
 *             every window holds at most A(h) * 2^h values counted by the tree (with the
 *             pendings counted, at most that plus the positive pendings, each of which only
 *             grows while its end segment is under A(H));
 *             every window inside (first, last) — edges excluded — at least B(h) * 2^h;
 *             tree[1] plus the pendings is the length, each node is the sum of its children,
 *             lo[k] + count <= S, first/last are the
 *             first/last nonempty segments; every slot points to an entry inside the used
 *             arena; the live entry bytes equal their recount, dead = used - live.
 *   rebalance An insert that would break an upper bound, or a delete a lower bound, finds the
 *             lowest window above the highest broken one on its path and lays it out again:
 *             evenly (the counts of any aligned sub-window differ by at most one) when it lies
 *             inside (first, last), else packed at A(H) a segment toward the inside, so that
 *             the edge segment absorbs the remainder and the rest becomes slack. In place:
 *             the window's values are packed to its start, then spread right to left.
 *   decisions Each mutation makes at most one structural decision: grow, recentre (both only
 *             when an insert needs them), shrink (halving, after a deletion leaves the root
 *             below B(H) * nseg) or arena compaction (after a deletion leaves more dead than
 *             live bytes). A rebuild compacts the arena as it goes.
 *   counted   gr_lpma_pop_range clears `count` values from one end in a single pass over
 *   pop       their slots (the arena entries are only measured, for dead-byte accounting, and
 *             retracted when they are the arena's last), then makes that one decision.
 *
 * Costs: get O(log nseg), O(1) inside the end segments; push and pop at either end O(1)
 * amortised, with no tree walk unless the end segment fills or empties; pop_range O(count + log
 * nseg); insert/delete in the middle O(S) plus an amortised O(log^2 n) rebalance; set O(1).
 *
 * Value pointers handed out point into the arena and stay valid until the next mutation;
 * iterators are invalidated by any mutation. Values passed in must not point into the same
 * list. All memory is allocated through alloc.h under GR_MEM_LIST. Out of memory: -1 with
 * the list unchanged. Compile with GR_LPMA_DEBUG to run gr_lpma_check after every mutation
 * (abort() on failure: tests only).
 */
#ifndef GR_LIST_PMA_H
#define GR_LIST_PMA_H

#include <stddef.h>
#include <stdint.h>

#define GR_LPMA_SEGMENT_SLOTS 48u   /* S: slots a segment; must be a multiple of 16, <= 240 */
#define GR_LPMA_MIN_SEGMENTS 2u     /* the smallest capacity: 96 slots */
#define GR_LPMA_MAX_HEIGHT 39u      /* nseg <= 2^39 */
/* Largest value the engine stores (arena offsets are 32-bit); longer pushes fail with -1. */
#define GR_LPMA_MAX_VALUE 0xFFFFFF00u

typedef enum gr_lpma_end { GR_LPMA_HEAD = 0, GR_LPMA_TAIL = 1 } gr_lpma_end_t;

typedef struct gr_lpma {
    void *block;              /* tree, slots and lo in one allocation (NULL when empty) */
    uint32_t *tree;           /* 2*nseg counts; tree[1] is the length */
    uint32_t *slots;          /* nseg*S arena offsets */
    uint8_t *lo;              /* nseg: first occupied slot of each segment */
    uint8_t *arena;
    size_t arena_capacity, arena_used, live_bytes;
    size_t nseg, first, last; /* segments; the first and last nonempty one */
    size_t length;
    uint32_t height;          /* H = log2(nseg) */
    uint32_t head_pushes, tail_pushes;   /* since the last rebuild, halved at each one */
    int64_t head_pending, tail_pending;  /* end-segment count changes not yet in the tree */
    uint8_t upper[GR_LPMA_MAX_HEIGHT + 1];   /* A(h) and B(h) for this height, per segment */
    uint8_t lower[GR_LPMA_MAX_HEIGHT + 1];
} gr_lpma_t;

/* A cursor; see gr_lpma_iter_init. Invalidated by any mutation. */
typedef struct gr_lpma_iter {
    const gr_lpma_t *list;
    size_t segment;
    size_t slot;              /* absolute index of the next value's slot */
    size_t remaining;         /* values still to return */
    int backward;
} gr_lpma_iter_t;

/* What GOBLIN.LIST.INTERNALS reports for a PMA list (bytes are usable sizes). */
typedef struct gr_lpma_internals {
    size_t elements;
    size_t live_value_bytes;        /* arena entries in use, length prefixes included */
    size_t dead_value_bytes;        /* arena bytes of removed or replaced values */
    size_t value_bytes_allocated;   /* the arena's capacity */
    size_t slots;                   /* nseg * S */
    size_t front_slack, back_slack; /* free slots before the first / after the last value */
    size_t order_structure_bytes;   /* the count tree and the per-segment offsets */
    size_t total_allocated_bytes;   /* == gr_lpma_allocated_bytes */
} gr_lpma_internals_t;

/* Lifecycle */
void gr_lpma_init(gr_lpma_t *list);
void gr_lpma_release(gr_lpma_t *list);   /* frees everything; empty again */

/* Access. Return 0, or -1 (index out of range, or out of memory with the list unchanged). */
int gr_lpma_get(const gr_lpma_t *list, size_t index, const uint8_t **data, size_t *length);
int gr_lpma_peek(const gr_lpma_t *list, gr_lpma_end_t end, const uint8_t **data, size_t *length);
int gr_lpma_push(gr_lpma_t *list, gr_lpma_end_t end, const uint8_t *data, size_t length);
int gr_lpma_pop(gr_lpma_t *list, gr_lpma_end_t end);
int gr_lpma_set(gr_lpma_t *list, size_t index, const uint8_t *data, size_t length);
/* The new value ends up at index; index == length appends. */
int gr_lpma_insert(gr_lpma_t *list, size_t index, const uint8_t *data, size_t length);
/* Removes [start, start+count), clamped to the list; never allocates except to shrink
 * (skipped when out of memory), so it never fails. */
int gr_lpma_delete_range(gr_lpma_t *list, size_t start, size_t count);

/* Iteration from start_index (inclusive), forward or backward: one O(log n) seek, then
 * O(1) a step. next returns 1 with a value, 0 when done. */
void gr_lpma_iter_init(gr_lpma_iter_t *iter, const gr_lpma_t *list, size_t start_index, int backward);
int gr_lpma_iter_next(gr_lpma_iter_t *iter, const uint8_t **data, size_t *length);

/* Queries */
size_t gr_lpma_length(const gr_lpma_t *list);
size_t gr_lpma_allocated_bytes(const gr_lpma_t *list);   /* block + arena, usable sizes */
size_t gr_lpma_slot_count(const gr_lpma_t *list);
size_t gr_lpma_front_slack(const gr_lpma_t *list);
size_t gr_lpma_back_slack(const gr_lpma_t *list);
void gr_lpma_internals(const gr_lpma_t *list, gr_lpma_internals_t *out);
int gr_lpma_check(const gr_lpma_t *list);   /* 0 when every invariant holds, else -1 */

/* Bulk */
/* Removes min(count, length) values from one end in one pass (LPOP/RPOP count, LMPOP
 * COUNT): read them first with peek/iter. Returns how many were removed. Never fails. */
size_t gr_lpma_pop_range(gr_lpma_t *list, gr_lpma_end_t end, size_t count);
/* Like repeated push (a head batch a b c leaves c first); all or nothing. */
int gr_lpma_push_many(gr_lpma_t *list, gr_lpma_end_t end, const uint8_t *const *data,
                      const size_t *lengths, size_t count);
/* Redis LREM semantics (see gr_lseg_remove_matching): count > 0 the first count matches from
 * the head, < 0 the last |count| from the tail, 0 all. Returns how many were removed; it
 * repacks the slots in place and never fails. */
int64_t gr_lpma_remove_matching(gr_lpma_t *list, const uint8_t *data, size_t length, int64_t count);

#endif
