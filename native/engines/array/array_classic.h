/* array_classic.h — the classic array engine (the default; OBJECT ENCODING "sliced-array"): memory
 * first. Its ops table plugs into array.h's value; array_classic.c is the code.
 *
 * Layout. The index space is cut into slices of GR_ARC_SLICE_SPAN (1024) consecutive indexes;
 * only slices holding a set slot exist. The directory is one sorted, growable vector of slice
 * records (binary search by slice id = index >> 10, with a last-hit hint so sequential access
 * is O(1)), so any index up to 2^64-2 works without allocating the gaps between slices.
 *
 *   directory: [ slice id 0 | slice id 1 | slice id 7 | ... | slice id 2^54-1 ]   (sorted)
 *                     |
 *   slice record: id | index* | blob* | count | cap | used | room | dead | dense
 *
 *   sparse slice (count <= 512): index = cap x u32 entries, sorted: (slot offset << 16) | blob pos
 *   dense slice  (more):          index = u64 bitmap[16] (slot set?) + u16 pos[1024] (blob pos)
 *   blob (both):  packed values, each  [len u8][len bytes]      len <= GR_ARC_INLINE_MAX (62)
 *                                   or  [0xFF][8-byte pointer]  -> heap block {u64 length, bytes}
 *
 * A sparse slice turns dense when it passes GR_ARC_SPARSE_MAX set slots and back to sparse
 * when a dense one falls below GR_ARC_DENSE_MIN (hysteresis, so a slot toggling at the border
 * does not convert every time). Overwritten and deleted values leave dead bytes in the blob;
 * it is compacted in place when they pass half of it or when it would outgrow 64 KiB (a blob
 * position is 16 bits: at most 1024 x 63 live bytes). Per value of 16 bytes: 17 blob bytes +
 * 4 (sparse entry) or ~2.1 (dense slot) + blob slack.
 */
#ifndef GR_ARRAY_CLASSIC_H
#define GR_ARRAY_CLASSIC_H

#include "engines/array/array_engine.h"

#define GR_ARC_SLICE_BITS 10
#define GR_ARC_SLICE_SPAN (1u << GR_ARC_SLICE_BITS)
#define GR_ARC_INLINE_MAX 62
#define GR_ARC_SPARSE_MAX 512   /* a sparse slice with more set slots turns dense */
#define GR_ARC_DENSE_MIN 256    /* a dense slice with fewer turns sparse */

/* The ops table (kind GR_ARRAY_ENGINE_CLASSIC, name "classic"). */
extern const gr_array_engine_t gr_array_classic_engine;

/* Introspection for tests: set slots held by sparse / dense slices, and slice counts. */
typedef struct gr_arc_stats {
    uint64_t slices, sparse_slices, dense_slices;
    uint64_t directory_capacity;
    uint64_t blob_bytes, dead_bytes, heap_values;
} gr_arc_stats_t;
void gr_arc_stats(const void *impl, gr_arc_stats_t *stats);
/* Check every invariant (sorted directory, counts, bitmap vs pos, blob bounds): 0, or -1. */
int gr_arc_check(const void *impl);

#endif
