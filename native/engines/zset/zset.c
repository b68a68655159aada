/* zset.c — the sorted-set engine: a B+tree with counts whose leaves hold packed (score,
 * member) entries, plus, in the standard encoding, a member index whose slots name the leaf
 * holding each member (so a member's bytes are stored once, in its leaf). The layout and the
 * API are in zset.h; the command layer is commands/cmd_zset.c.
 *
 * Descents: an inner node keeps each child's entry count and largest score, so a descent by
 * rank or by score reads one node per level; a descent by (score, member) compares members
 * only when a child's largest score equals the score sought (then it reads that child's last
 * member). Inserts split a full leaf or node in two; deletes remove an emptied leaf or node
 * and collapse a root with one child. Every recursion is as deep as the tree (4 levels hold
 * tens of millions of members).
 */
#include <stdlib.h>
#include <string.h>

#include "engines/zset/zset_internal.h"

/* ---- allocation, counted in tree_bytes ---- */

static void *tree_alloc(gr_zset_t *z, size_t size) {
    void *p = gr_mem_alloc(size, GR_MEM_ZSET);
    if (p) z->tree_bytes += gr_mem_usable(p);
    return p;
}

static void tree_free(gr_zset_t *z, void *p) {
    if (!p) return;
    z->tree_bytes -= gr_mem_usable(p);
    gr_mem_free(p, GR_MEM_ZSET);
}

zs_leaf_t *zs_leaf_new(gr_zset_t *z, size_t capacity) {
    zs_leaf_t *leaf = tree_alloc(z, sizeof *leaf + capacity);
    if (!leaf) return NULL;
    leaf->is_leaf = z->packed ? LEAF_PACKED : LEAF_PLAIN;
    leaf->count = 0;
    leaf->used = 0;
    leaf->capacity = (uint32_t)capacity;
    leaf->id = 0;
    leaf->generation = 0;
    if (z->standard && zs_leaf_register(z, leaf) != 0) {
        tree_free(z, leaf);
        return NULL;
    }
    return leaf;
}

static zs_leaf_t *leaf_resize(gr_zset_t *z, zs_leaf_t *leaf, size_t capacity) {
    size_t before = gr_mem_usable(leaf);
    zs_leaf_t *grown = gr_mem_realloc(leaf, sizeof *leaf + capacity, GR_MEM_ZSET);
    if (!grown) return NULL;
    z->tree_bytes = z->tree_bytes - before + gr_mem_usable(grown);
    grown->capacity = (uint32_t)capacity;
    if (z->standard) z->leaves[grown->id] = grown;
    return grown;
}

/* A node leaving the tree (a leaf also leaves the directory). */
static void node_release(gr_zset_t *z, void *node) {
    if (z->standard && is_leaf(node)) zs_leaf_unregister(z, node);
    tree_free(z, node);
}

/* (s, m) against an entry: <0, 0, >0. */
static int key_cmp(double s, const uint8_t *m, size_t ml, const gr_zset_entry_t *e) {
    if (s < e->score) return -1;
    if (s > e->score) return 1;
    return bytes_cmp(m, ml, e->member, e->member_length);
}

static size_t node_count(const void *node) {
    if (is_leaf(node)) return ((const zs_leaf_t *)node)->count;
    const zs_inner_t *in = node;
    size_t total = 0;
    for (uint32_t i = 0; i < in->count; i++) total += in->counts[i];
    return total;
}

/* The last entry under node (which is not empty). */
static void node_last(const void *node, gr_zset_entry_t *e) {
    while (!is_leaf(node)) {
        const zs_inner_t *in = node;
        node = in->child[in->count - 1];
    }
    const zs_leaf_t *leaf = node;
    entry_decode(leaf, entry_at(leaf, leaf->count - 1), e);
}

static double node_max(const void *node) {
    if (!is_leaf(node)) {
        const zs_inner_t *in = node;
        return in->max[in->count - 1];
    }
    gr_zset_entry_t e;
    node_last(node, &e);
    return e.score;
}

/* Whether every entry under child i of in is below (s, m). */
static int child_below(const zs_inner_t *in, uint32_t i, double s, const uint8_t *m, size_t ml) {
    if (in->max[i] < s) return 1;
    if (in->max[i] > s) return 0;
    gr_zset_entry_t last;
    node_last(in->child[i], &last);
    return key_cmp(s, m, ml, &last) > 0;
}

/* The child of in whose range holds (s, m): the first not wholly below it, else the last. */
static uint32_t child_for_key(const zs_inner_t *in, double s, const uint8_t *m, size_t ml, size_t *rank) {
    /* child_below is true up to some child and false after it: binary search, so a score
     * tied across many children (ZINCRBY streams: most members share a few scores) reads
     * O(log fanout) last members instead of one per child */
    uint32_t low = 0, high = in->count - 1;
    while (low < high) {
        uint32_t middle = low + (high - low) / 2;
        if (child_below(in, middle, s, m, ml)) low = middle + 1;
        else high = middle;
    }
    if (rank)
        for (uint32_t i = 0; i < low; i++) *rank += in->counts[i];
    return low;
}

