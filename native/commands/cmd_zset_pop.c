/* cmd_zset_pop.c — the sorted-set pops: ZPOPMIN, ZPOPMAX, ZMPOP and the blocking BZPOPMIN,
 * BZPOPMAX, BZMPOP (parked and served through exec/blocking.h, as the list pops are), over the
 * engine in engines/zset/; the shared helpers are in cmd_zset.c (cmd_zset_shared.h). */
#include <stdlib.h>
#include <string.h>

#include "commands/cmd_zset_shared.h"
#include "exec/lookup.h"
#include "core/number.h"
#include "core/bytes.h"
#include "exec/blocking.h"

/* ---- ZPOPMIN, ZPOPMAX, ZMPOP ---- */

/* Pop up to count from zset's lowest (max: highest) end, replying each as it goes, after
 * a reply_list_begin of the popped count written by the caller (see pop_count). */
static size_t pop_count(const gr_zset_t *zset, size_t count) {
    size_t n = gr_zset_count(zset);
    return count < n ? count : n;
}

static void pop_and_reply(gr_server_t *db, gr_reply_t *reply, gr_bytes_t key, gr_zset_t *zset, size_t n, int max, int pairs) {
    for (size_t i = 0; i < n; i++) {
        gr_zset_entry_t e;
        gr_zset_at(zset, max ? gr_zset_count(zset) - 1 : 0, &e);
        if (pairs) gr_reply_array_begin(reply, 2);
        gr_reply_bulk(reply, e.member, e.member_length);
        gr_zcmd_reply_score(db, reply, e.score);
        uint8_t small[128];
        uint8_t *copy = e.member_length <= sizeof small ? small : gr_mem_alloc(e.member_length, GR_MEM_OTHER);
        if (copy) {   /* without memory for the copy the member stays: the reply is written already */
            memcpy(copy, e.member, e.member_length);
            gr_zset_delete(zset, copy, e.member_length);
            if (copy != small) gr_mem_free(copy, GR_MEM_OTHER);
        }
    }
    gr_db_mark_changed(db, key, (int64_t)n);
    gr_zcmd_delete_if_empty(db, key, zset);
    if (n) {   /* Redis's events for every pop: zpopmin or zpopmax, then "del" when it emptied the set */
        gr_call_notify(db, GR_NOTIFY_ZSET, max ? "zpopmax" : "zpopmin", key);
        if (db->notify_flags && !gr_ks_find(db->keyspace, key.data, key.length))
            gr_call_notify(db, GR_NOTIFY_GENERIC, "del", key);
    } else {
        gr_call_events_stated(db);
    }
}

static void zpop_generic(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply,
                         int max) {
    if (argc > 3) { reply_syntax(reply); return; }
    int64_t count = 1;
    int count_given = argc == 3;
    if (count_given) {
        if (gr_bytes_to_int64(argv[2], argv_length[2], &count) != 0 || count < 0) { gr_reply_error_text(reply, GR_ERR_OUT_OF_RANGE, "ERR value is out of range, must be positive"); return; }
    }
    gr_bytes_t key = arg(argv, argv_length, 1);
    gr_zset_t *zset = NULL;
    int found = gr_zcmd_find_or_reply(db, key, &zset, 1, reply);
    if (found < 0) return;
    if (!found || count == 0) { gr_reply_array_begin(reply, 0); return; }
    int nested = protocol_of(db) >= 3 && count_given;
    size_t n = pop_count(zset, (size_t)count);
    gr_reply_array_begin(reply, nested ? n : n * 2);
    pop_and_reply(db, reply, key, zset, n, max, nested);
}

void gr_cmd_zpopmin(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    zpop_generic(db, argc, argv, argv_length, reply, 0);
}
void gr_cmd_zpopmax(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    zpop_generic(db, argc, argv, argv_length, reply, 1);
}

/* [key, [[member, score]...]]: ZMPOP's and BZMPOP's reply, popping up to count from key's set. */
static void pop_and_reply_keyed(gr_server_t *db, gr_reply_t *reply, gr_bytes_t key, gr_zset_t *zset, size_t count, int max) {
    size_t n = pop_count(zset, count);
    gr_reply_array_begin(reply, 2);
    gr_reply_bulk(reply, key.data, key.length);
    gr_reply_array_begin(reply, n);
    pop_and_reply(db, reply, key, zset, n, max, 1);
}

