/* test_list_pma.c — the adaptive PMA list engine (list_pma.c), in C so that it runs under
 * ASan/UBSan. run_c_tests.py builds it with -DGR_LPMA_DEBUG, so the engine runs gr_lpma_check
 * after every mutation and aborts when an invariant breaks. Fixed cases cover each operation
 * and its edges (empty list, pop_range past the length, 0-byte and 1 MB values, growth and
 * shrink, the queue pattern's slack); then a long random sequence drives gr_lpma_* and a plain
 * array of malloc'd values with every operation mixed, comparing results at every step and the
 * whole contents (forward, backward, by index) every 64 steps and at the end.
 *
 * Usage: test_list_pma [steps] [seed]        default 200000 steps
 *        test_list_pma bench                  figures for the PMA and segmented engines side by
 *        side; needs a build without GR_LPMA_DEBUG, e.g. from native/:
 *        gcc -std=gnu11 -D_GNU_SOURCE -O2 -I. core/alloc.c engines/list/list_seg.c
 *            engines/list/list_pma.c tests/test_list_pma.c
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/alloc.h"
#include "engines/list/list_pma.h"
#include "engines/list/list_seg.h"
#include "tests/test_helpers.h"

/* ---- values ------------------------------------------------------------------------- */

static uint8_t value_buffer[5000];

/* Sizes 0..60, now and then 130 B .. ~4 KB. Returns its length; the bytes are in value_buffer. */
static size_t make_list_value(size_t forced_length) {
    static const value_mix_t mix = {40, 700, 995, 20, 60, 130, 4000, 50};
    return make_value(&mix, value_buffer, forced_length);
}

static const uint8_t *text(const char *s) { return (const uint8_t *)s; }

/* ---- comparing ---------------------------------------------------------------------- */

static int compare(const gr_lpma_t *list, const ref_t *ref) {
    if (gr_lpma_check(list) != 0) { fprintf(stderr, "gr_lpma_check failed\n"); return 0; }
    if (gr_lpma_length(list) != ref->length) {
        fprintf(stderr, "length %zu, expected %zu\n", gr_lpma_length(list), ref->length);
        return 0;
    }
    gr_lpma_iter_t iter;
    const uint8_t *data;
    size_t length;
    gr_lpma_iter_init(&iter, list, 0, 0);
    for (size_t i = 0; i < ref->length; i++)
        if (!gr_lpma_iter_next(&iter, &data, &length) || !same(data, length, ref->items[i].data, ref->items[i].length)) {
            fprintf(stderr, "forward mismatch at %zu\n", i);
            return 0;
        }
    if (gr_lpma_iter_next(&iter, &data, &length)) { fprintf(stderr, "forward ran past the end\n"); return 0; }
    if (ref->length) {
        gr_lpma_iter_init(&iter, list, ref->length - 1, 1);
        for (size_t i = ref->length; i-- > 0;)
            if (!gr_lpma_iter_next(&iter, &data, &length) || !same(data, length, ref->items[i].data, ref->items[i].length)) {
                fprintf(stderr, "backward mismatch at %zu\n", i);
                return 0;
            }
        if (gr_lpma_iter_next(&iter, &data, &length)) { fprintf(stderr, "backward ran past 0\n"); return 0; }
    }
    for (size_t i = 0; i < ref->length; i++)
        if (gr_lpma_get(list, i, &data, &length) || !same(data, length, ref->items[i].data, ref->items[i].length)) {
            fprintf(stderr, "get mismatch at %zu\n", i);
            return 0;
        }
    if ((int64_t)gr_lpma_allocated_bytes(list) != gr_mem_used_by(GR_MEM_LIST)) {   /* the only list alive */
        fprintf(stderr, "allocated_bytes %zu, allocator says %lld\n", gr_lpma_allocated_bytes(list),
                (long long)gr_mem_used_by(GR_MEM_LIST));
        return 0;
    }
    return 1;
}

/* ---- fixed cases -------------------------------------------------------------------- */

