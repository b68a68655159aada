/* client_pubsub.c — a subscribed ring session's reader (the format it writes is in
 * client_pubsub.h; the server's side is ring/session.c's subscriber; RingClient.pubsub() in
 * goblin_ring/client/ring_pubsub.py is its Python half).
 *
 * Records are taken from the reply ring with gr_ring_read, one handler call each, and written
 * straight into the caller's buffer as marshal; a record whose item does not fit is left in
 * the ring (handler answers -1) for the next call. A message that came in fragments is kept
 * reassembled until it has been written. PushMessages an ordinary call met first (stashed by
 * client.c) are written before anything still in the ring. InvalidateMessages (a session that
 * turned CLIENT TRACKING on) are no items: they go to client.c's keeping, as in a reply wait.
 */
#include "client/client_pubsub.h"

#include <stdlib.h>
#include <string.h>

#include "client/client_pubsub_state.h"
#include "client/plain_reply.h"
#include "core/clock.h"
#include "ring/fragment.h"

uint64_t gr_client_pubsub_messages(const gr_client_t *client) {
    struct gr_client_pubsub *state = *gr_client_pubsub_state((gr_client_t *)client);
    return state ? state->items : 0;
}

/* ---- marshal ---- */

typedef struct reader {
    gr_client_t *client;
    struct gr_client_pubsub *state;
    uint8_t *out;
    size_t capacity, length;         /* length: bytes written so far */
    uint32_t count, max_count;
    size_t needed;                   /* the first item did not fit: the capacity it needs */
    int status;
} reader_t;

static uint8_t *put_u32(uint8_t *p, uint32_t value) {
    p[0] = (uint8_t)value, p[1] = (uint8_t)(value >> 8), p[2] = (uint8_t)(value >> 16), p[3] = (uint8_t)(value >> 24);
    return p + 4;
}
static uint8_t *put_short_text(uint8_t *p, const char *text) {   /* 'z': a short ASCII str */
    size_t n = strlen(text);
    *p++ = 'z';
    *p++ = (uint8_t)n;
    memcpy(p, text, n);
    return p + n;
}
static uint8_t *put_bytes(uint8_t *p, gr_bytes_t bytes) {
    *p++ = 's';
    p = put_u32(p, bytes.length);
    if (bytes.length) memcpy(p, bytes.data, bytes.length);
    return p + bytes.length;
}
static size_t short_text_size(const char *text) { return 2 + strlen(text); }

static const char *const kind_names[] = {"message", "pmessage", "smessage"};

/* Room for n bytes at the end of the output, or NULL (then the item is not written: the
 * first item's size is kept in needed). */
static uint8_t *room(reader_t *r, size_t n) {
    if (r->capacity - r->length >= n) return r->out + r->length;
    if (r->count == 0) r->needed = r->length + n;
    return NULL;
}

/* redis-py's message dict. 1: written; 0: does not fit. */
static int write_push(reader_t *r, const gr_reply_message_t *m) {
    const char *type = kind_names[m->push_kind];
    int has_pattern = m->push_kind == GR_PUSH_KIND_PMESSAGE;
    size_t need = 1 + short_text_size("type") + short_text_size(type) + short_text_size("pattern") +
                  (has_pattern ? 5 + m->pattern.length : 1) + short_text_size("channel") + 5 + m->channel.length +
                  short_text_size("data") + 5 + m->text.length + 1;
    uint8_t *p = room(r, need);
    if (!p) return 0;
    *p++ = '{';
    p = put_short_text(p, "type");
    p = put_short_text(p, type);
    p = put_short_text(p, "pattern");
    if (has_pattern) p = put_bytes(p, m->pattern);
    else *p++ = 'N';
    p = put_short_text(p, "channel");
    p = put_bytes(p, m->channel);
    p = put_short_text(p, "data");
    p = put_bytes(p, m->text);
    *p++ = '0';
    r->length += need;
    return 1;
}

static int write_error(reader_t *r, uint16_t code, gr_bytes_t text) {
    size_t need = 2 + short_text_size("error") + 5 + 5 + text.length;
    uint8_t *p = room(r, need);
    if (!p) return 0;
    *p++ = ')';
    *p++ = 3;
    p = put_short_text(p, "error");
    *p++ = 'i';
    p = put_u32(p, code);
    put_bytes(p, text);
    r->length += need;
    return 1;
}