/* The leaf whose range holds (s, m). */
static zs_leaf_t *leaf_for_key(const gr_zset_t *z, double s, const uint8_t *m, size_t ml) {
    const void *node = z->root;
    while (!is_leaf(node)) {
        const zs_inner_t *in = node;
        node = in->child[child_for_key(in, s, m, ml, NULL)];
    }
    return (zs_leaf_t *)node;
}

/* ---- lifecycle ---- */

gr_zset_t *gr_zset_new(void) {
    gr_zset_t *z = gr_mem_alloc(sizeof *z, GR_MEM_ZSET);
    if (!z) return NULL;
    memset(z, 0, sizeof *z);
    z->root = zs_leaf_new(z, 0);
    if (!z->root) {
        gr_mem_free(z, GR_MEM_ZSET);
        return NULL;
    }
    return z;
}

void zs_node_free(gr_zset_t *z, void *node) {
    if (!is_leaf(node)) {
        zs_inner_t *in = node;
        for (uint32_t i = 0; i < in->count; i++) zs_node_free(z, in->child[i]);
    }
    tree_free(z, node);
}

/* The standard encoding's index and directory. */

void gr_zset_free(gr_zset_t *z) {
    if (!z) return;
    if (z->bulk) {   /* a bulk load that did not end: its leaves are the directory's */
        for (uint32_t id = 0; id < z->leaf_ids; id++) tree_free(z, z->leaves[id]);
    } else {
        zs_node_free(z, z->root);
    }
    zs_index_free(z);
    gr_mem_free(z, GR_MEM_ZSET);
}

size_t gr_zset_count(const gr_zset_t *z) { return z->count; }
int gr_zset_is_compact(const gr_zset_t *z) { return !z->standard; }
int gr_zset_is_packed(const gr_zset_t *z) { return z->packed; }
const char *gr_zset_encoding_name(const gr_zset_t *z) { return z->packed ? "packed" : z->standard ? "skiplist" : "listpack"; }

size_t gr_zset_allocated_bytes(const gr_zset_t *z) { return gr_mem_usable(z) + z->tree_bytes + z->index_bytes; }

/* ---- insert ---- */

/* Split a leaf past GR_ZSET_LEAF_ENTRIES: its upper half moves to a new right sibling
 * (returned), or NULL when that could not be allocated (the leaf then stays large). */
static zs_leaf_t *leaf_split(gr_zset_t *z, zs_leaf_t *leaf, uint32_t keep, const uint8_t *m, size_t ml) {
    const uint8_t *p = leaf->data;
    gr_zset_entry_t e;
    for (uint32_t i = 0; i < keep; i++) p = entry_decode(leaf, p, &e);
    size_t offset = (size_t)(p - leaf->data);
    size_t moved = leaf->used - offset;
    zs_leaf_t *right = zs_leaf_new(z, moved + moved / 8);
    if (!right) return NULL;
    memcpy(right->data, p, moved);
    right->used = (uint32_t)moved;
    right->count = leaf->count - keep;
    leaf->used = (uint32_t)offset;
    leaf->count = keep;
    zs_relink_all(z, right, leaf->id, right->id, m, ml);
    return right;
}

static zs_inner_t *inner_split(gr_zset_t *z, zs_inner_t *in) {
    zs_inner_t *right = tree_alloc(z, sizeof *right);
    if (!right) return NULL;
    uint32_t keep = in->count / 2, moved = in->count - keep;
    right->is_leaf = 0;
    right->count = moved;
    memcpy(right->counts, in->counts + keep, moved * sizeof in->counts[0]);
    memcpy(right->max, in->max + keep, moved * sizeof in->max[0]);
    memcpy(right->child, in->child + keep, moved * sizeof in->child[0]);
    in->count = keep;
    return right;
}

/* Insert (s, m), known absent, under *slot (which may move: realloc). 0, or -1 OOM with
 * nothing changed. *split: a new right sibling to link after *slot, or NULL. */
