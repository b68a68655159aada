/* test_list.c — the list engines (list.c over list_compact.c, list_seg.c and list_pma.c), in
 * C so that they run under ASan/UBSan. The random test, the generic fixed cases and the
 * memory figures run once per target engine (segmented, then PMA); the cases about leaves
 * are the segmented engine's own. A differential random test drives gr_list_* and a plain array
 * of malloc'd values with the same operations (pushes and pops at both ends, get, set with
 * equal and different sizes, insert, delete_range, remove_matching with positive, negative
 * and zero counts, trim, iteration both ways from random starts, pop_each's values checked as
 * they are handed over, pop_peeked, each over random ranges), with values of 0..100
 * bytes and now and then bigger than a leaf, across the compact -> segmented conversion and
 * under three configurations; after every operation gr_list_check must pass and the whole
 * contents must match, read forward, backward and by index. Then: fixed cases (among them
 * that pop_each leaves exactly the layout pop_range leaves), memory per
 * item for 100,000 x 16-byte tail pushes (asserted <= 18 bytes), LINDEX/LRANGE timings
 * (printed only), and that every byte and allocation is returned at the end.
 * Usage: test_list [seed] [operations-per-configuration]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/alloc.h"
#include "engines/list/list.h"
#include "tests/test_helpers.h"

/* ---- values ------------------------------------------------------------------------- */

static uint8_t value_buffer[40000];

/* Sizes 0..100, and now and then bigger than a leaf (leaf_bytes / 2 up to 2.5 leaves, as the
 * buffer allows). Returns its length; the bytes are in value_buffer. */
static size_t make_list_value(uint32_t leaf_bytes, size_t forced_length) {
    const size_t large_span = leaf_bytes * 2 < sizeof value_buffer ? leaf_bytes * 2 : sizeof value_buffer - leaf_bytes;
    const value_mix_t mix = {30, 600, 985, 20, 100, leaf_bytes / 2, large_span, 45};
    return make_value(&mix, value_buffer, forced_length);
}

/* ---- comparing ---------------------------------------------------------------------- */

/* The engine lists made by new_list convert to: main() runs the generic cases over both. */
static gr_list_encoding_t target_engine = GR_LIST_SEGMENTED;
static gr_list_t *new_list(const gr_list_config_t *config) { return gr_list_new_for(config, target_engine); }

static const char *current_op;
static size_t current_step;

static int compare(const gr_list_t *list, const ref_t *ref) {
    int ok = 1;
    if (gr_list_check(list) != 0) { fprintf(stderr, "gr_list_check failed\n"); ok = 0; }
    if (gr_list_length(list) != ref->length) {
        fprintf(stderr, "length %zu, expected %zu\n", gr_list_length(list), ref->length);
        return 0;
    }
    gr_list_iter_t iter;
    gr_value_t value;
    gr_list_iter_init(&iter, list, 0, GR_LIST_HEAD);
    for (size_t i = 0; i < ref->length && ok; i++) {
        if (!gr_list_iter_next(&iter, &value) || !same(value.data, value.length, ref->items[i].data, ref->items[i].length)) {
            fprintf(stderr, "forward mismatch at %zu\n", i);
            ok = 0;
        }
    }
    if (ok && gr_list_iter_next(&iter, &value)) { fprintf(stderr, "forward iteration ran past the end\n"); ok = 0; }
    if (ref->length) {
        gr_list_iter_init(&iter, list, ref->length - 1, GR_LIST_TAIL);
        for (size_t i = ref->length; i-- > 0 && ok;) {
            if (!gr_list_iter_next(&iter, &value) || !same(value.data, value.length, ref->items[i].data, ref->items[i].length)) {
                fprintf(stderr, "backward mismatch at %zu\n", i);
                ok = 0;
            }
        }
        if (ok && gr_list_iter_next(&iter, &value)) { fprintf(stderr, "backward iteration ran past 0\n"); ok = 0; }
        for (int probe = 0; probe < 4 && ok; probe++) {
            size_t i = below(ref->length);
            if (gr_list_get(list, i, &value) != 0 || !same(value.data, value.length, ref->items[i].data, ref->items[i].length)) {
                fprintf(stderr, "get mismatch at %zu\n", i);
                ok = 0;
            }
        }
    }
    if (gr_list_get(list, ref->length, &value) != -1) { fprintf(stderr, "get past the end succeeded\n"); ok = 0; }
    if ((int64_t)gr_list_allocated_bytes(list) != gr_mem_used_by(GR_MEM_LIST)) {   /* the only list alive */
        fprintf(stderr, "allocated_bytes %zu, allocator says %lld\n", gr_list_allocated_bytes(list),
                (long long)gr_mem_used_by(GR_MEM_LIST));
        ok = 0;
    }
    if (!ok) fprintf(stderr, "  after step %zu (%s), encoding %s, length %zu\n", current_step, current_op,
                     gr_list_encoding_name(list), gr_list_length(list));
    return ok;
}

/* ---- the differential random test --------------------------------------------------- */

/* gr_list_pop_each's visitor in the random test: the i-th value must be the reference's i-th
 * from that end (the reference is cut after the call). */
