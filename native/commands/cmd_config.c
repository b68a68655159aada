/* cmd_config.c — CONFIG GET / SET / RESETSTAT / REWRITE / HELP over the parameters the
 * server really has.
 *
 * Each parameter is read from, and written to, the live setting that enforces it
 * (db->config, db->requirepass, db->info), so CONFIG SET takes effect at once:
 * requirepass gates new connections' commands, protected-mode and maxclients are read by
 * the server at accept, timeout by the cron, proto-max-bulk-len by the RESP parser,
 * maxmemory and maxmemory-policy by command admission (which evicts: exec/evict.h), the encoding thresholds (list-max-listpack-size, the
 * set/hash/zset *-max-* ones) by the types when they convert, dir/dbfilename/save by the
 * snapshots (persist/). Parameters fixed at startup are immutable, with Redis's error;
 * appendonly accepts only "no". CONFIG SET of several
 * pairs validates all of them before changing any, as Redis 7 does.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core/alloc.h"
#include "commands/commands.h"
#include "engines/list/list.h"
#include "exec/db.h"
#include "core/glob.h"
#include "exec/server_text.h"
#include "persist/aof.h"
#include "persist/persistence.h"
#include <sys/stat.h>

typedef enum { KIND_TEXT, KIND_INT, KIND_MEMORY, KIND_BOOL, KIND_OUTPUT_LIMITS, KIND_MEMORY_OR_PERCENT } param_kind_t;

typedef enum {
    P_PORT, P_BIND, P_UNIXSOCKET, P_DIR, P_DATABASES, P_REQUIREPASS, P_PROTECTED_MODE, P_MAXMEMORY,
    P_MAXMEMORY_POLICY, P_MAXCLIENTS, P_TIMEOUT, P_PROTO_MAX_BULK_LEN, P_SAVE, P_APPENDONLY, P_HZ,
    P_LIST_IMPLEMENTATION, P_RING_SIZE, P_POLL, P_CLIENT_OUTPUT_BUFFER_LIMIT, P_MAXMEMORY_CLIENTS,
    P_CLIENT_QUERY_BUFFER_LIMIT, P_LIST_MAX_LISTPACK_SIZE, P_LIST_COMPRESS_DEPTH, P_SET_MAX_INTSET_ENTRIES,
    P_SET_MAX_LISTPACK_ENTRIES, P_SET_MAX_LISTPACK_VALUE, P_HASH_MAX_LISTPACK_ENTRIES, P_HASH_MAX_LISTPACK_VALUE, P_HLL_SPARSE_MAX_BYTES,
    P_ZSET_MAX_LISTPACK_ENTRIES, P_ZSET_MAX_LISTPACK_VALUE, P_ZSET_IMPLEMENTATION,
    P_STREAM_NODE_MAX_BYTES, P_STREAM_NODE_MAX_ENTRIES,
    P_NOTIFY_KEYSPACE_EVENTS,
    P_APPENDFSYNC, P_APPENDFILENAME, P_AOF_LOAD_TRUNCATED, P_AUTO_AOF_REWRITE_PERCENTAGE, P_AUTO_AOF_REWRITE_MIN_SIZE,
    P_DBFILENAME, P_RDB_KEY_SAVE_DELAY, P_STOP_WRITES_ON_BGSAVE_ERROR,   /* persistence (persist/) */
    P_SHUTDOWN_ON_SIGTERM, P_SHUTDOWN_ON_SIGINT,
    P_SLOWLOG_LOG_SLOWER_THAN, P_SLOWLOG_MAX_LEN,   /* the slow log (exec/slowlog.h) */
    P_LATENCY_MONITOR_THRESHOLD, P_LATENCY_TRACKING, P_LATENCY_TRACKING_INFO_PERCENTILES,   /* exec/latency.h */
    P_BUSY_REPLY_THRESHOLD,   /* script/script_busy.c */
    P_MAXMEMORY_SAMPLES, P_MAXMEMORY_EVICTION_TENACITY, P_LFU_LOG_FACTOR, P_LFU_DECAY_TIME,   /* exec/evict.h */
    P_TRACKING_TABLE_MAX_KEYS,   /* exec/tracking.h */
    P_REPLICAOF, P_MASTERAUTH, P_MASTERUSER, P_REPLICA_READ_ONLY, P_REPLICA_SERVE_STALE_DATA,   /* exec/replication.h */
    P_REPLICA_PRIORITY, P_REPLICA_ANNOUNCE_IP, P_REPLICA_ANNOUNCE_PORT, P_REPLICA_ANNOUNCED,   /* ... what Sentinel reads */
    P_REPL_BACKLOG_SIZE, P_MIN_REPLICAS_TO_WRITE, P_MIN_REPLICAS_MAX_LAG, P_REPL_PING_REPLICA_PERIOD,
    P_REPL_TIMEOUT, P_REPL_DISKLESS_SYNC, P_REPL_DISKLESS_SYNC_DELAY, P_REPL_DISKLESS_SYNC_MAX_REPLICAS,
    P_REPL_BACKLOG_TTL,   /* exec/repl_backlog.h: goblin as a primary */
    P_ACLFILE, P_ACLLOG_MAX_LEN,   /* exec/acl.h: the ACL file, ACL LOG's length */
    P_COUNT
} param_id_t;

typedef struct param {
    const char *name;
    param_kind_t kind;
    int mutable_;
    int64_t min, max;      /* KIND_INT / KIND_MEMORY bounds */
    const char *alias;     /* Redis's old name (list-max-ziplist-size, ...), or NULL */
} param_t;

