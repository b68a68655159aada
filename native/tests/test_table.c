/* test_table.c — the table engine (engines/table/table.c), in C so that it runs under
 * ASan/UBSan.
 *
 * A random differential run against a plain model (an array indexed by key id) for both
 * shapes (keys alone, keys with values) through repeated grow/shrink cycles, with empty,
 * binary and block-sized keys and values, checking every reply, the count, the allocated
 * bytes against the allocator's own count, full iterations, full scans and duplicates;
 * SCAN visiting every entry that stays present while other entries come and go, values
 * change size and the index resizes between calls; random draws being uniform, also while
 * the index is resizing; free returning every byte.
 *
 * Usage: test_table [operations [seed]]
 *        test_table --measure N     bytes per entry and ns per set/get at N entries, for a
 *                                   16-byte key alone and a 16-byte key with a 16-byte value,
 *                                   and the keyspace's chained table beside them
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "engines/keyspace.h"
#include "engines/table/table.h"
#include "tests/test_helpers.h"

#define CATEGORY ((gr_mem_category_t)(GR_MEM_FIRST_FREE + 3))

/* ---- keys: id 0 is the empty key; others are 4 little-endian id bytes (NULs included) and
 * filler, (id % 23) bytes of it, or more than a block's bytes for one id in 97 ---- */

#define KEY_MAX 4400
typedef struct test_key { uint8_t bytes[KEY_MAX]; size_t length; } test_key_t;

static void make_key(uint32_t id, test_key_t *k) {
    k->length = 0;
    if (id == 0) return;
    for (int i = 0; i < 4; i++) k->bytes[i] = (uint8_t)(id >> (8 * i));
    k->length = 4 + (id % 97 == 5 ? GR_TABLE_BLOCK_BYTES + 100 + id % 50 : id % 23);
    for (size_t i = 4; i < k->length; i++) k->bytes[i] = (uint8_t)(0xa5 ^ id ^ i);
}

static uint32_t key_id(gr_bytes_t key) {
    if (key.length == 0) return 0;
    uint32_t id = 0;
    for (int i = 0; i < 4; i++) id |= (uint32_t)key.data[i] << (8 * i);
    return id;
}

/* ---- the model: present flag and value per id ---- */

typedef struct model {
    uint32_t universe;
    uint8_t *present;
    uint8_t **values;
    size_t *lengths;
    size_t count;
} model_t;

static void model_init(model_t *m, uint32_t universe) {
    m->universe = universe;
    m->present = calloc(universe, 1);
    m->values = calloc(universe, sizeof *m->values);
    m->lengths = calloc(universe, sizeof *m->lengths);
    m->count = 0;
}

static void model_free(model_t *m) {
    for (uint32_t i = 0; i < m->universe; i++) free(m->values[i]);
    free(m->present);
    free(m->values);
    free(m->lengths);
}

static void model_set(model_t *m, uint32_t id, const uint8_t *value, size_t length) {
    if (!m->present[id]) m->count++;
    m->present[id] = 1;
    free(m->values[id]);
    m->values[id] = malloc(length ? length : 1);
    if (length) memcpy(m->values[id], value, length);
    m->lengths[id] = length;
}

static void model_delete(model_t *m, uint32_t id) {
    if (m->present[id]) m->count--;
    m->present[id] = 0;
}

static size_t random_value(uint8_t *buffer) {
    size_t roll = below(100), length;
    if (roll < 10) length = 0;
    else if (roll < 75) length = 1 + below(20);
    else if (roll < 97) length = 20 + below(200);
    else length = 1000 + below(GR_TABLE_BLOCK_BYTES + 1000);   /* some get a block of their own */
    for (size_t i = 0; i < length; i++) buffer[i] = (uint8_t)rnd();
    return length;
}

static int value_is(const model_t *m, uint32_t id, gr_bytes_t value, int with_values) {
    if (!with_values) return value.length == 0;
    return value.length == m->lengths[id] && (value.length == 0 || memcmp(value.data, m->values[id], value.length) == 0);
}

