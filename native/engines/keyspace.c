/* keyspace.c — the key table: chained power-of-two hash tables with incremental resizing,
 * SipHash-1-2 keyed per keyspace, and Redis's SCAN cursor. The layout, the resize policy
 * and the API are documented in keyspace.h; the command layer is cmd_keys.c.
 *
 * Resize state, in one place (everything below keeps to it):
 *   stable     table[1].buckets == NULL; rehash_index == -1
 *   zeroing    table[1].buckets != NULL, prepared < table[1].size; rehash_index == -1.
 *              table[1] is not yet readable: only table[0] is searched, scanned, added to.
 *   moving     prepared == table[1].size; rehash_index >= 0. Buckets of table[0] below
 *              rehash_index are empty; new keys go to table[1]; both are searched.
 * When table[0] is empty in the moving phase, table[1] becomes table[0].
 */
#include "engines/keyspace.h"
#include "core/siphash.h"

#include <stddef.h>
#include <string.h>

#include "core/alloc.h"

/* SipHash rounds; the defaults are SipHash-1-2 (what Redis uses for its dicts). Overridable
 * so that the implementation can be checked against SipHash-2-4's published vectors. */
#ifndef GR_KS_SIP_C_ROUNDS
#define GR_KS_SIP_C_ROUNDS 1
#endif
#ifndef GR_KS_SIP_D_ROUNDS
#define GR_KS_SIP_D_ROUNDS 2
#endif

#define EMPTY_VISITS_PER_STEP 10   /* empty buckets one moving step may skip */

typedef struct ks_table {
    gr_ks_entry_t **buckets;
    size_t size;    /* a power of two; 0 when there is no array */
    size_t used;    /* entries chained from this table */
} ks_table_t;

struct gr_keyspace {
    ks_table_t table[2];
    size_t prepared;          /* buckets of table[1] zeroed so far */
    int64_t rehash_index;     /* next bucket of table[0] to move; -1 unless moving */
    unsigned paused;          /* > 0 inside gr_ks_iterate / gr_ks_scan: no resize steps */
    size_t expires;
    size_t entry_bytes;       /* usable bytes of the entries in the tables */
    uint64_t clock_ms;
    uint64_t keep_bits;       /* gr_ks_set_keep_bits */
    uint64_t sip_k0, sip_k1;
    uint64_t random_state;
    gr_ks_value_free_t free_value;
    void *context;
    gr_ks_add_observer_t add_observer;   /* NULL: none (gr_ks_set_add_observer) */
    gr_ks_add_observer_t delete_observer;   /* NULL: none (gr_ks_set_delete_observer) */
};

/* ---- hashing ---- */

static uint64_t splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t ks_hash(const gr_keyspace_t *ks, const uint8_t *key, size_t length) {
    return gr_siphash(key, length, ks->sip_k0, ks->sip_k1, GR_KS_SIP_C_ROUNDS, GR_KS_SIP_D_ROUNDS);
}

static int key_equals(const gr_ks_entry_t *entry, const uint8_t *key, size_t length) {
    return entry->key_length == length && (length == 0 || memcmp(entry->key, key, length) == 0);
}

/* ---- tables and resizing ---- */

static int ks_resizing(const gr_keyspace_t *ks) { return ks->table[1].buckets != NULL; }
static int ks_moving(const gr_keyspace_t *ks) { return ks->rehash_index >= 0; }
/* Tables that hold entries: table[1] only in the moving phase. */
static int ks_live_tables(const gr_keyspace_t *ks) { return ks_moving(ks) ? 2 : 1; }

static size_t next_power_of_two(size_t n) {
    size_t size = GR_KS_MIN_BUCKETS;
    while (size < n && size <= (SIZE_MAX >> 1)) size <<= 1;
    return size;
}

static gr_ks_entry_t **alloc_buckets(size_t size) {
    if (size > SIZE_MAX / sizeof(gr_ks_entry_t *)) return NULL;
    return gr_mem_alloc(size * sizeof(gr_ks_entry_t *), GR_MEM_KEYSPACE);
}

