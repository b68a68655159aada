/* test_stream.c — the stream engine (engines/stream/) against a reference model: a plain array
 * of entries (ID, copied pairs) and, per group, a plain array of pending (ID, consumer, time,
 * count). Random appends (new milliseconds, same millisecond, same and different fields),
 * deletes (present and absent IDs), exact trims by MAXLEN and MINID (checked entry for entry),
 * approximate trims (checked to remove a prefix, never past the exact answer, within LIMIT),
 * forward and reverse ranges with random bounds, edge IDs and Redis 7's first_id bookkeeping;
 * groups, consumers, deliveries, acknowledgements and moves against the model's PELs; every so
 * often the snapshot body and COPY's duplicate must read back equal. Memory accounting: the
 * GR_MEM_STREAM total always equals gr_stream_allocated_bytes of the live streams, and 0 once
 * they are freed.
 *
 *   test_stream [steps] [seed]
 *   test_stream --measure N     bytes per entry of N entries of one 16-byte field and value
 */
#include "tests/test_helpers.h"

#include "core/alloc.h"
#include "engines/stream/stream.h"

typedef struct model_entry {
    gr_stream_id_t id;
    size_t pairs;
    uint8_t **items;
    size_t *lengths;
} model_entry_t;

typedef struct model_nack {
    gr_stream_id_t id;
    int consumer;
    int64_t time;
    uint64_t count;
} model_nack_t;

static model_entry_t *entries;
static size_t entry_count, entry_capacity;
static model_nack_t *pending;   /* sorted by ID */
static size_t pending_count, pending_capacity;

static const gr_stream_limits_t limits_small = {256, 7};
static const char *consumer_names[] = {"alice", "bob", "carol"};

static void model_entry_free(model_entry_t *e) {
    for (size_t i = 0; i < 2 * e->pairs; i++) free(e->items[i]);
    free(e->items);
    free(e->lengths);
}

static void model_remove(size_t index) {
    model_entry_free(&entries[index]);
    memmove(entries + index, entries + index + 1, (entry_count - index - 1) * sizeof *entries);
    entry_count--;
}

static ptrdiff_t model_find(const gr_stream_id_t *id) {
    for (size_t i = 0; i < entry_count; i++)
        if (gr_stream_id_cmp(&entries[i].id, id) == 0) return (ptrdiff_t)i;
    return -1;
}

static int entry_equal(gr_stream_entry_t *entry, const model_entry_t *m) {
    if (gr_stream_id_cmp(&entry->id, &m->id) != 0 || entry->pair_count != m->pairs) return 0;
    const uint8_t *f, *v;
    size_t fl, vl;
    for (size_t i = 0; i < m->pairs; i++) {
        if (!gr_stream_entry_next_pair(entry, &f, &fl, &v, &vl)) return 0;
        if (fl != m->lengths[2 * i] || memcmp(f, m->items[2 * i], fl) != 0) return 0;
        if (vl != m->lengths[2 * i + 1] || memcmp(v, m->items[2 * i + 1], vl) != 0) return 0;
    }
    return !gr_stream_entry_next_pair(entry, &f, &fl, &v, &vl);
}

/* Every live entry of the stream equals the model, both directions, and the bookkeeping. */
static void check_whole(const gr_stream_t *s, const char *where) {
    CHECK(s->length == entry_count, "%s: length %llu, model %zu", where, (unsigned long long)s->length, entry_count);
    gr_stream_iter_t it;
    gr_stream_entry_t e;
    size_t i = 0;
    int ok = 1;
    gr_stream_iter_start(&it, s, NULL, NULL, 0);
    while (gr_stream_iter_next(&it, &e)) {
        if (i >= entry_count || !entry_equal(&e, &entries[i])) ok = 0;
        i++;
    }
    gr_stream_iter_stop(&it);
    CHECK(ok && i == entry_count, "%s: forward scan differs (%zu of %zu)", where, i, entry_count);
    i = entry_count;
    ok = 1;
    gr_stream_iter_start(&it, s, NULL, NULL, 1);
    while (gr_stream_iter_next(&it, &e)) {
        if (i == 0 || !entry_equal(&e, &entries[i - 1])) ok = 0;
        if (i) i--;
    }
    gr_stream_iter_stop(&it);
    CHECK(ok && i == 0, "%s: reverse scan differs", where);
    gr_stream_id_t first = {0, 0};
    if (entry_count) first = entries[0].id;
    CHECK(gr_stream_id_cmp(&s->first_id, &first) == 0, "%s: first_id %llu-%llu, model %llu-%llu", where,
          (unsigned long long)s->first_id.ms, (unsigned long long)s->first_id.seq, (unsigned long long)first.ms,
          (unsigned long long)first.seq);
    gr_stream_id_t edge;
    if (entry_count) {
        CHECK(gr_stream_edge_id(s, 0, &edge) && gr_stream_id_cmp(&edge, &entries[entry_count - 1].id) == 0,
              "%s: last edge", where);
    } else {
        CHECK(!gr_stream_edge_id(s, 1, &edge), "%s: an empty stream has no edge", where);
    }
}