typedef struct popped {
    const ref_t *ref;
    gr_list_end_t end;
    size_t seen;
    int ok;
    size_t first;   /* gr_list_each: the range's start (from the head) */
} popped_t;

static void check_popped(void *context, const gr_bytes_t *values, size_t count) {
    popped_t *popped = context;
    if (count == 0 || count > GR_LIST_VISIT_RUN) {
        fprintf(stderr, "pop_each: a run of %zu values\n", count);
        popped->ok = 0;
    }
    for (size_t i = 0; i < count; i++) {   /* every value of the run still readable at its end */
        size_t at = popped->end == GR_LIST_HEAD ? popped->first + popped->seen : popped->ref->length - 1 - popped->seen;
        if (at >= popped->ref->length ||
            !same(values[i].data, values[i].length, popped->ref->items[at].data, popped->ref->items[at].length)) {
            fprintf(stderr, "pop_each: value %zu from the %s differs\n", popped->seen, popped->end == GR_LIST_HEAD ? "head" : "tail");
            popped->ok = 0;
        }
        popped->seen++;
    }
}

static void random_test(const char *name, const gr_list_config_t *config, size_t operations, size_t max_target) {
    ref_t ref = {0};
    gr_list_t *list = new_list(config);
    CHECK(list != NULL, "%s: gr_list_new", name);
    size_t target = below(max_target);
    int converted = 0, ok = 1;
    size_t plain_pushes = 0, max_length = 0, max_leaves = 0, lists = 1;
    for (size_t step = 0; step < operations && ok; step++) {
        current_step = step;
        if (step % 500 == 0) target = below(max_target) + 1;
        size_t length = ref.length;
        int grow = length < target;
        uint64_t op = below(100);
        /* while below the target size, most shrinking operations become pushes or inserts */
        if (grow && ((op >= 22 && op < 34) || (op >= 68 && op < 87)) && below(10) < 8) op = below(2) ? 0 : 60;
        if (!grow && length > target + target / 2 && below(3) == 0) op = 70;
        gr_value_t value;
        if (op < 22 || length == 0) {   /* push, one or many, either end */
            current_op = "push";
            gr_list_end_t end = below(2) ? GR_LIST_TAIL : GR_LIST_HEAD;
            if (grow && below(4) == 0) {
                current_op = "push_many";
                size_t count = 1 + below(12);
                gr_value_t values[12];
                uint8_t *copies[12];
                for (size_t i = 0; i < count; i++) {
                    size_t n = make_list_value(config->leaf_bytes, SIZE_MAX);
                    copies[i] = malloc(n ? n : 1);
                    memcpy(copies[i], value_buffer, n);
                    values[i].data = copies[i];
                    values[i].length = n;
                }
                ok &= gr_list_push_many(list, end, values, count) == 0;
                for (size_t i = 0; i < count; i++) {
                    ref_insert(&ref, end == GR_LIST_TAIL ? ref.length : 0, values[i].data, values[i].length);
                    free(copies[i]);
                }
            } else if (grow || below(3) == 0) {
                size_t n = make_list_value(config->leaf_bytes, SIZE_MAX);
                plain_pushes += n > config->leaf_bytes / 2;
                ok &= gr_list_push(list, end, value_buffer, n) == 0;
                ref_insert(&ref, end == GR_LIST_TAIL ? ref.length : 0, value_buffer, n);
            } else {
                current_op = "pop";
                ok &= gr_list_peek(list, end, &value) == 0;
                size_t at = end == GR_LIST_TAIL ? length - 1 : 0;
                ok &= same(value.data, value.length, ref.items[at].data, ref.items[at].length);
                ok &= gr_list_pop(list, end) == 0;
                ref_delete(&ref, at, 1);
            }
        } else if (op < 34 && below(4) == 0) {   /* a counted pop: one range mutation */
            current_op = "pop_range";
            gr_list_end_t end = below(2) ? GR_LIST_TAIL : GR_LIST_HEAD;
            size_t count = below(3) ? 1 + below(10) : below(length + 3);
            size_t expected = count < length ? count : length;
            ok &= gr_list_pop_range(list, end, count) == expected;
            ref_delete(&ref, end == GR_LIST_TAIL ? length - expected : 0, expected);
        } else if (op < 34 && below(3) == 0) {   /* a counted pop that reads what it removes */
            current_op = "pop_each";
            gr_list_end_t end = below(2) ? GR_LIST_TAIL : GR_LIST_HEAD;
            size_t count = below(3) ? 1 + below(10) : below(length + 3);
            size_t expected = count < length ? count : length;
            popped_t popped = {&ref, end, 0, 1, 0};
            ok &= gr_list_pop_each(list, end, count, check_popped, &popped) == expected;
            ok &= popped.seen == expected && popped.ok;
            ref_delete(&ref, end == GR_LIST_TAIL ? length - expected : 0, expected);
        } else if (op < 34) {   /* pop, from either end, half of the time as pop_peeked */
            current_op = "pop";
            gr_list_end_t end = below(2) ? GR_LIST_TAIL : GR_LIST_HEAD;
            size_t at = end == GR_LIST_TAIL ? length - 1 : 0;
            ok &= gr_list_peek(list, end, &value) == 0;
            ok &= same(value.data, value.length, ref.items[at].data, ref.items[at].length);
            int peeked = below(2);
            if (peeked) current_op = "pop_peeked";
            ok &= (peeked ? gr_list_pop_peeked(list, end, value) : gr_list_pop(list, end)) == 0;
            ref_delete(&ref, at, 1);
        } else if (op < 42) {   /* get */
            current_op = "get";
            size_t at = below(length);
            ok &= gr_list_get(list, at, &value) == 0;
            ok &= same(value.data, value.length, ref.items[at].data, ref.items[at].length);
        } else if (op < 54) {   /* set: equal size half of the time */
            current_op = "set";
            size_t at = below(length);
            size_t n = below(2) ? make_list_value(config->leaf_bytes, ref.items[at].length)
                                : make_list_value(config->leaf_bytes, SIZE_MAX);
            ok &= gr_list_set(list, at, value_buffer, n) == 0;
            ref_set(&ref, at, value_buffer, n);
        } else if (op < 68) {   /* insert anywhere, the end included */
            current_op = "insert";
            size_t at = below(length + 1);
            size_t n = make_list_value(config->leaf_bytes, SIZE_MAX);
            ok &= gr_list_insert(list, at, value_buffer, n) == 0;
            ref_insert(&ref, at, value_buffer, n);
        } else if (op < 76) {   /* delete a range: small mostly, now and then large */
            current_op = "delete_range";
            size_t start = below(length + 1);
            size_t count = below(8) ? below(8) + below(3) * below(40) : below(length + 2);
            if (below(8) == 0) start = 0;
            ok &= gr_list_delete_range(list, start, count) == 0;
            ref_delete(&ref, start, count);
        } else if (op < 83) {   /* LREM with a value that is in the list, or not */
            current_op = "remove_matching";
            size_t n;
            if (below(4)) {
                ref_value_t *pick = &ref.items[below(length)];
                n = pick->length;
                memcpy(value_buffer, pick->data, n);
            } else {
                n = make_list_value(config->leaf_bytes, SIZE_MAX);
            }
            int64_t count = (int64_t)below(5) - 2;
            if (below(5) == 0) count *= 7;
            int64_t got = gr_list_remove_matching(list, value_buffer, n, count);
            int64_t expected = ref_remove_matching(&ref, value_buffer, n, count);
            if (got != expected) fprintf(stderr, "remove_matching returned %lld, expected %lld\n", (long long)got, (long long)expected);
            ok &= got == expected;
        } else if (op < 87) {   /* trim */
            current_op = "trim";
            size_t start = below(4) ? below(length / 4 + 1) : below(length + 1);
            size_t stop = start + below(length + 1);
            if (below(10) == 0) stop = start > 0 ? start - 1 : 0;   /* sometimes empty */
            ok &= gr_list_trim(list, start, stop) == 0;
            if (start > stop || start >= length) {
                ref_clear(&ref);
            } else {
                if (stop < length - 1) ref_delete(&ref, stop + 1, length - 1 - stop);
                ref_delete(&ref, 0, start);
            }
        } else if (below(4) == 0) {   /* each: a random range, the start sometimes past the end */
            current_op = "each";
            size_t start = below(length + 2), count = below(4) ? below(40) : below(length + 3);
            size_t expected = start >= length ? 0 : count < length - start ? count : length - start;
            popped_t seen = {&ref, GR_LIST_HEAD, 0, 1, start};
            gr_list_each(list, start, count, check_popped, &seen);
            ok &= seen.ok && seen.seen == expected;
        } else {   /* iterate from a random start, either way, a random number of steps */
            current_op = "iterate";
            size_t start = below(length + 2);   /* sometimes past the end */
            int backward = below(2);
            size_t steps = below(40);
            gr_list_iter_t iter;
            gr_list_iter_init(&iter, list, start, backward ? GR_LIST_TAIL : GR_LIST_HEAD);
            size_t at = start;
            for (size_t i = 0; i < steps && ok; i++) {
                int expected_more = start < length && (backward ? i <= start : at < length);
                int got = gr_list_iter_next(&iter, &value);
                ok &= got == expected_more;
                if (!got || !expected_more) break;
                ok &= same(value.data, value.length, ref.items[at].data, ref.items[at].length);
                at = backward ? at - 1 : at + 1;
            }
        }
        if (!ok) fprintf(stderr, "%s: step %zu (%s) returned a wrong result\n", name, step, current_op);
        ok &= compare(list, &ref);
        if (gr_list_encoding(list) == target_engine) converted = 1;
        ok &= gr_list_encoding(list) == GR_LIST_COMPACT || gr_list_encoding(list) == target_engine;
        if (ref.length > max_length) max_length = ref.length;
        if (gr_list_encoding(list) == target_engine && gr_list_leaf_count(list) > max_leaves)
            max_leaves = gr_list_leaf_count(list);
        if (ref.length == 0 && below(2)) {   /* the caller frees empty lists: start over */
            gr_list_free(list);
            list = new_list(config);
            lists++;
        }
    }
    CHECK(ok, "%s: differential test (seed and step above)", name);
    CHECK(converted, "%s: the list reached the %s engine", name, gr_list_engine_name(target_engine));
    printf("[%s] %s: %zu operations, %zu lists, longest %zu values, most leaves %zu, %zu pushes of values over half a leaf\n",
           gr_list_engine_name(target_engine), name, operations, lists, max_length, max_leaves, plain_pushes);
    gr_list_free(list);
    ref_clear(&ref);
    free(ref.items);
}

