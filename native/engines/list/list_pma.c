/* list_pma.c — the adaptive PMA list engine: an arena of length-prefixed values and a gapped
 * array of 4-byte slots in segments under a tree of window counts. The memory layout, the
 * density bounds, the invariants and the API are documented in list_pma.h; list.c is meant
 * to wrap it beside the segmented engine (list_seg.c).
 */
#include "engines/list/list_pma.h"

#include <stddef.h>
#include <string.h>
#ifdef GR_LPMA_DEBUG
#include <stdlib.h>
#endif

#include "core/alloc.h"
#include "core/varint.h"

#define S GR_LPMA_SEGMENT_SLOTS
#define FILL (S - S / 4)                  /* A(H): end pushes and packed layouts stop here */
#define ROOT_LOWER (S / 8 + (3 * S) / 16) /* B(H): shrink below this many values a segment */
#define MIN_ARENA 256u

_Static_assert(S % 16 == 0 && S <= 240, "segment size fits lo[] and the bound arithmetic");

#ifdef GR_LPMA_DEBUG
#define DEBUG_CHECK(p) do { if (gr_lpma_check(p)) abort(); } while (0)
#else
#define DEBUG_CHECK(p) do { (void)(p); } while (0)
#endif

/* ---- entries: [LEB128 length][bytes] ------------------------------------------------ */

static inline size_t entry_bytes(const gr_lpma_t *p, uint32_t offset) {
    size_t n;
    const uint8_t *q = varint_get(p->arena + offset, &n);
    return (size_t)(q - (p->arena + offset)) + n;
}

static inline void entry_read(const gr_lpma_t *p, uint32_t offset, const uint8_t **data, size_t *length) {
    *data = varint_get(p->arena + offset, length);
}

/* ---- the arena ---------------------------------------------------------------------- */

/* Room for `need` more bytes; -1 (nothing changed) when out of memory or past 32 bits. */
static int arena_reserve(gr_lpma_t *p, size_t need) {
    if (p->arena_used + need <= p->arena_capacity) return 0;
    size_t want = p->arena_used + need;
    if (want > UINT32_MAX) return -1;
    /* An eighth more each time: large arenas are mmap'd, and glibc grows those with mremap
     * without copying, so a small step costs little and wastes little. */
    size_t capacity = p->arena_capacity + p->arena_capacity / 8;
    if (capacity < want) capacity = want;
    if (capacity < MIN_ARENA) capacity = MIN_ARENA;
    if (capacity > UINT32_MAX) capacity = UINT32_MAX;
    uint8_t *grown = gr_mem_realloc(p->arena, capacity, GR_MEM_LIST);
    if (!grown) return -1;
    p->arena = grown;
    p->arena_capacity = capacity;
    return 0;
}

/* Appends an entry (room reserved) and returns its offset. */
static inline uint32_t arena_append(gr_lpma_t *p, const uint8_t *data, size_t length) {
    uint32_t offset = (uint32_t)p->arena_used;
    uint8_t *q = varint_put(p->arena + offset, length);
    if (length) memcpy(q, data, length);
    size_t bytes = (size_t)(q - (p->arena + offset)) + length;
    p->arena_used += bytes;
    p->live_bytes += bytes;
    return offset;
}

/* A value leaves the list: its bytes become dead, or are retracted when they are the last. */
static void entry_release(gr_lpma_t *p, uint32_t offset) {
    size_t bytes = entry_bytes(p, offset);
    p->live_bytes -= bytes;
    if (offset + bytes == p->arena_used) p->arena_used = offset;
}

/* ---- geometry ----------------------------------------------------------------------- */

/* Values in segment k: its tree leaf plus what is pending at the end(s) it is (signed, so
 * that gr_lpma_check can see a pending pop larger than its leaf). */
static inline int64_t signed_count_of(const gr_lpma_t *p, size_t k) {
    int64_t n = p->tree[p->nseg + k];
    if (k == p->first) n += p->head_pending;
    if (k == p->last) n += p->tail_pending;
    return n;
}
static inline uint32_t count_of(const gr_lpma_t *p, size_t k) { return (uint32_t)signed_count_of(p, k); }
/* A(h) and B(h), values a segment, tabulated when the height changes (the divisions cost
 * more than the rest of an end push). */
static inline uint32_t upper(const gr_lpma_t *p, uint32_t h) { return p->upper[h]; }
static inline uint32_t lower(const gr_lpma_t *p, uint32_t h) { return p->lower[h]; }
static void bounds_fill(gr_lpma_t *p) {
    for (uint32_t h = 0; h <= p->height; h++) {
        p->upper[h] = (uint8_t)(p->height ? S - (S / 4) * h / p->height : S);
        p->lower[h] = (uint8_t)(p->height ? S / 8 + ((3 * S / 16) * h + p->height - 1) / p->height : S / 8);
    }
}
static inline uint32_t node_height(const gr_lpma_t *p, size_t node) {
    return p->height - (uint32_t)(63 - __builtin_clzll((unsigned long long)node));
}
static inline size_t node_first(const gr_lpma_t *p, size_t node, uint32_t h) { return (node << h) - p->nseg; }
static inline int interior(const gr_lpma_t *p, size_t a, size_t m) {
    return a > p->first && a + m - 1 < p->last;
}

/* The segment holding index (< length), and the index's offset in it. The end segments are
 * found without the tree; below them the descent adds in the pendings of the windows that
 * hold an end segment. */
