/* cmd_array.c — the ARRAY command layer: Redis 8.8's 18 AR* commands, their replies and error
 * texts, over the engine-neutral value of engines/array/array.h (whose header states the
 * semantics). Every handler is an argv handler (over the ring a CommandRequest), validates
 * every argument first, then mutates, then replies. The rows are commands/array.def.
 *
 * The same handlers serve GOBLIN.<ENGINE>.<ARCMD> rows (lane RT's array_rt.def): the engine
 * named between the dots creates new arrays and must hold existing ones (another engine's
 * array is a WRONGTYPE error naming both), as GOBLIN.PMA./GOBLIN.SEG. do for lists.
 */
#include <ctype.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "commands/commands.h"
#include "core/glob.h"
#include "core/number.h"
#include "engines/array/array.h"
#include "exec/blocking.h"
#include "exec/db.h"
#include "exec/transaction.h"

/* ---- shared helpers ---- */

typedef struct array_call {
    gr_db_t *db;
    size_t argc;
    const uint8_t *const *argv;
    const size_t *argv_length;
    gr_reply_t *reply;
    gr_bytes_t key;
    const gr_array_engine_t *forced;   /* GOBLIN.<engine>.: that engine, else NULL */
} array_call_t;

static void reply_error(gr_reply_t *reply, const char *text) { gr_reply_error_text(reply, GR_ERR_GENERIC, text); }
static void reply_syntax(gr_reply_t *reply) { gr_reply_error_text(reply, GR_ERR_SYNTAX, "ERR syntax error"); }
static void reply_not_integer(gr_reply_t *reply) {
    gr_reply_error_text(reply, GR_ERR_NOT_INTEGER, "ERR value is not an integer or out of range");
}

/* The command's name as typed, lowercased (arity errors name it as Redis does). */
static void command_name(const array_call_t *c, char *out, size_t size) {
    size_t n = 0;
    for (; n < c->argv_length[0] && n + 1 < size; n++) out[n] = (char)tolower(c->argv[0][n]);
    out[n] = '\0';
}

static void reply_arity(const array_call_t *c) {
    char name[64];
    command_name(c, name, sizeof name);
    gr_reply_arity_error(c->reply, name);
}

/* Unsigned integers past INT64_MAX (ARLEN of an array holding 2^64-2, say). */
static void reply_unsigned(gr_reply_t *reply, uint64_t value) { gr_reply_unsigned(reply, value); }

