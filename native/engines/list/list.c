/* list.c — the list object (list.h): holds one of three encodings, the compact engine
 * (list_compact.c) while small and, after crossing the thresholds, the target engine chosen
 * at creation — segmented (list_seg.c) or PMA (list_pma.c) — and dispatches every
 * operation to it. The LIST command layer is cmd_list.c;
 * it sees only this file's gr_list_* API.
 */
#include "engines/list/list.h"

#include <string.h>

#include "core/alloc.h"

_Static_assert((int)GR_LIST_HEAD == (int)GR_LSEG_HEAD && (int)GR_LIST_TAIL == (int)GR_LSEG_TAIL,
               "gr_list_end_t and gr_lseg_end_t agree");
_Static_assert((int)GR_LIST_HEAD == (int)GR_LPMA_HEAD && (int)GR_LIST_TAIL == (int)GR_LPMA_TAIL,
               "gr_list_end_t and gr_lpma_end_t agree");

struct gr_list {
    gr_list_config_t config;
    gr_list_encoding_t encoding;
    gr_list_encoding_t target;   /* GR_LIST_SEGMENTED or GR_LIST_PMA, fixed at creation */
    union {
        gr_lcompact_t compact;
        gr_lseg_t seg;
        gr_lpma_t pma;
    } as;
};

void gr_list_config_default(gr_list_config_t *config) {
    config->compact_max_entries = 128;
    config->compact_max_bytes = 8192;
    config->compact_max_value = 64;
    /* 8 KiB leaves, Redis's quicklist node size too. Measured by test_list on 100,000 x 16 B:
     * 17.31 B/item (4 KiB: 17.34, the header, checkpoints and slot amortised over half as
     * many values) and LINDEX of the middle ~20 ns (4 KiB: ~25, one more level of the
     * directory search; the in-leaf part is bounded by the checkpoints, not the leaf size).
     * The price is an insert or resize in the middle moving up to 8 KiB instead of 4. */
    config->leaf_bytes = 8192;
}

void gr_list_config_from_listpack_size(gr_list_config_t *config, int64_t listpack_size) {
    gr_list_config_default(config);
    if (listpack_size >= 0) {
        config->compact_max_entries = listpack_size == 0 ? 1 : listpack_size > UINT32_MAX ? UINT32_MAX
                                                                                           : (uint32_t)listpack_size;
        return;   /* compact_max_bytes stays 8 KiB: Redis's SIZE_SAFETY_LIMIT for a count fill */
    }
    int64_t level = listpack_size < -5 ? 5 : -listpack_size;   /* 1..5 */
    uint32_t bytes = 4096u << (level - 1);                      /* 4 KiB .. 64 KiB */
    config->compact_max_bytes = bytes;
    config->leaf_bytes = bytes > 32768 ? 32768 : bytes;
}

/* ---- lifecycle ---------------------------------------------------------------------- */

gr_list_t *gr_list_new(const gr_list_config_t *config) { return gr_list_new_for(config, GR_LIST_SEGMENTED); }

gr_list_t *gr_list_new_for(const gr_list_config_t *config, gr_list_encoding_t target) {
    gr_list_t *list = gr_mem_alloc(sizeof *list, GR_MEM_LIST);
    if (!list) return NULL;
    if (config) list->config = *config;
    else gr_list_config_default(&list->config);
    list->encoding = GR_LIST_COMPACT;
    list->target = target == GR_LIST_PMA ? GR_LIST_PMA : GR_LIST_SEGMENTED;
    gr_lcompact_init(&list->as.compact);
    return list;
}

void gr_list_free(gr_list_t *list) {
    if (!list) return;
    switch (list->encoding) {
    case GR_LIST_COMPACT: gr_lcompact_release(&list->as.compact); break;
    case GR_LIST_SEGMENTED: gr_lseg_release(&list->as.seg); break;
    case GR_LIST_PMA: gr_lpma_release(&list->as.pma); break;
    }
    gr_mem_free(list, GR_MEM_LIST);
}

/* ---- encoding conversion ------------------------------------------------------------ */

/* Would `added` more values, `added_bytes` more buffer bytes and a longest value of
 * `longest` bytes keep the compact encoding within its limits? */
