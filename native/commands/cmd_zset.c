/* cmd_zset.c — the sorted-set command layer: Redis's semantics over the zset engine.
 *
 * The engine is engines/zset/ (a B+tree with counts and, past zset-max-listpack-*, the table
 * engine as the member -> score index); the command layer validates every argument first, then
 * mutates, then replies, with Redis 7's reply shapes and error texts. Scores are written as
 * Redis 7.0 writes them ("%.17g", "inf", "-inf"): a bulk string over RESP2 and the ring, a
 * RESP3 double over RESP3, where member/score lists become arrays of [member, score] pairs.
 * Every command is an argv row (zset.def): over the ring it travels as a CommandRequest. A
 * sorted set left empty by any command is deleted, as in Redis.
 *
 * This file holds the helpers the other sorted-set command files share (declared in
 * cmd_zset_shared.h, which lists the four files) and the plain reads and writes: ZADD,
 * ZINCRBY, ZSCORE, ZMSCORE, ZCARD, ZRANK, ZREVRANK, ZREM, ZRANDMEMBER, ZSCAN, GOBLIN.ZSET.*.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands/cmd_zset_shared.h"
#include "commands/member_scan.h"
#include "core/number.h"
#include "exec/blocking.h"
#include "core/bytes.h"
#include "exec/lookup.h"
#include "exec/transaction.h"

static void reply_not_float(gr_reply_t *reply) { reply_error(reply, "ERR value is not a valid float"); }

void gr_zcmd_delete_if_empty(gr_server_t *db, gr_bytes_t key, gr_zset_t *zset) {
    if (gr_zset_count(zset) == 0) gr_db_delete_key(db, key);
}

/* The sorted set at key: 1 found (*zset), 0 absent, -1 another type (WRONGTYPE replied). */
int gr_zcmd_find_or_reply(gr_server_t *db, gr_bytes_t key, gr_zset_t **zset, int for_write, gr_reply_t *reply) {
    void *value;
    int found = gr_db_find_typed(db, key, GR_TYPE_ZSET, for_write, &value, reply);
    if (found > 0) *zset = value;
    return found;
}

/* Put a new set under key (replacing what was there when replace); it signals waiters. 0, or
 * -1 with OOM replied (the set freed). */
static int store_zset_or_reply(gr_server_t *db, gr_bytes_t key, gr_zset_t *zset, gr_reply_t *reply) {
    if (gr_db_set_key(db, key, GR_TYPE_ZSET, zset) != 0) {
        gr_zset_free(zset);
        gr_reply_oom(reply);
        return -1;
    }
    return 0;
}

/* ---- numbers: Redis's parsing and formatting of scores ---- */

/* Redis's getDoubleFromObject: strtod over the whole text, no leading space, not NaN. */
int gr_zcmd_parse_double(const uint8_t *data, size_t length, double *out) {
    /* no length limit: Redis reads DBL_MAX written out in full (309 digits) */
    char small[256];
    if (length == 0) return -1;
    char *buffer = length < sizeof small ? small : malloc(length + 1);
    if (!buffer) return -1;
    memcpy(buffer, data, length);
    buffer[length] = '\0';
    int bad = buffer[0] == ' ' || (buffer[0] >= '\t' && buffer[0] <= '\r');
    char *end = buffer;
    errno = 0;
    double value = bad ? 0 : strtod(buffer, &end);
    if (!bad && ((size_t)(end - buffer) != length || isnan(value))) bad = 1;
    if (!bad && errno == ERANGE && (value == HUGE_VAL || value == -HUGE_VAL || fpclassify(value) == FP_ZERO)) bad = 1;
    if (buffer != small) free(buffer);
    if (bad) return -1;
    *out = value;
    return 0;
}

/* Redis 7.0's addReplyDouble text: "%.17g", "inf" and "-inf" (core/number's). */
static size_t format_score(double score, char *out, size_t size) { return gr_double_to_text(score, out, size); }

void gr_zcmd_reply_score(gr_server_t *db, gr_reply_t *reply, double score) {
    if (protocol_of(db) >= 3) {
        gr_reply_double(reply, score);
        return;
    }
    char text[64];
    size_t length = format_score(score, text, sizeof text);
    gr_reply_bulk(reply, (const uint8_t *)text, length);
}

/* ---- replying member lists ---- */