/* ---- whole-table checks ---- */

typedef struct visit_log {
    const model_t *model;
    int with_values;
    uint32_t *seen;   /* visits per id */
    size_t visits;
    size_t wrong;     /* visits of an absent id or with a wrong value */
} visit_log_t;

static void log_visit(void *context, gr_bytes_t key, gr_bytes_t value) {
    visit_log_t *log = context;
    uint32_t id = key_id(key);
    log->visits++;
    if (id >= log->model->universe || !log->model->present[id] || !value_is(log->model, id, value, log->with_values)) {
        log->wrong++;
        return;
    }
    log->seen[id]++;
}

static void check_whole_table(const gr_table_t *t, const model_t *m, int with_values, const char *what) {
    visit_log_t log = {m, with_values, calloc(m->universe, sizeof(uint32_t)), 0, 0};
    gr_table_iter_t it;
    gr_bytes_t key, value;
    gr_table_iter_start(t, &it);
    while (gr_table_iter_next(&it, &key, &value)) log_visit(&log, key, value);
    size_t once = 0;
    for (uint32_t i = 0; i < m->universe; i++) once += m->present[i] && log.seen[i] == 1;
    CHECK(log.wrong == 0 && log.visits == m->count && once == m->count,
          "%s: iteration visited %zu (%zu wrong, %zu exactly once) of %zu", what, log.visits, log.wrong, once, m->count);

    memset(log.seen, 0, m->universe * sizeof(uint32_t));
    log.visits = log.wrong = 0;
    uint64_t cursor = 0;
    size_t calls = 0;
    do {
        cursor = gr_table_scan(t, cursor, 1 + below(40), log_visit, &log);
        calls++;
    } while (cursor != 0 && calls < 10000000);
    once = 0;
    for (uint32_t i = 0; i < m->universe; i++) once += m->present[i] && log.seen[i] == 1;
    CHECK(log.wrong == 0 && log.visits == m->count && once == m->count,
          "%s: a quiet scan visited %zu (%zu wrong, %zu exactly once) of %zu", what, log.visits, log.wrong, once, m->count);
    free(log.seen);
}

/* ---- the differential run ---- */

