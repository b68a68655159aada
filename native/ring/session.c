/* session.c — ring sessions on the server side; the design and the waiting protocol are
 * described in session.h. The ring itself is ring.c; replies are encoded by sbe_reply.c.
 */
#include "ring/session.h"
#include "core/clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "exec/pause.h"
#include "exec/pubsub.h"
#include "exec/tracking.h"
#include "ring/codec.h"
#include "ring/fragment.h"
#include "ring/ring.h"
#include "ring/sbe_reply.h"

#define BATCH_LIMIT 1024     /* requests per session per pass, so one busy session cannot starve others */
#define REASSEMBLY_KEEP (4u << 20)   /* a reassembly buffer larger than this is freed after its message */

typedef struct gr_session {
    uint64_t id;
    gr_rings_t *rings;
    gr_connection_t state;    /* selected db, name: registered with the db */
    gr_ring_t requests;       /* client produces, server consumes */
    gr_ring_t replies;        /* server produces, client consumes */
    gr_sbe_reply_t writer;    /* staged replies not yet in the reply ring */
    size_t backlog_limit;     /* stop reading requests while this many reply bytes wait */
    gr_reassembly_t request;  /* a request arriving in fragments (ring/fragment.h) */
    int64_t soft_limit_since_ms;   /* Pub/Sub output over the soft limit since (0: not over) */
    int reply_doorbell_fd;    /* the client's eventfd, written with every wake (-1: none) */
    int executing;            /* one of its requests runs now (its own writes' invalidations) */
    size_t reply_mark;        /* staged bytes when that request started: where its reply begins */
} gr_session_t;

struct gr_rings {
    gr_server_t *db;
    gr_session_t **sessions;
    size_t count, capacity;
    gr_request_t request;     /* decode scratch, items shared by every session (grown on demand) */
    int corrupt_pending;      /* a ring of some session was found corrupt: the server closes it */
};

#define INITIAL_ITEMS 1024

static int deliver_push(gr_subscriber_t *subscriber, gr_pubsub_kind_t kind, gr_bytes_t pattern,
                        gr_bytes_t channel, gr_bytes_t payload);
static void deliver_invalidation(gr_connection_t *target, int form, const gr_bytes_t *keys, size_t count,
                                 int64_t redirect_id);
static void bump_invalidation_epoch(gr_session_t *session);

size_t gr_ring_segment_bytes(uint64_t capacity) { return gr_ring_segment_size(capacity); }

gr_rings_t *gr_rings_new(gr_server_t *db) {
    gr_rings_t *rings = calloc(1, sizeof *rings);
    if (!rings) return NULL;
    rings->db = db;
    rings->request.items = calloc(INITIAL_ITEMS, sizeof *rings->request.items);
    rings->request.item_capacity = INITIAL_ITEMS;
    if (!rings->request.items) { free(rings); return NULL; }
    return rings;
}

static void session_free(gr_rings_t *rings, gr_session_t *session) {
    /* A tracking client whose session ends (CLIENT KILL, a closed control socket) hears no more
     * invalidations: the epoch tells its near-cache to forget everything, and its next call
     * finds the session gone. */
    if (session->state.tracking) bump_invalidation_epoch(session);
    gr_connection_unregister(rings->db, &session->state);
    gr_sbe_reply_free(&session->writer);
    gr_reassembly_free(&session->request);
    free(session);
}

void gr_rings_free(gr_rings_t *rings) {
    if (!rings) return;
    for (size_t i = 0; i < rings->count; i++) session_free(rings, rings->sessions[i]);
    free(rings->sessions);
    free(rings->request.items);
    free(rings);
}

