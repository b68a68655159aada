/* set.c — the set engine (layout, encodings and conversions in set.h): an intset
 * (set_intset.c), a compact buffer of entries (here), or the table engine (engines/table/),
 * behind one API. The command layer is commands/cmd_set.c. */
#include "engines/set/set.h"

#include <string.h>

#include "core/number.h"
#include "core/varint.h"

/* Redis caps set-max-intset-entries at 1 << 30 (intsetMaxEntries). */
static size_t intset_limit(const gr_set_config_t *config) {
    return config->max_intset_entries > (1u << 30) ? (1u << 30) : config->max_intset_entries;
}

static int as_integer(const uint8_t *data, size_t length, int64_t *value) {
    return length > 0 && length <= 20 && gr_bytes_to_int64(data, length, value) == 0;
}

static void member_from_integer(gr_set_member_t *member, int64_t value) {
    member->length = gr_int64_to_text(value, member->text);
    member->data = (const uint8_t *)member->text;
}

/* ---- compact: packed [varint length][bytes] entries ---- */

static void compact_release(gr_set_compact_t *c) {
    gr_mem_free(c->buffer, GR_MEM_SET);
    memset(c, 0, sizeof *c);
}

/* Offset of the entry equal to data, or -1. */
static int64_t compact_find(const gr_set_compact_t *c, const uint8_t *data, size_t length) {
    const uint8_t *p = c->buffer, *end = c->buffer + c->bytes;
    while (p < end) {
        size_t n;
        const uint8_t *value = varint_get(p, &n);
        if (n == length && memcmp(value, data, length) == 0) return p - c->buffer;
        p = value + n;
    }
    return -1;
}

static int compact_append(gr_set_compact_t *c, const uint8_t *data, size_t length) {
    size_t need = varint_size(length) + length;
    if ((size_t)c->bytes + need > UINT32_MAX) return -1;
    if (c->bytes + need > c->capacity) {
        size_t capacity = c->bytes + need;
        capacity += capacity / 4;
        if (capacity > UINT32_MAX) capacity = UINT32_MAX;
        uint8_t *buffer = gr_mem_realloc(c->buffer, capacity, GR_MEM_SET);
        if (!buffer) return -1;
        c->buffer = buffer;
        c->capacity = (uint32_t)capacity;
    }
    uint8_t *p = varint_put(c->buffer + c->bytes, length);
    memcpy(p, data, length);
    c->bytes += (uint32_t)need;
    c->count++;
    return 0;
}

static void compact_delete_at(gr_set_compact_t *c, size_t offset) {
    size_t n;
    const uint8_t *value = varint_get(c->buffer + offset, &n);
    size_t size = (size_t)(value - (c->buffer + offset)) + n;
    memmove(c->buffer + offset, c->buffer + offset + size, c->bytes - offset - size);
    c->bytes -= (uint32_t)size;
    c->count--;
    if (c->count == 0) { compact_release(c); return; }
    if (c->capacity > 64 && c->bytes < c->capacity / 2) {   /* give back half-empty space */
        uint8_t *buffer = gr_mem_realloc(c->buffer, c->bytes + c->bytes / 4, GR_MEM_SET);
        if (buffer) { c->buffer = buffer; c->capacity = c->bytes + c->bytes / 4; }
    }
}

/* The entry at offset: its bytes, and the offset of the next one. */
static size_t compact_entry(const gr_set_compact_t *c, size_t offset, gr_set_member_t *member) {
    size_t n;
    const uint8_t *value = varint_get(c->buffer + offset, &n);
    member->data = value;
    member->length = n;
    return (size_t)(value - c->buffer) + n;
}

/* ---- lifecycle ---- */

gr_set_t *gr_set_new(gr_set_encoding_t encoding) {
    gr_set_t *set = gr_mem_alloc(sizeof *set, GR_MEM_SET);
    if (!set) return NULL;
    memset(set, 0, sizeof *set);
    set->encoding = (uint8_t)encoding;
    if (encoding == GR_SET_INTSET) {
        gr_intset_init(&set->as.intset);
    } else if (encoding == GR_SET_TABLE) {
        set->as.table = gr_table_new(0, GR_MEM_SET);
        if (!set->as.table) { gr_mem_free(set, GR_MEM_SET); return NULL; }
    }
    return set;
}

