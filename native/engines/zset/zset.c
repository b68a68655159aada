/* zset.c — the sorted-set engine: a B+tree with counts whose leaves hold packed (score,
 * member) entries, plus lane T's table as the member -> score index in the standard encoding.
 * The layout and the API are in zset.h; the command layer is commands/cmd_zset.c.
 *
 * Descents: an inner node keeps each child's entry count and largest score, so a descent by
 * rank or by score reads one node per level; a descent by (score, member) compares members
 * only when a child's largest score equals the score sought (then it reads that child's last
 * member). Inserts split a full leaf or node in two; deletes remove an emptied leaf or node
 * and collapse a root with one child. Every recursion is as deep as the tree (4 levels hold
 * tens of millions of members).
 */
#include <string.h>

#include "core/varint.h"
#include "engines/table/table.h"
#include "engines/zset/zset.h"

typedef struct zs_leaf {
    uint8_t is_leaf;       /* 1 */
    uint32_t count;
    uint32_t used;         /* bytes of data in use */
    uint32_t capacity;     /* bytes of data allocated */
    uint8_t data[];
} zs_leaf_t;

typedef struct zs_inner {
    uint8_t is_leaf;       /* 0 */
    uint32_t count;        /* children */
    uint64_t counts[GR_ZSET_FANOUT + 1];   /* one spare: a node holds FANOUT + 1 until it splits */
    double max[GR_ZSET_FANOUT + 1];
    void *child[GR_ZSET_FANOUT + 1];
} zs_inner_t;

struct gr_zset {
    void *root;            /* a zs_leaf_t or zs_inner_t */
    gr_table_t *index;     /* member -> 8-byte score; NULL while compact */
    size_t count;
    size_t tree_bytes;     /* what the nodes hold (gr_mem_usable) */
};

static int is_leaf(const void *node) { return *(const uint8_t *)node; }

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

static zs_leaf_t *leaf_new(gr_zset_t *z, size_t capacity) {
    zs_leaf_t *leaf = tree_alloc(z, sizeof *leaf + capacity);
    if (!leaf) return NULL;
    leaf->is_leaf = 1;
    leaf->count = 0;
    leaf->used = 0;
    leaf->capacity = (uint32_t)capacity;
    return leaf;
}

static zs_leaf_t *leaf_resize(gr_zset_t *z, zs_leaf_t *leaf, size_t capacity) {
    size_t before = gr_mem_usable(leaf);
    zs_leaf_t *grown = gr_mem_realloc(leaf, sizeof *leaf + capacity, GR_MEM_ZSET);
    if (!grown) return NULL;
    z->tree_bytes = z->tree_bytes - before + gr_mem_usable(grown);
    grown->capacity = (uint32_t)capacity;
    return grown;
}

/* ---- entries ---- */

static const uint8_t *entry_decode(const uint8_t *p, gr_zset_entry_t *e) {
    memcpy(&e->score, p, sizeof e->score);
    size_t length;
    p = varint_get(p + sizeof e->score, &length);
    e->member = p;
    e->member_length = length;
    return p + length;
}

static size_t entry_size(size_t member_length) { return sizeof(double) + varint_size(member_length) + member_length; }

static int bytes_cmp(const uint8_t *a, size_t an, const uint8_t *b, size_t bn) {
    int c = memcmp(a, b, an < bn ? an : bn);
    if (c) return c;
    return an < bn ? -1 : an > bn;
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
    const uint8_t *p = leaf->data;
    for (uint32_t i = 0; i < leaf->count; i++) p = entry_decode(p, e);
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
    uint32_t i = 0;
    while (i + 1 < in->count && child_below(in, i, s, m, ml)) {
        if (rank) *rank += in->counts[i];
        i++;
    }
    return i;
}

/* ---- lifecycle ---- */

gr_zset_t *gr_zset_new(void) {
    gr_zset_t *z = gr_mem_alloc(sizeof *z, GR_MEM_ZSET);
    if (!z) return NULL;
    memset(z, 0, sizeof *z);
    z->root = leaf_new(z, 0);
    if (!z->root) {
        gr_mem_free(z, GR_MEM_ZSET);
        return NULL;
    }
    return z;
}

