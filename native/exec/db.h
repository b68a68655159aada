/* db.h — the server's databases, its connections, and the execution context every
 * command runs in.
 *
 * A gr_server_t owns the 16 keyspaces (keyspace.c) SELECT chooses between, the list engine
 * configuration, the server-wide counters that INFO reports, and the registry of
 * connections (gr_connection_t: one per RESP connection and per ring session) that CLIENT
 * LIST and CLIENT KILL walk. Every command runs on behalf of one connection: the two
 * execute entry points make it db->current and point db->keyspace at its selected
 * database, so command code reads db->keyspace and never looks at the db index. (One
 * thread executes everything, so "the current connection" is well defined.) Both transports execute through it on one
 * thread: the ring path decodes an SBE request into a gr_request_t (ring/codec.c) and calls
 * gr_db_execute; the RESP path calls gr_db_execute_argv, which builds the same gr_request_t
 * through the command table (exec/command.h) or, for a command without a typed form, runs
 * its argv handler. Either way the command runs as one call through its row's handler.
 */
#ifndef GR_DB_H
#define GR_DB_H

#include <stddef.h>
#include <stdint.h>

#include "core/number.h"
#include "exec/call.h"
#include "exec/command.h"
#include "exec/request.h"
#include "engines/keyspace.h"
#include "engines/list/list.h"
#include "exec/propagate.h"   /* the write-effect stream the append-only log records */
#include "exec/reply.h"
#include "exec/pubsub.h"       /* the Pub/Sub registry and the subscriber each connection embeds */
#include "exec/notify.h"       /* keyspace notifications: gr_notify below */
#include "exec/value_type.h"   /* GR_TYPE_*, and each type's facts */
#include "exec/child.h"        /* the one background child (BGSAVE, BGREWRITEAOF) */
#include "exec/slowlog.h"      /* SLOWLOG: the commands over slowlog-log-slower-than */
#include "exec/latency.h"      /* LATENCY: the monitor's events and per-command histograms */
#include "exec/acl.h"          /* ACL users: who a connection is and what it may run */
#include "exec/evict.h"        /* maxmemory-policy: key eviction, the LRU clock and LFU counter */
#include "exec/replication.h"  /* primary or replica: the link's state (server/replica.c) */
#include "exec/repl_backlog.h"  /* goblin as a primary: the backlog, each replica's REPLCONF (server/primary.c) */


#define GR_DB_COUNT 16

/* What the server knows about one client, whichever transport it came by. The transport
 * owns the struct (embedded in its connection or session) and registers it. */
typedef enum gr_connection_kind { GR_CONN_TCP = 0, GR_CONN_UNIX = 1, GR_CONN_RING = 2 } gr_connection_kind_t;

typedef struct gr_connection {
    int64_t id;
    uint8_t kind;             /* gr_connection_kind_t */
    uint8_t protocol;         /* RESP protocol: 2, or 3 after HELLO 3 (ring sessions: 2) */
    uint8_t kill_requested;   /* CLIENT KILL: the transport closes it after this command */
    uint8_t kill_reported;
    uint8_t reply_off;        /* CLIENT REPLY OFF: RESP writes no reply until CLIENT REPLY ON */
    uint8_t monitor;          /* MONITOR: every other call is written to it (exec/monitor.h) */
    uint8_t reply_skip_next;  /* CLIENT REPLY SKIP: the next command's reply is dropped */
    uint8_t no_touch;         /* CLIENT NO-TOUCH ON: its reads leave keys' LRU/LFU alone (but TOUCH) */
    uint8_t no_evict;         /* CLIENT NO-EVICT ON: exempt from client eviction (recorded, flag e) */
    const char *kill_reason;  /* why the server closes it, for the log (a static text); NULL: CLIENT KILL */
    int32_t db_index;
    int64_t created_ms;
    int64_t last_command_ms;
    struct gr_acl_user *user;  /* the user it authenticated as (exec/acl.h), NULL before: admission
                                  then acts as the default user when that is on and nopass, else NOAUTH */
    char name[128];
    char lib_name[64];
    char lib_ver[64];
    char addr[64];
    char laddr[64];
    const char *last_command;  /* the table's name of the last command (CLIENT LIST cmd=) */
    /* Set by the transport at registration, for replies written later (blocking.c): */
    gr_reply_t *reply;               /* this connection's reply writer */
    uint64_t *reply_request_id;      /* the ring writer's request id field; NULL over RESP */
    int fd;                          /* RESP socket or ring control socket (liveness); -1 unknown */
    int32_t pid;                     /* ring client's process (liveness); 0 unknown */
    int64_t query_buffer_bytes;      /* RESP: unparsed input (CLIENT LIST qbuf); kept by the transport */
    int64_t output_buffer_bytes;     /* RESP: output not yet written (omem) */
    int64_t memory_bytes;            /* RESP: the connection's buffers (tot-mem) */
    uint8_t blocked;                 /* parked in a blocking command: read nothing more */
    uint8_t woken;                   /* unblocked, not yet taken by gr_db_take_woken */
    uint8_t pause_held;              /* CLIENT PAUSE holds its next command (pause.h): read nothing more */
    struct gr_waiter *waiter;        /* while blocked */
    uint8_t in_multi;                /* between MULTI and EXEC/DISCARD: commands are queued */
    struct gr_transaction *transaction;   /* MULTI queue and WATCHed keys (transaction.c), or NULL */
    /* Pub/Sub (pubsub.h): the transport sets subscriber.owner and .deliver at registration
     * (deliver NULL: this transport cannot subscribe). output_pending: a delivery wrote output
     * the transport has not flushed yet; the connection is on the db's pending list. */
    gr_subscriber_t subscriber;
    uint8_t output_pending;
    /* CLIENT TRACKING (exec/tracking.h): GR_TRACKING_* flags (0: off), the client its messages
     * go to (0: itself), its BCAST prefixes (tracking.c's), and the transport's writer of
     * invalidation messages (NULL: this transport cannot receive them). caching_hold: the
     * running command is a CLIENT one, so CLIENT CACHING's flag outlives it. */
    uint8_t tracking;
    uint8_t tracking_caching_hold;
    int64_t tracking_redirect;
    struct gr_tracking_prefixes *tracking_prefixes;
    void (*invalidate)(struct gr_connection *target, int form, const gr_bytes_t *keys, size_t count,
                       int64_t redirect_id);
    uint8_t repl_master;             /* the primary's stream (server/replica.c): admitted without checks, sees expired keys */
    gr_repl_peer_t repl_peer;        /* a replica of this server: its REPLCONF, its sync (server/primary.c) */
    struct gr_connection *prev, *next;   /* the db's registry */
} gr_connection_t;

