/* sbe_reply.c — SBE reply writer for ring sessions; see sbe_reply.h for the staging format
 * and the tree an ArrayReply carries. Scalar replies go through the codec's gr_encode_reply;
 * an ArrayReply is streamed element by element into staging with the codec's
 * gr_stream_array_reply_* (generated from the schema), and its count is patched at the close.
 */
#include "ring/sbe_reply.h"

#include "core/number.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ring/codec.h"

_Static_assert((int)GR_ERR_WRONGTYPE == (int)GR_ERROR_CODE_WRONGTYPE, "reply.h error codes drifted from the schema");
_Static_assert((int)GR_ERR_PROTOCOL == (int)GR_ERROR_CODE_PROTOCOL, "reply.h error codes drifted from the schema");

#define FRAME_HEADER 8
#define ARRAY_HEAD (GR_MESSAGE_HEADER_LENGTH + GR_ARRAY_REPLY_BLOCK_LENGTH + GR_ARRAY_REPLY_GROUP_HEADER_LENGTH)

static gr_sbe_reply_t *writer_of(gr_reply_t *base) { return (gr_sbe_reply_t *)base; }

/* reserve's growth, out of line: every reply element tests for room, and the realloc path's
 * registers would otherwise be saved around each one. */
static __attribute__((noinline)) int reserve_grow(gr_sbe_reply_t *w, size_t extra) {
    size_t capacity = w->stage_capacity ? w->stage_capacity : 4096;
    while (capacity - w->stage_length < extra) capacity *= 2;
    uint8_t *grown = realloc(w->stage, capacity);
    if (!grown) { w->base.failed = 1; return -1; }
    w->stage = grown;
    w->stage_capacity = capacity;
    return 0;
}

static inline int reserve(gr_sbe_reply_t *w, size_t extra) {
    return w->stage_capacity - w->stage_length >= extra ? 0 : reserve_grow(w, extra);
}

static void put_frame_header(uint8_t *at, uint32_t template_id, uint32_t length) {
    memcpy(at, &template_id, 4);
    memcpy(at + 4, &length, 4);
}

static void stage_message(gr_sbe_reply_t *w, gr_reply_message_t *message) {
    message->request_id = w->request_id;
    size_t need = gr_reply_encoded_size(message);
    if (reserve(w, FRAME_HEADER + need) != 0) return;
    size_t length = 0;
    uint8_t *frame = w->stage + w->stage_length;
    if (gr_encode_reply(message, frame + FRAME_HEADER, need, &length) != GR_CODEC_OK) {
        w->base.failed = 1;
        return;
    }
    put_frame_header(frame, message->template_id, (uint32_t)length);
    w->stage_length += FRAME_HEADER + length;
}

/* ---- the ArrayReply tree ---- */

static void append_deferred(gr_sbe_reply_t *w);

static void close_array(gr_sbe_reply_t *w) {
    uint8_t *message = w->stage + w->array_frame + FRAME_HEADER;
    gr_stream_array_reply_set_count(message, w->array_count);
    put_frame_header(w->stage + w->array_frame, GR_T_ARRAY_REPLY,
                     (uint32_t)(w->stage_length - w->array_frame - FRAME_HEADER));
    w->depth = 0;
    if (w->deferred_length) append_deferred(w);
}

/* Close every container the last element completed; the message with the root. */
static void close_completed(gr_sbe_reply_t *w) {
    while (w->depth > 0 && w->remaining[w->depth - 1] == 0) w->depth--;
    if (w->depth == 0) close_array(w);
}

/* A leaf inside an open array (the elements of LRANGE, LMPOP, HGETALL...): add_node's work
 * for the case that is nearly every element of a large reply, without its branches for
 * opening the message and containers. */
