#include <lua.h>
/* Registers the globals cjson, cmsgpack, bit and struct (tables of functions, as Redis 7 loads them) in L. */
void gr_lua_open_libraries(lua_State *L);
