/* script_reply.c — the conversions between replies and Lua values (script.h), as Redis 7.0's
 * script_lua.c makes them.
 *
 * A command's reply to Lua (redis.call's result): a gr_reply_t writer whose every operation
 * pushes a Lua value, in the shapes of the script's redis.setresp:
 *   integer -> number; bulk -> string; status -> {ok=s}; error -> {err=s};
 *   nil (bulk or array) -> false in RESP2, nil in RESP3; array -> table (1..n);
 *   map -> a flat table of 2n in RESP2, {map={k=v}} in RESP3; set -> a table in RESP2,
 *   {set={m=true}} in RESP3; double -> its text in RESP2, {double=d} in RESP3;
 *   verbatim -> a string in RESP2, {verbatim_string={format="txt", string=s}} in RESP3.
 * Containers are built on the Lua stack, one frame per open container.
 *
 * A Lua value to a reply (the script's result): string -> bulk; number -> integer (truncated;
 * NaN and out of range as Redis's cast gives them); true -> 1, false -> nil (RESP2 scripts);
 * a table with err (a string) -> that error, with ok -> that status, with double, big_number,
 * map, set or verbatim_string -> those shapes (each connection writes them in its protocol);
 * any other table -> an array of its 1..n up to the first nil; anything else -> nil.
 */
#include <lauxlib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/number.h"
#include "script/script.h"
#include "script/script_internal.h"

#define MAX_FRAMES 64
#define MAX_REPLY_DEPTH 200   /* a self-referencing table ends here with an error element */

enum { FRAME_ARRAY = 0, FRAME_MAP = 1, FRAME_SET = 2 };

typedef struct frame {
    uint8_t kind;
    uint8_t key_pending;    /* FRAME_MAP: a key waits on the stack for its value */
    size_t remaining;       /* elements (pairs for a map) still to come */
    int next_index;
} frame_t;

struct gr_lua_writer {
    gr_reply_t base;
    lua_State *L;
    int resp;
    int depth;
    int broken;             /* deeper than MAX_FRAMES: the reply becomes an error */
    frame_t frames[MAX_FRAMES];
};

static gr_lua_writer_t *writer(gr_reply_t *reply) { return (gr_lua_writer_t *)reply; }

/* The value on top of the stack goes into the open container (or stays, as the result). */
static void place(gr_lua_writer_t *w) {
    lua_State *L = w->L;
    while (w->depth > 0) {
        frame_t *f = &w->frames[w->depth - 1];
        if (f->kind == FRAME_ARRAY) {
            lua_rawseti(L, -2, ++f->next_index);
        } else if (f->kind == FRAME_MAP) {
            if (!f->key_pending) { f->key_pending = 1; return; }
            lua_rawset(L, -3);
            f->key_pending = 0;
        } else {
            lua_pushboolean(L, 1);
            lua_rawset(L, -3);
        }
        if (--f->remaining > 0) return;
        w->depth--;                               /* the container is whole */
        if (f->kind != FRAME_ARRAY) lua_pop(L, 1);   /* its inner table: the outer one remains */
    }
}

static void begin(gr_lua_writer_t *w, int kind, size_t count) {
    lua_State *L = w->L;
    lua_checkstack(L, 8);
    if (kind == FRAME_ARRAY) {
        lua_createtable(L, count < 1024 ? (int)count : 1024, 0);
    } else {
        lua_createtable(L, 0, 1);
        lua_createtable(L, 0, count < 1024 ? (int)count : 1024);
        lua_pushvalue(L, -1);
        lua_setfield(L, -3, kind == FRAME_MAP ? "map" : "set");
    }
    if (count == 0) {
        if (kind != FRAME_ARRAY) lua_pop(L, 1);
        place(w);
        return;
    }
    if (w->depth == MAX_FRAMES) {   /* no Redis reply nests this deep */
        w->broken = 1;
        if (kind != FRAME_ARRAY) lua_pop(L, 1);
        place(w);
        return;
    }
    frame_t *f = &w->frames[w->depth++];
    f->kind = (uint8_t)kind;
    f->key_pending = 0;
    f->remaining = count;
    f->next_index = 0;
}

