/* list_seg.c — the segmented list engine: varint-prefixed values packed into bounded leaves
 * with a checkpoint table each, found through a deque of virtual start positions. The
 * memory layout, the invariants and the API are documented in list_seg.h; list.c is its
 * user and the command layer (cmd_list.c) reaches it only through list.c.
 */
#include "engines/list/list_seg.h"

#include <stddef.h>
#include <string.h>

#include "core/alloc.h"
#include "core/varint.h"

#define K GR_LSEG_CHECKPOINT_EVERY
#define BASE0 (1u << 20)                /* base after renumbering: a multiple of K */
#define ORIGIN ((uint64_t)1 << 62)      /* virtual start of the first leaf of a new list */
#define FLAG_PLAIN 1u                   /* one value, exactly sized: nothing else goes in */

struct gr_lseg_leaf {
    uint32_t lo, hi;          /* the entries occupy bytes [lo, hi) of the leaf */
    uint32_t size;            /* bytes in use: leaf_request, or the usable size if plain */
    uint32_t base;            /* ordinal of entry 0: entry i belongs to group (base+i)/K */
    uint16_t count;           /* entries */
    uint16_t cp_count;        /* checkpoints in use: one per group after the first */
    uint16_t cp_cap;          /* checkpoint slots reserved right after the header */
    uint16_t flags;
    uint16_t cp[];            /* byte offsets of the first entry of groups base/K+1, +2, ... */
};

typedef gr_lseg_leaf_t leaf_t;
#define HEADER ((uint32_t)offsetof(leaf_t, cp))
_Static_assert(offsetof(leaf_t, cp) == 24, "leaf header is 24 bytes");

enum { PLACE_FRONT, PLACE_BACK, PLACE_MIDDLE };

/* ---- entry encoding ----------------------------------------------------------------- */

static inline const uint8_t *entry_skip(const uint8_t *p) {
    if (*p < 0x80) return p + 1 + *p;
    size_t n;
    p = varint_get(p, &n);
    return p + n;
}

static inline void entry_put(uint8_t *p, const uint8_t *data, size_t length) {
    p = varint_put(p, length);
    gr_bytes_copy(p, data, length);
}

/* What a splice writes: one value to encode, or entries already encoded (a merge), or nothing. */
typedef struct piece {
    const uint8_t *data;
    size_t length;       /* the value's length (for a value) */
    uint32_t bytes;      /* bytes it takes in a leaf */
    uint32_t count;      /* entries */
    int encoded;
} piece_t;

static piece_t value_piece(const uint8_t *data, size_t length) {
    piece_t piece = {data, length, varint_size(length) + (uint32_t)length, 1, 0};
    return piece;
}

static void piece_write(uint8_t *to, const piece_t *piece) {
    if (piece->encoded) { if (piece->bytes) memcpy(to, piece->data, piece->bytes); }
    else if (piece->count) entry_put(to, piece->data, piece->length);
}

/* ---- leaves ------------------------------------------------------------------------- */

static inline uint32_t cp_end(const leaf_t *l) { return HEADER + 2u * l->cp_cap; }
static inline uint32_t used(const leaf_t *l) { return l->hi - l->lo; }
static inline uint32_t cp_needed(uint32_t base, uint32_t count) {
    return count ? (base + count - 1) / K - base / K : 0;
}
static inline int is_plain(const leaf_t *l) { return (l->flags & FLAG_PLAIN) != 0; }

/* Byte offset of entry j (j == count gives hi): one checkpoint read, at most K-1 skips. */
static uint32_t leaf_offset(const leaf_t *l, uint32_t j) {
    if (j >= l->count) return l->hi;
    const uint8_t *b = (const uint8_t *)l;
    uint32_t ordinal = l->base + j;
    uint32_t group = ordinal / K - l->base / K;
    const uint8_t *p;
    uint32_t skip;
    if (group == 0) { p = b + l->lo; skip = j; }
    else { p = b + l->cp[group - 1]; skip = ordinal % K; }
    while (skip--) p = entry_skip(p);
    return (uint32_t)(p - b);
}

/* Renumber from BASE0 and rebuild the checkpoints by one scan. Needs cp_cap >=
 * cp_needed(BASE0, count), which never exceeds the current cp_count. */
static void leaf_rebuild(leaf_t *l) {
    const uint8_t *b = (const uint8_t *)l, *p = b + l->lo;
    uint16_t n = 0;
    l->base = BASE0;
    for (uint32_t i = 0; i < l->count; i++) {
        if (i && i % K == 0) l->cp[n++] = (uint16_t)(p - b);
        p = entry_skip(p);
    }
    l->cp_count = n;
}

/* Checkpoint slots for `space` bytes of entries averaging `average` bytes. */
static uint32_t estimate_slots(uint32_t space, uint32_t average) {
    if (!average) average = 1;
    return space / (average * K + 2) + 1;
}

static uint32_t leaf_average(const leaf_t *l, uint32_t fallback) {
    if (!l || is_plain(l) || !l->count) return fallback;
    uint32_t average = used(l) / l->count;
    return average ? average : 1;
}

static leaf_t *leaf_alloc(gr_lseg_t *s, size_t request, uint16_t flags) {
    leaf_t *l = gr_mem_alloc(request, GR_MEM_LIST);
    if (!l) return NULL;
    size_t usable = gr_mem_usable(l);
    s->allocated += usable;
    /* Normal leaves all use exactly the requested size, so that any leaf's entries fit in
     * any other (splits, merges); malloc sometimes hands out a slightly bigger chunk. */
    if (!(flags & FLAG_PLAIN)) usable = request;
    if (usable > UINT32_MAX) usable = UINT32_MAX;
    l->size = (uint32_t)usable;
    l->lo = l->hi = HEADER;
    l->base = BASE0;
    l->count = l->cp_count = l->cp_cap = 0;
    l->flags = flags;
    return l;
}

static void leaf_free(gr_lseg_t *s, leaf_t *l) {
    s->allocated -= gr_mem_usable(l);
    gr_mem_free(l, GR_MEM_LIST);
}