gr_set_t *gr_set_new_for(const gr_set_config_t *config, const uint8_t *first, size_t first_length, size_t size_hint) {
    int64_t value;
    if (as_integer(first, first_length, &value) && size_hint <= intset_limit(config)) return gr_set_new(GR_SET_INTSET);
    if (size_hint <= config->max_compact_entries) return gr_set_new(GR_SET_COMPACT);
    gr_set_t *set = gr_set_new(GR_SET_TABLE);
    if (set) gr_table_reserve(set->as.table, size_hint);
    return set;
}

void gr_set_free(gr_set_t *set) {
    if (!set) return;
    switch (set->encoding) {
    case GR_SET_INTSET: gr_intset_release(&set->as.intset, GR_MEM_SET); break;
    case GR_SET_COMPACT: compact_release(&set->as.compact); break;
    default: gr_table_free(set->as.table); break;
    }
    gr_mem_free(set, GR_MEM_SET);
}

gr_set_t *gr_set_duplicate(const gr_set_t *set) {
    if (set->encoding == GR_SET_TABLE) {
        gr_table_t *table = gr_table_duplicate(set->as.table);
        if (!table) return NULL;
        gr_set_t *copy = gr_mem_alloc(sizeof *copy, GR_MEM_SET);
        if (!copy) { gr_table_free(table); return NULL; }
        memset(copy, 0, sizeof *copy);
        copy->encoding = GR_SET_TABLE;
        copy->as.table = table;
        return copy;
    }
    gr_set_t *copy = gr_set_new((gr_set_encoding_t)set->encoding);
    if (!copy) return NULL;
    if (set->encoding == GR_SET_INTSET) {
        const gr_intset_t *from = &set->as.intset;
        if (from->count) {
            copy->as.intset.values = gr_mem_alloc((size_t)from->count * from->width, GR_MEM_SET);
            if (!copy->as.intset.values) { gr_mem_free(copy, GR_MEM_SET); return NULL; }
            memcpy(copy->as.intset.values, from->values, (size_t)from->count * from->width);
            copy->as.intset.count = copy->as.intset.capacity = from->count;
        }
        copy->as.intset.width = from->width;
    } else {
        const gr_set_compact_t *from = &set->as.compact;
        if (from->bytes) {
            copy->as.compact.buffer = gr_mem_alloc(from->bytes, GR_MEM_SET);
            if (!copy->as.compact.buffer) { gr_mem_free(copy, GR_MEM_SET); return NULL; }
            memcpy(copy->as.compact.buffer, from->buffer, from->bytes);
            copy->as.compact.bytes = copy->as.compact.capacity = from->bytes;
            copy->as.compact.count = from->count;
        }
    }
    return copy;
}

/* ---- conversions ---- */

/* Rebuild set in `to` (compact or table) from its current members; 0, or -1 on OOM with the
 * set unchanged. */
static int convert(gr_set_t *set, gr_set_encoding_t to, size_t expected) {
    gr_set_t *fresh = gr_set_new(to);
    if (!fresh) return -1;
    if (to == GR_SET_TABLE) gr_table_reserve(fresh->as.table, expected);
    gr_set_iter_t iter;
    gr_set_member_t member;
    gr_set_iter_start(set, &iter);
    while (gr_set_iter_next(&iter, &member)) {
        int failed = to == GR_SET_TABLE ? gr_table_add(fresh->as.table, member.data, member.length) < 0
                                        : compact_append(&fresh->as.compact, member.data, member.length) != 0;
        if (failed) { gr_set_free(fresh); return -1; }
    }
    switch (set->encoding) {
    case GR_SET_INTSET: gr_intset_release(&set->as.intset, GR_MEM_SET); break;
    case GR_SET_COMPACT: compact_release(&set->as.compact); break;
    default: gr_table_free(set->as.table); break;
    }
    set->encoding = fresh->encoding;
    set->as = fresh->as;
    gr_mem_free(fresh, GR_MEM_SET);
    return 0;
}

