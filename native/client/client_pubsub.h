/* client_pubsub.h — the ring client as a Pub/Sub subscriber: what RingClient.pubsub() reads.
 *
 * A subscribed session's reply ring carries two things in the server's order: PushMessages
 * (schema/goblin.xml template 15: a message, pmessage or smessage, written by the server's
 * ring/session.c the moment PUBLISH runs) and ordinary replies — the (un)subscribe
 * confirmations, one ArrayReply [kind, name, count] per name, all with their request's id, and
 * the replies of anything else the session sends (PING). gr_client_pubsub_read drains both in
 * one C call and writes them, in order, as one list in marshal's format (plain_reply.h), so
 * that Python builds a whole batch with one plain_loads:
 *
 *   a PushMessage -> redis-py's message dict
 *                    {'type': 'message' | 'pmessage' | 'smessage', 'pattern': bytes | None,
 *                     'channel': bytes, 'data': bytes}
 *   a reply       -> ('reply', value)        value as a plain call returns it (a list, bytes, int)
 *   an error      -> ('error', code, text)   an ErrorReply (or an array holding one)
 *
 * A PushMessage that an ordinary call (client.c's reply wait) meets before its reply is not
 * lost: client.c stashes it (client_pubsub_state.h), and the next read returns the stashed
 * ones first, so the order the server wrote is the order the reader sees. This reader builds
 * on client.c (client.h's reader section); client.c does not call into it.
 */
#ifndef GR_CLIENT_PUBSUB_H
#define GR_CLIENT_PUBSUB_H

#include <stddef.h>
#include <stdint.h>

#include "client/client.h"
#include "ring/ring.h"

/* cffi-cdef-begin */
/* Read up to max_count items (max_count >= 1) into out[0..capacity) as one marshal'd list.
 * Waits up to timeout_ns for the first item (0: do not wait; < 0: until one arrives or the
 * server is gone); never waits for more after one is taken. Returns the bytes written (an
 * empty list when nothing came within the timeout), or, when even the first item does not fit,
 * the capacity it needs, negated minus one (-(needed) - 1; nothing is consumed: call again with
 * a larger buffer). *status is a gr_client_status (PEER_GONE, PROTOCOL, NO_MEMORY) or 0;
 * *count the items written. */
long gr_client_pubsub_read(gr_client_t *client, size_t max_count, int64_t timeout_ns, uint8_t *out,
                           size_t capacity, uint32_t *count, int *status);
/* Items read by this client so far: PushMessages and replies (tests, the bench's checks). */
uint64_t gr_client_pubsub_messages(const gr_client_t *client);

/* The bench's C loops (goblin-ring-bench pubsub, native column). take_sequenced: up to
 * max_count PushMessages (it stops at any other record, left in the ring), waiting up to
 * timeout_ns for the first; each payload must begin with its sequence number as 10 decimal
 * digits, equal to *expected (then incremented), else *out_of_order counts it. Returns the
 * messages taken, or -(a gr_client_status). latency_loop: n times, one message in flight:
 * PUBLISH channel payload from publisher (not waited for), the message taken from
 * subscriber's reply ring, then PUBLISH's reply; latencies_ns[i] from before the send to the
 * message in hand. Returns a gr_client_status. */
long gr_client_pubsub_take_sequenced(gr_client_t *client, size_t max_count, int64_t timeout_ns,
                                     uint64_t *expected, uint64_t *out_of_order);
/* publish_many: count PUBLISHes of payload_size bytes (the sequence first_sequence + i as 10
 * digits, then 'x'), window in flight, every reply read. Returns a gr_client_status. */
int gr_client_pubsub_publish_many(gr_client_t *client, const uint8_t *channel, size_t channel_length,
                                  size_t payload_size, uint64_t first_sequence, size_t count, size_t window);
int gr_client_pubsub_latency_loop(gr_client_t *publisher, gr_client_t *subscriber, const uint8_t *channel,
                                  size_t channel_length, const uint8_t *payload, size_t payload_length, size_t n,
                                  int64_t *latencies_ns);
/* cffi-cdef-end */

#endif
