/* cmd_server.c — server commands: PING (typed), and as argv ECHO, INFO, TIME, LASTSAVE,
 * MEMORY, GOBLIN.MEMORY, QUIT, and the ring's refusals of MULTI/EXEC/WATCH. Their
 * rows are in server.def and goblin.def; the connection commands are cmd_connection.c,
 * CONFIG cmd_config.c, COMMAND command_docs.c, OBJECT cmd_keys.c.
 *
 * The argv ones arrive over RESP, or over the ring inside a CommandRequest. INFO's sections and fields follow Redis's names so that redis-py,
 * redis-cli and exporters read them unchanged; used_memory is the counting allocator's
 * total (alloc.c).
 */
#include <ctype.h>
#include <stdarg.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "core/alloc.h"
#include "commands/commands.h"
#include "script/function.h"
#include "script/script.h"
#include "engines/array/array_rt.h"
#include "exec/db.h"
#include "exec/tracking.h"
#include "exec/server_text.h"
#include "persist/aof.h"
#include "exec/transaction.h"

static int64_t rss_bytes(void) {
    FILE *statm = fopen("/proc/self/statm", "r");
    if (!statm) return 0;
    long pages_total = 0, pages_resident = 0;
    int read = fscanf(statm, "%ld %ld", &pages_total, &pages_resident);
    fclose(statm);
    return read == 2 ? (int64_t)pages_resident * sysconf(_SC_PAGESIZE) : 0;
}

static void human_bytes(int64_t bytes, char *out, size_t size) {
    const char *units[] = {"B", "K", "M", "G", "T"};
    double value = (double)bytes;
    int unit = 0;
    while (value >= 1024 && unit < 4) { value /= 1024; unit++; }
    snprintf(out, size, unit ? "%.2f%s" : "%.0f%s", value, units[unit]);
}

/* ---- INFO ---- */

/* Which sections a request asked for: none = default; "all", "everything", "default", or names. */
typedef struct section_request {
    size_t count;
    const uint8_t *const *names;
    const size_t *lengths;
} section_request_t;

enum { IN_DEFAULT = 1, IN_ALL = 2 };   /* commandstats is in "all" but not in "default" */

static int section_wanted(const section_request_t *asked, const char *section, int membership) {
    if (asked->count == 0) return membership & IN_DEFAULT;
    for (size_t i = 0; i < asked->count; i++) {
        const uint8_t *name = asked->names[i];
        size_t length = asked->lengths[i];
        if (gr_word_is(name, length, "all") || gr_word_is(name, length, "everything")) return 1;
        if (gr_word_is(name, length, "default") && (membership & IN_DEFAULT)) return 1;
        if (gr_word_is(name, length, section)) return 1;
    }
    return 0;
}

static void info_server(gr_server_t *db, gr_text_t *text) {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    int64_t now_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
    int64_t uptime = (now_ms - db->stats.start_time_ms) / 1000;
    struct utsname host;
    if (uname(&host) != 0) memset(&host, 0, sizeof host);
    gr_text_append(text,
        "redis_version:%s\r\ngoblin_version:%s\r\nredis_git_sha1:00000000\r\nredis_git_dirty:0\r\n"
        "redis_build_id:0\r\nredis_mode:standalone\r\nos:%s %s %s\r\narch_bits:%d\r\n"
        "monotonic_clock:POSIX clock_gettime\r\nmultiplexing_api:epoll\r\natomicvar_api:c11-builtin\r\n"
        "gcc_version:%d.%d.%d\r\nprocess_id:%lld\r\nprocess_supervised:no\r\nrun_id:%s\r\ntcp_port:%lld\r\n"
        "server_time_usec:%lld\r\nuptime_in_seconds:%lld\r\nuptime_in_days:%lld\r\nhz:10\r\nconfigured_hz:10\r\n"
        "lru_clock:%lld\r\nexecutable:%s\r\nconfig_file:%s\r\nio_threads_active:0\r\n"
        "goblin_name:%s\r\ngoblin_poll_mode:%s\r\ngoblin_list_implementation:%s\r\ngoblin_ring_capacity:%lld\r\n",
        GR_REDIS_COMPATIBLE_VERSION, db->info.version, host.sysname, host.release, host.machine,
        (int)(sizeof(void *) * 8),
#ifdef __GNUC__
        __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__,
#else
        0, 0, 0,
#endif
        (long long)db->info.process_id, db->info.run_id, (long long)db->info.tcp_port,
        (long long)now.tv_sec * 1000000 + now.tv_nsec / 1000, (long long)uptime, (long long)uptime / 86400,
        (long long)(now.tv_sec & ((1 << 24) - 1)), db->info.executable, db->info.config_file,
        db->info.name, db->info.mode, db->info.list_implementation, (long long)db->info.ring_capacity);
}

