/* monitor.h — MONITOR: every call a server runs, as one line to each monitoring connection.
 *
 * A line is Redis's replicationFeedMonitors format: "+<seconds>.<micros> [<db> <peer>] "arg" ..."
 * with each argument quoted and escaped as Redis's sdscatrepr does, a redacted argument (AUTH's
 * password) as "(redacted)", and the peer "unix:<socket path>" for a Unix-socket client. A call
 * is fed after it ran (so SELECT shows the database it chose), unless its row is flagged admin or
 * skip_monitor, as Redis skips them. A typed ring request is shown as its command name and the
 * strings it carries (key, arguments, items), as SLOWLOG shows it; numbers it carries as typed
 * fields are not shown. Monitors are RESP connections (the ring refuses MONITOR).
 */
#ifndef GR_MONITOR_H
#define GR_MONITOR_H

struct gr_server;
struct gr_connection;
struct gr_call;

/* 0, or -1 when out of memory. Adding one already monitoring is a no-op. */
int gr_monitor_add(struct gr_server *db, struct gr_connection *conn);
void gr_monitor_remove(struct gr_server *db, struct gr_connection *conn);
/* After a call ran: its line to every monitor (the caller checks db->monitor_count first). */
void gr_monitor_feed(struct gr_server *db, const struct gr_call *call);

#endif
