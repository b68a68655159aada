/* cmd_stream_group.c — the STREAM command layer's consumer-group commands: XGROUP (CREATE,
 * SETID, DESTROY, CREATECONSUMER, DELCONSUMER, HELP), XACK, XPENDING, XCLAIM, XAUTOCLAIM and
 * XINFO (STREAM [FULL], GROUPS, CONSUMERS), with Redis 7.0's replies and error texts; a claim
 * propagates as Redis's XCLAIM ... FORCE JUSTID LASTID form. The engine's groups are
 * engines/stream/stream_group.c; the shared helpers are cmd_stream.c.
 */
#include <stdio.h>
#include <string.h>

#include "commands/cmd_stream_shared.h"
#include "core/number.h"
#include "exec/blocking.h"
#include "exec/lookup.h"

static int32_t running_db_index(const gr_server_t *db) { return db->current ? db->current->db_index : 0; }

static void reply_nogroup_for_key(gr_reply_t *reply, gr_bytes_t group, gr_bytes_t key) {
    size_t size = key.length + group.length + 64;
    char *text = gr_mem_alloc(size, GR_MEM_OTHER);
    if (!text) {
        gr_reply_oom(reply);
        return;
    }
    snprintf(text, size, "NOGROUP No such consumer group '%.*s' for key name '%.*s'", (int)group.length,
             (const char *)group.data, (int)key.length, (const char *)key.data);
    gr_reply_error_text(reply, GR_ERR_GENERIC, text);
    gr_mem_free(text, GR_MEM_OTHER);
}

static void reply_subcommand_error(gr_reply_t *reply, const char *container, const uint8_t *sub, size_t length) {
    char text[256];
    snprintf(text, sizeof text, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try %s HELP.",
             (int)(length > 128 ? 128 : length), (const char *)sub, container);
    gr_reply_error_text(reply, GR_ERR_GENERIC, text);
}

/* A container's subcommand check, as Redis's command lookup makes it before the handler runs:
 * an unknown name, or a known one with the wrong argument count. 0 when it may run. */
typedef struct subcommand_arity {
    const char *name;
    int arity;   /* Redis's: N exactly, -N at least N */
} subcommand_arity_t;

static int check_subcommand_or_reply(gr_reply_t *reply, const char *container, const subcommand_arity_t *table,
                                     size_t count, size_t argc, const uint8_t *sub, size_t length) {
    char text[300];
    for (size_t i = 0; i < count; i++) {
        if (!gr_word_is(sub, length, table[i].name)) continue;
        int arity = table[i].arity;
        if ((arity > 0 && (int)argc == arity) || (arity < 0 && (int)argc >= -arity)) return 0;
        char lower[16];
        size_t n = strlen(container);
        for (size_t k = 0; k <= n && k < sizeof lower; k++) lower[k] = (char)(container[k] | (k < n ? 0x20 : 0));
        snprintf(text, sizeof text, "ERR wrong number of arguments for '%s|%s' command", lower, table[i].name);
        gr_reply_error_text(reply, GR_ERR_WRONG_ARITY, text);
        return -1;
    }
    snprintf(text, sizeof text, "ERR unknown subcommand '%.*s'. Try %s HELP.", (int)(length > 128 ? 128 : length),
             (const char *)sub, container);
    gr_reply_error_text(reply, GR_ERR_GENERIC, text);
    return -1;
}

static const subcommand_arity_t xgroup_subcommands[] = {
    {"create", -5}, {"setid", -5}, {"destroy", 4}, {"createconsumer", 5}, {"delconsumer", 5}, {"help", 2}};
static const subcommand_arity_t xinfo_subcommands[] = {{"stream", -3}, {"groups", 3}, {"consumers", 4}, {"help", 2}};

static void reply_help(gr_reply_t *reply, const char *const *lines, size_t count) {
    gr_reply_array_begin(reply, count);
    for (size_t i = 0; i < count; i++) gr_reply_status(reply, lines[i], strlen(lines[i]));
}

/* ---- XGROUP ---- */

static const char *const xgroup_help[] = {
    "XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CREATE <key> <groupname> <id|$> [option]",
    "    Create a new consumer group. Options are:",
    "    * MKSTREAM",
    "      Create the empty stream if it does not exist.",
    "    * ENTRIESREAD entries_read",
    "      Set the group's entries_read counter (internal use).",
    "CREATECONSUMER <key> <groupname> <consumer>",
    "    Create a new consumer in the specified group.",
    "DELCONSUMER <key> <groupname> <consumer>",
    "    Remove the specified consumer.",
    "DESTROY <key> <groupname>",
    "    Remove the specified group.",
    "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
    "    Set the current group ID and entries_read counter.",
    "HELP",
    "    Prints this help.",
};

