"""Never acknowledge what was not kept: the disk's error paths, as Redis 7 handles them.

A disk that fills under the append-only log (a small tmpfs in a private mount namespace), an
fsync that fails with EIO (an LD_PRELOAD shim this test builds with gcc), a background save
that fails, SIGTERM while the shutdown save fails, a corrupt RESTORE payload in a rewritten
log, a server killed -9 while its child writes. Each run records every write the server
acknowledged and checks, after the space or the disk comes back and the server restarts on
the same files, that every one of them is there: zero acknowledged-but-lost writes, and the
log loads (with aof-load-truncated no: the file never ends in a partial command). Where a
client is involved, both transports. The MISCONF texts are compared with redis-server's.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from goblin_ring import ConnectionError, RespClient, ResponseError, RingClient
from servers import GoblinServer, RedisServer, free_port, wait_for_line

TESTS = Path(__file__).parent
AOF_ERROR_ENOSPC = "MISCONF Errors writing to the AOF file: No space left on device"
AOF_ERROR_EIO = "MISCONF Errors writing to the AOF file: Input/output error"
RDB_ERROR = ("MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. "
             "Commands that may modify the data set are disabled, because this instance is configured to report "
             "errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check "
             "the Redis logs for details about the RDB error.")


def can_unshare(*flags: str) -> bool:
    if not shutil.which("unshare"):
        return False
    return subprocess.run(["unshare", *flags, "true"], capture_output=True).returncode == 0


def client_for(server: GoblinServer, transport: str):
    if transport == "ring":
        return RingClient(server.name, runtime_dir=server.runtime_dir, timeout=10.0)
    return RespClient(port=server.port, socket_timeout=10.0)


def wait_until(predicate, timeout: float = 10.0, what: str = "condition"):
    """Poll a server-side state (INFO, /proc) until it holds: the state changes in the server's
    cron or its fsync thread, which no reply announces."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def aof_status(client) -> str:
    return client.info("persistence")["aof_last_write_status"]


# ---- 1. disk full under the append-only log ---------------------------------------------------

# Runs inside `unshare -m`: a 4 MiB tmpfs is the server's dir; ballast fills it but for 64 KiB;
# one client writes 1 KiB values until the server refuses (everysec: -MISCONF) or goes away
# (always: it exits before replying); then the space comes back and the server restarts on the
# same log with aof-load-truncated no. Prints one JSON line of what it saw.
DISK_FULL_SCRIPT = textwrap.dedent("""
    import json, os, subprocess, sys, time
    sys.path.insert(0, {tests!r})
    from servers import GoblinServer
    from goblin_ring import ConnectionError, RespClient, ResponseError, RingClient
    disk, runtime, mode, transport, end = {disk!r}, {runtime!r}, {mode!r}, {transport!r}, {end!r}
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", disk], check=True)
    args = ("--appendonly", "yes", "--appendfsync", mode, "--dir", disk, "--aof-load-truncated", "no")
    def connect(server):
        if transport == "ring":
            return RingClient(server.name, runtime_dir=runtime, timeout=10.0)
        return RespClient(port=server.port, socket_timeout=10.0)
    def status(c):
        return c.info("persistence")["aof_last_write_status"]
    def wait(predicate):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if predicate():
                return True
            time.sleep(0.02)
        return False
    seen = {{"acked": 0}}
    acked = {{}}
    server = GoblinServer(runtime, *args).start()
    client = connect(server)
    client.set("before", "x" * 100)
    acked["before"] = "x" * 100
    ballast = os.open(os.path.join(disk, "ballast"), os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while True:
            os.write(ballast, b"b" * 65536)
    except OSError:
        pass
    os.close(ballast)
    os.truncate(os.path.join(disk, "ballast"), os.path.getsize(os.path.join(disk, "ballast")) - 65536)
    value = "v" * 1000
    refusal = None
    for i in range(100000):
        try:
            client.set(f"k{{i}}", value)
            acked[f"k{{i}}"] = value
        except ResponseError as error:
            refusal = str(error)
            break
        except ConnectionError as error:
            refusal = "connection closed"
            break
    seen["refusal"] = refusal
    seen["acked"] = len(acked)
    if mode == "always":
        seen["exit"] = server.process.wait(timeout=10)
        server.log.append(server.process.stderr.read().decode(errors="replace"))
        server.process.stderr.close()
        server.process = None
    else:
        seen["status_full"] = status(client)
        seen["get_while_full"] = client.get("before").decode()
        try:
            client.ping()
            seen["ping_while_full"] = "PONG"
        except ResponseError as error:
            seen["ping_while_full"] = str(error)
    if end == "kill9-full":                    # killed while the disk is still full
        server.process.kill()
        seen["exit"] = server.process.wait()
        server.log.append(server.process.stderr.read().decode(errors="replace"))
        server.process.stderr.close()
        server.process = None
        seen["last_acked"] = list(acked)[-1]
    os.unlink(os.path.join(disk, "ballast"))       # the space comes back
    if mode != "always" and end != "kill9-full":
        seen["recovered"] = wait(lambda: status(client) == "ok")
        client.set("after", "y" * 100)
        acked["after"] = "y" * 100
        client.close()
        if end == "kill9":                     # no shutdown flush hides a partial command
            server.process.kill()
            seen["exit"] = server.process.wait()
            server.log.append(server.process.stderr.read().decode(errors="replace"))
            server.process.stderr.close()
            server.process = None
        else:
            seen["exit"] = server.stop()
    seen["log"] = "".join(server.log)
    again = GoblinServer(runtime, *args, name=server.name).start()
    check = connect(again)
    lost = [key for key, expected in acked.items() if (check.get(key) or b"").decode() != expected]
    seen["lost"] = lost
    check.close()
    seen["exit_after"] = again.stop()
    print(json.dumps(seen))
""")