/* An empty normal leaf with checkpoint room for values averaging `average` bytes. */
static leaf_t *leaf_new(gr_lseg_t *s, uint32_t average, int placement) {
    leaf_t *l = leaf_alloc(s, s->leaf_request, 0);
    if (!l) return NULL;
    uint32_t slots = estimate_slots(l->size - HEADER, average);
    if (slots > (l->size - HEADER) / 4) slots = (l->size - HEADER) / 4;
    l->cp_cap = (uint16_t)slots;
    uint32_t end = cp_end(l);
    l->lo = l->hi = placement == PLACE_FRONT ? end : placement == PLACE_BACK ? l->size : end + (l->size - end) / 2;
    return l;
}

/* A plain leaf holding exactly one value. */
static leaf_t *leaf_new_plain(gr_lseg_t *s, const uint8_t *data, size_t length) {
    uint32_t bytes = varint_size(length) + (uint32_t)length;
    leaf_t *l = leaf_alloc(s, (size_t)HEADER + bytes, FLAG_PLAIN);
    if (!l) return NULL;
    entry_put((uint8_t *)l + HEADER, data, length);
    l->hi = HEADER + bytes;
    l->count = 1;
    return l;
}

/* Re-lay the entries so that `need` more bytes fit on one side with a spare checkpoint
 * slot; `center` splits the free space between both sides (for a list's only leaf, where
 * both ends are live). Refused (0) when less than 1/8 of the leaf would stay free: a new
 * leaf is better than a memmove that buys little. */
static int leaf_repack(leaf_t *l, uint32_t need, int at_tail, int center) {
    uint32_t u = used(l);
    uint32_t slots = cp_needed(BASE0, (uint32_t)l->count + 1) + 1;
    uint64_t fixed = (uint64_t)HEADER + 2u * slots + u + need;
    if (fixed > l->size) return 0;
    uint32_t spare = l->size - (uint32_t)fixed;
    if (spare < l->size / 8) return 0;
    uint32_t extra = spare / (leaf_average(l, need) * K + 2);
    slots += extra;
    spare -= 2 * extra;
    uint32_t front = center ? spare / 2 : at_tail ? 0 : spare;
    uint32_t lo = HEADER + 2 * slots + (at_tail ? front : need + front);
    uint8_t *b = (uint8_t *)l;
    memmove(b + lo, b + l->lo, u);
    l->lo = lo;
    l->hi = lo + u;
    l->cp_cap = (uint16_t)slots;
    leaf_rebuild(l);
    return 1;
}

/* Append one value; 1 done, 0 no room (leaf untouched: a repack happens only when the
 * push then fits). */
static int leaf_push_tail(leaf_t *l, const uint8_t *data, size_t length, uint32_t bytes, int center) {
    if (is_plain(l) || l->count == UINT16_MAX) return 0;
    for (int attempt = 0;; attempt++) {
        int need_cp = l->count && (l->base + l->count) % K == 0;
        int grow_cp = need_cp && l->cp_count == l->cp_cap;
        if ((uint64_t)l->hi + bytes <= l->size && (!grow_cp || l->lo >= cp_end(l) + 2)) {
            if (grow_cp) l->cp_cap++;   /* into the gap before lo */
            if (need_cp) l->cp[l->cp_count++] = (uint16_t)l->hi;
            entry_put((uint8_t *)l + l->hi, data, length);
            l->hi += bytes;
            l->count++;
            return 1;
        }
        if (attempt || !leaf_repack(l, bytes, 1, center)) return 0;
    }
}

/* Prepend one value; 1 done, 0 no room. */
static int leaf_push_head(leaf_t *l, const uint8_t *data, size_t length, uint32_t bytes, int center) {
    if (is_plain(l) || l->count == UINT16_MAX) return 0;
    if (l->base == 0) leaf_rebuild(l);
    for (int attempt = 0;; attempt++) {
        int need_cp = l->count && l->base % K == 0;   /* the old first entry starts a later group */
        int grow_cp = need_cp && l->cp_count == l->cp_cap;
        uint64_t floor = (uint64_t)cp_end(l) + (grow_cp ? 2 : 0) + bytes;
        if (l->lo >= floor) {
            if (grow_cp) l->cp_cap++;
            if (need_cp) {
                memmove(l->cp + 1, l->cp, 2u * l->cp_count);
                l->cp[0] = (uint16_t)l->lo;
                l->cp_count++;
            }
            l->lo -= bytes;
            entry_put((uint8_t *)l + l->lo, data, length);
            l->base--;
            l->count++;
            return 1;
        }
        if (attempt || !leaf_repack(l, bytes, 0, center)) return 0;
    }
}

static void leaf_pop_head(leaf_t *l) {
    const uint8_t *b = (const uint8_t *)l;
    l->lo = (uint32_t)(entry_skip(b + l->lo) - b);
    l->count--;
    l->base++;
    if (l->count && l->base % K == 0) {   /* cp[0] is now the first entry: not needed */
        memmove(l->cp, l->cp + 1, 2u * (l->cp_count - 1));
        l->cp_count--;
    }
}

/* Drop the last entry, which starts at byte offset `last`. */
static void leaf_pop_tail_at(leaf_t *l, uint32_t last) {
    if (l->count > 1 && (l->base + l->count - 1u) % K == 0) l->cp_count--;
    l->hi = last;
    l->count--;
}

static void leaf_pop_tail(leaf_t *l) { leaf_pop_tail_at(l, leaf_offset(l, l->count - 1u)); }

/* Keep entries [0, j), 0 < j < count. */
static void leaf_truncate(leaf_t *l, uint32_t j) {
    l->hi = leaf_offset(l, j);
    l->count = (uint16_t)j;
    l->cp_count = (uint16_t)cp_needed(l->base, j);
}

/* Drop entries [0, j), 0 < j < count, entry j being at byte offset `at`: no bytes move; the
 * checkpoints of vanished groups go. */
