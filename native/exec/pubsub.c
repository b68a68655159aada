/* pubsub.c — the Pub/Sub registry (pubsub.h says what it holds and how delivery works): a
 * chained hash map per name space (SipHash, doubled at load 1), an array of subscribers per
 * entry (swap-removed), and per subscriber an open-addressing map entry -> slot (linear
 * probing, backward-shift deletion). The commands are commands/cmd_pubsub.c.
 */
#include "exec/pubsub.h"

#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/glob.h"
#include "core/siphash.h"

#define MEM GR_MEM_OTHER

typedef struct entry {
    struct entry *next;              /* the bucket's chain */
    uint64_t hash;
    gr_subscriber_t **subscribers;
    uint32_t count, capacity;
    uint32_t pattern_index;          /* patterns: where it sits in pubsub->patterns */
    uint32_t length;
    uint8_t name[];
} entry_t;

typedef struct name_map {
    entry_t **buckets;
    size_t bucket_count;             /* 0 or a power of two */
    size_t size;
} name_map_t;

struct gr_pubsub {
    name_map_t maps[GR_PUBSUB_SPACES];
    entry_t **patterns;              /* every pattern entry, for PUBLISH's match loop */
    size_t pattern_count, pattern_capacity;
    uint64_t k0, k1;
    int64_t published;
};

/* A subscriber's subscriptions in one space: entry -> its slot in entry->subscribers. */
typedef struct membership {
    entry_t *entry;                  /* NULL: empty cell */
    uint32_t slot;
} membership_t;

struct gr_pubsub_memberships {
    membership_t *cells;
    uint32_t capacity;               /* a power of two */
    uint32_t count;
};

/* ---- the name maps ---- */

static uint64_t hash_name(const gr_pubsub_t *p, gr_bytes_t name) {
    return gr_siphash(name.data, name.length, p->k0, p->k1, 1, 2);
}

static entry_t *map_find(const name_map_t *map, uint64_t hash, gr_bytes_t name) {
    if (!map->bucket_count) return NULL;
    for (entry_t *e = map->buckets[hash & (map->bucket_count - 1)]; e; e = e->next)
        if (e->hash == hash && e->length == name.length && (name.length == 0 || !memcmp(e->name, name.data, name.length)))
            return e;
    return NULL;
}

static int map_grow(name_map_t *map) {
    size_t count = map->bucket_count ? map->bucket_count * 2 : 16;
    entry_t **buckets = gr_mem_alloc(count * sizeof *buckets, MEM);
    if (!buckets) return -1;
    memset(buckets, 0, count * sizeof *buckets);
    for (size_t i = 0; i < map->bucket_count; i++) {
        entry_t *e = map->buckets[i];
        while (e) {
            entry_t *next = e->next;
            size_t at = e->hash & (count - 1);
            e->next = buckets[at];
            buckets[at] = e;
            e = next;
        }
    }
    gr_mem_free(map->buckets, MEM);
    map->buckets = buckets;
    map->bucket_count = count;
    return 0;
}

static entry_t *map_add(gr_pubsub_t *p, gr_pubsub_space_t space, uint64_t hash, gr_bytes_t name) {
    name_map_t *map = &p->maps[space];
    if (map->size >= map->bucket_count && map_grow(map) != 0 && !map->bucket_count) return NULL;
    if (space == GR_PUBSUB_PATTERNS && p->pattern_count == p->pattern_capacity) {
        size_t capacity = p->pattern_capacity ? p->pattern_capacity * 2 : 16;
        entry_t **grown = gr_mem_realloc(p->patterns, capacity * sizeof *grown, MEM);
        if (!grown) return NULL;
        p->patterns = grown;
        p->pattern_capacity = capacity;
    }
    entry_t *e = gr_mem_alloc(sizeof *e + name.length, MEM);
    if (!e) return NULL;
    memset(e, 0, sizeof *e);
    e->hash = hash;
    e->length = name.length;
    if (name.length) memcpy(e->name, name.data, name.length);
    size_t at = hash & (map->bucket_count - 1);
    e->next = map->buckets[at];
    map->buckets[at] = e;
    map->size++;
    if (space == GR_PUBSUB_PATTERNS) {
        e->pattern_index = (uint32_t)p->pattern_count;
        p->patterns[p->pattern_count++] = e;
    }
    return e;
}

