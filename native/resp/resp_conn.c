/* resp_conn.c — a RESP2 connection: the parser, the RESP reply writer (the gr_reply_t of
 * the TCP/UDS transport) and the buffers; resp_conn.h says how the server drives it.
 * Transactions (MULTI/EXEC, WATCH) are exec's (exec/transaction.c), as for ring sessions.
 * Parsing follows Redis's networking.c (processMultibulkBuffer, processInlineBuffer) and
 * sds.c's sdssplitargs for inline quoting; the texts of protocol errors are Redis's.
 */
#include "resp/resp_conn.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/alloc.h"
#include "exec/blocking.h"
#include "exec/tracking.h"
#include "core/bytes.h"

#define READ_CHUNK (16 * 1024)
#define MAX_LINE (64 * 1024)                 /* PROTO_INLINE_MAX_SIZE */
#define BIG_READ (64u * 1024 * 1024)           /* most one recv takes for an argument in progress */
#define TRIM_ABOVE (64u * 1024)                 /* idle buffers larger than this are given back */

typedef struct byte_buffer {
    uint8_t *data;
    size_t length, capacity, start;          /* live bytes are data[start, length) */
} byte_buffer_t;

typedef struct resp_writer {
    gr_reply_t base;
    byte_buffer_t *out;
    const gr_connection_t *state;            /* state->protocol picks RESP2 or RESP3 shapes */
} resp_writer_t;

struct gr_resp_conn {
    gr_server_t *db;
    gr_connection_t state;                   /* id, selected db, protocol, name: registered with db */
    byte_buffer_t in, out;
    resp_writer_t writer;
    const uint8_t **argv;
    size_t *argv_length;
    size_t *argv_offset;                     /* while parsing: each argument's offset from in.start */
    size_t argv_capacity;
    /* The frame being parsed survives across reads (Redis's qb_pos, multibulklen, bulklen),
     * so a frame that arrives in pieces is scanned once: parsing is linear in the bytes
     * received, however the sender paces them. Offsets count from in.start. */
    int in_multibulk;                        /* the *N line has been read */
    int64_t multibulk_left;                  /* arguments still to come */
    int64_t bulk_length;                     /* the current argument's length; -1: its $ line is next */
    size_t parsed_argc;                      /* arguments complete so far */
    size_t parse_at;                         /* where parsing resumes */
    size_t scan_from;                        /* where the search for the current line's end resumes */
    int64_t soft_limit_since_ms;             /* output over the soft limit since (0: not over) */
    const char *close_reason;                /* closed at once, without its output (the server logs it) */
    uint8_t *inline_scratch;                 /* unescaped inline arguments */
    size_t inline_capacity;
    int close_after_write;
};

/* ---- buffers ---- */

static int buffer_reserve(byte_buffer_t *b, size_t extra) {
    if (b->capacity - b->length >= extra) return 0;
    if (b->start) {                          /* slide live bytes down first */
        memmove(b->data, b->data + b->start, b->length - b->start);
        b->length -= b->start;
        b->start = 0;
        if (b->capacity - b->length >= extra) return 0;
    }
    size_t capacity = b->capacity ? b->capacity : 4096;
    while (capacity - b->length < extra) capacity *= 2;
    uint8_t *grown = gr_mem_realloc(b->data, capacity, GR_MEM_SESSION);
    if (!grown) return -1;
    b->data = grown;
    b->capacity = capacity;
    return 0;
}

static void buffer_append(resp_writer_t *w, const void *data, size_t length) {
    if (buffer_reserve(w->out, length) != 0) { w->base.failed = 1; return; }
    memcpy(w->out->data + w->out->length, data, length);
    w->out->length += length;
}

/* ---- the RESP2/RESP3 reply writer ---- */

static int resp3(const resp_writer_t *w) { return w->state->protocol == 3; }

static size_t format_int(char *out, int64_t value) { return gr_int64_to_text(value, out); }

static void write_prefixed_number(resp_writer_t *w, char prefix, int64_t value) {
    char text[32];
    text[0] = prefix;
    size_t n = 1 + format_int(text + 1, value);
    text[n++] = '\r';
    text[n++] = '\n';
    buffer_append(w, text, n);
}

static void op_integer(gr_reply_t *r, int64_t value) { write_prefixed_number((resp_writer_t *)r, ':', value); }

/* The most a bulk adds to its value: '$', up to 20 digits, and two CRLFs. */
#define BULK_OVERHEAD (1 + 20 + 2 + 2)

/* `$<length>\r\n<value>\r\n` at `at`, whose room (BULK_OVERHEAD + length) the caller reserved;
 * the bytes written. The replies' bulks and Pub/Sub's messages. */
