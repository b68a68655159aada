/* tracking.c — the tracking table, the BCAST prefix table and the invalidation messages of
 * CLIENT TRACKING; the design is in tracking.h, the command in commands/cmd_connection.c.
 */
#include "exec/tracking.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/siphash.h"
#include "exec/db.h"

#define MEM GR_MEM_SESSION

/* ---- the tracking table: key -> sorted ids ---- */

typedef struct tracked_key {
    uint64_t hash;
    int64_t *ids;            /* sorted, distinct */
    uint32_t count, capacity;
    uint32_t length;
    uint8_t key[];
} tracked_key_t;

/* connections by id: every registered one (redirect targets and the table's ids) */
typedef struct conn_slot {
    int64_t id;              /* 0: empty */
    gr_connection_t *conn;
} conn_slot_t;

/* A key modified under a BCAST prefix since the last flush, and who modified it (NOLOOP). */
typedef struct bcast_key {
    uint8_t *key;
    uint32_t length;
    uint64_t order;          /* the modification's sequence: the last one names the modifier */
    int64_t modifier;        /* 0: the server itself */
} bcast_key_t;

typedef struct bcast_prefix {
    uint8_t *prefix;
    uint32_t length;
    gr_connection_t **clients;
    size_t client_count, client_capacity;
    bcast_key_t *keys;
    size_t key_count, key_capacity;
} bcast_prefix_t;

/* a client's prefixes: the entries of the prefix table it is in */
struct gr_tracking_prefixes {
    bcast_prefix_t **items;
    size_t count, capacity;
};

/* an invalidation for the running command's own client, sent after its reply (RESP) */
typedef struct pending_key {
    uint8_t *key;            /* NULL: the null invalidation */
    uint32_t length;
} pending_key_t;

struct gr_tracking {
    uint64_t k0, k1;
    tracked_key_t **slots;
    size_t capacity, count;  /* capacity: a power of two, 0 before the first key */
    int64_t items;           /* (key, id) pairs */
    conn_slot_t *conns;
    size_t conn_capacity, conn_count;
    bcast_prefix_t **prefixes;
    size_t prefix_count, prefix_capacity;
    size_t prefixes_pending; /* prefixes with keys to flush */
    uint64_t bcast_order;
    int64_t clients;         /* connections with tracking on */
    pending_key_t *pending;
    size_t pending_count, pending_capacity;
    gr_connection_t *pending_owner;
    uint32_t timeout_counter;  /* enforce_limit's runs that stayed over the limit */
    uint64_t random;
};

static void update_live(gr_server_t *db) {
    gr_tracking_t *t = db->tracking;
    db->tracking_live = t->clients + (int64_t)t->count + (int64_t)t->prefix_count + (int64_t)t->pending_count;
}

static uint64_t next_random(gr_tracking_t *t) {   /* xorshift64* */
    uint64_t x = t->random;
    x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
    t->random = x;
    return x * 0x2545F4914F6CDD1DULL;
}

gr_tracking_t *gr_tracking_new(uint64_t seed) {
    gr_tracking_t *t = gr_mem_calloc(1, sizeof *t, MEM);
    if (!t) return NULL;
    t->k0 = seed ^ 0x7472616b696e6731ULL;
    t->k1 = seed * 0x9e3779b97f4a7c15ULL + 7;
    t->random = seed | 1;
    return t;
}

static void free_key(tracked_key_t *k) {
    gr_mem_free(k->ids, MEM);
    gr_mem_free(k, MEM);
}

static void free_prefix(bcast_prefix_t *p) {
    for (size_t i = 0; i < p->key_count; i++) gr_mem_free(p->keys[i].key, MEM);
    gr_mem_free(p->keys, MEM);
    gr_mem_free(p->clients, MEM);
    gr_mem_free(p->prefix, MEM);
    gr_mem_free(p, MEM);
}

static void clear_pending(gr_tracking_t *t) {
    for (size_t i = 0; i < t->pending_count; i++) gr_mem_free(t->pending[i].key, MEM);
    t->pending_count = 0;
    t->pending_owner = NULL;
}

