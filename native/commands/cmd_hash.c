/* cmd_hash.c — the HASH command layer: Redis's semantics over the hash engine.
 *
 * The engine is engines/hash/ (hash.c: the value, a compact map or the table engine, and its
 * field-expiry map); this file validates every argument first, then mutates, then replies,
 * with Redis's reply shapes and error texts (the field-expiry family's texts are
 * valkey-server 9.1's, the server the differential test checks them against). Every command
 * is an argv row (hash.def): over the ring it travels as a CommandRequest.
 *
 * Field expiry: before a command reads or writes a hash it drops the fields whose time has
 * passed (lazy; one comparison when none is due) and deletes the key if that emptied it; the
 * server's cron does the same for hashes it visits (active: the hash row's expire_parts hook in
 * exec/value_type.c, which gr_db_cron calls while any hash holds a TTL). A hash
 * left empty by any command is deleted, as in Redis.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands/commands.h"
#include "commands/member_scan.h"
#include "core/number.h"
#include "engines/hash/hash.h"
#include "engines/table/table.h"   /* HRANDFIELD's set of fields already picked */
#include "exec/db.h"
#include "core/bytes.h"
#include "exec/lookup.h"
#include "exec/transaction.h"

static gr_bytes_t arg(const uint8_t *const *argv, const size_t *argv_length, size_t i) {
    return (gr_bytes_t){argv[i], (uint32_t)argv_length[i]};
}

static gr_hash_limits_t limits_of(const gr_server_t *db) {
    return (gr_hash_limits_t){db->config.hash_max_listpack_entries, db->config.hash_max_listpack_value};
}

static void reply_error(gr_reply_t *reply, const char *text) { gr_reply_error_text(reply, GR_ERR_GENERIC, text); }
static void reply_not_integer(gr_reply_t *reply) {
    gr_reply_error_text(reply, GR_ERR_NOT_INTEGER, "ERR value is not an integer or out of range");
}
static void reply_syntax(gr_reply_t *reply) { gr_reply_error_text(reply, GR_ERR_SYNTAX, "ERR syntax error"); }


/* Lazy field expiry on a hash found under key: 1 when that emptied it (the key is deleted). */
static int expire_fields(gr_server_t *db, gr_bytes_t key, gr_hash_t *hash) {
    size_t expired = gr_hash_expire_due(hash, db->now_ms);
    if (!expired) return 0;
    gr_db_count_changes(db, (int64_t)expired);
    gr_watch_touch_current(db, key);
    if (gr_hash_count(hash) != 0) return 0;
    gr_ks_delete(db->keyspace, key.data, key.length);
    return 1;
}

/* The hash at key: 1 found (*hash), 0 absent, -1 another type (WRONGTYPE replied). A read
 * counts a keyspace hit or miss, as Redis's lookupKeyRead does. */
static int find_hash_or_reply(gr_server_t *db, gr_bytes_t key, gr_hash_t **hash, int for_write, gr_reply_t *reply) {
    void *value;
    int found = gr_db_find_typed(db, key, GR_TYPE_HASH, for_write, &value, reply);
    if (found <= 0) return found;
    if (expire_fields(db, key, value)) return 0;
    *hash = value;
    return 1;
}

static gr_hash_t *create_hash_or_reply(gr_server_t *db, gr_bytes_t key, gr_reply_t *reply) {
    gr_hash_t *hash = gr_hash_new();
    if (hash && gr_db_add_key(db, key, GR_TYPE_HASH, hash)) return hash;
    gr_hash_free(hash);
    gr_reply_oom(reply);
    return NULL;
}

/* Found or created: NULL when a reply (WRONGTYPE, OOM) is written. */
static gr_hash_t *hash_for_write_or_reply(gr_server_t *db, gr_bytes_t key, gr_reply_t *reply) {
    gr_hash_t *hash = NULL;
    int found = find_hash_or_reply(db, key, &hash, 1, reply);
    if (found < 0) return NULL;
    return found ? hash : create_hash_or_reply(db, key, reply);
}

static void delete_if_empty(gr_server_t *db, gr_bytes_t key, gr_hash_t *hash) {
    if (gr_hash_count(hash) == 0) gr_db_delete_key(db, key);
}

/* A field-TTL command's "del" after its own events, when it emptied the hash (Redis 7.4, Valkey). */
static void notify_if_deleted(gr_server_t *db, gr_bytes_t key) {
    if (db->notify_flags && !gr_ks_find(db->keyspace, key.data, key.length))
        gr_call_notify(db, GR_NOTIFY_GENERIC, "del", key);
}

/* HPEXPIREAT key at-ms <the arguments from `rest` on>: the absolute form HEXPIRE, HPEXPIRE and
 * HEXPIREAT propagate as; HSETEX and HGETEX with EX/PX/EXAT as the same command with PXAT. */
static void effect_with_absolute_time(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                                      size_t time_at, int64_t at_ms, int as_pxat) {
    gr_effect_begin(db, argc);
    for (size_t i = 0; i < argc; i++) {
        if (i == 0 && !as_pxat) gr_effect_word(db, "HPEXPIREAT");
        else if (i == time_at && as_pxat) gr_effect_word(db, "PXAT");
        else if (i == time_at + (size_t)as_pxat) gr_effect_int(db, at_ms);
        else gr_effect_bulk(db, argv[i], argv_length[i]);
    }
}

