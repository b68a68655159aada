/* blocking.h — clients blocked in a blocking command (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP,
 * BZPOPMIN, BZPOPMAX, BZMPOP: every row with a .blocking spec), and how a write wakes them. This
 * layer knows no command: what a waiter needs of its command is a gr_block_spec (its keys, when a
 * key can serve it, how to serve it, what a timeout answers), which the command layer defines and
 * its table rows point at.
 *
 * A blocking command runs gr_blocking_run: its ready path first (spec->serve); if nothing was
 * there, it parks its connection: no reply yet, a waiter records a copy of the request
 * (gr_request_clone), the spec, its deadline and, for the ring, its request id, and the
 * transport stops reading that connection's later requests (they wait behind it, as in
 * Redis). Every waiter sits in the FIFO of each key it waits on and in one list in blocking
 * order.
 *
 * Waking: whatever creates or replaces a value under a key (e.g. a push, ZADD, the
 * destination of LMOVE or SINTERSTORE, RENAME, MOVE, COPY, RESTORE) calls gr_blocking_signal (SWAPDB:
 * gr_blocking_signal_db), which costs one branch when nobody is blocked and otherwise marks the key
 * ready. After the command that did it, gr_blocking_serve serves every ready key: while the key
 * holds what spec->ready accepts, the longest waiter is served (spec->serve on a copy of its
 * request narrowed to that key alone, with its own connection's reply writer); a waiter served that
 * way may make another key ready in turn (BLMOVE's destination). So a pushed value goes to the
 * longest waiter before any other command sees it. A waiter whose client is gone (socket EOF, or
 * the ring client's process dead) is dropped, and its connection closed, before anything is taken
 * for it.
 *
 * Timeouts are the server's: its loop calls gr_db_expire_blocked (db.h; its wait is sized by
 * gr_db_next_block_timeout_ms), which answers waiters past their deadline with
 * spec->timeout_reply. Served or timed-out connections are "woken": ring sessions resume
 * reading by themselves; RESP connections are handed to the server loop (gr_db_take_woken)
 * so it can flush the reply and parse what the client sent meanwhile.
 */
#ifndef GR_BLOCKING_H
#define GR_BLOCKING_H

#include <stdint.h>

#include "exec/db.h"

/* Where a blocking request's keys are. */
typedef enum gr_block_keys {
    GR_BLOCK_KEYS_IN_ITEMS = 0,   /* request->items (BLPOP k1 k2 ..., BLMPOP) */
    GR_BLOCK_KEY_IN_KEY = 1,      /* request->key alone (BLMOVE source) */
    /* the first half of request->items, each with a partner in the second half at the same
     * offset (XREAD's STREAMS k1 k2 id1 id2): served on one key as the two items {key, partner} */
    GR_BLOCK_KEYS_PAIRED = 2
} gr_block_keys_t;

/* What the blocking layer needs of a blocking command; the command layer defines one per
 * command shape (commands/cmd_list.c: BLPOP/BRPOP, BLMOVE/BRPOPLPUSH, BLMPOP;
 * commands/cmd_zset_pop.c: BZPOPMIN/BZPOPMAX, BZMPOP) and the command table's row points at
 * it. */
typedef struct gr_block_spec {
    const char *name;                 /* for messages and tests ("blpop") */
    gr_block_keys_t keys;
    /* 1 when the live value in entry can serve a waiter (a list: any list, as empty lists
     * do not exist). */
    int (*ready)(const gr_ks_entry_t *entry);
    /* The command's ready path on request (keys tried in order): 1 when it replied (a value,
     * or an error such as WRONGTYPE), 0 when no key had anything. Never parks. */
    int (*serve)(gr_server_t *db, const gr_request_t *request, gr_reply_t *reply);
    /* The reply when the timeout passes, or when the command cannot block (inside EXEC). */
    void (*timeout_reply)(const gr_request_t *request, gr_reply_t *reply);
    /* Where the command's argv holds its timeout: an index, or from the end (-1: the last
     * argument). The ring client reads it to wait as long as the server may. */
    int8_t timeout_arg;
    uint8_t timeout_in_ms;            /* 1: that argument counts milliseconds (WAITAOF), else seconds */
    /* Optional (NULL: timeout_arg places it): the timeout is the argument after this keyword,
     * wherever it is (XREAD's BLOCK ms); without the keyword the command does not block. */
    const char *timeout_keyword;
    /* Optional (NULL: ready alone decides): whether this waiter's request can be served from the
     * value in entry now, key_index naming the key among its keys (XREAD: an entry past its ID). */
    int (*ready_for)(const gr_ks_entry_t *entry, const gr_request_t *request, uint32_t key_index);
    /* Optional: the answer when a key the waiter blocks on is deleted (Redis 7's
     * signalDeletedKeyAsReady: a parked XREADGROUP gets -UNBLOCKED); NULL: it keeps waiting. */
    void (*gone_reply)(const gr_request_t *request, gr_reply_t *reply);
} gr_block_spec_t;

