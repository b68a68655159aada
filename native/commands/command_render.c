/* command_render.c — each typed write's effect: its request back to argv (the inverse of
 * command_builders.c), with Redis's rewrites for replay, written through exec/propagate.h's
 * gr_effect_* calls. A typed row points at its render (.render in the .def files); exec calls it
 * after the handler, when the command changed data and stated no effect of its own, whichever
 * transport brought it. The rewrites: relative expiry -> the absolute time the command set
 * (SET ... PXAT, PEXPIREAT, or DEL when the time had passed), GETEX -> PEXPIREAT/PERSIST,
 * GETDEL -> DEL, INCRBYFLOAT -> SET value KEEPTTL (replay never re-does float arithmetic),
 * and the blocking pops -> their non-blocking forms on the keys given (a waiter served later
 * is rendered on the one key that served it).
 */
#include "commands/commands.h"

#include "engines/string_value.h"

/* The key's entry in the running call's database as the command left it. */
static gr_ks_entry_t *entry_after(gr_server_t *db, gr_bytes_t key) { return gr_ks_find(db->keyspace, key.data, key.length); }

static const char *end_word(uint8_t end) { return end ? "RIGHT" : "LEFT"; }

/* NAME item... (DEL, MSET) or NAME key item... (the pushes) */
static void render_items(gr_server_t *db, const gr_request_t *r, int with_key) {
    gr_effect_begin(db, 1 + (uint64_t)with_key + r->item_count);
    gr_effect_name(db);
    if (with_key) gr_effect_bytes(db, r->key);
    for (uint32_t i = 0; i < r->item_count; i++) gr_effect_bytes(db, r->items[i]);
}

void gr_render_del(gr_server_t *db, const gr_request_t *r) { render_items(db, r, 0); }
void gr_render_mset(gr_server_t *db, const gr_request_t *r) { render_items(db, r, 0); }
void gr_render_push(gr_server_t *db, const gr_request_t *r) { render_items(db, r, 1); }

void gr_render_flushdb(gr_server_t *db, const gr_request_t *r) {
    (void)r;
    gr_effect_begin(db, 1);
    gr_effect_name(db);
}

/* NAME key arg1 (RENAME, APPEND) */
void gr_render_key_value(gr_server_t *db, const gr_request_t *r) {
    gr_effect_begin(db, 3);
    gr_effect_name(db), gr_effect_bytes(db, r->key), gr_effect_bytes(db, r->arg1);
}

/* NAME key index (MOVE) */
void gr_render_key_index(gr_server_t *db, const gr_request_t *r) {
    const gr_move_view_t req = gr_move_view(r);
    gr_effect_begin(db, 3);
    gr_effect_name(db), gr_effect_bytes(db, req.key), gr_effect_int(db, req.db);
}

void gr_render_swapdb(gr_server_t *db, const gr_request_t *r) {
    const gr_swapdb_view_t req = gr_swapdb_view(r);
    gr_effect_begin(db, 3);
    gr_effect_name(db), gr_effect_int(db, req.first), gr_effect_int(db, req.second);
}

void gr_render_pop(gr_server_t *db, const gr_request_t *r) {
    const gr_pop_view_t req = gr_pop_view(r);
    gr_effect_begin(db, 2 + (req.has_count != 0));
    gr_effect_name(db), gr_effect_bytes(db, req.key);
    if (req.has_count) gr_effect_int(db, req.count);
}

/* NAME key index arg1 (LSET, LREM, SETRANGE) */
void gr_render_key_index_value(gr_server_t *db, const gr_request_t *r) {
    gr_effect_begin(db, 4);
    gr_effect_name(db), gr_effect_bytes(db, r->key), gr_effect_int(db, r->index), gr_effect_bytes(db, r->arg1);
}

void gr_render_linsert(gr_server_t *db, const gr_request_t *r) {
    const gr_linsert_view_t req = gr_linsert_view(r);
    gr_effect_begin(db, 5);
    gr_effect_name(db), gr_effect_bytes(db, req.key), gr_effect_word(db, req.position ? "AFTER" : "BEFORE");
    gr_effect_bytes(db, req.pivot), gr_effect_bytes(db, req.value);
}

void gr_render_ltrim(gr_server_t *db, const gr_request_t *r) {
    const gr_ltrim_view_t req = gr_ltrim_view(r);
    gr_effect_begin(db, 4);
    gr_effect_name(db), gr_effect_bytes(db, req.key), gr_effect_int(db, req.start), gr_effect_int(db, req.stop);
}

/* LMOVE, RPOPLPUSH, BLMOVE and BRPOPLPUSH as LMOVE src dst FROM TO (their engine family's) */
void gr_render_lmove(gr_server_t *db, const gr_request_t *r) {
    gr_effect_begin(db, 5);
    gr_effect_family_name(db, "lmove");
    gr_effect_bytes(db, r->key), gr_effect_bytes(db, r->arg1);
    gr_effect_word(db, end_word(r->end)), gr_effect_word(db, end_word(r->to_end));
}

/* LMPOP numkeys key... LEFT|RIGHT COUNT n, named as its engine family's LMPOP: LMPOP, BLMPOP
 * (its count), BLPOP and BRPOP (count 1) */
