/* cmd_replication.c — REPLICAOF/SLAVEOF, ROLE, REPLCONF, SYNC/PSYNC (issue 35).
 *
 * The commands set the state in db->repl (exec/replication.h); the serving loop's link
 * (server/replica.c) connects, resynchronises and applies the primary's stream. Replies and
 * log lines are Redis 7.0's. As a primary: SYNC/PSYNC flag the connection as a replica and the
 * loop serves it (server/primary.c, the backlog in exec/repl_backlog.h), on a replica too once its
 * link is up (chained replication); REPLCONF records what a
 * replica says (listening-port, capa, rdb-only, ACK); WAIT parks until enough replicas ACK.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "commands/commands.h"
#include "core/bytes.h"
#include "core/number.h"
#include "exec/blocking.h"
#include "exec/db.h"
#include "exec/propagate.h"
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
    /* the backlog (fed with the old primary's stream as it was applied, server/replica.c, or
     * created empty here) goes on, so the old primary's other replicas continue with PSYNC replid2 */
    gr_repl_backlog_create(db);
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

/* A replica's address as INFO and ROLE show it: REPLCONF ip-address, else the peer's. */
static void replica_ip(const gr_connection_t *conn, char *out, size_t size) {
    if (conn->repl_peer.ip[0]) { snprintf(out, size, "%s", conn->repl_peer.ip); return; }
    snprintf(out, size, "%s", conn->addr);
    char *colon = strrchr(out, ':');
    if (colon) *colon = '\0';
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
        size_t online = 0;
        for (const gr_connection_t *conn = db->connections; conn; conn = conn->next)
            if (conn->repl_peer.state == GR_REPLICA_ONLINE && !conn->repl_peer.rdb_only) online++;
        gr_reply_array_begin(reply, online);
        for (const gr_connection_t *conn = db->connections; conn; conn = conn->next) {
            if (conn->repl_peer.state != GR_REPLICA_ONLINE || conn->repl_peer.rdb_only) continue;
            char ip[sizeof conn->repl_peer.ip], port[24], offset[24];
            replica_ip(conn, ip, sizeof ip);
            int pn = snprintf(port, sizeof port, "%d", (int)conn->repl_peer.listening_port);
            int on = snprintf(offset, sizeof offset, "%lld", (long long)conn->repl_peer.ack_offset);
            gr_reply_array_begin(reply, 3);
            gr_reply_bulk(reply, (const uint8_t *)ip, strlen(ip));
            gr_reply_bulk(reply, (const uint8_t *)port, (size_t)pn);
            gr_reply_bulk(reply, (const uint8_t *)offset, (size_t)on);
        }
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
    gr_connection_t *conn = db->current;
    gr_repl_peer_t *peer = conn ? &conn->repl_peer : NULL;
    for (size_t i = 1; i < argc; i += 2) {
        const uint8_t *option = argv[i], *value = argv[i + 1];
        size_t length = argv_length[i], value_length = argv_length[i + 1];
        if (gr_word_is(option, length, "getack")) {
            if (conn && conn->repl_master) db->repl.getack = 1;   /* the loop sends the ACK */
            return;
        } else if (gr_word_is(option, length, "ack")) {
            /* from a replica: its offset (Redis's repl_ack_off), no reply */
            int64_t offset;
            if (peer && peer->state && gr_bytes_to_int64(value, value_length, &offset) == 0) {
                if (offset > peer->ack_offset) peer->ack_offset = offset;
                peer->ack_ms = db->now_ms;
                peer->ack_count++;
                db->repl_primary.acks = 1;
                /* ACK <offset> FACK <aof offset> (Redis 7.2): fdatasynced to its AOF, for WAITAOF */
                if (i + 3 < argc && gr_word_is(argv[i + 2], argv_length[i + 2], "fack") &&
                    gr_bytes_to_int64(argv[i + 3], argv_length[i + 3], &offset) == 0 && offset > peer->fack_offset)
                    peer->fack_offset = offset;
            }
            return;
        } else if (gr_word_is(option, length, "listening-port")) {
            int64_t port;
            if (gr_bytes_to_int64(value, value_length, &port) != 0 || port < 0 || port > 65535) {
                gr_reply_error_text(reply, GR_ERR_NOT_INTEGER, "ERR value is not an integer or out of range");
                return;
            }
            if (peer) peer->listening_port = (int32_t)port;
        } else if (gr_word_is(option, length, "ip-address")) {
            if (value_length >= sizeof peer->ip) {
                char text[96];
                snprintf(text, sizeof text, "ERR REPLCONF ip-address provided by replica instance is too long: %zu bytes",
                         value_length);
                gr_reply_error_text(reply, GR_ERR_GENERIC, text);
                return;
            }
            if (peer) {
                memcpy(peer->ip, value, value_length);
                peer->ip[value_length] = '\0';
            }
        } else if (gr_word_is(option, length, "capa")) {
            if (peer && gr_word_is(value, value_length, "eof")) peer->capa_eof = 1;
            if (peer && gr_word_is(value, value_length, "psync2")) peer->capa_psync2 = 1;
        } else if (gr_word_is(option, length, "rdb-only")) {
            int64_t flag;
            if (gr_bytes_to_int64(value, value_length, &flag) != 0 || (flag != 0 && flag != 1)) {
                gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR value is not an integer or out of range");
                return;
            }
            if (peer) peer->rdb_only = (uint8_t)flag;
        } else if (!gr_word_is(option, length, "rdb-filter-only")) {
            char text[160];
            snprintf(text, sizeof text, "ERR Unrecognized REPLCONF option: %.*s", (int)(length > 64 ? 64 : length),
                     (const char *)option);
            gr_reply_error_text(reply, GR_ERR_GENERIC, text);
            return;
        }
    }
    gr_reply_ok(reply);
}

