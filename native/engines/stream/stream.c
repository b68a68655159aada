/* stream.c — the stream engine's entries: the node directory, appends, tombstones, trimming,
 * iteration and Redis 7's lag bookkeeping (the layout is drawn in stream.h). Consumer groups
 * are stream_group.c, the snapshot body and copies stream_save.c; the command layer is
 * commands/cmd_stream*.c.
 */
#include "engines/stream/stream.h"

#include <string.h>

#include "core/varint.h"

#define FLAG_DELETED 1u
#define FLAG_SAME_FIELDS 2u

struct gr_stream_node {
    gr_stream_id_t master, last;    /* first and last entry ever appended to the node */
    uint32_t live, total;           /* live entries; entries including tombstones */
    uint32_t used, capacity;        /* bytes of data[] */
    uint32_t entries_start;         /* offset of the first entry (after the master fields) */
    uint32_t master_field_count;
    uint8_t data[];
};

/* ---- IDs ---- */

int gr_stream_id_incr(gr_stream_id_t *id) {
    if (id->seq == UINT64_MAX) {
        if (id->ms == UINT64_MAX) return -1;
        id->ms++;
        id->seq = 0;
    } else {
        id->seq++;
    }
    return 0;
}

int gr_stream_id_decr(gr_stream_id_t *id) {
    if (id->seq == 0) {
        if (id->ms == 0) return -1;
        id->ms--;
        id->seq = UINT64_MAX;
    } else {
        id->seq--;
    }
    return 0;
}

/* Digits of value at out; returns the count (no terminator). */
static size_t u64_digits(uint64_t value, char *out) {
    char reversed[20];
    size_t n = 0;
    do {
        reversed[n++] = (char)('0' + value % 10);
        value /= 10;
    } while (value);
    for (size_t i = 0; i < n; i++) out[i] = reversed[n - 1 - i];
    return n;
}

size_t gr_stream_id_format(const gr_stream_id_t *id, char *out) {
    /* every reply of an entry names its ID: digits by hand, not snprintf */
    size_t n = u64_digits(id->ms, out);
    out[n++] = '-';
    n += u64_digits(id->seq, out + n);
    out[n] = '\0';
    return n;
}

/* ---- nodes ---- */

static size_t node_bytes(const gr_stream_node_t *node) { return sizeof *node + node->capacity; }

static void node_free(gr_stream_node_t *node) { gr_mem_free(node, GR_MEM_STREAM); }

/* The entry at p: its ID and flags, the pair cursor; returns the byte after it. */
static const uint8_t *entry_decode(const gr_stream_node_t *node, const uint8_t *p, gr_stream_entry_t *entry,
                                   unsigned *flags) {
    size_t ms_delta, seq, n;
    *flags = *p++;
    p = varint_get(p, &ms_delta);
    p = varint_get(p, &seq);
    entry->id.ms = node->master.ms + ms_delta;
    entry->id.seq = ms_delta == 0 ? node->master.seq + seq : seq;
    const uint8_t *start;
    if (*flags & FLAG_SAME_FIELDS) {
        entry->pair_count = node->master_field_count;
        const uint8_t *fields = node->data;
        fields = varint_get(fields, &n);
        entry->fields = fields;
        start = p;
        for (size_t i = 0; i < entry->pair_count; i++) {
            p = varint_get(p, &n);
            p += n;
        }
    } else {
        p = varint_get(p, &n);
        entry->pair_count = n;
        entry->fields = NULL;
        start = p;
        for (size_t i = 0; i < 2 * entry->pair_count; i++) {
            p = varint_get(p, &n);
            p += n;
        }
    }
    entry->cursor = start;
    entry->remaining = entry->pair_count;
    return p;
}

