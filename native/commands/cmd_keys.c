/* cmd_keys.c — the generic key commands: DEL, UNLINK, EXISTS, TYPE, DBSIZE, FLUSHDB,
 * FLUSHALL, KEYS, SCAN, RENAME, RENAMENX, COPY, TOUCH, RANDOMKEY, MEMORY USAGE, OBJECT, DUMP and
 * RESTORE. KEYS and SCAN skip keys whose expiry has passed (the cron or the next lookup deletes them).
 *
 * DUMP's payload is Redis's for every type Redis has (persist/rdb_format.h's gr_rdb_dump_value:
 * the RDB type byte and the value as RDB 10 encodes it, the u16 LE RDB version 10 and a CRC-64
 * LE), so redis-server 7.0 and later RESTORE it and a RESTORE goblin propagates reaches a Redis
 * replica whole. Values with no RDB 10 form (arrays, hashes with field TTLs) keep goblin's own
 * payload: core/snapshot_io.h's sealed envelope around [type id u8][the type row's save bytes]
 * with version GR_DUMP_VERSION, whose high byte 0x47 no RDB version has. RESTORE reads both,
 * told apart by that version.
 *
 * The keyspace itself (hash table, incremental rehash, the SCAN cursor) is keyspace.c and
 * the pattern matcher glob.c; this file is their command layer, typed requests in, Redis
 * replies out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/number.h"
#include "core/snapshot_io.h"
#include "commands/commands.h"
#include "persist/persistence.h"
#include "persist/rdb_format.h"
#include "exec/propagate.h"
#include "exec/db.h"
#include "exec/tracking.h"
#include "exec/blocking.h"
#include "exec/transaction.h"
#include "core/glob.h"
#include "exec/server_text.h"

void gr_cmd_del(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) {
    const gr_del_view_t req = gr_del_view(r);
    int64_t deleted = 0;
    for (uint32_t i = 0; i < req.keys_count; i++)
        if (gr_db_find_live(db, req.keys[i]) &&   /* an expired key is deleted, but does not count */
            gr_ks_delete(db->keyspace, req.keys[i].data, req.keys[i].length)) {
            deleted++;
            gr_watch_touch_current(db, req.keys[i]);
        }
    gr_db_count_changes(db, deleted);
    gr_reply_integer(reply, deleted);
}

void gr_cmd_exists(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) {
    const gr_exists_view_t req = gr_exists_view(r);
    int64_t count = 0;
    for (uint32_t i = 0; i < req.keys_count; i++)   /* not an access (Redis's LOOKUP_NOTOUCH) */
        count += gr_db_lookup_with(db, req.keys[i], GR_LOOKUP_NOTOUCH) != NULL;
    gr_reply_integer(reply, count);
}

void gr_cmd_type(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) {
    const gr_type_view_t req = gr_type_view(r);
    gr_ks_entry_t *entry = gr_db_lookup_with(db, req.key, GR_LOOKUP_NOTOUCH);   /* not an access, as Redis */
    const char *name = entry ? gr_value_type_name(entry->type) : "none";
    gr_reply_status(reply, name, strlen(name));
}

/* Entries collected for a reply whose count must be known before the first element. */
typedef struct collected_keys {
    const gr_server_t *db;       /* for the clock: expired keys are skipped */
    gr_ks_entry_t **entries;
    size_t count, capacity;
    int failed;
    gr_bytes_t pattern;      /* empty: match everything */
    int filter_type;         /* 0: no TYPE filter, -1: a type that matches nothing */
} collected_keys_t;

