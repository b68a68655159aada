/* cmd_zset_range.c — the sorted-set range commands: ZCOUNT, ZLEXCOUNT, ZRANGE and its older
 * forms (ZREVRANGE, ZRANGEBYSCORE, ZREVRANGEBYSCORE, ZRANGEBYLEX, ZREVRANGEBYLEX), ZRANGESTORE
 * and ZREMRANGEBYRANK/SCORE/LEX, over the engine in engines/zset/. Every range becomes a span
 * of ranks here (Redis's zslParseRange / zslParseLexRange for the bounds); cmd_zset.c replies
 * or stores the members (cmd_zset_shared.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "commands/cmd_zset_shared.h"
#include "exec/lookup.h"
#include "core/number.h"
#include "core/bytes.h"

/* A score bound of ZCOUNT / ZRANGEBYSCORE: "(" for exclusive, else inclusive (zslParseRange). */
typedef struct score_range {
    double min, max;
    int min_exclusive, max_exclusive;
} score_range_t;

static int parse_bound(const uint8_t *data, size_t length, double *value, int *exclusive) {
    /* no length limit: Redis reads DBL_MAX written out in full (309 digits) */
    char small[256];
    *exclusive = length && data[0] == '(';
    size_t skip = (size_t)*exclusive;
    char *buffer = length - skip < sizeof small ? small : malloc(length - skip + 1);
    if (!buffer) return -1;
    memcpy(buffer, data + skip, length - skip);
    buffer[length - skip] = '\0';
    char *end;
    *value = strtod(buffer, &end);
    int bad = *end != '\0' || isnan(*value);
    if (buffer != small) free(buffer);
    return bad ? -1 : 0;
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

void gr_cmd_zcount(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    (void)argc;
    score_range_t range;
    if (parse_score_range_or_reply(arg(argv, argv_length, 2), arg(argv, argv_length, 3), &range, reply) != 0) return;
    gr_zset_t *zset = NULL;
    int found = gr_zcmd_find_or_reply(db, arg(argv, argv_length, 1), &zset, 0, reply);
    if (found < 0) return;
    size_t first = 0, end = 0;
    if (found) score_rank_span(zset, &range, &first, &end);
    gr_reply_integer(reply, (int64_t)(end - first));
}

void gr_cmd_zlexcount(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    (void)argc;
    lex_bound_t lo, hi;
    if (parse_lex_range_or_reply(arg(argv, argv_length, 2), arg(argv, argv_length, 3), &lo, &hi, reply) != 0) return;
    gr_zset_t *zset = NULL;
    int found = gr_zcmd_find_or_reply(db, arg(argv, argv_length, 1), &zset, 0, reply);
    if (found < 0) return;
    size_t first = 0, end = 0;
    if (found && lex_rank_span(zset, &lo, &hi, &first, &end) != 0) { gr_reply_oom(reply); return; }
    gr_reply_integer(reply, (int64_t)(end - first));
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

static void zrange_reply(gr_server_t *db, gr_reply_t *reply, gr_bytes_t key, range_request_t *r) {
    gr_zset_t *zset = NULL;
    /* Redis parses the bounds before it looks at the key */
    size_t start, n;
    if (range_ranks_or_reply(r, NULL, &start, &n, reply) != 0) return;
    int found = gr_zcmd_find_or_reply(db, key, &zset, 0, reply);
    if (found < 0) return;
    if (!found) { gr_reply_array_begin(reply, 0); return; }
    if (range_ranks_or_reply(r, zset, &start, &n, reply) != 0) return;
    gr_zcmd_reply_ranks(db, reply, zset, start, n, r->reverse, r->withscores);
}

void gr_cmd_zrange(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    range_request_t r = {.min = arg(argv, argv_length, 2), .max = arg(argv, argv_length, 3)};
    if (parse_range_options_or_reply(argc, argv, argv_length, 4, &r, 1, 1, reply) != 0) return;
    zrange_reply(db, reply, arg(argv, argv_length, 1), &r);
}

static void old_range(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply,
                      int by, int reverse) {
    range_request_t r = {.by = by, .reverse = reverse, .min = arg(argv, argv_length, 2), .max = arg(argv, argv_length, 3)};
    if (parse_range_options_or_reply(argc, argv, argv_length, 4, &r, 0, by != BY_LEX, reply) != 0) return;
    zrange_reply(db, reply, arg(argv, argv_length, 1), &r);
}

void gr_cmd_zrevrange(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    old_range(db, argc, argv, argv_length, reply, BY_RANK, 1);
}
void gr_cmd_zrangebyscore(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    old_range(db, argc, argv, argv_length, reply, BY_SCORE, 0);
}
void gr_cmd_zrevrangebyscore(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    old_range(db, argc, argv, argv_length, reply, BY_SCORE, 1);
}
void gr_cmd_zrangebylex(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    old_range(db, argc, argv, argv_length, reply, BY_LEX, 0);
}
void gr_cmd_zrevrangebylex(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    old_range(db, argc, argv, argv_length, reply, BY_LEX, 1);
}

void gr_cmd_zrangestore(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    range_request_t r = {.min = arg(argv, argv_length, 3), .max = arg(argv, argv_length, 4)};
    if (parse_range_options_or_reply(argc, argv, argv_length, 5, &r, 1, 0, reply) != 0) return;
    size_t start, n;
    if (range_ranks_or_reply(&r, NULL, &start, &n, reply) != 0) return;
    gr_zset_t *zset = NULL;
    int found = gr_zcmd_find_or_reply(db, arg(argv, argv_length, 2), &zset, 0, reply);
    if (found < 0) return;
    if (found && range_ranks_or_reply(&r, zset, &start, &n, reply) != 0) return;
    entry_sink_t sink = {gr_zset_new(), limits_of(db), 0};
    if (!sink.zset) { gr_reply_oom(reply); return; }
    for (size_t i = 0; i < n; i++) {
        gr_zset_entry_t e;
        gr_zset_at(zset, r.reverse ? start - i : start + i, &e);
        gr_zcmd_sink_add(&sink, &e);
    }
    if (sink.failed) { gr_zset_free(sink.zset); gr_reply_oom(reply); return; }
    gr_zcmd_store_result(db, arg(argv, argv_length, 1), sink.zset, reply);
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

static void zremrange(gr_server_t *db, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply, int by) {
    range_request_t r = {.by = by, .min = arg(argv, argv_length, 2), .max = arg(argv, argv_length, 3)};
    size_t start, n;
    if (range_ranks_or_reply(&r, NULL, &start, &n, reply) != 0) return;
    gr_bytes_t key = arg(argv, argv_length, 1);
    gr_zset_t *zset = NULL;
    int found = gr_zcmd_find_or_reply(db, key, &zset, 1, reply);
    if (found <= 0) { if (found == 0) gr_reply_integer(reply, 0); return; }
    if (range_ranks_or_reply(&r, zset, &start, &n, reply) != 0) return;
    size_t before = gr_zset_count(zset);
    int failed = remove_ranks(zset, start, n);
    int64_t removed = (int64_t)(before - gr_zset_count(zset));
    if (removed) {
        gr_db_mark_changed(db, key, removed);
        gr_zcmd_delete_if_empty(db, key, zset);
    }
    if (failed) gr_reply_oom(reply); else gr_reply_integer(reply, removed);
}

void gr_cmd_zremrangebyrank(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    (void)argc;
    zremrange(db, argv, argv_length, reply, BY_RANK);
}
void gr_cmd_zremrangebyscore(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    (void)argc;
    zremrange(db, argv, argv_length, reply, BY_SCORE);
}
void gr_cmd_zremrangebylex(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    (void)argc;
    zremrange(db, argv, argv_length, reply, BY_LEX);
}
