/* bitmap.c — bit operations over byte strings (bitmap.h); the commands are cmd_bitmap.c. */
#include "engines/bitmap.h"

#include <string.h>

/* ---- counting ---- */

/* The same loop compiled twice: with the popcnt instruction, and for CPUs without it (where
 * the builtin becomes a library call). Four accumulators keep the adds independent. */
#define COUNT_WORDS_BODY                                                      \
    uint64_t c0 = 0, c1 = 0, c2 = 0, c3 = 0;                                  \
    size_t i = 0;                                                             \
    for (; i + 32 <= length; i += 32) {                                       \
        uint64_t w[4];                                                        \
        memcpy(w, p + i, sizeof w);                                           \
        c0 += (uint64_t)__builtin_popcountll(w[0]);                           \
        c1 += (uint64_t)__builtin_popcountll(w[1]);                           \
        c2 += (uint64_t)__builtin_popcountll(w[2]);                           \
        c3 += (uint64_t)__builtin_popcountll(w[3]);                           \
    }                                                                         \
    for (; i + 8 <= length; i += 8) {                                         \
        uint64_t w;                                                           \
        memcpy(&w, p + i, sizeof w);                                          \
        c0 += (uint64_t)__builtin_popcountll(w);                              \
    }                                                                         \
    for (; i < length; i++) c1 += (uint64_t)__builtin_popcount(p[i]);         \
    return c0 + c1 + c2 + c3;

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("popcnt"))) static uint64_t count_with_popcnt(const uint8_t *p, size_t length) {
    COUNT_WORDS_BODY
}
#endif

static uint64_t count_portable(const uint8_t *p, size_t length) { COUNT_WORDS_BODY }

uint64_t gr_bits_count(const uint8_t *p, size_t length) {
#if defined(__x86_64__) || defined(__i386__)
    static int has_popcnt = -1;   /* one thread executes commands; a race would only recompute it */
    if (has_popcnt < 0) {
        __builtin_cpu_init();
        has_popcnt = __builtin_cpu_supports("popcnt") ? 1 : 0;
    }
    if (has_popcnt) return count_with_popcnt(p, length);
#endif
    return count_portable(p, length);
}

int64_t gr_bits_first(const uint8_t *p, size_t length, int bit) {
    const uint64_t skip = bit ? 0 : UINT64_MAX;
    size_t i = 0;
    for (; i + 8 <= length; i += 8) {   /* whole words holding no candidate */
        uint64_t w;
        memcpy(&w, p + i, sizeof w);
        if (w != skip) break;
    }
    for (; i < length; i++) {
        unsigned byte = bit ? p[i] : (uint8_t)~p[i];
        if (byte) return (int64_t)i * 8 + (__builtin_clz(byte) - 24);
    }
    return bit ? -1 : (int64_t)length * 8;
}

/* ---- bitfields ---- */

/* The 1..9 bytes holding the field, as one big-endian number (past length: zero). */
static unsigned __int128 load_window(const uint8_t *p, size_t length, uint64_t byte, unsigned bytes) {
    unsigned __int128 window = 0;
    for (unsigned i = 0; i < bytes; i++) window = (window << 8) | (byte + i < length ? p[byte + i] : 0);
    return window;
}

static uint64_t low_mask(unsigned bits) { return bits >= 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1; }

uint64_t gr_bits_field_get_unsigned(const uint8_t *p, size_t length, uint64_t offset, unsigned bits) {
    uint64_t byte = offset >> 3;
    unsigned shift = (unsigned)(offset & 7), bytes = (shift + bits + 7) >> 3;
    unsigned tail = bytes * 8 - shift - bits;   /* bits of the window after the field */
    return (uint64_t)(load_window(p, length, byte, bytes) >> tail) & low_mask(bits);
}

int64_t gr_bits_field_get_signed(const uint8_t *p, size_t length, uint64_t offset, unsigned bits) {
    uint64_t value = gr_bits_field_get_unsigned(p, length, offset, bits);
    if (bits < 64 && (value >> (bits - 1)) & 1) value |= UINT64_MAX << bits;   /* extend the sign */
    return (int64_t)value;
}

