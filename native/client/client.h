/* client.h — the client side of a ring session, in C: one call per command.
 *
 * goblin_ring/client/ring.py attaches over the control socket and maps the two
 * segments; everything per command happens here: encode the request with the generated
 * codec into the request ring, ring the server's eventfd doorbell if it sleeps, wait for
 * the reply (spin, then a futex sleep on the reply ring, checking the control socket for
 * the server's EOF between sleeps), and decode the reply into a gr_result_t that stays
 * valid until the next call. A request or reply larger than one ring record travels in
 * fragments (ring/fragment.h), written and reassembled here; an array reply of any shape is
 * one tree of elements in pre-order, laid out for Python by gr_client_result_layout.
 */
#ifndef GR_CLIENT_H
#define GR_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "ring/codec.h"
#include "ring/ring.h"

/* cffi-cdef-begin */
typedef struct gr_client gr_client_t;

/* Status codes of the client calls (the Python layer maps them to exceptions). */
enum gr_client_status {
    GR_CLIENT_OK = 0,
    GR_CLIENT_RING_FULL = 1,       /* no room in the request ring within the timeout */
    GR_CLIENT_TOO_LARGE = 2,       /* request larger than the ring's largest message */
    GR_CLIENT_PEER_GONE = 3,       /* the server closed the control socket */
    GR_CLIENT_TIMEOUT = 4,         /* no reply within the timeout */
    GR_CLIENT_PROTOCOL = 5,        /* a reply that does not decode or does not match */
    GR_CLIENT_ENCODE = 6,          /* the request could not be encoded */
    GR_CLIENT_NO_MEMORY = 7,
    GR_CLIENT_CLOSED = 8,          /* a plain call on a NULL client (RingClient after close) */
    GR_CLIENT_OTHER_THREAD = 9,    /* the client belongs to another thread (gr_client_claim) */
    GR_CLIENT_FORKED = 10,         /* the client was made before a fork: its rings are the parent's */
    GR_CLIENT_CACHE_KEYS = 11,     /* gr_client_cache_check: invalidated keys wait in gr_client_cache_take */
    GR_CLIENT_CACHE_FLUSH = 12     /* gr_client_cache_check: forget every cached reply */
};

typedef struct gr_result {
    uint16_t template_id;          /* GR_T_INTEGER_REPLY, _BULK_, _ARRAY_, _STATUS_, _ERROR_ */
    uint8_t is_nil;                /* a null bulk, or a null array (the tree's root is NIL_ARRAY) */
    uint8_t shape;                 /* arrays: 2 a null array, else 0 */
    uint16_t error_code;
    int64_t integer;
    const uint8_t *data;           /* bulk value, status or error text */
    size_t length;
    uint32_t count;                /* arrays: the tree's elements, root first (codec.h's gr_element_t) */
    gr_element_t *elements;
} gr_result_t;

gr_client_t *gr_client_new(void *request_memory, size_t request_memory_size,
                           void *reply_memory, size_t reply_memory_size,
                           int doorbell_fd, int control_fd, char *error, size_t error_size);
void gr_client_free(gr_client_t *client);
void gr_client_set_wait(gr_client_t *client, uint32_t spin_iterations, int64_t timeout_ns);
size_t gr_client_max_message(const gr_client_t *client);

/* Threads and fork. A client is used by one thread at a time: the first thread that calls it
 * owns it (a compare-and-swap on its thread id, once), and every plain call starts with the
 * check gr_client_claim makes, which answers before anything is read or written:
 *   GR_CLIENT_OK            this thread owns the client (one load and compare when it does);
 *   GR_CLIENT_OTHER_THREAD  another thread does: the caller uses a session of its own;
 *   GR_CLIENT_FORKED        the process forked since the client was made (a pthread_atfork
 *                           handler counts forks): the rings and descriptors are the parent's
 *                           and this process must not touch them, not even to free them;
 *   GR_CLIENT_CLOSED        client is NULL.
 * The other entry points (send, receive, batches, Pub/Sub) do not check: their caller claims
 * first. gr_client_set_any_thread(client, 1) turns the thread check off for a client whose
 * caller keeps it to one thread at a time itself (a Pub/Sub session); the fork check stays. */
