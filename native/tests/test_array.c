/* test_array.c — the ARRAY value (engines/array/array.c) and its classic engine
 * (array_classic.c) against a reference model: every index ever written comes from a sorted
 * pool of candidates (a dense run from 0, a stride-16 run, a run around 2^20, random far
 * indexes and the last ones below 2^64-2), and the model keeps each candidate's value or
 * "hole". Random sets (values 0..80 bytes: inline and out-of-line), gets, deletes, range
 * deletes, next/last queries, count and length, copies and save/load round trips; slices
 * cross sparse <-> dense often. gr_arc_check verifies the engine's own invariants every few
 * steps. Arguments: steps (default 200000), engine kind (1 classic; another linked engine may
 * run the same model with its kind).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engines/array/array.h"
#include "engines/array/array_classic.h"
#include "test_helpers.h"

#define POOL 6000

typedef struct slot {
    uint64_t index;
    int set;
    uint8_t value[80];
    size_t length;
} slot_t;

static slot_t pool[POOL];
static size_t pool_count;
static uint8_t kind = GR_ARRAY_ENGINE_CLASSIC;

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void build_pool(void) {
    uint64_t raw[POOL];
    size_t n = 0;
    for (uint64_t i = 0; i < 2500; i++) raw[n++] = i;                        /* dense from 0 */
    for (uint64_t i = 0; i < 1500; i++) raw[n++] = 100000 + i * 16;          /* stride 16 */
    for (uint64_t i = 0; i < 800; i++) raw[n++] = (1ull << 20) - 400 + i;   /* across slices */
    for (uint64_t i = 0; i < 900; i++) raw[n++] = rnd() % (GR_ARRAY_INDEX_MAX - 2000);   /* far */
    for (uint64_t i = 0; i < 300; i++) raw[n++] = GR_ARRAY_INDEX_MAX - i;   /* the top */
    qsort(raw, n, sizeof raw[0], cmp_u64);
    for (size_t i = 0; i < n; i++)
        if (pool_count == 0 || pool[pool_count - 1].index != raw[i]) pool[pool_count++].index = raw[i];
}

static void random_value(slot_t *s) {
    size_t r = below(10);
    s->length = r < 6 ? 16 : r < 8 ? below(63) : below(81);
    for (size_t i = 0; i < s->length; i++) s->value[i] = (uint8_t)rnd();
}

static uint64_t model_count(void) {
    uint64_t n = 0;
    for (size_t i = 0; i < pool_count; i++) n += pool[i].set;
    return n;
}

static uint64_t model_length(void) {
    for (size_t i = pool_count; i-- > 0;)
        if (pool[i].set) return pool[i].index + 1;
    return 0;
}

static int same_as_model(const gr_array_t *a) {
    uint8_t scratch[GR_ARRAY_SCRATCH_BYTES];
    if (gr_array_count(a) != model_count() || gr_array_length(a) != model_length()) return 0;
    for (size_t i = 0; i < pool_count; i++) {
        const uint8_t *data;
        size_t length;
        int got = gr_array_get(a, pool[i].index, &data, &length, scratch);
        if (got != pool[i].set) return 0;
        if (got && (length != pool[i].length || memcmp(data, pool[i].value, length) != 0)) return 0;
    }
    return 1;
}

/* A query index: a candidate, a neighbour of one, or anywhere. */
static uint64_t query_index(void) {
    size_t r = below(4);
    uint64_t base = pool[below(pool_count)].index;
    if (r == 0) return rnd() % GR_ARRAY_INDEX_MAX;
    if (r == 1 && base < GR_ARRAY_INDEX_MAX) return base + 1;
    if (r == 2 && base > 0) return base - 1;
    return base;
}

static void check_next_last(const gr_array_t *a, uint64_t q) {
    uint64_t found = 0, expect = 0;
    int have = 0;
    for (size_t i = 0; i < pool_count; i++)
        if (pool[i].set && pool[i].index >= q) { have = 1; expect = pool[i].index; break; }
    int got = gr_array_next_at_or_after(a, q, &found);
    CHECK(got == have && (!have || found == expect), "next_at_or_after(%llu): got %d %llu, want %d %llu",
          (unsigned long long)q, got, (unsigned long long)found, have, (unsigned long long)expect);
    have = 0;
    for (size_t i = pool_count; i-- > 0;)
        if (pool[i].set && pool[i].index < q) { have = 1; expect = pool[i].index; break; }
    got = gr_array_last_before(a, q, &found);
    CHECK(got == have && (!have || found == expect), "last_before(%llu): got %d %llu, want %d %llu",
          (unsigned long long)q, got, (unsigned long long)found, have, (unsigned long long)expect);
}

typedef struct visit_state { size_t at; int ok; int reverse; } visit_state_t;

