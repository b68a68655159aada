/* rdb_save.c — write goblin's keyspace as a Redis RDB file, version 10, which redis-server 7.0
 * loads (rdb_format.h). `goblin-ring-server --export-rdb PATH` uses it.
 *
 * Each type in the form redis-server 7.0 reads and re-encodes by its own thresholds on load:
 * strings raw; lists as quicklist-2 nodes (listpacks of up to 128 elements; an element of 1 MiB
 * or more alone in a plain node); sets, hashes and sorted sets in their plain forms (types 2,
 * 4 and 5: Redis converts small ones to its compact encodings as it loads them); streams as
 * type 19 (listpack nodes of up to 100 entries, each node's first entry's fields as its master
 * fields, then the bookkeeping, groups, PELs and consumers); function libraries as FUNCTION2;
 * expiries as EXPIRETIME_MS. Arrays have no Redis form and hash field TTLs none in RDB 10:
 * each is skipped (counted, and logged once per save). The body goes through a 1 MiB buffer
 * with the CRC-64 kept running; the file is written as temp-<pid>.rdb, fsynced and renamed
 * (gr_rdb_save), or the bytes go to a descriptor as they are made (gr_rdb_save_fd: a diskless
 * replication sync's pipe). rdb-key-save-delay pauses after each key, as in Redis's saves.
 * Strings (values, members, fields, keys) that are integers of up to 32 bits take RDB's integer
 * encoding, as Redis's rdbSaveRawString; nothing is LZF-compressed.
 *
 * gr_rdb_dump_value is DUMP's writer: one value, type byte first, into a memory buffer, in the
 * same per-type code, with DUMP's compact forms for goblin's compact encodings that Redis 7.0
 * also has (a listpack hash or sorted set as types 16 and 17, an intset as type 11), so small
 * values dump to the bytes redis-server gives them.
 */
#include "persist/rdb_format.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "core/number.h"
#include "core/rdb_string.h"
#include "core/snapshot_io.h"
#include "engines/hash/hash.h"
#include "engines/keyspace.h"
#include "engines/list/list.h"
#include "engines/set/set.h"
#include "engines/stream/stream.h"
#include "engines/string_value.h"
#include "engines/zset/zset.h"
#include "exec/child.h"
#include "exec/value_type.h"
#include "persist/snapshot.h"

#ifndef GR_PACKAGE_VERSION
#define GR_PACKAGE_VERSION "dev"   /* the C tests' builds; the extension's names the package */
#endif

enum { FLUSH_AT = 1 << 20, LIST_NODE_ENTRIES = 128, STREAM_NODE_ENTRIES = 100 };
#define PLAIN_NODE_BYTES ((size_t)1 << 20)

typedef struct out {
    gr_snapshot_writer_t w;      /* the buffer, flushed past FLUSH_AT */
    gr_snapshot_writer_t lp;     /* a listpack being built */
    int fd, error;
    int64_t key_delay_us;        /* rdb-key-save-delay (Redis's test knob): a pause after each key */
    uint64_t crc;
    size_t written;
    gr_rdb_stats_t *stats;
} out_t;

static int flush(out_t *o) {
    if (o->w.oom) {
        o->error = ENOMEM;
        return -1;
    }
    if (!o->w.length) return 0;
    o->crc = gr_crc64(o->crc, o->w.data, o->w.length);
    if (gr_persist_write_all(o->fd, o->w.data, o->w.length) != 0) {
        o->error = errno;
        return -1;
    }
    o->written += o->w.length;
    o->w.length = 0;
    return 0;
}

/* a byte, without a call while the buffer has room (a listpack's entries are written a byte at a time) */
static inline void put_u8(gr_snapshot_writer_t *w, uint8_t v) {
    if (w->length < w->capacity && !w->oom) w->data[w->length++] = v;
    else gr_snapshot_write_u8(w, v);
}
static void put_le(gr_snapshot_writer_t *w, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; i++) put_u8(w, (uint8_t)(v >> (8 * i)));
}
static void put_string(gr_snapshot_writer_t *w, const uint8_t *p, size_t n) {
    gr_rdb_write_length(w, n);
    gr_snapshot_write_raw(w, p, n);
}
/* A value's string as Redis's rdbSaveRawString writes it: text of up to 11 bytes that is an
 * integer in canonical form and fits 32 bits as the 1, 2 or 4 byte integer encoding, anything
 * else raw (goblin does not LZF-compress; Redis reads either). */
