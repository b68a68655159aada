/* array_classic.c — the classic array engine: a sorted directory of 1024-index slices, each
 * sparse (sorted u32 entries) or dense (bitmap + u16 positions), values packed in a per-slice
 * blob (small ones inline, larger ones behind a pointer). The layout is drawn in
 * array_classic.h; the engine-neutral value is array.c.
 */
#include "engines/array/array_classic.h"

#include <string.h>

#include "engines/array/array.h"

#define SPAN GR_ARC_SLICE_SPAN
#define OFF_MASK (SPAN - 1)
#define BIT_WORDS (SPAN / 64)
#define NO_POS 0xFFFFu
#define HEAP_MARK 0xFFu
#define BLOB_LIMIT 65535u
#define DENSE_INDEX_BYTES (BIT_WORDS * 8 + SPAN * 2)

typedef struct slice {
    uint64_t id;        /* index >> GR_ARC_SLICE_BITS */
    uint8_t *index;     /* sparse: u32 entries[cap]; dense: u64 bits[16] + u16 pos[1024] */
    uint8_t *blob;
    uint16_t count;     /* set slots, 1 .. 1024 */
    uint16_t cap;       /* sparse: entry capacity */
    uint16_t used, room, dead;   /* blob bytes written, allocated, dead */
    uint8_t dense;
} slice_t;

typedef struct classic {
    slice_t *slices;    /* sorted by id */
    size_t n, cap;
    size_t hint;        /* the slice last found */
    uint64_t count;
    uint64_t heap_bytes;   /* usable bytes of the out-of-line values */
    uint64_t heap_values;
} classic_t;

/* ---- slice internals ---- */

static inline uint32_t *entries(const slice_t *s) { return (uint32_t *)(void *)s->index; }
static inline uint64_t *bits(const slice_t *s) { return (uint64_t *)(void *)s->index; }
static inline uint16_t *dense_pos(const slice_t *s) { return (uint16_t *)(void *)(s->index + BIT_WORDS * 8); }

static inline size_t entry_size(const uint8_t *at) { return at[0] == HEAP_MARK ? 9 : (size_t)at[0] + 1; }

static inline void decode(const uint8_t *at, const uint8_t **data, size_t *length) {
    if (at[0] != HEAP_MARK) {
        *length = at[0];
        *data = at + 1;
        return;
    }
    const uint8_t *block;
    memcpy(&block, at + 1, sizeof block);
    uint64_t n;
    memcpy(&n, block, 8);
    *length = (size_t)n;
    *data = block + 8;
}

/* Sparse: position of the first entry whose offset >= off; *found when equal. */
static uint32_t sparse_find(const slice_t *s, uint32_t off, int *found) {
    const uint32_t *e = entries(s);
    uint32_t lo = 0, hi = s->count;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if ((e[mid] >> 16) < off) lo = mid + 1; else hi = mid;
    }
    *found = lo < s->count && (e[lo] >> 16) == off;
    return lo;
}

/* Blob position of slot off, or NO_POS. */
static uint32_t slot_pos(const slice_t *s, uint32_t off) {
    if (s->dense) return dense_pos(s)[off];
    int found;
    uint32_t at = sparse_find(s, off, &found);
    return found ? (entries(s)[at] & 0xFFFFu) : NO_POS;
}

static void set_slot_pos(slice_t *s, uint32_t off, uint32_t pos) {
    if (s->dense) { dense_pos(s)[off] = (uint16_t)pos; return; }
    int found;
    uint32_t at = sparse_find(s, off, &found);
    entries(s)[at] = (off << 16) | pos;
}

/* Free what a blob entry points to and count its bytes dead. */
static void kill_entry(classic_t *c, slice_t *s, uint32_t pos) {
    uint8_t *at = s->blob + pos;
    if (at[0] == HEAP_MARK) {
        uint8_t *block;
        memcpy(&block, at + 1, sizeof block);
        c->heap_bytes -= gr_mem_usable(block);
        c->heap_values--;
        gr_mem_free(block, GR_MEM_ARRAY);
    }
    s->dead += (uint16_t)entry_size(at);
}