/* ---- fixed cases -------------------------------------------------------------------- */

static void count_visit(void *context, const gr_bytes_t *values, size_t count) {
    (void)values;
    *(size_t *)context += count;
}

/* gr_list_pop_each leaves the very layout gr_list_pop_range leaves (leaves, slots, merges:
 * GOBLIN.LIST.INTERNALS must not tell LMPOP's path from the old one): two lists given the same
 * pushes, one popped each way with the same counts from random ends, compared after each. */
static void test_pop_each_leaves_what_pop_range_leaves(void) {
    gr_list_config_t tiny = {8, 128, 64, 256};
    int ok = 1;
    for (int round = 0; round < 60 && ok; round++) {
        gr_list_t *a = new_list(&tiny), *b = new_list(&tiny);
        size_t pushes = 1 + below(round < 30 ? 300 : 3000);
        for (size_t i = 0; i < pushes; i++) {
            gr_list_end_t end = below(4) ? GR_LIST_TAIL : GR_LIST_HEAD;
            size_t n = make_list_value(tiny.leaf_bytes, SIZE_MAX);
            ok &= gr_list_push(a, end, value_buffer, n) == 0 && gr_list_push(b, end, value_buffer, n) == 0;
        }
        while (ok && gr_list_length(a)) {
            gr_list_end_t end = below(4) ? GR_LIST_HEAD : GR_LIST_TAIL;
            size_t count = below(4) ? 1 + below(20) : below(gr_list_length(a) + 3), seen = 0;
            size_t removed = gr_list_pop_each(a, end, count, count_visit, &seen);
            ok &= removed == gr_list_pop_range(b, end, count) && seen == removed;
            gr_list_internals_t x, y;
            gr_list_internals(a, &x);
            gr_list_internals(b, &y);
            ok &= gr_list_check(a) == 0 && strcmp(x.representation, y.representation) == 0 && x.elements == y.elements &&
                  x.live_value_bytes == y.live_value_bytes && x.units == y.units && x.front_slack == y.front_slack &&
                  x.back_slack == y.back_slack;
            /* (not order_structure_bytes nor total_allocated_bytes: they count the allocator's
             * usable sizes, and the two lists' interleaved allocations meet different heaps) */
            for (size_t i = 0; ok && i < gr_list_length(a); i += 1 + below(8)) {
                gr_value_t u, v;
                ok &= gr_list_get(a, i, &u) == 0 && gr_list_get(b, i, &v) == 0 && same(u.data, u.length, v.data, v.length);
            }
        }
        gr_list_free(a);
        gr_list_free(b);
    }
    CHECK(ok, "[%s] pop_each leaves the layout and values pop_range leaves", gr_list_engine_name(target_engine));
}