static void reply_entry_value(gr_reply_t *reply, const gr_hash_entry_t *entry) {
    gr_reply_bulk(reply, entry->value, entry->value_length);
}

static int protocol_of(const gr_server_t *db) { return db->current ? db->current->protocol : 2; }

/* ---- HSET, HMSET, HSETNX ---- */

static void hset_generic(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                         gr_reply_t *reply, const char *name, int reply_ok) {
    if (argc % 2 == 1) {
        gr_reply_arity_error(reply, name);
        return;
    }
    gr_bytes_t key = arg(argv, argv_length, 1);
    gr_hash_t *hash = hash_for_write_or_reply(db, key, reply);
    if (!hash) return;
    gr_hash_limits_t limits = limits_of(db);
    int64_t added = 0;
    for (size_t i = 2; i < argc; i += 2) {
        int result = gr_hash_set(hash, argv[i], argv_length[i], argv[i + 1], argv_length[i + 1], 0, &limits);
        if (result < 0) {
            gr_db_mark_changed(db, key, (int64_t)(i - 2) / 2);
            delete_if_empty(db, key, hash);
            gr_reply_oom(reply);
            return;
        }
        added += result;
    }
    gr_db_mark_changed(db, key, (int64_t)(argc - 2) / 2);
    if (reply_ok) gr_reply_ok(reply); else gr_reply_integer(reply, added);
}

void gr_cmd_hset(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    hset_generic(db, argc, argv, argv_length, reply, "hset", 0);
}

void gr_cmd_hmset(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    hset_generic(db, argc, argv, argv_length, reply, "hmset", 1);
}

void gr_cmd_hsetnx(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    (void)argc;
    gr_bytes_t key = arg(argv, argv_length, 1);
    gr_hash_t *hash = NULL;
    int found = find_hash_or_reply(db, key, &hash, 1, reply);
    if (found < 0) return;
    if (found && gr_hash_get(hash, argv[2], argv_length[2], NULL)) {
        gr_reply_integer(reply, 0);
        return;
    }
    if (!found && !(hash = create_hash_or_reply(db, key, reply))) return;
    gr_hash_limits_t limits = limits_of(db);
    if (gr_hash_set(hash, argv[2], argv_length[2], argv[3], argv_length[3], 0, &limits) < 0) {
        delete_if_empty(db, key, hash);
        gr_reply_oom(reply);
        return;
    }
    gr_db_mark_changed(db, key, 1);
    gr_reply_integer(reply, 1);
}

/* ---- reads ---- */

void gr_cmd_hget(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    (void)argc;
    gr_hash_t *hash = NULL;
    int found = find_hash_or_reply(db, arg(argv, argv_length, 1), &hash, 0, reply);
    if (found < 0) return;
    gr_hash_entry_t entry;
    if (found && gr_hash_get(hash, argv[2], argv_length[2], &entry)) reply_entry_value(reply, &entry);
    else gr_reply_nil(reply);
}

void gr_cmd_hmget(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    gr_hash_t *hash = NULL;
    int found = find_hash_or_reply(db, arg(argv, argv_length, 1), &hash, 0, reply);
    if (found < 0) return;
    gr_reply_array_begin(reply, argc - 2);
    for (size_t i = 2; i < argc; i++) {
        gr_hash_entry_t entry;
        if (found && gr_hash_get(hash, argv[i], argv_length[i], &entry)) reply_entry_value(reply, &entry);
        else gr_reply_nil(reply);
    }
}

void gr_cmd_hlen(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    (void)argc;
    gr_hash_t *hash = NULL;
    int found = find_hash_or_reply(db, arg(argv, argv_length, 1), &hash, 0, reply);
    if (found >= 0) gr_reply_integer(reply, found ? (int64_t)gr_hash_count(hash) : 0);
}

void gr_cmd_hexists(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    (void)argc;
    gr_hash_t *hash = NULL;
    int found = find_hash_or_reply(db, arg(argv, argv_length, 1), &hash, 0, reply);
    if (found >= 0) gr_reply_integer(reply, found && gr_hash_get(hash, argv[2], argv_length[2], NULL));
}

void gr_cmd_hstrlen(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    (void)argc;
    gr_hash_t *hash = NULL;
    int found = find_hash_or_reply(db, arg(argv, argv_length, 1), &hash, 0, reply);
    if (found < 0) return;
    gr_hash_entry_t entry;
    gr_reply_integer(reply, found && gr_hash_get(hash, argv[2], argv_length[2], &entry) ? (int64_t)entry.value_length : 0);
}

enum { WANT_FIELDS = 1, WANT_VALUES = 2 };

