/* blocking.c — the waiters of the blocking commands; blocking.h describes the design. Nothing
 * here names a command or a value type: a waiter's spec (gr_block_spec_t) says all of it.
 *
 * Structures: a chained hash table of blocked keys (database index + key bytes), each with
 * a FIFO of links, one link per (waiter, key); a list of every waiter in blocking order
 * (timeouts walk it); a list of keys made ready by the running command. All of it belongs
 * to the db and is touched by the one executing thread only.
 */
#include "exec/blocking.h"
#include "core/clock.h"
#include "exec/call.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#define BUCKETS 4096   /* power of two */

typedef struct blocked_key blocked_key_t;

typedef struct waiter_link {
    struct gr_waiter *waiter;
    blocked_key_t *key;
    struct waiter_link *prev, *next;   /* the key's FIFO */
} waiter_link_t;

struct blocked_key {
    int32_t db_index;
    uint32_t hash;
    uint8_t *key;
    size_t key_length;
    waiter_link_t *head, *tail;
    int ready;
    blocked_key_t *next_in_bucket, *next_ready;
};

typedef struct gr_waiter {
    gr_connection_t *conn;
    const gr_block_spec_t *spec;
    gr_request_t *request;       /* a copy (gr_request_clone) */
    int32_t db_index;
    int64_t deadline_ms;         /* monotonic ms; INT64_MAX: forever */
    uint64_t request_id;
    waiter_link_t *links;        /* one per distinct key */
    uint32_t link_count;
    /* for SLOWLOG when it is served (as Redis logs a blocked command at unblock): the call's
     * argv (argc 0: a typed ring request, shown from the request) and what its parking call
     * had taken so far, in the accounting clock */
    size_t argc;
    uint8_t **argv;              /* one allocation: pointers, lengths, bytes */
    size_t *argv_length;
    uint64_t park_cycles;
    struct gr_waiter *prev, *next;   /* every waiter, in blocking order */
} gr_waiter_t;

typedef struct gr_blocking {
    blocked_key_t *buckets[BUCKETS];
    blocked_key_t *ready_head, *ready_tail;
    gr_waiter_t *first, *last;
} gr_blocking_t;

static uint32_t key_hash(int32_t db_index, const uint8_t *key, size_t length) {
    uint32_t hash = 2166136261u ^ (uint32_t)db_index;
    for (size_t i = 0; i < length; i++) hash = (hash ^ key[i]) * 16777619u;
    return hash;
}

static blocked_key_t *find_key(gr_blocking_t *b, int32_t db_index, const uint8_t *key, size_t length, uint32_t hash) {
    for (blocked_key_t *k = b->buckets[hash & (BUCKETS - 1)]; k; k = k->next_in_bucket)
        if (k->hash == hash && k->db_index == db_index && k->key_length == length && memcmp(k->key, key, length) == 0)
            return k;
    return NULL;
}

static void free_key_if_unused(gr_blocking_t *b, blocked_key_t *k) {
    if (k->head || k->ready) return;
    blocked_key_t **at = &b->buckets[k->hash & (BUCKETS - 1)];
    while (*at != k) at = &(*at)->next_in_bucket;
    *at = k->next_in_bucket;
    free(k->key);
    free(k);
}

static void recompute_deadline(gr_server_t *db) {
    int64_t earliest = INT64_MAX;
    for (gr_waiter_t *w = db->blocking ? db->blocking->first : NULL; w; w = w->next)
        if (w->deadline_ms < earliest) earliest = w->deadline_ms;
    db->next_block_deadline_ms = earliest;
}

const char *gr_blocking_timeout_error(double seconds) {
    if (seconds != seconds || isinf(seconds)) return "ERR timeout is not a float or out of range";
    if (seconds < 0) return "ERR timeout is negative";
    if (seconds > GR_BLOCK_TIMEOUT_MAX_S) return "ERR timeout is out of range";   /* milliseconds past INT64_MAX */
    return NULL;
}

/* ---- park ---- */