void gr_cmd_xgroup(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    const uint8_t *opt = argv[1];
    const size_t opt_length = argv_length[1];
    if (check_subcommand_or_reply(reply, "XGROUP", xgroup_subcommands, sizeof xgroup_subcommands / sizeof xgroup_subcommands[0],
                                  argc, opt, opt_length) != 0)
        return;
    gr_stream_t *stream = NULL;
    gr_stream_group_t *group = NULL;
    int mkstream = 0;
    int64_t entries_read = GR_STREAM_INVALID_ENTRIES_READ;
    const int is_create = gr_word_is(opt, opt_length, "create"), is_setid = gr_word_is(opt, opt_length, "setid");
    gr_bytes_t key = {0}, name = {0};
    if (argc >= 4) {
        if ((is_create && argc >= 5) || (is_setid && argc >= 5)) {
            for (size_t i = 5; i < argc;) {
                if (is_create && gr_word_is(argv[i], argv_length[i], "mkstream")) {
                    mkstream = 1;
                    i++;
                } else if (gr_word_is(argv[i], argv_length[i], "entriesread") && i + 1 < argc) {
                    if (gr_xcmd_int64_or_reply(argv[i + 1], argv_length[i + 1], &entries_read, NULL, reply) != 0) return;
                    if (entries_read < 0 && entries_read != GR_STREAM_INVALID_ENTRIES_READ) {
                        gr_xcmd_reply_error(reply, "ERR value for ENTRIESREAD must be positive or -1");
                        return;
                    }
                    i += 2;
                } else {
                    reply_subcommand_error(reply, "XGROUP", opt, opt_length);
                    return;
                }
            }
        }
        key = gr_xcmd_arg(argv, argv_length, 2);
        name = gr_xcmd_arg(argv, argv_length, 3);
        int found = gr_xcmd_find_or_reply(db, key, &stream, 1, reply);
        if (found < 0) return;
        if (!found) stream = NULL;
        if (!mkstream) {
            if (!stream) {
                gr_xcmd_reply_error(reply, "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you "
                                           "may want to use the MKSTREAM option to create an empty stream automatically.");
                return;
            }
            group = gr_stream_group_find(stream, name.data, name.length);
            if (!group && (is_setid || gr_word_is(opt, opt_length, "createconsumer") ||
                           gr_word_is(opt, opt_length, "delconsumer"))) {
                reply_nogroup_for_key(reply, name, key);
                return;
            }
        }
    }
    if (is_create && argc >= 5 && argc <= 8) {
        gr_stream_id_t id;
        if (argv_length[4] == 1 && argv[4][0] == '$') {
            id = stream ? stream->last_id : (gr_stream_id_t){0, 0};
        } else if (gr_xcmd_parse_id_or_reply(argv[4], argv_length[4], &id, 0, 1, NULL, reply) != 0) {
            return;
        }
        if (!stream) {
            if (!(stream = gr_stream_new()) || !gr_db_add_key(db, key, GR_TYPE_STREAM, stream)) {
                gr_stream_free(stream);
                gr_reply_oom(reply);
                return;
            }
            gr_db_mark_changed(db, key, 0);
        }
        gr_stream_group_t *made;
        int created = gr_stream_group_create(stream, name.data, name.length, &id, entries_read, &made);
        if (created < 0) {
            gr_reply_oom(reply);
        } else if (created == 0) {
            gr_reply_ok(reply);
            gr_db_mark_changed(db, key, 1);
            gr_call_notify(db, GR_NOTIFY_STREAM, "xgroup-create", key);
        } else {
            gr_call_events_stated(db);
            gr_reply_error_text(reply, GR_ERR_GENERIC, "BUSYGROUP Consumer Group name already exists");
        }
    } else if (is_setid && (argc == 5 || argc == 7)) {
        gr_stream_id_t id;
        if (argv_length[4] == 1 && argv[4][0] == '$') {
            id = stream->last_id;
        } else if (gr_xcmd_parse_id_or_reply(argv[4], argv_length[4], &id, 0, 0, NULL, reply) != 0) {
            return;
        }
        group->last_id = id;
        group->entries_read = entries_read;
        gr_reply_ok(reply);
        gr_db_mark_changed(db, key, 1);
        gr_call_notify(db, GR_NOTIFY_STREAM, "xgroup-setid", key);
    } else if (gr_word_is(opt, opt_length, "destroy") && argc == 4) {
        if (group) {
            gr_stream_group_destroy(stream, name.data, name.length);
            gr_reply_integer(reply, 1);
            gr_db_mark_changed(db, key, 1);
            gr_call_notify(db, GR_NOTIFY_STREAM, "xgroup-destroy", key);
            /* a blocked XREADGROUP on this group is answered -NOGROUP */
            gr_blocking_signal(db, running_db_index(db), key.data, key.length);
        } else {
            gr_call_events_stated(db);
            gr_reply_integer(reply, 0);
        }
    } else if (gr_word_is(opt, opt_length, "createconsumer") && argc == 5) {
        gr_stream_consumer_t *consumer;
        int made = gr_stream_consumer_create(group, argv[4], argv_length[4], gr_db_now_ms(db), &consumer);
        if (made < 0) {
            gr_reply_oom(reply);
            return;
        }
        if (made == 0) {
            gr_db_mark_changed(db, key, 1);
            gr_call_notify(db, GR_NOTIFY_STREAM, "xgroup-createconsumer", key);
        } else {
            gr_call_events_stated(db);
        }
        gr_reply_integer(reply, made == 0);
    } else if (gr_word_is(opt, opt_length, "delconsumer") && argc == 5) {
        gr_stream_consumer_t *consumer = gr_stream_consumer_find(group, argv[4], argv_length[4]);
        int64_t pending = 0;
        if (consumer) {
            pending = (int64_t)gr_stream_consumer_delete(group, consumer);
            gr_db_mark_changed(db, key, 1);
            gr_call_notify(db, GR_NOTIFY_STREAM, "xgroup-delconsumer", key);
        } else {
            gr_call_events_stated(db);
        }
        gr_reply_integer(reply, pending);
    } else if (gr_word_is(opt, opt_length, "help") && argc == 2) {
        reply_help(reply, xgroup_help, sizeof xgroup_help / sizeof xgroup_help[0]);
    } else {
        reply_subcommand_error(reply, "XGROUP", opt, opt_length);
    }
}

