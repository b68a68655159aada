/* zset_index.c — the sorted-set engine's member index and leaf directory (the standard and
 * packed encodings): member -> leaf slots, their incremental resize, ZSCAN's walk in hash space
 * and the index's self-check. The tree these slots point into is zset.c; the structures and the
 * entry format both files share are zset_internal.h; the layout and the API are zset.h.
 */
#include <string.h>

#include "engines/table/table.h"
#include "engines/zset/zset_internal.h"

/* ---- allocation, counted in index_bytes ---- */

void zs_index_release(gr_zset_t *z, void *p) {
    if (!p) return;
    z->index_bytes -= gr_mem_usable(p);
    gr_mem_free(p, GR_MEM_ZSET);
}

void *zs_index_realloc(gr_zset_t *z, void *p, size_t size) {
    size_t before = gr_mem_usable(p);
    void *q = gr_mem_realloc(p, size, GR_MEM_ZSET);
    if (q) z->index_bytes = z->index_bytes - before + gr_mem_usable(q);
    return q;
}

/* ---- the leaf directory (standard encoding): a leaf's id is its slot in leaves[] ---- */

int zs_leaf_register(gr_zset_t *z, zs_leaf_t *leaf) {
    uint32_t id;
    if (z->free_count) {
        id = z->free_ids[--z->free_count];
    } else {
        if (z->leaf_ids == z->leaf_slots) {
            uint32_t slots = z->leaf_slots ? z->leaf_slots * 2 : 8;
            zs_leaf_t **leaves = zs_index_realloc(z, z->leaves, slots * sizeof *leaves);
            if (!leaves) return -1;
            z->leaves = leaves;
            uint32_t *ids = zs_index_realloc(z, z->free_ids, slots * sizeof *ids);
            if (!ids) return -1;   /* leaves[] grew; harmless */
            z->free_ids = ids;
            z->leaf_slots = slots;
        }
        id = z->leaf_ids++;
    }
    z->leaves[id] = leaf;
    leaf->id = id;
    leaf->generation = z->generation;
    return 0;
}

void zs_leaf_unregister(gr_zset_t *z, const zs_leaf_t *leaf) {
    z->leaves[leaf->id] = NULL;
    z->free_ids[z->free_count++] = leaf->id;   /* free_ids[] is as long as leaves[] */
}

/* ---- the member index (standard encoding) ----
 *
 * Open addressing with linear probing over SLOT_BYTES slots, [tag][leaf id]. A member's home
 * slot is (hash >> 32) * capacity >> 32 (monotone in the hash: SCAN walks hash space); its
 * slot holds 8 bits of its hash as the tag and the id of the leaf holding it, so a lookup
 * reads the leaf of each slot whose tag matches and looks for the member there. Two members
 * of one leaf with one tag give two slots with equal contents: which of them "belongs" to
 * which member does not matter, since both lead to the same leaf, so moving or removing
 * either one keeps every lookup right (a run of occupied slots has no gap to stop a probe).
 * Deletion leaves a tombstone (the slot cannot say which member it is, so it cannot be
 * shifted back); tombstones go with the next resize.
 *
 * Resizes are incremental, by leaf: a new index is allocated and the generation advances;
 * a leaf whose generation is older still has its members in the old index. Before a leaf
 * is changed (insert, delete, split) its members move into the new index, and every write
 * moves one more leaf in directory order; when the walk passes the last id, the old index
 * is freed. A lookup probes the new index, then the old one, ignoring old slots of leaves
 * already moved (or freed, or whose id was reused: those are all of the new generation).
 */

static inline uint8_t tag_of(uint64_t hash) {
    uint8_t tag = (uint8_t)hash;
    return tag < 2 ? (uint8_t)(tag + 2) : tag;
}
static inline uint64_t home_of(uint64_t hash, uint64_t capacity) { return ((hash >> 32) * capacity) >> 32; }
static inline uint64_t next_slot(uint64_t slot, uint64_t capacity) { return slot + 1 == capacity ? 0 : slot + 1; }
static inline uint8_t slot_tag(const zs_slots_t *ix, uint64_t slot) { return ix->slots[slot * SLOT_BYTES]; }
static inline uint32_t slot_id(const zs_slots_t *ix, uint64_t slot) {
    uint32_t id;
    memcpy(&id, ix->slots + slot * SLOT_BYTES + 1, sizeof id);
    return id;
}
static inline void slot_set(zs_slots_t *ix, uint64_t slot, uint8_t tag, uint32_t id) {
    ix->slots[slot * SLOT_BYTES] = tag;
    memcpy(ix->slots + slot * SLOT_BYTES + 1, &id, sizeof id);
}

