/* replica.c — goblin as a replica of a Redis (7.0) primary: the link in the serving loop.
 *
 *   CONNECT -> CONNECTING (the host name looked up by a detached thread unless numeric, then a
 *   non-blocking connect) -> HANDSHAKE: PING, AUTH (masterauth / masteruser), REPLCONF
 *   listening-port (replica-announce-port, else our port), REPLCONF ip-address (only when
 *   replica-announce-ip is set), REPLCONF capa eof capa psync2, PSYNC replid offset+1 (or ? -1),
 *   one at a time, each reply read before the next is sent
 *   -> +FULLRESYNC replid offset: TRANSFER: the RDB payload, "$<len>" or diskless "$EOF:<mark>",
 *      is written to a temporary file in --dir, then LOADED ASIDE: a thread of its own reads it
 *      (gr_rdb_load_aside) into a fresh set of databases while the loop goes on serving the old
 *      data (replica-serve-stale-data yes) or MASTERDOWN (no), as Redis's repl-diskless-load
 *      swapdb; the stream that arrives meanwhile is read and kept in l->in. When the thread is
 *      done (an eventfd in the loop's epoll set) the loop swaps the databases in O(databases)
 *      (gr_repl_swap_data), replaces the function libraries with the payload's, hands the old
 *      data to another thread to free, and applies the kept stream.
 *   -> +CONTINUE [replid]: the stream continues from the offset this replica holds
 *   -> CONNECTED: the stream is fed to the primary's pseudo-client, a RESP connection whose
 *      replies are dropped (db->current->repl_master: admission lets it write, lookups let it
 *      see keys logically expired, which only its DEL removes); the offset is the bytes of
 *      whole commands applied; REPLCONF ACK every second (every 50 ms after a full sync until
 *      the stream starts) and when GETACK asks.
 * What the helper threads share with the loop: the allocator's counters (each helper counts
 * into its own, absorbed by the loop when it joins it: core/alloc.h), the hash engine's count of
 * hashes with field TTLs (atomic), the sets' hash key (fixed before any thread starts), the
 * CRC tables (built before the load starts). The loader reads copies of the settings and writes
 * only its own keyspaces; libraries and observers are the loop's business at the swap.
 * A drop (read error, protocol error, CLIENT KILL TYPE master, repl-timeout) keeps replid and
 * offset, so the next attempt asks PSYNC for what follows; a failed attempt retries each second.
 * A drop while a whole payload is loaded aside lets the load finish (the data is the primary's
 * at that offset); REPLICAOF elsewhere or NO ONE cancels it (the old data stays). A refused
 * payload keeps the old data too, and the next attempt asks a full resync.
 * Garbage from the primary closes the link (logged); nothing it sends crashes the server.
 *
 * After a full sync the append-only file (if on) is rewritten in the background, as Redis does;
 * the stream's commands reach it as any write does.
 */
#include "server/replica.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/clock.h"
#include "core/snapshot_io.h"
#include "persist/aof.h"
#include "persist/rdb_format.h"
#include "persist/snapshot.h"
#include "resp/resp_conn.h"

#define RETRY_NS 1000000000LL          /* a failed attempt: try again a second later (Redis's cron) */
#define TIMEOUT_MS 60000               /* repl-timeout */
#define ACK_NS 1000000000LL
/* After a full sync, until the stream's first byte: a primary (Redis 7.0, diskless) puts the
 * replica online only at an ACK that comes after it saw its RDB child end, so the ACK sent at
 * once is often too early and the next one a second later held the stream back that long
 * (bench/repl_lag.py's ~0.5-1 s probes): ask again every 50 ms meanwhile. */
#define ACK_FAST_NS 50000000LL
#define LINE_MAX_BYTES 4096

#define FREE_INLINE_KEYS 4096           /* old data smaller than this is freed on the loop at once */

enum { STEP_PING, STEP_AUTH, STEP_PORT, STEP_IP, STEP_CAPA, STEP_PSYNC, STEP_PAYLOAD_HEADER };

/* The payload loaded aside by a thread of its own (see the header). */
typedef struct load_job {
    gr_rdb_target_t target;
    char path[600];
    int cancel;                    /* set by the loop (drop), read by the loader between keys */
    int done;                      /* set by the thread when status/error/stats/counters are final */
    int status;
    char error[512];
    gr_rdb_stats_t stats;
    gr_mem_counters_t counters;    /* the thread's allocations: absorbed by the loop at the join */
    int wake_fd;
    int64_t started_ns;
    pthread_t thread;
} load_job_t;

/* The primary's host name looked up by a thread of its own (getaddrinfo blocks: a slow DNS
 * must not stall the loop). Detached: whichever of the thread and the loop lets go of it second
 * frees it (released), so a link freed or pointed elsewhere meanwhile never waits for it. */
typedef struct resolve_job {
    char host[256], port[16];
    struct addrinfo *found;
    int status;
    int done, released;
    int wake_fd;                   /* a dup of the link's eventfd: the job's own */
} resolve_job_t;

/* Old (or refused) data freed by a thread of its own. */
typedef struct free_job {
    gr_keyspace_t *keyspaces[GR_DB_COUNT];
    gr_mem_counters_t counters;
    int done, wake_fd;
    pthread_t thread;
} free_job_t;