/* ---- XACK ---- */

/* XACK key group id... -> XAckRequest. The IDs are checked by the handler, after the key's
 * type, as Redis orders its errors (WRONGTYPE before an invalid ID). */
int gr_build_xack(gr_build_context_t *ctx) {
    gr_request_t *r = ctx->request;
    r->arg1 = gr_xcmd_arg(ctx->argv, ctx->argv_length, 2);
    r->item_count = (uint32_t)(ctx->argc - 3);
    for (size_t i = 3; i < ctx->argc; i++) r->items[i - 3] = gr_xcmd_arg(ctx->argv, ctx->argv_length, i);
    return 0;
}

/* XACK key group id... as given (what changed is only the group's PEL). */
void gr_render_xack(gr_server_t *db, const gr_request_t *request) {
    const gr_xack_view_t req = gr_xack_view(request);
    gr_effect_begin(db, 3 + (uint64_t)req.ids_count);
    gr_effect_word(db, "XACK");
    gr_effect_bytes(db, req.key);
    gr_effect_bytes(db, req.group);
    for (uint32_t i = 0; i < req.ids_count; i++) gr_effect_bytes(db, req.ids[i]);
}

void gr_cmd_xack(gr_server_t *db, const gr_request_t *request, gr_reply_t *reply) {
    const gr_xack_view_t req = gr_xack_view(request);
    if (req.ids_count == 0) {   /* only a ring message can say so */
        gr_reply_arity_error(reply, "xack");
        return;
    }
    gr_stream_t *stream;
    int found = gr_xcmd_find_or_reply(db, req.key, &stream, 0, reply);
    if (found < 0) return;
    gr_stream_group_t *group = found ? gr_stream_group_find(stream, req.group.data, req.group.length) : NULL;
    if (!group) {   /* Redis 7.0: no key or group is 0 before any ID is read */
        gr_reply_integer(reply, 0);
        return;
    }
    gr_stream_id_t on_stack[16];
    const size_t n = req.ids_count;
    gr_stream_id_t *ids = n <= 16 ? on_stack : gr_mem_alloc(n * sizeof *ids, GR_MEM_OTHER);
    if (!ids) {
        gr_reply_oom(reply);
        return;
    }
    for (size_t j = 0; j < n; j++)
        if (gr_xcmd_parse_id_or_reply(req.ids[j].data, req.ids[j].length, &ids[j], 0, 1, NULL, reply) != 0) goto done;
    int64_t acknowledged = 0;
    for (size_t j = 0; j < n; j++) acknowledged += gr_stream_nack_ack(group, &ids[j]);
    gr_db_count_changes(db, acknowledged);
    gr_reply_integer(reply, acknowledged);
done:
    if (ids != on_stack) gr_mem_free(ids, GR_MEM_OTHER);
}

/* ---- XPENDING ---- */

