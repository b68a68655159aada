/* cmd_array.c — the ARRAY command layer: Redis 8.8's 18 AR* commands, their replies and error
 * texts, over the engine-neutral value of engines/array/array.h (whose header states the
 * semantics). Every handler is an argv handler (over the ring a CommandRequest), validates
 * every argument first, then mutates, then replies. The rows are commands/array.def.
 *
 * The same handlers serve GOBLIN.<ENGINE>.<ARCMD> rows (array_rt.def): the engine
 * named between the dots creates new arrays and must hold existing ones (another engine's
 * array is a WRONGTYPE error naming both), as GOBLIN.PMA./GOBLIN.SEG. do for lists.
 *
 * ARGREP and AROP, the two commands that walk a range's values, are in cmd_array_query.c; what
 * the two files share is cmd_array_shared.h (its helpers defined here).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "commands/cmd_array_shared.h"
#include "core/number.h"
#include "engines/array/array.h"
#include "exec/blocking.h"
#include "exec/db.h"
#include "exec/lookup.h"
#include "exec/transaction.h"

/* The command's name as typed, lowercased (arity errors name it as Redis does). */
static void command_name(const array_call_t *c, char *out, size_t size) {
    size_t n = 0;
    for (; n < c->argv_length[0] && n + 1 < size; n++) out[n] = (char)tolower(c->argv[0][n]);
    out[n] = '\0';
}

void gr_acmd_reply_arity(const array_call_t *c) {
    char name[64];
    command_name(c, name, sizeof name);
    gr_reply_arity_error(c->reply, name);
}

/* Redis's string2ull: a whole non-negative decimal number up to 2^64-1. */
static int parse_u64(const uint8_t *data, size_t length, uint64_t *out) {
    int64_t signed_value;
    if (gr_bytes_to_int64(data, length, &signed_value) == 0) {
        if (signed_value < 0) return -1;
        *out = (uint64_t)signed_value;
        return 0;
    }
    if (length == 0 || length > 20) return -1;
    uint64_t value = 0;
    for (size_t i = 0; i < length; i++) {
        if (data[i] < '0' || data[i] > '9') return -1;
        uint64_t digit = (uint64_t)(data[i] - '0');
        if (value > (UINT64_MAX - digit) / 10) return -1;
        value = value * 10 + digit;
    }
    *out = value;
    return 0;
}

/* An index argument, 0 .. 2^64-2 (allow_max: 2^64-1 too, ARSEEK's terminal cursor). */
static int parse_index(const array_call_t *c, size_t i, uint64_t *index, int allow_max) {
    if (parse_u64(c->argv[i], c->argv_length[i], index) != 0) return -1;
    if (*index == UINT64_MAX && !allow_max) return -1;
    return 0;
}

int gr_acmd_parse_index_or_reply(const array_call_t *c, size_t i, uint64_t *index) {
    if (parse_index(c, i, index, 0) == 0) return 0;
    reply_error(c->reply, "ERR invalid array index");
    return -1;
}

int gr_acmd_parse_int64_or_reply(const array_call_t *c, size_t i, int64_t *value, const char *error) {
    if (gr_bytes_to_int64(c->argv[i], c->argv_length[i], value) == 0) return 0;
    if (error) reply_error(c->reply, error); else reply_not_integer(c->reply);
    return -1;
}

array_call_t gr_acmd_call_of(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                            gr_reply_t *reply) {
    array_call_t c = {.db = db, .argc = argc, .argv = argv, .argv_length = argv_length, .reply = reply};
    c.key.data = argv[1];
    c.key.length = (uint32_t)argv_length[1];
    /* "goblin.<engine>.<command>": the engine between the dots */
    if (argv_length[0] > 7 && strncasecmp((const char *)argv[0], "goblin.", 7) == 0) {
        const uint8_t *name = argv[0] + 7, *dot = memchr(name, '.', argv_length[0] - 7);
        if (dot) c.forced = gr_array_engine_named((const char *)name, (size_t)(dot - name));
    }
    return c;
}

