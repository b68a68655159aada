/* list.h — the list object: one Redis list value, held in the compact encoding while small
 * (list_compact.h, "listpack") and converted once to its target engine when it outgrows the
 * thresholds in gr_list_config_t: the segmented engine (list_seg.h, "quicklist") or the PMA
 * engine (list_pma.h, "pma"). The target is chosen when the list is created and never
 * changes. The implementation is list.c; this is the only list API the command layer
 * (cmd_list.c) uses.
 *
 * Memory layout
 * -------------
 *   gr_list_t (one allocation)            compact: one packed buffer
 *   +---------------------------+         +------------------------------------+
 *   | config (copied at new)    |   +---->| [len|value|back][len|value|back].. |
 *   | encoding                  |   |     +------------------------------------+
 *   | union {                   |   |
 *   |   gr_lcompact_t  buffer --+---+     segmented: a directory of leaf starts
 *   |   gr_lseg_t      slots  --+-------> [start|leaf*][start|leaf*] ...
 *   |   gr_lpma_t      block  --+---+         each leaf: [hdr|checkpoints| entries ]
 *   | }                         |   |
 *   +---------------------------+   +---> pma: [count tree][gapped offset slots][lo] + arena
 *
 * The list converts compact -> its target before an operation that would leave it with
 * more than compact_max_entries values, more than compact_max_bytes buffer bytes, or a value
 * longer than compact_max_value (the check is conservative: LSET counts the new value's
 * bytes without subtracting the old one's, as Redis does). It never converts back; the
 * caller deletes a list that becomes empty. Every byte is allocated through alloc.h under
 * GR_MEM_LIST, and gr_list_allocated_bytes reports them all, the struct included.
 *
 * Contracts: indexes are already normalised to 0..length-1 by the caller. Values returned
 * (gr_value_t) point into list storage and are valid until the next mutation; iterators are
 * invalidated by any mutation. Values passed in must not point into the same list (copy
 * first, as LMOVE does). Functions returning int give 0, or -1 on a bad index or when out of
 * memory, in which case the list is unchanged.
 */
#ifndef GR_LIST_H
#define GR_LIST_H

#include <stddef.h>
#include <stdint.h>

#include "engines/list/list_compact.h"
#include "engines/list/list_pma.h"
#include "engines/list/list_seg.h"

/* cffi-cdef-begin */
typedef struct gr_list_config {
    uint32_t compact_max_entries;   /* default 128 */
    uint32_t compact_max_bytes;     /* default 8192 */
    uint32_t compact_max_value;     /* default 64 */
    uint32_t leaf_bytes;            /* default 8192; clamped to 256..32768 */
} gr_list_config_t;

typedef enum gr_list_end { GR_LIST_HEAD = 0, GR_LIST_TAIL = 1 } gr_list_end_t;
typedef enum gr_list_encoding { GR_LIST_COMPACT = 0, GR_LIST_SEGMENTED = 1, GR_LIST_PMA = 2 } gr_list_encoding_t;

/* Points into list storage; valid until the next mutation. */
typedef struct gr_value {
    const uint8_t *data;
    size_t length;
} gr_value_t;

typedef struct gr_list gr_list_t;

void gr_list_config_default(gr_list_config_t *config);
/* Redis's list-max-listpack-size (alias list-max-ziplist-size) in this engine's terms; the
 * defaults are -2's. N > 0: a list stays compact up to N values (at most 8 KiB, Redis's
 * safety limit; 0 counts as 1). N < 0: -1..-5 are 4, 8, 16, 32, 64 KiB (below -5 as -5): the
 * compact buffer's byte limit and the segmented leaf size (leaves stop at 32 KiB); the compact
 * encoding keeps its 128-value cap, since it is scanned linearly. compact_max_value (64) is
 * goblin's own and unchanged. */
void gr_list_config_from_listpack_size(gr_list_config_t *config, int64_t listpack_size);

/* Lifecycle */
gr_list_t *gr_list_new(const gr_list_config_t *config);   /* NULL config: defaults; NULL on OOM */
/* target: GR_LIST_SEGMENTED or GR_LIST_PMA, the engine the list converts to when it grows
 * (GR_LIST_COMPACT means segmented). gr_list_new is gr_list_new_for(config, GR_LIST_SEGMENTED). */
gr_list_t *gr_list_new_for(const gr_list_config_t *config, gr_list_encoding_t target);
void gr_list_free(gr_list_t *list);

/* Queries */
size_t gr_list_length(const gr_list_t *list);
gr_list_encoding_t gr_list_encoding(const gr_list_t *list);
gr_list_encoding_t gr_list_target(const gr_list_t *list);   /* GR_LIST_SEGMENTED or GR_LIST_PMA */
const char *gr_list_encoding_name(const gr_list_t *list);   /* "listpack", "quicklist" or "pma" */
const char *gr_list_engine_name(gr_list_encoding_t target); /* "segmented" or "pma" */
size_t gr_list_allocated_bytes(const gr_list_t *list);      /* everything, the struct included */
size_t gr_list_leaf_count(const gr_list_t *list);           /* leaves / PMA segments; 1 when compact */
int gr_list_check(const gr_list_t *list);   /* full invariant check for tests: 0 ok, -1 broken */

