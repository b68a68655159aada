/* client_batch.c — hset_many, hmget_many, zadd_many, zscore_many (client_batch.h): argv
 * messages built in place from the caller's packed buffers, pipelined through client.h's
 * gr_client_send / gr_client_receive, the replies folded as they come back; and zrange_arrays,
 * one ZRANGE WITHSCORES whose reply is laid out as doubles plus a marshal'd member list.
 * No per-message Python.
 */
#include "client/client_batch.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_PER_MESSAGE 128

typedef gr_client_batch_t batch_t;

void gr_client_batch_keep_error(batch_t *batch, const gr_result_t *reply) {
    if (batch->have_error) return;
    batch->have_error = 1;
    *batch->result = *reply;
    batch->error_text = malloc(reply->length ? reply->length : 1);
    if (batch->error_text) {
        memcpy(batch->error_text, reply->data, reply->length);
        batch->error_length = reply->length;
    }
}

static int append(batch_t *batch, const uint8_t *data, size_t length) {
    if (batch->size + length > batch->capacity) {
        size_t capacity = batch->capacity ? batch->capacity * 2 : 65536;
        while (capacity < batch->size + length) capacity *= 2;
        uint8_t *grown = realloc(batch->data, capacity);
        if (!grown) return -1;
        batch->data = grown;
        batch->capacity = capacity;
    }
    if (length) memcpy(batch->data + batch->size, data, length);
    batch->size += length;
    return 0;
}

void gr_client_batch_fold_sum(batch_t *batch, const gr_result_t *reply) {
    if (reply->template_id == GR_T_ERROR_REPLY) gr_client_batch_keep_error(batch, reply);
    else if (reply->template_id == GR_T_INTEGER_REPLY) batch->added += reply->integer;
}

void gr_client_batch_fold_values(batch_t *batch, const gr_result_t *reply) {
    if (reply->template_id == GR_T_ERROR_REPLY) { gr_client_batch_keep_error(batch, reply); return; }
    if (reply->template_id != GR_T_ARRAY_REPLY) return;
    for (uint32_t i = 1; i < reply->count && batch->next < batch->expected; i++) {   /* element 0: the array */
        const gr_element_t *element = &reply->elements[i];
        size_t at = batch->next++;
        if (element->kind == GR_ELEMENT_KIND_BULK) {
            batch->out_offsets[at] = (int64_t)batch->size;
            batch->out_lengths[at] = element->bytes.length;
            if (append(batch, element->bytes.data, element->bytes.length)) batch->no_memory = 1;
        } else {
            batch->out_offsets[at] = 0;
            batch->out_lengths[at] = -1;
        }
    }
}

/* A score as the server wrote it (%.17g, inf, -inf) as a double. */
static double parse_score(const uint8_t *data, size_t length) {
    char text[128];
    if (length >= sizeof text) return NAN;
    memcpy(text, data, length);
    text[length] = '\0';
    char *end = NULL;
    double value = strtod(text, &end);
    return end == text + length ? value : NAN;
}

static void fold_zscore(batch_t *batch, const gr_result_t *reply) {
    if (reply->template_id == GR_T_ERROR_REPLY) { gr_client_batch_keep_error(batch, reply); return; }
    if (reply->template_id != GR_T_ARRAY_REPLY) return;
    for (uint32_t i = 1; i < reply->count; i++) {   /* element 0 is the array itself */
        const gr_element_t *element = &reply->elements[i];
        size_t at = batch->next++;
        if (at >= batch->expected) continue;
        batch->out_scores[at] = element->kind == GR_ELEMENT_KIND_BULK
                                ? parse_score(element->bytes.data, element->bytes.length) : NAN;
    }
}

typedef gr_client_batch_fold_t fold_t;

int gr_client_batch_send(gr_client_t *client, gr_request_t *request, batch_t *batch, fold_t fold) {
    for (;;) {
        int status = gr_client_send(client, request);
        if (status != GR_CLIENT_RING_FULL) return status;
        gr_result_t reply;
        status = gr_client_receive(client, &reply);
        if (status != GR_CLIENT_OK) return status;
        fold(batch, &reply);
    }
}

int gr_client_batch_drain(gr_client_t *client, batch_t *batch, fold_t fold) {
    while (gr_client_in_flight(client)) {
        gr_result_t reply;
        int status = gr_client_receive(client, &reply);
        if (status != GR_CLIENT_OK) return status;
        fold(batch, &reply);
    }
    return GR_CLIENT_OK;
}

