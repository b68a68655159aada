/* cmd_stream_read.c — the STREAM command layer's reads: XREAD and XREADGROUP, served at once
 * or parked through exec/blocking.h's generic spec, with Redis 7.0's replies (a map of stream
 * -> entries in RESP3, an array of [stream, entries] pairs in RESP2), errors, and, for
 * XREADGROUP, the effects Redis 7.0 propagates (an XCLAIM per delivered entry; for NOACK reads
 * XGROUP CREATECONSUMER and XGROUP SETID; nothing for a history read). XREAD's "+" reads the last entry, as Redis 7.4.
 * The entry commands are cmd_stream.c, the groups' cmd_stream_group.c. XREADGROUP is a typed
 * row (XReadGroupRequest: its builder parses the options, the handler looks the keys up in
 * Redis's order); XREAD stays argv. Both run read_run.
 *
 * A parked read is a gr_request_t whose items are the keys, then one ID per key (the "$"
 * already resolved to the stream's last ID, ">" kept), count the COUNT (0: Redis's 1000 for a
 * woken read), flag READ_NOACK | READ_GROUP, arg1/arg2 the group and consumer (XREADGROUP), timeout the
 * BLOCK milliseconds as seconds. The blocking layer serves it on one key at a time (its
 * GR_BLOCK_KEYS_PAIRED mode hands the key with its ID), when that key holds an entry past the
 * ID (or past the group's last delivered ID); a deleted stream answers a parked XREADGROUP
 * "-UNBLOCKED the stream key no longer exists", a destroyed group "-NOGROUP ...".
 */
#include <stdio.h>
#include <string.h>

#include "commands/cmd_stream_shared.h"
#include "exec/blocking.h"
#include "exec/lookup.h"

#define BLOCKED_DEFAULT_COUNT 1000   /* Redis's XREAD_BLOCKED_DEFAULT_COUNT */
enum { READ_NOACK = 1, READ_GROUP = 2 };   /* the parked request's flag */
#define UNBALANCED "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified."

typedef struct read_args {
    int64_t timeout_ms;          /* -1: no BLOCK */
    int64_t count;
    size_t streams_at, stream_count;
    int noack;
    gr_bytes_t group, consumer;
} read_args_t;

static int refuse(gr_build_error_t *error, gr_error_code_t code, const char *text) {
    error->code = code;
    snprintf(error->text, sizeof error->text, "%s", text);
    return -1;
}

/* Redis's getTimeoutFromObjectOrReply in milliseconds: an integer, not negative. */
static int parse_block(const uint8_t *data, size_t length, int64_t *ms, gr_build_error_t *error) {
    if (gr_bytes_to_int64(data, length, ms) != 0)
        return refuse(error, GR_ERR_GENERIC, "ERR timeout is not an integer or out of range");
    if (*ms < 0) return refuse(error, GR_ERR_GENERIC, "ERR timeout is negative");
    return 0;
}

/* XREAD's / XREADGROUP's options up to STREAMS, with Redis's texts; pure (XREADGROUP's builder
 * runs it). 0, or -1 with *error. */
