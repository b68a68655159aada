/* array_rt.c — the RT sparse-array engine: a fixed-depth radix directory over fixed-size
 * dense leaves and a value arena that grows 2x by chunks without moving; or, reserved, one
 * prefaulted (optionally mlocked) block that is never grown. The layout and the rules are in
 * array_rt.h; engines/array/array.c wraps this engine behind the array ops table.
 */
#include "engines/array/array_rt.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define LEAF_BITS 8
#define LEAF_SLOTS 256u
#define NODE_BITS 8
#define NODE_FANOUT 256u
#define FULL_LEVELS 7                 /* 64 - 8 leaf bits = 56 bits = 7 node levels */
#define ARENA_BASE 4096ull            /* chunk k holds B << k bytes at B * (2^k - 1) */
#define ARENA_CHUNKS 24
#define SMALL_CLASS_MAX 512u
#define SMALL_CLASSES 64              /* 8, 16, ..., 512 */
#define BIG_CLASSES 23                /* 1024 .. 2^32 */
#define CLASS_COUNT (SMALL_CLASSES + BIG_CLASSES)

typedef struct art_slot {
    uint32_t length;
    uint32_t offset8;   /* arena offset / 8 */
} art_slot_t;

typedef struct art_leaf {
    uint64_t present[4];
    uint32_t count;
    uint32_t unused;
    art_slot_t slot[LEAF_SLOTS];
} art_leaf_t;

typedef struct art_node {
    uint64_t occupied[4];   /* bit d: child d's subtree holds a value */
    void *child[NODE_FANOUT];
} art_node_t;

struct gr_art {
    gr_mem_category_t category;
    uint32_t levels;
    int reserved;
    int locked;
    uint64_t max_index;
    uint64_t count;
    void *root;                       /* a node when levels > 0, else the one leaf */
    /* the last leaf reached: (index >> 8) of its first slot, and the leaf */
    uint64_t cache_key;
    art_leaf_t *cache_leaf;
    /* arena */
    uint8_t *chunk[ARENA_CHUNKS];     /* reserved: chunk[0] is the budget inside the block */
    uint32_t chunk_top;               /* the chunk the bump pointer is in */
    uint64_t bump;                    /* the next unused arena offset */
    uint64_t arena_capacity;          /* bytes of the chunks allocated (the budget when reserved) */
    uint64_t free_head[CLASS_COUNT];  /* arena offset + 1 of a free block of the class; 0 none */
    uint64_t free_count[CLASS_COUNT];
    uint64_t live_bytes;              /* sum of the values' lengths */
    uint64_t in_use;                  /* sum of the values' capacities */
    uint64_t leaves, nodes;
    size_t allocated;                 /* usable bytes of everything held */
    /* reserved */
    uint8_t *block;
    size_t block_size;
    uint64_t value_budget;            /* as asked: gr_art_reserve's value_bytes */
    size_t locked_bytes;
};

static int last_errno;
static uint64_t total_reserved_bytes, total_locked_bytes, total_reserved_used;

int gr_art_last_errno(void) { return last_errno; }
uint64_t gr_art_total_reserved_bytes(void) { return total_reserved_bytes; }
uint64_t gr_art_total_locked_bytes(void) { return total_locked_bytes; }
uint64_t gr_art_total_reserved_used_bytes(void) { return total_reserved_used; }

int64_t gr_art_process_locked_bytes(void) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    long long kib = -1;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "VmLck: %lld", &kib) == 1) break;
    fclose(f);
    return kib < 0 ? -1 : (int64_t)kib * 1024;
}

/* ---- value classes and the arena ---------------------------------------------------------- */

static inline uint64_t value_capacity(uint64_t length) {
    if (length == 0) return 0;
    if (length <= SMALL_CLASS_MAX) return (length + 7) & ~7ull;
    return 1ull << (64 - __builtin_clzll(length - 1));
}

static inline unsigned class_of_capacity(uint64_t capacity) {
    if (capacity <= SMALL_CLASS_MAX) return (unsigned)(capacity / 8 - 1);
    return SMALL_CLASSES + (unsigned)(63 - __builtin_clzll(capacity)) - 10;
}

static inline uint8_t *arena_at(const gr_art_t *a, uint64_t offset) {
    if (a->reserved) return a->chunk[0] + offset;
    const unsigned k = 63 - (unsigned)__builtin_clzll(offset / ARENA_BASE + 1);
    return a->chunk[k] + (offset - ARENA_BASE * ((1ull << k) - 1));
}