int gr_stream_entry_next_pair(gr_stream_entry_t *entry, const uint8_t **field, size_t *field_length,
                              const uint8_t **value, size_t *value_length) {
    if (entry->remaining == 0) return 0;
    entry->remaining--;
    size_t n;
    if (entry->fields) {
        entry->fields = varint_get(entry->fields, &n);
        *field = entry->fields;
        *field_length = n;
        entry->fields += n;
    } else {
        entry->cursor = varint_get(entry->cursor, &n);
        *field = entry->cursor;
        *field_length = n;
        entry->cursor += n;
    }
    entry->cursor = varint_get(entry->cursor, &n);
    *value = entry->cursor;
    *value_length = n;
    entry->cursor += n;
    return 1;
}

/* Index of the last node whose master ID <= id, or -1 when every master is greater. */
static ptrdiff_t node_floor(const gr_stream_t *stream, const gr_stream_id_t *id) {
    size_t lo = 0, hi = stream->node_count;   /* answer in [lo - 1, hi - 1] */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (gr_stream_id_cmp(&stream->nodes[mid]->master, id) <= 0) lo = mid + 1;
        else hi = mid;
    }
    return (ptrdiff_t)lo - 1;
}

static void node_remove(gr_stream_t *stream, size_t index) {
    node_free(stream->nodes[index]);
    memmove(stream->nodes + index, stream->nodes + index + 1, (stream->node_count - index - 1) * sizeof *stream->nodes);
    stream->node_count--;
}

/* Shrink a node that will take no more entries to the bytes it uses. */
static void node_seal(gr_stream_t *stream, size_t index) {
    gr_stream_node_t *node = stream->nodes[index];
    if (node->capacity == node->used) return;
    gr_stream_node_t *shrunk = gr_mem_realloc(node, sizeof *node + node->used, GR_MEM_STREAM);
    if (!shrunk) return;   /* keeps the larger block */
    shrunk->capacity = shrunk->used;
    stream->nodes[index] = shrunk;
}

/* ---- Lifecycle ---- */

gr_stream_t *gr_stream_new(void) {
    gr_stream_t *stream = gr_mem_calloc(1, sizeof *stream, GR_MEM_STREAM);
    return stream;
}

void gr_stream_group_free_all(gr_stream_t *stream);   /* stream_group.c */

void gr_stream_free(gr_stream_t *stream) {
    if (!stream) return;
    for (size_t i = 0; i < stream->node_count; i++) node_free(stream->nodes[i]);
    gr_mem_free(stream->nodes, GR_MEM_STREAM);
    gr_stream_group_free_all(stream);
    gr_mem_free(stream, GR_MEM_STREAM);
}

size_t gr_stream_groups_allocated_bytes(const gr_stream_t *stream);   /* stream_group.c */

size_t gr_stream_allocated_bytes(const gr_stream_t *stream) {
    size_t total = gr_mem_usable(stream) + gr_mem_usable(stream->nodes);
    for (size_t i = 0; i < stream->node_count; i++) total += gr_mem_usable(stream->nodes[i]);
    return total + gr_stream_groups_allocated_bytes(stream);
}

/* ---- Entries ---- */

static size_t pairs_size(size_t pair_count, const size_t *lengths, int same_fields) {
    size_t size = same_fields ? 0 : varint_size(pair_count);
    for (size_t i = 0; i < pair_count; i++) {
        if (!same_fields) size += varint_size(lengths[2 * i]) + lengths[2 * i];
        size += varint_size(lengths[2 * i + 1]) + lengths[2 * i + 1];
    }
    return size;
}

static int same_as_master(const gr_stream_node_t *node, size_t pair_count, const uint8_t *const *items,
                          const size_t *lengths) {
    if (node->master_field_count != pair_count) return 0;
    const uint8_t *p = node->data;
    size_t n;
    p = varint_get(p, &n);
    for (size_t i = 0; i < pair_count; i++) {
        p = varint_get(p, &n);
        if (n != lengths[2 * i] || memcmp(p, items[2 * i], n) != 0) return 0;
        p += n;
    }
    return 1;
}