static size_t put_bulk(uint8_t *at, const uint8_t *data, size_t length) {
    size_t n = 0;
    at[n++] = '$';
    n += format_int((char *)at + n, (int64_t)length);
    at[n++] = '\r';
    at[n++] = '\n';
    gr_bytes_copy(at + n, data, length);
    n += length;
    at[n++] = '\r';
    at[n++] = '\n';
    return n;
}

static void op_bulk(gr_reply_t *r, const uint8_t *data, size_t length) {
    resp_writer_t *w = (resp_writer_t *)r;
    if (buffer_reserve(w->out, length + BULK_OVERHEAD) != 0) { w->base.failed = 1; return; }
    w->out->length += put_bulk(w->out->data + w->out->length, data, length);
}

/* `count` bulks as op_bulk writes each, after one reservation for the run. */
static void op_bulks(gr_reply_t *r, const gr_bytes_t *values, size_t count) {
    resp_writer_t *w = (resp_writer_t *)r;
    size_t bytes = count * BULK_OVERHEAD;
    for (size_t i = 0; i < count; i++) bytes += values[i].length;
    if (buffer_reserve(w->out, bytes) != 0) { w->base.failed = 1; return; }
    for (size_t i = 0; i < count; i++)
        w->out->length += put_bulk(w->out->data + w->out->length, values[i].data, values[i].length);
}

static void op_nil(gr_reply_t *r) {
    resp_writer_t *w = (resp_writer_t *)r;
    if (resp3(w)) buffer_append(w, "_\r\n", 3);
    else buffer_append(w, "$-1\r\n", 5);
}

static void op_nil_array(gr_reply_t *r) {
    resp_writer_t *w = (resp_writer_t *)r;
    if (resp3(w)) buffer_append(w, "_\r\n", 3);
    else buffer_append(w, "*-1\r\n", 5);
}

static void write_line(resp_writer_t *w, char prefix, const char *text, size_t length) {
    if (buffer_reserve(w->out, length + 3) != 0) { w->base.failed = 1; return; }
    uint8_t *at = w->out->data + w->out->length;
    at[0] = (uint8_t)prefix;
    for (size_t i = 0; i < length; i++)      /* a status or error is one line */
        at[1 + i] = (text[i] == '\r' || text[i] == '\n') ? ' ' : (uint8_t)text[i];
    at[1 + length] = '\r';
    at[2 + length] = '\n';
    w->out->length += length + 3;
}

static void op_status(gr_reply_t *r, const char *text, size_t length) { write_line((resp_writer_t *)r, '+', text, length); }

static void op_error(gr_reply_t *r, gr_error_code_t code, const char *text, size_t length) {
    (void)code;
    write_line((resp_writer_t *)r, '-', text, length);
}

static void op_array_begin(gr_reply_t *r, size_t count) { write_prefixed_number((resp_writer_t *)r, '*', (int64_t)count); }

static void op_keyed_array_begin(gr_reply_t *r, const uint8_t *key, size_t key_length, size_t count) {
    buffer_append((resp_writer_t *)r, "*2\r\n", 4);
    op_bulk(r, key, key_length);
    op_array_begin(r, count);
}

static void op_pair(gr_reply_t *r, const uint8_t *key, size_t key_length, const uint8_t *value, size_t value_length) {
    buffer_append((resp_writer_t *)r, "*2\r\n", 4);
    op_bulk(r, key, key_length);
    op_bulk(r, value, value_length);
}

static void op_map_begin(gr_reply_t *r, size_t pairs) {
    resp_writer_t *w = (resp_writer_t *)r;
    if (resp3(w)) write_prefixed_number(w, '%', (int64_t)pairs);
    else write_prefixed_number(w, '*', 2 * (int64_t)pairs);
}

static void op_set_begin(gr_reply_t *r, size_t count) {
    resp_writer_t *w = (resp_writer_t *)r;
    write_prefixed_number(w, resp3(w) ? '~' : '*', (int64_t)count);
}

static void op_verbatim(gr_reply_t *r, const uint8_t *text, size_t length) {
    resp_writer_t *w = (resp_writer_t *)r;
    if (!resp3(w)) { op_bulk(r, text, length); return; }
    if (buffer_reserve(w->out, length + 40) != 0) { w->base.failed = 1; return; }
    write_prefixed_number(w, '=', (int64_t)length + 4);
    buffer_append(w, "txt:", 4);
    buffer_append(w, text, length);
    buffer_append(w, "\r\n", 2);
}

static void op_double(gr_reply_t *r, double value) {
    resp_writer_t *w = (resp_writer_t *)r;
    char text[48];
    size_t n = gr_double_to_text(value, text + 1, sizeof text - 3);
    if (!resp3(w)) { op_bulk(r, (const uint8_t *)text + 1, n); return; }
    text[0] = ',';
    text[n + 1] = '\r';
    text[n + 2] = '\n';
    buffer_append(w, text, n + 3);
}

static void op_push_begin(gr_reply_t *r, size_t count) {
    resp_writer_t *w = (resp_writer_t *)r;
    write_prefixed_number(w, resp3(w) ? '>' : '*', (int64_t)count);
}

