/* transaction.c — MULTI/EXEC/DISCARD and WATCH/UNWATCH; transaction.h describes the design.
 *
 * Structures: each connection in MULTI or watching owns a gr_transaction (its queue of
 * request copies, its watched-key nodes, the failed and dirty flags). db->watch is a
 * chained hash table of watched keys (database index + key bytes), each with the list of
 * nodes, one per (connection, key). All of it belongs to the db and is touched by the one
 * executing thread only.
 */
#include "exec/transaction.h"
#include "exec/tracking.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "exec/blocking.h"
#include "exec/server_text.h"

#define BUCKETS 1024   /* power of two */
#define MAX_QUEUE_BYTES (256u * 1024 * 1024)

typedef struct watched_key watched_key_t;

typedef struct watch_node {
    gr_connection_t *conn;
    watched_key_t *key;
    uint8_t expired;                          /* logically expired when WATCH ran */
    struct watch_node *prev_in_key, *next_in_key;
    struct watch_node *next_in_conn;
} watch_node_t;

struct watched_key {
    int32_t db_index;
    uint32_t hash;
    uint8_t *key;
    size_t key_length;
    watch_node_t *head;
    watched_key_t *next_in_bucket;
};

typedef struct gr_watch_table {
    watched_key_t *buckets[BUCKETS];
} gr_watch_table_t;

typedef struct gr_transaction {
    uint8_t failed;                           /* a queue-time error: EXEC answers EXECABORT */
    uint8_t dirty;                            /* a watched key was touched: EXEC answers nil */
    gr_request_t **queue;
    uint32_t queued, capacity;
    size_t queue_bytes;
    watch_node_t *watched;
} gr_transaction_t;

/* ---- per-connection state ---- */

static gr_transaction_t *state_of(gr_connection_t *conn) {
    if (!conn->transaction) {
        conn->transaction = gr_mem_alloc(sizeof(gr_transaction_t), GR_MEM_SESSION);
        if (conn->transaction) memset(conn->transaction, 0, sizeof(gr_transaction_t));
    }
    return conn->transaction;
}

static void clear_queue(gr_transaction_t *tx) {
    for (uint32_t i = 0; i < tx->queued; i++) gr_request_free_clone(tx->queue[i]);
    gr_mem_free(tx->queue, GR_MEM_SESSION);
    tx->queue = NULL;
    tx->queued = tx->capacity = 0;
    tx->queue_bytes = 0;
    tx->failed = 0;
}

/* The connection's state is freed once it neither queues nor watches. */
static void release_if_idle(gr_connection_t *conn) {
    gr_transaction_t *tx = conn->transaction;
    if (!tx || conn->in_multi || tx->watched) return;
    clear_queue(tx);
    gr_mem_free(tx, GR_MEM_SESSION);
    conn->transaction = NULL;
}

/* ---- the watch table ---- */

static uint32_t key_hash(int32_t db_index, const uint8_t *key, size_t length) {
    uint32_t hash = 2166136261u ^ (uint32_t)db_index;
    for (size_t i = 0; i < length; i++) hash = (hash ^ key[i]) * 16777619u;
    return hash;
}

static watched_key_t *find_key(const gr_watch_table_t *t, int32_t db_index, const uint8_t *key, size_t length,
                               uint32_t hash) {
    for (watched_key_t *k = t->buckets[hash & (BUCKETS - 1)]; k; k = k->next_in_bucket)
        if (k->hash == hash && k->db_index == db_index && k->key_length == length &&
            (length == 0 || memcmp(k->key, key, length) == 0))
            return k;
    return NULL;
}

static void free_key_if_unused(gr_watch_table_t *t, watched_key_t *k) {
    if (k->head) return;
    watched_key_t **at = &t->buckets[k->hash & (BUCKETS - 1)];
    while (*at != k) at = &(*at)->next_in_bucket;
    *at = k->next_in_bucket;
    gr_mem_free(k->key, GR_MEM_SESSION);
    gr_mem_free(k, GR_MEM_SESSION);
}

