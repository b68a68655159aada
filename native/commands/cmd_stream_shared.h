/* cmd_stream_shared.h — what the STREAM command files share: ID parsing with Redis's rules and
 * error texts, the stream lookups, and the entry reply shape. The engine is engines/stream/;
 * the commands are cmd_stream.c (XADD, XRANGE/XREVRANGE, XLEN, XDEL, XTRIM, XSETID),
 * cmd_stream_group.c (XGROUP, XACK, XPENDING, XCLAIM, XAUTOCLAIM, XINFO) and cmd_stream_read.c
 * (XREAD, XREADGROUP and their blocking spec).
 */
#ifndef GR_CMD_STREAM_SHARED_H
#define GR_CMD_STREAM_SHARED_H

#include "commands/commands.h"
#include "engines/stream/stream.h"
#include "exec/db.h"

#define GR_XCMD_INVALID_ID "ERR Invalid stream ID specified as stream command argument"

static inline gr_bytes_t gr_xcmd_arg(const uint8_t *const *argv, const size_t *argv_length, size_t i) {
    return (gr_bytes_t){argv[i], (uint32_t)argv_length[i]};
}

static inline gr_stream_limits_t gr_xcmd_limits(const gr_server_t *db) {
    return (gr_stream_limits_t){(uint32_t)db->config.stream_node_max_bytes, (uint32_t)db->config.stream_node_max_entries};
}

/* Redis's streamGenericParseIDOrReply without the reply: "-" (0-0) and "+" (max-max) unless
 * strict, "ms" (seq = missing_seq), "ms-seq", and with seq_given non-NULL "ms-*" (*seq_given 0).
 * 0, or -1 invalid. */
int gr_xcmd_parse_id(const uint8_t *data, size_t length, gr_stream_id_t *id, uint64_t missing_seq, int strict,
                     int *seq_given);
/* The same, replying GR_XCMD_INVALID_ID on failure. */
int gr_xcmd_parse_id_or_reply(const uint8_t *data, size_t length, gr_stream_id_t *id, uint64_t missing_seq, int strict,
                              int *seq_given, gr_reply_t *reply);
/* An interval bound: "(" prefix exclusive (the rest strict), else as non-strict. *exclusive set. */
int gr_xcmd_parse_interval_or_reply(const uint8_t *data, size_t length, gr_stream_id_t *id, int *exclusive,
                                    uint64_t missing_seq, gr_reply_t *reply);
/* XRANGE / XPENDING / XAUTOCLAIM bounds, exclusive ones moved inward (Redis's errors when that
 * overflows). 0, or -1 replied. */
int gr_xcmd_parse_start_or_reply(const uint8_t *data, size_t length, gr_stream_id_t *id, gr_reply_t *reply);
int gr_xcmd_parse_end_or_reply(const uint8_t *data, size_t length, gr_stream_id_t *id, gr_reply_t *reply);

/* getLongLongFromObjectOrReply: 0, or -1 with "ERR value is not an integer or out of range"
 * (or `message` when not NULL, as "ERR <message>"). */
int gr_xcmd_int64_or_reply(const uint8_t *data, size_t length, int64_t *out, const char *message, gr_reply_t *reply);

/* The stream at key: 1 found, 0 absent, -1 another type (WRONGTYPE replied). */
int gr_xcmd_find_or_reply(gr_server_t *db, gr_bytes_t key, gr_stream_t **stream, int for_write, gr_reply_t *reply);

void gr_xcmd_reply_id(gr_reply_t *reply, const gr_stream_id_t *id);
/* [id, [field, value, ...]] */
void gr_xcmd_reply_entry(gr_reply_t *reply, gr_stream_entry_t *entry);
/* Entries start .. end (inclusive), at most count (0: all), forward or reverse: the array. */
size_t gr_xcmd_reply_range(gr_reply_t *reply, const gr_stream_t *stream, const gr_stream_id_t *start,
                           const gr_stream_id_t *end, size_t count, int reverse);
/* One entry by ID as [id, [pairs]]: 1, or 0 when it is not there (nothing written). */
int gr_xcmd_reply_one(gr_reply_t *reply, const gr_stream_t *stream, const gr_stream_id_t *id);

void gr_xcmd_reply_error(gr_reply_t *reply, const char *text);   /* "ERR ..." / "-NOGROUP ..." texts as given */
/* "-NOGROUP No such key '<key>' or consumer group '<group>'<tail>" */
void gr_xcmd_reply_nogroup(gr_reply_t *reply, gr_bytes_t key, gr_bytes_t group, const char *tail);

/* The protocol of the running connection (RESP3 maps XREAD's reply). */
int gr_xcmd_protocol(const gr_server_t *db);

/* Effects (propagate.h) the group commands and XREADGROUP share, as Redis writes them:
 * XCLAIM key group consumer 0 id TIME ms RETRYCOUNT n FORCE JUSTID LASTID group-last-id;
 * XGROUP SETID key group last-id ENTRIESREAD n; XGROUP CREATECONSUMER key group consumer. */
void gr_xcmd_effect_xclaim(gr_server_t *db, gr_bytes_t key, gr_bytes_t group_name, const gr_stream_group_t *group,
                           const gr_stream_nack_t *nack);
void gr_xcmd_effect_setid(gr_server_t *db, gr_bytes_t key, gr_bytes_t group_name, const gr_stream_group_t *group);
void gr_xcmd_effect_createconsumer(gr_server_t *db, gr_bytes_t key, gr_bytes_t group_name, gr_bytes_t consumer);

/* Find or create (notifying "xgroup-createconsumer" and counting a change) a consumer; *created
 * set when it was made. NULL on OOM (replied). seen refreshed when found (Redis's SLC_DEFAULT). */
gr_stream_consumer_t *gr_xcmd_consumer_or_reply(gr_server_t *db, gr_bytes_t key, gr_stream_group_t *group,
                                                gr_bytes_t name, int *created, gr_reply_t *reply);

#endif