/* Begin a list of n members, with scores when withscores: flat over RESP2 and the ring,
 * [member, score] pairs over RESP3. */
static void reply_list_begin(gr_server_t *db, gr_reply_t *reply, size_t n, int withscores) {
    gr_reply_array_begin(reply, withscores && protocol_of(db) < 3 ? n * 2 : n);
}

static void reply_list_entry(gr_server_t *db, gr_reply_t *reply, const gr_zset_entry_t *e, int withscores) {
    if (withscores && protocol_of(db) >= 3) gr_reply_array_begin(reply, 2);
    gr_reply_bulk(reply, e->member, e->member_length);
    if (withscores) gr_zcmd_reply_score(db, reply, e->score);
}

/* Reply ranks [first, first + n) (forward) or first, first - 1, ... (reverse). */
void gr_zcmd_reply_ranks(gr_server_t *db, gr_reply_t *reply, const gr_zset_t *zset, size_t first, size_t n, int reverse,
                        int withscores) {
    reply_list_begin(db, reply, n, withscores);
    gr_zset_entry_t e;
    if (!reverse) {
        gr_zset_iter_t iter;
        gr_zset_iter_start(zset, first, &iter);
        for (size_t i = 0; i < n && gr_zset_iter_next(&iter, &e); i++) reply_list_entry(db, reply, &e, withscores);
    } else {
        /* in chunks from the top: each read forward with one descent, then replied backwards */
        enum { CHUNK = 128 };
        gr_zset_entry_t chunk[CHUNK];
        size_t done = 0;
        while (done < n) {
            size_t take = n - done < CHUNK ? n - done : CHUNK;
            size_t top = first - done, low = top + 1 - take;
            gr_zset_iter_t iter;
            gr_zset_iter_start(zset, low, &iter);
            size_t got = 0;
            while (got < take && gr_zset_iter_next(&iter, &chunk[got])) got++;
            while (got) reply_list_entry(db, reply, &chunk[--got], withscores);
            done += take;
        }
    }
}

void gr_zcmd_sink_add(entry_sink_t *sink, const gr_zset_entry_t *e) {
    if (!sink->failed && gr_zset_set(sink->zset, e->member, e->member_length, e->score, &sink->limits) < 0) sink->failed = 1;
}

/* Store set under dst, or delete dst when it is empty; reply its size. */
void gr_zcmd_store_result(gr_server_t *db, gr_bytes_t dst, gr_zset_t *result, gr_reply_t *reply) {
    size_t count = gr_zset_count(result);
    if (count == 0) {
        gr_zset_free(result);
        if (gr_db_delete_key(db, dst)) gr_db_count_changes(db, 1);
        gr_reply_integer(reply, 0);
        return;
    }
    if (store_zset_or_reply(db, dst, result, reply) != 0) return;
    gr_db_mark_changed(db, dst, 1);
    gr_reply_integer(reply, (int64_t)count);
}

/* ---- ZADD, ZINCRBY ---- */

enum { ZADD_NX = 1, ZADD_XX = 2, ZADD_GT = 4, ZADD_LT = 8, ZADD_CH = 16, ZADD_INCR = 32 };

/* One member: Redis's zsetAdd. Returns 1 processed, 0 a no-op, -1 NaN, -2 OOM;
 * *added / *updated counted, *result the member's score afterwards. */
static int zadd_one(gr_zset_t *zset, const uint8_t *m, size_t ml, double score, int flags,
                    const gr_zset_limits_t *limits, int64_t *added, int64_t *updated, double *result) {
    double current;
    if (gr_zset_score(zset, m, ml, &current)) {
        if (flags & ZADD_NX) return 0;
        if (flags & ZADD_INCR) {
            score += current;
            if (isnan(score)) return -1;
        }
        if (((flags & ZADD_LT) && score >= current) || ((flags & ZADD_GT) && score <= current)) return 0;
        *result = score;
        if (score != current) {
            if (gr_zset_set(zset, m, ml, score, limits) < 0) return -2;
            (*updated)++;
        }
        return 1;
    }
    if (flags & ZADD_XX) return 0;
    if (gr_zset_set(zset, m, ml, score, limits) < 0) return -2;
    (*added)++;
    *result = score;
    return 1;
}

