/* cmd_acl.c — ACL SETUSER / GETUSER / DELUSER / LIST / USERS / WHOAMI / CAT / GENPASS / DRYRUN
 * / LOG / LOAD / SAVE / HELP (rows in acl.def), with Redis 7.0's replies and error texts.
 *
 * The users, the rule grammar and the descriptions are exec/acl.c's; the check DRYRUN reports
 * is admission's own (gr_db_acl_check), so what DRYRUN says is what a call would meet. A deleted
 * user's connections are closed after the command, as Redis closes them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "core/clock.h"
#include "commands/commands.h"
#include "exec/db.h"
#include "exec/server_text.h"

static void reply_text(gr_reply_t *reply, const char *text) { gr_reply_bulk(reply, (const uint8_t *)text, strlen(text)); }

static void reply_error_format(gr_reply_t *reply, const char *format, const uint8_t *arg, size_t length) {
    char text[512];
    snprintf(text, sizeof text, format, (int)(length > 256 ? 256 : length), (const char *)arg);
    gr_reply_error_text(reply, GR_ERR_GENERIC, text);
}

static void reply_owned(gr_reply_t *reply, char *text) {
    if (!text) { gr_reply_oom(reply); return; }
    reply_text(reply, text);
    free(text);
}

static void acl_users(gr_server_t *db, gr_reply_t *reply) {
    size_t count = 0;
    for (const gr_acl_user_t *user = db->acl->users; user; user = user->next) count++;
    gr_reply_array_begin(reply, count);
    for (const gr_acl_user_t *user = db->acl->users; user; user = user->next)
        gr_reply_bulk(reply, (const uint8_t *)user->name, user->name_length);
}

static void acl_list(gr_server_t *db, gr_reply_t *reply) {
    size_t count = 0;
    for (const gr_acl_user_t *user = db->acl->users; user; user = user->next) count++;
    gr_reply_array_begin(reply, count);
    for (const gr_acl_user_t *user = db->acl->users; user; user = user->next) reply_owned(reply, gr_acl_describe_user(user));
}

static void acl_getuser(gr_server_t *db, const uint8_t *name, size_t length, gr_reply_t *reply) {
    const gr_acl_user_t *user = gr_acl_find(db->acl, name, length);
    if (!user) { gr_reply_nil(reply); return; }
    char *commands = gr_acl_describe_commands(user), *keys = gr_acl_describe_keys(user);
    gr_text_t channels;
    int channels_ok = gr_text_init(&channels, 32) == 0;
    if (channels_ok) {
        if (user->allchannels) gr_text_append(&channels, "&*");
        for (uint32_t i = 0; !user->allchannels && i < user->channel_count; i++)
            gr_text_append(&channels, "%s&%s", i ? " " : "", user->channels[i].text);
    }
    if (!commands || !keys || !channels_ok || channels.failed) {
        free(commands);
        free(keys);
        if (channels_ok) gr_text_free(&channels);
        gr_reply_oom(reply);
        return;
    }
    gr_reply_map_begin(reply, 6);
    reply_text(reply, "flags");
    gr_reply_array_begin(reply, 1 + (size_t)user->nopass + (user->payload != 0));
    reply_text(reply, user->enabled ? "on" : "off");
    if (user->nopass) reply_text(reply, "nopass");
    if (user->payload) reply_text(reply, user->payload == GR_ACL_SANITIZE ? "sanitize-payload" : "skip-sanitize-payload");
    reply_text(reply, "passwords");
    gr_reply_array_begin(reply, user->password_count);
    for (uint32_t i = 0; i < user->password_count; i++) {
        char hex[2 * GR_SHA256_BYTES + 1];
        for (size_t b = 0; b < GR_SHA256_BYTES; b++) snprintf(hex + 2 * b, 3, "%02x", user->passwords[i][b]);
        gr_reply_bulk(reply, (const uint8_t *)hex, 2 * GR_SHA256_BYTES);
    }
    reply_text(reply, "commands");
    reply_text(reply, commands);
    reply_text(reply, "keys");
    reply_text(reply, keys);
    reply_text(reply, "channels");
    gr_reply_bulk(reply, (const uint8_t *)channels.data, channels.length);
    reply_text(reply, "selectors");
    gr_reply_array_begin(reply, user->selector_count);
    for (uint32_t i = 0; i < user->selector_count; i++) {
        const gr_acl_user_t *selector = &user->selectors[i];
        gr_reply_map_begin(reply, 3);
        reply_text(reply, "commands");
        reply_owned(reply, gr_acl_describe_commands(selector));
        reply_text(reply, "keys");
        reply_owned(reply, gr_acl_describe_keys(selector));
        reply_text(reply, "channels");
        reply_owned(reply, gr_acl_describe_channels(selector));
    }
    free(commands);
    free(keys);
    gr_text_free(&channels);
}

static int has_space_or_nul(const uint8_t *text, size_t length) {
    for (size_t i = 0; i < length; i++)
        if (text[i] == ' ' || text[i] == '\0' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n') return 1;
    return 0;
}

static void acl_setuser(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                        gr_reply_t *reply) {
    for (size_t i = 3; i < argc; i++)
        if (argv[i][0] == '>' || argv[i][0] == '<') gr_call_redact_argument(db, i);   /* passwords stay out of logs */
    if (has_space_or_nul(argv[2], argv_length[2])) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR Usernames can't contain spaces or null characters");
        return;
    }
    char error[512];
    if (gr_acl_set_user(db->acl, argv[2], argv_length[2], argc - 3, argv + 3, argv_length + 3, error, sizeof error) != 0) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, error);
        return;
    }
    gr_reply_ok(reply);
}