static size_t locate(const gr_lpma_t *p, size_t index, uint32_t *offset) {
    uint32_t head_count = count_of(p, p->first), tail_count = count_of(p, p->last);
    if (index < head_count) { *offset = (uint32_t)index; return p->first; }
    if (index >= p->length - tail_count) { *offset = (uint32_t)(index - (p->length - tail_count)); return p->last; }
    size_t i = 1, head_leaf = p->nseg + p->first, tail_leaf = p->nseg + p->last;
    uint32_t h = p->height;
    while (i < p->nseg) {
        i <<= 1;
        h--;
        int64_t c = p->tree[i];
        if ((head_leaf >> h) == i) c += p->head_pending;
        if ((tail_leaf >> h) == i) c += p->tail_pending;
        if ((int64_t)index >= c) { index -= (size_t)c; i++; }
    }
    *offset = (uint32_t)index;
    return i - p->nseg;
}

/* Values in segments before k. */
static size_t prefix_before(const gr_lpma_t *p, size_t k) {
    size_t r = 0;
    for (size_t i = p->nseg + k; i > 1; i >>= 1)
        if (i & 1) r += p->tree[i - 1];
    return r;
}

static void path_add(gr_lpma_t *p, size_t k, int64_t delta) {
    for (size_t i = p->nseg + k; i; i >>= 1) p->tree[i] = (uint32_t)((int64_t)p->tree[i] + delta);
}

/* Leaf k was lowered by count already: lower the nodes above it. */
static void path_sub_above(gr_lpma_t *p, size_t k, size_t count) {
    for (size_t i = (p->nseg + k) >> 1; i; i >>= 1) p->tree[i] -= (uint32_t)count;
}

/* Leaves a..b were set: recompute every node above them. */
static void refresh_up(gr_lpma_t *p, size_t a, size_t b) {
    size_t i = (p->nseg + a) >> 1, j = (p->nseg + b) >> 1;
    for (; i; i >>= 1, j >>= 1)
        for (size_t x = i; x <= j; x++) p->tree[x] = p->tree[2 * x] + p->tree[2 * x + 1];
}

static inline uint32_t *slot_at(const gr_lpma_t *p, size_t k, uint32_t j) {
    return p->slots + k * S + p->lo[k] + j;
}

static int rebuild(gr_lpma_t *p, size_t nseg, int insert, size_t rank, uint32_t value);
static void pack_left(gr_lpma_t *p, size_t a, size_t m);
static void spread(gr_lpma_t *p, size_t a, size_t m, size_t c, int insert, size_t rank, uint32_t value);

/* The height of the highest window on segment k's path over its upper bound, or UINT32_MAX. */
static uint32_t highest_over_upper(const gr_lpma_t *p, size_t k) {
    uint32_t violated = UINT32_MAX, h = 0;
    for (size_t i = p->nseg + k; i; i >>= 1, h++)
        if (p->tree[i] > ((size_t)upper(p, h) << h)) violated = h;
    return violated;
}

/* After segment k's path gained values: lay out again the window above the highest one on the
 * path over its upper bound (or grow, when that is the root; skipped when out of memory,
 * which leaves a valid list with one bound exceeded). */
static void fix_upper(gr_lpma_t *p, size_t k) {
    uint32_t violated = highest_over_upper(p, k);
    if (violated == UINT32_MAX) return;
    if (violated == p->height) {
        (void)rebuild(p, p->nseg * 2, 0, 0, 0);
        return;
    }
    uint32_t hw = violated + 1;
    size_t w = (p->nseg + k) >> hw, a = node_first(p, w, hw), m = (size_t)1 << hw;
    pack_left(p, a, m);
    spread(p, a, m, p->tree[w], 0, 0, 0);
}

/* Puts the pending end-segment counts into the tree and restores the upper bounds on their
 * paths: after it the tree is exact, as layout code and bound checks need it. */
static void flush_ends(gr_lpma_t *p) {
    int64_t head = p->head_pending, tail = p->tail_pending;
    if (!head && !tail) return;
    size_t first = p->first, last = p->last;
    p->head_pending = p->tail_pending = 0;
    if (head) path_add(p, first, head);
    if (tail) path_add(p, last, tail);
    if (head > 0) fix_upper(p, first);
    if (tail > 0) fix_upper(p, last);
}

/* ---- the block ---------------------------------------------------------------------- */

static void bounds_fill(gr_lpma_t *p);

static size_t block_bytes(size_t nseg) {
    return 2 * nseg * sizeof(uint32_t) + nseg * S * sizeof(uint32_t) + nseg;
}

/* A block of nseg segments with its tree and offsets zeroed (not its slots: only slots in
 * use are ever read, and slack pages left untouched cost no memory); the old block is the
 * caller's to free. */
static void block_adopt(gr_lpma_t *p, void *block, size_t nseg) {
    p->block = block;
    p->tree = block;
    p->slots = p->tree + 2 * nseg;
    p->lo = (uint8_t *)(p->slots + nseg * S);
    p->nseg = nseg;
    p->height = (uint32_t)__builtin_ctzll((unsigned long long)nseg);
    bounds_fill(p);
}

static int block_new(gr_lpma_t *p, size_t nseg) {
    if (nseg > ((size_t)1 << GR_LPMA_MAX_HEIGHT)) return -1;
    void *block = gr_mem_alloc(block_bytes(nseg), GR_MEM_LIST);
    if (!block) return -1;
    block_adopt(p, block, nseg);
    memset(p->tree, 0, 2 * nseg * sizeof(uint32_t));
    memset(p->lo, 0, nseg);
    return 0;
}

