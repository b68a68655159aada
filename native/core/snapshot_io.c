/* snapshot_io.c — the snapshot byte encoding (snapshot_io.h): a growable writer, a bounded
 * reader with sticky errors, CRC-64/Jones and the sealed (version + checksum) envelope.
 */
#include "core/snapshot_io.h"

#include <string.h>

/* ---- writing ---- */

void gr_snapshot_writer_init(gr_snapshot_writer_t *w, gr_mem_category_t category) {
    w->data = NULL;
    w->length = 0;
    w->capacity = 0;
    w->oom = 0;
    w->category = category;
}

void gr_snapshot_writer_release(gr_snapshot_writer_t *w) {
    gr_mem_free(w->data, w->category);
    w->data = NULL;
    w->length = 0;
    w->capacity = 0;
}

int gr_snapshot_writer_reserve(gr_snapshot_writer_t *w, size_t additional) {
    if (w->oom) return -1;
    if (additional <= w->capacity - w->length) return 0;
    if (additional > SIZE_MAX / 2 - w->length) { w->oom = 1; return -1; }
    size_t needed = w->length + additional;
    size_t capacity = w->capacity ? w->capacity : 64;
    while (capacity < needed) capacity *= 2;
    uint8_t *grown = gr_mem_realloc(w->data, capacity, w->category);
    if (!grown) { w->oom = 1; return -1; }
    w->data = grown;
    w->capacity = capacity;
    return 0;
}

uint8_t *gr_snapshot_write_space(gr_snapshot_writer_t *w, size_t length) {
    if (gr_snapshot_writer_reserve(w, length) != 0) return NULL;
    uint8_t *space = w->data + w->length;
    w->length += length;
    return space;
}

int gr_snapshot_write_raw(gr_snapshot_writer_t *w, const uint8_t *data, size_t length) {
    uint8_t *space = gr_snapshot_write_space(w, length);
    if (!space) return -1;
    if (length) memcpy(space, data, length);
    return 0;
}

/* `width` bytes of value, low byte first. */
static int write_le(gr_snapshot_writer_t *w, uint64_t value, unsigned width) {
    uint8_t *space = gr_snapshot_write_space(w, width);
    if (!space) return -1;
    for (unsigned i = 0; i < width; i++) space[i] = (uint8_t)(value >> (8 * i));
    return 0;
}

int gr_snapshot_write_u8(gr_snapshot_writer_t *w, uint8_t value) { return write_le(w, value, 1); }
int gr_snapshot_write_u16(gr_snapshot_writer_t *w, uint16_t value) { return write_le(w, value, 2); }
int gr_snapshot_write_u32(gr_snapshot_writer_t *w, uint32_t value) { return write_le(w, value, 4); }
int gr_snapshot_write_u64(gr_snapshot_writer_t *w, uint64_t value) { return write_le(w, value, 8); }

int gr_snapshot_write_double(gr_snapshot_writer_t *w, double value) {
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);
    return write_le(w, bits, 8);
}

int gr_snapshot_write_varint(gr_snapshot_writer_t *w, uint64_t value) {
    uint8_t encoded[10];
    size_t n = 0;
    while (value >= 0x80) { encoded[n++] = (uint8_t)(value | 0x80); value >>= 7; }
    encoded[n++] = (uint8_t)value;
    return gr_snapshot_write_raw(w, encoded, n);
}

int gr_snapshot_write_bytes(gr_snapshot_writer_t *w, const uint8_t *data, size_t length) {
    if (gr_snapshot_write_varint(w, length) != 0) return -1;
    return gr_snapshot_write_raw(w, data, length);
}

/* ---- reading ---- */

void gr_snapshot_reader_init(gr_snapshot_reader_t *r, const uint8_t *data, size_t length) {
    r->data = data;
    r->length = length;
    r->offset = 0;
    r->error = NULL;
    r->error_offset = 0;
}

static int fail_at(gr_snapshot_reader_t *r, size_t offset, const char *error) {
    if (!r->error) {
        r->error = error;
        r->error_offset = offset;
    }
    return -1;
}

int gr_snapshot_reader_fail(gr_snapshot_reader_t *r, const char *error) {
    return fail_at(r, r->offset, error);
}

int gr_snapshot_read_raw(gr_snapshot_reader_t *r, size_t length, const uint8_t **data) {
    if (r->error) return -1;
    if (length > r->length - r->offset) return fail_at(r, r->offset, "truncated payload");
    *data = r->data + r->offset;
    r->offset += length;
    return 0;
}

static int read_le(gr_snapshot_reader_t *r, unsigned width, uint64_t *out) {
    const uint8_t *p;
    if (gr_snapshot_read_raw(r, width, &p) != 0) return -1;
    uint64_t value = 0;
    for (unsigned i = 0; i < width; i++) value |= (uint64_t)p[i] << (8 * i);
    *out = value;
    return 0;
}

int gr_snapshot_read_u8(gr_snapshot_reader_t *r, uint8_t *out) {
    uint64_t v;
    if (read_le(r, 1, &v) != 0) return -1;
    *out = (uint8_t)v;
    return 0;
}

int gr_snapshot_read_u16(gr_snapshot_reader_t *r, uint16_t *out) {
    uint64_t v;
    if (read_le(r, 2, &v) != 0) return -1;
    *out = (uint16_t)v;
    return 0;
}

