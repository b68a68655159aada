/* cmd_string.c — the string commands: SET (NX, XX, GET, EX, PX, EXAT, PXAT, KEEPTTL),
 * SETNX, SETEX, PSETEX, GETSET, GET, GETDEL, GETEX, MSET, MSETNX, MGET, INCR, DECR, INCRBY,
 * DECRBY, INCRBYFLOAT, APPEND, STRLEN, GETRANGE, SETRANGE, LCS (LEN, IDX, MINMATCHLEN,
 * WITHMATCHLEN). The bitmap commands, which also work on strings, are cmd_bitmap.c.
 *
 * Typed requests in (codec.h's table says which field carries what), Redis replies and
 * error texts out, for both transports. The value itself is string_value.c. Every command
 * allocates what it needs before it changes anything, so an allocation failure replies OOM
 * and leaves the key as it was. Expiry times are unix milliseconds (keyspace.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands/commands.h"
#include "core/number.h"
#include "exec/db.h"
#include "core/bytes.h"
#include "exec/transaction.h"
#include "engines/string_value.h"

enum { VARIANT_SET = 0, VARIANT_SETNX = 1, VARIANT_SETEX = 2, VARIANT_PSETEX = 3 };
enum { CONDITION_ALWAYS = 0, CONDITION_NX = 1, CONDITION_XX = 2 };
enum { MODE_NONE = 0, MODE_EX = 1, MODE_PX = 2, MODE_EXAT = 3, MODE_PXAT = 4, MODE_KEEPTTL = 5, MODE_PERSIST = 6 };

static void reply_invalid_expire(gr_reply_t *reply, const char *command) {
    char text[96];
    snprintf(text, sizeof text, "ERR invalid expire time in '%s' command", command);
    gr_reply_error_text(reply, GR_ERR_GENERIC, text);
}

static void reply_too_long(gr_reply_t *reply) {
    gr_reply_error_text(reply, GR_ERR_TOO_LARGE, "ERR string exceeds maximum allowed size (proto-max-bulk-len)");
}

/* An EX/PX/EXAT/PXAT value to a unix-ms time, with Redis's checks (the value must be
 * positive and the result must not overflow). 0 ok, -1 invalid. */
static int expire_time(const gr_server_t *db, int mode, int64_t value, int64_t *at) {
    if (value <= 0) return -1;
    if (mode == MODE_EX || mode == MODE_EXAT) {
        if (value > INT64_MAX / 1000) return -1;
        value *= 1000;
    }
    if (mode == MODE_EX || mode == MODE_PX) {
        if (value > INT64_MAX - db->now_ms) return -1;
        value += db->now_ms;
    }
    *at = value;
    return 0;
}

static gr_bytes_t string_bytes(const gr_ks_entry_t *entry) {
    const gr_string_t *s = entry->value;
    gr_bytes_t bytes = {s->data, s->length};
    return bytes;
}

/* Replaces an existing entry's value with s (freeing the old one) or adds the key. 0 ok,
 * -1 OOM (s is freed, nothing changed). The expiry is dropped unless keep_ttl. */
static int store(gr_server_t *db, gr_ks_entry_t *entry, gr_bytes_t key, gr_string_t *s, int keep_ttl) {
    if (entry) {
        gr_free_value(entry->type, entry->value, db);
        entry->type = GR_TYPE_STRING;
        entry->value = s;
        if (!keep_ttl && entry->expire_at_ms >= 0) gr_ks_set_expire(db->keyspace, entry, -1);
        gr_watch_touch_current(db, key);
        return 0;
    }
    if (!gr_ks_add(db->keyspace, key.data, key.length, GR_TYPE_STRING, s)) {
        gr_string_free(s);
        return -1;
    }
    gr_watch_touch_current(db, key);
    return 0;
}