/* ---- layout ------------------------------------------------------------------------- */

/* Moves the values of segments [a, a+m) in order to the window's first slots. */
static void pack_left(gr_lpma_t *p, size_t a, size_t m) {
    size_t to = a * S;
    for (size_t k = a; k < a + m; k++) {
        uint32_t n = count_of(p, k);
        if (n) memmove(p->slots + to, slot_at(p, k, 0), n * sizeof(uint32_t));
        to += n;
    }
}

/* Lays out c values over segments [a, a+m): c - insert of them are packed at the window's
 * first slots (pack_left), and when insert is set `value` goes in at rank `rank`. Writes the
 * slots right to left (a value's target is never left of its packed source), the counts, the
 * offsets and the tree, and moves first/last when the window held an edge. */
static void spread(gr_lpma_t *p, size_t a, size_t m, size_t c, int insert, size_t rank, uint32_t value) {
#ifdef GR_LPMA_DEBUG
    if (p->head_pending || p->tail_pending) abort();   /* it writes leaves: the tree must be exact */
#endif
    int left_open = a <= p->first, right_open = a + m - 1 >= p->last;
    int even = (!left_open && !right_open) || c >= (size_t)FILL * m;
    size_t used = even ? m : (c + FILL - 1) / FILL;
    size_t block0 = 0;   /* the packed block's first segment, relative to a */
    if (!even) {
        if (left_open && !right_open) block0 = m - used;
        else if (left_open && right_open) {
            uint64_t head = p->head_pushes + 1ull, tail = p->tail_pushes + 1ull;
            uint64_t share16 = 16 * head / (head + tail);   /* of the slack, in 16ths, in front */
            if (share16 < 1) share16 = 1;
            if (share16 > 15) share16 = 15;
            block0 = (size_t)((m - used) * share16 / 16);
        }
    }
    size_t partial = left_open ? block0 : block0 + used - 1;   /* the packed block's remainder */
    uint32_t remainder = (uint32_t)(c - (size_t)FILL * (used - 1));
    size_t src = a * S + (c - (insert ? 1 : 0)), j = c;
    for (size_t s = m; s-- > 0;) {
        uint32_t n;
        if (even) n = (uint32_t)(((s + 1) * (uint64_t)c) / m - (s * (uint64_t)c) / m);
        else if (s < block0 || s >= block0 + used) n = 0;
        else n = s == partial ? remainder : FILL;
        size_t k = a + s;
        /* the list's end segments face their slack, so end pushes start without a memmove */
        uint32_t lo = (S - n) / 2;
        if (n && left_open && s == (even ? 0 : block0) && !(right_open && s == (even ? m - 1 : block0 + used - 1)))
            lo = S - n;
        else if (n && right_open && s == (even ? m - 1 : block0 + used - 1) && !(left_open && s == (even ? 0 : block0)))
            lo = 0;
        uint32_t *to = p->slots + k * S + lo;
        for (uint32_t t = n; t-- > 0;) {
            j--;
            to[t] = insert && j == rank ? value : p->slots[--src];
        }
        p->lo[k] = (uint8_t)lo;
        p->tree[p->nseg + k] = n;
    }
    refresh_up(p, a, a + m - 1);
    if (left_open) p->first = a + (even ? 0 : block0);
    if (right_open) p->last = a + (even ? m - 1 : block0 + used - 1);
}

/* Relays the whole list at nseg segments (growing, shrinking or recentring), with an optional
 * insertion; -1 when out of memory, with nothing changed. */
static int rebuild(gr_lpma_t *p, size_t nseg, int insert, size_t rank, uint32_t value) {
    flush_ends(p);
    size_t c = p->length;
    if (nseg == p->nseg) {
        pack_left(p, 0, nseg);
    } else if (nseg < p->nseg) {
        /* Shrinking stays in the block: pack the slots, slide them to where the smaller
         * layout puts them (its tree is shorter), and give the tail of the block back. */
        pack_left(p, 0, p->nseg);
        uint32_t *slots = p->tree + 2 * nseg;
        memmove(slots, p->slots, c * sizeof(uint32_t));
        void *block = gr_mem_realloc(p->block, block_bytes(nseg), GR_MEM_LIST);
        block_adopt(p, block ? block : p->block, nseg);   /* else the larger block serves */
    } else {
        gr_lpma_t old = *p;
        if (block_new(p, nseg)) { *p = old; return -1; }
        size_t to = 0;
        for (size_t k = old.first; k <= old.last; k++) {
            uint32_t n = old.tree[old.nseg + k];
            memcpy(p->slots + to, old.slots + k * S + old.lo[k], n * sizeof(uint32_t));
            to += n;
        }
        gr_mem_free(old.block, GR_MEM_LIST);
    }
    p->first = 0;
    p->last = p->nseg - 1;
    spread(p, 0, p->nseg, c + (insert ? 1 : 0), insert, rank, value);
    p->head_pushes /= 2;
    p->tail_pushes /= 2;
    return 0;
}

/* Slides the live entries to the arena's front when their offsets rise in list order (a
 * queue's do: its entries form one run that moves with one memmove), keeping each entry's
 * place relative to the others: an entry's new offset is never above its old one, so a
 * forward pass is safe. Returns 0, or -1 (nothing changed) when the offsets do not rise. */