/* ('reply', value) for any reply but an error; ('error', code, text) for an error or an array
 * holding one (the first). 1: written; 0: does not fit. */
static int write_reply(reader_t *r, const gr_reply_message_t *m) {
    if (m->template_id == GR_T_ERROR_REPLY) return write_error(r, m->error_code, m->text);
    gr_result_t result = {0};
    result.template_id = m->template_id;
    result.is_nil = m->is_nil;
    result.error_code = m->error_code;
    result.integer = m->integer;
    result.data = m->text.data;
    result.length = m->text.length;
    result.count = m->element_count;
    result.elements = m->elements;
    if (m->template_id == GR_T_ARRAY_REPLY && m->element_count && m->elements[0].kind == GR_ELEMENT_KIND_NIL_ARRAY)
        result.is_nil = 1, result.shape = 2;
    size_t head = 2 + short_text_size("reply");
    long value = gr_plain_reply_write(&result, 0, NULL, 0);
    if (value < 0) {
        for (uint32_t i = 0; i < m->element_count; i++)
            if (m->elements[i].kind == GR_ELEMENT_KIND_ERROR)
                return write_error(r, (uint16_t)m->elements[i].integer, m->elements[i].bytes);
        gr_bytes_t text = {(const uint8_t *)"ERR reply too deeply nested", 27};
        return write_error(r, GR_ERROR_CODE_GENERIC, text);
    }
    uint8_t *p = room(r, head + (size_t)value);
    if (!p) return 0;
    *p++ = ')';
    *p++ = 2;
    p = put_short_text(p, "reply");
    gr_plain_reply_write(&result, 0, p, (size_t)value);
    r->length += head + (size_t)value;
    return 1;
}

/* One whole message: decode, write. 1 written, 0 does not fit, -1 failed (r->status set). */
static int write_message(reader_t *r, const uint8_t *message, size_t length) {
    gr_reply_message_t *m = &r->state->decoded;
    gr_codec_status_t status = gr_decode_reply(message, length, m);
    if (status == GR_CODEC_TOO_MANY_ITEMS && m->element_count <= length / GR_ARRAY_REPLY_ELEMENT_FIXED) {
        gr_element_t *grown = realloc(m->elements, (size_t)m->element_count * sizeof *grown);
        if (!grown) { r->status = GR_CLIENT_NO_MEMORY; return -1; }
        m->elements = grown;
        m->element_capacity = m->element_count;
        status = gr_decode_reply(message, length, m);
    }
    if (status != GR_CODEC_OK) { r->status = GR_CLIENT_PROTOCOL; return -1; }
    int written = m->template_id == GR_T_PUSH_MESSAGE ? write_push(r, m) : write_reply(r, m);
    if (written == 1) {
        if (m->template_id != GR_T_PUSH_MESSAGE) gr_client_note_reply(r->client, m->request_id);
        r->count++;
        r->state->items++;
    }
    return written;
}

/* A session that tracks (CLIENT TRACKING ON, by hand) finds InvalidateMessages between its
 * messages: not an item for the reader, kept for the client's cache check as an ordinary
 * call's wait keeps them (a handler's answer: 0 go on, 1 stop on a protocol failure). */
static int keep_invalidation(reader_t *r, const uint8_t *payload, size_t length) {
    if (gr_client_cache_stash(r->client, payload, length) == 0) return 0;
    r->status = GR_CLIENT_PROTOCOL;
    return 1;
}

/* Ring handler: one record. 0 go on, 1 stop (taken), -1 stop (left in the ring). */
static int take_record(void *context, int32_t type, const uint8_t *payload, size_t length) {
    reader_t *r = context;
    if (r->count >= r->max_count || r->state->fragments_ready) return -1;
    if (type == GR_FRAGMENT_TYPE) {
        gr_reassembly_status_t status = gr_reassembly_take(&r->state->fragments, payload, length);
        if (status == GR_REASSEMBLY_MORE) return 0;
        if (status != GR_REASSEMBLY_COMPLETE) { r->status = GR_CLIENT_PROTOCOL; return 1; }
        if (r->state->fragments.template_id == GR_T_INVALIDATE_MESSAGE)
            return keep_invalidation(r, r->state->fragments.buffer, r->state->fragments.length);
        int written = write_message(r, r->state->fragments.buffer, r->state->fragments.length);
        if (written == 0) r->state->fragments_ready = 1;   /* consumed from the ring: kept here */
        return written == 1 ? 0 : 1;
    }
    if (type == GR_T_INVALIDATE_MESSAGE) return keep_invalidation(r, payload, length);
    int written = write_message(r, payload, length);
    return written == 1 ? 0 : written == 0 ? -1 : 1;
}