static void leaf_drop_front_at(leaf_t *l, uint32_t j, uint32_t at) {
    uint32_t group = l->base / K;
    l->base += j;
    uint32_t gone = l->base / K - group;
    if (gone) {   /* a short drop (LMPOP's) often stays within the first group */
        memmove(l->cp, l->cp + gone, 2u * (l->cp_count - gone));
        l->cp_count = (uint16_t)(l->cp_count - gone);
    }
    l->lo = at;
    l->count = (uint16_t)(l->count - j);
}

static void leaf_drop_front(leaf_t *l, uint32_t j) { leaf_drop_front_at(l, j, leaf_offset(l, j)); }

/* Replace entries [j, j+del) by `piece`. Moves whichever side of the splice is cheaper,
 * or re-centres when neither side has room alone. 1 done, 0 no room (leaf unchanged). */
static int leaf_splice(leaf_t *l, uint32_t j, uint32_t del, const piece_t *piece) {
    if (is_plain(l)) return 0;
    uint32_t new_count = (uint32_t)l->count - del + piece->count;
    if (new_count > UINT16_MAX) return 0;
    uint8_t *b = (uint8_t *)l;
    uint32_t a = leaf_offset(l, j);
    uint32_t z = a;
    if (j + del == l->count) z = l->hi;
    else for (uint32_t i = 0; i < del; i++) z = (uint32_t)(entry_skip(b + z) - b);
    int same_shape = del == 1 && piece->count == 1;   /* checkpoints can be shifted, not rebuilt */
    uint32_t needed = cp_needed(BASE0, new_count);
    uint32_t slots = same_shape || needed <= l->cp_cap ? l->cp_cap : needed;
    uint64_t used_new = (uint64_t)used(l) - (z - a) + piece->bytes;
    uint32_t end = HEADER + 2 * slots;
    if (end + used_new > l->size) return 0;
    for (int spare = 0; spare < 2 && slots > l->cp_cap && end + used_new + 2 <= l->size; spare++) {
        slots++;   /* growing anyway: keep a spare or two */
        end += 2;
    }
    uint32_t front = a - l->lo, back = l->hi - z;
    int64_t lo_front = (int64_t)l->lo + (z - a) - piece->bytes;   /* only the front part moves */
    int front_ok = lo_front >= end;
    int back_ok = l->lo >= end && l->lo + used_new <= l->size;    /* only the back part moves */
    uint32_t lo;
    if (front_ok && (!back_ok || front <= back)) lo = (uint32_t)lo_front;
    else if (back_ok) lo = l->lo;
    else lo = end + (uint32_t)((l->size - end - used_new) / 2);
    uint32_t front_to = lo, back_to = lo + front + piece->bytes;
    int32_t front_shift = (int32_t)front_to - (int32_t)l->lo, back_shift = (int32_t)back_to - (int32_t)z;
    if (back_to > z) {   /* order the moves so that neither overwrites the other's source */
        memmove(b + back_to, b + z, back);
        memmove(b + front_to, b + l->lo, front);
    } else {
        memmove(b + front_to, b + l->lo, front);
        memmove(b + back_to, b + z, back);
    }
    piece_write(b + lo + front, piece);
    l->lo = lo;
    l->hi = (uint32_t)(lo + used_new);
    if (same_shape) {
        for (uint32_t i = 0; i < l->cp_count; i++)
            l->cp[i] = (uint16_t)(l->cp[i] + (l->cp[i] <= a ? front_shift : back_shift));
    } else {
        l->count = (uint16_t)new_count;
        l->cp_cap = (uint16_t)slots;
        leaf_rebuild(l);
    }
    return 1;
}

/* Move entries [j, count) of l (0 < j < count) into the empty leaf r. */
static void leaf_split(leaf_t *l, uint32_t j, leaf_t *r) {
    uint32_t at = leaf_offset(l, j), bytes = l->hi - at, n = l->count - j;
    uint32_t room = (r->size - HEADER - bytes) / 2;
    uint32_t slots = estimate_slots(r->size - HEADER, leaf_average(l, 1));
    if (slots > room) slots = room;
    if (slots < cp_needed(BASE0, n)) slots = cp_needed(BASE0, n);
    r->cp_cap = (uint16_t)slots;
    uint32_t end = cp_end(r);
    r->lo = end + (r->size - end - bytes) / 2;
    memcpy((uint8_t *)r + r->lo, (uint8_t *)l + at, bytes);
    r->hi = r->lo + bytes;
    r->count = (uint16_t)n;
    leaf_rebuild(r);
    leaf_truncate(l, j);
}

/* Remove up to `max` entries equal to data from entry j on; returns how many. */
static uint32_t leaf_filter(leaf_t *l, uint32_t j, const uint8_t *data, size_t length, uint64_t max) {
    uint8_t *b = (uint8_t *)l;
    uint32_t read = leaf_offset(l, j), write = read, gone = 0;
    for (uint32_t i = j; i < l->count && gone < max; i++) {
        size_t n;
        const uint8_t *p = varint_get(b + read, &n);
        uint32_t next = (uint32_t)(p + n - b);
        if (n == length && (n == 0 || memcmp(p, data, n) == 0)) {
            gone++;
        } else {
            if (write != read) memmove(b + write, b + read, next - read);
            write += next - read;
        }
        read = next;
    }
    if (!gone) return 0;
    memmove(b + write, b + read, l->hi - read);
    l->hi = write + (l->hi - read);
    l->count = (uint16_t)(l->count - gone);
    if (l->count) leaf_rebuild(l);
    else l->cp_count = 0;
    return gone;
}

/* ---- directory ---------------------------------------------------------------------- */

static inline gr_lseg_slot_t *slot_at(const gr_lseg_t *s, size_t k) { return s->slots + s->first + k; }

