/* cmd_zset.c — the sorted-set command layer: Redis's semantics over the zset engine.
 *
 * The engine is engines/zset/ (a B+tree with counts and, past zset-max-listpack-*, lane T's
 * table as the member -> score index); this file validates every argument first, then
 * mutates, then replies, with Redis 7's reply shapes and error texts. Scores are written as
 * Redis 7.0 writes them ("%.17g", "inf", "-inf"): a bulk string over RESP2 and the ring, a
 * RESP3 double over RESP3, where member/score lists become arrays of [member, score] pairs.
 * Every command is an argv row (zset.def): over the ring it travels as a CommandRequest. A
 * sorted set left empty by any command is deleted, as in Redis.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands/commands.h"
#include "core/glob.h"
#include "core/number.h"
#include "engines/set/set.h"   /* ZUNION/ZINTER/ZDIFF read sets as scores of 1 */
#include "engines/zset/zset.h"
#include "exec/blocking.h"
#include "exec/db.h"
#include "exec/server_text.h"
#include "exec/transaction.h"

static gr_bytes_t arg(const uint8_t *const *argv, const size_t *argv_length, size_t i) {
    return (gr_bytes_t){argv[i], (uint32_t)argv_length[i]};
}

/* zset-max-listpack-* and zset-implementation (packed: a set leaving compact becomes packed
 * when its members and scores fit, engines/zset/zset.h). */
static gr_zset_limits_t limits_of(const gr_db_t *db) {
    return (gr_zset_limits_t){db->config.zset_max_listpack_entries, db->config.zset_max_listpack_value,
                              db->config.zset_packed};
}

static void reply_error(gr_reply_t *reply, const char *text) { gr_reply_error_text(reply, GR_ERR_GENERIC, text); }
static void reply_not_integer(gr_reply_t *reply) {
    gr_reply_error_text(reply, GR_ERR_NOT_INTEGER, "ERR value is not an integer or out of range");
}
static void reply_syntax(gr_reply_t *reply) { gr_reply_error_text(reply, GR_ERR_SYNTAX, "ERR syntax error"); }
static void reply_not_float(gr_reply_t *reply) { reply_error(reply, "ERR value is not a valid float"); }

static int protocol_of(const gr_db_t *db) { return db->current ? db->current->protocol : 2; }

static void mark_changed(gr_db_t *db, gr_bytes_t key, int64_t changes) {
    gr_db_count_changes(db, changes);
    gr_watch_touch_current(db, key);
}

static void delete_key(gr_db_t *db, gr_bytes_t key) {
    gr_ks_delete(db->keyspace, key.data, key.length);
    gr_watch_touch_current(db, key);
}

static void delete_if_empty(gr_db_t *db, gr_bytes_t key, gr_zset_t *zset) {
    if (gr_zset_count(zset) == 0) delete_key(db, key);
}

/* The sorted set at key: 1 found (*zset), 0 absent, -1 another type (WRONGTYPE replied). */
static int find_zset_or_reply(gr_db_t *db, gr_bytes_t key, gr_zset_t **zset, int for_write, gr_reply_t *reply) {
    gr_ks_entry_t *entry = for_write ? gr_db_find_live(db, key) : gr_db_lookup(db, key);
    if (!entry) return 0;
    if (entry->type != GR_TYPE_ZSET) {
        gr_reply_wrongtype(reply);
        return -1;
    }
    *zset = entry->value;
    return 1;
}

/* Put a new set under key (replacing what was there when replace); it signals waiters. 0, or
 * -1 with OOM replied (the set freed). */
static int store_zset_or_reply(gr_db_t *db, gr_bytes_t key, gr_zset_t *zset, gr_reply_t *reply) {
    gr_ks_delete(db->keyspace, key.data, key.length);
    if (!gr_ks_add(db->keyspace, key.data, key.length, GR_TYPE_ZSET, zset)) {
        gr_zset_free(zset);
        gr_reply_oom(reply);
        return -1;
    }
    gr_blocking_signal(db, db->current ? db->current->db_index : 0, key.data, key.length);
    return 0;
}

/* ---- numbers: Redis's parsing and formatting of scores ---- */

/* Redis's getDoubleFromObject: strtod over the whole text, no leading space, not NaN. */
static int parse_double(const uint8_t *data, size_t length, double *out) {
    char buffer[256];
    if (length == 0 || length >= sizeof buffer) return -1;
    memcpy(buffer, data, length);
    buffer[length] = '\0';
    if (buffer[0] == ' ' || (buffer[0] >= '\t' && buffer[0] <= '\r')) return -1;
    char *end;
    errno = 0;
    double value = strtod(buffer, &end);
    if ((size_t)(end - buffer) != length || isnan(value)) return -1;
    if (errno == ERANGE && (value == HUGE_VAL || value == -HUGE_VAL || fpclassify(value) == FP_ZERO)) return -1;
    *out = value;
    return 0;
}

/* Redis 7.0's addReplyDouble text: "%.17g", "inf" and "-inf" (core/number's). */
static size_t format_score(double score, char *out, size_t size) { return gr_double_to_text(score, out, size); }

static void reply_score(gr_db_t *db, gr_reply_t *reply, double score) {
    if (protocol_of(db) >= 3) {
        gr_reply_double(reply, score);
        return;
    }
    char text[64];
    size_t length = format_score(score, text, sizeof text);
    gr_reply_bulk(reply, (const uint8_t *)text, length);
}

/* A score bound of ZCOUNT / ZRANGEBYSCORE: "(" for exclusive, else inclusive (zslParseRange). */
typedef struct score_range {
    double min, max;
    int min_exclusive, max_exclusive;
} score_range_t;

static int parse_bound(const uint8_t *data, size_t length, double *value, int *exclusive) {
    char buffer[256];
    *exclusive = length && data[0] == '(';
    size_t skip = (size_t)*exclusive;
    if (length - skip >= sizeof buffer) return -1;
    memcpy(buffer, data + skip, length - skip);
    buffer[length - skip] = '\0';
    char *end;
    *value = strtod(buffer, &end);
    if (*end != '\0' || isnan(*value)) return -1;
    return 0;
}

static int parse_score_range_or_reply(gr_bytes_t min, gr_bytes_t max, score_range_t *range, gr_reply_t *reply) {
    if (parse_bound(min.data, min.length, &range->min, &range->min_exclusive) != 0 ||
        parse_bound(max.data, max.length, &range->max, &range->max_exclusive) != 0) {
        reply_error(reply, "ERR min or max is not a float");
        return -1;
    }
    return 0;
}

/* A lex bound: "-", "+", "[member" or "(member" (zslParseLexRangeItem). kind: -1 "-", 1 "+", 0 a member. */
typedef struct lex_bound {
    int kind;
    int exclusive;
    const uint8_t *member;
    size_t length;
} lex_bound_t;

