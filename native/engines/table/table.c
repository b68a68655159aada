/* table.c — the table engine sets and hashes share: an arena of blocks holding the
 * entries inline, an open-addressing index over them, incremental index resizes and
 * in-block compaction. The layout, policies and guarantees are described in table.h.
 */
#include "engines/table/table.h"

#include <string.h>

#include "core/siphash.h"
#include "core/varint.h"

#define BLOCK_SHIFT 12                        /* refs: block << 12 | offset */
#define BLOCK_LIMIT (1u << (32 - BLOCK_SHIFT))
#define OFFSET_MASK ((1u << BLOCK_SHIFT) - 1)
#define NO_BLOCK UINT32_MAX
#define TAG_EMPTY 0
#define TAG_TOMBSTONE 1
#define TAG_OCCUPIED 0x80
#define MIN_CAPACITY 8
#define MAX_ENTRY_BYTES ((size_t)UINT32_MAX - 64)

_Static_assert(GR_TABLE_BLOCK_BYTES == (1u << BLOCK_SHIFT), "an offset in a block fits the ref");

/* data[] holds GR_TABLE_BLOCK_BYTES in the append block; any other block holds its used
 * bytes (more only if a shrinking realloc failed). No live entries: dead == used. */
typedef struct table_block {
    uint32_t used;       /* bytes of data[] in use (live and dead entries) */
    uint32_t dead;       /* bytes of dead entries */
    uint8_t data[];
} table_block_t;

/* capacity slots of SLOT_BYTES: [tag][ref, 4 bytes little-endian], packed so that a probe
 * finds a slot's tag and ref in one cache line (almost always) */
#define SLOT_BYTES 5
typedef struct table_index {
    uint8_t *slots;
    uint64_t capacity;   /* 0: no index */
} table_index_t;

static inline uint8_t *tag_at(const table_index_t *ix, uint64_t slot) { return ix->slots + slot * SLOT_BYTES; }
static inline uint32_t ref_at(const table_index_t *ix, uint64_t slot) {
    uint32_t ref;
    memcpy(&ref, ix->slots + slot * SLOT_BYTES + 1, sizeof ref);
    return ref;
}
static inline void set_ref(table_index_t *ix, uint64_t slot, uint32_t ref) {
    memcpy(ix->slots + slot * SLOT_BYTES + 1, &ref, sizeof ref);
}

struct gr_table {
    table_block_t **blocks;
    uint32_t block_count;      /* numbers in use: blocks[0 .. block_count) (some NULL) */
    uint32_t block_slots;      /* allocated length of blocks[] */
    uint32_t *free_numbers;    /* NULL entries of blocks[] below block_count */
    uint32_t free_count;
    uint32_t append_block;     /* NO_BLOCK: none yet */
    table_index_t index;       /* the current index: new entries go here */
    table_index_t old;         /* while resizing: the index being emptied */
    uint64_t migrate_position; /* old's slots below this have been moved */
    size_t count;
    size_t bytes;              /* allocated bytes, everything included */
    gr_mem_category_t category;
    uint8_t with_values;
};

static uint64_t hash_k0 = 0x0706050403020100ULL;
static uint64_t hash_k1 = 0x0f0e0d0c0b0a0908ULL;

static int hash_key_fixed;   /* set by the first seed or the first table: never changes after */

void gr_table_set_hash_seed(uint64_t k0, uint64_t k1) {
    if (hash_key_fixed) return;
    hash_k0 = k0;
    hash_k1 = k1;
    hash_key_fixed = 1;
}

static inline uint64_t table_hash(const uint8_t *key, size_t length) {
    return gr_siphash(key, length, hash_k0, hash_k1, 1, 2);
}

uint64_t gr_table_hash(const uint8_t *key, size_t length) {
    if (!hash_key_fixed) hash_key_fixed = 1;   /* as a table's first entry: the key may not change after (read
                                                * once set: a loading thread and the serving one share it) */
    return table_hash(key, length);
}
/* An occupied slot's tag: 0x80 | min(displacement, 7) << 4 | 4 bits of the hash, where the
 * displacement is the entry's distance from its home slot. A probe at distance d from the
 * home compares the key only where the whole byte matches (same hash bits, and displaced
 * by d too: the same home); a backward shift knows the home of an entry displaced by less
 * than 7 without rehashing its key. */