/* Text fields INFO reports; set by the Python server at startup. */
typedef struct gr_db_info {
    char version[32];
    char name[64];
    char mode[32];        /* "busy" or "adaptive" */
    char list_implementation[16];
    char executable[256];
    char config_file[256];
    char run_id[41];
    int64_t tcp_port;
    int64_t process_id;
    int64_t ring_capacity;
    int64_t mlock_all;    /* --mlock: the server mlockall'd; RT reservations lock too */
} gr_db_info_t;

typedef struct gr_db_stats {
    int64_t start_time_ms;
    int64_t commands_processed;
    int64_t connections_received;
    int64_t rejected_connections;
    int64_t connected_resp_clients;
    int64_t connected_ring_sessions;
    int64_t ring_messages;
    int64_t ring_malformed;
    int64_t ring_invalidation_epochs;   /* invalidations a reply ring could not take at once (epoch bumps) */
    int64_t keyspace_hits;
    int64_t keyspace_misses;
    int64_t expired_keys;
    int64_t evicted_keys;         /* keys maxmemory-policy evicted (exec/evict.c) */
    int64_t evicted_clients;      /* RESP clients maxmemory-clients closed (server/server.c) */
    int64_t eviction_exceeded_total_us;   /* time used memory stayed over maxmemory with eviction on */
    int64_t eviction_exceeded_start_us;   /* ... since this (monotonic us); 0: under */
    int64_t net_input_bytes;
    int64_t net_output_bytes;
    int64_t peak_memory;
    int64_t ops_per_sec;          /* instantaneous_ops_per_sec, from the cron's samples */
    int64_t ops_sample_commands;
    int64_t ops_sample_ms;
} gr_db_stats_t;