struct gr_replica_link {
    gr_server_t *db;
    int epoll_fd;
    uint64_t watch;
    void (*log)(void *, const char *);
    void *log_context;
    int64_t *next_client_id;
    int fd;
    uint32_t events;
    int step;
    uint8_t *in;                   /* handshake lines, and payload bytes past the header */
    size_t in_length, in_capacity;
    int tmp_fd;
    char tmp_path[600];
    int eof_form;                  /* diskless: the payload ends with this 40-byte mark */
    char mark[40];
    uint8_t tail[40];
    size_t tail_length;
    int64_t payload_left;          /* disk form: bytes still to come */
    char new_replid[41];
    int64_t new_offset;
    gr_resp_conn_t *master;
    int64_t stream_base;           /* offset when the stream began (after the load or CONTINUE) */
    int64_t fed;                   /* stream bytes fed since */
    uint8_t *proxy;                /* stream bytes fed since the offset last moved (inside a MULTI) */
    size_t proxy_length, proxy_capacity;
    int64_t next_attempt_ns, last_ack_ns;
    int ack_fast;                  /* a full sync ended and no stream byte came yet: ACK_FAST_NS */
    int64_t sent_fack;             /* the FACK the last ACK carried: a newer one is sent within ACK_FAST_NS */
    int wake_fd;                   /* eventfd in the loop's epoll set: a helper thread finished */
    load_job_t *load;              /* the payload being loaded aside; NULL when none */
    free_job_t *freeing;           /* old data being freed; NULL when none */
    resolve_job_t *resolving;      /* the primary's name being looked up; NULL when none */
};

static void say(gr_replica_link_t *l, const char *format, ...) __attribute__((format(printf, 2, 3)));
#include <stdarg.h>
static void say(gr_replica_link_t *l, const char *format, ...) {
    if (!l->log) return;
    char line[900];
    va_list args;
    va_start(args, format);
    vsnprintf(line, sizeof line, format, args);
    va_end(args);
    l->log(l->log_context, line);
}

gr_replica_link_t *gr_replica_link_new(gr_server_t *db, int epoll_fd, uint64_t watch,
                                       void (*log)(void *, const char *), void *log_context, int64_t *next_client_id) {
    gr_replica_link_t *l = calloc(1, sizeof *l);
    if (!l) return NULL;
    l->db = db;
    l->epoll_fd = epoll_fd;
    l->watch = watch;
    l->log = log;
    l->log_context = log_context;
    l->next_client_id = next_client_id;
    l->fd = -1;
    l->tmp_fd = -1;
    l->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (l->wake_fd >= 0) {
        struct epoll_event event = {.events = EPOLLIN, .data.u64 = watch | (uint32_t)l->wake_fd};
        if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, l->wake_fd, &event) != 0) { close(l->wake_fd); l->wake_fd = -1; }
    }
    return l;
}

/* ---- helper threads: the load aside and the old data's release ---- */

static void wake_loop(int fd) {
    uint64_t one = 1;
    ssize_t ignored = fd >= 0 ? write(fd, &one, sizeof one) : 0;
    (void)ignored;
}

static void *free_thread(void *argument) {
    free_job_t *job = argument;
    int wake_fd = job->wake_fd;
    gr_mem_thread_counters(&job->counters);
    gr_repl_free_keyspaces(job->keyspaces);
    gr_mem_thread_counters(NULL);
    __atomic_store_n(&job->done, 1, __ATOMIC_RELEASE);
    wake_loop(wake_fd);
    return NULL;
}

/* The old data's release, finished: its counters join the process's. wait: join even if the
 * thread is still freeing. */
static void reap_free(gr_replica_link_t *l, int wait) {
    free_job_t *job = l->freeing;
    if (!job || (!wait && !__atomic_load_n(&job->done, __ATOMIC_ACQUIRE))) return;
    pthread_join(job->thread, NULL);
    gr_mem_absorb(&job->counters);
    free(job);
    l->freeing = NULL;
}

/* Free a set of keyspaces (no observers): on the loop when small, else on a thread (one at a time). */
static void release_keyspaces(gr_replica_link_t *l, gr_keyspace_t **keyspaces) {
    free_job_t *job = gr_repl_keyspaces_size(keyspaces) >= FREE_INLINE_KEYS ? calloc(1, sizeof *job) : NULL;
    if (job) {
        reap_free(l, 1);
        memcpy(job->keyspaces, keyspaces, sizeof job->keyspaces);
        job->wake_fd = l->wake_fd;
        if (pthread_create(&job->thread, NULL, free_thread, job) == 0) {
            l->freeing = job;
            return;
        }
        free(job);
    }
    gr_repl_free_keyspaces(keyspaces);
}

static void *load_thread(void *argument) {
    load_job_t *job = argument;
    int wake_fd = job->wake_fd;
    gr_mem_thread_counters(&job->counters);
    job->status = gr_rdb_load_aside(&job->target, job->path, &job->stats, job->error, sizeof job->error);
    gr_mem_thread_counters(NULL);
    __atomic_store_n(&job->done, 1, __ATOMIC_RELEASE);
    wake_loop(wake_fd);
    return NULL;
}

/* Join the load (cancelling it first when cancel) and take its counters; the job stays. */
static void join_load(load_job_t *job, int cancel) {
    if (cancel) __atomic_store_n(&job->cancel, 1, __ATOMIC_RELAXED);
    pthread_join(job->thread, NULL);
    gr_mem_absorb(&job->counters);
    unlink(job->path);
}

static void discard_load(gr_replica_link_t *l) {
    load_job_t *job = l->load;
    if (!job) return;
    l->db->repl.loading_aside = 0;
    join_load(job, 1);
    release_keyspaces(l, job->target.keyspaces);
    gr_rdb_target_free_libraries(&job->target);
    free(job);
    l->load = NULL;
}

static void watch_fd(gr_replica_link_t *l, uint32_t events) {
    if (l->fd < 0 || events == l->events) return;
    struct epoll_event event = {.events = events, .data.u64 = l->watch | (uint32_t)l->fd};
    epoll_ctl(l->epoll_fd, l->events ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, l->fd, &event);
    l->events = events;
}

static void discard_payload(gr_replica_link_t *l) {
    if (l->tmp_fd >= 0) {
        close(l->tmp_fd);
        unlink(l->tmp_path);
        l->tmp_fd = -1;
    }
}

static void abandon_resolve(gr_replica_link_t *l);