#define DISPLACEMENT_SHIFT 4
#define DISPLACEMENT_KNOWN 7   /* 7: 7 or more, recompute from the key */
static inline uint8_t tag_of(uint64_t hash, uint64_t displacement) {
    uint64_t d = displacement < DISPLACEMENT_KNOWN ? displacement : DISPLACEMENT_KNOWN;
    return (uint8_t)(TAG_OCCUPIED | d << DISPLACEMENT_SHIFT | (hash & 0x0f));
}
static inline uint64_t displacement_of(uint8_t tag) { return (tag >> DISPLACEMENT_SHIFT) & 7; }
static inline uint64_t home_of(uint64_t hash, uint64_t capacity) {
    return ((hash >> 32) * capacity) >> 32;
}
static inline uint64_t next_slot(uint64_t slot, uint64_t capacity) {
    return slot + 1 == capacity ? 0 : slot + 1;
}

/* ---- counted allocation ---- */

static void *table_alloc(gr_table_t *t, size_t size) {
    void *p = gr_mem_alloc(size, t->category);
    if (p) t->bytes += gr_mem_usable(p);
    return p;
}
static void *table_realloc(gr_table_t *t, void *p, size_t size) {
    size_t before = gr_mem_usable(p);
    void *q = gr_mem_realloc(p, size, t->category);
    if (q) t->bytes += gr_mem_usable(q) - before;
    return q;
}
static void table_release(gr_table_t *t, void *p) {
    if (!p) return;
    t->bytes -= gr_mem_usable(p);
    gr_mem_free(p, t->category);
}

/* ---- entries ---- */

typedef struct entry_view {
    const uint8_t *key;
    size_t key_length;
    const uint8_t *value;
    size_t value_length;
    size_t size;        /* encoded bytes */
    int dead;
} entry_view_t;

static inline void entry_read(const gr_table_t *t, const uint8_t *p, entry_view_t *e) {
    size_t header;
    const uint8_t *q = varint_get(p, &header);
    e->dead = (int)(header & 1);
    e->key_length = header >> 1;
    if (t->with_values) q = varint_get(q, &e->value_length);
    else e->value_length = 0;
    e->key = q;
    e->value = q + e->key_length;
    e->size = (size_t)(q - p) + e->key_length + e->value_length;
}

static inline size_t entry_size(const gr_table_t *t, size_t key_length, size_t value_length) {
    size_t size = varint_size(key_length << 1) + key_length;
    if (t->with_values) size += varint_size(value_length) + value_length;
    return size;
}

static void entry_write(const gr_table_t *t, uint8_t *p, const uint8_t *key, size_t key_length,
                        const uint8_t *value, size_t value_length) {
    p = varint_put(p, key_length << 1);
    if (t->with_values) p = varint_put(p, value_length);
    if (key_length) memcpy(p, key, key_length);
    if (t->with_values && value_length) memcpy(p + key_length, value, value_length);
}

static inline uint8_t *entry_at(const gr_table_t *t, uint32_t ref) {
    return t->blocks[ref >> BLOCK_SHIFT]->data + (ref & OFFSET_MASK);
}

static inline int entry_has_key(const gr_table_t *t, uint32_t ref, const uint8_t *key, size_t length,
                                entry_view_t *e) {
    entry_read(t, entry_at(t, ref), e);
    return e->key_length == length && (length == 0 || memcmp(e->key, key, length) == 0);
}

static uint64_t hash_of_ref(const gr_table_t *t, uint32_t ref) {
    entry_view_t e;
    entry_read(t, entry_at(t, ref), &e);
    return table_hash(e.key, e.key_length);
}

/* ---- the index ---- */

static int migrating(const gr_table_t *t) { return t->old.capacity != 0; }

/* Every slot TAG_EMPTY (0) from calloc: an index past the allocator's mmap threshold comes
 * from fresh zero pages, so allocating it writes nothing, and its pages are faulted in by the
 * writes and migration steps that use them. (Writing every tag here faulted in the whole
 * index inside one command: 7 MB, ~1,700 page faults and 5-12 ms for the HSET that grew a
 * hash past 700,000 fields.) */
static int index_allocate(gr_table_t *t, table_index_t *ix, uint64_t capacity) {
    _Static_assert(TAG_EMPTY == 0, "calloc's zeroes are empty slots");
    ix->slots = gr_mem_calloc(capacity, SLOT_BYTES, t->category);
    if (!ix->slots) {
        memset(ix, 0, sizeof *ix);
        return -1;
    }
    t->bytes += gr_mem_usable(ix->slots);
    ix->capacity = capacity;
    return 0;
}

static void index_release(gr_table_t *t, table_index_t *ix) {
    table_release(t, ix->slots);
    memset(ix, 0, sizeof *ix);
}