int gr_rings_add_session(gr_rings_t *rings, uint64_t session_id,
                         void *request_memory, size_t request_memory_size,
                         void *reply_memory, size_t reply_memory_size,
                         uint64_t capacity, char *error, size_t error_size) {
    gr_session_t *session = calloc(1, sizeof *session);
    if (!session) { snprintf(error, error_size, "out of memory"); return -1; }
    session->id = session_id;
    session->reply_doorbell_fd = -1;
    session->rings = rings;
    /* The server hands over new segments, which read as zero: only the headers are written,
     * so an idle session costs two header pages, not 2 x capacity of zeroing and RSS. */
    if (gr_ring_init_fresh(&session->requests, request_memory, request_memory_size, capacity,
                           GR_SCHEMA_ID, GR_SCHEMA_VERSION, error, error_size) != 0 ||
        gr_ring_init_fresh(&session->replies, reply_memory, reply_memory_size, capacity,
                           GR_SCHEMA_ID, GR_SCHEMA_VERSION, error, error_size) != 0) {
        free(session);
        return -1;
    }
    if (gr_sbe_reply_init(&session->writer) != 0) {
        snprintf(error, error_size, "out of memory");
        free(session);
        return -1;
    }
    session->backlog_limit = capacity / 2;
    if (rings->count == rings->capacity) {
        size_t grown_capacity = rings->capacity ? rings->capacity * 2 : 8;
        gr_session_t **grown = realloc(rings->sessions, grown_capacity * sizeof *grown);
        if (!grown) { gr_sbe_reply_free(&session->writer); free(session); snprintf(error, error_size, "out of memory"); return -1; }
        rings->sessions = grown;
        rings->capacity = grown_capacity;
    }
    rings->sessions[rings->count++] = session;
    gr_connection_register(rings->db, &session->state, (int64_t)session_id, GR_CONN_RING);
    session->state.reply = &session->writer.base;
    session->state.reply_request_id = &session->writer.request_id;
    session->state.subscriber.owner = session;
    session->state.subscriber.deliver = deliver_push;
    session->state.invalidate = deliver_invalidation;
    rings->db->stats.connected_ring_sessions = (int64_t)rings->count;
    return 0;
}

void gr_rings_remove_session(gr_rings_t *rings, uint64_t session_id) {
    for (size_t i = 0; i < rings->count; i++) {
        if (rings->sessions[i]->id != session_id) continue;
        session_free(rings, rings->sessions[i]);
        rings->sessions[i] = rings->sessions[--rings->count];
        break;
    }
    rings->db->stats.connected_ring_sessions = (int64_t)rings->count;
}

size_t gr_rings_session_count(const gr_rings_t *rings) { return rings->count; }

void gr_rings_set_reply_doorbell(gr_rings_t *rings, uint64_t session_id, int fd) {
    for (size_t i = 0; i < rings->count; i++)
        if (rings->sessions[i]->id == session_id) rings->sessions[i]->reply_doorbell_fd = fd;
}

/* Wake a client that said it sleeps on its reply ring: the futex, and its eventfd if it gave
 * one (an event loop waits on that). The caller's should_wake check fenced after the records'
 * release stores and read the client's sleeper flag. */
static void wake_client(gr_session_t *session) {
    gr_ring_futex_wake(&session->replies);
    if (session->reply_doorbell_fd >= 0) {
        uint64_t one = 1;
        ssize_t ignored = write(session->reply_doorbell_fd, &one, sizeof one);
        (void)ignored;
    }
}

int gr_rings_authenticate_session(gr_rings_t *rings, uint64_t session_id, const uint8_t *username,
                                  size_t username_length, const uint8_t *password, size_t password_length) {
    for (size_t i = 0; i < rings->count; i++) {
        if (rings->sessions[i]->id != session_id) continue;
        gr_acl_user_t *user = gr_db_credentials_user(rings->db, username, username_length, password, password_length);
        if (!user) return -1;
        rings->sessions[i]->state.user = user;
        return 0;
    }
    return -1;
}

void gr_rings_set_session_peer(gr_rings_t *rings, uint64_t session_id, int control_fd, int32_t pid,
                               const char *addr, const char *name) {
    for (size_t i = 0; i < rings->count; i++) {
        if (rings->sessions[i]->id != session_id) continue;
        gr_connection_t *state = &rings->sessions[i]->state;
        state->fd = control_fd;
        state->pid = pid;
        snprintf(state->addr, sizeof state->addr, "%s", addr);
        snprintf(state->laddr, sizeof state->laddr, "ring");
        snprintf(state->name, sizeof state->name, "%s", name);
    }
}

