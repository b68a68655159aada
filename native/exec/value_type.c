/* value_type.c — the value-type registry (value_type.h): the built-in rows, one per type,
 * and the lookups the server's type-blind code uses. A new type adds its row to
 * builtin_types[] (or, in a test, registers one at run time).
 */
#include "exec/value_type.h"

#include <strings.h>
#include <string.h>

#include <stdio.h>

#include "core/digest.h"
#include "exec/db.h"
#include "engines/array/array.h"
#include "engines/hash/hash.h"
#include "engines/list/list.h"
#include "engines/set/set.h"
#include "engines/stream/stream.h"
#include "engines/string_value.h"
#include "engines/zset/zset.h"

/* ---- the rows: one per type ---- */

static void string_free(void *value) { gr_string_free(value); }
static size_t string_bytes(const void *value) { return gr_string_allocated_bytes(value); }
static const char *string_encoding(const void *value) { return gr_string_encoding(value); }
static void *string_duplicate(const gr_server_t *db, const void *value) {
    (void)db;
    const gr_string_t *s = value;
    return gr_string_new(s->data, s->length);
}

/* Snapshot form: the bytes, length-prefixed. */
static int string_save(const void *value, gr_snapshot_writer_t *out) {
    const gr_string_t *s = value;
    return gr_snapshot_write_bytes(out, s->data, s->length);
}
static void *string_load(const gr_server_t *db, gr_snapshot_reader_t *in) {
    (void)db;
    const uint8_t *data;
    size_t length;
    if (gr_snapshot_read_bytes(in, &data, &length) != 0) return NULL;
    if (length > GR_STRING_MAX_LENGTH) {
        gr_snapshot_reader_fail(in, "string longer than proto-max-bulk-len allows");
        return NULL;
    }
    return gr_string_new(data, length);
}

/* Digest (core/digest.h, Redis's xorObjectDigest): the bytes. */
static void string_digest(const void *value, uint8_t out[20]) {
    const gr_string_t *s = value;
    gr_digest_mix_type(out, GR_DIGEST_STRING);
    gr_digest_mix(out, s->data, s->length);
}

static void list_free(void *value) { gr_list_free(value); }
static size_t list_bytes(const void *value) { return gr_list_allocated_bytes(value); }
static const char *list_encoding(const void *value) { return gr_list_encoding_name(value); }
/* A copy on the source's engine, with the server's list thresholds. */
static void *list_duplicate(const gr_server_t *db, const void *value) {
    const gr_list_t *list = value;
    gr_list_t *copy = gr_list_new_for(&db->list_config, gr_list_target(list));
    if (!copy) return NULL;
    gr_list_iter_t iter;
    gr_value_t item;
    gr_list_iter_init(&iter, list, 0, GR_LIST_HEAD);
    while (gr_list_iter_next(&iter, &item)) {
        if (gr_list_push(copy, GR_LIST_TAIL, item.data, item.length) != 0) {
            gr_list_free(copy);
            return NULL;
        }
    }
    return copy;
}

/* Snapshot form: a 0 byte, the engine the list converts to (GR_LIST_SEGMENTED or GR_LIST_PMA,
 * so a GOBLIN.PMA list stays one across a restart or a RESTORE), the element count, then the
 * elements head first, front-coded: each is a varint count of the leading bytes it shares with
 * the element before it, then the rest length-prefixed (neighbouring elements often share a
 * prefix — "job:000123", "job:000124" — and Redis's RDB compresses such lists; front coding
 * costs one byte per element when nothing is shared). The first form had no marker, no engine
 * and whole elements (its count, never 0, came first): such a payload still loads, onto the
 * server's --list-implementation. */
