/* cmd_aof.c — BGREWRITEAOF (row in aof.def): starts persist/aof.c's forked rewrite, with Redis's replies;
 * WAITAOF: waits until the client's writes are on disk, as Redis 7.2 / Valkey answer it. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "commands/commands.h"
#include "core/number.h"
#include "exec/db.h"
#include "persist/aof.h"

void gr_cmd_bgrewriteaof(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                         gr_reply_t *reply) {
    (void)argc, (void)argv, (void)argv_length;
    char message[300];
    int status = gr_aof_rewrite_background(db, message, sizeof message);
    if (status < 0) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, message);
    } else if (status == 1) {
        static const char scheduled[] = "Background append only file rewriting scheduled";
        gr_reply_status(reply, scheduled, sizeof scheduled - 1);
    } else {
        static const char started[] = "Background append only file rewriting started";
        gr_reply_status(reply, started, sizeof started - 1);
    }
}

/* ---- WAITAOF numlocal numreplicas timeout ---- */

/* [local acks, replica acks]: the parked request carries the local one in count; goblin has no
 * replicas, so the second is 0. */
static void waitaof_reply(const gr_request_t *request, gr_reply_t *reply) {
    gr_reply_array_begin(reply, 2);
    gr_reply_integer(reply, request->count);
    gr_reply_integer(reply, 0);
}
static int never_ready(const gr_ks_entry_t *entry) { (void)entry; return 0; }
static int never_served(gr_server_t *db, const gr_request_t *request, gr_reply_t *reply) {
    (void)db, (void)request, (void)reply;
    return 0;
}

/* Parked on no key: only the timeout (or CLIENT UNBLOCK) answers it. */
const gr_block_spec_t gr_waitaof_block = {"waitaof", GR_BLOCK_KEYS_IN_ITEMS, never_ready, never_served, waitaof_reply,
                                          3, 1, NULL, NULL, NULL};

void gr_cmd_waitaof(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                    gr_reply_t *reply) {
    (void)argc;
    int64_t numlocal, numreplicas, timeout_ms;
    if (gr_bytes_to_int64(argv[1], argv_length[1], &numlocal) != 0) {
        gr_reply_error_text(reply, GR_ERR_NOT_INTEGER, "ERR value is not an integer or out of range");
        return;
    }
    if (numlocal < 0 || numlocal > 1) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR value is out of range, value must between 0 and 1");
        return;
    }
    if (gr_bytes_to_int64(argv[2], argv_length[2], &numreplicas) != 0 || numreplicas < 0) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR value is out of range, must be positive");
        return;
    }
    if (gr_bytes_to_int64(argv[3], argv_length[3], &timeout_ms) != 0 || timeout_ms > INT64_MAX / 2) {
        gr_reply_error_text(reply, GR_ERR_NOT_INTEGER, "ERR timeout is not an integer or out of range");
        return;
    }
    if (timeout_ms < 0) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR timeout is negative");
        return;
    }
    if (numlocal && !db->aof) {
        gr_reply_error_text(reply, GR_ERR_GENERIC,
                            "ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled.");
        return;
    }
    gr_request_t waiting = {.template_id = GR_T_COMMAND, .count = (uint32_t)gr_aof_local_ack(db, numlocal > 0),
                            .timeout = (double)timeout_ms / 1000.0};
    if ((int64_t)waiting.count >= numlocal && numreplicas == 0) {
        waitaof_reply(&waiting, reply);
        return;
    }
    /* what is asked cannot come (no replicas; appendfsync no never acknowledges): wait out the
     * timeout, as Redis does, or answer at once where the client cannot block (EXEC) */
    gr_blocking_run_unserved(db, &gr_waitaof_block, &waiting, reply);
}
