"""loop.py — the server process: one thread, one epoll, one keyspace.

What runs here is per connection and per event, never per ring message:
  * the control socket: accept, the attach handshake (create both segments, the eventfd
    doorbell, reply with the names and the fd), AttachConfirm (unlink the names), EOF
    (free the session);
  * RESP over TCP and a Unix socket: the C connection object reads, parses and executes a
    whole read buffer of pipelined commands per call, and writes what it can;
  * the rings: `RingSessions.run` drains every session in C for up to a time slice, so busy
    rings cannot starve sockets and an idle listener costs the rings one epoll poll per slice.
Adaptive polling spins on the rings for --spin-us after the last message, then sets the
sleeper flags and sleeps in epoll, where a client's doorbell wakes it. Busy polling never
sleeps while sessions exist.
"""

from __future__ import annotations

import errno
import os
import secrets
import selectors
import signal
import socket
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from .. import __version__, _native, control
from ..errors import CodecError
from .config import ServerConfig, prepare_runtime_dir

SLICE_NS = 200_000          # adaptive mode: longest the rings run before Python looks at sockets
BUSY_SLICE_NS = 50_000_000  # busy mode: the C loop returns at least this often (signals)
WATCH_NS = 10_000           # how often the C loop peeks at the epoll set for ready sockets
IDLE_SLEEP_S = 0.1          # epoll timeout when asleep: short, so no wakeup is ever lost for long
CRON_INTERVAL_S = 0.1        # active expiry and idle rehash, ten times a second (Redis's hz 10)
CRON_BUDGET_US = 1000        # at most this long per cron
BACKLOG_SLEEP_S = 0.001     # when replies wait for a client to make room in its reply ring
DENIED_REPLY = (b"-DENIED goblin-ring is running in protected mode because protected mode is enabled and no "
                b"password is set. In this mode connections are only accepted from the loopback interface. "
                b"Either start the server with --requirepass (or GOBLIN_REQUIREPASS), or, if you are sure the "
                b"network is private, with --protected-mode no.\r\n")
MAX_CLIENTS_REPLY = b"-ERR max number of clients reached\r\n"


def log(message: str) -> None:
    print(f"goblin-ring[{os.getpid()}] {time.strftime('%Y-%m-%d %H:%M:%S')} {message}",
          file=sys.stderr, flush=True)


@dataclass
class Session:
    session_id: int
    sock: socket.socket
    buffer: bytearray = field(default_factory=bytearray)
    client_pid: int = 0
    client_name: str = ""
    requests: _native.Segment | None = None
    replies: _native.Segment | None = None
    doorbell: int = -1
    attached: bool = False
    confirmed: bool = False