static int directory_reserve(gr_stream_t *stream, size_t count) {
    if (count <= stream->node_capacity) return 0;
    size_t capacity = stream->node_capacity ? stream->node_capacity * 2 : 4;
    while (capacity < count) capacity *= 2;
    gr_stream_node_t **nodes = gr_mem_realloc(stream->nodes, capacity * sizeof *nodes, GR_MEM_STREAM);
    if (!nodes) return -1;
    stream->nodes = nodes;
    stream->node_capacity = capacity;
    return 0;
}

int gr_stream_append(gr_stream_t *stream, const gr_stream_id_t *id, size_t pair_count, const uint8_t *const *items,
                     const size_t *lengths, const gr_stream_limits_t *limits) {
    gr_stream_node_t *node = stream->node_count ? stream->nodes[stream->node_count - 1] : NULL;
    int same = 0;
    size_t entry_size = 0;
    if (node) {
        same = same_as_master(node, pair_count, items, lengths);
        const size_t ms_delta = id->ms - node->master.ms;
        entry_size = 1 + varint_size(ms_delta) + varint_size(ms_delta ? id->seq : id->seq - node->master.seq) +
                     pairs_size(pair_count, lengths, same);
        if ((limits->node_max_entries && node->total >= limits->node_max_entries) ||
            (limits->node_max_bytes && node->used + entry_size > limits->node_max_bytes) ||
            node->used + entry_size > UINT32_MAX / 2) {
            node_seal(stream, stream->node_count - 1);
            node = NULL;
        }
    }
    if (!node) {
        /* a new node: its master is this entry's ID and fields */
        size_t fields = varint_size(pair_count);
        for (size_t i = 0; i < pair_count; i++) fields += varint_size(lengths[2 * i]) + lengths[2 * i];
        same = 1;
        entry_size = 1 + 1 + 1 + pairs_size(pair_count, lengths, 1);
        size_t need = fields + entry_size;
        if (need > UINT32_MAX / 2) return -1;
        size_t capacity = need < 256 ? 256 : need;
        if (limits->node_max_bytes && capacity > limits->node_max_bytes && need <= limits->node_max_bytes)
            capacity = limits->node_max_bytes;
        if (directory_reserve(stream, stream->node_count + 1) != 0) return -1;
        node = gr_mem_alloc(sizeof *node + capacity, GR_MEM_STREAM);
        if (!node) return -1;
        node->master = *id;
        node->last = *id;
        node->live = node->total = 0;
        node->capacity = (uint32_t)capacity;
        node->master_field_count = (uint32_t)pair_count;
        uint8_t *p = varint_put(node->data, pair_count);
        for (size_t i = 0; i < pair_count; i++) {
            p = varint_put(p, lengths[2 * i]);
            memcpy(p, items[2 * i], lengths[2 * i]);
            p += lengths[2 * i];
        }
        node->used = node->entries_start = (uint32_t)(p - node->data);
        stream->nodes[stream->node_count++] = node;
    } else if (node->used + entry_size > node->capacity) {
        size_t capacity = (size_t)node->capacity * 2;
        if (capacity < node->used + entry_size) capacity = node->used + entry_size;
        if (limits->node_max_bytes && capacity > limits->node_max_bytes && node->used + entry_size <= limits->node_max_bytes)
            capacity = limits->node_max_bytes;
        gr_stream_node_t *grown = gr_mem_realloc(node, sizeof *node + capacity, GR_MEM_STREAM);
        if (!grown) return -1;
        node = grown;
        node->capacity = (uint32_t)capacity;
        stream->nodes[stream->node_count - 1] = node;
    }
    uint8_t *p = node->data + node->used;
    const size_t ms_delta = id->ms - node->master.ms;
    *p++ = same ? FLAG_SAME_FIELDS : 0;
    p = varint_put(p, ms_delta);
    p = varint_put(p, ms_delta ? id->seq : id->seq - node->master.seq);
    if (!same) p = varint_put(p, pair_count);
    for (size_t i = 0; i < pair_count; i++) {
        if (!same) {
            p = varint_put(p, lengths[2 * i]);
            memcpy(p, items[2 * i], lengths[2 * i]);
            p += lengths[2 * i];
        }
        p = varint_put(p, lengths[2 * i + 1]);
        memcpy(p, items[2 * i + 1], lengths[2 * i + 1]);
        p += lengths[2 * i + 1];
    }
    node->used = (uint32_t)(p - node->data);
    node->live++;
    node->total++;
    node->last = *id;
    stream->length++;
    if (stream->length == 1) stream->first_id = *id;
    stream->last_id = *id;
    stream->entries_added++;
    return 0;
}