static int canonical_int(const uint8_t *p, size_t n, int64_t *v);
static void put_value_string(gr_snapshot_writer_t *w, const uint8_t *p, size_t n) {
    int64_t v;
    if (n <= 11 && canonical_int(p, n, &v)) {
        if (v >= INT8_MIN && v <= INT8_MAX) {
            put_u8(w, 0xC0), put_u8(w, (uint8_t)v);
            return;
        }
        if (v >= INT16_MIN && v <= INT16_MAX) {
            put_u8(w, 0xC1), put_le(w, (uint64_t)v, 2);
            return;
        }
        if (v >= INT32_MIN && v <= INT32_MAX) {
            put_u8(w, 0xC2), put_le(w, (uint64_t)v, 4);
            return;
        }
    }
    put_string(w, p, n);
}
static void put_cstring(gr_snapshot_writer_t *w, const char *text) { put_string(w, (const uint8_t *)text, strlen(text)); }
static void put_id(gr_snapshot_writer_t *w, const gr_stream_id_t *id) {
    for (int i = 7; i >= 0; i--) put_u8(w, (uint8_t)(id->ms >> (8 * i)));
    for (int i = 7; i >= 0; i--) put_u8(w, (uint8_t)(id->seq >> (8 * i)));
}

/* ---- listpacks ---- */

typedef struct lp {
    gr_snapshot_writer_t *w;
    size_t count;
} lp_t;

