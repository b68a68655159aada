/* cmd_replication.c — REPLICAOF/SLAVEOF, ROLE, REPLCONF, SYNC/PSYNC (issue 35).
 *
 * The commands set the state in db->repl (exec/replication.h); the serving loop's link
 * (server/replica.c) connects, resynchronises and applies the primary's stream. Replies and
 * log lines are Redis 7.0's. goblin does not serve replicas yet: SYNC and PSYNC are refused
 * with a clear error.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "commands/commands.h"
#include "core/bytes.h"
#include "core/number.h"
#include "exec/db.h"
#include "exec/server_text.h"

static void log_line(gr_server_t *db, const char *text) {
    if (db->log_line) db->log_line(db->log_context, text);
}

/* REPLICAOF NO ONE: a primary again, with a history of its own that continues this one (Redis's
 * shiftReplicationId: the old id stays valid up to this offset as replid2). */
static void become_primary(gr_server_t *db) {
    gr_replication_t *r = &db->repl;
    memcpy(r->replid2, r->replid, sizeof r->replid2);
    r->second_offset = r->offset + 1;
    gr_repl_new_replid(db);
    r->master_host[0] = '\0';
    r->master_port = 0;
    r->restart = 1;                    /* the loop closes the link */
    r->state = GR_REPL_NONE;
    r->have_cached = 1;
}

void gr_cmd_replicaof(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                      gr_reply_t *reply) {
    (void)argc;
    gr_replication_t *r = &db->repl;
    char line[400];
    if (gr_word_is(argv[1], argv_length[1], "no") && gr_word_is(argv[2], argv_length[2], "one")) {
        if (r->master_port) {
            become_primary(db);
            snprintf(line, sizeof line, "MASTER MODE enabled (user request from 'id=%lld addr=%s')",
                     (long long)(db->current ? db->current->id : 0), db->current ? db->current->addr : "");
            log_line(db, line);
        }
        gr_reply_ok(reply);
        return;
    }
    int64_t port;
    if (gr_bytes_to_int64(argv[2], argv_length[2], &port) != 0) {
        gr_reply_error_text(reply, GR_ERR_NOT_INTEGER, "ERR value is not an integer or out of range");
        return;
    }
    if (port < 0 || port > 65535) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR Invalid master port");
        return;
    }
    if (argv_length[1] >= sizeof r->master_host) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR Invalid master host");
        return;
    }
    if (r->master_port == port && strlen(r->master_host) == argv_length[1] &&
        strncasecmp(r->master_host, (const char *)argv[1], argv_length[1]) == 0) {
        static const char already[] = "OK Already connected to specified master";
        gr_reply_status(reply, already, sizeof already - 1);
        return;
    }
    if (!r->master_port) r->have_cached = 1;   /* its own history: PSYNC it (Redis's cache-master-using-myself) */
    memcpy(r->master_host, argv[1], argv_length[1]);
    r->master_host[argv_length[1]] = '\0';
    r->master_port = port;
    r->restart = 1;
    r->state = GR_REPL_CONNECT;
    snprintf(line, sizeof line, "REPLICAOF %s:%lld enabled (user request from 'id=%lld addr=%s')", r->master_host,
             (long long)port, (long long)(db->current ? db->current->id : 0), db->current ? db->current->addr : "");
    log_line(db, line);
    gr_reply_ok(reply);
}

static const char *state_name(int state) {
    switch (state) {
    case GR_REPL_CONNECT: return "connect";
    case GR_REPL_CONNECTING: return "connecting";
    case GR_REPL_HANDSHAKE: return "handshake";
    case GR_REPL_TRANSFER: return "sync";
    case GR_REPL_CONNECTED: return "connected";
    default: return "none";
    }
}

void gr_cmd_role(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                 gr_reply_t *reply) {
    (void)argc, (void)argv, (void)argv_length;
    const gr_replication_t *r = &db->repl;
    if (!r->master_port) {
        gr_reply_array_begin(reply, 3);
        gr_reply_bulk(reply, (const uint8_t *)"master", 6);
        gr_reply_integer(reply, r->offset);
        gr_reply_array_begin(reply, 0);
        return;
    }
    const char *state = state_name(r->state);
    gr_reply_array_begin(reply, 5);
    gr_reply_bulk(reply, (const uint8_t *)"slave", 5);
    gr_reply_bulk(reply, (const uint8_t *)r->master_host, strlen(r->master_host));
    gr_reply_integer(reply, r->master_port);
    gr_reply_bulk(reply, (const uint8_t *)state, strlen(state));
    gr_reply_integer(reply, r->state == GR_REPL_CONNECTED ? r->offset : -1);
}