static int visit_check(void *context, uint64_t index, const uint8_t *data, size_t length) {
    visit_state_t *v = context;
    /* the next set candidate in the visit's direction */
    while (v->at < pool_count && !pool[v->at].set) v->at += v->reverse ? (size_t)-1 : 1;
    if (v->at >= pool_count || pool[v->at].index != index || pool[v->at].length != length ||
        memcmp(pool[v->at].value, data, length) != 0)
        v->ok = 0;
    v->at += v->reverse ? (size_t)-1 : 1;
    return 0;
}

static void check_visit(const gr_array_t *a) {
    size_t i = below(pool_count), j = below(pool_count);
    if (i > j) { size_t t = i; i = j; j = t; }
    uint64_t lo = pool[i].index, hi = pool[j].index, expect = 0;
    for (size_t k = i; k <= j; k++) expect += pool[k].set;
    int reverse = (int)below(2);
    visit_state_t v = {.at = reverse ? j : i, .ok = 1, .reverse = reverse};
    uint64_t visited = gr_array_visit(a, lo, hi, reverse, visit_check, &v);
    CHECK(v.ok && visited == expect, "visit [%llu, %llu] reverse %d: %llu visited, want %llu",
          (unsigned long long)lo, (unsigned long long)hi, reverse, (unsigned long long)visited,
          (unsigned long long)expect);
}

static gr_array_t *round_trip(const gr_array_t *a) {
    gr_snapshot_writer_t w;
    gr_snapshot_writer_init(&w, GR_MEM_OTHER);
    CHECK(gr_array_save(a, &w) == 0, "save");
    gr_snapshot_reader_t r;
    gr_snapshot_reader_init(&r, w.data, w.length);
    gr_array_t *loaded = gr_array_load(&r);
    CHECK(loaded && gr_snapshot_reader_remaining(&r) == 0, "load: %s", r.error ? r.error : "ok");
    gr_snapshot_writer_release(&w);
    return loaded;
}

static void model_run(size_t steps) {
    gr_array_t *a = gr_array_new(kind);
    CHECK(a != NULL, "new");
    if (!a) return;
    uint8_t scratch[GR_ARRAY_SCRATCH_BYTES];
    for (size_t step = 0; step < steps; step++) {
        size_t r = below(100);
        if (r < 50) {   /* set: biased to a region so slices fill up */
            size_t i = below(3) ? (size_t)(rnd() % 4000) % pool_count : below(pool_count);
            slot_t *s = &pool[i];
            int was = s->set;
            random_value(s);
            int got = gr_array_set(a, s->index, s->value, s->length);
            s->set = 1;
            CHECK(got == !was, "set %llu: %d, was %d", (unsigned long long)s->index, got, was);
        } else if (r < 72) {   /* delete */
            slot_t *s = &pool[below(3) ? (size_t)(rnd() % 4000) % pool_count : below(pool_count)];
            int got = gr_array_delete(a, s->index);
            CHECK(got == s->set, "delete %llu: %d, was %d", (unsigned long long)s->index, got, s->set);
            s->set = 0;
        } else if (r < 74) {   /* delete a range */
            size_t i = below(pool_count), len = below(5) ? below(40) : below(pool_count);
            size_t j = i + len < pool_count ? i + len : pool_count - 1;
            uint64_t lo = pool[i].index, hi = pool[j].index, expect = 0;
            if (below(2) && i > 0 && pool[i - 1].index < lo - 1) lo--;   /* a hole below, not a candidate */
            for (size_t k = i; k <= j; k++) { expect += pool[k].set; pool[k].set = 0; }
            uint64_t got = gr_array_delete_range(a, lo, hi);
            CHECK(got == expect, "delete_range [%llu, %llu]: %llu, want %llu", (unsigned long long)lo,
                  (unsigned long long)hi, (unsigned long long)got, (unsigned long long)expect);
        } else if (r < 88) {   /* get */
            slot_t *s = &pool[below(pool_count)];
            const uint8_t *data;
            size_t length;
            int got = gr_array_get(a, s->index, &data, &length, scratch);
            CHECK(got == s->set && (!got || (length == s->length && memcmp(data, s->value, length) == 0)),
                  "get %llu", (unsigned long long)s->index);
        } else if (r < 96) {
            check_next_last(a, query_index());
        } else if (r < 98) {
            check_visit(a);
        } else {
            CHECK(gr_array_count(a) == model_count() && gr_array_length(a) == model_length(),
                  "count %llu length %llu", (unsigned long long)gr_array_count(a), (unsigned long long)gr_array_length(a));
        }
        if (kind == GR_ARRAY_ENGINE_CLASSIC && step % 997 == 0)
            CHECK(gr_arc_check(a->impl) == 0, "classic invariants at step %zu", step);
        if (step % 20011 == 0 && gr_array_count(a)) {
            gr_array_t *copy = gr_array_duplicate(a);
            CHECK(copy && same_as_model(copy), "duplicate at step %zu", step);
            gr_array_free(copy);
            gr_array_t *loaded = round_trip(a);
            CHECK(loaded && same_as_model(loaded) && gr_array_engine_kind(loaded) == kind, "round trip at step %zu", step);
            gr_array_free(loaded);
        }
    }
    CHECK(same_as_model(a), "final state");
    if (kind == GR_ARRAY_ENGINE_CLASSIC) CHECK(gr_arc_check(a->impl) == 0, "final invariants");
    /* empty it: nothing left allocated but the value itself */
    gr_array_delete_range(a, 0, GR_ARRAY_INDEX_MAX);
    for (size_t i = 0; i < pool_count; i++) pool[i].set = 0;
    CHECK(gr_array_count(a) == 0 && gr_array_length(a) == 0, "emptied");
    gr_array_free(a);
}

