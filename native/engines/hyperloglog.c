/* hyperloglog.c — the HyperLogLog engine (layout in hyperloglog.h): hashing, the dense and sparse
 * register encodings, the sparse-to-dense promotion, merging and the cardinality estimator. */
#include "engines/hyperloglog.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"

#define P 14
#define Q (64 - P)
#define REGISTER_MASK (GR_HLL_REGISTERS - 1)
#define REGISTER_BITS 6
#define REGISTER_MAX 63
#define DENSE_REGISTER_BYTES (GR_HLL_DENSE_BYTES - GR_HLL_HEADER_BYTES)
#define HASH_SEED 0xadc83b19ULL
#define ALPHA_INF 0.721347520444481703680   /* 1 / (2 ln 2): the estimator's constant for m -> inf */

/* Sparse opcodes. */
#define VAL_MAX_VALUE 32
#define VAL_MAX_RUN 4
#define ZERO_MAX_RUN 64
#define XZERO_MAX_RUN 16384
#define IS_ZERO(p) ((*(p) & 0xc0) == 0)
#define IS_XZERO(p) ((*(p) & 0xc0) == 0x40)
#define IS_VAL(p) ((*(p) & 0x80) != 0)
#define ZERO_RUN(p) ((*(p) & 0x3f) + 1)
#define XZERO_RUN(p) ((((*(p) & 0x3f) << 8) | *((p) + 1)) + 1)
#define VAL_VALUE(p) (((*(p) >> 2) & 0x1f) + 1)
#define VAL_RUN(p) ((*(p) & 0x3) + 1)

static void put_zero(uint8_t *p, int run) { *p = (uint8_t)(run - 1); }
static void put_xzero(uint8_t *p, int run) {
    p[0] = (uint8_t)(((run - 1) >> 8) | 0x40);
    p[1] = (uint8_t)((run - 1) & 0xff);
}
static void put_val(uint8_t *p, int value, int run) { *p = (uint8_t)(((value - 1) << 2) | (run - 1) | 0x80); }
/* A run of zero registers as ZERO or, past 64, XZERO; returns the bytes written. */
static int put_zeros(uint8_t *p, int run) {
    if (run > ZERO_MAX_RUN) { put_xzero(p, run); return 2; }
    put_zero(p, run);
    return 1;
}

/* ---- hashing ---- */

uint64_t gr_hll_murmur64a(const void *key, size_t length, uint64_t seed) {
    const uint64_t m = 0xc6a4a7935bd1e995ULL;
    const int r = 47;
    uint64_t h = seed ^ (length * m);
    const uint8_t *data = key;
    const uint8_t *end = data + (length - (length & 7));
    for (; data != end; data += 8) {
        uint64_t k = 0;
        for (int i = 7; i >= 0; i--) k = (k << 8) | data[i];   /* little-endian on any host */
        k *= m;
        k ^= k >> r;
        k *= m;
        h ^= k;
        h *= m;
    }
    switch (length & 7) {
    case 7: h ^= (uint64_t)data[6] << 48; /* fall through */
    case 6: h ^= (uint64_t)data[5] << 40; /* fall through */
    case 5: h ^= (uint64_t)data[4] << 32; /* fall through */
    case 4: h ^= (uint64_t)data[3] << 24; /* fall through */
    case 3: h ^= (uint64_t)data[2] << 16; /* fall through */
    case 2: h ^= (uint64_t)data[1] << 8;  /* fall through */
    case 1: h ^= (uint64_t)data[0]; h *= m;
    }
    h ^= h >> r;
    h *= m;
    h ^= h >> r;
    return h;
}

/* The register an element lands in and the run length it offers (1..Q+1). */
static uint8_t element_position(const uint8_t *element, size_t length, uint32_t *index) {
    uint64_t hash = gr_hll_murmur64a(element, length, HASH_SEED);
    *index = (uint32_t)(hash & REGISTER_MASK);
    hash >>= P;
    hash |= (uint64_t)1 << Q;   /* so the count stops at Q+1 */
    uint8_t count = 1;
    for (uint64_t bit = 1; (hash & bit) == 0; bit <<= 1) count++;
    return count;
}

/* ---- dense registers ---- */

