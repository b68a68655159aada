/* server_text.h — helpers the admin command files share: a growing text buffer for
 * INFO/CLIENT LIST, the HELP reply, the unknown-subcommand error, and the Redis version
 * goblin-ring reports itself compatible with.
 */
#ifndef GR_SERVER_TEXT_H
#define GR_SERVER_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "exec/reply.h"

/* The Redis version goblin-ring reports (INFO redis_version, HELLO version, Lua's
 * REDIS_VERSION). Client libraries gate features on it: redis-py caches client-side only for
 * 7.4 or later. Goblin has 7.4's surface (hash field TTLs, CLIENT TRACKING, ...) and more; its
 * replies and error texts are checked against redis-server 7.0 (valkey for newer commands). */
#define GR_REDIS_COMPATIBLE_VERSION "7.4.0"

typedef struct gr_text {
    char *data;
    size_t length, capacity;
    int failed;                 /* an allocation failed; the text is incomplete */
} gr_text_t;

int gr_text_init(gr_text_t *text, size_t capacity);
void gr_text_append(gr_text_t *text, const char *format, ...) __attribute__((format(printf, 2, 3)));
void gr_text_free(gr_text_t *text);

/* An array of status lines, as Redis's HELP subcommands reply. */
void gr_reply_help(gr_reply_t *reply, const char *const *lines, size_t count);
/* "ERR unknown subcommand 'x'. Try CONFIG HELP." */
void gr_reply_unknown_subcommand(gr_reply_t *reply, const uint8_t *sub, size_t length, const char *command);
/* "ERR wrong number of arguments for 'client|setname' command": the subcommand lowercased. */
void gr_reply_subcommand_arity_error(gr_reply_t *reply, const char *command, const uint8_t *sub, size_t length);

#endif