/* Point result at the kept error text (owned here until the next batch's error). */
static uint8_t *last_error_text;

static void finish_error(batch_t *batch) {
    free(last_error_text);
    last_error_text = batch->error_text;
    batch->result->data = last_error_text;
    batch->result->length = batch->error_length;
}

int gr_client_batch_finish_sum(batch_t *batch, int status) {
    if (status == GR_CLIENT_OK && batch->have_error) {
        finish_error(batch);
        return status;
    }
    free(batch->error_text);
    if (status == GR_CLIENT_OK) {
        batch->result->template_id = GR_T_INTEGER_REPLY;
        batch->result->integer = batch->added;
    }
    return status;
}

int gr_client_batch_finish_values(batch_t *batch, int status, size_t count, uint8_t **out_data, size_t *out_size) {
    if (status == GR_CLIENT_OK && batch->no_memory) status = GR_CLIENT_NO_MEMORY;
    if (status == GR_CLIENT_OK && batch->have_error) {
        finish_error(batch);
        free(batch->data);
        return status;
    }
    free(batch->error_text);
    if (status != GR_CLIENT_OK || batch->next != count) {
        free(batch->data);
        return status != GR_CLIENT_OK ? status : GR_CLIENT_PROTOCOL;
    }
    batch->result->template_id = GR_T_ARRAY_REPLY;
    *out_data = batch->data;
    *out_size = batch->size;
    return GR_CLIENT_OK;
}

static int run(gr_client_t *client, const char *command, size_t command_length, const uint8_t *key,
               size_t key_length, size_t count, size_t per_item, size_t per_message,
               const uint8_t *const *sources, const int64_t *const *offsets, const int64_t *const *lengths,
               batch_t *batch, fold_t fold) {
    if (gr_client_in_flight(client)) return GR_CLIENT_PROTOCOL;
    if (per_message == 0) per_message = DEFAULT_PER_MESSAGE;
    gr_bytes_t *items = malloc((2 + per_message * per_item) * sizeof *items);
    if (!items) return GR_CLIENT_NO_MEMORY;
    gr_request_t request;
    memset(&request, 0, sizeof request);
    request.template_id = GR_T_COMMAND;
    request.items = items;
    items[0] = (gr_bytes_t){(const uint8_t *)command, (uint32_t)command_length};
    items[1] = (gr_bytes_t){key, (uint32_t)key_length};
    int status = GR_CLIENT_OK;
    for (size_t done = 0; done < count && status == GR_CLIENT_OK;) {
        size_t n = count - done < per_message ? count - done : per_message;
        uint32_t argc = 2;
        for (size_t i = done; i < done + n; i++)
            for (size_t part = 0; part < per_item; part++)
                items[argc++] = (gr_bytes_t){sources[part] + offsets[part][i], (uint32_t)lengths[part][i]};
        request.item_count = argc;
        request.key = items[1];
        status = gr_client_batch_send(client, &request, batch, fold);
        done += n;
    }
    if (status == GR_CLIENT_OK) status = gr_client_batch_drain(client, batch, fold);
    free(items);
    return status;
}

int gr_client_hset_many(gr_client_t *client, const uint8_t *key, size_t key_length, const uint8_t *fields,
                        const int64_t *field_offsets, const int64_t *field_lengths, const uint8_t *values,
                        const int64_t *value_offsets, const int64_t *value_lengths, size_t count,
                        size_t per_message, gr_result_t *result) {
    memset(result, 0, sizeof *result);
    batch_t batch = {.result = result};
    const uint8_t *sources[2] = {fields, values};
    const int64_t *offsets[2] = {field_offsets, value_offsets};
    const int64_t *lengths[2] = {field_lengths, value_lengths};
    int status = run(client, "HSET", 4, key, key_length, count, 2, per_message, sources, offsets, lengths, &batch,
                     gr_client_batch_fold_sum);
    return gr_client_batch_finish_sum(&batch, status);
}

int gr_client_hmget_many(gr_client_t *client, const uint8_t *key, size_t key_length, const uint8_t *fields,
                         const int64_t *field_offsets, const int64_t *field_lengths, size_t count,
                         size_t per_message, int64_t *out_offsets, int64_t *out_lengths, uint8_t **out_data,
                         size_t *out_size, gr_result_t *result) {
    memset(result, 0, sizeof *result);
    *out_data = NULL;
    *out_size = 0;
    batch_t batch = {.result = result, .out_offsets = out_offsets, .out_lengths = out_lengths, .expected = count};
    const uint8_t *sources[1] = {fields};
    const int64_t *offsets[1] = {field_offsets};
    const int64_t *lengths[1] = {field_lengths};
    int status = run(client, "HMGET", 5, key, key_length, count, 1, per_message, sources, offsets, lengths, &batch,
                     gr_client_batch_fold_values);
    return gr_client_batch_finish_values(&batch, status, count, out_data, out_size);
}

