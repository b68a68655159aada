/* test_codec.c — the codec's bad-input guarantees, in C so they run under ASan/UBSan.
 *
 * Each case copies the bytes into a malloc'd buffer of exactly the message's length, so
 * a read one byte past the end aborts under AddressSanitizer. The templates come from the
 * generated lists (codec_generated.h), so a new schema message is tested without an edit
 * here. Cases: the generated offsets agree with sbe-tool's; every request, reply and attach
 * template round-trips (requests slot by slot, from the generated slot masks); every
 * truncation of each; every too-small output buffer; an unknown template, a wrong schema id,
 * a short block length, var-data lengths past the end; a fixed-seed mutation fuzz loop
 * over every template of every family. Every reply decoded here is also read by the
 * generated streamed ArrayReply reader (codec_stream_generated.h), which must agree with the decoder.
 * Usage: test_codec [fuzz-iterations]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ring/codec.h"
#include "ring/codec_stream_generated.h"
#include "tests/test_helpers.h"

#define STORAGE 4096   /* more entries than any message this test builds can hold */
static gr_bytes_t item_storage[STORAGE];
static gr_element_t element_storage[STORAGE];

static gr_bytes_t text(const char *s) { gr_bytes_t b = {(const uint8_t *)s, (uint32_t)strlen(s)}; return b; }

/* The streamed ArrayReply reader (codec_stream_generated.h) agrees with gr_decode_reply on an ArrayReply
 * message: the same status (every truncation, every mutation) and, element by element, the
 * same tree and request id. */
static void check_stream_reader(const uint8_t *copy, size_t length, gr_codec_status_t decoded,
                                const gr_reply_message_t *reply) {
    if (length >= GR_MESSAGE_HEADER_LENGTH && gr_wire_load_uint16(copy + 2) != GR_T_ARRAY_REPLY) return;
    gr_reply_message_t head = {0};
    gr_array_reply_reader_t reader;
    gr_codec_status_t status = gr_stream_array_reply_open(copy, length, &head, &reader);
    for (uint32_t i = 0; status == GR_CODEC_OK && i < reader.count; i++) {
        gr_element_t element;
        status = gr_stream_array_reply_next(&reader, &element);
        if (status != GR_CODEC_OK) break;
        const gr_element_t *expected = &reply->elements[i];
        CHECK(element.kind == expected->kind && element.integer == expected->integer &&
              element.bytes.length == expected->bytes.length && element.bytes.data == expected->bytes.data,
              "streamed element %u is the decoded one", i);
    }
    CHECK(status == decoded, "the stream reader says %s where the decoder says %s", gr_codec_status_text(status),
          gr_codec_status_text(decoded));
    if (status == GR_CODEC_OK)
        CHECK(head.request_id == reply->request_id && reader.count == reply->element_count,
              "streamed request id and count");
}

static gr_codec_status_t decode_exact(const uint8_t *bytes, size_t length, int as_reply) {
    uint8_t *copy = malloc(length ? length : 1);
    memcpy(copy, bytes, length);
    gr_codec_status_t status;
    if (as_reply) {
        gr_reply_message_t reply = {0};
        reply.elements = element_storage;
        reply.element_capacity = STORAGE;
        status = gr_decode_reply(copy, length, &reply);
        check_stream_reader(copy, length, status, &reply);
    } else {
        gr_request_t request = {0};
        request.items = item_storage;
        request.item_capacity = STORAGE;
        status = gr_decode_request(copy, length, &request);
        if (status == GR_CODEC_OK) {   /* touch every byte the decoder pointed at */
            volatile uint8_t sink = 0;
            for (uint32_t i = 0; i < request.key.length; i++) sink ^= request.key.data[i];
            for (uint32_t i = 0; i < request.arg1.length; i++) sink ^= request.arg1.data[i];
            for (uint32_t i = 0; i < request.arg2.length; i++) sink ^= request.arg2.data[i];
            for (uint32_t j = 0; j < request.item_count; j++)
                for (uint32_t i = 0; i < request.items[j].length; i++) sink ^= request.items[j].data[i];
            (void)sink;
        }
    }
    free(copy);
    return status;
}

/* Every request template the schema has (generated: codec_generated.h), and a sample with
 * every slot set to a value valid for every enum, so each template encodes whatever it carries. */
static void sample_request(uint16_t template_id, gr_request_t *request, gr_bytes_t *items) {
    items[0] = text("a"); items[1] = text(""); items[2] = text("third value");
    memset(request, 0, sizeof *request);
    request->template_id = template_id;
    request->request_id = 77;
    request->end = 1; request->to_end = 1; request->flag = 1; request->engine = 2;
    request->count = 3; request->max_len = 77;
    request->index = -5; request->index2 = INT64_MAX; request->cursor = UINT64_MAX; request->timeout = 0.25;
    request->key = text("mylist");
    request->arg1 = text("pivot");
    request->arg2 = text("value");
    request->items = items;
    request->item_count = 3;
}

