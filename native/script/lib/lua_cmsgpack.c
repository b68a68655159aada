/* The `cmsgpack` library of Redis's Lua environment (lua-cmsgpack 0.4.0's interface):
 * cmsgpack.pack(v1, v2, ...) encodes each argument as a MessagePack object and concatenates
 * them; cmsgpack.unpack(s) returns every object in s; unpack_one(s [, offset]) and
 * unpack_limit(s, limit [, offset]) decode at most 1 / limit objects starting at the byte
 * offset and return first the offset of the next object (-1 when the input is used up).
 * Written here to the MessagePack specification and the library's documented choices:
 *   - a number whose value is an int64 is an integer in the smallest format (positive and
 *     negative fixint, uint8..64 / int8..64), any other number a float32 when it survives the
 *     round trip through float (infinities do), else a float64 (NaN);
 *   - strings are str (fixstr, str8, str16, str32); uint64 decodes as int64 (Redis's does);
 *   - a table is an array when its keys are exactly the integers 1..n (so {} is an empty
 *     array), otherwise a map; tables nested 16 deep encode as nil, as do functions and
 *     other unencodable values;
 *   - bin, ext types and 0xc1 are "Bad data format in input." (0.4.0 predates bin), truncated
 *     input "Missing bytes in input.".
 * Buffers live in Lua userdata (lua_strbuf.h). Registered by lua_libraries.c. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "script/lib/lua_libraries.h"
#include "script/lib/lua_strbuf.h"

#define MSGPACK_MAX_NESTING 16

/* ---- encoding ---- */

static void msgpack_add_be(gr_strbuf_t *buffer, uint8_t type, uint64_t value, int bytes) {
    uint8_t out[9];
    out[0] = type;
    for (int index = bytes; index >= 1; index--) {
        out[index] = (uint8_t)(value & 0xff);
        value >>= 8;
    }
    gr_strbuf_add(buffer, out, (size_t)bytes + 1);
}

static void msgpack_encode_integer(gr_strbuf_t *buffer, int64_t value) {
    if (value >= 0) {
        if (value <= 127) gr_strbuf_add_char(buffer, (char)value);
        else if (value <= 0xff) msgpack_add_be(buffer, 0xcc, (uint64_t)value, 1);
        else if (value <= 0xffff) msgpack_add_be(buffer, 0xcd, (uint64_t)value, 2);
        else if (value <= 0xffffffffLL) msgpack_add_be(buffer, 0xce, (uint64_t)value, 4);
        else msgpack_add_be(buffer, 0xcf, (uint64_t)value, 8);
    } else {
        if (value >= -32) gr_strbuf_add_char(buffer, (char)(uint8_t)(0xe0 | (value & 0x1f)));
        else if (value >= -128) msgpack_add_be(buffer, 0xd0, (uint64_t)value, 1);
        else if (value >= -32768) msgpack_add_be(buffer, 0xd1, (uint64_t)value, 2);
        else if (value >= -2147483648LL) msgpack_add_be(buffer, 0xd2, (uint64_t)value, 4);
        else msgpack_add_be(buffer, 0xd3, (uint64_t)value, 8);
    }
}

static void msgpack_encode_number(gr_strbuf_t *buffer, double value) {
    if (!isinf(value) && value >= -9223372036854775808.0 && value < 9223372036854775808.0 &&
        (double)(int64_t)value == value) {
        msgpack_encode_integer(buffer, (int64_t)value);
        return;
    }
    float single = (float)value;
    if ((double)single == value) {
        uint32_t bits;
        memcpy(&bits, &single, sizeof bits);
        msgpack_add_be(buffer, 0xca, bits, 4);
    } else {
        uint64_t bits;
        memcpy(&bits, &value, sizeof bits);
        msgpack_add_be(buffer, 0xcb, bits, 8);
    }
}

static void msgpack_encode_string(gr_strbuf_t *buffer, const char *text, size_t length) {
    if (length < 32) gr_strbuf_add_char(buffer, (char)(0xa0 | length));
    else if (length <= 0xff) msgpack_add_be(buffer, 0xd9, length, 1);
    else if (length <= 0xffff) msgpack_add_be(buffer, 0xda, length, 2);
    else msgpack_add_be(buffer, 0xdb, length, 4);
    gr_strbuf_add(buffer, text, length);
}