static void acl_deluser(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                        gr_reply_t *reply) {
    for (size_t i = 2; i < argc; i++)
        if (gr_word_is(argv[i], argv_length[i], "default") && argv_length[i] == 7 && !memcmp(argv[i], "default", 7)) {
            gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR The 'default' user cannot be removed");
            return;
        }
    int64_t deleted = 0;
    for (size_t i = 2; i < argc; i++) {
        gr_acl_user_t *user = gr_acl_find(db->acl, argv[i], argv_length[i]);
        if (!user) continue;
        for (gr_connection_t *conn = db->connections; conn; conn = conn->next) {
            if (conn->user != user) continue;
            conn->user = NULL;   /* no command of it runs as the gone user; closed after this one */
            if (!conn->kill_requested) {
                conn->kill_requested = 1;
                db->kills_pending++;
            }
        }
        deleted += gr_acl_delete_user(db->acl, user);
    }
    gr_reply_integer(reply, deleted);
}

static void acl_cat(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                    gr_reply_t *reply) {
    (void)db;
    if (argc == 2) {
        gr_reply_array_begin(reply, gr_acl_category_count());
        for (size_t i = 0; i < gr_acl_category_count(); i++) reply_text(reply, gr_acl_category_name(i));
        return;
    }
    int category = gr_acl_category_index(argv[2], argv_length[2]);
    if (category < 0) { reply_error_format(reply, "ERR Unknown category '%.*s'", argv[2], argv_length[2]); return; }
    size_t count = 0;
    for (size_t slot = 0; gr_command_stat_name(slot); slot++) count += (size_t)gr_acl_slot_in_category((int)slot, category);
    gr_reply_array_begin(reply, count);
    for (size_t slot = 0; gr_command_stat_name(slot); slot++)
        if (gr_acl_slot_in_category((int)slot, category)) reply_text(reply, gr_command_stat_name(slot));
}

static void acl_genpass(size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    int64_t bits = 256;
    if (argc == 3 && gr_bytes_to_int64(argv[2], argv_length[2], &bits) != 0) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR value is not an integer or out of range");
        return;
    }
    if (bits <= 0 || bits > 4096) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR ACL GENPASS argument must be the number of bits for the output "
                                                   "password, a positive number up to 4096");
        return;
    }
    size_t chars = (size_t)(bits + 3) / 4, bytes = (chars + 1) / 2;
    uint8_t random[512];
    size_t filled = 0;
    while (filled < bytes) {
        ssize_t n = getrandom(random + filled, bytes - filled, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) { gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR Failed to generate random bytes"); return; }
        filled += (size_t)n;
    }
    char hex[1025];
    for (size_t i = 0; i < bytes; i++) snprintf(hex + 2 * i, 3, "%02x", random[i]);
    gr_reply_bulk(reply, (const uint8_t *)hex, chars);
}