static void zadd_generic(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                         gr_reply_t *reply, int flags) {
    size_t i = 2;
    for (; i < argc; i++) {
        if (gr_word_is(argv[i], argv_length[i], "nx")) flags |= ZADD_NX;
        else if (gr_word_is(argv[i], argv_length[i], "xx")) flags |= ZADD_XX;
        else if (gr_word_is(argv[i], argv_length[i], "gt")) flags |= ZADD_GT;
        else if (gr_word_is(argv[i], argv_length[i], "lt")) flags |= ZADD_LT;
        else if (gr_word_is(argv[i], argv_length[i], "ch")) flags |= ZADD_CH;
        else if (gr_word_is(argv[i], argv_length[i], "incr")) flags |= ZADD_INCR;
        else break;
    }
    size_t elements = argc - i;
    if (elements % 2 || elements == 0) { reply_syntax(reply); return; }
    elements /= 2;
    if ((flags & ZADD_NX) && (flags & ZADD_XX)) {
        reply_error(reply, "ERR XX and NX options at the same time are not compatible");
        return;
    }
    if (((flags & ZADD_GT) && (flags & ZADD_NX)) || ((flags & ZADD_LT) && (flags & ZADD_NX)) ||
        ((flags & ZADD_GT) && (flags & ZADD_LT))) {
        reply_error(reply, "ERR GT, LT, and/or NX options at the same time are not compatible");
        return;
    }
    if ((flags & ZADD_INCR) && elements > 1) {
        reply_error(reply, "ERR INCR option supports a single increment-element pair");
        return;
    }
    size_t first = i;
    for (size_t j = 0; j < elements; j++) {
        double score;
        if (gr_zcmd_parse_double(argv[first + 2 * j], argv_length[first + 2 * j], &score) != 0) { reply_not_float(reply); return; }
    }
    gr_bytes_t key = arg(argv, argv_length, 1);
    gr_zset_t *zset = NULL;
    int found = gr_zcmd_find_or_reply(db, key, &zset, 1, reply);
    if (found < 0) return;
    if (!found) {
        if (flags & ZADD_XX) {
            if (flags & ZADD_INCR) gr_reply_nil(reply); else gr_reply_integer(reply, 0);
            return;
        }
        zset = gr_zset_new();
        if (!zset || !gr_db_add_key(db, key, GR_TYPE_ZSET, zset)) {
            gr_zset_free(zset);
            gr_reply_oom(reply);
            return;
        }
    }
    gr_zset_limits_t limits = limits_of(db);
    int64_t added = 0, updated = 0, processed = 0;
    double result = 0;
    for (size_t j = 0; j < elements; j++) {
        double score;
        gr_zcmd_parse_double(argv[first + 2 * j], argv_length[first + 2 * j], &score);
        int outcome = zadd_one(zset, argv[first + 2 * j + 1], argv_length[first + 2 * j + 1], score, flags, &limits,
                               &added, &updated, &result);
        if (outcome < 0) {
            if (added + updated) gr_db_mark_changed(db, key, added + updated);
            gr_zcmd_delete_if_empty(db, key, zset);
            if (outcome == -1) reply_error(reply, "ERR resulting score is not a number (NaN)");
            else gr_reply_oom(reply);
            return;
        }
        processed += outcome;
    }
    if (added + updated) gr_db_mark_changed(db, key, added + updated);
    gr_zcmd_delete_if_empty(db, key, zset);
    if (flags & ZADD_INCR) {   /* ZADD INCR and ZINCRBY: "zincr", as Redis */
        gr_call_events_stated(db);
        if (added + updated) gr_call_notify(db, GR_NOTIFY_ZSET, "zincr", key);
        if (processed) gr_zcmd_reply_score(db, reply, result); else gr_reply_nil(reply);
    } else {
        gr_reply_integer(reply, (flags & ZADD_CH) ? added + updated : added);
    }
}

void gr_cmd_zadd(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    zadd_generic(db, argc, argv, argv_length, reply, 0);
}

void gr_cmd_zincrby(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    (void)argc;
    const uint8_t *args[5] = {argv[0], argv[1], (const uint8_t *)"incr", argv[2], argv[3]};
    size_t lengths[5] = {argv_length[0], argv_length[1], 4, argv_length[2], argv_length[3]};
    zadd_generic(db, 5, args, lengths, reply, 0);
}

/* ---- single-key reads ---- */