static int list_save(const void *value, gr_snapshot_writer_t *out) {
    const gr_list_t *list = value;
    gr_snapshot_write_u8(out, 0);
    gr_snapshot_write_u8(out, (uint8_t)gr_list_target(list));
    gr_snapshot_write_varint(out, gr_list_length(list));
    gr_list_iter_t iter;
    gr_value_t item, previous = {NULL, 0};
    gr_list_iter_init(&iter, list, 0, GR_LIST_HEAD);
    while (gr_list_iter_next(&iter, &item)) {
        size_t shared = 0, most = item.length < previous.length ? item.length : previous.length;
        while (shared < most && item.data[shared] == previous.data[shared]) shared++;
        gr_snapshot_write_varint(out, shared);
        if (gr_snapshot_write_bytes(out, item.data + shared, item.length - shared) != 0) return -1;
        previous = item;   /* points into the list, which does not change while it is saved */
    }
    return out->oom ? -1 : 0;
}
static void *list_load(const gr_server_t *db, gr_snapshot_reader_t *in) {
    gr_list_encoding_t target = db->list_target;
    const int front_coded = gr_snapshot_reader_remaining(in) && in->data[in->offset] == 0;
    if (front_coded) {
        uint8_t marker, engine;
        gr_snapshot_read_u8(in, &marker);
        if (gr_snapshot_read_u8(in, &engine) != 0) return NULL;
        if (engine != GR_LIST_SEGMENTED && engine != GR_LIST_PMA) {
            gr_snapshot_reader_fail(in, "unknown list engine");
            return NULL;
        }
        target = (gr_list_encoding_t)engine;
    }
    uint64_t count;   /* an element is at least 1 byte (2 front-coded) */
    if (gr_snapshot_read_count(in, front_coded ? 2 : 1, &count) != 0) return NULL;
    if (count == 0) {
        gr_snapshot_reader_fail(in, "empty list");
        return NULL;
    }
    gr_list_t *list = gr_list_new_for(&db->list_config, target);
    if (!list) return NULL;
    /* Elements are rebuilt a batch at a time into `arena` and appended with one
     * gr_list_push_many, which keeps the tail leaf at hand. A front-coded element copies its
     * shared prefix from the element before it, the arena's last; a new batch starts with that
     * element moved to the arena's front. A first-form payload's elements are not copied. */
    enum { BATCH = 256 };
    gr_value_t batch[BATCH];
    size_t at[BATCH];
    uint8_t *arena = NULL;
    size_t arena_used = 0, arena_capacity = 0, previous_at = 0, previous_length = 0;
    for (uint64_t done = 0; done < count;) {
        size_t n = count - done < BATCH ? (size_t)(count - done) : BATCH;
        if (front_coded) {
            if (previous_length) memmove(arena, arena + previous_at, previous_length);
            previous_at = 0;
            arena_used = previous_length;
        }
        for (size_t i = 0; i < n; i++) {
            const uint8_t *data;
            size_t length;
            uint64_t shared = 0;
            if ((front_coded && gr_snapshot_read_varint(in, &shared) != 0) || gr_snapshot_read_bytes(in, &data, &length) != 0)
                goto fail;
            if (!front_coded) {
                batch[i].data = data;
                batch[i].length = length;
                continue;
            }
            if (shared > previous_length) {
                gr_snapshot_reader_fail(in, "a list element shares more than the element before it has");
                goto fail;
            }
            if (!arena || arena_used + shared + length > arena_capacity) {
                size_t capacity = (arena_used + shared + length) * 2;
                if (capacity < 4096) capacity = 4096;
                uint8_t *grown = gr_mem_realloc(arena, capacity, GR_MEM_LIST);
                if (!grown) goto fail;
                arena = grown;
                arena_capacity = capacity;
            }
            gr_bytes_copy(arena + arena_used, arena + previous_at, shared);
            gr_bytes_copy(arena + arena_used + shared, data, length);
            at[i] = arena_used;
            batch[i].length = (size_t)shared + length;
            previous_at = arena_used;
            previous_length = batch[i].length;
            arena_used += batch[i].length;
        }
        if (front_coded)   /* the arena may have moved while the batch grew it */
            for (size_t i = 0; i < n; i++) batch[i].data = arena + at[i];
        if (gr_list_push_many(list, GR_LIST_TAIL, batch, n) != 0) goto fail;
        done += n;
    }
    gr_mem_free(arena, GR_MEM_LIST);
    return list;
fail:
    gr_mem_free(arena, GR_MEM_LIST);
    gr_list_free(list);
    return NULL;
}

/* Digest: each element mixed in, head first (order matters). */
static void list_digest(const void *value, uint8_t out[20]) {
    gr_digest_mix_type(out, GR_DIGEST_LIST);
    gr_list_iter_t iter;
    gr_value_t item;
    gr_list_iter_init(&iter, value, 0, GR_LIST_HEAD);
    while (gr_list_iter_next(&iter, &item)) gr_digest_mix(out, item.data, item.length);
}