static void lp_begin(lp_t *lp, gr_snapshot_writer_t *w) {
    w->length = 0;
    lp->w = w;
    lp->count = 0;
    for (int i = 0; i < 6; i++) put_u8(w, 0);
}
/* The entry's back-length: its size (encoding and data) in 7-bit groups, read right to left. */
static void lp_backlen(gr_snapshot_writer_t *w, uint64_t l) {
    if (l <= 127) put_u8(w, (uint8_t)l);
    else if (l < 16383) put_u8(w, (uint8_t)(l >> 7)), put_u8(w, (uint8_t)((l & 127) | 128));
    else if (l < 2097151)
        put_u8(w, (uint8_t)(l >> 14)), put_u8(w, (uint8_t)(((l >> 7) & 127) | 128)), put_u8(w, (uint8_t)((l & 127) | 128));
    else if (l < 268435455)
        put_u8(w, (uint8_t)(l >> 21)), put_u8(w, (uint8_t)(((l >> 14) & 127) | 128)),
            put_u8(w, (uint8_t)(((l >> 7) & 127) | 128)), put_u8(w, (uint8_t)((l & 127) | 128));
    else
        put_u8(w, (uint8_t)(l >> 28)), put_u8(w, (uint8_t)(((l >> 21) & 127) | 128)),
            put_u8(w, (uint8_t)(((l >> 14) & 127) | 128)), put_u8(w, (uint8_t)(((l >> 7) & 127) | 128)),
            put_u8(w, (uint8_t)((l & 127) | 128));
}
static void lp_int(lp_t *lp, int64_t v) {
    gr_snapshot_writer_t *w = lp->w;
    size_t size;
    if (v >= 0 && v <= 127) put_u8(w, (uint8_t)v), size = 1;
    else if (v >= -4096 && v <= 4095) {
        uint64_t u = (uint64_t)v & 0x1FFF;
        put_u8(w, (uint8_t)(0xC0 | (u >> 8))), put_u8(w, (uint8_t)(u & 0xFF)), size = 2;
    } else if (v >= INT16_MIN && v <= INT16_MAX) put_u8(w, 0xF1), put_le(w, (uint64_t)v, 2), size = 3;
    else if (v >= -(1 << 23) && v < (1 << 23)) put_u8(w, 0xF2), put_le(w, (uint64_t)v, 3), size = 4;
    else if (v >= INT32_MIN && v <= INT32_MAX) put_u8(w, 0xF3), put_le(w, (uint64_t)v, 4), size = 5;
    else put_u8(w, 0xF4), put_le(w, (uint64_t)v, 8), size = 9;
    lp_backlen(w, size);
    lp->count++;
}
/* Text that is an integer in canonical form (as Redis's string2ll accepts): 1 and *v. */
static int canonical_int(const uint8_t *p, size_t n, int64_t *v) {
    if (n == 0 || n > 20) return 0;
    size_t i = 0;
    int negative = p[0] == '-';
    if (negative) i = 1;
    if (i == n || p[i] < '0' || p[i] > '9' || (p[i] == '0' && (n - i > 1 || negative))) return 0;
    uint64_t u = 0;
    for (; i < n; i++) {
        if (p[i] < '0' || p[i] > '9') return 0;
        uint64_t d = (uint64_t)(p[i] - '0');
        if (u > (UINT64_MAX - d) / 10) return 0;
        u = u * 10 + d;
    }
    if (negative ? u > (uint64_t)INT64_MAX + 1 : u > (uint64_t)INT64_MAX) return 0;
    *v = negative ? (int64_t)(0 - u) : (int64_t)u;
    return 1;
}
static void lp_string(lp_t *lp, const uint8_t *p, size_t n) {
    int64_t v;
    if (canonical_int(p, n, &v)) {
        lp_int(lp, v);
        return;
    }
    gr_snapshot_writer_t *w = lp->w;
    size_t header;
    if (n < 64) put_u8(w, (uint8_t)(0x80 | n)), header = 1;
    else if (n < 4096) put_u8(w, (uint8_t)(0xE0 | (n >> 8))), put_u8(w, (uint8_t)(n & 0xFF)), header = 2;
    else put_u8(w, 0xF0), put_le(w, n, 4), header = 5;
    gr_snapshot_write_raw(w, p, n);
    lp_backlen(w, header + n);
    lp->count++;
}
/* Close the listpack and write it as an RDB string into dst. */
static void lp_end(lp_t *lp, gr_snapshot_writer_t *dst) {
    gr_snapshot_writer_t *w = lp->w;
    put_u8(w, 0xFF);
    if (w->oom) {
        dst->oom = 1;
        return;
    }
    size_t total = w->length, count = lp->count < 65535 ? lp->count : 65535;
    for (int i = 0; i < 4; i++) w->data[i] = (uint8_t)(total >> (8 * i));
    w->data[4] = (uint8_t)count, w->data[5] = (uint8_t)(count >> 8);
    put_string(dst, w->data, total);
}

/* ---- values ---- */

static void save_list(out_t *o, const gr_list_t *list) {
    gr_snapshot_writer_t *w = &o->w;
    /* node count first: the same rule as the writing pass below */
    size_t nodes = 0, in_node = 0;
    gr_list_iter_t iter;
    gr_value_t item;
    gr_list_iter_init(&iter, list, 0, GR_LIST_HEAD);
    while (gr_list_iter_next(&iter, &item)) {
        if (item.length >= PLAIN_NODE_BYTES) {
            nodes += in_node > 0 ? 2u : 1u;
            in_node = 0;
        } else if (++in_node == LIST_NODE_ENTRIES) {
            nodes++;
            in_node = 0;
        }
    }
    nodes += in_node > 0 ? 1u : 0u;
    gr_rdb_write_length(w, nodes);
    lp_t lp;
    int open = 0;
    gr_list_iter_init(&iter, list, 0, GR_LIST_HEAD);
    while (gr_list_iter_next(&iter, &item)) {
        if (item.length >= PLAIN_NODE_BYTES) {
            if (open) {
                gr_rdb_write_length(w, GR_RDB_QUICKLIST_PACKED);
                lp_end(&lp, w);
                open = 0;
            }
            gr_rdb_write_length(w, GR_RDB_QUICKLIST_PLAIN);
            put_string(w, item.data, item.length);
            continue;
        }
        if (!open) lp_begin(&lp, &o->lp), open = 1;
        lp_string(&lp, item.data, item.length);
        if (lp.count == LIST_NODE_ENTRIES) {
            gr_rdb_write_length(w, GR_RDB_QUICKLIST_PACKED);
            lp_end(&lp, w);
            open = 0;
        }
    }
    if (open) {
        gr_rdb_write_length(w, GR_RDB_QUICKLIST_PACKED);
        lp_end(&lp, w);
    }
}

