/* lua_libraries.c — cjson, cmsgpack, bit and struct for the scripting sandbox (lua_libraries.h). */
#include "script/lib/lua_libraries.h"

void gr_lua_open_libraries(lua_State *L) {
    /* stub: replaced by branch issue-32-libs */
    (void)L;
}
