/* cmd_list.c — the LIST command layer: Redis 7 semantics over the list engine.
 *
 * The engine is list.c (the compact encoding, list_compact.c, and the two engines a list can
 * target: segmented, list_seg.c, and PMA, list_pma.c);
 * this file validates every argument of a typed request first, then mutates, then replies,
 * with Redis's reply shapes and error texts. Both transports arrive here with the same
 * gr_request_t (field use per template in codec_generated.h). A list that becomes empty is deleted,
 * as in Redis. The blocking commands' ready path is here too, with the gr_block_spec
 * rows that tell exec/blocking.c (which parks and wakes clients) what a list waiter needs.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "exec/blocking.h"
#include "commands/commands.h"
#include "exec/db.h"
#include "exec/lookup.h"
#include "exec/transaction.h"

#define END_LEFT 0

static gr_list_end_t engine_end(uint8_t end) { return end == END_LEFT ? GR_LIST_HEAD : GR_LIST_TAIL; }

/* The engine a request's new lists target: its GOBLIN.PMA./GOBLIN.SEG. qualifier, else
 * the server's --list-implementation. */
static gr_list_encoding_t wanted_engine(const gr_server_t *db, const gr_request_t *r) {
    return r->engine == 1 ? GR_LIST_SEGMENTED : r->engine == 2 ? GR_LIST_PMA : db->list_target;
}

/* A qualified command on a list of the other engine: WRONGTYPE, naming both engines. */
static void reply_wrong_engine(const gr_server_t *db, const gr_request_t *r, const gr_list_t *list, gr_reply_t *reply) {
    /* RESP knows the very name (GOBLIN.PMA.RPOPLPUSH); a typed request only its template's */
    const char *name = gr_request_command_name(r);
    const char *last = db->current ? db->current->last_command : NULL;
    if (last && strncmp(last, name ? name : "", 11) == 0) name = last;
    char upper[48];
    size_t n = 0;
    for (; name && name[n] && n < sizeof upper - 1; n++) upper[n] = (char)toupper((unsigned char)name[n]);
    upper[n] = '\0';
    char text[160];
    snprintf(text, sizeof text, "WRONGTYPE Operation against a list held by the %s engine (%s wants %s)",
             gr_list_engine_name(gr_list_target(list)), upper, r->engine == 2 ? "pma" : "segmented");
    gr_reply_error_text(reply, GR_ERR_WRONGTYPE, text);
}

/* find_list_or_reply's refusal, out of the inlined path: WRONGTYPE for another type, or for a
 * list of the other engine. Returns -1. */
static __attribute__((noinline)) int reply_not_this_list(gr_server_t *db, const gr_request_t *r, const gr_ks_entry_t *found,
                                                         gr_reply_t *reply) {
    if (found->type != GR_TYPE_LIST) gr_reply_wrongtype(reply);
    else reply_wrong_engine(db, r, found->value, reply);
    return -1;
}

/* Find key as a list: 1 found (*list set), 0 absent, -1 wrong type (WRONGTYPE replied): not
 * a list, or, for a qualified request, a list of the other engine. Inline: every list command
 * and each key BLPOP or LMPOP tries starts here. A read (LLEN, LRANGE, ...) counts a keyspace
 * hit or miss; a write's lookup does not, as Redis's lookupKeyWrite. */
enum { LIST_READ = 0, LIST_WRITE = GR_LOOKUP_WRITE };
static inline int find_list_or_reply(gr_server_t *db, const gr_request_t *r, gr_bytes_t key, int for_write,
                                     gr_list_t **list, gr_ks_entry_t **entry, gr_reply_t *reply) {
    gr_ks_entry_t *found = gr_db_lookup_with(db, key, for_write);
    if (!found) return 0;
    if (found->type != GR_TYPE_LIST || (r->engine && gr_list_target(found->value) != wanted_engine(db, r)))
        return reply_not_this_list(db, r, found, reply);
    *list = found->value;
    if (entry) *entry = found;
    return 1;
}

static void delete_if_empty(gr_server_t *db, gr_bytes_t key, gr_list_t *list) {
    if (gr_list_length(list) == 0) gr_db_delete_key(db, key);
}

static gr_list_t *create_list_or_reply(gr_server_t *db, const gr_request_t *r, gr_bytes_t key, gr_reply_t *reply) {
    gr_list_t *list = gr_list_new_for(&db->list_config, wanted_engine(db, r));
    if (list && gr_db_add_key(db, key, GR_TYPE_LIST, list)) return list;   /* waiters told (served after) */
    if (list) gr_list_free(list);
    gr_reply_oom(reply);
    return NULL;
}

