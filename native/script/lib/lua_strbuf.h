/* A growable byte buffer for the encoders in this folder (cjson.encode, cmsgpack.pack), kept in
 * a Lua userdata at a fixed stack slot: growing allocates a larger userdata and replaces the
 * slot, so the memory is Lua's (counted by its allocator) and nothing leaks when an encoder
 * raises a Lua error half way through (the userdata is simply garbage). Unlike luaL_Buffer it
 * does not use the stack top, so encoders can walk tables with lua_next while writing. */
#ifndef GR_LUA_STRBUF_H
#define GR_LUA_STRBUF_H

#include <stddef.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

typedef struct {
    lua_State *L;
    int slot;       /* stack index of the userdata holding the bytes */
    char *data;
    size_t length;
    size_t capacity;
} gr_strbuf_t;

/* Pushes the buffer's userdata (one stack slot, until the encoder returns). */
static inline void gr_strbuf_init(gr_strbuf_t *buffer, lua_State *L) {
    buffer->L = L;
    buffer->capacity = 256;
    buffer->length = 0;
    buffer->data = lua_newuserdata(L, buffer->capacity);
    buffer->slot = lua_gettop(L);
}

/* Adopts the userdata on the stack top (a buffer kept from an earlier use) as the buffer. */
static inline void gr_strbuf_adopt(gr_strbuf_t *buffer, lua_State *L) {
    buffer->L = L;
    buffer->slot = lua_gettop(L);
    buffer->data = lua_touserdata(L, -1);
    buffer->capacity = lua_objlen(L, -1);
    buffer->length = 0;
}

static inline void gr_strbuf_reserve(gr_strbuf_t *buffer, size_t more) {
    if (buffer->capacity - buffer->length >= more) return;
    if (more > (size_t)-1 / 4 - buffer->length) luaL_error(buffer->L, "not enough memory");
    size_t capacity = buffer->capacity * 2;
    if (capacity < buffer->length + more) capacity = buffer->length + more;
    if (!lua_checkstack(buffer->L, 1)) luaL_error(buffer->L, "stack overflow");
    char *data = lua_newuserdata(buffer->L, capacity);
    memcpy(data, buffer->data, buffer->length);
    lua_replace(buffer->L, buffer->slot);
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
