/* server_text.c — the shared text helpers of the admin commands (server_text.h). */
#include "exec/server_text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/db.h"

int gr_text_init(gr_text_t *text, size_t capacity) {
    text->data = malloc(capacity);
    text->length = 0;
    text->capacity = capacity;
    text->failed = text->data == NULL;
    return text->failed ? -1 : 0;
}

void gr_text_append(gr_text_t *text, const char *format, ...) {
    if (text->failed) return;
    for (;;) {
        size_t room = text->capacity - text->length;
        va_list args;
        va_start(args, format);
        int n = vsnprintf(text->data + text->length, room, format, args);
        va_end(args);
        if (n < 0) { text->failed = 1; return; }
        if ((size_t)n < room) { text->length += (size_t)n; return; }
        size_t capacity = text->capacity * 2 + (size_t)n;
        char *grown = realloc(text->data, capacity);
        if (!grown) { text->failed = 1; return; }
        text->data = grown;
        text->capacity = capacity;
    }
}

void gr_text_free(gr_text_t *text) {
    free(text->data);
    text->data = NULL;
    text->length = text->capacity = 0;
}

void gr_reply_help(gr_reply_t *reply, const char *const *lines, size_t count) {
    gr_reply_array_begin(reply, count);
    for (size_t i = 0; i < count; i++) gr_reply_status(reply, lines[i], strlen(lines[i]));
}

void gr_reply_unknown_subcommand(gr_reply_t *reply, const uint8_t *sub, size_t length, const char *command) {
    char text[256];
    snprintf(text, sizeof text, "ERR unknown subcommand '%.*s'. Try %s HELP.", (int)(length > 64 ? 64 : length),
             (const char *)sub, command);
    for (char *c = text; *c; c++) if (*c == '\r' || *c == '\n') *c = ' ';
    gr_reply_error_text(reply, GR_ERR_GENERIC, text);
}

void gr_reply_subcommand_arity_error(gr_reply_t *reply, const char *command, const uint8_t *sub, size_t length) {
    char name[96];
    snprintf(name, sizeof name, "%s|%.*s", command, (int)(length > 32 ? 32 : length), (const char *)sub);
    for (char *c = name; *c; c++) *c = (char)((*c >= 'A' && *c <= 'Z') ? *c + 32 : *c);
    gr_reply_arity_error(reply, name);
}