/* The leaf an old-index slot names, if its members are still only in the old index. */
static zs_leaf_t *old_slot_leaf(const gr_zset_t *z, uint32_t id) {
    zs_leaf_t *leaf = id < z->leaf_ids ? z->leaves[id] : NULL;
    return leaf && leaf->generation != z->generation ? leaf : NULL;
}

/* Finds member (hash h): 1 with its leaf and entry, or 0. */
int zs_index_find(const gr_zset_t *z, uint64_t h, const uint8_t *m, size_t ml, zs_leaf_t **leaf_out,
                      gr_zset_entry_t *e) {
    const uint8_t tag = tag_of(h);
    const zs_slots_t *ix = &z->index;
    if (ix->capacity) {
        uint64_t slot = home_of(h, ix->capacity);
        for (uint64_t n = 0; n < ix->capacity; n++, slot = next_slot(slot, ix->capacity)) {
            uint8_t have = slot_tag(ix, slot);
            if (have == TAG_EMPTY) break;
            if (have == tag) {
                zs_leaf_t *leaf = z->leaves[slot_id(ix, slot)];
                if (leaf_find(leaf, m, ml, e)) { *leaf_out = leaf; return 1; }
            }
        }
    }
    if (!zs_resizing(z)) return 0;
    ix = &z->old;
    uint64_t slot = home_of(h, ix->capacity);
    for (uint64_t n = 0; n < ix->capacity; n++, slot = next_slot(slot, ix->capacity)) {
        uint8_t have = slot_tag(ix, slot);
        if (have == TAG_EMPTY) break;
        if (have == tag) {
            zs_leaf_t *leaf = old_slot_leaf(z, slot_id(ix, slot));
            if (leaf && leaf_find(leaf, m, ml, e)) { *leaf_out = leaf; return 1; }
        }
    }
    return 0;
}

/* Puts (member hash h -> leaf id) into the current index: the first free slot from its home
 * (a tombstone is reused). The caller made room. */
void zs_index_put(gr_zset_t *z, uint64_t h, uint32_t id) {
    zs_slots_t *ix = &z->index;
    uint64_t slot = home_of(h, ix->capacity);
    while (slot_tag(ix, slot) >= 2) slot = next_slot(slot, ix->capacity);
    if (slot_tag(ix, slot) == TAG_EMPTY) z->index_used++;
    slot_set(ix, slot, tag_of(h), id);
}

/* Points the current index's slot of (hash h, leaf from) at leaf to: 1, or 0 when there is
 * none (a member not indexed yet). */
static int index_relink(gr_zset_t *z, uint64_t h, uint32_t from, uint32_t to) {
    zs_slots_t *ix = &z->index;
    if (!ix->capacity) return 0;
    const uint8_t tag = tag_of(h);
    uint64_t slot = home_of(h, ix->capacity);
    for (uint64_t n = 0; n < ix->capacity; n++, slot = next_slot(slot, ix->capacity)) {
        uint8_t have = slot_tag(ix, slot);
        if (have == TAG_EMPTY) return 0;
        if (have == tag && slot_id(ix, slot) == from) {
            slot_set(ix, slot, tag, to);
            return 1;
        }
    }
    return 0;
}

/* Removes the current index's slot of (hash h, leaf id) (a tombstone). */
void zs_index_remove(gr_zset_t *z, uint64_t h, uint32_t id) {
    zs_slots_t *ix = &z->index;
    const uint8_t tag = tag_of(h);
    uint64_t slot = home_of(h, ix->capacity);
    for (uint64_t n = 0; n < ix->capacity; n++, slot = next_slot(slot, ix->capacity)) {
        uint8_t have = slot_tag(ix, slot);
        if (have == TAG_EMPTY) return;
        if (have == tag && slot_id(ix, slot) == id) {
            ix->slots[slot * SLOT_BYTES] = TAG_TOMBSTONE;
            return;
        }
    }
}