static const param_t params[P_COUNT] = {
    [P_PORT] = {"port", KIND_INT, 0, 0, 65535},
    [P_BIND] = {"bind", KIND_TEXT, 0, 0, 0},
    [P_UNIXSOCKET] = {"unixsocket", KIND_TEXT, 0, 0, 0},
    [P_DIR] = {"dir", KIND_TEXT, 1, 0, 0},
    [P_DATABASES] = {"databases", KIND_INT, 0, 1, GR_DB_COUNT},
    [P_REQUIREPASS] = {"requirepass", KIND_TEXT, 1, 0, 0},
    [P_PROTECTED_MODE] = {"protected-mode", KIND_BOOL, 1, 0, 1},
    [P_MAXMEMORY] = {"maxmemory", KIND_MEMORY, 1, 0, INT64_MAX},
    [P_MAXMEMORY_POLICY] = {"maxmemory-policy", KIND_TEXT, 1, 0, 0},
    [P_MAXCLIENTS] = {"maxclients", KIND_INT, 1, 1, 1000000},
    [P_TIMEOUT] = {"timeout", KIND_INT, 1, 0, 2147483647},
    [P_PROTO_MAX_BULK_LEN] = {"proto-max-bulk-len", KIND_MEMORY, 1, 1024 * 1024, 512LL * 1024 * 1024},
    [P_SAVE] = {"save", KIND_TEXT, 1, 0, 0},
    [P_APPENDONLY] = {"appendonly", KIND_BOOL, 1, 0, 1},
    [P_HZ] = {"hz", KIND_INT, 0, 1, 500},
    [P_LIST_IMPLEMENTATION] = {"list-implementation", KIND_TEXT, 0, 0, 0},
    [P_RING_SIZE] = {"ring-size", KIND_MEMORY, 0, 0, INT64_MAX},
    [P_POLL] = {"poll", KIND_TEXT, 0, 0, 0},
    [P_CLIENT_OUTPUT_BUFFER_LIMIT] = {"client-output-buffer-limit", KIND_OUTPUT_LIMITS, 1, 0, 0},
    [P_MAXMEMORY_CLIENTS] = {"maxmemory-clients", KIND_MEMORY_OR_PERCENT, 1, 0, INT64_MAX},
    [P_CLIENT_QUERY_BUFFER_LIMIT] = {"client-query-buffer-limit", KIND_MEMORY, 1, 1024 * 1024, INT64_MAX},
    /* Redis's encoding-tuning parameters, with its kinds, bounds and old names. The list size
     * is honoured for lists created after it is set (list_config); the compress depth is only
     * kept (goblin does not compress leaves); the set/hash/zset thresholds are db->config's,
     * which those types read when they convert. */
    [P_LIST_MAX_LISTPACK_SIZE] = {"list-max-listpack-size", KIND_INT, 1, INT32_MIN, INT32_MAX, "list-max-ziplist-size"},
    [P_LIST_COMPRESS_DEPTH] = {"list-compress-depth", KIND_INT, 1, 0, INT32_MAX},
    [P_SET_MAX_INTSET_ENTRIES] = {"set-max-intset-entries", KIND_INT, 1, 0, INT64_MAX},
    [P_SET_MAX_LISTPACK_ENTRIES] = {"set-max-listpack-entries", KIND_INT, 1, 0, INT64_MAX},
    [P_SET_MAX_LISTPACK_VALUE] = {"set-max-listpack-value", KIND_INT, 1, 0, INT64_MAX},
    [P_HASH_MAX_LISTPACK_ENTRIES] = {"hash-max-listpack-entries", KIND_INT, 1, 0, INT64_MAX, "hash-max-ziplist-entries"},
    [P_HASH_MAX_LISTPACK_VALUE] = {"hash-max-listpack-value", KIND_MEMORY, 1, 0, INT64_MAX, "hash-max-ziplist-value"},
    [P_HLL_SPARSE_MAX_BYTES] = {"hll-sparse-max-bytes", KIND_MEMORY, 1, 0, INT64_MAX},
    [P_ZSET_MAX_LISTPACK_ENTRIES] = {"zset-max-listpack-entries", KIND_INT, 1, 0, INT64_MAX, "zset-max-ziplist-entries"},
    [P_ZSET_MAX_LISTPACK_VALUE] = {"zset-max-listpack-value", KIND_MEMORY, 1, 0, INT64_MAX, "zset-max-ziplist-value"},
    /* goblin's: the encoding of sorted sets past the compact size (--zset-implementation) */
    [P_ZSET_IMPLEMENTATION] = {"zset-implementation", KIND_TEXT, 1, 0, 0},
    [P_STREAM_NODE_MAX_BYTES] = {"stream-node-max-bytes", KIND_MEMORY, 1, 0, UINT32_MAX / 4},
    [P_STREAM_NODE_MAX_ENTRIES] = {"stream-node-max-entries", KIND_INT, 1, 0, UINT32_MAX / 4},
    [P_NOTIFY_KEYSPACE_EVENTS] = {"notify-keyspace-events", KIND_TEXT, 1, 0, 0},
    /* the append-only log (persist/aof.h): appendonly above starts and stops it */
    [P_APPENDFSYNC] = {"appendfsync", KIND_TEXT, 1, 0, 0},
    [P_APPENDFILENAME] = {"appendfilename", KIND_TEXT, 0, 0, 0},
    [P_AOF_LOAD_TRUNCATED] = {"aof-load-truncated", KIND_BOOL, 1, 0, 1},
    [P_AUTO_AOF_REWRITE_PERCENTAGE] = {"auto-aof-rewrite-percentage", KIND_INT, 1, 0, INT32_MAX},
    [P_AUTO_AOF_REWRITE_MIN_SIZE] = {"auto-aof-rewrite-min-size", KIND_MEMORY, 1, 0, INT64_MAX},
    /* Snapshots (persist/persistence.c): where, when (save, above), and Redis's test knob that
     * slows a save down by this many microseconds per key. */
    [P_DBFILENAME] = {"dbfilename", KIND_TEXT, 1, 0, 0},
    [P_RDB_KEY_SAVE_DELAY] = {"rdb-key-save-delay", KIND_INT, 1, INT32_MIN, INT32_MAX},
    /* writes answer -MISCONF while the last background save failed and save rules are set */
    [P_STOP_WRITES_ON_BGSAVE_ERROR] = {"stop-writes-on-bgsave-error", KIND_BOOL, 1, 0, 1},
    /* what SIGTERM / SIGINT's shutdown does (persistence.h's GR_SHUTDOWN_* flags, Redis's words) */
    [P_SHUTDOWN_ON_SIGTERM] = {"shutdown-on-sigterm", KIND_TEXT, 1, 0, 0},
    [P_SHUTDOWN_ON_SIGINT] = {"shutdown-on-sigint", KIND_TEXT, 1, 0, 0},
    /* SLOWLOG (exec/slowlog.h): microseconds (0 logs every command, -1 none) and entries kept */
    [P_SLOWLOG_LOG_SLOWER_THAN] = {"slowlog-log-slower-than", KIND_INT, 1, -1, INT64_MAX},
    [P_SLOWLOG_MAX_LEN] = {"slowlog-max-len", KIND_INT, 1, 0, INT64_MAX},
    /* LATENCY (exec/latency.h): the monitor's threshold in ms (0 off), the per-command histograms,
     * and the percentiles INFO latencystats reports */
    [P_LATENCY_MONITOR_THRESHOLD] = {"latency-monitor-threshold", KIND_INT, 1, 0, INT64_MAX},
    [P_LATENCY_TRACKING] = {"latency-tracking", KIND_BOOL, 1, 0, 1},
    [P_LATENCY_TRACKING_INFO_PERCENTILES] = {"latency-tracking-info-percentiles", KIND_TEXT, 1, 0, 0},
    /* a script running longer (ms) makes the server answer others -BUSY (script/script_busy.c) */
    [P_BUSY_REPLY_THRESHOLD] = {"busy-reply-threshold", KIND_INT, 1, 0, INT64_MAX, "lua-time-limit"},
    /* eviction (exec/evict.h), with Redis 7.0's bounds: maxmemory-policy is above */
    [P_MAXMEMORY_SAMPLES] = {"maxmemory-samples", KIND_INT, 1, 1, INT32_MAX},
    [P_MAXMEMORY_EVICTION_TENACITY] = {"maxmemory-eviction-tenacity", KIND_INT, 1, 0, 100},
    [P_LFU_LOG_FACTOR] = {"lfu-log-factor", KIND_INT, 1, 0, INT32_MAX},
    [P_LFU_DECAY_TIME] = {"lfu-decay-time", KIND_INT, 1, 0, INT32_MAX},
    /* CLIENT TRACKING's table: past this many keys, entries are invalidated at random (0: no limit) */
    [P_TRACKING_TABLE_MAX_KEYS] = {"tracking-table-max-keys", KIND_INT, 1, 0, INT64_MAX},
    /* replication (exec/replication.h, server/replica.c): the primary ("host port", at start only:
     * REPLICAOF changes it while running), its credentials, and what a replica's clients may do */
    [P_REPLICAOF] = {"replicaof", KIND_TEXT, 0, 0, 0, "slaveof"},
    [P_MASTERAUTH] = {"masterauth", KIND_TEXT, 1, 0, 0},
    [P_MASTERUSER] = {"masteruser", KIND_TEXT, 1, 0, 0},
    [P_REPLICA_READ_ONLY] = {"replica-read-only", KIND_BOOL, 1, 0, 1, "slave-read-only"},
    [P_REPLICA_SERVE_STALE_DATA] = {"replica-serve-stale-data", KIND_BOOL, 1, 0, 1, "slave-serve-stale-data"},
    /* what Sentinel reads in a replica's INFO (slave_priority: 0 is never promoted; replica_announced)
     * and the address the replica gives its primary (REPLCONF ip-address / listening-port) */
    [P_REPLICA_PRIORITY] = {"replica-priority", KIND_INT, 1, 0, INT32_MAX, "slave-priority"},
    [P_REPLICA_ANNOUNCE_IP] = {"replica-announce-ip", KIND_TEXT, 1, 0, 0, "slave-announce-ip"},
    [P_REPLICA_ANNOUNCE_PORT] = {"replica-announce-port", KIND_INT, 1, 0, 65535, "slave-announce-port"},
    [P_REPLICA_ANNOUNCED] = {"replica-announced", KIND_BOOL, 1, 0, 1},
    /* goblin as a primary: the backlog's size, NOREPLICAS, the stream's PING, the replicas' timeout */
    [P_REPL_BACKLOG_SIZE] = {"repl-backlog-size", KIND_MEMORY, 1, 1, INT64_MAX},
    [P_MIN_REPLICAS_TO_WRITE] = {"min-replicas-to-write", KIND_INT, 1, 0, INT32_MAX, "min-slaves-to-write"},
    [P_MIN_REPLICAS_MAX_LAG] = {"min-replicas-max-lag", KIND_INT, 1, 0, INT32_MAX, "min-slaves-max-lag"},
    [P_REPL_PING_REPLICA_PERIOD] = {"repl-ping-replica-period", KIND_INT, 1, 1, INT32_MAX, "repl-ping-slave-period"},
    [P_REPL_TIMEOUT] = {"repl-timeout", KIND_INT, 1, 1, INT32_MAX},
    /* the full sync's form (Redis 7.0's defaults: diskless, 5 s for more replicas to join, no
     * count limit) and how long the backlog outlives the last replica (0: forever) */
    [P_REPL_DISKLESS_SYNC] = {"repl-diskless-sync", KIND_BOOL, 1, 0, 1},
    [P_REPL_DISKLESS_SYNC_DELAY] = {"repl-diskless-sync-delay", KIND_INT, 1, 0, INT32_MAX},
    [P_REPL_DISKLESS_SYNC_MAX_REPLICAS] = {"repl-diskless-sync-max-replicas", KIND_INT, 1, 0, INT32_MAX},
    [P_REPL_BACKLOG_TTL] = {"repl-backlog-ttl", KIND_INT, 1, 0, INT64_MAX},
    /* ACL (exec/acl.h): the file ACL LOAD / SAVE use, loaded at start; ACL LOG's entries kept */
    [P_ACLFILE] = {"aclfile", KIND_TEXT, 0, 0, 0},
    [P_ACLLOG_MAX_LEN] = {"acllog-max-len", KIND_INT, 1, 0, INT64_MAX},
};

