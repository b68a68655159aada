/* lookup.h — the commands' shared ways to reach and change a key, as Redis's db.c gives its
 * commands lookupKeyRead/lookupKeyWrite with checkType, dbAdd, setKey and dbDelete with
 * signalModifiedKey. Every family uses these rather than a copy of its own, so WATCH, blocked
 * clients, the change count and keyspace events ("new" only for a key that did not exist) see
 * every family's writes the same way.
 */
#ifndef GR_LOOKUP_H
#define GR_LOOKUP_H

#include <stdint.h>

#include "core/bytes.h"
#include "exec/db.h"

/* The value of type under key: 1 found (*value set), 0 absent (*value NULL), -1 another type
 * (WRONGTYPE replied when reply is not NULL). for_write: lookupKeyWrite (no hit or miss
 * counted, access time untouched); else lookupKeyRead. */
int gr_db_find_typed(gr_server_t *db, gr_bytes_t key, uint8_t type, int for_write, void **value, gr_reply_t *reply);

/* dbAdd: value of type under key, which must not exist ("new" is published, a client blocked
 * on key is told). The entry, or NULL on OOM (value not freed). */
gr_ks_entry_t *gr_db_add_key(gr_server_t *db, gr_bytes_t key, uint8_t type, void *value);

/* setKey: value of type under key, replacing what is there in place (its TTL dropped; no "new"
 * for a key that existed) or adding it; blocked clients told, WATCH touched. 0, or -1 on OOM
 * (value not freed, nothing changed). */
int gr_db_set_key(gr_server_t *db, gr_bytes_t key, uint8_t type, void *value);

/* dbDelete + signalModifiedKey: 1 deleted, 0 absent. */
int gr_db_delete_key(gr_server_t *db, gr_bytes_t key);

/* A command changed key: changes added to the change count, WATCH touched (the row's event
 * follows from the touch). */
void gr_db_mark_changed(gr_server_t *db, gr_bytes_t key, int64_t changes);

#endif