/* Access */
int gr_list_get(const gr_list_t *list, size_t index, gr_value_t *out);
int gr_list_peek(const gr_list_t *list, gr_list_end_t end, gr_value_t *out);
int gr_list_push(gr_list_t *list, gr_list_end_t end, const uint8_t *data, size_t length);
int gr_list_pop(gr_list_t *list, gr_list_end_t end);   /* removes one; peek first to reply */
int gr_list_set(gr_list_t *list, size_t index, const uint8_t *data, size_t length);
/* The new value ends up AT index; index == length appends. */
int gr_list_insert(gr_list_t *list, size_t index, const uint8_t *data, size_t length);
/* Removes [start, start+count), clamped to the list. Never fails. */
int gr_list_delete_range(gr_list_t *list, size_t start, size_t count);
/* Removes min(count, length) values from one end (read them first): for a PMA list one range
 * mutation (gr_lpma_pop_range), otherwise delete_range. Returns how many. Never fails. */
size_t gr_list_pop_range(gr_list_t *list, gr_list_end_t end, size_t count);

/* Bulk */
/* Like repeated push (LPUSH a b c leaves c first); all or nothing when out of memory. */
int gr_list_push_many(gr_list_t *list, gr_list_end_t end, const gr_value_t *values, size_t count);
/* Redis LREM: count > 0 removes the first count matches from the head, < 0 the last |count|
 * from the tail, 0 all. Returns how many were removed. */
int64_t gr_list_remove_matching(gr_list_t *list, const uint8_t *data, size_t length, int64_t count);
/* Keeps [start, stop_inclusive] (clamped); start > stop or start >= length empties the list. */
int gr_list_trim(gr_list_t *list, size_t start, size_t stop_inclusive);

/* GOBLIN.LIST.INTERNALS: the same table for every representation. "units" are PMA slots, or
 * segmented leaves (1 for a compact list); slack is in PMA slots / directory slots. */
typedef struct gr_list_internals {
    const char *representation;     /* "listpack", "segmented" or "pma" */
    const char *units_name;         /* "slots" or "leaves" */
    size_t elements;
    size_t live_value_bytes;
    size_t dead_value_bytes;
    size_t value_bytes_allocated;
    size_t units;
    size_t front_slack, back_slack;
    size_t order_structure_bytes;
    size_t total_allocated_bytes;   /* == gr_list_allocated_bytes (the struct included) */
} gr_list_internals_t;
void gr_list_internals(const gr_list_t *list, gr_list_internals_t *out);
/* cffi-cdef-end */

/* Iteration, both directions. Outside the cffi region: the cursor embeds the engines'
 * cursors, which Python has no use for. Forward (GR_LIST_HEAD) returns start_index,
 * start_index+1, ...; backward (GR_LIST_TAIL) returns start_index, start_index-1, ... 0.
 * A start_index past the end yields nothing. One O(log n) seek, then O(1) a step. */
typedef struct gr_list_iter {
    gr_list_encoding_t encoding;
    union {
        gr_lcompact_iter_t compact;
        gr_lseg_iter_t seg;
        gr_lpma_iter_t pma;
    } as;
} gr_list_iter_t;

void gr_list_iter_init(gr_list_iter_t *iter, const gr_list_t *list, size_t start_index,
                       gr_list_end_t direction_from);
int gr_list_iter_next(gr_list_iter_t *iter, gr_value_t *out);   /* 1 = got one, 0 = done */

/* gr_list_pop of the value gr_list_peek(list, end) just returned, the list unchanged since:
 * the same result, but a segmented list's tail need not find its last value twice. (Outside
 * the cffi region, as is gr_list_pop_each: C callers only.) */
int gr_list_pop_tail_peeked(gr_list_t *list, gr_value_t peeked);
static inline int gr_list_pop_peeked(gr_list_t *list, gr_list_end_t end, gr_value_t peeked) {
    return end == GR_LIST_TAIL ? gr_list_pop_tail_peeked(list, peeked) : gr_list_pop(list, end);
}

/* A visitor is handed values a run at a time: count > 0 values, in the order of the walk,
 * valid during the call only; a run has at most GR_LIST_VISIT_RUN values (a segmented list's
 * runs are a leaf's values, list_seg.h). The command layer writes a run as one reply
 * operation (reply.h's gr_reply_bulks). */
#define GR_LIST_VISIT_RUN GR_LSEG_VISIT_RUN
typedef gr_lseg_visit_fn gr_list_visit_fn;

/* Pop with a reply: hands min(count, length) values from `end`, in pop order, to visit, then
 * removes them as gr_list_pop_range does. Returns how many. Never fails. A segmented list's
 * head is one pass (gr_lseg_pop_head_each); elsewhere an iterator, then gr_list_pop_range. */
size_t gr_list_pop_each(gr_list_t *list, gr_list_end_t end, size_t count, gr_list_visit_fn visit, void *context);
/* Hands values [start, start+count) (clamped to the list), in order, to visit: LRANGE. A
 * segmented list scans its leaves (gr_lseg_each); elsewhere an iterator. */
void gr_list_each(const gr_list_t *list, size_t start, size_t count, gr_list_visit_fn visit, void *context);

#endif
