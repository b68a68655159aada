/* propagate.c — the write-effect stream (propagate.h): RESP encoding of each command's effect,
 * SELECT and MULTI/EXEC framing, the typed requests rendered back to argv with Redis's
 * rewrites for replay, and the handoff to the sink (persist/aof.c) before replies leave.
 */
#include "exec/propagate.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/number.h"
#include "engines/hash/hash.h"
#include "engines/string_value.h"
#include "exec/command.h"
#include "exec/db.h"

void gr_propagation_init(gr_propagation_t *p) {
    memset(p, 0, sizeof *p);
    p->selected = -1;
}

void gr_propagation_release(gr_propagation_t *p) {
    free(p->data);
    free(p->rewrite);
    p->data = p->rewrite = NULL;
    p->length = p->capacity = p->rewrite_length = p->rewrite_capacity = 0;
}

/* ---- the RESP writer over a growable buffer ---- */

static int grow(uint8_t **data, size_t *capacity, size_t needed) {
    if (needed <= *capacity) return 0;
    size_t size = *capacity ? *capacity : 4096;
    while (size < needed) size *= 2;
    uint8_t *grown = realloc(*data, size);
    if (!grown) return -1;
    *data = grown;
    *capacity = size;
    return 0;
}

static void put(gr_propagation_t *p, const void *bytes, size_t length) {
    if (p->skipping) return;
    if (grow(&p->data, &p->capacity, p->length + length) != 0) {   /* drop the whole entry, never half */
        p->failed = 1;
        p->skipping = 1;
        p->length = p->entry_start;
        p->selected = -1;
        return;
    }
    memcpy(p->data + p->length, bytes, length);
    p->length += length;
}

static void put_header(gr_propagation_t *p, char kind, uint64_t count) {
    char text[32];
    int n = snprintf(text, sizeof text, "%c%llu\r\n", kind, (unsigned long long)count);
    put(p, text, (size_t)n);
}

static void put_bulk(gr_propagation_t *p, const uint8_t *data, size_t length) {
    put_header(p, '$', length);
    put(p, data, length);
    put(p, "\r\n", 2);
}

static void put_word(gr_propagation_t *p, const char *word) { put_bulk(p, (const uint8_t *)word, strlen(word)); }

static void put_int(gr_propagation_t *p, int64_t value) {
    char text[24];
    int n = snprintf(text, sizeof text, "%lld", (long long)value);
    put_bulk(p, (const uint8_t *)text, (size_t)n);
}

static void put_bytes(gr_propagation_t *p, gr_bytes_t bytes) { put_bulk(p, bytes.data, bytes.length); }

/* The command's name as its row has it, upper-cased ("goblin.pma.lpush" -> GOBLIN.PMA.LPUSH). */
static void put_name(gr_propagation_t *p, const char *name) {
    char upper[64];
    size_t n = strlen(name);
    if (n >= sizeof upper) { put_word(p, name); return; }
    for (size_t i = 0; i < n; i++) upper[i] = (char)toupper((unsigned char)name[i]);
    put_bulk(p, (const uint8_t *)upper, n);
}

/* Every entry starts here: MULTI once inside EXEC, SELECT when the database changes, then
 * the array header of argc arguments. */
static void begin_entry(gr_db_t *db, int32_t db_index, uint64_t argc) {
    gr_propagation_t *p = &db->propagation;
    p->skipping = 0;
    p->entry_start = p->length;
    if (p->in_exec && !p->multi_written) {
        put(p, "*1\r\n$5\r\nMULTI\r\n", 15);
        p->multi_written = 1;
    }
    if (db_index != p->selected) {
        put_header(p, '*', 2);
        put_word(p, "SELECT");
        put_int(p, db_index);
        p->selected = db_index;
    }
    put_header(p, '*', argc);
}

void gr_propagate_argv(gr_db_t *db, int32_t db_index, size_t argc, const uint8_t *const *argv,
                       const size_t *argv_length) {
    if (!db->propagation.sink) return;
    begin_entry(db, db_index, argc);
    for (size_t i = 0; i < argc; i++) put_bulk(&db->propagation, argv[i], argv_length[i]);
}

