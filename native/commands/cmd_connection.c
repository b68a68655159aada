/* cmd_connection.c — the commands about the connection itself: HELLO (protocol 2/3, AUTH,
 * SETNAME), AUTH, RESET, and CLIENT ID / SETNAME / GETNAME / SETINFO / INFO / LIST / KILL /
 * UNBLOCK / NO-EVICT / HELP.
 *
 * Every command runs with db->current set to the calling connection (db.h), and the
 * registry db->connections holds every RESP connection and ring session, so CLIENT LIST
 * shows both and CLIENT KILL can close either: it marks the victim, and the transport
 * closes it after the running command (resp_conn.c, session.c, the server loop). CLIENT
 * UNBLOCK answers a parked connection of either transport through exec/blocking.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/clock.h"
#include "commands/commands.h"
#include "exec/blocking.h"
#include "exec/db.h"
#include "exec/monitor.h"
#include "exec/pause.h"
#include "exec/transaction.h"
#include "exec/tracking.h"
#include "exec/server_text.h"


/* AUTH's rule, shared with HELLO ... AUTH: 0 when the pair is right (the connection is then
 * authenticated as that user), else the error is written. AUTH <password> is the default user's. */
static int authenticate(gr_server_t *db, const uint8_t *command, size_t command_length, const uint8_t *user,
                        size_t user_length, const uint8_t *password, size_t password_length, gr_reply_t *reply) {
    if (user == NULL && db->acl->default_user->nopass) {
        gr_reply_error_text(reply, GR_ERR_GENERIC,
                            "ERR AUTH <password> called without any password configured for the default user. "
                            "Are you sure your configuration is correct?");
        return -1;
    }
    if (user == NULL) user = (const uint8_t *)"default", user_length = 7;
    gr_acl_user_t *found = gr_acl_authenticate(db->acl, user, user_length, password, password_length);
    if (!found) {
        gr_db_acl_log(db, GR_ACL_LOG_AUTH, command, command_length, user, user_length);   /* as typed: "AUTH", "hello" */
        gr_reply_error_text(reply, GR_ERR_GENERIC, "WRONGPASS invalid username-password pair or user is disabled.");
        return -1;
    }
    db->current->user = found;
    return 0;
}

/* Client names and library fields: printable ASCII without spaces, as Redis requires. */
static int valid_client_text(const uint8_t *text, size_t length) {
    for (size_t i = 0; i < length; i++)
        if (text[i] < '!' || text[i] > '~') return 0;
    return 1;
}

static int set_name(gr_connection_t *conn, const uint8_t *name, size_t length, gr_reply_t *reply) {
    if (!valid_client_text(name, length)) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR Client names cannot contain spaces, newlines or special characters.");
        return -1;
    }
    if (length >= sizeof conn->name) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR Client names are limited to 127 bytes in goblin-ring.");
        return -1;
    }
    memcpy(conn->name, name, length);
    conn->name[length] = '\0';
    return 0;
}

/* ---- HELLO, AUTH, RESET ---- */

static void hello_reply(gr_server_t *db, gr_reply_t *reply) {
    gr_reply_map_begin(reply, 7);
    gr_reply_bulk(reply, (const uint8_t *)"server", 6);
    gr_reply_bulk(reply, (const uint8_t *)"redis", 5);
    gr_reply_bulk(reply, (const uint8_t *)"version", 7);
    gr_reply_bulk(reply, (const uint8_t *)GR_REDIS_COMPATIBLE_VERSION, strlen(GR_REDIS_COMPATIBLE_VERSION));
    gr_reply_bulk(reply, (const uint8_t *)"proto", 5);
    gr_reply_integer(reply, db->current->protocol);
    gr_reply_bulk(reply, (const uint8_t *)"id", 2);
    gr_reply_integer(reply, db->current->id);
    gr_reply_bulk(reply, (const uint8_t *)"mode", 4);
    gr_reply_bulk(reply, (const uint8_t *)"standalone", 10);
    gr_reply_bulk(reply, (const uint8_t *)"role", 4);
    gr_reply_bulk(reply, (const uint8_t *)"master", 6);
    gr_reply_bulk(reply, (const uint8_t *)"modules", 7);
    gr_reply_array_begin(reply, 0);
}