/* Starts a resize of table[0] to size buckets; on OOM, quietly keeps the current size. */
static void resize_start(gr_keyspace_t *ks, size_t size) {
    gr_ks_entry_t **buckets = alloc_buckets(size);
    if (!buckets) return;
    ks->table[1].buckets = buckets;
    ks->table[1].size = size;
    ks->table[1].used = 0;
    ks->prepared = 0;
    ks->rehash_index = -1;
}

static void resize_finish(gr_keyspace_t *ks) {
    gr_mem_free(ks->table[0].buckets, GR_MEM_KEYSPACE);
    ks->table[0] = ks->table[1];
    ks->table[1].buckets = NULL;
    ks->table[1].size = 0;
    ks->table[1].used = 0;
    ks->prepared = 0;
    ks->rehash_index = -1;
}

/* One resize step: zero a chunk of the new table, or move one bucket chain (skipping up to
 * EMPTY_VISITS_PER_STEP empty buckets to find it). */
static void resize_work(gr_keyspace_t *ks) {
    ks_table_t *from = &ks->table[0], *to = &ks->table[1];
    if (!ks_moving(ks)) {
        size_t n = to->size - ks->prepared;
        if (n > GR_KS_ZERO_CHUNK) n = GR_KS_ZERO_CHUNK;
        memset(to->buckets + ks->prepared, 0, n * sizeof *to->buckets);
        ks->prepared += n;
        if (ks->prepared == to->size) ks->rehash_index = 0;
        return;
    }
    if (from->used) {
        size_t index = (size_t)ks->rehash_index;
        int empty_visits = EMPTY_VISITS_PER_STEP;
        while (!from->buckets[index]) {
            ks->rehash_index = (int64_t)++index;
            if (--empty_visits == 0) return;
        }
        /* Shrinking: the new index is the old one under the smaller mask, no hashing. */
        int shrinking = to->size < from->size;
        size_t mask = to->size - 1;
        gr_ks_entry_t *entry = from->buckets[index];
        while (entry) {
            gr_ks_entry_t *next = entry->next;
            size_t target = shrinking ? (index & mask)
                                      : (size_t)(ks_hash(ks, entry->key, entry->key_length) & mask);
            entry->next = to->buckets[target];
            to->buckets[target] = entry;
            from->used--;
            to->used++;
            entry = next;
        }
        from->buckets[index] = NULL;
        ks->rehash_index = (int64_t)(index + 1);
    }
    if (from->used == 0) resize_finish(ks);
}

/* Every lookup calls this; nearly always there is nothing to do, so the test is inline and the
 * work (resize_work) stays out of line. */
static inline void resize_step(gr_keyspace_t *ks) {
    if (!ks->paused && ks_resizing(ks)) resize_work(ks);
}

static void grow_if_needed(gr_keyspace_t *ks) {
    if (!ks_resizing(ks) && ks->table[0].used >= ks->table[0].size)
        resize_start(ks, next_power_of_two(ks->table[0].used + 1));
}

static void shrink_if_needed(gr_keyspace_t *ks) {
    const ks_table_t *table = &ks->table[0];
    if (!ks_resizing(ks) && table->size > GR_KS_MIN_BUCKETS && table->used < table->size / 8)
        resize_start(ks, next_power_of_two(table->used));
}

/* The link that points at key's entry (a bucket slot or a predecessor's next), or NULL;
 * *table_index says which table holds it. */
static gr_ks_entry_t **find_link(gr_keyspace_t *ks, const uint8_t *key, size_t length, int *table_index) {
    if (!ks->table[0].size) return NULL;
    uint64_t hash = ks_hash(ks, key, length);
    int tables = ks_live_tables(ks);
    for (int t = 0; t < tables; t++) {
        ks_table_t *table = &ks->table[t];
        gr_ks_entry_t **link = &table->buckets[hash & (table->size - 1)];
        for (; *link; link = &(*link)->next) {
            if (key_equals(*link, key, length)) {
                *table_index = t;
                return link;
            }
        }
    }
    return NULL;
}

/* Chains entry into the table new keys go to (table[0] must exist). */
static void link_entry(gr_keyspace_t *ks, gr_ks_entry_t *entry) {
    ks_table_t *table = &ks->table[ks_moving(ks) ? 1 : 0];
    size_t index = (size_t)(ks_hash(ks, entry->key, entry->key_length) & (table->size - 1));
    entry->next = table->buckets[index];
    table->buckets[index] = entry;
    table->used++;
    ks->entry_bytes += gr_mem_usable(entry);
    if (entry->expire_at_ms >= 0) ks->expires++;
}