static int node_insert(gr_zset_t *z, void **slot, double s, const uint8_t *m, size_t ml, void **split) {
    *split = NULL;
    if (!is_leaf(*slot)) {
        zs_inner_t *in = *slot;
        uint32_t i = child_for_key(in, s, m, ml, NULL);
        void *child_split;
        if (node_insert(z, &in->child[i], s, m, ml, &child_split) != 0) return -1;
        in->counts[i]++;
        if (child_split) {
            memmove(in->counts + i + 2, in->counts + i + 1, (in->count - i - 1) * sizeof in->counts[0]);
            memmove(in->max + i + 2, in->max + i + 1, (in->count - i - 1) * sizeof in->max[0]);
            memmove(in->child + i + 2, in->child + i + 1, (in->count - i - 1) * sizeof in->child[0]);
            in->count++;
            in->child[i + 1] = child_split;
            in->counts[i + 1] = node_count(child_split);
            in->counts[i] -= in->counts[i + 1];
            in->max[i + 1] = node_max(child_split);
        }
        in->max[i] = node_max(in->child[i]);
        if (in->count > GR_ZSET_FANOUT) *split = inner_split(z, in);
        return 0;
    }
    zs_leaf_t *leaf = *slot;
    zs_leaf_touch(z, leaf);
    size_t need = entry_size(leaf, ml);
    if (leaf->used + need > leaf->capacity) {
        size_t capacity = leaf->used + need;
        capacity += z->standard ? capacity / 8 : capacity / 4;
        zs_leaf_t *grown = leaf_resize(z, leaf, capacity);
        if (!grown) return -1;
        *slot = leaf = grown;
    }
    uint8_t *p = leaf->data, *end = leaf->data + leaf->used;
    while (p < end) {
        gr_zset_entry_t e;
        const uint8_t *next = entry_decode(leaf, p, &e);
        if (key_cmp(s, m, ml, &e) < 0) break;
        p = (uint8_t *)next;
    }
    /* a split after an insert at either end keeps the full side full, so ascending or
     * descending inserts (RESTORE, COPY, the conversion) fill their leaves */
    const uint32_t at_end = p == end, at_start = p == leaf->data;
    memmove(p + need, p, (size_t)(end - p));
    entry_encode(leaf, p, s, m, ml);
    leaf->used += (uint32_t)need;
    leaf->count++;
    if (z->standard && leaf->count > GR_ZSET_LEAF_ENTRIES) {
        uint32_t keep = at_end ? leaf->count - 1 : at_start ? 1 : leaf->count / 2;
        *split = leaf_split(z, leaf, keep, m, ml);
        if (*split && leaf->capacity > leaf->used + leaf->used / 8 + 16) {   /* give the moved bytes back */
            zs_leaf_t *shrunk = leaf_resize(z, leaf, leaf->used + leaf->used / 8);
            if (shrunk) *slot = shrunk;
        }
    }
    return 0;
}

int zs_tree_insert(gr_zset_t *z, double s, const uint8_t *m, size_t ml) {
    void *split;
    if (node_insert(z, &z->root, s, m, ml, &split) != 0) return -1;
    if (split) {
        zs_inner_t *root = tree_alloc(z, sizeof *root);
        if (root) {   /* without memory for a new root, the split stays unlinked: undo it */
            root->is_leaf = 0;
            root->count = 2;
            root->child[0] = z->root;
            root->child[1] = split;
            root->counts[0] = node_count(z->root);
            root->counts[1] = node_count(split);
            root->max[0] = node_max(z->root);
            root->max[1] = node_max(split);
            z->root = root;
        } else {
            /* put the sibling's entries back: the leaf or node keeps room for them */
            if (is_leaf(split)) {
                zs_leaf_t *left = z->root, *right = split;
                zs_leaf_t *grown = leaf_resize(z, left, left->used + right->used);
                if (!grown) return -1;   /* cannot happen in practice; leaks nothing counted */
                memcpy(grown->data + grown->used, right->data, right->used);
                grown->used += right->used;
                grown->count += right->count;
                zs_relink_all(z, right, right->id, grown->id, m, ml);   /* right's members name it: back to grown */
                z->root = grown;
            } else {
                zs_inner_t *left = z->root, *right = split;
                memcpy(left->counts + left->count, right->counts, right->count * sizeof left->counts[0]);
                memcpy(left->max + left->count, right->max, right->count * sizeof left->max[0]);
                memcpy(left->child + left->count, right->child, right->count * sizeof left->child[0]);
                left->count += right->count;
            }
            node_release(z, split);
        }
    }
    z->count++;
    return 0;
}

/* ---- delete ---- */

/* Remove (s, m) under *slot: 1 removed, 0 absent. An emptied node is freed and *slot set to
 * NULL, unless keep (the only path from the root). */
static int node_delete(gr_zset_t *z, void **slot, double s, const uint8_t *m, size_t ml, int keep) {
    if (!is_leaf(*slot)) {
        zs_inner_t *in = *slot;
        uint32_t i = child_for_key(in, s, m, ml, NULL);
        if (!node_delete(z, &in->child[i], s, m, ml, keep && in->count == 1)) return 0;
        in->counts[i]--;
        if (!in->child[i]) {
            memmove(in->counts + i, in->counts + i + 1, (in->count - i - 1) * sizeof in->counts[0]);
            memmove(in->max + i, in->max + i + 1, (in->count - i - 1) * sizeof in->max[0]);
            memmove(in->child + i, in->child + i + 1, (in->count - i - 1) * sizeof in->child[0]);
            in->count--;
            if (in->count == 0 && !keep) {
                tree_free(z, in);
                *slot = NULL;
            }
        } else if (in->counts[i]) {
            in->max[i] = node_max(in->child[i]);
        }
        return 1;
    }
    zs_leaf_t *leaf = *slot;
    zs_leaf_touch(z, leaf);
    uint8_t *p = leaf->data, *end = leaf->data + leaf->used;
    while (p < end) {
        gr_zset_entry_t e;
        uint8_t *next = (uint8_t *)entry_decode(leaf, p, &e);
        int c = key_cmp(s, m, ml, &e);
        if (c < 0) return 0;
        if (c == 0) {
            memmove(p, next, (size_t)(end - next));
            leaf->used -= (uint32_t)(next - p);
            leaf->count--;
            if (leaf->count == 0 && !keep) {
                node_release(z, leaf);
                *slot = NULL;
            } else if (leaf->capacity > 64 && leaf->used < leaf->capacity / 2) {
                zs_leaf_t *shrunk = leaf_resize(z, leaf, leaf->used + leaf->used / 8);
                if (shrunk) *slot = shrunk;
            }
            return 1;
        }
        p = next;
    }
    return 0;
}

