/* test_fragment.c — messages larger than one ring record (ring/fragment.c), under ASan/UBSan.
 *
 * One process plays both sides of one small ring: messages of random sizes, from empty to
 * many records' worth, are written with gr_fragment_write (resuming whenever the ring fills,
 * as a real writer does) and read back with gr_reassembly_take, byte for byte. Then the
 * reader's refusals: a fragment that continues no message, one from another message, a piece
 * past the announced total, an END short of it, a header too short, and a message over the
 * limit (skipped whole, and the next message still arrives).
 * Usage: test_fragment [messages]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ring/fragment.h"
#include "tests/test_helpers.h"

#define CAPACITY 4096u   /* the smallest ring: 512-byte records */

typedef struct reader {
    gr_reassembly_t reassembly;
    int complete, too_large, broken;
    uint16_t template_id;
    uint8_t *message;
    size_t length;
} reader_t;

static int take(void *context, int32_t type, const uint8_t *payload, size_t length) {
    reader_t *r = context;
    if (type != GR_FRAGMENT_TYPE) {      /* a plain record: a whole message */
        free(r->message);
        r->message = malloc(length ? length : 1);
        memcpy(r->message, payload, length);
        r->length = length;
        r->template_id = (uint16_t)type;
        r->complete++;
        return 0;
    }
    switch (gr_reassembly_take(&r->reassembly, payload, length)) {
    case GR_REASSEMBLY_COMPLETE:
        free(r->message);
        r->message = malloc(r->reassembly.length ? r->reassembly.length : 1);
        memcpy(r->message, r->reassembly.buffer, r->reassembly.length);
        r->length = r->reassembly.length;
        r->template_id = r->reassembly.template_id;
        r->complete++;
        break;
    case GR_REASSEMBLY_TOO_LARGE: r->too_large++; break;
    case GR_REASSEMBLY_BROKEN: r->broken++; break;
    default: break;
    }
    return 0;
}

static void write_raw_fragment(gr_ring_t *ring, uint32_t template_id, uint32_t flags, uint64_t total,
                               size_t piece) {
    uint8_t payload[GR_FRAGMENT_HEADER_LENGTH + 64] = {0};
    memcpy(payload, &template_id, 4);
    memcpy(payload + 4, &flags, 4);
    memcpy(payload + 8, &total, 8);
    CHECK(gr_ring_write(ring, GR_FRAGMENT_TYPE, payload, GR_FRAGMENT_HEADER_LENGTH + piece) == GR_RING_OK,
          "raw fragment written");
}

int main(int argc, char **argv) {
    long messages = argc > 1 ? atol(argv[1]) : 2000;
    size_t size = gr_ring_segment_size(CAPACITY);
    void *memory = aligned_alloc(GR_RING_LINE, size);
    char error[128];
    gr_ring_t ring;
    if (!memory || gr_ring_init(&ring, memory, size, CAPACITY, 4711, 1, error, sizeof error) != 0) {
        fprintf(stderr, "ring: %s\n", error);
        return 2;
    }
    reader_t reader = {0};

    for (long i = 0; i < messages; i++) {
        size_t length = below(8) == 0 ? below(20 * CAPACITY) : below(2 * ring.max_message_length);
        uint8_t *message = malloc(length ? length : 1);
        for (size_t b = 0; b < length; b++) message[b] = (uint8_t)(b * 31 + (size_t)i);
        uint16_t template_id = (uint16_t)(1 + below(400));
        size_t sent = 0;
        int before = reader.complete, rounds = 0;
        for (;;) {
            gr_ring_status_t status = gr_fragment_write(&ring, template_id, message, length, &sent);
            if (status == GR_RING_OK) break;
            if (status != GR_RING_FULL || ++rounds > 100000) { CHECK(0, "write %ld: status %d", i, status); break; }
            gr_ring_read(&ring, take, &reader, 0);   /* the reader frees room; the writer resumes */
        }
        gr_ring_read(&ring, take, &reader, 0);
        CHECK(reader.complete == before + 1 && reader.template_id == template_id && reader.length == length &&
              (length == 0 || memcmp(reader.message, message, length) == 0),
              "message %ld of %zu bytes arrives whole", i, length);
        free(message);
    }
    CHECK(reader.broken == 0 && reader.too_large == 0, "no refusals on good input");

    /* refusals: each leaves the reader ready for the next message */
    write_raw_fragment(&ring, 20, 0, 100, 10);                         /* continues nothing */
    write_raw_fragment(&ring, 20, GR_FRAGMENT_BEGIN, 100, 10);
    write_raw_fragment(&ring, 21, GR_FRAGMENT_END, 100, 10);           /* another template */
    write_raw_fragment(&ring, 20, GR_FRAGMENT_BEGIN, 100, 10);
    write_raw_fragment(&ring, 20, 0, 99, 10);                          /* another total */
    write_raw_fragment(&ring, 20, GR_FRAGMENT_BEGIN, 30, 20);
    write_raw_fragment(&ring, 20, GR_FRAGMENT_END, 30, 20);            /* past the total */
    write_raw_fragment(&ring, 20, GR_FRAGMENT_BEGIN, 40, 20);
    write_raw_fragment(&ring, 20, GR_FRAGMENT_END, 40, 10);            /* short of it */
    write_raw_fragment(&ring, 20, GR_FRAGMENT_BEGIN | GR_FRAGMENT_END, 10, 10);   /* one fragment */
    write_raw_fragment(&ring, 70000, GR_FRAGMENT_BEGIN, 100, 10);      /* not a template id */
    uint8_t stub[8] = {0};
    gr_ring_write(&ring, GR_FRAGMENT_TYPE, stub, sizeof stub);         /* header too short */
    gr_ring_read(&ring, take, &reader, 0);
    CHECK(reader.broken == 8, "eight broken fragments refused (%d)", reader.broken);

    reader.reassembly.limit = 3000;
    uint8_t big[6000];
    memset(big, 7, sizeof big);
    size_t sent = 0;
    while (gr_fragment_write(&ring, 30, big, sizeof big, &sent) == GR_RING_FULL) gr_ring_read(&ring, take, &reader, 0);
    gr_ring_read(&ring, take, &reader, 0);
    CHECK(reader.too_large == 1, "a message over the limit is skipped whole");
    int before = reader.complete;
    sent = 0;
    while (gr_fragment_write(&ring, 31, big, 2000, &sent) == GR_RING_FULL) gr_ring_read(&ring, take, &reader, 0);
    gr_ring_read(&ring, take, &reader, 0);
    CHECK(reader.complete == before + 1 && reader.length == 2000 && reader.template_id == 31,
          "the next message under the limit arrives");

    gr_reassembly_free(&reader.reassembly);
    free(reader.message);
    free(memory);
    return checks_report();
}