/* numkeys key... MIN|MAX [COUNT count], numkeys at argv[numkeys_index] (ZMPOP: 1, BZMPOP: 2,
 * after its timeout), checked in Redis's order. 0 with the keys' count, MAX and COUNT, or -1
 * replied. */
static int parse_mpop_or_reply(size_t argc, const uint8_t *const *argv, const size_t *argv_length, size_t numkeys_index,
                               size_t *key_count, int *max, int64_t *count, gr_reply_t *reply) {
    int64_t numkeys;
    if (gr_bytes_to_int64(argv[numkeys_index], argv_length[numkeys_index], &numkeys) != 0 || numkeys < 1) {
        reply_error(reply, "ERR numkeys should be greater than 0");
        return -1;
    }
    if ((uint64_t)numkeys > argc - numkeys_index - 2) { reply_syntax(reply); return -1; }
    size_t where = numkeys_index + 1 + (size_t)numkeys;
    if (gr_word_is(argv[where], argv_length[where], "min")) *max = 0;
    else if (gr_word_is(argv[where], argv_length[where], "max")) *max = 1;
    else { reply_syntax(reply); return -1; }
    *count = 1;
    int count_seen = 0;
    for (size_t i = where + 1; i < argc; i++) {
        if (!count_seen && gr_word_is(argv[i], argv_length[i], "count") && i + 1 < argc) {
            if (gr_bytes_to_int64(argv[i + 1], argv_length[i + 1], count) != 0 || *count < 1) {
                reply_error(reply, "ERR count should be greater than 0");
                return -1;
            }
            count_seen = 1;
            i++;
        } else {
            reply_syntax(reply);
            return -1;
        }
    }
    *key_count = (size_t)numkeys;
    return 0;
}

void gr_cmd_zmpop(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    size_t key_count;
    int max;
    int64_t count;
    if (parse_mpop_or_reply(argc, argv, argv_length, 1, &key_count, &max, &count, reply) != 0) return;
    for (size_t k = 2; k < 2 + key_count; k++) {
        gr_bytes_t key = arg(argv, argv_length, k);
        gr_zset_t *zset = NULL;
        int found = gr_zcmd_find_or_reply(db, key, &zset, 1, reply);
        if (found < 0) return;
        if (!found) continue;
        pop_and_reply_keyed(db, reply, key, zset, (size_t)count, max);
        return;
    }
    gr_reply_nil_array(reply);
}

/* ---- BZPOPMIN, BZPOPMAX, BZMPOP: the blocking layer's spec (exec/blocking.h) ----
 *
 * The argv handler parses its arguments into a gr_request_t the blocking layer can park:
 * items = the keys, timeout, end = 0 MIN / 1 MAX, flag = 0 BZPOPMIN/BZPOPMAX ([key, member,
 * score]) / 1 BZMPOP ([key, [[member, score]...]]), count = BZMPOP's COUNT. */

static int holds_zset(const gr_ks_entry_t *entry) { return entry->type == GR_TYPE_ZSET; }

static int zset_block_serve(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) {
    for (uint32_t k = 0; k < r->item_count; k++) {
        gr_bytes_t key = r->items[k];
        gr_zset_t *zset = NULL;
        int found = gr_zcmd_find_or_reply(db, key, &zset, 1, reply);
        if (found < 0) return 1;
        if (!found) continue;
        uint32_t count = r->flag == 0 ? 1 : r->count;
        if (r->flag == 0) {
            gr_reply_array_begin(reply, 3);
            gr_reply_bulk(reply, key.data, key.length);
            pop_and_reply(db, reply, key, zset, 1, r->end, 0);
        } else {
            pop_and_reply_keyed(db, reply, key, zset, count, r->end);
        }
        /* propagated as the plain pop on the key that served it: ZMPOP 1 key MIN|MAX COUNT n */
        gr_effect_begin(db, 6);
        gr_effect_word(db, "ZMPOP"), gr_effect_int(db, 1), gr_effect_bytes(db, key);
        gr_effect_word(db, r->end ? "MAX" : "MIN"), gr_effect_word(db, "COUNT"), gr_effect_int(db, count ? count : 1);
        return 1;
    }
    return 0;
}

