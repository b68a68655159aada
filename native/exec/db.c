/* db.c — the execution context (db.h): the databases' lifecycle, the connection registry,
 * the execute entry points (each command one call through its table row's handler,
 * exec/command.h), admission and accounting. The error replies every command file shares are
 * in reply.c.
 */
#include "exec/db.h"
#include "exec/pause.h"
#include "exec/monitor.h"
#include "core/clock.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/alloc.h"
#include "engines/array/array.h"
#include "engines/table/table.h"
#include "exec/blocking.h"
#include "exec/transaction.h"
#include "exec/tracking.h"
#include "exec/server_text.h"

#define SCRATCH_ITEMS 65536

static int64_t monotonic_us(void) { return gr_monotonic_ns() / 1000; }

static void calibrate_cycles(gr_server_t *db);

/* A deleted key may answer a blocked client (blocking.h's gone_reply: a parked XREADGROUP whose
 * stream went away); one branch while nobody waits. */
static void signal_deleted_key(void *context, gr_keyspace_t *ks, const uint8_t *key, size_t length) {
    gr_server_t *db = context;
    if (db->blocked_count == 0) return;
    int32_t dbid = 0;
    while (dbid < GR_DB_COUNT - 1 && db->keyspaces[dbid] != ks) dbid++;
    gr_blocking_signal_deleted(db, dbid, key, length);
}

gr_server_t *gr_db_new(uint64_t seed) {
    gr_server_t *db = calloc(1, sizeof *db);
    if (!db) return NULL;
    for (int i = 0; i < GR_DB_COUNT; i++) {
        db->keyspaces[i] = gr_ks_new(gr_free_value, db, seed + (uint64_t)i);
        if (!db->keyspaces[i]) { gr_db_free(db); return NULL; }
        gr_ks_set_delete_observer(db->keyspaces[i], signal_deleted_key);
        gr_ks_set_keep_bits(db->keyspaces[i], GR_ACCESS_LFU_BITS);   /* overwrite keeps the LFU counter */
    }
    db->keyspace = db->keyspaces[0];
    db->pubsub = gr_pubsub_new(seed);
    if (!db->pubsub) { gr_db_free(db); return NULL; }
    db->acl = gr_acl_new();
    if (!db->acl) { gr_db_free(db); return NULL; }
    db->tracking = gr_tracking_new(seed);
    if (!db->tracking) { gr_db_free(db); return NULL; }
    gr_repl_init(db);
    /* sets' and hashes' tables hash with a key of their own, fixed by the first db */
    gr_table_set_hash_seed(seed ^ 0x5bd1e9955bd1e995ULL, seed * 0x9e3779b97f4a7c15ULL + 1);
    db->scratch_items = calloc(SCRATCH_ITEMS, sizeof *db->scratch_items);
    db->scratch_capacity = SCRATCH_ITEMS - 1;
    if (!db->scratch_items) {
        gr_db_free(db);
        return NULL;
    }
    gr_propagation_init(&db->propagation);
    gr_repl_primary_init(&db->repl_primary);
    gr_slowlog_init(&db->slowlog);
    gr_list_config_default(&db->list_config);
    db->list_target = GR_LIST_SEGMENTED;
    db->stats.start_time_ms = gr_unix_ms();
    db->config.proto_max_bulk_len = 512LL * 1024 * 1024;
    db->config.maxmemory_policy = GR_MAXMEMORY_NO_EVICTION;   /* Redis's eviction defaults */
    db->config.maxmemory_samples = 5;
    db->config.maxmemory_eviction_tenacity = 10;
    db->config.lfu_log_factor = 10;
    db->config.lfu_decay_time = 1;
    db->evict_random = seed ^ 0x2545F4914F6CDD1DULL;
    for (int i = 0; i < GR_DB_COUNT; i++) gr_ks_set_clock(db->keyspaces[i], gr_evict_stamp(gr_unix_ms()));
    calibrate_cycles(db);
    db->config.maxclients = 10000;
    db->config.client_query_buffer_limit = 1024LL * 1024 * 1024;
    static const int64_t output_limits[3][3] = {
        {0, 0, 0}, {256LL * 1024 * 1024, 64LL * 1024 * 1024, 60}, {32LL * 1024 * 1024, 8LL * 1024 * 1024, 60}};
    memcpy(db->config.output_limit, output_limits, sizeof output_limits);
    db->config.protected_mode = 1;
    db->config.set_max_intset_entries = 512;
    db->config.set_max_listpack_entries = 128;
    db->config.set_max_listpack_value = 64;
    db->config.hash_max_listpack_entries = 128;
    db->config.hash_max_listpack_value = 64;
    db->config.hll_sparse_max_bytes = 3000;
    db->config.latency_tracking = 1;
    db->config.latency_percentiles[0] = 50;
    db->config.latency_percentiles[1] = 99;
    db->config.latency_percentiles[2] = 99.9;
    db->config.latency_percentile_count = 3;
    db->config.zset_max_listpack_entries = 128;
    db->config.zset_max_listpack_value = 64;
    db->config.stream_node_max_bytes = 4096;
    db->config.stream_node_max_entries = 100;
    db->config.list_max_listpack_size = -2;
    db->config.appendfsync = GR_APPENDFSYNC_EVERYSEC;
    db->config.aof_load_truncated = 1;
    strcpy(db->config.appendfilename, "appendonly.aof");
    db->config.auto_aof_rewrite_percentage = 100;
    db->config.auto_aof_rewrite_min_size = 64LL * 1024 * 1024;
    db->config.busy_reply_threshold_ms = 5000;
    db->config.tracking_table_max_keys = 1000000;
    strcpy(db->config.bind, "127.0.0.1");
    /* persistence (persist/): a file name of goblin's own and NO save rules: a database made
     * without a server has no directory, and FLUSHALL or the cron saving by rules would write
     * into whatever the working directory is. The server sets Redis's default rules
     * (goblin_ring/server/loop.py, DEFAULT_SAVE_RULES) unless --save says otherwise. */
    strcpy(db->persistence.dbfilename, "dump.grdb");
    db->persistence.save_rule_count = 0;
    db->persistence.lastsave_s = db->stats.start_time_ms / 1000;
    db->persistence.last_bgsave_ok = 1;
    db->persistence.stop_writes_on_bgsave_error = 1;
    db->persistence.last_bgsave_seconds = -1;
    strcpy(db->info.list_implementation, "segmented");
    strcpy(db->info.mode, "adaptive");
    return db;
}

void gr_db_free(gr_server_t *db) {
    if (!db) return;
    if (db->scripting_release) db->scripting_release(db);
    if (db->functions_release) db->functions_release(db);
    gr_blocking_free_all(db);
    gr_transaction_free_all(db);
    gr_evict_release(db);
    for (int i = 0; i < GR_DB_COUNT; i++) gr_ks_free(db->keyspaces[i]);
    for (int i = 0; i < GR_COMMAND_STAT_SLOTS; i++) free(db->command_stats[i].histogram);
    for (gr_connection_t *conn = db->connections; conn; conn = conn->next) {
        gr_pubsub_forget(db->pubsub, &conn->subscriber);
        gr_tracking_disable(db, conn);
    }
    gr_tracking_free(db->tracking);
    gr_pubsub_free(db->pubsub);
    gr_acl_free(db->acl);
    free(db->pending_output);
    gr_mem_free(db->notify_records, GR_MEM_OTHER);
    free(db->scratch_items);
    gr_propagation_release(&db->propagation);
    gr_repl_primary_release(&db->repl_primary);
    gr_slowlog_release(&db->slowlog);
    free(db->monitors);
    free(db->config.config_file);
    for (size_t i = 0; i < db->config.config_default_count; i++) free(db->config.config_defaults[i]);
    free(db->config.config_defaults);
    free(db);
}

int gr_db_reserve_items(gr_server_t *db, size_t count) {
    if (count <= db->scratch_capacity) return 0;
    gr_bytes_t *items = realloc(db->scratch_items, count * sizeof *items);
    if (!items) return -1;
    db->scratch_items = items;
    db->scratch_capacity = (uint32_t)count;
    return 0;
}

int gr_db_set_list_implementation(gr_server_t *db, const char *name) {
    if (strcmp(name, "segmented") == 0) db->list_target = GR_LIST_SEGMENTED;
    else if (strcmp(name, "pma") == 0) db->list_target = GR_LIST_PMA;
    else return -1;
    strcpy(db->info.list_implementation, name);
    return 0;
}

int gr_db_set_array_implementation(gr_server_t *db, const char *name) {
    const gr_array_engine_t *engine = gr_array_engine_named(name, strlen(name));
    if (!engine) return -1;
    db->array_engine = engine->kind;
    return 0;
}

static void copy_text(char *target, size_t size, const char *value) {
    strncpy(target, value, size - 1);
    target[size - 1] = '\0';
}

