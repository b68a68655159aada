/* persistence.c — SAVE, BGSAVE, the save rules, SHUTDOWN's save and the start-up load
 * (persistence.h); the file format is snapshot.c's, the fork exec/child.c's.
 */
#include "persist/persistence.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "persist/aof.h"
#include "persist/rdb_format.h"
#include "persist/snapshot.h"

#define BGSAVE_RETRY_DELAY_S 5   /* Redis's CONFIG_BGSAVE_RETRY_DELAY */

static int64_t unix_s(void) { return (int64_t)time(NULL); }

static int64_t monotonic_us(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000000 + now.tv_nsec / 1000;
}

int gr_persist_parse_save_rules(const char *text, gr_save_rule_t *rules, int32_t *count, char *why, size_t why_size) {
    char copy[512];
    if (strlen(text) >= sizeof copy) {
        snprintf(why, why_size, "argument is too long");
        return -1;
    }
    snprintf(copy, sizeof copy, "%s", text);
    char *words[2 * GR_SAVE_RULES_MAX + 1];
    size_t n = 0;
    for (char *save = NULL, *word = strtok_r(copy, " \t", &save); word; word = strtok_r(NULL, " \t", &save)) {
        if (n == sizeof words / sizeof words[0]) {
            snprintf(why, why_size, "Too many save rules (at most %d)", GR_SAVE_RULES_MAX);
            return -1;
        }
        words[n++] = word;
    }
    if (n % 2 != 0) {
        snprintf(why, why_size, "Invalid save parameters");
        return -1;
    }
    gr_save_rule_t parsed[GR_SAVE_RULES_MAX];
    for (size_t i = 0; i < n; i += 2) {
        char *end1, *end2;
        errno = 0;
        long long seconds = strtoll(words[i], &end1, 10), changes = strtoll(words[i + 1], &end2, 10);
        if (errno || *end1 || *end2 || seconds < 1 || changes < 0) {
            snprintf(why, why_size, "Invalid save parameters");
            return -1;
        }
        parsed[i / 2] = (gr_save_rule_t){seconds, changes};
    }
    memcpy(rules, parsed, (n / 2) * sizeof parsed[0]);
    *count = (int32_t)(n / 2);
    return 0;
}

void gr_persist_format_save_rules(const gr_persistence_t *persistence, char *out, size_t size) {
    size_t used = 0;
    out[0] = '\0';
    for (int32_t i = 0; i < persistence->save_rule_count && used < size; i++)
        used += (size_t)snprintf(out + used, size - used, "%s%lld %lld", i ? " " : "",
                                 (long long)persistence->save_rules[i].seconds,
                                 (long long)persistence->save_rules[i].changes);
}

int gr_persist_path(const gr_server_t *db, char *out, size_t size) {
    const char *dir = db->config.dir[0] ? db->config.dir : ".";
    int n = snprintf(out, size, "%s/%s", dir, db->persistence.dbfilename);
    return n < 0 || (size_t)n >= size ? -1 : 0;
}

/* A save that succeeded: the changes it holds are no longer dirty. */
static void saved(gr_server_t *db, int64_t dirty_at_start, const gr_snapshot_stats_t *stats) {
    gr_persistence_t *p = &db->persistence;
    db->dirty -= dirty_at_start;
    if (db->dirty < 0) db->dirty = 0;
    p->lastsave_s = unix_s();
    p->saves++;
    p->last_bgsave_ok = 1;
    if (stats) p->last_file_bytes = stats->bytes;
}

int gr_persist_save(gr_server_t *db, char *error, size_t error_size) {
    if (gr_child_running(db) == GR_CHILD_SNAPSHOT) {
        snprintf(error, error_size, "ERR Background save already in progress");
        return -1;
    }
    char path[4096];
    if (gr_persist_path(db, path, sizeof path) != 0) {
        snprintf(error, error_size, "ERR the snapshot path is too long");
        return -1;
    }
    int64_t dirty = db->dirty;
    gr_snapshot_stats_t stats;
    char why[512];
    if (gr_snapshot_save(db, path, db->persistence.key_save_delay_us, &stats, why, sizeof why) != 0) {
        db->persistence.last_bgsave_ok = 0;
        snprintf(error, error_size, "ERR %s", why);
        return -1;
    }
    saved(db, dirty, &stats);
    return 0;
}

