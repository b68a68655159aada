/* resp_commands.c — the command table: Redis argv to typed requests.
 *
 * A RESP command (or the ring's CommandRequest) arrives as argv. This file finds the
 * command by name (case-insensitive), checks its arity, parses and validates the
 * arguments with Redis's error texts, and fills the same gr_request_t the ring path
 * decodes from SBE, so both transports run one command layer (cmd_list.c, cmd_keys.c).
 * Commands without a typed message (PING, ECHO, INFO, CONFIG, CLIENT, ...) are passed to
 * cmd_server.c as argv.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "exec/blocking.h"
#include "exec/command.h"
#include "exec/db.h"

typedef struct parse_context {
    size_t argc;
    const uint8_t *const *argv;
    const size_t *argv_length;
    gr_request_t *request;
    gr_build_error_t *error;
} parse_context_t;

/* Record why argv is refused; returns -1 so a builder can `return fail(...)`. */
static int fail(parse_context_t *ctx, gr_error_code_t code, const char *text) {
    ctx->error->code = code;
    snprintf(ctx->error->text, sizeof ctx->error->text, "%s", text);
    return -1;
}

/* A builder fills ctx->request and returns 0, or fills ctx->error and returns -1. */
typedef int (*request_builder_t)(parse_context_t *ctx);

typedef struct command_spec {
    const char *name;
    int arity;                 /* Redis convention: N exact, -N at least N (argv[0] included) */
    uint16_t template_id;      /* 0: argv command handled by cmd_server.c */
    request_builder_t build;
    uint8_t engine;            /* gr_request_t.engine: 0, or 1/2 for goblin.seg.X/goblin.pma.X */
} command_spec_t;

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

/* Redis's getRangeLongFromObjectOrReply: an integer in [min, max], else `message`. */
static int range_or_reply(parse_context_t *ctx, size_t i, int64_t min, int64_t max, int64_t *out,
                          const char *message) {
    if (int64_or_reply(ctx, i, out) != 0) return -1;
    if (*out < min || *out > max) {
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

static int build_push_left(parse_context_t *ctx) { ctx->request->end = 0; return items_from(ctx, 2, ctx->argc - 2); }
static int build_push_right(parse_context_t *ctx) { ctx->request->end = 1; return items_from(ctx, 2, ctx->argc - 2); }
static int build_pushx_left(parse_context_t *ctx) { ctx->request->flag = 1; return build_push_left(ctx); }
static int build_pushx_right(parse_context_t *ctx) { ctx->request->flag = 1; return build_push_right(ctx); }

static int build_pop(parse_context_t *ctx, uint8_t end) {
    gr_request_t *r = ctx->request;
    r->end = end;
    if (ctx->argc == 3) {
        int64_t count;
        if (range_or_reply(ctx, 2, 0, INT64_MAX, &count, "ERR value is out of range, must be positive") != 0) return -1;
        r->flag = 1;
        r->count = clamp_u32(count);
    }
    return 0;
}
static int build_lpop(parse_context_t *ctx) { return build_pop(ctx, 0); }
static int build_rpop(parse_context_t *ctx) { return build_pop(ctx, 1); }

static int build_key_only(parse_context_t *ctx) { (void)ctx; return 0; }

static int build_lindex(parse_context_t *ctx) { return int64_or_reply(ctx, 2, &ctx->request->index); }

static int build_range(parse_context_t *ctx) {
    if (int64_or_reply(ctx, 2, &ctx->request->index) != 0) return -1;
    return int64_or_reply(ctx, 3, &ctx->request->index2);
}

static int build_lset(parse_context_t *ctx) {
    if (int64_or_reply(ctx, 2, &ctx->request->index) != 0) return -1;
    ctx->request->arg1 = arg(ctx, 3);
    return 0;
}

static int build_linsert(parse_context_t *ctx) {
    if (arg_is(ctx, 2, "before")) ctx->request->flag = 0;
    else if (arg_is(ctx, 2, "after")) ctx->request->flag = 1;
    else return syntax_error(ctx);
    ctx->request->arg1 = arg(ctx, 3);
    ctx->request->arg2 = arg(ctx, 4);
    return 0;
}

static int build_lrem(parse_context_t *ctx) {
    if (int64_or_reply(ctx, 2, &ctx->request->index) != 0) return -1;
    ctx->request->arg1 = arg(ctx, 3);
    return 0;
}

static int build_lpos(parse_context_t *ctx) {
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
            if (int64_or_reply(ctx, i + 1, &value) != 0) return -1;
            if (value < 0) { fail(ctx, GR_ERR_GENERIC, "ERR COUNT can't be negative"); return -1; }
            r->flag = 1;
            r->count = clamp_u32(value);
        } else if (arg_is(ctx, i, "maxlen") && has_value) {
            if (int64_or_reply(ctx, i + 1, &value) != 0) return -1;
            if (value < 0) { fail(ctx, GR_ERR_GENERIC, "ERR MAXLEN can't be negative"); return -1; }
            r->max_len = clamp_u32(value);
        } else {
            return syntax_error(ctx);
        }
    }
    return 0;
}