int gr_snapshot_read_u32(gr_snapshot_reader_t *r, uint32_t *out) {
    uint64_t v;
    if (read_le(r, 4, &v) != 0) return -1;
    *out = (uint32_t)v;
    return 0;
}

int gr_snapshot_read_u64(gr_snapshot_reader_t *r, uint64_t *out) { return read_le(r, 8, out); }

int gr_snapshot_read_double_any(gr_snapshot_reader_t *r, double *out) {
    uint64_t bits;
    if (read_le(r, 8, &bits) != 0) return -1;
    memcpy(out, &bits, sizeof *out);
    return 0;
}

int gr_snapshot_read_varint_any(gr_snapshot_reader_t *r, uint64_t *out) {
    if (r->error) return -1;
    const size_t start = r->offset;
    uint64_t value = 0;
    for (unsigned i = 0; i < 10; i++) {
        if (r->offset >= r->length) return fail_at(r, start, "truncated payload");
        const uint8_t byte = r->data[r->offset++];
        /* the tenth byte holds bit 63 only */
        if (i == 9 && byte > 1) return fail_at(r, start, "varint overflows 64 bits");
        value |= (uint64_t)(byte & 0x7f) << (7 * i);
        if (!(byte & 0x80)) {
            if (byte == 0 && i > 0) return fail_at(r, start, "overlong varint");
            *out = value;
            return 0;
        }
    }
    return fail_at(r, start, "varint overflows 64 bits");   /* not reached: i == 9 caught it */
}

int gr_snapshot_read_bytes_any(gr_snapshot_reader_t *r, const uint8_t **data, size_t *length) {
    const size_t start = r->offset;
    uint64_t n;
    if (gr_snapshot_read_varint(r, &n) != 0) return -1;
    if (n > r->length - r->offset) return fail_at(r, start, "truncated payload");
    *length = (size_t)n;
    return gr_snapshot_read_raw(r, (size_t)n, data);
}

int gr_snapshot_read_count(gr_snapshot_reader_t *r, size_t min_bytes_per_item, uint64_t *out) {
    const size_t start = r->offset;
    uint64_t n;
    if (gr_snapshot_read_varint(r, &n) != 0) return -1;
    if (min_bytes_per_item == 0) min_bytes_per_item = 1;
    if (n > (r->length - r->offset) / min_bytes_per_item) return fail_at(r, start, "count larger than the payload");
    *out = n;
    return 0;
}

/* ---- CRC-64/Jones (reflected, polynomial 0xad93d23594c935a9, init 0, no final xor) ---- */

static uint64_t crc_table[8][256];
static int crc_table_ready;

/* Slicing-by-8 tables, built on first use (single-threaded server; idempotent anyway). */
static void crc_build(void) {
    const uint64_t poly = 0x95ac9329ac4bc9b5ull;   /* 0xad93d23594c935a9 bit-reversed */
    for (unsigned n = 0; n < 256; n++) {
        uint64_t crc = n;
        for (int k = 0; k < 8; k++) crc = (crc & 1) ? (crc >> 1) ^ poly : crc >> 1;
        crc_table[0][n] = crc;
    }
    for (unsigned n = 0; n < 256; n++)
        for (int k = 1; k < 8; k++)
            crc_table[k][n] = crc_table[0][crc_table[k - 1][n] & 0xff] ^ (crc_table[k - 1][n] >> 8);
    crc_table_ready = 1;
}

uint64_t gr_crc64(uint64_t crc, const uint8_t *data, size_t length) {
    if (!crc_table_ready) crc_build();
    while (length >= 8) {
        uint64_t word = 0;
        for (int i = 0; i < 8; i++) word |= (uint64_t)data[i] << (8 * i);
        crc ^= word;
        crc = crc_table[7][crc & 0xff] ^ crc_table[6][(crc >> 8) & 0xff] ^
              crc_table[5][(crc >> 16) & 0xff] ^ crc_table[4][(crc >> 24) & 0xff] ^
              crc_table[3][(crc >> 32) & 0xff] ^ crc_table[2][(crc >> 40) & 0xff] ^
              crc_table[1][(crc >> 48) & 0xff] ^ crc_table[0][crc >> 56];
        data += 8;
        length -= 8;
    }
    while (length--) crc = crc_table[0][(crc ^ *data++) & 0xff] ^ (crc >> 8);
    return crc;
}

/* ---- the sealed envelope ---- */

int gr_snapshot_seal(gr_snapshot_writer_t *w, uint16_t version) {
    if (gr_snapshot_write_u16(w, version) != 0) return -1;
    const uint64_t crc = gr_crc64(0, w->data, w->length);
    return gr_snapshot_write_u64(w, crc);
}

int gr_snapshot_unseal(const uint8_t *data, size_t length, uint16_t *version, gr_snapshot_reader_t *body) {
    if (length < 10) return -1;
    const size_t body_length = length - 10;
    uint64_t stored = 0;
    for (int i = 0; i < 8; i++) stored |= (uint64_t)data[length - 8 + i] << (8 * i);
    if (gr_crc64(0, data, length - 8) != stored) return -1;
    *version = (uint16_t)(data[body_length] | (data[body_length + 1] << 8));
    gr_snapshot_reader_init(body, data, body_length);
    return 0;
}
