/* string_value.h — the string engine: one binary-safe byte string per key.
 *
 * A string is one counted allocation (alloc.c, GR_MEM_STRING): a 32-bit length and the
 * bytes, no terminator. APPEND and SETRANGE grow it in place with doubling, like Redis's
 * sds greedy growth, so that repeated appends are amortised O(1). The command layer is
 * cmd_string.c; values are at most GR_STRING_MAX_LENGTH bytes (proto-max-bulk-len).
 */
#ifndef GR_STRING_VALUE_H
#define GR_STRING_VALUE_H

#include <stddef.h>
#include <stdint.h>

#define GR_STRING_MAX_LENGTH (512u * 1024 * 1024)

typedef struct gr_string {
    uint32_t length;
    uint8_t data[];
} gr_string_t;

/* A copy of data; NULL on OOM. */
gr_string_t *gr_string_new(const uint8_t *data, size_t length);
/* length zero bytes, allocated exactly (SETBIT on a new key, BITOP's result); NULL on OOM. */
gr_string_t *gr_string_new_zeroed(size_t length);
void gr_string_free(gr_string_t *s);
/* Makes room for new_length bytes (growing by doubling), zero-fills any new bytes up to
 * new_length and sets the length. Returns the (possibly moved) string, NULL on OOM (the
 * original is then unchanged). */
gr_string_t *gr_string_resize(gr_string_t *s, size_t new_length);
/* Bytes the allocator holds for it (MEMORY USAGE, INFO). */
size_t gr_string_allocated_bytes(const gr_string_t *s);
/* OBJECT ENCODING: "int" for a canonical int64 text, "embstr" up to 44 bytes, else "raw". */
const char *gr_string_encoding(const gr_string_t *s);

#endif