static void node_free(gr_zset_t *z, void *node) {
    if (!is_leaf(node)) {
        zs_inner_t *in = node;
        for (uint32_t i = 0; i < in->count; i++) node_free(z, in->child[i]);
    }
    tree_free(z, node);
}

void gr_zset_free(gr_zset_t *z) {
    if (!z) return;
    node_free(z, z->root);
    gr_table_free(z->index);
    gr_mem_free(z, GR_MEM_ZSET);
}

size_t gr_zset_count(const gr_zset_t *z) { return z->count; }
int gr_zset_is_compact(const gr_zset_t *z) { return z->index == NULL; }
const char *gr_zset_encoding_name(const gr_zset_t *z) { return z->index ? "skiplist" : "listpack"; }

size_t gr_zset_allocated_bytes(const gr_zset_t *z) {
    return gr_mem_usable(z) + z->tree_bytes + (z->index ? gr_table_allocated_bytes(z->index) : 0);
}

/* ---- insert ---- */

/* Split a leaf past GR_ZSET_LEAF_ENTRIES: its upper half moves to a new right sibling
 * (returned), or NULL when that could not be allocated (the leaf then stays large). */
static zs_leaf_t *leaf_split(gr_zset_t *z, zs_leaf_t *leaf) {
    uint32_t keep = leaf->count / 2;
    const uint8_t *p = leaf->data;
    gr_zset_entry_t e;
    for (uint32_t i = 0; i < keep; i++) p = entry_decode(p, &e);
    size_t offset = (size_t)(p - leaf->data);
    size_t moved = leaf->used - offset;
    zs_leaf_t *right = leaf_new(z, moved + moved / 4);
    if (!right) return NULL;
    memcpy(right->data, p, moved);
    right->used = (uint32_t)moved;
    right->count = leaf->count - keep;
    leaf->used = (uint32_t)offset;
    leaf->count = keep;
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
    size_t need = entry_size(ml);
    if (leaf->used + need > leaf->capacity) {
        size_t capacity = leaf->used + need;
        capacity += capacity / 4;
        zs_leaf_t *grown = leaf_resize(z, leaf, capacity);
        if (!grown) return -1;
        *slot = leaf = grown;
    }
    uint8_t *p = leaf->data, *end = leaf->data + leaf->used;
    while (p < end) {
        gr_zset_entry_t e;
        const uint8_t *next = entry_decode(p, &e);
        if (key_cmp(s, m, ml, &e) < 0) break;
        p = (uint8_t *)next;
    }
    memmove(p + need, p, (size_t)(end - p));
    memcpy(p, &s, sizeof s);
    uint8_t *q = varint_put(p + sizeof s, ml);
    memcpy(q, m, ml);
    leaf->used += (uint32_t)need;
    leaf->count++;
    if (z->index && leaf->count > GR_ZSET_LEAF_ENTRIES) *split = leaf_split(z, leaf);
    return 0;
}