/* Rewrite the blob with only the live entries, in slot order, into a block of new_room
 * bytes (>= the live bytes). 0, or -1 (OOM: nothing changed). */
static int compact(slice_t *s, uint32_t new_room) {
    uint8_t *fresh = gr_mem_alloc(new_room ? new_room : 1, GR_MEM_ARRAY);
    if (!fresh) return -1;
    uint32_t at = 0;
    if (s->dense) {
        uint16_t *pos = dense_pos(s);
        for (uint32_t off = 0; off < SPAN; off++) {
            if (pos[off] == NO_POS) continue;
            size_t n = entry_size(s->blob + pos[off]);
            memcpy(fresh + at, s->blob + pos[off], n);
            pos[off] = (uint16_t)at;
            at += (uint32_t)n;
        }
    } else {
        uint32_t *e = entries(s);
        for (uint32_t i = 0; i < s->count; i++) {
            uint32_t pos = e[i] & 0xFFFFu;
            size_t n = entry_size(s->blob + pos);
            memcpy(fresh + at, s->blob + pos, n);
            e[i] = (e[i] & 0xFFFF0000u) | at;
            at += (uint32_t)n;
        }
    }
    gr_mem_free(s->blob, GR_MEM_ARRAY);
    s->blob = fresh;
    s->used = (uint16_t)at;
    s->room = (uint16_t)(new_room > BLOB_LIMIT ? BLOB_LIMIT : new_room);
    s->dead = 0;
    return 0;
}

/* Make room for need more blob bytes: grow by a quarter, or compact when the dead bytes
 * would cover it or the blob would pass 64 KiB. 0, or -1 (OOM). */
static int blob_reserve(slice_t *s, uint32_t need) {
    if ((uint32_t)s->used + need <= s->room) return 0;
    uint32_t live = (uint32_t)s->used - s->dead;
    if (s->dead >= need || (uint32_t)s->used + need > BLOB_LIMIT) {
        uint32_t room = live + need;
        room += room / 8;
        if (room > BLOB_LIMIT) room = BLOB_LIMIT;
        return compact(s, room);
    }
    uint32_t room = (uint32_t)s->room + s->room / 4 + 32;
    if (room < (uint32_t)s->used + need) room = (uint32_t)s->used + need;
    if (room > BLOB_LIMIT) room = BLOB_LIMIT;
    uint8_t *grown = gr_mem_realloc(s->blob, room, GR_MEM_ARRAY);
    if (!grown) return -1;
    s->blob = grown;
    s->room = (uint16_t)room;
    return 0;
}

/* Append a value to the blob: its position, or -1 (OOM: nothing changed). */
static int64_t blob_append(classic_t *c, slice_t *s, const uint8_t *data, size_t length) {
    uint32_t need = length <= GR_ARC_INLINE_MAX ? (uint32_t)length + 1 : 9;
    uint8_t *block = NULL;
    if (length > GR_ARC_INLINE_MAX) {
        block = gr_mem_alloc(8 + length, GR_MEM_ARRAY);
        if (!block) return -1;
        uint64_t n = length;
        memcpy(block, &n, 8);
        memcpy(block + 8, data, length);
    }
    if (blob_reserve(s, need) != 0) {
        if (block) gr_mem_free(block, GR_MEM_ARRAY);
        return -1;
    }
    uint32_t pos = s->used;
    uint8_t *at = s->blob + pos;
    if (block) {
        at[0] = HEAP_MARK;
        memcpy(at + 1, &block, sizeof block);
        c->heap_bytes += gr_mem_usable(block);
        c->heap_values++;
    } else {
        at[0] = (uint8_t)length;
        if (length) memcpy(at + 1, data, length);
    }
    s->used = (uint16_t)(pos + need);
    return pos;
}