static void save_set(out_t *o, const gr_set_t *set) {
    gr_rdb_write_length(&o->w, gr_set_count(set));
    gr_set_iter_t iter;
    gr_set_member_t member;
    gr_set_iter_start(set, &iter);
    while (gr_set_iter_next(&iter, &member)) put_value_string(&o->w, member.data, member.length);
}

static void save_hash(out_t *o, const gr_hash_t *hash) {
    gr_rdb_write_length(&o->w, gr_hash_count(hash));
    gr_hash_iter_t iter;
    gr_hash_entry_t entry;
    gr_hash_iter_start(hash, &iter);
    int64_t dropped = 0;
    while (gr_hash_iter_next(&iter, &entry)) {
        put_value_string(&o->w, entry.field, entry.field_length);
        put_value_string(&o->w, entry.value, entry.value_length);
        if (gr_hash_volatile_hashes() && gr_hash_field_expire(hash, entry.field, entry.field_length) >= 0) dropped++;
    }
    o->stats->fields_ttl_dropped += dropped;
}

static void save_zset(out_t *o, const gr_zset_t *zset) {
    gr_rdb_write_length(&o->w, gr_zset_count(zset));
    gr_zset_iter_t iter;
    gr_zset_entry_t entry;
    gr_zset_iter_start(zset, 0, &iter);
    while (gr_zset_iter_next(&iter, &entry)) {
        put_value_string(&o->w, entry.member, entry.member_length);
        uint64_t bits;
        memcpy(&bits, &entry.score, sizeof bits);
        put_le(&o->w, bits, 8);
    }
}

/* Whether the entry's fields are exactly the master's (then SAMEFIELDS: values only). */
static int same_fields(gr_stream_entry_t entry, gr_stream_entry_t master) {
    if (entry.pair_count != master.pair_count) return 0;
    const uint8_t *f1, *v1, *f2, *v2;
    size_t fl1, vl1, fl2, vl2;
    while (gr_stream_entry_next_pair(&entry, &f1, &fl1, &v1, &vl1)) {
        if (!gr_stream_entry_next_pair(&master, &f2, &fl2, &v2, &vl2) || fl1 != fl2 || memcmp(f1, f2, fl1) != 0) return 0;
    }
    return 1;
}

static void save_stream_node(out_t *o, gr_stream_entry_t *entries, size_t n) {
    gr_snapshot_writer_t *w = &o->w;
    const gr_stream_id_t master = entries[0].id;
    uint8_t key[16];
    for (int i = 0; i < 8; i++) key[i] = (uint8_t)(master.ms >> (8 * (7 - i)));
    for (int i = 0; i < 8; i++) key[8 + i] = (uint8_t)(master.seq >> (8 * (7 - i)));
    put_string(w, key, 16);
    lp_t lp;
    lp_begin(&lp, &o->lp);
    lp_int(&lp, (int64_t)n);
    lp_int(&lp, 0);
    lp_int(&lp, (int64_t)entries[0].pair_count);
    gr_stream_entry_t cursor = entries[0];
    const uint8_t *f, *v;
    size_t fl, vl;
    while (gr_stream_entry_next_pair(&cursor, &f, &fl, &v, &vl)) lp_string(&lp, f, fl);
    lp_int(&lp, 0);
    for (size_t i = 0; i < n; i++) {
        const int same = same_fields(entries[i], entries[0]);
        const gr_stream_id_t id = entries[i].id;
        lp_int(&lp, same ? GR_RDB_STREAM_SAMEFIELDS : 0);
        lp_int(&lp, (int64_t)(id.ms - master.ms));
        lp_int(&lp, (int64_t)(id.seq - master.seq));
        if (!same) lp_int(&lp, (int64_t)entries[i].pair_count);
        cursor = entries[i];
        while (gr_stream_entry_next_pair(&cursor, &f, &fl, &v, &vl)) {
            if (!same) lp_string(&lp, f, fl);
            lp_string(&lp, v, vl);
        }
        lp_int(&lp, (int64_t)(same ? entries[i].pair_count + 3 : entries[i].pair_count * 2 + 4));
    }
    lp_end(&lp, w);
}

