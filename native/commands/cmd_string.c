/* cmd_string.c — the string commands: SET (NX, XX, GET, EX, PX, EXAT, PXAT, KEEPTTL),
 * SETNX, SETEX, PSETEX, GET, GETDEL, GETEX, MSET, MSETNX, MGET, INCR, DECR, INCRBY,
 * DECRBY, INCRBYFLOAT, APPEND, STRLEN, GETRANGE, SETRANGE.
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
#include "exec/db.h"
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
static int expire_time(const gr_db_t *db, int mode, int64_t value, int64_t *at) {
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
static int store(gr_db_t *db, gr_ks_entry_t *entry, gr_bytes_t key, gr_string_t *s, int keep_ttl) {
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

void gr_cmd_set(gr_db_t *db, const gr_request_t *r, gr_reply_t *reply) {
    static const char *names[] = {"set", "setnx", "setex", "psetex"};
    int variant = (int)r->count, condition = r->end, mode = r->to_end, get = r->flag;
    if (variant == VARIANT_SETNX) { condition = CONDITION_NX; mode = MODE_NONE; get = 0; }
    if (variant == VARIANT_SETEX) mode = MODE_EX;
    if (variant == VARIANT_PSETEX) mode = MODE_PX;
    if (mode == MODE_PERSIST) { gr_reply_error_text(reply, GR_ERR_SYNTAX, "ERR syntax error"); return; }
    int64_t expire_at = -1;
    if (mode >= MODE_EX && mode <= MODE_PXAT && expire_time(db, mode, r->index, &expire_at) != 0) {
        reply_invalid_expire(reply, names[variant]);
        return;
    }
    if (r->arg1.length > GR_STRING_MAX_LENGTH) { reply_too_long(reply); return; }
    gr_ks_entry_t *entry = get ? gr_db_lookup(db, r->key) : gr_db_find_live(db, r->key);
    if (get && entry && entry->type != GR_TYPE_STRING) { gr_reply_wrongtype(reply); return; }
    int blocked = (condition == CONDITION_NX && entry) || (condition == CONDITION_XX && !entry);
    if (blocked) {
        if (variant == VARIANT_SETNX) gr_reply_integer(reply, 0);
        else if (get && entry) gr_reply_bulk(reply, string_bytes(entry).data, string_bytes(entry).length);
        else gr_reply_nil(reply);
        return;
    }
    gr_string_t *s = gr_string_new(r->arg1.data, r->arg1.length);
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
        if (!gr_ks_add(db->keyspace, r->key.data, r->key.length, GR_TYPE_STRING, s)) {
            gr_string_free(s);
            gr_reply_oom(reply);
            return;
        }
        if (variant == VARIANT_SETNX) gr_reply_integer(reply, 1);
        else if (get) gr_reply_nil(reply);
        else gr_reply_ok(reply);
    }
    if (expire_at >= 0) {
        gr_ks_entry_t *stored = gr_ks_find(db->keyspace, r->key.data, r->key.length);
        /* An EXAT/PXAT in the past is stored as it is (Redis 7.0 does the same): the key is
         * gone for every reader, and DBSIZE counts it until expiry reclaims it. */
        gr_ks_set_expire(db->keyspace, stored, expire_at);
    }
    gr_watch_touch_current(db, r->key);
    gr_db_count_changes(db, 1);
}

/* GET, GETDEL, GETEX: the entry if it is a string (NULL after replying nil or WRONGTYPE). */
static gr_ks_entry_t *readable_string(gr_db_t *db, gr_bytes_t key, gr_reply_t *reply) {
    gr_ks_entry_t *entry = gr_db_lookup(db, key);
    if (!entry) { gr_reply_nil(reply); return NULL; }
    if (entry->type != GR_TYPE_STRING) { gr_reply_wrongtype(reply); return NULL; }
    return entry;
}

