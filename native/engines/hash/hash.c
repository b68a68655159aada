/* hash.c — the hash value (layout and API in hash.h): a compact map (hash_compact.c) that
 * moves to lane T's open-addressing table (engines/table/) past the server's limits, and a
 * second map of the same kind for field expiry times, present only while some field has one.
 */
#include "engines/hash/hash.h"

#include <string.h>

/* A map in one of the two encodings: the table once table != NULL, else compact. */
typedef struct map {
    gr_hcompact_t compact;
    gr_table_t *table;
} map_t;

typedef struct gr_hash_ttl {
    map_t expires;          /* field -> 8-byte little-endian unix ms */
    int64_t next_expire_ms; /* the earliest of them */
} gr_hash_ttl_t;

struct gr_hash {
    map_t fields;
    gr_hash_ttl_t *ttl;     /* NULL: no field has a TTL */
};

static size_t volatile_hashes;   /* hashes whose ttl is not NULL (the server is one thread) */

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

static void ttl_drop(gr_hash_t *hash) {
    if (!hash->ttl) return;
    map_release(&hash->ttl->expires);
    gr_mem_free(hash->ttl, GR_MEM_HASH);
    hash->ttl = NULL;
    volatile_hashes--;
}

/* Forget a field's expiry (field deleted or its value replaced). */
static void ttl_forget(gr_hash_t *hash, const uint8_t *field, size_t field_length) {
    if (!hash->ttl) return;
    if (map_delete(&hash->ttl->expires, field, field_length) && map_count(&hash->ttl->expires) == 0)
        ttl_drop(hash);
    /* next_expire_ms may now be early: harmless, expire_due recomputes it */
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
        gr_hash_ttl_t *ttl = gr_mem_alloc(sizeof *ttl, GR_MEM_HASH);
        if (!ttl) {
            gr_hash_free(copy);
            return NULL;
        }
        copy->ttl = ttl;
        volatile_hashes++;
        ttl->next_expire_ms = hash->ttl->next_expire_ms;
        if (map_copy(&ttl->expires, &hash->ttl->expires)) {
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
        gr_hash_ttl_t *ttl = gr_mem_alloc(sizeof *ttl, GR_MEM_HASH);
        if (!ttl) return -1;
        memset(ttl, 0, sizeof *ttl);
        ttl->next_expire_ms = INT64_MAX;
        /* the TTL map holds at most as many fields as the hash: same encoding as the fields */
        if (hash->fields.table && map_convert(&ttl->expires)) {
            gr_mem_free(ttl, GR_MEM_HASH);
            return -1;
        }
        hash->ttl = ttl;
        volatile_hashes++;
    }
    uint8_t bytes[8];
    write_ms(bytes, at_ms);
    if (map_set(&hash->ttl->expires, field, field_length, bytes, 8, limits) < 0) {
        if (map_count(&hash->ttl->expires) == 0) ttl_drop(hash);
        return -1;
    }
    if (at_ms < hash->ttl->next_expire_ms) hash->ttl->next_expire_ms = at_ms;
    return 0;
}

int gr_hash_persist_field(gr_hash_t *hash, const uint8_t *field, size_t field_length) {
    if (!hash->ttl || !map_delete(&hash->ttl->expires, field, field_length)) return 0;
    if (map_count(&hash->ttl->expires) == 0) ttl_drop(hash);
    return 1;
}

#define EXPIRE_BATCH 64

/* Due fields are collected a batch at a time (deleting while iterating is not allowed),
 * and the earliest expiry left is recomputed on the way. */
size_t gr_hash_expire_due(gr_hash_t *hash, int64_t now_ms) {
    if (!hash->ttl || hash->ttl->next_expire_ms > now_ms) return 0;
    size_t removed = 0;
    for (;;) {
        struct { uint8_t *field; size_t length; } due[EXPIRE_BATCH];
        size_t n = 0;
        int64_t next = INT64_MAX;
        int more = 0;
        gr_hash_iter_t iter;
        gr_hash_entry_t entry;
        /* iterate the TTL map (same shape as the fields map) */
        gr_hash_t view = {.fields = hash->ttl->expires, .ttl = NULL};
        gr_hash_iter_start(&view, &iter);
        while (gr_hash_iter_next(&iter, &entry)) {
            int64_t at = read_ms(entry.value);
            if (at > now_ms) {
                if (at < next) next = at;
                continue;
            }
            if (n == EXPIRE_BATCH) { more = 1; continue; }
            due[n].field = gr_mem_alloc(entry.field_length ? entry.field_length : 1, GR_MEM_HASH);
            if (!due[n].field) { next = now_ms; more = 0; break; }   /* try again next time */
            memcpy(due[n].field, entry.field, entry.field_length);
            due[n].length = entry.field_length;
            n++;
        }
        hash->ttl->next_expire_ms = more ? now_ms : next;
        for (size_t i = 0; i < n; i++) {
            if (hash->ttl) map_delete(&hash->ttl->expires, due[i].field, due[i].length);
            map_delete(&hash->fields, due[i].field, due[i].length);
            gr_mem_free(due[i].field, GR_MEM_HASH);
            removed++;
        }
        if (hash->ttl && map_count(&hash->ttl->expires) == 0) ttl_drop(hash);
        if (!more || !hash->ttl || n == 0) break;
    }
    return removed;
}

int64_t gr_hash_next_expire(const gr_hash_t *hash) { return hash->ttl ? hash->ttl->next_expire_ms : INT64_MAX; }

size_t gr_hash_volatile_hashes(void) { return volatile_hashes; }

/* ---- queries ---- */

size_t gr_hash_count(const gr_hash_t *hash) { return map_count(&hash->fields); }

size_t gr_hash_allocated_bytes(const gr_hash_t *hash) {
    size_t bytes = gr_mem_usable(hash) + map_bytes(&hash->fields);
    if (hash->ttl) bytes += gr_mem_usable(hash->ttl) + map_bytes(&hash->ttl->expires);
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
