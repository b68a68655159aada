/* server.h — the serving loop, in C: one thread, one epoll set, both transports.
 *
 * The Python server (goblin_ring/server/loop.py) keeps start-up, the control socket's attach
 * handshake, signals and the cron. It hands this loop the RESP listeners it bound, each ring
 * session's eventfd doorbell, and the fd of its own selector (control sockets), then calls
 * gr_server_run over and over. gr_server_run drains the rings (session.h), accepts RESP
 * clients, reads, parses, executes and writes them (resp_conn.h), answers blocked clients
 * whose timeout passed, closes killed and idle clients, enforces maxclients, protected mode,
 * the output buffer limits and maxmemory-clients, and sleeps in epoll when nothing moves.
 * It returns to Python only when Python has work: its selector has events, the cron is due
 * (max_ns), a signal arrived, or a ring session must be closed. No Python runs per request.
 *
 *   epoll set: RESP listeners | RESP connections | doorbells | Python's selector (nested)
 *
 * Accept under descriptor exhaustion (EMFILE, ENFILE, ENOBUFS, ENOMEM): the listener leaves
 * the epoll set for ACCEPT_PAUSE_MS (or until a client closes), so the loop neither spins
 * nor floods the log: one log line per pause episode, with how many accepts failed.
 * C never prints: log lines queue here and Python writes them (gr_server_take_log).
 */
#ifndef GR_SERVER_H
#define GR_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "exec/db.h"
#include "ring/session.h"

/* cffi-cdef-begin */
typedef struct gr_serve_loop gr_serve_loop_t;

/* Why gr_server_run returned (bits). */
enum {
    GR_SERVE_DEADLINE = 1,    /* max_ns passed: the cron is due */
    GR_SERVE_PYTHON = 2,      /* Python's selector has events (control sockets) */
    GR_SERVE_SIGNAL = 4,      /* a signal interrupted the wait */
    GR_SERVE_SESSIONS = 8,    /* a ring session was killed or wrote a corrupt record */
    GR_SERVE_LOG = 16         /* log lines wait (gr_server_take_log) */
};

gr_serve_loop_t *gr_server_new(gr_server_t *db, gr_rings_t *rings, int python_fd);
/* Closes every RESP connection (not the listeners: the caller owns those). */
void gr_server_free(gr_serve_loop_t *server);
/* A bound, listening, non-blocking socket; 0 or -errno. */
int gr_server_add_listener(gr_serve_loop_t *server, int fd, int is_unix);
int gr_server_watch_doorbell(gr_serve_loop_t *server, int fd);
void gr_server_unwatch_doorbell(gr_serve_loop_t *server, int fd);
/* One id space for RESP clients and ring sessions (CLIENT ID). */
int64_t gr_server_next_client_id(gr_serve_loop_t *server);
/* Serve until one of the GR_SERVE_* reasons; returns the reasons. Adaptive (busy = 0): the
 * rings spin for spin_ns after their last message, then the loop sleeps in epoll (sockets and
 * doorbells wake it); busy: never sleep, the rings and the sockets are polled in turn. */
int gr_server_run(gr_serve_loop_t *server, int64_t max_ns, int64_t spin_ns, int busy);
/* A ring session the server must close (CLIENT KILL, its output buffer limit, ...): its id
 * (each once) and why, for the log, in why; or 0. Python closes it. */
uint64_t gr_server_take_killed_session(gr_serve_loop_t *server, char *why, size_t why_size);
/* Copy queued log lines (each ending in '\n') into out; returns the bytes copied. */
size_t gr_server_take_log(gr_serve_loop_t *server, char *out, size_t size);
size_t gr_server_resp_clients(const gr_serve_loop_t *server);
/* cffi-cdef-end */

#endif
