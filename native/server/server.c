/* server.c — the C serving loop: RESP accept/read/parse/execute/write and the ring drain on
 * one thread; server.h says what Python keeps and when the loop returns to it. The RESP
 * connection itself (parser, reply writer, buffers) is resp/resp_conn.c; ring sessions are
 * ring/session.c.
 */
#include "server/server.h"
#include "core/clock.h"
#include "exec/pause.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "core/alloc.h"
#include "resp/resp_conn.h"
#include "server/primary.h"
#include "server/replica.h"

#define MAX_EVENTS 256
#define MAX_LISTENERS 8
#define ACCEPTS_PER_EVENT 1000          /* Redis's MAX_ACCEPTS_PER_CALL */
#define ACCEPT_PAUSE_MS 100             /* listeners rest this long after EMFILE/ENFILE */
#define SLICE_NS 200000                 /* adaptive: longest the rings run before sockets are looked at */
#define WATCH_NS 10000                  /* how often a ring spin peeks at the epoll set */
#define IDLE_SLEEP_MS 100               /* longest sleep (a wake-up is never lost for long) */
#define BACKLOG_SLEEP_MS 1              /* replies wait for room in a reply ring */
#define LOG_CAPACITY (64 * 1024)

enum { WATCH_LISTENER = 1, WATCH_RESP = 2, WATCH_DOORBELL = 3, WATCH_PYTHON = 4, WATCH_MASTER = 5 };

static const char MAX_CLIENTS_REPLY[] = "-ERR max number of clients reached\r\n";
static const char DENIED_REPLY[] =
    "-DENIED goblin-ring is running in protected mode because protected mode is enabled and no password is set. "
    "In this mode connections are only accepted from the loopback interface. Either start the server with "
    "--requirepass (or GOBLIN_REQUIREPASS), or, if you are sure the network is private, with --protected-mode no.\r\n";

typedef struct listener {
    int fd, is_unix, paused;
} listener_t;

typedef struct slot {                   /* by fd */
    gr_resp_conn_t *conn;
    uint32_t events;                    /* what epoll watches for it */
} slot_t;

struct gr_serve_loop {
    gr_server_t *db;
    gr_rings_t *rings;
    int epoll_fd, python_fd;
    listener_t listeners[MAX_LISTENERS];
    size_t listener_count;
    slot_t *slots;
    size_t slot_capacity;
    size_t resp_clients;
    int64_t next_client_id;
    int64_t accept_resume_ns;           /* > 0: listeners paused until then */
    int64_t accept_failures;            /* in this pause episode */
    int accept_errno;
    uint64_t *killed_sessions;
    const char **killed_reasons;        /* beside each id: why (gr_connection_t.kill_reason) */
    size_t killed_count, killed_capacity;
    /* RESP connections whose replies wait for the append-only log's fdatasync (appendfsync
     * always): one fsync after the loop iteration's reads, then they are written */
    int *synced_fds;
    size_t synced_count, synced_capacity;
    gr_replica_link_t *replica;         /* the link to a primary (replica.c), idle while this is one */
    gr_primary_t *primary;              /* our replicas (primary.c) */
    char log[LOG_CAPACITY];
    size_t log_length;
    int64_t log_dropped;
};

static void server_log(gr_serve_loop_t *s, const char *format, ...) {
    char line[1024];
    va_list args;
    va_start(args, format);
    int n = vsnprintf(line, sizeof line - 1, format, args);
    va_end(args);
    if (n < 0) return;
    if ((size_t)n > sizeof line - 2) n = (int)sizeof line - 2;
    line[n++] = '\n';
    if (s->log_length + (size_t)n > sizeof s->log) { s->log_dropped++; return; }
    memcpy(s->log + s->log_length, line, (size_t)n);
    s->log_length += (size_t)n;
}