void gr_tracking_free(gr_tracking_t *t) {
    if (!t) return;
    for (size_t i = 0; i < t->capacity; i++)
        if (t->slots[i]) free_key(t->slots[i]);
    gr_mem_free(t->slots, MEM);
    for (size_t i = 0; i < t->prefix_count; i++) free_prefix(t->prefixes[i]);
    gr_mem_free(t->prefixes, MEM);
    gr_mem_free(t->conns, MEM);
    clear_pending(t);
    gr_mem_free(t->pending, MEM);
    gr_mem_free(t, MEM);
}

static uint64_t hash_of(const gr_tracking_t *t, const uint8_t *key, size_t length) {
    return gr_siphash(key, length, t->k0, t->k1, 1, 2);
}

static size_t find_slot(const gr_tracking_t *t, const uint8_t *key, size_t length, uint64_t hash) {
    size_t mask = t->capacity - 1;
    for (size_t i = hash & mask;; i = (i + 1) & mask) {
        tracked_key_t *k = t->slots[i];
        if (!k || (k->hash == hash && k->length == length && (length == 0 || memcmp(k->key, key, length) == 0)))
            return i;
    }
}

static int grow_table(gr_tracking_t *t) {
    size_t capacity = t->capacity ? t->capacity * 2 : 64;
    tracked_key_t **slots = gr_mem_calloc(capacity, sizeof *slots, MEM);
    if (!slots) return -1;
    for (size_t i = 0; i < t->capacity; i++) {
        tracked_key_t *k = t->slots[i];
        if (!k) continue;
        size_t j = k->hash & (capacity - 1);
        while (slots[j]) j = (j + 1) & (capacity - 1);
        slots[j] = k;
    }
    gr_mem_free(t->slots, MEM);
    t->slots = slots;
    t->capacity = capacity;
    return 0;
}

/* Remove the key at slot i, shifting the probe chain after it back (no tombstones). */
static void remove_slot(gr_tracking_t *t, size_t i) {
    size_t mask = t->capacity - 1;
    t->slots[i] = NULL;
    t->count--;
    for (size_t j = (i + 1) & mask; t->slots[j]; j = (j + 1) & mask) {
        size_t home = t->slots[j]->hash & mask;
        /* the entry at j may fill the hole at i when its home is not in (i, j] (cyclically) */
        int movable = i <= j ? (home <= i || home > j) : (home <= i && home > j);
        if (movable) {
            t->slots[i] = t->slots[j];
            t->slots[j] = NULL;
            i = j;
        }
    }
}

/* 1 added, 0 already there, -1 out of memory */
static int remember(gr_tracking_t *t, const uint8_t *key, size_t length, int64_t id) {
    if ((t->count + 1) * 2 > t->capacity && grow_table(t) != 0) return -1;
    uint64_t hash = hash_of(t, key, length);
    size_t i = find_slot(t, key, length, hash);
    tracked_key_t *k = t->slots[i];
    if (!k) {
        k = gr_mem_alloc(sizeof *k + length, MEM);
        if (!k) return -1;
        k->hash = hash, k->ids = NULL, k->count = k->capacity = 0, k->length = (uint32_t)length;
        if (length) memcpy(k->key, key, length);
        t->slots[i] = k;
        t->count++;
    }
    uint32_t lo = 0, hi = k->count;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (k->ids[mid] < id) lo = mid + 1;
        else hi = mid;
    }
    if (lo < k->count && k->ids[lo] == id) return 0;
    if (k->count == k->capacity) {
        uint32_t capacity = k->capacity ? k->capacity * 2 : 2;
        int64_t *ids = gr_mem_realloc(k->ids, capacity * sizeof *ids, MEM);
        if (!ids) return -1;
        k->ids = ids, k->capacity = capacity;
    }
    memmove(k->ids + lo + 1, k->ids + lo, (k->count - lo) * sizeof *k->ids);
    k->ids[lo] = id;
    k->count++;
    t->items++;
    return 1;
}

/* ---- connections by id ---- */

static size_t conn_find(const gr_tracking_t *t, int64_t id) {
    size_t mask = t->conn_capacity - 1;
    size_t i = (size_t)((uint64_t)id * 0x9e3779b97f4a7c15ULL >> 17) & mask;
    while (t->conns[i].id && t->conns[i].id != id) i = (i + 1) & mask;
    return i;
}

