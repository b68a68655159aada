/* test_set.c — the set engine (engines/set/set.h) against a reference model: random adds,
 * removes, membership tests, random picks, iteration, scans and copies, checked after every
 * step against a plain array of members, with the encoding each step must leave (Redis 7.2's
 * conversion rules, restated here from set.h so a drift in either shows up). Run under
 * ASan/UBSan by run_c_tests.py --sanitize.
 *
 *     test_set [ops] [seed]
 */
#include <inttypes.h>

#include "core/number.h"
#include "engines/set/set.h"
#include "tests/test_helpers.h"

/* ---- the reference: distinct members in insertion order, and the expected encoding ---- */

typedef struct model {
    char **members;
    size_t *lengths;
    size_t count, capacity;
    gr_set_encoding_t encoding;
} model_t;

static int is_integer(const char *data, size_t length, int64_t *value) {
    return length > 0 && length <= 20 && gr_bytes_to_int64((const uint8_t *)data, length, value) == 0;
}

static long model_find(const model_t *m, const char *data, size_t length) {
    for (size_t i = 0; i < m->count; i++)
        if (m->lengths[i] == length && memcmp(m->members[i], data, length) == 0) return (long)i;
    return -1;
}

/* The encoding an add of a new member leaves (set.h's rules). */
static gr_set_encoding_t next_encoding(const model_t *m, const gr_set_config_t *c, const char *data, size_t length) {
    int64_t value;
    size_t intset_max = c->max_intset_entries > (1u << 30) ? (1u << 30) : c->max_intset_entries;
    if (m->encoding == GR_SET_INTSET) {
        if (is_integer(data, length, &value)) return m->count + 1 > intset_max ? GR_SET_TABLE : GR_SET_INTSET;
        size_t widest = 0;
        for (size_t i = 0; i < m->count; i++) if (m->lengths[i] > widest) widest = m->lengths[i];
        return m->count < c->max_compact_entries && length <= c->max_compact_value && widest <= c->max_compact_value
                   ? GR_SET_COMPACT : GR_SET_TABLE;
    }
    if (m->encoding == GR_SET_COMPACT)
        return m->count < c->max_compact_entries && length <= c->max_compact_value ? GR_SET_COMPACT : GR_SET_TABLE;
    return GR_SET_TABLE;
}

static void model_add(model_t *m, const char *data, size_t length) {
    if (m->count == m->capacity) {
        m->capacity = m->capacity ? m->capacity * 2 : 16;
        m->members = realloc(m->members, m->capacity * sizeof *m->members);
        m->lengths = realloc(m->lengths, m->capacity * sizeof *m->lengths);
    }
    m->members[m->count] = malloc(length ? length : 1);
    memcpy(m->members[m->count], data, length);
    m->lengths[m->count++] = length;
}

static void model_remove(model_t *m, size_t at) {
    free(m->members[at]);
    memmove(m->members + at, m->members + at + 1, (m->count - at - 1) * sizeof *m->members);
    memmove(m->lengths + at, m->lengths + at + 1, (m->count - at - 1) * sizeof *m->lengths);
    m->count--;
}

/* An intset converted to compact keeps its ascending order: the model's members, all integers
 * then, are put in that order (insertion sort: at most max_compact_entries of them). */
static void model_sort_as_integers(model_t *m) {
    for (size_t i = 1; i < m->count; i++) {
        for (size_t j = i; j > 0; j--) {
            int64_t a, b;
            is_integer(m->members[j - 1], m->lengths[j - 1], &a);
            is_integer(m->members[j], m->lengths[j], &b);
            if (a <= b) break;
            char *member = m->members[j]; m->members[j] = m->members[j - 1]; m->members[j - 1] = member;
            size_t length = m->lengths[j]; m->lengths[j] = m->lengths[j - 1]; m->lengths[j - 1] = length;
        }
    }
}

static void model_clear(model_t *m) {
    for (size_t i = 0; i < m->count; i++) free(m->members[i]);
    free(m->members);
    free(m->lengths);
    memset(m, 0, sizeof *m);
}

/* A member from a mix that crosses every threshold: small and wide integers, integer-like
 * text that is not canonical, short and long strings. */
static size_t random_member(char *out, size_t universe) {
    switch (below(8)) {
    case 0: case 1: case 2:
        return gr_int64_to_text((int64_t)below(universe) - (int64_t)(universe / 4), out);
    case 3:
        return gr_int64_to_text(below(2) ? (int64_t)(INT64_MAX - below(4)) : (int64_t)(70000 + below(universe)) * (below(2) ? 1 : -1), out);
    case 4:
        return (size_t)sprintf(out, "0%u", (unsigned)below(10));   /* "07": text, not an integer */
    case 5: case 6:
        return (size_t)sprintf(out, "m%u", (unsigned)below(universe));
    default: {
        size_t length = 1 + below(90);
        for (size_t i = 0; i < length; i++) out[i] = (char)('a' + below(3));
        return length;
    }
    }
}

