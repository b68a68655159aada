/* client.c — the client side of a ring session; the API and the waiting rules are in
 * client.h, the ring in ring.c, the server side in session.c.
 */
#include "client/client.h"
#include "core/clock.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "client/client_pubsub_state.h"
#include "client/plain_reply.h"
#include "exec/command.h"
#include "ring/fragment.h"
#include "ring/ring.h"

#define SLEEP_SLICE_NS 10000000LL     /* futex sleeps in 10 ms slices, checking the server between */
/* A cached answer is given only if the control socket was seen open at most this long ago. A
 * server that died closed it at once, and no server started after it can acknowledge a write
 * within a millisecond of the death, so no cached read outlives its session to go stale. */
#define CACHE_LIVENESS_NS 1000000LL
/* Kept invalidated keys past this many bytes become one flush: a session that tracks without a
 * cache to take them (CLIENT TRACKING ON by hand) keeps no more than this. */
#define CACHE_STASH_MAX ((size_t)1 << 20)

struct gr_client {
    /* gr_client_claim's state, read first by every plain call */
    unsigned long owner;              /* pthread_self() of the owning thread; 0 until the first call */
    unsigned long fork_generation;    /* forks_seen when the client was made */
    int any_thread;                   /* no thread check (the caller serialises) */
    gr_ring_t requests;               /* this side produces */
    gr_ring_t replies;                /* this side consumes */
    int doorbell_fd;
    int control_fd;
    uint64_t next_request_id;         /* id of the next request sent */
    uint64_t next_reply_id;           /* id of the next reply expected */
    uint32_t spin_iterations;
    int64_t timeout_ns;               /* < 0: wait forever (the server's EOF still ends a wait) */
    /* Blocking commands in flight (BLPOP ...): their own timeout is the server's, so a wait
     * lasts that long plus timeout_ns, or forever for timeout 0. Cleared when none is in flight. */
    int blocking_forever;
    int64_t blocking_extra_ns;
    uint8_t *encode_buffer;
    size_t encode_capacity;
    gr_reply_message_t decoded;       /* decode scratch; its elements grow to the largest reply */
    uint8_t *arena;                   /* reply messages copied out of the ring, decoded in place */
    size_t arena_length, arena_capacity;
    gr_reassembly_t fragments;        /* a reply arriving in fragments (ring/fragment.h) */
    /* state of the reply being received */
    int wake_pending;                 /* requests published since the last doorbell check */
    int receiving_done;
    int protocol_error;
    size_t result_key_offset;
    gr_result_t *result;
    /* the argv path's scratch: argument pointers into the caller's buffer, the request's items */
    const uint8_t **argv_pointers;
    gr_bytes_t *argv_items;
    size_t argv_capacity;
    /* the plain calls' reply as Python objects (plain_reply.h), in the caller's buffer */
    uint8_t *plain_output;
    size_t plain_capacity;
    int plain_streaming;              /* a plain call waits: 1, or 2 for a tuple root (take_reply may stream
                                         its reply into plain_output, if set); finish_plain clears it */
    int plain_streamed;               /* its ArrayReply was written into plain_output straight from the ring */
    int gone;                         /* a plain call saw the server gone: the later ones fail at once */
    struct gr_client_pubsub *pubsub;  /* Pub/Sub messages taken while reading replies (client_pubsub_state.h) */
    /* CLIENT TRACKING's invalidations taken from the reply ring (gr_client_cache_check): keys
     * packed as {u32 length, bytes}, a flush flag (a flushAll message, or the epoch moved) */
    uint8_t *invalidated;
    size_t invalidated_length, invalidated_capacity;
    int invalidate_all;
    uint64_t epoch_seen;              /* the reply ring's invalidation_epoch last looked at */
    int64_t liveness_checked_ns;      /* gr_client_cache_check's last look at the control socket */
};

/* Forks of this process so far, counted in each child by a pthread_atfork handler (fork()
 * runs it in the child before returning there, whoever called fork). A client made before
 * the latest fork is the parent's. */
static unsigned long forks_seen;
static pthread_once_t fork_counter_once = PTHREAD_ONCE_INIT;

static void count_fork_in_child(void) { __atomic_add_fetch(&forks_seen, 1, __ATOMIC_RELAXED); }
static void install_fork_counter(void) { pthread_atfork(NULL, NULL, count_fork_in_child); }

int gr_client_claim(gr_client_t *client) {
    if (!client) return GR_CLIENT_CLOSED;
    if (__builtin_expect(client->fork_generation != __atomic_load_n(&forks_seen, __ATOMIC_RELAXED), 0))
        return GR_CLIENT_FORKED;
    unsigned long self = (unsigned long)pthread_self();
    unsigned long owner = __atomic_load_n(&client->owner, __ATOMIC_RELAXED);
    if (__builtin_expect(owner == self, 1) || client->any_thread) return GR_CLIENT_OK;
    /* Unowned: the first caller takes it. The acquire pairs with nothing the client publishes:
     * the thread that made the client handed it over through Python, under the GIL. */
    if (owner == 0 && __atomic_compare_exchange_n(&client->owner, &owner, self, 0, __ATOMIC_ACQUIRE,
                                                  __ATOMIC_RELAXED))
        return GR_CLIENT_OK;
    return GR_CLIENT_OTHER_THREAD;
}

void gr_client_set_any_thread(gr_client_t *client, int any_thread) { client->any_thread = any_thread; }