static void collect(collected_keys_t *keys, gr_ks_entry_t *entry) {
    if (keys->failed || gr_db_is_expired(keys->db, entry)) return;
    if (keys->filter_type && entry->type != keys->filter_type) return;
    if (keys->pattern.length &&
        !(keys->pattern.length == 1 && keys->pattern.data[0] == '*') &&
        !gr_glob_match(keys->pattern.data, keys->pattern.length, entry->key, entry->key_length, 0))
        return;
    if (keys->count == keys->capacity) {
        size_t capacity = keys->capacity ? keys->capacity * 2 : 64;
        gr_ks_entry_t **grown = realloc(keys->entries, capacity * sizeof *grown);
        if (!grown) { keys->failed = 1; return; }
        keys->entries = grown;
        keys->capacity = capacity;
    }
    keys->entries[keys->count++] = entry;
}

static int collect_visit(void *context, gr_ks_entry_t *entry) {
    collect(context, entry);
    return 0;
}

static void collect_scan_visit(void *context, gr_ks_entry_t *entry) { collect(context, entry); }

void gr_cmd_keys(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) {
    const gr_keys_view_t req = gr_keys_view(r);
    collected_keys_t keys = {0};
    keys.db = db;
    keys.pattern = req.pattern;
    gr_ks_iterate(db->keyspace, collect_visit, &keys);
    if (keys.failed) {
        free(keys.entries);
        gr_reply_oom(reply);
        return;
    }
    gr_reply_array_begin(reply, keys.count);
    for (size_t i = 0; i < keys.count; i++) gr_reply_bulk(reply, keys.entries[i]->key, keys.entries[i]->key_length);
    free(keys.entries);
}

static int type_from_name(gr_bytes_t name) {
    const gr_value_type_t *row = gr_value_type_named(name.data, name.length);
    return row ? row->id : -1;
}

void gr_cmd_scan(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) {
    const gr_scan_view_t req = gr_scan_view(r);
    collected_keys_t keys = {0};
    keys.db = db;
    keys.pattern = req.pattern;
    keys.filter_type = req.type_filter.length ? type_from_name(req.type_filter) : 0;
    size_t wanted = req.count ? req.count : 10;
    uint64_t cursor = req.cursor;
    /* Like Redis, visit buckets until COUNT keys were examined (a bounded amount of work). */
    size_t visited_buckets = 0;
    do {
        cursor = gr_ks_scan(db->keyspace, cursor, collect_scan_visit, &keys);
        visited_buckets++;
    } while (cursor != 0 && keys.count < wanted && visited_buckets < wanted * 10);
    if (keys.failed) {
        free(keys.entries);
        gr_reply_oom(reply);
        return;
    }
    char cursor_text[24];
    size_t cursor_length = 0;
    uint64_t value = cursor;
    char reversed[24];
    do { reversed[cursor_length++] = (char)('0' + value % 10); value /= 10; } while (value);
    for (size_t i = 0; i < cursor_length; i++) cursor_text[i] = reversed[cursor_length - 1 - i];
    gr_reply_keyed_array_begin(reply, (const uint8_t *)cursor_text, cursor_length, keys.count);
    for (size_t i = 0; i < keys.count; i++) gr_reply_bulk(reply, keys.entries[i]->key, keys.entries[i]->key_length);
    free(keys.entries);
}

/* RENAME and RENAMENX's events, as Redis's: the destination is added anew ("new"), then
 * rename_from on the source and rename_to on the destination. */
static void notify_renamed(gr_server_t *db, gr_bytes_t from, gr_bytes_t to) {
    gr_call_notify(db, GR_NOTIFY_NEW, "new", to);
    gr_call_notify(db, GR_NOTIFY_GENERIC, "rename_from", from);
    gr_call_notify(db, GR_NOTIFY_GENERIC, "rename_to", to);
}

