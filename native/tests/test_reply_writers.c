/* test_reply_writers.c — the batched reply operation (reply.h's bulks, LRANGE's and LMPOP's
 * values a run at a time) against the one-at-a-time bulk, in both reply writers: the ring's
 * (ring/sbe_reply.c) and RESP's (resp/resp_conn.c, RESP2 and RESP3). Random reply scripts
 * (arrays, LMPOP's [key, [values]], an array inside a map, runs longer than their array, runs at
 * the root, empty arrays and runs, values of 0..40 bytes and now and then past the writer's
 * first 4 KiB) are replayed into a writer as it is and into the same writer with its bulks
 * operation taken away (so reply.h's fallback calls bulk once a value); the staged or output
 * bytes must be equal. The ring writer's ArrayReply is also read back element by element
 * (ring/codec_stream_generated.h) for one LRANGE-shaped reply.
 * Usage: test_reply_writers [scripts] [seed]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resp/resp_conn.h"
#include "exec/db.h"
#include "exec/reply.h"
#include "ring/codec_stream_generated.h"
#include "ring/sbe_reply.h"
#include "tests/test_helpers.h"

#define MAX_VALUES 80

static uint8_t value_bytes[MAX_VALUES][5000];
static gr_bytes_t values[MAX_VALUES];

static void make_values(size_t count) {
    for (size_t i = 0; i < count; i++) {
        size_t length = below(20) ? below(41) : 4096 + below(900);
        for (size_t j = 0; j < length; j++) value_bytes[i][j] = (uint8_t)rnd();
        values[i].data = value_bytes[i];
        values[i].length = (uint32_t)length;
    }
}

/* `count` values from values[] written in random runs (some empty) through gr_reply_bulks. */
static void write_runs(gr_reply_t *reply, size_t count, uint64_t seed) {
    uint64_t state = seed;
    size_t at = 0;
    while (at < count) {
        size_t run = test_random(&state) % 4 == 0 ? 0 : 1 + test_random(&state) % (count - at);
        gr_reply_bulks(reply, values + at, run);
        at += run;
    }
}

typedef enum shape { ARRAY, KEYED, IN_MAP, LONGER_RUN, AT_ROOT, SHAPES } shape_t;
static const char *shape_names[SHAPES] = {"array", "keyed array", "array in a map", "run past its array", "runs at the root"};

/* One reply of `shape` with n values (the runs decided by seed, so two writers get the same). */
static void write_script(gr_reply_t *reply, shape_t shape, size_t n, uint64_t seed) {
    switch (shape) {
    case ARRAY:
        gr_reply_array_begin(reply, n);
        write_runs(reply, n, seed);
        break;
    case KEYED:
        gr_reply_keyed_array_begin(reply, (const uint8_t *)"bench:queue", 11, n);
        write_runs(reply, n, seed);
        break;
    case IN_MAP:
        gr_reply_map_begin(reply, 2);
        gr_reply_bulk(reply, (const uint8_t *)"values", 6);
        gr_reply_array_begin(reply, n);
        write_runs(reply, n, seed);
        gr_reply_bulk(reply, (const uint8_t *)"after", 5);
        gr_reply_integer(reply, 7);
        break;
    case LONGER_RUN:   /* the array takes n / 2; the rest are scalar replies after it */
        gr_reply_array_begin(reply, n / 2);
        gr_reply_bulks(reply, values, n);
        break;
    case AT_ROOT:
        write_runs(reply, n, seed);
        break;
    default:
        break;
    }
}

/* gr_reply_ops_t as the writer has it, without bulks: reply.h's fallback. */
static gr_reply_ops_t without_bulks(const gr_reply_ops_t *ops) {
    gr_reply_ops_t copy = *ops;
    copy.bulks = NULL;
    return copy;
}

static void test_the_ring_writer_stages_the_same_bytes_either_way(size_t scripts) {
    int ok = 1;
    size_t compared = 0;
    for (size_t s = 0; s < scripts && ok; s++) {
        gr_sbe_reply_t batched, reference;
        ok &= gr_sbe_reply_init(&batched) == 0 && gr_sbe_reply_init(&reference) == 0;
        gr_reply_ops_t one_at_a_time = without_bulks(reference.base.ops);
        reference.base.ops = &one_at_a_time;
        ok &= batched.base.ops->bulks != NULL;
        shape_t shape = (shape_t)below(SHAPES);
        size_t n = below(4) ? below(40) : below(MAX_VALUES + 1);
        uint64_t seed = rnd();
        make_values(n);
        batched.request_id = reference.request_id = 1000 + s;
        write_script(&batched.base, shape, n, seed);
        write_script(&reference.base, shape, n, seed);
        int same_bytes = batched.stage_length == reference.stage_length &&
                         memcmp(batched.stage, reference.stage, batched.stage_length) == 0;
        ok &= same_bytes && batched.depth == 0 && reference.depth == 0 && !batched.base.failed && !reference.base.failed;
        if (!ok) fprintf(stderr, "ring writer: script %zu (%s, %zu values) differs\n", s, shape_names[shape], n);
        compared++;
        gr_sbe_reply_free(&batched);
        gr_sbe_reply_free(&reference);
    }
    CHECK(ok, "ring writer: bulks stages what one bulk a value stages (%zu scripts)", compared);
}

