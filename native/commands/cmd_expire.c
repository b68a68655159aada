/* cmd_expire.c — key expiry: EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT (NX, XX, GT, LT), TTL,
 * PTTL, EXPIRETIME, PEXPIRETIME, PERSIST.
 *
 * An expiry is a unix-ms time in the key's entry (keyspace.h). Expired keys are removed
 * lazily, by the lookup that finds them (gr_db_find_live in db.c), and actively, by the
 * server's cron (gr_db_cron). Setting an expiry in the past deletes the key at once, as
 * Redis does.
 */
#include <stdio.h>

#include "commands/commands.h"
#include "exec/db.h"
#include "exec/transaction.h"

enum { CONDITION_ALWAYS = 0, CONDITION_NX = 1, CONDITION_XX = 2, CONDITION_GT = 3, CONDITION_LT = 4,
       CONDITION_XX_LT = 5 };
enum { TTL_SECONDS = 0, TTL_MILLISECONDS = 1, EXPIRETIME_SECONDS = 2, EXPIRETIME_MILLISECONDS = 3 };

void gr_cmd_expire(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) {
    const gr_expire_view_t req = gr_expire_view(r);
    static const char *names[2][2] = {{"expire", "expireat"}, {"pexpire", "pexpireat"}};
    int milliseconds = req.unit, absolute = req.absolute;
    int64_t when = req.value;
    int invalid = 0;
    if (!milliseconds) {
        if (when > INT64_MAX / 1000 || when < INT64_MIN / 1000) invalid = 1;
        else when *= 1000;
    }
    if (!invalid && !absolute) {
        if (when > INT64_MAX - db->now_ms) invalid = 1;
        else when += db->now_ms;
    }
    if (invalid) {
        char text[96];
        snprintf(text, sizeof text, "ERR invalid expire time in '%s' command", names[milliseconds][absolute]);
        gr_reply_error_text(reply, GR_ERR_GENERIC, text);
        return;
    }
    gr_ks_entry_t *entry = gr_db_find_live(db, req.key);
    if (!entry) { gr_reply_integer(reply, 0); return; }
    int64_t current = entry->expire_at_ms;   /* -1: none, which counts as infinite */
    int allowed = 1;
    switch (req.condition) {
    case CONDITION_NX: allowed = current < 0; break;
    case CONDITION_XX: allowed = current >= 0; break;
    case CONDITION_GT: allowed = current >= 0 && when > current; break;
    case CONDITION_LT: allowed = current < 0 || when < current; break;
    case CONDITION_XX_LT: allowed = current >= 0 && when < current; break;
    default: break;
    }
    if (!allowed) { gr_reply_integer(reply, 0); return; }
    if (when <= db->now_ms) gr_ks_delete(db->keyspace, req.key.data, req.key.length);
    else gr_ks_set_expire(db->keyspace, entry, when);
    gr_watch_touch_current(db, req.key);
    gr_db_count_changes(db, 1);
    gr_reply_integer(reply, 1);
}

void gr_cmd_ttl(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) {
    const gr_ttl_view_t req = gr_ttl_view(r);
    gr_ks_entry_t *entry = gr_db_lookup_with(db, req.key, GR_LOOKUP_NOTOUCH);   /* not an access, as Redis */
    if (!entry) { gr_reply_integer(reply, -2); return; }
    int64_t at = entry->expire_at_ms;
    if (at < 0) { gr_reply_integer(reply, -1); return; }
    int64_t ttl = at - db->now_ms;
    if (ttl < 0) ttl = 0;
    switch (req.kind) {
    case TTL_SECONDS: gr_reply_integer(reply, (ttl + 500) / 1000); break;
    case TTL_MILLISECONDS: gr_reply_integer(reply, ttl); break;
    case EXPIRETIME_SECONDS: gr_reply_integer(reply, (at + 500) / 1000); break;   /* rounded, as Redis */
    default: gr_reply_integer(reply, at); break;
    }
}

void gr_cmd_persist(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) {
    const gr_persist_view_t req = gr_persist_view(r);
    gr_ks_entry_t *entry = gr_db_find_live(db, req.key);
    if (!entry || entry->expire_at_ms < 0) { gr_reply_integer(reply, 0); return; }
    gr_ks_set_expire(db->keyspace, entry, -1);
    gr_watch_touch_current(db, req.key);
    gr_db_count_changes(db, 1);
    gr_reply_integer(reply, 1);
}
