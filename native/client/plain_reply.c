/* plain_reply.c — a ring reply in Python's marshal format (the mapping is in plain_reply.h).
 *
 * One pass over the reply (a decoded gr_result_t's elements, or the ring message itself read
 * element by element with the generated ring/codec_stream_generated.h); the tree is already in
 * pre-order, as marshal wants it, so each element is written where it stands and a small
 * stack of remaining-children counts only tracks the depth; the two commonest array replies
 * (a flat array of bulks, LRANGE's; a key and its values, LMPOP's) skip even that.
 * Past `capacity` nothing more is written but the length is still counted, so the caller
 * learns how large a buffer the reply needs.
 */
#include "client/plain_reply.h"

#include <string.h>

#include "core/bytes.h"
#include "ring/codec_stream_generated.h"

typedef struct writer {
    uint8_t *out;
    size_t capacity;
    size_t at;                              /* bytes the reply needs so far; written while they fit */
} writer_t;

/* Room for n more bytes at w->at, or NULL once the reply has outgrown the buffer (it is then
 * only measured). */
static inline uint8_t *reserve(writer_t *w, size_t n) {
    uint8_t *p = w->at <= w->capacity && w->capacity - w->at >= n ? w->out + w->at : NULL;
    w->at += n;
    return p;
}

static inline void store_u32(uint8_t *p, uint32_t value) {
    p[0] = (uint8_t)value, p[1] = (uint8_t)(value >> 8), p[2] = (uint8_t)(value >> 16), p[3] = (uint8_t)(value >> 24);
}

static inline void put_byte(writer_t *w, uint8_t byte) {
    uint8_t *p = reserve(w, 1);
    if (p) *p = byte;
}

static inline void put_coded_u32(writer_t *w, uint8_t code, uint32_t value) {
    uint8_t *p = reserve(w, 5);
    if (p) p[0] = code, store_u32(p + 1, value);
}

static inline void put_bytes(writer_t *w, const uint8_t *data, size_t length) {
    uint8_t *p = reserve(w, 5 + length);
    if (!p) return;
    p[0] = 's';
    store_u32(p + 1, (uint32_t)length);
    gr_bytes_copy(p + 5, data, length);
}

/* 'i' for an int32, else 'l': a signed digit count, then 15-bit digits, least significant first. */
static void put_integer(writer_t *w, int64_t value) {
    if (value >= INT32_MIN && value <= INT32_MAX) {
        put_coded_u32(w, 'i', (uint32_t)(int32_t)value);
        return;
    }
    uint64_t magnitude = value < 0 ? (uint64_t)0 - (uint64_t)value : (uint64_t)value;
    uint8_t digits[10];
    int32_t count = 0;
    for (; magnitude; magnitude >>= 15, count++) {
        digits[2 * count] = (uint8_t)(magnitude & 0xff);
        digits[2 * count + 1] = (uint8_t)((magnitude >> 8) & 0x7f);
    }
    put_coded_u32(w, 'l', (uint32_t)(value < 0 ? -count : count));
    uint8_t *p = reserve(w, 2 * (size_t)count);
    if (p) memcpy(p, digits, 2 * (size_t)count);
}

/* The elements of an array reply in pre-order: a decoded tree's (elements) or, when streaming,
 * read one by one from the message with the generated reader (ring/codec_stream_generated.h). */
typedef struct tree_source {
    const gr_element_t *elements;           /* the decoded tree; unused when streaming */
    gr_array_reply_reader_t reader;         /* the message, when streaming */
    size_t first;                           /* the reader's position at the root, to start over */
    gr_element_t current;                   /* the element last read from the stream */
    uint32_t count;
} tree_source_t;

/* Element i (visited in order from 0; start over by resetting reader.position to first), or
 * NULL for a message that does not decode (the caller then takes the decoding path). */
static inline __attribute__((always_inline)) const gr_element_t *element_at(tree_source_t *s, uint32_t i,
                                                                           int streaming) {
    if (!streaming) return &s->elements[i];
    return gr_stream_array_reply_next(&s->reader, &s->current) == GR_CODEC_OK ? &s->current : NULL;
}

static inline void put_array_head(writer_t *w, uint32_t children, int as_tuple) {
    if (as_tuple && children < 256) {
        uint8_t *p = reserve(w, 2);
        if (p) p[0] = ')', p[1] = (uint8_t)children;
    } else {
        put_coded_u32(w, '[', children);
    }
}

/* Elements first..count-1, all bulks, written one after the other; -1 at one that is not. */
static inline __attribute__((always_inline)) long write_bulks(tree_source_t *s, uint32_t first, writer_t *w,
                                                             int streaming) {
    for (uint32_t i = first; i < s->count; i++) {
        const gr_element_t *e = element_at(s, i, streaming);
        if (!e || e->kind != GR_ELEMENT_KIND_BULK) return -1;
        put_bytes(w, e->bytes.data, e->bytes.length);
    }
    return (long)w->at;
}