static inline void add_leaf(gr_sbe_reply_t *w, uint8_t kind, int64_t integer, const uint8_t *data, size_t length) {
    if (w->depth == 0) { w->base.failed = 1; return; }   /* its container failed to open */
    if (reserve(w, GR_ARRAY_REPLY_ELEMENT_FIXED + length) != 0) return;
    gr_element_t element = {kind, integer, {data, (uint32_t)length}};
    w->stage_length += gr_stream_array_reply_element(&element, w->stage + w->stage_length,
                                                     GR_ARRAY_REPLY_ELEMENT_FIXED + length);
    w->array_count++;
    if (--w->remaining[w->depth - 1] == 0) close_completed(w);
}

/* At the root (nothing open): reserve a whole ArrayReply of `elements` more elements and
 * `bytes` of their data, open its frame and write its head. The stage pointer past the head,
 * or NULL when out of memory (failed is set). */
static uint8_t *open_root(gr_sbe_reply_t *w, size_t elements, size_t bytes) {
    if (reserve(w, FRAME_HEADER + ARRAY_HEAD + elements * GR_ARRAY_REPLY_ELEMENT_FIXED + bytes) != 0) return NULL;
    w->array_frame = w->stage_length;
    uint8_t *message = w->stage + w->array_frame + FRAME_HEADER;
    w->array_head.request_id = w->request_id;
    return message + gr_stream_array_reply_head(&w->array_head, message, ARRAY_HEAD);
}

/* One element at `at`, which the caller reserved room for; returns the position after it. */
static uint8_t *put_element(uint8_t *at, uint8_t kind, int64_t integer, const uint8_t *data, size_t length) {
    gr_element_t element = {kind, integer, {data, (uint32_t)length}};
    return at + gr_stream_array_reply_element(&element, at, GR_ARRAY_REPLY_ELEMENT_FIXED + length);
}

/* One node: opens the message if no array is open, counts against its parent, and closes
 * every container its arrival completes. children > 0 opens a container of that many. */
static void add_node(gr_sbe_reply_t *w, uint8_t kind, int64_t integer, const uint8_t *data, size_t length,
                     uint64_t children) {
    if (w->depth == 0) {
        uint8_t *at = open_root(w, 0, 0);
        if (!at) return;
        w->stage_length = (size_t)(at - w->stage);
        w->array_count = 0;
    } else {
        w->remaining[w->depth - 1]--;
    }
    gr_element_t element = {kind, integer, {data, (uint32_t)length}};
    if (reserve(w, GR_ARRAY_REPLY_ELEMENT_FIXED + length) != 0) return;
    w->stage_length += gr_stream_array_reply_element(&element, w->stage + w->stage_length,
                                                     GR_ARRAY_REPLY_ELEMENT_FIXED + length);
    w->array_count++;
    if (children) {
        if (w->depth == GR_SBE_REPLY_MAX_DEPTH) { w->base.failed = 1; return; }
        w->remaining[w->depth++] = children;
        return;
    }
    if (w->depth == 0) { w->depth = 1; w->remaining[0] = 0; }   /* a childless root (NIL_ARRAY, empty array) */
    close_completed(w);
}

/* ---- the reply operations ---- */

static void op_integer(gr_reply_t *base, int64_t value) {
    gr_sbe_reply_t *w = writer_of(base);
    if (w->depth) { add_leaf(w, GR_ELEMENT_KIND_INTEGER, value, NULL, 0); return; }
    gr_reply_message_t message = {0};
    message.template_id = GR_T_INTEGER_REPLY;
    message.integer = value;
    stage_message(w, &message);
}

/* A BulkReply message (out of op_bulk, so that an array's elements, LRANGE's and LMPOP's, do
 * not pay for this path's stack frame). */
static __attribute__((noinline)) void stage_bulk(gr_sbe_reply_t *w, const uint8_t *data, size_t length) {
    gr_reply_message_t message = {0};
    message.template_id = GR_T_BULK_REPLY;
    message.text.data = data;
    message.text.length = (uint32_t)length;
    stage_message(w, &message);
}

static void op_bulk(gr_reply_t *base, const uint8_t *data, size_t length) {
    gr_sbe_reply_t *w = writer_of(base);
    if (w->depth) { add_leaf(w, GR_ELEMENT_KIND_BULK, 0, data, length); return; }
    stage_bulk(w, data, length);
}

