/* zset.h — the sorted-set value: members (byte strings) ordered by (score, member), each
 * member once. The implementation is zset.c (the tree and this API), zset_index.c (the member
 * index) and zset_packed.c (the packed encoding's keys and the rebuild between encodings), with
 * zset_internal.h between them; the command layer over it is commands/cmd_zset.c, and its row
 * in the type registry is exec/value_type.c (GR_TYPE_ZSET).
 *
 * Memory layout
 * -------------
 * An ordered tree with counts (a B+tree) holding every member once, in its leaves, plus, in
 * the standard encoding, a member index whose slots name the leaf that holds a member:
 *
 *   gr_zset_t: root, count, tree bytes; standard: index (+ old index while resizing),
 *        |     generation, leaf directory (id -> leaf), free ids
 *        v
 *   inner node (up to 32 children)           every child's entry count and largest score,
 *   +--------+-------------+-----------+     so a descent by rank or by score reads one node
 *   | header | counts[32]  | max[32]   |     per level: ZRANK, ZRANGE by rank and the score
 *   |        | child[32]   |           |     bounds are O(log n)
 *   +--------+-------------+-----------+
 *        |
 *        v
 *   leaf: header (count, used, capacity, id, generation) + entries packed in (score, member)
 *   order, one allocation:
 *   +--------+-------------------------------------------+---------+
 *   | header | [score: 8][length: varint][member bytes] ... | unused |
 *   +--------+-------------------------------------------+---------+
 *
 *   index: open addressing, linear probing, 5-byte slots [tag: 8 hash bits][leaf id: 4]
 *   (0 empty, 1 tombstone). ZSCORE/ZADD hash the member, and read the leaf of each slot whose
 *   tag matches (one, almost always), looking for the member among its <= 64 entries. A
 *   leaf split points its moved members' slots at the new leaf. Resizes are incremental by
 *   leaf: a leaf's members move into the new index before the leaf changes, and one more
 *   leaf moves per write (zset.c says why no write pays for a whole rebuild). ZSCAN's cursor
 *   is a position in hash space, so every member present for a whole scan is seen once.
 *   Measured (`test_zset --measure 1000000`): 38.7 allocated bytes per 16-byte member
 *   (25 in the leaves, ~8 in the index, the rest headers, slack and inner nodes).
 *
 * Packed ("packed" in OBJECT ENCODING): the standard encoding's tree and index over 8-byte
 * leaf entries, for sets whose members are all canonical int32 decimal strings ("-7", "0",
 * "2147483647"; not "-0", "+1", "01", " 1") and whose scores are all exact in float32:
 *
 *   packed leaf: header + [key: 4][score: float32, 4] ... (fixed size: rank i is at 8 * i)
 *   key = the int32 with its sign bit flipped, big-endian, so byte order = numeric order
 *
 * Members with equal scores are therefore in NUMERIC order in a packed set (Redis, and the
 * other encodings, order them by bytes: "10" < "9"); ZRANGE, ZRANK, ZPOPMIN and the like follow
 * it. Everything else is the standard encoding's. A set is packed when it leaves the compact
 * encoding with limits->packed set (--zset-implementation packed) and everything fits, or by
 * gr_zset_convert (GOBLIN.ZSET.CONVERT). gr_zset_set of a member or score that does not fit
 * rebuilds the set as standard first, losing nothing; the lex-range callers (ZRANGEBYLEX,
 * ZLEXCOUNT, ZREMRANGEBYLEX, ZRANGE BYLEX) must convert a packed set to standard before
 * gr_zset_count_below_member, since lex order is defined on the bytes. Entries handed out carry
 * the member's decimal text in entry->text (member points there: a copy of an entry must read
 * its own text, as cmd_zset.c's ZSCAN collector does). Measured (`test_zset --measure 1000000
 * packed`): 20.4 allocated bytes per member (8 in the leaves, ~8 in the index, the rest
 * headers, slack and inner nodes).
 *
 * Compact ("listpack" in OBJECT ENCODING): the root is one leaf and there is no index;
 * lookups walk the leaf, as Redis walks a listpack. A set moves to the standard encoding
 * ("skiplist", Redis's name for it, so clients and tests see the same word) once it would
 * hold more than limits->max_compact_entries members or a member longer than
 * limits->max_compact_value bytes (zset-max-listpack-entries / -value, passed in by the
 * command layer); leaves then hold at most GR_ZSET_LEAF_ENTRIES entries and split in two
 * when full (after an insert at either end, the full side stays full, so ordered loads fill
 * their leaves); an emptied leaf or node is removed.
 *
 * Scores are never NaN (the command layer refuses them); -0.0 and 0.0 compare equal, as in
 * Redis, and a compact set stores -0.0 as 0 (Redis's listpack keeps it as the integer 0; its
 * skiplist, like the standard encoding, keeps -0.0). Pointers handed out point into the set and stay valid until its next mutation;
 * members passed in must not point into the same set.
 */
