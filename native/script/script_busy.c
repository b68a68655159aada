/* script_busy.c — a script that runs too long (Redis 7.0's busy scripts): busy-reply-threshold,
 * serving the other clients from inside the script, SCRIPT KILL / FUNCTION KILL, and SHUTDOWN
 * NOSAVE while a script runs.
 *
 * Every run installs a Lua count hook (every HOOK_COUNT instructions, as Redis's
 * luaMaskCountHook). Until the script has run busy-reply-threshold milliseconds (from its start)
 * the hook only reads the clock. Past it, the server log gets Redis's "Slow script detected"
 * line once, and every hook call serves the other clients once through the callback the serving
 * loop registered on the server (db->busy_serve; script/ sits below server/ and ring/, so it
 * names neither). For that call db->busy says what runs, so admission (exec/db.c) answers -BUSY
 * to every command without allow_busy; the loop reads nothing from the script's own client
 * (db->busy_caller). The script's context (the running call, the current connection, its
 * database, the clock, the deferred-serving count) is put aside and restored around the call.
 *
 * SCRIPT KILL (gr_script_kill) marks the run killed unless it called a write command
 * (-UNKILLABLE, as Redis); the hook then raises Redis's "Script killed by user with SCRIPT
 * KILL..." error, and keeps raising on every line so a pcall in the script cannot swallow it.
 * SHUTDOWN NOSAVE (the only SHUTDOWN a busy script allows) ends the script the same way, and
 * what the script wrote is dropped from the effect stream (Redis exits before propagating it);
 * the server then stops as after any SHUTDOWN.
 */
#include <lauxlib.h>
#include <stdio.h>

#include "core/clock.h"
#include "script/script.h"
#include "script/script_internal.h"

#define HOOK_COUNT 100000   /* Lua instructions between two hook calls (Redis: 100000) */

/* Serve the other clients once, the script's context put aside. */
static void serve_others(gr_scripting_t *s) {
    gr_server_t *db = s->db;
    gr_connection_t *current = db->current;
    gr_keyspace_t *keyspace = db->keyspace;
    struct gr_call *call = db->call;
    int32_t deferred = db->serve_deferred;
    int64_t now_ms = db->now_ms;
    int32_t db_index = current ? current->db_index : 0;
    uint8_t bounded = s->bounded, in_command = s->in_command;
    s->bounded = 0;
    s->in_command = 1;          /* what others run never raises a Lua error through this state */
    db->call = NULL;            /* their commands are top-level calls of their own */
    db->serve_deferred = 0;
    db->busy = s->run->kind;
    db->busy_caller = current;
    db->busy_serve(db->busy_context);
    db->busy = GR_BUSY_NONE;
    db->busy_caller = NULL;
    db->current = current;
    if (current) current->db_index = db_index;
    db->keyspace = keyspace;
    db->call = call;
    db->serve_deferred = deferred;
    db->now_ms = now_ms;
    s->bounded = bounded;
    s->in_command = in_command;
}

static void hook(lua_State *L, lua_Debug *ar) {
    (void)ar;
    void *ud;
    lua_getallocf(L, &ud);
    gr_scripting_t *s = ud;
    gr_script_run_t *run = s->run;
    if (!run || s->in_command) return;
    gr_server_t *db = s->db;
    if (!run->killed && !run->shutdown) {
        if (!run->timed_out) {
            int64_t elapsed_ms = (gr_monotonic_ns() - run->start_ns) / 1000000;
            if (elapsed_ms < db->config.busy_reply_threshold_ms) return;
            run->timed_out = 1;
            if (db->log_line) {
                char line[256];
                snprintf(line, sizeof line,
                         "Slow script detected: still in execution after %lld milliseconds. You can try killing the "
                         "script using the %s command. Script name is: %s.",
                         (long long)elapsed_ms, run->kind == GR_BUSY_FUNCTION ? "FUNCTION KILL" : "SCRIPT KILL",
                         run->sha);
                db->log_line(db->log_context, line);
            }
        }
        if (db->busy_serve) serve_others(s);
        if (db->persistence.shutdown_requested) run->shutdown = 1;
        if (!run->killed && !run->shutdown) return;
    }
    if (run->killed && db->log_line && !run->shutdown)
        db->log_line(db->log_context, "Lua script killed by user with SCRIPT KILL.");
    /* from now on the hook runs on every line, of this thread and of the script's main thread (a
     * coroutine raising it to a pcall in the main thread): a pcall cannot catch the end for good */
    lua_sethook(L, hook, LUA_MASKLINE | LUA_MASKCOUNT, 1000);
    if (L != s->L) lua_sethook(s->L, hook, LUA_MASKLINE | LUA_MASKCOUNT, 1000);
    lua_newtable(L);
    lua_pushliteral(L, "err");
    lua_pushstring(L, run->shutdown ? "ERR Script ended by SHUTDOWN NOSAVE..."
                                    : "ERR Script killed by user with SCRIPT KILL...");
    lua_rawset(L, -3);
    lua_error(L);
}

void gr_script_busy_begin(gr_scripting_t *s) {
    s->run->start_ns = gr_monotonic_ns();
    s->db->script_running = s;
    lua_sethook(s->L, hook, LUA_MASKCOUNT, HOOK_COUNT);
}

void gr_script_busy_end(gr_scripting_t *s) {
    lua_sethook(s->L, NULL, 0, 0);
    s->db->script_running = NULL;
    if (s->run && s->run->shutdown) gr_propagate_exec_discard(s->db);
}

/* SCRIPT KILL (function_kind 0) and FUNCTION KILL (1): Redis 7.0's scriptKill. */
void gr_script_kill(gr_server_t *db, int function_kind, gr_reply_t *reply) {
    gr_scripting_t *s = db->script_running;   /* EVAL's state or the functions' */
    gr_script_run_t *run = s ? s->run : NULL;
    if (!run || !db->busy) {   /* only a busy script's hook serves anyone while a script runs */
        gr_reply_error_text(reply, GR_ERR_GENERIC, "NOTBUSY No scripts in execution right now.");
        return;
    }
    if (run->wrote) {
        gr_reply_error_text(reply, GR_ERR_GENERIC,
                            "UNKILLABLE Sorry the script already executed write commands against the dataset. You can "
                            "either wait the script termination or kill the server in a hard way using the SHUTDOWN "
                            "NOSAVE command.");
        return;
    }
    if ((run->kind == GR_BUSY_FUNCTION) != (function_kind != 0)) {   /* the other KILL: the running kind's BUSY */
        gr_reply_error_text(reply, GR_ERR_GENERIC, gr_db_busy_text(db));
        return;
    }
    run->killed = 1;
    gr_reply_ok(reply);
}
