/* script_api.c — the `redis` table scripts call (script.h): redis.call and redis.pcall through
 * the command table, and the rest of Redis 7's API (error_reply, status_reply, sha1hex, log,
 * setresp, set_repl, replicate_commands, breakpoint, debug, acl_check_cmd, the version and the
 * LOG_* / REPL_* constants), with Redis 7.0's error texts.
 *
 * An error is Redis's error table {err = "CODE message"}: redis.call raises it, redis.pcall
 * returns it. The texts passed here follow Redis's luaPushError: "-CODE message" keeps its code,
 * anything else gets "ERR ".
 */
#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/digest.h"
#include "exec/server_text.h"
#include "script/script.h"
#include "script/script_internal.h"

static gr_scripting_t *scripting_of(lua_State *L) { return lua_touserdata(L, lua_upvalueindex(1)); }

/* Push {err = text}, text as Redis's luaPushError reads it. */
static void push_error(lua_State *L, const char *text) {
    const char *space = text[0] == '-' ? strchr(text, ' ') : NULL;
    lua_createtable(L, 0, 1);
    if (text[0] != '-') {
        lua_pushfstring(L, "ERR %s", text);
    } else if (!space) {
        lua_pushfstring(L, "ERR %s", text + 1);
    } else {
        lua_pushstring(L, text + 1);
    }
    /* no newline at the end: the table's text is one line */
    size_t length;
    const char *message = lua_tolstring(L, -1, &length);
    while (length && (message[length - 1] == '\r' || message[length - 1] == '\n')) length--;
    lua_pushlstring(L, message, length);
    lua_remove(L, -2);
    lua_setfield(L, -2, "err");
}

static int raise_error(lua_State *L, const char *text) {
    push_error(L, text);
    return lua_error(L);
}

/* redis.call / redis.pcall: argv from the arguments (strings, or numbers as Redis formats
 * them), Redis's checks for a command run from a script, then the command itself. */
static int call_command(lua_State *L, int raise) {
    gr_scripting_t *s = scripting_of(L);
    int argc = lua_gettop(L);
    const char *refusal = NULL;
    if (argc == 0) {
        refusal = "Please specify at least one argument for this redis lib call";
    } else if ((size_t)argc > s->argv_capacity) {
        size_t capacity = (size_t)argc * 2;
        const uint8_t **argv = realloc(s->argv, capacity * sizeof *argv);
        if (argv) s->argv = argv;
        size_t *lengths = realloc(s->argv_length, capacity * sizeof *lengths);
        if (lengths) s->argv_length = lengths;
        char *numbers = realloc(s->number_text, capacity * 32);
        if (numbers) s->number_text = numbers;
        if (argv && lengths && numbers) s->argv_capacity = capacity;
        else refusal = "-OOM command not allowed when used memory > 'maxmemory'.";
    }
    for (int j = 0; !refusal && j < argc; j++) {
        int type = lua_type(L, j + 1);
        if (type == LUA_TNUMBER) {
            char *text = s->number_text + (size_t)j * 32;
            int n = snprintf(text, 32, "%.17g", (double)lua_tonumber(L, j + 1));
            s->argv[j] = (const uint8_t *)text;
            s->argv_length[j] = (size_t)n;
        } else if (type == LUA_TSTRING) {
            size_t length;
            s->argv[j] = (const uint8_t *)lua_tolstring(L, j + 1, &length);
            s->argv_length[j] = length;
        } else {
            refusal = "Lua redis lib command arguments must be strings or integers";
        }
    }
    int index = -1;
    uint32_t flags = 0;
    if (!refusal) {
        gr_build_error_t error;
        index = gr_command_lookup((size_t)argc, s->argv, s->argv_length, &error);
        if (index < 0)
            refusal = error.code == GR_ERR_WRONG_ARITY ? "Wrong number of args calling Redis command from script"
                                                       : "Unknown Redis command called from script";
    }
    if (!refusal) {
        flags = gr_command_call_flags(index, (size_t)argc, s->argv, s->argv_length);
        if (flags & GR_CMD_FLAG_NOSCRIPT) refusal = "This Redis command is not allowed from script";
        else if ((flags & GR_CMD_FLAG_WRITE) && s->run && s->run->read_only)
            refusal = "Write commands are not allowed from read-only scripts.";
    }
    if (refusal) {
        if (raise) return raise_error(L, refusal);
        push_error(L, refusal);
        return 1;
    }
    /* a write command called makes the script unkillable (SCRIPT KILL), whatever it changed,
     * as Redis's SCRIPT_WRITE_DIRTY */
    if (s->run && (flags & GR_CMD_FLAG_WRITE)) s->run->wrote = 1;
    gr_script_run_command(s, (size_t)argc, s->argv, s->argv_length);
    if (raise && lua_istable(L, -1)) {   /* an error reply is raised */
        lua_getfield(L, -1, "err");
        int is_error = lua_type(L, -1) == LUA_TSTRING;
        lua_pop(L, 1);
        if (is_error) return lua_error(L);
    }
    return 1;
}

static int redis_call(lua_State *L) { return call_command(L, 1); }
static int redis_pcall(lua_State *L) { return call_command(L, 0); }

static int redis_error_reply(lua_State *L) {
    if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
        push_error(L, "wrong number or type of arguments");
        return 1;
    }
    const char *text = lua_tostring(L, 1);
    if (text[0] == '-') {
        push_error(L, text);
    } else {
        lua_pushfstring(L, "-%s", text);
        push_error(L, lua_tostring(L, -1));
    }
    return 1;
}