static const uint8_t *text(const char *s) { return (const uint8_t *)s; }

static void test_encodings_and_thresholds(void) {
    gr_list_config_t config;
    gr_list_config_default(&config);
    CHECK(config.compact_max_entries == 128 && config.compact_max_bytes == 8192 && config.compact_max_value == 64,
          "default thresholds");
    gr_list_t *list = gr_list_new(&config);
    CHECK(strcmp(gr_list_encoding_name(list), "listpack") == 0, "a new list is compact");
    for (int i = 0; i < 128; i++) gr_list_push(list, GR_LIST_TAIL, text("0123456789abcdef"), 16);
    CHECK(gr_list_encoding(list) == GR_LIST_COMPACT, "128 entries stay compact");
    gr_list_push(list, GR_LIST_TAIL, text("x"), 1);
    CHECK(strcmp(gr_list_encoding_name(list), "quicklist") == 0, "the 129th entry converts");
    CHECK(gr_list_check(list) == 0 && gr_list_length(list) == 129, "converted list is sound");
    gr_list_free(list);

    list = gr_list_new(&config);
    uint8_t big[65];
    memset(big, 'v', sizeof big);
    gr_list_push(list, GR_LIST_TAIL, big, 64);
    CHECK(gr_list_encoding(list) == GR_LIST_COMPACT, "a 64-byte value stays compact");
    gr_list_set(list, 0, big, 65);
    CHECK(gr_list_encoding(list) == GR_LIST_SEGMENTED, "LSET with a 65-byte value converts");
    gr_value_t value;
    CHECK(gr_list_get(list, 0, &value) == 0 && value.length == 65, "the value survives the conversion");
    gr_list_free(list);

    list = gr_list_new(&config);   /* bytes: 60-byte values take 62 bytes, 8192/62 = 132 > 128 */
    config.compact_max_entries = 1000;
    gr_list_t *by_bytes = gr_list_new(&config);
    size_t pushed = 0;
    while (gr_list_encoding(by_bytes) == GR_LIST_COMPACT) { gr_list_push(by_bytes, GR_LIST_HEAD, big, 60); pushed++; }
    CHECK(pushed == 8192 / 62 + 1, "compact_max_bytes converts (%zu pushes)", pushed);
    CHECK(gr_list_check(by_bytes) == 0, "byte-converted list is sound");
    gr_list_free(by_bytes);
    gr_list_free(list);
}