static void w_integer(gr_reply_t *r, int64_t value) {
    lua_pushnumber(writer(r)->L, (lua_Number)value);
    place(writer(r));
}

static void w_unsigned(gr_reply_t *r, uint64_t value) {
    lua_pushnumber(writer(r)->L, (lua_Number)value);
    place(writer(r));
}

static void w_bulk(gr_reply_t *r, const uint8_t *data, size_t length) {
    lua_pushlstring(writer(r)->L, (const char *)data, length);
    place(writer(r));
}

static void w_nil(gr_reply_t *r) {
    gr_lua_writer_t *w = writer(r);
    if (w->resp == 2) lua_pushboolean(w->L, 0);
    else lua_pushnil(w->L);
    place(w);
}

static void push_field_table(lua_State *L, const char *field, const char *text, size_t length) {
    lua_createtable(L, 0, 1);
    lua_pushlstring(L, text, length);
    lua_setfield(L, -2, field);
}

static void w_status(gr_reply_t *r, const char *text, size_t length) {
    push_field_table(writer(r)->L, "ok", text, length);
    place(writer(r));
}

static void w_error(gr_reply_t *r, gr_error_code_t code, const char *text, size_t length) {
    (void)code;
    push_field_table(writer(r)->L, "err", text, length);
    place(writer(r));
}

static void w_array_begin(gr_reply_t *r, size_t count) { begin(writer(r), FRAME_ARRAY, count); }

static void w_keyed_array_begin(gr_reply_t *r, const uint8_t *key, size_t key_length, size_t count) {
    begin(writer(r), FRAME_ARRAY, 2);
    w_bulk(r, key, key_length);
    begin(writer(r), FRAME_ARRAY, count);
}

static void w_pair(gr_reply_t *r, const uint8_t *key, size_t key_length, const uint8_t *value, size_t value_length) {
    begin(writer(r), FRAME_ARRAY, 2);
    w_bulk(r, key, key_length);
    w_bulk(r, value, value_length);
}

static void w_map_begin(gr_reply_t *r, size_t pairs) {
    gr_lua_writer_t *w = writer(r);
    if (w->resp == 2) begin(w, FRAME_ARRAY, pairs * 2);
    else begin(w, FRAME_MAP, pairs);
}

static void w_set_begin(gr_reply_t *r, size_t count) {
    gr_lua_writer_t *w = writer(r);
    begin(w, w->resp == 2 ? FRAME_ARRAY : FRAME_SET, count);
}

static void w_verbatim(gr_reply_t *r, const uint8_t *text, size_t length) {
    gr_lua_writer_t *w = writer(r);
    if (w->resp == 2) { w_bulk(r, text, length); return; }
    lua_State *L = w->L;
    lua_createtable(L, 0, 1);
    lua_createtable(L, 0, 2);
    lua_pushliteral(L, "txt");
    lua_setfield(L, -2, "format");
    lua_pushlstring(L, (const char *)text, length);
    lua_setfield(L, -2, "string");
    lua_setfield(L, -2, "verbatim_string");
    place(w);
}

static void w_double(gr_reply_t *r, double value) {
    gr_lua_writer_t *w = writer(r);
    if (w->resp == 2) {
        char text[64];
        size_t n = gr_double_to_text(value, text, sizeof text);
        w_bulk(r, (const uint8_t *)text, n);
        return;
    }
    lua_createtable(w->L, 0, 1);
    lua_pushnumber(w->L, value);
    lua_setfield(w->L, -2, "double");
    place(w);
}

