/* evict.c — maxmemory-policy: Redis's approximated LRU / LFU / TTL / random eviction, after
 * its evict.c (evictionPoolPopulate, performEvictions, the LFU counter). See evict.h. */
#include "exec/evict.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/alloc.h"
#include "exec/db.h"
#include "exec/notify.h"
#include "exec/propagate.h"
#include "exec/transaction.h"

static const struct { const char *name; int policy; } policies[] = {
    {"volatile-lru", GR_MAXMEMORY_VOLATILE_LRU},     {"volatile-lfu", GR_MAXMEMORY_VOLATILE_LFU},
    {"volatile-random", GR_MAXMEMORY_VOLATILE_RANDOM}, {"volatile-ttl", GR_MAXMEMORY_VOLATILE_TTL},
    {"allkeys-lru", GR_MAXMEMORY_ALLKEYS_LRU},       {"allkeys-lfu", GR_MAXMEMORY_ALLKEYS_LFU},
    {"allkeys-random", GR_MAXMEMORY_ALLKEYS_RANDOM}, {"noeviction", GR_MAXMEMORY_NO_EVICTION},
};

int gr_evict_policy_parse(const char *name) {
    for (size_t i = 0; i < sizeof policies / sizeof policies[0]; i++)
        if (!strcasecmp(policies[i].name, name)) return policies[i].policy;
    return -1;
}

const char *gr_evict_policy_name(int policy) {
    for (size_t i = 0; i < sizeof policies / sizeof policies[0]; i++)
        if (policies[i].policy == policy) return policies[i].name;
    return "noeviction";
}

/* ---- LFU: Redis's logarithmic counter with decay ---- */

