/* notify.h — keyspace notifications (notify-keyspace-events), as Redis's notify.c. When an
 * event's class is enabled, exec/pubsub.h publishes
 *     "__keyspace@<db>__:<key>"   with the event name as the message   (K)
 *     "__keyevent@<db>__:<event>" with the key as the message           (E)
 * to whoever subscribes, over either transport. A command's events are its own (exec/call.h):
 * its row's default event for every key it touched, or those its handler states with
 * gr_call_notify; they are recorded here in order while the command runs and published when
 * its call ends (gr_notify_call_end). Expiry publishes "expired" where keys expire. Off (the
 * default, ""), a write pays one branch. CONFIG GET prints the classes in Redis's order.
 */
#ifndef GR_NOTIFY_H
#define GR_NOTIFY_H

#include <stddef.h>
#include <stdint.h>

#include "core/bytes.h"

struct gr_server;

enum {
    GR_NOTIFY_KEYSPACE = 1 << 0,   /* K */
    GR_NOTIFY_KEYEVENT = 1 << 1,   /* E */
    GR_NOTIFY_GENERIC = 1 << 2,    /* g: DEL, EXPIRE, RENAME, ... */
    GR_NOTIFY_STRING = 1 << 3,     /* $ */
    GR_NOTIFY_LIST = 1 << 4,       /* l */
    GR_NOTIFY_SET = 1 << 5,        /* s */
    GR_NOTIFY_HASH = 1 << 6,       /* h */
    GR_NOTIFY_ZSET = 1 << 7,       /* z */
    GR_NOTIFY_EXPIRED = 1 << 8,    /* x: a key removed because its time passed */
    GR_NOTIFY_EVICTED = 1 << 9,    /* e (goblin never evicts) */
    GR_NOTIFY_STREAM = 1 << 10,    /* t */
    GR_NOTIFY_KEY_MISS = 1 << 11,  /* m */
    GR_NOTIFY_MODULE = 1 << 12,    /* d */
    GR_NOTIFY_NEW = 1 << 13,       /* n: a key was created */
    GR_NOTIFY_ARRAY = 1 << 14,     /* the AR* commands' events: part of A, no letter of its own */
    GR_NOTIFY_ALL = GR_NOTIFY_GENERIC | GR_NOTIFY_STRING | GR_NOTIFY_LIST | GR_NOTIFY_SET | GR_NOTIFY_HASH |
                    GR_NOTIFY_ZSET | GR_NOTIFY_EXPIRED | GR_NOTIFY_EVICTED | GR_NOTIFY_STREAM | GR_NOTIFY_MODULE |
                    GR_NOTIFY_ARRAY   /* A */
};

/* "KEA" -> flags; -1 on a letter Redis does not know. */
int gr_notify_parse_flags(const char *text);
/* flags -> Redis's canonical text ("AKE"); out holds at least 24 bytes. */
void gr_notify_flags_text(int flags, char *out, size_t size);

struct gr_call;

/* The running command changed key (gr_watch_touch_current while notifications are on): the
 * row's default event applies to it, unless the handler states its own. */
void gr_notify_record_touch(struct gr_server *db, gr_bytes_t key);
/* A key was added to database dbid during the running command (the keyspace's add observer,
 * while "n" is on). */
void gr_notify_record_new(struct gr_server *db, int32_t dbid, gr_bytes_t key);
/* The call ends (exec/db.c, blocking.c): publish the events it recorded, in order, and drop
 * them. */
void gr_notify_call_end(struct gr_server *db, struct gr_call *call);

/* Publish the event for key in database dbid (the slow half of gr_notify). */
void gr_notify_publish(struct gr_server *db, int type, const char *event, gr_bytes_t key, int dbid);

#endif