static const gr_reply_ops_t lua_writer_ops = {
    .integer = w_integer, .bulk = w_bulk, .nil = w_nil, .nil_array = w_nil, .status = w_status,
    .error = w_error, .array_begin = w_array_begin, .keyed_array_begin = w_keyed_array_begin,
    .pair = w_pair, .map_begin = w_map_begin, .verbatim = w_verbatim, .double_value = w_double,
    .set_begin = w_set_begin, .push_begin = NULL, .unsigned_integer = w_unsigned, .bulks = NULL,
};

void gr_script_run_command(gr_scripting_t *s, size_t argc, const uint8_t *const *argv, const size_t *argv_length) {
    lua_State *L = s->L;
    gr_lua_writer_t w;
    memset(&w, 0, sizeof w);
    w.base.ops = &lua_writer_ops;
    w.L = L;
    w.resp = s->run ? s->run->resp : 2;
    gr_connection_t *conn = s->db->current;
    uint8_t protocol = conn ? conn->protocol : 2;
    if (conn) conn->protocol = (uint8_t)w.resp;   /* what the commands' shapes follow, as Redis's script client */
    int top = lua_gettop(L);
    lua_checkstack(L, 16);
    s->in_command = 1;
    gr_db_run_argv(s->db, argc, argv, argv_length, &w.base);
    s->in_command = 0;
    if (conn) conn->protocol = protocol;
    int produced = lua_gettop(L) - top;
    if (produced <= 0 || w.depth != 0 || w.broken || w.base.failed) {
        lua_settop(L, top);
        lua_createtable(L, 0, 1);
        lua_pushliteral(L, "ERR the command's reply could not be converted for the script");
        lua_setfield(L, -2, "err");
    } else if (produced > 1) {
        lua_settop(L, top + 1);   /* one value: the first the command wrote */
    }
}

/* ---- Lua to a reply ---- */

void gr_script_reply_error(gr_reply_t *reply, const char *text, size_t length) {
    char buffer[1024];
    char *copy = length < sizeof buffer ? buffer : malloc(length + 1);
    if (!copy) { gr_reply_oom(reply); return; }
    for (size_t i = 0; i < length; i++) copy[i] = (text[i] == '\r' || text[i] == '\n') ? ' ' : text[i];
    copy[length] = '\0';
    gr_error_code_t code = GR_ERR_GENERIC;
    if (length >= 10 && !memcmp(text, "WRONGTYPE ", 10)) code = GR_ERR_WRONGTYPE;
    else if (length >= 4 && !memcmp(text, "OOM ", 4)) code = GR_ERR_OUT_OF_MEMORY;
    gr_reply_error(reply, code, copy, length);
    if (copy != buffer) free(copy);
}

static int64_t number_to_integer(lua_Number n) {
    if (isnan(n) || n >= 9223372036854775808.0 || n < -9223372036854775808.0) return INT64_MIN;
    return (int64_t)n;
}

/* The field of the table at index as a string (pushed) when it is one; else nothing pushed. */
static int string_field(lua_State *L, int index, const char *name) {
    lua_pushstring(L, name);
    lua_rawget(L, index < 0 ? index - 1 : index);
    if (lua_type(L, -1) == LUA_TSTRING) return 1;
    lua_pop(L, 1);
    return 0;
}

static int field_of_type(lua_State *L, int index, const char *name, int type) {
    lua_pushstring(L, name);
    lua_rawget(L, index < 0 ? index - 1 : index);
    if (lua_type(L, -1) == type) return 1;
    lua_pop(L, 1);
    return 0;
}

static void to_reply(lua_State *L, gr_reply_t *reply, int resp, int depth);

