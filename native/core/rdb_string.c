/* rdb_string.c — Redis's RDB encodings of lengths and strings (rdb_string.h). */
#include "core/rdb_string.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gr_rdb_write_length(gr_snapshot_writer_t *w, uint64_t length) {
    if (length < 64) {
        gr_snapshot_write_u8(w, (uint8_t)length);
    } else if (length < 16384) {
        gr_snapshot_write_u8(w, (uint8_t)(0x40 | (length >> 8)));
        gr_snapshot_write_u8(w, (uint8_t)(length & 0xFF));
    } else if (length <= UINT32_MAX) {
        gr_snapshot_write_u8(w, 0x80);
        for (int shift = 24; shift >= 0; shift -= 8) gr_snapshot_write_u8(w, (uint8_t)(length >> shift));
    } else {
        gr_snapshot_write_u8(w, 0x81);
        for (int shift = 56; shift >= 0; shift -= 8) gr_snapshot_write_u8(w, (uint8_t)(length >> shift));
    }
}

int gr_rdb_read_length(gr_rdb_reader_t *r, uint64_t *length, int *encoded) {
    *encoded = 0;
    if (r->at >= r->length) return -1;
    uint8_t first = r->data[r->at++];
    switch (first >> 6) {
    case 0: *length = first & 0x3F; return 0;
    case 1:
        if (r->at >= r->length) return -1;
        *length = ((uint64_t)(first & 0x3F) << 8) | r->data[r->at++];
        return 0;
    case 3: *encoded = 1; *length = first & 0x3F; return 0;
    default: {
        int bytes = first == 0x80 ? 4 : first == 0x81 ? 8 : 0;
        if (!bytes || r->length - r->at < (size_t)bytes) return -1;
        uint64_t value = 0;
        for (int i = 0; i < bytes; i++) value = (value << 8) | r->data[r->at++];
        *length = value;
        return 0;
    }
    }
}

int gr_lzf_expand(const uint8_t *in, size_t in_length, uint8_t *out, size_t out_length) {
    size_t i = 0, o = 0;
    while (i < in_length) {
        unsigned control = in[i++];
        if (control < 32) {                          /* a literal run of control + 1 bytes */
            size_t run = control + 1;
            if (i + run > in_length || o + run > out_length) return -1;
            memcpy(out + o, in + i, run);
            i += run, o += run;
        } else {                                     /* a back reference */
            size_t run = control >> 5;
            if (run == 7) {
                if (i >= in_length) return -1;
                run += in[i++];
            }
            if (i >= in_length) return -1;
            size_t back = ((control & 0x1F) << 8) + in[i++] + 1;
            run += 2;
            if (back > o || o + run > out_length) return -1;
            for (size_t k = 0; k < run; k++, o++) out[o] = out[o - back];   /* may overlap: byte by byte */
        }
    }
    return o == out_length ? 0 : -1;
}

int gr_rdb_read_string(gr_rdb_reader_t *r, uint8_t **out, size_t *out_length) {
    uint64_t length;
    int encoded;
    if (gr_rdb_read_length(r, &length, &encoded) != 0) return -1;
    if (!encoded) {
        if (length > r->length - r->at) return -1;
        *out = malloc(length ? length : 1);
        if (!*out) return -1;
        memcpy(*out, r->data + r->at, length);
        *out_length = length;
        r->at += length;
        return 0;
    }
    if (length <= 2) {                                /* an integer in 1, 2 or 4 bytes, as text */
        int bytes = 1 << length;
        if (r->length - r->at < (size_t)bytes) return -1;
        int64_t value = 0;
        for (int i = 0; i < bytes; i++) value |= (int64_t)r->data[r->at + i] << (8 * i);
        if (bytes == 1) value = (int8_t)value;
        else if (bytes == 2) value = (int16_t)value;
        else value = (int32_t)value;
        r->at += bytes;
        *out = malloc(24);
        if (!*out) return -1;
        *out_length = (size_t)snprintf((char *)*out, 24, "%lld", (long long)value);
        return 0;
    }
    if (length != 3) return -1;                       /* 3: LZF */
    uint64_t compressed, plain;
    if (gr_rdb_read_length(r, &compressed, &encoded) != 0 || encoded || gr_rdb_read_length(r, &plain, &encoded) != 0 ||
        encoded || compressed > r->length - r->at || plain > ((uint64_t)1 << 32))
        return -1;
    *out = malloc(plain ? plain : 1);
    if (!*out) return -1;
    if (gr_lzf_expand(r->data + r->at, compressed, *out, plain) != 0) { free(*out); return -1; }
    r->at += compressed;
    *out_length = plain;
    return 0;
}
