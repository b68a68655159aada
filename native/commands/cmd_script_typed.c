/* cmd_script_typed.c — EVALSHA and FCALL (and their _RO forms) as the ring's typed requests
 * (schema EvalShaRequest / FCallRequest: the sha or function name, the key count, keys then
 * arguments as var-data), so RingClient.evalsha and .fcall are one typed message.
 *
 * The builder turns argv into that request when its key count is a valid one; otherwise the
 * request stays argv (GR_T_COMMAND) and the argv handler answers with Redis's error in Redis's
 * order (FCALL's "Function not found" comes before a bad key count). The typed handlers give
 * the script layer the argv it takes: the call's own argv when the command came as argv
 * (RESP), else one rebuilt from the request.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands/commands.h"
#include "core/number.h"
#include "script/function.h"
#include "script/script.h"

#define ON_STACK 32

int gr_build_script_call(gr_build_context_t *ctx) {
    gr_request_t *r = ctx->request;
    size_t argc = ctx->argc;
    int64_t numkeys;
    if (argc - 3 <= r->item_capacity && gr_bytes_to_int64(ctx->argv[2], ctx->argv_length[2], &numkeys) == 0 &&
        numkeys >= 0 && numkeys <= (int64_t)(argc - 3)) {
        r->arg1 = (gr_bytes_t){ctx->argv[1], (uint32_t)ctx->argv_length[1]};
        r->key = (gr_bytes_t){0};
        r->count = (uint32_t)numkeys;
        for (size_t i = 3; i < argc; i++) r->items[i - 3] = (gr_bytes_t){ctx->argv[i], (uint32_t)ctx->argv_length[i]};
        r->item_count = (uint32_t)(argc - 3);
        return 0;
    }
    /* the argv form: its handler replies Redis's error */
    if (argc > r->item_capacity) {
        ctx->error->code = GR_ERR_TOO_LARGE;
        snprintf(ctx->error->text, sizeof ctx->error->text, "ERR too many arguments");
        return -1;
    }
    r->template_id = GR_T_COMMAND;
    for (size_t i = 0; i < argc; i++) r->items[i] = (gr_bytes_t){ctx->argv[i], (uint32_t)ctx->argv_length[i]};
    r->item_count = (uint32_t)argc;
    return 0;
}

/* The request as argv for the script layer; is_function: FCALL, else EVALSHA. */
static void run_typed(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply, int is_function) {
    const gr_call_t *call = db->call;
    size_t argc = 3 + (size_t)r->item_count;
    if (r->count > r->item_count) {   /* only a hand-made message can say so */
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR Number of keys can't be greater than number of args");
        return;
    }
    if (call && call->argv && call->argc == argc) {   /* it came as argv: that argv, as it was */
        if (is_function) gr_function_call(db, argc, call->argv, call->argv_length, reply, r->flag);
        else gr_script_eval(db, argc, call->argv, call->argv_length, reply, 1, r->flag);
        return;
    }
    const uint8_t *argv_stack[ON_STACK];
    size_t length_stack[ON_STACK];
    const uint8_t **argv = argc <= ON_STACK ? argv_stack : malloc(argc * sizeof *argv);
    size_t *lengths = argc <= ON_STACK ? length_stack : malloc(argc * sizeof *lengths);
    if (!argv || !lengths) {
        if (argv != argv_stack) free(argv);
        if (lengths != length_stack) free(lengths);
        gr_reply_oom(reply);
        return;
    }
    char numkeys[16];
    static const char *const names[2][2] = {{"EVALSHA", "EVALSHA_RO"}, {"FCALL", "FCALL_RO"}};
    const char *name = names[is_function][r->flag ? 1 : 0];
    argv[0] = (const uint8_t *)name;
    lengths[0] = strlen(name);
    argv[1] = r->arg1.data;
    lengths[1] = r->arg1.length;
    argv[2] = (const uint8_t *)numkeys;
    lengths[2] = (size_t)snprintf(numkeys, sizeof numkeys, "%u", r->count);
    for (uint32_t i = 0; i < r->item_count; i++) {
        argv[3 + i] = r->items[i].data;
        lengths[3 + i] = r->items[i].length;
    }
    if (is_function) gr_function_call(db, argc, argv, lengths, reply, r->flag);
    else gr_script_eval(db, argc, argv, lengths, reply, 1, r->flag);
    if (argv != argv_stack) free(argv);
    if (lengths != length_stack) free(lengths);
}

void gr_cmd_evalsha_typed(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) { run_typed(db, r, reply, 0); }

void gr_cmd_fcall_typed(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) { run_typed(db, r, reply, 1); }
