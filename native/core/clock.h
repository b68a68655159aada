/* clock.h — the clocks every layer reads, written once: the monotonic clock (deadlines, spin
 * budgets, command timing) and the wall clock in Unix milliseconds (expiry times, start time,
 * ages shown to users). Header-only: a call is one clock_gettime (a vDSO read, no system call). */
#ifndef GR_CLOCK_H
#define GR_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline int64_t gr_monotonic_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

static inline int64_t gr_monotonic_ms(void) { return gr_monotonic_ns() / 1000000; }

static inline int64_t gr_unix_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

#endif
