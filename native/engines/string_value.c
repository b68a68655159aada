/* string_value.c — the string engine (string_value.h). */
#include "engines/string_value.h"

#include <string.h>

#include "core/alloc.h"
#include "core/number.h"

gr_string_t *gr_string_new(const uint8_t *data, size_t length) {
    if (length > GR_STRING_MAX_LENGTH) return NULL;
    gr_string_t *s = gr_mem_alloc(sizeof *s + length, GR_MEM_STRING);
    if (!s) return NULL;
    s->length = (uint32_t)length;
    if (length) memcpy(s->data, data, length);
    return s;
}

gr_string_t *gr_string_new_zeroed(size_t length) {
    if (length > GR_STRING_MAX_LENGTH) return NULL;
    gr_string_t *s = gr_mem_alloc(sizeof *s + length, GR_MEM_STRING);
    if (!s) return NULL;
    s->length = (uint32_t)length;
    memset(s->data, 0, length);
    return s;
}

void gr_string_free(gr_string_t *s) { gr_mem_free(s, GR_MEM_STRING); }

gr_string_t *gr_string_resize(gr_string_t *s, size_t new_length) {
    if (new_length > GR_STRING_MAX_LENGTH) return NULL;
    size_t room = gr_mem_usable(s) - sizeof *s;
    if (new_length > room) {
        size_t want = new_length < 1024 * 1024 ? new_length * 2 : new_length + 1024 * 1024;
        gr_string_t *grown = gr_mem_realloc(s, sizeof *s + want, GR_MEM_STRING);
        if (!grown) grown = gr_mem_realloc(s, sizeof *s + new_length, GR_MEM_STRING);
        if (!grown) return NULL;
        s = grown;
    }
    if (new_length > s->length) memset(s->data + s->length, 0, new_length - s->length);
    s->length = (uint32_t)new_length;
    return s;
}

size_t gr_string_allocated_bytes(const gr_string_t *s) { return gr_mem_usable(s); }

const char *gr_string_encoding(const gr_string_t *s) {
    int64_t ignored;
    if (s->length <= 20 && gr_bytes_to_int64(s->data, s->length, &ignored) == 0) return "int";
    return s->length <= 44 ? "embstr" : "raw";
}
