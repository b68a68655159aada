"""Redis 7 functions as users lean on them (the replies themselves are
test_functions_differential.py's): redis-py's function_* and fcall/fcall_ro on RingClient,
RespClient and the asyncio client giving what redis-py gives from redis-server; FUNCTION DUMP
payloads crossing between goblin and redis-server 7.0 both ways (redis-server's LZF-compressed
code included); libraries surviving a restart through the snapshot and through the append-only
file (FUNCTION LOAD logged, a function's effects logged as MULTI ... EXEC, never the FCALL, and
a rewrite writing FUNCTION LOADs); a client shared by threads and used after fork; and bad input
— each an error reply with the server up."""

from __future__ import annotations

import asyncio
import os
import re
import threading
import time

import pytest
import redis

from goblin_ring import RespClient, ResponseError, RingClient
from conftest import make_client
from servers import GoblinServer

COUNTER = """#!lua name=counter
local function incr(keys, args)
  redis.call('incrby', keys[1], args[1])
  redis.call('set', keys[2], tostring(math.random()))
  return redis.call('get', keys[1])
end
redis.register_function('incr', incr)
redis.register_function{function_name='peek', callback=function(keys) return redis.call('get', keys[1]) end,
                        flags={'no-writes'}, description='reads a counter'}
"""


def by_name(listing: list) -> list:
    """FUNCTION LIST with each library's functions sorted by name (redis-server lists them in
    its hash table's order, goblin in registration order)."""
    out = []
    for library in listing:
        library = list(library)
        at = library.index(b"functions") + 1
        library[at] = sorted(library[at], key=lambda function: function[1])
        out.append(library)
    return out


def exercise(c) -> list:
    """redis-py's function_* calls in a row, with what each gives (errors as their text)."""
    out = []

    def step(call):
        try:
            out.append(call())
        except (ResponseError, redis.ResponseError) as error:   # redis-py drops the "ERR " prefix
            text = str(error)
            out.append(("error", text[4:] if text.startswith("ERR ") else text))

    c.flushall()
    step(lambda: c.function_flush())
    step(lambda: c.function_load(COUNTER))
    step(lambda: c.function_load(COUNTER))
    step(lambda: c.function_load(COUNTER, replace=True))
    step(lambda: c.fcall("incr", 2, "n", "r", 5))
    step(lambda: c.fcall_ro("peek", 1, "n"))
    step(lambda: c.fcall_ro("incr", 2, "n", "r", 5))
    step(lambda: by_name(c.function_list()))
    step(lambda: by_name(c.function_list(library="count*", withcode=True)))
    step(lambda: by_name(c.function_list(library=None)))
    step(lambda: c.function_stats())
    step(lambda: c.function_kill())
    payload = c.function_dump()
    step(lambda: c.function_restore(payload))
    step(lambda: c.function_restore(payload, "REPLACE"))
    step(lambda: c.function_delete("counter"))
    step(lambda: c.fcall("incr", 2, "n", "r", 1))
    step(lambda: c.function_restore(payload, "FLUSH"))
    step(lambda: c.fcall("incr", 2, "n", "r", 1))
    step(lambda: c.function_delete("nosuch"))
    step(lambda: c.function_flush("ASYNC"))
    step(lambda: c.function_stats())
    return out


@pytest.mark.parametrize("transport", ["ring", "resp"])
def test_redis_pys_function_calls_give_what_they_give_on_redis_server(transport, goblin, redis_server):
    reference = redis.Redis(port=redis_server.port, socket_timeout=10)
    try:
        expected = exercise(reference)
    finally:
        reference.close()
    with make_client(goblin, transport) as c:
        got = exercise(c)
    assert got == expected
    assert got[1] == b"counter" and got[4] == b"5" and got[5] == b"5"


def test_the_asyncio_client_loads_and_calls_functions(goblin):
    from goblin_ring.asyncio import RingClient as AsyncRingClient

    async def main():
        client = AsyncRingClient(name=goblin.name, runtime_dir=goblin.runtime_dir)
        try:
            await client.flushall()
            await client.function_flush()
            assert await client.function_load(COUNTER) == b"counter"
            assert await client.fcall("incr", 2, "a", "r", 3) == b"3"
            assert await client.fcall_ro("peek", 1, "a") == b"3"
            listed = await client.function_list()
            assert listed[0][:4] == [b"library_name", b"counter", b"engine", b"LUA"]
            assert (await client.function_stats())[3] == [b"LUA", [b"libraries_count", 1, b"functions_count", 2]]
            payload = await client.function_dump()
            assert await client.function_delete("counter") is True
            assert await client.function_restore(payload) is True
            assert await client.fcall("incr", 2, "a", "r", 1) == b"4"
            assert await client.function_flush() is True
        finally:
            await client.close()

    asyncio.run(main())