static void check_range(const gr_stream_t *s, const gr_stream_id_t *start, const gr_stream_id_t *end, int reverse) {
    gr_stream_iter_t it;
    gr_stream_entry_t e;
    size_t lo = 0, hi = entry_count;   /* model range [lo, hi) */
    while (lo < entry_count && gr_stream_id_cmp(&entries[lo].id, start) < 0) lo++;
    while (hi > lo && gr_stream_id_cmp(&entries[hi - 1].id, end) > 0) hi--;
    if (gr_stream_id_cmp(start, end) > 0) hi = lo;
    int ok = 1;
    size_t seen = 0;
    gr_stream_iter_start(&it, s, start, end, reverse);
    while (gr_stream_iter_next(&it, &e)) {
        size_t index = reverse ? hi - 1 - seen : lo + seen;
        if (seen >= hi - lo || !entry_equal(&e, &entries[index])) ok = 0;
        seen++;
    }
    gr_stream_iter_stop(&it);
    CHECK(ok && seen == hi - lo, "range %llu-%llu .. %llu-%llu rev %d: %zu entries, model %zu",
          (unsigned long long)start->ms, (unsigned long long)start->seq, (unsigned long long)end->ms,
          (unsigned long long)end->seq, reverse, seen, hi - lo);
}

static gr_stream_id_t random_id_near(void) {
    if (entry_count && below(3)) {
        gr_stream_id_t id = entries[below(entry_count)].id;
        if (below(3) == 0) gr_stream_id_incr(&id);
        else if (below(3) == 0) gr_stream_id_decr(&id);
        return id;
    }
    return (gr_stream_id_t){below(3000), below(4)};
}

static void do_append(gr_stream_t *s, gr_stream_id_t *next_ms) {
    gr_stream_id_t id = s->last_id;
    if (below(3) == 0 || gr_stream_id_is_zero(&id)) {
        id.ms += 1 + below(5);
        id.seq = below(3);
    } else {
        id.seq += 1 + below(2);
    }
    (void)next_ms;
    size_t pairs = below(4) == 0 ? 1 + below(4) : 2;
    static const char *fields[] = {"name", "value", "x", "payload", "", "name2"};
    uint8_t **items = malloc(2 * pairs * sizeof *items);
    size_t *lengths = malloc(2 * pairs * sizeof *lengths);
    int same_shape = below(4) != 0;
    for (size_t i = 0; i < pairs; i++) {
        const char *f = same_shape ? fields[i] : fields[below(6)];
        lengths[2 * i] = strlen(f);
        items[2 * i] = malloc(lengths[2 * i] + 1);
        memcpy(items[2 * i], f, lengths[2 * i]);
        size_t vl = below(8) == 0 ? 150 + below(200) : below(20);
        lengths[2 * i + 1] = vl;
        items[2 * i + 1] = malloc(vl + 1);
        for (size_t k = 0; k < vl; k++) items[2 * i + 1][k] = (uint8_t)rnd();
    }
    int rc = gr_stream_append(s, &id, pairs, (const uint8_t *const *)items, lengths, &limits_small);
    CHECK(rc == 0, "append");
    if (entry_count == entry_capacity) {
        entry_capacity = entry_capacity ? entry_capacity * 2 : 64;
        entries = realloc(entries, entry_capacity * sizeof *entries);
    }
    entries[entry_count++] = (model_entry_t){id, pairs, items, lengths};
}

