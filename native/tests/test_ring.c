/* test_ring.c — the ring's guarantees (native/ring/ring.c), in C so they run under ASan/UBSan.
 *
 * Single-process cases work on an exactly-sized aligned_alloc'd segment, so a byte read or
 * written past the end aborts under AddressSanitizer: setup and attach refusals, reads and
 * writes, the exact fit at the end, the padding record at the wrap (checked byte by byte),
 * FULL, TOO_LARGE, handler verdicts, zero-length payloads, claim/abort, the sleeper protocol
 * in one process, and records a broken peer could leave.
 * The two-process case forks over MAP_SHARED|MAP_ANONYMOUS rings and streams N messages
 * (random sizes 0..65536, sequence number + checksum in each) in both directions at once,
 * in bursts with pauses, so the consumers sleep on the futex thousands of times; every
 * message must arrive once, in order, intact. After each burst the producer waits for the
 * ring to drain: a lost wakeup shows as a drain slower than 1 s or a consumer timeout.
 * Usage: test_ring [messages-per-direction]   (default 200000)
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ring/ring.h"
#include "tests/test_helpers.h"

#define SCHEMA_ID 4711
#define SCHEMA_VERSION 1
#define SMALL 4096u   /* the minimum capacity: max payload 512, max record 520 */

/* ---- helpers ---- */

static void *new_segment(uint64_t capacity)
{
    const size_t size = gr_ring_segment_size(capacity);
    void *memory = aligned_alloc(GR_RING_LINE, size);   /* size is a multiple of 128 */
    if (memory == NULL) { perror("aligned_alloc"); exit(2); }
    return memory;
}

static void *new_ring(gr_ring_t *ring, uint64_t capacity)
{
    void *memory = new_segment(capacity);
    char error[256];
    if (gr_ring_init(ring, memory, gr_ring_segment_size(capacity), capacity, SCHEMA_ID,
                     SCHEMA_VERSION, error, sizeof error) != 0) {
        fprintf(stderr, "init: %s\n", error);
        exit(2);
    }
    return memory;
}

static int32_t word_at(const gr_ring_t *ring, uint64_t index)
{
    int32_t value;
    memcpy(&value, ring->data + index, sizeof value);
    return value;
}

static uint64_t tail_of(const gr_ring_t *ring) { return ring->header->tail_position; }
static uint64_t head_of(const gr_ring_t *ring) { return ring->header->head_position; }

static uint8_t pattern_byte(uint32_t seed, size_t i) { return (uint8_t)(seed * 131u + i * 7u + (i >> 8)); }

static void fill_pattern(uint8_t *out, size_t length, uint32_t seed)
{
    for (size_t i = 0; i < length; i++) out[i] = pattern_byte(seed, i);
}

typedef struct collector {
    size_t count;
    int32_t types[1024];
    size_t lengths[1024];
    int intact[1024];            /* payload matched pattern(type) */
    const uint8_t *pointers[1024];
    int stop_after;              /* return 1 on the record with this count (1-based); 0 = never */
    int reject_at;               /* return -1 on the record with this count (1-based); 0 = never */
    size_t calls;
} collector_t;

static int collect(void *context, int32_t type, const uint8_t *payload, size_t length)
{
    collector_t *c = context;
    c->calls++;
    if (c->reject_at != 0 && c->count + 1 == (size_t)c->reject_at) return -1;
    if (c->count < 1024) {
        c->types[c->count] = type;
        c->lengths[c->count] = length;
        c->pointers[c->count] = payload;
        int intact = payload != NULL;
        for (size_t i = 0; i < length && intact; i++) intact = payload[i] == pattern_byte((uint32_t)type, i);
        c->intact[c->count] = intact;
    }
    c->count++;
    return (c->stop_after != 0 && c->count == (size_t)c->stop_after) ? 1 : 0;
}

static int count_only(void *context, int32_t type, const uint8_t *payload, size_t length)
{
    (void)type; (void)payload; (void)length;
    (*(size_t *)context)++;
    return 0;
}

static gr_ring_status_t write_pattern(gr_ring_t *ring, int32_t type, size_t length)
{
    static uint8_t buffer[262144];   /* the largest payload of a 2 MiB ring */
    fill_pattern(buffer, length, (uint32_t)type);
    return gr_ring_write(ring, type, buffer, length);
}

/* Write records (types 1000+) totalling exactly `bytes` (a multiple of 8), without reading. */
static void fill_records(gr_ring_t *ring, uint64_t bytes)
{
    const uint64_t largest = ring->max_message_length + GR_RING_RECORD_HEADER_LENGTH;
    while (bytes > 0) {
        const uint64_t record = bytes < largest ? bytes : largest;
        if (write_pattern(ring, 1000, (size_t)(record - 8)) != GR_RING_OK) {
            fprintf(stderr, "fill_records: unexpected FULL\n");
            exit(2);
        }
        bytes -= record;
    }
}

/* Move an empty ring's head and tail forward by `bytes` (multiple of 8, no wrap). */
static void advance_empty(gr_ring_t *ring, uint64_t bytes)
{
    const uint64_t largest = ring->max_message_length + GR_RING_RECORD_HEADER_LENGTH;
    size_t sink = 0;
    while (bytes > 0) {
        uint64_t chunk = bytes < largest ? bytes : largest;
        fill_records(ring, chunk);
        gr_ring_read(ring, count_only, &sink, 0);
        bytes -= chunk;
    }
}

/* ---- lifecycle ---- */

static void test_segment_size_is_the_header_plus_capacity_and_zero_for_a_bad_capacity(void)
{
    CHECK(gr_ring_segment_size(4096) == 1024 + 4096, "4096");
    CHECK(gr_ring_segment_size(GR_RING_DEFAULT_CAPACITY) == 1024 + 2097152, "default");
    CHECK(gr_ring_segment_size(GR_RING_MAX_CAPACITY) == 1024 + (size_t)GR_RING_MAX_CAPACITY, "max");
    CHECK(gr_ring_segment_size(0) == 0, "0");
    CHECK(gr_ring_segment_size(2048) == 0, "below the minimum");
    CHECK(gr_ring_segment_size(5000) == 0, "not a power of two");
    CHECK(gr_ring_segment_size((uint64_t)GR_RING_MAX_CAPACITY * 2) == 0, "above the maximum");
}