static int tree_insert(gr_zset_t *z, double s, const uint8_t *m, size_t ml) {
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
                z->root = grown;
            } else {
                zs_inner_t *left = z->root, *right = split;
                memcpy(left->counts + left->count, right->counts, right->count * sizeof left->counts[0]);
                memcpy(left->max + left->count, right->max, right->count * sizeof left->max[0]);
                memcpy(left->child + left->count, right->child, right->count * sizeof left->child[0]);
                left->count += right->count;
            }
            tree_free(z, split);
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
    uint8_t *p = leaf->data, *end = leaf->data + leaf->used;
    while (p < end) {
        gr_zset_entry_t e;
        uint8_t *next = (uint8_t *)entry_decode(p, &e);
        int c = key_cmp(s, m, ml, &e);
        if (c < 0) return 0;
        if (c == 0) {
            memmove(p, next, (size_t)(end - next));
            leaf->used -= (uint32_t)(next - p);
            leaf->count--;
            if (leaf->count == 0 && !keep) {
                tree_free(z, leaf);
                *slot = NULL;
            } else if (leaf->capacity > 64 && leaf->used < leaf->capacity / 2) {
                zs_leaf_t *shrunk = leaf_resize(z, leaf, leaf->used + leaf->used / 4);
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
        p = entry_decode(p, &e);
        if (e.member_length == ml && memcmp(e.member, m, ml) == 0) {
            if (score) *score = e.score;
            if (rank) *rank = i;
            return 1;
        }
    }
    return 0;
}

int gr_zset_score(const gr_zset_t *z, const uint8_t *m, size_t ml, double *score) {
    if (!z->index) return compact_find(z, m, ml, score, NULL);
    gr_bytes_t value;
    if (!gr_table_get(z->index, m, ml, &value)) return 0;
    if (score) memcpy(score, value.data, sizeof *score);
    return 1;
}

static int convert_to_standard(gr_zset_t *z) {
    gr_zset_t fresh = {0};
    fresh.index = gr_table_new(1, GR_MEM_ZSET);
    fresh.root = leaf_new(&fresh, 0);
    if (!fresh.index || !fresh.root) goto oom;
    gr_table_reserve(fresh.index, z->count + 1);
    const zs_leaf_t *leaf = z->root;
    const uint8_t *p = leaf->data;
    for (uint32_t i = 0; i < leaf->count; i++) {
        gr_zset_entry_t e;
        p = entry_decode(p, &e);
        if (gr_table_set(fresh.index, e.member, e.member_length, (const uint8_t *)&e.score, sizeof e.score) < 0 ||
            tree_insert(&fresh, e.score, e.member, e.member_length) != 0)
            goto oom;
    }
    node_free(z, z->root);
    z->root = fresh.root;
    z->index = fresh.index;
    z->tree_bytes += fresh.tree_bytes;
    return 0;
oom:
    if (fresh.root) node_free(&fresh, fresh.root);
    gr_table_free(fresh.index);
    return -1;
}

int gr_zset_set(gr_zset_t *z, const uint8_t *m, size_t ml, double score, const gr_zset_limits_t *limits) {
    double old;
    if (gr_zset_score(z, m, ml, &old)) {
        if (old == score) return 0;   /* -0.0 and 0.0 too, as Redis's zsetAdd */
        if (!z->index && score == 0) score = 0.0;   /* a listpack stores -0 as the integer 0 */
        if (tree_insert(z, score, m, ml) != 0) return -1;
        tree_delete(z, old, m, ml);
        if (z->index) {
            gr_bytes_t value;
            gr_table_get(z->index, m, ml, &value);
            memcpy((uint8_t *)value.data, &score, sizeof score);   /* in place: same length */
        }
        return 0;
    }
    if (!z->index && (ml > (uint64_t)limits->max_compact_value ||
                      (int64_t)z->count + 1 > limits->max_compact_entries)) {
        if (convert_to_standard(z) != 0) return -1;
    }
    if (!z->index && score == 0) score = 0.0;   /* a listpack stores -0 as the integer 0 */
    if (z->index && gr_table_set(z->index, m, ml, (const uint8_t *)&score, sizeof score) < 0) return -1;
    if (tree_insert(z, score, m, ml) != 0) {
        if (z->index) gr_table_delete(z->index, m, ml);
        return -1;
    }
    return 1;
}

int gr_zset_delete(gr_zset_t *z, const uint8_t *m, size_t ml) {
    double score;
    if (!gr_zset_score(z, m, ml, &score)) return 0;
    tree_delete(z, score, m, ml);
    if (z->index) gr_table_delete(z->index, m, ml);
    return 1;
}

/* ---- queries ---- */

int64_t gr_zset_rank(const gr_zset_t *z, const uint8_t *m, size_t ml, double *score_out) {
    double s;
    if (!z->index) {
        size_t rank;
        if (!compact_find(z, m, ml, score_out, &rank)) return -1;
        return (int64_t)rank;
    }
    if (!gr_zset_score(z, m, ml, &s)) return -1;
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
        p = entry_decode(p, &e);
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
    const uint8_t *p = leaf->data;
    for (size_t i = 0; i <= index; i++) p = entry_decode(p, entry);
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
        p = entry_decode(p, &e);
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
        uint32_t i = 0;
        for (; i < in->count; i++) {
            gr_zset_entry_t last;
            node_last(in->child[i], &last);
            if (!member_below(&last, m, ml, inclusive)) break;
            rank += in->counts[i];
        }
        if (i == in->count) return rank;
        node = in->child[i];
    }
    const zs_leaf_t *leaf = node;
    const uint8_t *p = leaf->data;
    for (uint32_t i = 0; i < leaf->count; i++) {
        gr_zset_entry_t e;
        p = entry_decode(p, &e);
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
        const uint8_t *p = leaf->data;
        gr_zset_entry_t skip;
        for (size_t i = 0; i < index; i++) p = entry_decode(p, &skip);
        iter->leaf = leaf;
        iter->leaf_index = index;
        iter->position = p;
    }
    iter->position = entry_decode(iter->position, entry);
    iter->leaf_index++;
    iter->rank++;
    return 1;
}

