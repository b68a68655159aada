/* client_batch.h — batch calls of the ring client for hashes and sorted sets: one C call for a
 * whole batch of HSET pairs, HMGET fields, ZADD pairs or ZMSCORE members, pipelined through the
 * ring, and one for a ZRANGE WITHSCORES laid out as arrays (the implementation is
 * client_batch.c, built on client.h's public send/receive; RingClient.hset_many, hmget_many,
 * zadd_many, zscore_many and zrange_arrays in goblin_ring/client/ring.py call these). These
 * commands have no typed template, so each message is a CommandRequest carrying argv, exactly
 * as RingClient.hset or zadd sends one.
 */
#ifndef GR_CLIENT_BATCH_H
#define GR_CLIENT_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "client/client.h"

/* cffi-cdef-begin */
/* HSET key with count pairs: field i is fields[field_offsets[i] .. + field_lengths[i]], value i
 * likewise in values; sent as HSET messages of per_message pairs (0: 128), pipelined. On
 * success *result is an integer reply holding the fields added in all; if a reply was an
 * error, *result is the first error (pairs in later messages were still sent). */
int gr_client_hset_many(gr_client_t *client, const uint8_t *key, size_t key_length, const uint8_t *fields,
                        const int64_t *field_offsets, const int64_t *field_lengths, const uint8_t *values,
                        const int64_t *value_offsets, const int64_t *value_lengths, size_t count,
                        size_t per_message, gr_result_t *result);
/* HMGET key for count fields (laid out as above), as HMGET messages of per_message fields.
 * Value i is (*out_data)[out_offsets[i] .. + out_lengths[i]], out_lengths[i] = -1 for a
 * missing field; *out_data is malloc'd here (free it with gr_client_batch_free). On an error
 * reply *result is that error and the outputs are not filled. */
int gr_client_hmget_many(gr_client_t *client, const uint8_t *key, size_t key_length, const uint8_t *fields,
                         const int64_t *field_offsets, const int64_t *field_lengths, size_t count,
                         size_t per_message, int64_t *out_offsets, int64_t *out_lengths, uint8_t **out_data,
                         size_t *out_size, gr_result_t *result);
/* ZADD flags of gr_client_zadd_many, as the words after the key (Redis checks the combination). */
enum gr_zadd_flag {
    GR_ZADD_NX = 1, GR_ZADD_XX = 2, GR_ZADD_GT = 4, GR_ZADD_LT = 8, GR_ZADD_CH = 16
};
/* ZADD key [flags] score member ... for count pairs: member i laid out as hset_many's fields,
 * score i = scores[i] (sent as %.17g text, which reads back as the same double; an integral
 * score below 2^53 as its digits), as ZADD messages of per_message pairs (0: 128), pipelined.
 * *result: an integer reply summing the replies (members added, or changed with CH), or the
 * first error reply. */
int gr_client_zadd_many(gr_client_t *client, const uint8_t *key, size_t key_length, const uint8_t *members,
                        const int64_t *member_offsets, const int64_t *member_lengths, const double *scores,
                        size_t count, size_t per_message, unsigned flags, gr_result_t *result);
/* ZMSCORE key for count members (laid out as above), as messages of per_message members:
 * out_scores[i] is member i's score, NaN where it has none (a sorted set never holds NaN).
 * On an error reply *result is that error and out_scores is not filled. */
int gr_client_zscore_many(gr_client_t *client, const uint8_t *key, size_t key_length, const uint8_t *members,
                          const int64_t *member_offsets, const int64_t *member_lengths, size_t count,
                          size_t per_message, double *out_scores, gr_result_t *result);
/* ZRANGE key start stop WITHSCORES [REV] as one request, its reply laid out in one malloc'd
 * block (free it with gr_client_batch_free): *out_count members; the block holds their scores
 * as *out_count doubles, then the members as a Python list of bytes in marshal's format
 * (client/plain_reply.h), *out_size bytes in all. On an error reply *result is that error and
 * *out_data is NULL. */
int gr_client_zrange_arrays(gr_client_t *client, const uint8_t *key, size_t key_length, int64_t start, int64_t stop,
                            int reverse, uint8_t **out_data, size_t *out_size, size_t *out_count,
                            gr_result_t *result);
void gr_client_batch_free(uint8_t *data);
/* cffi-cdef-end */

#endif