void gr_propagate_del(gr_db_t *db, int32_t db_index, const uint8_t *key, size_t key_length) {
    if (!db->propagation.sink) return;
    begin_entry(db, db_index, 2);
    put_word(&db->propagation, "DEL");
    put_bulk(&db->propagation, key, key_length);
}

/* ---- handlers' rewrites ---- */

static void rewrite_put(gr_propagation_t *p, const uint8_t *data, size_t length) {
    char text[32];
    int n = snprintf(text, sizeof text, "$%zu\r\n", length);
    if (grow(&p->rewrite, &p->rewrite_capacity, p->rewrite_length + (size_t)n + length + 2) != 0) {
        p->failed = 1;
        return;
    }
    memcpy(p->rewrite + p->rewrite_length, text, (size_t)n);
    memcpy(p->rewrite + p->rewrite_length + n, data, length);
    memcpy(p->rewrite + p->rewrite_length + n + length, "\r\n", 2);
    p->rewrite_length += (size_t)n + length + 2;
    p->rewrite_count++;
}

void gr_propagate_rewrite_begin(gr_db_t *db, const char *name, gr_bytes_t key) {
    gr_propagation_t *p = &db->propagation;
    if (!p->sink) return;
    p->rewriting = 1;
    p->rewrite_length = 0;
    p->rewrite_count = 0;
    rewrite_put(p, (const uint8_t *)name, strlen(name));
    rewrite_put(p, key.data, key.length);
}

void gr_propagate_rewrite_arg(gr_db_t *db, const uint8_t *data, size_t length) {
    gr_propagation_t *p = &db->propagation;
    if (p->sink && p->rewriting) rewrite_put(p, data, length);
}

/* ---- typed requests rendered back to argv ---- */

static const char *end_word(uint8_t end) { return end ? "RIGHT" : "LEFT"; }

/* The key's entry in db_index as the command left it (no expiry check: the command just ran). */
static gr_ks_entry_t *entry_after(gr_db_t *db, int32_t db_index, gr_bytes_t key) {
    return gr_ks_find(db->keyspaces[db_index], key.data, key.length);
}

/* The row's name with its last `strip` characters replaced by `with`: the non-blocking
 * command of the same engine family (GOBLIN.PMA.BLPOP -> GOBLIN.PMA.LMPOP). */
static void put_sibling(gr_propagation_t *p, const char *name, const char *suffix, const char *with) {
    char sibling[64];
    size_t n = strlen(name), s = strlen(suffix);
    if (n < s || n - s + strlen(with) >= sizeof sibling) { put_name(p, with); return; }
    memcpy(sibling, name, n - s);
    strcpy(sibling + n - s, with);
    put_name(p, sibling);
}

static const char *name_suffix(const char *name, const char *a, const char *b) {
    size_t n = strlen(name), la = strlen(a);
    return n >= la && strcasecmp(name + n - la, a) == 0 ? a : b;
}

/* Expiry as the command set it: PEXPIREAT key at, or DEL key when the key is gone (a time
 * already past deletes it). */
static void put_expiry_effect(gr_db_t *db, int32_t db_index, gr_bytes_t key) {
    gr_propagation_t *p = &db->propagation;
    gr_ks_entry_t *entry = entry_after(db, db_index, key);
    if (!entry) { gr_propagate_del(db, db_index, key.data, key.length); return; }
    if (entry->expire_at_ms < 0) {
        begin_entry(db, db_index, 2);
        put_word(p, "PERSIST");
        put_bytes(p, key);
        return;
    }
    begin_entry(db, db_index, 3);
    put_word(p, "PEXPIREAT");
    put_bytes(p, key);
    put_int(p, entry->expire_at_ms);
}

enum { SET_VARIANT_SET = 0, SET_VARIANT_SETNX = 1, SET_VARIANT_SETEX = 2, SET_VARIANT_PSETEX = 3 };

