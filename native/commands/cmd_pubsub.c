/* cmd_pubsub.c — SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE, SSUBSCRIBE, SUNSUBSCRIBE,
 * PUBLISH, SPUBLISH and PUBSUB, over exec/pubsub.h's registry (rows in pubsub.def).
 *
 * The current connection's embedded subscriber (db.h) is what subscribes; messages reach
 * subscribers through each transport's deliver callback. Each (un)subscription is confirmed
 * with its own frame [kind, name, count] written with gr_reply_push_begin (RESP3: a push;
 * RESP2: an array), as Redis: count is channels + patterns for the first four commands and
 * shard channels for SSUBSCRIBE/SUNSUBSCRIBE; an UNSUBSCRIBE with nothing to drop answers one
 * frame with a nil name. The RESP2 subscribed-mode rules are exec's (db.c), since they
 * refuse other commands before they run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands/commands.h"
#include "exec/pubsub.h"
#include "exec/server_text.h"

static gr_bytes_t arg(const uint8_t *const *argv, const size_t *argv_length, size_t i) {
    return (gr_bytes_t){argv[i], (uint32_t)argv_length[i]};
}

typedef struct confirm {
    gr_reply_t *reply;
    gr_subscriber_t *subscriber;
    gr_pubsub_space_t space;
    const char *kind;
} confirm_t;

static uint32_t confirm_count(const confirm_t *c) {
    return c->space == GR_PUBSUB_SHARD_CHANNELS ? c->subscriber->counts[GR_PUBSUB_SHARD_CHANNELS]
                                                 : gr_subscriber_count(c->subscriber);
}

static void confirm(const confirm_t *c, const gr_bytes_t *name) {
    gr_reply_push_begin(c->reply, 3);
    gr_reply_bulk(c->reply, (const uint8_t *)c->kind, strlen(c->kind));
    if (name) gr_reply_bulk(c->reply, name->data, name->length);
    else gr_reply_nil(c->reply);
    gr_reply_integer(c->reply, confirm_count(c));
}

static void confirm_each(void *context, gr_bytes_t name) { confirm(context, &name); }

static gr_subscriber_t *subscriber_or_reply(gr_server_t *db, gr_reply_t *reply) {
    gr_connection_t *conn = db->current;
    if (!conn || !conn->subscriber.deliver) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR this connection's transport cannot subscribe");
        return NULL;
    }
    return &conn->subscriber;
}

static void subscribe(gr_server_t *db, gr_pubsub_space_t space, const char *kind, size_t argc, const uint8_t *const *argv,
                      const size_t *argv_length, gr_reply_t *reply) {
    gr_subscriber_t *subscriber = subscriber_or_reply(db, reply);
    if (!subscriber) return;
    confirm_t c = {reply, subscriber, space, kind};
    for (size_t i = 1; i < argc; i++) {
        gr_bytes_t name = arg(argv, argv_length, i);
        if (gr_pubsub_subscribe(db->pubsub, subscriber, space, name) < 0) {
            gr_reply_oom(reply);
            return;
        }
        confirm(&c, &name);
    }
}

static void unsubscribe(gr_server_t *db, gr_pubsub_space_t space, const char *kind, size_t argc, const uint8_t *const *argv,
                        const size_t *argv_length, gr_reply_t *reply) {
    gr_subscriber_t *subscriber = subscriber_or_reply(db, reply);
    if (!subscriber) return;
    confirm_t c = {reply, subscriber, space, kind};
    if (argc == 1) {
        if (subscriber->counts[space] == 0) confirm(&c, NULL);
        else gr_pubsub_unsubscribe_all(db->pubsub, subscriber, space, confirm_each, &c);
        return;
    }
    for (size_t i = 1; i < argc; i++) {
        gr_bytes_t name = arg(argv, argv_length, i);
        gr_pubsub_unsubscribe(db->pubsub, subscriber, space, name);
        confirm(&c, &name);
    }
}

void gr_cmd_subscribe(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    subscribe(db, GR_PUBSUB_CHANNELS, "subscribe", argc, argv, argv_length, reply);
}

void gr_cmd_psubscribe(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    subscribe(db, GR_PUBSUB_PATTERNS, "psubscribe", argc, argv, argv_length, reply);
}

void gr_cmd_ssubscribe(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    subscribe(db, GR_PUBSUB_SHARD_CHANNELS, "ssubscribe", argc, argv, argv_length, reply);
}

void gr_cmd_unsubscribe(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    unsubscribe(db, GR_PUBSUB_CHANNELS, "unsubscribe", argc, argv, argv_length, reply);
}

void gr_cmd_punsubscribe(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                         gr_reply_t *reply) {
    unsubscribe(db, GR_PUBSUB_PATTERNS, "punsubscribe", argc, argv, argv_length, reply);
}

void gr_cmd_sunsubscribe(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                         gr_reply_t *reply) {
    unsubscribe(db, GR_PUBSUB_SHARD_CHANNELS, "sunsubscribe", argc, argv, argv_length, reply);
}

/* PUBLISH and SPUBLISH reach the replicas too (their subscribers get the message), never the
 * AOF: Redis's forceCommandPropagation(c, PROPAGATE_REPL). */