void gr_cmd_set(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) {
    const gr_set_view_t req = gr_set_view(r);
    static const char *names[] = {"set", "setnx", "setex", "psetex"};
    int variant = (int)req.variant, condition = req.condition, mode = req.expire_mode, get = req.get;
    if (variant == VARIANT_SETNX) { condition = CONDITION_NX; mode = MODE_NONE; get = 0; }
    if (variant == VARIANT_SETEX) mode = MODE_EX;
    if (variant == VARIANT_PSETEX) mode = MODE_PX;
    if (mode == MODE_PERSIST) { gr_reply_error_text(reply, GR_ERR_SYNTAX, "ERR syntax error"); return; }
    int64_t expire_at = -1;
    if (mode >= MODE_EX && mode <= MODE_PXAT && expire_time(db, mode, req.expire_value, &expire_at) != 0) {
        reply_invalid_expire(reply, names[variant]);
        return;
    }
    if (req.value.length > GR_STRING_MAX_LENGTH) { reply_too_long(reply); return; }
    gr_ks_entry_t *entry = get ? gr_db_lookup(db, req.key) : gr_db_find_live(db, req.key);
    if (get && entry && entry->type != GR_TYPE_STRING) { gr_reply_wrongtype(reply); return; }
    int blocked = (condition == CONDITION_NX && entry) || (condition == CONDITION_XX && !entry);
    if (blocked) {
        if (variant == VARIANT_SETNX) gr_reply_integer(reply, 0);
        else if (get && entry) gr_reply_bulk(reply, string_bytes(entry).data, string_bytes(entry).length);
        else gr_reply_nil(reply);
        return;
    }
    gr_string_t *s = gr_string_new(req.value.data, req.value.length);
    if (!s) { gr_reply_oom(reply); return; }
    if (entry) {
        /* Swap the value in, reply (GET: the old value), then free the old one. */
        uint8_t old_type = entry->type;
        void *old_value = entry->value;
        entry->type = GR_TYPE_STRING;
        entry->value = s;
        if (mode != MODE_KEEPTTL && entry->expire_at_ms >= 0) gr_ks_set_expire(db->keyspace, entry, -1);
        if (get) {
            const gr_string_t *old = old_value;
            gr_reply_bulk(reply, old->data, old->length);
        } else {
            gr_reply_ok(reply);
        }
        gr_free_value(old_type, old_value, db);
    } else {
        if (!gr_ks_add(db->keyspace, req.key.data, req.key.length, GR_TYPE_STRING, s)) {
            gr_string_free(s);
            gr_reply_oom(reply);
            return;
        }
        if (variant == VARIANT_SETNX) gr_reply_integer(reply, 1);
        else if (get) gr_reply_nil(reply);
        else gr_reply_ok(reply);
    }
    if (expire_at >= 0) {
        gr_ks_entry_t *stored = gr_ks_find(db->keyspace, req.key.data, req.key.length);
        /* An EXAT/PXAT in the past is stored as it is (Redis 7.0 does the same): the key is
         * gone for every reader, and DBSIZE counts it until expiry reclaims it. */
        gr_ks_set_expire(db->keyspace, stored, expire_at);
    }
    gr_watch_touch_current(db, req.key);
    gr_call_notify(db, GR_NOTIFY_STRING, "set", req.key);
    if (expire_at >= 0) gr_call_notify(db, GR_NOTIFY_GENERIC, "expire", req.key);
    gr_db_count_changes(db, 1);
}

/* GETSET key value: Redis's getsetCommand is SET key value GET (the old value or nil,
 * WRONGTYPE for another type, any expiry dropped), so it runs as that request. */
void gr_cmd_getset(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                   gr_reply_t *reply) {
    (void)argc;   /* the row's arity fixes it */
    gr_request_t request;
    memset(&request, 0, sizeof request);
    request.template_id = GR_T_SET;
    request.count = VARIANT_SET;
    request.flag = 1;   /* GET */
    request.key = (gr_bytes_t){argv[1], (uint32_t)argv_length[1]};
    request.arg1 = (gr_bytes_t){argv[2], (uint32_t)argv_length[2]};
    gr_cmd_set(db, &request, reply);
}

