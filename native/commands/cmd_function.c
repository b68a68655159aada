/* cmd_function.c — FUNCTION and its subcommands, FCALL and FCALL_RO (rows in function.def). The
 * engine — the libraries, their Lua state, DUMP's payload — is native/script/script_function.c;
 * these handlers read the subcommands' arguments with Redis 7.0's error texts and call it.
 */
#include <stdio.h>
#include <string.h>

#include "commands/commands.h"
#include "exec/server_text.h"
#include "script/function.h"

void gr_cmd_fcall(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    gr_function_call(db, argc, argv, argv_length, reply, 0);
}

void gr_cmd_fcall_ro(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                     gr_reply_t *reply) {
    gr_function_call(db, argc, argv, argv_length, reply, 1);
}

static const char *const help_lines[] = {
    "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "LOAD [REPLACE] <FUNCTION CODE>",
    "    Create a new library with the given library name and code.",
    "DELETE <LIBRARY NAME>",
    "    Delete the given library.",
    "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
    "    Return general information on all the libraries:",
    "    * Library name",
    "    * The engine used to run the Library",
    "    * Library description",
    "    * Functions list",
    "    * Library code (if WITHCODE is given)",
    "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
    "STATS",
    "    Return information about the current function running:",
    "    * Function name",
    "    * Command used to run the function",
    "    * Duration in MS that the function is running",
    "    If no function is running, return nil",
    "    In addition, returns a list of available engines.",
    "KILL",
    "    Kill the current running function.",
    "FLUSH [ASYNC|SYNC]",
    "    Delete all the libraries.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the libraries.",
    "    * SYNC: Synchronously flush the libraries.",
    "DUMP",
    "    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
    "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
    "    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
    "    control how to handle existing libraries (default APPEND):",
    "    * FLUSH: delete all existing libraries.",
    "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
    "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
    "      libraries with the new libraries (notice that even on this option there is a chance of failure",
    "      in case of functions name collision with another library).",
    "HELP",
    "    Prints this help.",
};

/* Redis's addReplySubcommandSyntaxError: "unknown subcommand or wrong number of arguments for 'flush'. ..." */
static void reply_subcommand_syntax(gr_reply_t *reply, const uint8_t *sub, size_t length) {
    char text[200];
    snprintf(text, sizeof text, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try FUNCTION HELP.",
             (int)(length > 64 ? 64 : length), sub);
    gr_reply_error_text(reply, GR_ERR_GENERIC, text);
}

static void load(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    int replace = 0;
    for (size_t i = 2; i + 1 < argc; i++) {
        if (gr_word_is(argv[i], argv_length[i], "replace")) {
            replace = 1;
        } else {
            char text[200];
            snprintf(text, sizeof text, "ERR Unknown option given: %.*s", (int)(argv_length[i] > 128 ? 128 : argv_length[i]),
                     argv[i]);
            gr_reply_error_text(reply, GR_ERR_GENERIC, text);
            return;
        }
    }
    gr_function_load(db, argv[argc - 1], argv_length[argc - 1], replace, reply);
}

static void list(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    const uint8_t *pattern = NULL;
    size_t pattern_length = 0;
    int with_code = 0;
    for (size_t i = 2; i < argc; i++) {
        if (!with_code && gr_word_is(argv[i], argv_length[i], "withcode")) {
            with_code = 1;
        } else if (!pattern && gr_word_is(argv[i], argv_length[i], "libraryname")) {
            if (i + 1 == argc) {
                gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR library name argument was not given");
                return;
            }
            pattern = argv[++i];
            pattern_length = argv_length[i];
        } else {
            char text[200];
            snprintf(text, sizeof text, "ERR Unknown argument %.*s", (int)(argv_length[i] > 128 ? 128 : argv_length[i]),
                     argv[i]);
            gr_reply_error_text(reply, GR_ERR_GENERIC, text);
            return;
        }
    }
    gr_function_list(db, pattern, pattern_length, with_code, reply);
}

/* The subcommands' arities (function.def's rows): Redis's wrong-number text names "function|delete". */
static int arity_ok(const uint8_t *sub, size_t sub_length, size_t argc, gr_reply_t *reply) {
    static const struct { const char *name; int arity; } rows[] = {
        {"load", -3}, {"delete", 3}, {"flush", -2}, {"list", -2}, {"dump", 2}, {"restore", -3},
        {"stats", 2}, {"kill", 2}, {"help", 2},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        if (!gr_word_is(sub, sub_length, rows[i].name)) continue;
        int arity = rows[i].arity;
        if ((arity > 0 && (int)argc == arity) || (arity < 0 && (int)argc >= -arity)) return 1;
        char text[96];
        snprintf(text, sizeof text, "ERR wrong number of arguments for 'function|%s' command", rows[i].name);
        gr_reply_error_text(reply, GR_ERR_WRONG_ARITY, text);
        return 0;
    }
    return 1;
}

/* FUNCTION <subcommand>. */
void gr_cmd_function(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                     gr_reply_t *reply) {
    const uint8_t *sub = argv[1];
    size_t sub_length = argv_length[1];
    if (!arity_ok(sub, sub_length, argc, reply)) return;
    if (gr_word_is(sub, sub_length, "load") && argc >= 3) {
        load(db, argc, argv, argv_length, reply);
    } else if (gr_word_is(sub, sub_length, "delete") && argc == 3) {
        gr_function_delete(db, argv[2], argv_length[2], reply);
    } else if (gr_word_is(sub, sub_length, "flush")) {
        if (argc > 3) {
            reply_subcommand_syntax(reply, sub, sub_length);
        } else if (argc == 3 && !gr_word_is(argv[2], argv_length[2], "async") && !gr_word_is(argv[2], argv_length[2], "sync")) {
            gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
        } else {
            gr_function_flush(db);
            gr_reply_ok(reply);
        }
    } else if (gr_word_is(sub, sub_length, "list")) {
        list(db, argc, argv, argv_length, reply);
    } else if (gr_word_is(sub, sub_length, "dump") && argc == 2) {
        gr_function_dump(db, reply);
    } else if (gr_word_is(sub, sub_length, "restore") && argc >= 3) {
        int policy = 0;
        if (argc > 4) {
            reply_subcommand_syntax(reply, sub, sub_length);
            return;
        }
        if (argc == 4) {
            if (gr_word_is(argv[3], argv_length[3], "append")) policy = 0;
            else if (gr_word_is(argv[3], argv_length[3], "replace")) policy = 1;
            else if (gr_word_is(argv[3], argv_length[3], "flush")) policy = 2;
            else {
                gr_reply_error_text(reply, GR_ERR_GENERIC,
                                    "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.");
                return;
            }
        }
        gr_function_restore(db, argv[2], argv_length[2], policy, reply);
    } else if (gr_word_is(sub, sub_length, "stats") && argc == 2) {
        gr_function_stats(db, reply);
    } else if (gr_word_is(sub, sub_length, "kill") && argc == 2) {
        gr_function_kill(db, reply);
    } else if (gr_word_is(sub, sub_length, "help") && argc == 2) {
        gr_reply_help(reply, help_lines, sizeof help_lines / sizeof help_lines[0]);
    } else {
        gr_reply_unknown_subcommand(reply, sub, sub_length, "FUNCTION");
    }
}