static void test_an_empty_list_holds_nothing_and_refuses_reads(void) {
    gr_lpma_t list;
    gr_lpma_init(&list);
    const uint8_t *data;
    size_t length;
    CHECK(gr_lpma_check(&list) == 0 && gr_lpma_length(&list) == 0, "empty list is valid");
    CHECK(gr_lpma_get(&list, 0, &data, &length) == -1 && gr_lpma_peek(&list, GR_LPMA_HEAD, &data, &length) == -1,
          "reads of an empty list fail");
    CHECK(gr_lpma_pop(&list, GR_LPMA_TAIL) == -1 && gr_lpma_pop_range(&list, GR_LPMA_HEAD, 5) == 0, "pops fail");
    CHECK(gr_lpma_set(&list, 0, text("x"), 1) == -1 && gr_lpma_insert(&list, 1, text("x"), 1) == -1, "bad index");
    CHECK(gr_lpma_remove_matching(&list, text("x"), 1, 0) == 0 && gr_lpma_delete_range(&list, 0, 3) == 0, "bulk");
    CHECK(gr_lpma_allocated_bytes(&list) == 0 && gr_lpma_front_slack(&list) == 0 && gr_lpma_back_slack(&list) == 0,
          "no memory");
    gr_lpma_iter_t iter;
    gr_lpma_iter_init(&iter, &list, 0, 0);
    CHECK(gr_lpma_iter_next(&iter, &data, &length) == 0, "iterating an empty list yields nothing");
    CHECK(gr_lpma_push(&list, GR_LPMA_TAIL, text("a"), 1) == 0 && gr_lpma_pop(&list, GR_LPMA_HEAD) == 0, "one");
    CHECK(gr_lpma_allocated_bytes(&list) == 0 && gr_mem_used_by(GR_MEM_LIST) == 0, "empty again frees everything");
    gr_lpma_release(&list);
}

static void test_pushes_pops_and_peeks_at_both_ends_keep_order(void) {
    gr_lpma_t list;
    gr_lpma_init(&list);
    char buffer[32];
    for (int i = 0; i < 3000; i++) {
        int n = snprintf(buffer, sizeof buffer, "v%d", i);
        CHECK(gr_lpma_push(&list, i % 3 ? GR_LPMA_TAIL : GR_LPMA_HEAD, text(buffer), (size_t)n) == 0, "push %d", i);
    }
    const uint8_t *data;
    size_t length;
    CHECK(gr_lpma_peek(&list, GR_LPMA_HEAD, &data, &length) == 0 && same(data, length, text("v2997"), 5), "head");
    CHECK(gr_lpma_peek(&list, GR_LPMA_TAIL, &data, &length) == 0 && same(data, length, text("v2999"), 5), "tail");
    CHECK(gr_lpma_get(&list, 1000, &data, &length) == 0 && same(data, length, text("v1"), 2), "middle: the first tail push");
    CHECK(gr_lpma_pop(&list, GR_LPMA_HEAD) == 0 && gr_lpma_pop(&list, GR_LPMA_TAIL) == 0, "scalar pops");
    CHECK(gr_lpma_length(&list) == 2998 && gr_lpma_check(&list) == 0, "length after pops");
    CHECK(gr_lpma_slot_count(&list) >= 2998, "slots hold the values");
    gr_lpma_release(&list);
    CHECK(gr_mem_used_by(GR_MEM_LIST) == 0, "release returns everything");
}

static void test_pop_range_removes_from_one_end_and_clamps_to_the_length(void) {
    gr_lpma_t list;
    gr_lpma_init(&list);
    char buffer[32];
    for (int i = 0; i < 1000; i++) {
        int n = snprintf(buffer, sizeof buffer, "%d", i);
        gr_lpma_push(&list, GR_LPMA_TAIL, text(buffer), (size_t)n);
    }
    const uint8_t *data;
    size_t length;
    CHECK(gr_lpma_pop_range(&list, GR_LPMA_HEAD, 8) == 8, "8 from the head");
    CHECK(gr_lpma_peek(&list, GR_LPMA_HEAD, &data, &length) == 0 && same(data, length, text("8"), 1), "now 8 first");
    CHECK(gr_lpma_pop_range(&list, GR_LPMA_TAIL, 100) == 100, "100 from the tail");
    CHECK(gr_lpma_peek(&list, GR_LPMA_TAIL, &data, &length) == 0 && same(data, length, text("899"), 3), "899 last");
    CHECK(gr_lpma_pop_range(&list, GR_LPMA_HEAD, 0) == 0 && gr_lpma_length(&list) == 892, "0 pops nothing");
    size_t before = gr_lpma_slot_count(&list);
    CHECK(gr_lpma_pop_range(&list, GR_LPMA_TAIL, 850) == 850 && gr_lpma_slot_count(&list) < before,
          "a big counted pop shrinks the array in the same call");
    CHECK(gr_lpma_pop_range(&list, GR_LPMA_HEAD, 1000) == 42 && gr_lpma_length(&list) == 0, "clamped to the length");
    CHECK(gr_lpma_allocated_bytes(&list) == 0, "empty frees everything");
    gr_lpma_release(&list);
}