void gr_db_set_info_text(gr_server_t *db, const char *field, const char *value) {
    if (!strcmp(field, "version")) copy_text(db->info.version, sizeof db->info.version, value);
    else if (!strcmp(field, "name")) copy_text(db->info.name, sizeof db->info.name, value);
    else if (!strcmp(field, "mode")) copy_text(db->info.mode, sizeof db->info.mode, value);
    else if (!strcmp(field, "executable")) copy_text(db->info.executable, sizeof db->info.executable, value);
    else if (!strcmp(field, "config_file")) copy_text(db->info.config_file, sizeof db->info.config_file, value);
    else if (!strcmp(field, "run_id")) {
        copy_text(db->info.run_id, sizeof db->info.run_id, value);
        if (!db->repl.have_cached) copy_text(db->repl.replid, sizeof db->repl.replid, value);   /* a primary's first history */
    }
}

void gr_db_set_info_number(gr_server_t *db, const char *field, int64_t value) {
    if (!strcmp(field, "tcp_port")) db->info.tcp_port = value;
    else if (!strcmp(field, "process_id")) db->info.process_id = value;
    else if (!strcmp(field, "ring_capacity")) db->info.ring_capacity = value;
    else if (!strcmp(field, "mlock_all")) db->info.mlock_all = value;
    else if (!strcmp(field, "connected_ring_sessions")) db->stats.connected_ring_sessions = value;
    else if (!strcmp(field, "connected_resp_clients")) db->stats.connected_resp_clients = value;

}

int gr_db_accepts_peer(gr_server_t *db, int is_loopback) {
    return is_loopback || !db->config.protected_mode || !db->acl->default_user->nopass;
}

void gr_db_count_connection(gr_server_t *db, int rejected) {
    db->stats.connections_received++;
    if (rejected) db->stats.rejected_connections++;
}

int64_t gr_db_key_count(gr_server_t *db) {
    int64_t keys = 0;
    for (int i = 0; i < GR_DB_COUNT; i++) keys += (int64_t)gr_ks_size(db->keyspaces[i]);
    return keys;
}

/* ---- connections ---- */

void gr_connection_register(gr_server_t *db, gr_connection_t *conn, int64_t id, gr_connection_kind_t kind) {
    conn->id = id;
    conn->kind = (uint8_t)kind;
    conn->protocol = 2;
    conn->user = gr_acl_implicit_user(db->acl);   /* ring sessions too: they AUTH at attach or after */
    conn->created_ms = conn->last_command_ms = gr_unix_ms();
    conn->fd = -1;
    conn->prev = NULL;
    conn->next = db->connections;
    if (db->connections) db->connections->prev = conn;
    db->connections = conn;
    gr_tracking_connection_added(db, conn);
}

void gr_connection_unregister(gr_server_t *db, gr_connection_t *conn) {
    gr_blocking_forget(db, conn);
    gr_transaction_forget(db, conn);
    gr_pubsub_forget(db->pubsub, &conn->subscriber);
    gr_monitor_remove(db, conn);
    gr_tracking_connection_removed(db, conn);
    if (conn->output_pending) {
        for (size_t i = 0; i < db->pending_output_count; i++)
            if (db->pending_output[i] == conn) db->pending_output[i] = NULL;   /* taken as a gap */
        conn->output_pending = 0;
    }
    if (conn->prev) conn->prev->next = conn->next;
    else if (db->connections == conn) db->connections = conn->next;
    if (conn->next) conn->next->prev = conn->prev;
    if (conn->kill_requested && !conn->kill_reported) db->kills_pending--;
    conn->prev = conn->next = NULL;
    if (db->current == conn) db->current = NULL;
}

/* Keyspace notifications' "new": Redis fires it when a key is added (dbAdd), before the
 * command's own event; recorded with the command's changes so the order is kept. */
static void notify_new_key(void *context, gr_keyspace_t *ks, const uint8_t *key, size_t length) {
    gr_server_t *db = context;
    int32_t dbid = 0;
    while (dbid < GR_DB_COUNT - 1 && db->keyspaces[dbid] != ks) dbid++;
    gr_notify_record_new(db, dbid, (gr_bytes_t){key, (uint32_t)length});   /* in order with the command's changes */
}

void gr_db_set_notify_flags(gr_server_t *db, int flags) {
    db->notify_flags = flags;
    for (int i = 0; i < GR_DB_COUNT; i++)
        gr_ks_set_add_observer(db->keyspaces[i], (flags & GR_NOTIFY_NEW) ? notify_new_key : NULL);
}

void gr_db_note_pending_output(gr_server_t *db, gr_connection_t *conn) {
    if (conn->output_pending) return;
    if (db->pending_output_count == db->pending_output_capacity) {
        size_t capacity = db->pending_output_capacity ? db->pending_output_capacity * 2 : 16;
        gr_connection_t **grown = realloc(db->pending_output, capacity * sizeof *grown);
        if (!grown) return;   /* the transport flushes it at its next read or write anyway */
        db->pending_output = grown;
        db->pending_output_capacity = capacity;
    }
    db->pending_output[db->pending_output_count++] = conn;
    conn->output_pending = 1;
}

gr_connection_t *gr_db_take_pending_output(gr_server_t *db) {
    while (db->pending_output_count > 0) {
        gr_connection_t *conn = db->pending_output[--db->pending_output_count];
        if (conn) {
            conn->output_pending = 0;
            return conn;
        }
    }
    return NULL;
}

/* Make conn the context of the command about to run. */
void gr_db_begin_batch(gr_server_t *db) {
    if (db->batch_depth++ == 0) db->batch_clock_read = 0;   /* read lazily, by the first command */
}

void gr_db_end_batch(gr_server_t *db) {
    if (db->batch_depth > 0) db->batch_depth--;
    if (db->batch_depth == 0 && db->tracking_live) gr_tracking_flush_broadcast(db);   /* Redis: in beforeSleep */
    if (db->batch_depth == 0) gr_propagate_flush(db);   /* the log has the batch (gr_propagate_sync: durable) */
}

/* The index of db->keyspace (a command may look into another database: MOVE, COPY DB). */
static int32_t keyspace_index(const gr_server_t *db) {
    for (int32_t i = 0; i < GR_DB_COUNT; i++)
        if (db->keyspaces[i] == db->keyspace) return i;
    return 0;
}

static void enter(gr_server_t *db, gr_connection_t *conn) {
    db->current = conn;
    db->keyspace = db->keyspaces[conn->db_index];
    if (db->batch_depth == 0 || !db->batch_clock_read) {   /* once per batch, not per command */
        db->now_ms = gr_unix_ms();
        db->batch_clock_read = db->batch_depth > 0;
    }
    conn->last_command_ms = db->now_ms;
    if (db->stamp_ms != db->now_ms)   /* new keys' LRU clock and LFU counter: made once per ms */
        db->stamp_ms = db->now_ms, db->access_stamp = gr_evict_stamp(db->now_ms);
    gr_ks_set_clock(db->keyspace, db->access_stamp);
}

int gr_db_is_expired(const gr_server_t *db, const gr_ks_entry_t *entry) {
    return entry->expire_at_ms >= 0 && entry->expire_at_ms <= db->now_ms;
}

/* An access to entry (Redis's lookupKey without LOOKUP_NOTOUCH): none while a child runs (its
 * copy-on-write pages stay shared, as Redis), nor for a CLIENT NO-TOUCH client (but TOUCH). */
static inline void touch(gr_server_t *db, gr_ks_entry_t *entry) {
    if (db->child.pid > 0) return;
    if (db->current && db->current->no_touch && !db->touch_forced) return;
    gr_evict_touch(db, entry);
}

gr_ks_entry_t *gr_db_peek_live(gr_server_t *db, gr_bytes_t key) {
    gr_ks_entry_t *entry = gr_ks_find(db->keyspace, key.data, key.length);
    if (entry && gr_db_is_expired(db, entry)) {
        if (db->repl.master_port) {   /* a replica: the primary's DEL removes it (Redis 7.0) */
            return db->current && db->current->repl_master ? entry : NULL;
        }
        if (db->pause_mode && gr_pause_active(db)) return NULL;   /* paused: reads as gone, kept (Redis 7.0) */
        if (gr_propagation_on(&db->propagation)) gr_propagate_del(db, keyspace_index(db), key.data, key.length);
        gr_ks_delete(db->keyspace, key.data, key.length);
        db->notify_quiet++;
        gr_watch_touch_current(db, key);      /* an expiry is a modification (Redis 7) */
        db->notify_quiet--;
        gr_notify(db, GR_NOTIFY_EXPIRED, "expired", key);
        db->stats.expired_keys++;
        return NULL;
    }
    return entry;
}

gr_ks_entry_t *gr_db_find_live(gr_server_t *db, gr_bytes_t key) {
    gr_ks_entry_t *entry = gr_db_peek_live(db, key);
    if (entry) touch(db, entry);   /* Redis's lookupKeyWrite: a write's lookup is an access */
    return entry;
}