static int tree_delete(gr_zset_t *z, double s, const uint8_t *m, size_t ml) {
    if (!node_delete(z, &z->root, s, m, ml, 1)) return 0;
    z->count--;
    while (!is_leaf(z->root) && ((zs_inner_t *)z->root)->count == 1) {
        zs_inner_t *in = z->root;
        z->root = in->child[0];
        tree_free(z, in);
    }
    return 1;
}

/* ---- access ---- */

/* Compact: find member by walking the leaf. */
static int compact_find(const gr_zset_t *z, const uint8_t *m, size_t ml, double *score, size_t *rank) {
    const zs_leaf_t *leaf = z->root;
    const uint8_t *p = leaf->data;
    for (uint32_t i = 0; i < leaf->count; i++) {
        gr_zset_entry_t e;
        p = entry_decode(leaf, p, &e);
        if (e.member_length == ml && memcmp(e.member, m, ml) == 0) {
            if (score) *score = e.score;
            if (rank) *rank = i;
            return 1;
        }
    }
    return 0;
}

/* A packed set's member text as its key (m, ml re-pointed at key): 1, or 0 when the text is
 * not a canonical int32, so not a member. Other sets: 1, m unchanged. */
static int member_key(const gr_zset_t *z, const uint8_t **m, size_t *ml, uint8_t key[4]) {
    if (!z->packed) return 1;
    if (!zs_packed_key(*m, *ml, key)) return 0;
    *m = key;
    *ml = 4;
    return 1;
}

int gr_zset_score(const gr_zset_t *z, const uint8_t *m, size_t ml, double *score) {
    if (!z->standard) return compact_find(z, m, ml, score, NULL);
    uint8_t key[4];
    if (!member_key(z, &m, &ml, key)) return 0;
    zs_leaf_t *leaf;
    gr_zset_entry_t e;
    if (!zs_index_find(z, zs_member_hash(m, ml), m, ml, &leaf, &e)) return 0;
    if (score) *score = e.score;
    return 1;
}

int gr_zset_set(gr_zset_t *z, const uint8_t *m, size_t ml, double score, const gr_zset_limits_t *limits) {
    uint8_t key[4];
    if (z->packed && (!zs_packed_score_fits(score) || !member_key(z, &m, &ml, key))) {
        /* a member or score the packed form cannot hold: the set becomes standard first */
        if (zs_rebuild(z, 0) != 0) return -1;
    }
    if (z->standard) {
        uint64_t h = zs_member_hash(m, ml);
        zs_leaf_t *leaf;
        gr_zset_entry_t e;
        if (zs_index_find(z, h, m, ml, &leaf, &e)) {
            double old = e.score;
            if (old == score) return 0;   /* -0.0 and 0.0 too, as Redis's zsetAdd */
            /* out of the index, moved in the tree, back in the index with its new leaf (the
             * slot freed is on its path, so putting it back needs no room) */
            zs_leaf_touch(z, leaf);
            zs_index_remove(z, h, leaf->id);
            if (zs_tree_insert(z, score, m, ml) != 0) {
                zs_index_put(z, h, leaf->id);   /* nothing moved */
                return -1;
            }
            tree_delete(z, old, m, ml);
            zs_index_put(z, h, leaf_for_key(z, score, m, ml)->id);
            zs_migrate(z, 1);
            return 0;
        }
        if (zs_index_make_room(z) != 0) return -1;
        if (zs_tree_insert(z, score, m, ml) != 0) return -1;
        zs_index_put(z, h, leaf_for_key(z, score, m, ml)->id);
        zs_migrate(z, 1);
        return 1;
    }
    double old;
    if (compact_find(z, m, ml, &old, NULL)) {
        if (old == score) return 0;   /* -0.0 and 0.0 too, as Redis's zsetAdd */
        if (score == 0) score = 0.0;   /* a listpack stores -0 as the integer 0 */
        if (zs_tree_insert(z, score, m, ml) != 0) return -1;
        tree_delete(z, old, m, ml);
        return 0;
    }
    if (ml > (uint64_t)limits->max_compact_value || (int64_t)z->count + 1 > limits->max_compact_entries) {
        /* packed when asked for and everything fits (-2: something does not), else standard */
        int packed = limits->packed && zs_packed_key(m, ml, key) && zs_packed_score_fits(score) ? zs_rebuild(z, 1) : -2;
        if (packed == -1 || (packed != 0 && zs_rebuild(z, 0) != 0)) return -1;
        return gr_zset_set(z, m, ml, score, limits);
    }
    if (score == 0) score = 0.0;   /* a listpack stores -0 as the integer 0 */
    if (zs_tree_insert(z, score, m, ml) != 0) return -1;
    return 1;
}

