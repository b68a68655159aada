/* set_intset.c — the integer-set encoding (layout and API in set_intset.h): a sorted array
 * of integers at one width, upgraded when a wider value arrives. */
#include "engines/set/set_intset.h"

#include <string.h>

static uint8_t width_for(int64_t value) {
    if (value >= INT16_MIN && value <= INT16_MAX) return 2;
    if (value >= INT32_MIN && value <= INT32_MAX) return 4;
    return 8;
}

static int64_t read_at(const uint8_t *values, uint8_t width, size_t index) {
    if (width == 2) { int16_t v; memcpy(&v, values + index * 2, 2); return v; }
    if (width == 4) { int32_t v; memcpy(&v, values + index * 4, 4); return v; }
    int64_t v;
    memcpy(&v, values + index * 8, 8);
    return v;
}

static void write_at(uint8_t *values, uint8_t width, size_t index, int64_t value) {
    if (width == 2) { int16_t v = (int16_t)value; memcpy(values + index * 2, &v, 2); return; }
    if (width == 4) { int32_t v = (int32_t)value; memcpy(values + index * 4, &v, 4); return; }
    memcpy(values + index * 8, &value, 8);
}

void gr_intset_init(gr_intset_t *set) {
    set->count = 0;
    set->capacity = 0;
    set->width = 2;
    set->values = NULL;
}

void gr_intset_release(gr_intset_t *set, gr_mem_category_t category) {
    gr_mem_free(set->values, category);
    gr_intset_init(set);
}

/* Binary search: 1 and *at = its index when present, else 0 and *at = where it goes. */
static int search(const gr_intset_t *set, int64_t value, size_t *at) {
    size_t low = 0, high = set->count;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        int64_t here = read_at(set->values, set->width, middle);
        if (here == value) { *at = middle; return 1; }
        if (here < value) low = middle + 1; else high = middle;
    }
    *at = low;
    return 0;
}

int gr_intset_contains(const gr_intset_t *set, int64_t value) {
    size_t at;
    if (set->count == 0 || width_for(value) > set->width) return 0;
    return search(set, value, &at);
}

int64_t gr_intset_get(const gr_intset_t *set, size_t index) { return read_at(set->values, set->width, index); }
int64_t gr_intset_min(const gr_intset_t *set) { return read_at(set->values, set->width, 0); }
int64_t gr_intset_max(const gr_intset_t *set) { return read_at(set->values, set->width, set->count - 1); }

int gr_intset_add(gr_intset_t *set, int64_t value, gr_mem_category_t category) {
    uint8_t width = width_for(value);
    if (width > set->width && set->count > 0) {
        /* upgrade: the new value is below or above every member, so it goes at an end */
        size_t capacity = set->count + 1 + (set->count + 1) / 4;
        uint8_t *values = gr_mem_alloc(capacity * width, category);
        if (!values) return -1;
        size_t offset = value < 0 ? 1 : 0;
        for (size_t i = 0; i < set->count; i++) write_at(values, width, i + offset, read_at(set->values, set->width, i));
        write_at(values, width, value < 0 ? 0 : set->count, value);
        gr_mem_free(set->values, category);
        set->values = values;
        set->width = width;
        set->capacity = (uint32_t)capacity;
        set->count++;
        return 1;
    }
    if (width > set->width) {   /* empty: the array's bytes hold fewer values at the wider width */
        set->capacity = (uint32_t)((size_t)set->capacity * set->width / width);
        set->width = width;
    }
    size_t at;
    if (set->count > 0 && search(set, value, &at)) return 0;
    if (set->count == 0) at = 0;
    if (set->count == set->capacity) {
        size_t capacity = set->count + 1 + (set->count + 1) / 4;
        if (capacity < 4) capacity = 4;
        uint8_t *values = gr_mem_realloc(set->values, capacity * set->width, category);
        if (!values) return -1;
        set->values = values;
        set->capacity = (uint32_t)capacity;
    }
    memmove(set->values + (at + 1) * set->width, set->values + at * set->width, (set->count - at) * set->width);
    write_at(set->values, set->width, at, value);
    set->count++;
    return 1;
}

int gr_intset_remove(gr_intset_t *set, int64_t value) {
    size_t at;
    if (set->count == 0 || width_for(value) > set->width || !search(set, value, &at)) return 0;
    memmove(set->values + at * set->width, set->values + (at + 1) * set->width, (set->count - at - 1) * set->width);
    set->count--;
    return 1;
}

size_t gr_intset_allocated_bytes(const gr_intset_t *set) { return gr_mem_usable(set->values); }

int gr_intset_check(const gr_intset_t *set) {
    if (set->width != 2 && set->width != 4 && set->width != 8) return -1;
    if (set->count > set->capacity) return -1;
    for (size_t i = 1; i < set->count; i++)
        if (read_at(set->values, set->width, i - 1) >= read_at(set->values, set->width, i)) return -1;
    return 0;
}
