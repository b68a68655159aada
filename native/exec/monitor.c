/* monitor.c — MONITOR's connections and the line each call is fed as (monitor.h). */
#include "exec/monitor.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "exec/db.h"
#include "exec/server_text.h"

int gr_monitor_add(gr_server_t *db, gr_connection_t *conn) {
    if (conn->monitor) return 0;
    if (db->monitor_count == db->monitor_capacity) {
        size_t capacity = db->monitor_capacity ? db->monitor_capacity * 2 : 4;
        gr_connection_t **monitors = realloc(db->monitors, capacity * sizeof *monitors);
        if (!monitors) return -1;
        db->monitors = monitors;
        db->monitor_capacity = capacity;
    }
    db->monitors[db->monitor_count++] = conn;
    conn->monitor = 1;
    return 0;
}

void gr_monitor_remove(gr_server_t *db, gr_connection_t *conn) {
    if (!conn->monitor) return;
    for (size_t i = 0; i < db->monitor_count; i++)
        if (db->monitors[i] == conn) {
            db->monitors[i] = db->monitors[--db->monitor_count];
            break;
        }
    conn->monitor = 0;
}

/* Raw bytes onto the line. */
static void put(gr_text_t *l, const char *bytes, size_t n) { gr_text_append(l, "%.*s", (int)n, bytes); }

/* Redis's sdscatrepr: "..." with \\ \" \n \r \t \a \b escaped and other unprintables as \xHH. */
static void put_quoted(gr_text_t *l, const uint8_t *bytes, size_t n) {
    put(l, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        char escaped[5];
        switch (bytes[i]) {
        case '\\': put(l, "\\\\", 2); break;
        case '"': put(l, "\\\"", 2); break;
        case '\n': put(l, "\\n", 2); break;
        case '\r': put(l, "\\r", 2); break;
        case '\t': put(l, "\\t", 2); break;
        case '\a': put(l, "\\a", 2); break;
        case '\b': put(l, "\\b", 2); break;
        default:
            if (isprint(bytes[i])) put(l, (const char *)&bytes[i], 1);
            else { snprintf(escaped, sizeof escaped, "\\x%02x", bytes[i]); put(l, escaped, 4); }
        }
    }
    put(l, "\"", 1);
}

static void put_argument(gr_text_t *l, const gr_call_t *call, size_t position, const uint8_t *bytes, size_t n) {
    if (position) put(l, " ", 1);
    if (position < 64 && (call->redacted >> position) & 1) put(l, "\"(redacted)\"", 12);
    else put_quoted(l, bytes, n);
}

void gr_monitor_feed(gr_server_t *db, const gr_call_t *call) {
    gr_text_t l;
    if (gr_text_init(&l, 256) != 0) return;
    struct timeval now;
    gettimeofday(&now, NULL);
    char head[600];
    const gr_connection_t *from = call->conn;
    int database = from ? (int)from->db_index : (int)call->db_index;   /* after the call: SELECT shows its choice */
    int n;
    if (from && from->kind == GR_CONN_UNIX)
        n = snprintf(head, sizeof head, "+%ld.%06ld [%d unix:%s] ", (long)now.tv_sec, (long)now.tv_usec,
                     database, db->config.unixsocket);
    else
        n = snprintf(head, sizeof head, "+%ld.%06ld [%d %s] ", (long)now.tv_sec, (long)now.tv_usec,
                     database, from ? from->addr : "");
    put(&l, head, n > 0 && (size_t)n < sizeof head ? (size_t)n : 0);
    if (call->argc) {
        for (size_t i = 0; i < call->argc; i++) put_argument(&l, call, i, call->argv[i], call->argv_length[i]);
    } else if (call->request && call->row) {
        size_t position = 0;
        char name[64];   /* the row's name, upper-cased as clients send it */
        size_t name_length = strlen(call->row->name) < sizeof name ? strlen(call->row->name) : sizeof name;
        for (size_t i = 0; i < name_length; i++) name[i] = (char)toupper((unsigned char)call->row->name[i]);
        put_argument(&l, call, position++, (const uint8_t *)name, name_length);
        const gr_bytes_t *fields[3] = {&call->request->key, &call->request->arg1, &call->request->arg2};
        for (int i = 0; i < 3; i++)
            if (fields[i]->data) put_argument(&l, call, position++, fields[i]->data, fields[i]->length);
        for (uint32_t i = 0; i < call->request->item_count; i++)
            put_argument(&l, call, position++, call->request->items[i].data, call->request->items[i].length);
    }
    put(&l, "\r\n", 2);
    if (!l.failed) {
        gr_bytes_t none = {NULL, 0}, payload = {(const uint8_t *)l.data, (uint32_t)l.length};
        for (size_t i = 0; i < db->monitor_count; i++) {
            gr_connection_t *monitor = db->monitors[i];
            if (monitor->subscriber.deliver)
                monitor->subscriber.deliver(&monitor->subscriber, GR_PUBSUB_MONITOR, none, none, payload);
        }
    }
    gr_text_free(&l);
}