/* The arena a compaction leaves for `live` bytes: an eighth to spare. */
static size_t compacted_capacity(size_t live) {
    size_t capacity = live + live / 8 + 64;
    if (capacity < MIN_ARENA) capacity = MIN_ARENA;
    return capacity > UINT32_MAX ? UINT32_MAX : capacity;
}

static int compact_arena_in_place(gr_lpma_t *p) {
    int64_t previous = -1;
    for (size_t k = p->first; k <= p->last; k++) {   /* the check: slots only */
        uint32_t n = count_of(p, k), *slot = slot_at(p, k, 0);
        for (uint32_t i = 0; i < n; i++) {
            if ((int64_t)slot[i] <= previous) return -1;
            previous = slot[i];
        }
    }
    size_t used = 0, run_from = 0, run_bytes = 0;   /* the pending run: [run_from, +run_bytes) */
    for (size_t k = p->first; k <= p->last; k++) {
        uint32_t n = count_of(p, k), *slot = slot_at(p, k, 0);
        for (uint32_t i = 0; i < n; i++) {
            size_t bytes = entry_bytes(p, slot[i]);
            if (slot[i] != run_from + run_bytes) {   /* a gap: move the run, start another */
                if (run_bytes && run_from != used - run_bytes) memmove(p->arena + used - run_bytes, p->arena + run_from, run_bytes);
                run_from = slot[i];
                run_bytes = 0;
            }
            slot[i] = (uint32_t)used;
            used += bytes;
            run_bytes += bytes;
        }
    }
    if (run_bytes && run_from != used - run_bytes) memmove(p->arena + used - run_bytes, p->arena + run_from, run_bytes);
    p->arena_used = used;
    size_t capacity = compacted_capacity(used);   /* give the rest back (a shrinking realloc stays put) */
    if (capacity < p->arena_capacity) {
        uint8_t *smaller = gr_mem_realloc(p->arena, capacity, GR_MEM_LIST);
        if (smaller) {
            p->arena = smaller;
            p->arena_capacity = capacity;
        }
    }
    return 0;
}

/* Copies the live entries, in list order, to an arena sized to them (in place when their
 * offsets allow it). Skipped when out of memory: the list is valid either way. */
static void compact_arena(gr_lpma_t *p) {
    if (compact_arena_in_place(p) == 0) return;
    size_t capacity = compacted_capacity(p->live_bytes);
    uint8_t *arena = gr_mem_alloc(capacity, GR_MEM_LIST);
    if (!arena) return;
    size_t used = 0;
    for (size_t k = p->first; k <= p->last; k++) {
        uint32_t n = count_of(p, k), *slot = slot_at(p, k, 0);
        for (uint32_t i = 0; i < n; i++) {
            size_t bytes = entry_bytes(p, slot[i]);
            memcpy(arena + used, p->arena + slot[i], bytes);
            slot[i] = (uint32_t)used;
            used += bytes;
        }
    }
    gr_mem_free(p->arena, GR_MEM_LIST);
    p->arena = arena;
    p->arena_capacity = capacity;
    p->arena_used = used;
}

/* The one decision after a deletion: free everything, shrink, or compact the arena. */
static void after_delete(gr_lpma_t *p) {
    if (p->length == 0) {
        gr_lpma_release(p);
        return;
    }
    if (p->nseg > GR_LPMA_MIN_SEGMENTS && p->length < (size_t)ROOT_LOWER * p->nseg) {
        size_t nseg = p->nseg / 2;
        while (nseg > GR_LPMA_MIN_SEGMENTS && p->length < (size_t)ROOT_LOWER * nseg) nseg /= 2;
        if (rebuild(p, nseg, 0, 0, 0) == 0) {
            if (p->arena_used - p->live_bytes > p->live_bytes) compact_arena(p);   /* same pass */
            return;
        }
    }
    if (p->arena_used - p->live_bytes > p->live_bytes) compact_arena(p);
}

/* After the counts on node's path dropped (or, with force, anywhere under node): lay out
 * again the window above the highest one on the path now under its lower bound. */
static void fix_lower(gr_lpma_t *p, size_t node, int force) {
    flush_ends(p);
    uint32_t h0 = node_height(p, node), violated = UINT32_MAX;
    uint32_t h = h0;
    for (size_t i = node; i; i >>= 1, h++) {
        size_t a = node_first(p, i, h), m = (size_t)1 << h;
        if (interior(p, a, m) && p->tree[i] < ((size_t)lower(p, h) << h)) violated = h;
    }
    size_t w;
    if (violated != UINT32_MAX) w = node >> (violated + 1 - h0);   /* the root is never interior */
    else if (force) w = node;
    else return;
    uint32_t hw = node_height(p, w);
    size_t a = node_first(p, w, hw), m = (size_t)1 << hw;
    pack_left(p, a, m);
    spread(p, a, m, p->tree[w], 0, 0, 0);
}

/* ---- lifecycle ---------------------------------------------------------------------- */

void gr_lpma_init(gr_lpma_t *p) { memset(p, 0, sizeof *p); }

void gr_lpma_release(gr_lpma_t *p) {
    gr_mem_free(p->block, GR_MEM_LIST);
    gr_mem_free(p->arena, GR_MEM_LIST);
    gr_lpma_init(p);
}

/* ---- access ------------------------------------------------------------------------- */

int gr_lpma_get(const gr_lpma_t *p, size_t index, const uint8_t **data, size_t *length) {
    if (index >= p->length) return -1;
    uint32_t j;
    size_t k = locate(p, index, &j);
    entry_read(p, *slot_at(p, k, j), data, length);
    return 0;
}

