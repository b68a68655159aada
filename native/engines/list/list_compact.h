/* list_compact.h — the compact list engine: a small list as one packed buffer of
 * length-prefixed values, like Redis's listpack ("listpack" in OBJECT ENCODING). The
 * implementation is list_compact.c; list.c holds a compact list until it crosses the
 * thresholds in gr_list_config_t and then converts it to the segmented engine (list_seg.h).
 * Only list.c uses this header; the command layer sees gr_list_* alone.
 *
 * Memory layout
 * -------------
 * One allocation, grown with realloc (25% headroom, shrunk when half empty). Entries are
 * packed back to back; each one can be stepped over from either side:
 *
 *     buffer                                                           bytes   capacity
 *     +-------------------------+-----------------+-----+--------------+--------+
 *     | entry 0                 | entry 1         | ... | entry n-1    | unused |
 *     +-------------------------+-----------------+-----+--------------+--------+
 *
 *     entry = [ length : varint ][ value bytes ][ back : reversed varint ]
 *
 *   length  LEB128: 7 bits a byte, low bits first, 0x80 = "another byte follows".
 *   back    the size of length+value, written so that it reads from its LAST byte
 *           backwards (the last byte holds the low 7 bits; 0x80 = "another byte before").
 *           It is what makes backward iteration and the tail pop O(1), as listpack's
 *           backlen does. A 16-byte value costs 1 + 16 + 1 = 18 bytes.
 *
 * Index access walks from the nearer end: O(n), and n is at most compact_max_entries
 * (128 by default), as in Redis. Value pointers handed out point into the buffer and stay
 * valid until the next mutation. Values passed in must not point into the same list.
 */
#ifndef GR_LIST_COMPACT_H
#define GR_LIST_COMPACT_H

#include <stddef.h>
#include <stdint.h>

/* Largest value the engine stores (its lengths are 32-bit); longer pushes fail with -1. */
#define GR_LCOMPACT_MAX_VALUE 0xFFFFFF00u

typedef struct gr_lcompact {
    uint8_t *buffer;     /* NULL while empty and never grown */
    uint32_t bytes;      /* bytes of entries */
    uint32_t count;      /* entries */
    uint32_t capacity;   /* usable bytes of buffer */
} gr_lcompact_t;

/* A cursor; see gr_lcompact_iter_init. Invalidated by any mutation. */
typedef struct gr_lcompact_iter {
    const uint8_t *buffer;
    uint32_t offset;       /* forward: start of the next entry; backward: end of it */
    uint32_t remaining;    /* values still to return */
    int backward;
} gr_lcompact_iter_t;

/* Lifecycle */
void gr_lcompact_init(gr_lcompact_t *list);      /* empty; allocates nothing */
void gr_lcompact_release(gr_lcompact_t *list);   /* frees the buffer; the list is empty again */

/* Access. `at_tail` is 0 for the head, 1 for the tail. Return 0, or -1 (out of range, or
 * out of memory with the list unchanged). */
int gr_lcompact_get(const gr_lcompact_t *list, size_t index, const uint8_t **data, size_t *length);
int gr_lcompact_peek(const gr_lcompact_t *list, int at_tail, const uint8_t **data, size_t *length);
int gr_lcompact_push(gr_lcompact_t *list, int at_tail, const uint8_t *data, size_t length);
int gr_lcompact_pop(gr_lcompact_t *list, int at_tail);
int gr_lcompact_set(gr_lcompact_t *list, size_t index, const uint8_t *data, size_t length);
int gr_lcompact_insert(gr_lcompact_t *list, size_t index, const uint8_t *data, size_t length);
int gr_lcompact_delete_range(gr_lcompact_t *list, size_t start, size_t count);   /* clamps */

/* Iteration from start_index (inclusive), forward or backward; next returns 1 with a value
 * or 0 when done. A start_index past the end yields nothing. */
void gr_lcompact_iter_init(gr_lcompact_iter_t *iter, const gr_lcompact_t *list, size_t start_index,
                           int backward);
int gr_lcompact_iter_next(gr_lcompact_iter_t *iter, const uint8_t **data, size_t *length);

/* Queries */
size_t gr_lcompact_length(const gr_lcompact_t *list);
size_t gr_lcompact_bytes(const gr_lcompact_t *list);             /* bytes of entries */
size_t gr_lcompact_allocated_bytes(const gr_lcompact_t *list);   /* the buffer's usable size */
size_t gr_lcompact_entry_size(size_t length);   /* buffer bytes one value of that length takes */
int gr_lcompact_check(const gr_lcompact_t *list);   /* 0 when every invariant holds, else -1 */

/* Bulk */
/* Redis LREM: count > 0 removes the first count matches from the head, < 0 the last |count|
 * from the tail, 0 all of them. Returns how many were removed. Never allocates. */
int64_t gr_lcompact_remove_matching(gr_lcompact_t *list, const uint8_t *data, size_t length, int64_t count);

#endif
