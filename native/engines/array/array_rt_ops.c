/* array_rt_ops.c — the RT engine (array_rt.[ch]) behind the array ops table (array_engine.h):
 * the adapter array.c calls, registered from a constructor so that array.c names no engine
 * but classic. Kept apart from array_rt.c so the engine still builds and tests with core/ only.
 */
#include <errno.h>
#include <string.h>

#include "engines/array/array.h"
#include "engines/array/array_engine.h"
#include "engines/array/array_rt.h"

static int rt_error(int status) {
    switch (status) {
    case GR_ART_OOM: return GR_ARRAY_E_NOMEM;
    case GR_ART_LOCK_FAILED: return GR_ART_E_LOCK;
    default: return GR_ARRAY_E_BOUND;
    }
}

static void *rt_create(void) { return gr_art_new(GR_MEM_ARRAY); }
static void rt_free(void *impl) { gr_art_free(impl); }
static void *rt_duplicate(const void *impl) { return gr_art_duplicate(impl); }

static int rt_set(void *impl, uint64_t index, const uint8_t *data, size_t length) {
    int created = 0;
    const int status = gr_art_set(impl, index, data, length, &created);
    return status == GR_ART_OK ? created : rt_error(status);
}

static int rt_get(const void *impl, uint64_t index, const uint8_t **data, size_t *length,
                  uint8_t scratch[GR_ARRAY_SCRATCH_BYTES]) {
    (void)scratch;
    return gr_art_get(impl, index, data, length);
}

static int rt_remove(void *impl, uint64_t index) { return gr_art_delete(impl, index); }

static uint64_t rt_remove_range(void *impl, uint64_t lo, uint64_t hi) { return gr_art_delete_range(impl, lo, hi); }

static int rt_next(const void *impl, uint64_t index, uint64_t *found) { return gr_art_next(impl, index, found); }

static int rt_last_before(const void *impl, uint64_t index, uint64_t *found) {
    return index == 0 ? 0 : gr_art_prev(impl, index - 1, found);
}

static uint64_t rt_count(const void *impl) { return gr_art_count(impl); }
static size_t rt_allocated(const void *impl) { return gr_art_allocated_bytes(impl); }
static const char *rt_encoding(const void *impl) { return gr_art_is_reserved(impl) ? "rt-reserved" : "rt"; }

static size_t rt_info(const void *impl, int full, gr_array_info_field_t *fields) {
    (void)full;
    gr_art_stats_t st;
    gr_art_stats(impl, &st);
    const int64_t vmlck = gr_art_process_locked_bytes();
    const struct { const char *name; uint64_t value; } rows[] = {
        {"rt-reserved", st.reserved},
        {"rt-max-index", st.max_index},
        {"rt-directory-levels", st.levels},
        {"rt-leaves", st.leaves},
        {"rt-nodes", st.nodes},
        {"rt-reserved-bytes", st.reserved_bytes},
        {"rt-value-budget-bytes", st.arena_capacity},
        {"rt-used-bytes", st.arena_in_use},
        {"rt-locked-bytes", st.locked_bytes},
        {"rt-allocated-bytes", st.allocated_bytes},
        {"vmlck-bytes", vmlck < 0 ? 0 : (uint64_t)vmlck},
    };
    const size_t n = sizeof rows / sizeof rows[0];
    for (size_t i = 0; i < n && i < GR_ARRAY_INFO_FIELDS_MAX; i++) {
        memset(&fields[i], 0, sizeof fields[i]);
        fields[i].name = rows[i].name;
        fields[i].integer = rows[i].value;
    }
    return n < GR_ARRAY_INFO_FIELDS_MAX ? n : GR_ARRAY_INFO_FIELDS_MAX;
}

static int rt_save(const void *impl, gr_snapshot_writer_t *out) { return gr_art_save(impl, out); }
static void *rt_load(gr_snapshot_reader_t *in) { return gr_art_load(GR_MEM_ARRAY, in); }

static int rt_reserve(void *impl, uint64_t max_index, uint64_t value_bytes, int lock) {
    const int status = gr_art_reserve_into(impl, max_index, value_bytes, lock);
    return status == GR_ART_OK ? 0 : rt_error(status);
}

static int rt_check_writes(const void *impl, size_t n,
                           void (*write_at)(void *context, size_t i, uint64_t *index, size_t *length), void *context) {
    const int status = gr_art_check_writes_by(impl, n, write_at, context);
    return status == GR_ART_OK ? 0 : rt_error(status);
}

static int rt_keeps_empty(const void *impl) { return gr_art_is_reserved(impl); }

const gr_array_engine_t gr_array_rt_engine = {
    .kind = GR_ARRAY_ENGINE_RT,
    .name = "rt",
    .create = rt_create,
    .free = rt_free,
    .duplicate = rt_duplicate,
    .set = rt_set,
    .get = rt_get,
    .remove = rt_remove,
    .remove_range = rt_remove_range,
    .next_at_or_after = rt_next,
    .last_before = rt_last_before,
    .count = rt_count,
    .allocated_bytes = rt_allocated,
    .encoding = rt_encoding,
    .info = rt_info,
    .save = rt_save,
    .load = rt_load,
    .reserve = rt_reserve,
    .check_writes = rt_check_writes,
    .keeps_empty = rt_keeps_empty,
};

__attribute__((constructor)) static void register_rt_engine(void) { gr_array_register_engine(&gr_array_rt_engine); }
