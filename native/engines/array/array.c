/* array.c — the engine-neutral ARRAY value (array.h): the engine registry, the cursor, count
 * and length kept beside the engine's value, range visits, and the snapshot header. The
 * engines are array_classic.c (built in here) and array_rt.c (registers itself); the commands
 * are commands/cmd_array.c.
 */
#include "engines/array/array.h"

#include <string.h>
#include <strings.h>

#include "engines/array/array_classic.h"

/* ---- the engine registry ---- */

static const gr_array_engine_t *engines[GR_ARRAY_ENGINE_SLOTS];

static void install_classic(void) {
    if (!engines[GR_ARRAY_ENGINE_CLASSIC]) engines[GR_ARRAY_ENGINE_CLASSIC] = &gr_array_classic_engine;
}

int gr_array_register_engine(const gr_array_engine_t *engine) {
    install_classic();
    if (!engine || engine->kind == GR_ARRAY_ENGINE_DEFAULT || engine->kind >= GR_ARRAY_ENGINE_SLOTS) return -1;
    if (engines[engine->kind]) return engines[engine->kind] == engine ? 0 : -1;
    engines[engine->kind] = engine;
    return 0;
}

const gr_array_engine_t *gr_array_engine_of_kind(uint8_t kind) {
    install_classic();
    return kind < GR_ARRAY_ENGINE_SLOTS ? engines[kind] : NULL;
}

const gr_array_engine_t *gr_array_engine_named(const char *name, size_t length) {
    install_classic();
    for (size_t i = 0; i < GR_ARRAY_ENGINE_SLOTS; i++)
        if (engines[i] && strlen(engines[i]->name) == length && strncasecmp(engines[i]->name, name, length) == 0)
            return engines[i];
    return NULL;
}

/* ---- lifecycle ---- */

static gr_array_t *wrap(const gr_array_engine_t *engine, void *impl) {
    gr_array_t *array = gr_mem_alloc(sizeof *array, GR_MEM_ARRAY);
    if (!array) {
        engine->free(impl);
        return NULL;
    }
    array->engine = engine;
    array->impl = impl;
    array->cursor = GR_ARRAY_CURSOR_NONE;
    array->count = engine->count(impl);
    array->length = 0;
    uint64_t last;
    if (array->count && engine->last_before(impl, UINT64_MAX, &last)) array->length = last + 1;
    return array;
}

gr_array_t *gr_array_new(uint8_t kind) {
    const gr_array_engine_t *engine = gr_array_engine_of_kind(kind == GR_ARRAY_ENGINE_DEFAULT ? GR_ARRAY_ENGINE_CLASSIC : kind);
    if (!engine) return NULL;
    void *impl = engine->create();
    return impl ? wrap(engine, impl) : NULL;
}

void gr_array_free(gr_array_t *array) {
    if (!array) return;
    array->engine->free(array->impl);
    gr_mem_free(array, GR_MEM_ARRAY);
}

gr_array_t *gr_array_duplicate(const gr_array_t *array) {
    void *impl = array->engine->duplicate(array->impl);
    if (!impl) return NULL;
    gr_array_t *copy = wrap(array->engine, impl);
    if (copy) copy->cursor = array->cursor;
    return copy;
}

/* ---- access ---- */

int gr_array_set(gr_array_t *array, uint64_t index, const uint8_t *data, size_t length) {
    int result = array->engine->set(array->impl, index, data, length);
    if (result == 1) {
        array->count++;
        if (index >= array->length) array->length = index + 1;
    }
    return result;
}

int gr_array_get(const gr_array_t *array, uint64_t index, const uint8_t **data, size_t *length,
                 uint8_t scratch[GR_ARRAY_SCRATCH_BYTES]) {
    if (index >= array->length) return 0;
    return array->engine->get(array->impl, index, data, length, scratch);
}

/* After removals at or below the old highest index: the new length. */
static void refresh_length(gr_array_t *array) {
    uint64_t last;
    if (array->count == 0) array->length = 0;
    else if (array->engine->last_before(array->impl, array->length, &last)) array->length = last + 1;
    else array->length = 0;
}

int gr_array_delete(gr_array_t *array, uint64_t index) {
    if (index >= array->length) return 0;
    int removed = array->engine->remove(array->impl, index);
    if (removed == 1) {
        array->count--;
        if (index + 1 == array->length) refresh_length(array);
    }
    return removed;
}

uint64_t gr_array_delete_range(gr_array_t *array, uint64_t lo, uint64_t hi) {
    if (lo >= array->length || array->count == 0) return 0;
    if (hi >= array->length) hi = array->length - 1;
    uint64_t removed = array->engine->remove_range(array->impl, lo, hi);
    if (removed) {
        array->count -= removed;
        if (hi + 1 == array->length) refresh_length(array);
    }
    return removed;
}

/* ---- queries ---- */

int gr_array_next_at_or_after(const gr_array_t *array, uint64_t index, uint64_t *found) {
    if (index >= array->length) return 0;
    return array->engine->next_at_or_after(array->impl, index, found);
}

int gr_array_last_before(const gr_array_t *array, uint64_t index, uint64_t *found) {
    if (array->count == 0 || index == 0) return 0;
    if (index > array->length) index = array->length;
    return array->engine->last_before(array->impl, index, found);
}

size_t gr_array_allocated_bytes(const gr_array_t *array) {
    return gr_mem_usable(array) + array->engine->allocated_bytes(array->impl);
}

