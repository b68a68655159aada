/* client_stream.c — xadd_many and xack_many (client_stream.h): argv messages built in place from
 * the caller's packed buffers, pipelined with client_batch.h's send and drain, the replies
 * folded as they come back (XADD's IDs copied out, XACK's counts summed). No per-message Python.
 */
#include "client/client_stream.h"

#include <stdlib.h>
#include <string.h>

#include "client/client_batch.h"

#define DEFAULT_PER_MESSAGE 128

static int append(gr_client_batch_t *batch, const uint8_t *data, size_t length) {
    if (batch->size + length > batch->capacity) {
        size_t capacity = batch->capacity ? batch->capacity * 2 : 65536;
        while (capacity < batch->size + length) capacity *= 2;
        uint8_t *grown = realloc(batch->data, capacity);
        if (!grown) return -1;
        batch->data = grown;
        batch->capacity = capacity;
    }
    memcpy(batch->data + batch->size, data, length);
    batch->size += length;
    return 0;
}

/* XADD's reply: the ID (a bulk), copied out in request order; an error kept. */
static void fold_ids(gr_client_batch_t *batch, const gr_result_t *reply) {
    if (reply->template_id == GR_T_ERROR_REPLY) {
        gr_client_batch_keep_error(batch, reply);
        return;
    }
    if (batch->next >= batch->expected) return;
    size_t at = batch->next++;
    if (reply->template_id == GR_T_BULK_REPLY && !reply->is_nil) {
        batch->out_offsets[at] = (int64_t)batch->size;
        batch->out_lengths[at] = (int64_t)reply->length;
        if (append(batch, reply->data, reply->length)) batch->no_memory = 1;
    } else {
        batch->out_offsets[at] = 0;
        batch->out_lengths[at] = -1;
    }
}

int gr_client_xadd_many(gr_client_t *client, const uint8_t *key, size_t key_length, const uint8_t *fields,
                        const int64_t *field_offsets, const int64_t *field_lengths, const uint8_t *values,
                        const int64_t *value_offsets, const int64_t *value_lengths, const int64_t *pair_counts,
                        const uint8_t *ids, const int64_t *id_offsets, const int64_t *id_lengths, size_t count,
                        int64_t *out_offsets, int64_t *out_lengths, uint8_t **out_data, size_t *out_size,
                        gr_result_t *result) {
    memset(result, 0, sizeof *result);
    *out_data = NULL;
    *out_size = 0;
    gr_client_batch_t batch = {.result = result, .out_offsets = out_offsets, .out_lengths = out_lengths,
                               .expected = count};
    if (gr_client_in_flight(client)) return GR_CLIENT_PROTOCOL;
    size_t most = 0;
    for (size_t i = 0; i < count; i++)
        if (pair_counts[i] > (int64_t)most) most = (size_t)pair_counts[i];
    gr_bytes_t *items = malloc((3 + 2 * most) * sizeof *items);
    if (!items) return GR_CLIENT_NO_MEMORY;
    gr_request_t request;
    memset(&request, 0, sizeof request);
    request.template_id = GR_T_COMMAND;
    request.items = items;
    items[0] = (gr_bytes_t){(const uint8_t *)"XADD", 4};
    items[1] = (gr_bytes_t){key, (uint32_t)key_length};
    request.key = items[1];
    int status = GR_CLIENT_OK;
    size_t pair = 0;
    for (size_t i = 0; i < count && status == GR_CLIENT_OK; i++) {
        items[2] = ids ? (gr_bytes_t){ids + id_offsets[i], (uint32_t)id_lengths[i]} : (gr_bytes_t){(const uint8_t *)"*", 1};
        uint32_t argc = 3;
        for (int64_t k = 0; k < pair_counts[i]; k++, pair++) {
            items[argc++] = (gr_bytes_t){fields + field_offsets[pair], (uint32_t)field_lengths[pair]};
            items[argc++] = (gr_bytes_t){values + value_offsets[pair], (uint32_t)value_lengths[pair]};
        }
        request.item_count = argc;
        status = gr_client_batch_send(client, &request, &batch, fold_ids);
    }
    if (status == GR_CLIENT_OK) status = gr_client_batch_drain(client, &batch, fold_ids);
    free(items);
    return gr_client_batch_finish_values(&batch, status, count, out_data, out_size);
}

int gr_client_xack_many(gr_client_t *client, const uint8_t *key, size_t key_length, const uint8_t *group,
                        size_t group_length, const uint8_t *ids, const int64_t *id_offsets, const int64_t *id_lengths,
                        size_t count, size_t per_message, gr_result_t *result) {
    memset(result, 0, sizeof *result);
    gr_client_batch_t batch = {.result = result};
    if (gr_client_in_flight(client)) return GR_CLIENT_PROTOCOL;
    if (per_message == 0) per_message = DEFAULT_PER_MESSAGE;
    gr_bytes_t *items = malloc((3 + per_message) * sizeof *items);
    if (!items) return GR_CLIENT_NO_MEMORY;
    gr_request_t request;
    memset(&request, 0, sizeof request);
    request.template_id = GR_T_COMMAND;
    request.items = items;
    items[0] = (gr_bytes_t){(const uint8_t *)"XACK", 4};
    items[1] = (gr_bytes_t){key, (uint32_t)key_length};
    items[2] = (gr_bytes_t){group, (uint32_t)group_length};
    request.key = items[1];
    int status = GR_CLIENT_OK;
    for (size_t done = 0; done < count && status == GR_CLIENT_OK;) {
        size_t n = count - done < per_message ? count - done : per_message;
        uint32_t argc = 3;
        for (size_t i = done; i < done + n; i++) items[argc++] = (gr_bytes_t){ids + id_offsets[i], (uint32_t)id_lengths[i]};
        request.item_count = argc;
        status = gr_client_batch_send(client, &request, &batch, gr_client_batch_fold_sum);
        done += n;
    }
    if (status == GR_CLIENT_OK) status = gr_client_batch_drain(client, &batch, gr_client_batch_fold_sum);
    free(items);
    return gr_client_batch_finish_sum(&batch, status);
}