static int compact_fits(const gr_list_t *list, size_t added, size_t added_bytes, size_t longest) {
    const gr_lcompact_t *compact = &list->as.compact;
    return longest <= list->config.compact_max_value &&
           gr_lcompact_length(compact) + added <= list->config.compact_max_entries &&
           gr_lcompact_bytes(compact) + added_bytes <= list->config.compact_max_bytes;
}

/* Compact -> PMA, preserving order; -1 on OOM with the list unchanged. */
static int convert_to_pma(gr_list_t *list) {
    gr_lpma_t pma;
    gr_lpma_init(&pma);
    gr_lcompact_iter_t iter;
    gr_lcompact_iter_init(&iter, &list->as.compact, 0, 0);
    const uint8_t *data;
    size_t length;
    while (gr_lcompact_iter_next(&iter, &data, &length)) {
        if (gr_lpma_push(&pma, GR_LPMA_TAIL, data, length)) {
            gr_lpma_release(&pma);
            return -1;
        }
    }
    gr_lcompact_release(&list->as.compact);
    list->as.pma = pma;
    list->encoding = GR_LIST_PMA;
    return 0;
}

/* Compact -> segmented, preserving order; -1 on OOM with the list unchanged. */
static int convert_to_segmented(gr_list_t *list) {
    gr_lseg_t seg;
    gr_lseg_init(&seg, list->config.leaf_bytes);
    gr_lcompact_iter_t iter;
    gr_lcompact_iter_init(&iter, &list->as.compact, 0, 0);
    const uint8_t *data;
    size_t length;
    while (gr_lcompact_iter_next(&iter, &data, &length)) {
        if (gr_lseg_push(&seg, GR_LSEG_TAIL, data, length)) {
            gr_lseg_release(&seg);
            return -1;
        }
    }
    gr_lcompact_release(&list->as.compact);
    list->as.seg = seg;
    list->encoding = GR_LIST_SEGMENTED;
    return 0;
}

static int convert_to_target(gr_list_t *list) {
    return list->target == GR_LIST_PMA ? convert_to_pma(list) : convert_to_segmented(list);
}

/* Before adding one value of `length` bytes: convert if the compact encoding would overflow. */
static int make_room_for(gr_list_t *list, size_t length) {
    if (list->encoding != GR_LIST_COMPACT || compact_fits(list, 1, gr_lcompact_entry_size(length), length))
        return 0;
    return convert_to_target(list);
}

/* ---- queries ------------------------------------------------------------------------ */

size_t gr_list_length(const gr_list_t *list) {
    switch (list->encoding) {
    case GR_LIST_COMPACT: return gr_lcompact_length(&list->as.compact);
    case GR_LIST_SEGMENTED: return gr_lseg_length(&list->as.seg);
    default: return gr_lpma_length(&list->as.pma);
    }
}

gr_list_encoding_t gr_list_encoding(const gr_list_t *list) { return list->encoding; }
gr_list_encoding_t gr_list_target(const gr_list_t *list) { return list->target; }

const char *gr_list_encoding_name(const gr_list_t *list) {
    switch (list->encoding) {
    case GR_LIST_COMPACT: return "listpack";
    case GR_LIST_SEGMENTED: return "quicklist";
    default: return "pma";
    }
}

const char *gr_list_engine_name(gr_list_encoding_t target) { return target == GR_LIST_PMA ? "pma" : "segmented"; }

size_t gr_list_allocated_bytes(const gr_list_t *list) {
    switch (list->encoding) {
    case GR_LIST_COMPACT: return gr_mem_usable(list) + gr_lcompact_allocated_bytes(&list->as.compact);
    case GR_LIST_SEGMENTED: return gr_mem_usable(list) + gr_lseg_allocated_bytes(&list->as.seg);
    default: return gr_mem_usable(list) + gr_lpma_allocated_bytes(&list->as.pma);
    }
}

size_t gr_list_leaf_count(const gr_list_t *list) {
    switch (list->encoding) {
    case GR_LIST_COMPACT: return 1;
    case GR_LIST_SEGMENTED: return gr_lseg_leaf_count(&list->as.seg);
    default: return list->as.pma.nseg;
    }
}

