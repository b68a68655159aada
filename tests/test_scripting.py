"""Scripts as users lean on them (the replies themselves are test_scripting_differential.py's):
redis-py's Lock and a Script object on both goblin clients, the append-only file holding a
script's effects (MULTI ... EXEC, never the EVAL), so a random or time-dependent write replays
identically; inside MULTI/EXEC one block; and bad input — a compile error, a runtime error,
deep recursion, a huge table, redis.call with the wrong arity, a script that allocates without
bound under maxmemory — each an error reply with the server up."""

from __future__ import annotations

import re

import pytest

from goblin_ring import NoScriptError, RespClient, ResponseError, RingClient
from servers import GoblinServer


def client_of(server, transport):
    if transport == "ring":
        return RingClient(name=server.name, runtime_dir=server.runtime_dir, timeout=10.0)
    return RespClient(port=server.port, socket_timeout=10.0)


# ---- redis-py's Lock and Script on both goblin clients ----

def test_redis_pys_lock_acquires_extends_releases_and_another_client_takes_it(client, goblin):
    other = client_of(goblin, "resp" if isinstance(client, RingClient) else "ring")
    try:
        lock = client.lock("resource", timeout=10)
        assert lock.acquire(blocking=False) is True
        assert lock.owned() and lock.locked()
        assert other.lock("resource", timeout=10).acquire(blocking=False) is False
        assert lock.extend(20) is True and client.pttl("resource") > 10000
        assert lock.reacquire() is True and client.pttl("resource") <= 10000
        lock.release()
        assert not lock.locked()
        taken = other.lock("resource", timeout=10)
        assert taken.acquire(blocking=False) is True
        with pytest.raises(Exception, match="no longer owned|not owned"):   # redis-py's LockNotOwnedError
            lock.release()
        taken.release()
        with client.lock("with-block", timeout=5):
            assert client.exists("with-block") == 1
        assert client.exists("with-block") == 0
    finally:
        other.close()


def test_a_registered_script_loads_itself_again_after_script_flush(client):
    incr = client.register_script("return redis.call('incrby', KEYS[1], ARGV[1])")
    assert incr(keys=["n"], args=[2]) == 2
    assert client.script_exists(incr.sha, "0" * 40) == [True, False]
    assert client.script_flush() is True
    with pytest.raises(NoScriptError):
        client.evalsha(incr.sha, 1, "n", 1)
    assert incr(keys=["n"], args=[3]) == 5
    assert client.script_load("return 1") == "e0e1f9fabfc9d4800c877a703b823ac0578ff8db"
    assert client.evalsha_ro("e0e1f9fabfc9d4800c877a703b823ac0578ff8db", 0) == 1
    assert client.eval_ro("return redis.call('get', KEYS[1])", 1, "n") == b"5"


# ---- the append-only file gets the effects ----

RANDOM_WRITES = """
redis.call('set', KEYS[1], tostring(math.random()))
local t = redis.call('time')
redis.call('hset', KEYS[2], 'at', t[1] .. '.' .. t[2], 'n', math.random(1000000))
redis.call('rpush', KEYS[3], redis.call('get', KEYS[1]))
redis.call('del', 'missing')
return redis.call('get', KEYS[1])
"""


@pytest.mark.parametrize("transport", ["ring", "resp"])
def test_a_random_and_time_dependent_script_replays_identically_from_the_append_only_file(dirs, transport):
    runtime, data = dirs
    server = GoblinServer(runtime, "--appendonly", "yes", "--dir", str(data)).start()
    with client_of(server, transport) as c:
        c.select(2)
        for _ in range(3):
            c.eval(RANDOM_WRITES, 3, "r", "h", "l")
        c.eval("return redis.call('get', 'r')", 0)                        # a read: nothing logged
        c.eval("#!lua flags=no-writes\nreturn 1", 0)
        before = (c.get("r"), c.hgetall("h"), c.lrange("l", 0, -1))
    server.stop_cleanly()
    text = (data / "appendonly.aof").read_bytes()
    assert b"EVAL" not in text and b"TIME" not in text
    assert len(re.findall(rb"\*1\r\n\$5\r\nMULTI\r\n", text)) == 3      # one block per writing run
    assert re.search(rb"MULTI\r\n.*set.*hset.*rpush.*EXEC\r\n$", text, re.S | re.I)
    restarted = GoblinServer(runtime, "--appendonly", "yes", "--dir", str(data), name=server.name).start()
    try:
        with client_of(restarted, transport) as c:
            c.select(2)
            assert (c.get("r"), c.hgetall("h"), c.lrange("l", 0, -1)) == before
    finally:
        restarted.stop_cleanly()


