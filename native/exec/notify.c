/* notify.c — keyspace notifications (notify.h): the flag letters, the publish, and the events
 * a call records while it runs. */
#include "exec/notify.h"

#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "exec/call.h"
#include "exec/command.h"
#include "exec/db.h"

static const struct { char letter; int flag; } letters[] = {
    {'g', GR_NOTIFY_GENERIC}, {'$', GR_NOTIFY_STRING}, {'l', GR_NOTIFY_LIST}, {'s', GR_NOTIFY_SET},
    {'h', GR_NOTIFY_HASH}, {'z', GR_NOTIFY_ZSET}, {'x', GR_NOTIFY_EXPIRED}, {'e', GR_NOTIFY_EVICTED},
    {'t', GR_NOTIFY_STREAM}, {'d', GR_NOTIFY_MODULE}, {'n', GR_NOTIFY_NEW},
    {'K', GR_NOTIFY_KEYSPACE}, {'E', GR_NOTIFY_KEYEVENT}, {'m', GR_NOTIFY_KEY_MISS},
};

int gr_notify_parse_flags(const char *text) {
    int flags = 0;
    for (const char *c = text; *c; c++) {
        if (*c == 'A') { flags |= GR_NOTIFY_ALL; continue; }
        int known = 0;
        for (size_t i = 0; i < sizeof letters / sizeof letters[0]; i++)
            if (letters[i].letter == *c) { flags |= letters[i].flag; known = 1; }
        if (!known) return -1;
    }
    /* every lettered class is A, arrays' events included (they have no letter) */
    const int lettered = GR_NOTIFY_ALL & ~GR_NOTIFY_ARRAY;
    if ((flags & lettered) == lettered) flags |= GR_NOTIFY_ARRAY;
    return flags;
}

/* Redis's order: "A" for the whole class set (else each class letter), then K, E, m. */
void gr_notify_flags_text(int flags, char *out, size_t size) {
    size_t n = 0;
    if (!size) return;
    int all = (flags & GR_NOTIFY_ALL) == GR_NOTIFY_ALL;
    if (all && n + 1 < size) out[n++] = 'A';
    for (size_t i = 0; i < sizeof letters / sizeof letters[0] && n + 1 < size; i++) {
        int is_class = letters[i].flag != GR_NOTIFY_KEYSPACE && letters[i].flag != GR_NOTIFY_KEYEVENT &&
                       letters[i].flag != GR_NOTIFY_KEY_MISS;
        if (is_class && all) continue;
        if (flags & letters[i].flag) out[n++] = letters[i].letter;
    }
    out[n] = '\0';
}

void gr_notify_publish(gr_server_t *db, int type, const char *event, gr_bytes_t key, int dbid) {
    int flags = db->notify_flags;
    if (!(flags & type)) return;
    size_t event_length = strlen(event);
    char prefix[48];
    gr_bytes_t event_bytes = {(const uint8_t *)event, (uint32_t)event_length};
    if (flags & GR_NOTIFY_KEYSPACE) {
        int n = snprintf(prefix, sizeof prefix, "__keyspace@%d__:", dbid);
        size_t length = (size_t)n + key.length;
        uint8_t *channel = gr_mem_alloc(length ? length : 1, GR_MEM_OTHER);
        if (channel) {
            memcpy(channel, prefix, (size_t)n);
            if (key.length) memcpy(channel + n, key.data, key.length);
            gr_pubsub_publish(db->pubsub, (gr_bytes_t){channel, (uint32_t)length}, event_bytes);
            gr_mem_free(channel, GR_MEM_OTHER);
        }
    }
    if (flags & GR_NOTIFY_KEYEVENT) {
        char channel[160];
        int n = snprintf(channel, sizeof channel, "__keyevent@%d__:%s", dbid, event);
        if (n > 0 && (size_t)n < sizeof channel)
            gr_pubsub_publish(db->pubsub, (gr_bytes_t){(const uint8_t *)channel, (uint32_t)n}, key);
    }
}

