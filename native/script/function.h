/* function.h — Redis 7 functions (FUNCTION LOAD/LIST/DELETE/FLUSH/DUMP/RESTORE/STATS/KILL,
 * FCALL, FCALL_RO): the script layer's entries commands/cmd_function.c calls. The engine is
 * script_function.c: its own Lua state (apart from EVAL's, as Redis's function engine), the
 * libraries' code and their functions kept in C so a forked snapshot or AOF rewrite reads them
 * without Lua, and the hooks persist/ saves and loads libraries through (snapshot.h).
 */
#ifndef GR_SCRIPT_FUNCTION_H
#define GR_SCRIPT_FUNCTION_H

#include <stddef.h>
#include <stdint.h>

#include "exec/db.h"

/* FUNCTION LOAD code [replace]: the library's name is the reply (or Redis's error). */
void gr_function_load(gr_server_t *db, const uint8_t *code, size_t length, int replace, gr_reply_t *reply);
/* FUNCTION DELETE name. */
void gr_function_delete(gr_server_t *db, const uint8_t *name, size_t length, gr_reply_t *reply);
/* FUNCTION FLUSH: every library gone (a fresh Lua state at the next load). */
void gr_function_flush(gr_server_t *db);
/* FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE] (pattern NULL: every library). */
void gr_function_list(gr_server_t *db, const uint8_t *pattern, size_t pattern_length, int with_code, gr_reply_t *reply);
/* FUNCTION DUMP: Redis's payload (a function opcode and the code of each library, RDB version
 * 10 and CRC-64), so redis-server 7.0 restores it and its payloads restore here. */
void gr_function_dump(gr_server_t *db, gr_reply_t *reply);
/* FUNCTION RESTORE payload policy: policy 0 APPEND, 1 REPLACE, 2 FLUSH. */
void gr_function_restore(gr_server_t *db, const uint8_t *payload, size_t length, int policy, gr_reply_t *reply);
/* FUNCTION STATS. */
void gr_function_stats(gr_server_t *db, gr_reply_t *reply);
/* FUNCTION KILL: SCRIPT KILL's gr_script_kill for a busy FCALL (NOTBUSY when none is busy). */
void gr_function_kill(gr_server_t *db, gr_reply_t *reply);
/* FCALL / FCALL_RO name numkeys key... arg...: argv as the command got it. */
void gr_function_call(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                      gr_reply_t *reply, int read_only);
/* Libraries and functions loaded (INFO, tests). */
int64_t gr_function_library_count(const gr_server_t *db);
int64_t gr_function_count(const gr_server_t *db);
/* INFO memory: the functions' Lua state in bytes (used_memory_vm_functions) and the libraries'
 * code and names (used_memory_functions, an estimate of Redis's figure). */
int64_t gr_function_vm_bytes(const gr_server_t *db);
int64_t gr_function_code_bytes(const gr_server_t *db);

#endif
