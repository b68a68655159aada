/* script_eval.c — running scripts (script.h): the cache by SHA1, EVAL/EVALSHA and their _RO
 * forms, the shebang, Redis 7.0's error texts, and SCRIPT LOAD/EXISTS/FLUSH.
 *
 * A script is compiled once (chunk name "@user_script", so errors read "user_script:1: ...")
 * and kept in the registry table gr_scripts under its SHA1 (lower-case hex); SCRIPT FLUSH
 * makes a fresh Lua state. A run sets KEYS and ARGV in the real globals, calls the function
 * under an error handler that turns any error into Redis's error table with the source line,
 * and converts the result. While it runs:
 *   - the command's own call states no effect, and the commands the script calls are framed
 *     as one transaction in the effect stream (MULTI ... EXEC, exec/propagate.h), so the
 *     append-only file gets the script's effects, as Redis 7 replicates them;
 *   - blocking commands do not block (db->serve_deferred, as inside EXEC), and waiters are
 *     served after the script;
 *   - SELECT inside the script changes the script's database, not the caller's.
 * An error becomes Redis's reply: the error table's text, then " script: <sha>, on
 * @user_script:<line>." when the handler found the line.
 */
#include <ctype.h>
#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/digest.h"
#include "core/number.h"
#include "script/script.h"
#include "script/script_internal.h"

#define GC_PERIOD 50   /* a step of Lua's collector every this many runs, as Redis */

enum {
    SCRIPT_FLAG_NO_WRITES = 1, SCRIPT_FLAG_ALLOW_OOM = 2, SCRIPT_FLAG_ALLOW_STALE = 4, SCRIPT_FLAG_NO_CLUSTER = 8,
    SCRIPT_FLAG_ALLOW_CROSS_SLOT = 16, SCRIPT_FLAG_SHEBANG = 32,
};

static void sha1_hex(const uint8_t *data, size_t length, char out[41]) {
    uint8_t digest[GR_DIGEST_BYTES];
    gr_sha1(data, length, digest);
    for (int i = 0; i < 20; i++) snprintf(out + 2 * i, 3, "%02x", digest[i]);
}

/* "#!lua [flags=a,b] ..." on the first line: its flags, or -1 with Redis's error text. */
static int parse_shebang(const uint8_t *body, size_t length, uint32_t *flags, char *error, size_t size) {
    *flags = 0;
    if (length < 2 || body[0] != '#' || body[1] != '!') return 0;
    const uint8_t *end = memchr(body, '\n', length);
    if (!end) { snprintf(error, size, "ERR Invalid script shebang"); return -1; }
    *flags = SCRIPT_FLAG_SHEBANG;
    size_t line_length = (size_t)(end - body), i = 0, part = 0;
    while (i < line_length) {
        while (i < line_length && isspace(body[i])) i++;
        if (i == line_length) break;
        size_t start = i;
        while (i < line_length && !isspace(body[i])) i++;
        const char *word = (const char *)body + start;
        int n = (int)(i - start);
        if (part++ == 0) {
            if (n != 5 || memcmp(word, "#!lua", 5) != 0) {
                snprintf(error, size, "ERR Unexpected engine in script shebang: %.*s", n, word);
                return -1;
            }
        } else if (n >= 6 && !memcmp(word, "flags=", 6)) {
            static const struct { const char *name; uint32_t flag; } names[] = {
                {"no-writes", SCRIPT_FLAG_NO_WRITES}, {"allow-oom", SCRIPT_FLAG_ALLOW_OOM},
                {"allow-stale", SCRIPT_FLAG_ALLOW_STALE}, {"no-cluster", SCRIPT_FLAG_NO_CLUSTER},
                {"allow-cross-slot-keys", SCRIPT_FLAG_ALLOW_CROSS_SLOT},
            };
            size_t at = 6;
            while (at < (size_t)n) {
                size_t comma = at;
                while (comma < (size_t)n && word[comma] != ',') comma++;
                size_t k = 0;
                for (; k < sizeof names / sizeof names[0]; k++)
                    if (strlen(names[k].name) == comma - at && !memcmp(names[k].name, word + at, comma - at)) break;
                if (k == sizeof names / sizeof names[0]) {
                    snprintf(error, size, "ERR Unexpected flag in script shebang: %.*s", (int)(comma - at), word + at);
                    return -1;
                }
                *flags |= names[k].flag;
                at = comma + 1;
            }
        } else {
            snprintf(error, size, "ERR Unknown lua shebang option: %.*s", n, word);
            return -1;
        }
    }
    return 0;
}