static void unwatch_all(gr_server_t *db, gr_connection_t *conn) {
    gr_transaction_t *tx = conn->transaction;
    if (!tx) return;
    for (watch_node_t *node = tx->watched, *next; node; node = next) {
        next = node->next_in_conn;
        watched_key_t *k = node->key;
        if (node->prev_in_key) node->prev_in_key->next_in_key = node->next_in_key;
        else k->head = node->next_in_key;
        if (node->next_in_key) node->next_in_key->prev_in_key = node->prev_in_key;
        free_key_if_unused(db->watch, k);
        gr_mem_free(node, GR_MEM_SESSION);
        db->watched_keys--;
    }
    tx->watched = NULL;
    tx->dirty = 0;
}

static int32_t index_of_keyspace(const gr_server_t *db, const gr_keyspace_t *ks) {
    for (int32_t i = 0; i < GR_DB_COUNT; i++)
        if (db->keyspaces[i] == ks) return i;
    return 0;
}

/* 1 if key is present in database db_index with its expiry passed (not yet deleted). */
static int logically_expired(const gr_server_t *db, int32_t db_index, const uint8_t *key, size_t length) {
    gr_ks_entry_t *entry = gr_ks_find(db->keyspaces[db_index], key, length);
    return entry && gr_db_is_expired(db, entry);
}

static int present(const gr_server_t *db, int32_t db_index, const uint8_t *key, size_t length) {
    return gr_ks_find(db->keyspaces[db_index], key, length) != NULL;
}

void gr_watch_touch_slow(gr_server_t *db, int32_t db_index, const uint8_t *key, size_t key_length) {
    if (db->tracking_live) gr_tracking_invalidate_key(db, (gr_bytes_t){key, (uint32_t)key_length});
    if (!db->watched_keys) return;
    watched_key_t *k = find_key(db->watch, db_index, key, key_length, key_hash(db_index, key, key_length));
    if (!k) return;
    for (watch_node_t *node = k->head; node; node = node->next_in_key) {
        if (node->expired && !present(db, db_index, key, key_length)) {
            node->expired = 0;            /* an expired key deleted: logically no change */
            continue;
        }
        node->conn->transaction->dirty = 1;
    }
}

void gr_watch_touch_current_slow(gr_server_t *db, gr_bytes_t key) {
    if (db->notify_flags && !db->notify_quiet) gr_notify_record_touch(db, key);   /* the row's default event */
    if (!db->watched_keys && !db->tracking_live) return;
    gr_watch_touch_slow(db, index_of_keyspace(db, db->keyspace), key.data, key.length);
}

void gr_watch_touch_db(gr_server_t *db, int32_t emptied, int32_t replaced_with) {
    if (!db->watched_keys) return;
    for (size_t b = 0; b < BUCKETS; b++) {
        for (watched_key_t *k = db->watch->buckets[b]; k; k = k->next_in_bucket) {
            if (k->db_index != emptied) continue;
            int in_emptied = present(db, emptied, k->key, k->key_length);
            int in_replacement = replaced_with >= 0 && present(db, replaced_with, k->key, k->key_length);
            if (!in_emptied && !in_replacement) continue;
            for (watch_node_t *node = k->head; node; node = node->next_in_key) {
                if (node->expired) {
                    if (!in_replacement) { node->expired = 0; continue; }   /* an expired key deleted */
                    if (logically_expired(db, replaced_with, k->key, k->key_length)) continue;
                } else if (!in_emptied && logically_expired(db, replaced_with, k->key, k->key_length)) {
                    node->expired = 1;     /* nothing replaced by an expired key */
                    continue;
                }
                node->conn->transaction->dirty = 1;
            }
        }
    }
}

/* ---- WATCH / UNWATCH ---- */