/* Close the socket and the pseudo-client; replid and offset stay for the next PSYNC. */
static void drop(gr_replica_link_t *l, int64_t retry_after_ns) {
    gr_replication_t *r = &l->db->repl;
    abandon_resolve(l);
    if (l->master) {
        gr_connection_t *state = gr_resp_conn_state(l->master);   /* a half-received MULTI goes with it, as Redis */
        if (state->kill_requested && !state->kill_reported) { state->kill_reported = 1; l->db->kills_pending--; }
        gr_resp_conn_free(l->master);
        l->master = NULL;
        r->have_cached = 1;
    }
    if (l->fd >= 0) {
        epoll_ctl(l->epoll_fd, EPOLL_CTL_DEL, l->fd, NULL);
        close(l->fd);
        l->fd = -1;
    }
    l->events = 0;
    l->proxy_length = 0;   /* a half-received MULTI: the offset stays before it */
    discard_payload(l);   /* a whole payload being loaded aside is kept: its data is the primary's at new_offset */
    l->in_length = 0;
    /* master_link_down_since_seconds counts from the loss of an established link; a link never
     * up says -1 (Redis's repl_down_since: Sentinel may promote such a replica) */
    if (r->state == GR_REPL_CONNECTED) r->link_down_since_ms = l->db->now_ms ? l->db->now_ms : 1;
    r->state = r->master_port ? GR_REPL_CONNECT : GR_REPL_NONE;
    l->next_attempt_ns = gr_monotonic_ns() + retry_after_ns;
}

void gr_replica_link_free(gr_replica_link_t *l) {
    if (!l) return;
    drop(l, 0);
    discard_load(l);
    abandon_resolve(l);
    reap_free(l, 1);
    if (l->wake_fd >= 0) close(l->wake_fd);
    free(l->in);
    free(l->proxy);
    free(l);
}