/* After removals: compact a blob that is mostly dead (shrinking it). */
static void maybe_shrink_blob(slice_t *s) {
    if (s->dead > 64 && s->dead * 2 > s->used) {
        uint32_t live = (uint32_t)s->used - s->dead;
        compact(s, live + live / 8 + 16);   /* on OOM the blob just stays as it is */
    }
}

static int to_dense(slice_t *s) {
    uint8_t *index = gr_mem_alloc(DENSE_INDEX_BYTES, GR_MEM_ARRAY);
    if (!index) return -1;
    uint64_t *b = (uint64_t *)(void *)index;
    uint16_t *pos = (uint16_t *)(void *)(index + BIT_WORDS * 8);
    memset(b, 0, BIT_WORDS * 8);
    memset(pos, 0xFF, SPAN * 2);
    const uint32_t *e = entries(s);
    for (uint32_t i = 0; i < s->count; i++) {
        uint32_t off = e[i] >> 16;
        b[off / 64] |= 1ull << (off % 64);
        pos[off] = (uint16_t)(e[i] & 0xFFFFu);
    }
    gr_mem_free(s->index, GR_MEM_ARRAY);
    s->index = index;
    s->dense = 1;
    s->cap = 0;
    return 0;
}

static uint16_t sparse_cap_for(uint32_t count) {
    uint32_t cap = 4;
    while (cap < count) cap *= 2;
    return (uint16_t)cap;
}

static int to_sparse(slice_t *s) {
    uint16_t cap = sparse_cap_for(s->count);
    uint32_t *e = gr_mem_alloc((size_t)cap * 4, GR_MEM_ARRAY);
    if (!e) return -1;
    const uint16_t *pos = dense_pos(s);
    uint32_t n = 0;
    for (uint32_t off = 0; off < SPAN; off++)
        if (pos[off] != NO_POS) e[n++] = (off << 16) | pos[off];
    gr_mem_free(s->index, GR_MEM_ARRAY);
    s->index = (uint8_t *)e;
    s->dense = 0;
    s->cap = cap;
    return 0;
}

static void slice_release(classic_t *c, slice_t *s) {
    if (c->heap_values) {
        /* free every out-of-line value */
        if (s->dense) {
            const uint16_t *pos = dense_pos(s);
            for (uint32_t off = 0; off < SPAN; off++)
                if (pos[off] != NO_POS && s->blob[pos[off]] == HEAP_MARK) kill_entry(c, s, pos[off]);
        } else {
            const uint32_t *e = entries(s);
            for (uint32_t i = 0; i < s->count; i++)
                if (s->blob[e[i] & 0xFFFFu] == HEAP_MARK) kill_entry(c, s, e[i] & 0xFFFFu);
        }
    }
    gr_mem_free(s->index, GR_MEM_ARRAY);
    gr_mem_free(s->blob, GR_MEM_ARRAY);
}

/* ---- the directory ---- */

/* Position of the first slice with id >= id; *found when equal. */
static size_t dir_find(classic_t *c, uint64_t id, int *found) {
    size_t h = c->hint;
    if (h < c->n && c->slices[h].id == id) { *found = 1; return h; }
    if (h + 1 < c->n && c->slices[h + 1].id == id) { *found = 1; c->hint = h + 1; return h + 1; }
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->slices[mid].id < id) lo = mid + 1; else hi = mid;
    }
    *found = lo < c->n && c->slices[lo].id == id;
    if (*found) c->hint = lo;
    return lo;
}

static size_t dir_find_const(const classic_t *c, uint64_t id, int *found) {
    return dir_find((classic_t *)c, id, found);   /* only the hint changes */
}

