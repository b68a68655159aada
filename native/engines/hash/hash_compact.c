/* hash_compact.c — the compact hash map (layout and API in hash_compact.h): field/value
 * pairs packed back to back in one buffer, found by walking them.
 */
#include "engines/hash/hash_compact.h"

#include <string.h>

#include "core/varint.h"

/* Where the pair at offset ends, and its parts. */
static uint32_t pair_read(const uint8_t *buffer, uint32_t offset, gr_hcompact_pair_t *pair) {
    const uint8_t *p = buffer + offset;
    size_t length;
    p = varint_get(p, &length);
    pair->field = p;
    pair->field_length = length;
    p += length;
    p = varint_get(p, &length);
    pair->value = p;
    pair->value_length = length;
    p += length;
    return (uint32_t)(p - buffer);
}

static size_t pair_size(size_t field_length, size_t value_length) {
    return varint_size(field_length) + field_length + varint_size(value_length) + value_length;
}

static int reserve(gr_hcompact_t *map, size_t needed) {
    if (needed <= map->capacity) return 0;
    if (needed > UINT32_MAX - 64) return -1;
    size_t grown = needed + needed / 4;
    if (grown < 32) grown = 32;
    if (grown > UINT32_MAX - 64) grown = needed;
    uint8_t *buffer = gr_mem_realloc(map->buffer, grown, GR_MEM_HASH);
    if (!buffer) return -1;
    map->buffer = buffer;
    size_t usable = gr_mem_usable(buffer);
    map->capacity = (uint32_t)(usable > UINT32_MAX - 64 ? grown : usable);
    return 0;
}

/* After a removal: free an empty buffer, give back a mostly empty one (best effort). */
static void shrink(gr_hcompact_t *map) {
    if (map->count == 0) {
        gr_hcompact_release(map);
        return;
    }
    if (map->capacity <= 64 || map->bytes > map->capacity / 2) return;
    size_t wanted = map->bytes + map->bytes / 4;
    uint8_t *buffer = gr_mem_realloc(map->buffer, wanted, GR_MEM_HASH);
    if (!buffer) return;   /* keeping the bigger buffer is fine */
    map->buffer = buffer;
    map->capacity = (uint32_t)gr_mem_usable(buffer);
}

/* Replace bytes [from, to) by `insert` bytes of room; 0, or -1 (unchanged). */
static int splice(gr_hcompact_t *map, uint32_t from, uint32_t to, size_t insert) {
    size_t new_bytes = (size_t)map->bytes - (to - from) + insert;
    if (reserve(map, new_bytes)) return -1;
    memmove(map->buffer + from + insert, map->buffer + to, map->bytes - to);
    map->bytes = (uint32_t)new_bytes;
    return 0;
}

/* The offset of field's pair and the offset after it, or -1 when absent. */
static int64_t find(const gr_hcompact_t *map, const uint8_t *field, size_t field_length, uint32_t *end,
                    gr_hcompact_pair_t *pair) {
    uint32_t offset = 0;
    while (offset < map->bytes) {
        uint32_t next = pair_read(map->buffer, offset, pair);
        if (pair->field_length == field_length && memcmp(pair->field, field, field_length) == 0) {
            *end = next;
            return offset;
        }
        offset = next;
    }
    return -1;
}

/* ---- lifecycle ---- */

void gr_hcompact_init(gr_hcompact_t *map) { memset(map, 0, sizeof *map); }

void gr_hcompact_release(gr_hcompact_t *map) {
    gr_mem_free(map->buffer, GR_MEM_HASH);
    gr_hcompact_init(map);
}

int gr_hcompact_copy(gr_hcompact_t *copy, const gr_hcompact_t *map) {
    gr_hcompact_init(copy);
    if (map->count == 0) return 0;
    if (reserve(copy, map->bytes)) return -1;
    memcpy(copy->buffer, map->buffer, map->bytes);
    copy->bytes = map->bytes;
    copy->count = map->count;
    return 0;
}

/* ---- access ---- */

int gr_hcompact_get(const gr_hcompact_t *map, const uint8_t *field, size_t field_length, gr_hcompact_pair_t *pair) {
    uint32_t end;
    return find(map, field, field_length, &end, pair) >= 0;
}

int gr_hcompact_set(gr_hcompact_t *map, const uint8_t *field, size_t field_length, const uint8_t *value,
                    size_t value_length) {
    if (field_length > GR_HCOMPACT_MAX_LENGTH || value_length > GR_HCOMPACT_MAX_LENGTH) return -1;
    gr_hcompact_pair_t pair;
    uint32_t end;
    int64_t at = find(map, field, field_length, &end, &pair);
    if (at >= 0) {
        /* replace the value part in place: [value length][value] */
        uint32_t value_at = (uint32_t)(pair.field + pair.field_length - map->buffer);
        size_t size = varint_size(value_length) + value_length;
        if (splice(map, value_at, end, size)) return -1;
        uint8_t *p = varint_put(map->buffer + value_at, value_length);
        if (value_length) memcpy(p, value, value_length);
        return 0;
    }
    size_t size = pair_size(field_length, value_length);
    uint32_t offset = map->bytes;
    if (splice(map, offset, offset, size)) return -1;
    uint8_t *p = varint_put(map->buffer + offset, field_length);
    if (field_length) memcpy(p, field, field_length);
    p = varint_put(p + field_length, value_length);
    if (value_length) memcpy(p, value, value_length);
    map->count++;
    return 1;
}

int gr_hcompact_delete(gr_hcompact_t *map, const uint8_t *field, size_t field_length) {
    gr_hcompact_pair_t pair;
    uint32_t end;
    int64_t at = find(map, field, field_length, &end, &pair);
    if (at < 0) return 0;
    splice(map, (uint32_t)at, end, 0);   /* shrinking needs no memory: cannot fail */
    map->count--;
    shrink(map);
    return 1;
}

/* ---- iteration ---- */

int gr_hcompact_next(const gr_hcompact_t *map, uint32_t *offset, gr_hcompact_pair_t *pair) {
    if (*offset >= map->bytes) return 0;
    *offset = pair_read(map->buffer, *offset, pair);
    return 1;
}

int gr_hcompact_at(const gr_hcompact_t *map, size_t index, gr_hcompact_pair_t *pair) {
    if (index >= map->count) return 0;
    uint32_t offset = 0;
    for (size_t i = 0; i <= index; i++) offset = pair_read(map->buffer, offset, pair);
    return 1;
}

/* ---- queries ---- */

size_t gr_hcompact_count(const gr_hcompact_t *map) { return map->count; }

size_t gr_hcompact_allocated_bytes(const gr_hcompact_t *map) { return gr_mem_usable(map->buffer); }

int gr_hcompact_check(const gr_hcompact_t *map) {
    if (map->bytes > map->capacity) return -1;
    if (!map->buffer && (map->capacity || map->bytes || map->count)) return -1;
    uint32_t offset = 0, pairs = 0;
    gr_hcompact_pair_t pair;
    while (offset < map->bytes) {
        offset = pair_read(map->buffer, offset, &pair);
        pairs++;
    }
    return offset == map->bytes && pairs == map->count ? 0 : -1;
}