static int conn_grow(gr_tracking_t *t) {
    size_t old_capacity = t->conn_capacity;
    conn_slot_t *old = t->conns;
    size_t capacity = old_capacity ? old_capacity * 2 : 64;
    conn_slot_t *conns = gr_mem_calloc(capacity, sizeof *conns, MEM);
    if (!conns) return -1;
    t->conns = conns, t->conn_capacity = capacity;
    for (size_t i = 0; i < old_capacity; i++)
        if (old[i].id) t->conns[conn_find(t, old[i].id)] = old[i];
    gr_mem_free(old, MEM);
    return 0;
}

void gr_tracking_connection_added(gr_server_t *db, gr_connection_t *conn) {
    gr_tracking_t *t = db->tracking;
    if (!t || conn->id == 0) return;
    if ((t->conn_count + 1) * 2 > t->conn_capacity && conn_grow(t) != 0) return;   /* unknown by id: no redirect to it */
    size_t i = conn_find(t, conn->id);
    if (!t->conns[i].id) t->conn_count++;
    t->conns[i].id = conn->id;
    t->conns[i].conn = conn;
}

gr_connection_t *gr_tracking_find_connection(gr_server_t *db, int64_t id) {
    gr_tracking_t *t = db->tracking;
    if (!t || !t->conn_capacity || id == 0) return NULL;
    size_t i = conn_find(t, id);
    return t->conns[i].id ? t->conns[i].conn : NULL;
}

void gr_tracking_connection_removed(gr_server_t *db, gr_connection_t *conn) {
    gr_tracking_t *t = db->tracking;
    if (!t) return;
    if (conn->tracking) gr_tracking_disable(db, conn);
    if (t->pending_owner == conn) clear_pending(t);
    if (!t->conn_capacity) return;
    size_t mask = t->conn_capacity - 1;
    size_t i = conn_find(t, conn->id);
    if (!t->conns[i].id || t->conns[i].conn != conn) return;
    t->conns[i].id = 0, t->conns[i].conn = NULL;
    t->conn_count--;
    for (size_t j = (i + 1) & mask; t->conns[j].id; j = (j + 1) & mask) {   /* backward shift */
        size_t home = (size_t)((uint64_t)t->conns[j].id * 0x9e3779b97f4a7c15ULL >> 17) & mask;
        int movable = i <= j ? (home <= i || home > j) : (home <= i && home > j);
        if (movable) {
            t->conns[i] = t->conns[j];
            t->conns[j].id = 0, t->conns[j].conn = NULL;
            i = j;
        }
    }
}

/* ---- sending ---- */

/* Redis's sendTrackingMessage: to c, or to the client it redirects to. keys NULL: null. */
static void send_message(gr_server_t *db, gr_connection_t *c, const gr_bytes_t *keys, size_t count) {
    gr_connection_t *target = c;
    int redirected = 0;
    if (c->tracking_redirect) {
        target = gr_tracking_find_connection(db, c->tracking_redirect);
        if (!target) {
            c->tracking |= GR_TRACKING_BROKEN_REDIR;
            if (c->protocol == 3 && c->invalidate)
                c->invalidate(c, GR_INVALIDATE_REDIR_BROKEN, NULL, 0, c->tracking_redirect);
            return;
        }
        redirected = 1;
    }
    if (!target->invalidate) return;
    if (target->protocol == 3 || target->kind == GR_CONN_RING)
        target->invalidate(target, GR_INVALIDATE_PUSH, keys, count, 0);
    else if (redirected && gr_subscriber_total(&target->subscriber))
        target->invalidate(target, GR_INVALIDATE_PUBSUB, keys, count, 0);
    /* else a RESP2 client without redirection: nothing can carry it */
}

static int is_running_client(const gr_server_t *db, const gr_connection_t *c) {
    return db->call && db->call->conn == c;
}

static void send_pending(gr_server_t *db);

