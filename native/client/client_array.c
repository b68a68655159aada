/* client_array.c — armset_many and armget_many (client_array.h): ARMSET/ARMGET argv messages
 * built in place from a uint64 index column (printed as decimal into a per-message buffer)
 * and the caller's packed values, pipelined and folded by client_batch.h's batch machinery
 * (the sum fold for ARMSET, the values fold for ARMGET). No per-message Python.
 */
#include "client/client_array.h"
#include "client/client_batch.h"

#include <stdlib.h>
#include <string.h>

#define DEFAULT_PER_MESSAGE 256
#define INDEX_TEXT 21   /* 2^64-1 is 20 digits */

static size_t print_index(uint64_t value, char *out) {
    char digits[INDEX_TEXT];
    size_t n = 0;
    do { digits[n++] = (char)('0' + value % 10); value /= 10; } while (value);
    for (size_t i = 0; i < n; i++) out[i] = digits[n - 1 - i];
    return n;
}

/* Messages of per_message items (an index, and with values its value: ARMSET, whose replies
 * are summed; without, ARMGET, whose values are copied out), pipelined; then every reply drained. */
static int run(gr_client_t *client, const char *command, const uint8_t *key, size_t key_length,
               const uint64_t *indexes, const uint8_t *values, const int64_t *value_offsets,
               const int64_t *value_lengths, size_t count, size_t per_message, gr_client_batch_t *batch) {
    if (gr_client_in_flight(client)) return GR_CLIENT_PROTOCOL;
    if (per_message == 0) per_message = DEFAULT_PER_MESSAGE;
    size_t per_item = values ? 2 : 1;
    gr_client_batch_fold_t fold = values ? gr_client_batch_fold_sum : gr_client_batch_fold_values;
    gr_bytes_t *items = malloc((2 + per_message * per_item) * sizeof *items);
    char *texts = malloc(per_message * INDEX_TEXT);
    if (!items || !texts) {
        free(items);
        free(texts);
        return GR_CLIENT_NO_MEMORY;
    }
    gr_request_t request;
    memset(&request, 0, sizeof request);
    request.template_id = GR_T_COMMAND;
    request.items = items;
    items[0] = (gr_bytes_t){(const uint8_t *)command, (uint32_t)strlen(command)};
    items[1] = (gr_bytes_t){key, (uint32_t)key_length};
    int status = GR_CLIENT_OK;
    for (size_t done = 0; done < count && status == GR_CLIENT_OK;) {
        size_t n = count - done < per_message ? count - done : per_message;
        uint32_t argc = 2;
        for (size_t i = 0; i < n; i++) {
            char *text = texts + i * INDEX_TEXT;
            items[argc++] = (gr_bytes_t){(const uint8_t *)text, (uint32_t)print_index(indexes[done + i], text)};
            if (values)
                items[argc++] = (gr_bytes_t){values + value_offsets[done + i], (uint32_t)value_lengths[done + i]};
        }
        request.item_count = argc;
        request.key = items[1];
        status = gr_client_batch_send(client, &request, batch, fold);   /* encoded into the ring: texts reusable */
        done += n;
    }
    if (status == GR_CLIENT_OK) status = gr_client_batch_drain(client, batch, fold);
    free(items);
    free(texts);
    return status;
}

int gr_client_armset_many(gr_client_t *client, const uint8_t *key, size_t key_length, const uint64_t *indexes,
                          const uint8_t *values, const int64_t *value_offsets, const int64_t *value_lengths,
                          size_t count, size_t per_message, gr_result_t *result) {
    memset(result, 0, sizeof *result);
    gr_client_batch_t batch = {.result = result};
    static const uint8_t none[1];
    int status = run(client, "ARMSET", key, key_length, indexes, values ? values : none, value_offsets,
                     value_lengths, count, per_message, &batch);
    return gr_client_batch_finish_sum(&batch, status);
}

int gr_client_armget_many(gr_client_t *client, const uint8_t *key, size_t key_length, const uint64_t *indexes,
                          size_t count, size_t per_message, int64_t *out_offsets, int64_t *out_lengths,
                          uint8_t **out_data, size_t *out_size, gr_result_t *result) {
    memset(result, 0, sizeof *result);
    *out_data = NULL;
    *out_size = 0;
    gr_client_batch_t batch = {.result = result, .out_offsets = out_offsets, .out_lengths = out_lengths,
                               .expected = count};
    int status = run(client, "ARMGET", key, key_length, indexes, NULL, NULL, NULL, count, per_message, &batch);
    return gr_client_batch_finish_values(&batch, status, count, out_data, out_size);
}
