/* latency.c — the latency monitor's events and the histograms' bucket arithmetic (latency.h). */
#include "exec/latency.h"

#include <string.h>

gr_latency_event_t *gr_latency_event(gr_latency_monitor_t *monitor, const char *event, size_t length) {
    for (int i = 0; i < GR_LATENCY_EVENTS; i++) {
        gr_latency_event_t *e = &monitor->events[i];
        if (e->name[0] && strlen(e->name) == length && memcmp(e->name, event, length) == 0) return e;
    }
    return NULL;
}

void gr_latency_add_sample(gr_latency_monitor_t *monitor, const char *event, int64_t now_s, uint32_t latency_ms) {
    size_t length = strlen(event);
    gr_latency_event_t *e = gr_latency_event(monitor, event, length);
    if (!e) {
        for (int i = 0; i < GR_LATENCY_EVENTS && !e; i++)
            if (!monitor->events[i].name[0]) e = &monitor->events[i];
        if (!e || length >= sizeof e->name) return;   /* more event kinds than slots: not recorded */
        memset(e, 0, sizeof *e);
        memcpy(e->name, event, length + 1);
    }
    if (latency_ms > e->max_ms) e->max_ms = latency_ms;
    uint32_t previous = (e->next + GR_LATENCY_SAMPLES - 1) % GR_LATENCY_SAMPLES;
    if (e->samples[previous].time == (int32_t)now_s) {   /* one sample a second: its maximum */
        if (latency_ms > e->samples[previous].latency_ms) e->samples[previous].latency_ms = latency_ms;
        return;
    }
    e->samples[e->next].time = (int32_t)now_s;
    e->samples[e->next].latency_ms = latency_ms;
    e->next = (e->next + 1) % GR_LATENCY_SAMPLES;
}

size_t gr_latency_history(const gr_latency_event_t *event, gr_latency_sample_t *out) {
    size_t n = 0;
    for (uint32_t j = 0; j < GR_LATENCY_SAMPLES; j++) {
        const gr_latency_sample_t *s = &event->samples[(event->next + j) % GR_LATENCY_SAMPLES];
        if (s->time) out[n++] = *s;
    }
    return n;
}

int gr_latency_reset(gr_latency_monitor_t *monitor, const uint8_t *event, size_t length) {
    int reset = 0;
    for (int i = 0; i < GR_LATENCY_EVENTS; i++) {
        gr_latency_event_t *e = &monitor->events[i];
        if (!e->name[0]) continue;
        if (event && (strlen(e->name) != length || memcmp(e->name, event, length) != 0)) continue;
        memset(e, 0, sizeof *e);
        reset++;
    }
    return reset;
}

uint64_t gr_latency_bucket_top(unsigned bucket) {
    if (bucket < GR_LATENCY_SUB_BUCKETS) return bucket;
    unsigned octave = bucket / GR_LATENCY_SUB_BUCKETS + 3, sub = bucket % GR_LATENCY_SUB_BUCKETS;
    uint64_t width = 1ULL << (octave - 4);
    return ((uint64_t)(GR_LATENCY_SUB_BUCKETS + sub) << (octave - 4)) + width - 1;
}

uint64_t gr_latency_percentile(const uint32_t *buckets, uint64_t total, double percentile) {
    if (!total) return 0;
    double wanted = (double)total * percentile / 100.0;
    uint64_t seen = 0;
    for (unsigned b = 0; b < GR_LATENCY_BUCKETS; b++) {
        seen += buckets[b];
        if (buckets[b] && (double)seen >= wanted) return gr_latency_bucket_top(b);
    }
    return gr_latency_bucket_top(GR_LATENCY_BUCKETS - 1);
}