/* latency-tracking-info-percentiles: doubles in [0, 100] separated by spaces (at most 8); their
 * count, or -1 with why. */
static int parse_percentiles(const char *value, double *out, char *why, size_t why_size) {
    int count = 0;
    const char *p = value;
    for (;;) {
        while (*p == ' ') p++;
        if (!*p) return count;
        char *end;
        errno = 0;
        double v = strtod(p, &end);
        if (end == p || errno || (*end && *end != ' ') || count == 8) {
            snprintf(why, why_size, "Invalid latency-tracking-info-percentiles parameters");
            return -1;
        }
        if (v < 0 || v > 100) {
            snprintf(why, why_size, "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]");
            return -1;
        }
        out[count++] = v;
        p = end;
    }
}

static const char *const appendfsync_names[] = {[GR_APPENDFSYNC_NO] = "no", [GR_APPENDFSYNC_ALWAYS] = "always",
                                                [GR_APPENDFSYNC_EVERYSEC] = "everysec"};

/* client-output-buffer-limit's classes, in CONFIG GET's order (Redis names the replica class "slave"). */
static const char *const output_classes[3] = {"normal", "slave", "pubsub"};

static int output_class(const char *name) {
    if (!strcasecmp(name, "normal")) return GR_CLIENT_CLASS_NORMAL;
    if (!strcasecmp(name, "slave") || !strcasecmp(name, "replica")) return GR_CLIENT_CLASS_REPLICA;
    if (!strcasecmp(name, "pubsub")) return GR_CLIENT_CLASS_PUBSUB;
    return -1;
}

/* A parameter by its name or its old name (case-insensitive), or -1. */
static int find_param(const char *name) {
    for (int i = 0; i < P_COUNT; i++)
        if (strcasecmp(params[i].name, name) == 0 || (params[i].alias && strcasecmp(params[i].alias, name) == 0))
            return i;
    return -1;
}