static void hash_free(void *value) { gr_hash_free(value); }
static size_t hash_bytes(const void *value) { return gr_hash_allocated_bytes(value); }
static const char *hash_encoding(const void *value) { return gr_hash_encoding_name(value); }
static void *hash_duplicate(const gr_server_t *db, const void *value) {
    (void)db;
    return gr_hash_duplicate(value);
}
static size_t hash_expire_parts(void *value, int64_t now_ms, int *emptied) {
    size_t removed = gr_hash_expire_due(value, now_ms);
    *emptied = gr_hash_count(value) == 0;
    return removed;
}
static int hash_has_expiring_parts(void) { return gr_hash_volatile_hashes() != 0; }
/* Snapshot form: the field count, then per field its name and value length-prefixed and a
 * varint expiry (0: none, else unix ms + 1). A loaded hash takes the encoding the server's
 * hash-max-listpack-* give it. */
static int hash_save(const void *value, gr_snapshot_writer_t *out) {
    const gr_hash_t *hash = value;
    gr_snapshot_write_varint(out, gr_hash_count(hash));
    gr_hash_iter_t iter;
    gr_hash_entry_t entry;
    gr_hash_iter_start(hash, &iter);
    while (gr_hash_iter_next(&iter, &entry)) {
        int64_t expire = gr_hash_field_expire(hash, entry.field, entry.field_length);
        gr_snapshot_write_bytes(out, entry.field, entry.field_length);
        gr_snapshot_write_bytes(out, entry.value, entry.value_length);
        if (gr_snapshot_write_varint(out, expire >= 0 ? (uint64_t)expire + 1 : 0) != 0) return -1;
    }
    return out->oom ? -1 : 0;
}
static void *hash_load(const gr_server_t *db, gr_snapshot_reader_t *in) {
    uint64_t count;
    if (gr_snapshot_read_count(in, 3, &count) != 0) return NULL;   /* a field is >= 3 bytes */
    if (count == 0) {
        gr_snapshot_reader_fail(in, "empty hash");
        return NULL;
    }
    gr_hash_limits_t limits = {db->config.hash_max_listpack_entries, db->config.hash_max_listpack_value};
    gr_hash_t *hash = gr_hash_new();
    if (!hash) return NULL;
    if (gr_hash_reserve(hash, (size_t)count, &limits) != 0) {   /* one table, sized once */
        gr_hash_free(hash);
        return NULL;
    }
    /* A batch of fields at a time, added with one gr_hash_add_many (hashes computed and index
     * slots prefetched ahead of the inserts), then the batch's field expiries. */
    enum { BATCH = 64 };
    gr_bytes_t fields[BATCH], values[BATCH];
    uint64_t expires[BATCH];
    for (uint64_t done = 0; done < count;) {
        size_t n = count - done < BATCH ? (size_t)(count - done) : BATCH, with_expiry = 0;
        for (size_t i = 0; i < n; i++) {
            const uint8_t *field, *data;
            size_t field_length, length;
            if (gr_snapshot_read_bytes(in, &field, &field_length) != 0 || gr_snapshot_read_bytes(in, &data, &length) != 0 ||
                gr_snapshot_read_varint(in, &expires[i]) != 0 || field_length > UINT32_MAX || length > UINT32_MAX ||
                expires[i] > (uint64_t)INT64_MAX)
                goto fail;
            fields[i] = (gr_bytes_t){field, (uint32_t)field_length};
            values[i] = (gr_bytes_t){data, (uint32_t)length};
            with_expiry += expires[i] != 0;
        }
        if (gr_hash_add_many(hash, fields, values, n, &limits) != 0) goto fail;
        for (size_t i = 0; with_expiry && i < n; i++)
            if (expires[i] &&
                gr_hash_set_field_expire(hash, fields[i].data, fields[i].length, (int64_t)(expires[i] - 1), &limits) != 0)
                goto fail;
        done += n;
    }
    return hash;
fail:
    if (!in->error) gr_snapshot_reader_fail(in, "bad or repeated hash field");
    gr_hash_free(hash);
    return NULL;
}

/* Digest: per field, SHA1-mixed field then value, xored into the whole (order-free). A field
 * with an expiry (Redis 7.0 has none) also mixes in its unix-ms time as text. */