static void check_memory(gr_stream_t *const *streams, size_t n, const char *where) {
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        if (streams[i]) total += gr_stream_allocated_bytes(streams[i]);
    CHECK((int64_t)total == gr_mem_used_by(GR_MEM_STREAM), "%s: accounted %lld, allocated_bytes %zu", where,
          (long long)gr_mem_used_by(GR_MEM_STREAM), total);
}

/* ---- groups against the model ---- */

static void pending_insert(model_nack_t n) {
    if (pending_count == pending_capacity) {
        pending_capacity = pending_capacity ? pending_capacity * 2 : 64;
        pending = realloc(pending, pending_capacity * sizeof *pending);
    }
    size_t i = 0;
    while (i < pending_count && gr_stream_id_cmp(&pending[i].id, &n.id) < 0) i++;
    memmove(pending + i + 1, pending + i, (pending_count - i) * sizeof *pending);
    pending[i] = n;
    pending_count++;
}

static ptrdiff_t pending_find(const gr_stream_id_t *id) {
    for (size_t i = 0; i < pending_count; i++)
        if (gr_stream_id_cmp(&pending[i].id, id) == 0) return (ptrdiff_t)i;
    return -1;
}

static void check_group(gr_stream_group_t *g, const char *where) {
    int ok = g->pel.count == pending_count;
    for (size_t i = 0; ok && i < pending_count; i++) {
        gr_stream_nack_t *n = gr_stream_pel_at(&g->pel, i);
        const char *name = consumer_names[pending[i].consumer];
        ok = gr_stream_id_cmp(&n->id, &pending[i].id) == 0 && n->delivery_time == pending[i].time &&
             n->delivery_count == pending[i].count && n->consumer->name_length == strlen(name) &&
             memcmp(n->consumer->name, name, strlen(name)) == 0;
    }
    CHECK(ok, "%s: group PEL differs (%u, model %zu)", where, g->pel.count, pending_count);
    for (size_t c = 0; c < 3; c++) {
        gr_stream_consumer_t *consumer =
            gr_stream_consumer_find(g, (const uint8_t *)consumer_names[c], strlen(consumer_names[c]));
        if (!consumer) continue;
        size_t k = 0;
        int cok = 1;
        for (size_t i = 0; i < pending_count; i++) {
            if (pending[i].consumer != (int)c) continue;
            if (k >= consumer->pel.count || gr_stream_pel_at(&consumer->pel, k)->id.ms != pending[i].id.ms ||
                gr_stream_pel_at(&consumer->pel, k)->id.seq != pending[i].id.seq)
                cok = 0;
            k++;
        }
        CHECK(cok && k == consumer->pel.count, "%s: consumer %s PEL differs", where, consumer_names[c]);
    }
}

static void do_group_step(gr_stream_t *s, int64_t now) {
    gr_stream_group_t *g = gr_stream_group_find(s, (const uint8_t *)"g", 1);
    if (!g) return;
    size_t what = below(10);
    int c = (int)below(3);
    gr_stream_consumer_t *consumer;
    int made = gr_stream_consumer_create(g, (const uint8_t *)consumer_names[c], strlen(consumer_names[c]), now, &consumer);
    CHECK(made >= 0, "consumer create");
    if (what < 4) {   /* deliver a new ID */
        gr_stream_id_t id = random_id_near();
        if (pending_find(&id) >= 0) return;
        CHECK(gr_stream_pel_find(&g->pel, &id) == NULL, "absent from the PEL");
        CHECK(gr_stream_nack_add(g, consumer, &id, now, 1) != NULL, "nack add");
        pending_insert((model_nack_t){id, c, now, 1});
    } else if (what < 7 && pending_count) {   /* acknowledge: the oldest often, else any */
        size_t i = below(2) ? 0 : below(pending_count);
        gr_stream_id_t id = pending[i].id;
        CHECK(gr_stream_nack_ack(g, &id) == 1, "ack present");
        memmove(pending + i, pending + i + 1, (pending_count - i - 1) * sizeof *pending);
        pending_count--;
        CHECK(gr_stream_nack_ack(g, &id) == 0, "ack again");
    } else if (what < 9 && pending_count) {   /* claim: move to another consumer */
        size_t i = below(pending_count);
        gr_stream_nack_t *n = gr_stream_pel_find(&g->pel, &pending[i].id);
        CHECK(n != NULL, "claimable found");
        if (n) {
            CHECK(gr_stream_nack_move(g, n, consumer) == 0, "move");
            n->delivery_count++;
            n->delivery_time = now;
            pending[i].consumer = c;
            pending[i].count++;
            pending[i].time = now;
        }
    } else if (what == 9 && below(4) == 0) {   /* delete the consumer */
        size_t had = 0;
        for (size_t i = 0; i < pending_count;) {
            if (pending[i].consumer == c) {
                memmove(pending + i, pending + i + 1, (pending_count - i - 1) * sizeof *pending);
                pending_count--;
                had++;
            } else {
                i++;
            }
        }
        CHECK(gr_stream_consumer_delete(g, consumer) == had, "consumer delete count");
    }
}