/* Find the live entry id: its node index and the offset of its flags byte. */
static int find_entry(const gr_stream_t *stream, const gr_stream_id_t *id, size_t *node_index, uint32_t *offset) {
    ptrdiff_t index = node_floor(stream, id);
    if (index < 0) return 0;
    const gr_stream_node_t *node = stream->nodes[index];
    if (gr_stream_id_cmp(id, &node->last) > 0) return 0;
    const uint8_t *p = node->data + node->entries_start, *end = node->data + node->used;
    while (p < end) {
        gr_stream_entry_t entry;
        unsigned flags;
        const uint8_t *next = entry_decode(node, p, &entry, &flags);
        int c = gr_stream_id_cmp(&entry.id, id);
        if (c > 0) return 0;
        if (c == 0) {
            if (flags & FLAG_DELETED) return 0;
            *node_index = (size_t)index;
            *offset = (uint32_t)(p - node->data);
            return 1;
        }
        p = next;
    }
    return 0;
}

int gr_stream_has_entry(const gr_stream_t *stream, const gr_stream_id_t *id) {
    size_t index;
    uint32_t offset;
    return find_entry(stream, id, &index, &offset);
}

static void refresh_first_id(gr_stream_t *stream) {
    if (stream->length == 0) stream->first_id = (gr_stream_id_t){0, 0};
    else gr_stream_edge_id(stream, 1, &stream->first_id);
}

int gr_stream_delete(gr_stream_t *stream, const gr_stream_id_t *id) {
    size_t index;
    uint32_t offset;
    if (!find_entry(stream, id, &index, &offset)) return 0;
    gr_stream_node_t *node = stream->nodes[index];
    node->data[offset] |= FLAG_DELETED;
    node->live--;
    stream->length--;
    if (node->live == 0) node_remove(stream, index);
    if (stream->length == 0 || gr_stream_id_cmp(id, &stream->first_id) == 0) refresh_first_id(stream);
    return 1;
}

uint64_t gr_stream_trim(gr_stream_t *stream, const gr_stream_trim_t *trim) {
    if (trim->strategy == GR_STREAM_TRIM_NONE) return 0;
    uint64_t deleted = 0;
    while (stream->node_count > 0) {
        if (trim->strategy == GR_STREAM_TRIM_MAXLEN && stream->length <= trim->maxlen) break;
        gr_stream_node_t *node = stream->nodes[0];
        const uint64_t entries = node->live;
        if (trim->limit > 0 && deleted + entries > (uint64_t)trim->limit) break;
        int remove_node = trim->strategy == GR_STREAM_TRIM_MAXLEN ? stream->length - entries >= trim->maxlen
                                                                  : gr_stream_id_cmp(&node->last, &trim->minid) < 0;
        if (remove_node) {
            stream->length -= entries;
            deleted += entries;
            node_remove(stream, 0);
            continue;
        }
        if (trim->approx) break;
        /* mark single entries of the first node deleted */
        uint8_t *p = node->data + node->entries_start, *end = node->data + node->used;
        while (p < end) {
            gr_stream_entry_t entry;
            unsigned flags;
            uint8_t *next = (uint8_t *)entry_decode(node, p, &entry, &flags);
            int stop = trim->strategy == GR_STREAM_TRIM_MAXLEN ? stream->length <= trim->maxlen
                                                              : gr_stream_id_cmp(&entry.id, &trim->minid) >= 0;
            if (stop) break;
            if (!(flags & FLAG_DELETED)) {
                *p |= FLAG_DELETED;
                node->live--;
                stream->length--;
                deleted++;
            }
            p = next;
        }
        if (node->live == 0) node_remove(stream, 0);   /* cannot happen as Redis trims; kept safe */
        break;
    }
    if (stream->length == 0) stream->first_id = (gr_stream_id_t){0, 0};
    else if (deleted) refresh_first_id(stream);
    return deleted;
}

