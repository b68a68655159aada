/* repl_backlog.c — the replication backlog and the primary's bookkeeping (repl_backlog.h):
 * the circular buffer fed by the write stream, the PSYNC continuation test (Redis's
 * masterTryPartialResynchronization), WAIT's count and min-replicas-to-write's check.
 */
#include "exec/repl_backlog.h"

#include <stdlib.h>
#include <string.h>

#include "exec/blocking.h"
#include "exec/db.h"

void gr_repl_primary_init(gr_repl_primary_t *p) {
    memset(p, 0, sizeof *p);
    p->backlog_config = 1024 * 1024;
    p->ping_period_s = 10;
    p->min_replicas_max_lag = 10;
    p->repl_timeout_s = 60;
    p->diskless_sync = 1;
    p->diskless_delay_s = 5;
    p->backlog_ttl_s = 3600;
}

void gr_repl_primary_release(gr_repl_primary_t *p) {
    free(p->backlog);
    p->backlog = NULL;
}

int gr_repl_backlog_create(gr_server_t *db) {
    gr_repl_primary_t *p = &db->repl_primary;
    if (p->backlog) return 0;
    int64_t size = p->backlog_config > 16 * 1024 ? p->backlog_config : 16 * 1024;
    p->backlog = malloc((size_t)size);
    if (!p->backlog) return -1;
    p->backlog_size = size;
    p->backlog_histlen = 0;
    p->backlog_index = 0;
    db->propagation.selected = -1;   /* the stream's next entry says its database */
    return 0;
}

/* The newest `length` bytes of the circular buffer (length <= its history), oldest first,
 * in at most two pieces. */
static void read_newest(const gr_repl_primary_t *p, int64_t length,
                        void (*out)(void *context, const uint8_t *data, size_t length), void *context) {
    int64_t start = (p->backlog_index - length + 2 * p->backlog_size) % p->backlog_size;
    int64_t first = p->backlog_size - start < length ? p->backlog_size - start : length;
    out(context, p->backlog + start, (size_t)first);
    if (length > first) out(context, p->backlog, (size_t)(length - first));
}

static void copy_out(void *context, const uint8_t *data, size_t length) {
    gr_repl_primary_t *p = context;
    memcpy(p->backlog + p->backlog_index, data, length);
    p->backlog_index += (int64_t)length;
}

void gr_repl_backlog_resize(gr_server_t *db, int64_t size) {
    gr_repl_primary_t *p = &db->repl_primary;
    p->backlog_config = size;
    if (!p->backlog) return;
    if (size < 16 * 1024) size = 16 * 1024;
    if (size == p->backlog_size) return;
    uint8_t *fresh = malloc((size_t)size);
    if (!fresh) return;   /* the old one stays */
    int64_t keep = p->backlog_histlen < size ? p->backlog_histlen : size;
    gr_repl_primary_t old = *p;
    p->backlog = fresh;
    p->backlog_size = size;
    p->backlog_index = 0;
    read_newest(&old, keep, copy_out, p);   /* the newest `keep` bytes into the new buffer */
    p->backlog_index %= size;
    p->backlog_histlen = keep;
    free(old.backlog);
}

void gr_repl_backlog_free(gr_server_t *db) {
    gr_repl_primary_t *p = &db->repl_primary;
    free(p->backlog);
    p->backlog = NULL;
    p->backlog_size = p->backlog_histlen = p->backlog_index = 0;
}

void gr_repl_backlog_reset(gr_server_t *db) {
    db->repl_primary.backlog_histlen = 0;
    db->repl_primary.backlog_index = 0;
}

void gr_repl_backlog_feed(gr_server_t *db, const uint8_t *data, size_t length) {
    gr_repl_primary_t *p = &db->repl_primary;
    if (!p->backlog || length == 0) return;
    db->repl.offset += (int64_t)length;
    const uint8_t *at = data;
    size_t left = length;
    if ((int64_t)left > p->backlog_size) {   /* only the tail fits */
        at += left - (size_t)p->backlog_size;
        left = (size_t)p->backlog_size;
    }
    while (left) {
        size_t room = (size_t)(p->backlog_size - p->backlog_index), n = left < room ? left : room;
        memcpy(p->backlog + p->backlog_index, at, n);
        p->backlog_index = (p->backlog_index + (int64_t)n) % p->backlog_size;
        p->backlog_histlen += (int64_t)n;
        at += n;
        left -= n;
    }
    if (p->backlog_histlen > p->backlog_size) p->backlog_histlen = p->backlog_size;
    if (p->feed) p->feed(p->feed_context, data, length);
}

int64_t gr_repl_backlog_first_offset(const gr_server_t *db) {
    return db->repl.offset - db->repl_primary.backlog_histlen + 1;
}

int gr_repl_backlog_can_continue(const gr_server_t *db, const char *replid, int64_t offset) {
    const gr_replication_t *r = &db->repl;
    if (strcmp(replid, r->replid) != 0 && (strcmp(replid, r->replid2) != 0 || offset > r->second_offset)) return 0;
    if (!db->repl_primary.backlog) return 0;
    return offset >= gr_repl_backlog_first_offset(db) && offset <= r->offset + 1;
}

void gr_repl_backlog_read(const gr_server_t *db, int64_t offset,
                          void (*out)(void *context, const uint8_t *data, size_t length), void *context) {
    const gr_repl_primary_t *p = &db->repl_primary;
    int64_t skip = offset - gr_repl_backlog_first_offset(db), length = p->backlog_histlen - skip;
    if (!p->backlog || skip < 0 || length <= 0) return;
    read_newest(p, length, out, context);
}

int gr_repl_min_replicas_refuse(const gr_server_t *db) {
    const gr_repl_primary_t *p = &db->repl_primary;
    return p->min_replicas_to_write > 0 && !db->repl.master_port && p->good < p->min_replicas_to_write;
}

int64_t gr_repl_replicas_acked(const gr_server_t *db, int64_t offset) {
    int64_t count = 0;
    for (const gr_connection_t *conn = db->connections; conn; conn = conn->next)
        if (conn->repl_peer.state == GR_REPLICA_ONLINE && conn->repl_peer.ack_offset >= offset) count++;
    return count;
}

int64_t gr_repl_replicas_fsynced(const gr_server_t *db, int64_t offset) {
    int64_t count = 0;
    for (const gr_connection_t *conn = db->connections; conn; conn = conn->next)
        if (conn->repl_peer.state == GR_REPLICA_ONLINE && conn->repl_peer.fack_offset >= offset) count++;
    return count;
}

void gr_repl_wait_check(gr_server_t *db) {
    const gr_block_spec_t *wait = db->repl_primary.wait_spec, *waitaof = db->repl_primary.waitaof_spec;
    if (!wait && !waitaof) return;
    for (gr_connection_t *conn = db->connections, *next; conn; conn = next) {
        next = conn->next;
        const gr_block_spec_t *spec = NULL;
        gr_request_t *request = conn->blocked ? gr_blocking_parked_request(conn, &spec) : NULL;
        if (!request || !spec) continue;
        if (spec == wait) {
            request->index2 = gr_repl_replicas_acked(db, request->index);   /* what its reply says */
            if (request->index2 >= (int64_t)request->count) gr_blocking_unblock(db, conn, 0);
        } else if (spec == waitaof) {
            request->index2 = gr_repl_replicas_fsynced(db, request->index);
            if (request->flag >= request->cursor && request->index2 >= (int64_t)request->count)
                gr_blocking_unblock(db, conn, 0);
        }
    }
}