/* The settings CONFIG GET/SET reach (cmd_config.c); the server sets them at startup. */
typedef struct gr_db_config {
    int64_t maxmemory;              /* bytes; 0: no limit. Over it, commands that grow data evict or get OOM */
    int32_t maxmemory_policy;       /* GR_MAXMEMORY_* (exec/evict.h): noeviction */
    int64_t maxmemory_samples;      /* keys sampled per database per eviction round: 5 */
    int64_t maxmemory_eviction_tenacity;   /* 0..100: time one eviction call may take: 10 */
    int64_t lfu_log_factor;         /* 10: how slowly the LFU counter grows */
    int64_t lfu_decay_time;         /* 1: minutes per counter decrement (0: never) */
    int64_t proto_max_bulk_len;     /* RESP bulk limit */
    int64_t timeout_s;              /* close RESP clients idle this long; 0: never */
    int64_t maxclients;             /* RESP clients at once (the server refuses more) */
    uint8_t protected_mode;         /* no requirepass: serve loopback clients only */
    int64_t client_query_buffer_limit;   /* unparsed input one RESP client may hold (1 GiB) */
    /* client-output-buffer-limit per class (GR_CLIENT_CLASS_*): hard bytes, soft bytes, soft
     * seconds; 0 disables. Redis's defaults: normal 0 0 0, replica 256mb 64mb 60, pubsub 32mb 8mb 60. */
    int64_t output_limit[3][3];
    int64_t maxmemory_clients;      /* bytes all RESP clients' buffers may use (0: no limit) */
    uint8_t maxmemory_clients_percent;   /* maxmemory_clients is a percentage of maxmemory */
    char bind[256];
    char unixsocket[256];
    char dir[256];
    char *config_file;              /* the file the server started from, or NULL (CONFIG REWRITE) */
    char **config_defaults;         /* each parameter's value before the file and flags, for REWRITE */
    size_t config_default_count;
    /* Redis's encoding-tuning knobs (CONFIG SET set-max-intset-entries, ...): when a small set,
     * hash or sorted set leaves its compact encoding. Defaults are Redis 7's. */
    int64_t set_max_intset_entries;       /* 512 */
    int64_t set_max_listpack_entries;     /* 128 */
    int64_t set_max_listpack_value;       /* 64 */
    int64_t hash_max_listpack_entries;    /* 128 */
    int64_t hash_max_listpack_value;      /* 64 */
    int active_expire_disabled;           /* DEBUG SET-ACTIVE-EXPIRE 0: the cron expires nothing */
    int64_t latency_monitor_threshold_ms; /* 0: the latency monitor records nothing */
    int latency_tracking;                 /* 1: every call's duration goes into its command's histogram */
    double latency_percentiles[8];        /* latency-tracking-info-percentiles (INFO latencystats) */
    int latency_percentile_count;
    int64_t hll_sparse_max_bytes;         /* 3000: a sparse HyperLogLog longer turns dense */
    int64_t zset_max_listpack_entries;    /* 128 */
    int64_t zset_max_listpack_value;      /* 64 */
    uint8_t zset_packed;                  /* zset-implementation packed: sets leaving compact become packed when they fit */
    int64_t stream_node_max_bytes;        /* 4096: a stream node is sealed past this (0: no limit) */
    int64_t stream_node_max_entries;      /* 100: ... or holding this many entries */
    /* list-max-listpack-size as set (-2); gr_list_config_from_listpack_size turns it into
     * list_config for lists created after. list-compress-depth (0) is kept for CONFIG GET
     * only: goblin does not compress list leaves. */
    int64_t list_max_listpack_size;
    int64_t list_compress_depth;
    /* the append-only log (persist/aof.h; appendonly yes is db->aof != NULL) */
    uint8_t appendfsync;                    /* GR_APPENDFSYNC_*: everysec */
    uint8_t aof_load_truncated;             /* replay drops a cut-short last command: yes */
    char appendfilename[256];               /* in dir: appendonly.aof */
    int64_t auto_aof_rewrite_percentage;    /* rewrite when the file grew this % over its base: 100 */
    int64_t auto_aof_rewrite_min_size;      /* ... and is at least this big: 64mb */
    int64_t tracking_table_max_keys;        /* tracking-table-max-keys: 1000000 (0: no limit) */
    int64_t busy_reply_threshold_ms;        /* busy-reply-threshold (lua-time-limit): a script running
                                               longer makes the server answer others -BUSY: 5000 */
} gr_db_config_t;

enum { GR_APPENDFSYNC_NO = 0, GR_APPENDFSYNC_ALWAYS = 1, GR_APPENDFSYNC_EVERYSEC = 2 };
/* Persistence settings and state (persist/snapshot.c reads and writes them; CONFIG and INFO
 * persistence show them). Redis's names in the comments. */
#define GR_SAVE_RULES_MAX 16
typedef struct gr_save_rule { int64_t seconds, changes; } gr_save_rule_t;
typedef struct gr_persistence {
    char dbfilename[256];                 /* dbfilename (in config.dir) */
    gr_save_rule_t save_rules[GR_SAVE_RULES_MAX];   /* save "<seconds> <changes> ..." */
    int32_t save_rule_count;
    int64_t key_save_delay_us;            /* rdb-key-save-delay: a child sleeps this long per key (tests) */
    int64_t lastsave_s;                   /* lastsave: unix s of the last successful save */
    int64_t last_save_attempt_s;          /* lastbgsave_try: a failed BGSAVE waits 5 s before a rule retries */
    int64_t dirty_before_bgsave;          /* dirty at the fork: subtracted when the child succeeds */
    uint8_t last_bgsave_ok;               /* lastbgstatus */
    uint8_t bgsave_scheduled;             /* BGSAVE SCHEDULE while another child ran */
    int64_t last_bgsave_seconds;          /* rdb_last_bgsave_time_sec (-1: none) */
    int64_t saves;                        /* rdb_saves: successful saves since start */
    int64_t last_load_keys_loaded, last_load_keys_expired;
    int64_t loading_seconds_us;           /* how long the start-up load took */
    int64_t last_file_bytes;              /* size of the last file written */
    uint8_t shutdown_requested;           /* SHUTDOWN: the server loop stops (persistence.c) */
    int64_t bgsave_started_s;             /* unix s the running BGSAVE child was forked */
    int32_t bgsave_child_pid;             /* its pid (its temp file is temp-<pid>.grdb) */
    /* Redis's writeCommandsDeniedByDiskError: admission (db.c) answers -MISCONF to writes (and
     * PING) while the last background save failed with stop-writes-on-bgsave-error and save
     * rules set, or while the append-only log cannot be written or fsynced. */
    uint8_t stop_writes_on_bgsave_error;  /* stop-writes-on-bgsave-error: yes */
    uint8_t shutdown_on_sigterm;          /* shutdown-on-sigterm / -sigint: GR_SHUTDOWN_* flags (persistence.h) */
    uint8_t shutdown_on_sigint;
    int32_t aof_write_errno;              /* 0, or why the log's last write failed (aof_last_write_status:err) */
    int32_t aof_fsync_errno;              /* 0, or why the log's last background fsync failed: written by
                                             the fsync thread, read with __atomic loads */
} gr_persistence_t;

