/* cmd_slowlog.c — SLOWLOG GET / LEN / RESET / HELP (rows in slowlog.def), with Redis 7.0's
 * replies and errors. The log itself is exec/slowlog.c; exec/db.c decides what goes in.
 */
#include <stdio.h>
#include <string.h>

#include "commands/commands.h"
#include "exec/db.h"
#include "exec/server_text.h"

static void reply_entry(gr_reply_t *reply, const gr_slowlog_entry_t *entry) {
    gr_reply_array_begin(reply, 6);
    gr_reply_integer(reply, entry->id);
    gr_reply_integer(reply, entry->time_s);
    gr_reply_integer(reply, entry->duration_us);
    gr_reply_array_begin(reply, entry->argc);
    for (uint32_t i = 0; i < entry->argc; i++) gr_reply_bulk(reply, entry->argv[i], entry->argv_length[i]);
    gr_reply_bulk(reply, (const uint8_t *)entry->addr, strlen(entry->addr));
    gr_reply_bulk(reply, (const uint8_t *)entry->name, strlen(entry->name));
}

/* SLOWLOG GET [count]: count entries, newest first (10 by default; -1 for all). */
static void slowlog_get(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                        gr_reply_t *reply) {
    int64_t count = 10;
    if (argc == 3) {
        if (gr_bytes_to_int64(argv[2], argv_length[2], &count) != 0 || count < -1) {
            gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR count should be greater than or equal to -1");
            return;
        }
        if (count == -1) count = db->slowlog.length;
    }
    if (count > db->slowlog.length) count = db->slowlog.length;
    gr_reply_array_begin(reply, (size_t)count);
    const gr_slowlog_entry_t *entry = db->slowlog.newest;
    for (int64_t i = 0; i < count && entry; i++, entry = entry->older) reply_entry(reply, entry);
}

void gr_cmd_slowlog(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                    gr_reply_t *reply) {
    const uint8_t *sub = argv[1];
    size_t length = argv_length[1];
    int get = gr_word_is(sub, length, "get"), len = gr_word_is(sub, length, "len"),
        reset = gr_word_is(sub, length, "reset"), help = gr_word_is(sub, length, "help");
    if (!get && !len && !reset && !help) {
        gr_reply_unknown_subcommand(reply, sub, length, "SLOWLOG");
        return;
    }
    if (!get && argc != 2) {
        gr_reply_subcommand_arity_error(reply, "slowlog", sub, length);
        return;
    }
    if (help) {
        static const char *const lines[] = {
            "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "GET [<count>]",
            "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
            "    Entries are made of:",
            "    id, timestamp, time in microseconds, arguments array, client IP and port,",
            "    client name",
            "LEN",
            "    Return the length of the slowlog.",
            "RESET",
            "    Reset the slowlog.",
            "HELP",
            "    Prints this help.",
        };
        gr_reply_help(reply, lines, sizeof lines / sizeof lines[0]);
    } else if (len) {
        gr_reply_integer(reply, db->slowlog.length);
    } else if (reset) {
        gr_slowlog_reset(&db->slowlog);
        gr_reply_ok(reply);
    } else if (argc > 3) {   /* slowlog|get's arity (-2) lets it through; Redis's own check answers */
        static const char text[] = "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try SLOWLOG HELP.";
        char message[sizeof text + 128];
        int n = snprintf(message, sizeof message, text, (int)(length > 128 ? 128 : length), (const char *)sub);
        gr_reply_error(reply, GR_ERR_GENERIC, message, (size_t)n < sizeof message ? (size_t)n : sizeof message - 1);
    } else {
        slowlog_get(db, argc, argv, argv_length, reply);
    }
}