@pytest.mark.skipif(not can_unshare("-m"), reason="needs unshare -m (root or user namespaces)")
@pytest.mark.parametrize("transport", ["resp", "ring"])
@pytest.mark.parametrize("mode, end", [("always", "exit"), ("everysec", "sigterm"), ("everysec", "kill9"),
                                       ("everysec", "kill9-full"), ("no", "sigterm"), ("no", "kill9")])
def test_a_full_disk_never_acknowledges_a_write_the_log_lost_and_the_log_loads_after(tmp_path, mode, end, transport):
    """The space comes back, one more write, then the server stops (SIGTERM) or is killed -9
    (the issue's case: the log it left must load, with aof-load-truncated no); under always
    the server has already ended itself. Every acknowledged write is in the restarted one."""
    disk = tmp_path / "disk"
    disk.mkdir()
    script = DISK_FULL_SCRIPT.format(tests=str(TESTS), disk=str(disk), runtime=str(tmp_path / "run"),
                                     mode=mode, transport=transport, end=end)
    done = subprocess.run(["unshare", "-m", "--propagation", "private", sys.executable, "-c", script],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["acked"] > 1
    if mode == "always":
        # Redis: "Can't recover from AOF write error when the AOF fsync policy is 'always'":
        # the process ends before the reply to the write that failed leaves.
        assert seen["refusal"] == "connection closed"
        assert seen["exit"] == 1
        assert "appendfsync always" in seen["log"] and "Exiting" in seen["log"]
    else:
        assert seen["refusal"] == AOF_ERROR_ENOSPC
        assert seen["status_full"] == "err"
        assert seen["get_while_full"] == "x" * 100      # reads go on
        assert seen["ping_while_full"] == AOF_ERROR_ENOSPC   # as Redis: PING is refused too
        if end == "kill9-full":
            assert seen["exit"] == -9
        else:
            assert seen["recovered"], "the log did not recover once the space came back"
            assert seen["exit"] == (-9 if end == "kill9" else 0)
            assert "AOF write error looks solved" in seen["log"]
    if end == "kill9-full":
        # everysec's promise, as Redis's: the write whose flush found the disk full was answered
        # (its reply left with the batch) and lived only in memory when the process was killed.
        # Nothing older is lost, and the file ends on a whole command (it was cut back).
        assert seen["lost"] in ([], [seen["last_acked"]])
    else:
        assert seen["lost"] == []              # zero acknowledged-but-lost writes
    assert seen["exit_after"] == 0             # ... and the log loaded with aof-load-truncated no


# ---- 2. fsync fails with EIO ---------------------------------------------------------------

FSYNC_SHIM = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* fsync and fdatasync of a file whose name contains ".aof" (or of exactly the path in
 * GOBLIN_TEST_FSYNC_PATH, when it is set) fail with EIO while the file named by
 * GOBLIN_TEST_FSYNC_FAIL exists. */
static int failing(int fd) {
    const char *flag = getenv("GOBLIN_TEST_FSYNC_FAIL");
    if (!flag || access(flag, F_OK) != 0) return 0;
    char link[64], target[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n <= 0) return 0;
    target[n] = 0;
    const char *exact = getenv("GOBLIN_TEST_FSYNC_PATH");
    if (exact) return strcmp(target, exact) == 0;
    return strstr(target, ".aof") != NULL;
}

int fsync(int fd) {
    if (failing(fd)) { errno = EIO; return -1; }
    return ((int (*)(int))dlsym(RTLD_NEXT, "fsync"))(fd);
}

int fdatasync(int fd) {
    if (failing(fd)) { errno = EIO; return -1; }
    return ((int (*)(int))dlsym(RTLD_NEXT, "fdatasync"))(fd);
}
"""


@pytest.fixture(scope="module")
def fsync_shim(tmp_path_factory) -> Path:
    if not shutil.which("gcc"):
        pytest.skip("needs gcc to build the fsync shim")
    directory = tmp_path_factory.mktemp("shim")
    source = directory / "fsync_shim.c"
    source.write_text(FSYNC_SHIM)
    library = directory / "fsync_shim.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-O1", "-o", str(library), str(source), "-ldl"], check=True)
    return library


def start_with_shim(monkeypatch, shim: Path, flag: Path, runtime: Path, *args: str, name: str | None = None):
    monkeypatch.setenv("LD_PRELOAD", str(shim))
    monkeypatch.setenv("GOBLIN_TEST_FSYNC_FAIL", str(flag))
    try:
        return GoblinServer(runtime, *args, name=name).start()
    finally:
        monkeypatch.delenv("LD_PRELOAD")
        monkeypatch.delenv("GOBLIN_TEST_FSYNC_FAIL")


@pytest.mark.parametrize("transport", ["resp", "ring"])
def test_an_fsync_error_under_everysec_refuses_writes_until_an_fsync_succeeds(tmp_path, monkeypatch, fsync_shim,
                                                                            transport):
    flag = tmp_path / "fail-fsync"
    args = ("--appendonly", "yes", "--appendfsync", "everysec", "--aof-load-truncated", "no")
    server = start_with_shim(monkeypatch, fsync_shim, flag, tmp_path / "run", *args)
    acked = {}
    try:
        client = client_for(server, transport)
        client.set("a", "1")
        acked["a"] = "1"
        flag.touch()
        client.set("b", "2")                   # written; its fsync (within the second) fails
        acked["b"] = "2"
        wait_until(lambda: aof_status(client) == "err", what="the failed fsync in INFO")
        with pytest.raises(ResponseError) as refused:
            client.set("c", "3")
        assert str(refused.value) == AOF_ERROR_EIO
        assert client.get("a") == b"1"
        flag.unlink()                           # the disk is back: the next fsync succeeds
        wait_until(lambda: aof_status(client) == "ok", what="the fsync to succeed again")
        client.set("d", "4")
        acked["d"] = "4"
        client.close()
    finally:
        assert server.stop() == 0, "".join(server.log)
    assert "Fail to fsync the AOF file: Input/output error" in "".join(server.log)
    with GoblinServer(tmp_path / "run", *args, name=server.name).start() as again:
        check = client_for(again, transport)
        assert {key: (check.get(key) or b"").decode() for key in acked} == acked
        assert check.get("c") is None
        check.close()


@pytest.mark.parametrize("transport", ["resp", "ring"])
def test_an_fsync_error_under_always_ends_the_server_before_the_write_is_acknowledged(tmp_path, monkeypatch,
                                                                                   fsync_shim, transport):
    flag = tmp_path / "fail-fsync"
    args = ("--appendonly", "yes", "--appendfsync", "always", "--aof-load-truncated", "no")
    server = start_with_shim(monkeypatch, fsync_shim, flag, tmp_path / "run", *args)
    client = client_for(server, transport)
    client.set("a", "1")
    flag.touch()
    with pytest.raises(ConnectionError):
        client.set("b", "2")
    assert server.process.wait(timeout=10) == 1
    client.close()
    server.stop()
    assert "Can't persist the append only file to disk with appendfsync always (fsync: Input/output error)" \
        in "".join(server.log)
    with GoblinServer(tmp_path / "run", *args, name=server.name).start() as again:
        check = client_for(again, transport)
        assert check.get("a") == b"1"          # everything acknowledged is there
        check.close()


def test_a_failed_fsync_of_the_directory_after_a_rename_is_logged_not_ignored(tmp_path, monkeypatch, fsync_shim):
    """The file is whole and renamed, but the rename may not survive a power loss: as Redis's
    fsyncFileDir, the server says so (the save itself stands)."""
    flag = tmp_path / "fail-fsync"
    data = tmp_path / "data"
    data.mkdir()
    monkeypatch.setenv("GOBLIN_TEST_FSYNC_PATH", str(data))
    server = start_with_shim(monkeypatch, fsync_shim, flag, tmp_path / "run", "--dir", str(data),
                             "--appendonly", "yes")
    monkeypatch.delenv("GOBLIN_TEST_FSYNC_PATH")
    try:
        with RespClient(port=server.port, socket_timeout=10.0) as client:
            client.set("k", "v")
            flag.touch()
            assert client.execute_command("SAVE") in (True, b"OK", "OK")
            client.execute_command("BGREWRITEAOF")
            wait_until(lambda: client.info("persistence")["aof_rewrites"] == 1
                       and not client.info("persistence")["aof_rewrite_in_progress"], what="the rewrite")
            assert client.get("k") == b"v"
    finally:
        assert server.stop() == 0
    log = "".join(server.log)
    assert f"Failed to fsync the directory of {data / 'dump.grdb'} after the rename: Input/output error" in log
    assert f"Failed to fsync the directory of {data / 'appendonly.aof'} after the rewrite's rename" in log


# ---- 3. a failed background save stops writes -------------------------------------------------

def redis_bgsave_error_reply(tmp_path: Path) -> tuple[str, str]:
    """What redis-server answers SET and PING after a BGSAVE failed (its dump file is a directory)."""
    directory = tmp_path / "redis"
    directory.mkdir()
    port = free_port()
    process = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", str(directory),
                                "--save", "3600 1", "--appendonly", "no", "--daemonize", "no"],
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        wait_for_line(process, process.stdout, "Ready to accept connections")
        (directory / "dump.rdb").mkdir()       # the rename over it fails: the save fails
        with RespClient(port=port, socket_timeout=10.0) as redis:
            redis.set("x", "1")
            redis.execute_command("BGSAVE")
            wait_until(lambda: redis.info("persistence")["rdb_last_bgsave_status"] == "err"
                       and not redis.info("persistence")["rdb_bgsave_in_progress"], what="redis's BGSAVE to fail")
            replies = []
            for command in (("SET", "y", "2"), ("PING",)):
                try:
                    redis.execute_command(*command)
                    replies.append("accepted")
                except ResponseError as error:
                    replies.append(str(error))
            return replies[0], replies[1]
    finally:
        process.kill()                          # SIGTERM would save, fail and keep it running, as it should
        process.wait(timeout=10)
        process.stdout.close()


@pytest.fixture(scope="module")
def redis_bgsave_refusal(tmp_path_factory) -> tuple[str, str]:
    if not shutil.which("redis-server"):
        pytest.skip("needs redis-server")
    return redis_bgsave_error_reply(tmp_path_factory.mktemp("redis-bgsave"))


@pytest.mark.parametrize("transport", ["resp", "ring"])
def test_a_failed_bgsave_refuses_writes_with_misconf_as_redis_until_a_save_succeeds(tmp_path, transport,
                                                                                   redis_bgsave_refusal):
    assert redis_bgsave_refusal == (RDB_ERROR, RDB_ERROR)
    data = tmp_path / "data"
    data.mkdir()
    with GoblinServer(tmp_path / "run", "--dir", str(data), "--save", "3600 1").start() as server:
        server_pid = server.pid
        (data / "dump.grdb").mkdir()            # the rename over it fails: the save fails
        client = client_for(server, transport)
        client.set("x", "1")
        assert client.execute_command("BGSAVE") in (b"Background saving started", "Background saving started")
        wait_until(lambda: client.info("persistence")["rdb_last_bgsave_status"] == "err"
                   and not client.info("persistence")["rdb_bgsave_in_progress"], what="the BGSAVE to fail")
        for command in (("SET", "y", "2"), ("PING",), ("DEL", "x")):
            with pytest.raises(ResponseError) as refused:
                client.execute_command(*command)
            assert str(refused.value) == RDB_ERROR
        assert client.get("x") == b"1"         # reads go on
        client.execute_command("CONFIG", "SET", "stop-writes-on-bgsave-error", "no")
        client.set("y", "2")
        client.execute_command("CONFIG", "SET", "stop-writes-on-bgsave-error", "yes")
        (data / "dump.grdb").rmdir()            # the disk is fixed: a save succeeds and writes resume
        client.execute_command("BGSAVE")
        wait_until(lambda: client.info("persistence")["rdb_last_bgsave_status"] == "ok", what="the BGSAVE")
        client.set("z", "3")
        client.close()
    log = "".join(server.log)
    # the child's own lines carry the server's prefix with the child's pid
    child_lines = [line for line in log.splitlines() if "Background saving failed" in line]
    assert child_lines and child_lines[0].startswith("goblin-ring[")
    assert not child_lines[0].startswith(f"goblin-ring[{server_pid}]")
    with GoblinServer(tmp_path / "run", "--dir", str(data), "--save", "3600 1", name=server.name).start() as again:
        check = client_for(again, transport)
        assert [check.get(key) for key in ("x", "y", "z")] == [b"1", b"2", b"3"]
        check.close()


def transaction_across_a_failed_bgsave(client, admin, data: Path, dump: str) -> list:
    """A transaction queued before a BGSAVE fails and EXECed after; one queued after it; one
    of reads only. What each answered (errors as text)."""
    def answer(*argv):
        try:
            reply = client.execute_command(*argv)
        except ResponseError as error:
            return "error:" + str(error)
        return reply.decode() if isinstance(reply, bytes) else reply
    seen = [answer("SET", "x", "1"), answer("MULTI"), answer("SET", "a", "1")]
    (data / dump).mkdir()
    admin.execute_command("BGSAVE")
    wait_until(lambda: admin.info("persistence")["rdb_last_bgsave_status"] == "err"
               and not admin.info("persistence")["rdb_bgsave_in_progress"], what="the BGSAVE to fail")
    seen += [answer("EXEC"), answer("MULTI"), answer("SET", "b", "1"), answer("GET", "x"), answer("EXEC"),
             answer("MULTI"), answer("GET", "x"), answer("EXEC"), answer("GET", "a")]
    (data / dump).rmdir()
    return [[item.decode() if isinstance(item, bytes) else item for item in value] if isinstance(value, list)
            else value for value in seen]


@pytest.mark.skipif(not shutil.which("redis-server"), reason="needs redis-server")
@pytest.mark.parametrize("transport", ["resp", "ring"])
def test_exec_of_a_transaction_with_writes_after_a_failed_bgsave_is_discarded_whole_as_redis(tmp_path, transport):
    redis_dir = tmp_path / "redis"
    redis_dir.mkdir()
    port = free_port()
    process = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", str(redis_dir),
                                "--save", "3600 1", "--appendonly", "no"],
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        wait_for_line(process, process.stdout, "Ready to accept connections")
        with RespClient(port=port, socket_timeout=10.0) as redis, RespClient(port=port, socket_timeout=10.0) as admin:
            theirs = transaction_across_a_failed_bgsave(redis, admin, redis_dir, "dump.rdb")
    finally:
        process.kill()
        process.wait(timeout=10)
        process.stdout.close()
    data = tmp_path / "data"
    data.mkdir()
    with GoblinServer(tmp_path / "run", "--dir", str(data), "--save", "3600 1").start() as server:
        client = client_for(server, transport)
        with RespClient(port=server.port, socket_timeout=10.0) as admin:
            mine = transaction_across_a_failed_bgsave(client, admin, data, "dump.grdb")
            admin.execute_command("BGSAVE")          # the disk is back: the shutdown may stop
            wait_until(lambda: admin.info("persistence")["rdb_last_bgsave_status"] == "ok", what="the BGSAVE")
        client.close()
    assert mine == theirs
    assert mine[3].startswith("error:EXECABORT Transaction discarded because of: MISCONF")
    assert mine[-1] is None                          # the discarded transaction's write did not happen


# ---- 4. SIGTERM is SHUTDOWN ---------------------------------------------------------------------

def test_sigterm_with_a_failing_shutdown_save_keeps_serving_and_says_so(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    server = GoblinServer(tmp_path / "run", "--dir", str(data), "--save", "3600 1").start()
    (data / "dump.grdb").mkdir()                # the shutdown save's rename over it fails
    try:
        with RespClient(port=server.port, socket_timeout=10.0) as client:
            client.set("k", "kept")
            server.process.send_signal(signal.SIGTERM)
            server.wait_for_log("errors trying to shut down the server")
            assert server.process.poll() is None
            assert client.get("k") == b"kept"          # still serving, nothing lost
            (data / "dump.grdb").rmdir()
    finally:
        code = server.stop()                   # SIGTERM again: the save succeeds, the server stops
    assert code == 0, "".join(server.log)
    with GoblinServer(tmp_path / "run", "--dir", str(data), "--save", "3600 1", name=server.name).start() as again:
        with RespClient(port=again.port, socket_timeout=10.0) as client:
            assert client.get("k") == b"kept"


def test_sigterm_saves_like_shutdown_when_the_save_succeeds(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    with GoblinServer(tmp_path / "run", "--dir", str(data), "--save", "3600 1").start() as server:
        with RespClient(port=server.port, socket_timeout=10.0) as client:
            client.set("k", "v")
    assert "Received SIGTERM scheduling shutdown" in "".join(server.log)
    assert (data / "dump.grdb").is_file()


SHUTDOWN_FLAG_CASES = ["bogus", "save nosave", "", "default force", "nosave force", "NOW save", "default"]


def config_answer(client, *argv):
    try:
        reply = client.execute_command(*argv)
    except ResponseError as error:
        return "error:" + str(error)
    if isinstance(reply, list):
        return [item.decode() if isinstance(item, bytes) else item for item in reply]
    return "ok"


@pytest.mark.skipif(not shutil.which("redis-server"), reason="needs redis-server")
@pytest.mark.parametrize("transport", ["resp", "ring"])
def test_shutdown_on_sigterm_and_sigint_take_redis_words_and_texts(tmp_path, transport):
    redis = RedisServer().start()
    try:
        with GoblinServer(tmp_path / "run").start() as server, RespClient(port=redis.port) as theirs:
            mine = client_for(server, transport)
            for name in ("shutdown-on-sigterm", "shutdown-on-sigint"):
                for value in SHUTDOWN_FLAG_CASES:
                    seen = [(config_answer(c, "CONFIG", "SET", name, value), config_answer(c, "CONFIG", "GET", name))
                            for c in (mine, theirs)]
                    assert seen[0] == seen[1], (name, value)
            mine.close()
    finally:
        redis.stop()


def test_sigterm_with_force_stops_even_when_the_shutdown_save_fails(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    server = GoblinServer(tmp_path / "run", "--dir", str(data), "--save", "3600 1",
                          "--shutdown-on-sigterm", "force").start()
    (data / "dump.grdb").mkdir()                # the shutdown save fails
    try:
        with RespClient(port=server.port, socket_timeout=10.0) as client:
            client.set("k", "v")
            assert client.execute_command("CONFIG", "GET", "shutdown-on-sigterm") == \
                [b"shutdown-on-sigterm", b"force"]
    finally:
        code = server.stop()
    assert code == 0                            # as told: it stops, and says what it did not keep
    log = "".join(server.log)
    assert "Error trying to shut down" in log and "exiting anyway" in log


@pytest.mark.parametrize("signum, flags, rules, saved", [
    (signal.SIGTERM, "nosave", "3600 1", False),     # save rules set, but nosave: no save
    (signal.SIGINT, "save", "", True),               # no save rules, but save: it saves
    (signal.SIGINT, "default", "", False)])
def test_the_signal_shutdown_saves_as_its_flags_say(tmp_path, signum, flags, rules, saved):
    data = tmp_path / "data"
    data.mkdir()
    name = "--shutdown-on-sigterm" if signum == signal.SIGTERM else "--shutdown-on-sigint"
    server = GoblinServer(tmp_path / "run", "--dir", str(data), "--save", rules, name, flags).start()
    try:
        with RespClient(port=server.port, socket_timeout=10.0) as client:
            client.set("k", "v")
        server.process.send_signal(signum)
        assert server.process.wait(timeout=10) == 0
    finally:
        server.stop()
    assert (data / "dump.grdb").is_file() == saved
    assert f"Received {signal.Signals(signum).name} scheduling shutdown" in "".join(server.log)


@pytest.mark.parametrize("value", ["bogus", "save nosave", ""])
def test_a_bad_shutdown_on_sigterm_flag_is_a_one_line_error(tmp_path, value):
    done = subprocess.run([sys.executable, "-m", "goblin_ring.server", "--name", "t31flags", "--runtime-dir",
                           str(tmp_path / "run"), "--port", "0", "--save", "", "--shutdown-on-sigterm", value],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("goblin-ring-server: --shutdown-on-sigterm")


def test_stop_writes_on_bgsave_error_no_at_start_keeps_accepting_writes(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    with GoblinServer(tmp_path / "run", "--dir", str(data), "--save", "3600 1",
                      "--stop-writes-on-bgsave-error", "no").start() as server:
        (data / "dump.grdb").mkdir()
        with RespClient(port=server.port, socket_timeout=10.0) as client:
            client.set("x", "1")
            client.execute_command("BGSAVE")
            wait_until(lambda: client.info("persistence")["rdb_last_bgsave_status"] == "err"
                       and not client.info("persistence")["rdb_bgsave_in_progress"], what="the BGSAVE to fail")
            assert client.set("y", "2") is True
            (data / "dump.grdb").rmdir()


# ---- 5. a corrupt RESTORE payload in a rewritten log --------------------------------------------

def restore_payload_offset(aof: bytes) -> int:
    """The offset of a byte in the middle of the first RESTORE's payload (its fourth argument)."""
    at = aof.index(b"$7\r\nRESTORE\r\n")
    at += len(b"$7\r\nRESTORE\r\n")
    for _ in range(2):                          # key, ttl
        header_end = aof.index(b"\r\n", at)
        length = int(aof[at + 1:header_end])
        at = header_end + 2 + length + 2
    header_end = aof.index(b"\r\n", at)
    length = int(aof[at + 1:header_end])
    return header_end + 2 + length // 2


def test_the_loader_refuses_a_rewritten_log_whose_restore_payload_fails_its_checksum(tmp_path):
    args = ("--appendonly", "yes")
    with GoblinServer(tmp_path / "run", *args).start() as server:
        with RespClient(port=server.port, socket_timeout=10.0) as client:
            client.rpush("list", *[f"value-{i}" for i in range(50)])
            client.set("s", "text")
            client.execute_command("BGREWRITEAOF")
            wait_until(lambda: client.info("persistence")["aof_rewrites"] == 1
                       and not client.info("persistence")["aof_rewrite_in_progress"], what="the rewrite")
    aof = tmp_path / "run" / "appendonly.aof"
    data = bytearray(aof.read_bytes())
    offset = restore_payload_offset(bytes(data))
    data[offset] ^= 0x01
    aof.write_bytes(bytes(data))
    broken = GoblinServer(tmp_path / "run", *args, name=server.name)
    with pytest.raises(RuntimeError) as refused:
        broken.start()
    broken.stop()
    assert "Bad RESTORE payload reading the append only file" in str(refused.value)
    assert "checksum" in str(refused.value)


# ---- 6. the child dies with its parent and holds no listener --------------------------------------

def children_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def socket_inodes(pid: int) -> int:
    count = 0
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            if os.readlink(fd).startswith("socket:"):
                count += 1
        except OSError:
            pass
    return count


def writing_temp_file(pid: int) -> bool:
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            if "temp-" in os.readlink(fd):
                return True
        except OSError:
            pass
    return False


@pytest.mark.parametrize("child", ["bgsave", "bgrewriteaof"])
def test_a_server_killed_during_a_slow_child_leaves_nothing_holding_its_port_or_name(tmp_path, child):
    args = ("--appendonly", "yes") if child == "bgrewriteaof" else ()
    server = GoblinServer(tmp_path / "run", *args).start()
    with RespClient(port=server.port, socket_timeout=10.0) as client:
        for i in range(200):
            client.set(f"k{i}", "v")
        client.execute_command("CONFIG", "SET", "rdb-key-save-delay", "100000")   # 0.1 s a key
        if child == "bgsave":
            client.execute_command("BGSAVE")
        else:
            client.execute_command("BGREWRITEAOF")
        children = wait_until(lambda: children_of(server.pid), what="the child")
    child_pid = children[0]
    try:
        # The child closes what it inherited before it opens its temporary file: once that
        # file is open, what it holds is what it keeps for the rest of its run.
        wait_until(lambda: writing_temp_file(child_pid), what="the child to open its temporary file")
        assert socket_inodes(child_pid) == 0       # no listener, no control socket, no client
    finally:
        server.kill()                              # kill -9, also when the check failed
    wait_until(lambda: not Path(f"/proc/{child_pid}").exists() or
               (Path(f"/proc/{child_pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"),
               what="the child to die with its parent")
    with GoblinServer(tmp_path / "run", *args, port=server.port, name=server.name).start() as again:
        with RespClient(port=again.port, socket_timeout=10.0) as client:
            assert client.ping() is True
        with RingClient(again.name, runtime_dir=tmp_path / "run", timeout=10.0) as ring:
            assert ring.ping() is True


# ---- 10. a temporary rewrite file a killed server left is removed at start -------------------------

def test_a_temporary_rewrite_file_of_a_dead_server_is_removed_at_start(tmp_path):
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(finished.stdout)
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    leftovers = [run / f"appendonly.aof.temp-rewrite-{dead_pid}", run / f"temp-{dead_pid}.grdb"]
    for path in leftovers:
        path.write_bytes(b"partial")
    kept = run / f"appendonly.aof.temp-rewrite-{os.getpid()}"     # a live process's: not touched
    kept.write_bytes(b"live")
    with GoblinServer(run, "--appendonly", "yes").start():
        assert [path.exists() for path in leftovers] == [False, False]
        assert kept.exists()
