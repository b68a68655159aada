/* script_state.c — the Lua state scripts run in (script.h): its counting allocator, the
 * libraries Redis 7 loads, the sandbox, and Redis's math.random.
 *
 * The sandbox as Redis 7.0 has it, on the stock Lua 5.1 (Redis patches its Lua to mark tables
 * read-only; Debian's liblua5.1 has no such flag, so read-only is made with proxies):
 *   - the real globals table G holds everything; the thread's globals are a proxy P whose
 *     __index is G (a plain table lookup, the fast path) and whose __newindex raises "Attempt
 *     to modify a readonly table"; G's own metatable raises "Script attempted to access
 *     nonexistent global variable 'x'" for a name it lacks. G._G is P, so `_G.x = 1` is refused
 *     too, and every function loaded (the scripts, loadstring's) sees P;
 *   - each library table (string, math, table, coroutine, redis, and cjson, cmsgpack, bit,
 *     struct from lib/) is replaced in G by a proxy of its own, as is string's metatable
 *     __index, so `string.x = 1` is refused;
 *   - rawset, setmetatable, rawget, next and pairs see through the proxies (rawset and
 *     setmetatable refuse them with Redis's text, next and pairs iterate what they stand for);
 *   - dofile, loadfile, print, getfenv, setfenv, newproxy, module/require and debug are absent,
 *     as in Redis 7.0 (reading one is the nonexistent-global error);
 *   - math.random and math.randomseed are Redis's: the 48-bit linear congruential generator of
 *     its rand.c (x' = 0x5DEECE66D x + 11 mod 2^48, from 0x1234ABCD330E; randomseed(s) restarts
 *     it at s << 16 | 0x330E), so a fresh server gives Redis's sequence. Like Redis 7, the
 *     generator is not reseeded for every script: scripts replicate their effects.
 * KEYS and ARGV are plain tables in G, set for each run.
 *
 * The allocator counts the state's bytes (INFO used_memory_lua) and, while script code runs
 * (inside lua_pcall: script_eval.c sets s->bounded), refuses to grow it past maxmemory (with
 * the dataset's bytes), so a script that allocates without bound gets Lua's "not enough
 * memory" instead of the host's OOM killer. It never fails outside a protected call (Lua
 * would panic) nor while a command called by redis.call runs (a Lua error must not unwind
 * through C).
 */
#include <lauxlib.h>
#include <lualib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "script/lib/lua_libraries.h"
#include "script/script.h"
#include "script/script_internal.h"

#define READONLY_MARK "__gr_readonly"
#define LUA_MIN_BYTES (4 << 20)   /* the state may always grow to this much */

static void *lua_alloc(void *context, void *ptr, size_t old_size, size_t new_size) {
    gr_scripting_t *s = context;
    if (new_size == 0) {
        if (ptr) s->lua_bytes -= (int64_t)old_size;
        free(ptr);
        return NULL;
    }
    if (ptr == NULL) old_size = 0;
    if (new_size > old_size && s->bounded && !s->in_command && s->db->config.maxmemory > 0 &&
        s->lua_bytes > LUA_MIN_BYTES &&
        gr_mem_used_total() + s->lua_bytes + (int64_t)(new_size - old_size) > s->db->config.maxmemory)
        return NULL;
    void *grown = realloc(ptr, new_size);
    if (!grown) return NULL;
    s->lua_bytes += (int64_t)new_size - (int64_t)old_size;
    return grown;
}

/* ---- read-only tables ---- */

static int readonly_error_here(lua_State *L) {   /* __newindex: "user_script:1: Attempt ..." */
    return luaL_error(L, "Attempt to modify a readonly table");
}

static int readonly_error(lua_State *L) {        /* rawset, setmetatable: no position, as Redis */
    lua_pushstring(L, "Attempt to modify a readonly table");
    return lua_error(L);
}

int gr_script_missing_global(lua_State *L) {
    const char *name = lua_tostring(L, 2);
    return luaL_error(L, "Script attempted to access nonexistent global variable '%s'", name ? name : "?");
}

/* The table a read-only proxy at index stands for, pushed; 0 (nothing pushed) when it is none. */
static int push_target(lua_State *L, int index) {
    if (!lua_istable(L, index) || !lua_getmetatable(L, index)) return 0;
    lua_getfield(L, -1, READONLY_MARK);
    int marked = lua_toboolean(L, -1);
    lua_pop(L, 1);
    if (!marked) { lua_pop(L, 1); return 0; }
    lua_getfield(L, -1, "__index");
    lua_remove(L, -2);
    return 1;
}