/* An invalidation for the running command's own RESP client waits for its reply. */
static void defer_or_send(gr_server_t *db, gr_connection_t *c, const gr_bytes_t *key) {
    gr_tracking_t *t = db->tracking;
    if (!is_running_client(db, c) || c->kind == GR_CONN_RING) {
        send_message(db, c, key, key ? 1 : 0);
        return;
    }
    if (t->pending_owner && t->pending_owner != c) send_pending(db);   /* another client's (a served waiter) first */
    if (t->pending_count == t->pending_capacity) {
        size_t capacity = t->pending_capacity ? t->pending_capacity * 2 : 8;
        pending_key_t *grown = gr_mem_realloc(t->pending, capacity * sizeof *grown, MEM);
        if (!grown) { send_message(db, c, key, key ? 1 : 0); return; }
        t->pending = grown, t->pending_capacity = capacity;
    }
    pending_key_t *p = &t->pending[t->pending_count];
    p->key = NULL, p->length = 0;
    if (key) {
        p->key = gr_mem_alloc(key->length ? key->length : 1, MEM);
        if (!p->key) { send_message(db, c, key, 1); return; }
        memcpy(p->key, key->data, key->length);
        p->length = key->length;
    }
    t->pending_count++;
    t->pending_owner = c;
    update_live(db);
}

/* ---- invalidation ---- */

static int has_prefix(const uint8_t *key, size_t length, const uint8_t *prefix, size_t prefix_length) {
    return length >= prefix_length && (prefix_length == 0 || memcmp(key, prefix, prefix_length) == 0);
}

static int compare_prefixes(const void *a, const void *b) {
    const bcast_prefix_t *x = *(bcast_prefix_t *const *)a, *y = *(bcast_prefix_t *const *)b;
    size_t n = x->length < y->length ? x->length : y->length;
    int c = n ? memcmp(x->prefix, y->prefix, n) : 0;
    return c ? c : (x->length < y->length ? -1 : (x->length > y->length ? 1 : 0));
}

static void note_broadcast(gr_server_t *db, gr_bytes_t key, int64_t modifier) {
    gr_tracking_t *t = db->tracking;
    for (size_t i = 0; i < t->prefix_count; i++) {
        bcast_prefix_t *p = t->prefixes[i];
        if (!has_prefix(key.data, key.length, p->prefix, p->length)) continue;
        if (p->key_count == p->key_capacity) {
            size_t capacity = p->key_capacity ? p->key_capacity * 2 : 8;
            bcast_key_t *grown = gr_mem_realloc(p->keys, capacity * sizeof *grown, MEM);
            if (!grown) continue;
            p->keys = grown, p->key_capacity = capacity;
        }
        uint8_t *copy = gr_mem_alloc(key.length ? key.length : 1, MEM);
        if (!copy) continue;
        memcpy(copy, key.data, key.length);
        if (p->key_count == 0) t->prefixes_pending++;
        p->keys[p->key_count++] = (bcast_key_t){copy, key.length, ++t->bcast_order, modifier};
    }
}

/* Tell the trackers of the key at slot i and drop it (Redis's trackingInvalidateKey). */
static void invalidate_slot(gr_server_t *db, size_t i, gr_connection_t *modifier) {
    gr_tracking_t *t = db->tracking;
    tracked_key_t *k = t->slots[i];
    remove_slot(t, i);
    t->items -= k->count;
    gr_bytes_t key = {k->key, k->length};
    for (uint32_t j = 0; j < k->count; j++) {
        gr_connection_t *target = gr_tracking_find_connection(db, k->ids[j]);
        if (!target || !(target->tracking & GR_TRACKING_ON) || (target->tracking & GR_TRACKING_BCAST)) continue;
        if ((target->tracking & GR_TRACKING_NOLOOP) && target == modifier) continue;
        defer_or_send(db, target, &key);
    }
    free_key(k);
}

void gr_tracking_invalidate_key(gr_server_t *db, gr_bytes_t key) {
    gr_tracking_t *t = db->tracking;
    if (!t) return;
    gr_connection_t *modifier = db->call ? db->call->conn : NULL;
    if (t->prefix_count) note_broadcast(db, key, modifier ? modifier->id : 0);
    if (t->count) {
        size_t i = find_slot(t, key.data, key.length, hash_of(t, key.data, key.length));
        if (t->slots[i]) invalidate_slot(db, i, modifier);
    }
    update_live(db);
}

