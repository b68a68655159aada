/* test_zset.c — the sorted-set engine (engines/zset/: the compact leaf, the B+tree with counts,
 * the member -> score index through lane T's table) against a reference model: an array of
 * (member, score) kept sorted by (score, member). Random adds, rescores (ties on score are
 * frequent, so member order matters), deletes, rank and score queries, score and member bounds,
 * positional reads, iteration from a rank, scans and copies, over small limits so sets cross
 * from compact to standard often, and sets large enough for trees three levels deep; every few
 * steps gr_zset_check verifies the tree's own invariants. Run by run_c_tests.py (plain and
 * under ASan/UBSan); argument: steps (default 200000). `test_zset --measure N` instead
 * reports the standard encoding's allocated bytes per member at N 16-byte members with
 * scattered scores (issue 18's "structure bytes"), and the growing inserts' latency tail.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engines/zset/zset.h"
#include "test_helpers.h"

#define POOL 6000

typedef struct model_entry {
    uint8_t member[24];
    size_t length;
    double score;
} model_entry_t;

static model_entry_t model[POOL];
static size_t model_count;

static int entry_cmp(double s, const uint8_t *m, size_t ml, const model_entry_t *e) {
    if (s < e->score) return -1;
    if (s > e->score) return 1;
    int c = memcmp(m, e->member, ml < e->length ? ml : e->length);
    if (c) return c;
    return ml < e->length ? -1 : ml > e->length;
}

static long model_find(const uint8_t *m, size_t ml) {
    for (size_t i = 0; i < model_count; i++)
        if (same(model[i].member, model[i].length, m, ml)) return (long)i;
    return -1;
}

static void model_remove(size_t i) {
    memmove(model + i, model + i + 1, (model_count - i - 1) * sizeof model[0]);
    model_count--;
}

static void model_insert(const uint8_t *m, size_t ml, double s) {
    size_t i = 0;
    while (i < model_count && entry_cmp(s, m, ml, &model[i]) > 0) i++;
    memmove(model + i + 1, model + i, (model_count - i) * sizeof model[0]);
    memcpy(model[i].member, m, ml);
    model[i].length = ml;
    model[i].score = s;
    model_count++;
}

static size_t member_of(size_t index, uint8_t *out) {
    return (size_t)snprintf((char *)out, 24, "m%zu%s", index, index % 7 == 0 ? "-a-longer-member" : "");
}

static double random_score(void) {
    switch (below(4)) {
    case 0: return (double)below(5);                 /* many ties */
    case 1: return (double)below(100000) / 7.0;
    case 2: return -(double)below(1000);
    default: return (double)below(3) - 1.0;
    }
}

typedef struct seen { size_t count, matched; } seen_t;

static void scan_visit(void *context, const gr_zset_entry_t *entry) {
    seen_t *seen = context;
    seen->count++;
    long i = model_find(entry->member, entry->member_length);
    if (i >= 0 && model[i].score == entry->score) seen->matched++;
}

static void compare_all(const gr_zset_t *z, size_t step) {
    CHECK(gr_zset_check(z) == 0, "step %zu: tree check", step);
    CHECK(gr_zset_count(z) == model_count, "step %zu: count %zu, model %zu", step, gr_zset_count(z), model_count);
    gr_zset_iter_t iter;
    gr_zset_entry_t e;
    size_t i = 0, matched = 0;
    gr_zset_iter_start(z, 0, &iter);
    while (gr_zset_iter_next(&iter, &e)) {
        if (i < model_count && e.score == model[i].score && same(e.member, e.member_length, model[i].member, model[i].length))
            matched++;
        i++;
    }
    CHECK(i == model_count && matched == model_count, "step %zu: iterated %zu, matched %zu of %zu", step, i, matched, model_count);
    seen_t seen = {0};
    uint64_t cursor = 0;
    do cursor = gr_zset_scan(z, cursor, 7, scan_visit, &seen); while (cursor);
    CHECK(seen.count >= model_count && seen.matched == seen.count, "step %zu: scan saw %zu (%zu matched)", step, seen.count,
          seen.matched);
}