/* Every slot TAG_EMPTY (0): calloc, so a big index costs no writes when allocated. */
static int slots_allocate(gr_zset_t *z, zs_slots_t *ix, uint64_t capacity) {
    ix->slots = gr_mem_calloc(capacity, SLOT_BYTES, GR_MEM_ZSET);
    if (!ix->slots) {
        ix->capacity = 0;
        return -1;
    }
    z->index_bytes += gr_mem_usable(ix->slots);
    ix->capacity = capacity;
    return 0;
}

static void slots_release(gr_zset_t *z, zs_slots_t *ix) {
    zs_index_release(z, ix->slots);
    ix->slots = NULL;
    ix->capacity = 0;
}

/* Moves a leaf's members into the current index (a leaf of the new generation). */
void zs_leaf_move_to_index(gr_zset_t *z, zs_leaf_t *leaf) {
    const uint8_t *p = leaf->data;
    for (uint32_t i = 0; i < leaf->count; i++) {
        gr_zset_entry_t e;
        p = entry_decode(leaf, p, &e);
        zs_index_put(z, zs_member_hash(e.member, e.member_length), leaf->id);
    }
    leaf->generation = z->generation;
}

/* Moves up to `leaves` more leaves into the current index; frees the old one after the last. */
void zs_migrate(gr_zset_t *z, uint32_t leaves) {
    while (zs_resizing(z) && leaves) {
        if (z->migrate_id >= z->leaf_ids) {
            slots_release(z, &z->old);
            z->migrate_id = 0;
            return;
        }
        zs_leaf_t *leaf = z->leaves[z->migrate_id++];
        if (leaf && leaf->generation != z->generation) {
            zs_leaf_move_to_index(z, leaf);
            leaves--;
        }
    }
}

/* Starts moving to an index of `capacity` slots. A resize still under way is finished at
 * once by rebuilding (the pacing makes that rare: a leaf moves per write, and a resize
 * doubles). -1 on OOM, nothing changed. */
int zs_index_resize(gr_zset_t *z, uint64_t capacity) {
    if (capacity < 16) capacity = 16;
    zs_slots_t fresh;
    if (slots_allocate(z, &fresh, capacity) != 0) return -1;
    if (zs_resizing(z)) {   /* rebuild: every leaf into fresh, now */
        slots_release(z, &z->old);
        slots_release(z, &z->index);
        z->index = fresh;
        z->index_used = 0;
        z->generation++;
        z->migrate_id = 0;
        for (uint32_t id = 0; id < z->leaf_ids; id++)
            if (z->leaves[id]) zs_leaf_move_to_index(z, z->leaves[id]);
        return 0;
    }
    z->old = z->index;
    z->index = fresh;
    z->index_used = 0;
    z->generation++;
    z->migrate_id = 0;
    if (z->old.capacity == 0) zs_migrate(z, UINT32_MAX);   /* there was none: nothing to carry */
    return 0;
}

/* Room for one more member in the current index (load at most 0.8, tombstones counted):
 * 0, or -1 on OOM. */
int zs_index_make_room(gr_zset_t *z) {
    if ((z->index_used + 1) * 5 <= z->index.capacity * 4) return 0;
    return zs_index_resize(z, (uint64_t)(z->count + 1) * 2);
}

void zs_index_maybe_shrink(gr_zset_t *z) {
    if (!zs_resizing(z) && z->index.capacity > 64 && (uint64_t)z->count * 8 < z->index.capacity)
        (void)zs_index_resize(z, (uint64_t)z->count * 2);
}

void zs_index_free(gr_zset_t *z) {
    slots_release(z, &z->index);
    slots_release(z, &z->old);
    zs_index_release(z, z->leaves);
    zs_index_release(z, z->free_ids);
    z->leaves = NULL;
    z->free_ids = NULL;
}

/* Points the index's slots of the members in leaf, which name leaf id `from`, at `to`. The
 * member being written (skip: not in the index during the write) is left out: relinking it
 * would take the slot of another member of `from` with the same tag. */
void zs_relink_all(gr_zset_t *z, const zs_leaf_t *leaf, uint32_t from, uint32_t to, const uint8_t *skip,
                   size_t skip_length) {
    const uint8_t *p = leaf->data;
    for (uint32_t i = 0; i < leaf->count; i++) {
        gr_zset_entry_t e;
        p = entry_decode(leaf, p, &e);
        if (e.member_length == skip_length && memcmp(e.member, skip, skip_length) == 0) continue;
        index_relink(z, zs_member_hash(e.member, e.member_length), from, to);
    }
}