/* The BGSAVE child ended (gr_db_cron reaped it). */
static void bgsave_done(gr_server_t *db, gr_child_kind_t kind, int ok, int signal, int by_parent, void *context) {
    (void)kind, (void)signal, (void)context;
    gr_persistence_t *p = &db->persistence;
    p->last_bgsave_seconds = unix_s() - p->bgsave_started_s;
    if (ok) {
        saved(db, p->dirty_before_bgsave, NULL);
        char path[4096];
        if (gr_persist_path(db, path, sizeof path) == 0) {
            FILE *f = fopen(path, "rb");
            if (f) {
                fseek(f, 0, SEEK_END);
                p->last_file_bytes = ftell(f);
                fclose(f);
            }
        }
    } else {
        if (!by_parent) p->last_bgsave_ok = 0;   /* as Redis: a child the server killed is no failure */
        /* The child's temporary file (a kill -9 leaves it): Redis's rdbRemoveTempFile. */
        char temp[4096];
        const char *dir = db->config.dir[0] ? db->config.dir : ".";
        if (snprintf(temp, sizeof temp, "%s/temp-%d.grdb", dir, (int)p->bgsave_child_pid) < (int)sizeof temp) unlink(temp);
    }
}

static int start_bgsave(gr_server_t *db, char *error, size_t error_size) {
    char path[4096];
    if (gr_persist_path(db, path, sizeof path) != 0) {
        snprintf(error, error_size, "ERR the snapshot path is too long");
        return -1;
    }
    gr_persistence_t *p = &db->persistence;
    p->last_save_attempt_s = unix_s();
    int64_t dirty = db->dirty;
    int32_t pid = gr_child_fork(db, GR_CHILD_SNAPSHOT, bgsave_done, NULL);
    if (pid == 0) {
        char why[512];
        int ok = gr_snapshot_save(db, path, p->key_save_delay_us, NULL, why, sizeof why) == 0;
        if (ok) gr_log_to_stderr("DB saved on disk");
        else gr_log_to_stderr("Background saving failed: %s", why);
        gr_child_exit(ok);
    }
    if (pid < 0) {
        p->last_bgsave_ok = 0;
        snprintf(error, error_size, "ERR Can't save in background: fork: %s", strerror(errno));
        return -1;
    }
    p->dirty_before_bgsave = dirty;
    p->bgsave_started_s = unix_s();
    p->bgsave_child_pid = pid;
    p->bgsave_scheduled = 0;
    return 0;
}

int gr_persist_bgsave(gr_server_t *db, int schedule, char *error, size_t error_size) {
    gr_child_kind_t running = gr_child_running(db);
    if (running == GR_CHILD_SNAPSHOT) {
        snprintf(error, error_size, "ERR Background save already in progress");
        return -1;
    }
    if (running != GR_CHILD_NONE || db->serve_deferred > 0) {
        if (schedule || db->serve_deferred > 0) {
            db->persistence.bgsave_scheduled = 1;
            return 2;
        }
        snprintf(error, error_size,
                 "ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE in order "
                 "to schedule a BGSAVE whenever possible.");
        return -1;
    }
    return start_bgsave(db, error, error_size) == 0 ? 1 : -1;
}

void gr_persist_cron(gr_server_t *db) {
    gr_persistence_t *p = &db->persistence;
    if (gr_child_running(db) != GR_CHILD_NONE) return;
    const int64_t now = unix_s();
    const int may_retry = p->last_bgsave_ok || now - p->last_save_attempt_s > BGSAVE_RETRY_DELAY_S;
    char error[256];
    if (p->bgsave_scheduled && may_retry) {
        start_bgsave(db, error, sizeof error);
        return;
    }
    for (int32_t i = 0; i < p->save_rule_count; i++) {
        const gr_save_rule_t *rule = &p->save_rules[i];
        if (db->dirty >= rule->changes && now - p->lastsave_s > rule->seconds && may_retry) {
            start_bgsave(db, error, sizeof error);
            return;
        }
    }
}

int gr_persist_load_at_start(gr_server_t *db, char *error, size_t error_size) {
    char path[4096];
    if (gr_persist_path(db, path, sizeof path) != 0) {
        snprintf(error, error_size, "the snapshot path is too long");
        return -1;
    }
    if (gr_rdb_file_is_rdb(path)) return gr_persist_import_rdb(db, path, error, error_size);
    int64_t start = monotonic_us();
    gr_snapshot_stats_t stats;
    int result = gr_snapshot_load(db, path, &stats, error, error_size);
    db->persistence.loading_seconds_us = monotonic_us() - start;
    if (result == 1) {
        db->persistence.last_load_keys_loaded = stats.keys;
        db->persistence.last_load_keys_expired = stats.keys_expired;
        db->persistence.last_file_bytes = stats.bytes;
    }
    return result;
}