static void *counted_alloc(gr_art_t *a, size_t size) {
    void *p = gr_mem_alloc(size, a->category);
    if (p) a->allocated += gr_mem_usable(p);
    else last_errno = ENOMEM;
    return p;
}

static void counted_free(gr_art_t *a, void *p) {
    if (!p) return;
    a->allocated -= gr_mem_usable(p);
    gr_mem_free(p, a->category);
}

/* Space for a value of this capacity (> 0): its offset, or -1 with the error in *error. */
static int64_t arena_take_space(gr_art_t *a, uint64_t capacity, int *error);

static int64_t arena_take(gr_art_t *a, uint64_t capacity, int *error) {
    const int64_t offset = arena_take_space(a, capacity, error);
    if (offset >= 0) {
        a->in_use += capacity;
        if (a->reserved) total_reserved_used += capacity;
    }
    return offset;
}

static int64_t arena_take_space(gr_art_t *a, uint64_t capacity, int *error) {
    const unsigned c = class_of_capacity(capacity);
    if (a->free_head[c]) {
        const uint64_t offset = a->free_head[c] - 1;
        memcpy(&a->free_head[c], arena_at(a, offset), sizeof(uint64_t));
        a->free_count[c]--;
        return (int64_t)offset;
    }
    if (a->reserved) {
        if (capacity > a->arena_capacity - a->bump) { *error = GR_ART_BYTES_BOUND; return -1; }
        const uint64_t offset = a->bump;
        a->bump += capacity;
        return (int64_t)offset;
    }
    unsigned k = a->chunk_top;
    uint64_t end = ARENA_BASE * ((2ull << k) - 1);
    if (a->chunk[k] == NULL || a->bump + capacity > end) {
        if (a->chunk[k] != NULL) k++;
        while (k < ARENA_CHUNKS && (ARENA_BASE << k) < capacity) k++;
        if (k >= ARENA_CHUNKS) { *error = GR_ART_BYTES_BOUND; return -1; }
        if (a->chunk[k] == NULL) {
            uint8_t *chunk = counted_alloc(a, (size_t)(ARENA_BASE << k));
            if (!chunk) { *error = GR_ART_OOM; return -1; }
            a->chunk[k] = chunk;
            a->arena_capacity += ARENA_BASE << k;
        }
        a->chunk_top = k;
        a->bump = ARENA_BASE * ((1ull << k) - 1);
    }
    const uint64_t offset = a->bump;
    a->bump += capacity;
    return (int64_t)offset;
}

static void arena_give(gr_art_t *a, uint64_t offset, uint64_t capacity) {
    if (capacity == 0) return;
    a->in_use -= capacity;
    if (a->reserved) total_reserved_used -= capacity;
    const unsigned c = class_of_capacity(capacity);
    memcpy(arena_at(a, offset), &a->free_head[c], sizeof(uint64_t));
    a->free_head[c] = offset + 1;
    a->free_count[c]++;
}

/* ---- the directory ------------------------------------------------------------------------- */

static inline unsigned digit(uint64_t index, uint32_t level) {   /* level 1 = above the leaves */
    return (unsigned)(index >> (LEAF_BITS + NODE_BITS * (level - 1))) & (NODE_FANOUT - 1);
}

static inline void bit_set(uint64_t *words, unsigned bit) { words[bit >> 6] |= 1ull << (bit & 63); }
static inline void bit_clear(uint64_t *words, unsigned bit) { words[bit >> 6] &= ~(1ull << (bit & 63)); }
static inline int bit_test(const uint64_t *words, unsigned bit) { return (int)((words[bit >> 6] >> (bit & 63)) & 1); }
static inline int bits_any(const uint64_t *words) { return (words[0] | words[1] | words[2] | words[3]) != 0; }

static art_leaf_t *find_leaf(const gr_art_t *a, uint64_t index) {
    const uint64_t key = index >> LEAF_BITS;
    if (a->cache_leaf && a->cache_key == key) return a->cache_leaf;
    void *p = a->root;
    for (uint32_t level = a->levels; level > 0 && p; level--) p = ((art_node_t *)p)->child[digit(index, level)];
    if (p) {
        gr_art_t *cache = (gr_art_t *)a;   /* the cache is not part of the value */
        cache->cache_key = key;
        cache->cache_leaf = p;
    }
    return p;
}