/* The request's keys, as the spec places them. */
static uint32_t key_count_of(const gr_block_spec_t *spec, const gr_request_t *r) {
    return spec->keys == GR_BLOCK_KEY_IN_KEY ? 1 : spec->keys == GR_BLOCK_KEYS_PAIRED ? r->item_count / 2 : r->item_count;
}

/* The index among the request's keys of the blocked key k (the first equal one). */
static uint32_t key_index_of(const gr_block_spec_t *spec, const gr_request_t *r, const blocked_key_t *k) {
    uint32_t n = key_count_of(spec, r);
    for (uint32_t i = 0; i < n; i++) {
        gr_bytes_t key = spec->keys == GR_BLOCK_KEY_IN_KEY ? r->key : r->items[i];
        if (key.length == k->key_length && memcmp(key.data, k->key, key.length) == 0) return i;
    }
    return 0;
}

static gr_bytes_t key_at(const gr_block_spec_t *spec, const gr_request_t *r, uint32_t i) {
    return spec->keys == GR_BLOCK_KEY_IN_KEY ? r->key : r->items[i];
}

int gr_blocking_park(gr_server_t *db, const gr_block_spec_t *spec, const gr_request_t *r, double timeout_s) {
    gr_connection_t *conn = db->current;
    if (!conn || !conn->reply) return -1;
    if (!db->blocking) {
        db->blocking = calloc(1, sizeof *db->blocking);
        if (!db->blocking) return -1;
    }
    gr_blocking_t *b = db->blocking;
    uint32_t key_count = key_count_of(spec, r);
    gr_waiter_t *w = calloc(1, sizeof *w);
    gr_request_t *copy = gr_request_clone(r);
    waiter_link_t *links = calloc(key_count ? key_count : 1, sizeof *links);
    blocked_key_t **keys = calloc(key_count ? key_count : 1, sizeof *keys);
    if (!w || !copy || !links || !keys) {
        free(w); free(links); free(keys);
        if (copy) gr_request_free_clone(copy);
        return -1;
    }
    const gr_call_t *call = db->call;
    if (call && call->argc) {   /* kept for SLOWLOG; without it, the entry shows the typed form */
        size_t bytes = call->argc * (sizeof *w->argv + sizeof *w->argv_length);
        for (size_t i = 0; i < call->argc; i++) bytes += call->argv_length[i];
        uint8_t *block = malloc(bytes);
        if (block) {
            w->argv = (uint8_t **)block;
            w->argv_length = (size_t *)(block + call->argc * sizeof *w->argv);
            uint8_t *at = block + call->argc * (sizeof *w->argv + sizeof *w->argv_length);
            for (size_t i = 0; i < call->argc; i++) {
                memcpy(at, call->argv[i], call->argv_length[i]);
                w->argv[i] = at, w->argv_length[i] = call->argv_length[i];
                at += call->argv_length[i];
            }
            w->argc = call->argc;
        }
    }
    if (call) w->park_cycles = (uint64_t)(gr_db_account_start() - call->start);
    w->conn = conn;
    w->spec = spec;
    w->request = copy;
    w->links = links;
    w->db_index = conn->db_index;
    w->request_id = conn->reply_request_id ? *conn->reply_request_id : 0;
    w->deadline_ms = timeout_s > 0 ? gr_monotonic_ms() + (int64_t)(timeout_s * 1000.0 + 0.5) : INT64_MAX;
    if (timeout_s > 0 && w->deadline_ms == gr_monotonic_ms()) w->deadline_ms++;   /* a timeout under 0.5 ms still waits */

    /* Find or create each key's entry first, so OOM leaves nothing half-linked. */
    for (uint32_t i = 0; i < key_count; i++) {
        gr_bytes_t key = key_at(spec, copy, i);
        uint32_t hash = key_hash(w->db_index, key.data, key.length);
        blocked_key_t *k = find_key(b, w->db_index, key.data, key.length, hash);
        if (!k) {
            k = calloc(1, sizeof *k);
            uint8_t *key_copy = malloc(key.length ? key.length : 1);
            if (!k || !key_copy) {
                free(k);
                free(key_copy);
                for (uint32_t j = 0; j < i; j++) free_key_if_unused(b, keys[j]);
                free(keys); free(links); free(w);
                gr_request_free_clone(copy);
                return -1;
            }
            memcpy(key_copy, key.data, key.length);
            k->db_index = w->db_index, k->hash = hash, k->key = key_copy, k->key_length = key.length;
            k->next_in_bucket = b->buckets[hash & (BUCKETS - 1)];
            b->buckets[hash & (BUCKETS - 1)] = k;
        }
        keys[i] = k;
    }
    w->link_count = 0;
    for (uint32_t i = 0; i < key_count; i++) {
        int duplicate = 0;   /* BLPOP a a: wait once on a */
        for (uint32_t j = 0; j < i; j++) duplicate |= keys[j] == keys[i];
        if (duplicate) continue;
        waiter_link_t *link = &w->links[w->link_count++];
        link->waiter = w, link->key = keys[i], link->next = NULL, link->prev = keys[i]->tail;
        if (keys[i]->tail) keys[i]->tail->next = link; else keys[i]->head = link;
        keys[i]->tail = link;
    }
    free(keys);
    w->prev = b->last;
    if (b->last) b->last->next = w; else b->first = w;
    b->last = w;
    conn->waiter = w;
    conn->blocked = 1;
    db->blocked_count++;
    if (w->deadline_ms < db->next_block_deadline_ms) db->next_block_deadline_ms = w->deadline_ms;
    return 0;
}

