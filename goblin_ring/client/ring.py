"""ring.py — RingClient: the typed client over a session's shared-memory rings.

Attach: connect to <runtime-dir>/<name>.sock, send an AttachRequest, receive the two
segment names and the server's eventfd doorbell, map both segments, confirm (the server
then unlinks the names). The control socket stays open: the server's EOF on it is how a
waiting call learns the server is gone (ConnectionError, within one 10 ms sleep slice).
Every command is then one cffi call into native/client/client.c: the method's argv, packed
into one buffer plus its lengths (gr_client_call_argv), which C builds into the typed
request, validates, encodes and sends, then waits for and decodes the reply.
"""

from __future__ import annotations

import os
import socket
import struct
import threading
import weakref
from pathlib import Path
from typing import Any, Sequence

from .. import _native, control
from ..errors import AuthenticationError, ConnectionError, DataError, ProtocolError, WatchError, error_from_reply
from .cache import ALLOWED_COMMANDS, CacheConfig
from .commands import Commands, ListCommands, bool_ok, encode, raise_first_error

LEFT, RIGHT = 0, 1
_ENDS = {"LEFT": LEFT, "RIGHT": RIGHT, b"LEFT": LEFT, b"RIGHT": RIGHT,
         "left": LEFT, "right": RIGHT, b"left": LEFT, b"right": RIGHT}   # other spellings take argv

_T = _native.lib
_call_argv, _ping, _key_int, _key_value, _key_range, _pop_keys, _move = (
    _T.gr_client_call_argv, _T.gr_client_ping, _T.gr_client_key_int, _T.gr_client_key_value, _T.gr_client_key_range,
    _T.gr_client_pop_keys, _T.gr_client_move)
_bpop, _bpop_seconds, _lmpop = _T.gr_client_bpop, _T.gr_client_bpop_seconds, _T.gr_client_lmpop
_claim = _T.gr_client_claim
_OTHER_THREAD, _FORKED = _T.GR_CLIENT_OTHER_THREAD, _T.GR_CLIENT_FORKED
_NULL = _native.ffi.NULL
_loads = _native.plain_loads
_join = b"".join
_LINDEX, _LLEN, _LSET, _PUSH, _POP, _PING, _GET, _SET = (
    _T.GR_T_LINDEX, _T.GR_T_LLEN, _T.GR_T_LSET, _T.GR_T_PUSH, _T.GR_T_POP, _T.GR_T_PING, _T.GR_T_GET, _T.GR_T_SET)
_LRANGE, _LTRIM, _LMOVE, _LMPOP, _BPOP, _BLMOVE, _BLMPOP = (
    _T.GR_T_LRANGE, _T.GR_T_LTRIM, _T.GR_T_LMOVE, _T.GR_T_LMPOP, _T.GR_T_BPOP, _T.GR_T_BLMOVE, _T.GR_T_BLMPOP)
_COUNT_MAX = 2 ** 32 - 1    # the request's count field; Redis pops at most the list anyway


def _mpop_end(num_keys: Any, keys: tuple, direction: Any, count: Any) -> int | None:
    """LMPOP/BLMPOP's end when their arguments take the typed form (numkeys naming the one or
    two keys given, LEFT/RIGHT, a count that is None or a positive int); else None."""
    if type(num_keys) is not int or num_keys != len(keys) or not 0 < num_keys < 3:
        return None
    if count is not None and (type(count) is not int or count < 1):
        return None
    try:
        return _ENDS.get(direction)
    except TypeError:                           # unhashable: the shared method's DataError
        return None


def _as_key(key: Any) -> Any:
    """A key as cffi may take it: bytes as given, anything else as redis-py encodes it (its
    DataError for a list, a bool, None...). cffi alone would take a list or tuple of small ints
    for a `const uint8_t *` and send their bytes as the key name."""
    return key if type(key) is bytes else encode(key)


def _blocking_pop(end: int, shared: Any) -> Any:
    """BLPOP (end LEFT) or BRPOP (RIGHT) typed over one or two keys (a list or tuple of them,
    or one key) and a number of seconds (None: forever); any other form is `shared`, the
    ListCommands method. Made by this factory so that each is one Python call."""
    def blocking_pop(self: "RingClient", keys: Any, timeout: Any = 0) -> tuple | None:
        kind = type(timeout)
        if kind is int:
            pop = _bpop_seconds                 # whole seconds: no float made on the way to C
        elif kind is float:
            pop = _bpop
        elif timeout is None:
            pop, timeout = _bpop_seconds, 0
        else:                                   # a timedelta, a text: the shared method
            return shared(self, keys, timeout)
        kind = type(keys)
        core = self._core
        try:
            if kind is list or kind is tuple:
                try:
                    first, second = keys        # two keys: the common form, one call straight away
                except ValueError:              # not two: one key (a None key is redis-py's DataError)
                    if len(keys) != 1:
                        return shared(self, keys, timeout)
                    first = _as_key(keys[0])
                    status = pop(core.pointer, end, timeout, first, len(first), _NULL, 0, core.result)
                else:
                    if type(first) is not bytes or type(second) is not bytes:
                        first, second = _as_key(first), _as_key(second)
                    status = pop(core.pointer, end, timeout, first, len(first), second, len(second), core.result)
            elif kind is bytes or kind is str:
                first = _as_key(keys)
                status = pop(core.pointer, end, timeout, first, len(first), _NULL, 0, core.result)
            else:
                return shared(self, keys, timeout)
        except OverflowError:                   # an int timeout past int64: sent as a double, as the server
            try:                                # reads it; past a double, the shared method (the server's
                timeout = float(timeout)        # error text)
            except OverflowError:
                return shared(self, keys, timeout)
            return blocking_pop(self, keys, timeout)
        if status:                              # another thread's session, a fork, or a failure
            return blocking_pop(self._elsewhere(status), keys, timeout)
        value = _loads(core.plain)
        if value is ...:                        # (key, value) comes as a tuple only from core.plain
            value = core.settle(status)
            return tuple(value) if type(value) is list else value
        return value
    blocking_pop.__name__ = blocking_pop.__qualname__ = shared.__name__
    blocking_pop.__doc__ = shared.__doc__
    return blocking_pop


# Serialises re-attaching after a fork; made anew in every child, so that a lock some other
# thread of the parent held at the fork cannot stall the child.
_fork_lock = threading.Lock()