enum { GR_CLIENT_CLASS_NORMAL = 0, GR_CLIENT_CLASS_REPLICA = 1, GR_CLIENT_CLASS_PUBSUB = 2 };
enum { GR_LIMIT_HARD = 0, GR_LIMIT_SOFT = 1, GR_LIMIT_SOFT_SECONDS = 2 };

/* Per-command counters for INFO commandstats (indexed like the command table). */
#define GR_COMMAND_STAT_SLOTS 512
typedef struct gr_command_stat {
    int64_t calls, rejected_calls, failed_calls;
    uint64_t cycles;           /* time spent, in gr_db_account's clock; gr_db_command_usec converts */
    uint32_t *histogram;       /* latency-tracking: GR_LATENCY_BUCKETS counts of call durations, or NULL */
} gr_command_stat_t;

/* INFO errorstats: replies per error prefix ("ERR", "WRONGTYPE", ...). */
#define GR_ERROR_STAT_SLOTS 32
typedef struct gr_error_stat {
    char prefix[24];
    int64_t count;
} gr_error_stat_t;

/* The server: its 16 databases, its connections, its configuration, statistics, persistence,
 * Pub/Sub, blocked clients and the running call. Every handler takes it (named `db` by habit,
 * and its functions, in exec/db.c, are gr_db_*); server/server.c's serving loop around it is
 * gr_serve_loop_t. */