static void test_init_then_attach_round_trips_the_descriptor(void)
{
    gr_ring_t producer, consumer;
    void *memory = new_segment(GR_RING_DEFAULT_CAPACITY);
    memset(memory, 0xAB, gr_ring_segment_size(GR_RING_DEFAULT_CAPACITY));   /* init must zero */
    char error[256] = "";
    int rc = gr_ring_init(&producer, memory, gr_ring_segment_size(GR_RING_DEFAULT_CAPACITY),
                          GR_RING_DEFAULT_CAPACITY, SCHEMA_ID, SCHEMA_VERSION, error, sizeof error);
    CHECK(rc == 0, "init: %s", error);
    const gr_ring_header_t *h = memory;
    CHECK(h->magic == 0x474f424c494e5231ULL && h->layout_version == 2, "magic/layout");
    CHECK(h->sbe_schema_id == SCHEMA_ID && h->sbe_schema_version == SCHEMA_VERSION, "schema");
    CHECK(h->capacity == 2097152 && h->max_message_length == 262144, "capacity");
    CHECK(h->tail_position == 0 && h->head_position == 0 && h->head_cache_position == 0
          && h->consumer_sleeping == 0 && h->futex_seq == 0 && h->invalidation_epoch == 0, "positions zeroed");
    CHECK(h->reserved[0] == 0 && h->reserved[255] == 0 && h->pad_descriptor[0] == 0, "padding zeroed");
    CHECK(producer.data[0] == 0 && producer.data[2097151] == 0, "data zeroed");
    rc = gr_ring_attach(&consumer, memory, gr_ring_segment_size(GR_RING_DEFAULT_CAPACITY),
                        SCHEMA_ID, SCHEMA_VERSION, error, sizeof error);
    CHECK(rc == 0, "attach: %s", error);
    CHECK(consumer.capacity == 2097152 && consumer.mask == 2097151
          && consumer.max_message_length == 262144, "view");
    CHECK(consumer.data == (uint8_t *)memory + 1024 && consumer.header == memory
          && consumer.base == memory, "pointers");
    CHECK(write_pattern(&producer, 42, 1000) == GR_RING_OK, "write");
    collector_t c = {0};
    CHECK(gr_ring_read(&consumer, collect, &c, 0) == 1, "read through the attached view");
    CHECK(c.types[0] == 42 && c.lengths[0] == 1000 && c.intact[0], "content");
    free(memory);
}

static int attach_fails_with(void *memory, size_t size, uint16_t id, uint16_t version,
                             const char *expected_a, const char *expected_b)
{
    gr_ring_t ring;
    char error[256] = "";
    const int rc = gr_ring_attach(&ring, memory, size, id, version, error, sizeof error);
    const int ok = rc == -1 && strstr(error, expected_a) != NULL
                   && (expected_b == NULL || strstr(error, expected_b) != NULL);
    if (!ok) fprintf(stderr, "  attach said rc=%d '%s'\n", rc, error);
    return ok;
}

static void test_attach_refuses_a_wrong_magic(void)
{
    gr_ring_t ring;
    void *memory = new_ring(&ring, SMALL);
    const size_t size = gr_ring_segment_size(SMALL);
    ring.header->magic = 0x1234;
    CHECK(attach_fails_with(memory, size, SCHEMA_ID, SCHEMA_VERSION,
                            "magic is 0x0000000000001234", "expected 0x474f424c494e5231"), "magic");
    memset(memory, 0, size);   /* never initialised */
    CHECK(attach_fails_with(memory, size, SCHEMA_ID, SCHEMA_VERSION, "magic is 0x0000000000000000",
                            "not initialised"), "zero segment");
    free(memory);
}

static void test_attach_refuses_a_wrong_layout_version(void)
{
    gr_ring_t ring;
    void *memory = new_ring(&ring, SMALL);
    ring.header->layout_version = 3;
    CHECK(attach_fails_with(memory, gr_ring_segment_size(SMALL), SCHEMA_ID, SCHEMA_VERSION,
                            "layout_version is 3", "expected 2"), "layout");
    free(memory);
}

static void test_attach_refuses_a_wrong_schema_id(void)
{
    gr_ring_t ring;
    void *memory = new_ring(&ring, SMALL);
    CHECK(attach_fails_with(memory, gr_ring_segment_size(SMALL), 4712, SCHEMA_VERSION,
                            "sbe_schema_id is 4711", "expected 4712"), "schema id");
    free(memory);
}

static void test_attach_refuses_a_wrong_schema_version(void)
{
    gr_ring_t ring;
    void *memory = new_ring(&ring, SMALL);
    CHECK(attach_fails_with(memory, gr_ring_segment_size(SMALL), SCHEMA_ID, 2,
                            "sbe_schema_version is 1", "expected 2"), "schema version");
    free(memory);
}

static void test_attach_refuses_a_capacity_that_is_not_a_power_of_two(void)
{
    gr_ring_t ring;
    void *memory = new_ring(&ring, SMALL);
    ring.header->capacity = 5000;
    CHECK(attach_fails_with(memory, gr_ring_segment_size(SMALL), SCHEMA_ID, SCHEMA_VERSION,
                            "capacity is 5000", "power of two"), "capacity 5000");
    ring.header->capacity = 2048;
    CHECK(attach_fails_with(memory, gr_ring_segment_size(SMALL), SCHEMA_ID, SCHEMA_VERSION,
                            "capacity is 2048", "power of two"), "capacity below the minimum");
    ring.header->capacity = SMALL;
    ring.header->max_message_length = 4096;
    CHECK(attach_fails_with(memory, gr_ring_segment_size(SMALL), SCHEMA_ID, SCHEMA_VERSION,
                            "max_message_length is 4096", "512"), "max_message_length");
    free(memory);
}

static void test_attach_refuses_memory_too_small_for_the_ring(void)
{
    gr_ring_t ring;
    void *memory = new_ring(&ring, SMALL);
    CHECK(attach_fails_with(memory, gr_ring_segment_size(SMALL) - 1, SCHEMA_ID, SCHEMA_VERSION,
                            "memory is 5119 bytes", "needs 5120"), "one byte short");
    CHECK(attach_fails_with(memory, 100, SCHEMA_ID, SCHEMA_VERSION,
                            "memory is 100 bytes", "1024-byte ring header"), "smaller than the header");
    CHECK(attach_fails_with(NULL, 100, SCHEMA_ID, SCHEMA_VERSION, "NULL", NULL), "NULL memory");
    free(memory);
}

