/* cmd_stream.c — the STREAM command layer's entry commands and shared helpers: XADD,
 * XRANGE/XREVRANGE, XLEN, XDEL, XTRIM, XSETID, with Redis 7.0's replies, error texts, keyspace
 * events and propagated effects. The engine is engines/stream/; the groups' commands are
 * cmd_stream_group.c, the reads cmd_stream_read.c, and what they share cmd_stream_shared.h.
 * Every command is an argv row (stream.def); over the ring the hot ones are typed.
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

/* The index of XADD's ID (or XTRIM's end), or 0 with a reply written. */
static size_t parse_trim_args_or_reply(const gr_server_t *db, size_t argc, const uint8_t *const *argv,
                                       const size_t *argv_length, int xadd, trim_args_t *args, gr_reply_t *reply) {
    memset(args, 0, sizeof *args);
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
                gr_xcmd_reply_error(reply, "ERR syntax error, MAXLEN and MINID options at the same time are not compatible");
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
                int64_t value;
                if (gr_xcmd_int64_or_reply(argv[i + 1], argv_length[i + 1], &value, NULL, reply) != 0) return 0;
                if (value < 0) {
                    gr_xcmd_reply_error(reply, "ERR The MAXLEN argument must be >= 0.");
                    return 0;
                }
                args->trim.maxlen = (uint64_t)value;
                args->trim.strategy = GR_STREAM_TRIM_MAXLEN;
            } else {
                if (gr_xcmd_parse_id_or_reply(argv[i + 1], argv_length[i + 1], &args->trim.minid, 0, 1, NULL, reply) != 0)
                    return 0;
                args->trim.strategy = GR_STREAM_TRIM_MINID;
            }
            i++;
            args->threshold_at = i;
        } else if (gr_word_is(opt, opt_length, "limit") && more) {
            if (gr_xcmd_int64_or_reply(argv[i + 1], argv_length[i + 1], &args->trim.limit, NULL, reply) != 0) return 0;
            if (args->trim.limit < 0) {
                gr_xcmd_reply_error(reply, "ERR The LIMIT argument must be >= 0.");
                return 0;
            }
            args->limit_given = 1;
            i++;
        } else if (xadd && gr_word_is(opt, opt_length, "nomkstream")) {
            args->nomkstream = 1;
        } else if (xadd) {
            if (gr_xcmd_parse_id_or_reply(opt, opt_length, &args->id, 0, 1, &args->seq_given, reply) != 0) return 0;
            args->id_given = 1;
            break;
        } else {
            gr_reply_error_text(reply, GR_ERR_SYNTAX, "ERR syntax error");
            return 0;
        }
    }
    if (args->trim.limit && args->trim.strategy == GR_STREAM_TRIM_NONE) {
        gr_xcmd_reply_error(reply, "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy");
        return 0;
    }
    if (!xadd && args->trim.strategy == GR_STREAM_TRIM_NONE) {
        gr_xcmd_reply_error(reply, "ERR syntax error, XTRIM must be called with a trimming strategy");
        return 0;
    }
    if (args->limit_given) {
        if (!args->trim.approx) {
            gr_xcmd_reply_error(reply, "ERR syntax error, LIMIT cannot be used without the special ~ option");
            return 0;
        }
    } else if (args->trim.approx) {
        args->trim.limit = 100 * db->config.stream_node_max_entries;
        if (args->trim.limit <= 0 || args->trim.limit > 1000000) args->trim.limit = 10000;
    } else {
        args->trim.limit = 0;
    }
    args->id_at = i;
    return i;
}

/* The effect of an XADD or XTRIM whose trim was approximate or whose ID was generated: its argv
 * with "~" as "=", the threshold as what it left (MAXLEN: the length; MINID: the first entry's
 * ID), LIMIT dropped, and the ID as added — so a replay trims and adds exactly the same. */
static void effect_rewritten(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                             const trim_args_t *args, const gr_stream_t *stream, const gr_stream_id_t *added) {
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
        } else if (added && i == args->id_at) {
            effect_id(db, added);
        } else {
            gr_effect_bulk(db, argv[i], argv_length[i]);
        }
    }
}

static int32_t running_db_index(const gr_server_t *db) { return db->current ? db->current->db_index : 0; }

/* ---- XADD ---- */