def _new_fork_lock() -> None:
    global _fork_lock
    _fork_lock = threading.Lock()


os.register_at_fork(after_in_child=_new_fork_lock)


def _credential(value: str | bytes | None) -> bytes:
    if value is None:
        return b""
    return value if isinstance(value, bytes) else value.encode()


class RingClient(Commands):
    _reply_doorbell = -1      # an eventfd given to the server at attach (goblin_ring/asyncio.py)
    _thread = None            # a thread session's thread (another thread's close() must not free it)

    """A session over shared memory with a goblin-ring server on this machine.

    Threads: one RingClient may be shared by any number of threads, as redis.Redis is. The
    first thread that calls it owns its session; every other thread gets a session of its own
    on its first call (at most max_connections sessions in all, counting the first; beyond that
    ConnectionError, as redis-py's pool), kept for the thread's life and closed when the thread
    ends. So a blocking call (BLPOP) or a long reply stalls only its own thread, and
    per-session state (WATCH, MULTI, SELECT) stays with the thread that set it. The owner's call
    costs one compare in C (gr_client_claim) and one test of its status in Python.

    Fork: the client notes the process it was made in (C counts forks); the first call in a
    forked child attaches a fresh session for the child and never writes to the parent's rings
    or closes its session (the server sees the child as a new client); the parent keeps
    working. A pubsub() session is the exception: made before a fork, it raises
    ConnectionError in the child (its subscriptions are the parent's).

    close() closes every session of the client; call it when no thread is mid-call.

    cache_config (a CacheConfig, or redis-py's): a near-cache of read-only single-key replies
    kept fresh by CLIENT TRACKING over the ring (CachedRingClient below, client/cache.py)."""

    def __new__(cls, *args: Any, cache_config: Any = None, **kwargs: Any) -> "RingClient":
        if cache_config is not None and cls is RingClient:
            cls = CachedRingClient
        return super().__new__(cls)

    def __init__(self, name: str = "goblin", runtime_dir: str | os.PathLike | None = None,
                 ring_size: int = 0, timeout: float | None = None, spin_iterations: int = 20000,
                 client_name: str = "", max_connections: int | None = None,
                 username: str | None = None, password: str | None = None, cache_config: Any = None):
        self._options = dict(name=name, runtime_dir=runtime_dir, ring_size=ring_size, timeout=timeout,
                             spin_iterations=spin_iterations, client_name=client_name,
                             username=username, password=password)   # other sessions'
        if max_connections is not None and (type(max_connections) is not int or max_connections < 1):
            raise ValueError('"max_connections" must be a positive integer')
        self.max_connections = max_connections
        self._closed = True
        self._any_thread = False
        self._segments: list[_native.Segment] = []
        self._doorbell = -1
        self._core: _native.ClientCore | None = None
        self._lock = threading.Lock()                # guards making thread sessions
        self._threads = threading.local()            # .session: a thread's own, when not the owner
        self._thread_sessions: weakref.WeakSet = weakref.WeakSet()
        self._connect()
        self.session_id: int

    def _connect(self) -> None:
        """Attach a session: the control socket, the rings, the C client."""
        options = self._options
        directory = Path(options["runtime_dir"]) if options["runtime_dir"] else control.default_runtime_dir()
        path = control.socket_path(directory, options["name"])
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._sock.connect(str(path))
        except OSError as error:
            self._sock.close()
            raise ConnectionError(f"no goblin-ring server named {options['name']!r} at {path}: {error}") from error
        try:
            self._attach(options["ring_size"], options["client_name"], options["username"], options["password"])
        except OSError as error:                # the server died mid-attach (a reset, a broken pipe)
            self._release()
            raise ConnectionError(f"attach to goblin-ring server {options['name']!r} failed: {error}") from error
        except BaseException:
            self._release()
            raise
        self._closed = False
        self._core.set_wait(options["spin_iterations"], options["timeout"])

    def _attach(self, ring_size: int, client_name: str, username: str | None = None,
                password: str | None = None) -> None:
        """username/password: the ACL user the session logs in as (AUTH at attach, as redis.Redis
        takes them); a password alone is the default user's. A refusal raises AuthenticationError."""
        request = _native.encode_attach(
            _T.GR_T_ATTACH, protocol_version=control.PROTOCOL_VERSION,
            ring_capacity=ring_size, pid=os.getpid(), client_name=client_name.encode(),
            username=_credential(username), password=_credential(password))
        if len(control.frame(request)) > control.MAX_CONTROL_FRAME:   # the server would drop the socket
            raise DataError(f"the attach request is {len(request)} bytes, more than the control socket's "
                            f"{control.MAX_CONTROL_FRAME}: credentials that long can go by AUTH after attaching")
        if self._reply_doorbell >= 0:          # an event loop's client: the server writes it on reply
            socket.send_fds(self._sock, [control.frame(request)], [self._reply_doorbell])
        else:
            self._sock.sendall(control.frame(request))
        try:
            message, fds = control.receive_frame(self._sock, max_fds=1)
        except EOFError as error:
            raise ConnectionError("the server closed the control socket during attach") from error
        reply = _native.decode_attach(message)
        if reply["error_code"]:
            for fd in fds:
                os.close(fd)
            message = reply['error_message'].decode(errors='replace')
            if message.startswith("WRONGPASS"):
                raise AuthenticationError(message)
            raise ConnectionError(f"attach refused: {message}")
        if len(fds) != 1:
            raise ConnectionError("attach reply came without the doorbell descriptor")
        self._doorbell = fds[0]
        self.session_id = reply["session_id"]
        self.ring_size = reply["ring_capacity"]
        self.server_pid = reply["pid"]
        requests = _native.Segment(reply["request_ring_name"].decode())
        self._segments.append(requests)
        replies = _native.Segment(reply["reply_ring_name"].decode())
        self._segments.append(replies)
        # Both sides have mapped both segments now: unlink the names at once, so nothing stays
        # in /dev/shm whoever dies next. (The server also unlinks on the confirm, as a fallback.)
        requests.unlink()
        replies.unlink()
        self._core = _native.ClientCore(requests, replies, self._doorbell, self._sock.fileno())
        self._sock.sendall(control.frame(_native.encode_attach(_T.GR_T_ATTACH_CONFIRM,
                                                               session_id=self.session_id)))

    # ---- lifecycle ----

    def close(self) -> None:
        """Close this client's sessions (in a forked child: drop the parent's, untouched).
        Another thread's session is ended, not freed: its thread may be in a call on it (a
        BLPOP), which then returns ConnectionError; its memory goes when its thread ends."""
        for session in list(self._thread_sessions):
            if session._thread is threading.current_thread():
                session.close()
            else:
                session._end_from_another_thread()
        if not self._closed:
            self._closed = True
            if self._core is not None and self._core.pointer and _claim(self._core.pointer) == _FORKED:
                self._forsake()
            else:
                self._release()

    # ---- threads and fork ----

    def _elsewhere(self, status: int) -> "RingClient":
        """Where a call goes that this client's session answered with `status` before
        touching anything: this thread's own session (another thread owns this one), or this
        client re-attached (a forked child's first call). Any other status is a failure: raised."""
        if status == _OTHER_THREAD:
            session = getattr(self._threads, "session", None)
            return session if session is not None else self._new_thread_session()
        if status == _FORKED:
            self._attach_after_fork()
            return self
        self._core.settle(status)                # raises the failure the status names
        raise ConnectionError(f"client status {status}")

    def _new_thread_session(self) -> "RingClient":
        with self._lock:
            if self._closed:
                raise ConnectionError("the client is closed")
            if self.max_connections is not None and len(self._thread_sessions) + 1 >= self.max_connections:
                raise ConnectionError("Too many connections")
            session = RingClient(**self._options)
            session._thread = threading.current_thread()
            self._thread_sessions.add(session)
        self._threads.session = session         # dropped, and so closed, when the thread ends
        return session

    def _end_from_another_thread(self) -> None:
        """End this session at the server without freeing anything its own thread may be using:
        shutting the control socket makes the server drop the session and makes a wait in C
        (which watches the socket) return PEER_GONE."""
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _attach_after_fork(self) -> None:
        """In a forked child: forget the parent's sessions without a write to their rings, then
        attach a fresh one. Another thread of the child may have done it already."""
        with _fork_lock:
            core = self._core
            if core is None or not core.pointer or _claim(core.pointer) != _FORKED:
                return
            if self._any_thread:
                self._forsake()
                raise ConnectionError("this Pub/Sub session was made before a fork: it belongs to the parent")
            for session in list(self._thread_sessions):
                session._forsake()
            self._thread_sessions = weakref.WeakSet()
            self._threads = threading.local()
            self._lock = threading.Lock()
            self._forsake()
            self._connect()

    def _forsake(self) -> None:
        """Drop a session inherited through fork: this process's copies of its mappings and
        descriptors go; its rings are never written and the C client is not freed (another
        thread of the parent may have been mid-call in it). The parent's session lives on."""
        self._closed = True
        if self._core is not None:
            self._core.forsake()
        for segment in self._segments:
            segment.close()
        self._segments.clear()
        if self._doorbell >= 0:
            os.close(self._doorbell)
            self._doorbell = -1
        self._sock.close()

    def _release(self) -> None:
        if self._core is not None:
            self._core.close()             # kept, closed: a later call raises ConnectionError
        for segment in self._segments:
            segment.close()
        self._segments.clear()
        if self._doorbell >= 0:
            os.close(self._doorbell)
            self._doorbell = -1
        self._sock.close()

    def __enter__(self) -> "RingClient":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def __del__(self) -> None:  # pragma: no cover - best effort
        try:
            self.close()
        except Exception:  # noqa: BLE001
            pass

    def pubsub(self, ignore_subscribe_messages: bool = False) -> Any:
        """redis-py's PubSub on a ring session of its own (client/ring_pubsub.py)."""
        from .ring_pubsub import RingPubSub
        return RingPubSub(self, ignore_subscribe_messages=ignore_subscribe_messages)

    # PubSub's hooks (client/pubsub.py): a session like this one, a command sent unanswered.
    def _new_connection(self) -> "RingClient":
        options = dict(self._options)
        options.pop("cache_config", None)        # a Pub/Sub session caches nothing
        session = RingClient(**options)
        session._any_thread = True                 # PubSub keeps it to one thread at a time
        _T.gr_client_set_any_thread(session._core.pointer, 1)
        return session

    def _send_command(self, argv: tuple) -> None:
        core = self._live()
        core.check(core.send_argv(argv))

    @property
    def max_message(self) -> int:
        return self._live().max_message

    def _live(self) -> _native.ClientCore:
        """This thread's session's C client, claimed (for the calls that do not claim in C)."""
        core = self._core
        if self._closed or core is None or not core.pointer:
            raise ConnectionError("the client is closed")
        status = _claim(core.pointer)
        if status:
            return self._elsewhere(status)._live()
        if core.gone:
            raise ConnectionError("the server closed the session")
        return core

    # ---- execution ----

    def _call(self, function: Any, *args: Any) -> Any:
        """The one C call of a command: function(client, *args, result) sends the request,
        waits, and writes the reply into core.plain as the Python object it stands for, which
        one plain_loads builds. Ellipsis there means the reply is not there: core.settle
        raises the failure the status names (a closed client included: C answers
        GR_CLIENT_CLOSED) or reads the reply from the gr_result_t. The hottest plain forms
        below spell these three lines out themselves, to save a Python call each."""
        core = self._core
        status = function(core.pointer, *args, core.result)
        if status:                              # another thread's session, a fork, or a failure
            return self._elsewhere(status)._call(function, *args)
        value = _loads(core.plain)
        return core.settle(0) if value is ... else value

    def _execute(self, argv: tuple, convert=None) -> Any:
        """Every command method: its argv (bytes-like) packed into one buffer plus the
        lengths; C builds, validates and encodes the typed request (gr_client_call_argv)."""
        data = _join(argv)
        try:
            value = self._call(_call_argv, data, len(data), list(map(len, argv)), len(argv))
        except ProtocolError:
            if not any(type(a) is memoryview for a in argv):
                raise
            argv = tuple(map(encode, argv))     # a memoryview whose len() is not its byte count
            data = _join(argv)
            value = self._call(_call_argv, data, len(data), list(map(len, argv)), len(argv))
        return value if convert is None else convert(value)

    # The hot commands in their plain forms skip argv: typed in C from typed arguments
    # (gr_client_ping, _key_int, _key_value, _key_range, _pop_keys, _move), sending exactly the
    # request C builds from their argv. Any other form (another spelling of LEFT, a timedelta,
    # three keys, a number beyond its field) is the shared method, where C builds the request
    # from argv and the server words any error.

    def ping(self, message: Any = None) -> Any:
        if message is not None:
            return super().ping(message)
        core = self._core
        status = _ping(core.pointer, core.result)
        if status:
            return self._elsewhere(status).ping()
        value = _loads(core.plain)
        return (core.settle(status) if value is ... else value) == b"PONG"

    def llen(self, name: Any) -> int:
        key = name if type(name) is bytes else encode(name)
        core = self._core
        status = _key_int(core.pointer, _LLEN, key, len(key), 0, core.result)
        if status:
            return self._elsewhere(status).llen(name)
        value = _loads(core.plain)
        return core.settle(status) if value is ... else value

    def lindex(self, name: Any, index: int) -> bytes | None:
        key = name if type(name) is bytes else encode(name)
        if type(index) is not int:
            return super().lindex(name, index)
        try:
            return self._call(_key_int, _LINDEX, key, len(key), index)
        except OverflowError:                   # beyond int64: the server's error text
            return super().lindex(name, index)

    def lrange(self, name: Any, start: int, end: int) -> list:
        if type(start) is int and type(end) is int:
            key = name if type(name) is bytes else encode(name)
            core = self._core
            try:
                status = _key_range(core.pointer, _LRANGE, key, len(key), start, end, core.result)
            except OverflowError:               # beyond int64: the server's error text
                return super().lrange(name, start, end)
            if status:
                return self._elsewhere(status).lrange(name, start, end)
            value = _loads(core.plain)
            return core.settle(status) if value is ... else value
        return super().lrange(name, start, end)

    def ltrim(self, name: Any, start: int, end: int) -> bool:
        if type(start) is not int or type(end) is not int:
            return super().ltrim(name, start, end)
        key = name if type(name) is bytes else encode(name)
        try:
            return self._call(_key_range, _LTRIM, key, len(key), start, end) == b"OK"
        except OverflowError:
            return super().ltrim(name, start, end)

    def get(self, name: Any) -> bytes | None:
        key = name if type(name) is bytes else encode(name)
        return self._call(_key_value, _GET, 0, 0, 0, key, len(key), _NULL, 0)

    def set(self, name: Any, value: Any, *args: Any, **options: Any) -> Any:
        if args or any(v is not None and v is not False for v in options.values()):   # ex=0 is an option
            return super().set(name, value, *args, **options)
        key = name if type(name) is bytes else encode(name)
        data = value if type(value) is bytes else encode(value)
        return self._call(_key_value, _SET, 0, 0, 0, key, len(key), data, len(data)) == b"OK" or None

    def lset(self, name: Any, index: int, value: Any) -> bool:
        if type(index) is not int or not -2 ** 63 <= index < 2 ** 63:
            return super().lset(name, index, value)
        key = name if type(name) is bytes else encode(name)
        data = value if type(value) is bytes else encode(value)
        return self._call(_key_value, _LSET, 0, 0, index, key, len(key), data, len(data)) == b"OK"

    def lpop(self, name: Any, count: int | None = None) -> Any:
        if count is not None:
            return super().lpop(name, count)
        key = name if type(name) is bytes else encode(name)
        core = self._core
        status = _key_value(core.pointer, _POP, LEFT, 0, 0, key, len(key), _NULL, 0, core.result)
        if status:
            return self._elsewhere(status).lpop(name)
        value = _loads(core.plain)
        return core.settle(status) if value is ... else value

    def rpop(self, name: Any, count: int | None = None) -> Any:
        if count is not None:
            return super().rpop(name, count)
        key = name if type(name) is bytes else encode(name)
        core = self._core
        status = _key_value(core.pointer, _POP, RIGHT, 0, 0, key, len(key), _NULL, 0, core.result)
        if status:
            return self._elsewhere(status).rpop(name)
        value = _loads(core.plain)
        return core.settle(status) if value is ... else value

    def _push(self, end: int, name: Any, value: Any) -> int:
        key = name if type(name) is bytes else encode(name)
        data = value if type(value) is bytes else encode(value)
        return self._call(_key_value, _PUSH, end, 0, 0, key, len(key), data, len(data))

    def lpush(self, name: Any, *values: Any) -> int:
        return self._push(LEFT, name, values[0]) if len(values) == 1 else super().lpush(name, *values)

    def rpush(self, name: Any, *values: Any) -> int:
        return self._push(RIGHT, name, values[0]) if len(values) == 1 else super().rpush(name, *values)

    def lmove(self, first_list: Any, second_list: Any, src: str = "LEFT", dest: str = "RIGHT") -> bytes | None:
        return self._move(_LMOVE, first_list, second_list, src, dest, 0.0, ListCommands.lmove,
                          (first_list, second_list, src, dest))

    def rpoplpush(self, src: Any, dst: Any) -> bytes | None:
        return self._move(_LMOVE, src, dst, "RIGHT", "LEFT", 0.0, ListCommands.rpoplpush, (src, dst))

    def blmove(self, first_list: Any, second_list: Any, timeout: Any, src: str = "LEFT",
               dest: str = "RIGHT") -> bytes | None:
        return self._move(_BLMOVE, first_list, second_list, src, dest, timeout, ListCommands.blmove,
                          (first_list, second_list, timeout, src, dest))

    def brpoplpush(self, src: Any, dst: Any, timeout: Any = 0) -> bytes | None:
        return self._move(_BLMOVE, src, dst, "RIGHT", "LEFT", timeout, ListCommands.brpoplpush, (src, dst, timeout))

    def _move(self, template: int, source: Any, destination: Any, src: Any, dest: Any, timeout: Any,
              shared: Any, arguments: tuple) -> Any:
        """LMOVE and BLMOVE typed (RPOPLPUSH and BRPOPLPUSH are their RIGHT LEFT): the ends
        spelled LEFT/RIGHT (or lower case), the timeout a number; else the shared method."""
        try:
            from_end, to_end = _ENDS.get(src), _ENDS.get(dest)
        except TypeError:                       # unhashable: the shared method's DataError
            from_end = None
        if from_end is None or to_end is None:
            return shared(self, *arguments)
        kind = type(timeout)
        if not (kind is float or kind is int):
            if timeout is not None:             # a timedelta, a text: the shared method
                return shared(self, *arguments)
            timeout = 0                         # None: forever, as 0
        key = source if type(source) is bytes else encode(source)
        other = destination if type(destination) is bytes else encode(destination)
        core = self._core
        try:
            status = _move(core.pointer, template, from_end, to_end, timeout, key, len(key), other, len(other),
                           core.result)
        except OverflowError:                   # a timeout beyond a double: the server's error text
            return shared(self, *arguments)
        if status:
            return self._elsewhere(status)._move(template, source, destination, src, dest, timeout, shared,
                                                 arguments)
        value = _loads(core.plain)
        return core.settle(status) if value is ... else value

    blpop = _blocking_pop(LEFT, ListCommands.blpop)
    brpop = _blocking_pop(RIGHT, ListCommands.brpop)

    def lmpop(self, num_keys: int, *args: Any, direction: str, count: int | None = 1) -> list | None:
        # The hot form (LMPOP is a hot read of a work queue) checked in the fewest steps: a
        # direction and a positive count of the plain types, num_keys naming the one or two keys given;
        # another spelling of LEFT/RIGHT (KeyError) or keys that num_keys does not name
        # (ValueError) is the shared method, and any other form _lmpop_other's checks.
        kind = type(direction)
        if (kind is str or kind is bytes) and type(count) is int and 0 < count and type(num_keys) is int:
            core = self._core
            try:
                end = _ENDS[direction]
                if num_keys == 2:
                    first, second = args
                    if type(first) is not bytes or type(second) is not bytes:
                        first, second = _as_key(first), _as_key(second)
                    status = _lmpop(core.pointer, end, count, first, len(first), second, len(second), core.result)
                elif num_keys == 1:
                    first, = args
                    first = _as_key(first)
                    status = _lmpop(core.pointer, end, count, first, len(first), _NULL, 0, core.result)
                else:
                    return super().lmpop(num_keys, *args, direction=direction, count=count)
            except (KeyError, ValueError):
                return super().lmpop(num_keys, *args, direction=direction, count=count)
            except OverflowError:               # a count past the request's field: _lmpop_other clamps it
                return self._lmpop_other(num_keys, args, direction, count)
            if status:
                return self._elsewhere(status).lmpop(num_keys, *args, direction=direction, count=count)
            value = _loads(core.plain)
            return core.settle(status) if value is ... else value
        return self._lmpop_other(num_keys, args, direction, count)

    def _lmpop_other(self, num_keys: int, args: tuple, direction: Any, count: Any) -> list | None:
        """LMPOP in a form lmpop's first test does not take (count None or past the request's
        field, a bool, a direction of another type): typed when _mpop_end says so, else the
        shared method."""
        kind = type(direction)
        end = _mpop_end(num_keys, args, direction, count) if kind is str or kind is bytes else None
        if end is None:
            return super().lmpop(num_keys, *args, direction=direction, count=count)
        return self._mpop_typed(_LMPOP, end, count, 0.0, args)

    def _mpop_typed(self, template: int, end: int, count: int | None, seconds: Any, keys: tuple) -> list | None:
        """LMPOP or BLMPOP typed, in a form _mpop_end took (one or two keys, a count None or
        positive, clamped to the request's field); the keys encoded as redis-py does."""
        typed_count = 1 if count is None else min(count, _COUNT_MAX)
        first = _as_key(keys[0])
        core = self._core
        if len(keys) == 1:
            status = _pop_keys(core.pointer, template, end, typed_count, seconds, first, len(first), _NULL, 0,
                               core.result)
        else:
            second = _as_key(keys[1])
            status = _pop_keys(core.pointer, template, end, typed_count, seconds, first, len(first), second,
                               len(second), core.result)
        if status:
            return self._elsewhere(status)._mpop_typed(template, end, count, seconds, keys)
        value = _loads(core.plain)
        return core.settle(status) if value is ... else value

    def blmpop(self, timeout: Any, numkeys: int, *args: Any, direction: str, count: int | None = 1) -> list | None:
        end = _mpop_end(numkeys, args, direction, count)
        kind = type(timeout)
        if end is None or not (kind is float or kind is int or timeout is None):
            return super().blmpop(timeout, numkeys, *args, direction=direction, count=count)
        try:
            return self._mpop_typed(_BLMPOP, end, count, 0 if timeout is None else timeout, args)
        except OverflowError:                   # a timeout beyond a double: the server's error text
            return super().blmpop(timeout, numkeys, *args, direction=direction, count=count)

    # The sorted-set commands a counter or a leaderboard sends one at a time (a replayed edit
    # stream is a ZINCRBY per event): their argv packed here, with no shared-method frames.

    def zincrby(self, name: Any, amount: float, value: Any) -> float:
        key = name if type(name) is bytes else encode(name)
        member = value if type(value) is bytes else encode(value)
        step = encode(amount)
        data = b"ZINCRBY" + key + step + member
        core = self._core
        status = _call_argv(core.pointer, data, len(data), [7, len(key), len(step), len(member)], 4, core.result)
        if status:
            return self._elsewhere(status).zincrby(name, amount, value)
        reply = _loads(core.plain)
        return float(core.settle(status) if reply is ... else reply)

    def zscore(self, name: Any, value: Any) -> float | None:
        key = name if type(name) is bytes else encode(name)
        member = value if type(value) is bytes else encode(value)
        data = b"ZSCORE" + key + member
        core = self._core
        status = _call_argv(core.pointer, data, len(data), [6, len(key), len(member)], 3, core.result)
        if status:
            return self._elsewhere(status).zscore(name, value)
        reply = _loads(core.plain)
        if reply is ...:
            reply = core.settle(status)
        return None if reply is None else float(reply)

    # ---- batches: one C call ----

    def lindex_many(self, name: Any, indexes: Sequence[int]) -> list:
        """LINDEX at every index (a sequence or numpy array), pipelined in one C call."""
        return self._live().lindex_many(encode(name), indexes)

    def rpush_many(self, name: Any, values: Sequence[bytes], per_message: int = 128) -> int:
        """RPUSH every value (a sequence of bytes or a numpy 'S' array) in one C call,
        per_message values to a request; returns the list's final length."""
        return self._live().push_many(RIGHT, encode(name), values, per_message)

    def lpush_many(self, name: Any, values: Sequence[bytes], per_message: int = 128) -> int:
        return self._live().push_many(LEFT, encode(name), values, per_message)

    def hset_many(self, name: Any, fields: Sequence[bytes], values: Sequence[bytes], per_message: int = 128) -> int:
        """HSET field i to value i for every pair (sequences of bytes or numpy 'S' arrays) in one C
        call, per_message pairs to a request; returns the fields added."""
        return self._live().hset_many(encode(name), fields, values, per_message)

    def xadd_many(self, name: Any, fields_list: Sequence, ids: Sequence | None = None) -> list:
        """XADD one entry per item of fields_list (dicts, or sequences of (field, value) pairs of
        bytes/str) in one C call, each at "*" (or at ids[i]); the IDs added, as bytes."""
        return self._live().xadd_many(encode(name), fields_list, ids)

    def xack_many(self, name: Any, groupname: Any, ids: Sequence, per_message: int = 128) -> int:
        """XACK every ID (a sequence of bytes/str, or a numpy 'S' array) in one C call, per_message
        IDs to a request; returns how many were acknowledged."""
        return self._live().xack_many(encode(name), encode(groupname), ids, per_message)

    def hmget_many(self, name: Any, fields: Sequence[bytes], per_message: int = 128) -> list:
        """HMGET every field (a sequence of bytes or a numpy 'S' array) in one C call: bytes or
        None per field."""
        return self._live().hmget_many(encode(name), fields, per_message)

    def zadd_many(self, name: Any, members: Sequence[bytes], scores: Any, per_message: int = 128,
                  nx: bool = False, xx: bool = False, gt: bool = False, lt: bool = False, ch: bool = False) -> int:
        """ZADD member i with score i for every pair (members: a sequence of bytes/str or a numpy
        'S' array; scores: a sequence or numpy array of floats) in one C call, per_message pairs
        to a request; returns the members added (changed, with ch=True)."""
        if nx and xx:
            raise DataError("ZADD allows either 'nx' or 'xx', not both")
        if gt and lt:
            raise DataError("ZADD allows either 'gt' or 'lt', not both")
        if nx and (gt or lt):
            raise DataError("Only one of 'nx', 'lt', or 'gr' may be defined.")
        flags = ((_T.GR_ZADD_NX if nx else 0) | (_T.GR_ZADD_XX if xx else 0) | (_T.GR_ZADD_GT if gt else 0)
                 | (_T.GR_ZADD_LT if lt else 0) | (_T.GR_ZADD_CH if ch else 0))
        return self._live().zadd_many(encode(name), members, scores, per_message, flags)

    def zscore_many(self, name: Any, members: Sequence[bytes], per_message: int = 128) -> Any:
        """ZSCORE of every member (a sequence of bytes/str or a numpy 'S' array) in one C call,
        as ZMSCORE requests of per_message members: a numpy float64 array, NaN where the member
        (or the key) is missing."""
        return self._live().zscore_many(encode(name), members, per_message)

    def zrange_arrays(self, name: Any, start: int, end: int, desc: bool = False) -> tuple:
        """ZRANGE name start end WITHSCORES (REV with desc=True) in one C call: (members, a list
        of bytes; scores, a numpy float64 array of the same length)."""
        if type(start) is not int or type(end) is not int:
            raise DataError("zrange_arrays takes integer ranks")
        if not -2 ** 63 <= start < 2 ** 63 or not -2 ** 63 <= end < 2 ** 63:
            raise DataError("value is out of range")
        return self._live().zrange_arrays(encode(name), start, end, desc)

    def armset_many(self, name: Any, indexes: Any, values: Any, per_message: int = 256) -> int:
        """ARMSET index i to value i for every pair (a numpy integer column or any sequence of
        indexes; bytes or a numpy 'S' array of values) in one C call; the slots that were empty."""
        return self._live().armset_many(encode(name), indexes, values, per_message)

    def armget_many(self, name: Any, indexes: Any, per_message: int = 256) -> list:
        """ARMGET every index (a numpy integer column or any sequence) in one C call: bytes or None each."""
        return self._live().armget_many(encode(name), indexes, per_message)

    def pipeline(self, transaction: bool = False) -> "RingPipeline":
        """Queue commands and send them with up to a full ring in flight. transaction=True
        wraps them in MULTI/EXEC: the server runs them with nothing in between, and a key
        WATCHed before (client.watch or the pipeline's watch) and touched since makes
        execute() raise WatchError, as redis-py does."""
        return RingPipeline(self, transaction)


