/* stream_save.c — the stream engine's snapshot body (the bytes DUMP carries and snapshot files
 * hold, in core/snapshot_io.h's encoding) and COPY's duplicate. The entries are stream.c, the
 * groups stream_group.c; exec/value_type.c's stream row calls these.
 *
 * Body (every number a varint unless said):
 *   version (u8, 1)
 *   last_id ms, seq; entries_added; max_deleted_entry_id ms, seq
 *   entry count, then each live entry, oldest first:
 *     ms delta from the previous entry (the first: from 0), seq (the previous seq + 1 + this
 *     when the ms is the same, else the seq itself), (pairs << 1) | same fields as the previous
 *     entry, then the fields unless same (length-prefixed bytes), then the values
 *   group count, then each group: name (bytes), last_id ms, seq, entries_read + 1 (0: unknown),
 *     consumer count, then each consumer: name (bytes), seen time (u64 of the int64), its
 *     pending count, then each NACK: ID ms, seq, delivery time (u64 of the int64), count
 * Tombstones are not saved: a loaded stream packs its live entries into fresh nodes.
 */
#include "engines/stream/stream.h"

#include <string.h>

#define SAVE_VERSION 1

static void write_id(gr_snapshot_writer_t *out, const gr_stream_id_t *id) {
    gr_snapshot_write_varint(out, id->ms);
    gr_snapshot_write_varint(out, id->seq);
}

static int read_id(gr_snapshot_reader_t *in, gr_stream_id_t *id) {
    return gr_snapshot_read_varint(in, &id->ms) || gr_snapshot_read_varint(in, &id->seq) ? -1 : 0;
}

int gr_stream_save(const gr_stream_t *stream, gr_snapshot_writer_t *out) {
    gr_snapshot_write_u8(out, SAVE_VERSION);
    write_id(out, &stream->last_id);
    gr_snapshot_write_varint(out, stream->entries_added);
    write_id(out, &stream->max_deleted_entry_id);
    gr_snapshot_write_varint(out, stream->length);
    gr_stream_iter_t iter;
    gr_stream_entry_t entry;
    gr_stream_id_t previous = {0, 0};
    const uint8_t *previous_fields = NULL;   /* the previous entry's master fields, when it had them */
    gr_stream_iter_start(&iter, stream, NULL, NULL, 0);
    int first = 1;
    while (gr_stream_iter_next(&iter, &entry)) {
        uint64_t ms_delta = entry.id.ms - previous.ms;
        gr_snapshot_write_varint(out, ms_delta);
        gr_snapshot_write_varint(out, ms_delta || first ? entry.id.seq : entry.id.seq - previous.seq - 1);
        /* same fields: both entries use one node's master fields */
        int same = !first && entry.fields && entry.fields == previous_fields;
        gr_snapshot_write_varint(out, ((uint64_t)entry.pair_count << 1) | (uint64_t)same);
        previous_fields = entry.fields;
        const uint8_t *field, *value;
        size_t field_length, value_length;
        while (gr_stream_entry_next_pair(&entry, &field, &field_length, &value, &value_length)) {
            if (!same) gr_snapshot_write_bytes(out, field, field_length);
            gr_snapshot_write_bytes(out, value, value_length);
        }
        previous = entry.id;
        first = 0;
    }
    gr_stream_iter_stop(&iter);
    gr_snapshot_write_varint(out, stream->group_count);
    for (size_t g = 0; g < stream->group_count; g++) {
        const gr_stream_group_t *group = stream->groups[g];
        gr_snapshot_write_bytes(out, group->name, group->name_length);
        write_id(out, &group->last_id);
        gr_snapshot_write_varint(out, (uint64_t)(group->entries_read + 1));
        gr_snapshot_write_varint(out, group->consumer_count);
        for (size_t c = 0; c < group->consumer_count; c++) {
            const gr_stream_consumer_t *consumer = group->consumers[c];
            gr_snapshot_write_bytes(out, consumer->name, consumer->name_length);
            gr_snapshot_write_varint(out, (uint64_t)consumer->seen_time);
            gr_snapshot_write_varint(out, consumer->pel.count);
            for (size_t i = 0; i < consumer->pel.count; i++) {
                const gr_stream_nack_t *nack = gr_stream_pel_at(&consumer->pel, i);
                write_id(out, &nack->id);
                gr_snapshot_write_varint(out, (uint64_t)nack->delivery_time);
                gr_snapshot_write_varint(out, nack->delivery_count);
            }
        }
    }
    return out->oom ? -1 : 0;
}