/* Unreserved: the leaf of index, made with its missing nodes; NULL on OOM with nothing made. */
static art_leaf_t *make_leaf(gr_art_t *a, uint64_t index) {
    void **made[FULL_LEVELS + 1];
    int made_count = 0;
    void **where = &a->root;
    for (uint32_t level = a->levels; level > 0; level--) {
        if (*where == NULL) {
            art_node_t *node = counted_alloc(a, sizeof(art_node_t));
            if (!node) goto undo;
            memset(node, 0, sizeof(*node));
            *where = node;
            made[made_count++] = where;
            a->nodes++;
        }
        where = &((art_node_t *)*where)->child[digit(index, level)];
    }
    if (*where == NULL) {
        art_leaf_t *leaf = counted_alloc(a, sizeof(art_leaf_t));
        if (!leaf) goto undo;
        memset(leaf, 0, offsetof(art_leaf_t, slot));
        *where = leaf;
        a->leaves++;
    }
    return *where;
undo:
    while (made_count > 0) {
        void **slot = made[--made_count];
        counted_free(a, *slot);
        *slot = NULL;
        a->nodes--;
    }
    return NULL;
}

/* A leaf went from empty to holding a value: mark its path. */
static void mark_path(gr_art_t *a, uint64_t index) {
    art_node_t *node = a->root;
    for (uint32_t level = a->levels; level > 0; level--) {
        const unsigned d = digit(index, level);
        bit_set(node->occupied, d);
        node = node->child[d];
    }
}

/* A leaf emptied: clear its path's bits bottom-up while nodes empty; unreserved, free the
 * leaf and every node that emptied. */
static void unmark_path(gr_art_t *a, uint64_t index) {
    art_node_t *path[FULL_LEVELS + 1];
    void *p = a->root;
    for (uint32_t level = a->levels; level > 0; level--) {
        path[level] = p;
        p = ((art_node_t *)p)->child[digit(index, level)];
    }
    if (!a->reserved) {
        if (a->cache_leaf == p) a->cache_leaf = NULL;
        counted_free(a, p);
        a->leaves--;
        if (a->levels == 0) a->root = NULL;
    }
    for (uint32_t level = 1; level <= a->levels; level++) {
        art_node_t *node = path[level];
        const unsigned d = digit(index, level);
        bit_clear(node->occupied, d);
        if (!a->reserved) node->child[d] = NULL;
        if (bits_any(node->occupied)) return;
        if (!a->reserved) {
            counted_free(a, node);
            a->nodes--;
            if (level == a->levels) a->root = NULL;
        }
    }
}

/* ---- lifecycle ----------------------------------------------------------------------------- */

gr_art_t *gr_art_new(gr_mem_category_t category) {
    gr_art_t *a = gr_mem_alloc(sizeof(gr_art_t), category);
    if (!a) { last_errno = ENOMEM; return NULL; }
    memset(a, 0, sizeof(*a));
    a->category = category;
    a->levels = FULL_LEVELS;
    a->max_index = GR_ART_MAX_INDEX;
    a->allocated = gr_mem_usable(a);
    return a;
}

static uint32_t levels_for(uint64_t max_index) {
    uint32_t levels = 0;
    uint64_t rest = max_index >> LEAF_BITS;
    while (rest) { rest >>= NODE_BITS; levels++; }
    return levels;
}

/* How many nodes sit at `level` (0 = leaves) of a reserved directory over 0 .. max_index. */
static uint64_t units_at(uint64_t max_index, uint32_t level) {
    const unsigned shift = LEAF_BITS + NODE_BITS * level;
    return (shift >= 64 ? 0 : max_index >> shift) + 1;
}