gr_request_t *gr_blocking_parked_request(const gr_connection_t *conn, const gr_block_spec_t **spec) {
    gr_waiter_t *w = conn->waiter;
    if (!w) return NULL;
    if (spec) *spec = w->spec;
    return w->request;
}

/* gr_blocking_run's rest: the timeout refused, or spec->serve found nothing. */
int gr_block_never_ready(const gr_ks_entry_t *entry) {
    (void)entry;
    return 0;
}

int gr_block_never_served(gr_server_t *db, const gr_request_t *request, gr_reply_t *reply) {
    (void)db, (void)request, (void)reply;
    return 0;
}

void gr_blocking_run_unserved(gr_server_t *db, const gr_block_spec_t *spec, const gr_request_t *request, gr_reply_t *reply) {
    const char *why = gr_blocking_timeout_error(request->timeout);   /* the ring's typed path too */
    if (why) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, why);
        return;
    }
    /* Inside EXEC (or with no connection to park) a blocking command does not block. */
    if (db->serve_deferred || !db->current || !db->current->reply) {
        spec->timeout_reply(request, reply);
        return;
    }
    if (gr_blocking_park(db, spec, request, request->timeout) != 0) gr_reply_oom(reply);
}

/* ---- unpark ---- */

static void unlink_waiter(gr_server_t *db, gr_waiter_t *w) {
    gr_blocking_t *b = db->blocking;
    for (uint32_t i = 0; i < w->link_count; i++) {
        waiter_link_t *link = &w->links[i];
        blocked_key_t *k = link->key;
        if (link->prev) link->prev->next = link->next; else k->head = link->next;
        if (link->next) link->next->prev = link->prev; else k->tail = link->prev;
        free_key_if_unused(b, k);
    }
    if (w->prev) w->prev->next = w->next; else b->first = w->next;
    if (w->next) w->next->prev = w->prev; else b->last = w->prev;
    w->conn->waiter = NULL;
    w->conn->blocked = 0;
    db->blocked_count--;
    gr_request_free_clone(w->request);
    free(w->argv);
    free(w->links);
    free(w);
}

static void mark_woken(gr_server_t *db, gr_connection_t *conn) {
    if (conn->kind == GR_CONN_RING || conn->woken) return;   /* a ring session resumes by itself */
    conn->woken = 1;
    db->woken_pending++;
}