static void hash_digest(const void *value, uint8_t out[20]) {
    const gr_hash_t *hash = value;
    gr_digest_mix_type(out, GR_DIGEST_HASH);
    gr_hash_iter_t iter;
    gr_hash_entry_t entry;
    gr_hash_iter_start(hash, &iter);
    while (gr_hash_iter_next(&iter, &entry)) {
        uint8_t element[20] = {0};
        gr_digest_mix(element, entry.field, entry.field_length);
        gr_digest_mix(element, entry.value, entry.value_length);
        int64_t expire = gr_hash_field_expire(hash, entry.field, entry.field_length);
        if (expire >= 0) {
            char text[24];
            gr_digest_mix(element, text, gr_int64_to_text(expire, text));
        }
        gr_digest_xor(out, element, sizeof element);
    }
}

static void set_free(void *value) { gr_set_free(value); }
static size_t set_bytes(const void *value) { return gr_set_allocated_bytes(value); }
static const char *set_encoding(const void *value) { return gr_set_encoding_name(value); }
/* A copy in the source's encoding (Redis's setTypeDup keeps it too). */
static void *set_duplicate(const gr_server_t *db, const void *value) {
    (void)db;
    return gr_set_duplicate(value);
}
/* Snapshot form: the member count, then each member length-prefixed. The encoding is not
 * saved: a loaded set is built as SADD builds one, so it takes the encoding its members and
 * the server's set-max-* settings give it (as Redis's RDB load re-derives it). */
static int set_save(const void *value, gr_snapshot_writer_t *out) {
    const gr_set_t *set = value;
    gr_snapshot_write_varint(out, gr_set_count(set));
    gr_set_iter_t iter;
    gr_set_member_t member;
    gr_set_iter_start(set, &iter);
    while (gr_set_iter_next(&iter, &member))
        if (gr_snapshot_write_bytes(out, member.data, member.length) != 0) return -1;
    return out->oom ? -1 : 0;
}
static void *set_load(const gr_server_t *db, gr_snapshot_reader_t *in) {
    uint64_t count;
    if (gr_snapshot_read_count(in, 1, &count) != 0) return NULL;   /* a member is >= 1 byte */
    if (count == 0) {
        gr_snapshot_reader_fail(in, "empty set");
        return NULL;
    }
    gr_set_config_t config = {
        .max_intset_entries = db->config.set_max_intset_entries < 0 ? 0 : (size_t)db->config.set_max_intset_entries,
        .max_compact_entries = db->config.set_max_listpack_entries < 0 ? 0 : (size_t)db->config.set_max_listpack_entries,
        .max_compact_value = db->config.set_max_listpack_value < 0 ? 0 : (size_t)db->config.set_max_listpack_value,
    };
    /* A batch of members at a time through gr_set_add_many (a big set's table takes them with
     * their hashes computed and index slots prefetched ahead); the first member chooses the
     * encoding the set starts in. */
    enum { BATCH = 64 };
    gr_bytes_t members[BATCH];
    gr_set_t *set = NULL;
    for (uint64_t done = 0; done < count;) {
        size_t n = count - done < BATCH ? (size_t)(count - done) : BATCH;
        for (size_t i = 0; i < n; i++) {
            const uint8_t *data;
            size_t length;
            if (gr_snapshot_read_bytes(in, &data, &length) != 0) goto fail;
            if (length > UINT32_MAX) {
                gr_snapshot_reader_fail(in, "set member too long");
                goto fail;
            }
            members[i] = (gr_bytes_t){data, (uint32_t)length};
        }
        if (!set && !(set = gr_set_new_for(&config, members[0].data, members[0].length, (size_t)count))) return NULL;
        int added = gr_set_add_many(set, &config, members, n);
        if (added != 0) {
            if (added == -2) gr_snapshot_reader_fail(in, "duplicate set member");
            goto fail;
        }
        done += n;
    }
    return set;
fail:
    gr_set_free(set);
    return NULL;
}

/* Digest: each member xored in (order-free). */
static void set_digest(const void *value, uint8_t out[20]) {
    gr_digest_mix_type(out, GR_DIGEST_SET);
    gr_set_iter_t iter;
    gr_set_member_t member;
    gr_set_iter_start(value, &iter);
    while (gr_set_iter_next(&iter, &member)) gr_digest_xor(out, member.data, member.length);
}

