/* snapshot_io.h — the byte encoding every value type's save and load hooks use (the rows of
 * exec/value_type.c), for DUMP/RESTORE payloads and whole snapshot files (persist/snapshot.c).
 * The implementation is snapshot_io.c; it knows nothing of types, keys or commands.
 *
 * A writer is a growable byte buffer; a reader is a bounded cursor over bytes that may be
 * corrupt or truncated (RESTORE takes them from a client). The primitives:
 *
 *     u8          1 byte
 *     u16/u32/u64 fixed width, little-endian
 *     double      the IEEE-754 bits as a u64 (NaN and infinities round-trip exactly)
 *     varint      LEB128, 7 bits a byte, low bits first (as core/varint.h), at most 10 bytes;
 *                 a reader refuses overlong and overflowing forms
 *     bytes       varint length, then that many bytes
 *
 * Errors are sticky on both sides. A writer that fails to grow sets `oom`, and every later
 * write returns -1 and writes nothing, so a save hook may check once at the end. A reader
 * that meets a short or malformed field records an error text and the offset of the field,
 * and every later read fails too; a load hook that finds the bytes well-formed but the value
 * impossible (members out of order, a count that disagrees) calls gr_snapshot_reader_fail.
 *
 * What a save hook writes is the type's own business (its format version goes inside if it
 * needs one). A load hook must read exactly what save wrote, allocate only what the bytes
 * can hold (gr_snapshot_read_count bounds a count by the bytes left), and free everything it
 * built before returning NULL.
 *
 * The sealed envelope (DUMP's payload; a snapshot file ends the same way): the body, a u16 format
 * version and a u64 CRC-64 over body and version (Redis's CRC-64/Jones, reflected,
 * polynomial 0xad93d23594c935a9; "123456789" -> 0xe9c6d914c4b8d9ca), as Redis's DUMP lays
 * out its RDB version and checksum.
 */
#ifndef GR_SNAPSHOT_IO_H
#define GR_SNAPSHOT_IO_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/alloc.h"

/* ---- writing ---- */

typedef struct gr_snapshot_writer {
    uint8_t *data;        /* gr_mem_alloc'd under `category`; NULL until the first write */
    size_t length;        /* bytes written */
    size_t capacity;
    int oom;              /* set once an allocation failed; every later write returns -1 */
    gr_mem_category_t category;
} gr_snapshot_writer_t;

/* Lifecycle */
void gr_snapshot_writer_init(gr_snapshot_writer_t *w, gr_mem_category_t category);
void gr_snapshot_writer_release(gr_snapshot_writer_t *w);   /* frees the buffer; init again to reuse */

/* Writes: 0, or -1 when out of memory (then `oom` is set and nothing was written). */
int gr_snapshot_write_u8(gr_snapshot_writer_t *w, uint8_t value);
int gr_snapshot_write_u16(gr_snapshot_writer_t *w, uint16_t value);
int gr_snapshot_write_u32(gr_snapshot_writer_t *w, uint32_t value);
int gr_snapshot_write_u64(gr_snapshot_writer_t *w, uint64_t value);
int gr_snapshot_write_double(gr_snapshot_writer_t *w, double value);
int gr_snapshot_write_varint(gr_snapshot_writer_t *w, uint64_t value);
int gr_snapshot_write_bytes(gr_snapshot_writer_t *w, const uint8_t *data, size_t length);  /* varint length + data */
int gr_snapshot_write_raw(gr_snapshot_writer_t *w, const uint8_t *data, size_t length);    /* data only */
/* Room for `length` more bytes, counted as written: the caller fills them before the next
 * write. NULL when out of memory. For bulk copies of an engine's packed arrays. */
uint8_t *gr_snapshot_write_space(gr_snapshot_writer_t *w, size_t length);
/* Make room for `additional` more bytes at once (a hint; 0 or -1 on OOM). */
int gr_snapshot_writer_reserve(gr_snapshot_writer_t *w, size_t additional);

/* ---- reading ---- */

typedef struct gr_snapshot_reader {
    const uint8_t *data;  /* not owned */
    size_t length;
    size_t offset;        /* the next byte to read */
    const char *error;    /* NULL while every read succeeded; a static text otherwise */
    size_t error_offset;  /* where the failing field started */
} gr_snapshot_reader_t;

