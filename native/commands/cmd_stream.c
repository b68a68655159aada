/* cmd_stream.c — the STREAM command layer's entry commands and shared helpers: XADD,
 * XRANGE/XREVRANGE, XLEN, XDEL, XTRIM, XSETID, with Redis 7.0's replies, error texts, keyspace
 * events and propagated effects. The engine is engines/stream/; the groups' commands are
 * cmd_stream_group.c, the reads cmd_stream_read.c, and what they share cmd_stream_shared.h.
 * XADD and XRANGE/XREVRANGE are typed rows (stream.def: XAddRequest, XRangeRequest; their
 * builders here run Redis's pre-lookup checks, so RESP and the ring client refuse with the same
 * texts, and the handlers check a ring message again); the others are argv rows.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands/cmd_stream_shared.h"
#include "core/number.h"
#include "exec/blocking.h"
#include "exec/lookup.h"
#include "exec/transaction.h"

/* ---- shared helpers (cmd_stream_shared.h) ---- */

/* Redis's string2ull: string2ll's strict form, else strtoull's (which takes a leading space,
 * a '+', and wraps a "-0..." form, as Redis does). */
static int parse_u64(const char *text, uint64_t *out) {
    int64_t value;
    if (gr_bytes_to_int64((const uint8_t *)text, strlen(text), &value) == 0) {
        if (value < 0) return -1;
        *out = (uint64_t)value;
        return 0;
    }
    errno = 0;
    char *end = NULL;
    unsigned long long parsed = strtoull(text, &end, 10);
    if (errno == EINVAL || errno == ERANGE || !(*text != '\0' && *end == '\0')) return -1;
    *out = parsed;
    return 0;
}

int gr_xcmd_parse_id(const uint8_t *data, size_t length, gr_stream_id_t *id, uint64_t missing_seq, int strict,
                     int *seq_given) {
    char text[128];
    if (length > sizeof text - 1) return -1;
    memcpy(text, data, length);
    text[length] = '\0';
    if (strict && (text[0] == '-' || text[0] == '+') && text[1] == '\0') return -1;
    if (seq_given) *seq_given = 1;
    if (text[0] == '-' && text[1] == '\0') {
        *id = (gr_stream_id_t){0, 0};
        return 0;
    }
    if (text[0] == '+' && text[1] == '\0') {
        *id = (gr_stream_id_t){UINT64_MAX, UINT64_MAX};
        return 0;
    }
    uint64_t ms, seq;
    char *dash = strchr(text, '-');
    if (dash) *dash = '\0';
    if (parse_u64(text, &ms) != 0) return -1;
    if (dash) {
        if (seq_given && dash[1] == '*' && dash[2] == '\0') {
            seq = 0;
            *seq_given = 0;
        } else if (parse_u64(dash + 1, &seq) != 0) {
            return -1;
        }
    } else {
        seq = missing_seq;
    }
    id->ms = ms;
    id->seq = seq;
    return 0;
}

int gr_xcmd_parse_id_or_reply(const uint8_t *data, size_t length, gr_stream_id_t *id, uint64_t missing_seq, int strict,
                              int *seq_given, gr_reply_t *reply) {
    if (gr_xcmd_parse_id(data, length, id, missing_seq, strict, seq_given) == 0) return 0;
    gr_xcmd_reply_error(reply, GR_XCMD_INVALID_ID);
    return -1;
}

int gr_xcmd_parse_interval_or_reply(const uint8_t *data, size_t length, gr_stream_id_t *id, int *exclusive,
                                    uint64_t missing_seq, gr_reply_t *reply) {
    *exclusive = 0;
    if (length > 1 && data[0] == '(') {
        *exclusive = 1;
        return gr_xcmd_parse_id_or_reply(data + 1, length - 1, id, missing_seq, 1, NULL, reply);
    }
    return gr_xcmd_parse_id_or_reply(data, length, id, missing_seq, 0, NULL, reply);
}

int gr_xcmd_parse_start_or_reply(const uint8_t *data, size_t length, gr_stream_id_t *id, gr_reply_t *reply) {
    int exclusive;
    if (gr_xcmd_parse_interval_or_reply(data, length, id, &exclusive, 0, reply) != 0) return -1;
    if (exclusive && gr_stream_id_incr(id) != 0) {
        gr_xcmd_reply_error(reply, "ERR invalid start ID for the interval");
        return -1;
    }
    return 0;
}

int gr_xcmd_parse_end_or_reply(const uint8_t *data, size_t length, gr_stream_id_t *id, gr_reply_t *reply) {
    int exclusive;
    if (gr_xcmd_parse_interval_or_reply(data, length, id, &exclusive, UINT64_MAX, reply) != 0) return -1;
    if (exclusive && gr_stream_id_decr(id) != 0) {
        gr_xcmd_reply_error(reply, "ERR invalid end ID for the interval");
        return -1;
    }
    return 0;
}

