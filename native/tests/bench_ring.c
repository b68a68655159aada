/* bench_ring.c — microbenchmark of the shared-memory ring (native/ring/ring.c), two processes.
 *
 * Forks over two MAP_SHARED|MAP_ANONYMOUS rings (2 MiB each), pins the parent and the
 * child to the given cores with sched_setaffinity, and measures, with both sides
 * busy-spinning (no futex sleeps):
 *   ping_pong   one 8-byte message in flight: parent writes to ring A, the child echoes it
 *               to ring B, the parent reads it; per-round-trip latency from the TSC,
 *               p50/p90/p99/p99.9/max ns and round trips per second;
 *   stream      32-byte messages one way, the consumer reading in batches; messages per
 *               second from the producer's first write to the consumer's last read;
 *   stream_wake the same with the producer calling gr_ring_producer_should_wake every 64
 *               messages, as a producer whose consumer may sleep must.
 * One JSON object per line on stdout. This lives out of the test run (it is not a test).
 * Usage: bench_ring [-n round_trips] [-m stream_messages] [parent_core [child_core]]
 * Build: gcc -O2 -std=c11 -D_GNU_SOURCE -Inative native/ring/ring.c native/tests/bench_ring.c -o bench_ring
 */
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <x86intrin.h>

#include "ring/ring.h"

#define CAPACITY GR_RING_DEFAULT_CAPACITY
#define T_PING 1
#define T_PHASE_END 2
#define T_STREAM 3
#define WARMUP_ROUND_TRIPS 20000

/* Parent/child hand-off outside the rings. The child writes the batch and error counts,
 * then release-stores stream_end_ns; the parent acquire-loads stream_end_ns before reading
 * them. child_ready likewise (release by the child, acquire by the parent). */
typedef struct control {
    uint64_t child_ready;
    uint64_t stream_end_ns[2];     /* when the child read the last message of run 0 / 1 */
    uint64_t stream_batches[2];
    uint64_t stream_errors[2];
} control_t;

static int pin(int core)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(core, &set);
    return sched_setaffinity(0, sizeof set, &set);
}

static int compare_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* TSC ticks per nanosecond, measured against CLOCK_MONOTONIC over ~200 ms. */
static double tsc_per_ns(void)
{
    const uint64_t t0 = gr_ring_now_ns(), c0 = __rdtsc();
    while (gr_ring_now_ns() - t0 < 200000000u) {}
    const uint64_t t1 = gr_ring_now_ns(), c1 = __rdtsc();
    return (double)(c1 - c0) / (double)(t1 - t0);
}

static void write_spinning(gr_ring_t *ring, int32_t type, const void *payload, size_t length)
{
    while (gr_ring_write(ring, type, payload, length) == GR_RING_FULL) __builtin_ia32_pause();
}

/* ---- child: echo pings, then consume two streams ---- */

typedef struct child_state {
    gr_ring_t *reply;
    int phase_over;
    uint64_t expected;
    uint64_t errors;
} child_state_t;

static int echo(void *context, int32_t type, const uint8_t *payload, size_t length)
{
    child_state_t *state = context;
    if (type == T_PHASE_END) { state->phase_over = 1; return 1; }
    write_spinning(state->reply, T_PING, payload, length);
    return 0;
}

static int consume_stream(void *context, int32_t type, const uint8_t *payload, size_t length)
{
    child_state_t *state = context;
    if (type == T_PHASE_END) { state->phase_over = 1; return 1; }
    uint64_t seq;
    memcpy(&seq, payload, sizeof seq);
    state->errors += (seq != state->expected) | (length != 32);
    state->expected++;
    return 0;
}

static void child_main(gr_ring_t *request, gr_ring_t *reply, control_t *control)
{
    child_state_t state = {reply, 0, 0, 0};
    __atomic_store_n(&control->child_ready, 1, __ATOMIC_RELEASE);   /* to the parent's spin */
    while (!state.phase_over) gr_ring_read(request, echo, &state, 0);   /* ping-pong */
    for (int run = 0; run < 2; run++) {
        state = (child_state_t){reply, 0, 0, 0};
        uint64_t batches = 0;
        while (!state.phase_over) {
            if (gr_ring_read(request, consume_stream, &state, 0) > 0) batches++;
            else __builtin_ia32_pause();
        }
        control->stream_batches[run] = batches;
        control->stream_errors[run] = state.errors;
        /* Publishes the counts above to the parent, which waits for a non-zero end time. */
        __atomic_store_n(&control->stream_end_ns[run], gr_ring_now_ns(), __ATOMIC_RELEASE);
    }
}

/* ---- parent ---- */

typedef struct pong { uint64_t seq; int seen; } pong_t;

static int take_pong(void *context, int32_t type, const uint8_t *payload, size_t length)
{
    pong_t *pong = context;
    (void)type; (void)length;
    memcpy(&pong->seq, payload, sizeof pong->seq);
    pong->seen = 1;
    return 0;
}