void gr_list_internals(const gr_list_t *list, gr_list_internals_t *out) {
    memset(out, 0, sizeof *out);
    if (list->encoding == GR_LIST_PMA) {
        gr_lpma_internals_t p;
        gr_lpma_internals(&list->as.pma, &p);
        *out = (gr_list_internals_t){"pma", "slots", p.elements, p.live_value_bytes, p.dead_value_bytes,
                                     p.value_bytes_allocated, p.slots, p.front_slack, p.back_slack,
                                     p.order_structure_bytes, p.total_allocated_bytes};
    } else if (list->encoding == GR_LIST_SEGMENTED) {
        gr_lseg_internals_t g;
        gr_lseg_internals(&list->as.seg, &g);
        *out = (gr_list_internals_t){"segmented", "leaves", g.elements, g.live_value_bytes, g.dead_value_bytes,
                                     g.value_bytes_allocated, g.leaves, g.front_slack, g.back_slack,
                                     g.order_structure_bytes, g.total_allocated_bytes};
    } else {
        /* one packed buffer: no order structure, its free tail is the back slack (in bytes) */
        const gr_lcompact_t *c = &list->as.compact;
        size_t allocated = gr_lcompact_allocated_bytes(c);
        *out = (gr_list_internals_t){"listpack", "leaves", gr_lcompact_length(c), gr_lcompact_bytes(c), 0,
                                     allocated, 1, 0, allocated - gr_lcompact_bytes(c), 0, 0};
    }
    out->total_allocated_bytes = gr_list_allocated_bytes(list);
}

int gr_list_check(const gr_list_t *list) {
    if (list->encoding == GR_LIST_SEGMENTED) return list->target == GR_LIST_SEGMENTED ? gr_lseg_check(&list->as.seg) : -1;
    if (list->encoding == GR_LIST_PMA) return list->target == GR_LIST_PMA ? gr_lpma_check(&list->as.pma) : -1;
    const gr_lcompact_t *compact = &list->as.compact;
    if (gr_lcompact_check(compact)) return -1;
    if (gr_lcompact_length(compact) > list->config.compact_max_entries ||
        gr_lcompact_bytes(compact) > list->config.compact_max_bytes)
        return -1;
    gr_lcompact_iter_t iter;
    gr_lcompact_iter_init(&iter, compact, 0, 0);
    const uint8_t *data;
    size_t length;
    while (gr_lcompact_iter_next(&iter, &data, &length))
        if (length > list->config.compact_max_value) return -1;
    return 0;
}

/* ---- access ------------------------------------------------------------------------- */

/* One dispatch for the three encodings; the ends agree (asserted above). */
#define DISPATCH(list, compact_call, seg_call, pma_call)                                     \
    ((list)->encoding == GR_LIST_COMPACT ? (compact_call)                                    \
     : (list)->encoding == GR_LIST_SEGMENTED ? (seg_call) : (pma_call))

int gr_list_get(const gr_list_t *list, size_t index, gr_value_t *out) {
    return DISPATCH(list, gr_lcompact_get(&list->as.compact, index, &out->data, &out->length),
                    gr_lseg_get(&list->as.seg, index, &out->data, &out->length),
                    gr_lpma_get(&list->as.pma, index, &out->data, &out->length));
}

int gr_list_peek(const gr_list_t *list, gr_list_end_t end, gr_value_t *out) {
    return DISPATCH(list, gr_lcompact_peek(&list->as.compact, end == GR_LIST_TAIL, &out->data, &out->length),
                    gr_lseg_peek(&list->as.seg, (gr_lseg_end_t)end, &out->data, &out->length),
                    gr_lpma_peek(&list->as.pma, (gr_lpma_end_t)end, &out->data, &out->length));
}

int gr_list_push(gr_list_t *list, gr_list_end_t end, const uint8_t *data, size_t length) {
    if (make_room_for(list, length)) return -1;
    return DISPATCH(list, gr_lcompact_push(&list->as.compact, end == GR_LIST_TAIL, data, length),
                    gr_lseg_push(&list->as.seg, (gr_lseg_end_t)end, data, length),
                    gr_lpma_push(&list->as.pma, (gr_lpma_end_t)end, data, length));
}

