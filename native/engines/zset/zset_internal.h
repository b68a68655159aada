/* zset_internal.h — what the sorted-set engine's files share (zset.c: the tree and the API;
 * zset_index.c: the member index and leaf directory): the node and set structures, the leaf
 * entry format, and the index's entry points. Not for use outside engines/zset/; zset.h is the
 * engine's public header and documents the layout.
 */
#ifndef GR_ZSET_INTERNAL_H
#define GR_ZSET_INTERNAL_H

#include <string.h>

#include "core/varint.h"
#include "engines/table/table.h"
#include "engines/zset/zset.h"

/* A leaf's first byte: which entry format its data holds (an inner node's is 0). */
#define LEAF_PLAIN 1    /* [score: 8][length: varint][member bytes] (compact and standard) */
#define LEAF_PACKED 2   /* [member key: 4][score: float32, 4] (packed) */
#define PACKED_ENTRY 8

typedef struct zs_leaf {
    uint8_t is_leaf;       /* LEAF_PLAIN or LEAF_PACKED */
    uint32_t count;
    uint32_t used;         /* bytes of data in use */
    uint32_t capacity;     /* bytes of data allocated */
    uint32_t id;           /* standard: its number in the leaf directory */
    uint32_t generation;   /* standard: == the set's generation once its members are in the current index */
    uint8_t data[];
} zs_leaf_t;

typedef struct zs_inner {
    uint8_t is_leaf;       /* 0 */
    uint32_t count;        /* children */
    uint64_t counts[GR_ZSET_FANOUT + 1];   /* one spare: a node holds FANOUT + 1 until it splits */
    double max[GR_ZSET_FANOUT + 1];
    void *child[GR_ZSET_FANOUT + 1];
} zs_inner_t;

/* The member index: capacity slots of 5 bytes, [tag][leaf id, 4 bytes]. */
#define SLOT_BYTES 5
#define TAG_EMPTY 0
#define TAG_TOMBSTONE 1   /* tags 2..255: occupied, the tag being 8 bits of the member's hash */
typedef struct zs_slots {
    uint8_t *slots;
    uint64_t capacity;     /* 0: none */
} zs_slots_t;

struct gr_zset {
    void *root;            /* a zs_leaf_t or zs_inner_t */
    size_t count;
    size_t tree_bytes;     /* what the nodes hold (gr_mem_usable) */
    /* the standard encoding's member index (all zero while compact) */
    uint8_t standard;      /* 1: indexed (standard or packed) */
    uint8_t packed;        /* 1: packed (standard is 1 too): LEAF_PACKED leaves, 4-byte member keys */
    zs_slots_t index;      /* the current index: new members go here */
    zs_slots_t old;        /* while resizing: the index being left */
    uint64_t index_used;   /* occupied and tombstone slots of index */
    uint32_t generation;   /* of index; leaves below it are still in old */
    uint32_t migrate_id;   /* while resizing: the next leaf id to move into index */
    zs_leaf_t **leaves;    /* the leaf directory: id -> leaf, NULL for a free id */
    uint32_t leaf_ids;     /* ids [0, leaf_ids) are in use or free */
    uint32_t leaf_slots;   /* allocated length of leaves[] and free_ids[] */
    uint32_t *free_ids;
    uint32_t free_count;
    size_t index_bytes;    /* slots, directory and free ids (gr_mem_usable) */
    uint8_t bulk;          /* between bulk begin and end: no tree yet (root NULL), the leaves are
                              the directory's ids 0.. in order (zset.c's bulk load) */
    uint8_t bulk_misordered;   /* an append was not after the one before it (ties in numeric order) */
    uint32_t bulk_last_at;     /* the last append's offset in the last leaf */
};

static inline int is_leaf(const void *node) { return *(const uint8_t *)node; }

/* ---- entries ----
 *
 * Inside the engine a packed set's members are their 4-byte keys (zset_packed.c: the int32,
 * sign bit flipped, big-endian, so byte order is numeric order): the tree, the index and the
 * hashes see those 4 bytes as the member, and only the API's edges (zset.c) turn decimal text
 * into a key and back. */

