/* cmd_hyperloglog.c — the HyperLogLog commands: PFADD, PFCOUNT, PFMERGE, PFDEBUG
 * (GETREG, DECODE, ENCODING, TODENSE) and PFSELFTEST. Rows in hyperloglog.def; the registers and
 * the estimator are engines/hyperloglog.c.
 *
 * A HyperLogLog is a string value, so the keys are looked up as strings and checked as Redis's
 * isHLLObjectOrReply checks them (another type: WRONGTYPE; a string that is not an HLL: Redis's
 * "WRONGTYPE Key is not a valid HyperLogLog string value."). Lookups follow Redis 7.0: PFADD,
 * single-key PFCOUNT, PFMERGE's destination and PFDEBUG look up for writing, PFCOUNT of several
 * keys and PFMERGE's sources for reading. PFCOUNT of one key stores the cardinality it computed
 * in the value's header, which Redis counts as a change (WATCH, the change count, propagation).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "commands/commands.h"
#include "core/bytes.h"
#include "engines/hyperloglog.h"
#include "engines/string_value.h"
#include "exec/db.h"
#include "exec/lookup.h"

#define NOT_AN_HLL "WRONGTYPE Key is not a valid HyperLogLog string value."
#define CORRUPT_HLL "INVALIDOBJ Corrupted HLL object detected"

static gr_bytes_t arg_bytes(const uint8_t *const *argv, const size_t *argv_length, size_t i) {
    gr_bytes_t bytes = {argv[i], (uint32_t)argv_length[i]};
    return bytes;
}

static size_t sparse_max_bytes(const gr_server_t *db) {
    return db->config.hll_sparse_max_bytes > 0 ? (size_t)db->config.hll_sparse_max_bytes : 0;
}

/* The HyperLogLog at key: 1 with *entry, 0 absent, -1 after replying (another type, or a string
 * that is not an HLL). */
static int find_hll(gr_server_t *db, gr_bytes_t key, int for_write, gr_ks_entry_t **entry, gr_reply_t *reply) {
    *entry = for_write ? gr_db_find_live(db, key) : gr_db_lookup(db, key);
    if (!*entry) return 0;
    if ((*entry)->type != GR_TYPE_STRING) { gr_reply_wrongtype(reply); return -1; }
    const gr_string_t *value = (*entry)->value;
    if (!gr_hll_is_valid(value->data, value->length)) {
        gr_reply_error_text(reply, GR_ERR_WRONGTYPE, NOT_AN_HLL);
        return -1;
    }
    return 1;
}

/* The reply for an engine failure: corrupt registers or no memory. */
static void reply_failure(gr_reply_t *reply, int failure) {
    if (failure == GR_HLL_NO_MEMORY) gr_reply_oom(reply);
    else gr_reply_error_text(reply, GR_ERR_GENERIC, CORRUPT_HLL);
}

/* ---- PFADD ---- */

void gr_cmd_pfadd(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                  gr_reply_t *reply) {
    gr_bytes_t key = arg_bytes(argv, argv_length, 1);
    gr_ks_entry_t *entry;
    int found = find_hll(db, key, 1, &entry, reply);
    if (found < 0) return;
    int64_t updated = 0;
    gr_string_t *hll = found ? entry->value : gr_hll_new();
    if (!hll) { gr_reply_oom(reply); return; }
    if (!found) updated++;
    int failure = 0;
    for (size_t j = 2; j < argc && !failure; j++) {
        int result = gr_hll_add(&hll, argv[j], argv_length[j], sparse_max_bytes(db));
        if (result < 0) failure = result;
        else updated += result;
    }
    if (found) {
        entry->value = hll;   /* an add may have moved or promoted it */
    } else if (failure || !gr_db_add_key(db, key, GR_TYPE_STRING, hll)) {
        gr_string_free(hll);
        if (!failure) failure = GR_HLL_NO_MEMORY;
    }
    if (failure) {
        /* Redis keeps the registers set before the failure, and so does an existing key here. */
        if (found && updated) {
            gr_hll_invalidate_cache(hll);
            gr_db_mark_changed(db, key, updated);
        }
        reply_failure(reply, failure);
        return;
    }
    if (updated) {
        gr_hll_invalidate_cache(hll);
        gr_db_mark_changed(db, key, updated);
    }
    gr_reply_integer(reply, updated ? 1 : 0);
}

/* ---- PFCOUNT ---- */

void gr_cmd_pfcount(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                    gr_reply_t *reply) {
    gr_ks_entry_t *entry;
    if (argc > 2) {
        /* The union of several: merged into plain registers, counted, nothing stored. */
        uint8_t *max = calloc(GR_HLL_REGISTERS, 1);
        if (!max) { gr_reply_oom(reply); return; }
        for (size_t j = 1; j < argc; j++) {
            int found = find_hll(db, arg_bytes(argv, argv_length, j), 0, &entry, reply);
            if (found < 0) { free(max); return; }
            if (found && gr_hll_merge_into(max, entry->value) != 0) {
                free(max);
                gr_reply_error_text(reply, GR_ERR_GENERIC, CORRUPT_HLL);
                return;
            }
        }
        gr_reply_integer(reply, (int64_t)gr_hll_count_registers(max));
        free(max);
        return;
    }
    gr_bytes_t key = arg_bytes(argv, argv_length, 1);
    int found = find_hll(db, key, 0, &entry, reply);   /* a read (hit or miss counted), as Redis */
    if (found < 0) return;
    if (!found) { gr_reply_integer(reply, 0); return; }
    gr_string_t *hll = entry->value;
    uint64_t count;
    if (!gr_hll_cached_count(hll, &count)) {
        int corrupt = 0;
        count = gr_hll_count(hll, &corrupt);
        if (corrupt) { gr_reply_error_text(reply, GR_ERR_GENERIC, CORRUPT_HLL); return; }
        gr_hll_set_cached_count(hll, count);
        gr_db_mark_changed(db, key, 1);
    }
    gr_reply_integer(reply, (int64_t)count);
}