/* Past INT64_MAX (an array's ARLEN can be 2^64-1): Redis's addReplyUnsignedLongLong. */
static void op_unsigned_integer(gr_reply_t *r, uint64_t value) {
    char text[32];
    int n = snprintf(text, sizeof text, ":%llu\r\n", (unsigned long long)value);
    buffer_append((resp_writer_t *)r, text, (size_t)n);
}

/* RESP3's boolean and big number; RESP2 writes :1/:0 and a bulk, as Redis's addReplyBool and
 * addReplyBigNum do. */
static void op_boolean(gr_reply_t *r, int value) {
    resp_writer_t *w = (resp_writer_t *)r;
    if (resp3(w)) buffer_append(w, value ? "#t\r\n" : "#f\r\n", 4);
    else buffer_append(w, value ? ":1\r\n" : ":0\r\n", 4);
}

static void op_big_number(gr_reply_t *r, const uint8_t *digits, size_t length) {
    resp_writer_t *w = (resp_writer_t *)r;
    if (!resp3(w)) { op_bulk(r, digits, length); return; }
    if (buffer_reserve(w->out, length + 3) != 0) { w->base.failed = 1; return; }
    buffer_append(w, "(", 1);
    buffer_append(w, digits, length);
    buffer_append(w, "\r\n", 2);
}

static const gr_reply_ops_t resp_ops = {
    op_integer, op_bulk, op_nil, op_nil_array, op_status, op_error,
    op_array_begin, op_keyed_array_begin, op_pair, op_map_begin, op_verbatim, op_double, op_set_begin,
    op_push_begin,
    op_unsigned_integer,
    op_bulks,
    op_boolean,
    op_big_number,
};

/* ---- Pub/Sub: this transport's subscriber (exec/pubsub.h) ---- */

/* One message into the subscriber's output buffer as Redis writes it (RESP3: a push frame;
 * RESP2: an array), then the pubsub class's output limit. The server flushes the connection
 * after the publishing command (gr_db_note_pending_output). */
static int deliver_message(gr_subscriber_t *subscriber, gr_pubsub_kind_t kind, gr_bytes_t pattern, gr_bytes_t channel,
                           gr_bytes_t payload) {
    gr_resp_conn_t *conn = subscriber->owner;
    if (conn->close_reason) return GR_PUBSUB_OVER_LIMIT;
    if (kind == GR_PUBSUB_MONITOR) {   /* the line is written as it is */
        if (buffer_reserve(&conn->out, payload.length) != 0) {
            conn->close_reason = "out of memory for its output buffer";
            return GR_PUBSUB_OVER_LIMIT;
        }
        memcpy(conn->out.data + conn->out.length, payload.data, payload.length);
        conn->out.length += payload.length;
        gr_db_note_pending_output(conn->db, &conn->state);
        return gr_resp_conn_check_output_limit(conn) ? GR_PUBSUB_OVER_LIMIT : GR_PUBSUB_ACCEPTED;
    }
    static const struct { const char *frame; size_t length; } heads[2][3] = {
        {{"*3\r\n$7\r\nmessage\r\n", 17}, {"*4\r\n$8\r\npmessage\r\n", 18}, {"*3\r\n$8\r\nsmessage\r\n", 18}},
        {{">3\r\n$7\r\nmessage\r\n", 17}, {">4\r\n$8\r\npmessage\r\n", 18}, {">3\r\n$8\r\nsmessage\r\n", 18}},
    };
    int is_pattern = kind == GR_PUBSUB_PMESSAGE;
    size_t need = 18 + 3 * BULK_OVERHEAD + channel.length + payload.length + (is_pattern ? pattern.length : 0);
    if (buffer_reserve(&conn->out, need) != 0) {
        conn->close_reason = "out of memory for its output buffer";
        return GR_PUBSUB_OVER_LIMIT;
    }
    uint8_t *at = conn->out.data + conn->out.length;
    size_t n = heads[conn->state.protocol == 3][kind].length;
    memcpy(at, heads[conn->state.protocol == 3][kind].frame, n);
    if (is_pattern) n += put_bulk(at + n, pattern.data, pattern.length);
    n += put_bulk(at + n, channel.data, channel.length);
    n += put_bulk(at + n, payload.data, payload.length);
    conn->out.length += n;
    gr_db_note_pending_output(conn->db, &conn->state);
    return gr_resp_conn_check_output_limit(conn) ? GR_PUBSUB_OVER_LIMIT : GR_PUBSUB_ACCEPTED;
}

/* ---- CLIENT TRACKING: this transport's invalidation messages (exec/tracking.h) ---- */

/* Redis's sendTrackingMessage frames: RESP3 ">2 invalidate <keys|null>", ">2
 * tracking-redir-broken <id>", or for a redirection target on RESP2 in Pub/Sub mode a
 * "message" on __redis__:invalidate whose payload is the keys' array (or a null). */