static void test_zero_length_and_megabyte_values_round_trip(void) {
    gr_lpma_t list;
    gr_lpma_init(&list);
    size_t big = 1u << 20;
    uint8_t *large = malloc(big);
    for (size_t i = 0; i < big; i++) large[i] = (uint8_t)(i * 31 + 7);
    CHECK(gr_lpma_push(&list, GR_LPMA_TAIL, text(""), 0) == 0, "0-byte push");
    CHECK(gr_lpma_push(&list, GR_LPMA_TAIL, large, big) == 0, "1 MB push");
    CHECK(gr_lpma_push(&list, GR_LPMA_HEAD, large, big - 1) == 0, "1 MB - 1 push at the head");
    CHECK(gr_lpma_insert(&list, 1, text(""), 0) == 0, "0-byte insert");
    const uint8_t *data;
    size_t length;
    CHECK(gr_lpma_get(&list, 0, &data, &length) == 0 && same(data, length, large, big - 1), "big head");
    CHECK(gr_lpma_get(&list, 1, &data, &length) == 0 && length == 0, "empty value");
    CHECK(gr_lpma_get(&list, 3, &data, &length) == 0 && same(data, length, large, big), "big tail");
    CHECK(gr_lpma_set(&list, 3, text("small"), 5) == 0 && gr_lpma_get(&list, 3, &data, &length) == 0 &&
          same(data, length, text("small"), 5), "set a big value small");
    gr_lpma_internals_t in;
    gr_lpma_internals(&list, &in);
    CHECK(in.dead_value_bytes <= in.live_value_bytes, "set compacted the arena once dead bytes exceeded live");
    CHECK(gr_lpma_remove_matching(&list, text(""), 0, 0) == 2 && gr_lpma_length(&list) == 2, "LREM of empty values");
    CHECK(gr_lpma_push(&list, GR_LPMA_TAIL, text("x"), 1) == 0 && gr_lpma_pop(&list, GR_LPMA_TAIL) == 0, "pair");
    gr_lpma_internals(&list, &in);
    CHECK(in.elements == 2 && in.live_value_bytes == (big - 1 + 3) + 6, "live bytes count prefixes: %zu", in.live_value_bytes);
    CHECK(in.total_allocated_bytes == gr_lpma_allocated_bytes(&list) &&
          in.total_allocated_bytes >= in.value_bytes_allocated + in.order_structure_bytes + 4 * in.slots, "internals add up");
    free(large);
    gr_lpma_release(&list);
}