typedef struct scan_context {
    gr_zset_visit_t visit;
    void *context;
} scan_context_t;

static void scan_visit(void *context, gr_bytes_t key, gr_bytes_t value) {
    scan_context_t *c = context;
    gr_zset_entry_t e = {key.data, key.length, 0};
    memcpy(&e.score, value.data, sizeof e.score);
    c->visit(c->context, &e);
}

uint64_t gr_zset_scan(const gr_zset_t *z, uint64_t cursor, size_t count, gr_zset_visit_t visit, void *context) {
    if (z->index) {
        scan_context_t c = {visit, context};
        return gr_table_scan(z->index, cursor, count, scan_visit, &c);
    }
    gr_zset_iter_t iter;
    gr_zset_entry_t e;
    gr_zset_iter_start(z, 0, &iter);
    while (gr_zset_iter_next(&iter, &e)) visit(context, &e);
    return 0;
}

gr_zset_t *gr_zset_duplicate(const gr_zset_t *z) {
    gr_zset_t *copy = gr_zset_new();
    if (!copy) return NULL;
    gr_zset_limits_t limits = z->index ? (gr_zset_limits_t){0, 0} : (gr_zset_limits_t){INT64_MAX, INT64_MAX};
    gr_zset_iter_t iter;
    gr_zset_entry_t e;
    gr_zset_iter_start(z, 0, &iter);
    while (gr_zset_iter_next(&iter, &e)) {
        if (gr_zset_set(copy, e.member, e.member_length, e.score, &limits) < 0) {
            gr_zset_free(copy);
            return NULL;
        }
    }
    if (z->index && !copy->index && convert_to_standard(copy) != 0) {
        gr_zset_free(copy);
        return NULL;
    }
    return copy;
}

/* ---- self-check (tests) ---- */

static long check_node(const gr_zset_t *z, const void *node, gr_zset_entry_t *previous, int *have_previous) {
    if (is_leaf(node)) {
        const zs_leaf_t *leaf = node;
        if (leaf->used > leaf->capacity) return -1;
        const uint8_t *p = leaf->data;
        for (uint32_t i = 0; i < leaf->count; i++) {
            gr_zset_entry_t e;
            p = entry_decode(p, &e);
            if (*have_previous && key_cmp(e.score, e.member, e.member_length, previous) <= 0) return -1;
            if (z->index) {
                gr_bytes_t value;
                double s;
                if (!gr_table_get(z->index, e.member, e.member_length, &value)) return -1;
                memcpy(&s, value.data, sizeof s);
                if (s != e.score) return -1;
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
    if (z->index && gr_table_count(z->index) != z->count) return -1;
    return 0;
}