/* The slot holding index (< length), and the index within its leaf. */
static inline size_t find(const gr_lseg_t *s, size_t index, uint32_t *local) {
    const gr_lseg_slot_t *base = s->slots + s->first;
    uint64_t position = base->start + index;
    size_t n = s->count;
    if (n == 1 || position < base[1].start) {   /* the head leaf: LRANGE 0 n, LPOP n, queues */
        *local = (uint32_t)index;
        return 0;
    }
    while (n > 1) {
        size_t half = n / 2;
        base = base[half].start <= position ? base + half : base;
        n -= half;
    }
    *local = (uint32_t)(position - base->start);
    return (size_t)(base - (s->slots + s->first));
}

/* Make room for n more slots at the front or the back; -1 on allocation failure. */
static int dir_reserve(gr_lseg_t *s, int at_front, size_t n) {
    if (at_front ? s->first >= n : s->first + s->count + n <= s->capacity) return 0;
    size_t capacity = s->capacity;
    if ((s->count + n) * 4 > capacity * 3) capacity = capacity + capacity / 2 + n + 4;
    size_t slack = capacity - s->count;
    size_t first;
    if (at_front) {
        first = slack - slack / 4;
        if (first < n) first = n;
    } else {
        first = s->first < slack / 4 ? s->first : slack / 4;
        if (first + n > slack) first = slack - n;
    }
    if (capacity != s->capacity) {
        size_t before = gr_mem_usable(s->slots);
        gr_lseg_slot_t *grown = gr_mem_realloc(s->slots, capacity * sizeof *grown, GR_MEM_LIST);
        if (!grown) return -1;
        s->allocated += gr_mem_usable(grown) - before;
        s->slots = grown;
        s->capacity = capacity;
    }
    memmove(s->slots + first, s->slots + s->first, s->count * sizeof *s->slots);
    s->first = first;
    return 0;
}

/* Insert a slot at relative position k; the room was reserved (front for k == 0). */
static void dir_insert(gr_lseg_t *s, size_t k, uint64_t start, leaf_t *leaf) {
    if (k == 0 && s->count > 0) s->first--;
    else memmove(slot_at(s, k + 1), slot_at(s, k), (s->count - k) * sizeof *s->slots);
    slot_at(s, k)->start = start;
    slot_at(s, k)->leaf = leaf;
    s->count++;
}

/* Remove slots [k, k+n) (their leaves are already freed), moving the shorter side. */
static void dir_remove(gr_lseg_t *s, size_t k, size_t n) {
    size_t after = s->count - k - n;
    if (k < after) {
        memmove(slot_at(s, n), slot_at(s, 0), k * sizeof *s->slots);
        s->first += n;
    } else {
        memmove(slot_at(s, k), slot_at(s, k + n), after * sizeof *s->slots);
    }
    s->count -= n;
}

static void dir_shift(gr_lseg_t *s, size_t from, uint64_t delta) {
    for (size_t k = from; k < s->count; k++) slot_at(s, k)->start += delta;
}

/* After a removal: free the directory of an empty list, shrink a mostly empty one. */
static void settle_work(gr_lseg_t *s) {
    if (s->count == 0) {
        s->allocated -= gr_mem_usable(s->slots);
        gr_mem_free(s->slots, GR_MEM_LIST);
        s->slots = NULL;
        s->capacity = s->first = 0;
        return;
    }
    if (s->capacity <= 32 || s->count * 4 >= s->capacity) return;
    size_t capacity = s->count * 2, first = (capacity - s->count) / 4;
    memmove(s->slots + first, s->slots + s->first, s->count * sizeof *s->slots);
    s->first = first;
    size_t before = gr_mem_usable(s->slots);
    gr_lseg_slot_t *shrunk = gr_mem_realloc(s->slots, capacity * sizeof *shrunk, GR_MEM_LIST);
    if (!shrunk) return;   /* keeping the bigger directory is fine */
    s->allocated += gr_mem_usable(shrunk) - before;
    s->slots = shrunk;
    s->capacity = capacity;
}

/* Inline: after nearly every removal there is nothing to settle. */
static inline void settle(gr_lseg_t *s) {
    if (s->count == 0 || (s->capacity > 32 && s->count * 4 < s->capacity)) settle_work(s);
}

/* Merge slot k's leaf with slot k+1's when both are normal and together stay under 3/4 of
 * a leaf; copies the smaller into the bigger. Returns 1 when merged. */
static int merge_leaves(gr_lseg_t *s, size_t k, leaf_t *a, leaf_t *b);

static inline int try_merge(gr_lseg_t *s, size_t k) {
    if (k + 1 >= s->count) return 0;
    leaf_t *a = slot_at(s, k)->leaf, *b = slot_at(s, k + 1)->leaf;
    if (is_plain(a) || is_plain(b)) return 0;
    uint32_t count = (uint32_t)a->count + b->count;
    uint64_t bytes = (uint64_t)used(a) + used(b) + 2u * cp_needed(BASE0, count);
    if (count > UINT16_MAX || bytes > (uint64_t)(a->size - HEADER) * 3 / 4) return 0;
    return merge_leaves(s, k, a, b);
}

/* try_merge's work once the two fit (out of line: most calls end at the test). */
static int merge_leaves(gr_lseg_t *s, size_t k, leaf_t *a, leaf_t *b) {
    if (used(a) >= used(b)) {
        piece_t piece = {(const uint8_t *)b + b->lo, 0, used(b), b->count, 1};
        if (!leaf_splice(a, a->count, 0, &piece)) return 0;
        leaf_free(s, b);
        dir_remove(s, k + 1, 1);
    } else {
        piece_t piece = {(const uint8_t *)a + a->lo, 0, used(a), a->count, 1};
        if (!leaf_splice(b, 0, 0, &piece)) return 0;
        slot_at(s, k + 1)->start = slot_at(s, k)->start;
        leaf_free(s, a);
        dir_remove(s, k, 1);
    }
    return 1;
}

/* ---- lifecycle ---------------------------------------------------------------------- */