int gr_xcmd_int64_or_reply(const uint8_t *data, size_t length, int64_t *out, const char *message, gr_reply_t *reply) {
    if (gr_bytes_to_int64(data, length, out) == 0) return 0;
    if (message) {
        char text[160];
        snprintf(text, sizeof text, "ERR %s", message);
        gr_reply_error_text(reply, GR_ERR_GENERIC, text);
    } else {
        gr_reply_error_text(reply, GR_ERR_NOT_INTEGER, "ERR value is not an integer or out of range");
    }
    return -1;
}

int gr_xcmd_find_or_reply(gr_server_t *db, gr_bytes_t key, gr_stream_t **stream, int for_write, gr_reply_t *reply) {
    void *value;
    int found = gr_db_find_typed(db, key, GR_TYPE_STREAM, for_write, &value, reply);
    *stream = value;
    return found;
}

void gr_xcmd_reply_id(gr_reply_t *reply, const gr_stream_id_t *id) {
    char text[48];
    size_t length = gr_stream_id_format(id, text);
    gr_reply_bulk(reply, (const uint8_t *)text, length);
}

void gr_xcmd_reply_entry(gr_reply_t *reply, gr_stream_entry_t *entry) {
    gr_reply_array_begin(reply, 2);
    gr_xcmd_reply_id(reply, &entry->id);
    gr_reply_array_begin(reply, 2 * entry->pair_count);
    const uint8_t *field, *value;
    size_t field_length, value_length;
    while (gr_stream_entry_next_pair(entry, &field, &field_length, &value, &value_length)) {
        gr_reply_bulk(reply, field, field_length);
        gr_reply_bulk(reply, value, value_length);
    }
}

/* How many entries a range holds, up to count (0: all): the reply's length is written first. */
static size_t count_range(const gr_stream_t *stream, const gr_stream_id_t *start, const gr_stream_id_t *end, size_t count,
                          int reverse) {
    gr_stream_iter_t iter;
    gr_stream_entry_t entry;
    size_t n = 0;
    gr_stream_iter_start(&iter, stream, start, end, reverse);
    while ((count == 0 || n < count) && gr_stream_iter_next(&iter, &entry)) n++;
    gr_stream_iter_stop(&iter);
    return n;
}

size_t gr_xcmd_reply_range(gr_reply_t *reply, const gr_stream_t *stream, const gr_stream_id_t *start,
                           const gr_stream_id_t *end, size_t count, int reverse) {
    size_t n = count_range(stream, start, end, count, reverse);
    gr_reply_array_begin(reply, n);
    gr_stream_iter_t iter;
    gr_stream_entry_t entry;
    gr_stream_iter_start(&iter, stream, start, end, reverse);
    for (size_t i = 0; i < n && gr_stream_iter_next(&iter, &entry); i++) gr_xcmd_reply_entry(reply, &entry);
    gr_stream_iter_stop(&iter);
    return n;
}

int gr_xcmd_reply_one(gr_reply_t *reply, const gr_stream_t *stream, const gr_stream_id_t *id) {
    gr_stream_iter_t iter;
    gr_stream_entry_t entry;
    gr_stream_iter_start(&iter, stream, id, id, 0);
    int found = gr_stream_iter_next(&iter, &entry);
    if (found) gr_xcmd_reply_entry(reply, &entry);
    gr_stream_iter_stop(&iter);
    return found;
}

void gr_xcmd_reply_error(gr_reply_t *reply, const char *text) { gr_reply_error_text(reply, GR_ERR_GENERIC, text); }

void gr_xcmd_reply_nogroup(gr_reply_t *reply, gr_bytes_t key, gr_bytes_t group, const char *tail) {
    size_t size = key.length + group.length + strlen(tail) + 64;
    char *text = gr_mem_alloc(size, GR_MEM_OTHER);
    if (!text) {
        gr_reply_oom(reply);
        return;
    }
    snprintf(text, size, "NOGROUP No such key '%.*s' or consumer group '%.*s'%s", (int)key.length,
             (const char *)key.data, (int)group.length, (const char *)group.data, tail);
    gr_reply_error_text(reply, GR_ERR_GENERIC, text);
    gr_mem_free(text, GR_MEM_OTHER);
}

int gr_xcmd_protocol(const gr_server_t *db) { return db->current ? db->current->protocol : 2; }

static void effect_id(gr_server_t *db, const gr_stream_id_t *id) {
    char text[48];
    size_t length = gr_stream_id_format(id, text);
    gr_effect_bulk(db, (const uint8_t *)text, length);
}

