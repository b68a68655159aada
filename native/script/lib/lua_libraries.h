/* The four libraries Redis 7 loads into its Lua 5.1 environment — cjson, cmsgpack, bit and
 * struct — written here against Lua's C API to the libraries' documented behaviour, with
 * redis-server 7.0 as the reference (tests/test_lua_libraries.py runs one corpus of scripts,
 * tests/lua_library_cases.py, through both). Each library is one file beside this header
 * (lua_cjson.c, lua_cmsgpack.c, lua_bit.c, lua_struct.c); lua_libraries.c registers them.
 * They use only Lua's C API and libc/libm, and allocate only through Lua (userdata, buffers),
 * so Lua's allocator accounts for all of their memory. */
#ifndef GR_LUA_LIBRARIES_H
#define GR_LUA_LIBRARIES_H

#include <lua.h>

/* Registers the globals cjson, cmsgpack, bit and struct (tables of functions, as Redis 7 loads them) in L. */
void gr_lua_open_libraries(lua_State *L);

/* One library each: leaves its table on the stack (and sets its global), as luaopen_* does. */
int gr_luaopen_cjson(lua_State *L);
int gr_luaopen_cmsgpack(lua_State *L);
int gr_luaopen_bit(lua_State *L);
int gr_luaopen_struct(lua_State *L);

#endif