static int parse_lex_bound(gr_bytes_t text, lex_bound_t *bound) {
    if (text.length == 0) return -1;
    bound->member = text.data + 1;
    bound->length = text.length - 1;
    bound->kind = 0;
    bound->exclusive = 0;
    switch (text.data[0]) {
    case '+': if (text.length != 1) return -1; bound->kind = 1; return 0;
    case '-': if (text.length != 1) return -1; bound->kind = -1; return 0;
    case '(': bound->exclusive = 1; return 0;
    case '[': return 0;
    default: return -1;
    }
}

static int parse_lex_range_or_reply(gr_bytes_t min, gr_bytes_t max, lex_bound_t *lo, lex_bound_t *hi, gr_reply_t *reply) {
    if (parse_lex_bound(min, lo) != 0 || parse_lex_bound(max, hi) != 0) {
        reply_error(reply, "ERR min or max not valid string range item");
        return -1;
    }
    return 0;
}

/* Ranks [*first, *end) of the entries within a score range. */
static void score_rank_span(const gr_zset_t *zset, const score_range_t *r, size_t *first, size_t *end) {
    *first = gr_zset_count_below_score(zset, r->min, r->min_exclusive);
    *end = gr_zset_count_below_score(zset, r->max, !r->max_exclusive);
    if (r->min > r->max || (r->min == r->max && (r->min_exclusive || r->max_exclusive)) || *end < *first) *end = *first;
}

/* A packed set orders tied members numerically, lex ranges need byte order: it becomes
 * standard first (zset.h), as it would for a member that does not fit. -1 on OOM (nothing
 * changed, nothing replied). */
static int lex_rank_span(gr_zset_t *zset, const lex_bound_t *lo, const lex_bound_t *hi, size_t *first, size_t *end) {
    if (gr_zset_is_packed(zset) && gr_zset_convert(zset, 0) != 0) return -1;
    size_t n = gr_zset_count(zset);
    if (lo->kind == -1) *first = 0;
    else if (lo->kind == 1) *first = n;
    else *first = gr_zset_count_below_member(zset, lo->member, lo->length, lo->exclusive);
    if (hi->kind == 1) *end = n;
    else if (hi->kind == -1) *end = 0;
    else *end = gr_zset_count_below_member(zset, hi->member, hi->length, !hi->exclusive);
    if (*end < *first) *end = *first;
    return 0;
}

/* Clamp Redis's start/stop ranks (negative from the end) to [*first, *end). */
static void index_rank_span(size_t count, int64_t start, int64_t stop, size_t *first, size_t *end) {
    int64_t n = (int64_t)count;
    if (start < 0) start += n;
    if (stop < 0) stop += n;
    if (start < 0) start = 0;
    if (start > stop || start >= n) { *first = *end = 0; return; }
    if (stop >= n) stop = n - 1;
    *first = (size_t)start;
    *end = (size_t)stop + 1;
}

/* ---- replying member lists ---- */

/* Begin a list of n members, with scores when withscores: flat over RESP2 and the ring,
 * [member, score] pairs over RESP3. */
static void reply_list_begin(gr_db_t *db, gr_reply_t *reply, size_t n, int withscores) {
    gr_reply_array_begin(reply, withscores && protocol_of(db) < 3 ? n * 2 : n);
}

static void reply_list_entry(gr_db_t *db, gr_reply_t *reply, const gr_zset_entry_t *e, int withscores) {
    if (withscores && protocol_of(db) >= 3) gr_reply_array_begin(reply, 2);
    gr_reply_bulk(reply, e->member, e->member_length);
    if (withscores) reply_score(db, reply, e->score);
}

/* Reply ranks [first, first + n) (forward) or first, first - 1, ... (reverse). */
static void reply_ranks(gr_db_t *db, gr_reply_t *reply, const gr_zset_t *zset, size_t first, size_t n, int reverse,
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

static void zadd_generic(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
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
        if (parse_double(argv[first + 2 * j], argv_length[first + 2 * j], &score) != 0) { reply_not_float(reply); return; }
    }
    gr_bytes_t key = arg(argv, argv_length, 1);
    gr_zset_t *zset = NULL;
    int found = find_zset_or_reply(db, key, &zset, 1, reply);
    if (found < 0) return;
    if (!found) {
        if (flags & ZADD_XX) {
            if (flags & ZADD_INCR) gr_reply_nil(reply); else gr_reply_integer(reply, 0);
            return;
        }
        zset = gr_zset_new();
        if (!zset || !gr_ks_add(db->keyspace, key.data, key.length, GR_TYPE_ZSET, zset)) {
            gr_zset_free(zset);
            gr_reply_oom(reply);
            return;
        }
        gr_blocking_signal(db, db->current ? db->current->db_index : 0, key.data, key.length);
    }
    gr_zset_limits_t limits = limits_of(db);
    int64_t added = 0, updated = 0, processed = 0;
    double result = 0;
    for (size_t j = 0; j < elements; j++) {
        double score;
        parse_double(argv[first + 2 * j], argv_length[first + 2 * j], &score);
        int outcome = zadd_one(zset, argv[first + 2 * j + 1], argv_length[first + 2 * j + 1], score, flags, &limits,
                               &added, &updated, &result);
        if (outcome < 0) {
            if (added + updated) mark_changed(db, key, added + updated);
            delete_if_empty(db, key, zset);
            if (outcome == -1) reply_error(reply, "ERR resulting score is not a number (NaN)");
            else gr_reply_oom(reply);
            return;
        }
        processed += outcome;
    }
    if (added + updated) mark_changed(db, key, added + updated);
    delete_if_empty(db, key, zset);
    if (flags & ZADD_INCR) {
        if (processed) reply_score(db, reply, result); else gr_reply_nil(reply);
    } else {
        gr_reply_integer(reply, (flags & ZADD_CH) ? added + updated : added);
    }
}

void gr_cmd_zadd(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    zadd_generic(db, argc, argv, argv_length, reply, 0);
}

void gr_cmd_zincrby(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    (void)argc;
    const uint8_t *args[5] = {argv[0], argv[1], (const uint8_t *)"incr", argv[2], argv[3]};
    size_t lengths[5] = {argv_length[0], argv_length[1], 4, argv_length[2], argv_length[3]};
    zadd_generic(db, 5, args, lengths, reply, 0);
}

/* ---- single-key reads ---- */

void gr_cmd_zscore(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    (void)argc;
    gr_zset_t *zset = NULL;
    int found = find_zset_or_reply(db, arg(argv, argv_length, 1), &zset, 0, reply);
    if (found < 0) return;
    double score;
    if (found && gr_zset_score(zset, argv[2], argv_length[2], &score)) reply_score(db, reply, score);
    else gr_reply_nil(reply);
}

