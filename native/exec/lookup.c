/* lookup.c — the commands' shared key lookups and writes (lookup.h). */
#include "exec/lookup.h"

#include "exec/blocking.h"
#include "exec/transaction.h"

static int32_t running_db_index(const gr_server_t *db) { return db->current ? db->current->db_index : 0; }

int gr_db_find_typed(gr_server_t *db, gr_bytes_t key, uint8_t type, int for_write, void **value, gr_reply_t *reply) {
    gr_ks_entry_t *entry = for_write ? gr_db_find_live(db, key) : gr_db_lookup(db, key);
    *value = NULL;
    if (!entry) return 0;
    if (entry->type != type) {
        if (reply) gr_reply_wrongtype(reply);
        return -1;
    }
    *value = entry->value;
    return 1;
}

gr_ks_entry_t *gr_db_add_key(gr_server_t *db, gr_bytes_t key, uint8_t type, void *value) {
    gr_ks_entry_t *entry = gr_ks_add(db->keyspace, key.data, key.length, type, value);
    if (entry) gr_blocking_signal(db, running_db_index(db), key.data, key.length);
    return entry;
}

int gr_db_set_key(gr_server_t *db, gr_bytes_t key, uint8_t type, void *value) {
    gr_ks_entry_t *entry = gr_db_find_live(db, key);
    if (entry) {
        gr_ks_replace_value(db->keyspace, entry, type, value);
        gr_blocking_signal(db, running_db_index(db), key.data, key.length);   /* waiters check the type */
    } else if (!gr_db_add_key(db, key, type, value)) {
        return -1;
    }
    gr_watch_touch_current(db, key);
    return 0;
}

int gr_db_delete_key(gr_server_t *db, gr_bytes_t key) {
    if (!gr_ks_delete(db->keyspace, key.data, key.length)) return 0;
    gr_watch_touch_current(db, key);
    return 1;
}

void gr_db_mark_changed(gr_server_t *db, gr_bytes_t key, int64_t changes) {
    gr_db_count_changes(db, changes);
    gr_watch_touch_current(db, key);
}