static void invalidate_message(gr_connection_t *target, int form, const gr_bytes_t *keys, size_t count,
                               int64_t redirect_id) {
    gr_resp_conn_t *conn = target->subscriber.owner;
    if (conn->close_reason) return;
    size_t need = 64;
    for (size_t i = 0; keys && i < count; i++) need += keys[i].length + BULK_OVERHEAD;
    if (buffer_reserve(&conn->out, need) != 0) {
        conn->close_reason = "out of memory for its output buffer";
        return;
    }
    uint8_t *at = conn->out.data + conn->out.length;
    size_t n = 0;
#define PUT(text) (memcpy(at + n, text, sizeof text - 1), n += sizeof text - 1)
    if (form == GR_INVALIDATE_REDIR_BROKEN) {
        PUT(">2\r\n$21\r\ntracking-redir-broken\r\n:");
        n += format_int((char *)at + n, redirect_id);
        PUT("\r\n");
    } else {
        if (form == GR_INVALIDATE_PUBSUB) PUT("*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n");
        else PUT(">2\r\n$10\r\ninvalidate\r\n");
        if (!keys) {
            if (target->protocol == 3) PUT("_\r\n");
            else PUT("$-1\r\n");
        } else {
            at[n++] = '*';
            n += format_int((char *)at + n, (int64_t)count);
            PUT("\r\n");
            for (size_t i = 0; i < count; i++) n += put_bulk(at + n, keys[i].data, keys[i].length);
        }
    }
#undef PUT
    conn->out.length += n;
    gr_db_note_pending_output(conn->db, &conn->state);
    gr_resp_conn_check_output_limit(conn);
}

/* ---- lifecycle ---- */

gr_resp_conn_t *gr_resp_conn_new(gr_server_t *db, int64_t client_id) {
    gr_resp_conn_t *conn = gr_mem_alloc(sizeof *conn, GR_MEM_SESSION);
    if (!conn) return NULL;
    memset(conn, 0, sizeof *conn);
    conn->db = db;
    gr_connection_register(db, &conn->state, client_id, GR_CONN_TCP);
    conn->writer.base.ops = &resp_ops;
    conn->writer.out = &conn->out;
    conn->writer.state = &conn->state;
    conn->state.reply = &conn->writer.base;
    conn->state.subscriber.owner = conn;
    conn->state.subscriber.deliver = deliver_message;
    conn->state.invalidate = invalidate_message;
    conn->bulk_length = -1;
    return conn;
}

void gr_resp_conn_free(gr_resp_conn_t *conn) {
    if (!conn) return;
    gr_connection_unregister(conn->db, &conn->state);
    gr_mem_free(conn->in.data, GR_MEM_SESSION);
    gr_mem_free(conn->out.data, GR_MEM_SESSION);
    gr_mem_free(conn->argv, GR_MEM_SESSION);
    gr_mem_free(conn->argv_length, GR_MEM_SESSION);
    gr_mem_free(conn->argv_offset, GR_MEM_SESSION);
    gr_mem_free(conn->inline_scratch, GR_MEM_SESSION);
    gr_mem_free(conn, GR_MEM_SESSION);
}

int gr_resp_conn_should_close(const gr_resp_conn_t *conn) {
    return conn->close_after_write || conn->state.kill_requested || conn->close_reason != NULL;
}

void gr_resp_conn_set_peer(gr_resp_conn_t *conn, int fd, int is_unix, const char *addr, const char *laddr) {
    conn->state.kind = is_unix ? GR_CONN_UNIX : GR_CONN_TCP;
    conn->state.fd = fd;
    snprintf(conn->state.addr, sizeof conn->state.addr, "%s", addr);
    snprintf(conn->state.laddr, sizeof conn->state.laddr, "%s", laddr);
}

/* ---- parsing ---- */

typedef enum { PARSED, INCOMPLETE, PROTOCOL_ERROR, SKIPPED } parse_status_t;

static int ensure_argv(gr_resp_conn_t *conn, size_t count) {
    if (count <= conn->argv_capacity) return 0;
    size_t capacity = conn->argv_capacity ? conn->argv_capacity : 16;
    while (capacity < count) capacity *= 2;
    const uint8_t **argv = gr_mem_realloc(conn->argv, capacity * sizeof *argv, GR_MEM_SESSION);
    if (!argv) return -1;
    conn->argv = argv;
    size_t *lengths = gr_mem_realloc(conn->argv_length, capacity * sizeof *lengths, GR_MEM_SESSION);
    if (!lengths) return -1;
    conn->argv_length = lengths;
    size_t *offsets = gr_mem_realloc(conn->argv_offset, capacity * sizeof *offsets, GR_MEM_SESSION);
    if (!offsets) return -1;
    conn->argv_offset = offsets;
    conn->argv_capacity = capacity;
    return 0;
}