_PACKED_HEADER = struct.Struct("<HBBqIi")   # template, end, flag, a, key length, value length (-1: none)
_pack_header = _PACKED_HEADER.pack
# a packed entry's Redis command word, by (template, end, flag), for when the pipeline turns general
_PACKED_WORDS = {(_PING, 0, 0): b"PING", (_LLEN, 0, 0): b"LLEN", (_LINDEX, 0, 0): b"LINDEX", (_LSET, 0, 0): b"LSET",
                 (_PUSH, LEFT, 0): b"LPUSH", (_PUSH, RIGHT, 0): b"RPUSH", (_PUSH, LEFT, 1): b"LPUSHX",
                 (_PUSH, RIGHT, 1): b"RPUSHX", (_POP, LEFT, 0): b"LPOP", (_POP, RIGHT, 0): b"RPOP"}


_AT_ONCE = (b"WATCH", b"UNWATCH")


def _converted(queue: list, values: list, raise_on_error: bool) -> list:
    """The replies of queue's commands, each through its conversion (errors kept as they are)."""
    converted = []
    for (_argv, convert), value in zip(queue, values):
        if convert is not None and not isinstance(value, Exception):
            value = convert(value)
        converted.append(value)
    return raise_first_error(converted) if raise_on_error else converted


class RingPipeline(Commands):
    """Commands queued, then sent with up to a full ring in flight; execute() returns the
    replies in order (a command's error is raised after all replies are read, or returned
    in place with raise_on_error=False, as in redis-py).

    While a pipeline holds only the hot scalar commands (LLEN, LINDEX, LSET, single-value
    pushes, count-less pops) they are packed into one buffer as they are queued and executed
    by one C call (gr_client_execute_packed); the first other command turns the pipeline into
    the general path (one cffi call per command, its argv built in C as for RingClient),
    order kept."""

    def __init__(self, client: RingClient, transaction: bool = False):
        self._client = client
        self._transaction = transaction
        self._queue: list[tuple] = []        # general entries: (argv, convert)
        self._packed = bytearray()            # hot commands while _queue is empty
        self._packed_converts: list = []
        self._last_name: Any = None
        self._last_key = b""

    def _execute(self, argv: tuple, convert=None) -> Any:
        if argv[0] in _AT_ONCE:                  # WATCH/UNWATCH run now, as in redis-py's pipeline
            return self._client._execute(argv, convert)
        if self._packed_converts:
            self._queue = self._unpack()
        self._queue.append((argv, convert))
        return self

    def _pack(self, template: int, end: int, flag: int, a: Any, name: Any, value: Any, convert: Any) -> bool:
        if self._queue or type(a) is not int:
            return False
        key = encode(name)
        value = None if value is None else encode(value)
        try:
            header = _pack_header(template, end, flag, a, len(key), -1 if value is None else len(value))
        except struct.error:
            return False                      # an index beyond int64: the general path words the error
        packed = self._packed
        packed += header
        packed += key
        if value is not None:
            packed += value
        self._packed_converts.append(convert)
        return True

    def _unpack(self) -> list[tuple]:
        """The packed entries as general ones (argv), in order."""
        entries, at, packed = [], 0, bytes(self._packed)
        for convert in self._packed_converts:
            template, end, flag, a, key_length, value_length = _PACKED_HEADER.unpack_from(packed, at)
            at += _PACKED_HEADER.size
            argv = [_PACKED_WORDS[(template, end, flag)], packed[at:at + key_length]]
            at += key_length
            if template in (_LINDEX, _LSET):
                argv.append(b"%d" % a)
            if value_length >= 0:
                argv.append(packed[at:at + value_length])
                at += value_length
            entries.append((tuple(argv), convert))
        self._packed.clear()
        self._packed_converts.clear()
        return entries

    # the hot commands
    def lindex(self, name: Any, index: int) -> "RingPipeline":
        # _pack inlined, and the last key's encoding reused: this is the per-call cost of the
        # pipelined hot path (a pipeline often reads one list many times)
        if name is self._last_name:
            key = self._last_key
        else:
            kind = type(name)
            key = name if kind is bytes else name.encode() if kind is str else encode(name)
            self._last_name, self._last_key = name, key
        if not self._queue and type(index) is int:
            try:
                self._packed += _pack_header(_LINDEX, 0, 0, index, len(key), -1) + key
            except struct.error:          # an index beyond int64: the general path words the error
                return super().lindex(name, index)
            self._packed_converts.append(None)
            return self
        return super().lindex(name, index)

    def llen(self, name: Any) -> "RingPipeline":
        return self if self._pack(_LLEN, 0, 0, 0, name, None, None) else super().llen(name)

    def lset(self, name: Any, index: int, value: Any) -> "RingPipeline":
        return self if self._pack(_LSET, 0, 0, index, name, value, bool_ok) else super().lset(name, index, value)

    def lpush(self, name: Any, *values: Any) -> "RingPipeline":
        if len(values) == 1 and self._pack(_PUSH, LEFT, 0, 0, name, values[0], None):
            return self
        return super().lpush(name, *values)

    def rpush(self, name: Any, *values: Any) -> "RingPipeline":
        if len(values) == 1 and self._pack(_PUSH, RIGHT, 0, 0, name, values[0], None):
            return self
        return super().rpush(name, *values)

    def lpushx(self, name: Any, *values: Any) -> "RingPipeline":
        if len(values) == 1 and self._pack(_PUSH, LEFT, 1, 0, name, values[0], None):
            return self
        return super().lpushx(name, *values)

    def rpushx(self, name: Any, *values: Any) -> "RingPipeline":
        if len(values) == 1 and self._pack(_PUSH, RIGHT, 1, 0, name, values[0], None):
            return self
        return super().rpushx(name, *values)

    def lpop(self, name: Any, count: int | None = None) -> "RingPipeline":
        if count is None and self._pack(_POP, LEFT, 0, 0, name, None, None):
            return self
        return super().lpop(name, count)

    def rpop(self, name: Any, count: int | None = None) -> "RingPipeline":
        if count is None and self._pack(_POP, RIGHT, 0, 0, name, None, None):
            return self
        return super().rpop(name, count)

    def __enter__(self) -> "RingPipeline":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self._queue.clear()
        self._packed.clear()
        self._packed_converts.clear()

    def __len__(self) -> int:
        return len(self._queue) + len(self._packed_converts)


    def _send_all(self, core: Any, argvs: list) -> list:
        """Send every argv with up to a full ring in flight; every reply, in order."""
        results: list = []
        full = _native.lib.GR_CLIENT_RING_FULL
        for argv in argvs:
            while True:
                status = core.send_argv(argv)
                if status != full:
                    break
                results.append(core.receive())   # make room: the server waits for us to read
            core.check(status)
        while core.in_flight():
            results.append(core.receive())
        return results

    def _execute_transaction(self, raise_on_error: bool) -> list:
        if self._packed_converts:
            self._queue = self._unpack()
        queue, self._queue = self._queue, []
        replies = self._send_all(self._client._live(), [(b"MULTI",), *(argv for argv, _ in queue), (b"EXEC",)])
        queued, executed = replies[:-1], replies[-1]
        if isinstance(executed, Exception):      # EXECABORT: say which command was refused
            first = next((value for value in queued if isinstance(value, Exception)), None)
            raise error_from_reply(f"{executed} ({first})" if first is not None else str(executed),
                                   getattr(executed, "code", None))
        if executed is None:
            raise WatchError("Watched variable changed.")
        return _converted(queue, executed, raise_on_error)

    def execute(self, raise_on_error: bool = True) -> list:
        if self._transaction:
            return self._execute_transaction(raise_on_error)
        core = self._client._live()
        if self._packed_converts:
            packed, converts = bytes(self._packed), self._packed_converts
            self._packed.clear()
            self._packed_converts = []
            converted = core.execute_packed(packed, converts)
            return raise_first_error(converted) if raise_on_error else converted
        queue, self._queue = self._queue, []
        return _converted(queue, self._send_all(core, [argv for argv, _ in queue]), raise_on_error)


