/* commands.h — what the command table's rows (the commands/<family>.def files) point at: the argv builders
 * (command_builders.c) and the handlers, a file per family (cmd_list.c, cmd_keys.c,
 * cmd_string.c, cmd_bitmap.c, cmd_hash.c, cmd_set.c, cmd_zset*.c, cmd_expire.c, cmd_db.c, cmd_server.c,
 * cmd_connection.c, cmd_config.c, cmd_sort.c, cmd_pubsub.c, cmd_array*.c, command_docs.c;
 * HSCAN/SSCAN/ZSCAN share member_scan.c). Only commands/ includes it: exec reaches these through the rows.
 */
#ifndef GR_COMMANDS_H
#define GR_COMMANDS_H

#include "exec/blocking.h"
#include "exec/command.h"
#include "exec/db.h"
#include "exec/transaction.h"   /* MULTI, EXEC, DISCARD, WATCH, UNWATCH: their rows point there */

/* SRANDMEMBER, HRANDFIELD and ZRANDMEMBER with a negative count (repetitions allowed) answer
 * at most this many elements and refuse a larger count as out of range: past it Redis builds a
 * reply no client could hold (at -2^63+1 it loops for ever), which would grow the server
 * without bound. 2^24 short members are about 120 MiB of reply. */
#define GR_RANDOM_REPEATS_MAX (1LL << 24)
#define GR_RANDOM_REPEATS_ERROR "ERR value is out of range"
#define GR_RANDOM_COUNT_RANGE_ERROR \
    "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"

/* ---- builders: argv -> request (exec/command.h's gr_build_context_t) ---- */
#define GR_BUILDERS(X) \
    X(push) X(pop) X(key) X(lindex) X(range) X(lset) X(linsert) X(lrem) X(lpos) X(lmove) X(destination) \
    X(lmpop) X(bpop) X(blmove) X(brpoplpush) X(blmpop) X(keys_list) X(flush) X(pattern) X(scan) X(set) \
    X(setex) X(getex) X(mset) X(incr) X(decr) X(incrby) X(value) X(setrange) X(expire) X(select) X(move) \
    X(swapdb) X(ping)
#define GR_DECLARE_BUILDER(name) int gr_build_##name(gr_build_context_t *ctx);
GR_BUILDERS(GR_DECLARE_BUILDER)

/* ---- typed handlers: one per template (the request's fields say which variant) ---- */
#define GR_TYPED_HANDLERS(X) \
    X(push) X(pop) X(llen) X(lindex) X(lrange) X(lset) X(linsert) X(lrem) X(ltrim) X(lpos) X(lmove) X(lmpop) \
    X(list_blocking) \
    X(del) X(exists) X(type) X(dbsize) X(flushdb) X(keys) X(scan) X(rename) X(memory_usage) \
    X(expire) X(ttl) X(persist) X(select) X(move) X(swapdb) \
    X(set) X(get) X(getdel) X(getex) X(mset) X(mget) X(incrby) X(incrbyfloat) X(append) X(strlen) X(getrange) \
    X(setrange) X(ping)
#define GR_DECLARE_TYPED(name) void gr_cmd_##name(gr_db_t *db, const gr_request_t *request, gr_reply_t *reply);
GR_TYPED_HANDLERS(GR_DECLARE_TYPED)

/* SORT's and SORT_RO's key finders (cmd_sort.c): the sorted key, and SORT's last STORE key. */
size_t gr_sort_find_keys(size_t argc, const uint8_t *const *argv, const size_t *argv_length, size_t *positions,
                         const char **flags, size_t capacity);
size_t gr_sort_ro_find_keys(size_t argc, const uint8_t *const *argv, const size_t *argv_length, size_t *positions,
                            const char **flags, size_t capacity);

/* The blocking list commands' specs for exec/blocking.h (cmd_list.c); their rows point here. */
extern const gr_block_spec_t gr_list_block_pop, gr_list_block_move, gr_list_block_mpop;
extern const gr_block_spec_t gr_zset_block_pop;   /* BZPOPMIN, BZPOPMAX, BZMPOP (cmd_zset.c) */

/* ---- argv handlers ---- */
#define GR_ARGV_HANDLERS(X) \
    X(echo) X(info) X(memory) X(goblin_memory) X(list_internals) X(config) X(client) X(command) X(hello) \
    X(auth) X(reset) X(object) X(function) \
    X(time) X(quit) X(copy) \
    X(renamenx) X(touch) X(randomkey) X(dump) X(restore) X(sort) X(sort_ro) \
    X(sadd) X(srem) X(smembers) X(sismember) X(smismember) X(scard) X(spop) X(srandmember) X(smove) X(sinter) \
    X(sintercard) X(sinterstore) X(sunion) X(sunionstore) X(sdiff) X(sdiffstore) X(sscan)
