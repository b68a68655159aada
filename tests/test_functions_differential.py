"""Redis 7 functions against redis-server 7.0: FUNCTION LOAD/LIST/DELETE/FLUSH/DUMP/RESTORE/
STATS/KILL/HELP, FCALL and FCALL_RO. Every case runs on a flushed goblin and a flushed
redis-server and the raw replies must be the same bytes over RESP2 and RESP3; over the ring, the
same Python values redis-py reads from redis-server. The cases cover the library metadata's
errors, redis.register_function's two forms and every error it raises, the load-time API (only
register_function, log and the version: redis.call or `string` at load is the nonexistent-global
error), runtime errors with `script: <function>, on @user_function:N.`, flags (no-writes,
allow-oom, FCALL_RO), LIBRARYNAME/WITHCODE, RESTORE's policies and DUMP's payload.

FUNCTION LIST's order is a hash table's on redis-server, so the cases list one library at a time
(or ones with one function each, matched by pattern); goblin lists a library's functions in the
order they were registered."""

from __future__ import annotations

import pytest
import redis

from goblin_ring import ResponseError
from resp_wire import raw_connection


def L(name: str, body: str) -> tuple:
    """FUNCTION LOAD of library `name` with body after the shebang line."""
    return ("FUNCTION", "LOAD", f"#!lua name={name}\n{body}")


def R(name: str, body: str) -> str:
    return f"redis.register_function('{name}', function(keys, args) {body} end)"