size_t gr_server_take_log(gr_serve_loop_t *s, char *out, size_t size) {
    size_t n = 0;
    if (s->log_dropped && size > 80) {
        n = (size_t)snprintf(out, size, "(%lld log lines dropped: the queue was full)\n", (long long)s->log_dropped);
        s->log_dropped = 0;
    }
    size_t take = s->log_length;
    if (take > size - n) {                       /* whole lines only */
        take = size - n;
        while (take && s->log[take - 1] != '\n') take--;
    }
    memcpy(out + n, s->log, take);
    memmove(s->log, s->log + take, s->log_length - take);
    s->log_length -= take;
    return n + take;
}

static uint64_t watch_data(int kind, int fd) { return ((uint64_t)kind << 32) | (uint32_t)fd; }

static int epoll_set(gr_serve_loop_t *s, int op, int fd, uint32_t events, int kind) {
    struct epoll_event event = {.events = events, .data.u64 = watch_data(kind, fd)};
    return epoll_ctl(s->epoll_fd, op, fd, &event) == 0 ? 0 : -errno;
}

/* redis.log (script/): a script's line into the server log */
static void script_log_line(void *context, const char *line) { server_log(context, "%s", line); }

static void serve_while_busy(void *context);
static gr_resp_conn_t *primary_conn_of(void *context, const gr_connection_t *state);
static void primary_flush(void *context, int fd);

gr_serve_loop_t *gr_server_new(gr_server_t *db, gr_rings_t *rings, int python_fd) {
    gr_serve_loop_t *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->db = db;
    db->log_line = script_log_line;
    db->log_context = s;
    db->busy_serve = serve_while_busy;
    db->busy_context = s;
    s->rings = rings;
    s->python_fd = python_fd;
    s->next_client_id = 1;
    s->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (s->epoll_fd < 0) { free(s); return NULL; }
    if (python_fd >= 0 && epoll_set(s, EPOLL_CTL_ADD, python_fd, EPOLLIN, WATCH_PYTHON) != 0) {
        close(s->epoll_fd);
        free(s);
        return NULL;
    }
    s->replica = gr_replica_link_new(db, s->epoll_fd, watch_data(WATCH_MASTER, 0), script_log_line, s, &s->next_client_id);
    gr_primary_io_t io = {s, primary_conn_of, primary_flush, script_log_line};
    s->primary = s->replica ? gr_primary_new(db, &io) : NULL;
    if (!s->primary) {
        gr_replica_link_free(s->replica);
        close(s->epoll_fd);
        free(s);
        return NULL;
    }
    return s;
}

static void close_connection(gr_serve_loop_t *s, int fd) {
    slot_t *slot = &s->slots[fd];
    if (!slot->conn) return;
    gr_connection_t *state = gr_resp_conn_state(slot->conn);
    if (state->repl_peer.link) gr_primary_forget(s->primary, state);
    epoll_ctl(s->epoll_fd, EPOLL_CTL_DEL, fd, NULL);
    gr_resp_conn_free(slot->conn);
    close(fd);
    slot->conn = NULL;
    slot->events = 0;
    s->resp_clients--;
    s->db->stats.connected_resp_clients = (int64_t)s->resp_clients;
    if (s->accept_resume_ns) s->accept_resume_ns = 1;   /* a descriptor is free: try accepting again */
}

void gr_server_free(gr_serve_loop_t *s) {
    if (!s) return;
    if (s->db && s->db->log_context == s) s->db->log_line = NULL, s->db->log_context = NULL;
    if (s->db && s->db->busy_context == s) s->db->busy_serve = NULL, s->db->busy_context = NULL;
    for (size_t fd = 0; fd < s->slot_capacity; fd++)
        if (s->slots[fd].conn) close_connection(s, (int)fd);
    gr_replica_link_free(s->replica);
    gr_primary_free(s->primary);
    close(s->epoll_fd);
    free(s->slots);
    free(s->killed_sessions);
    free(s->killed_reasons);
    free(s->synced_fds);
    free(s);
}

int gr_server_add_listener(gr_serve_loop_t *s, int fd, int is_unix) {
    if (s->listener_count == MAX_LISTENERS) return -ENOSPC;
    int status = epoll_set(s, EPOLL_CTL_ADD, fd, EPOLLIN, WATCH_LISTENER);
    if (status != 0) return status;
    s->listeners[s->listener_count++] = (listener_t){fd, is_unix, 0};
    return 0;
}

