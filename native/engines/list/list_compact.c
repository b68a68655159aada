/* list_compact.c — the compact list engine: one packed buffer of varint-length-prefixed
 * values with a reversed-varint back length per entry. Its layout and API are documented
 * in list_compact.h; list.c is its only user and converts it to the segmented engine
 * (list_seg.c) at the configured thresholds.
 */
#include "engines/list/list_compact.h"

#include <string.h>

#include "core/alloc.h"
#include "core/varint.h"

/* ---- entry encoding ----------------------------------------------------------------- */

/* The back length: `value` written so that it is read from its last byte backwards. */
static uint8_t *back_put(uint8_t *p, size_t value) {
    size_t size = varint_size(value);
    for (size_t i = 0; i < size; i++) {
        uint8_t byte = (uint8_t)((value >> (7 * i)) & 0x7f);
        if (i + 1 < size) byte |= 0x80;
        p[size - 1 - i] = byte;
    }
    return p + size;
}

/* Reads the back length ending just before `end`; sets *size to the bytes it occupies. */
static size_t back_get(const uint8_t *end, size_t *size) {
    size_t value = 0, i = 0;
    uint8_t byte;
    do {
        byte = end[-1 - (ptrdiff_t)i];
        value |= (size_t)(byte & 0x7f) << (7 * i);
        i++;
    } while (byte & 0x80);
    *size = i;
    return value;
}

size_t gr_lcompact_entry_size(size_t length) {
    size_t front = varint_size(length) + length;
    return front + varint_size(front);
}

static uint8_t *entry_put(uint8_t *p, const uint8_t *data, size_t length) {
    uint8_t *start = p;
    p = varint_put(p, length);
    if (length) memcpy(p, data, length);
    p += length;
    return back_put(p, (size_t)(p - start));
}

/* Decode the entry at offset; returns the offset of the next entry. */
static uint32_t entry_read(const uint8_t *buffer, uint32_t offset, const uint8_t **data, size_t *length) {
    size_t n;
    const uint8_t *p = varint_get(buffer + offset, &n);
    if (data) *data = p;
    if (length) *length = n;
    p += n;
    return (uint32_t)(p - buffer + (ptrdiff_t)varint_size((size_t)(p - (buffer + offset))));
}

/* Offset of the entry that ends at `end` (end > 0). */
static uint32_t entry_before(const uint8_t *buffer, uint32_t end) {
    size_t back_size;
    size_t front = back_get(buffer + end, &back_size);
    return end - (uint32_t)back_size - (uint32_t)front;
}

/* Offset of entry `index` (index == count gives bytes), walking from the nearer end. */
static uint32_t offset_of(const gr_lcompact_t *list, size_t index) {
    if (index >= list->count) return list->bytes;
    uint32_t offset;
    if (index <= list->count / 2) {
        offset = 0;
        for (size_t i = 0; i < index; i++) offset = entry_read(list->buffer, offset, NULL, NULL);
    } else {
        offset = list->bytes;
        for (size_t i = list->count; i > index; i--) offset = entry_before(list->buffer, offset);
    }
    return offset;
}

/* ---- buffer management -------------------------------------------------------------- */

/* Make the buffer hold at least `needed` bytes; -1 on allocation failure (buffer unchanged). */
static int reserve(gr_lcompact_t *list, size_t needed) {
    if (needed <= list->capacity) return 0;
    if (needed > UINT32_MAX - 64) return -1;
    size_t grown = needed + needed / 4;
    if (grown < 16) grown = 16;
    if (grown > UINT32_MAX - 64) grown = needed;
    uint8_t *buffer = gr_mem_realloc(list->buffer, grown, GR_MEM_LIST);
    if (!buffer) return -1;
    list->buffer = buffer;
    size_t usable = gr_mem_usable(buffer);
    list->capacity = (uint32_t)(usable > UINT32_MAX - 64 ? grown : usable);
    return 0;
}

