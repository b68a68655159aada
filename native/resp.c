/* resp.c — the RESP request parser; resp.h describes the two request forms, the lifetime
 * of a parsed command and the resume rule. The replies go out through resp_reply.c.
 *
 * Semantics follow Redis 7's processMultibulkBuffer / processInlineBuffer and sdssplitargs,
 * read for behaviour, not copied. Where this parser differs it is on purpose:
 *  - Lines are found with memchr over [buffer, buffer + length), so a NUL byte is data
 *    (Redis's strchr stops at it), and inline arguments may contain NUL.
 *  - "too big ..." is decided on the line itself: a line with no terminator within
 *    max_inline_length bytes is too big whether it arrived in one read or in many (Redis
 *    only checks when a read leaves the line unterminated).
 * As in Redis, the byte after a count line's '\r' and the two bytes after a bulk's data
 * are skipped without being checked, and a count <= 0 (*0, *-1, *-10) is skipped.
 */
#include "resp.h"

#include <string.h>

#include "alloc.h"

#define ARGV_INITIAL_CAPACITY 16
#define ARGV_PREALLOCATE_MAX 1024   /* trust a *<argc> header this far before bytes arrive */

gr_resp_limits_t gr_resp_limits_default(void) {
    gr_resp_limits_t limits = {GR_RESP_DEFAULT_MAX_BULK_LENGTH, GR_RESP_DEFAULT_MAX_MULTIBULK_LENGTH,
                               GR_RESP_DEFAULT_MAX_INLINE_LENGTH};
    return limits;
}

void gr_resp_parser_init(gr_resp_parser_t *parser, const gr_resp_limits_t *limits) {
    memset(parser, 0, sizeof *parser);
    parser->limits = limits ? *limits : gr_resp_limits_default();
    parser->pending_bulk_length = -1;
}

void gr_resp_parser_free(gr_resp_parser_t *parser) {
    gr_mem_free((void *)parser->command.argv, GR_MEM_SESSION);
    gr_mem_free(parser->command.argv_length, GR_MEM_SESSION);
    gr_mem_free(parser->argv_offset, GR_MEM_SESSION);
    gr_mem_free(parser->scratch, GR_MEM_SESSION);
    gr_resp_limits_t limits = parser->limits;
    gr_resp_parser_init(parser, &limits);
}

void gr_resp_parser_reset(gr_resp_parser_t *parser) {
    parser->pending_count = 0;
    parser->pending_parsed = 0;
    parser->pending_offset = 0;
    parser->pending_bulk_length = -1;
}

size_t gr_resp_parser_bytes_wanted(const gr_resp_parser_t *parser) {
    if (parser->pending_count == 0 || parser->pending_bulk_length < 0) return 0;
    return parser->pending_offset + (size_t)parser->pending_bulk_length + 2;
}

/* ---- helpers ---- */

/* Grow argv, argv_length and argv_offset together to hold at least `count` entries. */
static int ensure_argv_capacity(gr_resp_parser_t *parser, size_t count) {
    if (count <= parser->argv_capacity) return 0;
    size_t capacity = parser->argv_capacity ? parser->argv_capacity : ARGV_INITIAL_CAPACITY;
    while (capacity < count) capacity *= 2;
    const uint8_t **argv = gr_mem_realloc((void *)parser->command.argv, capacity * sizeof *argv, GR_MEM_SESSION);
    if (!argv) return -1;
    parser->command.argv = argv;
    size_t *lengths = gr_mem_realloc(parser->command.argv_length, capacity * sizeof *lengths, GR_MEM_SESSION);
    if (!lengths) return -1;
    parser->command.argv_length = lengths;
    size_t *offsets = gr_mem_realloc(parser->argv_offset, capacity * sizeof *offsets, GR_MEM_SESSION);
    if (!offsets) return -1;
    parser->argv_offset = offsets;
    parser->argv_capacity = capacity;   /* only once all three hold `capacity` */
    return 0;
}

