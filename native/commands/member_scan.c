/* member_scan.c — the options, batch and reply head HSCAN, SSCAN and ZSCAN share (member_scan.h);
 * the commands themselves are in cmd_hash.c, cmd_set.c and cmd_zset.c. */
#include <stdio.h>
#include <string.h>

#include "commands/member_scan.h"
#include "core/glob.h"
#include "core/number.h"
#include "core/bytes.h"

int gr_member_scan_start_or_reply(gr_member_scan_t *scan, size_t entry_size, size_t argc, const uint8_t *const *argv,
                                  const size_t *argv_length, size_t first, int allow_novalues, gr_reply_t *reply) {
    memset(scan, 0, sizeof *scan);
    scan->entry_size = entry_size;
    scan->count = 10;
    for (size_t i = first; i < argc; i++) {
        size_t left = argc - i - 1;
        if (gr_word_is(argv[i], argv_length[i], "count") && left >= 1) {
            if (gr_bytes_to_int64(argv[i + 1], argv_length[i + 1], &scan->count) != 0) {
                gr_reply_error_text(reply, GR_ERR_NOT_INTEGER, "ERR value is not an integer or out of range");
                return -1;
            }
            if (scan->count < 1) { gr_reply_error_text(reply, GR_ERR_SYNTAX, "ERR syntax error"); return -1; }
            i++;
        } else if (gr_word_is(argv[i], argv_length[i], "match") && left >= 1) {
            scan->pattern = argv[i + 1];
            scan->pattern_length = argv_length[i + 1];
            if (scan->pattern_length == 1 && scan->pattern[0] == '*') scan->pattern = NULL;
            i++;
        } else if (allow_novalues && gr_word_is(argv[i], argv_length[i], "novalues")) {
            scan->novalues = 1;
        } else {
            gr_reply_error_text(reply, GR_ERR_SYNTAX, "ERR syntax error");
            return -1;
        }
    }
    return 0;
}

void gr_member_scan_free(gr_member_scan_t *scan) {
    gr_mem_free(scan->entries, GR_MEM_OTHER);
    scan->entries = NULL;
    scan->entry_count = scan->capacity = 0;
}

int gr_member_scan_matches(const gr_member_scan_t *scan, const uint8_t *name, size_t name_length) {
    return !scan->pattern || gr_glob_match(scan->pattern, scan->pattern_length, name, name_length, 0);
}

void *gr_member_scan_slot(gr_member_scan_t *scan, const uint8_t *name, size_t name_length) {
    if (scan->failed) return NULL;
    if (!gr_member_scan_matches(scan, name, name_length)) return NULL;
    if (scan->entry_count == scan->capacity) {
        size_t capacity = scan->capacity ? scan->capacity * 2 : 64;
        void *grown = gr_mem_realloc(scan->entries, capacity * scan->entry_size, GR_MEM_OTHER);
        if (!grown) { scan->failed = 1; return NULL; }
        scan->entries = grown;
        scan->capacity = capacity;
    }
    return (uint8_t *)scan->entries + scan->entry_size * scan->entry_count++;
}

void gr_member_scan_reply_empty(gr_reply_t *reply) { gr_reply_keyed_array_begin(reply, (const uint8_t *)"0", 1, 0); }

void gr_member_scan_reply_begin(gr_reply_t *reply, uint64_t next, size_t n) {
    char text[24];
    size_t length = (size_t)snprintf(text, sizeof text, "%llu", (unsigned long long)next);
    gr_reply_keyed_array_begin(reply, (const uint8_t *)text, length, n);
}