/* Puts a ref known to be absent into ix, which has an empty slot (no tombstones in it). */
static void index_put(table_index_t *ix, uint64_t hash, uint32_t ref) {
    uint64_t slot = home_of(hash, ix->capacity), displacement = 0;
    while (*tag_at(ix, slot) != TAG_EMPTY) {
        slot = next_slot(slot, ix->capacity);
        displacement++;
    }
    *tag_at(ix, slot) = tag_of(hash, displacement);
    set_ref(ix, slot, ref);
}

/* Where a key is: which index (0 current, 1 old) and slot. */
typedef struct found {
    table_index_t *index;
    uint64_t slot;
    uint32_t ref;
} found_t;

/* Probes the current index, then (while resizing) the old one's slots not yet moved. */
static int find(const gr_table_t *t, const uint8_t *key, size_t length, uint64_t hash, found_t *out,
                entry_view_t *e) {
    const table_index_t *ix = &t->index;
    if (ix->capacity) {
        uint64_t slot = home_of(hash, ix->capacity);
        for (uint64_t displacement = 0;; displacement++) {
            uint8_t have = *tag_at(ix, slot);
            if (have == TAG_EMPTY) break;
            if (have == tag_of(hash, displacement) && entry_has_key(t, ref_at(ix, slot), key, length, e)) {
                out->index = (table_index_t *)ix;
                out->slot = slot;
                out->ref = ref_at(ix, slot);
                return 1;
            }
            slot = next_slot(slot, ix->capacity);
        }
    }
    if (!migrating(t)) return 0;
    ix = &t->old;
    uint64_t slot = home_of(hash, ix->capacity);
    for (uint64_t displacement = 0;; displacement++) {
        uint8_t have = *tag_at(ix, slot);
        if (have == TAG_EMPTY) return 0;
        if (have == tag_of(hash, displacement) && slot >= t->migrate_position &&
            entry_has_key(t, ref_at(ix, slot), key, length, e)) {
            out->index = (table_index_t *)ix;
            out->slot = slot;
            out->ref = ref_at(ix, slot);
            return 1;
        }
        slot = next_slot(slot, ix->capacity);
    }
}

/* Points the live slot holding ref (whose entry hashes to hash; it exists) at moved_to. */
static void move_ref(gr_table_t *t, uint64_t hash, uint32_t ref, uint32_t moved_to) {
    table_index_t *ix = &t->index;
    uint64_t slot = home_of(hash, ix->capacity);
    while (*tag_at(ix, slot) != TAG_EMPTY) {
        if (*tag_at(ix, slot) >= TAG_OCCUPIED && ref_at(ix, slot) == ref) { set_ref(ix, slot, moved_to); return; }
        slot = next_slot(slot, ix->capacity);
    }
    ix = &t->old;
    slot = home_of(hash, ix->capacity);
    for (;;) {
        if (*tag_at(ix, slot) >= TAG_OCCUPIED && ref_at(ix, slot) == ref && slot >= t->migrate_position) {
            set_ref(ix, slot, moved_to);
            return;
        }
        slot = next_slot(slot, ix->capacity);
    }
}

/* Removes a found slot: backward shift in the current index, a tombstone in the old one. */
static void index_remove(gr_table_t *t, const found_t *where) {
    table_index_t *ix = where->index;
    if (ix == &t->old) {
        *tag_at(ix, where->slot) = TAG_TOMBSTONE;
        return;
    }
    uint64_t hole = where->slot, slot = where->slot, capacity = ix->capacity;
    for (;;) {
        slot = next_slot(slot, capacity);
        uint8_t tag = *tag_at(ix, slot);
        if (tag == TAG_EMPTY) break;
        uint64_t displacement = displacement_of(tag);
        if (displacement == DISPLACEMENT_KNOWN) {
            uint64_t home = home_of(hash_of_ref(t, ref_at(ix, slot)), capacity);
            displacement = slot >= home ? slot - home : slot + capacity - home;
        }
        /* the entry may fill the hole unless its home lies cyclically in (hole, slot] */
        uint64_t gap = slot >= hole ? slot - hole : slot + capacity - hole;
        if (displacement < gap) continue;
        memcpy(tag_at(ix, hole), tag_at(ix, slot), SLOT_BYTES);
        *tag_at(ix, hole) = tag_of(tag, displacement - gap);   /* tag's low 4 bits are the hash's */
        hole = slot;
    }
    *tag_at(ix, hole) = TAG_EMPTY;
}