typedef struct gr_server {
    gr_keyspace_t *keyspace;                  /* the current connection's selected database */
    gr_keyspace_t *keyspaces[GR_DB_COUNT];
    gr_connection_t *current;                 /* the connection the running command came from */
    uint8_t in_exec;                          /* EXEC is running its queue (ACL LOG's "multi" context) */
    gr_connection_t *connections;             /* registry, newest first */
    int64_t kills_pending;                    /* killed connections the server has not closed (server.c) */
    int64_t now_ms;                           /* unix ms, read once per command */
    char requirepass[256];                    /* empty: no AUTH needed; the default user's password */
    struct gr_acl *acl;                       /* ACL users (exec/acl.h) */
    gr_db_config_t config;
    int64_t dirty;                            /* changes since the last save (rdb_changes_since_last_save) */
    gr_child_t child;                         /* the background child (child.h): reaped by gr_db_cron */
    gr_persistence_t persistence;             /* snapshot (and log) settings and state: persist/ */
    gr_command_stat_t command_stats[GR_COMMAND_STAT_SLOTS];
    gr_latency_monitor_t latency;           /* LATENCY's events (latency-monitor-threshold) */
    struct gr_connection **monitors;        /* MONITOR's connections (exec/monitor.h) */
    size_t monitor_count, monitor_capacity;
    gr_error_stat_t error_stats[GR_ERROR_STAT_SLOTS];
    int64_t total_error_replies;
    /* blocking.c: waiters, the keys they wait on, the keys made ready by this command */
    struct gr_blocking *blocking;
    int64_t blocked_count;                    /* INFO blocked_clients */
    int64_t woken_pending;                    /* woken RESP connections not yet taken */
    /* pause.c: CLIENT PAUSE's mode (GR_PAUSE_*), deadline (monotonic ns), held connections */
    uint8_t pause_mode;
    int64_t pause_end_ns;
    int64_t pause_held_count;
    int64_t next_block_deadline_ms;           /* earliest waiter deadline (monotonic ms); INT64_MAX none */
    int32_t serve_deferred;                   /* > 0 inside EXEC: serve waiters after it */
    /* transaction.c: WATCHed keys and who watches them */
    struct gr_watch_table *watch;
    /* pubsub.h: the registry; connections a delivery wrote to, to be flushed by their transport */
    gr_pubsub_t *pubsub;
    int notify_flags;                         /* notify-keyspace-events (exec/notify.h); 0: off */
    int notify_quiet;                         /* > 0: a touch is not the command's own change (expiry) */
    uint8_t *notify_records;                  /* the running calls' keyspace events (notify.c), while notify_flags */
    size_t notify_records_length, notify_records_capacity;
    struct gr_call *call;                     /* the running command's call (exec/call.h), or NULL */
    gr_connection_t **pending_output;
    size_t pending_output_count, pending_output_capacity;
    int64_t watched_keys;                     /* (connection, key) pairs; 0: touching costs one branch */
    /* exec/tracking.h: the tracking and prefix tables; tracking_live > 0 while any client
     * tracks or any key is tracked (0: a modified key costs one branch) */
    struct gr_tracking *tracking;
    int64_t tracking_live;
    int32_t batch_depth;                      /* > 0: inside a transport's batch of commands */
    int32_t batch_clock_read;                 /* now_ms already read for this batch */
    double cycles_per_ns;                     /* commandstats clock rate (calibrated) */
    uint64_t calibration_cycles;
    int64_t calibration_ns;
    gr_list_config_t list_config;
    gr_list_encoding_t list_target;           /* --list-implementation: the engine new lists convert to */
    uint8_t array_engine;                     /* --array-implementation: GR_ARRAY_ENGINE_* of new arrays (0: classic) */
    gr_db_stats_t stats;
    gr_db_info_t info;
    /* scratch shared by the argv path: a request and its items */
    uint64_t expire_cursor[GR_DB_COUNT];      /* where active expiry's scan of each db stands */
    uint64_t part_expire_cursor[GR_DB_COUNT]; /* ... and its scan for values with expiring parts (hash fields) */
    gr_request_t scratch_request;
    /* eviction (exec/evict.c): Redis's pool of candidates, the random-policy cursor, a
     * call that ran out of time (the cron goes on), the LFU counter's random state, and
     * TOUCH's exemption from CLIENT NO-TOUCH */
    struct gr_evict_pool *evict_pool;
    uint32_t evict_next_db;
    uint8_t evict_running;
    uint8_t touch_forced;
    uint64_t evict_random;
    int64_t stamp_ms;                         /* the ms access_stamp was made for ... */
    uint64_t access_stamp;                    /* ... gr_evict_stamp(stamp_ms): new keys' access bits */
    gr_bytes_t *scratch_items;
    uint32_t scratch_capacity;
    /* persistence: the write-effect stream (propagate.h) and the append-only log that
     * consumes it (persist/aof.h; NULL while appendonly is no) */
    gr_propagation_t propagation;
    struct gr_aof *aof;
    gr_slowlog_t slowlog;                     /* SLOWLOG (slowlog.h): fed by gr_db_account's callers */
    /* script/ (EVAL, SCRIPT): its Lua state and cache, made at the first use; script/ sets the
     * release gr_db_free calls */
    struct gr_scripting *scripting;
    void (*scripting_release)(struct gr_server *db);
    /* script/'s function libraries (FUNCTION, FCALL), made at the first FUNCTION LOAD, with
     * the release gr_db_free calls */
    struct gr_functions *functions;
    void (*functions_release)(struct gr_server *db);
    /* the state whose script runs now (EVAL's or the functions' engine), NULL between runs:
     * SCRIPT KILL and FUNCTION KILL find the run through it */
    struct gr_scripting *script_running;
    /* the server's log (server/server.c sets it; NULL: lines are dropped): redis.log */
    void (*log_line)(void *context, const char *line);
    void *log_context;
    /* A script past busy-reply-threshold (script/): the script layer calls busy_serve (the serving
     * loop's, server/server.c) from inside the script, with busy set to GR_BUSY_SCRIPT or
     * GR_BUSY_FUNCTION for the time of that call; admission then answers -BUSY to every command
     * without allow_busy, and the loop reads nothing from busy_caller (the script's client).
     * NULL busy_serve: nobody else is served until the script ends. */
    uint8_t busy;
    gr_connection_t *busy_caller;
    void (*busy_serve)(void *context);
    void *busy_context;
    gr_replication_t repl;    /* exec/replication.h */
    gr_repl_primary_t repl_primary;   /* exec/repl_backlog.h: goblin as a primary */
} gr_server_t;

enum { GR_BUSY_NONE = 0, GR_BUSY_SCRIPT = 1, GR_BUSY_FUNCTION = 2 };
/* The -BUSY text for the running kind (Redis's slowevalerr / slowscripterr, without the dash). */
const char *gr_db_busy_text(const gr_server_t *db);

/* cffi-cdef-begin */
typedef struct gr_server gr_server_t;
gr_server_t *gr_db_new(uint64_t seed);
void gr_db_free(gr_server_t *db);
/* Configuration, before serving: 0 or -1 for an unknown implementation name. */
int gr_db_set_list_implementation(gr_server_t *db, const char *name);
/* The engine new arrays get ("classic", "rt"; engines/array/array.h): 0, or -1 when none is so named. */
int gr_db_set_array_implementation(gr_server_t *db, const char *name);
void gr_db_set_info_text(gr_server_t *db, const char *field, const char *value);
void gr_db_set_info_number(gr_server_t *db, const char *field, int64_t value);
int64_t gr_db_key_count(gr_server_t *db);   /* keys in every database */
/* A RESP client was accepted (rejected = 0) or refused at once (maxclients, protected mode). */
void gr_db_count_connection(gr_server_t *db, int rejected);
/* A RESP connection a blocking command just answered (served or timed out): its id, each
 * reported once, or 0. The server flushes it and parses the input it held back. */