int gr_zset_delete(gr_zset_t *z, const uint8_t *m, size_t ml) {
    if (!z->standard) {
        double score;
        if (!compact_find(z, m, ml, &score, NULL)) return 0;
        tree_delete(z, score, m, ml);
        return 1;
    }
    uint8_t key[4];
    if (!member_key(z, &m, &ml, key)) return 0;
    uint64_t h = zs_member_hash(m, ml);
    zs_leaf_t *leaf;
    gr_zset_entry_t e;
    if (!zs_index_find(z, h, m, ml, &leaf, &e)) return 0;
    double score = e.score;
    zs_leaf_touch(z, leaf);
    zs_index_remove(z, h, leaf->id);
    tree_delete(z, score, m, ml);
    zs_index_maybe_shrink(z);
    zs_migrate(z, 1);
    return 1;
}

/* ---- queries ---- */

int64_t gr_zset_rank(const gr_zset_t *z, const uint8_t *m, size_t ml, double *score_out) {
    double s;
    if (!z->standard) {
        size_t rank;
        if (!compact_find(z, m, ml, score_out, &rank)) return -1;
        return (int64_t)rank;
    }
    uint8_t key[4];
    zs_leaf_t *found;
    gr_zset_entry_t e;
    if (!member_key(z, &m, &ml, key) || !zs_index_find(z, zs_member_hash(m, ml), m, ml, &found, &e)) return -1;
    s = e.score;
    if (score_out) *score_out = s;
    size_t rank = 0;
    const void *node = z->root;
    while (!is_leaf(node)) {
        const zs_inner_t *in = node;
        node = in->child[child_for_key(in, s, m, ml, &rank)];
    }
    const zs_leaf_t *leaf = node;
    const uint8_t *p = leaf->data;
    for (uint32_t i = 0; i < leaf->count; i++) {
        gr_zset_entry_t e;
        p = entry_decode(leaf, p, &e);
        if (key_cmp(s, m, ml, &e) == 0) return (int64_t)(rank + i);
    }
    return -1;   /* the index and the tree disagree: cannot happen */
}

/* The leaf holding rank (< count) and the rank's index in it. */
static const zs_leaf_t *leaf_at(const gr_zset_t *z, size_t rank, size_t *index) {
    const void *node = z->root;
    while (!is_leaf(node)) {
        const zs_inner_t *in = node;
        uint32_t i = 0;
        while (i + 1 < in->count && rank >= in->counts[i]) rank -= in->counts[i++];
        node = in->child[i];
    }
    *index = rank;
    return node;
}

int gr_zset_at(const gr_zset_t *z, size_t rank, gr_zset_entry_t *entry) {
    if (rank >= z->count) return 0;
    size_t index;
    const zs_leaf_t *leaf = leaf_at(z, rank, &index);
    entry_decode(leaf, entry_at(leaf, index), entry);
    zs_entry_publish(z, entry);
    return 1;
}

size_t gr_zset_count_below_score(const gr_zset_t *z, double s, int inclusive) {
    size_t rank = 0;
    const void *node = z->root;
    while (!is_leaf(node)) {
        const zs_inner_t *in = node;
        uint32_t i = 0;
        while (i < in->count && (inclusive ? in->max[i] <= s : in->max[i] < s)) rank += in->counts[i++];
        if (i == in->count) return rank;
        node = in->child[i];
    }
    const zs_leaf_t *leaf = node;
    const uint8_t *p = leaf->data;
    for (uint32_t i = 0; i < leaf->count; i++) {
        gr_zset_entry_t e;
        p = entry_decode(leaf, p, &e);
        if (inclusive ? e.score > s : e.score >= s) break;
        rank++;
    }
    return rank;
}

static int member_below(const gr_zset_entry_t *e, const uint8_t *m, size_t ml, int inclusive) {
    int c = bytes_cmp(e->member, e->member_length, m, ml);
    return inclusive ? c <= 0 : c < 0;
}

size_t gr_zset_count_below_member(const gr_zset_t *z, const uint8_t *m, size_t ml, int inclusive) {
    size_t rank = 0;
    const void *node = z->root;
    while (!is_leaf(node)) {
        const zs_inner_t *in = node;
        /* the first child whose last member is not below m (binary search: members ascend) */
        uint32_t low = 0, high = in->count;
        while (low < high) {
            uint32_t middle = low + (high - low) / 2;
            gr_zset_entry_t last;
            node_last(in->child[middle], &last);
            if (member_below(&last, m, ml, inclusive)) low = middle + 1;
            else high = middle;
        }
        for (uint32_t i = 0; i < low; i++) rank += in->counts[i];
        if (low == in->count) return rank;
        node = in->child[low];
    }
    const zs_leaf_t *leaf = node;
    const uint8_t *p = leaf->data;
    for (uint32_t i = 0; i < leaf->count; i++) {
        gr_zset_entry_t e;
        p = entry_decode(leaf, p, &e);
        if (!member_below(&e, m, ml, inclusive)) break;
        rank++;
    }
    return rank;
}

/* ---- bulk ---- */

void gr_zset_iter_start(const gr_zset_t *z, size_t rank, gr_zset_iter_t *iter) {
    iter->zset = z;
    iter->rank = rank;
    iter->leaf = NULL;
    iter->leaf_index = 0;
    iter->position = NULL;
}

