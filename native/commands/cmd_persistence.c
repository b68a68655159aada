/* cmd_persistence.c — SAVE, BGSAVE [SCHEDULE], LASTSAVE, SHUTDOWN and DEBUG DIGEST /
 * DIGEST-VALUE / RELOAD (rows in persistence.def). When and how a snapshot is written or read
 * is persist/persistence.c's; the file is persist/snapshot.c's; a value's digest is its type
 * row's hook (exec/value_type.h), the keyspace's is here, laid out as Redis's
 * computeDatasetDigest (core/digest.h), so equal data digests equal on goblin and Redis.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "commands/commands.h"
#include "core/digest.h"
#include "engines/string_value.h"
#include "exec/child.h"
#include "exec/lookup.h"
#include "exec/value_type.h"
#include "exec/server_text.h"
#include "persist/persistence.h"
#include "persist/snapshot.h"

static void reply_error_message(gr_reply_t *reply, const char *text) { gr_reply_error_text(reply, GR_ERR_GENERIC, text); }

static void reply_status_text(gr_reply_t *reply, const char *text) { gr_reply_status(reply, text, strlen(text)); }

void gr_cmd_save(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    (void)argc, (void)argv, (void)argv_length;
    char error[600];
    if (gr_persist_save(db, error, sizeof error) != 0) reply_error_message(reply, error);
    else gr_reply_ok(reply);
}

void gr_cmd_bgsave(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                   gr_reply_t *reply) {
    int schedule = 0;
    if (argc > 1) {
        if (argc == 2 && gr_word_is(argv[1], argv_length[1], "schedule")) {
            schedule = 1;
        } else {
            gr_reply_error_text(reply, GR_ERR_SYNTAX, "ERR syntax error");
            return;
        }
    }
    char error[600];
    int result = gr_persist_bgsave(db, schedule, error, sizeof error);
    if (result == 1) reply_status_text(reply, "Background saving started");
    else if (result == 2) reply_status_text(reply, "Background saving scheduled");
    else reply_error_message(reply, error);
}

void gr_cmd_lastsave(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                     gr_reply_t *reply) {
    (void)argc, (void)argv, (void)argv_length;
    gr_reply_integer(reply, db->persistence.lastsave_s);
}

/* SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT]. On success nothing is replied: the server
 * stops (its loop sees gr_persist_shutdown_requested) and the client sees the connection
 * close, as with Redis. NOW has nothing to skip here (no replicas to wait for). */
void gr_cmd_shutdown(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                     gr_reply_t *reply) {
    int nosave = 0, save = 0, force = 0, abort_ = 0;
    for (size_t i = 1; i < argc; i++) {
        if (gr_word_is(argv[i], argv_length[i], "nosave")) nosave = 1;
        else if (gr_word_is(argv[i], argv_length[i], "save")) save = 1;
        else if (gr_word_is(argv[i], argv_length[i], "now")) {}
        else if (gr_word_is(argv[i], argv_length[i], "force")) force = 1;
        else if (gr_word_is(argv[i], argv_length[i], "abort")) abort_ = 1;
        else {
            gr_reply_error_text(reply, GR_ERR_SYNTAX, "ERR syntax error");
            return;
        }
    }
    if ((abort_ && argc != 2) || (nosave && save)) {
        gr_reply_error_text(reply, GR_ERR_SYNTAX, "ERR syntax error");
        return;
    }
    if (abort_) {
        reply_error_message(reply, "ERR No shutdown in progress.");
        return;
    }
    if (db->busy && !nosave) {   /* a busy script: only SHUTDOWN NOSAVE (the script then ends, script/) */
        reply_error_message(reply, gr_db_busy_text(db));
        return;
    }
    if (db->busy) gr_propagate_exec_discard(db);   /* the script's writes: Redis exits before propagating them */
    char error[600];
    if (gr_persist_prepare_shutdown(db, save ? 1 : nosave ? 0 : -1, error, sizeof error) != 0) {
        gr_log_to_stderr("Error trying to shut down: %s", error);   /* the "logs" the reply points at */
        if (!force) {
            reply_error_message(reply, "ERR Errors trying to SHUTDOWN. Check logs.");
            return;
        }
        gr_log_to_stderr("Errors trying to shut down the server; exiting anyway (SHUTDOWN FORCE)");
    }
    db->persistence.shutdown_requested = 1;
}

