/* test_array_rt.c — the RT sparse-array engine (engines/array/array_rt.c) against a reference
 * model: random sets, overwrites, deletes, range deletes and next/prev walks over indexes
 * clustered at leaf and node edges and near 2^64-2, on an unreserved array and on reserved
 * ones, with every invariant checked as it goes; reservations failing closed (the array and the
 * allocator untouched), check_writes agreeing with the writes, mlock, save/load, duplicate.
 *
 *     test_array_rt [steps]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engines/array/array_rt.h"
#include "tests/test_helpers.h"

#define CATEGORY GR_MEM_OTHER
#define CANDIDATES 1500

/* The model: a sorted list of candidate indexes, each set (with its value) or not. */
typedef struct model {
    uint64_t index[CANDIDATES];
    uint8_t *value[CANDIDATES];
    size_t length[CANDIDATES];
    int set[CANDIDATES];
    size_t n;
    uint64_t count;
} model_t;

static int compare_u64(const void *x, const void *y) {
    const uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

/* Candidates: leaf and node edges, the top of the index space, random ones; all <= max. */
static void model_init(model_t *m, uint64_t max_index) {
    memset(m, 0, sizeof(*m));
    const uint64_t edges[] = {0, 1, 255, 256, 257, 511, 512, 65535, 65536, 65537, 16777215, 16777216,
                              4294967295ull, 4294967296ull, (1ull << 56) - 1, 1ull << 56,
                              GR_ART_MAX_INDEX - 256, GR_ART_MAX_INDEX - 1, GR_ART_MAX_INDEX};
    for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++)
        if (edges[i] <= max_index) m->index[m->n++] = edges[i];
    const size_t target = max_index / 2 + 1 < CANDIDATES ? (size_t)(max_index / 2 + 1) : CANDIDATES;
    while (m->n < target) {
        uint64_t x;
        switch (below(4)) {
        case 0: x = below(3000); break;                          /* a dense start */
        case 1: x = 65000 + below(2000); break;                  /* across a node edge */
        case 2: x = max_index - below(600); break;               /* the top of the range */
        default: x = rnd() % (max_index == UINT64_MAX ? max_index : max_index + 1); break;
        }
        if (x > max_index) continue;
        int dup = 0;
        for (size_t i = 0; i < m->n && !dup; i++) dup = m->index[i] == x;
        if (!dup) m->index[m->n++] = x;
    }
    qsort(m->index, m->n, sizeof(uint64_t), compare_u64);
}

static void model_release(model_t *m) {
    for (size_t i = 0; i < m->n; i++) free(m->value[i]);
}

static size_t random_length(void) {
    switch (below(10)) {
    case 0: return 0;
    case 1: return 17 + below(600);
    case 2: return below(20) == 0 ? 1000 + below(3000) : 9;
    default: return 1 + below(16);
    }
}

static void fill(uint8_t *out, size_t length, uint64_t seed) {
    for (size_t i = 0; i < length; i++) out[i] = (uint8_t)test_mix64(seed + i);
}

static void model_store(model_t *m, size_t k, const uint8_t *value, size_t length) {
    free(m->value[k]);
    m->value[k] = malloc(length + 1);
    memcpy(m->value[k], value, length);
    m->length[k] = length;
    if (!m->set[k]) m->count++;
    m->set[k] = 1;
}

static void model_clear(model_t *m, size_t k) {
    if (m->set[k]) m->count--;
    m->set[k] = 0;
}

