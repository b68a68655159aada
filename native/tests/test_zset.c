/* test_zset.c — the sorted-set engine (engines/zset/: the compact leaf, the B+tree with counts,
 * the member -> score index through the table engine) against a reference model: an array of
 * (member, score) kept sorted by (score, member). Random adds, rescores (ties on score are
 * frequent, so member order matters), deletes, rank and score queries, score and member bounds,
 * positional reads, iteration from a rank, scans and copies, over small limits so sets cross
 * from compact to standard often, and sets large enough for trees three levels deep; every few
 * steps gr_zset_check verifies the tree's own invariants. Run by run_c_tests.py (plain and
 * under ASan/UBSan); argument: steps (default 200000). `test_zset --measure N` instead
 * reports the standard encoding's allocated bytes per member at N 16-byte members with
 * scattered scores, and the growing inserts' latency tail.
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

static model_entry_t model[POOL * 2];   /* the packed run adds non-canonical members */
static size_t model_count;

/* Set while the set under test is packed: its tied scores are in numeric member order. */
static int model_numeric_ties;

static long long member_number(const uint8_t *m, size_t ml) {
    char text[24];
    memcpy(text, m, ml);
    text[ml] = '\0';
    return strtoll(text, NULL, 10);
}

static int entry_cmp(double s, const uint8_t *m, size_t ml, const model_entry_t *e) {
    if (s < e->score) return -1;
    if (s > e->score) return 1;
    if (model_numeric_ties) {
        long long a = member_number(m, ml), b = member_number(e->member, e->length);
        return a < b ? -1 : a > b;
    }
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

static int model_sort_cmp(const void *a, const void *b) {
    const model_entry_t *x = a, *y = b;
    return entry_cmp(x->score, x->member, x->length, y);
}

/* The model in the order of z's encoding (after a conversion between standard and packed). */
static void model_follow(const gr_zset_t *z) {
    int numeric = gr_zset_is_packed(z);
    if (numeric == model_numeric_ties) return;
    model_numeric_ties = numeric;
    qsort(model, model_count, sizeof model[0], model_sort_cmp);
}

/* The packed run's members: int32 decimals around 0, and now and then one that is not a
 * canonical int32 (leading zero, "-0", "+n", past int32), which makes a packed set standard. */
static size_t packed_member_of(size_t index, size_t pool, uint8_t *out) {
    long value = (long)index - (long)pool / 2;
    if (below(4000) == 0) {
        switch (below(4)) {
        case 0: return (size_t)snprintf((char *)out, 24, "0%zu", index);
        case 1: return (size_t)snprintf((char *)out, 24, "-0");
        case 2: return (size_t)snprintf((char *)out, 24, "+%zu", index);
        default: return (size_t)snprintf((char *)out, 24, "%lld", 3000000000LL + (long long)index);
        }
    }
    if (below(50) == 0) value = below(2) ? 2147483647L - (long)below(3) : -2147483647L - 1 + (long)below(3);
    return (size_t)snprintf((char *)out, 24, "%ld", value);
}

/* Scores exact in float32, and now and then one that is not (a packed set becomes standard). */
static double packed_score(void) {
    if (below(4000) == 0) return (double)below(100000) / 7.0 + 0.001;
    switch (below(4)) {
    case 0: return (double)below(5);
    case 1: return (double)below(100000) / 4.0;
    case 2: return -(double)below(1000);
    default: return below(200) == 0 ? (below(2) ? 1.0 / 0.0 : -1.0 / 0.0) : (double)below(3) - 1.0;
    }
}

static int model_fits_packed(void) {
    for (size_t i = 0; i < model_count; i++) {
        char text[24];
        memcpy(text, model[i].member, model[i].length);
        text[model[i].length] = '\0';
        char again[24];
        long long v = strtoll(text, NULL, 10);
        snprintf(again, sizeof again, "%lld", v);
        if (strcmp(text, again) != 0 || v < -2147483648LL || v > 2147483647LL) return 0;
        if ((double)(float)model[i].score != model[i].score) return 0;
    }
    return 1;
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
    model_numeric_ties = 0;
    size_t packed_steps = 0;
    for (size_t step = 0; step < steps; step++) {
        model_follow(z);
        packed_steps += (size_t)gr_zset_is_packed(z);
        uint8_t m[24];
        size_t ml = limits.packed ? packed_member_of(below(pool), pool, m) : member_of(below(pool), m);
        size_t op = below(100);
        if (limits.packed && below(300) == 0) {
            /* GOBLIN.ZSET.CONVERT: to packed when everything fits, else refused, nothing lost */
            int fits = model_fits_packed();
            int result = gr_zset_convert(z, 1);
            CHECK(result == (fits ? 0 : -2) && gr_zset_is_packed(z) == fits && gr_zset_check(z) == 0,
                  "step %zu: convert to packed %d (fits %d)", step, result, fits);
            model_follow(z);
            compare_all(z, step);
        }
        long at = model_find(m, ml);   /* after any re-sort of the model */
        if (op < 45) {
            double s = limits.packed ? packed_score() : random_score();
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
            double s = limits.packed ? packed_score() : random_score();
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
                if (gr_zset_is_packed(z)) {   /* as the lex commands do: standard first */
                    CHECK(gr_zset_convert(z, 0) == 0 && !gr_zset_is_packed(z), "step %zu: convert to standard", step);
                    model_follow(z);
                }
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
                      gr_zset_is_compact(copy) == gr_zset_is_compact(z) && gr_zset_is_packed(copy) == gr_zset_is_packed(z),
                  "step %zu: duplicate", step);
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
        model_follow(z);
        if (step % 211 == 0) compare_all(z, step);
        if ((int64_t)model_count > limits.max_compact_entries) CHECK(!gr_zset_is_compact(z), "step %zu: still compact", step);
    }
    model_follow(z);
    compare_all(z, steps);
    if (limits.packed) CHECK(packed_steps > steps / 10, "packed for %zu of %zu steps", packed_steps, steps);
    gr_zset_free(z);
    model_numeric_ties = 0;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* 16-byte members, scores scattered by a multiplicative hash; each insert timed. */
static int measure(size_t n, int packed) {
    gr_zset_t *z = gr_zset_new();
    gr_zset_limits_t limits = {128, 64, packed};
    double *ns = malloc(n * sizeof *ns);
    if (!z || !ns) return 1;
    for (size_t i = 0; i < n; i++) {
        char m[32];
        size_t ml = packed ? (size_t)snprintf(m, sizeof m, "%zu", i)   /* packed: int32 members */
                           : (size_t)snprintf(m, sizeof m, "member:%09u", (unsigned)(i % 1000000000u));   /* 16 bytes */
        double score = (double)((i * 2654435761u) % 1000003u);
        double start = now_ns();
        gr_zset_set(z, (const uint8_t *)m, ml, score, &limits);
        ns[i] = now_ns() - start;
    }
    size_t bytes = gr_zset_allocated_bytes(z);
    printf("%s: %zu members of %s: %.2f allocated bytes/member (GR_MEM_ZSET %.2f)\n", gr_zset_encoding_name(z), n,
           packed ? "int32 decimals" : "16 bytes", (double)bytes / (double)n,
           (double)gr_mem_used_by(GR_MEM_ZSET) / (double)n);
    qsort(ns, n, sizeof *ns, compare_doubles);
    printf("insert ns: p50 %.0f p99 %.0f p99.9 %.0f p99.99 %.0f max %.0f\n", ns[n / 2], ns[n * 99 / 100],
           ns[n * 999 / 1000], ns[n * 9999 / 10000], ns[n - 1]);
    free(ns);
    gr_zset_free(z);
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 2 && strcmp(argv[1], "--measure") == 0)
        return measure((size_t)strtoull(argv[2], NULL, 10), argc > 3 && strcmp(argv[3], "packed") == 0);
    size_t steps = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : 200000;
    run(steps / 4, 40, (gr_zset_limits_t){16, 64, 0});     /* small sets across the compact threshold */
    run(steps / 4, 300, (gr_zset_limits_t){128, 10, 0});    /* long members convert early */
    run(steps / 2, POOL, (gr_zset_limits_t){128, 64, 0});   /* trees three levels deep */
    /* packed (zset-implementation packed): int32 members and float32 scores, converted to
     * standard by a member or score that does not fit or a lex bound, back by gr_zset_convert */
    run(steps / 4, 60, (gr_zset_limits_t){16, 64, 1});
    run(steps / 2, POOL, (gr_zset_limits_t){128, 64, 1});
    /* a large ordered load and unload: every leaf and node split, then emptied */
    gr_zset_t *z = gr_zset_new();
    gr_zset_limits_t limits = {128, 64, 0};
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