int gr_stream_edge_id(const gr_stream_t *stream, int first, gr_stream_id_t *id) {
    if (stream->length == 0) return 0;
    gr_stream_iter_t iter;
    gr_stream_entry_t entry;
    gr_stream_iter_start(&iter, stream, NULL, NULL, !first);
    int found = gr_stream_iter_next(&iter, &entry);
    gr_stream_iter_stop(&iter);
    if (found) *id = entry.id;
    return found;
}

/* ---- Iteration ---- */

static int load_reverse_offsets(gr_stream_iter_t *iter) {
    const gr_stream_node_t *node = iter->stream->nodes[iter->node];
    if (node->total > iter->offset_capacity) {
        uint32_t capacity = node->total;
        uint32_t *offsets = iter->offsets == iter->inline_offsets ? NULL : iter->offsets;
        offsets = gr_mem_realloc(offsets, capacity * sizeof *offsets, GR_MEM_STREAM);
        if (!offsets) return -1;
        iter->offsets = offsets;
        iter->offset_capacity = capacity;
    }
    uint32_t count = 0;
    const uint8_t *p = node->data + node->entries_start, *end = node->data + node->used;
    while (p < end) {
        gr_stream_entry_t entry;
        unsigned flags;
        iter->offsets[count++] = (uint32_t)(p - node->data);
        p = entry_decode(node, p, &entry, &flags);
    }
    iter->offset_count = count;
    iter->position = count;
    return 0;
}

void gr_stream_iter_start(gr_stream_iter_t *iter, const gr_stream_t *stream, const gr_stream_id_t *start,
                          const gr_stream_id_t *end, int reverse) {
    iter->stream = stream;
    iter->start = start ? *start : (gr_stream_id_t){0, 0};
    iter->end = end ? *end : (gr_stream_id_t){UINT64_MAX, UINT64_MAX};
    iter->reverse = reverse;
    iter->offsets = iter->inline_offsets;
    iter->offset_capacity = sizeof iter->inline_offsets / sizeof iter->inline_offsets[0];
    iter->offset_count = 0;
    iter->node = SIZE_MAX;
    if (stream->node_count == 0 || gr_stream_id_cmp(&iter->start, &iter->end) > 0) return;
    if (!reverse) {
        ptrdiff_t index = node_floor(stream, &iter->start);
        iter->node = index < 0 ? 0 : (size_t)index;
        iter->position = stream->nodes[iter->node]->entries_start;
    } else {
        ptrdiff_t index = node_floor(stream, &iter->end);
        if (index < 0) return;
        iter->node = (size_t)index;
        if (load_reverse_offsets(iter) != 0) iter->node = SIZE_MAX;
    }
}

int gr_stream_iter_next(gr_stream_iter_t *iter, gr_stream_entry_t *entry) {
    const gr_stream_t *stream = iter->stream;
    while (iter->node != SIZE_MAX) {
        const gr_stream_node_t *node = stream->nodes[iter->node];
        if (!iter->reverse) {
            if (iter->position >= node->used) {
                if (++iter->node >= stream->node_count) {
                    iter->node = SIZE_MAX;
                    return 0;
                }
                iter->position = stream->nodes[iter->node]->entries_start;
                continue;
            }
            unsigned flags;
            const uint8_t *next = entry_decode(node, node->data + iter->position, entry, &flags);
            iter->position = (uint32_t)(next - node->data);
            if (gr_stream_id_cmp(&entry->id, &iter->end) > 0) {
                iter->node = SIZE_MAX;
                return 0;
            }
            if (!(flags & FLAG_DELETED) && gr_stream_id_cmp(&entry->id, &iter->start) >= 0) return 1;
        } else {
            if (iter->position == 0) {
                if (iter->node == 0) {
                    iter->node = SIZE_MAX;
                    return 0;
                }
                iter->node--;
                if (load_reverse_offsets(iter) != 0) {
                    iter->node = SIZE_MAX;
                    return 0;
                }
                continue;
            }
            unsigned flags;
            entry_decode(node, node->data + iter->offsets[--iter->position], entry, &flags);
            if (gr_stream_id_cmp(&entry->id, &iter->start) < 0) {
                iter->node = SIZE_MAX;
                return 0;
            }
            if (!(flags & FLAG_DELETED) && gr_stream_id_cmp(&entry->id, &iter->end) <= 0) return 1;
        }
    }
    return 0;
}

