/* cmd_zset_store.c — the sorted-set algebra: ZUNION, ZINTER, ZDIFF, their STORE forms and
 * ZINTERCARD (Redis's zunionInterDiffGenericCommand), over sorted sets and plain sets (a set's
 * members score 1). The result is built as a standard set and then replied, counted, or stored
 * with the server's thresholds through cmd_zset.c's entry sink (cmd_zset_shared.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands/cmd_zset_shared.h"
#include "core/number.h"
#include "core/bytes.h"
#include "engines/set/set.h"   /* ZUNION/ZINTER/ZDIFF read sets as scores of 1 */

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
static int find_sources_or_reply(gr_server_t *db, const uint8_t *const *argv, const size_t *argv_length, size_t first,
                                 size_t n, set_source_t *sources, gr_reply_t *reply) {
    for (size_t i = 0; i < n; i++) {
        gr_bytes_t key = arg(argv, argv_length, first + i);
        gr_ks_entry_t *entry = gr_db_lookup(db, key);   /* a read for the STORE forms too, as Redis */
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
static void set_operation_command(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
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
    if (find_sources_or_reply(db, argv, argv_length, numkeys_index + 1, (size_t)numkeys, sources, reply) != 0) {
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
                if (gr_zcmd_parse_double(argv[j], argv_length[j], &sources[i].weight) != 0) {
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
        gr_zcmd_reply_ranks(db, reply, result, 0, gr_zset_count(result), 0, withscores);
        gr_zset_free(result);
        return;
    }
    /* the stored copy takes the encoding a set of its size gets */
    entry_sink_t sink = {gr_zset_new(), limits_of(db), 0};
    if (!sink.zset) { gr_zset_free(result); gr_reply_oom(reply); return; }
    gr_zset_iter_t iter;
    gr_zset_entry_t e;
    gr_zset_iter_start(result, 0, &iter);
    while (gr_zset_iter_next(&iter, &e)) gr_zcmd_sink_add(&sink, &e);
    gr_zset_free(result);
    if (sink.failed) { gr_zset_free(sink.zset); gr_reply_oom(reply); return; }
    gr_zcmd_store_result(db, arg(argv, argv_length, 1), sink.zset, reply);
}

void gr_cmd_zunion(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    set_operation_command(db, argc, argv, argv_length, reply, OP_UNION, 0, 0, "zunion");
}
void gr_cmd_zinter(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    set_operation_command(db, argc, argv, argv_length, reply, OP_INTER, 0, 0, "zinter");
}
void gr_cmd_zdiff(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    set_operation_command(db, argc, argv, argv_length, reply, OP_DIFF, 0, 0, "zdiff");
}
void gr_cmd_zunionstore(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    set_operation_command(db, argc, argv, argv_length, reply, OP_UNION, 1, 0, "zunionstore");
}
void gr_cmd_zinterstore(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    set_operation_command(db, argc, argv, argv_length, reply, OP_INTER, 1, 0, "zinterstore");
}
void gr_cmd_zdiffstore(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    set_operation_command(db, argc, argv, argv_length, reply, OP_DIFF, 1, 0, "zdiffstore");
}

void gr_cmd_zintercard(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    set_operation_command(db, argc, argv, argv_length, reply, OP_INTER, 0, 1, "zintercard");
}