/* A new empty slice at position at: its record, or NULL (OOM). */
static slice_t *dir_insert(classic_t *c, size_t at, uint64_t id) {
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap + c->cap / 2 + 1 : 1;
        slice_t *grown = gr_mem_realloc(c->slices, cap * sizeof *grown, GR_MEM_ARRAY);
        if (!grown) return NULL;
        c->slices = grown;
        c->cap = cap;
    }
    uint32_t *e = gr_mem_alloc(4 * 4, GR_MEM_ARRAY);
    uint8_t *blob = gr_mem_alloc(24, GR_MEM_ARRAY);
    if (!e || !blob) {
        gr_mem_free(e, GR_MEM_ARRAY);
        gr_mem_free(blob, GR_MEM_ARRAY);
        return NULL;
    }
    memmove(c->slices + at + 1, c->slices + at, (c->n - at) * sizeof *c->slices);
    c->n++;
    slice_t *s = &c->slices[at];
    memset(s, 0, sizeof *s);
    s->id = id;
    s->index = (uint8_t *)e;
    s->cap = 4;
    s->blob = blob;
    s->room = 24;
    c->hint = at;
    return s;
}

static void dir_remove(classic_t *c, size_t at) {
    slice_release(c, &c->slices[at]);
    memmove(c->slices + at, c->slices + at + 1, (c->n - at - 1) * sizeof *c->slices);
    c->n--;
    c->hint = at ? at - 1 : 0;
    if (c->n == 0) {
        gr_mem_free(c->slices, GR_MEM_ARRAY);
        c->slices = NULL;
        c->cap = 0;
    } else if (c->n * 4 < c->cap && c->cap > 8) {
        size_t cap = c->n * 2;
        slice_t *shrunk = gr_mem_realloc(c->slices, cap * sizeof *shrunk, GR_MEM_ARRAY);
        if (shrunk) { c->slices = shrunk; c->cap = cap; }
    }
}

/* ---- ops ---- */

static void *classic_create(void) {
    classic_t *c = gr_mem_alloc(sizeof *c, GR_MEM_ARRAY);
    if (c) memset(c, 0, sizeof *c);
    return c;
}

static void classic_free(void *impl) {
    classic_t *c = impl;
    if (!c) return;
    for (size_t i = 0; i < c->n; i++) slice_release(c, &c->slices[i]);
    gr_mem_free(c->slices, GR_MEM_ARRAY);
    gr_mem_free(c, GR_MEM_ARRAY);
}

static int classic_set(void *impl, uint64_t index, const uint8_t *data, size_t length) {
    classic_t *c = impl;
    uint64_t id = index >> GR_ARC_SLICE_BITS;
    uint32_t off = (uint32_t)(index & OFF_MASK);
    int found;
    size_t at = dir_find(c, id, &found);
    slice_t *s = found ? &c->slices[at] : dir_insert(c, at, id);
    if (!s) return GR_ARRAY_E_NOMEM;
    uint32_t old = slot_pos(s, off);
    if (old != NO_POS) {
        int64_t pos = blob_append(c, s, data, length);
        if (pos < 0) return GR_ARRAY_E_NOMEM;
        kill_entry(c, s, slot_pos(s, off));   /* its position may have moved in a compaction */
        set_slot_pos(s, off, (uint32_t)pos);
        maybe_shrink_blob(s);
        return 0;
    }
    /* a new slot: make its index room first, then its value */
    if (!s->dense && s->count >= GR_ARC_SPARSE_MAX) {
        if (to_dense(s) != 0) goto fail_new;
    } else if (!s->dense && s->count == s->cap) {
        uint32_t *grown = gr_mem_realloc(s->index, (size_t)s->cap * 2 * 4, GR_MEM_ARRAY);
        if (!grown) goto fail_new;
        s->index = (uint8_t *)grown;
        s->cap = (uint16_t)(s->cap * 2);
    }
    int64_t pos = blob_append(c, s, data, length);
    if (pos < 0) goto fail_new;
    if (s->dense) {
        bits(s)[off / 64] |= 1ull << (off % 64);
        dense_pos(s)[off] = (uint16_t)pos;
    } else {
        int f;
        uint32_t *e = entries(s);
        uint32_t i = sparse_find(s, off, &f);
        memmove(e + i + 1, e + i, (size_t)(s->count - i) * 4);
        e[i] = (off << 16) | (uint32_t)pos;
    }
    s->count++;
    c->count++;
    return 1;
fail_new:
    if (s->count == 0) dir_remove(c, at);
    return GR_ARRAY_E_NOMEM;
}