int gr_server_watch_doorbell(gr_serve_loop_t *s, int fd) { return epoll_set(s, EPOLL_CTL_ADD, fd, EPOLLIN, WATCH_DOORBELL); }

void gr_server_unwatch_doorbell(gr_serve_loop_t *s, int fd) { epoll_ctl(s->epoll_fd, EPOLL_CTL_DEL, fd, NULL); }

int64_t gr_server_next_client_id(gr_serve_loop_t *s) { return s->next_client_id++; }

size_t gr_server_resp_clients(const gr_serve_loop_t *s) { return s->resp_clients; }

uint64_t gr_server_take_killed_session(gr_serve_loop_t *s, char *why, size_t why_size) {
    if (s->killed_count == 0) return 0;
    uint64_t id = s->killed_sessions[0];
    const char *reason = s->killed_reasons[0];
    if (why_size) snprintf(why, why_size, "%s", reason ? reason : "killed by CLIENT KILL");
    --s->killed_count;
    memmove(s->killed_sessions, s->killed_sessions + 1, s->killed_count * sizeof *s->killed_sessions);
    memmove(s->killed_reasons, s->killed_reasons + 1, s->killed_count * sizeof *s->killed_reasons);
    return id;
}

/* ---- logging a client, as Redis's catClientInfoString (the fields that apply) ---- */

static void describe_client(gr_serve_loop_t *s, gr_resp_conn_t *conn, char *out, size_t size) {
    const gr_connection_t *state = gr_resp_conn_state(conn);
    int64_t now = s->db->now_ms;
    snprintf(out, size, "id=%lld addr=%s laddr=%s fd=%d name=%s age=%lld idle=%lld db=%d qbuf=%zu omem=%zu "
             "tot-mem=%zu cmd=%s",
             (long long)state->id, state->addr, state->laddr, state->fd, state->name,
             (long long)((now - state->created_ms) / 1000), (long long)((now - state->last_command_ms) / 1000),
             state->db_index, gr_resp_conn_input_pending(conn), gr_resp_conn_output_pending(conn),
             gr_resp_conn_memory(conn), state->last_command ? state->last_command : "NULL");
}

/* Close a connection that must go at once (output limits, query buffer, memory), logged. */
static void drop_connection(gr_serve_loop_t *s, int fd) {
    gr_resp_conn_t *conn = s->slots[fd].conn;
    const char *reason = gr_resp_conn_close_reason(conn);
    char info[768];
    describe_client(s, conn, info, sizeof info);
    if (reason && !strcmp(reason, "output buffer limits"))
        server_log(s, "Client %s scheduled to be closed ASAP for overcoming of output buffer limits.", info);
    else if (reason && !strcmp(reason, "max query buffer length"))
        server_log(s, "Closing client that reached max query buffer length: %s", info);
    else if (reason && !strcmp(reason, "maxmemory-clients"))
        server_log(s, "Evicting client: %s", info);
    else if (reason)
        server_log(s, "Closing client %s: %s", info, reason);
    close_connection(s, fd);
}

/* ---- accept ---- */

static int is_loopback(const struct sockaddr_storage *address) {
    if (address->ss_family == AF_UNIX) return 1;
    if (address->ss_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)address;
        return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    }
    if (address->ss_family == AF_INET6) {
        const struct in6_addr *in6 = &((const struct sockaddr_in6 *)address)->sin6_addr;
        if (IN6_IS_ADDR_LOOPBACK(in6)) return 1;
        return IN6_IS_ADDR_V4MAPPED(in6) && in6->s6_addr[12] == 127;
    }
    return 0;
}

static void format_address(const struct sockaddr_storage *address, char *out, size_t size) {
    char host[INET6_ADDRSTRLEN] = "?";
    if (address->ss_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)address;
        inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
        snprintf(out, size, "%s:%u", host, ntohs(in->sin_port));
    } else if (address->ss_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)address;
        inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
        snprintf(out, size, "%s:%u", host, ntohs(in6->sin6_port));
    } else {
        snprintf(out, size, "/unixsocket:0");
    }
}