/* After a removal: free an empty buffer, give back a mostly empty one (best effort). */
static void shrink(gr_lcompact_t *list) {
    if (list->count == 0) {
        gr_mem_free(list->buffer, GR_MEM_LIST);
        list->buffer = NULL;
        list->bytes = list->capacity = 0;
        return;
    }
    if (list->capacity <= 64 || list->bytes > list->capacity / 2) return;
    size_t wanted = list->bytes + list->bytes / 4;
    uint8_t *buffer = gr_mem_realloc(list->buffer, wanted, GR_MEM_LIST);
    if (!buffer) return;   /* keeping the bigger buffer is fine */
    list->buffer = buffer;
    list->capacity = (uint32_t)gr_mem_usable(buffer);
}

/* Replace bytes [from, to) by `insert` bytes of room; returns 0 or -1 (unchanged). */
static int splice(gr_lcompact_t *list, uint32_t from, uint32_t to, size_t insert) {
    size_t new_bytes = (size_t)list->bytes - (to - from) + insert;
    if (reserve(list, new_bytes)) return -1;
    memmove(list->buffer + from + insert, list->buffer + to, list->bytes - to);
    list->bytes = (uint32_t)new_bytes;
    return 0;
}

/* ---- lifecycle ---------------------------------------------------------------------- */

void gr_lcompact_init(gr_lcompact_t *list) { memset(list, 0, sizeof *list); }

void gr_lcompact_release(gr_lcompact_t *list) {
    gr_mem_free(list->buffer, GR_MEM_LIST);
    gr_lcompact_init(list);
}

/* ---- access ------------------------------------------------------------------------- */

int gr_lcompact_get(const gr_lcompact_t *list, size_t index, const uint8_t **data, size_t *length) {
    if (index >= list->count) return -1;
    entry_read(list->buffer, offset_of(list, index), data, length);
    return 0;
}

int gr_lcompact_peek(const gr_lcompact_t *list, int at_tail, const uint8_t **data, size_t *length) {
    if (list->count == 0) return -1;
    uint32_t offset = at_tail ? entry_before(list->buffer, list->bytes) : 0;
    entry_read(list->buffer, offset, data, length);
    return 0;
}

int gr_lcompact_insert(gr_lcompact_t *list, size_t index, const uint8_t *data, size_t length) {
    if (index > list->count || length > GR_LCOMPACT_MAX_VALUE || list->count == UINT32_MAX) return -1;
    uint32_t at = offset_of(list, index);
    size_t size = gr_lcompact_entry_size(length);
    if (splice(list, at, at, size)) return -1;
    entry_put(list->buffer + at, data, length);
    list->count++;
    return 0;
}

int gr_lcompact_push(gr_lcompact_t *list, int at_tail, const uint8_t *data, size_t length) {
    return gr_lcompact_insert(list, at_tail ? list->count : 0, data, length);
}

int gr_lcompact_pop(gr_lcompact_t *list, int at_tail) {
    if (list->count == 0) return -1;
    return gr_lcompact_delete_range(list, at_tail ? list->count - 1 : 0, 1);
}

int gr_lcompact_set(gr_lcompact_t *list, size_t index, const uint8_t *data, size_t length) {
    if (index >= list->count || length > GR_LCOMPACT_MAX_VALUE) return -1;
    uint32_t at = offset_of(list, index);
    uint32_t next = entry_read(list->buffer, at, NULL, NULL);
    size_t size = gr_lcompact_entry_size(length);
    if (size != next - at && splice(list, at, next, size)) return -1;
    entry_put(list->buffer + at, data, length);
    return 0;
}

int gr_lcompact_delete_range(gr_lcompact_t *list, size_t start, size_t count) {
    if (start >= list->count || count == 0) return 0;
    if (count > list->count - start) count = list->count - start;
    uint32_t from = offset_of(list, start);
    uint32_t to = from;
    if (start + count == list->count) to = list->bytes;
    else for (size_t i = 0; i < count; i++) to = entry_read(list->buffer, to, NULL, NULL);
    splice(list, from, to, 0);   /* shrinking never allocates */
    list->count -= (uint32_t)count;
    shrink(list);
    return 0;
}

/* ---- iteration ---------------------------------------------------------------------- */