static void render_set(gr_db_t *db, int32_t db_index, const gr_request_t *r) {
    gr_propagation_t *p = &db->propagation;
    int variant = (int)r->count, condition = r->end, mode = r->to_end;
    if (variant == SET_VARIANT_SETNX) condition = GR_SET_CONDITION_NX, mode = GR_EXPIRE_MODE_NONE;
    if (variant == SET_VARIANT_SETEX || variant == SET_VARIANT_PSETEX) mode = GR_EXPIRE_MODE_PX;
    int timed = mode >= GR_EXPIRE_MODE_EX && mode <= GR_EXPIRE_MODE_PXAT;
    gr_ks_entry_t *entry = entry_after(db, db_index, r->key);
    if (timed && (!entry || entry->expire_at_ms < 0)) {   /* set and already gone */
        gr_propagate_del(db, db_index, r->key.data, r->key.length);
        return;
    }
    begin_entry(db, db_index, 3 + (condition != GR_SET_CONDITION_ALWAYS) + (timed ? 2 : 0) +
                                  (mode == GR_EXPIRE_MODE_KEEPTTL));
    put_word(p, "SET");
    put_bytes(p, r->key);
    put_bytes(p, r->arg1);
    if (condition == GR_SET_CONDITION_NX) put_word(p, "NX");
    else if (condition == GR_SET_CONDITION_XX) put_word(p, "XX");
    if (timed) { put_word(p, "PXAT"); put_int(p, entry->expire_at_ms); }
    if (mode == GR_EXPIRE_MODE_KEEPTTL) put_word(p, "KEEPTTL");
}

/* name key item... */
static void render_items(gr_db_t *db, int32_t db_index, const char *name, const gr_request_t *r, int with_key) {
    gr_propagation_t *p = &db->propagation;
    begin_entry(db, db_index, 1 + (uint64_t)with_key + r->item_count);
    put_name(p, name);
    if (with_key) put_bytes(p, r->key);
    for (uint32_t i = 0; i < r->item_count; i++) put_bytes(p, r->items[i]);
}

/* LMPOP numkeys key... LEFT|RIGHT COUNT n under the row name given */
static void render_lmpop(gr_db_t *db, int32_t db_index, const char *name, const char *suffix,
                         const gr_request_t *r, uint32_t count) {
    gr_propagation_t *p = &db->propagation;
    begin_entry(db, db_index, 5 + (uint64_t)r->item_count);
    put_sibling(p, name, suffix, "lmpop");
    put_int(p, r->item_count);
    for (uint32_t i = 0; i < r->item_count; i++) put_bytes(p, r->items[i]);
    put_word(p, end_word(r->end));
    put_word(p, "COUNT");
    put_int(p, count ? count : 1);
}