static void hello(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    gr_connection_t *conn = db->current;
    int64_t protocol = conn->protocol;
    if (argc >= 2) {
        if (gr_bytes_to_int64(argv[1], argv_length[1], &protocol) != 0) {
            gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR Protocol version is not an integer or out of range");
            return;
        }
    }
    const uint8_t *user = NULL, *password = NULL, *name = NULL;
    size_t user_length = 0, password_length = 0, name_length = 0;
    int has_name = 0;
    for (size_t i = 2; i < argc; i++) {
        if (gr_word_is(argv[i], argv_length[i], "auth") && i + 2 < argc) {
            gr_call_redact_argument(db, i + 1);
            gr_call_redact_argument(db, i + 2);
            user = argv[i + 1], user_length = argv_length[i + 1];
            password = argv[i + 2], password_length = argv_length[i + 2];
            i += 2;
        } else if (gr_word_is(argv[i], argv_length[i], "setname") && i + 1 < argc) {
            name = argv[i + 1], name_length = argv_length[i + 1], has_name = 1;
            i += 1;
        } else {
            char text[200];
            snprintf(text, sizeof text, "ERR Syntax error in HELLO option '%.*s'",
                     (int)(argv_length[i] > 64 ? 64 : argv_length[i]), (const char *)argv[i]);
            gr_reply_error_text(reply, GR_ERR_SYNTAX, text);
            return;
        }
    }
    if (argc >= 2 && protocol != 2 && protocol != 3) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "NOPROTO unsupported protocol version");
        return;
    }
    if (user && authenticate(db, argv[0], argv_length[0], user, user_length, password, password_length, reply) != 0) return;
    if (!gr_db_current_user(db)) {
        gr_reply_error_text(reply, GR_ERR_GENERIC,
                            "NOAUTH HELLO must be called with the client already authenticated, otherwise the "
                            "HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and "
                            "select the RESP protocol version at the same time");
        return;
    }
    if (has_name && set_name(conn, name, name_length, reply) != 0) return;
    if (conn->kind != GR_CONN_RING) conn->protocol = (uint8_t)protocol;   /* the ring has its own shapes */
    hello_reply(db, reply);
}

static void auth(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    if (argc > 3) { gr_reply_error_text(reply, GR_ERR_SYNTAX, "ERR syntax error"); return; }
    gr_call_redact_argument(db, 1);   /* the password, or the user and the password */
    if (argc == 3) gr_call_redact_argument(db, 2);
    int rc = argc == 2 ? authenticate(db, argv[0], argv_length[0], NULL, 0, argv[1], argv_length[1], reply)
                       : authenticate(db, argv[0], argv_length[0], argv[1], argv_length[1], argv[2], argv_length[2], reply);
    if (rc == 0) gr_reply_ok(reply);
}

static void reset(gr_server_t *db, gr_reply_t *reply) {
    gr_connection_t *conn = db->current;
    gr_transaction_forget(db, conn);   /* DISCARD and UNWATCH */
    gr_pubsub_forget(db->pubsub, &conn->subscriber);   /* every subscription, unconfirmed */
    gr_monitor_remove(db, conn);                        /* out of MONITOR mode */
    gr_tracking_disable(db, conn);                      /* CLIENT TRACKING off */
    conn->db_index = 0;
    conn->no_touch = conn->no_evict = 0;   /* Redis's clearClientConnectionState */
    db->keyspace = db->keyspaces[0];
    if (conn->kind != GR_CONN_RING) {   /* a ring session keeps the user it attached as */
        conn->protocol = 2;
        conn->user = gr_acl_implicit_user(db->acl);
    }
    gr_reply_status(reply, "RESET", 5);
}

/* ---- CLIENT ---- */

static void reply_text(gr_text_t *text, gr_reply_t *reply) {
    if (text->failed) gr_reply_oom(reply);
    else gr_reply_verbatim(reply, (const uint8_t *)text->data, text->length);
    gr_text_free(text);
}

static int parse_id(const uint8_t *arg, size_t length, int64_t *id) {
    return gr_bytes_to_int64(arg, length, id) == 0 && *id > 0 ? 0 : -1;
}

/* Redis's getClientType: master (the primary's link), replica, pubsub (subscribed), normal. */
enum { TYPE_NORMAL = 0, TYPE_REPLICA = 1, TYPE_PUBSUB = 2, TYPE_MASTER = 3 };
static int client_type(const gr_connection_t *conn) {
    if (conn->repl_master) return TYPE_MASTER;
    if (conn->repl_peer.state) return TYPE_REPLICA;
    return gr_subscriber_total(&conn->subscriber) ? TYPE_PUBSUB : TYPE_NORMAL;
}