/* SYNC / PSYNC replid offset: the connection becomes a replica; the serving loop answers it
 * (+CONTINUE or +FULLRESYNC and the payload, server/primary.c). No reply is written here. */
void gr_cmd_sync(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                 gr_reply_t *reply) {
    gr_connection_t *conn = db->current;
    if (conn && conn->repl_peer.state) return;   /* already a replica: ignored, as Redis */
    if (db->repl.master_port && db->repl.state != GR_REPL_CONNECTED) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "NOMASTERLINK Can't SYNC while not connected with my master");
        return;
    }
    if (!conn || conn->kind == GR_CONN_RING) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR SYNC and PSYNC are served over RESP connections only");
        return;
    }
    gr_repl_peer_t *peer = &conn->repl_peer;
    if (argc == 3) {   /* PSYNC */
        size_t n = argv_length[1] < 40 ? argv_length[1] : 40;
        memcpy(peer->psync_replid, argv[1], n);
        peer->psync_replid[n] = '\0';
        if (gr_bytes_to_int64(argv[2], argv_length[2], &peer->psync_offset) != 0) peer->psync_offset = -1;
        peer->sync_request = 2;
    } else {
        peer->sync_request = 1;
    }
    peer->state = GR_REPLICA_WAIT_BGSAVE_START;
    peer->ack_offset = 0;
    peer->fack_offset = 0;
    db->repl_primary.sync_requests = 1;
}

/* ---- WAIT numreplicas timeout ---- */

/* the replicas that acknowledged the offset the request waits for, as last counted (index2:
 * at the call, then refreshed by gr_repl_wait_check whenever ACKs arrive) */
static void wait_reply(const gr_request_t *request, gr_reply_t *reply) { gr_reply_integer(reply, request->index2); }

/* Parked on no key: ACKs (gr_repl_wait_check, from the loop), the timeout or CLIENT UNBLOCK answer it. */
const gr_block_spec_t gr_wait_block = {"wait", GR_BLOCK_KEYS_IN_ITEMS, gr_block_never_ready, gr_block_never_served,
                                       wait_reply, 2, 1, NULL, NULL, NULL};