void gr_bits_field_set(uint8_t *p, uint64_t offset, unsigned bits, uint64_t value) {
    uint64_t byte = offset >> 3;
    unsigned shift = (unsigned)(offset & 7), bytes = (shift + bits + 7) >> 3;
    unsigned tail = bytes * 8 - shift - bits;
    unsigned __int128 window = load_window(p, UINT64_MAX, byte, bytes);
    unsigned __int128 mask = (unsigned __int128)low_mask(bits) << tail;
    window = (window & ~mask) | ((unsigned __int128)(value & low_mask(bits)) << tail);
    for (unsigned i = bytes; i-- > 0;) {
        p[byte + i] = (uint8_t)window;
        window >>= 8;
    }
}

/* Redis's checks, including how they behave for a SET value outside the field's range (the
 * differences below are taken modulo 2^64, as Redis's compiled code takes them). */
int gr_bits_unsigned_overflow(uint64_t value, int64_t increment, unsigned bits, gr_bits_overflow_t mode,
                              uint64_t *limit) {
    uint64_t max = low_mask(bits);
    int64_t max_increment = (int64_t)(max - value);
    int64_t min_increment = (int64_t)(0 - value);
    int result;
    if (value > max || (increment > 0 && increment > max_increment)) {
        result = 1;
        if (mode == GR_BITS_SAT) *limit = max;
    } else if (increment < 0 && increment < min_increment) {
        result = -1;
        if (mode == GR_BITS_SAT) *limit = 0;
    } else {
        return 0;
    }
    if (mode == GR_BITS_WRAP) *limit = (value + (uint64_t)increment) & low_mask(bits);
    return result;
}

int gr_bits_signed_overflow(int64_t value, int64_t increment, unsigned bits, gr_bits_overflow_t mode,
                            int64_t *limit) {
    int64_t max = bits == 64 ? INT64_MAX : (int64_t)(((uint64_t)1 << (bits - 1)) - 1);
    int64_t min = -max - 1;
    int64_t max_increment = (int64_t)((uint64_t)max - (uint64_t)value);
    int64_t min_increment = (int64_t)((uint64_t)min - (uint64_t)value);
    int result;
    if (value > max || (bits != 64 && increment > max_increment) ||
        (value >= 0 && increment > 0 && increment > max_increment)) {
        result = 1;
        if (mode == GR_BITS_SAT) *limit = max;
    } else if (value < min || (bits != 64 && increment < min_increment) ||
               (value < 0 && increment < 0 && increment < min_increment)) {
        result = -1;
        if (mode == GR_BITS_SAT) *limit = min;
    } else {
        return 0;
    }
    if (mode == GR_BITS_WRAP) {
        uint64_t sum = (uint64_t)value + (uint64_t)increment;
        if (bits < 64) {
            uint64_t high = UINT64_MAX << bits;
            if (sum & ((uint64_t)1 << (bits - 1))) sum |= high;
            else sum &= ~high;
        }
        *limit = (int64_t)sum;
    }
    return result;
}

/* ---- BITOP ---- */

static inline uint64_t combine_word(gr_bits_op_t op, uint64_t a, uint64_t b) {
    return op == GR_BITS_AND ? a & b : op == GR_BITS_OR ? a | b : a ^ b;
}

void gr_bits_op(gr_bits_op_t op, const uint8_t *const *sources, const size_t *lengths, size_t count, uint8_t *out,
                size_t out_length) {
    size_t shortest = out_length;
    for (size_t k = 0; k < count; k++)
        if (lengths[k] < shortest) shortest = lengths[k];
    size_t j = 0;
    /* While every source has bytes: a word at a time. */
    for (; j + 8 <= shortest; j += 8) {
        uint64_t result;
        memcpy(&result, sources[0] + j, sizeof result);
        if (op == GR_BITS_NOT) {
            result = ~result;
        } else {
            for (size_t k = 1; k < count; k++) {
                uint64_t w;
                memcpy(&w, sources[k] + j, sizeof w);
                result = combine_word(op, result, w);
            }
        }
        memcpy(out + j, &result, sizeof result);
    }
    /* The rest a byte at a time, shorter sources read as zero. */
    for (; j < out_length; j++) {
        uint8_t result = j < lengths[0] ? sources[0][j] : 0;
        if (op == GR_BITS_NOT) {
            result = (uint8_t)~result;
        } else {
            for (size_t k = 1; k < count; k++) {
                uint8_t byte = j < lengths[k] ? sources[k][j] : 0;
                result = (uint8_t)combine_word(op, result, byte);
            }
        }
        out[j] = result;
    }
}