/* TYPE's value: its TYPE_*, or -1 unknown. */
static int parse_type(const uint8_t *value, size_t length) {
    if (gr_word_is(value, length, "normal")) return TYPE_NORMAL;
    if (gr_word_is(value, length, "pubsub")) return TYPE_PUBSUB;
    if (gr_word_is(value, length, "master")) return TYPE_MASTER;
    if (gr_word_is(value, length, "replica") || gr_word_is(value, length, "slave")) return TYPE_REPLICA;
    return -1;
}

static void client_list(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                        gr_reply_t *reply) {
    int wanted_type = -1;
    size_t ids_from = 0;
    if (argc >= 4 && gr_word_is(argv[2], argv_length[2], "type") && argc == 4) {
        wanted_type = parse_type(argv[3], argv_length[3]);
        if (wanted_type < 0) {
            char text[160];
            snprintf(text, sizeof text, "ERR Unknown client type '%.*s'", (int)(argv_length[3] > 64 ? 64 : argv_length[3]),
                     (const char *)argv[3]);
            gr_reply_error_text(reply, GR_ERR_GENERIC, text);
            return;
        }
    } else if (argc >= 4 && gr_word_is(argv[2], argv_length[2], "id")) {
        ids_from = 3;
        for (size_t i = 3; i < argc; i++) {
            int64_t id;
            if (parse_id(argv[i], argv_length[i], &id) != 0) {
                gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR Invalid client ID");
                return;
            }
        }
    } else if (argc != 2) {
        gr_reply_error_text(reply, GR_ERR_SYNTAX, "ERR syntax error");
        return;
    }
    gr_text_t text;
    if (gr_text_init(&text, 1024) != 0) { gr_reply_oom(reply); return; }
    /* oldest first, as Redis lists them */
    gr_connection_t *last = db->connections;
    while (last && last->next) last = last->next;
    for (gr_connection_t *conn = last; conn; conn = conn->prev) {
        if (wanted_type >= 0 && client_type(conn) != wanted_type) continue;
        if (ids_from) {
            int wanted = 0;
            for (size_t i = ids_from; i < argc && !wanted; i++) {
                int64_t id;
                wanted = parse_id(argv[i], argv_length[i], &id) == 0 && id == conn->id;
            }
            if (!wanted) continue;
        }
        gr_connection_describe(db, conn, &text);
    }
    reply_text(&text, reply);
}

static void kill_connection(gr_server_t *db, gr_connection_t *conn) {
    if (conn->kill_requested) return;
    conn->kill_requested = 1;
    db->kills_pending++;
}

static int text_is(const char *text, const uint8_t *arg, size_t length) {
    return strlen(text) == length && memcmp(text, arg, length) == 0;
}

