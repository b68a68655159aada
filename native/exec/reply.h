/* reply.h — the transport-neutral reply writer the command layer talks to.
 *
 * A command function (cmd_list.c, cmd_keys.c, ...) never knows whether it is answering
 * over RESP or over the shared-memory ring: it calls these operations on a gr_reply_t.
 * resp/resp_conn.c implements them as RESP2/RESP3 bytes; ring/sbe_reply.c as SBE reply messages
 * (IntegerReply, BulkReply, ArrayReply, StatusReply, ErrorReply from schema/goblin.xml).
 *
 * Shapes a command may produce:
 *   integer | bulk | nil (null bulk) | nil_array (null array) | status | error
 *   array_begin(n) followed by exactly n elements, each any shape here: a scalar, or a
 *   nested array, map or set (COMMAND INFO, COMMAND DOCS, EXEC's results)
 *   The n elements of an array may be written a run at a time: bulks(values, k) is k bulks
 *   (LRANGE's and LMPOP's values, handed a leaf at a time by the list engine).
 *   keyed_array_begin(key, n) followed by n bulk elements: the [key, [elements...]] shape
 *   of LMPOP/BLMPOP, and of SCAN with the cursor as the key.
 *   pair(key, value): the [key, value] shape of BLPOP/BRPOP.
 *   map_begin(n) followed by n key/value pairs (2n elements): RESP3's map, RESP2's flat
 *   array of 2n, a MAP element of the ring's ArrayReply (HELLO, CONFIG GET, COMMAND DOCS).
 *   verbatim(text): RESP3's verbatim "txt" string, a bulk elsewhere (INFO, CLIENT LIST).
 *   double_value(d): RESP3's double, a bulk elsewhere; the text is Redis 7.0's (%.17g, inf).
 *   set_begin(n) followed by n elements: RESP3's set (SMEMBERS, SINTER, SPOP with a count),
 *   an array elsewhere.
 *   push_begin(n) followed by n elements: RESP3's push frame (SUBSCRIBE's confirmations;
 *   Pub/Sub messages are written by each transport's deliver callback, exec/pubsub.h), an
 *   array elsewhere. A command may write several (SUBSCRIBE a b: one per channel).
 * Both transports carry a nested reply whole: RESP as nested frames, the ring as one
 * ArrayReply whose elements are the reply's tree in pre-order (ring/sbe_reply.h), at most
 * GR_SBE_REPLY_MAX_DEPTH containers deep (deeper than any Redis reply).
 */
#ifndef GR_REPLY_H
#define GR_REPLY_H

#include <stddef.h>
#include <stdint.h>

#include "core/bytes.h"

/* Numbers match the ErrorCode enum in schema/goblin.xml (checked at compile time in
 * sbe_reply.c). The message text always carries Redis's prefix too ("ERR ...",
 * "WRONGTYPE ..."), so RESP writes it unchanged. */
/* cffi-cdef-begin: everything up to cffi-cdef-end is also read by native/build_ffi.py. */
typedef enum gr_error_code {
    GR_ERR_GENERIC = 1,          /* ERR ... */
    GR_ERR_WRONGTYPE = 2,        /* WRONGTYPE Operation against a key holding the wrong kind of value */
    GR_ERR_SYNTAX = 3,           /* ERR syntax error */
    GR_ERR_OUT_OF_RANGE = 4,     /* ERR index out of range / value is out of range */
    GR_ERR_NOT_INTEGER = 5,      /* ERR value is not an integer or out of range */
    GR_ERR_NO_SUCH_KEY = 6,      /* ERR no such key */
    GR_ERR_UNKNOWN_COMMAND = 7,  /* ERR unknown command ... */
    GR_ERR_WRONG_ARITY = 8,      /* ERR wrong number of arguments for '...' command */
    GR_ERR_MALFORMED = 9,        /* ERR malformed message (SBE decode failure) */
    GR_ERR_UNKNOWN_TEMPLATE = 10,/* ERR unknown template id */
    GR_ERR_TOO_LARGE = 11,       /* ERR message or value too large */
    GR_ERR_BAD_SCHEMA = 12,      /* ERR wrong schema id or version */
    GR_ERR_OUT_OF_MEMORY = 13,   /* OOM command not allowed when used memory > 'maxmemory' */
    GR_ERR_PROTOCOL = 14         /* ERR Protocol error: ... (RESP framing) */
} gr_error_code_t;
/* cffi-cdef-end */

typedef struct gr_reply gr_reply_t;

typedef struct gr_reply_ops {
    void (*integer)(gr_reply_t *reply, int64_t value);
    void (*bulk)(gr_reply_t *reply, const uint8_t *data, size_t length);
    void (*nil)(gr_reply_t *reply);
    void (*nil_array)(gr_reply_t *reply);
    void (*status)(gr_reply_t *reply, const char *text, size_t length);
    void (*error)(gr_reply_t *reply, gr_error_code_t code, const char *text, size_t length);
    void (*array_begin)(gr_reply_t *reply, size_t count);
    void (*keyed_array_begin)(gr_reply_t *reply, const uint8_t *key, size_t key_length, size_t count);
    void (*pair)(gr_reply_t *reply, const uint8_t *key, size_t key_length,
                 const uint8_t *value, size_t value_length);
    void (*map_begin)(gr_reply_t *reply, size_t pairs);
    void (*verbatim)(gr_reply_t *reply, const uint8_t *text, size_t length);
    void (*double_value)(gr_reply_t *reply, double value);
    void (*set_begin)(gr_reply_t *reply, size_t count);
    /* A Pub/Sub frame of count elements: RESP3's push (">"), an array in RESP2. A writer
     * without one (NULL) writes an array (gr_reply_push_begin). */
    void (*push_begin)(gr_reply_t *reply, size_t count);
    /* Optional (NULL: gr_reply_unsigned falls back to a bulk of the digits): an integer past
     * INT64_MAX, as Redis's addReplyUnsignedLongLong writes it (an array's length can be 2^64-1). */
    void (*unsigned_integer)(gr_reply_t *reply, uint64_t value);
    /* Optional (NULL: gr_reply_bulks calls bulk once a value): `count` bulks, the same bytes as
     * that many bulk calls, with one reservation for the run. */
    void (*bulks)(gr_reply_t *reply, const gr_bytes_t *values, size_t count);
    /* Optional (NULL: an integer 1 or 0): RESP3's boolean (#t/#f), a script's true/false under
     * redis.setresp(3). */
    void (*boolean)(gr_reply_t *reply, int value);
    /* Optional (NULL: a bulk of the digits): RESP3's big number ("(" line), a script's
     * {big_number = "..."}. */
    void (*big_number)(gr_reply_t *reply, const uint8_t *digits, size_t length);
} gr_reply_ops_t;

