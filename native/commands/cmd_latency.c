/* cmd_latency.c — LATENCY LATEST / HISTORY / RESET / GRAPH / DOCTOR / HISTOGRAM / HELP over the
 * latency monitor and the per-command histograms (exec/latency.h), with Redis 7.0's replies:
 * GRAPH draws Redis's sparkline (four rows of "_o#", a column a sample, labels of how long ago
 * under it), HISTOGRAM gives each command's calls and cumulative counts at Redis's buckets
 * (1024 * 2^k ns, labelled as Redis's 2-significant-figure histogram labels them: 1, 2, 4, 8, 16, 33,
 * 66, 132, ... microseconds). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands/commands.h"
#include "core/bytes.h"
#include "exec/db.h"
#include "exec/latency.h"
#include "exec/server_text.h"

#define GRAPH_COLUMNS 80
#define GRAPH_ROWS 4

static void reply_arity(gr_reply_t *reply, const char *name) { gr_reply_arity_error(reply, name); }

static void latency_latest(gr_server_t *db, gr_reply_t *reply) {
    size_t count = 0;
    for (int i = 0; i < GR_LATENCY_EVENTS; i++) count += db->latency.events[i].name[0] != '\0';
    gr_reply_array_begin(reply, count);
    for (int i = 0; i < GR_LATENCY_EVENTS; i++) {
        const gr_latency_event_t *e = &db->latency.events[i];
        if (!e->name[0]) continue;
        const gr_latency_sample_t *last = &e->samples[(e->next + GR_LATENCY_SAMPLES - 1) % GR_LATENCY_SAMPLES];
        gr_reply_array_begin(reply, 4);
        gr_reply_bulk(reply, (const uint8_t *)e->name, strlen(e->name));
        gr_reply_integer(reply, last->time);
        gr_reply_integer(reply, last->latency_ms);
        gr_reply_integer(reply, e->max_ms);
    }
}

static void latency_history(gr_server_t *db, const uint8_t *name, size_t length, gr_reply_t *reply) {
    gr_latency_event_t *e = gr_latency_event(&db->latency, (const char *)name, length);
    gr_latency_sample_t samples[GR_LATENCY_SAMPLES];
    size_t n = e ? gr_latency_history(e, samples) : 0;
    gr_reply_array_begin(reply, n);
    for (size_t i = 0; i < n; i++) {
        gr_reply_array_begin(reply, 2);
        gr_reply_integer(reply, samples[i].time);
        gr_reply_integer(reply, samples[i].latency_ms);
    }
}

/* ---- GRAPH: Redis's sparkline ---- */

/* Raw bytes onto a server_text buffer. */
static void put(gr_text_t *t, const char *bytes, size_t n) { gr_text_append(t, "%.*s", (int)n, bytes); }

typedef struct point {
    double value;
    char label[24];
} point_t;

/* Columns [offset, offset + n) of the sequence: GRAPH_ROWS rows of the fill charset, then a
 * blank line and the labels written downwards, one character a row. */
static void sparkline_range(gr_text_t *out, const point_t *points, double min, double max, int offset, int n) {
    static const char fill[] = "_o#";
    const int charset = 3, steps = charset * GRAPH_ROWS;
    double span = max - min;
    if (span == 0) span = 1;
    char row_text[GRAPH_COLUMNS];
    for (int row = 0;; row++) {
        int more = 0;
        memset(row_text, ' ', (size_t)n);
        for (int j = 0; j < n; j++) {
            const point_t *p = &points[j + offset];
            int step = (int)((int)((p->value - min) * steps) / span);
            if (step < 0) step = 0;
            if (step >= steps) step = steps - 1;
            if (row < GRAPH_ROWS) {
                int index = step - (GRAPH_ROWS - row - 1) * charset;
                more = 1;
                if (index >= 0 && index < charset) row_text[j] = fill[index];
                else if (index >= charset) row_text[j] = '|';
            } else {
                if (row - GRAPH_ROWS < 1) { more = 1; break; }   /* one blank row before the labels */
                int at = row - GRAPH_ROWS - 1;
                if ((int)strlen(p->label) > at) {
                    more = 1;
                    row_text[j] = p->label[at];
                }
            }
        }
        if (!more) break;
        put(out, row_text, (size_t)n);
        put(out, "\n", 1);
    }
}

