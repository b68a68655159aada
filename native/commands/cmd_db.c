/* cmd_db.c — the 16 databases: SELECT, MOVE, SWAPDB.
 *
 * db.h keeps GR_DB_COUNT keyspaces; each connection's selected index is in its
 * gr_connection_t, and db->keyspace points at the running command's database.
 */
#include "exec/blocking.h"
#include "commands/commands.h"
#include "exec/db.h"
#include "exec/transaction.h"

static void reply_out_of_range(gr_reply_t *reply) {
    gr_reply_error_text(reply, GR_ERR_OUT_OF_RANGE, "ERR DB index is out of range");
}

static int valid_index(int64_t index) { return index >= 0 && index < GR_DB_COUNT; }

/* Redis reads a DB index as an int (getIntFromObjectOrReply): an integer outside it gets that
 * function's text, which names the int's range; the message a caller passes instead (SWAPDB's
 * "invalid first DB index") replaces it. 1 when index fits an int. */
static int fits_int(int64_t index, const char *message, gr_reply_t *reply) {
    if (index >= INT32_MIN && index <= INT32_MAX) return 1;
    gr_reply_error_text(reply, GR_ERR_OUT_OF_RANGE,
                        message ? message : "ERR value is out of range, value must between -2147483648 and 2147483647");
    return 0;
}

void gr_cmd_select(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) {
    const gr_select_view_t req = gr_select_view(r);
    if (!fits_int(req.db, NULL, reply)) return;
    if (!valid_index(req.db)) { reply_out_of_range(reply); return; }
    if (db->current) db->current->db_index = (int32_t)req.db;
    db->keyspace = db->keyspaces[req.db];
    gr_ks_set_clock(db->keyspace, gr_evict_stamp(db->now_ms));
    gr_reply_ok(reply);
}

void gr_cmd_move(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) {
    const gr_move_view_t req = gr_move_view(r);
    if (!fits_int(req.db, NULL, reply)) return;
    if (!valid_index(req.db)) { reply_out_of_range(reply); return; }
    gr_keyspace_t *target = db->keyspaces[req.db];
    if (target == db->keyspace) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR source and destination objects are the same");
        return;
    }
    gr_ks_entry_t *entry = gr_db_find_live(db, req.key);
    if (!entry) { gr_reply_integer(reply, 0); return; }
    gr_ks_entry_t *existing = gr_ks_find(target, req.key.data, req.key.length);
    if (existing && gr_db_is_expired(db, existing)) {
        gr_ks_delete(target, req.key.data, req.key.length);
        existing = NULL;
    }
    if (existing) { gr_reply_integer(reply, 0); return; }
    /* Add to the target first so that OOM leaves the key where it was. */
    gr_ks_entry_t *moved = gr_ks_add(target, req.key.data, req.key.length, entry->type, entry->value);
    if (!moved) { gr_reply_oom(reply); return; }
    if (entry->expire_at_ms >= 0) gr_ks_set_expire(target, moved, entry->expire_at_ms);
    moved->access_ms = entry->access_ms;   /* the object moves with its LRU clock and LFU counter, as Redis's */
    gr_ks_entry_t *source = gr_ks_unlink(db->keyspace, req.key.data, req.key.length);
    gr_ks_entry_free(db->keyspace, source, 0);   /* the value now belongs to the target */
    gr_blocking_signal(db, (int32_t)req.db, req.key.data, req.key.length);
    gr_watch_touch_current(db, req.key);
    gr_watch_touch(db, (int32_t)req.db, req.key.data, req.key.length);
    gr_call_notify(db, GR_NOTIFY_GENERIC, "move_from", req.key);
    gr_call_notify_db(db, (int32_t)req.db, GR_NOTIFY_GENERIC, "move_to", req.key);
    gr_db_count_changes(db, 1);
    gr_reply_integer(reply, 1);
}

void gr_cmd_swapdb(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) {
    const gr_swapdb_view_t req = gr_swapdb_view(r);
    if (!fits_int(req.first, "ERR invalid first DB index", reply) ||
        !fits_int(req.second, "ERR invalid second DB index", reply)) return;
    if (!valid_index(req.first) || !valid_index(req.second)) { reply_out_of_range(reply); return; }
    if (req.first != req.second) {      /* watchers of either database see their keys change */
        gr_watch_touch_db(db, (int32_t)req.first, (int32_t)req.second);
        gr_watch_touch_db(db, (int32_t)req.second, (int32_t)req.first);
    }
    gr_keyspace_t *first = db->keyspaces[req.first];
    db->keyspaces[req.first] = db->keyspaces[req.second];
    db->keyspaces[req.second] = first;
    uint64_t cursor = db->expire_cursor[req.first];
    db->expire_cursor[req.first] = db->expire_cursor[req.second];
    db->expire_cursor[req.second] = cursor;
    if (db->current) db->keyspace = db->keyspaces[db->current->db_index];
    gr_blocking_signal_db_gone(db, (int32_t)req.first);   /* a key the swap took away: as deleted (Redis 7.0) */
    gr_blocking_signal_db_gone(db, (int32_t)req.second);
    gr_blocking_signal_db(db, (int32_t)req.first);     /* waiters now see the other database's lists */
    gr_blocking_signal_db(db, (int32_t)req.second);
    gr_db_count_changes(db, 1);   /* even SWAPDB 0 0, as Redis */
    gr_reply_ok(reply);
}
