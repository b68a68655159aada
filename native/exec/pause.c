/* pause.c — CLIENT PAUSE / UNPAUSE (pause.h): which calls a pause holds, its deadline, and
 * handing the held connections back when it ends. */
#include "exec/pause.h"

#include <string.h>

#include "core/clock.h"
#include "exec/command.h"
#include "exec/db.h"
#include "exec/transaction.h"

void gr_pause_start(gr_server_t *db, int mode, int64_t end_ns) {
    if (mode > db->pause_mode) db->pause_mode = (uint8_t)mode;         /* the stronger mode stays */
    if (end_ns > db->pause_end_ns) db->pause_end_ns = end_ns;          /* the later deadline stays */
}

void gr_pause_end(gr_server_t *db) {
    db->pause_mode = GR_PAUSE_NONE;
    db->pause_end_ns = 0;
    if (!db->pause_held_count) return;
    for (gr_connection_t *conn = db->connections; conn; conn = conn->next) {
        if (!conn->pause_held) continue;
        conn->pause_held = 0;
        /* RESP: the loop runs what waits in its buffer (as a served waiter's); a ring session
         * is read again by itself */
        if (conn->kind != GR_CONN_RING && !conn->woken) {
            conn->woken = 1;
            db->woken_pending++;
        }
    }
    db->pause_held_count = 0;
}

int gr_pause_active(gr_server_t *db) {
    if (!db->pause_mode) return 0;
    if (gr_monotonic_ns() < db->pause_end_ns) return 1;
    gr_pause_end(db);
    return 0;
}

int64_t gr_pause_timeout_ms(const gr_server_t *db) {
    if (!db->pause_mode) return -1;
    int64_t left = db->pause_end_ns - gr_monotonic_ns();
    return left <= 0 ? 0 : (left + 999999) / 1000000;
}

/* Redis 7.0's is_may_replicate_command: write commands and may_replicate ones (PUBLISH,
 * SPUBLISH, ...); EXEC of a transaction that queued one. */
static int covered_by_write_pause(int slot, gr_connection_t *conn, int index, const uint8_t *body, size_t body_length) {
    uint32_t flags = gr_command_flags(slot);
    if (flags & GR_CMD_FLAG_WRITE) return 1;
    /* EVAL, EVALSHA, FCALL (7.0 flags them may_replicate; their rows are known by their other
     * flags, not readonly): held unless an EVAL's script declares no-writes in its shebang
     * line (7.0 then takes the script's flags). EVALSHA / FCALL of a no-writes script are held. */
    const uint32_t script = GR_CMD_FLAG_NOSCRIPT | GR_CMD_FLAG_SKIP_MONITOR | GR_CMD_FLAG_NO_MANDATORY_KEYS;
    if ((flags & script) == script && !(flags & GR_CMD_FLAG_READONLY)) {
        if (body && body_length > 2 && body[0] == '#' && body[1] == '!') {
            const uint8_t *end = memchr(body, '\n', body_length);
            size_t line = end ? (size_t)(end - body) : body_length;
            for (size_t i = 0; i + 9 <= line; i++)
                if (!memcmp(body + i, "no-writes", 9)) return 0;
        }
        return 1;
    }
    if (flags & GR_CMD_FLAG_MAY_REPLICATE) return 1;
    const gr_command_t *row = gr_command_at((size_t)index);
    if (row && row->argv_handler == gr_transaction_exec && conn->in_multi) return gr_transaction_queued_write(conn);
    return 0;
}

int gr_pause_hold_connection(gr_server_t *db, gr_connection_t *conn) {
    if (!gr_pause_active(db)) return 0;
    if (!conn->pause_held) {
        conn->pause_held = 1;
        db->pause_held_count++;
    }
    return 1;
}

int gr_pause_holds(gr_server_t *db, gr_connection_t *conn, size_t argc, const uint8_t *const *argv,
                   const size_t *argv_length, const gr_request_t *request) {
    if (!gr_pause_active(db)) return 0;
    if (db->pause_mode == GR_PAUSE_WRITE) {
        int index, slot;
        const uint8_t *body = NULL;   /* argument 1: an EVAL's script */
        size_t body_length = 0;
        if (!argc && request && request->template_id == GR_T_COMMAND) {   /* the ring's command form */
            if (!request->item_count) return 0;
            const uint8_t *items[64];
            size_t lengths[64];
            for (uint32_t i = 0; i < request->item_count && i < 64; i++)
                items[i] = request->items[i].data, lengths[i] = request->items[i].length;
            index = gr_command_index(items[0], lengths[0]);
            if (request->item_count > 1) body = items[1], body_length = lengths[1];
            slot = index < 0 ? -1 : request->item_count > 64 ? index   /* a long call: its command's flags */
                 : gr_command_stat_slot(index, request->item_count, items, lengths);
        } else if (argc) {
            index = gr_command_index(argv[0], argv_length[0]);
            slot = index >= 0 ? gr_command_stat_slot(index, argc, argv, argv_length) : -1;
            if (argc > 1) body = argv[1], body_length = argv_length[1];
        } else {
            index = slot = request ? gr_command_index_of_request(request) : -1;
        }
        if (index < 0 || !covered_by_write_pause(slot, conn, index, body, body_length)) return 0;   /* unknown: its error now */
    }
    return gr_pause_hold_connection(db, conn);
}