static void reply_all(gr_server_t *db, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply, int want) {
    gr_hash_t *hash = NULL;
    int found = find_hash_or_reply(db, arg(argv, argv_length, 1), &hash, 0, reply);
    if (found < 0) return;
    size_t count = found ? gr_hash_count(hash) : 0;
    if (want == (WANT_FIELDS | WANT_VALUES)) gr_reply_map_begin(reply, count);
    else gr_reply_array_begin(reply, count);
    if (!found) return;
    /* Written a run at a time (gr_reply_bulks): entries stay valid until the hash changes, and
     * the table refuses entries past UINT32_MAX bytes, so every length fits gr_bytes_t's. */
    gr_hash_iter_t iter;
    gr_hash_entry_t entry;
    gr_bytes_t run[32];
    size_t n = 0;
    gr_hash_iter_start(hash, &iter);
    while (gr_hash_iter_next(&iter, &entry)) {
        if (want & WANT_FIELDS) run[n++] = (gr_bytes_t){entry.field, (uint32_t)entry.field_length};
        if (want & WANT_VALUES) run[n++] = (gr_bytes_t){entry.value, (uint32_t)entry.value_length};
        if (n + 2 > sizeof run / sizeof run[0]) {   /* no room for another entry's two */
            gr_reply_bulks(reply, run, n);
            n = 0;
        }
    }
    if (n) gr_reply_bulks(reply, run, n);
}

void gr_cmd_hgetall(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    (void)argc;
    reply_all(db, argv, argv_length, reply, WANT_FIELDS | WANT_VALUES);
}

void gr_cmd_hkeys(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    (void)argc;
    reply_all(db, argv, argv_length, reply, WANT_FIELDS);
}

void gr_cmd_hvals(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    (void)argc;
    reply_all(db, argv, argv_length, reply, WANT_VALUES);
}

/* ---- HDEL ---- */

void gr_cmd_hdel(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    gr_bytes_t key = arg(argv, argv_length, 1);
    gr_hash_t *hash = NULL;
    int found = find_hash_or_reply(db, key, &hash, 1, reply);
    if (found < 0) return;
    int64_t deleted = 0;
    for (size_t i = 2; found && i < argc; i++) deleted += gr_hash_delete(hash, argv[i], argv_length[i]);
    if (deleted) {
        gr_db_mark_changed(db, key, deleted);
        delete_if_empty(db, key, hash);
    }
    gr_reply_integer(reply, deleted);
}

/* ---- HINCRBY, HINCRBYFLOAT ---- */

void gr_cmd_hincrby(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    (void)argc;
    int64_t increment, value = 0;
    if (gr_bytes_to_int64(argv[3], argv_length[3], &increment) != 0) { reply_not_integer(reply); return; }
    gr_bytes_t key = arg(argv, argv_length, 1);
    gr_hash_t *hash = hash_for_write_or_reply(db, key, reply);
    if (!hash) return;
    gr_hash_entry_t entry;
    if (gr_hash_get(hash, argv[2], argv_length[2], &entry) &&
        gr_bytes_to_int64(entry.value, entry.value_length, &value) != 0) {
        delete_if_empty(db, key, hash);
        reply_error(reply, "ERR hash value is not an integer");
        return;
    }
    if ((increment < 0 && value < 0 && increment < INT64_MIN - value) ||
        (increment > 0 && value > 0 && increment > INT64_MAX - value)) {
        delete_if_empty(db, key, hash);
        reply_error(reply, "ERR increment or decrement would overflow");
        return;
    }
    value += increment;
    char text[24];
    size_t length = gr_int64_to_text(value, text);
    gr_hash_limits_t limits = limits_of(db);
    if (gr_hash_set(hash, argv[2], argv_length[2], (const uint8_t *)text, length, 1, &limits) < 0) {
        delete_if_empty(db, key, hash);
        gr_reply_oom(reply);
        return;
    }
    gr_db_mark_changed(db, key, 1);
    gr_reply_integer(reply, value);
}

void gr_cmd_hincrbyfloat(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                         gr_reply_t *reply) {
    (void)argc;
    long double increment, value = 0;
    if (gr_text_to_long_double(argv[3], argv_length[3], &increment) != 0) {
        reply_error(reply, "ERR value is not a valid float");
        return;
    }
    if (isnan(increment) || isinf(increment)) {
        reply_error(reply, "ERR value is NaN or Infinity");
        return;
    }
    gr_bytes_t key = arg(argv, argv_length, 1);
    gr_hash_t *hash = hash_for_write_or_reply(db, key, reply);
    if (!hash) return;
    gr_hash_entry_t entry;
    if (gr_hash_get(hash, argv[2], argv_length[2], &entry) &&
        gr_text_to_long_double(entry.value, entry.value_length, &value) != 0) {
        delete_if_empty(db, key, hash);
        reply_error(reply, "ERR hash value is not a float");
        return;
    }
    value += increment;
    char text[GR_MAX_LONG_DOUBLE_CHARS];
    size_t length = isnan(value) || isinf(value) ? 0 : gr_long_double_to_text(value, text, sizeof text);
    if (length == 0) {
        delete_if_empty(db, key, hash);
        reply_error(reply, "ERR increment would produce NaN or Infinity");
        return;
    }
    gr_hash_limits_t limits = limits_of(db);
    if (gr_hash_set(hash, argv[2], argv_length[2], (const uint8_t *)text, length, 1, &limits) < 0) {
        delete_if_empty(db, key, hash);
        gr_reply_oom(reply);
        return;
    }
    gr_db_mark_changed(db, key, 1);
    /* propagated as the value it made, so replay never re-does float arithmetic */
    gr_effect_begin(db, 4);
    gr_effect_word(db, "HSET"), gr_effect_bytes(db, key), gr_effect_bulk(db, argv[2], argv_length[2]);
    gr_effect_bulk(db, (const uint8_t *)text, length);
    gr_reply_bulk(reply, (const uint8_t *)text, length);
}