static int parse_read(size_t argc, const uint8_t *const *argv, const size_t *argv_length, int group_read,
                      read_args_t *args, gr_build_error_t *error) {
    memset(args, 0, sizeof *args);
    args->timeout_ms = -1;
    for (size_t i = 1; i < argc; i++) {
        const size_t more = argc - i - 1;
        const uint8_t *o = argv[i];
        const size_t ol = argv_length[i];
        if (gr_word_is(o, ol, "block") && more) {
            i++;
            if (parse_block(argv[i], argv_length[i], &args->timeout_ms, error) != 0) return -1;
        } else if (gr_word_is(o, ol, "count") && more) {
            i++;
            if (gr_bytes_to_int64(argv[i], argv_length[i], &args->count) != 0)
                return refuse(error, GR_ERR_NOT_INTEGER, "ERR value is not an integer or out of range");
            if (args->count < 0) args->count = 0;
        } else if (gr_word_is(o, ol, "streams") && more) {
            args->streams_at = i + 1;
            args->stream_count = argc - args->streams_at;
            if (args->stream_count % 2 != 0) return refuse(error, GR_ERR_GENERIC, UNBALANCED);
            args->stream_count /= 2;
            break;
        } else if (gr_word_is(o, ol, "group") && more >= 2) {
            if (!group_read)
                return refuse(error, GR_ERR_GENERIC,
                              "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.");
            args->group = gr_xcmd_arg(argv, argv_length, i + 1);
            args->consumer = gr_xcmd_arg(argv, argv_length, i + 2);
            i += 2;
        } else if (gr_word_is(o, ol, "noack")) {
            if (!group_read)
                return refuse(error, GR_ERR_GENERIC,
                              "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.");
            args->noack = 1;
        } else {
            return refuse(error, GR_ERR_SYNTAX, "ERR syntax error");
        }
    }
    if (args->streams_at == 0) return refuse(error, GR_ERR_SYNTAX, "ERR syntax error");
    if (group_read && !args->group.data) return refuse(error, GR_ERR_GENERIC, "ERR Missing GROUP option for XREADGROUP");
    return 0;
}

static int is_word(gr_bytes_t b, char c) { return b.length == 1 && b.data[0] == (uint8_t)c; }

/* The last live entry's ID is past gt. */
static int has_past(const gr_stream_t *stream, const gr_stream_id_t *gt) {
    gr_stream_id_t top;
    return stream->length && gr_stream_edge_id(stream, 0, &top) && gr_stream_id_cmp(&top, gt) > 0;
}

/* XREADGROUP's history: the consumer's pending entries from start, at most count (0: all); an
 * entry no longer in the stream is [id, nil]. Delivery time and count are bumped, as Redis. */
static void reply_history(gr_server_t *db, gr_reply_t *reply, const gr_stream_t *stream, gr_stream_consumer_t *consumer,
                          const gr_stream_id_t *start, size_t count) {
    const gr_stream_pel_t *pel = &consumer->pel;
    size_t first = gr_stream_pel_lower_bound(pel, start);
    size_t n = pel->count - first;
    if (count && n > count) n = count;
    gr_reply_array_begin(reply, n);
    for (size_t i = 0; i < n; i++) {
        gr_stream_nack_t *nack = gr_stream_pel_at(pel, first + i);
        if (!gr_xcmd_reply_one(reply, stream, &nack->id)) {
            gr_reply_array_begin(reply, 2);
            gr_xcmd_reply_id(reply, &nack->id);
            gr_reply_nil_array(reply);
        } else {
            nack->delivery_time = gr_db_now_ms(db);
            nack->delivery_count++;
        }
    }
}

/* New entries past the group's last ID for consumer: delivered, added to the PELs (unless
 * NOACK) and propagated as XCLAIMs, then the group's last ID as XGROUP SETID. */
static void reply_new_for_group(gr_server_t *db, gr_reply_t *reply, gr_bytes_t key, gr_stream_t *stream,
                                gr_bytes_t group_name, gr_stream_group_t *group, gr_stream_consumer_t *consumer,
                                size_t count, int noack) {
    gr_stream_id_t start = group->last_id;
    gr_stream_id_incr(&start);
    const gr_stream_id_t end = {UINT64_MAX, UINT64_MAX};
    gr_stream_iter_t iter;
    gr_stream_entry_t entry;
    size_t n = 0;
    gr_stream_iter_start(&iter, stream, &start, &end, 0);
    while ((count == 0 || n < count) && gr_stream_iter_next(&iter, &entry)) n++;
    gr_stream_iter_stop(&iter);
    gr_reply_array_begin(reply, n);
    gr_stream_iter_start(&iter, stream, &start, &end, 0);
    const int64_t now = gr_db_now_ms(db);
    int moved = 0;
    for (size_t i = 0; i < n && gr_stream_iter_next(&iter, &entry); i++) {
        const gr_stream_id_t id = entry.id;
        if (gr_stream_id_cmp(&id, &group->last_id) > 0) {
            if (group->entries_read != GR_STREAM_INVALID_ENTRIES_READ && !gr_stream_range_has_tombstones(stream, &id, NULL))
                group->entries_read++;
            else if (stream->entries_added)
                group->entries_read = gr_stream_estimate_distance(stream, &id);
            group->last_id = id;
            moved = 1;
        }
        gr_xcmd_reply_entry(reply, &entry);
        if (noack) continue;
        gr_stream_nack_t *nack = gr_stream_pel_find(&group->pel, &id);
        if (nack) {   /* already pending (a SETID moved the group back): the entry changes hands */
            if (gr_stream_nack_move(group, nack, consumer) != 0) continue;
            nack->delivery_time = now;
            nack->delivery_count = 1;
        } else if (!(nack = gr_stream_nack_add(group, consumer, &id, now, 1))) {
            reply->failed = 1;   /* out of memory mid-reply: the transport drops the session */
            continue;
        }
        gr_xcmd_effect_xclaim(db, key, group_name, group, nack);
    }
    gr_stream_iter_stop(&iter);
    /* Redis 7.0 propagates the group's new last ID on its own only for NOACK reads (each
     * XCLAIM above carries it as LASTID otherwise) */
    if (moved && noack) gr_xcmd_effect_setid(db, key, group_name, group);
}