static uint8_t dense_get(const uint8_t *registers, uint32_t index) {
    size_t first_bit = (size_t)index * REGISTER_BITS;
    size_t byte = first_bit / 8;
    unsigned shift = first_bit & 7;
    unsigned value = registers[byte] >> shift;
    if (byte + 1 < DENSE_REGISTER_BYTES) value |= (unsigned)registers[byte + 1] << (8 - shift);
    return (uint8_t)(value & REGISTER_MAX);
}

static void dense_set(uint8_t *registers, uint32_t index, uint8_t value) {
    size_t first_bit = (size_t)index * REGISTER_BITS;
    size_t byte = first_bit / 8;
    unsigned shift = first_bit & 7;
    registers[byte] = (uint8_t)((registers[byte] & ~(REGISTER_MAX << shift)) | (value << shift));
    if (byte + 1 < DENSE_REGISTER_BYTES) {
        unsigned high = 8 - shift;
        registers[byte + 1] = (uint8_t)((registers[byte + 1] & ~(REGISTER_MAX >> high)) | (value >> high));
    }
}

static int dense_raise(uint8_t *registers, uint32_t index, uint8_t count) {
    if (dense_get(registers, index) >= count) return 0;
    dense_set(registers, index, count);
    return 1;
}

/* ---- header ---- */

int gr_hll_is_valid(const uint8_t *data, size_t length) {
    if (length < GR_HLL_HEADER_BYTES) return 0;
    if (memcmp(data, "HYLL", 4) != 0) return 0;
    if (data[4] > GR_HLL_SPARSE) return 0;
    if (data[4] == GR_HLL_DENSE && length != GR_HLL_DENSE_BYTES) return 0;
    return 1;
}

int gr_hll_encoding(const gr_string_t *hll) { return hll->data[4]; }

gr_string_t *gr_hll_new(void) {
    gr_string_t *hll = gr_string_new_zeroed(GR_HLL_HEADER_BYTES + 2);
    if (!hll) return NULL;
    memcpy(hll->data, "HYLL", 4);
    hll->data[4] = GR_HLL_SPARSE;
    put_xzero(hll->data + GR_HLL_HEADER_BYTES, XZERO_MAX_RUN);
    return hll;
}

int gr_hll_cached_count(const gr_string_t *hll, uint64_t *count) {
    const uint8_t *card = hll->data + 8;
    if (card[7] & 0x80) return 0;
    uint64_t value = 0;
    for (int i = 7; i >= 0; i--) value = (value << 8) | card[i];
    *count = value;
    return 1;
}

void gr_hll_set_cached_count(gr_string_t *hll, uint64_t count) {
    for (int i = 0; i < 8; i++) hll->data[8 + i] = (uint8_t)(count >> (8 * i));
}

void gr_hll_invalidate_cache(gr_string_t *hll) { hll->data[15] |= 0x80; }

uint8_t gr_hll_dense_register(const gr_string_t *hll, uint32_t index) {
    return dense_get(hll->data + GR_HLL_HEADER_BYTES, index);
}

/* ---- sparse to dense ---- */

int gr_hll_to_dense(gr_string_t **hll) {
    const gr_string_t *sparse = *hll;
    if (sparse->data[4] == GR_HLL_DENSE) return 0;
    uint8_t values[GR_HLL_REGISTERS] = {0};   /* the sparse registers, read by the one decoder */
    if (gr_hll_merge_into(values, sparse) != 0) return GR_HLL_CORRUPT;
    gr_string_t *dense = gr_string_new_zeroed(GR_HLL_DENSE_BYTES);
    if (!dense) return GR_HLL_NO_MEMORY;
    memcpy(dense->data, sparse->data, GR_HLL_HEADER_BYTES);   /* the cached count comes along */
    dense->data[4] = GR_HLL_DENSE;
    uint8_t *registers = dense->data + GR_HLL_HEADER_BYTES;
    for (uint32_t i = 0; i < GR_HLL_REGISTERS; i++)
        if (values[i]) dense_set(registers, i, values[i]);
    gr_string_free(*hll);
    *hll = dense;
    return 1;
}

/* ---- sparse update (Redis's hllSparseSet, step by step) ---- */

/* Raises register index of a sparse HLL to count, promoting it to dense when the sparse form
 * cannot say it (count > 32) or would outgrow sparse_max_bytes. */
