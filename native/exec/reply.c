/* reply.c — the error and status replies every command file shares, written through the
 * transport-neutral writer (reply.h declares them beside the writer's operations). The
 * texts are Redis's.
 */
#include "exec/reply.h"

#include <stdio.h>
#include <string.h>

void gr_reply_error_text(gr_reply_t *reply, gr_error_code_t code, const char *text) {
    gr_reply_error(reply, code, text, strlen(text));
}

void gr_reply_arity_error(gr_reply_t *reply, const char *command) {
    char text[160];
    size_t n = (size_t)snprintf(text, sizeof text, "ERR wrong number of arguments for '%s' command", command);
    gr_reply_error(reply, GR_ERR_WRONG_ARITY, text, n < sizeof text ? n : sizeof text - 1);
}

void gr_reply_wrongtype(gr_reply_t *reply) {
    gr_reply_error_text(reply, GR_ERR_WRONGTYPE, "WRONGTYPE Operation against a key holding the wrong kind of value");
}

void gr_reply_ok(gr_reply_t *reply) { gr_reply_status(reply, "OK", 2); }

void gr_reply_oom(gr_reply_t *reply) {
    gr_reply_error_text(reply, GR_ERR_OUT_OF_MEMORY, "OOM command not allowed when used memory > 'maxmemory'.");
}
