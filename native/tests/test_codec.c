/* test_codec.c — the codec's bad-input guarantees, in C so they run under ASan/UBSan.
 *
 * Each case copies the bytes into a malloc'd buffer of exactly the message's length, so
 * a read one byte past the end aborts under AddressSanitizer. Cases: every truncation of
 * every request and reply template, an unknown template, a wrong schema id, a short block
 * length, var-data lengths past the end, and a fixed-seed mutation fuzz loop.
 * Usage: test_codec [fuzz-iterations]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ring/codec.h"
#include "tests/test_helpers.h"

static gr_bytes_t item_storage[GR_GROUP_MAX_ITEMS];
static gr_element_t element_storage[GR_GROUP_MAX_ITEMS];

static gr_bytes_t text(const char *s) { gr_bytes_t b = {(const uint8_t *)s, (uint32_t)strlen(s)}; return b; }

static gr_codec_status_t decode_exact(const uint8_t *bytes, size_t length, int as_reply) {
    uint8_t *copy = malloc(length ? length : 1);
    memcpy(copy, bytes, length);
    gr_codec_status_t status;
    if (as_reply) {
        gr_reply_message_t reply = {0};
        reply.elements = element_storage;
        reply.element_capacity = GR_GROUP_MAX_ITEMS;
        status = gr_decode_reply(copy, length, &reply);
    } else {
        gr_request_t request = {0};
        request.items = item_storage;
        request.item_capacity = GR_GROUP_MAX_ITEMS;
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

static const uint16_t request_templates[] = {
    GR_T_PING, GR_T_COMMAND, GR_T_DEL, GR_T_EXISTS, GR_T_TYPE, GR_T_DBSIZE, GR_T_FLUSHDB,
    GR_T_KEYS, GR_T_SCAN, GR_T_RENAME, GR_T_MEMORY_USAGE, GR_T_PUSH, GR_T_POP, GR_T_LLEN,
    GR_T_LINDEX, GR_T_LRANGE, GR_T_LSET, GR_T_LINSERT, GR_T_LREM, GR_T_LTRIM, GR_T_LPOS,
    GR_T_LMOVE, GR_T_LMPOP, GR_T_BPOP, GR_T_BLMOVE, GR_T_BLMPOP,
};

static size_t encode_sample_request(uint16_t template_id, uint8_t *out, size_t capacity) {
    gr_bytes_t items[3] = {text("a"), text(""), text("third value")};
    gr_request_t request = {0};
    request.template_id = template_id;
    request.request_id = 77;
    request.key = text("mylist");
    request.arg1 = text("pivot");
    request.arg2 = text("value");
    request.items = items;
    request.item_count = 3;
    request.engine = template_id >= 200 && template_id < 300 ? 2 : 0;   /* ListEngine PMA */
    size_t length = 0;
    gr_codec_status_t status = gr_encode_request(&request, out, capacity, &length);
    CHECK(status == GR_CODEC_OK, "encode template %u: %s", template_id, gr_codec_status_text(status));
    return length;
}

static size_t encode_sample_array_reply(uint8_t *out, size_t capacity) {
    gr_element_t elements[2] = {{0, 0, {(const uint8_t *)"x", 1}}, {2, 5, {NULL, 0}}};
    gr_reply_message_t reply = {0};
    reply.template_id = GR_T_ARRAY_REPLY;
    reply.shape = 1;
    reply.total_count = 2;
    reply.text = text("key");
    reply.elements = elements;
    reply.element_count = 2;
    size_t length = 0;
    CHECK(gr_encode_reply(&reply, out, capacity, &length) == GR_CODEC_OK, "encode array reply");
    return length;
}

int main(int argc, char **argv) {
    long fuzz_iterations = argc > 1 ? atol(argv[1]) : 200000;
    uint8_t message[4096];

    for (size_t t = 0; t < sizeof request_templates / sizeof request_templates[0]; t++) {
        size_t length = encode_sample_request(request_templates[t], message, sizeof message);
        CHECK(decode_exact(message, length, 0) == GR_CODEC_OK, "template %u decodes", request_templates[t]);
        for (size_t cut = 0; cut < length; cut++) {
            gr_codec_status_t status = decode_exact(message, cut, 0);
            CHECK(status == GR_CODEC_TRUNCATED || status == GR_CODEC_VAR_DATA_OVERRUN,
                  "template %u cut at %zu gave %s", request_templates[t], cut, gr_codec_status_text(status));
        }
        /* a too-small output buffer is refused at every size, never overrun */
        for (size_t capacity = 0; capacity < length; capacity++) {
            uint8_t *small = malloc(capacity ? capacity : 1);
            gr_bytes_t items[3] = {text("a"), text(""), text("third value")};
            gr_request_t request = {0};
            request.template_id = request_templates[t];
            request.key = text("mylist"); request.arg1 = text("pivot"); request.arg2 = text("value");
            request.items = items; request.item_count = 3;
            size_t written = 0;
            CHECK(gr_encode_request(&request, small, capacity, &written) == GR_CODEC_NO_SPACE,
                  "template %u encode into %zu bytes", request_templates[t], capacity);
            free(small);
        }
    }

    size_t array_length = encode_sample_array_reply(message, sizeof message);
    CHECK(decode_exact(message, array_length, 1) == GR_CODEC_OK, "array reply decodes");
    for (size_t cut = 0; cut < array_length; cut++) {
        gr_codec_status_t status = decode_exact(message, cut, 1);
        CHECK(status == GR_CODEC_TRUNCATED || status == GR_CODEC_VAR_DATA_OVERRUN, "array reply cut %zu", cut);
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
        uint16_t template_id = request_templates[rnd() % (sizeof request_templates / sizeof request_templates[0])];
        size_t n = encode_sample_request(template_id, message, sizeof message);
        passed--; /* encode_sample_request counted a check; fuzz counts as one below */
        int flips = 1 + (int)below(4);
        for (int f = 0; f < flips; f++) message[below(n)] = (uint8_t)rnd();
        size_t cut = below(4) == 0 ? below(n + 1) : n;
        (void)decode_exact(message, cut, (int)below(2));
    }
    passed++;

    return checks_report();
}