int64_t gr_db_take_woken(gr_server_t *db);
/* Answer blocked clients whose timeout has passed; returns how many. */
int64_t gr_db_expire_blocked(gr_server_t *db);
/* Milliseconds until the earliest blocked client's timeout, or -1 when none is waiting. */
int64_t gr_db_next_block_timeout_ms(gr_server_t *db);
/* The server's periodic work (call it ~10 times a second, like Redis's serverCron):
 * active expiry, a scan of each database with expiring keys for at most budget_us
 * microseconds in all, and a step of any table resize. Returns the keys expired. */
int64_t gr_db_cron(gr_server_t *db, int64_t budget_us);
/* CONFIG values the server reads or sets (cmd_config.c): "requirepass", "protected-mode",
 * "maxclients", "bind", ... Text in, as CONFIG SET takes it; 0 on success, else -1 and a
 * Redis-style message in error. */
int gr_db_config_set(gr_server_t *db, const char *name, const char *value, char *error, size_t error_size);
int64_t gr_db_config_number(gr_server_t *db, const char *name);
/* The config file the server started from (CONFIG REWRITE writes it back); call before the
 * startup settings are applied: every parameter's value now is taken as its default, which
 * CONFIG REWRITE leaves out of the file. 0, or -1 when out of memory. */
int gr_db_config_use_file(gr_server_t *db, const char *path);
/* Whether a username and password log in (AUTH's rule; an empty username is the default
 * user): 1 or 0. The ring's attach checks it before making the session's rings. */
int gr_db_credentials_valid(gr_server_t *db, const uint8_t *username, size_t username_length,
                            const uint8_t *password, size_t password_length);
/* Whether a new RESP client from this peer may be served (protected mode). */
int gr_db_accepts_peer(gr_server_t *db, int is_loopback);
/* A `user <name> <rules>` line of the config file, as ACL SETUSER applies it: 0, or -1 with
 * Redis's error text in error. */
int gr_db_acl_setuser(gr_server_t *db, const uint8_t *name, size_t name_length, size_t rule_count,
                      const uint8_t *const *rules, const size_t *rule_lengths, char *error, size_t error_size);
/* ACL LOAD from the aclfile (CONFIG's "aclfile"): the file's users replace the table's; the
 * connections of users other than default are closed, as Redis closes them. 0, or -1 with
 * Redis's error text (every error of the file) in error. */
int gr_db_acl_load(gr_server_t *db, char *error, size_t error_size);
/* cffi-cdef-end */

/* Grow the argv path's scratch items to hold count arguments; 0, or -1 when out of memory. */
int gr_db_reserve_items(gr_server_t *db, size_t count);

/* Connections: the transport zeroes the struct, sets id and kind, then registers it. */
void gr_connection_register(gr_server_t *db, gr_connection_t *conn, int64_t id, gr_connection_kind_t kind);
void gr_connection_unregister(gr_server_t *db, gr_connection_t *conn);

/* Pub/Sub delivery wrote output to conn that its transport must flush (pubsub.h): the
 * transport's deliver callback notes it; the server takes each noted connection once, after
 * the command that published, and flushes it. Unregistering forgets a pending connection. */
void gr_db_note_pending_output(gr_server_t *db, gr_connection_t *conn);
gr_connection_t *gr_db_take_pending_output(gr_server_t *db);

/* Execute one typed request (from either transport) for conn and write its reply. Both return 1
 * when CLIENT PAUSE holds the call (pause.h): nothing ran, no reply; the transport keeps the
 * request and reads nothing more from conn until the pause ends; else 0. */
int gr_db_execute(gr_server_t *db, gr_connection_t *conn, const gr_request_t *request, gr_reply_t *reply);
/* Execute one command given as argv (RESP, or the ring's CommandRequest) for conn. */
int gr_db_execute_argv(gr_server_t *db, gr_connection_t *conn, size_t argc, const uint8_t *const *argv,
                        const size_t *argv_length, gr_reply_t *reply);
/* The same, inside a command already running (MEMORY USAGE, the CommandRequest envelope):
 * the context is already set. */
void gr_db_run(gr_server_t *db, const gr_request_t *request, gr_reply_t *reply);
void gr_db_run_argv(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                    gr_reply_t *reply);
/* What admission checks a call against the connection's user with (ACL): the stat slot (the
 * subcommand's own row when it is one, else index) and its arguments, as argv (argc > 0) or as
 * a typed request. */