/* What is already out of the ring comes first: a reassembled message, then stashed ones. */
static int write_kept(reader_t *r) {
    struct gr_client_pubsub *state = r->state;
    if (state->fragments_ready && r->count < r->max_count) {
        int written = write_message(r, state->fragments.buffer, state->fragments.length);
        if (written != 1) return written;
        state->fragments_ready = 0;
    }
    while (state->stash_start < state->stash_length && r->count < r->max_count) {
        uint32_t n;
        memcpy(&n, state->stash + state->stash_start, 4);
        int written = write_message(r, state->stash + state->stash_start + 4, n);
        if (written != 1) return written;
        state->stash_start += 4 + (size_t)n;
    }
    return 1;
}

long gr_client_pubsub_read(gr_client_t *client, size_t max_count, int64_t timeout_ns, uint8_t *out,
                           size_t capacity, uint32_t *count, int *status) {
    *count = 0;
    *status = GR_CLIENT_OK;
    if (!client) { *status = GR_CLIENT_CLOSED; return 0; }
    struct gr_client_pubsub *state = gr_client_pubsub_state_of(gr_client_pubsub_state(client));
    if (!state) { *status = GR_CLIENT_NO_MEMORY; return 0; }
    if (capacity < 5) return -(long)5 - 1;
    reader_t r = {client, state, out, capacity, 5, 0, max_count ? (uint32_t)(max_count < UINT32_MAX ? max_count : UINT32_MAX) : 1, 0, 0};
    gr_ring_t *ring = gr_client_reply_ring(client);
    int kept = write_kept(&r);
    /* Read until the count is reached or an item does not fit; when nothing is readable, return
     * what was read, or, with nothing yet, wait within the timeout (a message whose first
     * fragments arrived is gathered across calls: its state is kept). */
    int64_t deadline = timeout_ns < 0 ? INT64_MAX : timeout_ns == 0 ? 0 : gr_monotonic_ns() + timeout_ns;
    while (kept == 1 && !r.status && r.count < r.max_count && !r.needed && !state->fragments_ready) {
        uint32_t before = r.count;
        size_t taken = gr_ring_read(ring, take_record, &r, 0);
        if (r.count != before || taken) continue;
        if (r.count || timeout_ns == 0) break;
        int64_t now = gr_monotonic_ns();
        if (now >= deadline) break;
        int waited = gr_client_wait_replies(client, deadline == INT64_MAX ? -1 : deadline - now);
        if (waited == GR_CLIENT_TIMEOUT) break;
        if (waited != GR_CLIENT_OK) r.status = waited;
    }
    if (r.needed && r.count == 0) return -(long)r.needed - 1;
    out[0] = '[';
    put_u32(out + 1, r.count);
    *count = r.count;
    *status = r.status;
    return (long)r.length;
}

/* ---- the bench's C loops (goblin-ring-bench pubsub, the native column) ---- */

#define SEQUENCE_DIGITS 10

typedef struct sequenced {
    uint64_t *expected, *out_of_order;
    size_t taken, max_count;
    int failed;
} sequenced_t;

static int take_sequenced(void *context, int32_t type, const uint8_t *payload, size_t length) {
    sequenced_t *s = context;
    if (s->taken >= s->max_count || type != GR_T_PUSH_MESSAGE) return -1;
    gr_reply_message_t m;
    memset(&m, 0, sizeof m);
    if (gr_decode_reply(payload, length, &m) != GR_CODEC_OK) { s->failed = 1; return 1; }
    uint64_t sequence = 0;
    int digits = m.text.length >= SEQUENCE_DIGITS;
    for (size_t i = 0; digits && i < SEQUENCE_DIGITS; i++) {
        uint8_t c = m.text.data[i];
        if (c < '0' || c > '9') digits = 0;
        else sequence = sequence * 10 + (uint64_t)(c - '0');
    }
    if (!digits || sequence != *s->expected) (*s->out_of_order)++;
    (*s->expected)++;
    s->taken++;
    return 0;
}