int gr_list_pop(gr_list_t *list, gr_list_end_t end) {
    return DISPATCH(list, gr_lcompact_pop(&list->as.compact, end == GR_LIST_TAIL),
                    gr_lseg_pop(&list->as.seg, (gr_lseg_end_t)end),
                    gr_lpma_pop(&list->as.pma, (gr_lpma_end_t)end));
}

int gr_list_pop_tail_peeked(gr_list_t *list, gr_value_t peeked) {
    if (list->encoding == GR_LIST_SEGMENTED)
        return gr_lseg_pop_peeked(&list->as.seg, GR_LSEG_TAIL, peeked.data, peeked.length);
    return gr_list_pop(list, GR_LIST_TAIL);
}

int gr_list_set(gr_list_t *list, size_t index, const uint8_t *data, size_t length) {
    if (index >= gr_list_length(list) || make_room_for(list, length)) return -1;
    return DISPATCH(list, gr_lcompact_set(&list->as.compact, index, data, length),
                    gr_lseg_set(&list->as.seg, index, data, length),
                    gr_lpma_set(&list->as.pma, index, data, length));
}

int gr_list_insert(gr_list_t *list, size_t index, const uint8_t *data, size_t length) {
    if (index > gr_list_length(list) || make_room_for(list, length)) return -1;
    return DISPATCH(list, gr_lcompact_insert(&list->as.compact, index, data, length),
                    gr_lseg_insert(&list->as.seg, index, data, length),
                    gr_lpma_insert(&list->as.pma, index, data, length));
}

int gr_list_delete_range(gr_list_t *list, size_t start, size_t count) {
    return DISPATCH(list, gr_lcompact_delete_range(&list->as.compact, start, count),
                    gr_lseg_delete_range(&list->as.seg, start, count),
                    gr_lpma_delete_range(&list->as.pma, start, count));
}

size_t gr_list_pop_range(gr_list_t *list, gr_list_end_t end, size_t count) {
    if (list->encoding == GR_LIST_PMA) return gr_lpma_pop_range(&list->as.pma, (gr_lpma_end_t)end, count);
    size_t length = gr_list_length(list);
    if (count > length) count = length;
    gr_list_delete_range(list, end == GR_LIST_HEAD ? 0 : length - count, count);
    return count;
}

/* Up to `count` values from index `start`, walking away from `from`, handed to visit through
 * an iterator in runs of up to GR_LIST_VISIT_RUN: pop_each's and each's path on the engines
 * without a scan of their own. (Every value stays valid until the list changes, so a run may
 * hold several.) */
static void visit_from(const gr_list_t *list, size_t start, gr_list_end_t from, size_t count, gr_list_visit_fn visit,
                       void *context) {
    gr_list_iter_t iterator;
    gr_list_iter_init(&iterator, list, start, from);
    gr_bytes_t run[GR_LIST_VISIT_RUN];
    size_t n = 0;
    gr_value_t value;
    for (size_t i = 0; i < count && gr_list_iter_next(&iterator, &value); i++) {
        run[n].data = value.data;
        run[n].length = (uint32_t)value.length;   /* every engine's values are at most 0xFFFFFF00 bytes */
        if (++n == GR_LIST_VISIT_RUN) {
            visit(context, run, n);
            n = 0;
        }
    }
    if (n) visit(context, run, n);
}

size_t gr_list_pop_each(gr_list_t *list, gr_list_end_t end, size_t count, gr_list_visit_fn visit, void *context) {
    if (list->encoding == GR_LIST_SEGMENTED && end == GR_LIST_HEAD)
        return gr_lseg_pop_head_each(&list->as.seg, count, visit, context);
    size_t length = gr_list_length(list);
    if (count > length) count = length;
    visit_from(list, end == GR_LIST_HEAD ? 0 : length - 1, end, count, visit, context);
    return gr_list_pop_range(list, end, count);
}

void gr_list_each(const gr_list_t *list, size_t start, size_t count, gr_list_visit_fn visit, void *context) {
    if (list->encoding == GR_LIST_SEGMENTED) {
        gr_lseg_each(&list->as.seg, start, count, visit, context);
        return;
    }
    visit_from(list, start, GR_LIST_HEAD, count, visit, context);
}