static int ensure_slot(gr_serve_loop_t *s, int fd) {
    if ((size_t)fd < s->slot_capacity) return 0;
    size_t capacity = s->slot_capacity ? s->slot_capacity : 1024;
    while (capacity <= (size_t)fd) capacity *= 2;
    slot_t *grown = realloc(s->slots, capacity * sizeof *grown);
    if (!grown) return -1;
    memset(grown + s->slot_capacity, 0, (capacity - s->slot_capacity) * sizeof *grown);
    s->slots = grown;
    s->slot_capacity = capacity;
    return 0;
}

static void refuse(int fd, const char *reply, size_t length) {
    ssize_t ignored = send(fd, reply, length, MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)ignored;
    close(fd);
}

/* Out of descriptors: stop watching the listeners for a while instead of spinning on them. */
static void pause_accepts(gr_serve_loop_t *s, int error, int64_t now) {
    if (s->accept_failures == 0)       /* once per episode: it ends when an accept succeeds */
        server_log(s, "Error accepting a client connection: %s (%zu clients connected); "
                      "accepts pause %d ms at a time until descriptors are free", strerror(error), s->resp_clients,
                   ACCEPT_PAUSE_MS);
    s->accept_errno = error;
    s->accept_failures++;
    s->accept_resume_ns = now + (int64_t)ACCEPT_PAUSE_MS * 1000000;
    for (size_t i = 0; i < s->listener_count; i++) {
        listener_t *l = &s->listeners[i];
        if (!l->paused && epoll_ctl(s->epoll_fd, EPOLL_CTL_DEL, l->fd, NULL) == 0) l->paused = 1;
    }
}

static void resume_accepts(gr_serve_loop_t *s) {
    for (size_t i = 0; i < s->listener_count; i++) {
        listener_t *l = &s->listeners[i];
        if (l->paused && epoll_set(s, EPOLL_CTL_ADD, l->fd, EPOLLIN, WATCH_LISTENER) == 0) l->paused = 0;
    }
    s->accept_resume_ns = 0;
}

static void accept_clients(gr_serve_loop_t *s, listener_t *l, int64_t now) {
    gr_server_t *db = s->db;
    for (int i = 0; i < ACCEPTS_PER_EVENT; i++) {
        struct sockaddr_storage peer;
        socklen_t peer_length = sizeof peer;
        int fd = accept4(l->fd, (struct sockaddr *)&peer, &peer_length, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) pause_accepts(s, errno, now);
            return;   /* EAGAIN: all taken */
        }
        if (s->accept_failures) {   /* the end of an exhaustion episode: say how it went, once */
            server_log(s, "Accepting clients again; %lld accept(s) failed with %s meanwhile",
                       (long long)s->accept_failures, strerror(s->accept_errno));
            s->accept_failures = 0;
        }
        if (l->is_unix) peer.ss_family = AF_UNIX;
        int64_t clients = (int64_t)(s->resp_clients + gr_rings_session_count(s->rings));
        if (clients >= db->config.maxclients) {
            gr_db_count_connection(db, 1);
            refuse(fd, MAX_CLIENTS_REPLY, sizeof MAX_CLIENTS_REPLY - 1);
            continue;
        }
        if (!gr_db_accepts_peer(db, is_loopback(&peer))) {
            gr_db_count_connection(db, 1);
            refuse(fd, DENIED_REPLY, sizeof DENIED_REPLY - 1);
            continue;
        }
        gr_resp_conn_t *conn = ensure_slot(s, fd) == 0 ? gr_resp_conn_new(db, s->next_client_id) : NULL;
        if (!conn) { close(fd); continue; }
        s->next_client_id++;
        char addr[80], laddr[sizeof ((struct sockaddr_un *)0)->sun_path + 8];
        format_address(&peer, addr, sizeof addr);
        if (l->is_unix) {
            struct sockaddr_un local;
            socklen_t local_length = sizeof local;
            if (getsockname(fd, (struct sockaddr *)&local, &local_length) == 0 && local_length > sizeof(sa_family_t))
                snprintf(laddr, sizeof laddr, "%s:0", local.sun_path);
            else
                snprintf(laddr, sizeof laddr, "/unixsocket:0");
        } else {
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            struct sockaddr_storage local;
            socklen_t local_length = sizeof local;
            if (getsockname(fd, (struct sockaddr *)&local, &local_length) == 0) format_address(&local, laddr, sizeof laddr);
            else laddr[0] = '\0';
        }
        gr_resp_conn_set_peer(conn, fd, l->is_unix, addr, laddr);
        if (epoll_set(s, EPOLL_CTL_ADD, fd, EPOLLIN, WATCH_RESP) != 0) {
            gr_resp_conn_free(conn);
            close(fd);
            continue;
        }
        s->slots[fd] = (slot_t){conn, EPOLLIN};
        s->resp_clients++;
        db->stats.connected_resp_clients = (int64_t)s->resp_clients;
        gr_db_count_connection(db, 0);
    }
}