int gr_art_reserve(gr_mem_category_t category, uint64_t max_index, uint64_t value_bytes, int lock,
                   gr_art_t **out) {
    *out = NULL;
    if (max_index > GR_ART_MAX_INDEX || value_bytes > GR_ART_MAX_VALUE_BYTES) return GR_ART_TOO_LARGE;
    const uint32_t levels = levels_for(max_index);
    /* block: nodes of every level (top first), then the leaves, then the arena */
    uint64_t node_units = 0;
    for (uint32_t level = 1; level <= levels; level++) node_units += units_at(max_index, level);
    const uint64_t leaf_units = units_at(max_index, 0);
    const uint64_t arena_bytes = (value_bytes + 7) & ~7ull;
    uint64_t size = 0, part;
    if (__builtin_mul_overflow(node_units, (uint64_t)sizeof(art_node_t), &size) ||
        __builtin_mul_overflow(leaf_units, (uint64_t)sizeof(art_leaf_t), &part) ||
        __builtin_add_overflow(size, part, &size) || __builtin_add_overflow(size, arena_bytes, &size) ||
        size > ((uint64_t)SIZE_MAX >> 2) || size == 0)
        return GR_ART_TOO_LARGE;
    const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page_size > 0 && size > (uint64_t)pages * (uint64_t)page_size)
        return GR_ART_TOO_LARGE;   /* more than the machine has: refuse, never half-prefault */
    gr_art_t *a = gr_art_new(category);
    if (!a) return GR_ART_OOM;
    uint8_t *block = counted_alloc(a, (size_t)size);
    if (!block) { gr_art_free(a); return GR_ART_OOM; }
    /* prefault: write every page (memset alone may meet pages a calloc-like path left
     * unmapped-but-zero; the volatile stores cannot be elided) */
    memset(block, 0, (size_t)size);
    const long page = sysconf(_SC_PAGESIZE);
    for (uint64_t at = 0; at < size; at += (uint64_t)page) ((volatile uint8_t *)block)[at] = 0;
    if (lock) {
        if (mlock(block, (size_t)size) != 0) {
            last_errno = errno;
            counted_free(a, block);
            gr_art_free(a);
            return GR_ART_LOCK_FAILED;
        }
        const uintptr_t first = (uintptr_t)block & ~((uintptr_t)page - 1);
        const uintptr_t end = ((uintptr_t)block + size + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
        a->locked = 1;
        a->locked_bytes = end - first;
    }
    a->reserved = 1;
    a->levels = levels;
    a->max_index = max_index;
    a->block = block;
    a->block_size = (size_t)size;
    a->value_budget = value_bytes;
    a->leaves = leaf_units;
    a->nodes = node_units;
    /* wire the directory: level l's unit j has children j*256 .. of level l - 1 */
    uint8_t *at = block;
    void *above = NULL;
    uint64_t above_units = 0;
    for (uint32_t level = levels; ; level--) {
        const uint64_t units = units_at(max_index, level);
        const size_t unit_size = level ? sizeof(art_node_t) : sizeof(art_leaf_t);
        if (above) {
            art_node_t *parents = above;
            for (uint64_t j = 0; j < units; j++) parents[j / NODE_FANOUT].child[j % NODE_FANOUT] = at + j * unit_size;
        } else {
            a->root = at;
        }
        (void)above_units;
        above = at;
        above_units = units;
        at += units * unit_size;
        if (level == 0) break;
    }
    a->chunk[0] = at;
    a->arena_capacity = arena_bytes;
    total_reserved_bytes += a->block_size;
    total_locked_bytes += a->locked_bytes;
    *out = a;
    return GR_ART_OK;
}

static void free_subtree(gr_art_t *a, void *p, uint32_t level) {
    if (level > 0) {
        art_node_t *node = p;
        for (unsigned d = 0; d < NODE_FANOUT; d++)
            if (node->child[d]) free_subtree(a, node->child[d], level - 1);
    }
    counted_free(a, p);
}

void gr_art_free(gr_art_t *a) {
    if (!a) return;
    if (a->reserved) {
        if (a->locked) munlock(a->block, a->block_size);
        total_reserved_bytes -= a->block_size;
        total_locked_bytes -= a->locked_bytes;
        total_reserved_used -= a->in_use;
        counted_free(a, a->block);
    } else {
        if (a->root) free_subtree(a, a->root, a->levels);
        for (unsigned k = 0; k < ARENA_CHUNKS; k++) counted_free(a, a->chunk[k]);
    }
    gr_mem_free(a, a->category);
}

/* ---- access -------------------------------------------------------------------------------- */

