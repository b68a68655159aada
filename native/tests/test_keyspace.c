/* test_keyspace.c — the keyspace (keyspace.c) and the glob matcher (glob.c), in C so that
 * they run under ASan/UBSan.
 *
 * Keyspace: 200k keys through growth and shrinkage with lookups in between; a random
 * differential run against a plain array model (add, find, delete, unlink, rename, expire,
 * touch, random, iterate, full scans, clear) through repeated grow/shrink cycles; RENAME's
 * cases; SCAN visiting every key that stays present while keys come and go and the table
 * resizes between calls; clear and free returning every byte; binary and empty keys.
 * Glob: Redis's KEYS cases (keyspace.tcl), the nested-loop regressions, the documented
 * pattern forms, nocase, edge cases, and a fuzz run comparing against a separately written
 * recursive matcher with every buffer malloc'd to its exact size (an over-read aborts).
 * Usage: test_keyspace [differential-operations [glob-fuzz-iterations [seed]]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/alloc.h"
#include "core/glob.h"
#include "core/siphash.h"
#include "engines/keyspace.h"
#include "tests/test_helpers.h"

/* ---- keys: id 0 is the empty key; others are 4 little-endian id bytes (NULs included)
 * and (id % 13) filler bytes, so lengths vary and every key is distinct ---- */

#define KEY_MAX 32
typedef struct key { uint8_t bytes[KEY_MAX]; size_t length; } test_key_t;

static test_key_t make_key(uint32_t id) {
    test_key_t k;
    memset(&k, 0, sizeof k);
    if (id == 0) return k;
    for (int i = 0; i < 4; i++) k.bytes[i] = (uint8_t)(id >> (8 * i));
    k.length = 4 + id % 13;
    for (size_t i = 4; i < k.length; i++) k.bytes[i] = (uint8_t)(0xa5 ^ id ^ i);
    return k;
}

static uint32_t key_id(const gr_ks_entry_t *entry) {
    if (entry->key_length == 0) return 0;
    uint32_t id = 0;
    for (int i = 0; i < 4; i++) id |= (uint32_t)entry->key[i] << (8 * i);
    return id;
}

static int key_matches(const gr_ks_entry_t *entry, uint32_t id) {
    test_key_t k = make_key(id);
    return entry->key_length == k.length && memcmp(entry->key, k.bytes, k.length) == 0;
}

static gr_ks_entry_t *find_id(gr_keyspace_t *ks, uint32_t id) {
    test_key_t k = make_key(id);
    return gr_ks_find(ks, k.bytes, k.length);
}
static gr_ks_entry_t *add_id(gr_keyspace_t *ks, uint32_t id, uint8_t type, uintptr_t value) {
    test_key_t k = make_key(id);
    return gr_ks_add(ks, k.bytes, k.length, type, (void *)value);
}
static int delete_id(gr_keyspace_t *ks, uint32_t id) {
    test_key_t k = make_key(id);
    return gr_ks_delete(ks, k.bytes, k.length);
}
static gr_ks_entry_t *unlink_id(gr_keyspace_t *ks, uint32_t id) {
    test_key_t k = make_key(id);
    return gr_ks_unlink(ks, k.bytes, k.length);
}
static int rename_id(gr_keyspace_t *ks, uint32_t from, uint32_t to) {
    test_key_t a = make_key(from), b = make_key(to);
    return gr_ks_rename(ks, a.bytes, a.length, b.bytes, b.length);
}

/* ---- value destructors ---- */

typedef struct freed { size_t calls; uint64_t sum; } freed_t;

static void count_free(uint8_t type, void *value, void *context) {
    (void)type;
    freed_t *f = context;
    f->calls++;
    f->sum += (uint64_t)(uintptr_t)value;
}

static void free_string_value(uint8_t type, void *value, void *context) {
    (void)type;
    (void)context;
    gr_mem_free(value, GR_MEM_STRING);
}

static int64_t keyspace_bytes(void) { return gr_mem_used_by(GR_MEM_KEYSPACE); }

/* ---- visitors ---- */

typedef struct seen { uint32_t *counts; size_t limit; size_t visits; size_t out_of_range; } seen_t;

static void count_seen(void *context, gr_ks_entry_t *entry) {
    seen_t *s = context;
    uint32_t id = key_id(entry);
    s->visits++;
    if (id < s->limit) s->counts[id]++;
    else s->out_of_range++;
}

static size_t full_scan(gr_keyspace_t *ks, seen_t *seen) {
    uint64_t cursor = 0;
    size_t calls = 0;
    do {
        cursor = gr_ks_scan(ks, cursor, count_seen, seen);
        calls++;
    } while (cursor != 0);
    return calls;
}

/* ======================= keyspace tests ======================= */