static uint64_t next_random(gr_server_t *db) {   /* splitmix64 */
    uint64_t z = (db->evict_random += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t minutes_now(int64_t now_ms) { return ((uint64_t)now_ms / 60000) & 0xFFFF; }

int gr_evict_lfu_counter(const gr_server_t *db, uint64_t access) {
    uint64_t ldt = (access >> 8) & 0xFFFF, counter = access & 0xFF, now = minutes_now(db->now_ms);
    uint64_t elapsed = now >= ldt ? now - ldt : 65535 - ldt + now;   /* Redis's LFUTimeElapsed */
    uint64_t periods = db->config.lfu_decay_time > 0 ? elapsed / (uint64_t)db->config.lfu_decay_time : 0;
    if (periods) counter = periods > counter ? 0 : counter - periods;
    return (int)counter;
}

uint64_t gr_evict_with_freq(uint64_t access, int64_t now_ms, int freq) {
    if (freq < 0) freq = 0;
    if (freq > 255) freq = 255;
    return (access & ~GR_ACCESS_LFU_BITS) | (minutes_now(now_ms) << 8) | (uint64_t)freq;
}

static uint64_t lfu_log_incr(gr_server_t *db, uint64_t counter) {
    if (counter == 255) return 255;
    double r = (double)(next_random(db) >> 11) * (1.0 / 9007199254740992.0);   /* [0, 1) */
    double base = (double)counter - GR_LFU_INIT_VAL;
    if (base < 0) base = 0;
    double p = 1.0 / (base * (double)db->config.lfu_log_factor + 1);
    return r < p ? counter + 1 : counter;
}

void gr_evict_touch(gr_server_t *db, gr_ks_entry_t *entry) {
    uint64_t lru = (uint64_t)db->now_ms << 24;
    if (db->config.maxmemory_policy & GR_MAXMEMORY_FLAG_LFU) {
        uint64_t counter = lfu_log_incr(db, (uint64_t)gr_evict_lfu_counter(db, entry->access_ms));
        entry->access_ms = lru | (minutes_now(db->now_ms) << 8) | counter;
    } else {
        entry->access_ms = lru | (entry->access_ms & GR_ACCESS_LFU_BITS);
    }
}

/* ---- the eviction pool (Redis's EVPOOL_SIZE best candidates, ascending idle) ---- */

#define POOL_SIZE 16
#define POOL_KEY_CACHED 255          /* key buffers up to this size are kept between uses */
#define SAMPLE_CHUNK 64

typedef struct pool_entry {
    uint64_t idle;                   /* larger: a better candidate */
    uint8_t *key;                    /* NULL: empty slot */
    uint32_t key_length;
    int32_t dbid;
    uint8_t *cached;                 /* a POOL_KEY_CACHED-byte buffer, reused */
} pool_entry_t;

struct gr_evict_pool { pool_entry_t entries[POOL_SIZE]; };

static struct gr_evict_pool *pool_of(gr_server_t *db) {
    if (!db->evict_pool) db->evict_pool = calloc(1, sizeof *db->evict_pool);
    return db->evict_pool;
}

void gr_evict_release(gr_server_t *db) {
    struct gr_evict_pool *pool = db->evict_pool;
    if (!pool) return;
    for (int i = 0; i < POOL_SIZE; i++) {
        if (pool->entries[i].key && pool->entries[i].key != pool->entries[i].cached) free(pool->entries[i].key);
        free(pool->entries[i].cached);
    }
    free(pool);
    db->evict_pool = NULL;
}

static void slot_clear(pool_entry_t *e) {
    if (e->key && e->key != e->cached) free(e->key);
    e->key = NULL;
    e->idle = 0;
}

/* The candidate's score under the policy: larger goes first. */
static uint64_t score_of(const gr_server_t *db, const gr_ks_entry_t *entry) {
    int policy = db->config.maxmemory_policy;
    if (policy & GR_MAXMEMORY_FLAG_LRU) return gr_evict_idle_ms(entry->access_ms, db->now_ms);
    if (policy & GR_MAXMEMORY_FLAG_LFU) return 255 - (uint64_t)gr_evict_lfu_counter(db, entry->access_ms);
    return UINT64_MAX - (uint64_t)entry->expire_at_ms;   /* volatile-ttl: the nearest expire first */
}

/* Redis's evictionPoolPopulate: insert the sampled keys into the sorted pool. */
static void pool_insert(struct gr_evict_pool *pool, int32_t dbid, const gr_ks_entry_t *entry, uint64_t idle) {
    pool_entry_t *p = pool->entries;
    int k = 0;
    while (k < POOL_SIZE && p[k].key && p[k].idle < idle) k++;
    if (k == 0 && p[POOL_SIZE - 1].key) return;   /* worse than everything in a full pool */
    if (k < POOL_SIZE && !p[k].key) {
        /* an empty slot: insert there */
    } else if (!p[POOL_SIZE - 1].key) {           /* room on the right: shift right from k */
        uint8_t *cached = p[POOL_SIZE - 1].cached;
        memmove(p + k + 1, p + k, sizeof *p * (size_t)(POOL_SIZE - k - 1));
        p[k] = (pool_entry_t){0};
        p[k].cached = cached;
    } else {                                      /* full: drop the worst (leftmost), shift left */
        k--;
        uint8_t *cached = p[0].cached;
        if (p[0].key && p[0].key != p[0].cached) free(p[0].key);
        memmove(p, p + 1, sizeof *p * (size_t)k);
        p[k] = (pool_entry_t){0};
        p[k].cached = cached;
    }
    uint8_t *buffer;
    if (entry->key_length <= POOL_KEY_CACHED) {
        if (!p[k].cached) p[k].cached = malloc(POOL_KEY_CACHED);
        buffer = p[k].cached;
    } else {
        buffer = malloc(entry->key_length);
    }
    if (!buffer) { p[k].key = NULL; return; }
    if (entry->key_length) memcpy(buffer, entry->key, entry->key_length);
    p[k].key = buffer;
    p[k].key_length = entry->key_length;
    p[k].idle = idle;
    p[k].dbid = dbid;
}

static void pool_populate(gr_server_t *db, struct gr_evict_pool *pool, int32_t dbid, int volatile_only, int thorough) {
    gr_keyspace_t *ks = db->keyspaces[dbid];
    size_t wanted = (size_t)db->config.maxmemory_samples;
    size_t keys = gr_ks_size(ks), expires = gr_ks_expires_count(ks);
    while (wanted > 0) {
        gr_ks_entry_t *sample[SAMPLE_CHUNK];
        size_t count = wanted < SAMPLE_CHUNK ? wanted : SAMPLE_CHUNK;
        /* dictGetSomeKeys's ten buckets per key; volatile keys are found among all of them */
        size_t buckets = count * 10;
        if (volatile_only && expires) buckets = buckets * (keys / expires + 1);
        if (thorough) buckets = SIZE_MAX;
        size_t found = gr_ks_sample(ks, sample, count, volatile_only, buckets);
        for (size_t i = 0; i < found; i++) pool_insert(pool, dbid, sample[i], score_of(db, sample[i]));
        wanted -= count;
    }
}

/* The next key to evict under a pool policy: its db in *dbid, or NULL. */
static gr_ks_entry_t *pick_from_pool(gr_server_t *db, int32_t *dbid) {
    struct gr_evict_pool *pool = pool_of(db);
    if (!pool) return NULL;
    int volatile_only = !(db->config.maxmemory_policy & GR_MAXMEMORY_FLAG_ALLKEYS);
    for (int round = 0; round < 8; round++) {
        size_t total = 0;
        for (int32_t i = 0; i < GR_DB_COUNT; i++) {
            gr_keyspace_t *ks = db->keyspaces[i];
            size_t keys = volatile_only ? gr_ks_expires_count(ks) : gr_ks_size(ks);
            if (keys) pool_populate(db, pool, i, volatile_only, round >= 2);
            total += keys;
        }
        if (!total) return NULL;
        for (int k = POOL_SIZE - 1; k >= 0; k--) {
            pool_entry_t *e = &pool->entries[k];
            if (!e->key) continue;
            int32_t at = e->dbid;
            gr_ks_entry_t *entry = gr_ks_find(db->keyspaces[at], e->key, e->key_length);
            slot_clear(e);
            if (entry && (!volatile_only || entry->expire_at_ms >= 0)) { *dbid = at; return entry; }
            /* a ghost (deleted since it was sampled): try the next */
        }
    }
    return NULL;
}

static gr_ks_entry_t *pick_random(gr_server_t *db, int32_t *dbid) {
    int volatile_only = !(db->config.maxmemory_policy & GR_MAXMEMORY_FLAG_ALLKEYS);
    for (int i = 0; i < GR_DB_COUNT; i++) {
        int32_t j = (int32_t)(++db->evict_next_db % GR_DB_COUNT);
        gr_keyspace_t *ks = db->keyspaces[j];
        gr_ks_entry_t *entry = NULL;
        if (!volatile_only) entry = gr_ks_random(ks);
        else if (gr_ks_expires_count(ks)) gr_ks_sample(ks, &entry, 1, 1, SIZE_MAX);
        if (entry) { *dbid = j; return entry; }
    }
    return NULL;
}

/* ---- performEvictions ---- */

static int64_t monotonic_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Redis's evictionTimeLimitUs: 50 us per step up to 10 (500 us), then 15% more per step; 100 is no limit. */
static int64_t time_limit_us(const gr_server_t *db) {
    int64_t tenacity = db->config.maxmemory_eviction_tenacity;
    if (tenacity <= 10) return 50 * tenacity;
    if (tenacity < 100) return (int64_t)(500.0 * pow(1.15, (double)tenacity - 10.0));
    return INT64_MAX;
}

static void evict_one(gr_server_t *db, int32_t dbid, gr_ks_entry_t *found) {
    gr_keyspace_t *ks = db->keyspaces[dbid];
    gr_ks_entry_t *entry = gr_ks_unlink(ks, found->key, found->key_length);
    if (!entry) return;
    gr_bytes_t key = {entry->key, entry->key_length};
    gr_propagate_del(db, dbid, entry->key, entry->key_length);   /* Redis's propagateDeletion: DEL */
    gr_watch_touch(db, dbid, entry->key, entry->key_length);   /* WATCH and client caches (tracking) */
    if (db->notify_flags & GR_NOTIFY_EVICTED) gr_notify_publish(db, GR_NOTIFY_EVICTED, "evicted", key, dbid);
    gr_ks_entry_free(ks, entry, 1);
    db->stats.evicted_keys++;
}

int gr_evict_perform(gr_server_t *db) {
    int64_t used = gr_mem_used_total();
    /* a replica keeps what its primary sends (Redis's replica-ignore-maxmemory, default yes):
     * evicting there would leave it different from the primary */
    if (db->config.maxmemory <= 0 || used <= db->config.maxmemory || db->repl.master_port) {
        db->evict_running = 0;
        return GR_EVICT_OK;
    }
    if (db->config.maxmemory_policy == GR_MAXMEMORY_NO_EVICTION) return GR_EVICT_FAIL;
    int64_t start = monotonic_us(), limit = time_limit_us(db);
    if (!db->stats.eviction_exceeded_start_us) db->stats.eviction_exceeded_start_us = start;
    int64_t to_free = used - db->config.maxmemory, freed = 0, keys = 0;
    int pooled = db->config.maxmemory_policy & (GR_MAXMEMORY_FLAG_LRU | GR_MAXMEMORY_FLAG_LFU) ||
                 db->config.maxmemory_policy == GR_MAXMEMORY_VOLATILE_TTL;
    while (freed < to_free) {
        int32_t dbid = 0;
        gr_ks_entry_t *entry = pooled ? pick_from_pool(db, &dbid) : pick_random(db, &dbid);
        if (!entry) {
            db->evict_running = 0;
            return GR_EVICT_FAIL;   /* nothing left that the policy may evict */
        }
        int64_t before = gr_mem_used_total();
        evict_one(db, dbid, entry);
        freed += before - gr_mem_used_total();
        if (++keys % 16 == 0 && freed < to_free && monotonic_us() - start > limit) {
            db->evict_running = 1;   /* the cron goes on; this command runs */
            return GR_EVICT_RUNNING;
        }
    }
    db->evict_running = 0;
    return GR_EVICT_OK;
}

void gr_evict_cron(gr_server_t *db) {
    if (db->evict_running) gr_evict_perform(db);
    if (db->stats.eviction_exceeded_start_us &&
        (db->config.maxmemory <= 0 || gr_mem_used_total() <= db->config.maxmemory)) {
        db->stats.eviction_exceeded_total_us += monotonic_us() - db->stats.eviction_exceeded_start_us;
        db->stats.eviction_exceeded_start_us = 0;
    }
}