static int classic_get(const void *impl, uint64_t index, const uint8_t **data, size_t *length,
                       uint8_t scratch[GR_ARRAY_SCRATCH_BYTES]) {
    (void)scratch;
    const classic_t *c = impl;
    int found;
    size_t at = dir_find_const(c, index >> GR_ARC_SLICE_BITS, &found);
    if (!found) return 0;
    const slice_t *s = &c->slices[at];
    uint32_t pos = slot_pos(s, (uint32_t)(index & OFF_MASK));
    if (pos == NO_POS) return 0;
    decode(s->blob + pos, data, length);
    return 1;
}

/* Remove slot off of the slice at position at (it is set). Returns whether the slice went. */
static int remove_slot(classic_t *c, size_t at, uint32_t off) {
    slice_t *s = &c->slices[at];
    if (s->dense) {
        kill_entry(c, s, dense_pos(s)[off]);
        dense_pos(s)[off] = NO_POS;
        bits(s)[off / 64] &= ~(1ull << (off % 64));
    } else {
        int f;
        uint32_t i = sparse_find(s, off, &f);
        kill_entry(c, s, entries(s)[i] & 0xFFFFu);
        memmove(entries(s) + i, entries(s) + i + 1, (size_t)(s->count - i - 1) * 4);
    }
    s->count--;
    c->count--;
    return s->count == 0;
}

/* After removals from a slice that still has slots: convert, shrink. */
static void settle(slice_t *s) {
    if (s->dense && s->count < GR_ARC_DENSE_MIN) to_sparse(s);   /* on OOM it stays dense */
    else if (!s->dense && s->cap > 8 && s->count * 4 <= s->cap) {
        uint16_t cap = sparse_cap_for(s->count);
        uint32_t *shrunk = gr_mem_realloc(s->index, (size_t)cap * 4, GR_MEM_ARRAY);
        if (shrunk) { s->index = (uint8_t *)shrunk; s->cap = cap; }
    }
    maybe_shrink_blob(s);
}

static int classic_remove(void *impl, uint64_t index) {
    classic_t *c = impl;
    int found;
    size_t at = dir_find(c, index >> GR_ARC_SLICE_BITS, &found);
    if (!found) return 0;
    uint32_t off = (uint32_t)(index & OFF_MASK);
    if (slot_pos(&c->slices[at], off) == NO_POS) return 0;
    if (remove_slot(c, at, off)) dir_remove(c, at);
    else settle(&c->slices[at]);
    return 1;
}

static uint64_t classic_remove_range(void *impl, uint64_t lo, uint64_t hi) {
    classic_t *c = impl;
    uint64_t removed = 0;
    int found;
    size_t at = dir_find(c, lo >> GR_ARC_SLICE_BITS, &found);
    while (at < c->n && c->slices[at].id <= (hi >> GR_ARC_SLICE_BITS)) {
        slice_t *s = &c->slices[at];
        uint32_t olo = s->id == (lo >> GR_ARC_SLICE_BITS) ? (uint32_t)(lo & OFF_MASK) : 0;
        uint32_t ohi = s->id == (hi >> GR_ARC_SLICE_BITS) ? (uint32_t)(hi & OFF_MASK) : OFF_MASK;
        if (olo == 0 && ohi == OFF_MASK) {   /* the whole slice */
            removed += s->count;
            c->count -= s->count;
            dir_remove(c, at);
            continue;
        }
        int gone = 0;
        if (s->dense) {
            for (uint32_t off = olo; off <= ohi && !gone; off++)
                if (dense_pos(s)[off] != NO_POS) { gone = remove_slot(c, at, off); removed++; }
        } else {
            int f;
            uint32_t first = sparse_find(s, olo, &f), last = first;
            while (last < s->count && (entries(s)[last] >> 16) <= ohi) {
                kill_entry(c, s, entries(s)[last] & 0xFFFFu);
                last++;
            }
            uint32_t n = last - first;
            memmove(entries(s) + first, entries(s) + last, (size_t)(s->count - last) * 4);
            s->count = (uint16_t)(s->count - n);
            c->count -= n;
            removed += n;
            gone = s->count == 0;
        }
        if (gone) { dir_remove(c, at); continue; }
        settle(s);
        at++;
    }
    return removed;
}

