/* blocking.h — clients blocked in BLPOP, BRPOP, BLMOVE, BRPOPLPUSH and BLMPOP, and how a
 * push wakes them.
 *
 * A blocking command whose keys are all empty parks its connection: it writes no reply,
 * gr_blocking_park records a waiter (a copy of the request, its deadline and, for the
 * ring, its request id), and the transport stops reading that connection's later requests
 * (they wait behind it, as in Redis). Every waiter sits in the FIFO of each key it waits
 * on and in one list in blocking order.
 *
 * Waking: whatever creates a list under a key (a push, LMOVE's destination, RENAME, MOVE,
 * SWAPDB) calls gr_blocking_signal, which costs one branch when nobody is blocked and
 * otherwise marks the key ready. After the command that did it, gr_blocking_serve serves
 * every ready key: the longest waiter first, re-running its command on that key alone with
 * its own connection's reply writer, until the key is empty or has no waiters; a BLMOVE
 * served that way may make its destination ready in turn. So a pushed value goes to the
 * longest waiter before any other command sees it. A waiter whose client is gone (socket
 * EOF, or the ring client's process dead) is dropped, and its connection closed, before
 * anything is popped for it.
 *
 * Timeouts are the server's: gr_blocking_expire answers waiters past their deadline with
 * the command's nil reply. Served or timed-out connections are "woken": ring sessions
 * resume reading by themselves; RESP connections are handed to the Python loop
 * (gr_db_take_woken) so it can flush the reply and parse what the client sent meanwhile.
 */
#ifndef GR_BLOCKING_H
#define GR_BLOCKING_H

#include <stdint.h>

#include "exec/db.h"

/* Redis's checks of a blocking command's timeout (seconds): NULL when it is usable, else
 * the error text. Shared by the RESP parser and the typed path, so both say the same. */
const char *gr_blocking_timeout_error(double seconds);
/* Park the current connection on request's keys (BPOP/BLMOVE/BLMPOP); 0, or -1 on OOM
 * (then nothing is parked and the caller replies OOM). timeout_s == 0: forever. */
int gr_blocking_park(gr_db_t *db, const gr_request_t *request, double timeout_s);
/* A list now exists under key in database db_index (or may: RENAME, MOVE). */
void gr_blocking_signal(gr_db_t *db, int32_t db_index, const uint8_t *key, size_t key_length);
/* Every blocked key of database db_index (SWAPDB). */
void gr_blocking_signal_db(gr_db_t *db, int32_t db_index);
/* Serve the ready keys; called after each top-level command. */
void gr_blocking_serve(gr_db_t *db);
/* Remove conn's waiter, if any, without replying (the connection is going away). */
void gr_blocking_forget(gr_db_t *db, gr_connection_t *conn);
void gr_blocking_free_all(gr_db_t *db);
/* Tests: 0 when the bookkeeping agrees with itself (every waiter linked on each of its keys,
 * its connection pointing back, the count right), else -1. */
int gr_blocking_check(const gr_db_t *db);

#endif
