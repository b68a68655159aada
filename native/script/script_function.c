/* script_function.c — Redis 7 functions (function.h): libraries loaded with FUNCTION LOAD,
 * their functions called with FCALL / FCALL_RO.
 *
 * The engine is a Lua state of its own (script_state.c's gr_scripting_new_detached: the same
 * libraries, sandbox and redis.* API as EVAL's, but apart from it, as Redis's function engine
 * has its own Lua), made at the first load and closed by FUNCTION FLUSH. A library's code is
 * "#!lua name=<lib>" then Lua; loading it runs the Lua once (chunk "@user_function", the
 * shebang line left out so line numbers count from it) with the thread's globals pointed at
 * the load API only — a read-only `redis` table holding register_function, log, LOG_* and
 * REDIS_VERSION(_NUM), anything else "Script attempted to access nonexistent global
 * variable" — exactly what Redis 7.0 lets a library see while it loads. register_function
 * (positional or the named table with function_name/callback/flags/description) adds to the
 * library being loaded; the callbacks are kept in the registry by reference.
 *
 * Libraries are kept in C (name, code, functions with their flags and description), in load
 * order, so a snapshot or AOF rewrite in a forked child reads them without the Lua state
 * (persist/ reaches them through gr_function_hooks, installed by a constructor here). Library
 * names are case-sensitive, function names are not (Redis's dictionaries).
 *
 * FCALL calls the function with two tables, keys and args, through script_eval.c's
 * gr_script_run (its effects framed MULTI ... EXEC like EVAL's; errors end " script: <name>,
 * on @user_function:<line>.") after the checks Redis makes: the function exists, OOM unless
 * allow-oom or no-writes, the disk error refusal and FCALL_RO unless no-writes.
 */
#include <ctype.h>
#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>

#include "core/alloc.h"
#include "core/glob.h"
#include "core/number.h"
#include "core/rdb_string.h"
#include "core/snapshot_io.h"
#include "persist/snapshot.h"
#include "script/function.h"
#include "script/script.h"
#include "script/script_internal.h"

enum {
    FLAG_NO_WRITES = 1, FLAG_ALLOW_OOM = 2, FLAG_ALLOW_STALE = 4, FLAG_NO_CLUSTER = 8, FLAG_ALLOW_CROSS_SLOT = 16,
};
static const struct { const char *name; uint32_t flag; } flag_names[] = {
    {"no-writes", FLAG_NO_WRITES}, {"allow-oom", FLAG_ALLOW_OOM}, {"allow-stale", FLAG_ALLOW_STALE},
    {"no-cluster", FLAG_NO_CLUSTER}, {"allow-cross-slot-keys", FLAG_ALLOW_CROSS_SLOT},
};
#define FLAG_NAME_COUNT (sizeof flag_names / sizeof flag_names[0])

#define RDB_OPCODE_FUNCTION 245   /* Redis's RDB_OPCODE_FUNCTION2: a library's code follows */
#define RDB_VERSION 10            /* Redis 7.0's */
#define LOAD_TIMEOUT_MS 500       /* a library's load runs this long at most, as Redis */

static const char NAME_ERROR[] =
    "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long";

typedef struct gr_function {
    char *name;
    uint8_t *description;        /* NULL: none */
    size_t description_length;
    uint32_t flags;
    int ref;                     /* the callback, in the engine's registry */
} gr_function_t;

typedef struct gr_library {
    char *name;
    uint8_t *code;               /* FUNCTION LOAD's whole code, shebang included */
    size_t code_length;
    gr_function_t *functions;
    size_t count, capacity;
} gr_library_t;

typedef struct gr_functions {
    gr_server_t *db;
    gr_scripting_t *engine;      /* the Lua state, NULL until a library loads */
    gr_library_t **libraries;    /* in load order */
    size_t count, capacity;
    int64_t function_count;
    gr_library_t *loading;       /* the library register_function adds to, while one loads */
    int64_t load_started_ms;
    int library_api_ref;         /* the load-time globals table, in the engine's registry */
} gr_functions_t;

/* ---- names ---- */

static int valid_name(const uint8_t *name, size_t length) {
    if (length == 0) return 0;
    for (size_t i = 0; i < length; i++)
        if (!isalnum(name[i]) && name[i] != '_') return 0;
    return 1;
}

static char *copy_text(const uint8_t *data, size_t length) {
    char *text = malloc(length + 1);
    if (!text) return NULL;
    memcpy(text, data, length);
    text[length] = '\0';
    return text;
}

