/* test_rdb.c — Redis's RDB files (persist/rdb_load.c, rdb_save.c) in one process, for the
 * sanitizer build: a seeded random keyspace of every type Redis has (strings, lists, sets,
 * hashes, sorted sets, streams with groups and pending entries), in several databases and with
 * expiries, written by gr_rdb_save and loaded by gr_rdb_load into a fresh db gives the same
 * DEBUG DIGEST and key counts; then the file damaged — cut at sampled offsets, bytes flipped
 * with the checksum kept (refused, nothing loaded, the offset named) and with the checksum
 * zeroed (so the parser, not the CRC, meets the damage: refused or loaded, never a crash or a
 * read out of bounds, which the --sanitize build would report). The tests against redis-server
 * itself are tests/test_rdb_redis.py.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/alloc.h"
#include "exec/db.h"
#include "persist/rdb_format.h"
#include "resp/resp_conn.h"
#include "tests/test_helpers.h"

static void digest_of(gr_resp_conn_t *conn, char out[64]) {
    feed(conn, "DEBUG DIGEST\r\n");
    snprintf(out, 64, "%s", take_output(conn));
}

static void random_write(gr_resp_conn_t *conn, int step) {
    char command[512];
    snprintf(command, sizeof command, "SELECT %d\r\n", (int)below(3) * 4);
    feed(conn, command);
    take_output(conn);
    int key = (int)below(150);
    switch (below(9)) {
    case 0: snprintf(command, sizeof command, "SET s%d v%llu\r\n", key, (unsigned long long)rnd()); break;
    case 1: snprintf(command, sizeof command, "SET n%d %d\r\n", key, (int)below(100000) - 50000); break;
    case 2: snprintf(command, sizeof command, "RPUSH l%d a%d %d b\r\n", key % 30, step, step - 300); break;
    case 3: snprintf(command, sizeof command, "SADD t%d %d x%d\r\n", key % 20, (int)below(1000), (int)below(300)); break;
    case 4: snprintf(command, sizeof command, "HSET h%d f%d v%d\r\n", key % 20, (int)below(300), step); break;
    case 5: snprintf(command, sizeof command, "ZADD z%d %d.5 m%d\r\n", key % 20, (int)below(1000) - 500, (int)below(300)); break;
    case 6: snprintf(command, sizeof command, "XADD x%d * f %d g v%d\r\n", key % 5, step, step); break;
    case 7: snprintf(command, sizeof command, "SADD i%d %d\r\n", key % 10, (int)below(100000)); break;
    default: snprintf(command, sizeof command, "EXPIRE s%d %d\r\n", key, 100 + (int)below(1000)); break;
    }
    feed(conn, command);
    take_output(conn);
}

static uint8_t *read_file(const char *path, long *length) {
    FILE *f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    *length = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *bytes = malloc((size_t)*length);
    CHECK(fread(bytes, 1, (size_t)*length, f) == (size_t)*length, "read back");
    fclose(f);
    return bytes;
}

static void write_file(const char *path, const uint8_t *bytes, size_t length) {
    FILE *f = fopen(path, "wb");
    fwrite(bytes, 1, length, f);
    fclose(f);
}

static void test_a_random_keyspace_round_trips_and_damage_is_refused(const char *path) {
    gr_server_t *db = gr_db_new(31);
    gr_resp_conn_t *conn = gr_resp_conn_new(db, 1);
    for (int step = 0; step < 5000; step++) random_write(conn, step);
    expect_reply(conn, "SELECT 0\r\n", "+OK\r\n");
    expect_reply(conn, "XGROUP CREATE x1 g 0\r\n", "+OK\r\n");
    feed(conn, "XREADGROUP GROUP g alice COUNT 3 STREAMS x1 >\r\n");
    take_output(conn);
    feed(conn, "XREADGROUP GROUP g bob COUNT 2 STREAMS x1 >\r\n");
    take_output(conn);
    char before[64], after[64];
    digest_of(conn, before);
    int64_t keys = gr_db_key_count(db);
    char error[512] = "";
    gr_rdb_stats_t stats;
    CHECK(gr_rdb_save(db, path, &stats, error, sizeof error) == 0, "saves: %s", error);
    CHECK(stats.keys == keys && stats.bytes > 0, "stats: %lld keys of %lld", (long long)stats.keys, (long long)keys);

    gr_server_t *fresh = gr_db_new(32);
    gr_resp_conn_t *fresh_conn = gr_resp_conn_new(fresh, 1);
    CHECK(gr_rdb_load(fresh, path, &stats, error, sizeof error) == 1, "loads: %s", error);
    digest_of(fresh_conn, after);
    CHECK(strcmp(before, after) == 0 && gr_db_key_count(fresh) == keys, "equal after load: %s vs %s", before, after);
    feed(fresh_conn, "XPENDING x1 g\r\n");
    CHECK(strncmp(take_output(fresh_conn), "*4\r\n:5\r\n", 8) == 0, "the group's five pending entries came back");

    long length;
    uint8_t *bytes = read_file(path, &length);
    char bad_path[600];
    snprintf(bad_path, sizeof bad_path, "%s.bad", path);
    int refused = 1, named = 1;
    for (long cut = 0; cut < length; cut += 1 + (long)below(53)) {
        write_file(bad_path, bytes, (size_t)cut);
        gr_server_t *victim = gr_db_new(33);
        refused &= gr_rdb_load(victim, bad_path, NULL, error, sizeof error) == -1 && gr_db_key_count(victim) == 0;
        named &= strstr(error, "offset") != NULL;
        gr_db_free(victim);
    }
    CHECK(refused && named, "every cut refused with nothing loaded, naming an offset: %s", error);
    refused = 1;
    for (long at = 9; at < length; at += 1 + (long)below(41)) {
        uint8_t saved = bytes[at];
        bytes[at] ^= (uint8_t)(1u << below(8));
        write_file(bad_path, bytes, (size_t)length);
        gr_server_t *victim = gr_db_new(34);
        refused &= gr_rdb_load(victim, bad_path, NULL, error, sizeof error) == -1 && gr_db_key_count(victim) == 0;
        gr_db_free(victim);
        bytes[at] = saved;
    }
    CHECK(refused, "every flipped byte refused (the checksum, or the parser first): %s", error);
    /* the checksum zeroed (rdbchecksum no): the parser alone meets each damage */
    memset(bytes + length - 8, 0, 8);
    int loaded = 0, failed_loads = 0;
    for (long at = 9; at < length - 8; at += 1 + (long)below(13)) {
        uint8_t saved = bytes[at];
        bytes[at] = (uint8_t)rnd();
        write_file(bad_path, bytes, (size_t)length);
        gr_server_t *victim = gr_db_new(35);
        int result = gr_rdb_load(victim, bad_path, NULL, error, sizeof error);
        if (result == 1) loaded++;
        else failed_loads += result == -1 && gr_db_key_count(victim) == 0 && strstr(error, "offset") != NULL;
        gr_db_free(victim);
        bytes[at] = saved;
    }
    CHECK(loaded + failed_loads > 0 && failed_loads > 0, "damage without a checksum: %d loaded, %d refused cleanly",
          loaded, failed_loads);
    CHECK(gr_rdb_load(fresh, "/nonexistent/dir/dump.rdb", NULL, error, sizeof error) == 0, "no file: 0");
    unlink(bad_path);
    free(bytes);
    gr_resp_conn_free(fresh_conn);
    gr_db_free(fresh);
    gr_resp_conn_free(conn);
    gr_db_free(db);
}

int main(void) {
    char path[256];
    snprintf(path, sizeof path, "/tmp/goblin-test-rdb-%d.rdb", (int)getpid());
    test_a_random_keyspace_round_trips_and_damage_is_refused(path);
    unlink(path);
    return checks_report();
}