/* Takes the entry at link out of table t, with its share of the counters. */
static gr_ks_entry_t *remove_at(gr_keyspace_t *ks, gr_ks_entry_t **link, int t) {
    gr_ks_entry_t *entry = *link;
    *link = entry->next;
    entry->next = NULL;
    ks->table[t].used--;
    ks->entry_bytes -= gr_mem_usable(entry);
    if (entry->expire_at_ms >= 0) ks->expires--;
    return entry;
}

static int ensure_table(gr_keyspace_t *ks) {
    if (ks->table[0].size) return 0;
    gr_ks_entry_t **buckets = alloc_buckets(GR_KS_MIN_BUCKETS);
    if (!buckets) return -1;
    memset(buckets, 0, GR_KS_MIN_BUCKETS * sizeof *buckets);
    ks->table[0].buckets = buckets;
    ks->table[0].size = GR_KS_MIN_BUCKETS;
    ks->table[0].used = 0;
    return 0;
}

static gr_ks_entry_t *new_entry(gr_keyspace_t *ks, const uint8_t *key, size_t length, uint8_t type, void *value) {
    if (length > UINT32_MAX) return NULL;
    gr_ks_entry_t *entry = gr_mem_alloc(offsetof(gr_ks_entry_t, key) + length, GR_MEM_KEYSPACE);
    if (!entry) return NULL;
    entry->next = NULL;
    entry->value = value;
    entry->expire_at_ms = -1;
    entry->access_ms = ks->clock_ms;
    entry->key_length = (uint32_t)length;
    entry->type = type;
    if (length) memcpy(entry->key, key, length);
    return entry;
}

/* Frees every entry of a detached pair of tables (only the live ones hold entries). */
static void free_tables(gr_keyspace_t *ks, ks_table_t *tables, int live) {
    for (int t = 0; t < 2; t++) {
        if (t < live) {
            for (size_t i = 0; i < tables[t].size; i++) {
                gr_ks_entry_t *entry = tables[t].buckets[i];
                while (entry) {
                    gr_ks_entry_t *next = entry->next;
                    gr_ks_entry_free(ks, entry, 1);
                    entry = next;
                }
            }
        }
        gr_mem_free(tables[t].buckets, GR_MEM_KEYSPACE);
    }
}

/* ---- Lifecycle ---- */

gr_keyspace_t *gr_ks_new(gr_ks_value_free_t free_value, void *context, uint64_t seed) {
    gr_keyspace_t *ks = gr_mem_alloc(sizeof *ks, GR_MEM_KEYSPACE);
    if (!ks) return NULL;
    memset(ks, 0, sizeof *ks);
    ks->rehash_index = -1;
    ks->free_value = free_value;
    ks->context = context;
    uint64_t state = seed;
    ks->sip_k0 = splitmix64(&state);
    ks->sip_k1 = splitmix64(&state);
    ks->random_state = splitmix64(&state);
    return ks;
}

void gr_ks_free(gr_keyspace_t *ks) {
    if (!ks) return;
    gr_ks_clear(ks);
    gr_mem_free(ks, GR_MEM_KEYSPACE);
}

void gr_ks_set_clock(gr_keyspace_t *ks, uint64_t now_ms) { ks->clock_ms = now_ms; }
void gr_ks_set_keep_bits(gr_keyspace_t *ks, uint64_t mask) { ks->keep_bits = mask; }

/* ---- Access ---- */

gr_ks_entry_t *gr_ks_find(gr_keyspace_t *ks, const uint8_t *key, size_t length) {
    if (gr_ks_size(ks) == 0) return NULL;
    resize_step(ks);
    int t;
    gr_ks_entry_t **link = find_link(ks, key, length, &t);
    return link ? *link : NULL;
}

void gr_ks_prefetch(const gr_keyspace_t *ks, const uint8_t *key, size_t length) {
    const ks_table_t *table = &ks->table[ks_moving(ks) ? 1 : 0];
    if (!table->size) return;
    __builtin_prefetch(&table->buckets[ks_hash(ks, key, length) & (table->size - 1)]);
}

