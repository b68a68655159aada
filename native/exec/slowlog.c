/* slowlog.c — the slow log's entries (slowlog.h): copying a slow command's argv with Redis's
 * truncation and redaction into one allocation, the newest-first list, trimming and reset.
 * db.c decides what is slow; commands/cmd_slowlog.c replies with the entries.
 */
#include "exec/slowlog.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/alloc.h"

#define REDACTED "(redacted)"

void gr_slowlog_init(gr_slowlog_t *log) {
    memset(log, 0, sizeof *log);
    log->log_slower_than_us = 10000;
    log->max_len = 128;
    log->threshold_cycles = UINT64_MAX;
}

static void entry_free(gr_slowlog_entry_t *entry) { gr_mem_free(entry, GR_MEM_OTHER); }

void gr_slowlog_reset(gr_slowlog_t *log) {
    gr_slowlog_entry_t *entry = log->newest;
    while (entry) {
        gr_slowlog_entry_t *older = entry->older;
        entry_free(entry);
        entry = older;
    }
    log->newest = log->oldest = NULL;
    log->length = 0;
}

void gr_slowlog_release(gr_slowlog_t *log) { gr_slowlog_reset(log); }

void gr_slowlog_set_threshold(gr_slowlog_t *log, int64_t log_slower_than_us, double cycles_per_ns) {
    log->log_slower_than_us = log_slower_than_us;
    if (log_slower_than_us < 0 || cycles_per_ns <= 0) {
        log->threshold_cycles = UINT64_MAX;
        return;
    }
    double cycles = (double)log_slower_than_us * 1000.0 * cycles_per_ns;
    log->threshold_cycles = cycles >= 1.8e19 ? UINT64_MAX - 1 : (uint64_t)cycles;
}

void gr_slowlog_trim(gr_slowlog_t *log) {
    while (log->length > log->max_len && log->oldest) {
        gr_slowlog_entry_t *oldest = log->oldest;
        log->oldest = oldest->newer;
        if (log->oldest) log->oldest->older = NULL;
        else log->newest = NULL;
        log->length--;
        entry_free(oldest);
    }
}

/* The text one logged argument becomes: written into out (when not NULL), its length returned. */
static size_t logged_argument(size_t argc, const uint8_t *const *argv, const size_t *argv_length, uint64_t redacted,
                              size_t j, size_t kept_argc, uint8_t *out) {
    char suffix[64];
    if (kept_argc != argc && j == kept_argc - 1) {
        int n = snprintf(suffix, sizeof suffix, "... (%zu more arguments)", argc - kept_argc + 1);
        if (out) memcpy(out, suffix, (size_t)n);
        return (size_t)n;
    }
    if (j < 64 && (redacted >> j & 1)) {
        if (out) memcpy(out, REDACTED, sizeof REDACTED - 1);
        return sizeof REDACTED - 1;
    }
    if (argv_length[j] > GR_SLOWLOG_MAX_STRING) {
        int n = snprintf(suffix, sizeof suffix, "... (%zu more bytes)", argv_length[j] - GR_SLOWLOG_MAX_STRING);
        if (out) {
            memcpy(out, argv[j], GR_SLOWLOG_MAX_STRING);
            memcpy(out + GR_SLOWLOG_MAX_STRING, suffix, (size_t)n);
        }
        return GR_SLOWLOG_MAX_STRING + (size_t)n;
    }
    if (out && argv_length[j]) memcpy(out, argv[j], argv_length[j]);
    return argv_length[j];
}

int gr_slowlog_push(gr_slowlog_t *log, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                    uint64_t redacted, int64_t duration_us, int64_t time_s, const char *addr, const char *name) {
    size_t kept = argc > GR_SLOWLOG_MAX_ARGC ? GR_SLOWLOG_MAX_ARGC : argc;
    size_t addr_length = strlen(addr ? addr : ""), name_length = strlen(name ? name : "");
    size_t bytes = 0;
    for (size_t j = 0; j < kept; j++) bytes += logged_argument(argc, argv, argv_length, redacted, j, kept, NULL);
    size_t header = sizeof(gr_slowlog_entry_t) + kept * (sizeof(uint8_t *) + sizeof(uint32_t));
    gr_slowlog_entry_t *entry =
        gr_mem_alloc(header + bytes + addr_length + 1 + name_length + 1, GR_MEM_OTHER);
    if (!entry) return -1;
    entry->argv = (uint8_t **)(entry + 1);
    entry->argv_length = (uint32_t *)(entry->argv + kept);
    uint8_t *cursor = (uint8_t *)(entry->argv_length + kept);
    for (size_t j = 0; j < kept; j++) {
        size_t n = logged_argument(argc, argv, argv_length, redacted, j, kept, cursor);
        entry->argv[j] = cursor;
        entry->argv_length[j] = (uint32_t)n;
        cursor += n;
    }
    memcpy(cursor, addr ? addr : "", addr_length + 1);
    entry->addr = (const char *)cursor;
    cursor += addr_length + 1;
    memcpy(cursor, name ? name : "", name_length + 1);
    entry->name = (const char *)cursor;
    entry->argc = (uint32_t)kept;
    entry->id = log->next_id++;
    entry->time_s = time_s;
    entry->duration_us = duration_us;
    entry->newer = NULL;
    entry->older = log->newest;
    if (log->newest) log->newest->newer = entry;
    else log->oldest = entry;
    log->newest = entry;
    log->length++;
    gr_slowlog_trim(log);
    return 0;
}