static void reply_value(gr_reply_t *reply, gr_value_t value) { gr_reply_bulk(reply, value.data, value.length); }

/* LPUSH, RPUSH, LPUSHX, RPUSHX */
void gr_cmd_push(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) {
    const gr_push_view_t req = gr_push_view(r);
    static const char *names[2][2] = {{"lpush", "rpush"}, {"lpushx", "rpushx"}};
    if (req.values_count == 0) {
        gr_reply_arity_error(reply, names[req.only_if_exists][req.end]);
        return;
    }
    gr_list_t *list = NULL;
    int found = find_list_or_reply(db, r, req.key, LIST_WRITE, &list, NULL, reply);
    if (found < 0) return;
    if (!found) {
        if (req.only_if_exists) { gr_reply_integer(reply, 0); return; }
        if (!(list = create_list_or_reply(db, r, req.key, reply))) return;
    }
    /* gr_bytes_t (wire, 32-bit length) and gr_value_t (engine, size_t) differ: convert in chunks. */
    int failed = 0;
    uint32_t done = 0;
    while (done < req.values_count && !failed) {
        gr_value_t chunk[64];
        uint32_t n = req.values_count - done < 64 ? req.values_count - done : 64;
        for (uint32_t i = 0; i < n; i++) {
            chunk[i].data = req.values[done + i].data;
            chunk[i].length = req.values[done + i].length;
        }
        failed = gr_list_push_many(list, engine_end(req.end), chunk, n) != 0;   /* a chunk is all or nothing */
        if (!failed) done += n;
    }
    gr_watch_touch_current(db, req.key);
    gr_db_count_changes(db, done);
    if (failed) {
        delete_if_empty(db, req.key, list);
        gr_reply_oom(reply);
        return;
    }
    gr_reply_integer(reply, (int64_t)gr_list_length(list));
}

/* The visitor of gr_list_pop_each and gr_list_each: each run of values, bulks of the reply. */
static void reply_values(void *reply, const gr_bytes_t *values, size_t count) { gr_reply_bulks(reply, values, count); }

/* Reply with `count` values taken from `end` (in pop order), then remove them: one engine
 * pass (gr_list_pop_each), each run of values written to the reply before it goes. */
static void reply_and_remove_from_end(gr_list_t *list, gr_list_end_t end, size_t count, gr_reply_t *reply) {
    gr_list_pop_each(list, end, count, reply_values, reply);
}

/* LPOP, RPOP, with an optional count */
void gr_cmd_pop(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) {
    const gr_pop_view_t req = gr_pop_view(r);
    gr_list_t *list = NULL;
    int found = find_list_or_reply(db, r, req.key, LIST_WRITE, &list, NULL, reply);
    if (found < 0) return;
    if (!found) {
        if (req.has_count) gr_reply_nil_array(reply); else gr_reply_nil(reply);
        return;
    }
    gr_list_end_t end = engine_end(req.end);
    if (!req.has_count) {
        gr_value_t value;
        gr_list_peek(list, end, &value);
        reply_value(reply, value);
        gr_list_pop(list, end);   /* (not pop_peeked: keeping value across the reply costs LPOP more) */
        gr_db_count_changes(db, 1);
    } else {
        size_t count = req.count < gr_list_length(list) ? req.count : gr_list_length(list);
        gr_reply_array_begin(reply, count);
        reply_and_remove_from_end(list, end, count, reply);
        if (count == 0) return;               /* LPOP k 0 changes nothing */
        gr_db_count_changes(db, (int64_t)count);
    }
    delete_if_empty(db, req.key, list);
    gr_watch_touch_current(db, req.key);
}

void gr_cmd_llen(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) {
    const gr_llen_view_t req = gr_llen_view(r);
    gr_list_t *list = NULL;
    int found = find_list_or_reply(db, r, req.key, LIST_READ, &list, NULL, reply);
    if (found >= 0) gr_reply_integer(reply, found ? (int64_t)gr_list_length(list) : 0);
}

/* Normalise a Redis index against length: -1 when out of range. */
static int64_t normalise_index(int64_t index, size_t length) {
    if (index < 0) index += (int64_t)length;
    if (index < 0 || index >= (int64_t)length) return -1;
    return index;
}