static void info_clients(gr_server_t *db, gr_text_t *text) {
    gr_tracking_stats_t tracking;
    gr_tracking_get_stats(db, &tracking);
    gr_text_append(text,
        "connected_clients:%lld\r\ncluster_connections:0\r\nmaxclients:%lld\r\n"
        "client_recent_max_input_buffer:0\r\nclient_recent_max_output_buffer:0\r\nblocked_clients:%lld\r\n"
        "tracking_clients:%lld\r\nclients_in_timeout_table:0\r\ngoblin_ring_sessions:%lld\r\n",
        (long long)(db->stats.connected_resp_clients + db->stats.connected_ring_sessions),
        (long long)db->config.maxclients, (long long)db->blocked_count, (long long)tracking.clients,
        (long long)db->stats.connected_ring_sessions);
}

static void info_memory(gr_server_t *db, gr_text_t *text) {
    char used_human[32], rss_human[32], peak_human[32], system_human[32], max_human[32];
    int64_t used = gr_mem_used_total(), rss = rss_bytes();
    if (used > db->stats.peak_memory) db->stats.peak_memory = used;
    int64_t system = (int64_t)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE);
    int64_t dataset = gr_mem_used_by(GR_MEM_KEYSPACE);   /* the keys, and every type's values */
    for (size_t i = 0; gr_value_type_at(i); i++) dataset += gr_mem_used_by(gr_value_type_at(i)->memory);
    human_bytes(used, used_human, sizeof used_human);
    human_bytes(rss, rss_human, sizeof rss_human);
    human_bytes(db->stats.peak_memory, peak_human, sizeof peak_human);
    human_bytes(system, system_human, sizeof system_human);
    human_bytes(db->config.maxmemory, max_human, sizeof max_human);
    /* scripting (script/): EVAL's Lua state in bytes (Redis 7.0's eval VM), the functions' state
     * (its functions VM), the cached scripts' bodies with their SHA1s and the libraries' code */
    char lua_human[32], scripts_human[32], vm_total_human[32];
    int64_t lua = gr_script_memory(db), scripts = gr_script_cache_bytes(db);
    int64_t functions_vm = gr_function_vm_bytes(db), functions_code = gr_function_code_bytes(db);
    human_bytes(lua, lua_human, sizeof lua_human);
    human_bytes(scripts + functions_code, scripts_human, sizeof scripts_human);
    human_bytes(lua + functions_vm, vm_total_human, sizeof vm_total_human);
    gr_text_append(text,
        "used_memory:%lld\r\nused_memory_human:%s\r\nused_memory_rss:%lld\r\nused_memory_rss_human:%s\r\n"
        "used_memory_peak:%lld\r\nused_memory_peak_human:%s\r\nused_memory_peak_perc:%.2f%%\r\n"
        "used_memory_overhead:%lld\r\nused_memory_dataset:%lld\r\n"
        "total_system_memory:%lld\r\ntotal_system_memory_human:%s\r\n"
        "used_memory_lua:%lld\r\nused_memory_vm_eval:%lld\r\nused_memory_lua_human:%s\r\n"
        "used_memory_scripts_eval:%lld\r\nnumber_of_cached_scripts:%lld\r\nnumber_of_functions:%lld\r\n"
        "number_of_libraries:%lld\r\nused_memory_vm_functions:%lld\r\nused_memory_vm_total:%lld\r\n"
        "used_memory_vm_total_human:%s\r\nused_memory_functions:%lld\r\nused_memory_scripts:%lld\r\n"
        "used_memory_scripts_human:%s\r\n"
        "maxmemory:%lld\r\nmaxmemory_human:%s\r\nmaxmemory_policy:%s\r\n"
        "mem_fragmentation_ratio:%.2f\r\nmem_allocator:libc\r\nmem_not_counted_for_evict:0\r\n"
        "lazyfree_pending_objects:0\r\n"
        "goblin_memory_keyspace:%lld\r\n",
        (long long)used, used_human, (long long)rss, rss_human, (long long)db->stats.peak_memory, peak_human,
        db->stats.peak_memory ? 100.0 * (double)used / (double)db->stats.peak_memory : 100.0,
        (long long)(used - dataset), (long long)dataset, (long long)system, system_human,
        (long long)lua, (long long)lua, lua_human, (long long)scripts, (long long)gr_script_cached_count(db),
        (long long)gr_function_count(db), (long long)gr_function_library_count(db), (long long)functions_vm,
        (long long)(lua + functions_vm), vm_total_human, (long long)functions_code, (long long)(scripts + functions_code),
        scripts_human,
        (long long)db->config.maxmemory, max_human, gr_evict_policy_name(db->config.maxmemory_policy),
        used ? (double)rss / (double)used : 0.0,
        (long long)gr_mem_used_by(GR_MEM_KEYSPACE));
    for (size_t i = 0; gr_value_type_at(i); i++)   /* one line per value type (the registry's rows) */
        gr_text_append(text, "goblin_memory_%s:%lld\r\n", gr_value_type_at(i)->name,
                       (long long)gr_mem_used_by(gr_value_type_at(i)->memory));
    gr_text_append(text, "goblin_memory_session:%lld\r\n", (long long)gr_mem_used_by(GR_MEM_SESSION));
    /* RT arrays (engines/array/array_rt.h): reservations, what their values use, what is locked */
    gr_text_append(text, "array_rt_reserved_bytes:%llu\r\narray_rt_reserved_used_bytes:%llu\r\n"
                   "array_rt_locked_bytes:%llu\r\nmlock_all:%s\r\nvmlck_bytes:%lld\r\n",
                   (unsigned long long)gr_art_total_reserved_bytes(),
                   (unsigned long long)gr_art_total_reserved_used_bytes(),
                   (unsigned long long)gr_art_total_locked_bytes(), db->info.mlock_all ? "yes" : "no",
                   (long long)gr_art_process_locked_bytes());
}

