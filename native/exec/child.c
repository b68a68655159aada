/* child.c — the one background child (child.h): fork, reap, kill. The work a child does
 * (snapshot, log rewrite) is its caller's, in persist/; this file knows only processes.
 */
#include "exec/child.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exec/db.h"

static int64_t monotonic_usec(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000000 + now.tv_nsec / 1000;
}

static int64_t unix_ms(void) {
    struct timeval now;
    gettimeofday(&now, NULL);
    return (int64_t)now.tv_sec * 1000 + now.tv_usec / 1000;
}

static void close_descriptors_from(int first) {
#ifdef SYS_close_range
    if (syscall(SYS_close_range, (unsigned)first, ~0u, 0) == 0) return;
#endif
    long last = sysconf(_SC_OPEN_MAX);
    if (last < 0 || last > 1 << 20) last = 1 << 20;
    for (int fd = first; fd < last; fd++) close(fd);
}

int32_t gr_child_fork(gr_server_t *db, gr_child_kind_t kind, gr_child_done_t done, void *context) {
    return gr_child_fork_keeping(db, kind, done, context, -1);
}

int32_t gr_child_fork_keeping(gr_server_t *db, gr_child_kind_t kind, gr_child_done_t done, void *context, int keep_fd) {
    if (db->child.pid > 0) {
        errno = EBUSY;
        return -1;
    }
    int64_t start = monotonic_usec();
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        /* The child: the parent's Python signal handlers would only set a flag nobody reads. */
        signal(SIGTERM, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        signal(SIGUSR1, SIG_DFL);
        /* It dies with the parent: a parent killed by kill -9 must not leave a child writing
         * on (and, before the descriptors are closed below, holding its sockets). The check
         * after the prctl covers a parent that died between the fork and it. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(1);
        /* It holds nothing of the parent's but memory: the listening sockets, the control
         * socket, client connections, the log's descriptor and the rings' doorbells are
         * closed, so a restarted server can bind them and no client waits on the child.
         * Every file the child writes it opens itself; 0, 1 and 2 stay for its log lines, and
         * keep_fd (a diskless sync's pipe) stays as descriptor 3. */
        if (keep_fd >= 0) {
            if (keep_fd != GR_CHILD_KEPT_FD && dup2(keep_fd, GR_CHILD_KEPT_FD) < 0) _exit(1);
            close_descriptors_from(GR_CHILD_KEPT_FD + 1);
        } else {
            close_descriptors_from(3);
        }
        return 0;
    }
    db->child = (gr_child_t){.pid = pid, .kind = (uint8_t)kind, .started_ms = unix_ms(),
                             .fork_usec = monotonic_usec() - start, .done = done, .context = context};
    return pid;
}

_Noreturn void gr_child_exit(int ok) { _exit(ok ? 0 : 1); }

void gr_log_to_stderr(const char *format, ...) {
    char line[1024];
    time_t now = time(NULL);
    struct tm local;
    localtime_r(&now, &local);
    int n = snprintf(line, sizeof line, "goblin-ring[%d] ", (int)getpid());
    n += (int)strftime(line + n, sizeof line - (size_t)n, "%Y-%m-%d %H:%M:%S ", &local);
    va_list args;
    va_start(args, format);
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, format, args);
    va_end(args);
    if (m < 0) return;
    n += m;
    if (n > (int)sizeof line - 2) n = (int)sizeof line - 2;
    line[n++] = '\n';
    ssize_t ignored = write(STDERR_FILENO, line, (size_t)n);   /* one write: lines from two processes do not interleave */
    (void)ignored;
}

gr_child_kind_t gr_child_running(const gr_server_t *db) { return db->child.pid > 0 ? (gr_child_kind_t)db->child.kind : GR_CHILD_NONE; }

/* The child ended with this wait status: forget it, then tell its owner. */
static void finish(gr_server_t *db, int status) {
    gr_child_t child = db->child;
    db->child = (gr_child_t){0};
    int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    if (child.done) child.done(db, (gr_child_kind_t)child.kind, ok, sig, child.killing, child.context);
}

static int reap(gr_server_t *db, int options) {
    if (db->child.pid <= 0) return 0;
    int status = 0;
    pid_t got;
    do got = waitpid(db->child.pid, &status, options);
    while (got < 0 && errno == EINTR);
    if (got == 0) return 0;                 /* still running */
    if (got < 0) status = 1 << 8;          /* not ours any more (ECHILD): count it as failed */
    finish(db, status);
    return 1;
}

int gr_child_reap(gr_server_t *db) { return reap(db, WNOHANG); }

void gr_child_wait(gr_server_t *db) { reap(db, 0); }

void gr_child_kill(gr_server_t *db) {
    if (db->child.pid <= 0) return;
    db->child.killing = 1;
    kill(db->child.pid, SIGKILL);
    reap(db, 0);
}