_CACHE_KEYS, _CACHE_FLUSH = _T.GR_CLIENT_CACHE_KEYS, _T.GR_CLIENT_CACHE_FLUSH
_NearCache = _native.near_cache.NearCache
_MISS, _ELSEWHERE = _native.near_cache.MISS, _native.near_cache.ELSEWHERE
_DETACHED, _BYPASS, _NAME = _native.near_cache.DETACHED, _native.near_cache.BYPASS, _native.near_cache.NAME
_ADDRESS = lambda pointer: int(_native.ffi.cast("uintptr_t", pointer))   # noqa: E731
_CACHE_CHECK = _ADDRESS(_native.ffi.addressof(_T, "gr_client_cache_check"))
_CACHE_TAKE = _ADDRESS(_native.ffi.addressof(_T, "gr_client_cache_take"))
_B_GET, _B_LLEN, _B_LINDEX, _B_LRANGE, _B_EXISTS = b"GET", b"LLEN", b"LINDEX", b"LRANGE", b"EXISTS"


def _cache_fallback(owner: Any, name: Any, status: int) -> bytes | None:
    """NearCache.get's way out (native/python/near_cache.c). The cache holds its client weakly
    (the client holds it, and `get`): a client dropped by everyone is closed by its finalizer,
    so a `get` method still held then answers as after close()."""
    client = owner()
    if client is None:
        raise ConnectionError("the client is closed")
    return client._get_slow(name, status)