static int same_bytes(gr_bytes_t a, gr_bytes_t b) {
    return a.length == b.length && (a.length == 0 || memcmp(a.data, b.data, a.length) == 0);
}

/* Decode must give back every slot the template carries, and zero for every other. */
static void check_round_trip(uint16_t template_id, const uint8_t *message, size_t length) {
    gr_bytes_t sent_items[3];
    gr_request_t sent, got = {0};
    sample_request(template_id, &sent, sent_items);
    got.items = item_storage;
    got.item_capacity = STORAGE;
    gr_codec_status_t status = gr_decode_request(message, length, &got);
    CHECK(status == GR_CODEC_OK, "template %u decodes: %s", template_id, gr_codec_status_text(status));
    if (status != GR_CODEC_OK) return;
    uint32_t slots = gr_request_slots(template_id);
    CHECK(got.template_id == template_id && got.request_id == 77, "template %u header", template_id);
#define SLOT(bit, same) CHECK((slots & (bit)) ? (same) : 1, "template %u slot %s", template_id, #bit)
#define ZERO(bit, zero) CHECK((slots & (bit)) ? 1 : (zero), "template %u slot %s not zero", template_id, #bit)
    SLOT(GR_SLOT_END, got.end == sent.end);           ZERO(GR_SLOT_END, got.end == 0);
    SLOT(GR_SLOT_TO_END, got.to_end == sent.to_end);  ZERO(GR_SLOT_TO_END, got.to_end == 0);
    SLOT(GR_SLOT_FLAG, got.flag == sent.flag);        ZERO(GR_SLOT_FLAG, got.flag == 0);
    SLOT(GR_SLOT_ENGINE, got.engine == sent.engine);  ZERO(GR_SLOT_ENGINE, got.engine == 0);
    SLOT(GR_SLOT_COUNT, got.count == sent.count);     ZERO(GR_SLOT_COUNT, got.count == 0);
    SLOT(GR_SLOT_MAX_LEN, got.max_len == sent.max_len); ZERO(GR_SLOT_MAX_LEN, got.max_len == 0);
    SLOT(GR_SLOT_INDEX, got.index == sent.index);     ZERO(GR_SLOT_INDEX, got.index == 0);
    SLOT(GR_SLOT_INDEX2, got.index2 == sent.index2);  ZERO(GR_SLOT_INDEX2, got.index2 == 0);
    SLOT(GR_SLOT_CURSOR, got.cursor == sent.cursor);  ZERO(GR_SLOT_CURSOR, got.cursor == 0);
    SLOT(GR_SLOT_TIMEOUT, got.timeout == sent.timeout); ZERO(GR_SLOT_TIMEOUT, got.timeout == 0);
    SLOT(GR_SLOT_KEY, same_bytes(got.key, sent.key));    ZERO(GR_SLOT_KEY, got.key.length == 0);
    SLOT(GR_SLOT_ARG1, same_bytes(got.arg1, sent.arg1)); ZERO(GR_SLOT_ARG1, got.arg1.length == 0);
    SLOT(GR_SLOT_ARG2, same_bytes(got.arg2, sent.arg2)); ZERO(GR_SLOT_ARG2, got.arg2.length == 0);
    ZERO(GR_SLOT_ITEMS, got.item_count == 0);
    if (slots & GR_SLOT_ITEMS) {
        CHECK(got.item_count == 3, "template %u items", template_id);
        for (uint32_t i = 0; i < got.item_count && i < 3; i++)
            CHECK(same_bytes(got.items[i], sent_items[i]), "template %u item %u", template_id, i);
    }
#undef SLOT
#undef ZERO
}

static size_t encode_sample_request(uint16_t template_id, uint8_t *out, size_t capacity) {
    gr_bytes_t items[3];
    gr_request_t request;
    sample_request(template_id, &request, items);
    size_t length = 0;
    gr_codec_status_t status = gr_encode_request(&request, out, capacity, &length);
    CHECK(status == GR_CODEC_OK, "encode template %u: %s", template_id, gr_codec_status_text(status));
    CHECK(length == gr_request_encoded_size(&request), "template %u encoded size", template_id);
    return length;
}

/* A reply of any reply template, every slot set (the encoder takes what its template carries). */
/* A reply of any reply template, every slot set (the encoder takes what its template carries);
 * the ArrayReply's tree holds every element kind: [x, 5, [nil, {OK: WRONGTYPE error}], nil array]. */