CASES: dict[str, list[tuple]] = {
    "load-and-call": [
        L("lib", R("f", "return {keys[1], args[1], #keys, #args}")), ("FCALL", "f", "1", "k", "a"),
        ("FCALL", "F", "0"), ("FCALL_RO", "f", "0"), ("FUNCTION", "LIST")],
    "metadata-errors": [
        ("FUNCTION", "LOAD", "return 1"), ("FUNCTION", "LOAD", "#!lua\nreturn 1"),
        ("FUNCTION", "LOAD", "#!lua name=x"), ("FUNCTION", "LOAD", "#!lua name=x foo=bar\n"),
        ("FUNCTION", "LOAD", "#!js name=x\n"), ("FUNCTION", "LOAD", "#!lua name=a-b\n"),
        ("FUNCTION", "LOAD", "#!lua name=\n"), ("FUNCTION", "LOAD", "#!lua name=a name=b\n"),
        ("FUNCTION", "LOAD", "#!lua  NAME=a\n"), ("FUNCTION", "LOAD", "#!LUA name=a\n" + R("f", "return 1")),
        ("FUNCTION", "LOAD", "#!lua name=b\nlocal x = 1 +"), ("FUNCTION", "LIST")],
    "options": [
        ("FUNCTION", "LOAD", "replace"), ("FUNCTION", "LOAD", "foo", "#!lua name=b\n" + R("f", "return 1")),
        ("FUNCTION", "LOAD", "REPLACE", "replace", "#!lua name=b\n" + R("f", "return 1")),
        L("b", R("g", "return 2")), ("FUNCTION", "LOAD", "REPLACE", "#!lua name=b\n" + R("g", "return 2")),
        ("FCALL", "f", "0"), ("FCALL", "g", "0"), ("FUNCTION", "LOAD"), ("FUNCTION", "LIST", "WITHCODE")],
    "register-function-errors": [
        L("a1", "redis.register_function('g')"), L("a2", "redis.register_function('g', 5)"),
        L("a3", "redis.register_function({}, function() end)"), L("a4", "redis.register_function()"),
        L("a5", "redis.register_function('x', function() end, 5)"),
        L("a6", "redis.register_function({function_name='x'})"),
        L("a7", "redis.register_function({callback=function() end})"),
        L("a8", "redis.register_function({function_name='x', callback=function() end, foo=1})"),
        L("a9", "redis.register_function({function_name='x', callback=5})"),
        L("a10", "redis.register_function({function_name='x', callback=function() end, flags='no-writes'})"),
        L("a11", "redis.register_function({function_name='x', callback=function() end, flags={'bad'}})"),
        L("a12", "redis.register_function({function_name='x', callback=function() end, flags={5}})"),
        L("a13", "redis.register_function({function_name={}, callback=function() end})"),
        L("a14", "redis.register_function({function_name='x', callback=function() end, description={}})"),
        L("a15", "redis.register_function('', function() end)"), L("a16", "redis.register_function('a b', function() end)"),
        L("a17", "redis.register_function('g', function() end) redis.register_function('G', function() end)"),
        L("a18", "local x = 1"), ("FUNCTION", "STATS")],
    "load-time-api": [
        L("c1", "local s = string.rep('a', 3)"), L("c2", "redis.call('set', 'a', 'b')"), L("c3", "x = 5"),
        L("c4", "redis.foo = 1"), L("c5", "local t = KEYS"), L("c6", "error('boom')"), L("c7", "local x = nil + 1"),
        L("c8", "local p = redis.pcall"), L("c9", "local s = redis.setresp"), L("c10", "local t = _G"),
        L("c11", "redis.log(redis.LOG_NOTICE, 'loading') " + R("v", "return 1") + " return redis.REDIS_VERSION"),
        L("c12", "local v = redis.REDIS_VERSION_NUM + redis.LOG_DEBUG + redis.LOG_VERBOSE + redis.LOG_WARNING " +
          R("v2", "return 1")),
        ("EVAL", "return redis.register_function", "0"), ("GET", "a")],
    "runtime": [
        L("g", "redis.register_function('ga', function(keys, args) return redis.call('set', keys[1], args[1]) end) "
               "redis.register_function{function_name='gro', callback=function(keys, args) "
               "return redis.call('set', keys[1], args[1]) end, flags={'no-writes'}} "
               "redis.register_function{function_name='gget', callback=function(keys, args) "
               "return redis.call('get', keys[1]) end, flags={'no-writes'}, description='reads'} "
               "redis.register_function('gerr', function() return redis.call('nosuch') end) "
               "redis.register_function('gerr2', function() error('x') end) "
               "redis.register_function('gkeys', function() return KEYS end) "
               "redis.register_function('gstr', function() return string.rep('a', 2) .. #ARGV end) "
               "redis.register_function('greg', function() return redis.register_function end) "
               "redis.register_function('gmut', function(keys) keys[1] = 'z' return keys[1] end)"),
        ("FCALL", "ga", "1", "k", "v"), ("FCALL_RO", "ga", "1", "k", "v"), ("FCALL", "gro", "1", "k", "w"),
        ("FCALL_RO", "gro", "1", "k", "w"), ("FCALL_RO", "gget", "1", "k"), ("FCALL", "gerr", "0"),
        ("FCALL", "gerr2", "0"), ("FCALL", "gkeys", "0"), ("FCALL", "gstr", "0"), ("FCALL", "greg", "0"),
        ("FCALL", "gmut", "1", "a"), ("FCALL", "nosuch", "0"), ("FCALL", "ga"), ("FCALL", "ga", "3", "k"),
        ("FCALL", "ga", "-1"), ("FCALL", "ga", "x"), ("FCALL", "nosuch", "x"),
        L("one", "redis.register_function{function_name='desc', callback=function() return 1 end, description='reads'}"),
        ("FUNCTION", "LIST", "LIBRARYNAME", "one")],
    "list-options": [
        L("lib1", R("f1", "return 1")), L("lib2", R("f2", "return 2")), L("other", R("f3", "return 3")),
        ("FUNCTION", "LIST", "LIBRARYNAME", "lib1"), ("FUNCTION", "LIST", "libraryname", "oth*", "withcode"),
        ("FUNCTION", "LIST", "WITHCODE", "LIBRARYNAME", "nomatch*"), ("FUNCTION", "LIST", "x"),
        ("FUNCTION", "LIST", "libraryname"), ("FUNCTION", "LIST", "withcode", "withcode"),
        ("FUNCTION", "LIST", "libraryname", "a", "libraryname", "b"), ("FUNCTION", "STATS")],
    "delete-flush": [
        L("d1", R("f1", "return 1")), L("d2", R("f2", "return 2")), ("FUNCTION", "DELETE", "D1"),
        ("FUNCTION", "DELETE", "d1"), ("FUNCTION", "DELETE", "d1"), ("FCALL", "f1", "0"), ("FCALL", "f2", "0"),
        ("FUNCTION", "DELETE"), ("FUNCTION", "FLUSH", "x"), ("FUNCTION", "FLUSH", "sync", "x"),
        ("FUNCTION", "FLUSH", "ASYNC"), ("FCALL", "f2", "0"), ("FUNCTION", "STATS"), ("FUNCTION", "FLUSH")],
    "collisions": [
        L("b", R("x", "return 1")), L("B", R("X", "return 1")), L("b", R("y", "return 1")),
        ("FUNCTION", "LOAD", "REPLACE", "#!lua name=b\n" + R("X", "return 2")), ("FCALL", "x", "0"),
        L("c", R("y", "return 3") + " " + R("X", "return 3")), ("FCALL", "y", "0"), ("FUNCTION", "STATS")],
    "dump-restore": [
        ("FUNCTION", "DUMP"), L("aaa", R("aa", "return 1")), ("FUNCTION", "DUMP"), ("FUNCTION", "RESTORE", "x"),
        ("FUNCTION", "RESTORE", "x", "bad"), ("FUNCTION", "RESTORE", "x", "flush", "y"),
        ("FUNCTION", "DUMP", "x"), ("FUNCTION", "RESTORE")],
    "stats-kill-help": [
        ("FUNCTION", "STATS"), ("FUNCTION", "STATS", "x"), ("FUNCTION", "KILL"), ("FUNCTION", "HELP"),
        ("FUNCTION", "NOSUCH"), ("FUNCTION",), ("FCALL",)],
    "effects-and-flags": [
        L("e", "redis.register_function{function_name='oomok', callback=function() return 1 end, flags={'allow-oom'}} "
               "redis.register_function{function_name='all', callback=function() return 2 end, "
               "flags={'no-writes', 'allow-oom', 'allow-stale', 'no-cluster', 'allow-cross-slot-keys'}} "
               "redis.register_function('w', function(keys) redis.call('incr', keys[1]) "
               "return redis.call('incr', keys[1]) end)"),
        ("FCALL", "oomok", "0"), ("FCALL_RO", "all", "0"), ("FCALL", "w", "1", "n"), ("GET", "n"),
        L("flags", "redis.register_function{function_name='fl', callback=function() return 2 end, "
                   "flags={'no-writes', 'allow-oom', 'allow-stale', 'no-cluster', 'allow-cross-slot-keys'}}"),
        ("FUNCTION", "LIST", "LIBRARYNAME", "flags")],
}