void gr_cmd_get(gr_db_t *db, const gr_request_t *r, gr_reply_t *reply) {
    gr_ks_entry_t *entry = readable_string(db, r->key, reply);
    if (entry) gr_reply_bulk(reply, string_bytes(entry).data, string_bytes(entry).length);
}

void gr_cmd_getdel(gr_db_t *db, const gr_request_t *r, gr_reply_t *reply) {
    gr_ks_entry_t *entry = readable_string(db, r->key, reply);
    if (!entry) return;
    gr_reply_bulk(reply, string_bytes(entry).data, string_bytes(entry).length);
    gr_ks_delete(db->keyspace, r->key.data, r->key.length);
    gr_watch_touch_current(db, r->key);
    gr_db_count_changes(db, 1);
}

void gr_cmd_getex(gr_db_t *db, const gr_request_t *r, gr_reply_t *reply) {
    int mode = r->to_end;
    if (mode == MODE_KEEPTTL) { gr_reply_error_text(reply, GR_ERR_SYNTAX, "ERR syntax error"); return; }
    gr_ks_entry_t *entry = readable_string(db, r->key, reply);   /* Redis looks up before the expiry */
    if (!entry) return;
    int64_t expire_at = -1;
    if (mode >= MODE_EX && mode <= MODE_PXAT && expire_time(db, mode, r->index, &expire_at) != 0) {
        reply_invalid_expire(reply, "getex");
        return;
    }
    gr_reply_bulk(reply, string_bytes(entry).data, string_bytes(entry).length);
    int changed = mode != MODE_NONE && (mode != MODE_PERSIST || entry->expire_at_ms >= 0);
    if (mode == MODE_PERSIST) gr_ks_set_expire(db->keyspace, entry, -1);
    else if (expire_at >= 0 && expire_at <= db->now_ms) gr_ks_delete(db->keyspace, r->key.data, r->key.length);
    else if (expire_at >= 0) gr_ks_set_expire(db->keyspace, entry, expire_at);
    if (changed) {
        gr_watch_touch_current(db, r->key);
        gr_db_count_changes(db, 1);
    }
}

void gr_cmd_mset(gr_db_t *db, const gr_request_t *r, gr_reply_t *reply) {
    const char *name = r->flag ? "msetnx" : "mset";
    if (r->item_count == 0 || r->item_count % 2) { gr_reply_arity_error(reply, name); return; }
    uint32_t pairs = r->item_count / 2;
    if (r->flag) {
        for (uint32_t i = 0; i < pairs; i++)
            if (gr_db_find_live(db, r->items[2 * i])) { gr_reply_integer(reply, 0); return; }
    }
    for (uint32_t i = 0; i < pairs; i++)
        if (r->items[2 * i + 1].length > GR_STRING_MAX_LENGTH) { reply_too_long(reply); return; }
    /* Allocate every value first, so OOM changes nothing. */
    gr_string_t **values = malloc(pairs * sizeof *values);
    if (!values) { gr_reply_oom(reply); return; }
    for (uint32_t i = 0; i < pairs; i++) {
        values[i] = gr_string_new(r->items[2 * i + 1].data, r->items[2 * i + 1].length);
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
        gr_bytes_t key = r->items[2 * i];
        if (store(db, gr_db_find_live(db, key), key, values[i], 0) != 0) failed = 1;
        else gr_db_count_changes(db, 1);
    }
    free(values);
    if (failed) gr_reply_oom(reply);
    else if (r->flag) gr_reply_integer(reply, 1);
    else gr_reply_ok(reply);
}

void gr_cmd_mget(gr_db_t *db, const gr_request_t *r, gr_reply_t *reply) {
    gr_reply_array_begin(reply, r->item_count);
    for (uint32_t i = 0; i < r->item_count; i++) {
        gr_ks_entry_t *entry = gr_db_lookup(db, r->items[i]);
        if (entry && entry->type == GR_TYPE_STRING) gr_reply_bulk(reply, string_bytes(entry).data, string_bytes(entry).length);
        else gr_reply_nil(reply);
    }
}