void gr_lcompact_iter_init(gr_lcompact_iter_t *iter, const gr_lcompact_t *list, size_t start_index,
                           int backward) {
    iter->buffer = list->buffer;
    iter->backward = backward;
    if (start_index >= list->count) {
        iter->offset = 0;
        iter->remaining = 0;
    } else if (backward) {
        iter->offset = start_index + 1 == list->count ? list->bytes : offset_of(list, start_index + 1);
        iter->remaining = (uint32_t)start_index + 1;
    } else {
        iter->offset = offset_of(list, start_index);
        iter->remaining = list->count - (uint32_t)start_index;
    }
}

int gr_lcompact_iter_next(gr_lcompact_iter_t *iter, const uint8_t **data, size_t *length) {
    if (iter->remaining == 0) return 0;
    iter->remaining--;
    if (iter->backward) {
        iter->offset = entry_before(iter->buffer, iter->offset);
        entry_read(iter->buffer, iter->offset, data, length);
    } else {
        iter->offset = entry_read(iter->buffer, iter->offset, data, length);
    }
    return 1;
}

/* ---- queries ------------------------------------------------------------------------ */

size_t gr_lcompact_length(const gr_lcompact_t *list) { return list->count; }
size_t gr_lcompact_bytes(const gr_lcompact_t *list) { return list->bytes; }
size_t gr_lcompact_allocated_bytes(const gr_lcompact_t *list) { return gr_mem_usable(list->buffer); }

int gr_lcompact_check(const gr_lcompact_t *list) {
    if (list->bytes > list->capacity) return -1;
    if (!list->buffer && (list->capacity || list->bytes || list->count)) return -1;
    if (list->buffer && list->capacity > gr_mem_usable(list->buffer)) return -1;
    if (list->count == 0) return list->bytes == 0 ? 0 : -1;
    uint32_t offset = 0, seen = 0;
    while (offset < list->bytes) {
        size_t n;
        const uint8_t *p = varint_get(list->buffer + offset, &n);
        size_t front = (size_t)(p - (list->buffer + offset)) + n;
        if (offset + front >= list->bytes) return -1;
        size_t back_size;
        size_t end = offset + front + varint_size(front);
        if (end > list->bytes) return -1;
        if (back_get(list->buffer + end, &back_size) != front || back_size != varint_size(front)) return -1;
        offset = (uint32_t)end;
        seen++;
    }
    return offset == list->bytes && seen == list->count ? 0 : -1;
}

/* ---- bulk --------------------------------------------------------------------------- */

static int matches(const uint8_t *value, size_t value_length, const uint8_t *data, size_t length) {
    return value_length == length && (length == 0 || memcmp(value, data, length) == 0);
}

int64_t gr_lcompact_remove_matching(gr_lcompact_t *list, const uint8_t *data, size_t length, int64_t count) {
    if (list->count == 0) return 0;
    uint32_t from = 0;   /* where the forward pass starts */
    uint64_t limit = count > 0 ? (uint64_t)count : count < 0 ? (uint64_t)(-(count + 1)) + 1 : UINT64_MAX;
    if (count < 0) {
        /* Find the |count|-th match from the tail; removing every match from there on
         * removes exactly the last |count|. */
        uint32_t end = list->bytes;
        uint64_t seen = 0;
        while (end > 0) {
            uint32_t at = entry_before(list->buffer, end);
            const uint8_t *value;
            size_t value_length;
            entry_read(list->buffer, at, &value, &value_length);
            if (matches(value, value_length, data, length) && ++seen == limit) { from = at; break; }
            end = at;
        }
        if (seen < limit) from = 0;
    }
    uint32_t read = from, write = from;
    int64_t removed = 0;
    while (read < list->bytes) {
        if ((uint64_t)removed == limit) {
            memmove(list->buffer + write, list->buffer + read, list->bytes - read);
            write += list->bytes - read;
            break;
        }
        const uint8_t *value;
        size_t value_length;
        uint32_t next = entry_read(list->buffer, read, &value, &value_length);
        if (matches(value, value_length, data, length)) {
            removed++;
        } else {
            if (write != read) memmove(list->buffer + write, list->buffer + read, next - read);
            write += next - read;
        }
        read = next;
    }
    if (removed) {
        list->bytes = write;
        list->count -= (uint32_t)removed;
        shrink(list);
    }
    return removed;
}