static int64_t now_ms(void) {
    struct timeval now;
    gettimeofday(&now, NULL);
    return (int64_t)now.tv_sec * 1000 + now.tv_usec / 1000;
}

/* ---- the library set ---- */

static void free_library(gr_functions_t *fs, gr_library_t *library) {
    if (!library) return;
    for (size_t i = 0; i < library->count; i++) {
        if (fs->engine && library->functions[i].ref > 0) luaL_unref(fs->engine->L, LUA_REGISTRYINDEX, library->functions[i].ref);
        free(library->functions[i].name);
        free(library->functions[i].description);
    }
    free(library->functions);
    free(library->name);
    free(library->code);
    free(library);
}

static gr_library_t *find_library(const gr_functions_t *fs, const char *name, size_t length, size_t *at) {
    for (size_t i = 0; i < fs->count; i++) {
        if (strlen(fs->libraries[i]->name) == length && !memcmp(fs->libraries[i]->name, name, length)) {
            if (at) *at = i;
            return fs->libraries[i];
        }
    }
    return NULL;
}

/* nocase: the server-wide lookup (Redis's function dictionary ignores case); a library's own
 * check for a duplicate does not (its dictionary is case-sensitive: 'g' and 'G' may both load). */
static gr_function_t *find_in_library(const gr_library_t *library, const char *name, size_t length, int nocase) {
    for (size_t i = 0; i < library->count; i++)
        if (strlen(library->functions[i].name) == length &&
            !(nocase ? strncasecmp(library->functions[i].name, name, length) : memcmp(library->functions[i].name, name, length)))
            return &library->functions[i];
    return NULL;
}

/* The function so named in a library other than skip (NULL: any). */
static gr_function_t *find_function(const gr_functions_t *fs, const char *name, size_t length, const gr_library_t *skip) {
    for (size_t i = 0; i < fs->count; i++) {
        if (fs->libraries[i] == skip) continue;
        gr_function_t *function = find_in_library(fs->libraries[i], name, length, 1);
        if (function) return function;
    }
    return NULL;
}

static int append_library(gr_functions_t *fs, gr_library_t *library) {
    if (fs->count == fs->capacity) {
        size_t capacity = fs->capacity ? fs->capacity * 2 : 8;
        gr_library_t **grown = realloc(fs->libraries, capacity * sizeof *grown);
        if (!grown) return -1;
        fs->libraries = grown;
        fs->capacity = capacity;
    }
    fs->libraries[fs->count++] = library;
    fs->function_count += (int64_t)library->count;
    return 0;
}

static void remove_library_at(gr_functions_t *fs, size_t at) {
    fs->function_count -= (int64_t)fs->libraries[at]->count;
    free_library(fs, fs->libraries[at]);
    memmove(fs->libraries + at, fs->libraries + at + 1, (fs->count - at - 1) * sizeof *fs->libraries);
    fs->count--;
}

/* ---- the load API ---- */

static int load_error(lua_State *L, const char *text) {   /* Redis's luaPushError: a table {err = "ERR ..."} */
    lua_createtable(L, 0, 1);
    lua_pushliteral(L, "err");
    lua_pushfstring(L, "ERR %s", text);
    lua_rawset(L, -3);
    return lua_error(L);
}

static int read_flags(lua_State *L, int index, uint32_t *flags) {
    *flags = 0;
    for (int j = 1;; j++) {
        lua_rawgeti(L, index, j);
        if (lua_isnil(L, -1)) { lua_pop(L, 1); return 0; }
        if (!lua_isstring(L, -1)) { lua_pop(L, 1); return -1; }
        const char *flag = lua_tostring(L, -1);
        size_t k = 0;
        for (; k < FLAG_NAME_COUNT; k++)
            if (!strcasecmp(flag_names[k].name, flag)) break;
        lua_pop(L, 1);
        if (k == FLAG_NAME_COUNT) return -1;
        *flags |= flag_names[k].flag;
    }
}

/* redis.register_function(name, callback) or redis.register_function{function_name = ...,
 * callback = ..., flags = {...}, description = ...}. */