/* A proxy for the table at the top of the stack, which it replaces. */
void gr_script_make_readonly(lua_State *L) {
    lua_newtable(L);                       /* target proxy */
    lua_createtable(L, 0, 4);              /* target proxy meta */
    lua_pushvalue(L, -3);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, readonly_error_here);
    lua_setfield(L, -2, "__newindex");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, READONLY_MARK);
    lua_setmetatable(L, -2);
    lua_remove(L, -2);
}

static int sandbox_rawset(lua_State *L) {
    if (push_target(L, 1)) return readonly_error(L);
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checkany(L, 2);
    luaL_checkany(L, 3);
    lua_settop(L, 3);
    lua_rawset(L, 1);
    return 1;
}

static int sandbox_rawget(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checkany(L, 2);
    if (push_target(L, 1)) lua_replace(L, 1);
    lua_settop(L, 2);
    lua_rawget(L, 1);
    return 1;
}

static int sandbox_setmetatable(lua_State *L) {
    if (push_target(L, 1)) return readonly_error(L);
    lua_pushvalue(L, lua_upvalueindex(1));   /* the base library's setmetatable */
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

static int sandbox_next(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    if (push_target(L, 1)) lua_replace(L, 1);
    lua_settop(L, 2);
    if (lua_next(L, 1)) return 2;
    lua_pushnil(L);
    return 1;
}

static int sandbox_pairs(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_pushvalue(L, lua_upvalueindex(1));   /* next */
    lua_pushvalue(L, 1);
    lua_pushnil(L);
    return 3;
}

/* ---- math.random as Redis ---- */

static uint64_t next_random(gr_scripting_t *s) {
    s->random_state = (0x5DEECE66DULL * s->random_state + 0xB) & ((1ULL << 48) - 1);
    return s->random_state >> 17;   /* 31 bits, as lrand48 */
}

static int math_random(lua_State *L) {
    gr_scripting_t *s = lua_touserdata(L, lua_upvalueindex(1));
    lua_Number r = (lua_Number)(next_random(s) % 2147483647) / (lua_Number)2147483647;
    switch (lua_gettop(L)) {
    case 0:
        lua_pushnumber(L, r);
        break;
    case 1: {
        int upper = luaL_checkint(L, 1);
        luaL_argcheck(L, 1 <= upper, 1, "interval is empty");
        lua_pushnumber(L, floor(r * upper) + 1);
        break;
    }
    case 2: {
        int lower = luaL_checkint(L, 1), upper = luaL_checkint(L, 2);
        luaL_argcheck(L, lower <= upper, 2, "interval is empty");
        lua_pushnumber(L, floor(r * (upper - lower + 1)) + lower);
        break;
    }
    default:
        return luaL_error(L, "wrong number of arguments");
    }
    return 1;
}

static int math_randomseed(lua_State *L) {
    gr_scripting_t *s = lua_touserdata(L, lua_upvalueindex(1));
    uint32_t seed = (uint32_t)luaL_checkint(L, 1);
    s->random_state = ((uint64_t)seed << 16) | 0x330E;
    return 0;
}

/* ---- the state ---- */

static void open_library(lua_State *L, lua_CFunction open, const char *name) {
    lua_pushcfunction(L, open);
    lua_pushstring(L, name);
    lua_call(L, 1, 0);
}

static void set_global_function(lua_State *L, const char *name, lua_CFunction function, int upvalues) {
    lua_pushcclosure(L, function, upvalues);
    lua_setfield(L, LUA_GLOBALSINDEX, name);
}

void gr_script_protect_globals(lua_State *L) {
    static const char *const removed[] = {"dofile", "loadfile", "print", "getfenv", "setfenv", "newproxy",
                                          "module", "require", "debug", "package", "os", "io", NULL};
    for (int i = 0; removed[i]; i++) {
        lua_pushnil(L);
        lua_setfield(L, LUA_GLOBALSINDEX, removed[i]);
    }
    /* the proxies' helpers, before the libraries become proxies */
    lua_getfield(L, LUA_GLOBALSINDEX, "setmetatable");
    set_global_function(L, "setmetatable", sandbox_setmetatable, 1);
    set_global_function(L, "rawset", sandbox_rawset, 0);
    set_global_function(L, "rawget", sandbox_rawget, 0);
    set_global_function(L, "next", sandbox_next, 0);
    lua_getfield(L, LUA_GLOBALSINDEX, "next");
    set_global_function(L, "pairs", sandbox_pairs, 1);
    static const char *const libraries[] = {"string", "math", "table", "coroutine", "redis",
                                            "cjson", "cmsgpack", "bit", "struct", NULL};
    for (int i = 0; libraries[i]; i++) {
        lua_getfield(L, LUA_GLOBALSINDEX, libraries[i]);
        if (!lua_istable(L, -1)) { lua_pop(L, 1); continue; }
        gr_script_make_readonly(L);
        if (!strcmp(libraries[i], "string")) {   /* ("").x reads through the same proxy */
            lua_pushliteral(L, "");
            if (lua_getmetatable(L, -1)) {
                lua_pushvalue(L, -3);
                lua_setfield(L, -2, "__index");
                lua_pop(L, 1);
            }
            lua_pop(L, 1);
        }
        lua_setfield(L, LUA_GLOBALSINDEX, libraries[i]);
    }
    /* G: a missing name is an error; the thread's globals become P, G._G too */
    lua_pushvalue(L, LUA_GLOBALSINDEX);                 /* G */
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, gr_script_missing_global);
    lua_setfield(L, -2, "__index");
    lua_setmetatable(L, -2);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, "gr_globals"); /* the real table, for KEYS and ARGV */
    gr_script_make_readonly(L);                                      /* P */
    lua_getfield(L, LUA_REGISTRYINDEX, "gr_globals");
    lua_pushliteral(L, "_G");
    lua_pushvalue(L, -3);
    lua_rawset(L, -3);
    lua_pop(L, 1);
    lua_replace(L, LUA_GLOBALSINDEX);
}