/* op_bulks's other case, out of line so that the run's path saves no registers for it. */
static __attribute__((noinline)) void bulks_one_at_a_time(gr_reply_t *base, const gr_bytes_t *values, size_t count) {
    for (size_t i = 0; i < count; i++) op_bulk(base, values[i].data, values[i].length);
}

/* A run of bulks inside an open array (LRANGE's and LMPOP's values): add_leaf's work once for
 * the run — one reservation, one generated call writing every element, the counters moved once.
 * A run longer than its container (or with no array open) goes a value at a time, so that
 * whatever that does (fail, or open the root) is op_bulk's. */
static void op_bulks(gr_reply_t *base, const gr_bytes_t *values, size_t count) {
    gr_sbe_reply_t *w = writer_of(base);
    if (count == 0) return;
    if (w->depth == 0 || count > w->remaining[w->depth - 1]) {
        bulks_one_at_a_time(base, values, count);
        return;
    }
    size_t bytes = count * GR_ARRAY_REPLY_ELEMENT_FIXED;
    for (size_t i = 0; i < count; i++) bytes += values[i].length;
    if (reserve(w, bytes) != 0) return;
    w->stage_length += gr_stream_array_reply_bulks(values, count, w->stage + w->stage_length, bytes);
    w->array_count += (uint32_t)count;
    w->remaining[w->depth - 1] -= count;
    if (w->remaining[w->depth - 1] == 0) close_completed(w);
}

static void op_nil(gr_reply_t *base) {
    gr_sbe_reply_t *w = writer_of(base);
    if (w->depth) { add_leaf(w, GR_ELEMENT_KIND_NIL, 0, NULL, 0); return; }
    gr_reply_message_t message = {0};
    message.template_id = GR_T_BULK_REPLY;
    message.is_nil = 1;
    stage_message(w, &message);
}

static void op_nil_array(gr_reply_t *base) {
    add_node(writer_of(base), GR_ELEMENT_KIND_NIL_ARRAY, 0, NULL, 0, 0);
}

static void op_status(gr_reply_t *base, const char *text, size_t length) {
    gr_sbe_reply_t *w = writer_of(base);
    if (w->depth) { add_leaf(w, GR_ELEMENT_KIND_STATUS, 0, (const uint8_t *)text, length); return; }
    gr_reply_message_t message = {0};
    message.template_id = GR_T_STATUS_REPLY;
    message.text.data = (const uint8_t *)text;
    message.text.length = (uint32_t)length;
    stage_message(w, &message);
}

static void op_error(gr_reply_t *base, gr_error_code_t code, const char *text, size_t length) {
    gr_sbe_reply_t *w = writer_of(base);
    if (w->depth) { add_leaf(w, GR_ELEMENT_KIND_ERROR, code, (const uint8_t *)text, length); return; }
    gr_reply_message_t message = {0};
    message.template_id = GR_T_ERROR_REPLY;
    message.error_code = (uint16_t)code;
    message.text.data = (const uint8_t *)text;
    message.text.length = (uint32_t)length;
    stage_message(w, &message);
}

static void op_array_begin(gr_reply_t *base, size_t count) {
    add_node(writer_of(base), GR_ELEMENT_KIND_ARRAY, (int64_t)count, NULL, 0, count);
}

/* [key, [elements...]] (LMPOP, SCAN): an array of two, the key and the array. At the root (as
 * it always is for LMPOP) the three head elements go in one reservation and the writer is left
 * as add_node would leave it: the root complete, the inner array open for `count` leaves. */
