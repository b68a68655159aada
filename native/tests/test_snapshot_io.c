/* test_snapshot_io.c — core/snapshot_io's writer, reader, CRC-64 and sealed envelope: random
 * field sequences round-trip, every truncation and every flipped byte of a sealed payload is
 * refused, malformed varints and oversized counts are refused with the offset they start at.
 */
#include <math.h>

#include "core/snapshot_io.h"
#include "tests/test_helpers.h"

enum { F_U8, F_U16, F_U32, F_U64, F_DOUBLE, F_VARINT, F_BYTES, F_KINDS };

typedef struct field {
    int kind;
    uint64_t number;
    double real;
    uint8_t bytes[300];
    size_t length;
} field_t;

static void random_field(field_t *f) {
    f->kind = (int)below(F_KINDS);
    const unsigned bits = (unsigned)below(65);
    f->number = bits == 64 ? rnd() : rnd() & ((1ull << bits) - 1);
    const double specials[] = {0.0, -0.0, INFINITY, -INFINITY, 1e308, 5e-324, 3.25};
    f->real = below(2) ? specials[below(7)] : (double)(int64_t)rnd() / 7.0;
    f->length = below(4) == 0 ? below(300) : below(8);
    for (size_t i = 0; i < f->length; i++) f->bytes[i] = (uint8_t)rnd();
}

static int write_field(gr_snapshot_writer_t *w, const field_t *f) {
    switch (f->kind) {
    case F_U8: return gr_snapshot_write_u8(w, (uint8_t)f->number);
    case F_U16: return gr_snapshot_write_u16(w, (uint16_t)f->number);
    case F_U32: return gr_snapshot_write_u32(w, (uint32_t)f->number);
    case F_U64: return gr_snapshot_write_u64(w, f->number);
    case F_DOUBLE: return gr_snapshot_write_double(w, f->real);
    case F_VARINT: return gr_snapshot_write_varint(w, f->number);
    default: return gr_snapshot_write_bytes(w, f->bytes, f->length);
    }
}

/* 1 when the next field read back equals f. */
static int read_field_matches(gr_snapshot_reader_t *r, const field_t *f) {
    uint8_t a; uint16_t b; uint32_t c; uint64_t d; double e;
    const uint8_t *data; size_t length;
    switch (f->kind) {
    case F_U8: return gr_snapshot_read_u8(r, &a) == 0 && a == (uint8_t)f->number;
    case F_U16: return gr_snapshot_read_u16(r, &b) == 0 && b == (uint16_t)f->number;
    case F_U32: return gr_snapshot_read_u32(r, &c) == 0 && c == (uint32_t)f->number;
    case F_U64: return gr_snapshot_read_u64(r, &d) == 0 && d == f->number;
    case F_DOUBLE: return gr_snapshot_read_double(r, &e) == 0 && memcmp(&e, &f->real, sizeof e) == 0;
    case F_VARINT: return gr_snapshot_read_varint(r, &d) == 0 && d == f->number;
    default: return gr_snapshot_read_bytes(r, &data, &length) == 0 && length == f->length &&
                    memcmp(data, f->bytes, length) == 0;
    }
}

static void test_random_field_sequences_round_trip_and_every_truncation_is_refused(void) {
    static field_t fields[64];
    for (int round = 0; round < 300; round++) {
        const size_t count = 1 + below(64);
        gr_snapshot_writer_t w;
        gr_snapshot_writer_init(&w, GR_MEM_OTHER);
        for (size_t i = 0; i < count; i++) {
            random_field(&fields[i]);
            CHECK(write_field(&w, &fields[i]) == 0, "write %zu", i);
        }
        gr_snapshot_reader_t r;
        gr_snapshot_reader_init(&r, w.data, w.length);
        int all = 1;
        for (size_t i = 0; i < count; i++) all &= read_field_matches(&r, &fields[i]);
        CHECK(all && !r.error && gr_snapshot_reader_remaining(&r) == 0, "round %d read back", round);

        /* any proper prefix: some read fails, the error is sticky, its offset within the prefix */
        const size_t cut = below(w.length);
        gr_snapshot_reader_init(&r, w.data, cut);
        int ok = 1;
        for (size_t i = 0; i < count && ok; i++) ok = read_field_matches(&r, &fields[i]);
        CHECK(!ok && r.error && r.error_offset <= cut, "round %d cut %zu/%zu refused", round, cut, w.length);
        uint8_t byte;
        CHECK(gr_snapshot_read_u8(&r, &byte) == -1, "errors are sticky");
        gr_snapshot_writer_release(&w);
    }
}