/* ---- HSCAN ---- */

static void scan_collect(void *context, const gr_hash_entry_t *entry) {
    gr_hash_entry_t *slot = gr_member_scan_slot(context, entry->field, entry->field_length);
    if (slot) *slot = *entry;
}

/* Redis's order: the cursor, then the key (a missing key answers an empty scan without
 * looking at the options, a wrong type WRONGTYPE), then the options. */
void gr_cmd_hscan(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    uint64_t cursor;
    if (gr_parse_scan_cursor(argv[2], argv_length[2], &cursor) != 0) {
        reply_error(reply, "ERR invalid cursor");
        return;
    }
    gr_hash_t *hash = NULL;
    int found = find_hash_or_reply(db, arg(argv, argv_length, 1), &hash, 0, reply);
    if (found < 0) return;
    if (!found) { gr_member_scan_reply_empty(reply); return; }
    gr_member_scan_t scan;
    if (gr_member_scan_start_or_reply(&scan, sizeof(gr_hash_entry_t), argc, argv, argv_length, 3, 1, reply) != 0) return;
    uint64_t next = gr_hash_scan(hash, cursor, (size_t)scan.count, scan_collect, &scan);
    if (scan.failed) {
        gr_member_scan_free(&scan);
        gr_reply_oom(reply);
        return;
    }
    const gr_hash_entry_t *entries = scan.entries;
    gr_member_scan_reply_begin(reply, next, scan.entry_count * (scan.novalues ? 1 : 2));
    for (size_t i = 0; i < scan.entry_count; i++) {
        gr_reply_bulk(reply, entries[i].field, entries[i].field_length);
        if (!scan.novalues) gr_reply_bulk(reply, entries[i].value, entries[i].value_length);
    }
    gr_member_scan_free(&scan);
}

/* ---- HRANDFIELD ---- */

static uint64_t random_state = 0x9E3779B97F4A7C15ull;

static uint64_t next_random(void) {   /* xorshift64*: HRANDFIELD needs spread, not secrecy */
    uint64_t x = random_state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    random_state = x;
    return x * 0x2545F4914F6CDD1Dull;
}

static void reply_random_entry(gr_reply_t *reply, const gr_hash_entry_t *entry, int withvalues, int resp3) {
    if (withvalues && resp3) gr_reply_array_begin(reply, 2);
    gr_reply_bulk(reply, entry->field, entry->field_length);
    if (withvalues) gr_reply_bulk(reply, entry->value, entry->value_length);
}

void gr_cmd_hrandfield(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                       gr_reply_t *reply) {
    int64_t count = 0;
    int withvalues = 0, with_count = argc >= 3;
    if (with_count) {
        if (gr_bytes_to_int64(argv[2], argv_length[2], &count) != 0) { reply_not_integer(reply); return; }
        if (count == INT64_MIN) {
            reply_error(reply, GR_RANDOM_COUNT_RANGE_ERROR);
            return;
        }
        if (argc > 4 || (argc == 4 && !gr_word_is(argv[3], argv_length[3], "withvalues"))) { reply_syntax(reply); return; }
        if (argc == 4) {
            withvalues = 1;
            if (count < -INT64_MAX / 2 || count > INT64_MAX / 2) { reply_error(reply, "ERR value is out of range"); return; }
        }
    }
    gr_hash_t *hash = NULL;
    int found = find_hash_or_reply(db, arg(argv, argv_length, 1), &hash, 0, reply);
    if (found < 0) return;
    gr_hash_entry_t entry;
    if (!with_count) {
        if (found && gr_hash_random(hash, next_random(), &entry)) gr_reply_bulk(reply, entry.field, entry.field_length);
        else gr_reply_nil(reply);
        return;
    }
    size_t size = found ? gr_hash_count(hash) : 0;
    if (count == 0 || size == 0) {
        gr_reply_array_begin(reply, 0);
        return;
    }
    int resp3 = protocol_of(db) >= 3;
    size_t per_entry = withvalues && !resp3 ? 2 : 1;
    if (count < -GR_RANDOM_REPEATS_MAX) { reply_error(reply, GR_RANDOM_REPEATS_ERROR); return; }
    if (count < 0) {   /* with repeats */
        uint64_t wanted = (uint64_t)(-count);
        gr_reply_array_begin(reply, (size_t)wanted * per_entry);
        for (uint64_t i = 0; i < wanted; i++) {
            gr_hash_random(hash, next_random(), &entry);
            reply_random_entry(reply, &entry, withvalues, resp3);
        }
        return;
    }
    if ((uint64_t)count >= size) {   /* the whole hash */
        gr_reply_array_begin(reply, size * per_entry);
        gr_hash_iter_t iter;
        gr_hash_iter_start(hash, &iter);
        while (gr_hash_iter_next(&iter, &entry)) reply_random_entry(reply, &entry, withvalues, resp3);
        return;
    }
    if ((uint64_t)count * 3 <= size) {
        /* distinct, few of many: random entries, the ones already replied remembered in a set
         * (Redis's CASE 4); should the set run out of memory a field may repeat, the reply
         * stays well formed */
        gr_table_t *seen = gr_table_new(0, GR_MEM_OTHER);
        if (!seen) { gr_reply_oom(reply); return; }
        gr_table_reserve(seen, (size_t)count);
        gr_reply_array_begin(reply, (size_t)count * per_entry);
        for (int64_t added = 0; added < count;) {
            gr_hash_random(hash, next_random(), &entry);
            if (gr_table_add(seen, entry.field, entry.field_length) == 0) continue;
            reply_random_entry(reply, &entry, withvalues, resp3);
            added++;
        }
        gr_table_free(seen);
        return;
    }
    /* distinct, most of them: every entry in an array, then a partial Fisher-Yates shuffle */
    gr_hash_entry_t *all = gr_mem_alloc(size * sizeof *all, GR_MEM_OTHER);
    if (!all) { gr_reply_oom(reply); return; }
    gr_hash_iter_t iter;
    size_t n = 0;
    gr_hash_iter_start(hash, &iter);
    while (n < size && gr_hash_iter_next(&iter, &all[n])) n++;
    gr_reply_array_begin(reply, (size_t)count * per_entry);
    for (size_t i = 0; i < (size_t)count; i++) {
        size_t j = i + (size_t)(next_random() % (n - i));
        gr_hash_entry_t picked = all[j];
        all[j] = all[i];
        all[i] = picked;
        reply_random_entry(reply, &picked, withvalues, resp3);
    }
    gr_mem_free(all, GR_MEM_OTHER);
}