static int register_function(lua_State *L) {
    gr_functions_t *fs = lua_touserdata(L, lua_upvalueindex(1));
    if (!fs->loading) return load_error(L, "redis.register_function can only be called on FUNCTION LOAD command");
    int argc = lua_gettop(L);
    if (argc < 1 || argc > 2) return load_error(L, "wrong number of arguments to redis.register_function");
    const char *name = NULL, *description = NULL;
    size_t name_length = 0, description_length = 0;
    uint32_t flags = 0;
    int callback = 0;
    if (argc == 2) {
        if (!lua_isstring(L, 1)) return load_error(L, "first argument to redis.register_function must be a string");
        if (!lua_isfunction(L, 2)) return load_error(L, "second argument to redis.register_function must be a function");
        name = lua_tolstring(L, 1, &name_length);
        callback = 2;
    } else {
        if (!lua_istable(L, 1))
            return load_error(L, "calling redis.register_function with a single argument is only applicable to Lua table "
                                 "(representing named arguments).");
        lua_settop(L, 4);                     /* 2, 3, 4: the name, description and callback found */
        lua_pushnil(L);
        while (lua_next(L, 1)) {              /* 1: table; -2: key; -1: value */
            if (lua_type(L, -2) != LUA_TSTRING && lua_type(L, -2) != LUA_TNUMBER)
                return load_error(L, "named argument key given to redis.register_function is not a string");
            lua_pushvalue(L, -2);             /* a copy: tostring must not change the key lua_next reads */
            const char *key = lua_tostring(L, -1);
            int value = lua_gettop(L) - 1;
            if (!strcasecmp(key, "function_name")) {
                if (!lua_isstring(L, value))
                    return load_error(L, "function_name argument given to redis.register_function must be a string");
                lua_pushvalue(L, value);
                lua_replace(L, 2);
                name = lua_tolstring(L, 2, &name_length);
            } else if (!strcasecmp(key, "description")) {
                if (!lua_isstring(L, value))
                    return load_error(L, "description argument given to redis.register_function must be a string");
                lua_pushvalue(L, value);
                lua_replace(L, 3);
                description = lua_tolstring(L, 3, &description_length);
            } else if (!strcasecmp(key, "callback")) {
                if (!lua_isfunction(L, value))
                    return load_error(L, "callback argument given to redis.register_function must be a function");
                lua_pushvalue(L, value);
                lua_replace(L, 4);
                callback = 4;
            } else if (!strcasecmp(key, "flags")) {
                if (!lua_istable(L, value))
                    return load_error(L, "flags argument to redis.register_function must be a table representing function flags");
                if (read_flags(L, value, &flags) != 0) return load_error(L, "unknown flag given");
            } else {
                return load_error(L, "unknown argument given to redis.register_function");
            }
            lua_pop(L, 2);                    /* the key's copy and the value */
        }
        if (!name) return load_error(L, "redis.register_function must get a function name argument");
        if (!callback) return load_error(L, "redis.register_function must get a callback argument");
    }
    if (!valid_name((const uint8_t *)name, name_length)) return load_error(L, NAME_ERROR);
    gr_library_t *library = fs->loading;
    if (find_in_library(library, name, name_length, 0)) return load_error(L, "Function already exists in the library");
    if (library->count == library->capacity) {
        size_t capacity = library->capacity ? library->capacity * 2 : 4;
        gr_function_t *grown = realloc(library->functions, capacity * sizeof *grown);
        if (!grown) return load_error(L, "out of memory");
        library->functions = grown;
        library->capacity = capacity;
    }
    gr_function_t *function = &library->functions[library->count];
    *function = (gr_function_t){.flags = flags};
    function->name = copy_text((const uint8_t *)name, name_length);
    if (description) function->description = (uint8_t *)copy_text((const uint8_t *)description, description_length);
    if (!function->name || (description && !function->description)) {
        free(function->name);
        free(function->description);
        return load_error(L, "out of memory");
    }
    function->description_length = description_length;
    lua_pushvalue(L, callback);
    function->ref = luaL_ref(L, LUA_REGISTRYINDEX);
    library->count++;
    return 0;
}

/* The load API in the registry: {redis = {register_function, log, LOG_*, REDIS_VERSION(_NUM)}},
 * both read-only and a missing name an error. */
static int build_load_api(lua_State *L) {
    gr_functions_t *fs = lua_touserdata(L, 1);
    lua_createtable(L, 0, 1);                              /* api */
    lua_createtable(L, 0, 9);                              /* api redis */
    lua_pushlightuserdata(L, fs);
    lua_pushcclosure(L, register_function, 1);
    lua_setfield(L, -2, "register_function");
    static const char *const copied[] = {"log", "LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING",
                                         "REDIS_VERSION", "REDIS_VERSION_NUM", NULL};
    lua_getfield(L, LUA_GLOBALSINDEX, "redis");            /* the run-time redis (a proxy: reads go through) */
    for (int i = 0; copied[i]; i++) {
        lua_getfield(L, -1, copied[i]);
        lua_setfield(L, -3, copied[i]);
    }
    lua_pop(L, 1);
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, gr_script_missing_global);
    lua_setfield(L, -2, "__index");
    lua_setmetatable(L, -2);
    gr_script_make_readonly(L);
    lua_setfield(L, -2, "redis");
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, gr_script_missing_global);
    lua_setfield(L, -2, "__index");
    lua_setmetatable(L, -2);
    fs->library_api_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    return 0;
}