/* The longest entry the loader rebuilds field names for (pairs of one entry). */
typedef struct load_pairs {
    const uint8_t **items;
    size_t *lengths;
    size_t capacity;   /* items */
} load_pairs_t;

static int pairs_reserve(load_pairs_t *pairs, size_t items) {
    if (items <= pairs->capacity) return 0;
    size_t capacity = items * 2;
    const uint8_t **p = gr_mem_realloc((void *)pairs->items, capacity * sizeof *p, GR_MEM_STREAM);
    if (!p) return -1;
    pairs->items = p;
    size_t *l = gr_mem_realloc(pairs->lengths, capacity * sizeof *l, GR_MEM_STREAM);
    if (!l) return -1;
    pairs->lengths = l;
    pairs->capacity = capacity;
    return 0;
}

gr_stream_t *gr_stream_load(gr_snapshot_reader_t *in, const gr_stream_limits_t *limits) {
    uint8_t version;
    if (gr_snapshot_read_u8(in, &version) != 0) return NULL;
    if (version != SAVE_VERSION) {
        gr_snapshot_reader_fail(in, "unknown stream format");
        return NULL;
    }
    gr_stream_t *stream = gr_stream_new();
    if (!stream) return NULL;
    load_pairs_t pairs = {0};
    gr_stream_id_t last_id, max_deleted;
    uint64_t entries_added, count, group_count;
    if (read_id(in, &last_id) || gr_snapshot_read_varint(in, &entries_added) || read_id(in, &max_deleted) ||
        gr_snapshot_read_count(in, 3, &count))
        goto bad;
    gr_stream_id_t previous = {0, 0};
    size_t previous_pairs = 0;
    for (uint64_t e = 0; e < count; e++) {
        uint64_t ms_delta, seq, header;
        if (gr_snapshot_read_varint(in, &ms_delta) || gr_snapshot_read_varint(in, &seq) ||
            gr_snapshot_read_varint(in, &header))
            goto bad;
        gr_stream_id_t id;
        if (e == 0 || ms_delta) {
            if (ms_delta > UINT64_MAX - previous.ms) goto bad;
            id.ms = previous.ms + ms_delta;
            id.seq = seq;
        } else {
            if (previous.seq == UINT64_MAX || seq > UINT64_MAX - previous.seq - 1) goto bad;
            id.ms = previous.ms;
            id.seq = previous.seq + 1 + seq;
        }
        if ((e == 0 && gr_stream_id_is_zero(&id))) goto bad;
        size_t pair_count = (size_t)(header >> 1);
        int same = (int)(header & 1);
        if ((same && (e == 0 || pair_count != previous_pairs)) || pair_count == 0 ||
            pair_count > gr_snapshot_reader_remaining(in) / 2)
            goto bad;
        if (pairs_reserve(&pairs, 2 * pair_count) != 0) goto oom;
        for (size_t i = 0; i < pair_count; i++) {
            if (!same && gr_snapshot_read_bytes(in, &pairs.items[2 * i], &pairs.lengths[2 * i])) goto bad;
            if (gr_snapshot_read_bytes(in, &pairs.items[2 * i + 1], &pairs.lengths[2 * i + 1])) goto bad;
        }
        if (gr_stream_append(stream, &id, pair_count, pairs.items, pairs.lengths, limits) != 0) goto oom;
        previous = id;
        previous_pairs = pair_count;
    }
    if (gr_stream_id_cmp(&last_id, &previous) < 0 || entries_added < count) goto bad;
    stream->last_id = last_id;
    stream->entries_added = entries_added;
    stream->max_deleted_entry_id = max_deleted;
    if (gr_snapshot_read_count(in, 4, &group_count)) goto bad;
    for (uint64_t g = 0; g < group_count; g++) {
        const uint8_t *name;
        size_t length;
        gr_stream_id_t group_last;
        uint64_t entries_read, consumer_count;
        if (gr_snapshot_read_bytes(in, &name, &length) || read_id(in, &group_last) ||
            gr_snapshot_read_varint(in, &entries_read) || gr_snapshot_read_count(in, 3, &consumer_count) ||
            entries_read > (uint64_t)INT64_MAX)
            goto bad;
        gr_stream_group_t *group;
        int created = gr_stream_group_create(stream, name, length, &group_last, (int64_t)entries_read - 1, &group);
        if (created < 0) goto oom;
        if (created > 0) goto bad;   /* a repeated group */
        for (uint64_t c = 0; c < consumer_count; c++) {
            uint64_t seen, pending;
            if (gr_snapshot_read_bytes(in, &name, &length) || gr_snapshot_read_varint(in, &seen) ||
                gr_snapshot_read_count(in, 4, &pending))
                goto bad;
            gr_stream_consumer_t *consumer;
            int made = gr_stream_consumer_create(group, name, length, (int64_t)seen, &consumer);
            if (made < 0) goto oom;
            if (made > 0) goto bad;
            for (uint64_t i = 0; i < pending; i++) {
                gr_stream_id_t id;
                uint64_t time, deliveries;
                if (read_id(in, &id) || gr_snapshot_read_varint(in, &time) || gr_snapshot_read_varint(in, &deliveries) ||
                    gr_stream_pel_find(&group->pel, &id))
                    goto bad;
                if (!gr_stream_nack_add(group, consumer, &id, (int64_t)time, deliveries)) goto oom;
            }
        }
    }
    gr_mem_free((void *)pairs.items, GR_MEM_STREAM);
    gr_mem_free(pairs.lengths, GR_MEM_STREAM);
    return stream;
bad:
    if (!in->error) gr_snapshot_reader_fail(in, "bad stream");
oom:
    gr_mem_free((void *)pairs.items, GR_MEM_STREAM);
    gr_mem_free(pairs.lengths, GR_MEM_STREAM);
    gr_stream_free(stream);
    return NULL;
}