/* ---- field expiry: HEXPIRE, HPEXPIRE, HEXPIREAT, HPEXPIREAT, HTTL, HPTTL, HEXPIRETIME,
 * HPEXPIRETIME, HPERSIST, and HGETDEL, HGETEX, HSETEX ---- */

static const char numfields_text[] = "ERR numfields should be greater than 0 and match the provided number of fields";

/* How a command words a bad FIELDS clause (valkey 9.1's texts differ per family). */
typedef enum fields_style {
    FIELDS_SET = 0,    /* HEXPIRE...: a missing FIELDS or bad count is the numfields error */
    FIELDS_READ = 1,   /* HTTL..., HPERSIST: a missing FIELDS or bad count is a syntax error */
    FIELDS_GET = 2,    /* HGETDEL, HGETEX, HSETEX: missing FIELDS is a syntax error, a bad count numfields */
} fields_style_t;

/* "FIELDS numfields field [field ...]" at argv[at], each field taking per_field arguments:
 * 0 with *first (argv index of the first field) and *count, or -1 with the error replied. */
static int parse_fields_or_reply(size_t argc, const uint8_t *const *argv, const size_t *argv_length, size_t at,
                                 size_t per_field, fields_style_t style, size_t *first, size_t *count,
                                 gr_reply_t *reply) {
    const char *bad_count = style == FIELDS_READ ? "ERR syntax error" : numfields_text;
    if (at >= argc || !gr_word_is(argv[at], argv_length[at], "fields")) {
        reply_error(reply, style == FIELDS_SET ? numfields_text : "ERR syntax error");
        return -1;
    }
    int64_t n;
    if (at + 1 >= argc) { reply_error(reply, bad_count); return -1; }
    if (gr_bytes_to_int64(argv[at + 1], argv_length[at + 1], &n) != 0) { reply_not_integer(reply); return -1; }
    if (n <= 0 || (uint64_t)n > (argc - at - 2) / per_field || (size_t)n * per_field != argc - at - 2) {
        reply_error(reply, bad_count);
        return -1;
    }
    *first = at + 2;
    *count = (size_t)n;
    return 0;
}

static void reply_invalid_expire(gr_reply_t *reply, const char *name) {
    char text[96];
    snprintf(text, sizeof text, "ERR invalid expire time in '%s' command", name);
    reply_error(reply, text);
}

/* An expiry argument to absolute unix ms: 0, or -1 with the error replied. */
static int parse_expire_or_reply(const gr_server_t *db, const uint8_t *data, size_t length, int unit_ms, int absolute,
                                 const char *name, int64_t *at_ms, gr_reply_t *reply) {
    int64_t when;
    if (gr_bytes_to_int64(data, length, &when) != 0) { reply_not_integer(reply); return -1; }
    if (when < 0) { reply_invalid_expire(reply, name); return -1; }
    if (!unit_ms) {
        if (when > INT64_MAX / 1000) { reply_invalid_expire(reply, name); return -1; }
        when *= 1000;
    }
    if (!absolute) {
        if (when > INT64_MAX - db->now_ms) { reply_invalid_expire(reply, name); return -1; }
        when += db->now_ms;
    }
    *at_ms = when;
    return 0;
}