void gr_cmd_rename(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) {
    const gr_rename_view_t req = gr_rename_view(r);
    if (!gr_db_find_live(db, req.key)) {   /* an expired source is no such key; the target is not looked at */
        gr_reply_error_text(reply, GR_ERR_NO_SUCH_KEY, "ERR no such key");
        return;
    }
    gr_db_peek_live(db, req.new_key);   /* an expired target is gone before the rename (its value goes too) */
    int result = gr_ks_rename(db->keyspace, req.key.data, req.key.length, req.new_key.data, req.new_key.length);
    if (result == -1) gr_reply_error_text(reply, GR_ERR_NO_SUCH_KEY, "ERR no such key");
    else if (result == -2) gr_reply_oom(reply);
    else {
        gr_blocking_signal(db, db->current ? db->current->db_index : 0, req.new_key.data, req.new_key.length);
        int same = req.key.length == req.new_key.length && memcmp(req.key.data, req.new_key.data, req.key.length) == 0;
        if (!same) {   /* RENAME k k changes nothing (Redis: no touch) */
            gr_watch_touch_current(db, req.key);
            gr_watch_touch_current(db, req.new_key);
            notify_renamed(db, req.key, req.new_key);
            gr_db_count_changes(db, 1);
        } else {
            gr_call_events_stated(db);
        }
        gr_reply_ok(reply);
    }
}

void gr_cmd_memory_usage(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) {
    const gr_memoryusage_view_t req = gr_memoryusage_view(r);
    gr_ks_entry_t *entry = gr_db_peek_live(db, req.key);   /* no hit or miss counted, not an access */
    if (!entry) { gr_reply_nil(reply); return; }
    gr_reply_integer(reply, (int64_t)(gr_ks_entry_bytes(entry) + gr_value_allocated_bytes(entry->type, entry->value)));
}

void gr_cmd_dbsize(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) {
    (void)r;
    gr_reply_integer(reply, (int64_t)gr_ks_size(db->keyspace));
}

/* FLUSHDB, and FLUSHALL (flag) */
void gr_cmd_flushdb(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) {
    const gr_flushdb_view_t req = gr_flushdb_view(r);
    gr_tracking_invalidate_all(db);   /* client-side caches forget everything (Redis: on either flush) */
    for (int i = 0; i < GR_DB_COUNT; i++) {   /* FLUSHALL: every database; FLUSHDB: the current one */
        if (!req.all && db->keyspaces[i] != db->keyspace) continue;
        gr_watch_touch_db(db, i, -1);          /* WATCHed keys that exist are touched */
        gr_db_count_changes(db, (int64_t)gr_ks_size(db->keyspaces[i]));   /* Redis: the keys removed */
        gr_ks_clear(db->keyspaces[i]);
        gr_blocking_signal_db_gone(db, i);    /* a parked XREADGROUP: "-UNBLOCKED the stream key no longer exists" */
    }
    if (req.all) gr_persist_after_flushall(db);   /* Redis: kill a BGSAVE child, save by the rules */
    gr_effect_always(db);   /* propagated even when there was nothing to remove, as Redis */
    gr_reply_ok(reply);
}

/* ---- OBJECT (argv only: no typed message) ---- */