/* ---- serving a connection ---- */

/* Write what it has, then watch for what it needs next, or close it. */
static void after_io(gr_serve_loop_t *s, int fd) {
    slot_t *slot = &s->slots[fd];
    gr_resp_conn_t *conn = slot->conn;
    if (gr_resp_conn_close_reason(conn)) { drop_connection(s, fd); return; }
    int64_t pending = gr_resp_conn_flush(conn, fd);
    if (pending < 0) { close_connection(s, fd); return; }
    int closing = gr_resp_conn_should_close(conn);
    if (closing && pending == 0) { close_connection(s, fd); return; }
    if (pending == 0) gr_resp_conn_trim(conn);
    uint32_t wanted = pending ? (closing ? EPOLLOUT : EPOLLIN | EPOLLOUT) : EPOLLIN;
    if (wanted != slot->events && epoll_set(s, EPOLL_CTL_MOD, fd, wanted, WATCH_RESP) == 0) slot->events = wanted;
}

static gr_resp_conn_t *primary_conn_of(void *context, const gr_connection_t *state) {
    gr_serve_loop_t *s = context;
    if (state->kind == GR_CONN_RING || state->fd < 0 || (size_t)state->fd >= s->slot_capacity) return NULL;
    gr_resp_conn_t *conn = s->slots[state->fd].conn;
    return conn && gr_resp_conn_state(conn) == state ? conn : NULL;
}

static void primary_flush(void *context, int fd) {
    gr_serve_loop_t *s = context;
    if ((size_t)fd < s->slot_capacity && s->slots[fd].conn) after_io(s, fd);
}

static void serve_connection(gr_serve_loop_t *s, int fd, uint32_t events) {
    gr_resp_conn_t *conn = s->slots[fd].conn;
    if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
        int64_t n = gr_resp_conn_read(conn, fd);
        if (n == 0 || n == -1) {
            if (gr_resp_conn_close_reason(conn)) drop_connection(s, fd);
            else close_connection(s, fd);
            return;
        }
    }
    if (s->db->propagation.sync_pending) {   /* its replies wait for the log's fsync (serve_synced) */
        if (s->synced_count == s->synced_capacity) {
            size_t capacity = s->synced_capacity ? s->synced_capacity * 2 : 64;
            int *grown = realloc(s->synced_fds, capacity * sizeof *grown);
            if (!grown) { gr_propagate_sync(s->db); after_io(s, fd); return; }
            s->synced_fds = grown;
            s->synced_capacity = capacity;
        }
        s->synced_fds[s->synced_count++] = fd;
        return;
    }
    after_io(s, fd);
}

/* appendfsync always: one fdatasync for every write this iteration read, then the replies. */
static void serve_synced(gr_serve_loop_t *s) {
    gr_propagate_sync(s->db);
    for (size_t i = 0; i < s->synced_count; i++) {
        int fd = s->synced_fds[i];
        if ((size_t)fd < s->slot_capacity && s->slots[fd].conn) after_io(s, fd);
    }
    s->synced_count = 0;
}