static void test_insert_set_delete_range_and_lrem_in_the_middle(void) {
    gr_lpma_t list;
    gr_lpma_init(&list);
    ref_t ref = {0};
    char buffer[32];
    for (int i = 0; i < 2000; i++) {
        int n = snprintf(buffer, sizeof buffer, "%d", i % 7);
        size_t at = below(gr_lpma_length(&list) + 1);
        CHECK(gr_lpma_insert(&list, at, text(buffer), (size_t)n) == 0, "insert");
        ref_insert(&ref, at, text(buffer), (size_t)n);
    }
    CHECK(compare(&list, &ref), "after middle inserts");
    CHECK(gr_lpma_set(&list, 1000, text("changed"), 7) == 0, "set");
    ref_delete(&ref, 1000, 1);
    ref_insert(&ref, 1000, text("changed"), 7);
    gr_lpma_delete_range(&list, 500, 900);   /* spans many segments */
    ref_delete(&ref, 500, 900);
    gr_lpma_delete_range(&list, 10, 1);
    ref_delete(&ref, 10, 1);
    gr_lpma_delete_range(&list, 100, 100000);   /* clamped: a tail range */
    ref_delete(&ref, 100, 100000);
    CHECK(compare(&list, &ref), "after delete ranges");
    CHECK(gr_lpma_remove_matching(&list, text("3"), 1, 2) == ref_remove_matching(&ref, text("3"), 1, 2), "LREM 2");
    CHECK(gr_lpma_remove_matching(&list, text("4"), 1, -3) == ref_remove_matching(&ref, text("4"), 1, -3), "LREM -3");
    CHECK(gr_lpma_remove_matching(&list, text("5"), 1, 0) == ref_remove_matching(&ref, text("5"), 1, 0), "LREM 0");
    CHECK(gr_lpma_remove_matching(&list, text("zz"), 2, 0) == 0, "LREM of a missing value");
    CHECK(compare(&list, &ref), "after LREM");
    const uint8_t *values[3] = {text("a"), text("b"), text("c")};
    size_t lengths[3] = {1, 1, 1};
    CHECK(gr_lpma_push_many(&list, GR_LPMA_HEAD, values, lengths, 3) == 0, "push_many head");
    for (int i = 0; i < 3; i++) ref_insert(&ref, 0, values[i], 1);
    CHECK(gr_lpma_push_many(&list, GR_LPMA_TAIL, values, lengths, 3) == 0, "push_many tail");
    for (int i = 0; i < 3; i++) ref_insert(&ref, ref.length, values[i], 1);
    CHECK(compare(&list, &ref), "push_many keeps repeated-push order");
    gr_lpma_release(&list);
    ref_delete(&ref, 0, ref.length);
    free(ref.items);
}

static void test_a_queue_keeps_its_slack_at_the_tail_and_its_memory_bounded(void) {
    gr_lpma_t list;
    gr_lpma_init(&list);
    uint8_t value[16] = "0123456789abcdef";
    for (int i = 0; i < 2000; i++) gr_lpma_push(&list, GR_LPMA_TAIL, value, 16);
    size_t most = 0;
    for (int i = 0; i < 20000; i++) {
        value[i % 16]++;
        gr_lpma_push(&list, GR_LPMA_TAIL, value, 16);
        if (i % 3 == 0) gr_lpma_push(&list, GR_LPMA_TAIL, value, 16);
        if (i % 3 == 0) gr_lpma_pop_range(&list, GR_LPMA_HEAD, 2);
        else gr_lpma_pop(&list, GR_LPMA_HEAD);
        if (gr_lpma_allocated_bytes(&list) > most) most = gr_lpma_allocated_bytes(&list);
    }
    CHECK(gr_lpma_length(&list) > 0 && gr_lpma_check(&list) == 0, "queue valid");
    CHECK(most < 2000 * 80, "queue memory stays bounded: peak %zu bytes", most);
    gr_lpma_internals_t in;
    gr_lpma_internals(&list, &in);
    CHECK(in.dead_value_bytes <= in.live_value_bytes + 64, "dead bytes are compacted away");
    gr_lpma_release(&list);
}