static void reply_wrong_engine(const array_call_t *c, const gr_array_t *array) {
    char name[64], text[200];
    command_name(c, name, sizeof name);
    for (char *p = name; *p; p++) *p = (char)toupper((unsigned char)*p);
    snprintf(text, sizeof text, "WRONGTYPE Operation against an array held by the %s engine (%s wants %s)",
             array->engine->name, name, c->forced->name);
    gr_reply_error_text(c->reply, GR_ERR_WRONGTYPE, text);
}

/* Find the key as an array: 1 found (*array set), 0 absent, -1 wrong type (replied).
 * for_write: Redis's lookupKeyWrite (no hit/miss counted). */
int gr_acmd_find_array_or_reply(const array_call_t *c, int for_write, gr_array_t **array) {
    void *value;
    int found = gr_db_find_typed(c->db, c->key, GR_TYPE_ARRAY, for_write, &value, c->reply);
    *array = NULL;
    if (found <= 0) return found;
    if (c->forced && ((gr_array_t *)value)->engine != c->forced) {   /* GOBLIN.<ENGINE>.AR* */
        reply_wrong_engine(c, value);
        return -1;
    }
    *array = value;
    return 1;
}


/* The key's array, created empty (on the forced or the server's engine) when absent: the
 * array, or NULL with WRONGTYPE or OOM replied. *created says it is new (delete it if the
 * command then fails, so no key is ever an empty array). */
static gr_array_t *array_for_write_or_reply(const array_call_t *c, int *created) {
    gr_array_t *array;
    *created = 0;
    int found = gr_acmd_find_array_or_reply(c, 1, &array);
    if (found < 0) return NULL;
    if (found) return array;
    uint8_t kind = c->forced ? c->forced->kind : c->db->array_engine;
    array = gr_array_new(kind);
    if (!array || !gr_db_add_key(c->db, c->key, GR_TYPE_ARRAY, array)) {
        gr_array_free(array);
        gr_reply_oom(c->reply);
        return NULL;
    }
    *created = 1;
    return array;
}

/* After a write: WATCH, the dirty counter, an emptied key deleted. */
static void after_write(const array_call_t *c, gr_array_t *array, int created, int64_t changes) {
    if (gr_array_count(array) == 0 && !gr_array_keeps_empty(array)) {
        gr_ks_delete(c->db->keyspace, c->key.data, c->key.length);
        if (created) return;   /* nothing was there, nothing is: no touch, no change */
    }
    gr_db_mark_changed(c->db, c->key, changes);
}

static void reply_set_failure(gr_reply_t *reply, int code) {
    if (code == GR_ARRAY_E_BOUND) reply_error(reply, "ERR array engine bound reached: the write passes the reserved index or value bytes");
    else gr_reply_oom(reply);
}

/* A command's writes, for gr_array_check_writes (a bounded engine refuses the whole command
 * before its first set) and then write_planned: a run from `first`, or ARMSET's index/value
 * pairs; write i's value is argv[value_arg + value_step * i]. */
typedef struct planned_writes {
    const array_call_t *c;
    uint64_t first;
    size_t value_arg, value_step;
} planned_writes_t;

static void run_write_at(void *context, size_t i, uint64_t *index, size_t *length) {
    const planned_writes_t *plan = context;
    *index = plan->first + i;
    *length = plan->c->argv_length[plan->value_arg + i];
}

static void pair_write_at(void *context, size_t i, uint64_t *index, size_t *length) {
    const planned_writes_t *plan = context;
    parse_index(plan->c, 2 + 2 * i, index, 0);
    *length = plan->c->argv_length[plan->value_arg + 2 * i];
}

/* Runs n planned writes in order, counting them in *written and the new slots in *added: 0, or
 * the engine's failure (negative) at the first write that fails. */