int gr_art_set(gr_art_t *a, uint64_t index, const uint8_t *value, size_t length, int *created) {
    if (created) *created = 0;
    if (index > a->max_index) return GR_ART_INDEX_BOUND;
    if (length > UINT32_MAX) return GR_ART_BYTES_BOUND;
    const unsigned bit = (unsigned)(index & (LEAF_SLOTS - 1));
    art_leaf_t *leaf = find_leaf(a, index);
    const int existed = leaf && bit_test(leaf->present, bit);
    const uint64_t capacity = value_capacity(length);
    if (existed && value_capacity(leaf->slot[bit].length) == capacity) {   /* in place */
        if (length) memmove(arena_at(a, (uint64_t)leaf->slot[bit].offset8 * 8), value, length);
        a->live_bytes += length;
        a->live_bytes -= leaf->slot[bit].length;
        leaf->slot[bit].length = (uint32_t)length;
        return GR_ART_OK;
    }
    int error = GR_ART_OK;
    int64_t offset = 0;
    if (capacity) {
        offset = arena_take(a, capacity, &error);
        if (offset < 0) return error;
    }
    if (!leaf) {
        leaf = make_leaf(a, index);   /* only unreserved arrays miss a leaf */
        if (!leaf) {
            arena_give(a, (uint64_t)offset, capacity);
            return GR_ART_OOM;
        }
        a->cache_key = index >> LEAF_BITS;
        a->cache_leaf = leaf;
    }
    if (length) memcpy(arena_at(a, (uint64_t)offset), value, length);
    art_slot_t *slot = &leaf->slot[bit];
    if (existed) {
        arena_give(a, (uint64_t)slot->offset8 * 8, value_capacity(slot->length));
        a->live_bytes -= slot->length;
    } else {
        bit_set(leaf->present, bit);
        a->count++;
        if (leaf->count++ == 0) mark_path(a, index);
        if (created) *created = 1;
    }
    slot->length = (uint32_t)length;
    slot->offset8 = (uint32_t)((uint64_t)offset / 8);
    a->live_bytes += length;
    return GR_ART_OK;
}

typedef struct run_of_writes {
    const uint64_t *indexes;
    uint64_t first_index;
    const size_t *lengths;
} run_of_writes_t;

static void run_write_at(void *context, size_t i, uint64_t *index, size_t *length) {
    const run_of_writes_t *run = context;
    *index = run->indexes ? run->indexes[i] : run->first_index + i;
    *length = run->lengths[i];
}

int gr_art_check_writes(const gr_art_t *a, size_t n, const uint64_t *indexes, uint64_t first_index,
                        const size_t *lengths) {
    if (n && !indexes && (first_index > a->max_index || n - 1 > a->max_index - first_index))
        return GR_ART_INDEX_BOUND;
    run_of_writes_t run = {indexes, first_index, lengths};
    return gr_art_check_writes_by(a, n, run_write_at, &run);
}

int gr_art_check_writes_by(const gr_art_t *a, size_t n, void (*write_at)(void *context, size_t i, uint64_t *index,
                           size_t *length), void *context) {
    uint64_t spare[CLASS_COUNT];
    uint64_t room = 0;
    if (a->reserved) {
        memcpy(spare, a->free_count, sizeof(spare));
        room = a->arena_capacity - a->bump;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t index;
        size_t length;
        write_at(context, i, &index, &length);
        if (index > a->max_index) return GR_ART_INDEX_BOUND;
        if (length > UINT32_MAX) return GR_ART_BYTES_BOUND;
        if (!a->reserved) continue;
        const uint64_t capacity = value_capacity(length);
        const uint8_t *old;
        size_t old_length;
        const int existed = gr_art_get(a, index, &old, &old_length);
        const uint64_t old_capacity = existed ? value_capacity(old_length) : 0;
        if (existed && old_capacity == capacity) continue;
        if (capacity) {
            const unsigned c = class_of_capacity(capacity);
            if (spare[c]) spare[c]--;
            else if (room >= capacity) room -= capacity;
            else return GR_ART_BYTES_BOUND;
        }
        if (old_capacity) spare[class_of_capacity(old_capacity)]++;
    }
    return GR_ART_OK;
}

int gr_art_get(const gr_art_t *a, uint64_t index, const uint8_t **value, size_t *length) {
    if (index > a->max_index) return 0;
    const art_leaf_t *leaf = find_leaf(a, index);
    const unsigned bit = (unsigned)(index & (LEAF_SLOTS - 1));
    if (!leaf || !bit_test(leaf->present, bit)) return 0;
    *length = leaf->slot[bit].length;
    *value = *length ? arena_at(a, (uint64_t)leaf->slot[bit].offset8 * 8) : (const uint8_t *)"";
    return 1;
}