void gr_cmd_zscore(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    (void)argc;
    gr_zset_t *zset = NULL;
    int found = gr_zcmd_find_or_reply(db, arg(argv, argv_length, 1), &zset, 0, reply);
    if (found < 0) return;
    double score;
    if (found && gr_zset_score(zset, argv[2], argv_length[2], &score)) gr_zcmd_reply_score(db, reply, score);
    else gr_reply_nil(reply);
}

void gr_cmd_zmscore(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    gr_zset_t *zset = NULL;
    int found = gr_zcmd_find_or_reply(db, arg(argv, argv_length, 1), &zset, 0, reply);
    if (found < 0) return;
    gr_reply_array_begin(reply, argc - 2);
    for (size_t i = 2; i < argc; i++) {
        double score;
        if (found && gr_zset_score(zset, argv[i], argv_length[i], &score)) gr_zcmd_reply_score(db, reply, score);
        else gr_reply_nil(reply);
    }
}

void gr_cmd_zcard(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    (void)argc;
    gr_zset_t *zset = NULL;
    int found = gr_zcmd_find_or_reply(db, arg(argv, argv_length, 1), &zset, 0, reply);
    if (found >= 0) gr_reply_integer(reply, found ? (int64_t)gr_zset_count(zset) : 0);
}

static void zrank_generic(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                          gr_reply_t *reply, int reverse) {
    int withscore = 0;
    if (argc > 4) { reply_syntax(reply); return; }
    if (argc == 4) {
        if (!gr_word_is(argv[3], argv_length[3], "withscore")) { reply_syntax(reply); return; }
        withscore = 1;
    }
    gr_zset_t *zset = NULL;
    int found = gr_zcmd_find_or_reply(db, arg(argv, argv_length, 1), &zset, 0, reply);
    if (found < 0) return;
    double score;
    int64_t rank = found ? gr_zset_rank(zset, argv[2], argv_length[2], &score) : -1;
    if (rank < 0) {
        if (withscore) gr_reply_nil_array(reply); else gr_reply_nil(reply);
        return;
    }
    if (reverse) rank = (int64_t)gr_zset_count(zset) - 1 - rank;
    if (!withscore) { gr_reply_integer(reply, rank); return; }
    gr_reply_array_begin(reply, 2);
    gr_reply_integer(reply, rank);
    gr_zcmd_reply_score(db, reply, score);
}

void gr_cmd_zrank(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    zrank_generic(db, argc, argv, argv_length, reply, 0);
}

void gr_cmd_zrevrank(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    zrank_generic(db, argc, argv, argv_length, reply, 1);
}

/* ---- ZREM and the ZREMRANGEBY* family ---- */

void gr_cmd_zrem(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    gr_bytes_t key = arg(argv, argv_length, 1);
    gr_zset_t *zset = NULL;
    int found = gr_zcmd_find_or_reply(db, key, &zset, 1, reply);
    if (found < 0) return;
    int64_t removed = 0;
    for (size_t i = 2; found && i < argc; i++) removed += gr_zset_delete(zset, argv[i], argv_length[i]);
    if (removed) {
        gr_db_mark_changed(db, key, removed);
        gr_zcmd_delete_if_empty(db, key, zset);
    }
    gr_reply_integer(reply, removed);
}

/* ---- ZRANDMEMBER ---- */

static uint64_t random_state = 0x2545F4914F6CDD1Dull;

static uint64_t next_random(void) {   /* xorshift64*: spread, not secrecy */
    uint64_t x = random_state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    random_state = x;
    return x * 0x2545F4914F6CDD1Dull;
}