/* ---- snapshot and copy ---- */

static void check_roundtrip(gr_stream_t *s, gr_stream_t **slot) {
    gr_snapshot_writer_t w;
    gr_snapshot_writer_init(&w, GR_MEM_OTHER);
    CHECK(gr_stream_save(s, &w) == 0, "save");
    gr_snapshot_reader_t r;
    gr_snapshot_reader_init(&r, w.data, w.length);
    gr_stream_t *loaded = gr_stream_load(&r, &limits_small);
    CHECK(loaded && !r.error && gr_snapshot_reader_remaining(&r) == 0, "load: %s", r.error ? r.error : "");
    gr_stream_t *copy = gr_stream_duplicate(s);
    CHECK(copy != NULL, "duplicate");
    gr_stream_t *both[2] = {loaded, copy};
    for (int k = 0; k < 2; k++) {
        gr_stream_t *t = both[k];
        if (!t) continue;
        *slot = t;
        check_whole(t, k ? "copy" : "loaded");
        CHECK(gr_stream_id_cmp(&t->last_id, &s->last_id) == 0 && t->entries_added == s->entries_added &&
                  gr_stream_id_cmp(&t->max_deleted_entry_id, &s->max_deleted_entry_id) == 0,
              "bookkeeping survives");
        gr_stream_group_t *g = gr_stream_group_find(t, (const uint8_t *)"g", 1);
        gr_stream_group_t *og = gr_stream_group_find(s, (const uint8_t *)"g", 1);
        CHECK((g == NULL) == (og == NULL), "group survives");
        if (g && og) {
            check_group(g, k ? "copy" : "loaded");
            CHECK(gr_stream_id_cmp(&g->last_id, &og->last_id) == 0 && g->entries_read == og->entries_read &&
                      g->consumer_count == og->consumer_count,
                  "group fields survive");
        }
        gr_stream_free(t);
        *slot = NULL;
    }
    /* a cut body is refused, never read past its end */
    for (size_t cut = 0; cut < w.length; cut += 1 + w.length / 16) {
        gr_snapshot_reader_init(&r, w.data, cut);
        gr_stream_t *bad = gr_stream_load(&r, &limits_small);
        CHECK(bad == NULL, "a body cut at %zu of %zu is refused", cut, w.length);
        gr_stream_free(bad);
    }
    gr_snapshot_writer_release(&w);
}