int gr_lpma_peek(const gr_lpma_t *p, gr_lpma_end_t end, const uint8_t **data, size_t *length) {
    if (!p->length) return -1;
    uint32_t offset = end == GR_LPMA_HEAD ? *slot_at(p, p->first, 0) : *slot_at(p, p->last, count_of(p, p->last) - 1);
    entry_read(p, offset, data, length);
    return 0;
}

/* Puts value at offset j of segment k, which has room and whose count (tree included)
 * already counts it, moving the shorter side. */
static void segment_place(gr_lpma_t *p, size_t k, uint32_t j, uint32_t value) {
    uint32_t n = count_of(p, k) - 1, lo = p->lo[k];
    uint32_t *base = p->slots + k * S;
    int room_left = lo > 0, room_right = lo + n < S;
    if (room_left && (!room_right || j < n - j)) {
        if (j) memmove(base + lo - 1, base + lo, j * sizeof(uint32_t));
        lo--;
    } else if (n > j) {
        memmove(base + lo + j + 1, base + lo + j, (n - j) * sizeof(uint32_t));
    }
    base[lo + j] = value;
    p->lo[k] = (uint8_t)lo;
}

static void segment_insert(gr_lpma_t *p, size_t k, uint32_t j, uint32_t value) {
    path_add(p, k, 1);
    segment_place(p, k, j, value);
}

/* The end segment k is about to take pushes at `end`: give its free slots to that side. */
static inline void segment_face(gr_lpma_t *p, size_t k, gr_lpma_end_t end) {
    uint32_t n = count_of(p, k), lo = p->lo[k], want = end == GR_LPMA_HEAD ? S - n : 0;
    if (end == GR_LPMA_HEAD ? lo > 0 : lo + n < S) return;
    uint32_t *base = p->slots + k * S;
    memmove(base + want, base + lo, n * sizeof(uint32_t));
    p->lo[k] = (uint8_t)want;
}

/* The first value of an empty list. */
static int insert_first(gr_lpma_t *p, const uint8_t *data, size_t length, int end) {
    if (block_new(p, GR_LPMA_MIN_SEGMENTS)) {
        gr_lpma_release(p);   /* the arena reserved for the value: an empty list holds nothing */
        return -1;
    }
    size_t k = p->nseg / 2 - (end == GR_LPMA_HEAD ? 1 : 0);
    p->lo[k] = end == GR_LPMA_HEAD ? S : end == GR_LPMA_TAIL ? 0 : S / 2;
    p->first = p->last = k;
    p->length = 1;
    segment_insert(p, k, 0, arena_append(p, data, length));
    return 0;
}

/* Inserts at index; end is GR_LPMA_HEAD/TAIL for end pushes, -1 otherwise. */
static int insert_at(gr_lpma_t *p, size_t index, const uint8_t *data, size_t length, int end) {
    if (length > GR_LPMA_MAX_VALUE || index > p->length) return -1;
    size_t bytes = varint_size(length) + length;
    if (arena_reserve(p, bytes)) return -1;
    if (p->length == 0) {
        if (insert_first(p, data, length, end)) return -1;
        DEBUG_CHECK(p);
        return 0;
    }
    if (end == GR_LPMA_HEAD && p->head_pushes < UINT32_MAX) p->head_pushes++;
    if (end == GR_LPMA_TAIL && p->tail_pushes < UINT32_MAX) p->tail_pushes++;
    size_t k;
    uint32_t j;
    size_t opened_from = SIZE_MAX;   /* the old edge segment, when an end push opens a new one */
    if (end == GR_LPMA_HEAD || end == GR_LPMA_TAIL) {
        int head = end == GR_LPMA_HEAD;
        k = head ? p->first : p->last;
        uint32_t n = count_of(p, k);
        if (n < FILL) {   /* the common case: into the end segment, counted as pending */
            segment_face(p, k, end);
            uint32_t *base = p->slots + k * S, value = arena_append(p, data, length);
            if (head) {
                base[--p->lo[k]] = value;
                p->head_pending++;
            } else {
                base[p->lo[k] + n] = value;
                p->tail_pending++;
            }
            p->length++;
            DEBUG_CHECK(p);
            return 0;
        }
        flush_ends(p);   /* the end segment is full: the tree decides what comes next */
        k = head ? p->first : p->last;
        j = head ? 0 : count_of(p, k);
        if (count_of(p, k) >= FILL) {
            if (head ? k == 0 : k == p->nseg - 1) {   /* no slack left on this side */
                size_t nseg = p->nseg;
                if ((p->length + 1) * 8 > (size_t)5 * nseg * S) nseg *= 2;   /* over 5/8: grow */
                uint32_t value = arena_append(p, data, length);
                if (rebuild(p, nseg, 1, index, value)) {
                    entry_release(p, value);
                    return -1;
                }
                p->length++;
                DEBUG_CHECK(p);
                return 0;
            }
            opened_from = k;
            k = head ? k - 1 : k + 1;
            j = 0;
            p->lo[k] = head ? S : 0;
        } else {
            segment_face(p, k, end);
        }
    } else {
        flush_ends(p);
        k = locate(p, index, &j);
    }
    /* The highest window on k's path that one more value puts over its upper bound. The
     * counts are raised first (the common case) and lowered again when one is. */
    path_add(p, k, 1);
    uint32_t violated = highest_over_upper(p, k);
    if (violated != UINT32_MAX) path_add(p, k, -1);
    uint32_t value = arena_append(p, data, length);
    if (violated == UINT32_MAX) {
        segment_place(p, k, j, value);
        p->length++;
        if (opened_from != SIZE_MAX) {
            if (k < p->first) p->first = k;
            if (k > p->last) p->last = k;
            fix_lower(p, p->nseg + opened_from, 0);   /* it is inside the edges now */
        }
    } else if (violated == p->height) {   /* the whole array is full: grow */
        if (rebuild(p, p->nseg * 2, 1, index, value)) {
            entry_release(p, value);
            return -1;
        }
        p->length++;
    } else {
        uint32_t hw = violated + 1;
        size_t w = (p->nseg + k) >> hw, a = node_first(p, w, hw), m = (size_t)1 << hw;
        size_t rank = index - prefix_before(p, a);
        size_t c = p->tree[w] + 1ull;
        pack_left(p, a, m);
        spread(p, a, m, c, 1, rank, value);
        p->length++;
    }
    DEBUG_CHECK(p);
    return 0;
}