void gr_cmd_xpending(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                     gr_reply_t *reply) {
    const int summary = argc == 3;
    gr_stream_id_t start = {0, 0}, end = {0, 0};
    int64_t count = 0, min_idle = 0;
    const uint8_t *consumer_name = NULL;
    size_t consumer_length = 0;
    if (argc != 3 && (argc < 6 || argc > 9)) {
        gr_reply_error_text(reply, GR_ERR_SYNTAX, "ERR syntax error");
        return;
    }
    if (argc >= 6) {
        size_t at = 3;
        if (gr_word_is(argv[3], argv_length[3], "idle")) {
            if (gr_xcmd_int64_or_reply(argv[4], argv_length[4], &min_idle, NULL, reply) != 0) return;
            if (argc < 8) {
                gr_reply_error_text(reply, GR_ERR_SYNTAX, "ERR syntax error");
                return;
            }
            at += 2;
        }
        if (gr_xcmd_int64_or_reply(argv[at + 2], argv_length[at + 2], &count, NULL, reply) != 0) return;
        if (count < 0) count = 0;
        if (gr_xcmd_parse_start_or_reply(argv[at], argv_length[at], &start, reply) != 0) return;
        if (gr_xcmd_parse_end_or_reply(argv[at + 1], argv_length[at + 1], &end, reply) != 0) return;
        if (at + 3 < argc) consumer_name = argv[at + 3], consumer_length = argv_length[at + 3];
    }
    gr_bytes_t key = gr_xcmd_arg(argv, argv_length, 1), group_name = gr_xcmd_arg(argv, argv_length, 2);
    gr_stream_t *stream;
    int found = gr_xcmd_find_or_reply(db, key, &stream, 0, reply);
    if (found < 0) return;
    gr_stream_group_t *group = found ? gr_stream_group_find(stream, group_name.data, group_name.length) : NULL;
    if (!group) {
        gr_xcmd_reply_nogroup(reply, key, group_name, "");
        return;
    }
    if (summary) {
        gr_reply_array_begin(reply, 4);
        gr_reply_integer(reply, group->pel.count);
        if (group->pel.count == 0) {
            gr_reply_nil(reply);
            gr_reply_nil(reply);
            gr_reply_nil_array(reply);
            return;
        }
        gr_xcmd_reply_id(reply, &gr_stream_pel_at(&group->pel, 0)->id);
        gr_xcmd_reply_id(reply, &gr_stream_pel_at(&group->pel, group->pel.count - 1)->id);
        size_t with_pending = 0;
        for (size_t c = 0; c < group->consumer_count; c++) with_pending += group->consumers[c]->pel.count != 0;
        gr_reply_array_begin(reply, with_pending);
        for (size_t c = 0; c < group->consumer_count; c++) {
            const gr_stream_consumer_t *consumer = group->consumers[c];
            if (consumer->pel.count == 0) continue;
            gr_reply_array_begin(reply, 2);
            gr_reply_bulk(reply, consumer->name, consumer->name_length);
            char text[24];
            size_t length = (size_t)snprintf(text, sizeof text, "%u", consumer->pel.count);
            gr_reply_bulk(reply, (const uint8_t *)text, length);
        }
        return;
    }
    const gr_stream_pel_t *pel = &group->pel;
    if (consumer_name) {
        const gr_stream_consumer_t *consumer = gr_stream_consumer_find(group, consumer_name, consumer_length);
        if (!consumer) {
            gr_reply_array_begin(reply, 0);
            return;
        }
        pel = &consumer->pel;
    }
    const int64_t now = gr_db_now_ms(db);
    /* the matching items, counted first (the reply's length leads) */
    size_t first = gr_stream_pel_lower_bound(pel, &start), n = 0;
    for (size_t i = first; i < pel->count && (int64_t)n < count; i++) {
        const gr_stream_nack_t *nack = gr_stream_pel_at(pel, i);
        if (gr_stream_id_cmp(&nack->id, &end) > 0) break;
        if (min_idle && now - nack->delivery_time < min_idle) continue;
        n++;
    }
    gr_reply_array_begin(reply, n);
    for (size_t i = first, written = 0; i < pel->count && written < n; i++) {
        const gr_stream_nack_t *nack = gr_stream_pel_at(pel, i);
        if (min_idle && now - nack->delivery_time < min_idle) continue;
        gr_reply_array_begin(reply, 4);
        gr_xcmd_reply_id(reply, &nack->id);
        gr_reply_bulk(reply, nack->consumer->name, nack->consumer->name_length);
        int64_t elapsed = now - nack->delivery_time;
        gr_reply_integer(reply, elapsed < 0 ? 0 : elapsed);
        gr_reply_integer(reply, (int64_t)nack->delivery_count);
        written++;
    }
}

/* ---- XCLAIM ---- */