/* Redis's string2ll rules: optional '-', digits, no leading zero (except "0" itself),
 * no '+', no blanks, at most 20 characters, no overflow. Returns 1 and sets *out, or 0. */
static int parse_strict_int64(const uint8_t *text, size_t length, int64_t *out) {
    if (length == 0 || length > 20) return 0;
    if (length == 1 && text[0] == '0') { *out = 0; return 1; }
    size_t i = 0;
    int negative = text[0] == '-';
    if (negative && ++i == length) return 0;
    if (text[i] < '1' || text[i] > '9') return 0;
    uint64_t value = 0;
    for (; i < length; i++) {
        unsigned digit = (unsigned)text[i] - '0';
        if (digit > 9) return 0;
        if (value > (UINT64_MAX - digit) / 10) return 0;
        value = value * 10 + digit;
    }
    if (negative) {
        if (value > (uint64_t)INT64_MAX + 1) return 0;
        *out = value == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)value;
    } else {
        if (value > (uint64_t)INT64_MAX) return 0;
        *out = (int64_t)value;
    }
    return 1;
}

/* Offset of the first '\r' in line[1, min(available, window)), or -1. The first byte is
 * the '*' or '$' and is never '\r' on the paths that matter; a short loop covers the usual
 * one-to-three-digit count before memchr's call overhead would pay off. */
static ptrdiff_t find_carriage_return(const uint8_t *line, size_t available, size_t window) {
    size_t limit = available < window ? available : window;
    size_t quick = limit < 24 ? limit : 24;
    for (size_t i = 1; i < quick; i++)
        if (line[i] == '\r') return (ptrdiff_t)i;
    if (quick >= limit) return -1;
    const uint8_t *cr = memchr(line + quick, '\r', limit - quick);
    return cr ? cr - line : -1;
}

static void remember_progress(gr_resp_parser_t *parser, size_t count, size_t parsed, size_t offset,
                              int64_t bulk_length) {
    parser->pending_count = count;
    parser->pending_parsed = parsed;
    parser->pending_offset = offset;
    parser->pending_bulk_length = bulk_length;
}

static gr_resp_parse_status_t protocol_error(gr_resp_parser_t *parser, const char *text, const char **error_text) {
    gr_resp_parser_reset(parser);
    *error_text = text;
    return GR_RESP_PROTOCOL_ERROR;
}

/* ---- multibulk ---- */

