/* test_bitmap.c — the bit engine (engines/bitmap.c) against a reference written bit by bit,
 * in C so that it runs under ASan/UBSan.
 *
 * Random strings of random lengths (every buffer malloc'd to its exact size, so any read past
 * the end aborts under ASan) and random offsets, widths and values: popcount of every
 * sub-range, the first set and clear bit of every suffix, bitfield get (signed and unsigned,
 * reading past the end as zero) and set (neighbouring bits untouched), the WRAP/SAT/FAIL
 * overflow rules against 128-bit arithmetic, and BITOP AND/OR/XOR/NOT of sources of unequal
 * lengths. Usage: test_bitmap [rounds [seed]]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engines/bitmap.h"
#include "tests/test_helpers.h"

/* ---- the reference: one bit at a time ---- */

static int ref_bit(const uint8_t *p, size_t length, uint64_t offset) {
    return offset / 8 < length ? (p[offset / 8] >> (7 - offset % 8)) & 1 : 0;
}

static uint64_t ref_count(const uint8_t *p, size_t length) {
    uint64_t n = 0;
    for (uint64_t i = 0; i < (uint64_t)length * 8; i++) n += (uint64_t)ref_bit(p, length, i);
    return n;
}

static int64_t ref_first(const uint8_t *p, size_t length, int bit) {
    for (uint64_t i = 0; i < (uint64_t)length * 8; i++)
        if (ref_bit(p, length, i) == bit) return (int64_t)i;
    return bit ? -1 : (int64_t)length * 8;
}

static uint64_t ref_field(const uint8_t *p, size_t length, uint64_t offset, unsigned bits) {
    uint64_t value = 0;
    for (unsigned i = 0; i < bits; i++) value = (value << 1) | (uint64_t)ref_bit(p, length, offset + i);
    return value;
}

static uint8_t *random_bytes(size_t length) {
    uint8_t *p = malloc(length ? length : 1);
    int style = (int)below(4);   /* dense, sparse, all ones, random */
    for (size_t i = 0; i < length; i++) {
        uint8_t byte = (uint8_t)rnd();
        if (style == 1) byte = below(10) ? 0 : (uint8_t)(1u << below(8));
        if (style == 2) byte = below(20) ? 0xFF : byte;
        p[i] = byte;
    }
    return p;
}

static size_t random_length(void) {
    size_t choice = below(10);
    return choice < 3 ? below(9) : choice < 8 ? below(80) : below(700);
}

/* ---- cases ---- */

static void check_count_and_first(void) {
    size_t length = random_length();
    uint8_t *p = random_bytes(length);
    size_t from = below(length + 1), to = from + below(length - from + 1);
    uint64_t count = gr_bits_count(p + from, to - from);
    CHECK(count == ref_count(p + from, to - from), "count of [%zu, %zu) of %zu bytes", from, to, length);
    for (int bit = 0; bit <= 1; bit++) {
        int64_t first = gr_bits_first(p + from, to - from, bit);
        int64_t expected = ref_first(p + from, to - from, bit);
        CHECK(first == expected, "first %d of [%zu, %zu): %lld, expected %lld", bit, from, to, (long long)first,
              (long long)expected);
    }
    uint64_t offset = below(length * 8 + 20);
    CHECK(gr_bits_get(p, length, offset) == ref_bit(p, length, offset), "bit %llu", (unsigned long long)offset);
    free(p);
}

static void check_fields(void) {
    size_t length = random_length() + 1;
    uint8_t *p = random_bytes(length);
    unsigned bits = 1 + (unsigned)below(64);
    uint64_t offset = below(length * 8 + 16);
    uint64_t expected = ref_field(p, length, offset, bits);
    CHECK(gr_bits_field_get_unsigned(p, length, offset, bits) == expected, "u%u at %llu", bits,
          (unsigned long long)offset);
    int64_t signed_expected = bits < 64 && (expected >> (bits - 1)) ? (int64_t)(expected | (UINT64_MAX << bits))
                                                                     : (int64_t)expected;
    CHECK(gr_bits_field_get_signed(p, length, offset, bits) == signed_expected, "i%u at %llu", bits,
          (unsigned long long)offset);
    /* set inside the string: the field reads back, every other bit is unchanged */
    if (length * 8 >= bits) {
        offset = below(length * 8 - bits + 1);
        uint8_t *before = malloc(length);
        memcpy(before, p, length);
        uint64_t value = rnd();
        gr_bits_field_set(p, offset, bits, value);
        uint64_t mask = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
        CHECK(ref_field(p, length, offset, bits) == (value & mask), "set u%u at %llu", bits, (unsigned long long)offset);
        int others_kept = 1;
        for (uint64_t i = 0; i < (uint64_t)length * 8; i++)
            if ((i < offset || i >= offset + bits) && ref_bit(p, length, i) != ref_bit(before, length, i)) others_kept = 0;
        CHECK(others_kept, "set u%u at %llu changed a neighbouring bit", bits, (unsigned long long)offset);
        free(before);
    }
    free(p);
}

static int64_t random_int64(void) {
    switch (below(5)) {
    case 0: return (int64_t)rnd();
    case 1: return (int64_t)below(600) - 300;
    case 2: return INT64_MAX - (int64_t)below(3);
    case 3: return INT64_MIN + (int64_t)below(3);
    default: {
        uint64_t bits = rnd();
        return (int64_t)(bits >> below(64));   /* two statements: a fixed order of draws */
    }
    }
}