/* Lowest set offset >= off in s, or -1. */
static int64_t slice_next(const slice_t *s, uint32_t off) {
    if (s->dense) {
        const uint64_t *b = bits(s);
        uint32_t w = off / 64;
        uint64_t word = b[w] & (~0ull << (off % 64));
        for (;;) {
            if (word) return (int64_t)(w * 64 + (uint32_t)__builtin_ctzll(word));
            if (++w == BIT_WORDS) return -1;
            word = b[w];
        }
    }
    int f;
    uint32_t i = sparse_find(s, off, &f);
    return i < s->count ? (int64_t)(entries(s)[i] >> 16) : -1;
}

/* Highest set offset <= off in s, or -1. */
static int64_t slice_prev(const slice_t *s, uint32_t off) {
    if (s->dense) {
        const uint64_t *b = bits(s);
        int32_t w = (int32_t)(off / 64);
        uint32_t shift = 63 - off % 64;
        uint64_t word = (b[w] << shift) >> shift;
        for (;;) {
            if (word) return (int64_t)(w * 64 + 63 - __builtin_clzll(word));
            if (--w < 0) return -1;
            word = b[w];
        }
    }
    int f;
    uint32_t i = sparse_find(s, off, &f);
    if (f) return off;
    return i ? (int64_t)(entries(s)[i - 1] >> 16) : -1;
}

static int classic_next_at_or_after(const void *impl, uint64_t index, uint64_t *found_index) {
    const classic_t *c = impl;
    int found;
    size_t at = dir_find_const(c, index >> GR_ARC_SLICE_BITS, &found);
    if (found) {
        int64_t off = slice_next(&c->slices[at], (uint32_t)(index & OFF_MASK));
        if (off >= 0) {
            *found_index = (c->slices[at].id << GR_ARC_SLICE_BITS) | (uint64_t)off;
            return 1;
        }
        at++;
    }
    if (at >= c->n) return 0;
    *found_index = (c->slices[at].id << GR_ARC_SLICE_BITS) | (uint64_t)slice_next(&c->slices[at], 0);
    return 1;
}

static int classic_last_before(const void *impl, uint64_t index, uint64_t *found_index) {
    const classic_t *c = impl;
    if (index == 0 || c->n == 0) return 0;
    uint64_t target = index - 1;
    int found;
    size_t at = dir_find_const(c, target >> GR_ARC_SLICE_BITS, &found);
    if (found) {
        int64_t off = slice_prev(&c->slices[at], (uint32_t)(target & OFF_MASK));
        if (off >= 0) {
            *found_index = (c->slices[at].id << GR_ARC_SLICE_BITS) | (uint64_t)off;
            return 1;
        }
    }
    if (at == 0) return 0;
    at--;
    *found_index = (c->slices[at].id << GR_ARC_SLICE_BITS) | (uint64_t)slice_prev(&c->slices[at], OFF_MASK);
    return 1;
}

static uint64_t classic_count(const void *impl) { return ((const classic_t *)impl)->count; }