static gr_functions_t *functions_of(gr_server_t *db);

static void release(gr_server_t *db) {
    gr_functions_t *fs = db->functions;
    if (!fs) return;
    for (size_t i = 0; i < fs->count; i++) free_library(fs, fs->libraries[i]);
    free(fs->libraries);
    gr_scripting_free_detached(fs->engine);
    free(fs);
    db->functions = NULL;
}

static gr_functions_t *functions_of(gr_server_t *db) {
    if (db->functions) return db->functions;
    gr_functions_t *fs = calloc(1, sizeof *fs);
    if (!fs) return NULL;
    fs->db = db;
    db->functions = fs;
    db->functions_release = release;
    return fs;
}

/* The engine, made at the first load (NULL: out of memory). */
static gr_scripting_t *engine_of(gr_functions_t *fs) {
    if (fs->engine) return fs->engine;
    gr_scripting_t *engine = gr_scripting_new_detached(fs->db);
    if (!engine) return NULL;
    if (lua_cpcall(engine->L, build_load_api, fs) != 0) {
        gr_scripting_free_detached(engine);
        return NULL;
    }
    fs->engine = engine;
    return engine;
}

/* The thread's globals proxy reads through to table_ref's table (the load API) or, with
 * table_ref 0, to the real globals again. */
static void point_globals(lua_State *L, int table_ref) {
    if (!lua_getmetatable(L, LUA_GLOBALSINDEX)) return;
    if (table_ref) lua_rawgeti(L, LUA_REGISTRYINDEX, table_ref);
    else lua_getfield(L, LUA_REGISTRYINDEX, "gr_globals");
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
}

static void load_hook(lua_State *L, lua_Debug *ar) {
    (void)ar;
    lua_getfield(L, LUA_REGISTRYINDEX, "gr_function_set");
    gr_functions_t *fs = lua_touserdata(L, -1);
    lua_pop(L, 1);
    if (fs && now_ms() - fs->load_started_ms > LOAD_TIMEOUT_MS) {
        lua_sethook(L, load_hook, LUA_MASKLINE, 0);   /* (raised again at every line until it ends) */
        load_error(L, "FUNCTION LOAD timeout");
    }
}

/* ---- making a library ---- */

/* The shebang "#!<engine> name=<lib>" (Redis's metadata): 0 with the name and the body's
 * offset (at the line's '\n'), or -1 with Redis's error text. */
static int parse_metadata(const uint8_t *code, size_t length, const uint8_t **name, size_t *name_length, size_t *body,
                          char *error, size_t size) {
    if (length < 2 || code[0] != '#' || code[1] != '!') { snprintf(error, size, "Missing library metadata"); return -1; }
    const uint8_t *end = memchr(code, '\n', length);
    if (!end) { snprintf(error, size, "Invalid library metadata"); return -1; }
    size_t line = (size_t)(end - code), i = 0, part = 0;
    const uint8_t *engine = NULL;
    size_t engine_length = 0;
    *name = NULL;
    while (i < line) {
        while (i < line && isspace(code[i])) i++;
        if (i == line) break;
        size_t start = i;
        while (i < line && !isspace(code[i])) i++;
        if (part++ == 0) {
            engine = code + start + 2;
            engine_length = i - start - 2;
        } else if (i - start >= 5 && !strncasecmp((const char *)code + start, "name=", 5)) {
            if (*name) { snprintf(error, size, "Invalid metadata value, name argument was given multiple times"); return -1; }
            *name = code + start + 5;
            *name_length = i - start - 5;
        } else {
            snprintf(error, size, "Invalid metadata value given: %.*s", (int)(i - start), code + start);
            return -1;
        }
    }
    if (!*name) { snprintf(error, size, "Library name was not given"); return -1; }
    if (!valid_name(*name, *name_length)) { snprintf(error, size, "%s", NAME_ERROR); return -1; }
    if (engine_length != 3 || strncasecmp((const char *)engine, "lua", 3) != 0) {
        snprintf(error, size, "Engine '%.*s' not found", (int)engine_length, engine);
        return -1;
    }
    *body = line;
    return 0;
}

