/* latency.h — Redis's latency monitor and per-command latency histograms.
 *
 * The monitor (LATENCY LATEST/HISTORY/GRAPH/DOCTOR/RESET): named events ("command" for a slow
 * command, "fast-command" for a slow one flagged fast, ...) record a sample when something took
 * at least latency-monitor-threshold milliseconds; each event keeps its last 160 samples, one per
 * second (a second's samples keep their maximum), and its all-time maximum.
 *
 * The histograms (LATENCY HISTOGRAM, INFO latencystats): with latency-tracking on, every call of
 * a command counts its duration in a log-linear histogram over the call clock's cycles, 16
 * sub-buckets per power of two (about 4% wide), so percentiles are read to that precision and
 * LATENCY HISTOGRAM's cumulative counts at 1024 * 2^k ns (Redis's 1, 2, 4, 8, 16, 32, 65, ... us
 * buckets) are sums of whole buckets.
 */
#ifndef GR_LATENCY_H
#define GR_LATENCY_H

#include <stddef.h>
#include <stdint.h>

#define GR_LATENCY_SAMPLES 160
#define GR_LATENCY_EVENTS 16
#define GR_LATENCY_SUB_BUCKETS 16
#define GR_LATENCY_BUCKETS (61 * GR_LATENCY_SUB_BUCKETS)

typedef struct gr_latency_sample {
    int32_t time;           /* unix seconds */
    uint32_t latency_ms;
} gr_latency_sample_t;

typedef struct gr_latency_event {
    char name[32];          /* "" : a free slot */
    gr_latency_sample_t samples[GR_LATENCY_SAMPLES];
    uint32_t next;          /* where the next second's sample goes */
    uint32_t max_ms;        /* all time */
} gr_latency_event_t;

typedef struct gr_latency_monitor {
    gr_latency_event_t events[GR_LATENCY_EVENTS];
} gr_latency_monitor_t;

/* A sample of latency_ms for event at unix second now_s. */
void gr_latency_add_sample(gr_latency_monitor_t *monitor, const char *event, int64_t now_s, uint32_t latency_ms);
gr_latency_event_t *gr_latency_event(gr_latency_monitor_t *monitor, const char *event, size_t length);
/* The event's samples oldest first into out (at most GR_LATENCY_SAMPLES); their count. */
size_t gr_latency_history(const gr_latency_event_t *event, gr_latency_sample_t *out);
/* Forget one event (1 when it had samples) or, with event NULL, every event (their count). */
int gr_latency_reset(gr_latency_monitor_t *monitor, const uint8_t *event, size_t length);

/* ---- histograms: counts per bucket of a duration in cycles ---- */

static inline unsigned gr_latency_bucket(uint64_t cycles) {
    if (cycles < GR_LATENCY_SUB_BUCKETS) return (unsigned)cycles;
    unsigned octave = 63u - (unsigned)__builtin_clzll(cycles);   /* >= 4 */
    unsigned sub = (unsigned)(cycles >> (octave - 4)) & (GR_LATENCY_SUB_BUCKETS - 1);
    unsigned bucket = (octave - 3) * GR_LATENCY_SUB_BUCKETS + sub;
    return bucket < GR_LATENCY_BUCKETS ? bucket : GR_LATENCY_BUCKETS - 1;
}
/* The largest duration (cycles) a bucket holds. */
uint64_t gr_latency_bucket_top(unsigned bucket);
/* The duration at percentile (0..100) of a histogram of total calls, in cycles (a bucket's top). */
uint64_t gr_latency_percentile(const uint32_t *buckets, uint64_t total, double percentile);

#endif
