/* cmd_array_query.c — ARGREP, AROP and ARAGG, the array commands that walk the values of an
 * index range (gr_array_visit) testing or folding each: Redis 8.8's predicates (EXACT, MATCH,
 * GLOB, RE, with AND/OR, NOCASE, LIMIT, WITHVALUES) and operations (SUM, MIN, MAX, AND, OR, XOR,
 * MATCH, USED), and Redis 8.10's numeric RANGE predicate and ARAGG (the same predicates, then
 * SUM/MIN/MAX/COUNT/AVG/AND/OR/XOR folded in one pass). One predicate parser and matcher
 * (grep_*) serves ARGREP and ARAGG; one number reading (value_number) and one reply format
 * (reply_number) serve AROP and ARAGG.
 * The other AR* commands and the helpers the files share (cmd_array_shared.h) are cmd_array.c's;
 * the engine is engines/array/array.h, the rows commands/array.def. */
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "commands/cmd_array_shared.h"
#include "core/glob.h"
#include "core/number.h"

/* A value as AROP reads it: an int64 (Redis's string2ll) or else a long double (string2ld);
 * 0 with *number (and *integer, *is_int when it is an integer) set, or -1 for text. */
static int value_number(const uint8_t *data, size_t length, int64_t *integer, long double *number, int *is_int) {
    if (gr_bytes_to_int64(data, length, integer) == 0) {
        *number = (long double)*integer;
        *is_int = 1;
        return 0;
    }
    *is_int = 0;
    return gr_text_to_long_double(data, length, number);
}

/* A number for AND/OR/XOR: integers as they are, other numbers truncated when they fit. */
static int value_bits(int64_t integer, long double number, int is_int, int64_t *bits) {
    if (is_int) { *bits = integer; return 0; }
    if (isnan(number) || number < (long double)INT64_MIN || number > (long double)INT64_MAX) return -1;
    *bits = (int64_t)number;
    return 0;
}

/* SUM/MIN/MAX/AVG's bulk reply: Redis's ld2string in LD_STR_AUTO mode. */
static void reply_number(gr_reply_t *reply, long double value) {
    char text[64];
    int n;
    if (isinf(value)) n = snprintf(text, sizeof text, "%s", value > 0 ? "inf" : "-inf");
    else n = snprintf(text, sizeof text, "%.17Lg", value);
    gr_reply_bulk(reply, (const uint8_t *)text, (size_t)n);
}

/* ---- the predicates (ARGREP, ARAGG) ---- */

enum { PRED_EXACT = 1, PRED_MATCH, PRED_GLOB, PRED_RE, PRED_RANGE };
#define GREP_MAX_PREDICATES 250
#define GREP_MAX_RE_LENGTH 2048