/* Slices convert: a dense run turns its slice dense, deleting most turns it back. */
static void conversions(void) {
    if (kind != GR_ARRAY_ENGINE_CLASSIC) return;
    gr_array_t *a = gr_array_new(kind);
    gr_arc_stats_t st;
    uint8_t v[16] = "0123456789abcdef";
    for (uint64_t i = 0; i < 4096; i += 16) gr_array_set(a, i, v, 16);
    gr_arc_stats(a->impl, &st);
    CHECK(st.slices == 4 && st.sparse_slices == 4 && st.dense_slices == 0, "stride 16 is sparse: %llu sparse",
          (unsigned long long)st.sparse_slices);
    for (uint64_t i = 0; i < 1024; i++) gr_array_set(a, i, v, 16);
    gr_arc_stats(a->impl, &st);
    CHECK(st.dense_slices == 1 && st.sparse_slices == 3, "a full slice is dense");
    for (uint64_t i = 0; i < 1000; i++) gr_array_delete(a, i);
    gr_arc_stats(a->impl, &st);
    CHECK(st.dense_slices == 0 && st.sparse_slices == 4, "an emptied slice is sparse again");
    CHECK(gr_arc_check(a->impl) == 0 && gr_array_count(a) == 24 + 192 && gr_array_length(a) == 4081, "counts after");
    /* a big value and an empty one */
    uint8_t big[5000];
    memset(big, 'x', sizeof big);
    gr_array_set(a, GR_ARRAY_INDEX_MAX, big, sizeof big);
    gr_array_set(a, 7, (const uint8_t *)"", 0);
    const uint8_t *data;
    size_t length;
    uint8_t scratch[GR_ARRAY_SCRATCH_BYTES];
    CHECK(gr_array_get(a, GR_ARRAY_INDEX_MAX, &data, &length, scratch) == 1 && length == 5000 && data[4999] == 'x',
          "a big value at 2^64-2");
    CHECK(gr_array_length(a) == UINT64_MAX, "length is 2^64-1");
    CHECK(gr_array_get(a, 7, &data, &length, scratch) == 1 && length == 0, "an empty value is set");
    gr_array_t *copy = gr_array_duplicate(a);
    CHECK(copy && gr_array_count(copy) == gr_array_count(a) && gr_arc_check(copy->impl) == 0, "copy");
    gr_array_free(copy);
    CHECK(gr_array_delete(a, GR_ARRAY_INDEX_MAX) == 1 && gr_array_length(a) == 4081, "length falls back");
    gr_array_free(a);
}

/* Memory: 16-byte values, dense (stride 1) and sparse (stride 16), bytes per value. */
static void memory(size_t n) {
    if (kind != GR_ARRAY_ENGINE_CLASSIC) return;
    uint8_t v[16] = "0123456789abcdef";
    for (int stride = 1; stride <= 16; stride += 15) {
        int64_t before = gr_mem_used_by(GR_MEM_ARRAY);
        gr_array_t *a = gr_array_new(kind);
        for (uint64_t i = 0; i < n; i++) gr_array_set(a, i * (uint64_t)stride, v, 16);
        double per = (double)(gr_mem_used_by(GR_MEM_ARRAY) - before) / (double)n;
        printf("classic stride %d: %.2f allocated bytes per 16-byte value\n", stride, per);
        CHECK(per < (stride == 1 ? 23.0 : 27.0), "stride %d: %.2f bytes per value", stride, per);
        gr_array_free(a);
    }
}

int main(int argc, char **argv) {
    size_t steps = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : 200000;
    if (argc > 2) kind = (uint8_t)atoi(argv[2]);
    build_pool();
    conversions();
    memory(200000);
    model_run(steps);
    CHECK(gr_mem_used_by(GR_MEM_ARRAY) == 0, "nothing left allocated: %lld bytes",
          (long long)gr_mem_used_by(GR_MEM_ARRAY));
    return checks_report();
}