#define GR_DECLARE_ARGV(name) \
    void gr_cmd_##name(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply);
GR_ARGV_HANDLERS(GR_DECLARE_ARGV)
/* The bitmap commands (cmd_bitmap.c), GETSET and LCS (cmd_string.c): argv handlers too. */
#define GR_BITMAP_ARGV_HANDLERS(X) X(setbit) X(getbit) X(bitcount) X(bitpos) X(bitop) X(bitfield) X(bitfield_ro) \
    X(getset) X(lcs)
GR_BITMAP_ARGV_HANDLERS(GR_DECLARE_ARGV)

/* ---- the hash family's argv handlers (cmd_hash.c; rows in hash.def) ---- */
#define GR_HASH_HANDLERS(X) \
    X(hset) X(hsetnx) X(hmset) X(hget) X(hmget) X(hdel) X(hlen) X(hexists) X(hstrlen) X(hgetall) X(hkeys) \
    X(hvals) X(hincrby) X(hincrbyfloat) X(hscan) X(hrandfield) X(hgetdel) X(hgetex) X(hsetex) X(hexpire) \
    X(hpexpire) X(hexpireat) X(hpexpireat) X(httl) X(hpttl) X(hexpiretime) X(hpexpiretime) X(hpersist)
GR_HASH_HANDLERS(GR_DECLARE_ARGV)

/* ---- the Pub/Sub commands' argv handlers (cmd_pubsub.c; rows in pubsub.def) ---- */
#define GR_PUBSUB_HANDLERS(X) \
    X(subscribe) X(unsubscribe) X(psubscribe) X(punsubscribe) X(ssubscribe) X(sunsubscribe) X(publish) X(spublish) \
    X(pubsub)
GR_PUBSUB_HANDLERS(GR_DECLARE_ARGV)

/* ---- the sorted-set family's argv handlers (cmd_zset.c; rows in zset.def) ---- */
#define GR_ZSET_HANDLERS(X) \
    X(zadd) X(zincrby) X(zscore) X(zmscore) X(zcard) X(zcount) X(zlexcount) X(zrank) X(zrevrank) X(zrange) X(zrangestore) X(zrevrange) X(zrangebyscore) X(zrevrangebyscore) X(zrangebylex) X(zrevrangebylex) X(zrem) X(zremrangebyrank) X(zremrangebyscore) X(zremrangebylex) X(zpopmin) X(zpopmax) X(zmpop) X(zrandmember) X(zscan) X(zunion) X(zinter) X(zdiff) X(zunionstore) X(zinterstore) X(zdiffstore) X(zintercard) X(bzpopmin) X(bzpopmax) X(bzmpop) X(zset_internals) X(zset_convert) X(goblin_optimize)
GR_ZSET_HANDLERS(GR_DECLARE_ARGV)

/* ---- the append-only log's commands (cmd_aof.c; rows in aof.def) ---- */
#define GR_AOF_HANDLERS(X) X(bgrewriteaof)
GR_AOF_HANDLERS(GR_DECLARE_ARGV)
/* ---- the slow log (cmd_slowlog.c; rows in slowlog.def) ---- */
#define GR_SLOWLOG_HANDLERS(X) X(slowlog)
GR_SLOWLOG_HANDLERS(GR_DECLARE_ARGV)
/* ---- persistence (cmd_persistence.c; rows in persistence.def) ---- */
#define GR_PERSISTENCE_HANDLERS(X) X(save) X(bgsave) X(lastsave) X(shutdown) X(debug)
GR_PERSISTENCE_HANDLERS(GR_DECLARE_ARGV)

/* ---- the array family's argv handlers (cmd_array.c; rows in array.def, and the
 * GOBLIN.<ENGINE>.AR* rows, which reuse them with the engine their name carries) ---- */
#define GR_ARRAY_HANDLERS(X) \
    X(arset) X(arget) X(armset) X(armget) X(argetrange) X(arlen) X(arcount) X(ardel) X(ardelrange) X(arscan) \
    X(argrep) X(arop) X(arinsert) X(arring) X(arseek) X(arnext) X(arlastitems) X(arinfo)
GR_ARRAY_HANDLERS(GR_DECLARE_ARGV)

/* ---- the RT array engine's own command (cmd_array_rt.c; row in array_rt.def) ---- */
#define GR_ARRAY_RT_HANDLERS(X) X(rt_arreserve)
GR_ARRAY_RT_HANDLERS(GR_DECLARE_ARGV)

#endif