/* Returns 0 when the template has no rendering (the entry is lost: counted as a failure). */
static int render_request(gr_db_t *db, int32_t db_index, const gr_request_t *r) {
    gr_propagation_t *p = &db->propagation;
    const gr_command_t *row = gr_command_at((size_t)gr_command_index_of_request(r));
    const char *name = row ? row->name : "";
    switch (r->template_id) {
    case GR_T_DEL:
        render_items(db, db_index, name, r, 0);
        return 1;
    case GR_T_FLUSHDB:
        begin_entry(db, db_index, 1);
        put_name(p, name);
        return 1;
    case GR_T_RENAME:
        begin_entry(db, db_index, 3);
        put_name(p, name), put_bytes(p, r->key), put_bytes(p, r->arg1);
        return 1;
    case GR_T_MOVE:
        begin_entry(db, db_index, 3);
        put_name(p, name), put_bytes(p, r->key), put_int(p, r->index);
        return 1;
    case GR_T_SWAPDB:
        begin_entry(db, db_index, 3);
        put_name(p, name), put_int(p, r->index), put_int(p, r->index2);
        return 1;
    case GR_T_PUSH:
        render_items(db, db_index, name, r, 1);
        return 1;
    case GR_T_POP:
        begin_entry(db, db_index, 2 + (r->flag != 0));
        put_name(p, name), put_bytes(p, r->key);
        if (r->flag) put_int(p, r->count);
        return 1;
    case GR_T_LSET:
    case GR_T_LREM:
        begin_entry(db, db_index, 4);
        put_name(p, name), put_bytes(p, r->key), put_int(p, r->index), put_bytes(p, r->arg1);
        return 1;
    case GR_T_LINSERT:
        begin_entry(db, db_index, 5);
        put_name(p, name), put_bytes(p, r->key), put_word(p, r->flag ? "AFTER" : "BEFORE");
        put_bytes(p, r->arg1), put_bytes(p, r->arg2);
        return 1;
    case GR_T_LTRIM:
        begin_entry(db, db_index, 4);
        put_name(p, name), put_bytes(p, r->key), put_int(p, r->index), put_int(p, r->index2);
        return 1;
    case GR_T_LMOVE:
    case GR_T_BLMOVE: {
        const char *suffix = r->template_id == GR_T_LMOVE ? name_suffix(name, "rpoplpush", "lmove")
                                                          : name_suffix(name, "brpoplpush", "blmove");
        begin_entry(db, db_index, 5);
        put_sibling(p, name, suffix, "lmove");
        put_bytes(p, r->key), put_bytes(p, r->arg1), put_word(p, end_word(r->end)), put_word(p, end_word(r->to_end));
        return 1;
    }
    case GR_T_LMPOP:
        render_lmpop(db, db_index, name, "lmpop", r, r->count);
        return 1;
    case GR_T_BPOP:
        render_lmpop(db, db_index, name, name_suffix(name, "blpop", "brpop"), r, 1);
        return 1;
    case GR_T_BLMPOP:
        render_lmpop(db, db_index, name, "blmpop", r, r->count);
        return 1;
    case GR_T_SET:
        render_set(db, db_index, r);
        return 1;
    case GR_T_GETDEL:
        gr_propagate_del(db, db_index, r->key.data, r->key.length);
        return 1;
    case GR_T_GETEX:
    case GR_T_EXPIRE:
        put_expiry_effect(db, db_index, r->key);
        return 1;
    case GR_T_PERSIST:
        begin_entry(db, db_index, 2);
        put_word(p, "PERSIST"), put_bytes(p, r->key);
        return 1;
    case GR_T_MSET:
        render_items(db, db_index, name, r, 0);
        return 1;
    case GR_T_INCRBY: {
        int with_amount = strcasecmp(name, "incrby") == 0 || strcasecmp(name, "decrby") == 0;
        begin_entry(db, db_index, 2 + (uint64_t)with_amount);
        put_name(p, name), put_bytes(p, r->key);
        if (with_amount) put_int(p, r->index);
        return 1;
    }
    case GR_T_INCRBYFLOAT: {   /* the value it made, so replay never re-does float arithmetic */
        gr_ks_entry_t *entry = entry_after(db, db_index, r->key);
        if (!entry || entry->type != GR_TYPE_STRING) return 0;
        const gr_string_t *s = entry->value;
        begin_entry(db, db_index, 4);
        put_word(p, "SET"), put_bytes(p, r->key), put_bulk(p, s->data, s->length), put_word(p, "KEEPTTL");
        return 1;
    }
    case GR_T_APPEND:
        begin_entry(db, db_index, 3);
        put_name(p, name), put_bytes(p, r->key), put_bytes(p, r->arg1);
        return 1;
    case GR_T_SETRANGE:
        begin_entry(db, db_index, 4);
        put_name(p, name), put_bytes(p, r->key), put_int(p, r->index), put_bytes(p, r->arg1);
        return 1;
    default:
        return 0;
    }
}

void gr_propagate_request(gr_db_t *db, int32_t db_index, const gr_request_t *request) {
    if (!db->propagation.sink) return;
    if (request->template_id == GR_T_COMMAND) {
        /* a served BZPOPMIN/BZPOPMAX/BZMPOP waiter (cmd_zset.c's parked request: items = the
         * key it was served on, end 0 MIN / 1 MAX, flag 1 BZMPOP with its count) */
        gr_propagation_t *p = &db->propagation;
        begin_entry(db, db_index, 3 + (uint64_t)request->item_count + 2);
        put_word(p, "ZMPOP"), put_int(p, request->item_count);
        for (uint32_t i = 0; i < request->item_count; i++) put_bytes(p, request->items[i]);
        put_word(p, request->end ? "MAX" : "MIN"), put_word(p, "COUNT");
        put_int(p, request->flag && request->count ? request->count : 1);
        return;
    }
    if (!render_request(db, db_index, request)) db->propagation.failed = 1;
}

/* ---- argv commands with Redis's rewrites ---- */