static void test_a_drained_queue_compacts_in_place_and_gives_memory_back(void) {
    /* The command layer's counted pop: read 8 from the head, then pop_range(8). The values
     * carry their index, so order and content are checked all the way down. */
    enum { VALUES = 12000 };
    gr_lpma_t list;
    gr_lpma_init(&list);
    char buffer[32];
    for (int i = 0; i < VALUES; i++) {
        int n = snprintf(buffer, sizeof buffer, "value-%08d", i);
        gr_lpma_push(&list, GR_LPMA_TAIL, text(buffer), (size_t)n);
    }
    size_t full = gr_lpma_allocated_bytes(&list), full_slots = gr_lpma_slot_count(&list);
    int ok = 1, next = 0;
    size_t at_quarter = 0;
    while (gr_lpma_length(&list) && ok) {
        gr_lpma_iter_t iter;
        gr_lpma_iter_init(&iter, &list, 0, 0);
        const uint8_t *data;
        size_t length;
        size_t take = gr_lpma_length(&list) < 8 ? gr_lpma_length(&list) : 8;
        for (size_t i = 0; i < take && ok; i++, next++) {
            int n = snprintf(buffer, sizeof buffer, "value-%08d", next);
            ok &= gr_lpma_iter_next(&iter, &data, &length) && same(data, length, text(buffer), (size_t)n);
        }
        ok &= gr_lpma_pop_range(&list, GR_LPMA_HEAD, 8) == take;
        if (gr_lpma_length(&list) == VALUES / 4) at_quarter = gr_lpma_allocated_bytes(&list);
        gr_lpma_internals_t in;
        gr_lpma_internals(&list, &in);
        ok &= in.dead_value_bytes <= in.live_value_bytes + 64;
    }
    CHECK(ok && next == VALUES, "every value came out once, in order (%d of %d)", next, VALUES);
    CHECK(at_quarter && at_quarter < full / 2, "a quarter-full queue holds under half the memory: %zu of %zu bytes",
          at_quarter, full);
    CHECK(gr_lpma_allocated_bytes(&list) == 0 && full_slots > 0, "drained: nothing allocated");
    /* Head pushes put the arena in reverse list order: compaction copies instead. */
    for (int i = 0; i < 3000; i++) {
        int n = snprintf(buffer, sizeof buffer, "h%d", i);
        gr_lpma_push(&list, GR_LPMA_HEAD, text(buffer), (size_t)n);
    }
    gr_lpma_pop_range(&list, GR_LPMA_TAIL, 2500);
    gr_lpma_internals_t in;
    gr_lpma_internals(&list, &in);
    const uint8_t *data;
    size_t length;
    CHECK(in.dead_value_bytes <= in.live_value_bytes + 64 && gr_lpma_get(&list, 0, &data, &length) == 0 &&
          same(data, length, text("h2999"), 5) && gr_lpma_get(&list, 499, &data, &length) == 0 &&
          same(data, length, text("h2500"), 5), "a head-pushed list compacts by copying and keeps its order");
    gr_lpma_release(&list);
}

static void test_end_pushes_and_pops_are_counted_in_the_tree_when_it_is_read(void) {
    /* End pushes and pops within an end segment are pending, not in the tree: every index
     * read and every middle change between them must still see the true counts. */
    gr_lpma_t list;
    gr_lpma_init(&list);
    ref_t ref = {0};
    char buffer[32];
    int ok = 1;
    for (int i = 0; i < 4000 && ok; i++) {
        int n = snprintf(buffer, sizeof buffer, "%d", i);
        gr_lpma_end_t end = i % 5 == 0 ? GR_LPMA_HEAD : GR_LPMA_TAIL;
        ok &= gr_lpma_push(&list, end, text(buffer), (size_t)n) == 0;
        ref_insert(&ref, end == GR_LPMA_TAIL ? ref.length : 0, text(buffer), (size_t)n);
        if (i % 7 == 0 && ref.length > 2) {
            ok &= gr_lpma_pop_range(&list, GR_LPMA_HEAD, 2) == 2;
            ref_delete(&ref, 0, 2);
        }
        const uint8_t *data;
        size_t length, at = (size_t)i * 7919 % ref.length;
        ok &= gr_lpma_get(&list, at, &data, &length) == 0 && same(data, length, ref.items[at].data, ref.items[at].length);
        if (i % 97 == 0) {
            size_t middle = ref.length / 2;
            ok &= gr_lpma_insert(&list, middle, text("mid"), 3) == 0;
            ref_insert(&ref, middle, text("mid"), 3);
        }
    }
    CHECK(ok && compare(&list, &ref), "index reads and middle inserts between end operations see every value");
    gr_lpma_release(&list);
    ref_delete(&ref, 0, ref.length);
    free(ref.items);
}

/* ---- the long random sequence ------------------------------------------------------- */

