/* command_builders.c — the argv builders the command table's rows name (the commands/<family>.def files):
 * each parses and validates a command's arguments with Redis's error texts into the
 * gr_request_t the handlers run from, the same struct the ring decodes from SBE.
 *
 * exec/command.c has already found the row, checked the arity and set the request's template,
 * engine, match fields (LPUSH's end, UNLINK's flag, ...) and key (argv[1]); a builder fills the
 * rest, or says why argv is refused in ctx->error. Builders are pure: no db, no reply writer.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/number.h"
#include "exec/blocking.h"
#include "exec/command.h"
#include "commands/commands.h"
#include "exec/db.h"

typedef gr_build_context_t parse_context_t;

/* Record why argv is refused; returns -1 so a builder can `return fail(...)`. */
static int fail(parse_context_t *ctx, gr_error_code_t code, const char *text) {
    ctx->error->code = code;
    snprintf(ctx->error->text, sizeof ctx->error->text, "%s", text);
    return -1;
}


static gr_bytes_t arg(const parse_context_t *ctx, size_t i) {
    gr_bytes_t bytes = {ctx->argv[i], (uint32_t)ctx->argv_length[i]};
    return bytes;
}

static int arg_is(const parse_context_t *ctx, size_t i, const char *word) {
    size_t n = strlen(word);
    return ctx->argv_length[i] == n && strncasecmp((const char *)ctx->argv[i], word, n) == 0;
}

static int arity_error(gr_build_error_t *error, const char *command) {
    error->code = GR_ERR_WRONG_ARITY;
    snprintf(error->text, sizeof error->text, "ERR wrong number of arguments for '%s' command", command);
    return -1;
}

static int syntax_error(parse_context_t *ctx) {
    fail(ctx, GR_ERR_SYNTAX, "ERR syntax error");
    return -1;
}

static int int64_or_reply(parse_context_t *ctx, size_t i, int64_t *out) {
    if (gr_bytes_to_int64(ctx->argv[i], ctx->argv_length[i], out) == 0) return 0;
    fail(ctx, GR_ERR_NOT_INTEGER, "ERR value is not an integer or out of range");
    return -1;
}

/* Redis's getRangeLongFromObjectOrReply: an integer in [min, max], else `message` — for a
 * value that is not an integer too (`LMPOP a k LEFT`: "numkeys should be greater than 0"). */
static int range_or_reply(parse_context_t *ctx, size_t i, int64_t min, int64_t max, int64_t *out,
                          const char *message) {
    if (gr_bytes_to_int64(ctx->argv[i], ctx->argv_length[i], out) != 0 || *out < min || *out > max) {
        fail(ctx, GR_ERR_OUT_OF_RANGE, message);
        return -1;
    }
    return 0;
}

static int end_or_reply(parse_context_t *ctx, size_t i, uint8_t *end) {
    if (arg_is(ctx, i, "left")) { *end = 0; return 0; }
    if (arg_is(ctx, i, "right")) { *end = 1; return 0; }
    return syntax_error(ctx);
}

static int items_from(parse_context_t *ctx, size_t first, size_t count) {
    gr_request_t *r = ctx->request;
    if (count > r->item_capacity) {
        fail(ctx, GR_ERR_TOO_LARGE, "ERR too many arguments");
        return -1;
    }
    for (size_t i = 0; i < count; i++) r->items[i] = arg(ctx, first + i);
    r->item_count = (uint32_t)count;
    return 0;
}

static uint32_t clamp_u32(int64_t value) { return value > UINT32_MAX ? UINT32_MAX : (uint32_t)value; }

/* ---- builders, one per command shape ---- */

int gr_build_push(parse_context_t *ctx) { return items_from(ctx, 2, ctx->argc - 2); }

int gr_build_pop(parse_context_t *ctx) {
    gr_request_t *r = ctx->request;
    if (ctx->argc > 3) return arity_error(ctx->error, ctx->command->name);   /* LPOP key 1 1, as Redis */
    if (ctx->argc == 3) {
        int64_t count;
        if (range_or_reply(ctx, 2, 0, INT64_MAX, &count, "ERR value is out of range, must be positive") != 0) return -1;
        r->flag = 1;
        r->count = clamp_u32(count);
    }
    return 0;
}

int gr_build_key(parse_context_t *ctx) { (void)ctx; return 0; }

int gr_build_lindex(parse_context_t *ctx) { return int64_or_reply(ctx, 2, &ctx->request->index); }

int gr_build_range(parse_context_t *ctx) {
    if (int64_or_reply(ctx, 2, &ctx->request->index) != 0) return -1;
    return int64_or_reply(ctx, 3, &ctx->request->index2);
}