static void param_value(const gr_server_t *db, int id, char *out, size_t size) {
    switch ((param_id_t)id) {
    case P_PORT: snprintf(out, size, "%lld", (long long)db->info.tcp_port); break;
    case P_BIND: snprintf(out, size, "%s", db->config.bind); break;
    case P_UNIXSOCKET: snprintf(out, size, "%s", db->config.unixsocket); break;
    case P_DIR: snprintf(out, size, "%s", db->config.dir); break;
    case P_DATABASES: snprintf(out, size, "%d", GR_DB_COUNT); break;
    case P_REQUIREPASS: snprintf(out, size, "%s", db->requirepass); break;
    case P_REPLICAOF:
        if (db->repl.master_port) snprintf(out, size, "%s %lld", db->repl.master_host, (long long)db->repl.master_port);
        else if (size) out[0] = '\0';
        break;
    case P_MASTERAUTH: snprintf(out, size, "%s", db->repl.masterauth); break;
    case P_MASTERUSER: snprintf(out, size, "%s", db->repl.masteruser); break;
    case P_REPLICA_READ_ONLY: snprintf(out, size, "%s", db->repl.read_only ? "yes" : "no"); break;
    case P_REPLICA_SERVE_STALE_DATA: snprintf(out, size, "%s", db->repl.serve_stale_data ? "yes" : "no"); break;
    case P_REPLICA_PRIORITY: snprintf(out, size, "%lld", (long long)db->repl.priority); break;
    case P_REPLICA_ANNOUNCE_IP: snprintf(out, size, "%s", db->repl.announce_ip); break;
    case P_REPLICA_ANNOUNCE_PORT: snprintf(out, size, "%lld", (long long)db->repl.announce_port); break;
    case P_REPLICA_ANNOUNCED: snprintf(out, size, "%s", db->repl.announced ? "yes" : "no"); break;
    case P_REPL_BACKLOG_SIZE: snprintf(out, size, "%lld", (long long)db->repl_primary.backlog_config); break;
    case P_MIN_REPLICAS_TO_WRITE: snprintf(out, size, "%lld", (long long)db->repl_primary.min_replicas_to_write); break;
    case P_MIN_REPLICAS_MAX_LAG: snprintf(out, size, "%lld", (long long)db->repl_primary.min_replicas_max_lag); break;
    case P_REPL_PING_REPLICA_PERIOD: snprintf(out, size, "%lld", (long long)db->repl_primary.ping_period_s); break;
    case P_REPL_TIMEOUT: snprintf(out, size, "%lld", (long long)db->repl_primary.repl_timeout_s); break;
    case P_REPL_DISKLESS_SYNC: snprintf(out, size, "%s", db->repl_primary.diskless_sync ? "yes" : "no"); break;
    case P_REPL_DISKLESS_SYNC_DELAY: snprintf(out, size, "%lld", (long long)db->repl_primary.diskless_delay_s); break;
    case P_REPL_DISKLESS_SYNC_MAX_REPLICAS:
        snprintf(out, size, "%lld", (long long)db->repl_primary.diskless_max_replicas);
        break;
    case P_REPL_BACKLOG_TTL: snprintf(out, size, "%lld", (long long)db->repl_primary.backlog_ttl_s); break;
    case P_PROTECTED_MODE: snprintf(out, size, "%s", db->config.protected_mode ? "yes" : "no"); break;
    case P_MAXMEMORY: snprintf(out, size, "%lld", (long long)db->config.maxmemory); break;
    case P_MAXMEMORY_POLICY: snprintf(out, size, "%s", gr_evict_policy_name(db->config.maxmemory_policy)); break;
    case P_MAXMEMORY_SAMPLES: snprintf(out, size, "%lld", (long long)db->config.maxmemory_samples); break;
    case P_MAXMEMORY_EVICTION_TENACITY: snprintf(out, size, "%lld", (long long)db->config.maxmemory_eviction_tenacity); break;
    case P_LFU_LOG_FACTOR: snprintf(out, size, "%lld", (long long)db->config.lfu_log_factor); break;
    case P_LFU_DECAY_TIME: snprintf(out, size, "%lld", (long long)db->config.lfu_decay_time); break;
    case P_MAXCLIENTS: snprintf(out, size, "%lld", (long long)db->config.maxclients); break;
    case P_TIMEOUT: snprintf(out, size, "%lld", (long long)db->config.timeout_s); break;
    case P_PROTO_MAX_BULK_LEN: snprintf(out, size, "%lld", (long long)db->config.proto_max_bulk_len); break;
    case P_SAVE: gr_persist_format_save_rules(&db->persistence, out, size); break;
    case P_APPENDONLY: snprintf(out, size, "%s", db->aof ? "yes" : "no"); break;
    case P_HZ: snprintf(out, size, "10"); break;
    case P_LIST_IMPLEMENTATION: snprintf(out, size, "%s", db->info.list_implementation); break;
    case P_RING_SIZE: snprintf(out, size, "%lld", (long long)db->info.ring_capacity); break;
    case P_POLL: snprintf(out, size, "%s", db->info.mode); break;
    case P_CLIENT_OUTPUT_BUFFER_LIMIT: {
        size_t used = 0;
        out[0] = '\0';
        for (int c = 0; c < 3 && used < size; c++)
            used += (size_t)snprintf(out + used, size - used, "%s%s %lld %lld %lld", c ? " " : "", output_classes[c],
                                     (long long)db->config.output_limit[c][GR_LIMIT_HARD],
                                     (long long)db->config.output_limit[c][GR_LIMIT_SOFT],
                                     (long long)db->config.output_limit[c][GR_LIMIT_SOFT_SECONDS]);
        break;
    }
    case P_MAXMEMORY_CLIENTS:
        snprintf(out, size, "%lld%s", (long long)db->config.maxmemory_clients,
                 db->config.maxmemory_clients_percent ? "%" : "");
        break;
    case P_CLIENT_QUERY_BUFFER_LIMIT: snprintf(out, size, "%lld", (long long)db->config.client_query_buffer_limit); break;
    case P_LIST_MAX_LISTPACK_SIZE: snprintf(out, size, "%lld", (long long)db->config.list_max_listpack_size); break;
    case P_LIST_COMPRESS_DEPTH: snprintf(out, size, "%lld", (long long)db->config.list_compress_depth); break;
    case P_SET_MAX_INTSET_ENTRIES: snprintf(out, size, "%lld", (long long)db->config.set_max_intset_entries); break;
    case P_SET_MAX_LISTPACK_ENTRIES: snprintf(out, size, "%lld", (long long)db->config.set_max_listpack_entries); break;
    case P_SET_MAX_LISTPACK_VALUE: snprintf(out, size, "%lld", (long long)db->config.set_max_listpack_value); break;
    case P_HASH_MAX_LISTPACK_ENTRIES: snprintf(out, size, "%lld", (long long)db->config.hash_max_listpack_entries); break;
    case P_HASH_MAX_LISTPACK_VALUE: snprintf(out, size, "%lld", (long long)db->config.hash_max_listpack_value); break;
    case P_HLL_SPARSE_MAX_BYTES: snprintf(out, size, "%lld", (long long)db->config.hll_sparse_max_bytes); break;
    case P_TRACKING_TABLE_MAX_KEYS: snprintf(out, size, "%lld", (long long)db->config.tracking_table_max_keys); break;
    case P_ZSET_MAX_LISTPACK_ENTRIES: snprintf(out, size, "%lld", (long long)db->config.zset_max_listpack_entries); break;
    case P_ZSET_MAX_LISTPACK_VALUE: snprintf(out, size, "%lld", (long long)db->config.zset_max_listpack_value); break;
    case P_ZSET_IMPLEMENTATION: snprintf(out, size, "%s", db->config.zset_packed ? "packed" : "standard"); break;
    case P_STREAM_NODE_MAX_BYTES: snprintf(out, size, "%lld", (long long)db->config.stream_node_max_bytes); break;
    case P_STREAM_NODE_MAX_ENTRIES: snprintf(out, size, "%lld", (long long)db->config.stream_node_max_entries); break;
    case P_NOTIFY_KEYSPACE_EVENTS: gr_notify_flags_text(db->notify_flags, out, size); break;
    case P_APPENDFSYNC: snprintf(out, size, "%s", appendfsync_names[db->config.appendfsync]); break;
    case P_APPENDFILENAME: snprintf(out, size, "%s", db->config.appendfilename); break;
    case P_AOF_LOAD_TRUNCATED: snprintf(out, size, "%s", db->config.aof_load_truncated ? "yes" : "no"); break;
    case P_AUTO_AOF_REWRITE_PERCENTAGE: snprintf(out, size, "%lld", (long long)db->config.auto_aof_rewrite_percentage); break;
    case P_AUTO_AOF_REWRITE_MIN_SIZE: snprintf(out, size, "%lld", (long long)db->config.auto_aof_rewrite_min_size); break;
    case P_DBFILENAME: snprintf(out, size, "%s", db->persistence.dbfilename); break;
    case P_RDB_KEY_SAVE_DELAY: snprintf(out, size, "%lld", (long long)db->persistence.key_save_delay_us); break;
    case P_STOP_WRITES_ON_BGSAVE_ERROR:
        snprintf(out, size, "%s", db->persistence.stop_writes_on_bgsave_error ? "yes" : "no");
        break;
    case P_SHUTDOWN_ON_SIGTERM: gr_persist_shutdown_flags_text(db->persistence.shutdown_on_sigterm, out, size); break;
    case P_SHUTDOWN_ON_SIGINT: gr_persist_shutdown_flags_text(db->persistence.shutdown_on_sigint, out, size); break;
    case P_SLOWLOG_LOG_SLOWER_THAN: snprintf(out, size, "%lld", (long long)db->slowlog.log_slower_than_us); break;
    case P_SLOWLOG_MAX_LEN: snprintf(out, size, "%lld", (long long)db->slowlog.max_len); break;
    case P_ACLFILE: snprintf(out, size, "%s", db->acl->file ? db->acl->file : ""); break;
    case P_ACLLOG_MAX_LEN: snprintf(out, size, "%lld", (long long)db->acl->log_max_len); break;
    case P_LATENCY_MONITOR_THRESHOLD: snprintf(out, size, "%lld", (long long)db->config.latency_monitor_threshold_ms); break;
    case P_BUSY_REPLY_THRESHOLD: snprintf(out, size, "%lld", (long long)db->config.busy_reply_threshold_ms); break;
    case P_LATENCY_TRACKING: snprintf(out, size, "%s", db->config.latency_tracking ? "yes" : "no"); break;
    case P_LATENCY_TRACKING_INFO_PERCENTILES: {
        size_t used = 0;
        out[0] = '\0';
        for (int i = 0; i < db->config.latency_percentile_count && used < size; i++)
            used += (size_t)snprintf(out + used, size - used, "%s%g", i ? " " : "", db->config.latency_percentiles[i]);
        break;
    }
    case P_COUNT: out[0] = '\0'; break;
    }
}

/* Redis's memtoull: digits with an optional k/kb/m/mb/g/gb unit (case-insensitive). */
int gr_config_parse_memory(const char *text, int64_t *out) {
    if (!*text) return -1;
    char *end;
    errno = 0;
    long long value = strtoll(text, &end, 10);
    if (errno || end == text || value < 0) return -1;
    int64_t unit = 1;
    if (*end) {
        if (!strcasecmp(end, "b")) unit = 1;
        else if (!strcasecmp(end, "k")) unit = 1000;
        else if (!strcasecmp(end, "kb")) unit = 1024;
        else if (!strcasecmp(end, "m")) unit = 1000 * 1000;
        else if (!strcasecmp(end, "mb")) unit = 1024 * 1024;
        else if (!strcasecmp(end, "g")) unit = 1000LL * 1000 * 1000;
        else if (!strcasecmp(end, "gb")) unit = 1024LL * 1024 * 1024;
        else return -1;
    }
    if (value > INT64_MAX / unit) return -1;
    *out = (int64_t)value * unit;
    return 0;
}

typedef struct parsed_value {
    int64_t number;
    int percent;                      /* KIND_MEMORY_OR_PERCENT: number is a percentage */
    int64_t limits[3][3];             /* KIND_OUTPUT_LIMITS: the classes named are set ... */
    int classes_given[3];             /* ... and only those */
    char text[256];
} parsed_value_t;