/* GET, GETDEL, GETEX: the entry if it is a string (NULL after replying nil or WRONGTYPE). */
static gr_ks_entry_t *readable_string(gr_server_t *db, gr_bytes_t key, gr_reply_t *reply) {
    gr_ks_entry_t *entry = gr_db_lookup(db, key);
    if (!entry) { gr_reply_nil(reply); return NULL; }
    if (entry->type != GR_TYPE_STRING) { gr_reply_wrongtype(reply); return NULL; }
    return entry;
}

void gr_cmd_get(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) {
    const gr_get_view_t req = gr_get_view(r);
    gr_ks_entry_t *entry = readable_string(db, req.key, reply);
    if (entry) gr_reply_bulk(reply, string_bytes(entry).data, string_bytes(entry).length);
}

void gr_cmd_getdel(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) {
    const gr_getdel_view_t req = gr_getdel_view(r);
    gr_ks_entry_t *entry = readable_string(db, req.key, reply);
    if (!entry) return;
    gr_reply_bulk(reply, string_bytes(entry).data, string_bytes(entry).length);
    gr_ks_delete(db->keyspace, req.key.data, req.key.length);
    gr_watch_touch_current(db, req.key);
    gr_db_count_changes(db, 1);
}

void gr_cmd_getex(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) {
    const gr_getex_view_t req = gr_getex_view(r);
    int mode = req.expire_mode;
    if (mode == MODE_KEEPTTL) { gr_reply_error_text(reply, GR_ERR_SYNTAX, "ERR syntax error"); return; }
    gr_ks_entry_t *entry = readable_string(db, req.key, reply);   /* Redis looks up before the expiry */
    if (!entry) return;
    int64_t expire_at = -1;
    if (mode >= MODE_EX && mode <= MODE_PXAT && expire_time(db, mode, req.expire_value, &expire_at) != 0) {
        reply_invalid_expire(reply, "getex");
        return;
    }
    gr_reply_bulk(reply, string_bytes(entry).data, string_bytes(entry).length);
    int changed = mode != MODE_NONE && (mode != MODE_PERSIST || entry->expire_at_ms >= 0);
    const char *event = "expire";
    if (mode == MODE_PERSIST) {
        gr_ks_set_expire(db->keyspace, entry, -1);
        event = "persist";
    } else if (expire_at >= 0 && expire_at <= db->now_ms) {
        gr_ks_delete(db->keyspace, req.key.data, req.key.length);
        event = "del";
    } else if (expire_at >= 0) {
        gr_ks_set_expire(db->keyspace, entry, expire_at);
    }
    if (changed) {
        gr_watch_touch_current(db, req.key);
        gr_call_notify(db, GR_NOTIFY_GENERIC, event, req.key);
        gr_db_count_changes(db, 1);
    }
}

void gr_cmd_mset(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) {
    const gr_mset_view_t req = gr_mset_view(r);
    const char *name = req.only_if_none_exist ? "msetnx" : "mset";
    if (req.arguments_count == 0 || req.arguments_count % 2) { gr_reply_arity_error(reply, name); return; }
    uint32_t pairs = req.arguments_count / 2;
    if (req.only_if_none_exist) {
        for (uint32_t i = 0; i < pairs; i++)
            if (gr_db_find_live(db, req.arguments[2 * i])) { gr_reply_integer(reply, 0); return; }
    }
    for (uint32_t i = 0; i < pairs; i++)
        if (req.arguments[2 * i + 1].length > GR_STRING_MAX_LENGTH) { reply_too_long(reply); return; }
    /* Allocate every value first, so OOM changes nothing. */
    gr_string_t **values = malloc(pairs * sizeof *values);
    if (!values) { gr_reply_oom(reply); return; }
    for (uint32_t i = 0; i < pairs; i++) {
        values[i] = gr_string_new(req.arguments[2 * i + 1].data, req.arguments[2 * i + 1].length);
        if (!values[i]) {
            while (i--) gr_string_free(values[i]);
            free(values);
            gr_reply_oom(reply);
            return;
        }
    }
    int failed = 0;
    for (uint32_t i = 0; i < pairs; i++) {
        if (failed) { gr_string_free(values[i]); continue; }
        gr_bytes_t key = req.arguments[2 * i];
        if (store(db, gr_db_find_live(db, key), key, values[i], 0) != 0) failed = 1;
        else gr_db_count_changes(db, 1);
    }
    free(values);
    if (failed) gr_reply_oom(reply);
    else if (req.only_if_none_exist) gr_reply_integer(reply, 1);
    else gr_reply_ok(reply);
}

