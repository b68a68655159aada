/* varint.h — the LEB128 length prefix the list engines store before each value
 * (list_compact.c, list_seg.c, list_pma.c): 7 bits a byte, low bits first, the high bit set
 * on every byte but the last.
 */
#ifndef GR_VARINT_H
#define GR_VARINT_H

#include <stddef.h>
#include <stdint.h>

static inline uint32_t varint_size(size_t value) {
    uint32_t size = 1;
    while (value >= 0x80) { value >>= 7; size++; }
    return size;
}

static inline uint8_t *varint_put(uint8_t *p, size_t value) {
    while (value >= 0x80) { *p++ = (uint8_t)(value | 0x80); value >>= 7; }
    *p++ = (uint8_t)value;
    return p;
}

static inline const uint8_t *varint_get(const uint8_t *p, size_t *value) {
    if (*p < 0x80) { *value = *p; return p + 1; }
    size_t result = *p & 0x7f;
    unsigned shift = 7;
    while (*p++ & 0x80) { result |= (size_t)(*p & 0x7f) << shift; shift += 7; }
    *value = result;
    return p;
}

#endif
