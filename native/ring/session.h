/* session.h — the server side of ring sessions: every attached client's request ring
 * (the server consumes) and reply ring (the server produces), drained in C.
 *
 * The Python server (goblin_ring/server/) owns the control sockets, the shared-memory
 * segments and the eventfd doorbells; it hands each mapped segment to gr_rings_add_session
 * and then calls gr_rings_run, which drains every session — decode with the generated
 * codec, execute against the db, encode the reply into the reply ring — until the rings
 * have been idle for the spin budget or the time slice ends. No Python runs per message.
 *
 * Waiting: before it sleeps in epoll, the server calls gr_rings_prepare_sleep, which sets
 * the sleeper flag on every request ring, fences, and re-checks; a client that publishes a
 * request afterwards sees the flag and rings the session's eventfd doorbell (client.c),
 * which is in the server's epoll set. Why eventfd and not a futex for the server: the server
 * must also wake for TCP clients and control sockets, and one epoll wait covers all three.
 * Why a futex for the client: it waits for one thing only, and FUTEX_WAKE costs the server
 * one syscall only when the client has said it sleeps.
 */
#ifndef GR_SESSION_H
#define GR_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "exec/db.h"

/* cffi-cdef-begin */
typedef struct gr_rings gr_rings_t;

gr_rings_t *gr_rings_new(gr_server_t *db);
void gr_rings_free(gr_rings_t *rings);
/* Initialise both rings in the given mappings (the server creates them) and start serving. */
int gr_rings_add_session(gr_rings_t *rings, uint64_t session_id,
                         void *request_memory, size_t request_memory_size,
                         void *reply_memory, size_t reply_memory_size,
                         uint64_t capacity, char *error, size_t error_size);
/* Stop serving a session; after this returns the server no longer touches its memory. */
void gr_rings_remove_session(gr_rings_t *rings, uint64_t session_id);
size_t gr_rings_session_count(const gr_rings_t *rings);
/* For CLIENT LIST: the client's description ("pid=123") and the name it attached with. */
/* Also the control socket (whose EOF means the client is gone) and the client's pid. */
/* Authenticate a session as an ACL user (the attach's username and password, as AUTH): 0 when
 * they are right, -1 otherwise (the session stays as it was: NOAUTH while a password is needed). */
int gr_rings_authenticate_session(gr_rings_t *rings, uint64_t session_id, const uint8_t *username,
                                  size_t username_length, const uint8_t *password, size_t password_length);
void gr_rings_set_session_peer(gr_rings_t *rings, uint64_t session_id, int control_fd, int32_t pid,
                               const char *addr, const char *name);
/* An eventfd the client gave at attach (ATTACH_CONFIRM's descriptor): written whenever the
 * client is woken for replies, beside the futex, so that an event loop can wait on it. The
 * Python server owns and closes the descriptor. */
void gr_rings_set_reply_doorbell(gr_rings_t *rings, uint64_t session_id, int fd);
size_t gr_ring_segment_bytes(uint64_t capacity);

/* One pass over every session; returns the requests executed. */
int64_t gr_rings_poll(gr_rings_t *rings);
/* Poll until idle for spin_ns, until max_ns have passed, or until the epoll set watch_fd
 * (the server's selector; -1 for none) has a ready event, looked at every watch_interval_ns
 * without consuming it. Returns the requests executed. */
int64_t gr_rings_run(gr_rings_t *rings, int64_t spin_ns, int64_t max_ns, int watch_fd, int64_t watch_interval_ns);
/* 1: every request ring is empty with its sleeper flag set, safe to sleep; 2: the same, but
 * some replies wait for room in a reply ring (sleep briefly); 0: work arrived. */
int gr_rings_prepare_sleep(gr_rings_t *rings);
void gr_rings_end_sleep(gr_rings_t *rings);
/* A session whose client wrote an impossible request record or moved its reply ring's head
 * past the tail (the ring marks itself corrupt) is no longer served; this returns its id (0
 * if none) so the server can close it. Costs nothing until a corruption was seen; then
 * gr_rings_run returns at once so the server closes the session promptly. */
uint64_t gr_rings_corrupt_session(gr_rings_t *rings);
/* cffi-cdef-end */

#endif