void gr_cmd_xclaim(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    gr_bytes_t key = gr_xcmd_arg(argv, argv_length, 1), group_name = gr_xcmd_arg(argv, argv_length, 2);
    gr_stream_t *stream;
    int found = gr_xcmd_find_or_reply(db, key, &stream, 0, reply);
    if (found < 0) return;
    gr_stream_group_t *group = found ? gr_stream_group_find(stream, group_name.data, group_name.length) : NULL;
    if (!group) {
        gr_xcmd_reply_nogroup(reply, key, group_name, "");
        return;
    }
    int64_t min_idle, retry_count = -1, delivery_time = -1;
    int force = 0, just_id = 0;
    if (gr_xcmd_int64_or_reply(argv[4], argv_length[4], &min_idle, "Invalid min-idle-time argument for XCLAIM", reply) != 0)
        return;
    if (min_idle < 0) min_idle = 0;
    size_t j = 5;
    gr_stream_id_t scratch;
    while (j < argc && gr_xcmd_parse_id(argv[j], argv_length[j], &scratch, 0, 1, NULL) == 0) j++;
    const size_t last_id_at = j;   /* IDs are argv[5 .. last_id_at) */
    const int64_t now = gr_db_now_ms(db);
    gr_stream_id_t last_id = {0, 0};
    for (; j < argc; j++) {
        const size_t more = argc - 1 - j;
        const uint8_t *opt = argv[j];
        const size_t opt_length = argv_length[j];
        if (gr_word_is(opt, opt_length, "force")) {
            force = 1;
        } else if (gr_word_is(opt, opt_length, "justid")) {
            just_id = 1;
        } else if (gr_word_is(opt, opt_length, "idle") && more) {
            j++;
            if (gr_xcmd_int64_or_reply(argv[j], argv_length[j], &delivery_time, "Invalid IDLE option argument for XCLAIM",
                                       reply) != 0)
                return;
            delivery_time = now - delivery_time;
        } else if (gr_word_is(opt, opt_length, "time") && more) {
            j++;
            if (gr_xcmd_int64_or_reply(argv[j], argv_length[j], &delivery_time, "Invalid TIME option argument for XCLAIM",
                                       reply) != 0)
                return;
        } else if (gr_word_is(opt, opt_length, "retrycount") && more) {
            j++;
            if (gr_xcmd_int64_or_reply(argv[j], argv_length[j], &retry_count,
                                       "Invalid RETRYCOUNT option argument for XCLAIM", reply) != 0)
                return;
        } else if (gr_word_is(opt, opt_length, "lastid") && more) {
            j++;
            if (gr_xcmd_parse_id_or_reply(argv[j], argv_length[j], &last_id, 0, 1, NULL, reply) != 0) return;
        } else {
            size_t size = opt_length + 64;
            char *text = gr_mem_alloc(size, GR_MEM_OTHER);
            if (!text) {
                gr_reply_oom(reply);
                return;
            }
            snprintf(text, size, "ERR Unrecognized XCLAIM option '%.*s'", (int)opt_length, (const char *)opt);
            gr_xcmd_reply_error(reply, text);
            gr_mem_free(text, GR_MEM_OTHER);
            return;
        }
    }
    int propagate_last_id = 0;
    if (gr_stream_id_cmp(&last_id, &group->last_id) > 0) {
        group->last_id = last_id;
        propagate_last_id = 1;
    }
    if (delivery_time != -1) {
        if (delivery_time < 0 || delivery_time > now) delivery_time = now;
    } else {
        delivery_time = now;
    }
    /* Claim first, collecting the claimed IDs; then reply with them (the length leads). */
    gr_stream_consumer_t *consumer = NULL;
    gr_bytes_t name = gr_xcmd_arg(argv, argv_length, 3);
    const size_t id_count = last_id_at - 5;
    gr_stream_id_t *claimed = gr_mem_alloc((id_count ? id_count : 1) * sizeof *claimed, GR_MEM_OTHER);
    if (!claimed) {
        gr_reply_oom(reply);
        return;
    }
    size_t claimed_count = 0;
    int64_t changes = 0;
    for (size_t k = 5; k < last_id_at; k++) {
        gr_stream_id_t id;
        gr_xcmd_parse_id(argv[k], argv_length[k], &id, 0, 1, NULL);
        gr_stream_nack_t *nack = gr_stream_pel_find(&group->pel, &id);
        if (!gr_stream_has_entry(stream, &id)) {
            if (nack) {   /* the entry is gone: its pending item goes too (propagated as a claim) */
                gr_xcmd_effect_xclaim(db, key, group_name, group, nack);
                propagate_last_id = 0;
                changes++;
                gr_stream_nack_ack(group, &id);
            }
            continue;
        }
        if (nack && min_idle && now - nack->delivery_time < min_idle) continue;
        if (!nack && !force) continue;
        if (!consumer) {
            int created;
            if (!(consumer = gr_xcmd_consumer_or_reply(db, key, group, name, &created, reply))) goto done;
        }
        if (!nack) {
            if (!(nack = gr_stream_nack_add(group, consumer, &id, delivery_time, 1))) {   /* Redis's new NACK counts 1 */
                gr_reply_oom(reply);
                goto done;
            }
        } else if (gr_stream_nack_move(group, nack, consumer) != 0) {
            gr_reply_oom(reply);
            goto done;
        }
        nack->delivery_time = delivery_time;
        if (retry_count >= 0) nack->delivery_count = (uint64_t)retry_count;
        else if (!just_id) nack->delivery_count++;
        claimed[claimed_count++] = id;
        gr_xcmd_effect_xclaim(db, key, group_name, group, nack);
        propagate_last_id = 0;
        changes++;
    }
    if (propagate_last_id) {
        gr_xcmd_effect_setid(db, key, group_name, group);
        changes++;
    }
    gr_reply_array_begin(reply, claimed_count);
    for (size_t k = 0; k < claimed_count; k++)
        if (just_id || !gr_xcmd_reply_one(reply, stream, &claimed[k])) gr_xcmd_reply_id(reply, &claimed[k]);
    gr_db_count_changes(db, changes);
    if (changes == 0) gr_effect_none(db);
done:
    gr_mem_free(claimed, GR_MEM_OTHER);
}

