/* slowlog.h — the slow log (Redis's SLOWLOG): the commands that took longer than
 * slowlog-log-slower-than microseconds, newest first, at most slowlog-max-len of them. The
 * SLOWLOG command that reads it is commands/cmd_slowlog.c; db.c's accounting feeds it.
 *
 * Timing costs nothing new: gr_db_account already reads the commandstats clock (the TSC)
 * around every command's handler; the elapsed cycles are compared with threshold_cycles (the
 * setting converted once, at CONFIG SET and at each clock calibration), and only a command
 * over it builds an entry. An entry is one allocation:
 *
 *   +---------------------+------------------------+------------------------------+
 *   | gr_slowlog_entry_t  | argv lengths (argc)    | argv bytes, addr\0, name\0   |
 *   +---------------------+------------------------+------------------------------+
 *
 * with Redis's limits: at most 32 arguments (the 32nd says "... (N more arguments)") and an
 * argument over 128 bytes kept as its first 128 and "... (N more bytes)". AUTH's arguments and
 * HELLO's AUTH username/password are logged as "(redacted)", as Redis 7 does.
 * The client's address is its connection's addr as CLIENT LIST shows it: "ip:port" over TCP,
 * "<unixsocket>:0" over a Unix socket, and "ring:pid=<client pid>" for a ring session.
 */
#ifndef GR_SLOWLOG_H
#define GR_SLOWLOG_H

#include <stddef.h>
#include <stdint.h>

#define GR_SLOWLOG_MAX_ARGC 32      /* Redis's SLOWLOG_ENTRY_MAX_ARGC */
#define GR_SLOWLOG_MAX_STRING 128   /* Redis's SLOWLOG_ENTRY_MAX_STRING */

typedef struct gr_slowlog_entry {
    struct gr_slowlog_entry *newer, *older;
    int64_t id;
    int64_t time_s;                 /* unix seconds when it was logged */
    int64_t duration_us;
    uint32_t argc;                  /* after truncation: at most GR_SLOWLOG_MAX_ARGC */
    uint32_t *argv_length;          /* into the same allocation */
    uint8_t **argv;
    const char *addr, *name;
} gr_slowlog_entry_t;

typedef struct gr_slowlog {
    gr_slowlog_entry_t *newest, *oldest;
    int64_t length;
    int64_t next_id;
    int64_t log_slower_than_us;     /* slowlog-log-slower-than: 10000; 0 logs all; < 0 none */
    int64_t max_len;                /* slowlog-max-len: 128 */
    uint64_t threshold_cycles;      /* log_slower_than_us in the accounting clock; UINT64_MAX: off */
} gr_slowlog_t;

/* Lifecycle */
void gr_slowlog_init(gr_slowlog_t *log);
void gr_slowlog_release(gr_slowlog_t *log);
/* The setting or the clock rate changed: recompute threshold_cycles. */
void gr_slowlog_set_threshold(gr_slowlog_t *log, int64_t log_slower_than_us, double cycles_per_ns);

/* Access: a command that took duration_us, as argv (copied and truncated here; the positions
 * set in redacted, below 64, shown as "(redacted)"). Trims the log to max_len. Returns 0, or -1
 * when the entry could not be allocated (nothing logged). */
int gr_slowlog_push(gr_slowlog_t *log, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                    uint64_t redacted, int64_t duration_us, int64_t time_s, const char *addr, const char *name);
void gr_slowlog_reset(gr_slowlog_t *log);
/* Drop the oldest entries past max_len (Redis trims when an entry is pushed; so does push). */
void gr_slowlog_trim(gr_slowlog_t *log);

#endif