/* The client wrote an impossible request record, or moved its reply ring's head where no
 * consumer could put it: the session is no longer served, and the server closes it. */
static int session_corrupt(const gr_session_t *session) {
    return gr_ring_is_corrupt(&session->requests) || gr_ring_is_corrupt(&session->replies);
}

/* ---- The session as a Pub/Sub subscriber (exec/pubsub.h) ----
 *
 * A message for a subscribed session is one PushMessage record. With nothing staged, it is
 * encoded straight into the reply ring (a claim, the codec writing in place, a commit) and a
 * sleeping client is woken; otherwise it is staged behind what waits (sbe_reply.c), so the
 * ring holds replies and messages in the order the server made them. The staged bytes are the
 * session's output buffer: past client-output-buffer-limit's pubsub class (hard, or soft for
 * longer than its seconds, as Redis's checkClientOutputBufferLimits) the session is closed as
 * CLIENT KILL closes it, and the publisher goes on: nothing here ever waits for the client. */

static int over_pubsub_output_limit(gr_session_t *session, gr_server_t *db) {
    const int64_t *limit = db->config.output_limit[GR_CLIENT_CLASS_PUBSUB];
    int64_t used = (int64_t)gr_sbe_reply_pending_bytes(&session->writer);
    int hard = limit[GR_LIMIT_HARD] && used >= limit[GR_LIMIT_HARD];
    int soft = limit[GR_LIMIT_SOFT] && used >= limit[GR_LIMIT_SOFT];
    if (soft) {
        int64_t now = db->now_ms;
        if (session->soft_limit_since_ms == 0) {
            session->soft_limit_since_ms = now ? now : 1;
            soft = 0;
        } else if (now - session->soft_limit_since_ms <= limit[GR_LIMIT_SOFT_SECONDS] * 1000) {
            soft = 0;
        }
    } else {
        session->soft_limit_since_ms = 0;
    }
    return hard || soft;
}

static int deliver_push(gr_subscriber_t *subscriber, gr_pubsub_kind_t kind, gr_bytes_t pattern,
                        gr_bytes_t channel, gr_bytes_t payload) {
    gr_session_t *session = subscriber->owner;
    gr_server_t *db = session->rings->db;
    if (session->state.kill_requested) return GR_PUBSUB_OVER_LIMIT;
    gr_reply_message_t push = {0};
    push.template_id = GR_T_PUSH_MESSAGE;
    push.push_kind = (uint8_t)kind;
    push.pattern = pattern;
    push.channel = channel;
    push.text = payload;
    gr_sbe_reply_t *writer = &session->writer;
    if (gr_sbe_reply_pending_bytes(writer) == 0 && writer->depth == 0 && !session_corrupt(session)) {
        size_t need = gr_reply_encoded_size(&push), length = 0;
        uint8_t *record;
        if (need <= session->replies.max_message_length &&
            gr_ring_claim(&session->replies, GR_T_PUSH_MESSAGE, need, &record) == GR_RING_OK) {
            gr_encode_reply(&push, record, need, &length);   /* sized above: cannot fail */
            gr_ring_commit(&session->replies, record);
            /* The commit's release store published the record; the wake check's full fence
             * orders it before we read the client's sleeper flag (ring.h's protocol). */
            if (gr_ring_producer_should_wake(&session->replies)) wake_client(session);
            return GR_PUBSUB_ACCEPTED;
        }
    }
    int staged = gr_sbe_reply_stage_push(writer, &push);
    session->state.output_buffer_bytes = (int64_t)gr_sbe_reply_pending_bytes(writer);
    if (staged == 0 && !over_pubsub_output_limit(session, db)) return GR_PUBSUB_ACCEPTED;
    /* Redis: "scheduled to be closed ASAP for overcoming of output buffer limits". */
    session->state.kill_requested = 1;
    session->state.kill_reason = "closed for overcoming of output buffer limits";
    db->kills_pending++;
    return GR_PUBSUB_OVER_LIMIT;
}