void gr_xcmd_effect_xclaim(gr_server_t *db, gr_bytes_t key, gr_bytes_t group_name, const gr_stream_group_t *group,
                           const gr_stream_nack_t *nack) {
    gr_effect_begin(db, 14);
    gr_effect_word(db, "XCLAIM");
    gr_effect_bytes(db, key);
    gr_effect_bytes(db, group_name);
    gr_effect_bulk(db, nack->consumer->name, nack->consumer->name_length);
    gr_effect_word(db, "0");
    effect_id(db, &nack->id);
    gr_effect_word(db, "TIME");
    gr_effect_int(db, nack->delivery_time);
    gr_effect_word(db, "RETRYCOUNT");
    gr_effect_int(db, (int64_t)nack->delivery_count);
    gr_effect_word(db, "FORCE");
    gr_effect_word(db, "JUSTID");
    gr_effect_word(db, "LASTID");
    effect_id(db, &group->last_id);
}

void gr_xcmd_effect_setid(gr_server_t *db, gr_bytes_t key, gr_bytes_t group_name, const gr_stream_group_t *group) {
    gr_effect_begin(db, 7);
    gr_effect_word(db, "XGROUP");
    gr_effect_word(db, "SETID");
    gr_effect_bytes(db, key);
    gr_effect_bytes(db, group_name);
    effect_id(db, &group->last_id);
    gr_effect_word(db, "ENTRIESREAD");
    gr_effect_int(db, group->entries_read);
}

void gr_xcmd_effect_createconsumer(gr_server_t *db, gr_bytes_t key, gr_bytes_t group_name, gr_bytes_t consumer) {
    gr_effect_begin(db, 5);
    gr_effect_word(db, "XGROUP");
    gr_effect_word(db, "CREATECONSUMER");
    gr_effect_bytes(db, key);
    gr_effect_bytes(db, group_name);
    gr_effect_bytes(db, consumer);
}

gr_stream_consumer_t *gr_xcmd_consumer_or_reply(gr_server_t *db, gr_bytes_t key, gr_stream_group_t *group,
                                                gr_bytes_t name, int *created, gr_reply_t *reply) {
    gr_stream_consumer_t *consumer;
    int made = gr_stream_consumer_create(group, name.data, name.length, gr_db_now_ms(db), &consumer);
    if (made < 0) {
        gr_reply_oom(reply);
        return NULL;
    }
    *created = made == 0;
    if (made == 0) {
        gr_db_mark_changed(db, key, 1);
        gr_call_notify(db, GR_NOTIFY_STREAM, "xgroup-createconsumer", key);
    } else {
        consumer->seen_time = gr_db_now_ms(db);
    }
    return consumer;
}

/* ---- XADD / XTRIM arguments (Redis's streamParseAddOrTrimArgsOrReply) ---- */

typedef struct trim_args {
    gr_stream_trim_t trim;
    size_t threshold_at;      /* argv index of the MAXLEN / MINID threshold */
    int limit_given;
    int nomkstream;
    int id_given, seq_given;
    gr_stream_id_t id;
    size_t id_at;             /* XADD: argv index of the ID (or "*") */
} trim_args_t;

/* Why arguments are refused (a builder's error, or an argv handler's before its reply). */
static int refuse(gr_build_error_t *error, gr_error_code_t code, const char *text) {
    error->code = code;
    snprintf(error->text, sizeof error->text, "%s", text);
    return -1;
}
static int refuse_generic(gr_build_error_t *error, const char *text) { return refuse(error, GR_ERR_GENERIC, text); }
static int refuse_not_integer(gr_build_error_t *error) {
    return refuse(error, GR_ERR_NOT_INTEGER, "ERR value is not an integer or out of range");
}

/* MAXLEN's threshold: a length >= 0. */
static int parse_maxlen(const uint8_t *data, size_t length, uint64_t *out, gr_build_error_t *error) {
    int64_t value;
    if (gr_bytes_to_int64(data, length, &value) != 0) return refuse_not_integer(error);
    if (value < 0) return refuse_generic(error, "ERR The MAXLEN argument must be >= 0.");
    *out = (uint64_t)value;
    return 0;
}

/* The LIMIT rules once every option is read (limit < 0: no LIMIT given); the default LIMIT of a
 * "~" trim is the server's (trim_default_limit). */
static int check_limit(trim_args_t *args, int64_t limit, int xadd, gr_build_error_t *error) {
    args->limit_given = limit >= 0;
    args->trim.limit = limit > 0 ? limit : 0;
    if (args->trim.limit && args->trim.strategy == GR_STREAM_TRIM_NONE)
        return refuse_generic(error, "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy");
    if (!xadd && args->trim.strategy == GR_STREAM_TRIM_NONE)
        return refuse_generic(error, "ERR syntax error, XTRIM must be called with a trimming strategy");
    if (args->limit_given && !args->trim.approx)
        return refuse_generic(error, "ERR syntax error, LIMIT cannot be used without the special ~ option");
    return 0;
}