/* The library of code made (its functions registered, not yet in the set), or NULL with
 * error. check_exists: refuse a name already loaded ("Library 'x' already exists"). */
static gr_library_t *make_library(gr_functions_t *fs, const uint8_t *code, size_t length, int check_exists,
                                  char *error, size_t size) {
    const uint8_t *name = NULL;
    size_t name_length = 0, body = 0;
    if (parse_metadata(code, length, &name, &name_length, &body, error, size) != 0) return NULL;
    if (check_exists && find_library(fs, (const char *)name, name_length, NULL)) {
        snprintf(error, size, "Library '%.*s' already exists", (int)name_length, name);
        return NULL;
    }
    gr_scripting_t *engine = engine_of(fs);
    gr_library_t *library = calloc(1, sizeof *library);
    if (!engine || !library || !(library->name = copy_text(name, name_length)) ||
        !(library->code = malloc(length ? length : 1))) {
        free_library(fs, library);
        snprintf(error, size, "out of memory");
        return NULL;
    }
    memcpy(library->code, code, length);
    library->code_length = length;
    lua_State *L = engine->L;
    int top = lua_gettop(L);
    int status = luaL_loadbuffer(L, (const char *)code + body, length - body, "@user_function");
    if (status != 0) {
        const char *message = lua_tostring(L, -1);
        snprintf(error, size, "Error compiling function: %s", message ? message : "out of memory");
        lua_settop(L, top);
        free_library(fs, library);
        return NULL;
    }
    /* run it once against the load API, under a time limit (another hook, if set, comes back after) */
    lua_Hook old_hook = lua_gethook(L);
    int old_mask = lua_gethookmask(L), old_count = lua_gethookcount(L);
    lua_pushlightuserdata(L, fs);
    lua_setfield(L, LUA_REGISTRYINDEX, "gr_function_set");
    fs->loading = library;
    fs->load_started_ms = now_ms();
    point_globals(L, fs->library_api_ref);
    lua_sethook(L, load_hook, LUA_MASKCOUNT, 100000);
    engine->bounded = 1;
    status = lua_pcall(L, 0, 0, 0);
    engine->bounded = 0;
    lua_sethook(L, old_hook, old_mask, old_count);
    point_globals(L, 0);
    fs->loading = NULL;
    if (status != 0) {
        const char *message = NULL;
        char text[1024];
        if (lua_istable(L, -1)) {
            lua_getfield(L, -1, "err");
            message = lua_tostring(L, -1);
            snprintf(text, sizeof text, "%s", message ? message : "ERR unknown error");
        } else {
            message = lua_tostring(L, -1);
            snprintf(text, sizeof text, "ERR %s", message ? message : (status == LUA_ERRMEM ? "not enough memory" : "error"));
        }
        snprintf(error, size, "Error registering functions: %s", text);
        lua_settop(L, top);
        free_library(fs, library);
        if (status == LUA_ERRMEM) lua_gc(L, LUA_GCCOLLECT, 0);
        return NULL;
    }
    lua_settop(L, top);
    if (library->count == 0) {
        snprintf(error, size, "No functions registered");
        free_library(fs, library);
        return NULL;
    }
    return library;
}

/* FUNCTION LOAD's whole path (also a snapshot's libraries, with replace): 0, or -1 with error. */
static int load_code(gr_functions_t *fs, const uint8_t *code, size_t length, int replace, char **name_out, char *error,
                     size_t size) {
    gr_library_t *library = make_library(fs, code, length, !replace, error, size);
    if (!library) return -1;
    size_t old_at = 0;
    gr_library_t *old = find_library(fs, library->name, strlen(library->name), &old_at);
    for (size_t i = 0; i < library->count; i++) {
        if (find_function(fs, library->functions[i].name, strlen(library->functions[i].name), old)) {
            snprintf(error, size, "Function %s already exists", library->functions[i].name);
            free_library(fs, library);
            return -1;
        }
    }
    if (old) {   /* the new library takes the old one's place in the order */
        fs->function_count += (int64_t)library->count - (int64_t)old->count;
        free_library(fs, old);
        fs->libraries[old_at] = library;
    } else if (append_library(fs, library) != 0) {
        free_library(fs, library);
        snprintf(error, size, "out of memory");
        return -1;
    }
    if (name_out) *name_out = library->name;
    return 0;
}

/* ---- commands ---- */