static void run_model(size_t steps) {
    gr_stream_t *streams[2] = {gr_stream_new(), NULL};
    gr_stream_t *s = streams[0];
    int64_t now = 1000;
    gr_stream_id_t unused = {0, 0};
    for (size_t step = 0; step < steps; step++) {
        now += (int64_t)below(3);
        size_t op = below(100);
        if (op < 45) {
            do_append(s, &unused);
        } else if (op < 55) {
            gr_stream_id_t id = random_id_near();
            ptrdiff_t at = model_find(&id);
            int deleted = gr_stream_delete(s, &id);
            CHECK(deleted == (at >= 0), "delete %llu-%llu: %d, model %d", (unsigned long long)id.ms,
                  (unsigned long long)id.seq, deleted, at >= 0);
            if (at >= 0) model_remove((size_t)at);
        } else if (op < 60) {   /* exact trims */
            gr_stream_trim_t trim = {0};
            size_t removed = 0;
            if (below(2)) {
                trim.strategy = GR_STREAM_TRIM_MAXLEN;
                trim.maxlen = below(entry_count + 3);
                removed = entry_count > trim.maxlen ? entry_count - trim.maxlen : 0;
            } else {
                trim.strategy = GR_STREAM_TRIM_MINID;
                trim.minid = random_id_near();
                while (removed < entry_count && gr_stream_id_cmp(&entries[removed].id, &trim.minid) < 0) removed++;
            }
            uint64_t got = gr_stream_trim(s, &trim);
            CHECK(got == removed, "exact trim removed %llu, model %zu", (unsigned long long)got, removed);
            for (size_t i = 0; i < removed; i++) model_remove(0);
        } else if (op < 63) {   /* approximate trims: a prefix, never past the exact answer */
            gr_stream_trim_t trim = {0};
            trim.approx = 1;
            trim.limit = below(2) ? 0 : (int64_t)below(20);
            size_t exact = 0;
            if (below(2)) {
                trim.strategy = GR_STREAM_TRIM_MAXLEN;
                trim.maxlen = below(entry_count + 3);
                exact = entry_count > trim.maxlen ? entry_count - trim.maxlen : 0;
            } else {
                trim.strategy = GR_STREAM_TRIM_MINID;
                trim.minid = random_id_near();
                while (exact < entry_count && gr_stream_id_cmp(&entries[exact].id, &trim.minid) < 0) exact++;
            }
            uint64_t got = gr_stream_trim(s, &trim);
            CHECK(got <= exact && (trim.limit == 0 || got <= (uint64_t)trim.limit), "approx trim removed %llu (exact %zu)",
                  (unsigned long long)got, exact);
            for (size_t i = 0; i < got && entry_count; i++) model_remove(0);
        } else if (op < 80) {
            gr_stream_id_t a = random_id_near(), b = random_id_near();
            if (below(4) == 0) b = (gr_stream_id_t){UINT64_MAX, UINT64_MAX};
            if (below(4) == 0) a = (gr_stream_id_t){0, 0};
            check_range(s, &a, &b, (int)below(2));
        } else if (op < 82) {
            if (!gr_stream_group_find(s, (const uint8_t *)"g", 1)) {
                gr_stream_group_t *g;
                CHECK(gr_stream_group_create(s, (const uint8_t *)"g", 1, &s->last_id, (int64_t)s->entries_added, &g) == 0,
                      "group create");
                CHECK(gr_stream_group_create(s, (const uint8_t *)"g", 1, &s->last_id, 0, &g) == 1, "group exists");
                pending_count = 0;
            } else if (below(10) == 0) {
                CHECK(gr_stream_group_destroy(s, (const uint8_t *)"g", 1) == 1, "group destroy");
                pending_count = 0;
            }
        } else if (op < 97) {
            do_group_step(s, now);
        } else if (op < 98) {
            check_roundtrip(s, &streams[1]);
        } else {
            gr_stream_id_t id = random_id_near();
            CHECK(gr_stream_has_entry(s, &id) == (model_find(&id) >= 0), "has_entry");
        }
        if (step % 97 == 0) {
            check_whole(s, "periodic");
            check_memory(streams, 2, "periodic");
            gr_stream_group_t *g = gr_stream_group_find(s, (const uint8_t *)"g", 1);
            if (g) check_group(g, "periodic");
        }
    }
    check_whole(s, "end");
    check_roundtrip(s, &streams[1]);
    check_memory(streams, 2, "end");
    gr_stream_free(s);
    CHECK(gr_mem_used_by(GR_MEM_STREAM) == 0, "everything freed (%lld left)", (long long)gr_mem_used_by(GR_MEM_STREAM));
    for (size_t i = 0; i < entry_count; i++) model_entry_free(&entries[i]);
    free(entries);
    free(pending);
}

