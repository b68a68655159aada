/* notify.c — keyspace notifications (notify.h): the flag letters and the two publishes. */
#include "exec/notify.h"

#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "exec/db.h"
#include "exec/server_text.h"

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

void gr_notify_publish(gr_db_t *db, int type, const char *event, gr_bytes_t key, int dbid) {
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

/* ---- the events of the running command ----
 *
 * Every command that changes a key already says so through gr_watch_touch_current (WATCH's
 * signal, Redis's signalModifiedKey); while notifications are on, that also records the key
 * here (a copy: the command may free it). After the command, gr_notify_command_done names the
 * event each recorded key gets from the command's row below, as Redis's handlers name them
 * ("incrby" for INCR, "zincr" for ZINCRBY, "rename_from"/"rename_to", "lpop"/"rpush" for an
 * LMOVE), and, as Redis, a list, set, hash or sorted set the command emptied also gets "del";
 * an EXPIRE whose time has passed gets "del" instead of "expire". A command without a row
 * notifies nothing. Expiry ("expired") is notified where keys expire (db.c). */

typedef struct event_row {
    const char *command;     /* the table's name, without a goblin.pma./goblin.seg. prefix */
    int type;
    const char *event;       /* the first key's event */
    const char *other;       /* later keys' event (RENAME's destination ...), or NULL: the same */
} event_row_t;

static const event_row_t events[] = {
    {"set", GR_NOTIFY_STRING, "set", NULL}, {"setnx", GR_NOTIFY_STRING, "set", NULL},
    {"setex", GR_NOTIFY_STRING, "set", NULL}, {"psetex", GR_NOTIFY_STRING, "set", NULL},
    {"getset", GR_NOTIFY_STRING, "set", NULL}, {"mset", GR_NOTIFY_STRING, "set", NULL},
    {"msetnx", GR_NOTIFY_STRING, "set", NULL}, {"append", GR_NOTIFY_STRING, "append", NULL},
    {"setrange", GR_NOTIFY_STRING, "setrange", NULL}, {"incr", GR_NOTIFY_STRING, "incrby", NULL},
    {"decr", GR_NOTIFY_STRING, "incrby", NULL}, {"incrby", GR_NOTIFY_STRING, "incrby", NULL},
    {"decrby", GR_NOTIFY_STRING, "incrby", NULL}, {"incrbyfloat", GR_NOTIFY_STRING, "incrbyfloat", NULL},
    {"setbit", GR_NOTIFY_STRING, "setbit", NULL}, {"bitfield", GR_NOTIFY_STRING, "setbit", NULL},
    {"bitop", GR_NOTIFY_STRING, "set", NULL},
    {"getdel", GR_NOTIFY_GENERIC, "del", NULL}, {"getex", GR_NOTIFY_GENERIC, "expire", NULL},
    {"del", GR_NOTIFY_GENERIC, "del", NULL}, {"unlink", GR_NOTIFY_GENERIC, "del", NULL},
    {"expire", GR_NOTIFY_GENERIC, "expire", NULL}, {"pexpire", GR_NOTIFY_GENERIC, "expire", NULL},
    {"expireat", GR_NOTIFY_GENERIC, "expire", NULL}, {"pexpireat", GR_NOTIFY_GENERIC, "expire", NULL},
    {"persist", GR_NOTIFY_GENERIC, "persist", NULL}, {"rename", GR_NOTIFY_GENERIC, "rename_from", "rename_to"},
    {"renamenx", GR_NOTIFY_GENERIC, "rename_from", "rename_to"}, {"restore", GR_NOTIFY_GENERIC, "restore", NULL},
    {"copy", GR_NOTIFY_GENERIC, "copy_to", NULL}, {"sort", GR_NOTIFY_LIST, "sortstore", NULL},
    {"lpush", GR_NOTIFY_LIST, "lpush", NULL}, {"rpush", GR_NOTIFY_LIST, "rpush", NULL},
    {"lpushx", GR_NOTIFY_LIST, "lpush", NULL}, {"rpushx", GR_NOTIFY_LIST, "rpush", NULL},
    {"lpop", GR_NOTIFY_LIST, "lpop", NULL}, {"rpop", GR_NOTIFY_LIST, "rpop", NULL},
    {"blpop", GR_NOTIFY_LIST, "lpop", NULL}, {"brpop", GR_NOTIFY_LIST, "rpop", NULL},
    {"linsert", GR_NOTIFY_LIST, "linsert", NULL}, {"lset", GR_NOTIFY_LIST, "lset", NULL},
    {"ltrim", GR_NOTIFY_LIST, "ltrim", NULL}, {"lrem", GR_NOTIFY_LIST, "lrem", NULL},
    {"rpoplpush", GR_NOTIFY_LIST, "rpop", "lpush"}, {"brpoplpush", GR_NOTIFY_LIST, "rpop", "lpush"},
    {"lmove", GR_NOTIFY_LIST, NULL, NULL}, {"blmove", GR_NOTIFY_LIST, NULL, NULL},
    {"lmpop", GR_NOTIFY_LIST, NULL, NULL}, {"blmpop", GR_NOTIFY_LIST, NULL, NULL},
    {"sadd", GR_NOTIFY_SET, "sadd", NULL}, {"srem", GR_NOTIFY_SET, "srem", NULL},
    {"spop", GR_NOTIFY_SET, "spop", NULL}, {"smove", GR_NOTIFY_SET, "srem", "sadd"},
    {"sinterstore", GR_NOTIFY_SET, "sinterstore", NULL}, {"sunionstore", GR_NOTIFY_SET, "sunionstore", NULL},
    {"sdiffstore", GR_NOTIFY_SET, "sdiffstore", NULL},
    {"hset", GR_NOTIFY_HASH, "hset", NULL}, {"hmset", GR_NOTIFY_HASH, "hset", NULL},
    {"hsetnx", GR_NOTIFY_HASH, "hset", NULL}, {"hdel", GR_NOTIFY_HASH, "hdel", NULL},
    {"hincrby", GR_NOTIFY_HASH, "hincrby", NULL}, {"hincrbyfloat", GR_NOTIFY_HASH, "hincrbyfloat", NULL},
    {"zadd", GR_NOTIFY_ZSET, "zadd", NULL}, {"zincrby", GR_NOTIFY_ZSET, "zincr", NULL},
    {"zrem", GR_NOTIFY_ZSET, "zrem", NULL}, {"zremrangebyscore", GR_NOTIFY_ZSET, "zremrangebyscore", NULL},
    {"zremrangebyrank", GR_NOTIFY_ZSET, "zremrangebyrank", NULL},
    {"zremrangebylex", GR_NOTIFY_ZSET, "zremrangebylex", NULL}, {"zpopmin", GR_NOTIFY_ZSET, "zpopmin", NULL},
    {"zpopmax", GR_NOTIFY_ZSET, "zpopmax", NULL}, {"bzpopmin", GR_NOTIFY_ZSET, "zpopmin", NULL},
    {"bzpopmax", GR_NOTIFY_ZSET, "zpopmax", NULL}, {"zmpop", GR_NOTIFY_ZSET, NULL, NULL},
    {"bzmpop", GR_NOTIFY_ZSET, NULL, NULL}, {"zunionstore", GR_NOTIFY_ZSET, "zunionstore", NULL},
    {"zinterstore", GR_NOTIFY_ZSET, "zinterstore", NULL}, {"zdiffstore", GR_NOTIFY_ZSET, "zdiffstore", NULL},
    {"zrangestore", GR_NOTIFY_ZSET, "zrangestore", NULL},
};

#define NEW_KEY_MARK 0x80000000u   /* a record's length word: this key was added ("new") */

static void record(gr_db_t *db, gr_bytes_t key, uint32_t mark);

void gr_notify_record(gr_db_t *db, gr_bytes_t key) { record(db, key, 0); }

void gr_notify_record_new(gr_db_t *db, gr_bytes_t key) { record(db, key, NEW_KEY_MARK); }

static void record(gr_db_t *db, gr_bytes_t key, uint32_t mark) {
    if (key.length & NEW_KEY_MARK) return;
    size_t need = db->notify_keys_length + 4 + key.length;
    if (need > db->notify_keys_capacity) {
        size_t capacity = db->notify_keys_capacity ? db->notify_keys_capacity * 2 : 256;
        while (capacity < need) capacity *= 2;
        uint8_t *grown = gr_mem_realloc(db->notify_keys, capacity, GR_MEM_OTHER);
        if (!grown) return;
        db->notify_keys = grown;
        db->notify_keys_capacity = capacity;
    }
    uint32_t word = key.length | mark;
    memcpy(db->notify_keys + db->notify_keys_length, &word, 4);
    if (key.length) memcpy(db->notify_keys + db->notify_keys_length + 4, key.data, key.length);
    db->notify_keys_length = need;
}

static int argv_has_word(size_t argc, const uint8_t *const *argv, const size_t *argv_length, const char *word) {
    for (size_t i = 1; i < argc; i++)
        if (gr_word_is(argv[i], argv_length[i], word)) return 1;
    return 0;
}

/* The list end words of an LMOVE/BLMOVE (from, to) or LMPOP/BLMPOP (from): argv's, or the typed request's. */
static void list_ends(const gr_request_t *request, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                      int *from_right, int *to_right) {
    *from_right = *to_right = 0;
    if (argv) {
        int seen = 0;
        for (size_t i = 1; i < argc; i++) {
            int left = gr_word_is(argv[i], argv_length[i], "left"), right = gr_word_is(argv[i], argv_length[i], "right");
            if (!left && !right) continue;
            if (seen++ == 0) *from_right = right;
            else *to_right = right;
        }
    } else if (request) {
        *from_right = request->end == GR_LIST_END_RIGHT;
        *to_right = request->to_end == GR_LIST_END_RIGHT;
    }
}

/* Walks the recorded keys: 0 past the end. */
typedef struct record_cursor {
    const uint8_t *at, *end;
} record_cursor_t;

static int next_record(record_cursor_t *cursor, gr_bytes_t *key, int *is_new) {
    if (cursor->at >= cursor->end) return 0;
    uint32_t word;
    memcpy(&word, cursor->at, 4);
    key->data = cursor->at + 4;
    key->length = word & ~NEW_KEY_MARK;
    *is_new = (word & NEW_KEY_MARK) != 0;
    cursor->at += 4 + key->length;
    return 1;
}

void gr_notify_command_done(gr_db_t *db, const char *name, const gr_request_t *request, size_t argc,
                            const uint8_t *const *argv, const size_t *argv_length) {
    if (!db->notify_keys_length) return;
    size_t length = db->notify_keys_length;
    db->notify_keys_length = 0;
    if (!strncmp(name, "goblin.pma.", 11) || !strncmp(name, "goblin.seg.", 11)) name += 11;
    const event_row_t *row = NULL;
    for (size_t i = 0; i < sizeof events / sizeof events[0] && !row; i++)
        if (!strcmp(events[i].command, name)) row = &events[i];
    /* the records: keys the command changed in order, "new" marks where keys were added */
    const uint8_t *records = db->notify_keys, *records_end = db->notify_keys + length;
    record_cursor_t cursor;
    gr_bytes_t key;
    int is_new;
    if (!row) {                                        /* no events of its own; "new" still counts */
        for (cursor = (record_cursor_t){records, records_end}; next_record(&cursor, &key, &is_new);)
            if (is_new) gr_notify(db, GR_NOTIFY_NEW, "new", key);
        return;
    }
    const char *first = row->event, *other = row->other ? row->other : row->event;
    int from_right, to_right;
    if (!first) {
        list_ends(request, argc, argv, argv_length, &from_right, &to_right);
        if (row->type == GR_NOTIFY_ZSET) {
            first = other = argv && argv_has_word(argc, argv, argv_length, "max") ? "zpopmax" : "zpopmin";
        } else {
            first = from_right ? "rpop" : "lpop";
            other = to_right ? "rpush" : "lpush";
            if (!strcmp(name, "lmpop") || !strcmp(name, "blmpop")) other = first;
        }
    }
    int container = row->type & (GR_NOTIFY_LIST | GR_NOTIFY_SET | GR_NOTIFY_HASH | GR_NOTIFY_ZSET);
    int is_getex = !strcmp(name, "getex");
    int is_expire = !is_getex && !strcmp(row->event ? row->event : "", "expire");
    int sets_expiry = (!strcmp(name, "set") && !(argv && argv_has_word(argc, argv, argv_length, "keepttl"))) ||
                      !strcmp(name, "setex") || !strcmp(name, "psetex");
    gr_bytes_t changed[2];
    size_t changed_count = 0;
    for (cursor = (record_cursor_t){records, records_end}; next_record(&cursor, &key, &is_new);)
        if (!is_new && changed_count++ < 2) changed[changed_count - 1] = key;
    /* RENAME adds its destination anew in Redis (dbAdd): "new" comes before rename_from */
    if (!strncmp(name, "rename", 6) && changed_count == 2) gr_notify(db, GR_NOTIFY_NEW, "new", changed[1]);
    /* A move (LMOVE, RPOPLPUSH and their blocking forms) changes source then destination; Redis
     * notifies the destination's "new" and push first, then the pop from the source. */
    int moves = !strcmp(name, "lmove") || !strcmp(name, "blmove") || !strcmp(name, "rpoplpush") ||
                !strcmp(name, "brpoplpush");
    if (moves && changed_count == 2) {
        for (cursor = (record_cursor_t){records, records_end}; next_record(&cursor, &key, &is_new);)
            if (is_new) gr_notify(db, GR_NOTIFY_NEW, "new", key);
        gr_notify(db, row->type, other, changed[1]);
        gr_notify(db, row->type, first, changed[0]);
        if (!gr_ks_find(db->keyspace, changed[0].data, changed[0].length)) gr_notify(db, GR_NOTIFY_GENERIC, "del", changed[0]);
        return;
    }
    gr_bytes_t previous = {NULL, 0};
    size_t index = 0;
    for (cursor = (record_cursor_t){records, records_end}; next_record(&cursor, &key, &is_new);) {
        if (is_new) {
            gr_notify(db, GR_NOTIFY_NEW, "new", key);
            continue;
        }
        /* a command that touched one key twice in a row (HDEL of the last field) notifies once */
        int repeated = previous.data && previous.length == key.length && !memcmp(previous.data, key.data, key.length);
        previous = key;
        const char *event = index++ == 0 ? first : other;
        if (repeated && !row->other) continue;
        int exists = gr_ks_find(db->keyspace, key.data, key.length) != NULL;
        size_t event_length = strlen(event);
        int stored = event_length > 5 && !strcmp(event + event_length - 5, "store");
        if (!exists && (is_expire || stored)) {        /* an expire in the past, an empty STORE: only "del" */
            gr_notify(db, GR_NOTIFY_GENERIC, "del", key);
            continue;
        }
        gr_ks_entry_t *entry = exists ? gr_ks_find(db->keyspace, key.data, key.length) : NULL;
        if (is_getex) event = entry && entry->expire_at_ms < 0 ? "persist" : "expire";
        gr_notify(db, row->type, event, key);
        if (container && !exists) gr_notify(db, GR_NOTIFY_GENERIC, "del", key);
        /* SET with EX/PX/EXAT/PXAT, SETEX, PSETEX: "set" then "expire" (not for KEEPTTL) */
        if (sets_expiry && entry && entry->expire_at_ms >= 0) gr_notify(db, GR_NOTIFY_GENERIC, "expire", key);
    }
}