static int sparse_raise(gr_string_t **hll, uint32_t index, uint8_t count, size_t sparse_max_bytes) {
    if (count > VAL_MAX_VALUE) goto promote;
    /* Room for the largest growth (an XZERO split into XZERO VAL XZERO: 3 bytes). */
    size_t length = (*hll)->length;
    gr_string_t *roomy = gr_string_resize(*hll, length + 3);
    if (!roomy) return GR_HLL_NO_MEMORY;
    roomy->length = (uint32_t)length;
    *hll = roomy;
    uint8_t *start = roomy->data + GR_HLL_HEADER_BYTES;
    uint8_t *end = roomy->data + length;

    /* 1. The opcode that covers index, and the one before it. */
    uint8_t *p = start, *prev = NULL;
    uint32_t first = 0, span = 0;
    int op_bytes = 1;
    while (p < end) {
        op_bytes = 1;
        if (IS_ZERO(p)) span = ZERO_RUN(p);
        else if (IS_VAL(p)) span = VAL_RUN(p);
        else { span = XZERO_RUN(p); op_bytes = 2; }
        if (index <= first + span - 1) break;
        prev = p;
        p += op_bytes;
        first += span;
    }
    if (span == 0 || p >= end) return GR_HLL_CORRUPT;
    uint8_t *next = p + op_bytes;
    if (next > end) return GR_HLL_CORRUPT;
    int is_zero = IS_ZERO(p), is_xzero = IS_XZERO(p), is_val = IS_VAL(p);

    /* 2. The cases that change one byte in place. */
    if (is_val) {
        if ((uint32_t)VAL_VALUE(p) >= count) return 0;
        if (span == 1) { put_val(p, count, 1); goto updated; }
    }
    if (is_zero && span == 1) { put_val(p, count, 1); goto updated; }

    /* 3. Split the opcode into up to three: what precedes index, index, what follows. */
    {
        uint8_t sequence[5], *n = sequence;
        uint32_t last = first + span - 1;
        if (is_zero || is_xzero) {
            if (index != first) n += put_zeros(n, (int)(index - first));
            put_val(n++, count, 1);
            if (index != last) n += put_zeros(n, (int)(last - index));
        } else {
            int value = VAL_VALUE(p);
            if (index != first) put_val(n++, value, (int)(index - first));
            put_val(n++, count, 1);
            if (index != last) put_val(n++, value, (int)(last - index));
        }
        int sequence_bytes = (int)(n - sequence);
        int delta = sequence_bytes - (is_xzero ? 2 : 1);
        if (delta > 0 && length + (size_t)delta > sparse_max_bytes) goto promote;
        if (delta != 0) memmove(next + delta, next, (size_t)(end - next));
        memcpy(p, sequence, (size_t)sequence_bytes);
        end += delta;
        length += (size_t)delta;
    }

updated:
    /* 4. Merge neighbouring VALs of one value, from the opcode before the change, five at most. */
    p = prev ? prev : start;
    for (int scan = 5; p < end && scan--;) {
        if (IS_XZERO(p)) { p += 2; continue; }
        if (IS_ZERO(p)) { p++; continue; }
        if (p + 1 < end && IS_VAL(p + 1) && VAL_VALUE(p) == VAL_VALUE(p + 1)) {
            int run = VAL_RUN(p) + VAL_RUN(p + 1);
            if (run <= VAL_MAX_RUN) {
                put_val(p + 1, VAL_VALUE(p), run);
                memmove(p, p + 1, (size_t)(end - p - 1));
                end--;
                length--;
                continue;   /* this position may merge again */
            }
        }
        p++;
    }
    (*hll)->length = (uint32_t)length;
    gr_hll_invalidate_cache(*hll);
    return 1;

promote: {
        int converted = gr_hll_to_dense(hll);
        if (converted < 0) return converted;
        return dense_raise((*hll)->data + GR_HLL_HEADER_BYTES, index, count);
    }
}

int gr_hll_raise_register(gr_string_t **hll, uint32_t index, uint8_t count, size_t sparse_max_bytes) {
    if ((*hll)->data[4] == GR_HLL_DENSE) return dense_raise((*hll)->data + GR_HLL_HEADER_BYTES, index, count);
    return sparse_raise(hll, index, count, sparse_max_bytes);
}