static void map_remove(gr_pubsub_t *p, gr_pubsub_space_t space, entry_t *e) {
    name_map_t *map = &p->maps[space];
    entry_t **link = &map->buckets[e->hash & (map->bucket_count - 1)];
    while (*link != e) link = &(*link)->next;
    *link = e->next;
    map->size--;
    if (space == GR_PUBSUB_PATTERNS) {
        entry_t *last = p->patterns[--p->pattern_count];
        p->patterns[e->pattern_index] = last;
        last->pattern_index = e->pattern_index;
    }
    gr_mem_free(e->subscribers, MEM);
    gr_mem_free(e, MEM);
}

static gr_bytes_t name_of(const entry_t *e) { return (gr_bytes_t){e->name, e->length}; }

/* ---- a subscriber's memberships ---- */

static uint32_t cell_of(const struct gr_pubsub_memberships *m, const entry_t *entry) {
    uint64_t h = (uint64_t)(uintptr_t)entry * 0x9E3779B97F4A7C15ULL;
    return (uint32_t)(h >> 32) & (m->capacity - 1);
}

static membership_t *membership_find(struct gr_pubsub_memberships *m, const entry_t *entry) {
    if (!m) return NULL;
    for (uint32_t i = cell_of(m, entry);; i = (i + 1) & (m->capacity - 1)) {
        if (m->cells[i].entry == entry) return &m->cells[i];
        if (!m->cells[i].entry) return NULL;
    }
}

static int memberships_insert(gr_subscriber_t *s, gr_pubsub_space_t space, entry_t *entry, uint32_t slot) {
    struct gr_pubsub_memberships *m = s->memberships[space];
    if (!m || (m->count + 1) * 4 > m->capacity * 3) {          /* keep the load under 3/4 */
        uint32_t capacity = m ? m->capacity * 2 : 8;
        struct gr_pubsub_memberships *grown = gr_mem_alloc(sizeof *grown, MEM);
        membership_t *cells = gr_mem_alloc(capacity * sizeof *cells, MEM);
        if (!grown || !cells) {
            gr_mem_free(grown, MEM);
            gr_mem_free(cells, MEM);
            return -1;
        }
        memset(cells, 0, capacity * sizeof *cells);
        grown->cells = cells;
        grown->capacity = capacity;
        grown->count = 0;
        if (m) {
            for (uint32_t i = 0; i < m->capacity; i++) {
                if (!m->cells[i].entry) continue;
                uint32_t at = cell_of(grown, m->cells[i].entry);
                while (grown->cells[at].entry) at = (at + 1) & (capacity - 1);
                grown->cells[at] = m->cells[i];
                grown->count++;
            }
            gr_mem_free(m->cells, MEM);
            gr_mem_free(m, MEM);
        }
        s->memberships[space] = m = grown;
    }
    uint32_t at = cell_of(m, entry);
    while (m->cells[at].entry) at = (at + 1) & (m->capacity - 1);
    m->cells[at] = (membership_t){entry, slot};
    m->count++;
    return 0;
}

/* Backward-shift deletion keeps every probe chain unbroken without tombstones. */
static void memberships_delete(gr_subscriber_t *s, gr_pubsub_space_t space, membership_t *cell) {
    struct gr_pubsub_memberships *m = s->memberships[space];
    uint32_t mask = m->capacity - 1, hole = (uint32_t)(cell - m->cells);
    m->cells[hole].entry = NULL;
    m->count--;
    for (uint32_t i = (hole + 1) & mask; m->cells[i].entry; i = (i + 1) & mask) {
        uint32_t home = cell_of(m, m->cells[i].entry);
        /* move cell i into the hole unless its home lies cyclically in (hole, i] */
        int stays = hole <= i ? (home > hole && home <= i) : (home > hole || home <= i);
        if (stays) continue;
        m->cells[hole] = m->cells[i];
        m->cells[i].entry = NULL;
        hole = i;
    }
}