/* A "~" trim without LIMIT stops after 100 nodes' worth of entries, as Redis. */
static void trim_default_limit(const gr_server_t *db, trim_args_t *args) {
    if (!args->trim.approx || args->limit_given) return;
    args->trim.limit = 100 * db->config.stream_node_max_entries;
    if (args->trim.limit <= 0 || args->trim.limit > 1000000) args->trim.limit = 10000;
}

/* Redis's streamParseAddOrTrimArgsOrReply: the index of XADD's ID (or XTRIM's end), or 0 with
 * *error. Pure: XADD's builder runs it, so RESP and the ring client refuse with the same text. */
static size_t parse_trim_args(size_t argc, const uint8_t *const *argv, const size_t *argv_length, int xadd,
                              trim_args_t *args, gr_build_error_t *error) {
    memset(args, 0, sizeof *args);
    int64_t limit = -1;
    size_t i = 2;
    for (; i < argc; i++) {
        const size_t more = argc - 1 - i;
        const uint8_t *opt = argv[i];
        const size_t opt_length = argv_length[i];
        if (xadd && opt_length == 1 && opt[0] == '*') {
            break;
        } else if ((gr_word_is(opt, opt_length, "maxlen") || gr_word_is(opt, opt_length, "minid")) && more) {
            const int maxlen = gr_word_is(opt, opt_length, "maxlen");
            if (args->trim.strategy != GR_STREAM_TRIM_NONE) {
                refuse_generic(error, "ERR syntax error, MAXLEN and MINID options at the same time are not compatible");
                return 0;
            }
            args->trim.approx = 0;
            if (more >= 2 && argv_length[i + 1] == 1 && argv[i + 1][0] == '~') {
                args->trim.approx = 1;
                i++;
            } else if (more >= 2 && argv_length[i + 1] == 1 && argv[i + 1][0] == '=') {
                i++;
            }
            if (maxlen) {
                if (parse_maxlen(argv[i + 1], argv_length[i + 1], &args->trim.maxlen, error) != 0) return 0;
                args->trim.strategy = GR_STREAM_TRIM_MAXLEN;
            } else {
                if (gr_xcmd_parse_id(argv[i + 1], argv_length[i + 1], &args->trim.minid, 0, 1, NULL) != 0) {
                    refuse_generic(error, GR_XCMD_INVALID_ID);
                    return 0;
                }
                args->trim.strategy = GR_STREAM_TRIM_MINID;
            }
            i++;
            args->threshold_at = i;
        } else if (gr_word_is(opt, opt_length, "limit") && more) {
            if (gr_bytes_to_int64(argv[i + 1], argv_length[i + 1], &limit) != 0) {
                refuse_not_integer(error);
                return 0;
            }
            if (limit < 0) {
                refuse_generic(error, "ERR The LIMIT argument must be >= 0.");
                return 0;
            }
            i++;
        } else if (xadd && gr_word_is(opt, opt_length, "nomkstream")) {
            args->nomkstream = 1;
        } else if (xadd) {
            if (gr_xcmd_parse_id(opt, opt_length, &args->id, 0, 1, &args->seq_given) != 0) {
                refuse_generic(error, GR_XCMD_INVALID_ID);
                return 0;
            }
            args->id_given = 1;
            break;
        } else {
            refuse(error, GR_ERR_SYNTAX, "ERR syntax error");
            return 0;
        }
    }
    if (check_limit(args, limit, xadd, error) != 0) return 0;
    args->id_at = i;
    return i;
}

/* The effect of an XTRIM whose trim was approximate: its argv with "~" as "=", the threshold as
 * what it left (MAXLEN: the length; MINID: the first entry's ID), LIMIT dropped — so a replay
 * trims exactly the same. (XADD's is effect_xadd, from its typed request.) */
static void effect_rewritten(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                             const trim_args_t *args, const gr_stream_t *stream) {
    size_t dropped = 0;
    for (size_t i = 2; i < args->id_at; i++)
        if (gr_word_is(argv[i], argv_length[i], "limit") && i + 1 < args->id_at && i != args->threshold_at) {
            dropped += 2;
            i++;
        }
    gr_effect_begin(db, argc - dropped);
    for (size_t i = 0; i < argc; i++) {
        if (i >= 2 && i < args->id_at && i != args->threshold_at && gr_word_is(argv[i], argv_length[i], "limit") &&
            i + 1 < args->id_at) {
            i++;
            continue;
        }
        if (args->trim.approx && i + 1 == args->threshold_at && argv_length[i] == 1 && argv[i][0] == '~') {
            gr_effect_word(db, "=");
        } else if (args->trim.approx && i == args->threshold_at) {
            if (args->trim.strategy == GR_STREAM_TRIM_MAXLEN) {
                gr_effect_int(db, (int64_t)stream->length);
            } else {
                gr_stream_id_t first = stream->length ? stream->first_id : (gr_stream_id_t){UINT64_MAX, UINT64_MAX};
                effect_id(db, &first);
            }
        } else {
            gr_effect_bulk(db, argv[i], argv_length[i]);
        }
    }
}