/* Forget the frame in progress (it completed, was skipped or was refused). */
static void reset_frame(gr_resp_conn_t *conn) {
    conn->in_multibulk = 0;
    conn->multibulk_left = 0;
    conn->bulk_length = -1;
    conn->parsed_argc = 0;
    conn->parse_at = 0;
    conn->scan_from = 0;
}

/* The CRLF ending the line that starts at `from` (offset), or NULL. The search resumes where
 * the last one for this line stopped (conn->scan_from), so a long line arriving a byte at a
 * time is scanned once. */
static const uint8_t *find_line_end(gr_resp_conn_t *conn, const uint8_t *base, size_t avail, size_t from) {
    size_t at = conn->scan_from > from ? conn->scan_from : from;
    while (at < avail) {
        const uint8_t *cr = memchr(base + at, '\r', avail - at);
        if (!cr) break;
        size_t offset = (size_t)(cr - base);
        if (offset + 1 >= avail) { conn->scan_from = offset; return NULL; }   /* the LF may follow */
        if (cr[1] == '\n') { conn->scan_from = 0; return cr; }
        at = offset + 1;
    }
    conn->scan_from = avail;
    return NULL;
}

/* Parse a decimal line between `at` and `end` (no sign other than a leading '-'). */
static int parse_count(const uint8_t *at, const uint8_t *end, int64_t *out) {
    return gr_bytes_to_int64(at, (size_t)(end - at), out);
}

static int auth_required(const gr_resp_conn_t *conn) { return !conn->state.user && !gr_acl_implicit_user(conn->db->acl); }

/* processMultibulkBuffer: resumes the frame in progress; PARSED fills argv/argc. */
static parse_status_t parse_multibulk(gr_resp_conn_t *conn, size_t *argc, size_t *consumed, const char **error) {
    const uint8_t *base = conn->in.data + conn->in.start;
    size_t avail = conn->in.length - conn->in.start;
    if (!conn->in_multibulk) {
        const uint8_t *line_end = find_line_end(conn, base, avail, 0);
        if (!line_end) {
            if (avail > MAX_LINE) { *error = "too big mbulk count string"; return PROTOCOL_ERROR; }
            return INCOMPLETE;
        }
        int64_t count;
        if (parse_count(base + 1, line_end, &count) != 0 || count > INT32_MAX) {
            *error = "invalid multibulk length";
            return PROTOCOL_ERROR;
        }
        if (count > 10 && auth_required(conn)) { *error = "unauthenticated multibulk length"; return PROTOCOL_ERROR; }
        size_t after = (size_t)(line_end + 2 - base);
        if (count <= 0) { *consumed = after; reset_frame(conn); return SKIPPED; }
        /* Room grows as arguments arrive (as Redis: at most 1024 up front), so a count
         * line alone never reserves memory for two billion arguments. */
        if (ensure_argv(conn, count < 1024 ? (size_t)count : 1024) != 0) { *error = "out of memory"; return PROTOCOL_ERROR; }
        conn->in_multibulk = 1;
        conn->multibulk_left = count;
        conn->bulk_length = -1;
        conn->parsed_argc = 0;
        conn->parse_at = after;
    }
    while (conn->multibulk_left > 0) {
        if (conn->bulk_length < 0) {
            size_t at = conn->parse_at;
            if (at >= avail) return INCOMPLETE;
            if (base[at] != '$') {
                static char text[64];
                snprintf(text, sizeof text, "expected '$', got '%c'", isprint(base[at]) ? base[at] : ' ');
                *error = text;
                return PROTOCOL_ERROR;
            }
            const uint8_t *line_end = find_line_end(conn, base, avail, at);
            if (!line_end) {
                if (avail - at > MAX_LINE) { *error = "too big bulk count string"; return PROTOCOL_ERROR; }
                return INCOMPLETE;
            }
            int64_t length;
            if (parse_count(base + at + 1, line_end, &length) != 0 || length < 0 ||
                length > conn->db->config.proto_max_bulk_len) {
                *error = "invalid bulk length";
                return PROTOCOL_ERROR;
            }
            if (length > 16384 && auth_required(conn)) { *error = "unauthenticated bulk length"; return PROTOCOL_ERROR; }
            conn->bulk_length = length;
            conn->parse_at = (size_t)(line_end + 2 - base);
        }
        if ((uint64_t)(avail - conn->parse_at) < (uint64_t)conn->bulk_length + 2) return INCOMPLETE;
        if (ensure_argv(conn, conn->parsed_argc + 1) != 0) { *error = "out of memory"; return PROTOCOL_ERROR; }
        conn->argv_offset[conn->parsed_argc] = conn->parse_at;
        conn->argv_length[conn->parsed_argc] = (size_t)conn->bulk_length;
        conn->parsed_argc++;
        conn->parse_at += (size_t)conn->bulk_length + 2;   /* the bulk's own CRLF is not checked, as Redis */
        conn->bulk_length = -1;
        conn->multibulk_left--;
    }
    for (size_t i = 0; i < conn->parsed_argc; i++) conn->argv[i] = base + conn->argv_offset[i];
    *argc = conn->parsed_argc;
    *consumed = conn->parse_at;
    reset_frame(conn);
    return PARSED;
}

