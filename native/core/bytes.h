/* bytes.h — gr_bytes_t, a borrowed byte string (pointer + length), shared by every layer, and
 * the byte comparisons every layer that reads arguments needs (gr_word_is).
 *
 * It lives in core/ so that engines (the table engine hands entries out as gr_bytes_t) and
 * exec/ (requests, replies) name one type. Nothing here owns memory: who returns a gr_bytes_t
 * says how long its bytes stay valid.
 */
#ifndef GR_BYTES_H
#define GR_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

/* cffi-cdef-begin: read by native/build_ffi.py (exec/request.h's types use it). */
typedef struct gr_bytes {
    const uint8_t *data;
    uint32_t length;
} gr_bytes_t;
/* cffi-cdef-end */

/* memcpy for the short strings most values and keys are: up to 16 bytes as two overlapping
 * loads and stores, without a call (a call costs the caller its register saves around it, at
 * every element of a reply); longer ones through memcpy. */
static inline void gr_bytes_copy(uint8_t *to, const uint8_t *from, size_t length) {
    if (length > 16) {
        memcpy(to, from, length);
    } else if (length >= 8) {
        uint64_t head, tail;
        memcpy(&head, from, 8), memcpy(&tail, from + length - 8, 8);
        memcpy(to, &head, 8), memcpy(to + length - 8, &tail, 8);
    } else if (length >= 4) {
        uint32_t head, tail;
        memcpy(&head, from, 4), memcpy(&tail, from + length - 4, 4);
        memcpy(to, &head, 4), memcpy(to + length - 4, &tail, 4);
    } else if (length) {
        to[0] = from[0], to[length / 2] = from[length / 2], to[length - 1] = from[length - 1];
    }
}

/* 1 if the bytes equal word, ignoring ASCII case: an argument against a keyword ("count",
 * "MATCH", "withscores"). */
static inline int gr_word_is(const uint8_t *arg, size_t length, const char *word) {
    size_t n = strlen(word);
    return length == n && strncasecmp((const char *)arg, word, n) == 0;
}

#endif