/* ---- fixed cases ---- */

static void test_ids(void) {
    gr_stream_id_t id = {UINT64_MAX, UINT64_MAX};
    CHECK(gr_stream_id_incr(&id) == -1, "2^64-1-2^64-1 has no next");
    id = (gr_stream_id_t){5, UINT64_MAX};
    CHECK(gr_stream_id_incr(&id) == 0 && id.ms == 6 && id.seq == 0, "5-max + 1 = 6-0");
    CHECK(gr_stream_id_decr(&id) == 0 && id.ms == 5 && id.seq == UINT64_MAX, "6-0 - 1 = 5-max");
    id = (gr_stream_id_t){0, 0};
    CHECK(gr_stream_id_decr(&id) == -1, "0-0 has no previous");
    char text[48];
    id = (gr_stream_id_t){UINT64_MAX, 7};
    size_t n = gr_stream_id_format(&id, text);
    CHECK(n == strlen("18446744073709551615-7") && strcmp(text, "18446744073709551615-7") == 0, "format %s", text);
}

/* Redis 7's bookkeeping: XDEL's max_deleted_entry_id and the lag it makes unknown. */
static void test_lag(void) {
    gr_stream_t *s = gr_stream_new();
    const uint8_t *items[2] = {(const uint8_t *)"f", (const uint8_t *)"v"};
    size_t lengths[2] = {1, 1};
    for (uint64_t i = 1; i <= 5; i++) {
        gr_stream_id_t id = {i, 0};
        gr_stream_append(s, &id, 1, items, lengths, &limits_small);
    }
    gr_stream_group_t *g;
    gr_stream_id_t zero = {0, 0};
    gr_stream_group_create(s, (const uint8_t *)"g", 1, &zero, 0, &g);
    int64_t lag;
    CHECK(gr_stream_group_lag(s, g, &lag) && lag == 5, "lag of a new group at 0 is 5");
    gr_stream_id_t three = {3, 0};
    gr_stream_delete(s, &three);
    s->max_deleted_entry_id = three;
    CHECK(!gr_stream_group_lag(s, g, &lag), "a tombstone ahead makes the lag unknown");
    g->last_id = (gr_stream_id_t){5, 0};
    g->entries_read = GR_STREAM_INVALID_ENTRIES_READ;
    CHECK(gr_stream_group_lag(s, g, &lag) && lag == 0, "at the last ID the lag is 0");
    CHECK(gr_stream_estimate_distance(s, &zero) == GR_STREAM_INVALID_ENTRIES_READ ||
              gr_stream_estimate_distance(s, &zero) == 0,
          "distance before tombstones");
    gr_stream_free(s);
}

/* ---- --measure ---- */

static int measure(size_t n) {
    gr_stream_t *s = gr_stream_new();
    const gr_stream_limits_t limits = {GR_STREAM_NODE_MAX_BYTES, GR_STREAM_NODE_MAX_ENTRIES};
    uint8_t field[16], value[16];
    memset(field, 'f', sizeof field);
    const uint8_t *items[2] = {field, value};
    size_t lengths[2] = {16, 16};
    gr_stream_id_t id = {1733000000000ull, 0};
    for (size_t i = 0; i < n; i++) {
        for (int k = 0; k < 16; k++) value[k] = (uint8_t)('a' + (i >> (k % 8)) % 26);
        if (i % 8 == 0) {   /* about eight entries a millisecond, as a fast producer makes */
            id.ms++;
            id.seq = 0;
        } else {
            id.seq++;
        }
        gr_stream_append(s, &id, 1, items, lengths, &limits);
    }
    printf("%zu entries: %.2f allocated bytes per entry (%zu nodes)\n", n, (double)gr_stream_allocated_bytes(s) / (double)n,
           gr_stream_node_count(s));
    gr_stream_free(s);
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 2 && strcmp(argv[1], "--measure") == 0) return measure((size_t)strtoull(argv[2], NULL, 10));
    size_t steps = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : 100000;
    if (argc > 2) rng_state = strtoull(argv[2], NULL, 10);
    test_ids();
    test_lag();
    run_model(steps);
    return checks_report();
}