int gr_ks_reserve(gr_keyspace_t *ks, size_t count) {
    if (gr_ks_size(ks) != 0 || ks_resizing(ks) || count <= ks->table[0].size) return 0;
    size_t size = next_power_of_two(count);
    gr_ks_entry_t **buckets = alloc_buckets(size);
    if (!buckets) return -1;
    memset(buckets, 0, size * sizeof *buckets);
    gr_mem_free(ks->table[0].buckets, GR_MEM_KEYSPACE);
    ks->table[0].buckets = buckets;
    ks->table[0].size = size;
    ks->table[0].used = 0;
    return 0;
}

gr_ks_entry_t *gr_ks_add(gr_keyspace_t *ks, const uint8_t *key, size_t length, uint8_t type, void *value) {
    if (ensure_table(ks) != 0) return NULL;
    gr_ks_entry_t *entry = new_entry(ks, key, length, type, value);
    if (!entry) return NULL;
    resize_step(ks);
    link_entry(ks, entry);
    grow_if_needed(ks);
    if (ks->add_observer) ks->add_observer(ks->context, ks, entry->key, entry->key_length);
    return entry;
}

void gr_ks_replace_value(gr_keyspace_t *ks, gr_ks_entry_t *entry, uint8_t type, void *value) {
    uint8_t old_type = entry->type;
    void *old_value = entry->value;
    gr_ks_set_expire(ks, entry, -1);
    entry->type = type;
    entry->value = value;
    entry->access_ms = (entry->access_ms & ks->keep_bits) | (ks->clock_ms & ~ks->keep_bits);
    if (ks->free_value) ks->free_value(old_type, old_value, ks->context);
}

void gr_ks_set_add_observer(gr_keyspace_t *ks, gr_ks_add_observer_t observer) { ks->add_observer = observer; }
void gr_ks_set_delete_observer(gr_keyspace_t *ks, gr_ks_add_observer_t observer) { ks->delete_observer = observer; }

gr_ks_entry_t *gr_ks_unlink(gr_keyspace_t *ks, const uint8_t *key, size_t length) {
    if (gr_ks_size(ks) == 0) return NULL;
    resize_step(ks);
    int t;
    gr_ks_entry_t **link = find_link(ks, key, length, &t);
    if (!link) return NULL;
    gr_ks_entry_t *entry = remove_at(ks, link, t);
    shrink_if_needed(ks);
    return entry;
}

int gr_ks_delete(gr_keyspace_t *ks, const uint8_t *key, size_t length) {
    gr_ks_entry_t *entry = gr_ks_unlink(ks, key, length);
    if (!entry) return 0;
    if (ks->delete_observer) {
        if (ks->free_value) ks->free_value(entry->type, entry->value, ks->context);
        ks->delete_observer(ks->context, ks, entry->key, entry->key_length);
        gr_ks_entry_free(ks, entry, 0);
        return 1;
    }
    gr_ks_entry_free(ks, entry, 1);
    return 1;
}

void gr_ks_entry_free(gr_keyspace_t *ks, gr_ks_entry_t *entry, int free_value) {
    if (!entry) return;
    if (free_value && ks->free_value) ks->free_value(entry->type, entry->value, ks->context);
    gr_mem_free(entry, GR_MEM_KEYSPACE);
}

