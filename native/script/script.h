/* script.h — Lua scripting (EVAL, EVALSHA, EVAL_RO, EVALSHA_RO, SCRIPT): the layer between exec
 * and commands that runs Redis's Lua 5.1 environment.
 *
 * The parts, one file each:
 *   script_state.c  the Lua state: its counting allocator (bounded by maxmemory), the libraries
 *                   Redis loads, the sandbox (globals and library tables read-only, a missing
 *                   global an error), Redis's math.random;
 *   script_api.c    the `redis` table: call/pcall through the command table, error_reply,
 *                   status_reply, sha1hex, log, setresp, set_repl, replicate_commands, ...;
 *   script_reply.c  the conversions: a command's reply to a Lua value (a gr_reply_t writer, in
 *                   RESP2 or RESP3 shapes as redis.setresp chose) and a Lua value to a reply;
 *   script_busy.c   busy-reply-threshold: serving others from inside a long script, SCRIPT
 *                   KILL / FUNCTION KILL, SHUTDOWN NOSAVE while a script runs;
 *   script_eval.c   the script cache by SHA1, running a script (its call frames its commands'
 *                   effects in MULTI/EXEC), the shebang, the error texts, SCRIPT's subcommands.
 * commands/cmd_script.c is the commands' handlers; they call the entries below. The state is
 * made at the first use and hangs off the server (db->scripting).
 */
#ifndef GR_SCRIPT_H
#define GR_SCRIPT_H

#include <stddef.h>
#include <stdint.h>

#include "exec/db.h"

/* EVAL / EVALSHA / EVAL_RO / EVALSHA_RO: argv as the command got it; by_sha: argv[1] is a SHA1;
 * read_only: the _RO forms (a write from the script is refused). */
void gr_script_eval(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                    gr_reply_t *reply, int by_sha, int read_only);
/* SCRIPT LOAD body: compiled and cached, the SHA1 is the reply. */
void gr_script_load(gr_server_t *db, const uint8_t *body, size_t length, gr_reply_t *reply);
/* SCRIPT EXISTS sha...: 1 or 0 each. */
void gr_script_exists(gr_server_t *db, size_t count, const uint8_t *const *shas, const size_t *lengths,
                      gr_reply_t *reply);
/* SCRIPT FLUSH: every cached script gone (a fresh Lua state, as Redis). */
void gr_script_flush(gr_server_t *db);
/* SCRIPT KILL (function_kind 0) and FUNCTION KILL (function_kind 1), as Redis 7.0's scriptKill:
 * NOTBUSY when no busy script runs (only a busy script's hook serves other clients), UNKILLABLE
 * once it called a write command, the running kind's -BUSY text for the other kind's KILL, else
 * OK and the script ends at its hook's next call with "Script killed by user with SCRIPT
 * KILL..." to its caller. A FUNCTION (FCALL) run is killable by FUNCTION KILL when its
 * gr_script_run_t has kind GR_BUSY_FUNCTION (script_busy.c). */
void gr_script_kill(gr_server_t *db, int function_kind, gr_reply_t *reply);
/* Cached scripts (INFO's number_of_cached_scripts) and the Lua state's bytes (used_memory_lua). */
int64_t gr_script_cached_count(const gr_server_t *db);
int64_t gr_script_memory(const gr_server_t *db);
/* The cached scripts' bodies and SHA1s in bytes (INFO used_memory_scripts_eval). */
int64_t gr_script_cache_bytes(const gr_server_t *db);

#endif
