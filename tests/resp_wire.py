"""resp_wire.py — the one raw-RESP harness the tests share, for asserting the exact bytes a
server sends (where a client library would hide them).

raw_connection() opens a TCP connection (TCP_NODELAY, a timeout, optionally from a given
source address) wrapped in a RawConnection, which keeps the bytes it has read past one reply
for the next read, so replies can be read one frame at a time:

    with raw_connection(goblin.port) as conn:
        assert conn.request("GET", "missing") == b"$-1\\r\\n"
        conn.sendall(b"PING\\r\\nPING\\r\\n")                 # inline commands, pipelines
        assert conn.read_reply() + conn.read_reply() == b"+PONG\\r\\n" * 2

read_reply() parses one RESP2 or RESP3 frame to its end (nested aggregates, attributes,
null bulks and arrays included); read_exactly, read_until and read_until_closed read by
count, by ending and to EOF. Every read blocks on the socket's timeout: no sleeps.
"""

from __future__ import annotations

import socket

TIMEOUT = 10.0

_LINE_TYPES = b"+-:_,#("      # one line: simple string, error, integer, null, double, boolean, big number
_BULK_TYPES = b"$!="          # a length line, then that many bytes and CRLF (-1: null, nothing follows)
_AGGREGATE_TYPES = b"*~>"     # a count line, then that many frames (-1: null array)
_PAIR_TYPES = b"%|"           # a count line, then twice that many frames (| is an attribute)


def encode_command(*args) -> bytes:
    """A command as the RESP multibulk a client sends; str and int arguments become bytes."""
    out = [b"*%d\r\n" % len(args)]
    for arg in args:
        arg = arg if isinstance(arg, bytes) else str(arg).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(arg), arg))
    return b"".join(out)


def frame_end(data: bytes, start: int = 0) -> int | None:
    """The index just past the RESP frame that starts at data[start], or None while the frame
    is incomplete. Raises ValueError on bytes that are not RESP."""
    line_end = data.find(b"\r\n", start)
    if line_end < 0:
        return None
    kind, header = data[start:start + 1], data[start + 1:line_end]
    after_line = line_end + 2
    if kind and kind in _LINE_TYPES:
        return after_line
    if kind and kind in _BULK_TYPES:
        length = int(header)
        if length < 0:
            return after_line
        end = after_line + length + 2
        return end if len(data) >= end else None
    if kind and kind in _AGGREGATE_TYPES + _PAIR_TYPES:
        count = int(header)
        frames = count * 2 if kind in _PAIR_TYPES else max(count, 0)
        position = after_line
        for _ in range(frames):
            position = frame_end(data, position)
            if position is None:
                return None
        if kind == b"|":   # an attribute comes before the reply it annotates
            return frame_end(data, position)
        return position
    raise ValueError(f"not a RESP frame at byte {start}: {data[start:start + 40]!r}")


class RawConnection:
    """A socket plus the bytes read from it that no read has handed out yet. Anything not
    defined here (sendall, settimeout, getsockname, close, ...) is the socket's."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.pending = b""

    def __getattr__(self, name):
        return getattr(self.sock, name)

    def __enter__(self) -> "RawConnection":
        return self

    def __exit__(self, *exc) -> None:
        self.sock.close()

    def _fill(self) -> bool:
        chunk = self.sock.recv(65536)
        self.pending += chunk
        return bool(chunk)

    def _take(self, count: int) -> bytes:
        data, self.pending = self.pending[:count], self.pending[count:]
        return data

    def recv(self, size: int) -> bytes:
        """As socket.recv, pending bytes first: b"" means the server closed the connection."""
        if self.pending:
            return self._take(size)
        return self.sock.recv(size)

    def read_reply(self) -> bytes:
        """The bytes of the next whole reply frame. AssertionError if the server closes first."""
        while (end := frame_end(self.pending)) is None:
            assert self._fill(), f"closed before a whole reply; got {self.pending!r}"
        return self._take(end)

    def request(self, *args) -> bytes:
        """Send one command as a multibulk and return its whole reply's bytes."""
        self.sock.sendall(encode_command(*args))
        return self.read_reply()

    def read_exactly(self, count: int) -> bytes:
        """count bytes, or fewer if the server closes first (so a comparison shows what came)."""
        while len(self.pending) < count and self._fill():
            pass
        return self._take(count)

    def read_until(self, ending: bytes) -> bytes:
        """Everything up to and including the first `ending`, or all until the server closes."""
        while (index := self.pending.find(ending)) < 0 and self._fill():
            pass
        return self._take(index + len(ending) if index >= 0 else len(self.pending))

    def read_until_closed(self) -> bytes:
        while self._fill():
            pass
        return self._take(len(self.pending))


def raw_connection(port: int, host: str = "127.0.0.1", source: str | None = None,
                   timeout: float = TIMEOUT) -> RawConnection:
    """A TCP connection to a RESP server, from `source` (an address of this host) if given."""
    sock = socket.create_connection((host, port), timeout=timeout,
                                    source_address=(source, 0) if source else None)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return RawConnection(sock)