static void client_kill(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                        gr_reply_t *reply) {
    if (argc == 3) {   /* the old form: CLIENT KILL addr:port */
        for (gr_connection_t *conn = db->connections; conn; conn = conn->next) {
            if (text_is(conn->addr, argv[2], argv_length[2])) {
                kill_connection(db, conn);
                gr_reply_ok(reply);
                return;
            }
        }
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR No such client");
        return;
    }
    if ((argc - 2) % 2 != 0) { gr_reply_error_text(reply, GR_ERR_SYNTAX, "ERR syntax error"); return; }
    int64_t id = 0, max_age = 0;
    const uint8_t *addr = NULL, *laddr = NULL;
    size_t addr_length = 0, laddr_length = 0;
    int skip_me = 1, wanted_type = -1;   /* TYPE's TYPE_*, -1: any */
    for (size_t i = 2; i < argc; i += 2) {
        const uint8_t *option = argv[i], *value = argv[i + 1];
        size_t option_length = argv_length[i], value_length = argv_length[i + 1];
        if (gr_word_is(option, option_length, "id")) {
            if (parse_id(value, value_length, &id) != 0) {
                gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR client-id should be greater than 0");
                return;
            }
        } else if (gr_word_is(option, option_length, "addr")) {
            addr = value, addr_length = value_length;
        } else if (gr_word_is(option, option_length, "laddr")) {
            laddr = value, laddr_length = value_length;
        } else if (gr_word_is(option, option_length, "type")) {
            wanted_type = parse_type(value, value_length);
            if (wanted_type < 0) {
                char text[160];
                snprintf(text, sizeof text, "ERR Unknown client type '%.*s'", (int)(value_length > 64 ? 64 : value_length),
                         (const char *)value);
                gr_reply_error_text(reply, GR_ERR_GENERIC, text);
                return;
            }
        } else if (gr_word_is(option, option_length, "user")) {
            if (!gr_word_is(value, value_length, "default")) {
                char text[160];
                snprintf(text, sizeof text, "ERR No such user '%.*s'", (int)(value_length > 64 ? 64 : value_length),
                         (const char *)value);
                gr_reply_error_text(reply, GR_ERR_GENERIC, text);
                return;
            }
        } else if (gr_word_is(option, option_length, "skipme")) {
            if (gr_word_is(value, value_length, "yes")) skip_me = 1;
            else if (gr_word_is(value, value_length, "no")) skip_me = 0;
            else { gr_reply_error_text(reply, GR_ERR_SYNTAX, "ERR syntax error"); return; }
        } else if (gr_word_is(option, option_length, "maxage")) {
            if (gr_bytes_to_int64(value, value_length, &max_age) != 0 || max_age < 0) {
                gr_reply_error_text(reply, GR_ERR_NOT_INTEGER, "ERR value is not an integer or out of range");
                return;
            }
        } else {
            gr_reply_error_text(reply, GR_ERR_SYNTAX, "ERR syntax error");
            return;
        }
    }
    int64_t killed = 0;
    for (gr_connection_t *conn = db->connections; conn; conn = conn->next) {
        if (id && conn->id != id) continue;
        if (wanted_type >= 0 && client_type(conn) != wanted_type) continue;
        if (addr && !text_is(conn->addr, addr, addr_length)) continue;
        if (laddr && !text_is(conn->laddr, laddr, laddr_length)) continue;
        if (max_age && (db->now_ms - conn->created_ms) / 1000 < max_age) continue;
        if (skip_me && conn == db->current) continue;
        if (conn->kill_requested) continue;
        kill_connection(db, conn);
        killed++;
    }
    gr_reply_integer(reply, killed);
}

static void client_setinfo(gr_connection_t *conn, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                           gr_reply_t *reply) {
    if (argc != 4) { gr_reply_arity_error(reply, "client|setinfo"); return; }
    char *field;
    size_t size;
    const char *label;
    if (gr_word_is(argv[2], argv_length[2], "lib-name")) field = conn->lib_name, size = sizeof conn->lib_name, label = "lib-name";
    else if (gr_word_is(argv[2], argv_length[2], "lib-ver")) field = conn->lib_ver, size = sizeof conn->lib_ver, label = "lib-ver";
    else {
        char text[160];
        snprintf(text, sizeof text, "ERR Unrecognized option '%.*s'", (int)(argv_length[2] > 64 ? 64 : argv_length[2]),
                 (const char *)argv[2]);
        gr_reply_error_text(reply, GR_ERR_GENERIC, text);
        return;
    }
    if (!valid_client_text(argv[3], argv_length[3]) || argv_length[3] >= size) {
        char text[160];
        snprintf(text, sizeof text, "ERR %s cannot contain spaces, newlines or special characters, "
                                    "and is limited to %zu bytes.", label, size - 1);
        gr_reply_error_text(reply, GR_ERR_GENERIC, text);
        return;
    }
    memcpy(field, argv[3], argv_length[3]);
    field[argv_length[3]] = '\0';
    gr_reply_ok(reply);
}

/* CLIENT UNBLOCK id [TIMEOUT|ERROR]: Redis's checks in Redis's order (the reason, then the id);
 * 1 when a connection of that id, over either transport, was blocked and is now answered. */
static void client_unblock(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                           gr_reply_t *reply) {
    if (argc < 3) { gr_reply_arity_error(reply, "client|unblock"); return; }
    if (argc > 4) {   /* Redis's addReplySubcommandSyntaxError, naming the subcommand as sent */
        char text[256];
        snprintf(text, sizeof text, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try CLIENT HELP.",
                 (int)(argv_length[1] > 128 ? 128 : argv_length[1]), (const char *)argv[1]);
        gr_reply_error_text(reply, GR_ERR_GENERIC, text);
        return;
    }
    int with_error = 0;
    if (argc == 4) {
        if (gr_word_is(argv[3], argv_length[3], "error")) with_error = 1;
        else if (!gr_word_is(argv[3], argv_length[3], "timeout")) {
            gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
            return;
        }
    }
    int64_t id;
    if (gr_bytes_to_int64(argv[2], argv_length[2], &id) != 0) {
        gr_reply_error_text(reply, GR_ERR_NOT_INTEGER, "ERR value is not an integer or out of range");
        return;
    }
    for (gr_connection_t *conn = db->connections; conn; conn = conn->next)
        if (conn->id == id) {
            gr_reply_integer(reply, gr_blocking_unblock(db, conn, with_error));
            return;
        }
    gr_reply_integer(reply, 0);
}