static void save_stream(out_t *o, const gr_stream_t *stream) {
    gr_snapshot_writer_t *w = &o->w;
    gr_rdb_write_length(w, (stream->length + STREAM_NODE_ENTRIES - 1) / STREAM_NODE_ENTRIES);
    gr_stream_entry_t entries[STREAM_NODE_ENTRIES];
    size_t n = 0;
    gr_stream_iter_t iter;
    gr_stream_iter_start(&iter, stream, NULL, NULL, 0);
    while (gr_stream_iter_next(&iter, &entries[n])) {
        if (++n == STREAM_NODE_ENTRIES) {
            save_stream_node(o, entries, n);
            n = 0;
        }
    }
    if (n) save_stream_node(o, entries, n);
    gr_stream_iter_stop(&iter);
    gr_rdb_write_length(w, stream->length);
    gr_rdb_write_length(w, stream->last_id.ms);
    gr_rdb_write_length(w, stream->last_id.seq);
    gr_stream_id_t first = {0, 0};
    if (stream->length) gr_stream_edge_id(stream, 1, &first);
    gr_rdb_write_length(w, first.ms);
    gr_rdb_write_length(w, first.seq);
    gr_rdb_write_length(w, stream->max_deleted_entry_id.ms);
    gr_rdb_write_length(w, stream->max_deleted_entry_id.seq);
    gr_rdb_write_length(w, stream->entries_added);
    gr_rdb_write_length(w, stream->group_count);
    for (size_t g = 0; g < stream->group_count; g++) {
        const gr_stream_group_t *group = stream->groups[g];
        put_string(w, group->name, group->name_length);
        gr_rdb_write_length(w, group->last_id.ms);
        gr_rdb_write_length(w, group->last_id.seq);
        gr_rdb_write_length(w, (uint64_t)group->entries_read);   /* -1 (unknown) as Redis writes it */
        gr_rdb_write_length(w, group->pel.count);
        for (uint32_t p = 0; p < group->pel.count; p++) {
            const gr_stream_nack_t *nack = gr_stream_pel_at(&group->pel, p);
            put_id(w, &nack->id);
            put_le(w, (uint64_t)nack->delivery_time, 8);
            gr_rdb_write_length(w, nack->delivery_count);
        }
        gr_rdb_write_length(w, group->consumer_count);
        for (size_t c = 0; c < group->consumer_count; c++) {
            const gr_stream_consumer_t *consumer = group->consumers[c];
            put_string(w, consumer->name, consumer->name_length);
            put_le(w, (uint64_t)consumer->seen_time, 8);
            gr_rdb_write_length(w, consumer->pel.count);
            for (uint32_t p = 0; p < consumer->pel.count; p++) put_id(w, &gr_stream_pel_at(&consumer->pel, p)->id);
        }
    }
}

/* ---- DUMP's compact forms: goblin's compact encodings as Redis 7.0 writes its own ---- */

/* A compact hash as type 16: one listpack of field, value, ... in the hash's order. */
static void save_hash_listpack(out_t *o, const gr_hash_t *hash) {
    lp_t lp;
    lp_begin(&lp, &o->lp);
    gr_hash_iter_t iter;
    gr_hash_entry_t entry;
    gr_hash_iter_start(hash, &iter);
    while (gr_hash_iter_next(&iter, &entry)) {
        lp_string(&lp, entry.field, entry.field_length);
        lp_string(&lp, entry.value, entry.value_length);
    }
    lp_end(&lp, &o->w);
}

