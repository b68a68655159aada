/* resp_conn.h — one RESP2/RESP3 client connection: read, parse, execute, write, all in C.
 *
 * The C serving loop (server/server.c) watches the socket. On readable it calls
 * gr_resp_conn_read, which does one recv into the connection's input buffer, parses every
 * complete command in it (multibulk, and inline commands as redis-cli and telnet send them),
 * executes each through the command table and appends the RESP replies to the output
 * buffer; gr_resp_conn_flush then writes what the socket takes. A whole pipeline costs one call.
 *
 * A frame that arrives in pieces is parsed where the last read stopped (the parser's state
 * lives in the connection), so parsing costs are linear in the bytes received however the
 * sender paces them.
 *
 * Limits, as Redis 7: a multibulk count above INT_MAX or a bulk longer than
 * proto-max-bulk-len (512 MiB), a count line or inline request over 64 KiB, unbalanced
 * quotes, and before AUTH a count above 10 or a bulk above 16 KiB — each is answered
 * "-ERR Protocol error: ..." and the connection is closed once that is written. Unparsed
 * input above client-query-buffer-limit (1 GiB), and output above client-output-buffer-limit
 * (normal class, no limit by default; pubsub class, 32mb 8mb 60, while the connection has a
 * subscription), close the connection at once: close_reason says why
 * and the server logs it. A connection blocked in BLPOP (blocking.h) parses nothing more
 * until it is answered; its later input waits.
 */
#ifndef GR_RESP_CONN_H
#define GR_RESP_CONN_H

#include <stddef.h>
#include <stdint.h>

#include "exec/db.h"

typedef struct gr_resp_conn gr_resp_conn_t;

gr_resp_conn_t *gr_resp_conn_new(gr_server_t *db, int64_t client_id);
void gr_resp_conn_free(gr_resp_conn_t *conn);
/* For CLIENT LIST: the peer's address and ours ("127.0.0.1:5000", or a socket path). */
void gr_resp_conn_set_peer(gr_resp_conn_t *conn, int fd, int is_unix, const char *addr, const char *laddr);
/* After a blocking command of this connection was answered (gr_db_take_woken): parse and
 * execute the input it held back meanwhile. */
void gr_resp_conn_resume(gr_resp_conn_t *conn);
/* One recv and everything it completes. Returns bytes read (> 0), 0 on EOF, -1 on a socket
 * error, -2 when the socket had nothing (EAGAIN). */
int64_t gr_resp_conn_read(gr_resp_conn_t *conn, int fd);
/* Parse and execute bytes handed in directly (tests, tools); same rules as a read. */
void gr_resp_conn_feed(gr_resp_conn_t *conn, const uint8_t *data, size_t length);
/* Write pending output; returns the bytes still pending (>= 0) or -1 on a socket error. */
int64_t gr_resp_conn_flush(gr_resp_conn_t *conn, int fd);
/* Output not yet written (for feed-based tests): pointer and length; consume after use. */
const uint8_t *gr_resp_conn_output(const gr_resp_conn_t *conn, size_t *length);
void gr_resp_conn_consume_output(gr_resp_conn_t *conn, size_t length);
/* 1 once QUIT, CLIENT KILL or a protocol error asks for the connection to close (after its output). */
int gr_resp_conn_should_close(const gr_resp_conn_t *conn);
/* Why the connection must close at once, without writing its output ("output buffer limits",
 * "max query buffer length", ...), or NULL. */
const char *gr_resp_conn_close_reason(const gr_resp_conn_t *conn);
void gr_resp_conn_mark_closing(gr_resp_conn_t *conn, const char *reason);
/* client-output-buffer-limit: 1 (and close_reason set) if this connection's output is over it. */
int gr_resp_conn_check_output_limit(gr_resp_conn_t *conn);
size_t gr_resp_conn_output_pending(const gr_resp_conn_t *conn);
/* Append bytes to the output as they are (a replica's stream and payload, server/primary.c):
 * 0, or -1 out of memory. */
int gr_resp_conn_write_raw(gr_resp_conn_t *conn, const void *data, size_t length);
/* Close the connection once its output is written (as QUIT does). */
void gr_resp_conn_close_after_write(gr_resp_conn_t *conn);
size_t gr_resp_conn_input_pending(const gr_resp_conn_t *conn);
/* Bytes this connection's buffers hold (maxmemory-clients). */
size_t gr_resp_conn_memory(const gr_resp_conn_t *conn);
gr_connection_t *gr_resp_conn_state(gr_resp_conn_t *conn);
/* Give back large buffers once they are empty. */
void gr_resp_conn_trim(gr_resp_conn_t *conn);

#endif
