/* sha256.h — SHA-256 (FIPS 180-4), for ACL passwords: Redis keeps a user's passwords as the
 * SHA-256 of each, shown in hex by ACL GETUSER / ACL LIST and given back with #<hash>.
 * Implemented in sha256.c from the standard's definition. */
#ifndef GR_SHA256_H
#define GR_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define GR_SHA256_BYTES 32

void gr_sha256(const uint8_t *data, size_t length, uint8_t out[GR_SHA256_BYTES]);

#endif
