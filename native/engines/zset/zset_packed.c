/* zset_packed.c — the sorted-set engine's packed encoding: members that are canonical int32
 * decimal strings stored as 4-byte keys, scores stored as float32, 8 bytes per leaf entry. This
 * file holds the key and score rules and the rebuild that moves a set between the indexed forms
 * (standard <-> packed, and compact -> either); the entry format itself is in zset_internal.h
 * (entry_decode / entry_encode read a LEAF_PACKED leaf), the tree in zset.c, the index in
 * zset_index.c, and zset.h draws the layout.
 *
 * The key is the int32 with its sign bit flipped, big-endian: unsigned byte order is then the
 * numeric order, so the tree's byte comparisons order tied scores numerically (-2 < -1 < 0 <
 * 10), where the standard encoding orders them by bytes ("-1" < "-2" < "0" < "10").
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "engines/zset/zset_internal.h"

/* ---- keys and scores ---- */

int zs_packed_key(const uint8_t *m, size_t ml, uint8_t key[4]) {
    if (ml == 0 || ml > 11) return 0;   /* "-2147483648" is the longest */
    size_t i = 0;
    int negative = m[0] == '-';
    if (negative && ml == 1) return 0;
    i = (size_t)negative;
    if (m[i] == '0' && (negative || ml > 1)) return 0;   /* "-0", "01", "-01" are not canonical */
    int64_t value = 0;
    for (; i < ml; i++) {
        if (m[i] < '0' || m[i] > '9') return 0;
        value = value * 10 + (m[i] - '0');
    }
    if (negative) value = -value;
    if (value < INT32_MIN || value > INT32_MAX) return 0;
    uint32_t flipped = (uint32_t)(int32_t)value ^ 0x80000000u;
    key[0] = (uint8_t)(flipped >> 24);
    key[1] = (uint8_t)(flipped >> 16);
    key[2] = (uint8_t)(flipped >> 8);
    key[3] = (uint8_t)flipped;
    return 1;
}

size_t zs_packed_text(const uint8_t key[4], uint8_t *text) {
    uint32_t flipped = (uint32_t)key[0] << 24 | (uint32_t)key[1] << 16 | (uint32_t)key[2] << 8 | key[3];
    int64_t value = (int32_t)(flipped ^ 0x80000000u);
    size_t n = 0;
    if (value < 0) {
        text[n++] = '-';
        value = -value;
    }
    uint8_t digits[10];
    size_t d = 0;
    do {
        digits[d++] = (uint8_t)('0' + value % 10);
        value /= 10;
    } while (value);
    while (d) text[n++] = digits[--d];
    return n;
}

int zs_packed_score_fits(double score) {
    if (isinf(score)) return 1;
    if (!(fabs(score) <= FLT_MAX)) return 0;   /* NaN or out of float range: no cast (it would be UB) */
    return (double)(float)score == score;
}

/* ---- the rebuild: one ordered pass into a fresh indexed set, then its index ---- */

int zs_rebuild_into(const gr_zset_t *z, int to_packed, gr_zset_t *fresh) {
    memset(fresh, 0, sizeof *fresh);
    fresh->standard = 1;
    fresh->packed = (uint8_t)to_packed;
    int failure = -1;
    fresh->root = zs_leaf_new(fresh, 0);
    if (!fresh->root) goto fail;
    gr_zset_iter_t iter;
    gr_zset_entry_t e;
    gr_zset_iter_start(z, 0, &iter);
    /* in z's order: when the tie orders agree (always, but for packed -> standard with tied
     * scores) each insert lands at the end of the last leaf, so the leaves fill */
    while (gr_zset_iter_next(&iter, &e)) {
        const uint8_t *m = e.member;
        size_t ml = e.member_length;
        uint8_t key[4];
        if (to_packed) {
            if (!zs_packed_key(m, ml, key) || !zs_packed_score_fits(e.score)) {
                failure = -2;
                goto fail;
            }
            m = key;
            ml = 4;
        }
        if (zs_tree_insert(fresh, e.score, m, ml) != 0) goto fail;
    }
    if (zs_index_build(fresh) != 0) goto fail;
    return 0;
fail:
    if (fresh->root) zs_node_free(fresh, fresh->root);
    zs_index_free(fresh);
    return failure;
}

int zs_rebuild(gr_zset_t *z, int to_packed) {
    gr_zset_t fresh;
    int outcome = zs_rebuild_into(z, to_packed, &fresh);
    if (outcome != 0) return outcome;
    zs_node_free(z, z->root);
    zs_index_free(z);
    fresh.tree_bytes += z->tree_bytes;    /* what z's counters still held (0 after the frees) */
    fresh.index_bytes += z->index_bytes;
    *z = fresh;
    return 0;
}

/* ---- the API's (zset.h) ---- */

int gr_zset_int32_member(const uint8_t *member, size_t member_length, int32_t *value) {
    uint8_t key[4];
    if (!zs_packed_key(member, member_length, key)) return 0;
    uint32_t flipped = (uint32_t)key[0] << 24 | (uint32_t)key[1] << 16 | (uint32_t)key[2] << 8 | key[3];
    *value = (int32_t)(flipped ^ 0x80000000u);
    return 1;
}