static void zset_free(void *value) { gr_zset_free(value); }
static size_t zset_bytes(const void *value) { return gr_zset_allocated_bytes(value); }
static const char *zset_encoding(const void *value) { return gr_zset_encoding_name(value); }
static void *zset_duplicate(const gr_server_t *db, const void *value) {
    (void)db;
    return gr_zset_duplicate(value);
}
/* Snapshot form: the member count, then each member (length-prefixed) and its 8-byte score,
 * lowest first (a packed set: its tied members in numeric order, as it holds them). A loaded set
 * takes the encoding the server's zset-max-listpack-* and zset-implementation give it: a packed
 * set comes back packed under zset-implementation packed, else standard (DUMP/RESTORE and the
 * AOF rewrite's RESTOREs too). */
static int zset_save(const void *value, gr_snapshot_writer_t *out) {
    const gr_zset_t *zset = value;
    gr_snapshot_write_varint(out, gr_zset_count(zset));
    gr_zset_iter_t iter;
    gr_zset_entry_t entry;
    gr_zset_iter_start(zset, 0, &iter);
    while (gr_zset_iter_next(&iter, &entry)) {
        gr_snapshot_write_bytes(out, entry.member, entry.member_length);
        gr_snapshot_write_double(out, entry.score);
    }
    return out->oom ? -1 : 0;
}
/* (score, member) after (previous score, member)? Scores as the engine orders them, then bytes;
 * or, for tied int32 members, numbers (a packed set saves its ties in numeric order). */
static int zset_entry_after(double score, const uint8_t *m, size_t ml, double previous, const uint8_t *pm, size_t pml) {
    if (score != previous) return score > previous;
    int c = memcmp(m, pm, ml < pml ? ml : pml);
    if (c > 0 || (c == 0 && ml > pml)) return 1;
    int32_t a, b;
    return gr_zset_int32_member(m, ml, &a) && gr_zset_int32_member(pm, pml, &b) && a > b;
}

static void *zset_load(const gr_server_t *db, gr_snapshot_reader_t *in) {
    uint64_t count;
    if (gr_snapshot_read_count(in, 9, &count) != 0) return NULL;   /* a member is >= 9 bytes */
    if (count == 0) {
        gr_snapshot_reader_fail(in, "empty sorted set");
        return NULL;
    }
    gr_zset_limits_t limits = {db->config.zset_max_listpack_entries, db->config.zset_max_listpack_value,
                               db->config.zset_packed};
    /* A set too big to be compact is a bulk load: save wrote it lowest first, so the engine
     * appends to its last leaf and builds the member index once at the end. */
    const int bulk = (int64_t)count > limits.max_compact_entries;
    gr_zset_t *zset = bulk ? gr_zset_bulk_begin() : gr_zset_new();
    if (!zset) return NULL;
    const uint8_t *previous = NULL;
    size_t previous_length = 0;
    double previous_score = 0;
    for (uint64_t i = 0; i < count; i++) {
        const uint8_t *member;
        size_t length;
        double score;
        if (gr_snapshot_read_bytes(in, &member, &length) != 0 || gr_snapshot_read_double(in, &score) != 0 ||
            score != score)
            goto bad;
        if (bulk) {
            if (previous && !zset_entry_after(score, member, length, previous_score, previous, previous_length)) goto bad;
            if (gr_zset_bulk_append(zset, member, length, score) != 0) goto oom;
            previous = member, previous_length = length, previous_score = score;
        } else {
            int added = gr_zset_set(zset, member, length, score, &limits);
            if (added < 0) goto oom;
            if (added == 0) goto bad;
        }
    }
    if (bulk) {
        int end = gr_zset_bulk_end(zset);
        if (end == -1) goto oom;
        if (end != 0) goto bad;
        /* zset-implementation packed: packed when everything fits (else, or on OOM, standard);
         * the save form does not say which encoding a set had, the server's setting decides */
        if (limits.packed) (void)gr_zset_convert(zset, 1);
    }
    return zset;
bad:
    if (!in->error) gr_snapshot_reader_fail(in, "bad, repeated or misordered sorted-set member");
oom:
    gr_zset_free(zset);
    return NULL;
}

/* Digest: per member, SHA1-mixed member then score ("%.17g"), xored into the whole. */
static void zset_digest(const void *value, uint8_t out[20]) {
    gr_digest_mix_type(out, GR_DIGEST_ZSET);
    gr_zset_iter_t iter;
    gr_zset_entry_t entry;
    gr_zset_iter_start(value, 0, &iter);
    while (gr_zset_iter_next(&iter, &entry)) {
        uint8_t element[20] = {0};
        gr_digest_mix(element, entry.member, entry.member_length);
        gr_digest_mix_score(element, entry.score);
        gr_digest_xor(out, element, sizeof element);
    }
}