void gr_cmd_lindex(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) {
    const gr_lindex_view_t req = gr_lindex_view(r);
    gr_list_t *list = NULL;
    int found = find_list_or_reply(db, r, req.key, LIST_READ, &list, NULL, reply);
    if (found < 0) return;
    int64_t index = found ? normalise_index(req.index, gr_list_length(list)) : -1;
    gr_value_t value;
    if (index < 0 || gr_list_get(list, (size_t)index, &value) != 0) { gr_reply_nil(reply); return; }
    reply_value(reply, value);
}

/* Redis's LRANGE/LTRIM clamping: sets [*first, *last] and returns 0 when the range is empty. */
static int clamp_range(int64_t start, int64_t stop, size_t length, size_t *first, size_t *last) {
    int64_t n = (int64_t)length;
    if (start < 0) start += n;
    if (stop < 0) stop += n;
    if (start < 0) start = 0;
    if (start > stop || start >= n) return 0;
    if (stop >= n) stop = n - 1;
    *first = (size_t)start;
    *last = (size_t)stop;
    return 1;
}

void gr_cmd_lrange(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) {
    const gr_lrange_view_t req = gr_lrange_view(r);
    gr_list_t *list = NULL;
    int found = find_list_or_reply(db, r, req.key, LIST_READ, &list, NULL, reply);
    if (found < 0) return;
    size_t first, last;
    if (!found || !clamp_range(req.start, req.stop, gr_list_length(list), &first, &last)) {
        gr_reply_array_begin(reply, 0);
        return;
    }
    size_t count = last - first + 1;
    gr_reply_array_begin(reply, count);
    gr_list_each(list, first, count, reply_values, reply);
}

void gr_cmd_lset(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) {
    const gr_lset_view_t req = gr_lset_view(r);
    gr_list_t *list = NULL;
    int found = find_list_or_reply(db, r, req.key, LIST_WRITE, &list, NULL, reply);
    if (found < 0) return;
    if (!found) { gr_reply_error_text(reply, GR_ERR_NO_SUCH_KEY, "ERR no such key"); return; }
    int64_t index = normalise_index(req.index, gr_list_length(list));
    if (index < 0) { gr_reply_error_text(reply, GR_ERR_OUT_OF_RANGE, "ERR index out of range"); return; }
    if (gr_list_set(list, (size_t)index, req.value.data, req.value.length) != 0) {
        gr_reply_oom(reply);
        return;
    }
    gr_watch_touch_current(db, req.key);
    gr_db_count_changes(db, 1);
    gr_reply_ok(reply);
}

static int value_equals(gr_value_t value, gr_bytes_t wanted) {
    return value.length == wanted.length && (wanted.length == 0 || memcmp(value.data, wanted.data, wanted.length) == 0);
}

void gr_cmd_linsert(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) {
    const gr_linsert_view_t req = gr_linsert_view(r);
    gr_list_t *list = NULL;
    int found = find_list_or_reply(db, r, req.key, LIST_WRITE, &list, NULL, reply);
    if (found < 0) return;
    if (!found) { gr_reply_integer(reply, 0); return; }
    gr_list_iter_t iterator;
    gr_list_iter_init(&iterator, list, 0, GR_LIST_HEAD);
    gr_value_t value;
    size_t index = 0;
    int matched = 0;
    while (gr_list_iter_next(&iterator, &value)) {
        if (value_equals(value, req.pivot)) { matched = 1; break; }
        index++;
    }
    if (!matched) { gr_reply_integer(reply, -1); return; }
    size_t at = req.position == 0 ? index : index + 1;   /* BEFORE : AFTER */
    if (gr_list_insert(list, at, req.value.data, req.value.length) != 0) {
        gr_reply_oom(reply);
        return;
    }
    gr_watch_touch_current(db, req.key);
    gr_db_count_changes(db, 1);
    gr_reply_integer(reply, (int64_t)gr_list_length(list));
}

void gr_cmd_lrem(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) {
    const gr_lrem_view_t req = gr_lrem_view(r);
    gr_list_t *list = NULL;
    int found = find_list_or_reply(db, r, req.key, LIST_WRITE, &list, NULL, reply);
    if (found < 0) return;
    if (!found) { gr_reply_integer(reply, 0); return; }
    int64_t removed = gr_list_remove_matching(list, req.value.data, req.value.length, req.count);
    delete_if_empty(db, req.key, list);
    if (removed) gr_watch_touch_current(db, req.key);
    gr_db_count_changes(db, removed);
    gr_reply_integer(reply, removed);
}