/* Serve what request's keys hold past their IDs: 1 replied (entries, or an error), 0 nothing.
 * blocked: a parked read being served (COUNT defaults to Redis's 1000; a missing group is
 * -NOGROUP's "no longer exists" text, a missing stream -UNBLOCKED). */
static int serve_read(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply, int blocked) {
    const size_t n = r->item_count / 2;
    const int group_read = (r->flag & READ_GROUP) != 0;
    size_t count = r->count ? r->count : (blocked ? BLOCKED_DEFAULT_COUNT : 0);
    /* which keys can be served (the reply's length leads) */
    size_t ready = 0;
    for (size_t i = 0; i < n; i++) {
        gr_stream_t *stream;
        int found = gr_xcmd_find_or_reply(db, r->items[i], &stream, 0, NULL);
        if (blocked && group_read && found <= 0) {
            gr_reply_error_text(reply, GR_ERR_GENERIC, "UNBLOCKED the stream key no longer exists");
            return 1;
        }
        if (found <= 0) continue;
        gr_bytes_t id_text = r->items[n + i];
        if (group_read) {
            gr_stream_group_t *group = gr_stream_group_find(stream, r->arg1.data, r->arg1.length);
            if (!group) {
                if (blocked) {
                    gr_reply_error_text(reply, GR_ERR_GENERIC,
                                        "NOGROUP the consumer group this client was blocked on no longer exists");
                    return 1;
                }
                continue;
            }
            if (!is_word(id_text, '>') || has_past(stream, &group->last_id)) ready++;
        } else {
            gr_stream_id_t gt;
            if (gr_xcmd_parse_id(id_text.data, id_text.length, &gt, 0, 1, NULL) != 0) continue;
            if (has_past(stream, &gt)) ready++;
        }
    }
    if (!ready) return 0;
    if (gr_xcmd_protocol(db) >= 3) gr_reply_map_begin(reply, ready);
    else gr_reply_array_begin(reply, ready);
    int64_t changes = 0;
    for (size_t i = 0; i < n; i++) {
        gr_stream_t *stream;
        if (gr_xcmd_find_or_reply(db, r->items[i], &stream, 0, NULL) <= 0) continue;
        gr_bytes_t key = r->items[i], id_text = r->items[n + i];
        if (group_read) {
            gr_stream_group_t *group = gr_stream_group_find(stream, r->arg1.data, r->arg1.length);
            if (!group) continue;
            const int history = !is_word(id_text, '>');
            if (!history && !has_past(stream, &group->last_id)) continue;
            if (gr_xcmd_protocol(db) < 3) gr_reply_array_begin(reply, 2);
            gr_reply_bulk(reply, key.data, key.length);
            int created = 0;
            gr_stream_consumer_t *consumer = gr_stream_consumer_find(group, r->arg2.data, r->arg2.length);
            if (consumer) {
                consumer->seen_time = gr_db_now_ms(db);
            } else if (gr_stream_consumer_create(group, r->arg2.data, r->arg2.length, gr_db_now_ms(db), &consumer) < 0) {
                gr_reply_array_begin(reply, 0);
                reply->failed = 1;
                continue;
            } else {
                created = 1;
                changes++;
                gr_watch_touch_current(db, key);
                gr_call_notify(db, GR_NOTIFY_STREAM, "xgroup-createconsumer", key);
                if (r->flag & READ_NOACK) gr_xcmd_effect_createconsumer(db, key, r->arg1, r->arg2);   /* else the XCLAIMs make it */
            }
            (void)created;
            if (history) {
                gr_stream_id_t start;
                gr_xcmd_parse_id(id_text.data, id_text.length, &start, 0, 1, NULL);
                reply_history(db, reply, stream, consumer, &start, count);
            } else {
                reply_new_for_group(db, reply, key, stream, r->arg1, group, consumer, count, r->flag & READ_NOACK);
                gr_watch_touch_current(db, key);
            }
            changes++;
        } else {
            gr_stream_id_t gt;
            if (gr_xcmd_parse_id(id_text.data, id_text.length, &gt, 0, 1, NULL) != 0 || !has_past(stream, &gt)) continue;
            if (gr_xcmd_protocol(db) < 3) gr_reply_array_begin(reply, 2);
            gr_reply_bulk(reply, key.data, key.length);
            gr_stream_id_t start = gt;
            gr_stream_id_incr(&start);
            const gr_stream_id_t end = {UINT64_MAX, UINT64_MAX};
            gr_xcmd_reply_range(reply, stream, &start, &end, count, 0);
        }
    }
    if (group_read) {
        gr_db_count_changes(db, changes);
        gr_effect_none(db);   /* what it changed went out as XCLAIM / XGROUP entries */
    }
    return 1;
}

