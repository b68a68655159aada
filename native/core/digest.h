/* digest.h — SHA-1 and the order-independent value digests DEBUG DIGEST and DEBUG
 * DIGEST-VALUE report (the value types' digest hooks, exec/value_type.h), computed the way
 * Redis's debug.c computes them, so that a keyspace's digest is the same on goblin and on
 * redis-server for the same data. The implementation is digest.c.
 *
 *   gr_digest_xor(d, bytes)   d ^= SHA1(bytes)            order-independent: members of a set
 *   gr_digest_mix(d, bytes)   d = SHA1(d ^ SHA1(bytes))   order-dependent: elements of a list
 *
 * A value's digest starts from 20 zero bytes, mixes in its Redis type number (big-endian u32:
 * string 0, list 1, set 2, zset 3, hash 4) and then its contents; a key's digest mixes the key
 * name first and, when the key has an expiry, xors in "!!expire!!"; the keyspace's digest xors
 * every key's digest after mixing in each non-empty database's index.
 */
#ifndef GR_DIGEST_H
#define GR_DIGEST_H

#include <stddef.h>
#include <stdint.h>

#define GR_DIGEST_BYTES 20

/* Redis's type numbers, as the digest mixes them in. */
enum { GR_DIGEST_STRING = 0, GR_DIGEST_LIST = 1, GR_DIGEST_SET = 2, GR_DIGEST_ZSET = 3, GR_DIGEST_HASH = 4,
       GR_DIGEST_STREAM = 6 };
/* Arrays: not a Redis 7.0 type; goblin's own number, past Redis's stream (6) and module (5). */
enum { GR_DIGEST_ARRAY = 16 };

/* SHA-1 of length bytes. */
void gr_sha1(const uint8_t *data, size_t length, uint8_t out[GR_DIGEST_BYTES]);

void gr_digest_xor(uint8_t digest[GR_DIGEST_BYTES], const void *data, size_t length);
void gr_digest_mix(uint8_t digest[GR_DIGEST_BYTES], const void *data, size_t length);
/* Mix in a type number as a big-endian u32 (the first step of every value's digest). */
void gr_digest_mix_type(uint8_t digest[GR_DIGEST_BYTES], uint32_t redis_type);
/* Mix in a score as Redis 7.0 prints it for the digest ("%.17g"). */
void gr_digest_mix_score(uint8_t digest[GR_DIGEST_BYTES], double score);
/* 40 lowercase hex digits and a NUL. */
void gr_digest_hex(const uint8_t digest[GR_DIGEST_BYTES], char out[2 * GR_DIGEST_BYTES + 1]);

#endif
