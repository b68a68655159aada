/* array_engine.h — the ops table an array engine fills: the contract between the array value
 * (array.h / array.c, which the AR* commands call) and each engine behind it.
 *
 * An array maps unsigned 64-bit indexes 0 .. GR_ARRAY_INDEX_MAX (2^64-2) to byte strings. The
 * value the keyspace holds is array.h's gr_array_t: it keeps the engine's ops, the engine's own
 * pointer (`impl`), the append cursor, the count and the length, so an engine only stores
 * index -> bytes. Two engines exist:
 *   classic (array_classic.c, GR_ARRAY_ENGINE_CLASSIC, OBJECT ENCODING "sliced-array"): memory
 *     first, a directory of fixed-span slices, each sparse or dense by its fill;
 *   rt (array_rt.c, GR_ARRAY_ENGINE_RT): predictable mutations, bounded.
 * An engine registers its table with gr_array_register_engine (array.h), e.g. from a
 * constructor in its own .c, so array.c names no engine but classic.
 *
 * Rules every engine keeps:
 * - Indexes passed in are <= GR_ARRAY_INDEX_MAX; array.c validates them first.
 * - get hands out bytes valid until the next mutation of that array; an engine that stores a
 *   value encoded may decode it into the caller's scratch (GR_ARRAY_SCRATCH_BYTES) instead.
 * - set returns 1 (the slot was empty), 0 (overwritten), or a negative GR_ARRAY_E_* with the
 *   array unchanged (out of memory; RT: past a bound).
 * - Nothing here touches the keyspace, replies, or globals; allocation is through core/alloc
 *   under GR_MEM_ARRAY.
 */
#ifndef GR_ARRAY_ENGINE_H
#define GR_ARRAY_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "core/alloc.h"
#include "core/snapshot_io.h"

#define GR_MEM_ARRAY ((gr_mem_category_t)(GR_MEM_FIRST_FREE + 3))

/* The highest index a slot may have (Redis 8.8: 2^64-2; 2^64-1 is never a slot). */
#define GR_ARRAY_INDEX_MAX (UINT64_MAX - 1)

/* Engine kinds: saved with the array (DUMP, snapshots), named by --array-implementation. */
enum {
    GR_ARRAY_ENGINE_DEFAULT = 0,   /* "whatever the server makes new arrays with" (never stored) */
    GR_ARRAY_ENGINE_CLASSIC = 1,
    GR_ARRAY_ENGINE_RT = 2,
    GR_ARRAY_ENGINE_SLOTS = 8
};

/* Why a mutation failed (returned negative; the array is unchanged). */
enum {
    GR_ARRAY_E_NOMEM = -1,         /* out of memory */
    GR_ARRAY_E_BOUND = -2,         /* past the engine's bound (RT: reserved index, value bytes) */
    GR_ARRAY_E_UNSUPPORTED = -3,   /* the engine has no such operation (classic's reserve) */
};

#define GR_ARRAY_SCRATCH_BYTES 32

/* One ARINFO field an engine reports after count, len and next-insert-index: an integer, or
 * (is_double) a double. */
typedef struct gr_array_info_field {
    const char *name;
    uint64_t integer;
    double real;
    int is_double;
} gr_array_info_field_t;
#define GR_ARRAY_INFO_FIELDS_MAX 16

typedef struct gr_array_engine {
    uint8_t kind;                  /* GR_ARRAY_ENGINE_* */
    const char *name;              /* "classic", "rt": --array-implementation, ARINFO's engine */

    /* Lifecycle */
    void *(*create)(void);                         /* an empty engine value, or NULL (OOM) */
    void (*free)(void *impl);
    void *(*duplicate)(const void *impl);          /* an equal, independent copy, or NULL (OOM) */

    /* Access */
    int (*set)(void *impl, uint64_t index, const uint8_t *data, size_t length);   /* 1 new, 0 overwrite, <0 */
    /* 1 with *data / *length set (possibly into scratch), 0 for a hole. */
    int (*get)(const void *impl, uint64_t index, const uint8_t **data, size_t *length,
               uint8_t scratch[GR_ARRAY_SCRATCH_BYTES]);
    int (*remove)(void *impl, uint64_t index);     /* 1 removed, 0 it was a hole */
    /* Remove every set slot in [lo, hi] (lo <= hi): how many. Cost follows the set slots and
     * slices touched, never the span. */
    uint64_t (*remove_range)(void *impl, uint64_t lo, uint64_t hi);

    /* Queries */
    /* 1 with *found = the lowest set index >= index, or 0 when none. */
    int (*next_at_or_after)(const void *impl, uint64_t index, uint64_t *found);
    /* 1 with *found = the highest set index < index, or 0 when none (index 0: none). */
    int (*last_before)(const void *impl, uint64_t index, uint64_t *found);
    uint64_t (*count)(const void *impl);           /* set slots */
    size_t (*allocated_bytes)(const void *impl);   /* everything impl holds (not gr_array_t) */
    const char *(*encoding)(const void *impl);     /* OBJECT ENCODING */
    /* ARINFO's engine fields (full: ARINFO ... FULL): fills up to GR_ARRAY_INFO_FIELDS_MAX,
     * returns how many. */
    size_t (*info)(const void *impl, int full, gr_array_info_field_t *fields);

    /* Snapshots: the engine's body after array.c's header (kind, cursor). save: 0, or -1 when the
     * writer ran out of memory. load: an engine value equal to what was saved, or NULL with the
     * reader's error set (or none: out of memory). gr_array_save_entries / gr_array_load_entries
     * (array.h) are a body any engine may use: the set slots as (index delta, bytes). */
    int (*save)(const void *impl, gr_snapshot_writer_t *out);
    void *(*load)(gr_snapshot_reader_t *in);

    /* Bulk: allocate (and prefault; lock when asked) room for every index <= max_index and
     * value_bytes of values up front; afterwards a write past either bound fails with
     * GR_ARRAY_E_BOUND. 0, or a negative GR_ARRAY_E_*. NULL: the engine cannot (classic). */
    int (*reserve)(void *impl, uint64_t max_index, uint64_t value_bytes, int lock);

    /* Whether a command's n writes, in order, would all pass the engine's bounds, changing
     * nothing: write_at(context, i, &index, &length) names write i. 0, or GR_ARRAY_E_BOUND (a
     * multi-value write then fails whole, before its first set). NULL: the engine has no bound. */
    int (*check_writes)(const void *impl, size_t n,
                        void (*write_at)(void *context, size_t i, uint64_t *index, size_t *length), void *context);
    /* 1 when an empty value stays a key (an RT reservation, made empty by GOBLIN.RT.ARRESERVE or
     * emptied by deletes, keeps its memory and its key); NULL or 0: an emptied array's key is
     * deleted, Redis's rule. */
    int (*keeps_empty)(const void *impl);
} gr_array_engine_t;

#endif