static void latency_graph(gr_server_t *db, const uint8_t *name, size_t length, gr_reply_t *reply) {
    gr_latency_event_t *e = gr_latency_event(&db->latency, (const char *)name, length);
    if (!e) {
        char message[200];
        snprintf(message, sizeof message, "ERR No samples available for event '%.*s'", (int)(length < 64 ? length : 64),
                 (const char *)name);
        gr_reply_error_text(reply, GR_ERR_GENERIC, message);
        return;
    }
    gr_latency_sample_t samples[GR_LATENCY_SAMPLES];
    size_t n = gr_latency_history(e, samples);
    point_t points[GR_LATENCY_SAMPLES];
    double min = 0, max = 0;
    int64_t now = (int64_t)time(NULL);
    for (size_t i = 0; i < n; i++) {
        double v = samples[i].latency_ms;
        if (i == 0 || v > max) max = v;
        if (i == 0 || v < min) min = v;
        points[i].value = v;
        int64_t ago = now - samples[i].time;
        if (ago < 60) snprintf(points[i].label, sizeof points[i].label, "%llds", (long long)ago);
        else if (ago < 3600) snprintf(points[i].label, sizeof points[i].label, "%lldm", (long long)(ago / 60));
        else if (ago < 86400) snprintf(points[i].label, sizeof points[i].label, "%lldh", (long long)(ago / 3600));
        else snprintf(points[i].label, sizeof points[i].label, "%lldd", (long long)(ago / 86400));
    }
    gr_text_t out;
    if (gr_text_init(&out, 1024) != 0) { gr_reply_oom(reply); return; }
    char head[200];
    int head_length = snprintf(head, sizeof head, "%s - high %lu ms, low %lu ms (all time high %lu ms)\n", e->name,
                               (unsigned long)max, (unsigned long)min, (unsigned long)e->max_ms);
    put(&out, head, (size_t)head_length);
    for (int j = 0; j < GRAPH_COLUMNS; j++) put(&out, "-", 1);
    put(&out, "\n", 1);
    for (size_t j = 0; j < n; j += GRAPH_COLUMNS) {
        if (j) put(&out, "\n", 1);
        sparkline_range(&out, points, min, max, (int)j, (int)(n - j < GRAPH_COLUMNS ? n - j : GRAPH_COLUMNS));
    }
    if (out.failed) gr_reply_oom(reply);
    else gr_reply_verbatim(reply, (const uint8_t *)out.data, out.length);
    gr_text_free(&out);
}

/* ---- DOCTOR ---- */

