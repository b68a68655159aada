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
#include <string.h>
#include <strings.h>

#include "db.h"

typedef struct parse_context {
    size_t argc;
    const uint8_t *const *argv;
    const size_t *argv_length;
    gr_request_t *request;
    gr_reply_t *reply;
} parse_context_t;

/* A builder fills ctx->request and returns 0, or replies an error and returns -1. */
typedef int (*request_builder_t)(parse_context_t *ctx);

typedef struct command_spec {
    const char *name;
    int arity;                 /* Redis convention: N exact, -N at least N (argv[0] included) */
    uint16_t template_id;      /* 0: argv command handled by cmd_server.c */
    request_builder_t build;
} command_spec_t;

static gr_bytes_t arg(const parse_context_t *ctx, size_t i) {
    gr_bytes_t bytes = {ctx->argv[i], (uint32_t)ctx->argv_length[i]};
    return bytes;
}

static int arg_is(const parse_context_t *ctx, size_t i, const char *word) {
    size_t n = strlen(word);
    return ctx->argv_length[i] == n && strncasecmp((const char *)ctx->argv[i], word, n) == 0;
}

static int syntax_error(parse_context_t *ctx) {
    gr_reply_error_text(ctx->reply, GR_ERR_SYNTAX, "ERR syntax error");
    return -1;
}

static int int64_or_reply(parse_context_t *ctx, size_t i, int64_t *out) {
    if (gr_bytes_to_int64(ctx->argv[i], ctx->argv_length[i], out) == 0) return 0;
    gr_reply_error_text(ctx->reply, GR_ERR_NOT_INTEGER, "ERR value is not an integer or out of range");
    return -1;
}