/* Redis's persistence fields. The rdb_* ones are the snapshots' (persist/persistence.c and
 * db->persistence, db->child); the aof_* ones the append-only file's (persist/aof.c,
 * gr_aof_info). rdb_changes_since_last_save is the dirty counter (db.h's gr_db_count_changes). */
static void info_persistence(gr_server_t *db, gr_text_t *text) {
    const gr_persistence_t *p = &db->persistence;
    /* a replication sync's child writes an RDB too: Redis counts it here (CHILD_TYPE_RDB) */
    const gr_child_kind_t child = gr_child_running(db);
    const int bgsave = child == GR_CHILD_SNAPSHOT || child == GR_CHILD_REPL_SYNC;
    const int64_t now_s = db->now_ms / 1000;
    const int64_t started_s = child == GR_CHILD_SNAPSHOT ? p->bgsave_started_s : db->child.started_ms / 1000;
    gr_text_append(text,
        "loading:0\r\nasync_loading:%d\r\ncurrent_cow_peak:0\r\ncurrent_cow_size:0\r\ncurrent_cow_size_age:0\r\n"
        "current_fork_perc:0.00\r\ncurrent_save_keys_processed:0\r\ncurrent_save_keys_total:0\r\n"
        "rdb_changes_since_last_save:%lld\r\nrdb_bgsave_in_progress:%d\r\nrdb_last_save_time:%lld\r\n"
        "rdb_last_bgsave_status:%s\r\nrdb_last_bgsave_time_sec:%lld\r\nrdb_current_bgsave_time_sec:%lld\r\n"
        "rdb_saves:%lld\r\nrdb_last_cow_size:0\r\nrdb_last_load_keys_expired:%lld\r\nrdb_last_load_keys_loaded:%lld\r\n",
        db->repl.loading_aside, (long long)db->dirty, bgsave, (long long)p->lastsave_s, p->last_bgsave_ok ? "ok" : "err",
        (long long)p->last_bgsave_seconds, (long long)(bgsave ? now_s - started_s : -1),
        (long long)p->saves, (long long)p->last_load_keys_expired, (long long)p->last_load_keys_loaded);
    gr_aof_info(db, text);   /* the aof_* fields (persist/aof.c) */
    gr_text_append(text,
        "module_fork_in_progress:0\r\nmodule_fork_last_cow_size:0\r\n"
        "goblin_snapshot_file_bytes:%lld\r\ngoblin_snapshot_load_seconds:%.6f\r\n",
        (long long)p->last_file_bytes, (double)p->loading_seconds_us / 1e6);
}