typedef struct gr_admit_args {
    int slot;
    size_t argc;
    const uint8_t *const *argv;
    const size_t *argv_length;
    const gr_request_t *request;
} gr_admit_args_t;
/* Admission (AUTH, ACL, maxmemory): 0 to go on, else the refusal is written and counted.
 * index is the command's table index (-1 unknown); no_auth: AUTH, HELLO, RESET. args NULL:
 * checked by index alone (keys then count as refused for a user without allkeys). */
/* Replication state (exec/replication.h): defaults (replica-read-only yes, serve-stale yes), and
 * a new random replication id (REPLICAOF NO ONE starts a history of its own). */
void gr_repl_init(gr_server_t *db);
void gr_repl_new_replid(gr_server_t *db);
/* A full resync's start: every database emptied (WATCHers touched, parked stream readers told). */
void gr_repl_empty_data(gr_server_t *db);
/* A replica's full sync loaded aside (server/replica.c): GR_DB_COUNT empty keyspaces for it,
 * without observers (a thread of its own fills them; 0 or -1 out of memory), and the swap on
 * the serving thread, O(databases): fresh become the databases (WATCHed keys of either side
 * touched, client-side caches invalidated, observers moved, waiters signalled) and fresh[]
 * holds the old keyspaces, without observers, for the caller to free (on a thread if large). */
int gr_repl_new_keyspaces(gr_server_t *db, gr_keyspace_t **out);
void gr_repl_swap_data(gr_server_t *db, gr_keyspace_t **fresh);
/* Keys in a set of GR_DB_COUNT keyspaces; and freeing them (any thread, for keyspaces that are
 * no database: what it allocated is counted as core/alloc.h says for the calling thread). */
size_t gr_repl_keyspaces_size(gr_keyspace_t *const *keyspaces);
void gr_repl_free_keyspaces(gr_keyspace_t **keyspaces);
int gr_db_admit(gr_server_t *db, int index, const gr_admit_args_t *args, int no_auth, gr_reply_t *reply);
/* ACL: whether a user may run a command with these arguments: GR_ACL_ALLOWED, or denied for
 * the command itself, for a key or for a channel (its argv position in *refused_key; 0 for a
 * typed request's key). The root permissions or one selector must allow command, keys and
 * channels together, as Redis 7.0.
 * Admission's check, and ACL DRYRUN's. */
enum { GR_ACL_ALLOWED = 0, GR_ACL_DENIED_COMMAND = 1, GR_ACL_DENIED_KEY = 2, GR_ACL_DENIED_CHANNEL = 3 };
int gr_db_acl_check(const gr_acl_user_t *user, int index, const gr_admit_args_t *args, size_t *refused_key);
/* The user the running command acts as: its connection's, or the default user when that is
 * on and nopass; NULL when the connection must AUTH first. */
gr_acl_user_t *gr_db_current_user(const gr_server_t *db);
/* SLOWLOG for a call timed elsewhere (a blocked command when it is served): logged when elapsed
 * (accounting clock) reaches slowlog-log-slower-than; argv, or (argc 0) the typed request. */
void gr_db_log_slow(gr_server_t *db, int index, uint64_t elapsed, size_t argc, const uint8_t *const *argv,
                    const size_t *argv_length, const gr_request_t *request);
/* ACL LOG: record a refusal of the running command (reason GR_ACL_LOG_*; object: the command's
 * full name, the key, the channel, or AUTH's argv[0]) by username (NULL: the current user's),
 * with the context (toplevel, multi, lua) and the connection's CLIENT LIST line. */
void gr_db_acl_log(gr_server_t *db, int reason, const uint8_t *object, size_t object_length,
                   const uint8_t *username, size_t username_length);
/* One connection as CLIENT LIST prints it (with its newline), appended to text. */
struct gr_text;
void gr_connection_describe(const gr_server_t *db, const gr_connection_t *conn, struct gr_text *text);
/* The user a username and password log in as (empty username: default), or NULL. */
gr_acl_user_t *gr_db_credentials_user(gr_server_t *db, const uint8_t *username, size_t username_length,
                                      const uint8_t *password, size_t password_length);
/* While a script is busy (db->busy): -BUSY for a command without allow_busy (its subcommand's
 * row when argv names one; argc 0: the row's own flags), written and counted; 0 to go on. */
int gr_db_refuse_busy(gr_server_t *db, int index, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                      gr_reply_t *reply);
/* The -MISCONF text writes get while the data cannot be kept (a failed BGSAVE, the log's
 * write or fsync error), in text or static; NULL when writes are accepted. */
const char *gr_db_disk_error_refusal(const gr_server_t *db, char *text, size_t size);
/* Count a refused command (unknown, wrong arity) whose error is already written. */
void gr_db_reject(gr_server_t *db, int index, gr_reply_t *reply);
/* A transport about to run a batch of commands (a RESP read, a ring poll pass) reads the
 * clock once for all of them; nested calls are counted. */