gr_ks_entry_t *gr_db_lookup_with(gr_server_t *db, gr_bytes_t key, int flags) {
    gr_ks_entry_t *entry = gr_db_peek_live(db, key);
    if (entry) {
        if (!(flags & GR_LOOKUP_WRITE)) db->stats.keyspace_hits++;
        if (!(flags & GR_LOOKUP_NOTOUCH)) touch(db, entry);
    } else if (!(flags & GR_LOOKUP_WRITE)) {
        db->stats.keyspace_misses++;
        if (!(flags & GR_LOOKUP_NONOTIFY)) gr_notify(db, GR_NOTIFY_KEY_MISS, "keymiss", key);
    }
    return entry;
}

/* ---- active expiry ---- */

#define EXPIRE_BATCH 64

typedef struct expire_scan {
    const gr_server_t *db;
    gr_ks_entry_t *expired[EXPIRE_BATCH];
    size_t count;
} expire_scan_t;

static void collect_expired(void *context, gr_ks_entry_t *entry) {
    expire_scan_t *scan = context;
    if (scan->count < EXPIRE_BATCH && gr_db_is_expired(scan->db, entry)) scan->expired[scan->count++] = entry;
}

/* Keys with an expiry are not indexed apart from the others, so active expiry walks each
 * database that has any with the SCAN cursor (resize-safe), a few buckets at a time, and
 * deletes what has expired: every expired key is found within one full pass, whatever the
 * share of volatile keys, and lazy expiry covers the keys in between. */
/* instantaneous_ops_per_sec over the last cron interval, and the memory peak */
static void sample_stats(gr_server_t *db) {
    int64_t elapsed = db->now_ms - db->stats.ops_sample_ms;
    if (elapsed >= 100) {
        if (db->stats.ops_sample_ms)
            db->stats.ops_per_sec = (db->stats.commands_processed - db->stats.ops_sample_commands) * 1000 / elapsed;
        db->stats.ops_sample_ms = db->now_ms;
        db->stats.ops_sample_commands = db->stats.commands_processed;
    }
    int64_t used = gr_mem_used_total();
    if (used > db->stats.peak_memory) db->stats.peak_memory = used;
}

/* CONFIG timeout: RESP clients idle longer are closed (a ring session ends at its control socket's EOF). */
static void close_idle_clients(gr_server_t *db) {
    if (db->config.timeout_s <= 0) return;
    for (gr_connection_t *conn = db->connections; conn; conn = conn->next) {
        if (conn->kind == GR_CONN_RING || conn->kill_requested || conn->blocked || conn->repl_master || conn->repl_peer.state) continue;   /* as Redis */
        if (db->now_ms - conn->last_command_ms > db->config.timeout_s * 1000) {
            conn->kill_requested = 1;
            db->kills_pending++;
        }
    }
}

/* Active expiry of parts of values (a hash's fields, through the type row's expire_parts):
 * while any type says it holds such parts, each database is walked with its own SCAN cursor,
 * as for keys, and a value its expiry emptied is deleted with its key. */
#define PART_EXPIRE_BATCH 64

typedef struct part_scan {
    const gr_server_t *db;
    gr_ks_entry_t *emptied[PART_EXPIRE_BATCH];
    size_t count;
    int64_t removed;
} part_scan_t;

static void expire_parts_visit(void *context, gr_ks_entry_t *entry) {
    part_scan_t *scan = context;
    const gr_value_type_t *row = gr_value_type(entry->type);
    if (!row || !row->expire_parts || scan->count == PART_EXPIRE_BATCH || gr_db_is_expired(scan->db, entry)) return;
    int emptied = 0;
    scan->removed += (int64_t)row->expire_parts(entry->value, scan->db->now_ms, &emptied);
    if (emptied) scan->emptied[scan->count++] = entry;
}

static int any_expiring_parts(void) {
    for (size_t i = 0; gr_value_type_at(i); i++)
        if (gr_value_type_at(i)->has_expiring_parts && gr_value_type_at(i)->has_expiring_parts()) return 1;
    return 0;
}

static void expire_parts(gr_server_t *db, int64_t start, int64_t budget_us) {
    for (int i = 0; i < GR_DB_COUNT && any_expiring_parts(); i++) {
        gr_keyspace_t *ks = db->keyspaces[i];
        if (gr_ks_size(ks) == 0) continue;
        for (int step = 0; step < 4096; step++) {
            part_scan_t scan = {db, {0}, 0, 0};
            db->part_expire_cursor[i] = gr_ks_scan(ks, db->part_expire_cursor[i], expire_parts_visit, &scan);
            gr_db_count_changes(db, scan.removed);
            for (size_t k = 0; k < scan.count; k++) {   /* the scan is over: deleting is allowed */
                gr_ks_entry_t *entry = gr_ks_unlink(ks, scan.emptied[k]->key, scan.emptied[k]->key_length);
                if (entry) {
                    gr_watch_touch(db, i, entry->key, entry->key_length);   /* WATCH, tracking */
                    gr_ks_entry_free(ks, entry, 1);
                }
            }
            if (db->part_expire_cursor[i] == 0 || !any_expiring_parts()) break;
            if ((step & 63) == 63 && monotonic_us() - start >= budget_us) break;
        }
        if (monotonic_us() - start >= budget_us) break;
    }
}

int64_t gr_db_cron(gr_server_t *db, int64_t budget_us) {
    int64_t start = monotonic_us(), expired = 0;
    db->now_ms = gr_unix_ms();
    calibrate_cycles(db);
    gr_child_reap(db);          /* a BGSAVE/BGREWRITEAOF child that ended: its owner's done runs */
    close_idle_clients(db);
    sample_stats(db);
    int paused = db->pause_mode && gr_pause_active(db);   /* keys do not expire while paused, as Redis 7.0 */
    for (int i = 0; i < GR_DB_COUNT && !paused; i++) {
        gr_keyspace_t *ks = db->keyspaces[i];
        gr_ks_rehash(ks, 100);
        if (gr_ks_expires_count(ks) == 0 || db->config.active_expire_disabled || db->repl.master_port) continue;
        for (int step = 0; step < 4096; step++) {
            expire_scan_t scan = {db, {0}, 0};
            db->expire_cursor[i] = gr_ks_scan(ks, db->expire_cursor[i], collect_expired, &scan);
            for (size_t k = 0; k < scan.count; k++) {   /* the scan is over: deleting is allowed */
                gr_ks_entry_t *entry = gr_ks_unlink(ks, scan.expired[k]->key, scan.expired[k]->key_length);
                if (entry) {
                    gr_watch_touch(db, i, entry->key, entry->key_length);   /* WATCH, tracking */
                    if (db->notify_flags & GR_NOTIFY_EXPIRED)
                        gr_notify_publish(db, GR_NOTIFY_EXPIRED, "expired",
                                          (gr_bytes_t){entry->key, (uint32_t)entry->key_length}, i);
                    gr_propagate_del(db, i, entry->key, entry->key_length);
                    gr_ks_entry_free(ks, entry, 1);
                }
            }
            expired += (int64_t)scan.count;
            if (db->expire_cursor[i] == 0 || gr_ks_expires_count(ks) == 0) break;
            if ((step & 63) == 63 && monotonic_us() - start >= budget_us) break;
        }
        if (monotonic_us() - start >= budget_us) break;
    }
    db->stats.expired_keys += expired;
    if (monotonic_us() - start < budget_us && !db->config.active_expire_disabled && !db->repl.master_port && !paused)
        expire_parts(db, start, budget_us);   /* a replica waits for its primary's DELs; a pause keeps keys */
    if (!paused) gr_evict_cron(db);   /* an eviction that ran out of time goes on (not while paused, as Redis) */
    for (int i = 0; i < GR_DB_COUNT; i++)   /* keys added to another database (MOVE, COPY DB, a load) get today's stamp */
        gr_ks_set_clock(db->keyspaces[i], gr_evict_stamp(db->now_ms));
    int64_t cycle_ms = (monotonic_us() - start) / 1000;
    if (db->config.latency_monitor_threshold_ms > 0 && cycle_ms >= db->config.latency_monitor_threshold_ms)
        gr_latency_add_sample(&db->latency, "expire-cycle", db->now_ms / 1000, (uint32_t)cycle_ms);
    if (db->batch_depth == 0 && db->tracking_live) gr_tracking_flush_broadcast(db);   /* expired keys under BCAST prefixes */
    if (db->batch_depth == 0) gr_propagate_flush(db);
    return expired;
}

/* ---- execution: every command is one call through its row's handler ---- */

