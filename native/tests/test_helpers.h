/* test_helpers.h — what the C test programs in native/tests share, so each keeps only its
 * own cases: CHECK and the pass/fail count, one seeded PRNG, a monotonic clock, and the list
 * reference model (a plain array of malloc'd values, with the random value mix the list
 * engines are fed) that test_list.c and test_list_pma.c compare their engines against.
 *
 * Programs that include resp/resp_conn.h first also get feed / take_output / expect_reply,
 * which drive a RESP connection with bytes directly (no sockets) and check its exact reply.
 *
 * Header-only: every test program is one translation unit (run_c_tests.py links it with the
 * layers it needs), so the counters are that program's own. Functions are `static inline`
 * so a program that uses only CHECK compiles cleanly under -Wall -Wextra -Werror.
 */
#ifndef GR_TEST_HELPERS_H
#define GR_TEST_HELPERS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- checks ------------------------------------------------------------------------- */

static int passed, failed;

/* CHECK(condition, printf-format, ...): counts a pass, or counts a failure and prints where
 * and why; never stops the program, so one run reports every broken case. */
#define CHECK(condition, ...) do { if (condition) passed++; else { failed++; \
    fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); fprintf(stderr, __VA_ARGS__); \
    fprintf(stderr, "\n"); } } while (0)

/* The last line every program prints (run_c_tests.py shows it), and its exit status. */
static inline int checks_report(void) {
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

/* ---- random numbers: splitmix64 ----------------------------------------------------- */

/* A 64-bit mix of x (splitmix64's output function): also a hash for values that must be
 * the same on both sides of a test (sizes, checksums). */
static inline uint64_t test_mix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* The next number of the stream whose state is *state (any seed, 0 included, is a full
 * stream). Threads and forked roles keep their own state; the rest use rnd(). */
static inline uint64_t test_random(uint64_t *state) {
    const uint64_t x = *state;
    *state += 0x9E3779B97F4A7C15ull;
    return test_mix64(x);
}

/* The program's default stream: set rng_state from the command line's seed. */
static uint64_t rng_state = 20240601;
static inline uint64_t rnd(void) { return test_random(&rng_state); }
static inline size_t below(size_t n) { return n ? (size_t)(rnd() % n) : 0; }

/* ---- time --------------------------------------------------------------------------- */

static inline double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* ---- the list reference model: an array of malloc'd values -------------------------- */

typedef struct ref_value { uint8_t *data; size_t length; } ref_value_t;
typedef struct ref { ref_value_t *items; size_t length, capacity; } ref_t;

static inline int same(const uint8_t *a, size_t a_length, const uint8_t *b, size_t b_length) {
    return a_length == b_length && (a_length == 0 || memcmp(a, b, a_length) == 0);
}

static inline void ref_insert(ref_t *ref, size_t index, const uint8_t *data, size_t length) {
    if (ref->length == ref->capacity) {
        ref->capacity = ref->capacity ? ref->capacity * 2 : 64;
        ref->items = realloc(ref->items, ref->capacity * sizeof *ref->items);
        if (!ref->items) abort();
    }
    memmove(ref->items + index + 1, ref->items + index, (ref->length - index) * sizeof *ref->items);
    ref->items[index].data = malloc(length ? length : 1);
    if (!ref->items[index].data) abort();
    if (length) memcpy(ref->items[index].data, data, length);
    ref->items[index].length = length;
    ref->length++;
}

static inline void ref_delete(ref_t *ref, size_t start, size_t count) {
    if (start >= ref->length) return;
    if (count > ref->length - start) count = ref->length - start;
    for (size_t i = start; i < start + count; i++) free(ref->items[i].data);
    memmove(ref->items + start, ref->items + start + count, (ref->length - start - count) * sizeof *ref->items);
    ref->length -= count;
}

static inline void ref_set(ref_t *ref, size_t index, const uint8_t *data, size_t length) {
    ref_delete(ref, index, 1);
    ref_insert(ref, index, data, length);
}

/* LREM's rule: count > 0 from the head, < 0 from the tail, 0 all. */
static inline int64_t ref_remove_matching(ref_t *ref, const uint8_t *data, size_t length, int64_t count) {
    int64_t removed = 0;
    if (count >= 0) {
        for (size_t i = 0; i < ref->length && (count == 0 || removed < count);) {
            if (same(ref->items[i].data, ref->items[i].length, data, length)) { ref_delete(ref, i, 1); removed++; }
            else i++;
        }
    } else {
        for (size_t i = ref->length; i-- > 0 && removed < -count;)
            if (same(ref->items[i].data, ref->items[i].length, data, length)) { ref_delete(ref, i, 1); removed++; }
    }
    return removed;
}

static inline void ref_clear(ref_t *ref) { ref_delete(ref, 0, ref->length); }

/* How random values are drawn: per mille, empty below empty_permille, else up to short_max
 * bytes below short_permille, else up to medium_max bytes below medium_permille, else a large
 * one of large_min .. large_min + large_span - 1 bytes. common_percent of the values are one
 * of three fixed contents of their length, so LREM and LPOS find matches. */
typedef struct value_mix {
    unsigned empty_permille, short_permille, medium_permille;
    size_t short_max, medium_max, large_min, large_span;
    unsigned common_percent;
} value_mix_t;

/* Writes a value drawn from *mix (or of forced_length bytes, unless SIZE_MAX) into buffer,
 * which holds at least large_min + large_span bytes; returns its length. */
static inline size_t make_value(const value_mix_t *mix, uint8_t *buffer, size_t forced_length) {
    size_t length;
    const uint64_t r = below(1000);
    if (forced_length != SIZE_MAX) length = forced_length;
    else if (r < mix->empty_permille) length = 0;
    else if (r < mix->short_permille) length = below(mix->short_max + 1);
    else if (r < mix->medium_permille) length = below(mix->medium_max + 1);
    else length = mix->large_min + below(mix->large_span);
    if (below(100) < mix->common_percent) {
        const uint8_t seed = (uint8_t)below(3);
        for (size_t i = 0; i < length; i++) buffer[i] = (uint8_t)('a' + (seed + i) % 26);
    } else {
        for (size_t i = 0; i < length; i++) buffer[i] = (uint8_t)rnd();
    }
    return length;
}

/* ---- RESP connections fed bytes directly (only with resp/resp_conn.h included first) -- */

#ifdef GR_RESP_CONN_H
static inline void feed(gr_resp_conn_t *conn, const char *bytes) {
    gr_resp_conn_feed(conn, (const uint8_t *)bytes, strlen(bytes));
}

/* The connection's pending output as text, consumed (valid until the next call). */
static inline const char *take_output(gr_resp_conn_t *conn) {
    static char text[8192];
    size_t length = 0;
    const uint8_t *out = gr_resp_conn_output(conn, &length);
    const size_t kept = length < sizeof text ? length : sizeof text - 1;
    if (kept) memcpy(text, out, kept);
    text[kept] = '\0';
    gr_resp_conn_consume_output(conn, length);
    return text;
}

/* Feed `command` (NULL: nothing, read what is pending) and CHECK the exact reply bytes. */
static inline void expect_reply(gr_resp_conn_t *conn, const char *command, const char *expected) {
    if (command) feed(conn, command);
    const char *got = take_output(conn);
    CHECK(strcmp(got, expected) == 0, "%s -> %s (expected %s)", command ? command : "(pending)", got, expected);
}
#endif

#endif
