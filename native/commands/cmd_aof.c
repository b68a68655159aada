/* cmd_aof.c — BGREWRITEAOF (row in aof.def): starts persist/aof.c's forked rewrite, with Redis's replies. */
#include <stdio.h>
#include <string.h>

#include "commands/commands.h"
#include "exec/db.h"
#include "persist/aof.h"

void gr_cmd_bgrewriteaof(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
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
