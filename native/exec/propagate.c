/* propagate.c — the write-effect stream (propagate.h): RESP encoding of each command's effect,
 * SELECT and MULTI/EXEC framing, the calls a handler states its effect with, the default
 * effect when it states none, and the handoff to the sink (persist/aof.c) before replies leave.
 */
#include "exec/propagate.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/call.h"
#include "exec/command.h"
#include "exec/db.h"

void gr_propagation_init(gr_propagation_t *p) {
    memset(p, 0, sizeof *p);
    p->selected = -1;
}

void gr_propagation_release(gr_propagation_t *p) {
    free(p->data);
    free(p->rewrite);
    free(p->replication_only);
    p->data = p->rewrite = p->replication_only = NULL;
    p->length = p->capacity = p->rewrite_length = p->rewrite_capacity = 0;
    p->replication_only_length = p->replication_only_capacity = 0;
}

/* ---- the RESP writer over a growable buffer ---- */

static int grow(uint8_t **data, size_t *capacity, size_t needed) {
    if (needed <= *capacity) return 0;
    size_t size = *capacity ? *capacity : 4096;
    while (size < needed) size *= 2;
    uint8_t *grown = realloc(*data, size);
    if (!grown) return -1;
    *data = grown;
    *capacity = size;
    return 0;
}

/* "<kind><length>\r\n", then (a bulk string, kind '$') the bytes and CRLF, appended to a side
 * buffer (the rewrite, the replication-only entries); kind '*': an array's header, length its
 * count, data unused. -1 out of memory, the buffer as it was. */
static int append_resp(uint8_t **buffer, size_t *length, size_t *capacity, char kind, const uint8_t *data,
                       size_t count) {
    char text[32];
    int n = snprintf(text, sizeof text, "%c%zu\r\n", kind, count);
    size_t body = kind == '$' ? count + 2 : 0;
    if (grow(buffer, capacity, *length + (size_t)n + body) != 0) return -1;
    memcpy(*buffer + *length, text, (size_t)n);
    if (body) {
        memcpy(*buffer + *length + n, data, count);
        memcpy(*buffer + *length + n + count, "\r\n", 2);
    }
    *length += (size_t)n + body;
    return 0;
}

static void put(gr_propagation_t *p, const void *bytes, size_t length) {
    if (p->skipping) return;
    if (grow(&p->data, &p->capacity, p->length + length) != 0) {   /* drop the whole entry, never half */
        p->failed = 1;
        p->skipping = 1;
        p->length = p->entry_start;
        p->selected = -1;
        return;
    }
    memcpy(p->data + p->length, bytes, length);
    p->length += length;
}

static void put_header(gr_propagation_t *p, char kind, uint64_t count) {
    char text[32];
    int n = snprintf(text, sizeof text, "%c%llu\r\n", kind, (unsigned long long)count);
    put(p, text, (size_t)n);
}

static void put_bulk(gr_propagation_t *p, const uint8_t *data, size_t length) {
    put_header(p, '$', length);
    put(p, data, length);
    put(p, "\r\n", 2);
}

static void put_word(gr_propagation_t *p, const char *word) { put_bulk(p, (const uint8_t *)word, strlen(word)); }

static void put_int(gr_propagation_t *p, int64_t value) {
    char text[24];
    int n = snprintf(text, sizeof text, "%lld", (long long)value);
    put_bulk(p, (const uint8_t *)text, (size_t)n);
}

/* The command's name as its row has it, upper-cased ("goblin.pma.lpush" -> GOBLIN.PMA.LPUSH). */
static void put_name(gr_propagation_t *p, const char *name) {
    char upper[64];
    size_t n = strlen(name);
    if (n >= sizeof upper) { put_word(p, name); return; }
    for (size_t i = 0; i < n; i++) upper[i] = (char)toupper((unsigned char)name[i]);
    put_bulk(p, (const uint8_t *)upper, n);
}

/* Every entry starts here: MULTI once inside EXEC, SELECT when the database changes, then
 * the array header of argc arguments. */
static void begin_entry(gr_server_t *db, int32_t db_index, uint64_t argc) {
    gr_propagation_t *p = &db->propagation;
    p->skipping = 0;
    p->entry_start = p->length;
    if (p->in_exec && !p->multi_written) {
        put(p, "*1\r\n$5\r\nMULTI\r\n", 15);
        p->multi_written = 1;
    }
    if (db_index != p->selected) {
        put_header(p, '*', 2);
        put_word(p, "SELECT");
        put_int(p, db_index);
        p->selected = db_index;
    }
    put_header(p, '*', argc);
}