static void table_to_reply(lua_State *L, gr_reply_t *reply, int resp, int depth) {
    size_t length;
    if (string_field(L, -1, "err")) {
        const char *text = lua_tolstring(L, -1, &length);
        gr_script_reply_error(reply, text, length);
        lua_pop(L, 1);
        return;
    }
    if (string_field(L, -1, "ok")) {
        const char *text = lua_tolstring(L, -1, &length);
        char buffer[1024];
        char *copy = length < sizeof buffer ? buffer : malloc(length + 1);
        if (copy) {
            for (size_t i = 0; i < length; i++) copy[i] = (text[i] == '\r' || text[i] == '\n') ? ' ' : text[i];
            gr_reply_status(reply, copy, length);
            if (copy != buffer) free(copy);
        } else {
            gr_reply_oom(reply);
        }
        lua_pop(L, 1);
        return;
    }
    if (field_of_type(L, -1, "double", LUA_TNUMBER)) {
        gr_reply_double(reply, (double)lua_tonumber(L, -1));
        lua_pop(L, 1);
        return;
    }
    if (string_field(L, -1, "big_number")) {
        const char *text = lua_tolstring(L, -1, &length);
        gr_reply_big_number(reply, (const uint8_t *)text, length);
        lua_pop(L, 1);
        return;
    }
    if (field_of_type(L, -1, "map", LUA_TTABLE)) {
        size_t pairs = 0;
        lua_pushnil(L);
        while (lua_next(L, -2)) { pairs++; lua_pop(L, 1); }
        gr_reply_map_begin(reply, pairs);
        lua_pushnil(L);
        while (lua_next(L, -2)) {
            lua_pushvalue(L, -2);
            to_reply(L, reply, resp, depth + 1);   /* the key (a copy) */
            to_reply(L, reply, resp, depth + 1);   /* the value */
        }
        lua_pop(L, 1);
        return;
    }
    if (field_of_type(L, -1, "set", LUA_TTABLE)) {
        size_t count = 0;
        lua_pushnil(L);
        while (lua_next(L, -2)) { count++; lua_pop(L, 1); }
        gr_reply_set_begin(reply, count);
        lua_pushnil(L);
        while (lua_next(L, -2)) {
            lua_pop(L, 1);
            lua_pushvalue(L, -1);
            to_reply(L, reply, resp, depth + 1);
        }
        lua_pop(L, 1);
        return;
    }
    if (field_of_type(L, -1, "verbatim_string", LUA_TTABLE)) {
        if (string_field(L, -1, "string")) {
            const char *text = lua_tolstring(L, -1, &length);
            gr_reply_verbatim(reply, (const uint8_t *)text, length);
            lua_pop(L, 2);
            return;
        }
        lua_pop(L, 1);
    }
    size_t count = 0;
    for (;;) {
        lua_rawgeti(L, -1, (int)count + 1);
        int present = !lua_isnil(L, -1);
        lua_pop(L, 1);
        if (!present) break;
        count++;
    }
    gr_reply_array_begin(reply, count);
    for (size_t i = 1; i <= count; i++) {
        lua_rawgeti(L, -1, (int)i);
        to_reply(L, reply, resp, depth + 1);
    }
}

static void to_reply(lua_State *L, gr_reply_t *reply, int resp, int depth) {
    if (depth > MAX_REPLY_DEPTH || !lua_checkstack(L, 8)) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR reached lua stack limit");
        lua_pop(L, 1);
        return;
    }
    switch (lua_type(L, -1)) {
    case LUA_TSTRING: {
        size_t length;
        const char *text = lua_tolstring(L, -1, &length);
        gr_reply_bulk(reply, (const uint8_t *)text, length);
        break;
    }
    case LUA_TBOOLEAN:
        if (resp == 2 && lua_toboolean(L, -1)) gr_reply_integer(reply, 1);
        else if (resp == 2) gr_reply_nil(reply);
        else gr_reply_boolean(reply, lua_toboolean(L, -1));   /* a RESP3 script's: #t/#f (RESP2 :1/:0) */
        break;
    case LUA_TNUMBER:
        gr_reply_integer(reply, number_to_integer(lua_tonumber(L, -1)));
        break;
    case LUA_TTABLE:
        table_to_reply(L, reply, resp, depth);
        break;
    default:
        gr_reply_nil(reply);
        break;
    }
    lua_pop(L, 1);
}

void gr_script_lua_to_reply(lua_State *L, gr_reply_t *reply, int resp) { to_reply(L, reply, resp, 0); }