gr_client_t *gr_client_new(void *request_memory, size_t request_memory_size,
                           void *reply_memory, size_t reply_memory_size,
                           int doorbell_fd, int control_fd, char *error, size_t error_size) {
    pthread_once(&fork_counter_once, install_fork_counter);
    gr_client_t *client = calloc(1, sizeof *client);
    if (!client) { snprintf(error, error_size, "out of memory"); return NULL; }
    client->fork_generation = __atomic_load_n(&forks_seen, __ATOMIC_RELAXED);
    if (gr_ring_attach(&client->requests, request_memory, request_memory_size, GR_SCHEMA_ID, GR_SCHEMA_VERSION,
                       error, error_size) != 0 ||
        gr_ring_attach(&client->replies, reply_memory, reply_memory_size, GR_SCHEMA_ID, GR_SCHEMA_VERSION,
                       error, error_size) != 0) {
        free(client);
        return NULL;
    }
    client->doorbell_fd = doorbell_fd;
    client->control_fd = control_fd;
    client->next_request_id = client->next_reply_id = 1;
    client->epoch_seen = __atomic_load_n(&client->replies.header->invalidation_epoch, __ATOMIC_ACQUIRE);
    client->spin_iterations = 20000;
    client->timeout_ns = -1;
    client->encode_capacity = client->requests.max_message_length;
    client->encode_buffer = malloc(client->encode_capacity);
    client->decoded.element_capacity = 1024;
    client->decoded.elements = calloc(client->decoded.element_capacity, sizeof *client->decoded.elements);
    client->arena_capacity = 65536;
    client->arena = malloc(client->arena_capacity);
    if (!client->encode_buffer || !client->decoded.elements || !client->arena) {
        gr_client_free(client);
        snprintf(error, error_size, "out of memory");
        return NULL;
    }
    return client;
}

void gr_client_free(gr_client_t *client) {
    if (!client) return;
    free(client->encode_buffer);
    free(client->decoded.elements);
    free(client->arena);
    free(client->argv_pointers);
    free(client->argv_items);
    gr_reassembly_free(&client->fragments);
    gr_client_pubsub_free(client->pubsub);
    free(client->invalidated);
    free(client);
}

void gr_client_set_wait(gr_client_t *client, uint32_t spin_iterations, int64_t timeout_ns) {
    client->spin_iterations = spin_iterations;
    client->timeout_ns = timeout_ns;
}

size_t gr_client_max_message(const gr_client_t *client) { return client->requests.max_message_length; }

void gr_client_set_plain_output(gr_client_t *client, uint8_t *buffer, size_t capacity) {
    client->plain_output = capacity ? buffer : NULL;
    client->plain_capacity = capacity;
}
uint64_t gr_client_in_flight(const gr_client_t *client) { return client->next_request_id - client->next_reply_id; }
const uint8_t *gr_client_arena(const gr_client_t *client) { return client->arena; }

size_t gr_client_result_layout(const gr_client_t *client, const gr_result_t *result, uint8_t *kinds,
                               int64_t *integers, uint64_t *offsets, uint64_t *lengths) {
    for (uint32_t i = 0; i < result->count; i++) {
        const gr_element_t *element = &result->elements[i];
        kinds[i] = element->kind;
        integers[i] = element->integer;
        offsets[i] = element->bytes.length ? (uint64_t)(element->bytes.data - client->arena) : 0;
        lengths[i] = element->bytes.length;
    }
    return client->arena_length;
}

