"""Edges of a session's and a transaction's life that must not bring data or the server down.

ZRANDMEMBER/SRANDMEMBER/HRANDFIELD with LLONG_MIN (Redis answers "value is out of range"; the
count's negation must not overflow into a reply the server grows for ever to build); SAVE and
SHUTDOWN inside MULTI, refused at queue time as Redis refuses them (then EXECABORT, and the
server keeps serving); a ring client in another PID namespace, whose reported pid means
nothing here, served its blocking pop; a ring subscriber closed at its output-buffer limit
logged as such. Both transports where a client is involved, texts compared with redis-server.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from goblin_ring import ConnectionError, RespClient, ResponseError, RingClient
from servers import GoblinServer, RedisServer

TESTS = Path(__file__).parent
LLONG_MIN = "-9223372036854775808"


@pytest.fixture(scope="module")
def goblin(tmp_path_factory):
    with GoblinServer(tmp_path_factory.mktemp("run")).start() as server:
        yield server


@pytest.fixture(scope="module")
def redis_port():
    if not shutil.which("redis-server"):
        pytest.skip("needs redis-server")
    server = RedisServer().start()
    yield server.port
    server.stop()


def client_for(server: GoblinServer, transport: str):
    if transport == "ring":
        return RingClient(server.name, runtime_dir=server.runtime_dir, timeout=10.0)
    return RespClient(port=server.port, socket_timeout=10.0)


def answer(client, *argv):
    try:
        return client.execute_command(*argv)
    except ResponseError as error:
        return "error:" + str(error)


RANDOM_CASES = [("ZRANDMEMBER", "z", LLONG_MIN), ("ZRANDMEMBER", "z", LLONG_MIN, "WITHSCORES"),
                ("ZRANDMEMBER", "z", "-9223372036854775807", "WITHSCORES"),
                ("ZRANDMEMBER", "z", "4611686018427387904", "WITHSCORES"),
                ("HRANDFIELD", "h", LLONG_MIN), ("HRANDFIELD", "h", LLONG_MIN, "WITHVALUES"),
                ("SRANDMEMBER", "s", LLONG_MIN), ("ZRANDMEMBER", "missing", LLONG_MIN)]


@pytest.mark.parametrize("transport", ["resp", "ring"])
def test_random_members_with_llong_min_answer_out_of_range_as_redis(goblin, redis_port, transport):
    client = client_for(goblin, transport)
    with RespClient(port=redis_port, socket_timeout=10.0) as redis:
        for c in (client, redis):
            c.execute_command("DEL", "z", "h", "s")
            c.execute_command("ZADD", "z", "1", "a")
            c.execute_command("HSET", "h", "f", "v")
            c.execute_command("SADD", "s", "a")
        for case in RANDOM_CASES:
            mine, theirs = answer(client, *case), answer(redis, *case)
            assert mine == theirs, case
            assert str(mine).startswith("error:ERR value is out of range"), case
    # a count Redis would answer with a reply no client could hold: refused, and the server lives
    assert answer(client, "ZRANDMEMBER", "z", "-9223372036854775807") == "error:ERR value is out of range"
    assert len(client.execute_command("ZRANDMEMBER", "z", "-1000")) == 1000
    assert client.ping() is True
    client.close()


# A DB index is an int in Redis (getIntFromObjectOrReply): past it, that function's text (or
# SWAPDB's own); LPOS's COUNT and MAXLEN give their message for a non-integer too.
INT_ARGUMENT_CASES = [("SELECT", "4294967296"), ("SELECT", "9223372036854775808"), ("SELECT", "16"),
                      ("MOVE", "idx-k", "4294967296"), ("MOVE", "idx-k", "-2147483649"), ("MOVE", "idx-k", "16"),
                      ("COPY", "idx-k", "idx-k2", "DB", "4294967296"), ("COPY", "idx-k", "idx-k2", "DB", "nan"),
                      ("SWAPDB", "4294967296", "0"), ("SWAPDB", "0", "-4294967296"), ("SWAPDB", "0", "x"),
                      ("LPOS", "idx-l", "a", "COUNT", "x"), ("LPOS", "idx-l", "a", "MAXLEN", "1e308"),
                      ("LPOS", "idx-l", "a", "COUNT", "-1")]


@pytest.mark.parametrize("transport", ["resp", "ring"])
def test_db_indexes_and_lpos_counts_out_of_range_answer_redis_texts(goblin, redis_port, transport):
    client = client_for(goblin, transport)
    with RespClient(port=redis_port, socket_timeout=10.0) as redis:
        for c in (client, redis):
            c.execute_command("DEL", "idx-k", "idx-l")
            c.execute_command("SET", "idx-k", "v")
            c.execute_command("RPUSH", "idx-l", "a")
        for case in INT_ARGUMENT_CASES:
            assert answer(client, *case) == answer(redis, *case), case
        for c in (client, redis):
            c.execute_command("DEL", "idx-k", "idx-l")
    assert client.execute_command("SELECT", "0") in (True, b"OK", "OK")
    client.close()


@pytest.mark.parametrize("transport", ["resp", "ring"])
@pytest.mark.parametrize("command", [("SHUTDOWN",), ("SHUTDOWN", "NOSAVE"), ("SAVE",)])
def test_save_and_shutdown_inside_multi_are_refused_at_queue_time_as_redis(goblin, redis_port, transport, command):
    client = client_for(goblin, transport)
    seen = {}
    with RespClient(port=redis_port, socket_timeout=10.0) as redis:
        for label, c in (("goblin", client), ("redis", redis)):
            c.execute_command("MULTI")
            queued = answer(c, "SET", "k", "v")
            refused = answer(c, *command)
            executed = answer(c, "EXEC")
            seen[label] = (queued, refused, executed)
    assert seen["goblin"] == seen["redis"]
    assert seen["goblin"][1] == "error:ERR Command not allowed inside a transaction"
    assert seen["goblin"][2].startswith("error:EXECABORT")
    assert client.ping() is True                   # the server did not shut down
    assert client.get("k") is None                 # and the transaction did not run
    client.close()


# Runs inside `unshare -p -f`: it forks until its pid there is a number no process has in the
# server's namespace (/proc is still the server's), so a liveness check by that pid would
# take it for dead. It attaches, blocks on BLPOP and prints what it got.
NAMESPACED_CLIENT = textwrap.dedent("""
    import json, os, sys
    while True:
        child = os.fork()
        if child == 0:
            if not os.path.exists(f"/proc/{{os.getpid()}}"):
                break
            os._exit(100)                  # taken: the parent tries another
        _, status = os.waitpid(child, 0)
        if os.WEXITSTATUS(status) != 100:
            os._exit(os.WEXITSTATUS(status))   # the chosen one ran
    sys.path.insert(0, {tests!r})
    from goblin_ring import RingClient
    client = RingClient({name!r}, runtime_dir={runtime!r}, timeout=20.0)
    print(json.dumps({{"pid_inside": os.getpid()}}), flush=True)
    got = client.blpop("queue", 15)
    print(json.dumps({{"got": [item.decode() for item in got] if got else None,
                      "after": client.get("queue-marker").decode()}}), flush=True)
    client.close()
    sys.stdout.flush()
    os._exit(0)