static void latency_doctor(gr_server_t *db, gr_reply_t *reply) {
    gr_text_t out;
    char line[600];
    int n;
    if (db->config.latency_monitor_threshold_ms == 0) {
        n = snprintf(line, sizeof line,
                     "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You may "
                     "use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. If we weren't "
                     "in a deep space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.\n");
        gr_reply_verbatim(reply, (const uint8_t *)line, (size_t)n);
        return;
    }
    int events = 0, command_events = 0;
    for (int i = 0; i < GR_LATENCY_EVENTS; i++) events += db->latency.events[i].name[0] != '\0';
    if (!events) {
        n = snprintf(line, sizeof line,
                     "Dave, no latency spike was observed during the lifetime of this Redis instance, not in the "
                     "slightest bit. I honestly think you ought to sleep with some ease now.\n");
        gr_reply_verbatim(reply, (const uint8_t *)line, (size_t)n);
        return;
    }
    if (gr_text_init(&out, 1024) != 0) { gr_reply_oom(reply); return; }
    n = snprintf(line, sizeof line,
                 "Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you "
                 "Dave?\n\n");
    put(&out, line, (size_t)n);
    int number = 0;
    for (int i = 0; i < GR_LATENCY_EVENTS; i++) {
        const gr_latency_event_t *e = &db->latency.events[i];
        if (!e->name[0]) continue;
        gr_latency_sample_t samples[GR_LATENCY_SAMPLES];
        size_t count = gr_latency_history(e, samples);
        double sum = 0, deviation = 0;
        for (size_t j = 0; j < count; j++) sum += samples[j].latency_ms;
        double average = count ? sum / (double)count : 0;
        for (size_t j = 0; j < count; j++) deviation += fabs(samples[j].latency_ms - average);
        deviation = count ? deviation / (double)count : 0;
        double period = count > 1 ? (double)(samples[count - 1].time - samples[0].time) / (double)(count - 1) : 1.0;
        if (!strcmp(e->name, "command") || !strcmp(e->name, "fast-command")) command_events++;
        n = snprintf(line, sizeof line,
                     "%d. %s: %zu latency spikes (average %.0fms, mean deviation %.0fms, period %.2f sec). Worst all "
                     "time event %lums.\n", ++number, e->name, count, average, deviation, period, (unsigned long)e->max_ms);
        put(&out, line, (size_t)n);
    }
    n = snprintf(line, sizeof line, "\nI have a few advices for you:\n\n");
    put(&out, line, (size_t)n);
    if (db->slowlog.log_slower_than_us < 0 ||
        db->slowlog.log_slower_than_us / 1000 >= db->config.latency_monitor_threshold_ms) {
        n = snprintf(line, sizeof line,
                     "- Your current Slow Log configuration only logs events that are slower than your configured "
                     "latency monitor threshold. Please use 'CONFIG SET slowlog-log-slower-than %lld'.\n",
                     (long long)db->config.latency_monitor_threshold_ms * 1000);
        put(&out, line, (size_t)n);
    }
    if (command_events) {
        n = snprintf(line, sizeof line,
                     "- Check your Slow Log to understand what are the commands you are running which are too slow to "
                     "execute. Please check https://redis.io/commands/slowlog for more information.\n"
                     "- Deleting, expiring or evicting (because of maxmemory policy) large objects is a blocking "
                     "operation. If you have very large objects that are often deleted, expired, or evicted, try to "
                     "fragment those objects into multiple smaller objects.\n");
        put(&out, line, (size_t)n);
    }
    if (out.failed) gr_reply_oom(reply);
    else gr_reply_verbatim(reply, (const uint8_t *)out.data, out.length);
    gr_text_free(&out);
}

/* ---- HISTOGRAM ---- */

static void reply_histogram(gr_server_t *db, size_t index, gr_reply_t *reply) {
    const gr_command_stat_t *stat = &db->command_stats[index];
    const char *name = gr_command_stat_name(index);
    uint64_t at[64] = {0};   /* calls whose duration is at most 1024 * 2^k ns, not yet cumulative */
    int top = -1;
    for (unsigned b = 0; b < GR_LATENCY_BUCKETS; b++) {
        if (!stat->histogram[b]) continue;
        double ns = db->cycles_per_ns > 0 ? (double)gr_latency_bucket_top(b) / db->cycles_per_ns : 0;
        if (ns > 1e9) ns = 1e9;   /* Redis's histograms stop at one second */
        int k = 0;
        while (k < 63 && 1024.0 * (double)(1ULL << k) < ns) k++;
        at[k] += stat->histogram[b];
        if (k > top) top = k;
    }
    size_t pairs = 0;
    for (int k = 0; k <= top; k++) pairs += at[k] != 0;
    gr_reply_bulk(reply, (const uint8_t *)name, strlen(name));
    gr_reply_map_begin(reply, 2);
    gr_reply_bulk(reply, (const uint8_t *)"calls", 5);
    gr_reply_integer(reply, stat->calls);
    gr_reply_bulk(reply, (const uint8_t *)"histogram_usec", 14);
    gr_reply_map_begin(reply, pairs);
    uint64_t cumulative = 0;
    for (int k = 0; k <= top; k++) {
        if (!at[k]) continue;
        cumulative += at[k];
        /* Redis's label: the top of the 2-significant-figure bucket of 1024 * 2^k ns, in us */
        gr_reply_integer(reply, (int64_t)(((1032ULL << k) - 1) / 1000));
        gr_reply_integer(reply, (int64_t)cumulative);
    }
}