static inline const uint8_t *entry_decode(const zs_leaf_t *leaf, const uint8_t *p, gr_zset_entry_t *e) {
    if (leaf->is_leaf == LEAF_PACKED) {
        float score;
        memcpy(&score, p + 4, sizeof score);
        e->score = score;
        e->member = p;
        e->member_length = 4;
        return p + PACKED_ENTRY;
    }
    memcpy(&e->score, p, sizeof e->score);
    size_t length;
    p = varint_get(p + sizeof e->score, &length);
    e->member = p;
    e->member_length = length;
    return p + length;
}

static inline size_t entry_size(const zs_leaf_t *leaf, size_t member_length) {
    if (leaf->is_leaf == LEAF_PACKED) return PACKED_ENTRY;
    return sizeof(double) + varint_size(member_length) + member_length;
}

/* Writes (s, m) at p (entry_size bytes; a packed leaf's m is a key and s fits float32). */
static inline void entry_encode(const zs_leaf_t *leaf, uint8_t *p, double s, const uint8_t *m, size_t ml) {
    if (leaf->is_leaf == LEAF_PACKED) {
        float score = (float)s;
        memcpy(p, m, 4);
        memcpy(p + 4, &score, sizeof score);
        return;
    }
    memcpy(p, &s, sizeof s);
    uint8_t *q = varint_put(p + sizeof s, ml);
    memcpy(q, m, ml);
}

/* The entry at index i of a leaf (i < count): packed entries are found directly. */
static inline const uint8_t *entry_at(const zs_leaf_t *leaf, size_t i) {
    if (leaf->is_leaf == LEAF_PACKED) return leaf->data + i * PACKED_ENTRY;
    const uint8_t *p = leaf->data;
    for (size_t k = 0; k < i; k++) {   /* by lengths alone */
        size_t length;
        p = varint_get(p + sizeof(double), &length) + length;
    }
    return p;
}

static inline int bytes_cmp(const uint8_t *a, size_t an, const uint8_t *b, size_t bn) {
    int c = memcmp(a, b, an < bn ? an : bn);
    if (c) return c;
    return an < bn ? -1 : an > bn;
}

/* The entry of leaf whose member is m: 1 (e filled), or 0. */
static inline int leaf_find(const zs_leaf_t *leaf, const uint8_t *m, size_t ml, gr_zset_entry_t *e) {
    /* hot (every ZSCORE/ZADD of a standard set): read only each entry's length, and compare
     * the first byte before the rest */
    const uint8_t *p = leaf->data, *end = leaf->data + leaf->used;
    if (leaf->is_leaf == LEAF_PACKED) {
        if (ml != 4) return 0;
        for (; p < end; p += PACKED_ENTRY)
            if (memcmp(p, m, 4) == 0) {
                entry_decode(leaf, p, e);
                return 1;
            }
        return 0;
    }
    while (p < end) {
        size_t length;
        const uint8_t *member = varint_get(p + sizeof(double), &length);
        if (length == ml && (ml == 0 || (member[0] == m[0] && memcmp(member, m, ml) == 0))) {
            entry_decode(leaf, p, e);
            return 1;
        }
        p = member + length;
    }
    return 0;
}

/* ---- the packed encoding's member keys and scores (zset_packed.c) ---- */

/* A canonical int32 decimal ("0", "-7", "2147483647"; not "-0", "+1", "01", " 1") as its key:
 * 1, or 0 when m is not one. */
int zs_packed_key(const uint8_t *m, size_t ml, uint8_t key[4]);
/* The decimal text of a key into text (at least 11 bytes): its length. */
size_t zs_packed_text(const uint8_t key[4], uint8_t *text);
/* Whether score is exactly a float32 (infinities included). */
int zs_packed_score_fits(double score);
/* Rebuilds z in another indexed form (to_packed: packed, else standard) from its entries, in
 * one pass plus one index build: 0, -1 on OOM, -2 when to_packed and a member or score does
 * not fit (z unchanged on failure). */
