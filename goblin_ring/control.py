"""control.py — what the server and the client share about the control socket and segments.

The control socket carries framed SBE messages: a little-endian u32 length, then the
message (AttachRequest, AttachReply, AttachConfirm from schema/goblin.xml). The reply to
an attach also carries the session's eventfd doorbell as SCM_RIGHTS ancillary data.
Segment names are /goblin-<name>-<server pid>-<session id>-req|rep, so a restarting server
can sweep whatever a crashed one of the same name left in /dev/shm: parse_segment_name reads
a name back from its end (pid and session id are digits, names may contain '-'), so a sweep
matches its own name exactly and never a longer name that starts with it.
"""

from __future__ import annotations

import os
import re
import socket
import struct
from pathlib import Path

PROTOCOL_VERSION = 2
FRAME_HEADER = struct.Struct("<I")
MAX_CONTROL_FRAME = 4096
SHM_DIR = Path("/dev/shm")


def default_runtime_dir() -> Path:
    """$XDG_RUNTIME_DIR/goblin-ring when set, else /tmp/goblin-ring-<uid>."""
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg:
        return Path(xdg) / "goblin-ring"
    return Path(f"/tmp/goblin-ring-{os.getuid()}")


def socket_path(runtime_dir: Path, name: str) -> Path:
    return runtime_dir / f"{name}.sock"


def segment_prefix(name: str) -> str:
    return f"goblin-{name}-"


SEGMENT_NAME = re.compile(r"^goblin-(?P<name>.+)-(?P<pid>[0-9]+)-(?P<session>[0-9]+)-(?:req|rep)$")


def parse_segment_name(entry: str) -> tuple[str, int] | None:
    """(server name, server pid) of a /dev/shm entry named by segment_names, else None."""
    match = SEGMENT_NAME.match(entry)
    return (match["name"], int(match["pid"])) if match else None


def segment_names(name: str, server_pid: int, session_id: int) -> tuple[str, str]:
    base = f"/{segment_prefix(name)}{server_pid}-{session_id}"
    return base + "-req", base + "-rep"


def frame(message: bytes) -> bytes:
    return FRAME_HEADER.pack(len(message)) + message


def split_frame(buffer: bytearray) -> bytes | None:
    """Take one complete frame off the front of buffer, or None if it is not all here."""
    if len(buffer) < FRAME_HEADER.size:
        return None
    (length,) = FRAME_HEADER.unpack_from(buffer)
    if length > MAX_CONTROL_FRAME:
        raise ValueError(f"control frame of {length} bytes (max {MAX_CONTROL_FRAME})")
    if len(buffer) < FRAME_HEADER.size + length:
        return None
    message = bytes(buffer[FRAME_HEADER.size:FRAME_HEADER.size + length])
    del buffer[:FRAME_HEADER.size + length]
    return message


def receive_frame(sock: socket.socket, max_fds: int = 0) -> tuple[bytes, list[int]]:
    """Blocking read of one frame (client side), with any file descriptors sent with it."""
    buffer = bytearray()
    fds: list[int] = []
    while True:
        message = split_frame(buffer)
        if message is not None:
            return message, fds
        if max_fds:
            data, new_fds, _flags, _address = socket.recv_fds(sock, MAX_CONTROL_FRAME, max_fds)
            fds.extend(new_fds)
        else:
            data = sock.recv(MAX_CONTROL_FRAME)
        if not data:
            for fd in fds:
                os.close(fd)
            raise EOFError("control socket closed")
        buffer.extend(data)