static int write_planned(planned_writes_t *plan, gr_array_t *array, size_t n, gr_array_write_at_t write_at,
                         int64_t *written, int64_t *added) {
    for (size_t i = 0; i < n; i++) {
        uint64_t index;
        size_t length;
        write_at(plan, i, &index, &length);
        int result = gr_array_set(array, index, plan->c->argv[plan->value_arg + plan->value_step * i], length);
        if (result < 0) return result;
        *added += result;
        (*written)++;
    }
    return 0;
}

static int writes_fit_or_reply(const array_call_t *c, gr_array_t *array, int created, size_t n,
                               gr_array_write_at_t write_at, planned_writes_t *plan) {
    if (gr_array_check_writes(array, n, write_at, plan) == 0) return 0;
    if (created) gr_ks_delete(c->db->keyspace, c->key.data, c->key.length);   /* nothing was there, nothing is */
    reply_set_failure(c->reply, GR_ARRAY_E_BOUND);
    return -1;
}

static void reply_value(gr_reply_t *reply, const gr_array_t *array, uint64_t index) {
    uint8_t scratch[GR_ARRAY_SCRATCH_BYTES];
    const uint8_t *data;
    size_t length;
    if (array && gr_array_get(array, index, &data, &length, scratch)) gr_reply_bulk(reply, data, length);
    else gr_reply_nil(reply);
}

/* ---- ARSET / ARMSET / ARGET / ARMGET ---- */

void gr_cmd_arset(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    CALL;
    uint64_t start;
    if (gr_acmd_parse_index_or_reply(&c, 2, &start) != 0) return;
    uint64_t values = argc - 3, last = start + values - 1;
    if (last < start || last == UINT64_MAX) {
        reply_error(reply, "ERR array index overflow");
        return;
    }
    int created;
    gr_array_t *array = array_for_write_or_reply(&c, &created);
    if (!array) return;
    planned_writes_t plan = {&c, start, 3, 1};
    if (writes_fit_or_reply(&c, array, created, values, run_write_at, &plan) != 0) return;
    int64_t added = 0, written = 0;
    int result = write_planned(&plan, array, values, run_write_at, &written, &added);
    after_write(&c, array, created, written);
    if (result < 0) reply_set_failure(reply, result);
    else gr_reply_integer(reply, added);
}

void gr_cmd_armset(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    CALL;
    if ((argc - 2) % 2 != 0) { gr_acmd_reply_arity(&c); return; }
    uint64_t index;
    for (size_t i = 2; i < argc; i += 2)
        if (gr_acmd_parse_index_or_reply(&c, i, &index) != 0) return;
    int created;
    gr_array_t *array = array_for_write_or_reply(&c, &created);
    if (!array) return;
    planned_writes_t plan = {&c, 0, 3, 2};
    if (writes_fit_or_reply(&c, array, created, (argc - 2) / 2, pair_write_at, &plan) != 0) return;
    int64_t added = 0, written = 0;
    int result = write_planned(&plan, array, (argc - 2) / 2, pair_write_at, &written, &added);
    after_write(&c, array, created, written);
    if (result < 0) reply_set_failure(reply, result);
    else gr_reply_integer(reply, added);
}

void gr_cmd_arget(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    CALL;
    (void)argc;
    gr_array_t *array;
    if (gr_acmd_find_array_or_reply(&c, 0, &array) < 0) return;
    uint64_t index;
    if (gr_acmd_parse_index_or_reply(&c, 2, &index) != 0) return;
    reply_value(reply, array, index);
}

void gr_cmd_armget(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    CALL;
    gr_array_t *array;
    if (gr_acmd_find_array_or_reply(&c, 0, &array) < 0) return;
    uint64_t index;
    for (size_t i = 2; i < argc; i++)
        if (gr_acmd_parse_index_or_reply(&c, i, &index) != 0) return;
    gr_reply_array_begin(reply, argc - 2);
    for (size_t i = 2; i < argc; i++) {
        parse_index(&c, i, &index, 0);
        reply_value(reply, array, index);
    }
}

