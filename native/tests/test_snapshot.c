/* test_snapshot.c — the snapshot file (persist/snapshot.[ch]) against a model: a seeded random
 * keyspace of every type, encoding and database, with expiries, written by gr_snapshot_save and
 * loaded by gr_snapshot_load into a fresh db must give the same DEBUG DIGEST and key counts;
 * every corrupted byte and every cut of the file is refused with nothing loaded; a key whose
 * time has passed is not loaded. Commands run over a RESP connection fed bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/alloc.h"
#include "engines/zset/zset.h"
#include "exec/db.h"
#include "persist/snapshot.h"
#include "resp/resp_conn.h"
#include "tests/test_helpers.h"

static char digest_of(gr_resp_conn_t *conn, char out[64]) {
    feed(conn, "DEBUG DIGEST\r\n");
    snprintf(out, 64, "%s", take_output(conn));
    return out[0];
}

/* A random command writing one key of a random type and size into a random database. */
static void random_write(gr_resp_conn_t *conn, int step) {
    char command[512];
    int db = (int)below(3) * 5;   /* databases 0, 5, 10 */
    snprintf(command, sizeof command, "SELECT %d\r\n", db);
    feed(conn, command);
    take_output(conn);
    int key = (int)below(200);
    switch (below(7)) {
    case 0: snprintf(command, sizeof command, "SET s%d v%llu\r\n", key, (unsigned long long)rnd()); break;
    case 1: snprintf(command, sizeof command, "SET n%d %d\r\n", key, (int)below(100000) - 50000); break;
    case 2: snprintf(command, sizeof command, "RPUSH l%d a%d b %d\r\n", key, step, step); break;
    case 3: snprintf(command, sizeof command, "SADD t%d %d x%d\r\n", key % 20, (int)below(1000), (int)below(300)); break;
    case 4: snprintf(command, sizeof command, "HSET h%d f%d v%d\r\n", key % 20, (int)below(300), step); break;
    case 5: snprintf(command, sizeof command, "ZADD z%d %d.25 m%d\r\n", key % 20, (int)below(1000) - 500, (int)below(300)); break;
    default: snprintf(command, sizeof command, "EXPIRE s%d %d\r\n", key, 100 + (int)below(1000)); break;
    }
    feed(conn, command);
    take_output(conn);
}

static void test_a_random_keyspace_round_trips(const char *path) {
    gr_server_t *db = gr_db_new(11);
    gr_resp_conn_t *conn = gr_resp_conn_new(db, 1);
    for (int step = 0; step < 6000; step++) random_write(conn, step);
    expect_reply(conn, "SELECT 0\r\n", "+OK\r\n");
    expect_reply(conn, "GOBLIN.PMA.RPUSH pmalist a b c\r\n", ":3\r\n");
    char before[64], after[64];
    digest_of(conn, before);
    int64_t keys = gr_db_key_count(db);
    char error[512] = "";
    gr_snapshot_stats_t stats;
    CHECK(gr_snapshot_save(db, path, 0, &stats, error, sizeof error) == 0, "saves: %s", error);
    CHECK(stats.keys == keys && stats.bytes > 0, "stats: %lld keys of %lld, %lld bytes", (long long)stats.keys,
          (long long)keys, (long long)stats.bytes);

    gr_server_t *fresh = gr_db_new(12);
    gr_resp_conn_t *fresh_conn = gr_resp_conn_new(fresh, 1);
    CHECK(gr_snapshot_load(fresh, path, &stats, error, sizeof error) == 1, "loads: %s", error);
    digest_of(fresh_conn, after);
    CHECK(strcmp(before, after) == 0 && gr_db_key_count(fresh) == keys, "equal after load: %s vs %s", before, after);
    feed(fresh_conn, "GOBLIN.SEG.LLEN pmalist\r\n");   /* the list's engine came back with it */
    CHECK(strncmp(take_output(fresh_conn), "-WRONGTYPE", 10) == 0, "a PMA list stays a PMA list");
    expect_reply(fresh_conn, "GOBLIN.PMA.LLEN pmalist\r\n", ":3\r\n");

    /* every byte flipped (sampled through the file) and every cut: refused, nothing loaded */
    FILE *f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    long length = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *bytes = malloc((size_t)length);
    CHECK(fread(bytes, 1, (size_t)length, f) == (size_t)length, "read back");
    fclose(f);
    int refused = 1, named = 1;
    char bad_path[600];
    snprintf(bad_path, sizeof bad_path, "%s.bad", path);
    for (long at = 0; at < length; at += 1 + (long)below(97)) {
        bytes[at] ^= (uint8_t)(1u << below(8));
        f = fopen(bad_path, "wb");
        fwrite(bytes, 1, (size_t)length, f);
        fclose(f);
        gr_server_t *victim = gr_db_new(13);
        int result = gr_snapshot_load(victim, bad_path, NULL, error, sizeof error);
        refused &= result == -1 && gr_db_key_count(victim) == 0;
        named &= strstr(error, bad_path) != NULL && strstr(error, "offset") != NULL;
        gr_db_free(victim);
        f = fopen(path, "rb");
        CHECK(fread(bytes, 1, (size_t)length, f) == (size_t)length, "reread");
        fclose(f);
    }
    CHECK(refused, "every flipped byte refused with nothing loaded");
    CHECK(named, "every refusal names the file and an offset: %s", error);
    refused = 1;
    for (long cut = 0; cut < length; cut += 1 + (long)below(211)) {
        f = fopen(bad_path, "wb");
        fwrite(bytes, 1, (size_t)cut, f);
        fclose(f);
        gr_server_t *victim = gr_db_new(13);
        refused &= gr_snapshot_load(victim, bad_path, NULL, error, sizeof error) == -1 && gr_db_key_count(victim) == 0;
        gr_db_free(victim);
    }
    CHECK(refused, "every cut refused with nothing loaded");
    CHECK(gr_snapshot_load(fresh, "/nonexistent/dir/dump.grdb", NULL, error, sizeof error) == 0, "no file: 0");
    unlink(bad_path);
    free(bytes);
    gr_resp_conn_free(fresh_conn);
    gr_db_free(fresh);
    gr_resp_conn_free(conn);
    gr_db_free(db);
}

