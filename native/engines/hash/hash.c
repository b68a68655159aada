/* hash.c — the hash value (layout and API in hash.h): a compact map (hash_compact.c) that
 * moves to the open-addressing table (engines/table/) past the server's limits, and, only
 * while some field has an expiry, a second map of the same kind (field -> time) with a
 * min-heap of (time, field copy) over it, so that finding what is due costs O(log n) per
 * field expired rather than a pass over every TTL.
 */
#include "engines/hash/hash.h"

#include <string.h>

/* A map in one of the two encodings: the table once table != NULL, else compact. */
typedef struct map {
    gr_hcompact_t compact;
    gr_table_t *table;
} map_t;

/* One pending expiry in the heap: its time and a copy of the field (the table may move its
 * entries, so the heap cannot point into it). */
typedef struct ttl_item {
    int64_t at;
    uint32_t length;
    uint8_t field[];
} ttl_item_t;

typedef struct gr_hash_ttl {
    map_t expires;          /* field -> 8-byte little-endian unix ms: the truth */
    ttl_item_t **heap;      /* a min-heap by time; an item the map no longer agrees with is stale */
    size_t heap_count, heap_capacity;
    size_t item_bytes;      /* the items' allocations, for allocated_bytes */
} gr_hash_ttl_t;

struct gr_hash {
    map_t fields;
    gr_hash_ttl_t *ttl;     /* NULL: no field has a TTL */
};

static size_t volatile_hashes;   /* hashes whose ttl is not NULL; atomic: a replica's full-sync load builds hashes on a
                                 * thread of its own (server/replica.c) and frees the old data on another */

/* ---- the two-encoding map ---- */

static void entry_from_pair(gr_hash_entry_t *entry, const gr_hcompact_pair_t *pair) {
    entry->field = pair->field;
    entry->field_length = pair->field_length;
    entry->value = pair->value;
    entry->value_length = pair->value_length;
}

static void entry_from_table(gr_hash_entry_t *entry, gr_bytes_t key, gr_bytes_t value) {
    entry->field = key.data;
    entry->field_length = key.length;
    entry->value = value.data;
    entry->value_length = value.length;
}

static void map_release(map_t *map) {
    if (map->table) gr_table_free(map->table);
    map->table = NULL;
    gr_hcompact_release(&map->compact);
}

static size_t map_count(const map_t *map) {
    return map->table ? gr_table_count(map->table) : gr_hcompact_count(&map->compact);
}

static size_t map_bytes(const map_t *map) {
    return map->table ? gr_table_allocated_bytes(map->table) : gr_hcompact_allocated_bytes(&map->compact);
}

static int map_get(const map_t *map, const uint8_t *field, size_t field_length, gr_hash_entry_t *entry) {
    if (map->table) {
        gr_bytes_t value;
        if (!gr_table_get(map->table, field, field_length, &value)) return 0;
        if (entry) entry_from_table(entry, (gr_bytes_t){field, (uint32_t)field_length}, value);
        return 1;
    }
    gr_hcompact_pair_t pair;
    if (!gr_hcompact_get(&map->compact, field, field_length, &pair)) return 0;
    if (entry) entry_from_pair(entry, &pair);
    return 1;
}

/* Move a compact map into a new table: 0, or -1 out of memory (still compact). */
static int map_convert(map_t *map) {
    gr_table_t *table = gr_table_new(1, GR_MEM_HASH);
    if (!table) return -1;
    gr_table_reserve(table, map->compact.count + 1);
    uint32_t offset = 0;
    gr_hcompact_pair_t pair;
    while (gr_hcompact_next(&map->compact, &offset, &pair)) {
        if (gr_table_set(table, pair.field, pair.field_length, pair.value, pair.value_length) < 0) {
            gr_table_free(table);
            return -1;
        }
    }
    gr_hcompact_release(&map->compact);
    map->table = table;
    return 0;
}

static int map_set(map_t *map, const uint8_t *field, size_t field_length, const uint8_t *value,
                   size_t value_length, const gr_hash_limits_t *limits) {
    if (!map->table) {
        int too_long = (int64_t)field_length > limits->max_compact_value ||
                       (int64_t)value_length > limits->max_compact_value;
        int too_many = (int64_t)map->compact.count + 1 > limits->max_compact_entries &&
                       !gr_hcompact_get(&map->compact, field, field_length, &(gr_hcompact_pair_t){0});
        if (too_long || too_many) {
            if (map_convert(map)) return -1;
        } else {
            return gr_hcompact_set(&map->compact, field, field_length, value, value_length);
        }
    }
    return gr_table_set(map->table, field, field_length, value, value_length);
}

int gr_hash_reserve(gr_hash_t *hash, size_t count, const gr_hash_limits_t *limits) {
    if (!hash->fields.table && (int64_t)count > limits->max_compact_entries && map_convert(&hash->fields)) return -1;
    if (hash->fields.table) gr_table_reserve(hash->fields.table, count);
    return 0;
}