/* ---- CLIENT TRACKING, CACHING, TRACKINGINFO, GETREDIR (exec/tracking.h) ---- */

#define TRACKING_PREFIXES_MAX 256

/* CLIENT TRACKING ON|OFF [REDIRECT id] [BCAST] [PREFIX p]... [OPTIN] [OPTOUT] [NOLOOP]: Redis
 * 7.0's checks in its order, with its texts. */
static void client_tracking(gr_server_t *db, gr_connection_t *conn, size_t argc, const uint8_t *const *argv,
                            const size_t *argv_length, gr_reply_t *reply) {
    int64_t redirect = 0;
    uint32_t options = 0;
    gr_bytes_t prefixes[TRACKING_PREFIXES_MAX];
    size_t prefix_count = 0;
    for (size_t j = 3; j < argc; j++) {
        int more = j + 1 < argc;
        if (gr_word_is(argv[j], argv_length[j], "redirect") && more) {
            j++;
            if (redirect != 0) {
                gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR A client can only redirect to a single other client");
                return;
            }
            if (gr_bytes_to_int64(argv[j], argv_length[j], &redirect) != 0) {
                gr_reply_error_text(reply, GR_ERR_NOT_INTEGER, "ERR value is not an integer or out of range");
                return;
            }
            if (!gr_tracking_find_connection(db, redirect)) {
                gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR The client ID you want redirect to does not exist");
                return;
            }
        } else if (gr_word_is(argv[j], argv_length[j], "bcast")) {
            options |= GR_TRACKING_BCAST;
        } else if (gr_word_is(argv[j], argv_length[j], "optin")) {
            options |= GR_TRACKING_OPTIN;
        } else if (gr_word_is(argv[j], argv_length[j], "optout")) {
            options |= GR_TRACKING_OPTOUT;
        } else if (gr_word_is(argv[j], argv_length[j], "noloop")) {
            options |= GR_TRACKING_NOLOOP;
        } else if (gr_word_is(argv[j], argv_length[j], "prefix") && more) {
            j++;
            if (prefix_count == TRACKING_PREFIXES_MAX) {
                gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR too many prefixes in one CLIENT TRACKING call");
                return;
            }
            prefixes[prefix_count++] = (gr_bytes_t){argv[j], (uint32_t)argv_length[j]};
        } else {
            gr_reply_error_text(reply, GR_ERR_SYNTAX, "ERR syntax error");
            return;
        }
    }
    if (gr_word_is(argv[2], argv_length[2], "on")) {
        const char *refusal = NULL;
        if (!(options & GR_TRACKING_BCAST) && prefix_count)
            refusal = "ERR PREFIX option requires BCAST mode to be enabled";
        else if ((conn->tracking & GR_TRACKING_ON) &&
                 !!(conn->tracking & GR_TRACKING_BCAST) != !!(options & GR_TRACKING_BCAST))
            refusal = "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then "
                      "re-enabling it with a different mode.";
        else if ((options & GR_TRACKING_BCAST) && (options & (GR_TRACKING_OPTIN | GR_TRACKING_OPTOUT)))
            refusal = "ERR OPTIN and OPTOUT are not compatible with BCAST";
        else if ((options & GR_TRACKING_OPTIN) && (options & GR_TRACKING_OPTOUT))
            refusal = "ERR You can't specify both OPTIN mode and OPTOUT mode";
        else if (((options & GR_TRACKING_OPTIN) && (conn->tracking & GR_TRACKING_OPTOUT)) ||
                 ((options & GR_TRACKING_OPTOUT) && (conn->tracking & GR_TRACKING_OPTIN)))
            refusal = "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then "
                      "re-enabling it with a different mode.";
        if (refusal) {
            gr_reply_error_text(reply, GR_ERR_GENERIC, refusal);
            return;
        }
        if (options & GR_TRACKING_BCAST) {
            char error[600];
            if (gr_tracking_check_prefixes(conn, prefixes, prefix_count, error, sizeof error) != 0) {
                gr_reply_error_text(reply, GR_ERR_GENERIC, error);
                return;
            }
        }
        if (gr_tracking_enable(db, conn, redirect, options, prefixes, prefix_count) != 0) {
            gr_reply_oom(reply);
            return;
        }
    } else if (gr_word_is(argv[2], argv_length[2], "off")) {
        gr_tracking_disable(db, conn);
    } else {
        gr_reply_error_text(reply, GR_ERR_SYNTAX, "ERR syntax error");
        return;
    }
    gr_reply_ok(reply);
}