int gr_zset_iter_next(gr_zset_iter_t *iter, gr_zset_entry_t *entry) {
    const gr_zset_t *z = iter->zset;
    if (iter->rank >= z->count) return 0;
    const zs_leaf_t *leaf = iter->leaf;
    if (!leaf || iter->leaf_index >= leaf->count) {
        size_t index;
        leaf = leaf_at(z, iter->rank, &index);
        iter->leaf = leaf;
        iter->leaf_index = index;
        iter->position = entry_at(leaf, index);
    }
    iter->position = entry_decode(leaf, iter->position, entry);
    zs_entry_publish(z, entry);
    iter->leaf_index++;
    iter->rank++;
    return 1;
}

/* A packed set's scan hands each visit the member's text (the index walks keys). */
typedef struct packed_visit {
    gr_zset_visit_t visit;
    void *context;
} packed_visit_t;

static void visit_published(void *context, const gr_zset_entry_t *entry) {
    const packed_visit_t *outer = context;
    gr_zset_entry_t e = *entry;
    e.member_length = zs_packed_text(entry->member, e.text);
    e.member = e.text;
    outer->visit(outer->context, &e);
}

uint64_t gr_zset_scan(const gr_zset_t *z, uint64_t cursor, size_t count, gr_zset_visit_t visit, void *context) {
    if (z->packed) {
        packed_visit_t outer = {visit, context};
        return zs_index_scan(z, cursor, count, visit_published, &outer);
    }
    if (z->standard) return zs_index_scan(z, cursor, count, visit, context);
    gr_zset_iter_t iter;
    gr_zset_entry_t e;
    gr_zset_iter_start(z, 0, &iter);
    while (gr_zset_iter_next(&iter, &e)) visit(context, &e);
    return 0;
}

gr_zset_t *gr_zset_duplicate(const gr_zset_t *z) {
    if (z->packed) {   /* in order into a fresh packed set, its index built once */
        gr_zset_t *copy = gr_mem_alloc(sizeof *copy, GR_MEM_ZSET);
        if (!copy) return NULL;
        if (zs_rebuild_into(z, 1, copy) != 0) {
            gr_mem_free(copy, GR_MEM_ZSET);
            return NULL;
        }
        return copy;
    }
    gr_zset_t *copy = gr_zset_new();
    if (!copy) return NULL;
    gr_zset_limits_t limits = z->standard ? (gr_zset_limits_t){0, 0, 0} : (gr_zset_limits_t){INT64_MAX, INT64_MAX, 0};
    gr_zset_iter_t iter;
    gr_zset_entry_t e;
    gr_zset_iter_start(z, 0, &iter);
    while (gr_zset_iter_next(&iter, &e)) {
        if (gr_zset_set(copy, e.member, e.member_length, e.score, &limits) < 0) {
            gr_zset_free(copy);
            return NULL;
        }
    }
    if (z->standard && !copy->standard && zs_rebuild(copy, 0) != 0) {
        gr_zset_free(copy);
        return NULL;
    }
    return copy;
}

/* ---- self-check (tests) ---- */

static long check_node(const gr_zset_t *z, const void *node, gr_zset_entry_t *previous, int *have_previous) {
    if (is_leaf(node)) {
        const zs_leaf_t *leaf = node;
        if (leaf->used > leaf->capacity || (leaf->is_leaf == LEAF_PACKED) != z->packed) return -1;
        const uint8_t *p = leaf->data;
        for (uint32_t i = 0; i < leaf->count; i++) {
            gr_zset_entry_t e;
            p = entry_decode(leaf, p, &e);
            if (*have_previous && key_cmp(e.score, e.member, e.member_length, previous) <= 0) return -1;
            if (z->standard) {   /* the index finds it, in this leaf */
                zs_leaf_t *found;
                gr_zset_entry_t f;
                if (leaf->id >= z->leaf_ids || z->leaves[leaf->id] != leaf) return -1;
                if (!zs_index_find(z, zs_member_hash(e.member, e.member_length), e.member, e.member_length, &found, &f) ||
                    found != leaf || f.score != e.score)
                    return -1;
            }
            *previous = e;
            *have_previous = 1;
        }
        if (p != leaf->data + leaf->used) return -1;
        return (long)leaf->count;
    }
    const zs_inner_t *in = node;
    if (in->count == 0 || in->count > GR_ZSET_FANOUT) return -1;
    long total = 0;
    for (uint32_t i = 0; i < in->count; i++) {
        long n = check_node(z, in->child[i], previous, have_previous);
        if (n <= 0 || (uint64_t)n != in->counts[i] || in->max[i] != node_max(in->child[i])) return -1;
        total += n;
    }
    return total;
}

int gr_zset_check(const gr_zset_t *z) {
    gr_zset_entry_t previous;
    int have_previous = 0;
    long n = check_node(z, z->root, &previous, &have_previous);
    if (n < 0 || (size_t)n != z->count) return -1;
    if (!z->standard) return 0;
    return zs_index_check(z);
}

/* ---- GOBLIN.ZSET.INTERNALS and GOBLIN.OPTIMIZE ---- */