/* ---- ARGETRANGE / ARLEN / ARCOUNT ---- */

void gr_cmd_argetrange(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    CALL;
    (void)argc;
    uint64_t start, end;
    if (gr_acmd_parse_index_or_reply(&c, 2, &start) != 0 || gr_acmd_parse_index_or_reply(&c, 3, &end) != 0) return;
    gr_array_t *array;
    if (gr_acmd_find_array_or_reply(&c, 0, &array) < 0) return;
    int reverse = start > end;
    uint64_t lo = reverse ? end : start, hi = reverse ? start : end;
    if (hi - lo >= GR_ARRAY_MAX_REPLY_ITEMS) {
        reply_error(reply, "ERR range exceeds maximum of 1000000 items");
        return;
    }
    uint64_t span = hi - lo + 1;
    gr_reply_array_begin(reply, span);
    uint8_t scratch[GR_ARRAY_SCRATCH_BYTES];
    const uint8_t *data;
    size_t length;
    /* walk the set slots, filling the holes between them with nils */
    uint64_t emitted = 0, at, next;
    if (!reverse) {
        at = lo;
        while (emitted < span) {
            if (!array || !gr_array_next_at_or_after(array, at, &next) || next > hi) next = hi + 1;
            for (; at < next && emitted < span; at++, emitted++) gr_reply_nil(reply);
            if (emitted == span) break;
            gr_array_get(array, next, &data, &length, scratch);
            gr_reply_bulk(reply, data, length);
            emitted++;
            at = next + 1;
        }
    } else {
        at = hi;   /* the next position to emit, walking down */
        while (emitted < span) {
            uint64_t prev;
            int have = array && gr_array_last_before(array, at + 1, &prev) && prev >= lo;
            uint64_t holes = have ? at - prev : span - emitted;
            for (uint64_t k = 0; k < holes; k++) gr_reply_nil(reply);
            emitted += holes;
            if (!have) break;
            gr_array_get(array, prev, &data, &length, scratch);
            gr_reply_bulk(reply, data, length);
            emitted++;
            if (prev == lo) break;
            at = prev - 1;
        }
    }
}

void gr_cmd_arlen(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    CALL;
    (void)argc;
    gr_array_t *array;
    if (gr_acmd_find_array_or_reply(&c, 0, &array) < 0) return;
    reply_unsigned(reply, array ? gr_array_length(array) : 0);
}

void gr_cmd_arcount(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    CALL;
    (void)argc;
    gr_array_t *array;
    if (gr_acmd_find_array_or_reply(&c, 0, &array) < 0) return;
    reply_unsigned(reply, array ? gr_array_count(array) : 0);
}

/* ---- ARDEL / ARDELRANGE ---- */

void gr_cmd_ardel(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    CALL;
    uint64_t index;
    for (size_t i = 2; i < argc; i++)
        if (gr_acmd_parse_index_or_reply(&c, i, &index) != 0) return;
    gr_array_t *array;
    int found = gr_acmd_find_array_or_reply(&c, 1, &array);
    if (found < 0) return;
    int64_t deleted = 0;
    for (size_t i = 2; found && i < argc; i++) {
        parse_index(&c, i, &index, 0);
        deleted += gr_array_delete(array, index);
    }
    if (deleted) after_write(&c, array, 0, deleted);
    gr_reply_integer(reply, deleted);
}