static void test_keys_whose_time_passed_are_not_loaded(const char *path) {
    gr_server_t *db = gr_db_new(21);
    gr_resp_conn_t *conn = gr_resp_conn_new(db, 1);
    expect_reply(conn, "SET stays v PXAT 99999999999999\r\n", "+OK\r\n");
    expect_reply(conn, "SET soon v\r\n", "+OK\r\n");
    gr_ks_entry_t *soon = gr_ks_find(db->keyspaces[0], (const uint8_t *)"soon", 4);
    gr_ks_set_expire(db->keyspaces[0], soon, 1);                  /* past, but not yet removed */
    char error[512];
    gr_snapshot_stats_t stats;
    CHECK(gr_snapshot_save(db, path, 0, &stats, error, sizeof error) == 0 && stats.keys == 2, "saves both keys");
    gr_server_t *fresh = gr_db_new(22);
    gr_resp_conn_t *fresh_conn = gr_resp_conn_new(fresh, 1);
    CHECK(gr_snapshot_load(fresh, path, &stats, error, sizeof error) == 1 && stats.keys == 1 && stats.keys_expired == 1,
          "one loaded, one expired: %lld %lld", (long long)stats.keys, (long long)stats.keys_expired);
    expect_reply(fresh_conn, "PEXPIRETIME stays\r\n", ":99999999999999\r\n");
    gr_resp_conn_free(fresh_conn);
    gr_db_free(fresh);
    gr_resp_conn_free(conn);
    gr_db_free(db);
}

/* The sorted-set engine's bulk load (what a snapshot's big sets load through) builds the same
 * set as inserting every member: same order, counts, scores, lookups; a consistent tree. */
static void test_a_bulk_built_sorted_set_equals_an_inserted_one(void) {
    const size_t sizes[] = {1, 63, 64, 65, 129, 2048, 2049, 4097, 20000, 40000, 70001};
    gr_zset_limits_t limits = {0, 0, 0};   /* standard encoding from the first member */
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t n = sizes[s];
        gr_zset_t *inserted = gr_zset_new(), *bulk = gr_zset_bulk_begin();
        char member[32];
        for (size_t i = 0; i < n; i++) {
            size_t length = (size_t)snprintf(member, sizeof member, "m%zu", (i * 7919) % 100003);
            gr_zset_set(inserted, (const uint8_t *)member, length, (double)((i * 31) % 1000) / 8, &limits);
        }
        gr_zset_iter_t iter;
        gr_zset_entry_t entry;
        gr_zset_iter_start(inserted, 0, &iter);
        int appended = 1;
        while (gr_zset_iter_next(&iter, &entry))
            appended &= gr_zset_bulk_append(bulk, entry.member, entry.member_length, entry.score) == 0;
        CHECK(appended && gr_zset_bulk_end(bulk) == 0, "%zu: bulk built", n);
        CHECK(gr_zset_check(bulk) == 0 && gr_zset_count(bulk) == n, "%zu: a consistent tree of every member", n);
        int same = 1;
        for (size_t rank = 0; rank < n; rank += 1 + rank / 3) {
            gr_zset_entry_t a, b;
            same &= gr_zset_at(inserted, rank, &a) && gr_zset_at(bulk, rank, &b) && a.score == b.score &&
                    a.member_length == b.member_length && memcmp(a.member, b.member, a.member_length) == 0;
            double score;
            same &= gr_zset_score(bulk, a.member, a.member_length, &score) && score == a.score &&
                    gr_zset_rank(bulk, a.member, a.member_length, NULL) == (int64_t)rank;
        }
        CHECK(same, "%zu: the same entries at every rank, found by member", n);
        CHECK(gr_zset_set(bulk, (const uint8_t *)"new", 3, 0.5, &limits) == 1 &&
              gr_zset_delete(bulk, (const uint8_t *)"new", 3) == 1 && gr_zset_check(bulk) == 0, "%zu: writable after", n);
        gr_zset_free(inserted);
        gr_zset_free(bulk);
    }
    gr_zset_t *twice = gr_zset_bulk_begin();
    CHECK(gr_zset_bulk_append(twice, (const uint8_t *)"a", 1, 1) == 0 && gr_zset_bulk_append(twice, (const uint8_t *)"a", 1, 2) == 0 &&
          gr_zset_bulk_end(twice) == -2, "a member appended twice is refused at the end");
    gr_zset_free(twice);
}