static gr_resp_parse_status_t parse_multibulk(gr_resp_parser_t *parser, const uint8_t *buffer, size_t length,
                                              size_t *consumed, const char **error_text) {
    const size_t window = (size_t)parser->limits.max_inline_length + 1;
    size_t count, parsed, offset;
    int64_t bulk_length;

    if (parser->pending_count) {
        count = parser->pending_count;
        parsed = parser->pending_parsed;
        offset = parser->pending_offset;
        bulk_length = parser->pending_bulk_length;
    } else {
        ptrdiff_t cr = find_carriage_return(buffer, length, window);
        if (cr < 0) {
            if (length > parser->limits.max_inline_length)
                return protocol_error(parser, "too big mbulk count string", error_text);
            return GR_RESP_INCOMPLETE;
        }
        if ((size_t)cr + 1 >= length) return GR_RESP_INCOMPLETE;   /* the '\n' is still to come */
        int64_t value;
        if (!parse_strict_int64(buffer + 1, (size_t)cr - 1, &value) ||
            value > (int64_t)parser->limits.max_multibulk_length)
            return protocol_error(parser, "invalid multibulk length", error_text);
        offset = (size_t)cr + 2;
        if (value <= 0) {
            *consumed = offset;
            return GR_RESP_EMPTY_LINE;
        }
        count = (size_t)value;
        parsed = 0;
        bulk_length = -1;
        if (ensure_argv_capacity(parser, count < ARGV_PREALLOCATE_MAX ? count : ARGV_PREALLOCATE_MAX) != 0)
            return GR_RESP_NO_MEMORY;
    }

    size_t *offsets = parser->argv_offset;
    size_t *lengths = parser->command.argv_length;
    while (parsed < count) {
        if (bulk_length < 0) {
            const uint8_t *line = buffer + offset;
            size_t available = length - offset;
            if (available == 0) goto incomplete;
            ptrdiff_t cr = find_carriage_return(line, available, window);
            if (cr < 0) {
                if (available > parser->limits.max_inline_length)
                    return protocol_error(parser, "too big bulk count string", error_text);
                goto incomplete;
            }
            if ((size_t)cr + 1 >= available) goto incomplete;
            if (line[0] != '$') {
                /* Redis formats the byte with %c; a NUL therefore ends its text there. */
                static const char prefix[] = "expected '$', got '";
                char *text = parser->error_text;
                memcpy(text, prefix, sizeof prefix - 1);
                text[sizeof prefix - 1] = (char)line[0];
                text[sizeof prefix] = '\'';
                text[sizeof prefix + 1] = '\0';
                return protocol_error(parser, text, error_text);
            }
            int64_t value;
            if (!parse_strict_int64(line + 1, (size_t)cr - 1, &value) || value < 0 ||
                (uint64_t)value > parser->limits.max_bulk_length)
                return protocol_error(parser, "invalid bulk length", error_text);
            offset += (size_t)cr + 2;
            bulk_length = value;
        }
        if ((uint64_t)(length - offset) < (uint64_t)bulk_length + 2) goto incomplete;
        if (parsed == parser->argv_capacity) {
            if (ensure_argv_capacity(parser, parsed + 1) != 0) {
                remember_progress(parser, count, parsed, offset, bulk_length);
                return GR_RESP_NO_MEMORY;
            }
            offsets = parser->argv_offset;
            lengths = parser->command.argv_length;
        }
        offsets[parsed] = offset;
        lengths[parsed] = (size_t)bulk_length;
        parsed++;
        offset += (size_t)bulk_length + 2;
        bulk_length = -1;
    }

    const uint8_t **argv = parser->command.argv;
    for (size_t i = 0; i < count; i++) argv[i] = buffer + offsets[i];
    parser->command.argc = count;
    parser->command.is_inline = 0;
    gr_resp_parser_reset(parser);
    *consumed = offset;
    return GR_RESP_COMMAND;

incomplete:
    remember_progress(parser, count, parsed, offset, bulk_length);
    return GR_RESP_INCOMPLETE;
}

/* ---- inline ---- */