static void test_init_refuses_a_bad_capacity_and_memory_too_small(void)
{
    gr_ring_t ring;
    void *memory = new_segment(SMALL);
    char error[256] = "";
    CHECK(gr_ring_init(&ring, memory, 5120, 3000, 1, 1, error, sizeof error) == -1
          && strstr(error, "capacity 3000 is not a power of two"), "capacity: %s", error);
    CHECK(gr_ring_init(&ring, memory, 5119, SMALL, 1, 1, error, sizeof error) == -1
          && strstr(error, "memory is 5119 bytes") && strstr(error, "needs 5120"), "size: %s", error);
    CHECK(gr_ring_init(&ring, (uint8_t *)memory + 4, 5116, SMALL, 1, 1, NULL, 0) == -1,
          "misaligned (and a NULL error buffer is fine)");
    CHECK(gr_ring_init(&ring, memory, 5120, SMALL, 1, 1, error, 1) == 0, "tiny error buffer, success");
    free(memory);
}

/* ---- producer and consumer ---- */

static void test_read_of_an_empty_ring_consumes_nothing(void)
{
    gr_ring_t ring;
    void *memory = new_ring(&ring, SMALL);
    collector_t c = {0};
    CHECK(gr_ring_is_empty(&ring), "empty");
    CHECK(gr_ring_read(&ring, collect, &c, 0) == 0 && c.calls == 0, "nothing read");
    CHECK(head_of(&ring) == 0 && tail_of(&ring) == 0, "positions unchanged");
    CHECK(gr_ring_free_bytes(&ring) == SMALL, "all free");
    free(memory);
}

static void test_many_writes_are_read_back_in_order_across_many_wraps(void)
{
    gr_ring_t ring;
    void *memory = new_ring(&ring, 65536);   /* max payload 8192 */
    const int total = 20000;
    int written = 0, read = 0, ok = 1;
    size_t limits[] = {0, 1, 3, 7, 64};
    unsigned turn = 0;
    static uint8_t buffer[8192];
    while (read < total && ok) {
        while (written < total) {
            const size_t length = (size_t)((written * 977) % 8193);
            const int32_t type = 1 + written;
            fill_pattern(buffer, length, (uint32_t)type);
            gr_ring_status_t status = gr_ring_write(&ring, type, buffer, length);
            if (status == GR_RING_FULL) break;
            if (status != GR_RING_OK) { ok = 0; break; }
            written++;
        }
        collector_t c = {0};
        const size_t limit = limits[turn++ % 5];
        const size_t n = gr_ring_read(&ring, collect, &c, limit);
        if (limit != 0 && n > limit) ok = 0;
        if (n == 0 && written > read) ok = 0;
        for (size_t i = 0; i < n && i < 1024; i++) {
            const int expected = read + (int)i;
            if (c.types[i] != 1 + expected || c.lengths[i] != (size_t)((expected * 977) % 8193) || !c.intact[i]) {
                fprintf(stderr, "  message %d: type %d length %zu intact %d\n", expected,
                        c.types[i], c.lengths[i], c.intact[i]);
                ok = 0;
                break;
            }
        }
        read += (int)n;
    }
    CHECK(ok && read == total, "read %d of %d in order", read, total);
    CHECK(gr_ring_is_empty(&ring) && head_of(&ring) == tail_of(&ring), "drained");
    CHECK(tail_of(&ring) > 100 * 65536ull, "wrapped many times (tail %llu)", (unsigned long long)tail_of(&ring));
    free(memory);
}

static void test_a_record_that_exactly_fits_before_the_end_needs_no_padding(void)
{
    gr_ring_t ring;
    void *memory = new_ring(&ring, SMALL);
    advance_empty(&ring, SMALL - 456);   /* 456 bytes to the end */
    const uint64_t before = tail_of(&ring);
    CHECK((before & ring.mask) == SMALL - 456, "positioned");
    CHECK(write_pattern(&ring, 7, 448) == GR_RING_OK, "exact fit");   /* 8 + 448 = 456 */
    CHECK(tail_of(&ring) == before + 456, "no padding added to tail");
    CHECK(word_at(&ring, SMALL - 456) == 456 && word_at(&ring, SMALL - 452) == 7,
          "the record itself sits at the end, not padding");
    CHECK(write_pattern(&ring, 8, 10) == GR_RING_OK, "next write");
    CHECK(word_at(&ring, 0) == 18 && word_at(&ring, 4) == 8, "the next record starts at index 0");
    collector_t c = {0};
    CHECK(gr_ring_read(&ring, collect, &c, 0) == 2, "both read");
    CHECK(c.types[0] == 7 && c.lengths[0] == 448 && c.intact[0] && c.types[1] == 8
          && c.lengths[1] == 10 && c.intact[1], "content");
    CHECK(c.pointers[0] == ring.data + SMALL - 448, "payload handed over in place");
    free(memory);
}

static void test_padding_record_is_written_when_a_message_would_wrap(void)
{
    gr_ring_t ring;
    void *memory = new_ring(&ring, SMALL);
    advance_empty(&ring, SMALL - 64);
    const uint64_t before = tail_of(&ring);
    uint8_t *payload = NULL;
    CHECK(gr_ring_claim(&ring, 9, 100, &payload) == GR_RING_OK, "claim across the wrap");
    CHECK(payload == ring.data + 8, "the record goes at index 0");
    /* The padding record: positive length covering the 64 bytes to the end, type -1. */
    CHECK(word_at(&ring, SMALL - 64) == 64, "padding length %d", word_at(&ring, SMALL - 64));
    CHECK(word_at(&ring, SMALL - 60) == GR_RING_PADDING_TYPE, "padding type %d", word_at(&ring, SMALL - 60));
    int rest_zero = 1;
    for (uint64_t i = SMALL - 56; i < SMALL; i++) rest_zero &= ring.data[i] == 0;
    CHECK(rest_zero, "the padding's body is untouched zeroes");
    /* The claimed record: negative length while being filled. */
    CHECK(word_at(&ring, 0) == -108 && word_at(&ring, 4) == 9, "claimed header %d/%d", word_at(&ring, 0), word_at(&ring, 4));
    CHECK(tail_of(&ring) == before + 64 + 112, "tail covers padding + aligned record");
    collector_t c = {0};
    CHECK(gr_ring_read(&ring, collect, &c, 0) == 0 && c.calls == 0, "nothing readable yet");
    CHECK(head_of(&ring) == before + 64, "the padding was consumed already");
    CHECK(word_at(&ring, SMALL - 64) == 0 && word_at(&ring, SMALL - 60) == 0, "padding zeroed once consumed");
    fill_pattern(payload, 100, 9);
    gr_ring_commit(&ring, payload);
    CHECK(word_at(&ring, 0) == 108, "committed length positive");
    CHECK(gr_ring_read(&ring, collect, &c, 0) == 1, "one record (padding not counted)");
    CHECK(c.types[0] == 9 && c.lengths[0] == 100 && c.intact[0], "content");
    CHECK(head_of(&ring) == tail_of(&ring), "drained");

    /* The smallest padding: 8 bytes to the end. */
    advance_empty(&ring, SMALL - 112 - 8);
    CHECK((tail_of(&ring) & ring.mask) == SMALL - 8, "positioned 8 from the end");
    CHECK(write_pattern(&ring, 10, 8) == GR_RING_OK, "16-byte record wraps");
    CHECK(word_at(&ring, SMALL - 8) == 8 && word_at(&ring, SMALL - 4) == GR_RING_PADDING_TYPE, "8-byte padding");
    c = (collector_t){0};
    CHECK(gr_ring_read(&ring, collect, &c, 0) == 1 && c.types[0] == 10 && c.intact[0], "read after 8-byte padding");
    free(memory);
}