/* Overflow against exact 128-bit arithmetic, for values inside the field's range (what
 * INCRBY sees: the value it reads from the string always fits). */
static void check_overflow(void) {
    unsigned bits = 1 + (unsigned)below(64);
    int64_t increment = random_int64();
    for (int is_signed = 0; is_signed <= 1; is_signed++) {
        if (!is_signed && bits == 64) continue;
        __int128 low = is_signed ? -((__int128)1 << (bits - 1)) : 0;
        __int128 high = is_signed ? ((__int128)1 << (bits - 1)) - 1 : ((__int128)1 << bits) - 1;
        uint64_t pattern = bits == 64 ? rnd() : rnd() & (((uint64_t)1 << bits) - 1);   /* a field's bits */
        __int128 value = pattern;
        if (is_signed && (pattern >> (bits - 1)) & 1) value -= (__int128)1 << bits;
        if (below(4) == 0) value = below(2) ? low : high;
        __int128 sum = value + increment;
        int expected = sum > high ? 1 : sum < low ? -1 : 0;
        for (int mode = GR_BITS_WRAP; mode <= GR_BITS_FAIL; mode++) {
            int result;
            __int128 limit;
            if (is_signed) {
                int64_t out = 12345;
                result = gr_bits_signed_overflow((int64_t)value, increment, bits, (gr_bits_overflow_t)mode, &out);
                limit = out;
            } else {
                uint64_t out = 12345;
                result = gr_bits_unsigned_overflow((uint64_t)value, increment, bits, (gr_bits_overflow_t)mode, &out);
                limit = out;
            }
            CHECK(result == expected, "%c%u %lld + %lld: %d, expected %d", is_signed ? 'i' : 'u', bits,
                  (long long)value, (long long)increment, result, expected);
            if (!result) continue;
            __int128 span = (__int128)1 << bits, wrapped = ((sum - low) % span + span) % span + low;
            __int128 want = mode == GR_BITS_SAT ? (result > 0 ? high : low) : mode == GR_BITS_WRAP ? wrapped : 12345;
            CHECK(limit == want, "%c%u %lld + %lld mode %d: limit %lld, expected %lld", is_signed ? 'i' : 'u', bits,
                  (long long)value, (long long)increment, mode, (long long)limit, (long long)want);
        }
    }
}

static void check_bitop(void) {
    size_t count = 1 + below(5);
    gr_bits_op_t op = (gr_bits_op_t)below(4);
    if (op == GR_BITS_NOT) count = 1;
    const uint8_t *sources[5];
    size_t lengths[5], longest = 0;
    for (size_t k = 0; k < count; k++) {
        lengths[k] = random_length();
        sources[k] = random_bytes(lengths[k]);
        if (lengths[k] > longest) longest = lengths[k];
    }
    uint8_t *out = malloc(longest ? longest : 1);
    gr_bits_op(op, sources, lengths, count, out, longest);
    int same = 1;
    for (size_t j = 0; j < longest; j++) {
        uint8_t expected = j < lengths[0] ? sources[0][j] : 0;
        if (op == GR_BITS_NOT) expected = (uint8_t)~expected;
        for (size_t k = 1; k < count; k++) {
            uint8_t byte = j < lengths[k] ? sources[k][j] : 0;
            expected = op == GR_BITS_AND ? expected & byte : op == GR_BITS_OR ? expected | byte : expected ^ byte;
        }
        if (out[j] != expected) same = 0;
    }
    CHECK(same, "bitop %d of %zu sources, longest %zu", (int)op, count, longest);
    for (size_t k = 0; k < count; k++) free((void *)sources[k]);
    free(out);
}

static void check_known_values(void) {
    const uint8_t foobar[] = "foobar";
    CHECK(gr_bits_count(foobar, 6) == 26, "BITCOUNT foobar is 26 (Redis's documented example)");
    const uint8_t ff_f0[] = {0xFF, 0xF0, 0x00};
    CHECK(gr_bits_first(ff_f0, 3, 0) == 12, "BITPOS \\xff\\xf0\\x00 0 is 12 (Redis's documented example)");
    const uint8_t zeros[] = {0, 0, 0};
    CHECK(gr_bits_first(zeros, 3, 1) == -1, "no set bit: -1");
    const uint8_t ones[] = {0xFF, 0xFF};
    CHECK(gr_bits_first(ones, 2, 0) == 16, "no clear bit: the first bit past the end");
    uint8_t field[2] = {0, 0};
    gr_bits_field_set(field, 7, 5, 23);   /* bitops.c's own illustration: 00000001|01110000 */
    CHECK(field[0] == 0x01 && field[1] == 0x70, "u5 23 at bit 7 is 00000001|01110000, got %02x %02x", field[0], field[1]);
}

int main(int argc, char **argv) {
    long rounds = argc > 1 ? atol(argv[1]) : 20000;
    if (argc > 2) rng_state = strtoull(argv[2], NULL, 10);
    check_known_values();
    for (long i = 0; i < rounds; i++) {
        check_count_and_first();
        check_fields();
        check_overflow();
        if (i % 4 == 0) check_bitop();
    }
    return checks_report();
}