static void random_test(size_t steps) {
    gr_lpma_t list;
    gr_lpma_init(&list);
    ref_t ref = {0};
    size_t target = 200, longest = 0, most_slots = 0;
    int ok = 1;
    const char *op = "";
    const uint8_t *data;
    size_t length;
    for (size_t step = 0; step < steps && ok; step++) {
        if (step % 1000 == 0) target = below(8) ? 1 + below(600) : 1 + below(3000);
        size_t n = ref.length;
        int grow = n < target;
        uint64_t r = below(100);
        if (grow && r >= 25 && r < 60 && below(10) < 7) r = below(25);
        gr_lpma_end_t end = below(2) ? GR_LPMA_TAIL : GR_LPMA_HEAD;
        if (r < 16 || n == 0) {
            op = "push";
            size_t len = make_list_value(SIZE_MAX);
            ok &= gr_lpma_push(&list, end, value_buffer, len) == 0;
            ref_insert(&ref, end == GR_LPMA_TAIL ? ref.length : 0, value_buffer, len);
        } else if (r < 22) {
            op = "push_many";
            size_t count = 1 + below(64);
            uint8_t *copies[64];
            size_t lengths[64];
            for (size_t i = 0; i < count; i++) {
                lengths[i] = make_list_value(SIZE_MAX);
                copies[i] = malloc(lengths[i] + 1);
                memcpy(copies[i], value_buffer, lengths[i]);
            }
            ok &= gr_lpma_push_many(&list, end, (const uint8_t *const *)copies, lengths, count) == 0;
            for (size_t i = 0; i < count; i++) {
                ref_insert(&ref, end == GR_LPMA_TAIL ? ref.length : 0, copies[i], lengths[i]);
                free(copies[i]);
            }
        } else if (r < 25) {
            op = "insert";
            size_t at = below(n + 1), len = make_list_value(SIZE_MAX);
            ok &= gr_lpma_insert(&list, at, value_buffer, len) == 0;
            ref_insert(&ref, at, value_buffer, len);
        } else if (r < 35) {
            op = "pop";
            size_t at = end == GR_LPMA_TAIL ? n - 1 : 0;
            ok &= gr_lpma_peek(&list, end, &data, &length) == 0 && same(data, length, ref.items[at].data, ref.items[at].length);
            ok &= gr_lpma_pop(&list, end) == 0;
            ref_delete(&ref, at, 1);
        } else if (r < 45) {
            op = "pop_range";
            size_t count = below(6) ? 1 + below(16) : below(n + 20);
            size_t expect = count < n ? count : n;
            /* read what a counted pop would reply, as the command layer does */
            gr_lpma_iter_t iter;
            gr_lpma_iter_init(&iter, &list, end == GR_LPMA_TAIL ? n - 1 : 0, end == GR_LPMA_TAIL);
            for (size_t i = 0; i < expect && ok; i++) {
                size_t at = end == GR_LPMA_TAIL ? n - 1 - i : i;
                ok &= gr_lpma_iter_next(&iter, &data, &length) && same(data, length, ref.items[at].data, ref.items[at].length);
            }
            ok &= gr_lpma_pop_range(&list, end, count) == expect;
            ref_delete(&ref, end == GR_LPMA_TAIL ? n - expect : 0, expect);
        } else if (r < 55) {
            op = "get";
            size_t at = below(n);
            ok &= gr_lpma_get(&list, at, &data, &length) == 0 && same(data, length, ref.items[at].data, ref.items[at].length);
            ok &= gr_lpma_get(&list, n, &data, &length) == -1;
        } else if (r < 65) {
            op = "set";
            size_t at = below(n), len = make_list_value(below(2) ? ref.items[at].length : SIZE_MAX);
            ok &= gr_lpma_set(&list, at, value_buffer, len) == 0;
            ref_delete(&ref, at, 1);
            ref_insert(&ref, at, value_buffer, len);
        } else if (r < 72) {
            op = "delete_range";
            size_t start = below(n + 1), count = below(4) ? below(10) : below(n + 2);
            ok &= gr_lpma_delete_range(&list, start, count) == 0;
            ref_delete(&ref, start, count);
        } else if (r < 76) {
            op = "remove_matching";
            size_t len;
            if (below(4)) {
                ref_value_t *pick = &ref.items[below(n)];
                len = pick->length;
                memcpy(value_buffer, pick->data, len);
            } else {
                len = make_list_value(SIZE_MAX);
            }
            int64_t count = (int64_t)below(7) - 3;
            if (below(5) == 0) count *= 9;
            ok &= gr_lpma_remove_matching(&list, value_buffer, len, count) == ref_remove_matching(&ref, value_buffer, len, count);
        } else {
            op = "iterate";
            size_t start = below(n + 2), walk = below(60);
            int backward = below(2);
            gr_lpma_iter_t iter;
            gr_lpma_iter_init(&iter, &list, start, backward);
            size_t at = start;
            for (size_t i = 0; i < walk && ok; i++) {
                int more = start < n && (backward ? i <= start : at < n);
                int got = gr_lpma_iter_next(&iter, &data, &length);
                ok &= got == more;
                if (!got || !more) break;
                ok &= same(data, length, ref.items[at].data, ref.items[at].length);
                at = backward ? at - 1 : at + 1;
            }
            continue;   /* not a mutation */
        }
        ok &= gr_lpma_check(&list) == 0 && gr_lpma_length(&list) == ref.length;
        if (ok && step % 64 == 0) ok &= compare(&list, &ref);
        if (!ok) fprintf(stderr, "random test: step %zu (%s) went wrong, length %zu\n", step, op, ref.length);
        if (ref.length > longest) longest = ref.length;
        if (gr_lpma_slot_count(&list) > most_slots) most_slots = gr_lpma_slot_count(&list);
    }
    if (ok) ok &= compare(&list, &ref);
    CHECK(ok, "random sequence against the reference model");
    printf("random: %zu steps, longest %zu values, most slots %zu\n", steps, longest, most_slots);
    gr_lpma_release(&list);
    ref_delete(&ref, 0, ref.length);
    free(ref.items);
}

