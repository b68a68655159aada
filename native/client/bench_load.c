/* bench_load.c — the native load generator; its API and window rule are in bench_load.h, the
 * client calls it drives in client.c, the Python that builds its requests in
 * goblin_ring/bench/drivers.py (NativeDriver).
 */
#include "client/bench_load.h"
#include "core/clock.h"

#include <string.h>
#include <time.h>

static int receive_one(gr_client_t *client, gr_load_stats_t *stats) {
    gr_result_t result;
    int status = gr_client_receive(client, &result);
    if (status != GR_CLIENT_OK) return status;
    stats->replies++;
    switch (result.template_id) {
    case GR_T_INTEGER_REPLY: stats->integers++; stats->last_integer = result.integer; break;
    case GR_T_BULK_REPLY: if (result.is_nil) stats->nils++; else stats->bulks++; break;
    case GR_T_STATUS_REPLY: stats->statuses++; break;
    case GR_T_ARRAY_REPLY:
        if (result.shape == 2) stats->nils++;
        else { stats->arrays++; stats->array_elements += result.count; }
        break;
    case GR_T_ERROR_REPLY:
        if (!stats->errors) stats->first_error_code = result.error_code;
        stats->errors++;
        break;
    default: break;
    }
    return GR_CLIENT_OK;
}

int gr_load_run(gr_client_t *client, gr_request_t *ops, size_t op_count, uint64_t start, uint64_t total,
                uint32_t depth, int64_t *latencies_ns, gr_load_stats_t *stats) {
    memset(stats, 0, sizeof *stats);
    if (op_count == 0 || gr_client_in_flight(client)) return GR_CLIENT_PROTOCOL;
    if (depth == 0 || latencies_ns) depth = 1;
    size_t next = (size_t)(start % op_count);
    int64_t began = gr_monotonic_ns();
    for (uint64_t i = 0; i < total; i++) {
        int64_t sent_at = latencies_ns ? gr_monotonic_ns() : 0;
        for (;;) {
            int status = gr_client_send(client, &ops[next]);
            if (status == GR_CLIENT_OK) break;
            if (status != GR_CLIENT_RING_FULL) return status;
            status = receive_one(client, stats);     /* the ring is full: make room */
            if (status != GR_CLIENT_OK) return status;
        }
        stats->sent++;
        if (++next == op_count) next = 0;
        while (gr_client_in_flight(client) >= depth) {
            int status = receive_one(client, stats);
            if (status != GR_CLIENT_OK) return status;
        }
        if (latencies_ns) latencies_ns[i] = gr_monotonic_ns() - sent_at;
    }
    while (gr_client_in_flight(client)) {
        int status = receive_one(client, stats);
        if (status != GR_CLIENT_OK) return status;
    }
    stats->elapsed_ns = gr_monotonic_ns() - began;
    return GR_CLIENT_OK;
}