int gr_ks_rename(gr_keyspace_t *ks, const uint8_t *from, size_t from_length,
                 const uint8_t *to, size_t to_length) {
    if (gr_ks_size(ks) == 0) return -1;
    resize_step(ks);
    int source_table;
    gr_ks_entry_t **source_link = find_link(ks, from, from_length, &source_table);
    if (!source_link) return -1;
    if (from_length == to_length && (to_length == 0 || memcmp(from, to, to_length) == 0)) return 0;
    gr_ks_entry_t *source = *source_link;
    int target_table;
    gr_ks_entry_t **target_link = find_link(ks, to, to_length, &target_table);
    if (target_link) {
        /* The destination's allocation already holds the key bytes: move the value into it. */
        gr_ks_entry_t *target = *target_link;
        uint8_t old_type = target->type;
        void *old_value = target->value;
        gr_ks_set_expire(ks, target, source->expire_at_ms);
        target->type = source->type;
        target->value = source->value;
        target->access_ms = (source->access_ms & ks->keep_bits) | (ks->clock_ms & ~ks->keep_bits);
        /* Nothing has been unlinked yet, so source_link is still the source's link. */
        gr_ks_entry_free(ks, remove_at(ks, source_link, source_table), 0);
        if (ks->free_value) ks->free_value(old_type, old_value, ks->context);
        shrink_if_needed(ks);
        return 0;
    }
    gr_ks_entry_t *moved = new_entry(ks, to, to_length, source->type, source->value);
    if (!moved) return -2;
    moved->expire_at_ms = source->expire_at_ms;
    moved->access_ms = (source->access_ms & ks->keep_bits) | (ks->clock_ms & ~ks->keep_bits);
    gr_ks_entry_free(ks, remove_at(ks, source_link, source_table), 0);
    link_entry(ks, moved);
    return 0;
}

void gr_ks_set_expire(gr_keyspace_t *ks, gr_ks_entry_t *entry, int64_t expire_at_ms) {
    if (expire_at_ms < 0) expire_at_ms = -1;
    if (entry->expire_at_ms >= 0) ks->expires--;
    entry->expire_at_ms = expire_at_ms;
    if (expire_at_ms >= 0) ks->expires++;
}

void gr_ks_touch(gr_keyspace_t *ks, gr_ks_entry_t *entry) {
    entry->access_ms = (entry->access_ms & ks->keep_bits) | (ks->clock_ms & ~ks->keep_bits);
}

/* ---- Queries ---- */

size_t gr_ks_size(const gr_keyspace_t *ks) { return ks->table[0].used + ks->table[1].used; }

size_t gr_ks_expires_count(const gr_keyspace_t *ks) { return ks->expires; }

size_t gr_ks_allocated_bytes(const gr_keyspace_t *ks) {
    return gr_mem_usable(ks) + gr_mem_usable(ks->table[0].buckets) + gr_mem_usable(ks->table[1].buckets) +
           ks->entry_bytes;
}

size_t gr_ks_entry_bytes(const gr_ks_entry_t *entry) { return gr_mem_usable(entry); }

size_t gr_ks_bucket_count(const gr_keyspace_t *ks) { return ks->table[0].size + ks->table[1].size; }

int gr_ks_is_rehashing(const gr_keyspace_t *ks) { return ks_resizing(ks); }

/* ---- Bulk ---- */

void gr_ks_clear(gr_keyspace_t *ks) {
    /* Detach first, so that the keyspace is already empty while values are freed. */
    ks_table_t tables[2] = {ks->table[0], ks->table[1]};
    int live = ks_live_tables(ks);
    memset(ks->table, 0, sizeof ks->table);
    ks->prepared = 0;
    ks->rehash_index = -1;
    ks->expires = 0;
    ks->entry_bytes = 0;
    free_tables(ks, tables, live);
}

static uint64_t reverse_bits(uint64_t v) {
    v = ((v >> 1) & 0x5555555555555555ULL) | ((v & 0x5555555555555555ULL) << 1);
    v = ((v >> 2) & 0x3333333333333333ULL) | ((v & 0x3333333333333333ULL) << 2);
    v = ((v >> 4) & 0x0f0f0f0f0f0f0f0fULL) | ((v & 0x0f0f0f0f0f0f0f0fULL) << 4);
    v = ((v >> 8) & 0x00ff00ff00ff00ffULL) | ((v & 0x00ff00ff00ff00ffULL) << 8);
    v = ((v >> 16) & 0x0000ffff0000ffffULL) | ((v & 0x0000ffff0000ffffULL) << 16);
    return (v >> 32) | (v << 32);
}

/* The cursor's next value under mask: increment the masked bits from the top down. */
static uint64_t cursor_next(uint64_t cursor, uint64_t mask) {
    cursor |= ~mask;
    cursor = reverse_bits(cursor);
    cursor++;
    return reverse_bits(cursor);
}

static void visit_chain(gr_ks_entry_t *entry, gr_ks_scan_visit_t visit, void *context) {
    while (entry) {
        gr_ks_entry_t *next = entry->next;
        visit(context, entry);
        entry = next;
    }
}