/* The cached function for sha pushed, with its flags; 0 when it is not cached (nothing pushed). */
static int push_cached(lua_State *L, const char *sha, uint32_t *flags) {
    lua_getfield(L, LUA_REGISTRYINDEX, "gr_scripts");
    lua_getfield(L, -1, sha);
    if (!lua_istable(L, -1)) { lua_pop(L, 2); return 0; }
    lua_rawgeti(L, -1, 2);
    *flags = (uint32_t)lua_tonumber(L, -1);
    lua_pop(L, 1);
    lua_rawgeti(L, -1, 1);
    lua_replace(L, -3);
    lua_pop(L, 1);
    return 1;
}

/* Compile body and cache it under sha; the function pushed. -1 with the error written. */
static int compile(gr_scripting_t *s, const uint8_t *body, size_t length, const char *sha, uint32_t *flags,
                   gr_reply_t *reply) {
    char error[256];
    if (parse_shebang(body, length, flags, error, sizeof error) != 0) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, error);
        return -1;
    }
    lua_State *L = s->L;
    int status;
    if (*flags & SCRIPT_FLAG_SHEBANG) {   /* the shebang line becomes a comment: line numbers stay */
        char *copy = malloc(length);
        if (!copy) { gr_reply_oom(reply); return -1; }
        memcpy(copy, body, length);
        copy[0] = copy[1] = '-';
        status = luaL_loadbuffer(L, copy, length, "@user_script");
        free(copy);
    } else {
        status = luaL_loadbuffer(L, (const char *)body, length, "@user_script");
    }
    if (status != 0) {
        const char *message = lua_tostring(L, -1);
        char *text = malloc(strlen(message ? message : "") + 64);
        if (text) {
            sprintf(text, "ERR Error compiling script (new function): %s", message ? message : "");
            gr_script_reply_error(reply, text, strlen(text));
            free(text);
        } else {
            gr_reply_oom(reply);
        }
        lua_pop(L, 1);
        return -1;
    }
    lua_getfield(L, LUA_REGISTRYINDEX, "gr_scripts");
    lua_createtable(L, 2, 0);
    lua_pushvalue(L, -3);
    lua_rawseti(L, -2, 1);
    lua_pushnumber(L, *flags);
    lua_rawseti(L, -2, 2);
    lua_setfield(L, -2, sha);
    lua_pop(L, 1);
    s->cached++;
    s->cached_bytes += (int64_t)length + 40;
    return 0;
}

/* The handler lua_pcall runs on an error: Redis's __redis__err__handler. The error becomes a
 * table {err = text} (a string error gets "ERR "), with source and line of the Lua function
 * that raised it (the caller, when a C function did). */
static int error_handler(lua_State *L) {
    lua_Debug ar;
    int found = lua_getstack(L, 1, &ar) && lua_getinfo(L, "nSl", &ar);
    if (found && !strcmp(ar.what, "C")) found = lua_getstack(L, 2, &ar) && lua_getinfo(L, "nSl", &ar);
    if (!lua_istable(L, 1)) {
        lua_getfield(L, LUA_REGISTRYINDEX, "gr_tostring");
        lua_pushvalue(L, 1);
        lua_call(L, 1, 1);
        lua_createtable(L, 0, 3);
        lua_pushliteral(L, "err");
        lua_pushfstring(L, "ERR %s", lua_tostring(L, -3));
        lua_rawset(L, -3);
        lua_replace(L, 1);
        lua_settop(L, 1);
    }
    if (found) {
        lua_pushliteral(L, "source");
        lua_pushstring(L, ar.source);
        lua_rawset(L, 1);
        lua_pushliteral(L, "line");
        lua_pushnumber(L, ar.currentline);
        lua_rawset(L, 1);
    }
    lua_settop(L, 1);
    return 1;
}