/* Redis's list-max-listpack-size in the engine's terms (CONFIG SET list-max-listpack-size). */
static void test_listpack_size_maps_onto_the_thresholds(void) {
    gr_list_config_t config, defaults;
    gr_list_config_default(&defaults);
    gr_list_config_from_listpack_size(&config, -2);
    CHECK(memcmp(&config, &defaults, sizeof config) == 0, "-2 is the default configuration");
    gr_list_config_from_listpack_size(&config, 4);
    CHECK(config.compact_max_entries == 4 && config.compact_max_bytes == 8192 && config.leaf_bytes == 8192,
          "4: four values, 8 KiB safety limit");
    gr_list_config_from_listpack_size(&config, 0);
    CHECK(config.compact_max_entries == 1, "0 counts as 1");
    gr_list_config_from_listpack_size(&config, -1);
    CHECK(config.compact_max_bytes == 4096 && config.leaf_bytes == 4096 && config.compact_max_entries == 128, "-1: 4 KiB");
    gr_list_config_from_listpack_size(&config, -5);
    CHECK(config.compact_max_bytes == 65536 && config.leaf_bytes == 32768, "-5: 64 KiB, leaves stop at 32 KiB");
    gr_list_config_from_listpack_size(&config, INT32_MIN);
    CHECK(config.compact_max_bytes == 65536, "below -5 is -5");
    gr_list_config_from_listpack_size(&config, 3);
    gr_list_t *list = gr_list_new(&config);
    for (int i = 0; i < 3; i++) gr_list_push(list, GR_LIST_TAIL, text("v"), 1);
    CHECK(gr_list_encoding(list) == GR_LIST_COMPACT, "3 values stay compact under 3");
    gr_list_push(list, GR_LIST_TAIL, text("v"), 1);
    CHECK(gr_list_encoding(list) == GR_LIST_SEGMENTED && gr_list_check(list) == 0, "the 4th converts");
    gr_list_free(list);
}

static void test_pma_target_converts_and_reports(void) {
    gr_list_t *list = gr_list_new_for(NULL, GR_LIST_PMA);
    CHECK(gr_list_target(list) == GR_LIST_PMA && strcmp(gr_list_encoding_name(list), "listpack") == 0,
          "a new PMA-target list starts compact");
    gr_list_internals_t internals;
    gr_list_internals(list, &internals);
    CHECK(strcmp(internals.representation, "listpack") == 0 && internals.elements == 0, "compact internals");
    for (int i = 0; i < 129; i++) gr_list_push(list, GR_LIST_TAIL, text("abc"), 3);
    CHECK(gr_list_encoding(list) == GR_LIST_PMA && strcmp(gr_list_encoding_name(list), "pma") == 0,
          "the 129th entry converts to pma");
    gr_list_internals(list, &internals);
    CHECK(strcmp(internals.representation, "pma") == 0 && strcmp(internals.units_name, "slots") == 0 &&
          internals.elements == 129 && internals.units >= 129 && internals.live_value_bytes == 129 * 4,
          "pma internals: %zu elements, %zu slots, %zu live", internals.elements, internals.units,
          internals.live_value_bytes);
    CHECK(gr_list_pop_range(list, GR_LIST_HEAD, 8) == 8 && gr_list_length(list) == 121 && gr_list_check(list) == 0,
          "pop_range takes 8 from the head");
    CHECK(gr_list_pop_range(list, GR_LIST_TAIL, 500) == 121 && gr_list_length(list) == 0, "pop_range clamps");
    gr_list_free(list);
    list = gr_list_new(NULL);
    for (int i = 0; i < 200; i++) gr_list_push(list, GR_LIST_TAIL, text("abc"), 3);
    gr_list_internals(list, &internals);
    CHECK(strcmp(internals.representation, "segmented") == 0 && strcmp(internals.units_name, "leaves") == 0 &&
          internals.units == gr_list_leaf_count(list) && internals.live_value_bytes == 200 * 4 &&
          internals.total_allocated_bytes == gr_list_allocated_bytes(list), "segmented internals");
    gr_list_free(list);
}

