/* cmd_persistence.c — SAVE, BGSAVE [SCHEDULE], LASTSAVE, SHUTDOWN and DEBUG DIGEST /
 * DIGEST-VALUE / RELOAD (rows in persistence.def). When and how a snapshot is written or read
 * is persist/persistence.c's; the file is persist/snapshot.c's; a value's digest is its type
 * row's hook (exec/value_type.h), the keyspace's is here, laid out as Redis's
 * computeDatasetDigest (core/digest.h), so equal data digests equal on goblin and Redis.
 */
#include <stdio.h>
#include <string.h>

#include "commands/commands.h"
#include "core/digest.h"
#include "exec/child.h"
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
            gr_ks_entry_t *entry = gr_db_find_live(db, (gr_bytes_t){argv[i], (uint32_t)argv_length[i]});
            if (entry) key_digest(entry, 0, digest);
            char hex[2 * GR_DIGEST_BYTES + 1];
            gr_digest_hex(digest, hex);
            reply_status_text(reply, hex);
        }
    } else if (gr_word_is(sub, length, "reload") && argc == 2) {
        debug_reload(db, reply);
    } else {
        gr_reply_unknown_subcommand(reply, sub, length, "DEBUG");
    }
}