def test_a_script_inside_multi_exec_is_one_block_with_the_transactions_other_commands(dirs):
    runtime, data = dirs
    server = GoblinServer(runtime, "--appendonly", "yes", "--dir", str(data)).start()
    with client_of(server, "ring") as c:
        with c.pipeline(transaction=True) as p:
            p.incr("a")
            p.eval("redis.call('incr', 'b'); return redis.call('incr', 'c')", 0)
            assert p.execute() == [1, 1]
    server.stop_cleanly()
    text = (data / "appendonly.aof").read_bytes()
    assert len(re.findall(rb"MULTI", text)) == 1 and len(re.findall(rb"EXEC", text)) == 1
    assert re.search(rb"MULTI\r\n.*INCR.*\$1\r\na\r\n.*INCR.*\$1\r\nb\r\n.*INCR.*\$1\r\nc\r\n.*EXEC\r\n$", text, re.S | re.I)


# ---- bad input: an error reply each, the server up ----

BAD_SCRIPTS = {
    "compile error": ("return 1 +", "Error compiling script"),
    "runtime error": ("return nil + 1", "attempt to perform arithmetic on a nil value"),
    "deep recursion": ("local function f(n) return f(n + 1) + 1 end return f(1)", "stack overflow"),
    "wrong arity": ("return redis.call('get', 'a', 'b')", "Wrong number of args calling Redis command from script"),
    "no arguments": ("return redis.call()", "Please specify at least one argument"),
    "table argument": ("return redis.call('set', 'k', {})", "must be strings or integers"),
}


@pytest.mark.parametrize("name", sorted(BAD_SCRIPTS))
def test_a_bad_script_is_an_error_reply_and_the_server_stays_up(name, client):
    script, message = BAD_SCRIPTS[name]
    with pytest.raises(ResponseError, match=re.escape(message)):
        client.eval(script, 0)
    assert client.ping() is True
    assert client.eval("return 'still here'", 0) == b"still here"


def test_a_huge_table_is_returned_whole(client):
    assert len(client.eval("local t = {} for i = 1, 200000 do t[i] = i end return t", 0)) == 200000
    assert client.eval("local s = string.rep('x', 4 * 1024 * 1024) return #s", 0) == 4 * 1024 * 1024


def test_a_script_that_allocates_without_bound_is_stopped_by_maxmemory(tmp_path):
    with GoblinServer(tmp_path, "--maxmemory", str(64 * 1024 * 1024)).start() as server:
        with client_of(server, "resp") as c:
            with pytest.raises(ResponseError, match="not enough memory"):
                c.eval("local t = {} local i = 0 while true do i = i + 1 t[i] = {i, i, i, i, i, i, i, i} end", 0)
            assert c.ping() is True
            assert c.eval("return #string.rep('y', 1000)", 0) == 1000
            assert c.set("after", "ok") is True


def test_the_asyncio_client_runs_scripts_and_redis_asyncios_lock(goblin):
    import asyncio

    from goblin_ring.asyncio import RingClient as AsyncRingClient

    async def run() -> list:
        client = await AsyncRingClient.connect(name=goblin.name, runtime_dir=goblin.runtime_dir, timeout=10.0)
        try:
            await client.delete("async-n", "async-lock")
            script = client.register_script("return redis.call('incrby', KEYS[1], ARGV[1])")
            seen = [await script(keys=["async-n"], args=[2])]
            await client.script_flush()
            seen.append(await script(keys=["async-n"], args=[3]))
            seen.append(await client.eval("return ARGV[1]", 0, "x"))
            lock = client.lock("async-lock", timeout=10)
            seen.append(await lock.acquire(blocking=False))
            seen.append(await lock.extend(5))
            await lock.release()
            seen.append(await client.exists("async-lock"))
            return seen
        finally:
            await client.aclose()

    assert asyncio.run(run()) == [2, 5, b"x", True, True, 0]