void gr_cmd_ltrim(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) {
    const gr_ltrim_view_t req = gr_ltrim_view(r);
    gr_list_t *list = NULL;
    int found = find_list_or_reply(db, r, req.key, LIST_WRITE, &list, NULL, reply);
    if (found < 0) return;
    if (found) {
        size_t first, last, before = gr_list_length(list);
        if (!clamp_range(req.start, req.stop, before, &first, &last))
            gr_list_delete_range(list, 0, before);
        else
            gr_list_trim(list, first, last);
        gr_db_count_changes(db, (int64_t)(before - gr_list_length(list)));   /* Redis: the values trimmed */
        delete_if_empty(db, req.key, list);
        gr_watch_touch_current(db, req.key);
    }
    gr_reply_ok(reply);
}

/* LPOS key element [RANK rank] [COUNT num] [MAXLEN len] */
void gr_cmd_lpos(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) {
    const gr_lpos_view_t req = gr_lpos_view(r);
    int64_t rank = req.rank;
    if (rank == 0) {
        gr_reply_error_text(reply, GR_ERR_GENERIC,
                            "ERR RANK can't be zero: use 1 to start from the first match, 2 from the "
                            "second ... or use negative to start from the end of the list");
        return;
    }
    if (rank == INT64_MIN) {
        gr_reply_error_text(reply, GR_ERR_OUT_OF_RANGE,
                            "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807");
        return;
    }
    gr_list_t *list = NULL;
    int found = find_list_or_reply(db, r, req.key, LIST_READ, &list, NULL, reply);
    if (found < 0) return;
    if (!found) {
        if (req.has_count) gr_reply_array_begin(reply, 0); else gr_reply_nil(reply);
        return;
    }
    size_t length = gr_list_length(list);
    gr_list_end_t direction = rank > 0 ? GR_LIST_HEAD : GR_LIST_TAIL;
    uint64_t skip = (uint64_t)(rank > 0 ? rank : -rank) - 1;
    uint64_t wanted = req.has_count ? (req.count ? req.count : UINT64_MAX) : 1;
    uint64_t limit = req.max_len ? req.max_len : UINT64_MAX;

    /* Matches are collected first: an array reply must announce its count. */
    size_t capacity = 16, found_count = 0;
    int64_t *positions = malloc(capacity * sizeof *positions);
    gr_list_iter_t iterator;
    gr_list_iter_init(&iterator, list, direction == GR_LIST_HEAD ? 0 : length - 1, direction);
    gr_value_t value;
    uint64_t compared = 0;
    size_t index = direction == GR_LIST_HEAD ? 0 : length - 1;
    while (positions && found_count < wanted && compared < limit && gr_list_iter_next(&iterator, &value)) {
        compared++;
        if (value_equals(value, req.element)) {
            if (skip) skip--;
            else {
                if (found_count == capacity) {
                    int64_t *grown = realloc(positions, 2 * capacity * sizeof *positions);
                    if (!grown) { free(positions); positions = NULL; break; }
                    positions = grown;
                    capacity *= 2;
                }
                positions[found_count++] = (int64_t)index;
            }
        }
        index = direction == GR_LIST_HEAD ? index + 1 : index - 1;
    }
    if (!positions) {
        gr_reply_oom(reply);
        return;
    }
    if (req.has_count) {
        gr_reply_array_begin(reply, found_count);
        for (size_t i = 0; i < found_count; i++) gr_reply_integer(reply, positions[i]);
    } else if (found_count) {
        gr_reply_integer(reply, positions[0]);
    } else {
        gr_reply_nil(reply);
    }
    free(positions);
}

/* A pop's keyspace events, as Redis's: lpop or rpop, then "del" when it emptied the list. */
static void notify_pop(gr_server_t *db, gr_bytes_t key, uint8_t end) {
    gr_call_notify(db, GR_NOTIFY_LIST, end == END_LEFT ? "lpop" : "rpop", key);
    if (db->notify_flags && !gr_ks_find(db->keyspace, key.data, key.length)) gr_call_notify(db, GR_NOTIFY_GENERIC, "del", key);
}