void gr_lseg_init(gr_lseg_t *s, uint32_t leaf_bytes) {
    memset(s, 0, sizeof *s);
    if (!leaf_bytes) leaf_bytes = 8192;
    if (leaf_bytes < GR_LSEG_MIN_LEAF_BYTES) leaf_bytes = GR_LSEG_MIN_LEAF_BYTES;
    if (leaf_bytes > GR_LSEG_MAX_LEAF_BYTES) leaf_bytes = GR_LSEG_MAX_LEAF_BYTES;
    /* glibc puts an 8-byte header before each chunk: asking 8 less makes the chunk exactly
     * leaf_bytes. The leaf then uses whatever usable size the allocator reports. */
    s->leaf_request = leaf_bytes - 8;
    s->plain_threshold = (s->leaf_request - HEADER) / 2;
}

void gr_lseg_release(gr_lseg_t *s) {
    for (size_t k = 0; k < s->count; k++) gr_mem_free(slot_at(s, k)->leaf, GR_MEM_LIST);
    gr_mem_free(s->slots, GR_MEM_LIST);
    gr_lseg_init(s, s->leaf_request + 8);
}

/* ---- access ------------------------------------------------------------------------- */

static void read_entry(const uint8_t *p, const uint8_t **data, size_t *length) {
    size_t n;
    p = varint_get(p, &n);
    *data = p;
    *length = n;
}

int gr_lseg_get(const gr_lseg_t *s, size_t index, const uint8_t **data, size_t *length) {
    if (index >= s->length) return -1;
    uint32_t j;
    const leaf_t *l = slot_at(s, find(s, index, &j))->leaf;
    read_entry((const uint8_t *)l + leaf_offset(l, j), data, length);
    return 0;
}

int gr_lseg_peek(const gr_lseg_t *s, gr_lseg_end_t end, const uint8_t **data, size_t *length) {
    if (!s->length) return -1;
    if (end == GR_LSEG_HEAD) {
        const leaf_t *l = slot_at(s, 0)->leaf;
        read_entry((const uint8_t *)l + l->lo, data, length);
    } else {
        const leaf_t *l = slot_at(s, s->count - 1)->leaf;
        read_entry((const uint8_t *)l + leaf_offset(l, l->count - 1u), data, length);
    }
    return 0;
}

int gr_lseg_push(gr_lseg_t *s, gr_lseg_end_t end, const uint8_t *data, size_t length) {
    if (length > GR_LSEG_MAX_VALUE) return -1;
    uint32_t bytes = varint_size(length) + (uint32_t)length;
    int plain = bytes > s->plain_threshold;
    int tail = end == GR_LSEG_TAIL;
    if (!tail && s->count && slot_at(s, 0)->start == 0) dir_shift(s, 0, ORIGIN);   /* rebase */
    leaf_t *neighbour = NULL;
    if (s->count) {
        gr_lseg_slot_t *at = slot_at(s, tail ? s->count - 1 : 0);
        neighbour = at->leaf;
        if (!plain && (tail ? leaf_push_tail(neighbour, data, length, bytes, s->count == 1)
                            : leaf_push_head(neighbour, data, length, bytes, s->count == 1))) {
            if (!tail) at->start--;
            s->length++;
            return 0;
        }
    }
    if (dir_reserve(s, !tail && s->count > 0, 1)) return -1;
    leaf_t *l = plain ? leaf_new_plain(s, data, length)
                      : leaf_new(s, leaf_average(neighbour, bytes), tail ? PLACE_FRONT : PLACE_BACK);
    if (!l) return -1;
    if (!plain) {
        if (tail) leaf_push_tail(l, data, length, bytes, 0);
        else leaf_push_head(l, data, length, bytes, 0);
    }
    uint64_t start = ORIGIN;
    if (s->count && tail) start = slot_at(s, s->count - 1)->start + neighbour->count;
    else if (s->count) start = slot_at(s, 0)->start - 1;
    dir_insert(s, tail ? s->count : 0, start, l);
    s->length++;
    return 0;
}

int gr_lseg_push_tail_many(gr_lseg_t *s, const uint8_t *const *data, const size_t *lengths, size_t count) {
    size_t i = 0;
    while (i < count) {
        /* the tail leaf takes values in place while they fit without a repack */
        leaf_t *l = s->count ? slot_at(s, s->count - 1)->leaf : NULL;
        if (l && !is_plain(l)) {
            uint8_t *b = (uint8_t *)l;
            size_t appended = 0;
            for (; i < count; i++) {
                size_t length = lengths[i];
                if (length > GR_LSEG_MAX_VALUE) break;
                uint32_t bytes = varint_size(length) + (uint32_t)length;
                if (bytes > s->plain_threshold || l->count == UINT16_MAX || (uint64_t)l->hi + bytes > l->size) break;
                if (l->count && (l->base + l->count) % K == 0) {   /* a group starts: its checkpoint */
                    if (l->cp_count == l->cp_cap) {
                        if (l->lo < cp_end(l) + 2) break;
                        l->cp_cap++;
                    }
                    l->cp[l->cp_count++] = (uint16_t)l->hi;
                }
                entry_put(b + l->hi, data[i], length);
                l->hi += bytes;
                l->count++;
                appended++;
            }
            s->length += appended;
            if (i == count) break;
        }
        /* a new leaf, a plain value, the list's only leaf or a repack: the one-value push */
        if (gr_lseg_push(s, GR_LSEG_TAIL, data[i], lengths[i]) != 0) return -1;
        i++;
    }
    return 0;
}

int gr_lseg_pop(gr_lseg_t *s, gr_lseg_end_t end) {
    if (!s->length) return -1;
    size_t k = end == GR_LSEG_TAIL ? s->count - 1 : 0;
    gr_lseg_slot_t *at = slot_at(s, k);
    leaf_t *l = at->leaf;
    s->length--;
    if (l->count == 1) {
        leaf_free(s, l);
        dir_remove(s, k, 1);
        settle(s);
    } else if (end == GR_LSEG_HEAD) {
        leaf_pop_head(l);
        at->start++;
    } else {
        leaf_pop_tail(l);
    }
    return 0;
}