void gr_propagate_argv(gr_server_t *db, int32_t db_index, size_t argc, const uint8_t *const *argv,
                       const size_t *argv_length) {
    if (!gr_propagation_on(&db->propagation)) return;
    begin_entry(db, db_index, argc);
    for (size_t i = 0; i < argc; i++) put_bulk(&db->propagation, argv[i], argv_length[i]);
}

void gr_propagate_del(gr_server_t *db, int32_t db_index, const uint8_t *key, size_t key_length) {
    if (!gr_propagation_on(&db->propagation)) return;
    begin_entry(db, db_index, 2);
    put_word(&db->propagation, "DEL");
    put_bulk(&db->propagation, key, key_length);
}

/* ---- a handler's effect ---- */

void gr_effect_always(gr_server_t *db) {
    if (db->call) db->call->effect_forced = 1;
}

/* The running call, when its effect goes to the stream; else NULL (and the handler's
 * statement is noted all the same, so no default follows). */
static gr_call_t *stating_call(gr_server_t *db) {
    gr_call_t *call = db->call;
    if (!call) return NULL;
    call->effect_stated = 1;
    return call->propagates && gr_propagation_on(&db->propagation) ? call : NULL;
}

int gr_effect_recorded(gr_server_t *db) {
    gr_call_t *call = db->call;
    return call && call->propagates && gr_propagation_on(&db->propagation);
}

void gr_effect_begin(gr_server_t *db, uint64_t argc) {
    gr_call_t *call = stating_call(db);
    if (call) begin_entry(db, call->db_index, argc);
}

void gr_effect_word(gr_server_t *db, const char *word) {
    if (gr_effect_recorded(db)) put_word(&db->propagation, word);
}

void gr_effect_bulk(gr_server_t *db, const uint8_t *data, size_t length) {
    if (gr_effect_recorded(db)) put_bulk(&db->propagation, data, length);
}

void gr_effect_bytes(gr_server_t *db, gr_bytes_t bytes) { gr_effect_bulk(db, bytes.data, bytes.length); }

void gr_effect_int(gr_server_t *db, int64_t value) {
    if (gr_effect_recorded(db)) put_int(&db->propagation, value);
}

void gr_effect_name(gr_server_t *db) {
    if (gr_effect_recorded(db) && db->call->row) put_name(&db->propagation, db->call->row->name);
}

void gr_effect_family_name(gr_server_t *db, const char *with) {
    if (!gr_effect_recorded(db) || !db->call->row) return;
    const char *name = db->call->row->name, *dot = strrchr(name, '.');
    char family[64];
    size_t prefix = dot ? (size_t)(dot - name) + 1 : 0;
    if (prefix + strlen(with) >= sizeof family) prefix = 0;
    memcpy(family, name, prefix);
    strcpy(family + prefix, with);
    put_name(&db->propagation, family);
}

void gr_effect_argv(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length) {
    gr_call_t *call = stating_call(db);
    if (call) gr_propagate_argv(db, call->db_index, argc, argv, argv_length);
}

void gr_effect_del(gr_server_t *db, gr_bytes_t key) {
    gr_call_t *call = stating_call(db);
    if (call) gr_propagate_del(db, call->db_index, key.data, key.length);
}

void gr_effect_none(gr_server_t *db) { (void)stating_call(db); }

static void rewrite_put(gr_propagation_t *p, const uint8_t *data, size_t length) {
    if (append_resp(&p->rewrite, &p->rewrite_length, &p->rewrite_capacity, '$', data, length) != 0) {
        p->failed = 1;
        return;
    }
    p->rewrite_count++;
}

void gr_effect_open(gr_server_t *db, const char *name, gr_bytes_t key) {
    if (!stating_call(db)) return;
    gr_propagation_t *p = &db->propagation;
    p->rewriting = 1;
    p->rewrite_length = 0;
    p->rewrite_count = 0;
    rewrite_put(p, (const uint8_t *)name, strlen(name));
    rewrite_put(p, key.data, key.length);
}

void gr_effect_add(gr_server_t *db, const uint8_t *data, size_t length) {
    gr_propagation_t *p = &db->propagation;
    if (p->rewriting && gr_effect_recorded(db)) rewrite_put(p, data, length);
}

/* ---- the call's end ---- */

static void write_default_effect(gr_server_t *db, gr_call_t *call, gr_propagation_t *p) {
    if (p->rewriting) {
        p->rewriting = 0;
        begin_entry(db, call->db_index, p->rewrite_count);
        put(p, p->rewrite, p->rewrite_length);
        return;
    }
    if (call->effect_stated || (db->dirty <= call->dirty_before && !call->effect_forced)) return;
    if (call->request && call->row && call->row->render) {   /* typed, from either transport */
        call->row->render(db, call->request);
    } else if (call->argc) {
        gr_propagate_argv(db, call->db_index, call->argc, call->argv, call->argv_length);
    } else {
        p->failed = 1;   /* a typed write with no render: the stream lost its effect */
    }
}