void gr_cmd_zmscore(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    gr_zset_t *zset = NULL;
    int found = find_zset_or_reply(db, arg(argv, argv_length, 1), &zset, 0, reply);
    if (found < 0) return;
    gr_reply_array_begin(reply, argc - 2);
    for (size_t i = 2; i < argc; i++) {
        double score;
        if (found && gr_zset_score(zset, argv[i], argv_length[i], &score)) reply_score(db, reply, score);
        else gr_reply_nil(reply);
    }
}

void gr_cmd_zcard(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    (void)argc;
    gr_zset_t *zset = NULL;
    int found = find_zset_or_reply(db, arg(argv, argv_length, 1), &zset, 0, reply);
    if (found >= 0) gr_reply_integer(reply, found ? (int64_t)gr_zset_count(zset) : 0);
}

void gr_cmd_zcount(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    (void)argc;
    score_range_t range;
    if (parse_score_range_or_reply(arg(argv, argv_length, 2), arg(argv, argv_length, 3), &range, reply) != 0) return;
    gr_zset_t *zset = NULL;
    int found = find_zset_or_reply(db, arg(argv, argv_length, 1), &zset, 0, reply);
    if (found < 0) return;
    size_t first = 0, end = 0;
    if (found) score_rank_span(zset, &range, &first, &end);
    gr_reply_integer(reply, (int64_t)(end - first));
}

void gr_cmd_zlexcount(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    (void)argc;
    lex_bound_t lo, hi;
    if (parse_lex_range_or_reply(arg(argv, argv_length, 2), arg(argv, argv_length, 3), &lo, &hi, reply) != 0) return;
    gr_zset_t *zset = NULL;
    int found = find_zset_or_reply(db, arg(argv, argv_length, 1), &zset, 0, reply);
    if (found < 0) return;
    size_t first = 0, end = 0;
    if (found && lex_rank_span(zset, &lo, &hi, &first, &end) != 0) { gr_reply_oom(reply); return; }
    gr_reply_integer(reply, (int64_t)(end - first));
}

static void zrank_generic(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                          gr_reply_t *reply, int reverse) {
    int withscore = 0;
    if (argc > 4) { reply_syntax(reply); return; }
    if (argc == 4) {
        if (!gr_word_is(argv[3], argv_length[3], "withscore")) { reply_syntax(reply); return; }
        withscore = 1;
    }
    gr_zset_t *zset = NULL;
    int found = find_zset_or_reply(db, arg(argv, argv_length, 1), &zset, 0, reply);
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
    reply_score(db, reply, score);
}

void gr_cmd_zrank(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    zrank_generic(db, argc, argv, argv_length, reply, 0);
}

void gr_cmd_zrevrank(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    zrank_generic(db, argc, argv, argv_length, reply, 1);
}

/* ---- ZRANGE and its older forms, ZRANGESTORE ---- */

enum { BY_RANK = 0, BY_SCORE = 1, BY_LEX = 2 };

typedef struct range_request {
    int by, reverse, withscores, has_limit;
    int64_t offset, limit;
    gr_bytes_t min, max;   /* as given: for REV, min is the upper bound */
} range_request_t;

/* Parse from argv[first] on: [BYSCORE|BYLEX] [REV] [LIMIT offset count] [WITHSCORES]
 * (allowed selects which are accepted). 0, or -1 replied. */