/* ---- COPY ---- */

size_t gr_stream_node_allocated(const gr_stream_node_t *node);   /* stream.c */

gr_stream_t *gr_stream_duplicate(const gr_stream_t *stream) {
    gr_stream_t *copy = gr_stream_new();
    if (!copy) return NULL;
    if (stream->node_count) {
        copy->nodes = gr_mem_alloc(stream->node_count * sizeof *copy->nodes, GR_MEM_STREAM);
        if (!copy->nodes) goto oom;
        copy->node_capacity = stream->node_count;
        for (size_t i = 0; i < stream->node_count; i++) {
            size_t bytes = gr_stream_node_allocated(stream->nodes[i]);
            gr_stream_node_t *node = gr_mem_alloc(bytes, GR_MEM_STREAM);
            if (!node) goto oom;
            memcpy(node, stream->nodes[i], bytes);
            copy->nodes[copy->node_count++] = node;
        }
    }
    copy->length = stream->length;
    copy->entries_added = stream->entries_added;
    copy->last_id = stream->last_id;
    copy->first_id = stream->first_id;
    copy->max_deleted_entry_id = stream->max_deleted_entry_id;
    for (size_t g = 0; g < stream->group_count; g++) {
        const gr_stream_group_t *group = stream->groups[g];
        gr_stream_group_t *new_group;
        if (gr_stream_group_create(copy, group->name, group->name_length, &group->last_id, group->entries_read,
                                   &new_group) != 0)
            goto oom;
        for (size_t c = 0; c < group->consumer_count; c++) {
            const gr_stream_consumer_t *consumer = group->consumers[c];
            gr_stream_consumer_t *new_consumer;
            if (gr_stream_consumer_create(new_group, consumer->name, consumer->name_length, consumer->seen_time,
                                          &new_consumer) != 0)
                goto oom;
            for (size_t i = 0; i < consumer->pel.count; i++) {
                const gr_stream_nack_t *nack = gr_stream_pel_at(&consumer->pel, i);
                if (!gr_stream_nack_add(new_group, new_consumer, &nack->id, nack->delivery_time, nack->delivery_count))
                    goto oom;
            }
        }
    }
    return copy;
oom:
    gr_stream_free(copy);
    return NULL;
}