static void internals_walk(const void *node, size_t depth, gr_zset_internals_t *out) {
    if (depth > out->depth) out->depth = depth;
    if (is_leaf(node)) {
        const zs_leaf_t *leaf = node;
        out->leaves++;
        out->leaf_bytes_used += leaf->used;
        out->leaf_bytes_allocated += gr_mem_usable(leaf);
        return;
    }
    const zs_inner_t *in = node;
    out->inner_nodes++;
    out->inner_bytes += gr_mem_usable(in);
    for (uint32_t i = 0; i < in->count; i++) internals_walk(in->child[i], depth + 1, out);
}

void gr_zset_internals(const gr_zset_t *z, gr_zset_internals_t *out) {
    memset(out, 0, sizeof *out);
    out->representation = z->packed ? "packed-btree+leaf-index" : z->standard ? "btree+leaf-index" : "compact";
    out->members = z->count;
    internals_walk(z->root, 1, out);
    out->index_slots = z->index.capacity;
    out->index_tombstones = zs_index_tombstones(z);
    out->index_resizing = zs_resizing(z);
    out->index_bytes = z->index_bytes;
    out->total_allocated_bytes = gr_zset_allocated_bytes(z);
}

/* Every leaf under *slot down to its used bytes (a failed realloc keeps the leaf as it is). */
static void shrink_leaves(gr_zset_t *z, void **slot) {
    if (!is_leaf(*slot)) {
        zs_inner_t *in = *slot;
        for (uint32_t i = 0; i < in->count; i++) shrink_leaves(z, &in->child[i]);
        return;
    }
    zs_leaf_t *leaf = *slot;
    if (leaf->capacity == leaf->used) return;
    zs_leaf_t *shrunk = leaf_resize(z, leaf, leaf->used);
    if (shrunk) *slot = shrunk;
}

int gr_zset_optimize(gr_zset_t *z) {
    if (!z->standard) {   /* one leaf: give its slack back */
        zs_leaf_t *leaf = z->root;
        if (leaf->capacity > leaf->used) {
            zs_leaf_t *shrunk = leaf_resize(z, leaf, leaf->used);
            if (!shrunk) return -1;
            z->root = shrunk;
        }
        return 0;
    }
    /* ascending inserts fill every leaf (see node_insert), then each leaf keeps its bytes only
     * and the index is rebuilt for a load of 0.7 */
    gr_zset_t *copy = gr_zset_duplicate(z);
    if (!copy) return -1;
    shrink_leaves(copy, &copy->root);
    if (zs_index_resize(copy, (uint64_t)copy->count * 10 / 7 + 16) != 0) {
        gr_zset_free(copy);
        return -1;
    }
    zs_migrate(copy, UINT32_MAX);
    /* swap: z takes copy's contents, copy (with z's old ones) is freed */
    gr_zset_t old = *z;
    *z = *copy;
    *copy = old;
    gr_zset_free(copy);
    return 0;
}

/* ---- bulk load (zset.h): leaves filled left to right, inner levels built bottom-up, the
 * index once ----
 *
 * While loading, the set has no tree: each append goes to the last leaf (the directory's
 * highest id: a fresh set hands out ids 0, 1, 2... in order), a full leaf (GR_ZSET_LEAF_ENTRIES,
 * as ascending inserts leave them) starts the next one. bulk_end builds every inner level in
 * one pass over the level below (children spread evenly, so no node is nearly empty), then
 * the member index at its final size in one pass (zset_index.c). No per-member descent, no
 * split, no incremental rehash. */

gr_zset_t *gr_zset_bulk_begin(void) {
    gr_zset_t *z = gr_mem_alloc(sizeof *z, GR_MEM_ZSET);
    if (!z) return NULL;
    memset(z, 0, sizeof *z);
    z->standard = 1;
    z->bulk = 1;
    return z;
}

/* The finished last leaf gives back slack beyond an eighth (as a split leaves a leaf). */
static void bulk_trim_last(gr_zset_t *z) {
    if (!z->leaf_ids) return;
    zs_leaf_t *leaf = z->leaves[z->leaf_ids - 1];
    if (leaf->capacity > leaf->used + leaf->used / 8 + 16) (void)leaf_resize(z, leaf, leaf->used + leaf->used / 8);
}

int gr_zset_bulk_append(gr_zset_t *z, const uint8_t *m, size_t ml, double score) {
    if (ml > UINT32_MAX / 2) return -1;
    const size_t need = sizeof(double) + varint_size(ml) + ml;
    zs_leaf_t *leaf = z->leaf_ids ? z->leaves[z->leaf_ids - 1] : NULL;
    if (leaf && !z->bulk_misordered) {
        gr_zset_entry_t last;
        entry_decode(leaf, leaf->data + z->bulk_last_at, &last);
        if (key_cmp(score, m, ml, &last) <= 0) z->bulk_misordered = 1;   /* bulk_end sorts */
    }
    if (!leaf || leaf->count >= GR_ZSET_LEAF_ENTRIES) {
        bulk_trim_last(z);
        /* room for a leaf of members this size: exact when they all are, as in most sets */
        leaf = zs_leaf_new(z, need * GR_ZSET_LEAF_ENTRIES);
        if (!leaf) return -1;
    } else if (leaf->used + need > leaf->capacity) {
        size_t capacity = leaf->used + need;
        leaf = leaf_resize(z, leaf, capacity + capacity / 8);
        if (!leaf) return -1;
    }
    z->bulk_last_at = leaf->used;
    entry_encode(leaf, leaf->data + leaf->used, score, m, ml);
    leaf->used += (uint32_t)need;
    leaf->count++;
    z->count++;
    return 0;
}