/* One random step on a and m; bounded: whether writes may hit a reservation bound. */
static void step(gr_art_t *a, model_t *m, int bounded) {
    const size_t k = below(m->n);
    const uint64_t index = m->index[k];
    uint8_t buffer[4096];
    switch (below(12)) {
    case 0: case 1: case 2: case 3: {   /* set */
        const size_t length = random_length();
        fill(buffer, length, rnd());
        const int64_t allocations = gr_mem_allocations();
        const int64_t used = gr_mem_used_total();
        const int predicted = gr_art_check_writes(a, 1, &index, 0, &length);
        int created = -1;
        const int status = gr_art_set(a, index, buffer, length, &created);
        CHECK(status == predicted, "check_writes said %d, set %d", predicted, status);
        if (status == GR_ART_OK) {
            CHECK(created == !m->set[k], "created %d for index %llu", created, (unsigned long long)index);
            model_store(m, k, buffer, length);
        } else {
            CHECK(bounded && status == GR_ART_BYTES_BOUND, "set failed with %d", status);
            CHECK(created == 0, "a failed set said created");
        }
        if (gr_art_is_reserved(a)) {
            CHECK(gr_mem_allocations() == allocations && gr_mem_used_total() == used,
                  "a reserved array allocated on set");
        }
        break;
    }
    case 4: case 5: {   /* get */
        const uint8_t *value;
        size_t length;
        const int found = gr_art_get(a, index, &value, &length);
        CHECK(found == m->set[k], "get %llu found %d", (unsigned long long)index, found);
        if (found && m->set[k])
            CHECK(length == m->length[k] && memcmp(value, m->value[k], length) == 0, "value of %llu differs",
                  (unsigned long long)index);
        break;
    }
    case 6: case 7: {   /* delete */
        const int removed = gr_art_delete(a, index);
        CHECK(removed == m->set[k], "delete %llu said %d", (unsigned long long)index, removed);
        model_clear(m, k);
        break;
    }
    case 8: {   /* delete a range of up to 20 candidates */
        const size_t span = below(20);
        const size_t last = k + span < m->n ? k + span : m->n - 1;
        uint64_t expected = 0;
        for (size_t i = k; i <= last; i++) { expected += (uint64_t)m->set[i]; model_clear(m, i); }
        const uint64_t removed = gr_art_delete_range(a, m->index[k], m->index[last]);
        CHECK(removed == expected, "range delete removed %llu, expected %llu", (unsigned long long)removed,
              (unsigned long long)expected);
        break;
    }
    case 9: {   /* next from around a candidate */
        const uint64_t from = index - (index > 0 && below(2) ? 1 : 0);
        size_t i = 0;
        while (i < m->n && (m->index[i] < from || !m->set[i])) i++;
        uint64_t found = 0;
        const int got = gr_art_next(a, from, &found);
        CHECK(got == (i < m->n), "next from %llu: %d", (unsigned long long)from, got);
        if (got && i < m->n) CHECK(found == m->index[i], "next from %llu found %llu, expected %llu",
                                   (unsigned long long)from, (unsigned long long)found, (unsigned long long)m->index[i]);
        break;
    }
    case 10: {   /* prev from around a candidate */
        const uint64_t at = index + (index < UINT64_MAX && below(2) ? 1 : 0);
        int i = (int)m->n - 1;
        while (i >= 0 && (m->index[i] > at || !m->set[i])) i--;
        uint64_t found = 0;
        const int got = gr_art_prev(a, at, &found);
        CHECK(got == (i >= 0), "prev at %llu: %d", (unsigned long long)at, got);
        if (got && i >= 0) CHECK(found == m->index[i], "prev at %llu found %llu, expected %llu",
                                 (unsigned long long)at, (unsigned long long)found, (unsigned long long)m->index[i]);
        break;
    }
    default:
        CHECK(gr_art_count(a) == m->count, "count %llu, model %llu", (unsigned long long)gr_art_count(a),
              (unsigned long long)m->count);
        break;
    }
}