/* ---- comparison ---- */

static int member_in_model(const model_t *m, const gr_set_member_t *member) {
    return model_find(m, (const char *)member->data, member->length) >= 0;
}

typedef struct seen { model_t *model; uint8_t *hits; int unknown; } seen_t;

static void count_visit(void *context, const uint8_t *data, size_t length) {
    seen_t *s = context;
    long at = model_find(s->model, (const char *)data, length);
    if (at < 0) s->unknown++; else s->hits[at] = 1;
}

static void compare(const gr_set_t *set, model_t *m, const char *where) {
    CHECK(gr_set_check(set) == 0, "%s: invariants", where);
    CHECK(gr_set_count(set) == m->count, "%s: count %zu vs %zu", where, gr_set_count(set), m->count);
    CHECK(gr_set_encoding(set) == m->encoding, "%s: encoding %s, want %d", where, gr_set_encoding_name(set), (int)m->encoding);
    /* iteration: every member once, none unknown; intset ascending, compact in insertion order */
    gr_set_iter_t iter;
    gr_set_member_t member;
    size_t n = 0;
    int64_t previous = INT64_MIN, value;
    int order_ok = 1;
    gr_set_iter_start(set, &iter);
    while (gr_set_iter_next(&iter, &member)) {
        CHECK(member_in_model(m, &member), "%s: iterated an unknown member", where);
        if (gr_set_encoding(set) == GR_SET_INTSET) {
            CHECK(is_integer((const char *)member.data, member.length, &value), "%s: intset member not an integer", where);
            if (n > 0 && value <= previous) order_ok = 0;
            previous = value;
        } else if (gr_set_encoding(set) == GR_SET_COMPACT && n < m->count) {
            if (m->lengths[n] != member.length || memcmp(m->members[n], member.data, member.length) != 0) order_ok = 0;
        }
        n++;
    }
    CHECK(n == m->count, "%s: iterated %zu of %zu", where, n, m->count);
    CHECK(order_ok, "%s: iteration order of %s", where, gr_set_encoding_name(set));
    /* a whole scan sees every member */
    seen_t seen = {m, calloc(m->count + 1, 1), 0};
    uint64_t cursor = 0;
    size_t calls = 0;
    do { cursor = gr_set_scan(set, cursor, 1 + below(20), count_visit, &seen); calls++; } while (cursor && calls < 1000000);
    size_t hit = 0;
    for (size_t i = 0; i < m->count; i++) hit += seen.hits[i];
    CHECK(hit == m->count && !seen.unknown, "%s: scan saw %zu of %zu (+%d unknown)", where, hit, m->count, seen.unknown);
    free(seen.hits);
}

static void run(uint64_t ops, const gr_set_config_t *config, size_t universe) {
    model_t m = {0};
    char data[128];
    size_t length = random_member(data, universe);
    size_t hint = 1 + below(4);
    gr_set_t *set = gr_set_new_for(config, (const uint8_t *)data, length, hint);
    int64_t ignored;
    m.encoding = is_integer(data, length, &ignored) && hint <= config->max_intset_entries ? GR_SET_INTSET
                 : hint <= config->max_compact_entries ? GR_SET_COMPACT : GR_SET_TABLE;
    CHECK(set != NULL, "new set");
    for (uint64_t op = 0; op < ops; op++) {
        length = random_member(data, universe);
        long at = model_find(&m, data, length);
        switch (below(10)) {
        case 0: case 1: case 2: case 3: {
            gr_set_encoding_t expected = at < 0 ? next_encoding(&m, config, data, length) : m.encoding;
            int added = gr_set_add(set, config, (const uint8_t *)data, length);
            CHECK(added == (at < 0), "add %.*s: %d", (int)length, data, added);
            if (at < 0) {
                if (m.encoding == GR_SET_INTSET && expected == GR_SET_COMPACT) model_sort_as_integers(&m);
                model_add(&m, data, length);
                m.encoding = expected;
            }
            break;
        }
        case 4: case 5: {   /* remove, often a member that is there */
            if (m.count && below(2)) {
                at = (long)below(m.count);
                memcpy(data, m.members[at], m.lengths[at]);
                length = m.lengths[at];
            }
            int removed = gr_set_remove(set, (const uint8_t *)data, length);
            CHECK(removed == (at >= 0), "remove %.*s: %d", (int)length, data, removed);
            if (at >= 0) model_remove(&m, (size_t)at);
            break;
        }
        case 6: case 7:
            CHECK(gr_set_contains(set, (const uint8_t *)data, length) == (at >= 0), "contains %.*s", (int)length, data);
            break;
        case 8: {
            gr_set_member_t member;
            int got = gr_set_random(set, rnd(), &member);
            CHECK(got == (m.count > 0), "random on %zu", m.count);
            if (got) CHECK(member_in_model(&m, &member), "random member is a member");
            break;
        }
        default:
            if (below(20) == 0) {   /* a copy is equal, and independent */
                gr_set_t *copy = gr_set_duplicate(set);
                CHECK(copy != NULL, "duplicate");
                if (copy) { compare(copy, &m, "copy"); gr_set_free(copy); }
            }
            break;
        }
        if (op % 64 == 0 || m.count < 20) compare(set, &m, "step");
    }
    compare(set, &m, "end");
    gr_set_free(set);
    model_clear(&m);
}

