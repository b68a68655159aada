/* stream_group.c — the stream engine's consumer groups: groups and consumers kept sorted by
 * name (XINFO lists them in that order, as Redis's radix trees do), and the pending-entries
 * lists (PELs), sorted arrays of NACK pointers with a head offset (stream.h draws them). The
 * entries are stream.c; the commands are commands/cmd_stream*.c.
 */
#include "engines/stream/stream.h"

#include <string.h>

/* ---- names ---- */

static int name_cmp(const uint8_t *a, size_t al, const uint8_t *b, size_t bl) {
    int c = memcmp(a, b, al < bl ? al : bl);
    if (c) return c;
    return al < bl ? -1 : al > bl;
}

static uint8_t *name_copy(const uint8_t *name, size_t length) {
    uint8_t *copy = gr_mem_alloc(length ? length : 1, GR_MEM_STREAM);
    if (copy && length) memcpy(copy, name, length);
    return copy;
}

/* Groups and consumers both open with (name, name_length): the position of name in a sorted
 * array of either, *found set when it is there. */
typedef struct named {
    uint8_t *name;
    size_t name_length;
} named_t;

static size_t named_search(void *const *items, size_t count, const uint8_t *name, size_t length, int *found) {
    size_t lo = 0, hi = count;
    *found = 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const named_t *item = items[mid];
        int c = name_cmp(item->name, item->name_length, name, length);
        if (c == 0) {
            *found = 1;
            return mid;
        }
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}
#define NAMED_SEARCH(items, count, name, length, found) named_search((void *const *)(items), count, name, length, found)

static int grow_pointers(void ***items, size_t *capacity, size_t count) {
    if (count < *capacity) return 0;
    size_t grown = *capacity ? *capacity * 2 : 4;
    void **p = gr_mem_realloc(*items, grown * sizeof *p, GR_MEM_STREAM);
    if (!p) return -1;
    *items = p;
    *capacity = grown;
    return 0;
}

/* ---- PELs ---- */

