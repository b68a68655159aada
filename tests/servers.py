"""servers.py — start and stop real server processes for the tests.

Each server gets a free port, its own ring name and its own runtime directory, and is
considered ready when it prints its own "started" (goblin) or "Ready to accept" (redis)
line — no sleeps. stop() sends SIGTERM, waits for the exit and checks what it left.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import uuid
from pathlib import Path

# Port picking and readiness are the bench's own helpers (one copy for both).
from goblin_ring.bench.servers import free_port, wait_for_line  # noqa: F401 - re-exported to the tests


# Names of every goblin server this test process started: the /dev/shm leak check looks
# only at their segments, so other processes' servers on the same machine cannot trip it.
STARTED_NAMES: set[str] = set()


def stop_process(process: subprocess.Popen) -> None:
    """SIGTERM, then SIGKILL if it has not exited within 10 s; reaped either way."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


class GoblinServer:
    def __init__(self, runtime_dir: Path, *extra: str, port: int | None = None, name: str | None = None):
        self.name = name or f"t{uuid.uuid4().hex[:10]}"
        STARTED_NAMES.add(self.name)
        self.runtime_dir = Path(runtime_dir)
        self.port = free_port() if port is None else port
        # As RedisServer below: no save rules unless the test gives its own, and the snapshot
        # file (if any) in the server's own runtime directory, never the working directory.
        if "--dir" not in extra:
            self.runtime_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        defaults = [*([] if "--save" in extra else ["--save", ""]),
                    *([] if "--dir" in extra else ["--dir", str(self.runtime_dir)])]
        self.args = [sys.executable, "-m", "goblin_ring.server", "--name", self.name,
                     "--runtime-dir", str(self.runtime_dir), "--port", str(self.port), *defaults, *extra]
        self.process: subprocess.Popen | None = None
        self.log: list[str] = []

    def start(self) -> "GoblinServer":
        self.process = subprocess.Popen(self.args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE)
        self.log += wait_for_line(self.process, self.process.stderr, "started:")
        return self

    @property
    def pid(self) -> int:
        return self.process.pid

    def wait_for_log(self, marker: str, timeout: float = 5.0) -> list[str]:
        lines = wait_for_line(self.process, self.process.stderr, marker, timeout)
        self.log += lines
        return lines

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
        self.log.append(self.process.stderr.read().decode(errors="replace"))
        self.process.stderr.close()
        self.process = None
        return code

    def stop_cleanly(self) -> None:
        """Stop, and assert what a clean shutdown is: exit status 0 and no segment left."""
        code = self.stop()
        assert code == 0, "".join(self.log)
        assert self.leftover_segments() == []

    def __enter__(self) -> "GoblinServer":
        return self

    def __exit__(self, exc_type, exc, traceback) -> None:
        """A block that raised only stops the server; one that finished also checks the stop."""
        if exc_type is None:
            self.stop_cleanly()
        else:
            self.stop()

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()
        self.process.stderr.close()
        self.process = None

    def leftover_segments(self) -> list[str]:
        prefix = f"goblin-{self.name}-"
        return sorted(p.name for p in Path("/dev/shm").iterdir() if p.name.startswith(prefix))


class RedisServer:
    def __init__(self, executable: str = "redis-server", *extra: str):
        """extra: more redis-server options, after (so overriding) the defaults below."""
        self.executable = shutil.which(executable)
        self.port = free_port()
        self.extra = extra
        self.process: subprocess.Popen | None = None

    def start(self) -> "RedisServer":
        if not self.executable:
            raise FileNotFoundError("redis-server is not installed (apt-get install redis-server)")
        self.process = subprocess.Popen(
            [self.executable, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--daemonize", "no", "--loglevel", "notice", "--dir", "/tmp", *self.extra],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        wait_for_line(self.process, self.process.stdout, "Ready to accept connections")
        return self

    def stop(self) -> None:
        if self.process is None:
            return
        stop_process(self.process)
        self.process.stdout.close()
        self.process = None