static void info_stats(gr_server_t *db, gr_text_t *text) {
    /* Redis's eviction times, in ms: how long used memory has been over maxmemory with eviction */
    int64_t current_exceeded_us = 0;
    if (db->stats.eviction_exceeded_start_us) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        current_exceeded_us = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000 - db->stats.eviction_exceeded_start_us;
    }
    gr_tracking_stats_t tracking;
    gr_tracking_get_stats(db, &tracking);
    gr_text_append(text,
        "total_connections_received:%lld\r\ntotal_commands_processed:%lld\r\ninstantaneous_ops_per_sec:%lld\r\n"
        "total_net_input_bytes:%lld\r\ntotal_net_output_bytes:%lld\r\nrejected_connections:%lld\r\n"
        "sync_full:%lld\r\nsync_partial_ok:%lld\r\nsync_partial_err:%lld\r\n"
        "expired_keys:%lld\r\nevicted_keys:%lld\r\nevicted_clients:%lld\r\ntotal_eviction_exceeded_time:%lld\r\n"
        "current_eviction_exceeded_time:%lld\r\nkeyspace_hits:%lld\r\nkeyspace_misses:%lld\r\n"
        "pubsub_channels:%lld\r\npubsub_patterns:%lld\r\npubsubshard_channels:%lld\r\n"
        "tracking_total_keys:%lld\r\ntracking_total_items:%lld\r\ntracking_total_prefixes:%lld\r\n"
        "total_error_replies:%lld\r\n"
        "goblin_ring_messages:%lld\r\ngoblin_ring_malformed:%lld\r\ngoblin_ring_invalidation_epochs:%lld\r\n",
        (long long)db->stats.connections_received, (long long)db->stats.commands_processed,
        (long long)db->stats.ops_per_sec, (long long)db->stats.net_input_bytes,
        (long long)db->stats.net_output_bytes, (long long)db->stats.rejected_connections,
        (long long)db->repl_primary.sync_full, (long long)db->repl_primary.sync_partial_ok,
        (long long)db->repl_primary.sync_partial_err,
        (long long)db->stats.expired_keys, (long long)db->stats.evicted_keys, (long long)db->stats.evicted_clients,
        (long long)((db->stats.eviction_exceeded_total_us + current_exceeded_us) / 1000),
        (long long)(current_exceeded_us / 1000), (long long)db->stats.keyspace_hits,
        (long long)db->stats.keyspace_misses, (long long)gr_pubsub_name_count(db->pubsub, GR_PUBSUB_CHANNELS),
        (long long)gr_pubsub_name_count(db->pubsub, GR_PUBSUB_PATTERNS),
        (long long)gr_pubsub_name_count(db->pubsub, GR_PUBSUB_SHARD_CHANNELS), (long long)tracking.keys,
        (long long)tracking.items, (long long)tracking.prefixes, (long long)db->total_error_replies,
        (long long)db->stats.ring_messages, (long long)db->stats.ring_malformed,
        (long long)db->stats.ring_invalidation_epochs);
}

static void info_replication(gr_server_t *db, gr_text_t *text) { gr_repl_info(db, text); }

static double seconds_of(struct timeval tv) { return (double)tv.tv_sec + (double)tv.tv_usec / 1e6; }

static void info_cpu(gr_text_t *text) {
    struct rusage self, children;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &children);
    gr_text_append(text, "used_cpu_sys:%.6f\r\nused_cpu_user:%.6f\r\nused_cpu_sys_children:%.6f\r\n"
                         "used_cpu_user_children:%.6f\r\n",
                   seconds_of(self.ru_stime), seconds_of(self.ru_utime), seconds_of(children.ru_stime),
                   seconds_of(children.ru_utime));
}