int gr_hash_add_many(gr_hash_t *hash, const gr_bytes_t *fields, const gr_bytes_t *values, size_t count,
                     const gr_hash_limits_t *limits) {
    if (hash->fields.table) {
        int added = gr_table_add_many(hash->fields.table, fields, values, count);
        return added < 0 ? added : 0;
    }
    for (size_t i = 0; i < count; i++) {
        int added = map_set(&hash->fields, fields[i].data, fields[i].length, values[i].data, values[i].length, limits);
        if (added != 1) return added < 0 ? -1 : -2;
    }
    return 0;
}

static int map_delete(map_t *map, const uint8_t *field, size_t field_length) {
    return map->table ? gr_table_delete(map->table, field, field_length)
                      : gr_hcompact_delete(&map->compact, field, field_length);
}

static int map_copy(map_t *copy, const map_t *map) {
    memset(copy, 0, sizeof *copy);
    if (map->table) {
        copy->table = gr_table_duplicate(map->table);
        return copy->table ? 0 : -1;
    }
    return gr_hcompact_copy(&copy->compact, &map->compact);
}

/* ---- field expiry's map ---- */

static int64_t read_ms(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return (int64_t)v;
}

static void write_ms(uint8_t *p, int64_t ms) {
    uint64_t v = (uint64_t)ms;
    for (int i = 0; i < 8; i++) { p[i] = (uint8_t)v; v >>= 8; }
}

static void heap_swap(ttl_item_t **heap, size_t i, size_t j) {
    ttl_item_t *t = heap[i];
    heap[i] = heap[j];
    heap[j] = t;
}

static void heap_sift_down(gr_hash_ttl_t *ttl, size_t i) {
    for (;;) {
        size_t left = 2 * i + 1, right = left + 1, least = i;
        if (left < ttl->heap_count && ttl->heap[left]->at < ttl->heap[least]->at) least = left;
        if (right < ttl->heap_count && ttl->heap[right]->at < ttl->heap[least]->at) least = right;
        if (least == i) return;
        heap_swap(ttl->heap, i, least);
        i = least;
    }
}

static void item_free(gr_hash_ttl_t *ttl, ttl_item_t *item) {
    ttl->item_bytes -= gr_mem_usable(item);
    gr_mem_free(item, GR_MEM_HASH);
}

static void heap_clear(gr_hash_ttl_t *ttl) {
    for (size_t i = 0; i < ttl->heap_count; i++) item_free(ttl, ttl->heap[i]);
    ttl->heap_count = 0;
}