/* ---- DEBUG ---- */

/* A key's digest: its name mixed in, then its value's (the type's hook), then its expiry. */
static void key_digest(const gr_ks_entry_t *entry, int with_name, uint8_t out[GR_DIGEST_BYTES]) {
    memset(out, 0, GR_DIGEST_BYTES);
    if (with_name) gr_digest_mix(out, entry->key, entry->key_length);
    const gr_value_type_t *row = gr_value_type(entry->type);
    if (row && row->digest) row->digest(entry->value, out);   /* on top of the name, as xorObjectDigest */
    if (entry->expire_at_ms >= 0) gr_digest_xor(out, "!!expire!!", 10);
}

typedef struct dataset_pass {
    const gr_server_t *db;
    uint8_t digest[GR_DIGEST_BYTES];
} dataset_pass_t;

static int digest_key(void *context, gr_ks_entry_t *entry) {
    dataset_pass_t *pass = context;
    if (gr_db_is_expired(pass->db, entry)) return 0;
    uint8_t key[GR_DIGEST_BYTES];
    key_digest(entry, 1, key);
    gr_digest_xor(pass->digest, key, sizeof key);   /* Redis's xorDigest: the SHA1 of the key's digest */
    return 0;
}

static void dataset_digest(gr_server_t *db, uint8_t out[GR_DIGEST_BYTES]) {
    dataset_pass_t pass = {.db = db};
    for (int i = 0; i < GR_DB_COUNT; i++) {
        if (gr_ks_size(db->keyspaces[i]) == 0) continue;
        uint8_t index[4] = {(uint8_t)(i >> 24), (uint8_t)(i >> 16), (uint8_t)(i >> 8), (uint8_t)i};
        gr_digest_mix(pass.digest, index, sizeof index);
        gr_ks_iterate(db->keyspaces[i], digest_key, &pass);
    }
    memcpy(out, pass.digest, GR_DIGEST_BYTES);
}

static void debug_reload(gr_server_t *db, gr_reply_t *reply) {
    char error[600], path[4096];
    if (gr_persist_save(db, error, sizeof error) != 0) {
        reply_error_message(reply, error);
        return;
    }
    for (int i = 0; i < GR_DB_COUNT; i++) {
        gr_watch_touch_db(db, i, -1);
        gr_ks_clear(db->keyspaces[i]);
    }
    gr_persist_path(db, path, sizeof path);
    gr_snapshot_stats_t stats;
    if (gr_snapshot_load(db, path, &stats, error, sizeof error) != 1) {
        char text[700];
        snprintf(text, sizeof text, "ERR Error trying to load the snapshot: %s", error);
        reply_error_message(reply, text);
        return;
    }
    gr_reply_ok(reply);
}

/* DEBUG POPULATE count [prefix] [size]: keys prefix:0 .. prefix:count-1 (default "key") holding
 * "value:N", cut or zero-padded to size bytes when size is given; existing keys are kept. */