static void info_commandstats(gr_server_t *db, gr_text_t *text) {
    for (size_t i = 0; gr_command_stat_name(i) && i < GR_COMMAND_STAT_SLOTS; i++) {
        const gr_command_stat_t *stat = &db->command_stats[i];
        if (!stat->calls && !stat->rejected_calls) continue;
        int64_t usec = gr_db_command_usec(db, stat);
        gr_text_append(text, "cmdstat_%s:calls=%lld,usec=%lld,usec_per_call=%.2f,rejected_calls=%lld,failed_calls=%lld\r\n",
                       gr_command_stat_name(i), (long long)stat->calls, (long long)usec,
                       stat->calls ? (double)usec / (double)stat->calls : 0.0,
                       (long long)stat->rejected_calls, (long long)stat->failed_calls);
    }
}

/* INFO latencystats: each command's latency-tracking-info-percentiles, in microseconds. */
static void info_latencystats(gr_server_t *db, gr_text_t *text) {
    if (!db->config.latency_tracking || db->cycles_per_ns <= 0) return;
    for (size_t i = 0; gr_command_stat_name(i) && i < GR_COMMAND_STAT_SLOTS; i++) {
        const gr_command_stat_t *stat = &db->command_stats[i];
        if (!stat->histogram || !stat->calls) continue;
        uint64_t total = 0;
        for (unsigned b = 0; b < GR_LATENCY_BUCKETS; b++) total += stat->histogram[b];
        if (!total) continue;
        gr_text_append(text, "latency_percentiles_usec_%s:", gr_command_stat_name(i));
        for (int p = 0; p < db->config.latency_percentile_count; p++) {
            double cycles = (double)gr_latency_percentile(stat->histogram, total, db->config.latency_percentiles[p]);
            gr_text_append(text, "%sp%g=%.3f", p ? "," : "", db->config.latency_percentiles[p],
                           cycles / db->cycles_per_ns / 1000.0);
        }
        gr_text_append(text, "\r\n");
    }
}

static void info_errorstats(gr_server_t *db, gr_text_t *text) {
    for (int i = 0; i < GR_ERROR_STAT_SLOTS && db->error_stats[i].prefix[0]; i++)
        gr_text_append(text, "errorstat_%s:count=%lld\r\n", db->error_stats[i].prefix,
                       (long long)db->error_stats[i].count);
}

static void info_keyspace(gr_server_t *db, gr_text_t *text) {
    for (int i = 0; i < GR_DB_COUNT; i++) {
        size_t keys = gr_ks_size(db->keyspaces[i]);
        if (keys)
            gr_text_append(text, "db%d:keys=%zu,expires=%zu,avg_ttl=0\r\n", i, keys,
                           gr_ks_expires_count(db->keyspaces[i]));
    }
}

void gr_cmd_info(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    gr_text_t text;
    if (gr_text_init(&text, 4096) != 0) { gr_reply_oom(reply); return; }
    section_request_t asked = {argc - 1, argv + 1, argv_length + 1};
    int first = 1;
#define SECTION(name, membership)                                                            \
    if (section_wanted(&asked, name, membership) &&                                          \
        (gr_text_append(&text, "%s# %s\r\n", first ? "" : "\r\n", name), first = 0, 1))
    SECTION("Server", IN_DEFAULT) info_server(db, &text);
    SECTION("Clients", IN_DEFAULT) info_clients(db, &text);
    SECTION("Memory", IN_DEFAULT) info_memory(db, &text);
    SECTION("Persistence", IN_DEFAULT) info_persistence(db, &text);
    SECTION("Stats", IN_DEFAULT) info_stats(db, &text);
    SECTION("Replication", IN_DEFAULT) info_replication(db, &text);
    SECTION("CPU", IN_DEFAULT) info_cpu(&text);
    SECTION("Modules", IN_DEFAULT) {}
    SECTION("Commandstats", IN_ALL) info_commandstats(db, &text);
    SECTION("Errorstats", IN_DEFAULT) info_errorstats(db, &text);
    SECTION("Latencystats", IN_ALL) info_latencystats(db, &text);
    SECTION("Cluster", IN_DEFAULT) gr_text_append(&text, "cluster_enabled:0\r\n");
    SECTION("Keyspace", IN_DEFAULT) info_keyspace(db, &text);
#undef SECTION
    if (text.failed) gr_reply_oom(reply);
    else gr_reply_verbatim(reply, (const uint8_t *)text.data, text.length);
    gr_text_free(&text);
}

