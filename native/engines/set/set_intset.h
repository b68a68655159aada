/* set_intset.h — the integer-set encoding of a set ("intset" in OBJECT ENCODING): a sorted
 * array of distinct integers, every one stored at the width the widest member needs, as
 * Redis's intset.c. The implementation is set_intset.c; set.c holds a set of integers in it
 * until it passes set-max-intset-entries or a non-integer member arrives. Only set.c uses
 * this header; the command layer sees gr_set_* alone.
 *
 * Memory layout
 * -------------
 * The struct (count, capacity, width, and the array pointer) lives inside the set's own
 * struct (set.h); the values are one allocation, grown by realloc with 25% headroom:
 *
 *     values
 *     +-------------------------------------------+---------+
 *     | v0 | v1 | ... | v(count-1)   (ascending)  | unused  |
 *     +-------------------------------------------+---------+
 *       each `width` bytes: 2, 4 or 8, host order
 *
 * Every value is held at one width (int16, int32 or int64); adding a value that needs a
 * wider one rewrites the array at that width ("upgrade", as Redis does), and the width never
 * narrows. Membership is a binary search, add and remove a memmove: O(n) with n at most
 * set-max-intset-entries (512 by default).
 */
#ifndef GR_SET_INTSET_H
#define GR_SET_INTSET_H

#include <stddef.h>
#include <stdint.h>

#include "core/alloc.h"

typedef struct gr_intset {
    uint32_t count;
    uint32_t capacity;   /* values the array can hold at the current width */
    uint8_t width;       /* 2, 4 or 8 */
    uint8_t *values;     /* NULL until the first add */
} gr_intset_t;

/* Lifecycle */
void gr_intset_init(gr_intset_t *set);   /* empty; allocates nothing */
void gr_intset_release(gr_intset_t *set, gr_mem_category_t category);

/* Access: 1 added / removed / present, 0 not, -1 out of memory (set unchanged). */
int gr_intset_add(gr_intset_t *set, int64_t value, gr_mem_category_t category);
int gr_intset_remove(gr_intset_t *set, int64_t value);
int gr_intset_contains(const gr_intset_t *set, int64_t value);
int64_t gr_intset_get(const gr_intset_t *set, size_t index);   /* index < count */

/* Queries */
size_t gr_intset_allocated_bytes(const gr_intset_t *set);   /* the array's usable size */
int64_t gr_intset_min(const gr_intset_t *set);   /* count > 0 */
int64_t gr_intset_max(const gr_intset_t *set);
/* 0 when every invariant holds (a valid width, strictly ascending), else -1. */
int gr_intset_check(const gr_intset_t *set);

#endif