void gr_cmd_object(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                   gr_reply_t *reply) {
    const uint8_t *sub = argv[1];
    size_t length = argv_length[1];
    if (gr_word_is(sub, length, "help") && argc == 2) {
        static const char *lines[] = {
            "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "ENCODING <key>", "    Return the kind of internal representation used in order to store the value",
            "    associated with a <key>.",
            "FREQ <key>", "    Return the access frequency index of the <key>. The returned integer is",
            "    proportional to the logarithm of the recent access frequency of the key.",
            "IDLETIME <key>", "    Return the idle time of the <key>, that is the approximated number of",
            "    seconds elapsed since the last access to the key.",
            "REFCOUNT <key>", "    Return the number of references of the value associated with the specified",
            "    <key>.",
            "HELP", "    Print this help.",
        };
        gr_reply_help(reply, lines, sizeof lines / sizeof lines[0]);
        return;
    }
    int known = gr_word_is(sub, length, "encoding") || gr_word_is(sub, length, "refcount") ||
                gr_word_is(sub, length, "idletime") || gr_word_is(sub, length, "freq");
    if (!known) { gr_reply_unknown_subcommand(reply, sub, length, "OBJECT"); return; }
    if (argc != 3) {
        gr_reply_subcommand_arity_error(reply, "object", sub, length);
        return;
    }
    gr_bytes_t key = {argv[2], (uint32_t)argv_length[2]};
    /* OBJECT counts a hit or miss, but is not an access and publishes no keymiss (Redis's
     * LOOKUP_NOTOUCH|LOOKUP_NONOTIFY) */
    gr_ks_entry_t *entry = gr_db_lookup_with(db, key, GR_LOOKUP_NOTOUCH | GR_LOOKUP_NONOTIFY);
    if (!entry) { gr_reply_nil(reply); return; }
    if (gr_word_is(sub, length, "encoding")) {
        const char *encoding = gr_value_encoding(entry->type, entry->value);
        gr_reply_bulk(reply, (const uint8_t *)encoding, strlen(encoding));
    } else if (gr_word_is(sub, length, "refcount")) {
        gr_reply_integer(reply, 1);
    } else if (gr_word_is(sub, length, "idletime")) {
        if (db->config.maxmemory_policy & GR_MAXMEMORY_FLAG_LFU) {
            gr_reply_error_text(reply, GR_ERR_GENERIC,
                                "ERR An LFU maxmemory policy is selected, idle time not tracked. "
                                "Please note that when switching between policies at runtime LRU and LFU data "
                                "will take some time to adjust.");
            return;
        }
        gr_reply_integer(reply, (int64_t)(gr_evict_idle_ms(entry->access_ms, gr_db_now_ms(db)) / 1000));
    } else if (!(db->config.maxmemory_policy & GR_MAXMEMORY_FLAG_LFU)) {
        gr_reply_error_text(reply, GR_ERR_GENERIC,
                            "ERR An LFU maxmemory policy is not selected, access frequency not tracked. "
                            "Please note that when switching between policies at runtime LRU and LFU data "
                            "will take some time to adjust.");
    } else {
        gr_reply_integer(reply, gr_evict_lfu_counter(db, entry->access_ms));
    }
}

/* ---- COPY source destination [DB destination-db] [REPLACE] (argv only) ---- */

static int32_t current_db_index(const gr_server_t *db) {
    if (db->current) return db->current->db_index;
    for (int32_t i = 0; i < GR_DB_COUNT; i++) if (db->keyspaces[i] == db->keyspace) return i;
    return 0;
}

/* Redis's copyCommand: options in order (an unusable DB stops at it), then the same-key
 * check, 0 for a missing source or an existing destination without REPLACE, else 1. The
 * copy keeps the source's expiry, and a list copied under a key wakes its waiters. */
