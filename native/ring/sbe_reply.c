/* sbe_reply.c — SBE reply writer for ring sessions; see sbe_reply.h for the staging format,
 * chunking and the too-large rule. Scalar replies go through the codec's gr_encode_reply;
 * array chunks are written element by element straight into staging with the codec's
 * streamed ArrayReply writer (gr_stream_array_reply_*, generated from the schema), and the
 * group count and trailing key are filled in at the close.
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
#define ELEMENT_FIXED GR_ARRAY_REPLY_ELEMENT_FIXED   /* an element's block and its var-data length word */
#define ARRAY_HEAD (GR_MESSAGE_HEADER_LENGTH + GR_ARRAY_REPLY_BLOCK_LENGTH + GR_ARRAY_REPLY_GROUP_HEADER_LENGTH)

static gr_sbe_reply_t *writer_of(gr_reply_t *base) { return (gr_sbe_reply_t *)base; }

static int reserve(gr_sbe_reply_t *w, size_t extra) {
    if (w->stage_capacity - w->stage_length >= extra) return 0;
    size_t capacity = w->stage_capacity ? w->stage_capacity : 4096;
    while (capacity - w->stage_length < extra) capacity *= 2;
    uint8_t *grown = realloc(w->stage, capacity);
    if (!grown) { w->base.failed = 1; return -1; }
    w->stage = grown;
    w->stage_capacity = capacity;
    return 0;
}

static void put_frame_header(uint8_t *at, uint32_t template_id, uint32_t length) {
    memcpy(at, &template_id, 4);
    memcpy(at + 4, &length, 4);
}

static void stage_message(gr_sbe_reply_t *w, gr_reply_message_t *message, size_t payload_hint) {
    message->request_id = w->request_id;
    size_t need = FRAME_HEADER + 64 + payload_hint;
    if (reserve(w, need) != 0) return;
    size_t length = 0;
    uint8_t *frame = w->stage + w->stage_length;
    if (gr_encode_reply(message, frame + FRAME_HEADER, need - FRAME_HEADER, &length) != GR_CODEC_OK) {
        w->base.failed = 1;
        return;
    }
    put_frame_header(frame, message->template_id, (uint32_t)length);
    w->stage_length += FRAME_HEADER + length;
}

static void stage_error(gr_sbe_reply_t *w, gr_error_code_t code, const char *text, size_t length) {
    gr_reply_message_t message = {0};
    message.template_id = GR_T_ERROR_REPLY;
    message.error_code = (uint16_t)code;
    message.text.data = (const uint8_t *)text;
    message.text.length = (uint32_t)length;
    stage_message(w, &message, length);
}

static void poison(gr_sbe_reply_t *w, gr_error_code_t code, const char *text) {
    if (w->poisoned) return;
    w->poisoned = code;
    snprintf(w->poison_text, sizeof w->poison_text, "%s", text);
    w->stage_length = w->array_start;   /* roll back any chunk already staged */
    w->chunk_open = 0;
}

/* ---- array chunks ---- */

static void open_chunk(gr_sbe_reply_t *w) {
    if (reserve(w, FRAME_HEADER + w->max_message) != 0) { poison(w, GR_ERR_OUT_OF_MEMORY, "OOM"); return; }
    w->chunk_frame = w->stage_length;
    gr_reply_message_t head = {0};
    head.template_id = GR_T_ARRAY_REPLY;
    head.request_id = w->request_id;
    head.shape = w->shape;
    head.total_count = w->total;
    head.first_index = w->next_index;
    size_t written = gr_stream_array_reply_head(&head, w->stage + w->chunk_frame + FRAME_HEADER, w->max_message);
    w->chunk_end = w->chunk_frame + FRAME_HEADER + written;
    w->chunk_count = 0;
    w->chunk_first = w->next_index;
    w->chunk_open = 1;
}

static void close_chunk(gr_sbe_reply_t *w) {
    uint8_t *message = w->stage + w->chunk_frame + FRAME_HEADER;
    gr_stream_array_reply_set_count(message, w->chunk_count);
    gr_reply_message_t tail = {0};
    if (w->chunk_first == 0 && w->key) {
        tail.text.data = w->key;
        tail.text.length = (uint32_t)w->key_length;
    }
    size_t used = w->chunk_end - w->chunk_frame - FRAME_HEADER;
    size_t written = gr_stream_array_reply_tail(&tail, w->stage + w->chunk_end, w->max_message - used);
    uint32_t length = (uint32_t)(used + written);
    put_frame_header(w->stage + w->chunk_frame, GR_T_ARRAY_REPLY, length);
    w->stage_length = w->chunk_frame + FRAME_HEADER + length;
    w->chunk_open = 0;
}