static void run_model(gr_art_t *a, uint64_t max_index, size_t steps, int bounded, const char *label) {
    model_t *m = malloc(sizeof(model_t));
    model_init(m, max_index);
    const int failed_before = failed;
    for (size_t s = 0; s < steps && failed == failed_before; s++) {
        step(a, m, bounded);
        if (s % 1000 == 999 || s + 1 == steps) {
            const char *problem = gr_art_check(a);
            CHECK(problem == NULL, "%s after step %zu: %s", label, s, problem ? problem : "");
        }
    }
    CHECK(gr_art_count(a) == m->count, "%s: final count", label);
    /* a walk with next visits exactly the model's set indexes, in order */
    uint64_t at = 0, index;
    size_t i = 0;
    int walk_ok = 1;
    while (gr_art_next(a, at, &index)) {
        while (i < m->n && !m->set[i]) i++;
        if (i >= m->n || m->index[i] != index) { walk_ok = 0; break; }
        i++;
        if (index == GR_ART_MAX_INDEX) break;
        at = index + 1;
    }
    while (i < m->n && !m->set[i]) i++;
    CHECK(walk_ok && i == m->n, "%s: the walk differs from the model", label);
    /* save, load and duplicate give equal arrays of the same kind */
    gr_snapshot_writer_t w;
    gr_snapshot_writer_init(&w, CATEGORY);
    CHECK(gr_art_save(a, &w) == 0, "%s: save", label);
    gr_snapshot_reader_t r;
    gr_snapshot_reader_init(&r, w.data, w.length);
    gr_art_t *loaded = gr_art_load(CATEGORY, &r);
    gr_art_t *copy = gr_art_duplicate(a);
    CHECK(loaded && copy, "%s: load and duplicate", label);
    if (loaded && copy) {
        CHECK(gr_snapshot_reader_remaining(&r) == 0, "%s: load left bytes", label);
        CHECK(gr_art_is_reserved(loaded) == gr_art_is_reserved(a) && gr_art_is_reserved(copy) == gr_art_is_reserved(a),
              "%s: the engine kind changed", label);
        CHECK(gr_art_max_index(loaded) == gr_art_max_index(a), "%s: max index changed", label);
        int same = gr_art_count(loaded) == m->count && gr_art_count(copy) == m->count;
        for (size_t k = 0; k < m->n && same; k++) {
            const uint8_t *v1, *v2;
            size_t l1, l2;
            const int f1 = gr_art_get(loaded, m->index[k], &v1, &l1), f2 = gr_art_get(copy, m->index[k], &v2, &l2);
            same = f1 == m->set[k] && f2 == m->set[k] &&
                   (!m->set[k] || (l1 == m->length[k] && l2 == m->length[k] && !memcmp(v1, m->value[k], l1) &&
                                   !memcmp(v2, m->value[k], l2)));
        }
        CHECK(same, "%s: loaded or duplicated contents differ", label);
        CHECK(gr_art_check(loaded) == NULL && gr_art_check(copy) == NULL, "%s: loaded/copied invariants", label);
    }
    gr_art_free(loaded);
    gr_art_free(copy);
    /* a truncated body is refused */
    if (w.length > 2) {
        gr_snapshot_reader_init(&r, w.data, w.length - 1);
        gr_art_t *bad = gr_art_load(CATEGORY, &r);
        CHECK(bad == NULL, "%s: a truncated body loaded", label);
        gr_art_free(bad);
    }
    gr_snapshot_writer_release(&w);
    model_release(m);
    free(m);
}

static void test_unreserved_model(size_t steps) {
    gr_art_t *a = gr_art_new(CATEGORY);
    run_model(a, GR_ART_MAX_INDEX, steps, 0, "unreserved");
    /* emptying frees every leaf and node: only the struct and arena chunks stay */
    gr_art_delete_range(a, 0, GR_ART_MAX_INDEX);
    gr_art_stats_t st;
    gr_art_stats(a, &st);
    CHECK(st.count == 0 && st.leaves == 0 && st.nodes == 0, "emptied: %llu leaves %llu nodes",
          (unsigned long long)st.leaves, (unsigned long long)st.nodes);
    CHECK(gr_art_check(a) == NULL, "emptied invariants");
    gr_art_free(a);
}

static void test_reserved_model(size_t steps, uint64_t max_index, uint64_t budget, const char *label) {
    gr_art_t *a = NULL;
    const int status = gr_art_reserve(CATEGORY, max_index, budget, 0, &a);
    CHECK(status == GR_ART_OK && a, "%s: reserve %d", label, status);
    if (!a) return;
    gr_art_stats_t st;
    gr_art_stats(a, &st);
    CHECK(st.reserved == 1 && st.reserved_bytes >= budget + (max_index / 256 + 1) * 2048, "%s: reserved bytes", label);
    run_model(a, max_index, steps, 1, label);
    gr_art_free(a);
}

/* The reservation fails closed: past the index bound and the byte budget, with nothing
 * allocated, freed or changed. */