/* ---- the events of the running call ----
 *
 * While a command runs, each key it touched, each key it added and each event its handler
 * stated is recorded in order in db->notify_records (a copy of the key: the command may free
 * it). A record is its head followed by the key's bytes. When the call ends, "new" and stated
 * events are published as recorded; touched keys get the row's default event (exec/call.h)
 * unless the handler stated its events, a key touched twice in a row once, and a key the
 * command left missing "del" as the row's gone says. */

typedef struct record_head {
    const char *event;     /* NULL: a touched key */
    int32_t type;
    int32_t dbid;          /* the event's database; -1: the call's */
    uint32_t length;
} record_head_t;

static void record(gr_server_t *db, int32_t dbid, int type, const char *event, gr_bytes_t key) {
    size_t need = db->notify_records_length + sizeof(record_head_t) + key.length;
    if (need > db->notify_records_capacity) {
        size_t capacity = db->notify_records_capacity ? db->notify_records_capacity * 2 : 256;
        while (capacity < need) capacity *= 2;
        uint8_t *grown = gr_mem_realloc(db->notify_records, capacity, GR_MEM_OTHER);
        if (!grown) return;
        db->notify_records = grown;
        db->notify_records_capacity = capacity;
    }
    record_head_t head = {event, type, dbid, key.length};
    memcpy(db->notify_records + db->notify_records_length, &head, sizeof head);
    if (key.length) memcpy(db->notify_records + db->notify_records_length + sizeof head, key.data, key.length);
    db->notify_records_length = need;
}

void gr_notify_record_touch(gr_server_t *db, gr_bytes_t key) {
    if (db->call) record(db, -1, 0, NULL, key);
}

void gr_notify_record_new(gr_server_t *db, int32_t dbid, gr_bytes_t key) {
    if (db->call) record(db, dbid, GR_NOTIFY_NEW, "new", key);
    else gr_notify_publish(db, GR_NOTIFY_NEW, "new", key, dbid);
}

void gr_call_notify_db_slow(gr_server_t *db, int32_t dbid, int type, const char *event, gr_bytes_t key) {
    if (!db->call) {
        gr_notify_publish(db, type, event, key, dbid >= 0 ? dbid : db->current ? db->current->db_index : 0);
        return;
    }
    db->call->events_stated = 1;
    if (db->notify_flags & type) record(db, dbid, type, event, key);
}

void gr_call_events_stated(gr_server_t *db) {
    if (db->call) db->call->events_stated = 1;
}

void gr_notify_call_end(gr_server_t *db, gr_call_t *call) {
    size_t start = call->records_start, end = db->notify_records_length;
    if (end <= start) return;
    const gr_command_t *row = call->row;
    int type = row ? row->notify.type : 0;
    const char *event = row ? row->notify.event : NULL;
    int apply_default = event && !call->events_stated, gone = row ? row->notify.gone : GR_GONE_NOTHING;
    int32_t dbid = call->db_index;
    gr_bytes_t previous = {NULL, 0};
    for (size_t at = start; at < end;) {
        record_head_t head;
        memcpy(&head, db->notify_records + at, sizeof head);
        gr_bytes_t key = {db->notify_records + at + sizeof head, head.length};
        at += sizeof head + head.length;
        if (head.event) {
            if (db->notify_flags & head.type)
                gr_notify_publish(db, head.type, head.event, key, head.dbid >= 0 ? head.dbid : dbid);
            continue;
        }
        if (!apply_default) continue;
        int repeated = previous.data && previous.length == key.length && !memcmp(previous.data, key.data, key.length);
        previous = key;
        if (repeated) continue;
        int missing = gone != GR_GONE_NOTHING && !gr_ks_find(db->keyspaces[dbid], key.data, key.length);
        if (!missing || gone == GR_GONE_ALSO_DEL) gr_notify_publish(db, type, event, key, dbid);
        if (missing) gr_notify_publish(db, GR_NOTIFY_GENERIC, "del", key, dbid);
    }
    db->notify_records_length = start;
}