static void migrate(gr_table_t *t, size_t entries) {
    table_index_t *old = &t->old;
    while (t->migrate_position < old->capacity && entries) {
        uint64_t slot = t->migrate_position++;
        if (*tag_at(old, slot) >= TAG_OCCUPIED) {
            uint32_t ref = ref_at(old, slot);
            index_put(&t->index, hash_of_ref(t, ref), ref);
            entries--;
        }
    }
    if (t->migrate_position == old->capacity) {
        index_release(t, old);
        t->migrate_position = 0;
    }
}

static void migrate_all(gr_table_t *t) {
    while (migrating(t)) migrate(t, SIZE_MAX);
}

/* Starts moving to an index of `capacity` slots (finishing any resize under way first).
 * On OOM nothing changes. */
static int resize(gr_table_t *t, uint64_t capacity) {
    if (capacity < MIN_CAPACITY) capacity = MIN_CAPACITY;
    if (capacity > UINT32_MAX) capacity = UINT32_MAX;
    migrate_all(t);
    if (capacity == t->index.capacity) return 0;
    table_index_t fresh;
    if (index_allocate(t, &fresh, capacity) != 0) return -1;
    if (t->count == 0) {
        index_release(t, &t->index);
        t->index = fresh;
        return 0;
    }
    t->old = t->index;
    t->index = fresh;
    t->migrate_position = 0;
    return 0;
}

/* Before adding one entry: grow when it would pass 0.8 load (of the current index, counting
 * every entry). -1 when there is no room and no memory for more. */
static int make_room(gr_table_t *t) {
    uint64_t capacity = t->index.capacity;
    if ((t->count + 1) * 5 <= capacity * 4) return 0;
    if (resize(t, (uint64_t)(t->count + 1) * 2) == 0) return 0;
    migrate_all(t);
    return t->count + 1 < capacity ? 0 : -1;
}

static void maybe_shrink(gr_table_t *t) {
    if (!migrating(t) && t->index.capacity > MIN_CAPACITY && (uint64_t)t->count * 4 < t->index.capacity)
        (void)resize(t, (uint64_t)t->count * 2);
}

/* ---- blocks ---- */

static void block_free(gr_table_t *t, uint32_t number) {
    table_release(t, t->blocks[number]);
    t->blocks[number] = NULL;
    if (number + 1 == t->block_count) {
        /* trim trailing free numbers (they may sit in free_numbers: drop those too) */
        t->block_count--;
        while (t->block_count && !t->blocks[t->block_count - 1]) t->block_count--;
        uint32_t kept = 0;
        for (uint32_t i = 0; i < t->free_count; i++)
            if (t->free_numbers[i] < t->block_count) t->free_numbers[kept++] = t->free_numbers[i];
        t->free_count = kept;
        /* a table that shrank gives back most of its arrays */
        if (t->block_slots > 64 && t->block_count <= t->block_slots / 4) {
            uint32_t slots = t->block_slots / 2;
            table_block_t **blocks = table_realloc(t, t->blocks, slots * sizeof *blocks);
            if (blocks) t->blocks = blocks;
            uint32_t *numbers = table_realloc(t, t->free_numbers, slots * sizeof *numbers);
            if (numbers) t->free_numbers = numbers;
            if (blocks && numbers) t->block_slots = slots;
        }
        return;
    }
    /* free_numbers[] is as long as blocks[] (see take_number), so there is room */
    t->free_numbers[t->free_count++] = number;
}

/* The lowest free block number (so that the top ones empty and blocks[] can shrink), or
 * the next one. NO_BLOCK on OOM. */
static uint32_t take_number(gr_table_t *t) {
    if (t->free_count) {
        uint32_t lowest = 0;
        for (uint32_t i = 1; i < t->free_count; i++)
            if (t->free_numbers[i] < t->free_numbers[lowest]) lowest = i;
        uint32_t number = t->free_numbers[lowest];
        t->free_numbers[lowest] = t->free_numbers[--t->free_count];
        return number;
    }
    if (t->block_count >= BLOCK_LIMIT) return NO_BLOCK;
    if (t->block_count == t->block_slots) {
        uint32_t slots = t->block_slots ? t->block_slots * 2 : 4;
        if (slots > BLOCK_LIMIT) slots = BLOCK_LIMIT;
        table_block_t **blocks = table_realloc(t, t->blocks, slots * sizeof *blocks);
        if (!blocks) return NO_BLOCK;
        t->blocks = blocks;
        uint32_t *numbers = table_realloc(t, t->free_numbers, slots * sizeof *numbers);
        if (!numbers) return NO_BLOCK;   /* blocks[] grew; harmless */
        t->free_numbers = numbers;
        t->block_slots = slots;
    }
    t->blocks[t->block_count] = NULL;
    return t->block_count++;
}