static int send_all(gr_replica_link_t *l, const char *data, size_t length) {
    while (length) {
        ssize_t n = send(l->fd, data, length, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;    /* the link's messages are small: a full socket buffer is a dead link */
        data += n;
        length -= (size_t)n;
    }
    return 0;
}

/* A command as a RESP multibulk. */
static int send_command(gr_replica_link_t *l, int argc, const char **argv) {
    char buffer[2048];
    size_t n = (size_t)snprintf(buffer, sizeof buffer, "*%d\r\n", argc);
    for (int i = 0; i < argc; i++) {
        size_t length = strlen(argv[i]);
        if (n + length + 32 >= sizeof buffer) return -1;
        n += (size_t)snprintf(buffer + n, sizeof buffer - n, "$%zu\r\n%s\r\n", length, argv[i]);
    }
    return send_all(l, buffer, n);
}

/* REPLCONF ACK <offset>, and with an AOF FACK <offset fdatasynced to it> (Redis 7.2: a primary's
 * WAITAOF counts the replicas by it; none is sent without an AOF, as Redis). */
static void send_ack(gr_replica_link_t *l) {
    char offset[32], fack[32];
    snprintf(offset, sizeof offset, "%lld", (long long)l->db->repl.offset);
    int64_t fsynced = gr_aof_fsynced_reploff(l->db);
    snprintf(fack, sizeof fack, "%lld", (long long)fsynced);
    const char *argv[] = {"REPLCONF", "ACK", offset, "FACK", fack};
    send_command(l, fsynced >= 0 ? 5 : 3, argv);
    l->sent_fack = fsynced;
    l->last_ack_ns = gr_monotonic_ns();
}

static void resolve_job_release(resolve_job_t *job) {
    if (__atomic_exchange_n(&job->released, 1, __ATOMIC_ACQ_REL) == 0) return;   /* the other side frees it */
    if (job->found) freeaddrinfo(job->found);
    if (job->wake_fd >= 0) close(job->wake_fd);
    free(job);
}

static void *resolve_thread(void *argument) {
    resolve_job_t *job = argument;
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    job->status = getaddrinfo(job->host, job->port, &hints, &job->found);
    __atomic_store_n(&job->done, 1, __ATOMIC_RELEASE);
    wake_loop(job->wake_fd);
    resolve_job_release(job);
    return NULL;
}

/* Let go of a lookup in progress (REPLICAOF elsewhere, the link freed). */
static void abandon_resolve(gr_replica_link_t *l) {
    if (!l->resolving) return;
    resolve_job_release(l->resolving);
    l->resolving = NULL;
}

static void connect_found(gr_replica_link_t *l, int status, struct addrinfo *found);

/* The primary's address: a numeric one at once, a name by a thread (connect_found follows). */
static void start_connect(gr_replica_link_t *l) {
    gr_replication_t *r = &l->db->repl;
    char port[16];
    snprintf(port, sizeof port, "%lld", (long long)r->master_port);
    unsigned char address[sizeof(struct in6_addr)];
    int numeric = inet_pton(AF_INET, r->master_host, address) == 1 || inet_pton(AF_INET6, r->master_host, address) == 1;
    if (!numeric && l->wake_fd >= 0 && !l->resolving) {
        resolve_job_t *job = calloc(1, sizeof *job);
        if (job) {
            snprintf(job->host, sizeof job->host, "%s", r->master_host);
            snprintf(job->port, sizeof job->port, "%s", port);
            job->wake_fd = fcntl(l->wake_fd, F_DUPFD_CLOEXEC, 0);
            pthread_attr_t attributes;
            pthread_attr_init(&attributes);
            pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
            pthread_t thread;
            int started = job->wake_fd >= 0 && pthread_create(&thread, &attributes, resolve_thread, job) == 0;
            pthread_attr_destroy(&attributes);
            if (started) {
                l->resolving = job;
                r->state = GR_REPL_CONNECTING;   /* as Redis's: the lookup is part of connecting */
                r->last_io_ms = l->db->now_ms;
                return;
            }
            if (job->wake_fd >= 0) close(job->wake_fd);
            free(job);
        }
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = numeric ? AI_NUMERICHOST : 0};
    struct addrinfo *found = NULL;
    int status = getaddrinfo(r->master_host, port, &hints, &found);   /* numeric: no lookup, does not block */
    connect_found(l, status, found);
}

/* A lookup finished: connect if it is still for the primary we want. */
static void resolve_finished(gr_replica_link_t *l) {
    resolve_job_t *job = l->resolving;
    gr_replication_t *r = &l->db->repl;
    l->resolving = NULL;
    char port[16];
    snprintf(port, sizeof port, "%lld", (long long)r->master_port);
    struct addrinfo *found = NULL;
    int status = job->status;
    int current = r->master_port && strcmp(job->host, r->master_host) == 0 && strcmp(job->port, port) == 0;
    if (current) found = job->found, job->found = NULL;
    resolve_job_release(job);
    if (current) connect_found(l, status, found);
}

static void connect_found(gr_replica_link_t *l, int status, struct addrinfo *found) {
    gr_replication_t *r = &l->db->repl;
    if (status != 0 || !found) {
        say(l, "Unable to connect to MASTER: %s", status ? gai_strerror(status) : "no address");
        if (found) freeaddrinfo(found);
        drop(l, RETRY_NS);
        return;
    }
    say(l, "Connecting to MASTER %s:%lld", r->master_host, (long long)r->master_port);
    int fd = socket(found->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) { freeaddrinfo(found); drop(l, RETRY_NS); return; }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    status = connect(fd, found->ai_addr, found->ai_addrlen);
    freeaddrinfo(found);
    if (status != 0 && errno != EINPROGRESS) {
        say(l, "Unable to connect to MASTER: %s", strerror(errno));
        close(fd);
        drop(l, RETRY_NS);
        return;
    }
    l->fd = fd;
    l->events = 0;
    l->in_length = 0;
    r->state = GR_REPL_CONNECTING;
    r->last_io_ms = l->db->now_ms;
    say(l, "MASTER <-> REPLICA sync started");
    watch_fd(l, EPOLLOUT);
}

/* The next handshake command for l->step (steps that do not apply are skipped). */
static int send_step(gr_replica_link_t *l) {
    gr_replication_t *r = &l->db->repl;
    if (l->step == STEP_AUTH && !r->masterauth[0]) l->step = STEP_PORT;
    if (l->step == STEP_IP && !r->announce_ip[0]) l->step = STEP_CAPA;
    switch (l->step) {
    case STEP_PING: { const char *argv[] = {"PING"}; return send_command(l, 1, argv); }
    case STEP_AUTH:
        if (r->masteruser[0]) { const char *argv[] = {"AUTH", r->masteruser, r->masterauth}; return send_command(l, 3, argv); }
        else { const char *argv[] = {"AUTH", r->masterauth}; return send_command(l, 2, argv); }
    case STEP_PORT: {
        char port[16];
        snprintf(port, sizeof port, "%lld", (long long)(r->announce_port ? r->announce_port : l->db->info.tcp_port));
        const char *argv[] = {"REPLCONF", "listening-port", port};
        return send_command(l, 3, argv);
    }
    case STEP_IP: { const char *argv[] = {"REPLCONF", "ip-address", r->announce_ip}; return send_command(l, 3, argv); }
    case STEP_CAPA: { const char *argv[] = {"REPLCONF", "capa", "eof", "capa", "psync2"}; return send_command(l, 5, argv); }
    case STEP_PSYNC: {
        char offset[32];
        if (r->have_cached && strspn(r->replid, "0") != 40) {
            snprintf(offset, sizeof offset, "%lld", (long long)(r->offset + 1));
            say(l, "Trying a partial resynchronization (request %s:%s).", r->replid, offset);
            const char *argv[] = {"PSYNC", r->replid, offset};
            return send_command(l, 3, argv);
        }
        say(l, "Partial resynchronization not possible (no cached master)");
        const char *argv[] = {"PSYNC", "?", "-1"};
        return send_command(l, 3, argv);
    }
    }
    return 0;
}

/* One line from l->in (without its \r\n) into line; 1, 0 (incomplete) or -1 (too long). */
static int take_line(gr_replica_link_t *l, char *line, size_t size) {
    uint8_t *nl = memchr(l->in, '\n', l->in_length);
    if (!nl) return l->in_length > LINE_MAX_BYTES ? -1 : 0;
    size_t length = (size_t)(nl - l->in), consumed = length + 1;
    if (length && l->in[length - 1] == '\r') length--;
    if (length >= size) return -1;
    memcpy(line, l->in, length);
    line[length] = '\0';
    memmove(l->in, l->in + consumed, l->in_length - consumed);
    l->in_length -= consumed;
    return 1;
}

static void begin_stream(gr_replica_link_t *l) {
    gr_server_t *db = l->db;
    gr_replication_t *r = &db->repl;
    l->master = gr_resp_conn_new(db, (*l->next_client_id)++);
    if (!l->master) { drop(l, RETRY_NS); return; }
    char addr[300];
    snprintf(addr, sizeof addr, "%s:%lld", r->master_host, (long long)r->master_port);
    gr_resp_conn_set_peer(l->master, l->fd, 0, addr, "");
    gr_connection_t *state = gr_resp_conn_state(l->master);
    state->repl_master = 1;
    state->user = db->acl->default_user;
    l->stream_base = r->offset;
    l->fed = 0;
    l->proxy_length = 0;
    l->ack_fast = 0;
    r->state = GR_REPL_CONNECTED;
    r->have_cached = 1;
    r->last_io_ms = db->now_ms;
    l->last_ack_ns = 0;
    watch_fd(l, EPOLLIN);
}

/* The length of the whole RESP multibulk frame at p, 0 when incomplete, -1 when it is not one. */
static int64_t frame_length(const uint8_t *p, size_t n) {
    size_t at = 0;
    int64_t count = 0;
    for (int64_t item = -1; item < count || item < 0; item++) {
        const uint8_t *nl = at < n ? memchr(p + at, '\n', n - at) : NULL;
        if (!nl) return n - at > 64 ? -1 : 0;
        if (p[at] != (item < 0 ? '*' : '$')) return -1;
        int64_t value = 0;
        const uint8_t *q = p + at + 1;
        if (q == nl || nl[-1] != '\r') return -1;
        for (; q < nl - 1; q++) {
            if (*q < '0' || *q > '9' || value > (INT64_C(1) << 40)) return -1;
            value = value * 10 + (*q - '0');
        }
        at = (size_t)(nl - p) + 1;
        if (item < 0) {
            if (value > INT32_MAX) return -1;   /* the parser refuses it (Protocol error) */
            count = value;
            continue;
        }
        if (value > 512LL * 1024 * 1024) return -1;   /* past proto-max-bulk-len's ceiling: likewise */
        if ((uint64_t)(n - at) < (uint64_t)value + 2) return 0;
        at += (size_t)value + 2;
    }
    return (int64_t)at;
}

/* Chained replication: the applied stream, byte for byte, into the backlog (which feeds our own
 * replicas, server/primary.c) as the offset moves past it; the bytes of an unfinished MULTI wait
 * in l->proxy, as the offset does. Returns -1 out of memory. */
static int proxy(gr_replica_link_t *l, const uint8_t *bytes, size_t length, int boundary) {
    gr_server_t *db = l->db;
    if (boundary && !l->proxy_length) {
        if (db->repl_primary.backlog) gr_repl_backlog_feed(db, bytes, length);
        return 0;
    }
    if (l->proxy_length + length > l->proxy_capacity) {
        size_t capacity = l->proxy_capacity ? l->proxy_capacity : 4096;
        while (capacity < l->proxy_length + length) capacity *= 2;
        uint8_t *grown = realloc(l->proxy, capacity);
        if (!grown) return -1;
        l->proxy = grown;
        l->proxy_capacity = capacity;
    }
    memcpy(l->proxy + l->proxy_length, bytes, length);
    l->proxy_length += length;
    if (boundary) {
        if (db->repl_primary.backlog) gr_repl_backlog_feed(db, l->proxy, l->proxy_length);
        l->proxy_length = 0;
    }
    return 0;
}

/* Feed stream bytes to the primary's pseudo-client, a whole command at a time, so the offset
 * counts exactly what was applied (nothing inside an unfinished MULTI, as Redis's reploff);
 * its replies are dropped. Returns the bytes used (the rest is an incomplete command). */
static size_t feed(gr_replica_link_t *l, const uint8_t *data, size_t length) {
    gr_replication_t *r = &l->db->repl;
    gr_connection_t *state = gr_resp_conn_state(l->master);
    size_t used = 0;
    l->ack_fast = 0;   /* the stream flows */
    while (used < length && l->master) {
        int64_t frame = frame_length(data + used, length - used);
        if (frame == 0) break;
        size_t take = frame < 0 ? length - used : (size_t)frame;   /* not a multibulk: the parser judges it */
        const uint8_t *at = data + used;
        gr_resp_conn_feed(l->master, at, take);
        used += take;
        l->fed += (int64_t)take;
        size_t out;
        gr_resp_conn_output(l->master, &out);
        gr_resp_conn_consume_output(l->master, out);
        int boundary = !state->in_multi && gr_resp_conn_input_pending(l->master) == 0;
        if (!gr_resp_conn_close_reason(l->master) && !gr_resp_conn_should_close(l->master) &&
            proxy(l, at, take, boundary) != 0) {
            say(l, "Out of memory for the stream to our replicas: closing the link, it will resync");
            drop(l, RETRY_NS);
            return length;
        }
        if (boundary) r->offset = l->stream_base + l->fed;   /* the backlog's feed counted the same */
        if (gr_resp_conn_close_reason(l->master) || gr_resp_conn_should_close(l->master)) {
            say(l, "Protocol error from MASTER (%s): closing the link, it will resync",
                gr_resp_conn_close_reason(l->master) ? gr_resp_conn_close_reason(l->master) : "bad request");
            drop(l, RETRY_NS);
            return length;
        }
        if (r->getack) {
            r->getack = 0;
            /* what was applied reaches the log first (appendfsync always: fdatasynced, the batch's
             * own fsync brought forward), so the FACK covers the writes before the GETACK */
            if (l->db->aof) gr_propagate_sync(l->db);
            send_ack(l);
        }
    }
    return used;
}

/* The sync is done: the new history, the AOF rewritten, the stream from here. */
static void sync_finished(gr_replica_link_t *l, int64_t keys) {
    gr_server_t *db = l->db;
    gr_replication_t *r = &db->repl;
    memcpy(r->replid, l->new_replid, sizeof r->replid);
    r->offset = l->new_offset;
    memset(r->replid2, '0', 40);
    r->second_offset = -1;
    /* a backlog of the new history from here, as Redis's replicas keep one: our own replicas
     * (chained) continue from it, and so do the old primary's after a promotion */
    if (gr_repl_backlog_create(db) == 0) gr_repl_backlog_reset(db);
    /* our replicas follow the old history: none of the new stream reaches them before the
     * loop's next gr_primary_tick disconnects them (and attaches the feed again) */
    db->repl_primary.feed = NULL;
    db->repl_primary.feed_context = NULL;
    r->sync_full++;
    say(l, "MASTER <-> REPLICA sync: Finished with success (%lld keys)", (long long)keys);
    if (db->aof) {   /* the log held the old data: rewrite it from the new (Redis's restartAOFAfterSync) */
        char message[300] = "";
        gr_aof_hold_fsynced_reploff(db);   /* FACK 0 until the rewritten file holds the new data */
        if (gr_aof_rewrite_background(db, message, sizeof message) < 0)
            say(l, "Background AOF rewrite after the full sync failed: %s", message);
    }
    if (l->fd >= 0) {
        begin_stream(l);
        l->ack_fast = 1;
    } else r->have_cached = 1;   /* the link dropped during the load: the next attempt continues from here */
}

/* The payload on the loop's thread (no thread could be started): empty, then load. */
static void load_in_place(gr_replica_link_t *l) {
    gr_server_t *db = l->db;
    gr_replication_t *r = &db->repl;
    say(l, "MASTER <-> REPLICA sync: Flushing old data");
    gr_repl_empty_data(db);
    if (gr_function_hooks && gr_function_hooks->flush) gr_function_hooks->flush(db);
    say(l, "MASTER <-> REPLICA sync: Loading DB in memory");
    gr_rdb_stats_t stats;
    memset(&stats, 0, sizeof stats);
    char error[512] = "";
    int status = gr_rdb_load(db, l->tmp_path, &stats, error, sizeof error);
    unlink(l->tmp_path);
    if (status != 1) {
        say(l, "Failed trying to load the MASTER synchronization DB from disk: %s", error[0] ? error : "unreadable");
        r->have_cached = 0;               /* the data is gone: the next attempt asks a full resync */
        drop(l, RETRY_NS);
        return;
    }
    sync_finished(l, stats.keys);
}

/* The payload is whole: load it aside on a thread of its own while the loop serves the old data
 * (finish_load swaps when it is done). */
static void load_payload(gr_replica_link_t *l) {
    gr_server_t *db = l->db;
    close(l->tmp_fd);   /* no fsync: the file is read now and deleted, it is never the dataset's copy */
    l->tmp_fd = -1;
    /* GOBLIN_REPL_LOAD_IN_PLACE=1: the old way, on the loop (bench/repl_stall.py's baseline) */
    const char *in_place = getenv("GOBLIN_REPL_LOAD_IN_PLACE");
    load_job_t *job = l->wake_fd >= 0 && !(in_place && in_place[0] == '1') ? calloc(1, sizeof *job) : NULL;
    if (job && gr_repl_new_keyspaces(db, job->target.keyspaces) == 0) {
        job->target.config = db->config;
        job->target.list_config = db->list_config;
        job->target.list_target = db->list_target;
        job->target.cancel = &job->cancel;
        snprintf(job->path, sizeof job->path, "%s", l->tmp_path);
        job->wake_fd = l->wake_fd;
        job->started_ns = gr_monotonic_ns();
        (void)gr_crc64(0, (const uint8_t *)"", 0);   /* its tables built here, not raced by two threads */
        say(l, "MASTER <-> REPLICA sync: Loading DB in memory (aside; the old data is served meanwhile)");
        if (pthread_create(&job->thread, NULL, load_thread, job) == 0) {
            l->load = job;
            db->repl.loading_aside = 1;
            return;
        }
        gr_repl_free_keyspaces(job->target.keyspaces);
    }
    free(job);
    load_in_place(l);
}

/* The thread finished: swap its data in (O(databases)), release the old, go on with the stream
 * that arrived meanwhile. */
static void finish_load(gr_replica_link_t *l) {
    gr_server_t *db = l->db;
    gr_replication_t *r = &db->repl;
    load_job_t *job = l->load;
    join_load(job, 0);
    l->load = NULL;
    r->loading_aside = 0;
    int ok = job->status == 1;
    char error[600];
    snprintf(error, sizeof error, "%s", job->error[0] ? job->error : "unreadable");
    if (ok && gr_function_hooks && gr_function_hooks->flush) {   /* the primary's libraries replace ours, as Redis */
        gr_function_hooks->flush(db);
        for (size_t i = 0; ok && i < job->target.library_count; i++)
            if (gr_function_hooks->load(db, job->target.libraries[i].code, job->target.libraries[i].length, error,
                                        sizeof error) != 0)
                ok = 0;
    } else if (ok && job->target.library_count) {
        snprintf(error, sizeof error, "function libraries are not available");
        ok = 0;
    }
    gr_rdb_target_free_libraries(&job->target);
    if (!ok) {
        say(l, "Failed trying to load the MASTER synchronization DB from disk: %s", error);
        release_keyspaces(l, job->target.keyspaces);   /* the old data stays (swapdb's restore) */
        free(job);
        r->have_cached = 0;
        drop(l, RETRY_NS);
        return;
    }
    int64_t swap_start = gr_monotonic_ns();
    gr_repl_swap_data(db, job->target.keyspaces);
    int64_t swapped = gr_monotonic_ns();
    say(l, "MASTER <-> REPLICA sync: loaded aside in %.3f s, swapped in %.3f ms", (swap_start - job->started_ns) / 1e9,
        (swapped - swap_start) / 1e6);
    release_keyspaces(l, job->target.keyspaces);
    int64_t keys = job->stats.keys;
    free(job);
    r->last_io_ms = db->now_ms;
    sync_finished(l, keys);
}

/* Payload bytes: to the file, watching for the end (length, or the EOF mark). Returns the
 * bytes of data that belong to the payload. */
static size_t take_payload(gr_replica_link_t *l, const uint8_t *data, size_t length) {
    gr_replication_t *r = &l->db->repl;
    size_t take = length;
    if (!l->eof_form && (int64_t)take > l->payload_left) take = (size_t)l->payload_left;
    if (take && write(l->tmp_fd, data, take) != (ssize_t)take) {
        say(l, "Write error writing the replication payload: %s", strerror(errno));
        drop(l, RETRY_NS);
        return length;
    }
    r->sync_read_bytes += (int64_t)take;
    if (l->eof_form) {
        if (take >= 40) {
            memcpy(l->tail, data + take - 40, 40);
            l->tail_length = 40;
        } else {
            size_t keep = l->tail_length + take > 40 ? 40 - take : l->tail_length;
            memmove(l->tail, l->tail + l->tail_length - keep, keep);
            memcpy(l->tail + keep, data, take);
            l->tail_length = keep + take;
        }
        if (l->tail_length == 40 && memcmp(l->tail, l->mark, 40) == 0) {
            off_t end = lseek(l->tmp_fd, 0, SEEK_CUR);
            if (end < 40 || ftruncate(l->tmp_fd, end - 40) != 0) { drop(l, RETRY_NS); return length; }
            load_payload(l);
        }
    } else {
        l->payload_left -= (int64_t)take;
        if (l->payload_left == 0) load_payload(l);
    }
    return take;
}

static void open_payload(gr_replica_link_t *l, const char *header) {
    gr_replication_t *r = &l->db->repl;
    const char *dir = l->db->config.dir[0] ? l->db->config.dir : ".";
    snprintf(l->tmp_path, sizeof l->tmp_path, "%s/temp-%d.%lld.rdb", dir, (int)getpid(), (long long)gr_monotonic_ns());
    l->tmp_fd = open(l->tmp_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (l->tmp_fd < 0) {
        say(l, "Opening the temp file needed for MASTER <-> REPLICA synchronization: %s", strerror(errno));
        drop(l, RETRY_NS);
        return;
    }
    r->sync_read_bytes = 0;
    l->tail_length = 0;
    if (strncmp(header, "$EOF:", 5) == 0 && strlen(header) == 45) {
        l->eof_form = 1;
        memcpy(l->mark, header + 5, 40);
        r->sync_total_bytes = -1;
        say(l, "MASTER <-> REPLICA sync: receiving streamed RDB from master with EOF to disk");
    } else {
        char *end;
        long long size = strtoll(header + 1, &end, 10);
        if (*end || size < 0 || end == header + 1) {
            say(l, "Bad protocol from MASTER, the first byte is not '$' (we received '%.60s'), are you sure the host "
                   "and port are right?", header);
            drop(l, RETRY_NS);
            return;
        }
        l->eof_form = 0;
        l->payload_left = size;
        r->sync_total_bytes = size;
        say(l, "MASTER <-> REPLICA sync: receiving %lld bytes from master to disk", size);
        if (size == 0) load_payload(l);
    }
}

/* A handshake reply line. */
static void handle_line(gr_replica_link_t *l, const char *line) {
    gr_replication_t *r = &l->db->repl;
    switch (l->step) {
    case STEP_PING:
        if (line[0] == '-' && strncmp(line, "-NOAUTH", 7) && strncmp(line, "-NOPERM", 7) &&
            strncmp(line, "-ERR operation not permitted", 28)) {
            say(l, "Error reply to PING from master: '%.200s'", line);
            drop(l, RETRY_NS);
            return;
        }
        say(l, "Master replied to PING, replication can continue...");
        l->step = STEP_AUTH;
        break;
    case STEP_AUTH:
        if (line[0] == '-') {
            say(l, "Unable to AUTH to MASTER: %.200s", line);
            drop(l, RETRY_NS);
            return;
        }
        l->step = STEP_PORT;
        break;
    case STEP_PORT:
        if (line[0] == '-') say(l, "(Non critical) Master does not understand REPLCONF listening-port: %.200s", line);
        l->step = STEP_IP;
        break;
    case STEP_IP:
        if (line[0] == '-') say(l, "(Non critical) Master does not understand REPLCONF ip-address: %.200s", line);
        l->step = STEP_CAPA;
        break;
    case STEP_CAPA:
        if (line[0] == '-') say(l, "(Non critical) Master does not understand REPLCONF capa: %.200s", line);
        l->step = STEP_PSYNC;
        break;
    case STEP_PSYNC:
        if (!line[0]) return;   /* a keepalive newline before the answer */
        if (!strncmp(line, "+FULLRESYNC ", 12)) {
            char replid[64];
            long long offset;
            if (sscanf(line + 12, "%63s %lld", replid, &offset) != 2 || strlen(replid) != 40) {
                say(l, "Master replied with wrong +FULLRESYNC syntax.");
                drop(l, RETRY_NS);
                return;
            }
            memcpy(l->new_replid, replid, 41);
            l->new_offset = offset;
            say(l, "Full resync from master: %s:%lld", replid, offset);
            r->state = GR_REPL_TRANSFER;
            l->step = STEP_PAYLOAD_HEADER;
            return;
        }
        if (!strncmp(line, "+CONTINUE", 9)) {
            const char *id = line + 9;
            while (*id == ' ') id++;
            if (strlen(id) == 40 && strcmp(id, r->replid) != 0) {   /* the primary's history has a new id */
                memcpy(r->replid2, r->replid, sizeof r->replid2);
                r->second_offset = r->offset + 1;
                memcpy(r->replid, id, 41);
                say(l, "Master replication ID changed to %s", id);
            }
            say(l, "Successful partial resynchronization with master.");
            say(l, "MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization.");
            r->sync_partial_ok++;
            begin_stream(l);
            return;
        }
        say(l, "Unexpected reply to PSYNC from master: %.200s", line);
        if (!strncmp(line, "-NOMASTERLINK", 13) || !strncmp(line, "-LOADING", 8)) drop(l, RETRY_NS);
        else drop(l, RETRY_NS);
        return;
    case STEP_PAYLOAD_HEADER:
        if (!line[0]) return;   /* keepalive newlines while the primary makes the RDB */
        if (line[0] != '$') {
            if (line[0] == '-') say(l, "MASTER aborted replication with an error: %.200s", line);
            else say(l, "Bad protocol from MASTER, the first byte is not '$' (we received '%.60s'), are you sure the "
                        "host and port are right?", line);
            drop(l, RETRY_NS);
            return;
        }
        open_payload(l, line);
        return;
    }
    if (send_step(l) != 0) { say(l, "Error sending a command to MASTER: %s", strerror(errno)); drop(l, RETRY_NS); }
}

static int grow_in(gr_replica_link_t *l, size_t need) {
    if (need <= l->in_capacity) return 0;
    size_t capacity = l->in_capacity ? l->in_capacity : 16384;
    while (capacity < need) capacity *= 2;
    uint8_t *grown = realloc(l->in, capacity);
    if (!grown) return -1;
    l->in = grown;
    l->in_capacity = capacity;
    return 0;
}

/* Everything buffered in l->in, in the link's current state. */
static void process(gr_replica_link_t *l) {
    gr_replication_t *r = &l->db->repl;
    while (l->fd >= 0 && l->in_length && !l->load) {   /* while loading aside, the stream waits in l->in */
        if (r->state == GR_REPL_CONNECTED) {
            size_t used = feed(l, l->in, l->in_length);
            if (l->fd < 0) return;
            memmove(l->in, l->in + used, l->in_length - used);
            l->in_length -= used;
            return;
        }
        if (l->tmp_fd >= 0) {
            size_t used = take_payload(l, l->in, l->in_length);
            if (l->fd < 0) return;
            memmove(l->in, l->in + used, l->in_length - used);
            l->in_length -= used;
            continue;
        }
        char line[LINE_MAX_BYTES + 1];
        int got = take_line(l, line, sizeof line);
        if (got == 0) return;
        if (got < 0) {
            say(l, "Bad protocol from MASTER: a reply line longer than %d bytes", LINE_MAX_BYTES);
            drop(l, RETRY_NS);
            return;
        }
        handle_line(l, line);
    }
}

void gr_replica_link_event(gr_replica_link_t *l, int fd, uint32_t events) {
    gr_replication_t *r = &l->db->repl;
    if (fd == l->wake_fd && fd >= 0) {
        uint64_t value;
        ssize_t ignored = read(fd, &value, sizeof value);
        (void)ignored;
        reap_free(l, 0);
        if (l->resolving && __atomic_load_n(&l->resolving->done, __ATOMIC_ACQUIRE)) resolve_finished(l);
        if (l->load && __atomic_load_n(&l->load->done, __ATOMIC_ACQUIRE)) {
            gr_db_begin_batch(l->db);
            finish_load(l);
            process(l);   /* the stream that arrived during the load */
            gr_db_end_batch(l->db);
        }
        return;
    }
    if (l->fd < 0) return;
    if (r->state == GR_REPL_CONNECTING) {
        int error = 0;
        socklen_t length = sizeof error;
        if (getsockopt(l->fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0) error = errno;
        if (error) {
            say(l, "Error condition on socket for SYNC: %s", strerror(error));
            drop(l, RETRY_NS);
            return;
        }
        say(l, "Non blocking connect for SYNC fired the event.");
        r->state = GR_REPL_HANDSHAKE;
        l->step = STEP_PING;
        watch_fd(l, EPOLLIN);
        if (send_step(l) != 0) drop(l, RETRY_NS);
        return;
    }
    if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR))) return;
    for (int reads = 0; reads < 16 && l->fd >= 0; reads++) {
        if (grow_in(l, l->in_length + 65536) != 0) { drop(l, RETRY_NS); return; }
        ssize_t n = read(l->fd, l->in + l->in_length, l->in_capacity - l->in_length);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        if (n <= 0) {
            say(l, n == 0 ? "Connection with master lost." : "Error reading from MASTER: %s", strerror(errno));
            drop(l, RETRY_NS / 10);
            return;
        }
        l->db->stats.net_input_bytes += n;
        r->last_io_ms = l->db->now_ms;
        l->in_length += (size_t)n;
        gr_db_begin_batch(l->db);
        process(l);
        gr_db_end_batch(l->db);
    }
}