/* LMOVE source destination LEFT|RIGHT LEFT|RIGHT (and RPOPLPUSH) */
/* LMOVE's work once the source is known to hold a list: 1 when it replied. Returns 0 (and
 * replies nothing) when the source is absent, so BLMOVE can park instead. */
static int lmove_or_absent(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) {
    const gr_lmove_view_t req = gr_lmove_view(r);   /* BLMOVE's request has the same fields */
    gr_list_t *source = NULL, *destination = NULL;
    int found = find_list_or_reply(db, r, req.source, LIST_WRITE, &source, NULL, reply);
    if (found < 0) return 1;
    if (!found) return 0;
    int destination_found = find_list_or_reply(db, r, req.destination, LIST_WRITE, &destination, NULL, reply);
    if (destination_found < 0) return 1;

    gr_value_t value;
    gr_list_peek(source, engine_end(req.from), &value);
    /* The value lives in the source's storage, which the pop invalidates: copy it first. */
    uint8_t *copy = malloc(value.length ? value.length : 1);
    if (!copy) {
        gr_reply_oom(reply);
        return 1;
    }
    memcpy(copy, value.data, value.length);
    size_t copy_length = value.length;
    if (!destination_found && !(destination = create_list_or_reply(db, r, req.destination, reply))) {
        free(copy);
        return 1;
    }
    gr_list_pop(source, engine_end(req.from));
    if (gr_list_push(destination, engine_end(req.to), copy, copy_length) != 0) {
        gr_list_push(source, engine_end(req.from), copy, copy_length);   /* put it back: lose nothing */
        free(copy);
        delete_if_empty(db, req.destination, destination);
        gr_reply_oom(reply);
        return 1;
    }
    gr_reply_bulk(reply, copy, copy_length);
    free(copy);
    delete_if_empty(db, req.source, source);
    gr_watch_touch_current(db, req.source);
    gr_watch_touch_current(db, req.destination);
    /* Redis notifies the push to the destination first, then the pop from the source */
    gr_call_notify(db, GR_NOTIFY_LIST, req.to == END_LEFT ? "lpush" : "rpush", req.destination);
    notify_pop(db, req.source, req.from);
    gr_db_count_changes(db, 1);
    return 1;
}

void gr_cmd_lmove(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) {
    if (!lmove_or_absent(db, r, reply)) gr_reply_nil(reply);
}

/* LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count] */
void gr_cmd_lmpop(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) {
    const gr_lmpop_view_t req = gr_lmpop_view(r);
    if (req.keys_count == 0) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR numkeys should be greater than 0");
        return;
    }
    size_t count = req.count ? req.count : 1;
    for (uint32_t i = 0; i < req.keys_count; i++) {
        gr_list_t *list = NULL;
        int found = find_list_or_reply(db, r, req.keys[i], LIST_WRITE, &list, NULL, reply);
        if (found < 0) return;
        if (!found) continue;
        size_t taken = count < gr_list_length(list) ? count : gr_list_length(list);
        gr_reply_keyed_array_begin(reply, req.keys[i].data, req.keys[i].length, taken);
        reply_and_remove_from_end(list, engine_end(req.end), taken, reply);
        delete_if_empty(db, req.keys[i], list);
        gr_watch_touch_current(db, req.keys[i]);
        notify_pop(db, req.keys[i], req.end);
        gr_db_count_changes(db, (int64_t)taken);
        return;
    }
    gr_reply_nil_array(reply);
}

/* ---- BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP ---- */

/* The ready path of a blocking command: 1 when it replied (a value, or an error such as
 * WRONGTYPE), 0 when every key is empty. Keys are tried in argument order. */
static int blocking_ready(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) {
    const gr_blmpop_view_t req = gr_blmpop_view(r);   /* BLPOP/BRPOP's: the same, count 0 */
    if (r->template_id == GR_T_BLMOVE) return lmove_or_absent(db, r, reply);   /* one lookup of the source */
    for (uint32_t i = 0; i < req.keys_count; i++) {
        gr_list_t *list = NULL;
        int found = find_list_or_reply(db, r, req.keys[i], LIST_WRITE, &list, NULL, reply);
        if (found < 0) return 1;
        if (!found) continue;
        if (r->template_id == GR_T_BPOP) {
            gr_value_t value;
            gr_list_peek(list, engine_end(req.end), &value);
            gr_reply_pair(reply, req.keys[i].data, req.keys[i].length, value.data, value.length);
            gr_list_pop_peeked(list, engine_end(req.end), value);
            gr_db_count_changes(db, 1);
        } else {
            size_t count = req.count ? req.count : 1;
            size_t taken = count < gr_list_length(list) ? count : gr_list_length(list);
            gr_reply_keyed_array_begin(reply, req.keys[i].data, req.keys[i].length, taken);
            reply_and_remove_from_end(list, engine_end(req.end), taken, reply);
            gr_db_count_changes(db, (int64_t)taken);
        }
        delete_if_empty(db, req.keys[i], list);
        gr_watch_touch_current(db, req.keys[i]);
        notify_pop(db, req.keys[i], req.end);
        return 1;
    }
    return 0;
}