static void acl_dryrun(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                       gr_reply_t *reply) {
    const gr_acl_user_t *user = gr_acl_find(db->acl, argv[2], argv_length[2]);
    if (!user) { reply_error_format(reply, "ERR User '%.*s' not found", argv[2], argv_length[2]); return; }
    int index = gr_command_index(argv[3], argv_length[3]);
    if (index < 0) { reply_error_format(reply, "ERR Command '%.*s' not found", argv[3], argv_length[3]); return; }
    size_t call_argc = argc - 3;
    const uint8_t *const *call_argv = argv + 3;
    const size_t *call_lengths = argv_length + 3;
    int slot = gr_command_stat_slot(index, call_argc, call_argv, call_lengths);
    const gr_command_t *row = slot < (int)gr_command_count() ? gr_command_at((size_t)slot)
                                                             : gr_subcommand_at((size_t)slot - gr_command_count());
    const char *full_name = gr_command_stat_name((size_t)slot);
    int arity = row ? row->arity : 0;
    if ((arity > 0 && (size_t)arity != call_argc) || (arity < 0 && call_argc < (size_t)-arity)) {
        char text[300];
        snprintf(text, sizeof text, "ERR wrong number of arguments for '%s' command", full_name);
        gr_reply_error_text(reply, GR_ERR_GENERIC, text);
        return;
    }
    gr_admit_args_t args = {slot, call_argc, call_argv, call_lengths, NULL};
    size_t refused = 0;
    int denied = (gr_command_flags(slot) & GR_CMD_FLAG_NO_AUTH) ? GR_ACL_ALLOWED : gr_db_acl_check(user, index, &args, &refused);
    char text[600];
    if (denied == GR_ACL_ALLOWED) {
        gr_reply_ok(reply);
        return;
    }
    if (denied == GR_ACL_DENIED_COMMAND)
        snprintf(text, sizeof text, "This user has no permissions to run the '%s' command", full_name);
    else if (denied == GR_ACL_DENIED_CHANNEL)
        snprintf(text, sizeof text, "This user has no permissions to access the '%.*s' channel",
                 (int)(call_lengths[refused] > 256 ? 256 : call_lengths[refused]), (const char *)call_argv[refused]);
    else
        snprintf(text, sizeof text, "This user has no permissions to access the '%.*s' key",
                 (int)(call_lengths[refused] > 256 ? 256 : call_lengths[refused]), (const char *)call_argv[refused]);
    reply_text(reply, text);
}

static const char *const LOG_REASONS[] = {"command", "key", "channel", "auth"};
static const char *const LOG_CONTEXTS[] = {"toplevel", "multi", "lua"};

/* ACL LOG [count|RESET]: the newest count entries (10 by default), Redis 7.2's ten fields. */
static void acl_log(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                    gr_reply_t *reply) {
    int64_t count = 10;
    if (argc == 3) {
        if (gr_word_is(argv[2], argv_length[2], "reset")) {
            gr_acl_log_reset(db->acl);
            gr_reply_ok(reply);
            return;
        }
        if (gr_bytes_to_int64(argv[2], argv_length[2], &count) != 0) {
            gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR value is not an integer or out of range");
            return;
        }
        if (count < 0) count = 0;
    }
    if (count > db->acl->log_length) count = db->acl->log_length;
    int64_t now_ms = gr_unix_ms();
    gr_reply_array_begin(reply, (size_t)count);
    const gr_acl_log_entry_t *entry = db->acl->log;
    for (int64_t i = 0; i < count && entry; i++, entry = entry->next) {
        gr_reply_map_begin(reply, 10);
        reply_text(reply, "count");
        gr_reply_integer(reply, entry->count);
        reply_text(reply, "reason");
        reply_text(reply, LOG_REASONS[entry->reason < 4 ? entry->reason : 0]);
        reply_text(reply, "context");
        reply_text(reply, LOG_CONTEXTS[entry->context < 3 ? entry->context : 0]);
        reply_text(reply, "object");
        gr_reply_bulk(reply, (const uint8_t *)entry->object, entry->object_length);
        reply_text(reply, "username");
        gr_reply_bulk(reply, (const uint8_t *)entry->username, entry->username_length);
        reply_text(reply, "age-seconds");
        gr_reply_double(reply, (double)(now_ms - entry->updated_ms) / 1000);
        reply_text(reply, "client-info");
        reply_text(reply, entry->client_info ? entry->client_info : "");
        reply_text(reply, "entry-id");
        gr_reply_integer(reply, entry->entry_id);
        reply_text(reply, "timestamp-created");
        gr_reply_integer(reply, entry->created_ms);
        reply_text(reply, "timestamp-last-updated");
        gr_reply_integer(reply, entry->updated_ms);
    }
}

