/* clock.h — the monotonic clock every layer reads (deadlines, spin budgets, command timing),
 * written once. Header-only: a call is one clock_gettime (a vDSO read, no system call). */
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

#endif