/* Sets key to text, keeping its expiry (INCR, APPEND and friends do). */
static int store_text_keep_ttl(gr_db_t *db, gr_ks_entry_t *entry, gr_bytes_t key, const char *text, size_t length) {
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

void gr_cmd_incrby(gr_db_t *db, const gr_request_t *r, gr_reply_t *reply) {
    int64_t delta = r->index;
    if (r->flag) {
        if (delta == INT64_MIN) {
            gr_reply_error_text(reply, GR_ERR_OUT_OF_RANGE, "ERR decrement would overflow");
            return;
        }
        delta = -delta;
    }
    gr_ks_entry_t *entry = gr_db_find_live(db, r->key);
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
    if (store_text_keep_ttl(db, entry, r->key, text, length) != 0) { gr_reply_oom(reply); return; }
    gr_db_count_changes(db, 1);
    gr_reply_integer(reply, value);
}

#define MAX_LONG_DOUBLE_CHARS (5 * 1024)

/* Redis's string2ld: the whole text is one long double, no leading space, not NaN. */
static int parse_long_double(const uint8_t *data, size_t length, long double *out) {
    char buffer[MAX_LONG_DOUBLE_CHARS + 1];
    if (length == 0 || length >= sizeof buffer) return -1;
    memcpy(buffer, data, length);
    buffer[length] = '\0';
    if (buffer[0] == ' ' || (buffer[0] >= '\t' && buffer[0] <= '\r')) return -1;
    char *end;
    errno = 0;
    long double value = strtold(buffer, &end);
    if ((size_t)(end - buffer) != length || isnan(value)) return -1;
    if (errno == ERANGE && (value == HUGE_VALL || value == -HUGE_VALL || fpclassify(value) == FP_ZERO)) return -1;
    *out = value;
    return 0;
}

/* Redis's ld2string in LD_STR_HUMAN mode: %.17Lf without trailing zeros. */
static size_t format_long_double(long double value, char *out, size_t size) {
    int n = snprintf(out, size, "%.17Lf", value);
    if (n < 0 || (size_t)n >= size) return 0;
    size_t length = (size_t)n;
    if (memchr(out, '.', length)) {
        while (length && out[length - 1] == '0') length--;
        if (length && out[length - 1] == '.') length--;
    }
    if (length == 2 && out[0] == '-' && out[1] == '0') { out[0] = '0'; length = 1; }
    return length;
}

void gr_cmd_incrbyfloat(gr_db_t *db, const gr_request_t *r, gr_reply_t *reply) {
    long double increment, value = 0;
    gr_ks_entry_t *entry = gr_db_find_live(db, r->key);   /* Redis: type, then value, then increment */
    if (entry && entry->type != GR_TYPE_STRING) { gr_reply_wrongtype(reply); return; }
    if ((entry && parse_long_double(string_bytes(entry).data, string_bytes(entry).length, &value) != 0) ||
        parse_long_double(r->arg1.data, r->arg1.length, &increment) != 0) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR value is not a valid float");
        return;
    }
    value += increment;
    if (isnan(value) || isinf(value)) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR increment would produce NaN or Infinity");
        return;
    }
    char text[MAX_LONG_DOUBLE_CHARS];
    size_t length = format_long_double(value, text, sizeof text);
    if (length == 0) { gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR increment would produce NaN or Infinity"); return; }
    if (store_text_keep_ttl(db, entry, r->key, text, length) != 0) { gr_reply_oom(reply); return; }
    gr_db_count_changes(db, 1);
    gr_reply_bulk(reply, (const uint8_t *)text, length);
}