/* Fixed cases from Redis's set tests: the conversions at the default thresholds. */
static void conversions_at_the_defaults(void) {
    gr_set_config_t config = {512, 128, 64};
    gr_set_t *set = gr_set_new_for(&config, (const uint8_t *)"1", 1, 1);
    char text[32];
    for (int i = 0; i < 512; i++) gr_set_add(set, &config, (const uint8_t *)text, gr_int64_to_text(i, text));
    CHECK(gr_set_encoding(set) == GR_SET_INTSET, "512 integers: intset");
    gr_set_add(set, &config, (const uint8_t *)"512", 3);
    CHECK(gr_set_encoding(set) == GR_SET_TABLE && gr_set_count(set) == 513, "513 integers: hashtable");
    gr_set_free(set);

    set = gr_set_new_for(&config, (const uint8_t *)"1", 1, 1);
    for (int i = 0; i < 10; i++) gr_set_add(set, &config, (const uint8_t *)text, gr_int64_to_text(i * 100000, text));
    gr_set_add(set, &config, (const uint8_t *)"a", 1);
    CHECK(gr_set_encoding(set) == GR_SET_COMPACT, "intset + a string: listpack");
    CHECK(gr_set_contains(set, (const uint8_t *)"900000", 6) && gr_set_contains(set, (const uint8_t *)"a", 1), "members kept");
    for (int i = 0; i < 117; i++) gr_set_add(set, &config, (const uint8_t *)text, (size_t)sprintf(text, "s%d", i));
    CHECK(gr_set_encoding(set) == GR_SET_COMPACT && gr_set_count(set) == 128, "128 members: listpack");
    gr_set_add(set, &config, (const uint8_t *)"one more", 8);
    CHECK(gr_set_encoding(set) == GR_SET_TABLE && gr_set_count(set) == 129, "129: hashtable");
    gr_set_free(set);

    char long_member[65];
    memset(long_member, 'x', sizeof long_member);
    set = gr_set_new_for(&config, (const uint8_t *)"a", 1, 1);
    gr_set_add(set, &config, (const uint8_t *)long_member, 64);
    CHECK(gr_set_encoding(set) == GR_SET_COMPACT, "a 64-byte member fits listpack");
    gr_set_add(set, &config, (const uint8_t *)long_member, 65);
    CHECK(gr_set_encoding(set) == GR_SET_TABLE, "a 65-byte member: hashtable");
    gr_set_free(set);

    set = gr_set_new_for(&config, (const uint8_t *)"a", 1, 200);
    CHECK(gr_set_encoding(set) == GR_SET_TABLE, "a size hint over 128: hashtable at once");
    gr_set_free(set);
    set = gr_set_new_for(&config, (const uint8_t *)"-9223372036854775808", 20, 1);
    CHECK(gr_set_encoding(set) == GR_SET_INTSET, "INT64_MIN is an integer");
    gr_set_add(set, &config, (const uint8_t *)"-9223372036854775808", 20);
    gr_set_add(set, &config, (const uint8_t *)"9223372036854775807", 19);
    gr_set_add(set, &config, (const uint8_t *)"-1", 2);
    gr_set_member_t member;
    gr_set_iter_t iter;
    gr_set_iter_start(set, &iter);
    gr_set_iter_next(&iter, &member);
    CHECK(member.length == 20 && memcmp(member.data, "-9223372036854775808", 20) == 0, "intset ascending from INT64_MIN");
    CHECK(!gr_set_contains(set, (const uint8_t *)"9223372036854775808", 19), "past INT64_MAX is text");
    gr_set_free(set);
    CHECK(gr_mem_used_by(GR_MEM_SET) == 0, "every set byte freed: %" PRId64, gr_mem_used_by(GR_MEM_SET));
}

int main(int argc, char **argv) {
    uint64_t ops = argc > 1 ? strtoull(argv[1], NULL, 10) : 20000;
    if (argc > 2) rng_state = strtoull(argv[2], NULL, 10);
    conversions_at_the_defaults();
    gr_set_config_t small = {16, 8, 10}, defaults = {512, 128, 64}, none = {0, 0, 0};
    for (int round = 0; round < 4; round++) {
        run(ops / 4, &small, 40);
        run(ops / 4, &defaults, 600);
        run(ops / 8, &none, 60);
    }
    run(ops, &defaults, 3000);   /* grows well into the table and shrinks again */
    CHECK(gr_mem_used_by(GR_MEM_SET) == 0, "every set byte freed: %" PRId64, gr_mem_used_by(GR_MEM_SET));
    return checks_report();
}
