/* siphash.h — SipHash-c-d over a byte string with a 128-bit key (k0, k1), header-only.
 *
 * The table engine (engines/table/) and the keyspace hash with SipHash-1-2, the variant Redis
 * uses for its dicts: keyed, so that clients cannot choose colliding members, and cheap for
 * short strings. c_rounds/d_rounds are parameters so that SipHash-2-4's published test
 * vectors can check the implementation; callers pass constants and the compiler folds them.
 */
#ifndef GR_SIPHASH_H
#define GR_SIPHASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t gr_sip_rotl(uint64_t x, int bits) { return (x << bits) | (x >> (64 - bits)); }

static inline uint64_t gr_sip_load_le64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, sizeof v);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

#define GR_SIP_ROUND(v0, v1, v2, v3) do {                                          \
        v0 += v1; v1 = gr_sip_rotl(v1, 13); v1 ^= v0; v0 = gr_sip_rotl(v0, 32);    \
        v2 += v3; v3 = gr_sip_rotl(v3, 16); v3 ^= v2;                              \
        v0 += v3; v3 = gr_sip_rotl(v3, 21); v3 ^= v0;                              \
        v2 += v1; v1 = gr_sip_rotl(v1, 17); v1 ^= v2; v2 = gr_sip_rotl(v2, 32);    \
    } while (0)

static inline uint64_t gr_siphash(const uint8_t *data, size_t length, uint64_t k0, uint64_t k1,
                                  int c_rounds, int d_rounds) {
    uint64_t v0 = 0x736f6d6570736575ULL ^ k0;
    uint64_t v1 = 0x646f72616e646f6dULL ^ k1;
    uint64_t v2 = 0x6c7967656e657261ULL ^ k0;
    uint64_t v3 = 0x7465646279746573ULL ^ k1;
    size_t i = 0;
    for (; i + 8 <= length; i += 8) {
        uint64_t m = gr_sip_load_le64(data + i);
        v3 ^= m;
        for (int r = 0; r < c_rounds; r++) GR_SIP_ROUND(v0, v1, v2, v3);
        v0 ^= m;
    }
    uint64_t last = (uint64_t)length << 56;
    size_t rest = length - i;
    if (rest && length >= 8)   /* the last 8 bytes in one load, the ones already hashed shifted out */
        last |= gr_sip_load_le64(data + length - 8) >> (8 * (8 - rest));
    else
        for (size_t j = 0; j < rest; j++) last |= (uint64_t)data[i + j] << (8 * j);
    v3 ^= last;
    for (int r = 0; r < c_rounds; r++) GR_SIP_ROUND(v0, v1, v2, v3);
    v0 ^= last;
    v2 ^= 0xff;
    for (int r = 0; r < d_rounds; r++) GR_SIP_ROUND(v0, v1, v2, v3);
    return v0 ^ v1 ^ v2 ^ v3;
}

#endif