void gr_cmd_mget(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) {
    const gr_mget_view_t req = gr_mget_view(r);
    gr_reply_array_begin(reply, req.keys_count);
    for (uint32_t i = 0; i < req.keys_count; i++) {
        gr_ks_entry_t *entry = gr_db_lookup(db, req.keys[i]);
        if (entry && entry->type == GR_TYPE_STRING) gr_reply_bulk(reply, string_bytes(entry).data, string_bytes(entry).length);
        else gr_reply_nil(reply);
    }
}

/* Sets key to text, keeping its expiry (INCR, APPEND and friends do). */
static int store_text_keep_ttl(gr_server_t *db, gr_ks_entry_t *entry, gr_bytes_t key, const char *text, size_t length) {
    if (entry) {
        gr_string_t *s = gr_string_resize(entry->value, length);
        if (!s) return -1;
        memcpy(s->data, text, length);
        entry->value = s;
        gr_watch_touch_current(db, key);
        return 0;
    }
    gr_string_t *s = gr_string_new((const uint8_t *)text, length);
    if (!s) return -1;
    return store(db, NULL, key, s, 0);
}

void gr_cmd_incrby(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) {
    const gr_incrby_view_t req = gr_incrby_view(r);
    int64_t delta = req.delta;
    if (req.is_decr_by) {
        if (delta == INT64_MIN) {
            gr_reply_error_text(reply, GR_ERR_OUT_OF_RANGE, "ERR decrement would overflow");
            return;
        }
        delta = -delta;
    }
    gr_ks_entry_t *entry = gr_db_find_live(db, req.key);
    if (entry && entry->type != GR_TYPE_STRING) { gr_reply_wrongtype(reply); return; }
    int64_t value = 0;
    if (entry) {
        gr_bytes_t old = string_bytes(entry);
        if (gr_bytes_to_int64(old.data, old.length, &value) != 0) {
            gr_reply_error_text(reply, GR_ERR_NOT_INTEGER, "ERR value is not an integer or out of range");
            return;
        }
    }
    if ((delta < 0 && value < 0 && delta < INT64_MIN - value) || (delta > 0 && value > 0 && delta > INT64_MAX - value)) {
        gr_reply_error_text(reply, GR_ERR_OUT_OF_RANGE, "ERR increment or decrement would overflow");
        return;
    }
    value += delta;
    char text[24];
    size_t length = gr_int64_to_text(value, text);
    if (store_text_keep_ttl(db, entry, req.key, text, length) != 0) { gr_reply_oom(reply); return; }
    gr_db_count_changes(db, 1);
    gr_reply_integer(reply, value);
}

void gr_cmd_incrbyfloat(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) {
    const gr_incrbyfloat_view_t req = gr_incrbyfloat_view(r);
    long double increment, value = 0;
    gr_ks_entry_t *entry = gr_db_find_live(db, req.key);   /* Redis: type, then value, then increment */
    if (entry && entry->type != GR_TYPE_STRING) { gr_reply_wrongtype(reply); return; }
    if ((entry && gr_text_to_long_double(string_bytes(entry).data, string_bytes(entry).length, &value) != 0) ||
        gr_text_to_long_double(req.increment.data, req.increment.length, &increment) != 0) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR value is not a valid float");
        return;
    }
    value += increment;
    if (isnan(value) || isinf(value)) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR increment would produce NaN or Infinity");
        return;
    }
    char text[GR_MAX_LONG_DOUBLE_CHARS];
    size_t length = gr_long_double_to_text(value, text, sizeof text);
    if (length == 0) { gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR increment would produce NaN or Infinity"); return; }
    if (store_text_keep_ttl(db, entry, req.key, text, length) != 0) { gr_reply_oom(reply); return; }
    gr_db_count_changes(db, 1);
    gr_reply_bulk(reply, (const uint8_t *)text, length);
}