static void test_claim_returns_full_when_there_is_no_room(void)
{
    gr_ring_t ring;
    void *memory = new_ring(&ring, SMALL);
    int written = 0;
    while (write_pattern(&ring, 1, 512) == GR_RING_OK) written++;
    CHECK(written == 7, "seven 520-byte records fit in 4096 (%d)", written);
    CHECK(gr_ring_free_bytes(&ring) == 456, "free %zu", gr_ring_free_bytes(&ring));
    const uint64_t tail = tail_of(&ring);
    CHECK(write_pattern(&ring, 1, 512) == GR_RING_FULL && tail_of(&ring) == tail, "FULL leaves tail alone");
    CHECK(write_pattern(&ring, 2, 448) == GR_RING_OK && gr_ring_free_bytes(&ring) == 0, "fill the last 456 bytes");
    CHECK(write_pattern(&ring, 3, 0) == GR_RING_FULL, "not even an empty record fits");
    collector_t c = {.stop_after = 1};
    CHECK(gr_ring_read(&ring, collect, &c, 0) == 1, "consume one");
    CHECK(write_pattern(&ring, 4, 512) == GR_RING_OK, "room again (the head cache was refreshed)");
    CHECK(ring.header->head_cache_position == 520, "head cache %llu", (unsigned long long)ring.header->head_cache_position);
    free(memory);

    /* Room in total but not at either end: [head_index 112 .. tail_index 3896) unread. */
    memory = new_ring(&ring, SMALL);
    CHECK(write_pattern(&ring, 5, 104) == GR_RING_OK, "first record, 112 bytes");
    fill_records(&ring, 3896 - 112);
    c = (collector_t){.stop_after = 1};
    CHECK(gr_ring_read(&ring, collect, &c, 0) == 1 && head_of(&ring) == 112, "consume the first");
    CHECK(gr_ring_free_bytes(&ring) == 312, "312 free");
    CHECK(write_pattern(&ring, 6, 200) == GR_RING_FULL, "208 > 200 to the end and > 112 at the start: FULL");
    CHECK(tail_of(&ring) == 3896 && word_at(&ring, 3896) == 0, "no padding written on FULL");
    CHECK(write_pattern(&ring, 6, 192) == GR_RING_OK && tail_of(&ring) == 4096, "200 still fits at the end");
    size_t sink = 0;
    gr_ring_read(&ring, count_only, &sink, 0);
    CHECK(sink == 1 + 8, "read the rest (%zu)", sink);
    free(memory);
}

static void test_payload_of_capacity_over_8_is_accepted_and_one_byte_more_is_too_large(void)
{
    gr_ring_t ring;
    void *memory = new_ring(&ring, GR_RING_DEFAULT_CAPACITY);
    uint8_t *payload = NULL;
    CHECK(ring.max_message_length == 262144, "max");
    CHECK(gr_ring_claim(&ring, 1, 262145, &payload) == GR_RING_TOO_LARGE, "capacity/8 + 1");
    CHECK(gr_ring_claim(&ring, 1, SIZE_MAX, &payload) == GR_RING_TOO_LARGE, "SIZE_MAX");
    CHECK(tail_of(&ring) == 0, "nothing claimed");
    CHECK(write_pattern(&ring, 3, 262144) == GR_RING_OK, "exactly capacity/8");
    collector_t c = {0};
    CHECK(gr_ring_read(&ring, collect, &c, 0) == 1 && c.lengths[0] == 262144 && c.intact[0], "read back whole");
    free(memory);
    memory = new_ring(&ring, SMALL);
    CHECK(write_pattern(&ring, 3, 513) == GR_RING_TOO_LARGE, "513 in a 4096 ring");
    CHECK(write_pattern(&ring, 3, 512) == GR_RING_OK, "512 in a 4096 ring");
    free(memory);
}

static void test_handler_returning_minus_one_leaves_the_record_for_the_next_read(void)
{
    gr_ring_t ring;
    void *memory = new_ring(&ring, SMALL);
    for (int32_t t = 1; t <= 3; t++) write_pattern(&ring, t, (size_t)(t * 10));
    collector_t c = {.reject_at = 2};
    CHECK(gr_ring_read(&ring, collect, &c, 0) == 1, "one consumed before the refusal");
    CHECK(c.calls == 2 && c.types[0] == 1, "the second was offered and refused");
    CHECK(head_of(&ring) == 24, "head past the first record only (%llu)", (unsigned long long)head_of(&ring));
    CHECK(word_at(&ring, 24) == 28 && word_at(&ring, 28) == 2, "the refused record is intact, not zeroed");
    c = (collector_t){.reject_at = 1};
    CHECK(gr_ring_read(&ring, collect, &c, 0) == 0 && head_of(&ring) == 24, "refusing the first consumes nothing");
    c = (collector_t){0};
    CHECK(gr_ring_read(&ring, collect, &c, 0) == 2, "the next read gets it");
    CHECK(c.types[0] == 2 && c.lengths[0] == 20 && c.intact[0] && c.types[1] == 3 && c.intact[1], "in order");
    free(memory);
}

static void test_handler_returning_one_stops_the_batch_after_consuming(void)
{
    gr_ring_t ring;
    void *memory = new_ring(&ring, SMALL);
    for (int32_t t = 1; t <= 5; t++) write_pattern(&ring, t, 5);
    collector_t c = {.stop_after = 2};
    CHECK(gr_ring_read(&ring, collect, &c, 0) == 2 && c.calls == 2, "two");
    c = (collector_t){0};
    CHECK(gr_ring_read(&ring, collect, &c, 2) == 2 && c.types[0] == 3, "message_limit 2");
    c = (collector_t){0};
    CHECK(gr_ring_read(&ring, collect, &c, 0) == 1 && c.types[0] == 5, "the last");
    free(memory);
}