static int watch_key(gr_server_t *db, gr_connection_t *conn, gr_transaction_t *tx, gr_bytes_t key) {
    int32_t db_index = conn->db_index;
    for (watch_node_t *node = tx->watched; node; node = node->next_in_conn)
        if (node->key->db_index == db_index && node->key->key_length == key.length &&
            (key.length == 0 || memcmp(node->key->key, key.data, key.length) == 0))
            return 0;                      /* watched already */
    if (!db->watch) {
        db->watch = gr_mem_alloc(sizeof(gr_watch_table_t), GR_MEM_SESSION);
        if (!db->watch) return -1;
        memset(db->watch, 0, sizeof(gr_watch_table_t));
    }
    uint32_t hash = key_hash(db_index, key.data, key.length);
    watched_key_t *k = find_key(db->watch, db_index, key.data, key.length, hash);
    watch_node_t *node = gr_mem_alloc(sizeof *node, GR_MEM_SESSION);
    if (!node) return -1;
    if (!k) {
        k = gr_mem_alloc(sizeof *k, GR_MEM_SESSION);
        uint8_t *bytes = gr_mem_alloc(key.length ? key.length : 1, GR_MEM_SESSION);
        if (!k || !bytes) {
            gr_mem_free(k, GR_MEM_SESSION);
            gr_mem_free(bytes, GR_MEM_SESSION);
            gr_mem_free(node, GR_MEM_SESSION);
            return -1;
        }
        memcpy(bytes, key.data, key.length);
        k->db_index = db_index, k->hash = hash, k->key = bytes, k->key_length = key.length, k->head = NULL;
        k->next_in_bucket = db->watch->buckets[hash & (BUCKETS - 1)];
        db->watch->buckets[hash & (BUCKETS - 1)] = k;
    }
    node->conn = conn;
    node->key = k;
    node->expired = (uint8_t)logically_expired(db, db_index, key.data, key.length);
    node->prev_in_key = NULL;
    node->next_in_key = k->head;
    if (k->head) k->head->prev_in_key = node;
    k->head = node;
    node->next_in_conn = tx->watched;
    tx->watched = node;
    db->watched_keys++;
    return 0;
}

void gr_transaction_watch(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                          gr_reply_t *reply) {
    gr_connection_t *conn = db->current;
    if (conn->in_multi) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR WATCH inside MULTI is not allowed");
        return;
    }
    gr_transaction_t *tx = state_of(conn);
    if (!tx) { gr_reply_oom(reply); return; }
    if (tx->dirty) { gr_reply_ok(reply); return; }   /* no use watching more: EXEC fails anyway */
    for (size_t i = 1; i < argc; i++) {
        gr_bytes_t key = {argv[i], (uint32_t)argv_length[i]};
        if (watch_key(db, conn, tx, key) != 0) {
            release_if_idle(conn);
            gr_reply_oom(reply);
            return;
        }
    }
    gr_reply_ok(reply);
}

void gr_transaction_unwatch(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                            gr_reply_t *reply) {
    (void)argc, (void)argv, (void)argv_length;
    gr_connection_t *conn = db->current;
    unwatch_all(db, conn);
    release_if_idle(conn);
    gr_reply_ok(reply);
}

/* ---- MULTI / EXEC / DISCARD ---- */

void gr_transaction_multi(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                          gr_reply_t *reply) {
    (void)argc, (void)argv, (void)argv_length;
    gr_connection_t *conn = db->current;
    if (conn->in_multi) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR MULTI calls can not be nested");
        return;
    }
    if (!state_of(conn)) { gr_reply_oom(reply); return; }
    conn->in_multi = 1;
    gr_reply_ok(reply);
}

static void end_multi(gr_server_t *db, gr_connection_t *conn) {
    if (conn->transaction) clear_queue(conn->transaction);
    conn->in_multi = 0;
    unwatch_all(db, conn);
    release_if_idle(conn);
}

void gr_transaction_discard(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                            gr_reply_t *reply) {
    (void)argc, (void)argv, (void)argv_length;
    gr_connection_t *conn = db->current;
    if (!conn->in_multi) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR DISCARD without MULTI");
        return;
    }
    end_multi(db, conn);
    gr_reply_ok(reply);
}