static gr_resp_conn_t *resp_of(gr_serve_loop_t *s, const gr_connection_t *state) {
    if (state->kind == GR_CONN_RING || state->fd < 0 || (size_t)state->fd >= s->slot_capacity) return NULL;
    gr_resp_conn_t *conn = s->slots[state->fd].conn;
    return conn && gr_resp_conn_state(conn) == state ? conn : NULL;
}

/* Blocked clients a command or a timeout answered: send the reply, run what they sent meanwhile. */
static void serve_woken(gr_serve_loop_t *s) {
    gr_server_t *db = s->db;
    while (db->woken_pending > 0) {
        int64_t id = gr_db_take_woken(db);
        if (!id) break;
        for (gr_connection_t *state = db->connections; state; state = state->next) {
            if (state->id != id) continue;
            gr_resp_conn_t *conn = resp_of(s, state);
            if (conn) {
                int fd = state->fd;
                gr_resp_conn_check_output_limit(conn);
                if (!gr_resp_conn_close_reason(conn)) gr_resp_conn_resume(conn);
                after_io(s, fd);
            }
            break;
        }
    }
}

/* Connections Pub/Sub deliveries wrote to (exec/pubsub.h): write what they have now, once per
 * batch of commands however many messages each got, as Redis writes its pending clients
 * before it sleeps. One over its pubsub output limit is closed here (after_io). */
static void serve_pending_output(gr_serve_loop_t *s) {
    gr_connection_t *state;
    while ((state = gr_db_take_pending_output(s->db)) != NULL) {
        gr_resp_conn_t *conn = resp_of(s, state);
        if (conn) after_io(s, state->fd);
    }
}

/* CLIENT KILL and the idle timeout mark connections; each is closed here, after writing
 * what it has (a client that killed itself gets its OK). One walk per batch of kills, and
 * none at all while nothing is pending. */
static int serve_killed(gr_serve_loop_t *s) {
    gr_server_t *db = s->db;
    int sessions = 0;
    gr_connection_t *state = db->connections;
    while (db->kills_pending > 0 && state) {
        gr_connection_t *next = state->next;
        if (state->kill_requested && !state->kill_reported) {
            state->kill_reported = 1;
            db->kills_pending--;
            if (state->kind == GR_CONN_RING) {
                if (s->killed_count == s->killed_capacity) {
                    size_t capacity = s->killed_capacity ? s->killed_capacity * 2 : 16;
                    uint64_t *grown = realloc(s->killed_sessions, capacity * sizeof *grown);
                    if (grown) s->killed_sessions = grown;
                    const char **grown_reasons = realloc(s->killed_reasons, capacity * sizeof *grown_reasons);
                    if (grown_reasons) s->killed_reasons = grown_reasons;
                    if (grown && grown_reasons) s->killed_capacity = capacity;
                }
                if (s->killed_count < s->killed_capacity) {
                    s->killed_reasons[s->killed_count] = state->kill_reason;
                    s->killed_sessions[s->killed_count++] = (uint64_t)state->id;
                }
                sessions = 1;
            } else {
                gr_resp_conn_t *conn = resp_of(s, state);
                if (conn) {
                    int fd = state->fd;
                    gr_resp_conn_flush(conn, fd);
                    close_connection(s, fd);
                }
            }
        }
        state = next;
    }
    return sessions;
}

/* maxmemory-clients: while the clients' buffers use more, close the largest client (not one
 * marked CLIENT NO-EVICT). */
