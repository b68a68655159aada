/* plain_reply.h — a ring reply written as the Python object it stands for, in the byte format
 * of Python's marshal module, so that RingClient turns any reply into Python objects with one
 * C call (goblin_ring._plain_loads.loads, native/python/plain_loads.c: these codes read in one
 * pass, any other left to marshal.loads) instead of per-element Python code.
 *
 * Only marshal's oldest, version-independent codes are written, with no back-references:
 *   'N' None   '.' Ellipsis   'i' int32   'l' long (15-bit digits)   's' bytes
 *   '[' list (int32 count)    ')' small tuple (uint8 count)
 * A reply maps as RingClient has always returned it (redis-py's RESP2 shapes): a bulk or
 * status is bytes, a nil bulk or nil array None, an integer an int, an array a list (a map a
 * flat list of its pairs). An error reply, an error inside an array, or a tree deeper than
 * GR_PLAIN_MAX_DEPTH is not written: the caller reads those from the gr_result_t.
 */
#ifndef GR_PLAIN_REPLY_H
#define GR_PLAIN_REPLY_H

#include <stddef.h>
#include <stdint.h>

#include "client/client.h"

#define GR_PLAIN_MAX_DEPTH 32

/* cffi-cdef-begin */
/* Writes `result` into out[0..capacity) and returns the bytes written, or the bytes it needs
 * (> capacity: nothing usable was written), or -1 for a reply it does not write (an error, an
 * error element, too deep). root_as_tuple: a root array of fewer than 256 elements is a tuple
 * (BLPOP's (key, value)). */
long gr_plain_reply_write(const gr_result_t *result, int root_as_tuple, uint8_t *out, size_t capacity);
/* The same, straight from an ArrayReply message (not decoded first): -1 also for a message
 * that does not decode (the caller then decodes it and reports why); *request_id is the
 * message's when the result is not -1. */
long gr_plain_reply_write_message(const uint8_t *message, size_t length, int root_as_tuple, uint8_t *out,
                                  size_t capacity, uint64_t *request_id);
/* cffi-cdef-end */

#endif