/* The server closed the control socket (it exited or dropped this session). */
static int server_gone(const gr_client_t *client) {
    struct pollfd fd = {client->control_fd, POLLIN | POLLRDHUP, 0};
    if (poll(&fd, 1, 0) <= 0) return 0;
    if (fd.revents & (POLLHUP | POLLRDHUP | POLLERR | POLLNVAL)) return 1;
    char byte;
    ssize_t n = recv(client->control_fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

static int wake_server_if_sleeping(gr_client_t *client);

/* Wait until the reply ring has a record: spin, then sleep on its futex in slices.
 * After ringing a sleeping server's doorbell there is no spin at all: the server's wake-up
 * takes tens of microseconds whatever we do, and the CPU we would spin on is often the one
 * the kernel wants to run the server on (or, with the other CPUs busy, the one it would pull
 * the server to once it goes idle). A spinning client held the server off until the
 * scheduler preempted it: 0.8 ms per request after an idle pause. */
static int wait_for_reply(gr_client_t *client) {
    if (!wake_server_if_sleeping(client)) {
        for (uint32_t i = 0; i < client->spin_iterations; i++) {
            if (!gr_ring_is_empty(&client->replies)) return GR_CLIENT_OK;
            __builtin_ia32_pause();
        }
    }
    int64_t deadline = client->timeout_ns >= 0 && !client->blocking_forever
                       ? gr_monotonic_ns() + client->timeout_ns + client->blocking_extra_ns : INT64_MAX;
    for (;;) {
        uint32_t seq = gr_ring_prepare_sleep(&client->replies);
        if (!gr_ring_still_empty_after_prepare(&client->replies)) {
            gr_ring_cancel_sleep(&client->replies);
            return GR_CLIENT_OK;
        }
        int64_t now = gr_monotonic_ns();
        int64_t slice = deadline - now < SLEEP_SLICE_NS ? deadline - now : SLEEP_SLICE_NS;
        if (slice > 0) gr_ring_futex_wait(&client->replies, seq, slice);
        gr_ring_cancel_sleep(&client->replies);
        if (!gr_ring_is_empty(&client->replies)) return GR_CLIENT_OK;
        if (server_gone(client)) return GR_CLIENT_PEER_GONE;
        if (gr_monotonic_ns() >= deadline) return GR_CLIENT_TIMEOUT;
    }
}

static int arena_reserve(gr_client_t *client, size_t extra) {
    if (client->arena_capacity - client->arena_length >= extra) return 0;
    size_t capacity = client->arena_capacity;
    while (capacity - client->arena_length < extra) capacity *= 2;
    uint8_t *grown = realloc(client->arena, capacity);
    if (!grown) return -1;
    client->arena = grown;
    client->arena_capacity = capacity;
    return 0;
}

static int64_t arena_copy(gr_client_t *client, const uint8_t *data, size_t length) {
    if (arena_reserve(client, length + 1) != 0) return -1;
    int64_t offset = (int64_t)client->arena_length;
    if (length) memcpy(client->arena + client->arena_length, data, length);
    client->arena_length += length;
    return offset;
}

/* Decode a reply that lies in the arena at offset, with room for as many elements as the
 * message could hold (each takes at least GR_ARRAY_REPLY_ELEMENT_FIXED bytes). */
static gr_codec_status_t decode_in_arena(gr_client_t *client, size_t offset, size_t length) {
    gr_reply_message_t *m = &client->decoded;
    gr_codec_status_t status = gr_decode_reply(client->arena + offset, length, m);
    if (status != GR_CODEC_TOO_MANY_ITEMS || m->element_count > length / GR_ARRAY_REPLY_ELEMENT_FIXED)
        return status;
    gr_element_t *grown = realloc(m->elements, (size_t)m->element_count * sizeof *grown);
    if (!grown) return GR_CODEC_TOO_MANY_ITEMS;
    m->elements = grown;
    m->element_capacity = m->element_count;
    return gr_decode_reply(client->arena + offset, length, m);
}

static int reply_failed(gr_client_t *client) {
    client->protocol_error = 1;
    client->receiving_done = 1;
    return 1;
}

/* A plain call's ArrayReply in one ring record, written as marshal straight from the message
 * (gr_plain_reply_write_message): no arena copy, no element array. 1 when done; 0 leaves it
 * to the decoding path (a shape the writer leaves to Python, a reply larger than the buffer,
 * or one that does not decode or match, which that path then reports). */
static int stream_plain(gr_client_t *client, const uint8_t *payload, size_t length) {
    uint64_t request_id;
    long written = gr_plain_reply_write_message(payload, length, client->plain_streaming == 2, client->plain_output,
                                                client->plain_capacity, &request_id);
    if (written < 0 || (size_t)written > client->plain_capacity ||
        (request_id != client->next_reply_id && request_id != 0))
        return 0;
    client->result->template_id = GR_T_ARRAY_REPLY;   /* its value is in the plain output only */
    client->plain_streamed = 1;
    client->receiving_done = 1;
    return 1;
}

/* ---- CLIENT TRACKING's invalidations (the near-cache, client.h) ---- */

/* Keep one InvalidateMessage's key (or its flushAll) until gr_client_cache_take. */
static int stash_invalidation(gr_client_t *client, const uint8_t *payload, size_t length) {
    gr_reply_message_t m;
    memset(&m, 0, sizeof m);
    if (gr_decode_reply(payload, length, &m) != GR_CODEC_OK || m.template_id != GR_T_INVALIDATE_MESSAGE) return -1;
    if (m.is_nil) {
        client->invalidate_all = 1;
        client->invalidated_length = 0;
        return 0;
    }
    if (client->invalidate_all) return 0;   /* everything goes anyway */
    size_t need = client->invalidated_length + 4 + m.text.length;
    if (need > CACHE_STASH_MAX) {   /* nobody takes them: one flush says as much */
        client->invalidate_all = 1;
        client->invalidated_length = 0;
        return 0;
    }
    if (need > client->invalidated_capacity) {
        size_t capacity = client->invalidated_capacity ? client->invalidated_capacity : 256;
        while (capacity < need) capacity *= 2;
        uint8_t *grown = realloc(client->invalidated, capacity);
        if (!grown) {   /* cannot keep the key: forget everything instead */
            client->invalidate_all = 1;
            client->invalidated_length = 0;
            return 0;
        }
        client->invalidated = grown;
        client->invalidated_capacity = capacity;
    }
    uint32_t key_length = (uint32_t)m.text.length;
    memcpy(client->invalidated + client->invalidated_length, &key_length, 4);
    if (key_length) memcpy(client->invalidated + client->invalidated_length + 4, m.text.data, key_length);
    client->invalidated_length = need;
    return 0;
}

int gr_client_cache_stash(gr_client_t *client, const uint8_t *payload, size_t length) {
    return stash_invalidation(client, payload, length);
}

/* Ring handler of gr_client_cache_check: invalidations only; any other record stays. */
static int take_invalidation(void *context, int32_t type, const uint8_t *payload, size_t length) {
    gr_client_t *client = context;
    if (type != GR_T_INVALIDATE_MESSAGE) {
        /* A reply or a Pub/Sub message nobody has read: an invalidation behind it cannot be
         * seen now, so nothing cached is trusted (the caller goes to the server). */
        client->invalidate_all = 1;
        client->invalidated_length = 0;
        return -1;
    }
    if (stash_invalidation(client, payload, length) != 0) {
        client->invalidate_all = 1;   /* undecodable: trust nothing cached */
        client->invalidated_length = 0;
    }
    return 0;
}

int gr_client_cache_check(gr_client_t *client) {
    int status = gr_client_claim(client);
    if (__builtin_expect(status != GR_CLIENT_OK, 0)) return status;
    if (client->gone) return GR_CLIENT_PEER_GONE;
    const int64_t now = gr_monotonic_ns();
    if (__builtin_expect(now - client->liveness_checked_ns >= CACHE_LIVENESS_NS, 0)) {
        if (server_gone(client)) {
            client->gone = 1;
            return GR_CLIENT_PEER_GONE;
        }
        client->liveness_checked_ns = now;
    }
    gr_ring_header_t *header = client->replies.header;
    uint64_t tail = __atomic_load_n(&header->tail_position, __ATOMIC_ACQUIRE);
    uint64_t epoch = __atomic_load_n(&header->invalidation_epoch, __ATOMIC_ACQUIRE);
    if (__builtin_expect(tail == header->head_position && epoch == client->epoch_seen &&
                         client->invalidated_length == 0 && !client->invalidate_all, 1))
        return GR_CLIENT_OK;
    /* Records wait: invalidations (a reply or a Pub/Sub message stops the drain, and flushes) */
    if (tail != header->head_position) gr_ring_read(&client->replies, take_invalidation, client, 0);
    if (gr_ring_is_corrupt(&client->replies)) return GR_CLIENT_PROTOCOL;
    if (epoch != client->epoch_seen) {
        client->epoch_seen = epoch;
        client->invalidate_all = 1;
        client->invalidated_length = 0;
    }
    if (client->invalidate_all) return GR_CLIENT_CACHE_FLUSH;
    return client->invalidated_length ? GR_CLIENT_CACHE_KEYS : GR_CLIENT_OK;
}

size_t gr_client_cache_take(gr_client_t *client, uint8_t *buffer, size_t capacity) {
    size_t length = client->invalidated_length;
    if (length > capacity) return length;   /* call again with room for this many */
    if (length) memcpy(buffer, client->invalidated, length);
    client->invalidated_length = 0;
    client->invalidate_all = 0;
    return length;
}

/* Ring handler: take one reply record; stop after a whole reply. The message is copied into
 * the arena (a reassembled one is swapped in when the arena is empty) and decoded there, so
 * every pointer stays valid until the next receive; the result's text is kept as an arena
 * offset (a batch may grow the arena) and fixed up when the reply is complete. */
static int take_reply(void *context, int32_t type, const uint8_t *payload, size_t length) {
    gr_client_t *client = context;
    gr_result_t *result = client->result;
    size_t offset;
    if (type == GR_FRAGMENT_TYPE) {
        gr_reassembly_status_t status = gr_reassembly_take(&client->fragments, payload, length);
        if (status == GR_REASSEMBLY_MORE) return 0;
        if (status != GR_REASSEMBLY_COMPLETE) return reply_failed(client);
        length = client->fragments.length;
        if (client->fragments.template_id == GR_T_INVALIDATE_MESSAGE)   /* CLIENT TRACKING, not the reply */
            return stash_invalidation(client, client->fragments.buffer, length) == 0 ? 0 : reply_failed(client);
        if (client->fragments.template_id == GR_T_PUSH_MESSAGE)   /* a Pub/Sub message, not the reply */
            return gr_client_pubsub_stash(&client->pubsub, client->fragments.buffer, length) == 0 ? 0 : reply_failed(client);
        if (client->arena_length == 0) {   /* a large reply: hand its buffer over instead of copying it */
            uint8_t *buffer = client->fragments.buffer;
            size_t capacity = client->fragments.capacity;
            client->fragments.buffer = client->arena;
            client->fragments.capacity = client->arena_capacity;
            client->arena = buffer;
            client->arena_capacity = capacity;
            client->arena_length = length;
            offset = 0;
        } else {
            int64_t at = arena_copy(client, client->fragments.buffer, length);
            if (at < 0) return reply_failed(client);
            offset = (size_t)at;
        }
    } else {
        if (type == GR_T_INVALIDATE_MESSAGE)   /* CLIENT TRACKING, not the reply: kept for the near-cache */
            return stash_invalidation(client, payload, length) == 0 ? 0 : reply_failed(client);
        if (type == GR_T_PUSH_MESSAGE)   /* a Pub/Sub message, not the reply: kept for the reader */
            return gr_client_pubsub_stash(&client->pubsub, payload, length) == 0 ? 0 : reply_failed(client);
        if (type == GR_T_ARRAY_REPLY && client->plain_streaming && client->plain_output &&
            stream_plain(client, payload, length))
            return 1;
        int64_t at = arena_copy(client, payload, length);
        if (at < 0) return reply_failed(client);
        offset = (size_t)at;
    }
    gr_reply_message_t *m = &client->decoded;
    if (decode_in_arena(client, offset, length) != GR_CODEC_OK ||
        (m->request_id != client->next_reply_id && m->request_id != 0))
        return reply_failed(client);
    result->template_id = m->template_id;
    result->integer = m->integer;
    result->is_nil = m->is_nil;
    result->error_code = m->error_code;
    result->length = m->text.length;
    result->data = (const uint8_t *)(intptr_t)(m->text.length ? m->text.data - client->arena : 0);
    if (m->template_id == GR_T_ARRAY_REPLY) {
        if (m->element_count == 0) return reply_failed(client);   /* the tree has a root */
        result->count = m->element_count;
        result->elements = m->elements;
        const gr_element_t *e = m->elements;
        if (e[0].kind == GR_ELEMENT_KIND_NIL_ARRAY) {
            result->is_nil = 1;
            result->shape = 2;
        }
    }
    client->receiving_done = 1;
    return 1;
}

static void fix_up_pointers(gr_client_t *client, gr_result_t *result) {
    result->data = client->arena + (intptr_t)result->data;
}

/* Receive the next complete reply, appending its bytes to the arena. */
static int receive_into(gr_client_t *client, gr_result_t *result) {
    if (gr_client_in_flight(client) == 0) return GR_CLIENT_PROTOCOL;
    memset(result, 0, sizeof *result);
    client->result = result;
    client->receiving_done = 0;
    client->protocol_error = 0;
    while (!client->receiving_done) {
        if (gr_ring_read(&client->replies, take_reply, client, 1) == 0) {
            int status = wait_for_reply(client);
            if (status != GR_CLIENT_OK) return status;
        }
    }
    client->next_reply_id++;
    if (gr_client_in_flight(client) == 0) client->blocking_forever = 0, client->blocking_extra_ns = 0;
    if (client->protocol_error) return GR_CLIENT_PROTOCOL;
    fix_up_pointers(client, result);
    return GR_CLIENT_OK;
}

#define BUFFER_KEEP (4u << 20)   /* buffers grown past this by one large message are given back */

/* After a large request or reply, give its buffers back rather than hold them for good. */
static void trim_buffers(gr_client_t *client) {
    if (client->arena_capacity > BUFFER_KEEP) {
        uint8_t *smaller = realloc(client->arena, 65536);
        if (smaller) { client->arena = smaller; client->arena_capacity = 65536; }
    }
    gr_reassembly_trim(&client->fragments, BUFFER_KEEP);
    size_t keep = client->requests.max_message_length;
    if (client->encode_capacity > keep && client->encode_capacity > BUFFER_KEEP) {
        uint8_t *smaller = realloc(client->encode_buffer, keep);
        if (smaller) { client->encode_buffer = smaller; client->encode_capacity = keep; }
    }
}

int gr_client_receive(gr_client_t *client, gr_result_t *result) {
    client->arena_length = 0;
    trim_buffers(client);
    return receive_into(client, result);
}

static int publish_fragments(gr_client_t *client, uint16_t template_id, size_t length);

/* Publish one encoded request; ring the doorbell if the server sleeps. */
static int publish(gr_client_t *client, int32_t type, size_t length) {
    if (length > client->requests.max_message_length) return publish_fragments(client, (uint16_t)type, length);
    int64_t deadline = 0;
    for (uint32_t attempt = 0;; attempt++) {
        gr_ring_status_t status = gr_ring_write(&client->requests, type, client->encode_buffer, length);
        if (status == GR_RING_OK) break;
        if (status == GR_RING_TOO_LARGE) return GR_CLIENT_TOO_LARGE;
        if (status != GR_RING_FULL) return GR_CLIENT_PROTOCOL;
        /* A sleeping server must be told there is something to read before we wait for room. */
        if (attempt == 0) {
            client->wake_pending = 1;
            wake_server_if_sleeping(client);
        }
        /* Full: with replies outstanding the caller must read them first (the server may be
         * waiting for reply-ring room); with none, the server is just behind: wait a while. */
        if (gr_client_in_flight(client) > 0) return GR_CLIENT_RING_FULL;
        if (attempt == 0) deadline = gr_monotonic_ns() + (client->timeout_ns >= 0 ? client->timeout_ns : 1000000000LL);
        if (gr_monotonic_ns() > deadline) return GR_CLIENT_RING_FULL;
        if ((attempt & 1023) == 1023 && server_gone(client)) return GR_CLIENT_PEER_GONE;
        __builtin_ia32_pause();
    }
    client->next_request_id++;
    client->wake_pending = 1;     /* checked once before the next wait, not once per message */
    return GR_CLIENT_OK;
}

/* A request larger than one ring record, in fragments (ring/fragment.h). Until the first
 * fragment is in, a full ring is the caller's to handle as for any request (RING_FULL with
 * replies outstanding). Once it is, the message is finished here: the server gathers a
 * request's fragments even while it executes nothing for this session (parked, or its
 * replies backed up), so room comes; only the server's exit or this client's timeout stops
 * it, and a message left part way is dropped by the server when the next one begins. */
static int publish_fragments(gr_client_t *client, uint16_t template_id, size_t length) {
    size_t sent = 0;
    int64_t deadline = 0;
    for (uint64_t attempt = 0;; attempt++) {
        size_t before = sent;
        gr_ring_status_t status = gr_fragment_write(&client->requests, template_id, client->encode_buffer, length,
                                                    &sent);
        if (status == GR_RING_OK) break;
        if (status != GR_RING_FULL) return status == GR_RING_TOO_LARGE ? GR_CLIENT_TOO_LARGE : GR_CLIENT_PROTOCOL;
        if (sent != before || attempt == 0) {
            client->wake_pending = 1;
            wake_server_if_sleeping(client);
            deadline = gr_monotonic_ns() + (client->timeout_ns >= 0 ? client->timeout_ns : 1000000000LL);
        }
        if (sent == 0 && gr_client_in_flight(client) > 0) return GR_CLIENT_RING_FULL;
        if ((attempt & 1023) == 1023) {
            if (server_gone(client)) return GR_CLIENT_PEER_GONE;
            int64_t now = gr_monotonic_ns();
            if (now > deadline) {
                if (sent == 0) return GR_CLIENT_RING_FULL;
                if (client->timeout_ns >= 0) return GR_CLIENT_TIMEOUT;
            }
        }
        __builtin_ia32_pause();
    }
    client->next_request_id++;
    client->wake_pending = 1;
    return GR_CLIENT_OK;
}

/* The producer side of the sleeper-flag protocol, once per batch of published requests:
 * should_wake fences after our release stores of the records, then reads the server's flag;
 * only a sleeping server costs a syscall. Called before any wait for a reply. */
static int wake_server_if_sleeping(gr_client_t *client) {
    if (!client->wake_pending) return 0;
    client->wake_pending = 0;
    if (!gr_ring_producer_should_wake(&client->requests)) return 0;
    uint64_t one = 1;
    ssize_t ignored = write(client->doorbell_fd, &one, sizeof one);
    (void)ignored;
    return 1;
}

int gr_client_send_raw(gr_client_t *client, int32_t type, const uint8_t *message, size_t length) {
    if (length > client->encode_capacity) return GR_CLIENT_TOO_LARGE;
    memcpy(client->encode_buffer, message, length);
    return publish(client, type, length);
}

/* Encode into encode_buffer, growing it for a request larger than one ring record. */
static gr_codec_status_t encode_request(gr_client_t *client, const gr_request_t *request, size_t *length) {
    gr_codec_status_t status = gr_encode_request(request, client->encode_buffer, client->encode_capacity, length);
    if (status != GR_CODEC_NO_SPACE) return status;
    size_t needed = gr_request_encoded_size(request);
    uint8_t *grown = realloc(client->encode_buffer, needed);
    if (!grown) return GR_CODEC_NO_SPACE;
    client->encode_buffer = grown;
    client->encode_capacity = needed;
    return gr_encode_request(request, client->encode_buffer, client->encode_capacity, length);
}

int gr_client_send(gr_client_t *client, gr_request_t *request) {
    double timeout = 0;
    int may_block = gr_request_may_block(request, &timeout);   /* read while an argv is still there */
    request->request_id = client->next_request_id;
    size_t length = 0;
    gr_codec_status_t status = encode_request(client, request, &length);
    if (status == GR_CODEC_NO_SPACE) return GR_CLIENT_NO_MEMORY;
    if (status != GR_CODEC_OK) return GR_CLIENT_ENCODE;
    int published = publish(client, request->template_id, length);
    if (published == GR_CLIENT_OK && may_block) {
        if (timeout <= 0) client->blocking_forever = 1;   /* sleeps on the futex, not spinning */
        else if ((int64_t)(timeout * 1e9) > client->blocking_extra_ns) client->blocking_extra_ns = (int64_t)(timeout * 1e9);
    }
    return published;
}

int gr_client_call(gr_client_t *client, gr_request_t *request, gr_result_t *result) {
    int status = gr_client_send(client, request);
    if (status != GR_CLIENT_OK) return status;
    return gr_client_receive(client, result);
}

static int argv_reserve(gr_client_t *client, size_t argc) {
    if (argc <= client->argv_capacity) return 0;
    size_t capacity = client->argv_capacity ? client->argv_capacity : 64;
    while (capacity < argc) capacity *= 2;
    const uint8_t **pointers = realloc(client->argv_pointers, capacity * sizeof *pointers);
    if (!pointers) return -1;
    client->argv_pointers = pointers;
    gr_bytes_t *items = realloc(client->argv_items, capacity * sizeof *items);
    if (!items) return -1;
    client->argv_items = items;
    client->argv_capacity = capacity;
    return 0;
}

int gr_client_send_argv(gr_client_t *client, const uint8_t *data, size_t data_length, const size_t *lengths,
                        size_t argc) {
    if (argc == 0) return GR_CLIENT_ENCODE;
    if (argv_reserve(client, argc) != 0) return GR_CLIENT_NO_MEMORY;
    const uint8_t **argv = client->argv_pointers;
    size_t at = 0;
    for (size_t i = 0; i < argc; i++) {
        if (lengths[i] > data_length - at || lengths[i] > UINT32_MAX) return GR_CLIENT_ENCODE;
        argv[i] = data + at;
        at += lengths[i];
    }
    if (at != data_length) return GR_CLIENT_ENCODE;
    gr_request_t request;
    gr_build_error_t error;
    memset(&request, 0, sizeof request);
    uint32_t capacity = client->argv_capacity > UINT32_MAX ? UINT32_MAX : (uint32_t)client->argv_capacity;
    if (gr_request_from_argv(argc, argv, lengths, &request, client->argv_items, capacity, &error) < 0) {
        /* Sent as argv: the server runs the same validation and answers with its error. */
        memset(&request, 0, sizeof request);
        request.template_id = GR_T_COMMAND;
        for (size_t i = 0; i < argc; i++) {
            client->argv_items[i].data = argv[i];
            client->argv_items[i].length = (uint32_t)lengths[i];
        }
        request.items = client->argv_items;
        request.item_count = (uint32_t)argc;
    }
    return gr_client_send(client, &request);
}

/* The reply of a plain call, also written into the plain output (when one is set) as the
 * Python object it stands for; '.' (Ellipsis) there when it is not written (a failed call, an
 * error reply, or larger than the buffer), and the caller reads the status and the gr_result_t. */
static int finish_plain(gr_client_t *client, int status, gr_result_t *result, int root_as_tuple) {
    if (status == GR_CLIENT_PEER_GONE) client->gone = 1;
    client->plain_streaming = 0;
    if (client->plain_streamed) {                      /* written already, unless the call failed after */
        client->plain_streamed = 0;
        if (status == GR_CLIENT_OK) return status;
    }
    if (!client->plain_output) return status;
    long written = status == GR_CLIENT_OK
                   ? gr_plain_reply_write(result, root_as_tuple, client->plain_output, client->plain_capacity) : -1;
    if (written < 0 || (size_t)written > client->plain_capacity) client->plain_output[0] = '.';
    return status;
}

static int call_plain(gr_client_t *client, gr_request_t *request, gr_result_t *result, int root_as_tuple) {
    int claimed = gr_client_claim(client);
    if (claimed != GR_CLIENT_OK) return claimed;      /* nothing read or written: not ours */
    if (client->gone) return finish_plain(client, GR_CLIENT_PEER_GONE, result, 0);
    int status = gr_client_send(client, request);
    client->plain_streaming = 1 + root_as_tuple;
    if (status == GR_CLIENT_OK) status = gr_client_receive(client, result);
    return finish_plain(client, status, result, root_as_tuple);
}

int gr_client_call_argv(gr_client_t *client, const uint8_t *data, size_t data_length, const size_t *lengths,
                        size_t argc, gr_result_t *result) {
    int claimed = gr_client_claim(client);
    if (claimed != GR_CLIENT_OK) return claimed;
    if (client->gone) return finish_plain(client, GR_CLIENT_PEER_GONE, result, 0);
    int status = gr_client_send_argv(client, data, data_length, lengths, argc);
    client->plain_streaming = 1;
    if (status == GR_CLIENT_OK) status = gr_client_receive(client, result);
    return finish_plain(client, status, result, 0);
}

int gr_client_reply_ready(gr_client_t *client, uint32_t spin_iterations) {
    wake_server_if_sleeping(client);
    for (uint32_t i = 0;; i++) {
        if (!gr_ring_is_empty(&client->replies)) return 1;
        if (i >= spin_iterations) return 0;
        __builtin_ia32_pause();
    }
}

int gr_client_arm_reply_doorbell(gr_client_t *client) {
    wake_server_if_sleeping(client);
    gr_ring_prepare_sleep(&client->replies);
    if (gr_ring_still_empty_after_prepare(&client->replies)) return 0;
    gr_ring_cancel_sleep(&client->replies);
    return 1;
}

void gr_client_disarm_reply_doorbell(gr_client_t *client) { gr_ring_cancel_sleep(&client->replies); }

int gr_client_receive_plain(gr_client_t *client, gr_result_t *result) {
    client->plain_streaming = 1;
    int status = gr_client_receive(client, result);
    return finish_plain(client, status, result, 0);
}

int gr_client_key_int(gr_client_t *client, uint16_t template_id, const uint8_t *key, size_t key_length,
                      int64_t value, gr_result_t *result) {
    gr_request_t request;
    memset(&request, 0, sizeof request);
    request.template_id = template_id;
    request.key.data = key;
    request.key.length = (uint32_t)key_length;
    request.index = value;
    return call_plain(client, &request, result, 0);
}

int gr_client_key_value(gr_client_t *client, uint16_t template_id, uint8_t end, uint8_t flag, int64_t index,
                        const uint8_t *key, size_t key_length, const uint8_t *value, size_t value_length,
                        gr_result_t *result) {
    gr_request_t request;
    memset(&request, 0, sizeof request);
    request.template_id = template_id;
    request.end = end;
    request.flag = flag;
    request.index = index;
    request.key.data = key;
    request.key.length = (uint32_t)key_length;
    gr_bytes_t item = {value, (uint32_t)value_length};
    if (template_id == GR_T_PUSH) {
        request.items = &item;
        request.item_count = 1;
    } else if (value) {
        request.arg1 = item;
    }
    return call_plain(client, &request, result, 0);
}

int gr_client_ping(gr_client_t *client, gr_result_t *result) {
    gr_request_t request;
    memset(&request, 0, sizeof request);
    request.template_id = GR_T_PING;
    return call_plain(client, &request, result, 0);
}

int gr_client_key_range(gr_client_t *client, uint16_t template_id, const uint8_t *key, size_t key_length,
                        int64_t start, int64_t stop, gr_result_t *result) {
    gr_request_t request;
    memset(&request, 0, sizeof request);
    request.template_id = template_id;
    request.key.data = key;
    request.key.length = (uint32_t)key_length;
    request.index = start;
    request.index2 = stop;
    return call_plain(client, &request, result, 0);
}

int gr_client_pop_keys(gr_client_t *client, uint16_t template_id, uint8_t end, uint32_t count, double timeout,
                       const uint8_t *first, size_t first_length, const uint8_t *second, size_t second_length,
                       gr_result_t *result) {
    if (template_id != GR_T_BPOP && template_id != GR_T_LMPOP && template_id != GR_T_BLMPOP) return GR_CLIENT_ENCODE;
    gr_bytes_t keys[2] = {{first, (uint32_t)first_length}, {second, (uint32_t)second_length}};
    gr_request_t request;
    memset(&request, 0, sizeof request);
    request.template_id = template_id;
    request.end = end;
    request.count = count;
    request.timeout = timeout;
    request.key = keys[0];                  /* as gr_request_from_argv sets it (argv[1]) */
    request.items = keys;
    request.item_count = second ? 2 : 1;
    return call_plain(client, &request, result, template_id == GR_T_BPOP);
}

int gr_client_bpop(gr_client_t *client, uint8_t end, double timeout, const uint8_t *first, size_t first_length,
                   const uint8_t *second, size_t second_length, gr_result_t *result) {
    return gr_client_pop_keys(client, GR_T_BPOP, end, 0, timeout, first, first_length, second, second_length, result);
}

int gr_client_bpop_seconds(gr_client_t *client, uint8_t end, int64_t seconds, const uint8_t *first,
                           size_t first_length, const uint8_t *second, size_t second_length, gr_result_t *result) {
    return gr_client_pop_keys(client, GR_T_BPOP, end, 0, (double)seconds, first, first_length, second, second_length,
                              result);
}

int gr_client_lmpop(gr_client_t *client, uint8_t end, uint32_t count, const uint8_t *first, size_t first_length,
                    const uint8_t *second, size_t second_length, gr_result_t *result) {
    return gr_client_pop_keys(client, GR_T_LMPOP, end, count, 0.0, first, first_length, second, second_length, result);
}

int gr_client_move(gr_client_t *client, uint16_t template_id, uint8_t from, uint8_t to, double timeout,
                   const uint8_t *source, size_t source_length, const uint8_t *destination,
                   size_t destination_length, gr_result_t *result) {
    if (template_id != GR_T_LMOVE && template_id != GR_T_BLMOVE) return GR_CLIENT_ENCODE;
    gr_request_t request;
    memset(&request, 0, sizeof request);
    request.template_id = template_id;
    request.end = from;
    request.to_end = to;
    request.timeout = timeout;
    request.key.data = source;
    request.key.length = (uint32_t)source_length;
    request.arg1.data = destination;
    request.arg1.length = (uint32_t)destination_length;
    return call_plain(client, &request, result, 0);
}

/* Send `request` in a pipeline, receiving replies whenever the ring is full.
 * on_reply is called for each reply received, in order. */
typedef void (*reply_sink_t)(gr_client_t *client, gr_result_t *result, void *context);

static int pipelined_send(gr_client_t *client, gr_request_t *request, gr_result_t *scratch,
                          reply_sink_t sink, void *context) {
    for (;;) {
        int status = gr_client_send(client, request);
        if (status != GR_CLIENT_RING_FULL) return status;
        status = receive_into(client, scratch);
        if (status != GR_CLIENT_OK) return status;
        sink(client, scratch, context);
    }
}

typedef struct lindex_batch {
    int64_t *offsets, *lengths;
    size_t next;
    gr_result_t *result;
    int have_error;
    int64_t error_offset;
} lindex_batch_t;

static void lindex_sink(gr_client_t *client, gr_result_t *reply, void *context) {
    lindex_batch_t *batch = context;
    size_t i = batch->next++;
    if (reply->template_id == GR_T_BULK_REPLY && !reply->is_nil) {
        batch->offsets[i] = reply->data - client->arena;
        batch->lengths[i] = (int64_t)reply->length;
    } else {
        batch->offsets[i] = 0;
        batch->lengths[i] = -1;
        if (reply->template_id == GR_T_ERROR_REPLY && !batch->have_error) {
            *batch->result = *reply;
            batch->error_offset = reply->data - client->arena;
            batch->have_error = 1;
        }
    }
}

int gr_client_lindex_many(gr_client_t *client, const uint8_t *key, size_t key_length,
                          const int64_t *indexes, size_t count, int64_t *offsets, int64_t *lengths,
                          gr_result_t *result) {
    if (gr_client_in_flight(client)) return GR_CLIENT_PROTOCOL;
    client->arena_length = 0;
    lindex_batch_t batch = {offsets, lengths, 0, result, 0, 0};
    gr_result_t scratch;
    gr_request_t request;
    memset(&request, 0, sizeof request);
    memset(result, 0, sizeof *result);
    request.template_id = GR_T_LINDEX;
    request.key.data = key;
    request.key.length = (uint32_t)key_length;
    for (size_t i = 0; i < count; i++) {
        request.index = indexes[i];
        int status = pipelined_send(client, &request, &scratch, lindex_sink, &batch);
        if (status != GR_CLIENT_OK) return status;
    }
    while (gr_client_in_flight(client)) {
        int status = receive_into(client, &scratch);
        if (status != GR_CLIENT_OK) return status;
        lindex_sink(client, &scratch, &batch);
    }
    /* The arena may have moved while it grew: error text pointers are re-derived by the caller
     * from offsets; the result's own data pointer is re-pointed here. */
    if (batch.have_error) {
        result->data = client->arena + batch.error_offset;
    } else {
        result->template_id = GR_T_STATUS_REPLY;
    }
    return GR_CLIENT_OK;
}

typedef struct push_batch {
    gr_result_t *result;
    int have_error;
    int64_t error_offset;
} push_batch_t;

static void push_sink(gr_client_t *client, gr_result_t *reply, void *context) {
    push_batch_t *batch = context;
    if (batch->have_error) return;
    *batch->result = *reply;
    if (reply->template_id == GR_T_ERROR_REPLY) {
        batch->have_error = 1;
        batch->error_offset = reply->data - client->arena;
    }
}

int gr_client_push_many(gr_client_t *client, uint8_t end, const uint8_t *key, size_t key_length,
                        const uint8_t *values, const int64_t *offsets, const int64_t *lengths,
                        size_t count, size_t per_message, gr_result_t *result) {
    if (gr_client_in_flight(client)) return GR_CLIENT_PROTOCOL;
    if (per_message == 0 || per_message > GR_GROUP_MAX_ITEMS) per_message = 128;
    gr_bytes_t *items = malloc(per_message * sizeof *items);
    if (!items) return GR_CLIENT_NO_MEMORY;
    client->arena_length = 0;
    push_batch_t batch = {result, 0, 0};
    gr_result_t scratch;
    gr_request_t request;
    memset(&request, 0, sizeof request);
    memset(result, 0, sizeof *result);
    request.template_id = GR_T_PUSH;
    request.end = end;
    request.key.data = key;
    request.key.length = (uint32_t)key_length;
    request.items = items;
    int status = GR_CLIENT_OK;
    for (size_t done = 0; done < count && status == GR_CLIENT_OK;) {
        size_t n = count - done < per_message ? count - done : per_message;
        for (size_t i = 0; i < n; i++) {
            items[i].data = values + offsets[done + i];
            items[i].length = (uint32_t)lengths[done + i];
        }
        request.item_count = (uint32_t)n;
        /* Keep the arena from growing without bound over a long batch: every reply but the
         * last (or the first error) is dropped once seen. */
        if (!batch.have_error && gr_client_in_flight(client) == 0) client->arena_length = 0;
        status = pipelined_send(client, &request, &scratch, push_sink, &batch);
        done += n;
    }
    while (status == GR_CLIENT_OK && gr_client_in_flight(client)) {
        status = receive_into(client, &scratch);
        if (status == GR_CLIENT_OK) push_sink(client, &scratch, &batch);
    }
    if (batch.have_error) result->data = client->arena + batch.error_offset;
    free(items);
    return status;
}

int gr_client_ping_loop(gr_client_t *client, size_t n, int64_t *latencies_ns) {
    gr_result_t result;
    for (size_t i = 0; i < n; i++) {
        int64_t start = gr_monotonic_ns();
        gr_request_t request;
        memset(&request, 0, sizeof request);
        request.template_id = GR_T_PING;
        int status = gr_client_call(client, &request, &result);   /* a C caller: no plain output */
        if (status != GR_CLIENT_OK) return status;
        latencies_ns[i] = gr_monotonic_ns() - start;
    }
    return GR_CLIENT_OK;
}

typedef struct simple_batch {
    uint8_t *kinds;
    int64_t *integers, *offsets, *lengths;
    size_t next;
} simple_batch_t;

static void simple_sink(gr_client_t *client, gr_result_t *reply, void *context) {
    simple_batch_t *batch = context;
    size_t i = batch->next++;
    batch->integers[i] = reply->integer;
    batch->offsets[i] = reply->data ? reply->data - client->arena : 0;
    batch->lengths[i] = (int64_t)reply->length;
    switch (reply->template_id) {
    case GR_T_BULK_REPLY: batch->kinds[i] = reply->is_nil ? 1 : 0; break;
    case GR_T_INTEGER_REPLY: batch->kinds[i] = 2; break;
    case GR_T_STATUS_REPLY: batch->kinds[i] = 3; break;
    case GR_T_ERROR_REPLY: batch->kinds[i] = 4; break;
    default: batch->kinds[i] = 5; break;
    }
}

int gr_client_execute_packed(gr_client_t *client, const uint8_t *packed, size_t length, size_t count,
                             uint8_t *kinds, int64_t *integers, int64_t *offsets, int64_t *lengths) {
    enum { HEADER = 20 };
    if (gr_client_in_flight(client)) return GR_CLIENT_PROTOCOL;
    /* Check the whole buffer before sending anything, so a bad one leaves nothing in flight. */
    size_t at = 0;
    for (size_t i = 0; i < count; i++) {
        if (length - at < HEADER) return GR_CLIENT_ENCODE;
        uint32_t key_length;
        int32_t value_length;
        memcpy(&key_length, packed + at + 12, 4);
        memcpy(&value_length, packed + at + 16, 4);
        size_t body = (size_t)key_length + (value_length > 0 ? (size_t)value_length : 0);
        if (length - at - HEADER < body) return GR_CLIENT_ENCODE;
        at += HEADER + body;
    }
    if (at != length) return GR_CLIENT_ENCODE;
    client->arena_length = 0;
    simple_batch_t batch = {kinds, integers, offsets, lengths, 0};
    gr_result_t scratch;
    gr_bytes_t value;
    gr_request_t request;
    at = 0;
    for (size_t i = 0; i < count; i++) {
        const uint8_t *h = packed + at;
        uint16_t template_id;
        int64_t a;
        uint32_t key_length;
        int32_t value_length;
        memcpy(&template_id, h, 2);
        memcpy(&a, h + 4, 8);
        memcpy(&key_length, h + 12, 4);
        memcpy(&value_length, h + 16, 4);
        size_t body = (size_t)key_length + (value_length > 0 ? (size_t)value_length : 0);
        memset(&request, 0, sizeof request);
        request.template_id = template_id;
        request.end = h[2];
        request.flag = h[3];
        request.index = a;
        request.key.data = h + HEADER;
        request.key.length = key_length;
        if (value_length >= 0) {
            value.data = h + HEADER + key_length;
            value.length = (uint32_t)value_length;
            if (template_id == GR_T_PUSH) {
                request.items = &value;
                request.item_count = 1;
            } else {
                request.arg1 = value;
            }
        }
        at += HEADER + body;
        int status = pipelined_send(client, &request, &scratch, simple_sink, &batch);
        if (status != GR_CLIENT_OK) return status;
    }
    while (gr_client_in_flight(client)) {
        int status = receive_into(client, &scratch);
        if (status != GR_CLIENT_OK) return status;
        simple_sink(client, &scratch, &batch);
    }
    return GR_CLIENT_OK;
}

/* ---- for client_pubsub.c (client.h's reader section; not in the cffi API) ---- */

gr_ring_t *gr_client_reply_ring(gr_client_t *client) { return &client->replies; }
struct gr_client_pubsub **gr_client_pubsub_state(gr_client_t *client) { return &client->pubsub; }

int gr_client_wait_replies(gr_client_t *client, int64_t timeout_ns) {
    int64_t timeout = client->timeout_ns, extra = client->blocking_extra_ns;
    int forever = client->blocking_forever;
    client->timeout_ns = timeout_ns;
    client->blocking_extra_ns = 0;
    client->blocking_forever = 0;
    int status = wait_for_reply(client);
    client->timeout_ns = timeout;
    client->blocking_extra_ns = extra;
    client->blocking_forever = forever;
    return status;
}

void gr_client_note_reply(gr_client_t *client, uint64_t request_id) {
    if (request_id == client->next_reply_id && gr_client_in_flight(client) > 0) client->next_reply_id++;
}