/* "class hard soft seconds" quadruples, as Redis's client-output-buffer-limit. */
static int parse_output_limits(const char *value, parsed_value_t *parsed, char *why, size_t why_size) {
    char copy[256], *words[64];
    size_t count = 0;
    if (strlen(value) >= sizeof copy) { snprintf(why, why_size, "argument is too long"); return -1; }
    snprintf(copy, sizeof copy, "%s", value);
    for (char *save = NULL, *word = strtok_r(copy, " \t", &save); word; word = strtok_r(NULL, " \t", &save)) {
        if (count == 64) break;
        words[count++] = word;
    }
    if (count % 4 != 0) { snprintf(why, why_size, "Wrong number of arguments in buffer limit configuration."); return -1; }
    for (size_t i = 0; i < count; i += 4) {
        int c = output_class(words[i]);
        if (c < 0) { snprintf(why, why_size, "Invalid client class specified in buffer limit configuration."); return -1; }
        int64_t hard, soft;
        char *end;
        errno = 0;
        long long seconds = strtoll(words[i + 3], &end, 10);
        if (gr_config_parse_memory(words[i + 1], &hard) != 0 || gr_config_parse_memory(words[i + 2], &soft) != 0 || errno || *end ||
            seconds < 0) {
            snprintf(why, why_size, "Error in hard, soft or soft_seconds setting in buffer limit configuration.");
            return -1;
        }
        parsed->limits[c][GR_LIMIT_HARD] = hard;
        parsed->limits[c][GR_LIMIT_SOFT] = soft;
        parsed->limits[c][GR_LIMIT_SOFT_SECONDS] = seconds;
        parsed->classes_given[c] = 1;
    }
    return 0;
}

/* maxclients needs that many descriptors plus Redis's 32 in reserve: raise the soft limit
 * if the hard one allows, else refuse with Redis's text (adjustOpenFilesLimit). */
static int fit_descriptor_limit(int64_t maxclients, char *why, size_t why_size) {
    struct rlimit limit;
    rlim_t wanted = (rlim_t)maxclients + 32;
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur >= wanted) return 0;
    struct rlimit raised = {limit.rlim_max == RLIM_INFINITY || limit.rlim_max >= wanted ? wanted : limit.rlim_max,
                            limit.rlim_max};
    if (raised.rlim_cur > limit.rlim_cur && setrlimit(RLIMIT_NOFILE, &raised) == 0) limit.rlim_cur = raised.rlim_cur;
    if (limit.rlim_cur >= wanted) return 0;
    snprintf(why, why_size, "The operating system is not able to handle the specified number of clients, try with %lld",
             (long long)limit.rlim_cur - 32);
    return -1;
}

/* Check one value; on failure write the reason (without the "CONFIG SET failed" prefix). */
static int validate(int id, const char *value, parsed_value_t *parsed, char *why, size_t why_size) {
    const param_t *param = &params[id];
    memset(parsed, 0, sizeof *parsed);
    snprintf(parsed->text, sizeof parsed->text, "%s", value);
    switch (param->kind) {
    case KIND_OUTPUT_LIMITS:
        if (parse_output_limits(value, parsed, why, why_size) != 0) return -1;
        break;
    case KIND_MEMORY_OR_PERCENT: {
        size_t length = strlen(value);
        if (length > 1 && value[length - 1] == '%') {
            char *end;
            errno = 0;
            long long percent = strtoll(value, &end, 10);
            if (errno || end != value + length - 1 || percent < 0 || percent > 100) {
                snprintf(why, why_size, "argument must be a memory or percent value");
                return -1;
            }
            parsed->number = percent;
            parsed->percent = 1;
        } else if (gr_config_parse_memory(value, &parsed->number) != 0) {
            snprintf(why, why_size, "argument must be a memory or percent value");
            return -1;
        }
        break;
    }
    case KIND_BOOL:
        if (!strcasecmp(value, "yes")) parsed->number = 1;
        else if (!strcasecmp(value, "no")) parsed->number = 0;
        else { snprintf(why, why_size, "argument must be 'yes' or 'no'"); return -1; }
        break;
    case KIND_INT: {
        char *end;
        errno = 0;
        long long number = strtoll(value, &end, 10);
        if (errno || !*value || *end) { snprintf(why, why_size, "argument couldn't be parsed into an integer"); return -1; }
        parsed->number = number;
        break;
    }
    case KIND_MEMORY:
        if (gr_config_parse_memory(value, &parsed->number) != 0) { snprintf(why, why_size, "argument must be a memory value"); return -1; }
        break;
    case KIND_TEXT:
        if (strlen(value) >= sizeof parsed->text) { snprintf(why, why_size, "argument is too long"); return -1; }
        break;
    }
    if ((param->kind == KIND_INT || param->kind == KIND_MEMORY) &&
        (parsed->number < param->min || parsed->number > param->max)) {
        snprintf(why, why_size, "argument must be between %lld and %lld inclusive", (long long)param->min,
                 (long long)param->max);
        return -1;
    }
    if (id == P_MAXCLIENTS && fit_descriptor_limit(parsed->number, why, why_size) != 0) return -1;
    if (id == P_LATENCY_TRACKING_INFO_PERCENTILES) {
        double ignored[8];
        if (parse_percentiles(value, ignored, why, why_size) < 0) return -1;
    }
    if (id == P_NOTIFY_KEYSPACE_EVENTS && gr_notify_parse_flags(value) < 0) {
        snprintf(why, why_size, "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.");
        return -1;
    }
    if (id == P_MAXMEMORY_POLICY) {
        int policy = gr_evict_policy_parse(value);
        if (policy < 0) {
            snprintf(why, why_size, "argument(s) must be one of the following: %s", GR_EVICT_POLICY_NAMES);
            return -1;
        }
        parsed->number = policy;
    }
    if (id == P_SAVE) {
        gr_save_rule_t rules[GR_SAVE_RULES_MAX];
        int32_t count;
        if (gr_persist_parse_save_rules(value, rules, &count, why, why_size) != 0) return -1;
    }
    if (id == P_DBFILENAME && (strchr(value, '/') || !value[0] || strlen(value) >= sizeof ((gr_server_t *)0)->persistence.dbfilename)) {
        snprintf(why, why_size, value[0] ? "dbfilename can't be a path, just a filename" : "dbfilename can't be empty");
        return -1;
    }
    if (id == P_ZSET_IMPLEMENTATION) {
        if (strcasecmp(value, "standard") != 0 && strcasecmp(value, "packed") != 0) {
            snprintf(why, why_size, "argument(s) must be one of the following: standard, packed");
            return -1;
        }
        parsed->number = strcasecmp(value, "packed") == 0;
    }
    if (id == P_SHUTDOWN_ON_SIGTERM || id == P_SHUTDOWN_ON_SIGINT) {
        uint8_t flags;
        if (gr_persist_parse_shutdown_flags(value, &flags, why, why_size) != 0) return -1;
        parsed->number = flags;
    }
    if (id == P_APPENDFSYNC) {
        int found = -1;
        for (int i = 0; i < 3; i++)
            if (!strcasecmp(value, appendfsync_names[i])) found = i;
        if (found < 0) { snprintf(why, why_size, "argument(s) must be one of the following: always, everysec, no"); return -1; }
        parsed->number = found;
    }
    if (id == P_APPENDFILENAME && (!value[0] || strchr(value, '/') || strlen(value) >= sizeof parsed->text)) {
        snprintf(why, why_size, "appendfilename can't be a path, just a filename");
        return -1;
    }
    if (id == P_DIR) {
        struct stat info;
        if (strlen(value) >= sizeof ((gr_server_t *)0)->config.dir) { snprintf(why, why_size, "argument is too long"); return -1; }
        if (stat(value, &info) != 0 || !S_ISDIR(info.st_mode)) {
            snprintf(why, why_size, "No such file or directory");
            return -1;
        }
    }
    if (id == P_REPLICAOF && value[0]) {   /* "host port" */
        char host[256];
        long long port;
        char rest;
        if (strlen(value) >= sizeof host || sscanf(value, "%255s %lld %c", host, &port, &rest) != 2 || port < 0 ||
            port > 65535) {
            snprintf(why, why_size, "replicaof takes a host and a port");
            return -1;
        }
    }
    if ((id == P_MASTERAUTH && strlen(value) >= sizeof ((gr_server_t *)0)->repl.masterauth) ||
        (id == P_REPLICA_ANNOUNCE_IP && strlen(value) >= sizeof ((gr_server_t *)0)->repl.announce_ip) ||
        (id == P_MASTERUSER && strlen(value) >= sizeof ((gr_server_t *)0)->repl.masteruser)) {
        snprintf(why, why_size, "argument is too long");
        return -1;
    }
    if (id == P_REQUIREPASS && strlen(value) >= sizeof ((gr_server_t *)0)->requirepass) {
        snprintf(why, why_size, "argument is too long");
        return -1;
    }
    return 0;
}

