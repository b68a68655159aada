/* client_batch.h — batch calls of the ring client for hashes: one C call for a whole batch of
 * HSET pairs or HMGET fields, pipelined through the ring (the implementation is
 * client_batch.c, built on client.h's public send/receive; RingClient.hset_many and
 * hmget_many in goblin_ring/client/ring.py call these). Hash commands have no typed template,
 * so each message is a CommandRequest carrying argv, exactly as RingClient.hset sends one.
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
void gr_client_batch_free(uint8_t *data);
/* cffi-cdef-end */

#endif
