/* pubsub.h — the Pub/Sub registry: channels, patterns and shard channels, who is subscribed
 * to each, and delivery to subscribers of any transport. The commands are in
 * commands/cmd_pubsub.c; each transport's subscriber (its deliver callback) lives with the
 * transport (resp/resp_conn.c, ring/session.c).
 *
 * Three name spaces, as Redis 7: channels (SUBSCRIBE / PUBLISH), patterns (PSUBSCRIBE, matched
 * with core/glob's stringmatchlen against every PUBLISH's channel) and shard channels
 * (SSUBSCRIBE / SPUBLISH; one node, so no slots). Each is a hash map name -> entry; an entry
 * holds its subscribers in an array; a subscriber holds its memberships (entry + its slot in
 * the entry's array) in a small open-addressing map keyed by entry, so subscribe, unsubscribe
 * and duplicate checks are O(1) and a disconnect is O(its subscriptions).
 *
 *     registry map (per space)          entry                      subscriber
 *     name -> entry ----------------->  name bytes, hash           owner, deliver
 *                                        subscribers[] ----------> memberships {entry -> slot}
 *
 * A subscriber is transport-neutral: an owner pointer and a deliver callback that writes one
 * message (kind message / pmessage / smessage, channel, pattern, payload) into the owner's
 * output — a RESP connection's buffer, a ring session's reply ring — and says whether the owner
 * took it or is over its output limit (then the transport closes it, as Redis closes a slow
 * pub/sub client; the registry counts the receiver either way and delivers nothing more to it).
 * gr_connection_t (db.h) embeds one; a transport sets owner and deliver when it registers the
 * connection (deliver NULL: SUBSCRIBE is refused on that transport).
 *
 * Delivery is synchronous inside PUBLISH, in subscription order per entry, so every subscriber
 * sees one publisher's messages in the order it published them. PUBLISH's count is Redis's: one
 * per channel subscriber plus one per matching pattern subscription.
 */
#ifndef GR_PUBSUB_H
#define GR_PUBSUB_H

#include <stddef.h>
#include <stdint.h>

#include "core/bytes.h"

/* cffi-cdef-begin */
typedef enum gr_pubsub_kind {
    GR_PUBSUB_MESSAGE = 0,    /* "message": channel, payload (pattern empty) */
    GR_PUBSUB_PMESSAGE = 1,   /* "pmessage": pattern, channel, payload */
    GR_PUBSUB_SMESSAGE = 2,   /* "smessage": shard channel, payload (pattern empty) */
    GR_PUBSUB_MONITOR = 3     /* a MONITOR line: payload is the whole "+...\r\n" (RESP only) */
} gr_pubsub_kind_t;

/* What a deliver callback answers. */
enum { GR_PUBSUB_ACCEPTED = 0, GR_PUBSUB_OVER_LIMIT = 1 };
/* cffi-cdef-end */

/* The three name spaces. */
typedef enum gr_pubsub_space {
    GR_PUBSUB_CHANNELS = 0,
    GR_PUBSUB_PATTERNS = 1,
    GR_PUBSUB_SHARD_CHANNELS = 2,
    GR_PUBSUB_SPACES = 3
} gr_pubsub_space_t;

typedef struct gr_pubsub gr_pubsub_t;
typedef struct gr_subscriber gr_subscriber_t;

/* Write one message into the subscriber's output. pattern is empty unless kind is PMESSAGE.
 * The bytes are valid only during the call. Returns GR_PUBSUB_ACCEPTED or GR_PUBSUB_OVER_LIMIT. */
typedef int (*gr_pubsub_deliver_t)(gr_subscriber_t *subscriber, gr_pubsub_kind_t kind, gr_bytes_t pattern,
                                   gr_bytes_t channel, gr_bytes_t payload);

struct gr_pubsub_memberships;   /* pubsub.c's */