void gr_cmd_wait(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                 gr_reply_t *reply) {
    (void)argc;
    if (db->repl.master_port) {
        gr_reply_error_text(reply, GR_ERR_GENERIC,
                            "ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a "
                            "replica is configured to be writable (which is not the default) writes to replicas are "
                            "just local and are not propagated.");
        return;
    }
    int64_t numreplicas, timeout_ms;
    if (gr_bytes_to_int64(argv[1], argv_length[1], &numreplicas) != 0) {
        gr_reply_error_text(reply, GR_ERR_NOT_INTEGER, "ERR value is not an integer or out of range");
        return;
    }
    if (gr_bytes_to_int64(argv[2], argv_length[2], &timeout_ms) != 0 || timeout_ms > INT64_MAX / 2) {
        gr_reply_error_text(reply, GR_ERR_NOT_INTEGER, "ERR timeout is not an integer or out of range");
        return;
    }
    if (timeout_ms < 0) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR timeout is negative");
        return;
    }
    gr_propagate_flush(db);   /* this client's writes reach the replicas' streams */
    int64_t target = db->current ? db->current->repl_peer.woff : db->repl.offset;   /* Redis's c->woff */
    int64_t acked = gr_repl_replicas_acked(db, target);
    if (acked >= numreplicas || db->serve_deferred || !db->current || !db->current->reply) {
        gr_reply_integer(reply, acked);
        return;
    }
    gr_request_t waiting = {.template_id = GR_T_COMMAND, .index = target, .index2 = acked,
                            .count = numreplicas > UINT32_MAX ? UINT32_MAX : (uint32_t)numreplicas,
                            .timeout = (double)timeout_ms / 1000.0};
    db->repl_primary.wait_spec = &gr_wait_block;
    db->repl_primary.getack = 1;   /* the loop asks the replicas: REPLCONF GETACK * */
    gr_blocking_run_unserved(db, &gr_wait_block, &waiting, reply);
}

static const char *replica_state_name(int state) {
    switch (state) {
    case GR_REPLICA_SEND_BULK: return "send_bulk";
    case GR_REPLICA_ONLINE: return "online";
    default: return "wait_bgsave";
    }
}

/* connected_slaves and a slaveN line per replica, as Redis 7.0 (a primary's, and a replica's own). */
static void replicas_info(gr_server_t *db, gr_text_t *text) {
    int64_t count = 0;
    for (const gr_connection_t *conn = db->connections; conn; conn = conn->next)
        if (conn->repl_peer.state && !conn->repl_peer.rdb_only) count++;
    gr_text_append(text, "connected_slaves:%lld\r\n", (long long)count);
    const gr_repl_primary_t *p = &db->repl_primary;
    if (p->min_replicas_to_write && p->min_replicas_max_lag)
        gr_text_append(text, "min_slaves_good_slaves:%lld\r\n", (long long)p->good);
    int64_t id = 0;
    for (const gr_connection_t *conn = db->connections; conn; conn = conn->next) {
        if (!conn->repl_peer.state || conn->repl_peer.rdb_only) continue;
        char ip[sizeof conn->repl_peer.ip];
        replica_ip(conn, ip, sizeof ip);
        gr_text_append(text, "slave%lld:ip=%s,port=%d,state=%s,offset=%lld,lag=%lld\r\n", (long long)id++, ip,
                       (int)conn->repl_peer.listening_port, replica_state_name(conn->repl_peer.state),
                       (long long)conn->repl_peer.ack_offset,
                       (long long)((db->now_ms - conn->repl_peer.ack_ms) / 1000 > 0 ? (db->now_ms - conn->repl_peer.ack_ms) / 1000 : 0));
    }
}

/* INFO replication, as Redis 7.0 writes it (the fields that apply). */
void gr_repl_info(gr_server_t *db, gr_text_t *text) {
    const gr_replication_t *r = &db->repl;
    if (!r->master_port) {
        gr_text_append(text, "role:master\r\n");
        replicas_info(db, text);
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
        gr_text_append(text, "slave_priority:%lld\r\nslave_read_only:%d\r\nreplica_announced:%d\r\n",
                       (long long)r->priority, r->read_only, r->announced);
        replicas_info(db, text);
    }
    const gr_repl_primary_t *p = &db->repl_primary;
    gr_text_append(text,
                   "master_failover_state:no-failover\r\nmaster_replid:%s\r\nmaster_replid2:%s\r\n"
                   "master_repl_offset:%lld\r\nsecond_repl_offset:%lld\r\nrepl_backlog_active:%d\r\n"
                   "repl_backlog_size:%lld\r\nrepl_backlog_first_byte_offset:%lld\r\nrepl_backlog_histlen:%lld\r\n",
                   r->replid, r->replid2, (long long)r->offset, (long long)r->second_offset, p->backlog != NULL,
                   (long long)(p->backlog ? p->backlog_size : p->backlog_config),
                   (long long)(p->backlog ? gr_repl_backlog_first_offset(db) : 0), (long long)p->backlog_histlen);
}