const char *gr_array_encoding_name(const gr_array_t *array) { return array->engine->encoding(array->impl); }

uint64_t gr_array_visit(const gr_array_t *array, uint64_t lo, uint64_t hi, int reverse,
                        gr_array_visit_t visit, void *context) {
    uint64_t visited = 0, index;
    uint8_t scratch[GR_ARRAY_SCRATCH_BYTES];
    const uint8_t *data;
    size_t length;
    if (array->count == 0 || lo >= array->length) return 0;
    if (hi >= array->length) hi = array->length - 1;
    if (!reverse) {
        uint64_t at = lo;
        while (array->engine->next_at_or_after(array->impl, at, &index) && index <= hi) {
            array->engine->get(array->impl, index, &data, &length, scratch);
            visited++;
            if (visit(context, index, data, length) || index == hi) break;
            at = index + 1;
        }
    } else {
        uint64_t before = hi + 1;   /* hi <= 2^64-2 */
        while (array->engine->last_before(array->impl, before, &index) && index >= lo) {
            array->engine->get(array->impl, index, &data, &length, scratch);
            visited++;
            if (visit(context, index, data, length) || index == lo) break;
            before = index;
        }
    }
    return visited;
}

/* ---- bulk ---- */

int gr_array_reserve(gr_array_t *array, uint64_t max_index, uint64_t value_bytes, int lock) {
    if (!array->engine->reserve) return GR_ARRAY_E_UNSUPPORTED;
    return array->engine->reserve(array->impl, max_index, value_bytes, lock);
}

int gr_array_check_writes(const gr_array_t *array, size_t n, gr_array_write_at_t write_at, void *context) {
    if (!array->engine->check_writes) return 0;
    return array->engine->check_writes(array->impl, n, write_at, context);
}

int gr_array_keeps_empty(const gr_array_t *array) {
    return array->engine->keeps_empty && array->engine->keeps_empty(array->impl);
}

/* ---- snapshots ---- */

int gr_array_save(const gr_array_t *array, gr_snapshot_writer_t *out) {
    gr_snapshot_write_u8(out, array->engine->kind);
    gr_snapshot_write_varint(out, array->cursor == GR_ARRAY_CURSOR_NONE ? 0 : array->cursor + 1);
    if (array->engine->save(array->impl, out) != 0) return -1;
    return out->oom ? -1 : 0;
}

gr_array_t *gr_array_load(gr_snapshot_reader_t *in) {
    uint8_t kind;
    uint64_t cursor;
    if (gr_snapshot_read_u8(in, &kind) != 0 || gr_snapshot_read_varint(in, &cursor) != 0) return NULL;
    const gr_array_engine_t *engine = gr_array_engine_of_kind(kind);
    if (!engine || kind == GR_ARRAY_ENGINE_DEFAULT) {
        gr_snapshot_reader_fail(in, "array engine not available");
        return NULL;
    }
    void *impl = engine->load(in);
    if (!impl) return NULL;
    if (engine->count(impl) == 0 && !(engine->keeps_empty && engine->keeps_empty(impl))) {
        engine->free(impl);
        gr_snapshot_reader_fail(in, "empty array");
        return NULL;
    }
    gr_array_t *array = wrap(engine, impl);
    if (array) array->cursor = cursor == 0 ? GR_ARRAY_CURSOR_NONE : cursor - 1;
    return array;
}

int gr_array_save_entries(const gr_array_engine_t *engine, const void *impl, gr_snapshot_writer_t *out) {
    uint64_t count = engine->count(impl), previous = 0, index, at = 0;
    uint8_t scratch[GR_ARRAY_SCRATCH_BYTES];
    const uint8_t *data;
    size_t length;
    gr_snapshot_write_varint(out, count);
    int first = 1;
    while (count && engine->next_at_or_after(impl, at, &index)) {
        engine->get(impl, index, &data, &length, scratch);
        gr_snapshot_write_varint(out, first ? index : index - previous);
        if (gr_snapshot_write_bytes(out, data, length) != 0) return -1;
        first = 0;
        previous = index;
        if (index == GR_ARRAY_INDEX_MAX) break;
        at = index + 1;
    }
    return out->oom ? -1 : 0;
}

void *gr_array_load_entries(const gr_array_engine_t *engine, gr_snapshot_reader_t *in) {
    uint64_t count;
    if (gr_snapshot_read_count(in, 2, &count) != 0) return NULL;   /* a slot is >= 2 bytes */
    void *impl = engine->create();
    if (!impl) return NULL;
    uint64_t index = 0;
    for (uint64_t i = 0; i < count; i++) {
        uint64_t delta;
        const uint8_t *data;
        size_t length;
        if (gr_snapshot_read_varint(in, &delta) != 0 || gr_snapshot_read_bytes(in, &data, &length) != 0) goto fail;
        if (i > 0 && delta == 0) { gr_snapshot_reader_fail(in, "repeated array index"); goto fail; }
        if (delta > GR_ARRAY_INDEX_MAX - index) { gr_snapshot_reader_fail(in, "array index out of range"); goto fail; }
        index += delta;
        int result = engine->set(impl, index, data, length);
        if (result != 1) {
            if (result == 0) gr_snapshot_reader_fail(in, "repeated array index");
            goto fail;
        }
    }
    return impl;
fail:
    engine->free(impl);
    return NULL;
}
