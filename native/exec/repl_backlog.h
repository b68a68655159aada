/* repl_backlog.h — goblin as a primary (issue 35): the replication backlog, what each replica
 * connection told us (REPLCONF), and the primary's counters and settings. The network part
 * (SYNC/PSYNC served, the RDB payload, the stream to each replica) is the serving loop's
 * (server/primary.c); the commands (commands/cmd_replication.c) and admission (db.c:
 * NOREPLICAS) read and set what is here.
 *
 * The backlog is Redis's: a circular buffer of the last repl-backlog-size bytes of the write
 * stream (exec/propagate.h's, SELECT and MULTI/EXEC included), created when the first replica
 * asks for a sync (or when a replica is promoted, REPLICAOF NO ONE, so the old primary's other
 * replicas can continue). master_repl_offset (db->repl.offset) counts every byte fed to it.
 * A PSYNC <replid> <offset> whose offset lies within [first_offset, offset + 1] continues
 * (+CONTINUE) from the backlog; anything else gets a full resync.
 */
#ifndef GR_REPL_BACKLOG_H
#define GR_REPL_BACKLOG_H

#include <stddef.h>
#include <stdint.h>

struct gr_server;

/* A replica connection's place in the sync (CLIENT LIST, INFO replication's state=). */
typedef enum gr_replica_state {
    GR_REPLICA_NONE = 0,          /* not a replica */
    GR_REPLICA_WAIT_BGSAVE_START, /* asked for a full sync: waits for a fork */
    GR_REPLICA_WAIT_BGSAVE_END,   /* the child writes the RDB; the stream is kept for it */
    GR_REPLICA_SEND_BULK,         /* the payload is being sent */
    GR_REPLICA_ONLINE             /* the stream flows */
} gr_replica_state_t;

/* What one connection told us as a replica (REPLCONF, SYNC/PSYNC), in gr_connection_t. */
typedef struct gr_repl_peer {
    uint8_t state;                /* gr_replica_state_t */
    uint8_t sync_request;         /* 1 SYNC, 2 PSYNC: the loop takes it (server/primary.c) */
    uint8_t capa_eof, capa_psync2;
    uint8_t rdb_only;             /* REPLCONF rdb-only 1 (redis-cli --rdb): closed after the payload */
    int32_t listening_port;       /* REPLCONF listening-port */
    char ip[256];                 /* REPLCONF ip-address (a host name too: up to 255 bytes, as Redis), else the peer's address */
    char psync_replid[41];
    int64_t psync_offset;
    int64_t ack_offset;           /* REPLCONF ACK <offset> */
    int64_t fack_offset;          /* REPLCONF ACK <offset> FACK <offset>: fdatasynced to its AOF (WAITAOF) */
    int64_t ack_ms;               /* when (unix ms) */
    uint32_t ack_count;           /* ACKs received (a diskless sync's replica goes online at the next one) */
    int64_t woff;                 /* any client: the offset its last write reaches (WAIT waits for it) */
    void *link;                   /* server/primary.c's record of this replica */
} gr_repl_peer_t;

typedef struct gr_repl_primary {
    /* the backlog */
    uint8_t *backlog;             /* NULL: none yet */
    int64_t backlog_size;         /* the buffer's size (repl-backlog-size when created) */
    int64_t backlog_histlen;      /* bytes it holds */
    int64_t backlog_index;        /* where the next byte goes */
    int64_t backlog_config;       /* repl-backlog-size (default 1mb) */
    /* settings */
    int64_t ping_period_s;        /* repl-ping-replica-period (10) */
    int64_t min_replicas_to_write;   /* 0: off */
    int64_t min_replicas_max_lag;    /* seconds (10) */
    int64_t repl_timeout_s;       /* repl-timeout (60) */
    uint8_t diskless_sync;        /* repl-diskless-sync (yes, as Redis 7.0) */
    int64_t diskless_delay_s;     /* repl-diskless-sync-delay (5): wait for more replicas */
    int64_t diskless_max_replicas;   /* repl-diskless-sync-max-replicas (0: no limit) */
    int64_t backlog_ttl_s;        /* repl-backlog-ttl (3600): free the backlog after this long without replicas */
    /* the loop's view, refreshed every tick (server/primary.c) */
    int64_t connected;            /* replicas online */
    int64_t good;                 /* online with an ACK no older than min-replicas-max-lag */
    /* counters (INFO stats) */
    int64_t sync_full, sync_partial_ok, sync_partial_err;
    /* set by the commands, acted on by the loop */
    uint8_t sync_requests;        /* a SYNC/PSYNC arrived (gr_repl_peer_t.sync_request) */
    uint8_t getack;               /* WAIT: send REPLCONF GETACK * to the replicas */
    uint8_t acks;                 /* an ACK arrived: blocked WAITs may be answered */
    const struct gr_block_spec *wait_spec;   /* WAIT's (commands/cmd_replication.c) once one parked */
    const struct gr_block_spec *waitaof_spec;   /* WAITAOF's (commands/cmd_aof.c) once one parked */
    /* the loop's feed of each replica (server/primary.c), called after the backlog took bytes */
    void (*feed)(void *context, const uint8_t *data, size_t length);
    void *feed_context;
} gr_repl_primary_t;

void gr_repl_primary_init(gr_repl_primary_t *p);
void gr_repl_primary_release(gr_repl_primary_t *p);

/* Create the backlog (empty, starting after db->repl.offset) if there is none. 0, -1 on OOM. */
int gr_repl_backlog_create(struct gr_server *db);
/* repl-backlog-size: the size a new backlog gets; an existing one keeps its newest bytes. */
void gr_repl_backlog_resize(struct gr_server *db, int64_t size);
/* Free it (repl-backlog-ttl): the next replica's sync creates a new one. */
void gr_repl_backlog_free(struct gr_server *db);
/* Forget what it holds: it starts after the current offset (a replica promoted). */
void gr_repl_backlog_reset(struct gr_server *db);
/* Append stream bytes: the backlog, master_repl_offset, then the replicas (feed). */
void gr_repl_backlog_feed(struct gr_server *db, const uint8_t *data, size_t length);
/* The first offset the backlog holds (repl_backlog_first_byte_offset); offset + 1 when empty. */
int64_t gr_repl_backlog_first_offset(const struct gr_server *db);
/* Whether PSYNC <replid> <offset> can continue from here; 1 yes. */
int gr_repl_backlog_can_continue(const struct gr_server *db, const char *replid, int64_t offset);
/* Copy the backlog from offset to its end through out (at most two calls). */
void gr_repl_backlog_read(const struct gr_server *db, int64_t offset,
                          void (*out)(void *context, const uint8_t *data, size_t length), void *context);

/* min-replicas-to-write: 1 when writes must be refused (-NOREPLICAS). */
int gr_repl_min_replicas_refuse(const struct gr_server *db);
/* Replicas whose acknowledged offset is at least offset (WAIT). */
int64_t gr_repl_replicas_acked(const struct gr_server *db, int64_t offset);
/* Replicas whose AOF is fdatasynced to at least offset, by their FACK (WAITAOF). */
int64_t gr_repl_replicas_fsynced(const struct gr_server *db, int64_t offset);
/* Answer the parked WAITs that enough replicas acknowledged (request->index: the offset,
 * request->count: how many replicas; request->index2, what its reply says, is refreshed so a
 * later timeout answers the latest count); the loop calls it after ACKs arrived. WAITAOFs
 * likewise (index2: the replicas by FACK; answered when flag >= cursor, the local ack against
 * numlocal, and index2 >= count). */
void gr_repl_wait_check(struct gr_server *db);

#endif