/* The ring's CommandRequest: its items are argv. */
static void execute_command_envelope(gr_server_t *db, const gr_request_t *request, gr_reply_t *reply) {
    if (request->item_count == 0) {
        gr_reply_error_text(reply, GR_ERR_MALFORMED, "ERR empty command");
        return;
    }
    size_t argc = request->item_count;
    const uint8_t **argv = malloc(argc * sizeof *argv);
    size_t *argv_length = malloc(argc * sizeof *argv_length);
    if (!argv || !argv_length) {
        free(argv);
        free(argv_length);
        gr_reply_oom(reply);
        return;
    }
    for (size_t i = 0; i < argc; i++) {
        argv[i] = request->items[i].data;
        argv_length[i] = request->items[i].length;
    }
    gr_db_run_argv(db, argc, argv, argv_length, reply);
    free(argv);
    free(argv_length);
}

/* Tracking around a top-level command (exec/tracking.h): the table's bound before it; after
 * it, its client's own invalidations (after its reply) and, outside a batch, the BCAST keys. */
static void tracking_before(gr_server_t *db) {
    if (db->tracking_live) gr_tracking_enforce_limit(db);
}

static void tracking_after(gr_server_t *db, gr_connection_t *conn) {
    if (!db->tracking_live && !conn->tracking) return;
    gr_tracking_after_command(db, conn);
    if (db->batch_depth == 0) gr_tracking_flush_broadcast(db);
}

int gr_db_execute(gr_server_t *db, gr_connection_t *conn, const gr_request_t *request, gr_reply_t *reply) {
    if (db->pause_mode && gr_pause_holds(db, conn, 0, NULL, NULL, request)) return 1;
    enter(db, conn);
    tracking_before(db);
    if (conn->in_multi && gr_transaction_queue_request(db, conn, request, reply)) {   /* queued */
        tracking_after(db, conn);
        return 0;
    }
    gr_db_run(db, request, reply);
    if (db->blocked_count) gr_blocking_serve(db);   /* a push this command made goes to waiters first */
    tracking_after(db, conn);
    if (db->batch_depth == 0) gr_propagate_sync(db);
    return 0;
}

int gr_db_execute_argv(gr_server_t *db, gr_connection_t *conn, size_t argc, const uint8_t *const *argv,
                       const size_t *argv_length, gr_reply_t *reply) {
    if (db->pause_mode && gr_pause_holds(db, conn, argc, argv, argv_length, NULL)) return 1;
    enter(db, conn);
    tracking_before(db);
    if (conn->in_multi && gr_transaction_queue_argv(db, conn, argc, argv, argv_length, reply)) {   /* queued */
        tracking_after(db, conn);
        return 0;
    }
    gr_db_run_argv(db, argc, argv, argv_length, reply);
    if (db->blocked_count) gr_blocking_serve(db);
    tracking_after(db, conn);
    if (db->batch_depth == 0) gr_propagate_sync(db);
    return 0;
}

/* ---- admission and accounting (INFO commandstats, errorstats) ---- */

static void count_error(gr_server_t *db, const char *prefix) {
    db->total_error_replies++;
    for (int i = 0; i < GR_ERROR_STAT_SLOTS; i++) {
        gr_error_stat_t *stat = &db->error_stats[i];
        if (stat->prefix[0] == '\0') snprintf(stat->prefix, sizeof stat->prefix, "%s", prefix);
        if (strcmp(stat->prefix, prefix) == 0) { stat->count++; return; }
    }
}

static gr_command_stat_t *stat_of(gr_server_t *db, int index) {
    return index >= 0 && index < GR_COMMAND_STAT_SLOTS ? &db->command_stats[index] : NULL;
}

/* Redis's writeCommandsDeniedByDiskError and its texts: the refusal a write gets while the
 * data cannot be kept (persist/ sets the state), or NULL. */
const char *gr_db_disk_error_refusal(const gr_server_t *db, char *text, size_t size) {
    const gr_persistence_t *p = &db->persistence;
    if (p->stop_writes_on_bgsave_error && p->save_rule_count > 0 && !p->last_bgsave_ok)
        return "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. "
               "Commands that may modify the data set are disabled, because this instance is configured to report "
               "errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check "
               "the Redis logs for details about the RDB error.";
    if (!db->aof) return NULL;
    int error = p->aof_write_errno ? p->aof_write_errno : __atomic_load_n(&p->aof_fsync_errno, __ATOMIC_RELAXED);
    if (!error) return NULL;
    snprintf(text, size, "MISCONF Errors writing to the AOF file: %s", strerror(error));
    return text;
}

static const char *const CONNECTION_KINDS[] = {"tcp", "unix", "ring"};

/* A connection as CLIENT LIST / CLIENT INFO print it (one line, with its newline), and as
 * ACL LOG's client-info shows the refused client. */
void gr_connection_describe(const gr_server_t *db, const gr_connection_t *conn, gr_text_t *text) {
    int64_t age = (db->now_ms - conn->created_ms) / 1000, idle = (db->now_ms - conn->last_command_ms) / 1000;
    char flags[12];   /* Redis's letters, in its order: b blocked (or P Pub/Sub), t tracking, R broken
                       * redirect, B broadcast, e no-evict, T no-touch; N none */
    size_t f = 0;
    if (conn->repl_peer.state) flags[f++] = 'S';   /* a replica of this server */
    else if (conn->repl_master) flags[f++] = 'M';
    if (conn->blocked) flags[f++] = 'b';
    else if (gr_subscriber_total(&conn->subscriber)) flags[f++] = 'P';
    if (conn->tracking) flags[f++] = 't';
    if (conn->tracking & GR_TRACKING_BROKEN_REDIR) flags[f++] = 'R';
    if (conn->tracking & GR_TRACKING_BCAST) flags[f++] = 'B';
    if (conn->no_evict) flags[f++] = 'e';
    if (conn->no_touch) flags[f++] = 'T';
    if (!f) flags[f++] = 'N';
    flags[f] = '\0';
    gr_text_append(text,
        "id=%lld addr=%s laddr=%s fd=%d name=%s age=%lld idle=%lld flags=%s db=%d sub=%u psub=%u ssub=%u multi=-1 "
        "qbuf=%lld qbuf-free=0 argv-mem=0 multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 omem=%lld tot-mem=%lld events=%s cmd=%s "
        "user=%s redir=%lld resp=%d lib-name=%s lib-ver=%s transport=%s\n",
        (long long)conn->id, conn->addr, conn->laddr, conn->fd, conn->name, (long long)(age < 0 ? 0 : age),
        (long long)(idle < 0 ? 0 : idle), flags,
        (int)conn->db_index, conn->subscriber.counts[GR_PUBSUB_CHANNELS], conn->subscriber.counts[GR_PUBSUB_PATTERNS],
        conn->subscriber.counts[GR_PUBSUB_SHARD_CHANNELS],
        (long long)conn->query_buffer_bytes, (long long)conn->output_buffer_bytes, (long long)conn->memory_bytes,
        conn->output_buffer_bytes ? "rw" : "r", conn->last_command ? conn->last_command : "NULL",
        conn->user ? conn->user->name : "default",
        (long long)(conn->tracking ? conn->tracking_redirect : -1),
        (int)conn->protocol, conn->lib_name, conn->lib_ver, CONNECTION_KINDS[conn->kind < 3 ? conn->kind : 0]);
}

void gr_db_acl_log(gr_server_t *db, int reason, const uint8_t *object, size_t object_length,
                   const uint8_t *username, size_t username_length) {
    gr_connection_t *conn = db->current;
    const gr_acl_user_t *user = gr_db_current_user(db);
    if (!username) {
        username = (const uint8_t *)(user ? user->name : "default");
        username_length = user ? user->name_length : 7;
    }
    int context = db->script_running ? GR_ACL_LOG_LUA
                : conn && (conn->in_multi || db->in_exec) ? GR_ACL_LOG_MULTI : GR_ACL_LOG_TOPLEVEL;
    char *info = NULL;
    gr_text_t text;
    if (conn && gr_text_init(&text, 256) == 0) {
        gr_connection_describe(db, conn, &text);
        if (!text.failed) {
            if (text.length && text.data[text.length - 1] == '\n') text.length--;
            info = malloc(text.length + 1);
            if (info) memcpy(info, text.data, text.length), info[text.length] = '\0';
        }
        gr_text_free(&text);
    }
    gr_acl_log_add(db->acl, reason, context, object, object_length, username, username_length, info,
                   gr_unix_ms());
}

gr_acl_user_t *gr_db_current_user(const gr_server_t *db) {
    if (!db->current) return db->acl->default_user;   /* no connection: the server's own calls */
    return db->current->user ? db->current->user : gr_acl_implicit_user(db->acl);
}

int gr_db_acl_setuser(gr_server_t *db, const uint8_t *name, size_t name_length, size_t rule_count,
                      const uint8_t *const *rules, const size_t *rule_lengths, char *error, size_t error_size) {
    return gr_acl_set_user(db->acl, name, name_length, rule_count, rules, rule_lengths, error, error_size);
}