static void test_consumed_bytes_are_zeroed_and_head_is_released_once_per_batch(void)
{
    gr_ring_t ring;
    void *memory = new_ring(&ring, SMALL);
    for (int32_t t = 1; t <= 4; t++) write_pattern(&ring, t, 13);   /* 24-byte records */
    size_t sink = 0;
    CHECK(gr_ring_read(&ring, count_only, &sink, 3) == 3, "three");
    CHECK(head_of(&ring) == 72, "head %llu", (unsigned long long)head_of(&ring));
    int zero = 1;
    for (int i = 0; i < 72; i++) zero &= ring.data[i] == 0;
    CHECK(zero, "consumed bytes zeroed");
    CHECK(word_at(&ring, 72) == 21 && word_at(&ring, 76) == 4, "unconsumed record untouched");
    free(memory);
}

static void test_zero_length_payloads_round_trip(void)
{
    gr_ring_t ring;
    void *memory = new_ring(&ring, SMALL);
    for (int32_t t = 1; t <= 100; t++) CHECK(gr_ring_write(&ring, t, NULL, 0) == GR_RING_OK, "write %d", t);
    CHECK(tail_of(&ring) == 800, "8 bytes each");
    collector_t c = {0};
    CHECK(gr_ring_read(&ring, collect, &c, 0) == 100, "all read");
    int ok = 1;
    for (int i = 0; i < 100; i++) ok &= c.types[i] == i + 1 && c.lengths[i] == 0 && c.pointers[i] != NULL;
    CHECK(ok, "types in order, length 0, payload pointer not NULL");
    free(memory);
}

static void test_claim_then_abort_turns_the_record_into_padding(void)
{
    gr_ring_t ring;
    void *memory = new_ring(&ring, SMALL);
    CHECK(write_pattern(&ring, 1, 3) == GR_RING_OK, "first");   /* 16 bytes */
    uint8_t *payload = NULL;
    CHECK(gr_ring_claim(&ring, 2, 50, &payload) == GR_RING_OK && payload == ring.data + 24, "claim");
    CHECK(word_at(&ring, 16) == -58 && word_at(&ring, 20) == 2, "claimed: negative length");
    collector_t c = {0};
    CHECK(gr_ring_read(&ring, collect, &c, 0) == 1 && head_of(&ring) == 16, "the consumer stops at the open claim");
    gr_ring_abort(&ring, payload);
    CHECK(word_at(&ring, 16) == 58 && word_at(&ring, 20) == GR_RING_PADDING_TYPE, "aborted: padding of the same length");
    CHECK(gr_ring_is_empty(&ring), "only padding waits: empty");
    CHECK(write_pattern(&ring, 3, 7) == GR_RING_OK, "after");
    gr_ring_abort(&ring, payload);    /* already closed: ignored */
    gr_ring_commit(&ring, payload);   /* likewise */
    CHECK(word_at(&ring, 16) == 58, "a second abort/commit changes nothing");
    c = (collector_t){0};
    CHECK(gr_ring_read(&ring, collect, &c, 0) == 1 && c.types[0] == 3 && c.intact[0], "the aborted record is skipped");
    CHECK(head_of(&ring) == tail_of(&ring) && head_of(&ring) == 16 + 64 + 16, "head past it");
    gr_ring_commit(&ring, ring.data + 3);   /* not a payload pointer: ignored, no crash */
    gr_ring_abort(&ring, ring.data + 12);
    free(memory);
}

static void test_a_type_of_zero_or_below_is_refused(void)
{
    gr_ring_t ring;
    void *memory = new_ring(&ring, SMALL);
    uint8_t *payload = NULL;
    CHECK(gr_ring_write(&ring, 0, "x", 1) == GR_RING_INVALID, "0");
    CHECK(gr_ring_write(&ring, -5, "x", 1) == GR_RING_INVALID, "-5");
    CHECK(gr_ring_claim(&ring, GR_RING_PADDING_TYPE, 1, &payload) == GR_RING_INVALID, "padding type");
    CHECK(tail_of(&ring) == 0, "nothing claimed");
    CHECK(gr_ring_write(&ring, INT32_MAX, "x", 1) == GR_RING_OK, "INT32_MAX is fine");
    CHECK(strcmp(gr_ring_status_text(GR_RING_TOO_LARGE), "TOO_LARGE") == 0, "status text");
    free(memory);
}

/* ---- waiting ---- */

static void test_the_sleeper_protocol_in_one_process(void)
{
    gr_ring_t ring;
    void *memory = new_ring(&ring, SMALL);
    gr_ring_header_t *h = ring.header;
    CHECK(gr_ring_producer_should_wake(&ring) == 0 && h->futex_seq == 0, "nobody asleep: no wake");
    uint32_t seq = gr_ring_prepare_sleep(&ring);
    CHECK(seq == 0 && h->consumer_sleeping == 1, "prepare raises the flag");
    CHECK(gr_ring_still_empty_after_prepare(&ring), "still empty");
    CHECK(gr_ring_producer_should_wake(&ring) == 1, "flag seen");
    CHECK(h->consumer_sleeping == 0 && h->futex_seq == 1 && ring.wake_count == 1, "flag taken, word bumped");
    CHECK(gr_ring_futex_wait(&ring, seq, 1000000000) == GR_RING_OK, "a stale seq returns at once");
    uint64_t start = gr_ring_now_ns();
    CHECK(gr_ring_futex_wait(&ring, 1, 2000000) == GR_RING_TIMEOUT, "the current seq sleeps to the timeout");
    CHECK(gr_ring_now_ns() - start >= 2000000, "slept 2 ms");
    CHECK(ring.sleep_count == 2, "sleeps counted");
    gr_ring_cancel_sleep(&ring);

    start = gr_ring_now_ns();
    CHECK(gr_ring_wait_readable(&ring, 10, 3000000) == GR_RING_TIMEOUT, "wait on an empty ring times out");
    CHECK(gr_ring_now_ns() - start >= 3000000, "after the timeout");
    CHECK(h->consumer_sleeping == 0, "the flag is lowered after a timeout");
    CHECK(gr_ring_wait_readable(&ring, 0, 0) == GR_RING_TIMEOUT, "timeout 0 on empty");

    CHECK(write_pattern(&ring, 1, 1) == GR_RING_OK, "write");
    seq = gr_ring_prepare_sleep(&ring);
    CHECK(!gr_ring_still_empty_after_prepare(&ring), "the re-check sees the record");
    gr_ring_cancel_sleep(&ring);
    CHECK(h->consumer_sleeping == 0, "cancel lowers the flag");
    CHECK(gr_ring_wait_readable(&ring, 0, 0) == GR_RING_OK, "readable at once");
    gr_ring_futex_wake(&ring);   /* nobody waiting: harmless */
    free(memory);
}