static void render_lmpop(gr_server_t *db, const gr_request_t *r, uint32_t count) {
    gr_effect_begin(db, 5 + (uint64_t)r->item_count);
    gr_effect_family_name(db, "lmpop");
    gr_effect_int(db, r->item_count);
    for (uint32_t i = 0; i < r->item_count; i++) gr_effect_bytes(db, r->items[i]);
    gr_effect_word(db, end_word(r->end));
    gr_effect_word(db, "COUNT");
    gr_effect_int(db, count ? count : 1);
}

void gr_render_lmpop(gr_server_t *db, const gr_request_t *r) { render_lmpop(db, r, r->count); }
void gr_render_bpop(gr_server_t *db, const gr_request_t *r) { render_lmpop(db, r, 1); }

enum { SET_VARIANT_SET = 0, SET_VARIANT_SETNX = 1, SET_VARIANT_SETEX = 2, SET_VARIANT_PSETEX = 3 };

/* SET and its variants as SET key value [NX|XX] [PXAT at | KEEPTTL]; DEL when a time already
 * past left nothing. */
void gr_render_set(gr_server_t *db, const gr_request_t *r) {
    const gr_set_view_t req = gr_set_view(r);
    int variant = (int)req.variant, condition = req.condition, mode = req.expire_mode;
    if (variant == SET_VARIANT_SETNX) condition = GR_SET_CONDITION_NX, mode = GR_EXPIRE_MODE_NONE;
    if (variant == SET_VARIANT_SETEX || variant == SET_VARIANT_PSETEX) mode = GR_EXPIRE_MODE_PX;
    int timed = mode >= GR_EXPIRE_MODE_EX && mode <= GR_EXPIRE_MODE_PXAT;
    gr_ks_entry_t *entry = entry_after(db, req.key);
    if (timed && (!entry || entry->expire_at_ms < 0)) {   /* set and already gone */
        gr_effect_del(db, req.key);
        return;
    }
    gr_effect_begin(db, 3 + (condition != GR_SET_CONDITION_ALWAYS) + (timed ? 2 : 0) + (mode == GR_EXPIRE_MODE_KEEPTTL));
    gr_effect_word(db, "SET");
    gr_effect_bytes(db, req.key);
    gr_effect_bytes(db, req.value);
    if (condition == GR_SET_CONDITION_NX) gr_effect_word(db, "NX");
    else if (condition == GR_SET_CONDITION_XX) gr_effect_word(db, "XX");
    if (timed) gr_effect_word(db, "PXAT"), gr_effect_int(db, entry->expire_at_ms);
    if (mode == GR_EXPIRE_MODE_KEEPTTL) gr_effect_word(db, "KEEPTTL");
}

void gr_render_getdel(gr_server_t *db, const gr_request_t *r) { gr_effect_del(db, r->key); }

/* Expiry as the command left it: PEXPIREAT key at, PERSIST key, or DEL key when the time had
 * passed (EXPIRE family, GETEX). */
void gr_render_expiry(gr_server_t *db, const gr_request_t *r) {
    gr_ks_entry_t *entry = entry_after(db, r->key);
    if (!entry) { gr_effect_del(db, r->key); return; }
    if (entry->expire_at_ms < 0) {
        gr_effect_begin(db, 2);
        gr_effect_word(db, "PERSIST"), gr_effect_bytes(db, r->key);
        return;
    }
    gr_effect_begin(db, 3);
    gr_effect_word(db, "PEXPIREAT"), gr_effect_bytes(db, r->key), gr_effect_int(db, entry->expire_at_ms);
}

void gr_render_persist(gr_server_t *db, const gr_request_t *r) {
    const gr_persist_view_t req = gr_persist_view(r);
    gr_effect_begin(db, 2);
    gr_effect_word(db, "PERSIST"), gr_effect_bytes(db, req.key);
}

/* INCR, DECR (NAME key), INCRBY, DECRBY (NAME key amount): the row's arity tells them apart */
void gr_render_incrby(gr_server_t *db, const gr_request_t *r) {
    const gr_incrby_view_t req = gr_incrby_view(r);
    int with_amount = db->call && db->call->row && db->call->row->arity == 3;
    gr_effect_begin(db, 2 + (uint64_t)with_amount);
    gr_effect_name(db), gr_effect_bytes(db, req.key);
    if (with_amount) gr_effect_int(db, req.delta);
}

/* INCRBYFLOAT as the value it made: SET key value KEEPTTL */
void gr_render_incrbyfloat(gr_server_t *db, const gr_request_t *r) {
    const gr_incrbyfloat_view_t req = gr_incrbyfloat_view(r);
    gr_ks_entry_t *entry = entry_after(db, req.key);
    if (!entry || entry->type != GR_TYPE_STRING) { gr_effect_none(db); return; }
    const gr_string_t *s = entry->value;
    gr_effect_begin(db, 4);
    gr_effect_word(db, "SET"), gr_effect_bytes(db, req.key), gr_effect_bulk(db, s->data, s->length);
    gr_effect_word(db, "KEEPTTL");
}