void gr_cmd_append(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) {
    const gr_append_view_t req = gr_append_view(r);
    gr_ks_entry_t *entry = gr_db_find_live(db, req.key);
    if (entry && entry->type != GR_TYPE_STRING) { gr_reply_wrongtype(reply); return; }
    size_t old_length = entry ? ((gr_string_t *)entry->value)->length : 0;
    if ((uint64_t)old_length + req.value.length > GR_STRING_MAX_LENGTH) { reply_too_long(reply); return; }
    if (!entry) {
        gr_string_t *s = gr_string_new(req.value.data, req.value.length);
        if (!s || store(db, NULL, req.key, s, 0) != 0) { gr_reply_oom(reply); return; }
    } else {
        gr_string_t *s = gr_string_resize(entry->value, old_length + req.value.length);
        if (!s) { gr_reply_oom(reply); return; }
        if (req.value.length) memcpy(s->data + old_length, req.value.data, req.value.length);
        entry->value = s;
        gr_watch_touch_current(db, req.key);
    }
    gr_db_count_changes(db, 1);
    gr_reply_integer(reply, (int64_t)(old_length + req.value.length));
}

void gr_cmd_strlen(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) {
    const gr_strlen_view_t req = gr_strlen_view(r);
    gr_ks_entry_t *entry = gr_db_lookup(db, req.key);
    if (entry && entry->type != GR_TYPE_STRING) { gr_reply_wrongtype(reply); return; }
    gr_reply_integer(reply, entry ? ((gr_string_t *)entry->value)->length : 0);
}

void gr_cmd_getrange(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) {
    const gr_getrange_view_t req = gr_getrange_view(r);
    gr_ks_entry_t *entry = gr_db_lookup(db, req.key);
    if (entry && entry->type != GR_TYPE_STRING) { gr_reply_wrongtype(reply); return; }
    if (!entry) { gr_reply_bulk(reply, (const uint8_t *)"", 0); return; }
    gr_bytes_t value = string_bytes(entry);
    int64_t length = value.length, start = req.start, end = req.end;
    if (start < 0 && end < 0 && start > end) { gr_reply_bulk(reply, (const uint8_t *)"", 0); return; }
    if (start < 0) start += length;
    if (end < 0) end += length;
    if (start < 0) start = 0;
    if (end < 0) end = 0;
    if (end >= length) end = length - 1;
    if (length == 0 || start > end) { gr_reply_bulk(reply, (const uint8_t *)"", 0); return; }
    gr_reply_bulk(reply, value.data + start, (size_t)(end - start + 1));
}