/* ---- MEMORY, GOBLIN.MEMORY ---- */

/* GOBLIN.MEMORY: total, allocations, keyspace, one row per value type (the registry's, in
 * id order: string, list, ...), session, other. */
void gr_cmd_goblin_memory(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                          gr_reply_t *reply) {
    (void)db, (void)argc, (void)argv, (void)argv_length;
    size_t types = 0;
    while (gr_value_type_at(types)) types++;
    gr_reply_map_begin(reply, 5 + types);
    gr_reply_bulk(reply, (const uint8_t *)"total", 5);
    gr_reply_integer(reply, gr_mem_used_total());
    gr_reply_bulk(reply, (const uint8_t *)"allocations", 11);
    gr_reply_integer(reply, gr_mem_allocations());
    gr_reply_bulk(reply, (const uint8_t *)"keyspace", 8);
    gr_reply_integer(reply, gr_mem_used_by(GR_MEM_KEYSPACE));
    for (size_t i = 0; i < types; i++) {
        const gr_value_type_t *row = gr_value_type_at(i);
        gr_reply_bulk(reply, (const uint8_t *)row->name, strlen(row->name));
        gr_reply_integer(reply, gr_mem_used_by(row->memory));
    }
    gr_reply_bulk(reply, (const uint8_t *)"session", 7);
    gr_reply_integer(reply, gr_mem_used_by(GR_MEM_SESSION));
    gr_reply_bulk(reply, (const uint8_t *)"other", 5);
    gr_reply_integer(reply, gr_mem_used_by(GR_MEM_OTHER));
}

/* MEMORY STATS: Redis 7.0's fields in its order, from goblin's own accounting (the allocator's
 * per-category counts, /proc's RSS). goblin uses libc malloc, so the allocator.* fields are
 * the counted bytes and the RSS. */
static void memory_stats(gr_server_t *db, gr_reply_t *reply) {
    int64_t used = gr_mem_used_total(), rss = rss_bytes();
    if (used > db->stats.peak_memory) db->stats.peak_memory = used;
    int64_t dataset = gr_mem_used_by(GR_MEM_KEYSPACE);
    for (size_t i = 0; gr_value_type_at(i); i++) dataset += gr_mem_used_by(gr_value_type_at(i)->memory);
    int64_t clients = gr_mem_used_by(GR_MEM_SESSION);
    size_t keys = 0, databases = 0;
    for (int i = 0; i < GR_DB_COUNT; i++) {
        size_t n = gr_ks_size(db->keyspaces[i]);
        keys += n;
        databases += n > 0;
    }
    int64_t overhead = used - dataset;
    gr_reply_map_begin(reply, 27 + databases);
#define STAT_INT(name, value) do { gr_reply_bulk(reply, (const uint8_t *)name, strlen(name)); gr_reply_integer(reply, (int64_t)(value)); } while (0)
#define STAT_DOUBLE(name, value) do { gr_reply_bulk(reply, (const uint8_t *)name, strlen(name)); gr_reply_double(reply, (double)(value)); } while (0)
    STAT_INT("peak.allocated", db->stats.peak_memory);
    STAT_INT("total.allocated", used);
    STAT_INT("startup.allocated", 0);
    STAT_INT("replication.backlog", 0);
    STAT_INT("clients.slaves", 0);
    STAT_INT("clients.normal", clients);
    STAT_INT("cluster.links", 0);
    STAT_INT("aof.buffer", db->propagation.capacity);
    STAT_INT("lua.caches", 0);
    STAT_INT("functions.caches", 0);
    for (int i = 0; i < GR_DB_COUNT; i++) {
        if (!gr_ks_size(db->keyspaces[i])) continue;
        char name[16];
        snprintf(name, sizeof name, "db.%d", i);
        gr_reply_bulk(reply, (const uint8_t *)name, strlen(name));
        gr_reply_map_begin(reply, 3);
        STAT_INT("overhead.hashtable.main", gr_ks_allocated_bytes(db->keyspaces[i]));
        STAT_INT("overhead.hashtable.expires", 0);
        STAT_INT("overhead.hashtable.slot-to-keys", 0);
    }
    STAT_INT("overhead.total", overhead);
    STAT_INT("keys.count", keys);
    STAT_INT("keys.bytes-per-key", keys ? (used - 0) / (int64_t)keys : 0);
    STAT_INT("dataset.bytes", dataset);
    STAT_DOUBLE("dataset.percentage", used ? 100.0 * (double)dataset / (double)used : 0.0);
    STAT_DOUBLE("peak.percentage", db->stats.peak_memory ? 100.0 * (double)used / (double)db->stats.peak_memory : 0.0);
    STAT_INT("allocator.allocated", used);
    STAT_INT("allocator.active", used);
    STAT_INT("allocator.resident", rss);
    STAT_DOUBLE("allocator-fragmentation.ratio", 1.0);
    STAT_INT("allocator-fragmentation.bytes", 0);
    STAT_DOUBLE("allocator-rss.ratio", used ? (double)rss / (double)used : 0.0);
    STAT_INT("allocator-rss.bytes", rss - used);
    STAT_DOUBLE("rss-overhead.ratio", 1.0);
    STAT_INT("rss-overhead.bytes", 0);
    STAT_DOUBLE("fragmentation", used ? (double)rss / (double)used : 0.0);
    STAT_INT("fragmentation.bytes", rss - used);
#undef STAT_INT
#undef STAT_DOUBLE
}