/* The table on the stack top has exactly the keys 1..n (n >= 0). */
static int msgpack_table_is_array(lua_State *L) {
    lua_Integer count = 0, max = 0;
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TNUMBER) {
            lua_pop(L, 1);
            return 0;
        }
        lua_Number key = lua_tonumber(L, -1);
        lua_Integer index = lua_tointeger(L, -1);
        if ((lua_Number)index != key || index < 1) {
            lua_pop(L, 1);
            return 0;
        }
        count++;
        if (index > max) max = index;
    }
    return max == count;
}

static void msgpack_encode_value(lua_State *L, gr_strbuf_t *buffer, int level);

/* Encodes the table on the stack top (left there). */
static void msgpack_encode_table(lua_State *L, gr_strbuf_t *buffer, int level) {
    luaL_checkstack(L, 3, "in function msgpack_encode_table");
    if (msgpack_table_is_array(L)) {
        size_t length = lua_objlen(L, -1);
        if (length <= 15) gr_strbuf_add_char(buffer, (char)(0x90 | length));
        else if (length <= 0xffff) msgpack_add_be(buffer, 0xdc, length, 2);
        else msgpack_add_be(buffer, 0xdd, length, 4);
        for (size_t index = 1; index <= length; index++) {
            lua_rawgeti(L, -1, (int)index);
            msgpack_encode_value(L, buffer, level + 1);
            lua_pop(L, 1);
        }
        return;
    }
    size_t pairs = 0;
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pop(L, 1);
        pairs++;
    }
    if (pairs <= 15) gr_strbuf_add_char(buffer, (char)(0x80 | pairs));
    else if (pairs <= 0xffff) msgpack_add_be(buffer, 0xde, pairs, 2);
    else msgpack_add_be(buffer, 0xdf, pairs, 4);
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pushvalue(L, -2);
        msgpack_encode_value(L, buffer, level + 1); /* the key */
        lua_pop(L, 1);
        msgpack_encode_value(L, buffer, level + 1); /* the value */
        lua_pop(L, 1);
    }
}

/* Encodes the value on the stack top (left there). */
static void msgpack_encode_value(lua_State *L, gr_strbuf_t *buffer, int level) {
    int type = lua_type(L, -1);
    if (type == LUA_TTABLE && level == MSGPACK_MAX_NESTING) type = LUA_TNIL;
    switch (type) {
    case LUA_TSTRING: {
        size_t length;
        const char *text = lua_tolstring(L, -1, &length);
        msgpack_encode_string(buffer, text, length);
        break;
    }
    case LUA_TBOOLEAN:
        gr_strbuf_add_char(buffer, (char)(lua_toboolean(L, -1) ? 0xc3 : 0xc2));
        break;
    case LUA_TNUMBER:
        msgpack_encode_number(buffer, lua_tonumber(L, -1));
        break;
    case LUA_TTABLE:
        msgpack_encode_table(L, buffer, level);
        break;
    default:
        gr_strbuf_add_char(buffer, (char)0xc0);
    }
}

static int msgpack_pack(lua_State *L) {
    int arguments = lua_gettop(L);
    if (arguments == 0) return luaL_argerror(L, 0, "MessagePack pack needs input.");
    if (!lua_checkstack(L, arguments)) return luaL_argerror(L, 0, "Too many arguments for MessagePack pack.");
    gr_strbuf_t *buffer = gr_strbuf_new(L);
    for (int index = 1; index <= arguments; index++) {
        lua_pushvalue(L, index);
        msgpack_encode_value(L, buffer, 0);
        lua_pop(L, 1);
    }
    lua_pushlstring(L, buffer->data, buffer->length);
    gr_strbuf_release(buffer);
    return 1;
}

/* ---- decoding ---- */

enum { MSGPACK_OK = 0, MSGPACK_MISSING, MSGPACK_BAD_FORMAT };

typedef struct {
    const unsigned char *at;
    size_t left;
    int error;
} msgpack_cursor_t;