static int arg_is(const array_call_t *c, size_t i, const char *word) {
    return c->argv_length[i] == strlen(word) && strncasecmp((const char *)c->argv[i], word, c->argv_length[i]) == 0;
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

static int parse_index_or_reply(const array_call_t *c, size_t i, uint64_t *index) {
    if (parse_index(c, i, index, 0) == 0) return 0;
    reply_error(c->reply, "ERR invalid array index");
    return -1;
}

static int parse_int64_or_reply(const array_call_t *c, size_t i, int64_t *value, const char *error) {
    if (gr_bytes_to_int64(c->argv[i], c->argv_length[i], value) == 0) return 0;
    if (error) reply_error(c->reply, error); else reply_not_integer(c->reply);
    return -1;
}

static array_call_t call_of(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
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
static int find_array_or_reply(const array_call_t *c, int for_write, gr_array_t **array) {
    gr_ks_entry_t *entry = for_write ? gr_db_find_live(c->db, c->key) : gr_db_lookup(c->db, c->key);
    *array = NULL;
    if (!entry) return 0;
    if (entry->type != GR_TYPE_ARRAY) {
        gr_reply_wrongtype(c->reply);
        return -1;
    }
    if (c->forced && ((gr_array_t *)entry->value)->engine != c->forced) {
        reply_wrong_engine(c, entry->value);
        return -1;
    }
    *array = entry->value;
    return 1;
}

static int32_t current_db_index(const gr_db_t *db) { return db->current ? db->current->db_index : 0; }

/* The key's array, created empty (on the forced or the server's engine) when absent: the
 * array, or NULL with WRONGTYPE or OOM replied. *created says it is new (delete it if the
 * command then fails, so no key is ever an empty array). */
static gr_array_t *array_for_write_or_reply(const array_call_t *c, int *created) {
    gr_array_t *array;
    *created = 0;
    int found = find_array_or_reply(c, 1, &array);
    if (found < 0) return NULL;
    if (found) return array;
    uint8_t kind = c->forced ? c->forced->kind : c->db->array_engine;
    array = gr_array_new(kind);
    if (!array || !gr_ks_add(c->db->keyspace, c->key.data, c->key.length, GR_TYPE_ARRAY, array)) {
        gr_array_free(array);
        gr_reply_oom(c->reply);
        return NULL;
    }
    *created = 1;
    return array;
}

/* After a write: WATCH, the dirty counter, an emptied key deleted, a new key signalled. */
static void after_write(const array_call_t *c, gr_array_t *array, int created, int64_t changes) {
    if (gr_array_count(array) == 0 && !gr_array_keeps_empty(array)) {
        gr_ks_delete(c->db->keyspace, c->key.data, c->key.length);
        if (created) return;   /* nothing was there, nothing is */
    } else if (created) {
        gr_blocking_signal(c->db, current_db_index(c->db), c->key.data, c->key.length);
    }
    gr_watch_touch_current(c->db, c->key);
    gr_db_count_changes(c->db, changes);
}

static void reply_set_failure(gr_reply_t *reply, int code) {
    if (code == GR_ARRAY_E_BOUND) reply_error(reply, "ERR array engine bound reached: the write passes the reserved index or value bytes");
    else gr_reply_oom(reply);
}

/* A command's writes for gr_array_check_writes (a bounded engine refuses the whole command
 * before its first set): a run from `first` with lengths[i], or ARMSET's index/value pairs. */
typedef struct planned_writes {
    const array_call_t *c;
    uint64_t first;
    const size_t *lengths;
} planned_writes_t;

static void run_write_at(void *context, size_t i, uint64_t *index, size_t *length) {
    const planned_writes_t *plan = context;
    *index = plan->first + i;
    *length = plan->lengths[i];
}

static void pair_write_at(void *context, size_t i, uint64_t *index, size_t *length) {
    const planned_writes_t *plan = context;
    parse_index(plan->c, 2 + 2 * i, index, 0);
    *length = plan->c->argv_length[3 + 2 * i];
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

#define CALL array_call_t c = call_of(db, argc, argv, argv_length, reply)

/* ---- ARSET / ARMSET / ARGET / ARMGET ---- */

void gr_cmd_arset(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    CALL;
    uint64_t start;
    if (parse_index_or_reply(&c, 2, &start) != 0) return;
    uint64_t values = argc - 3, last = start + values - 1;
    if (last < start || last == UINT64_MAX) {
        reply_error(reply, "ERR array index overflow");
        return;
    }
    int created;
    gr_array_t *array = array_for_write_or_reply(&c, &created);
    if (!array) return;
    planned_writes_t plan = {&c, start, argv_length + 3};
    if (writes_fit_or_reply(&c, array, created, values, run_write_at, &plan) != 0) return;
    int64_t added = 0, written = 0;
    for (uint64_t i = 0; i < values; i++) {
        int result = gr_array_set(array, start + i, argv[3 + i], argv_length[3 + i]);
        if (result < 0) {
            after_write(&c, array, created, written);
            reply_set_failure(reply, result);
            return;
        }
        added += result;
        written++;
    }
    after_write(&c, array, created, written);
    gr_reply_integer(reply, added);
}

void gr_cmd_armset(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    CALL;
    if ((argc - 2) % 2 != 0) { reply_arity(&c); return; }
    uint64_t index;
    for (size_t i = 2; i < argc; i += 2)
        if (parse_index_or_reply(&c, i, &index) != 0) return;
    int created;
    gr_array_t *array = array_for_write_or_reply(&c, &created);
    if (!array) return;
    planned_writes_t plan = {&c, 0, NULL};
    if (writes_fit_or_reply(&c, array, created, (argc - 2) / 2, pair_write_at, &plan) != 0) return;
    int64_t added = 0, written = 0;
    for (size_t i = 2; i < argc; i += 2) {
        parse_index(&c, i, &index, 0);
        int result = gr_array_set(array, index, argv[i + 1], argv_length[i + 1]);
        if (result < 0) {
            after_write(&c, array, created, written);
            reply_set_failure(reply, result);
            return;
        }
        added += result;
        written++;
    }
    after_write(&c, array, created, written);
    gr_reply_integer(reply, added);
}

void gr_cmd_arget(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    CALL;
    (void)argc;
    gr_array_t *array;
    if (find_array_or_reply(&c, 0, &array) < 0) return;
    uint64_t index;
    if (parse_index_or_reply(&c, 2, &index) != 0) return;
    reply_value(reply, array, index);
}

void gr_cmd_armget(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    CALL;
    gr_array_t *array;
    if (find_array_or_reply(&c, 0, &array) < 0) return;
    uint64_t index;
    for (size_t i = 2; i < argc; i++)
        if (parse_index_or_reply(&c, i, &index) != 0) return;
    gr_reply_array_begin(reply, argc - 2);
    for (size_t i = 2; i < argc; i++) {
        parse_index(&c, i, &index, 0);
        reply_value(reply, array, index);
    }
}

/* ---- ARGETRANGE / ARLEN / ARCOUNT ---- */

void gr_cmd_argetrange(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    CALL;
    (void)argc;
    uint64_t start, end;
    if (parse_index_or_reply(&c, 2, &start) != 0 || parse_index_or_reply(&c, 3, &end) != 0) return;
    gr_array_t *array;
    if (find_array_or_reply(&c, 0, &array) < 0) return;
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

void gr_cmd_arlen(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    CALL;
    (void)argc;
    gr_array_t *array;
    if (find_array_or_reply(&c, 0, &array) < 0) return;
    reply_unsigned(reply, array ? gr_array_length(array) : 0);
}

void gr_cmd_arcount(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    CALL;
    (void)argc;
    gr_array_t *array;
    if (find_array_or_reply(&c, 0, &array) < 0) return;
    reply_unsigned(reply, array ? gr_array_count(array) : 0);
}

/* ---- ARDEL / ARDELRANGE ---- */

void gr_cmd_ardel(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    CALL;
    uint64_t index;
    for (size_t i = 2; i < argc; i++)
        if (parse_index_or_reply(&c, i, &index) != 0) return;
    gr_array_t *array;
    int found = find_array_or_reply(&c, 1, &array);
    if (found < 0) return;
    int64_t deleted = 0;
    for (size_t i = 2; found && i < argc; i++) {
        parse_index(&c, i, &index, 0);
        deleted += gr_array_delete(array, index);
    }
    if (deleted) after_write(&c, array, 0, deleted);
    gr_reply_integer(reply, deleted);
}

void gr_cmd_ardelrange(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    CALL;
    if ((argc - 2) % 2 != 0) { reply_arity(&c); return; }
    uint64_t a, b;
    for (size_t i = 2; i < argc; i += 2)
        if (parse_index_or_reply(&c, i, &a) != 0 || parse_index_or_reply(&c, i + 1, &b) != 0) return;
    gr_array_t *array;
    int found = find_array_or_reply(&c, 1, &array);
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

void gr_cmd_arscan(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    CALL;
    uint64_t start, end, limit = UINT64_MAX;
    if (parse_index_or_reply(&c, 2, &start) != 0 || parse_index_or_reply(&c, 3, &end) != 0) return;
    if (argc == 6) {
        if (!arg_is(&c, 4, "limit")) { reply_syntax(reply); return; }
        int64_t n;
        if (parse_int64_or_reply(&c, 5, &n, NULL) != 0) return;
        if (n <= 0) { reply_error(reply, "ERR LIMIT must be positive"); return; }
        limit = (uint64_t)n;
    } else if (argc != 4) {
        reply_arity(&c);
        return;
    }
    gr_array_t *array;
    if (find_array_or_reply(&c, 0, &array) < 0) return;
    if (!array) { gr_reply_array_begin(reply, 0); return; }
    int reverse = start > end;
    uint64_t lo = reverse ? end : start, hi = reverse ? start : end;
    scan_state_t count = {reply, limit};
    uint64_t n = gr_array_visit(array, lo, hi, reverse, scan_count, &count);
    gr_reply_array_begin(reply, n);
    scan_state_t emit = {reply, n};
    if (n) gr_array_visit(array, lo, hi, reverse, scan_emit, &emit);
}

/* ---- ARGREP ---- */

enum { PRED_EXACT = 1, PRED_MATCH, PRED_GLOB, PRED_RE };
#define GREP_MAX_PREDICATES 250
#define GREP_MAX_RE_LENGTH 2048

typedef struct grep_predicate {
    int type;
    const uint8_t *pattern;
    size_t length;
    regex_t regex;
    int compiled;
} grep_predicate_t;

typedef struct grep_plan {
    grep_predicate_t *predicates;
    int count;
    int all;          /* AND */
    int withvalues;
    int nocase;
    gr_reply_t *reply;
    uint64_t remaining;
    uint64_t matched;
    int emit;
    char *text;       /* a NUL-terminated copy of a value for regexec */
    size_t text_size;
} grep_plan_t;

static void grep_free(grep_plan_t *plan) {
    for (int i = 0; i < plan->count; i++)
        if (plan->predicates[i].compiled) regfree(&plan->predicates[i].regex);
    free(plan->predicates);
    free(plan->text);
}

static int fold(int ch, int nocase) { return nocase && ch >= 'A' && ch <= 'Z' ? ch + 32 : ch; }

static int bytes_equal(const uint8_t *a, size_t an, const uint8_t *b, size_t bn, int nocase) {
    if (an != bn) return 0;
    if (!nocase) return memcmp(a, b, an) == 0;
    for (size_t i = 0; i < an; i++)
        if (fold(a[i], 1) != fold(b[i], 1)) return 0;
    return 1;
}

static int bytes_contain(const uint8_t *hay, size_t hn, const uint8_t *needle, size_t nn, int nocase) {
    if (nn == 0) return 1;
    for (size_t i = 0; i + nn <= hn; i++)
        if (bytes_equal(hay + i, nn, needle, nn, nocase)) return 1;
    return 0;
}

static int grep_matches_one(grep_plan_t *plan, grep_predicate_t *p, const uint8_t *data, size_t length) {
    switch (p->type) {
    case PRED_EXACT: return bytes_equal(data, length, p->pattern, p->length, plan->nocase);
    case PRED_MATCH: return bytes_contain(data, length, p->pattern, p->length, plan->nocase);
    case PRED_GLOB: return gr_glob_match(p->pattern, p->length, data, length, plan->nocase);
    default:
        if (length + 1 > plan->text_size) {
            char *grown = realloc(plan->text, length + 1);
            if (!grown) return 0;
            plan->text = grown;
            plan->text_size = length + 1;
        }
        memcpy(plan->text, data, length);
        plan->text[length] = '\0';
        return regexec(&p->regex, plan->text, 0, NULL, 0) == 0;
    }
}

static int grep_visit(void *context, uint64_t index, const uint8_t *data, size_t length) {
    grep_plan_t *plan = context;
    int hit = plan->all;
    for (int i = 0; i < plan->count; i++) {
        int m = grep_matches_one(plan, &plan->predicates[i], data, length);
        if (plan->all && !m) { hit = 0; break; }
        if (!plan->all && m) { hit = 1; break; }
    }
    if (!hit) return 0;
    if (plan->emit) {
        if (plan->withvalues) gr_reply_array_begin(plan->reply, 2);
        reply_unsigned(plan->reply, index);
        if (plan->withvalues) gr_reply_bulk(plan->reply, data, length);
    }
    plan->matched++;
    return --plan->remaining == 0;
}

/* A bound: an index, "-" (the first) or "+" (the last). 0, or -1 replied. */
static int grep_bound_or_reply(const array_call_t *c, size_t i, int *kind, uint64_t *index) {
    if (c->argv_length[i] == 1 && (c->argv[i][0] == '-' || c->argv[i][0] == '+')) {
        *kind = c->argv[i][0];
        *index = 0;
        return 0;
    }
    *kind = 0;
    return parse_index_or_reply(c, i, index);
}

static int has_backreference(const uint8_t *p, size_t n) {
    for (size_t i = 0; i + 1 < n; i++) {
        if (p[i] == '\\' && p[i + 1] >= '1' && p[i + 1] <= '9') return 1;
        if (p[i] == '\\') i++;
    }
    return 0;
}

void gr_cmd_argrep(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    CALL;
    int start_kind, end_kind;
    uint64_t start, end;
    if (grep_bound_or_reply(&c, 2, &start_kind, &start) != 0 || grep_bound_or_reply(&c, 3, &end_kind, &end) != 0) return;
    grep_plan_t plan = {.reply = reply, .remaining = UINT64_MAX};
    plan.predicates = calloc(argc, sizeof *plan.predicates);
    if (!plan.predicates) { gr_reply_oom(reply); return; }
    for (size_t i = 4; i < argc;) {
        int type = arg_is(&c, i, "exact") ? PRED_EXACT : arg_is(&c, i, "match") ? PRED_MATCH
                 : arg_is(&c, i, "glob") ? PRED_GLOB : arg_is(&c, i, "re") ? PRED_RE : 0;
        if (type) {
            if (i + 1 >= argc) { reply_syntax(reply); goto done; }
            if (plan.count >= GREP_MAX_PREDICATES) {
                reply_error(reply, "ERR too many predicates, maximum is 250");
                goto done;
            }
            if (type == PRED_RE && argv_length[i + 1] > GREP_MAX_RE_LENGTH) {
                reply_error(reply, "ERR regular expression is too long, maximum is 2048 bytes");
                goto done;
            }
            grep_predicate_t *p = &plan.predicates[plan.count++];
            p->type = type;
            p->pattern = argv[i + 1];
            p->length = argv_length[i + 1];
            i += 2;
        } else if (arg_is(&c, i, "limit")) {
            if (i + 1 >= argc) { reply_syntax(reply); goto done; }
            int64_t n;
            if (parse_int64_or_reply(&c, i + 1, &n, NULL) != 0) goto done;
            if (n <= 0) { reply_error(reply, "ERR LIMIT must be positive"); goto done; }
            plan.remaining = (uint64_t)n;
            i += 2;
        } else if (arg_is(&c, i, "withvalues")) { plan.withvalues = 1; i++; }
        else if (arg_is(&c, i, "nocase")) { plan.nocase = 1; i++; }
        else if (arg_is(&c, i, "and")) { plan.all = 1; i++; }
        else if (arg_is(&c, i, "or")) { plan.all = 0; i++; }
        else { reply_syntax(reply); goto done; }
    }
    if (plan.count == 0) { reply_syntax(reply); goto done; }
    for (int i = 0; i < plan.count; i++) {
        grep_predicate_t *p = &plan.predicates[i];
        if (p->type != PRED_RE) continue;
        if (p->length == 0) { reply_error(reply, "ERR regular expression is empty"); goto done; }
        char pattern[GREP_MAX_RE_LENGTH + 1];
        memcpy(pattern, p->pattern, p->length);
        pattern[p->length] = '\0';
        if (has_backreference(p->pattern, p->length)) {
            reply_error(reply, "ERR regular expression backreferences are not supported");
            goto done;
        }
        int err = regcomp(&p->regex, pattern, REG_EXTENDED | REG_NOSUB | (plan.nocase ? REG_ICASE : 0));
        if (err != 0) {
            char why[200], text[260];
            regerror(err, &p->regex, why, sizeof why);
            snprintf(text, sizeof text, "ERR invalid regular expression: %s", why);
            reply_error(reply, text);
            goto done;
        }
        p->compiled = 1;
    }
    gr_array_t *array;
    if (find_array_or_reply(&c, 0, &array) < 0) goto done;
    if (!array) { gr_reply_array_begin(reply, 0); goto done; }
    uint64_t last = gr_array_length(array) - 1;
    if (start_kind) start = start_kind == '-' ? 0 : last;
    if (end_kind) end = end_kind == '-' ? 0 : last;
    int reverse = start > end;
    uint64_t lo = reverse ? end : start, hi = reverse ? start : end, limit = plan.remaining;
    gr_array_visit(array, lo, hi, reverse, grep_visit, &plan);   /* count the matches first */
    gr_reply_array_begin(reply, plan.matched);
    if (plan.matched) {
        plan.emit = 1;
        plan.remaining = plan.matched;
        gr_array_visit(array, lo, hi, reverse, grep_visit, &plan);
    }
    (void)limit;
done:
    grep_free(&plan);
}

/* ---- AROP ---- */

enum { OP_SUM = 1, OP_MIN, OP_MAX, OP_AND, OP_OR, OP_XOR, OP_MATCH, OP_USED };

typedef struct op_state {
    int op;
    const uint8_t *match;
    size_t match_length;
    long double sum, best;
    int64_t bits;
    int64_t matches, used;
    int has_number, has_int;
} op_state_t;

static int op_visit(void *context, uint64_t index, const uint8_t *data, size_t length) {
    (void)index;
    op_state_t *s = context;
    if (s->op == OP_USED) { s->used++; return 0; }
    if (s->op == OP_MATCH) {
        if (length == s->match_length && memcmp(data, s->match, length) == 0) s->matches++;
        return 0;
    }
    int64_t integer = 0;
    long double number;
    int is_int = 0;
    if (gr_bytes_to_int64(data, length, &integer) == 0) {
        number = (long double)integer;
        is_int = 1;
    } else if (gr_text_to_long_double(data, length, &number) != 0) {
        return 0;   /* not a number: ignored */
    }
    if (s->op == OP_AND || s->op == OP_OR || s->op == OP_XOR) {
        if (!is_int) {
            if (isnan(number) || number < (long double)INT64_MIN || number > (long double)INT64_MAX) return 0;
            integer = (int64_t)number;
        }
        if (!s->has_int) { s->bits = integer; s->has_int = 1; }
        else if (s->op == OP_AND) s->bits &= integer;
        else if (s->op == OP_OR) s->bits |= integer;
        else s->bits ^= integer;
        return 0;
    }
    if (!s->has_number) { s->sum = s->best = number; s->has_number = 1; }
    else if (s->op == OP_SUM) s->sum += number;
    else if (s->op == OP_MIN && number < s->best) s->best = number;
    else if (s->op == OP_MAX && number > s->best) s->best = number;
    return 0;
}

void gr_cmd_arop(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    CALL;
    uint64_t start, end;
    if (parse_index_or_reply(&c, 2, &start) != 0 || parse_index_or_reply(&c, 3, &end) != 0) return;
    static const char *const names[] = {NULL, "sum", "min", "max", "and", "or", "xor", "match", "used"};
    op_state_t s = {0};
    for (int i = OP_SUM; i <= OP_USED; i++)
        if (arg_is(&c, 4, names[i])) s.op = i;
    if (!s.op) { reply_error(reply, "ERR unknown operation"); return; }
    if (s.op == OP_MATCH) {
        if (argc != 6) { reply_error(reply, "ERR MATCH requires a value argument"); return; }
        s.match = argv[5];
        s.match_length = argv_length[5];
    } else if (argc != 5) {
        reply_arity(&c);
        return;
    }
    gr_array_t *array;
    if (find_array_or_reply(&c, 0, &array) < 0) return;
    if (array) {
        int reverse = start > end;
        gr_array_visit(array, reverse ? end : start, reverse ? start : end, reverse, op_visit, &s);
    }
    if (s.op == OP_MATCH) { gr_reply_integer(reply, s.matches); return; }
    if (s.op == OP_USED) { gr_reply_integer(reply, s.used); return; }
    if (s.op == OP_AND || s.op == OP_OR || s.op == OP_XOR) {
        if (s.has_int) gr_reply_integer(reply, s.bits); else gr_reply_nil(reply);
        return;
    }
    if (!s.has_number) { gr_reply_nil(reply); return; }
    /* Redis's ld2string in LD_STR_AUTO mode */
    long double value = s.op == OP_SUM ? s.sum : s.best;
    char text[64];
    int n;
    if (isinf(value)) n = snprintf(text, sizeof text, "%s", value > 0 ? "inf" : "-inf");
    else n = snprintf(text, sizeof text, "%.17Lg", value);
    gr_reply_bulk(reply, (const uint8_t *)text, (size_t)n);
}

/* ---- ARINSERT / ARRING / ARSEEK / ARNEXT / ARLASTITEMS ---- */

void gr_cmd_arinsert(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
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
    planned_writes_t plan = {&c, first, argv_length + 2};
    if (writes_fit_or_reply(&c, array, created, values, run_write_at, &plan) != 0) return;
    int64_t written = 0;
    for (uint64_t i = 0; i < values; i++) {
        int result = gr_array_set(array, first + i, argv[2 + i], argv_length[2 + i]);
        if (result < 0) {
            if (written) array->cursor = first + (uint64_t)written - 1;
            after_write(&c, array, created, written);
            reply_set_failure(reply, result);
            return;
        }
        written++;
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

void gr_cmd_arring(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    CALL;
    int64_t size;
    if (parse_int64_or_reply(&c, 2, &size, "ERR invalid size") != 0) return;
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
    after_write(&c, array, created, written + rework);
    reply_unsigned(reply, cursor);
}

void gr_cmd_arseek(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    CALL;
    (void)argc;
    uint64_t index;
    if (parse_index(&c, 2, &index, 1) != 0) { reply_error(reply, "ERR invalid array index"); return; }
    gr_array_t *array;
    int found = find_array_or_reply(&c, 1, &array);
    if (found < 0) return;
    if (!found) { gr_reply_integer(reply, 0); return; }
    array->cursor = index == 0 ? GR_ARRAY_CURSOR_NONE : index - 1;
    gr_watch_touch_current(db, c.key);
    gr_db_count_changes(db, 1);
    gr_reply_integer(reply, 1);
}

void gr_cmd_arnext(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    CALL;
    (void)argc;
    gr_array_t *array;
    int found = find_array_or_reply(&c, 0, &array);
    if (found < 0) return;
    if (!found || array->cursor == GR_ARRAY_CURSOR_NONE) gr_reply_integer(reply, 0);
    else if (array->cursor == UINT64_MAX - 1) gr_reply_nil(reply);
    else reply_unsigned(reply, array->cursor + 1);
}

void gr_cmd_arlastitems(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    CALL;
    int64_t count;
    if (parse_int64_or_reply(&c, 2, &count, "ERR invalid COUNT") != 0) return;
    if (count <= 0) { gr_reply_array_begin(reply, 0); return; }
    int rev = 0;
    if (argc == 4) {
        if (!arg_is(&c, 3, "rev")) { reply_syntax(reply); return; }
        rev = 1;
    } else if (argc != 3) {
        reply_arity(&c);
        return;
    }
    gr_array_t *array;
    int found = find_array_or_reply(&c, 0, &array);
    if (found < 0) return;
    if (!found) { gr_reply_array_begin(reply, 0); return; }
    uint64_t length = gr_array_length(array), n = (uint64_t)count > length ? length : (uint64_t)count;
    if (n > gr_array_count(array) && n > GR_ARRAY_MAX_REPLY_ITEMS) {
        reply_error(reply, "ERR count exceeds maximum of 1000000 items");
        return;
    }
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

void gr_cmd_arinfo(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    CALL;
    int full = 0;
    if (argc > 2) {
        if (argc == 3 && arg_is(&c, 2, "full")) full = 1;
        else { reply_syntax(reply); return; }
    }
    gr_array_t *array;
    int found = find_array_or_reply(&c, 0, &array);
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
