/* client_array.c — armset_many and armget_many (client_array.h): ARMSET/ARMGET argv messages
 * built in place from a uint64 index column (printed as decimal into a per-message buffer)
 * and the caller's packed values, pipelined through client.h's gr_client_send /
 * gr_client_receive, the replies folded as they come back. No per-message Python.
 */
#include "client/client_array.h"

#include <stdlib.h>
#include <string.h>

#define DEFAULT_PER_MESSAGE 256
#define INDEX_TEXT 21   /* 2^64-1 is 20 digits */

typedef struct fold_state {
    gr_result_t *result;
    int have_error;
    uint8_t *error_text;     /* a copy: the client's arena is reused by the next receive */
    size_t error_length;
    int64_t added;           /* armset: the integers summed */
    int64_t *out_offsets, *out_lengths;   /* armget: the values copied out, in index order */
    size_t next, count;
    uint8_t *data;
    size_t size, capacity;
    int no_memory;
} fold_state_t;

typedef void (*fold_t)(fold_state_t *state, const gr_result_t *reply);

static void keep_error(fold_state_t *state, const gr_result_t *reply) {
    if (state->have_error) return;
    state->have_error = 1;
    *state->result = *reply;
    state->error_text = malloc(reply->length ? reply->length : 1);
    if (state->error_text) {
        memcpy(state->error_text, reply->data, reply->length);
        state->error_length = reply->length;
    }
}

static int append(fold_state_t *state, const uint8_t *data, size_t length) {
    if (state->size + length > state->capacity) {
        size_t capacity = state->capacity ? state->capacity * 2 : 65536;
        while (capacity < state->size + length) capacity *= 2;
        uint8_t *grown = realloc(state->data, capacity);
        if (!grown) return -1;
        state->data = grown;
        state->capacity = capacity;
    }
    if (length) memcpy(state->data + state->size, data, length);
    state->size += length;
    return 0;
}

static void fold_armset(fold_state_t *state, const gr_result_t *reply) {
    if (reply->template_id == GR_T_ERROR_REPLY) keep_error(state, reply);
    else if (reply->template_id == GR_T_INTEGER_REPLY) state->added += reply->integer;
}

static void fold_armget(fold_state_t *state, const gr_result_t *reply) {
    if (reply->template_id == GR_T_ERROR_REPLY) { keep_error(state, reply); return; }
    if (reply->template_id != GR_T_ARRAY_REPLY) return;
    for (uint32_t i = 1; i < reply->count && state->next < state->count; i++) {   /* element 0: the array */
        const gr_element_t *element = &reply->elements[i];
        size_t at = state->next++;
        if (element->kind == GR_ELEMENT_KIND_BULK) {
            state->out_offsets[at] = (int64_t)state->size;
            state->out_lengths[at] = element->bytes.length;
            if (append(state, element->bytes.data, element->bytes.length)) state->no_memory = 1;
        } else {
            state->out_offsets[at] = 0;
            state->out_lengths[at] = -1;
        }
    }
}

/* Send one request; while the request ring is full, take a reply first. */
static int send_pipelined(gr_client_t *client, gr_request_t *request, fold_state_t *state, fold_t fold) {
    for (;;) {
        int status = gr_client_send(client, request);
        if (status != GR_CLIENT_RING_FULL) return status;
        gr_result_t reply;
        status = gr_client_receive(client, &reply);
        if (status != GR_CLIENT_OK) return status;
        fold(state, &reply);
    }
}

static size_t print_index(uint64_t value, char *out) {
    char digits[INDEX_TEXT];
    size_t n = 0;
    do { digits[n++] = (char)('0' + value % 10); value /= 10; } while (value);
    for (size_t i = 0; i < n; i++) out[i] = digits[n - 1 - i];
    return n;
}

/* Messages of per_message items (an index, and with values its value), pipelined; then every
 * reply drained. */
static int run(gr_client_t *client, const char *command, const uint8_t *key, size_t key_length,
               const uint64_t *indexes, const uint8_t *values, const int64_t *value_offsets,
               const int64_t *value_lengths, size_t count, size_t per_message, fold_state_t *state, fold_t fold) {
    if (gr_client_in_flight(client)) return GR_CLIENT_PROTOCOL;
    if (per_message == 0) per_message = DEFAULT_PER_MESSAGE;
    size_t per_item = values ? 2 : 1;
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
        status = send_pipelined(client, &request, state, fold);   /* encoded into the ring: texts reusable */
        done += n;
    }
    while (status == GR_CLIENT_OK && gr_client_in_flight(client)) {
        gr_result_t reply;
        status = gr_client_receive(client, &reply);
        if (status == GR_CLIENT_OK) fold(state, &reply);
    }
    free(items);
    free(texts);
    return status;
}

/* Point result at the kept error text (owned here until the next call). */
static uint8_t *last_error_text;

static void finish_error(fold_state_t *state) {
    free(last_error_text);
    last_error_text = state->error_text;
    state->result->data = last_error_text;
    state->result->length = state->error_length;
}

int gr_client_armset_many(gr_client_t *client, const uint8_t *key, size_t key_length, const uint64_t *indexes,
                          const uint8_t *values, const int64_t *value_offsets, const int64_t *value_lengths,
                          size_t count, size_t per_message, gr_result_t *result) {
    memset(result, 0, sizeof *result);
    fold_state_t state = {.result = result};
    static const uint8_t none[1];
    int status = run(client, "ARMSET", key, key_length, indexes, values ? values : none, value_offsets,
                     value_lengths, count, per_message, &state, fold_armset);
    if (status == GR_CLIENT_OK && state.have_error) {
        finish_error(&state);
        return status;
    }
    free(state.error_text);
    if (status == GR_CLIENT_OK) {
        result->template_id = GR_T_INTEGER_REPLY;
        result->integer = state.added;
    }
    return status;
}

int gr_client_armget_many(gr_client_t *client, const uint8_t *key, size_t key_length, const uint64_t *indexes,
                          size_t count, size_t per_message, int64_t *out_offsets, int64_t *out_lengths,
                          uint8_t **out_data, size_t *out_size, gr_result_t *result) {
    memset(result, 0, sizeof *result);
    *out_data = NULL;
    *out_size = 0;
    fold_state_t state = {.result = result, .out_offsets = out_offsets, .out_lengths = out_lengths, .count = count};
    int status = run(client, "ARMGET", key, key_length, indexes, NULL, NULL, NULL, count, per_message, &state,
                     fold_armget);
    if (status == GR_CLIENT_OK && state.no_memory) status = GR_CLIENT_NO_MEMORY;
    if (status == GR_CLIENT_OK && state.have_error) {
        finish_error(&state);
        free(state.data);
        return status;
    }
    free(state.error_text);
    if (status != GR_CLIENT_OK || state.next != count) {
        free(state.data);
        return status != GR_CLIENT_OK ? status : GR_CLIENT_PROTOCOL;
    }
    result->template_id = GR_T_ARRAY_REPLY;
    *out_data = state.data;
    *out_size = state.size;
    return GR_CLIENT_OK;
}

void gr_client_array_free(uint8_t *data) { free(data); }
