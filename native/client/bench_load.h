/* bench_load.h — the native load generator of goblin-ring-bench: a C loop driving one ring
 * session through client.c's gr_client_* API, with the same generated codecs as every client.
 *
 * Python (NativeDriver in goblin_ring/bench/drivers.py) builds an array of typed requests
 * once, outside the timed region; gr_load_run then sends `total` of them, request i being
 * ops[(start + i) % op_count], with up to `depth` in flight (a sliding window: a reply is
 * read as soon as the window is full), and counts the replies by kind. A compound row (a pair
 * of commands) is two consecutive entries of ops. Nothing is kept of the replies but counts
 * and the last integer, so the loop costs what the transport and the server cost.
 *
 *     ops[0] ops[1] ... ops[op_count-1] ops[0] ...    (cycled; `start` picks the first)
 *     |<------ at most depth in flight ------>|
 *
 * The implementation is bench_load.c.
 */
#ifndef GR_BENCH_LOAD_H
#define GR_BENCH_LOAD_H

#include <stddef.h>
#include <stdint.h>

#include "client/client.h"

/* cffi-cdef-begin */
typedef struct gr_load_stats {
    uint64_t sent;
    uint64_t replies;
    uint64_t errors;         /* ErrorReply */
    uint64_t nils;           /* nil bulk or nil array */
    uint64_t integers;
    uint64_t bulks;
    uint64_t statuses;
    uint64_t arrays;
    uint64_t array_elements; /* summed over array replies */
    int64_t last_integer;
    uint16_t first_error_code;
    int64_t elapsed_ns;      /* first send to last reply */
} gr_load_stats_t;

/* Run the load. latencies_ns, if not NULL, must hold `total` entries and forces depth 1:
 * each request's round trip is stored. Returns a gr_client_status (OK, or the transport's
 * failure); error replies are counted, not returned. */
int gr_load_run(gr_client_t *client, gr_request_t *ops, size_t op_count, uint64_t start, uint64_t total,
                uint32_t depth, int64_t *latencies_ns, gr_load_stats_t *stats);
/* cffi-cdef-end */

#endif
