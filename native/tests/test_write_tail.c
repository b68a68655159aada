/* test_write_tail.c — the write path's tail in C, with no transport and no scheduling noise to
 * blame: N ZADDs growing one sorted set, then N HSETs growing one hash, each fed through the
 * RESP command path (resp_conn -> exec -> commands -> engines) in a process configured as the
 * server is (gr_mem_configure_for_server), each timed by the wall clock and by the thread's
 * CPU clock. Every reply is checked (:1, a new member or field); the slowest writes are
 * reported, not asserted (the machine is shared), as the figures the bench's write-tail rows
 * are compared with:
 *
 *   GOBLIN_WRITE_TAIL=1000000 python3 native/tests/run_c_tests.py --verbose test_write_tail
 *
 * A write whose CPU time is far below its wall time was preempted; one whose CPU time is long
 * did that work (a resize step, page faults: the minor-fault count is shown).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "core/alloc.h"
#include "exec/db.h"
#include "resp/resp_conn.h"
#include "tests/test_helpers.h"

typedef struct write_time { long index; int64_t wall_ns, cpu_ns; long faults; } write_time_t;

static int64_t clock_ns(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int slower_cpu(const void *a, const void *b) {
    const write_time_t *x = a, *y = b;
    return (y->cpu_ns > x->cpu_ns) - (y->cpu_ns < x->cpu_ns);
}

static void grow(gr_server_t *db, const char *what, long count, write_time_t *times) {
    gr_resp_conn_t *conn = gr_resp_conn_new(db, 1);
    char command[128];
    long good = 0;
    struct rusage usage;
    for (long i = 0; i < count; i++) {
        int length = !strcmp(what, "HSET") ? snprintf(command, sizeof command, "HSET tail:h t%015ld t%015ld\r\n", i, i)
                                           : snprintf(command, sizeof command, "ZADD tail:z %ld t%015ld\r\n", i, i);
        getrusage(RUSAGE_THREAD, &usage);
        long faults = usage.ru_minflt;
        int64_t cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID), wall = clock_ns(CLOCK_MONOTONIC);
        gr_resp_conn_feed(conn, (const uint8_t *)command, (size_t)length);
        wall = clock_ns(CLOCK_MONOTONIC) - wall;
        cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu;
        getrusage(RUSAGE_THREAD, &usage);
        size_t out_length = 0;
        const uint8_t *out = gr_resp_conn_output(conn, &out_length);
        good += out_length == 4 && !memcmp(out, ":1\r\n", 4);
        gr_resp_conn_consume_output(conn, out_length);
        times[i] = (write_time_t){i, wall, cpu, usage.ru_minflt - faults};
        if (i % 100000 == 99999) gr_db_cron(db, 1000);   /* the server's cron, ten times a second or so */
    }
    CHECK(good == count, "%s: %ld of %ld writes added one", what, good, count);
    qsort(times, (size_t)count, sizeof *times, slower_cpu);
    long over_half_ms = 0, over_ms = 0;
    for (long i = 0; i < count; i++) over_half_ms += times[i].cpu_ns >= 500000, over_ms += times[i].cpu_ns >= 1000000;
    printf("%s growing to %ld: writes over 0.5 ms of CPU %ld, over 1 ms %ld; slowest (CPU us / wall us / faults @ write):",
           what, count, over_half_ms, over_ms);
    for (long i = 0; i < count && i < 5; i++)
        printf(" %.0f/%.0f/%ld@%ld", times[i].cpu_ns / 1e3, times[i].wall_ns / 1e3, times[i].faults, times[i].index);
    printf("\n");
    gr_resp_conn_free(conn);
}

int main(int argc, char **argv) {
    long count = argc > 1 ? atol(argv[1]) : 20000;
    (void)gr_mem_configure_for_server();
    gr_server_t *db = gr_db_new(42);
    write_time_t *times = malloc(sizeof *times * (size_t)count);
    CHECK(db && times, "set up");
    if (db && times) {
        grow(db, "ZADD", count, times);
        grow(db, "HSET", count, times);
    }
    free(times);
    gr_db_free(db);
    return checks_report();
}