typedef struct grep_predicate {
    int type;
    const uint8_t *pattern;
    size_t length;
    regex_t regex;
    int compiled;
    long double min, max;   /* RANGE */
    int exclusive;
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
    case PRED_RANGE: {
        int64_t integer;
        long double number;
        int is_int;
        if (value_number(data, length, &integer, &number, &is_int) != 0) return 0;   /* text never matches */
        return p->exclusive ? number > p->min && number < p->max : number >= p->min && number <= p->max;
    }
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

/* Whether a value passes the plan: every predicate (AND) or any (OR); no predicate: all pass. */
static int grep_hit(grep_plan_t *plan, const uint8_t *data, size_t length) {
    if (plan->count == 0) return 1;
    for (int i = 0; i < plan->count; i++) {
        int m = grep_matches_one(plan, &plan->predicates[i], data, length);
        if (plan->all && !m) return 0;
        if (!plan->all && m) return 1;
    }
    return plan->all;
}

/* A bound: an index, "-" (the first) or "+" (the last). 0, or -1 replied. */
static int grep_bound_or_reply(const array_call_t *c, size_t i, int *kind, uint64_t *index) {
    if (c->argv_length[i] == 1 && (c->argv[i][0] == '-' || c->argv[i][0] == '+')) {
        *kind = c->argv[i][0];
        *index = 0;
        return 0;
    }
    *kind = 0;
    return gr_acmd_parse_index_or_reply(c, i, index);
}

/* The bounds against the array: lo, hi and the direction. */
static void grep_resolve_bounds(const gr_array_t *array, int start_kind, uint64_t start, int end_kind, uint64_t end,
                                uint64_t *lo, uint64_t *hi, int *reverse) {
    uint64_t last = gr_array_length(array) - 1;
    if (start_kind) start = start_kind == '-' ? 0 : last;
    if (end_kind) end = end_kind == '-' ? 0 : last;
    *reverse = start > end;
    *lo = *reverse ? end : start;
    *hi = *reverse ? start : end;
}

static int has_backreference(const uint8_t *p, size_t n) {
    for (size_t i = 0; i + 1 < n; i++) {
        if (p[i] == '\\' && p[i + 1] >= '1' && p[i + 1] <= '9') return 1;
        if (p[i] == '\\') i++;
    }
    return 0;
}

/* The predicates and options from argv[4]: ARGREP's to the end (WITHVALUES allowed, at least one
 * predicate), ARAGG's up to its AGGREGATE word (*stop set to its position; no predicate means
 * every value). 0, or -1 with the error replied (plan to grep_free either way). */
static int grep_parse_or_reply(const array_call_t *c, grep_plan_t *plan, int aragg, size_t *stop) {
    size_t argc = c->argc;
    gr_reply_t *reply = c->reply;
    plan->predicates = calloc(argc, sizeof *plan->predicates);
    if (!plan->predicates) { gr_reply_oom(reply); return -1; }
    size_t i = 4;
    for (; i < argc;) {
        if (aragg && arg_is(c, i, "aggregate")) break;
        int type = arg_is(c, i, "exact") ? PRED_EXACT : arg_is(c, i, "match") ? PRED_MATCH
                 : arg_is(c, i, "glob") ? PRED_GLOB : arg_is(c, i, "re") ? PRED_RE
                 : arg_is(c, i, "range") ? PRED_RANGE : 0;
        if (type) {
            size_t operands = type == PRED_RANGE ? 2 : 1;
            if (i + operands >= argc) { reply_syntax(reply); return -1; }
            if (plan->count >= GREP_MAX_PREDICATES) {
                reply_error(reply, "ERR too many predicates, maximum is 250");
                return -1;
            }
            if (type == PRED_RE && c->argv_length[i + 1] > GREP_MAX_RE_LENGTH) {
                reply_error(reply, "ERR regular expression is too long, maximum is 2048 bytes");
                return -1;
            }
            grep_predicate_t *p = &plan->predicates[plan->count++];
            p->type = type;
            p->pattern = c->argv[i + 1];
            p->length = c->argv_length[i + 1];
            if (type == PRED_RANGE) {
                if (gr_text_to_long_double(c->argv[i + 1], c->argv_length[i + 1], &p->min) != 0 ||
                    gr_text_to_long_double(c->argv[i + 2], c->argv_length[i + 2], &p->max) != 0) {
                    reply_error(reply, "ERR min or max is not a float");
                    return -1;
                }
                i += 3;
                if (i < argc && arg_is(c, i, "exclusive")) { p->exclusive = 1; i++; }
            } else {
                i += 2;
            }
        } else if (arg_is(c, i, "limit")) {
            if (i + 1 >= argc) { reply_syntax(reply); return -1; }
            int64_t n;
            if (gr_acmd_parse_int64_or_reply(c, i + 1, &n, NULL) != 0) return -1;
            if (n <= 0) { reply_error(reply, "ERR LIMIT must be positive"); return -1; }
            plan->remaining = (uint64_t)n;
            i += 2;
        } else if (!aragg && arg_is(c, i, "withvalues")) { plan->withvalues = 1; i++; }
        else if (arg_is(c, i, "nocase")) { plan->nocase = 1; i++; }
        else if (arg_is(c, i, "and")) { plan->all = 1; i++; }
        else if (arg_is(c, i, "or")) { plan->all = 0; i++; }
        else { reply_syntax(reply); return -1; }
    }
    if (aragg ? i >= argc : plan->count == 0) { reply_syntax(reply); return -1; }
    *stop = i;
    for (int k = 0; k < plan->count; k++) {
        grep_predicate_t *p = &plan->predicates[k];
        if (p->type != PRED_RE) continue;
        if (p->length == 0) { reply_error(reply, "ERR regular expression is empty"); return -1; }
        char pattern[GREP_MAX_RE_LENGTH + 1];
        memcpy(pattern, p->pattern, p->length);
        pattern[p->length] = '\0';
        if (has_backreference(p->pattern, p->length)) {
            reply_error(reply, "ERR regular expression backreferences are not supported");
            return -1;
        }
        int err = regcomp(&p->regex, pattern, REG_EXTENDED | REG_NOSUB | (plan->nocase ? REG_ICASE : 0));
        if (err != 0) {
            char why[200], text[260];
            regerror(err, &p->regex, why, sizeof why);
            snprintf(text, sizeof text, "ERR invalid regular expression: %s", why);
            reply_error(reply, text);
            return -1;
        }
        p->compiled = 1;
    }
    return 0;
}

/* ---- ARGREP ---- */

static int grep_visit(void *context, uint64_t index, const uint8_t *data, size_t length) {
    grep_plan_t *plan = context;
    if (!grep_hit(plan, data, length)) return 0;
    if (plan->emit) {
        if (plan->withvalues) gr_reply_array_begin(plan->reply, 2);
        reply_unsigned(plan->reply, index);
        if (plan->withvalues) gr_reply_bulk(plan->reply, data, length);
    }
    plan->matched++;
    return --plan->remaining == 0;
}

void gr_cmd_argrep(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    CALL;
    int start_kind, end_kind;
    uint64_t start, end;
    if (grep_bound_or_reply(&c, 2, &start_kind, &start) != 0 || grep_bound_or_reply(&c, 3, &end_kind, &end) != 0) return;
    grep_plan_t plan = {.reply = reply, .remaining = UINT64_MAX};
    size_t stop;
    if (grep_parse_or_reply(&c, &plan, 0, &stop) != 0) goto done;
    gr_array_t *array;
    if (gr_acmd_find_array_or_reply(&c, 0, &array) < 0) goto done;
    if (!array) { gr_reply_array_begin(reply, 0); goto done; }
    uint64_t lo, hi;
    int reverse;
    grep_resolve_bounds(array, start_kind, start, end_kind, end, &lo, &hi, &reverse);
    gr_array_visit(array, lo, hi, reverse, grep_visit, &plan);   /* count the matches first */
    gr_reply_array_begin(reply, plan.matched);
    if (plan.matched) {
        plan.emit = 1;
        plan.remaining = plan.matched;
        gr_array_visit(array, lo, hi, reverse, grep_visit, &plan);
    }
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
    int64_t integer = 0, bits;
    long double number;
    int is_int;
    if (value_number(data, length, &integer, &number, &is_int) != 0) return 0;   /* not a number: ignored */
    if (s->op == OP_AND || s->op == OP_OR || s->op == OP_XOR) {
        if (value_bits(integer, number, is_int, &bits) != 0) return 0;
        if (!s->has_int) { s->bits = bits; s->has_int = 1; }
        else if (s->op == OP_AND) s->bits &= bits;
        else if (s->op == OP_OR) s->bits |= bits;
        else s->bits ^= bits;
        return 0;
    }
    if (!s->has_number) { s->sum = s->best = number; s->has_number = 1; }
    else if (s->op == OP_SUM) s->sum += number;
    else if (s->op == OP_MIN && number < s->best) s->best = number;
    else if (s->op == OP_MAX && number > s->best) s->best = number;
    return 0;
}

void gr_cmd_arop(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    CALL;
    uint64_t start, end;
    if (gr_acmd_parse_index_or_reply(&c, 2, &start) != 0 || gr_acmd_parse_index_or_reply(&c, 3, &end) != 0) return;
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
        gr_acmd_reply_arity(&c);
        return;
    }
    gr_array_t *array;
    if (gr_acmd_find_array_or_reply(&c, 0, &array) < 0) return;
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
    reply_number(reply, s.op == OP_SUM ? s.sum : s.best);
}