long gr_client_pubsub_take_sequenced(gr_client_t *client, size_t max_count, int64_t timeout_ns,
                                     uint64_t *expected, uint64_t *out_of_order) {
    if (!client) return -GR_CLIENT_CLOSED;
    gr_ring_t *ring = gr_client_reply_ring(client);
    if (gr_ring_is_empty(ring) && timeout_ns != 0) {
        int waited = gr_client_wait_replies(client, timeout_ns);
        if (waited != GR_CLIENT_OK && waited != GR_CLIENT_TIMEOUT) return -waited;
    }
    sequenced_t s = {expected, out_of_order, 0, max_count, 0};
    while (s.taken < max_count && !s.failed && gr_ring_read(ring, take_sequenced, &s, 0) > 0) {}
    if (s.failed) return -GR_CLIENT_PROTOCOL;
    struct gr_client_pubsub *state = gr_client_pubsub_state_of(gr_client_pubsub_state(client));
    if (state) state->items += s.taken;
    return (long)s.taken;
}

static int take_one_push(void *context, int32_t type, const uint8_t *payload, size_t length) {
    int *got = context;
    (void)payload, (void)length;
    if (type != GR_T_PUSH_MESSAGE) return -1;
    *got = 1;
    return 1;
}

int gr_client_pubsub_latency_loop(gr_client_t *publisher, gr_client_t *subscriber, const uint8_t *channel,
                                  size_t channel_length, const uint8_t *payload, size_t payload_length, size_t n,
                                  int64_t *latencies_ns) {
    if (!publisher || !subscriber) return GR_CLIENT_CLOSED;
    size_t data_length = 7 + channel_length + payload_length;
    uint8_t *data = malloc(data_length);
    if (!data) return GR_CLIENT_NO_MEMORY;
    memcpy(data, "PUBLISH", 7);
    memcpy(data + 7, channel, channel_length);
    memcpy(data + 7 + channel_length, payload, payload_length);
    size_t lengths[3] = {7, channel_length, payload_length};
    gr_ring_t *ring = gr_client_reply_ring(subscriber);
    gr_result_t result;
    int status = GR_CLIENT_OK;
    for (size_t i = 0; i < n && status == GR_CLIENT_OK; i++) {
        int64_t start = gr_monotonic_ns();
        status = gr_client_send_argv(publisher, data, data_length, lengths, 3);
        int got = 0;
        while (status == GR_CLIENT_OK && !got) {
            if (gr_ring_read(ring, take_one_push, &got, 1) == 0 && !got) {
                if (!gr_ring_is_empty(ring)) { status = GR_CLIENT_PROTOCOL; break; }   /* not a message */
                status = gr_client_wait_replies(subscriber, 10000000000LL);
            }
        }
        latencies_ns[i] = gr_monotonic_ns() - start;
        if (status == GR_CLIENT_OK) status = gr_client_receive(publisher, &result);
    }
    free(data);
    return status;
}

int gr_client_pubsub_publish_many(gr_client_t *client, const uint8_t *channel, size_t channel_length,
                                  size_t payload_size, uint64_t first_sequence, size_t count, size_t window) {
    if (!client) return GR_CLIENT_CLOSED;
    if (payload_size < SEQUENCE_DIGITS) return GR_CLIENT_ENCODE;
    size_t data_length = 7 + channel_length + payload_size;
    uint8_t *data = malloc(data_length);
    if (!data) return GR_CLIENT_NO_MEMORY;
    memcpy(data, "PUBLISH", 7);
    memcpy(data + 7, channel, channel_length);
    uint8_t *payload = data + 7 + channel_length;
    memset(payload, 'x', payload_size);
    size_t lengths[3] = {7, channel_length, payload_size};
    gr_result_t result;
    int status = GR_CLIENT_OK;
    size_t sent = 0, answered = 0;
    if (window == 0) window = 1;
    while (status == GR_CLIENT_OK && answered < count) {
        while (sent < count && sent - answered < window) {
            uint64_t sequence = first_sequence + sent;
            for (int i = SEQUENCE_DIGITS - 1; i >= 0; i--, sequence /= 10) payload[i] = (uint8_t)('0' + sequence % 10);
            int sending = gr_client_send_argv(client, data, data_length, lengths, 3);
            if (sending == GR_CLIENT_RING_FULL) break;          /* read replies first */
            if (sending != GR_CLIENT_OK) { status = sending; break; }
            sent++;
        }
        if (status == GR_CLIENT_OK && answered < sent) {
            status = gr_client_receive(client, &result);
            answered++;
        }
    }
    free(data);
    return status;
}