int gr_client_claim(gr_client_t *client);
void gr_client_set_any_thread(gr_client_t *client, int any_thread);

/* The plain calls below (call_argv, key_int, key_value, ping, key_range, pop_keys, move) also
 * write their reply into this buffer as the Python object it stands for, in marshal's format
 * (client/plain_reply.h), so that RingClient builds it with one plain_loads: Ellipsis there
 * when the call failed (its status), the reply is an error or it does not fit (the caller then
 * reads *result). A plain call on a NULL client returns GR_CLIENT_CLOSED; once one has seen
 * the server gone, every later one returns GR_CLIENT_PEER_GONE at once. The buffer must
 * outlive the client or be unset (capacity 0). */
void gr_client_set_plain_output(gr_client_t *client, uint8_t *buffer, size_t capacity);

/* An event loop's waiting, a step at a time (goblin_ring/asyncio.py): requests go out with
 * gr_client_send_argv (many may be in flight); then
 *   gr_client_reply_ready    rings a sleeping server's doorbell for what was sent, then spins
 *                            up to spin_iterations for a reply record: 1 when one is there;
 *   gr_client_arm_reply_doorbell  sets the reply ring's sleeper flag and re-checks (1: a reply
 *                            came meanwhile, not armed); armed, the server writes the eventfd
 *                            the client gave at attach with its next reply;
 *   gr_client_disarm_reply_doorbell  clears the flag once the loop woke;
 *   gr_client_receive_plain  takes the next reply (one must be there, or it waits) into
 *                            *result and the plain output, as the plain calls do.
 * A reply in fragments may make gr_client_receive_plain wait for the rest; the server writes
 * them back to back. */
int gr_client_reply_ready(gr_client_t *client, uint32_t spin_iterations);
int gr_client_arm_reply_doorbell(gr_client_t *client);
void gr_client_disarm_reply_doorbell(gr_client_t *client);
int gr_client_receive_plain(gr_client_t *client, gr_result_t *result);

/* One command: send, wait, decode into *result (valid until the next call). */
int gr_client_call(gr_client_t *client, gr_request_t *request, gr_result_t *result);

/* One command as Redis argv, the way every RingClient method sends: argc arguments packed
 * back to back in data (argument i is the next lengths[i] bytes; the lengths must add up to
 * data_length, else GR_CLIENT_ENCODE and nothing is sent). C builds and validates the typed
 * request with gr_request_from_argv (the RESP path's own function, exec/command.h), encodes
 * it and writes the ring; a command with no typed form travels as a CommandRequest, and so
 * does one that does not validate, so that the server answers it with Redis's error (and
 * counts it, and aborts a transaction for it) exactly as over RESP. */
int gr_client_send_argv(gr_client_t *client, const uint8_t *data, size_t data_length, const size_t *lengths,
                        size_t argc);
int gr_client_call_argv(gr_client_t *client, const uint8_t *data, size_t data_length, const size_t *lengths,
                        size_t argc, gr_result_t *result);
/* The hot commands without building a gr_request_t in Python. */
int gr_client_key_int(gr_client_t *client, uint16_t template_id, const uint8_t *key, size_t key_length,
                      int64_t value, gr_result_t *result);
int gr_client_ping(gr_client_t *client, gr_result_t *result);
/* The hot key-and-value commands the same way: PUSH (end, flag = only-if-exists, one value),
 * POP (end, no count), GET, plain SET, LSET (index, value). value may be NULL for those
 * without one. */
int gr_client_key_value(gr_client_t *client, uint16_t template_id, uint8_t end, uint8_t flag, int64_t index,
                        const uint8_t *key, size_t key_length, const uint8_t *value, size_t value_length,
                        gr_result_t *result);