int gr_db_acl_load(gr_server_t *db, char *error, size_t error_size) {
    if (!db->acl->file) { snprintf(error, error_size, "ERR no aclfile"); return -1; }
    char *errors = NULL;
    gr_acl_t *loaded = gr_acl_load_file(db->acl->file, &errors);
    if (!loaded) {
        snprintf(error, error_size, "ERR %s", errors ? errors : "Out of memory");
        free(errors);
        return -1;
    }
    for (gr_connection_t *conn = db->connections; conn; conn = conn->next) {
        if (!conn->user || conn->user == db->acl->default_user) continue;
        conn->user = NULL;   /* its user is gone: closed after this command, as Redis closes it */
        if (!conn->kill_requested) {
            conn->kill_requested = 1;
            db->kills_pending++;
        }
    }
    gr_acl_replace(db->acl, loaded);
    return 0;
}

gr_acl_user_t *gr_db_credentials_user(gr_server_t *db, const uint8_t *username, size_t username_length,
                                      const uint8_t *password, size_t password_length) {
    if (username_length == 0) username = (const uint8_t *)"default", username_length = 7;
    return gr_acl_authenticate(db->acl, username, username_length, password, password_length);
}

int gr_db_credentials_valid(gr_server_t *db, const uint8_t *username, size_t username_length,
                            const uint8_t *password, size_t password_length) {
    return gr_db_credentials_user(db, username, username_length, password, password_length) != NULL;
}

/* Key-spec flags as Redis's ACLSelectorCheckKey reads them: access is a read; insert, delete
 * and update are writes; -1 for a position that is not a key (not_key). */
static int key_access(const char *flags) {
    if (!flags) return 0;
    if (strstr(flags, "not_key")) return -1;
    int access = strstr(flags, "access") ? GR_ACL_READ : 0;
    if (strstr(flags, "insert") || strstr(flags, "delete") || strstr(flags, "update")) access |= GR_ACL_WRITE;
    return access;
}

/* key_access of a row's key spec, worked out once per row (the words are constant): the
 * restricted user's check then costs no string search per call. */
static int8_t spec_access_cache[GR_COMMAND_STAT_SLOTS][GR_MAX_KEY_SPECS];   /* access + 2; 0: not yet */
static int spec_access(int index, int s, const char *flags) {
    if (index < 0 || index >= GR_COMMAND_STAT_SLOTS) return key_access(flags);
    int8_t *cached = &spec_access_cache[index][s];
    if (!*cached) *cached = (int8_t)(key_access(flags) + 2);
    return *cached - 2;
}

/* Every key of an argv call, found as COMMAND GETKEYS finds them (the row's key specs, or its
 * own key finder), against the user's key patterns: 0 allowed, -1 not. */
static int keys_allowed(const gr_acl_user_t *user, int index, const gr_command_t *row, const gr_admit_args_t *args,
                        size_t *refused) {
    size_t argc = args->argc;
    if (row->find_keys) {
        size_t positions[64];
        const char *flags[64];
        size_t found = row->find_keys(argc, args->argv, args->argv_length, positions, flags, 64);
        if (found > 64) return -1;   /* more keys than looked at: refused rather than unchecked */
        for (size_t i = 0; i < found; i++) {
            int access = key_access(flags[i]);
            if (access >= 0 && positions[i] < argc &&
                !gr_acl_allows_key(user, args->argv[positions[i]], args->argv_length[positions[i]], access)) {
                *refused = positions[i];
                return -1;
            }
        }
        return 0;
    }
    for (int s = 0; s < GR_MAX_KEY_SPECS && row->keys[s].begin; s++) {
        const gr_key_spec_t *spec = &row->keys[s];
        int access = spec_access(index, s, spec->flags);
        if (access < 0) continue;
        size_t first, last, step = spec->step > 0 ? (size_t)spec->step : 1;
        if (gr_key_spec_positions(spec, argc, args->argv, args->argv_length, &first, &last) != 0) continue;
        for (size_t i = first; i <= last && i < argc; i += step)
            if (!gr_acl_allows_key(user, args->argv[i], args->argv_length[i], access)) { *refused = i; return -1; }
    }
    return 0;
}

/* A typed request's keys: the one key of a single-key row (key spec RANGE(1, 0, ...)), or where
 * the row's request_keys says a multi-key row's typed form holds them (each checked with its
 * spec's access, as the argv form would be). A multi-key row without request_keys is refused
 * for a user without allkeys (send it as a command, or give the user allkeys). 0 allowed, or -1
 * with the refused key in *refused. */
static int request_keys_allowed(const gr_acl_user_t *user, int index, const gr_command_t *row,
                                const gr_request_t *request, const gr_bytes_t **refused) {
    const gr_key_spec_t *spec = &row->keys[0];
    if (!spec->begin) return 0;
    if (!request) return -1;
    int first_access = spec_access(index, 0, spec->flags);
    if (row->request_keys == GR_REQUEST_KEYS_ITEMS || row->request_keys == GR_REQUEST_KEYS_ITEM_PAIRS) {
        uint32_t step = row->request_keys == GR_REQUEST_KEYS_ITEMS ? 1 : 2;
        for (uint32_t i = 0; first_access >= 0 && i < request->item_count; i += step)
            if (!gr_acl_allows_key(user, request->items[i].data, request->items[i].length, first_access)) {
                *refused = &request->items[i];
                return -1;
            }
        return 0;
    }
    if (row->request_keys == GR_REQUEST_KEYS_COUNTED_ITEMS || row->request_keys == GR_REQUEST_KEYS_FIRST_HALF) {
        uint32_t keys = row->request_keys == GR_REQUEST_KEYS_FIRST_HALF ? request->item_count / 2
                      : request->count < request->item_count ? request->count : request->item_count;
        for (uint32_t i = 0; first_access >= 0 && i < keys; i++)
            if (!gr_acl_allows_key(user, request->items[i].data, request->items[i].length, first_access)) {
                *refused = &request->items[i];
                return -1;
            }
        return 0;
    }
    if (row->request_keys == GR_REQUEST_KEYS_KEY_ARG1) {
        int second_access = row->keys[1].begin ? spec_access(index, 1, row->keys[1].flags) : first_access;
        if (first_access >= 0 && !gr_acl_allows_key(user, request->key.data, request->key.length, first_access)) {
            *refused = &request->key;
            return -1;
        }
        if (second_access >= 0 && !gr_acl_allows_key(user, request->arg1.data, request->arg1.length, second_access)) {
            *refused = &request->arg1;
            return -1;
        }
        return 0;
    }
    int single = spec->begin == 1 && !spec->keynum && spec->last == 0 && !row->keys[1].begin && !row->find_keys;
    if (!single) return -1;
    *refused = &request->key;
    return first_access < 0 || gr_acl_allows_key(user, request->key.data, request->key.length, first_access) ? 0 : -1;
}

static int selector_check(const gr_acl_user_t *user, int index, const gr_admit_args_t *args, size_t *refused_key,
                          const gr_bytes_t **refused);

/* A row's channel arguments (its .acl_channels), by table index; 0 for none. */
static int channel_kind(int index) {
    const gr_command_t *row = index >= 0 ? gr_command_at((size_t)index) : NULL;
    return row ? row->acl_channels : 0;
}

/* A channel command's channels against one selector's (or the root's) channel patterns: 0
 * allowed, or -1 with the refused argument in *refused. A call without argv (none has a typed
 * form) is refused. */
static int channels_allowed(const gr_acl_user_t *user, int kind, const gr_admit_args_t *args, size_t *refused) {
    if (!args || !args->argc) return -1;
    size_t last = kind & GR_ACL_CHANNELS_ALL ? args->argc - 1 : 1;
    for (size_t i = 1; i <= last && i < args->argc; i++)
        if (!gr_acl_selector_allows_channel(user, args->argv[i], args->argv_length[i], (kind & GR_ACL_CHANNELS_PATTERN) != 0)) {
            *refused = i;
            return -1;
        }
    return 0;
}

/* gr_db_acl_check, also saying which bytes of a typed request were the refused key. The root
 * permissions, then each selector: allowed when one allows it all; else the most relevant
 * refusal, as Redis 7.0 picks it (a key over a command; among keys, the later argument). */
static int acl_check(const gr_acl_user_t *user, int index, const gr_admit_args_t *args, size_t *refused_key,
                     const gr_bytes_t **refused) {
    int status = selector_check(user, index, args, refused_key, refused);
    if (status == GR_ACL_ALLOWED || !user->selector_count) return status;
    for (uint32_t i = 0; i < user->selector_count; i++) {
        size_t key = 0;
        const gr_bytes_t *bytes = NULL;
        int s = selector_check(&user->selectors[i], index, args, &key, &bytes);
        if (s == GR_ACL_ALLOWED) return GR_ACL_ALLOWED;
        if (s > status || (s == status && key > *refused_key)) status = s, *refused_key = key, *refused = bytes;
    }
    return status;
}