static void give_number_back(gr_table_t *t, uint32_t number) {
    if (number + 1 == t->block_count) t->block_count--;
    else t->free_numbers[t->free_count++] = number;
}

static table_block_t *block_new(gr_table_t *t, uint32_t number, size_t capacity) {
    table_block_t *block = table_alloc(t, sizeof *block + capacity);
    if (!block) return NULL;
    block->used = block->dead = 0;
    t->blocks[number] = block;
    return block;
}

/* A block that stops being the append block keeps only its used bytes. */
static void block_retire(gr_table_t *t, uint32_t number) {
    table_block_t *block = t->blocks[number];
    if (block->dead == block->used) {
        block_free(t, number);
        return;
    }
    table_block_t *smaller = table_realloc(t, block, sizeof *block + block->used);
    if (smaller) t->blocks[number] = smaller;
}

/* Writes a new entry; its ref, or NO_BLOCK on OOM. */
static uint32_t arena_append(gr_table_t *t, const uint8_t *key, size_t key_length,
                             const uint8_t *value, size_t value_length) {
    size_t size = entry_size(t, key_length, value_length);
    if (size > MAX_ENTRY_BYTES) return NO_BLOCK;
    uint32_t number, previous = NO_BLOCK;
    table_block_t *block;
    if (size > GR_TABLE_BLOCK_BYTES) {   /* a block of its own, never appended to */
        number = take_number(t);
        if (number == NO_BLOCK) return NO_BLOCK;
        block = block_new(t, number, size);
        if (!block) { give_number_back(t, number); return NO_BLOCK; }
    } else {
        number = t->append_block;
        block = number == NO_BLOCK ? NULL : t->blocks[number];
        if (!block || GR_TABLE_BLOCK_BYTES - block->used < size) {
            number = take_number(t);
            if (number == NO_BLOCK) return NO_BLOCK;
            block = block_new(t, number, GR_TABLE_BLOCK_BYTES);
            if (!block) { give_number_back(t, number); return NO_BLOCK; }
            previous = t->append_block;
            t->append_block = number;
        }
    }
    uint32_t offset = block->used;
    entry_write(t, block->data + offset, key, key_length, value, value_length);
    block->used += (uint32_t)size;
    /* only now: key or value may have pointed into the block being retired */
    if (previous != NO_BLOCK) block_retire(t, previous);
    return number << BLOCK_SHIFT | offset;
}

/* Slides a block's live entries down over its dead ones, updating their refs. */
static void block_compact(gr_table_t *t, uint32_t number) {
    table_block_t *block = t->blocks[number];
    uint32_t read = 0, write = 0;
    while (read < block->used) {
        entry_view_t e;
        entry_read(t, block->data + read, &e);
        if (!e.dead) {
            if (write != read) {
                move_ref(t, table_hash(e.key, e.key_length), number << BLOCK_SHIFT | read,
                         number << BLOCK_SHIFT | write);
                memmove(block->data + write, block->data + read, e.size);
            }
            write += (uint32_t)e.size;
        }
        read += (uint32_t)e.size;
    }
    block->used = write;
    block->dead = 0;
    if (number != t->append_block) {
        table_block_t *smaller = table_realloc(t, block, sizeof *block + write);
        if (smaller) t->blocks[number] = smaller;
    }
}

/* Moves a block's live entries to the append block and frees it; on OOM part way, the
 * rest is compacted in place. */
static void block_evacuate(gr_table_t *t, uint32_t number) {
    table_block_t *block = t->blocks[number];   /* not the append block: it stays put */
    for (uint32_t offset = 0; offset < block->used;) {
        uint8_t *p = block->data + offset;
        entry_view_t e;
        entry_read(t, p, &e);
        if (!e.dead) {
            uint32_t ref = arena_append(t, e.key, e.key_length, e.value, e.value_length);
            if (ref == NO_BLOCK) {
                block_compact(t, number);
                return;
            }
            move_ref(t, table_hash(e.key, e.key_length), number << BLOCK_SHIFT | offset, ref);
            p[0] |= 1;
            block->dead += (uint32_t)e.size;
        }
        offset += (uint32_t)e.size;
    }
    block_free(t, number);
}

/* Marks an entry dead (it is already out of the index); frees its block when that was its
 * last entry, and once half a block's bytes are dead, compacts the append block in place or
 * moves any other block's entries into the append block. */