static void memberships_release(gr_subscriber_t *s, gr_pubsub_space_t space) {
    struct gr_pubsub_memberships *m = s->memberships[space];
    if (!m) return;
    gr_mem_free(m->cells, MEM);
    gr_mem_free(m, MEM);
    s->memberships[space] = NULL;
}

/* Take the subscriber at slot out of the entry (swap with the last, whose membership learns
 * its new slot); the entry is removed once nobody is left. */
static void entry_drop(gr_pubsub_t *p, gr_pubsub_space_t space, entry_t *e, uint32_t slot) {
    uint32_t last = --e->count;
    if (slot != last) {
        gr_subscriber_t *moved = e->subscribers[last];
        e->subscribers[slot] = moved;
        membership_t *cell = membership_find(moved->memberships[space], e);
        if (cell) cell->slot = slot;
    }
    if (e->count == 0) map_remove(p, space, e);
}

/* Redis's stringmatchlen compares nothing when the string is empty: an empty channel matches
 * only an empty pattern (not even "*"), for PUBLISH and PUBSUB CHANNELS alike. */
static int matches(const uint8_t *pattern, size_t pattern_length, const uint8_t *name, size_t name_length) {
    if (name_length == 0) return pattern_length == 0;
    return gr_glob_match(pattern, pattern_length, name, name_length, 0);
}

/* ---- Lifecycle ---- */

gr_pubsub_t *gr_pubsub_new(uint64_t seed) {
    gr_pubsub_t *p = gr_mem_alloc(sizeof *p, MEM);
    if (!p) return NULL;
    memset(p, 0, sizeof *p);
    p->k0 = seed ^ 0x5053554253554221ULL;
    p->k1 = seed * 0x9E3779B97F4A7C15ULL + 0x70756273756221ULL;
    return p;
}

void gr_pubsub_free(gr_pubsub_t *p) {
    if (!p) return;
    for (int space = 0; space < GR_PUBSUB_SPACES; space++) {
        name_map_t *map = &p->maps[space];
        for (size_t i = 0; i < map->bucket_count; i++) {
            entry_t *e = map->buckets[i];
            while (e) {
                entry_t *next = e->next;
                gr_mem_free(e->subscribers, MEM);
                gr_mem_free(e, MEM);
                e = next;
            }
        }
        gr_mem_free(map->buckets, MEM);
    }
    gr_mem_free(p->patterns, MEM);
    gr_mem_free(p, MEM);
}

/* ---- Subscriptions ---- */

int gr_pubsub_subscribe(gr_pubsub_t *p, gr_subscriber_t *s, gr_pubsub_space_t space, gr_bytes_t name) {
    uint64_t hash = hash_name(p, name);
    entry_t *e = map_find(&p->maps[space], hash, name);
    if (e && membership_find(s->memberships[space], e)) return 0;
    int created = 0;
    if (!e) {
        e = map_add(p, space, hash, name);
        if (!e) return -1;
        created = 1;
    }
    if (e->count == e->capacity) {
        uint32_t capacity = e->capacity ? e->capacity * 2 : 4;
        gr_subscriber_t **grown = gr_mem_realloc(e->subscribers, capacity * sizeof *grown, MEM);
        if (!grown) goto fail;
        e->subscribers = grown;
        e->capacity = capacity;
    }
    if (memberships_insert(s, space, e, e->count) != 0) goto fail;
    e->subscribers[e->count++] = s;
    s->counts[space]++;
    return 1;
fail:
    if (created) map_remove(p, space, e);
    return -1;
}

int gr_pubsub_unsubscribe(gr_pubsub_t *p, gr_subscriber_t *s, gr_pubsub_space_t space, gr_bytes_t name) {
    if (!s->memberships[space]) return 0;
    entry_t *e = map_find(&p->maps[space], hash_name(p, name), name);
    membership_t *cell = e ? membership_find(s->memberships[space], e) : NULL;
    if (!cell) return 0;
    uint32_t slot = cell->slot;
    memberships_delete(s, space, cell);
    s->counts[space]--;
    entry_drop(p, space, e, slot);
    if (s->counts[space] == 0) memberships_release(s, space);
    return 1;
}