static void test_reserved_bounds(void) {
    gr_art_t *a = NULL;
    CHECK(gr_art_reserve(CATEGORY, 999, 16 * 100, 0, &a) == GR_ART_OK, "reserve 1000 x 16");
    uint8_t value[16];
    int created;
    for (uint64_t i = 0; i < 100; i++) {
        fill(value, 16, i);
        CHECK(gr_art_set(a, i, value, 16, &created) == GR_ART_OK && created, "set %llu", (unsigned long long)i);
    }
    const int64_t allocations = gr_mem_allocations(), used = gr_mem_used_total();
    CHECK(gr_art_set(a, 100, value, 16, &created) == GR_ART_BYTES_BOUND, "the 101st value passes the budget");
    CHECK(gr_art_set(a, 1000, value, 1, &created) == GR_ART_INDEX_BOUND, "index 1000 passes max 999");
    CHECK(gr_art_set(a, GR_ART_MAX_INDEX, value, 1, &created) == GR_ART_INDEX_BOUND, "2^64-2 passes max 999");
    CHECK(gr_art_set(a, 5, value, 17, &created) == GR_ART_BYTES_BOUND, "a bigger overwrite needs new bytes");
    CHECK(gr_art_set(a, 500, (const uint8_t *)"", 0, &created) == GR_ART_OK && created, "empty values take no bytes");
    CHECK(gr_art_set(a, 7, value, 9, &created) == GR_ART_OK && !created, "an overwrite of the same class fits");
    size_t lengths[3] = {16, 16, 16};
    const uint64_t idx[3] = {1, 2, 3};
    CHECK(gr_art_check_writes(a, 3, idx, 0, lengths) == GR_ART_OK, "overwrites in place pass the check");
    CHECK(gr_art_check_writes(a, 3, NULL, 98, lengths) == GR_ART_BYTES_BOUND, "new values past the budget fail the check");
    CHECK(gr_art_check_writes(a, 3, NULL, 998, lengths) == GR_ART_INDEX_BOUND, "a run past max fails the check");
    CHECK(gr_art_delete(a, 50) == 1, "delete frees 16 bytes");
    CHECK(gr_art_set(a, 100, value, 16, &created) == GR_ART_OK, "and the freed bytes take a new value");
    CHECK(gr_mem_allocations() == allocations && gr_mem_used_total() == used, "nothing was allocated or freed");
    CHECK(gr_art_count(a) == 101, "count %llu", (unsigned long long)gr_art_count(a));
    CHECK(gr_art_check(a) == NULL, "bounds invariants");
    /* deleting everything keeps the reservation */
    CHECK(gr_art_delete_range(a, 0, 999) == 101, "delete all");
    CHECK(gr_mem_allocations() == allocations && gr_mem_used_total() == used, "emptying a reserved array frees nothing");
    gr_art_free(a);
    /* impossible reservations allocate nothing */
    const int64_t before = gr_mem_allocations();
    CHECK(gr_art_reserve(CATEGORY, GR_ART_MAX_INDEX, 16, 0, &a) == GR_ART_TOO_LARGE && a == NULL, "the whole index space");
    CHECK(gr_art_reserve(CATEGORY, 10, GR_ART_MAX_VALUE_BYTES + 1, 0, &a) == GR_ART_TOO_LARGE, "over 32 GiB of values");
    CHECK(gr_mem_allocations() == before, "a refused reservation allocated");
}

/* An array reserved in place keeps its values, or, when they do not fit, stays as it was. */
static void test_reserve_into(void) {
    gr_art_t *a = gr_art_new(CATEGORY);
    uint8_t value[16];
    for (uint64_t i = 0; i < 600; i += 3) {
        fill(value, 16, i);
        gr_art_set(a, i, value, 16, NULL);
    }
    const int64_t allocations = gr_mem_allocations();
    CHECK(gr_art_reserve_into(a, 500, 1 << 16, 0) == GR_ART_INDEX_BOUND, "values past the new max index");
    CHECK(gr_art_reserve_into(a, 1000, 16 * 100, 0) == GR_ART_BYTES_BOUND, "values past the new budget");
    CHECK(!gr_art_is_reserved(a) && gr_art_count(a) == 200 && gr_mem_allocations() == allocations,
          "a failed reservation changed the array");
    CHECK(gr_art_reserve_into(a, 1000, 16 * 300, 0) == GR_ART_OK, "reserve in place");
    CHECK(gr_art_is_reserved(a) && gr_art_max_index(a) == 1000 && gr_art_count(a) == 200, "reserved with its values");
    int same = 1;
    for (uint64_t i = 0; i < 600 && same; i += 3) {
        const uint8_t *got;
        size_t length;
        fill(value, 16, i);
        same = gr_art_get(a, i, &got, &length) && length == 16 && !memcmp(got, value, 16);
    }
    CHECK(same, "values kept through reserve_into");
    CHECK(gr_art_check(a) == NULL, "reserve_into invariants");
    CHECK(gr_art_total_reserved_used_bytes() == 200 * 16, "reserved bytes in use %llu",
          (unsigned long long)gr_art_total_reserved_used_bytes());
    gr_art_free(a);
    CHECK(gr_art_total_reserved_used_bytes() == 0 && gr_art_total_reserved_bytes() == 0, "reserved totals back to 0");
}