static int is(const uint8_t *word, size_t length, const char *name) {
    return strlen(name) == length && strncasecmp((const char *)word, name, length) == 0;
}

static int64_t int_arg(const uint8_t *data, size_t length) {
    int64_t value = 0;
    gr_bytes_to_int64(data, length, &value);
    return value;
}

/* RESTORE key ttl payload [REPLACE] [ABSTTL] ...: the absolute time the key got, REPLACE ABSTTL. */
static void render_restore(gr_db_t *db, int32_t db_index, const uint8_t *const *argv, const size_t *argv_length) {
    gr_propagation_t *p = &db->propagation;
    gr_bytes_t key = {argv[1], (uint32_t)argv_length[1]};
    gr_ks_entry_t *entry = entry_after(db, db_index, key);
    begin_entry(db, db_index, 6);
    put_word(p, "RESTORE"), put_bytes(p, key);
    put_int(p, entry && entry->expire_at_ms >= 0 ? entry->expire_at_ms : 0);
    put_bulk(p, argv[3], argv_length[3]);
    put_word(p, "REPLACE"), put_word(p, "ABSTTL");
}

/* HEXPIRE/HPEXPIRE/HEXPIREAT key time ... -> HPEXPIREAT key unix-ms ... */
static void render_hexpire(gr_db_t *db, int32_t db_index, int64_t at_ms, size_t argc, const uint8_t *const *argv,
                           const size_t *argv_length) {
    gr_propagation_t *p = &db->propagation;
    begin_entry(db, db_index, argc);
    put_word(p, "HPEXPIREAT"), put_bulk(p, argv[1], argv_length[1]), put_int(p, at_ms);
    for (size_t i = 3; i < argc; i++) put_bulk(p, argv[i], argv_length[i]);
}

/* HSETEX/HGETEX key ... EX|PX|EXAT n ... FIELDS ...: the relative or second forms -> PXAT unix-ms. */
static void render_hash_ex(gr_db_t *db, int32_t db_index, size_t argc, const uint8_t *const *argv,
                           const size_t *argv_length) {
    gr_propagation_t *p = &db->propagation;
    begin_entry(db, db_index, argc);
    int options = 1;
    for (size_t i = 0; i < argc; i++) {
        if (i >= 2 && options && is(argv[i], argv_length[i], "FIELDS")) options = 0;
        if (i >= 2 && options && i + 1 < argc &&
            (is(argv[i], argv_length[i], "EX") || is(argv[i], argv_length[i], "PX") ||
             is(argv[i], argv_length[i], "EXAT"))) {
            int64_t n = int_arg(argv[i + 1], argv_length[i + 1]);
            int64_t at = is(argv[i], argv_length[i], "EX") ? db->now_ms + n * 1000
                       : is(argv[i], argv_length[i], "PX") ? db->now_ms + n : n * 1000;
            put_word(p, "PXAT"), put_int(p, at);
            i++;
            continue;
        }
        put_bulk(p, argv[i], argv_length[i]);
    }
}

/* BZPOPMIN/BZPOPMAX key... timeout -> ZMPOP n key... MIN|MAX COUNT 1; BZMPOP t n ... -> ZMPOP n ... */
static void render_bzpop(gr_db_t *db, int32_t db_index, const char *where, size_t argc, const uint8_t *const *argv,
                         const size_t *argv_length) {
    gr_propagation_t *p = &db->propagation;
    size_t keys = argc - 2;
    begin_entry(db, db_index, 5 + keys);
    put_word(p, "ZMPOP"), put_int(p, (int64_t)keys);
    for (size_t i = 1; i <= keys; i++) put_bulk(p, argv[i], argv_length[i]);
    put_word(p, where), put_word(p, "COUNT"), put_int(p, 1);
}