static void apply(gr_server_t *db, int id, const parsed_value_t *parsed) {
    switch ((param_id_t)id) {
    case P_BIND: snprintf(db->config.bind, sizeof db->config.bind, "%s", parsed->text); break;
    case P_UNIXSOCKET: snprintf(db->config.unixsocket, sizeof db->config.unixsocket, "%s", parsed->text); break;
    case P_DIR: snprintf(db->config.dir, sizeof db->config.dir, "%s", parsed->text); break;
    case P_SAVE:
        gr_persist_parse_save_rules(parsed->text, db->persistence.save_rules, &db->persistence.save_rule_count, NULL, 0);
        break;
    case P_DBFILENAME: snprintf(db->persistence.dbfilename, sizeof db->persistence.dbfilename, "%s", parsed->text); break;
    case P_RDB_KEY_SAVE_DELAY: db->persistence.key_save_delay_us = parsed->number; break;
    case P_STOP_WRITES_ON_BGSAVE_ERROR: db->persistence.stop_writes_on_bgsave_error = (uint8_t)parsed->number; break;
    case P_SHUTDOWN_ON_SIGTERM: db->persistence.shutdown_on_sigterm = (uint8_t)parsed->number; break;
    case P_SHUTDOWN_ON_SIGINT: db->persistence.shutdown_on_sigint = (uint8_t)parsed->number; break;
    case P_SLOWLOG_LOG_SLOWER_THAN: gr_db_set_slowlog_threshold(db, parsed->number); break;
    case P_SLOWLOG_MAX_LEN: db->slowlog.max_len = parsed->number; break;
    case P_ACLLOG_MAX_LEN: db->acl->log_max_len = parsed->number; break;
    case P_ACLFILE:
        free(db->acl->file);
        db->acl->file = parsed->text[0] ? strdup(parsed->text) : NULL;
        break;
    case P_REQUIREPASS:   /* the default user's password, as Redis's updateRequirePass */
        snprintf(db->requirepass, sizeof db->requirepass, "%s", parsed->text);
        gr_acl_set_requirepass(db->acl, db->requirepass);
        break;
    case P_PROTECTED_MODE: db->config.protected_mode = (uint8_t)parsed->number; break;
    case P_MAXMEMORY:   /* over the new limit: the cron starts evicting, as Redis's updateMaxmemory */
        db->config.maxmemory = parsed->number;
        if (parsed->number > 0 && gr_mem_used_total() > parsed->number) db->evict_running = 1;
        break;
    case P_MAXMEMORY_POLICY:   /* the pool's scores are the old policy's: start it afresh */
        if (db->config.maxmemory_policy != (int32_t)parsed->number) gr_evict_release(db);
        db->config.maxmemory_policy = (int32_t)parsed->number;
        break;
    case P_MAXMEMORY_SAMPLES: db->config.maxmemory_samples = parsed->number; break;
    case P_MAXMEMORY_EVICTION_TENACITY: db->config.maxmemory_eviction_tenacity = parsed->number; break;
    case P_LFU_LOG_FACTOR: db->config.lfu_log_factor = parsed->number; break;
    case P_LFU_DECAY_TIME: db->config.lfu_decay_time = parsed->number; break;
    case P_REPLICAOF: {
        char host[256] = "";
        long long port = 0;
        if (parsed->text[0] && sscanf(parsed->text, "%255s %lld", host, &port) == 2 && port > 0) {
            if (!db->repl.master_port) db->repl.have_cached = 1;
            snprintf(db->repl.master_host, sizeof db->repl.master_host, "%s", host);
            db->repl.master_port = port;
            db->repl.state = GR_REPL_CONNECT;
            db->repl.restart = 1;
        }
        break;
    }
    case P_MASTERAUTH: snprintf(db->repl.masterauth, sizeof db->repl.masterauth, "%s", parsed->text); break;
    case P_MASTERUSER: snprintf(db->repl.masteruser, sizeof db->repl.masteruser, "%.127s", parsed->text); break;
    case P_REPLICA_READ_ONLY: db->repl.read_only = (uint8_t)parsed->number; break;
    case P_REPLICA_SERVE_STALE_DATA: db->repl.serve_stale_data = (uint8_t)parsed->number; break;
    case P_REPLICA_PRIORITY: db->repl.priority = parsed->number; break;
    case P_REPLICA_ANNOUNCE_IP: snprintf(db->repl.announce_ip, sizeof db->repl.announce_ip, "%s", parsed->text); break;
    case P_REPLICA_ANNOUNCE_PORT: db->repl.announce_port = parsed->number; break;
    case P_REPLICA_ANNOUNCED: db->repl.announced = (uint8_t)parsed->number; break;
    case P_REPL_BACKLOG_SIZE: gr_repl_backlog_resize(db, parsed->number); break;
    case P_MIN_REPLICAS_TO_WRITE: db->repl_primary.min_replicas_to_write = parsed->number; break;
    case P_MIN_REPLICAS_MAX_LAG: db->repl_primary.min_replicas_max_lag = parsed->number; break;
    case P_REPL_PING_REPLICA_PERIOD: db->repl_primary.ping_period_s = parsed->number; break;
    case P_REPL_TIMEOUT: db->repl_primary.repl_timeout_s = parsed->number; break;
    case P_REPL_DISKLESS_SYNC: db->repl_primary.diskless_sync = (uint8_t)parsed->number; break;
    case P_REPL_DISKLESS_SYNC_DELAY: db->repl_primary.diskless_delay_s = parsed->number; break;
    case P_REPL_DISKLESS_SYNC_MAX_REPLICAS: db->repl_primary.diskless_max_replicas = parsed->number; break;
    case P_REPL_BACKLOG_TTL: db->repl_primary.backlog_ttl_s = parsed->number; break;
    case P_MAXCLIENTS: db->config.maxclients = parsed->number; break;
    case P_TIMEOUT: db->config.timeout_s = parsed->number; break;
    case P_PROTO_MAX_BULK_LEN: db->config.proto_max_bulk_len = parsed->number; break;
    case P_PORT: db->info.tcp_port = parsed->number; break;
    case P_CLIENT_QUERY_BUFFER_LIMIT: db->config.client_query_buffer_limit = parsed->number; break;
    case P_LIST_MAX_LISTPACK_SIZE:
        db->config.list_max_listpack_size = parsed->number;
        gr_list_config_from_listpack_size(&db->list_config, parsed->number);
        break;
    case P_LIST_COMPRESS_DEPTH: db->config.list_compress_depth = parsed->number; break;
    case P_SET_MAX_INTSET_ENTRIES: db->config.set_max_intset_entries = parsed->number; break;
    case P_SET_MAX_LISTPACK_ENTRIES: db->config.set_max_listpack_entries = parsed->number; break;
    case P_SET_MAX_LISTPACK_VALUE: db->config.set_max_listpack_value = parsed->number; break;
    case P_HASH_MAX_LISTPACK_ENTRIES: db->config.hash_max_listpack_entries = parsed->number; break;
    case P_HASH_MAX_LISTPACK_VALUE: db->config.hash_max_listpack_value = parsed->number; break;
    case P_HLL_SPARSE_MAX_BYTES: db->config.hll_sparse_max_bytes = parsed->number; break;
    case P_TRACKING_TABLE_MAX_KEYS: db->config.tracking_table_max_keys = parsed->number; break;
    case P_ZSET_MAX_LISTPACK_ENTRIES: db->config.zset_max_listpack_entries = parsed->number; break;
    case P_ZSET_MAX_LISTPACK_VALUE: db->config.zset_max_listpack_value = parsed->number; break;
    case P_ZSET_IMPLEMENTATION: db->config.zset_packed = (uint8_t)parsed->number; break;
    case P_STREAM_NODE_MAX_BYTES: db->config.stream_node_max_bytes = parsed->number; break;
    case P_STREAM_NODE_MAX_ENTRIES: db->config.stream_node_max_entries = parsed->number; break;
    case P_NOTIFY_KEYSPACE_EVENTS: gr_db_set_notify_flags(db, gr_notify_parse_flags(parsed->text)); break;
    case P_LATENCY_MONITOR_THRESHOLD: db->config.latency_monitor_threshold_ms = parsed->number; break;
    case P_BUSY_REPLY_THRESHOLD: db->config.busy_reply_threshold_ms = parsed->number; break;
    case P_LATENCY_TRACKING: db->config.latency_tracking = (int)parsed->number; break;
    case P_LATENCY_TRACKING_INFO_PERCENTILES: {
        char why[128];
        int count = parse_percentiles(parsed->text, db->config.latency_percentiles, why, sizeof why);
        db->config.latency_percentile_count = count < 0 ? 0 : count;
        break;
    }
    case P_MAXMEMORY_CLIENTS:
        db->config.maxmemory_clients = parsed->number;
        db->config.maxmemory_clients_percent = (uint8_t)parsed->percent;
        break;
    case P_CLIENT_OUTPUT_BUFFER_LIMIT:
        for (int c = 0; c < 3; c++)
            if (parsed->classes_given[c]) memcpy(db->config.output_limit[c], parsed->limits[c], sizeof parsed->limits[c]);
        break;
    case P_APPENDONLY: {   /* config_set started it already (its failure is the command's error) */
        char ignored[256];
        if (parsed->number && !db->aof) gr_aof_start(db, 1, ignored, sizeof ignored);
        else if (!parsed->number && db->aof) gr_aof_stop(db);
        break;
    }
    case P_APPENDFSYNC: db->config.appendfsync = (uint8_t)parsed->number; break;
    case P_APPENDFILENAME:
        snprintf(db->config.appendfilename, sizeof db->config.appendfilename, "%s", parsed->text);
        break;
    case P_AOF_LOAD_TRUNCATED: db->config.aof_load_truncated = (uint8_t)parsed->number; break;
    case P_AUTO_AOF_REWRITE_PERCENTAGE: db->config.auto_aof_rewrite_percentage = parsed->number; break;
    case P_AUTO_AOF_REWRITE_MIN_SIZE: db->config.auto_aof_rewrite_min_size = parsed->number; break;
    default: break;   /* fixed values (databases, hz, ...) */
    }
}