void gr_cmd_setrange(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) {
    const gr_setrange_view_t req = gr_setrange_view(r);
    int64_t offset = req.byte_offset;
    if (offset < 0) { gr_reply_error_text(reply, GR_ERR_OUT_OF_RANGE, "ERR offset is out of range"); return; }
    gr_ks_entry_t *entry = gr_db_find_live(db, req.key);
    if (entry && entry->type != GR_TYPE_STRING) { gr_reply_wrongtype(reply); return; }
    size_t old_length = entry ? ((gr_string_t *)entry->value)->length : 0;
    if (req.value.length == 0) { gr_reply_integer(reply, (int64_t)old_length); return; }
    if ((uint64_t)offset + req.value.length > GR_STRING_MAX_LENGTH) { reply_too_long(reply); return; }
    size_t needed = (size_t)offset + req.value.length;
    size_t new_length = needed > old_length ? needed : old_length;
    gr_string_t *s;
    if (!entry) {
        s = gr_string_new(NULL, 0);
        gr_string_t *grown = s ? gr_string_resize(s, new_length) : NULL;
        if (!grown) { gr_string_free(s); gr_reply_oom(reply); return; }
        s = grown;
        memcpy(s->data + offset, req.value.data, req.value.length);
        if (store(db, NULL, req.key, s, 0) != 0) { gr_reply_oom(reply); return; }
    } else {
        s = gr_string_resize(entry->value, new_length);
        if (!s) { gr_reply_oom(reply); return; }
        memcpy(s->data + offset, req.value.data, req.value.length);
        entry->value = s;
        gr_watch_touch_current(db, req.key);
    }
    gr_db_count_changes(db, 1);
    gr_reply_integer(reply, (int64_t)new_length);
}

/* ---- LCS ---- */

/* One IDX match: the ranges in the first and the second string (inclusive). */
typedef struct lcs_match {
    uint32_t a_start, a_end, b_start, b_end;
} lcs_match_t;

/* LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN]: Redis's dynamic programme
 * (a (|a|+1) x (|b|+1) table of uint32 lengths, refused past proto-max-bulk-len bytes), then
 * one walk back from the end that builds the subsequence and, for IDX, the matching ranges
 * from the last to the first. A missing key is an empty string. */
