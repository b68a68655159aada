/* test_commands.c — the command layer against a key of another type (WRONGTYPE), driven
 * through the RESP connection (resp_conn.c) so the exact reply bytes are checked.
 *
 * Until the string commands exist no client can create a non-list key, so this test puts
 * one into the keyspace directly and checks that every list command refuses it with
 * Redis's WRONGTYPE error and leaves it intact, and that the connection goes on serving.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "exec/db.h"
#include "resp/resp_conn.h"
#include "engines/string_value.h"
#include "tests/test_helpers.h"

int main(void) {
    const char *wrongtype = "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";
    gr_server_t *db = gr_db_new(42);
    gr_resp_conn_t *conn = gr_resp_conn_new(db, 1);
    expect_reply(conn, "SET s hello\r\n", "+OK\r\n");

    const char *list_commands[] = {
        "LPUSH s a\r\n", "RPUSH s a\r\n", "LPUSHX s a\r\n", "RPUSHX s a\r\n", "LPOP s\r\n", "RPOP s 2\r\n",
        "LLEN s\r\n", "LINDEX s 0\r\n", "LRANGE s 0 -1\r\n", "LSET s 0 x\r\n", "LINSERT s BEFORE a b\r\n",
        "LREM s 0 a\r\n", "LTRIM s 0 1\r\n", "LPOS s a\r\n", "LMOVE s d LEFT RIGHT\r\n", "RPOPLPUSH s d\r\n",
        "LMPOP 1 s LEFT\r\n", "LMOVE l2 s LEFT RIGHT\r\n",
    };
    expect_reply(conn, "RPUSH l2 v\r\n", ":1\r\n");
    for (size_t i = 0; i < sizeof list_commands / sizeof list_commands[0]; i++)
        expect_reply(conn, list_commands[i], wrongtype);
    expect_reply(conn, "TYPE s\r\n", "+string\r\n");
    expect_reply(conn, "LRANGE l2 0 -1\r\n", "*1\r\n$1\r\nv\r\n");   /* LMOVE l2 -> s popped nothing */
    expect_reply(conn, "EXISTS d\r\n", ":0\r\n");
    expect_reply(conn, "PING\r\n", "+PONG\r\n");
    gr_ks_entry_t *entry = gr_ks_find(db->keyspace, (const uint8_t *)"s", 1);
    const gr_string_t *value = entry ? entry->value : NULL;
    CHECK(entry && entry->type == GR_TYPE_STRING && value->length == 5 && memcmp(value->data, "hello", 5) == 0,
          "the string value changed");

    /* protocol errors: Redis's texts, then the connection asks to close */
    gr_resp_conn_t *bad = gr_resp_conn_new(db, 2);
    expect_reply(bad, "*1\r\n$-5\r\n", "-ERR Protocol error: invalid bulk length\r\n");
    CHECK(gr_resp_conn_should_close(bad), "a protocol error closes the connection");
    gr_resp_conn_free(bad);
    bad = gr_resp_conn_new(db, 3);
    expect_reply(bad, "*2147483648\r\n", "-ERR Protocol error: invalid multibulk length\r\n");
    gr_resp_conn_free(bad);
    bad = gr_resp_conn_new(db, 4);
    expect_reply(bad, "*1\r\nx\r\n", "-ERR Protocol error: expected '$', got 'x'\r\n");
    gr_resp_conn_free(bad);
    bad = gr_resp_conn_new(db, 5);
    expect_reply(bad, "SET \"unbalanced\r\n", "-ERR Protocol error: unbalanced quotes in request\r\n");
    gr_resp_conn_free(bad);
    bad = gr_resp_conn_new(db, 6);
    expect_reply(bad, "*1\r\n$600000000\r\n", "-ERR Protocol error: invalid bulk length\r\n");
    gr_resp_conn_free(bad);
    /* a truncated frame waits, and completes */
    bad = gr_resp_conn_new(db, 7);
    expect_reply(bad, "*2\r\n$4\r\nECHO\r\n$5\r\nhel", "");
    expect_reply(bad, "lo\r\n", "$5\r\nhello\r\n");
    expect_reply(bad, "ECHO \"a\\x41\\n\"\r\n", "$3\r\naA\n\r\n");
    expect_reply(bad, "ECHO 'it\\'s'\r\n", "$4\r\nit's\r\n");
    expect_reply(bad, "ECHO 'it''s'\r\n", "-ERR Protocol error: unbalanced quotes in request\r\n");
    gr_resp_conn_free(bad);

    /* Every frame split at every byte: the parser resumes where the last piece stopped
     * (a multibulk, its count and bulk lines, an inline command, a pipeline of both). */
    const char *stream = "*3\r\n$5\r\nRPUSH\r\n$5\r\nsplit\r\n$12\r\nhello\r\nworld\r\nLLEN split\r\n"
                         "*2\r\n$4\r\nLLEN\r\n$5\r\nsplit\r\n";
    for (size_t cut = 1; cut < strlen(stream); cut++) {
        gr_resp_conn_t *split = gr_resp_conn_new(db, 8);
        gr_resp_conn_feed(split, (const uint8_t *)stream, cut);
        gr_resp_conn_feed(split, (const uint8_t *)stream + cut, strlen(stream) - cut);
        char expected[64];
        snprintf(expected, sizeof expected, ":%zu\r\n:%zu\r\n:%zu\r\n", cut, cut, cut);
        size_t length = 0;
        const uint8_t *out = gr_resp_conn_output(split, &length);
        CHECK(length == strlen(expected) && memcmp(out, expected, length) == 0, "cut at %zu: %.*s", cut, (int)length,
              (const char *)out);
        gr_resp_conn_free(split);
    }
    /* one byte at a time, and more arguments than the parser reserves up front (1024) */
    gr_resp_conn_t *trickle = gr_resp_conn_new(db, 9);
    char header[64];
    int n = snprintf(header, sizeof header, "*%d\r\n$5\r\nRPUSH\r\n$4\r\nmany\r\n", 3002);
    for (int i = 0; i < n; i++) gr_resp_conn_feed(trickle, (const uint8_t *)header + i, 1);
    for (int i = 0; i < 3000; i++) {
        char value[32];
        int m = snprintf(value, sizeof value, "$%d\r\n%d\r\n", i < 10 ? 1 : i < 100 ? 2 : i < 1000 ? 3 : 4, i);
        for (int j = 0; j < m; j++) gr_resp_conn_feed(trickle, (const uint8_t *)value + j, 1);
    }
    expect_reply(trickle, "LINDEX many 2999\r\n", ":3000\r\n$4\r\n2999\r\n");
    gr_resp_conn_free(trickle);
    /* before AUTH, Redis's unauthenticated limits */
    gr_db_config_set(db, "requirepass", "pw", (char[64]){0}, 64);
    bad = gr_resp_conn_new(db, 10);
    expect_reply(bad, "*11\r\n", "-ERR Protocol error: unauthenticated multibulk length\r\n");
    gr_resp_conn_free(bad);
    bad = gr_resp_conn_new(db, 11);
    expect_reply(bad, "*2\r\n$16385\r\n", "-ERR Protocol error: unauthenticated bulk length\r\n");
    gr_resp_conn_free(bad);

    gr_resp_conn_free(conn);
    gr_db_free(db);
    CHECK(gr_mem_used_total() == 0, "%lld bytes left", (long long)gr_mem_used_total());
    return checks_report();
}
