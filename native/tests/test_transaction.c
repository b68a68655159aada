/* test_transaction.c — exec/transaction.c under the sanitizers: MULTI queues and EXEC runs,
 * EXECABORT, WATCH touched by another connection, UNWATCH, connections freed while in MULTI
 * or watching (their queue and watch nodes must go), FLUSHDB/SWAPDB touches, and the watch
 * table's bookkeeping (gr_transaction_check) after each step. RESP connections fed bytes.
 */
#include <stdio.h>
#include <string.h>

#include "exec/db.h"
#include "exec/transaction.h"
#include "resp/resp_conn.h"
#include "tests/test_helpers.h"

static void test_multi_exec_and_execabort(void) {
    gr_server_t *db = gr_db_new(1);
    gr_resp_conn_t *a = gr_resp_conn_new(db, 1);
    expect_reply(a, "MULTI\r\nSET k 1\r\nINCR k\r\nLRANGE nothing 0 -1\r\nEXEC\r\n",
                 "+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n*3\r\n+OK\r\n:2\r\n*0\r\n");
    expect_reply(a, "MULTI\r\nSET k 5\r\nGET\r\nEXEC\r\nGET k\r\n",
                 "+OK\r\n+QUEUED\r\n-ERR wrong number of arguments for 'get' command\r\n"
                 "-EXECABORT Transaction discarded because of previous errors.\r\n$1\r\n2\r\n");
    expect_reply(a, "MULTI\r\nRPUSH big a b c d e f g h i j k l m n o p q r s t\r\nDISCARD\r\nEXISTS big\r\n",
                 "+OK\r\n+QUEUED\r\n+OK\r\n:0\r\n");
    CHECK(gr_transaction_check(db) == 0, "bookkeeping");
    gr_resp_conn_free(a);
    gr_db_free(db);
}

static void test_watch_touch_unwatch_and_free(void) {
    gr_server_t *db = gr_db_new(2);
    gr_resp_conn_t *a = gr_resp_conn_new(db, 1), *b = gr_resp_conn_new(db, 2), *c = gr_resp_conn_new(db, 3);
    expect_reply(a, "WATCH k other\r\n", "+OK\r\n");
    expect_reply(c, "WATCH k\r\n", "+OK\r\n");
    CHECK(db->watched_keys == 3 && gr_transaction_check(db) == 0, "three watch nodes: %lld", (long long)db->watched_keys);
    expect_reply(b, "SET k 1\r\n", "+OK\r\n");
    expect_reply(a, "MULTI\r\nSET k 2\r\nEXEC\r\nGET k\r\n", "+OK\r\n+QUEUED\r\n*-1\r\n$1\r\n1\r\n");
    CHECK(db->watched_keys == 1 && gr_transaction_check(db) == 0, "EXEC unwatched a's keys");
    gr_resp_conn_free(c);                              /* freed while watching */
    CHECK(db->watched_keys == 0 && gr_transaction_check(db) == 0, "c's node gone");
    expect_reply(a, "WATCH k\r\nUNWATCH\r\n", "+OK\r\n+OK\r\n");
    expect_reply(b, "SET k 3\r\n", "+OK\r\n");
    expect_reply(a, "MULTI\r\nGET k\r\nEXEC\r\n", "+OK\r\n+QUEUED\r\n*1\r\n$1\r\n3\r\n");
    expect_reply(a, "WATCH k\r\nMULTI\r\nSET k 4\r\n", "+OK\r\n+OK\r\n+QUEUED\r\n");
    gr_resp_conn_free(a);                              /* freed in MULTI with a queue and a watch */
    CHECK(db->watched_keys == 0 && gr_transaction_check(db) == 0, "a's queue and node gone");
    gr_resp_conn_free(b);
    gr_db_free(db);
}

static void test_flushdb_and_swapdb_touch_what_they_replace(void) {
    gr_server_t *db = gr_db_new(3);
    gr_resp_conn_t *a = gr_resp_conn_new(db, 1), *b = gr_resp_conn_new(db, 2);
    expect_reply(a, "WATCH absent\r\n", "+OK\r\n");
    expect_reply(b, "SET x 1\r\nFLUSHDB\r\n", "+OK\r\n+OK\r\n");
    expect_reply(a, "MULTI\r\nPING\r\nEXEC\r\n", "+OK\r\n+QUEUED\r\n*1\r\n+PONG\r\n");
    expect_reply(a, "WATCH moved\r\n", "+OK\r\n");
    expect_reply(b, "SELECT 1\r\nSET moved 1\r\nSWAPDB 0 1\r\n", "+OK\r\n+OK\r\n+OK\r\n");
    expect_reply(a, "MULTI\r\nPING\r\nEXEC\r\n", "+OK\r\n+QUEUED\r\n*-1\r\n");
    CHECK(gr_transaction_check(db) == 0, "bookkeeping");
    gr_resp_conn_free(a);
    gr_resp_conn_free(b);
    gr_db_free(db);
}

int main(void) {
    test_multi_exec_and_execabort();
    test_watch_touch_unwatch_and_free();
    test_flushdb_and_swapdb_touch_what_they_replace();
    return checks_report();
}