/* ---- The session as a CLIENT TRACKING client (exec/tracking.h) ----
 *
 * An invalidation is one InvalidateMessage record per key (or one with flushAll for a flush).
 * Another session's goes straight into its reply ring while the write runs, so it is in the
 * ring before the writer's reply goes anywhere. When it cannot go in at once (replies staged
 * because the ring was full, the ring full now, a key longer than one record) it is not
 * staged: the reply ring header's invalidation epoch is bumped instead, and the client drops
 * its whole cache when it sees the epoch move. A staged invalidation would be invisible to a
 * client that checks its ring before answering from its cache, after the writer was answered.
 * The running session's own write is different: its reply is staged (the handler replies,
 * then touches the key), and the invalidation is staged in front of that reply, so the client
 * takes it while waiting for the reply. Nothing here ever waits. */

static void bump_invalidation_epoch(gr_session_t *session) {
    gr_ring_header_t *header = session->replies.header;
    uint64_t epoch = __atomic_load_n(&header->invalidation_epoch, __ATOMIC_RELAXED);
    /* Release, and before the writer's reply is committed (itself a release store): a client
     * told of that reply, by any means, then reads the new epoch. */
    __atomic_store_n(&header->invalidation_epoch, epoch + 1, __ATOMIC_RELEASE);
    session->rings->db->stats.ring_invalidation_epochs++;
}

static int write_invalidation(gr_session_t *session, const gr_reply_message_t *message) {
    size_t need = gr_reply_encoded_size(message), length = 0;
    uint8_t *record;
    if (need > session->replies.max_message_length ||
        gr_ring_claim(&session->replies, GR_T_INVALIDATE_MESSAGE, need, &record) != GR_RING_OK)
        return -1;
    gr_encode_reply(message, record, need, &length);   /* sized above: cannot fail */
    gr_ring_commit(&session->replies, record);
    return 0;
}

static void deliver_invalidation(gr_connection_t *target, int form, const gr_bytes_t *keys, size_t count,
                                 int64_t redirect_id) {
    (void)redirect_id;
    if (form == GR_INVALIDATE_REDIR_BROKEN) return;   /* RESP3's notice; a ring client redirects nowhere */
    gr_session_t *session = target->subscriber.owner;
    gr_sbe_reply_t *writer = &session->writer;
    gr_reply_message_t message = {0};
    message.template_id = GR_T_INVALIDATE_MESSAGE;
    size_t n = keys ? count : 1;
    if (!keys) message.is_nil = 1;   /* flushAll */
    if (session_corrupt(session)) return;
    if (session->executing) {
        /* Its own write: the handler has usually staged its reply already; the invalidation
         * goes in front of that reply, so the client takes it before its reply. */
        for (size_t i = 0; i < n; i++) {
            if (keys) message.text = keys[i];
            long staged = gr_sbe_reply_insert_push(writer, session->reply_mark, &message);
            if (staged < 0) {
                bump_invalidation_epoch(session);
                return;
            }
            session->reply_mark += (size_t)staged;   /* the next key after this one, still before the reply */
        }
        session->state.output_buffer_bytes = (int64_t)gr_sbe_reply_pending_bytes(writer);
        return;
    }
    if (gr_sbe_reply_pending_bytes(writer) != 0 || writer->depth != 0) {
        bump_invalidation_epoch(session);
        return;
    }
    int wrote = 0;
    for (size_t i = 0; i < n; i++) {
        if (keys) message.text = keys[i];
        if (write_invalidation(session, &message) != 0) {
            bump_invalidation_epoch(session);   /* covers this key and the rest */
            break;
        }
        wrote = 1;
    }
    if (wrote && gr_ring_producer_should_wake(&session->replies)) wake_client(session);
}

/* Copy staged replies into the reply ring, as much as fits (a message larger than one record
 * in fragments, resumed where it stopped); wake a sleeping client. */