/* isspace() in the C locale: what sdssplitargs skips between arguments. */
static int is_blank(uint8_t c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

static int hex_digit_value(uint8_t c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

typedef enum split_status { SPLIT_OK, SPLIT_UNBALANCED, SPLIT_NO_MEMORY } split_status_t;

/* sdssplitargs over line[0, length): arguments unescaped into scratch (which must hold
 * `length` bytes: unescaping never lengthens), argv pointing at them. */
static split_status_t split_inline_arguments(gr_resp_parser_t *parser, const uint8_t *line, size_t length,
                                             size_t *argc) {
    const uint8_t *p = line, *end = line + length;
    uint8_t *out = parser->scratch;
    size_t count = 0;
    for (;;) {
        while (p < end && is_blank(*p)) p++;
        if (p >= end) break;
        uint8_t *token = out;
        int in_double = 0, in_single = 0;
        for (;;) {
            if (in_double) {
                if (p >= end) return SPLIT_UNBALANCED;
                if (*p == '\\' && end - p >= 4 && p[1] == 'x' && hex_digit_value(p[2]) >= 0 &&
                    hex_digit_value(p[3]) >= 0) {
                    *out++ = (uint8_t)(hex_digit_value(p[2]) * 16 + hex_digit_value(p[3]));
                    p += 4;
                } else if (*p == '\\' && end - p >= 2) {
                    switch (p[1]) {
                    case 'n': *out++ = '\n'; break;
                    case 'r': *out++ = '\r'; break;
                    case 't': *out++ = '\t'; break;
                    case 'b': *out++ = '\b'; break;
                    case 'a': *out++ = '\a'; break;
                    default: *out++ = p[1]; break;
                    }
                    p += 2;
                } else if (*p == '"') {
                    if (end - p >= 2 && !is_blank(p[1])) return SPLIT_UNBALANCED;
                    p++;
                    break;
                } else {
                    *out++ = *p++;
                }
            } else if (in_single) {
                if (p >= end) return SPLIT_UNBALANCED;
                if (*p == '\\' && end - p >= 2 && p[1] == '\'') {
                    *out++ = '\'';
                    p += 2;
                } else if (*p == '\'') {
                    if (end - p >= 2 && !is_blank(p[1])) return SPLIT_UNBALANCED;
                    p++;
                    break;
                } else {
                    *out++ = *p++;
                }
            } else {
                if (p >= end) break;
                uint8_t c = *p++;
                /* Only these end an unquoted argument (sdssplitargs): \v and \f are data. */
                if (c == ' ' || c == '\n' || c == '\r' || c == '\t') break;
                if (c == '"') in_double = 1;
                else if (c == '\'') in_single = 1;
                else *out++ = c;
            }
        }
        if (count == parser->argv_capacity && ensure_argv_capacity(parser, count + 1) != 0)
            return SPLIT_NO_MEMORY;
        parser->command.argv[count] = token;
        parser->command.argv_length[count] = (size_t)(out - token);
        count++;
    }
    *argc = count;
    return SPLIT_OK;
}

static gr_resp_parse_status_t parse_inline(gr_resp_parser_t *parser, const uint8_t *buffer, size_t length,
                                           size_t *consumed, const char **error_text) {
    size_t max_line = parser->limits.max_inline_length;
    size_t window = length < max_line + 1 ? length : max_line + 1;
    const uint8_t *newline = memchr(buffer, '\n', window);
    if (!newline) {
        if (length > max_line) return protocol_error(parser, "too big inline request", error_text);
        return GR_RESP_INCOMPLETE;
    }
    size_t line_length = (size_t)(newline - buffer);
    size_t frame_length = line_length + 1;
    if (line_length > 0 && buffer[line_length - 1] == '\r') line_length--;
    if (line_length > parser->scratch_capacity) {
        size_t capacity = parser->scratch_capacity ? parser->scratch_capacity : 256;
        while (capacity < line_length) capacity *= 2;
        uint8_t *grown = gr_mem_realloc(parser->scratch, capacity, GR_MEM_SESSION);
        if (!grown) return GR_RESP_NO_MEMORY;
        parser->scratch = grown;
        parser->scratch_capacity = capacity;
    }
    size_t argc = 0;
    switch (split_inline_arguments(parser, buffer, line_length, &argc)) {
    case SPLIT_OK: break;
    case SPLIT_UNBALANCED: return protocol_error(parser, "unbalanced quotes in request", error_text);
    case SPLIT_NO_MEMORY: return GR_RESP_NO_MEMORY;
    }
    *consumed = frame_length;
    if (argc == 0) return GR_RESP_EMPTY_LINE;
    parser->command.argc = argc;
    parser->command.is_inline = 1;
    return GR_RESP_COMMAND;
}

/* ---- entry ---- */

gr_resp_parse_status_t gr_resp_parse(gr_resp_parser_t *parser, const uint8_t *buffer, size_t length,
                                     size_t *consumed, gr_resp_command_t **command,
                                     const char **error_text) {
    const char *ignored_error;
    if (!error_text) error_text = &ignored_error;
    *consumed = 0;
    *command = NULL;
    *error_text = NULL;
    if (length == 0) return GR_RESP_INCOMPLETE;
    /* A remembered frame must still be there: same first byte, at least as many bytes. */
    if (parser->pending_count && (buffer[0] != '*' || length < parser->pending_offset))
        gr_resp_parser_reset(parser);
    gr_resp_parse_status_t status = buffer[0] == '*' ? parse_multibulk(parser, buffer, length, consumed, error_text)
                                                     : parse_inline(parser, buffer, length, consumed, error_text);
    if (status == GR_RESP_COMMAND) *command = &parser->command;
    return status;
}