int gr_db_config_set(gr_server_t *db, const char *name, const char *value, char *error, size_t error_size) {
    int id = find_param(name);
    if (id < 0) { snprintf(error, error_size, "unknown parameter '%s'", name); return -1; }
    parsed_value_t parsed;
    if (validate(id, value, &parsed, error, error_size) != 0) return -1;
    apply(db, id, &parsed);
    return 0;
}

int64_t gr_db_config_number(gr_server_t *db, const char *name) {
    if (!strcmp(name, "protected-mode")) return db->config.protected_mode;
    if (!strcmp(name, "maxclients")) return db->config.maxclients;
    if (!strcmp(name, "timeout")) return db->config.timeout_s;
    if (!strcmp(name, "maxmemory")) return db->config.maxmemory;
    if (!strcmp(name, "proto-max-bulk-len")) return db->config.proto_max_bulk_len;
    if (!strcmp(name, "requirepass")) return db->requirepass[0] != '\0';
    return -1;
}

/* ---- the config file: CONFIG REWRITE ---- */

int gr_db_config_use_file(gr_server_t *db, const char *path) {
    char *copy = strdup(path);
    char **defaults = calloc(P_COUNT, sizeof *defaults);
    if (!copy || !defaults) { free(copy); free(defaults); return -1; }
    for (int i = 0; i < P_COUNT; i++) {
        char value[1024];
        param_value(db, i, value, sizeof value);
        defaults[i] = strdup(value);
        if (!defaults[i]) {
            while (i--) free(defaults[i]);
            free(defaults);
            free(copy);
            return -1;
        }
    }
    free(db->config.config_file);
    for (size_t i = 0; i < db->config.config_default_count; i++) free(db->config.config_defaults[i]);
    free(db->config.config_defaults);
    db->config.config_file = copy;
    db->config.config_defaults = defaults;
    db->config.config_default_count = P_COUNT;
    snprintf(db->info.config_file, sizeof db->info.config_file, "%s", path);
    return 0;
}

static void text_append(gr_text_t *b, const char *text, size_t length) {
    gr_text_append(b, "%.*s", (int)length, text);
}

static void text_append_string(gr_text_t *b, const char *text) { gr_text_append(b, "%s", text); }

/* A value as redis.conf reads it back: bare when it is one plain word, else quoted with
 * Redis's escapes (sdscatrepr). */
static void append_config_value(gr_text_t *b, const char *value) {
    int plain = value[0] != '\0';
    for (const char *p = value; *p && plain; p++)
        if (!isgraph((unsigned char)*p) || *p == '"' || *p == '\'' || *p == '\\') plain = 0;
    if (plain) { text_append_string(b, value); return; }
    text_append(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)value; *p; p++) {
        char escaped[8];
        switch (*p) {
        case '\\': text_append(b, "\\\\", 2); break;
        case '"': text_append(b, "\\\"", 2); break;
        case '\n': text_append(b, "\\n", 2); break;
        case '\r': text_append(b, "\\r", 2); break;
        case '\t': text_append(b, "\\t", 2); break;
        default:
            if (isprint(*p)) text_append(b, (const char *)p, 1);
            else { snprintf(escaped, sizeof escaped, "\\x%02x", *p); text_append_string(b, escaped); }
        }
    }
    text_append(b, "\"", 1);
}

/* The lines that set parameter id to its current value. */
static void append_config_lines(const gr_server_t *db, gr_text_t *b, int id) {
    char value[1024];
    param_value(db, id, value, sizeof value);
    const char *name = params[id].name;
    if (id == P_REPLICAOF && !value[0]) return;   /* a primary: no replicaof line (as Redis's rewrite) */
    if (id == P_CLIENT_OUTPUT_BUFFER_LIMIT) {
        for (int c = 0; c < 3; c++) {
            char line[160];
            snprintf(line, sizeof line, "%s %s %lld %lld %lld\n", name, output_classes[c],
                     (long long)db->config.output_limit[c][GR_LIMIT_HARD],
                     (long long)db->config.output_limit[c][GR_LIMIT_SOFT],
                     (long long)db->config.output_limit[c][GR_LIMIT_SOFT_SECONDS]);
            text_append_string(b, line);
        }
        return;
    }
    text_append_string(b, name);
    text_append(b, " ", 1);
    if ((id == P_SAVE || id == P_BIND || id == P_REPLICAOF) && value[0]) text_append_string(b, value);   /* several words, as written */
    else append_config_value(b, value);
    text_append(b, "\n", 1);
}

/* Redis's rewriteConfig: the file's comments, blank lines, includes and unknown directives
 * stay as they are; each parameter's first line is replaced by its current value and its
 * other lines dropped; parameters the file does not name are appended after a marker line
 * when they differ from their defaults. Written to a temporary file and renamed over. */