static int selector_check(const gr_acl_user_t *user, int index, const gr_admit_args_t *args, size_t *refused_key,
                          const gr_bytes_t **refused) {
    int slot = args ? args->slot : index;
    if (!gr_acl_allows_slot(user, slot)) return GR_ACL_DENIED_COMMAND;
    const gr_command_t *row = gr_command_at((size_t)index);
    *refused_key = 0;
    if (!user->allkeys && row) {
        int status = args && args->argc ? keys_allowed(user, index, row, args, refused_key)
                                        : request_keys_allowed(user, index, row, args ? args->request : NULL, refused);
        if (status != 0) return GR_ACL_DENIED_KEY;
    }
    /* Channels within the same selector as the command and keys, as Redis 7.0's ACLSelectorCheckCmd */
    int kind = user->allchannels ? 0 : channel_kind(index);
    if (kind && channels_allowed(user, kind, args, refused_key) != 0) {
        *refused = NULL;
        return GR_ACL_DENIED_CHANNEL;
    }
    return GR_ACL_ALLOWED;
}

int gr_db_acl_check(const gr_acl_user_t *user, int index, const gr_admit_args_t *args, size_t *refused_key) {
    const gr_bytes_t *refused = NULL;
    return acl_check(user, index, args, refused_key, &refused);
}

/* Redis 7.0's processCommand with maxmemory set: every command evicts first while used memory
 * is over maxmemory (performEvictions), a read too, not only one that may add memory. Refused
 * (1) is then a command that may add memory (denyoom) or, queued in MULTI, any command but
 * EXEC, DISCARD, QUIT and RESET (a queue could grow without bound). Commands run by EXEC or a
 * script do not pass processCommand in Redis: there only a denyoom one evicts, as before
 * (Redis refuses it from the state at the script's start instead: not followed here). */
static int over_maxmemory_refuses(gr_server_t *db, int index) {
    int denyoom = gr_command_denies_oom(index);
    int nested = db->in_exec || db->script_running;
    if (!denyoom && nested) return 0;
    if (gr_mem_used_total() <= db->config.maxmemory || gr_evict_perform(db) != GR_EVICT_FAIL) return 0;
    if (denyoom) return 1;
    if (!db->current || !db->current->in_multi) return 0;
    const gr_command_t *row = gr_command_at((size_t)index);
    return !(row && (row->runs & GR_RUNS_IN_MULTI_OVER_MAXMEMORY));
}

int gr_db_admit(gr_server_t *db, int index, const gr_admit_args_t *args, int no_auth, gr_reply_t *reply) {
    const char *refusal = NULL;
    gr_error_code_t code = GR_ERR_GENERIC;
    uint32_t flags = gr_command_flags(index);
    char text[200];
    gr_acl_user_t *user = gr_db_current_user(db);
    int slot = args ? args->slot : index, denied;
    size_t refused_key = 0;
    const gr_bytes_t *refused_bytes = NULL;
    if (db->current && db->current->repl_master) return 0;   /* the primary's stream is obeyed */
    if (!user && !no_auth) {
        refusal = "NOAUTH Authentication required.";
    } else if (db->current && db->current->in_multi && (flags & GR_CMD_FLAG_NO_MULTI)) {
        refusal = "ERR Command not allowed inside a transaction";
    } else if (!no_auth &&   /* the hot path: one bit (channel commands: allchannels too) */
               !(user->allkeys && gr_acl_allows_slot(user, slot) && (user->allchannels || !channel_kind(index))) &&
               (denied = acl_check(user, index, args, &refused_key, &refused_bytes)) != GR_ACL_ALLOWED) {
        if (denied == GR_ACL_DENIED_COMMAND) {
            const char *name = gr_command_stat_name((size_t)(slot >= 0 ? slot : 0));
            snprintf(text, sizeof text, "NOPERM this user has no permissions to run the '%s' command", name ? name : "");
            refusal = text;
            if (db->script_running) refusal = "ERR The user executing the script can't run this command or subcommand";
            gr_db_acl_log(db, GR_ACL_LOG_COMMAND, (const uint8_t *)(name ? name : ""), name ? strlen(name) : 0, NULL, 0);
        } else if (denied == GR_ACL_DENIED_CHANNEL) {
            refusal = db->script_running   /* a script's redis.call: Redis 7.0's scriptCall words */
                    ? "ERR The user executing the script can't publish to the channel mentioned in the command"
                    : "NOPERM this user has no permissions to access one of the channels used as arguments";
            if (args && args->argc && refused_key < args->argc)
                gr_db_acl_log(db, GR_ACL_LOG_CHANNEL, args->argv[refused_key], args->argv_length[refused_key], NULL, 0);
        } else {
            refusal = db->script_running
                    ? "ERR The user executing the script can't access at least one of the keys mentioned in the command arguments"
                    : "NOPERM this user has no permissions to access one of the keys used as arguments";
            if (args && args->argc && refused_key < args->argc)
                gr_db_acl_log(db, GR_ACL_LOG_KEY, args->argv[refused_key], args->argv_length[refused_key], NULL, 0);
            else if (refused_bytes)
                gr_db_acl_log(db, GR_ACL_LOG_KEY, refused_bytes->data, refused_bytes->length, NULL, 0);
        }
    } else if (db->busy) {   /* a busy script: Redis skips the OOM check; -BUSY comes after admission */
    } else if (db->config.maxmemory > 0 && over_maxmemory_refuses(db, index)) {   /* over: evict by maxmemory-policy first */
        refusal = "OOM command not allowed when used memory > 'maxmemory'.";
        code = GR_ERR_OUT_OF_MEMORY;
    } else if (db->repl.master_port && db->repl.state != GR_REPL_CONNECTED && !db->repl.serve_stale_data &&
               !(flags & GR_CMD_FLAG_STALE)) {
        refusal = "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.";
    } else if (db->repl.master_port && db->repl.read_only && (flags & GR_CMD_FLAG_WRITE)) {
        refusal = "READONLY You can't write against a read only replica.";
    } else if ((flags & GR_CMD_FLAG_WRITE) && gr_repl_min_replicas_refuse(db)) {
        refusal = "NOREPLICAS Not enough good replicas to write.";
    } else if ((refusal = gr_db_disk_error_refusal(db, text, sizeof text)) != NULL) {
        const gr_command_t *row = gr_command_at((size_t)index);   /* writes, and reads whose row says so */
        if (!(flags & GR_CMD_FLAG_WRITE) && !(row && (row->runs & GR_RUNS_NOT_ON_DISK_ERROR))) refusal = NULL;
    }
    if (!refusal) return 0;
    gr_reply_error_text(reply, code, refusal);
    gr_db_reject(db, index, reply);
    return -1;
}

void gr_db_reject(gr_server_t *db, int index, gr_reply_t *reply) {
    gr_command_stat_t *stat = stat_of(db, index);
    if (stat) stat->rejected_calls++;
    count_error(db, reply->last_error_prefix);
}

/* Command timing for commandstats: the TSC where there is one (a fraction of a
 * clock_gettime), scaled by a rate calibrated against CLOCK_MONOTONIC at startup and
 * refined by every cron; elsewhere the monotonic clock itself. */
#if defined(__x86_64__) || defined(__i386__)
static uint64_t cycles(void) { return __builtin_ia32_rdtsc(); }
#else
static uint64_t cycles(void) { return (uint64_t)gr_monotonic_ns(); }
#endif

static void calibrate_cycles(gr_server_t *db) {
    uint64_t c = cycles();
    int64_t t = gr_monotonic_ns();
    if (!db->calibration_ns) {                       /* first call: a 1 ms window */
        db->calibration_cycles = c, db->calibration_ns = t;
        while (gr_monotonic_ns() - t < 1000000) {}
        c = cycles(), t = gr_monotonic_ns();
    }
    if (t > db->calibration_ns)
        db->cycles_per_ns = (double)(c - db->calibration_cycles) / (double)(t - db->calibration_ns);
    gr_slowlog_set_threshold(&db->slowlog, db->slowlog.log_slower_than_us, db->cycles_per_ns);
}

void gr_db_set_slowlog_threshold(gr_server_t *db, int64_t log_slower_than_us) {
    gr_slowlog_set_threshold(&db->slowlog, log_slower_than_us, db->cycles_per_ns);
}

int64_t gr_db_account_start(void) { return (int64_t)cycles(); }

uint64_t gr_db_account(gr_server_t *db, int index, gr_reply_t *reply, uint32_t errors_before, int64_t start) {
    uint64_t elapsed = cycles() - (uint64_t)start;
    db->stats.commands_processed++;
    gr_command_stat_t *stat = stat_of(db, index);
    int failed = reply->errors != errors_before;
    if (failed) count_error(db, reply->last_error_prefix);
    if (!stat) return elapsed;
    stat->calls++;
    stat->cycles += elapsed;
    if (failed) stat->failed_calls++;
    if (db->config.latency_tracking) {
        if (!stat->histogram) stat->histogram = calloc(GR_LATENCY_BUCKETS, sizeof *stat->histogram);
        if (stat->histogram) stat->histogram[gr_latency_bucket(elapsed)]++;
    }
    if (db->config.latency_monitor_threshold_ms > 0 && db->cycles_per_ns > 0) {
        int64_t ms = (int64_t)((double)elapsed / db->cycles_per_ns / 1e6);   /* whole ms, as Redis's duration/1000 */
        if (ms >= db->config.latency_monitor_threshold_ms)
            gr_latency_add_sample(&db->latency, (gr_command_flags(index) & GR_CMD_FLAG_FAST) ? "fast-command" : "command",
                                  gr_unix_ms() / 1000, (uint32_t)ms);
    }
    return elapsed;
}