static void run(size_t steps, size_t pool, gr_zset_limits_t limits) {
    gr_zset_t *z = gr_zset_new();
    CHECK(z != NULL, "new");
    model_count = 0;
    for (size_t step = 0; step < steps; step++) {
        uint8_t m[24];
        size_t ml = member_of(below(pool), m);
        long at = model_find(m, ml);
        size_t op = below(100);
        if (op < 45) {
            double s = random_score();
            int result = gr_zset_set(z, m, ml, s, &limits);
            CHECK(result == (at < 0 ? 1 : 0), "step %zu: set returned %d", step, result);
            if (at >= 0) model_remove((size_t)at);
            model_insert(m, ml, s);
        } else if (op < 65) {
            CHECK(gr_zset_delete(z, m, ml) == (at >= 0), "step %zu: delete", step);
            if (at >= 0) model_remove((size_t)at);
        } else if (op < 75) {
            double s = -1;
            int64_t rank = gr_zset_rank(z, m, ml, &s);
            CHECK(rank == at && (at < 0 || s == model[at].score), "step %zu: rank %lld, model %ld", step, (long long)rank, at);
        } else if (op < 82) {
            double s = random_score();
            int inclusive = (int)below(2);
            size_t expected = 0;
            while (expected < model_count && (inclusive ? model[expected].score <= s : model[expected].score < s)) expected++;
            size_t got = gr_zset_count_below_score(z, s, inclusive);
            CHECK(got == expected, "step %zu: count_below_score %zu, model %zu", step, got, expected);
        } else if (op < 88) {
            gr_zset_entry_t e;
            size_t rank = below(model_count + 2);
            int found = gr_zset_at(z, rank, &e);
            CHECK(found == (rank < model_count) &&
                      (!found || (e.score == model[rank].score && same(e.member, e.member_length, model[rank].member, model[rank].length))),
                  "step %zu: at %zu", step, rank);
        } else if (op < 92) {
            /* the member bound, over a model whose scores all equal (the lex commands' case) */
            size_t expected = 0;
            int inclusive = (int)below(2);
            int all_equal = 1;
            for (size_t i = 1; i < model_count; i++) all_equal &= model[i].score == model[0].score;
            if (all_equal) {
                for (size_t i = 0; i < model_count; i++) {
                    int below_it = memcmp(model[i].member, m, model[i].length < ml ? model[i].length : ml);
                    if (!below_it) below_it = model[i].length < ml ? -1 : model[i].length > ml;
                    if (inclusive ? below_it <= 0 : below_it < 0) expected++;
                }
                CHECK(gr_zset_count_below_member(z, m, ml, inclusive) == expected, "step %zu: count_below_member", step);
            }
        } else if (op < 94) {
            size_t from = below(model_count + 1), i = from, matched = 0;
            gr_zset_iter_t iter;
            gr_zset_entry_t e;
            gr_zset_iter_start(z, from, &iter);
            while (gr_zset_iter_next(&iter, &e) && i < model_count) {
                if (same(e.member, e.member_length, model[i].member, model[i].length)) matched++;
                i++;
            }
            CHECK(matched == model_count - from, "step %zu: iterate from %zu", step, from);
        } else if (op < 95) {
            gr_zset_t *copy = gr_zset_duplicate(z);
            CHECK(copy && gr_zset_check(copy) == 0 && gr_zset_count(copy) == model_count &&
                      gr_zset_is_compact(copy) == gr_zset_is_compact(z), "step %zu: duplicate", step);
            gr_zset_free(z);
            z = copy;
        } else if (op < 96 && below(10) == 0) {
            size_t before = gr_zset_allocated_bytes(z);
            CHECK(gr_zset_optimize(z) == 0 && (model_count < 1000 || gr_zset_allocated_bytes(z) <= before), "step %zu: optimize %zu -> %zu", step, before, gr_zset_allocated_bytes(z));
            gr_zset_internals_t in;
            gr_zset_internals(z, &in);
            CHECK(in.members == model_count && in.index_tombstones == 0 && !in.index_resizing &&
                      in.total_allocated_bytes == gr_zset_allocated_bytes(z), "step %zu: internals after optimize", step);
            compare_all(z, step);
        } else if (op < 96 && below(20) == 0) {
            while (model_count) {   /* empty it from the low end, as ZPOPMIN does */
                gr_zset_entry_t e;
                uint8_t member[24];
                gr_zset_at(z, 0, &e);
                memcpy(member, e.member, e.member_length);
                CHECK(gr_zset_delete(z, member, e.member_length) == 1, "step %zu: pop", step);
                model_remove(0);
            }
        } else {
            double s;
            int found = gr_zset_score(z, m, ml, &s);
            CHECK(found == (at >= 0) && (!found || s == model[at].score), "step %zu: score", step);
        }
        if (step % 211 == 0) compare_all(z, step);
        if ((int64_t)model_count > limits.max_compact_entries) CHECK(!gr_zset_is_compact(z), "step %zu: still compact", step);
    }
    compare_all(z, steps);
    gr_zset_free(z);
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* 16-byte members, scores scattered by a multiplicative hash; each insert timed. */
static int measure(size_t n) {
    gr_zset_t *z = gr_zset_new();
    gr_zset_limits_t limits = {128, 64};
    double *ns = malloc(n * sizeof *ns);
    if (!z || !ns) return 1;
    for (size_t i = 0; i < n; i++) {
        char m[32];
        snprintf(m, sizeof m, "member:%09u", (unsigned)(i % 1000000000u));   /* 16 bytes */
        double score = (double)((i * 2654435761u) % 1000003u);
        double start = now_ns();
        gr_zset_set(z, (const uint8_t *)m, 16, score, &limits);
        ns[i] = now_ns() - start;
    }
    size_t bytes = gr_zset_allocated_bytes(z);
    printf("%zu members of 16 bytes: %.2f allocated bytes/member (GR_MEM_ZSET %.2f)\n", n, (double)bytes / (double)n,
           (double)gr_mem_used_by(GR_MEM_ZSET) / (double)n);
    qsort(ns, n, sizeof *ns, compare_doubles);
    printf("insert ns: p50 %.0f p99 %.0f p99.9 %.0f p99.99 %.0f max %.0f\n", ns[n / 2], ns[n * 99 / 100],
           ns[n * 999 / 1000], ns[n * 9999 / 10000], ns[n - 1]);
    free(ns);
    gr_zset_free(z);
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 2 && strcmp(argv[1], "--measure") == 0) return measure((size_t)strtoull(argv[2], NULL, 10));
    size_t steps = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : 200000;
    run(steps / 4, 40, (gr_zset_limits_t){16, 64});       /* small sets across the compact threshold */
    run(steps / 4, 300, (gr_zset_limits_t){128, 10});      /* long members convert early */
    run(steps / 2, POOL, (gr_zset_limits_t){128, 64});     /* trees three levels deep */
    /* a large ordered load and unload: every leaf and node split, then emptied */
    gr_zset_t *z = gr_zset_new();
    gr_zset_limits_t limits = {128, 64};
    size_t n = 100000;
    for (size_t i = 0; i < n; i++) {
        char m[24];
        size_t ml = (size_t)snprintf(m, sizeof m, "k%08zu", i);
        gr_zset_set(z, (const uint8_t *)m, ml, (double)(i % 1000), &limits);
    }
    CHECK(gr_zset_check(z) == 0 && gr_zset_count(z) == n, "bulk load");
    CHECK(gr_zset_rank(z, (const uint8_t *)"k00000999", 9, NULL) == 99900, "bulk rank %lld",
          (long long)gr_zset_rank(z, (const uint8_t *)"k00000999", 9, NULL));
    CHECK(gr_zset_count_below_score(z, 500, 0) == 50000, "bulk count_below_score");
    for (size_t i = 0; i < n; i += 2) {
        char m[24];
        size_t ml = (size_t)snprintf(m, sizeof m, "k%08zu", i);
        gr_zset_delete(z, (const uint8_t *)m, ml);
    }
    CHECK(gr_zset_check(z) == 0 && gr_zset_count(z) == n / 2, "bulk delete half");
    gr_zset_free(z);
    /* lex bounds over a tree of one score (many inner children tied): k%08zu for even i is
     * the (i/2)-th member */
    z = gr_zset_new();
    for (size_t i = 0; i < n; i += 2) {
        char m[24];
        size_t ml = (size_t)snprintf(m, sizeof m, "k%08zu", i);
        gr_zset_set(z, (const uint8_t *)m, ml, 0.0, &limits);
    }
    for (size_t probe = 0; probe < n; probe += 997) {
        char m[24];
        size_t ml = (size_t)snprintf(m, sizeof m, "k%08zu", probe);
        size_t below_it = (probe + 1) / 2, at = probe % 2 == 0;
        CHECK(gr_zset_count_below_member(z, (const uint8_t *)m, ml, 0) == below_it &&
                  gr_zset_count_below_member(z, (const uint8_t *)m, ml, 1) == below_it + at, "lex bound %zu", probe);
    }
    CHECK(gr_zset_count_below_member(z, (const uint8_t *)"z", 1, 0) == n / 2, "lex bound past the end");
    gr_zset_free(z);
    CHECK(gr_mem_used_by(GR_MEM_ZSET) == 0, "zset memory left: %lld", (long long)gr_mem_used_by(GR_MEM_ZSET));
    return checks_report();
}
