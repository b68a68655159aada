/* test_sort.c — SORT (commands/cmd_sort.c) driven over a RESP connection fed bytes, under the
 * sanitizers in CI: with weights that order every element strictly (numeric BY, ties broken
 * by the elements' bytes; ALPHA BY distinct texts), the partial sort SORT BY ... LIMIT uses
 * must give exactly the slice of the full sort, for lists short and long (the median-of-nine
 * path starts past 40), ascending and descending; STORE onto the sorted key itself and GET
 * patterns run alongside. Redis's own tie orders are checked by tests/test_differential_sort.py.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resp/resp_conn.h"
#include "exec/db.h"
#include "tests/test_helpers.h"

/* The bulk strings of the array reply pending on conn (nil as "(nil)"), joined by '|'. */
static char *reply_elements(gr_resp_conn_t *conn) {
    size_t length = 0;
    const uint8_t *out = gr_resp_conn_output(conn, &length);
    char *text = malloc(length + 16);
    size_t at = 0;
    const char *p = (const char *)out, *end = p + length;
    if (p < end && *p == '*') {
        long count = strtol(p + 1, NULL, 10);
        p = strstr(p, "\r\n") + 2;
        for (long i = 0; i < count && p < end; i++) {
            if (*p == '$') {
                long n = strtol(p + 1, NULL, 10);
                p = strstr(p, "\r\n") + 2;
                if (n < 0) { memcpy(text + at, "(nil)", 5); at += 5; }
                else { memcpy(text + at, p, (size_t)n); at += (size_t)n; p += n + 2; }
            }
            text[at++] = '|';
        }
    } else {
        memcpy(text, out, length);
        at = length;
    }
    text[at] = '\0';
    gr_resp_conn_consume_output(conn, length);
    return text;
}

static void command(gr_resp_conn_t *conn, const char *format, ...) __attribute__((format(printf, 2, 3)));
static void command(gr_resp_conn_t *conn, const char *format, ...) {
    char line[512];
    va_list args;
    va_start(args, format);
    vsnprintf(line, sizeof line - 2, format, args);
    va_end(args);
    strcat(line, "\r\n");
    feed(conn, line);
}

/* The slice [start, start + count) of a '|'-joined list (count < 0: to the end). */
static char *slice(const char *joined, long start, long count) {
    char *out = malloc(strlen(joined) + 1);
    size_t at = 0;
    long index = 0;
    for (const char *p = joined; *p;) {
        const char *bar = strchr(p, '|');
        if (index >= start && (count < 0 || index < start + count)) {
            memcpy(out + at, p, (size_t)(bar - p) + 1);
            at += (size_t)(bar - p) + 1;
        }
        index++;
        p = bar + 1;
    }
    out[at] = '\0';
    return out;
}

static void test_a_limited_sort_is_the_slice_of_the_full_sort(gr_resp_conn_t *conn) {
    int mismatches = 0, rounds = 0;
    for (int round = 0; round < 400; round++) {
        command(conn, "FLUSHALL");
        free(reply_elements(conn));
        const int n = 1 + (int)below(below(4) == 0 ? 150 : 45);
        const int alpha = (int)below(2), desc = (int)below(2);
        for (int i = 0; i < n; i++) {
            command(conn, "RPUSH l e%d", (int)below(1000000));
            if (below(8)) {
                if (alpha) command(conn, "SET w_e%d t%08d", i, (int)below(100000000));
                else command(conn, "SET w_e%d %d", i, (int)below(20) - 10);   /* ties: broken by the element */
            }
        }
        free(reply_elements(conn));
        /* ALPHA weights are distinct texts only where set; missing ones tie, so ALPHA keeps
         * every weight set and the elements distinct */
        if (alpha) {
            command(conn, "DEL l");
            for (int i = 0; i < n; i++) {
                command(conn, "RPUSH l e%d", i);
                command(conn, "SET w_e%d t%08d%d", i, (int)below(100000000), i);
            }
            free(reply_elements(conn));
        }
        const char *flags = alpha ? (desc ? "ALPHA DESC" : "ALPHA") : (desc ? "DESC" : "ASC");
        command(conn, "SORT l BY w_* %s", flags);
        char *full = reply_elements(conn);
        const long start = (long)below((size_t)n + 2), count = below(4) == 0 ? -1 : (long)below((size_t)n + 1);
        command(conn, "SORT l BY w_* %s LIMIT %ld %ld", flags, start, count);
        char *part = reply_elements(conn);
        char *expected = slice(full, start, count);
        rounds++;
        if (strcmp(part, expected) != 0) {
            if (mismatches++ < 3) fprintf(stderr, "n=%d %s LIMIT %ld %ld\n  full %s\n  part %s\n", n, flags, start, count, full, part);
        }
        /* the other paths, for the sanitizers: GET patterns, and STORE onto the sorted key */
        command(conn, "SORT l BY w_* %s LIMIT %ld %ld GET # GET w_* GET nokey_*", flags, start, count);
        free(reply_elements(conn));
        command(conn, "SORT l BY w_* %s STORE l", flags);
        free(reply_elements(conn));
        command(conn, "LRANGE l 0 -1");
        char *stored = reply_elements(conn);
        CHECK(strcmp(stored, full) == 0, "STORE onto the sorted key keeps the sorted result");
        free(stored);
        free(full);
        free(part);
        free(expected);
    }
    CHECK(mismatches == 0, "%d of %d limited sorts differ from the slice of the full sort", mismatches, rounds);
}

int main(int argc, char **argv) {
    if (argc > 1) rng_state = strtoull(argv[1], NULL, 10);
    gr_server_t *db = gr_db_new(7);
    gr_resp_conn_t *conn = gr_resp_conn_new(db, 1);
    test_a_limited_sort_is_the_slice_of_the_full_sort(conn);
    gr_resp_conn_free(conn);
    gr_db_free(db);
    return checks_report();
}