static void arena_kill(gr_table_t *t, uint32_t ref) {
    uint32_t number = ref >> BLOCK_SHIFT;
    table_block_t *block = t->blocks[number];
    uint8_t *p = block->data + (ref & OFFSET_MASK);
    entry_view_t e;
    entry_read(t, p, &e);
    p[0] |= 1;
    block->dead += (uint32_t)e.size;
    if (block->dead == block->used) {
        if (number == t->append_block) block->used = block->dead = 0;
        else block_free(t, number);
    } else if (block->dead * 2 >= block->used) {
        if (number == t->append_block) block_compact(t, number);
        else block_evacuate(t, number);
    }
}

/* ---- lifecycle ---- */

gr_table_t *gr_table_new(int with_values, gr_mem_category_t category) {
    gr_table_t *t = gr_mem_alloc(sizeof *t, category);
    if (!t) return NULL;
    if (!hash_key_fixed) hash_key_fixed = 1;
    memset(t, 0, sizeof *t);
    t->category = category;
    t->with_values = with_values ? 1 : 0;
    t->append_block = NO_BLOCK;
    t->bytes = gr_mem_usable(t);
    return t;
}

/* Frees every block and both indexes: an empty table as gr_table_new made it. */
static void release_all(gr_table_t *t) {
    for (uint32_t i = 0; i < t->block_count; i++) table_release(t, t->blocks[i]);
    table_release(t, t->blocks);
    table_release(t, t->free_numbers);
    index_release(t, &t->index);
    index_release(t, &t->old);
    t->blocks = NULL;
    t->free_numbers = NULL;
    t->block_count = t->block_slots = t->free_count = 0;
    t->append_block = NO_BLOCK;
    t->migrate_position = 0;
    t->count = 0;
}

void gr_table_free(gr_table_t *t) {
    if (!t) return;
    release_all(t);
    gr_mem_free(t, t->category);
}

static void *copy_of(gr_table_t *t, const void *source, size_t size, int *failed) {
    if (!source) return NULL;
    void *p = table_alloc(t, size ? size : 1);
    if (!p) { *failed = 1; return NULL; }
    memcpy(p, source, size);
    return p;
}

gr_table_t *gr_table_duplicate(const gr_table_t *t) {
    gr_table_t *copy = gr_table_new(t->with_values, t->category);
    if (!copy) return NULL;
    int failed = 0;
    copy->blocks = copy_of(copy, t->blocks, (size_t)t->block_slots * sizeof *t->blocks, &failed);
    copy->free_numbers = copy_of(copy, t->free_numbers, (size_t)t->block_slots * sizeof(uint32_t), &failed);
    copy->block_slots = failed ? 0 : t->block_slots;
    copy->block_count = failed ? 0 : t->block_count;
    for (uint32_t i = 0; !failed && i < t->block_count; i++) {
        const table_block_t *block = t->blocks[i];
        copy->blocks[i] = NULL;
        if (!block) continue;
        /* the append block keeps its room; copying its unused tail is harmless */
        size_t capacity = i == t->append_block ? GR_TABLE_BLOCK_BYTES : block->used;
        table_block_t *mine = copy_of(copy, block, sizeof *block + capacity, &failed);
        copy->blocks[i] = mine;
        if (failed) copy->block_count = i;
    }
    if (!failed) {
        copy->free_count = t->free_count;
        copy->append_block = t->append_block;
        copy->count = t->count;
        copy->migrate_position = t->migrate_position;
        const table_index_t *from[2] = {&t->index, &t->old};
        table_index_t *to[2] = {&copy->index, &copy->old};
        for (int k = 0; k < 2 && !failed; k++) {
            if (!from[k]->capacity) continue;
            to[k]->slots = copy_of(copy, from[k]->slots, from[k]->capacity * SLOT_BYTES, &failed);
            to[k]->capacity = from[k]->capacity;
        }
    }
    if (failed) {
        gr_table_free(copy);
        return NULL;
    }
    return copy;
}

void gr_table_reserve(gr_table_t *t, size_t entries) {
    /* room for `entries` at a load of 0.8 at most, sized to a load of 0.7 */
    if ((uint64_t)entries * 5 <= t->index.capacity * 4) return;
    (void)resize(t, (uint64_t)entries * 10 / 7 + 1);
}

/* ---- access ---- */

int gr_table_get(const gr_table_t *t, const uint8_t *key, size_t key_length, gr_bytes_t *value) {
    if (t->count == 0) return 0;
    found_t where;
    entry_view_t e;
    if (!find(t, key, key_length, table_hash(key, key_length), &where, &e)) return 0;
    if (value) {
        value->data = e.value;
        value->length = (uint32_t)e.value_length;
    }
    return 1;
}

