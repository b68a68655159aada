/* cmd_set.c — the SET command layer: Redis 7 semantics, replies and error texts over the set
 * engine (engines/set/set.h, whose encodings and conversions follow Redis 7.2's thresholds
 * from db->config.set_max_*). Every handler is an argv handler (the ring carries these
 * commands as a CommandRequest), validates every argument first, then mutates, then replies.
 * A set that becomes empty is deleted, as in Redis. The rows are commands/set.def.
 */
#include <stdlib.h>
#include <string.h>

#include "commands/commands.h"
#include "commands/member_scan.h"
#include "core/clock.h"
#include "core/number.h"
#include "engines/set/set.h"
#include "exec/blocking.h"
#include "exec/db.h"
#include "core/bytes.h"
#include "exec/lookup.h"
#include "exec/transaction.h"

/* ---- shared helpers ---- */

static gr_set_config_t set_config(const gr_server_t *db) {
    gr_set_config_t config = {
        .max_intset_entries = db->config.set_max_intset_entries < 0 ? 0 : (size_t)db->config.set_max_intset_entries,
        .max_compact_entries = db->config.set_max_listpack_entries < 0 ? 0 : (size_t)db->config.set_max_listpack_entries,
        .max_compact_value = db->config.set_max_listpack_value < 0 ? 0 : (size_t)db->config.set_max_listpack_value,
    };
    return config;
}

static gr_bytes_t arg_bytes(const uint8_t *const *argv, const size_t *argv_length, size_t i) {
    gr_bytes_t b = {argv[i], (uint32_t)argv_length[i]};
    return b;
}