int gr_art_delete(gr_art_t *a, uint64_t index) {
    if (index > a->max_index) return 0;
    art_leaf_t *leaf = find_leaf(a, index);
    const unsigned bit = (unsigned)(index & (LEAF_SLOTS - 1));
    if (!leaf || !bit_test(leaf->present, bit)) return 0;
    art_slot_t *slot = &leaf->slot[bit];
    arena_give(a, (uint64_t)slot->offset8 * 8, value_capacity(slot->length));
    a->live_bytes -= slot->length;
    bit_clear(leaf->present, bit);
    a->count--;
    if (--leaf->count == 0) unmark_path(a, index);
    return 1;
}

uint64_t gr_art_delete_range(gr_art_t *a, uint64_t first, uint64_t last) {
    uint64_t removed = 0, at = first, found;
    while (at <= last && gr_art_next(a, at, &found) && found <= last) {
        removed += (uint64_t)gr_art_delete(a, found);
        if (found == last) break;
        at = found + 1;
    }
    return removed;
}

/* ---- queries ------------------------------------------------------------------------------- */

uint64_t gr_art_count(const gr_art_t *a) { return a->count; }
int gr_art_is_reserved(const gr_art_t *a) { return a->reserved; }
uint64_t gr_art_max_index(const gr_art_t *a) { return a->max_index; }
size_t gr_art_allocated_bytes(const gr_art_t *a) { return a->allocated; }

/* The first set bit >= from in a 256-bit map, or -1. */
static int first_bit_from(const uint64_t *words, unsigned from) {
    for (unsigned w = from >> 6; w < 4; w++) {
        uint64_t bits = words[w];
        if (w == from >> 6) bits &= ~0ull << (from & 63);
        if (bits) return (int)(w * 64 + (unsigned)__builtin_ctzll(bits));
    }
    return -1;
}

/* The last set bit <= at in a 256-bit map, or -1. */
static int last_bit_to(const uint64_t *words, unsigned at) {
    for (int w = (int)(at >> 6); w >= 0; w--) {
        uint64_t bits = words[w];
        if ((unsigned)w == at >> 6 && (at & 63) != 63) bits &= (2ull << (at & 63)) - 1;
        if (bits) return w * 64 + 63 - __builtin_clzll(bits);
    }
    return -1;
}

/* In the subtree p at level (0 = a leaf) whose first index is base: the first set index >=
 * from (from >= base, inside the subtree). */
static int next_in(const void *p, uint32_t level, uint64_t base, uint64_t from, uint64_t *found) {
    if (level == 0) {
        const int bit = first_bit_from(((const art_leaf_t *)p)->present, (unsigned)(from - base));
        if (bit < 0) return 0;
        *found = base + (uint64_t)bit;
        return 1;
    }
    const art_node_t *node = p;
    const unsigned shift = LEAF_BITS + NODE_BITS * (level - 1);
    const unsigned first = (unsigned)((from - base) >> shift);
    for (int d = first_bit_from(node->occupied, first); d >= 0;
         d = (d + 1 < (int)NODE_FANOUT) ? first_bit_from(node->occupied, (unsigned)d + 1) : -1) {
        const uint64_t child_base = base + ((uint64_t)d << shift);
        if (next_in(node->child[d], level - 1, child_base, (unsigned)d == first ? from : child_base, found)) return 1;
    }
    return 0;
}

static int prev_in(const void *p, uint32_t level, uint64_t base, uint64_t at, uint64_t *found) {
    if (level == 0) {
        const int bit = last_bit_to(((const art_leaf_t *)p)->present, (unsigned)(at - base));
        if (bit < 0) return 0;
        *found = base + (uint64_t)bit;
        return 1;
    }
    const art_node_t *node = p;
    const unsigned shift = LEAF_BITS + NODE_BITS * (level - 1);
    const unsigned last = (unsigned)((at - base) >> shift);
    for (int d = last_bit_to(node->occupied, last); d >= 0; d = d > 0 ? last_bit_to(node->occupied, (unsigned)d - 1) : -1) {
        const uint64_t child_base = base + ((uint64_t)d << shift);
        const uint64_t child_last = child_base + ((1ull << shift) - 1);   /* shift <= 56 */
        if (prev_in(node->child[d], level - 1, child_base, (unsigned)d == last ? at : child_last, found)) return 1;
    }
    return 0;
}

int gr_art_next(const gr_art_t *a, uint64_t from, uint64_t *found) {
    if (!a->root || a->count == 0 || from > a->max_index) return 0;
    return next_in(a->root, a->levels, 0, from, found);
}

