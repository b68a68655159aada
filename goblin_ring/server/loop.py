"""loop.py — the server process: one thread, one keyspace, the serving loop in C.

Python keeps what is per process or per ring session, never per request:
  * start-up: the runtime dir, the control socket, the RESP listeners (bound here, then
    handed to C), maxclients fitted to the descriptor limit (as Redis does, with a log line);
  * the control socket: accept (EMFILE refuses the waiting client through a spare
    descriptor), the attach handshake (check the ask against --max-ring-size and maxclients,
    have segments.py's worker create both segments off this thread, then the eventfd doorbell
    and the reply with the names and the fd), AttachConfirm (unlink the names), EOF (free the
    session; the worker unmaps its segments);
  * signals and the cron (active expiry, idle clients, stats), ten times a second.
Everything else runs in `ServingLoop.run` (native/server/server.h): RESP accept, read,
parse, execute and write, the ring drain, blocked-client timeouts, CLIENT KILL, the output
buffer limits. It returns when this selector (nested in C's epoll set) has control events,
when the cron is due, on a signal, or when a ring session must be closed.
Adaptive polling spins for --spin-us after the last work, then sets the rings' sleeper flags
and sleeps in epoll, where a client's doorbell or a socket wakes it. Busy polling never sleeps:
it polls the rings and the sockets in turn on the core it was pinned to.
"""

from __future__ import annotations

import errno
import os
import re
import resource
import secrets
import selectors
import signal
import socket
import struct
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from .. import __version__, _native, control
from ..errors import CodecError
from .config_file import fatal
from .config import DEFAULT_SAVE_RULES, ConfigError, ServerConfig, prepare_runtime_dir
from .segments import Created, SegmentWorker

CRON_INTERVAL_S = 0.1        # active expiry and idle rehash, ten times a second (Redis's hz 10)
CRON_BUDGET_US = 1000        # at most this long per cron
RESERVED_FDS = 32            # Redis's CONFIG_MIN_RESERVED_FDS: descriptors kept for everything but clients
ACCEPT_PAUSE_S = 0.1        # descriptors exhausted: the control listener rests this long
ACCEPT_LOG_INTERVAL_S = 10  # ... and says so at most this often


class StartupError(ConfigError):
    """The server cannot start here (port in use, socket path unusable): one line, exit 2."""


def log(message: str) -> None:
    print(f"goblin-ring[{os.getpid()}] {time.strftime('%Y-%m-%d %H:%M:%S')} {message}",
          file=sys.stderr, flush=True)


@dataclass
class Session:
    session_id: int
    sock: socket.socket
    buffer: bytearray = field(default_factory=bytearray)
    received_fds: list = field(default_factory=list)   # descriptors sent with control frames
    reply_doorbell: int = -1    # the client's eventfd, written when it sleeps for replies
    client_pid: int = 0          # the kernel's word for it (SO_PEERCRED) when it has one, else the client's
    peer_pid: int = 0
    client_name: str = ""
    username: bytes = b""     # the attach's credentials, between _attach and _finish_attach
    password: bytes = b""
    requests: _native.Segment | None = None
    replies: _native.Segment | None = None
    doorbell: int = -1
    capacity: int = 0
    names: tuple[str, str] = ("", "")
    attaching: bool = False      # its segments are being created by the worker
    attached: bool = False
    confirmed: bool = False


