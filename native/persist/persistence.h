/* persistence.h — when snapshots are written and read: SAVE, BGSAVE [SCHEDULE] (a forked
 * child, exec/child.h), the save rules ("save 3600 1 300 100 60 10000", Redis's syntax and
 * default), SHUTDOWN's save, and the load at start. The file itself is snapshot.[ch]; the
 * commands are commands/cmd_persistence.c; the settings and counters are db->persistence
 * (exec/db.h), shown by CONFIG GET and INFO persistence. The implementation is persistence.c.
 *
 * As Redis: one child at a time (a BGSAVE while any child runs is refused, or with SCHEDULE
 * runs once the child is gone); a successful save subtracts from the dirty counter the changes
 * made before it began and sets LASTSAVE; a rule fires when at least <changes> changes are
 * older than <seconds> since the last save, and after a failed BGSAVE not sooner than 5 s.
 */
#ifndef GR_PERSISTENCE_H
#define GR_PERSISTENCE_H

#include <stddef.h>
#include <stdint.h>

#include "exec/db.h"

/* "<seconds> <changes> ..." (or "" for none) into rules: 0, or -1 with why set. */
int gr_persist_parse_save_rules(const char *text, gr_save_rule_t *rules, int32_t *count, char *why, size_t why_size);
/* The rules as CONFIG GET save shows them. */
void gr_persist_format_save_rules(const gr_persistence_t *persistence, char *out, size_t size);
/* dir/dbfilename: 0, or -1 when it does not fit. */
int gr_persist_path(const gr_server_t *db, char *out, size_t size);

/* SAVE: write the snapshot now, in this process. 0, or -1 with a message in error. */
int gr_persist_save(gr_server_t *db, char *error, size_t error_size);
/* BGSAVE: 1 started, 2 scheduled (schedule set and another child runs), -1 refused with a
 * Redis error text in error ("ERR Background save already in progress"). */
int gr_persist_bgsave(gr_server_t *db, int schedule, char *error, size_t error_size);

/* After FLUSHALL, as Redis's flushAllDataAndResetRDB: a running BGSAVE child is killed (its
 * image is of the data just removed) and, when save rules are set, the empty keyspace saved. */
void gr_persist_after_flushall(gr_server_t *db);

/* shutdown-on-sigterm / shutdown-on-sigint, Redis 7's flags: what a signal's shutdown does
 * (0 is "default": save when save rules are set, refuse to stop when that fails). */
enum { GR_SHUTDOWN_SAVE = 1, GR_SHUTDOWN_NOSAVE = 2, GR_SHUTDOWN_NOW = 4, GR_SHUTDOWN_FORCE = 8 };
/* Parse "default" / any of "save nosave now force" (space-separated) as Redis's CONFIG SET
 * does; 0, or -1 with Redis's reason in why. */
int gr_persist_parse_shutdown_flags(const char *text, uint8_t *flags, char *why, size_t why_size);
/* The flags as CONFIG GET shows them ("default", "nosave force", ...). */
void gr_persist_shutdown_flags_text(uint8_t flags, char *out, size_t size);

/* cffi-cdef-begin */
/* SIGTERM (is_sigint 0) or SIGINT: prepare the shutdown as its shutdown-on-* flags say, as
 * Redis's prepareForShutdown. 0: stop; -1: it failed, keep serving (error says why); 1: it
 * failed but the flags say force, stop anyway (error says what was not kept). */
int gr_persist_shutdown_for_signal(gr_server_t *db, int is_sigint, char *error, size_t error_size);
/* The server's start: load dir/dbfilename. 1 loaded, 0 no file, -1 refused (error names the
 * file and the offset; nothing is loaded). */
int gr_persist_load_at_start(gr_server_t *db, char *error, size_t error_size);
/* A Redis (or Valkey) RDB file at path (persist/rdb_format.h), loaded into the databases as
 * at start (--import-rdb; a dbfilename whose file begins "REDIS" goes this way by itself).
 * 1 loaded, 0 no such file, -1 refused (error names the file and the offset; nothing loaded). */
int gr_persist_import_rdb(gr_server_t *db, const char *path, char *error, size_t error_size);
/* Write every database as a Redis RDB (version 10, redis-server 7.0 loads it) to path
 * (--export-rdb). 0, or -1 with error set; *skipped: values with no Redis form (arrays). */
int gr_persist_export_rdb(gr_server_t *db, const char *path, int64_t *keys, int64_t *skipped, char *error,
                          size_t error_size);
/* Seconds (as a double) the last load took, keys loaded, keys skipped as expired. */
double gr_persist_last_load_seconds(gr_server_t *db);
/* The save rules and a scheduled BGSAVE; call it from the cron (after gr_db_cron reaped). */
void gr_persist_cron(gr_server_t *db);
/* Stop: kill a running child, then save when mode is 1 (SAVE), or when mode is -1 and save
 * rules are configured (a plain SHUTDOWN, SIGTERM). 0, or -1 with error set (the save failed). */
int gr_persist_prepare_shutdown(gr_server_t *db, int mode, char *error, size_t error_size);
/* SHUTDOWN ran: the server should stop now (the flag is reported once). */
int gr_persist_shutdown_requested(gr_server_t *db);
/* cffi-cdef-end */

#endif
