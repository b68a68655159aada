/* buffer.c — the growable byte buffer; buffer.h draws its layout and states the rules
 * (who may move `data`, when consumed bytes are reclaimed). Growth doubles from
 * GR_BUF_MIN_CAPACITY so a stream of appends costs amortised O(1) per byte.
 */
#include "buffer.h"

#include <string.h>

#include "alloc.h"

#define GR_BUF_MIN_CAPACITY 4096

void gr_buf_init(gr_buf_t *buf) {
    buf->data = NULL;
    buf->head = buf->tail = buf->capacity = 0;
}

void gr_buf_free(gr_buf_t *buf) {
    gr_mem_free(buf->data, GR_MEM_SESSION);
    gr_buf_init(buf);
}

void gr_buf_compact(gr_buf_t *buf) {
    if (buf->head == 0) return;
    size_t live = buf->tail - buf->head;
    if (live) memmove(buf->data, buf->data + buf->head, live);
    buf->head = 0;
    buf->tail = live;
}

int gr_buf_reserve(gr_buf_t *buf, size_t extra) {
    if (buf->capacity - buf->tail >= extra) return 0;
    size_t live = buf->tail - buf->head;
    if (extra > SIZE_MAX / 2 - live) return -1;            /* no capacity could hold it */
    size_t needed = live + extra;
    if (buf->capacity >= needed) {                         /* sliding down makes the room */
        gr_buf_compact(buf);
        return 0;
    }
    size_t capacity = buf->capacity > GR_BUF_MIN_CAPACITY ? buf->capacity : GR_BUF_MIN_CAPACITY;
    while (capacity < needed) capacity *= 2;
    /* Compact before realloc so realloc copies only live bytes; on failure the bytes have
     * moved but the buffer's contents are the same, which is all callers rely on. */
    gr_buf_compact(buf);
    uint8_t *grown = gr_mem_realloc(buf->data, capacity, GR_MEM_SESSION);
    if (!grown) return -1;
    buf->data = grown;
    buf->capacity = capacity;
    return 0;
}

int gr_buf_append(gr_buf_t *buf, const void *bytes, size_t length) {
    if (gr_buf_reserve(buf, length) != 0) return -1;
    if (length) memcpy(buf->data + buf->tail, bytes, length);
    buf->tail += length;
    return 0;
}

void gr_buf_consume(gr_buf_t *buf, size_t length) {
    size_t live = buf->tail - buf->head;
    if (length >= live) {                                  /* empty: reclaim for free */
        buf->head = buf->tail = 0;
        return;
    }
    buf->head += length;
}

void gr_buf_clear(gr_buf_t *buf) { buf->head = buf->tail = 0; }

void gr_buf_trim(gr_buf_t *buf, size_t max_capacity) {
    size_t live = buf->tail - buf->head;
    size_t target = live > max_capacity ? live : max_capacity;
    if (buf->capacity <= target) return;
    gr_buf_compact(buf);
    if (target == 0) {
        gr_buf_free(buf);
        return;
    }
    uint8_t *shrunk = gr_mem_realloc(buf->data, target, GR_MEM_SESSION);
    if (!shrunk) return;                                   /* keep the larger block */
    buf->data = shrunk;
    buf->capacity = target;
}