static void flush_replies(gr_session_t *session) {
    size_t offset = 0, next = 0;
    uint32_t template_id, length;
    const uint8_t *message;
    int wrote = 0;
    while (gr_sbe_reply_frame_at(&session->writer, offset, &template_id, &message, &length, &next)) {
        size_t before = session->writer.head_sent;
        gr_ring_status_t status = gr_fragment_write(&session->replies, (uint16_t)template_id, message, length,
                                                    &session->writer.head_sent);
        if (session->writer.head_sent != before) wrote = 1;
        if (status != GR_RING_OK) break;
        session->writer.head_sent = 0;
        offset = next;
    }
    if (offset) {
        gr_sbe_reply_consume(&session->writer, offset);
        session->state.output_buffer_bytes = (int64_t)gr_sbe_reply_pending_bytes(&session->writer);
    }
    if (wrote && gr_ring_producer_should_wake(&session->replies)) wake_client(session);
}

typedef struct drain_context {
    gr_rings_t *rings;
    gr_session_t *session;
} drain_context_t;

static void reply_malformed(gr_session_t *session, gr_server_t *db, gr_codec_status_t status) {
    static const gr_error_code_t codes[] = {
        [GR_CODEC_TRUNCATED] = GR_ERR_MALFORMED, [GR_CODEC_BAD_SCHEMA] = GR_ERR_BAD_SCHEMA,
        [GR_CODEC_UNKNOWN_TEMPLATE] = GR_ERR_UNKNOWN_TEMPLATE, [GR_CODEC_SHORT_BLOCK] = GR_ERR_MALFORMED,
        [GR_CODEC_VAR_DATA_OVERRUN] = GR_ERR_MALFORMED, [GR_CODEC_BAD_ENUM] = GR_ERR_MALFORMED,
        [GR_CODEC_TOO_MANY_ITEMS] = GR_ERR_TOO_LARGE, [GR_CODEC_NO_SPACE] = GR_ERR_MALFORMED,
    };
    char text[128];
    int n = snprintf(text, sizeof text, "ERR malformed request: %s", gr_codec_status_text(status));
    db->stats.ring_malformed++;
    session->writer.request_id = 0;   /* the request id could not be read */
    gr_reply_error(&session->writer.base, codes[status] ? codes[status] : GR_ERR_MALFORMED, text, (size_t)n);
}

/* Grow the decode scratch to a group count the codec found backed by the message's bytes
 * (gr_wire_group_header checks count x smallest entry against what is left). */
static int fit_items(gr_rings_t *rings, uint32_t count) {
    if (rings->request.item_capacity >= count) return 0;
    gr_bytes_t *grown = realloc(rings->request.items, (size_t)count * sizeof *grown);
    if (!grown) return -1;
    rings->request.items = grown;
    rings->request.item_capacity = count;
    return 0;
}

static void reply_request_error(gr_session_t *session, gr_server_t *db, gr_error_code_t code, const char *text) {
    db->stats.ring_malformed++;
    session->writer.request_id = 0;   /* the request id could not be read */
    gr_reply_error(&session->writer.base, code, text, strlen(text));
}

/* Redis's proto-max-bulk-len for every argument of a request that came in fragments (one
 * that fits a ring record is smaller than the limit's smallest setting, 1 MB). */
static int argument_too_long(const gr_request_t *request, int64_t limit) {
    if (request->key.length > limit || request->arg1.length > limit || request->arg2.length > limit) return 1;
    for (uint32_t i = 0; i < request->item_count; i++)
        if (request->items[i].length > limit) return 1;
    return 0;
}

