/* script_internal.h — what the script layer's files share (script.h is the layer's public face):
 * the scripting state hung off the server, and each file's entries.
 */
#ifndef GR_SCRIPT_INTERNAL_H
#define GR_SCRIPT_INTERNAL_H

#include <lua.h>
#include <stddef.h>
#include <stdint.h>

#include "exec/db.h"

/* The running script, while one runs. */
typedef struct gr_script_run {
    const char *sha;            /* its SHA1, 40 hex digits */
    uint8_t read_only;          /* EVAL_RO, or shebang flags=no-writes: a write is refused */
    uint8_t resp;               /* redis.setresp: the shapes commands' replies come in (2 or 3) */
    uint8_t wrote;              /* it called a write command: SCRIPT KILL answers -UNKILLABLE */
    uint8_t kind;               /* GR_BUSY_SCRIPT (EVAL) or GR_BUSY_FUNCTION (FCALL): which KILL ends it */
    uint8_t timed_out;          /* past busy-reply-threshold: others are served from its hook */
    uint8_t killed;             /* SCRIPT KILL / FUNCTION KILL: the hook raises at its next call */
    uint8_t shutdown;           /* SHUTDOWN NOSAVE while it ran: ended, its effects dropped */
    int64_t start_ns;           /* monotonic: when it started (the threshold counts from here) */
} gr_script_run_t;

typedef struct gr_scripting {
    gr_server_t *db;
    lua_State *L;
    int64_t lua_bytes;          /* what the Lua state holds (its allocator counts) */
    uint8_t in_command;         /* a command runs for redis.call: the allocator must not fail */
    uint8_t bounded;            /* script code runs: the maxmemory bound applies (never outside a
                                   protected call, where a failed allocation would panic) */
    uint64_t random_state;      /* math.random's 48-bit generator (Redis's rand.c sequence) */
    int64_t cached;             /* scripts in the cache */
    int64_t cached_bytes;       /* ... their bodies and SHA1s (used_memory_scripts_eval) */
    int error_handler_ref;      /* the runs' error handler in the registry (0: not made yet) */
    gr_script_run_t *run;       /* the running script, or NULL */
    /* redis.call's argv, reused: pointers into Lua strings on the stack */
    const uint8_t **argv;
    size_t *argv_length;
    size_t argv_capacity;
    char *number_text;          /* numbers formatted as arguments, 32 bytes each */
} gr_scripting_t;

/* script_state.c: the state, made at the first use (NULL: out of memory). */
gr_scripting_t *gr_scripting_get(gr_server_t *db);
void gr_scripting_reset(gr_server_t *db);             /* SCRIPT FLUSH: a fresh state */
/* A second state of its own, not db->scripting (script_function.c's: functions run apart
 * from EVAL's scripts, as Redis's function engine has its own Lua); free it with the other. */
gr_scripting_t *gr_scripting_new_detached(gr_server_t *db);
void gr_scripting_free_detached(gr_scripting_t *s);
/* The table and key the globals' proxy, and the library proxies, are read-only through. */
void gr_script_protect_globals(lua_State *L);
/* script_busy.c: the count hook a run installs (busy-reply-threshold, SCRIPT KILL, SHUTDOWN NOSAVE
 * while the script runs), and its removal at the run's end. */
void gr_script_busy_begin(gr_scripting_t *s);
void gr_script_busy_end(gr_scripting_t *s);
/* The table at the top of the stack replaced by a read-only proxy of it; the __index
 * metamethod that raises "Script attempted to access nonexistent global variable 'x'". */
void gr_script_make_readonly(lua_State *L);
int gr_script_missing_global(lua_State *L);
/* script_eval.c: run the function under nargs arguments on top of the stack as a script named
 * name (errors read "... script: <name>, on <source>:<line>."): its effects framed, its
 * result (or error) written to reply; the function and arguments are popped. kind is
 * GR_BUSY_SCRIPT (EVAL) or GR_BUSY_FUNCTION (FCALL): which KILL ends it once busy. */
void gr_script_run(gr_scripting_t *s, const char *name, int read_only, int kind, int nargs, gr_reply_t *reply);
/* EVAL's and FCALL's numkeys (argv[2]) checked against the arguments after it, with Redis's
 * texts (function: FCALL's "Bad number of keys provided" for a non-number). 0, or -1 replied. */
int gr_script_read_numkeys(size_t argc, const uint8_t *const *argv, const size_t *argv_length, int function,
                           int64_t *numkeys, gr_reply_t *reply);
/* script_api.c: the `redis` table in the real globals (before the sandbox locks them). */
void gr_script_open_redis_api(lua_State *L, gr_scripting_t *s);
/* script_reply.c */
typedef struct gr_lua_writer gr_lua_writer_t;
/* Run argv through the command table with a writer that leaves the reply as one Lua value on
 * L's stack, in resp's shapes (2 or 3). */
void gr_script_run_command(gr_scripting_t *s, size_t argc, const uint8_t *const *argv, const size_t *argv_length);
/* The Lua value at the top of L's stack as a reply (Redis's luaReplyToRedisReply); resp is the
 * script's setresp (booleans' shapes). The value is popped. */
void gr_script_lua_to_reply(lua_State *L, gr_reply_t *reply, int resp);
/* The error reply text with \r and \n as spaces, written with the code its prefix names. */
void gr_script_reply_error(gr_reply_t *reply, const char *text, size_t length);

#endif
