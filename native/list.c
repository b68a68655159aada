/* list.c — the list object (list.h): holds one of the two encodings, the compact engine
 * (list_compact.c) while small and the segmented engine (list_seg.c) after crossing the
 * thresholds, and dispatches every operation to it. The LIST command layer is cmd_list.c;
 * it sees only this file's gr_list_* API.
 */
#include "list.h"

#include <string.h>

#include "alloc.h"

_Static_assert((int)GR_LIST_HEAD == (int)GR_LSEG_HEAD && (int)GR_LIST_TAIL == (int)GR_LSEG_TAIL,
               "gr_list_end_t and gr_lseg_end_t agree");

struct gr_list {
    gr_list_config_t config;
    gr_list_encoding_t encoding;
    union {
        gr_lcompact_t compact;
        gr_lseg_t seg;
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

/* ---- lifecycle ---------------------------------------------------------------------- */

gr_list_t *gr_list_new(const gr_list_config_t *config) {
    gr_list_t *list = gr_mem_alloc(sizeof *list, GR_MEM_LIST);
    if (!list) return NULL;
    if (config) list->config = *config;
    else gr_list_config_default(&list->config);
    list->encoding = GR_LIST_COMPACT;
    gr_lcompact_init(&list->as.compact);
    return list;
}

void gr_list_free(gr_list_t *list) {
    if (!list) return;
    if (list->encoding == GR_LIST_COMPACT) gr_lcompact_release(&list->as.compact);
    else gr_lseg_release(&list->as.seg);
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

/* Before adding one value of `length` bytes: convert if the compact encoding would overflow. */
static int make_room_for(gr_list_t *list, size_t length) {
    if (list->encoding == GR_LIST_SEGMENTED || compact_fits(list, 1, gr_lcompact_entry_size(length), length))
        return 0;
    return convert_to_segmented(list);
}

/* ---- queries ------------------------------------------------------------------------ */

size_t gr_list_length(const gr_list_t *list) {
    return list->encoding == GR_LIST_COMPACT ? gr_lcompact_length(&list->as.compact)
                                             : gr_lseg_length(&list->as.seg);
}

gr_list_encoding_t gr_list_encoding(const gr_list_t *list) { return list->encoding; }

const char *gr_list_encoding_name(const gr_list_t *list) {
    return list->encoding == GR_LIST_COMPACT ? "listpack" : "quicklist";
}

size_t gr_list_allocated_bytes(const gr_list_t *list) {
    return gr_mem_usable(list) + (list->encoding == GR_LIST_COMPACT
                                      ? gr_lcompact_allocated_bytes(&list->as.compact)
                                      : gr_lseg_allocated_bytes(&list->as.seg));
}

size_t gr_list_leaf_count(const gr_list_t *list) {
    return list->encoding == GR_LIST_COMPACT ? 1 : gr_lseg_leaf_count(&list->as.seg);
}

int gr_list_check(const gr_list_t *list) {
    if (list->encoding == GR_LIST_SEGMENTED) return gr_lseg_check(&list->as.seg);
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

int gr_list_get(const gr_list_t *list, size_t index, gr_value_t *out) {
    return list->encoding == GR_LIST_COMPACT ? gr_lcompact_get(&list->as.compact, index, &out->data, &out->length)
                                             : gr_lseg_get(&list->as.seg, index, &out->data, &out->length);
}

int gr_list_peek(const gr_list_t *list, gr_list_end_t end, gr_value_t *out) {
    return list->encoding == GR_LIST_COMPACT
               ? gr_lcompact_peek(&list->as.compact, end == GR_LIST_TAIL, &out->data, &out->length)
               : gr_lseg_peek(&list->as.seg, (gr_lseg_end_t)end, &out->data, &out->length);
}

int gr_list_push(gr_list_t *list, gr_list_end_t end, const uint8_t *data, size_t length) {
    if (make_room_for(list, length)) return -1;
    return list->encoding == GR_LIST_COMPACT ? gr_lcompact_push(&list->as.compact, end == GR_LIST_TAIL, data, length)
                                             : gr_lseg_push(&list->as.seg, (gr_lseg_end_t)end, data, length);
}

int gr_list_pop(gr_list_t *list, gr_list_end_t end) {
    return list->encoding == GR_LIST_COMPACT ? gr_lcompact_pop(&list->as.compact, end == GR_LIST_TAIL)
                                             : gr_lseg_pop(&list->as.seg, (gr_lseg_end_t)end);
}

int gr_list_set(gr_list_t *list, size_t index, const uint8_t *data, size_t length) {
    if (index >= gr_list_length(list) || make_room_for(list, length)) return -1;
    return list->encoding == GR_LIST_COMPACT ? gr_lcompact_set(&list->as.compact, index, data, length)
                                             : gr_lseg_set(&list->as.seg, index, data, length);
}

int gr_list_insert(gr_list_t *list, size_t index, const uint8_t *data, size_t length) {
    if (index > gr_list_length(list) || make_room_for(list, length)) return -1;
    return list->encoding == GR_LIST_COMPACT ? gr_lcompact_insert(&list->as.compact, index, data, length)
                                             : gr_lseg_insert(&list->as.seg, index, data, length);
}

int gr_list_delete_range(gr_list_t *list, size_t start, size_t count) {
    return list->encoding == GR_LIST_COMPACT ? gr_lcompact_delete_range(&list->as.compact, start, count)
                                             : gr_lseg_delete_range(&list->as.seg, start, count);
}

/* ---- iteration ---------------------------------------------------------------------- */

void gr_list_iter_init(gr_list_iter_t *iter, const gr_list_t *list, size_t start_index,
                       gr_list_end_t direction_from) {
    iter->encoding = list->encoding;
    int backward = direction_from == GR_LIST_TAIL;
    if (list->encoding == GR_LIST_COMPACT) gr_lcompact_iter_init(&iter->as.compact, &list->as.compact, start_index, backward);
    else gr_lseg_iter_init(&iter->as.seg, &list->as.seg, start_index, backward);
}

int gr_list_iter_next(gr_list_iter_t *iter, gr_value_t *out) {
    return iter->encoding == GR_LIST_COMPACT ? gr_lcompact_iter_next(&iter->as.compact, &out->data, &out->length)
                                             : gr_lseg_iter_next(&iter->as.seg, &out->data, &out->length);
}

/* ---- bulk --------------------------------------------------------------------------- */

int gr_list_push_many(gr_list_t *list, gr_list_end_t end, const gr_value_t *values, size_t count) {
    if (list->encoding == GR_LIST_COMPACT) {   /* decide the encoding once, for the batch */
        size_t bytes = 0, longest = 0;
        for (size_t i = 0; i < count; i++) {
            bytes += gr_lcompact_entry_size(values[i].length);
            if (values[i].length > longest) longest = values[i].length;
        }
        if (!compact_fits(list, count, bytes, longest) && convert_to_segmented(list)) return -1;
    }
    size_t before = gr_list_length(list);
    for (size_t i = 0; i < count; i++) {
        int failed = list->encoding == GR_LIST_COMPACT
                         ? gr_lcompact_push(&list->as.compact, end == GR_LIST_TAIL, values[i].data, values[i].length)
                         : gr_lseg_push(&list->as.seg, (gr_lseg_end_t)end, values[i].data, values[i].length);
        if (failed) {   /* all or nothing: take back what this call pushed */
            size_t pushed = gr_list_length(list) - before;
            gr_list_delete_range(list, end == GR_LIST_HEAD ? 0 : before, pushed);
            return -1;
        }
    }
    return 0;
}

int64_t gr_list_remove_matching(gr_list_t *list, const uint8_t *data, size_t length, int64_t count) {
    return list->encoding == GR_LIST_COMPACT ? gr_lcompact_remove_matching(&list->as.compact, data, length, count)
                                             : gr_lseg_remove_matching(&list->as.seg, data, length, count);
}

int gr_list_trim(gr_list_t *list, size_t start, size_t stop_inclusive) {
    size_t length = gr_list_length(list);
    if (start > stop_inclusive || start >= length) return gr_list_delete_range(list, 0, length);
    if (stop_inclusive < length - 1) gr_list_delete_range(list, stop_inclusive + 1, length - 1 - stop_inclusive);
    return gr_list_delete_range(list, 0, start);
}