static void render_argv(gr_db_t *db, int32_t db_index, size_t argc, const uint8_t *const *argv,
                        const size_t *argv_length) {
    const uint8_t *name = argv[0];
    size_t n = argv_length[0];
    if (is(name, n, "restore") && argc >= 4) { render_restore(db, db_index, argv, argv_length); return; }
    if (argc >= 4 && (is(name, n, "hexpire") || is(name, n, "hpexpire") || is(name, n, "hexpireat"))) {
        int64_t t = int_arg(argv[2], argv_length[2]);
        int64_t at = is(name, n, "hexpire") ? db->now_ms + t * 1000 : is(name, n, "hpexpire") ? db->now_ms + t : t * 1000;
        render_hexpire(db, db_index, at, argc, argv, argv_length);
        return;
    }
    if (is(name, n, "hsetex") || is(name, n, "hgetex")) { render_hash_ex(db, db_index, argc, argv, argv_length); return; }
    if (argc >= 3 && is(name, n, "bzpopmin")) { render_bzpop(db, db_index, "MIN", argc, argv, argv_length); return; }
    if (argc >= 3 && is(name, n, "bzpopmax")) { render_bzpop(db, db_index, "MAX", argc, argv, argv_length); return; }
    if (argc >= 3 && is(name, n, "bzmpop")) {
        gr_propagation_t *p = &db->propagation;
        begin_entry(db, db_index, argc - 1);
        put_word(p, "ZMPOP");
        for (size_t i = 2; i < argc; i++) put_bulk(p, argv[i], argv_length[i]);
        return;
    }
    if (argc == 4 && is(name, n, "hincrbyfloat")) {   /* the value it made: HSET key field value */
        gr_bytes_t key = {argv[1], (uint32_t)argv_length[1]};
        gr_ks_entry_t *entry = entry_after(db, db_index, key);
        gr_hash_entry_t field;
        if (entry && entry->type == GR_TYPE_HASH && gr_hash_get(entry->value, argv[2], argv_length[2], &field)) {
            gr_propagation_t *p = &db->propagation;
            begin_entry(db, db_index, 4);
            put_word(p, "HSET"), put_bytes(p, key), put_bulk(p, argv[2], argv_length[2]);
            put_bulk(p, field.value, field.value_length);
            return;
        }
    }
    gr_propagate_argv(db, db_index, argc, argv, argv_length);
}

/* ---- the execute paths' hooks ---- */

void gr_propagate_command_begin(gr_db_t *db) {
    db->propagation.depth++;
    db->propagation.rewriting = 0;
}

void gr_propagate_command_end(gr_db_t *db, int64_t dirty_before, const gr_request_t *request, size_t argc,
                              const uint8_t *const *argv, const size_t *argv_length, int is_exec) {
    gr_propagation_t *p = &db->propagation;
    int32_t depth = --p->depth;
    if (!p->sink) return;
    int rewriting = p->rewriting;
    p->rewriting = 0;
    if (db->dirty <= dirty_before || is_exec) return;
    if (!(depth == 0 || (p->in_exec && depth == 1))) return;
    int32_t db_index = db->current ? db->current->db_index : 0;
    if (rewriting) {
        begin_entry(db, db_index, p->rewrite_count);
        put(p, p->rewrite, p->rewrite_length);
        return;
    }
    if (request && request->template_id != GR_T_COMMAND) {
        if (!render_request(db, db_index, request)) p->failed = 1;
        return;
    }
    if (argc) render_argv(db, db_index, argc, argv, argv_length);
}

void gr_propagate_exec_begin(gr_db_t *db) {
    db->propagation.in_exec = 1;
    db->propagation.multi_written = 0;
}

void gr_propagate_exec_end(gr_db_t *db) {
    gr_propagation_t *p = &db->propagation;
    if (p->in_exec && p->multi_written && p->sink) put(p, "*1\r\n$4\r\nEXEC\r\n", 14);
    p->in_exec = p->multi_written = 0;
}

void gr_propagate_sync(gr_db_t *db) {
    gr_propagation_t *p = &db->propagation;
    gr_propagate_flush(db);
    if (p->sync_pending && p->sync && !p->in_exec) {
        p->sync_pending = 0;
        p->sync(p->sink_context, db);
    }
}

void gr_propagate_flush(gr_db_t *db) {
    gr_propagation_t *p = &db->propagation;
    if (p->sink && (p->length || p->failed) && !p->in_exec) p->sink(p->sink_context, db);
    if (p->length == 0 && p->capacity > ((size_t)4 << 20)) {   /* a huge batch does not pin its buffer */
        free(p->data);
        p->data = NULL;
        p->capacity = 0;
    }
}