/* The two commonest array replies in a tight loop each, or -1 as soon as an element shows the
 * reply is another shape (the general walk then starts over):
 *   a root array of bulks and nothing else (LRANGE, BLPOP's pair, SMEMBERS, HKEYS);
 *   [bulk, [bulks]] (LMPOP's and BLMPOP's key and values). */
static inline __attribute__((always_inline)) long write_common_shape(tree_source_t *s, int root_as_tuple,
                                                                    writer_t *w, int streaming) {
    uint32_t count = s->count;
    if (count == 0) return -1;
    const gr_element_t *e = element_at(s, 0, streaming);
    if (!e || e->kind != GR_ELEMENT_KIND_ARRAY) return -1;
    if (e->integer == (int64_t)count - 1) {
        put_array_head(w, count - 1, root_as_tuple);
        return write_bulks(s, 1, w, streaming);
    }
    if (e->integer != 2 || count < 3) return -1;
    put_array_head(w, 2, root_as_tuple);
    e = element_at(s, 1, streaming);
    if (!e || e->kind != GR_ELEMENT_KIND_BULK) return -1;
    put_bytes(w, e->bytes.data, e->bytes.length);
    e = element_at(s, 2, streaming);
    if (!e || e->kind != GR_ELEMENT_KIND_ARRAY || e->integer != (int64_t)count - 3) return -1;
    put_coded_u32(w, '[', count - 3);
    return write_bulks(s, 3, w, streaming);
}

/* Any array reply: a common shape first, else the general walk from the start. */
static inline __attribute__((always_inline)) long write_tree(tree_source_t *s, int root_as_tuple, writer_t *w,
                                                            int streaming) {
    long common = write_common_shape(s, root_as_tuple, w, streaming);
    if (common >= 0) return common;
    w->at = 0;                              /* not that shape: the general walk from the start */
    s->reader.position = s->first;
    int64_t remaining[GR_PLAIN_MAX_DEPTH];   /* children still to come, per open array */
    int depth = 0;
    for (uint32_t i = 0; i < s->count; i++) {
        const gr_element_t *e = element_at(s, i, streaming);
        if (!e) return -1;
        int64_t children = -1;
        switch (e->kind) {
        case GR_ELEMENT_KIND_BULK:
        case GR_ELEMENT_KIND_STATUS:
            put_bytes(w, e->bytes.data, e->bytes.length);
            break;
        case GR_ELEMENT_KIND_INTEGER:
            put_integer(w, e->integer);
            break;
        case GR_ELEMENT_KIND_NIL:
        case GR_ELEMENT_KIND_NIL_ARRAY:
            put_byte(w, 'N');
            break;
        case GR_ELEMENT_KIND_ARRAY:
        case GR_ELEMENT_KIND_MAP:
            children = e->kind == GR_ELEMENT_KIND_MAP ? e->integer * 2 : e->integer;
            if (children < 0 || children > INT32_MAX) return -1;
            put_array_head(w, (uint32_t)children, i == 0 && root_as_tuple);
            break;
        default:
            return -1;                      /* an error element: the caller builds the tree */
        }
        if (depth > 0) remaining[depth - 1]--;
        if (children > 0) {
            if (depth == GR_PLAIN_MAX_DEPTH) return -1;
            remaining[depth++] = children;
        }
        while (depth > 0 && remaining[depth - 1] == 0) depth--;
        if (depth == 0 && i + 1 < s->count) return -1;   /* elements past the root's end */
    }
    if (depth != 0) return -1;              /* the tree ended early: not a reply we write */
    return (long)w->at;
}

long gr_plain_reply_write(const gr_result_t *result, int root_as_tuple, uint8_t *out, size_t capacity) {
    writer_t w = {out, capacity, 0};
    switch (result->template_id) {
    case GR_T_INTEGER_REPLY:
        put_integer(&w, result->integer);
        return (long)w.at;
    case GR_T_BULK_REPLY:
        if (result->is_nil) put_byte(&w, 'N');
        else put_bytes(&w, result->data, result->length);
        return (long)w.at;
    case GR_T_STATUS_REPLY:
        put_bytes(&w, result->data, result->length);
        return (long)w.at;
    case GR_T_ARRAY_REPLY:
        break;
    default:
        return -1;                          /* an error reply: raised from the gr_result_t */
    }
    if (result->is_nil) {
        put_byte(&w, 'N');
        return (long)w.at;
    }
    tree_source_t source = {.elements = result->elements, .count = result->count};
    return write_tree(&source, root_as_tuple, &w, 0);
}

long gr_plain_reply_write_message(const uint8_t *message, size_t length, int root_as_tuple, uint8_t *out,
                                  size_t capacity, uint64_t *request_id) {
    writer_t w = {out, capacity, 0};
    tree_source_t source;
    gr_reply_message_t head;
    if (gr_stream_array_reply_open(message, length, &head, &source.reader) != GR_CODEC_OK || source.reader.count == 0)
        return -1;                          /* (a tree without a root is the decoding path's protocol error) */
    *request_id = head.request_id;
    source.first = source.reader.position;
    source.count = source.reader.count;
    return write_tree(&source, root_as_tuple, &w, 1);
}