int gr_table_set(gr_table_t *t, const uint8_t *key, size_t key_length,
                 const uint8_t *value, size_t value_length) {
    if (!t->with_values) return gr_table_add(t, key, key_length);
    if (migrating(t)) migrate(t, GR_TABLE_MIGRATE_STEP);
    uint64_t hash = table_hash(key, key_length);
    found_t where;
    entry_view_t e;
    if (t->count && find(t, key, key_length, hash, &where, &e)) {
        size_t size = entry_size(t, key_length, value_length);
        if (size == e.size) {   /* same encoded size: same value length; overwrite in place */
            if (value_length) memmove((uint8_t *)e.value, value, value_length);
            return 0;
        }
        uint32_t ref = arena_append(t, key, key_length, value, value_length);
        if (ref == NO_BLOCK) return -1;
        set_ref(where.index, where.slot, ref);
        arena_kill(t, where.ref);
        return 0;
    }
    if (make_room(t) != 0) return -1;
    uint32_t ref = arena_append(t, key, key_length, value, value_length);
    if (ref == NO_BLOCK) return -1;
    index_put(&t->index, hash, ref);
    t->count++;
    return 1;
}

/* Bulk (table.h): the hashes of a batch first, each home slot prefetched, then the inserts,
 * so that a big index's cache misses overlap instead of following one another. */
#define ADD_MANY_BATCH 32

int gr_table_add_many(gr_table_t *t, const gr_bytes_t *keys, const gr_bytes_t *values, size_t count) {
    int added = 0;
    for (size_t done = 0; done < count;) {
        size_t n = count - done < ADD_MANY_BATCH ? count - done : ADD_MANY_BATCH;
        uint64_t hashes[ADD_MANY_BATCH];
        for (size_t i = 0; i < n; i++) {
            hashes[i] = table_hash(keys[done + i].data, keys[done + i].length);
            if (t->index.capacity)
                __builtin_prefetch(tag_at(&t->index, home_of(hashes[i], t->index.capacity)), 1);
        }
        for (size_t i = 0; i < n; i++) {
            const gr_bytes_t *key = &keys[done + i];
            if (migrating(t)) migrate(t, GR_TABLE_MIGRATE_STEP);
            found_t where;
            entry_view_t e;
            if (t->count && find(t, key->data, key->length, hashes[i], &where, &e)) return -2;
            if (make_room(t) != 0) return -1;
            uint32_t ref = t->with_values ? arena_append(t, key->data, key->length, values[done + i].data,
                                                         values[done + i].length)
                                          : arena_append(t, key->data, key->length, NULL, 0);
            if (ref == NO_BLOCK) return -1;
            index_put(&t->index, hashes[i], ref);
            t->count++;
            added++;
        }
        done += n;
    }
    return added;
}

int gr_table_add(gr_table_t *t, const uint8_t *key, size_t key_length) {
    if (migrating(t)) migrate(t, GR_TABLE_MIGRATE_STEP);
    uint64_t hash = table_hash(key, key_length);
    found_t where;
    entry_view_t e;
    if (t->count && find(t, key, key_length, hash, &where, &e)) return 0;
    if (make_room(t) != 0) return -1;
    uint32_t ref = arena_append(t, key, key_length, NULL, 0);
    if (ref == NO_BLOCK) return -1;
    index_put(&t->index, hash, ref);
    t->count++;
    return 1;
}

int gr_table_delete(gr_table_t *t, const uint8_t *key, size_t key_length) {
    if (t->count == 0) return 0;
    if (migrating(t)) migrate(t, GR_TABLE_MIGRATE_STEP);
    found_t where;
    entry_view_t e;
    if (!find(t, key, key_length, table_hash(key, key_length), &where, &e)) return 0;
    index_remove(t, &where);
    t->count--;
    if (t->count == 0) {   /* back to the new-table state: nothing but the struct */
        release_all(t);
        return 1;
    }
    arena_kill(t, where.ref);
    maybe_shrink(t);
    return 1;
}

/* ---- queries ---- */

size_t gr_table_count(const gr_table_t *t) { return t->count; }
size_t gr_table_allocated_bytes(const gr_table_t *t) { return t->bytes; }

static void fill(const entry_view_t *e, gr_bytes_t *key, gr_bytes_t *value) {
    if (key) { key->data = e->key; key->length = (uint32_t)e->key_length; }
    if (value) { value->data = e->value; value->length = (uint32_t)e->value_length; }
}

/* Visits the entries of ix whose hash's high 32 bits lie in [low, high) (high <= 2^32).
 * Their home slots lie in [first, last] (home is monotone in the hash), and each sits in the
 * run of occupied slots from its home on; so the walk starts at the beginning of the run
 * holding `first` and stops at the first empty slot after `last`. In an old index only the
 * slots not yet moved count (the moved ones, and tombstones, are kept as run links). */
