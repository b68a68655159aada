"""Standard tools work unchanged against goblin-ring: redis-cli (argv mode, commands piped
on stdin, RESP3 with -3), telnet-style inline commands, redis-benchmark's standard tests,
and redis-py sync and asyncio clients over RESP2 and RESP3 with pipelines.

Each test uses the module's own server (conftest.goblin); the tools come from Debian's
redis-tools, which .ci/run installs.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess

import pytest
import redis
import redis.asyncio

from resp_wire import raw_connection

TOOLS_TIMEOUT = 120


def tool(name: str) -> str:
    path = shutil.which(name)
    if not path:
        pytest.fail(f"{name} is not installed; .ci/run installs redis-tools")
    return path


def cli(goblin, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([tool("redis-cli"), "-p", str(goblin.port), *args], input=stdin, capture_output=True,
                          text=True, timeout=TOOLS_TIMEOUT)


@pytest.fixture(autouse=True)
def empty(goblin):
    with redis.Redis(port=goblin.port, protocol=2) as r:
        r.flushall()


def test_redis_cli_argv_mode(goblin):
    assert cli(goblin, "SET", "greeting", "hello world").stdout == "OK\n"
    assert cli(goblin, "GET", "greeting").stdout == "hello world\n"
    assert cli(goblin, "RPUSH", "l", "a", "b", "c").stdout == "3\n"
    assert cli(goblin, "LRANGE", "l", "0", "-1").stdout == "a\nb\nc\n"
    assert cli(goblin, "--no-raw", "GET", "missing").stdout == "(nil)\n"
    assert cli(goblin, "--no-raw", "INCR", "n").stdout == "(integer) 1\n"
    wrong = cli(goblin, "--no-raw", "LPUSH", "greeting", "x")
    assert "WRONGTYPE" in wrong.stdout
    assert cli(goblin, "-n", "5", "SET", "in5", "yes").stdout == "OK\n"      # -n selects a db
    assert cli(goblin, "-n", "5", "DBSIZE").stdout == "1\n"
    assert cli(goblin, "DBSIZE").stdout == "3\n"


def test_redis_cli_reads_commands_from_stdin_like_an_interactive_session(goblin):
    script = 'SET quoted "two words"\nGET quoted\nEXPIRE quoted 100\nTTL quoted\nPING\n'
    result = cli(goblin, stdin=script)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["OK", "two words", "1", "100", "PONG"]


def test_redis_cli_resp3_and_info_and_client_list(goblin):
    result = cli(goblin, "-3", "--no-raw", "HGETALL_IS_NOT_A_COMMAND")
    assert "unknown command" in result.stdout
    assert cli(goblin, "-3", "--no-raw", "GET", "missing").stdout == "(nil)\n"
    assert "redis_version:" in cli(goblin, "-3", "INFO", "server").stdout
    assert "cmd=client" in cli(goblin, "CLIENT", "LIST").stdout
    hello = cli(goblin, "-3", "HELLO", "3").stdout
    assert "proto" in hello and "standalone" in hello


def test_telnet_style_inline_commands(goblin):
    with raw_connection(goblin.port) as sock:
        sock.sendall(b'SET inline "with \\"quotes\\" and\\nnewline"\r\nGET inline\r\nPING\n')
        expected = b'+OK\r\n$25\r\nwith "quotes" and\nnewline\r\n+PONG\r\n'
        assert sock.read_exactly(len(expected)) == expected


def test_redis_benchmark_standard_tests_run_without_errors(goblin):
    tests = "ping,set,get,incr,lpush,rpush,lpop,rpop,lrange_100,mset"
    result = subprocess.run(
        [tool("redis-benchmark"), "-p", str(goblin.port), "-t", tests, "-n", "2000", "-c", "4", "-q", "--csv"],
        capture_output=True, text=True, timeout=TOOLS_TIMEOUT)
    assert result.returncode == 0, result.stderr
    assert "ERR" not in result.stdout + result.stderr and "error" not in (result.stdout + result.stderr).lower()
    rows = [line.split(",")[0].strip('"') for line in result.stdout.splitlines()[1:] if line]
    for name in ("PING_INLINE", "PING_MBULK", "SET", "GET", "INCR", "LPUSH", "RPUSH", "LPOP", "RPOP",
                 "LRANGE_100 (first 100 elements)", "MSET (10 keys)"):
        assert name in rows, (name, rows)
    with redis.Redis(port=goblin.port, protocol=2) as r:
        assert len(r.get("key:__rand_int__")) == 3   # what SET wrote (-d 3 bytes by default)
        assert r.info("commandstats")["cmdstat_lrange"]["failed_calls"] == 0


@pytest.mark.parametrize("protocol", [2, 3])
def test_redis_py_sync_pipelines(goblin, protocol):
    with redis.Redis(port=goblin.port, protocol=protocol, decode_responses=True) as r:
        with r.pipeline(transaction=False) as pipe:
            pipe.set("s", "v", ex=100).get("s").ttl("s").rpush("l", *range(10)).lrange("l", 2, 4)
            pipe.lpop("l", 2).incrby("n", 5).mget("s", "missing").delete("s").exists("s")
            assert pipe.execute() == [True, "v", 100, 10, ["2", "3", "4"], ["0", "1"], 5, ["v", None], 1, 0]
        with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
            r.get("l")
        assert r.client_info()["resp"] == str(protocol)


@pytest.mark.parametrize("protocol", [2, 3])
def test_redis_py_asyncio_clients_and_pipelines(goblin, protocol):
    async def scenario():
        client = redis.asyncio.Redis(port=goblin.port, protocol=protocol)
        try:
            await client.rpush("queue", *[f"job-{i}" for i in range(100)])
            async with client.pipeline(transaction=False) as pipe:
                for _ in range(100):
                    pipe.lpop("queue")
                popped = await pipe.execute()
            assert popped == [f"job-{i}".encode() for i in range(100)]
            # many concurrent connections from one event loop
            results = await asyncio.gather(*(client.incr("counter") for _ in range(50)))
            assert sorted(results) == list(range(1, 51))
            assert await client.get("counter") == b"50"
            info = await client.info("server")
            assert info["goblin_version"]
        finally:
            await client.aclose()

    asyncio.run(scenario())


@pytest.mark.parametrize("protocol", [2, 3])
def test_redis_py_transaction_pipelines_run_multi_exec(goblin, protocol):
    with redis.Redis(port=goblin.port, protocol=protocol) as r:
        with r.pipeline() as pipe:                       # redis-py's default: MULTI ... EXEC
            pipe.rpush("tx", "a", "b").lpop("tx").set("after", 1).llen("tx")
            assert pipe.execute() == [2, b"a", True, 1]
        with r.pipeline() as pipe:                       # a runtime error fails only its own command
            pipe.set("str", "x").lpush("str", "y").get("str")
            results = pipe.execute(raise_on_error=False)
            assert results[0] is True and isinstance(results[1], redis.ResponseError) and results[2] == b"x"
        with pytest.raises(redis.ResponseError, match="EXECABORT|unknown command"):
            with r.pipeline() as pipe:                   # a queue-time error aborts the whole transaction
                pipe.set("never", 1).execute_command("NOSUCHCOMMAND")
                pipe.execute()
        assert r.exists("never") == 0
        with pytest.raises(redis.ResponseError, match="EXEC without MULTI"):
            r.execute_command("EXEC")
        with pytest.raises(redis.ResponseError, match="DISCARD without MULTI"):
            r.execute_command("DISCARD")


def test_multi_queues_discard_drops_and_nesting_is_refused(goblin):
    with raw_connection(goblin.port) as sock:
        sock.sendall(b"MULTI\r\nSET a 1\r\nMULTI\r\nDISCARD\r\nGET a\r\nMULTI\r\nINCR c\r\nINCR c\r\nEXEC\r\n")
        expected = (b"+OK\r\n+QUEUED\r\n-ERR MULTI calls can not be nested\r\n+OK\r\n$-1\r\n"
                    b"+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n:1\r\n:2\r\n")
        assert sock.read_exactly(len(expected)) == expected