int gr_lpma_push(gr_lpma_t *p, gr_lpma_end_t end, const uint8_t *data, size_t length) {
    return insert_at(p, end == GR_LPMA_HEAD ? 0 : p->length, data, length, (int)end);
}

int gr_lpma_insert(gr_lpma_t *p, size_t index, const uint8_t *data, size_t length) {
    if (index == 0) return gr_lpma_push(p, GR_LPMA_HEAD, data, length);
    if (index == p->length) return gr_lpma_push(p, GR_LPMA_TAIL, data, length);
    return insert_at(p, index, data, length, -1);
}

int gr_lpma_pop(gr_lpma_t *p, gr_lpma_end_t end) {
    return gr_lpma_pop_range(p, end, 1) == 1 ? 0 : -1;
}

int gr_lpma_set(gr_lpma_t *p, size_t index, const uint8_t *data, size_t length) {
    if (index >= p->length || length > GR_LPMA_MAX_VALUE) return -1;
    uint32_t j;
    size_t k = locate(p, index, &j);
    uint32_t *slot = slot_at(p, k, j);
    size_t bytes = varint_size(length) + length, old = entry_bytes(p, *slot);
    if (bytes == old) {   /* in place */
        uint8_t *q = varint_put(p->arena + *slot, length);
        if (length) memcpy(q, data, length);
        DEBUG_CHECK(p);
        return 0;
    }
    if (arena_reserve(p, bytes)) return -1;
    entry_release(p, *slot);   /* retracted if it was the arena's last: the new one reuses it */
    *slot = arena_append(p, data, length);
    if (p->arena_used - p->live_bytes > p->live_bytes) compact_arena(p);
    DEBUG_CHECK(p);
    return 0;
}

/* ---- deletion ----------------------------------------------------------------------- */

size_t gr_lpma_pop_range(gr_lpma_t *p, gr_lpma_end_t end, size_t count) {
    if (count > p->length) count = p->length;
    if (!count) return 0;
    if (count == p->length) {
        gr_lpma_release(p);
        DEBUG_CHECK(p);
        return count;
    }
    size_t edge = end == GR_LPMA_HEAD ? p->first : p->last;
    uint32_t edge_count = count_of(p, edge);
    if (count < edge_count) {   /* inside the end segment: no tree walk */
        uint32_t *slot = slot_at(p, edge, 0);
        if (end == GR_LPMA_HEAD) {
            for (uint32_t i = 0; i < count; i++) entry_release(p, slot[i]);
            p->lo[edge] = (uint8_t)(p->lo[edge] + count);
            p->head_pending -= (int64_t)count;
        } else {
            for (uint32_t i = edge_count; i-- > edge_count - count;) entry_release(p, slot[i]);
            p->tail_pending -= (int64_t)count;
        }
        p->length -= count;
        after_delete(p);
        DEBUG_CHECK(p);
        return count;
    }
    flush_ends(p);
    size_t left = count;
    if (end == GR_LPMA_HEAD) {
        size_t k = p->first;
        for (;; k++) {
            uint32_t n = count_of(p, k), take = n < left ? n : (uint32_t)left;
            uint32_t *slot = slot_at(p, k, 0);
            for (uint32_t i = 0; i < take; i++) entry_release(p, slot[i]);
            p->lo[k] = (uint8_t)(p->lo[k] + take);
            p->tree[p->nseg + k] = n - take;
            left -= take;
            if (!left) break;
        }
        if (k == p->first) path_sub_above(p, k, count);   /* one segment: its path only */
        else refresh_up(p, p->first, k);
        while (!count_of(p, k)) k++;
        p->first = k;
    } else {
        size_t k = p->last;
        for (;; k--) {
            uint32_t n = count_of(p, k), take = n < left ? n : (uint32_t)left;
            uint32_t *slot = slot_at(p, k, 0);
            for (uint32_t i = n; i-- > n - take;) entry_release(p, slot[i]);   /* newest first */
            p->tree[p->nseg + k] = n - take;
            left -= take;
            if (!left) break;
        }
        if (k == p->last) path_sub_above(p, k, count);
        else refresh_up(p, k, p->last);
        while (!count_of(p, k)) k--;
        p->last = k;
    }
    p->length -= count;
    after_delete(p);
    DEBUG_CHECK(p);
    return count;
}