static void array_free(void *value) { gr_array_free(value); }
static size_t array_bytes(const void *value) { return gr_array_allocated_bytes(value); }
static const char *array_encoding(const void *value) { return gr_array_encoding_name(value); }
/* A copy on the source's engine, its append cursor included. */
static void *array_duplicate(const gr_server_t *db, const void *value) {
    (void)db;
    return gr_array_duplicate(value);
}
/* Snapshot form (engines/array/array.h): the engine kind, the append cursor, then the
 * engine's body (classic: the set slots as index deltas and bytes). Loaded on the same engine. */
static int array_save(const void *value, gr_snapshot_writer_t *out) { return gr_array_save(value, out); }
static void *array_load(const gr_server_t *db, gr_snapshot_reader_t *in) {
    (void)db;
    return gr_array_load(in);
}

/* Digest: goblin's own (Redis 7.0 has no arrays): the type number, the append cursor, then
 * each set slot in index order as its index's decimal text and its bytes, mixed in order, so
 * two arrays digest equal exactly when ARGET, ARNEXT and ARLEN would read them equal. */
static int array_digest_slot(void *context, uint64_t index, const uint8_t *data, size_t length) {
    uint8_t *out = context;
    char text[24];
    gr_digest_mix(out, text, (size_t)snprintf(text, sizeof text, "%llu", (unsigned long long)index));
    gr_digest_mix(out, data, length);
    return 0;
}
static void array_digest(const void *value, uint8_t out[20]) {
    const gr_array_t *array = value;
    char text[24];
    gr_digest_mix_type(out, GR_DIGEST_ARRAY);
    gr_digest_mix(out, text, (size_t)snprintf(text, sizeof text, "%llu", (unsigned long long)array->cursor));
    if (array->length > 0) gr_array_visit(array, 0, array->length - 1, 0, array_digest_slot, out);
}

static void stream_free(void *value) { gr_stream_free(value); }
static size_t stream_bytes(const void *value) { return gr_stream_allocated_bytes(value); }
static const char *stream_encoding(const void *value) {
    (void)value;
    return "stream";
}
static void *stream_duplicate(const gr_server_t *db, const void *value) {
    (void)db;
    return gr_stream_duplicate(value);
}
/* Snapshot form: engines/stream/stream_save.c's body (entries, bookkeeping, groups and PELs);
 * a loaded stream packs its entries into nodes of the server's stream-node-max-* sizes. */
static int stream_save(const void *value, gr_snapshot_writer_t *out) { return gr_stream_save(value, out); }
static void *stream_load(const gr_server_t *db, gr_snapshot_reader_t *in) {
    const gr_stream_limits_t limits = {(uint32_t)db->config.stream_node_max_bytes, (uint32_t)db->config.stream_node_max_entries};
    return gr_stream_load(in, &limits);
}
/* Digest: Redis's (debug.c's xorObjectDigest for streams): per entry, oldest first, its ID as
 * "ms.seq" then each field and value, mixed in order; groups are not part of it. */
static void stream_digest(const void *value, uint8_t out[20]) {
    gr_digest_mix_type(out, GR_DIGEST_STREAM);
    gr_stream_iter_t iter;
    gr_stream_entry_t entry;
    gr_stream_iter_start(&iter, value, NULL, NULL, 0);
    while (gr_stream_iter_next(&iter, &entry)) {
        char text[48];
        int length = snprintf(text, sizeof text, "%llu.%llu", (unsigned long long)entry.id.ms, (unsigned long long)entry.id.seq);
        gr_digest_mix(out, text, (size_t)length);
        const uint8_t *field, *data;
        size_t field_length, data_length;
        while (gr_stream_entry_next_pair(&entry, &field, &field_length, &data, &data_length)) {
            gr_digest_mix(out, field, field_length);
            gr_digest_mix(out, data, data_length);
        }
    }
    gr_stream_iter_stop(&iter);
}