void gr_cmd_zrandmember(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    int64_t count = 0;
    int withscores = 0;
    if (argc >= 3 && gr_bytes_to_int64(argv[2], argv_length[2], &count) != 0) { reply_not_integer(reply); return; }
    if (argc >= 3 && count == INT64_MIN) {   /* Redis's range: -LONG_MAX .. LONG_MAX, checked before the syntax */
        gr_reply_error_text(reply, GR_ERR_OUT_OF_RANGE, GR_RANDOM_COUNT_RANGE_ERROR);
        return;
    }
    if (argc > 4) { reply_syntax(reply); return; }
    if (argc == 4) {
        if (!gr_word_is(argv[3], argv_length[3], "withscores")) { reply_syntax(reply); return; }
        withscores = 1;
        if (count < -INT64_MAX / 2 || count > INT64_MAX / 2) {
            gr_reply_error_text(reply, GR_ERR_OUT_OF_RANGE, "ERR value is out of range");
            return;
        }
    }
    gr_zset_t *zset = NULL;
    int found = gr_zcmd_find_or_reply(db, arg(argv, argv_length, 1), &zset, 0, reply);
    if (found < 0) return;
    if (argc == 2) {
        gr_zset_entry_t e;
        if (!found) { gr_reply_nil(reply); return; }
        gr_zset_at(zset, next_random() % gr_zset_count(zset), &e);
        gr_reply_bulk(reply, e.member, e.member_length);
        return;
    }
    if (!found || count == 0) { gr_reply_array_begin(reply, 0); return; }
    size_t size = gr_zset_count(zset);
    gr_zset_entry_t e;
    if (count < -GR_RANDOM_REPEATS_MAX) {
        gr_reply_error_text(reply, GR_ERR_OUT_OF_RANGE, GR_RANDOM_REPEATS_ERROR);
        return;
    }
    if (count < 0) {   /* repetitions allowed */
        size_t n = (size_t)(-count);
        reply_list_begin(db, reply, n, withscores);
        for (size_t i = 0; i < n; i++) {
            gr_zset_at(zset, next_random() % size, &e);
            reply_list_entry(db, reply, &e, withscores);
        }
        return;
    }
    if ((uint64_t)count >= size) {   /* the whole set */
        gr_zcmd_reply_ranks(db, reply, zset, 0, size, 0, withscores);
        return;
    }
    /* distinct: a random subset of ranks, chosen by selection sampling, replied in a shuffled order */
    size_t n = (size_t)count;
    size_t *ranks = gr_mem_alloc(n * sizeof *ranks, GR_MEM_OTHER);
    if (!ranks) { gr_reply_oom(reply); return; }
    size_t chosen = 0;
    for (size_t r = 0; r < size && chosen < n; r++)
        if (next_random() % (size - r) < n - chosen) ranks[chosen++] = r;
    for (size_t i = n; i > 1; i--) {
        size_t j = next_random() % i;
        size_t t = ranks[i - 1];
        ranks[i - 1] = ranks[j];
        ranks[j] = t;
    }
    reply_list_begin(db, reply, n, withscores);
    for (size_t i = 0; i < n; i++) {
        gr_zset_at(zset, ranks[i], &e);
        reply_list_entry(db, reply, &e, withscores);
    }
    gr_mem_free(ranks, GR_MEM_OTHER);
}

/* ---- ZSCAN ---- */

static void scan_collect(void *context, const gr_zset_entry_t *entry) {
    /* copies: a packed set's member text is in each one's text */
    gr_zset_entry_t *slot = gr_member_scan_slot(context, entry->member, entry->member_length);
    if (slot) *slot = *entry;
}

void gr_cmd_zscan(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    uint64_t cursor;
    if (gr_parse_scan_cursor(argv[2], argv_length[2], &cursor) != 0) { reply_error(reply, "ERR invalid cursor"); return; }
    gr_zset_t *zset = NULL;
    int found = gr_zcmd_find_or_reply(db, arg(argv, argv_length, 1), &zset, 0, reply);
    if (found < 0) return;
    if (!found) { gr_member_scan_reply_empty(reply); return; }
    int packed = gr_zset_is_packed(zset);
    gr_member_scan_t scan;
    if (gr_member_scan_start_or_reply(&scan, sizeof(gr_zset_entry_t), argc, argv, argv_length, 3, 0, reply) != 0) return;
    uint64_t next = gr_zset_scan(zset, cursor, (size_t)scan.count, scan_collect, &scan);
    if (scan.failed) {
        gr_member_scan_free(&scan);
        gr_reply_oom(reply);
        return;
    }
    const gr_zset_entry_t *entries = scan.entries;
    gr_member_scan_reply_begin(reply, next, scan.entry_count * 2);
    for (size_t i = 0; i < scan.entry_count; i++) {
        char score[64];
        const uint8_t *member = packed ? entries[i].text : entries[i].member;
        gr_reply_bulk(reply, member, entries[i].member_length);
        size_t n = format_score(entries[i].score, score, sizeof score);
        gr_reply_bulk(reply, (const uint8_t *)score, n);
    }
    gr_member_scan_free(&scan);
}

/* ---- GOBLIN.ZSET.INTERNALS, GOBLIN.OPTIMIZE ---- */