int gr_lpma_delete_range(gr_lpma_t *p, size_t start, size_t count) {
    if (start >= p->length || count == 0) return 0;
    if (count > p->length - start) count = p->length - start;
    if (start == 0) { gr_lpma_pop_range(p, GR_LPMA_HEAD, count); return 0; }
    if (start + count == p->length) { gr_lpma_pop_range(p, GR_LPMA_TAIL, count); return 0; }
    flush_ends(p);
    uint32_t j1, j2;
    size_t k1 = locate(p, start, &j1), k2 = locate(p, start + count - 1, &j2);
    if (k1 == k2) {
        uint32_t n = count_of(p, k1), *slot = slot_at(p, k1, 0), gone = j2 + 1 - j1;
        for (uint32_t i = j1; i <= j2; i++) entry_release(p, slot[i]);
        if (j1 < n - 1 - j2) {   /* fewer before than after: move the front part */
            memmove(slot + gone, slot, j1 * sizeof(uint32_t));
            p->lo[k1] = (uint8_t)(p->lo[k1] + gone);
        } else {
            memmove(slot + j1, slot + j2 + 1, (n - 1 - j2) * sizeof(uint32_t));
        }
        path_add(p, k1, -(int64_t)gone);
    } else {
        for (size_t k = k1; k <= k2; k++) {
            uint32_t n = count_of(p, k), *slot = slot_at(p, k, 0);
            uint32_t from = k == k1 ? j1 : 0, to = k == k2 ? j2 + 1 : n;
            for (uint32_t i = from; i < to; i++) entry_release(p, slot[i]);
            if (k == k2) p->lo[k] = (uint8_t)(p->lo[k] + to);
            p->tree[p->nseg + k] = n - (to - from);
        }
        refresh_up(p, k1, k2);
    }
    p->length -= count;
    /* The segments between k1 and k2 are empty now: relay their common window (or above). */
    size_t a = p->nseg + k1, b = p->nseg + k2;
    while (a != b) { a >>= 1; b >>= 1; }
    fix_lower(p, a, k1 != k2);
    after_delete(p);
    DEBUG_CHECK(p);
    return 0;
}

/* ---- iteration ---------------------------------------------------------------------- */

void gr_lpma_iter_init(gr_lpma_iter_t *it, const gr_lpma_t *p, size_t start_index, int backward) {
    it->list = p;
    it->backward = backward;
    it->segment = 0;
    it->slot = 0;
    if (start_index >= p->length) { it->remaining = 0; return; }
    uint32_t j;
    it->segment = locate(p, start_index, &j);
    it->slot = (size_t)(slot_at(p, it->segment, j) - p->slots);
    it->remaining = backward ? start_index + 1 : p->length - start_index;
}

int gr_lpma_iter_next(gr_lpma_iter_t *it, const uint8_t **data, size_t *length) {
    if (!it->remaining) return 0;
    const gr_lpma_t *p = it->list;
    entry_read(p, p->slots[it->slot], data, length);
    if (--it->remaining) {
        size_t k = it->segment, lo = k * S + p->lo[k];
        if (!it->backward) {
            if (++it->slot == lo + count_of(p, k)) {
                do k++; while (!count_of(p, k));
                it->segment = k;
                it->slot = k * S + p->lo[k];
            }
        } else if (it->slot == lo) {
            do k--; while (!count_of(p, k));
            it->segment = k;
            it->slot = k * S + p->lo[k] + count_of(p, k) - 1;
        } else {
            it->slot--;
        }
    }
    return 1;
}

/* ---- queries ------------------------------------------------------------------------ */

size_t gr_lpma_length(const gr_lpma_t *p) { return p->length; }
size_t gr_lpma_allocated_bytes(const gr_lpma_t *p) { return gr_mem_usable(p->block) + gr_mem_usable(p->arena); }
size_t gr_lpma_slot_count(const gr_lpma_t *p) { return p->nseg * S; }

size_t gr_lpma_front_slack(const gr_lpma_t *p) {
    return p->length ? p->first * S + p->lo[p->first] : 0;
}

size_t gr_lpma_back_slack(const gr_lpma_t *p) {
    return p->length ? p->nseg * S - (p->last * S + p->lo[p->last] + count_of(p, p->last)) : 0;
}

void gr_lpma_internals(const gr_lpma_t *p, gr_lpma_internals_t *out) {
    out->elements = p->length;
    out->live_value_bytes = p->live_bytes;
    out->dead_value_bytes = p->arena_used - p->live_bytes;
    out->value_bytes_allocated = gr_mem_usable(p->arena);
    out->slots = gr_lpma_slot_count(p);
    out->front_slack = gr_lpma_front_slack(p);
    out->back_slack = gr_lpma_back_slack(p);
    out->order_structure_bytes = p->block ? gr_mem_usable(p->block) - p->nseg * S * sizeof(uint32_t) : 0;
    out->total_allocated_bytes = gr_lpma_allocated_bytes(p);
}