int gr_lseg_pop_peeked(gr_lseg_t *s, gr_lseg_end_t end, const uint8_t *data, size_t length) {
    if (end == GR_LSEG_HEAD || !s->length) return gr_lseg_pop(s, end);
    gr_lseg_slot_t *at = slot_at(s, s->count - 1);
    leaf_t *l = at->leaf;
    if (l->count == 1) return gr_lseg_pop(s, end);
    /* the entry's length prefix is the shortest varint of its length (entry_put) */
    leaf_pop_tail_at(l, (uint32_t)(data - varint_size(length) - (const uint8_t *)l));
    s->length--;
    return 0;
}

/* Insert where no leaf had room: at a leaf boundary (j == 0) the value gets a new leaf;
 * inside leaf k it is split at j and the value goes to the emptier half, or between them. */
static int insert_structural(gr_lseg_t *s, size_t k, uint32_t j, const uint8_t *data, size_t length,
                             uint32_t bytes, int plain) {
    if (dir_reserve(s, 0, 2)) return -1;
    leaf_t *l = slot_at(s, k)->leaf;
    uint64_t position = slot_at(s, k)->start + j;
    size_t at = k;   /* where a leaf of its own for the value goes */
    size_t right = k + 1;   /* the leaf after the new value, once placed */
    if (j > 0) {
        leaf_t *r = leaf_new(s, leaf_average(l, bytes), PLACE_MIDDLE);
        if (!r) return -1;
        leaf_split(l, j, r);
        dir_insert(s, k + 1, position, r);
        at = k + 1;
        if (!plain) {
            int left_first = used(l) <= used(r);
            for (int attempt = 0; attempt < 2; attempt++) {
                if (left_first == (attempt == 0)) {
                    if (leaf_push_tail(l, data, length, bytes, 0)) { dir_shift(s, k + 1, 1); goto done; }
                } else if (leaf_push_head(r, data, length, bytes, 0)) {
                    dir_shift(s, k + 2, 1);
                    goto done;
                }
            }
        }
        right = k + 2;
    }
    leaf_t *v = plain ? leaf_new_plain(s, data, length) : leaf_new(s, leaf_average(l, bytes), PLACE_MIDDLE);
    if (!v) return -1;   /* a split alone leaves the contents as they were */
    if (!plain) leaf_push_tail(v, data, length, bytes, 0);
    dir_insert(s, at, position, v);
    dir_shift(s, at + 1, 1);
done:
    s->length++;
    if (j > 0) {   /* a split may leave small leaves at its edges: fold them in when cheap */
        try_merge(s, right);
        if (k > 0) try_merge(s, k - 1);
    }
    return 0;
}

int gr_lseg_insert(gr_lseg_t *s, size_t index, const uint8_t *data, size_t length) {
    if (index > s->length || length > GR_LSEG_MAX_VALUE) return -1;
    if (index == 0) return gr_lseg_push(s, GR_LSEG_HEAD, data, length);
    if (index == s->length) return gr_lseg_push(s, GR_LSEG_TAIL, data, length);
    uint32_t bytes = varint_size(length) + (uint32_t)length;
    int plain = bytes > s->plain_threshold;
    uint32_t j;
    size_t k = find(s, index, &j);
    leaf_t *l = slot_at(s, k)->leaf;
    if (!plain) {
        if (j == 0) {   /* k >= 1: the end of the previous leaf is the same place, and cheaper */
            if (leaf_push_tail(slot_at(s, k - 1)->leaf, data, length, bytes, 0)) {
                dir_shift(s, k, 1);
                s->length++;
                return 0;
            }
            if (leaf_push_head(l, data, length, bytes, 0)) {
                dir_shift(s, k + 1, 1);
                s->length++;
                return 0;
            }
        } else {
            piece_t piece = value_piece(data, length);
            if (leaf_splice(l, j, 0, &piece)) {
                dir_shift(s, k + 1, 1);
                s->length++;
                return 0;
            }
        }
    }
    return insert_structural(s, k, j, data, length, bytes, plain);
}

int gr_lseg_set(gr_lseg_t *s, size_t index, const uint8_t *data, size_t length) {
    if (index >= s->length || length > GR_LSEG_MAX_VALUE) return -1;
    uint32_t j;
    leaf_t *l = slot_at(s, find(s, index, &j))->leaf;
    uint8_t *b = (uint8_t *)l;
    uint32_t at = leaf_offset(l, j);
    size_t old;
    const uint8_t *p = varint_get(b + at, &old);
    uint32_t old_bytes = (uint32_t)(p - (b + at)) + (uint32_t)old;
    uint32_t bytes = varint_size(length) + (uint32_t)length;
    if (bytes == old_bytes) {   /* in place */
        entry_put(b + at, data, length);
        return 0;
    }
    if (!is_plain(l) && bytes <= s->plain_threshold) {
        piece_t piece = value_piece(data, length);
        if (leaf_splice(l, j, 1, &piece)) return 0;
    }
    /* no room in the leaf (or a plain value): insert the new one, then drop the old */
    if (gr_lseg_insert(s, index, data, length)) return -1;
    return gr_lseg_delete_range(s, index + 1, 1);
}

int gr_lseg_delete_range(gr_lseg_t *s, size_t start, size_t count) {
    if (start >= s->length || count == 0) return 0;
    if (count > s->length - start) count = s->length - start;
    uint32_t j;
    size_t first = find(s, start, &j), k = first, left = count;
    size_t kill_from = 0, kill_count = 0;
    int front_dropped = 0;
    while (left) {
        gr_lseg_slot_t *at = slot_at(s, k);
        leaf_t *l = at->leaf;
        uint32_t take = l->count - j < left ? l->count - j : (uint32_t)left;
        front_dropped = 0;
        if (take == l->count) {
            leaf_free(s, l);
            if (!kill_count) kill_from = k;
            kill_count++;
        } else if (j == 0) {
            leaf_drop_front(l, take);
            at->start += take;   /* its remaining values keep their positions */
            front_dropped = 1;
        } else if (j + take == l->count) {
            leaf_truncate(l, j);
        } else {
            piece_t none = {NULL, 0, 0, 0, 0};
            leaf_splice(l, j, take, &none);   /* shrinking always fits */
        }
        left -= take;
        j = 0;
        k++;
    }
    /* Deleting from the head keeps every other position; elsewhere what follows moves back. */
    if (start != 0) dir_shift(s, front_dropped ? k - 1 : k, (uint64_t)0 - count);
    if (kill_count) dir_remove(s, kill_from, kill_count);
    s->length -= count;
    if (s->count) {
        try_merge(s, first);
        if (first > 0) try_merge(s, first - 1);
    }
    settle(s);
    return 0;
}