class Server:
    def __init__(self, config: ServerConfig):
        self.config = config
        if config.mlock:
            lock_all_memory()   # first: a refusal leaves nothing behind
        self.runtime_dir = prepare_runtime_dir(config.runtime_dir)
        self.socket_path = control.socket_path(self.runtime_dir, config.name)
        self.selector = selectors.EpollSelector()
        _native.configure_allocator_for_server()
        self.database = _native.Database(secrets.randbits(64))
        if config.config_file:
            self.database.use_config_file(config.config_file)
        self.database.set_list_implementation(config.list_implementation)
        self.database.set_array_implementation(config.array_implementation)
        if config.mlock:
            self.database.set_info("mlock_all", 1)
        for name, value in (("bind", config.bind), ("unixsocket", config.unixsocket or ""),
                            ("dir", os.path.abspath(config.dir) if config.dir else str(self.runtime_dir)),
                            ("dbfilename", config.dbfilename),
                            ("requirepass", config.requirepass),
                            ("protected-mode", config.protected_mode),
                            ("timeout", config.timeout), ("maxmemory", config.maxmemory),
                            ("maxmemory-policy", config.maxmemory_policy),
                            ("appendfsync", config.appendfsync), ("appendfilename", config.appendfilename),
                            ("aof-load-truncated", config.aof_load_truncated),
                            ("stop-writes-on-bgsave-error", config.stop_writes_on_bgsave_error),
                            ("shutdown-on-sigterm", config.shutdown_on_sigterm),
                            ("shutdown-on-sigint", config.shutdown_on_sigint),
                            ("zset-implementation", config.zset_implementation)):
            self.database.configure(name, value)
        # The server saves by Redis's default rules unless told otherwise; a database made
        # without a server (gr_db_new: tests, embedding) has no directory and no rules.
        self.database.configure("save", DEFAULT_SAVE_RULES if config.save is None else config.save)
        users = [directive for directive in config.settings if directive.name == "user"]
        for directive in config.settings:    # the config file's CONFIG parameters, in its order
            if directive.name == "user":
                self._declare_user(directive)
                continue
            try:
                self.database.configure(directive.name, " ".join(directive.args))
            except ValueError as error:
                why = str(error).split(": ", 1)[-1]
                if why.startswith("unknown parameter"):
                    why = "Bad directive or wrong number of arguments"
                raise ConfigError(str(fatal(directive.path, directive.line_number, directive.line, why))) from None
        if config.aclfile:
            if users:   # Redis refuses both, as a likely security hole
                raise ConfigError(
                    "Configuring Redis with users defined in redis.conf and at the same setting an ACL file path is "
                    "invalid. This setup is very likely to lead to configuration errors and security holes, please "
                    "define either an ACL file or declare users directly in your redis.conf, but not both.")
            self.database.configure("aclfile", config.aclfile)
            errors = self.database.acl_load()
            if errors:
                raise ConfigError(f"Aborting Redis startup because of ACL errors: {errors}")
        if config.masterauth is not None:
            self.database.configure("masterauth", config.masterauth)
        if config.replicaof:
            try:
                self.database.configure("replicaof", config.replicaof)
            except ValueError as error:
                raise ConfigError(f"--replicaof: {str(error).split(': ', 1)[-1]}") from None
        self.rings = _native.RingSessions(self.database)
        # RESP clients, the ring drain and the doorbells are served in C; this selector
        # (control sockets) is nested in its epoll set. One id space for ring sessions and
        # RESP clients (CLIENT ID) comes from it too.
        self.serving = _native.ServingLoop(self.database, self.rings, self.selector.fileno())
        self.sessions: dict[int, Session] = {}          # by session id
        self.listeners: list[socket.socket] = []
        self.stopping = False
        self.control_socket: socket.socket | None = None
        self.control_paused_until = 0.0     # monotonic time the control listener resumes, if paused
        self.accept_failures = 0            # refused for want of descriptors since the last log line
        self.accept_logged_at = -ACCEPT_LOG_INTERVAL_S
        self.spare_fd = -1                  # given up to accept-and-refuse when descriptors run out
        self.attaching = 0                  # sessions whose segments the worker is creating
        self.segment_worker: SegmentWorker | None = None
        self.unix_listening = False
        self.started = False
        self.shutdown_command = False       # stopped by SHUTDOWN (which saved), not by a signal
        self.stop_signal = 0                # the signal that asked to stop, until it is handled

    def _declare_user(self, directive) -> None:
        """A config file's `user <name> <rules>` line, applied as ACL SETUSER; Redis's error
        ("Error in user declaration '<rule>': <why>") names the line."""
        from .config_file import fatal
        if not directive.args:
            raise ConfigError(str(fatal(directive.path, directive.line_number, directive.line,
                                        "Bad directive or wrong number of arguments")))
        why = self.database.acl_setuser(directive.args[0], directive.args[1:])
        if why:
            match = re.match(r"ERR Error in ACL SETUSER modifier '(.*)': (.*)$", why, re.S)
            text = f"Error in user declaration '{match.group(1)}': {match.group(2)}" if match else why
            raise ConfigError(str(fatal(directive.path, directive.line_number, directive.line, text)))

    # ---- lifecycle -----------------------------------------------------------------

    def start(self) -> None:
        if self.config.server_core is not None:
            os.sched_setaffinity(0, {self.config.server_core})
        self._fit_maxclients_to_descriptors()
        self._remove_stale_temp_files()
        self._load_data()
        self._open_control_socket()
        self._sweep_segments()
        if self.config.port:
            try:
                self._listen_tcp(self.config.bind, self.config.port)
            except OSError as error:
                if error.errno == errno.EADDRINUSE:
                    raise StartupError(f"port {self.config.port} on {self.config.bind} is already in use; "
                                       f"choose another with --port (or --port 0 for no TCP)") from None
                raise StartupError(f"cannot listen on {self.config.bind}:{self.config.port}: "
                                   f"{error.strerror or error}") from None
        if self.config.unixsocket:
            try:
                self._listen_unix(self.config.unixsocket)
            except OSError as error:
                raise StartupError(f"cannot listen on --unixsocket {self.config.unixsocket}: "
                                   f"{error.strerror or error}") from None
        self.segment_worker = SegmentWorker()
        self.selector.register(self.segment_worker.wakeup, selectors.EVENT_READ, ("segments", None))
        self.spare_fd = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
        database = self.database
        database.set_info("version", __version__)
        database.set_info("name", self.config.name)
        database.set_info("mode", self.config.poll)
        database.set_info("executable", sys.argv[0])
        database.set_info("run_id", secrets.token_hex(20))
        database.set_info("tcp_port", self.config.port)
        database.set_info("process_id", os.getpid())
        database.set_info("ring_capacity", self.config.ring_size)
        log(f"started: name={self.config.name} control={self.socket_path} "
            f"resp={'%s:%d' % (self.config.bind, self.config.port) if self.config.port else 'off'} "
            f"poll={self.config.poll} ring_size={self.config.ring_size} max_ring_size={self.config.max_ring_size} "
            f"core={self.config.server_core if self.config.server_core is not None else 'any'}")
        self.started = True

    def _remove_stale_temp_files(self) -> None:
        """Temporary files a process killed mid-write left in dir (a rewrite's
        <appendfilename>.temp-rewrite-<pid>, a dataset's <appendfilename>.temp-<pid>, a
        snapshot's temp-<pid>.grdb): removed when the pid they name no longer runs, as
        Redis removes its temporary rewrite files."""
        directory = Path(self.config.dir or str(self.runtime_dir))
        prefixes = (f"{self.config.appendfilename}.temp-rewrite-", f"{self.config.appendfilename}.temp-", "temp-")
        try:
            entries = list(directory.iterdir())
        except OSError:
            return
        for entry in entries:
            name = entry.name
            for prefix in prefixes:
                if not name.startswith(prefix):
                    continue
                digits = name[len(prefix):]
                if prefix == "temp-":
                    if not digits.endswith(".grdb"):
                        break
                    digits = digits[:-len(".grdb")]
                if digits.isdigit() and not process_alive(int(digits)):
                    try:
                        entry.unlink()
                        log(f"removed the temporary file {entry} a stopped process left")
                    except OSError:
                        pass
                break

    def _load_data(self) -> None:
        """With --appendonly yes the append-only file is the data (as Redis: it wins over the
        snapshot); it is replayed, then opened to record every write from here on. Otherwise
        the snapshot (dir/dbfilename) is loaded, if there is one."""
        if self.config.import_rdb:
            self._import_rdb(self.config.import_rdb)
            return
        if not self.config.appendonly:
            self._load_snapshot()
            return
        directory = self.config.dir or str(self.runtime_dir)
        path = os.path.join(directory, self.config.appendfilename)
        started = time.monotonic()
        try:
            loaded = self.database.aof_load(path, self.config.aof_load_truncated)
        except ValueError as error:
            raise StartupError(f"{error}") from None
        if loaded is not None:
            commands, warning = loaded
            if warning:
                log(warning)
            log(f"DB loaded from append only file {path}: {commands} commands, "
                f"{self.database.key_count()} keys, {time.monotonic() - started:.3f} seconds")
        try:
            # no file yet: start it with whatever is already loaded, so it alone can rebuild the data
            self.database.aof_start(write_dataset=loaded is None and self.database.key_count() > 0)
        except OSError as error:
            raise StartupError(f"--appendonly yes: {error}") from None

    def _import_rdb(self, path: str) -> None:
        """--import-rdb: a Redis RDB file's data, before any client is served; a refused file
        (missing, corrupt, a module's value) stops the start with the offset it names."""
        try:
            loaded, seconds = self.database.import_rdb(path)
        except ValueError as error:
            raise StartupError(f"refusing to start: --import-rdb {error}") from None
        if not loaded:
            raise StartupError(f"refusing to start: --import-rdb {path}: no such file")
        log(f"DB loaded from the Redis RDB file {path}: {seconds:.3f} seconds, {self.database.key_count()} keys")

    def export_rdb(self, path: str) -> None:
        """--export-rdb: the data loaded at start, written as a Redis RDB file."""
        try:
            keys, skipped = self.database.export_rdb(path)
        except ValueError as error:
            raise StartupError(f"--export-rdb {error}") from None
        log(f"Redis RDB written to {path}: {keys} keys" + (f", {skipped} skipped (no Redis form)" if skipped else ""))

    def _load_snapshot(self) -> None:
        """Redis's loadDataFromDisk: the snapshot before any client is served. A refused file
        stops the start (exit 2, the message names the file and the offset) unless
        --start-empty-on-bad-snapshot says to log it and start empty."""
        try:
            loaded, seconds = self.database.load_snapshot()
        except ValueError as error:
            if not self.config.start_empty_on_bad_snapshot:
                raise StartupError(f"refusing to start: {error} (--start-empty-on-bad-snapshot starts empty)") from None
            log(f"snapshot refused, starting empty: {error}")
            return
        if loaded:
            log(f"DB loaded from disk: {seconds:.3f} seconds, {self.database.key_count()} keys")

    def _fit_maxclients_to_descriptors(self) -> None:
        """Redis's adjustOpenFilesLimit: raise the descriptor limit to maxclients plus the
        reserve if allowed, else lower maxclients to what the limit allows, and say so."""
        maxclients = self.config.maxclients
        wanted = maxclients + RESERVED_FDS
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft == resource.RLIM_INFINITY or soft >= wanted:
            self.database.configure("maxclients", maxclients)
            return
        target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        error = None
        if target > soft:
            try:
                resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            except (OSError, ValueError) as failure:
                error, target = failure, soft
        else:
            target = soft
        if target >= wanted:
            self.database.configure("maxclients", maxclients)
            log(f"Increased maximum number of open files to {target} (it was originally set to {soft}).")
            return
        log(f"You requested maxclients of {maxclients} requiring at least {wanted} max file descriptors.")
        log(f"Server can't set maximum open files to {wanted} because of OS error: "
            f"{error.strerror if isinstance(error, OSError) and error.strerror else 'the hard limit is ' + str(hard)}.")
        reduced = target - RESERVED_FDS
        if reduced < 1:
            raise SystemExit(f"goblin-ring-server: your current 'ulimit -n' of {target} is not enough for the server "
                             f"to start. Please increase your open file limit to at least {wanted}.")
        self.database.configure("maxclients", reduced)
        log(f"Current maximum open files is {target}. maxclients has been reduced to {reduced} to compensate "
            f"for low ulimit. If you need higher maxclients increase 'ulimit -n'.")

    def _open_control_socket(self) -> None:
        path = self.socket_path
        if path.exists():
            probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                probe.connect(str(path))
            except OSError:
                path.unlink()               # stale: its server is gone
            else:
                probe.close()
                raise StartupError(f"a server named {self.config.name!r} is already running ({path}); "
                                   f"choose another --name")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old_umask = os.umask(0o177)         # the socket is created 0600
        try:
            sock.bind(str(path))
        except OSError as error:
            sock.close()
            raise StartupError(f"cannot create the control socket {path}: {error.strerror or error}") from None
        finally:
            os.umask(old_umask)
        os.chmod(path, 0o600)
        sock.listen(128)
        sock.setblocking(False)
        self.control_socket = sock
        self.selector.register(sock, selectors.EVENT_READ, ("control-listener", None))

    def _sweep_segments(self) -> None:
        """Unlink segments a crashed server of exactly this name left behind: the name read
        back from the segment's must equal ours (not merely start with it: 'probe' must not
        sweep 'probe-b'), and the server pid in it must be dead."""
        swept = 0
        if control.SHM_DIR.is_dir():
            for entry in control.SHM_DIR.iterdir():
                parsed = control.parse_segment_name(entry.name)
                if parsed is None or parsed[0] != self.config.name or process_alive(parsed[1]):
                    continue
                try:
                    entry.unlink()
                    swept += 1
                except OSError:
                    pass
        if swept:
            log(f"swept {swept} stale segment(s) of dead servers named {self.config.name!r}")

    def _listen_tcp(self, host: str, port: int) -> None:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((host, port))
            sock.listen(511)
        except OSError:
            sock.close()
            raise
        sock.setblocking(False)
        self.listeners.append(sock)
        self.serving.add_listener(sock)

    def _listen_unix(self, path: str) -> None:
        if os.path.exists(path):
            os.unlink(path)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old_umask = os.umask(0o177)
        try:
            sock.bind(path)
            os.chmod(path, 0o600)
            sock.listen(511)
        except OSError:
            sock.close()
            raise
        finally:
            os.umask(old_umask)
        sock.setblocking(False)
        self.listeners.append(sock)
        self.unix_listening = True
        self.serving.add_listener(sock)

    def request_stop(self, signum: int, _frame) -> None:
        self.stop_signal = signum
        self.stopping = True

    def _stop_for_signal(self) -> bool:
        """SIGTERM/SIGINT behave as SHUTDOWN, as Redis's prepareForShutdown: a running child is
        killed, the append-only file written and fsynced, a snapshot saved when save rules are
        set (or as shutdown-on-sigterm/-sigint say: save, nosave, force). When that fails
        nothing is lost: the server logs it and keeps serving, unless the flags say force.
        True: stop."""
        name = signal.Signals(self.stop_signal).name if self.stop_signal else "signal"
        log(f"Received {name} scheduling shutdown...")
        is_sigint = self.stop_signal == signal.SIGINT
        self.stop_signal = 0
        status, error = self.database.shutdown_for_signal(is_sigint)
        if status == 0:
            return True
        log(f"Error trying to shut down: {error}")
        if status == 1:
            log(f"Errors trying to shut down the server; exiting anyway, as shutdown-on-"
                f"{'sigint' if is_sigint else 'sigterm'} says force")
            return True
        log(f"{name} received but errors trying to shut down the server, check the logs for more information")
        self.stopping = False
        return False

    def shutdown(self, quiet: bool = False) -> None:
        for session in list(self.sessions.values()):
            self._close_session(session, "server shutting down")
        self.serving.close()            # every RESP connection
        self.database.aof_stop()        # the append-only file: written and fsynced
        for sock in self.listeners:
            sock.close()
        if self.unix_listening and os.path.exists(self.config.unixsocket):
            os.unlink(self.config.unixsocket)
        if self.control_socket is not None:
            if self.control_paused_until == 0.0:
                self.selector.unregister(self.control_socket)
            self.control_socket.close()
            try:
                self.socket_path.unlink()
            except FileNotFoundError:
                pass
        if self.segment_worker is not None:
            self.selector.unregister(self.segment_worker.wakeup)
            self.segment_worker.close()         # every segment unlinked and unmapped
            self.segment_worker = None
        if self.spare_fd >= 0:
            os.close(self.spare_fd)
        self.selector.close()
        if not quiet:
            log("stopped")

    # ---- the loop -------------------------------------------------------------------

    def serve_forever(self) -> None:
        spin_ns = self.config.spin_us * 1000
        busy = self.config.poll == "busy"
        serving = self.serving
        next_cron = time.monotonic() + CRON_INTERVAL_S
        while True:
            if self.stopping and (self.shutdown_command or self._stop_for_signal()):
                return
            if (now := time.monotonic()) >= next_cron:
                self.database.cron(CRON_BUDGET_US)
                next_cron = now + CRON_INTERVAL_S
            if self.control_paused_until and now >= self.control_paused_until:
                self._resume_control_accept()
            reasons = serving.run(max(0, int((next_cron - now) * 1e9)), spin_ns, busy)
            if self.database.shutdown_requested():     # SHUTDOWN: it has saved if it had to
                log("SHUTDOWN: stopping")
                self.shutdown_command = self.stopping = True
                continue
            if reasons & serving.LOG:
                for line in serving.take_log():
                    log(line)
            if reasons & serving.PYTHON:
                for key, _mask in self.selector.select(0):
                    kind, owner = key.data
                    if kind == "control" and self.sessions.get(owner.session_id) is not owner:
                        continue        # closed by an earlier event of this same batch
                    if kind == "control":
                        self._serve_control(owner)
                    elif kind == "control-listener":
                        self._accept_control()
                    elif kind == "segments":
                        for created in self.segment_worker.completed():
                            self._finish_attach(created)
            if reasons & serving.SESSIONS:
                while (killed := serving.take_killed_session())[0]:
                    if (session := self.sessions.get(killed[0])) is not None:
                        self._close_session(session, killed[1])
                while (corrupt := self.rings.corrupt_session()) and corrupt in self.sessions:
                    self._close_session(self.sessions[corrupt], "corrupt ring (impossible record or reply-ring head)")

    # ---- ring sessions ------------------------------------------------------------------

    def _accept_control(self) -> None:
        while True:
            try:
                sock, _ = self.control_socket.accept()
            except BlockingIOError:
                return
            except OSError as error:
                if error.errno in (errno.ECONNABORTED, errno.EINTR, errno.EPROTO):
                    continue
                if error.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                    if not self._refuse_without_descriptors(error):
                        return
                    continue
                log(f"control socket accept failed: {error}")
                return
            sock.setblocking(False)
            session = Session(self.serving.next_client_id(), sock)
            session.peer_pid = peer_pid(sock)
            self.sessions[session.session_id] = session
            self.selector.register(sock, selectors.EVENT_READ, ("control", session))

    def _serve_control(self, session: Session) -> None:
        try:
            data, fds, _flags, _address = socket.recv_fds(session.sock, control.MAX_CONTROL_FRAME, 1)
            session.received_fds.extend(fds)
            while len(session.received_fds) > 1:     # one is all a client may give
                os.close(session.received_fds.pop())
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._close_session(session, "control socket closed")
            return
        session.buffer.extend(data)
        try:
            while (message := control.split_frame(session.buffer)) is not None:
                self._handle_control_message(session, message)
                if session.session_id not in self.sessions:
                    return
        except (ValueError, CodecError) as error:
            self._close_session(session, f"bad control message: {error}")

    def _handle_control_message(self, session: Session, message: bytes) -> None:
        attach = _native.decode_attach(message)
        template = attach["template_id"]
        if template == _native.lib.GR_T_ATTACH and not session.attached and not session.attaching:
            self._attach(session, attach)
        elif template == _native.lib.GR_T_ATTACH_CONFIRM and session.attached and not session.confirmed:
            session.confirmed = True
            session.requests.unlink()      # both sides have mapped them: nothing stays in /dev/shm
            session.replies.unlink()
        else:
            raise ValueError(f"unexpected control message (template {template})")

    def _attach(self, session: Session, attach: dict) -> None:
        """Check the ask, then have the worker create the segments; _finish_attach replies."""
        if session.received_fds:           # an event-loop client's eventfd, to wake it for replies
            session.reply_doorbell = session.received_fds.pop(0)
        # The pid as this server's PID namespace sees it: a client in another namespace
        # reports its own namespace's number. Only for display (CLIENT LIST, the log):
        # whether the client lives is its control socket's EOF.
        session.client_pid = session.peer_pid or attach["pid"]
        session.client_name = attach["client_name"].decode(errors="replace")
        if attach["protocol_version"] != control.PROTOCOL_VERSION:
            self._refuse(session, 15, f"protocol version {attach['protocol_version']} is not "
                                      f"supported (server speaks {control.PROTOCOL_VERSION})")
            return
        session.username, session.password = attach["username"], attach["password"]
        if (session.username or session.password) and \
                not self.database.credentials_valid(session.username, session.password):
            self._refuse(session, 1, "WRONGPASS invalid username-password pair or user is disabled.")
            return
        capacity = attach["ring_capacity"] or self.config.ring_size
        if capacity < 4096 or capacity > (1 << 30) or capacity & (capacity - 1):
            self._refuse(session, 11, f"ring capacity {capacity} must be a power of two from 4096 to 1 GiB")
            return
        if capacity > self.config.max_ring_size:
            self._refuse(session, 11, f"ring capacity {capacity} is larger than this server allows "
                                      f"(--max-ring-size {self.config.max_ring_size})")
            return
        if self._client_count() >= self.database.config_number("maxclients"):
            self.database.count_connection(rejected=True)
            self._refuse(session, 1, "ERR max number of clients reached")
            return
        session.capacity = capacity
        session.names = control.segment_names(self.config.name, os.getpid(), session.session_id)
        session.attaching = True
        self.attaching += 1
        self.segment_worker.create(session.session_id, session.names,
                                   _native.ring_segment_bytes(capacity))

    def _finish_attach(self, created: Created) -> None:
        session = self.sessions.get(created.session_id)
        if session is None or not session.attaching:    # the client left meanwhile
            if created.segments:
                self.segment_worker.release(*created.segments)
            return
        session.attaching = False
        self.attaching -= 1
        if created.segments is None:
            self._refuse(session, created.error_code, created.error)
            return
        session.requests, session.replies = created.segments
        capacity = session.capacity
        request_name, reply_name = session.names
        try:
            session.doorbell = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
            self.rings.add(session.session_id, session.requests, session.replies, capacity)
            if session.reply_doorbell >= 0:     # before the attach reply: no reply is ever sent without it
                self.rings.set_reply_doorbell(session.session_id, session.reply_doorbell)
            session.attached = True
            # the credentials were checked in _attach; if the user changed meanwhile, the session
            # stays unauthenticated (NOAUTH until AUTH) rather than being let in
            if session.username or session.password:
                self.rings.authenticate(session.session_id, session.username, session.password)
            session.username = session.password = b""
            self.rings.set_peer(session.session_id, session.sock.fileno(), session.client_pid,
                                f"ring:pid={session.client_pid}", session.client_name)
            self.database.count_connection(rejected=False)
        except Exception as error:  # noqa: BLE001 - any failure refuses this client only
            reason = error.strerror if isinstance(error, OSError) and error.strerror else error
            self._refuse(session, 1, f"could not create the session's rings: {reason}")
            return
        self.serving.watch_doorbell(session.doorbell)
        reply = _native.encode_attach(
            _native.lib.GR_T_ATTACH_REPLY, protocol_version=control.PROTOCOL_VERSION,
            session_id=session.session_id, ring_capacity=capacity, pid=os.getpid(),
            request_ring_name=request_name.encode(), reply_ring_name=reply_name.encode(),
            error_message=b"")
        try:
            socket.send_fds(session.sock, [control.frame(reply)], [session.doorbell])
        except OSError as error:
            self._close_session(session, f"attach reply failed: {error}")
            return
        log(f"session {session.session_id} attached: pid={session.client_pid} "
            f"name={session.client_name or '-'} ring={capacity}")

    def _client_count(self) -> int:
        """What maxclients limits: RESP clients, attached ring sessions and attaches under way."""
        return self.serving.resp_clients() + self.rings.count() + self.attaching

    def _refuse_without_descriptors(self, error: OSError) -> bool:
        """accept failed for want of descriptors: give up the spare one to accept the oldest
        waiting client and tell it why (instead of leaving it hanging), as Redis does with its
        reserved descriptor. If even that fails, rest the listener (no spinning on a
        level-triggered listener). Logged at most every ACCEPT_LOG_INTERVAL_S seconds.
        True: one client was refused, try the next."""
        self.accept_failures += 1
        now = time.monotonic()
        if now - self.accept_logged_at >= ACCEPT_LOG_INTERVAL_S:
            log(f"control socket: out of file descriptors ({errno.errorcode.get(error.errno, error.errno)}); "
                f"{self.accept_failures} attach(es) refused since the last report")
            self.accept_logged_at, self.accept_failures = now, 0
        if self.spare_fd >= 0:
            os.close(self.spare_fd)
            self.spare_fd = -1
            try:
                sock, _ = self.control_socket.accept()
            except OSError:
                sock = None
            if sock is not None:
                message = f"the server is out of file descriptors ({errno.errorcode.get(error.errno, '')})"
                reply = _native.encode_attach(_native.lib.GR_T_ATTACH_REPLY,
                                              protocol_version=control.PROTOCOL_VERSION,
                                              error_code=1, error_message=message.encode())
                try:
                    sock.setblocking(False)
                    sock.send(control.frame(reply))
                    sock.recv(control.MAX_CONTROL_FRAME)     # read what it sent: close without RST
                except OSError:
                    pass
                sock.close()
            try:
                self.spare_fd = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                pass
            if sock is not None:
                return True
        self.selector.unregister(self.control_socket)
        self.control_paused_until = now + ACCEPT_PAUSE_S
        return False

    def _resume_control_accept(self) -> None:
        self.control_paused_until = 0.0
        self.selector.register(self.control_socket, selectors.EVENT_READ, ("control-listener", None))

    def _refuse(self, session: Session, code: int, message: str) -> None:
        reply = _native.encode_attach(_native.lib.GR_T_ATTACH_REPLY, protocol_version=control.PROTOCOL_VERSION,
                                      error_code=code, error_message=message.encode())
        try:
            session.sock.send(control.frame(reply))
        except OSError:
            pass
        self._close_session(session, f"refused: {message}")

    def _close_session(self, session: Session, why: str) -> None:
        if self.sessions.pop(session.session_id, None) is None:
            return
        if session.attaching:
            self.attaching -= 1         # the worker's segments are released when they come back
            session.attaching = False
        if session.attached:
            self.rings.remove(session.session_id)   # C stops touching the memory first
        for fd in [*session.received_fds, session.reply_doorbell]:
            if fd >= 0:
                os.close(fd)
        session.received_fds.clear()
        session.reply_doorbell = -1
        self.segment_worker.release(session.requests, session.replies)
        session.requests = session.replies = None
        if session.doorbell >= 0:
            self.serving.unwatch_doorbell(session.doorbell)
            os.close(session.doorbell)
        try:
            self.selector.unregister(session.sock)
        except (KeyError, ValueError):
            pass
        session.sock.close()
        log(f"session {session.session_id} closed: {why}")


