/* evict.h — maxmemory-policy: Redis's approximated key eviction (evict.c), and the per-key
 * access metadata it reads (the LRU clock and the LFU counter).
 *
 * Per key: the keyspace entry's 64-bit access_ms (engines/keyspace.h) holds both, so eviction
 * adds no byte per key:
 *   bits 63..24  LRU clock: the last access in unix ms, mod 2^40 (Redis keeps seconds in 24
 *                bits; 40 bits of ms wrap after ~34.8 years, idle time is taken mod 2^40)
 *   bits 23..8   LFU decrement time: unix minutes mod 2^16 (Redis's ldt)
 *   bits  7..0   LFU counter: Redis's logarithmic counter (new keys start at 5)
 * A new key gets the whole stamp (gr_evict_stamp); an overwritten or renamed key keeps its
 * LFU bits (the keyspace's keep mask: Redis's dbOverwrite keeps the counter) and takes the
 * clock's LRU bits. An access (gr_evict_touch, from gr_db_lookup*) always moves the LRU clock,
 * and under an LFU policy also decays and increments the counter as Redis's updateLFU
 * (lfu-decay-time, lfu-log-factor). The LRU clock is kept under every policy, so switching
 * from an LFU policy back to an LRU one finds real idle times (Redis's reads garbage then).
 *
 * Eviction: gr_evict_perform is Redis's performEvictions (a replica never evicts: Redis's
 * replica-ignore-maxmemory, default yes, is the only behaviour). Admission (db.c's gr_db_admit)
 * calls it, as Redis 7.0's processCommand, before every command while used memory is over
 * maxmemory (a read too; inside EXEC or a script only before a denyoom one), so with maxmemory
 * 0 the cost is one branch and under maxmemory one comparison.
 * It frees keys until used memory is back under maxmemory: the policy's candidates come from
 * Redis's eviction pool (16 best candidates across the 16 databases, each round sampling
 * maxmemory-samples keys per database: idle time for *-lru, 255 - counter for *-lfu, the
 * nearest expire for volatile-ttl) or, for *-random, a random key of the next database in
 * turn. volatile-* policies consider only keys with an expire. Each evicted key is propagated
 * as DEL (exec/propagate.h), published as the keyspace event "evicted" (class e), touches
 * WATCH (signalModifiedKey) and counts in evicted_keys. maxmemory-eviction-tenacity bounds
 * the time one call spends (Redis's evictionTimeLimitUs, checked every 16 keys); past it the
 * command runs anyway and the cron goes on evicting (Redis's eviction time proc). Nothing to
 * evict (noeviction, or no candidate key) is GR_EVICT_FAIL: the command gets Redis's OOM.
 */
#ifndef GR_EVICT_H
#define GR_EVICT_H

#include <stdint.h>

#include "engines/keyspace.h"

struct gr_server;

/* maxmemory-policy, with Redis's flag bits (MAXMEMORY_FLAG_*) */
enum {
    GR_MAXMEMORY_FLAG_LRU = 1 << 0,
    GR_MAXMEMORY_FLAG_LFU = 1 << 1,
    GR_MAXMEMORY_FLAG_ALLKEYS = 1 << 2,
    GR_MAXMEMORY_VOLATILE_LRU = (0 << 8) | GR_MAXMEMORY_FLAG_LRU,
    GR_MAXMEMORY_VOLATILE_LFU = (1 << 8) | GR_MAXMEMORY_FLAG_LFU,
    GR_MAXMEMORY_VOLATILE_TTL = (2 << 8),
    GR_MAXMEMORY_VOLATILE_RANDOM = (3 << 8),
    GR_MAXMEMORY_ALLKEYS_LRU = (4 << 8) | GR_MAXMEMORY_FLAG_LRU | GR_MAXMEMORY_FLAG_ALLKEYS,
    GR_MAXMEMORY_ALLKEYS_LFU = (5 << 8) | GR_MAXMEMORY_FLAG_LFU | GR_MAXMEMORY_FLAG_ALLKEYS,
    GR_MAXMEMORY_ALLKEYS_RANDOM = (6 << 8) | GR_MAXMEMORY_FLAG_ALLKEYS,
    GR_MAXMEMORY_NO_EVICTION = (7 << 8),
};

/* The policy named (case-insensitive), or -1. */
int gr_evict_policy_parse(const char *name);
/* The policy's name ("allkeys-lru"). */
const char *gr_evict_policy_name(int policy);
/* Redis's list, for CONFIG SET's error. */
#define GR_EVICT_POLICY_NAMES \
    "volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction"

/* ---- the packed access metadata ---- */
#define GR_ACCESS_LFU_BITS 0xFFFFFFull          /* ldt and counter: what overwrite and rename keep */
#define GR_ACCESS_LRU_MASK ((1ull << 40) - 1)
#define GR_LFU_INIT_VAL 5

/* The stamp of a new key at now_ms: LRU clock now, LFU ldt now with the initial counter. */
static inline uint64_t gr_evict_stamp(int64_t now_ms) {
    return ((uint64_t)now_ms << 24) | ((((uint64_t)now_ms / 60000) & 0xFFFF) << 8) | GR_LFU_INIT_VAL;
}
/* Milliseconds since the entry's last access (its LRU clock). */
static inline uint64_t gr_evict_idle_ms(uint64_t access, int64_t now_ms) {
    return ((uint64_t)now_ms - (access >> 24)) & GR_ACCESS_LRU_MASK;
}
/* Set the LRU clock so that the key has been idle idle_ms (RESTORE IDLETIME). */
static inline uint64_t gr_evict_with_idle(uint64_t access, int64_t now_ms, uint64_t idle_ms) {
    return (access & GR_ACCESS_LFU_BITS) | (((uint64_t)now_ms - idle_ms) << 24);
}
/* The LFU counter after decay (Redis's LFUDecrAndReturn: OBJECT FREQ); nothing is written. */
int gr_evict_lfu_counter(const struct gr_server *db, uint64_t access);
/* The counter set to freq with the decrement time now (RESTORE FREQ). */
uint64_t gr_evict_with_freq(uint64_t access, int64_t now_ms, int freq);

/* An access to entry (a lookup without NOTOUCH): the LRU clock, and under an LFU policy the
 * counter (decayed, then incremented with probability 1 / ((counter - 5) * lfu-log-factor + 1)). */
void gr_evict_touch(struct gr_server *db, gr_ks_entry_t *entry);

/* ---- eviction ---- */
enum { GR_EVICT_OK = 0, GR_EVICT_RUNNING = 1, GR_EVICT_FAIL = 2 };
/* Used memory is over maxmemory: evict by the policy. GR_EVICT_OK (under now), GR_EVICT_RUNNING
 * (time limit reached, the cron goes on: let the command run), GR_EVICT_FAIL (nothing can go). */
int gr_evict_perform(struct gr_server *db);
/* The cron: go on evicting after a call that ran out of time (and close the exceeded-time
 * interval INFO reports once memory is under the limit). */
void gr_evict_cron(struct gr_server *db);
/* Free the eviction pool (gr_db_free). */
void gr_evict_release(struct gr_server *db);

#endif