/* ready and serve of a command parked on no key (WAIT, WAITAOF): no value ever serves it; the
 * loop's checks, the timeout or CLIENT UNBLOCK answer it. */
int gr_block_never_ready(const gr_ks_entry_t *entry);
int gr_block_never_served(gr_server_t *db, const gr_request_t *request, gr_reply_t *reply);

/* Run a blocking command whose arguments the command layer has checked: the timeout
 * (request->timeout, seconds; 0 forever) is validated, spec->serve tried, and when nothing
 * was there the current connection parks on the request's keys; inside EXEC, or with no
 * connection to park, it answers spec->timeout_reply at once. */
/* Inline up to the ready path, which is where BLPOP on a list with values ends; the rest is
 * gr_blocking_run_unserved. */
void gr_blocking_run_unserved(gr_server_t *db, const gr_block_spec_t *spec, const gr_request_t *request, gr_reply_t *reply);
#define GR_BLOCK_TIMEOUT_MAX_S 9.2e15   /* milliseconds past INT64_MAX beyond it */
static inline void gr_blocking_run(gr_server_t *db, const gr_block_spec_t *spec, const gr_request_t *request,
                                   gr_reply_t *reply) {
    double timeout = request->timeout;   /* usable: gr_blocking_timeout_error's test (NaN fails both) */
    if (timeout >= 0 && timeout <= GR_BLOCK_TIMEOUT_MAX_S && spec->serve(db, request, reply)) return;
    gr_blocking_run_unserved(db, spec, request, reply);
}

/* Redis's checks of a blocking command's timeout (seconds): NULL when it is usable, else
 * the error text. Shared by the RESP parser and the typed path, so both say the same. */
const char *gr_blocking_timeout_error(double seconds);
/* Park the current connection on request's keys; 0, or -1 on OOM (then nothing is parked
 * and the caller replies OOM). timeout_s == 0: forever. gr_blocking_run calls it. */
int gr_blocking_park(gr_server_t *db, const gr_block_spec_t *spec, const gr_request_t *request, double timeout_s);
/* A value now exists under key in database db_index (or may: RENAME, MOVE). */
void gr_blocking_signal(gr_server_t *db, int32_t db_index, const uint8_t *key, size_t key_length);
/* key was deleted from database db_index: waiters whose spec has a gone_reply get it (exec
 * installs this as the keyspaces' delete observer; one branch when nobody waits). */
void gr_blocking_signal_deleted(gr_server_t *db, int32_t db_index, const uint8_t *key, size_t key_length);
/* Blocked keys of database db_index that hold no value any more — FLUSHDB / FLUSHALL emptied it,
 * SWAPDB brought in a database without them — answered as deleted keys (Redis 7.0's
 * scanDatabaseForDeletedStreams: a parked XREADGROUP gets its gone_reply). */
void gr_blocking_signal_db_gone(gr_server_t *db, int32_t db_index);
/* Every blocked key of database db_index (SWAPDB). */
void gr_blocking_signal_db(gr_server_t *db, int32_t db_index);
/* Serve the ready keys; called after each top-level command. */
void gr_blocking_serve(gr_server_t *db);
/* CLIENT UNBLOCK: if conn is parked, answer its blocked command now — as its timeout would
 * (spec->timeout_reply), or with_error: "-UNBLOCKED client unblocked via CLIENT UNBLOCK" — and
 * wake it, as a served waiter is woken. 1 if it was parked, 0 if not. */
int gr_blocking_unblock(gr_server_t *db, gr_connection_t *conn, int with_error);
/* The request conn is parked with (its copy: the caller may update what a later timeout
 * reply reads, as WAIT's count of acknowledging replicas) and its spec; NULL when not parked. */
gr_request_t *gr_blocking_parked_request(const gr_connection_t *conn, const gr_block_spec_t **spec);
/* Remove conn's waiter, if any, without replying (the connection is going away). */
void gr_blocking_forget(gr_server_t *db, gr_connection_t *conn);
void gr_blocking_free_all(gr_server_t *db);
/* Tests: 0 when the bookkeeping agrees with itself (every waiter linked on each of its keys,
 * its connection pointing back, the count right), else -1. */
int gr_blocking_check(const gr_server_t *db);

#endif