int zs_rebuild(gr_zset_t *z, int to_packed);
/* The same into fresh (uninitialised), z untouched: 0, -1, -2; on failure fresh holds nothing. */
int zs_rebuild_into(const gr_zset_t *z, int to_packed, gr_zset_t *fresh);
/* A packed entry handed out: its member as decimal text in e->text. */
static inline void zs_entry_publish(const gr_zset_t *z, gr_zset_entry_t *e) {
    if (!z->packed) return;
    e->member_length = zs_packed_text(e->member, e->text);
    e->member = e->text;
}

/* ---- the tree (zset.c), for the rebuild in zset_packed.c ---- */

/* A leaf in z's format (registered in the directory when z is indexed); NULL on OOM. */
zs_leaf_t *zs_leaf_new(gr_zset_t *z, size_t capacity);
/* Insert (s, m), known absent, into the tree alone (no index): 0, or -1 on OOM. */
int zs_tree_insert(gr_zset_t *z, double s, const uint8_t *m, size_t ml);
/* A node and everything under it. */
void zs_node_free(gr_zset_t *z, void *node);

/* ---- the member index and leaf directory (zset_index.c) ---- */

static inline uint64_t zs_member_hash(const uint8_t *m, size_t ml) { return gr_table_hash(m, ml); }
static inline int zs_resizing(const gr_zset_t *z) { return z->old.capacity != 0; }

/* index_bytes accounting for the directory and slots */
void zs_index_release(gr_zset_t *z, void *p);
void *zs_index_realloc(gr_zset_t *z, void *p, size_t size);
/* A new leaf takes a directory id (and the current generation): 0, or -1 on OOM. */
int zs_leaf_register(gr_zset_t *z, zs_leaf_t *leaf);
void zs_leaf_unregister(gr_zset_t *z, const zs_leaf_t *leaf);
/* Finds member (hash h): 1 with its leaf and entry, or 0. */
int zs_index_find(const gr_zset_t *z, uint64_t h, const uint8_t *m, size_t ml, zs_leaf_t **leaf_out,
                  gr_zset_entry_t *e);
/* Puts (hash h -> leaf id) into the current index; the caller made room. */
void zs_index_put(gr_zset_t *z, uint64_t h, uint32_t id);
/* Removes the current index's slot of (hash h, leaf id) (a tombstone). */
void zs_index_remove(gr_zset_t *z, uint64_t h, uint32_t id);
/* Points the slots of leaf's members that name `from` at `to`, leaving out skip (the member
 * being written). */
void zs_relink_all(gr_zset_t *z, const zs_leaf_t *leaf, uint32_t from, uint32_t to, const uint8_t *skip,
                   size_t skip_length);
void zs_leaf_move_to_index(gr_zset_t *z, zs_leaf_t *leaf);
/* Before a leaf changes: its members must be in the current index. */
static inline void zs_leaf_touch(gr_zset_t *z, zs_leaf_t *leaf) {
    if (z->standard && leaf->generation != z->generation) zs_leaf_move_to_index(z, leaf);
}
/* Moves up to `leaves` more leaves into the current index (one per write). */
void zs_migrate(gr_zset_t *z, uint32_t leaves);
/* Starts moving to an index of capacity slots: 0, or -1 on OOM (nothing changed). */
int zs_index_resize(gr_zset_t *z, uint64_t capacity);
/* Room for one more member: 0, or -1 on OOM. */
int zs_index_make_room(gr_zset_t *z);
void zs_index_maybe_shrink(gr_zset_t *z);
/* The index, old index, directory and free ids. */
void zs_index_free(gr_zset_t *z);
/* An index for a set whose leaves are registered but not indexed (load 0.5): 0, or -1 on OOM. */
int zs_index_build(gr_zset_t *z);
/* The same at a load of 0.7 for a bulk load: 0, -1 on OOM, -2 when a member is there twice.
 * leaf_max (NULL, or one per directory id): each leaf's largest score, read on the way. */
int zs_index_build_unique(gr_zset_t *z, double *leaf_max);
uint64_t zs_index_scan(const gr_zset_t *z, uint64_t cursor, size_t count, gr_zset_visit_t visit, void *context);
/* 0 when every slot names a live leaf of its generation and the slots count the members. */
int zs_index_check(const gr_zset_t *z);
size_t zs_index_tombstones(const gr_zset_t *z);

#endif