/* ---- the micro-benchmark ------------------------------------------------------------ */

#define BENCH_N 100000
static volatile size_t sink;

static void bench_pma(void) {
    uint8_t value[16] = "0123456789abcdef";
    gr_lpma_t list;
    gr_lpma_init(&list);
    double t0 = now_ns();
    for (int i = 0; i < BENCH_N; i++) { value[i % 16]++; gr_lpma_push(&list, GR_LPMA_TAIL, value, 16); }
    double push = (now_ns() - t0) / BENCH_N;
    double bytes = (double)gr_lpma_allocated_bytes(&list) / BENCH_N;
    gr_lpma_internals_t in;
    gr_lpma_internals(&list, &in);
    const uint8_t *data;
    size_t length;
    int reps = 2000000;
    t0 = now_ns();
    for (int i = 0; i < reps; i++) { gr_lpma_get(&list, BENCH_N / 2 + (i & 7), &data, &length); sink += length; }
    double lindex = (now_ns() - t0) / reps;
    /* a work queue at steady state: 8 in at the tail, then 8 out at the head */
    int rounds = 200000;
    t0 = now_ns();
    for (int i = 0; i < rounds; i++) {
        for (int k = 0; k < 8; k++) gr_lpma_push(&list, GR_LPMA_TAIL, value, 16);
        gr_lpma_iter_t it;
        gr_lpma_iter_init(&it, &list, 0, 0);
        for (int k = 0; k < 8; k++) { gr_lpma_iter_next(&it, &data, &length); sink += length; }
        gr_lpma_pop_range(&list, GR_LPMA_HEAD, 8);
    }
    double range_round = (now_ns() - t0) / rounds;
    t0 = now_ns();
    for (int i = 0; i < rounds; i++) {
        for (int k = 0; k < 8; k++) gr_lpma_push(&list, GR_LPMA_TAIL, value, 16);
        for (int k = 0; k < 8; k++) {
            gr_lpma_peek(&list, GR_LPMA_HEAD, &data, &length);
            sink += length;
            gr_lpma_pop(&list, GR_LPMA_HEAD);
        }
    }
    double scalar_round = (now_ns() - t0) / rounds;
    /* the pops alone: 8-value counted pops from a full list */
    t0 = now_ns();
    int pops = BENCH_N / 8;
    for (int i = 0; i < pops; i++) gr_lpma_pop_range(&list, GR_LPMA_HEAD, 8);
    double range_only = (now_ns() - t0) / pops;
    printf("pma: push tail %.1f ns | LINDEX middle %.1f ns | push 8 + pop_range(8) %.1f ns | push 8 + 8 pops %.1f ns"
           " | pop_range(8) alone %.1f ns | %.2f bytes/item\n", push, lindex, range_round, scalar_round, range_only, bytes);
    printf("pma internals at 100k: elements %zu, live %zu, dead %zu, arena %zu, slots %zu, front slack %zu,"
           " back slack %zu, order structure %zu, total %zu\n", in.elements, in.live_value_bytes, in.dead_value_bytes,
           in.value_bytes_allocated, in.slots, in.front_slack, in.back_slack, in.order_structure_bytes,
           in.total_allocated_bytes);
    gr_lpma_release(&list);
}

