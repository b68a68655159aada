/* call.h — one command's call context, and the API a handler states its effects through.
 *
 * Every command runs as one gr_call_t, made by db.c's execute paths (and by blocking.c for a
 * served waiter): the connection, the table row, its typed request and/or argv, the reply
 * writer and what the command has stated so far. db->call points at the running call; a
 * command run inside another (EXEC's queue, the ring's CommandRequest envelope) makes its own
 * call, whose outer is the running one. Admission, the handler, the effect hooks and the
 * accounting all read this one struct, so nothing after the handler re-derives what ran.
 *
 * A write states what it did beside its mutation, as Redis's handlers do:
 *   - the keys it modified: gr_watch_touch_current(db, key) (transaction.h; Redis's
 *     signalModifiedKey): WATCH, and the row's default keyspace event below;
 *   - its dirty count: gr_db_count_changes(db, n) (db.h; Redis's server.dirty++);
 *   - its keyspace events: by default the row's (.notify = {class, "event"}) for every key it
 *     touched, in order, a key touched twice in a row once, and for a list, set, hash or
 *     sorted set the command left missing also "del"; a handler whose events depend on what
 *     it did calls gr_call_notify for each (Redis's notifyKeyspaceEvent), and the row's
 *     default is then not applied. "new" comes from the keyspace's add observer, in order;
 *   - its propagated effect (propagate.h): by default its argv (or, typed, its row's render
 *     of the request back to argv) when the dirty count moved; a handler whose effect differs
 *     (relative time made absolute, SPOP as SREM, a blocking pop as its plain form) writes it
 *     with the gr_effect_* calls, and the default is then not written.
 * The events are published, and the call's accounting done, when the call ends. exec names no
 * command: everything a command does besides its reply is said by its row or its handler.
 */
#ifndef GR_CALL_H
#define GR_CALL_H

#include <stddef.h>
#include <stdint.h>

#include "core/bytes.h"
#include "exec/reply.h"
#include "exec/request.h"

struct gr_server;
struct gr_connection;
struct gr_command;

typedef struct gr_call {
    struct gr_call *outer;              /* the call this one runs inside, or NULL */
    struct gr_connection *conn;         /* whose command it is (NULL: the server's own) */
    const struct gr_command *row;       /* its table row */
    int index;                          /* the row's table index (commandstats) */
    const gr_request_t *request;        /* its typed form, or NULL for an argv command */
    size_t argc;                        /* its argv (RESP, a CommandRequest); 0 for a typed request */
    const uint8_t *const *argv;
    const size_t *argv_length;
    gr_reply_t *reply;
    int32_t db_index;                   /* the database it runs in */
    int64_t dirty_before;               /* db->dirty when it began */
    uint32_t errors_before;             /* reply->errors when it began */
    int64_t start;                      /* gr_db_account_start() */
    uint8_t propagates;                 /* its effects go to the stream (top level, or in EXEC) */
    uint8_t effect_stated;              /* the handler wrote its effect (or said there is none) */
    uint8_t effect_forced;              /* the default effect is written even if nothing changed */
    uint8_t events_stated;              /* the handler notified its own keyspace events */
    uint8_t frames_inner;               /* its inner calls propagate, framed MULTI ... EXEC (EXEC, a script) */
    size_t records_start;               /* where its records begin in db->notify_records */
    uint64_t redacted;                  /* argv positions (below 64) the slow log shows as "(redacted)" */
} gr_call_t;

/* A call begins and ends around its row's handler (db.c's execute paths, blocking.c's served
 * waiter): begin makes it db->call; end publishes its events, writes its effect and makes its
 * outer call current again. */
void gr_call_begin(struct gr_server *db, gr_call_t *call, const struct gr_command *row, int index,
                   const gr_request_t *request, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                   gr_reply_t *reply);
void gr_call_end(struct gr_server *db, gr_call_t *call);

/* Keyspace event `event` of class type (GR_NOTIFY_*) for key in database dbid (-1: the running
 * call's): kept in order and published when the call ends. db.h's gr_call_notify and
 * gr_call_notify_db are the inline entries (one branch while notifications are off). */
void gr_call_notify_db_slow(struct gr_server *db, int32_t dbid, int type, const char *event, gr_bytes_t key);
/* The row's default event does not apply: the handler notifies its events itself, or has
 * none to notify for what it did (a no-op). */
void gr_call_events_stated(struct gr_server *db);
/* Argument j of the running call is a secret (AUTH's password): the slow log shows
 * "(redacted)" in its place, as Redis's redactClientCommandArgument. */
void gr_call_redact_argument(struct gr_server *db, size_t j);

#endif