#ifndef GR_ZSET_H
#define GR_ZSET_H

#include <stddef.h>
#include <stdint.h>

#include "core/alloc.h"

/* The memory category every sorted-set allocation counts under (GOBLIN.MEMORY's "zset" row):
 * the third free number (sets take the first, hashes the second). */
#define GR_MEM_ZSET ((gr_mem_category_t)(GR_MEM_FIRST_FREE + 2))

#define GR_ZSET_LEAF_ENTRIES 64   /* standard encoding: entries per leaf at most */
#define GR_ZSET_FANOUT 32         /* children per inner node at most */

typedef struct gr_zset gr_zset_t;

/* When a compact set moves to the standard encoding (zset-max-listpack-*). */
typedef struct gr_zset_limits {
    int64_t max_compact_entries;   /* 128 */
    int64_t max_compact_value;     /* 64 */
    int packed;                    /* leaving compact: packed when everything fits (zset-implementation) */
} gr_zset_limits_t;

/* One member and its score, pointing into the set (a packed set's member: into text). */
typedef struct gr_zset_entry {
    const uint8_t *member;
    size_t member_length;
    double score;
    uint8_t text[12];   /* a packed set's member as decimal text */
} gr_zset_entry_t;


/* A forward cursor in (score, member) order from a rank; invalidated by a mutation. */
typedef struct gr_zset_iter {
    const gr_zset_t *zset;
    size_t rank;              /* of the next entry */
    const void *leaf;         /* the leaf holding it, NULL: find it again */
    size_t leaf_index;        /* its index in that leaf */
    const uint8_t *position;  /* its bytes */
} gr_zset_iter_t;

/* ---- Lifecycle ---- */
gr_zset_t *gr_zset_new(void);                           /* empty, compact; NULL on OOM */
void gr_zset_free(gr_zset_t *zset);                     /* NULL ok */
gr_zset_t *gr_zset_duplicate(const gr_zset_t *zset);    /* same members, encoding; NULL on OOM */

/* ---- Access ---- */
/* 1 found (*score set; score may be NULL), 0 absent. */
int gr_zset_score(const gr_zset_t *zset, const uint8_t *member, size_t member_length, double *score);
/* Add member with score, or move it to score: 1 added, 0 it existed (score now the given
 * one), -1 out of memory (the set unchanged). */
int gr_zset_set(gr_zset_t *zset, const uint8_t *member, size_t member_length, double score,
                const gr_zset_limits_t *limits);
/* 1 removed, 0 absent. */
int gr_zset_delete(gr_zset_t *zset, const uint8_t *member, size_t member_length);

/* ---- Queries ---- */
size_t gr_zset_count(const gr_zset_t *zset);
size_t gr_zset_allocated_bytes(const gr_zset_t *zset);   /* everything, the struct included */
const char *gr_zset_encoding_name(const gr_zset_t *zset); /* "listpack", "skiplist" or "packed" */
int gr_zset_is_compact(const gr_zset_t *zset);
int gr_zset_is_packed(const gr_zset_t *zset);
/* The 0-based rank of member from the lowest (*score set when score is not NULL), -1 absent. */
int64_t gr_zset_rank(const gr_zset_t *zset, const uint8_t *member, size_t member_length, double *score);
/* The entry at rank (0 = lowest): 1, or 0 when rank >= count. */
int gr_zset_at(const gr_zset_t *zset, size_t rank, gr_zset_entry_t *entry);
/* How many entries have a score below score (inclusive: at or below). */
size_t gr_zset_count_below_score(const gr_zset_t *zset, double score, int inclusive);
/* How many entries have a member below member in byte order (inclusive: at or below); the
 * lex range commands' bound, meaningful when every score is equal (as in Redis). Not for a
 * packed set (its ties are numeric): convert it to standard first. */