/* ---- the blocking spec (exec/blocking.h) ---- */

static int block_ready(const gr_ks_entry_t *entry) { return entry->type == GR_TYPE_STREAM; }

/* The waiter on this key can be served: an entry past its ID (or its group's last ID), or its
 * group is gone (answered -NOGROUP). */
static int block_ready_for(const gr_ks_entry_t *entry, const gr_request_t *r, uint32_t key_index) {
    if (entry->type != GR_TYPE_STREAM) return 0;
    const gr_stream_t *stream = entry->value;
    gr_bytes_t id_text = r->items[r->item_count / 2 + key_index];
    if (r->flag & READ_GROUP) {
        const gr_stream_group_t *group = gr_stream_group_find(stream, r->arg1.data, r->arg1.length);
        return !group || has_past(stream, &group->last_id);
    }
    gr_stream_id_t gt;
    return gr_xcmd_parse_id(id_text.data, id_text.length, &gt, 0, 1, NULL) == 0 && has_past(stream, &gt);
}

static int block_serve(gr_server_t *db, const gr_request_t *request, gr_reply_t *reply) {
    return serve_read(db, request, reply, 1);
}

static void block_timeout(const gr_request_t *request, gr_reply_t *reply) {
    (void)request;
    gr_reply_nil_array(reply);
}

/* A parked XREADGROUP whose stream was deleted (Redis 7's signalDeletedKeyAsReady). */
static void block_gone(const gr_request_t *request, gr_reply_t *reply) {
    if (request->flag & READ_GROUP)
        gr_reply_error_text(reply, GR_ERR_GENERIC, "UNBLOCKED the stream key no longer exists");
}

const gr_block_spec_t gr_stream_block_read = {
    .name = "xread", .keys = GR_BLOCK_KEYS_PAIRED, .ready = block_ready, .serve = block_serve,
    .timeout_reply = block_timeout, .timeout_arg = 0, .timeout_in_ms = 1, .timeout_keyword = "block",
    .ready_for = block_ready_for};
const gr_block_spec_t gr_stream_block_readgroup = {
    .name = "xreadgroup", .keys = GR_BLOCK_KEYS_PAIRED, .ready = block_ready, .serve = block_serve,
    .timeout_reply = block_timeout, .timeout_arg = 0, .timeout_in_ms = 1, .timeout_keyword = "block",
    .ready_for = block_ready_for, .gone_reply = block_gone};