static size_t encode_sample_reply(uint16_t template_id, uint8_t *out, size_t capacity) {
    gr_element_t elements[] = {
        {GR_ELEMENT_KIND_ARRAY, 4, {NULL, 0}}, {GR_ELEMENT_KIND_BULK, 0, {(const uint8_t *)"x", 1}},
        {GR_ELEMENT_KIND_INTEGER, 5, {NULL, 0}}, {GR_ELEMENT_KIND_ARRAY, 2, {NULL, 0}},
        {GR_ELEMENT_KIND_NIL, 0, {NULL, 0}}, {GR_ELEMENT_KIND_MAP, 1, {NULL, 0}},
        {GR_ELEMENT_KIND_STATUS, 0, {(const uint8_t *)"OK", 2}}, {GR_ELEMENT_KIND_ERROR, 2, {(const uint8_t *)"WRONGTYPE", 9}},
        {GR_ELEMENT_KIND_NIL_ARRAY, 0, {NULL, 0}},
    };
    const uint32_t element_count = sizeof elements / sizeof elements[0];
    gr_reply_message_t reply = {0};
    reply.template_id = template_id;
    reply.request_id = 9;
    reply.integer = -42;
    reply.is_nil = 1;
    reply.error_code = 2;
    reply.text = text("key");
    reply.push_kind = GR_PUSH_KIND_PMESSAGE;
    reply.pattern = text("news.*");
    reply.channel = text("news.today");
    reply.elements = elements;
    reply.element_count = element_count;
    size_t length = 0;
    gr_codec_status_t status = gr_encode_reply(&reply, out, capacity, &length);
    CHECK(status == GR_CODEC_OK, "encode reply %u: %s", template_id, gr_codec_status_text(status));
    CHECK(length == gr_reply_encoded_size(&reply), "reply %u encoded size", template_id);
    gr_reply_message_t got = {0};
    got.elements = element_storage;
    got.element_capacity = STORAGE;
    /* a PushMessage or an InvalidateMessage answers no request: it carries no request id */
    uint64_t request_id = template_id == GR_T_PUSH_MESSAGE || template_id == GR_T_INVALIDATE_MESSAGE ? 0 : 9;
    CHECK(gr_decode_reply(out, length, &got) == GR_CODEC_OK && got.request_id == request_id &&
          got.template_id == template_id, "reply %u round-trips", template_id);
    if (template_id == GR_T_PUSH_MESSAGE)
        CHECK(got.push_kind == GR_PUSH_KIND_PMESSAGE && same_bytes(got.pattern, text("news.*")) &&
              same_bytes(got.channel, text("news.today")) && same_bytes(got.text, text("key")),
              "push message fields round-trip");
    if (template_id == GR_T_INVALIDATE_MESSAGE)
        CHECK(got.is_nil == 1 && same_bytes(got.text, text("key")), "invalidate message fields round-trip");
    if (template_id == GR_T_ARRAY_REPLY) {
        CHECK(got.element_count == element_count, "array reply element count");
        for (uint32_t i = 0; i < got.element_count && i < element_count; i++)
            CHECK(got.elements[i].kind == elements[i].kind && got.elements[i].integer == elements[i].integer &&
                  same_bytes(got.elements[i].bytes, elements[i].bytes), "array reply element %u", i);
    }
    return length;
}

static gr_codec_status_t decode_attach_exact(const uint8_t *bytes, size_t length) {
    uint8_t *copy = malloc(length ? length : 1);
    memcpy(copy, bytes, length);
    gr_attach_t attach;
    gr_codec_status_t status = gr_decode_attach(copy, length, &attach);
    free(copy);
    return status;
}

static size_t encode_sample_attach(uint16_t template_id, uint8_t *out, size_t capacity) {
    gr_attach_t attach = {0};
    attach.template_id = template_id;
    attach.protocol_version = 1;
    attach.error_code = 0;
    attach.ring_capacity = 1u << 21;
    attach.pid = 1234;
    attach.session_id = 99;
    attach.client_name = text("worker");
    attach.request_ring_name = text("/goblin-req");
    attach.reply_ring_name = text("/goblin-rep");
    attach.error_message = text("");
    size_t length = 0;
    CHECK(gr_encode_attach(&attach, out, capacity, &length) == GR_CODEC_OK, "encode attach %u", template_id);
    gr_attach_t got;
    CHECK(gr_decode_attach(out, length, &got) == GR_CODEC_OK && got.template_id == template_id,
          "attach %u round-trips", template_id);
    return length;
}