void gr_function_load(gr_server_t *db, const uint8_t *code, size_t length, int replace, gr_reply_t *reply) {
    gr_functions_t *fs = functions_of(db);
    if (!fs) { gr_reply_oom(reply); return; }
    char error[1200];
    char *name;
    if (load_code(fs, code, length, replace, &name, error, sizeof error) != 0) {
        char text[1300];
        snprintf(text, sizeof text, "ERR %s", error);
        gr_script_reply_error(reply, text, strlen(text));
        return;
    }
    gr_db_count_changes(db, 1);
    gr_reply_bulk(reply, (const uint8_t *)name, strlen(name));
}

void gr_function_delete(gr_server_t *db, const uint8_t *name, size_t length, gr_reply_t *reply) {
    gr_functions_t *fs = db->functions;
    size_t at;
    if (!fs || !find_library(fs, (const char *)name, length, &at)) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR Library not found");
        return;
    }
    remove_library_at(fs, at);
    gr_db_count_changes(db, 1);
    gr_reply_ok(reply);
}

static void flush_libraries(gr_server_t *db) {
    gr_functions_t *fs = db->functions;
    if (fs) {
        for (size_t i = 0; i < fs->count; i++) free_library(fs, fs->libraries[i]);
        fs->count = 0;
        fs->function_count = 0;
        gr_scripting_free_detached(fs->engine);   /* a fresh state at the next load, as Redis */
        fs->engine = NULL;
        fs->library_api_ref = 0;
    }
}

void gr_function_flush(gr_server_t *db) {
    flush_libraries(db);
    gr_db_count_changes(db, 1);
}

static void reply_text(gr_reply_t *reply, const char *text) { gr_reply_bulk(reply, (const uint8_t *)text, strlen(text)); }

void gr_function_list(gr_server_t *db, const uint8_t *pattern, size_t pattern_length, int with_code, gr_reply_t *reply) {
    gr_functions_t *fs = db->functions;
    size_t count = 0, total = fs ? fs->count : 0;
    for (size_t i = 0; i < total; i++)
        if (!pattern || gr_glob_match(pattern, pattern_length, (const uint8_t *)fs->libraries[i]->name,
                                      strlen(fs->libraries[i]->name), 0))
            count++;
    gr_reply_array_begin(reply, count);
    for (size_t i = 0; i < total; i++) {
        const gr_library_t *library = fs->libraries[i];
        if (pattern && !gr_glob_match(pattern, pattern_length, (const uint8_t *)library->name, strlen(library->name), 0))
            continue;
        gr_reply_map_begin(reply, with_code ? 4 : 3);
        reply_text(reply, "library_name");
        reply_text(reply, library->name);
        reply_text(reply, "engine");
        reply_text(reply, "LUA");
        reply_text(reply, "functions");
        gr_reply_array_begin(reply, library->count);
        for (size_t j = 0; j < library->count; j++) {
            const gr_function_t *function = &library->functions[j];
            gr_reply_map_begin(reply, 3);
            reply_text(reply, "name");
            reply_text(reply, function->name);
            reply_text(reply, "description");
            if (function->description) gr_reply_bulk(reply, function->description, function->description_length);
            else gr_reply_nil(reply);
            reply_text(reply, "flags");
            size_t flags = 0;
            for (size_t k = 0; k < FLAG_NAME_COUNT; k++) flags += (function->flags & flag_names[k].flag) != 0;
            gr_reply_set_begin(reply, flags);
            for (size_t k = 0; k < FLAG_NAME_COUNT; k++)
                if (function->flags & flag_names[k].flag) gr_reply_status(reply, flag_names[k].name, strlen(flag_names[k].name));
        }
        if (with_code) {
            reply_text(reply, "library_code");
            gr_reply_bulk(reply, library->code, library->code_length);
        }
    }
}

static int write_dump_library(void *context, const uint8_t *code, size_t length) {
    gr_snapshot_writer_t *w = context;
    gr_snapshot_write_u8(w, RDB_OPCODE_FUNCTION);
    gr_rdb_write_length(w, length);
    gr_snapshot_write_raw(w, code, length);
    return w->oom ? -1 : 0;
}

static int each_library(gr_server_t *db, int (*write)(void *context, const uint8_t *code, size_t length), void *context) {
    gr_functions_t *fs = db->functions;
    for (size_t i = 0; fs && i < fs->count; i++) {
        int result = write(context, fs->libraries[i]->code, fs->libraries[i]->code_length);
        if (result != 0) return result;
    }
    return 0;
}