void gr_cmd_lcs(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                gr_reply_t *reply) {
    gr_bytes_t key_a = {argv[1], (uint32_t)argv_length[1]}, key_b = {argv[2], (uint32_t)argv_length[2]};
    gr_ks_entry_t *entry_a = gr_db_lookup(db, key_a);
    gr_ks_entry_t *entry_b = gr_db_lookup(db, key_b);
    if ((entry_a && entry_a->type != GR_TYPE_STRING) || (entry_b && entry_b->type != GR_TYPE_STRING)) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR The specified keys must contain string values");
        return;
    }
    gr_bytes_t a = entry_a ? string_bytes(entry_a) : (gr_bytes_t){(const uint8_t *)"", 0};
    gr_bytes_t b = entry_b ? string_bytes(entry_b) : (gr_bytes_t){(const uint8_t *)"", 0};
    int want_length = 0, want_index = 0, with_match_length = 0;
    int64_t min_match_length = 0;
    for (size_t j = 3; j < argc; j++) {
        size_t more = argc - 1 - j;
        if (gr_word_is(argv[j], argv_length[j], "idx")) {
            want_index = 1;
        } else if (gr_word_is(argv[j], argv_length[j], "len")) {
            want_length = 1;
        } else if (gr_word_is(argv[j], argv_length[j], "withmatchlen")) {
            with_match_length = 1;
        } else if (gr_word_is(argv[j], argv_length[j], "minmatchlen") && more) {
            if (gr_bytes_to_int64(argv[j + 1], argv_length[j + 1], &min_match_length) != 0) {
                gr_reply_error_text(reply, GR_ERR_NOT_INTEGER, "ERR value is not an integer or out of range");
                return;
            }
            if (min_match_length < 0) min_match_length = 0;
            j++;
        } else {
            gr_reply_error_text(reply, GR_ERR_SYNTAX, "ERR syntax error");
            return;
        }
    }
    if (want_length && want_index) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR If you want both the length and indexes, please just use IDX.");
        return;
    }
    uint32_t a_length = a.length, b_length = b.length;
    uint64_t cells = ((uint64_t)a_length + 1) * ((uint64_t)b_length + 1);
    uint64_t table_bytes = cells * sizeof(uint32_t);
    if (table_bytes > (uint64_t)db->config.proto_max_bulk_len) {
        gr_reply_error_text(reply, GR_ERR_GENERIC,
                            "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
        return;
    }
    uint32_t *table = malloc((size_t)table_bytes);
    int compute_string = want_index || !want_length;
    uint8_t *result = compute_string ? malloc((size_t)(a_length < b_length ? a_length : b_length) + 1) : NULL;
    lcs_match_t *matches = NULL;
    if (!table || (compute_string && !result)) {
        free(table);
        free(result);
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR Insufficient memory, failed allocating transient memory for LCS");
        return;
    }
#define LCS_AT(i, j) table[(size_t)(j) + (size_t)(i) * ((size_t)b_length + 1)]
    for (uint32_t i = 0; i <= a_length; i++) {
        for (uint32_t j = 0; j <= b_length; j++) {
            if (i == 0 || j == 0) LCS_AT(i, j) = 0;
            else if (a.data[i - 1] == b.data[j - 1]) LCS_AT(i, j) = LCS_AT(i - 1, j - 1) + 1;
            else LCS_AT(i, j) = LCS_AT(i - 1, j) > LCS_AT(i, j - 1) ? LCS_AT(i - 1, j) : LCS_AT(i, j - 1);
        }
    }
    uint32_t total = LCS_AT(a_length, b_length), at = total;
    size_t match_count = 0, match_capacity = 0;
    /* a_start == a_length: no range in progress. */
    uint32_t a_start = a_length, a_end = 0, b_start = 0, b_end = 0;
    uint32_t i = a_length, j = b_length;
    int failed = 0;
    while (compute_string && i > 0 && j > 0) {
        int emit = 0;
        if (a.data[i - 1] == b.data[j - 1]) {
            result[at - 1] = a.data[i - 1];
            if (a_start == a_length) {
                a_start = a_end = i - 1;
                b_start = b_end = j - 1;
            } else if (a_start == i && b_start == j) {   /* contiguous: extend the range backward */
                a_start--;
                b_start--;
            } else {
                emit = 1;
            }
            if (a_start == 0 || b_start == 0) emit = 1;   /* matched a first byte: the walk ends */
            at--;
            i--;
            j--;
        } else {
            if (LCS_AT(i - 1, j) > LCS_AT(i, j - 1)) i--;
            else j--;
            if (a_start != a_length) emit = 1;
        }
        if (emit) {
            uint32_t match_length = a_end - a_start + 1;
            if (want_index && (min_match_length == 0 || match_length >= (uint64_t)min_match_length)) {
                if (match_count == match_capacity) {
                    size_t capacity = match_capacity ? match_capacity * 2 : 16;
                    lcs_match_t *grown = realloc(matches, capacity * sizeof *grown);
                    if (!grown) { failed = 1; break; }
                    matches = grown;
                    match_capacity = capacity;
                }
                matches[match_count++] = (lcs_match_t){a_start, a_end, b_start, b_end};
            }
            a_start = a_length;
        }
    }
#undef LCS_AT
    if (failed) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR Insufficient memory, failed allocating transient memory for LCS");
    } else if (want_index) {
        gr_reply_map_begin(reply, 2);
        gr_reply_bulk(reply, (const uint8_t *)"matches", 7);
        gr_reply_array_begin(reply, match_count);
        for (size_t m = 0; m < match_count; m++) {
            gr_reply_array_begin(reply, 2 + (size_t)with_match_length);
            gr_reply_array_begin(reply, 2);
            gr_reply_integer(reply, matches[m].a_start);
            gr_reply_integer(reply, matches[m].a_end);
            gr_reply_array_begin(reply, 2);
            gr_reply_integer(reply, matches[m].b_start);
            gr_reply_integer(reply, matches[m].b_end);
            if (with_match_length) gr_reply_integer(reply, (int64_t)matches[m].a_end - matches[m].a_start + 1);
        }
        gr_reply_bulk(reply, (const uint8_t *)"len", 3);
        gr_reply_integer(reply, total);
    } else if (want_length) {
        gr_reply_integer(reply, total);
    } else {
        gr_reply_bulk(reply, result, total);
    }
    free(matches);
    free(result);
    free(table);
}
