/* replication.h — what the server knows about its place in a replication set (issue 35):
 * a primary, or a replica of a Redis (or goblin) primary. The state lives in the db
 * (gr_server_t.repl) because three layers read it: the commands (REPLICAOF, ROLE, REPLCONF,
 * INFO replication, the CONFIG parameters), admission (db.c: READONLY and MASTERDOWN), the
 * lookups (a replica does not expire keys itself: it waits for the primary's DEL), and the
 * serving loop's link to the primary (server/replica.c), which does the network part: connect,
 * handshake, PSYNC, the RDB payload, the command stream, REPLCONF ACK.
 *
 * Commands never touch the socket: REPLICAOF sets master_host/port and `restart`, REPLCONF
 * GETACK from the primary sets `getack`; the loop acts on both after the command.
 */
#ifndef GR_REPLICATION_H
#define GR_REPLICATION_H

#include <stdint.h>

/* The link's state, as ROLE names it (Redis's repl_state, collapsed). */
typedef enum gr_repl_state {
    GR_REPL_NONE = 0,         /* a primary */
    GR_REPL_CONNECT,          /* must connect (after REPLICAOF, a drop, a failed attempt) */
    GR_REPL_CONNECTING,       /* TCP connect in progress */
    GR_REPL_HANDSHAKE,        /* PING, AUTH, REPLCONF, PSYNC sent one by one */
    GR_REPL_TRANSFER,         /* +FULLRESYNC read: the RDB payload is arriving */
    GR_REPL_CONNECTED         /* the command stream is applied */
} gr_repl_state_t;

typedef struct gr_replication {
    char master_host[256];
    int64_t master_port;          /* 0: no primary (this server is one) */
    char masterauth[256];
    char masteruser[128];
    uint8_t read_only;            /* replica-read-only (default yes) */
    uint8_t serve_stale_data;     /* replica-serve-stale-data (default yes) */
    uint8_t state;                /* gr_repl_state_t */
    uint8_t restart;              /* REPLICAOF changed the primary: the loop drops the link */
    uint8_t getack;               /* the primary asked REPLCONF GETACK: the loop answers ACK */
    uint8_t have_cached;          /* replid/offset describe data this server holds: PSYNC them */
    uint8_t loading_aside;        /* a full sync's payload is loaded by a thread while the old data is
                                   * served (INFO persistence async_loading, as Redis's swapdb load) */
    char replid[41];              /* master_replid: the primary's history this data follows */
    char replid2[41];             /* the history before the last switch (REPLICAOF NO ONE) */
    int64_t offset;               /* master_repl_offset: bytes of the stream applied */
    int64_t second_offset;        /* replid2 is valid up to this offset; -1 none */
    int64_t last_io_ms;           /* the primary's last byte (master_last_io_seconds_ago) */
    int64_t link_down_since_ms;   /* 0: the link was never up */
    int64_t sync_total_bytes;     /* the payload: -1 EOF-marked (size unknown) */
    int64_t sync_read_bytes;
    int64_t sync_full;            /* full resyncs done (this replica) */
    int64_t sync_partial_ok;      /* +CONTINUE accepted */
    /* What Sentinel reads and the primary is told (Redis 7.0's parameters of the same names): */
    int64_t priority;             /* replica-priority: INFO slave_priority; 0 = never promoted (100) */
    char announce_ip[256];        /* replica-announce-ip: sent as REPLCONF ip-address when set */
    int64_t announce_port;        /* replica-announce-port: REPLCONF listening-port when not 0 */
    uint8_t announced;            /* replica-announced: INFO replica_announced (Sentinel hides a 0) */
    void *master;                 /* the primary's pseudo-client (gr_connection_t), NULL when none */
} gr_replication_t;

#endif