static void test_push_many_order_and_lrem(void) {
    gr_list_t *list = new_list(NULL);
    gr_value_t values[3] = {{text("a"), 1}, {text("b"), 1}, {text("c"), 1}};
    CHECK(gr_list_push_many(list, GR_LIST_HEAD, values, 3) == 0, "push_many");
    gr_value_t value;
    gr_list_get(list, 0, &value);
    CHECK(value.length == 1 && value.data[0] == 'c', "LPUSH a b c leaves c first");
    gr_list_push_many(list, GR_LIST_TAIL, values, 3);   /* c b a a b c */
    CHECK(gr_list_remove_matching(list, text("a"), 1, -1) == 1, "LREM -1 removes one");
    gr_list_get(list, 2, &value);
    CHECK(value.data[0] == 'a' && gr_list_length(list) == 5, "LREM -1 removed the last a");   /* c b a b c */
    CHECK(gr_list_remove_matching(list, text("c"), 1, 0) == 2, "LREM 0 removes all");
    CHECK(gr_list_remove_matching(list, text("zz"), 2, 0) == 0, "LREM of an absent value");
    CHECK(gr_list_remove_matching(list, text("b"), 1, 1) == 1, "LREM 1");
    gr_list_get(list, 0, &value);
    CHECK(value.data[0] == 'a' && gr_list_length(list) == 2, "LREM 1 removed the first b");
    gr_list_iter_t iter;
    gr_list_iter_init(&iter, list, 2, GR_LIST_HEAD);
    CHECK(gr_list_iter_next(&iter, &value) == 0, "an iterator past the end yields nothing");
    CHECK(gr_list_set(list, 2, text("x"), 1) == -1 && gr_list_insert(list, 3, text("x"), 1) == -1,
          "set/insert out of range fail");
    CHECK(gr_list_insert(list, 2, text("x"), 1) == 0 && gr_list_length(list) == 3, "insert at length appends");
    gr_list_free(list);
}

/* A batched tail append (a snapshot load, RPUSH of many) leaves the same leaves as one push at a
 * time: same values, same leaf count, sound checkpoints; values of every size class
 * (empty, a checkpoint group's worth of tiny ones, plain-leaf sized) cross leaf boundaries. */
static void test_push_many_at_the_tail_lays_leaves_as_pushes_do(void) {
    gr_list_config_t tiny = {8, 128, 64, 256};
    const gr_list_config_t *configs[2] = {&tiny, NULL};
    static uint8_t big[300];
    memset(big, 'b', sizeof big);
    for (int c = 0; c < 2; c++) {
        gr_list_t *batched = new_list(configs[c]), *single = new_list(configs[c]);
        gr_value_t values[100];
        uint8_t text_buffer[100][24];
        int ok = 1;
        for (size_t round = 0; round < 60 && ok; round++) {
            size_t count = 1 + (round * 37) % 100;
            for (size_t i = 0; i < count; i++) {
                size_t n = (round + i) % 13 == 0 ? 0 : (round + i) % 29 == 0 ? sizeof big : 1 + (round * 7 + i) % 20;
                if (n == sizeof big) values[i].data = big;
                else {
                    for (size_t k = 0; k < n; k++) text_buffer[i][k] = (uint8_t)('a' + (round + i + k) % 26);
                    values[i].data = text_buffer[i];
                }
                values[i].length = n;
                ok &= gr_list_push(single, GR_LIST_TAIL, values[i].data, n) == 0;
            }
            ok &= gr_list_push_many(batched, GR_LIST_TAIL, values, count) == 0;
            ok &= gr_list_check(batched) == 0;
        }
        CHECK(ok && gr_list_length(batched) == gr_list_length(single), "batched and single tail pushes (config %d)", c);
        /* (the bytes may differ: a batch converts from the compact encoding at its start, where
         * single pushes convert one value later, and the directory grows from another size) */
        CHECK(gr_list_leaf_count(batched) == gr_list_leaf_count(single), "the same leaves (%zu vs %zu)",
              gr_list_leaf_count(batched), gr_list_leaf_count(single));
        gr_list_iter_t a, b;
        gr_value_t x, y;
        gr_list_iter_init(&a, batched, 0, GR_LIST_HEAD);
        gr_list_iter_init(&b, single, 0, GR_LIST_HEAD);
        while (gr_list_iter_next(&a, &x)) {
            ok &= gr_list_iter_next(&b, &y) && same(x.data, x.length, y.data, y.length);
        }
        CHECK(ok, "the same values in the same order (config %d)", c);
        gr_list_free(batched);
        gr_list_free(single);
    }
}

static void test_oversize_values_get_their_own_leaf(void) {
    gr_list_t *list = gr_list_new(NULL);
    static uint8_t huge[100000];
    for (size_t i = 0; i < sizeof huge; i++) huge[i] = (uint8_t)(i * 7);
    for (int i = 0; i < 200; i++) gr_list_push(list, GR_LIST_TAIL, text("small"), 5);
    size_t before = gr_list_leaf_count(list);
    CHECK(gr_list_insert(list, 100, huge, sizeof huge) == 0, "insert a 100 KB value in the middle");
    CHECK(gr_list_leaf_count(list) == before + 2, "it split a leaf and got its own (%zu -> %zu leaves)",
          before, gr_list_leaf_count(list));
    gr_value_t value;
    CHECK(gr_list_get(list, 100, &value) == 0 && value.length == sizeof huge && memcmp(value.data, huge, sizeof huge) == 0,
          "the big value reads back");
    CHECK(gr_list_set(list, 100, huge + 1, sizeof huge - 1) == 0 && gr_list_check(list) == 0, "replace it with another big one");
    CHECK(gr_list_set(list, 100, text("tiny"), 4) == 0 && gr_list_check(list) == 0, "replace it with a small one");
    CHECK(gr_list_get(list, 100, &value) == 0 && value.length == 4, "the small one reads back");
    CHECK(gr_list_push(list, GR_LIST_HEAD, huge, sizeof huge) == 0 && gr_list_push(list, GR_LIST_TAIL, huge, 9000) == 0,
          "big values at both ends");
    CHECK(gr_list_check(list) == 0 && gr_list_length(list) == 203, "still sound");
    gr_list_free(list);
}

