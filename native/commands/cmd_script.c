/* cmd_script.c — EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT (rows in scripting.def). The
 * scripting itself — the Lua state, the redis.* API, conversions, the cache — is native/script/;
 * these handlers check the subcommands' arguments and call it.
 */
#include <stdio.h>
#include <string.h>

#include "commands/commands.h"
#include "exec/server_text.h"
#include "script/script.h"

void gr_cmd_eval(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    gr_script_eval(db, argc, argv, argv_length, reply, 0, 0);
}

void gr_cmd_evalsha(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                    gr_reply_t *reply) {
    gr_script_eval(db, argc, argv, argv_length, reply, 1, 0);
}

void gr_cmd_eval_ro(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                    gr_reply_t *reply) {
    gr_script_eval(db, argc, argv, argv_length, reply, 0, 1);
}

void gr_cmd_evalsha_ro(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                       gr_reply_t *reply) {
    gr_script_eval(db, argc, argv, argv_length, reply, 1, 1);
}

/* SCRIPT <subcommand>: arities are the subcommand rows' (Redis's wrong-number text names "script|load"). */
void gr_cmd_script(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                   gr_reply_t *reply) {
    const uint8_t *sub = argv[1];
    size_t sub_length = argv_length[1];
    if (gr_word_is(sub, sub_length, "help") && argc == 2) {
        static const char *lines[] = {
            "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "DEBUG (YES|SYNC|NO)",
            "    Set the debug mode for subsequent scripts executed (goblin-ring has no Lua debugger: NO only).",
            "EXISTS <sha1> [<sha1> ...]",
            "    Return information about the existence of the scripts in the script cache.",
            "FLUSH [ASYNC|SYNC]",
            "    Flush the Lua scripts cache. Very dangerous on replicas.",
            "    When called without the optional mode argument, the behavior is determined by the",
            "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
            "    * ASYNC: Asynchronously flush the scripts cache.",
            "    * SYNC: Synchronously flush the scripts cache.",
            "KILL",
            "    Kill the currently executing Lua script.",
            "LOAD <script>",
            "    Load a script into the scripts cache without executing it.",
            "HELP",
            "    Prints this help.",
        };
        gr_reply_help(reply, lines, sizeof lines / sizeof lines[0]);
    } else if (gr_word_is(sub, sub_length, "load") && argc == 3) {
        gr_script_load(db, argv[2], argv_length[2], reply);
    } else if (gr_word_is(sub, sub_length, "exists") && argc >= 3) {
        gr_script_exists(db, argc - 2, argv + 2, argv_length + 2, reply);
    } else if (gr_word_is(sub, sub_length, "flush") && argc <= 3) {
        if (argc == 3 && !gr_word_is(argv[2], argv_length[2], "sync") && !gr_word_is(argv[2], argv_length[2], "async")) {
            gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR SCRIPT FLUSH only support SYNC|ASYNC option");
            return;
        }
        gr_script_flush(db);
        gr_reply_ok(reply);
    } else if (gr_word_is(sub, sub_length, "flush")) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR SCRIPT FLUSH only support SYNC|ASYNC option");
    } else if (gr_word_is(sub, sub_length, "kill") && argc == 2) {
        gr_script_kill(db, 0, reply);
    } else if (gr_word_is(sub, sub_length, "debug") && argc == 3) {
        if (gr_word_is(argv[2], argv_length[2], "no")) gr_reply_ok(reply);
        else if (gr_word_is(argv[2], argv_length[2], "yes") || gr_word_is(argv[2], argv_length[2], "sync"))
            gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR goblin-ring has no Lua debugger (SCRIPT DEBUG NO only)");
        else gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR Use SCRIPT DEBUG YES/SYNC/NO");
    } else if (gr_word_is(sub, sub_length, "help") || gr_word_is(sub, sub_length, "load") ||
               gr_word_is(sub, sub_length, "exists") || gr_word_is(sub, sub_length, "kill") ||
               gr_word_is(sub, sub_length, "debug")) {
        char name[32];
        size_t n = 0;
        for (; n < sub_length && n < 16; n++) name[n] = (char)((sub[n] >= 'A' && sub[n] <= 'Z') ? sub[n] + 32 : sub[n]);
        name[n] = '\0';
        char text[96];
        snprintf(text, sizeof text, "ERR wrong number of arguments for 'script|%s' command", name);
        gr_reply_error_text(reply, GR_ERR_WRONG_ARITY, text);
    } else {
        gr_reply_unknown_subcommand(reply, sub, sub_length, "SCRIPT");
    }
}
