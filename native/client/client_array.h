/* client_array.h — batch calls of the ring client for arrays: one C call for a whole batch of
 * ARMSET pairs or ARMGET indexes, the indexes given as a uint64 column (numpy), pipelined
 * through the ring (client_array.c, built on client.h's public send/receive; RingClient's
 * armset_many and armget_many call these). Array commands have no typed template, so each
 * message is a CommandRequest carrying argv, exactly as RingClient.armset sends one.
 */
#ifndef GR_CLIENT_ARRAY_H
#define GR_CLIENT_ARRAY_H

#include <stddef.h>
#include <stdint.h>

#include "client/client.h"

/* cffi-cdef-begin */
/* ARMSET key with count pairs: index i is indexes[i], value i is values[value_offsets[i] ..
 * + value_lengths[i]]; sent as ARMSET messages of per_message pairs (0: 256), pipelined. On
 * success *result is an integer reply holding the slots that were empty, summed; if a reply
 * was an error, *result is the first error (later messages were still sent). */
int gr_client_armset_many(gr_client_t *client, const uint8_t *key, size_t key_length, const uint64_t *indexes,
                          const uint8_t *values, const int64_t *value_offsets, const int64_t *value_lengths,
                          size_t count, size_t per_message, gr_result_t *result);
/* ARMGET key for count indexes, as ARMGET messages of per_message indexes. Value i is
 * (*out_data)[out_offsets[i] .. + out_lengths[i]], out_lengths[i] = -1 for a hole; *out_data
 * is malloc'd here (free it with client_batch.h's gr_client_batch_free). On an error reply *result is that
 * error and the outputs are not filled. */
int gr_client_armget_many(gr_client_t *client, const uint8_t *key, size_t key_length, const uint64_t *indexes,
                          size_t count, size_t per_message, int64_t *out_offsets, int64_t *out_lengths,
                          uint8_t **out_data, size_t *out_size, gr_result_t *result);
/* cffi-cdef-end */

#endif