/* Give a field (which exists) an expiry, or delete it when the time has passed: 1 set,
 * 2 deleted, -1 out of memory. */
static int apply_field_expire(gr_server_t *db, gr_hash_t *hash, const uint8_t *field, size_t field_length, int64_t at_ms) {
    if (at_ms <= db->now_ms) {
        gr_hash_delete(hash, field, field_length);
        return 2;
    }
    gr_hash_limits_t limits = limits_of(db);
    return gr_hash_set_field_expire(hash, field, field_length, at_ms, &limits) == 0 ? 1 : -1;
}

enum { COND_NX = 1, COND_XX = 2, COND_GT = 4, COND_LT = 8 };

static void hexpire_generic(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                            gr_reply_t *reply, const char *name, int unit_ms, int absolute) {
    int64_t at_ms;
    if (parse_expire_or_reply(db, argv[2], argv_length[2], unit_ms, absolute, name, &at_ms, reply)) return;
    size_t at = 3;
    int condition = 0;
    for (; at < argc; at++) {
        if (gr_word_is(argv[at], argv_length[at], "nx")) condition |= COND_NX;
        else if (gr_word_is(argv[at], argv_length[at], "xx")) condition |= COND_XX;
        else if (gr_word_is(argv[at], argv_length[at], "gt")) condition |= COND_GT;
        else if (gr_word_is(argv[at], argv_length[at], "lt")) condition |= COND_LT;
        else break;
    }
    if ((condition & COND_NX) && (condition & (COND_XX | COND_GT | COND_LT))) {
        reply_error(reply, "ERR NX and XX, GT or LT options at the same time are not compatible");
        return;
    }
    if ((condition & COND_GT) && (condition & COND_LT)) {
        reply_error(reply, "ERR GT and LT options at the same time are not compatible");
        return;
    }
    size_t first, count;
    if (parse_fields_or_reply(argc, argv, argv_length, at, 1, FIELDS_SET, &first, &count, reply)) return;
    gr_bytes_t key = arg(argv, argv_length, 1);
    gr_hash_t *hash = NULL;
    int found = find_hash_or_reply(db, key, &hash, 1, reply);
    if (found < 0) return;
    gr_reply_array_begin(reply, count);
    int64_t changed = 0, expired = 0;
    for (size_t i = first; i < first + count; i++) {
        int64_t current = found ? gr_hash_field_expire(hash, argv[i], argv_length[i]) : -2;
        int result;
        if (current == -2) result = -2;
        else if ((condition & COND_NX) && current != -1) result = 0;
        else if ((condition & COND_XX) && current == -1) result = 0;
        else if ((condition & COND_GT) && (current == -1 || at_ms <= current)) result = 0;
        else if ((condition & COND_LT) && current != -1 && at_ms >= current) result = 0;
        else result = apply_field_expire(db, hash, argv[i], argv_length[i], at_ms);
        if (result == -1) result = 0;   /* out of memory: not set */
        if (result > 0) changed++;
        if (result == 2) expired++;
        gr_reply_integer(reply, result);
    }
    if (changed) {
        gr_db_mark_changed(db, key, changed);
        delete_if_empty(db, key, hash);
        gr_call_notify(db, GR_NOTIFY_HASH, expired ? "hexpired" : "hexpire", key);
        notify_if_deleted(db, key);
        effect_with_absolute_time(db, argc, argv, argv_length, 2, at_ms, 0);
    }
}

void gr_cmd_hexpire(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    hexpire_generic(db, argc, argv, argv_length, reply, "hexpire", 0, 0);
}
void gr_cmd_hpexpire(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    hexpire_generic(db, argc, argv, argv_length, reply, "hpexpire", 1, 0);
}
void gr_cmd_hexpireat(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    hexpire_generic(db, argc, argv, argv_length, reply, "hexpireat", 0, 1);
}
void gr_cmd_hpexpireat(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                       gr_reply_t *reply) {
    hexpire_generic(db, argc, argv, argv_length, reply, "hpexpireat", 1, 1);
}

enum { TTL_SECONDS, TTL_MS, EXPIRETIME_SECONDS, EXPIRETIME_MS, PERSIST };

static void httl_generic(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                         gr_reply_t *reply, int what) {
    size_t first, count;
    if (parse_fields_or_reply(argc, argv, argv_length, 2, 1, FIELDS_READ, &first, &count, reply)) return;
    gr_bytes_t key = arg(argv, argv_length, 1);
    gr_hash_t *hash = NULL;
    int found = find_hash_or_reply(db, key, &hash, what == PERSIST, reply);
    if (found < 0) return;
    gr_reply_array_begin(reply, count);
    int64_t persisted = 0;
    for (size_t i = first; i < first + count; i++) {
        int64_t at = found ? gr_hash_field_expire(hash, argv[i], argv_length[i]) : -2;
        if (at < 0) { gr_reply_integer(reply, at); continue; }
        switch (what) {
        case TTL_SECONDS: gr_reply_integer(reply, (at - db->now_ms + 500) / 1000); break;
        case TTL_MS: gr_reply_integer(reply, at - db->now_ms); break;
        case EXPIRETIME_SECONDS: gr_reply_integer(reply, at / 1000); break;
        case EXPIRETIME_MS: gr_reply_integer(reply, at); break;
        default:
            persisted += gr_hash_persist_field(hash, argv[i], argv_length[i]);
            gr_reply_integer(reply, 1);
        }
    }
    if (persisted) {
        gr_db_mark_changed(db, key, persisted);
        gr_call_notify(db, GR_NOTIFY_HASH, "hpersist", key);
    }
}

