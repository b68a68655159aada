/* number.c — integer and double text conversions with Redis's rules (number.h). */
#include "core/number.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Redis's string2ll: optional '-', digits, no leading zeros or spaces, fits int64. */
int gr_bytes_to_int64(const uint8_t *data, size_t length, int64_t *out) {
    if (length == 0 || length > 20) return -1;
    size_t i = 0;
    int negative = 0;
    if (data[0] == '-') {
        negative = 1;
        i = 1;
        if (length == 1) return -1;
    }
    if (data[i] == '0' && (length - i > 1 || negative)) return -1;   /* "01" and "-0" are not integers */
    uint64_t value = 0;
    for (; i < length; i++) {
        if (data[i] < '0' || data[i] > '9') return -1;
        uint64_t digit = (uint64_t)(data[i] - '0');
        if (value > (UINT64_MAX - digit) / 10) return -1;
        value = value * 10 + digit;
    }
    if (negative) {
        if (value > (uint64_t)INT64_MAX + 1) return -1;
        *out = value == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)value;
    } else {
        if (value > (uint64_t)INT64_MAX) return -1;
        *out = (int64_t)value;
    }
    return 0;
}

size_t gr_int64_to_text(int64_t value, char *out) {
    char reversed[21];
    size_t n = 0;
    uint64_t magnitude = value < 0 ? (uint64_t)0 - (uint64_t)value : (uint64_t)value;
    do { reversed[n++] = (char)('0' + magnitude % 10); magnitude /= 10; } while (magnitude);
    size_t length = 0;
    if (value < 0) out[length++] = '-';
    while (n) out[length++] = reversed[--n];
    return length;
}

size_t gr_double_to_text(double value, char *out, size_t size) {
    /* Redis 7.0's addReplyDouble: "%.17g" (so 1.1 is 1.1000000000000001), inf written out
     * (libc's spelling differs between systems) */
    if (isinf(value)) return (size_t)snprintf(out, size, value > 0 ? "inf" : "-inf");
    if (isnan(value)) return (size_t)snprintf(out, size, "nan");
    int n = snprintf(out, size, "%.17g", value);
    return n < 0 ? 0 : (size_t)n;
}

int gr_parse_scan_cursor(const uint8_t *text, size_t length, uint64_t *cursor) {
    *cursor = 0;
    if (length == 0) return 0;
    if (text[0] == ' ' || (text[0] >= '\t' && text[0] <= '\r')) return -1;
    size_t i = 0;
    int negative = 0;
    if (text[0] == '+' || text[0] == '-') { negative = text[0] == '-'; i = 1; }
    if (i == length) return -1;
    uint64_t value = 0;
    for (; i < length; i++) {
        if (text[i] < '0' || text[i] > '9') return -1;
        uint64_t digit = (uint64_t)(text[i] - '0');
        if (value > (UINT64_MAX - digit) / 10) return -1;
        value = value * 10 + digit;
    }
    *cursor = negative ? (uint64_t)0 - value : value;
    return 0;
}

int gr_text_to_long_double(const uint8_t *data, size_t length, long double *out) {
    char buffer[GR_MAX_LONG_DOUBLE_CHARS + 1];
    if (length == 0 || length >= sizeof buffer) return -1;
    memcpy(buffer, data, length);
    buffer[length] = '\0';
    if (buffer[0] == ' ' || (buffer[0] >= '\t' && buffer[0] <= '\r')) return -1;
    char *end;
    errno = 0;
    long double value = strtold(buffer, &end);
    if ((size_t)(end - buffer) != length || isnan(value)) return -1;
    if (errno == ERANGE && (value == HUGE_VALL || value == -HUGE_VALL || fpclassify(value) == FP_ZERO)) return -1;
    *out = value;
    return 0;
}

size_t gr_long_double_to_text(long double value, char *out, size_t size) {
    int n = snprintf(out, size, "%.17Lf", value);
    if (n < 0 || (size_t)n >= size) return 0;
    size_t length = (size_t)n;
    if (memchr(out, '.', length)) {
        while (length && out[length - 1] == '0') length--;
        if (length && out[length - 1] == '.') length--;
    }
    if (length == 2 && out[0] == '-' && out[1] == '0') { out[0] = '0'; length = 1; }
    return length;
}
