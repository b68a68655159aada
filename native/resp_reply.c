/* resp_reply.c — RESP2/RESP3 reply writer: the gr_reply_t ops of resp_reply.h, appending to
 * the connection's gr_buf_t (buffer.c). The other reply writer, for ring sessions, is
 * sbe_reply.c. Every op reserves its full encoding once, then writes in place; numbers are
 * formatted two digits at a time from a table, never through snprintf.
 */
#include "resp_reply.h"

#include <string.h>

#define NUMBER_LINE_MAX 24   /* prefix + 20 digits + '-' + CRLF */

static const char digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

static unsigned decimal_digits(uint64_t value) {
    unsigned digits = 1;
    for (;;) {
        if (value < 10) return digits;
        if (value < 100) return digits + 1;
        if (value < 1000) return digits + 2;
        if (value < 10000) return digits + 3;
        value /= 10000;
        digits += 4;
    }
}

size_t gr_resp_format_uint64(uint64_t value, char *out) {
    unsigned digits = decimal_digits(value);
    char *at = out + digits;
    while (value >= 100) {
        unsigned pair = (unsigned)(value % 100) * 2;
        value /= 100;
        *--at = digit_pairs[pair + 1];
        *--at = digit_pairs[pair];
    }
    if (value >= 10) {
        *--at = digit_pairs[value * 2 + 1];
        *--at = digit_pairs[value * 2];
    } else {
        *--at = (char)('0' + value);
    }
    return digits;
}

size_t gr_resp_format_int64(int64_t value, char *out) {
    if (value >= 0) return gr_resp_format_uint64((uint64_t)value, out);
    out[0] = '-';
    return 1 + gr_resp_format_uint64((uint64_t)0 - (uint64_t)value, out + 1);
}

/* ---- writing into the output buffer ---- */

static gr_resp_reply_t *writer_of(gr_reply_t *base) { return (gr_resp_reply_t *)base; }

/* Room for `length` bytes at the output's tail, or NULL (and the writer marked failed). */
static uint8_t *reserve(gr_resp_reply_t *w, size_t length) {
    if (w->base.failed) return NULL;
    if (gr_buf_reserve(w->out, length) != 0) {
        w->base.failed = 1;
        return NULL;
    }
    return gr_buf_room_ptr(w->out);
}

static void commit(gr_resp_reply_t *w, const uint8_t *start, const uint8_t *end) {
    gr_buf_commit(w->out, (size_t)(end - start));
}

/* "<prefix><number>\r\n" at `at`; returns the byte after it. */
static uint8_t *put_number_line(uint8_t *at, char prefix, int64_t value) {
    *at++ = (uint8_t)prefix;
    at += gr_resp_format_int64(value, (char *)at);
    *at++ = '\r';
    *at++ = '\n';
    return at;
}

static uint8_t *put_bulk(uint8_t *at, const uint8_t *data, size_t length) {
    at = put_number_line(at, '$', (int64_t)length);
    if (length) memcpy(at, data, length);
    at += length;
    *at++ = '\r';
    *at++ = '\n';
    return at;
}

/* A bulk's encoded size, or 0 when it cannot be represented (the caller fails the write). */
static size_t bulk_size(size_t length) {
    return length > SIZE_MAX / 4 ? 0 : length + NUMBER_LINE_MAX + 2;
}

static uint8_t *put_line_text(uint8_t *at, const char *text, size_t length) {
    for (size_t i = 0; i < length; i++) {
        char c = text[i];
        *at++ = (uint8_t)(c == '\r' || c == '\n' ? ' ' : c);
    }
    return at;
}

/* "<prefix><lead><text>\r\n" with \r and \n in lead and text made spaces. */
static void write_line(gr_resp_reply_t *w, char prefix, const char *lead, size_t lead_length,
                       const char *text, size_t length) {
    if (length > SIZE_MAX / 4) { w->base.failed = 1; return; }
    uint8_t *start = reserve(w, 1 + lead_length + length + 2);
    if (!start) return;
    uint8_t *at = start;
    *at++ = (uint8_t)prefix;
    at = put_line_text(at, lead, lead_length);
    at = put_line_text(at, text, length);
    *at++ = '\r';
    *at++ = '\n';
    commit(w, start, at);
}

static void write_literal(gr_resp_reply_t *w, const char *bytes, size_t length) {
    uint8_t *start = reserve(w, length);
    if (!start) return;
    memcpy(start, bytes, length);
    commit(w, start, start + length);
}