void gr_cmd_append(gr_db_t *db, const gr_request_t *r, gr_reply_t *reply) {
    gr_ks_entry_t *entry = gr_db_find_live(db, r->key);
    if (entry && entry->type != GR_TYPE_STRING) { gr_reply_wrongtype(reply); return; }
    size_t old_length = entry ? ((gr_string_t *)entry->value)->length : 0;
    if ((uint64_t)old_length + r->arg1.length > GR_STRING_MAX_LENGTH) { reply_too_long(reply); return; }
    if (!entry) {
        gr_string_t *s = gr_string_new(r->arg1.data, r->arg1.length);
        if (!s || store(db, NULL, r->key, s, 0) != 0) { gr_reply_oom(reply); return; }
    } else {
        gr_string_t *s = gr_string_resize(entry->value, old_length + r->arg1.length);
        if (!s) { gr_reply_oom(reply); return; }
        if (r->arg1.length) memcpy(s->data + old_length, r->arg1.data, r->arg1.length);
        entry->value = s;
        gr_watch_touch_current(db, r->key);
    }
    gr_db_count_changes(db, 1);
    gr_reply_integer(reply, (int64_t)(old_length + r->arg1.length));
}

void gr_cmd_strlen(gr_db_t *db, const gr_request_t *r, gr_reply_t *reply) {
    gr_ks_entry_t *entry = gr_db_lookup(db, r->key);
    if (entry && entry->type != GR_TYPE_STRING) { gr_reply_wrongtype(reply); return; }
    gr_reply_integer(reply, entry ? ((gr_string_t *)entry->value)->length : 0);
}

void gr_cmd_getrange(gr_db_t *db, const gr_request_t *r, gr_reply_t *reply) {
    gr_ks_entry_t *entry = gr_db_lookup(db, r->key);
    if (entry && entry->type != GR_TYPE_STRING) { gr_reply_wrongtype(reply); return; }
    if (!entry) { gr_reply_bulk(reply, (const uint8_t *)"", 0); return; }
    gr_bytes_t value = string_bytes(entry);
    int64_t length = value.length, start = r->index, end = r->index2;
    if (start < 0 && end < 0 && start > end) { gr_reply_bulk(reply, (const uint8_t *)"", 0); return; }
    if (start < 0) start += length;
    if (end < 0) end += length;
    if (start < 0) start = 0;
    if (end < 0) end = 0;
    if (end >= length) end = length - 1;
    if (length == 0 || start > end) { gr_reply_bulk(reply, (const uint8_t *)"", 0); return; }
    gr_reply_bulk(reply, value.data + start, (size_t)(end - start + 1));
}

void gr_cmd_setrange(gr_db_t *db, const gr_request_t *r, gr_reply_t *reply) {
    int64_t offset = r->index;
    if (offset < 0) { gr_reply_error_text(reply, GR_ERR_OUT_OF_RANGE, "ERR offset is out of range"); return; }
    gr_ks_entry_t *entry = gr_db_find_live(db, r->key);
    if (entry && entry->type != GR_TYPE_STRING) { gr_reply_wrongtype(reply); return; }
    size_t old_length = entry ? ((gr_string_t *)entry->value)->length : 0;
    if (r->arg1.length == 0) { gr_reply_integer(reply, (int64_t)old_length); return; }
    if ((uint64_t)offset + r->arg1.length > GR_STRING_MAX_LENGTH) { reply_too_long(reply); return; }
    size_t needed = (size_t)offset + r->arg1.length;
    size_t new_length = needed > old_length ? needed : old_length;
    gr_string_t *s;
    if (!entry) {
        s = gr_string_new(NULL, 0);
        gr_string_t *grown = s ? gr_string_resize(s, new_length) : NULL;
        if (!grown) { gr_string_free(s); gr_reply_oom(reply); return; }
        s = grown;
        memcpy(s->data + offset, r->arg1.data, r->arg1.length);
        if (store(db, NULL, r->key, s, 0) != 0) { gr_reply_oom(reply); return; }
    } else {
        s = gr_string_resize(entry->value, new_length);
        if (!s) { gr_reply_oom(reply); return; }
        memcpy(s->data + offset, r->arg1.data, r->arg1.length);
        entry->value = s;
        gr_watch_touch_current(db, r->key);
    }
    gr_db_count_changes(db, 1);
    gr_reply_integer(reply, (int64_t)new_length);
}
