/* A growable byte buffer for the codecs in this folder (cjson.encode and its decoder's string
 * scratch, cmsgpack.pack). The buffer's header is a Lua userdata with a __gc metamethod, and
 * its bytes come from the state's own allocator (lua_getallocf), so:
 *   - the memory is Lua's (a runtime that counts and bounds its allocator counts it),
 *   - nothing leaks when a codec raises a Lua error half way: the header is garbage (or kept
 *     by its owner, as cjson keeps its buffers) and __gc frees the bytes,
 *   - growing uses no stack slot, so the codecs' stack use (which decides where Lua's C
 *     stack limit stops deep nesting) is the original libraries'.
 * Header-only (static inline functions). */
#ifndef GR_LUA_STRBUF_H
#define GR_LUA_STRBUF_H

#include <stddef.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#define GR_STRBUF_METATABLE "goblin.lua.strbuf"

typedef struct {
    lua_State *L;   /* the state whose allocator owns data; set by gr_strbuf_begin */
    char *data;
    size_t length;
    size_t capacity;
} gr_strbuf_t;

static inline void gr_strbuf_release(gr_strbuf_t *buffer) {
    if (buffer->data != NULL) {
        void *context;
        lua_Alloc allocate = lua_getallocf(buffer->L, &context);
        allocate(context, buffer->data, buffer->capacity, 0);
    }
    buffer->data = NULL;
    buffer->length = buffer->capacity = 0;
}

static inline int gr_strbuf_gc(lua_State *L) {
    gr_strbuf_t *buffer = lua_touserdata(L, 1);
    buffer->L = L;
    gr_strbuf_release(buffer);
    return 0;
}

/* Pushes a new, empty buffer (a userdata; keep it reachable while it is used). */
static inline gr_strbuf_t *gr_strbuf_new(lua_State *L) {
    gr_strbuf_t *buffer = lua_newuserdata(L, sizeof *buffer);
    *buffer = (gr_strbuf_t){L, NULL, 0, 0};
    if (luaL_newmetatable(L, GR_STRBUF_METATABLE)) {
        lua_pushcfunction(L, gr_strbuf_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_setmetatable(L, -2);
    return buffer;
}

/* Starts a use: empty, bound to the running state (a coroutine shares the allocator). */
static inline void gr_strbuf_begin(gr_strbuf_t *buffer, lua_State *L) {
    buffer->L = L;
    buffer->length = 0;
}

/* Lua's own out-of-memory message (no position), raised as a runtime error: the API has no
 * way to raise LUA_ERRMEM itself. */
static inline void gr_strbuf_out_of_memory(lua_State *L) {
    lua_pushliteral(L, "not enough memory");
    lua_error(L);
}

static inline void gr_strbuf_reserve(gr_strbuf_t *buffer, size_t more) {
    if (buffer->capacity - buffer->length >= more) return;
    if (more > (size_t)-1 / 4 - buffer->length) gr_strbuf_out_of_memory(buffer->L);
    size_t capacity = buffer->capacity ? buffer->capacity * 2 : 256;
    if (capacity < buffer->length + more) capacity = buffer->length + more;
    void *context;
    lua_Alloc allocate = lua_getallocf(buffer->L, &context);
    char *data = allocate(context, buffer->data, buffer->capacity, capacity);
    if (data == NULL) gr_strbuf_out_of_memory(buffer->L);
    buffer->data = data;
    buffer->capacity = capacity;
}

static inline void gr_strbuf_add(gr_strbuf_t *buffer, const void *bytes, size_t length) {
    gr_strbuf_reserve(buffer, length);
    memcpy(buffer->data + buffer->length, bytes, length);
    buffer->length += length;
}

static inline void gr_strbuf_add_char(gr_strbuf_t *buffer, char byte) {
    gr_strbuf_reserve(buffer, 1);
    buffer->data[buffer->length++] = byte;
}

#endif