/* 1 when CLIENT PAUSE holds the request (exec/pause.h): it stays in the ring, unread. */
static int execute_message(drain_context_t *drain, int32_t type, const uint8_t *payload, size_t length,
                           int reassembled) {
    gr_session_t *session = drain->session;
    gr_server_t *db = drain->rings->db;
    gr_request_t *request = &drain->rings->request;
    gr_codec_status_t status = gr_decode_request(payload, length, request);
    if (status == GR_CODEC_TOO_MANY_ITEMS && fit_items(drain->rings, request->item_count) == 0)
        status = gr_decode_request(payload, length, request);
    if (status == GR_CODEC_OK && type != (int32_t)request->template_id) status = GR_CODEC_UNKNOWN_TEMPLATE;
    if (status != GR_CODEC_OK) {
        reply_malformed(session, db, status);
        return 0;
    }
    if (reassembled && argument_too_long(request, db->config.proto_max_bulk_len)) {
        session->writer.request_id = request->request_id;
        gr_reply_error(&session->writer.base, GR_ERR_PROTOCOL, "ERR Protocol error: invalid bulk length",
                       strlen("ERR Protocol error: invalid bulk length"));
        return 0;
    }
    uint64_t request_id = session->writer.request_id;
    session->writer.request_id = request->request_id;
    session->executing = 1;                               /* tracking: this session's own write */
    session->reply_mark = session->writer.stage_length;   /* inserts its invalidation before its reply */
    const int held = gr_db_execute(db, &session->state, request, &session->writer.base);
    session->executing = 0;
    if (held) {   /* CLIENT PAUSE: the request stays unread in the ring */
        session->writer.request_id = request_id;
        return 1;
    }
    db->stats.ring_messages++;
    return 0;
}

static int handle_request(void *context, int32_t type, const uint8_t *payload, size_t length) {
    drain_context_t *drain = context;
    gr_session_t *session = drain->session;
    if (session->state.kill_requested) return -1;                          /* killed: leave the rest */
    /* A parked session (behind a BLPOP) or one with a reply backlog executes nothing now, but
     * keeps gathering the fragments of a large request, so its client can finish writing it
     * (the ring would otherwise stay full with the client mid-message); the END waits. */
    int waiting = session->state.blocked || session->state.pause_held ||
                  session->writer.stage_length > session->backlog_limit;
    if (type == GR_FRAGMENT_TYPE) {
        if (waiting && gr_fragment_is_end(payload, length)) return -1;
        /* a paused server: a request in fragments waits whole (its END unread) whatever it is */
        if (gr_fragment_is_end(payload, length) && gr_pause_hold_connection(drain->rings->db, &session->state)) return -1;
        gr_reassembly_t *reassembly = &session->request;
        reassembly->limit = (uint64_t)drain->rings->db->config.client_query_buffer_limit;
        switch (gr_reassembly_take(reassembly, payload, length)) {
        case GR_REASSEMBLY_MORE:
            return 0;
        case GR_REASSEMBLY_COMPLETE:
            execute_message(drain, reassembly->template_id, reassembly->buffer, reassembly->length, 1);
            gr_reassembly_trim(reassembly, REASSEMBLY_KEEP);
            return 0;
        case GR_REASSEMBLY_TOO_LARGE:
            /* Redis closes a client whose query buffer passes the limit; this session's
             * request is refused with the limit named, and the session goes on. */
            reply_request_error(session, drain->rings->db, GR_ERR_TOO_LARGE,
                                "ERR Protocol error: request larger than client-query-buffer-limit");
            return 0;
        case GR_REASSEMBLY_NO_MEMORY:
            reply_request_error(session, drain->rings->db, GR_ERR_OUT_OF_MEMORY,
                                "OOM command not allowed when used memory > 'maxmemory'.");
            return 0;
        case GR_REASSEMBLY_BROKEN:
            reply_malformed(session, drain->rings->db, GR_CODEC_TRUNCATED);
            return 0;
        }
        return 0;
    }
    if (waiting) return -1;
    if (session->request.active) gr_reassembly_reset(&session->request);   /* the client gave that one up */
    return execute_message(drain, type, payload, length, 0) ? -1 : 0;
}

