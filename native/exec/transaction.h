/* transaction.h — MULTI/EXEC/DISCARD and WATCH/UNWATCH for every connection, whichever
 * transport it came by (RESP or a ring session).
 *
 * MULTI: while a connection is inside MULTI, the execute entry points (db.c) hand each
 * command to gr_transaction_queue_* first. A command that does not exist, has the wrong
 * arity or is refused by admission (OOM) is answered with its error and marks the
 * transaction failed; any other is copied (gr_request_clone: a typed ring request as it
 * came, a RESP or CommandRequest argv as a GR_T_COMMAND request) and answered +QUEUED.
 * EXEC, DISCARD, MULTI, WATCH, QUIT and RESET run at once, as in Redis. EXEC answers
 * EXECABORT for a failed transaction, a nil array when a watched key was touched, else one
 * array of the queued commands' replies, run with nothing in between (one thread executes
 * everything; blocked clients are served after EXEC, and a blocking command inside EXEC
 * does not block).
 *
 * WATCH: db->watch maps (database, key) to the connections watching it. Every command that
 * modifies a key calls gr_watch_touch (Redis's signalModifiedKey): one branch when nobody
 * watches anything, else the watchers of that key are marked dirty, and their EXEC answers
 * nil. Expiry deletes count as touches (lazy and active, as Redis 7); a watched key that
 * was live at WATCH time and has logically expired by EXEC also fails the EXEC; a key that
 * was already expired at WATCH time and is then deleted is no change. FLUSHDB, FLUSHALL and
 * SWAPDB touch the watched keys of the databases they empty or replace
 * (gr_watch_touch_db, called before the change).
 */
#ifndef GR_TRANSACTION_H
#define GR_TRANSACTION_H

#include <stddef.h>
#include <stdint.h>

#include "exec/db.h"

/* The commands, as the table's argv handlers (the connection is db->current). */
void gr_transaction_multi(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                          gr_reply_t *reply);
void gr_transaction_exec(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                         gr_reply_t *reply);
void gr_transaction_discard(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                            gr_reply_t *reply);
void gr_transaction_watch(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                          gr_reply_t *reply);
void gr_transaction_unwatch(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                            gr_reply_t *reply);

/* The entry points' hook while conn->in_multi: 1 when the command was queued or refused
 * (its reply written), 0 when it runs at once (EXEC, DISCARD, MULTI, WATCH, QUIT, RESET). */
int gr_transaction_queue_argv(gr_server_t *db, gr_connection_t *conn, size_t argc, const uint8_t *const *argv,
                              const size_t *argv_length, gr_reply_t *reply);
int gr_transaction_queue_request(gr_server_t *db, gr_connection_t *conn, const gr_request_t *request,
                                 gr_reply_t *reply);

/* Leave MULTI and unwatch everything (RESET; the connection going away). */
void gr_transaction_forget(gr_server_t *db, gr_connection_t *conn);
/* Whether conn's queued transaction holds a write or may-replicate command (CLIENT PAUSE WRITE
 * holds its EXEC, as Redis 7.0 does). */
int gr_transaction_queued_write(gr_connection_t *conn);
void gr_transaction_free_all(gr_server_t *db);

/* A key of database db_index was modified (after the change): its watchers are marked dirty and
 * its client-side caches told (exec/tracking.h, which has no databases, as Redis's). */
void gr_watch_touch_slow(gr_server_t *db, int32_t db_index, const uint8_t *key, size_t key_length);
static inline void gr_watch_touch(gr_server_t *db, int32_t db_index, const uint8_t *key, size_t key_length) {
    if (db->watched_keys | db->tracking_live) gr_watch_touch_slow(db, db_index, key, key_length);
}
/* The same for a key of the current database (db->keyspace). */
void gr_watch_touch_current_slow(gr_server_t *db, gr_bytes_t key);
static inline void gr_watch_touch_current(gr_server_t *db, gr_bytes_t key) {
    if (db->watched_keys | db->notify_flags | db->tracking_live) gr_watch_touch_current_slow(db, key);
}
/* Database emptied is about to be flushed (replaced_with -1) or swapped with replaced_with:
 * every key watched in emptied that exists there, or in replaced_with, is touched. */
void gr_watch_touch_db(gr_server_t *db, int32_t emptied, int32_t replaced_with);

/* Tests: 0 when the watch table agrees with every connection's list, else -1. */
int gr_transaction_check(const gr_server_t *db);

#endif