static void finish_array_if_done(gr_sbe_reply_t *w) {
    if (w->remaining) return;
    if (w->poisoned) {
        w->in_array = 0;
        stage_error(w, (gr_error_code_t)w->poisoned, w->poison_text, strlen(w->poison_text));
        w->poisoned = 0;
        return;
    }
    if (!w->chunk_open) open_chunk(w);    /* an empty array is one empty chunk */
    if (w->chunk_open) close_chunk(w);
    w->in_array = 0;
}

static size_t key_reserve(const gr_sbe_reply_t *w) {
    return 4 + (w->chunk_first == 0 && w->key ? w->key_length : 0);
}

static void add_element(gr_sbe_reply_t *w, uint8_t kind, int64_t integer, const uint8_t *data, size_t length) {
    if (w->poisoned) { w->remaining--; finish_array_if_done(w); return; }
    size_t overhead = ARRAY_HEAD + 4 + w->key_length;
    if (ELEMENT_FIXED + length + overhead > w->max_message) {
        char text[160];
        snprintf(text, sizeof text, "ERR value of %zu bytes exceeds the ring's largest message (%zu bytes)",
                 length, w->max_message);
        poison(w, GR_ERR_TOO_LARGE, text);
        w->remaining--;
        finish_array_if_done(w);
        return;
    }
    if (w->chunk_open) {
        size_t used = w->chunk_end - w->chunk_frame - FRAME_HEADER;
        if (used + ELEMENT_FIXED + length + key_reserve(w) > w->max_message || w->chunk_count == GR_GROUP_MAX_ITEMS - 1)
            close_chunk(w);
    }
    if (!w->chunk_open) open_chunk(w);
    if (w->poisoned) { w->remaining--; finish_array_if_done(w); return; }
    gr_element_t element = {kind, integer, {data, (uint32_t)length}};
    size_t used = w->chunk_end - w->chunk_frame - FRAME_HEADER;
    w->chunk_end += gr_stream_array_reply_element(&element, w->stage + w->chunk_end, w->max_message - used);
    w->chunk_count++;
    w->next_index++;
    w->remaining--;
    finish_array_if_done(w);
}

static void begin_array(gr_sbe_reply_t *w, uint8_t shape, size_t count, const uint8_t *key, size_t key_length) {
    if (w->in_array) {
        /* A nested array (e.g. HELLO's modules) has no SBE shape. */
        poison(w, GR_ERR_GENERIC, "ERR reply shape not representable over the ring; use CommandRequest over RESP");
        if (count == 0) return;
        w->remaining += (uint32_t)count;
        return;
    }
    w->in_array = 1;
    w->poisoned = 0;
    w->shape = shape;
    w->array_start = w->stage_length;
    w->total = (uint32_t)count;
    w->remaining = (uint32_t)count;
    w->next_index = 0;
    w->chunk_first = 0;
    w->key = key;
    w->key_length = key ? key_length : 0;
    w->chunk_open = 0;
    if (w->key_length + 64 > w->max_message) poison(w, GR_ERR_TOO_LARGE, "ERR key exceeds the ring's largest message");
    finish_array_if_done(w);
}

/* ---- the reply operations ---- */

static void op_integer(gr_reply_t *base, int64_t value) {
    gr_sbe_reply_t *w = writer_of(base);
    if (w->in_array) { add_element(w, 2, value, NULL, 0); return; }
    gr_reply_message_t message = {0};
    message.template_id = GR_T_INTEGER_REPLY;
    message.integer = value;
    stage_message(w, &message, 0);
}

static void op_bulk(gr_reply_t *base, const uint8_t *data, size_t length) {
    gr_sbe_reply_t *w = writer_of(base);
    if (w->in_array) { add_element(w, 0, 0, data, length); return; }
    size_t overhead = GR_MESSAGE_HEADER_LENGTH + 16 + 4;
    if (length + overhead > w->max_message) {
        char text[160];
        int n = snprintf(text, sizeof text, "ERR value of %zu bytes exceeds the ring's largest message (%zu bytes)",
                         length, w->max_message);
        stage_error(w, GR_ERR_TOO_LARGE, text, (size_t)n);
        return;
    }
    gr_reply_message_t message = {0};
    message.template_id = GR_T_BULK_REPLY;
    message.text.data = data;
    message.text.length = (uint32_t)length;
    stage_message(w, &message, length);
}