/* A command took elapsed cycles, at least slowlog-log-slower-than: log it, unless its row says
 * skip_slowlog (EXEC: its commands are logged one by one) or it parked its client (Redis logs
 * a blocked command when it is served; goblin does not log it then). argv NULL: a typed ring
 * request, logged as its row's name and the strings it carries (key, arg1, arg2, items in
 * that order); numbers it carries as typed fields (LRANGE's start and stop, ...) are not shown. */
static void log_if_slow(gr_server_t *db, int index, uint64_t elapsed, size_t argc, const uint8_t *const *argv,
                        const size_t *argv_length, const gr_request_t *request, uint64_t redacted);

void gr_db_log_slow(gr_server_t *db, int index, uint64_t elapsed, size_t argc, const uint8_t *const *argv,
                    const size_t *argv_length, const gr_request_t *request) {
    if (elapsed < db->slowlog.threshold_cycles || (!argc && !request)) return;
    log_if_slow(db, index, elapsed, argc, argc ? argv : NULL, argv_length, request, 0);
}

static void log_if_slow(gr_server_t *db, int index, uint64_t elapsed, size_t argc, const uint8_t *const *argv,
                        const size_t *argv_length, const gr_request_t *request, uint64_t redacted) {
    if (gr_command_flags(index) & GR_CMD_FLAG_SKIP_SLOWLOG) return;
    gr_connection_t *conn = db->current;
    if (conn && conn->blocked) return;
    int64_t duration_us = db->cycles_per_ns > 0 ? (int64_t)((double)elapsed / db->cycles_per_ns / 1000.0) : 0;
    int64_t time_s = gr_unix_ms() / 1000;
    const char *addr = conn ? conn->addr : "", *name = conn ? conn->name : "";
    if (argv) {
        gr_slowlog_push(&db->slowlog, argc, argv, argv_length, redacted, duration_us, time_s, addr, name);
        return;
    }
    const gr_command_t *command = gr_command_at((size_t)index);
    size_t count = 1 + (request->key.data != NULL) + (request->arg1.data != NULL) + (request->arg2.data != NULL) +
                   request->item_count;
    const uint8_t **words = malloc(count * sizeof *words);
    size_t *lengths = malloc(count * sizeof *lengths);
    if (words && lengths && command) {
        size_t n = 0;
        words[n] = (const uint8_t *)command->name, lengths[n++] = strlen(command->name);
        const gr_bytes_t *fields[3] = {&request->key, &request->arg1, &request->arg2};
        for (int i = 0; i < 3; i++)
            if (fields[i]->data) words[n] = fields[i]->data, lengths[n++] = fields[i]->length;
        for (uint32_t i = 0; i < request->item_count; i++)
            words[n] = request->items[i].data, lengths[n++] = request->items[i].length;
        gr_slowlog_push(&db->slowlog, n, words, lengths, redacted, duration_us, time_s, addr, name);
    }
    free(words);
    free(lengths);
}

int64_t gr_db_command_usec(const gr_server_t *db, const gr_command_stat_t *stat) {
    return db->cycles_per_ns > 0 ? (int64_t)((double)stat->cycles / db->cycles_per_ns / 1000.0 + 0.5) : 0;
}

void gr_db_reset_stats(gr_server_t *db) {
    for (int i = 0; i < GR_COMMAND_STAT_SLOTS; i++) free(db->command_stats[i].histogram);
    memset(db->command_stats, 0, sizeof db->command_stats);
    memset(db->error_stats, 0, sizeof db->error_stats);
    db->total_error_replies = 0;
    db->stats.commands_processed = 0;
    db->stats.keyspace_hits = db->stats.keyspace_misses = 0;
    db->stats.expired_keys = 0;
    db->stats.evicted_keys = db->stats.evicted_clients = 0;   /* Redis's resetServerStats */
    db->stats.eviction_exceeded_total_us = 0;
    db->stats.rejected_connections = 0;
    db->stats.connections_received = 0;
    db->stats.net_input_bytes = db->stats.net_output_bytes = 0;
    db->stats.ring_malformed = 0;
    db->stats.ring_invalidation_epochs = 0;
    db->stats.ops_sample_commands = 0;
}

/* Redis's subscribed mode: a RESP2 connection with any subscription may run only
 * (P|S)SUBSCRIBE, (P|S)UNSUBSCRIBE, PING, QUIT and RESET. RESP3 has no such limit, and neither
 * has a ring session (its messages are typed pushes beside its replies). 0 to go on, else the
 * refusal is written and counted. fullname names a subcommand as Redis does ("client|list"). */
static int refused_in_subscribed_mode(gr_server_t *db, int index, size_t argc, const uint8_t *const *argv,
                                      const size_t *argv_length, gr_reply_t *reply) {
    gr_connection_t *conn = db->current;
    if (!conn || conn->protocol != 2 || conn->kind == GR_CONN_RING || !gr_subscriber_total(&conn->subscriber))
        return 0;
    const gr_command_t *command = gr_command_at((size_t)index);
    if (!command || (command->runs & GR_RUNS_WHEN_SUBSCRIBED)) return 0;
    char fullname[160];
    snprintf(fullname, sizeof fullname, "%s", command->name);
    if (argc >= 2 && argv_length[1] < 64) {     /* a container's subcommand: "name|sub" when that row exists */
        char candidate[160];
        int n = snprintf(candidate, sizeof candidate, "%s|", command->name);
        for (size_t i = 0; i < argv_length[1] && n + 1 < (int)sizeof candidate; i++)
            candidate[n++] = (char)((argv[1][i] >= 'A' && argv[1][i] <= 'Z') ? argv[1][i] + 32 : argv[1][i]);
        candidate[n] = '\0';
        size_t prefix = strlen(command->name) + 1;
        int container = 0, found = 0;
        for (size_t i = 0; gr_subcommand_at(i) && !found; i++) {
            const char *row = gr_subcommand_at(i)->name;
            if (strncmp(row, candidate, prefix) != 0) continue;
            container = 1;
            if (!strcmp(row, candidate)) { snprintf(fullname, sizeof fullname, "%s", candidate); found = 1; }
        }
        if (container && !found) return 0;   /* an unknown subcommand: its own error comes first, as Redis */
    }
    char text[320];
    int n = snprintf(text, sizeof text,
                     "ERR Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are "
                     "allowed in this context", fullname);
    gr_reply_error(reply, GR_ERR_GENERIC, text, (size_t)n < sizeof text ? (size_t)n : sizeof text - 1);
    gr_db_reject(db, index, reply);
    return -1;
}

const char *gr_db_busy_text(const gr_server_t *db) {
    return db->busy == GR_BUSY_FUNCTION
               ? "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
               : "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
}

/* Redis's processCommand while a script is busy (db->busy): only commands flagged allow_busy
 * (the subcommand's row for a container: SCRIPT KILL, FUNCTION KILL/STATS) run; every other
 * gets -BUSY. 0 to go on, else the refusal is written and counted. */
int gr_db_refuse_busy(gr_server_t *db, int index, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                      gr_reply_t *reply) {
    if (!db->busy) return 0;
    uint32_t flags = argc ? gr_command_call_flags(index, argc, argv, argv_length) : gr_command_flags(index);
    if (flags & GR_CMD_FLAG_ALLOW_BUSY) return 0;
    const gr_command_t *row = gr_command_at((size_t)index);
    if (row && row->argv_handler == gr_transaction_exec && db->current && db->current->in_multi) {
        /* EXEC refused: the transaction is discarded, as Redis's execCommandAbort */
        char text[200];
        snprintf(text, sizeof text, "EXECABORT Transaction discarded because of: %s", gr_db_busy_text(db));
        gr_reply_error_text(reply, GR_ERR_GENERIC, text);
        gr_db_reject(db, index, reply);
        gr_transaction_forget(db, db->current);
        return -1;
    }
    gr_reply_error_text(reply, GR_ERR_GENERIC, gr_db_busy_text(db));
    gr_db_reject(db, index, reply);
    return -1;
}

/* ---- a command's call (exec/call.h) ---- */