# ---- FUNCTION DUMP between goblin and redis-server ----

BIG = "#!lua name=big\n" + "".join(
    f"redis.register_function('big{i}', function(keys, args) return 'padding padding padding {i}' end)\n"
    for i in range(40))


def test_dump_payloads_cross_between_goblin_and_redis_server(goblin, redis_server):
    reference = redis.Redis(port=redis_server.port, socket_timeout=10)
    try:
        reference.function_flush()
        reference.function_load(BIG)                     # long and repetitive: redis-server compresses it (LZF)
        reference.function_load(COUNTER)
        from_redis = reference.function_dump()
        with make_client(goblin, "resp") as c:
            c.flushall()
            c.function_flush()
            assert c.function_restore(from_redis) is True
            assert c.fcall("big39", 0) == b"padding padding padding 39"
            assert c.fcall("incr", 2, "x", "r", 2) == b"2"
            assert sorted(lib[1] for lib in c.function_list()) == [b"big", b"counter"]
            assert sorted(lib[7] for lib in c.function_list(withcode=True)) == sorted([BIG.encode(), COUNTER.encode()])
            from_goblin = c.function_dump()
            c.function_flush()
        reference.function_flush()
        assert reference.function_restore(from_goblin) is True
        assert reference.fcall("big7", 0) == b"padding padding padding 7"
        with pytest.raises(redis.ResponseError, match="already exists"):
            reference.function_restore(from_goblin)
    finally:
        reference.function_flush()
        reference.close()


# ---- restart: the snapshot and the append-only file ----

def test_functions_survive_a_restart_through_the_snapshot(dirs):
    runtime, data = dirs
    server = GoblinServer(runtime, "--dir", str(data)).start()
    with make_client(server, "ring") as c:
        c.function_load(COUNTER)
        c.fcall("incr", 2, "n", "r", 7)
        c.save()
    server.stop_cleanly()
    restarted = GoblinServer(runtime, "--dir", str(data), name=server.name).start()
    try:
        with make_client(restarted, "resp") as c:
            assert c.fcall_ro("peek", 1, "n") == b"7"
            assert c.fcall("incr", 2, "n", "r", 1) == b"8"
            assert c.function_list(withcode=True)[0][7] == COUNTER.encode()
            c.function_delete("counter")
            c.save()
    finally:
        restarted.stop_cleanly()
    again = GoblinServer(runtime, "--dir", str(data), name=server.name).start()   # a delete is saved too
    try:
        with make_client(again, "resp") as c:
            assert c.function_list() == [] and c.get("n") == b"8"
    finally:
        again.stop_cleanly()


@pytest.mark.parametrize("transport", ["ring", "resp"])
def test_functions_and_their_effects_survive_a_restart_through_the_append_only_file(dirs, transport):
    runtime, data = dirs
    server = GoblinServer(runtime, "--appendonly", "yes", "--dir", str(data)).start()
    with make_client(server, transport) as c:
        c.function_load(COUNTER)
        c.fcall("incr", 2, "n", "r", 2)
        c.fcall("incr", 2, "n", "r", 3)
        c.fcall_ro("peek", 1, "n")                      # a read: nothing logged
        before = (c.get("n"), c.get("r"))
    server.stop_cleanly()
    text = (data / "appendonly.aof").read_bytes()
    assert b"FCALL" not in text and text.count(b"FUNCTION") == 1
    assert len(re.findall(rb"\*1\r\n\$5\r\nMULTI\r\n", text)) == 2    # one block per writing call
    restarted = GoblinServer(runtime, "--appendonly", "yes", "--dir", str(data), name=server.name).start()
    try:
        with make_client(restarted, transport) as c:
            assert (c.get("n"), c.get("r")) == before       # the random value replayed, not recomputed
            assert c.fcall("incr", 2, "n", "r", 1) == b"6"
            assert c.bgrewriteaof()
            deadline = time.monotonic() + 20
            while (c.info("persistence")["aof_rewrites"] < 1 or c.info("persistence")["aof_rewrite_in_progress"]) \
                    and time.monotonic() < deadline:
                time.sleep(0.02)                         # polls the rewrite's end (the cron reaps the child)
            assert c.info("persistence")["aof_last_bgrewrite_status"] == "ok"
    finally:
        restarted.stop_cleanly()
    assert b"FUNCTION" in (data / "appendonly.aof").read_bytes()
    again = GoblinServer(runtime, "--appendonly", "yes", "--dir", str(data), name=server.name).start()
    try:
        with make_client(again, transport) as c:
            assert c.fcall_ro("peek", 1, "n") == b"6"
    finally:
        again.stop_cleanly()


# ---- threads and fork ----