void gr_tracking_invalidate_all(gr_server_t *db) {
    gr_tracking_t *t = db->tracking;
    if (!t) return;
    if (t->clients)
        for (gr_connection_t *c = db->connections; c; c = c->next)
            if (c->tracking & GR_TRACKING_ON) defer_or_send(db, c, NULL);
    for (size_t i = 0; i < t->capacity; i++)
        if (t->slots[i]) free_key(t->slots[i]);
    gr_mem_free(t->slots, MEM);
    t->slots = NULL;
    t->capacity = t->count = 0;
    t->items = 0;
    update_live(db);
}

void gr_tracking_enforce_limit(gr_server_t *db) {
    gr_tracking_t *t = db->tracking;
    int64_t max = db->config.tracking_table_max_keys;
    if (!t || max <= 0 || (int64_t)t->count <= max) {
        if (t) t->timeout_counter = 0;
        return;
    }
    /* Redis's effort: 100 keys per run, more each run that ended still over the limit */
    int64_t effort = 100 * ((int64_t)t->timeout_counter + 1);
    while (effort-- > 0 && t->count) {
        size_t i = (size_t)next_random(t) & (t->capacity - 1);
        while (!t->slots[i]) i = (i + 1) & (t->capacity - 1);
        /* an eviction of the table, not a change of the key: no BCAST note, no modifier */
        invalidate_slot(db, i, NULL);
        if ((int64_t)t->count <= max) {
            t->timeout_counter = 0;
            update_live(db);
            return;
        }
    }
    t->timeout_counter++;
    update_live(db);
}

/* ---- feeding ---- */

static void remember_key(gr_server_t *db, gr_connection_t *c, const uint8_t *key, size_t length) {
    if (remember(db->tracking, key, length, c->id) < 0) return;   /* out of memory: not cached is safe */
}

void gr_tracking_remember_call(gr_server_t *db, const gr_call_t *call) {
    gr_connection_t *c = call->conn;
    const gr_command_t *row = call->row;
    if (!c || !row || !(c->tracking & GR_TRACKING_ON) || (c->tracking & GR_TRACKING_BCAST)) return;
    uint32_t flags = gr_command_flags(call->index);
    /* readonly commands; not the read-only script commands (their commands are tracked as they
     * run), nor the shard channels of SSUBSCRIBE's family */
    if (!(flags & GR_CMD_FLAG_READONLY) || (flags & (GR_CMD_FLAG_NOSCRIPT | GR_CMD_FLAG_PUBSUB))) return;
    int optin = c->tracking & GR_TRACKING_OPTIN, optout = c->tracking & GR_TRACKING_OPTOUT;
    int caching = c->tracking & GR_TRACKING_CACHING;
    if ((optin && !caching) || (optout && caching)) return;
    size_t argc = call->argc;
    if (argc == 0) {
        /* a typed ring request: the key of a single-key row (the multi-key rows' keys are not
         * in argv to walk; the near-cache caches single-key reads only) */
        const gr_key_spec_t *spec = &row->keys[0];
        if (call->request && spec->begin == 1 && !spec->keynum && spec->last == 0 && !row->keys[1].begin &&
            !row->find_keys && call->request->key.data)
            remember_key(db, c, call->request->key.data, call->request->key.length);
        update_live(db);
        return;
    }
    const uint8_t *const *argv = call->argv;
    const size_t *argv_length = call->argv_length;
    if (row->find_keys) {
        size_t positions[64];
        const char *key_flags[64];
        size_t found = row->find_keys(argc, argv, argv_length, positions, key_flags, 64);
        for (size_t i = 0; i < found && i < 64; i++)
            if (positions[i] < argc) remember_key(db, c, argv[positions[i]], argv_length[positions[i]]);
        update_live(db);
        return;
    }
    for (int s = 0; s < GR_MAX_KEY_SPECS && row->keys[s].begin; s++) {
        const gr_key_spec_t *spec = &row->keys[s];
        size_t first, last, step = spec->step > 0 ? (size_t)spec->step : 1;
        if (gr_key_spec_positions(spec, argc, argv, argv_length, &first, &last) != 0) continue;
        if (spec->flags && strstr(spec->flags, "not_key")) continue;
        for (size_t i = first; i <= last && i < argc; i += step) remember_key(db, c, argv[i], argv_length[i]);
    }
    update_live(db);
}