/* GOBLIN.ZSET.INTERNALS key: the set's layout as a map (RESP3) or flat array (RESP2), as
 * GOBLIN.LIST.INTERNALS; nil for a missing key, WRONGTYPE for another type. */
void gr_cmd_zset_internals(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                           gr_reply_t *reply) {
    (void)argc;
    gr_zset_t *zset;
    int found = gr_zcmd_find_or_reply(db, arg(argv, argv_length, 1), &zset, 0, reply);
    if (found < 0) return;
    if (!found) { gr_reply_nil(reply); return; }
    gr_zset_internals_t in;
    gr_zset_internals(zset, &in);
    const struct { const char *name; size_t value; } rows[] = {
        {"members", in.members}, {"depth", in.depth}, {"leaves", in.leaves}, {"inner_nodes", in.inner_nodes},
        {"leaf_bytes_used", in.leaf_bytes_used}, {"leaf_bytes_allocated", in.leaf_bytes_allocated},
        {"inner_bytes", in.inner_bytes}, {"index_slots", in.index_slots}, {"index_tombstones", in.index_tombstones},
        {"index_resizing", (size_t)in.index_resizing}, {"index_bytes", in.index_bytes},
        {"total_allocated_bytes", in.total_allocated_bytes},
    };
    gr_reply_map_begin(reply, 2 + sizeof rows / sizeof rows[0]);
    gr_reply_bulk(reply, (const uint8_t *)"representation", 14);
    gr_reply_bulk(reply, (const uint8_t *)in.representation, strlen(in.representation));
    gr_reply_bulk(reply, (const uint8_t *)"encoding", 8);
    const char *encoding = gr_zset_encoding_name(zset);
    gr_reply_bulk(reply, (const uint8_t *)encoding, strlen(encoding));
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        gr_reply_bulk(reply, (const uint8_t *)rows[i].name, strlen(rows[i].name));
        gr_reply_integer(reply, (int64_t)rows[i].value);
    }
}

/* GOBLIN.OPTIMIZE key: compacts a sorted set (gr_zset_optimize) and replies how many allocated
 * bytes that released; 0 for a missing key, WRONGTYPE for another type. Its members and
 * scores do not change, so it touches neither WATCH nor the dirty counter. */
void gr_cmd_goblin_optimize(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                            gr_reply_t *reply) {
    (void)argc;
    gr_zset_t *zset;
    int found = gr_zcmd_find_or_reply(db, arg(argv, argv_length, 1), &zset, 1, reply);
    if (found < 0) return;
    if (!found) { gr_reply_integer(reply, 0); return; }
    size_t before = gr_zset_allocated_bytes(zset);
    if (gr_zset_optimize(zset) != 0) { gr_reply_oom(reply); return; }
    size_t after = gr_zset_allocated_bytes(zset);
    gr_reply_integer(reply, before > after ? (int64_t)(before - after) : 0);
}

/* GOBLIN.ZSET.CONVERT key PACKED|STANDARD: rebuilds the set in that encoding (engines/zset/zset.h:
 * packed holds int32 decimal members and float32 scores, its tied members in numeric order) and
 * replies OK; an error for a missing key, or when a member or score does not fit packed (the set
 * is then unchanged). A compact set converts too. Members and scores do not change, so, like
 * GOBLIN.OPTIMIZE, it touches neither WATCH nor the dirty counter. */
void gr_cmd_zset_convert(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                         gr_reply_t *reply) {
    (void)argc;
    int to_packed;
    if (gr_word_is(argv[2], argv_length[2], "packed")) to_packed = 1;
    else if (gr_word_is(argv[2], argv_length[2], "standard")) to_packed = 0;
    else { reply_syntax(reply); return; }
    gr_zset_t *zset;
    int found = gr_zcmd_find_or_reply(db, arg(argv, argv_length, 1), &zset, 1, reply);
    if (found < 0) return;
    if (!found) { reply_error(reply, "ERR no such key"); return; }
    int outcome = gr_zset_convert(zset, to_packed);
    if (outcome == -1) { gr_reply_oom(reply); return; }
    if (outcome == -2) {
        reply_error(reply, "ERR the sorted set does not fit the packed encoding (int32 decimal members, scores exact in float32)");
        return;
    }
    gr_reply_status(reply, "OK", 2);
}
