/* propagate.h — the stream of write effects the append-only log records (Redis's
 * propagate()/feedAppendOnlyFile), built in exec so that both transports feed it alike.
 *
 * After a command changes data (the dirty counter moved), its effect is appended to
 * db->propagation as one RESP array, in the order commands ran, each preceded by SELECT when
 * its database differs from the stream's last one:
 *   - a command that travels as argv (sets, hashes, zsets, ...) as it was received, unless
 *     its handler rewrote it (gr_propagate_rewrite_*: SPOP -> SREM, HINCRBYFLOAT -> HSET);
 *   - a typed request (either transport: RESP builds the same gr_request_t the ring decodes)
 *     rendered back to argv, with Redis's rewrites for replay: relative expiry -> PXAT /
 *     PEXPIREAT with the absolute time the command set, SETEX/PSETEX -> SET PXAT, GETEX ->
 *     PEXPIREAT/PERSIST, GETDEL -> DEL, INCRBYFLOAT -> SET value KEEPTTL, and the blocking
 *     pops -> their non-blocking forms (BLPOP k1 k2 -> LMPOP 2 k1 k2 LEFT COUNT 1, which pops
 *     from the same key when the log is replayed over the same data; a waiter served later
 *     is propagated as the pop on the one key that served it);
 *   - a key found expired (lazily, or by the cron) as DEL key;
 *   - the commands an EXEC ran between MULTI and EXEC (nothing when none changed data).
 * Whoever consumes the stream (persist/aof.c) installs a sink; gr_propagate_flush hands it
 * the pending bytes, and the transports call it before any reply leaves (the end of a batch
 * of commands, the ring's reply flush), so appendfsync always never acknowledges a write the
 * log does not hold. With no sink installed nothing is recorded (one branch per command).
 */
#ifndef GR_PROPAGATE_H
#define GR_PROPAGATE_H

#include <stddef.h>
#include <stdint.h>

#include "core/bytes.h"
#include "exec/request.h"

struct gr_db;

typedef struct gr_propagation {
    uint8_t *data;            /* pending RESP, not yet handed to the sink */
    size_t length, capacity;
    int32_t selected;         /* the database the stream last SELECTed; -1 none yet */
    int32_t depth;            /* commands running inside commands (EXEC's queue, MEMORY USAGE) */
    uint8_t in_exec;          /* inside EXEC: its commands are wrapped in MULTI ... EXEC */
    uint8_t multi_written;    /* MULTI written for the running EXEC */
    uint8_t failed;           /* a grow failed: the stream lost an entry (the sink reports it) */
    uint8_t skipping;         /* ... and drops the rest of that entry */
    size_t entry_start;       /* where the entry being written began */
    /* a handler's rewrite of the running command: bulk strings, and how many */
    uint8_t *rewrite;
    size_t rewrite_length, rewrite_capacity;
    uint32_t rewrite_count;
    uint8_t rewriting;
    /* the consumer (persist/aof.c): called with the pending bytes; it takes them by setting
     * length to 0 (or keeps some to retry). NULL: nothing is recorded. */
    void (*sink)(void *context, struct gr_db *db);
    void *sink_context;
    /* appendfsync always: the sink wrote and asks for an fdatasync before replies leave;
     * gr_propagate_sync calls sync once for everything written since (group commit: one
     * fdatasync for all the RESP clients a server loop iteration served) */
    uint8_t sync_pending;
    void (*sync)(void *context, struct gr_db *db);
} gr_propagation_t;

/* Lifecycle (db.c) */
void gr_propagation_init(gr_propagation_t *p);
void gr_propagation_release(gr_propagation_t *p);

/* Append one command, argv as given, for database db_index (SELECT first if needed). */
void gr_propagate_argv(struct gr_db *db, int32_t db_index, size_t argc, const uint8_t *const *argv,
                       const size_t *argv_length);
/* DEL key: a key found expired. */
void gr_propagate_del(struct gr_db *db, int32_t db_index, const uint8_t *key, size_t key_length);
/* The effect of a typed request that has just run (rendered as the header above says). */
void gr_propagate_request(struct gr_db *db, int32_t db_index, const gr_request_t *request);

/* A handler replaces its own propagation: begin with the command name and key, add the
 * arguments; the rewrite is written in place of the command when it ends. */
void gr_propagate_rewrite_begin(struct gr_db *db, const char *name, gr_bytes_t key);
void gr_propagate_rewrite_arg(struct gr_db *db, const uint8_t *data, size_t length);

/* db.c's execute paths: before and after a command's handler. command_end appends the
 * command's effect when dirty moved and this is a command that propagates (top level, or
 * inside EXEC); request is its typed form, or NULL with argv for an argv command. */
void gr_propagate_command_begin(struct gr_db *db);
void gr_propagate_command_end(struct gr_db *db, int64_t dirty_before, const gr_request_t *request,
                              size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                              int is_exec);
/* EXEC (transaction.c) brackets its queue with these. */
void gr_propagate_exec_begin(struct gr_db *db);
void gr_propagate_exec_end(struct gr_db *db);

/* Hand the pending bytes to the sink (the end of every batch of commands). */
void gr_propagate_flush(struct gr_db *db);
/* Flush, then make it durable when the policy says so: call it before replies leave. */
void gr_propagate_sync(struct gr_db *db);

#endif