size_t gr_zset_count_below_member(const gr_zset_t *zset, const uint8_t *member, size_t member_length,
                                  int inclusive);

/* ---- Bulk ---- */
void gr_zset_iter_start(const gr_zset_t *zset, size_t rank, gr_zset_iter_t *iter);
int gr_zset_iter_next(gr_zset_iter_t *iter, gr_zset_entry_t *entry);   /* 1, or 0 at the end */
/* One ZSCAN step from cursor (0 to start): visits about count members (a compact set: all
 * of them, and the cursor returned is 0), returns the next cursor, 0 when done. A member
 * present for the whole scan is visited at least once. */
typedef void (*gr_zset_visit_t)(void *context, const gr_zset_entry_t *entry);
uint64_t gr_zset_scan(const gr_zset_t *zset, uint64_t cursor, size_t count, gr_zset_visit_t visit, void *context);
/* GOBLIN.ZSET.INTERNALS: how the set is laid out. */
typedef struct gr_zset_internals {
    const char *representation;   /* "compact", "btree+leaf-index" or "packed-btree+leaf-index"
                                      (OBJECT ENCODING: listpack, skiplist, packed) */
    size_t members;
    size_t depth;                  /* levels, the leaves included */
    size_t leaves, inner_nodes;
    size_t leaf_bytes_used;        /* entry bytes */
    size_t leaf_bytes_allocated;   /* leaf allocations, headers and slack included */
    size_t inner_bytes;
    size_t index_slots, index_tombstones;
    int index_resizing;
    size_t index_bytes;            /* slots (both while resizing), leaf directory, free ids */
    size_t total_allocated_bytes;  /* == gr_zset_allocated_bytes */
} gr_zset_internals_t;
void gr_zset_internals(const gr_zset_t *zset, gr_zset_internals_t *out);
/* GOBLIN.OPTIMIZE: after a bulk load, fill every leaf, give slack back and rebuild the index
 * at a load of 0.7 (tombstones gone). 0, or -1 on OOM (the set unchanged). */
int gr_zset_optimize(gr_zset_t *zset);
/* Bulk load (snapshots, RESTORE of a big set): a standard-encoding set filled by appends in
 * increasing (score, member) order, each leaf filled left to right, the inner levels built
 * bottom-up and the member index built in one pass at its final size at the end — instead of
 * one descent, insert and index update per member. Appends out of order (a packed set saves
 * its ties in numeric order) are sorted by end, at the cost of a copy. begin: NULL on OOM.
 * append: 0, or -1 on OOM. end: 0, -1 on OOM, -2 when a member was appended twice; after a
 * failure the caller frees the set (gr_zset_free frees a set whose bulk load did not end). */
gr_zset_t *gr_zset_bulk_begin(void);
int gr_zset_bulk_append(gr_zset_t *zset, const uint8_t *member, size_t member_length, double score);
int gr_zset_bulk_end(gr_zset_t *zset);
/* GOBLIN.ZSET.CONVERT: rebuild the set as packed (to_packed) or standard, whatever it is now
 * (a compact set too): 0 (also when it already is), -1 on OOM, -2 when to_packed and a member
 * or score does not fit; the set is unchanged on failure. */
int gr_zset_convert(gr_zset_t *zset, int to_packed);
/* Whether member is a canonical int32 decimal, as packed holds them (*value set): 1, or 0. */
int gr_zset_int32_member(const uint8_t *member, size_t member_length, int32_t *value);
/* Tests: 0 when the tree agrees with itself (orders, counts, maxima, index), else -1. */
int gr_zset_check(const gr_zset_t *zset);

#endif