/* ---- PFMERGE ---- */

void gr_cmd_pfmerge(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                    gr_reply_t *reply) {
    uint8_t *max = calloc(GR_HLL_REGISTERS, 1);
    if (!max) { gr_reply_oom(reply); return; }
    int any_dense = 0;
    gr_ks_entry_t *entry;
    /* Every key, the destination first, is merged (Redis 7.0 reads the destination as a source). */
    for (size_t j = 1; j < argc; j++) {
        int found = find_hll(db, arg_bytes(argv, argv_length, j), 0, &entry, reply);
        if (found < 0) { free(max); return; }
        if (!found) continue;
        const gr_string_t *source = entry->value;
        if (gr_hll_encoding(source) == GR_HLL_DENSE) any_dense = 1;
        if (gr_hll_merge_into(max, source) != 0) {
            free(max);
            gr_reply_error_text(reply, GR_ERR_GENERIC, CORRUPT_HLL);
            return;
        }
    }
    gr_bytes_t key = arg_bytes(argv, argv_length, 1);
    entry = gr_db_find_live(db, key);
    gr_string_t *hll = entry ? entry->value : gr_hll_new();
    if (!hll) { free(max); gr_reply_oom(reply); return; }
    int failure = 0;
    if (any_dense) {
        int converted = gr_hll_to_dense(&hll);
        if (converted < 0) failure = converted;
    }
    for (uint32_t i = 0; i < GR_HLL_REGISTERS && !failure; i++) {
        if (max[i] == 0) continue;
        int result = gr_hll_raise_register(&hll, i, max[i], sparse_max_bytes(db));
        if (result < 0) failure = result;
    }
    free(max);
    if (entry) {
        entry->value = hll;
    } else if (failure || !gr_db_add_key(db, key, GR_TYPE_STRING, hll)) {
        gr_string_free(hll);
        reply_failure(reply, failure ? failure : GR_HLL_NO_MEMORY);
        return;
    }
    if (failure) { reply_failure(reply, failure); return; }
    gr_hll_invalidate_cache(hll);
    gr_db_mark_changed(db, key, 1);
    gr_reply_ok(reply);
}

/* ---- PFDEBUG, PFSELFTEST ---- */

void gr_cmd_pfdebug(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                    gr_reply_t *reply) {
    (void)argc;   /* the row's arity fixes it */
    char subcommand[32];
    size_t n = argv_length[1] < sizeof subcommand - 1 ? argv_length[1] : sizeof subcommand - 1;
    memcpy(subcommand, argv[1], n);
    subcommand[n] = '\0';
    gr_bytes_t key = arg_bytes(argv, argv_length, 2);
    gr_ks_entry_t *entry;
    int found = find_hll(db, key, 1, &entry, reply);
    if (found < 0) return;
    if (!found) { gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR The specified key does not exist"); return; }
    gr_string_t *hll = entry->value;
    int is_subcommand = argv_length[1] == strlen(subcommand);
    if (is_subcommand && (!strcasecmp(subcommand, "getreg") || !strcasecmp(subcommand, "todense"))) {
        int converted = gr_hll_to_dense(&hll);
        if (converted < 0) { reply_failure(reply, converted); return; }
        entry->value = hll;
        if (converted) gr_db_count_changes(db, 1);   /* Redis propagates the encoding change */
        if (!strcasecmp(subcommand, "todense")) { gr_reply_integer(reply, converted); return; }
        gr_reply_array_begin(reply, GR_HLL_REGISTERS);
        for (uint32_t i = 0; i < GR_HLL_REGISTERS; i++) gr_reply_integer(reply, gr_hll_dense_register(hll, i));
        return;
    }
    if (is_subcommand && !strcasecmp(subcommand, "decode")) {
        if (gr_hll_encoding(hll) != GR_HLL_SPARSE) {
            gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR HLL encoding is not sparse");
            return;
        }
        size_t needed = gr_hll_decode_sparse(hll, NULL, 0) + 1;
        char *text = malloc(needed);
        if (!text) { gr_reply_oom(reply); return; }
        size_t length = gr_hll_decode_sparse(hll, text, needed);
        gr_reply_bulk(reply, (const uint8_t *)text, length);
        free(text);
        return;
    }
    if (is_subcommand && !strcasecmp(subcommand, "encoding")) {
        const char *name = gr_hll_encoding(hll) == GR_HLL_DENSE ? "dense" : "sparse";
        gr_reply_status(reply, name, strlen(name));
        return;
    }
    /* Redis prints the subcommand as given; one past 256 bytes is cut here to keep the error short. */
    char message[320];
    int shown = argv_length[1] < 256 ? (int)argv_length[1] : 256;
    snprintf(message, sizeof message, "ERR Unknown PFDEBUG subcommand '%.*s'", shown, (const char *)argv[1]);
    gr_reply_error_text(reply, GR_ERR_GENERIC, message);
}

void gr_cmd_pfselftest(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                       gr_reply_t *reply) {
    (void)db; (void)argc; (void)argv; (void)argv_length;
    char error[160] = "ERR ";
    if (gr_hll_selftest(error + 4, sizeof error - 4) != 0) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, error);
        return;
    }
    gr_reply_ok(reply);
}