static void reply_run_error(lua_State *L, const char *sha, int status_is_memory, gr_reply_t *reply) {
    if (!lua_istable(L, -1)) {   /* out of memory, or an error in the handler */
        const char *message = lua_tostring(L, -1);
        char text[512];
        int n = snprintf(text, sizeof text, "ERR Error running script %s, %.100s%s", sha, message ? message : "execution failure",
                         status_is_memory ? " (a script's Lua memory is bounded by maxmemory)" : "");
        gr_script_reply_error(reply, text, (size_t)n < sizeof text ? (size_t)n : sizeof text - 1);
        return;
    }
    lua_pushliteral(L, "err");
    lua_rawget(L, -2);
    lua_pushliteral(L, "source");
    lua_rawget(L, -3);
    lua_pushliteral(L, "line");
    lua_rawget(L, -4);
    const char *message = lua_type(L, -3) == LUA_TSTRING ? lua_tostring(L, -3) : "ERR script raised an error without a message";
    const char *source = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
    int has_line = lua_type(L, -1) == LUA_TNUMBER;
    size_t length = strlen(message) + (source ? strlen(source) : 0) + 128;
    char *text = malloc(length);
    if (!text) { gr_reply_oom(reply); lua_pop(L, 3); return; }
    int n = has_line && source ? snprintf(text, length, "%s script: %s, on %s:%d.", message, sha, source, (int)lua_tonumber(L, -1))
                               : snprintf(text, length, "%s", message);
    gr_script_reply_error(reply, text, (size_t)n);
    free(text);
    lua_pop(L, 3);
}

static void set_array(lua_State *L, const char *name, size_t count, const uint8_t *const *values, const size_t *lengths) {
    lua_pushstring(L, name);
    lua_createtable(L, (int)count, 0);
    for (size_t i = 0; i < count; i++) {
        lua_pushlstring(L, (const char *)values[i], lengths[i]);
        lua_rawseti(L, -2, (int)i + 1);
    }
    lua_rawset(L, -3);
}

/* Run the function on top of the stack with its keys and arguments; the reply written. */
static void run(gr_scripting_t *s, const char *sha, uint32_t flags, int read_only, size_t numkeys,
                const uint8_t *const *keys, const size_t *key_lengths, size_t argc, const uint8_t *const *args,
                const size_t *arg_lengths, gr_reply_t *reply) {
    lua_State *L = s->L;
    lua_getfield(L, LUA_REGISTRYINDEX, "gr_globals");
    set_array(L, "KEYS", numkeys, keys, key_lengths);
    set_array(L, "ARGV", argc, args, arg_lengths);
    lua_pop(L, 1);
    gr_script_run(s, sha, read_only || (flags & SCRIPT_FLAG_NO_WRITES), GR_BUSY_SCRIPT, 0, reply);
}

void gr_script_run(gr_scripting_t *s, const char *sha, int read_only, int kind, int nargs, gr_reply_t *reply) {
    gr_server_t *db = s->db;
    lua_State *L = s->L;
    static int gc_count;
    int function = lua_gettop(L) - nargs;
    if (!s->error_handler_ref) {
        lua_pushcfunction(L, error_handler);
        s->error_handler_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, s->error_handler_ref);
    lua_insert(L, function);                       /* handler, function, arguments */
    gr_script_run_t state = {.sha = sha, .read_only = (uint8_t)read_only, .resp = 2, .kind = (uint8_t)kind};
    s->run = &state;
    gr_connection_t *conn = db->current;
    int32_t db_index = conn ? conn->db_index : 0;
    db->serve_deferred++;                          /* blocking commands do not block; waiters wait for the end */
    gr_effect_none(db);                            /* EVAL propagates its commands' effects, */
    gr_propagate_exec_begin(db);                   /* as MULTI ... EXEC */
    s->bounded = 1;
    gr_script_busy_begin(s);                       /* busy-reply-threshold, SCRIPT/FUNCTION KILL (script_busy.c) */
    int status = lua_pcall(L, nargs, 1, function);
    gr_script_busy_end(s);
    s->bounded = 0;
    gr_propagate_exec_end(db);
    db->serve_deferred--;
    if (conn) {                                    /* a SELECT in the script was the script's own */
        conn->db_index = db_index;
        db->keyspace = db->keyspaces[db_index];
    }
    if (status == 0) gr_script_lua_to_reply(L, reply, state.resp);
    else reply_run_error(L, sha, status == LUA_ERRMEM, reply);
    s->run = NULL;
    lua_settop(L, function - 1);
    if (status == LUA_ERRMEM) {   /* what the script built is garbage now: give it back at once */
        lua_gc(L, LUA_GCCOLLECT, 0);
        gc_count = 0;
    } else if (++gc_count >= GC_PERIOD) {
        lua_gc(L, LUA_GCSTEP, GC_PERIOD);
        gc_count = 0;
    }
}

/* A script with a shebang declares what it does, and Redis 7.0 admits it by its flags before it
 * runs (processCommand's checks with the flags it implies, then scriptPrepareForRun): unless
 * allow-oom or no-writes, OOM past maxmemory; unless no-writes, MISCONF after a failed save, and
 * EVAL_RO / EVALSHA_RO refused. 1 when refused (replied). */
