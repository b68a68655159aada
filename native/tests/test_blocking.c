/* test_blocking.c — blocking.c under the sanitizers: park, serve in FIFO order, chains of
 * BLMOVE, clients freed while parked, timeouts, EXEC deferral, RENAME/MOVE/SWAPDB wakes,
 * CLIENT UNBLOCK, and a randomised run of many waiters and pushes that must neither lose nor
 * duplicate.
 *
 * Connections are RESP connections fed bytes directly (no sockets), so each one's reply
 * bytes are checked exactly.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/alloc.h"
#include "exec/blocking.h"
#include "exec/db.h"
#include "resp/resp_conn.h"
#include "tests/test_helpers.h"

/* What gr_db_take_woken reports, in order, until 0. */
static int woken_count(gr_server_t *db) {
    int n = 0;
    while (gr_db_take_woken(db)) n++;
    return n;
}

static void test_fifo_and_parking(void) {
    gr_server_t *db = gr_db_new(1);
    gr_resp_conn_t *a = gr_resp_conn_new(db, 1), *b = gr_resp_conn_new(db, 2), *c = gr_resp_conn_new(db, 3);
    expect_reply(a, "BLPOP k1 k2 0\r\nPING\r\n", "");          /* parked: PING waits behind it */
    expect_reply(b, "BRPOP k2 0\r\n", "");
    CHECK(db->blocked_count == 2, "blocked_count %lld", (long long)db->blocked_count);
    expect_reply(c, "RPUSH k2 x y z\r\n", ":3\r\n");             /* the length right after the push */
    expect_reply(a, NULL, "*2\r\n$2\r\nk2\r\n$1\r\nx\r\n");       /* the longest waiter first */
    expect_reply(b, NULL, "*2\r\n$2\r\nk2\r\n$1\r\nz\r\n");
    CHECK(woken_count(db) == 2, "two woken");
    gr_resp_conn_resume(a);
    expect_reply(a, NULL, "+PONG\r\n");                          /* what waited runs after */
    expect_reply(c, "LRANGE k2 0 -1\r\n", "*1\r\n$1\r\ny\r\n");
    CHECK(db->blocked_count == 0, "none blocked");
    gr_resp_conn_free(a);
    gr_resp_conn_free(b);
    gr_resp_conn_free(c);
    gr_db_free(db);
}