static int parse_range_options_or_reply(size_t argc, const uint8_t *const *argv, const size_t *argv_length, size_t first,
                                        range_request_t *r, int allow_by_rev, int allow_withscores, gr_reply_t *reply) {
    for (size_t i = first; i < argc; i++) {
        size_t left = argc - i - 1;
        if (allow_withscores && gr_word_is(argv[i], argv_length[i], "withscores")) r->withscores = 1;
        else if (gr_word_is(argv[i], argv_length[i], "limit") && left >= 2) {
            if (gr_bytes_to_int64(argv[i + 1], argv_length[i + 1], &r->offset) != 0 ||
                gr_bytes_to_int64(argv[i + 2], argv_length[i + 2], &r->limit) != 0) {
                reply_not_integer(reply);
                return -1;
            }
            r->has_limit = 1;
            i += 2;
        } else if (allow_by_rev && gr_word_is(argv[i], argv_length[i], "byscore")) r->by = BY_SCORE;
        else if (allow_by_rev && gr_word_is(argv[i], argv_length[i], "bylex")) r->by = BY_LEX;
        else if (allow_by_rev && gr_word_is(argv[i], argv_length[i], "rev")) r->reverse = 1;
        else { reply_syntax(reply); return -1; }
    }
    if (r->has_limit && r->by == BY_RANK) {
        reply_error(reply, "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
        return -1;
    }
    if (r->withscores && r->by == BY_LEX) {
        reply_error(reply, "ERR syntax error, WITHSCORES not supported in combination with BYLEX");
        return -1;
    }
    return 0;
}

/* The range's ranks: the first to take (*start) and how many (*n), walking down from *start
 * when r->reverse. 0, or -1 replied (a bad bound). zset may be NULL (no key): n = 0. */
static int range_ranks_or_reply(const range_request_t *r, gr_zset_t *zset, size_t *start, size_t *n, gr_reply_t *reply) {
    size_t first = 0, end = 0;
    *start = *n = 0;
    if (r->by == BY_RANK) {
        int64_t a, b;
        if (gr_bytes_to_int64(r->min.data, r->min.length, &a) != 0 ||
            gr_bytes_to_int64(r->max.data, r->max.length, &b) != 0) {
            reply_not_integer(reply);
            return -1;
        }
        if (!zset) return 0;
        index_rank_span(gr_zset_count(zset), a, b, &first, &end);
        if (end == first) return 0;
        if (r->reverse) {   /* ranks counted from the top */
            size_t count = gr_zset_count(zset);
            *start = count - 1 - first;
        } else {
            *start = first;
        }
        *n = end - first;
        return 0;
    }
    gr_bytes_t lower = r->reverse ? r->max : r->min, upper = r->reverse ? r->min : r->max;
    if (r->by == BY_SCORE) {
        score_range_t range;
        if (parse_score_range_or_reply(lower, upper, &range, reply) != 0) return -1;
        if (zset) score_rank_span(zset, &range, &first, &end);
    } else {
        lex_bound_t lo, hi;
        if (parse_lex_range_or_reply(lower, upper, &lo, &hi, reply) != 0) return -1;
        if (zset && lex_rank_span(zset, &lo, &hi, &first, &end) != 0) { gr_reply_oom(reply); return -1; }
    }
    size_t total = end - first;
    size_t offset = 0, limit = total;
    if (r->has_limit) {
        if (r->offset < 0) return 0;
        offset = (size_t)r->offset;
        if (r->limit >= 0 && (uint64_t)r->limit < limit) limit = (size_t)r->limit;
    }
    if (offset >= total) return 0;
    *n = total - offset < limit ? total - offset : limit;
    *start = r->reverse ? end - 1 - offset : first + offset;
    return 0;
}

static void zrange_reply(gr_db_t *db, gr_reply_t *reply, gr_bytes_t key, range_request_t *r) {
    gr_zset_t *zset = NULL;
    /* Redis parses the bounds before it looks at the key */
    size_t start, n;
    if (range_ranks_or_reply(r, NULL, &start, &n, reply) != 0) return;
    int found = find_zset_or_reply(db, key, &zset, 0, reply);
    if (found < 0) return;
    if (!found) { gr_reply_array_begin(reply, 0); return; }
    if (range_ranks_or_reply(r, zset, &start, &n, reply) != 0) return;
    reply_ranks(db, reply, zset, start, n, r->reverse, r->withscores);
}

void gr_cmd_zrange(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    range_request_t r = {.min = arg(argv, argv_length, 2), .max = arg(argv, argv_length, 3)};
    if (parse_range_options_or_reply(argc, argv, argv_length, 4, &r, 1, 1, reply) != 0) return;
    zrange_reply(db, reply, arg(argv, argv_length, 1), &r);
}

static void old_range(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply,
                      int by, int reverse) {
    range_request_t r = {.by = by, .reverse = reverse, .min = arg(argv, argv_length, 2), .max = arg(argv, argv_length, 3)};
    if (parse_range_options_or_reply(argc, argv, argv_length, 4, &r, 0, by != BY_LEX, reply) != 0) return;
    zrange_reply(db, reply, arg(argv, argv_length, 1), &r);
}

void gr_cmd_zrevrange(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    old_range(db, argc, argv, argv_length, reply, BY_RANK, 1);
}
void gr_cmd_zrangebyscore(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    old_range(db, argc, argv, argv_length, reply, BY_SCORE, 0);
}
void gr_cmd_zrevrangebyscore(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    old_range(db, argc, argv, argv_length, reply, BY_SCORE, 1);
}
void gr_cmd_zrangebylex(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    old_range(db, argc, argv, argv_length, reply, BY_LEX, 0);
}
void gr_cmd_zrevrangebylex(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    old_range(db, argc, argv, argv_length, reply, BY_LEX, 1);
}

/* A new set from entries given in any order, with the server's thresholds (so a small
 * result is compact, as Redis's zsetConvertToListpackIfNeeded makes it). NULL on OOM. */
typedef struct entry_sink {
    gr_zset_t *zset;
    gr_zset_limits_t limits;
    int failed;
} entry_sink_t;

static void sink_add(entry_sink_t *sink, const gr_zset_entry_t *e) {
    if (!sink->failed && gr_zset_set(sink->zset, e->member, e->member_length, e->score, &sink->limits) < 0) sink->failed = 1;
}

/* Store set under dst, or delete dst when it is empty; reply its size. */
static void store_result(gr_db_t *db, gr_bytes_t dst, gr_zset_t *result, gr_reply_t *reply) {
    size_t count = gr_zset_count(result);
    if (count == 0) {
        gr_zset_free(result);
        int existed = gr_ks_delete(db->keyspace, dst.data, dst.length);
        if (existed) mark_changed(db, dst, 1);
        gr_reply_integer(reply, 0);
        return;
    }
    if (store_zset_or_reply(db, dst, result, reply) != 0) return;
    mark_changed(db, dst, 1);
    gr_reply_integer(reply, (int64_t)count);
}

void gr_cmd_zrangestore(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    range_request_t r = {.min = arg(argv, argv_length, 3), .max = arg(argv, argv_length, 4)};
    if (parse_range_options_or_reply(argc, argv, argv_length, 5, &r, 1, 0, reply) != 0) return;
    size_t start, n;
    if (range_ranks_or_reply(&r, NULL, &start, &n, reply) != 0) return;
    gr_zset_t *zset = NULL;
    int found = find_zset_or_reply(db, arg(argv, argv_length, 2), &zset, 0, reply);
    if (found < 0) return;
    if (found && range_ranks_or_reply(&r, zset, &start, &n, reply) != 0) return;
    entry_sink_t sink = {gr_zset_new(), limits_of(db), 0};
    if (!sink.zset) { gr_reply_oom(reply); return; }
    for (size_t i = 0; i < n; i++) {
        gr_zset_entry_t e;
        gr_zset_at(zset, r.reverse ? start - i : start + i, &e);
        sink_add(&sink, &e);
    }
    if (sink.failed) { gr_zset_free(sink.zset); gr_reply_oom(reply); return; }
    store_result(db, arg(argv, argv_length, 1), sink.zset, reply);
}

/* ---- ZREM and the ZREMRANGEBY* family ---- */

void gr_cmd_zrem(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    gr_bytes_t key = arg(argv, argv_length, 1);
    gr_zset_t *zset = NULL;
    int found = find_zset_or_reply(db, key, &zset, 1, reply);
    if (found < 0) return;
    int64_t removed = 0;
    for (size_t i = 2; found && i < argc; i++) removed += gr_zset_delete(zset, argv[i], argv_length[i]);
    if (removed) {
        mark_changed(db, key, removed);
        delete_if_empty(db, key, zset);
    }
    gr_reply_integer(reply, removed);
}

/* Remove ranks [first, first + n): each member copied out before its removal. -1 on OOM. */
static int remove_ranks(gr_zset_t *zset, size_t first, size_t n) {
    for (size_t i = 0; i < n; i++) {
        gr_zset_entry_t e;
        if (!gr_zset_at(zset, first, &e)) break;
        uint8_t small[128];
        uint8_t *copy = e.member_length <= sizeof small ? small : gr_mem_alloc(e.member_length, GR_MEM_OTHER);
        if (!copy) return -1;
        memcpy(copy, e.member, e.member_length);
        gr_zset_delete(zset, copy, e.member_length);
        if (copy != small) gr_mem_free(copy, GR_MEM_OTHER);
    }
    return 0;
}

static void zremrange(gr_db_t *db, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply, int by) {
    range_request_t r = {.by = by, .min = arg(argv, argv_length, 2), .max = arg(argv, argv_length, 3)};
    size_t start, n;
    if (range_ranks_or_reply(&r, NULL, &start, &n, reply) != 0) return;
    gr_bytes_t key = arg(argv, argv_length, 1);
    gr_zset_t *zset = NULL;
    int found = find_zset_or_reply(db, key, &zset, 1, reply);
    if (found <= 0) { if (found == 0) gr_reply_integer(reply, 0); return; }
    if (range_ranks_or_reply(&r, zset, &start, &n, reply) != 0) return;
    size_t before = gr_zset_count(zset);
    int failed = remove_ranks(zset, start, n);
    int64_t removed = (int64_t)(before - gr_zset_count(zset));
    if (removed) {
        mark_changed(db, key, removed);
        delete_if_empty(db, key, zset);
    }
    if (failed) gr_reply_oom(reply); else gr_reply_integer(reply, removed);
}

void gr_cmd_zremrangebyrank(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    (void)argc;
    zremrange(db, argv, argv_length, reply, BY_RANK);
}
void gr_cmd_zremrangebyscore(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    (void)argc;
    zremrange(db, argv, argv_length, reply, BY_SCORE);
}
void gr_cmd_zremrangebylex(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    (void)argc;
    zremrange(db, argv, argv_length, reply, BY_LEX);
}

/* ---- ZPOPMIN, ZPOPMAX, ZMPOP ---- */

/* Pop up to count from zset's lowest (max: highest) end, replying each as it goes, after
 * a reply_list_begin of the popped count written by the caller (see pop_count). */
static size_t pop_count(const gr_zset_t *zset, size_t count) {
    size_t n = gr_zset_count(zset);
    return count < n ? count : n;
}

static void pop_and_reply(gr_db_t *db, gr_reply_t *reply, gr_bytes_t key, gr_zset_t *zset, size_t n, int max, int pairs) {
    for (size_t i = 0; i < n; i++) {
        gr_zset_entry_t e;
        gr_zset_at(zset, max ? gr_zset_count(zset) - 1 : 0, &e);
        if (pairs) gr_reply_array_begin(reply, 2);
        gr_reply_bulk(reply, e.member, e.member_length);
        reply_score(db, reply, e.score);
        uint8_t small[128];
        uint8_t *copy = e.member_length <= sizeof small ? small : gr_mem_alloc(e.member_length, GR_MEM_OTHER);
        if (copy) {   /* without memory for the copy the member stays: the reply is written already */
            memcpy(copy, e.member, e.member_length);
            gr_zset_delete(zset, copy, e.member_length);
            if (copy != small) gr_mem_free(copy, GR_MEM_OTHER);
        }
    }
    mark_changed(db, key, (int64_t)n);
    delete_if_empty(db, key, zset);
}

static void zpop_generic(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply,
                         int max) {
    if (argc > 3) { reply_syntax(reply); return; }
    int64_t count = 1;
    int count_given = argc == 3;
    if (count_given) {
        if (gr_bytes_to_int64(argv[2], argv_length[2], &count) != 0 || count < 0) { gr_reply_error_text(reply, GR_ERR_OUT_OF_RANGE, "ERR value is out of range, must be positive"); return; }
    }
    gr_bytes_t key = arg(argv, argv_length, 1);
    gr_zset_t *zset = NULL;
    int found = find_zset_or_reply(db, key, &zset, 1, reply);
    if (found < 0) return;
    if (!found || count == 0) { gr_reply_array_begin(reply, 0); return; }
    int nested = protocol_of(db) >= 3 && count_given;
    size_t n = pop_count(zset, (size_t)count);
    gr_reply_array_begin(reply, nested ? n : n * 2);
    pop_and_reply(db, reply, key, zset, n, max, nested);
}

void gr_cmd_zpopmin(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    zpop_generic(db, argc, argv, argv_length, reply, 0);
}
void gr_cmd_zpopmax(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    zpop_generic(db, argc, argv, argv_length, reply, 1);
}

void gr_cmd_zmpop(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    int64_t numkeys;
    if (gr_bytes_to_int64(argv[1], argv_length[1], &numkeys) != 0 || numkeys < 1) {
        reply_error(reply, "ERR numkeys should be greater than 0");
        return;
    }
    if ((uint64_t)numkeys > argc - 3) { reply_syntax(reply); return; }
    size_t where = 2 + (size_t)numkeys;
    int max;
    if (gr_word_is(argv[where], argv_length[where], "min")) max = 0;
    else if (gr_word_is(argv[where], argv_length[where], "max")) max = 1;
    else { reply_syntax(reply); return; }
    int64_t count = 1;
    int count_seen = 0;
    for (size_t i = where + 1; i < argc; i++) {
        if (!count_seen && gr_word_is(argv[i], argv_length[i], "count") && i + 1 < argc) {
            if (gr_bytes_to_int64(argv[i + 1], argv_length[i + 1], &count) != 0 || count < 1) {
                reply_error(reply, "ERR count should be greater than 0");
                return;
            }
            count_seen = 1;
            i++;
        } else {
            reply_syntax(reply);
            return;
        }
    }
    for (size_t k = 2; k < where; k++) {
        gr_bytes_t key = arg(argv, argv_length, k);
        gr_zset_t *zset = NULL;
        int found = find_zset_or_reply(db, key, &zset, 1, reply);
        if (found < 0) return;
        if (!found) continue;
        size_t n = pop_count(zset, (size_t)count);
        gr_reply_array_begin(reply, 2);
        gr_reply_bulk(reply, key.data, key.length);
        gr_reply_array_begin(reply, n);
        pop_and_reply(db, reply, key, zset, n, max, 1);
        return;
    }
    gr_reply_nil_array(reply);
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

void gr_cmd_zrandmember(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    int64_t count = 0;
    int withscores = 0;
    if (argc > 4) { reply_syntax(reply); return; }
    if (argc >= 3 && gr_bytes_to_int64(argv[2], argv_length[2], &count) != 0) { reply_not_integer(reply); return; }
    if (argc == 4) {
        if (!gr_word_is(argv[3], argv_length[3], "withscores")) { reply_syntax(reply); return; }
        withscores = 1;
        if (count < -INT64_MAX / 2) {
            gr_reply_error_text(reply, GR_ERR_OUT_OF_RANGE, "ERR value is out of range");
            return;
        }
    }
    gr_zset_t *zset = NULL;
    int found = find_zset_or_reply(db, arg(argv, argv_length, 1), &zset, 0, reply);
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
        reply_ranks(db, reply, zset, 0, size, 0, withscores);
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

typedef struct scan_batch {
    gr_zset_entry_t *entries;   /* copies: a packed set's member text is in each one's text */
    int packed;
    size_t count, capacity;
    int failed;
    const uint8_t *pattern;
    size_t pattern_length;
} scan_batch_t;

static void scan_collect(void *context, const gr_zset_entry_t *entry) {
    scan_batch_t *batch = context;
    if (batch->failed) return;
    if (batch->pattern && !gr_glob_match(batch->pattern, batch->pattern_length, entry->member, entry->member_length, 0))
        return;
    if (batch->count == batch->capacity) {
        size_t capacity = batch->capacity ? batch->capacity * 2 : 64;
        gr_zset_entry_t *grown = gr_mem_realloc(batch->entries, capacity * sizeof *grown, GR_MEM_OTHER);
        if (!grown) { batch->failed = 1; return; }
        batch->entries = grown;
        batch->capacity = capacity;
    }
    batch->entries[batch->count++] = *entry;
}

void gr_cmd_zscan(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    uint64_t cursor;
    if (gr_parse_scan_cursor(argv[2], argv_length[2], &cursor) != 0) { reply_error(reply, "ERR invalid cursor"); return; }
    gr_zset_t *zset = NULL;
    int found = find_zset_or_reply(db, arg(argv, argv_length, 1), &zset, 0, reply);
    if (found < 0) return;
    if (!found) { gr_reply_keyed_array_begin(reply, (const uint8_t *)"0", 1, 0); return; }
    int64_t count = 10;
    scan_batch_t batch = {0};
    batch.packed = gr_zset_is_packed(zset);
    for (size_t i = 3; i < argc; i++) {
        size_t left = argc - i - 1;
        if (gr_word_is(argv[i], argv_length[i], "count") && left >= 1) {
            if (gr_bytes_to_int64(argv[i + 1], argv_length[i + 1], &count) != 0) { reply_not_integer(reply); return; }
            if (count < 1) { reply_syntax(reply); return; }
            i++;
        } else if (gr_word_is(argv[i], argv_length[i], "match") && left >= 1) {
            batch.pattern = argv[i + 1];
            batch.pattern_length = argv_length[i + 1];
            if (batch.pattern_length == 1 && batch.pattern[0] == '*') batch.pattern = NULL;
            i++;
        } else {
            reply_syntax(reply);
            return;
        }
    }
    uint64_t next = gr_zset_scan(zset, cursor, (size_t)count, scan_collect, &batch);
    if (batch.failed) {
        gr_mem_free(batch.entries, GR_MEM_OTHER);
        gr_reply_oom(reply);
        return;
    }
    char text[24];
    size_t length = (size_t)snprintf(text, sizeof text, "%llu", (unsigned long long)next);
    gr_reply_keyed_array_begin(reply, (const uint8_t *)text, length, batch.count * 2);
    for (size_t i = 0; i < batch.count; i++) {
        char score[64];
        const uint8_t *member = batch.packed ? batch.entries[i].text : batch.entries[i].member;
        gr_reply_bulk(reply, member, batch.entries[i].member_length);
        size_t n = format_score(batch.entries[i].score, score, sizeof score);
        gr_reply_bulk(reply, (const uint8_t *)score, n);
    }
    gr_mem_free(batch.entries, GR_MEM_OTHER);
}

/* ---- ZUNION, ZINTER, ZDIFF (+STORE), ZINTERCARD ---- */

enum { OP_UNION, OP_INTER, OP_DIFF };
enum { AGG_SUM, AGG_MIN, AGG_MAX };

/* An input of ZUNION/ZINTER/ZDIFF: a sorted set, or a set (every member scores 1, as in Redis). */
typedef struct set_source {
    const gr_zset_t *zset;   /* one of zset and set, or neither: no key (empty) */
    const gr_set_t *set;
    double weight;
} set_source_t;

static size_t source_count(const set_source_t *s) {
    return s->zset ? gr_zset_count(s->zset) : s->set ? gr_set_count(s->set) : 0;
}

static int source_score(const set_source_t *s, const uint8_t *m, size_t ml, double *score) {
    if (s->zset) return gr_zset_score(s->zset, m, ml, score);
    if (s->set && gr_set_contains(s->set, m, ml)) {
        if (score) *score = 1.0;
        return 1;
    }
    return 0;
}

/* A cursor over a source's members with their scores. */
typedef struct source_iter {
    const set_source_t *source;
    gr_zset_iter_t zset;
    gr_set_iter_t set;
    gr_set_member_t member;
} source_iter_t;

static void source_iter_start(const set_source_t *s, source_iter_t *it) {
    it->source = s;
    if (s->zset) gr_zset_iter_start(s->zset, 0, &it->zset);
    else if (s->set) gr_set_iter_start(s->set, &it->set);
}

static int source_iter_next(source_iter_t *it, gr_zset_entry_t *e) {
    if (it->source->zset) return gr_zset_iter_next(&it->zset, e);
    if (!it->source->set || !gr_set_iter_next(&it->set, &it->member)) return 0;
    e->member = it->member.data;
    e->member_length = it->member.length;
    e->score = 1.0;
    return 1;
}

static int by_size(const void *a, const void *b) {
    size_t x = source_count(a), y = source_count(b);
    return x < y ? -1 : x > y;
}

static double aggregate(double target, double value, int how) {
    if (how == AGG_SUM) {
        double sum = target + value;
        return isnan(sum) ? 0.0 : sum;
    }
    if (how == AGG_MIN) return value < target ? value : target;
    return value > target ? value : target;
}

static double weighted(double score, double weight) {
    double s = score * weight;
    return isnan(s) ? 0.0 : s;
}

/* The result of op over sources into a new standard set (NULL on OOM); stops an INTER at
 * limit members when limit > 0 (ZINTERCARD). */
static gr_zset_t *set_operation(set_source_t *sources, size_t n, int op, int how, size_t limit) {
    gr_zset_limits_t standard = {0, 0, 0};
    gr_zset_t *result = gr_zset_new();
    if (!result) return NULL;
    if (op != OP_DIFF) qsort(sources, n, sizeof *sources, by_size);   /* as Redis, smallest first */
    source_iter_t iter;
    gr_zset_entry_t e;
    if (op == OP_UNION) {
        for (size_t i = 0; i < n; i++) {
            source_iter_start(&sources[i], &iter);
            while (source_iter_next(&iter, &e)) {
                double score = weighted(e.score, sources[i].weight), current;
                if (gr_zset_score(result, e.member, e.member_length, &current)) score = aggregate(current, score, how);
                if (gr_zset_set(result, e.member, e.member_length, score, &standard) < 0) goto oom;
            }
        }
    } else if (op == OP_INTER) {
        source_iter_start(&sources[0], &iter);
        while (source_iter_next(&iter, &e)) {
            double score = weighted(e.score, sources[0].weight);
            size_t j = 1;
            for (; j < n; j++) {
                double other;
                if (!source_score(&sources[j], e.member, e.member_length, &other)) break;
                score = aggregate(score, weighted(other, sources[j].weight), how);
            }
            if (j < n) continue;
            if (gr_zset_set(result, e.member, e.member_length, score, &standard) < 0) goto oom;
            if (limit && gr_zset_count(result) >= limit) break;
        }
    } else {
        source_iter_start(&sources[0], &iter);
        while (source_iter_next(&iter, &e)) {
            size_t j = 1;
            for (; j < n; j++)
                if (source_score(&sources[j], e.member, e.member_length, NULL)) break;
            if (j < n) continue;
            if (gr_zset_set(result, e.member, e.member_length, e.score, &standard) < 0) goto oom;
        }
    }
    return result;
oom:
    gr_zset_free(result);
    return NULL;
}

/* The inputs' keys: sorted sets or sets, a missing key empty; -1 with WRONGTYPE replied. */
static int find_sources_or_reply(gr_db_t *db, const uint8_t *const *argv, const size_t *argv_length, size_t first,
                                 size_t n, set_source_t *sources, int for_write, gr_reply_t *reply) {
    for (size_t i = 0; i < n; i++) {
        gr_bytes_t key = arg(argv, argv_length, first + i);
        gr_ks_entry_t *entry = for_write ? gr_db_find_live(db, key) : gr_db_lookup(db, key);
        sources[i] = (set_source_t){NULL, NULL, 1.0};
        if (!entry) continue;
        if (entry->type == GR_TYPE_ZSET) sources[i].zset = entry->value;
        else if (entry->type == GR_TYPE_SET) sources[i].set = entry->value;
        else { gr_reply_wrongtype(reply); return -1; }
    }
    return 0;
}

/* ZUNION/ZINTER/ZDIFF numkeys key... [WEIGHTS w...] [AGGREGATE SUM|MIN|MAX] [WITHSCORES], the
 * STORE forms (dst given, numkeys at argv[2]) and ZINTERCARD numkeys key... [LIMIT n]
 * (cardinality); Redis's zunionInterDiffGenericCommand, in its order: numkeys, then the keys'
 * types (WRONGTYPE wins over a bad option), then the options. */
static void set_operation_command(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                                  gr_reply_t *reply, int op, int store, int cardinality, const char *name) {
    size_t numkeys_index = store ? 2 : 1;
    int64_t numkeys;
    if (gr_bytes_to_int64(argv[numkeys_index], argv_length[numkeys_index], &numkeys) != 0) { reply_not_integer(reply); return; }
    if (numkeys < 1) {
        char text[96];
        snprintf(text, sizeof text, "ERR at least 1 input key is needed for '%s' command", name);
        reply_error(reply, text);
        return;
    }
    if ((uint64_t)numkeys > argc - numkeys_index - 1) { reply_syntax(reply); return; }
    set_source_t *sources = gr_mem_alloc((size_t)numkeys * sizeof *sources, GR_MEM_OTHER);
    if (!sources) { gr_reply_oom(reply); return; }
    if (find_sources_or_reply(db, argv, argv_length, numkeys_index + 1, (size_t)numkeys, sources, store, reply) != 0) {
        gr_mem_free(sources, GR_MEM_OTHER);
        return;
    }
    int how = AGG_SUM, withscores = 0;
    int64_t limit = 0;
    for (size_t j = numkeys_index + 1 + (size_t)numkeys; j < argc; j++) {
        size_t remaining = argc - j - 1;
        if (op != OP_DIFF && !cardinality && gr_word_is(argv[j], argv_length[j], "weights") && remaining >= (size_t)numkeys) {
            for (int64_t i = 0; i < numkeys; i++) {
                j++;
                if (parse_double(argv[j], argv_length[j], &sources[i].weight) != 0) {
                    gr_mem_free(sources, GR_MEM_OTHER);
                    reply_error(reply, "ERR weight value is not a float");
                    return;
                }
            }
        } else if (op != OP_DIFF && !cardinality && gr_word_is(argv[j], argv_length[j], "aggregate") && remaining >= 1) {
            j++;
            if (gr_word_is(argv[j], argv_length[j], "sum")) how = AGG_SUM;
            else if (gr_word_is(argv[j], argv_length[j], "min")) how = AGG_MIN;
            else if (gr_word_is(argv[j], argv_length[j], "max")) how = AGG_MAX;
            else { gr_mem_free(sources, GR_MEM_OTHER); reply_syntax(reply); return; }
        } else if (cardinality && gr_word_is(argv[j], argv_length[j], "limit") && remaining >= 1) {
            j++;
            if (gr_bytes_to_int64(argv[j], argv_length[j], &limit) != 0 || limit < 0) {
                gr_mem_free(sources, GR_MEM_OTHER);
                reply_error(reply, "ERR LIMIT can't be negative");
                return;
            }
        } else if (!store && !cardinality && gr_word_is(argv[j], argv_length[j], "withscores")) {
            withscores = 1;
        } else {
            gr_mem_free(sources, GR_MEM_OTHER);
            reply_syntax(reply);
            return;
        }
    }
    gr_zset_t *result = set_operation(sources, (size_t)numkeys, op, how, (size_t)limit);
    gr_mem_free(sources, GR_MEM_OTHER);
    if (!result) { gr_reply_oom(reply); return; }
    if (cardinality) {
        gr_reply_integer(reply, (int64_t)gr_zset_count(result));
        gr_zset_free(result);
        return;
    }
    if (!store) {
        reply_ranks(db, reply, result, 0, gr_zset_count(result), 0, withscores);
        gr_zset_free(result);
        return;
    }
    /* the stored copy takes the encoding a set of its size gets */
    entry_sink_t sink = {gr_zset_new(), limits_of(db), 0};
    if (!sink.zset) { gr_zset_free(result); gr_reply_oom(reply); return; }
    gr_zset_iter_t iter;
    gr_zset_entry_t e;
    gr_zset_iter_start(result, 0, &iter);
    while (gr_zset_iter_next(&iter, &e)) sink_add(&sink, &e);
    gr_zset_free(result);
    if (sink.failed) { gr_zset_free(sink.zset); gr_reply_oom(reply); return; }
    store_result(db, arg(argv, argv_length, 1), sink.zset, reply);
}

void gr_cmd_zunion(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    set_operation_command(db, argc, argv, argv_length, reply, OP_UNION, 0, 0, "zunion");
}
void gr_cmd_zinter(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    set_operation_command(db, argc, argv, argv_length, reply, OP_INTER, 0, 0, "zinter");
}
void gr_cmd_zdiff(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    set_operation_command(db, argc, argv, argv_length, reply, OP_DIFF, 0, 0, "zdiff");
}
void gr_cmd_zunionstore(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    set_operation_command(db, argc, argv, argv_length, reply, OP_UNION, 1, 0, "zunionstore");
}
void gr_cmd_zinterstore(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    set_operation_command(db, argc, argv, argv_length, reply, OP_INTER, 1, 0, "zinterstore");
}
void gr_cmd_zdiffstore(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    set_operation_command(db, argc, argv, argv_length, reply, OP_DIFF, 1, 0, "zdiffstore");
}

void gr_cmd_zintercard(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    set_operation_command(db, argc, argv, argv_length, reply, OP_INTER, 0, 1, "zintercard");
}

/* ---- BZPOPMIN, BZPOPMAX, BZMPOP: the blocking layer's spec (exec/blocking.h) ----
 *
 * The argv handler parses its arguments into a gr_request_t the blocking layer can park:
 * items = the keys, timeout, end = 0 MIN / 1 MAX, flag = 0 BZPOPMIN/BZPOPMAX ([key, member,
 * score]) / 1 BZMPOP ([key, [[member, score]...]]), count = BZMPOP's COUNT. */

static int holds_zset(const gr_ks_entry_t *entry) { return entry->type == GR_TYPE_ZSET; }

static int zset_block_serve(gr_db_t *db, const gr_request_t *r, gr_reply_t *reply) {
    for (uint32_t k = 0; k < r->item_count; k++) {
        gr_bytes_t key = r->items[k];
        gr_zset_t *zset = NULL;
        int found = find_zset_or_reply(db, key, &zset, 1, reply);
        if (found < 0) return 1;
        if (!found) continue;
        if (r->flag == 0) {
            gr_reply_array_begin(reply, 3);
            gr_reply_bulk(reply, key.data, key.length);
            pop_and_reply(db, reply, key, zset, 1, r->end, 0);
        } else {
            size_t n = pop_count(zset, r->count);
            gr_reply_array_begin(reply, 2);
            gr_reply_bulk(reply, key.data, key.length);
            gr_reply_array_begin(reply, n);
            pop_and_reply(db, reply, key, zset, n, r->end, 1);
        }
        return 1;
    }
    return 0;
}

static void zset_block_timeout(const gr_request_t *r, gr_reply_t *reply) {
    (void)r;
    gr_reply_nil_array(reply);
}

const gr_block_spec_t gr_zset_block_pop = {"bzpopmin", GR_BLOCK_KEYS_IN_ITEMS, holds_zset, zset_block_serve,
                                           zset_block_timeout};

/* Redis's getTimeoutFromObjectOrReply: seconds as a float, not negative, within range. */
static int parse_timeout_or_reply(const uint8_t *data, size_t length, double *seconds, gr_reply_t *reply) {
    char text[64];
    char *end = NULL;
    if (length > 0 && length < sizeof text) {
        memcpy(text, data, length);
        text[length] = '\0';
        *seconds = strtod(text, &end);
    }
    if (!end || end != text + length || length == 0 || text[0] == ' ' || (text[0] >= '\t' && text[0] <= '\r')) {
        reply_error(reply, "ERR timeout is not a float or out of range");
        return -1;
    }
    const char *why = gr_blocking_timeout_error(*seconds);
    if (why) { reply_error(reply, why); return -1; }
    return 0;
}

static void bzpop_generic(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                          gr_reply_t *reply, int max) {
    double timeout;
    if (parse_timeout_or_reply(argv[argc - 1], argv_length[argc - 1], &timeout, reply) != 0) return;
    size_t key_count = argc - 2;
    gr_bytes_t keys_on_stack[16];
    gr_bytes_t *keys = key_count <= 16 ? keys_on_stack : gr_mem_alloc(key_count * sizeof *keys, GR_MEM_OTHER);
    if (!keys) { gr_reply_oom(reply); return; }
    for (size_t i = 0; i < key_count; i++) keys[i] = arg(argv, argv_length, 1 + i);
    gr_request_t request;
    memset(&request, 0, sizeof request);
    request.template_id = GR_T_COMMAND;
    request.items = keys;
    request.item_count = request.item_capacity = (uint32_t)key_count;
    request.timeout = timeout;
    request.end = (uint8_t)max;
    request.count = 1;
    gr_blocking_run(db, &gr_zset_block_pop, &request, reply);
    if (keys != keys_on_stack) gr_mem_free(keys, GR_MEM_OTHER);
}

void gr_cmd_bzpopmin(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    bzpop_generic(db, argc, argv, argv_length, reply, 0);
}
void gr_cmd_bzpopmax(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    bzpop_generic(db, argc, argv, argv_length, reply, 1);
}

/* BZMPOP timeout numkeys key... MIN|MAX [COUNT count]: ZMPOP's checks after the timeout's. */
void gr_cmd_bzmpop(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    double timeout;
    if (parse_timeout_or_reply(argv[1], argv_length[1], &timeout, reply) != 0) return;
    int64_t numkeys;
    if (gr_bytes_to_int64(argv[2], argv_length[2], &numkeys) != 0 || numkeys < 1) {
        reply_error(reply, "ERR numkeys should be greater than 0");
        return;
    }
    if ((uint64_t)numkeys > argc - 4) { reply_syntax(reply); return; }
    size_t where = 3 + (size_t)numkeys;
    int max;
    if (gr_word_is(argv[where], argv_length[where], "min")) max = 0;
    else if (gr_word_is(argv[where], argv_length[where], "max")) max = 1;
    else { reply_syntax(reply); return; }
    int64_t count = 1;
    int count_seen = 0;
    for (size_t i = where + 1; i < argc; i++) {
        if (!count_seen && gr_word_is(argv[i], argv_length[i], "count") && i + 1 < argc) {
            if (gr_bytes_to_int64(argv[i + 1], argv_length[i + 1], &count) != 0 || count < 1) {
                reply_error(reply, "ERR count should be greater than 0");
                return;
            }
            count_seen = 1;
            i++;
        } else {
            reply_syntax(reply);
            return;
        }
    }
    gr_bytes_t keys_on_stack[16];
    size_t key_count = (size_t)numkeys;
    gr_bytes_t *keys = key_count <= 16 ? keys_on_stack : gr_mem_alloc(key_count * sizeof *keys, GR_MEM_OTHER);
    if (!keys) { gr_reply_oom(reply); return; }
    for (size_t i = 0; i < key_count; i++) keys[i] = arg(argv, argv_length, 3 + i);
    gr_request_t request;
    memset(&request, 0, sizeof request);
    request.template_id = GR_T_COMMAND;
    request.items = keys;
    request.item_count = request.item_capacity = (uint32_t)key_count;
    request.timeout = timeout;
    request.end = (uint8_t)max;
    request.flag = 1;
    request.count = count > UINT32_MAX ? UINT32_MAX : (uint32_t)count;
    gr_blocking_run(db, &gr_zset_block_pop, &request, reply);
    if (keys != keys_on_stack) gr_mem_free(keys, GR_MEM_OTHER);
}

/* ---- GOBLIN.ZSET.INTERNALS, GOBLIN.OPTIMIZE ---- */

/* GOBLIN.ZSET.INTERNALS key: the set's layout as a map (RESP3) or flat array (RESP2), as
 * GOBLIN.LIST.INTERNALS; nil for a missing key, WRONGTYPE for another type. */
void gr_cmd_zset_internals(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                           gr_reply_t *reply) {
    (void)argc;
    gr_zset_t *zset;
    int found = find_zset_or_reply(db, arg(argv, argv_length, 1), &zset, 0, reply);
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
void gr_cmd_goblin_optimize(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                            gr_reply_t *reply) {
    (void)argc;
    gr_zset_t *zset;
    int found = find_zset_or_reply(db, arg(argv, argv_length, 1), &zset, 1, reply);
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
void gr_cmd_zset_convert(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                         gr_reply_t *reply) {
    (void)argc;
    int to_packed;
    if (gr_word_is(argv[2], argv_length[2], "packed")) to_packed = 1;
    else if (gr_word_is(argv[2], argv_length[2], "standard")) to_packed = 0;
    else { reply_syntax(reply); return; }
    gr_zset_t *zset;
    int found = find_zset_or_reply(db, arg(argv, argv_length, 1), &zset, 1, reply);
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