void gr_call_begin(gr_server_t *db, gr_call_t *call, const gr_command_t *row, int index, const gr_request_t *request,
                   size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    call->outer = db->call;
    call->conn = db->current;
    call->row = row;
    call->index = index;
    call->request = request;
    call->argc = argc;
    call->argv = argv;
    call->argv_length = argv_length;
    call->reply = reply;
    call->db_index = db->current ? db->current->db_index : 0;
    call->dirty_before = db->dirty;
    call->errors_before = reply->errors;
    call->start = gr_db_account_start();
    /* a top-level command propagates; inside one, only the commands of a call that frames its
     * inner calls' effects (EXEC, a script: MULTI ... EXEC) do */
    call->propagates = !call->outer || (call->outer->propagates && call->outer->frames_inner);
    call->effect_stated = call->events_stated = call->effect_forced = call->frames_inner = 0;
    call->records_start = db->notify_records_length;
    call->redacted = 0;
    db->call = call;
}

void gr_call_redact_argument(gr_server_t *db, size_t j) {
    if (db->call && j < 64) db->call->redacted |= (uint64_t)1 << j;
}

void gr_call_end(gr_server_t *db, gr_call_t *call) {
    if (db->notify_records_length > call->records_start) gr_notify_call_end(db, call);
    gr_propagate_call_end(db);
    db->call = call->outer;
}

/* The handler has run: events, effect, then commandstats and the slow log. */
static void finish(gr_server_t *db, gr_call_t *call) {
    if (call->conn && call->conn->tracking) gr_tracking_remember_call(db, call);   /* CLIENT TRACKING: its read keys */
    gr_call_end(db, call);
    /* counted under the subcommand's full name when it is one ("client|list"), as Redis */
    int slot = call->argc ? gr_command_stat_slot(call->index, call->argc, call->argv, call->argv_length) : call->index;
    uint64_t elapsed = gr_db_account(db, slot, call->reply, call->errors_before, call->start);
    if (db->monitor_count && !(gr_command_flags(slot) & (GR_CMD_FLAG_ADMIN | GR_CMD_FLAG_SKIP_MONITOR)))
        gr_monitor_feed(db, call);
    if (elapsed >= db->slowlog.threshold_cycles)
        log_if_slow(db, call->index, elapsed, call->argc, call->argc ? call->argv : NULL, call->argv_length,
                    call->request, call->redacted);
}

/* A typed request from the ring: admitted, executed, counted under its Redis command. */
void gr_db_run(gr_server_t *db, const gr_request_t *request, gr_reply_t *reply) {
    if (request->template_id == GR_T_COMMAND) {   /* accounted by the argv path inside */
        execute_command_envelope(db, request, reply);
        return;
    }
    int index = gr_command_index_of_request(request);
    const gr_command_t *command = gr_command_at((size_t)index);
    if (!command) {
        gr_reply_error_text(reply, GR_ERR_UNKNOWN_TEMPLATE, "ERR unknown template id");
        gr_db_reject(db, -1, reply);
        return;
    }
    if (db->current) db->current->last_command = command->name;
    gr_admit_args_t admit = {index, 0, NULL, NULL, request};
    if (gr_db_admit(db, index, &admit, 0, reply) != 0) return;
    if (db->busy && gr_db_refuse_busy(db, index, 0, NULL, NULL, reply) != 0) return;
    gr_call_t call;
    gr_call_begin(db, &call, command, index, request, 0, NULL, NULL, reply);
    command->handler(db, request, reply);
    finish(db, &call);
}

/* The argv path (RESP, the ring's CommandRequest): unknown commands and wrong arities are
 * refused before admission, as Redis refuses them; argument errors count as the command's
 * failed calls. */
void gr_db_run_argv(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                    gr_reply_t *reply) {
    if (argc == 0) return;
    gr_build_error_t error;
    int index = gr_command_lookup(argc, argv, argv_length, &error);
    if (index < 0) {
        gr_reply_build_error(reply, &error);
        gr_db_reject(db, error.code == GR_ERR_WRONG_ARITY ? gr_command_index(argv[0], argv_length[0]) : -1, reply);
        return;
    }
    const gr_command_t *command = gr_command_at((size_t)index);
    int slot = gr_command_stat_slot(index, argc, argv, argv_length);
    if (db->current)   /* a subcommand by its full name ("client|info"), as CLIENT LIST shows it */
        db->current->last_command = gr_command_stat_name((size_t)slot);
    gr_admit_args_t admit = {slot, argc, argv, argv_length, NULL};
    if (gr_db_admit(db, index, &admit, (gr_command_flags(index) & GR_CMD_FLAG_NO_AUTH) != 0, reply) != 0) return;
    if (refused_in_subscribed_mode(db, index, argc, argv, argv_length, reply) != 0) return;
    if (db->busy && gr_db_refuse_busy(db, index, argc, argv, argv_length, reply) != 0) return;
    gr_request_t *request = &db->scratch_request;
    request->template_id = GR_T_COMMAND;
    gr_call_t call;
    gr_call_begin(db, &call, command, index, NULL, argc, argv, argv_length, reply);
    if (argc > UINT32_MAX || gr_db_reserve_items(db, argc) != 0) {
        gr_reply_oom(reply);
    } else if (gr_command_build(index, argc, argv, argv_length, request, db->scratch_items, db->scratch_capacity,
                                &error) < 0) {
        gr_reply_build_error(reply, &error);
    } else if (request->template_id == GR_T_COMMAND) {
        command->argv_handler(db, argc, argv, argv_length, reply);
    } else {
        call.request = request;
        command->handler(db, request, reply);
    }
    finish(db, &call);
}

/* ---- replication (exec/replication.h) ---- */

void gr_repl_init(gr_server_t *db) {
    gr_replication_t *r = &db->repl;
    r->read_only = 1;
    r->serve_stale_data = 1;
    r->second_offset = -1;
    r->priority = 100;
    r->announced = 1;
    memset(r->replid, '0', 40);
    memset(r->replid2, '0', 40);
    r->replid[40] = r->replid2[40] = '\0';
}

void gr_repl_new_replid(gr_server_t *db) {
    static const char hex[] = "0123456789abcdef";
    uint64_t x = (uint64_t)gr_monotonic_ns() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)db;
    for (int i = 0; i < 40; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        db->repl.replid[i] = hex[x & 15];
    }
    db->repl.replid[40] = '\0';
}

int gr_repl_new_keyspaces(gr_server_t *db, gr_keyspace_t **out) {
    uint64_t seed = (uint64_t)gr_monotonic_ns() ^ ((uint64_t)(uintptr_t)db << 7) ^ 0x9e3779b97f4a7c15ULL;
    const uint64_t stamp = gr_evict_stamp(gr_unix_ms());
    for (int i = 0; i < GR_DB_COUNT; i++) {
        seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17;
        out[i] = gr_ks_new(gr_free_value, db, seed);   /* no observers while it is built aside */
        if (!out[i]) {
            while (i-- > 0) gr_ks_free(out[i]);
            return -1;
        }
        gr_ks_set_keep_bits(out[i], GR_ACCESS_LFU_BITS);
        gr_ks_set_clock(out[i], stamp);
    }
    return 0;
}

size_t gr_repl_keyspaces_size(gr_keyspace_t *const *keyspaces) {
    size_t keys = 0;
    for (int i = 0; i < GR_DB_COUNT; i++) keys += gr_ks_size(keyspaces[i]);
    return keys;
}

void gr_repl_free_keyspaces(gr_keyspace_t **keyspaces) {
    for (int i = 0; i < GR_DB_COUNT; i++) {
        gr_ks_free(keyspaces[i]);
        keyspaces[i] = NULL;
    }
}

void gr_repl_swap_data(gr_server_t *db, gr_keyspace_t **fresh) {
    gr_tracking_invalidate_all(db);   /* client-side caches forget everything, as on a flush */
    for (int i = 0; i < GR_DB_COUNT; i++) {
        gr_watch_touch_db(db, i, -1);          /* WATCHed keys of the old data */
        gr_keyspace_t *old = db->keyspaces[i];
        db->keyspaces[i] = fresh[i];
        fresh[i] = old;
        gr_ks_set_add_observer(old, NULL);
        gr_ks_set_delete_observer(old, NULL);
        gr_ks_set_delete_observer(db->keyspaces[i], signal_deleted_key);
        gr_ks_set_clock(db->keyspaces[i], db->access_stamp);
        db->expire_cursor[i] = db->part_expire_cursor[i] = 0;
        gr_watch_touch_db(db, i, -1);          /* and of the new */
    }
    gr_db_set_notify_flags(db, db->notify_flags);   /* the "new" key observer on the new keyspaces */
    db->keyspace = db->keyspaces[db->current ? db->current->db_index : 0];
    for (int i = 0; i < GR_DB_COUNT; i++) {
        gr_blocking_signal_db_gone(db, i);
        gr_blocking_signal_db(db, i);
    }
}

void gr_repl_empty_data(gr_server_t *db) {
    for (int i = 0; i < GR_DB_COUNT; i++) {
        gr_watch_touch_db(db, i, -1);          /* WATCHed keys that exist are touched */
        gr_ks_clear(db->keyspaces[i]);
        gr_blocking_signal_db_gone(db, i);
    }
}