/* A watched key live at WATCH time whose expiry has passed since fails the EXEC. */
static int watched_key_expired(const gr_server_t *db, const gr_transaction_t *tx) {
    for (const watch_node_t *node = tx->watched; node; node = node->next_in_conn)
        if (!node->expired && logically_expired(db, node->key->db_index, node->key->key, node->key->key_length))
            return 1;
    return 0;
}

/* Run one queued command as a command of its own (admission, accounting, its reply). */
static void run_queued(gr_server_t *db, const gr_request_t *request, gr_reply_t *reply) {
    if (request->template_id != GR_T_COMMAND) {
        gr_db_run(db, request, reply);
        return;
    }
    size_t argc = request->item_count;
    const uint8_t **argv = malloc((argc ? argc : 1) * sizeof *argv);
    size_t *lengths = malloc((argc ? argc : 1) * sizeof *lengths);
    if (!argv || !lengths) {
        free(argv);
        free(lengths);
        gr_reply_oom(reply);
        return;
    }
    for (size_t i = 0; i < argc; i++) argv[i] = request->items[i].data, lengths[i] = request->items[i].length;
    gr_db_run_argv(db, argc, argv, lengths, reply);
    free(argv);
    free(lengths);
}

/* Redis refuses EXEC itself, before anything runs, when the transaction holds a write and
 * writes are refused for a disk error (its processCommand sees the queued commands' flags):
 * the whole transaction is discarded, not only its writes. 1 when refused (reply written). */
static int refused_for_disk_error(gr_server_t *db, const gr_transaction_t *tx, gr_reply_t *reply) {
    char text[200];
    const char *refusal = gr_db_disk_error_refusal(db, text, sizeof text);
    if (!refusal) return 0;
    int writes = 0;
    for (uint32_t i = 0; i < tx->queued && !writes; i++) {
        const gr_request_t *queued = tx->queue[i];
        int index = queued->template_id != GR_T_COMMAND ? gr_command_index_of_request(queued)
                    : queued->item_count ? gr_command_index(queued->items[0].data, queued->items[0].length) : -1;
        writes = index >= 0 && (gr_command_flags(index) & GR_CMD_FLAG_WRITE) != 0;
    }
    if (!writes) return 0;
    char message[640];
    snprintf(message, sizeof message, "EXECABORT Transaction discarded because of: %s", refusal);
    gr_reply_error_text(reply, GR_ERR_GENERIC, message);
    gr_db_reject(db, db->call ? db->call->index : -1, reply);   /* EXEC's own call */
    return 1;
}

void gr_transaction_exec(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                         gr_reply_t *reply) {
    (void)argc, (void)argv, (void)argv_length;
    gr_connection_t *conn = db->current;
    gr_transaction_t *tx = conn->transaction;
    if (!conn->in_multi || !tx) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR EXEC without MULTI");
        return;
    }
    if (refused_for_disk_error(db, tx, reply)) {
        end_multi(db, conn);
        return;
    }
    if (tx->failed) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "EXECABORT Transaction discarded because of previous errors.");
        end_multi(db, conn);
        return;
    }
    if (tx->dirty || watched_key_expired(db, tx)) {
        gr_reply_nil_array(reply);
        end_multi(db, conn);
        return;
    }
    unwatch_all(db, conn);                 /* as Redis: what runs now cannot fail this EXEC */
    conn->in_multi = 0;                    /* the queued commands run, not queue */
    gr_request_t **queue = tx->queue;
    uint32_t queued = tx->queued;
    tx->queue = NULL;
    tx->queued = tx->capacity = 0;
    tx->queue_bytes = 0;
    const char *exec_name = conn->last_command;
    db->serve_deferred++;                  /* waiters see the transaction's pushes after it, as in Redis */
    gr_effect_none(db);                    /* EXEC itself propagates nothing: its commands do, */
    gr_propagate_exec_begin(db);           /* as MULTI ... EXEC */
    gr_reply_array_begin(reply, queued);
    db->in_exec++;
    for (uint32_t i = 0; i < queued; i++) {
        run_queued(db, queue[i], reply);
        db->current = conn;                /* a command inside may have served others */
        db->keyspace = db->keyspaces[conn->db_index];
    }
    db->in_exec--;
    gr_propagate_exec_end(db);
    db->serve_deferred--;
    conn->last_command = exec_name;
    for (uint32_t i = 0; i < queued; i++) gr_request_free_clone(queue[i]);
    gr_mem_free(queue, GR_MEM_SESSION);
    release_if_idle(conn);
}