int gr_hll_add(gr_string_t **hll, const uint8_t *element, size_t length, size_t sparse_max_bytes) {
    uint32_t index;
    uint8_t count = element_position(element, length, &index);
    return gr_hll_raise_register(hll, index, count, sparse_max_bytes);
}

/* ---- reading all registers ---- */

int gr_hll_merge_into(uint8_t max[GR_HLL_REGISTERS], const gr_string_t *hll) {
    if (hll->data[4] == GR_HLL_DENSE) {
        const uint8_t *registers = hll->data + GR_HLL_HEADER_BYTES;
        for (uint32_t i = 0; i < GR_HLL_REGISTERS; i++) {
            uint8_t value = dense_get(registers, i);
            if (value > max[i]) max[i] = value;
        }
        return 0;
    }
    const uint8_t *p = hll->data + GR_HLL_HEADER_BYTES, *end = hll->data + hll->length;
    uint32_t index = 0;
    while (p < end) {
        if (IS_ZERO(p)) {
            index += ZERO_RUN(p);
            p++;
        } else if (IS_XZERO(p)) {
            if (p + 1 >= end) return GR_HLL_CORRUPT;
            index += XZERO_RUN(p);
            p += 2;
        } else {
            uint32_t run = VAL_RUN(p);
            uint8_t value = (uint8_t)VAL_VALUE(p);
            if (index + run > GR_HLL_REGISTERS) return GR_HLL_CORRUPT;
            while (run--) {
                if (value > max[index]) max[index] = value;
                index++;
            }
            p++;
        }
    }
    return index == GR_HLL_REGISTERS ? 0 : GR_HLL_CORRUPT;
}

/* sigma and tau of Ertl's "New cardinality estimation algorithms for HyperLogLog sketches",
 * evaluated as Redis evaluates them (the same operations in the same order, so the same double). */
static double sigma(double x) {
    if (x == 1.) return INFINITY;
    double previous, y = 1, z = x;
    do {
        x *= x;
        previous = z;
        z += x * y;
        y += y;
    } while (previous != z);
    return z;
}

static double tau(double x) {
    if (x == 0. || x == 1.) return 0.;
    double previous, y = 1.0, z = 1 - x;
    do {
        x = sqrt(x);
        previous = z;
        y *= 0.5;
        z -= pow(1 - x, 2) * y;
    } while (previous != z);
    return z / 3;
}

/* The estimate from the histogram of register values. */
static uint64_t estimate(const int histogram[64]) {
    double m = GR_HLL_REGISTERS;
    double z = m * tau((m - histogram[Q + 1]) / m);
    for (int j = Q; j >= 1; --j) {
        z += histogram[j];
        z *= 0.5;
    }
    z += m * sigma(histogram[0] / m);
    return (uint64_t)llroundl(ALPHA_INF * m * m / z);
}

uint64_t gr_hll_count(const gr_string_t *hll, int *corrupt) {
    int histogram[64] = {0};
    if (hll->data[4] == GR_HLL_DENSE) {
        const uint8_t *registers = hll->data + GR_HLL_HEADER_BYTES;
        for (uint32_t i = 0; i < GR_HLL_REGISTERS; i++) histogram[dense_get(registers, i)]++;
        return estimate(histogram);
    }
    const uint8_t *p = hll->data + GR_HLL_HEADER_BYTES, *end = hll->data + hll->length;
    uint32_t index = 0;
    while (p < end) {
        int run;
        if (IS_ZERO(p)) {
            run = ZERO_RUN(p);
            histogram[0] += run;
            p++;
        } else if (IS_XZERO(p)) {
            run = p + 1 < end ? XZERO_RUN(p) : 0;
            histogram[0] += run;
            p += 2;
        } else {
            run = VAL_RUN(p);
            histogram[VAL_VALUE(p)] += run;
            p++;
        }
        index += (uint32_t)run;
    }
    if (index != GR_HLL_REGISTERS && corrupt) *corrupt = 1;
    return estimate(histogram);
}

uint64_t gr_hll_count_registers(const uint8_t registers[GR_HLL_REGISTERS]) {
    int histogram[64] = {0};
    for (uint32_t i = 0; i < GR_HLL_REGISTERS; i++) histogram[registers[i] & 63]++;
    return estimate(histogram);
}

