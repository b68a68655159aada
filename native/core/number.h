/* number.h — text <-> number helpers with Redis's rules, shared by the engines (OBJECT
 * ENCODING "int"), the command layer and both transports. No state, no allocation. */
#ifndef GR_NUMBER_H
#define GR_NUMBER_H

#include <stddef.h>
#include <stdint.h>

/* Redis's string2ll: optional '-', digits, no leading zeros or spaces, fits int64.
 * 0 and *out set, or -1. */
int gr_bytes_to_int64(const uint8_t *data, size_t length, int64_t *out);
size_t gr_int64_to_text(int64_t value, char *out);  /* out >= 21 bytes; returns length */
size_t gr_double_to_text(double value, char *out, size_t size);  /* Redis 7.0's reply text: %.17g, inf, -inf */
/* INCRBYFLOAT / HINCRBYFLOAT's long doubles. Redis's string2ld: the whole text is one long
 * double, no leading space, not NaN, under GR_MAX_LONG_DOUBLE_CHARS; 0 and *out set, or -1.
 * Redis's ld2string in LD_STR_HUMAN mode: %.17Lf without trailing zeros ("-0" as "0"); the
 * length, or 0 when it does not fit in size. */
#define GR_MAX_LONG_DOUBLE_CHARS (5 * 1024)
int gr_text_to_long_double(const uint8_t *data, size_t length, long double *out);
size_t gr_long_double_to_text(long double value, char *out, size_t size);
/* A SSCAN/HSCAN/ZSCAN cursor as Redis's parseScanCursorOrReply reads it (strtoul): an optional
 * sign, a negative one wrapping modulo 2^64, the empty string reading as 0; a leading space,
 * trailing bytes and overflow are refused. 0 and *cursor set, or -1. */
int gr_parse_scan_cursor(const uint8_t *text, size_t length, uint64_t *cursor);

#endif