static void debug_populate(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                           gr_reply_t *reply) {
    int64_t count, size = 0;
    if (gr_bytes_to_int64(argv[2], argv_length[2], &count) != 0 || count < 0) {
        gr_reply_error_text(reply, GR_ERR_OUT_OF_RANGE, "ERR value is out of range, must be positive");
        return;
    }
    if (argc == 5 && (gr_bytes_to_int64(argv[4], argv_length[4], &size) != 0 || size < 0)) {
        gr_reply_error_text(reply, GR_ERR_OUT_OF_RANGE, "ERR value is out of range, must be positive");
        return;
    }
    const uint8_t *prefix = argc >= 4 ? argv[3] : (const uint8_t *)"key";
    size_t prefix_length = argc >= 4 ? argv_length[3] : 3;
    if (prefix_length > 1024 || (uint64_t)size > GR_STRING_MAX_LENGTH) {
        gr_reply_error_text(reply, GR_ERR_OUT_OF_RANGE, "ERR value is out of range, must be positive");
        return;
    }
    uint8_t key[1100];
    memcpy(key, prefix, prefix_length);
    for (int64_t i = 0; i < count; i++) {
        size_t key_length = prefix_length + (size_t)snprintf((char *)key + prefix_length, sizeof key - prefix_length,
                                                             ":%lld", (long long)i);
        gr_bytes_t name = {key, (uint32_t)key_length};
        if (gr_db_find_live(db, name)) continue;
        char text[32];
        size_t text_length = (size_t)snprintf(text, sizeof text, "value:%lld", (long long)i);
        size_t value_length = size ? (size_t)size : text_length;
        gr_string_t *value = gr_string_new_zeroed(value_length);
        if (!value) { gr_reply_oom(reply); return; }
        memcpy(value->data, text, text_length < value_length ? text_length : value_length);
        if (!gr_db_add_key(db, name, GR_TYPE_STRING, value)) {
            gr_string_free(value);
            gr_reply_oom(reply);
            return;
        }
        gr_db_count_changes(db, 1);
    }
    gr_reply_ok(reply);
}

/* DEBUG OBJECT key: Redis's one-line description (its address and refcount are goblin's own:
 * the value's address, 1; lru is the LRU clock in seconds mod 2^24, as Redis's field). Not an
 * access. */
static void debug_object(gr_server_t *db, gr_bytes_t key, gr_reply_t *reply) {
    gr_ks_entry_t *entry = gr_db_peek_live(db, key);
    if (!entry) { gr_reply_error_text(reply, GR_ERR_NO_SUCH_KEY, "ERR no such key"); return; }
    const gr_value_type_t *type = gr_value_type(entry->type);
    const char *encoding = type && type->encoding ? type->encoding(entry->value) : "raw";
    size_t bytes = type && type->allocated_bytes ? type->allocated_bytes(entry->value) : 0;
    char text[256];
    int n = snprintf(text, sizeof text, "Value at:%p refcount:1 encoding:%s serializedlength:%zu lru:%llu lru_seconds_idle:%llu",
                     entry->value, encoding, bytes, (unsigned long long)(((entry->access_ms >> 24) / 1000) & 0xFFFFFF),
                     (unsigned long long)(gr_evict_idle_ms(entry->access_ms, db->now_ms) / 1000));
    gr_reply_status(reply, text, n > 0 && (size_t)n < sizeof text ? (size_t)n : 0);
}