static void client_caching(gr_connection_t *conn, const uint8_t *opt, size_t length, gr_reply_t *reply) {
    if (!(conn->tracking & GR_TRACKING_ON)) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR CLIENT CACHING can be called only when the client is in "
                                                   "tracking mode with OPTIN or OPTOUT mode enabled");
    } else if (gr_word_is(opt, length, "yes")) {
        if (!(conn->tracking & GR_TRACKING_OPTIN)) {
            gr_reply_error_text(reply, GR_ERR_GENERIC,
                                "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.");
            return;
        }
        conn->tracking |= GR_TRACKING_CACHING;
        gr_reply_ok(reply);
    } else if (gr_word_is(opt, length, "no")) {
        if (!(conn->tracking & GR_TRACKING_OPTOUT)) {
            gr_reply_error_text(reply, GR_ERR_GENERIC,
                                "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.");
            return;
        }
        conn->tracking |= GR_TRACKING_CACHING;
        gr_reply_ok(reply);
    } else {
        gr_reply_error_text(reply, GR_ERR_SYNTAX, "ERR syntax error");
    }
}

static void reply_prefix(void *context, gr_bytes_t prefix) { gr_reply_bulk(context, prefix.data, prefix.length); }

/* CLIENT TRACKINGINFO: Redis's map of flags (a set), redirect and prefixes. */
static void client_trackinginfo(const gr_connection_t *conn, gr_reply_t *reply) {
    const char *flags[8];
    size_t n = 0;
    uint8_t t = conn->tracking;
    flags[n++] = (t & GR_TRACKING_ON) ? "on" : "off";
    if (t & GR_TRACKING_BCAST) flags[n++] = "bcast";
    if (t & GR_TRACKING_OPTIN) {
        flags[n++] = "optin";
        if (t & GR_TRACKING_CACHING) flags[n++] = "caching-yes";
    }
    if (t & GR_TRACKING_OPTOUT) {
        flags[n++] = "optout";
        if (t & GR_TRACKING_CACHING) flags[n++] = "caching-no";
    }
    if (t & GR_TRACKING_NOLOOP) flags[n++] = "noloop";
    if (t & GR_TRACKING_BROKEN_REDIR) flags[n++] = "broken_redirect";
    gr_reply_map_begin(reply, 3);
    gr_reply_bulk(reply, (const uint8_t *)"flags", 5);
    gr_reply_set_begin(reply, n);
    for (size_t i = 0; i < n; i++) gr_reply_bulk(reply, (const uint8_t *)flags[i], strlen(flags[i]));
    gr_reply_bulk(reply, (const uint8_t *)"redirect", 8);
    gr_reply_integer(reply, (t & GR_TRACKING_ON) ? conn->tracking_redirect : -1);
    gr_reply_bulk(reply, (const uint8_t *)"prefixes", 8);
    gr_reply_array_begin(reply, gr_tracking_each_prefix(conn, NULL, NULL));
    gr_tracking_each_prefix(conn, reply_prefix, reply);
}


/* CLIENT PAUSE timeout [WRITE|ALL]: Redis 7.0's checks in its order (the arity, the mode,
 * then the timeout); exec/pause.h holds the calls. */
static void client_pause(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                         gr_reply_t *reply) {
    if (argc > 4) {
        char text[256];
        snprintf(text, sizeof text, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try CLIENT HELP.",
                 (int)(argv_length[1] > 128 ? 128 : argv_length[1]), (const char *)argv[1]);
        gr_reply_error_text(reply, GR_ERR_GENERIC, text);
        return;
    }
    int mode = GR_PAUSE_ALL;
    if (argc == 4) {
        if (gr_word_is(argv[3], argv_length[3], "write")) mode = GR_PAUSE_WRITE;
        else if (!gr_word_is(argv[3], argv_length[3], "all")) {
            gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR CLIENT PAUSE mode must be WRITE or ALL");
            return;
        }
    }
    int64_t ms;
    if (gr_bytes_to_int64(argv[2], argv_length[2], &ms) != 0) {
        gr_reply_error_text(reply, GR_ERR_NOT_INTEGER, "ERR timeout is not an integer or out of range");
        return;
    }
    if (ms < 0) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR timeout is negative");
        return;
    }
    int64_t now = gr_monotonic_ns();
    int64_t end = ms > (INT64_MAX - now) / 1000000 ? INT64_MAX : now + ms * 1000000;
    gr_pause_start(db, mode, end);
    gr_reply_ok(reply);
}

