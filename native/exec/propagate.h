/* propagate.h — the stream of write effects the append-only log records (Redis's
 * propagate()/feedAppendOnlyFile), built in exec so that both transports feed it alike.
 *
 * Each command's effect is appended to db->propagation as RESP arrays, in the order commands
 * ran, each preceded by SELECT when its database differs from the stream's last one:
 *   - what its handler stated with the gr_effect_* calls below (Redis's alsoPropagate /
 *     rewriteClientCommandVector): relative times made absolute, SPOP as SREM, a blocking pop
 *     as its plain form, a no-op as nothing;
 *   - else, when the dirty counter moved, the command as it came: its argv, or for a typed
 *     request (either transport: RESP builds the same gr_request_t the ring decodes) its
 *     row's render back to argv (commands/command_render.c);
 *   - a key found expired (lazily, or by the cron) as DEL key;
 *   - the commands an EXEC ran between MULTI and EXEC (nothing when none changed data).
 * This file names no command: the rewrites live beside the handlers that need them.
 * Whoever consumes the stream (persist/aof.c) installs a sink; gr_propagate_flush hands it
 * the pending bytes, and the transports call it before any reply leaves (the end of a batch
 * of commands, the ring's reply flush), so appendfsync always never acknowledges a write the
 * log does not hold. The replication backlog (exec/repl_backlog.h, goblin as a primary) is the
 * second consumer, the tap: it sees each byte once, before the sink, whatever the sink keeps
 * for a retry. With neither installed nothing is recorded (one branch per command).
 */
#ifndef GR_PROPAGATE_H
#define GR_PROPAGATE_H

#include <stddef.h>
#include <stdint.h>

#include "core/bytes.h"
#include "exec/request.h"

struct gr_server;

typedef struct gr_propagation {
    uint8_t *data;            /* pending RESP, not yet handed to the sink */
    size_t length, capacity;
    int32_t selected;         /* the database the stream last SELECTed; -1 none yet */
    uint8_t in_exec;          /* inside EXEC or a script: its commands are wrapped in MULTI ... EXEC */
    uint8_t exec_depth;       /* nested frames (a script inside EXEC): one MULTI ... EXEC for all */
    uint8_t multi_written;    /* MULTI written for the running EXEC */
    uint8_t failed;           /* a grow failed: the stream lost an entry (the sink reports it) */
    uint8_t skipping;         /* ... and drops the rest of that entry */
    size_t entry_start;       /* where the entry being written began */
    size_t exec_start;        /* where the outermost MULTI ... EXEC frame began, */
    int32_t exec_selected;    /* ... and the database selected then */
    /* an entry a handler opened (gr_effect_open): bulk strings, and how many */
    uint8_t *rewrite;
    size_t rewrite_length, rewrite_capacity;
    uint32_t rewrite_count;
    uint8_t rewriting;
    /* the consumer (persist/aof.c): called with the pending bytes; it takes them by setting
     * length to 0 (or keeps some to retry). NULL: nothing is recorded. */
    void (*sink)(void *context, struct gr_server *db);
    void *sink_context;
    /* appendfsync always: the sink wrote and asks for an fdatasync before replies leave;
     * gr_propagate_sync calls sync once for everything written since (group commit: one
     * fdatasync for all the RESP clients a server loop iteration served) */
    uint8_t sync_pending;
    void (*sync)(void *context, struct gr_server *db);
    /* the replication backlog's feed (server/primary.c installs it): each pending byte once,
     * data[tapped, length) not yet seen */
    void (*tap)(void *context, struct gr_server *db, const uint8_t *data, size_t length);
    void *tap_context;
    size_t tapped;
    /* replication-only entries made inside a frame (gr_propagate_replication_only), tapped
     * after it */
    uint8_t *replication_only;
    size_t replication_only_length, replication_only_capacity;
} gr_propagation_t;

/* Whether the stream is recorded (an AOF or a replication backlog consumes it). */
static inline int gr_propagation_on(const gr_propagation_t *p) { return p->sink != NULL || p->tap != NULL; }

/* Lifecycle (db.c) */
void gr_propagation_init(gr_propagation_t *p);
void gr_propagation_release(gr_propagation_t *p);