/* Typed plain forms, so that a RingClient method hands its arguments to C with no argv:
 * key_range: LRANGE, LTRIM, GETRANGE (key, index = start, index2 = stop/end).
 * pop_keys: BLPOP/BRPOP (GR_T_BPOP: end; its (key, value) reply a tuple in the plain output),
 *   LMPOP (GR_T_LMPOP: end, count) and BLMPOP (GR_T_BLMPOP), over one key, or two when second
 *   is not NULL; count 0 means one value; timeout in seconds (the server validates it).
 * move: LMOVE/RPOPLPUSH (GR_T_LMOVE) and BLMOVE/BRPOPLPUSH (GR_T_BLMOVE): from and to are
 *   ListEnds (0 LEFT, 1 RIGHT).
 * Each sends exactly the request gr_request_from_argv builds from the same command's argv. */
int gr_client_key_range(gr_client_t *client, uint16_t template_id, const uint8_t *key, size_t key_length,
                        int64_t start, int64_t stop, gr_result_t *result);
int gr_client_pop_keys(gr_client_t *client, uint16_t template_id, uint8_t end, uint32_t count, double timeout,
                       const uint8_t *first, size_t first_length, const uint8_t *second, size_t second_length,
                       gr_result_t *result);
/* pop_keys' hot forms with fewer arguments for cffi to convert (each costs the Python caller
 * some): BLPOP/BRPOP with the timeout a double, or whole seconds (an int timeout as a Python
 * int, not converted to a float on the way), and LMPOP. */
int gr_client_bpop(gr_client_t *client, uint8_t end, double timeout, const uint8_t *first, size_t first_length,
                   const uint8_t *second, size_t second_length, gr_result_t *result);
int gr_client_bpop_seconds(gr_client_t *client, uint8_t end, int64_t seconds, const uint8_t *first,
                           size_t first_length, const uint8_t *second, size_t second_length, gr_result_t *result);
int gr_client_lmpop(gr_client_t *client, uint8_t end, uint32_t count, const uint8_t *first, size_t first_length,
                    const uint8_t *second, size_t second_length, gr_result_t *result);
int gr_client_move(gr_client_t *client, uint16_t template_id, uint8_t from, uint8_t to, double timeout,
                   const uint8_t *source, size_t source_length, const uint8_t *destination,
                   size_t destination_length, gr_result_t *result);

/* Pipelines of the hot scalar commands in one C call: PING, LLEN, LINDEX (a = index),
 * LSET (a = index, value), PUSH (end, flag = only-if-exists, one value), POP (end, no count),
 * packed by Python into one buffer, each as a 20-byte
 * little-endian header {u16 template, u8 end, u8 flag, i64 a, u32 key_length,
 * i32 value_length (-1: none)} followed by the key and value bytes. Returns
 * GR_CLIENT_ENCODE (and sends nothing) if the buffer does not hold exactly `count`
 * well-formed commands. Reply i: kinds[i] (0 bulk, 1 nil, 2 integer, 3 status, 4 error,
 * 5 a shape this call does not carry), integers[i], and for bulk, status and error the
 * bytes gr_client_arena()[offsets[i]..+lengths[i]]. */
int gr_client_execute_packed(gr_client_t *client, const uint8_t *packed, size_t length, size_t count,
                             uint8_t *kinds, int64_t *integers, int64_t *offsets, int64_t *lengths);

/* The near-cache (goblin_ring/client/cache.py) of a session with CLIENT TRACKING on: the
 * server writes an InvalidateMessage per modified key into the reply ring before the writer's
 * reply, or bumps the ring's invalidation epoch when it cannot (ring.h). The calls take the
 * invalidations they meet while waiting for a reply and keep them; before answering from its
 * cache the caller makes one check:
 *   gr_client_cache_check  claims the client (its status as gr_client_claim's, or PEER_GONE
 *                          once a call saw the server gone, or once the control socket, looked
 *                          at when the last look is over 1 ms old, is closed: a dead session's
 *                          cache is never served), then loads the reply ring's tail
 *                          and epoch: OK when nothing waits and nothing was kept (one load of
 *                          each and a compare); otherwise takes the invalidations at the head
 *                          (stopping at any other record) and answers CACHE_FLUSH (a flushAll
 *                          message came or the epoch moved: forget everything), CACHE_KEYS
 *                          (keys kept), or OK.
 *   gr_client_cache_take   copies the kept keys ({u32 length, bytes} each, native order) into
 *                          buffer and forgets them and the flush; returns their bytes, or,
 *                          when that is more than capacity, the bytes needed (nothing taken). */