static void client(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    gr_connection_t *conn = db->current;
    const uint8_t *sub = argv[1];
    size_t length = argv_length[1];
    if (conn->tracking) conn->tracking_caching_hold = 1;   /* CLIENT CACHING's flag outlives a CLIENT command */
    if (gr_word_is(sub, length, "id") && argc == 2) {
        gr_reply_integer(reply, conn->id);
    } else if (gr_word_is(sub, length, "tracking") && argc >= 3) {
        client_tracking(db, conn, argc, argv, argv_length, reply);
    } else if (gr_word_is(sub, length, "caching") && argc >= 3) {
        client_caching(conn, argv[2], argv_length[2], reply);
    } else if (gr_word_is(sub, length, "getredir") && argc == 2) {
        gr_reply_integer(reply, (conn->tracking & GR_TRACKING_ON) ? conn->tracking_redirect : -1);
    } else if (gr_word_is(sub, length, "trackinginfo") && argc == 2) {
        client_trackinginfo(conn, reply);
    } else if (gr_word_is(sub, length, "setname") && argc == 3) {
        if (set_name(conn, argv[2], argv_length[2], reply) == 0) gr_reply_ok(reply);
    } else if (gr_word_is(sub, length, "getname") && argc == 2) {
        if (conn->name[0]) gr_reply_bulk(reply, (const uint8_t *)conn->name, strlen(conn->name));
        else gr_reply_nil(reply);
    } else if (gr_word_is(sub, length, "setinfo")) {
        client_setinfo(conn, argc, argv, argv_length, reply);
    } else if (gr_word_is(sub, length, "info") && argc == 2) {
        gr_text_t text;
        if (gr_text_init(&text, 512) != 0) { gr_reply_oom(reply); return; }
        gr_connection_describe(db, conn, &text);
        reply_text(&text, reply);
    } else if (gr_word_is(sub, length, "list")) {
        client_list(db, argc, argv, argv_length, reply);
    } else if (gr_word_is(sub, length, "kill") && argc >= 3) {
        client_kill(db, argc, argv, argv_length, reply);
    } else if (gr_word_is(sub, length, "unblock")) {
        client_unblock(db, argc, argv, argv_length, reply);
    } else if (gr_word_is(sub, length, "pause") && argc >= 3) {
        client_pause(db, argc, argv, argv_length, reply);
    } else if (gr_word_is(sub, length, "unpause") && argc == 2) {
        gr_pause_end(db);
        gr_reply_ok(reply);
    } else if (gr_word_is(sub, length, "reply") && argc == 3) {
        /* Redis's: ON answers OK; OFF and SKIP answer nothing (the RESP transport takes back the
         * bytes of every reply while off, and of the next command's after SKIP). Over the ring
         * every request has a reply slot its client waits on, so it is refused there. */
        if (conn->kind == GR_CONN_RING) {
            gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR CLIENT REPLY is not available over the ring: every ring request is answered");
        } else if (gr_word_is(argv[2], argv_length[2], "on")) {
            conn->reply_off = conn->reply_skip_next = 0;
            gr_reply_ok(reply);
        } else if (gr_word_is(argv[2], argv_length[2], "off")) {
            conn->reply_off = 1;
        } else if (gr_word_is(argv[2], argv_length[2], "skip")) {
            if (!conn->reply_off) conn->reply_skip_next = 1;
        } else {
            gr_reply_error_text(reply, GR_ERR_SYNTAX, "ERR syntax error");
        }
    } else if ((gr_word_is(sub, length, "no-evict") || gr_word_is(sub, length, "no-touch")) && argc == 3) {
        /* NO-EVICT: maxmemory-clients passes this client over (flag e); NO-TOUCH (Redis 7.2) makes this client's lookups leave the LRU/LFU alone */
        uint8_t *flag = gr_word_is(sub, length, "no-evict") ? &conn->no_evict : &conn->no_touch;
        if (gr_word_is(argv[2], argv_length[2], "on")) *flag = 1, gr_reply_ok(reply);
        else if (gr_word_is(argv[2], argv_length[2], "off")) *flag = 0, gr_reply_ok(reply);
        else gr_reply_error_text(reply, GR_ERR_SYNTAX, "ERR syntax error");
    } else if (gr_word_is(sub, length, "help") && argc == 2) {
        static const char *lines[] = {
            "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "GETNAME", "    Return the name of the current connection.",
            "CACHING (YES|NO)", "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
            "GETREDIR", "    Return the client ID we are redirecting to when tracking is enabled.",
            "ID", "    Return the ID of the current connection.",
            "INFO", "    Return information about the current client connection.",
            "KILL <ip:port>", "    Kill connection made from <ip:port>.",
            "KILL <option> <value> [<option> <value> [...]]", "    Kill connections. Options: ID, ADDR, LADDR, TYPE, USER, SKIPME, MAXAGE.",
            "LIST [TYPE <type>] [ID <id> [<id> ...]]", "    Return information about client connections (RESP and ring).",
            "NO-EVICT (ON|OFF)", "    Protect current client connection from eviction.",
            "NO-TOUCH (ON|OFF)", "    Will not touch LRU/LFU stats when this mode is on.",
            "PAUSE <timeout> [WRITE|ALL]", "    Suspend all, or just write, clients for <timeout> milliseconds.",
            "REPLY (ON|OFF|SKIP)", "    Control the replies sent to the current connection (RESP only).",
            "SETINFO <option> <value>", "    Set LIB-NAME or LIB-VER for the current connection.",
            "SETNAME <name>", "    Assign the name <name> to the current connection.",
            "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]] [OPTIN] [OPTOUT] [NOLOOP]",
            "    Control server assisted client side caching.",
            "TRACKINGINFO", "    Report tracking status for the current connection.",
            "UNBLOCK <clientid> [TIMEOUT|ERROR]", "    Unblock the specified blocked client.",
            "UNPAUSE", "    Stop the current client pause, resuming traffic.",
            "HELP", "    Print this help.",
        };
        gr_reply_help(reply, lines, sizeof lines / sizeof lines[0]);
    } else if (gr_word_is(sub, length, "id") || gr_word_is(sub, length, "setname") || gr_word_is(sub, length, "getname") ||
               gr_word_is(sub, length, "info") || gr_word_is(sub, length, "kill") || gr_word_is(sub, length, "no-evict") ||
               gr_word_is(sub, length, "no-touch") ||
               gr_word_is(sub, length, "reply") || gr_word_is(sub, length, "pause") || gr_word_is(sub, length, "unpause") ||
               gr_word_is(sub, length, "tracking") ||
               gr_word_is(sub, length, "caching") || gr_word_is(sub, length, "getredir") ||
               gr_word_is(sub, length, "trackinginfo") ||
               gr_word_is(sub, length, "help")) {
        gr_reply_subcommand_arity_error(reply, "client", sub, length);
    } else {
        gr_reply_unknown_subcommand(reply, sub, length, "CLIENT");
    }
}