/* A compact sorted set as type 17: member, score, ... in score order, each score as the text
 * Redis 7.0's d2string gives it (an integral score is an integer entry). */
static void save_zset_listpack(out_t *o, const gr_zset_t *zset) {
    lp_t lp;
    lp_begin(&lp, &o->lp);
    gr_zset_iter_t iter;
    gr_zset_entry_t entry;
    gr_zset_iter_start(zset, 0, &iter);
    while (gr_zset_iter_next(&iter, &entry)) {
        char text[64];
        size_t n = gr_double_to_text(entry.score, text, sizeof text);
        lp_string(&lp, entry.member, entry.member_length);
        lp_string(&lp, (const uint8_t *)text, n);
    }
    lp_end(&lp, &o->w);
}

/* An intset-encoded set as type 11: Redis's intset (u32 LE width, u32 LE count, the members
 * ascending in that width), the width the largest member needs. */
static void save_intset(out_t *o, const gr_set_t *set) {
    gr_snapshot_writer_t *b = &o->lp;
    b->length = 0;
    int width = 2;
    gr_set_iter_t iter;
    gr_set_member_t member;
    gr_set_iter_start(set, &iter);
    while (gr_set_iter_next(&iter, &member)) {
        int64_t v = 0;
        (void)canonical_int(member.data, member.length, &v);
        if (v < INT32_MIN || v > INT32_MAX) width = 8;
        else if ((v < INT16_MIN || v > INT16_MAX) && width < 4) width = 4;
    }
    put_le(b, (uint64_t)width, 4);
    put_le(b, gr_set_count(set), 4);
    gr_set_iter_start(set, &iter);
    while (gr_set_iter_next(&iter, &member)) {
        int64_t v = 0;
        (void)canonical_int(member.data, member.length, &v);
        put_le(b, (uint64_t)v, width);
    }
    if (b->oom) {
        o->w.oom = 1;
        return;
    }
    put_string(&o->w, b->data, b->length);
}

/* The RDB type a goblin value is written as, or -1 (no Redis form). compact: DUMP's forms,
 * where goblin's encoding is one Redis 7.0 also has (listpack hash and sorted set, intset). */
static int rdb_type_of(uint8_t gtype, const void *value, int compact) {
    switch (gtype) {
    case GR_TYPE_STRING: return GR_RDB_TYPE_STRING;
    case GR_TYPE_LIST: return GR_RDB_TYPE_LIST_QUICKLIST_2;
    case GR_TYPE_SET: return compact && gr_set_encoding(value) == GR_SET_INTSET ? GR_RDB_TYPE_SET_INTSET : GR_RDB_TYPE_SET;
    case GR_TYPE_HASH: return compact && gr_hash_is_compact(value) ? GR_RDB_TYPE_HASH_LISTPACK : GR_RDB_TYPE_HASH;
    case GR_TYPE_ZSET:
        return compact && gr_zset_is_compact(value) && !gr_zset_is_packed(value) ? GR_RDB_TYPE_ZSET_LISTPACK
                                                                                 : GR_RDB_TYPE_ZSET_2;
    case GR_TYPE_STREAM: return GR_RDB_TYPE_STREAM_LISTPACKS_2;
    default: return -1;
    }
}

static void save_value(out_t *o, int rdb_type, const void *value) {
    switch (rdb_type) {
    case GR_RDB_TYPE_STRING: {
        const gr_string_t *s = value;
        put_value_string(&o->w, s->data, s->length);
        break;
    }
    case GR_RDB_TYPE_LIST_QUICKLIST_2: save_list(o, value); break;
    case GR_RDB_TYPE_SET: save_set(o, value); break;
    case GR_RDB_TYPE_SET_INTSET: save_intset(o, value); break;
    case GR_RDB_TYPE_HASH: save_hash(o, value); break;
    case GR_RDB_TYPE_HASH_LISTPACK: save_hash_listpack(o, value); break;
    case GR_RDB_TYPE_ZSET_2: save_zset(o, value); break;
    case GR_RDB_TYPE_ZSET_LISTPACK: save_zset_listpack(o, value); break;
    case GR_RDB_TYPE_STREAM_LISTPACKS_2: save_stream(o, value); break;
    }
}