void gr_snapshot_reader_init(gr_snapshot_reader_t *r, const uint8_t *data, size_t length);

/* Reads: 0, or -1 with r->error set (and *out left untouched). */
int gr_snapshot_read_u8(gr_snapshot_reader_t *r, uint8_t *out);
int gr_snapshot_read_u16(gr_snapshot_reader_t *r, uint16_t *out);
int gr_snapshot_read_u32(gr_snapshot_reader_t *r, uint32_t *out);
int gr_snapshot_read_u64(gr_snapshot_reader_t *r, uint64_t *out);
int gr_snapshot_read_double_any(gr_snapshot_reader_t *r, double *out);
int gr_snapshot_read_varint_any(gr_snapshot_reader_t *r, uint64_t *out);
/* A length-prefixed field: *data points into the reader's bytes (valid as long as they are). */
int gr_snapshot_read_bytes_any(gr_snapshot_reader_t *r, const uint8_t **data, size_t *length);
/* The two reads every element of a load makes: a one-byte varint (below 128, the usual count,
 * length or shared prefix) is taken inline; anything else, and every error, goes through the
 * _any form, which checks it in full. */
static inline int gr_snapshot_read_varint(gr_snapshot_reader_t *r, uint64_t *out) {
    if (!r->error && r->offset < r->length && r->data[r->offset] < 0x80) {
        *out = r->data[r->offset++];
        return 0;
    }
    return gr_snapshot_read_varint_any(r, out);
}
/* A score: 8 bytes little-endian, taken inline when they are there. */
static inline int gr_snapshot_read_double(gr_snapshot_reader_t *r, double *out) {
    if (!r->error && r->length - r->offset >= 8) {
        uint64_t bits;
        memcpy(&bits, r->data + r->offset, sizeof bits);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        bits = __builtin_bswap64(bits);
#endif
        memcpy(out, &bits, sizeof *out);
        r->offset += 8;
        return 0;
    }
    return gr_snapshot_read_double_any(r, out);
}
static inline int gr_snapshot_read_bytes(gr_snapshot_reader_t *r, const uint8_t **data, size_t *length) {
    if (!r->error && r->offset < r->length) {
        const size_t n = r->data[r->offset];
        if (n < 0x80 && n < r->length - r->offset) {
            *data = r->data + r->offset + 1;
            *length = n;
            r->offset += 1 + n;
            return 0;
        }
    }
    return gr_snapshot_read_bytes_any(r, data, length);
}
/* `length` bytes with no prefix, pointed to as above. */
int gr_snapshot_read_raw(gr_snapshot_reader_t *r, size_t length, const uint8_t **data);
/* A varint element count, refused ("count larger than the payload") when `count *
 * min_bytes_per_item` exceeds the bytes left, so a corrupt count never sizes an allocation.
 * min_bytes_per_item 0 means 1. */
int gr_snapshot_read_count(gr_snapshot_reader_t *r, size_t min_bytes_per_item, uint64_t *out);

/* Queries */
static inline size_t gr_snapshot_reader_remaining(const gr_snapshot_reader_t *r) {
    return r->error ? 0 : r->length - r->offset;
}
/* Record a load hook's own error at the current offset (the first error is kept); returns -1. */
int gr_snapshot_reader_fail(gr_snapshot_reader_t *r, const char *error);

/* ---- the sealed envelope and its checksum ---- */

/* CRC-64/Jones continued from `crc` (start with 0) over `length` bytes. */
uint64_t gr_crc64(uint64_t crc, const uint8_t *data, size_t length);

/* Append the u16 version and the u64 CRC-64 of everything written so far: 0, or -1 on OOM. */
int gr_snapshot_seal(gr_snapshot_writer_t *w, uint16_t version);
/* Check a sealed payload: 0 and a reader over its body (version and checksum excluded) with
 * *version set; -1 when it is shorter than the trailer or the checksum disagrees. */
int gr_snapshot_unseal(const uint8_t *data, size_t length, uint16_t *version, gr_snapshot_reader_t *body);

#endif