static void test_blmove_chain_and_dead_waiters(void) {
    gr_server_t *db = gr_db_new(2);
    gr_resp_conn_t *mover = gr_resp_conn_new(db, 1), *final = gr_resp_conn_new(db, 2);
    gr_resp_conn_t *gone = gr_resp_conn_new(db, 3), *pusher = gr_resp_conn_new(db, 4);
    expect_reply(gone, "BLPOP s1 0\r\n", "");
    expect_reply(mover, "BLMOVE s1 s2 LEFT RIGHT 0\r\n", "");
    expect_reply(final, "BLMPOP 0 1 s2 LEFT COUNT 5\r\n", "");
    gr_resp_conn_free(gone);                               /* freed while parked: forgotten */
    CHECK(db->blocked_count == 2, "blocked_count %lld", (long long)db->blocked_count);
    expect_reply(pusher, "RPUSH s1 v\r\n", ":1\r\n");
    expect_reply(mover, NULL, "$1\r\nv\r\n");
    expect_reply(final, NULL, "*2\r\n$2\r\ns2\r\n*1\r\n$1\r\nv\r\n");
    expect_reply(pusher, "EXISTS s1 s2\r\n", ":0\r\n");
    /* a wrong-type key met first: the waiter is answered WRONGTYPE at once */
    expect_reply(pusher, "SET str x\r\n", "+OK\r\n");
    expect_reply(mover, "BLPOP str other 0\r\n", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
    gr_resp_conn_free(mover);
    gr_resp_conn_free(final);
    gr_resp_conn_free(pusher);
    gr_db_free(db);
}

static void test_timeouts(void) {
    gr_server_t *db = gr_db_new(3);
    gr_resp_conn_t *a = gr_resp_conn_new(db, 1), *b = gr_resp_conn_new(db, 2);
    expect_reply(a, "BLPOP t 0.01\r\n", "");
    expect_reply(b, "BLMOVE t u LEFT LEFT 0.01\r\n", "");
    CHECK(gr_db_next_block_timeout_ms(db) >= 0 && gr_db_next_block_timeout_ms(db) <= 10, "deadline %lld",
          (long long)gr_db_next_block_timeout_ms(db));
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    int64_t expired = 0;
    do {
        expired += gr_db_expire_blocked(db);
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while (expired < 2 && now.tv_sec - start.tv_sec < 5);
    CHECK(expired == 2, "expired %lld", (long long)expired);
    expect_reply(a, NULL, "*-1\r\n");
    expect_reply(b, NULL, "$-1\r\n");
    CHECK(gr_db_next_block_timeout_ms(db) == -1, "no deadline left");
    feed(a, "HELLO 3\r\n");
    take_output(a);                                             /* HELLO's map */
    expect_reply(a, "BLPOP t 0.001\r\n", "");
    while (!gr_db_expire_blocked(db)) {}
    expect_reply(a, NULL, "_\r\n");                              /* RESP3's null */
    gr_resp_conn_free(a);
    gr_resp_conn_free(b);
    gr_db_free(db);
}

static void test_exec_and_key_moves(void) {
    gr_server_t *db = gr_db_new(4);
    gr_resp_conn_t *w = gr_resp_conn_new(db, 1), *tx = gr_resp_conn_new(db, 2);
    expect_reply(w, "BLPOP q 0\r\n", "");
    expect_reply(tx, "MULTI\r\nRPUSH q a\r\nLLEN q\r\nEXEC\r\n", "+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n:1\r\n:1\r\n");
    expect_reply(w, NULL, "*2\r\n$1\r\nq\r\n$1\r\na\r\n");
    expect_reply(tx, "MULTI\r\nBLPOP nothing 0\r\nEXEC\r\n", "+OK\r\n+QUEUED\r\n*1\r\n*-1\r\n");
    /* RENAME onto a watched key wakes */
    expect_reply(w, "BLPOP renamed 0\r\n", "");
    expect_reply(tx, "RPUSH src r\r\nRENAME src renamed\r\n", ":1\r\n+OK\r\n");
    expect_reply(w, NULL, "*2\r\n$7\r\nrenamed\r\n$1\r\nr\r\n");
    /* MOVE into the waiter's database wakes */
    expect_reply(w, "SELECT 2\r\nBLPOP moved 0\r\n", "+OK\r\n");
    expect_reply(tx, "RPUSH moved m\r\nMOVE moved 2\r\n", ":1\r\n:1\r\n");
    expect_reply(w, NULL, "*2\r\n$5\r\nmoved\r\n$1\r\nm\r\n");
    /* SWAPDB brings a list under a watched key */
    expect_reply(w, "BLPOP swapped 0\r\n", "");
    expect_reply(tx, "SELECT 5\r\nRPUSH swapped s\r\nSWAPDB 5 2\r\n", "+OK\r\n:1\r\n+OK\r\n");
    expect_reply(w, NULL, "*2\r\n$7\r\nswapped\r\n$1\r\ns\r\n");
    CHECK(db->blocked_count == 0, "none blocked");
    gr_resp_conn_free(w);
    gr_resp_conn_free(tx);
    gr_db_free(db);
}

/* Many waiters on a few keys, random pushes and frees: every pushed value is delivered to
 * exactly one waiter or stays in its list. */
/* CLIENT UNBLOCK: the timeout's reply or the UNBLOCKED error, the waiter woken and forgotten. */
static void test_client_unblock(void) {
    gr_server_t *db = gr_db_new(5);
    gr_resp_conn_t *a = gr_resp_conn_new(db, 11), *b = gr_resp_conn_new(db, 12), *admin = gr_resp_conn_new(db, 13);
    expect_reply(a, "BLPOP k 0\r\nPING\r\n", "");
    expect_reply(b, "BLMOVE k d LEFT LEFT 0\r\n", "");
    expect_reply(admin, "CLIENT UNBLOCK 13\r\n", ":0\r\n");                 /* itself: not blocked */
    expect_reply(admin, "CLIENT UNBLOCK 11\r\n", ":1\r\n");
    expect_reply(a, NULL, "*-1\r\n");                                          /* BLPOP's timeout reply */
    expect_reply(admin, "CLIENT UNBLOCK 12 ERROR\r\n", ":1\r\n");
    expect_reply(b, NULL, "-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n");
    expect_reply(admin, "CLIENT UNBLOCK 12\r\n", ":0\r\n");
    CHECK(db->blocked_count == 0 && gr_blocking_check(db) == 0, "nobody blocked after CLIENT UNBLOCK");
    CHECK(woken_count(db) == 2, "both woken");
    gr_resp_conn_resume(a);
    expect_reply(a, NULL, "+PONG\r\n");
    expect_reply(admin, "RPUSH k v\r\n", ":1\r\n");                         /* nobody takes it */
    expect_reply(admin, "LLEN k\r\n", ":1\r\n");
    gr_resp_conn_free(a);
    gr_resp_conn_free(b);
    gr_resp_conn_free(admin);
    gr_db_free(db);
}

static void test_random_waiters(int rounds) {
    enum { WAITERS = 48, KEYS = 3 };
    gr_server_t *db = gr_db_new(5);
    gr_resp_conn_t *waiters[WAITERS] = {0};
    gr_resp_conn_t *pusher = gr_resp_conn_new(db, 1000);
    srand(7);
    long pushed = 0, delivered = 0, next_value = 0;
    for (int round = 0; round < rounds; round++) {
        int i = rand() % WAITERS;
        if (!waiters[i]) {
            waiters[i] = gr_resp_conn_new(db, i + 1);
            char command[64];
            int k1 = rand() % KEYS, k2 = rand() % KEYS;
            snprintf(command, sizeof command, "BLPOP key%d key%d 0\r\n", k1, k2);
            feed(waiters[i], command);
        } else if (rand() % 4 == 0) {
            const char *out = take_output(waiters[i]);
            if (*out) delivered++;
            gr_resp_conn_free(waiters[i]);           /* gone, parked or served */
            waiters[i] = NULL;
        }
        if (rand() % 2 == 0) {
            char command[64];
            snprintf(command, sizeof command, "RPUSH key%d %ld\r\n", rand() % KEYS, next_value++);
            feed(pusher, command);
            take_output(pusher);
            pushed++;
        }
        for (int j = 0; j < WAITERS; j++) {           /* served waiters may block again */
            if (!waiters[j]) continue;
            size_t length;
            gr_resp_conn_output(waiters[j], &length);
            if (length) {
                take_output(waiters[j]);
                delivered++;
                gr_resp_conn_free(waiters[j]);
                waiters[j] = NULL;
            }
        }
        if (round % 97 == 0 && gr_blocking_check(db) != 0) { CHECK(0, "blocked bookkeeping broken"); break; }
    }
    while (gr_db_take_woken(db)) {}
    long left = 0;
    for (int k = 0; k < KEYS; k++) {
        char command[32];
        snprintf(command, sizeof command, "LLEN key%d\r\n", k);
        feed(pusher, command);
        left += strtol(take_output(pusher) + 1, NULL, 10);
    }
    CHECK(delivered + left == pushed, "pushed %ld, delivered %ld, left %ld", pushed, delivered, left);
    for (int j = 0; j < WAITERS; j++) if (waiters[j]) gr_resp_conn_free(waiters[j]);
    CHECK(db->blocked_count == 0, "blocked_count %lld after freeing every waiter", (long long)db->blocked_count);
    gr_resp_conn_free(pusher);
    gr_db_free(db);
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 20000;
    test_fifo_and_parking();
    test_blmove_chain_and_dead_waiters();
    test_timeouts();
    test_exec_and_key_moves();
    test_client_unblock();
    test_random_waiters(rounds);
    return checks_report();
}
