/* cmd_aof.c — BGREWRITEAOF (row in aof.def): starts persist/aof.c's forked rewrite, with Redis's replies;
 * WAITAOF: waits until the client's writes are on disk here and on numreplicas replicas (by the
 * FACK offsets their REPLCONF ACKs carry), as Redis 7.2 / Valkey answer it. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "commands/commands.h"
#include "core/number.h"
#include "exec/blocking.h"
#include "exec/db.h"
#include "exec/propagate.h"
#include "exec/repl_backlog.h"
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

/* [local acks, replica acks]. The parked request: flag the local ack (taken at the call: an
 * fdatasync now, or 0 when none can come), cursor numlocal, index the offset the client's
 * writes reach (WAIT's woff), count numreplicas, index2 the replicas whose FACK reached index
 * (refreshed by exec/repl_backlog.c's gr_repl_wait_check as ACKs arrive). */
static void waitaof_reply(const gr_request_t *request, gr_reply_t *reply) {
    gr_reply_array_begin(reply, 2);
    gr_reply_integer(reply, request->flag);
    gr_reply_integer(reply, request->index2);
}

/* Parked on no key: ACKs (gr_repl_wait_check, from the loop), the timeout or CLIENT UNBLOCK answer it. */
const gr_block_spec_t gr_waitaof_block = {"waitaof", GR_BLOCK_KEYS_IN_ITEMS, gr_block_never_ready, gr_block_never_served,
                                       waitaof_reply, 3, 1, NULL, NULL, NULL};

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
    /* a replica: after the arguments' errors, before appendonly's, as valkey */
    if (db->repl.master_port) {
        gr_reply_error_text(reply, GR_ERR_GENERIC,
                            "ERR WAITAOF cannot be used with replica instances. Please also note that writes to "
                            "replicas are just local and are not propagated.");
        return;
    }
    if (numlocal && !db->aof) {
        gr_reply_error_text(reply, GR_ERR_GENERIC,
                            "ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled.");
        return;
    }
    int local = gr_aof_local_ack(db, numlocal > 0);
    gr_propagate_flush(db);   /* this client's writes reach the replicas' streams */
    int64_t target = db->current ? db->current->repl_peer.woff : db->repl.offset;   /* Redis's c->woff */
    gr_request_t waiting = {.template_id = GR_T_COMMAND, .flag = (uint8_t)local, .cursor = (uint64_t)numlocal,
                            .index = target, .index2 = gr_repl_replicas_fsynced(db, target),
                            .count = numreplicas > UINT32_MAX ? UINT32_MAX : (uint32_t)numreplicas,
                            .timeout = (double)timeout_ms / 1000.0};
    if ((local >= numlocal && waiting.index2 >= numreplicas) || db->serve_deferred || !db->current ||
        !db->current->reply) {
        waitaof_reply(&waiting, reply);
        return;
    }
    /* the replicas' FACKs answer it (asked for now: REPLCONF GETACK *), or the timeout does —
     * also when the local ack cannot come (appendfsync no never acknowledges), as Redis */
    db->repl_primary.waitaof_spec = &gr_waitaof_block;
    if (numreplicas > waiting.index2) db->repl_primary.getack = 1;
    gr_blocking_run_unserved(db, &gr_waitaof_block, &waiting, reply);
}
