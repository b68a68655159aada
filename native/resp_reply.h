/* resp_reply.h — the gr_reply_t of the RESP transport: every reply.h operation as RESP
 * bytes appended to a gr_buf_t (the connection's output buffer).
 *
 * The command layer calls reply.h and never sees this file; the transport (resp_conn.c)
 * embeds a gr_resp_reply_t per connection, points it at its output buffer and passes
 * &reply.base to the command table. The implementation is resp_reply.c.
 *
 *   operation              RESP2                                RESP3
 *   integer(n)             :n\r\n                               same
 *   bulk(d)                $len\r\n d \r\n                      same
 *   nil                    $-1\r\n                              _\r\n
 *   nil_array              *-1\r\n                              _\r\n
 *   status(t)              +t\r\n                               same
 *   error(t)               -t\r\n (t carries "ERR " etc.)       same
 *   array_begin(n)         *n\r\n                               same
 *   keyed_array_begin(k,n) *2\r\n $klen\r\n k \r\n *n\r\n       same
 *   pair(k,v)              *2\r\n $klen\r\n k \r\n $vlen\r\n v \r\n   same
 *
 * Status and error texts are one line: any \r or \n in them is written as a space.
 * Each operation reserves its whole encoding first, so running out of memory writes
 * nothing, sets base.failed = 1 (the transport then drops the connection), and every
 * later operation is a no-op until the transport clears base.failed.
 */
#ifndef GR_RESP_REPLY_H
#define GR_RESP_REPLY_H

#include "buffer.h"
#include "reply.h"

typedef struct gr_resp_reply {
    gr_reply_t base;   /* first member: the ops cast &base back to gr_resp_reply_t */
    gr_buf_t *out;     /* not owned */
    int protocol;      /* 2 or 3 (HELLO may change it between commands) */
} gr_resp_reply_t;

/* ---- Lifecycle ---- */

/* Point the writer at `out`; protocol is 2 or 3 (anything else is taken as 2). */
void gr_resp_reply_init(gr_resp_reply_t *reply, gr_buf_t *out, int protocol);

/* ---- Transport helpers ---- */

/* "-ERR Protocol error: <detail>\r\n", as Redis answers a framing error before it closes
 * the connection; detail is gr_resp_parse's error_text. */
void gr_resp_reply_protocol_error(gr_resp_reply_t *reply, const char *detail);

/* Decimal text of value into out (>= 20 bytes for an unsigned, 21 for a signed value);
 * returns the length. No NUL is written. The writer's own integer formatting. */
size_t gr_resp_format_uint64(uint64_t value, char *out);
size_t gr_resp_format_int64(int64_t value, char *out);

#endif