/* ---- ARAGG ---- */

enum { AGG_SUM = 1, AGG_MIN, AGG_MAX, AGG_COUNT, AGG_AVG, AGG_AND, AGG_OR, AGG_XOR };

/* Every operation's fold in one pass: the matched count, then the numbers and the integers. */
typedef struct agg_state {
    grep_plan_t *plan;
    uint64_t count, numbers;
    long double sum, min, max;
    int64_t and_bits, or_bits, xor_bits;
    int has_bits;
} agg_state_t;

static int agg_visit(void *context, uint64_t index, const uint8_t *data, size_t length) {
    (void)index;
    agg_state_t *s = context;
    if (!grep_hit(s->plan, data, length)) return 0;
    s->count++;
    int64_t integer = 0, bits;
    long double number;
    int is_int;
    if (value_number(data, length, &integer, &number, &is_int) == 0) {
        if (s->numbers++ == 0) { s->sum = s->min = s->max = number; }
        else {
            s->sum += number;
            if (number < s->min) s->min = number;
            if (number > s->max) s->max = number;
        }
        if (value_bits(integer, number, is_int, &bits) == 0) {
            if (!s->has_bits) { s->and_bits = s->or_bits = s->xor_bits = bits; s->has_bits = 1; }
            else { s->and_bits &= bits; s->or_bits |= bits; s->xor_bits ^= bits; }
        }
    }
    return --s->plan->remaining == 0;
}