typedef struct pass {
    out_t *o;
    int64_t arrays_logged;
} pass_t;

static int save_key(void *context, gr_ks_entry_t *entry) {
    pass_t *pass = context;
    out_t *o = pass->o;
    gr_snapshot_writer_t *w = &o->w;
    const int type = rdb_type_of(entry->type, entry->value, 0);
    if (type < 0) {
        if (pass->arrays_logged++ == 0)
            gr_log_to_stderr("RDB export: values of type %s have no Redis form and are skipped (first: '%.*s')",
                             gr_value_type_name(entry->type), (int)(entry->key_length > 64 ? 64 : entry->key_length),
                             (const char *)entry->key);
        o->stats->keys_skipped++;
        return 0;
    }
    if (entry->expire_at_ms >= 0) {
        put_u8(w, GR_RDB_OPCODE_EXPIRETIME_MS);
        put_le(w, (uint64_t)entry->expire_at_ms, 8);
    }
    put_u8(w, (uint8_t)type);
    put_value_string(w, entry->key, entry->key_length);
    save_value(o, type, entry->value);
    o->stats->keys++;
    if (w->length >= FLUSH_AT && flush(o) != 0) return 1;
    if (o->key_delay_us > 0) {   /* the key out at once, then the pause: a slow save, byte by byte */
        if (flush(o) != 0) return 1;
        struct timespec pause = {o->key_delay_us / 1000000, (long)(o->key_delay_us % 1000000) * 1000};
        while (nanosleep(&pause, &pause) != 0 && errno == EINTR) {}
    }
    return 0;
}

int gr_rdb_dump_value(uint8_t gtype, const void *value, gr_snapshot_writer_t *w, int *version) {
    const int type = rdb_type_of(gtype, value, 1);
    /* a hash with field TTLs keeps goblin's payload: RDB 10 has no form for them */
    if (type < 0 || (gtype == GR_TYPE_HASH && gr_hash_next_expire(value) != INT64_MAX)) return 1;
    gr_rdb_stats_t stats = {0};
    out_t o = {.w = *w, .fd = -1, .stats = &stats};
    gr_snapshot_writer_init(&o.lp, GR_MEM_OTHER);
    put_u8(&o.w, (uint8_t)type);
    save_value(&o, type, value);
    gr_snapshot_writer_release(&o.lp);
    *w = o.w;
    *version = GR_RDB_VERSION_WRITTEN;
    return w->oom ? -1 : 0;
}

static int write_function(void *context, const uint8_t *code, size_t length) {
    out_t *o = context;
    put_u8(&o->w, GR_RDB_OPCODE_FUNCTION2);
    put_string(&o->w, code, length);
    o->stats->functions++;
    return o->w.oom ? -1 : 0;
}

static void put_aux(gr_snapshot_writer_t *w, const char *key, const char *value) {
    put_u8(w, GR_RDB_OPCODE_AUX);
    put_cstring(w, key);
    put_cstring(w, value);
}

