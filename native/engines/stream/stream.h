/* stream.h — the stream value: an append-only log of entries keyed by 128-bit IDs (ms-seq),
 * each entry a list of field/value pairs, with consumer groups and their pending lists. The
 * entries live in stream.c, the groups and pending lists in stream_group.c, the snapshot body
 * and copies in stream_save.c; the command layer is commands/cmd_stream*.c, and its row in the
 * type registry is exec/value_type.c (GR_TYPE_STREAM).
 *
 * Memory layout
 * -------------
 *
 *   gr_stream_t                                  node directory (sorted by master ID)
 *   +---------------------------------+          +--------+--------+-----+--------+
 *   | nodes, node_count, capacity  ---+--------> | node * | node * | ... | node * |
 *   | length, entries_added           |          +--------+--------+-----+--------+
 *   | last_id, first_id,              |              |
 *   | max_deleted_entry_id            |              v  one allocation per node
 *   | groups (sorted by name) --------+--+    +------------------------------------------+
 *   +---------------------------------+  |    | master ID (16) | last ID (16)            |
 *                                        |    | live | total | used | capacity (4 x u32) |
 *                                        |    +------------------------------------------+
 *                                        |    | master fields: nfields, (len, bytes)...  |
 *                                        |    | entry | entry | entry | ...              |
 *                                        |    +------------------------------------------+
 *                                        |
 *   an entry:  +-------+----------+-----+----------------------------------------+
 *              | flags | ms delta | seq | values (SAME_FIELDS) or nfields, pairs  |
 *              +-------+----------+-----+----------------------------------------+
 *     flags: bit 0 deleted (a tombstone, as Redis marks them), bit 1 same fields as the master;
 *     ms delta: varint, entry ms - master ms (IDs only grow within a node);
 *     seq: varint, entry seq - master seq when the ms is the master's, else the seq itself
 *     (so an entry of a new millisecond costs one byte for its sequence);
 *     values / fields: varint length + bytes each.
 *
 *   A group (gr_stream_group_t): name, last delivered ID, entries_read, its PEL and its
 *   consumers (sorted by name). A PEL is a sorted array of NACK pointers with a head offset,
 *   so delivering (append at the end) and acknowledging the oldest (advance the head) are
 *   O(1); an acknowledgement in the middle moves the items after it. The group's PEL owns the
 *   NACKs (ID, consumer, delivery time, delivery count); each consumer's PEL points at the
 *   same NACKs, in the same order.
 *
 * A node is sealed (shrunk to fit, a new node started) once it holds node_max_entries entries
 * (tombstones included) or would pass node_max_bytes, as Redis's stream-node-max-entries /
 * -max-bytes; 0 is no limit. A node whose entries are all deleted is freed. Looking an ID up is
 * a binary search over the directory then a scan of one node (at most node_max_entries).
 *
 * Bookkeeping is Redis 7's: last_id (the top ID ever added or set by XSETID), entries_added
 * (every entry ever added), max_deleted_entry_id (the highest ID XDEL removed; trimming does not
 * move it), first_id (the first live entry's ID, 0-0 when empty).
 *
 * Pointers handed out (entries, pairs, groups, consumers, NACKs) stay valid until the next
 * mutation of the same part (entries: any append, delete or trim; a group: its own changes).
 */
#ifndef GR_STREAM_H
#define GR_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "core/alloc.h"
#include "core/snapshot_io.h"

typedef struct gr_stream_id {
    uint64_t ms;
    uint64_t seq;
} gr_stream_id_t;

#define GR_MEM_STREAM ((gr_mem_category_t)(GR_MEM_FIRST_FREE + 4))

/* Redis's defaults for stream-node-max-bytes / -entries. */
#define GR_STREAM_NODE_MAX_BYTES 4096
#define GR_STREAM_NODE_MAX_ENTRIES 100

typedef struct gr_stream_node gr_stream_node_t;
typedef struct gr_stream_group gr_stream_group_t;
typedef struct gr_stream_consumer gr_stream_consumer_t;

typedef struct gr_stream_limits {
    uint32_t node_max_bytes;     /* 0: no limit */
    uint32_t node_max_entries;   /* 0: no limit */
} gr_stream_limits_t;

typedef struct gr_stream {
    gr_stream_node_t **nodes;
    size_t node_count, node_capacity;
    uint64_t length;                      /* live entries */
    uint64_t entries_added;
    gr_stream_id_t last_id, first_id, max_deleted_entry_id;
    gr_stream_group_t **groups;           /* sorted by name */
    size_t group_count, group_capacity;
} gr_stream_t;