/* A list can serve any list waiter: empty lists do not exist. (A qualified command on the
 * other engine's list is answered WRONGTYPE by blocking_ready, as when it first ran.) */
static int holds_list(const gr_ks_entry_t *entry) { return entry->type == GR_TYPE_LIST; }

static void reply_nil(const gr_request_t *r, gr_reply_t *reply) { (void)r; gr_reply_nil(reply); }
static void reply_nil_array(const gr_request_t *r, gr_reply_t *reply) { (void)r; gr_reply_nil_array(reply); }

/* The blocking layer's view of the list commands (exec/blocking.h); the table's rows point here. */
const gr_block_spec_t gr_list_block_pop = {"blpop", GR_BLOCK_KEYS_IN_ITEMS, holds_list, blocking_ready, reply_nil_array, -1, 0, NULL, NULL, NULL};
const gr_block_spec_t gr_list_block_move = {"blmove", GR_BLOCK_KEY_IN_KEY, holds_list, blocking_ready, reply_nil, -1, 0, NULL, NULL, NULL};
const gr_block_spec_t gr_list_block_mpop = {"blmpop", GR_BLOCK_KEYS_IN_ITEMS, holds_list, blocking_ready, reply_nil_array, 1, 0, NULL, NULL, NULL};

static const gr_block_spec_t *block_spec_of(uint16_t template_id) {
    return template_id == GR_T_BLMOVE ? &gr_list_block_move : template_id == GR_T_BLMPOP ? &gr_list_block_mpop
                                                                                         : &gr_list_block_pop;
}

/* BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP: their rows' handler. */
void gr_cmd_list_blocking(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) {
    if (r->template_id != GR_T_BLMOVE && r->item_count == 0 && !gr_blocking_timeout_error(r->timeout)) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, r->template_id == GR_T_BLMPOP ? "ERR numkeys should be greater than 0"
                                                                                 : "ERR wrong number of arguments");
        return;
    }
    gr_blocking_run(db, block_spec_of(r->template_id), r, reply);
}

/* GOBLIN.LIST.INTERNALS key: how the list is laid out, as a map (RESP3) or flat array
 * (RESP2); nil for a missing key, WRONGTYPE for another type. */
void gr_cmd_list_internals(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                           gr_reply_t *reply) {
    if (argc != 2) { gr_reply_arity_error(reply, "goblin.list.internals"); return; }
    gr_bytes_t key = {argv[1], (uint32_t)argv_length[1]};
    gr_request_t plain;
    memset(&plain, 0, sizeof plain);
    gr_list_t *list = NULL;
    int found = find_list_or_reply(db, &plain, key, LIST_READ, &list, NULL, reply);
    if (found < 0) return;
    if (!found) { gr_reply_nil(reply); return; }
    gr_list_internals_t in;
    gr_list_internals(list, &in);
    const struct { const char *name; size_t value; } rows[] = {
        {"elements", in.elements}, {"live_value_bytes", in.live_value_bytes},
        {"dead_value_bytes", in.dead_value_bytes}, {"value_bytes_allocated", in.value_bytes_allocated},
        {in.units_name, in.units}, {"front_slack", in.front_slack}, {"back_slack", in.back_slack},
        {"order_structure_bytes", in.order_structure_bytes}, {"total_allocated_bytes", in.total_allocated_bytes},
    };
    gr_reply_map_begin(reply, 1 + sizeof rows / sizeof rows[0]);
    gr_reply_bulk(reply, (const uint8_t *)"representation", 14);
    gr_reply_bulk(reply, (const uint8_t *)in.representation, strlen(in.representation));
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        gr_reply_bulk(reply, (const uint8_t *)rows[i].name, strlen(rows[i].name));
        gr_reply_integer(reply, (int64_t)rows[i].value);
    }
}