/* MEMORY DOCTOR: Redis's report, from the same figures (its thresholds and its sentences). */
static void memory_doctor(gr_server_t *db, gr_reply_t *reply) {
    int64_t used = gr_mem_used_total(), rss = rss_bytes();
    if (used > db->stats.peak_memory) db->stats.peak_memory = used;
    static const char empty[] =
        "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these "
        "conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam and I will be "
        "back to our programming as soon as I finished rebooting.";
    if (used < 5 * 1024 * 1024) { gr_reply_verbatim(reply, (const uint8_t *)empty, sizeof empty - 1); return; }
    char text[2048];
    size_t n = 0;
    int issues = 0;
    if (db->stats.peak_memory > used && (double)db->stats.peak_memory / (double)used > 1.5) {
        issues++;
        n += (size_t)snprintf(text + n, sizeof text - n,
                              " * Peak memory: In the past this instance used more than 150%% the memory that is "
                              "currently using. The allocator is normally not able to release memory after a peak, so "
                              "you can expect to see a big fragmentation ratio, however this is actually harmless and is "
                              "only due to the memory peak, and if the Redis instance Resident Set Size (RSS) is "
                              "currently bigger than expected, the memory will be used as soon as you fill the Redis "
                              "instance with more data. If the memory peak was only occasional and you want to try to "
                              "reclaim memory, please try the MEMORY PURGE command, otherwise the only other option is "
                              "to shutdown and restart the instance.\n\n");
    }
    if (used && (double)rss / (double)used > 1.4 && rss - used > 10 * 1024 * 1024) {
        issues++;
        n += (size_t)snprintf(text + n, sizeof text - n,
                              " * High total RSS: This instance has a memory fragmentation and RSS overhead greater "
                              "than 1.4 (this means that the Resident Set Size of the Redis process is much larger "
                              "than the sum of the logical allocations Redis performed). This problem is usually due "
                              "either to a large peak memory (check if there is a peak memory entry above in the "
                              "report) or may result from a workload that causes the allocator to fragment memory a "
                              "lot. You can try enabling 'activedefrag' config option.\n\n");
    }
    if (!issues) {
        static const char fine[] = "Hi Sam, I can't find any memory issue in your instance. I can only account for "
                                   "what occurs on this base.";
        gr_reply_verbatim(reply, (const uint8_t *)fine, sizeof fine - 1);
        return;
    }
    char out[2300];
    int length = snprintf(out, sizeof out, "Sam, I detected a few issues in this Redis instance memory implants:\n\n%s"
                          "I'm here to keep you safe, Sam. I want to help you.\n", text);
    gr_reply_verbatim(reply, (const uint8_t *)out, length > 0 && (size_t)length < sizeof out ? (size_t)length : 0);
}