void gr_function_dump(gr_server_t *db, gr_reply_t *reply) {
    gr_snapshot_writer_t w;
    gr_snapshot_writer_init(&w, GR_MEM_OTHER);
    if (each_library(db, write_dump_library, &w) != 0 || gr_snapshot_seal(&w, RDB_VERSION) != 0) {
        gr_snapshot_writer_release(&w);
        gr_reply_oom(reply);
        return;
    }
    gr_reply_bulk(reply, w.data, w.length);
    gr_snapshot_writer_release(&w);
}

/* ---- reading Redis's payload ---- */

void gr_function_restore(gr_server_t *db, const uint8_t *payload, size_t length, int policy, gr_reply_t *reply) {
    uint16_t version;
    gr_snapshot_reader_t body;
    if (gr_snapshot_unseal(payload, length, &version, &body) != 0 || version > RDB_VERSION) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR DUMP payload version or checksum are wrong");
        return;
    }
    gr_functions_t *fs = functions_of(db);
    if (!fs) { gr_reply_oom(reply); return; }
    /* every library of the payload made first, apart from the set (as Redis's temporary set) */
    gr_library_t **made = NULL;
    size_t made_count = 0;
    char error[1200] = "";
    gr_rdb_reader_t r = {payload, length - 10, 0};
    while (r.at < r.length) {
        if (r.data[r.at++] != RDB_OPCODE_FUNCTION) { snprintf(error, sizeof error, "given type is not a function"); break; }
        uint8_t *code;
        size_t code_length;
        if (gr_rdb_read_string(&r, &code, &code_length) != 0) { snprintf(error, sizeof error, "Failed loading library payload"); break; }
        gr_library_t *library = make_library(fs, code, code_length, 0, error, sizeof error);
        free(code);
        if (!library) break;
        for (size_t i = 0; i < made_count && !error[0]; i++) {
            if (!strcmp(made[i]->name, library->name))
                snprintf(error, sizeof error, "Library '%s' already exists", library->name);
            for (size_t j = 0; j < library->count && !error[0]; j++)
                if (find_in_library(made[i], library->functions[j].name, strlen(library->functions[j].name), 1))
                    snprintf(error, sizeof error, "Function %s already exists", library->functions[j].name);
        }
        gr_library_t **grown = error[0] ? NULL : realloc(made, (made_count + 1) * sizeof *made);
        if (!grown) {
            if (!error[0]) snprintf(error, sizeof error, "out of memory");
            free_library(fs, library);
            break;
        }
        made = grown;
        made[made_count++] = library;
    }
    if (!error[0] && policy != 2) {   /* APPEND / REPLACE: Redis's libraryJoin checks */
        for (size_t i = 0; i < made_count && !error[0]; i++) {
            gr_library_t *old = find_library(fs, made[i]->name, strlen(made[i]->name), NULL);
            if (old && policy == 0) snprintf(error, sizeof error, "Library %s already exists", made[i]->name);
        }
        for (size_t i = 0; i < made_count && !error[0]; i++) {
            for (size_t j = 0; j < made[i]->count && !error[0]; j++) {
                gr_function_t *clash = NULL;
                for (size_t k = 0; k < fs->count && !clash; k++) {
                    int replaced = 0;
                    for (size_t m = 0; m < made_count; m++)
                        if (!strcmp(made[m]->name, fs->libraries[k]->name)) replaced = 1;
                    if (!replaced) clash = find_in_library(fs->libraries[k], made[i]->functions[j].name,
                                                           strlen(made[i]->functions[j].name), 1);
                }
                if (clash) snprintf(error, sizeof error, "Function %s already exists", made[i]->functions[j].name);
            }
        }
    }
    if (error[0]) {
        for (size_t i = 0; i < made_count; i++) free_library(fs, made[i]);
        free(made);
        char text[1300];
        snprintf(text, sizeof text, "ERR %s", error);
        gr_script_reply_error(reply, text, strlen(text));
        return;
    }
    if (policy == 2) {
        while (fs->count) remove_library_at(fs, fs->count - 1);
    } else {
        for (size_t i = 0; i < made_count; i++) {
            size_t at;
            if (find_library(fs, made[i]->name, strlen(made[i]->name), &at)) remove_library_at(fs, at);
        }
    }
    for (size_t i = 0; i < made_count; i++) {
        if (append_library(fs, made[i]) != 0) free_library(fs, made[i]);   /* (capacity: rare OOM) */
    }
    free(made);
    gr_db_count_changes(db, 1);
    gr_reply_ok(reply);
}

