/* tracking.h — server-assisted client-side caching (Redis's CLIENT TRACKING): which clients
 * may hold which keys, and the invalidation messages they get when those keys change. The
 * command layer (CLIENT TRACKING, CACHING, TRACKINGINFO, GETREDIR) is commands/cmd_connection.c;
 * each transport writes the messages (resp/resp_conn.c: RESP3 pushes and RESP2 Pub/Sub
 * messages; ring/session.c: typed pushes in the reply ring).
 *
 * Two modes, as Redis 7.0:
 *   - default: after a readonly command of a tracking client runs, each of its keys (the row's
 *     key specs) gets the client's id in the tracking table. When a key is modified (every
 *     write's gr_watch_touch*, expiry, eviction through gr_tracking_invalidate_key), each
 *     client in its entry gets one invalidation message for it and the entry is dropped: a
 *     client must read the key again to be told again. OPTIN (remembered only after CLIENT
 *     CACHING yes) and OPTOUT (not after CLIENT CACHING no) choose per command; NOLOOP drops
 *     messages about the client's own writes.
 *   - BCAST: the client names prefixes (none: every key) and is told about every key
 *     modified under them, remembered or not; the keys modified since the last flush go out
 *     together, one message per prefix, when the transport's batch ends.
 *
 *     tracking table (open addressing)            prefix table (BCAST)
 *     key bytes -> sorted ids of clients          prefix -> clients, keys modified since flush
 *
 * The table is bounded by tracking-table-max-keys: past it, before each command, entries
 * picked at random are invalidated (their clients told) until it fits again, with an effort
 * that grows while it stays over, as Redis's trackingLimitUsedSlots. FLUSHDB and FLUSHALL
 * send every tracking client a null invalidation ("forget everything") and empty the table.
 *
 * Invalidations about a client's own command reach RESP clients after that command's reply
 * (Redis's tracking_pending_keys); every other client, and ring sessions always, get them at
 * once, while the write runs, so they are in the reader's output before the writer's reply.
 * A redirecting client's messages go to the client it names (REDIRECT id): RESP3 pushes, or,
 * for a RESP2 target in Pub/Sub mode, messages on __redis__:invalidate; when that client is
 * gone the tracking client is flagged broken_redirect (and told, over RESP3).
 */
#ifndef GR_TRACKING_H
#define GR_TRACKING_H

#include <stddef.h>
#include <stdint.h>

#include "core/bytes.h"

struct gr_server;
struct gr_connection;
struct gr_call;
typedef struct gr_tracking gr_tracking_t;

/* gr_connection_t.tracking flags (Redis's CLIENT_TRACKING_*). */
enum {
    GR_TRACKING_ON = 1,
    GR_TRACKING_BCAST = 2,
    GR_TRACKING_OPTIN = 4,
    GR_TRACKING_OPTOUT = 8,
    GR_TRACKING_CACHING = 16,       /* CLIENT CACHING yes (OPTIN) / no (OPTOUT) for the next command */
    GR_TRACKING_NOLOOP = 32,
    GR_TRACKING_BROKEN_REDIR = 64
};

/* What a transport's invalidate callback writes into target's output. keys NULL: the null
 * invalidation (flush: forget everything). */
enum {
    GR_INVALIDATE_PUSH = 0,         /* RESP3 ">2 invalidate [keys]"; a ring session's typed push */
    GR_INVALIDATE_PUBSUB = 1,       /* RESP2: a "message" on __redis__:invalidate with the keys */
    GR_INVALIDATE_REDIR_BROKEN = 2  /* RESP3 ">2 tracking-redir-broken <redirect_id>" */
};
typedef void (*gr_invalidate_t)(struct gr_connection *target, int form, const gr_bytes_t *keys, size_t count,
                                int64_t redirect_id);

/* ---- Lifecycle (db.c) ---- */
gr_tracking_t *gr_tracking_new(uint64_t seed);
void gr_tracking_free(gr_tracking_t *tracking);
/* Every connection is known by id (redirect targets, the table's ids). */
void gr_tracking_connection_added(struct gr_server *db, struct gr_connection *conn);
void gr_tracking_connection_removed(struct gr_server *db, struct gr_connection *conn);

/* ---- CLIENT TRACKING (validated by the command layer) ---- */
struct gr_connection *gr_tracking_find_connection(struct gr_server *db, int64_t id);
/* 0, or -1 with Redis's overlap error in error when a prefix overlaps one of conn's or another
 * of prefixes. */
int gr_tracking_check_prefixes(struct gr_connection *conn, const gr_bytes_t *prefixes, size_t count, char *error,
                               size_t error_size);
/* Turn tracking on with options (GR_TRACKING_BCAST | OPTIN | OPTOUT | NOLOOP) and prefixes
 * (BCAST): 0, or -1 when out of memory. */
int gr_tracking_enable(struct gr_server *db, struct gr_connection *conn, int64_t redirect, uint32_t options,
                       const gr_bytes_t *prefixes, size_t count);
void gr_tracking_disable(struct gr_server *db, struct gr_connection *conn);
/* conn's BCAST prefixes: each(context, prefix) (CLIENT TRACKINGINFO); returns the count. */
size_t gr_tracking_each_prefix(const struct gr_connection *conn, void (*each)(void *context, gr_bytes_t prefix),
                               void *context);

/* ---- Feeding and invalidating ---- */
/* A call ended (db.c's finish): a readonly command of a tracking client remembers its keys. */
void gr_tracking_remember_call(struct gr_server *db, const struct gr_call *call);
/* key was modified (signalModifiedKey): its trackers are told and its entry dropped; BCAST
 * prefixes matching it note it. The modifier is the running call's client (NULL: the server's
 * own change, an active expiry or an eviction). Cheap to call when nobody tracks anything. */
void gr_tracking_invalidate_key(struct gr_server *db, gr_bytes_t key);
/* FLUSHDB / FLUSHALL: every tracking client gets the null invalidation; the table empties. */
void gr_tracking_invalidate_all(struct gr_server *db);
/* A top-level command has run for conn (its reply written): its own pending invalidations
 * go out, and CLIENT CACHING's one-command flag ends. */
void gr_tracking_after_command(struct gr_server *db, struct gr_connection *conn);
/* The transport's batch ended: the BCAST keys collected go out. */
void gr_tracking_flush_broadcast(struct gr_server *db);
/* Before a command: over tracking-table-max-keys, invalidate entries at random. */
void gr_tracking_enforce_limit(struct gr_server *db);

/* ---- Queries (INFO) ---- */
typedef struct gr_tracking_stats {
    int64_t clients, keys, items, prefixes;
} gr_tracking_stats_t;
void gr_tracking_get_stats(const struct gr_server *db, gr_tracking_stats_t *out);

#endif