size_t gr_stream_pel_lower_bound(const gr_stream_pel_t *pel, const gr_stream_id_t *id) {
    size_t lo = 0, hi = pel->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (gr_stream_id_cmp(&pel->items[pel->head + mid]->id, id) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

gr_stream_nack_t *gr_stream_pel_find(const gr_stream_pel_t *pel, const gr_stream_id_t *id) {
    size_t index = gr_stream_pel_lower_bound(pel, id);
    if (index < pel->count && gr_stream_id_cmp(&pel->items[pel->head + index]->id, id) == 0)
        return pel->items[pel->head + index];
    return NULL;
}

/* Make room for one more item: 0, or -1 OOM. */
static int pel_reserve(gr_stream_pel_t *pel) {
    if (pel->head + pel->count < pel->capacity) return 0;
    if (pel->head > 0 && pel->head >= pel->capacity / 4) {   /* slide down rather than grow */
        memmove(pel->items, pel->items + pel->head, pel->count * sizeof *pel->items);
        pel->head = 0;
        return 0;
    }
    if (pel->capacity >= UINT32_MAX / 2) return -1;
    uint32_t capacity = pel->capacity ? pel->capacity * 2 : 4;
    gr_stream_nack_t **items = gr_mem_realloc(pel->items, capacity * sizeof *items, GR_MEM_STREAM);
    if (!items) return -1;
    pel->items = items;
    pel->capacity = capacity;
    return 0;
}

static int pel_insert(gr_stream_pel_t *pel, gr_stream_nack_t *nack) {
    if (pel_reserve(pel) != 0) return -1;
    size_t index = gr_stream_pel_lower_bound(pel, &nack->id);
    gr_stream_nack_t **base = pel->items + pel->head;
    memmove(base + index + 1, base + index, (pel->count - index) * sizeof *base);
    base[index] = nack;
    pel->count++;
    return 0;
}

static void pel_remove(gr_stream_pel_t *pel, const gr_stream_id_t *id) {
    size_t index = gr_stream_pel_lower_bound(pel, id);
    if (index >= pel->count || gr_stream_id_cmp(&pel->items[pel->head + index]->id, id) != 0) return;
    if (index == 0) {
        pel->head++;
    } else {
        gr_stream_nack_t **base = pel->items + pel->head;
        memmove(base + index, base + index + 1, (pel->count - index - 1) * sizeof *base);
    }
    pel->count--;
    if (pel->count == 0) pel->head = 0;
}

static void pel_release(gr_stream_pel_t *pel) {
    gr_mem_free(pel->items, GR_MEM_STREAM);
    memset(pel, 0, sizeof *pel);
}

/* ---- consumers ---- */

static void consumer_free(gr_stream_consumer_t *consumer) {
    pel_release(&consumer->pel);
    gr_mem_free(consumer->name, GR_MEM_STREAM);
    gr_mem_free(consumer, GR_MEM_STREAM);
}

gr_stream_consumer_t *gr_stream_consumer_find(const gr_stream_group_t *group, const uint8_t *name, size_t length) {
    int found;
    size_t index = NAMED_SEARCH(group->consumers, group->consumer_count, name, length, &found);
    return found ? group->consumers[index] : NULL;
}

int gr_stream_consumer_create(gr_stream_group_t *group, const uint8_t *name, size_t length, int64_t now_ms,
                              gr_stream_consumer_t **out) {
    int found;
    size_t index = NAMED_SEARCH(group->consumers, group->consumer_count, name, length, &found);
    if (found) {
        *out = group->consumers[index];
        return 1;
    }
    if (grow_pointers((void ***)&group->consumers, &group->consumer_capacity, group->consumer_count) != 0) return -1;
    gr_stream_consumer_t *consumer = gr_mem_calloc(1, sizeof *consumer, GR_MEM_STREAM);
    if (!consumer) return -1;
    if (!(consumer->name = name_copy(name, length))) {
        gr_mem_free(consumer, GR_MEM_STREAM);
        return -1;
    }
    consumer->name_length = length;
    consumer->seen_time = now_ms;
    memmove(group->consumers + index + 1, group->consumers + index,
            (group->consumer_count - index) * sizeof *group->consumers);
    group->consumers[index] = consumer;
    group->consumer_count++;
    *out = consumer;
    return 0;
}

size_t gr_stream_consumer_delete(gr_stream_group_t *group, gr_stream_consumer_t *consumer) {
    size_t pending = consumer->pel.count;
    for (size_t i = 0; i < pending; i++) {
        gr_stream_nack_t *nack = gr_stream_pel_at(&consumer->pel, i);
        pel_remove(&group->pel, &nack->id);
        gr_mem_free(nack, GR_MEM_STREAM);
    }
    int found;
    size_t index = NAMED_SEARCH(group->consumers, group->consumer_count, consumer->name, consumer->name_length, &found);
    if (found) {
        memmove(group->consumers + index, group->consumers + index + 1,
                (group->consumer_count - index - 1) * sizeof *group->consumers);
        group->consumer_count--;
    }
    consumer_free(consumer);
    return pending;
}

/* ---- NACKs ---- */

gr_stream_nack_t *gr_stream_nack_add(gr_stream_group_t *group, gr_stream_consumer_t *consumer, const gr_stream_id_t *id,
                                     int64_t now_ms, uint64_t delivery_count) {
    gr_stream_nack_t *nack = gr_mem_alloc(sizeof *nack, GR_MEM_STREAM);
    if (!nack) return NULL;
    nack->id = *id;
    nack->delivery_time = now_ms;
    nack->delivery_count = delivery_count;
    nack->consumer = consumer;
    if (pel_insert(&group->pel, nack) != 0) {
        gr_mem_free(nack, GR_MEM_STREAM);
        return NULL;
    }
    if (pel_insert(&consumer->pel, nack) != 0) {
        pel_remove(&group->pel, id);
        gr_mem_free(nack, GR_MEM_STREAM);
        return NULL;
    }
    return nack;
}

int gr_stream_nack_move(gr_stream_group_t *group, gr_stream_nack_t *nack, gr_stream_consumer_t *consumer) {
    (void)group;
    if (nack->consumer == consumer) return 0;
    if (pel_insert(&consumer->pel, nack) != 0) return -1;
    pel_remove(&nack->consumer->pel, &nack->id);
    nack->consumer = consumer;
    return 0;
}

int gr_stream_nack_ack(gr_stream_group_t *group, const gr_stream_id_t *id) {
    gr_stream_nack_t *nack = gr_stream_pel_find(&group->pel, id);
    if (!nack) return 0;
    pel_remove(&nack->consumer->pel, id);
    pel_remove(&group->pel, id);
    gr_mem_free(nack, GR_MEM_STREAM);
    return 1;
}

/* ---- groups ---- */

static void group_free(gr_stream_group_t *group) {
    for (size_t i = 0; i < group->pel.count; i++) gr_mem_free(gr_stream_pel_at(&group->pel, i), GR_MEM_STREAM);
    pel_release(&group->pel);
    for (size_t i = 0; i < group->consumer_count; i++) consumer_free(group->consumers[i]);
    gr_mem_free(group->consumers, GR_MEM_STREAM);
    gr_mem_free(group->name, GR_MEM_STREAM);
    gr_mem_free(group, GR_MEM_STREAM);
}

void gr_stream_group_free_all(gr_stream_t *stream) {
    for (size_t i = 0; i < stream->group_count; i++) group_free(stream->groups[i]);
    gr_mem_free(stream->groups, GR_MEM_STREAM);
    stream->groups = NULL;
    stream->group_count = stream->group_capacity = 0;
}

gr_stream_group_t *gr_stream_group_find(const gr_stream_t *stream, const uint8_t *name, size_t length) {
    int found;
    size_t index = NAMED_SEARCH(stream->groups, stream->group_count, name, length, &found);
    return found ? stream->groups[index] : NULL;
}

int gr_stream_group_create(gr_stream_t *stream, const uint8_t *name, size_t length, const gr_stream_id_t *last_id,
                           int64_t entries_read, gr_stream_group_t **out) {
    int found;
    size_t index = NAMED_SEARCH(stream->groups, stream->group_count, name, length, &found);
    if (found) {
        *out = stream->groups[index];
        return 1;
    }
    if (grow_pointers((void ***)&stream->groups, &stream->group_capacity, stream->group_count) != 0) return -1;
    gr_stream_group_t *group = gr_mem_calloc(1, sizeof *group, GR_MEM_STREAM);
    if (!group) return -1;
    if (!(group->name = name_copy(name, length))) {
        gr_mem_free(group, GR_MEM_STREAM);
        return -1;
    }
    group->name_length = length;
    group->last_id = *last_id;
    group->entries_read = entries_read;
    memmove(stream->groups + index + 1, stream->groups + index, (stream->group_count - index) * sizeof *stream->groups);
    stream->groups[index] = group;
    stream->group_count++;
    *out = group;
    return 0;
}

int gr_stream_group_destroy(gr_stream_t *stream, const uint8_t *name, size_t length) {
    int found;
    size_t index = NAMED_SEARCH(stream->groups, stream->group_count, name, length, &found);
    if (!found) return 0;
    group_free(stream->groups[index]);
    memmove(stream->groups + index, stream->groups + index + 1, (stream->group_count - index - 1) * sizeof *stream->groups);
    stream->group_count--;
    return 1;
}

size_t gr_stream_groups_allocated_bytes(const gr_stream_t *stream) {
    size_t total = gr_mem_usable(stream->groups);
    for (size_t g = 0; g < stream->group_count; g++) {
        const gr_stream_group_t *group = stream->groups[g];
        total += gr_mem_usable(group) + gr_mem_usable(group->name) + gr_mem_usable(group->pel.items) +
                 gr_mem_usable(group->consumers);
        for (size_t i = 0; i < group->pel.count; i++) total += gr_mem_usable(gr_stream_pel_at(&group->pel, i));
        for (size_t c = 0; c < group->consumer_count; c++) {
            const gr_stream_consumer_t *consumer = group->consumers[c];
            total += gr_mem_usable(consumer) + gr_mem_usable(consumer->name) + gr_mem_usable(consumer->pel.items);
        }
    }
    return total;
}