int gr_lpma_check(const gr_lpma_t *p) {
    if (!p->block)
        return p->length == 0 && !p->arena && p->nseg == 0 && p->arena_used == 0 && p->live_bytes == 0 ? 0 : -1;
    if (p->length == 0 || p->nseg < GR_LPMA_MIN_SEGMENTS || (p->nseg & (p->nseg - 1))) return -1;
    if ((size_t)1 << p->height != p->nseg || gr_mem_usable(p->block) < block_bytes(p->nseg)) return -1;
    if (!p->arena || p->arena_used > p->arena_capacity || p->arena_capacity > gr_mem_usable(p->arena)) return -1;
    if (p->live_bytes > p->arena_used || p->first > p->last || p->last >= p->nseg) return -1;
    for (size_t k = 0; k < p->nseg; k++) {
        uint32_t n = count_of(p, k);
        if ((k < p->first || k > p->last) ? n != 0 : (k == p->first || k == p->last) && n == 0) return -1;
        if (p->lo[k] + n > S) return -1;
    }
    if ((int64_t)p->tree[1] + p->head_pending + p->tail_pending != (int64_t)p->length) return -1;
    if ((p->head_pending > 0 && count_of(p, p->first) > FILL) || (p->tail_pending > 0 && count_of(p, p->last) > FILL))
        return -1;
    if (signed_count_of(p, p->first) < 0 || signed_count_of(p, p->last) < 0) return -1;   /* real counts */
    for (size_t i = p->nseg - 1; i >= 1; i--)
        if (p->tree[i] != p->tree[2 * i] + p->tree[2 * i + 1]) return -1;
    for (size_t i = 1; i < 2 * p->nseg; i++) {   /* every window's density bounds */
        uint32_t h = node_height(p, i);
        size_t a = node_first(p, i, h), m = (size_t)1 << h;
        if (p->tree[i] > ((size_t)upper(p, h) << h)) return -1;
        if (interior(p, a, m) && p->tree[i] < ((size_t)lower(p, h) << h)) return -1;
    }
    size_t live = 0;
    for (size_t k = p->first; k <= p->last; k++) {
        const uint32_t *slot = slot_at(p, k, 0);
        for (uint32_t i = 0; i < count_of(p, k); i++) {
            if (slot[i] >= p->arena_used) return -1;
            /* the length prefix must end, and the bytes, inside the used arena */
            size_t n = 0, at = slot[i];
            unsigned shift = 0;
            for (;;) {
                if (at >= p->arena_used || shift > 35) return -1;
                uint8_t byte = p->arena[at++];
                n |= (size_t)(byte & 0x7f) << shift;
                shift += 7;
                if (!(byte & 0x80)) break;
            }
            if (n > p->arena_used - at) return -1;
            live += at - slot[i] + n;
        }
    }
    return live == p->live_bytes ? 0 : -1;
}

/* ---- bulk --------------------------------------------------------------------------- */

int gr_lpma_push_many(gr_lpma_t *p, gr_lpma_end_t end, const uint8_t *const *data, const size_t *lengths,
                      size_t count) {
    size_t bytes = 0;
    for (size_t i = 0; i < count; i++) {
        if (lengths[i] > GR_LPMA_MAX_VALUE) return -1;
        bytes += varint_size(lengths[i]) + lengths[i];
    }
    if (count && arena_reserve(p, bytes)) return -1;   /* one reallocation for the batch */
    for (size_t i = 0; i < count; i++) {
        if (gr_lpma_push(p, end, data[i], lengths[i])) {   /* all or nothing */
            gr_lpma_pop_range(p, end, i);
            if (!p->length) gr_lpma_release(p);
            return -1;
        }
    }
    return 0;
}

static inline int matches(const gr_lpma_t *p, uint32_t offset, const uint8_t *data, size_t length) {
    const uint8_t *value;
    size_t n;
    entry_read(p, offset, &value, &n);
    return n == length && (length == 0 || memcmp(value, data, length) == 0);
}

int64_t gr_lpma_remove_matching(gr_lpma_t *p, const uint8_t *data, size_t length, int64_t count) {
    if (!p->length) return 0;
    flush_ends(p);
    uint64_t limit = count > 0 ? (uint64_t)count : count < 0 ? (uint64_t)(-(count + 1)) + 1 : UINT64_MAX;
    size_t from = SIZE_MAX;   /* the first value to remove */
    gr_lpma_iter_t it;
    const uint8_t *value;
    size_t value_length;
    if (count < 0) {
        /* the |count|-th match from the tail: removing every match from there removes the last |count| */
        gr_lpma_iter_init(&it, p, p->length - 1, 1);
        size_t index = p->length;
        uint64_t seen = 0;
        while (gr_lpma_iter_next(&it, &value, &value_length)) {
            index--;
            if (value_length == length && (length == 0 || memcmp(value, data, length) == 0)) {
                from = index;
                if (++seen == limit) break;
            }
        }
    } else {
        gr_lpma_iter_init(&it, p, 0, 0);
        size_t index = 0;
        while (gr_lpma_iter_next(&it, &value, &value_length)) {
            if (value_length == length && (length == 0 || memcmp(value, data, length) == 0)) { from = index; break; }
            index++;
        }
    }
    if (from == SIZE_MAX) return 0;
    /* Pack every slot to the front, filter from `from` on, lay the survivors out again. */
    pack_left(p, 0, p->nseg);
    size_t write = from;
    uint64_t removed = 0;
    for (size_t read = from; read < p->length; read++) {
        uint32_t offset = p->slots[read];
        if (removed < limit && matches(p, offset, data, length)) {
            entry_release(p, offset);
            removed++;
        } else {
            p->slots[write++] = offset;
        }
    }
    p->length = write;
    if (p->length) {
        p->first = 0;
        p->last = p->nseg - 1;
        spread(p, 0, p->nseg, p->length, 0, 0, 0);
    }
    after_delete(p);
    DEBUG_CHECK(p);
    return (int64_t)removed;
}