/* ---- XREAD, XREADGROUP ---- */

/* A read whose options are parsed: streams holds the keys, then one ID text per key. */
static void read_run(gr_server_t *db, const read_args_t *args, const gr_bytes_t *streams, gr_reply_t *reply,
                     int group_read) {
    const size_t n = args->stream_count;
    /* the request: keys, then each key's ID as text ("$" resolved, "+" as the entry before the
     * last one, so the read returns the last entry) */
    gr_bytes_t on_stack[32];
    char ids_on_stack[16][48];
    gr_bytes_t *items = 2 * n <= 32 ? on_stack : gr_mem_alloc(2 * n * sizeof *items, GR_MEM_OTHER);
    char (*ids)[48] = n <= 16 ? ids_on_stack : gr_mem_alloc(n * sizeof *ids, GR_MEM_OTHER);
    if (!items || !ids) {
        gr_reply_oom(reply);
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        gr_bytes_t key = streams[i];
        gr_bytes_t id_text = streams[n + i];
        items[i] = key;
        items[n + i] = id_text;
        gr_stream_t *stream;
        int found = gr_xcmd_find_or_reply(db, key, &stream, 0, reply);
        if (found < 0) goto done;
        if (group_read) {
            if (!found || !gr_stream_group_find(stream, args->group.data, args->group.length)) {
                gr_xcmd_reply_nogroup(reply, key, args->group, " in XREADGROUP with GROUP option");
                goto done;
            }
        }
        if (is_word(id_text, '$')) {
            if (group_read) {
                gr_xcmd_reply_error(reply, "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read "
                                           "the history of this consumer by specifying a proper ID, or use the > ID to "
                                           "get new messages. The $ ID would just return an empty result set.");
                goto done;
            }
            gr_stream_id_t last = found ? stream->last_id : (gr_stream_id_t){0, 0};
            items[n + i] = (gr_bytes_t){(const uint8_t *)ids[i], (uint32_t)gr_stream_id_format(&last, ids[i])};
        } else if (is_word(id_text, '>')) {
            if (!group_read) {
                gr_xcmd_reply_error(reply, "ERR The > ID can be specified only when calling XREADGROUP using the GROUP "
                                           "<group> <consumer> option.");
                goto done;
            }
        } else if (!group_read && is_word(id_text, '+')) {
            /* Redis 7.4: the entry with the last generated ID, if it is still there (read as
             * everything past the ID before it) */
            gr_stream_id_t before = found ? stream->last_id : (gr_stream_id_t){0, 0};
            if (found && stream->length) gr_stream_id_decr(&before);
            items[n + i] = (gr_bytes_t){(const uint8_t *)ids[i], (uint32_t)gr_stream_id_format(&before, ids[i])};
        } else {
            gr_stream_id_t id;
            if (gr_xcmd_parse_id_or_reply(id_text.data, id_text.length, &id, 0, 1, NULL, reply) != 0) goto done;
            items[n + i] = (gr_bytes_t){(const uint8_t *)ids[i], (uint32_t)gr_stream_id_format(&id, ids[i])};
        }
    }
    gr_request_t request;
    memset(&request, 0, sizeof request);
    request.template_id = GR_T_COMMAND;
    request.items = items;
    request.item_count = request.item_capacity = (uint32_t)(2 * n);
    request.count = args->count > UINT32_MAX ? UINT32_MAX : (uint32_t)args->count;
    request.flag = (uint8_t)((args->noack ? READ_NOACK : 0) | (group_read ? READ_GROUP : 0));
    if (group_read) request.arg1 = args->group, request.arg2 = args->consumer;
    if (args->timeout_ms < 0) {
        if (!serve_read(db, &request, reply, 0)) gr_reply_nil_array(reply);
        goto done;
    }
    request.timeout = (double)args->timeout_ms / 1000.0;
    if (serve_read(db, &request, reply, 0)) goto done;
    /* About to park: the consumer exists from now on, as Redis 7.2+ and Valkey make it before
     * blocking (7.0 made it only when served). */
    for (size_t i = 0; group_read && i < n; i++) {
        gr_stream_t *stream;
        if (gr_xcmd_find_or_reply(db, items[i], &stream, 0, NULL) <= 0) continue;
        gr_stream_group_t *group = gr_stream_group_find(stream, args->group.data, args->group.length);
        if (!group || gr_stream_consumer_find(group, args->consumer.data, args->consumer.length)) continue;
        int created;
        if (!gr_xcmd_consumer_or_reply(db, items[i], group, args->consumer, &created, reply)) goto done;
        gr_xcmd_effect_createconsumer(db, items[i], args->group, args->consumer);
    }
    /* a parked read serves COUNT or Redis's 1000 */
    gr_blocking_run_unserved(db, group_read ? &gr_stream_block_readgroup : &gr_stream_block_read, &request, reply);
done:
    if (items && items != on_stack) gr_mem_free(items, GR_MEM_OTHER);
    if (ids && ids != ids_on_stack) gr_mem_free(ids, GR_MEM_OTHER);
}