/* Redis's getRangeLongFromObjectOrReply: an integer in [min, max], else `message`. */
static int range_or_reply(parse_context_t *ctx, size_t i, int64_t min, int64_t max, int64_t *out,
                          const char *message) {
    if (int64_or_reply(ctx, i, out) != 0) return -1;
    if (*out < min || *out > max) {
        gr_reply_error_text(ctx->reply, GR_ERR_OUT_OF_RANGE, message);
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
        gr_reply_error_text(ctx->reply, GR_ERR_TOO_LARGE, "ERR too many arguments");
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
                gr_reply_error_text(ctx->reply, GR_ERR_GENERIC,
                                    "ERR RANK can't be zero: use 1 to start from the first match, 2 from the "
                                    "second ... or use negative to start from the end of the list");
                return -1;
            }
            r->index = value;
        } else if (arg_is(ctx, i, "count") && has_value) {
            if (int64_or_reply(ctx, i + 1, &value) != 0) return -1;
            if (value < 0) { gr_reply_error_text(ctx->reply, GR_ERR_GENERIC, "ERR COUNT can't be negative"); return -1; }
            r->flag = 1;
            r->count = clamp_u32(value);
        } else if (arg_is(ctx, i, "maxlen") && has_value) {
            if (int64_or_reply(ctx, i + 1, &value) != 0) return -1;
            if (value < 0) { gr_reply_error_text(ctx->reply, GR_ERR_GENERIC, "ERR MAXLEN can't be negative"); return -1; }
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

static int build_lmpop(parse_context_t *ctx) {
    gr_request_t *r = ctx->request;
    int64_t numkeys;
    if (range_or_reply(ctx, 1, 1, INT64_MAX, &numkeys, "ERR numkeys should be greater than 0") != 0) return -1;
    size_t where = 2 + (size_t)numkeys;
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
    return items_from(ctx, 2, (size_t)numkeys);
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
    gr_reply_error_text(ctx->reply, GR_ERR_GENERIC, "ERR invalid cursor");
    return -1;
}

static int build_rename(parse_context_t *ctx) { ctx->request->arg1 = arg(ctx, 2); return 0; }

/* The table. Typed commands take argv[1] as the key unless their builder says otherwise. */
static const command_spec_t commands[] = {
    {"lpush", -3, GR_T_PUSH, build_push_left},
    {"rpush", -3, GR_T_PUSH, build_push_right},
    {"lpushx", -3, GR_T_PUSH, build_pushx_left},
    {"rpushx", -3, GR_T_PUSH, build_pushx_right},
    {"lpop", -2, GR_T_POP, build_lpop},
    {"rpop", -2, GR_T_POP, build_rpop},
    {"llen", 2, GR_T_LLEN, build_key_only},
    {"lindex", 3, GR_T_LINDEX, build_lindex},
    {"lrange", 4, GR_T_LRANGE, build_range},
    {"lset", 4, GR_T_LSET, build_lset},
    {"linsert", 5, GR_T_LINSERT, build_linsert},
    {"lrem", 4, GR_T_LREM, build_lrem},
    {"ltrim", 4, GR_T_LTRIM, build_range},
    {"lpos", -3, GR_T_LPOS, build_lpos},
    {"lmove", 5, GR_T_LMOVE, build_lmove},
    {"rpoplpush", 3, GR_T_LMOVE, build_rpoplpush},
    {"lmpop", -4, GR_T_LMPOP, build_lmpop},
    {"del", -2, GR_T_DEL, build_keys_list},
    {"unlink", -2, GR_T_DEL, build_unlink},
    {"exists", -2, GR_T_EXISTS, build_keys_list},
    {"type", 2, GR_T_TYPE, build_key_only},
    {"dbsize", 1, GR_T_DBSIZE, build_key_only},
    {"flushdb", -1, GR_T_FLUSHDB, build_flushdb},
    {"flushall", -1, GR_T_FLUSHDB, build_flushall},
    {"keys", 2, GR_T_KEYS, build_keys},
    {"scan", -2, GR_T_SCAN, build_scan},
    {"rename", 3, GR_T_RENAME, build_rename},
    /* argv commands (cmd_server.c) */
    {"ping", -1, 0, NULL},
    {"echo", 2, 0, NULL},
    {"info", -1, 0, NULL},
    {"memory", -2, 0, NULL},
    {"goblin.memory", 1, 0, NULL},
    {"config", -2, 0, NULL},
    {"client", -2, 0, NULL},
    {"select", 2, 0, NULL},
    {"command", -1, 0, NULL},
    {"hello", -1, 0, NULL},
    {"time", 1, 0, NULL},
    {"quit", -1, 0, NULL},
};

#define COMMAND_COUNT (sizeof commands / sizeof commands[0])
size_t gr_command_count(void) { return COMMAND_COUNT; }

#define LOOKUP_SLOTS 256   /* power of two, well above COMMAND_COUNT */

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

static void reply_unknown_command(gr_reply_t *reply, size_t argc, const uint8_t *const *argv, const size_t *argv_length) {
    char text[512];
    int used = snprintf(text, sizeof text, "ERR unknown command '%.*s', with args beginning with: ",
                        (int)(argv_length[0] > 128 ? 128 : argv_length[0]), (const char *)argv[0]);
    size_t args_length = 0;
    for (size_t i = 1; i < argc && args_length < 128 && used < (int)sizeof text - 4; i++) {
        int room = 128 - (int)args_length;
        int n = (int)argv_length[i] < room ? (int)argv_length[i] : room;
        int wrote = snprintf(text + used, sizeof text - (size_t)used, "'%.*s' ", n, (const char *)argv[i]);
        if (wrote < 0) break;
        used += wrote;
        args_length += (size_t)wrote;
    }
    for (int i = 0; i < used && i < (int)sizeof text; i++)
        if (text[i] == '\r' || text[i] == '\n') text[i] = ' ';
    gr_reply_error(reply, GR_ERR_UNKNOWN_COMMAND, text, strlen(text));
}

void gr_db_run_argv(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                    gr_reply_t *reply) {
    if (argc == 0) return;
    const command_spec_t *spec = find_command(argv[0], argv_length[0]);
    if (!spec) {
        reply_unknown_command(reply, argc, argv, argv_length);
        return;
    }
    if ((spec->arity > 0 && (int64_t)argc != spec->arity) || (spec->arity < 0 && (int64_t)argc < -spec->arity)) {
        gr_reply_arity_error(reply, spec->name);
        return;
    }
    if (spec->template_id == 0) {
        gr_cmd_server_argv(db, argc, argv, argv_length, reply);
        return;
    }
    gr_request_t *request = &db->scratch_request;
    memset(request, 0, sizeof *request);
    request->items = db->scratch_items;
    request->item_capacity = db->scratch_capacity;
    request->template_id = spec->template_id;
    if (argc > 1) {
        request->key.data = argv[1];
        request->key.length = (uint32_t)argv_length[1];
    }
    parse_context_t ctx = {argc, argv, argv_length, request, reply};
    if (spec->build(&ctx) != 0) return;
    gr_db_run(db, request, reply);
}