/* LRANGE's shape written with bulks reads back, element by element, as its values. */
static void test_a_run_written_by_the_ring_writer_reads_back_as_its_values(void) {
    gr_sbe_reply_t writer;
    int ok = gr_sbe_reply_init(&writer) == 0;
    make_values(MAX_VALUES);
    writer.request_id = 42;
    gr_reply_array_begin(&writer.base, MAX_VALUES);
    gr_reply_bulks(&writer.base, values, 33);
    gr_reply_bulks(&writer.base, values + 33, MAX_VALUES - 33);
    uint32_t template_id = 0, length = 0;
    const uint8_t *message = NULL;
    size_t next = 0;
    ok &= gr_sbe_reply_frame_at(&writer, 0, &template_id, &message, &length, &next) == 1 &&
          template_id == GR_T_ARRAY_REPLY && next == writer.stage_length;
    gr_reply_message_t head;
    gr_array_reply_reader_t reader;
    ok &= ok && gr_stream_array_reply_open(message, length, &head, &reader) == GR_CODEC_OK &&
          head.request_id == 42 && reader.count == MAX_VALUES + 1;
    gr_element_t element;
    ok &= ok && gr_stream_array_reply_next(&reader, &element) == GR_CODEC_OK && element.kind == GR_ELEMENT_KIND_ARRAY &&
          element.integer == MAX_VALUES;
    for (size_t i = 0; ok && i < MAX_VALUES; i++)
        ok &= gr_stream_array_reply_next(&reader, &element) == GR_CODEC_OK && element.kind == GR_ELEMENT_KIND_BULK &&
              element.integer == 0 && same(element.bytes.data, element.bytes.length, values[i].data, values[i].length);
    ok &= reader.position == length;
    CHECK(ok, "ring writer: an array written in two runs reads back as its %d values", MAX_VALUES);
    gr_sbe_reply_free(&writer);
}

static void test_the_resp_writer_writes_the_same_bytes_either_way(size_t scripts) {
    gr_server_t *db = gr_db_new(7);
    gr_resp_conn_t *batched = gr_resp_conn_new(db, 1), *reference = gr_resp_conn_new(db, 2);
    gr_reply_t *batched_reply = gr_resp_conn_state(batched)->reply, *reference_reply = gr_resp_conn_state(reference)->reply;
    gr_reply_ops_t one_at_a_time = without_bulks(reference_reply->ops);
    reference_reply->ops = &one_at_a_time;
    int ok = batched_reply->ops->bulks != NULL;
    for (int protocol = 2; protocol <= 3; protocol++) {
        gr_resp_conn_state(batched)->protocol = protocol;
        gr_resp_conn_state(reference)->protocol = protocol;
        for (size_t s = 0; s < scripts && ok; s++) {
            shape_t shape = (shape_t)below(SHAPES);
            size_t n = below(4) ? below(40) : below(MAX_VALUES + 1);
            uint64_t seed = rnd();
            make_values(n);
            write_script(batched_reply, shape, n, seed);
            write_script(reference_reply, shape, n, seed);
            size_t a_length = 0, b_length = 0;
            const uint8_t *a = gr_resp_conn_output(batched, &a_length), *b = gr_resp_conn_output(reference, &b_length);
            ok &= a_length == b_length && memcmp(a, b, a_length) == 0 && !batched_reply->failed;
            if (!ok) fprintf(stderr, "RESP%d writer: script %zu (%s, %zu values) differs\n", protocol, s, shape_names[shape], n);
            gr_resp_conn_consume_output(batched, a_length);
            gr_resp_conn_consume_output(reference, b_length);
        }
        CHECK(ok, "RESP%d writer: bulks writes what one bulk a value writes (%zu scripts)", protocol, scripts);
    }
    reference_reply->ops = batched_reply->ops;
    gr_resp_conn_free(batched);
    gr_resp_conn_free(reference);
    gr_db_free(db);
}

int main(int argc, char **argv) {
    size_t scripts = argc > 1 ? strtoull(argv[1], NULL, 10) : 3000;
    if (argc > 2) rng_state = strtoull(argv[2], NULL, 10);
    test_the_ring_writer_stages_the_same_bytes_either_way(scripts);
    test_a_run_written_by_the_ring_writer_reads_back_as_its_values();
    test_the_resp_writer_writes_the_same_bytes_either_way(scripts);
    return checks_report();
}