static int redis_status_reply(lua_State *L) {
    if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
        push_error(L, "wrong number or type of arguments");
        return 1;
    }
    lua_createtable(L, 0, 1);
    lua_pushvalue(L, 1);
    lua_setfield(L, -2, "ok");
    return 1;
}

static int redis_sha1hex(lua_State *L) {
    if (lua_gettop(L) != 1) return raise_error(L, "wrong number of arguments");
    size_t length;
    const char *data = lua_tolstring(L, 1, &length);
    uint8_t digest[GR_DIGEST_BYTES];
    gr_sha1((const uint8_t *)(data ? data : ""), data ? length : 0, digest);
    char hex[41];
    for (int i = 0; i < 20; i++) snprintf(hex + 2 * i, 3, "%02x", digest[i]);
    lua_pushlstring(L, hex, 40);
    return 1;
}

static int redis_log(lua_State *L) {
    gr_scripting_t *s = scripting_of(L);
    int argc = lua_gettop(L);
    if (argc < 2) return raise_error(L, "redis.log() requires two arguments or more.");
    if (!lua_isnumber(L, 1)) return raise_error(L, "First argument must be a number");
    int level = (int)lua_tonumber(L, 1);
    if (level < 0 || level > 3) return raise_error(L, "Invalid debug level.");
    luaL_Buffer buffer;
    luaL_buffinit(L, &buffer);
    for (int j = 2; j <= argc; j++) {
        size_t length;
        const char *text = lua_tolstring(L, j, &length);
        if (!text) continue;
        if (j > 2) luaL_addchar(&buffer, ' ');
        luaL_addlstring(&buffer, text, length);
    }
    luaL_pushresult(&buffer);
    if (s->db->log_line && level >= 2)   /* loglevel notice: debug and verbose lines are not kept */
        s->db->log_line(s->db->log_context, lua_tostring(L, -1));
    return 0;
}

static int redis_setresp(lua_State *L) {
    gr_scripting_t *s = scripting_of(L);
    if (lua_gettop(L) != 1) return raise_error(L, "redis.setresp() requires one argument.");
    int resp = (int)lua_tonumber(L, 1);
    if (resp != 2 && resp != 3) return raise_error(L, "RESP version must be 2 or 3.");
    if (s->run) s->run->resp = (uint8_t)resp;
    return 0;
}

static int redis_set_repl(lua_State *L) {
    if (lua_gettop(L) != 1) return raise_error(L, "redis.set_repl() requires one argument.");
    int flags = (int)lua_tonumber(L, 1);
    if ((flags & ~3) != 0) return raise_error(L, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.");
    return 0;   /* the effects always reach the append-only file (there are no replicas yet) */
}

static int redis_replicate_commands(lua_State *L) {
    lua_pushboolean(L, 1);   /* Redis 7: effects are always what is replicated */
    return 1;
}

static int redis_breakpoint(lua_State *L) {
    lua_pushboolean(L, 0);   /* no debugger session */
    return 1;
}

static int redis_debug(lua_State *L) {
    (void)L;
    return 0;   /* no debugger session: nothing to print to */
}

static int redis_acl_check_cmd(lua_State *L) {
    gr_scripting_t *s = scripting_of(L);
    int argc = lua_gettop(L);
    if (argc == 0) return raise_error(L, "Please specify at least one argument for this redis lib call");
    size_t length;
    const char *name = lua_tolstring(L, 1, &length);
    if (!name || gr_command_index((const uint8_t *)name, length) < 0)
        return raise_error(L, "Invalid command passed to redis.acl_check_cmd()");
    (void)s;
    lua_pushboolean(L, 1);   /* no ACL users: the default user may run everything */
    return 1;
}

static void set_number(lua_State *L, const char *name, lua_Number value) {
    lua_pushnumber(L, value);
    lua_setfield(L, -2, name);
}

void gr_script_open_redis_api(lua_State *L, gr_scripting_t *s) {
    static const struct { const char *name; lua_CFunction function; } functions[] = {
        {"call", redis_call}, {"pcall", redis_pcall}, {"error_reply", redis_error_reply},
        {"status_reply", redis_status_reply}, {"sha1hex", redis_sha1hex}, {"log", redis_log},
        {"setresp", redis_setresp}, {"set_repl", redis_set_repl}, {"replicate_commands", redis_replicate_commands},
        {"breakpoint", redis_breakpoint}, {"debug", redis_debug}, {"acl_check_cmd", redis_acl_check_cmd},
    };
    lua_createtable(L, 0, 24);
    for (size_t i = 0; i < sizeof functions / sizeof functions[0]; i++) {
        lua_pushlightuserdata(L, s);
        lua_pushcclosure(L, functions[i].function, 1);
        lua_setfield(L, -2, functions[i].name);
    }
    lua_pushstring(L, GR_REDIS_COMPATIBLE_VERSION);
    lua_setfield(L, -2, "REDIS_VERSION");
    int major = 0, minor = 0, patch = 0;
    sscanf(GR_REDIS_COMPATIBLE_VERSION, "%d.%d.%d", &major, &minor, &patch);
    set_number(L, "REDIS_VERSION_NUM", (lua_Number)((major << 16) | (minor << 8) | patch));
    set_number(L, "LOG_DEBUG", 0);
    set_number(L, "LOG_VERBOSE", 1);
    set_number(L, "LOG_NOTICE", 2);
    set_number(L, "LOG_WARNING", 3);
    set_number(L, "REPL_NONE", 0);
    set_number(L, "REPL_AOF", 1);
    set_number(L, "REPL_SLAVE", 2);
    set_number(L, "REPL_REPLICA", 2);
    set_number(L, "REPL_ALL", 3);
    lua_setfield(L, LUA_GLOBALSINDEX, "redis");
}
