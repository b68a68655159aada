"""Scripts against redis-server 7.0: every case (EVAL, EVALSHA, SCRIPT ..., with setup commands)
runs on a flushed goblin and a flushed redis-server, and the raw replies must be the same bytes —
over RESP2 and over RESP3 (HELLO 3) — and, over the ring, the same Python values redis-py reads
from redis-server. The cases cover the reply conversions both ways (RESP2 and redis.setresp(3)),
the error texts (compile, runtime, redis.call's, the `script: <sha>, on @user_script:N.`
suffix), the sandbox (nonexistent and read-only globals, removed functions), the redis.* API,
shebang flags, EVAL_RO, NOSCRIPT and Redis's math.random sequence after a seed.

cjson, cmsgpack, bit and struct are branch issue-32-libs' and have their own tests there."""

from __future__ import annotations

import pytest
import redis

from goblin_ring import ResponseError
from resp_wire import raw_connection


def E(script: str, *keys_and_args, numkeys: int | None = None) -> tuple:
    """EVAL script with keys_and_args; numkeys 0 unless given."""
    return ("EVAL", script, str(0 if numkeys is None else numkeys), *map(str, keys_and_args))


# Each case: a list of commands, run in order; every reply is compared.
CASES: dict[str, list[tuple]] = {
    "array-stops-at-nil-and-truncates-numbers": [E("return {1,2,3.7,'a',nil,4}")],
    "nested-tables": [E("return {1, {2, {3, 'x'}}, {}}")],
    "status-and-error-tables": [E("return {ok='fine'}"), E("return {err='bad thing'}"), E("return {err='MY code'}")],
    "newlines-in-status-and-error": [E("return {err='a\\r\\nb'}"), E("return {ok='a\\r\\nb'}")],
    "non-string-err-and-ok-are-plain-tables": [E("return {err=5}"), E("return {ok=5}")],
    "errors-and-statuses-inside-arrays": [E("return {'a', {err='inner'}, {ok='fine'}}")],
    "booleans-and-nil": [E("return true"), E("return false"), E("return nil"), E("return {true, false, 1}")],
    "numbers": [E("return 3.99"), E("return -3.99"), E("return 1e20"), E("return -1e30"), E("return 0/0")],
    "double-map-set-big-number-verbatim-in-resp2": [
        E("return {double=3.5}"), E("return {map={a=1}}"), E("return {set={a=true}}"),
        E("return {big_number='123'}"), E("return {verbatim_string={format='txt', string='hello'}}")],
    "keys-and-argv": [E("return {KEYS[1], ARGV[1], #KEYS, #ARGV}", "k1", "a1", numkeys=1),
                      E("KEYS[1] = 'y'; return KEYS[1]", "a", numkeys=1)],
    "numkeys-errors": [("EVAL", "return 1", "-1"), ("EVAL", "return 1", "5", "a"), ("EVAL", "return 1", "abc"),
                       ("EVAL", "return 1"), ("EVALSHA", "x")],
    "call-replies-to-lua-resp2": [
        ("HSET", "h", "f", "v"), ("SADD", "s", "m"), ("ZADD", "z", "1.5", "m"), ("RPUSH", "l", "a", "b"),
        E("return redis.call('hgetall', 'h')"), E("return redis.call('smembers', 's')"),
        E("return redis.call('zscore', 'z', 'm')"), E("return redis.call('lrange', 'l', 0, -1)"),
        E("return redis.call('get', 'nokey')"), E("return type(redis.call('get', 'nokey'))"),
        E("return redis.call('ping')"), E("return redis.pcall('ping')['ok']"),
        E("return redis.call('incrbyfloat', 'f', '1.5')"), E("local t = redis.call('time'); return #t")],
    "call-replies-to-lua-resp3": [
        ("HSET", "h", "f", "v"), ("SADD", "s", "m"), ("ZADD", "z", "1.5", "m"),
        E("redis.setresp(3); return redis.call('hgetall', 'h')"),
        E("redis.setresp(3); return redis.call('hgetall', 'h')['map']['f']"),
        E("redis.setresp(3); return redis.call('smembers', 's')"),
        E("redis.setresp(3); return redis.call('smembers', 's')['set']['m']"),
        E("redis.setresp(3); return redis.call('zscore', 'z', 'm')"),
        E("redis.setresp(3); return redis.call('zscore', 'z', 'm')['double']"),
        E("redis.setresp(3); return type(redis.call('get', 'nokey'))"),
        E("redis.setresp(3); return {double=3.14159}"), E("redis.setresp(3); return {true, false}"),
        E("redis.setresp(3); return redis.pcall('nosuch')")],
    "arguments-as-redis-formats-them": [
        E("return redis.call('set', 'x', 3.5)"), ("GET", "x"), E("return redis.call('set', 'x', 0.1)"), ("GET", "x"),
        E("return redis.call('set', 'x', 1e20)"), ("GET", "x"), E("return redis.call('set', 'x', 1/3)"), ("GET", "x")],
    "call-errors": [
        E("return redis.call('nosuch')"), E("return redis.call('get')"), E("return redis.pcall('get')"),
        E("return redis.call()"), E("return redis.call(1)"), E("return redis.call('set', {}, 'x')"),
        ("SET", "k", "v"), E("return redis.call('lpush', 'k', 'v')"), E("return redis.pcall('lpush', 'k', 'v')"),
        E("return redis.pcall('lpush', 'k', 'x')['err']"), E("local r = redis.pcall('nosuch'); return r['err']")],
    "commands-a-script-may-not-run": [
        E("return redis.call('eval', 'return 1', 0)"), E("return redis.call('multi')"),
        E("return redis.call('blpop', 'q1', 0)"), E("return redis.call('subscribe', 'c')"),
        E("return redis.call('client', 'list')"), E("return redis.call('script', 'load', 'return 1')"),
        E("return redis.call('watch', 'a')"), E("return redis.call('hello', '3')")],
    "runtime-errors": [E("error('boom')"), E("error('line\\nbreak')"), E("error({err='MYERR custom'})"),
                       E("error({err='custom no prefix'})"), E("error(nil)"), E("error(5)"),
                       E("local function f() return f() + 1 end return f()")],
    "compile-errors": [E("return 1 +"), ("SCRIPT", "LOAD", "return +")],
    "sandbox-globals": [
        E("return x"), E("x = 5"), E("string.x = 1"), E("redis.x = 1"), E("rawset(_G, 'x', 1)"),
        E("rawset(redis, 'x', 1)"), E("setmetatable(_G, nil)"), E("return type(_G)"), E("return _G"),
        E("return tostring(rawget(_G, 'KEYS') ~= nil)"), E("return getmetatable('').__index == string"),
        E("local t = {} setmetatable(t, {}) return 1"),
        E("local n = 0 for k, v in pairs(string) do n = n + 1 end return n"),
        E("local n = 0 for k, v in pairs(redis) do n = n + 1 end return n")],
    "removed-and-kept-functions": [
        E("return os"), E("return loadfile"), E("return print"), E("return type(debug)"), E("return type(getfenv)"),
        E("return type(newproxy)"), E("return type(module)"), E("return type(require)"),
        E("return type(loadstring)"), E("return loadstring('return 1')()"), E("return _VERSION"),
        E("return type(gcinfo)"), E("return type(load)"), E("return type(unpack)"), E("return coroutine.running()")],
    "redis-api": [
        E("return redis.error_reply('x')"), E("return redis.error_reply('-X y')"), E("return redis.error_reply()"),
        E("return redis.status_reply('x')"), E("return redis.status_reply(5)"), E("return redis.sha1hex('')"),
        E("return redis.sha1hex(5)"), E("return redis.sha1hex()"), E("return redis.log(redis.LOG_WARNING, 'hello')"),
        E("redis.log(99, 'x')"), E("redis.log(redis.LOG_WARNING)"), E("return redis.setresp()"),
        E("return redis.setresp(4)"), E("return redis.setresp(3)"), E("return redis.set_repl(redis.REPL_ALL)"),
        E("return redis.set_repl(99)"), E("return redis.replicate_commands()"),
        E("return {redis.REPL_ALL, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA, redis.REPL_NONE, "
          "redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING}"),
        E("return redis.breakpoint()"), E("return redis.debug('x')"), E("return type(redis.acl_check_cmd)")],
    "math-random-after-a-seed": [E("math.randomseed(10); return {math.random(1000), math.random(1000)}"),
                                 E("math.randomseed(3); return {tostring(math.random()), math.random(5, 9)}")],
    "script-cache": [
        ("SCRIPT", "LOAD", "return 1"), ("SCRIPT", "EXISTS", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0000"),
        ("EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0"),
        ("EVALSHA", "E0E1F9FABFC9D4800C877A703B823AC0578FF8DB", "0"),
        ("SCRIPT", "FLUSH", "ASYNC"), ("EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0"),
        ("SCRIPT", "EXISTS", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db"), ("EVALSHA", "e0e1", "0"),
        ("SCRIPT", "FLUSH", "BAD"), ("SCRIPT", "FLUSH", "SYNC", "x"), ("SCRIPT", "KILL"), ("SCRIPT",),
        ("SCRIPT", "FOO"), ("SCRIPT", "EXISTS"), ("SCRIPT", "LOAD"), ("SCRIPT", "DEBUG", "no")],
    "read-only-scripts": [E("return redis.call('set','a','b')"), ("EVAL_RO", "return redis.call('set','a','b')", "0"),
                          ("EVAL_RO", "return redis.call('get','a')", "0"),
                          E("#!lua flags=no-writes\nreturn redis.call('set','a','b')")],
    "shebang": [E("#!lua\nerror('x')"), E("#!lua flags=bogus\nreturn 1"), E("#!lua name=x\nreturn 1"),
                E("#!luax\nreturn 1"), E("#!lua flags=allow-oom,no-cluster\nreturn 1"), E("#!lua flags=\nreturn 1"),
                E("#!lua  flags=no-writes\nreturn 2"), E("#!lua flags=no-writes"),
                E("#!lua\nreturn redis.call('get',KEYS[1])", "a", numkeys=1)],
    "select-in-a-script-is-the-scripts-own": [E("redis.call('select', 5); return redis.call('set', 'x', 'in5')"),
                                              ("GET", "x"), ("SELECT", "5"), ("GET", "x"), ("SELECT", "0")],
    "writes-and-reads-back": [E("redis.call('rpush', KEYS[1], 'a', 'b'); redis.call('hset', KEYS[2], 'f', 1); "
                                "return {redis.call('lrange', KEYS[1], 0, -1), redis.call('hincrby', KEYS[2], 'f', 2)}",
                                "list", "hash", numkeys=2),
                              ("LRANGE", "list", "0", "-1"), ("HGETALL", "hash")],
}


def run_raw(port: int, protocol: int, commands: list[tuple]) -> list[bytes]:
    with raw_connection(port) as conn:
        if protocol == 3:
            conn.request("HELLO", "3")
        conn.request("FLUSHALL")
        replies = [conn.request(*command) for command in commands]
        conn.request("SCRIPT", "FLUSH")
        return replies


@pytest.mark.parametrize("protocol", [2, 3], ids=["resp2", "resp3"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_script_gives_redis_servers_bytes_over_resp(case, protocol, goblin, redis_server):
    expected = run_raw(redis_server.port, protocol, CASES[case])
    got = run_raw(goblin.port, protocol, CASES[case])
    for command, want, have in zip(CASES[case], expected, got):
        assert have == want, f"{command!r}"


def error_text(error: Exception) -> str:
    """An error's text without the codes redis-py drops ("ERR ", "NOSCRIPT ") and goblin's
    clients keep."""
    text = str(error)
    for code in ("ERR ", "NOSCRIPT "):
        if text.startswith(code):
            return text[len(code):]
    return text


def normalise(value):
    """Replies as both clients give them, errors (raised or inside arrays) as their text."""
    if isinstance(value, Exception):
        return ("error", error_text(value))
    if isinstance(value, list):
        return [normalise(item) for item in value]
    return value


def run_values(client, commands: list[tuple]) -> list:
    client.execute_command("FLUSHALL")
    values = []
    for command in commands:
        try:
            values.append(normalise(client.execute_command(*command)))
        except (ResponseError, redis.ResponseError) as error:
            values.append(("error", error_text(error)))
    client.execute_command("SCRIPT", "FLUSH")
    return values


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_script_over_the_ring_gives_what_redis_py_reads_from_redis_server(case, ring, redis_server):
    reference = redis.Redis(port=redis_server.port, protocol=2, socket_timeout=10)
    reference.response_callbacks.clear()   # the replies as read, as RingClient.execute_command gives them
    try:
        expected = run_values(reference, CASES[case])
    finally:
        reference.close()
    assert run_values(ring, CASES[case]) == expected