/* A score's text that strtod reads back as the same double: an integral score below 2^53 as
 * its digits (the common case, and what Redis itself prints for it), else %.17g. */
static size_t format_score(double score, char *out) {
    if (score == floor(score) && fabs(score) < 9007199254740992.0 && !(score == 0 && signbit(score))) {
        long long whole = (long long)score;
        char digits[24];
        size_t n = 0, at = 0;
        unsigned long long magnitude = whole < 0 ? 0ULL - (unsigned long long)whole : (unsigned long long)whole;
        do { digits[n++] = (char)('0' + magnitude % 10); magnitude /= 10; } while (magnitude);
        if (whole < 0) out[at++] = '-';
        while (n) out[at++] = digits[--n];
        return at;
    }
    int n = snprintf(out, 32, "%.17g", score);
    return n > 0 ? (size_t)n : 0;
}

#define SCORE_TEXT 32   /* room for one score's text */

int gr_client_zadd_many(gr_client_t *client, const uint8_t *key, size_t key_length, const uint8_t *members,
                        const int64_t *member_offsets, const int64_t *member_lengths, const double *scores,
                        size_t count, size_t per_message, unsigned flags, gr_result_t *result) {
    memset(result, 0, sizeof *result);
    if (gr_client_in_flight(client)) return GR_CLIENT_PROTOCOL;
    if (per_message == 0) per_message = DEFAULT_PER_MESSAGE;
    static const struct { unsigned flag; const char *word; } words[] = {
        {GR_ZADD_NX, "NX"}, {GR_ZADD_XX, "XX"}, {GR_ZADD_GT, "GT"}, {GR_ZADD_LT, "LT"}, {GR_ZADD_CH, "CH"}};
    size_t capacity = 2 + sizeof words / sizeof words[0] + 2 * per_message;
    gr_bytes_t *items = malloc(capacity * sizeof *items);
    char *texts = malloc(per_message * SCORE_TEXT);
    if (!items || !texts) {
        free(items);
        free(texts);
        return GR_CLIENT_NO_MEMORY;
    }
    batch_t batch = {.result = result};
    gr_request_t request;
    memset(&request, 0, sizeof request);
    request.template_id = GR_T_COMMAND;
    request.items = items;
    items[0] = (gr_bytes_t){(const uint8_t *)"ZADD", 4};
    items[1] = (gr_bytes_t){key, (uint32_t)key_length};
    uint32_t head = 2;
    for (size_t w = 0; w < sizeof words / sizeof words[0]; w++)
        if (flags & words[w].flag) items[head++] = (gr_bytes_t){(const uint8_t *)words[w].word, 2};
    request.key = items[1];
    int status = GR_CLIENT_OK;
    for (size_t done = 0; done < count && status == GR_CLIENT_OK;) {
        size_t n = count - done < per_message ? count - done : per_message;
        uint32_t argc = head;
        for (size_t i = 0; i < n; i++) {
            char *text = texts + i * SCORE_TEXT;
            size_t length = format_score(scores[done + i], text);
            items[argc++] = (gr_bytes_t){(const uint8_t *)text, (uint32_t)length};
            items[argc++] = (gr_bytes_t){members + member_offsets[done + i], (uint32_t)member_lengths[done + i]};
        }
        request.item_count = argc;
        status = gr_client_batch_send(client, &request, &batch, gr_client_batch_fold_sum);   /* encoded at once: texts reusable */
        done += n;
    }
    if (status == GR_CLIENT_OK) status = gr_client_batch_drain(client, &batch, gr_client_batch_fold_sum);
    free(items);
    free(texts);
    return gr_client_batch_finish_sum(&batch, status);
}