void gr_cmd_xread(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    read_args_t args;
    gr_build_error_t error;
    if (parse_read(argc, argv, argv_length, 0, &args, &error) != 0) {
        gr_reply_build_error(reply, &error);
        return;
    }
    gr_bytes_t on_stack[32];
    const size_t total = 2 * args.stream_count;
    gr_bytes_t *streams = total <= 32 ? on_stack : gr_mem_alloc(total * sizeof *streams, GR_MEM_OTHER);
    if (!streams) {
        gr_reply_oom(reply);
        return;
    }
    for (size_t i = 0; i < total; i++) streams[i] = gr_xcmd_arg(argv, argv_length, args.streams_at + i);
    read_run(db, &args, streams, reply, 0);
    if (streams != on_stack) gr_mem_free(streams, GR_MEM_OTHER);
}

/* XREADGROUP's argv -> XReadGroupRequest: its options parsed with Redis's texts (the keys,
 * groups and IDs are checked by the handler, in Redis's order, once it looks the keys up). */
int gr_build_xreadgroup(gr_build_context_t *ctx) {
    read_args_t args;
    if (parse_read(ctx->argc, ctx->argv, ctx->argv_length, 1, &args, ctx->error) != 0) return -1;
    gr_request_t *r = ctx->request;
    r->key = (gr_bytes_t){0};
    r->flag = (uint8_t)args.noack;
    r->count = args.count > UINT32_MAX ? UINT32_MAX : (uint32_t)args.count;
    r->timeout = args.timeout_ms < 0 ? -1.0 : (double)args.timeout_ms / 1000.0;
    r->arg1 = args.group;
    r->arg2 = args.consumer;
    r->item_count = (uint32_t)(2 * args.stream_count);
    for (size_t i = 0; i < r->item_count; i++) r->items[i] = gr_xcmd_arg(ctx->argv, ctx->argv_length, args.streams_at + i);
    return 0;
}

void gr_cmd_xreadgroup(gr_server_t *db, const gr_request_t *request, gr_reply_t *reply) {
    const gr_xreadgroup_view_t req = gr_xreadgroup_view(request);
    read_args_t args;
    memset(&args, 0, sizeof args);
    /* a ring message is not argv: the checks argv's shape made */
    if (req.streams_count == 0) {
        gr_reply_error_text(reply, GR_ERR_SYNTAX, "ERR syntax error");
        return;
    }
    if (req.streams_count % 2 != 0) {
        gr_xcmd_reply_error(reply, UNBALANCED);
        return;
    }
    if (req.timeout_seconds != req.timeout_seconds || req.timeout_seconds > 9e15) {   /* NaN, or past int64 ms */
        gr_xcmd_reply_error(reply, "ERR timeout is not an integer or out of range");
        return;
    }
    args.timeout_ms = req.timeout_seconds < 0 ? -1 : (int64_t)(req.timeout_seconds * 1000.0 + 0.5);
    args.count = req.count;
    args.stream_count = req.streams_count / 2;
    args.noack = req.no_ack != 0;
    args.group = req.group;
    args.consumer = req.consumer;
    read_run(db, &args, req.streams, reply, 1);
}