static size_t scan_index(const gr_table_t *t, const table_index_t *ix, int is_old, uint64_t low,
                         uint64_t high, gr_table_visit_t visit, void *context) {
    uint64_t capacity = ix->capacity;
    if (!capacity) return 0;
    uint64_t first = home_of(low << 32, capacity), last = home_of((high - 1) << 32, capacity);
    uint64_t start = first, back = 0;
    while (back < capacity) {
        uint64_t before = start == 0 ? capacity - 1 : start - 1;
        if (*tag_at(ix, before) == TAG_EMPTY) break;
        start = before;
        back++;
    }
    uint64_t span = back + (last - first);   /* steps from start to last */
    size_t visited = 0;
    uint64_t slot = start;
    /* at most one lap: start follows an empty slot, so a lap ends on the run's far side */
    for (uint64_t step = 0; step < capacity; step++, slot = next_slot(slot, capacity)) {
        uint8_t tag = *tag_at(ix, slot);
        if (tag == TAG_EMPTY) {
            if (step > span) break;
            continue;
        }
        if (tag < TAG_OCCUPIED || (is_old && slot < t->migrate_position)) continue;
        entry_view_t e;
        entry_read(t, entry_at(t, ref_at(ix, slot)), &e);
        uint64_t hash_high = table_hash(e.key, e.key_length) >> 32;
        if (hash_high < low || hash_high >= high) continue;
        gr_bytes_t key, value;
        fill(&e, &key, &value);
        visit(context, key, value);
        visited++;
    }
    return visited;
}

uint64_t gr_table_scan(const gr_table_t *t, uint64_t cursor, size_t count,
                       gr_table_visit_t visit, void *context) {
    const uint64_t end = (uint64_t)1 << 32;
    if (t->count == 0 || cursor >= end) return 0;
    if (count == 0) count = 1;
    uint64_t capacity = t->index.capacity;
    /* slots of the current index that hold about `count` entries at its load */
    uint64_t slots = count >= t->count ? capacity : (uint64_t)count * capacity / t->count + 1;
    size_t visited = 0;
    uint64_t low = cursor;
    while (visited < count && low < end) {
        uint64_t slot = home_of(low << 32, capacity) + slots;
        /* the first hash whose home is `slot`: ceil(slot * 2^32 / capacity) */
        uint64_t high = slot >= capacity ? end : (slot * end + capacity - 1) / capacity;
        if (high <= low) high = low + 1;
        visited += scan_index(t, &t->index, 0, low, high, visit, context);
        if (migrating(t)) visited += scan_index(t, &t->old, 1, low, high, visit, context);
        low = high;
    }
    return low >= end ? 0 : low;
}

static inline uint64_t splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

int gr_table_random(const gr_table_t *t, uint64_t random, gr_bytes_t *key, gr_bytes_t *value) {
    if (t->count == 0) return 0;
    uint64_t state = random;
    uint64_t total = t->index.capacity + t->old.capacity;
    for (;;) {
        uint64_t draw = (uint64_t)(((unsigned __int128)splitmix64(&state) * total) >> 64);
        uint32_t ref;
        if (draw < t->index.capacity) {
            if (*tag_at(&t->index, draw) < TAG_OCCUPIED) continue;
            ref = ref_at(&t->index, draw);
        } else {
            draw -= t->index.capacity;
            if (draw < t->migrate_position || *tag_at(&t->old, draw) < TAG_OCCUPIED) continue;
            ref = ref_at(&t->old, draw);
        }
        entry_view_t e;
        entry_read(t, entry_at(t, ref), &e);
        fill(&e, key, value);
        return 1;
    }
}

/* ---- iteration ---- */

void gr_table_iter_start(const gr_table_t *t, gr_table_iter_t *it) {
    it->table = t;
    it->block = 0;
    it->offset = 0;
}

int gr_table_iter_next(gr_table_iter_t *it, gr_bytes_t *key, gr_bytes_t *value) {
    const gr_table_t *t = it->table;
    while (it->block < t->block_count) {
        const table_block_t *block = t->blocks[it->block];
        while (block && it->offset < block->used) {
            entry_view_t e;
            entry_read(t, block->data + it->offset, &e);
            it->offset += (uint32_t)e.size;
            if (!e.dead) {
                fill(&e, key, value);
                return 1;
            }
        }
        it->block++;
        it->offset = 0;
    }
    return 0;
}