static void enforce_client_memory(gr_serve_loop_t *s) {
    const gr_db_config_t *config = &s->db->config;
    if (config->maxmemory_clients <= 0) return;
    int64_t limit = config->maxmemory_clients_percent ? config->maxmemory * config->maxmemory_clients / 100
                                                      : config->maxmemory_clients;
    if (limit <= 0) return;
    while (gr_mem_used_by(GR_MEM_SESSION) > limit && s->resp_clients > 0) {
        int largest = -1;
        size_t largest_bytes = 0;
        for (size_t fd = 0; fd < s->slot_capacity; fd++) {
            if (!s->slots[fd].conn || gr_resp_conn_state(s->slots[fd].conn)->no_evict) continue;   /* CLIENT NO-EVICT */
            size_t bytes = gr_resp_conn_memory(s->slots[fd].conn);
            if (bytes > largest_bytes) { largest_bytes = bytes; largest = (int)fd; }
        }
        if (largest < 0) break;
        gr_resp_conn_mark_closing(s->slots[largest].conn, "maxmemory-clients");
        drop_connection(s, largest);
        s->db->stats.evicted_clients++;
    }
}

static void drain_doorbell(int fd) {
    uint64_t value;
    ssize_t ignored = read(fd, &value, sizeof value);
    (void)ignored;
}

/* A busy script's hook (script/script_busy.c, through db->busy_serve) while db->busy is set:
 * one pass of the loop without waiting, as Redis's processEventsWhileBlocked. Admission answers
 * -BUSY to all but allow_busy commands (SCRIPT KILL, SHUTDOWN NOSAVE, AUTH, ...); the script's
 * own client (db->busy_caller) is not read (the rings skip its session too), and Python's
 * wake-ups wait for the loop to return (new ring sessions attach after the script). */
static void serve_while_busy(void *context) {
    gr_serve_loop_t *s = context;
    gr_server_t *db = s->db;
    struct epoll_event events[MAX_EVENTS];
    int n = epoll_wait(s->epoll_fd, events, MAX_EVENTS, 0);
    int64_t now = gr_monotonic_ns();
    for (int i = 0; i < n; i++) {
        int kind = (int)(events[i].data.u64 >> 32), fd = (int)(uint32_t)events[i].data.u64;
        if (kind == WATCH_RESP) {
            if ((size_t)fd >= s->slot_capacity || !s->slots[fd].conn) continue;
            if (gr_resp_conn_state(s->slots[fd].conn) == db->busy_caller) continue;
            serve_connection(s, fd, events[i].events);
        } else if (kind == WATCH_LISTENER) {
            for (size_t l = 0; l < s->listener_count; l++)
                if (s->listeners[l].fd == fd && !s->listeners[l].paused) accept_clients(s, &s->listeners[l], now);
        } else if (kind == WATCH_DOORBELL) {
            drain_doorbell(fd);
        }
    }
    if (gr_rings_session_count(s->rings) > 0) gr_rings_poll(s->rings);
    if (s->synced_count) serve_synced(s);
}

/* ---- the loop ---- */

static int ms_until(int64_t now, int64_t then) {
    if (then <= now) return 0;
    int64_t ms = (then - now + 999999) / 1000000;
    return ms > IDLE_SLEEP_MS ? IDLE_SLEEP_MS : (int)ms;
}