static void test_random_operations_agree_with_a_plain_model(int with_values, size_t operations) {
    const uint32_t universe = 6000;
    model_t m;
    model_init(&m, universe);
    int64_t before = gr_mem_used_by(CATEGORY);
    gr_table_t *t = gr_table_new(with_values, CATEGORY);
    static uint8_t value[2 * GR_TABLE_BLOCK_BYTES + 1000];
    test_key_t k;
    size_t mismatches = 0, byte_mismatches = 0;
    /* phases: the live key range and the add/delete balance change, so the table grows
     * from empty to thousands and shrinks back, many times */
    uint32_t range = 16;
    int growing = 1;
    for (size_t op = 0; op < operations; op++) {
        if (op % 2000 == 0) {
            range = (uint32_t)(16 + below(universe - 16));
            growing = (int)below(2);
        }
        uint32_t id = (uint32_t)below(range);
        make_key(id, &k);
        size_t roll = below(100);
        size_t add_bias = growing ? 60 : 25;
        if (roll < add_bias) {
            if (with_values && below(2)) {
                size_t length = random_value(value);
                int expected = m.present[id] ? 0 : 1;
                int got = gr_table_set(t, k.bytes, k.length, value, length);
                if (got != expected) mismatches++;
                model_set(&m, id, value, length);
            } else {
                int expected = m.present[id] ? 0 : 1;
                int got = gr_table_add(t, k.bytes, k.length);
                if (got != expected) mismatches++;
                if (expected) model_set(&m, id, NULL, 0);
            }
        } else if (roll < add_bias + 30) {
            int expected = m.present[id];
            if (gr_table_delete(t, k.bytes, k.length) != expected) mismatches++;
            model_delete(&m, id);
        } else if (roll < 98) {
            gr_bytes_t got;
            int found = gr_table_get(t, k.bytes, k.length, &got);
            if (found != m.present[id] || (found && !value_is(&m, id, got, with_values))) mismatches++;
        } else {
            gr_bytes_t key, got;
            int found = gr_table_random(t, rnd(), &key, &got);
            uint32_t drawn = found ? key_id(key) : 0;
            if (found != (m.count > 0) ||
                (found && (drawn >= universe || !m.present[drawn] || !value_is(&m, drawn, got, with_values))))
                mismatches++;
        }
        if (gr_table_count(t) != m.count) mismatches++;
        if ((int64_t)gr_table_allocated_bytes(t) != gr_mem_used_by(CATEGORY) - before) byte_mismatches++;
        if (op % 25000 == 24999) {
            check_whole_table(t, &m, with_values, "table");
            gr_table_t *copy = gr_table_duplicate(t);
            CHECK(copy && gr_table_allocated_bytes(t) + gr_table_allocated_bytes(copy) ==
                              (size_t)(gr_mem_used_by(CATEGORY) - before),
                  "a duplicate's bytes are its own");
            if (copy) {
                check_whole_table(copy, &m, with_values, "duplicate");
                /* the copy is independent: writing it leaves the original alone */
                make_key(1, &k);
                gr_table_delete(copy, k.bytes, k.length);
                gr_table_add(copy, (const uint8_t *)"only-in-copy", 12);
                CHECK(gr_table_get(t, (const uint8_t *)"only-in-copy", 12, NULL) == 0 &&
                      gr_table_get(t, k.bytes, k.length, NULL) == m.present[1], "the duplicate is a separate table");
                gr_table_free(copy);
            }
        }
    }
    CHECK(mismatches == 0, "with_values=%d: %zu replies disagreed with the model over %zu operations",
          with_values, mismatches, operations);
    CHECK(byte_mismatches == 0, "with_values=%d: allocated bytes disagreed with the allocator %zu times",
          with_values, byte_mismatches);
    check_whole_table(t, &m, with_values, "table at the end");
    gr_table_free(t);
    CHECK(gr_mem_used_by(CATEGORY) == before, "free returns every byte (%lld left)",
          (long long)(gr_mem_used_by(CATEGORY) - before));
    model_free(&m);
}

/* ---- SCAN across writes ---- */

static void test_scan_sees_every_entry_present_throughout_while_the_table_resizes(int with_values) {
    const uint32_t stable = 3000, volatile_base = 10000, universe = 60000;
    model_t m;
    model_init(&m, universe);
    gr_table_t *t = gr_table_new(with_values, CATEGORY);
    static uint8_t value[2 * GR_TABLE_BLOCK_BYTES + 1000];
    test_key_t k;
    for (int round = 0; round < 6; round++) {
        for (uint32_t id = 1; id <= stable; id++) {
            make_key(id, &k);
            size_t length = random_value(value);
            gr_table_set(t, k.bytes, k.length, value, length);
            model_set(&m, id, with_values ? value : NULL, with_values ? length : 0);
        }
        visit_log_t log = {&m, with_values, calloc(universe, sizeof(uint32_t)), 0, 0};
        uint64_t cursor = 0;
        size_t calls = 0;
        int phase_grow = 1;
        do {
            cursor = gr_table_scan(t, cursor, 1 + below(20), log_visit, &log);
            calls++;
            /* between calls: volatile entries come and go in bursts (grow, then shrink the
             * index several times over), and stable values change size (entries move) */
            if (calls % 40 == 0) phase_grow = !phase_grow;
            for (int i = 0; i < 300; i++) {
                uint32_t id = volatile_base + (uint32_t)below(universe - volatile_base);
                make_key(id, &k);
                if (phase_grow) { gr_table_add(t, k.bytes, k.length); model_set(&m, id, NULL, 0); }
                else { gr_table_delete(t, k.bytes, k.length); model_delete(&m, id); }
            }
            if (with_values) {
                for (int i = 0; i < 20; i++) {
                    uint32_t id = 1 + (uint32_t)below(stable);
                    make_key(id, &k);
                    size_t length = random_value(value);
                    gr_table_set(t, k.bytes, k.length, value, length);
                    model_set(&m, id, value, length);
                }
            }
        } while (cursor != 0 && calls < 1000000);
        size_t missed = 0, twice = 0;
        for (uint32_t id = 1; id <= stable; id++) { missed += log.seen[id] == 0; twice += log.seen[id] > 1; }
        CHECK(cursor == 0 && missed == 0 && twice == 0,
              "round %d: the scan missed %zu and repeated %zu of %u stable entries (%zu calls)",
              round, missed, twice, stable, calls);
        CHECK(log.wrong == 0, "round %d: the scan visited %zu absent entries", round, log.wrong);
        free(log.seen);
        /* empty the volatile part for the next round */
        for (uint32_t id = volatile_base; id < universe; id++) {
            if (!m.present[id]) continue;
            make_key(id, &k);
            gr_table_delete(t, k.bytes, k.length);
            model_delete(&m, id);
        }
    }
    check_whole_table(t, &m, with_values, "after the scans");
    gr_table_free(t);
    model_free(&m);
}