/* ---- iteration ---------------------------------------------------------------------- */

void gr_list_iter_init(gr_list_iter_t *iter, const gr_list_t *list, size_t start_index,
                       gr_list_end_t direction_from) {
    iter->encoding = list->encoding;
    int backward = direction_from == GR_LIST_TAIL;
    if (list->encoding == GR_LIST_COMPACT) gr_lcompact_iter_init(&iter->as.compact, &list->as.compact, start_index, backward);
    else if (list->encoding == GR_LIST_SEGMENTED) gr_lseg_iter_init(&iter->as.seg, &list->as.seg, start_index, backward);
    else gr_lpma_iter_init(&iter->as.pma, &list->as.pma, start_index, backward);
}

int gr_list_iter_next(gr_list_iter_t *iter, gr_value_t *out) {
    return DISPATCH(iter, gr_lcompact_iter_next(&iter->as.compact, &out->data, &out->length),
                    gr_lseg_iter_next(&iter->as.seg, &out->data, &out->length),
                    gr_lpma_iter_next(&iter->as.pma, &out->data, &out->length));
}

/* ---- bulk --------------------------------------------------------------------------- */

int gr_list_push_many(gr_list_t *list, gr_list_end_t end, const gr_value_t *values, size_t count) {
    if (list->encoding == GR_LIST_COMPACT) {   /* decide the encoding once, for the batch */
        size_t bytes = 0, longest = 0;
        for (size_t i = 0; i < count; i++) {
            bytes += gr_lcompact_entry_size(values[i].length);
            if (values[i].length > longest) longest = values[i].length;
        }
        if (!compact_fits(list, count, bytes, longest) && convert_to_target(list)) return -1;
    }
    size_t before = gr_list_length(list);
    const int seg_tail = list->encoding == GR_LIST_SEGMENTED && end == GR_LIST_TAIL;
    if (list->encoding == GR_LIST_PMA || seg_tail) {   /* the engine's batch push, in chunks of 64 */
        for (size_t done = 0; done < count;) {
            const uint8_t *data[64];
            size_t lengths[64];
            size_t n = count - done < 64 ? count - done : 64;
            for (size_t i = 0; i < n; i++) {
                data[i] = values[done + i].data;
                lengths[i] = values[done + i].length;
            }
            if (seg_tail ? gr_lseg_push_tail_many(&list->as.seg, data, lengths, n)
                         : gr_lpma_push_many(&list->as.pma, (gr_lpma_end_t)end, data, lengths, n)) {
                gr_list_delete_range(list, end == GR_LIST_HEAD ? 0 : before, gr_list_length(list) - before);
                return -1;
            }
            done += n;
        }
        return 0;
    }
    for (size_t i = 0; i < count; i++) {
        int failed = DISPATCH(list, gr_lcompact_push(&list->as.compact, end == GR_LIST_TAIL, values[i].data, values[i].length),
                              gr_lseg_push(&list->as.seg, (gr_lseg_end_t)end, values[i].data, values[i].length), -1);
        if (failed) {   /* all or nothing: take back what this call pushed */
            size_t pushed = gr_list_length(list) - before;
            gr_list_delete_range(list, end == GR_LIST_HEAD ? 0 : before, pushed);
            return -1;
        }
    }
    return 0;
}

int64_t gr_list_remove_matching(gr_list_t *list, const uint8_t *data, size_t length, int64_t count) {
    return DISPATCH(list, gr_lcompact_remove_matching(&list->as.compact, data, length, count),
                    gr_lseg_remove_matching(&list->as.seg, data, length, count),
                    gr_lpma_remove_matching(&list->as.pma, data, length, count));
}

int gr_list_trim(gr_list_t *list, size_t start, size_t stop_inclusive) {
    size_t length = gr_list_length(list);
    if (start > stop_inclusive || start >= length) return gr_list_delete_range(list, 0, length);
    if (stop_inclusive < length - 1) gr_list_delete_range(list, stop_inclusive + 1, length - 1 - stop_inclusive);
    return gr_list_delete_range(list, 0, start);
}
