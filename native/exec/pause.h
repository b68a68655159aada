/* pause.h — CLIENT PAUSE timeout [WRITE|ALL] and CLIENT UNPAUSE, as Redis 7.0 does them.
 *
 * While paused, a connection's command that the pause covers (ALL: every command; WRITE:
 * write commands, may_replicate ones (PUBLISH) and EVAL/EVALSHA/FCALL, as Redis 7.0, and
 * EXEC of a transaction holding a write) is not run: the transport leaves it where it is (RESP:
 * in the query buffer; ring: in the request ring, unread) and reads nothing more from that
 * connection. Keys do not expire meanwhile (active expiry skips its cycle; a lazily found
 * expired key reads as missing but stays). The pause ends at its deadline (the server loop's
 * sleep is bounded by it) or at CLIENT UNPAUSE; held RESP connections are then handed to the
 * loop as woken ones, ring sessions are read again by themselves. A second PAUSE keeps the
 * stronger mode and the later deadline, as Redis's pauseClients.
 */
#ifndef GR_PAUSE_H
#define GR_PAUSE_H

#include <stddef.h>
#include <stdint.h>

struct gr_server;
struct gr_connection;
struct gr_request;

enum { GR_PAUSE_NONE = 0, GR_PAUSE_WRITE = 1, GR_PAUSE_ALL = 2 };

void gr_pause_start(struct gr_server *db, int mode, int64_t end_ns);
void gr_pause_end(struct gr_server *db);
/* The deadline reached: the pause ends. Whether a pause is in force after the check. */
int gr_pause_active(struct gr_server *db);
/* Milliseconds until the deadline of a pause holding connections (the loop's sleep), or -1. */
int64_t gr_pause_timeout_ms(const struct gr_server *db);
/* Whether this call must wait (it is then marked held on conn); argc 0: the typed request. */
int gr_pause_holds(struct gr_server *db, struct gr_connection *conn, size_t argc, const uint8_t *const *argv,
                   const size_t *argv_length, const struct gr_request *request);
/* Hold conn whatever its next call is (a ring request still in fragments): 1 when paused. */
int gr_pause_hold_connection(struct gr_server *db, struct gr_connection *conn);

#endif