/* ---- XAUTOCLAIM ---- */

void gr_cmd_xautoclaim(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                       gr_reply_t *reply) {
    int64_t min_idle, count = 100;
    int just_id = 0;
    gr_stream_id_t start;
    if (gr_xcmd_int64_or_reply(argv[4], argv_length[4], &min_idle, "Invalid min-idle-time argument for XAUTOCLAIM",
                               reply) != 0)
        return;
    if (min_idle < 0) min_idle = 0;
    if (gr_xcmd_parse_start_or_reply(argv[5], argv_length[5], &start, reply) != 0) return;
    for (size_t j = 6; j < argc; j++) {
        const size_t more = argc - 1 - j;
        if (gr_word_is(argv[j], argv_length[j], "count") && more) {
            int64_t value;
            const int64_t max_count = INT64_MAX / 16;
            if (gr_bytes_to_int64(argv[j + 1], argv_length[j + 1], &value) != 0 || value < 1 || value > max_count) {
                gr_xcmd_reply_error(reply, "ERR COUNT must be > 0");
                return;
            }
            count = value;
            j++;
        } else if (gr_word_is(argv[j], argv_length[j], "justid")) {
            just_id = 1;
        } else {
            gr_reply_error_text(reply, GR_ERR_SYNTAX, "ERR syntax error");
            return;
        }
    }
    gr_bytes_t key = gr_xcmd_arg(argv, argv_length, 1), group_name = gr_xcmd_arg(argv, argv_length, 2);
    gr_stream_t *stream;
    int found = gr_xcmd_find_or_reply(db, key, &stream, 0, reply);
    if (found < 0) return;
    gr_stream_group_t *group = found ? gr_stream_group_find(stream, group_name.data, group_name.length) : NULL;
    if (!group) {
        gr_xcmd_reply_nogroup(reply, key, group_name, "");
        return;
    }
    const int64_t now = gr_db_now_ms(db);
    int64_t attempts = count * 10;
    gr_bytes_t name = gr_xcmd_arg(argv, argv_length, 3);
    /* Claim first, collecting the claimed and deleted IDs; then reply (the cursor leads). */
    /* at most count IDs, and never more than the PEL holds (COUNT may be up to 2^59) */
    const size_t room = (size_t)count < group->pel.count ? (size_t)count : group->pel.count;
    gr_stream_id_t *claimed = gr_mem_alloc((room ? room : 1) * sizeof *claimed, GR_MEM_OTHER);
    gr_stream_id_t *deleted = gr_mem_alloc((room ? room : 1) * sizeof *deleted, GR_MEM_OTHER);
    if (!claimed || !deleted) {
        gr_mem_free(claimed, GR_MEM_OTHER);
        gr_mem_free(deleted, GR_MEM_OTHER);
        gr_reply_oom(reply);
        return;
    }
    size_t claimed_count = 0, deleted_count = 0;
    gr_stream_consumer_t *consumer = NULL;
    int64_t changes = 0;
    size_t i = gr_stream_pel_lower_bound(&group->pel, &start);
    while (attempts-- && count && i < group->pel.count) {
        gr_stream_nack_t *nack = gr_stream_pel_at(&group->pel, i);
        gr_stream_id_t id = nack->id;
        if (!gr_stream_has_entry(stream, &id)) {
            gr_xcmd_effect_xclaim(db, key, group_name, group, nack);
            changes++;
            gr_stream_nack_ack(group, &id);   /* i now names the next item */
            deleted[deleted_count++] = id;
            count--;
            continue;
        }
        if (min_idle && now - nack->delivery_time < min_idle) {
            i++;
            continue;
        }
        if (!consumer) {
            int created;
            if (!(consumer = gr_xcmd_consumer_or_reply(db, key, group, name, &created, reply))) goto done;
        }
        if (gr_stream_nack_move(group, nack, consumer) != 0) {
            gr_reply_oom(reply);
            goto done;
        }
        nack->delivery_time = now;
        if (!just_id) nack->delivery_count++;
        claimed[claimed_count++] = id;
        count--;
        gr_xcmd_effect_xclaim(db, key, group_name, group, nack);
        changes++;
        i++;
    }
    gr_stream_id_t cursor = {0, 0};
    if (i < group->pel.count) cursor = gr_stream_pel_at(&group->pel, i)->id;
    gr_reply_array_begin(reply, 3);
    gr_xcmd_reply_id(reply, &cursor);
    gr_reply_array_begin(reply, claimed_count);
    for (size_t k = 0; k < claimed_count; k++) {
        if (just_id || !gr_xcmd_reply_one(reply, stream, &claimed[k])) gr_xcmd_reply_id(reply, &claimed[k]);
    }
    gr_reply_array_begin(reply, deleted_count);
    for (size_t k = 0; k < deleted_count; k++) gr_xcmd_reply_id(reply, &deleted[k]);
    gr_db_count_changes(db, changes);
    if (changes == 0) gr_effect_none(db);
done:
    gr_mem_free(claimed, GR_MEM_OTHER);
    gr_mem_free(deleted, GR_MEM_OTHER);
}