void gr_cmd_httl(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    httl_generic(db, argc, argv, argv_length, reply, TTL_SECONDS);
}
void gr_cmd_hpttl(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    httl_generic(db, argc, argv, argv_length, reply, TTL_MS);
}
void gr_cmd_hexpiretime(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                        gr_reply_t *reply) {
    httl_generic(db, argc, argv, argv_length, reply, EXPIRETIME_SECONDS);
}
void gr_cmd_hpexpiretime(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                         gr_reply_t *reply) {
    httl_generic(db, argc, argv, argv_length, reply, EXPIRETIME_MS);
}
void gr_cmd_hpersist(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                     gr_reply_t *reply) {
    httl_generic(db, argc, argv, argv_length, reply, PERSIST);
}

void gr_cmd_hgetdel(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                    gr_reply_t *reply) {
    size_t first, count;
    if (parse_fields_or_reply(argc, argv, argv_length, 2, 1, FIELDS_GET, &first, &count, reply)) return;
    gr_bytes_t key = arg(argv, argv_length, 1);
    gr_hash_t *hash = NULL;
    int found = find_hash_or_reply(db, key, &hash, 1, reply);
    if (found < 0) return;
    gr_reply_array_begin(reply, count);
    int64_t deleted = 0;
    for (size_t i = first; i < first + count; i++) {
        gr_hash_entry_t entry;
        if (found && gr_hash_get(hash, argv[i], argv_length[i], &entry)) {
            reply_entry_value(reply, &entry);   /* written before the delete frees it */
            deleted += gr_hash_delete(hash, argv[i], argv_length[i]);
        } else {
            gr_reply_nil(reply);
        }
    }
    if (deleted) {
        gr_db_mark_changed(db, key, deleted);
        delete_if_empty(db, key, hash);
        gr_call_notify(db, GR_NOTIFY_HASH, "hdel", key);
        notify_if_deleted(db, key);
    }
}

/* HGETEX's and HSETEX's expiry option: EX, PX, EXAT, PXAT (with a time), PERSIST or KEEPTTL. */
enum { EXPIRY_NONE = 0, EXPIRY_AT, EXPIRY_PERSIST, EXPIRY_KEEPTTL };

/* One expiry option at argv[*at]: 1 consumed (and *at moved past it), 0 not an expiry word,
 * -1 error replied. */
static int parse_expiry_option_or_reply(const gr_server_t *db, size_t argc, const uint8_t *const *argv,
                                        const size_t *argv_length, size_t *at, const char *name, int allow_persist,
                                        int *kind, int64_t *at_ms, gr_reply_t *reply) {
    static const struct { const char *word; int unit_ms, absolute; } words[] = {
        {"ex", 0, 0}, {"px", 1, 0}, {"exat", 0, 1}, {"pxat", 1, 1}};
    const uint8_t *word = argv[*at];
    size_t length = argv_length[*at];
    for (size_t w = 0; w < 4; w++) {
        if (!gr_word_is(word, length, words[w].word)) continue;
        if (*kind != EXPIRY_NONE || *at + 1 >= argc) { reply_syntax(reply); return -1; }
        if (parse_expire_or_reply(db, argv[*at + 1], argv_length[*at + 1], words[w].unit_ms, words[w].absolute, name,
                                  at_ms, reply))
            return -1;
        *kind = EXPIRY_AT;
        *at += 2;
        return 1;
    }
    int special = allow_persist ? EXPIRY_PERSIST : EXPIRY_KEEPTTL;
    if (gr_word_is(word, length, allow_persist ? "persist" : "keepttl")) {
        if (*kind != EXPIRY_NONE) { reply_syntax(reply); return -1; }
        *kind = special;
        *at += 1;
        return 1;
    }
    return 0;
}