static int refuse_flagged(gr_server_t *db, uint32_t flags, int read_only, gr_reply_t *reply) {
    if (!(flags & (SCRIPT_FLAG_ALLOW_OOM | SCRIPT_FLAG_NO_WRITES)) && db->config.maxmemory > 0 &&
        gr_mem_used_total() > db->config.maxmemory) {
        gr_reply_error_text(reply, GR_ERR_OUT_OF_MEMORY, "OOM command not allowed when used memory > 'maxmemory'.");
        return 1;
    }
    if (flags & SCRIPT_FLAG_NO_WRITES) return 0;
    char text[512];
    const char *refusal = gr_db_disk_error_refusal(db, text, sizeof text);
    if (refusal) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, refusal);
        return 1;
    }
    if (read_only) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR Can not execute a script with write flag using *_ro command.");
        return 1;
    }
    return 0;
}

static void reply_noscript(gr_reply_t *reply) {
    gr_reply_error_text(reply, GR_ERR_GENERIC, "NOSCRIPT No matching script. Please use EVAL.");
}

int gr_script_read_numkeys(size_t argc, const uint8_t *const *argv, const size_t *argv_length, int function,
                           int64_t *numkeys, gr_reply_t *reply) {
    if (gr_bytes_to_int64(argv[2], argv_length[2], numkeys) != 0) {
        if (function) gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR Bad number of keys provided");
        else gr_reply_error_text(reply, GR_ERR_NOT_INTEGER, "ERR value is not an integer or out of range");
        return -1;
    }
    if (*numkeys > (int64_t)argc - 3) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR Number of keys can't be greater than number of args");
        return -1;
    }
    if (*numkeys < 0) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR Number of keys can't be negative");
        return -1;
    }
    return 0;
}

void gr_script_eval(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                    gr_reply_t *reply, int by_sha, int read_only) {
    int64_t numkeys;
    if (gr_script_read_numkeys(argc, argv, argv_length, 0, &numkeys, reply) != 0) return;
    gr_scripting_t *s = gr_scripting_get(db);
    if (!s) { gr_reply_oom(reply); return; }
    if (s->run) {   /* a script cannot run a script (EVAL is noscript), but never re-enter */
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR This Redis command is not allowed from script");
        return;
    }
    char sha[41];
    uint32_t flags = 0;
    if (by_sha) {
        if (argv_length[1] != 40) { reply_noscript(reply); return; }
        for (int i = 0; i < 40; i++) sha[i] = (char)tolower(argv[1][i]);
        sha[40] = '\0';
        if (!push_cached(s->L, sha, &flags)) { reply_noscript(reply); return; }
    } else {
        sha1_hex(argv[1], argv_length[1], sha);
        if (!push_cached(s->L, sha, &flags) && compile(s, argv[1], argv_length[1], sha, &flags, reply) != 0) return;
    }
    if ((flags & SCRIPT_FLAG_SHEBANG) && refuse_flagged(db, flags, read_only, reply)) {
        lua_pop(s->L, 1);   /* the cached function */
        return;
    }
    size_t keys = (size_t)numkeys;
    run(s, sha, flags, read_only, keys, argv + 3, argv_length + 3, argc - 3 - keys, argv + 3 + keys,
        argv_length + 3 + keys, reply);
}

void gr_script_load(gr_server_t *db, const uint8_t *body, size_t length, gr_reply_t *reply) {
    gr_scripting_t *s = gr_scripting_get(db);
    if (!s) { gr_reply_oom(reply); return; }
    char sha[41];
    uint32_t flags;
    sha1_hex(body, length, sha);
    if (!push_cached(s->L, sha, &flags) && compile(s, body, length, sha, &flags, reply) != 0) return;
    lua_pop(s->L, 1);
    gr_reply_bulk(reply, (const uint8_t *)sha, 40);
}

void gr_script_exists(gr_server_t *db, size_t count, const uint8_t *const *shas, const size_t *lengths,
                      gr_reply_t *reply) {
    gr_scripting_t *s = db->scripting;
    gr_reply_array_begin(reply, count);
    for (size_t i = 0; i < count; i++) {
        char sha[41];
        uint32_t flags;
        int found = 0;
        if (s && lengths[i] == 40) {
            for (int k = 0; k < 40; k++) sha[k] = (char)tolower(shas[i][k]);
            sha[40] = '\0';
            found = push_cached(s->L, sha, &flags);
            if (found) lua_pop(s->L, 1);
        }
        gr_reply_integer(reply, found);
    }
}

void gr_script_flush(gr_server_t *db) { gr_scripting_reset(db); }