void gr_cmd_ardelrange(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    CALL;
    if ((argc - 2) % 2 != 0) { gr_acmd_reply_arity(&c); return; }
    uint64_t a, b;
    for (size_t i = 2; i < argc; i += 2)
        if (gr_acmd_parse_index_or_reply(&c, i, &a) != 0 || gr_acmd_parse_index_or_reply(&c, i + 1, &b) != 0) return;
    gr_array_t *array;
    int found = gr_acmd_find_array_or_reply(&c, 1, &array);
    if (found < 0) return;
    uint64_t deleted = 0;
    for (size_t i = 2; found && i < argc && gr_array_count(array); i += 2) {
        parse_index(&c, i, &a, 0);
        parse_index(&c, i + 1, &b, 0);
        deleted += gr_array_delete_range(array, a < b ? a : b, a < b ? b : a);
    }
    if (deleted) after_write(&c, array, 0, (int64_t)deleted);
    reply_unsigned(reply, deleted);
}

/* ---- ARSCAN ---- */

typedef struct scan_state {
    gr_reply_t *reply;
    uint64_t remaining;
} scan_state_t;

static int scan_count(void *context, uint64_t index, const uint8_t *data, size_t length) {
    (void)index, (void)data, (void)length;
    scan_state_t *s = context;
    return --s->remaining == 0;
}

static int scan_emit(void *context, uint64_t index, const uint8_t *data, size_t length) {
    scan_state_t *s = context;
    gr_reply_array_begin(s->reply, 2);
    reply_unsigned(s->reply, index);
    gr_reply_bulk(s->reply, data, length);
    return --s->remaining == 0;
}

void gr_cmd_arscan(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    CALL;
    uint64_t start, end, limit = UINT64_MAX;
    if (gr_acmd_parse_index_or_reply(&c, 2, &start) != 0 || gr_acmd_parse_index_or_reply(&c, 3, &end) != 0) return;
    if (argc == 6) {
        if (!arg_is(&c, 4, "limit")) { reply_syntax(reply); return; }
        int64_t n;
        if (gr_acmd_parse_int64_or_reply(&c, 5, &n, NULL) != 0) return;
        if (n <= 0) { reply_error(reply, "ERR LIMIT must be positive"); return; }
        limit = (uint64_t)n;
    } else if (argc != 4) {
        gr_acmd_reply_arity(&c);
        return;
    }
    gr_array_t *array;
    if (gr_acmd_find_array_or_reply(&c, 0, &array) < 0) return;
    if (!array) { gr_reply_array_begin(reply, 0); return; }
    int reverse = start > end;
    uint64_t lo = reverse ? end : start, hi = reverse ? start : end;
    scan_state_t count = {reply, limit};
    uint64_t n = gr_array_visit(array, lo, hi, reverse, scan_count, &count);
    gr_reply_array_begin(reply, n);
    scan_state_t emit = {reply, n};
    if (n) gr_array_visit(array, lo, hi, reverse, scan_emit, &emit);
}

/* ---- ARINSERT / ARRING / ARSEEK / ARNEXT / ARLASTITEMS ---- */

void gr_cmd_arinsert(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    CALL;
    int created;
    gr_array_t *array = array_for_write_or_reply(&c, &created);
    if (!array) return;
    uint64_t values = argc - 2, first;
    if (array->cursor == GR_ARRAY_CURSOR_NONE) first = 0;
    else if (array->cursor >= UINT64_MAX - 1) goto overflow;
    else first = array->cursor + 1;
    uint64_t last = first + values - 1;
    if (last < first || last == UINT64_MAX) goto overflow;
    planned_writes_t plan = {&c, first, 2, 1};
    if (writes_fit_or_reply(&c, array, created, values, run_write_at, &plan) != 0) return;
    int64_t written = 0, added = 0;
    int result = write_planned(&plan, array, values, run_write_at, &written, &added);
    if (result < 0) {
        if (written) array->cursor = first + (uint64_t)written - 1;
        after_write(&c, array, created, written);
        reply_set_failure(reply, result);
        return;
    }
    array->cursor = last;
    after_write(&c, array, created, written);
    reply_unsigned(reply, last);
    return;
overflow:
    if (created) gr_ks_delete(db->keyspace, c.key.data, c.key.length);
    reply_error(reply, "ERR insert index overflow");
}