void gr_db_begin_batch(gr_server_t *db);
void gr_db_end_batch(gr_server_t *db);
/* Microseconds a command's counters add up to. */
int64_t gr_db_command_usec(const gr_server_t *db, const gr_command_stat_t *stat);
/* Count an executed command: calls, time since start (from gr_db_account_start, in its
 * clock), failed if it replied an error. Returns the time it took, in that clock (what the
 * slow log compares with its threshold). */
int64_t gr_db_account_start(void);
uint64_t gr_db_account(gr_server_t *db, int index, gr_reply_t *reply, uint32_t errors_before, int64_t start);
/* slowlog-log-slower-than changed (cmd_config.c): the threshold in the accounting clock. */
void gr_db_set_slowlog_threshold(gr_server_t *db, int64_t log_slower_than_us);

/* The entry for key in the current database, or NULL. An entry whose expiry has passed is
 * deleted first (lazy expiry) and counts as absent. gr_db_lookup (a read, Redis's
 * lookupKeyRead) also counts a keyspace hit or miss, publishes "keymiss" (class m) for a miss
 * and records the access (LRU clock, LFU counter: exec/evict.h); gr_db_find_live (Redis's
 * lookupKeyWrite) records the access only. gr_db_lookup_with chooses: GR_LOOKUP_WRITE records
 * the access only, GR_LOOKUP_NOTOUCH leaves it (TTL, TYPE, EXISTS, OBJECT: Redis's NOTOUCH
 * reads), GR_LOOKUP_NONOTIFY publishes no "keymiss" (OBJECT). No access is recorded while a
 * background child runs or for a CLIENT NO-TOUCH client (but by TOUCH), as Redis. */
enum { GR_LOOKUP_WRITE = 1, GR_LOOKUP_NOTOUCH = 2, GR_LOOKUP_NONOTIFY = 4 };
gr_ks_entry_t *gr_db_lookup_with(gr_server_t *db, gr_bytes_t key, int flags);
static inline gr_ks_entry_t *gr_db_lookup(gr_server_t *db, gr_bytes_t key) { return gr_db_lookup_with(db, key, 0); }
gr_ks_entry_t *gr_db_find_live(gr_server_t *db, gr_bytes_t key);
/* gr_db_find_live without the access: expires the key if due, counts nothing, leaves its LRU
 * clock and LFU counter (MEMORY USAGE, DEBUG OBJECT: Redis's LOOKUP_NOTOUCH lookups). */
gr_ks_entry_t *gr_db_peek_live(gr_server_t *db, gr_bytes_t key);
/* 1 if the entry's expiry has passed (KEYS and SCAN skip such entries). */
int gr_db_is_expired(const gr_server_t *db, const gr_ks_entry_t *entry);
/* Current time in unix ms, as read at the start of the running command. */
static inline int64_t gr_db_now_ms(const gr_server_t *db) { return db->now_ms; }

/* The dirty counter, Redis's server.dirty (INFO persistence: rdb_changes_since_last_save).
 * Every handler that changes data calls this once it has made its changes, with how many it
 * made, counted as Redis counts them: one per key written, expired by EXPIRE, renamed, copied
 * or moved; one per element pushed, popped, inserted, removed, trimmed or set; one per
 * member or field added, removed or overwritten (SADD of 3 new members: 3); the keys a flush
 * removed; 0 (or no call) for a write that changed nothing (SET NX on an existing key, LREM
 * with no match, an error). Keys removed by expiry, lazy or active, do not count. */
static inline void gr_db_count_changes(gr_server_t *db, int64_t changes) { db->dirty += changes; }

/* notify-keyspace-events as flags (CONFIG SET): also watches key creation while "n" is on. */
void gr_db_set_notify_flags(gr_server_t *db, int flags);

/* Keyspace notifications (exec/notify.h): called where Redis calls notifyKeyspaceEvent, in the
 * current connection's database; one branch while notify-keyspace-events is off. */
static inline void gr_notify(gr_server_t *db, int type, const char *event, gr_bytes_t key) {
    if (db->notify_flags & type) gr_notify_publish(db, type, event, key, db->current ? db->current->db_index : 0);
}

/* A handler's keyspace event (exec/call.h): recorded in order, published when the call ends;
 * stating one means the row's default event does not apply. One branch while off. */
static inline void gr_call_notify(gr_server_t *db, int type, const char *event, gr_bytes_t key) {
    if (db->notify_flags) gr_call_notify_db_slow(db, -1, type, event, key);
}
/* The same in another database (MOVE's move_to, COPY DB's copy_to). */
static inline void gr_call_notify_db(gr_server_t *db, int32_t dbid, int type, const char *event, gr_bytes_t key) {
    if (db->notify_flags) gr_call_notify_db_slow(db, dbid, type, event, key);
}

/* Reset the counters CONFIG RESETSTAT clears */
void gr_db_reset_stats(gr_server_t *db);

#endif
