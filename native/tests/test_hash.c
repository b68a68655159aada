/* test_hash.c — the hash engine (engines/hash/: the compact map, the move to the table engine,
 * field expiry) against a reference model: a plain array of (field, value, expiry) searched
 * linearly. Random sets (keeping or dropping TTLs), deletes, expiries, persists, time moving
 * forward with lazy expiry, copies, iteration and whole scans, over small limits so hashes
 * cross from compact to the table many times; every few steps the whole hash is compared.
 * Run by run_c_tests.py (plain and under ASan/UBSan); argument: steps (default 200000).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engines/hash/hash.h"
#include "test_helpers.h"

#define POOL 300

typedef struct model_entry {
    uint8_t field[16];
    size_t field_length;
    uint8_t value[96];
    size_t value_length;
    int64_t expire;   /* -1 none */
} model_entry_t;

typedef struct model {
    model_entry_t entries[POOL];
    size_t count;
} model_t;

static void field_of(size_t index, uint8_t *out, size_t *length) { *length = (size_t)snprintf((char *)out, 16, "f%zu", index); }

static model_entry_t *model_find(model_t *m, const uint8_t *field, size_t length) {
    for (size_t i = 0; i < m->count; i++)
        if (same(m->entries[i].field, m->entries[i].field_length, field, length)) return &m->entries[i];
    return NULL;
}

static void model_delete(model_t *m, model_entry_t *e) { *e = m->entries[--m->count]; }

static size_t model_expire(model_t *m, int64_t now) {
    size_t removed = 0;
    for (size_t i = 0; i < m->count;) {
        if (m->entries[i].expire >= 0 && m->entries[i].expire <= now) {
            model_delete(m, &m->entries[i]);
            removed++;
        } else {
            i++;
        }
    }
    return removed;
}

typedef struct seen { size_t count, matched; model_t *model; } seen_t;

static void count_visit(void *context, const gr_hash_entry_t *entry) {
    seen_t *seen = context;
    seen->count++;
    model_entry_t *e = model_find(seen->model, entry->field, entry->field_length);
    if (e && same(e->value, e->value_length, entry->value, entry->value_length)) seen->matched++;
}

static void compare(const gr_hash_t *hash, model_t *m, const char *when, size_t step) {
    CHECK(gr_hash_count(hash) == m->count, "%s step %zu: count %zu, model %zu", when, step, gr_hash_count(hash), m->count);
    size_t matched = 0, iterated = 0;
    gr_hash_iter_t iter;
    gr_hash_entry_t entry;
    gr_hash_iter_start(hash, &iter);
    while (gr_hash_iter_next(&iter, &entry)) {
        iterated++;
        model_entry_t *e = model_find(m, entry.field, entry.field_length);
        if (e && same(e->value, e->value_length, entry.value, entry.value_length) &&
            gr_hash_field_expire(hash, entry.field, entry.field_length) == (e->expire >= 0 ? e->expire : -1))
            matched++;
    }
    CHECK(iterated == m->count && matched == m->count, "%s step %zu: iterated %zu, matched %zu of %zu", when, step,
          iterated, matched, m->count);
    /* a whole scan visits every field at least once, and only fields of the hash */
    seen_t seen = {0, 0, m};
    uint64_t cursor = 0;
    do cursor = gr_hash_scan(hash, cursor, 7, count_visit, &seen); while (cursor);
    CHECK(seen.count >= m->count && seen.matched == seen.count, "%s step %zu: scan saw %zu (%zu matched), model %zu",
          when, step, seen.count, seen.matched, m->count);
}