/* ---- random ---- */

static void check_uniform(gr_table_t *t, uint32_t first_id, uint32_t n, const char *what) {
    size_t draws = (size_t)n * 4000;
    uint32_t *hits = calloc(n, sizeof *hits);
    size_t outside = 0;
    for (size_t i = 0; i < draws; i++) {
        gr_bytes_t key;
        if (!gr_table_random(t, rnd(), &key, NULL)) { outside++; continue; }
        uint32_t id = key_id(key);
        if (id < first_id || id >= first_id + n) outside++;
        else hits[id - first_id]++;
    }
    uint32_t low = UINT32_MAX, high = 0;
    for (uint32_t i = 0; i < n; i++) { if (hits[i] < low) low = hits[i]; if (hits[i] > high) high = hits[i]; }
    /* 4000 expected per entry: sd ~63; 3400..4600 is over 9 sd */
    CHECK(outside == 0 && low > 3400 && high < 4600, "%s: draws per entry ranged %u..%u (4000 expected), %zu outside",
          what, low, high, outside);
    free(hits);
}

static void test_random_draws_are_uniform_also_while_the_index_resizes(void) {
    gr_table_t *t = gr_table_new(0, CATEGORY);
    test_key_t k;
    for (uint32_t id = 1; id <= 50; id++) { make_key(id, &k); gr_table_add(t, k.bytes, k.length); }
    check_uniform(t, 1, 50, "a quiet table");
    /* grow past a resize threshold and stop right after it: the old index still holds most */
    gr_table_t *u = gr_table_new(0, CATEGORY);
    for (uint32_t id = 1; id <= 200; id++) { make_key(id, &k); gr_table_add(u, k.bytes, k.length); }
    gr_bytes_t probe;
    size_t before = gr_table_allocated_bytes(u);
    uint32_t id = 201;
    for (; id < 2000; id++) {
        make_key(id, &k);
        gr_table_add(u, k.bytes, k.length);
        if (gr_table_allocated_bytes(u) > before + 1000) break;   /* a new index was allocated */
        before = gr_table_allocated_bytes(u);
    }
    CHECK(gr_table_random(u, 1, &probe, NULL) == 1, "a resizing table draws");
    check_uniform(u, 1, id, "a table whose index is resizing");
    gr_table_free(t);
    gr_table_free(u);
    gr_table_t *empty = gr_table_new(1, CATEGORY);
    CHECK(gr_table_random(empty, 7, &probe, NULL) == 0, "an empty table has no random entry");
    gr_table_free(empty);
}