void gr_stream_iter_stop(gr_stream_iter_t *iter) {
    if (iter->offsets != iter->inline_offsets) gr_mem_free(iter->offsets, GR_MEM_STREAM);
    iter->offsets = iter->inline_offsets;
    iter->node = SIZE_MAX;
}

/* ---- Bookkeeping: Redis 7's lag estimate (t_stream.c's streamRangeHasTombstones,
 * streamEstimateDistanceFromFirstEverEntry and the lag XINFO GROUPS reports) ---- */

int gr_stream_range_has_tombstones(const gr_stream_t *stream, const gr_stream_id_t *start, const gr_stream_id_t *end) {
    if (stream->length == 0 || gr_stream_id_is_zero(&stream->max_deleted_entry_id)) return 0;
    if (gr_stream_id_cmp(&stream->first_id, &stream->max_deleted_entry_id) > 0) return 0;
    gr_stream_id_t s = start ? *start : (gr_stream_id_t){0, 0};
    gr_stream_id_t e = end ? *end : (gr_stream_id_t){UINT64_MAX, UINT64_MAX};
    return gr_stream_id_cmp(&s, &stream->max_deleted_entry_id) <= 0 &&
           gr_stream_id_cmp(&stream->max_deleted_entry_id, &e) <= 0;
}

int64_t gr_stream_estimate_distance(const gr_stream_t *stream, const gr_stream_id_t *id) {
    if (stream->entries_added == 0) return 0;
    if (stream->length == 0 && gr_stream_id_cmp(id, &stream->last_id) < 1) return (int64_t)stream->entries_added;
    int cmp_last = gr_stream_id_cmp(id, &stream->last_id);
    if (cmp_last == 0) return (int64_t)stream->entries_added;
    if (cmp_last > 0) return GR_STREAM_INVALID_ENTRIES_READ;
    int cmp_first = gr_stream_id_cmp(id, &stream->first_id);
    if (gr_stream_id_is_zero(&stream->max_deleted_entry_id) ||
        gr_stream_id_cmp(&stream->max_deleted_entry_id, &stream->first_id) < 0) {
        if (cmp_first < 0) return (int64_t)(stream->entries_added - stream->length);
        if (cmp_first == 0) return (int64_t)(stream->entries_added - stream->length + 1);
    }
    return GR_STREAM_INVALID_ENTRIES_READ;
}

int gr_stream_group_lag(const gr_stream_t *stream, const gr_stream_group_t *group, int64_t *lag) {
    if (stream->entries_added == 0) {
        *lag = 0;
        return 1;
    }
    if (group->entries_read != GR_STREAM_INVALID_ENTRIES_READ &&
        !gr_stream_range_has_tombstones(stream, &group->last_id, NULL)) {
        *lag = (int64_t)stream->entries_added - group->entries_read;
        return 1;
    }
    int64_t read = gr_stream_estimate_distance(stream, &group->last_id);
    if (read == GR_STREAM_INVALID_ENTRIES_READ) return 0;
    *lag = (int64_t)stream->entries_added - read;
    return 1;
}

/* Used by stream_save.c and the memory test: the bytes a node holds. */
size_t gr_stream_node_allocated(const gr_stream_node_t *node) { return node_bytes(node); }