/* Reads `bytes` big-endian bytes after the type byte; 0 (and MISSING) when the input ends. */
static int msgpack_need(msgpack_cursor_t *cursor, size_t bytes) {
    if (cursor->left < bytes) {
        cursor->error = MSGPACK_MISSING;
        return 0;
    }
    return 1;
}

static uint64_t msgpack_read_be(const unsigned char *at, int bytes) {
    uint64_t value = 0;
    for (int index = 0; index < bytes; index++) value = (value << 8) | at[index];
    return value;
}

static void msgpack_decode_value(lua_State *L, msgpack_cursor_t *cursor);

static void msgpack_decode_array(lua_State *L, msgpack_cursor_t *cursor, uint64_t length) {
    lua_newtable(L);
    luaL_checkstack(L, 1, "in function mp_decode_to_lua_array");
    for (uint64_t index = 1; index <= length; index++) {
        lua_pushnumber(L, (lua_Number)index);
        msgpack_decode_value(L, cursor);
        if (cursor->error) return;
        lua_settable(L, -3);
    }
}

static void msgpack_decode_map(lua_State *L, msgpack_cursor_t *cursor, uint64_t length) {
    lua_newtable(L);
    while (length-- > 0) {
        msgpack_decode_value(L, cursor);
        if (cursor->error) return;
        msgpack_decode_value(L, cursor);
        if (cursor->error) return;
        lua_settable(L, -3);
    }
}

/* Pushes one decoded object (or sets cursor->error; something may be pushed then). */
static void msgpack_decode_value(lua_State *L, msgpack_cursor_t *cursor) {
    luaL_checkstack(L, 1, "too many return values at once; use unpack_one or unpack_limit instead.");
    if (!msgpack_need(cursor, 1)) return;
    unsigned char type = cursor->at[0];
    const unsigned char *body = cursor->at + 1;
    size_t header = 1, payload = 0;
    uint64_t count = 0;
    enum { SCALAR, STRING, ARRAY, MAP } shape = SCALAR;
    int size_bytes = 0;

    if (type <= 0x7f) {
        lua_pushnumber(L, type);
    } else if (type >= 0xe0) {
        lua_pushnumber(L, (lua_Number)(int8_t)type);
    } else if ((type & 0xe0) == 0xa0) {
        shape = STRING;
        payload = type & 0x1f;
    } else if ((type & 0xf0) == 0x90) {
        shape = ARRAY;
        count = type & 0x0f;
    } else if ((type & 0xf0) == 0x80) {
        shape = MAP;
        count = type & 0x0f;
    } else {
        switch (type) {
        case 0xc0: lua_pushnil(L); break;
        case 0xc2: lua_pushboolean(L, 0); break;
        case 0xc3: lua_pushboolean(L, 1); break;
        case 0xca: case 0xcb: case 0xcc: case 0xcd: case 0xce: case 0xcf:
        case 0xd0: case 0xd1: case 0xd2: case 0xd3: {
            static const int widths[] = {4, 8, 1, 2, 4, 8, 1, 2, 4, 8};
            int width = widths[type - 0xca];
            if (!msgpack_need(cursor, 1 + (size_t)width)) return;
            uint64_t bits = msgpack_read_be(body, width);
            header += (size_t)width;
            if (type == 0xca) {
                uint32_t narrow = (uint32_t)bits;
                float value;
                memcpy(&value, &narrow, sizeof value);
                lua_pushnumber(L, (lua_Number)value);
            } else if (type == 0xcb) {
                double value;
                memcpy(&value, &bits, sizeof value);
                lua_pushnumber(L, value);
            } else if (type == 0xcf) { /* uint64 read as int64, as Redis's cmsgpack does */
                lua_pushnumber(L, (lua_Number)(int64_t)bits);
            } else if (type <= 0xce) {
                lua_pushnumber(L, (lua_Number)bits);
            } else {
                int shift = 64 - 8 * width; /* sign-extend from the field's width */
                lua_pushnumber(L, (lua_Number)((int64_t)(bits << shift) >> shift));
            }
            break;
        }
        case 0xd9: shape = STRING; size_bytes = 1; break;
        case 0xda: shape = STRING; size_bytes = 2; break;
        case 0xdb: shape = STRING; size_bytes = 4; break;
        case 0xdc: shape = ARRAY; size_bytes = 2; break;
        case 0xdd: shape = ARRAY; size_bytes = 4; break;
        case 0xde: shape = MAP; size_bytes = 2; break;
        case 0xdf: shape = MAP; size_bytes = 4; break;
        default: /* 0xc1, bin, ext and fixext */
            cursor->error = MSGPACK_BAD_FORMAT;
            return;
        }
        if (size_bytes) {
            if (!msgpack_need(cursor, 1 + (size_t)size_bytes)) return;
            uint64_t size = msgpack_read_be(body, size_bytes);
            header += (size_t)size_bytes;
            if (shape == STRING) payload = (size_t)size;
            else count = size;
        }
    }
    if (shape == STRING) {
        if (!msgpack_need(cursor, header + payload)) return;
        lua_pushlstring(L, (const char *)cursor->at + header, payload);
        cursor->at += header + payload;
        cursor->left -= header + payload;
        return;
    }
    cursor->at += header;
    cursor->left -= header;
    if (shape == ARRAY) msgpack_decode_array(L, cursor, count);
    else if (shape == MAP) msgpack_decode_map(L, cursor, count);
}