static void test_200k_keys_are_found_while_the_table_grows_and_shrinks_through_rehash(void) {
    const uint32_t n = 200000;
    int64_t base = keyspace_bytes();
    freed_t freed = {0, 0};
    gr_keyspace_t *ks = gr_ks_new(count_free, &freed, 1);
    size_t bad_add = 0, bad_find = 0, rehashing_ops = 0, longest_resize = 0, current_resize = 0;
    size_t max_buckets = 0;
    for (uint32_t id = 1; id <= n; id++) {
        gr_ks_entry_t *entry = add_id(ks, id, 1, id);
        if (!entry || !key_matches(entry, id) || entry->value != (void *)(uintptr_t)id ||
            entry->expire_at_ms != -1 || entry->type != 1) bad_add++;
        gr_ks_entry_t *again = find_id(ks, id);
        uint32_t earlier = 1 + (uint32_t)below(id);
        gr_ks_entry_t *old = find_id(ks, earlier);
        if (again != entry || !old || old->value != (void *)(uintptr_t)earlier) bad_find++;
        if (find_id(ks, id + 1) != NULL) bad_find++;
        if (gr_ks_is_rehashing(ks)) {
            rehashing_ops++;
            current_resize++;
            if (current_resize > longest_resize) longest_resize = current_resize;
        } else {
            current_resize = 0;
        }
        if (gr_ks_bucket_count(ks) > max_buckets) max_buckets = gr_ks_bucket_count(ks);
    }
    CHECK(bad_add == 0, "%zu adds returned a wrong entry", bad_add);
    CHECK(bad_find == 0, "%zu finds failed while growing", bad_find);
    CHECK(gr_ks_size(ks) == n, "size %zu after %u adds", gr_ks_size(ks), n);
    CHECK(rehashing_ops > 20000, "only %zu operations ran during a resize", rehashing_ops);
    CHECK(longest_resize > 10000, "the longest resize spanned %zu operations: not incremental?", longest_resize);
    CHECK(gr_ks_allocated_bytes(ks) == (size_t)(keyspace_bytes() - base),
          "allocated_bytes %zu, allocator says %lld", gr_ks_allocated_bytes(ks), (long long)(keyspace_bytes() - base));
    gr_ks_rehash(ks, SIZE_MAX);
    CHECK(!gr_ks_is_rehashing(ks) && gr_ks_bucket_count(ks) == 262144,
          "after growth: %zu buckets (expected 262144)", gr_ks_bucket_count(ks));
    CHECK(max_buckets >= 262144 + 131072, "never held two tables (max %zu buckets)", max_buckets);

    size_t missing = 0;
    for (uint32_t id = 1; id <= n; id++) {
        gr_ks_entry_t *entry = find_id(ks, id);
        if (!entry || entry->value != (void *)(uintptr_t)id || !key_matches(entry, id)) missing++;
    }
    CHECK(missing == 0, "%zu of %u keys not found after growth", missing, n);

    /* Delete everything in a random order, checking survivors as the table shrinks. */
    uint32_t *order = malloc(n * sizeof *order);
    for (uint32_t i = 0; i < n; i++) order[i] = i + 1;
    for (uint32_t i = n - 1; i > 0; i--) {
        uint32_t j = (uint32_t)below(i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    size_t bad_delete = 0, shrinks = 0, previous_buckets = gr_ks_bucket_count(ks);
    rehashing_ops = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (delete_id(ks, order[i]) != 1) bad_delete++;
        if (find_id(ks, order[i]) != NULL) bad_delete++;
        if (i + 1 < n) {
            uint32_t survivor = order[i + 1 + below(n - i - 1)];
            gr_ks_entry_t *entry = find_id(ks, survivor);
            if (!entry || entry->value != (void *)(uintptr_t)survivor) bad_find++;
        }
        if (gr_ks_is_rehashing(ks)) rehashing_ops++;
        if (gr_ks_bucket_count(ks) < previous_buckets) shrinks++;
        previous_buckets = gr_ks_bucket_count(ks);
    }
    free(order);
    CHECK(bad_delete == 0, "%zu deletes misbehaved", bad_delete);
    CHECK(bad_find == 0, "%zu survivors not found while shrinking", bad_find);
    CHECK(shrinks >= 5, "the table shrank only %zu times", shrinks);
    CHECK(rehashing_ops > 1000, "only %zu deletes ran during a resize", rehashing_ops);
    CHECK(gr_ks_size(ks) == 0, "size %zu after deleting everything", gr_ks_size(ks));
    CHECK(freed.calls == n && freed.sum == (uint64_t)n * (n + 1) / 2,
          "destructor: %zu calls, sum %llu", freed.calls, (unsigned long long)freed.sum);
    gr_ks_rehash(ks, SIZE_MAX);
    CHECK(gr_ks_bucket_count(ks) == GR_KS_MIN_BUCKETS, "%zu buckets left when empty", gr_ks_bucket_count(ks));
    CHECK(delete_id(ks, 1) == 0 && find_id(ks, 1) == NULL, "deleted key still there");
    CHECK(gr_ks_allocated_bytes(ks) == (size_t)(keyspace_bytes() - base), "allocated_bytes drifted");
    gr_ks_free(ks);
    CHECK(keyspace_bytes() == base, "gr_ks_free left %lld bytes", (long long)(keyspace_bytes() - base));
}

/* The model: one slot per key id. */
#define MODEL_KEYS 4096
typedef struct model {
    uint8_t present[MODEL_KEYS];
    uint8_t type[MODEL_KEYS];
    uintptr_t value[MODEL_KEYS];
    int64_t expire[MODEL_KEYS];
    uint64_t access[MODEL_KEYS];
    size_t size, expires;
} model_t;

typedef struct iterate_check { const model_t *model; size_t visits, wrong; uint32_t *counts; } iterate_check_t;

static int check_against_model(void *context, gr_ks_entry_t *entry) {
    iterate_check_t *c = context;
    uint32_t id = key_id(entry);
    c->visits++;
    if (id >= MODEL_KEYS || !c->model->present[id] || !key_matches(entry, id) ||
        entry->value != (void *)c->model->value[id] || entry->type != c->model->type[id] ||
        entry->expire_at_ms != c->model->expire[id] || entry->access_ms != c->model->access[id]) {
        c->wrong++;
        return 0;
    }
    c->counts[id]++;
    return 0;
}

static void test_random_operations_agree_with_a_plain_model(size_t operations) {
    int64_t base = keyspace_bytes();
    freed_t freed = {0, 0};
    gr_keyspace_t *ks = gr_ks_new(count_free, &freed, 7);
    model_t *m = calloc(1, sizeof *m);
    uint32_t *counts = calloc(MODEL_KEYS, sizeof *counts);
    uint64_t expected_free_calls = 0, expected_free_sum = 0;
    uintptr_t next_value = 1;
    uint64_t clock = 1000;
    gr_ks_set_clock(ks, clock);
    size_t mismatches = 0, full_checks = 0, scans = 0, clears = 0;
    size_t max_buckets = 0, resizes_started = 0;
    int was_resizing = 0;
    char first_failure[200] = "";
#define MISMATCH(...) do { if (!mismatches++) snprintf(first_failure, sizeof first_failure, __VA_ARGS__); } while (0)

    for (size_t op = 0; op < operations; op++) {
        /* Phases alternate between filling and draining, so the table grows and shrinks
         * through several sizes; the key range widens over the run. */
        int filling = (op / 6000) % 2 == 0;
        uint32_t range = 64 + (uint32_t)((op / 12000) % 6) * 800;
        uint32_t id = (uint32_t)below(range);
        size_t dice = below(100);
        if (dice < 5) {
            clock += below(50);
            gr_ks_set_clock(ks, clock);
        }
        if (dice < (filling ? 45u : 15u)) {                        /* add (or find when present) */
            if (!m->present[id]) {
                uint8_t type = (uint8_t)(1 + below(3));
                gr_ks_entry_t *e = add_id(ks, id, type, next_value);
                if (!e) MISMATCH("add %u returned NULL", id);
                m->present[id] = 1;
                m->type[id] = type;
                m->value[id] = next_value++;
                m->expire[id] = -1;
                m->access[id] = clock;
                m->size++;
            } else if (find_id(ks, id) == NULL) MISMATCH("present key %u not found", id);
        } else if (dice < 60) {                                     /* find */
            gr_ks_entry_t *e = find_id(ks, id);
            if (m->present[id] ? (!e || e->value != (void *)m->value[id] || !key_matches(e, id)) : e != NULL)
                MISMATCH("find %u disagrees (present %d)", id, m->present[id]);
        } else if (dice < (filling ? 68u : 80u)) {                  /* delete */
            int r = delete_id(ks, id);
            if (r != m->present[id]) MISMATCH("delete %u returned %d", id, r);
            if (m->present[id]) {
                expected_free_calls++;
                expected_free_sum += m->value[id];
                m->present[id] = 0;
                m->size--;
                if (m->expire[id] >= 0) m->expires--;
            }
        } else if (dice < (filling ? 73u : 88u)) {                  /* unlink, then free */
            gr_ks_entry_t *e = unlink_id(ks, id);
            if (!m->present[id]) {
                if (e) MISMATCH("unlink of absent %u returned an entry", id);
            } else if (!e || e->value != (void *)m->value[id] || e->expire_at_ms != m->expire[id]) {
                MISMATCH("unlink %u returned a wrong entry", id);
            } else {
                int with_value = (int)below(2);
                gr_ks_entry_free(ks, e, with_value);
                if (with_value) {
                    expected_free_calls++;
                    expected_free_sum += m->value[id];
                }
                m->present[id] = 0;
                m->size--;
                if (m->expire[id] >= 0) m->expires--;
            }
        } else if (dice < 90) {                                     /* rename */
            uint32_t to = below(4) ? (uint32_t)below(range) : id;
            int r = rename_id(ks, id, to);
            int expect = m->present[id] ? 0 : -1;
            if (r != expect) MISMATCH("rename %u->%u returned %d, expected %d", id, to, r, expect);
            if (m->present[id] && to != id) {
                if (m->present[to]) {
                    expected_free_calls++;
                    expected_free_sum += m->value[to];
                    m->size--;
                    if (m->expire[to] >= 0) m->expires--;
                }
                m->present[to] = 1;
                m->type[to] = m->type[id];
                m->value[to] = m->value[id];
                m->expire[to] = m->expire[id];
                m->access[to] = clock;
                m->present[id] = 0;
            }
        } else if (dice < 95) {                                     /* expire */
            gr_ks_entry_t *e = find_id(ks, id);
            if (e) {
                int64_t at = below(3) ? (int64_t)(clock + below(100000)) : -1;
                if (m->expire[id] >= 0) m->expires--;
                if (at >= 0) m->expires++;
                m->expire[id] = at;
                gr_ks_set_expire(ks, e, at);
            }
        } else if (dice < 97) {                                     /* touch */
            gr_ks_entry_t *e = find_id(ks, id);
            if (e) {
                gr_ks_touch(ks, e);
                m->access[id] = clock;
            }
        } else if (dice < 98) {                                     /* random */
            gr_ks_entry_t *e = gr_ks_random(ks);
            if (m->size == 0 ? e != NULL : (!e || key_id(e) >= MODEL_KEYS || !m->present[key_id(e)] ||
                                            e->value != (void *)m->value[key_id(e)]))
                MISMATCH("random returned a wrong entry");
        } else if (dice < 99) {                                     /* idle-time resize steps */
            gr_ks_rehash(ks, 1 + below(20));
        } else if (below(400) == 0) {                           /* rare FLUSHDB */
            for (uint32_t i = 0; i < MODEL_KEYS; i++) {
                if (m->present[i]) {
                    expected_free_calls++;
                    expected_free_sum += m->value[i];
                    m->present[i] = 0;
                }
            }
            m->size = m->expires = 0;
            gr_ks_clear(ks);
            clears++;
        }

        if (gr_ks_size(ks) != m->size) MISMATCH("op %zu: size %zu, model %zu", op, gr_ks_size(ks), m->size);
        if (gr_ks_expires_count(ks) != m->expires)
            MISMATCH("op %zu: expires %zu, model %zu", op, gr_ks_expires_count(ks), m->expires);
        if (freed.calls != expected_free_calls || freed.sum != expected_free_sum)
            MISMATCH("op %zu: destructor calls %zu (expected %llu)", op, freed.calls, (unsigned long long)expected_free_calls);
        if (gr_ks_bucket_count(ks) > max_buckets) max_buckets = gr_ks_bucket_count(ks);
        if (gr_ks_is_rehashing(ks) && !was_resizing) resizes_started++;
        was_resizing = gr_ks_is_rehashing(ks);

        if (op % 997 == 0) {                                        /* whole-keyspace checks */
            full_checks++;
            memset(counts, 0, MODEL_KEYS * sizeof *counts);
            iterate_check_t check = {m, 0, 0, counts};
            gr_ks_iterate(ks, check_against_model, &check);
            size_t once = 0;
            for (uint32_t i = 0; i < MODEL_KEYS; i++) once += m->present[i] && counts[i] == 1;
            if (check.wrong || check.visits != m->size || once != m->size)
                MISMATCH("op %zu: iterate saw %zu (%zu wrong), model has %zu", op, check.visits, check.wrong, m->size);
            if (gr_ks_allocated_bytes(ks) != (size_t)(keyspace_bytes() - base))
                MISMATCH("op %zu: allocated_bytes %zu, allocator %lld", op, gr_ks_allocated_bytes(ks),
                         (long long)(keyspace_bytes() - base));
        }
        if (op % 4999 == 0) {                                       /* a whole SCAN, no mutation */
            scans++;
            memset(counts, 0, MODEL_KEYS * sizeof *counts);
            seen_t seen = {counts, MODEL_KEYS, 0, 0};
            full_scan(ks, &seen);
            size_t missed = 0, twice = 0;
            for (uint32_t i = 0; i < MODEL_KEYS; i++) {
                if (m->present[i] && counts[i] == 0) missed++;
                if (counts[i] > 1 || (!m->present[i] && counts[i])) twice++;
            }
            if (missed || twice || seen.out_of_range)
                MISMATCH("op %zu: scan missed %zu, duplicated/extra %zu", op, missed, twice);
        }
    }
    CHECK(mismatches == 0, "%zu mismatches against the model; first: %s", mismatches, first_failure);
    CHECK(full_checks > 0 && scans > 0, "no whole-keyspace checks ran");
    if (operations >= 100000) {   /* the phases need a long run to reach these */
        CHECK(resizes_started >= 10, "only %zu resizes during the run", resizes_started);
        CHECK(max_buckets >= 4096, "the table never grew past %zu buckets", max_buckets);
    }
    (void)clears;
    gr_ks_free(ks);
    CHECK(keyspace_bytes() == base, "keyspace bytes left after free: %lld", (long long)(keyspace_bytes() - base));
    CHECK(freed.calls == expected_free_calls + m->size, "gr_ks_free did not free the remaining values");
    free(counts);
    free(m);
#undef MISMATCH
}

static void test_rename_moves_value_and_expire_and_overwrites_the_destination(void) {
    int64_t base = keyspace_bytes();
    freed_t freed = {0, 0};
    gr_keyspace_t *ks = gr_ks_new(count_free, &freed, 3);
    gr_ks_set_clock(ks, 100);
    const uint8_t *a = (const uint8_t *)"mykey", *b = (const uint8_t *)"mykey2";
    gr_ks_entry_t *e = gr_ks_add(ks, a, 5, 1, (void *)(uintptr_t)11);
    gr_ks_set_expire(ks, e, 5000);
    gr_ks_set_clock(ks, 200);

    CHECK(gr_ks_rename(ks, a, 5, b, 6) == 0, "rename to a new key failed");
    CHECK(gr_ks_find(ks, a, 5) == NULL, "source still exists after rename");
    e = gr_ks_find(ks, b, 6);
    CHECK(e && e->value == (void *)(uintptr_t)11 && e->type == 1 && e->expire_at_ms == 5000 && e->access_ms == 200,
          "renamed entry lost its value, type, expire or access stamp");
    CHECK(gr_ks_size(ks) == 1 && gr_ks_expires_count(ks) == 1 && freed.calls == 0, "counts wrong after rename");

    /* Over an existing key with its own expire: its value is freed, its expire dropped. */
    gr_ks_entry_t *x = gr_ks_add(ks, (const uint8_t *)"x", 1, 2, (void *)(uintptr_t)22);
    gr_ks_set_expire(ks, x, 9000);
    gr_ks_set_expire(ks, e, -1);
    CHECK(gr_ks_expires_count(ks) == 1, "expires %zu", gr_ks_expires_count(ks));
    CHECK(gr_ks_rename(ks, b, 6, (const uint8_t *)"x", 1) == 0, "rename over an existing key failed");
    x = gr_ks_find(ks, (const uint8_t *)"x", 1);
    CHECK(x && x->value == (void *)(uintptr_t)11 && x->type == 1 && x->expire_at_ms == -1,
          "destination did not take the source's value and (absent) expire");
    CHECK(freed.calls == 1 && freed.sum == 22, "the destination's old value was not freed exactly once");
    CHECK(gr_ks_size(ks) == 1 && gr_ks_expires_count(ks) == 0 && gr_ks_find(ks, b, 6) == NULL,
          "size %zu expires %zu after rename over a key", gr_ks_size(ks), gr_ks_expires_count(ks));

    /* Source with an expire over a destination with one. */
    gr_ks_entry_t *y = gr_ks_add(ks, (const uint8_t *)"y", 1, 1, (void *)(uintptr_t)33);
    gr_ks_set_expire(ks, y, 7777);
    gr_ks_set_expire(ks, x, 8888);
    CHECK(gr_ks_rename(ks, (const uint8_t *)"y", 1, (const uint8_t *)"x", 1) == 0, "rename y x failed");
    x = gr_ks_find(ks, (const uint8_t *)"x", 1);
    CHECK(x && x->value == (void *)(uintptr_t)33 && x->expire_at_ms == 7777 && gr_ks_expires_count(ks) == 1,
          "expire not carried over the destination's");
    CHECK(freed.calls == 2 && freed.sum == 22 + 11, "destination value 11 not freed");

    /* Onto itself: OK when it exists, unchanged; an error when it does not. */
    CHECK(gr_ks_rename(ks, (const uint8_t *)"x", 1, (const uint8_t *)"x", 1) == 0, "rename x x failed");
    x = gr_ks_find(ks, (const uint8_t *)"x", 1);
    CHECK(x && x->value == (void *)(uintptr_t)33 && x->expire_at_ms == 7777 && freed.calls == 2 && gr_ks_size(ks) == 1,
          "rename onto itself changed something");
    CHECK(gr_ks_rename(ks, (const uint8_t *)"nokey", 5, (const uint8_t *)"nokey", 5) == -1,
          "rename of a missing key onto itself did not fail");
    CHECK(gr_ks_rename(ks, (const uint8_t *)"nokey", 5, (const uint8_t *)"x", 1) == -1, "rename of a missing key did not fail");
    CHECK(gr_ks_find(ks, (const uint8_t *)"x", 1) != NULL && freed.calls == 2, "failed rename touched the destination");

    /* Source and destination given as pointers into the entries' own key bytes. */
    gr_ks_entry_t *long_key = gr_ks_add(ks, (const uint8_t *)"prefix-and-more", 15, 1, (void *)(uintptr_t)44);
    CHECK(gr_ks_rename(ks, long_key->key, long_key->key_length, long_key->key, 6) == 0, "aliased rename failed");
    e = gr_ks_find(ks, (const uint8_t *)"prefix", 6);
    CHECK(e && e->value == (void *)(uintptr_t)44 && gr_ks_find(ks, (const uint8_t *)"prefix-and-more", 15) == NULL,
          "aliased rename produced the wrong key");
    x = gr_ks_find(ks, (const uint8_t *)"x", 1);
    CHECK(gr_ks_rename(ks, e->key, e->key_length, x->key, x->key_length) == 0, "aliased rename over a key failed");
    CHECK(gr_ks_size(ks) == 1 && gr_ks_find(ks, (const uint8_t *)"x", 1)->value == (void *)(uintptr_t)44,
          "aliased rename over a key went wrong");

    /* The empty key, both ways. */
    CHECK(gr_ks_rename(ks, (const uint8_t *)"x", 1, NULL, 0) == 0 && gr_ks_find(ks, NULL, 0) != NULL,
          "rename to the empty key failed");
    CHECK(gr_ks_rename(ks, NULL, 0, (const uint8_t *)"z", 1) == 0 && gr_ks_find(ks, NULL, 0) == NULL &&
          gr_ks_find(ks, (const uint8_t *)"z", 1) != NULL, "rename from the empty key failed");
    gr_ks_free(ks);

    /* Many renames while the table resizes. */
    ks = gr_ks_new(count_free, &freed, 4);
    const uint32_t n = 5000;
    for (uint32_t id = 1; id <= n; id++) add_id(ks, id, 1, id);
    size_t bad = 0, during_resize = 0;
    for (uint32_t id = 1; id <= n; id++) {
        if (gr_ks_is_rehashing(ks)) during_resize++;
        if (rename_id(ks, id, id + 100000) != 0) bad++;
        add_id(ks, id + 200000, 1, 0);     /* keep the table growing */
    }
    for (uint32_t id = 1; id <= n; id++) {
        gr_ks_entry_t *moved = find_id(ks, id + 100000);
        if (find_id(ks, id) || !moved || moved->value != (void *)(uintptr_t)id) bad++;
    }
    CHECK(bad == 0 && during_resize > 100, "%zu renames went wrong (%zu during a resize)", bad, during_resize);
    CHECK(gr_ks_size(ks) == 2 * n, "size %zu after renames", gr_ks_size(ks));
    gr_ks_free(ks);
    CHECK(keyspace_bytes() == base, "rename tests leaked %lld keyspace bytes", (long long)(keyspace_bytes() - base));
}

static void test_scan_of_a_quiet_table_visits_every_key_exactly_once(void) {
    gr_keyspace_t *ks = gr_ks_new(NULL, NULL, 5);
    uint64_t cursor = gr_ks_scan(ks, 0, count_seen, NULL);
    CHECK(cursor == 0, "scan of an empty keyspace returned %llu", (unsigned long long)cursor);
    const uint32_t n = 30000;
    uint32_t *counts = calloc(n + 1, sizeof *counts);
    for (uint32_t id = 1; id <= n; id++) add_id(ks, id, 1, 0);
    gr_ks_rehash(ks, SIZE_MAX);
    seen_t seen = {counts, n + 1, 0, 0};
    size_t calls = full_scan(ks, &seen);
    size_t wrong = 0;
    for (uint32_t id = 1; id <= n; id++) wrong += counts[id] != 1;
    CHECK(wrong == 0 && seen.visits == n, "%zu keys not seen exactly once (%zu visits)", wrong, seen.visits);
    CHECK(calls == gr_ks_bucket_count(ks), "%zu scan calls for %zu buckets", calls, gr_ks_bucket_count(ks));

    /* Also exactly once when a resize is in the moving phase for the whole scan. */
    for (uint32_t id = n + 1; id <= 32769; id++) add_id(ks, id, 1, 0);   /* 32768 keys: grow starts */
    gr_ks_rehash(ks, 40);            /* zeroing done (65536 / 4096 = 16 steps), some buckets moved */
    CHECK(gr_ks_is_rehashing(ks), "expected a resize in progress");
    uint32_t *counts2 = calloc(32770, sizeof *counts2);
    seen_t seen2 = {counts2, 32770, 0, 0};
    full_scan(ks, &seen2);
    wrong = 0;
    for (uint32_t id = 1; id <= 32769; id++) wrong += counts2[id] != 1;
    CHECK(wrong == 0 && gr_ks_is_rehashing(ks), "%zu keys not seen exactly once during a resize", wrong);
    free(counts2);
    free(counts);
    gr_ks_free(ks);
}

/* A scan with churn between calls: stable keys (ids 1..stable) stay the whole time;
 * volatile keys (ids >= 1000000) are added and removed in waves, so the table grows
 * and shrinks several times mid-scan. Every stable key must be seen. */
static void scan_with_churn(uint64_t seed, uint32_t stable, uint32_t wave, size_t ops_between, int idle_steps) {
    gr_keyspace_t *ks = gr_ks_new(NULL, NULL, seed);
    rng_state = seed;
    for (uint32_t id = 1; id <= stable; id++) add_id(ks, id, 1, 0);
    uint32_t *counts = calloc(stable + 1, sizeof *counts);
    seen_t seen = {counts, stable + 1, 0, 0};
    uint32_t *live = malloc(sizeof *live * (wave + 1));
    uint32_t live_count = 0, next_volatile = 1000000;
    size_t calls = 0, resizing_calls = 0, grows = 0, shrinks = 0;
    size_t buckets = gr_ks_bucket_count(ks);
    int filling = 1;
    uint64_t cursor = 0;
    do {
        cursor = gr_ks_scan(ks, cursor, count_seen, &seen);
        calls++;
        if (gr_ks_is_rehashing(ks)) resizing_calls++;
        size_t ops = below(ops_between + 1);
        for (size_t i = 0; i < ops; i++) {
            if (filling && live_count < wave) {
                add_id(ks, next_volatile, 1, 0);
                live[live_count++] = next_volatile++;
            } else if (!filling && live_count > 0) {
                uint32_t k = (uint32_t)below(live_count);
                delete_id(ks, live[k]);
                live[k] = live[--live_count];
            }
            if (filling && live_count == wave) filling = 0;
            else if (!filling && live_count == 0) filling = 1;
            find_id(ks, 1 + (uint32_t)below(stable));
        }
        if (idle_steps) gr_ks_rehash(ks, (size_t)idle_steps);
        size_t now = gr_ks_bucket_count(ks);
        if (now > buckets) grows++;
        if (now < buckets) shrinks++;
        buckets = now;
    } while (cursor != 0 && calls < 50000000);
    size_t missed = 0;
    for (uint32_t id = 1; id <= stable; id++) missed += counts[id] == 0;
    CHECK(cursor == 0, "scan did not finish");
    CHECK(missed == 0, "seed %llu: %zu of %u stable keys never visited (%zu calls, %zu grows, %zu shrinks)",
          (unsigned long long)seed, missed, stable, calls, grows, shrinks);
    CHECK(grows >= 2 && shrinks >= 2 && resizing_calls > 0,
          "seed %llu: the table did not resize enough mid-scan (%zu grows, %zu shrinks)",
          (unsigned long long)seed, grows, shrinks);
    free(live);
    free(counts);
    gr_ks_free(ks);
}

static void test_scan_sees_every_key_present_throughout_while_the_table_resizes_between_calls(void) {
    scan_with_churn(11, 500, 20000, 40, 0);
    scan_with_churn(12, 2000, 40000, 200, 0);
    scan_with_churn(13, 1000, 30000, 60, 5);
    scan_with_churn(14, 300, 10000, 10, 50);
    scan_with_churn(15, 3000, 60000, 500, 1);
}

static void test_clear_and_free_return_every_byte(void) {
    int64_t base_allocations = gr_mem_allocations();
    int64_t base_keyspace = keyspace_bytes(), base_strings = gr_mem_used_by(GR_MEM_STRING);
    gr_keyspace_t *ks = gr_ks_new(free_string_value, NULL, 9);
    int64_t empty = keyspace_bytes();
    CHECK(gr_ks_allocated_bytes(ks) == (size_t)(empty - base_keyspace) && gr_ks_bucket_count(ks) == 0,
          "a new keyspace holds more than itself");
    for (int round = 0; round < 4; round++) {
        /* round 0: a stable table; 1: cleared right after a resize started (the new
         * array not yet zeroed: ASan fills fresh allocations, so reading it would fail);
         * 2: in the moving phase; 3: twice in a row. */
        uint32_t n = 50000;
        for (uint32_t id = 1; id <= n; id++) {
            char *value = gr_mem_alloc(16 + id % 50, GR_MEM_STRING);
            gr_ks_entry_t *e = add_id(ks, id, 1, (uintptr_t)value);
            if (id % 3 == 0) gr_ks_set_expire(ks, e, id);
            if (round == 1 && id >= 8192 && gr_ks_is_rehashing(ks)) break;   /* nothing zeroed yet */
            if (round == 2 && id > 8192 && gr_ks_is_rehashing(ks)) {
                for (int i = 0; i < 20; i++) find_id(ks, 1);
                break;
            }
        }
        CHECK(gr_ks_size(ks) > 0 && (round == 0 || round == 3 || gr_ks_is_rehashing(ks)), "round %d: setup", round);
        gr_ks_clear(ks);
        if (round == 3) gr_ks_clear(ks);
        CHECK(gr_ks_size(ks) == 0 && gr_ks_expires_count(ks) == 0 && gr_ks_bucket_count(ks) == 0 &&
              !gr_ks_is_rehashing(ks), "round %d: clear left keys, expires or tables", round);
        CHECK(keyspace_bytes() == empty && gr_ks_allocated_bytes(ks) == (size_t)(empty - base_keyspace),
              "round %d: clear left %lld keyspace bytes", round, (long long)(keyspace_bytes() - empty));
        CHECK(gr_mem_used_by(GR_MEM_STRING) == base_strings, "round %d: values not freed by clear", round);
        CHECK(find_id(ks, 1) == NULL && gr_ks_random(ks) == NULL, "round %d: cleared key found", round);
    }
    /* Still usable after clear, and free releases the rest. */
    for (uint32_t id = 1; id <= 1000; id++) add_id(ks, id, 1, (uintptr_t)gr_mem_alloc(8, GR_MEM_STRING));
    CHECK(gr_ks_size(ks) == 1000 && find_id(ks, 777) != NULL, "keyspace unusable after clear");
    gr_ks_free(ks);
    CHECK(gr_mem_allocations() == base_allocations, "gr_ks_free left %lld allocations",
          (long long)(gr_mem_allocations() - base_allocations));
    CHECK(keyspace_bytes() == base_keyspace && gr_mem_used_by(GR_MEM_STRING) == base_strings,
          "gr_ks_free left bytes behind");
    gr_ks_free(NULL);
}

static int stop_after(void *context, gr_ks_entry_t *entry) {
    (void)entry;
    size_t *left = context;
    return --*left == 0;
}

typedef struct finding { gr_keyspace_t *ks; size_t visits, not_found; } finding_t;

static int find_during_iterate(void *context, gr_ks_entry_t *entry) {
    finding_t *f = context;
    f->visits++;
    if (gr_ks_find(f->ks, entry->key, entry->key_length) != entry) f->not_found++;
    gr_ks_touch(f->ks, entry);
    return 0;
}

static void test_iterate_stops_early_and_lookups_inside_it_do_not_move_buckets(void) {
    gr_keyspace_t *ks = gr_ks_new(NULL, NULL, 21);
    size_t left = 5;
    gr_ks_iterate(ks, stop_after, &left);
    CHECK(left == 5, "iterate visited something in an empty keyspace");
    uint32_t id = 1;
    while (!(gr_ks_is_rehashing(ks) && gr_ks_bucket_count(ks) > 8192)) add_id(ks, id++, 1, 0);
    gr_ks_rehash(ks, 10);          /* into the moving phase */
    left = 100;
    gr_ks_iterate(ks, stop_after, &left);
    CHECK(left == 0, "iterate did not stop when asked");
    size_t buckets = gr_ks_bucket_count(ks);
    gr_ks_set_clock(ks, 4242);
    finding_t f = {ks, 0, 0};
    gr_ks_iterate(ks, find_during_iterate, &f);
    CHECK(f.visits == gr_ks_size(ks) && f.not_found == 0, "iterate with finds: %zu visits, %zu not found",
          f.visits, f.not_found);
    CHECK(gr_ks_bucket_count(ks) == buckets && gr_ks_is_rehashing(ks), "a resize advanced during iterate");
    gr_ks_entry_t *e = find_id(ks, 1);
    CHECK(e && e->access_ms == 4242, "touch inside iterate did not stamp");
    gr_ks_free(ks);
}

static void test_random_returns_only_present_keys_and_reaches_them_all(void) {
    gr_keyspace_t *ks = gr_ks_new(NULL, NULL, 31);
    CHECK(gr_ks_random(ks) == NULL, "random on an empty keyspace");
    gr_ks_add(ks, (const uint8_t *)"foo", 3, 1, NULL);
    gr_ks_add(ks, (const uint8_t *)"bar", 3, 1, NULL);
    int foo = 0, bar = 0;
    for (int i = 0; i < 100; i++) {
        gr_ks_entry_t *e = gr_ks_random(ks);
        if (e && memcmp(e->key, "foo", 3) == 0) foo = 1;
        if (e && memcmp(e->key, "bar", 3) == 0) bar = 1;
    }
    CHECK(foo && bar, "RANDOMKEY did not return both keys");
    gr_ks_delete(ks, (const uint8_t *)"foo", 3);
    gr_ks_delete(ks, (const uint8_t *)"bar", 3);
    CHECK(gr_ks_random(ks) == NULL, "random after deleting everything");

    uint32_t counts[301] = {0};
    for (uint32_t id = 1; id <= 300; id++) add_id(ks, id, 1, id);
    size_t wrong = 0, during_resize = 0;
    for (int i = 0; i < 30000; i++) {
        if (i % 50 == 0) {                       /* churn, to sample during resizes too */
            uint32_t extra = 1000 + (uint32_t)(i / 50);
            add_id(ks, extra, 1, 0);
            if (i % 100 == 0) delete_id(ks, extra);
        }
        if (gr_ks_is_rehashing(ks)) during_resize++;
        gr_ks_entry_t *e = gr_ks_random(ks);
        if (!e || find_id(ks, key_id(e)) != e) wrong++;
        else if (key_id(e) <= 300) counts[key_id(e)]++;
    }
    size_t never = 0;
    for (uint32_t id = 1; id <= 300; id++) never += counts[id] == 0;
    CHECK(wrong == 0, "%zu random entries were not in the keyspace", wrong);
    CHECK(never == 0, "%zu keys never returned by random", never);
    CHECK(during_resize > 0, "random never ran during a resize");
    gr_ks_free(ks);
}

static void test_binary_and_empty_keys_are_distinct(void) {
    freed_t freed = {0, 0};
    gr_keyspace_t *ks = gr_ks_new(count_free, &freed, 41);
    const uint8_t k1[] = {0}, k2[] = {0, 0}, k3[] = {'a', 0, 'b'}, k4[] = {'a', 0, 'c'}, k5[] = {0xff, 0x80};
    CHECK(gr_ks_find(ks, NULL, 0) == NULL, "empty key found in an empty keyspace");
    gr_ks_add(ks, NULL, 0, 1, (void *)(uintptr_t)1);
    gr_ks_add(ks, k1, 1, 1, (void *)(uintptr_t)2);
    gr_ks_add(ks, k2, 2, 1, (void *)(uintptr_t)3);
    gr_ks_add(ks, k3, 3, 1, (void *)(uintptr_t)4);
    gr_ks_add(ks, k4, 3, 1, (void *)(uintptr_t)5);
    gr_ks_add(ks, k5, 2, 1, (void *)(uintptr_t)6);
    CHECK(gr_ks_size(ks) == 6, "size %zu", gr_ks_size(ks));
    CHECK(gr_ks_find(ks, (const uint8_t *)"", 0)->value == (void *)(uintptr_t)1 &&
          gr_ks_find(ks, k1, 1)->value == (void *)(uintptr_t)2 && gr_ks_find(ks, k2, 2)->value == (void *)(uintptr_t)3 &&
          gr_ks_find(ks, k3, 3)->value == (void *)(uintptr_t)4 && gr_ks_find(ks, k4, 3)->value == (void *)(uintptr_t)5 &&
          gr_ks_find(ks, k5, 2)->value == (void *)(uintptr_t)6, "binary keys confused");
    CHECK(gr_ks_find(ks, k3, 2) == NULL, "prefix of a key found");
    CHECK(sizeof(void *) != 8 || offsetof(gr_ks_entry_t, key) == 37, "entry header is %zu bytes, keyspace.h says 37",
          offsetof(gr_ks_entry_t, key));

    size_t long_length = 1 << 20;
    uint8_t *big = malloc(long_length);
    for (size_t i = 0; i < long_length; i++) big[i] = (uint8_t)(i * 31);
    gr_ks_entry_t *e = gr_ks_add(ks, big, long_length, 1, (void *)(uintptr_t)7);
    CHECK(e && e->key_length == long_length && memcmp(e->key, big, long_length) == 0, "1 MiB key not stored");
    CHECK(gr_ks_entry_bytes(e) >= long_length + offsetof(gr_ks_entry_t, key), "entry bytes %zu", gr_ks_entry_bytes(e));
    big[long_length - 1] ^= 1;
    CHECK(gr_ks_find(ks, big, long_length) == NULL, "key differing in its last byte found");
    big[long_length - 1] ^= 1;
    CHECK(gr_ks_delete(ks, big, long_length) == 1 && freed.sum == 7, "1 MiB key not deleted");
    free(big);

    gr_ks_entry_t *u = gr_ks_unlink(ks, k1, 1);
    CHECK(u && u->value == (void *)(uintptr_t)2 && freed.calls == 1, "unlink freed the value or missed the key");
    gr_ks_entry_free(ks, u, 0);
    CHECK(freed.calls == 1, "entry_free(free_value = 0) called the destructor");
    u = gr_ks_unlink(ks, k2, 2);
    gr_ks_entry_free(ks, u, 1);
    CHECK(freed.calls == 2 && freed.sum == 7 + 3, "entry_free(free_value = 1) did not free the value");
    CHECK(gr_ks_unlink(ks, k2, 2) == NULL && gr_ks_delete(ks, k2, 2) == 0, "absent key unlinked");
    gr_ks_entry_free(ks, NULL, 1);

    gr_ks_set_clock(ks, 1000);
    gr_ks_entry_t *t = gr_ks_add(ks, (const uint8_t *)"t", 1, 1, NULL);
    CHECK(t->access_ms == 1000 && t->expire_at_ms == -1, "new entry stamps");
    gr_ks_set_clock(ks, 2000);
    CHECK(gr_ks_find(ks, (const uint8_t *)"t", 1)->access_ms == 1000, "find touched the entry");
    gr_ks_touch(ks, t);
    CHECK(t->access_ms == 2000, "touch did not stamp");
    gr_ks_set_expire(ks, t, 0);
    gr_ks_set_expire(ks, t, 5);
    CHECK(gr_ks_expires_count(ks) == 1 && t->expire_at_ms == 5, "set_expire twice counted twice");
    gr_ks_set_expire(ks, t, -7);
    CHECK(gr_ks_expires_count(ks) == 0 && t->expire_at_ms == -1, "negative expire did not persist the key");
    gr_ks_set_expire(ks, t, 9);
    gr_ks_delete(ks, (const uint8_t *)"t", 1);
    CHECK(gr_ks_expires_count(ks) == 0, "delete kept the expire counted");
    gr_ks_free(ks);
}

/* Eviction's sampler (gr_ks_sample, Redis's dictGetSomeKeys) and the access bits that value
 * replacement and rename keep (gr_ks_set_keep_bits): the LFU counter survives an overwrite. */
static void test_sample_and_keep_bits(void) {
    gr_keyspace_t *ks = gr_ks_new(NULL, NULL, 7);
    gr_ks_entry_t *out[64];
    CHECK(gr_ks_sample(ks, out, 8, 0, 100) == 0, "sampled an empty keyspace");
    char name[16];
    for (int i = 0; i < 1000; i++) {
        int n = snprintf(name, sizeof name, "k%d", i);
        gr_ks_entry_t *e = gr_ks_add(ks, (const uint8_t *)name, (size_t)n, 1, NULL);
        if (i % 10 == 0) gr_ks_set_expire(ks, e, 1000 + i);
    }
    for (int round = 0; round < 200; round++) {
        size_t got = gr_ks_sample(ks, out, 16, 0, 160);
        CHECK(got > 0 && got <= 16, "sample of all keys returned %zu", got);
        got = gr_ks_sample(ks, out, 5, 1, SIZE_MAX);
        CHECK(got == 5, "volatile sample with no bucket limit found %zu of 5", got);
        for (size_t i = 0; i < got; i++) CHECK(out[i]->expire_at_ms >= 1000, "volatile sample took a key without expire");
    }
    CHECK(gr_ks_sample(ks, out, 64, 0, SIZE_MAX) == 64, "an unlimited sample stopped short");
    gr_ks_set_keep_bits(ks, 0xFF);
    gr_ks_set_clock(ks, 0x1200);
    gr_ks_entry_t *e = gr_ks_find(ks, (const uint8_t *)"k1", 2);
    e->access_ms = 0x3407;
    gr_ks_replace_value(ks, e, 1, NULL);
    CHECK(e->access_ms == 0x1207, "replace_value kept %llx, not the low byte", (unsigned long long)e->access_ms);
    e->access_ms = 0x5609;
    CHECK(gr_ks_rename(ks, (const uint8_t *)"k1", 2, (const uint8_t *)"moved", 5) == 0, "rename failed");
    e = gr_ks_find(ks, (const uint8_t *)"moved", 5);
    CHECK(e && e->access_ms == 0x1209, "rename kept %llx", e ? (unsigned long long)e->access_ms : 0ULL);
    gr_ks_free(ks);
}

/* ======================= glob tests ======================= */

static int glob(const char *pattern, const char *string, int nocase) {
    return gr_glob_match((const uint8_t *)pattern, strlen(pattern), (const uint8_t *)string, strlen(string), nocase);
}

typedef struct glob_case { const char *pattern, *string; int nocase, expected; } glob_case_t;

static void test_glob_matches_redis_documented_patterns_and_edges(void) {
    static const glob_case_t cases[] = {
        /* KEYS documentation */
        {"h?llo", "hello", 0, 1}, {"h?llo", "hallo", 0, 1}, {"h?llo", "hxllo", 0, 1}, {"h?llo", "hllo", 0, 0},
        {"h*llo", "hllo", 0, 1}, {"h*llo", "heeeello", 0, 1}, {"h*llo", "hellx", 0, 0},
        {"h[ae]llo", "hello", 0, 1}, {"h[ae]llo", "hallo", 0, 1}, {"h[ae]llo", "hillo", 0, 0},
        {"h[^e]llo", "hallo", 0, 1}, {"h[^e]llo", "hbllo", 0, 1}, {"h[^e]llo", "hello", 0, 0},
        {"h[a-b]llo", "hallo", 0, 1}, {"h[a-b]llo", "hbllo", 0, 1}, {"h[a-b]llo", "hcllo", 0, 0},
        /* reversed ranges, several members, escapes */
        {"[z-a]", "m", 0, 1}, {"[z-a]", "A", 0, 0}, {"[a-cx-z]", "y", 0, 1}, {"[a-cx-z]", "d", 0, 0},
        {"[0-9]*", "7up", 0, 1}, {"[^0-9]*", "7up", 0, 0},
        {"h\\*llo", "h*llo", 0, 1}, {"h\\*llo", "hello", 0, 0}, {"\\?", "?", 0, 1}, {"\\?", "x", 0, 0},
        {"\\[a]", "[a]", 0, 1}, {"[\\]]", "]", 0, 1}, {"[\\-]", "-", 0, 1}, {"[\\^x]", "^", 0, 1},
        {"[a\\-z]", "b", 0, 0}, {"[a\\-z]", "-", 0, 1}, {"\\\\", "\\", 0, 1}, {"a\\", "a\\", 0, 1},
        {"[]", "]", 0, 0}, {"[]", "", 0, 0}, {"[^]", "x", 0, 1}, {"[]a]", "]a]", 0, 0},
        /* unterminated classes take the rest of the pattern (Redis) */
        {"hell[o", "hello", 0, 1}, {"[abc", "b", 0, 1}, {"[abc", "d", 0, 0}, {"a[", "a", 0, 0},
        {"a[", "ab", 0, 0}, {"[^", "x", 0, 1}, {"[a-", "-", 0, 1}, {"[\\", "\\", 0, 1}, {"[a-]x", "_", 0, 1},
        /* stars */
        {"*", "anything", 0, 1}, {"**", "x", 0, 1}, {"a**", "a", 0, 1}, {"***", "a", 0, 1}, {"*a", "ba", 0, 1},
        {"*a", "ab", 0, 0}, {"a*b*c", "abbbbbc", 0, 1}, {"a*b*c", "acb", 0, 0}, {"*world*", "hello world again", 0, 1},
        {"*x*y*z*", "axbyczd", 0, 1}, {"*x*y*z", "axbyczd", 0, 0}, {"*?", "a", 0, 1}, {"*?", "", 0, 0},
        {"?*?", "ab", 0, 1}, {"?*?", "a", 0, 0}, {"foo*bar", "foobar", 0, 1}, {"foo*bar", "foobarbar", 0, 1},
        /* empty pattern and string */
        {"", "", 0, 1}, {"", "a", 0, 0}, {"a", "", 0, 0}, {"?", "", 0, 0}, {"*", "", 0, 1}, {"**", "", 0, 1},
        {"*a", "", 0, 0}, {"[a]", "", 0, 0},
        /* nocase */
        {"HELLO", "hello", 1, 1}, {"HELLO", "hello", 0, 0}, {"h[AE]llo", "HELLO", 1, 1}, {"h[^E]llo", "hello", 1, 0},
        {"[A-Z]", "q", 1, 1}, {"[A-Z]", "q", 0, 0}, {"maxmemory*", "MAXMEMORY-policy", 1, 1},
        {"\\H", "h", 1, 1}, {"[\\H]", "h", 1, 1}, {"[\\H]", "h", 0, 0}, {"?X", "ax", 1, 1}, {"[@-@]", "@", 1, 1},
    };
    size_t n = sizeof cases / sizeof cases[0], wrong = 0;
    for (size_t i = 0; i < n; i++) {
        int got = glob(cases[i].pattern, cases[i].string, cases[i].nocase);
        if (got != cases[i].expected) {
            wrong++;
            fprintf(stderr, "glob(\"%s\", \"%s\", nocase=%d) = %d, expected %d\n", cases[i].pattern,
                    cases[i].string, cases[i].nocase, got, cases[i].expected);
        }
    }
    CHECK(wrong == 0, "%zu of %zu glob cases wrong", wrong, n);

    /* Binary safety: NULs and high bytes in both pattern and string. */
    const uint8_t pat1[] = {'a', 0, '*'}, str1[] = {'a', 0, 'b', 'c'};
    const uint8_t pat2[] = {'?', 0}, str2[] = {'x', 0}, str3[] = {'x', 1};
    const uint8_t pat3[] = {'[', 0x80, '-', 0xff, ']'}, str4[] = {0x90}, str5[] = {0x7f};
    const uint8_t pat4[] = {'[', 0xff, '-', 'a', ']'}, str6[] = {'b'};
    CHECK(gr_glob_match(pat1, 3, str1, 4, 0) == 1 && gr_glob_match(pat1, 3, str1, 1, 0) == 0, "NUL in pattern");
    CHECK(gr_glob_match(pat2, 2, str2, 2, 0) == 1 && gr_glob_match(pat2, 2, str3, 2, 0) == 0, "NUL in string");
    CHECK(gr_glob_match(pat3, 5, str4, 1, 0) == 1 && gr_glob_match(pat3, 5, str5, 1, 0) == 0,
          "high-byte range must compare unsigned");
    CHECK(gr_glob_match(pat4, 5, str6, 1, 0) == 1, "reversed high-byte range");
    CHECK(gr_glob_match(NULL, 0, NULL, 0, 0) == 1 && gr_glob_match(NULL, 0, str6, 1, 0) == 0, "NULL, 0 ranges");
}

typedef struct keys_result { const char *pattern; char found[16][64]; size_t count; } keys_result_t;

static int pattern_visit(void *context, gr_ks_entry_t *entry) {
    keys_result_t *r = context;
    if (gr_glob_match((const uint8_t *)r->pattern, strlen(r->pattern), entry->key, entry->key_length, 0) &&
        r->count < 16 && entry->key_length < sizeof r->found[0]) {
        memcpy(r->found[r->count], entry->key, entry->key_length);
        r->found[r->count][entry->key_length] = 0;
        r->count++;
    }
    return 0;
}

static int compare_names(const void *a, const void *b) { return strcmp(a, b); }

/* KEYS pattern over the keyspace, sorted and joined with spaces (like the tcl tests' lsort). */
static void keys_sorted(gr_keyspace_t *ks, const char *pattern, char *out, size_t capacity) {
    keys_result_t r;
    memset(&r, 0, sizeof r);
    r.pattern = pattern;
    gr_ks_iterate(ks, pattern_visit, &r);
    qsort(r.found, r.count, sizeof r.found[0], compare_names);
    out[0] = 0;
    for (size_t i = 0; i < r.count; i++) {
        if (i) strncat(out, " ", capacity - strlen(out) - 1);
        strncat(out, r.found[i], capacity - strlen(out) - 1);
    }
}

static void test_keys_patterns_from_redis_keyspace_tests(void) {
    gr_keyspace_t *ks = gr_ks_new(NULL, NULL, 51);
    const char *names[] = {"key_x", "key_y", "key_z", "foo_a", "foo_b", "foo_c"};
    for (int i = 0; i < 6; i++) gr_ks_add(ks, (const uint8_t *)names[i], strlen(names[i]), 1, NULL);
    char out[256];
    keys_sorted(ks, "foo*", out, sizeof out);
    CHECK(strcmp(out, "foo_a foo_b foo_c") == 0, "KEYS with pattern: %s", out);
    keys_sorted(ks, "*", out, sizeof out);
    CHECK(strcmp(out, "foo_a foo_b foo_c key_x key_y key_z") == 0, "KEYS to get all keys: %s", out);
    CHECK(gr_ks_size(ks) == 6, "DBSIZE %zu", gr_ks_size(ks));
    const char *tagged[] = {"{a}x", "{a}y", "{a}z", "{b}a", "{b}b", "{b}c"};
    for (int i = 0; i < 6; i++) gr_ks_add(ks, (const uint8_t *)tagged[i], strlen(tagged[i]), 1, NULL);
    keys_sorted(ks, "{a}*", out, sizeof out);
    CHECK(strcmp(out, "{a}x {a}y {a}z") == 0, "KEYS with hashtag {a}*: %s", out);
    keys_sorted(ks, "*{b}*", out, sizeof out);
    CHECK(strcmp(out, "{b}a {b}b {b}c") == 0, "KEYS with hashtag *{b}*: %s", out);
    gr_ks_clear(ks);
    gr_ks_add(ks, (const uint8_t *)"dlskeriewrioeuwqoirueioqwrueoqwrueqw", 36, 1, NULL);
    keys_sorted(ks, "*", out, sizeof out);
    CHECK(strcmp(out, "dlskeriewrioeuwqoirueioqwrueoqwrueqw") == 0, "KEYS * with a long key: %s", out);
    gr_ks_clear(ks);
    gr_ks_add(ks, (const uint8_t *)"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 40, 1, NULL);
    double start = now_ns() / 1e9;
    keys_sorted(ks, "a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", out, sizeof out);
    CHECK(out[0] == 0 && now_ns() / 1e9 - start < 1.0, "Regression for pattern matching long nested loops");
    gr_ks_free(ks);
}

static void test_pathological_patterns_finish_fast(void) {
    /* Redis's "very long nested loops": 50000 "*?" against 50000 'a' — no match (the
     * star limit), at once. */
    size_t n = 50000;
    uint8_t *string = malloc(n), *pattern = malloc(2 * n);
    memset(string, 'a', n);
    for (size_t i = 0; i < n; i++) {
        pattern[2 * i] = '*';
        pattern[2 * i + 1] = '?';
    }
    double start = now_ns() / 1e9;
    int r1 = gr_glob_match(pattern, 2 * n, string, n, 0);
    /* a*a*...a*b with 5000 stars against 50000 'a': linear in practice. */
    for (size_t i = 0; i < 5000; i++) {
        pattern[2 * i] = 'a';
        pattern[2 * i + 1] = '*';
    }
    pattern[10000] = 'b';
    int r2 = gr_glob_match(pattern, 10001, string, n, 0);
    /* Below the limit: 500 stars, and a long literal run after one star. */
    int r4 = gr_glob_match(pattern, 1000, string, n, 0);   /* "a*" x 500: matches */
    pattern[1000] = 'b';
    int r5 = gr_glob_match(pattern, 1001, string, n, 0);
    uint8_t *run = malloc(102);
    run[0] = '*';
    memset(run + 1, 'a', 100);
    run[101] = 'b';
    int r6 = gr_glob_match(run, 102, string, n, 0);
    free(run);
    /* 30 stars of "*a" then 'b', the classic exponential case for naive backtracking. */
    int r3 = glob("*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b",
                  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 0);
    double elapsed = now_ns() / 1e9 - start;
    CHECK(r1 == 0 && r2 == 0 && r3 == 0 && r4 == 1 && r5 == 0 && r6 == 0,
          "pathological patterns gave wrong answers (%d %d %d %d %d %d)", r1, r2, r3, r4, r5, r6);
    CHECK(elapsed < 1.0, "pathological patterns took %.3f s", elapsed);

    /* The star limit itself: 1000 stars followed by more pattern are fine, 1001 are not;
     * a trailing star group does not count. */
    size_t stars = GR_GLOB_MAX_STARS;
    for (size_t i = 0; i < stars + 1; i++) {
        pattern[2 * i] = '*';
        pattern[2 * i + 1] = 'a';
    }
    CHECK(gr_glob_match(pattern, 2 * stars, string, stars, 0) == 1, "1000 star groups should match");
    CHECK(gr_glob_match(pattern, 2 * (stars + 1), string, stars + 1, 0) == 0, "1001 star groups should not match");
    for (size_t i = 0; i < stars + 1; i++) {
        pattern[2 * i] = 'a';
        pattern[2 * i + 1] = '*';
    }
    CHECK(gr_glob_match(pattern, 2 * (stars + 1), string, stars + 1, 0) == 1, "a trailing star counted toward the limit");
    free(pattern);
    free(string);
}

/* ---- an independent reference matcher: recursive, with classes compiled to a byte set ---- */

static uint8_t lower(uint8_t c) { return (c >= 'A' && c <= 'Z') ? (uint8_t)(c + 32) : c; }

static void set_add(uint8_t *set, uint8_t c, int nocase) {
    set[c] = 1;
    if (nocase) {
        set[lower(c)] = 1;
        if (c >= 'a' && c <= 'z') set[c - 32] = 1;
    }
}

/* Compiles the class at pattern[0] == '[' into set; returns its length in the pattern. */
static size_t compile_class(const uint8_t *pattern, size_t length, int nocase, uint8_t *set, int *negate) {
    memset(set, 0, 256);
    size_t i = 1;
    *negate = i < length && pattern[i] == '^';
    if (*negate) i++;
    for (;;) {
        if (i >= length) return i;
        if (pattern[i] == '\\' && i + 1 < length) {
            set_add(set, pattern[i + 1], nocase);
            i += 2;
        } else if (pattern[i] == ']') {
            return i + 1;
        } else if (i + 2 < length && pattern[i + 1] == '-') {
            int a = pattern[i], b = pattern[i + 2];
            int lo = a < b ? a : b, hi = a < b ? b : a;
            if (nocase) {
                lo = lower((uint8_t)lo);
                hi = lower((uint8_t)hi);
            }
            for (int c = 0; c < 256; c++) {
                int x = nocase ? lower((uint8_t)c) : c;
                if (x >= lo && x <= hi) set[c] = 1;
            }
            i += 3;
        } else {
            set_add(set, pattern[i], nocase);
            i++;
        }
    }
}

static int reference_match(const uint8_t *p, size_t pl, const uint8_t *s, size_t sl, int nocase) {
    if (pl == 0) return sl == 0;
    if (p[0] == '*') return reference_match(p + 1, pl - 1, s, sl, nocase) ||
                            (sl > 0 && reference_match(p, pl, s + 1, sl - 1, nocase));
    if (sl == 0) return 0;
    size_t token;
    int ok;
    if (p[0] == '?') {
        token = 1;
        ok = 1;
    } else if (p[0] == '[') {
        uint8_t set[256];
        int negate;
        token = compile_class(p, pl, nocase, set, &negate);
        ok = set[s[0]] != negate;
    } else {
        uint8_t literal = p[0];
        token = 1;
        if (p[0] == '\\' && pl >= 2) {
            literal = p[1];
            token = 2;
        }
        ok = literal == s[0] || (nocase && lower(literal) == lower(s[0]));
    }
    return ok && reference_match(p + token, pl - token, s + 1, sl - 1, nocase);
}

static void test_glob_agrees_with_a_reference_matcher_on_random_input(size_t iterations) {
    /* Redis's stringmatchlen_fuzz_test draws bytes 0..127 of up to 31; add a run over a
     * small alphabet heavy in metacharacters, where classes, ranges and escapes meet. */
    static const char alphabet[] = "ab*?[]^-\\A";
    size_t disagreements = 0;
    char example[160] = "";
    for (size_t it = 0; it < iterations; it++) {
        int dense = it % 2;
        size_t pl = below(dense ? 12 : 32), sl = below(dense ? 10 : 32);
        uint8_t *p = malloc(pl ? pl : 1), *s = malloc(sl ? sl : 1);
        for (size_t i = 0; i < pl; i++) p[i] = dense ? (uint8_t)alphabet[below(sizeof alphabet - 1)] : (uint8_t)below(128);
        for (size_t i = 0; i < sl; i++) s[i] = dense ? (uint8_t)"abAB-]^\\*"[below(9)] : (uint8_t)below(128);
        if (!dense && pl && sl && below(2)) {   /* often make the string a near-match */
            for (size_t i = 0; i < sl && i < pl; i++) if (p[i] != '*' && p[i] != '[' && p[i] != '\\' && p[i] != '?') s[i] = p[i];
        }
        int nocase = (int)below(2);
        int got = gr_glob_match(p, pl, s, sl, nocase);
        int want = reference_match(p, pl, s, sl, nocase);
        if (got != want) {
            if (!disagreements++) {
                size_t k = 0;
                k += (size_t)snprintf(example + k, sizeof example - k, "pattern \"");
                for (size_t i = 0; i < pl && k < 100; i++) k += (size_t)snprintf(example + k, sizeof example - k, "\\x%02x", p[i]);
                snprintf(example + k, sizeof example - k, "\" len %zu nocase %d: got %d", sl, nocase, got);
            }
        }
        free(p);
        free(s);
    }
    CHECK(disagreements == 0, "%zu disagreements with the reference; first: %s", disagreements, example);
}

/* gr_siphash reads a message's last partial word in one load when the message is 8 bytes or
 * longer: it must give what the byte-by-byte tail gives (hash values decide bucket and SCAN
 * order), for SipHash-2-4's published vector and for every length and alignment. */
static uint64_t siphash_bytewise(const uint8_t *data, size_t length, uint64_t k0, uint64_t k1, int c, int d) {
    uint64_t v0 = 0x736f6d6570736575ULL ^ k0, v1 = 0x646f72616e646f6dULL ^ k1;
    uint64_t v2 = 0x6c7967656e657261ULL ^ k0, v3 = 0x7465646279746573ULL ^ k1;
    size_t i = 0;
    for (; i + 8 <= length; i += 8) {
        uint64_t m = 0;
        for (int j = 0; j < 8; j++) m |= (uint64_t)data[i + j] << (8 * j);
        v3 ^= m;
        for (int r = 0; r < c; r++) GR_SIP_ROUND(v0, v1, v2, v3);
        v0 ^= m;
    }
    uint64_t last = (uint64_t)length << 56;
    for (size_t j = 0; i + j < length; j++) last |= (uint64_t)data[i + j] << (8 * j);
    v3 ^= last;
    for (int r = 0; r < c; r++) GR_SIP_ROUND(v0, v1, v2, v3);
    v0 ^= last;
    v2 ^= 0xff;
    for (int r = 0; r < d; r++) GR_SIP_ROUND(v0, v1, v2, v3);
    return v0 ^ v1 ^ v2 ^ v3;
}

static void test_siphash_tail_load_matches_the_bytewise_tail(void) {
    uint8_t message[80];
    for (size_t i = 0; i < sizeof message; i++) message[i] = (uint8_t)i;
    const uint64_t k0 = 0x0706050403020100ULL, k1 = 0x0f0e0d0c0b0a0908ULL;
    CHECK(gr_siphash(message, 0, k0, k1, 2, 4) == 0x726fdb47dd0e0e31ULL, "SipHash-2-4 of the empty message");
    CHECK(gr_siphash(message, 15, k0, k1, 2, 4) == 0xa129ca6149be45e5ULL, "SipHash-2-4 of 00..0e (the paper's vector)");
    int ok = 1;
    for (int round = 0; round < 2000 && ok; round++) {
        for (size_t i = 0; i < sizeof message; i++) message[i] = (uint8_t)below(256);
        size_t offset = below(8), length = below(sizeof message - offset + 1);
        uint64_t a = below(UINT64_MAX), b = below(UINT64_MAX);
        ok &= gr_siphash(message + offset, length, a, b, 1, 2) == siphash_bytewise(message + offset, length, a, b, 1, 2);
        ok &= gr_siphash(message + offset, length, a, b, 2, 4) == siphash_bytewise(message + offset, length, a, b, 2, 4);
    }
    CHECK(ok, "gr_siphash equals the byte-by-byte reference for lengths 0..80 at every alignment");
}

int main(int argc, char **argv) {
    size_t differential_operations = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : 400000;
    size_t fuzz_iterations = argc > 2 ? (size_t)strtoull(argv[2], NULL, 10) : 300000;
    if (argc > 3) rng_state = strtoull(argv[3], NULL, 10);

    test_siphash_tail_load_matches_the_bytewise_tail();
    test_200k_keys_are_found_while_the_table_grows_and_shrinks_through_rehash();
    test_random_operations_agree_with_a_plain_model(differential_operations);
    test_rename_moves_value_and_expire_and_overwrites_the_destination();
    test_scan_of_a_quiet_table_visits_every_key_exactly_once();
    test_scan_sees_every_key_present_throughout_while_the_table_resizes_between_calls();
    test_clear_and_free_return_every_byte();
    test_iterate_stops_early_and_lookups_inside_it_do_not_move_buckets();
    test_random_returns_only_present_keys_and_reaches_them_all();
    test_sample_and_keep_bits();
    test_binary_and_empty_keys_are_distinct();
    test_glob_matches_redis_documented_patterns_and_edges();
    test_keys_patterns_from_redis_keyspace_tests();
    test_pathological_patterns_finish_fast();
    test_glob_agrees_with_a_reference_matcher_on_random_input(fuzz_iterations);

    CHECK(gr_mem_allocations() == 0, "%lld allocations still live at exit", (long long)gr_mem_allocations());
    return checks_report();
}