/* ---- small cases ---- */

static void count_visit(void *context, gr_bytes_t key, gr_bytes_t value) {
    (void)key;
    (void)value;
    (*(size_t *)context)++;
}

static void test_values_keys_and_replies_follow_the_contract(void) {
    gr_table_t *t = gr_table_new(1, CATEGORY);
    gr_bytes_t v;
    CHECK(gr_table_set(t, (const uint8_t *)"f", 1, (const uint8_t *)"one", 3) == 1, "set adds");
    CHECK(gr_table_set(t, (const uint8_t *)"f", 1, (const uint8_t *)"two", 3) == 0, "set replaces (same size)");
    CHECK(gr_table_get(t, (const uint8_t *)"f", 1, &v) == 1 && v.length == 3 && memcmp(v.data, "two", 3) == 0,
          "the replaced value is read back");
    CHECK(gr_table_set(t, (const uint8_t *)"f", 1, (const uint8_t *)"three", 5) == 0, "set replaces (new size)");
    CHECK(gr_table_get(t, (const uint8_t *)"f", 1, &v) == 1 && v.length == 5 && memcmp(v.data, "three", 5) == 0,
          "a longer value is read back");
    CHECK(gr_table_add(t, (const uint8_t *)"f", 1) == 0, "add of a present key is 0 and keeps the value");
    CHECK(gr_table_get(t, (const uint8_t *)"f", 1, &v) == 1 && v.length == 5, "add kept the value");
    CHECK(gr_table_add(t, (const uint8_t *)"", 0) == 1 && gr_table_get(t, (const uint8_t *)"", 0, &v) == 1 &&
          v.length == 0, "the empty key is a key, with an empty value");
    CHECK(gr_table_get(t, (const uint8_t *)"f\0", 2, NULL) == 0, "keys are binary: f and f\\0 differ");
    CHECK(gr_table_delete(t, (const uint8_t *)"f", 1) == 1 && gr_table_delete(t, (const uint8_t *)"f", 1) == 0,
          "delete: 1 removed, then 0 absent");
    CHECK(gr_table_count(t) == 1, "one entry left");
    gr_table_free(t);

    gr_table_t *s = gr_table_new(0, CATEGORY);
    CHECK(gr_table_set(s, (const uint8_t *)"m", 1, (const uint8_t *)"ignored", 7) == 1 &&
          gr_table_get(s, (const uint8_t *)"m", 1, &v) == 1 && v.length == 0,
          "a table without values ignores a value");
    gr_table_reserve(s, 100000);
    CHECK(gr_table_get(s, (const uint8_t *)"m", 1, NULL) == 1, "reserve keeps the entries");
    size_t reserved = gr_table_allocated_bytes(s);
    char name[32];
    for (int i = 0; i < 50000; i++) {
        int n = snprintf(name, sizeof name, "member:%d", i);
        gr_table_add(s, (const uint8_t *)name, (size_t)n);
    }
    CHECK(gr_table_count(s) == 50001 && gr_table_allocated_bytes(s) - reserved < 50001 * 20,
          "after reserve, adds cost their entries' bytes only");
    size_t visits = 0;
    uint64_t next = gr_table_scan(s, 0, SIZE_MAX, count_visit, &visits);
    CHECK(next == 0 && visits == 50001, "SCAN with a huge COUNT visits everything in one call (%zu)", visits);
    gr_table_free(s);
}

/* gr_table_add_many (snapshot loads): the same entries as one add at a time, across index
 * resizes; a repeated key (against the table or inside the batch) is -2 with the keys before it
 * added. */
