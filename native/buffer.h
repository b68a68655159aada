/* buffer.h — gr_buf_t, the growable byte buffer both transports read into and write from.
 *
 * A connection's input (bytes received, waiting to be parsed) and output (replies waiting
 * to be sent) are each one gr_buf_t; resp.c parses from one, resp_reply.c writes RESP into
 * the other, and the transports (resp_conn.c, session.c) move bytes between them and the
 * socket. The implementation is buffer.c. Memory comes from alloc.h as GR_MEM_SESSION.
 *
 *   data                head                      tail                  capacity
 *   |  consumed bytes   |  live bytes (readable)  |  room (writable)    |
 *   +-------------------+-------------------------+---------------------+
 *
 * Reading takes from the front (gr_buf_consume advances head); writing appends at tail.
 * Consumed bytes are reclaimed lazily: when the buffer empties, head and tail return to 0
 * for free; otherwise gr_buf_reserve slides the live bytes down before it grows. Any call
 * that may grow or compact (reserve, append, compact, trim) can move `data`: pointers into
 * the buffer, such as a parsed command's argv, are valid only until the next such call.
 *
 * Fields are public so the hot path can write in place after one reserve, but change them
 * only through these functions (or gr_buf_commit after writing into the room).
 */
#ifndef GR_BUFFER_H
#define GR_BUFFER_H

#include <stddef.h>
#include <stdint.h>

typedef struct gr_buf {
    uint8_t *data;
    size_t head;       /* offset of the first live byte */
    size_t tail;       /* offset one past the last live byte */
    size_t capacity;   /* bytes allocated at data */
} gr_buf_t;

/* ---- Lifecycle ---- */

/* An empty buffer that owns nothing yet (zero-initialising the struct is equivalent). */
void gr_buf_init(gr_buf_t *buf);
/* Release the memory; the buffer is left empty and reusable. */
void gr_buf_free(gr_buf_t *buf);

/* ---- Writing ---- */

/* Make at least `extra` bytes of room after tail, compacting first and growing (doubling)
 * only if that is not enough. Returns 0, or -1 when memory runs out (the buffer is then
 * unchanged). */
int gr_buf_reserve(gr_buf_t *buf, size_t extra);
/* Append `length` bytes. Returns 0, or -1 when memory runs out (nothing is appended). */
int gr_buf_append(gr_buf_t *buf, const void *bytes, size_t length);
/* Where to write in place (e.g. recv) after a reserve, and how much room there is. */
static inline uint8_t *gr_buf_room_ptr(gr_buf_t *buf) { return buf->data + buf->tail; }
static inline size_t gr_buf_room(const gr_buf_t *buf) { return buf->capacity - buf->tail; }
/* Mark `length` bytes written in place as live; length <= gr_buf_room(). */
static inline void gr_buf_commit(gr_buf_t *buf, size_t length) { buf->tail += length; }

/* ---- Reading ---- */

static inline const uint8_t *gr_buf_bytes(const gr_buf_t *buf) { return buf->data + buf->head; }
static inline size_t gr_buf_length(const gr_buf_t *buf) { return buf->tail - buf->head; }
/* Drop `length` bytes from the front (clamped to the live length). O(1): no bytes move. */
void gr_buf_consume(gr_buf_t *buf, size_t length);
/* Drop every live byte; the capacity is kept. */
void gr_buf_clear(gr_buf_t *buf);

/* ---- Memory ---- */

/* Slide the live bytes to offset 0 so all free space is room. */
void gr_buf_compact(gr_buf_t *buf);
/* Give memory back after a burst: if the capacity exceeds both `max_capacity` and what
 * the live bytes need, compact and shrink to the larger of the two (an empty buffer with
 * max_capacity 0 frees its memory). Shrinking is best effort; it never fails. */
void gr_buf_trim(gr_buf_t *buf, size_t max_capacity);

#endif