/* ---- what a broken peer can leave ---- */

static void test_an_impossible_record_marks_the_ring_corrupt_and_is_not_followed(void)
{
    const int32_t bad[][2] = {
        {5000, 1},          /* runs past the end of the data */
        {3, 1},             /* shorter than its own header */
        {16, 0},            /* type 0 */
        {16, -7},           /* negative type that is not padding */
        {8 + 520, 1},       /* fits before the end, but payload > max_message_length 512 */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gr_ring_t ring;
        void *memory = new_ring(&ring, SMALL);
        memcpy(ring.data + 4, &bad[i][1], 4);
        memcpy(ring.data, &bad[i][0], 4);
        collector_t c = {0};
        CHECK(!gr_ring_is_empty(&ring) || bad[i][0] < 8, "case %zu: not reported empty", i);
        CHECK(gr_ring_read(&ring, collect, &c, 0) == 0 && c.calls == 0, "case %zu: nothing handed over", i);
        CHECK(gr_ring_is_corrupt(&ring), "case %zu: corrupt", i);
        CHECK(head_of(&ring) == 0, "case %zu: head not moved", i);
        CHECK(gr_ring_wait_readable(&ring, 0, 0) == GR_RING_INVALID, "case %zu: wait says INVALID", i);
        CHECK(gr_ring_write(&ring, 1, NULL, 0) == GR_RING_INVALID, "case %zu: write says INVALID", i);
        free(memory);
    }
    /* A head the consumer could not hold (beyond tail): the producer refuses to trust it. */
    gr_ring_t ring;
    void *memory = new_ring(&ring, SMALL);
    ring.header->head_position = 1u << 20;
    int status = GR_RING_OK, writes = 0;
    while (status == GR_RING_OK && writes < 100) { status = write_pattern(&ring, 1, 500); writes++; }
    CHECK(status == GR_RING_INVALID && gr_ring_is_corrupt(&ring), "bad head: INVALID (%d after %d)", status, writes);
    free(memory);
}

static void test_a_head_past_the_tail_is_caught_by_the_producers_idle_check(void)
{
    gr_ring_t ring;
    void *memory = new_ring(&ring, SMALL);
    CHECK(write_pattern(&ring, 1, 100) == GR_RING_OK, "a write");
    CHECK(gr_ring_check_head(&ring) == 1 && !gr_ring_is_corrupt(&ring), "a head the consumer could hold");
    ring.header->head_position = 1u << 20;     /* the peer moved it past the tail */
    CHECK(gr_ring_check_head(&ring) == 0 && gr_ring_is_corrupt(&ring), "caught without a claim");
    CHECK(gr_ring_write(&ring, 1, NULL, 0) == GR_RING_INVALID, "and no more writes");
    free(memory);
}

static void test_fresh_init_writes_only_the_header_of_zeroed_memory(void)
{
    const size_t size = gr_ring_segment_size(SMALL);
    uint8_t *memory = new_segment(SMALL);
    memset(memory, 0xAB, GR_RING_DATA_OFFSET);     /* a stale header: rewritten */
    memset(memory + GR_RING_DATA_OFFSET, 0, SMALL);
    memory[size - 1] = 0x5A;                       /* a data byte: left alone (not zeroed) */
    gr_ring_t ring, peer;
    char error[256];
    CHECK(gr_ring_init_fresh(&ring, memory, size, SMALL, SCHEMA_ID, SCHEMA_VERSION, error, sizeof error) == 0,
          "%s", error);
    CHECK(memory[size - 1] == 0x5A, "data untouched");
    CHECK(head_of(&ring) == 0 && ring.header->tail_position == 0 && ring.header->consumer_sleeping == 0,
          "positions and flag zeroed");
    CHECK(gr_ring_attach(&peer, memory, size, SCHEMA_ID, SCHEMA_VERSION, error, sizeof error) == 0, "%s", error);
    memory[size - 1] = 0;
    CHECK(write_pattern(&ring, 3, 200) == GR_RING_OK, "write");
    collector_t c = {0};
    CHECK(gr_ring_read(&peer, collect, &c, 0) == 1 && c.calls == 1, "read back through the attached view");
    free(memory);
}

/* ---- two processes, both directions, many wraps, futex sleeps ---- */

#define STRESS_CAPACITY GR_RING_DEFAULT_CAPACITY
#define SOURCE_BYTES (65536 + 4096 + 16)
#define WAIT_TIMEOUT_NS 2000000000LL   /* producers never pause this long: a timeout is a lost wakeup */
#define DRAIN_DEADLINE_NS 1000000000ull   /* < WAIT_TIMEOUT_NS: a drain this slow means a lost wakeup */

typedef struct stress_result {
    uint64_t received, sleeps, wakes, timeouts, refusals, aborts, errors, elapsed_ns;
    char error[200];
} stress_result_t;

typedef struct stress_shared {
    stress_result_t result[2][2];   /* [process 0 parent / 1 child][0 producer / 1 consumer] */
} stress_shared_t;

static uint8_t source[SOURCE_BYTES];

/* Sizes 0..65536 spread over 17 octaves (mean ~3.9 KiB), the same on both sides. */
static size_t stress_size(uint64_t direction, uint64_t seq)
{
    const uint64_t h = test_mix64(direction * 0x1000000000ull + seq);
    const unsigned octave = (unsigned)(h % 17);
    return (size_t)((h >> 8) % ((1ull << octave) + 1));
}