static void test_inserting_tiny_values_grows_the_checkpoint_table(void) {
    gr_list_config_t config = {2, 64, 64, 256};
    gr_list_t *list = gr_list_new(&config);
    uint8_t wide[50];
    memset(wide, 'w', sizeof wide);
    for (int i = 0; i < 3; i++) gr_list_push(list, GR_LIST_TAIL, wide, sizeof wide);   /* sized for ~4 values */
    int ok = 1;
    for (int i = 0; i < 150 && ok; i++) {
        ok &= gr_list_insert(list, 1 + (size_t)i % (gr_list_length(list) - 1), NULL, 0) == 0;
        ok &= gr_list_check(list) == 0;
    }
    CHECK(ok && gr_list_length(list) == 153, "150 empty values inserted between wide ones");
    CHECK(gr_list_remove_matching(list, NULL, 0, 0) == 150 && gr_list_length(list) == 3 && gr_list_check(list) == 0,
          "and removed again");
    gr_list_free(list);

    list = gr_list_new(NULL);
    gr_list_push(list, GR_LIST_TAIL, wide, 10);
    CHECK(gr_list_allocated_bytes(list) == (size_t)gr_mem_used_by(GR_MEM_LIST), "compact allocated_bytes is exact");
    gr_list_free(list);
}

static void test_queue_patterns_stay_bounded(void) {
    gr_list_t *list = new_list(NULL);
    uint8_t v[16] = "queue-value-0000";
    for (int i = 0; i < 300; i++) gr_list_push(list, GR_LIST_TAIL, v, 16);
    size_t bytes = gr_list_allocated_bytes(list);
    int ok = 1;
    for (int i = 0; i < 300000 && ok; i++) {   /* RPUSH + LPOP, then LPUSH + RPOP */
        v[15] = (uint8_t)i;
        gr_list_end_t in = i < 150000 ? GR_LIST_TAIL : GR_LIST_HEAD;
        ok &= gr_list_push(list, in, v, 16) == 0;
        ok &= gr_list_pop(list, in == GR_LIST_TAIL ? GR_LIST_HEAD : GR_LIST_TAIL) == 0;
        if (i % 9973 == 0) ok &= gr_list_check(list) == 0;
    }
    CHECK(ok && gr_list_check(list) == 0 && gr_list_length(list) == 300, "300k queue operations");
    CHECK(gr_list_allocated_bytes(list) <= 2 * bytes + 16384, "queue memory stays bounded (%zu -> %zu)", bytes,
          gr_list_allocated_bytes(list));
    gr_list_free(list);
}

/* ---- memory and timing -------------------------------------------------------------- */

static gr_list_t *build_16_byte_list(uint32_t leaf_bytes, gr_list_end_t end, size_t n, double *bytes_per_item) {
    gr_list_config_t config;
    gr_list_config_default(&config);
    if (leaf_bytes) config.leaf_bytes = leaf_bytes;
    int64_t before = gr_mem_used_by(GR_MEM_LIST);
    gr_list_t *list = new_list(&config);
    uint8_t v[16];
    for (size_t i = 0; i < n; i++) {
        size_t digits = i;   /* "v" and 15 decimal digits: 16 bytes */
        v[0] = 'v';
        for (int d = 15; d >= 1; d--) { v[d] = (uint8_t)('0' + digits % 10); digits /= 10; }
        if (gr_list_push(list, end, v, 16) != 0) break;
    }
    *bytes_per_item = (double)(gr_mem_used_by(GR_MEM_LIST) - before) / (double)n;
    return list;
}

