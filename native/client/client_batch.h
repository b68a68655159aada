/* client_batch.h — batch calls of the ring client for hashes and sorted sets: one C call for a
 * whole batch of HSET pairs, HMGET fields, ZADD pairs or ZMSCORE members, pipelined through the
 * ring, and one for a ZRANGE WITHSCORES laid out as arrays (the implementation is
 * client_batch.c, built on client.h's public send/receive; RingClient.hset_many, hmget_many,
 * zadd_many, zscore_many and zrange_arrays in goblin_ring/client/ring.py call these). These
 * commands have no typed template, so each message is a CommandRequest carrying argv, exactly
 * as RingClient.hset or zadd sends one.
 *
 * The batch machinery itself (the state the replies fold into, the folds, the pipelined send
 * and drain, the endings) is below the cffi API: client_array.c's ARMSET/ARMGET batches are
 * two more callers of it.
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

/* ---- the batch machinery, for client_batch.c and client_array.c (not in the cffi API) ---- */

/* What the replies of a batch fold into. */
typedef struct gr_client_batch {
    gr_result_t *result;
    int have_error;
    uint8_t *error_text;     /* a copy: the client's arena is reused by the next receive */
    size_t error_length;
    int64_t added;           /* gr_client_batch_fold_sum: the integers summed */
    /* gr_client_batch_fold_values: the values copied out, in request order (at most expected) */
    int64_t *out_offsets, *out_lengths;
    size_t next;
    uint8_t *data;
    size_t size, capacity;
    int no_memory;
    double *out_scores;      /* zscore: one per member, NaN where there is none */
    size_t expected;         /* how many outputs may be written */
} gr_client_batch_t;

typedef void (*gr_client_batch_fold_t)(gr_client_batch_t *batch, const gr_result_t *reply);

/* Folds: an integer reply summed into added (HSET, ZADD, ARMSET); an array reply's bulks copied
 * out, -1 lengths for its nils (HMGET, ARMGET). Either keeps the first error reply. */
void gr_client_batch_fold_sum(gr_client_batch_t *batch, const gr_result_t *reply);
void gr_client_batch_fold_values(gr_client_batch_t *batch, const gr_result_t *reply);
void gr_client_batch_keep_error(gr_client_batch_t *batch, const gr_result_t *reply);
/* Send one request; while the request ring is full, take (and fold) a reply first. */
int gr_client_batch_send(gr_client_t *client, gr_request_t *request, gr_client_batch_t *batch,
                         gr_client_batch_fold_t fold);
/* Receive and fold every reply still in flight. */
int gr_client_batch_drain(gr_client_t *client, gr_client_batch_t *batch, gr_client_batch_fold_t fold);
/* The ends of a summing batch and of a values batch: *result the first error (its text kept
 * until the next batch's error), else the sum as an integer reply / the values handed over in
 * *out_data (malloc'd: gr_client_batch_free). Returns the batch's status. */
int gr_client_batch_finish_sum(gr_client_batch_t *batch, int status);
int gr_client_batch_finish_values(gr_client_batch_t *batch, int status, size_t count, uint8_t **out_data,
                                  size_t *out_size);

#endif