static void op_nil(gr_reply_t *base) {
    gr_sbe_reply_t *w = writer_of(base);
    if (w->in_array) { add_element(w, 1, 0, NULL, 0); return; }
    gr_reply_message_t message = {0};
    message.template_id = GR_T_BULK_REPLY;
    message.is_nil = 1;
    stage_message(w, &message, 0);
}

static void op_nil_array(gr_reply_t *base) {
    gr_sbe_reply_t *w = writer_of(base);
    if (w->in_array) { add_element(w, 1, 0, NULL, 0); return; }
    begin_array(w, 2, 0, NULL, 0);
}

static void op_status(gr_reply_t *base, const char *text, size_t length) {
    gr_sbe_reply_t *w = writer_of(base);
    if (w->in_array) { add_element(w, 0, 0, (const uint8_t *)text, length); return; }
    gr_reply_message_t message = {0};
    message.template_id = GR_T_STATUS_REPLY;
    message.text.data = (const uint8_t *)text;
    message.text.length = (uint32_t)length;
    stage_message(w, &message, length);
}

static void op_error(gr_reply_t *base, gr_error_code_t code, const char *text, size_t length) {
    gr_sbe_reply_t *w = writer_of(base);
    if (w->in_array) { poison(w, code, text); w->remaining--; finish_array_if_done(w); return; }
    stage_error(w, code, text, length);
}

static void op_array_begin(gr_reply_t *base, size_t count) { begin_array(writer_of(base), 0, count, NULL, 0); }

static void op_keyed_array_begin(gr_reply_t *base, const uint8_t *key, size_t key_length, size_t count) {
    begin_array(writer_of(base), 1, count, key, key_length);
}

static void op_pair(gr_reply_t *base, const uint8_t *key, size_t key_length, const uint8_t *value, size_t value_length) {
    gr_sbe_reply_t *w = writer_of(base);
    begin_array(w, 0, 2, NULL, 0);
    add_element(w, 0, 0, key, key_length);
    add_element(w, 0, 0, value, value_length);
}

static void op_map_begin(gr_reply_t *base, size_t pairs) { begin_array(writer_of(base), 0, 2 * pairs, NULL, 0); }

static void op_verbatim(gr_reply_t *base, const uint8_t *text, size_t length) { op_bulk(base, text, length); }

static void op_double(gr_reply_t *base, double value) {
    char text[40];
    size_t n = gr_double_to_text(value, text, sizeof text);
    op_bulk(base, (const uint8_t *)text, n);
}

static const gr_reply_ops_t sbe_reply_ops = {
    op_integer, op_bulk, op_nil, op_nil_array, op_status, op_error,
    op_array_begin, op_keyed_array_begin, op_pair, op_map_begin, op_verbatim, op_double,
};

int gr_sbe_reply_init(gr_sbe_reply_t *reply, size_t max_message) {
    memset(reply, 0, sizeof *reply);
    reply->base.ops = &sbe_reply_ops;
    reply->max_message = max_message;
    return reserve(reply, FRAME_HEADER + max_message);
}

void gr_sbe_reply_free(gr_sbe_reply_t *reply) {
    free(reply->stage);
    reply->stage = NULL;
}

int gr_sbe_reply_frame_at(const gr_sbe_reply_t *reply, size_t offset, uint32_t *template_id,
                          const uint8_t **message, uint32_t *length, size_t *next_offset) {
    if (offset + FRAME_HEADER > reply->stage_length) return 0;
    memcpy(template_id, reply->stage + offset, 4);
    memcpy(length, reply->stage + offset + 4, 4);
    *message = reply->stage + offset + FRAME_HEADER;
    *next_offset = offset + FRAME_HEADER + *length;
    return 1;
}

void gr_sbe_reply_consume(gr_sbe_reply_t *reply, size_t bytes) {
    if (bytes >= reply->stage_length) { reply->stage_length = 0; return; }
    memmove(reply->stage, reply->stage + bytes, reply->stage_length - bytes);
    reply->stage_length -= bytes;
}