class Server:
    def __init__(self, config: ServerConfig):
        self.config = config
        self.runtime_dir = prepare_runtime_dir(config.runtime_dir)
        self.socket_path = control.socket_path(self.runtime_dir, config.name)
        self.selector = selectors.EpollSelector()
        _native.configure_allocator_for_server()
        self.database = _native.Database(secrets.randbits(64))
        self.database.set_list_implementation(config.list_implementation)
        for name, value in (("bind", config.bind), ("unixsocket", config.unixsocket or ""),
                            ("dir", str(self.runtime_dir)), ("requirepass", config.requirepass),
                            ("protected-mode", config.protected_mode), ("maxclients", config.maxclients),
                            ("timeout", config.timeout), ("maxmemory", config.maxmemory)):
            self.database.configure(name, value)
        self.rings = _native.RingSessions(self.database)
        self.sessions: dict[int, Session] = {}          # by session id
        self.doorbells: dict[int, Session] = {}         # by eventfd
        self.resp_connections: dict[int, tuple[socket.socket, _native.RespConnection]] = {}
        self.listeners: list[socket.socket] = []
        self.resp_by_id: dict[int, socket.socket] = {}   # client id -> socket, for CLIENT KILL
        self.next_client_id = 1     # one id space for ring sessions and RESP clients (CLIENT ID)
        self.stopping = False
        self.control_socket: socket.socket | None = None

    # ---- lifecycle -----------------------------------------------------------------

    def start(self) -> None:
        if self.config.server_core is not None:
            os.sched_setaffinity(0, {self.config.server_core})
        self._open_control_socket()
        self._sweep_segments()
        if self.config.port:
            self._listen_tcp(self.config.bind, self.config.port)
        if self.config.unixsocket:
            self._listen_unix(self.config.unixsocket)
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
            f"poll={self.config.poll} ring_size={self.config.ring_size} "
            f"core={self.config.server_core if self.config.server_core is not None else 'any'}")

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
                raise SystemExit(f"goblin-ring-server: a server named {self.config.name!r} "
                                 f"is already running ({path})")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old_umask = os.umask(0o177)         # the socket is created 0600
        try:
            sock.bind(str(path))
        finally:
            os.umask(old_umask)
        os.chmod(path, 0o600)
        sock.listen(128)
        sock.setblocking(False)
        self.control_socket = sock
        self.selector.register(sock, selectors.EVENT_READ, ("control-listener", None))

    def _sweep_segments(self) -> None:
        """Unlink segments a crashed server of this name left behind (we hold the name now)."""
        prefix = control.segment_prefix(self.config.name)
        swept = 0
        if control.SHM_DIR.is_dir():
            for entry in control.SHM_DIR.iterdir():
                if entry.name.startswith(prefix):
                    try:
                        entry.unlink()
                        swept += 1
                    except OSError:
                        pass
        if swept:
            log(f"swept {swept} stale segment(s) named {prefix}*")

    def _listen_tcp(self, host: str, port: int) -> None:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(511)
        sock.setblocking(False)
        self.listeners.append(sock)
        self.selector.register(sock, selectors.EVENT_READ, ("resp-listener", None))

    def _listen_unix(self, path: str) -> None:
        if os.path.exists(path):
            os.unlink(path)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old_umask = os.umask(0o177)
        try:
            sock.bind(path)
        finally:
            os.umask(old_umask)
        os.chmod(path, 0o600)
        sock.listen(511)
        sock.setblocking(False)
        self.listeners.append(sock)
        self.selector.register(sock, selectors.EVENT_READ, ("resp-listener", None))

    def request_stop(self, signum: int, _frame) -> None:
        self.stopping = True

    def shutdown(self) -> None:
        for session in list(self.sessions.values()):
            self._close_session(session, "server shutting down")
        for sock, _connection in list(self.resp_connections.values()):
            self.selector.unregister(sock)
            sock.close()
        self.resp_connections.clear()
        for sock in self.listeners:
            self.selector.unregister(sock)
            sock.close()
        if self.config.unixsocket and os.path.exists(self.config.unixsocket):
            os.unlink(self.config.unixsocket)
        if self.control_socket is not None:
            self.selector.unregister(self.control_socket)
            self.control_socket.close()
            try:
                self.socket_path.unlink()
            except FileNotFoundError:
                pass
        self.selector.close()
        log("stopped")

    # ---- the loop -------------------------------------------------------------------

    def serve_forever(self) -> None:
        spin_ns = self.config.spin_us * 1000
        busy = self.config.poll == "busy"
        next_cron = time.monotonic() + CRON_INTERVAL_S
        while not self.stopping:
            if (now := time.monotonic()) >= next_cron:
                self.database.cron(CRON_BUDGET_US)
                next_cron = now + CRON_INTERVAL_S
            executed = 0
            if self.sessions:
                # Busy: spin on the rings until a socket is ready (checked every WATCH_NS) or a
                # slice ends (so signals are handled); adaptive: also stop after spin_ns idle.
                executed = self.rings.run(BUSY_SLICE_NS if busy else spin_ns, BUSY_SLICE_NS if busy else SLICE_NS,
                                          self.selector.fileno(), WATCH_NS)
            sleeping = False
            if executed or busy:        # busy mode never sleeps: sockets are polled too
                timeout = 0.0
            else:
                readiness = self.rings.prepare_sleep() if self.sessions else 1
                sleeping = readiness != 0
                timeout = (IDLE_SLEEP_S if readiness == 1 else BACKLOG_SLEEP_S) if sleeping else 0.0
                if timeout and (block_timeout := self.database.next_block_timeout()) is not None:
                    timeout = min(timeout, block_timeout)   # a BLPOP's timeout is the server's
                if self.sessions and (corrupt := self.rings.corrupt_session()):
                    self._close_session(self.sessions[corrupt], "corrupt request ring")
            try:
                events = self.selector.select(timeout)
            finally:
                if sleeping and self.sessions:
                    self.rings.end_sleep()
            for key, mask in events:
                kind, owner = key.data
                if kind in ("doorbell", "control") and self.sessions.get(owner.session_id) is not owner:
                    continue        # closed by an earlier event of this same batch
                if kind == "resp" and key.fd not in self.resp_connections:
                    continue
                if kind == "resp":
                    self._serve_resp(key.fileobj, mask)
                elif kind == "doorbell":
                    self._drain_doorbell(owner)
                elif kind == "control":
                    self._serve_control(owner)
                elif kind == "resp-listener":
                    self._accept_resp(key.fileobj)
                elif kind == "control-listener":
                    self._accept_control()
            self.database.expire_blocked()
            while woken := self.database.take_woken():
                self._resume_woken(woken)
            while killed := self.database.take_killed():
                self._close_killed(killed)

    def _resume_woken(self, client_id: int) -> None:
        """A blocking command of this RESP client was answered: send it, then run what waited."""
        if (sock := self.resp_by_id.get(client_id)) is not None:
            _sock, connection = self.resp_connections[sock.fileno()]
            connection.resume()
            self._serve_resp(sock, 0)

    def _close_killed(self, client_id: int) -> None:
        """CLIENT KILL named this connection: write what it has (its own OK), then close it."""
        if (session := self.sessions.get(client_id)) is not None:
            self._close_session(session, "killed by CLIENT KILL")
        elif (sock := self.resp_by_id.get(client_id)) is not None:
            _sock, connection = self.resp_connections[sock.fileno()]
            connection.flush(sock.fileno())
            self._close_resp(sock)

    # ---- ring sessions ------------------------------------------------------------------

    def _accept_control(self) -> None:
        while True:
            try:
                sock, _ = self.control_socket.accept()
            except BlockingIOError:
                return
            sock.setblocking(False)
            session = Session(self.next_client_id, sock)
            self.next_client_id += 1
            self.sessions[session.session_id] = session
            self.selector.register(sock, selectors.EVENT_READ, ("control", session))

    def _serve_control(self, session: Session) -> None:
        try:
            data = session.sock.recv(control.MAX_CONTROL_FRAME)
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
        if template == _native.lib.GR_T_ATTACH and not session.attached:
            self._attach(session, attach)
        elif template == _native.lib.GR_T_ATTACH_CONFIRM and session.attached and not session.confirmed:
            session.confirmed = True
            session.requests.unlink()      # both sides have mapped them: nothing stays in /dev/shm
            session.replies.unlink()
        else:
            raise ValueError(f"unexpected control message (template {template})")

    def _attach(self, session: Session, attach: dict) -> None:
        session.client_pid = attach["pid"]
        session.client_name = attach["client_name"].decode(errors="replace")
        if attach["protocol_version"] != control.PROTOCOL_VERSION:
            self._refuse(session, 15, f"protocol version {attach['protocol_version']} is not "
                                      f"supported (server speaks {control.PROTOCOL_VERSION})")
            return
        capacity = attach["ring_capacity"] or self.config.ring_size
        if capacity < 4096 or capacity > (1 << 30) or capacity & (capacity - 1):
            self._refuse(session, 11, f"ring capacity {capacity} must be a power of two from 4096 to 1 GiB")
            return
        request_name, reply_name = control.segment_names(self.config.name, os.getpid(), session.session_id)
        size = _native.ring_segment_bytes(capacity)
        try:
            session.requests = _native.Segment(request_name, size, create=True)
            session.replies = _native.Segment(reply_name, size, create=True)
            session.doorbell = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
            self.rings.add(session.session_id, session.requests, session.replies, capacity)
            self.rings.set_peer(session.session_id, session.sock.fileno(), session.client_pid,
                                f"ring:pid={session.client_pid}", session.client_name)
            self.database.count_connection(rejected=False)
        except Exception as error:  # noqa: BLE001 - any failure refuses this client only
            self._refuse(session, 1, f"could not create the session's rings: {error}")
            return
        session.attached = True
        self.doorbells[session.doorbell] = session
        self.selector.register(session.doorbell, selectors.EVENT_READ, ("doorbell", session))
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

    def _refuse(self, session: Session, code: int, message: str) -> None:
        reply = _native.encode_attach(_native.lib.GR_T_ATTACH_REPLY, protocol_version=control.PROTOCOL_VERSION,
                                      error_code=code, error_message=message.encode())
        try:
            session.sock.send(control.frame(reply))
        except OSError:
            pass
        self._close_session(session, f"refused: {message}")

    def _drain_doorbell(self, session: Session) -> None:
        try:
            os.eventfd_read(session.doorbell)
        except BlockingIOError:
            pass

    def _close_session(self, session: Session, why: str) -> None:
        if self.sessions.pop(session.session_id, None) is None:
            return
        if session.attached:
            self.rings.remove(session.session_id)   # C stops touching the memory first
        for segment in (session.requests, session.replies):
            if segment is not None:
                segment.unlink()
                segment.close()
        if session.doorbell >= 0:
            self.selector.unregister(session.doorbell)
            self.doorbells.pop(session.doorbell, None)
            os.close(session.doorbell)
        try:
            self.selector.unregister(session.sock)
        except (KeyError, ValueError):
            pass
        session.sock.close()
        log(f"session {session.session_id} closed: {why}")

    # ---- RESP ---------------------------------------------------------------------------

    def _accept_resp(self, listener: socket.socket) -> None:
        while True:
            try:
                sock, _address = listener.accept()
            except BlockingIOError:
                return
            except OSError as error:
                if error.errno in (errno.EMFILE, errno.ENFILE):
                    log(f"accept failed: {error}")
                    return
                raise
            refusal = None
            if len(self.resp_connections) >= self.database.config_number("maxclients"):
                refusal = MAX_CLIENTS_REPLY
            elif not self.database.accepts_peer(is_loopback_peer(sock)):
                refusal = DENIED_REPLY
            self.database.count_connection(rejected=refusal is not None)
            if refusal is not None:
                try:
                    sock.setblocking(False)
                    sock.send(refusal)
                except OSError:
                    pass
                sock.close()
                continue
            sock.setblocking(False)
            if sock.family != socket.AF_UNIX:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            connection = _native.RespConnection(self.database, self.next_client_id)
            connection.set_peer(sock)
            self.resp_by_id[self.next_client_id] = sock
            connection.client_id = self.next_client_id
            self.next_client_id += 1
            self.resp_connections[sock.fileno()] = (sock, connection)
            self.database.set_info("connected_resp_clients", len(self.resp_connections))
            self.selector.register(sock, selectors.EVENT_READ, ("resp", connection))

    def _serve_resp(self, sock: socket.socket, mask: int) -> None:
        _sock, connection = self.resp_connections[sock.fileno()]
        if mask & selectors.EVENT_READ:
            if not connection.read(sock.fileno()):
                self._close_resp(sock)
                return
        pending = connection.flush(sock.fileno())
        if pending < 0 or (pending == 0 and connection.should_close()):
            self._close_resp(sock)
            return
        wanted = selectors.EVENT_READ | (selectors.EVENT_WRITE if pending else 0)
        if pending and connection.should_close():
            wanted = selectors.EVENT_WRITE
        if self.selector.get_key(sock).events != wanted:
            self.selector.modify(sock, wanted, ("resp", connection))

    def _close_resp(self, sock: socket.socket) -> None:
        _sock, connection = self.resp_connections.pop(sock.fileno(), (None, None))
        if connection is not None:
            self.resp_by_id.pop(connection.client_id, None)
        self.database.set_info("connected_resp_clients", len(self.resp_connections))
        self.selector.unregister(sock)
        sock.close()


def is_loopback_peer(sock: socket.socket) -> bool:
    """A Unix-socket client, or a TCP peer on 127.0.0.0/8 or ::1 (what protected mode serves)."""
    if sock.family == socket.AF_UNIX:
        return True
    try:
        host = sock.getpeername()[0]
    except OSError:
        return False
    return host.startswith("127.") or host in ("::1", "::ffff:127.0.0.1") or host.startswith("::ffff:127.")


def run(config: ServerConfig) -> int:
    server = Server(config)
    signal.signal(signal.SIGTERM, server.request_stop)
    signal.signal(signal.SIGINT, server.request_stop)
    server.start()
    try:
        server.serve_forever()
    finally:
        server.shutdown()
    return 0