void gr_cmd_copy(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                 gr_reply_t *reply) {
    gr_bytes_t source = {argv[1], (uint32_t)argv_length[1]};
    gr_bytes_t destination = {argv[2], (uint32_t)argv_length[2]};
    int replace = 0;
    int64_t target_index = current_db_index(db);
    for (size_t i = 3; i < argc; i++) {
        if (gr_word_is(argv[i], argv_length[i], "replace")) {
            replace = 1;
        } else if (gr_word_is(argv[i], argv_length[i], "db") && i + 1 < argc) {
            if (gr_bytes_to_int64(argv[i + 1], argv_length[i + 1], &target_index) != 0) {
                gr_reply_error_text(reply, GR_ERR_NOT_INTEGER, "ERR value is not an integer or out of range");
                return;
            }
            if (target_index < INT32_MIN || target_index > INT32_MAX) {   /* Redis's getIntFromObjectOrReply */
                gr_reply_error_text(reply, GR_ERR_OUT_OF_RANGE,
                                    "ERR value is out of range, value must between -2147483648 and 2147483647");
                return;
            }
            if (target_index < 0 || target_index >= GR_DB_COUNT) {
                gr_reply_error_text(reply, GR_ERR_OUT_OF_RANGE, "ERR DB index is out of range");
                return;
            }
            i++;
        } else {
            gr_reply_error_text(reply, GR_ERR_SYNTAX, "ERR syntax error");
            return;
        }
    }
    gr_keyspace_t *target = db->keyspaces[target_index];
    if (target == db->keyspace && source.length == destination.length &&
        memcmp(source.data, destination.data, source.length) == 0) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR source and destination objects are the same");
        return;
    }
    gr_ks_entry_t *entry = gr_db_lookup(db, source);
    if (!entry) { gr_reply_integer(reply, 0); return; }
    gr_ks_entry_t *existing = gr_ks_find(target, destination.data, destination.length);
    if (existing && gr_db_is_expired(db, existing)) {
        gr_ks_delete(target, destination.data, destination.length);
        db->stats.expired_keys++;
        existing = NULL;
    }
    if (existing && !replace) { gr_reply_integer(reply, 0); return; }
    uint8_t type = entry->type;
    int64_t expire_at_ms = entry->expire_at_ms;
    void *copy = gr_value_type(type)->duplicate(db, entry->value);   /* the type registry's row */
    if (!copy) { gr_reply_oom(reply); return; }
    if (existing) gr_ks_delete(target, destination.data, destination.length);
    gr_ks_entry_t *added = gr_ks_add(target, destination.data, destination.length, type, copy);
    if (!added) {
        gr_free_value(type, copy, db);
        gr_reply_oom(reply);
        return;
    }
    if (expire_at_ms >= 0) gr_ks_set_expire(target, added, expire_at_ms);
    gr_blocking_signal(db, (int32_t)target_index, destination.data, destination.length);   /* waiters check the type */
    gr_watch_touch(db, (int32_t)target_index, destination.data, destination.length);
    gr_call_notify_db(db, (int32_t)target_index, GR_NOTIFY_GENERIC, "copy_to", destination);
    gr_db_count_changes(db, 1);
    gr_reply_integer(reply, 1);
}

/* ---- RENAMENX key newkey (argv only) ---- */

/* Redis's renameGenericCommand with nx: a missing source is an error even when both names
 * are the same; the same name answers 0; an existing target answers 0. */
void gr_cmd_renamenx(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                     gr_reply_t *reply) {
    (void)argc;
    gr_bytes_t from = {argv[1], (uint32_t)argv_length[1]};
    gr_bytes_t to = {argv[2], (uint32_t)argv_length[2]};
    if (!gr_db_find_live(db, from)) {
        gr_reply_error_text(reply, GR_ERR_NO_SUCH_KEY, "ERR no such key");
        return;
    }
    if (from.length == to.length && memcmp(from.data, to.data, from.length) == 0) {
        gr_reply_integer(reply, 0);
        return;
    }
    if (gr_db_find_live(db, to)) {
        gr_reply_integer(reply, 0);
        return;
    }
    int result = gr_ks_rename(db->keyspace, from.data, from.length, to.data, to.length);
    if (result == -2) { gr_reply_oom(reply); return; }
    gr_blocking_signal(db, current_db_index(db), to.data, to.length);
    gr_watch_touch_current(db, from);
    gr_watch_touch_current(db, to);
    notify_renamed(db, from, to);
    gr_db_count_changes(db, 1);
    gr_reply_integer(reply, 1);
}

/* ---- TOUCH key [key ...] (argv only): the keys that exist, each stamped as accessed ---- */

void gr_cmd_touch(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                  gr_reply_t *reply) {
    int64_t touched = 0;
    db->touch_forced = 1;   /* TOUCH touches even for a CLIENT NO-TOUCH client (Redis 7.2) */
    for (size_t i = 1; i < argc; i++) {
        gr_bytes_t key = {argv[i], (uint32_t)argv_length[i]};
        touched += gr_db_lookup(db, key) != NULL;
    }
    db->touch_forced = 0;
    gr_reply_integer(reply, touched);
}