static size_t classic_allocated_bytes(const void *impl) {
    const classic_t *c = impl;
    size_t total = gr_mem_usable(c) + gr_mem_usable(c->slices) + c->heap_bytes;
    for (size_t i = 0; i < c->n; i++) total += gr_mem_usable(c->slices[i].index) + gr_mem_usable(c->slices[i].blob);
    return total;
}

static const char *classic_encoding(const void *impl) {
    (void)impl;
    return "sliced-array";   /* Redis 8.8's OBJECT ENCODING for arrays */
}

static void *classic_duplicate(const void *impl) {
    const classic_t *c = impl;
    classic_t *copy = classic_create();
    if (!copy) return NULL;
    if (c->n == 0) return copy;
    copy->slices = gr_mem_alloc(c->n * sizeof *copy->slices, GR_MEM_ARRAY);
    if (!copy->slices) goto fail;
    copy->cap = c->n;
    for (size_t i = 0; i < c->n; i++) {
        const slice_t *s = &c->slices[i];
        slice_t *d = &copy->slices[i];
        *d = *s;
        size_t index_bytes = s->dense ? DENSE_INDEX_BYTES : (size_t)s->cap * 4;
        d->index = gr_mem_alloc(index_bytes, GR_MEM_ARRAY);
        d->blob = gr_mem_alloc(s->room ? s->room : 1, GR_MEM_ARRAY);
        if (!d->index || !d->blob) {
            gr_mem_free(d->index, GR_MEM_ARRAY);
            gr_mem_free(d->blob, GR_MEM_ARRAY);
            goto fail;
        }
        copy->n = i + 1;
        memcpy(d->index, s->index, index_bytes);
        memcpy(d->blob, s->blob, s->used);
        /* out-of-line values: a copy of each (a failure is unwound below) */
        for (uint32_t off = 0; c->heap_values && off < SPAN; off++) {
            uint32_t pos = slot_pos(d, off);
            if (pos == NO_POS || d->blob[pos] != HEAP_MARK) continue;
            uint8_t *block;
            memcpy(&block, d->blob + pos + 1, sizeof block);
            size_t bytes = gr_mem_usable(block);
            uint64_t n;
            memcpy(&n, block, 8);
            uint8_t *fresh = gr_mem_alloc(8 + (size_t)n, GR_MEM_ARRAY);
            if (!fresh) {
                d->blob[pos] = 0;   /* an empty inline value in its place */
                goto fail;
            }
            memcpy(fresh, block, 8 + (size_t)n);
            memcpy(d->blob + pos + 1, &fresh, sizeof fresh);
            copy->heap_bytes += gr_mem_usable(fresh);
            copy->heap_values++;
            (void)bytes;
        }
    }
    copy->count = c->count;
    return copy;
fail:
    /* blocks not yet copied still point at the source's: mark them inline before freeing */
    for (size_t i = 0; i < copy->n; i++) {
        slice_t *d = &copy->slices[i];
        for (uint32_t off = 0; off < SPAN; off++) {
            uint32_t pos = slot_pos(d, off);
            if (pos == NO_POS || d->blob[pos] != HEAP_MARK) continue;
            const slice_t *s = &c->slices[i];
            if (memcmp(d->blob + pos + 1, s->blob + pos + 1, 8) == 0) d->blob[pos] = 0;
        }
    }
    copy->heap_values = copy->heap_values ? copy->heap_values : 1;   /* make release walk the blobs */
    classic_free(copy);
    return NULL;
}

static int classic_save(const void *impl, gr_snapshot_writer_t *out) {
    return gr_array_save_entries(&gr_array_classic_engine, impl, out);
}

static void *classic_load(gr_snapshot_reader_t *in) { return gr_array_load_entries(&gr_array_classic_engine, in); }

