/* fragment.h — messages larger than one ring record, carried in fragments and reassembled.
 *
 * A ring record holds at most max_message_length bytes (capacity / 8). A larger SBE message
 * (RPUSH of 100,000 values, a 100 MB SET or GET) is cut, as Aeron cuts a large message into
 * fragments, into records of type GR_FRAGMENT_TYPE, each with a 16-byte header:
 *
 *      0             4             8                             16
 *     +-------------+-------------+-----------------------------+----------------------+
 *     | template u32| flags u32   | total_length u64            | the message's bytes  |
 *     +-------------+-------------+-----------------------------+----------------------+
 *     flags: GR_FRAGMENT_BEGIN on the first, GR_FRAGMENT_END on the last (a message is
 *     never cut into one fragment: that would be a plain record).
 *
 * GR_FRAGMENT_TYPE is above every template id (a uint16), so a reader tells the two apart by
 * the record type alone. Both directions use this file: the client's requests and the
 * server's replies. The writer is resumable: a full ring stops it between fragments and the
 * next call goes on from there. The reader checks every fragment against the announced total
 * and a limit the caller sets (client-query-buffer-limit on the server), so a peer cannot
 * make it allocate more, read past a record, or splice two messages together.
 */
#ifndef GR_FRAGMENT_H
#define GR_FRAGMENT_H

#include <stddef.h>
#include <stdint.h>

#include "ring/ring.h"

/* cffi-cdef-begin: everything up to cffi-cdef-end is also read by native/build_ffi.py. */
#define GR_FRAGMENT_TYPE 65536
#define GR_FRAGMENT_HEADER_LENGTH 16
#define GR_FRAGMENT_BEGIN 1
#define GR_FRAGMENT_END 2
/* cffi-cdef-end */

/* Write one message: a plain record if it fits, else fragments. *sent (0 before the first
 * call for a message) counts the message bytes already in the ring; OK once all are, FULL if
 * the ring filled part way (call again with the same *sent once it has room), or TOO_LARGE /
 * INVALID from the ring. */
gr_ring_status_t gr_fragment_write(gr_ring_t *ring, uint16_t template_id, const uint8_t *message, size_t length,
                                   size_t *sent);

typedef enum gr_reassembly_status {
    GR_REASSEMBLY_MORE = 0,       /* a fragment taken; the message is not complete */
    GR_REASSEMBLY_COMPLETE = 1,   /* the message is in buffer[0 .. length) */
    GR_REASSEMBLY_TOO_LARGE = 2,  /* the message (now fully skipped) was over the limit */
    GR_REASSEMBLY_BROKEN = 3,     /* a fragment that does not continue the message, or bad header */
    GR_REASSEMBLY_NO_MEMORY = 4
} gr_reassembly_status_t;

typedef struct gr_reassembly {
    uint8_t *buffer;
    size_t capacity;
    size_t length;            /* bytes gathered so far */
    uint64_t total;           /* the announced length */
    uint16_t template_id;
    int active;               /* a BEGIN was taken and its END not yet */
    int skipping;             /* over the limit: fragments are counted, not kept */
    uint64_t limit;           /* the largest message accepted (0: no limit) */
} gr_reassembly_t;

/* Take one GR_FRAGMENT_TYPE record's payload. */
gr_reassembly_status_t gr_reassembly_take(gr_reassembly_t *reassembly, const uint8_t *payload, size_t length);
/* Does this payload end a message (its END fragment)? For readers that must not finish a
 * message yet (a parked session) but may keep gathering. */
int gr_fragment_is_end(const uint8_t *payload, size_t length);
/* Forget a partial message (a plain record arrived in the middle: the writer gave up). */
void gr_reassembly_reset(gr_reassembly_t *reassembly);
void gr_reassembly_free(gr_reassembly_t *reassembly);
/* Drop a large buffer kept from an earlier message, keeping at most `keep` bytes. */
void gr_reassembly_trim(gr_reassembly_t *reassembly, size_t keep);

#endif
