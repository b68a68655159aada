/* cmd_zset_shared.h — what the sorted-set command files share (private to native/commands/).
 *
 * The sorted-set command layer is four files over the engine in engines/zset/:
 *   cmd_zset.c        these helpers; ZADD, ZINCRBY, ZSCORE, ZMSCORE, ZCARD, ZRANK, ZREVRANK,
 *                     ZREM, ZRANDMEMBER, ZSCAN and the GOBLIN.ZSET.* / GOBLIN.OPTIMIZE commands
 *   cmd_zset_range.c  score and lex bounds; ZCOUNT, ZLEXCOUNT, ZRANGE and its older forms,
 *                     ZRANGESTORE, ZREMRANGEBY*
 *   cmd_zset_pop.c    ZPOPMIN, ZPOPMAX, ZMPOP and the blocking BZPOPMIN, BZPOPMAX, BZMPOP
 *   cmd_zset_store.c  ZUNION, ZINTER, ZDIFF, their STORE forms and ZINTERCARD
 * The small helpers are static inline here; the others are defined once in cmd_zset.c.
 */
#ifndef GR_CMD_ZSET_SHARED_H
#define GR_CMD_ZSET_SHARED_H

#include <stddef.h>
#include <stdint.h>

#include "commands/commands.h"
#include "engines/zset/zset.h"
#include "exec/db.h"

static inline gr_bytes_t arg(const uint8_t *const *argv, const size_t *argv_length, size_t i) {
    return (gr_bytes_t){argv[i], (uint32_t)argv_length[i]};
}

/* zset-max-listpack-* and zset-implementation (packed: a set leaving compact becomes packed
 * when its members and scores fit, engines/zset/zset.h). */
static inline gr_zset_limits_t limits_of(const gr_server_t *db) {
    return (gr_zset_limits_t){db->config.zset_max_listpack_entries, db->config.zset_max_listpack_value,
                              db->config.zset_packed};
}

static inline void reply_error(gr_reply_t *reply, const char *text) { gr_reply_error_text(reply, GR_ERR_GENERIC, text); }
static inline void reply_not_integer(gr_reply_t *reply) {
    gr_reply_error_text(reply, GR_ERR_NOT_INTEGER, "ERR value is not an integer or out of range");
}
static inline void reply_syntax(gr_reply_t *reply) { gr_reply_error_text(reply, GR_ERR_SYNTAX, "ERR syntax error"); }

static inline int protocol_of(const gr_server_t *db) { return db->current ? db->current->protocol : 2; }

/* ---- the keyspace ---- */

/* The sorted set at key: 1 found (*zset), 0 absent, -1 another type (WRONGTYPE replied). */
int gr_zcmd_find_or_reply(gr_server_t *db, gr_bytes_t key, gr_zset_t **zset, int for_write, gr_reply_t *reply);
/* A sorted set left empty by a command is deleted, as in Redis. */
void gr_zcmd_delete_if_empty(gr_server_t *db, gr_bytes_t key, gr_zset_t *zset);

/* ---- scores ---- */

/* Redis's getDoubleFromObject: strtod over the whole text, no leading space, not NaN. 0 or -1. */
int gr_zcmd_parse_double(const uint8_t *data, size_t length, double *out);
/* A score as Redis 7.0 replies it: a bulk ("%.17g", "inf", "-inf"), a RESP3 double over RESP3. */
void gr_zcmd_reply_score(gr_server_t *db, gr_reply_t *reply, double score);

/* ---- replying and storing member lists ---- */

/* Reply ranks [first, first + n) (forward) or first, first - 1, ... (reverse), with scores
 * when withscores: flat over RESP2 and the ring, [member, score] pairs over RESP3. */
void gr_zcmd_reply_ranks(gr_server_t *db, gr_reply_t *reply, const gr_zset_t *zset, size_t first, size_t n, int reverse,
                         int withscores);

/* A new set from entries given in any order, with the server's thresholds (so a small
 * result is compact, as Redis's zsetConvertToListpackIfNeeded makes it). failed on OOM. */
typedef struct entry_sink {
    gr_zset_t *zset;
    gr_zset_limits_t limits;
    int failed;
} entry_sink_t;

void gr_zcmd_sink_add(entry_sink_t *sink, const gr_zset_entry_t *e);
/* Store result under dst (it takes result), or delete dst when result is empty; reply its size. */
void gr_zcmd_store_result(gr_server_t *db, gr_bytes_t dst, gr_zset_t *result, gr_reply_t *reply);

#endif