/* Append one command, argv as given, for database db_index (SELECT first if needed). */
void gr_propagate_argv(struct gr_server *db, int32_t db_index, size_t argc, const uint8_t *const *argv,
                       const size_t *argv_length);
/* DEL key: a key found expired. */
void gr_propagate_del(struct gr_server *db, int32_t db_index, const uint8_t *key, size_t key_length);

/* ---- a handler's effect (exec/call.h): what the running command propagates ----
 *
 * Each call says the running command has stated its effect, so the default (its argv, or its
 * row's render of the typed request) is not written; they write only while the call
 * propagates (a top-level command, or one of EXEC's) and a sink is installed. One entry is
 * begin(argc) then exactly argc words. */
void gr_effect_begin(struct gr_server *db, uint64_t argc);
void gr_effect_word(struct gr_server *db, const char *word);
void gr_effect_bulk(struct gr_server *db, const uint8_t *data, size_t length);
void gr_effect_bytes(struct gr_server *db, gr_bytes_t bytes);
void gr_effect_int(struct gr_server *db, int64_t value);
/* The running row's name, upper-cased (GOBLIN.PMA.LPUSH for that row). */
void gr_effect_name(struct gr_server *db);
/* The command `with` of the running row's engine family: the row's name with its last word
 * replaced (GOBLIN.PMA.BLMOVE, "lmove" -> GOBLIN.PMA.LMOVE; BLPOP, "lmpop" -> LMPOP). */
void gr_effect_family_name(struct gr_server *db, const char *with);
/* A whole entry: argv as given; DEL key. */
void gr_effect_argv(struct gr_server *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length);
void gr_effect_del(struct gr_server *db, gr_bytes_t key);
/* The default effect is written even when the command changed nothing (Redis's
 * forceCommandPropagation: FLUSHDB and FLUSHALL of an empty database). */
void gr_effect_always(struct gr_server *db);
/* Whether the running call's effect is recorded (it propagates, and an AOF or a replica takes
 * the stream): a handler whose effect costs work to build (RESTORE's payload in Redis's form)
 * asks first. */
int gr_effect_recorded(struct gr_server *db);
/* The command changed data but propagates nothing of its own (EXEC: its commands are). */
void gr_effect_none(struct gr_server *db);
/* An entry whose words are known as the handler goes (SPOP's members): name and key now,
 * each further word as it comes; written when the call ends. */
void gr_effect_open(struct gr_server *db, const char *name, gr_bytes_t key);
void gr_effect_add(struct gr_server *db, const uint8_t *data, size_t length);
/* The call's end (db.c): the opened entry, else the default effect when dirty moved and the
 * handler stated none. */
void gr_propagate_call_end(struct gr_server *db);

/* EXEC (transaction.c) brackets its queue with these, and a script (script/) its run: the
 * running call's inner calls then propagate, framed by one MULTI ... EXEC (nested frames share
 * the outermost's). */
void gr_propagate_exec_begin(struct gr_server *db);
void gr_propagate_exec_end(struct gr_server *db);

/* Drop what the open frames wrote (a script ended by SHUTDOWN NOSAVE: Redis exits before
 * propagating its effects); what was pending before them can be flushed again, and the
 * frames' ends write nothing. */
void gr_propagate_exec_discard(struct gr_server *db);
/* An entry for the replicas only, never the sink (Redis's PROPAGATE_REPL: PUBLISH and
 * SPUBLISH reach the replicas' subscribers, not the AOF), argv as given and no SELECT (it
 * names no database). Out of a frame it is tapped at once, after every byte before it; inside
 * EXEC or a script it waits until the frame's EXEC. Nothing without a tap (a replica, or no
 * backlog). */
void gr_propagate_replication_only(struct gr_server *db, size_t argc, const uint8_t *const *argv,
                                   const size_t *argv_length);
/* Hand the pending bytes to the sink (the end of every batch of commands). */
void gr_propagate_flush(struct gr_server *db);
/* Flush, then make it durable when the policy says so: call it before replies leave. */
void gr_propagate_sync(struct gr_server *db);

#endif