/* One entry, pointing into its node. Read its pairs with gr_stream_entry_next_pair. */
typedef struct gr_stream_entry {
    gr_stream_id_t id;
    size_t pair_count;
    /* cursor over the pairs */
    const uint8_t *fields;   /* the master's fields (same-fields entries), else NULL */
    const uint8_t *cursor;
    size_t remaining;
} gr_stream_entry_t;

/* A cursor over the live entries between two IDs (inclusive), forward or reverse. */
typedef struct gr_stream_iter {
    const gr_stream_t *stream;
    gr_stream_id_t start, end;
    int reverse;
    size_t node;                 /* the node being read (index), SIZE_MAX when done */
    uint32_t position;           /* forward: byte offset of the next entry; reverse: index in offsets */
    uint32_t *offsets;           /* reverse: the node's entry offsets */
    uint32_t offset_count, offset_capacity;
    uint32_t inline_offsets[128];
} gr_stream_iter_t;

typedef enum gr_stream_trim_strategy {
    GR_STREAM_TRIM_NONE = 0,
    GR_STREAM_TRIM_MAXLEN = 1,
    GR_STREAM_TRIM_MINID = 2,
} gr_stream_trim_strategy_t;

typedef struct gr_stream_trim {
    gr_stream_trim_strategy_t strategy;
    int approx;                  /* ~: only whole nodes */
    int64_t limit;               /* approx only: at most this many removed (0: no limit) */
    uint64_t maxlen;
    gr_stream_id_t minid;
} gr_stream_trim_t;

/* ---- IDs ---- */
static inline int gr_stream_id_cmp(const gr_stream_id_t *a, const gr_stream_id_t *b) {
    if (a->ms != b->ms) return a->ms < b->ms ? -1 : 1;
    if (a->seq != b->seq) return a->seq < b->seq ? -1 : 1;
    return 0;
}
static inline int gr_stream_id_is_zero(const gr_stream_id_t *id) { return id->ms == 0 && id->seq == 0; }
/* The next / previous ID (Redis's streamIncrID / streamDecrID). */
int gr_stream_id_incr(gr_stream_id_t *id);   /* 0, or -1 at 2^64-1-2^64-1 */
int gr_stream_id_decr(gr_stream_id_t *id);   /* 0, or -1 at 0-0 */
/* "ms-seq" into out (at least 42 bytes); returns the length. */
size_t gr_stream_id_format(const gr_stream_id_t *id, char *out);

/* ---- Lifecycle ---- */
gr_stream_t *gr_stream_new(void);             /* empty; NULL on OOM */
void gr_stream_free(gr_stream_t *stream);     /* NULL ok */
gr_stream_t *gr_stream_duplicate(const gr_stream_t *stream);   /* entries, groups, PELs; NULL on OOM */
size_t gr_stream_allocated_bytes(const gr_stream_t *stream);

/* ---- Entries ---- */
/* Append an entry with ID id (> last_id: the caller checks), its pair_count field/value pairs as
 * items[2i], items[2i+1] with lengths. Updates length, last_id, entries_added, first_id.
 * 0, or -1 out of memory (nothing changed). */
int gr_stream_append(gr_stream_t *stream, const gr_stream_id_t *id, size_t pair_count, const uint8_t *const *items,
                     const size_t *lengths, const gr_stream_limits_t *limits);
/* Mark the entry deleted (XDEL's tombstone; a node left empty is freed): 1, or 0 absent.
 * Updates length and first_id, not max_deleted_entry_id (the command does, as Redis). */
int gr_stream_delete(gr_stream_t *stream, const gr_stream_id_t *id);
/* Redis's streamTrim: the entries removed. */
uint64_t gr_stream_trim(gr_stream_t *stream, const gr_stream_trim_t *trim);
/* 1 and *id when the stream holds an entry (first: the lowest live, else the highest live). */
int gr_stream_edge_id(const gr_stream_t *stream, int first, gr_stream_id_t *id);
/* 1 when a live entry has this ID. */
int gr_stream_has_entry(const gr_stream_t *stream, const gr_stream_id_t *id);
/* Nodes (XINFO's radix-tree-keys). */
static inline size_t gr_stream_node_count(const gr_stream_t *stream) { return stream->node_count; }

/* ---- Iteration ---- */
void gr_stream_iter_start(gr_stream_iter_t *iter, const gr_stream_t *stream, const gr_stream_id_t *start,
                          const gr_stream_id_t *end, int reverse);
int gr_stream_iter_next(gr_stream_iter_t *iter, gr_stream_entry_t *entry);   /* 1 an entry, 0 done */
void gr_stream_iter_stop(gr_stream_iter_t *iter);
/* The entry's next pair: 1 and the four out-values, 0 after the last. */
int gr_stream_entry_next_pair(gr_stream_entry_t *entry, const uint8_t **field, size_t *field_length,
                              const uint8_t **value, size_t *value_length);