/* ---- after a command, after a batch ---- */

/* The deferred invalidations of the client they were for, in order. */
static void send_pending(gr_server_t *db) {
    gr_tracking_t *t = db->tracking;
    if (!t->pending_owner) return;
    gr_connection_t *owner = t->pending_owner;
    t->pending_owner = NULL;   /* sending may not defer again */
    for (size_t i = 0; i < t->pending_count; i++) {
        gr_bytes_t key = {t->pending[i].key, t->pending[i].length};
        send_message(db, owner, t->pending[i].key ? &key : NULL, t->pending[i].key ? 1 : 0);
        gr_mem_free(t->pending[i].key, MEM);
    }
    t->pending_count = 0;
    update_live(db);
}

void gr_tracking_after_command(gr_server_t *db, gr_connection_t *conn) {
    gr_tracking_t *t = db->tracking;
    if (!t) return;
    send_pending(db);
    if (conn && (conn->tracking & GR_TRACKING_CACHING)) {
        if (conn->tracking_caching_hold) conn->tracking_caching_hold = 0;   /* CLIENT CACHING itself, TRACKINGINFO */
        else if (!conn->in_multi) conn->tracking &= (uint8_t)~GR_TRACKING_CACHING;
    } else if (conn) {
        conn->tracking_caching_hold = 0;
    }
}

static int compare_bcast_keys(const void *a, const void *b) {
    const bcast_key_t *x = a, *y = b;
    size_t n = x->length < y->length ? x->length : y->length;
    int c = n ? memcmp(x->key, y->key, n) : 0;
    if (c) return c;
    if (x->length != y->length) return x->length < y->length ? -1 : 1;
    return x->order < y->order ? -1 : (x->order > y->order ? 1 : 0);
}

static int compare_clients(const void *a, const void *b) {
    int64_t x = (*(gr_connection_t *const *)a)->id, y = (*(gr_connection_t *const *)b)->id;
    return x < y ? -1 : (x > y ? 1 : 0);
}

void gr_tracking_flush_broadcast(gr_server_t *db) {
    gr_tracking_t *t = db->tracking;
    if (!t || !t->prefixes_pending) return;
    gr_bytes_t *keys = NULL;
    size_t keys_capacity = 0;
    /* Redis walks its radix trees: prefixes in byte order, each prefix's clients by id */
    qsort(t->prefixes, t->prefix_count, sizeof *t->prefixes, compare_prefixes);
    for (size_t i = 0; i < t->prefix_count; i++) {
        bcast_prefix_t *p = t->prefixes[i];
        if (!p->key_count) continue;
        qsort(p->clients, p->client_count, sizeof *p->clients, compare_clients);
        /* Redis keeps them in a radix tree: sorted, each once, valued with its last modifier */
        qsort(p->keys, p->key_count, sizeof *p->keys, compare_bcast_keys);
        size_t unique = 0;
        for (size_t k = 0; k < p->key_count; k++) {
            if (unique && p->keys[unique - 1].length == p->keys[k].length &&
                (p->keys[k].length == 0 || memcmp(p->keys[unique - 1].key, p->keys[k].key, p->keys[k].length) == 0)) {
                gr_mem_free(p->keys[unique - 1].key, MEM);
                p->keys[unique - 1] = p->keys[k];   /* later in order: the last modifier */
            } else {
                p->keys[unique++] = p->keys[k];
            }
        }
        p->key_count = unique;
        if (keys_capacity < unique) {
            gr_bytes_t *grown = realloc(keys, unique * sizeof *keys);
            if (!grown) break;
            keys = grown, keys_capacity = unique;
        }
        for (size_t c = 0; c < p->client_count; c++) {
            gr_connection_t *client = p->clients[c];
            size_t n = 0;
            for (size_t k = 0; k < unique; k++) {
                if ((client->tracking & GR_TRACKING_NOLOOP) && p->keys[k].modifier == client->id) continue;
                keys[n++] = (gr_bytes_t){p->keys[k].key, p->keys[k].length};
            }
            if (n) send_message(db, client, keys, n);
        }
        for (size_t k = 0; k < p->key_count; k++) gr_mem_free(p->keys[k].key, MEM);
        p->key_count = 0;
    }
    free(keys);
    t->prefixes_pending = 0;
    for (size_t i = 0; i < t->prefix_count; i++)
        if (t->prefixes[i]->key_count) t->prefixes_pending++;   /* left by an allocation failure */
}

