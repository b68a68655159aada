/* aof.h — the append-only log (Redis's AOF): the file that records every write's effect,
 * replayed at start, fsynced by appendfsync's policy and compacted by BGREWRITEAOF.
 *
 * What to record is exec's business (exec/propagate.h: both transports' commands as RESP,
 * with Redis's rewrites for replay); this file owns the file. gr_aof_start installs itself
 * as the stream's sink, so the pending RESP is written before any reply leaves the server:
 *   appendfsync always    write per batch; one fdatasync before the replies go out (group
 *                         commit: every RESP client one server loop iteration read, as Redis)
 *   appendfsync everysec  write per batch; a worker thread fdatasyncs once a second (the
 *                         cron asks it), so the serving thread never waits on the disk
 *   appendfsync no        write per batch; the kernel decides when it reaches the disk
 * The file is one RESP stream, Redis 6's single-file layout at <dir>/<appendfilename>:
 *
 *   *2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n *3\r\n$3\r\nSET\r\n... *1\r\n$5\r\nMULTI\r\n ... EXEC
 *
 * Replay (gr_aof_load) runs each command through the argv path as a client of its own. A
 * last command cut short (a crash mid-write) is dropped and the file truncated to the last
 * whole command when aof-load-truncated is yes (Redis's default), as is a MULTI block with no
 * EXEC; otherwise, and for any malformed byte, the load fails naming the file and offset.
 * BGREWRITEAOF forks: the child writes the dataset as one RESTORE key abs-ms payload REPLACE
 * ABSTTL per key (the types' save hooks, DUMP's payload) to a temporary file and fsyncs it;
 * meanwhile the parent keeps appending to the old file and buffers the same bytes; when the
 * child exits the parent appends the buffer, fsyncs, renames over the old file and fsyncs the
 * directory. The parent's cron (gr_aof_cron) reaps the child.
 */
#ifndef GR_AOF_H
#define GR_AOF_H

#include <stddef.h>
#include <stdint.h>

#include "exec/db.h"
#include "exec/server_text.h"

typedef struct gr_aof gr_aof_t;   /* db->aof while appendonly is yes */

/* cffi-cdef-begin */
/* Replay <path> into db. Returns 1 when there is no such file (nothing loaded), 0 when it
 * was replayed (message: a warning when a cut-short tail was dropped, else empty), -1 when it
 * cannot be loaded (message says why, naming the file and the offset). commands: how many ran. */
int gr_aof_load(gr_server_t *db, const char *path, int allow_truncated, int64_t *commands, char *message,
                size_t message_size);
/* Turn the log on: open <dir>/<appendfilename> (db->config) for appending and record every
 * write from now on. write_dataset: first replace the file with the current dataset (CONFIG
 * SET appendonly yes; a start that loaded data from elsewhere). 0, or -1 with message. */
int gr_aof_start(gr_server_t *db, int write_dataset, char *message, size_t message_size);
/* Turn it off: write and fsync what is pending, close the file (appendonly no, shutdown). */
void gr_aof_stop(gr_server_t *db);
/* The cron (ten times a second): everysec's fsync, reaping a rewrite child, a scheduled or
 * automatic (auto-aof-rewrite-percentage) rewrite. */
void gr_aof_cron(gr_server_t *db);
/* BGREWRITEAOF: 0 started, 1 scheduled (another child runs), -1 with message. */
int gr_aof_rewrite_background(gr_server_t *db, char *message, size_t message_size);
/* 1 while a rewrite child runs. */
int gr_aof_rewrite_in_progress(gr_server_t *db);
/* cffi-cdef-end */

/* SHUTDOWN and SIGTERM: write what is pending and fdatasync; 0, or -1 with message when the
 * log cannot hold it (the shutdown is refused, as a failing save refuses it). */
int gr_aof_flush_for_shutdown(gr_server_t *db, char *message, size_t message_size);
/* INFO persistence's aof_* lines. */
void gr_aof_info(gr_server_t *db, gr_text_t *text);
/* WAITAOF's local acknowledgement: 1 when every write propagated so far is on disk by the time
 * the running command's reply leaves — appendfsync always (the batch's fsync precedes its
 * replies), or everysec when it is already, or (wait) after writing what is pending and
 * fdatasyncing now, in this thread — 0 when it is not (appendonly no, appendfsync no: the
 * kernel decides, as Redis never acknowledges then, or the write or fsync failed). */
int gr_aof_local_ack(gr_server_t *db, int wait);
/* A replica's REPLCONF ACK .. FACK: the replication offset up to which the file is
 * fdatasynced (Redis's fsynced_reploff), -1 without an AOF. It does not move while held. */
int64_t gr_aof_fsynced_reploff(gr_server_t *db);
/* After a full sync the file holds the old data until a rewrite forked after it replaces it:
 * the fsynced offset is 0 until that rewrite ends (call it before starting the rewrite; a
 * rewrite already running is followed by another, from the new data). */
void gr_aof_hold_fsynced_reploff(gr_server_t *db);

#endif