static void test_add_many_adds_what_single_adds_add_and_refuses_a_repeat(int with_values) {
    gr_table_t *t = gr_table_new(with_values, CATEGORY);
    enum { N = 20000 };
    static char names[N][24], datas[N][24];
    static gr_bytes_t keys[N], values[N];
    for (int i = 0; i < N; i++) {
        keys[i] = (gr_bytes_t){(const uint8_t *)names[i], (uint32_t)snprintf(names[i], sizeof names[i], "field:%d", i)};
        values[i] = (gr_bytes_t){(const uint8_t *)datas[i], (uint32_t)snprintf(datas[i], sizeof datas[i], "v%d", i * 7)};
    }
    int ok = 1;
    for (int done = 0; done < N; done += 999) {   /* batches that end mid-way through ADD_MANY's own */
        size_t n = N - done < 999 ? (size_t)(N - done) : 999;
        ok &= gr_table_add_many(t, keys + done, values, n) == (int)n;
    }
    CHECK(ok && gr_table_count(t) == N, "add_many added every key (%zu)", gr_table_count(t));
    gr_bytes_t v;
    for (int i = 0; i < N && ok; i++) {
        ok &= gr_table_get(t, keys[i].data, keys[i].length, &v) == 1;
        if (with_values) ok &= v.length == values[i % 999].length && memcmp(v.data, values[i % 999].data, v.length) == 0;
    }
    CHECK(ok, "every key reads back%s", with_values ? " with its value" : "");
    gr_bytes_t repeat[3] = {{(const uint8_t *)"new:1", 5}, {(const uint8_t *)"field:5", 7}, {(const uint8_t *)"new:2", 5}};
    CHECK(gr_table_add_many(t, repeat, values, 3) == -2 && gr_table_count(t) == N + 1 &&
          gr_table_get(t, (const uint8_t *)"new:1", 5, NULL) == 1 && gr_table_get(t, (const uint8_t *)"new:2", 5, NULL) == 0,
          "a key already there: -2, the keys before it added, none after");
    gr_bytes_t twice[2] = {{(const uint8_t *)"x", 1}, {(const uint8_t *)"x", 1}};
    CHECK(gr_table_add_many(t, twice, values, 2) == -2 && gr_table_count(t) == N + 2, "a key twice in one batch: -2");
    gr_table_free(t);
}

/* SPOP's pattern (delete the key gr_table_random handed out) and writes whose bytes come
 * from the table itself, under ASan: nothing is read after it moved. */
static void test_keys_and_values_may_point_into_the_table(void) {
    gr_table_t *t = gr_table_new(1, CATEGORY);
    test_key_t k;
    static uint8_t value[2 * GR_TABLE_BLOCK_BYTES + 1000];
    for (uint32_t id = 1; id <= 3000; id++) {
        make_key(id, &k);
        size_t length = random_value(value);
        gr_table_set(t, k.bytes, k.length, value, length);
    }
    size_t wrong = 0;
    for (int i = 0; i < 3000; i++) {
        gr_bytes_t key, got;
        gr_table_random(t, rnd(), &key, &got);
        /* a new entry whose key and value are another entry's key */
        uint8_t copy[KEY_MAX + 1];
        memcpy(copy, key.data, key.length);
        copy[key.length] = 0xff;
        size_t length = key.length;
        gr_table_set(t, copy, length + 1, key.data, key.length);
        gr_table_get(t, copy, length + 1, &got);
        if (got.length != length || memcmp(got.data, copy, length) != 0) wrong++;
    }
    while (gr_table_count(t) > 0) {
        gr_bytes_t key;
        gr_table_random(t, rnd(), &key, NULL);
        uint8_t copy[KEY_MAX + 1];
        size_t length = key.length;
        memcpy(copy, key.data, length);
        size_t before = gr_table_count(t);
        if (gr_table_delete(t, key.data, key.length) != 1 || gr_table_count(t) != before - 1 ||
            gr_table_get(t, copy, length, NULL) != 0)
            wrong++;
    }
    CHECK(wrong == 0, "%zu writes from the table's own bytes went wrong", wrong);
    CHECK(gr_table_allocated_bytes(t) < 200, "an emptied table returns its blocks and index (%zu bytes left)",
          gr_table_allocated_bytes(t));
    gr_table_free(t);
}