static void zset_block_timeout(const gr_request_t *r, gr_reply_t *reply) {
    (void)r;
    gr_reply_nil_array(reply);
}

const gr_block_spec_t gr_zset_block_pop = {"bzpopmin", GR_BLOCK_KEYS_IN_ITEMS, holds_zset, zset_block_serve,
                                           zset_block_timeout, -1, 0, NULL, NULL, NULL};
const gr_block_spec_t gr_zset_block_mpop = {"bzmpop", GR_BLOCK_KEYS_IN_ITEMS, holds_zset, zset_block_serve,
                                            zset_block_timeout, 1, 0, NULL, NULL, NULL};

/* Redis's getTimeoutFromObjectOrReply: seconds as a float, not negative, within range. */
static int parse_timeout_or_reply(const uint8_t *data, size_t length, double *seconds, gr_reply_t *reply) {
    char text[64];
    char *end = NULL;
    if (length > 0 && length < sizeof text) {
        memcpy(text, data, length);
        text[length] = '\0';
        *seconds = strtod(text, &end);
    }
    if (!end || end != text + length || length == 0 || text[0] == ' ' || (text[0] >= '\t' && text[0] <= '\r')) {
        reply_error(reply, "ERR timeout is not a float or out of range");
        return -1;
    }
    const char *why = gr_blocking_timeout_error(*seconds);
    if (why) { reply_error(reply, why); return -1; }
    return 0;
}

/* Park (or serve at once) a blocking pop of the keys argv[first_key ..] (key_count of them):
 * flag and count as gr_zset_block_pop reads them. */
static void run_blocking_pop(gr_server_t *db, const uint8_t *const *argv, const size_t *argv_length, size_t first_key,
                             size_t key_count, double timeout, int max, int flag, uint32_t count, gr_reply_t *reply) {
    gr_bytes_t keys_on_stack[16];
    gr_bytes_t *keys = key_count <= 16 ? keys_on_stack : gr_mem_alloc(key_count * sizeof *keys, GR_MEM_OTHER);
    if (!keys) { gr_reply_oom(reply); return; }
    for (size_t i = 0; i < key_count; i++) keys[i] = arg(argv, argv_length, first_key + i);
    gr_request_t request;
    memset(&request, 0, sizeof request);
    request.template_id = GR_T_COMMAND;
    request.items = keys;
    request.item_count = request.item_capacity = (uint32_t)key_count;
    request.timeout = timeout;
    request.end = (uint8_t)max;
    request.flag = (uint8_t)flag;
    request.count = count;
    gr_blocking_run(db, flag ? &gr_zset_block_mpop : &gr_zset_block_pop, &request, reply);
    if (keys != keys_on_stack) gr_mem_free(keys, GR_MEM_OTHER);
}

static void bzpop_generic(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                          gr_reply_t *reply, int max) {
    double timeout;
    if (parse_timeout_or_reply(argv[argc - 1], argv_length[argc - 1], &timeout, reply) != 0) return;
    run_blocking_pop(db, argv, argv_length, 1, argc - 2, timeout, max, 0, 1, reply);
}

void gr_cmd_bzpopmin(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    bzpop_generic(db, argc, argv, argv_length, reply, 0);
}
void gr_cmd_bzpopmax(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    bzpop_generic(db, argc, argv, argv_length, reply, 1);
}

/* BZMPOP timeout numkeys key... MIN|MAX [COUNT count]: ZMPOP's checks after the timeout's. */
void gr_cmd_bzmpop(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    double timeout;
    if (parse_timeout_or_reply(argv[1], argv_length[1], &timeout, reply) != 0) return;
    size_t key_count;
    int max;
    int64_t count;
    if (parse_mpop_or_reply(argc, argv, argv_length, 2, &key_count, &max, &count, reply) != 0) return;
    run_blocking_pop(db, argv, argv_length, 3, key_count, timeout, max, 1,
                     count > UINT32_MAX ? UINT32_MAX : (uint32_t)count, reply);
}
