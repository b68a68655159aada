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
    gr_db_t *db = gr_db_new(11);
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

    gr_db_t *fresh = gr_db_new(12);
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
        gr_db_t *victim = gr_db_new(13);
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
        gr_db_t *victim = gr_db_new(13);
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
    gr_db_t *db = gr_db_new(21);
    gr_resp_conn_t *conn = gr_resp_conn_new(db, 1);
    expect_reply(conn, "SET stays v PXAT 99999999999999\r\n", "+OK\r\n");
    expect_reply(conn, "SET soon v\r\n", "+OK\r\n");
    gr_ks_entry_t *soon = gr_ks_find(db->keyspaces[0], (const uint8_t *)"soon", 4);
    gr_ks_set_expire(db->keyspaces[0], soon, 1);                  /* past, but not yet removed */
    char error[512];
    gr_snapshot_stats_t stats;
    CHECK(gr_snapshot_save(db, path, 0, &stats, error, sizeof error) == 0 && stats.keys == 2, "saves both keys");
    gr_db_t *fresh = gr_db_new(22);
    gr_resp_conn_t *fresh_conn = gr_resp_conn_new(fresh, 1);
    CHECK(gr_snapshot_load(fresh, path, &stats, error, sizeof error) == 1 && stats.keys == 1 && stats.keys_expired == 1,
          "one loaded, one expired: %lld %lld", (long long)stats.keys, (long long)stats.keys_expired);
    expect_reply(fresh_conn, "PEXPIRETIME stays\r\n", ":99999999999999\r\n");
    gr_resp_conn_free(fresh_conn);
    gr_db_free(fresh);
    gr_resp_conn_free(conn);
    gr_db_free(db);
}

int main(void) {
    char path[256];
    snprintf(path, sizeof path, "/tmp/goblin-test-snapshot-%d.grdb", (int)getpid());
    test_a_random_keyspace_round_trips(path);
    test_keys_whose_time_passed_are_not_loaded(path);
    unlink(path);
    return checks_report();
}