static long vm_locked_kib(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "VmLck: %ld", &kib) == 1) break;
    if (f) fclose(f);
    return kib;
}

static void test_lock(void) {
    gr_art_t *a = NULL;
    const long before = vm_locked_kib();
    const int64_t allocations = gr_mem_allocations();
    const int status = gr_art_reserve(CATEGORY, 65535, 1 << 20, 1, &a);
    if (status == GR_ART_LOCK_FAILED) {
        CHECK(a == NULL && gr_mem_allocations() == allocations, "a refused lock leaves nothing allocated");
        printf("mlock refused (errno %d): lock checks skipped\n", gr_art_last_errno());
        return;
    }
    CHECK(status == GR_ART_OK, "reserve with lock: %d", status);
    gr_art_stats_t st;
    gr_art_stats(a, &st);
    CHECK(st.locked_bytes >= st.reserved_bytes && gr_art_total_locked_bytes() >= st.locked_bytes, "locked bytes %llu",
          (unsigned long long)st.locked_bytes);
#ifndef __SANITIZE_ADDRESS__   /* ASan's mlock interceptor locks nothing */
    const long during = vm_locked_kib();
    CHECK(during - before >= (long)(st.reserved_bytes / 1024) - 4, "VmLck grew by %ld KiB for %llu bytes", during - before,
          (unsigned long long)st.reserved_bytes);
#endif
    gr_art_free(a);
    CHECK(vm_locked_kib() <= before + 4, "VmLck back after free");
    CHECK(gr_art_total_locked_bytes() == 0 && gr_art_total_reserved_bytes() == 0, "totals back to 0");
}

static void test_sequential_appends(void) {
    gr_art_t *a = gr_art_new(CATEGORY);
    uint8_t value[16];
    int ok = 1;
    for (uint64_t i = 0; i < 200000 && ok; i++) {
        fill(value, 16, i);
        ok = gr_art_set(a, i, value, 16, NULL) == GR_ART_OK;
    }
    CHECK(ok && gr_art_count(a) == 200000, "200000 appends");
    gr_art_stats_t st;
    gr_art_stats(a, &st);
    CHECK(st.leaves == (200000 + 255) / 256, "leaves %llu", (unsigned long long)st.leaves);
    CHECK(st.allocated_bytes < 200000ull * 16 * 3, "allocated %llu bytes", (unsigned long long)st.allocated_bytes);
    uint64_t last = 0;
    CHECK(gr_art_prev(a, GR_ART_MAX_INDEX, &last) && last == 199999, "prev from the top is the last append");
    CHECK(gr_art_check(a) == NULL, "appends invariants");
    gr_art_free(a);
}

int main(int argc, char **argv) {
    const size_t steps = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : 100000;
    test_unreserved_model(steps);
    test_reserved_model(steps / 2, 70000, 64 * 1024, "reserved small budget");
    test_reserved_model(steps / 2, 200, 1 << 20, "reserved one leaf");
    test_reserved_model(steps / 2, 5000, 1 << 16, "reserved one node level");
    test_reserved_bounds();
    test_reserve_into();
    test_lock();
    test_sequential_appends();
    CHECK(gr_mem_used_by(CATEGORY) == 0, "every byte returned: %lld left", (long long)gr_mem_used_by(CATEGORY));
    return checks_report();
}