int main(int argc, char **argv) {
    long fuzz_iterations = argc > 1 ? atol(argv[1]) : 200000;
    uint8_t message[4096];

    CHECK(gr_codec_self_check() == 0, "the generated offsets differ from sbe-tool's for template %d",
          gr_codec_self_check());
    for (size_t t = 0; t < GR_REQUEST_TEMPLATE_COUNT; t++) {
        const uint16_t *request_templates = gr_request_templates;
        size_t length = encode_sample_request(request_templates[t], message, sizeof message);
        CHECK(decode_exact(message, length, 0) == GR_CODEC_OK, "template %u decodes", request_templates[t]);
        check_round_trip(request_templates[t], message, length);
        for (size_t cut = 0; cut < length; cut++) {
            gr_codec_status_t status = decode_exact(message, cut, 0);
            CHECK(status == GR_CODEC_TRUNCATED || status == GR_CODEC_VAR_DATA_OVERRUN,
                  "template %u cut at %zu gave %s", request_templates[t], cut, gr_codec_status_text(status));
        }
        /* a too-small output buffer is refused at every size, never overrun */
        for (size_t capacity = 0; capacity < length; capacity++) {
            uint8_t *small = malloc(capacity ? capacity : 1);
            gr_bytes_t items[3];
            gr_request_t request;
            sample_request(request_templates[t], &request, items);
            size_t written = 0;
            CHECK(gr_encode_request(&request, small, capacity, &written) == GR_CODEC_NO_SPACE,
                  "template %u encode into %zu bytes", request_templates[t], capacity);
            free(small);
        }
    }

    for (size_t t = 0; t < GR_REPLY_TEMPLATE_COUNT; t++) {
        size_t length = encode_sample_reply(gr_reply_templates[t], message, sizeof message);
        CHECK(decode_exact(message, length, 1) == GR_CODEC_OK, "reply %u decodes", gr_reply_templates[t]);
        for (size_t cut = 0; cut < length; cut++) {
            gr_codec_status_t status = decode_exact(message, cut, 1);
            CHECK(status == GR_CODEC_TRUNCATED || status == GR_CODEC_VAR_DATA_OVERRUN,
                  "reply %u cut %zu gave %s", gr_reply_templates[t], cut, gr_codec_status_text(status));
        }
    }
    for (size_t t = 0; t < GR_ATTACH_TEMPLATE_COUNT; t++) {
        size_t length = encode_sample_attach(gr_attach_templates[t], message, sizeof message);
        for (size_t cut = 0; cut < length; cut++) {
            gr_codec_status_t status = decode_attach_exact(message, cut);
            CHECK(status == GR_CODEC_TRUNCATED || status == GR_CODEC_VAR_DATA_OVERRUN,
                  "attach %u cut %zu gave %s", gr_attach_templates[t], cut, gr_codec_status_text(status));
        }
    }

    size_t length = encode_sample_request(GR_T_LLEN, message, sizeof message);
    uint8_t mutated[4096];
    memcpy(mutated, message, length);
    mutated[2] = 0x2b; mutated[3] = 0x01;   /* template 299 */
    CHECK(decode_exact(mutated, length, 0) == GR_CODEC_UNKNOWN_TEMPLATE, "unknown template");
    memcpy(mutated, message, length);
    mutated[4] ^= 1;                        /* schema id */
    CHECK(decode_exact(mutated, length, 0) == GR_CODEC_BAD_SCHEMA, "wrong schema id");
    memcpy(mutated, message, length);
    mutated[0] -= 1;                        /* block length one short */
    CHECK(decode_exact(mutated, length, 0) == GR_CODEC_SHORT_BLOCK, "short block");
    memcpy(mutated, message, length);
    uint32_t huge = 0xffffffffu;
    memcpy(mutated + length - 6 - 4, &huge, 4);  /* key "mylist" length word */
    CHECK(decode_exact(mutated, length, 0) == GR_CODEC_VAR_DATA_OVERRUN, "var-data past the end");

    /* mutation fuzz: random bytes flipped in valid messages of every template */
    for (long i = 0; i < fuzz_iterations; i++) {
        int family = (int)below(3);   /* 0 request, 1 reply, 2 attach */
        int before = passed;
        size_t n = family == 0 ? encode_sample_request(gr_request_templates[below(GR_REQUEST_TEMPLATE_COUNT)], message, sizeof message)
                 : family == 1 ? encode_sample_reply(gr_reply_templates[below(GR_REPLY_TEMPLATE_COUNT)], message, sizeof message)
                 : encode_sample_attach(gr_attach_templates[below(GR_ATTACH_TEMPLATE_COUNT)], message, sizeof message);
        passed = before; /* the sample's own checks; fuzz counts as one below */
        int flips = 1 + (int)below(4);
        for (int f = 0; f < flips; f++) message[below(n)] = (uint8_t)rnd();
        size_t cut = below(4) == 0 ? below(n + 1) : n;
        if (family == 2) (void)decode_attach_exact(message, cut);
        else (void)decode_exact(message, cut, family);
    }
    passed++;

    return checks_report();
}