/* ---- RANDOMKEY (argv only) ---- */

/* A random live key, or nil. A sampled key whose expiry has passed is deleted (as any lookup
 * would) and another is drawn, so the loop ends: every round removes a key or answers. */
void gr_cmd_randomkey(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                      gr_reply_t *reply) {
    (void)argc, (void)argv, (void)argv_length;
    for (;;) {
        gr_ks_entry_t *entry = gr_ks_random(db->keyspace);
        if (!entry) { gr_reply_nil(reply); return; }
        if (!gr_db_is_expired(db, entry)) {
            gr_reply_bulk(reply, entry->key, entry->key_length);
            return;
        }
        /* the lookup deletes it: give it a copy of the name, which the deletion frees */
        uint8_t *name = malloc(entry->key_length ? entry->key_length : 1);
        if (!name) { gr_reply_oom(reply); return; }
        memcpy(name, entry->key, entry->key_length);
        gr_bytes_t key = {name, entry->key_length};
        gr_db_find_live(db, key);
        free(name);
    }
}

/* ---- DUMP key / RESTORE key ttl payload [REPLACE] [ABSTTL] [IDLETIME s] [FREQ f] ---- */

/* goblin's own payload for a value with no Redis form: the sealed envelope, version
 * value_type.h's GR_DUMP_VERSION. 0, or -1 out of memory. */
static int dump_goblin(const gr_value_type_t *row, uint8_t type, const void *value, gr_snapshot_writer_t *out) {
    return gr_snapshot_write_u8(out, type) != 0 || row->save(value, out) != 0 ||
                   gr_snapshot_seal(out, GR_DUMP_VERSION) != 0
               ? -1
               : 0;
}

/* The value's payload in Redis's form into out: 0; 1 when Redis has no form for it (out
 * untouched); -1 out of memory. */
static int dump_redis(uint8_t type, const void *value, gr_snapshot_writer_t *out) {
    int version = 0;
    const int written = gr_rdb_dump_value(type, value, out, &version);
    if (written != 0) return written;
    return gr_snapshot_seal(out, (uint16_t)version) != 0 ? -1 : 0;
}

/* The value's DUMP payload into out: Redis's form, or goblin's for a value Redis cannot hold.
 * 0, or -1 out of memory. */
static int dump_value(const gr_value_type_t *row, uint8_t type, const void *value, gr_snapshot_writer_t *out) {
    const int redis = dump_redis(type, value, out);
    return redis > 0 ? dump_goblin(row, type, value, out) : redis;
}

void gr_cmd_dump(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                 gr_reply_t *reply) {
    (void)argc;
    gr_bytes_t key = {argv[1], (uint32_t)argv_length[1]};
    gr_ks_entry_t *entry = gr_db_lookup(db, key);
    if (!entry) { gr_reply_nil(reply); return; }
    const gr_value_type_t *row = gr_value_type(entry->type);
    if (!row || !row->save) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR DUMP is not supported for this type");
        return;
    }
    gr_snapshot_writer_t out;
    gr_snapshot_writer_init(&out, GR_MEM_OTHER);
    if (dump_value(row, entry->type, entry->value, &out) != 0) {
        gr_snapshot_writer_release(&out);
        gr_reply_oom(reply);
        return;
    }
    gr_reply_bulk(reply, out.data, out.length);
    gr_snapshot_writer_release(&out);
}

/* A goblin payload's value, loaded: the value and *type, or NULL with *bad_format set (a
 * well-sealed payload whose body is not a value) or clear (out of memory). */
