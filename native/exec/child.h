/* child.h — the server's one background child: a forked process that writes a snapshot
 * (BGSAVE, persist/snapshot.c) or rewrites the append-only log (BGREWRITEAOF, persist/aof.c)
 * from a copy-on-write image of the keyspace while the parent goes on serving.
 *
 * As in Redis, at most one child runs at a time, whatever its kind: gr_child_fork refuses a
 * second (errno EBUSY) and the callers answer with Redis's texts ("Background save already in
 * progress", or schedule their work for when the child is gone). The bookkeeping is one
 * gr_child_t in the db (db->child); the implementation is child.c.
 *
 *   parent                                   child
 *   pid = gr_child_fork(db, kind, done, ctx)  gr_child_fork returns 0:
 *     > 0: serve on; gr_db_cron reaps          write from the keyspace as it was at the fork,
 *          it (gr_child_reap, no waiting)      then gr_child_exit(ok) (never return, never
 *          and calls done(db, kind, ok, ...)   exit(): _exit, no atexit handlers, no stdio)
 *     -1: errno (EBUSY: one is running)
 *
 * done runs in the parent exactly once per child: reaped by the cron, by gr_child_wait
 * (SHUTDOWN, tests) or after gr_child_kill (FLUSHALL-like callers, shutdown without saving),
 * with ok = exited with status 0 and, for a child killed by a signal, the signal number.
 * The child keeps only the forking thread; it must not call into Python, and it resets
 * SIGTERM/SIGINT to their default action so that `kill` ends it. It dies with its parent
 * (PR_SET_PDEATHSIG) and closes every descriptor above stderr at the fork, so it never holds
 * a listening socket, the control socket or a client's connection; what it writes it opens
 * (but for the one pipe gr_child_fork_keeping hands it).
 * Its log lines go to stderr with the server's prefix and its own pid (gr_log_to_stderr).
 */
#ifndef GR_CHILD_H
#define GR_CHILD_H

#include <stdint.h>

struct gr_server;

typedef enum gr_child_kind {
    GR_CHILD_NONE = 0,
    GR_CHILD_SNAPSHOT = 1,      /* BGSAVE (persist/snapshot.c) */
    GR_CHILD_AOF_REWRITE = 2,   /* BGREWRITEAOF (persist/aof.c) */
    GR_CHILD_REPL_SYNC = 3,     /* the RDB of a replica's full sync, to a file or a pipe (server/primary.c) */
} gr_child_kind_t;

/* In the parent, when the child has ended: ok = it exited with status 0; signal = the
 * signal that killed it (0: it exited); by_parent = gr_child_kill ended it. */
typedef void (*gr_child_done_t)(struct gr_server *db, gr_child_kind_t kind, int ok, int signal, int by_parent,
                                void *context);

typedef struct gr_child {
    int32_t pid;                /* 0: no child */
    uint8_t kind;               /* gr_child_kind_t */
    uint8_t killing;            /* gr_child_kill sent its signal */
    int64_t started_ms;         /* unix ms at the fork (rdb_current_bgsave_time_sec, ...) */
    int64_t fork_usec;          /* how long fork() took (INFO stats latest_fork_usec) */
    gr_child_done_t done;
    void *context;
} gr_child_t;

/* Lifecycle */
/* Fork a child of this kind. Parent: its pid (> 0). Child: 0 (end it with gr_child_exit).
 * -1 with errno set: EBUSY when a child runs, else fork's errno. */
int32_t gr_child_fork(struct gr_server *db, gr_child_kind_t kind, gr_child_done_t done, void *context);
/* The same, keeping one descriptor of the parent's open in the child, as GR_CHILD_KEPT_FD
 * (3): the write end of the pipe a diskless replication sync streams its RDB through
 * (server/primary.c). keep_fd < 0: gr_child_fork. */
#define GR_CHILD_KEPT_FD 3
int32_t gr_child_fork_keeping(struct gr_server *db, gr_child_kind_t kind, gr_child_done_t done, void *context,
                              int keep_fd);
/* End the child: status 0 when ok, 1 otherwise (no atexit handlers, no stdio flush). */
_Noreturn void gr_child_exit(int ok);
/* One log line on stderr, "goblin-ring[<pid>] <date> <time> <message>", as the server's own
 * lines are written: the child's lines, and the parent's from where no reply may leave and
 * Python cannot run first (persist/aof.c's last words before appendfsync always exits, and
 * its fsync thread). */
void gr_log_to_stderr(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* Queries */
gr_child_kind_t gr_child_running(const struct gr_server *db);   /* GR_CHILD_NONE when none */

/* Reaping (parent) */
/* Reap the child if it has ended, without waiting: 1 when one was reaped (its done has run). */
int gr_child_reap(struct gr_server *db);
/* Wait for the running child to end and reap it (no-op without one). */
void gr_child_wait(struct gr_server *db);
/* Kill the running child (SIGKILL), wait for it and reap it: done runs with by_parent = 1. */
void gr_child_kill(struct gr_server *db);

#endif