static int build_state(lua_State *L) {
    gr_scripting_t *s = lua_touserdata(L, 1);
    open_library(L, luaopen_base, "");
    open_library(L, luaopen_table, LUA_TABLIBNAME);
    open_library(L, luaopen_string, LUA_STRLIBNAME);
    open_library(L, luaopen_math, LUA_MATHLIBNAME);
    gr_lua_open_libraries(L);
    lua_getfield(L, LUA_GLOBALSINDEX, "tostring");
    lua_setfield(L, LUA_REGISTRYINDEX, "gr_tostring");   /* the error handler's */
    lua_getfield(L, LUA_GLOBALSINDEX, "math");
    lua_pushlightuserdata(L, s);
    lua_pushcclosure(L, math_random, 1);
    lua_setfield(L, -2, "random");
    lua_pushlightuserdata(L, s);
    lua_pushcclosure(L, math_randomseed, 1);
    lua_setfield(L, -2, "randomseed");
    lua_pop(L, 1);
    gr_script_open_redis_api(L, s);
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, "gr_scripts");   /* sha -> compiled function */
    gr_script_protect_globals(L);
    return 0;
}

static int open_state(gr_scripting_t *s) {
    s->bounded = 0;
    s->error_handler_ref = 0;
    s->lua_bytes = 0;
    s->cached = 0;
    s->cached_bytes = 0;
    s->L = lua_newstate(lua_alloc, s);
    if (!s->L) return -1;
    if (lua_cpcall(s->L, build_state, s) != 0) {
        lua_close(s->L);
        s->L = NULL;
        return -1;
    }
    return 0;
}

gr_scripting_t *gr_scripting_new_detached(gr_server_t *db) {
    gr_scripting_t *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->db = db;
    s->random_state = 0x1234ABCD330EULL;
    if (open_state(s) != 0) {
        free(s);
        return NULL;
    }
    return s;
}

void gr_scripting_free_detached(gr_scripting_t *s) {
    if (!s) return;
    if (s->L) lua_close(s->L);
    free(s->argv);
    free(s->argv_length);
    free(s->number_text);
    free(s);
}

/* EVAL's state is a detached one hung off the server, freed with it. */
static void release(gr_server_t *db) {
    gr_scripting_free_detached(db->scripting);
    db->scripting = NULL;
}

gr_scripting_t *gr_scripting_get(gr_server_t *db) {
    if (db->scripting) return db->scripting;
    gr_scripting_t *s = gr_scripting_new_detached(db);
    if (!s) return NULL;
    db->scripting = s;
    db->scripting_release = release;
    return s;
}

void gr_scripting_reset(gr_server_t *db) {
    gr_scripting_t *s = db->scripting;
    if (!s || s->run) return;
    lua_close(s->L);
    s->L = NULL;
    if (open_state(s) != 0) release(db);
}

int64_t gr_script_cached_count(const gr_server_t *db) { return db->scripting ? db->scripting->cached : 0; }
int64_t gr_script_cache_bytes(const gr_server_t *db) { return db->scripting ? db->scripting->cached_bytes : 0; }

int64_t gr_script_memory(const gr_server_t *db) { return db->scripting ? db->scripting->lua_bytes : 0; }
