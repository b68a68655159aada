/* replica.h — the serving loop's link to a primary (goblin as a replica, issue 35).
 *
 * One non-blocking TCP connection in the loop's epoll set. The loop hands it socket events
 * (gr_replica_link_event) and calls gr_replica_link_tick every iteration (timers, REPLICAOF's
 * restart, REPLCONF ACK). The state the commands see is db->repl (exec/replication.h).
 */
#ifndef GR_REPLICA_H
#define GR_REPLICA_H

#include <stdint.h>

#include "exec/db.h"

typedef struct gr_replica_link gr_replica_link_t;

/* log: the loop's log (one line, no newline); watch: the epoll data word for the link's fd
 * is watch | fd; next_client_id: the loop's id counter (the primary's pseudo-client takes one). */
gr_replica_link_t *gr_replica_link_new(gr_server_t *db, int epoll_fd, uint64_t watch,
                                       void (*log)(void *context, const char *line), void *log_context,
                                       int64_t *next_client_id);
void gr_replica_link_free(gr_replica_link_t *link);
/* fd: the descriptor the event is for (the link's socket, or its helper threads' eventfd). */
void gr_replica_link_event(gr_replica_link_t *link, int fd, uint32_t events);
void gr_replica_link_tick(gr_replica_link_t *link);

#endif
