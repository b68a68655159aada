/* glob.h — Redis-style glob matching for KEYS, SCAN MATCH and CONFIG GET patterns.
 *
 * One function, no state. The implementation is glob.c; its callers are the command layer
 * (cmd_keys.c for KEYS and SCAN, cmd_server.c for CONFIG GET). The semantics are Redis's
 * stringmatchlen() (src/util.c), made binary safe and iterative:
 *
 *   *        any run of bytes, the empty run included
 *   ?        exactly one byte
 *   [abc]    one byte of the set;  [^abc] one byte not in it
 *   [a-z]    a range, either way round ([z-a] is [a-z]); bytes compare unsigned
 *   \x       the byte x literally, outside a class and inside one ([\]] is the set {]})
 *   other    itself; with nocase, ASCII letters compare case-insensitively (ranges too:
 *            both ends and the byte are lowercased, as Redis does)
 *
 * Redis's edges, kept: an unterminated class ("[abc") takes the rest of the pattern as its
 * set; a "\" that ends the pattern, or ends an unterminated class, is a literal backslash;
 * "[]" is the empty set (matches nothing, "[^]" matches any byte); "[a-]" followed by more
 * is a range from 'a' to the next byte.
 *
 * Cost: at most O(pattern_length * string_length) steps and no recursion. Like Redis, a
 * match that has to pass more than GR_GLOB_MAX_STARS '*' groups that are followed by more
 * pattern fails (Redis's nesting limit of 1000; its regression test "pattern matching very
 * long nested loops" expects KEYS of 50000 "*?" against 50000 "a" to return nothing).
 *
 * One deliberate difference: "*" (or "**", or any pattern of only stars) matches the empty
 * string. Redis 7's matcher returns no match there (redis/redis#15643, a bug report with a
 * fix pending); KEYS * and SCAN without MATCH are special-cased by both servers, so this is
 * only visible for an empty key with a pattern like "**" or "*" given through another path.
 */
#ifndef GR_GLOB_H
#define GR_GLOB_H

#include <stddef.h>
#include <stdint.h>

/* cffi-cdef-begin */
#define GR_GLOB_MAX_STARS 1000

/* Queries */
/* 1 when string matches pattern, 0 otherwise. Both are byte ranges (not NUL-terminated;
 * either pointer may be NULL when its length is 0). nocase: nonzero to fold ASCII case. */
int gr_glob_match(const uint8_t *pattern, size_t pattern_length,
                  const uint8_t *string, size_t string_length, int nocase);
/* cffi-cdef-end */

#endif