int gr_art_prev(const gr_art_t *a, uint64_t at, uint64_t *found) {
    if (!a->root || a->count == 0) return 0;
    if (at > a->max_index) at = a->max_index;
    /* a reserved directory's top covers more than max_index; at stays inside it */
    return prev_in(a->root, a->levels, 0, at, found);
}

void gr_art_stats(const gr_art_t *a, gr_art_stats_t *out) {
    memset(out, 0, sizeof(*out));
    out->count = a->count;
    out->max_index = a->max_index;
    out->levels = a->levels;
    out->reserved = (uint32_t)a->reserved;
    out->leaves = a->leaves;
    out->nodes = a->nodes;
    out->value_bytes_live = a->live_bytes;
    out->arena_used = a->reserved ? a->bump : (a->arena_capacity ? a->bump : 0);
    out->arena_capacity = a->arena_capacity;
    out->arena_in_use = a->in_use;
    out->reserved_bytes = a->reserved ? a->block_size : 0;
    out->locked_bytes = a->locked_bytes;
    out->allocated_bytes = a->allocated;
}

/* ---- bulk ---------------------------------------------------------------------------------- */

gr_art_t *gr_art_duplicate(const gr_art_t *a) {
    gr_art_t *copy = NULL;
    if (a->reserved) {
        if (gr_art_reserve(a->category, a->max_index, a->value_budget, a->locked, &copy) != GR_ART_OK) return NULL;
    } else if (!(copy = gr_art_new(a->category))) {
        return NULL;
    }
    uint64_t at = 0, index;
    while (gr_art_next(a, at, &index)) {
        const uint8_t *value;
        size_t length;
        gr_art_get(a, index, &value, &length);
        if (gr_art_set(copy, index, value, length, NULL) != GR_ART_OK) { gr_art_free(copy); return NULL; }
        if (index == GR_ART_MAX_INDEX) break;
        at = index + 1;
    }
    return copy;
}

int gr_art_reserve_into(gr_art_t *a, uint64_t max_index, uint64_t value_bytes, int lock) {
    gr_art_t *fresh = NULL;
    const int status = gr_art_reserve(a->category, max_index, value_bytes, lock, &fresh);
    if (status != GR_ART_OK) return status;
    uint64_t at = 0, index;
    while (gr_art_next(a, at, &index)) {
        const uint8_t *value;
        size_t length;
        gr_art_get(a, index, &value, &length);
        const int set = gr_art_set(fresh, index, value, length, NULL);
        if (set != GR_ART_OK) { gr_art_free(fresh); return set; }
        if (index == GR_ART_MAX_INDEX) break;
        at = index + 1;
    }
    /* swap the contents: `a` keeps its address (the keyspace holds it), `fresh` takes the old
     * contents and frees them with its shell */
    const gr_art_t old = *a;
    *a = *fresh;
    *fresh = old;
    gr_art_free(fresh);
    return GR_ART_OK;
}

int gr_art_save(const gr_art_t *a, gr_snapshot_writer_t *out) {
    if (gr_snapshot_write_u8(out, (uint8_t)a->reserved)) return -1;
    if (a->reserved && (gr_snapshot_write_u64(out, a->max_index) || gr_snapshot_write_u64(out, a->value_budget) ||
                        gr_snapshot_write_u8(out, (uint8_t)a->locked)))
        return -1;
    if (gr_snapshot_write_varint(out, a->count)) return -1;
    uint64_t at = 0, index, previous = 0;
    int first = 1;
    while (gr_art_next(a, at, &index)) {
        const uint8_t *value;
        size_t length;
        gr_art_get(a, index, &value, &length);
        if (gr_snapshot_write_varint(out, first ? index : index - previous) ||
            gr_snapshot_write_bytes(out, value, length))
            return -1;
        first = 0;
        previous = index;
        if (index == GR_ART_MAX_INDEX) break;
        at = index + 1;
    }
    return 0;
}