/* A standard set built without its index (its leaves registered: z->standard was set before
 * they were made, as convert_to_standard and bulk loads do) gets one, sized for its members
 * at a load of 0.5. 0, or -1 on OOM (no index). */
int zs_index_build(gr_zset_t *z) {
    uint64_t capacity = (uint64_t)(z->count + 1) * 2;
    if (slots_allocate(z, &z->index, capacity < 16 ? 16 : capacity) != 0) return -1;
    z->index_used = 0;
    for (uint32_t id = 0; id < z->leaf_ids; id++)
        if (z->leaves[id]) zs_leaf_move_to_index(z, z->leaves[id]);
    return 0;
}

/* ZSCAN of the standard encoding: the cursor is a position in hash space (a member's hash
 * >> 32), as engines/table/ scans, so a member present for the whole scan is visited exactly
 * once whatever resizes, splits or moves happen between calls. A call takes the positions
 * [cursor, high) that hold about `count` members, walks the index slots whose homes lie there
 * (and the runs after them), and visits each named leaf once: its members whose positions
 * fall in the range (so a leaf named by several slots is read once, and nothing twice). */
typedef struct scan_leaves {
    const zs_leaf_t **seen;
    size_t count, capacity;
    int failed;
} scan_leaves_t;

static void scan_leaf(const zs_leaf_t *leaf, uint64_t low, uint64_t high, scan_leaves_t *seen,
                      gr_zset_visit_t visit, void *context) {
    for (size_t i = 0; i < seen->count; i++)
        if (seen->seen[i] == leaf) return;
    if (seen->count == seen->capacity) {
        size_t capacity = seen->capacity ? seen->capacity * 2 : 32;
        const zs_leaf_t **grown = gr_mem_realloc(seen->seen, capacity * sizeof *grown, GR_MEM_OTHER);
        if (!grown) { seen->failed = 1; return; }
        seen->seen = grown;
        seen->capacity = capacity;
    }
    seen->seen[seen->count++] = leaf;
    const uint8_t *p = leaf->data;
    for (uint32_t i = 0; i < leaf->count; i++) {
        gr_zset_entry_t e;
        p = entry_decode(leaf, p, &e);
        uint64_t position = zs_member_hash(e.member, e.member_length) >> 32;
        if (position >= low && position < high) visit(context, &e);
    }
}

static void scan_slots(const gr_zset_t *z, const zs_slots_t *ix, int old, uint64_t low, uint64_t high,
                       scan_leaves_t *seen, gr_zset_visit_t visit, void *context) {
    if (!ix->capacity) return;
    uint64_t first = home_of(low << 32, ix->capacity), last = home_of((high - 1) << 32, ix->capacity);
    uint64_t slot = first;
    for (uint64_t step = 0; step < ix->capacity; step++, slot = next_slot(slot, ix->capacity)) {
        uint8_t tag = slot_tag(ix, slot);
        if (tag == TAG_EMPTY && step > last - first) break;   /* past the last home: a gap ends the runs */
        if (tag < 2) continue;
        const zs_leaf_t *leaf = old ? old_slot_leaf(z, slot_id(ix, slot)) : z->leaves[slot_id(ix, slot)];
        if (leaf) scan_leaf(leaf, low, high, seen, visit, context);
    }
}

/* One ZSCAN step over the index (zset.h's gr_zset_scan for an indexed set). */
uint64_t zs_index_scan(const gr_zset_t *z, uint64_t cursor, size_t count, gr_zset_visit_t visit, void *context) {
    const uint64_t end = (uint64_t)1 << 32;
    if (z->count == 0 || cursor >= end) return 0;
    if (count == 0) count = 1;
    uint64_t width = count >= z->count ? end : ((uint64_t)count << 32) / z->count + 1;
    uint64_t high = end - cursor <= width ? end : cursor + width;
    scan_leaves_t seen = {0};
    scan_slots(z, &z->index, 0, cursor, high, &seen, visit, context);
    if (zs_resizing(z)) scan_slots(z, &z->old, 1, cursor, high, &seen, visit, context);
    gr_mem_free(seen.seen, GR_MEM_OTHER);
    return high >= end ? 0 : high;
}

/* ---- self-check and internals ---- */

