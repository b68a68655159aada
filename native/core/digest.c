/* digest.c — SHA-1 (FIPS 180-4) and the value digests built on it (digest.h). */
#include "core/digest.h"

#include <stdio.h>
#include <string.h>

typedef struct sha1 {
    uint32_t state[5];
    uint64_t length;        /* bytes hashed */
    uint8_t block[64];
    size_t used;
} sha1_t;

static uint32_t rol(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

static void sha1_block(uint32_t state[5], const uint8_t block[64]) {
    uint32_t w[80];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)block[4 * i] << 24 | (uint32_t)block[4 * i + 1] << 16 | (uint32_t)block[4 * i + 2] << 8 |
               block[4 * i + 3];
    for (int i = 16; i < 80; i++) w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    uint32_t a = state[0], b = state[1], c = state[2], d = state[3], e = state[4];
    for (int i = 0; i < 80; i++) {
        uint32_t f, k;
        if (i < 20) f = (b & c) | (~b & d), k = 0x5a827999;
        else if (i < 40) f = b ^ c ^ d, k = 0x6ed9eba1;
        else if (i < 60) f = (b & c) | (b & d) | (c & d), k = 0x8f1bbcdc;
        else f = b ^ c ^ d, k = 0xca62c1d6;
        uint32_t t = rol(a, 5) + f + e + k + w[i];
        e = d, d = c, c = rol(b, 30), b = a, a = t;
    }
    state[0] += a, state[1] += b, state[2] += c, state[3] += d, state[4] += e;
}

static void sha1_init(sha1_t *s) {
    static const uint32_t initial[5] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0};
    memcpy(s->state, initial, sizeof initial);
    s->length = 0;
    s->used = 0;
}

static void sha1_update(sha1_t *s, const uint8_t *data, size_t length) {
    s->length += length;
    while (length) {
        if (s->used == 0 && length >= 64) {
            sha1_block(s->state, data);
            data += 64, length -= 64;
            continue;
        }
        size_t take = 64 - s->used < length ? 64 - s->used : length;
        memcpy(s->block + s->used, data, take);
        s->used += take, data += take, length -= take;
        if (s->used == 64) {
            sha1_block(s->state, s->block);
            s->used = 0;
        }
    }
}

static void sha1_final(sha1_t *s, uint8_t out[GR_DIGEST_BYTES]) {
    uint64_t bits = s->length * 8;
    uint8_t pad = 0x80, zero = 0, tail[8];
    sha1_update(s, &pad, 1);
    while (s->used != 56) sha1_update(s, &zero, 1);
    for (int i = 0; i < 8; i++) tail[i] = (uint8_t)(bits >> (56 - 8 * i));
    sha1_update(s, tail, 8);
    for (int i = 0; i < 5; i++) {
        out[4 * i] = (uint8_t)(s->state[i] >> 24), out[4 * i + 1] = (uint8_t)(s->state[i] >> 16);
        out[4 * i + 2] = (uint8_t)(s->state[i] >> 8), out[4 * i + 3] = (uint8_t)s->state[i];
    }
}

void gr_sha1(const uint8_t *data, size_t length, uint8_t out[GR_DIGEST_BYTES]) {
    sha1_t s;
    sha1_init(&s);
    sha1_update(&s, data, length);
    sha1_final(&s, out);
}

void gr_digest_xor(uint8_t digest[GR_DIGEST_BYTES], const void *data, size_t length) {
    uint8_t hash[GR_DIGEST_BYTES];
    gr_sha1(data, length, hash);
    for (int i = 0; i < GR_DIGEST_BYTES; i++) digest[i] ^= hash[i];
}

void gr_digest_mix(uint8_t digest[GR_DIGEST_BYTES], const void *data, size_t length) {
    gr_digest_xor(digest, data, length);
    uint8_t copy[GR_DIGEST_BYTES];
    memcpy(copy, digest, sizeof copy);
    gr_sha1(copy, sizeof copy, digest);
}

void gr_digest_mix_type(uint8_t digest[GR_DIGEST_BYTES], uint32_t redis_type) {
    uint8_t big_endian[4] = {(uint8_t)(redis_type >> 24), (uint8_t)(redis_type >> 16), (uint8_t)(redis_type >> 8),
                             (uint8_t)redis_type};
    gr_digest_mix(digest, big_endian, sizeof big_endian);
}

void gr_digest_mix_score(uint8_t digest[GR_DIGEST_BYTES], double score) {
    char text[64];
    int n = snprintf(text, sizeof text, "%.17g", score);
    gr_digest_mix(digest, text, (size_t)n);
}

void gr_digest_hex(const uint8_t digest[GR_DIGEST_BYTES], char out[2 * GR_DIGEST_BYTES + 1]) {
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < GR_DIGEST_BYTES; i++) out[2 * i] = hex[digest[i] >> 4], out[2 * i + 1] = hex[digest[i] & 15];
    out[2 * GR_DIGEST_BYTES] = '\0';
}