int gr_persist_import_rdb(gr_server_t *db, const char *path, char *error, size_t error_size) {
    int64_t start = monotonic_us();
    gr_rdb_stats_t stats;
    int result = gr_rdb_load(db, path, &stats, error, error_size);
    db->persistence.loading_seconds_us = monotonic_us() - start;
    if (result == 1) {
        db->persistence.last_load_keys_loaded = stats.keys;
        db->persistence.last_load_keys_expired = stats.keys_expired;
        db->persistence.last_file_bytes = stats.bytes;
    }
    return result;
}

int gr_persist_export_rdb(gr_server_t *db, const char *path, int64_t *keys, int64_t *skipped, char *error,
                          size_t error_size) {
    gr_rdb_stats_t stats;
    int result = gr_rdb_save(db, path, &stats, error, error_size);
    *keys = stats.keys;
    *skipped = stats.keys_skipped;
    return result;
}

double gr_persist_last_load_seconds(gr_server_t *db) { return (double)db->persistence.loading_seconds_us / 1e6; }

int gr_persist_prepare_shutdown(gr_server_t *db, int mode, char *error, size_t error_size) {
    if (gr_child_running(db) != GR_CHILD_NONE) gr_child_kill(db);   /* Redis kills the child too */
    char why[600];
    if (db->aof && gr_aof_flush_for_shutdown(db, why, sizeof why) != 0) {   /* acknowledged writes stay */
        snprintf(error, error_size, "ERR %s", why);
        return -1;
    }
    if (mode == 1 || (mode == -1 && db->persistence.save_rule_count > 0)) return gr_persist_save(db, error, error_size);
    return 0;
}

void gr_persist_after_flushall(gr_server_t *db) {
    if (gr_child_running(db) == GR_CHILD_SNAPSHOT) gr_child_kill(db);
    char error[600];
    if (db->persistence.save_rule_count > 0) gr_persist_save(db, error, sizeof error);
}

int gr_persist_shutdown_requested(gr_server_t *db) { return db->persistence.shutdown_requested; }

static const struct { const char *name; uint8_t flag; } shutdown_flag_names[] = {
    {"save", GR_SHUTDOWN_SAVE}, {"nosave", GR_SHUTDOWN_NOSAVE}, {"now", GR_SHUTDOWN_NOW}, {"force", GR_SHUTDOWN_FORCE}};

int gr_persist_parse_shutdown_flags(const char *text, uint8_t *flags, char *why, size_t why_size) {
    uint8_t value = 0;
    for (const char *at = text; *at;) {
        while (*at == ' ') at++;
        size_t length = strcspn(at, " ");
        if (!length) break;
        int found = strlen("default") == length && !strncasecmp(at, "default", length);
        for (size_t i = 0; !found && i < sizeof shutdown_flag_names / sizeof *shutdown_flag_names; i++)
            if (strlen(shutdown_flag_names[i].name) == length && !strncasecmp(at, shutdown_flag_names[i].name, length)) {
                value |= shutdown_flag_names[i].flag;
                found = 1;
            }
        if (!found) break;
        at += length;
        if (!*at) {
            if ((value & GR_SHUTDOWN_SAVE) && (value & GR_SHUTDOWN_NOSAVE)) {
                snprintf(why, why_size, "shutdown options SAVE and NOSAVE can't be used simultaneously");
                return -1;
            }
            *flags = value;
            return 0;
        }
    }
    snprintf(why, why_size, "argument(s) must be one of the following: default, save, nosave, now, force");
    return -1;
}

void gr_persist_shutdown_flags_text(uint8_t flags, char *out, size_t size) {
    if (!flags) { snprintf(out, size, "default"); return; }
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < sizeof shutdown_flag_names / sizeof *shutdown_flag_names; i++)
        if (flags & shutdown_flag_names[i].flag && used < size) {
            int n = snprintf(out + used, size - used, "%s%s", used ? " " : "", shutdown_flag_names[i].name);
            if (n > 0) used += (size_t)n;
        }
}

int gr_persist_shutdown_for_signal(gr_server_t *db, int is_sigint, char *error, size_t error_size) {
    uint8_t flags = is_sigint ? db->persistence.shutdown_on_sigint : db->persistence.shutdown_on_sigterm;
    int mode = flags & GR_SHUTDOWN_SAVE ? 1 : flags & GR_SHUTDOWN_NOSAVE ? 0 : -1;
    if (gr_persist_prepare_shutdown(db, mode, error, error_size) == 0) return 0;
    return flags & GR_SHUTDOWN_FORCE ? 1 : -1;
}