int zs_index_check(const gr_zset_t *z) {
    /* every occupied slot of the current index, and of the old one for leaves not moved yet,
     * is one member: as many as the set holds */
    size_t slots = 0, used = 0;
    for (uint64_t slot = 0; slot < z->index.capacity; slot++) {
        uint8_t tag = slot_tag(&z->index, slot);
        if (tag != TAG_EMPTY) used++;
        if (tag >= 2) {
            uint32_t id = slot_id(&z->index, slot);
            if (id >= z->leaf_ids || !z->leaves[id] || z->leaves[id]->generation != z->generation) return -1;
            slots++;
        }
    }
    for (uint64_t slot = 0; slot < z->old.capacity; slot++)
        if (slot_tag(&z->old, slot) >= 2 && old_slot_leaf(z, slot_id(&z->old, slot))) slots++;
    if (slots != z->count || used != z->index_used) return -1;
    return 0;
}

size_t zs_index_tombstones(const gr_zset_t *z) {
    size_t tombstones = 0;
    for (uint64_t slot = 0; slot < z->index.capacity; slot++)
        if (slot_tag(&z->index, slot) == TAG_TOMBSTONE) tombstones++;
    return tombstones;
}

/* ---- bulk load: the index once, at the end, refusing a member appended twice ----
 *
 * One probe per member, into an index allocated at its final size: the walk from the member's
 * home to the first empty slot passes every slot that could name another copy of it (nothing
 * is ever removed from this index while it is built), so a slot whose tag matches and whose
 * leaf holds the member at another place is a member appended twice. The hashes of the next
 * BULK_AHEAD members are computed first and their home slots prefetched, so the cache misses
 * of a big index overlap instead of following one another. */

#define BULK_AHEAD 16

typedef struct bulk_pending {
    uint64_t hash;
    const uint8_t *member;
    size_t length;
    uint32_t id;
} bulk_pending_t;

/* 0, or -2 when the member is already in (another copy of it, at another place). */
static int bulk_put_unique(gr_zset_t *z, const bulk_pending_t *p) {
    zs_slots_t *ix = &z->index;
    const uint8_t tag = tag_of(p->hash);
    uint64_t slot = home_of(p->hash, ix->capacity);
    for (;;) {
        uint8_t have = slot_tag(ix, slot);
        if (have == TAG_EMPTY) break;
        gr_zset_entry_t e;
        if (have == tag && leaf_find(z->leaves[slot_id(ix, slot)], p->member, p->length, &e) && e.member != p->member)
            return -2;
        slot = next_slot(slot, ix->capacity);
    }
    z->index_used++;
    slot_set(ix, slot, tag, p->id);
    return 0;
}

int zs_index_build_unique(gr_zset_t *z, double *leaf_max) {
    uint64_t capacity = (uint64_t)z->count * 10 / 7 + 16;   /* a load of 0.7, as GOBLIN.OPTIMIZE */
    if (slots_allocate(z, &z->index, capacity) != 0) return -1;
    bulk_pending_t ring[BULK_AHEAD];
    size_t queued = 0, next = 0;   /* ring[next % AHEAD] is the oldest of `queued` members */
    for (uint32_t id = 0; id < z->leaf_ids; id++) {
        zs_leaf_t *leaf = z->leaves[id];
        if (!leaf) continue;
        const uint8_t *p = leaf->data;
        for (uint32_t i = 0; i < leaf->count; i++) {
            gr_zset_entry_t e;
            p = entry_decode(leaf, p, &e);
            if (queued == BULK_AHEAD) {
                if (bulk_put_unique(z, &ring[next % BULK_AHEAD]) != 0) return -2;   /* a member twice */
                next++;
                queued--;
            }
            bulk_pending_t *slot = &ring[(next + queued) % BULK_AHEAD];
            slot->hash = zs_member_hash(e.member, e.member_length);
            slot->member = e.member;
            slot->length = e.member_length;
            slot->id = leaf->id;
            __builtin_prefetch(z->index.slots + home_of(slot->hash, capacity) * SLOT_BYTES, 1);
            queued++;
            if (leaf_max) leaf_max[id] = e.score;   /* the last one written is the largest */
        }
        leaf->generation = z->generation;
    }
    for (; queued; queued--, next++)
        if (bulk_put_unique(z, &ring[next % BULK_AHEAD]) != 0) return -2;
    return 0;
}