""")


def can_unshare_pid() -> bool:
    return bool(shutil.which("unshare")) and \
        subprocess.run(["unshare", "-p", "-f", "true"], capture_output=True).returncode == 0


@pytest.mark.skipif(not can_unshare_pid(), reason="needs unshare -p (root or user namespaces)")
def test_a_ring_client_in_another_pid_namespace_is_served_not_taken_for_dead(goblin):
    with RespClient(port=goblin.port, socket_timeout=10.0) as admin:
        admin.execute_command("DEL", "queue")
        admin.set("queue-marker", "still here")
        script = NAMESPACED_CLIENT.format(tests=str(TESTS), name=goblin.name, runtime=str(goblin.runtime_dir))
        process = subprocess.Popen(["unshare", "-p", "-f", sys.executable, "-c", script],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            first = json.loads(process.stdout.readline())
            deadline = time.monotonic() + 10
            while admin.info("clients")["blocked_clients"] < 1:      # the BLPOP is parked
                assert time.monotonic() < deadline, "the namespaced client never blocked"
                time.sleep(0.01)
            clients = admin.execute_command("CLIENT", "LIST").decode()
            assert admin.rpush("queue", "job") == 1
            second = json.loads(process.stdout.readline())
            assert process.wait(timeout=10) == 0, process.stderr.read()
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
            process.stdout.close()
            process.stderr.close()
    assert not Path(f"/proc/{first['pid_inside']}").exists() or first["pid_inside"] != process.pid
    assert second == {"got": ["queue", "job"], "after": "still here"}
    # the server names it by the pid its own namespace sees (SO_PEERCRED), not the reported one
    ring_lines = [line for line in clients.splitlines() if "transport=ring" in line or "ring:pid=" in line]
    assert ring_lines and all(f"ring:pid={first['pid_inside']} " not in line for line in ring_lines)


def test_a_ring_subscriber_closed_at_its_output_limit_is_logged_as_such_not_as_client_kill(tmp_path):
    with GoblinServer(tmp_path / "run").start() as server:
        with RespClient(port=server.port, socket_timeout=10.0) as admin:
            admin.execute_command("CONFIG", "SET", "client-output-buffer-limit", "pubsub 256kb 128kb 60")
            owner = RingClient(server.name, runtime_dir=server.runtime_dir, ring_size=1 << 16, timeout=10.0)
            p = owner.pubsub()
            p.subscribe("firehose")
            assert p.get_message(timeout=5)["type"] == "subscribe"
            data = b"x" * 1024
            for _ in range(2000):
                admin.execute_command("PUBLISH", "firehose", data)     # never read by p
            server.wait_for_log("closed for overcoming of output buffer limits")
            with pytest.raises(ConnectionError):
                for _ in range(10_000):
                    p.get_messages(1000, timeout=1)
            p.close()
            owner.close()
    log = "".join(server.log)
    assert "killed by CLIENT KILL" not in log