/* ---- measure: bytes per entry and ns per op ---- */

/* 8 random-looking bytes and the 8 bytes of i: 16 bytes, distinct for every i */
static void make_measure_key(uint8_t key[16], uint64_t i) {
    uint64_t x = test_mix64(i);
    memcpy(key, &x, 8);
    memcpy(key + 8, &i, 8);
}

static void measure(size_t n) {
    for (int with_values = 0; with_values <= 1; with_values++) {
        gr_table_t *t = gr_table_new(with_values, CATEGORY);
        uint8_t key[16], value[16];
        memset(value, 'v', sizeof value);
        double start = now_ns();
        for (size_t i = 0; i < n; i++) {
            make_measure_key(key, i);
            gr_table_set(t, key, 16, value, 16);
        }
        double set_ns = (now_ns() - start) / (double)n;
        start = now_ns();
        size_t found = 0;
        for (size_t i = 0; i < n; i++) {
            size_t j = (size_t)test_mix64(i + 77) % n;
            make_measure_key(key, j);
            found += (size_t)gr_table_get(t, key, 16, NULL);
        }
        double get_ns = (now_ns() - start) / (double)n;
        printf("%s: %zu entries, %.2f bytes/entry, set %.0f ns/op, get %.0f ns/op (found %zu)\n",
               with_values ? "16-byte key + 16-byte value" : "16-byte key alone", gr_table_count(t),
               (double)gr_table_allocated_bytes(t) / (double)gr_table_count(t), set_ns, get_ns, found);
        gr_table_free(t);
    }
    /* side by side: the keyspace's chained table (Redis's dict layout), keys alone */
    gr_keyspace_t *ks = gr_ks_new(NULL, NULL, 1);
    int64_t before = gr_mem_used_by(GR_MEM_KEYSPACE);
    uint8_t key[16];
    double start = now_ns();
    for (size_t i = 0; i < n; i++) {
        make_measure_key(key, i);
        gr_ks_add(ks, key, 16, 0, NULL);
    }
    double set_ns = (now_ns() - start) / (double)n;
    start = now_ns();
    size_t found = 0;
    for (size_t i = 0; i < n; i++) {
        make_measure_key(key, (size_t)test_mix64(i + 77) % n);
        found += gr_ks_find(ks, key, 16) != NULL;
    }
    double get_ns = (now_ns() - start) / (double)n;
    printf("keyspace (chained, for comparison), 16-byte key: %.2f bytes/entry, add %.0f ns/op, find %.0f ns/op (found %zu)\n",
           (double)(gr_mem_used_by(GR_MEM_KEYSPACE) - before) / (double)n, set_ns, get_ns, found);
    gr_ks_free(ks);
}

int main(int argc, char **argv) {
    if (argc > 2 && strcmp(argv[1], "--measure") == 0) {
        measure((size_t)strtoull(argv[2], NULL, 10));
        return 0;
    }
    size_t operations = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : 300000;
    if (argc > 2) rng_state = strtoull(argv[2], NULL, 10);

    test_values_keys_and_replies_follow_the_contract();
    test_add_many_adds_what_single_adds_add_and_refuses_a_repeat(0);
    test_add_many_adds_what_single_adds_add_and_refuses_a_repeat(1);
    test_random_operations_agree_with_a_plain_model(0, operations);
    test_random_operations_agree_with_a_plain_model(1, operations);
    test_scan_sees_every_entry_present_throughout_while_the_table_resizes(0);
    test_scan_sees_every_entry_present_throughout_while_the_table_resizes(1);
    test_random_draws_are_uniform_also_while_the_index_resizes();
    test_keys_and_values_may_point_into_the_table();

    CHECK(gr_mem_allocations() == 0, "%lld allocations still live at exit", (long long)gr_mem_allocations());
    return checks_report();
}