/* ARRING's re-pack: the newest contiguous run of up to keep set slots, walking back from the
 * cursor (or the tail) within [0, span), rewritten as indexes 0.. oldest first on a fresh
 * value of the same engine. The new value, or NULL (OOM). */
static gr_array_t *ring_repack(const gr_array_t *array, uint64_t span, uint64_t keep) {
    gr_array_t *fresh = gr_array_new(array->engine->kind);
    if (!fresh) return NULL;
    uint8_t scratch[GR_ARRAY_SCRATCH_BYTES];
    const uint8_t *data;
    size_t length;
    uint64_t anchor = array->cursor == GR_ARRAY_CURSOR_NONE ? span - 1 : array->cursor % span;
    uint64_t kept = 0, at = anchor;
    while (kept < keep && gr_array_get(array, at, &data, &length, scratch)) {
        kept++;
        at = at == 0 ? span - 1 : at - 1;
    }
    at = at + 1 == span ? 0 : at + 1;
    for (uint64_t i = 0; i < kept; i++) {
        gr_array_get(array, at, &data, &length, scratch);
        if (gr_array_set(fresh, i, data, length) < 0) {
            gr_array_free(fresh);
            return NULL;
        }
        at = at + 1 == span ? 0 : at + 1;
    }
    if (kept) fresh->cursor = kept - 1;
    return fresh;
}

void gr_cmd_arring(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    CALL;
    int64_t size;
    if (gr_acmd_parse_int64_or_reply(&c, 2, &size, "ERR invalid size") != 0) return;
    if (size <= 0) { reply_error(reply, "ERR size must be positive"); return; }
    uint64_t ring = (uint64_t)size;
    int created;
    gr_array_t *array = array_for_write_or_reply(&c, &created);
    if (!array) return;
    uint64_t span = gr_array_length(array), keep = 0;
    int rework = 0;
    if (span) {
        if (ring < span) { keep = ring; rework = 1; }
        else if (ring > span && array->cursor != GR_ARRAY_CURSOR_NONE && array->cursor + 1 < span) { keep = span; rework = 1; }
    }
    if (rework) {
        gr_array_t *fresh = ring_repack(array, span, keep);
        if (!fresh) { gr_reply_oom(reply); return; }
        /* swap the engine values, keep the keyspace's pointer */
        gr_array_t old = *array;
        *array = *fresh;
        *fresh = old;
        gr_array_free(fresh);
    }
    uint64_t cursor = 0;
    int64_t written = 0;
    for (size_t i = 3; i < argc; i++) {
        cursor = array->cursor == GR_ARRAY_CURSOR_NONE ? 0 : array->cursor + 1;
        if (cursor >= ring) cursor %= ring;
        int result = gr_array_set(array, cursor, argv[i], argv_length[i]);
        if (result < 0) {
            after_write(&c, array, created, written);
            reply_set_failure(reply, result);
            return;
        }
        array->cursor = cursor;
        written++;
    }
    after_write(&c, array, created, written);   /* the values written, as Redis counts (a repack is not counted) */
    reply_unsigned(reply, cursor);
}

void gr_cmd_arseek(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    CALL;
    (void)argc;
    uint64_t index;
    if (parse_index(&c, 2, &index, 1) != 0) { reply_error(reply, "ERR invalid array index"); return; }
    gr_array_t *array;
    int found = gr_acmd_find_array_or_reply(&c, 1, &array);
    if (found < 0) return;
    if (!found) { gr_reply_integer(reply, 0); return; }
    array->cursor = index == 0 ? GR_ARRAY_CURSOR_NONE : index - 1;
    gr_watch_touch_current(db, c.key);
    gr_db_count_changes(db, 1);
    gr_reply_integer(reply, 1);
}