/* Bytes the frame in progress still needs before it can complete (at least), for sizing reads. */
static size_t frame_bytes_missing(const gr_resp_conn_t *conn) {
    if (!conn->in_multibulk || conn->bulk_length < 0) return 0;
    size_t have = conn->in.length - conn->in.start - conn->parse_at;
    size_t want = (size_t)conn->bulk_length + 2;
    return want > have ? want - have : 0;
}

static int hex_value(uint8_t c) {
    if (c >= '0' && c <= '9') return c - '0';
    c = (uint8_t)tolower(c);
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

/* sdssplitargs over [at, end): unescaped bytes into scratch, argv pointing at them. */
static int split_inline(gr_resp_conn_t *conn, const uint8_t *at, const uint8_t *end, size_t *argc) {
    size_t need = (size_t)(end - at) + 1;
    if (need > conn->inline_capacity) {
        uint8_t *grown = gr_mem_realloc(conn->inline_scratch, need, GR_MEM_SESSION);
        if (!grown) return -2;
        conn->inline_scratch = grown;
        conn->inline_capacity = need;
    }
    uint8_t *out = conn->inline_scratch;
    size_t count = 0;
    const uint8_t *p = at;
    for (;;) {
        while (p < end && isspace(*p)) p++;
        if (p >= end) break;
        uint8_t *token = out;
        int in_double = 0, in_single = 0, done = 0;
        while (!done) {
            if (in_double) {
                if (p >= end) return -1;
                if (*p == '\\' && p + 3 < end && p[1] == 'x' && hex_value(p[2]) >= 0 && hex_value(p[3]) >= 0) {
                    *out++ = (uint8_t)(hex_value(p[2]) * 16 + hex_value(p[3]));
                    p += 3;
                } else if (*p == '\\' && p + 1 < end) {
                    p++;
                    switch (*p) {
                    case 'n': *out++ = '\n'; break;
                    case 'r': *out++ = '\r'; break;
                    case 't': *out++ = '\t'; break;
                    case 'b': *out++ = '\b'; break;
                    case 'a': *out++ = '\a'; break;
                    default: *out++ = *p; break;
                    }
                } else if (*p == '"') {
                    if (p + 1 < end && !isspace(p[1])) return -1;   /* closing quote must end the token */
                    done = 1;
                } else {
                    *out++ = *p;
                }
            } else if (in_single) {
                if (p >= end) return -1;
                if (*p == '\\' && p + 1 < end && p[1] == '\'') {
                    p++;
                    *out++ = '\'';
                } else if (*p == '\'') {
                    if (p + 1 < end && !isspace(p[1])) return -1;
                    done = 1;
                } else {
                    *out++ = *p;
                }
            } else {
                if (p >= end || isspace(*p)) { done = 1; break; }
                if (*p == '"') in_double = 1;
                else if (*p == '\'') in_single = 1;
                else *out++ = *p;
            }
            if (p < end) p++;
        }
        if (ensure_argv(conn, count + 1) != 0) return -2;
        conn->argv[count] = token;
        conn->argv_length[count] = (size_t)(out - token);
        count++;
    }
    *argc = count;
    return 0;
}

static parse_status_t parse_inline(gr_resp_conn_t *conn, size_t *argc, size_t *consumed, const char **error) {
    const uint8_t *start = conn->in.data + conn->in.start, *end = conn->in.data + conn->in.length;
    size_t avail = (size_t)(end - start);
    const uint8_t *newline = conn->scan_from < avail ? memchr(start + conn->scan_from, '\n', avail - conn->scan_from) : NULL;
    if (!newline) {
        conn->scan_from = avail;           /* resume here when more arrives */
        if (avail > MAX_LINE) { *error = "too big inline request"; return PROTOCOL_ERROR; }
        return INCOMPLETE;
    }
    conn->scan_from = 0;
    const uint8_t *line_end = newline;
    if (line_end > start && line_end[-1] == '\r') line_end--;
    *consumed = (size_t)(newline + 1 - start);
    int split = split_inline(conn, start, line_end, argc);
    if (split == -1) { *error = "unbalanced quotes in request"; return PROTOCOL_ERROR; }
    if (split == -2) { *error = "out of memory"; return PROTOCOL_ERROR; }
    return *argc ? PARSED : SKIPPED;
}

static void reply_protocol_error(gr_resp_conn_t *conn, const char *error) {
    char text[128];
    int n = snprintf(text, sizeof text, "ERR Protocol error: %s", error);
    gr_reply_error(&conn->writer.base, GR_ERR_PROTOCOL, text, (size_t)n);
    conn->close_after_write = 1;
}

static int argv_word(const gr_resp_conn_t *conn, size_t i, const char *word) {
    return gr_word_is(conn->argv[i], conn->argv_length[i], word);
}

static int is_quit(const gr_resp_conn_t *conn, size_t argc) { return argc >= 1 && argv_word(conn, 0, "quit"); }

/* What CLIENT LIST and the limits' log lines show of this connection's buffers. */
static void publish_sizes(gr_resp_conn_t *conn) {
    conn->state.query_buffer_bytes = (int64_t)(conn->in.length - conn->in.start);
    conn->state.output_buffer_bytes = (int64_t)(conn->out.length - conn->out.start);
    conn->state.memory_bytes = (int64_t)gr_resp_conn_memory(conn);
}

/* client-output-buffer-limit, as Redis's checkClientOutputBufferLimits: the pubsub class
 * while the connection has any subscription, else normal (goblin has no replicas). Over the
 * hard limit, or over the soft limit for longer than its seconds, closes the client at once,
 * its output dropped. */
int gr_resp_conn_check_output_limit(gr_resp_conn_t *conn) {
    if (conn->close_reason) return 1;
    if (conn->state.repl_peer.state) return 0;   /* a replica: server/primary.c checks the replica class */
    int client_class = gr_subscriber_total(&conn->state.subscriber) ? GR_CLIENT_CLASS_PUBSUB : GR_CLIENT_CLASS_NORMAL;
    const int64_t *limit = conn->db->config.output_limit[client_class];
    int64_t used = (int64_t)(conn->out.length - conn->out.start);
    int hard = limit[GR_LIMIT_HARD] && used >= limit[GR_LIMIT_HARD];
    int soft = limit[GR_LIMIT_SOFT] && used >= limit[GR_LIMIT_SOFT];
    if (soft) {
        int64_t now = conn->db->now_ms;
        if (conn->soft_limit_since_ms == 0) {
            conn->soft_limit_since_ms = now ? now : 1;
            soft = 0;
        } else if (now - conn->soft_limit_since_ms <= limit[GR_LIMIT_SOFT_SECONDS] * 1000) {
            soft = 0;
        }
    } else {
        conn->soft_limit_since_ms = 0;
    }
    if (!hard && !soft) return 0;
    conn->close_reason = "output buffer limits";
    return 1;
}

/* Execute every complete command in the input buffer. */
static void process_input(gr_resp_conn_t *conn) {
    byte_buffer_t *in = &conn->in;
    gr_db_begin_batch(conn->db);
    while (in->start < in->length && !conn->close_after_write && !conn->close_reason &&
           !conn->state.kill_requested && !conn->state.blocked && !conn->state.pause_held) {
        size_t argc = 0, consumed = 0;
        const char *error = NULL;
        parse_status_t status = conn->in_multibulk || in->data[in->start] == '*'
                                    ? parse_multibulk(conn, &argc, &consumed, &error)
                                    : parse_inline(conn, &argc, &consumed, &error);
        if (status == INCOMPLETE) break;
        if (status == PROTOCOL_ERROR) {
            reply_protocol_error(conn, error);
            reset_frame(conn);
            in->start = in->length;
            break;
        }
        if (status == PARSED) {
            if (is_quit(conn, argc)) {
                gr_reply_ok(&conn->writer.base);
                conn->close_after_write = 1;
            } else if (conn->state.repl_peer.state && !(argc >= 1 && argv_word(conn, 0, "replconf"))) {
                /* a replica of this server runs REPLCONF (ACK) only: anything else closes it, unrun
                 * (Redis runs it, then closes a replica whose command made a reply) */
                conn->close_reason = "replica sent a command other than REPLCONF";
                break;
            } else {
                /* CLIENT REPLY OFF / SKIP: the command runs; its reply bytes are taken back */
                size_t mark = conn->out.length;
                int skip = conn->state.reply_skip_next;
                conn->state.reply_skip_next = 0;
                /* CLIENT PAUSE: the command stays in the buffer, parsed again when the pause ends */
                if (gr_db_execute_argv(conn->db, &conn->state, argc, conn->argv, conn->argv_length, &conn->writer.base)) {
                    conn->state.reply_skip_next = (uint8_t)skip;
                    break;
                }
                if ((skip || conn->state.reply_off) && conn->out.length >= mark) conn->out.length = mark;
                if (conn->state.repl_peer.state && conn->out.length > mark) {   /* as Redis 7: a replica gets no replies */
                    conn->out.length = mark;
                    if (!conn->close_reason) conn->close_reason = "replica generated a reply";
                }
            }
            gr_resp_conn_check_output_limit(conn);
        }
        in->start += consumed;
    }
    if (in->start == in->length) in->start = in->length = 0;
    if (conn->writer.base.failed) conn->close_after_write = 1;
    gr_db_end_batch(conn->db);
    publish_sizes(conn);
}

void gr_resp_conn_resume(gr_resp_conn_t *conn) { process_input(conn); }

int64_t gr_resp_conn_read(gr_resp_conn_t *conn, int fd) {
    if (conn->close_reason) return -1;
    /* A big argument in progress is read in one piece, not READ_CHUNK at a time. */
    size_t want = frame_bytes_missing(conn);
    if (want < READ_CHUNK) want = READ_CHUNK;
    if (want > BIG_READ) want = BIG_READ;
    if (buffer_reserve(&conn->in, want) != 0) { conn->close_reason = "out of memory for its query buffer"; return -1; }
    ssize_t n = recv(fd, conn->in.data + conn->in.length, conn->in.capacity - conn->in.length, 0);
    if (n < 0) return (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? -2 : -1;
    if (n == 0) return 0;
    conn->in.length += (size_t)n;
    conn->db->stats.net_input_bytes += n;
    process_input(conn);   /* also publishes the buffer sizes */
    /* client-query-buffer-limit: what waits unparsed (a frame in progress, or input held
     * behind a blocking command), as Redis measures its querybuf. */
    if ((int64_t)(conn->in.length - conn->in.start) > conn->db->config.client_query_buffer_limit) {
        conn->close_reason = "max query buffer length";
        return -1;
    }
    return n;
}

void gr_resp_conn_feed(gr_resp_conn_t *conn, const uint8_t *data, size_t length) {
    if (buffer_reserve(&conn->in, length) != 0) { conn->close_after_write = 1; return; }
    memcpy(conn->in.data + conn->in.length, data, length);
    conn->in.length += length;
    process_input(conn);
}

const char *gr_resp_conn_close_reason(const gr_resp_conn_t *conn) { return conn->close_reason; }

void gr_resp_conn_close_after_write(gr_resp_conn_t *conn) { conn->close_after_write = 1; }

int gr_resp_conn_write_raw(gr_resp_conn_t *conn, const void *data, size_t length) {
    if (buffer_reserve(&conn->out, length) != 0) return -1;
    memcpy(conn->out.data + conn->out.length, data, length);
    conn->out.length += length;
    conn->state.output_buffer_bytes = (int64_t)(conn->out.length - conn->out.start);
    return 0;
}

size_t gr_resp_conn_output_pending(const gr_resp_conn_t *conn) { return conn->out.length - conn->out.start; }

size_t gr_resp_conn_input_pending(const gr_resp_conn_t *conn) { return conn->in.length - conn->in.start; }

size_t gr_resp_conn_memory(const gr_resp_conn_t *conn) {
    return sizeof *conn + conn->in.capacity + conn->out.capacity + conn->inline_capacity +
           conn->argv_capacity * (sizeof *conn->argv + sizeof *conn->argv_length + sizeof *conn->argv_offset);
}

gr_connection_t *gr_resp_conn_state(gr_resp_conn_t *conn) { return &conn->state; }

void gr_resp_conn_mark_closing(gr_resp_conn_t *conn, const char *reason) {
    if (!conn->close_reason) conn->close_reason = reason;
}

/* Give back buffer memory a burst left behind (called when the connection is idle). */
void gr_resp_conn_trim(gr_resp_conn_t *conn) {
    byte_buffer_t *buffers[2] = {&conn->in, &conn->out};
    for (int i = 0; i < 2; i++) {
        byte_buffer_t *b = buffers[i];
        if (b->length == 0 && b->capacity > TRIM_ABOVE) {
            gr_mem_free(b->data, GR_MEM_SESSION);
            b->data = NULL;
            b->capacity = b->start = 0;
        }
    }
    publish_sizes(conn);
}

int64_t gr_resp_conn_flush(gr_resp_conn_t *conn, int fd) {
    byte_buffer_t *out = &conn->out;
    while (out->start < out->length) {
        ssize_t n = send(fd, out->data + out->start, out->length - out->start, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) break;
            if (errno == EINTR) continue;
            return -1;
        }
        out->start += (size_t)n;
        conn->db->stats.net_output_bytes += n;
    }
    if (out->start == out->length) out->start = out->length = 0;
    conn->state.output_buffer_bytes = (int64_t)(out->length - out->start);
    return (int64_t)(out->length - out->start);
}

const uint8_t *gr_resp_conn_output(const gr_resp_conn_t *conn, size_t *length) {
    *length = conn->out.length - conn->out.start;
    return conn->out.data + conn->out.start;
}

void gr_resp_conn_consume_output(gr_resp_conn_t *conn, size_t length) {
    conn->out.start += length;
    if (conn->out.start >= conn->out.length) conn->out.start = conn->out.length = 0;
}