void gr_blocking_forget(gr_server_t *db, gr_connection_t *conn) {
    if (conn->waiter) {
        unlink_waiter(db, conn->waiter);
        recompute_deadline(db);
    }
    if (conn->woken) { conn->woken = 0; db->woken_pending--; }
}

/* The client behind conn can still receive a reply: its socket (a ring session's control
 * socket) has not reached EOF. Never a pid the client reported: in another PID namespace it
 * names another process, or none. */
static int client_alive(const gr_connection_t *conn) {
    if (conn->kill_requested) return 0;
    if (conn->fd >= 0) {
        char byte;
        ssize_t n = recv(conn->fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
        if (n == 0) return 0;
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return 0;
    }
    return 1;
}

/* Answer w with its reply writer: the ring needs the blocked request's id. */
static gr_reply_t *writer_for(gr_waiter_t *w) {
    if (w->conn->reply_request_id) *w->conn->reply_request_id = w->request_id;
    return w->conn->reply;
}

int gr_blocking_unblock(gr_server_t *db, gr_connection_t *conn, int with_error) {
    gr_waiter_t *w = conn->waiter;
    if (!w) return 0;
    gr_reply_t *reply = writer_for(w);
    if (with_error) gr_reply_error_text(reply, GR_ERR_GENERIC, "UNBLOCKED client unblocked via CLIENT UNBLOCK");
    else w->spec->timeout_reply(w->request, reply);
    unlink_waiter(db, w);
    mark_woken(db, conn);
    recompute_deadline(db);
    return 1;
}

/* ---- signal and serve ---- */

void gr_blocking_signal(gr_server_t *db, int32_t db_index, const uint8_t *key, size_t key_length) {
    if (db->blocked_count == 0) return;
    gr_blocking_t *b = db->blocking;
    blocked_key_t *k = find_key(b, db_index, key, key_length, key_hash(db_index, key, key_length));
    if (!k || k->ready) return;
    k->ready = 1;
    k->next_ready = NULL;
    if (b->ready_tail) b->ready_tail->next_ready = k; else b->ready_head = k;
    b->ready_tail = k;
}

void gr_blocking_signal_deleted(gr_server_t *db, int32_t db_index, const uint8_t *key, size_t key_length) {
    if (db->blocked_count == 0) return;
    gr_blocking_t *b = db->blocking;
    blocked_key_t *k = find_key(b, db_index, key, key_length, key_hash(db_index, key, key_length));
    if (!k) return;
    /* answered at once, in blocking order; the key stays listed while waiters remain */
    gr_connection_t *current = db->current;
    int answered = 0;
    for (waiter_link_t *link = k->head, *next; link; link = next) {
        next = link->next;
        gr_waiter_t *w = link->waiter;
        if (!w->spec->gone_reply) continue;
        gr_reply_t *reply = writer_for(w);
        db->current = w->conn;
        w->spec->gone_reply(w->request, reply);
        gr_connection_t *conn = w->conn;
        int last = k->head == link && !next && !k->ready;
        unlink_waiter(db, w);   /* may free k when it was the last waiter */
        mark_woken(db, conn);
        answered = 1;
        if (last) break;
    }
    db->current = current;
    if (answered) recompute_deadline(db);
}

void gr_blocking_signal_db_gone(gr_server_t *db, int32_t db_index) {
    if (db->blocked_count == 0) return;
    gr_blocking_t *b = db->blocking;
    gr_keyspace_t *ks = db->keyspaces[db_index];
    for (size_t i = 0; i < BUCKETS; i++)
        for (blocked_key_t *k = b->buckets[i], *next; k; k = next) {
            next = k->next_in_bucket;   /* k may be freed: its last waiter answered */
            if (k->db_index == db_index && !gr_ks_find(ks, k->key, k->key_length))
                gr_blocking_signal_deleted(db, db_index, k->key, k->key_length);
        }
}

void gr_blocking_signal_db(gr_server_t *db, int32_t db_index) {
    if (db->blocked_count == 0) return;
    gr_blocking_t *b = db->blocking;
    for (size_t i = 0; i < BUCKETS; i++)
        for (blocked_key_t *k = b->buckets[i]; k; k = k->next_in_bucket)
            if (k->db_index == db_index) gr_blocking_signal(db, db_index, k->key, k->key_length);
}

/* 1 if key holds, in database db_index, a live value the waiter's command can take. */
static int key_ready_for(gr_server_t *db, const blocked_key_t *k, const gr_waiter_t *w) {
    gr_ks_entry_t *entry = gr_ks_find(db->keyspaces[k->db_index], k->key, k->key_length);
    if (!entry || gr_db_is_expired(db, entry)) return 0;
    if (w->spec->ready_for) return w->spec->ready_for(entry, w->request, key_index_of(w->spec, w->request, k));
    return w->spec->ready(entry);
}

static void serve_key(gr_server_t *db, blocked_key_t *k) {
    while (k->head && key_ready_for(db, k, k->head->waiter)) {
        gr_waiter_t *w = k->head->waiter;
        gr_connection_t *conn = w->conn;
        if (!client_alive(conn)) {       /* nothing is taken for a client that is gone */
            unlink_waiter(db, w);
            if (!conn->kill_requested) {
                conn->kill_requested = 1;
                conn->kill_reason = "its client is gone (found waiting on a key)";
                db->kills_pending++;
            }
            continue;
        }
        /* Re-run the command on this key alone, as its own connection. */
        gr_request_t request = *w->request;
        gr_bytes_t key = {k->key, (uint32_t)k->key_length};
        gr_bytes_t pair[2];
        if (w->spec->keys == GR_BLOCK_KEY_IN_KEY) {
            request.key = key;
        } else if (w->spec->keys == GR_BLOCK_KEYS_PAIRED) {
            pair[0] = key;
            pair[1] = w->request->items[w->request->item_count / 2 + key_index_of(w->spec, w->request, k)];
            request.items = pair, request.item_count = 2, request.item_capacity = 2;
        } else {
            request.items = &key, request.item_count = 1, request.item_capacity = 1;
        }
        db->current = conn;
        db->keyspace = db->keyspaces[w->db_index];
        gr_reply_t *reply = writer_for(w);
        /* served as a call of the blocked command's row on this key: its events and effect are
         * the pop it made here */
        int index = gr_command_index_of_request(&request);
        gr_call_t call;
        gr_call_begin(db, &call, gr_command_at((size_t)index), index, &request, 0, NULL, NULL, reply);
        call.db_index = w->db_index;
        if (!w->spec->serve(db, &request, reply)) w->spec->timeout_reply(&request, reply);   /* never parks */
        gr_call_end(db, &call);
        /* SLOWLOG, as Redis 7.0 logs an unblocked command: its own argv, with the time its
         * first call took plus this serving (not the time it waited) */
        uint64_t elapsed = w->park_cycles + (uint64_t)(gr_db_account_start() - call.start);
        size_t argc = w->argc;
        uint8_t **argv = w->argv;
        size_t *argv_length = w->argv_length;
        gr_request_t *original = w->request;
        gr_block_keys_t w_spec_keys = w->spec->keys;
        w->argv = NULL, w->request = NULL;   /* kept past unlink_waiter for the entry */
        unlink_waiter(db, w);
        if (!argc && original && w_spec_keys == GR_BLOCK_KEYS_IN_ITEMS && original->item_count < 64) {
            /* a typed ring request (BLPOP k1 k2 timeout's shape): shown as that command line */
            const gr_command_t *row = gr_command_at((size_t)index);
            const uint8_t *words[66];
            size_t lengths[66], n = 0;
            char name[32], timeout[40];
            size_t name_length = row ? strlen(row->name) : 0;
            if (name_length >= sizeof name) name_length = sizeof name - 1;
            for (size_t i = 0; i < name_length; i++) name[i] = (char)toupper((unsigned char)row->name[i]);
            words[n] = (const uint8_t *)name, lengths[n++] = name_length;
            for (uint32_t i = 0; i < original->item_count; i++)
                words[n] = original->items[i].data, lengths[n++] = original->items[i].length;
            int t = snprintf(timeout, sizeof timeout, "%.17g", original->timeout);
            words[n] = (const uint8_t *)timeout, lengths[n++] = t > 0 ? (size_t)t : 0;
            gr_db_log_slow(db, index, elapsed, n, words, lengths, NULL);
        } else {
            gr_db_log_slow(db, index, elapsed, argc, (const uint8_t *const *)argv, argv_length, argc ? NULL : original);
        }
        free(argv);
        if (original) gr_request_free_clone(original);
        mark_woken(db, conn);
    }
}

void gr_blocking_serve(gr_server_t *db) {
    gr_blocking_t *b = db->blocking;
    if (!b || !b->ready_head || db->serve_deferred) return;
    gr_connection_t *current = db->current;
    while (b->ready_head) {
        blocked_key_t *k = b->ready_head;
        b->ready_head = k->next_ready;
        if (!b->ready_head) b->ready_tail = NULL;
        serve_key(db, k);                /* may mark further keys ready (BLMOVE destinations) */
        k->ready = 0;
        free_key_if_unused(b, k);
    }
    recompute_deadline(db);
    db->current = current;
    if (current) db->keyspace = db->keyspaces[current->db_index];
}

/* ---- timeouts and the server's view ---- */

int64_t gr_db_expire_blocked(gr_server_t *db) {
    if (db->blocked_count == 0) return 0;
    int64_t now = gr_monotonic_ms(), expired = 0;
    if (now < db->next_block_deadline_ms) return 0;
    gr_connection_t *current = db->current;
    for (gr_waiter_t *w = db->blocking->first, *next; w; w = next) {
        next = w->next;
        if (w->deadline_ms > now) continue;
        gr_connection_t *conn = w->conn;
        gr_reply_t *reply = writer_for(w);
        w->spec->timeout_reply(w->request, reply);
        unlink_waiter(db, w);
        mark_woken(db, conn);
        expired++;
    }
    recompute_deadline(db);
    db->current = current;
    return expired;
}

int64_t gr_db_next_block_timeout_ms(gr_server_t *db) {
    if (db->blocked_count == 0 || db->next_block_deadline_ms == INT64_MAX) return -1;
    int64_t left = db->next_block_deadline_ms - gr_monotonic_ms();
    return left > 0 ? left : 0;
}

int64_t gr_db_take_woken(gr_server_t *db) {
    if (db->woken_pending == 0) return 0;
    for (gr_connection_t *conn = db->connections; conn; conn = conn->next) {
        if (conn->woken) {
            conn->woken = 0;
            db->woken_pending--;
            return conn->id;
        }
    }
    db->woken_pending = 0;
    return 0;
}

int gr_blocking_check(const gr_server_t *db) {
    const gr_blocking_t *b = db->blocking;
    int64_t waiters = 0;
    for (const gr_waiter_t *w = b ? b->first : NULL; w; w = w->next) {
        waiters++;
        if (w->conn->waiter != w || !w->conn->blocked) return -1;
        for (uint32_t i = 0; i < w->link_count; i++) {
            const waiter_link_t *link = &w->links[i], *at = link->key->head;
            while (at && at != link) at = at->next;
            if (!at || link->waiter != w) return -1;
        }
    }
    if (waiters != db->blocked_count) return -1;
    for (size_t i = 0; b && i < BUCKETS; i++)
        for (const blocked_key_t *k = b->buckets[i]; k; k = k->next_in_bucket)
            if (!k->head && !k->ready) return -1;   /* an unused key should have been freed */
    return 0;
}

void gr_blocking_free_all(gr_server_t *db) {
    gr_blocking_t *b = db->blocking;
    if (!b) return;
    while (b->first) unlink_waiter(db, b->first);
    for (size_t i = 0; i < BUCKETS; i++)
        while (b->buckets[i]) {
            blocked_key_t *k = b->buckets[i];
            b->buckets[i] = k->next_in_bucket;
            free(k->key);
            free(k);
        }
    free(b);
    db->blocking = NULL;
}