/* ---- access ---- */

static int table_add(gr_set_t *set, const uint8_t *data, size_t length) {
    int added = gr_table_add(set->as.table, data, length);
    return added < 0 ? -1 : added;
}

int gr_set_add_many(gr_set_t *set, const gr_set_config_t *config, const gr_bytes_t *members, size_t count) {
    if (set->encoding == GR_SET_TABLE) {
        int added = gr_table_add_many(set->as.table, members, NULL, count);
        return added < 0 ? added : 0;
    }
    for (size_t i = 0; i < count; i++) {
        int added = gr_set_add(set, config, members[i].data, members[i].length);
        if (added != 1) return added < 0 ? -1 : -2;
    }
    return 0;
}

int gr_set_add(gr_set_t *set, const gr_set_config_t *config, const uint8_t *data, size_t length) {
    int64_t value;
    switch (set->encoding) {
    case GR_SET_INTSET: {
        gr_intset_t *is = &set->as.intset;
        if (as_integer(data, length, &value)) {
            if (gr_intset_contains(is, value)) return 0;
            if ((size_t)is->count + 1 > intset_limit(config)) {
                if (convert(set, GR_SET_TABLE, (size_t)is->count + 1) != 0) return -1;
                return table_add(set, data, length);
            }
            return gr_intset_add(is, value, GR_MEM_SET);
        }
        /* a non-integer: compact if it and every integer's text fit, else a table */
        size_t widest = 0;
        if (is->count) {
            char text[24];
            size_t a = gr_int64_to_text(gr_intset_min(is), text), b = gr_int64_to_text(gr_intset_max(is), text);
            widest = a > b ? a : b;
        }
        gr_set_encoding_t to = (size_t)is->count < config->max_compact_entries && length <= config->max_compact_value &&
                                       widest <= config->max_compact_value
                                   ? GR_SET_COMPACT
                                   : GR_SET_TABLE;
        if (convert(set, to, (size_t)is->count + 1) != 0) return -1;
        if (to == GR_SET_TABLE) return table_add(set, data, length);
        return compact_append(&set->as.compact, data, length) == 0 ? 1 : -1;
    }
    case GR_SET_COMPACT: {
        gr_set_compact_t *c = &set->as.compact;
        if (compact_find(c, data, length) >= 0) return 0;
        if ((size_t)c->count < config->max_compact_entries && length <= config->max_compact_value)
            return compact_append(c, data, length) == 0 ? 1 : -1;
        if (convert(set, GR_SET_TABLE, (size_t)c->count + 1) != 0) return -1;
        return table_add(set, data, length);
    }
    default:
        return table_add(set, data, length);
    }
}

int gr_set_remove(gr_set_t *set, const uint8_t *data, size_t length) {
    int64_t value;
    switch (set->encoding) {
    case GR_SET_INTSET:
        return as_integer(data, length, &value) ? gr_intset_remove(&set->as.intset, value) : 0;
    case GR_SET_COMPACT: {
        int64_t at = compact_find(&set->as.compact, data, length);
        if (at < 0) return 0;
        compact_delete_at(&set->as.compact, (size_t)at);
        return 1;
    }
    default:
        return gr_table_delete(set->as.table, data, length);
    }
}

int gr_set_contains(const gr_set_t *set, const uint8_t *data, size_t length) {
    int64_t value;
    switch (set->encoding) {
    case GR_SET_INTSET:
        return as_integer(data, length, &value) && gr_intset_contains(&set->as.intset, value);
    case GR_SET_COMPACT:
        return compact_find(&set->as.compact, data, length) >= 0;
    default: {
        gr_bytes_t ignored;
        return gr_table_get(set->as.table, data, length, &ignored) == 1;
    }
    }
}