static uint64_t checksum(uint64_t seq, const uint8_t *p, size_t n)
{
    uint64_t h = 0x9E3779B97F4A7C15ull ^ seq ^ ((uint64_t)n << 40);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    for (; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h ^ (h >> 29);
}

/* Message seq: source bytes at a seq-dependent offset; then seq in bytes 0..7 and the
 * checksum of bytes 16.. in bytes 8..15, as far as the payload reaches. */
static void build_message(uint64_t seq, uint8_t *out, size_t length)
{
    memcpy(out, source + (seq * 8) % 4096, length);
    if (length >= 8) memcpy(out, &seq, 8);
    if (length >= 16) {
        const uint64_t sum = checksum(seq, out + 16, length - 16);
        memcpy(out + 8, &sum, 8);
    }
}

typedef struct stress_role {
    gr_ring_t *ring;
    uint64_t direction;
    uint64_t messages;
    uint64_t rng;
    stress_result_t *result;
    uint64_t expected;           /* consumer: next seq */
} stress_role_t;

static void stress_error(stress_result_t *result, const char *message, uint64_t seq)
{
    if (result->errors++ == 0) snprintf(result->error, sizeof result->error, "%s at seq %llu", message, (unsigned long long)seq);
}

static void wake_if_needed(gr_ring_t *ring)
{
    if (gr_ring_producer_should_wake(ring)) gr_ring_futex_wake(ring);
}

static void *stress_producer(void *argument)
{
    stress_role_t *role = argument;
    gr_ring_t *ring = role->ring;
    stress_result_t *result = role->result;
    static __thread uint8_t scratch[65536];
    const uint64_t start = gr_ring_now_ns(), give_up = start + 120000000000ull;
    uint64_t burst = 1 + test_random(&role->rng) % 200;
    for (uint64_t seq = 0; seq < role->messages; seq++) {
        const size_t length = stress_size(role->direction, seq);
        const int32_t type = (int32_t)(1 + seq % 100000);
        const int by_claim = (test_random(&role->rng) & 1) != 0;
        if (test_random(&role->rng) % 97 == 0) {   /* a claim given back: the consumer must skip it */
            uint8_t *p = NULL;
            if (gr_ring_claim(ring, 77, (size_t)(1 + test_random(&role->rng) % 3000), &p) == GR_RING_OK) {
                p[0] = 0x5A;   /* scribble: the consumer must never see it */
                gr_ring_abort(ring, p);
                result->aborts++;
            }
        }
        if (!by_claim) build_message(seq, scratch, length);
        for (;;) {
            gr_ring_status_t status;
            if (by_claim) {
                uint8_t *p = NULL;
                status = gr_ring_claim(ring, type, length, &p);
                if (status == GR_RING_OK) {
                    build_message(seq, p, length);   /* fill in place */
                    gr_ring_commit(ring, p);
                }
            } else {
                status = gr_ring_write(ring, type, scratch, length);
            }
            if (status == GR_RING_OK) break;
            if (status != GR_RING_FULL) { stress_error(result, gr_ring_status_text(status), seq); return NULL; }
            wake_if_needed(ring);   /* never wait for room while the consumer may be asleep */
            sched_yield();
            if (gr_ring_now_ns() > give_up) { stress_error(result, "producer gave up waiting for room", seq); return NULL; }
        }
        if (--burst == 0) {
            wake_if_needed(ring);
            /* Stop and watch the consumer drain: it takes microseconds, unless a wakeup
             * was lost and the consumer sleeps on with data waiting (until its timeout). */
            const uint64_t drain_deadline = gr_ring_now_ns() + DRAIN_DEADLINE_NS;
            while (gr_ring_free_bytes(ring) != ring->capacity) {
                if (gr_ring_now_ns() > drain_deadline) {
                    stress_error(result, "consumer did not drain within 1 s of the last commit (lost wakeup)", seq);
                    break;
                }
                sched_yield();
            }
            usleep((useconds_t)(20 + test_random(&role->rng) % 400));
            burst = 1 + test_random(&role->rng) % 200;
        } else if (test_random(&role->rng) % 4 == 0) {
            wake_if_needed(ring);
        }
    }
    wake_if_needed(ring);
    result->wakes = ring->wake_count;
    result->elapsed_ns = gr_ring_now_ns() - start;
    return NULL;
}

static int stress_handler(void *context, int32_t type, const uint8_t *payload, size_t length)
{
    stress_role_t *role = context;
    stress_result_t *result = role->result;
    const uint64_t seq = role->expected;
    const uint64_t roll = test_random(&role->rng) % 100;
    if (roll == 0) { result->refusals++; return -1; }   /* not now: must come back */
    if (seq >= role->messages) { stress_error(result, "more messages than sent", seq); return 1; }
    const size_t expected_length = stress_size(role->direction, seq);
    if (type != (int32_t)(1 + seq % 100000)) stress_error(result, "wrong type", seq);
    else if (length != expected_length) stress_error(result, "wrong length", seq);
    else if (length < 16) {
        uint8_t expected[16];
        build_message(seq, expected, length);
        if (memcmp(expected, payload, length) != 0) stress_error(result, "short payload differs", seq);
    } else {
        uint64_t got_seq, got_sum;
        memcpy(&got_seq, payload, 8);
        memcpy(&got_sum, payload + 8, 8);
        if (got_seq != seq) stress_error(result, "wrong sequence number", seq);
        else if (got_sum != checksum(seq, payload + 16, length - 16)) stress_error(result, "checksum mismatch", seq);
    }
    role->expected++;
    result->received++;
    return roll == 1 ? 1 : 0;
}

static void stress_consumer(stress_role_t *role)
{
    gr_ring_t *ring = role->ring;
    stress_result_t *result = role->result;
    const uint64_t start = gr_ring_now_ns(), give_up = start + 120000000000ull;
    while (result->received < role->messages) {
        const gr_ring_status_t status = gr_ring_wait_readable(ring, 64, WAIT_TIMEOUT_NS);
        if (status == GR_RING_TIMEOUT) {
            result->timeouts++;
            if (gr_ring_now_ns() > give_up) { stress_error(result, "consumer gave up", role->expected); break; }
            continue;
        }
        if (status != GR_RING_OK) { stress_error(result, "wait failed", role->expected); break; }
        const size_t limit = (test_random(&role->rng) % 3 == 0) ? (size_t)(1 + test_random(&role->rng) % 64) : 0;
        gr_ring_read(ring, stress_handler, role, limit);
        if (gr_ring_is_corrupt(ring)) { stress_error(result, "ring corrupt", role->expected); break; }
    }
    result->sleeps = ring->sleep_count;
    result->elapsed_ns = gr_ring_now_ns() - start;
}

/* One process's half: produce on `out` (thread), consume `in` (this thread). */
static void stress_side(gr_ring_t *out, gr_ring_t *in, uint64_t out_direction, uint64_t messages,
                        stress_result_t results[2], uint64_t seed)
{
    stress_role_t producer = {out, out_direction, messages, seed, &results[0], 0};
    stress_role_t consumer = {in, 1 - out_direction, messages, seed ^ 0xC0FFEE, &results[1], 0};
    pthread_t thread;
    if (pthread_create(&thread, NULL, stress_producer, &producer) != 0) {
        stress_error(&results[0], "pthread_create failed", 0);
        return;
    }
    stress_consumer(&consumer);
    pthread_join(thread, NULL);
}

static void test_two_processes_stream_both_ways_with_every_message_checked(uint64_t messages)
{
    const size_t segment = gr_ring_segment_size(STRESS_CAPACITY);
    const size_t total = 2 * segment + sizeof(stress_shared_t);
    uint8_t *shared = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(shared != MAP_FAILED, "mmap");
    if (shared == MAP_FAILED) return;
    stress_shared_t *results = (stress_shared_t *)(void *)(shared + 2 * segment);
    uint64_t rng = 12345;
    for (size_t i = 0; i < SOURCE_BYTES; i++) source[i] = (uint8_t)test_random(&rng);

    gr_ring_t to_child, to_parent;
    char error[256] = "";
    CHECK(gr_ring_init(&to_child, shared, segment, STRESS_CAPACITY, SCHEMA_ID, SCHEMA_VERSION, error, sizeof error) == 0, "%s", error);
    CHECK(gr_ring_init(&to_parent, shared + segment, segment, STRESS_CAPACITY, SCHEMA_ID, SCHEMA_VERSION, error, sizeof error) == 0, "%s", error);

    const uint64_t start = gr_ring_now_ns();
    fflush(NULL);
    const pid_t child = fork();
    CHECK(child >= 0, "fork");
    if (child < 0) return;
    if (child == 0) {
        gr_ring_t in, out;   /* the child's own views, attached as a real peer would */
        if (gr_ring_attach(&in, shared, segment, SCHEMA_ID, SCHEMA_VERSION, error, sizeof error) != 0
            || gr_ring_attach(&out, shared + segment, segment, SCHEMA_ID, SCHEMA_VERSION, error, sizeof error) != 0) {
            snprintf(results->result[1][1].error, sizeof results->result[1][1].error, "child attach: %.150s", error);
            results->result[1][1].errors = 1;
            _exit(1);
        }
        stress_side(&out, &in, 1, messages, results->result[1], 777);
        _exit(0);
    }
    stress_side(&to_child, &to_parent, 0, messages, results->result[0], 555);
    int wstatus = 0;
    waitpid(child, &wstatus, 0);
    const double seconds = (double)(gr_ring_now_ns() - start) / 1e9;
    CHECK(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0, "child exit status %d", wstatus);

    const char *names[2] = {"parent", "child"};
    uint64_t sleeps_total = 0;
    for (int p = 0; p < 2; p++) {
        const stress_result_t *prod = &results->result[p][0], *cons = &results->result[p][1];
        CHECK(prod->errors == 0, "%s producer: %s", names[p], prod->error);
        CHECK(cons->errors == 0, "%s consumer: %s", names[p], cons->error);
        CHECK(cons->received == messages, "%s received %llu of %llu", names[p],
              (unsigned long long)cons->received, (unsigned long long)messages);
        CHECK(cons->timeouts == 0, "%s consumer timed out %llu times (a lost wakeup?)", names[p],
              (unsigned long long)cons->timeouts);
        if (messages >= 200000)
            CHECK(cons->sleeps > 100, "%s consumer slept only %llu times", names[p], (unsigned long long)cons->sleeps);
        sleeps_total += cons->sleeps;
        printf("stress %s: consumed %llu (%llu refused and re-read), futex sleeps %llu, "
               "its producer woke the peer %llu times, aborted %llu claims\n",
               names[p], (unsigned long long)cons->received, (unsigned long long)cons->refusals,
               (unsigned long long)cons->sleeps, (unsigned long long)prod->wakes,
               (unsigned long long)prod->aborts);
    }
    CHECK(gr_ring_is_empty(&to_child) && gr_ring_is_empty(&to_parent), "both rings drained");
    CHECK(to_child.header->tail_position > 50 * (uint64_t)STRESS_CAPACITY || messages < 200000,
          "many wraps (%.0f laps)", (double)to_child.header->tail_position / STRESS_CAPACITY);
    printf("stress: %llu messages each way in %.2f s, %.0f laps of the 2 MiB ring each way, %llu futex sleeps\n",
           (unsigned long long)messages, seconds,
           (double)to_child.header->tail_position / STRESS_CAPACITY, (unsigned long long)sleeps_total);
    munmap(shared, total);
}

int main(int argc, char **argv)
{
    const uint64_t messages = argc > 1 ? strtoull(argv[1], NULL, 10) : 200000;

    test_segment_size_is_the_header_plus_capacity_and_zero_for_a_bad_capacity();
    test_init_then_attach_round_trips_the_descriptor();
    test_attach_refuses_a_wrong_magic();
    test_attach_refuses_a_wrong_layout_version();
    test_attach_refuses_a_wrong_schema_id();
    test_attach_refuses_a_wrong_schema_version();
    test_attach_refuses_a_capacity_that_is_not_a_power_of_two();
    test_attach_refuses_memory_too_small_for_the_ring();
    test_init_refuses_a_bad_capacity_and_memory_too_small();
    test_read_of_an_empty_ring_consumes_nothing();
    test_many_writes_are_read_back_in_order_across_many_wraps();
    test_a_record_that_exactly_fits_before_the_end_needs_no_padding();
    test_padding_record_is_written_when_a_message_would_wrap();
    test_claim_returns_full_when_there_is_no_room();
    test_payload_of_capacity_over_8_is_accepted_and_one_byte_more_is_too_large();
    test_handler_returning_minus_one_leaves_the_record_for_the_next_read();
    test_handler_returning_one_stops_the_batch_after_consuming();
    test_consumed_bytes_are_zeroed_and_head_is_released_once_per_batch();
    test_zero_length_payloads_round_trip();
    test_claim_then_abort_turns_the_record_into_padding();
    test_a_type_of_zero_or_below_is_refused();
    test_the_sleeper_protocol_in_one_process();
    test_an_impossible_record_marks_the_ring_corrupt_and_is_not_followed();
    test_a_head_past_the_tail_is_caught_by_the_producers_idle_check();
    test_fresh_init_writes_only_the_header_of_zeroed_memory();
    test_two_processes_stream_both_ways_with_every_message_checked(messages);

    return checks_report();
}