gr_art_t *gr_art_load(gr_mem_category_t category, gr_snapshot_reader_t *in) {
    uint8_t kind;
    if (gr_snapshot_read_u8(in, &kind)) return NULL;
    gr_art_t *a = NULL;
    if (kind == 1) {
        uint64_t max_index, value_bytes;
        uint8_t lock;
        if (gr_snapshot_read_u64(in, &max_index) || gr_snapshot_read_u64(in, &value_bytes) ||
            gr_snapshot_read_u8(in, &lock))
            return NULL;
        if (max_index > GR_ART_MAX_INDEX || value_bytes > GR_ART_MAX_VALUE_BYTES || lock > 1) {
            gr_snapshot_reader_fail(in, "bad RT array reservation");
            return NULL;
        }
        if (gr_art_reserve(category, max_index, value_bytes, lock, &a) != GR_ART_OK) return NULL;
    } else if (kind == 0) {
        if (!(a = gr_art_new(category))) return NULL;
    } else {
        gr_snapshot_reader_fail(in, "bad RT array kind");
        return NULL;
    }
    uint64_t count, index = 0;
    if (gr_snapshot_read_count(in, 2, &count)) goto fail;
    for (uint64_t i = 0; i < count; i++) {
        uint64_t delta;
        const uint8_t *value;
        size_t length;
        if (gr_snapshot_read_varint(in, &delta) || gr_snapshot_read_bytes(in, &value, &length)) goto fail;
        if (i > 0 && (delta == 0 || delta > GR_ART_MAX_INDEX - index)) {
            gr_snapshot_reader_fail(in, "bad RT array index");
            goto fail;
        }
        index = i ? index + delta : delta;
        const int status = gr_art_set(a, index, value, length, NULL);
        if (status == GR_ART_INDEX_BOUND || status == GR_ART_BYTES_BOUND) {
            gr_snapshot_reader_fail(in, "RT array value outside its reservation");
            goto fail;
        }
        if (status != GR_ART_OK) goto fail;
    }
    return a;
fail:
    gr_art_free(a);
    return NULL;
}

/* ---- checks -------------------------------------------------------------------------------- */

typedef struct check_totals {
    uint64_t count, live, in_use, leaves, nodes;
    const char *problem;
} check_totals_t;

static int check_subtree(const gr_art_t *a, const void *p, uint32_t level, check_totals_t *t) {
    if (level == 0) {
        const art_leaf_t *leaf = p;
        uint32_t population = 0;
        for (unsigned b = 0; b < LEAF_SLOTS; b++) {
            if (!bit_test(leaf->present, b)) continue;
            population++;
            t->live += leaf->slot[b].length;
            t->in_use += value_capacity(leaf->slot[b].length);
            const uint64_t end = (uint64_t)leaf->slot[b].offset8 * 8 + value_capacity(leaf->slot[b].length);
            if (leaf->slot[b].length && end > (a->reserved ? a->arena_capacity : a->bump + ARENA_BASE * (1ull << ARENA_CHUNKS)))
                t->problem = "a slot points past the arena";
        }
        if (population != leaf->count) t->problem = "a leaf's count differs from its bitmap";
        t->count += population;
        t->leaves++;
        if (!a->reserved && population == 0) t->problem = "an unreserved array kept an empty leaf";
        return population > 0;
    }
    const art_node_t *node = p;
    t->nodes++;
    int any = 0;
    for (unsigned d = 0; d < NODE_FANOUT; d++) {
        if (!node->child[d]) {
            if (bit_test(node->occupied, d)) t->problem = "an occupied bit without a child";
            continue;
        }
        const int nonempty = check_subtree(a, node->child[d], level - 1, t);
        if (nonempty != bit_test(node->occupied, d)) t->problem = "an occupied bit differs from its subtree";
        any |= nonempty;
    }
    if (!a->reserved && !any) t->problem = "an unreserved array kept an empty node";
    return any;
}

const char *gr_art_check(const gr_art_t *a) {
    check_totals_t t = {0, 0, 0, 0, 0, NULL};
    if (a->root) check_subtree(a, a->root, a->levels, &t);
    if (t.problem) return t.problem;
    if (t.count != a->count) return "the count differs from the leaves'";
    if (t.live != a->live_bytes) return "live bytes differ from the slots'";
    if (t.in_use != a->in_use) return "arena bytes in use differ from the slots'";
    if (t.leaves != a->leaves || t.nodes != a->nodes) return "leaf or node counts differ";
    for (unsigned c = 0; c < CLASS_COUNT; c++) {
        uint64_t n = 0;
        for (uint64_t at = a->free_head[c]; at; n++) {
            if (n > a->free_count[c]) return "a free list is longer than its count";
            memcpy(&at, arena_at(a, at - 1), sizeof(at));
        }
        if (n != a->free_count[c]) return "a free list's count is wrong";
    }
    if (a->reserved && a->bump > a->arena_capacity) return "the bump pointer passed the budget";
    return NULL;
}