static void random_test(size_t steps) {
    gr_hash_limits_t limits = {16, 40};
    gr_hash_t *hash = gr_hash_new();
    model_t *m = calloc(1, sizeof *m);
    int64_t now = 1000;
    size_t conversions = 0;
    for (size_t step = 0; step < steps; step++) {
        uint8_t field[16], value[96];
        size_t field_length, value_length = below(rnd() % 8 == 0 ? 60 : 20);
        field_of(below(rnd() % 4 == 0 ? POOL : 24), field, &field_length);
        for (size_t i = 0; i < value_length; i++) value[i] = (uint8_t)rnd();
        model_entry_t *e = model_find(m, field, field_length);
        int op = (int)below(100);
        int compact_before = gr_hash_is_compact(hash);
        if (op < 45) {
            int keep = (int)below(2);
            int result = gr_hash_set(hash, field, field_length, value, value_length, keep, &limits);
            CHECK(result == (e ? 0 : 1), "step %zu: set returned %d", step, result);
            if (!e) {
                e = &m->entries[m->count++];
                memcpy(e->field, field, field_length);
                e->field_length = field_length;
                e->expire = -1;
            } else if (!keep) {
                e->expire = -1;
            }
            memcpy(e->value, value, value_length);
            e->value_length = value_length;
        } else if (op < 60) {
            CHECK(gr_hash_delete(hash, field, field_length) == (e != NULL), "step %zu: delete", step);
            if (e) model_delete(m, e);
        } else if (op < 72) {
            int64_t at = now + (int64_t)below(50);
            int result = gr_hash_set_field_expire(hash, field, field_length, at, &limits);
            CHECK(result == (e ? 0 : -1), "step %zu: set_field_expire %d", step, result);
            if (e) e->expire = at;
        } else if (op < 77) {
            int had = e && e->expire >= 0;
            CHECK(gr_hash_persist_field(hash, field, field_length) == had, "step %zu: persist", step);
            if (e) e->expire = -1;
        } else if (op < 85) {
            now += (int64_t)below(10);
            size_t removed = gr_hash_expire_due(hash, now);
            size_t expected = model_expire(m, now);
            CHECK(removed == expected, "step %zu: expire_due removed %zu, model %zu", step, removed, expected);
        } else if (op < 95) {
            gr_hash_entry_t entry;
            int found = gr_hash_get(hash, field, field_length, &entry);
            CHECK(found == (e != NULL) && (!found || same(entry.value, entry.value_length, e->value, e->value_length)),
                  "step %zu: get", step);
            int64_t expire = gr_hash_field_expire(hash, field, field_length);
            CHECK(expire == (e ? (e->expire >= 0 ? e->expire : -1) : -2), "step %zu: field_expire %lld", step,
                  (long long)expire);
        } else if (op < 97) {
            gr_hash_t *copy = gr_hash_duplicate(hash);
            CHECK(copy != NULL, "step %zu: duplicate", step);
            if (copy) {
                compare(copy, m, "copy", step);
                gr_hash_free(copy);
            }
        } else if (op < 98 && m->count) {
            gr_hash_entry_t entry;
            CHECK(gr_hash_random(hash, rnd(), &entry) && model_find(m, entry.field, entry.field_length),
                  "step %zu: random", step);
        } else {   /* start again: empty, as a deleted key would be */
            gr_hash_free(hash);
            hash = gr_hash_new();
            m->count = 0;
        }
        conversions += compact_before && !gr_hash_is_compact(hash);
        if (gr_hash_count(hash) == 0 && !gr_hash_is_compact(hash) && below(4) == 0) {
            gr_hash_free(hash);   /* the command layer deletes an empty hash: do so too, sometimes */
            hash = gr_hash_new();
        }
        if (step % 97 == 0) compare(hash, m, "hash", step);
        CHECK(strcmp(gr_hash_encoding_name(hash), gr_hash_is_compact(hash)
                                                      ? (gr_hash_next_expire(hash) != INT64_MAX ? "listpackex" : "listpack")
                                                      : "hashtable") == 0,
              "step %zu: encoding %s", step, gr_hash_encoding_name(hash));
    }
    compare(hash, m, "end", steps);
    CHECK(conversions > 10, "the hash moved to the table %zu times", conversions);
    gr_hash_free(hash);
    free(m);
    CHECK(gr_hash_volatile_hashes() == 0, "volatile hashes left: %zu", gr_hash_volatile_hashes());
    CHECK(gr_mem_used_by(GR_MEM_HASH) == 0, "hash memory left: %lld", (long long)gr_mem_used_by(GR_MEM_HASH));
}

static void compact_test(void) {
    gr_hcompact_t map;
    gr_hcompact_init(&map);
    CHECK(gr_hcompact_set(&map, (const uint8_t *)"a", 1, (const uint8_t *)"1", 1) == 1, "add a");
    CHECK(gr_hcompact_set(&map, (const uint8_t *)"b", 1, (const uint8_t *)"22", 2) == 1, "add b");
    CHECK(gr_hcompact_set(&map, (const uint8_t *)"a", 1, (const uint8_t *)"333", 3) == 0, "replace a");
    gr_hcompact_pair_t pair;
    CHECK(gr_hcompact_at(&map, 0, &pair) && same(pair.field, pair.field_length, (const uint8_t *)"a", 1) &&
              same(pair.value, pair.value_length, (const uint8_t *)"333", 3),
          "a replaced in place keeps its position");
    CHECK(gr_hcompact_check(&map) == 0 && map.count == 2, "invariants");
    CHECK(gr_hcompact_delete(&map, (const uint8_t *)"a", 1) == 1 && gr_hcompact_delete(&map, (const uint8_t *)"a", 1) == 0,
          "delete once");
    gr_hcompact_release(&map);
}

int main(int argc, char **argv) {
    size_t steps = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : 200000;
    compact_test();
    random_test(steps);
    return checks_report();
}