/* Hands `count` entries of one leaf from p on to visit, in runs of up to GR_LSEG_VISIT_RUN;
 * returns where the next one starts. */
static inline const uint8_t *visit_entries(const uint8_t *p, uint32_t count, gr_lseg_visit_fn visit, void *context) {
    gr_bytes_t run[GR_LSEG_VISIT_RUN];
    while (count) {
        uint32_t n = count < GR_LSEG_VISIT_RUN ? count : GR_LSEG_VISIT_RUN;
        for (uint32_t i = 0; i < n; i++) {
            size_t length;
            const uint8_t *data = varint_get(p, &length);
            run[i].data = data;
            run[i].length = (uint32_t)length;   /* values are at most GR_LSEG_MAX_VALUE */
            p = data + length;
        }
        visit(context, run, n);
        count -= n;
    }
    return p;
}

/* delete_range(0, count) that reads each value on its way out: the scan that visits a
 * leaf's values also finds where its survivors start, so no seek, no iterator and no
 * checkpoint walk. The same leaves, slots and merge as delete_range leaves behind. */
size_t gr_lseg_pop_head_each(gr_lseg_t *s, size_t count, gr_lseg_visit_fn visit, void *context) {
    if (count > s->length) count = s->length;
    size_t left = count, emptied = 0;
    while (left) {
        gr_lseg_slot_t *at = slot_at(s, emptied);
        leaf_t *l = at->leaf;
        const uint8_t *b = (const uint8_t *)l;
        uint32_t take = l->count < left ? l->count : (uint32_t)left;
        const uint8_t *p = visit_entries(b + l->lo, take, visit, context);
        left -= take;
        if (take == l->count) {
            leaf_free(s, l);
            emptied++;
        } else {
            leaf_drop_front_at(l, take, (uint32_t)(p - b));
            at->start += take;   /* its remaining values keep their positions */
        }
    }
    if (emptied) dir_remove(s, 0, emptied);
    s->length -= count;
    if (s->count) try_merge(s, 0);
    settle(s);
    return count;
}

/* ---- iteration ---------------------------------------------------------------------- */

void gr_lseg_each(const gr_lseg_t *s, size_t start, size_t count, gr_lseg_visit_fn visit, void *context) {
    if (start >= s->length) return;
    if (count > s->length - start) count = s->length - start;
    uint32_t j;
    size_t k = find(s, start, &j);
    while (count) {
        const leaf_t *l = slot_at(s, k)->leaf;
        uint32_t take = l->count - j < count ? l->count - j : (uint32_t)count;
        visit_entries((const uint8_t *)l + leaf_offset(l, j), take, visit, context);
        count -= take;
        j = 0;
        k++;
    }
}

void gr_lseg_iter_init(gr_lseg_iter_t *it, const gr_lseg_t *s, size_t start_index, int backward) {
    it->list = s;
    it->backward = backward;
    it->pending = 0;
    it->local = 0;
    it->cursor = NULL;
    it->leaf = NULL;
    it->slot = 0;
    if (start_index >= s->length) { it->remaining = 0; return; }
    uint32_t j;
    it->slot = find(s, start_index, &j);
    it->leaf = slot_at(s, it->slot)->leaf;
    if (backward) {
        it->remaining = start_index + 1;
        it->local = j + 1;
    } else {
        it->remaining = s->length - start_index;
        it->cursor = (const uint8_t *)it->leaf + leaf_offset(it->leaf, j);
        it->pending = it->leaf->count - j;
    }
}

/* Backward: stack the offsets of the group before `local` (moving to the previous leaf
 * when local is 0), scanning forward from its checkpoint. */
static void iter_refill(gr_lseg_iter_t *it) {
    if (it->local == 0) {
        it->slot--;
        it->leaf = slot_at(it->list, it->slot)->leaf;
        it->local = it->leaf->count;
    }
    const leaf_t *l = it->leaf;
    const uint8_t *b = (const uint8_t *)l, *p;
    uint32_t last = it->local - 1, ordinal = l->base + last;
    uint32_t group = ordinal / K - l->base / K, first;
    if (group == 0) { first = 0; p = b + l->lo; }
    else { first = ordinal / K * K - l->base; p = b + l->cp[group - 1]; }
    uint32_t n = 0;
    for (uint32_t i = first; i <= last; i++) {
        it->stack[n++] = (uint32_t)(p - b);
        p = entry_skip(p);
    }
    it->pending = n;
    it->local = first;
}

int gr_lseg_iter_next(gr_lseg_iter_t *it, const uint8_t **data, size_t *length) {
    if (!it->remaining) return 0;
    it->remaining--;
    if (!it->backward) {
        if (!it->pending) {
            it->slot++;
            it->leaf = slot_at(it->list, it->slot)->leaf;
            it->cursor = (const uint8_t *)it->leaf + it->leaf->lo;
            it->pending = it->leaf->count;
        }
        size_t n;
        const uint8_t *p = varint_get(it->cursor, &n);
        *data = p;
        *length = n;
        it->cursor = p + n;
        it->pending--;
        return 1;
    }
    if (!it->pending) iter_refill(it);
    read_entry((const uint8_t *)it->leaf + it->stack[--it->pending], data, length);
    return 1;
}

/* ---- queries ------------------------------------------------------------------------ */