int64_t gr_rings_poll(gr_rings_t *rings) {
    int64_t executed = 0;
    gr_db_begin_batch(rings->db);
    for (size_t i = 0; i < rings->count; i++) {
        gr_session_t *session = rings->sessions[i];
        if (session_corrupt(session)) {                         /* waiting for the server to close it */
            rings->corrupt_pending = 1;
            continue;
        }
        if (session->state.kill_requested) continue;            /* CLIENT KILL: likewise */
        if (&session->state == rings->db->busy_caller) continue; /* its busy script is running (db.h) */
        if (session->writer.stage_length) {
            gr_propagate_sync(rings->db);    /* the append-only log first: appendfsync always */
            flush_replies(session);
        }
        /* A parked or backlogged session is still read: handle_request takes only the
         * fragments of a request in progress from it. Reading an empty ring costs one load. */
        if ((session->state.blocked || session->state.pause_held || session->writer.stage_length > session->backlog_limit) &&
            gr_ring_is_empty(&session->requests))
            continue;
        drain_context_t drain = {rings, session};
        size_t n = gr_ring_read(&session->requests, handle_request, &drain, BATCH_LIMIT);
        if (n) {
            executed += (int64_t)n;
            gr_propagate_sync(rings->db);    /* the append-only log first: appendfsync always */
            flush_replies(session);
        }
        if (session_corrupt(session)) rings->corrupt_pending = 1;
    }
    gr_db_end_batch(rings->db);
    return executed;
}

/* Level-triggered epoll_wait with a zero timeout reports readiness without consuming it:
 * the Python loop sees the same events in its own select afterwards. */
static int sockets_ready(int watch_fd) {
    struct epoll_event event;
    return watch_fd >= 0 && epoll_wait(watch_fd, &event, 1, 0) > 0;
}

int64_t gr_rings_run(gr_rings_t *rings, int64_t spin_ns, int64_t max_ns, int watch_fd, int64_t watch_interval_ns) {
    int64_t start = gr_monotonic_ns(), last_work = start, last_watch = start, executed = 0;
    for (uint32_t pass = 0;; pass++) {
        int64_t n = gr_rings_poll(rings);
        if (n) executed += n;
        if (rings->db->kills_pending || rings->db->woken_pending || rings->corrupt_pending)
            break;   /* the server closes / flushes / closes them */
        /* Reading the clock costs ~20 ns; check it every 64 idle passes, or after work. */
        if (n || (pass & 63) == 0) {
            int64_t now = gr_monotonic_ns();
            if (n) last_work = now;
            if (rings->db->blocked_count && gr_db_expire_blocked(rings->db)) last_work = now;
            if (now - start >= max_ns || now - last_work >= spin_ns) break;
            if (now - last_watch >= watch_interval_ns) {
                last_watch = now;
                if (sockets_ready(watch_fd)) break;
            }
        }
        if (!n) __builtin_ia32_pause();
    }
    return executed;
}

int gr_rings_prepare_sleep(gr_rings_t *rings) {
    int backlog = 0;
    for (size_t i = 0; i < rings->count; i++) {
        gr_session_t *session = rings->sessions[i];
        /* Idle: the moment to look at the reply ring's head too (claims look at it only
         * when the ring seems full), so a client that corrupted it is closed now. */
        if (!gr_ring_check_head(&session->replies)) rings->corrupt_pending = 1;
        if (session_corrupt(session)) continue;
        /* Replies waiting for room: the client frees room without telling us, so sleep short. */
        if (session->writer.stage_length) backlog = 1;
        (void)gr_ring_prepare_sleep(&session->requests);
        if (gr_ring_still_empty_after_prepare(&session->requests)) continue;
        int waiting = session->state.blocked || session->state.pause_held ||
                      session->writer.stage_length > session->backlog_limit;
        /* A parked or backlogged session's waiting requests are not work until it is served,
         * but the fragments of a request its client is still writing are: gathered now,
         * or the client, mid-message, waits for room that nobody frees. */
        drain_context_t drain = {rings, session};
        if (!waiting || gr_ring_read(&session->requests, handle_request, &drain, BATCH_LIMIT) > 0) {
            gr_rings_end_sleep(rings);
            return 0;
        }
    }
    return backlog ? 2 : 1;
}

void gr_rings_end_sleep(gr_rings_t *rings) {
    for (size_t i = 0; i < rings->count; i++) gr_ring_cancel_sleep(&rings->sessions[i]->requests);
}

uint64_t gr_rings_corrupt_session(gr_rings_t *rings) {
    if (!rings->corrupt_pending) return 0;
    for (size_t i = 0; i < rings->count; i++)
        if (session_corrupt(rings->sessions[i])) return rings->sessions[i]->id;
    rings->corrupt_pending = 0;   /* every corrupt session has been closed */
    return 0;
}