/* ---- Bookkeeping (Redis 7's consumer-group lag) ---- */
#define GR_STREAM_INVALID_ENTRIES_READ (-1)   /* Redis's SCG_INVALID_ENTRIES_READ: unknown */
int gr_stream_range_has_tombstones(const gr_stream_t *stream, const gr_stream_id_t *start, const gr_stream_id_t *end);
int64_t gr_stream_estimate_distance(const gr_stream_t *stream, const gr_stream_id_t *id);
/* 1 and *lag when it can be known, else 0 (XINFO's nil). */
int gr_stream_group_lag(const gr_stream_t *stream, const gr_stream_group_t *group, int64_t *lag);

/* ---- Groups (stream_group.c) ---- */
typedef struct gr_stream_nack {
    gr_stream_id_t id;
    int64_t delivery_time;          /* unix ms */
    uint64_t delivery_count;
    gr_stream_consumer_t *consumer;
} gr_stream_nack_t;

/* A PEL: NACK pointers sorted by ID, live at items[head .. head + count). */
typedef struct gr_stream_pel {
    gr_stream_nack_t **items;
    uint32_t head, count, capacity;
} gr_stream_pel_t;

struct gr_stream_consumer {
    uint8_t *name;
    size_t name_length;
    int64_t seen_time;              /* unix ms of its last read or claim (XINFO's idle) */
    gr_stream_pel_t pel;
};

struct gr_stream_group {
    uint8_t *name;
    size_t name_length;
    gr_stream_id_t last_id;         /* last delivered */
    int64_t entries_read;           /* GR_STREAM_INVALID_ENTRIES_READ when unknown */
    gr_stream_pel_t pel;            /* owns the NACKs */
    gr_stream_consumer_t **consumers;   /* sorted by name */
    size_t consumer_count, consumer_capacity;
};

gr_stream_group_t *gr_stream_group_find(const gr_stream_t *stream, const uint8_t *name, size_t length);
/* A new group: *out, 0; 1 when the name is taken (*out the existing one); -1 OOM. */
int gr_stream_group_create(gr_stream_t *stream, const uint8_t *name, size_t length, const gr_stream_id_t *last_id,
                           int64_t entries_read, gr_stream_group_t **out);
/* Remove and free the group (its consumers and NACKs): 1, or 0 absent. */
int gr_stream_group_destroy(gr_stream_t *stream, const uint8_t *name, size_t length);

gr_stream_consumer_t *gr_stream_consumer_find(const gr_stream_group_t *group, const uint8_t *name, size_t length);
/* A new consumer (seen now): *out, 0; 1 when it exists (*out it); -1 OOM. */
int gr_stream_consumer_create(gr_stream_group_t *group, const uint8_t *name, size_t length, int64_t now_ms,
                              gr_stream_consumer_t **out);
/* Remove the consumer and its NACKs: the number of pending entries it had. */
size_t gr_stream_consumer_delete(gr_stream_group_t *group, gr_stream_consumer_t *consumer);

/* PELs: index of the first item >= id (count when none). */
size_t gr_stream_pel_lower_bound(const gr_stream_pel_t *pel, const gr_stream_id_t *id);
static inline gr_stream_nack_t *gr_stream_pel_at(const gr_stream_pel_t *pel, size_t index) {
    return pel->items[pel->head + index];
}
gr_stream_nack_t *gr_stream_pel_find(const gr_stream_pel_t *pel, const gr_stream_id_t *id);
/* A new NACK for id (absent from the group's PEL) owned by consumer, delivered at now with count.
 * NULL on OOM (nothing changed). */
gr_stream_nack_t *gr_stream_nack_add(gr_stream_group_t *group, gr_stream_consumer_t *consumer, const gr_stream_id_t *id,
                                     int64_t now_ms, uint64_t delivery_count);
/* Give a NACK to another consumer (both PELs updated): 0, or -1 OOM (nothing changed). */
int gr_stream_nack_move(gr_stream_group_t *group, gr_stream_nack_t *nack, gr_stream_consumer_t *consumer);
/* Remove and free the NACK of id: 1, or 0 absent. */
int gr_stream_nack_ack(gr_stream_group_t *group, const gr_stream_id_t *id);

/* ---- Snapshots (stream_save.c): the body DUMP carries and snapshots hold ---- */
int gr_stream_save(const gr_stream_t *stream, gr_snapshot_writer_t *out);
gr_stream_t *gr_stream_load(gr_snapshot_reader_t *in, const gr_stream_limits_t *limits);

#endif