size_t gr_lseg_length(const gr_lseg_t *s) { return s->length; }
size_t gr_lseg_allocated_bytes(const gr_lseg_t *s) { return s->allocated; }
size_t gr_lseg_leaf_count(const gr_lseg_t *s) { return s->count; }

void gr_lseg_internals(const gr_lseg_t *s, gr_lseg_internals_t *out) {
    memset(out, 0, sizeof *out);
    out->elements = s->length;
    out->leaves = s->count;
    out->front_slack = s->first;
    out->back_slack = s->capacity - s->first - s->count;
    out->order_structure_bytes = s->slots ? gr_mem_usable(s->slots) : 0;
    for (size_t k = 0; k < s->count; k++) {
        const leaf_t *l = slot_at(s, k)->leaf;
        size_t usable = gr_mem_usable(l);
        out->live_value_bytes += l->hi - l->lo;
        out->value_bytes_allocated += usable - cp_end(l);
        out->order_structure_bytes += cp_end(l);
    }
    out->total_allocated_bytes = s->allocated;
}

static int leaf_check(const gr_lseg_t *s, const leaf_t *l) {
    if (l->count == 0 || l->size > gr_mem_usable(l) || l->cp_count > l->cp_cap) return -1;
    if (l->lo < cp_end(l) || l->lo > l->hi || l->hi > l->size) return -1;
    if (is_plain(l)) {
        if (l->count != 1 || l->cp_cap != 0 || l->lo != HEADER) return -1;
    } else if (l->size != s->leaf_request) {
        return -1;
    }
    if ((uint64_t)l->base + l->count > UINT32_MAX) return -1;
    if (l->cp_count != cp_needed(l->base, l->count)) return -1;
    const uint8_t *b = (const uint8_t *)l;
    uint32_t offset = l->lo;
    for (uint32_t i = 0; i < l->count; i++) {
        if (offset >= l->hi) return -1;
        uint32_t ordinal = l->base + i;
        if (i && ordinal % K == 0 && l->cp[ordinal / K - l->base / K - 1] != offset) return -1;
        size_t n;
        const uint8_t *p = varint_get(b + offset, &n);
        uint64_t bytes = (uint64_t)(p - (b + offset)) + n;
        if (offset + bytes > l->hi) return -1;
        if (is_plain(l) ? bytes <= s->plain_threshold : bytes > s->plain_threshold) return -1;
        offset += (uint32_t)bytes;
    }
    return offset == l->hi ? 0 : -1;
}

int gr_lseg_check(const gr_lseg_t *s) {
    if (s->count == 0) return s->length == 0 && s->slots == NULL && s->allocated == 0 ? 0 : -1;
    if (s->first + s->count > s->capacity || s->capacity * sizeof *s->slots > gr_mem_usable(s->slots)) return -1;
    size_t total = gr_mem_usable(s->slots), length = 0;
    for (size_t k = 0; k < s->count; k++) {
        const gr_lseg_slot_t *at = slot_at(s, k);
        if (!at->leaf || leaf_check(s, at->leaf)) return -1;
        if (k + 1 < s->count && slot_at(s, k + 1)->start != at->start + at->leaf->count) return -1;
        length += at->leaf->count;
        total += gr_mem_usable(at->leaf);
    }
    return length == s->length && total == s->allocated ? 0 : -1;
}

/* ---- bulk --------------------------------------------------------------------------- */

int64_t gr_lseg_remove_matching(gr_lseg_t *s, const uint8_t *data, size_t length, int64_t count) {
    if (!s->length) return 0;
    uint64_t limit = count > 0 ? (uint64_t)count : count < 0 ? (uint64_t)(-(count + 1)) + 1 : UINT64_MAX;
    size_t from = 0;
    if (count < 0) {
        /* The |count|-th match from the tail: removing every match from there on removes
         * exactly the last |count|. */
        gr_lseg_iter_t it;
        gr_lseg_iter_init(&it, s, s->length - 1, 1);
        size_t index = s->length;
        uint64_t seen = 0;
        const uint8_t *value;
        size_t value_length;
        while (gr_lseg_iter_next(&it, &value, &value_length)) {
            index--;
            if (value_length == length && (length == 0 || memcmp(value, data, length) == 0) && ++seen == limit) {
                from = index;
                break;
            }
        }
        if (seen == 0) return 0;
        if (seen < limit) from = 0;
    }
    uint32_t j;
    size_t k = find(s, from, &j), write = k, read;
    uint64_t next_start = slot_at(s, k)->start, removed = 0;
    for (read = k; read < s->count && removed < limit; read++, j = 0) {
        leaf_t *l = slot_at(s, read)->leaf;
        uint32_t gone = leaf_filter(l, j, data, length, limit - removed);
        removed += gone;
        if (l->count == 0) { leaf_free(s, l); continue; }
        if (gone && write > 0) {   /* fold into the previous survivor when cheap */
            leaf_t *previous = slot_at(s, write - 1)->leaf;
            uint32_t together = (uint32_t)previous->count + l->count;
            if (!is_plain(previous) && !is_plain(l) && together <= UINT16_MAX &&
                (uint64_t)used(previous) + used(l) + 2u * cp_needed(BASE0, together) <=
                    (uint64_t)(previous->size - HEADER) * 3 / 4) {
                piece_t piece = {(const uint8_t *)l + l->lo, 0, used(l), l->count, 1};
                if (leaf_splice(previous, previous->count, 0, &piece)) {
                    next_start += l->count;
                    leaf_free(s, l);
                    continue;
                }
            }
        }
        slot_at(s, write)->start = next_start;
        slot_at(s, write)->leaf = l;
        next_start += l->count;
        write++;
    }
    size_t rest = s->count - read;
    memmove(slot_at(s, write), slot_at(s, read), rest * sizeof *s->slots);
    s->count = write + rest;
    dir_shift(s, write, (uint64_t)0 - removed);
    s->length -= removed;
    settle(s);
    return (int64_t)removed;
}