int gr_build_lset(parse_context_t *ctx) {
    if (int64_or_reply(ctx, 2, &ctx->request->index) != 0) return -1;
    ctx->request->arg1 = arg(ctx, 3);
    return 0;
}

int gr_build_linsert(parse_context_t *ctx) {
    if (arg_is(ctx, 2, "before")) ctx->request->flag = 0;
    else if (arg_is(ctx, 2, "after")) ctx->request->flag = 1;
    else return syntax_error(ctx);
    ctx->request->arg1 = arg(ctx, 3);
    ctx->request->arg2 = arg(ctx, 4);
    return 0;
}

int gr_build_lrem(parse_context_t *ctx) {
    if (int64_or_reply(ctx, 2, &ctx->request->index) != 0) return -1;
    ctx->request->arg1 = arg(ctx, 3);
    return 0;
}

int gr_build_lpos(parse_context_t *ctx) {
    gr_request_t *r = ctx->request;
    r->arg1 = arg(ctx, 2);
    r->index = 1;
    for (size_t i = 3; i < ctx->argc; i += 2) {
        int has_value = i + 1 < ctx->argc;
        int64_t value;
        if (arg_is(ctx, i, "rank") && has_value) {
            if (int64_or_reply(ctx, i + 1, &value) != 0) return -1;
            if (value == 0) {
                fail(ctx, GR_ERR_GENERIC,
                                    "ERR RANK can't be zero: use 1 to start from the first match, 2 from the "
                                    "second ... or use negative to start from the end of the list");
                return -1;
            }
            r->index = value;
        } else if (arg_is(ctx, i, "count") && has_value) {
            /* Redis's getPositiveLongFromObjectOrReply: its message for a non-integer too */
            if (range_or_reply(ctx, i + 1, 0, INT64_MAX, &value, "ERR COUNT can't be negative") != 0) return -1;
            r->flag = 1;
            r->count = clamp_u32(value);
        } else if (arg_is(ctx, i, "maxlen") && has_value) {
            if (range_or_reply(ctx, i + 1, 0, INT64_MAX, &value, "ERR MAXLEN can't be negative") != 0) return -1;
            r->max_len = clamp_u32(value);
        } else {
            return syntax_error(ctx);
        }
    }
    return 0;
}

int gr_build_lmove(parse_context_t *ctx) {
    ctx->request->arg1 = arg(ctx, 2);
    if (end_or_reply(ctx, 3, &ctx->request->end) != 0) return -1;
    return end_or_reply(ctx, 4, &ctx->request->to_end);
}

/* RPOPLPUSH, RENAME: the second key is arg1 */
int gr_build_destination(parse_context_t *ctx) { ctx->request->arg1 = arg(ctx, 2); return 0; }

/* LMPOP's numkeys key... LEFT|RIGHT [COUNT n], starting at argv[first] (BLMPOP: after the timeout). */
static int lmpop_from(parse_context_t *ctx, size_t first) {
    gr_request_t *r = ctx->request;
    int64_t numkeys;
    if (range_or_reply(ctx, first, 1, INT64_MAX, &numkeys, "ERR numkeys should be greater than 0") != 0) return -1;
    size_t where = first + 1 + (size_t)numkeys;
    if (numkeys > (int64_t)ctx->argc || where >= ctx->argc) return syntax_error(ctx);
    if (end_or_reply(ctx, where, &r->end) != 0) return -1;
    int has_count = 0;
    for (size_t i = where + 1; i < ctx->argc; i++) {
        if (!has_count && arg_is(ctx, i, "count") && i + 1 < ctx->argc) {
            int64_t count;
            if (range_or_reply(ctx, i + 1, 1, INT64_MAX, &count, "ERR count should be greater than 0") != 0) return -1;
            r->count = clamp_u32(count);
            has_count = 1;
            i++;
        } else {
            return syntax_error(ctx);
        }
    }
    return items_from(ctx, first + 1, (size_t)numkeys);
}

int gr_build_lmpop(parse_context_t *ctx) { return lmpop_from(ctx, 1); }

/* Redis's getTimeoutFromObjectOrReply: seconds as a float, not negative, within range. */
static int timeout_or_reply(parse_context_t *ctx, size_t i) {
    char text[64];
    size_t length = ctx->argv_length[i];
    char *end = NULL;
    double seconds = 0;
    if (length > 0 && length < sizeof text) {
        memcpy(text, ctx->argv[i], length);
        text[length] = '\0';
        seconds = strtod(text, &end);
    }
    /* end must reach the argument's own end: "0.1\0x" stops strtod at the NUL, not at *end. */
    if (!end || end != text + length || length == 0 || isspace((unsigned char)text[0])) {
        fail(ctx, GR_ERR_GENERIC, "ERR timeout is not a float or out of range");
        return -1;
    }
    const char *why = gr_blocking_timeout_error(seconds);
    if (why) {
        fail(ctx, GR_ERR_GENERIC, why);
        return -1;
    }
    ctx->request->timeout = seconds;
    return 0;
}