static int32_t running_db_index(const gr_server_t *db) { return db->current ? db->current->db_index : 0; }

/* ---- XADD (typed: XAddRequest; RESP and the ring client build it with gr_build_xadd) ---- */

/* XADD's argv -> XAddRequest: every check Redis makes before it looks the key up, with its
 * texts, so a refused XADD never reaches the ring. */
int gr_build_xadd(gr_build_context_t *ctx) {
    trim_args_t args;
    size_t id_at = parse_trim_args(ctx->argc, ctx->argv, ctx->argv_length, 1, &args, ctx->error);
    if (!id_at) return -1;
    const size_t field_at = id_at + 1;
    if (ctx->argc < field_at + 2 || (ctx->argc - field_at) % 2 == 1)
        return refuse(ctx->error, GR_ERR_WRONG_ARITY, "ERR wrong number of arguments for 'xadd' command");
    if (args.id_given && args.seq_given && gr_stream_id_is_zero(&args.id))
        return refuse_generic(ctx->error, "ERR The ID specified in XADD must be greater than 0-0");
    gr_request_t *r = ctx->request;
    r->flag = (uint8_t)args.nomkstream;
    r->end = (uint8_t)args.trim.strategy;
    r->to_end = (uint8_t)args.trim.approx;
    r->index = args.limit_given ? args.trim.limit : -1;
    r->arg1 = gr_xcmd_arg(ctx->argv, ctx->argv_length, id_at);
    if (args.threshold_at) r->arg2 = gr_xcmd_arg(ctx->argv, ctx->argv_length, args.threshold_at);
    r->item_count = (uint32_t)(ctx->argc - field_at);
    for (size_t i = field_at; i < ctx->argc; i++) r->items[i - field_at] = gr_xcmd_arg(ctx->argv, ctx->argv_length, i);
    return 0;
}

/* A typed XAddRequest (from the ring, or built above) back to trim_args_t, checked again: a ring
 * message is not argv and may carry anything. 0, or -1 with *error. */
static int xadd_args_of(const gr_xadd_view_t *req, trim_args_t *args, gr_build_error_t *error) {
    memset(args, 0, sizeof *args);
    args->nomkstream = req->no_mk_stream != 0;
    if (req->trim == GR_STREAM_TRIM_MAXLEN) {
        if (parse_maxlen(req->threshold.data, req->threshold.length, &args->trim.maxlen, error) != 0) return -1;
    } else if (req->trim == GR_STREAM_TRIM_MINID) {
        if (gr_xcmd_parse_id(req->threshold.data, req->threshold.length, &args->trim.minid, 0, 1, NULL) != 0)
            return refuse_generic(error, GR_XCMD_INVALID_ID);
    } else if (req->trim != GR_STREAM_TRIM_NONE) {
        return refuse(error, GR_ERR_SYNTAX, "ERR syntax error");
    }
    args->trim.strategy = req->trim;
    args->trim.approx = req->trim != GR_STREAM_TRIM_NONE && req->approximate;
    if (check_limit(args, req->limit, 1, error) != 0) return -1;
    if (!(req->entry_id.length == 1 && req->entry_id.data[0] == '*')) {
        if (gr_xcmd_parse_id(req->entry_id.data, req->entry_id.length, &args->id, 0, 1, &args->seq_given) != 0)
            return refuse_generic(error, GR_XCMD_INVALID_ID);
        args->id_given = 1;
    }
    if (req->pairs_count < 2 || req->pairs_count % 2 == 1)
        return refuse(error, GR_ERR_WRONG_ARITY, "ERR wrong number of arguments for 'xadd' command");
    if (args->id_given && args->seq_given && gr_stream_id_is_zero(&args->id))
        return refuse_generic(error, "ERR The ID specified in XADD must be greater than 0-0");
    return 0;
}

/* XADD key [NOMKSTREAM] [MAXLEN|MINID = threshold] id field value ...: the request as given
 * (.render), or, for a "~" trim or a generated ID, with what the threshold left (MAXLEN: the
 * length; MINID: the first entry's ID) and the ID added — so a replay adds and trims the same. */
