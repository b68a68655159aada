/* glob.c — the glob matcher; its semantics and limits are documented in glob.h.
 *
 * Redis matches recursively: each '*' tries every split of the remaining string and, since
 * Redis 7, stops trying longer splits for earlier stars once a later star has failed from
 * every position ("skipLongerMatches"). That observation is what makes the classic
 * iterative matcher correct: only the most recent '*' ever needs to be retried, so it is
 * enough to remember one resume point (the pattern position after the latest star and the
 * string position it last started from). Every other token consumes exactly one byte.
 */
#include "core/glob.h"

static uint8_t ascii_lower(uint8_t c) { return (c >= 'A' && c <= 'Z') ? (uint8_t)(c + ('a' - 'A')) : c; }

static int same_byte(uint8_t a, uint8_t b, int nocase) {
    return a == b || (nocase && ascii_lower(a) == ascii_lower(b));
}

/* The class starting at pattern[*position] == '['. Advances *position past it (to the
 * pattern's end when the class is unterminated) and returns whether c is in it. */
static int match_class(const uint8_t *pattern, size_t length, size_t *position, uint8_t c, int nocase) {
    size_t p = *position + 1;
    int negate = 0, matched = 0;
    if (p < length && pattern[p] == '^') {
        negate = 1;
        p++;
    }
    while (p < length) {
        uint8_t b = pattern[p];
        if (b == '\\' && p + 1 < length) {          /* escaped member */
            if (same_byte(pattern[p + 1], c, nocase)) matched = 1;
            p += 2;
        } else if (b == ']') {
            p++;
            break;
        } else if (p + 2 < length && pattern[p + 1] == '-') {
            uint8_t low = b, high = pattern[p + 2], x = c;
            if (low > high) {
                uint8_t swap = low;
                low = high;
                high = swap;
            }
            if (nocase) {
                low = ascii_lower(low);
                high = ascii_lower(high);
                x = ascii_lower(x);
            }
            if (x >= low && x <= high) matched = 1;
            p += 3;
        } else {
            if (same_byte(b, c, nocase)) matched = 1;
            p++;
        }
    }
    *position = p;
    return negate ? !matched : matched;
}

/* One single-byte token (anything but '*') at pattern[*position] against c. Advances
 * *position past the token and returns whether it matched. */
static int match_token(const uint8_t *pattern, size_t length, size_t *position, uint8_t c, int nocase) {
    size_t p = *position;
    uint8_t token = pattern[p];
    if (token == '[') return match_class(pattern, length, position, c, nocase);
    if (token == '?') {
        *position = p + 1;
        return 1;
    }
    if (token == '\\' && p + 1 < length) {
        *position = p + 2;
        return same_byte(pattern[p + 1], c, nocase);
    }
    *position = p + 1;
    return same_byte(token, c, nocase);
}

int gr_glob_match(const uint8_t *pattern, size_t pattern_length,
                  const uint8_t *string, size_t string_length, int nocase) {
    size_t p = 0, s = 0;
    int have_star = 0;
    size_t resume_p = 0, resume_s = 0;   /* after the latest '*': where to retry from */
    unsigned stars = 0;
    while (s < string_length) {
        if (p < pattern_length && pattern[p] == '*') {
            while (p < pattern_length && pattern[p] == '*') p++;
            if (p == pattern_length) return 1;       /* a trailing star takes the rest */
            if (++stars > GR_GLOB_MAX_STARS) return 0;
            have_star = 1;
            resume_p = p;
            resume_s = s;
            continue;
        }
        if (p < pattern_length) {
            size_t next = p;
            if (match_token(pattern, pattern_length, &next, string[s], nocase)) {
                p = next;
                s++;
                continue;
            }
        }
        /* Mismatch, or pattern used up with string left: let the latest star take one
         * more byte. Earlier stars need no retry (see the file comment). */
        if (!have_star) return 0;
        p = resume_p;
        s = ++resume_s;
    }
    while (p < pattern_length && pattern[p] == '*') p++;
    return p == pattern_length;
}