def lock_all_memory() -> None:
    """--mlock: mlockall(MCL_CURRENT | MCL_FUTURE), or a ConfigError that says what limits it."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.mlockall(1 | 2) != 0:
        code = ctypes.get_errno()
        soft, hard = resource.getrlimit(resource.RLIMIT_MEMLOCK)
        shown = "unlimited" if soft == resource.RLIM_INFINITY else f"{soft} bytes"
        raise ConfigError(f"--mlock: mlockall failed: {os.strerror(code)}; RLIMIT_MEMLOCK is {shown} "
                          f"(hard {'unlimited' if hard == resource.RLIM_INFINITY else hard}): raise it "
                          "(ulimit -l, LimitMEMLOCK=) or grant CAP_IPC_LOCK")


def peer_pid(sock: socket.socket) -> int:
    """The connecting process's pid (SO_PEERCRED), translated by the kernel into our PID
    namespace; 0 when it has none there."""
    try:
        credentials = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except OSError:
        return 0
    return struct.unpack("3i", credentials)[0]


def process_alive(pid: int) -> bool:
    """Whether a process with this pid exists (ours or another user's)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def run(config: ServerConfig) -> int:
    """Serve until SIGTERM/SIGINT. A ConfigError (StartupError) leaves nothing behind and is
    the caller's one-line error."""
    server = Server(config)
    signal.signal(signal.SIGTERM, server.request_stop)
    signal.signal(signal.SIGINT, server.request_stop)
    try:
        if config.export_rdb:
            server._fit_maxclients_to_descriptors()
            server._load_data()
            server.export_rdb(config.export_rdb)
            return 0
        server.start()
        server.serve_forever()      # until SHUTDOWN, or a signal whose shutdown saved what it had to
    finally:
        server.shutdown(quiet=not server.started)
    return 0