void gr_cmd_debug(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                  gr_reply_t *reply) {
    const uint8_t *sub = argv[1];
    size_t length = argv_length[1];
    if (gr_word_is(sub, length, "help") && argc == 2) {
        static const char *lines[] = {
            "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "DIGEST",
            "    Output a hex signature representing the current DB content.",
            "DIGEST-VALUE <key> [<key> ...]",
            "    Output a hex signature of the values of all the specified keys.",
            "RELOAD",
            "    Save the snapshot on disk, flush the data and load it back.",
            "POPULATE <count> [<prefix>] [<size>]",
            "    Create <count> string keys named key:<num>. If <prefix> is specified then it is used instead of",
            "    the 'key' prefix. These are not propagated to replicas. Cluster slots are not respected so keys",
            "    not belonging to the current node can be created.",
            "OBJECT <key>",
            "    Show low level info about `key` and associated value.",
            "SLEEP <seconds>",
            "    Stop the server for <seconds>. Decimals allowed.",
            "SET-ACTIVE-EXPIRE <0|1>",
            "    Setting it to 0 disables expiring keys in background when they are not accessed (otherwise the",
            "    Redis behavior). Setting it to 1 reenables back the default.",
            "QUICKLIST-PACKED-THRESHOLD <size>",
            "    Accepted for compatibility: goblin's lists have no plain nodes.",
            "CHANGE-REPL-ID",
            "    Accepted for compatibility: goblin has no replication id yet.",
            "LOG <message>",
            "    Write <message> to the server log.",
            "HELP",
            "    Print this help.",
        };
        gr_reply_help(reply, lines, sizeof lines / sizeof lines[0]);
    } else if (gr_word_is(sub, length, "digest") && argc == 2) {
        uint8_t digest[GR_DIGEST_BYTES];
        char hex[2 * GR_DIGEST_BYTES + 1];
        dataset_digest(db, digest);
        gr_digest_hex(digest, hex);
        reply_status_text(reply, hex);
    } else if (gr_word_is(sub, length, "digest-value") && argc >= 2) {
        gr_reply_array_begin(reply, argc - 2);
        for (size_t i = 2; i < argc; i++) {
            uint8_t digest[GR_DIGEST_BYTES] = {0};
            gr_ks_entry_t *entry = gr_db_peek_live(db, (gr_bytes_t){argv[i], (uint32_t)argv_length[i]});
            if (entry) key_digest(entry, 0, digest);
            char hex[2 * GR_DIGEST_BYTES + 1];
            gr_digest_hex(digest, hex);
            reply_status_text(reply, hex);
        }
    } else if (gr_word_is(sub, length, "reload") && argc == 2) {
        debug_reload(db, reply);
    } else if (gr_word_is(sub, length, "populate") && argc >= 3 && argc <= 5) {
        debug_populate(db, argc, argv, argv_length, reply);
    } else if (gr_word_is(sub, length, "object") && argc == 3) {
        debug_object(db, (gr_bytes_t){argv[2], (uint32_t)argv_length[2]}, reply);
    } else if (gr_word_is(sub, length, "sleep") && argc == 3) {
        /* Redis's: the whole server stops for that long (seconds, a double; text that is no number is 0) */
        char text[64];
        size_t n = argv_length[2] < sizeof text - 1 ? argv_length[2] : sizeof text - 1;
        memcpy(text, argv[2], n);
        text[n] = '\0';
        double seconds = strtod(text, NULL);
        if (seconds > 0) {
            struct timespec pause = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
            while (nanosleep(&pause, &pause) != 0 && errno == EINTR) {}
        }
        gr_reply_ok(reply);
    } else if (gr_word_is(sub, length, "set-active-expire") && argc == 3) {
        int64_t on = 0;   /* Redis reads it with atoi: anything but a number is 0 */
        if (gr_bytes_to_int64(argv[2], argv_length[2], &on) != 0) on = 0;
        db->config.active_expire_disabled = on == 0;
        gr_reply_ok(reply);
    } else if (gr_word_is(sub, length, "quicklist-packed-threshold") && argc == 3) {
        /* goblin's lists keep no plain (unpacked) nodes, so there is no threshold to move; the
         * argument is checked as Redis checks it, so harnesses that set it keep working */
        int64_t bytes;
        char text[64];
        size_t n = argv_length[2] < sizeof text - 1 ? argv_length[2] : sizeof text - 1;
        memcpy(text, argv[2], n);
        text[n] = '\0';
        if (gr_config_parse_memory(text, &bytes) != 0 || bytes < 1 || bytes > (int64_t)4 << 30) {
            gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR argument must be a memory value bigger than 1 and smaller than 4gb");
            return;
        }
        gr_reply_ok(reply);
    } else if (gr_word_is(sub, length, "change-repl-id") && argc == 2) {
        gr_reply_ok(reply);   /* goblin has no replication id to change yet */
    } else if (gr_word_is(sub, length, "log") && argc == 3) {
        fprintf(stderr, "DEBUG LOG: %.*s\n", (int)argv_length[2], (const char *)argv[2]);
        gr_reply_ok(reply);
    } else {
        char text[256];
        /* the subcommand is printed up to 128 bytes, as Redis prints it */
        int shown = (int)(length < 128 ? length : 128);
        snprintf(text, sizeof text, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try DEBUG HELP.",
                 shown, (const char *)sub);
        gr_reply_error_text(reply, GR_ERR_GENERIC, text);
    }
}
