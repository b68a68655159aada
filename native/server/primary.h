/* primary.h — the serving loop's replicas (goblin as a primary, issue 35).
 *
 * A replica is an ordinary RESP connection of the loop that sent SYNC or PSYNC (its handler,
 * commands/cmd_replication.c, only flags it). Every loop iteration gr_primary_tick takes those
 * requests (+CONTINUE from the backlog, or a full resync: +FULLRESYNC, an RDB written by a
 * forked child to a file or a pipe, then the stream kept for it meanwhile), feeds the payload
 * as the sockets drain, flushes the stream to online replicas, enforces the replica output buffer
 * limit, frees the backlog after repl-backlog-ttl without replicas, and once a second sends
 * keepalives, PINGs every repl-ping-replica-period and drops timed-out replicas. On a primary
 * the stream comes from exec's propagation (the backlog's tap, exec/repl_backlog.h); on a
 * replica (chained replication) from server/replica.c, which feeds the backlog what it applies.
 */
#ifndef GR_PRIMARY_H
#define GR_PRIMARY_H

#include "exec/db.h"
#include "resp/resp_conn.h"

typedef struct gr_primary gr_primary_t;

typedef struct gr_primary_io {
    void *context;
    /* the RESP connection of a registered connection, or NULL (a ring session) */
    gr_resp_conn_t *(*conn_of)(void *context, const gr_connection_t *state);
    /* write what the connection has and watch it accordingly; may close it (gr_primary_forget
     * is then called for it before this returns) */
    void (*flush)(void *context, int fd);
    void (*log)(void *context, const char *line);
} gr_primary_io_t;

gr_primary_t *gr_primary_new(gr_server_t *db, const gr_primary_io_t *io);
void gr_primary_free(gr_primary_t *primary);
void gr_primary_tick(gr_primary_t *primary);
/* The connection state is going away (closed by the loop). */
void gr_primary_forget(gr_primary_t *primary, gr_connection_t *state);
/* 1 while it has work that must not wait for a socket event (a payload to feed, a sync child). */
int gr_primary_busy(const gr_primary_t *primary);

#endif