static void effect_xadd(gr_server_t *db, const gr_xadd_view_t *req, const gr_stream_t *stream,
                        const gr_stream_id_t *added) {
    const int trims = req->trim == GR_STREAM_TRIM_MAXLEN || req->trim == GR_STREAM_TRIM_MINID;
    gr_effect_begin(db, 3 + (uint64_t)(req->no_mk_stream != 0) + (trims ? 3u : 0u) + req->pairs_count);
    gr_effect_word(db, "XADD");
    gr_effect_bytes(db, req->key);
    if (req->no_mk_stream) gr_effect_word(db, "NOMKSTREAM");
    if (trims) {
        gr_effect_word(db, req->trim == GR_STREAM_TRIM_MAXLEN ? "MAXLEN" : "MINID");
        gr_effect_word(db, "=");
        if (!stream) {
            gr_effect_bytes(db, req->threshold);
        } else if (req->trim == GR_STREAM_TRIM_MAXLEN) {
            gr_effect_int(db, (int64_t)stream->length);
        } else {
            gr_stream_id_t first = stream->length ? stream->first_id : (gr_stream_id_t){UINT64_MAX, UINT64_MAX};
            effect_id(db, &first);
        }
    }
    if (added) effect_id(db, added);
    else gr_effect_bytes(db, req->entry_id);
    for (uint32_t i = 0; i < req->pairs_count; i++) gr_effect_bytes(db, req->pairs[i]);
}

void gr_render_xadd(gr_server_t *db, const gr_request_t *request) {
    const gr_xadd_view_t req = gr_xadd_view(request);
    effect_xadd(db, &req, NULL, NULL);
}

void gr_cmd_xadd(gr_server_t *db, const gr_request_t *request, gr_reply_t *reply) {
    const gr_xadd_view_t req = gr_xadd_view(request);
    trim_args_t args;
    gr_build_error_t error;
    if (xadd_args_of(&req, &args, &error) != 0) {
        gr_reply_build_error(reply, &error);
        return;
    }
    trim_default_limit(db, &args);
    const gr_bytes_t key = req.key;
    gr_stream_t *stream;
    int found = gr_xcmd_find_or_reply(db, key, &stream, 1, reply);
    if (found < 0) return;
    if (!found && args.nomkstream) {
        gr_reply_nil(reply);
        return;
    }
    if (found && stream->last_id.ms == UINT64_MAX && stream->last_id.seq == UINT64_MAX) {
        gr_xcmd_reply_error(reply, "ERR The stream has exhausted the last possible ID, unable to add more items");
        return;
    }
    /* the ID: generated, ms-*, or given; it must be above the top */
    gr_stream_id_t last = found ? stream->last_id : (gr_stream_id_t){0, 0};
    gr_stream_id_t id;
    if (!args.id_given) {
        uint64_t now = (uint64_t)gr_db_now_ms(db);
        if (now > last.ms) {
            id = (gr_stream_id_t){now, 0};
        } else {
            id = last;
            gr_stream_id_incr(&id);
        }
    } else if (!args.seq_given) {
        id = args.id;
        if (id.ms == last.ms) {
            if (last.seq == UINT64_MAX) {
                gr_xcmd_reply_error(reply, "ERR The ID specified in XADD is equal or smaller than the target stream top item");
                return;
            }
            id.seq = last.seq + 1;
        } else {
            id.seq = 0;
        }
    } else {
        id = args.id;
    }
    if (gr_stream_id_cmp(&id, &last) <= 0) {
        gr_xcmd_reply_error(reply, "ERR The ID specified in XADD is equal or smaller than the target stream top item");
        return;
    }
    const size_t pairs = req.pairs_count / 2;
    uint64_t total = 0;
    for (uint32_t i = 0; i < req.pairs_count; i++) total += req.pairs[i].length + 10;
    if (total > UINT32_MAX / 4) {
        gr_xcmd_reply_error(reply, "ERR Elements are too large to be stored");
        return;
    }
    /* the engine takes argv-shaped arrays */
    const uint8_t *data_on_stack[64];
    size_t length_on_stack[64];
    const uint8_t **data = req.pairs_count <= 64 ? data_on_stack : gr_mem_alloc(req.pairs_count * sizeof *data, GR_MEM_OTHER);
    size_t *lengths = req.pairs_count <= 64 ? length_on_stack : gr_mem_alloc(req.pairs_count * sizeof *lengths, GR_MEM_OTHER);
    int created = 0;
    if (!data || !lengths) {
        gr_reply_oom(reply);
        goto done;
    }
    for (uint32_t i = 0; i < req.pairs_count; i++) data[i] = req.pairs[i].data, lengths[i] = req.pairs[i].length;
    if (!found) {
        if (!(stream = gr_stream_new())) {
            gr_reply_oom(reply);
            goto done;
        }
        if (!gr_db_add_key(db, key, GR_TYPE_STREAM, stream)) {
            gr_stream_free(stream);
            gr_reply_oom(reply);
            goto done;
        }
        created = 1;
    }
    const gr_stream_limits_t limits = gr_xcmd_limits(db);
    if (gr_stream_append(stream, &id, pairs, data, lengths, &limits) != 0) {
        if (created) gr_db_delete_key(db, key);
        gr_reply_oom(reply);
        goto done;
    }
    gr_xcmd_reply_id(reply, &id);
    gr_db_mark_changed(db, key, 1);
    gr_call_notify(db, GR_NOTIFY_STREAM, "xadd", key);
    if (args.trim.strategy != GR_STREAM_TRIM_NONE && gr_stream_trim(stream, &args.trim))
        gr_call_notify(db, GR_NOTIFY_STREAM, "xtrim", key);
    if (args.trim.approx || !args.id_given || !args.seq_given)   /* else .render: the request as given */
        effect_xadd(db, &req, args.trim.approx ? stream : NULL, &id);
    if (!created) gr_blocking_signal(db, running_db_index(db), key.data, key.length);
done:
    if (data && data != data_on_stack) gr_mem_free(data, GR_MEM_OTHER);
    if (lengths && lengths != length_on_stack) gr_mem_free(lengths, GR_MEM_OTHER);
}