static int write_rdb(gr_server_t *db, out_t *o) {
    gr_snapshot_writer_t *w = &o->w;
    char text[64];
    snprintf(text, sizeof text, "REDIS%04d", GR_RDB_VERSION_WRITTEN);
    gr_snapshot_write_raw(w, (const uint8_t *)text, 9);
    put_aux(w, "goblin-ring-ver", GR_PACKAGE_VERSION);
    put_aux(w, "redis-bits", sizeof(void *) == 8 ? "64" : "32");
    struct timeval now;
    gettimeofday(&now, NULL);
    snprintf(text, sizeof text, "%lld", (long long)now.tv_sec);
    put_aux(w, "ctime", text);
    put_aux(w, "aof-base", "0");
    if (gr_function_hooks && gr_function_hooks->each(db, write_function, o) != 0) {
        o->error = ENOMEM;
        return -1;
    }
    pass_t pass = {.o = o};
    for (int i = 0; i < GR_DB_COUNT; i++) {
        gr_keyspace_t *ks = db->keyspaces[i];
        if (gr_ks_size(ks) == 0) continue;
        put_u8(w, GR_RDB_OPCODE_SELECTDB);
        gr_rdb_write_length(w, (uint64_t)i);
        put_u8(w, GR_RDB_OPCODE_RESIZEDB);
        gr_rdb_write_length(w, gr_ks_size(ks));
        gr_rdb_write_length(w, gr_ks_expires_count(ks));
        gr_ks_iterate(ks, save_key, &pass);
        if (o->error) return -1;
    }
    put_u8(w, GR_RDB_OPCODE_EOF);
    if (flush(o) != 0) return -1;
    put_le(w, o->crc, 8);
    if (flush(o) != 0) return -1;
    if (o->stats->fields_ttl_dropped)
        gr_log_to_stderr("RDB export: %lld hash field TTLs dropped (RDB version 10 has no form for them)",
                         (long long)o->stats->fields_ttl_dropped);
    return 0;
}

/* The RDB through a 1 MiB buffer to fd: 0, or -1 with o->error. */
static int save_to(gr_server_t *db, int fd, gr_rdb_stats_t *stats, out_t *o) {
    *o = (out_t){.fd = fd, .stats = stats, .key_delay_us = db->persistence.key_save_delay_us};
    gr_snapshot_writer_init(&o->w, GR_MEM_OTHER);
    gr_snapshot_writer_init(&o->lp, GR_MEM_OTHER);
    gr_snapshot_writer_reserve(&o->w, FLUSH_AT + 4096);
    int result = write_rdb(db, o);
    stats->bytes = (int64_t)o->written;
    gr_snapshot_writer_release(&o->w);
    gr_snapshot_writer_release(&o->lp);
    return result;
}

int gr_rdb_save_fd(gr_server_t *db, int fd, gr_rdb_stats_t *stats, char *error, size_t error_size) {
    gr_rdb_stats_t local = {0};
    if (!stats) stats = &local;
    *stats = (gr_rdb_stats_t){.version = GR_RDB_VERSION_WRITTEN};
    out_t o;
    int result = save_to(db, fd, stats, &o);
    if (result != 0) snprintf(error, error_size, "Error writing the RDB: %s", strerror(o.error ? o.error : EIO));
    return result;
}

int gr_rdb_save(gr_server_t *db, const char *path, gr_rdb_stats_t *stats, char *error, size_t error_size) {
    gr_rdb_stats_t local = {0};
    if (!stats) stats = &local;
    *stats = (gr_rdb_stats_t){.version = GR_RDB_VERSION_WRITTEN};
    char temp[4096], directory[4096];
    snprintf(directory, sizeof directory, "%s", path);
    int n = snprintf(temp, sizeof temp, "%s/temp-%d.rdb", dirname(directory), (int)getpid());
    if (n < 0 || (size_t)n >= sizeof temp) {
        snprintf(error, error_size, "Failed opening the temp file for saving: path too long");
        return -1;
    }
    int fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(error, error_size, "Failed opening the temp file %s for saving: %s", temp, strerror(errno));
        return -1;
    }
    out_t o;
    int result = save_to(db, fd, stats, &o);
    if (result == 0 && fsync(fd) != 0) o.error = errno, result = -1;
    if (close(fd) != 0 && result == 0) o.error = errno, result = -1;
    if (result == 0 && rename(temp, path) != 0) {
        o.error = errno;
        result = -1;
    }
    if (result != 0) {
        snprintf(error, error_size, "Error writing the RDB file %s: %s", path, strerror(o.error ? o.error : EIO));
        unlink(temp);
    }
    return result;
}