static int config_rewrite(gr_server_t *db, char *why, size_t why_size) {
    const char *path = db->config.config_file;
    gr_text_t out;
    if (gr_text_init(&out, 4096) != 0) { snprintf(why, why_size, "Rewriting config file: out of memory"); return -1; }
    FILE *in = fopen(path, "r");
    int written[P_COUNT] = {0};
    int marked = 0;
    if (in) {
        char *line = NULL;
        size_t line_capacity = 0;
        ssize_t n;
        while ((n = getline(&line, &line_capacity, in)) >= 0) {
            const char *p = line;
            while (*p == ' ' || *p == '\t') p++;
            char word[128];
            size_t w = 0;
            while (p[w] && !isspace((unsigned char)p[w]) && w + 1 < sizeof word) { word[w] = p[w]; w++; }
            word[w] = '\0';
            int id = (word[0] && word[0] != '#') ? find_param(word) : -1;
            if (!strcmp(line, "# Generated by CONFIG REWRITE\n") || !strcmp(line, "# Generated by CONFIG REWRITE"))
                marked = 1;   /* as Redis: one marker, the lines after it are rewritten in place */
            if (id < 0) {
                text_append(&out, line, (size_t)n);
                if (n > 0 && line[n - 1] != '\n') text_append(&out, "\n", 1);
            } else if (!written[id]) {
                append_config_lines(db, &out, id);
                written[id] = 1;
            }
        }
        free(line);
        fclose(in);
    } else if (errno != ENOENT) {
        snprintf(why, why_size, "Rewriting config file: %s", strerror(errno));
        gr_text_free(&out);
        return -1;
    }
    for (int id = 0; id < P_COUNT; id++) {
        if (written[id]) continue;
        char value[1024];
        param_value(db, id, value, sizeof value);
        const char *initial = (size_t)id < db->config.config_default_count ? db->config.config_defaults[id] : NULL;
        if (initial && strcmp(initial, value) == 0) continue;
        if (!marked) {
            text_append_string(&out, "# Generated by CONFIG REWRITE\n");
            marked = 1;
        }
        append_config_lines(db, &out, id);
    }
    if (out.failed) { gr_text_free(&out); snprintf(why, why_size, "Rewriting config file: out of memory"); return -1; }
    char temporary[4200];
    snprintf(temporary, sizeof temporary, "%s.tmp-%d", path, (int)getpid());
    int fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int failed = fd < 0;
    struct stat info;
    if (!failed && stat(path, &info) == 0) (void)fchmod(fd, info.st_mode & 0777);
    for (size_t done = 0; !failed && done < out.length;) {
        ssize_t put = write(fd, out.data + done, out.length - done);
        if (put < 0 && errno == EINTR) continue;
        if (put <= 0) failed = 1;
        else done += (size_t)put;
    }
    if (!failed && fsync(fd) != 0) failed = 1;
    if (fd >= 0 && close(fd) != 0) failed = 1;
    if (!failed && rename(temporary, path) != 0) failed = 1;
    int saved = errno;
    if (failed) unlink(temporary);
    gr_text_free(&out);
    if (failed) { snprintf(why, why_size, "Rewriting config file: %s", strerror(saved)); return -1; }
    return 0;
}

/* ---- the commands ---- */

static void config_get(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                       gr_reply_t *reply) {
    /* As Redis, a pattern matches a parameter's name and its old name separately, and the
     * reply names each one matched (CONFIG GET *ziplist* lists the old names). */
    int matched[P_COUNT][2] = {{0}};
    size_t count = 0;
    for (size_t a = 2; a < argc; a++)
        for (int i = 0; i < P_COUNT; i++)
            for (int which = 0; which < 2; which++) {
                const char *name = which ? params[i].alias : params[i].name;
                if (name && !matched[i][which] &&
                    gr_glob_match(argv[a], argv_length[a], (const uint8_t *)name, strlen(name), 1)) {
                    matched[i][which] = 1;
                    count++;
                }
            }
    gr_reply_map_begin(reply, count);
    for (int i = 0; i < P_COUNT; i++)
        for (int which = 0; which < 2; which++) {
            if (!matched[i][which]) continue;
            const char *name = which ? params[i].alias : params[i].name;
            char value[300];
            param_value(db, i, value, sizeof value);
            gr_reply_bulk(reply, (const uint8_t *)name, strlen(name));
            gr_reply_bulk(reply, (const uint8_t *)value, strlen(value));
        }
}

static void config_set_failed(gr_reply_t *reply, const char *name, const char *why) {
    char text[512];
    snprintf(text, sizeof text, "ERR CONFIG SET failed (possibly related to argument '%s') - %s", name, why);
    gr_reply_error_text(reply, GR_ERR_GENERIC, text);
}

static void config_set(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                       gr_reply_t *reply) {
    enum { MAX_PAIRS = 2 * P_COUNT };   /* every parameter once, by its name and its old name */
    if (argc < 4 || (argc - 2) % 2 != 0) { gr_reply_arity_error(reply, "config|set"); return; }
    size_t pairs = (argc - 2) / 2;
    int ids[MAX_PAIRS];
    parsed_value_t values[MAX_PAIRS];
    for (size_t p = 0; p < pairs; p++) {
        char name[128], value[512];
        snprintf(name, sizeof name, "%.*s", (int)(argv_length[2 + 2 * p] > 127 ? 127 : argv_length[2 + 2 * p]),
                 (const char *)argv[2 + 2 * p]);
        int id = find_param(name);
        if (id < 0 || p >= MAX_PAIRS) {
            char text[256];
            snprintf(text, sizeof text, "ERR Unknown option or number of arguments for CONFIG SET - '%s'", name);
            gr_reply_error_text(reply, GR_ERR_GENERIC, text);
            return;
        }
        /* As Redis: the same name twice is refused; a name and its old name both apply, the last winning. */
        for (size_t q = 0; q < p; q++)
            if (argv_length[2 + 2 * q] == argv_length[2 + 2 * p] &&
                strncasecmp((const char *)argv[2 + 2 * q], (const char *)argv[2 + 2 * p], argv_length[2 + 2 * p]) == 0) {
                config_set_failed(reply, name, "duplicate parameter");
                return;
            }
        if (!params[id].mutable_) { config_set_failed(reply, name, "can't set immutable config"); return; }
        size_t value_length = argv_length[3 + 2 * p];
        if (value_length >= sizeof value || memchr(argv[3 + 2 * p], '\0', value_length)) {
            config_set_failed(reply, name, "argument is too long or holds a NUL byte");
            return;
        }
        memcpy(value, argv[3 + 2 * p], value_length);
        value[value_length] = '\0';
        char why[200];
        if (validate(id, value, &values[p], why, sizeof why) != 0) { config_set_failed(reply, name, why); return; }
        ids[p] = id;
    }
    for (size_t p = 0; p < pairs; p++) {   /* appendonly yes may fail (the file): before changing anything */
        char why[300];
        if (ids[p] == P_APPENDONLY && values[p].number && !db->aof && gr_aof_start(db, 1, why, sizeof why) != 0) {
            config_set_failed(reply, "appendonly", why);
            return;
        }
    }
    for (size_t p = 0; p < pairs; p++) apply(db, ids[p], &values[p]);
    gr_reply_ok(reply);
}

void gr_cmd_config(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                   gr_reply_t *reply) {
    const uint8_t *sub = argv[1];
    size_t sub_length = argv_length[1];
    if (gr_word_is(sub, sub_length, "get")) {
        if (argc < 3) gr_reply_arity_error(reply, "config|get");
        else config_get(db, argc, argv, argv_length, reply);
    } else if (gr_word_is(sub, sub_length, "set")) {
        config_set(db, argc, argv, argv_length, reply);
    } else if (gr_word_is(sub, sub_length, "resetstat")) {
        if (argc != 2) { gr_reply_arity_error(reply, "config|resetstat"); return; }
        gr_db_reset_stats(db);
        gr_reply_ok(reply);
    } else if (gr_word_is(sub, sub_length, "rewrite")) {
        if (argc != 2) { gr_reply_arity_error(reply, "config|rewrite"); return; }
        if (!db->config.config_file) {
            gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR The server is running without a config file");
            return;
        }
        char why[512], message[600];
        if (config_rewrite(db, why, sizeof why) != 0) {
            snprintf(message, sizeof message, "ERR %s", why);
            gr_reply_error_text(reply, GR_ERR_GENERIC, message);
            return;
        }
        gr_reply_ok(reply);
    } else if (gr_word_is(sub, sub_length, "help")) {
        static const char *lines[] = {
            "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "GET <pattern> [<pattern> ...]", "    Return parameters matching the glob-like <pattern>s and their values.",
            "SET <directive> <value> [<directive> <value> ...]", "    Set the configuration <directive>s to <value>s.",
            "RESETSTAT", "    Reset statistics reported by the INFO command.",
            "REWRITE", "    Rewrite the configuration file.",
            "HELP", "    Print this help.",
        };
        gr_reply_help(reply, lines, sizeof lines / sizeof lines[0]);
    } else {
        gr_reply_unknown_subcommand(reply, sub, sub_length, "CONFIG");
    }
}