/* Decodes from byte `offset` of argument 1: every object when limit and offset are both 0,
 * else at most `limit` objects, returned after the next object's offset. */
static int msgpack_unpack_full(lua_State *L, lua_Integer limit, lua_Integer offset) {
    size_t length;
    const char *input = luaL_checklstring(L, 1, &length);
    if (offset < 0 || limit < 0)
        return luaL_error(L, "Invalid request to unpack with offset of %d and limit of %d.", (int)offset,
                          (int)length);
    if ((size_t)offset > length)
        return luaL_error(L, "Start offset %d greater than input length %d.", (int)offset, (int)length);
    int all = limit == 0 && offset == 0;
    msgpack_cursor_t cursor = {(const unsigned char *)input + offset, length - (size_t)offset, MSGPACK_OK};
    int base = lua_gettop(L);
    int decoded = 0;
    while (cursor.left > 0 && (all || decoded < limit)) {
        msgpack_decode_value(L, &cursor);
        if (cursor.error == MSGPACK_MISSING) return luaL_error(L, "Missing bytes in input.");
        if (cursor.error == MSGPACK_BAD_FORMAT) return luaL_error(L, "Bad data format in input.");
        decoded++;
    }
    if (!all) {
        luaL_checkstack(L, 1, "too many return values at once; use unpack_one or unpack_limit instead.");
        lua_pushinteger(L, cursor.left == 0 ? -1 : (lua_Integer)(length - cursor.left));
        lua_insert(L, base + 1);
        decoded++;
    }
    return decoded;
}

static int msgpack_unpack(lua_State *L) {
    return msgpack_unpack_full(L, 0, 0);
}

static int msgpack_unpack_one(lua_State *L) {
    lua_Integer offset = luaL_optinteger(L, 2, 0);
    lua_settop(L, 1);
    return msgpack_unpack_full(L, 1, offset);
}

static int msgpack_unpack_limit(lua_State *L) {
    lua_Integer limit = luaL_checkinteger(L, 2);
    lua_Integer offset = luaL_optinteger(L, 3, 0);
    lua_settop(L, 1);
    return msgpack_unpack_full(L, limit, offset);
}

static const luaL_Reg msgpack_functions[] = {
    {"pack", msgpack_pack},
    {"unpack", msgpack_unpack},
    {"unpack_one", msgpack_unpack_one},
    {"unpack_limit", msgpack_unpack_limit},
    {NULL, NULL},
};

int gr_luaopen_cmsgpack(lua_State *L) {
    luaL_register(L, "cmsgpack", msgpack_functions);
    lua_pushliteral(L, "cmsgpack");
    lua_setfield(L, -2, "_NAME");
    lua_pushliteral(L, "lua-cmsgpack 0.4.0");
    lua_setfield(L, -2, "_VERSION");
    lua_pushliteral(L, "Copyright (C) 2012, Salvatore Sanfilippo");
    lua_setfield(L, -2, "_COPYRIGHT");
    lua_pushliteral(L, "MessagePack C implementation for Lua");
    lua_setfield(L, -2, "_DESCRIPTION");
    return 1;
}