int gr_client_zscore_many(gr_client_t *client, const uint8_t *key, size_t key_length, const uint8_t *members,
                          const int64_t *member_offsets, const int64_t *member_lengths, size_t count,
                          size_t per_message, double *out_scores, gr_result_t *result) {
    memset(result, 0, sizeof *result);
    batch_t batch = {.result = result, .out_scores = out_scores, .expected = count};
    const uint8_t *sources[1] = {members};
    const int64_t *offsets[1] = {member_offsets};
    const int64_t *lengths[1] = {member_lengths};
    int status = run(client, "ZMSCORE", 7, key, key_length, count, 1, per_message, sources, offsets, lengths,
                     &batch, fold_zscore);
    if (status == GR_CLIENT_OK && batch.have_error) {
        finish_error(&batch);
        return status;
    }
    free(batch.error_text);
    if (status != GR_CLIENT_OK) return status;
    if (batch.next != count) return GR_CLIENT_PROTOCOL;
    result->template_id = GR_T_ARRAY_REPLY;
    return GR_CLIENT_OK;
}

static void store_le32(uint8_t *p, uint32_t value) {
    p[0] = (uint8_t)value, p[1] = (uint8_t)(value >> 8), p[2] = (uint8_t)(value >> 16), p[3] = (uint8_t)(value >> 24);
}

int gr_client_zrange_arrays(gr_client_t *client, const uint8_t *key, size_t key_length, int64_t start, int64_t stop,
                            int reverse, uint8_t **out_data, size_t *out_size, size_t *out_count,
                            gr_result_t *result) {
    memset(result, 0, sizeof *result);
    *out_data = NULL;
    *out_size = 0;
    *out_count = 0;
    if (gr_client_in_flight(client)) return GR_CLIENT_PROTOCOL;
    char start_text[24], stop_text[24];
    int start_length = snprintf(start_text, sizeof start_text, "%lld", (long long)start);
    int stop_length = snprintf(stop_text, sizeof stop_text, "%lld", (long long)stop);
    gr_bytes_t items[6] = {
        {(const uint8_t *)"ZRANGE", 6}, {key, (uint32_t)key_length},
        {(const uint8_t *)start_text, (uint32_t)start_length}, {(const uint8_t *)stop_text, (uint32_t)stop_length},
        {(const uint8_t *)"WITHSCORES", 10}, {(const uint8_t *)"REV", 3}};
    gr_request_t request;
    memset(&request, 0, sizeof request);
    request.template_id = GR_T_COMMAND;
    request.items = items;
    request.item_count = reverse ? 6 : 5;
    request.key = items[1];
    int status = gr_client_call(client, &request, result);
    if (status != GR_CLIENT_OK) return status;
    if (result->template_id == GR_T_ERROR_REPLY) return GR_CLIENT_OK;   /* the caller raises it */
    if (result->template_id != GR_T_ARRAY_REPLY) return GR_CLIENT_PROTOCOL;
    /* The leaves alternate member, score (flat, or as pairs: inner arrays are skipped). */
    size_t leaves = 0, member_bytes = 0;
    for (uint32_t i = 1; i < result->count; i++) {
        const gr_element_t *e = &result->elements[i];
        if (e->kind == GR_ELEMENT_KIND_ARRAY) continue;
        if (e->kind != GR_ELEMENT_KIND_BULK) return GR_CLIENT_PROTOCOL;
        if (leaves++ % 2 == 0) member_bytes += 5 + e->bytes.length;
    }
    if (result->is_nil) leaves = 0;
    if (leaves % 2 || leaves / 2 > INT32_MAX) return GR_CLIENT_PROTOCOL;
    size_t n = leaves / 2;
    size_t size = n * sizeof(double) + 5 + member_bytes;
    uint8_t *block = malloc(size);
    if (!block) return GR_CLIENT_NO_MEMORY;
    double *scores = (double *)block;
    uint8_t *list = block + n * sizeof(double);
    list[0] = '[';
    store_le32(list + 1, (uint32_t)n);
    uint8_t *at = list + 5;
    size_t leaf = 0;
    for (uint32_t i = 1; i < result->count && n; i++) {
        const gr_element_t *e = &result->elements[i];
        if (e->kind == GR_ELEMENT_KIND_ARRAY) continue;
        if (leaf % 2 == 0) {
            at[0] = 's';
            store_le32(at + 1, e->bytes.length);
            if (e->bytes.length) memcpy(at + 5, e->bytes.data, e->bytes.length);
            at += 5 + e->bytes.length;
        } else {
            scores[leaf / 2] = parse_score(e->bytes.data, e->bytes.length);
        }
        leaf++;
    }
    *out_data = block;
    *out_size = size;
    *out_count = n;
    return GR_CLIENT_OK;
}

void gr_client_batch_free(uint8_t *data) { free(data); }
