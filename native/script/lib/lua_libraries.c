/* Registers the four libraries Redis 7 loads — cjson, cmsgpack, bit, struct — as globals of a
 * Lua state (the interface between these libraries and the scripting runtime; see
 * lua_libraries.h). Each library's code is its own file here. */
#include "script/lib/lua_libraries.h"

void gr_lua_open_libraries(lua_State *L) {
    lua_CFunction openers[] = {gr_luaopen_cjson, gr_luaopen_struct, gr_luaopen_cmsgpack, gr_luaopen_bit};
    for (size_t index = 0; index < sizeof openers / sizeof openers[0]; index++) {
        lua_pushcfunction(L, openers[index]);
        lua_call(L, 0, 1);
        lua_pop(L, 1);
    }
}