def test_redis_log_writes_into_the_server_log(tmp_path):
    with GoblinServer(tmp_path).start() as server:
        with client_of(server, "resp") as c:
            assert c.eval("redis.log(redis.LOG_WARNING, 'hello from', 'lua', 42)", 0) is None
            assert any("hello from lua 42" in line for line in server.wait_for_log("hello from lua 42"))


# ---- INFO memory: the scripting fields redis-server 7.0 shows ----

SCRIPT_INFO_FIELDS = ["used_memory_lua", "used_memory_vm_eval", "used_memory_lua_human", "used_memory_scripts_eval",
                      "number_of_cached_scripts", "number_of_functions", "number_of_libraries",
                      "used_memory_vm_functions", "used_memory_vm_total", "used_memory_vm_total_human",
                      "used_memory_functions", "used_memory_scripts", "used_memory_scripts_human"]


def scripting_fields(info_text):
    lines = [line.split(":", 1) for line in info_text.splitlines() if ":" in line]
    return [(name, value) for name, value in lines if name in SCRIPT_INFO_FIELDS]


def test_info_memory_counts_cached_scripts_and_the_lua_state(redis_server, goblin):
    redis = RespClient(port=redis_server.port, socket_timeout=10.0)
    ours = RespClient(port=goblin.port, socket_timeout=10.0)
    try:
        for c in (redis, ours):
            c.script_flush()
        # the same fields, in the same order, as redis-server 7.0's INFO memory
        expected = [name for name, _ in scripting_fields(redis.execute_command("INFO", "memory").decode())]
        info = dict(scripting_fields(ours.execute_command("INFO", "memory").decode()))
        assert list(info) == expected == SCRIPT_INFO_FIELDS
        assert info["number_of_cached_scripts"] == "0"
        bodies = [f"return {n}" for n in range(5)]
        for body in bodies:
            ours.script_load(body)
        ours.eval("return 'x'", 0)
        info = dict(scripting_fields(ours.execute_command("INFO", "memory").decode()))
        assert info["number_of_cached_scripts"] == "6"
        assert int(info["used_memory_lua"]) > 0 and info["used_memory_lua"] == info["used_memory_vm_eval"]
        assert int(info["used_memory_scripts_eval"]) >= sum(map(len, bodies)) + 6 * 40
        assert ours.info("memory")["number_of_cached_scripts"] == 6   # as a client parses it
        ours.script_flush()
        assert ours.info("memory")["number_of_cached_scripts"] == 0
    finally:
        redis.close()
        ours.close()


SHEBANG_CASES = ["#!lua\nreturn 1", "#!lua flags=allow-oom\nreturn 1", "#!lua flags=no-writes\nreturn 1", "return 1",
                 "return redis.call('set','k','v')", "#!lua\nreturn redis.call('get','a')"]


def flagged_script_admission(client) -> list:
    """Each script by EVAL and EVAL_RO past maxmemory, then the flag-less shebang by EVAL_RO
    under no limit: a reply or its error's text."""
    def outcome(call):
        try:
            return call()
        except Exception as error:   # noqa: BLE001 - the text is what is compared
            return re.sub(r"^(OOM|ERR) ", "", str(error))   # as redis-py's exceptions drop the code
    client.flushall()
    client.set("a", "x" * 100)
    client.config_set("maxmemory", 1)
    try:
        seen = [outcome(lambda: client.eval(s, 0)) for s in SHEBANG_CASES]
        seen += [outcome(lambda: client.eval_ro(s, 0)) for s in SHEBANG_CASES]
    finally:
        client.config_set("maxmemory", 0)
    seen += [outcome(lambda: client.eval_ro("#!lua\nreturn 1", 0)),
             outcome(lambda: client.eval_ro("#!lua\nreturn redis.call('set','k','v')", 0))]
    return [value.decode() if isinstance(value, bytes) else value for value in seen]


def test_a_shebang_script_is_admitted_by_its_flags_as_redis_7(client, redis_server):
    """#!lua without allow-oom/no-writes is refused past maxmemory (OOM) and by *_RO; a legacy
    script only when it writes."""
    import redis
    reference = redis.Redis(port=redis_server.port)
    try:
        expected = flagged_script_admission(reference)
    finally:
        reference.close()
    assert flagged_script_admission(client) == expected
    assert "maxmemory" in expected[0] and "write flag" in expected[-1]