/* The server's one random stream for SPOP/SRANDMEMBER (splitmix64, seeded at first use). */
static uint64_t next_random(void) {
    static uint64_t state;
    if (!state) state = (uint64_t)gr_monotonic_ns() ^ 0x9E3779B97F4A7C15ull;
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Find key as a set: 1 found (*set set), 0 absent, -1 wrong type (WRONGTYPE replied).
 * for_write: Redis's lookupKeyWrite (no keyspace hit/miss); else lookupKeyRead. */
static int find_set_or_reply(gr_server_t *db, gr_bytes_t key, int for_write, gr_set_t **set, gr_reply_t *reply) {
    void *value;
    int found = gr_db_find_typed(db, key, GR_TYPE_SET, for_write, &value, reply);
    *set = value;
    return found;
}


/* Put a new set under key (replacing whatever is there, its TTL too): 0, or -1 on OOM with
 * the set freed. */
static int store_set(gr_server_t *db, gr_bytes_t key, gr_set_t *set) {
    if (gr_db_set_key(db, key, GR_TYPE_SET, set) == 0) return 0;
    gr_set_free(set);
    return -1;
}

static void delete_if_empty(gr_server_t *db, gr_bytes_t key, gr_set_t *set) {
    if (gr_set_count(set) == 0) gr_db_delete_key(db, key);
}

/* A member's bytes copied out of its set, for removing it from that set (small ones on the
 * stack of the caller's buffer, larger ones on the heap). */
typedef struct member_copy {
    uint8_t small[64];
    uint8_t *data;
    size_t length;
} member_copy_t;

static int member_copy(member_copy_t *copy, const gr_set_member_t *member) {
    copy->length = member->length;
    copy->data = member->length <= sizeof copy->small ? copy->small : malloc(member->length);
    if (!copy->data) return -1;
    memcpy(copy->data, member->data, member->length);
    return 0;
}

static void member_copy_release(member_copy_t *copy) {
    if (copy->data != copy->small) free(copy->data);
}

/* Every member, as a RESP3 set (an array in RESP2 and over the ring) or, as_array, always an
 * array (SRANDMEMBER's shape), as Redis replies them. */
static void reply_members_as(gr_reply_t *reply, const gr_set_t *set, int as_array) {
    size_t count = set ? gr_set_count(set) : 0;
    if (as_array) gr_reply_array_begin(reply, count); else gr_reply_set_begin(reply, count);
    if (!set) return;
    gr_set_iter_t iter;
    gr_set_member_t member;
    gr_set_iter_start(set, &iter);
    while (gr_set_iter_next(&iter, &member)) gr_reply_bulk(reply, member.data, member.length);
}

static void reply_members(gr_reply_t *reply, const gr_set_t *set) { reply_members_as(reply, set, 0); }

/* Redis's getLongLongFromObject: the whole argument an int64. */
static int parse_int64(const uint8_t *data, size_t length, int64_t *value) {
    return gr_bytes_to_int64(data, length, value) == 0 ? 0 : -1;
}

/* ---- single-key commands ---- */

void gr_cmd_sadd(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    gr_bytes_t key = arg_bytes(argv, argv_length, 1);
    gr_set_t *set;
    int found = find_set_or_reply(db, key, 1, &set, reply);
    if (found < 0) return;
    gr_set_config_t config = set_config(db);
    if (!found) {
        set = gr_set_new_for(&config, argv[2], argv_length[2], argc - 2);
        if (!set || !gr_db_add_key(db, key, GR_TYPE_SET, set)) {
            gr_set_free(set);
            gr_reply_oom(reply);
            return;
        }
    }
    int64_t added = 0;
    for (size_t i = 2; i < argc; i++) {
        int result = gr_set_add(set, &config, argv[i], argv_length[i]);
        if (result < 0) {
            delete_if_empty(db, key, set);
            if (added) { gr_watch_touch_current(db, key); gr_db_count_changes(db, added); }
            gr_reply_oom(reply);
            return;
        }
        added += result;
    }
    if (added) {
        gr_watch_touch_current(db, key);
        gr_db_count_changes(db, added);
    }
    gr_reply_integer(reply, added);
}

void gr_cmd_srem(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    gr_bytes_t key = arg_bytes(argv, argv_length, 1);
    gr_set_t *set;
    int found = find_set_or_reply(db, key, 1, &set, reply);
    if (found < 0) return;
    int64_t removed = 0;
    if (found) {
        for (size_t i = 2; i < argc && gr_set_count(set) > 0; i++) removed += gr_set_remove(set, argv[i], argv_length[i]);
        if (removed) {
            delete_if_empty(db, key, set);
            gr_watch_touch_current(db, key);
            gr_db_count_changes(db, removed);
        }
    }
    gr_reply_integer(reply, removed);
}

void gr_cmd_smembers(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    (void)argc;
    gr_set_t *set;
    if (find_set_or_reply(db, arg_bytes(argv, argv_length, 1), 0, &set, reply) < 0) return;
    reply_members(reply, set);
}

void gr_cmd_sismember(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    (void)argc;
    gr_set_t *set;
    int found = find_set_or_reply(db, arg_bytes(argv, argv_length, 1), 0, &set, reply);
    if (found < 0) return;
    gr_reply_integer(reply, found && gr_set_contains(set, argv[2], argv_length[2]));
}

void gr_cmd_smismember(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    gr_set_t *set;
    int found = find_set_or_reply(db, arg_bytes(argv, argv_length, 1), 0, &set, reply);
    if (found < 0) return;
    gr_reply_array_begin(reply, argc - 2);
    for (size_t i = 2; i < argc; i++) gr_reply_integer(reply, found && gr_set_contains(set, argv[i], argv_length[i]));
}

void gr_cmd_scard(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    (void)argc;
    gr_set_t *set;
    int found = find_set_or_reply(db, arg_bytes(argv, argv_length, 1), 0, &set, reply);
    if (found < 0) return;
    gr_reply_integer(reply, found ? (int64_t)gr_set_count(set) : 0);
}

/* Remove one random member and reply it as a bulk; the log records it as SREM's argument
 * (SPOP is propagated as SREM key member..., so replay removes the same members). */
static int pop_one_and_reply(gr_server_t *db, gr_set_t *set, gr_reply_t *reply) {
    gr_set_member_t member;
    gr_set_random(set, next_random(), &member);
    member_copy_t copy;
    if (member_copy(&copy, &member) != 0) return -1;
    gr_reply_bulk(reply, copy.data, copy.length);
    gr_effect_add(db, copy.data, copy.length);
    gr_set_remove(set, copy.data, copy.length);
    member_copy_release(&copy);
    return 0;
}

/* SPOP key [count] */
void gr_cmd_spop(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    gr_bytes_t key = arg_bytes(argv, argv_length, 1);
    if (argc > 3) { gr_reply_error_text(reply, GR_ERR_SYNTAX, "ERR syntax error"); return; }
    int64_t count = 1;
    if (argc == 3 && (parse_int64(argv[2], argv_length[2], &count) != 0 || count < 0)) {
        gr_reply_error_text(reply, GR_ERR_OUT_OF_RANGE, "ERR value is out of range, must be positive");
        return;
    }
    gr_set_t *set;
    int found = find_set_or_reply(db, key, 1, &set, reply);
    if (found < 0) return;
    if (argc == 2) {
        if (!found) { gr_reply_nil(reply); return; }
        gr_effect_open(db, "SREM", key);
        if (pop_one_and_reply(db, set, reply) != 0) { gr_reply_oom(reply); return; }
        delete_if_empty(db, key, set);
        gr_watch_touch_current(db, key);
        gr_db_count_changes(db, 1);
        return;
    }
    if (!found || count == 0) { gr_reply_set_begin(reply, 0); return; }
    size_t size = gr_set_count(set);
    if ((uint64_t)count >= size) {   /* the whole set */
        gr_effect_open(db, "DEL", key);
        reply_members(reply, set);
        gr_ks_delete(db->keyspace, key.data, key.length);
        gr_watch_touch_current(db, key);
        gr_db_count_changes(db, (int64_t)size);
        return;
    }
    /* Redis 7.2 rebuilds the remainder when most of a table goes (SPOP's case 3): the
     * members left start again as a small set, converting on as SADD would. */
    int rebuild = gr_set_encoding(set) == GR_SET_TABLE && (uint64_t)count * 5 > size;
    gr_reply_set_begin(reply, (size_t)count);
    gr_effect_open(db, "SREM", key);
    for (int64_t i = 0; i < count; i++) {
        if (pop_one_and_reply(db, set, reply) != 0) { reply->failed = 1; return; }
    }
    if (rebuild) {
        gr_set_config_t config = set_config(db);
        gr_set_t *fresh = gr_set_new(GR_SET_COMPACT);
        gr_set_iter_t iter;
        gr_set_member_t member;
        int failed = !fresh;
        gr_set_iter_start(set, &iter);
        while (!failed && gr_set_iter_next(&iter, &member)) failed = gr_set_add(fresh, &config, member.data, member.length) < 0;
        if (failed) {
            gr_set_free(fresh);   /* keep the table: same members, another encoding */
        } else {
            gr_ks_entry_t *entry = gr_db_find_live(db, key);
            entry->value = fresh;
            gr_set_free(set);
        }
    }
    gr_watch_touch_current(db, key);
    gr_db_count_changes(db, count);
}

/* SRANDMEMBER key [count] */
void gr_cmd_srandmember(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                        gr_reply_t *reply) {
    if (argc > 3) { gr_reply_error_text(reply, GR_ERR_SYNTAX, "ERR syntax error"); return; }
    int64_t count = 0;
    if (argc == 3) {
        if (parse_int64(argv[2], argv_length[2], &count) != 0) {
            gr_reply_error_text(reply, GR_ERR_NOT_INTEGER, "ERR value is not an integer or out of range");
            return;
        }
        if (count == INT64_MIN) {
            gr_reply_error_text(reply, GR_ERR_OUT_OF_RANGE,
                                "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807");
            return;
        }
    }
    gr_set_t *set;
    int found = find_set_or_reply(db, arg_bytes(argv, argv_length, 1), 0, &set, reply);
    if (found < 0) return;
    gr_set_member_t member;
    if (argc == 2) {
        if (!found) { gr_reply_nil(reply); return; }
        gr_set_random(set, next_random(), &member);
        gr_reply_bulk(reply, member.data, member.length);
        return;
    }
    if (!found || count == 0) { gr_reply_array_begin(reply, 0); return; }
    size_t size = gr_set_count(set);
    if (count < -GR_RANDOM_REPEATS_MAX) {
        gr_reply_error_text(reply, GR_ERR_OUT_OF_RANGE, GR_RANDOM_REPEATS_ERROR);
        return;
    }
    if (count < 0) {   /* repetitions allowed */
        uint64_t n = (uint64_t)(-count);
        gr_reply_array_begin(reply, (size_t)n);
        for (uint64_t i = 0; i < n && !reply->failed; i++) {
            gr_set_random(set, next_random(), &member);
            gr_reply_bulk(reply, member.data, member.length);
        }
        return;
    }
    if ((uint64_t)count >= size) { reply_members_as(reply, set, 1); return; }
    if ((uint64_t)count * 3 > size) {
        /* many of them: one pass choosing count of size (Knuth's selection sampling) */
        gr_reply_array_begin(reply, (size_t)count);
        size_t wanted = (size_t)count, left = size;
        gr_set_iter_t iter;
        gr_set_iter_start(set, &iter);
        while (wanted > 0 && gr_set_iter_next(&iter, &member)) {
            if (next_random() % left < wanted) {
                gr_reply_bulk(reply, member.data, member.length);
                wanted--;
            }
            left--;
        }
        return;
    }
    /* few of them: random picks, distinct ones kept in a scratch set */
    gr_set_config_t config = {.max_intset_entries = 0, .max_compact_entries = 0, .max_compact_value = 0};
    gr_set_t *picked = gr_set_new(GR_SET_TABLE);
    if (!picked) { gr_reply_oom(reply); return; }
    while (gr_set_count(picked) < (size_t)count) {
        gr_set_random(set, next_random(), &member);
        if (gr_set_add(picked, &config, member.data, member.length) < 0) {
            gr_set_free(picked);
            gr_reply_oom(reply);
            return;
        }
    }
    reply_members_as(reply, picked, 1);
    gr_set_free(picked);
}

/* SMOVE source destination member */
void gr_cmd_smove(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    (void)argc;
    gr_bytes_t source = arg_bytes(argv, argv_length, 1), destination = arg_bytes(argv, argv_length, 2);
    const uint8_t *member = argv[3];
    size_t member_length = argv_length[3];
    gr_set_t *from, *to;
    int found = find_set_or_reply(db, source, 1, &from, NULL);
    int to_found = find_set_or_reply(db, destination, 1, &to, NULL);
    if (found == 0) { gr_reply_integer(reply, 0); return; }
    if (found < 0 || to_found < 0) { gr_reply_wrongtype(reply); return; }
    if (from == to) { gr_reply_integer(reply, gr_set_contains(from, member, member_length)); return; }
    gr_set_config_t config = set_config(db);
    gr_set_t *created = NULL;
    if (!to_found) {   /* made before anything changes, so OOM leaves both keys as they were */
        created = gr_set_new_for(&config, member, member_length, 1);
        if (!created) { gr_reply_oom(reply); return; }
    }
    if (!gr_set_remove(from, member, member_length)) {
        gr_set_free(created);
        gr_reply_integer(reply, 0);
        return;
    }
    gr_db_count_changes(db, 1);
    gr_call_notify(db, GR_NOTIFY_SET, "srem", source);
    delete_if_empty(db, source, from);
    if (db->notify_flags && !gr_ks_find(db->keyspace, source.data, source.length))
        gr_call_notify(db, GR_NOTIFY_GENERIC, "del", source);
    gr_watch_touch_current(db, source);
    if (created) {
        if (!gr_db_add_key(db, destination, GR_TYPE_SET, created)) {
            gr_set_free(created);
            gr_reply_oom(reply);
            return;
        }
        to = created;
    }
    int added = gr_set_add(to, &config, member, member_length);
    if (added < 0) { delete_if_empty(db, destination, to); gr_reply_oom(reply); return; }
    if (added) {   /* a destination that already held the member did not change (Redis: no touch) */
        gr_db_count_changes(db, 1);
        gr_watch_touch_current(db, destination);
        gr_call_notify(db, GR_NOTIFY_SET, "sadd", destination);
    }
    gr_reply_integer(reply, 1);
}

/* ---- SSCAN ---- */

/* What one SSCAN call returns: the matching members' bytes copied into one buffer (an
 * intset hands out each member as text in a scratch struct, so pointers would not last). */
typedef struct scan_collect {
    const gr_member_scan_t *options;   /* its MATCH */
    uint8_t *bytes;
    size_t used, capacity;
    size_t *ends;          /* where each member's bytes end */
    size_t count, ends_capacity;
    int failed;
} scan_collect_t;

static int grow(void **buffer, size_t *capacity, size_t needed, size_t unit) {
    if (needed <= *capacity) return 0;
    size_t wanted = *capacity ? *capacity * 2 : 64;
    while (wanted < needed) wanted *= 2;
    void *grown = realloc(*buffer, wanted * unit);
    if (!grown) return -1;
    *buffer = grown;
    *capacity = wanted;
    return 0;
}

static void collect_member(void *context, const uint8_t *data, size_t length) {
    scan_collect_t *c = context;
    if (c->failed) return;
    if (!gr_member_scan_matches(c->options, data, length)) return;
    if (grow((void **)&c->bytes, &c->capacity, c->used + length, 1) != 0 ||
        grow((void **)&c->ends, &c->ends_capacity, c->count + 1, sizeof *c->ends) != 0) {
        c->failed = 1;
        return;
    }
    if (length) memcpy(c->bytes + c->used, data, length);
    c->used += length;
    c->ends[c->count++] = c->used;
}

/* SSCAN key cursor [MATCH pattern] [COUNT count]: the options and the reply's head as HSCAN's
 * and ZSCAN's (member_scan.h), the members collected as bytes (collect_member). */
void gr_cmd_sscan(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    uint64_t cursor;
    int valid = gr_parse_scan_cursor(argv[2], argv_length[2], &cursor) == 0;
    if (!valid) { gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR invalid cursor"); return; }
    gr_set_t *set;
    int found = find_set_or_reply(db, arg_bytes(argv, argv_length, 1), 0, &set, reply);
    if (found < 0) return;
    if (!found) { gr_member_scan_reply_empty(reply); return; }
    gr_member_scan_t options;
    if (gr_member_scan_start_or_reply(&options, 1, argc, argv, argv_length, 3, 0, reply) != 0) return;
    scan_collect_t collect = {.options = &options};
    uint64_t next = gr_set_scan(set, cursor, (size_t)options.count, collect_member, &collect);
    if (collect.failed) { free(collect.bytes); free(collect.ends); gr_reply_oom(reply); return; }
    gr_member_scan_reply_begin(reply, next, collect.count);
    for (size_t i = 0, start = 0; i < collect.count; start = collect.ends[i++])
        gr_reply_bulk(reply, collect.bytes + start, collect.ends[i] - start);
    free(collect.bytes);
    free(collect.ends);
}

/* ---- multi-key algebra: SINTER, SUNION, SDIFF, their STORE forms, SINTERCARD ---- */

enum { OP_INTER, OP_UNION, OP_DIFF };

/* The sets named by keys[0..n): NULL for a missing key. 0, or -1 with WRONGTYPE replied (every
 * key is checked, as Redis 7 does). */
static int lookup_sets_or_reply(gr_server_t *db, const uint8_t *const *keys, const size_t *lengths, size_t n,
                                gr_set_t **sets, gr_reply_t *reply) {
    for (size_t i = 0; i < n; i++) {
        gr_bytes_t key = {keys[i], (uint32_t)lengths[i]};
        if (find_set_or_reply(db, key, 0, &sets[i], reply) < 0) return -1;
    }
    return 0;
}

static int by_size(const void *a, const void *b) {
    size_t x = *(gr_set_t *const *)a ? gr_set_count(*(gr_set_t *const *)a) : 0;
    size_t y = *(gr_set_t *const *)b ? gr_set_count(*(gr_set_t *const *)b) : 0;
    return x < y ? -1 : x > y;
}

/* The result of op over sets[0..n) as a new set, built as SADD would build it (from an
 * intset on, Redis's dstset), or NULL on OOM. sets may hold NULLs (empty). */
static gr_set_t *combine(gr_server_t *db, int op, gr_set_t **sets, size_t n) {
    gr_set_config_t config = set_config(db);
    gr_set_t *result = gr_set_new(GR_SET_INTSET);
    if (!result) return NULL;
    gr_set_iter_t iter;
    gr_set_member_t member;
    if (op == OP_INTER) {
        for (size_t i = 0; i < n; i++) if (!sets[i]) return result;
        qsort(sets, n, sizeof sets[0], by_size);
        gr_set_iter_start(sets[0], &iter);
        while (gr_set_iter_next(&iter, &member)) {
            size_t j = 1;
            while (j < n && (sets[j] == sets[0] || gr_set_contains(sets[j], member.data, member.length))) j++;
            if (j == n && gr_set_add(result, &config, member.data, member.length) < 0) goto oom;
        }
    } else if (op == OP_UNION) {
        for (size_t i = 0; i < n; i++) {
            if (!sets[i]) continue;
            gr_set_iter_start(sets[i], &iter);
            while (gr_set_iter_next(&iter, &member))
                if (gr_set_add(result, &config, member.data, member.length) < 0) goto oom;
        }
    } else if (sets[0]) {
        gr_set_iter_start(sets[0], &iter);
        while (gr_set_iter_next(&iter, &member)) {
            size_t j = 1;
            while (j < n && (!sets[j] || (sets[j] != sets[0] && !gr_set_contains(sets[j], member.data, member.length)))) j++;
            if (j == n && gr_set_add(result, &config, member.data, member.length) < 0) goto oom;
        }
    }
    return result;
oom:
    gr_set_free(result);
    return NULL;
}

static void algebra(gr_server_t *db, int op, const uint8_t *const *keys, const size_t *lengths, size_t n,
                    const gr_bytes_t *destination, gr_reply_t *reply) {
    gr_set_t *stack[16];
    gr_set_t **sets = n <= 16 ? stack : malloc(n * sizeof *sets);
    if (!sets) { gr_reply_oom(reply); return; }
    if (lookup_sets_or_reply(db, keys, lengths, n, sets, reply) != 0) goto done;
    gr_set_t *result = combine(db, op, sets, n);
    if (!result) { gr_reply_oom(reply); goto done; }
    if (!destination) {
        reply_members(reply, result);
        gr_set_free(result);
        goto done;
    }
    int64_t size = (int64_t)gr_set_count(result);
    if (size == 0) {
        gr_set_free(result);
        if (gr_db_delete_key(db, *destination)) gr_db_count_changes(db, 1);
        gr_reply_integer(reply, 0);
        goto done;
    }
    if (store_set(db, *destination, result) != 0) { gr_reply_oom(reply); goto done; }
    gr_db_count_changes(db, 1);
    gr_reply_integer(reply, size);
done:
    if (sets != stack) free(sets);
}

void gr_cmd_sinter(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    algebra(db, OP_INTER, argv + 1, argv_length + 1, argc - 1, NULL, reply);
}
void gr_cmd_sunion(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    algebra(db, OP_UNION, argv + 1, argv_length + 1, argc - 1, NULL, reply);
}
void gr_cmd_sdiff(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    algebra(db, OP_DIFF, argv + 1, argv_length + 1, argc - 1, NULL, reply);
}
void gr_cmd_sinterstore(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                        gr_reply_t *reply) {
    gr_bytes_t destination = arg_bytes(argv, argv_length, 1);
    algebra(db, OP_INTER, argv + 2, argv_length + 2, argc - 2, &destination, reply);
}
void gr_cmd_sunionstore(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                        gr_reply_t *reply) {
    gr_bytes_t destination = arg_bytes(argv, argv_length, 1);
    algebra(db, OP_UNION, argv + 2, argv_length + 2, argc - 2, &destination, reply);
}
void gr_cmd_sdiffstore(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                       gr_reply_t *reply) {
    gr_bytes_t destination = arg_bytes(argv, argv_length, 1);
    algebra(db, OP_DIFF, argv + 2, argv_length + 2, argc - 2, &destination, reply);
}

/* SINTERCARD numkeys key [key ...] [LIMIT limit] */
void gr_cmd_sintercard(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                       gr_reply_t *reply) {
    int64_t numkeys, limit = 0;
    if (parse_int64(argv[1], argv_length[1], &numkeys) != 0 || numkeys < 1) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR numkeys should be greater than 0");
        return;
    }
    if ((uint64_t)numkeys > argc - 2) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR Number of keys can't be greater than number of args");
        return;
    }
    for (size_t i = 2 + (size_t)numkeys; i < argc; i++) {
        if (gr_word_is(argv[i], argv_length[i], "limit") && i + 1 < argc) {
            i++;
            if (parse_int64(argv[i], argv_length[i], &limit) != 0 || limit < 0) {
                gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR LIMIT can't be negative");
                return;
            }
        } else {
            gr_reply_error_text(reply, GR_ERR_SYNTAX, "ERR syntax error");
            return;
        }
    }
    size_t n = (size_t)numkeys;
    gr_set_t *stack[16];
    gr_set_t **sets = n <= 16 ? stack : malloc(n * sizeof *sets);
    if (!sets) { gr_reply_oom(reply); return; }
    if (lookup_sets_or_reply(db, argv + 2, argv_length + 2, n, sets, reply) == 0) {
        int64_t cardinality = 0;
        size_t i = 0;
        while (i < n && sets[i]) i++;
        if (i == n) {
            qsort(sets, n, sizeof sets[0], by_size);
            gr_set_iter_t iter;
            gr_set_member_t member;
            gr_set_iter_start(sets[0], &iter);
            while ((limit == 0 || cardinality < limit) && gr_set_iter_next(&iter, &member)) {
                size_t j = 1;
                while (j < n && (sets[j] == sets[0] || gr_set_contains(sets[j], member.data, member.length))) j++;
                if (j == n) cardinality++;
            }
        }
        gr_reply_integer(reply, cardinality);
    }
    if (sets != stack) free(sets);
}