int gr_set_random(const gr_set_t *set, uint64_t random, gr_set_member_t *member) {
    size_t count = gr_set_count(set);
    if (count == 0) return 0;
    switch (set->encoding) {
    case GR_SET_INTSET:
        member_from_integer(member, gr_intset_get(&set->as.intset, (size_t)(random % count)));
        return 1;
    case GR_SET_COMPACT: {
        size_t skip = (size_t)(random % count), offset = 0;
        for (size_t i = 0; i <= skip; i++) offset = compact_entry(&set->as.compact, offset, member);
        return 1;
    }
    default: {
        gr_bytes_t key, value;
        if (!gr_table_random(set->as.table, random, &key, &value)) return 0;
        member->data = key.data;
        member->length = key.length;
        return 1;
    }
    }
}

/* ---- queries ---- */

size_t gr_set_count(const gr_set_t *set) {
    switch (set->encoding) {
    case GR_SET_INTSET: return set->as.intset.count;
    case GR_SET_COMPACT: return set->as.compact.count;
    default: return gr_table_count(set->as.table);
    }
}

gr_set_encoding_t gr_set_encoding(const gr_set_t *set) { return (gr_set_encoding_t)set->encoding; }

const char *gr_set_encoding_name(const gr_set_t *set) {
    static const char *names[] = {"intset", "listpack", "hashtable"};
    return names[set->encoding];
}

size_t gr_set_allocated_bytes(const gr_set_t *set) {
    size_t bytes = gr_mem_usable(set);
    switch (set->encoding) {
    case GR_SET_INTSET: return bytes + gr_intset_allocated_bytes(&set->as.intset);
    case GR_SET_COMPACT: return bytes + gr_mem_usable(set->as.compact.buffer);
    default: return bytes + gr_table_allocated_bytes(set->as.table);
    }
}

int gr_set_check(const gr_set_t *set) {
    switch (set->encoding) {
    case GR_SET_INTSET: return gr_intset_check(&set->as.intset);
    case GR_SET_COMPACT: {
        const gr_set_compact_t *c = &set->as.compact;
        if (c->bytes > c->capacity) return -1;
        size_t offset = 0, seen = 0;
        gr_set_member_t member;
        while (offset < c->bytes) {
            offset = compact_entry(c, offset, &member);
            seen++;
        }
        return offset == c->bytes && seen == c->count ? 0 : -1;
    }
    case GR_SET_TABLE: return 0;
    default: return -1;
    }
}

/* ---- bulk ---- */

void gr_set_iter_start(const gr_set_t *set, gr_set_iter_t *iter) {
    iter->set = set;
    iter->index = 0;
    iter->offset = 0;
    if (set->encoding == GR_SET_TABLE) gr_table_iter_start(set->as.table, &iter->table);
}

int gr_set_iter_next(gr_set_iter_t *iter, gr_set_member_t *member) {
    const gr_set_t *set = iter->set;
    switch (set->encoding) {
    case GR_SET_INTSET:
        if (iter->index >= set->as.intset.count) return 0;
        member_from_integer(member, gr_intset_get(&set->as.intset, iter->index++));
        return 1;
    case GR_SET_COMPACT:
        if (iter->offset >= set->as.compact.bytes) return 0;
        iter->offset = compact_entry(&set->as.compact, iter->offset, member);
        iter->index++;
        return 1;
    default: {
        gr_bytes_t key, value;
        if (!gr_table_iter_next(&iter->table, &key, &value)) return 0;
        member->data = key.data;
        member->length = key.length;
        return 1;
    }
    }
}

typedef struct scan_relay {
    gr_set_visit_t visit;
    void *context;
} scan_relay_t;

static void relay(void *context, gr_bytes_t key, gr_bytes_t value) {
    (void)value;
    scan_relay_t *r = context;
    r->visit(r->context, key.data, key.length);
}

uint64_t gr_set_scan(const gr_set_t *set, uint64_t cursor, size_t count, gr_set_visit_t visit, void *context) {
    if (set->encoding == GR_SET_TABLE) {
        scan_relay_t r = {visit, context};
        return gr_table_scan(set->as.table, cursor, count, relay, &r);
    }
    gr_set_iter_t iter;
    gr_set_member_t member;
    gr_set_iter_start(set, &iter);
    while (gr_set_iter_next(&iter, &member)) visit(context, member.data, member.length);
    return 0;
}