void gr_pubsub_unsubscribe_all(gr_pubsub_t *p, gr_subscriber_t *s, gr_pubsub_space_t space,
                               void (*each)(void *context, gr_bytes_t name), void *context) {
    struct gr_pubsub_memberships *m = s->memberships[space];
    if (!m) return;
    for (uint32_t i = 0; i < m->capacity; i++) {
        entry_t *e = m->cells[i].entry;
        if (!e) continue;
        uint32_t slot = m->cells[i].slot;
        m->cells[i].entry = NULL;      /* the map is released whole below; no shifting */
        s->counts[space]--;
        /* entry_drop may ask this map for another subscriber's cell, never for this one's */
        if (each) each(context, name_of(e));
        entry_drop(p, space, e, slot);
    }
    memberships_release(s, space);
}

void gr_pubsub_forget(gr_pubsub_t *p, gr_subscriber_t *s) {
    for (int space = 0; space < GR_PUBSUB_SPACES; space++) gr_pubsub_unsubscribe_all(p, s, space, NULL, NULL);
    s->over_limit = 0;
}

/* ---- Publishing ---- */

static void deliver(gr_subscriber_t *s, gr_pubsub_kind_t kind, gr_bytes_t pattern, gr_bytes_t channel,
                    gr_bytes_t payload) {
    if (s->over_limit || !s->deliver) return;
    if (s->deliver(s, kind, pattern, channel, payload) == GR_PUBSUB_OVER_LIMIT) s->over_limit = 1;
}

int64_t gr_pubsub_publish(gr_pubsub_t *p, gr_bytes_t channel, gr_bytes_t payload) {
    int64_t receivers = 0;
    gr_bytes_t none = {NULL, 0};
    p->published++;
    entry_t *e = map_find(&p->maps[GR_PUBSUB_CHANNELS], hash_name(p, channel), channel);
    if (e) {
        for (uint32_t i = 0; i < e->count; i++) deliver(e->subscribers[i], GR_PUBSUB_MESSAGE, none, channel, payload);
        receivers += e->count;
    }
    for (size_t k = 0; k < p->pattern_count; k++) {
        entry_t *pattern = p->patterns[k];
        if (!matches(pattern->name, pattern->length, channel.data, channel.length)) continue;
        for (uint32_t i = 0; i < pattern->count; i++)
            deliver(pattern->subscribers[i], GR_PUBSUB_PMESSAGE, name_of(pattern), channel, payload);
        receivers += pattern->count;
    }
    return receivers;
}

int64_t gr_pubsub_spublish(gr_pubsub_t *p, gr_bytes_t channel, gr_bytes_t payload) {
    gr_bytes_t none = {NULL, 0};
    p->published++;
    entry_t *e = map_find(&p->maps[GR_PUBSUB_SHARD_CHANNELS], hash_name(p, channel), channel);
    if (!e) return 0;
    for (uint32_t i = 0; i < e->count; i++) deliver(e->subscribers[i], GR_PUBSUB_SMESSAGE, none, channel, payload);
    return e->count;
}

int64_t gr_pubsub_published(const gr_pubsub_t *p) { return p->published; }

/* ---- Queries ---- */

size_t gr_pubsub_name_count(const gr_pubsub_t *p, gr_pubsub_space_t space) { return p->maps[space].size; }

size_t gr_pubsub_subscriber_count(const gr_pubsub_t *p, gr_pubsub_space_t space, gr_bytes_t name) {
    const entry_t *e = map_find(&p->maps[space], hash_name(p, name), name);
    return e ? e->count : 0;
}

void gr_pubsub_each_name(const gr_pubsub_t *p, gr_pubsub_space_t space, gr_bytes_t pattern,
                         void (*each)(void *context, gr_bytes_t name), void *context) {
    const name_map_t *map = &p->maps[space];
    for (size_t i = 0; i < map->bucket_count; i++)
        for (const entry_t *e = map->buckets[i]; e; e = e->next)
            if (!pattern.data || matches(pattern.data, pattern.length, e->name, e->length))
                each(context, name_of(e));
}