/* ---- enabling, disabling ---- */

static int overlaps(const uint8_t *a, size_t a_length, const uint8_t *b, size_t b_length) {
    size_t n = a_length < b_length ? a_length : b_length;
    return n == 0 || memcmp(a, b, n) == 0;
}

int gr_tracking_check_prefixes(gr_connection_t *conn, const gr_bytes_t *prefixes, size_t count, char *error,
                               size_t error_size) {
    struct gr_tracking_prefixes *mine = conn->tracking_prefixes;
    for (size_t i = 0; i < count; i++) {
        for (size_t j = 0; mine && j < mine->count; j++) {
            const bcast_prefix_t *p = mine->items[j];
            if (overlaps(p->prefix, p->length, prefixes[i].data, prefixes[i].length)) {
                snprintf(error, error_size,
                         "ERR Prefix '%.*s' overlaps with an existing prefix '%.*s'. Prefixes for a single client "
                         "must not overlap.", (int)prefixes[i].length, (const char *)prefixes[i].data,
                         (int)p->length, (const char *)p->prefix);
                return -1;
            }
        }
        for (size_t j = i + 1; j < count; j++) {
            if (overlaps(prefixes[i].data, prefixes[i].length, prefixes[j].data, prefixes[j].length)) {
                snprintf(error, error_size,
                         "ERR Prefix '%.*s' overlaps with another provided prefix '%.*s'. Prefixes for a single "
                         "client must not overlap.", (int)prefixes[i].length, (const char *)prefixes[i].data,
                         (int)prefixes[j].length, (const char *)prefixes[j].data);
                return -1;
            }
        }
    }
    return 0;
}

static bcast_prefix_t *prefix_entry(gr_tracking_t *t, const uint8_t *prefix, size_t length) {
    for (size_t i = 0; i < t->prefix_count; i++)
        if (t->prefixes[i]->length == length && (length == 0 || memcmp(t->prefixes[i]->prefix, prefix, length) == 0))
            return t->prefixes[i];
    if (t->prefix_count == t->prefix_capacity) {
        size_t capacity = t->prefix_capacity ? t->prefix_capacity * 2 : 8;
        bcast_prefix_t **grown = gr_mem_realloc(t->prefixes, capacity * sizeof *grown, MEM);
        if (!grown) return NULL;
        t->prefixes = grown, t->prefix_capacity = capacity;
    }
    bcast_prefix_t *p = gr_mem_calloc(1, sizeof *p, MEM);
    uint8_t *bytes = gr_mem_alloc(length ? length : 1, MEM);
    if (!p || !bytes) { gr_mem_free(p, MEM); gr_mem_free(bytes, MEM); return NULL; }
    if (length) memcpy(bytes, prefix, length);
    p->prefix = bytes, p->length = (uint32_t)length;
    t->prefixes[t->prefix_count++] = p;
    return p;
}

static void drop_prefix_if_unused(gr_tracking_t *t, bcast_prefix_t *p) {
    if (p->client_count) return;
    for (size_t i = 0; i < t->prefix_count; i++)
        if (t->prefixes[i] == p) {
            if (p->key_count && t->prefixes_pending) t->prefixes_pending--;
            t->prefixes[i] = t->prefixes[--t->prefix_count];
            free_prefix(p);
            return;
        }
}