void gr_cmd_publish(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    gr_reply_integer(reply, gr_pubsub_publish(db->pubsub, arg(argv, argv_length, 1), arg(argv, argv_length, 2)));
    gr_propagate_replication_only(db, argc, argv, argv_length);
}

void gr_cmd_spublish(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    gr_reply_integer(reply, gr_pubsub_spublish(db->pubsub, arg(argv, argv_length, 1), arg(argv, argv_length, 2)));
    gr_propagate_replication_only(db, argc, argv, argv_length);
}

/* ---- PUBSUB ---- */

typedef struct name_list {
    gr_bytes_t *names;
    size_t count, capacity;
    int failed;
} name_list_t;

static void collect_name(void *context, gr_bytes_t name) {
    name_list_t *list = context;
    if (list->failed) return;
    if (list->count == list->capacity) {
        size_t capacity = list->capacity ? list->capacity * 2 : 64;
        gr_bytes_t *grown = realloc(list->names, capacity * sizeof *grown);
        if (!grown) { list->failed = 1; return; }
        list->names = grown;
        list->capacity = capacity;
    }
    list->names[list->count++] = name;
}

/* CHANNELS / SHARDCHANNELS [pattern] */
static void reply_names(gr_server_t *db, gr_pubsub_space_t space, size_t argc, const uint8_t *const *argv,
                        const size_t *argv_length, gr_reply_t *reply) {
    gr_bytes_t pattern = argc == 3 ? arg(argv, argv_length, 2) : (gr_bytes_t){NULL, 0};
    name_list_t list = {0};
    gr_pubsub_each_name(db->pubsub, space, pattern, collect_name, &list);
    if (list.failed) {
        gr_reply_oom(reply);
    } else {
        gr_reply_array_begin(reply, list.count);
        for (size_t i = 0; i < list.count; i++) gr_reply_bulk(reply, list.names[i].data, list.names[i].length);
    }
    free(list.names);
}

/* NUMSUB / SHARDNUMSUB [name ...]: a flat array name, count, ... (an array in RESP3 too, as Redis 7.0) */
static void reply_numsub(gr_server_t *db, gr_pubsub_space_t space, size_t argc, const uint8_t *const *argv,
                         const size_t *argv_length, gr_reply_t *reply) {
    gr_reply_array_begin(reply, (argc - 2) * 2);
    for (size_t i = 2; i < argc; i++) {
        gr_bytes_t name = arg(argv, argv_length, i);
        gr_reply_bulk(reply, name.data, name.length);
        gr_reply_integer(reply, (int64_t)gr_pubsub_subscriber_count(db->pubsub, space, name));
    }
}

static void subcommand_syntax_error(gr_reply_t *reply, const uint8_t *sub, size_t length) {
    char text[200];
    int n = snprintf(text, sizeof text,
                     "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try PUBSUB HELP.",
                     (int)(length > 64 ? 64 : length), (const char *)sub);
    gr_reply_error(reply, GR_ERR_GENERIC, text, (size_t)n);
}

void gr_cmd_pubsub(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    const uint8_t *sub = argv[1];
    size_t sub_length = argv_length[1];
    if (gr_word_is(sub, sub_length, "channels")) {
        if (argc > 3) subcommand_syntax_error(reply, sub, sub_length);
        else reply_names(db, GR_PUBSUB_CHANNELS, argc, argv, argv_length, reply);
    } else if (gr_word_is(sub, sub_length, "shardchannels")) {
        if (argc > 3) subcommand_syntax_error(reply, sub, sub_length);
        else reply_names(db, GR_PUBSUB_SHARD_CHANNELS, argc, argv, argv_length, reply);
    } else if (gr_word_is(sub, sub_length, "numsub")) {
        reply_numsub(db, GR_PUBSUB_CHANNELS, argc, argv, argv_length, reply);
    } else if (gr_word_is(sub, sub_length, "shardnumsub")) {
        reply_numsub(db, GR_PUBSUB_SHARD_CHANNELS, argc, argv, argv_length, reply);
    } else if (gr_word_is(sub, sub_length, "numpat")) {
        if (argc != 2) gr_reply_subcommand_arity_error(reply, "pubsub", sub, sub_length);
        else gr_reply_integer(reply, (int64_t)gr_pubsub_name_count(db->pubsub, GR_PUBSUB_PATTERNS));
    } else if (gr_word_is(sub, sub_length, "help")) {
        if (argc != 2) {
            gr_reply_subcommand_arity_error(reply, "pubsub", sub, sub_length);
            return;
        }
        static const char *const lines[] = {
            "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "CHANNELS [<pattern>]",
            "    List the channels that have subscribers, those matching <pattern> if given.",
            "NUMPAT",
            "    Count the patterns clients are subscribed to.",
            "NUMSUB [<channel> ...]",
            "    Count each channel's subscribers (pattern subscriptions not included).",
            "SHARDCHANNELS [<pattern>]",
            "    List the shard channels that have subscribers, those matching <pattern> if given.",
            "SHARDNUMSUB [<shardchannel> ...]",
            "    Count each shard channel's subscribers.",
            "HELP",
            "    Print this help.",
        };
        gr_reply_help(reply, lines, sizeof lines / sizeof lines[0]);
    } else {
        gr_reply_unknown_subcommand(reply, sub, sub_length, "PUBSUB");
    }
}