static void test_varints_refuse_overlong_and_overflowing_forms(void) {
    const uint8_t overlong[] = {0x80, 0x00};
    const uint8_t overflow[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
    const uint8_t max[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    const uint8_t eleven[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
    gr_snapshot_reader_t r;
    uint64_t v;
    gr_snapshot_reader_init(&r, overlong, sizeof overlong);
    CHECK(gr_snapshot_read_varint(&r, &v) == -1 && r.error_offset == 0, "overlong refused");
    gr_snapshot_reader_init(&r, overflow, sizeof overflow);
    CHECK(gr_snapshot_read_varint(&r, &v) == -1, "overflow refused");
    gr_snapshot_reader_init(&r, eleven, sizeof eleven);
    CHECK(gr_snapshot_read_varint(&r, &v) == -1, "eleven bytes refused");
    gr_snapshot_reader_init(&r, max, sizeof max);
    CHECK(gr_snapshot_read_varint(&r, &v) == 0 && v == UINT64_MAX, "UINT64_MAX read");
}

static void test_a_count_larger_than_the_bytes_left_is_refused_where_it_starts(void) {
    gr_snapshot_writer_t w;
    gr_snapshot_writer_init(&w, GR_MEM_OTHER);
    gr_snapshot_write_u8(&w, 7);
    gr_snapshot_write_varint(&w, 5);
    gr_snapshot_write_raw(&w, (const uint8_t *)"abcdefghij", 10);
    gr_snapshot_reader_t r;
    uint8_t tag;
    uint64_t n;
    gr_snapshot_reader_init(&r, w.data, w.length);
    CHECK(gr_snapshot_read_u8(&r, &tag) == 0 && gr_snapshot_read_count(&r, 2, &n) == 0 && n == 5, "5 x 2 fits in 10");
    gr_snapshot_reader_init(&r, w.data, w.length);
    CHECK(gr_snapshot_read_u8(&r, &tag) == 0 && gr_snapshot_read_count(&r, 3, &n) == -1 && r.error_offset == 1,
          "5 x 3 does not fit in 10: refused at offset 1 (%zu)", r.error_offset);
    gr_snapshot_reader_init(&r, w.data, w.length);
    CHECK(gr_snapshot_read_u8(&r, &tag) == 0 && gr_snapshot_reader_fail(&r, "impossible") == -1 &&
          r.error_offset == 1 && strcmp(r.error, "impossible") == 0, "a load hook's own error keeps its offset");
    gr_snapshot_writer_release(&w);
}

static void test_crc64_matches_redis_check_value(void) {
    const uint8_t text[] = "123456789";
    CHECK(gr_crc64(0, text, 9) == 0xe9c6d914c4b8d9caull, "crc64(123456789) = %llx",
          (unsigned long long)gr_crc64(0, text, 9));
    /* split anywhere: the same */
    uint8_t buffer[100];
    for (int i = 0; i < 100; i++) buffer[i] = (uint8_t)rnd();
    const uint64_t whole = gr_crc64(0, buffer, 100);
    int same = 1;
    for (size_t cut = 0; cut <= 100; cut++) same &= gr_crc64(gr_crc64(0, buffer, cut), buffer + cut, 100 - cut) == whole;
    CHECK(same, "crc64 continues across any split");
}

static void test_a_sealed_payload_opens_and_any_damage_is_refused(void) {
    gr_snapshot_writer_t w;
    gr_snapshot_writer_init(&w, GR_MEM_OTHER);
    gr_snapshot_write_u8(&w, 2);
    gr_snapshot_write_bytes(&w, (const uint8_t *)"hello", 5);
    CHECK(gr_snapshot_seal(&w, 11) == 0 && w.length == 1 + 6 + 10, "sealed length %zu", w.length);
    uint16_t version = 0;
    gr_snapshot_reader_t body;
    CHECK(gr_snapshot_unseal(w.data, w.length, &version, &body) == 0 && version == 11 && body.length == 7, "opens");
    int refused = 1;
    for (size_t i = 0; i < w.length; i++)
        for (int bit = 0; bit < 8; bit++) {
            w.data[i] ^= (uint8_t)(1 << bit);
            refused &= gr_snapshot_unseal(w.data, w.length, &version, &body) == -1;
            w.data[i] ^= (uint8_t)(1 << bit);
        }
    CHECK(refused, "every single-bit flip refused");
    for (size_t cut = 0; cut < w.length; cut++) refused &= gr_snapshot_unseal(w.data, cut, &version, &body) == -1;
    CHECK(refused, "every truncation refused");
    gr_snapshot_writer_release(&w);
}

static void test_a_writer_that_cannot_grow_stays_failed(void) {
    gr_snapshot_writer_t w;
    gr_snapshot_writer_init(&w, GR_MEM_OTHER);
    CHECK(gr_snapshot_write_u32(&w, 1) == 0, "first write");
    CHECK(gr_snapshot_write_space(&w, SIZE_MAX / 2) == NULL && w.oom, "an impossible size sets oom");
    CHECK(gr_snapshot_write_u8(&w, 1) == -1 && w.length == 4, "later writes refused, nothing written");
    gr_snapshot_writer_release(&w);
    CHECK(gr_mem_used_by(GR_MEM_OTHER) == 0, "released: nothing counted (%lld)", (long long)gr_mem_used_by(GR_MEM_OTHER));
}

int main(int argc, char **argv) {
    if (argc > 1) rng_state = strtoull(argv[1], NULL, 10);
    test_random_field_sequences_round_trip_and_every_truncation_is_refused();
    test_varints_refuse_overlong_and_overflowing_forms();
    test_a_count_larger_than_the_bytes_left_is_refused_where_it_starts();
    test_crc64_matches_redis_check_value();
    test_a_sealed_payload_opens_and_any_damage_is_refused();
    test_a_writer_that_cannot_grow_stays_failed();
    return checks_report();
}