static void op_keyed_array_begin(gr_reply_t *base, const uint8_t *key, size_t key_length, size_t count) {
    gr_sbe_reply_t *w = writer_of(base);
    if (w->depth == 0 && count > 0) {
        uint8_t *at = open_root(w, 3, key_length);
        if (!at) return;
        at = put_element(at, GR_ELEMENT_KIND_ARRAY, 2, NULL, 0);
        at = put_element(at, GR_ELEMENT_KIND_BULK, 0, key, key_length);
        at = put_element(at, GR_ELEMENT_KIND_ARRAY, (int64_t)count, NULL, 0);
        w->stage_length = (size_t)(at - w->stage);
        w->array_count = 3;
        w->remaining[0] = 0;
        w->remaining[1] = count;
        w->depth = 2;
        return;
    }
    add_node(w, GR_ELEMENT_KIND_ARRAY, 2, NULL, 0, 2);
    add_leaf(w, GR_ELEMENT_KIND_BULK, 0, key, key_length);
    add_node(w, GR_ELEMENT_KIND_ARRAY, (int64_t)count, NULL, 0, count);
}

/* [key, value] (BLPOP, BRPOP). At the root (as it always is for them) the whole message in one
 * reservation: head, the array, both bulks, the count and the frame; nested, as nodes. */
static void op_pair(gr_reply_t *base, const uint8_t *key, size_t key_length, const uint8_t *value, size_t value_length) {
    gr_sbe_reply_t *w = writer_of(base);
    if (w->depth == 0) {
        uint8_t *at = open_root(w, 3, key_length + value_length);
        if (!at) return;
        at = put_element(at, GR_ELEMENT_KIND_ARRAY, 2, NULL, 0);
        at = put_element(at, GR_ELEMENT_KIND_BULK, 0, key, key_length);
        at = put_element(at, GR_ELEMENT_KIND_BULK, 0, value, value_length);
        w->stage_length = (size_t)(at - w->stage);
        w->array_count = 3;
        close_array(w);
        return;
    }
    add_node(w, GR_ELEMENT_KIND_ARRAY, 2, NULL, 0, 2);
    add_leaf(w, GR_ELEMENT_KIND_BULK, 0, key, key_length);
    add_leaf(w, GR_ELEMENT_KIND_BULK, 0, value, value_length);
}

static void op_map_begin(gr_reply_t *base, size_t pairs) {
    add_node(writer_of(base), GR_ELEMENT_KIND_MAP, (int64_t)pairs, NULL, 0, 2 * (uint64_t)pairs);
}

static void op_verbatim(gr_reply_t *base, const uint8_t *text, size_t length) { op_bulk(base, text, length); }

static void op_double(gr_reply_t *base, double value) {
    char text[40];
    size_t n = gr_double_to_text(value, text, sizeof text);
    op_bulk(base, (const uint8_t *)text, n);
}

static const gr_reply_ops_t sbe_reply_ops = {
    op_integer, op_bulk, op_nil, op_nil_array, op_status, op_error,
    op_array_begin, op_keyed_array_begin, op_pair, op_map_begin, op_verbatim, op_double,
    op_array_begin,   /* set_begin: the ring has no set shape; a set travels as an array */
    op_array_begin,   /* push_begin: (un)subscribe confirmations travel as arrays */
    NULL,             /* unsigned_integer: IntegerReply is signed; past INT64_MAX reply.h sends the digits */
    op_bulks,
    NULL,             /* boolean: an IntegerReply 1 or 0 */
    NULL,             /* big_number: its digits as a bulk */
};

int gr_sbe_reply_init(gr_sbe_reply_t *reply) {
    memset(reply, 0, sizeof *reply);
    reply->base.ops = &sbe_reply_ops;
    reply->array_head.template_id = GR_T_ARRAY_REPLY;
    return reserve(reply, 4096);
}

void gr_sbe_reply_free(gr_sbe_reply_t *reply) {
    free(reply->stage);
    reply->stage = NULL;
    free(reply->deferred);
    reply->deferred = NULL;
}

int gr_sbe_reply_frame_at(const gr_sbe_reply_t *reply, size_t offset, uint32_t *template_id,
                          const uint8_t **message, uint32_t *length, size_t *next_offset) {
    /* an ArrayReply still being streamed is not a frame yet */
    size_t complete = reply->depth ? reply->array_frame : reply->stage_length;
    if (offset + FRAME_HEADER > complete) return 0;
    memcpy(template_id, reply->stage + offset, 4);
    memcpy(length, reply->stage + offset + 4, 4);
    *message = reply->stage + offset + FRAME_HEADER;
    *next_offset = offset + FRAME_HEADER + *length;
    return 1;
}