void gr_cmd_xadd(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    trim_args_t args;
    size_t id_at = parse_trim_args_or_reply(db, argc, argv, argv_length, 1, &args, reply);
    if (!id_at) return;
    const size_t field_at = id_at + 1;
    if (argc < field_at + 2 || (argc - field_at) % 2 == 1) {
        gr_reply_arity_error(reply, "xadd");
        return;
    }
    if (args.id_given && args.seq_given && gr_stream_id_is_zero(&args.id)) {
        gr_xcmd_reply_error(reply, "ERR The ID specified in XADD must be greater than 0-0");
        return;
    }
    gr_bytes_t key = gr_xcmd_arg(argv, argv_length, 1);
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
    const size_t pairs = (argc - field_at) / 2;
    uint64_t total = 0;
    for (size_t i = field_at; i < argc; i++) total += argv_length[i] + 10;
    if (total > UINT32_MAX / 4) {
        gr_xcmd_reply_error(reply, "ERR Elements are too large to be stored");
        return;
    }
    int created = 0;
    if (!found) {
        if (!(stream = gr_stream_new())) {
            gr_reply_oom(reply);
            return;
        }
        if (!gr_db_add_key(db, key, GR_TYPE_STREAM, stream)) {
            gr_stream_free(stream);
            gr_reply_oom(reply);
            return;
        }
        created = 1;
    }
    const gr_stream_limits_t limits = gr_xcmd_limits(db);
    if (gr_stream_append(stream, &id, pairs, argv + field_at, argv_length + field_at, &limits) != 0) {
        if (created) gr_db_delete_key(db, key);
        gr_reply_oom(reply);
        return;
    }
    gr_xcmd_reply_id(reply, &id);
    gr_db_mark_changed(db, key, 1);
    gr_call_notify(db, GR_NOTIFY_STREAM, "xadd", key);
    if (args.trim.strategy != GR_STREAM_TRIM_NONE && gr_stream_trim(stream, &args.trim))
        gr_call_notify(db, GR_NOTIFY_STREAM, "xtrim", key);
    if (args.trim.approx || !args.id_given || !args.seq_given)
        effect_rewritten(db, argc, argv, argv_length, &args, stream, &id);
    if (!created) gr_blocking_signal(db, running_db_index(db), key.data, key.length);
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
    if (!parse_trim_args_or_reply(db, argc, argv, argv_length, 0, &args, reply)) return;
    uint64_t deleted = gr_stream_trim(stream, &args.trim);
    if (deleted) {
        gr_call_notify(db, GR_NOTIFY_STREAM, "xtrim", key);
        gr_db_mark_changed(db, key, (int64_t)deleted);
        if (args.trim.approx) effect_rewritten(db, argc, argv, argv_length, &args, stream, NULL);
    } else {
        gr_call_events_stated(db);
    }
    gr_reply_integer(reply, (int64_t)deleted);
}

/* ---- XRANGE, XREVRANGE ---- */

static void range_generic(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                          gr_reply_t *reply, int reverse) {
    gr_stream_id_t start, end;
    const size_t start_at = reverse ? 3 : 2, end_at = reverse ? 2 : 3;
    if (gr_xcmd_parse_start_or_reply(argv[start_at], argv_length[start_at], &start, reply) != 0) return;
    if (gr_xcmd_parse_end_or_reply(argv[end_at], argv_length[end_at], &end, reply) != 0) return;
    int64_t count = -1;
    for (size_t j = 4; j < argc; j++) {
        if (gr_word_is(argv[j], argv_length[j], "count") && j + 1 < argc) {
            if (gr_xcmd_int64_or_reply(argv[j + 1], argv_length[j + 1], &count, NULL, reply) != 0) return;
            if (count < 0) count = 0;
            j++;
        } else {
            gr_reply_error_text(reply, GR_ERR_SYNTAX, "ERR syntax error");
            return;
        }
    }
    gr_stream_t *stream;
    int found = gr_xcmd_find_or_reply(db, gr_xcmd_arg(argv, argv_length, 1), &stream, 0, reply);
    if (found < 0) return;
    if (!found) {
        gr_reply_array_begin(reply, 0);
        return;
    }
    if (count == 0) {   /* Redis: COUNT 0 (or negative) on a stream is a nil array */
        gr_reply_nil_array(reply);
        return;
    }
    gr_xcmd_reply_range(reply, stream, &start, &end, count < 0 ? 0 : (size_t)count, reverse);
}

void gr_cmd_xrange(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    range_generic(db, argc, argv, argv_length, reply, 0);
}

void gr_cmd_xrevrange(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                      gr_reply_t *reply) {
    range_generic(db, argc, argv, argv_length, reply, 1);
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