static void *load_goblin_payload(gr_server_t *db, gr_snapshot_reader_t *body, uint8_t *type, int *bad_format) {
    *bad_format = 1;
    uint8_t id;
    if (gr_snapshot_read_u8(body, &id) != 0) return NULL;
    const gr_value_type_t *row = gr_value_type(id);
    if (!row || !row->load) return NULL;
    void *value = row->load(db, body);
    if (!value) {
        *bad_format = body->error != NULL;
        return NULL;
    }
    if (gr_snapshot_reader_remaining(body) != 0) {   /* bytes after the value: not what DUMP wrote */
        row->free(value);
        return NULL;
    }
    *type = id;
    return value;
}

/* Redis's restoreCommand, in its order: options (an IDLETIME or FREQ value is checked where it
 * stands), then BUSYKEY, the TTL, the payload's version and checksum, the value. A TTL already
 * in the past deletes a REPLACEd key and stores nothing, answering OK. FREQ sets the LFU counter
 * under an LFU policy, IDLETIME the LRU clock under any other (the other one is ignored). */
void gr_cmd_restore(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                    gr_reply_t *reply) {
    gr_bytes_t key = {argv[1], (uint32_t)argv_length[1]};
    int replace = 0, absttl = 0;
    int64_t idle_seconds = -1, frequency = -1;
    for (size_t j = 4; j < argc; j++) {
        const size_t additional = argc - j - 1;
        if (gr_word_is(argv[j], argv_length[j], "replace")) {
            replace = 1;
        } else if (gr_word_is(argv[j], argv_length[j], "absttl")) {
            absttl = 1;
        } else if (gr_word_is(argv[j], argv_length[j], "idletime") && additional >= 1 && frequency == -1) {
            if (gr_bytes_to_int64(argv[j + 1], argv_length[j + 1], &idle_seconds) != 0) {
                gr_reply_error_text(reply, GR_ERR_NOT_INTEGER, "ERR value is not an integer or out of range");
                return;
            }
            if (idle_seconds < 0) {
                gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR Invalid IDLETIME value, must be >= 0");
                return;
            }
            j++;
        } else if (gr_word_is(argv[j], argv_length[j], "freq") && additional >= 1 && idle_seconds == -1) {
            if (gr_bytes_to_int64(argv[j + 1], argv_length[j + 1], &frequency) != 0) {
                gr_reply_error_text(reply, GR_ERR_NOT_INTEGER, "ERR value is not an integer or out of range");
                return;
            }
            if (frequency < 0 || frequency > 255) {
                gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR Invalid FREQ value, must be >= 0 and <= 255");
                return;
            }
            j++;
        } else {
            gr_reply_error_text(reply, GR_ERR_SYNTAX, "ERR syntax error");
            return;
        }
    }
    if (!replace && gr_db_find_live(db, key)) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "BUSYKEY Target key name already exists.");
        return;
    }
    int64_t ttl;
    if (gr_bytes_to_int64(argv[2], argv_length[2], &ttl) != 0) {
        gr_reply_error_text(reply, GR_ERR_NOT_INTEGER, "ERR value is not an integer or out of range");
        return;
    }
    if (ttl < 0) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR Invalid TTL value, must be >= 0");
        return;
    }
    /* the trailer first, as Redis's verifyDumpPayload: the CRC-64, then the version: goblin's
     * tag (high byte 0x47), or an RDB version rdb_load.c reads (Redis 1-12, Valkey 9's 80:
     * newer than redis-server 7.0's 10, which refuses above its own, since goblin reads them) */
    uint16_t version;
    gr_snapshot_reader_t body;
    const int sealed = gr_snapshot_unseal(argv[3], argv_length[3], &version, &body) == 0;
    const int goblin_form = sealed && (version & 0xff00u) == GR_DUMP_VERSION_TAG;
    if (!sealed || (goblin_form ? (version & 0xffu) > GR_DUMP_FORMAT : !gr_rdb_dump_version_readable(version))) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR DUMP payload version or checksum are wrong");
        return;
    }
    uint8_t type = 0;
    void *value;
    if (goblin_form) {
        int bad_format;
        value = load_goblin_payload(db, &body, &type, &bad_format);
        if (!value) {
            if (bad_format) gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR Bad data format");
            else gr_reply_oom(reply);
            return;
        }
    } else {
        int status;
        value = gr_rdb_restore_value(db, version, argv[3], argv_length[3] - 10, &type, &status);
        if (!value) {
            if (status == GR_RDB_VALUE_OOM) gr_reply_oom(reply);
            else if (status == GR_RDB_VALUE_MODULE)
                gr_reply_error_text(reply, GR_ERR_GENERIC,
                                    "ERR Bad data format: the payload is a module's value and goblin has no modules");
            else gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR Bad data format");
            return;
        }
    }
    const int64_t now = gr_db_now_ms(db);
    if (ttl && !absttl) ttl = ttl > INT64_MAX - now ? INT64_MAX : ttl + now;
    int deleted = 0;
    if (replace && gr_db_find_live(db, key) && gr_ks_delete(db->keyspace, key.data, key.length))
        deleted = 1;   /* touched below: after the new key's "new", as Redis orders them */
    if (ttl && ttl <= now) {   /* already expired: nothing is stored (a REPLACEd key is gone: a change) */
        gr_free_value(type, value, db);
        if (deleted) {   /* as Redis: the REPLACEd key's "del", propagated as DEL */
            gr_watch_touch_current(db, key);
            gr_call_notify(db, GR_NOTIFY_GENERIC, "del", key);
            gr_effect_del(db, key);
            gr_db_count_changes(db, 1);
        }
        gr_reply_ok(reply);
        return;
    }
    gr_ks_entry_t *added = gr_ks_add(db->keyspace, key.data, key.length, type, value);
    if (!added) {
        if (deleted) gr_watch_touch_current(db, key);
        gr_free_value(type, value, db);
        gr_reply_oom(reply);
        return;
    }
    if (ttl) gr_ks_set_expire(db->keyspace, added, ttl);
    /* Redis's objectSetLRUOrLFU: FREQ under an LFU policy, IDLETIME under any other */
    if (db->config.maxmemory_policy & GR_MAXMEMORY_FLAG_LFU) {
        if (frequency >= 0) added->access_ms = gr_evict_with_freq(added->access_ms, now, (int)frequency);
    } else if (idle_seconds >= 0) {
        const uint64_t idle_ms = idle_seconds > (int64_t)(GR_ACCESS_LRU_MASK / 2000) ? GR_ACCESS_LRU_MASK / 2
                                                                                     : (uint64_t)idle_seconds * 1000;
        added->access_ms = gr_evict_with_idle(added->access_ms, now, idle_ms);
    }
    gr_blocking_signal(db, current_db_index(db), key.data, key.length);
    gr_watch_touch_current(db, key);
    gr_db_count_changes(db, 1);
    /* propagated with the absolute time the key got: RESTORE key at payload REPLACE ABSTTL */
    /* a goblin payload of a value Redis can hold goes out as Redis's payload, so a Redis
     * replica takes it (an old AOF's or a goblin-only client's) */
    gr_snapshot_writer_t redis_form;
    gr_snapshot_writer_init(&redis_form, GR_MEM_OTHER);
    const uint8_t *payload = argv[3];
    size_t payload_length = argv_length[3];
    if (goblin_form && gr_effect_recorded(db) && dump_redis(type, value, &redis_form) == 0)
        payload = redis_form.data, payload_length = redis_form.length;
    gr_effect_begin(db, 6);
    gr_effect_word(db, "RESTORE"), gr_effect_bytes(db, key), gr_effect_int(db, ttl);
    gr_effect_bulk(db, payload, payload_length), gr_effect_word(db, "REPLACE"), gr_effect_word(db, "ABSTTL");
    gr_snapshot_writer_release(&redis_form);
    gr_reply_ok(reply);
}