/* ---- XTRIM ---- */

void gr_cmd_xtrim(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    gr_bytes_t key = gr_xcmd_arg(argv, argv_length, 1);
    gr_stream_t *stream;
    int found = gr_xcmd_find_or_reply(db, key, &stream, 1, reply);
    if (found < 0) return;
    if (!found) {
        gr_reply_integer(reply, 0);
        return;
    }
    trim_args_t args;
    gr_build_error_t error;
    if (!parse_trim_args(argc, argv, argv_length, 0, &args, &error)) {
        gr_reply_build_error(reply, &error);
        return;
    }
    trim_default_limit(db, &args);
    uint64_t deleted = gr_stream_trim(stream, &args.trim);
    if (deleted) {
        gr_call_notify(db, GR_NOTIFY_STREAM, "xtrim", key);
        gr_db_mark_changed(db, key, (int64_t)deleted);
        if (args.trim.approx) effect_rewritten(db, argc, argv, argv_length, &args, stream);
    } else {
        gr_call_events_stated(db);
    }
    gr_reply_integer(reply, (int64_t)deleted);
}

/* ---- XRANGE, XREVRANGE (typed: XRangeRequest, reverse for XREVRANGE) ---- */

/* Redis's interval parse without the reply: exclusive bounds moved inward. 0, or -1 with *error. */
static int parse_bound(gr_bytes_t text, gr_stream_id_t *id, int end, gr_build_error_t *error) {
    int exclusive = text.length > 1 && text.data[0] == '(';
    const uint8_t *data = exclusive ? text.data + 1 : text.data;
    size_t length = exclusive ? text.length - 1u : text.length;
    if (gr_xcmd_parse_id(data, length, id, end ? UINT64_MAX : 0, exclusive, NULL) != 0)
        return refuse_generic(error, GR_XCMD_INVALID_ID);
    if (exclusive && (end ? gr_stream_id_decr(id) : gr_stream_id_incr(id)) != 0)
        return refuse_generic(error, end ? "ERR invalid end ID for the interval" : "ERR invalid start ID for the interval");
    return 0;
}

/* XRANGE key start end [COUNT n] / XREVRANGE key end start [COUNT n] -> XRangeRequest. */
int gr_build_xrange(gr_build_context_t *ctx) {
    gr_request_t *r = ctx->request;   /* flag (reverse) is the row's match field */
    const size_t start_at = r->flag ? 3 : 2, end_at = r->flag ? 2 : 3;
    gr_stream_id_t ignored;
    r->arg1 = gr_xcmd_arg(ctx->argv, ctx->argv_length, start_at);
    r->arg2 = gr_xcmd_arg(ctx->argv, ctx->argv_length, end_at);
    if (parse_bound(r->arg1, &ignored, 0, ctx->error) != 0 || parse_bound(r->arg2, &ignored, 1, ctx->error) != 0)
        return -1;
    r->index = -1;
    for (size_t j = 4; j < ctx->argc; j++) {
        if (gr_word_is(ctx->argv[j], ctx->argv_length[j], "count") && j + 1 < ctx->argc) {
            if (gr_bytes_to_int64(ctx->argv[j + 1], ctx->argv_length[j + 1], &r->index) != 0)
                return refuse_not_integer(ctx->error);
            if (r->index < 0) r->index = 0;
            j++;
        } else {
            return refuse(ctx->error, GR_ERR_SYNTAX, "ERR syntax error");
        }
    }
    return 0;
}

void gr_cmd_xrange(gr_server_t *db, const gr_request_t *request, gr_reply_t *reply) {
    const gr_xrange_view_t req = gr_xrange_view(request);
    gr_stream_id_t start, end;
    gr_build_error_t error;
    if (parse_bound(req.start, &start, 0, &error) != 0 || parse_bound(req.end, &end, 1, &error) != 0) {
        gr_reply_build_error(reply, &error);
        return;
    }
    gr_stream_t *stream;
    int found = gr_xcmd_find_or_reply(db, req.key, &stream, 0, reply);
    if (found < 0) return;
    if (!found) {
        gr_reply_array_begin(reply, 0);
        return;
    }
    if (req.count == 0) {   /* Redis: COUNT 0 (or negative) on a stream is a nil array */
        gr_reply_nil_array(reply);
        return;
    }
    gr_xcmd_reply_range(reply, stream, &start, &end, req.count < 0 ? 0 : (size_t)req.count, req.reverse != 0);
}