int gr_server_run(gr_serve_loop_t *s, int64_t max_ns, int64_t spin_ns, int busy) {
    gr_server_t *db = s->db;
    gr_rings_t *rings = s->rings;
    int64_t deadline = gr_monotonic_ns() + max_ns;
    int reasons = 0;
    struct epoll_event events[MAX_EVENTS];
    while (!reasons) {
        int64_t executed = 0;
        int have_sessions = gr_rings_session_count(rings) > 0;
        if (have_sessions) {
            int64_t left = deadline - gr_monotonic_ns();
            if (left < 0) left = 0;
            int64_t slice = busy ? left : (left < SLICE_NS ? left : SLICE_NS);
            executed = gr_rings_run(rings, busy ? slice : spin_ns, slice, s->epoll_fd, WATCH_NS);
        }
        /* Spinning is the rings' business (gr_rings_run spins spin_ns after their last
         * message, since a ring client rings the doorbell only once the server sleeps);
         * sockets wake epoll by themselves, so in adaptive mode RESP work alone never keeps
         * the loop awake. Busy mode never sleeps (the user pinned it to a core of its own):
         * it polls the sockets with a zero timeout too, which saves a pipelined RESP client
         * the epoll wake-up per read (measured: LLEN 1.44x redis sleeping, 1.82x spinning). */
        int64_t now = gr_monotonic_ns();
        int timeout_ms = 0, sleeping = 0;
        if (!executed && !busy) {
            int readiness = have_sessions ? gr_rings_prepare_sleep(rings) : 1;
            if (readiness != 0) {
                sleeping = have_sessions;
                timeout_ms = ms_until(now, deadline);
                if (readiness == 2 && timeout_ms > BACKLOG_SLEEP_MS) timeout_ms = BACKLOG_SLEEP_MS;
                if (db->blocked_count) {
                    int64_t block_ms = gr_db_next_block_timeout_ms(db);
                    if (block_ms >= 0 && block_ms < timeout_ms) timeout_ms = (int)block_ms;
                }
                if (db->pause_held_count) {   /* CLIENT PAUSE: wake at its deadline, not before */
                    int64_t pause_ms = gr_pause_timeout_ms(db);
                    if (pause_ms >= 0 && pause_ms < timeout_ms) timeout_ms = (int)pause_ms;
                }
                if (timeout_ms > 1 && gr_primary_busy(s->primary)) timeout_ms = 1;   /* a payload to feed, a child to reap */
                if (s->accept_resume_ns) {
                    int pause_ms = ms_until(now, s->accept_resume_ns);
                    if (pause_ms < timeout_ms) timeout_ms = pause_ms;
                }
            }
        }
        int n = epoll_wait(s->epoll_fd, events, MAX_EVENTS, timeout_ms);
        if (sleeping) gr_rings_end_sleep(rings);
        if (n < 0) {
            if (errno == EINTR) reasons |= GR_SERVE_SIGNAL;
            n = 0;
        }
        if (n > 0) now = gr_monotonic_ns();
        for (int i = 0; i < n; i++) {
            int kind = (int)(events[i].data.u64 >> 32), fd = (int)(uint32_t)events[i].data.u64;
            switch (kind) {
            case WATCH_RESP:
                if ((size_t)fd < s->slot_capacity && s->slots[fd].conn) serve_connection(s, fd, events[i].events);
                break;
            case WATCH_LISTENER:
                for (size_t l = 0; l < s->listener_count; l++)
                    if (s->listeners[l].fd == fd && !s->listeners[l].paused) accept_clients(s, &s->listeners[l], now);
                break;
            case WATCH_DOORBELL:
                drain_doorbell(fd);
                break;
            case WATCH_PYTHON:
                reasons |= GR_SERVE_PYTHON;
                break;
            case WATCH_MASTER:
                gr_replica_link_event(s->replica, fd, events[i].events);
                break;
            }
        }
        if (db->repl.master_port || db->repl.restart) gr_replica_link_tick(s->replica);
        gr_primary_tick(s->primary);
        if (db->repl_primary.acks) {   /* REPLCONF ACKs arrived: blocked WAITs may be answered */
            db->repl_primary.acks = 0;
            if (db->blocked_count) gr_repl_wait_check(db);
        }
        if (s->synced_count || db->propagation.sync_pending) serve_synced(s);
        if (db->blocked_count) gr_db_expire_blocked(db);
        if (db->pause_mode) gr_pause_active(db);   /* its deadline: held connections are woken */
        if (db->woken_pending) serve_woken(s);
        if (db->pending_output_count) serve_pending_output(s);
        if (db->kills_pending && serve_killed(s)) reasons |= GR_SERVE_SESSIONS;
        if (have_sessions && gr_rings_corrupt_session(rings)) reasons |= GR_SERVE_SESSIONS;
        enforce_client_memory(s);
        if (s->accept_resume_ns && gr_monotonic_ns() >= s->accept_resume_ns) resume_accepts(s);
        if (s->log_length || s->log_dropped) reasons |= GR_SERVE_LOG;
        if (gr_monotonic_ns() >= deadline) reasons |= GR_SERVE_DEADLINE;
    }
    return reasons;
}