void gr_function_stats(gr_server_t *db, gr_reply_t *reply) {
    gr_functions_t *fs = db->functions;
    gr_reply_map_begin(reply, 2);
    reply_text(reply, "running_script");
    gr_reply_nil(reply);
    reply_text(reply, "engines");
    gr_reply_map_begin(reply, 1);
    reply_text(reply, "LUA");
    gr_reply_map_begin(reply, 2);
    reply_text(reply, "libraries_count");
    gr_reply_integer(reply, fs ? (int64_t)fs->count : 0);
    reply_text(reply, "functions_count");
    gr_reply_integer(reply, fs ? fs->function_count : 0);
}

void gr_function_kill(gr_server_t *db, gr_reply_t *reply) { gr_script_kill(db, 1, reply); }

static void push_strings(lua_State *L, size_t count, const uint8_t *const *values, const size_t *lengths) {
    lua_createtable(L, (int)count, 0);
    for (size_t i = 0; i < count; i++) {
        lua_pushlstring(L, (const char *)values[i], lengths[i]);
        lua_rawseti(L, -2, (int)i + 1);
    }
}

void gr_function_call(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                      gr_reply_t *reply, int read_only) {
    gr_functions_t *fs = db->functions;
    gr_function_t *function = fs && fs->engine ? find_function(fs, (const char *)argv[1], argv_length[1], NULL) : NULL;
    if (!function) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR Function not found");
        return;
    }
    uint32_t flags = function->flags;
    if (!(flags & (FLAG_ALLOW_OOM | FLAG_NO_WRITES)) && db->config.maxmemory > 0 &&
        gr_mem_used_total() > db->config.maxmemory) {
        gr_reply_error_text(reply, GR_ERR_OUT_OF_MEMORY, "OOM command not allowed when used memory > 'maxmemory'.");
        return;
    }
    if (!(flags & FLAG_NO_WRITES)) {
        char text[512];
        const char *refusal = gr_db_disk_error_refusal(db, text, sizeof text);
        if (refusal) {
            gr_reply_error_text(reply, GR_ERR_GENERIC, refusal);
            return;
        }
    }
    int64_t numkeys;
    if (gr_script_read_numkeys(argc, argv, argv_length, 1, &numkeys, reply) != 0) return;
    if (read_only && !(flags & FLAG_NO_WRITES)) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR Can not execute a script with write flag using *_ro command.");
        return;
    }
    gr_scripting_t *engine = fs->engine;
    if (engine->run) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR This Redis command is not allowed from script");
        return;
    }
    lua_State *L = engine->L;
    if (!lua_checkstack(L, 8)) { gr_reply_oom(reply); return; }
    lua_rawgeti(L, LUA_REGISTRYINDEX, function->ref);
    size_t keys = (size_t)numkeys;
    push_strings(L, keys, argv + 3, argv_length + 3);
    push_strings(L, argc - 3 - keys, argv + 3 + keys, argv_length + 3 + keys);
    char name[256];
    snprintf(name, sizeof name, "%s", function->name);
    gr_script_run(engine, name, (flags & FLAG_NO_WRITES) != 0, GR_BUSY_FUNCTION, 2, reply);
}

int64_t gr_function_library_count(const gr_server_t *db) { return db->functions ? (int64_t)db->functions->count : 0; }
int64_t gr_function_count(const gr_server_t *db) { return db->functions ? db->functions->function_count : 0; }

int64_t gr_function_vm_bytes(const gr_server_t *db) {
    return db->functions && db->functions->engine ? db->functions->engine->lua_bytes : 0;
}

int64_t gr_function_code_bytes(const gr_server_t *db) {
    const gr_functions_t *fs = db->functions;
    int64_t bytes = 0;
    for (size_t i = 0; fs && i < fs->count; i++) bytes += (int64_t)fs->libraries[i]->code_length + 64;
    return bytes;
}

/* ---- persist/'s hooks ---- */

static int load_hook_code(gr_server_t *db, const uint8_t *code, size_t length, char *error, size_t error_size) {
    gr_functions_t *fs = functions_of(db);
    if (!fs) { snprintf(error, error_size, "out of memory"); return -1; }
    return load_code(fs, code, length, 1, NULL, error, error_size);
}

static const gr_function_hooks_t hooks = {.each = each_library, .load = load_hook_code, .flush = flush_libraries};

__attribute__((constructor)) static void install_function_hooks(void) { gr_persist_set_function_hooks(&hooks); }