int gr_build_bpop(parse_context_t *ctx) {
    if (timeout_or_reply(ctx, ctx->argc - 1) != 0) return -1;
    return items_from(ctx, 1, ctx->argc - 2);
}

int gr_build_blmove(parse_context_t *ctx) {
    if (gr_build_lmove(ctx) != 0) return -1;
    return timeout_or_reply(ctx, 5);
}

int gr_build_brpoplpush(parse_context_t *ctx) {
    gr_build_destination(ctx);
    return timeout_or_reply(ctx, 3);
}

int gr_build_blmpop(parse_context_t *ctx) {
    if (timeout_or_reply(ctx, 1) != 0) return -1;
    return lmpop_from(ctx, 2);
}

int gr_build_keys_list(parse_context_t *ctx) { return items_from(ctx, 1, ctx->argc - 1); }

int gr_build_flush(parse_context_t *ctx) {
    if (ctx->argc > 2) return syntax_error(ctx);
    if (ctx->argc == 2 && !arg_is(ctx, 1, "async") && !arg_is(ctx, 1, "sync")) return syntax_error(ctx);
    return 0;
}

int gr_build_pattern(parse_context_t *ctx) { ctx->request->arg1 = arg(ctx, 1); return 0; }

int gr_build_scan(parse_context_t *ctx) {
    gr_request_t *r = ctx->request;
    /* The cursor as Redis reads it (strtoul: "-1" wraps, "" is 0), the same reading as
     * SSCAN/HSCAN/ZSCAN's. */
    uint64_t cursor = 0;
    if (gr_parse_scan_cursor(ctx->argv[1], ctx->argv_length[1], &cursor) != 0) goto invalid;
    r->cursor = cursor;
    for (size_t i = 2; i < ctx->argc; i += 2) {
        if (i + 1 >= ctx->argc) return syntax_error(ctx);
        if (arg_is(ctx, i, "count")) {
            int64_t count;
            if (int64_or_reply(ctx, i + 1, &count) != 0) return -1;
            if (count < 1) return syntax_error(ctx);
            r->count = clamp_u32(count);
        } else if (arg_is(ctx, i, "match")) {
            r->arg1 = arg(ctx, i + 1);
        } else if (arg_is(ctx, i, "type")) {
            r->arg2 = arg(ctx, i + 1);
        } else {
            return syntax_error(ctx);
        }
    }
    return 0;
invalid:
    fail(ctx, GR_ERR_GENERIC, "ERR invalid cursor");
    return -1;
}


/* ---- strings ---- */

enum { SET_ALWAYS = 0, SET_NX = 1, SET_XX = 2 };
enum { EXPIRE_NONE = 0, EXPIRE_EX = 1, EXPIRE_PX = 2, EXPIRE_EXAT = 3, EXPIRE_PXAT = 4,
       EXPIRE_KEEPTTL = 5, EXPIRE_PERSIST = 6 };

/* Redis's parseExtendedStringArgumentsOrReply for SET (is_getex 0) and GETEX (1). */
static int parse_string_options(parse_context_t *ctx, size_t first, int is_getex) {
    gr_request_t *r = ctx->request;
    static const char *const timed[] = {NULL, "ex", "px", "exat", "pxat"};
    for (size_t i = first; i < ctx->argc; i++) {
        int has_next = i + 1 < ctx->argc;
        int mode = 0;
        for (int m = EXPIRE_EX; m <= EXPIRE_PXAT; m++) if (arg_is(ctx, i, timed[m])) mode = m;
        if (mode && has_next && r->to_end == EXPIRE_NONE) {
            r->to_end = (uint8_t)mode;
            if (int64_or_reply(ctx, i + 1, &r->index) != 0) return -1;
            i++;
        } else if (!is_getex && arg_is(ctx, i, "nx") && r->end == SET_ALWAYS) {
            r->end = SET_NX;
        } else if (!is_getex && arg_is(ctx, i, "xx") && r->end == SET_ALWAYS) {
            r->end = SET_XX;
        } else if (!is_getex && arg_is(ctx, i, "get") && !r->flag) {
            r->flag = 1;
        } else if (!is_getex && arg_is(ctx, i, "keepttl") && r->to_end == EXPIRE_NONE) {
            r->to_end = EXPIRE_KEEPTTL;
        } else if (is_getex && arg_is(ctx, i, "persist") && r->to_end == EXPIRE_NONE) {
            r->to_end = EXPIRE_PERSIST;
        } else {
            return syntax_error(ctx);
        }
    }
    return 0;
}

