/* bitmap.h — bit operations over a byte string: the engine half of the bitmap commands
 * (SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD), whose command layer is
 * commands/cmd_bitmap.c. A bitmap is an ordinary string value (string_value.h); nothing is
 * stored here, these functions read and write the caller's bytes.
 *
 * Bit numbering is Redis's: bit 0 is the most significant bit of byte 0, so a string reads
 * as one long big-endian bit sequence. A bitfield of `bits` bits at bit `offset` spans at
 * most 9 bytes:
 *
 *      byte:      offset/8          offset/8+1   ...
 *               +-----------------+------------+---
 *      bits:    |. . . F F F F F F|F F F F . . .|
 *               +-----------------+------------+---
 *                 ^offset%8        ^ field continues, most significant bit first
 *
 * Reads treat bytes past the end as zero (the "infinite zero padding" of GETBIT, BITPOS and
 * BITFIELD GET); writes need the string already grown to hold the highest bit written.
 *
 * Counting uses the CPU's popcount instruction when it has one (checked once at run time),
 * 64-bit words otherwise; scans for a bit skip whole 64-bit words.
 */
#ifndef GR_BITMAP_H
#define GR_BITMAP_H

#include <stddef.h>
#include <stdint.h>

/* ---- Queries ---- */

/* Bits set in p[0..length). */
uint64_t gr_bits_count(const uint8_t *p, size_t length);
/* Position of the first bit equal to bit (0 or 1) in p[0..length): for bit 1, -1 when none
 * is set; for bit 0, length*8 when every bit is set (the right is zero padded). */
int64_t gr_bits_first(const uint8_t *p, size_t length, int bit);
/* The value of bit offset (0 past the end). */
static inline int gr_bits_get(const uint8_t *p, size_t length, uint64_t offset) {
    return (offset >> 3) < length ? (p[offset >> 3] >> (7 - (offset & 7))) & 1 : 0;
}

/* ---- Bitfields (1..64 bits; BITFIELD's i1..i64 and u1..u63) ---- */

/* The unsigned field of `bits` bits at bit offset (bytes past length read as zero). */
uint64_t gr_bits_field_get_unsigned(const uint8_t *p, size_t length, uint64_t offset, unsigned bits);
/* The same field read as two's complement. */
int64_t gr_bits_field_get_signed(const uint8_t *p, size_t length, uint64_t offset, unsigned bits);
/* Store the low `bits` bits of value at offset; p must hold byte (offset + bits - 1) / 8. */
void gr_bits_field_set(uint8_t *p, uint64_t offset, unsigned bits, uint64_t value);

/* Overflow handling of BITFIELD's OVERFLOW WRAP|SAT|FAIL. */
typedef enum gr_bits_overflow { GR_BITS_WRAP = 0, GR_BITS_SAT = 1, GR_BITS_FAIL = 2 } gr_bits_overflow_t;
/* Whether value + increment fits an unsigned / signed field of `bits` bits: 0 it fits,
 * 1 overflow, -1 underflow. When it does not fit, *limit is what WRAP or SAT stores
 * (FAIL: unchanged). Redis's checkUnsignedBitfieldOverflow / checkSignedBitfieldOverflow. */
int gr_bits_unsigned_overflow(uint64_t value, int64_t increment, unsigned bits, gr_bits_overflow_t mode,
                              uint64_t *limit);
int gr_bits_signed_overflow(int64_t value, int64_t increment, unsigned bits, gr_bits_overflow_t mode,
                            int64_t *limit);

/* ---- Bulk ---- */

typedef enum gr_bits_op { GR_BITS_AND = 0, GR_BITS_OR = 1, GR_BITS_XOR = 2, GR_BITS_NOT = 3 } gr_bits_op_t;
/* BITOP: out[0..out_length) = op over sources[0..count) (lengths[i] bytes each, shorter ones
 * zero padded). NOT takes one source. out_length is the longest source's length. */
void gr_bits_op(gr_bits_op_t op, const uint8_t *const *sources, const size_t *lengths, size_t count, uint8_t *out,
                size_t out_length);

#endif