struct gr_subscriber {
    void *owner;                    /* the transport's connection (gr_resp_conn_t, ring session) */
    gr_pubsub_deliver_t deliver;    /* NULL: this transport cannot subscribe */
    uint32_t counts[GR_PUBSUB_SPACES];   /* subscriptions per space (read-only outside pubsub.c) */
    uint8_t over_limit;             /* deliver said OVER_LIMIT once: nothing more is delivered */
    struct gr_pubsub_memberships *memberships[GR_PUBSUB_SPACES];   /* pubsub.c's, NULL while none */
};

/* ---- Lifecycle ---- */
gr_pubsub_t *gr_pubsub_new(uint64_t seed);
void gr_pubsub_free(gr_pubsub_t *pubsub);   /* subscribers must have been forgotten */

/* ---- Subscriptions ---- */
/* 1: newly subscribed; 0: it already was; -1: out of memory (nothing changed). */
int gr_pubsub_subscribe(gr_pubsub_t *pubsub, gr_subscriber_t *subscriber, gr_pubsub_space_t space, gr_bytes_t name);
/* 1: unsubscribed; 0: it was not subscribed. */
int gr_pubsub_unsubscribe(gr_pubsub_t *pubsub, gr_subscriber_t *subscriber, gr_pubsub_space_t space, gr_bytes_t name);
/* Unsubscribe from every name of one space, calling each(context, name) after each removal
 * (the name's bytes are valid during the call; the counts are already updated). */
void gr_pubsub_unsubscribe_all(gr_pubsub_t *pubsub, gr_subscriber_t *subscriber, gr_pubsub_space_t space,
                               void (*each)(void *context, gr_bytes_t name), void *context);
/* Every subscription of every space dropped, silently (disconnect, RESET). */
void gr_pubsub_forget(gr_pubsub_t *pubsub, gr_subscriber_t *subscriber);
/* RESP's subscribed-mode count: channels + patterns (Redis's clientSubscriptionsCount). */
static inline uint32_t gr_subscriber_count(const gr_subscriber_t *s) {
    return s->counts[GR_PUBSUB_CHANNELS] + s->counts[GR_PUBSUB_PATTERNS];
}
/* Any subscription at all (Redis's CLIENT_PUBSUB flag: the RESP2 subscribed-mode rules). */
static inline uint32_t gr_subscriber_total(const gr_subscriber_t *s) {
    return s->counts[GR_PUBSUB_CHANNELS] + s->counts[GR_PUBSUB_PATTERNS] + s->counts[GR_PUBSUB_SHARD_CHANNELS];
}

/* ---- Publishing ---- */
/* PUBLISH: deliver to the channel's subscribers, then to every pattern subscription matching
 * it. Returns the receivers (Redis's count). */
int64_t gr_pubsub_publish(gr_pubsub_t *pubsub, gr_bytes_t channel, gr_bytes_t payload);
/* SPUBLISH: the shard channel's subscribers. */
int64_t gr_pubsub_spublish(gr_pubsub_t *pubsub, gr_bytes_t channel, gr_bytes_t payload);
/* Messages published and deliveries made since start (INFO, tests). */
int64_t gr_pubsub_published(const gr_pubsub_t *pubsub);

/* ---- Queries (PUBSUB, INFO) ---- */
/* Names in a space (PUBSUB NUMPAT is the pattern count). */
size_t gr_pubsub_name_count(const gr_pubsub_t *pubsub, gr_pubsub_space_t space);
/* Subscribers of one name (PUBSUB NUMSUB / SHARDNUMSUB). */
size_t gr_pubsub_subscriber_count(const gr_pubsub_t *pubsub, gr_pubsub_space_t space, gr_bytes_t name);
/* Call each(context, name) for every name of a space matching pattern (pattern.data NULL:
 * all). Names are valid during the call; the registry must not change meanwhile. */
void gr_pubsub_each_name(const gr_pubsub_t *pubsub, gr_pubsub_space_t space, gr_bytes_t pattern,
                         void (*each)(void *context, gr_bytes_t name), void *context);

#endif