void gr_arc_stats(const void *impl, gr_arc_stats_t *stats) {
    const classic_t *c = impl;
    memset(stats, 0, sizeof *stats);
    stats->slices = c->n;
    stats->directory_capacity = c->cap;
    stats->heap_values = c->heap_values;
    for (size_t i = 0; i < c->n; i++) {
        if (c->slices[i].dense) stats->dense_slices++; else stats->sparse_slices++;
        stats->blob_bytes += c->slices[i].used;
        stats->dead_bytes += c->slices[i].dead;
    }
}

static size_t classic_info(const void *impl, int full, gr_array_info_field_t *fields) {
    const classic_t *c = impl;
    size_t n = 0;
    fields[n++] = (gr_array_info_field_t){.name = "slices", .integer = c->n};
    fields[n++] = (gr_array_info_field_t){.name = "directory-size", .integer = c->cap};
    fields[n++] = (gr_array_info_field_t){.name = "super-dir-entries", .integer = 0};
    fields[n++] = (gr_array_info_field_t){.name = "slice-size", .integer = SPAN};
    if (full) {
        uint64_t dense = 0, sparse = 0, dense_count = 0, sparse_cap = 0;
        for (size_t i = 0; i < c->n; i++) {
            if (c->slices[i].dense) { dense++; dense_count += c->slices[i].count; }
            else { sparse++; sparse_cap += c->slices[i].cap; }
        }
        fields[n++] = (gr_array_info_field_t){.name = "dense-slices", .integer = dense};
        fields[n++] = (gr_array_info_field_t){.name = "sparse-slices", .integer = sparse};
        fields[n++] = (gr_array_info_field_t){.name = "avg-dense-size", .is_double = 1, .real = dense ? SPAN : 0};
        fields[n++] = (gr_array_info_field_t){.name = "avg-dense-fill", .is_double = 1,
                                              .real = dense ? (double)dense_count / ((double)dense * SPAN) : 0};
        fields[n++] = (gr_array_info_field_t){.name = "avg-sparse-size", .is_double = 1,
                                              .real = sparse ? (double)sparse_cap / (double)sparse : 0};
    }
    return n;
}

int gr_arc_check(const void *impl) {
    const classic_t *c = impl;
    uint64_t total = 0;
    for (size_t i = 0; i < c->n; i++) {
        const slice_t *s = &c->slices[i];
        if (i && c->slices[i - 1].id >= s->id) return -1;
        if (s->count == 0 || s->used > s->room || s->dead > s->used) return -1;
        uint32_t n = 0, live = 0;
        if (s->dense) {
            for (uint32_t off = 0; off < SPAN; off++) {
                int bit = (int)((bits(s)[off / 64] >> (off % 64)) & 1);
                if (bit != (dense_pos(s)[off] != NO_POS)) return -1;
                if (bit) { n++; live += (uint32_t)entry_size(s->blob + dense_pos(s)[off]); }
            }
        } else {
            if (s->count > s->cap) return -1;
            for (uint32_t k = 0; k < s->count; k++) {
                if (k && (entries(s)[k - 1] >> 16) >= (entries(s)[k] >> 16)) return -1;
                if ((entries(s)[k] & 0xFFFFu) >= s->used) return -1;
                live += (uint32_t)entry_size(s->blob + (entries(s)[k] & 0xFFFFu));
            }
            n = s->count;
        }
        if (n != s->count || live + s->dead != s->used) return -1;
        total += n;
    }
    return total == c->count ? 0 : -1;
}

const gr_array_engine_t gr_array_classic_engine = {
    .kind = GR_ARRAY_ENGINE_CLASSIC,
    .name = "classic",
    .create = classic_create,
    .free = classic_free,
    .duplicate = classic_duplicate,
    .set = classic_set,
    .get = classic_get,
    .remove = classic_remove,
    .remove_range = classic_remove_range,
    .next_at_or_after = classic_next_at_or_after,
    .last_before = classic_last_before,
    .count = classic_count,
    .allocated_bytes = classic_allocated_bytes,
    .encoding = classic_encoding,
    .info = classic_info,
    .save = classic_save,
    .load = classic_load,
    .reserve = NULL,
};