static void test_memory_and_speed(void) {
    const size_t n = 100000;
    const char *engine = gr_list_engine_name(target_engine);
    /* segmented: the quicklist-like bound; pma: its packed target (17 arena + 4 slot + slack) */
    const double bound = target_engine == GR_LIST_PMA ? 28.0 : 18.0;
    double per_item;
    gr_list_t *list = build_16_byte_list(0, GR_LIST_TAIL, n, &per_item);
    CHECK(gr_list_length(list) == n && gr_list_check(list) == 0, "100k tail pushes");
    CHECK(gr_list_encoding(list) == target_engine, "100k values are held by the target engine");
    CHECK((double)gr_list_allocated_bytes(list) / (double)n == per_item, "allocated_bytes agrees with the allocator");
    printf("[%s] memory: 100000 x 16 B tail pushes: %.2f bytes/item (%zu leaves/segments)\n", engine, per_item,
           gr_list_leaf_count(list));
    CHECK(per_item <= bound, "%s: <= %.0f bytes/item (got %.2f)", engine, bound, per_item);
    gr_list_internals_t internals;
    gr_list_internals(list, &internals);
    CHECK(internals.elements == n && internals.total_allocated_bytes == gr_list_allocated_bytes(list) &&
          internals.live_value_bytes == 17 * n, "%s internals: %zu elements, %zu live bytes", engine,
          internals.elements, internals.live_value_bytes);

    gr_value_t value;
    volatile size_t sink = 0;
    const int rounds = 2000000;
    double t0 = now_ns();
    for (int i = 0; i < rounds; i++) { gr_list_get(list, 50000, &value); sink += value.length; }
    double lindex_mid = (now_ns() - t0) / rounds;
    t0 = now_ns();
    for (int i = 0; i < rounds; i++) { gr_list_get(list, 0, &value); sink += value.length; }
    double lindex_head = (now_ns() - t0) / rounds;
    t0 = now_ns();
    for (int i = 0; i < rounds; i++) { gr_list_get(list, n - 1, &value); sink += value.length; }
    double lindex_tail = (now_ns() - t0) / rounds;
    size_t *indexes = malloc(4096 * sizeof *indexes);
    for (int i = 0; i < 4096; i++) indexes[i] = below(n);
    t0 = now_ns();
    for (int i = 0; i < rounds; i++) { gr_list_get(list, indexes[i & 4095], &value); sink += value.length; }
    double lindex_random = (now_ns() - t0) / rounds;
    free(indexes);
    t0 = now_ns();
    for (int i = 0; i < rounds / 4; i++) {
        gr_list_iter_t iter;
        gr_list_iter_init(&iter, list, 49992, GR_LIST_HEAD);
        for (int k = 0; k < 16 && gr_list_iter_next(&iter, &value); k++) sink += value.length;
    }
    double lrange16 = (now_ns() - t0) / (rounds / 4);
    uint8_t v[16];
    memcpy(v, "0000000000xxxxxx", 16);
    t0 = now_ns();
    for (int i = 0; i < rounds; i++) { v[0] = (uint8_t)i; gr_list_set(list, 50000, v, 16); }
    double lset = (now_ns() - t0) / rounds;
    t0 = now_ns();
    for (int i = 0; i < rounds; i++) { gr_list_push(list, GR_LIST_TAIL, v, 16); gr_list_pop(list, GR_LIST_TAIL); }
    double pair = (now_ns() - t0) / rounds;
    printf("[%s] speed: LINDEX 50000 %.1f ns/op, LINDEX 0 %.1f, LINDEX -1 %.1f, LINDEX random %.1f, "
           "LRANGE 49992 50007 %.1f ns, LSET 50000 %.1f ns, RPUSH+RPOP %.1f ns\n",
           engine, lindex_mid, lindex_head, lindex_tail, lindex_random, lrange16, lset, pair);
    CHECK(gr_list_check(list) == 0, "list sound after the timing loops");
    (void)sink;
    gr_list_free(list);

    list = build_16_byte_list(4096, GR_LIST_TAIL, n, &per_item);
    t0 = now_ns();
    for (int i = 0; i < rounds; i++) { gr_list_get(list, 50000, &value); sink += value.length; }
    printf("[%s] compare: 4 KiB leaves: %.2f bytes/item, LINDEX 50000 %.1f ns/op\n", engine, per_item, (now_ns() - t0) / rounds);
    gr_list_free(list);
    list = build_16_byte_list(0, GR_LIST_HEAD, n, &per_item);
    CHECK(gr_list_check(list) == 0, "100k head pushes");
    printf("[%s] compare: 100000 x 16 B head pushes: %.2f bytes/item\n", engine, per_item);
    CHECK(per_item <= bound, "%s: head-built list also <= %.0f bytes/item (got %.2f)", engine, bound, per_item);
    gr_list_free(list);
}

int main(int argc, char **argv) {
    uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 10) : 20240601;
    size_t operations = argc > 2 ? strtoull(argv[2], NULL, 10) : 10000;
    rng_state = seed;
    int64_t allocations = gr_mem_allocations();
    printf("seed %llu, %zu operations per configuration\n", (unsigned long long)seed, operations);

    test_encodings_and_thresholds();
    test_listpack_size_maps_onto_the_thresholds();
    test_pma_target_converts_and_reports();
    test_oversize_values_get_their_own_leaf();
    test_inserting_tiny_values_grows_the_checkpoint_table();

    gr_list_config_t tiny = {8, 128, 64, 256};     /* many small leaves: splits, merges, plain leaves */
    gr_list_config_t small = {32, 1024, 64, 512};
    gr_list_config_t standard;
    gr_list_config_default(&standard);
    const gr_list_encoding_t targets[2] = {GR_LIST_SEGMENTED, GR_LIST_PMA};
    for (int t = 0; t < 2; t++) {
        target_engine = targets[t];
        test_push_many_order_and_lrem();
        test_push_many_at_the_tail_lays_leaves_as_pushes_do();
        test_queue_patterns_stay_bounded();
        test_pop_each_leaves_what_pop_range_leaves();
        random_test("tiny leaves", &tiny, operations, 400);
        random_test("small leaves", &small, operations, 800);
        random_test("default config", &standard, operations, 2500);
        test_memory_and_speed();
    }

    CHECK(gr_mem_used_by(GR_MEM_LIST) == 0, "every list byte freed (%lld left)", (long long)gr_mem_used_by(GR_MEM_LIST));
    CHECK(gr_mem_allocations() == allocations, "every allocation freed (%lld left)",
          (long long)(gr_mem_allocations() - allocations));
    return checks_report();
}