class CachedRingClient(RingClient):
    """A RingClient with a near-cache (RingClient(cache_config=...) makes one). Its session
    turns CLIENT TRACKING on when it attaches; the replies of the allow-listed read-only
    single-key commands (client/cache.py) are kept in C (native/python/near_cache.c), and a
    cached one is answered only after gr_client_cache_check, called from there in the same
    call, found the reply ring with no invalidation waiting and its epoch unmoved (else the
    invalidations are applied first). `get` is the cache's own C method, bound on the
    instance: a hit runs no Python code; a miss, or a call that belongs elsewhere, comes back
    to _get_slow. Every session has its own cache: another thread's calls go to that thread's
    session and cache, and a forked child's first call attaches a fresh session (and cache)
    before anything is answered. `cache` is this session's NearCache: `cache.stats` (hits,
    misses, invalidations, flushes), `cache.clear()`, `len(cache)`, `cache.max_size`."""

    def __init__(self, *args: Any, cache_config: Any = None, **kwargs: Any):
        self._cache_config = CacheConfig.of(cache_config)
        self._in_multi = False                  # MULTI sent by hand, no EXEC/DISCARD yet
        super().__init__(*args, **kwargs)
        self._options["cache_config"] = self._cache_config   # thread sessions get caches of their own

    def _connect(self) -> None:
        super()._connect()
        core = self._core
        # a new session (a fork's child too) starts empty; the C client detaches it before it goes
        self.cache = core.cache = _NearCache(_ADDRESS(core.pointer), _CACHE_CHECK, _CACHE_TAKE, _CACHE_KEYS,
                                             _CACHE_FLUSH, _OTHER_THREAD, self._cache_config.max_size,
                                             weakref.ref(self), _cache_fallback)
        self.get = self.cache.get               # the hit path: one C call, no Python frame
        self._in_multi = False
        RingClient._execute(self, (b"CLIENT", b"TRACKING", b"ON"))

    def _get_slow(self, name: Any, status: int) -> bytes | None:
        """NearCache.get's way out when it cannot answer (status: native/python/near_cache.c)."""
        if status == 0:                         # a miss: the server's reply, kept
            key = name if type(name) is bytes else name.encode()
            value = self._call(_key_value, _GET, 0, 0, 0, key, len(key), _NULL, 0)
            self.cache.store(name, key, value)
            return value
        if status == _NAME:                     # not bytes or str: its bytes, then as usual
            return self.get(encode(name))
        if status == _BYPASS:                   # a MULTI typed by hand: the server queues it
            return RingClient.get(self, name)
        if status == _DETACHED:                 # this cache's session is gone: closed, or re-attached
            if self._closed or not self.cache.attached:
                raise ConnectionError("the client is closed")
            return self.cache.get(name)
        return self._elsewhere(status).get(name)

    def _through_cache(self, argv: tuple, fetch: Any) -> Any:
        if self._in_multi:                      # a MULTI typed by hand: the server queues it
            return fetch(), 0
        cache = self.cache
        lookup = argv[1] if argv[0] == _B_GET and len(argv) == 2 else argv   # GET shares get()'s entries
        value = cache.lookup(lookup)
        if value is _MISS:
            value = fetch()
            cache.store(lookup, argv[1], value)
            return value, 0
        if value is _ELSEWHERE:
            return None, (cache.status if cache.attached else _T.GR_CLIENT_CLOSED)
        return value, 0

    def llen(self, name: Any) -> int:
        key = name if type(name) is bytes else encode(name)
        value, status = self._through_cache((_B_LLEN, key), lambda: RingClient.llen(self, name))
        return self._elsewhere(status).llen(name) if status else value

    def lindex(self, name: Any, index: int) -> bytes | None:
        if type(index) is not int:
            return RingClient.lindex(self, name, index)
        key = name if type(name) is bytes else encode(name)
        value, status = self._through_cache((_B_LINDEX, key, str(index).encode()),
                                            lambda: RingClient.lindex(self, name, index))
        return self._elsewhere(status).lindex(name, index) if status else value

    def lrange(self, name: Any, start: int, end: int) -> list:
        if type(start) is not int or type(end) is not int:
            return RingClient.lrange(self, name, start, end)
        key = name if type(name) is bytes else encode(name)
        value, status = self._through_cache((_B_LRANGE, key, str(start).encode(), str(end).encode()),
                                            lambda: RingClient.lrange(self, name, start, end))
        return self._elsewhere(status).lrange(name, start, end) if status else value

    def _execute(self, argv: tuple, convert: Any = None) -> Any:
        command = argv[0]
        if type(command) is bytes and len(command) in (4, 5, 7):
            word = command.upper()
            if word == b"MULTI":
                value = RingClient._execute(self, argv, convert)
                self._in_multi = self.cache.bypass = True
                return value
            if word in (b"EXEC", b"DISCARD", b"RESET"):
                self._in_multi = self.cache.bypass = False
        if (len(argv) > 1 and type(command) is bytes and command.upper() in ALLOWED_COMMANDS
                and all(type(a) is bytes for a in argv) and (len(argv) == 2 or command.upper() != _B_EXISTS)):
            argv = (command.upper(),) + tuple(argv[1:])
            value, status = self._through_cache(argv, lambda: RingClient._execute(self, argv))
            if status:
                return self._elsewhere(status)._execute(argv, convert)
            return value if convert is None else convert(value)
        return RingClient._execute(self, argv, convert)