static void ping_pong(gr_ring_t *request, gr_ring_t *reply, uint64_t round_trips, int parent_core, int child_core)
{
    const double ticks_per_ns = tsc_per_ns();
    uint64_t *samples = malloc(round_trips * sizeof *samples);
    if (samples == NULL) { perror("malloc"); exit(2); }
    uint64_t errors = 0;
    const uint64_t start = gr_ring_now_ns();
    for (uint64_t i = 0; i < WARMUP_ROUND_TRIPS + round_trips; i++) {
        pong_t pong = {0, 0};
        const uint64_t t0 = __rdtsc();
        write_spinning(request, T_PING, &i, sizeof i);
        while (gr_ring_read(reply, take_pong, &pong, 1) == 0) {}
        const uint64_t t1 = __rdtsc();
        errors += pong.seq != i;
        if (i >= WARMUP_ROUND_TRIPS) samples[i - WARMUP_ROUND_TRIPS] = t1 - t0;
    }
    const double seconds = (double)(gr_ring_now_ns() - start) / 1e9;
    write_spinning(request, T_PHASE_END, NULL, 0);
    qsort(samples, round_trips, sizeof *samples, compare_u64);
    double sum = 0;
    for (uint64_t i = 0; i < round_trips; i++) sum += (double)samples[i];
#define PCT(p) ((double)samples[(uint64_t)((double)(round_trips - 1) * (p))] / ticks_per_ns)
    printf("{\"bench\":\"ping_pong\",\"round_trips\":%llu,\"payload_bytes\":8,\"p50_ns\":%.0f,"
           "\"p90_ns\":%.0f,\"p99_ns\":%.0f,\"p999_ns\":%.0f,\"max_ns\":%.0f,\"mean_ns\":%.1f,"
           "\"round_trips_per_s\":%.0f,\"errors\":%llu,\"parent_core\":%d,\"child_core\":%d}\n",
           (unsigned long long)round_trips, PCT(0.50), PCT(0.90), PCT(0.99), PCT(0.999),
           (double)samples[round_trips - 1] / ticks_per_ns, sum / (double)round_trips / ticks_per_ns,
           (double)(WARMUP_ROUND_TRIPS + round_trips) / seconds, (unsigned long long)errors,
           parent_core, child_core);
#undef PCT
    fflush(stdout);
    free(samples);
}

static void stream(gr_ring_t *request, control_t *control, uint64_t messages, int run, int parent_core, int child_core)
{
    uint8_t payload[32];
    memset(payload, 0x42, sizeof payload);
    uint64_t wakes = 0;
    const uint64_t start = gr_ring_now_ns();
    for (uint64_t seq = 0; seq < messages; seq++) {
        memcpy(payload, &seq, sizeof seq);
        write_spinning(request, T_STREAM, payload, sizeof payload);
        if (run == 1 && (seq & 63) == 63) wakes += (uint64_t)gr_ring_producer_should_wake(request);
    }
    const uint64_t produced = gr_ring_now_ns();
    write_spinning(request, T_PHASE_END, NULL, 0);
    uint64_t end;
    while ((end = __atomic_load_n(&control->stream_end_ns[run], __ATOMIC_ACQUIRE)) == 0) __builtin_ia32_pause();
    const double seconds = (double)(end - start) / 1e9;
    printf("{\"bench\":\"%s\",\"messages\":%llu,\"payload_bytes\":32,\"messages_per_s\":%.0f,"
           "\"payload_mb_per_s\":%.1f,\"seconds\":%.3f,\"producer_seconds\":%.3f,"
           "\"consumer_batches\":%llu,\"mean_batch\":%.1f,\"errors\":%llu,\"wakes\":%llu,"
           "\"parent_core\":%d,\"child_core\":%d}\n",
           run == 0 ? "stream" : "stream_wake", (unsigned long long)messages,
           (double)messages / seconds, (double)messages * 32 / seconds / 1e6, seconds,
           (double)(produced - start) / 1e9, (unsigned long long)control->stream_batches[run],
           (double)messages / (double)(control->stream_batches[run] ? control->stream_batches[run] : 1),
           (unsigned long long)control->stream_errors[run], (unsigned long long)wakes,
           parent_core, child_core);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    uint64_t round_trips = 1000000, messages = 50000000;
    int option;
    while ((option = getopt(argc, argv, "n:m:")) != -1) {
        if (option == 'n') round_trips = strtoull(optarg, NULL, 10);
        else if (option == 'm') messages = strtoull(optarg, NULL, 10);
        else { fprintf(stderr, "usage: %s [-n round_trips] [-m stream_messages] [parent_core [child_core]]\n", argv[0]); return 2; }
    }
    const int parent_core = optind < argc ? atoi(argv[optind]) : 0;
    const int child_core = optind + 1 < argc ? atoi(argv[optind + 1]) : 1;
    if (round_trips == 0 || messages == 0) { fprintf(stderr, "counts must be > 0\n"); return 2; }

    const size_t segment = gr_ring_segment_size(CAPACITY);
    uint8_t *shared = mmap(NULL, 2 * segment + 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED) { perror("mmap"); return 2; }
    control_t *control = (control_t *)(void *)(shared + 2 * segment);
    gr_ring_t request, reply;
    char error[256];
    if (gr_ring_init(&request, shared, segment, CAPACITY, 1, 1, error, sizeof error) != 0
        || gr_ring_init(&reply, shared + segment, segment, CAPACITY, 1, 1, error, sizeof error) != 0) {
        fprintf(stderr, "init: %s\n", error);
        return 2;
    }
    fflush(NULL);
    const pid_t child = fork();
    if (child < 0) { perror("fork"); return 2; }
    if (child == 0) {
        if (pin(child_core) != 0) { perror("sched_setaffinity (child)"); _exit(2); }
        gr_ring_t in, out;
        if (gr_ring_attach(&in, shared, segment, 1, 1, error, sizeof error) != 0
            || gr_ring_attach(&out, shared + segment, segment, 1, 1, error, sizeof error) != 0) _exit(2);
        child_main(&in, &out, control);
        _exit(0);
    }
    if (pin(parent_core) != 0) { perror("sched_setaffinity (parent)"); kill(child, SIGKILL); return 2; }
    while (!__atomic_load_n(&control->child_ready, __ATOMIC_ACQUIRE)) __builtin_ia32_pause();

    ping_pong(&request, &reply, round_trips, parent_core, child_core);
    stream(&request, control, messages, 0, parent_core, child_core);
    stream(&request, control, messages, 1, parent_core, child_core);

    int status = 0;
    waitpid(child, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
