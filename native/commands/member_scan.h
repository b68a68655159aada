/* member_scan.h — what HSCAN, SSCAN and ZSCAN share (cmd_hash.c, cmd_set.c, cmd_zset.c): their
 * options, the batch their engine's scan visits fill, and the reply's head. The engines' scans
 * (gr_hash_scan, gr_set_scan, gr_zset_scan) walk; these helpers only parse and collect.
 *
 *   gr_member_scan_t:  options  COUNT (10 by default), MATCH pattern (NULL: no filter; "*" is
 *                      none, as in Redis), NOVALUES (HSCAN only)
 *                      batch    entries[count] of entry_size bytes each, grown by doubling
 *                               from 64 in the allocator's GR_MEM_OTHER account; failed on OOM
 */
#ifndef GR_MEMBER_SCAN_H
#define GR_MEMBER_SCAN_H

#include <stddef.h>
#include <stdint.h>

#include "exec/db.h"

typedef struct gr_member_scan {
    int64_t count;
    const uint8_t *pattern;
    size_t pattern_length;
    int novalues;
    void *entries;
    size_t entry_size, entry_count, capacity;
    int failed;
} gr_member_scan_t;

/* Lifecycle */

/* A scan of entries of entry_size bytes with the options from argv[first] on: [MATCH pattern]
 * [COUNT count], and [NOVALUES] when allow_novalues. 0, or -1 with the error replied (Redis's
 * texts: a bad COUNT is "not an integer", one below 1 and an unknown option "syntax error"). */
int gr_member_scan_start_or_reply(gr_member_scan_t *scan, size_t entry_size, size_t argc, const uint8_t *const *argv,
                                  const size_t *argv_length, size_t first, int allow_novalues, gr_reply_t *reply);
void gr_member_scan_free(gr_member_scan_t *scan);

/* Access */

/* Whether MATCH (if given) takes a visited entry named name: Redis's stringmatchlen, so an
 * empty pattern takes only an empty name. */
int gr_member_scan_matches(const gr_member_scan_t *scan, const uint8_t *name, size_t name_length);
/* The slot to copy a visited entry named name into, or NULL when MATCH skips it or memory ran
 * out (then failed is set and every later visit is skipped too). */
void *gr_member_scan_slot(gr_member_scan_t *scan, const uint8_t *name, size_t name_length);

/* Replies */

/* A missing key's answer: cursor "0" and no entries. */
void gr_member_scan_reply_empty(gr_reply_t *reply);
/* The reply's head: the next cursor as unsigned decimal text, then an array of n elements the
 * caller writes. */
void gr_member_scan_reply_begin(gr_reply_t *reply, uint64_t next, size_t n);

#endif
