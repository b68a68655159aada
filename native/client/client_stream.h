/* client_stream.h — batch calls of the ring client for streams: one C call for a whole batch of
 * XADDs (RingClient.xadd_many) or of XACKed IDs (RingClient.xack_many), pipelined through the
 * ring as argv CommandRequests (the implementation is client_stream.c, on client_batch.h's
 * send / drain / fold machinery).
 */
#ifndef GR_CLIENT_STREAM_H
#define GR_CLIENT_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "client/client.h"

/* cffi-cdef-begin */
/* XADD key <id> field value ... for count entries, each one message: entry i has
 * pair_counts[i] pairs, taken in order from fields / values (pair j is fields[field_offsets[j]
 * .. + field_lengths[j]] and likewise in values); its ID is ids[id_offsets[i] .. + id_lengths[i]]
 * when ids is not NULL, else "*". The added IDs are (*out_data)[out_offsets[i] .. +
 * out_lengths[i]] (malloc'd here; free with gr_client_batch_free). On an error reply *result is
 * the first error (later entries were still sent) and the outputs are not filled. */
int gr_client_xadd_many(gr_client_t *client, const uint8_t *key, size_t key_length, const uint8_t *fields,
                        const int64_t *field_offsets, const int64_t *field_lengths, const uint8_t *values,
                        const int64_t *value_offsets, const int64_t *value_lengths, const int64_t *pair_counts,
                        const uint8_t *ids, const int64_t *id_offsets, const int64_t *id_lengths, size_t count,
                        int64_t *out_offsets, int64_t *out_lengths, uint8_t **out_data, size_t *out_size,
                        gr_result_t *result);
/* XACK key group id ... for count IDs laid out as above, as messages of per_message IDs (0: 128),
 * pipelined; *result is an integer reply summing the acknowledged, or the first error. */
int gr_client_xack_many(gr_client_t *client, const uint8_t *key, size_t key_length, const uint8_t *group,
                        size_t group_length, const uint8_t *ids, const int64_t *id_offsets, const int64_t *id_lengths,
                        size_t count, size_t per_message, gr_result_t *result);
/* cffi-cdef-end */

#endif