int gr_client_cache_check(gr_client_t *client);
size_t gr_client_cache_take(gr_client_t *client, uint8_t *buffer, size_t capacity);

/* Benchmark floor: n PINGs from C, one in flight, each round trip's nanoseconds into latencies. */
int gr_client_ping_loop(gr_client_t *client, size_t n, int64_t *latencies_ns);

/* Tests and tools: publish arbitrary bytes as one request record (bad-input tests). */
int gr_client_send_raw(gr_client_t *client, int32_t type, const uint8_t *message, size_t length);

/* Pipelines: send without waiting (request ids returned), then receive in order. */
int gr_client_send(gr_client_t *client, gr_request_t *request);
int gr_client_receive(gr_client_t *client, gr_result_t *result);
uint64_t gr_client_in_flight(const gr_client_t *client);

/* Batches: one C call for many of the same command, pipelined through the ring.
 * lindex_many: value i is arena[offsets[i] : offsets[i] + lengths[i]] (see gr_client_arena),
 * lengths[i] = -1 for nil. push_many: values[offsets[i] : offsets[i] + lengths[i]], sent as
 * PushRequests of per_message values. Either way *result ends as the last reply, or as the
 * first error reply if one came back. */
int gr_client_lindex_many(gr_client_t *client, const uint8_t *key, size_t key_length,
                          const int64_t *indexes, size_t count, int64_t *offsets, int64_t *lengths,
                          gr_result_t *result);
int gr_client_push_many(gr_client_t *client, uint8_t end, const uint8_t *key, size_t key_length,
                        const uint8_t *values, const int64_t *offsets, const int64_t *lengths,
                        size_t count, size_t per_message, gr_result_t *result);
const uint8_t *gr_client_arena(const gr_client_t *client);
/* An array result laid out for Python in one call: the tree in pre-order, element i's kind
 * (GR_ELEMENT_KIND_*), integer (ARRAY: children, MAP: pairs), and its bytes as
 * arena[offsets[i] : offsets[i] + lengths[i]]. Returns the arena bytes in use. */
size_t gr_client_result_layout(const gr_client_t *client, const gr_result_t *result, uint8_t *kinds,
                               int64_t *integers, uint64_t *offsets, uint64_t *lengths);
/* cffi-cdef-end */

/* ---- for the subscribed reader (client_pubsub.c), which builds on this client; not in the
 * cffi API ---- */
struct gr_client_pubsub;
gr_ring_t *gr_client_reply_ring(gr_client_t *client);
/* The slot of the client's Pub/Sub state (client_pubsub_state.h), NULL until first used. */
struct gr_client_pubsub **gr_client_pubsub_state(gr_client_t *client);
/* Wait until the reply ring has a record, as a call's reply wait does (wake a sleeping server
 * first, spin, futex sleep, the server's EOF checked every slice), for timeout_ns (< 0: none). */
int gr_client_wait_replies(gr_client_t *client, int64_t timeout_ns);
/* A reply with this request id was read by the Pub/Sub reader: the first one answers its
 * request (SUBSCRIBE a b answers with two, the same id). */
void gr_client_note_reply(gr_client_t *client, uint64_t request_id);
/* An InvalidateMessage (CLIENT TRACKING) the reader met: kept as an ordinary call keeps one,
 * for gr_client_cache_check. 0, or -1 (not one: undecodable). */
int gr_client_cache_stash(gr_client_t *client, const uint8_t *payload, size_t length);

#endif