/* ---- XLEN ---- */

void gr_cmd_xlen(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    (void)argc;
    gr_stream_t *stream;
    int found = gr_xcmd_find_or_reply(db, gr_xcmd_arg(argv, argv_length, 1), &stream, 0, reply);
    if (found >= 0) gr_reply_integer(reply, found ? (int64_t)stream->length : 0);
}

/* ---- XDEL ---- */

void gr_cmd_xdel(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    gr_bytes_t key = gr_xcmd_arg(argv, argv_length, 1);
    gr_stream_t *stream;
    int found = gr_xcmd_find_or_reply(db, key, &stream, 1, reply);
    if (found < 0) return;
    if (!found) {
        gr_reply_integer(reply, 0);
        return;
    }
    /* every ID is checked before any is deleted */
    gr_stream_id_t on_stack[16];
    const size_t n = argc - 2;
    gr_stream_id_t *ids = n <= 16 ? on_stack : gr_mem_alloc(n * sizeof *ids, GR_MEM_OTHER);
    if (!ids) {
        gr_reply_oom(reply);
        return;
    }
    for (size_t j = 0; j < n; j++) {
        if (gr_xcmd_parse_id_or_reply(argv[j + 2], argv_length[j + 2], &ids[j], 0, 1, NULL, reply) != 0) goto done;
    }
    int64_t deleted = 0;
    for (size_t j = 0; j < n; j++) {
        if (gr_stream_delete(stream, &ids[j])) {
            if (gr_stream_id_cmp(&ids[j], &stream->max_deleted_entry_id) > 0) stream->max_deleted_entry_id = ids[j];
            deleted++;
        }
    }
    if (deleted) {
        gr_db_mark_changed(db, key, deleted);
        gr_call_notify(db, GR_NOTIFY_STREAM, "xdel", key);
    } else {
        gr_call_events_stated(db);
    }
    gr_reply_integer(reply, deleted);
done:
    if (ids != on_stack) gr_mem_free(ids, GR_MEM_OTHER);
}

/* ---- XSETID ---- */

void gr_cmd_xsetid(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    gr_stream_id_t id, max_deleted = {0, 0};
    int64_t entries_added = -1;
    if (gr_xcmd_parse_id_or_reply(argv[2], argv_length[2], &id, 0, 1, NULL, reply) != 0) return;
    for (size_t i = 3; i < argc;) {
        const size_t more = argc - 1 - i;
        if (gr_word_is(argv[i], argv_length[i], "entriesadded") && more) {
            if (gr_xcmd_int64_or_reply(argv[i + 1], argv_length[i + 1], &entries_added, NULL, reply) != 0) return;
            if (entries_added < 0) {
                gr_xcmd_reply_error(reply, "ERR entries_added must be positive");
                return;
            }
            i += 2;
        } else if (gr_word_is(argv[i], argv_length[i], "maxdeletedid") && more) {
            if (gr_xcmd_parse_id_or_reply(argv[i + 1], argv_length[i + 1], &max_deleted, 0, 1, NULL, reply) != 0) return;
            if (gr_stream_id_cmp(&id, &max_deleted) < 0) {
                gr_xcmd_reply_error(reply, "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id");
                return;
            }
            i += 2;
        } else {
            gr_reply_error_text(reply, GR_ERR_SYNTAX, "ERR syntax error");
            return;
        }
    }
    gr_bytes_t key = gr_xcmd_arg(argv, argv_length, 1);
    gr_stream_t *stream;
    int found = gr_xcmd_find_or_reply(db, key, &stream, 1, reply);
    if (found < 0) return;
    if (!found) {
        gr_reply_error_text(reply, GR_ERR_NO_SUCH_KEY, "ERR no such key");
        return;
    }
    if (stream->length > 0) {
        gr_stream_id_t top;
        gr_stream_edge_id(stream, 0, &top);
        if (gr_stream_id_cmp(&id, &top) < 0) {
            gr_xcmd_reply_error(reply, "ERR The ID specified in XSETID is smaller than the target stream top item");
            return;
        }
        if (entries_added != -1 && stream->length > (uint64_t)entries_added) {
            gr_xcmd_reply_error(reply, "ERR The entries_added specified in XSETID is smaller than the target stream length");
            return;
        }
    }
    stream->last_id = id;
    if (entries_added != -1) stream->entries_added = (uint64_t)entries_added;
    if (!gr_stream_id_is_zero(&max_deleted)) stream->max_deleted_entry_id = max_deleted;
    gr_reply_ok(reply);
    gr_db_mark_changed(db, key, 1);
    gr_call_notify(db, GR_NOTIFY_STREAM, "xsetid", key);
}