/* ---- queueing ---- */

/* MULTI, EXEC, DISCARD, WATCH, QUIT and RESET run at once: their rows say so (.runs). */
static int runs_at_once(int index) {
    const gr_command_t *row = gr_command_at((size_t)index);
    return row && (row->runs & GR_RUNS_AT_ONCE_IN_MULTI);
}

static void queue_copy(gr_server_t *db, gr_connection_t *conn, const gr_request_t *request, size_t bytes,
                       gr_reply_t *reply) {
    gr_transaction_t *tx = state_of(conn);
    if (!tx) { gr_reply_oom(reply); return; }
    if (tx->queue_bytes + bytes > MAX_QUEUE_BYTES) {
        tx->failed = 1;
        gr_reply_error_text(reply, GR_ERR_TOO_LARGE, "ERR the MULTI queue would exceed 256 MiB");
        gr_db_reject(db, -1, reply);
        return;
    }
    if (tx->queued == tx->capacity) {
        uint32_t capacity = tx->capacity ? tx->capacity * 2 : 8;
        gr_request_t **grown = gr_mem_realloc(tx->queue, capacity * sizeof *grown, GR_MEM_SESSION);
        if (!grown) { tx->failed = 1; gr_reply_oom(reply); return; }
        tx->queue = grown;
        tx->capacity = capacity;
    }
    gr_request_t *copy = gr_request_clone(request);
    if (!copy) { tx->failed = 1; gr_reply_oom(reply); return; }
    tx->queue[tx->queued++] = copy;
    tx->queue_bytes += bytes;
    gr_reply_status(reply, "QUEUED", 6);
}

int gr_transaction_queue_argv(gr_server_t *db, gr_connection_t *conn, size_t argc, const uint8_t *const *argv,
                              const size_t *argv_length, gr_reply_t *reply) {
    if (argc == 0) return 0;
    gr_transaction_t *tx = state_of(conn);
    if (gr_command_check(argc, argv, argv_length, reply) != 0) {   /* unknown, or the wrong arity */
        if (tx) tx->failed = 1;
        gr_db_reject(db, gr_command_index(argv[0], argv_length[0]), reply);
        return 1;
    }
    int index = gr_command_index(argv[0], argv_length[0]);
    if (runs_at_once(index)) return 0;
    gr_admit_args_t admit = {gr_command_stat_slot(index, argc, argv, argv_length), argc, argv, argv_length, NULL};
    if (gr_db_admit(db, index, &admit, 0, reply) != 0 ||   /* NOAUTH, NOPERM, OOM, BUSY: refused now, as Redis */
        (db->busy && gr_db_refuse_busy(db, index, argc, argv, argv_length, reply) != 0)) {
        if (tx) tx->failed = 1;
        return 1;
    }
    gr_request_t request;
    memset(&request, 0, sizeof request);
    request.template_id = GR_T_COMMAND;
    size_t bytes = sizeof request;
    gr_bytes_t small[16], *items = argc <= 16 ? small : malloc(argc * sizeof *items);
    if (!items) { if (tx) tx->failed = 1; gr_reply_oom(reply); return 1; }
    for (size_t i = 0; i < argc; i++) {
        items[i].data = argv[i];
        items[i].length = (uint32_t)argv_length[i];
        bytes += sizeof *items + argv_length[i];
    }
    request.items = items;
    request.item_count = request.item_capacity = (uint32_t)argc;
    queue_copy(db, conn, &request, bytes, reply);
    if (items != small) free(items);
    return 1;
}

