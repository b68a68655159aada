/* hash_compact.h — the compact hash map: a small map of byte-string fields to byte-string
 * values as one packed buffer, like Redis's listpack ("listpack" in OBJECT ENCODING). The
 * implementation is hash_compact.c; hash.c holds a hash in this encoding until it crosses
 * hash-max-listpack-entries / -value and then moves it to the table encoding. Only hash.c
 * uses this header; the command layer sees gr_hash_* alone.
 *
 * Memory layout
 * -------------
 * One allocation, grown with realloc (25% headroom, shrunk when half empty). Pairs are
 * packed back to back in insertion order (a replaced value keeps its pair's place, as a
 * listpack's does):
 *
 *     buffer                                                          bytes   capacity
 *     +-----------------------------+---------------------+-----+------+--------+
 *     | pair 0                      | pair 1              | ... |      | unused |
 *     +-----------------------------+---------------------+-----+------+--------+
 *
 *     pair = [ field length : varint ][ field bytes ][ value length : varint ][ value bytes ]
 *
 *   lengths are LEB128 (core/varint.h): a 16-byte field and a 16-byte value cost 34 bytes.
 *
 * Lookups walk the pairs: O(n), and n is at most hash-max-listpack-entries (128 by
 * default), as in Redis. Pointers handed out point into the buffer and stay valid until the
 * next mutation. Fields and values passed in must not point into the same map.
 */
#ifndef GR_HASH_COMPACT_H
#define GR_HASH_COMPACT_H

#include <stddef.h>
#include <stdint.h>

#include "core/alloc.h"

/* The memory category every hash allocation counts under (GOBLIN.MEMORY's "hash" row): the
 * second free number (sets take the first). */
#define GR_MEM_HASH ((gr_mem_category_t)(GR_MEM_FIRST_FREE + 1))

/* The largest field or value the encoding stores (lengths are 32-bit). */
#define GR_HCOMPACT_MAX_LENGTH 0x7FFFFF00u

typedef struct gr_hcompact {
    uint8_t *buffer;     /* NULL while empty and never grown */
    uint32_t bytes;      /* bytes of pairs */
    uint32_t count;      /* pairs */
    uint32_t capacity;   /* usable bytes of buffer */
} gr_hcompact_t;

/* One pair as stored: pointers into the buffer. */
typedef struct gr_hcompact_pair {
    const uint8_t *field;
    size_t field_length;
    const uint8_t *value;
    size_t value_length;
} gr_hcompact_pair_t;

/* Lifecycle */
void gr_hcompact_init(gr_hcompact_t *map);      /* empty; allocates nothing */
void gr_hcompact_release(gr_hcompact_t *map);   /* frees the buffer; the map is empty again */
/* A copy: 0, or -1 out of memory (copy left empty). */
int gr_hcompact_copy(gr_hcompact_t *copy, const gr_hcompact_t *map);

/* Access */
/* 1 found (*pair filled), 0 absent. */
int gr_hcompact_get(const gr_hcompact_t *map, const uint8_t *field, size_t field_length, gr_hcompact_pair_t *pair);
/* 1 added (at the end), 0 replaced (in place), -1 out of memory or too long (unchanged). */
int gr_hcompact_set(gr_hcompact_t *map, const uint8_t *field, size_t field_length, const uint8_t *value,
                    size_t value_length);
/* 1 removed, 0 absent. */
int gr_hcompact_delete(gr_hcompact_t *map, const uint8_t *field, size_t field_length);

/* Iteration: start at offset 0; next fills *pair and advances *offset, 0 at the end. */
int gr_hcompact_next(const gr_hcompact_t *map, uint32_t *offset, gr_hcompact_pair_t *pair);
/* The index-th pair (0-based, in order): 1, or 0 past the end. O(index). */
int gr_hcompact_at(const gr_hcompact_t *map, size_t index, gr_hcompact_pair_t *pair);

/* Queries */
size_t gr_hcompact_count(const gr_hcompact_t *map);
size_t gr_hcompact_allocated_bytes(const gr_hcompact_t *map);   /* the buffer's usable size */
/* 0 when every invariant holds (lengths walk to bytes, count pairs), else -1. */
int gr_hcompact_check(const gr_hcompact_t *map);

#endif