#define STAGE_KEEP (4u << 20)   /* staging grown past this by a large reply is given back once empty */

void gr_sbe_reply_consume(gr_sbe_reply_t *reply, size_t bytes) {
    if (bytes >= reply->stage_length) {
        reply->stage_length = 0;
        if (reply->stage_capacity > STAGE_KEEP && !reply->depth) {
            uint8_t *smaller = realloc(reply->stage, 4096);
            if (smaller) { reply->stage = smaller; reply->stage_capacity = 4096; }
        }
        return;
    }
    memmove(reply->stage, reply->stage + bytes, reply->stage_length - bytes);
    reply->stage_length -= bytes;
    if (reply->depth) reply->array_frame -= bytes;
}

/* ---- Pub/Sub push messages ---- */

static void append_deferred(gr_sbe_reply_t *w) {
    if (reserve(w, w->deferred_length) != 0) return;
    memcpy(w->stage + w->stage_length, w->deferred, w->deferred_length);
    w->stage_length += w->deferred_length;
    w->deferred_length = 0;
}

int gr_sbe_reply_stage_push(gr_sbe_reply_t *reply, const gr_reply_message_t *push) {
    size_t need = gr_reply_encoded_size(push);
    uint8_t *frame;
    if (reply->depth == 0) {
        if (reserve(reply, FRAME_HEADER + need) != 0) return -1;
        frame = reply->stage + reply->stage_length;
    } else {
        if (reply->deferred_capacity - reply->deferred_length < FRAME_HEADER + need) {
            size_t capacity = reply->deferred_capacity ? reply->deferred_capacity : 4096;
            while (capacity - reply->deferred_length < FRAME_HEADER + need) capacity *= 2;
            uint8_t *grown = realloc(reply->deferred, capacity);
            if (!grown) { reply->base.failed = 1; return -1; }
            reply->deferred = grown;
            reply->deferred_capacity = capacity;
        }
        frame = reply->deferred + reply->deferred_length;
    }
    size_t length = 0;
    if (gr_encode_reply(push, frame + FRAME_HEADER, need, &length) != GR_CODEC_OK) {
        reply->base.failed = 1;
        return -1;
    }
    put_frame_header(frame, push->template_id, (uint32_t)length);
    if (reply->depth == 0) reply->stage_length += FRAME_HEADER + length;
    else reply->deferred_length += FRAME_HEADER + length;
    return 0;
}

long gr_sbe_reply_insert_push(gr_sbe_reply_t *reply, size_t offset, const gr_reply_message_t *push) {
    if (reply->depth != 0 || reply->deferred_length != 0 || offset > reply->stage_length ||
        (offset == 0 && reply->head_sent != 0))
        return -1;
    size_t need = gr_reply_encoded_size(push);
    if (reply->stage_capacity - reply->stage_length < FRAME_HEADER + need) {
        size_t capacity = reply->stage_capacity ? reply->stage_capacity : 4096;
        while (capacity - reply->stage_length < FRAME_HEADER + need) capacity *= 2;
        uint8_t *grown = realloc(reply->stage, capacity);
        if (!grown) return -1;   /* the reply itself is untouched */
        reply->stage = grown;
        reply->stage_capacity = capacity;
    }
    uint8_t *frame = reply->stage + offset;
    memmove(frame + FRAME_HEADER + need, frame, reply->stage_length - offset);
    size_t length = 0;
    if (gr_encode_reply(push, frame + FRAME_HEADER, need, &length) != GR_CODEC_OK || length != need) {
        memmove(frame, frame + FRAME_HEADER + need, reply->stage_length - offset);
        return -1;
    }
    put_frame_header(frame, push->template_id, (uint32_t)length);
    reply->stage_length += FRAME_HEADER + length;
    return (long)(FRAME_HEADER + length);
}

size_t gr_sbe_reply_pending_bytes(const gr_sbe_reply_t *reply) {
    return reply->stage_length + reply->deferred_length;
}