/* Appends out of (score, bytes) order — a packed set's ties come in numeric order — are sorted
 * by bulk_end; a bulk load given up before its end frees everything it allocated; the inner
 * levels are spread evenly (no node left with one child beside full ones). */
static void test_bulk_load_sorts_misordered_appends_and_frees_an_unfinished_one(void) {
    const size_t n = 5000;
    gr_zset_t *bulk = gr_zset_bulk_begin();
    char member[32];
    int appended = 1;
    for (size_t i = 0; i < n; i++) {   /* ties of 8, members in numeric order: "9" before "10" */
        size_t length = (size_t)snprintf(member, sizeof member, "%zu", i);
        appended &= gr_zset_bulk_append(bulk, (const uint8_t *)member, length, (double)(i / 8)) == 0;
    }
    CHECK(appended && gr_zset_bulk_end(bulk) == 0, "misordered ties: bulk built");
    CHECK(gr_zset_check(bulk) == 0 && gr_zset_count(bulk) == n, "misordered ties: a consistent tree, every member");
    gr_zset_entry_t a, b;
    CHECK(gr_zset_at(bulk, 8, &a) && a.member_length == 2 && memcmp(a.member, "10", 2) == 0 &&
          gr_zset_at(bulk, 9, &b) && b.member_length == 2 && memcmp(b.member, "11", 2) == 0,
          "ties in byte order after the load (score 1: 10, 11, ... 15, 8, 9)");
    gr_zset_internals_t internals;
    gr_zset_internals(bulk, &internals);
    CHECK(internals.leaves == (n + GR_ZSET_LEAF_ENTRIES - 1) / GR_ZSET_LEAF_ENTRIES && internals.depth == 3,
          "full leaves and two inner levels (%zu leaves, depth %zu)", internals.leaves, internals.depth);
    gr_zset_free(bulk);

    const int64_t before = gr_mem_used_by(GR_MEM_ZSET), allocations = gr_mem_allocations();
    gr_zset_t *unfinished = gr_zset_bulk_begin();
    for (size_t i = 0; i < 1000; i++) {
        size_t length = (size_t)snprintf(member, sizeof member, "u%06zu", i);
        gr_zset_bulk_append(unfinished, (const uint8_t *)member, length, (double)i);
    }
    gr_zset_free(unfinished);
    CHECK(gr_mem_used_by(GR_MEM_ZSET) == before && gr_mem_allocations() == allocations,
          "an unfinished bulk load frees every byte it took");
    gr_zset_t *twice = gr_zset_bulk_begin();
    for (size_t i = 0; i < 3000; i++) {
        size_t length = (size_t)snprintf(member, sizeof member, "t%06zu", i % 2000);   /* 1000 repeated */
        gr_zset_bulk_append(twice, (const uint8_t *)member, length, (double)i);
    }
    CHECK(gr_zset_bulk_end(twice) == -2, "a member appended twice, far apart, is refused");
    gr_zset_free(twice);
    CHECK(gr_mem_used_by(GR_MEM_ZSET) == before && gr_mem_allocations() == allocations,
          "a refused bulk load frees every byte it took");
}

int main(void) {
    test_a_bulk_built_sorted_set_equals_an_inserted_one();
    test_bulk_load_sorts_misordered_appends_and_frees_an_unfinished_one();
    char path[256];
    snprintf(path, sizeof path, "/tmp/goblin-test-snapshot-%d.grdb", (int)getpid());
    test_a_random_keyspace_round_trips(path);
    test_keys_whose_time_passed_are_not_loaded(path);
    unlink(path);
    return checks_report();
}