void gr_replica_link_tick(gr_replica_link_t *l) {
    gr_server_t *db = l->db;
    gr_replication_t *r = &db->repl;
    if (r->restart) {          /* REPLICAOF: a new primary, or none */
        r->restart = 0;
        if (l->fd >= 0 || l->master) say(l, "Connection with master closed (REPLICAOF).");
        if (l->load) say(l, "MASTER <-> REPLICA sync: the load aside is abandoned (REPLICAOF); the old data stays.");
        drop(l, 0);
        discard_load(l);
        abandon_resolve(l);
        if (!r->master_port) { r->state = GR_REPL_NONE; r->link_down_since_ms = 0; return; }
    }
    if (!r->master_port || l->load) return;   /* loading aside: the stream is read and kept; the rest waits for the swap */
    int64_t now = gr_monotonic_ns();
    if (l->master && gr_resp_conn_state(l->master)->kill_requested) {
        say(l, "Connection with master lost (CLIENT KILL).");
        drop(l, 0);
    }
    if (r->state == GR_REPL_CONNECT) {
        if (now >= l->next_attempt_ns) start_connect(l);
        return;
    }
    int64_t now_ms = db->now_ms;
    if (now_ms - r->last_io_ms > TIMEOUT_MS && r->last_io_ms) {
        say(l, r->state == GR_REPL_CONNECTED ? "MASTER timeout: no data nor PING received..."
                                             : "Timeout connecting to the MASTER...");
        drop(l, RETRY_NS);
        return;
    }
    int fack_moved = db->aof && gr_aof_fsynced_reploff(db) != l->sent_fack && now - l->last_ack_ns >= ACK_FAST_NS;
    if (r->state == GR_REPL_CONNECTED &&
        (r->getack || fack_moved || now - l->last_ack_ns >= (l->ack_fast ? ACK_FAST_NS : ACK_NS))) {
        r->getack = 0;
        send_ack(l);
    }
}