/* ---- XINFO ---- */

static const char *const xinfo_help[] = {
    "XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CONSUMERS <key> <groupname>",
    "    Show consumers of <groupname>.",
    "GROUPS <key>",
    "    Show the stream consumer groups.",
    "STREAM <key> [FULL [COUNT <count>]",
    "    Show information about the stream.",
    "HELP",
    "    Prints this help.",
};

static void reply_word(gr_reply_t *reply, const char *word) { gr_reply_bulk(reply, (const uint8_t *)word, strlen(word)); }

static void reply_lag(gr_reply_t *reply, const gr_stream_t *stream, const gr_stream_group_t *group) {
    int64_t lag;
    if (gr_stream_group_lag(stream, group, &lag)) gr_reply_integer(reply, lag);
    else gr_reply_nil(reply);
}

static void reply_entries_read(gr_reply_t *reply, const gr_stream_group_t *group) {
    if (group->entries_read != GR_STREAM_INVALID_ENTRIES_READ) gr_reply_integer(reply, group->entries_read);
    else gr_reply_nil(reply);
}

/* radix-tree-nodes: Redis counts its rax's nodes; goblin's directory is one array of nodes, so
 * it reports the same figure as radix-tree-keys plus the directory itself. */
static void reply_stream_info(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                              const gr_stream_t *stream, gr_reply_t *reply) {
    (void)db;
    int full = 1;
    int64_t count = 10;
    if (argc == 3) {
        full = 0;
    } else if ((argc == 4 || argc == 6) && gr_word_is(argv[3], argv_length[3], "full") &&
               (argc == 4 || gr_word_is(argv[4], argv_length[4], "count"))) {
        if (argc == 6) {
            if (gr_xcmd_int64_or_reply(argv[5], argv_length[5], &count, NULL, reply) != 0) return;
            if (count < 0) count = 10;
        }
    } else {
        reply_subcommand_error(reply, "XINFO", argv[1], argv_length[1]);
        return;
    }
    gr_reply_map_begin(reply, full ? 9 : 10);
    reply_word(reply, "length");
    gr_reply_integer(reply, (int64_t)stream->length);
    reply_word(reply, "radix-tree-keys");
    gr_reply_integer(reply, (int64_t)gr_stream_node_count(stream));
    reply_word(reply, "radix-tree-nodes");
    gr_reply_integer(reply, (int64_t)gr_stream_node_count(stream) + 1);
    reply_word(reply, "last-generated-id");
    gr_xcmd_reply_id(reply, &stream->last_id);
    reply_word(reply, "max-deleted-entry-id");
    gr_xcmd_reply_id(reply, &stream->max_deleted_entry_id);
    reply_word(reply, "entries-added");
    gr_reply_integer(reply, (int64_t)stream->entries_added);
    reply_word(reply, "recorded-first-entry-id");
    gr_xcmd_reply_id(reply, &stream->first_id);
    const gr_stream_id_t all_start = {0, 0}, all_end = {UINT64_MAX, UINT64_MAX};
    if (!full) {
        reply_word(reply, "groups");
        gr_reply_integer(reply, (int64_t)stream->group_count);
        gr_stream_iter_t iter;
        gr_stream_entry_t entry;
        for (int reverse = 0; reverse < 2; reverse++) {
            reply_word(reply, reverse ? "last-entry" : "first-entry");
            gr_stream_iter_start(&iter, stream, &all_start, &all_end, reverse);
            if (gr_stream_iter_next(&iter, &entry)) gr_xcmd_reply_entry(reply, &entry);
            else gr_reply_nil(reply);
            gr_stream_iter_stop(&iter);
        }
        return;
    }
    reply_word(reply, "entries");
    gr_xcmd_reply_range(reply, stream, &all_start, &all_end, (size_t)count, 0);
    reply_word(reply, "groups");
    gr_reply_array_begin(reply, stream->group_count);
    for (size_t g = 0; g < stream->group_count; g++) {
        const gr_stream_group_t *group = stream->groups[g];
        gr_reply_map_begin(reply, 7);
        reply_word(reply, "name");
        gr_reply_bulk(reply, group->name, group->name_length);
        reply_word(reply, "last-delivered-id");
        gr_xcmd_reply_id(reply, &group->last_id);
        reply_word(reply, "entries-read");
        reply_entries_read(reply, group);
        reply_word(reply, "lag");
        reply_lag(reply, stream, group);
        reply_word(reply, "pel-count");
        gr_reply_integer(reply, group->pel.count);
        reply_word(reply, "pending");
        size_t n = count && (size_t)count < group->pel.count ? (size_t)count : group->pel.count;
        gr_reply_array_begin(reply, n);
        for (size_t i = 0; i < n; i++) {
            const gr_stream_nack_t *nack = gr_stream_pel_at(&group->pel, i);
            gr_reply_array_begin(reply, 4);
            gr_xcmd_reply_id(reply, &nack->id);
            gr_reply_bulk(reply, nack->consumer->name, nack->consumer->name_length);
            gr_reply_integer(reply, nack->delivery_time);
            gr_reply_integer(reply, (int64_t)nack->delivery_count);
        }
        reply_word(reply, "consumers");
        gr_reply_array_begin(reply, group->consumer_count);
        for (size_t c = 0; c < group->consumer_count; c++) {
            const gr_stream_consumer_t *consumer = group->consumers[c];
            gr_reply_map_begin(reply, 4);
            reply_word(reply, "name");
            gr_reply_bulk(reply, consumer->name, consumer->name_length);
            reply_word(reply, "seen-time");
            gr_reply_integer(reply, consumer->seen_time);
            reply_word(reply, "pel-count");
            gr_reply_integer(reply, consumer->pel.count);
            reply_word(reply, "pending");
            size_t m = count && (size_t)count < consumer->pel.count ? (size_t)count : consumer->pel.count;
            gr_reply_array_begin(reply, m);
            for (size_t i = 0; i < m; i++) {
                const gr_stream_nack_t *nack = gr_stream_pel_at(&consumer->pel, i);
                gr_reply_array_begin(reply, 3);
                gr_xcmd_reply_id(reply, &nack->id);
                gr_reply_integer(reply, nack->delivery_time);
                gr_reply_integer(reply, (int64_t)nack->delivery_count);
            }
        }
    }
}