size_t gr_hll_decode_sparse(const gr_string_t *hll, char *out, size_t size) {
    const uint8_t *p = hll->data + GR_HLL_HEADER_BYTES, *end = hll->data + hll->length;
    size_t used = 0;
    char item[32];
    while (p < end) {
        int n;
        if (IS_ZERO(p)) {
            n = snprintf(item, sizeof item, "z:%d ", ZERO_RUN(p));
            p++;
        } else if (IS_XZERO(p)) {
            /* a truncated XZERO reads its missing byte as 0, as Redis reads the string's terminator */
            n = snprintf(item, sizeof item, "Z:%d ", p + 1 < end ? XZERO_RUN(p) : ((*p & 0x3f) << 8) + 1);
            p += 2;
        } else {
            n = snprintf(item, sizeof item, "v:%d,%d ", VAL_VALUE(p), VAL_RUN(p));
            p++;
        }
        if (out && used + (size_t)n <= size) memcpy(out + used, item, (size_t)n);
        used += (size_t)n;
    }
    return used ? used - 1 : 0;   /* without the last space */
}

/* ---- PFSELFTEST ---- */

static uint64_t selftest_random(uint64_t *state) {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

int gr_hll_selftest(char *error, size_t error_size) {
    /* 1. Dense registers: random values read back, across the byte boundaries. */
    static uint8_t registers[DENSE_REGISTER_BYTES];
    uint8_t expected[GR_HLL_REGISTERS];
    uint64_t state = 88172645463325252ULL;
    for (int round = 0; round < 100; round++) {
        memset(registers, 0, sizeof registers);
        for (uint32_t i = 0; i < GR_HLL_REGISTERS; i++) {
            expected[i] = (uint8_t)(selftest_random(&state) & REGISTER_MAX);
            dense_set(registers, i, expected[i]);
        }
        for (uint32_t i = 0; i < GR_HLL_REGISTERS; i++) {
            if (dense_get(registers, i) != expected[i]) {
                snprintf(error, error_size, "TESTFAILED Register error at %u", i);
                return -1;
            }
        }
    }
    /* 2. A sparse and a dense HLL fed the same elements count the same, within the error bound. */
    gr_string_t *sparse = gr_hll_new(), *dense = gr_hll_new();
    int failed = 0;
    if (!sparse || !dense || gr_hll_to_dense(&dense) != 1) {
        snprintf(error, error_size, "TESTFAILED out of memory");
        failed = 1;
    }
    double relative_error = 1.04 / sqrt(GR_HLL_REGISTERS);
    uint64_t checkpoint = 1;
    for (uint64_t j = 1; !failed && j <= 1000000; j++) {
        uint8_t element[8];
        uint64_t value = selftest_random(&state);
        for (int b = 0; b < 8; b++) element[b] = (uint8_t)(value >> (8 * b));
        /* sparse up to 10,000 elements (its counts checked at 1, 10, ... 10,000), then promoted
         * at Redis's default hll-sparse-max-bytes: a sparse add costs a memmove of the whole
         * representation, so a million of them would take the server seconds */
        size_t sparse_max = j <= 10000 ? (size_t)1 << 30 : 3000;
        if (gr_hll_add(&sparse, element, sizeof element, sparse_max) < 0 ||
            gr_hll_add(&dense, element, sizeof element, 1u << 30) < 0) {
            snprintf(error, error_size, "TESTFAILED out of memory");
            failed = 1;
            break;
        }
        if (j != checkpoint) continue;
        int corrupt = 0;
        uint64_t a = gr_hll_count(sparse, &corrupt), b = gr_hll_count(dense, &corrupt);
        if (corrupt || a != b) {
            snprintf(error, error_size, "TESTFAILED dense/sparse disagree: %llu vs %llu", (unsigned long long)b,
                     (unsigned long long)a);
            failed = 1;
            break;
        }
        double max_error = relative_error * 6 * (double)checkpoint;
        if (checkpoint == 1) max_error = 1;   /* one element must count as one */
        double absolute = fabs((double)b - (double)checkpoint);
        if (absolute > max_error) {
            snprintf(error, error_size, "TESTFAILED too big error. card:%llu error:%llu", (unsigned long long)checkpoint,
                     (unsigned long long)absolute);
            failed = 1;
            break;
        }
        checkpoint *= 10;
    }
    if (sparse) gr_string_free(sparse);
    if (dense) gr_string_free(dense);
    return failed ? -1 : 0;
}
