/* rdb_string.h — Redis's RDB encodings of a length (6, 14, 32 or 64 bits, big-endian, or a
 * special-encoding marker) and of a string (raw, an integer of 1, 2 or 4 bytes, or LZF
 * compressed), as redis-server writes them into RDB files and DUMP payloads. FUNCTION DUMP and
 * RESTORE use them today; reading Redis's RDB files will too. No goblin includes but core/. */
#ifndef GR_RDB_STRING_H
#define GR_RDB_STRING_H

#include <stddef.h>
#include <stdint.h>

#include "core/snapshot_io.h"

/* A length, written into w as Redis's rdbSaveLen does. */
void gr_rdb_write_length(gr_snapshot_writer_t *w, uint64_t length);

/* A cursor over bytes in Redis's encodings. */
typedef struct gr_rdb_reader {
    const uint8_t *data;
    size_t length, at;
} gr_rdb_reader_t;

/* A length: 0, with *encoded 1 when it is a special-encoding marker (then *length is its kind:
 * 0-2 an integer of 1, 2 or 4 bytes, 3 LZF); -1 when the bytes end first. */
int gr_rdb_read_length(gr_rdb_reader_t *r, uint64_t *length, int *encoded);
/* LZF (the compression RDB strings use): 0 with out filled to exactly out_length, or -1. */
int gr_lzf_expand(const uint8_t *in, size_t in_length, uint8_t *out, size_t out_length);
/* One RDB string, integers given back as their decimal text: 0 with *out malloc'ed (the caller
 * frees), or -1 (truncated, or an encoding it does not know). */
int gr_rdb_read_string(gr_rdb_reader_t *r, uint8_t **out, size_t *out_length);

#endif