void gr_cmd_xinfo(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    const uint8_t *opt = argv[1];
    const size_t opt_length = argv_length[1];
    if (check_subcommand_or_reply(reply, "XINFO", xinfo_subcommands, sizeof xinfo_subcommands / sizeof xinfo_subcommands[0],
                                  argc, opt, opt_length) != 0)
        return;
    if (gr_word_is(opt, opt_length, "help")) {
        if (argc != 2) {
            reply_subcommand_error(reply, "XINFO", opt, opt_length);
            return;
        }
        reply_help(reply, xinfo_help, sizeof xinfo_help / sizeof xinfo_help[0]);
        return;
    }
    const int is_stream = gr_word_is(opt, opt_length, "stream"), is_groups = gr_word_is(opt, opt_length, "groups"),
              is_consumers = gr_word_is(opt, opt_length, "consumers");
    if (!((is_stream && argc >= 3) || (is_groups && argc == 3) || (is_consumers && argc == 4))) {
        reply_subcommand_error(reply, "XINFO", opt, opt_length);
        return;
    }
    gr_bytes_t key = gr_xcmd_arg(argv, argv_length, 2);
    gr_stream_t *stream;
    int found = gr_xcmd_find_or_reply(db, key, &stream, 0, reply);
    if (found < 0) return;
    if (!found) {
        gr_reply_error_text(reply, GR_ERR_NO_SUCH_KEY, "ERR no such key");
        return;
    }
    if (is_consumers) {
        gr_bytes_t group_name = gr_xcmd_arg(argv, argv_length, 3);
        const gr_stream_group_t *group = gr_stream_group_find(stream, group_name.data, group_name.length);
        if (!group) {
            reply_nogroup_for_key(reply, group_name, key);
            return;
        }
        const int64_t now = gr_db_now_ms(db);
        gr_reply_array_begin(reply, group->consumer_count);
        for (size_t c = 0; c < group->consumer_count; c++) {
            const gr_stream_consumer_t *consumer = group->consumers[c];
            int64_t idle = now - consumer->seen_time;
            gr_reply_map_begin(reply, 3);
            reply_word(reply, "name");
            gr_reply_bulk(reply, consumer->name, consumer->name_length);
            reply_word(reply, "pending");
            gr_reply_integer(reply, consumer->pel.count);
            reply_word(reply, "idle");
            gr_reply_integer(reply, idle < 0 ? 0 : idle);
        }
    } else if (is_groups) {
        gr_reply_array_begin(reply, stream->group_count);
        for (size_t g = 0; g < stream->group_count; g++) {
            const gr_stream_group_t *group = stream->groups[g];
            gr_reply_map_begin(reply, 6);
            reply_word(reply, "name");
            gr_reply_bulk(reply, group->name, group->name_length);
            reply_word(reply, "consumers");
            gr_reply_integer(reply, (int64_t)group->consumer_count);
            reply_word(reply, "pending");
            gr_reply_integer(reply, group->pel.count);
            reply_word(reply, "last-delivered-id");
            gr_xcmd_reply_id(reply, &group->last_id);
            reply_word(reply, "entries-read");
            reply_entries_read(reply, group);
            reply_word(reply, "lag");
            reply_lag(reply, stream, group);
        }
    } else {
        reply_stream_info(db, argc, argv, argv_length, stream, reply);
    }
}