void gr_cmd_acl(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                gr_reply_t *reply) {
    const uint8_t *sub = argv[1];
    size_t length = argv_length[1];
    static const struct { const char *name; int arity; } SUBS[] = {
        {"cat", -2}, {"deluser", -3}, {"dryrun", -4}, {"genpass", -2}, {"getuser", 3}, {"list", 2},
        {"setuser", -3}, {"users", 2}, {"whoami", 2}, {"help", 2}, {"log", -2},
        {"load", 2}, {"save", 2},
    };
    size_t which = 0, count = sizeof SUBS / sizeof SUBS[0];
    while (which < count && !gr_word_is(sub, length, SUBS[which].name)) which++;
    if (which == count) { gr_reply_unknown_subcommand(reply, sub, length, "ACL"); return; }
    int arity = SUBS[which].arity;
    if ((arity > 0 && argc != (size_t)arity) || (arity < 0 && argc < (size_t)-arity)) {
        gr_reply_subcommand_arity_error(reply, "acl", sub, length);
        return;
    }
    if ((which == 0 || which == 3 || which == 10) && argc > 3) {   /* inside the row's arity: the handler's own check, as Redis */
        reply_error_format(reply, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try ACL HELP.", sub, length);
        return;
    }
    switch (which) {
    case 0: acl_cat(db, argc, argv, argv_length, reply); break;
    case 1: acl_deluser(db, argc, argv, argv_length, reply); break;
    case 2: acl_dryrun(db, argc, argv, argv_length, reply); break;
    case 3: acl_genpass(argc, argv, argv_length, reply); break;
    case 4: acl_getuser(db, argv[2], argv_length[2], reply); break;
    case 5: acl_list(db, reply); break;
    case 6: acl_setuser(db, argc, argv, argv_length, reply); break;
    case 7: acl_users(db, reply); break;
    case 10: acl_log(db, argc, argv, argv_length, reply); break;
    case 11:
    case 12: {
        if (!db->acl->file) {
            gr_reply_error_text(reply, GR_ERR_GENERIC,
                                "ERR This Redis instance is not configured to use an ACL file. You may want to specify "
                                "users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a "
                                "Redis configuration file set) in order to store users in the Redis configuration.");
            break;
        }
        if (which == 12) {
            if (gr_acl_save_file(db->acl, db->acl->file) == 0) gr_reply_ok(reply);
            else gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR There was an error trying to save the ACLs. Please "
                                                            "check the server logs for more information");
            break;
        }
        char *error = malloc(65536);
        if (!error) { gr_reply_oom(reply); break; }
        if (gr_db_acl_load(db, error, 65536) == 0) gr_reply_ok(reply);
        else gr_reply_error_text(reply, GR_ERR_GENERIC, error);
        free(error);
        break;
    }
    case 8: {
        const gr_acl_user_t *user = gr_db_current_user(db);
        reply_text(reply, user ? user->name : "default");
        break;
    }
    default: {
        static const char *const lines[] = {
            "ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "CAT [<category>]",
            "    List all commands that belong to <category>, or all command categories",
            "    when no category is specified.",
            "DELUSER <username> [<username> ...]",
            "    Delete a list of users.",
            "DRYRUN <username> <command> [<arg> ...]",
            "    Returns whether the user can execute the given command without executing the command.",
            "GETUSER <username>",
            "    Get the user's details.",
            "GENPASS [<bits>]",
            "    Generate a secure 256-bit user password. The optional `bits` argument can",
            "    be used to specify a different size.",
            "LIST",
            "    Show users details in config file format.",
            "LOAD",
            "    Reload users from the ACL file.",
            "LOG [<count> | RESET]",
            "    Show the ACL log entries.",
            "SAVE",
            "    Save the current config to the ACL file.",
            "SETUSER <username> <attribute> [<attribute> ...]",
            "    Create or modify a user with the specified attributes.",
            "USERS",
            "    List all the registered usernames.",
            "WHOAMI",
            "    Return the current connection username.",
            "HELP",
            "    Prints this help.",
        };
        gr_reply_help(reply, lines, sizeof lines / sizeof lines[0]);
    }
    }
}