int gr_transaction_queue_request(gr_server_t *db, gr_connection_t *conn, const gr_request_t *request,
                                 gr_reply_t *reply) {
    if (request->template_id == GR_T_COMMAND) {       /* the ring's argv envelope */
        size_t argc = request->item_count;
        if (argc == 0) return 0;
        const uint8_t *small_argv[16];
        size_t small_lengths[16];
        const uint8_t **argv = argc <= 16 ? small_argv : malloc(argc * sizeof *argv);
        size_t *lengths = argc <= 16 ? small_lengths : malloc(argc * sizeof *lengths);
        int taken = 1;
        if (!argv || !lengths) {
            gr_reply_oom(reply);
        } else {
            for (size_t i = 0; i < argc; i++) argv[i] = request->items[i].data, lengths[i] = request->items[i].length;
            taken = gr_transaction_queue_argv(db, conn, argc, argv, lengths, reply);
        }
        if (argv != small_argv) free(argv);
        if (lengths != small_lengths) free(lengths);
        return taken;
    }
    int index = gr_command_index_of_request(request);
    gr_admit_args_t admit = {index, 0, NULL, NULL, request};
    if (gr_db_admit(db, index, &admit, 0, reply) != 0 || (db->busy && gr_db_refuse_busy(db, index, 0, NULL, NULL, reply) != 0)) {
        gr_transaction_t *tx = state_of(conn);
        if (tx) tx->failed = 1;
        return 1;
    }
    size_t bytes = sizeof *request + (size_t)request->key.length + request->arg1.length + request->arg2.length;
    for (uint32_t i = 0; i < request->item_count; i++) bytes += sizeof(gr_bytes_t) + request->items[i].length;
    queue_copy(db, conn, request, bytes, reply);
    return 1;
}

/* ---- lifecycle ---- */

void gr_transaction_forget(gr_server_t *db, gr_connection_t *conn) {
    if (!conn->transaction) { conn->in_multi = 0; return; }
    end_multi(db, conn);
}

void gr_transaction_free_all(gr_server_t *db) {
    for (gr_connection_t *conn = db->connections; conn; conn = conn->next) gr_transaction_forget(db, conn);
    gr_mem_free(db->watch, GR_MEM_SESSION);
    db->watch = NULL;
}

int gr_transaction_check(const gr_server_t *db) {
    int64_t nodes = 0;
    for (const gr_connection_t *conn = db->connections; conn; conn = conn->next) {
        const gr_transaction_t *tx = conn->transaction;
        if (!tx) { if (conn->in_multi) return -1; continue; }
        for (const watch_node_t *node = tx->watched; node; node = node->next_in_conn) {
            nodes++;
            if (node->conn != conn) return -1;
            const watch_node_t *at = node->key->head;
            while (at && at != node) at = at->next_in_key;
            if (!at) return -1;
        }
    }
    if (nodes != db->watched_keys) return -1;
    for (size_t b = 0; db->watch && b < BUCKETS; b++)
        for (const watched_key_t *k = db->watch->buckets[b]; k; k = k->next_in_bucket)
            if (!k->head) return -1;
    return 0;
}

int gr_transaction_queued_write(gr_connection_t *conn) {
    const gr_transaction_t *tx = conn->transaction;
    for (uint32_t i = 0; tx && i < tx->queued; i++) {
        const gr_request_t *request = tx->queue[i];
        int index = request->template_id == GR_T_COMMAND && request->item_count
                        ? gr_command_index(request->items[0].data, request->items[0].length)
                        : gr_command_index_of_request(request);
        uint32_t flags = gr_command_flags(index);
        if ((flags & GR_CMD_FLAG_WRITE) || (flags & GR_CMD_FLAG_MAY_REPLICATE)) return 1;
    }
    return 0;
}