void gr_propagate_call_end(gr_server_t *db) {
    gr_call_t *call = db->call;
    gr_propagation_t *p = &db->propagation;
    if (!call || !call->propagates || !gr_propagation_on(p)) return;
    write_default_effect(db, call, p);
    /* WAIT (a primary): the replication offset this client's writes reach once the pending
     * bytes are fed (Redis's c->woff); everything pending counts, so it never falls short */
    if (p->tap && db->current && (call->effect_stated || db->dirty > call->dirty_before) && p->length > p->tapped)
        db->current->repl_peer.woff = db->repl.offset + (int64_t)(p->length - p->tapped);
}

void gr_propagate_exec_begin(gr_server_t *db) {
    if (db->call) db->call->frames_inner = 1;
    if (db->propagation.exec_depth++ > 0) return;
    db->propagation.in_exec = 1;
    db->propagation.multi_written = 0;
    db->propagation.exec_start = db->propagation.length;
    db->propagation.exec_selected = db->propagation.selected;
}

void gr_propagate_exec_discard(gr_server_t *db) {
    gr_propagation_t *p = &db->propagation;
    if (!p->in_exec || p->length < p->exec_start) return;
    p->length = p->exec_start;
    p->selected = p->exec_selected;
    p->multi_written = 0;
    p->in_exec = 0;   /* what was pending before the frame may be flushed now (SHUTDOWN's last write) */
}

/* The tap gets the stream's untapped bytes, then the replication-only entries a frame held. */
static void tap_replication_only(gr_server_t *db) {
    gr_propagation_t *p = &db->propagation;
    if (!p->replication_only_length) return;
    if (p->tap) {
        if (p->tapped > p->length) p->tapped = 0;   /* as gr_propagate_flush */
        if (p->length > p->tapped) p->tap(p->tap_context, db, p->data + p->tapped, p->length - p->tapped);
        p->tapped = p->length;
        p->tap(p->tap_context, db, p->replication_only, p->replication_only_length);
    }
    p->replication_only_length = 0;
}

void gr_propagate_exec_end(gr_server_t *db) {
    gr_propagation_t *p = &db->propagation;
    if (db->call) db->call->frames_inner = 0;
    if (p->exec_depth > 0 && --p->exec_depth > 0) return;
    if (p->in_exec && p->multi_written && gr_propagation_on(p)) put(p, "*1\r\n$4\r\nEXEC\r\n", 14);
    p->in_exec = p->multi_written = 0;
    tap_replication_only(db);
}

void gr_propagate_replication_only(gr_server_t *db, size_t argc, const uint8_t *const *argv,
                                   const size_t *argv_length) {
    gr_propagation_t *p = &db->propagation;
    if (!p->tap) return;
    size_t start = p->replication_only_length;
    int failed = append_resp(&p->replication_only, &p->replication_only_length, &p->replication_only_capacity,
                             '*', NULL, argc);
    for (size_t i = 0; i < argc && !failed; i++)
        failed = append_resp(&p->replication_only, &p->replication_only_length, &p->replication_only_capacity,
                             '$', argv[i], argv_length[i]);
    if (failed) p->replication_only_length = start;   /* out of memory: the replicas' subscribers miss it */
    if (!p->in_exec) tap_replication_only(db);
}

void gr_propagate_sync(gr_server_t *db) {
    gr_propagation_t *p = &db->propagation;
    gr_propagate_flush(db);
    if (p->sync_pending && p->sync && !p->in_exec) {
        p->sync_pending = 0;
        p->sync(p->sink_context, db);
    }
}

void gr_propagate_flush(gr_server_t *db) {
    gr_propagation_t *p = &db->propagation;
    if (p->in_exec) return;
    if (p->tapped > p->length) p->tapped = 0;   /* the pending bytes were dropped (the AOF restarted) */
    if (p->tap && p->length > p->tapped) {
        p->tap(p->tap_context, db, p->data + p->tapped, p->length - p->tapped);
        p->tapped = p->length;
    }
    if (p->sink && (p->length || p->failed)) p->sink(p->sink_context, db);
    if (!p->sink) p->length = 0;
    p->tapped = p->length;   /* what the sink keeps for its retry was tapped already */
    if (p->length == 0 && p->capacity > ((size_t)4 << 20)) {   /* a huge batch does not pin its buffer */
        free(p->data);
        p->data = NULL;
        p->capacity = 0;
    }
}