void gr_cmd_memory(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                   gr_reply_t *reply) {
    if (gr_word_is(argv[1], argv_length[1], "usage")) {
        if (argc != 3 && !(argc == 5 && gr_word_is(argv[3], argv_length[3], "samples"))) {
            if (argc < 3) gr_reply_arity_error(reply, "memory|usage");
            else gr_reply_error_text(reply, GR_ERR_SYNTAX, "ERR syntax error");
            return;
        }
        int64_t samples;   /* checked as Redis checks it; every value is measured whole */
        if (argc == 5 && gr_bytes_to_int64(argv[4], argv_length[4], &samples) != 0) {
            gr_reply_error_text(reply, GR_ERR_NOT_INTEGER, "ERR value is not an integer or out of range");
            return;
        }
        if (argc == 5 && samples < 0) { gr_reply_error_text(reply, GR_ERR_SYNTAX, "ERR syntax error"); return; }
        gr_request_t request = {0};
        request.template_id = GR_T_MEMORYUSAGE;
        request.key.data = argv[2];
        request.key.length = (uint32_t)argv_length[2];
        gr_cmd_memory_usage(db, &request, reply);
    } else if (gr_word_is(argv[1], argv_length[1], "stats") || gr_word_is(argv[1], argv_length[1], "doctor") ||
               gr_word_is(argv[1], argv_length[1], "malloc-stats") || gr_word_is(argv[1], argv_length[1], "purge")) {
        if (argc != 2) {
            char name[32];
            snprintf(name, sizeof name, "memory|%.*s", (int)argv_length[1], (const char *)argv[1]);
            for (char *c = name; *c; c++) *c = (char)tolower((unsigned char)*c);
            gr_reply_arity_error(reply, name);
            return;
        }
        if (gr_word_is(argv[1], argv_length[1], "stats")) memory_stats(db, reply);
        else if (gr_word_is(argv[1], argv_length[1], "doctor")) memory_doctor(db, reply);
        else if (gr_word_is(argv[1], argv_length[1], "purge")) { malloc_trim(0); gr_reply_ok(reply); }
        else {   /* as Redis built without jemalloc */
            static const char text[] = "Stats not supported for the current allocator";
            gr_reply_verbatim(reply, (const uint8_t *)text, sizeof text - 1);
        }
    } else if (gr_word_is(argv[1], argv_length[1], "help")) {
        static const char *lines[] = {
            "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "DOCTOR", "    Return memory problems reports.",
            "MALLOC-STATS", "    Return internal statistics report from the memory allocator.",
            "PURGE", "    Attempt to purge dirty pages for reclamation by the allocator.",
            "STATS", "    Return information about the memory usage of the server.",
            "USAGE <key> [SAMPLES <count>]", "    Return memory in bytes used by <key> and its value.",
            "HELP", "    Print this help.",
        };
        gr_reply_help(reply, lines, sizeof lines / sizeof lines[0]);
    } else {
        gr_reply_unknown_subcommand(reply, argv[1], argv_length[1], "MEMORY");
    }
}


/* ---- the small ones ---- */

void gr_cmd_ping(gr_server_t *db, const gr_request_t *request, gr_reply_t *reply) {
    const gr_ping_view_t req = gr_ping_view(request);
    const gr_connection_t *conn = db->current;
    if (conn && conn->protocol == 2 && conn->kind != GR_CONN_RING && gr_subscriber_total(&conn->subscriber)) {
        gr_reply_array_begin(reply, 2);      /* subscribed mode (RESP2): ["pong", message or ""] */
        gr_reply_bulk(reply, (const uint8_t *)"pong", 4);
        gr_reply_bulk(reply, req.message.data, req.message.length);
        return;
    }
    if (req.message.length) gr_reply_bulk(reply, req.message.data, req.message.length);
    else gr_reply_status(reply, "PONG", 4);
}

void gr_cmd_echo(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    (void)db, (void)argc;
    gr_reply_bulk(reply, argv[1], argv_length[1]);
}

void gr_cmd_time(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    (void)db, (void)argc, (void)argv, (void)argv_length;
    struct timeval now;
    gettimeofday(&now, NULL);
    char seconds[24], micros[24];
    size_t s = gr_int64_to_text(now.tv_sec, seconds), u = gr_int64_to_text(now.tv_usec, micros);
    gr_reply_array_begin(reply, 2);
    gr_reply_bulk(reply, (const uint8_t *)seconds, s);
    gr_reply_bulk(reply, (const uint8_t *)micros, u);
}

void gr_cmd_quit(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    (void)db, (void)argc, (void)argv, (void)argv_length;
    gr_reply_ok(reply);   /* over RESP resp_conn.c closes the connection; a ring session stays */
}