static int add_prefix(gr_tracking_t *t, gr_connection_t *conn, const uint8_t *prefix, size_t length) {
    struct gr_tracking_prefixes *mine = conn->tracking_prefixes;
    if (!mine) {
        mine = conn->tracking_prefixes = gr_mem_calloc(1, sizeof *mine, MEM);
        if (!mine) return -1;
    }
    for (size_t j = 0; j < mine->count; j++)
        if (mine->items[j]->length == length && (length == 0 || memcmp(mine->items[j]->prefix, prefix, length) == 0))
            return 0;   /* already: Redis's raxTryInsert */
    bcast_prefix_t *p = prefix_entry(t, prefix, length);
    if (!p) return -1;
    if (mine->count == mine->capacity) {
        size_t capacity = mine->capacity ? mine->capacity * 2 : 4;
        bcast_prefix_t **grown = gr_mem_realloc(mine->items, capacity * sizeof *grown, MEM);
        if (!grown) { drop_prefix_if_unused(t, p); return -1; }
        mine->items = grown, mine->capacity = capacity;
    }
    if (p->client_count == p->client_capacity) {
        size_t capacity = p->client_capacity ? p->client_capacity * 2 : 4;
        gr_connection_t **grown = gr_mem_realloc(p->clients, capacity * sizeof *grown, MEM);
        if (!grown) { drop_prefix_if_unused(t, p); return -1; }
        p->clients = grown, p->client_capacity = capacity;
    }
    p->clients[p->client_count++] = conn;
    mine->items[mine->count++] = p;
    qsort(mine->items, mine->count, sizeof *mine->items, compare_prefixes);   /* TRACKINGINFO lists them in order */
    return 0;
}

static void remove_prefixes(gr_tracking_t *t, gr_connection_t *conn) {
    struct gr_tracking_prefixes *mine = conn->tracking_prefixes;
    if (!mine) return;
    for (size_t j = 0; j < mine->count; j++) {
        bcast_prefix_t *p = mine->items[j];
        for (size_t c = 0; c < p->client_count; c++)
            if (p->clients[c] == conn) { p->clients[c] = p->clients[--p->client_count]; break; }
        drop_prefix_if_unused(t, p);
    }
    gr_mem_free(mine->items, MEM);
    gr_mem_free(mine, MEM);
    conn->tracking_prefixes = NULL;
}

int gr_tracking_enable(gr_server_t *db, gr_connection_t *conn, int64_t redirect, uint32_t options,
                       const gr_bytes_t *prefixes, size_t count) {
    gr_tracking_t *t = db->tracking;
    if (!t) return -1;
    if (!(conn->tracking & GR_TRACKING_ON)) t->clients++;
    conn->tracking = (uint8_t)((conn->tracking | GR_TRACKING_ON) &
                               ~(GR_TRACKING_BROKEN_REDIR | GR_TRACKING_BCAST | GR_TRACKING_OPTIN |
                                 GR_TRACKING_OPTOUT | GR_TRACKING_NOLOOP));
    conn->tracking_redirect = redirect;
    int result = 0;
    if (options & GR_TRACKING_BCAST) {
        conn->tracking |= GR_TRACKING_BCAST;
        if (count == 0 && add_prefix(t, conn, (const uint8_t *)"", 0) != 0) result = -1;
        for (size_t i = 0; i < count && result == 0; i++)
            if (add_prefix(t, conn, prefixes[i].data, prefixes[i].length) != 0) result = -1;
    }
    conn->tracking |= (uint8_t)(options & (GR_TRACKING_OPTIN | GR_TRACKING_OPTOUT | GR_TRACKING_NOLOOP));
    update_live(db);
    return result;
}

void gr_tracking_disable(gr_server_t *db, gr_connection_t *conn) {
    gr_tracking_t *t = db->tracking;
    if (!t || !(conn->tracking & GR_TRACKING_ON)) return;
    if (conn->tracking & GR_TRACKING_BCAST) remove_prefixes(t, conn);
    conn->tracking = 0;
    conn->tracking_caching_hold = 0;
    t->clients--;
    update_live(db);
}

size_t gr_tracking_each_prefix(const gr_connection_t *conn, void (*each)(void *context, gr_bytes_t prefix),
                               void *context) {
    const struct gr_tracking_prefixes *mine = conn->tracking_prefixes;
    if (!mine) return 0;
    if (each)
        for (size_t j = 0; j < mine->count; j++)
            each(context, (gr_bytes_t){mine->items[j]->prefix, mine->items[j]->length});
    return mine->count;
}

void gr_tracking_get_stats(const gr_server_t *db, gr_tracking_stats_t *out) {
    const gr_tracking_t *t = db->tracking;
    memset(out, 0, sizeof *out);
    if (!t) return;
    out->clients = t->clients;
    out->keys = (int64_t)t->count;
    out->items = t->items;
    out->prefixes = (int64_t)t->prefix_count;
}