/* Add (field, at): 0, or -1 out of memory (nothing added). */
static int heap_push(gr_hash_ttl_t *ttl, const uint8_t *field, size_t length, int64_t at) {
    if (ttl->heap_count == ttl->heap_capacity) {
        size_t capacity = ttl->heap_capacity ? ttl->heap_capacity * 2 : 8;
        ttl_item_t **grown = gr_mem_realloc(ttl->heap, capacity * sizeof *grown, GR_MEM_HASH);
        if (!grown) return -1;
        ttl->heap = grown;
        ttl->heap_capacity = capacity;
    }
    ttl_item_t *item = gr_mem_alloc(sizeof *item + (length ? length : 1), GR_MEM_HASH);
    if (!item) return -1;
    ttl->item_bytes += gr_mem_usable(item);
    item->at = at;
    item->length = (uint32_t)length;
    if (length) memcpy(item->field, field, length);
    size_t i = ttl->heap_count++;
    ttl->heap[i] = item;
    while (i > 0 && ttl->heap[(i - 1) / 2]->at > ttl->heap[i]->at) {
        heap_swap(ttl->heap, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
    return 0;
}

static ttl_item_t *heap_pop(gr_hash_ttl_t *ttl) {
    ttl_item_t *top = ttl->heap[0];
    ttl->heap[0] = ttl->heap[--ttl->heap_count];
    heap_sift_down(ttl, 0);
    return top;
}

/* The heap again from the map alone (its stale items dropped): 0, or -1 out of memory. */
static int heap_rebuild(gr_hash_ttl_t *ttl) {
    heap_clear(ttl);
    gr_hash_t view = {.fields = ttl->expires, .ttl = NULL};
    gr_hash_iter_t iter;
    gr_hash_entry_t entry;
    gr_hash_iter_start(&view, &iter);
    while (gr_hash_iter_next(&iter, &entry))
        if (heap_push(ttl, entry.field, entry.field_length, read_ms(entry.value))) return -1;
    return 0;
}

static void ttl_drop(gr_hash_t *hash) {
    gr_hash_ttl_t *ttl = hash->ttl;
    if (!ttl) return;
    heap_clear(ttl);
    gr_mem_free(ttl->heap, GR_MEM_HASH);
    map_release(&ttl->expires);
    gr_mem_free(ttl, GR_MEM_HASH);
    hash->ttl = NULL;
    __atomic_sub_fetch(&volatile_hashes, 1, __ATOMIC_RELAXED);
}

static gr_hash_ttl_t *ttl_new(void) {
    gr_hash_ttl_t *ttl = gr_mem_alloc(sizeof *ttl, GR_MEM_HASH);
    if (ttl) memset(ttl, 0, sizeof *ttl);
    return ttl;
}

/* Forget a field's expiry (field deleted or its value replaced); its heap item goes stale. */
static void ttl_forget(gr_hash_t *hash, const uint8_t *field, size_t field_length) {
    if (!hash->ttl) return;
    if (map_delete(&hash->ttl->expires, field, field_length) && map_count(&hash->ttl->expires) == 0)
        ttl_drop(hash);
}

/* ---- lifecycle ---- */

gr_hash_t *gr_hash_new(void) {
    gr_hash_t *hash = gr_mem_alloc(sizeof *hash, GR_MEM_HASH);
    if (hash) memset(hash, 0, sizeof *hash);
    return hash;
}

void gr_hash_free(gr_hash_t *hash) {
    if (!hash) return;
    ttl_drop(hash);
    map_release(&hash->fields);
    gr_mem_free(hash, GR_MEM_HASH);
}

gr_hash_t *gr_hash_duplicate(const gr_hash_t *hash) {
    gr_hash_t *copy = gr_hash_new();
    if (!copy) return NULL;
    if (map_copy(&copy->fields, &hash->fields)) {
        gr_hash_free(copy);
        return NULL;
    }
    if (hash->ttl) {
        gr_hash_ttl_t *ttl = ttl_new();
        if (!ttl) {
            gr_hash_free(copy);
            return NULL;
        }
        copy->ttl = ttl;
        __atomic_add_fetch(&volatile_hashes, 1, __ATOMIC_RELAXED);
        if (map_copy(&ttl->expires, &hash->ttl->expires) || heap_rebuild(ttl)) {
            gr_hash_free(copy);
            return NULL;
        }
    }
    return copy;
}

/* ---- access ---- */

int gr_hash_get(const gr_hash_t *hash, const uint8_t *field, size_t field_length, gr_hash_entry_t *entry) {
    return map_get(&hash->fields, field, field_length, entry);
}

int gr_hash_set(gr_hash_t *hash, const uint8_t *field, size_t field_length, const uint8_t *value,
                size_t value_length, int keep_ttl, const gr_hash_limits_t *limits) {
    int added = map_set(&hash->fields, field, field_length, value, value_length, limits);
    if (added == 0 && !keep_ttl) ttl_forget(hash, field, field_length);
    return added;
}

int gr_hash_delete(gr_hash_t *hash, const uint8_t *field, size_t field_length) {
    if (!map_delete(&hash->fields, field, field_length)) return 0;
    ttl_forget(hash, field, field_length);
    return 1;
}

/* ---- field expiry ---- */

int64_t gr_hash_field_expire(const gr_hash_t *hash, const uint8_t *field, size_t field_length) {
    if (!map_get(&hash->fields, field, field_length, NULL)) return -2;
    gr_hash_entry_t entry;
    if (!hash->ttl || !map_get(&hash->ttl->expires, field, field_length, &entry)) return -1;
    return read_ms(entry.value);
}

int gr_hash_set_field_expire(gr_hash_t *hash, const uint8_t *field, size_t field_length, int64_t at_ms,
                             const gr_hash_limits_t *limits) {
    if (at_ms < 0 || !map_get(&hash->fields, field, field_length, NULL)) return -1;
    if (!hash->ttl) {
        gr_hash_ttl_t *ttl = ttl_new();
        if (!ttl) return -1;
        /* the TTL map holds at most as many fields as the hash: same encoding as the fields */
        if (hash->fields.table && map_convert(&ttl->expires)) {
            gr_mem_free(ttl, GR_MEM_HASH);
            return -1;
        }
        hash->ttl = ttl;
        __atomic_add_fetch(&volatile_hashes, 1, __ATOMIC_RELAXED);
    }
    gr_hash_ttl_t *ttl = hash->ttl;
    uint8_t bytes[8];
    write_ms(bytes, at_ms);
    if (heap_push(ttl, field, field_length, at_ms) || map_set(&ttl->expires, field, field_length, bytes, 8, limits) < 0) {
        if (map_count(&ttl->expires) == 0) ttl_drop(hash);
        return -1;   /* a pushed item without its map entry is only stale */
    }
    /* stale items (expiries replaced or dropped) are cleared once they outnumber the live ones */
    if (ttl->heap_count > 2 * map_count(&ttl->expires) + 16) heap_rebuild(ttl);
    return 0;
}

int gr_hash_persist_field(gr_hash_t *hash, const uint8_t *field, size_t field_length) {
    if (!hash->ttl || !map_delete(&hash->ttl->expires, field, field_length)) return 0;
    if (map_count(&hash->ttl->expires) == 0) ttl_drop(hash);
    return 1;
}

/* Pop the heap while its earliest time has passed; an item the map still agrees with (same
 * field, same time) is due: the field goes. O(log n) per item popped. */
size_t gr_hash_expire_due(gr_hash_t *hash, int64_t now_ms) {
    size_t removed = 0;
    while (hash->ttl && hash->ttl->heap_count && hash->ttl->heap[0]->at <= now_ms) {
        gr_hash_ttl_t *ttl = hash->ttl;
        ttl_item_t *item = heap_pop(ttl);
        gr_hash_entry_t entry;
        if (map_get(&ttl->expires, item->field, item->length, &entry) && read_ms(entry.value) == item->at) {
            map_delete(&hash->fields, item->field, item->length);
            map_delete(&ttl->expires, item->field, item->length);
            removed++;
        }
        item_free(ttl, item);
        if (map_count(&ttl->expires) == 0) ttl_drop(hash);
    }
    return removed;
}

int64_t gr_hash_next_expire(const gr_hash_t *hash) {
    return hash->ttl && hash->ttl->heap_count ? hash->ttl->heap[0]->at : INT64_MAX;
}

size_t gr_hash_volatile_hashes(void) { return __atomic_load_n(&volatile_hashes, __ATOMIC_RELAXED); }

/* ---- queries ---- */

size_t gr_hash_count(const gr_hash_t *hash) { return map_count(&hash->fields); }

size_t gr_hash_allocated_bytes(const gr_hash_t *hash) {
    size_t bytes = gr_mem_usable(hash) + map_bytes(&hash->fields);
    if (hash->ttl)
        bytes += gr_mem_usable(hash->ttl) + map_bytes(&hash->ttl->expires) + gr_mem_usable(hash->ttl->heap) +
                 hash->ttl->item_bytes;
    return bytes;
}

const char *gr_hash_encoding_name(const gr_hash_t *hash) {
    if (hash->fields.table) return "hashtable";
    return hash->ttl ? "listpackex" : "listpack";
}

int gr_hash_is_compact(const gr_hash_t *hash) { return hash->fields.table == NULL; }

/* ---- bulk ---- */

void gr_hash_iter_start(const gr_hash_t *hash, gr_hash_iter_t *iter) {
    iter->hash = hash;
    iter->offset = 0;
    if (hash->fields.table) gr_table_iter_start(hash->fields.table, &iter->table);
}

int gr_hash_iter_next(gr_hash_iter_t *iter, gr_hash_entry_t *entry) {
    const map_t *map = &iter->hash->fields;
    if (map->table) {
        gr_bytes_t key, value;
        if (!gr_table_iter_next(&iter->table, &key, &value)) return 0;
        entry_from_table(entry, key, value);
        return 1;
    }
    gr_hcompact_pair_t pair;
    if (!gr_hcompact_next(&map->compact, &iter->offset, &pair)) return 0;
    entry_from_pair(entry, &pair);
    return 1;
}

typedef struct scan_adapter {
    gr_hash_visit_t visit;
    void *context;
} scan_adapter_t;

static void scan_visit(void *context, gr_bytes_t key, gr_bytes_t value) {
    scan_adapter_t *adapter = context;
    gr_hash_entry_t entry;
    entry_from_table(&entry, key, value);
    adapter->visit(adapter->context, &entry);
}

uint64_t gr_hash_scan(const gr_hash_t *hash, uint64_t cursor, size_t count, gr_hash_visit_t visit, void *context) {
    if (hash->fields.table) {
        scan_adapter_t adapter = {visit, context};
        return gr_table_scan(hash->fields.table, cursor, count, scan_visit, &adapter);
    }
    gr_hash_iter_t iter;
    gr_hash_entry_t entry;
    gr_hash_iter_start(hash, &iter);
    while (gr_hash_iter_next(&iter, &entry)) visit(context, &entry);
    return 0;
}

int gr_hash_random(const gr_hash_t *hash, uint64_t random, gr_hash_entry_t *entry) {
    const map_t *map = &hash->fields;
    if (map->table) {
        gr_bytes_t key, value;
        if (!gr_table_random(map->table, random, &key, &value)) return 0;
        entry_from_table(entry, key, value);
        return 1;
    }
    if (map->compact.count == 0) return 0;
    gr_hcompact_pair_t pair;
    gr_hcompact_at(&map->compact, (size_t)(random % map->compact.count), &pair);
    entry_from_pair(entry, &pair);
    return 1;
}