uint64_t gr_ks_scan(gr_keyspace_t *ks, uint64_t cursor, gr_ks_scan_visit_t visit, void *context) {
    if (gr_ks_size(ks) == 0) return 0;
    ks->paused++;
    if (!ks_moving(ks)) {
        uint64_t mask = ks->table[0].size - 1;
        visit_chain(ks->table[0].buckets[cursor & mask], visit, context);
        cursor = cursor_next(cursor, mask);
    } else {
        /* Visit the cursor's bucket in the smaller table, then every bucket of the larger
         * table that it expands to (the same low bits, all values of the extra high bits). */
        const ks_table_t *small = &ks->table[0], *large = &ks->table[1];
        if (small->size > large->size) {
            small = &ks->table[1];
            large = &ks->table[0];
        }
        uint64_t small_mask = small->size - 1, large_mask = large->size - 1;
        visit_chain(small->buckets[cursor & small_mask], visit, context);
        do {
            visit_chain(large->buckets[cursor & large_mask], visit, context);
            cursor = cursor_next(cursor, large_mask);
        } while (cursor & (small_mask ^ large_mask));
    }
    ks->paused--;
    return cursor;
}

gr_ks_entry_t *gr_ks_random(gr_keyspace_t *ks) {
    if (gr_ks_size(ks) == 0) return NULL;
    resize_step(ks);
    gr_ks_entry_t *head = NULL;
    if (ks_moving(ks)) {
        /* Buckets [rehash_index, size0) of table[0] and all of table[1] may hold keys. */
        size_t first = (size_t)ks->rehash_index, size0 = ks->table[0].size;
        size_t span = size0 - first + ks->table[1].size;
        while (!head) {
            size_t i = first + (size_t)(splitmix64(&ks->random_state) % span);
            head = i < size0 ? ks->table[0].buckets[i] : ks->table[1].buckets[i - size0];
        }
    } else {
        uint64_t mask = ks->table[0].size - 1;
        while (!head) head = ks->table[0].buckets[splitmix64(&ks->random_state) & mask];
    }
    size_t length = 0;
    for (gr_ks_entry_t *e = head; e; e = e->next) length++;
    size_t pick = (size_t)(splitmix64(&ks->random_state) % length);
    while (pick--) head = head->next;
    return head;
}

size_t gr_ks_sample(gr_keyspace_t *ks, gr_ks_entry_t **out, size_t count, int only_volatile, size_t max_buckets) {
    if (gr_ks_size(ks) == 0 || count == 0 || (only_volatile && ks->expires == 0)) return 0;
    resize_step(ks);
    /* Buckets [first, size0) of table[0] and, while moving, all of table[1], as one span. */
    size_t first = ks_moving(ks) ? (size_t)ks->rehash_index : 0, size0 = ks->table[0].size;
    size_t span = size0 - first + (ks_moving(ks) ? ks->table[1].size : 0);
    if (max_buckets > span) max_buckets = span;
    size_t at = (size_t)(splitmix64(&ks->random_state) % span), found = 0;
    for (size_t visited = 0; visited < max_buckets && found < count; visited++) {
        size_t i = first + at;
        gr_ks_entry_t *e = i < size0 ? ks->table[0].buckets[i] : ks->table[1].buckets[i - size0];
        for (; e && found < count; e = e->next)
            if (!only_volatile || e->expire_at_ms >= 0) out[found++] = e;
        if (++at == span) at = 0;
    }
    return found;
}

void gr_ks_iterate(gr_keyspace_t *ks, gr_ks_iterate_visit_t visit, void *context) {
    ks->paused++;
    int tables = ks_live_tables(ks);
    for (int t = 0; t < tables; t++) {
        const ks_table_t *table = &ks->table[t];
        for (size_t i = 0; i < table->size; i++) {
            gr_ks_entry_t *entry = table->buckets[i];
            while (entry) {
                gr_ks_entry_t *next = entry->next;
                if (visit(context, entry)) goto done;
                entry = next;
            }
        }
    }
done:
    ks->paused--;
}

int gr_ks_rehash(gr_keyspace_t *ks, size_t steps) {
    while (steps-- && ks_resizing(ks) && !ks->paused) resize_step(ks);
    return ks_resizing(ks);
}