/* Each transport embeds this as its first member and casts back in its ops. */
struct gr_reply {
    const gr_reply_ops_t *ops;
    int failed;   /* set by a writer that ran out of memory; the transport then drops the session */
    uint32_t errors;            /* error replies written (INFO commandstats failed_calls) */
    char last_error_prefix[24]; /* the first word of the last error ("ERR", "WRONGTYPE") */
};

/* Convenience wrappers so command code reads naturally. */
static inline void gr_reply_integer(gr_reply_t *r, int64_t v) { r->ops->integer(r, v); }
static inline void gr_reply_bulk(gr_reply_t *r, const uint8_t *d, size_t n) { r->ops->bulk(r, d, n); }
static inline void gr_reply_nil(gr_reply_t *r) { r->ops->nil(r); }
static inline void gr_reply_nil_array(gr_reply_t *r) { r->ops->nil_array(r); }
static inline void gr_reply_status(gr_reply_t *r, const char *t, size_t n) { r->ops->status(r, t, n); }
static inline void gr_reply_error(gr_reply_t *r, gr_error_code_t c, const char *t, size_t n) {
    size_t i = 0;
    while (i < n && i + 1 < sizeof r->last_error_prefix && t[i] != ' ') { r->last_error_prefix[i] = t[i]; i++; }
    r->last_error_prefix[i] = '\0';
    r->errors++;
    r->ops->error(r, c, t, n);
}
static inline void gr_reply_array_begin(gr_reply_t *r, size_t n) { r->ops->array_begin(r, n); }
static inline void gr_reply_keyed_array_begin(gr_reply_t *r, const uint8_t *k, size_t kn, size_t n) { r->ops->keyed_array_begin(r, k, kn, n); }
static inline void gr_reply_map_begin(gr_reply_t *r, size_t pairs) { r->ops->map_begin(r, pairs); }
static inline void gr_reply_verbatim(gr_reply_t *r, const uint8_t *t, size_t n) { r->ops->verbatim(r, t, n); }
static inline void gr_reply_double(gr_reply_t *r, double v) { r->ops->double_value(r, v); }
static inline void gr_reply_set_begin(gr_reply_t *r, size_t n) { r->ops->set_begin(r, n); }
static inline void gr_reply_push_begin(gr_reply_t *r, size_t n) {
    if (r->ops->push_begin) r->ops->push_begin(r, n);
    else r->ops->array_begin(r, n);
}

/* An unsigned integer: the integer shape up to INT64_MAX; past it the transport's unsigned
 * integer (RESP: ":18446744073709551615"), or where it has none (the ring's IntegerReply is
 * signed) a bulk of the decimal digits. */
static inline void gr_reply_unsigned(gr_reply_t *r, uint64_t v) {
    if (v <= (uint64_t)INT64_MAX) { r->ops->integer(r, (int64_t)v); return; }
    if (r->ops->unsigned_integer) { r->ops->unsigned_integer(r, v); return; }
    char digits[24];
    size_t n = sizeof digits;
    do { digits[--n] = (char)('0' + v % 10); v /= 10; } while (v);
    r->ops->bulk(r, (const uint8_t *)digits + n, sizeof digits - n);
}
static inline void gr_reply_bulks(gr_reply_t *r, const gr_bytes_t *values, size_t count) {
    if (r->ops->bulks) { r->ops->bulks(r, values, count); return; }
    for (size_t i = 0; i < count; i++) r->ops->bulk(r, values[i].data, values[i].length);
}
static inline void gr_reply_boolean(gr_reply_t *r, int value) {
    if (r->ops->boolean) r->ops->boolean(r, value);
    else r->ops->integer(r, value ? 1 : 0);
}
static inline void gr_reply_big_number(gr_reply_t *r, const uint8_t *digits, size_t length) {
    if (r->ops->big_number) r->ops->big_number(r, digits, length);
    else r->ops->bulk(r, digits, length);
}
static inline void gr_reply_pair(gr_reply_t *r, const uint8_t *k, size_t kn, const uint8_t *v, size_t vn) { r->ops->pair(r, k, kn, v, vn); }

/* The replies every command file shares (reply.c), with Redis's texts. */
void gr_reply_error_text(gr_reply_t *reply, gr_error_code_t code, const char *text);
void gr_reply_arity_error(gr_reply_t *reply, const char *command);
void gr_reply_wrongtype(gr_reply_t *reply);
void gr_reply_ok(gr_reply_t *reply);
void gr_reply_oom(gr_reply_t *reply);   /* an allocation failed: Redis's OOM error, nothing changed */

#endif
