/* commands.h — what the command table's rows (the commands/<family>.def files) point at: the argv builders
 * (command_builders.c) and the handlers, a file per family (cmd_list.c, cmd_keys.c,
 * cmd_string.c, cmd_bitmap.c, cmd_hash.c, cmd_set.c, cmd_zset*.c, cmd_expire.c, cmd_db.c, cmd_server.c,
 * cmd_connection.c, cmd_config.c, cmd_sort.c, cmd_pubsub.c, cmd_array*.c, command_docs.c;
 * HSCAN/SSCAN/ZSCAN share member_scan.c). Only commands/ includes it: exec reaches these through the rows.
 */
#ifndef GR_COMMANDS_H
#define GR_COMMANDS_H

#include "exec/blocking.h"
#include "exec/command.h"
#include "exec/db.h"
#include "exec/transaction.h"   /* MULTI, EXEC, DISCARD, WATCH, UNWATCH: their rows point there */

/* Every handler, builder, render and blocking spec a row names (.handler, .argv_handler,
 * .build, .render, .blocking) is declared from the rows themselves: schema/generate.py writes
 * declarations_generated.h (schema/declarations.py), so a new command is its row and its
 * handler, with no list of names to extend here. */
#include "commands/declarations_generated.h"
#include "exec/request_views_generated.h"   /* gr_<template>_view(request): its fields by name */

/* SRANDMEMBER, HRANDFIELD and ZRANDMEMBER with a negative count (repetitions allowed) answer
 * at most this many elements and refuse a larger count as out of range: past it Redis builds a
 * reply no client could hold (at -2^63+1 it loops for ever), which would grow the server
 * without bound. 2^24 short members are about 120 MiB of reply. */
#define GR_RANDOM_REPEATS_MAX (1LL << 24)
#define GR_RANDOM_REPEATS_ERROR "ERR value is out of range"
#define GR_RANDOM_COUNT_RANGE_ERROR \
    "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"

/* SORT's and SORT_RO's key finders (cmd_sort.c): the sorted key, and SORT's last STORE key. */
size_t gr_sort_find_keys(size_t argc, const uint8_t *const *argv, const size_t *argv_length, size_t *positions,
                         const char **flags, size_t capacity);
size_t gr_sort_ro_find_keys(size_t argc, const uint8_t *const *argv, const size_t *argv_length, size_t *positions,
                            const char **flags, size_t capacity);
/* Redis's memtoull (cmd_config.c): digits and an optional b/k/kb/m/mb/g/gb unit. 0, or -1. */
int gr_config_parse_memory(const char *text, int64_t *out);
/* GEORADIUS's and GEORADIUSBYMEMBER's (cmd_geo.c): the searched key, and the STORE/STOREDIST key. */
size_t gr_georadius_find_keys(size_t argc, const uint8_t *const *argv, const size_t *argv_length, size_t *positions,
                              const char **flags, size_t capacity);
size_t gr_georadiusbymember_find_keys(size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                                      size_t *positions, const char **flags, size_t capacity);

/* INFO replication's section (cmd_replication.c), as Redis 7.0's. */
struct gr_text;
void gr_repl_info(gr_server_t *db, struct gr_text *text);

#endif