static const gr_value_type_t builtin_types[] = {
    {.id = GR_TYPE_STRING, .name = "string", .memory = GR_MEM_STRING,
     .free = string_free, .allocated_bytes = string_bytes, .encoding = string_encoding,
     .duplicate = string_duplicate, .save = string_save, .load = string_load, .digest = string_digest},
    {.id = GR_TYPE_LIST, .name = "list", .memory = GR_MEM_LIST,
     .free = list_free, .allocated_bytes = list_bytes, .encoding = list_encoding,
     .duplicate = list_duplicate, .save = list_save, .load = list_load, .digest = list_digest},
    {.id = GR_TYPE_HASH, .name = "hash", .memory = GR_MEM_HASH,
     .free = hash_free, .allocated_bytes = hash_bytes, .encoding = hash_encoding,
     .duplicate = hash_duplicate, .save = hash_save, .load = hash_load, .digest = hash_digest,
     .expire_parts = hash_expire_parts, .has_expiring_parts = hash_has_expiring_parts},
    {.id = GR_TYPE_SET, .name = "set", .memory = GR_MEM_SET,
     .free = set_free, .allocated_bytes = set_bytes, .encoding = set_encoding,
     .duplicate = set_duplicate, .save = set_save, .load = set_load, .digest = set_digest},
    {.id = GR_TYPE_ZSET, .name = "zset", .memory = GR_MEM_ZSET,
     .free = zset_free, .allocated_bytes = zset_bytes, .encoding = zset_encoding,
     .duplicate = zset_duplicate, .save = zset_save, .load = zset_load, .digest = zset_digest},
    {.id = GR_TYPE_ARRAY, .name = "array", .memory = GR_MEM_ARRAY,
     .free = array_free, .allocated_bytes = array_bytes, .encoding = array_encoding,
     .duplicate = array_duplicate, .save = array_save, .load = array_load, .digest = array_digest},
    {.id = GR_TYPE_STREAM, .name = "stream", .memory = GR_MEM_STREAM,
     .free = stream_free, .allocated_bytes = stream_bytes, .encoding = stream_encoding,
     .duplicate = stream_duplicate, .save = stream_save, .load = stream_load, .digest = stream_digest},
};

/* ---- the registry ---- */

static const gr_value_type_t *types[GR_VALUE_TYPE_SLOTS];
static int builtins_installed;

static int add(const gr_value_type_t *type) {
    if (!type || type->id == 0 || type->id >= GR_VALUE_TYPE_SLOTS || types[type->id] || !type->name ||
        !type->free || !type->allocated_bytes || !type->encoding || !type->duplicate || (unsigned)type->memory >= GR_MEM_CATEGORY_COUNT)
        return -1;
    for (size_t i = 1; i < GR_VALUE_TYPE_SLOTS; i++)
        if (types[i] && (types[i]->memory == type->memory || strcasecmp(types[i]->name, type->name) == 0)) return -1;
    types[type->id] = type;
    return 0;
}

static void install_builtins(void) {
    if (builtins_installed) return;
    builtins_installed = 1;
    for (size_t i = 0; i < sizeof builtin_types / sizeof builtin_types[0]; i++) add(&builtin_types[i]);
}

int gr_value_type_register(const gr_value_type_t *type) {
    install_builtins();
    return add(type);
}

const gr_value_type_t *gr_value_type(uint8_t id) {
    install_builtins();
    return id < GR_VALUE_TYPE_SLOTS ? types[id] : NULL;
}

const gr_value_type_t *gr_value_type_named(const uint8_t *name, size_t length) {
    install_builtins();
    for (size_t i = 1; i < GR_VALUE_TYPE_SLOTS; i++)
        if (types[i] && strlen(types[i]->name) == length && strncasecmp(types[i]->name, (const char *)name, length) == 0)
            return types[i];
    return NULL;
}

const gr_value_type_t *gr_value_type_at(size_t index) {
    install_builtins();
    for (size_t i = 1; i < GR_VALUE_TYPE_SLOTS; i++)
        if (types[i] && index-- == 0) return types[i];
    return NULL;
}

void gr_free_value(uint8_t type, void *value, void *context) {
    (void)context;
    const gr_value_type_t *row = gr_value_type(type);
    if (row) row->free(value);
}

size_t gr_value_allocated_bytes(uint8_t type, const void *value) {
    const gr_value_type_t *row = gr_value_type(type);
    return row ? row->allocated_bytes(value) : 0;
}

const char *gr_value_type_name(uint8_t type) {
    const gr_value_type_t *row = gr_value_type(type);
    return row ? row->name : "none";
}

const char *gr_value_encoding(uint8_t type, const void *value) {
    const gr_value_type_t *row = gr_value_type(type);
    return row ? row->encoding(value) : "unknown";
}