static void bench_seg(void) {
    uint8_t value[16] = "0123456789abcdef";
    gr_lseg_t list;
    gr_lseg_init(&list, 8192);
    double t0 = now_ns();
    for (int i = 0; i < BENCH_N; i++) { value[i % 16]++; gr_lseg_push(&list, GR_LSEG_TAIL, value, 16); }
    double push = (now_ns() - t0) / BENCH_N;
    double bytes = (double)gr_lseg_allocated_bytes(&list) / BENCH_N;
    const uint8_t *data;
    size_t length;
    int reps = 2000000;
    t0 = now_ns();
    for (int i = 0; i < reps; i++) { gr_lseg_get(&list, BENCH_N / 2 + (i & 7), &data, &length); sink += length; }
    double lindex = (now_ns() - t0) / reps;
    int rounds = 200000;
    t0 = now_ns();
    for (int i = 0; i < rounds; i++) {
        for (int k = 0; k < 8; k++) gr_lseg_push(&list, GR_LSEG_TAIL, value, 16);
        gr_lseg_iter_t it;
        gr_lseg_iter_init(&it, &list, 0, 0);
        for (int k = 0; k < 8; k++) { gr_lseg_iter_next(&it, &data, &length); sink += length; }
        gr_lseg_delete_range(&list, 0, 8);
    }
    double range_round = (now_ns() - t0) / rounds;
    t0 = now_ns();
    for (int i = 0; i < rounds; i++) {
        for (int k = 0; k < 8; k++) gr_lseg_push(&list, GR_LSEG_TAIL, value, 16);
        for (int k = 0; k < 8; k++) {
            gr_lseg_peek(&list, GR_LSEG_HEAD, &data, &length);
            sink += length;
            gr_lseg_pop(&list, GR_LSEG_HEAD);
        }
    }
    double scalar_round = (now_ns() - t0) / rounds;
    t0 = now_ns();
    int pops = BENCH_N / 8;
    for (int i = 0; i < pops; i++)
        for (int k = 0; k < 8; k++) { gr_lseg_peek(&list, GR_LSEG_HEAD, &data, &length); sink += length; gr_lseg_pop(&list, GR_LSEG_HEAD); }
    double scalar_only = (now_ns() - t0) / pops;
    printf("seg: push tail %.1f ns | LINDEX middle %.1f ns | push 8 + delete_range(0,8) %.1f ns | push 8 + 8 pops %.1f ns"
           " | 8 peek+pops alone %.1f ns | %.2f bytes/item\n", push, lindex, range_round, scalar_round, scalar_only, bytes);
    gr_lseg_release(&list);
}

static int bench(void) {
#ifdef GR_LPMA_DEBUG
    (void)bench_pma;
    (void)bench_seg;
    fprintf(stderr, "bench: this build checks every invariant after every mutation (GR_LPMA_DEBUG);"
                    " build without it (see the top of this file)\n");
    return 2;
#else
    for (int run = 0; run < 3; run++) { bench_pma(); bench_seg(); }
    return 0;
#endif
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "bench") == 0) return bench();
    size_t steps = argc > 1 ? strtoull(argv[1], NULL, 10) : 200000;
    if (argc > 2) rng_state = strtoull(argv[2], NULL, 10);
    test_an_empty_list_holds_nothing_and_refuses_reads();
    test_pushes_pops_and_peeks_at_both_ends_keep_order();
    test_pop_range_removes_from_one_end_and_clamps_to_the_length();
    test_zero_length_and_megabyte_values_round_trip();
    test_insert_set_delete_range_and_lrem_in_the_middle();
    test_a_queue_keeps_its_slack_at_the_tail_and_its_memory_bounded();
    test_a_drained_queue_compacts_in_place_and_gives_memory_back();
    test_end_pushes_and_pops_are_counted_in_the_tree_when_it_is_read();
    random_test(steps);
    CHECK(gr_mem_used_by(GR_MEM_LIST) == 0 && gr_mem_allocations() == 0, "every byte and allocation returned");
    return checks_report();
}