#define WITH_CONNECTION(db, reply)                                                              \
    if (!(db)->current) {                                                                       \
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR no connection context");                \
        return;                                                                                 \
    }

void gr_cmd_hello(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    WITH_CONNECTION(db, reply)
    hello(db, argc, argv, argv_length, reply);
}

void gr_cmd_auth(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    WITH_CONNECTION(db, reply)
    auth(db, argc, argv, argv_length, reply);
}

void gr_cmd_reset(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    (void)argc, (void)argv, (void)argv_length;
    WITH_CONNECTION(db, reply)
    reset(db, reply);
}

/* MONITOR: from now on every other call is written to this connection (exec/monitor.h). Redis
 * answers OK once, and nothing when it already monitors. */
void gr_cmd_monitor(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                    gr_reply_t *reply) {
    (void)argc, (void)argv, (void)argv_length;
    WITH_CONNECTION(db, reply)
    gr_connection_t *conn = db->current;
    if (conn->kind == GR_CONN_RING) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR MONITOR is not available over the ring: monitor over RESP (redis-cli monitor)");
        return;
    }
    if (db->call && db->call->outer) {   /* inside EXEC */
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR MONITOR isn't allowed for DENY BLOCKING client");
        return;
    }
    if (conn->monitor) return;
    if (gr_monitor_add(db, conn) != 0) { gr_reply_oom(reply); return; }
    gr_reply_ok(reply);
}

void gr_cmd_client(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    WITH_CONNECTION(db, reply)
    client(db, argc, argv, argv_length, reply);
}