static int build_lmove(parse_context_t *ctx) {
    ctx->request->arg1 = arg(ctx, 2);
    if (end_or_reply(ctx, 3, &ctx->request->end) != 0) return -1;
    return end_or_reply(ctx, 4, &ctx->request->to_end);
}

static int build_rpoplpush(parse_context_t *ctx) {
    ctx->request->arg1 = arg(ctx, 2);
    ctx->request->end = 1;
    ctx->request->to_end = 0;
    return 0;
}

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

static int build_lmpop(parse_context_t *ctx) { return lmpop_from(ctx, 1); }

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
    if (!end || *end || length == 0 || isspace((unsigned char)text[0])) {
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

static int build_bpop(parse_context_t *ctx, uint8_t end) {
    ctx->request->end = end;
    if (timeout_or_reply(ctx, ctx->argc - 1) != 0) return -1;
    return items_from(ctx, 1, ctx->argc - 2);
}
static int build_blpop(parse_context_t *ctx) { return build_bpop(ctx, 0); }
static int build_brpop(parse_context_t *ctx) { return build_bpop(ctx, 1); }

static int build_blmove(parse_context_t *ctx) {
    if (build_lmove(ctx) != 0) return -1;
    return timeout_or_reply(ctx, 5);
}

static int build_brpoplpush(parse_context_t *ctx) {
    build_rpoplpush(ctx);
    return timeout_or_reply(ctx, 3);
}

static int build_blmpop(parse_context_t *ctx) {
    if (timeout_or_reply(ctx, 1) != 0) return -1;
    return lmpop_from(ctx, 2);
}

static int build_keys_list(parse_context_t *ctx) { return items_from(ctx, 1, ctx->argc - 1); }
static int build_unlink(parse_context_t *ctx) { ctx->request->flag = 1; return build_keys_list(ctx); }

static int build_flush_options(parse_context_t *ctx) {
    if (ctx->argc > 2) return syntax_error(ctx);
    if (ctx->argc == 2 && !arg_is(ctx, 1, "async") && !arg_is(ctx, 1, "sync")) return syntax_error(ctx);
    return 0;
}
static int build_flushdb(parse_context_t *ctx) { return build_flush_options(ctx); }
static int build_flushall(parse_context_t *ctx) { ctx->request->flag = 1; return build_flush_options(ctx); }

static int build_keys(parse_context_t *ctx) { ctx->request->arg1 = arg(ctx, 1); return 0; }

static int build_scan(parse_context_t *ctx) {
    gr_request_t *r = ctx->request;
    /* The cursor is an unsigned 64-bit decimal. */
    uint64_t cursor = 0;
    if (ctx->argv_length[1] == 0 || ctx->argv_length[1] > 20) goto invalid;
    for (size_t i = 0; i < ctx->argv_length[1]; i++) {
        uint8_t c = ctx->argv[1][i];
        if (c < '0' || c > '9') goto invalid;
        uint64_t next = cursor * 10 + (uint64_t)(c - '0');
        if (next / 10 != cursor) goto invalid;
        cursor = next;
    }
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

static int build_rename(parse_context_t *ctx) { ctx->request->arg1 = arg(ctx, 2); return 0; }

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

static int build_set(parse_context_t *ctx) {
    ctx->request->arg1 = arg(ctx, 2);
    return parse_string_options(ctx, 3, 0);
}
static int build_setnx(parse_context_t *ctx) { ctx->request->count = 1; ctx->request->arg1 = arg(ctx, 2); return 0; }
static int build_setex_variant(parse_context_t *ctx, uint32_t variant) {
    ctx->request->count = variant;
    ctx->request->arg1 = arg(ctx, 3);
    return int64_or_reply(ctx, 2, &ctx->request->index);
}
static int build_setex(parse_context_t *ctx) { return build_setex_variant(ctx, 2); }
static int build_psetex(parse_context_t *ctx) { return build_setex_variant(ctx, 3); }
static int build_getex(parse_context_t *ctx) { return parse_string_options(ctx, 2, 1); }

static int build_mset_pairs(parse_context_t *ctx, uint8_t only_if_none_exist) {
    if (ctx->argc % 2 == 0) {
        return arity_error(ctx->error, only_if_none_exist ? "msetnx" : "mset");
    }
    ctx->request->flag = only_if_none_exist;
    return items_from(ctx, 1, ctx->argc - 1);
}
static int build_mset(parse_context_t *ctx) { return build_mset_pairs(ctx, 0); }
static int build_msetnx(parse_context_t *ctx) { return build_mset_pairs(ctx, 1); }

static int build_incr(parse_context_t *ctx) { ctx->request->index = 1; return 0; }
static int build_decr(parse_context_t *ctx) { ctx->request->index = -1; return 0; }
static int build_incrby(parse_context_t *ctx) { return int64_or_reply(ctx, 2, &ctx->request->index); }
static int build_decrby(parse_context_t *ctx) { ctx->request->flag = 1; return build_incrby(ctx); }
static int build_value_arg(parse_context_t *ctx) { ctx->request->arg1 = arg(ctx, 2); return 0; }
static int build_setrange(parse_context_t *ctx) {
    ctx->request->arg1 = arg(ctx, 3);
    return int64_or_reply(ctx, 2, &ctx->request->index);
}

/* ---- expiry ---- */

enum { EXPIRE_IF_ALWAYS = 0, EXPIRE_IF_NX = 1, EXPIRE_IF_XX = 2, EXPIRE_IF_GT = 3, EXPIRE_IF_LT = 4,
       EXPIRE_IF_XX_LT = 5 };

/* Redis's parseExtendedExpireArgumentsOrReply: any of NX XX GT LT, then the checks. */
static int build_expire_variant(parse_context_t *ctx, uint8_t milliseconds, uint8_t absolute) {
    gr_request_t *r = ctx->request;
    r->to_end = milliseconds;
    r->flag = absolute;
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
static int build_expire(parse_context_t *ctx) { return build_expire_variant(ctx, 0, 0); }
static int build_pexpire(parse_context_t *ctx) { return build_expire_variant(ctx, 1, 0); }
static int build_expireat(parse_context_t *ctx) { return build_expire_variant(ctx, 0, 1); }
static int build_pexpireat(parse_context_t *ctx) { return build_expire_variant(ctx, 1, 1); }
static int build_ttl(parse_context_t *ctx) { ctx->request->end = 0; return 0; }
static int build_pttl(parse_context_t *ctx) { ctx->request->end = 1; return 0; }
static int build_expiretime(parse_context_t *ctx) { ctx->request->end = 2; return 0; }
static int build_pexpiretime(parse_context_t *ctx) { ctx->request->end = 3; return 0; }

/* ---- databases ---- */

static int build_select(parse_context_t *ctx) { return int64_or_reply(ctx, 1, &ctx->request->index); }
static int build_move(parse_context_t *ctx) { return int64_or_reply(ctx, 2, &ctx->request->index); }
static int build_swapdb(parse_context_t *ctx) {
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

/* The list commands, once each; the table lists them plain and as GOBLIN.PMA.X / GOBLIN.SEG.X
 * (the same builder, with the request's engine set). */
#define LIST_COMMANDS(ROW) \
    ROW("lpush", -3, GR_T_PUSH, build_push_left) \
    ROW("rpush", -3, GR_T_PUSH, build_push_right) \
    ROW("lpushx", -3, GR_T_PUSH, build_pushx_left) \
    ROW("rpushx", -3, GR_T_PUSH, build_pushx_right) \
    ROW("lpop", -2, GR_T_POP, build_lpop) \
    ROW("rpop", -2, GR_T_POP, build_rpop) \
    ROW("llen", 2, GR_T_LLEN, build_key_only) \
    ROW("lindex", 3, GR_T_LINDEX, build_lindex) \
    ROW("lrange", 4, GR_T_LRANGE, build_range) \
    ROW("lset", 4, GR_T_LSET, build_lset) \
    ROW("linsert", 5, GR_T_LINSERT, build_linsert) \
    ROW("lrem", 4, GR_T_LREM, build_lrem) \
    ROW("ltrim", 4, GR_T_LTRIM, build_range) \
    ROW("lpos", -3, GR_T_LPOS, build_lpos) \
    ROW("lmove", 5, GR_T_LMOVE, build_lmove) \
    ROW("rpoplpush", 3, GR_T_LMOVE, build_rpoplpush) \
    ROW("lmpop", -4, GR_T_LMPOP, build_lmpop) \
    ROW("blpop", -3, GR_T_BPOP, build_blpop) \
    ROW("brpop", -3, GR_T_BPOP, build_brpop) \
    ROW("blmove", 6, GR_T_BLMOVE, build_blmove) \
    ROW("brpoplpush", 4, GR_T_BLMOVE, build_brpoplpush) \
    ROW("blmpop", -5, GR_T_BLMPOP, build_blmpop)
#define PLAIN_ROW(name, arity, template_id, build) {name, arity, template_id, build, 0},
#define SEG_ROW(name, arity, template_id, build) {"goblin.seg." name, arity, template_id, build, 1},
#define PMA_ROW(name, arity, template_id, build) {"goblin.pma." name, arity, template_id, build, 2},

/* The table. Typed commands take argv[1] as the key unless their builder says otherwise. */
static const command_spec_t commands[] = {
    LIST_COMMANDS(PLAIN_ROW)
    LIST_COMMANDS(PMA_ROW)
    LIST_COMMANDS(SEG_ROW)
    {"del", -2, GR_T_DEL, build_keys_list, 0},
    {"unlink", -2, GR_T_DEL, build_unlink, 0},
    {"exists", -2, GR_T_EXISTS, build_keys_list, 0},
    {"type", 2, GR_T_TYPE, build_key_only, 0},
    {"dbsize", 1, GR_T_DBSIZE, build_key_only, 0},
    {"flushdb", -1, GR_T_FLUSHDB, build_flushdb, 0},
    {"flushall", -1, GR_T_FLUSHDB, build_flushall, 0},
    {"keys", 2, GR_T_KEYS, build_keys, 0},
    {"scan", -2, GR_T_SCAN, build_scan, 0},
    {"rename", 3, GR_T_RENAME, build_rename, 0},
    {"set", -3, GR_T_SET, build_set, 0},
    {"setnx", 3, GR_T_SET, build_setnx, 0},
    {"setex", 4, GR_T_SET, build_setex, 0},
    {"psetex", 4, GR_T_SET, build_psetex, 0},
    {"get", 2, GR_T_GET, build_key_only, 0},
    {"getdel", 2, GR_T_GETDEL, build_key_only, 0},
    {"getex", -2, GR_T_GETEX, build_getex, 0},
    {"mset", -3, GR_T_MSET, build_mset, 0},
    {"msetnx", -3, GR_T_MSET, build_msetnx, 0},
    {"mget", -2, GR_T_MGET, build_keys_list, 0},
    {"incr", 2, GR_T_INCRBY, build_incr, 0},
    {"decr", 2, GR_T_INCRBY, build_decr, 0},
    {"incrby", 3, GR_T_INCRBY, build_incrby, 0},
    {"decrby", 3, GR_T_INCRBY, build_decrby, 0},
    {"incrbyfloat", 3, GR_T_INCRBYFLOAT, build_value_arg, 0},
    {"append", 3, GR_T_APPEND, build_value_arg, 0},
    {"strlen", 2, GR_T_STRLEN, build_key_only, 0},
    {"getrange", 4, GR_T_GETRANGE, build_range, 0},
    {"substr", 4, GR_T_GETRANGE, build_range, 0},
    {"setrange", 4, GR_T_SETRANGE, build_setrange, 0},
    {"expire", -3, GR_T_EXPIRE, build_expire, 0},
    {"pexpire", -3, GR_T_EXPIRE, build_pexpire, 0},
    {"expireat", -3, GR_T_EXPIRE, build_expireat, 0},
    {"pexpireat", -3, GR_T_EXPIRE, build_pexpireat, 0},
    {"ttl", 2, GR_T_TTL, build_ttl, 0},
    {"pttl", 2, GR_T_TTL, build_pttl, 0},
    {"expiretime", 2, GR_T_TTL, build_expiretime, 0},
    {"pexpiretime", 2, GR_T_TTL, build_pexpiretime, 0},
    {"persist", 2, GR_T_PERSIST, build_key_only, 0},
    {"select", 2, GR_T_SELECT, build_select, 0},
    {"move", 3, GR_T_MOVE, build_move, 0},
    {"swapdb", 3, GR_T_SWAPDB, build_swapdb, 0},
    /* argv commands (cmd_server.c) */
    {"ping", -1, 0, NULL, 0},
    {"echo", 2, 0, NULL, 0},
    {"info", -1, 0, NULL, 0},
    {"memory", -2, 0, NULL, 0},
    {"goblin.memory", 1, 0, NULL, 0},
    {"goblin.list.internals", 2, 0, NULL, 0},
    {"config", -2, 0, NULL, 0},
    {"client", -2, 0, NULL, 0},
    {"command", -1, 0, NULL, 0},
    {"hello", -1, 0, NULL, 0},
    {"auth", -2, 0, NULL, 0},
    {"reset", 1, 0, NULL, 0},
    {"object", -2, 0, NULL, 0},
    {"function", -2, 0, NULL, 0},
    {"lastsave", 1, 0, NULL, 0},
    {"multi", 1, 0, NULL, 0},
    {"exec", 1, 0, NULL, 0},
    {"discard", 1, 0, NULL, 0},
    {"watch", -2, 0, NULL, 0},
    {"unwatch", 1, 0, NULL, 0},
    {"time", 1, 0, NULL, 0},
    {"quit", -1, 0, NULL, 0},
};

#define COMMAND_COUNT (sizeof commands / sizeof commands[0])
size_t gr_command_count(void) { return COMMAND_COUNT; }

const char *gr_command_name(size_t index, int *arity) {
    if (index >= COMMAND_COUNT) return NULL;
    if (arity) *arity = commands[index].arity;
    return commands[index].name;
}

#define LOOKUP_SLOTS 512   /* power of two, well above COMMAND_COUNT */

static const command_spec_t *lookup_table[LOOKUP_SLOTS];
static int lookup_ready;

static uint32_t name_hash(const uint8_t *name, size_t length) {
    uint32_t hash = 2166136261u;   /* FNV-1a over the lowercased name */
    for (size_t i = 0; i < length; i++) hash = (hash ^ (uint32_t)tolower(name[i])) * 16777619u;
    return hash;
}

static void build_lookup_table(void) {
    for (size_t i = 0; i < COMMAND_COUNT; i++) {
        uint32_t slot = name_hash((const uint8_t *)commands[i].name, strlen(commands[i].name)) & (LOOKUP_SLOTS - 1);
        while (lookup_table[slot]) slot = (slot + 1) & (LOOKUP_SLOTS - 1);
        lookup_table[slot] = &commands[i];
    }
    lookup_ready = 1;
}

static const command_spec_t *find_command(const uint8_t *name, size_t length) {
    if (!lookup_ready) build_lookup_table();
    uint32_t slot = name_hash(name, length) & (LOOKUP_SLOTS - 1);
    while (lookup_table[slot]) {
        const command_spec_t *spec = lookup_table[slot];
        if (strlen(spec->name) == length && strncasecmp(spec->name, (const char *)name, length) == 0) return spec;
        slot = (slot + 1) & (LOOKUP_SLOTS - 1);
    }
    return NULL;
}

/* Redis's text: the name and up to 128 bytes of the arguments, quoted, newlines blanked. */
static int unknown_command(gr_build_error_t *error, size_t argc, const uint8_t *const *argv,
                           const size_t *argv_length) {
    char *text = error->text;
    size_t size = sizeof error->text;
    int used = snprintf(text, size, "ERR unknown command '%.*s', with args beginning with: ",
                        (int)(argv_length[0] > 128 ? 128 : argv_length[0]), (const char *)argv[0]);
    size_t args_length = 0;
    for (size_t i = 1; i < argc && args_length < 128 && used < (int)size - 4; i++) {
        int room = 128 - (int)args_length;
        int n = (int)argv_length[i] < room ? (int)argv_length[i] : room;
        int wrote = snprintf(text + used, size - (size_t)used, "'%.*s' ", n, (const char *)argv[i]);
        if (wrote < 0) break;
        used += wrote;
        args_length += (size_t)wrote;
    }
    for (int i = 0; i < used && i < (int)size; i++)
        if (text[i] == '\r' || text[i] == '\n' || text[i] == '\0') text[i] = ' ';
    text[used < (int)size ? used : (int)size - 1] = '\0';
    error->code = GR_ERR_UNKNOWN_COMMAND;
    return -1;
}

static int arity_ok(const command_spec_t *spec, size_t argc) {
    return spec->arity > 0 ? (int64_t)argc == spec->arity : (int64_t)argc >= -spec->arity;
}

/* The first half of gr_request_from_argv: the command's index once it exists with a valid
 * arity, else -1 with *error. */
static int lookup_checked(size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                          gr_build_error_t *error) {
    if (argc == 0) {
        error->code = GR_ERR_MALFORMED;
        snprintf(error->text, sizeof error->text, "ERR empty command");
        return -1;
    }
    const command_spec_t *spec = find_command(argv[0], argv_length[0]);
    if (!spec) return unknown_command(error, argc, argv, argv_length);
    if (!arity_ok(spec, argc)) return arity_error(error, spec->name);
    return (int)(spec - commands);
}

/* The second half: parse the arguments of the command at index (arity already checked). */
static int build_checked(int index, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                         gr_request_t *request, gr_bytes_t *items, uint32_t item_capacity,
                         gr_build_error_t *error) {
    const command_spec_t *spec = &commands[index];
    memset(request, 0, sizeof *request);
    request->items = items;
    request->item_capacity = item_capacity;
    if (spec->template_id == 0) {   /* no typed form: the request carries argv itself */
        request->template_id = GR_T_COMMAND;
        if (argc > item_capacity) {
            error->code = GR_ERR_TOO_LARGE;
            snprintf(error->text, sizeof error->text, "ERR too many arguments");
            return -1;
        }
        for (size_t i = 0; i < argc; i++) items[i] = (gr_bytes_t){argv[i], (uint32_t)argv_length[i]};
        request->item_count = (uint32_t)argc;
        return index;
    }
    request->template_id = spec->template_id;
    request->engine = spec->engine;
    if (argc > 1) request->key = (gr_bytes_t){argv[1], (uint32_t)argv_length[1]};
    parse_context_t ctx = {argc, argv, argv_length, request, error};
    return spec->build(&ctx) == 0 ? index : -1;
}

int gr_request_from_argv(size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                         gr_request_t *request, gr_bytes_t *items, uint32_t item_capacity,
                         gr_build_error_t *error) {
    int index = lookup_checked(argc, argv, argv_length, error);
    if (index < 0) return -1;
    return build_checked(index, argc, argv, argv_length, request, items, item_capacity, error);
}

static void reply_build_error(gr_reply_t *reply, const gr_build_error_t *error) {
    gr_reply_error(reply, error->code, error->text, strlen(error->text));
}

int gr_command_check(size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    gr_build_error_t error;
    if (lookup_checked(argc, argv, argv_length, &error) >= 0) return 0;
    reply_build_error(reply, &error);
    return -1;
}

int gr_command_index(const uint8_t *name, size_t length) {
    const command_spec_t *spec = find_command(name, length);
    return spec ? (int)(spec - commands) : -1;
}

int gr_command_denies_oom(int index) {
    if (index < 0 || (size_t)index >= COMMAND_COUNT) return 0;
    switch (commands[index].template_id) {
    case GR_T_PUSH: case GR_T_LSET: case GR_T_LINSERT: case GR_T_LMOVE: case GR_T_BLMOVE:
    case GR_T_SET: case GR_T_MSET: case GR_T_INCRBY: case GR_T_INCRBYFLOAT: case GR_T_APPEND:
    case GR_T_SETRANGE:
        return 1;
    default:
        return 0;
    }
}

/* The Redis command a typed request is, for commandstats: the template's own name, or
 * the variant its fields select (LPUSH/RPUSH, TTL/PTTL, ...). */
static const char *request_command_name(const gr_request_t *r) {
    switch (r->template_id) {
    case GR_T_PING: return "ping";
    case GR_T_DEL: return r->flag ? "unlink" : "del";
    case GR_T_EXISTS: return "exists";
    case GR_T_TYPE: return "type";
    case GR_T_DBSIZE: return "dbsize";
    case GR_T_FLUSHDB: return r->flag ? "flushall" : "flushdb";
    case GR_T_KEYS: return "keys";
    case GR_T_SCAN: return "scan";
    case GR_T_RENAME: return "rename";
    case GR_T_MEMORYUSAGE: return "memory";
    case GR_T_PUSH: return r->end ? (r->flag ? "rpushx" : "rpush") : (r->flag ? "lpushx" : "lpush");
    case GR_T_POP: return r->end ? "rpop" : "lpop";
    case GR_T_LLEN: return "llen";
    case GR_T_LINDEX: return "lindex";
    case GR_T_LRANGE: return "lrange";
    case GR_T_LSET: return "lset";
    case GR_T_LINSERT: return "linsert";
    case GR_T_LREM: return "lrem";
    case GR_T_LTRIM: return "ltrim";
    case GR_T_LPOS: return "lpos";
    case GR_T_LMOVE: return "lmove";
    case GR_T_LMPOP: return "lmpop";
    case GR_T_BPOP: return r->end ? "brpop" : "blpop";
    case GR_T_BLMOVE: return "blmove";
    case GR_T_BLMPOP: return "blmpop";
    case GR_T_SELECT: return "select";
    case GR_T_MOVE: return "move";
    case GR_T_SWAPDB: return "swapdb";
    case GR_T_SET: return "set";
    case GR_T_GET: return "get";
    case GR_T_GETDEL: return "getdel";
    case GR_T_GETEX: return "getex";
    case GR_T_MSET: return r->flag ? "msetnx" : "mset";
    case GR_T_MGET: return "mget";
    case GR_T_INCRBY: return r->flag ? "decrby" : "incrby";
    case GR_T_INCRBYFLOAT: return "incrbyfloat";
    case GR_T_APPEND: return "append";
    case GR_T_STRLEN: return "strlen";
    case GR_T_GETRANGE: return "getrange";
    case GR_T_SETRANGE: return "setrange";
    case GR_T_EXPIRE: return r->flag ? (r->to_end ? "pexpireat" : "expireat") : (r->to_end ? "pexpire" : "expire");
    case GR_T_TTL: return r->end == 0 ? "ttl" : r->end == 1 ? "pttl" : r->end == 2 ? "expiretime" : "pexpiretime";
    case GR_T_PERSIST: return "persist";
    default: return NULL;
    }
}

/* goblin.pma.X / goblin.seg.X for a qualified list request: the table's own strings. */
#define QUALIFIED_NAME(name, arity, template_id, build) {name, "goblin.seg." name, "goblin.pma." name},
static const char *const qualified_names[][3] = {LIST_COMMANDS(QUALIFIED_NAME)};

const char *gr_request_command_name(const gr_request_t *request) {
    const char *name = request_command_name(request);
    if (!name || request->engine == 0 || request->engine > 2) return name;
    for (size_t i = 0; i < sizeof qualified_names / sizeof qualified_names[0]; i++)
        if (strcmp(qualified_names[i][0], name) == 0) return qualified_names[i][request->engine];
    return name;
}

int gr_command_index_of_request(const gr_request_t *request) {
    /* cached per name pointer: the ring path pays one switch and one compare */
    static const char *cached_name[8];
    static int cached_index[8];
    const char *name = gr_request_command_name(request);
    if (!name) return -1;
    unsigned slot = (unsigned)(((uintptr_t)name >> 3) & 7);
    if (cached_name[slot] != name) {
        cached_index[slot] = gr_command_index((const uint8_t *)name, strlen(name));
        cached_name[slot] = name;
    }
    return cached_index[slot];
}

static int is_no_auth_command(const command_spec_t *spec) {
    return !strcmp(spec->name, "auth") || !strcmp(spec->name, "hello") || !strcmp(spec->name, "reset");
}

/* The argv path (RESP, the ring's CommandRequest): unknown commands and wrong arities are
 * refused before admission (as Redis), argument errors count as the command's failures. */
void gr_db_run_argv(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                    gr_reply_t *reply) {
    if (argc == 0) return;
    gr_build_error_t error;
    int index = lookup_checked(argc, argv, argv_length, &error);
    if (index < 0) {
        reply_build_error(reply, &error);
        gr_db_reject(db, error.code == GR_ERR_WRONG_ARITY ? gr_command_index(argv[0], argv_length[0]) : -1, reply);
        return;
    }
    const command_spec_t *spec = &commands[index];
    if (db->current) db->current->last_command = spec->name;
    if (gr_db_admit(db, index, is_no_auth_command(spec), reply) != 0) return;
    uint32_t errors_before = reply->errors;
    int64_t start = gr_db_account_start();
    gr_request_t *request = &db->scratch_request;
    if (argc > UINT32_MAX || gr_db_reserve_items(db, argc) != 0) {
        gr_reply_oom(reply);
    } else if (build_checked(index, argc, argv, argv_length, request, db->scratch_items, db->scratch_capacity, &error) < 0) {
        reply_build_error(reply, &error);
    } else if (spec->template_id == 0) {
        if (!gr_cmd_server_argv(db, argc, argv, argv_length, reply)) {
            unknown_command(&error, argc, argv, argv_length);
            reply_build_error(reply, &error);
        }
    } else {
        gr_db_dispatch(db, request, reply);
    }
    gr_db_account(db, index, reply, errors_before, start);
}