void gr_cmd_hgetex(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    size_t at = 2, time_at = 0;
    int kind = EXPIRY_NONE;
    int64_t at_ms = 0;
    while (at < argc && !gr_word_is(argv[at], argv_length[at], "fields")) {
        if (kind == EXPIRY_NONE) time_at = at;
        int parsed = parse_expiry_option_or_reply(db, argc, argv, argv_length, &at, "hgetex", 1, &kind, &at_ms, reply);
        if (parsed < 0) return;
        if (parsed == 0) { reply_syntax(reply); return; }
    }
    size_t first, count;
    if (parse_fields_or_reply(argc, argv, argv_length, at, 1, FIELDS_GET, &first, &count, reply)) return;
    gr_bytes_t key = arg(argv, argv_length, 1);
    gr_hash_t *hash = NULL;
    int found = find_hash_or_reply(db, key, &hash, kind != EXPIRY_NONE, reply);
    if (found < 0) return;
    gr_reply_array_begin(reply, count);
    int64_t changed = 0;
    for (size_t i = first; i < first + count; i++) {
        gr_hash_entry_t entry;
        if (!found || !gr_hash_get(hash, argv[i], argv_length[i], &entry)) {
            gr_reply_nil(reply);
            continue;
        }
        reply_entry_value(reply, &entry);   /* written before the field may be deleted */
        if (kind == EXPIRY_AT) changed += apply_field_expire(db, hash, argv[i], argv_length[i], at_ms) > 0;
        else if (kind == EXPIRY_PERSIST) changed += gr_hash_persist_field(hash, argv[i], argv_length[i]);
    }
    if (changed) {
        gr_db_mark_changed(db, key, changed);
        delete_if_empty(db, key, hash);
        const char *event = kind == EXPIRY_PERSIST ? "hpersist" : at_ms <= db->now_ms ? "hexpired" : "hexpire";
        gr_call_notify(db, GR_NOTIFY_HASH, event, key);
        notify_if_deleted(db, key);
        if (kind == EXPIRY_AT) effect_with_absolute_time(db, argc, argv, argv_length, time_at, at_ms, 1);
    } else {
        gr_effect_none(db);
    }
}

void gr_cmd_hsetex(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    size_t at = 2, time_at = 0;
    int kind = EXPIRY_NONE, only_new = 0, only_existing = 0;
    int64_t at_ms = 0;
    while (at < argc && !gr_word_is(argv[at], argv_length[at], "fields")) {
        if (kind == EXPIRY_NONE) time_at = at;
        if (gr_word_is(argv[at], argv_length[at], "fnx") || gr_word_is(argv[at], argv_length[at], "fxx")) {
            if (only_new || only_existing) { reply_syntax(reply); return; }
            if (gr_word_is(argv[at], argv_length[at], "fnx")) only_new = 1; else only_existing = 1;
            at++;
            continue;
        }
        int parsed = parse_expiry_option_or_reply(db, argc, argv, argv_length, &at, "hsetex", 0, &kind, &at_ms, reply);
        if (parsed < 0) return;
        if (parsed == 0) { reply_syntax(reply); return; }
    }
    size_t first, count;
    if (parse_fields_or_reply(argc, argv, argv_length, at, 2, FIELDS_GET, &first, &count, reply)) return;
    gr_bytes_t key = arg(argv, argv_length, 1);
    gr_hash_t *hash = NULL;
    int found = find_hash_or_reply(db, key, &hash, 1, reply);
    if (found < 0) return;
    if (only_new || only_existing) {
        for (size_t i = first; i < first + 2 * count; i += 2) {
            int exists = found && gr_hash_get(hash, argv[i], argv_length[i], NULL);
            if ((only_new && exists) || (only_existing && !exists)) {
                gr_reply_integer(reply, 0);
                return;
            }
        }
    }
    /* a time already past removes the fields at once: what changed is the fields that were there */
    const int past = kind == EXPIRY_AT && at_ms <= db->now_ms;
    int64_t existed = 0;
    if (past && found)
        for (size_t i = first; i < first + 2 * count; i += 2) existed += gr_hash_get(hash, argv[i], argv_length[i], NULL) != 0;
    if (!found && !(hash = create_hash_or_reply(db, key, reply))) return;
    gr_hash_limits_t limits = limits_of(db);
    for (size_t i = first; i < first + 2 * count; i += 2) {
        if (gr_hash_set(hash, argv[i], argv_length[i], argv[i + 1], argv_length[i + 1], kind == EXPIRY_KEEPTTL,
                        &limits) < 0 ||
            (kind == EXPIRY_AT && apply_field_expire(db, hash, argv[i], argv_length[i], at_ms) < 0)) {
            gr_db_mark_changed(db, key, 1);
            delete_if_empty(db, key, hash);
            gr_reply_oom(reply);
            return;
        }
    }
    if (past) gr_watch_touch_current(db, key), gr_db_count_changes(db, existed);   /* as valkey counts */
    else gr_db_mark_changed(db, key, (int64_t)count);
    delete_if_empty(db, key, hash);
    /* Valkey's events: hset, then hexpire when it set a time, hexpired when that time had passed */
    gr_call_notify(db, GR_NOTIFY_HASH, "hset", key);
    if (kind == EXPIRY_AT) gr_call_notify(db, GR_NOTIFY_HASH, "hexpire", key);
    if (kind == EXPIRY_AT && at_ms <= db->now_ms) gr_call_notify(db, GR_NOTIFY_HASH, "hexpired", key);
    notify_if_deleted(db, key);
    if (past && existed) {   /* the fields that were there are gone: HDEL them */
        gr_effect_open(db, "HDEL", key);
        for (size_t i = first; i < first + 2 * count; i += 2) gr_effect_add(db, argv[i], argv_length[i]);
    } else if (past) {
        gr_effect_none(db);
    } else if (kind == EXPIRY_AT) {
        effect_with_absolute_time(db, argc, argv, argv_length, time_at, at_ms, 1);
    }
    gr_reply_integer(reply, 1);
}