/* Appends that came out of order (a packed set's ties are in numeric order, the standard
 * encoding's in byte order; a repeated member too): sort the entries and load them again
 * into a fresh bulk set, which then takes z's place. 0, -1 on OOM. */
typedef struct bulk_sorted {
    double score;
    const uint8_t *member;
    size_t length;
} bulk_sorted_t;

static int bulk_sorted_cmp(const void *a, const void *b) {
    const bulk_sorted_t *x = a, *y = b;
    gr_zset_entry_t e = {.member = y->member, .member_length = y->length, .score = y->score};
    return key_cmp(x->score, x->member, x->length, &e);
}

static int bulk_resort(gr_zset_t *z) {
    bulk_sorted_t *all = gr_mem_alloc((z->count ? z->count : 1) * sizeof *all, GR_MEM_OTHER);
    if (!all) return -1;
    size_t n = 0;
    for (uint32_t id = 0; id < z->leaf_ids; id++) {
        const zs_leaf_t *leaf = z->leaves[id];
        const uint8_t *p = leaf->data;
        for (uint32_t i = 0; i < leaf->count; i++) {
            gr_zset_entry_t e;
            p = entry_decode(leaf, p, &e);
            all[n++] = (bulk_sorted_t){e.score, e.member, e.member_length};
        }
    }
    qsort(all, n, sizeof *all, bulk_sorted_cmp);
    gr_zset_t *fresh = gr_zset_bulk_begin();
    int result = fresh ? 0 : -1;
    for (size_t i = 0; i < n && result == 0; i++)
        result = gr_zset_bulk_append(fresh, all[i].member, all[i].length, all[i].score);
    gr_mem_free(all, GR_MEM_OTHER);
    if (result != 0) {
        gr_zset_free(fresh);
        return -1;
    }
    /* z takes fresh's contents (a repeated member is still misordered: bulk_end refuses it) */
    gr_zset_t old = *z;
    *z = *fresh;
    *fresh = old;
    gr_zset_free(fresh);
    return 0;
}

int gr_zset_bulk_end(gr_zset_t *z) {
    if (!z->bulk) return 0;
    if (z->bulk_misordered && bulk_resort(z) != 0) return -1;
    bulk_trim_last(z);
    const size_t leaves = z->leaf_ids;
    if (leaves == 0) {   /* nothing appended: an empty standard set */
        z->root = zs_leaf_new(z, 0);
        if (!z->root) return -1;
        z->bulk = 0;
        return zs_index_build_unique(z, NULL);
    }
    /* the index first: its walk over the leaves reads each one's largest score on the way */
    size_t inner = 0;
    for (size_t n = leaves; n > 1; n = (n + GR_ZSET_FANOUT - 1) / GR_ZSET_FANOUT) inner += (n + GR_ZSET_FANOUT - 1) / GR_ZSET_FANOUT;
    void **level = gr_mem_alloc((leaves + inner) * sizeof *level + leaves * sizeof(double), GR_MEM_OTHER);
    if (!level) return -1;
    void **nodes = level + leaves;
    double *max = (double *)(nodes + inner);
    int indexed = zs_index_build_unique(z, max);
    if (indexed != 0) {
        gr_mem_free(level, GR_MEM_OTHER);
        return indexed;
    }
    /* every inner node before any is linked (an OOM leaves the set as it was, for gr_zset_free) */
    for (size_t i = 0; i < inner; i++) {
        if (!(nodes[i] = tree_alloc(z, sizeof(zs_inner_t)))) {
            while (i--) tree_free(z, nodes[i]);
            gr_mem_free(level, GR_MEM_OTHER);
            return -1;
        }
    }
    for (size_t i = 0; i < leaves; i++) level[i] = z->leaves[i];
    /* each level in place: parent j takes children [j * n / parents, (j + 1) * n / parents),
     * which start at or after j, so parents overwrite only children (and maxima) already read */
    size_t n = leaves, next_node = 0;
    while (n > 1) {
        size_t parents = (n + GR_ZSET_FANOUT - 1) / GR_ZSET_FANOUT;
        for (size_t j = 0; j < parents; j++) {
            size_t first = j * n / parents, last = (j + 1) * n / parents;
            zs_inner_t *in = nodes[next_node++];
            in->is_leaf = 0;
            in->count = (uint32_t)(last - first);
            for (size_t k = first; k < last; k++) {
                in->child[k - first] = level[k];
                in->counts[k - first] = node_count(level[k]);
                in->max[k - first] = max[k];
            }
            level[j] = in;
            max[j] = max[last - 1];
        }
        n = parents;
    }
    z->root = level[0];
    gr_mem_free(level, GR_MEM_OTHER);
    z->bulk = 0;
    return 0;
}

/* ---- GOBLIN.ZSET.CONVERT ---- */

int gr_zset_convert(gr_zset_t *z, int to_packed) {
    if (to_packed ? z->packed : z->standard && !z->packed) return 0;
    return zs_rebuild(z, to_packed);
}