def run_raw(port: int, protocol: int, commands: list[tuple]) -> list[bytes]:
    with raw_connection(port) as conn:
        if protocol == 3:
            conn.request("HELLO", "3")
        conn.request("FLUSHALL")
        conn.request("FUNCTION", "FLUSH")
        replies = [conn.request(*command) for command in commands]
        conn.request("FUNCTION", "FLUSH")
        return replies


@pytest.mark.parametrize("protocol", [2, 3], ids=["resp2", "resp3"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_functions_give_redis_servers_bytes_over_resp(case, protocol, goblin, redis_server):
    expected = run_raw(redis_server.port, protocol, CASES[case])
    got = run_raw(goblin.port, protocol, CASES[case])
    for command, want, have in zip(CASES[case], expected, got):
        assert have == want, f"{command!r}"


def error_text(error: Exception) -> str:
    text = str(error)
    return text[4:] if text.startswith("ERR ") else text


def normalise(value):
    if isinstance(value, Exception):
        return ("error", error_text(value))
    if isinstance(value, list):
        return [normalise(item) for item in value]
    return value


def run_values(client, commands: list[tuple]) -> list:
    client.execute_command("FLUSHALL")
    client.execute_command("FUNCTION", "FLUSH")
    values = []
    for command in commands:
        try:
            values.append(normalise(client.execute_command(*command)))
        except (ResponseError, redis.ResponseError) as error:
            values.append(("error", error_text(error)))
    client.execute_command("FUNCTION", "FLUSH")
    return values


@pytest.mark.parametrize("case", sorted(CASES))
def test_functions_over_the_ring_give_what_redis_py_reads_from_redis_server(case, ring, redis_server):
    reference = redis.Redis(port=redis_server.port, protocol=2, socket_timeout=10)
    reference.response_callbacks.clear()
    try:
        expected = run_values(reference, CASES[case])
    finally:
        reference.close()
    assert run_values(ring, CASES[case]) == expected