/* REPLCONF option value ...: what a replica tells its primary, and GETACK from the primary. */
void gr_cmd_replconf(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                     gr_reply_t *reply) {
    if (argc % 2 == 0) { gr_reply_error_text(reply, GR_ERR_SYNTAX, "ERR syntax error"); return; }
    for (size_t i = 1; i < argc; i += 2) {
        const uint8_t *option = argv[i];
        size_t length = argv_length[i];
        if (gr_word_is(option, length, "getack")) {
            if (db->current && db->current->repl_master) db->repl.getack = 1;   /* the loop sends the ACK */
            return;
        } else if (gr_word_is(option, length, "ack")) {
            return;   /* from a replica: no reply (goblin has none yet) */
        } else if (!gr_word_is(option, length, "listening-port") && !gr_word_is(option, length, "ip-address") &&
                   !gr_word_is(option, length, "capa") && !gr_word_is(option, length, "rdb-only") &&
                   !gr_word_is(option, length, "rdb-filter-only")) {
            char text[160];
            snprintf(text, sizeof text, "ERR Unrecognized REPLCONF option: %.*s", (int)(length > 64 ? 64 : length),
                     (const char *)option);
            gr_reply_error_text(reply, GR_ERR_GENERIC, text);
            return;
        }
    }
    gr_reply_ok(reply);
}

void gr_cmd_sync(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                 gr_reply_t *reply) {
    (void)argc, (void)argv, (void)argv_length;
    if (db->repl.master_port && db->repl.state != GR_REPL_CONNECTED) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "NOMASTERLINK Can't SYNC while not connected with my master");
        return;
    }
    gr_reply_error_text(reply, GR_ERR_GENERIC,
                        "ERR goblin-ring does not serve replicas yet (SYNC/PSYNC): it can be a replica of a Redis "
                        "primary (REPLICAOF host port), not a primary of Redis replicas");
}

/* INFO replication, as Redis 7.0 writes it (the fields that apply). */
void gr_repl_info(gr_server_t *db, gr_text_t *text) {
    const gr_replication_t *r = &db->repl;
    if (!r->master_port) {
        gr_text_append(text, "role:master\r\nconnected_slaves:0\r\n");
    } else {
        int64_t now = db->now_ms;
        int up = r->state == GR_REPL_CONNECTED;
        gr_text_append(text,
                       "role:slave\r\nmaster_host:%s\r\nmaster_port:%lld\r\nmaster_link_status:%s\r\n"
                       "master_last_io_seconds_ago:%lld\r\nmaster_sync_in_progress:%d\r\n"
                       "slave_read_repl_offset:%lld\r\nslave_repl_offset:%lld\r\n",
                       r->master_host, (long long)r->master_port, up ? "up" : "down",
                       up ? (long long)((now - r->last_io_ms) / 1000) : -1LL, r->state == GR_REPL_TRANSFER,
                       (long long)r->offset, (long long)r->offset);
        if (r->state == GR_REPL_TRANSFER) {
            int64_t total = r->sync_total_bytes, read = r->sync_read_bytes;
            gr_text_append(text,
                           "master_sync_total_bytes:%lld\r\nmaster_sync_read_bytes:%lld\r\nmaster_sync_left_bytes:%lld\r\n"
                           "master_sync_perc:%.2f\r\nmaster_sync_last_io_seconds_ago:%lld\r\n",
                           (long long)total, (long long)read, (long long)(total >= 0 ? total - read : -1),
                           total > 0 ? (double)read * 100.0 / (double)total : 0.0,
                           (long long)((now - r->last_io_ms) / 1000));
        }
        if (!up)
            gr_text_append(text, "master_link_down_since_seconds:%lld\r\n",
                           r->link_down_since_ms ? (long long)((now - r->link_down_since_ms) / 1000) : -1LL);
        gr_text_append(text, "slave_priority:100\r\nslave_read_only:%d\r\nreplica_announced:1\r\nconnected_slaves:0\r\n",
                       r->read_only);
    }
    gr_text_append(text,
                   "master_failover_state:no-failover\r\nmaster_replid:%s\r\nmaster_replid2:%s\r\n"
                   "master_repl_offset:%lld\r\nsecond_repl_offset:%lld\r\nrepl_backlog_active:0\r\n"
                   "repl_backlog_size:1048576\r\nrepl_backlog_first_byte_offset:0\r\nrepl_backlog_histlen:0\r\n",
                   r->replid, r->replid2, (long long)r->offset, (long long)r->second_offset);
}