/* ---- the ops ---- */

static void op_integer(gr_reply_t *base, int64_t value) {
    gr_resp_reply_t *w = writer_of(base);
    uint8_t *start = reserve(w, NUMBER_LINE_MAX);
    if (!start) return;
    commit(w, start, put_number_line(start, ':', value));
}

static void op_bulk(gr_reply_t *base, const uint8_t *data, size_t length) {
    gr_resp_reply_t *w = writer_of(base);
    size_t size = bulk_size(length);
    if (!size) { w->base.failed = 1; return; }
    uint8_t *start = reserve(w, size);
    if (!start) return;
    commit(w, start, put_bulk(start, data, length));
}

static void op_nil(gr_reply_t *base) {
    gr_resp_reply_t *w = writer_of(base);
    if (w->protocol == 3) write_literal(w, "_\r\n", 3);
    else write_literal(w, "$-1\r\n", 5);
}

static void op_nil_array(gr_reply_t *base) {
    gr_resp_reply_t *w = writer_of(base);
    if (w->protocol == 3) write_literal(w, "_\r\n", 3);
    else write_literal(w, "*-1\r\n", 5);
}

static void op_status(gr_reply_t *base, const char *text, size_t length) {
    write_line(writer_of(base), '+', "", 0, text, length);
}

/* The text carries its own code ("ERR ...", "WRONGTYPE ..."). Like Redis, a text that
 * already starts with '-' is not given a second one, and an empty text becomes "ERR". */
static void op_error(gr_reply_t *base, gr_error_code_t code, const char *text, size_t length) {
    (void)code;
    gr_resp_reply_t *w = writer_of(base);
    if (length == 0) { write_literal(w, "-ERR\r\n", 6); return; }
    if (text[0] == '-') { text++; length--; }
    write_line(w, '-', "", 0, text, length);
}

static void op_array_begin(gr_reply_t *base, size_t count) {
    gr_resp_reply_t *w = writer_of(base);
    uint8_t *start = reserve(w, NUMBER_LINE_MAX);
    if (!start) return;
    commit(w, start, put_number_line(start, '*', (int64_t)count));
}

static void op_keyed_array_begin(gr_reply_t *base, const uint8_t *key, size_t key_length, size_t count) {
    gr_resp_reply_t *w = writer_of(base);
    size_t size = bulk_size(key_length);
    if (!size) { w->base.failed = 1; return; }
    uint8_t *start = reserve(w, 4 + size + NUMBER_LINE_MAX);
    if (!start) return;
    uint8_t *at = start;
    memcpy(at, "*2\r\n", 4);
    at = put_bulk(at + 4, key, key_length);
    at = put_number_line(at, '*', (int64_t)count);
    commit(w, start, at);
}

static void op_pair(gr_reply_t *base, const uint8_t *key, size_t key_length, const uint8_t *value,
                    size_t value_length) {
    gr_resp_reply_t *w = writer_of(base);
    size_t key_size = bulk_size(key_length), value_size = bulk_size(value_length);
    if (!key_size || !value_size) { w->base.failed = 1; return; }
    uint8_t *start = reserve(w, 4 + key_size + value_size);
    if (!start) return;
    uint8_t *at = start;
    memcpy(at, "*2\r\n", 4);
    at = put_bulk(at + 4, key, key_length);
    at = put_bulk(at, value, value_length);
    commit(w, start, at);
}

static const gr_reply_ops_t resp_reply_ops = {
    .integer = op_integer,
    .bulk = op_bulk,
    .nil = op_nil,
    .nil_array = op_nil_array,
    .status = op_status,
    .error = op_error,
    .array_begin = op_array_begin,
    .keyed_array_begin = op_keyed_array_begin,
    .pair = op_pair,
};

/* ---- lifecycle and transport helpers ---- */

void gr_resp_reply_init(gr_resp_reply_t *reply, gr_buf_t *out, int protocol) {
    reply->base.ops = &resp_reply_ops;
    reply->base.failed = 0;
    reply->out = out;
    reply->protocol = protocol == 3 ? 3 : 2;
}

void gr_resp_reply_protocol_error(gr_resp_reply_t *reply, const char *detail) {
    static const char lead[] = "ERR Protocol error: ";
    write_line(reply, '-', lead, sizeof lead - 1, detail, strlen(detail));
}