def test_a_client_shared_by_threads_and_used_after_fork_calls_functions(goblin):
    with make_client(goblin, "ring") as c:
        c.flushall()
        c.function_flush()
        c.function_load(COUNTER)
        errors = []

        def work():
            try:
                for _ in range(200):
                    c.fcall("incr", 2, "shared", "r", 1)
            except Exception as error:   # noqa: BLE001 - reported below
                errors.append(error)

        threads = [threading.Thread(target=work) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == [] and c.get("shared") == b"800"
        pid = os.fork()
        if pid == 0:
            status = 1
            try:
                status = 0 if c.fcall("incr", 2, "shared", "r", 10) == b"810" else 2
            finally:
                os._exit(status)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert c.fcall_ro("peek", 1, "shared") == b"810"
        c.function_flush()


# ---- bad input ----

@pytest.mark.parametrize("transport", ["ring", "resp"])
def test_bad_libraries_are_errors_and_the_server_stays_up(goblin, transport):
    with make_client(goblin, transport) as c:
        c.function_flush()
        bad = {
            "no name": ("#!lua\nredis.register_function('f', function() return 1 end)", "Library name was not given"),
            "no shebang": ("redis.register_function('f', function() return 1 end)", "Missing library metadata"),
            "duplicate function": ("#!lua name=d\nredis.register_function('f', function() end)\n"
                                   "redis.register_function('f', function() end)",
                                   "Function already exists in the library"),
            "redis.call at load": ("#!lua name=c\nredis.call('set', 'x', 1)",
                                   "nonexistent global variable 'call'"),
            "no functions": ("#!lua name=e\nlocal x = 1", "No functions registered"),
            "endless load": ("#!lua name=loop\nwhile true do end", "FUNCTION LOAD timeout"),
            "huge code": ("#!lua name=huge\nlocal s = [[" + "x" * (8 << 20) + "]]", "No functions registered"),
        }
        for name, (code, message) in bad.items():
            with pytest.raises(ResponseError, match=re.escape(message)):
                c.function_load(code)
            assert c.ping() is True, name
        c.function_load("#!lua name=ok\nlocal saved = redis\n"
                        "redis.register_function('later', function() return saved.register_function('x', function() end) end)")
        with pytest.raises(ResponseError, match="can only be called on FUNCTION LOAD command"):
            c.fcall("later", 0)
        with pytest.raises(ResponseError, match="Function LATER already exists"):
            c.function_load("#!lua name=ok2\nredis.register_function('LATER', function() end)")
        with pytest.raises(ResponseError, match="DUMP payload version or checksum are wrong"):
            c.function_restore(b"\xf5\x00garbage")
        with pytest.raises(ResponseError, match="attempt to call field 'register_function'"):
            c.eval("redis.register_function('f', function() end)", 0)
        assert c.function_list(library="ok")[0][1] == b"ok"
        assert c.function_flush() is True and c.ping() is True


# ---- over the ring: EVALSHA and FCALL are typed messages ----

def test_evalsha_and_fcall_build_their_typed_ring_messages_and_bad_key_counts_stay_argv():
    from goblin_ring._native import lib
    from test_command_table import build, bytes_of

    index, request, _ = build(b"FCALL", b"incr", b"2", b"k1", b"k2", b"a1")
    assert index >= 0 and request.template_id == lib.GR_T_FCALL
    assert (bytes_of(request.arg1), request.count, request.flag) == (b"incr", 2, 0)
    assert [bytes_of(request.items[i]) for i in range(request.item_count)] == [b"k1", b"k2", b"a1"]
    _, request, _ = build(b"EVALSHA_RO", b"ab" * 20, b"0", b"x")
    assert (request.template_id, request.flag, request.count, request.item_count) == (lib.GR_T_EVALSHA, 1, 0, 1)
    for argv in ([b"FCALL", b"f", b"x"], [b"FCALL", b"f", b"3", b"k"], [b"EVALSHA", b"s", b"-1"]):
        index, request, _ = build(*argv)
        assert index >= 0 and request.template_id == lib.GR_T_COMMAND and request.item_count == len(argv)


@pytest.mark.parametrize("transport", ["ring", "resp"])
def test_typed_fcall_and_evalsha_inside_a_transaction(goblin, transport):
    with make_client(goblin, transport) as c:
        c.flushall()
        c.function_flush()
        c.function_load(COUNTER)
        sha = c.script_load("return redis.call('incrby', KEYS[1], ARGV[1])")
        with c.pipeline(transaction=True) as p:
            p.fcall("incr", 2, "t", "r", 2).evalsha(sha, 1, "t", 3).fcall_ro("peek", 1, "t")
            assert p.execute() == [b"2", 5, b"5"]
        many = [f"a{i}" for i in range(100)]
        assert c.fcall("incr", 2, "t", "r", 1, *many) == b"6"       # past the handler's stack arrays
        c.function_flush()