static void latency_histogram(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                              gr_reply_t *reply) {
    size_t commands = 0;
    while (commands < GR_COMMAND_STAT_SLOTS && gr_command_stat_name(commands)) commands++;
    uint8_t *wanted = calloc(commands ? commands : 1, 1);
    if (!wanted) { gr_reply_oom(reply); return; }
    for (size_t i = 0; i < commands; i++) {
        if (!db->command_stats[i].histogram || !db->command_stats[i].calls) continue;
        if (argc == 2) { wanted[i] = 1; continue; }
        const char *name = gr_command_stat_name(i);
        for (size_t a = 2; a < argc; a++)
            if (gr_word_is(argv[a], argv_length[a], name)) wanted[i] = 1;
    }
    size_t count = 0;
    for (size_t i = 0; i < commands; i++) count += wanted[i];
    gr_reply_map_begin(reply, count);
    for (size_t i = 0; i < commands; i++)
        if (wanted[i]) reply_histogram(db, i, reply);
    free(wanted);
}

void gr_cmd_latency(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                    gr_reply_t *reply) {
    const uint8_t *sub = argv[1];
    size_t length = argv_length[1];
    if (gr_word_is(sub, length, "latest")) {
        if (argc != 2) { reply_arity(reply, "latency|latest"); return; }
        latency_latest(db, reply);
    } else if (gr_word_is(sub, length, "history")) {
        if (argc != 3) { reply_arity(reply, "latency|history"); return; }
        latency_history(db, argv[2], argv_length[2], reply);
    } else if (gr_word_is(sub, length, "graph")) {
        if (argc != 3) { reply_arity(reply, "latency|graph"); return; }
        latency_graph(db, argv[2], argv_length[2], reply);
    } else if (gr_word_is(sub, length, "doctor")) {
        if (argc != 2) { reply_arity(reply, "latency|doctor"); return; }
        latency_doctor(db, reply);
    } else if (gr_word_is(sub, length, "reset")) {
        int reset = 0;
        if (argc == 2) reset = gr_latency_reset(&db->latency, NULL, 0);
        for (size_t a = 2; a < argc; a++) reset += gr_latency_reset(&db->latency, argv[a], argv_length[a]);
        gr_reply_integer(reply, reset);
    } else if (gr_word_is(sub, length, "histogram")) {
        latency_histogram(db, argc, argv, argv_length, reply);
    } else if (gr_word_is(sub, length, "help")) {
        if (argc != 2) { reply_arity(reply, "latency|help"); return; }
        static const char *lines[] = {
            "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "DOCTOR", "    Return a human readable latency analysis report.",
            "GRAPH <event>", "    Return an ASCII latency graph for the <event> class.",
            "HISTORY <event>", "    Return time-latency samples for the <event> class.",
            "LATEST", "    Return the latest latency samples for all events.",
            "RESET [<event> ...]", "    Reset latency data of one or more <event> classes.",
            "    (default: reset all data for all event classes)",
            "HISTOGRAM [COMMAND ...]", "    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
            "    If no commands are specified then all histograms are replied.",
            "HELP", "    Print this help.",
        };
        gr_reply_help(reply, lines, sizeof lines / sizeof lines[0]);
    } else {
        gr_reply_unknown_subcommand(reply, sub, length, "LATENCY");
    }
}