void gr_cmd_arnext(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    CALL;
    (void)argc;
    gr_array_t *array;
    int found = gr_acmd_find_array_or_reply(&c, 0, &array);
    if (found < 0) return;
    if (!found || array->cursor == GR_ARRAY_CURSOR_NONE) gr_reply_integer(reply, 0);
    else if (array->cursor == UINT64_MAX - 1) gr_reply_nil(reply);
    else reply_unsigned(reply, array->cursor + 1);
}

void gr_cmd_arlastitems(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    CALL;
    int64_t count;
    if (gr_acmd_parse_int64_or_reply(&c, 2, &count, "ERR invalid COUNT") != 0) return;
    if (count <= 0) { gr_reply_array_begin(reply, 0); return; }
    int rev = 0;
    if (argc == 4) {
        if (!arg_is(&c, 3, "rev")) { reply_syntax(reply); return; }
        rev = 1;
    } else if (argc != 3) {
        gr_acmd_reply_arity(&c);
        return;
    }
    gr_array_t *array;
    int found = gr_acmd_find_array_or_reply(&c, 0, &array);
    if (found < 0) return;
    if (!found) { gr_reply_array_begin(reply, 0); return; }
    /* Redis's t_array.c clamps COUNT to the number of set slots (not to the span): the walk
     * may still return holes, but never more positions than values, so no reply cap is needed */
    uint64_t length = gr_array_length(array), set = gr_array_count(array);
    uint64_t n = (uint64_t)count > set ? set : (uint64_t)count;
    uint64_t anchor = array->cursor == GR_ARRAY_CURSOR_NONE || array->cursor >= length ? length - 1 : array->cursor;
    gr_reply_array_begin(reply, n);
    /* newest first walks back from the anchor (wrapping at 0 to the tail); oldest first is
     * the same walk reversed: it starts n-1 steps back */
    uint64_t at = anchor;
    if (!rev) {
        uint64_t back = n - 1;
        at = back <= anchor ? anchor - back : length - (back - anchor);
    }
    for (uint64_t i = 0; i < n; i++) {
        reply_value(reply, array, at);
        if (rev) at = at == 0 ? length - 1 : at - 1;
        else at = at + 1 == length ? 0 : at + 1;
    }
}

/* ---- ARINFO ---- */

void gr_cmd_arinfo(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    CALL;
    int full = 0;
    if (argc > 2) {
        if (argc == 3 && arg_is(&c, 2, "full")) full = 1;
        else { reply_syntax(reply); return; }
    }
    gr_array_t *array;
    int found = gr_acmd_find_array_or_reply(&c, 0, &array);
    if (found < 0) return;
    if (!found) { gr_reply_error_text(reply, GR_ERR_NO_SUCH_KEY, "ERR no such key"); return; }
    gr_array_info_field_t fields[GR_ARRAY_INFO_FIELDS_MAX];
    size_t n = array->engine->info ? array->engine->info(array->impl, full, fields) : 0;
    gr_reply_map_begin(reply, 3 + n);
    gr_reply_bulk(reply, (const uint8_t *)"count", 5);
    reply_unsigned(reply, gr_array_count(array));
    gr_reply_bulk(reply, (const uint8_t *)"len", 3);
    reply_unsigned(reply, gr_array_length(array));
    gr_reply_bulk(reply, (const uint8_t *)"next-insert-index", 17);
    if (array->cursor == GR_ARRAY_CURSOR_NONE || array->cursor == UINT64_MAX - 1) gr_reply_integer(reply, 0);
    else reply_unsigned(reply, array->cursor + 1);
    for (size_t i = 0; i < n; i++) {
        gr_reply_bulk(reply, (const uint8_t *)fields[i].name, strlen(fields[i].name));
        if (fields[i].is_double) gr_reply_double(reply, fields[i].real);
        else reply_unsigned(reply, fields[i].integer);
    }
}