void gr_cmd_aragg(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    CALL;
    (void)argv;
    (void)argv_length;
    int start_kind, end_kind;
    uint64_t start, end;
    if (grep_bound_or_reply(&c, 2, &start_kind, &start) != 0 || grep_bound_or_reply(&c, 3, &end_kind, &end) != 0) return;
    grep_plan_t plan = {.reply = reply, .remaining = UINT64_MAX};
    uint8_t *ops = NULL;
    size_t stop, n_ops = 0;
    if (grep_parse_or_reply(&c, &plan, 1, &stop) != 0) goto done;
    static const char *const names[] = {NULL, "sum", "min", "max", "count", "avg", "and", "or", "xor"};
    if (stop + 1 >= argc) { reply_syntax(reply); goto done; }
    ops = malloc(argc - stop - 1);
    if (!ops) { gr_reply_oom(reply); goto done; }
    for (size_t i = stop + 1; i < argc; i++) {
        int op = 0;
        for (int k = AGG_SUM; k <= AGG_XOR; k++)
            if (arg_is(&c, i, names[k])) op = k;
        if (!op) { reply_error(reply, "ERR unknown operation"); goto done; }
        ops[n_ops++] = (uint8_t)op;
    }
    gr_array_t *array;
    if (gr_acmd_find_array_or_reply(&c, 0, &array) < 0) goto done;
    agg_state_t s = {.plan = &plan};
    if (array) {
        uint64_t lo, hi;
        int reverse;
        grep_resolve_bounds(array, start_kind, start, end_kind, end, &lo, &hi, &reverse);
        gr_array_visit(array, lo, hi, reverse, agg_visit, &s);
    }
    gr_reply_array_begin(reply, n_ops);
    for (size_t i = 0; i < n_ops; i++) {
        switch (ops[i]) {
        case AGG_COUNT: gr_reply_integer(reply, (int64_t)s.count); break;
        case AGG_AND: case AGG_OR: case AGG_XOR:
            if (!s.has_bits) gr_reply_nil(reply);
            else gr_reply_integer(reply, ops[i] == AGG_AND ? s.and_bits : ops[i] == AGG_OR ? s.or_bits : s.xor_bits);
            break;
        default:
            if (!s.numbers) gr_reply_nil(reply);
            else reply_number(reply, ops[i] == AGG_SUM ? s.sum : ops[i] == AGG_MIN ? s.min : ops[i] == AGG_MAX ? s.max
                                                             : s.sum / (long double)s.numbers);
        }
    }
done:
    free(ops);
    grep_free(&plan);
}
