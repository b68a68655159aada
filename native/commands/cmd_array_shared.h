/* cmd_array_shared.h — what the array command files share (private to native/commands/):
 * cmd_array.c (the plain reads and writes, ARSCAN, ARINSERT/ARRING/ARSEEK/ARNEXT/ARLASTITEMS,
 * ARINFO, and the helpers declared here) and cmd_array_query.c (ARGREP, AROP). */
#ifndef GR_CMD_ARRAY_SHARED_H
#define GR_CMD_ARRAY_SHARED_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "commands/commands.h"
#include "engines/array/array.h"
#include "exec/db.h"

typedef struct array_call {
    gr_server_t *db;
    size_t argc;
    const uint8_t *const *argv;
    const size_t *argv_length;
    gr_reply_t *reply;
    gr_bytes_t key;
    const gr_array_engine_t *forced;   /* GOBLIN.<engine>.: that engine, else NULL */
} array_call_t;

static inline void reply_error(gr_reply_t *reply, const char *text) { gr_reply_error_text(reply, GR_ERR_GENERIC, text); }
static inline void reply_syntax(gr_reply_t *reply) { gr_reply_error_text(reply, GR_ERR_SYNTAX, "ERR syntax error"); }
static inline void reply_not_integer(gr_reply_t *reply) {
    gr_reply_error_text(reply, GR_ERR_NOT_INTEGER, "ERR value is not an integer or out of range");
}

/* Unsigned integers past INT64_MAX (ARLEN of an array holding 2^64-2, say). */
static inline void reply_unsigned(gr_reply_t *reply, uint64_t value) { gr_reply_unsigned(reply, value); }

static inline int arg_is(const array_call_t *c, size_t i, const char *word) {
    return c->argv_length[i] == strlen(word) && strncasecmp((const char *)c->argv[i], word, c->argv_length[i]) == 0;
}

/* One handler's call: its arguments, the key, and the engine a GOBLIN.<ENGINE>. name forces. */
array_call_t gr_acmd_call_of(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                             gr_reply_t *reply);
#define CALL array_call_t c = gr_acmd_call_of(db, argc, argv, argv_length, reply)

/* The arity error, naming the command as typed (lowercased), as Redis does. */
void gr_acmd_reply_arity(const array_call_t *c);
/* An index argument, 0 .. 2^64-2: 0, or -1 with "ERR invalid array index" replied. */
int gr_acmd_parse_index_or_reply(const array_call_t *c, size_t i, uint64_t *index);
/* A signed 64-bit argument: 0, or -1 with error (NULL: Redis's "not an integer") replied. */
int gr_acmd_parse_int64_or_reply(const array_call_t *c, size_t i, int64_t *value, const char *error);
/* Find the key as an array: 1 found (*array set), 0 absent, -1 wrong type or engine (replied).
 * for_write: Redis's lookupKeyWrite (no hit/miss counted). */
int gr_acmd_find_array_or_reply(const array_call_t *c, int for_write, gr_array_t **array);

#endif