int gr_build_set(parse_context_t *ctx) {
    ctx->request->arg1 = arg(ctx, 2);
    return parse_string_options(ctx, 3, 0);
}
/* SETEX, PSETEX (the variant, count 2 or 3, is the row's match) */
int gr_build_setex(parse_context_t *ctx) {
    ctx->request->arg1 = arg(ctx, 3);
    return int64_or_reply(ctx, 2, &ctx->request->index);
}
int gr_build_getex(parse_context_t *ctx) { return parse_string_options(ctx, 2, 1); }

/* MSET, MSETNX: key value pairs */
int gr_build_mset(parse_context_t *ctx) {
    if (ctx->argc % 2 == 0) return arity_error(ctx->error, ctx->command->name);
    return items_from(ctx, 1, ctx->argc - 1);
}

int gr_build_incr(parse_context_t *ctx) { ctx->request->index = 1; return 0; }
int gr_build_decr(parse_context_t *ctx) { ctx->request->index = -1; return 0; }
int gr_build_incrby(parse_context_t *ctx) { return int64_or_reply(ctx, 2, &ctx->request->index); }
/* SETNX, APPEND, INCRBYFLOAT: the value is arg1 */
int gr_build_value(parse_context_t *ctx) { ctx->request->arg1 = arg(ctx, 2); return 0; }
int gr_build_setrange(parse_context_t *ctx) {
    ctx->request->arg1 = arg(ctx, 3);
    return int64_or_reply(ctx, 2, &ctx->request->index);
}

/* ---- expiry ---- */

enum { EXPIRE_IF_ALWAYS = 0, EXPIRE_IF_NX = 1, EXPIRE_IF_XX = 2, EXPIRE_IF_GT = 3, EXPIRE_IF_LT = 4,
       EXPIRE_IF_XX_LT = 5 };

/* Redis's parseExtendedExpireArgumentsOrReply: any of NX XX GT LT, then the checks. */
int gr_build_expire(parse_context_t *ctx) {   /* the unit and absoluteness are the row's match */
    gr_request_t *r = ctx->request;
    if (int64_or_reply(ctx, 2, &r->index) != 0) return -1;
    int nx = 0, xx = 0, gt = 0, lt = 0;
    for (size_t i = 3; i < ctx->argc; i++) {
        if (arg_is(ctx, i, "nx")) nx = 1;
        else if (arg_is(ctx, i, "xx")) xx = 1;
        else if (arg_is(ctx, i, "gt")) gt = 1;
        else if (arg_is(ctx, i, "lt")) lt = 1;
        else {
            char text[128];
            snprintf(text, sizeof text, "ERR Unsupported option %.*s",
                     (int)(ctx->argv_length[i] > 64 ? 64 : ctx->argv_length[i]), (const char *)ctx->argv[i]);
            fail(ctx, GR_ERR_SYNTAX, text);
            return -1;
        }
    }
    if (nx && (xx || gt || lt)) {
        fail(ctx, GR_ERR_SYNTAX, "ERR NX and XX, GT or LT options at the same time are not compatible");
        return -1;
    }
    if (gt && lt) {
        fail(ctx, GR_ERR_SYNTAX, "ERR GT and LT options at the same time are not compatible");
        return -1;
    }
    r->end = nx ? EXPIRE_IF_NX : gt ? EXPIRE_IF_GT : (lt && xx) ? EXPIRE_IF_XX_LT : lt ? EXPIRE_IF_LT
           : xx ? EXPIRE_IF_XX : EXPIRE_IF_ALWAYS;   /* XX GT is GT: no expiry never passes GT */
    return 0;
}

/* ---- databases ---- */

int gr_build_select(parse_context_t *ctx) { return int64_or_reply(ctx, 1, &ctx->request->index); }
int gr_build_move(parse_context_t *ctx) { return int64_or_reply(ctx, 2, &ctx->request->index); }
int gr_build_swapdb(parse_context_t *ctx) {
    if (gr_bytes_to_int64(ctx->argv[1], ctx->argv_length[1], &ctx->request->index) != 0) {
        fail(ctx, GR_ERR_GENERIC, "ERR invalid first DB index");
        return -1;
    }
    if (gr_bytes_to_int64(ctx->argv[2], ctx->argv_length[2], &ctx->request->index2) != 0) {
        fail(ctx, GR_ERR_GENERIC, "ERR invalid second DB index");
        return -1;
    }
    return 0;
}

/* PING [message]: the ring's Ping carries the message as arg1 */
int gr_build_ping(parse_context_t *ctx) {
    if (ctx->argc > 2) return arity_error(ctx->error, "ping");
    if (ctx->argc == 2) ctx->request->arg1 = arg(ctx, 1);
    ctx->request->key = (gr_bytes_t){NULL, 0};
    return 0;
}
