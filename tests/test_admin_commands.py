"""What tools and harnesses send: HELLO and RESP3, AUTH with --requirepass, protected mode,
CONFIG GET/SET/RESETSTAT, CLIENT, INFO sections, OBJECT, FUNCTION, RESET, maxclients,
timeout and maxmemory — each checked the way a user of Redis would check it.

Servers are started per test where a test needs its own flags; the rest share the module's.
"""

from __future__ import annotations

import socket
import time

import psutil
import pytest
import redis

from goblin_ring import ResponseError, RespClient, RingClient
from resp_wire import raw_connection
from servers import GoblinServer


@pytest.fixture
def r(goblin):
    client = redis.Redis(port=goblin.port, protocol=2, socket_timeout=10)
    client.flushall()
    yield client
    client.close()


@pytest.fixture
def r3(goblin):
    client = redis.Redis(port=goblin.port, protocol=3, socket_timeout=10)
    yield client
    client.close()


def start_server(tmp_path, *flags) -> GoblinServer:
    return GoblinServer(tmp_path / "runtime", *flags).start()


# ---- HELLO and RESP3 --------------------------------------------------------------------


def test_hello_3_switches_the_connection_to_resp3_shapes(goblin):
    with raw_connection(goblin.port) as sock:
        hello = sock.request("HELLO", "3")
        assert hello.startswith(b"%7\r\n") and b"proto\r\n:3\r\n" in hello
        assert sock.request("GET", "no-such-key") == b"_\r\n"
        assert sock.request("CONFIG", "GET", "port") == b"%%1\r\n$4\r\nport\r\n$%d\r\n%d\r\n" % (
            len(str(goblin.port)), goblin.port)
        info = sock.request("INFO", "server")
        assert info.startswith(b"=") and b"\r\ntxt:# Server\r\n" in info
        back = sock.request("HELLO", "2")
        assert back.startswith(b"*14\r\n")
        assert sock.request("GET", "no-such-key") == b"$-1\r\n"


def test_hello_refuses_other_protocols_and_bad_options(r):
    with pytest.raises(redis.ResponseError, match="NOPROTO unsupported protocol version"):
        r.execute_command("HELLO", "4")
    with pytest.raises(redis.ResponseError, match="Protocol version is not an integer"):
        r.execute_command("HELLO", "three")
    with pytest.raises(redis.ResponseError, match="Syntax error in HELLO option 'bogus'"):
        r.execute_command("HELLO", "3", "bogus")


def test_hello_setname_names_the_connection_and_reports_its_id(goblin):
    with raw_connection(goblin.port) as sock:
        reply = sock.request("HELLO", "2", "SETNAME", "worker-7")
        assert b"worker-7" not in reply and reply.startswith(b"*14\r\n")
        assert sock.request("CLIENT", "GETNAME") == b"$8\r\nworker-7\r\n"
        client_id = int(sock.request("CLIENT", "ID")[1:-2])
        assert b"id\r\n:%d\r\n" % client_id in sock.request("HELLO")


def test_redis_py_resp3_reads_maps_nulls_and_verbatim_info(goblin, r3):
    r3.flushall()
    assert r3.config_get("port") == {"port": str(goblin.port)}
    assert r3.get("absent") is None
    r3.rpush("l", "a", "b")
    assert r3.lrange("l", 0, -1) == [b"a", b"b"]
    assert r3.info("server")["redis_version"].startswith("7.")
    assert r3.execute_command("HELLO", "3")[b"proto"] == 3
    assert r3.client_info()["resp"] == "3"


# ---- AUTH, --requirepass, RESET ----------------------------------------------------------


def test_requirepass_refuses_commands_until_auth(tmp_path):
    with start_server(tmp_path, "--requirepass", "s3cret") as server:
        with pytest.raises(redis.AuthenticationError):
            redis.Redis(port=server.port, protocol=2).get("k")
        with raw_connection(server.port) as sock:
            assert sock.request("GET", "k") == b"-NOAUTH Authentication required.\r\n"
            wrongpass = b"-WRONGPASS invalid username-password pair or user is disabled.\r\n"
            assert sock.request("AUTH", "wrong") == wrongpass
            assert sock.request("AUTH", "alice", "s3cret") == wrongpass
            assert sock.request("AUTH", "s3cret") == b"+OK\r\n"
            assert sock.request("SET", "k", "v") == b"+OK\r\n"

        with redis.Redis(port=server.port, password="s3cret", protocol=3) as authed:
            assert authed.get("k") == b"v"
        with RespClient(port=server.port, password="s3cret") as typed:
            assert typed.get("k") == b"v"
        with RespClient(port=server.port, username="default", password="s3cret") as typed:
            assert typed.get("k") == b"v"
        # a ring session authenticates too: at attach, or with AUTH over the session
        with RingClient(name=server.name, runtime_dir=server.runtime_dir, timeout=10, password="s3cret") as ring:
            assert ring.get("k") == b"v"


def test_hello_auth_authenticates_and_reset_deauthenticates(tmp_path):
    with start_server(tmp_path, "--requirepass", "pw") as server:
        with raw_connection(server.port) as sock:
            assert sock.request("HELLO", "3").startswith(b"-NOAUTH HELLO must be called")
            assert sock.request("HELLO", "3", "AUTH", "default", "nope").startswith(b"-WRONGPASS")
            assert sock.request("HELLO", "3", "AUTH", "default", "pw", "SETNAME", "me").startswith(b"%7")
            assert sock.request("CLIENT", "GETNAME") == b"$2\r\nme\r\n"
            assert sock.request("RESET") == b"+RESET\r\n"
            assert sock.request("GET", "k").startswith(b"-NOAUTH Authentication required.")
            assert sock.request("AUTH", "pw") == b"+OK\r\n"
            assert sock.request("GET", "k") == b"$-1\r\n"   # RESP2 again after RESET


def test_auth_without_a_configured_password_says_so(r):
    with pytest.raises(redis.AuthenticationError, match="called without any password configured"):
        r.execute_command("AUTH", "anything")


def test_config_set_requirepass_applies_to_new_connections(tmp_path):
    with start_server(tmp_path) as server:
        admin = redis.Redis(port=server.port, protocol=2)
        admin.config_set("requirepass", "later")
        assert admin.get("still-allowed") is None   # already authenticated
        with pytest.raises(redis.AuthenticationError):
            redis.Redis(port=server.port, protocol=2).get("k")
        admin.config_set("requirepass", "")
        assert redis.Redis(port=server.port, protocol=2).ping()
        admin.close()


# ---- protected mode, maxclients, timeout, maxmemory ----------------------------------------


def non_loopback_address() -> str | None:
    for addresses in psutil.net_if_addrs().values():
        for address in addresses:
            if address.family == socket.AF_INET and not address.address.startswith("127."):
                return address.address
    return None


def test_protected_mode_serves_only_loopback_without_a_password(tmp_path):
    external = non_loopback_address()
    if external is None:
        pytest.skip("this machine has no non-loopback IPv4 address to connect from")
    with start_server(tmp_path, "--bind", "0.0.0.0") as server:
        with raw_connection(server.port, host=external, source=external) as sock:
            refused = sock.read_until(b"\r\n")   # sent at accept, before any command
            assert refused.startswith(b"-DENIED") and b"protected mode" in refused
            assert sock.recv(100) == b""   # and closed
        with raw_connection(server.port) as local:
            assert local.request("PING") == b"+PONG\r\n"
            stats = local.request("INFO", "stats")
            assert b"rejected_connections:1\r\n" in stats
    for flags in (("--protected-mode", "no"), ("--requirepass", "pw")):
        with start_server(tmp_path, "--bind", "0.0.0.0", *flags) as server:
            with raw_connection(server.port, host=external, source=external) as sock:
                reply = sock.request("PING")
                assert reply in (b"+PONG\r\n", b"-NOAUTH Authentication required.\r\n")


def test_maxclients_refuses_the_next_client_with_redis_error(tmp_path):
    with start_server(tmp_path, "--maxclients", "2") as server:
        first, second = raw_connection(server.port), raw_connection(server.port)
        assert first.request("PING") == b"+PONG\r\n"
        assert second.request("PING") == b"+PONG\r\n"
        with raw_connection(server.port) as third:
            assert third.read_until(b"\r\n") == b"-ERR max number of clients reached\r\n"
        first.close()
        second.close()


def test_config_timeout_closes_idle_clients(goblin, r):
    idle = raw_connection(goblin.port)
    assert idle.request("PING") == b"+PONG\r\n"
    r.config_set("timeout", 1)
    try:
        idle.settimeout(10)
        started = time.monotonic()
        assert idle.recv(100) == b""          # the server closed it
        assert time.monotonic() - started < 9
    finally:
        # r idled out too: reset the module's server over a fresh connection, or every later
        # test on it would have its connections closed after a second
        with raw_connection(goblin.port) as admin:
            assert admin.request("CONFIG", "SET", "timeout", "0") == b"+OK\r\n"
        idle.close()


def test_maxmemory_refuses_writes_that_add_data_but_serves_reads_and_deletes(r):
    r.set("k", "v")
    r.config_set("maxmemory", 1)
    try:
        with pytest.raises(redis.exceptions.OutOfMemoryError, match="command not allowed when used memory > 'maxmemory'"):
            r.set("k2", "v")
        with pytest.raises(redis.exceptions.OutOfMemoryError):
            r.rpush("l", "x")
        assert r.get("k") == b"v"
        assert r.delete("k") == 1
    finally:
        r.config_set("maxmemory", 0)
    assert r.set("k2", "v") is True


# ---- CONFIG ------------------------------------------------------------------------------


def test_config_get_takes_globs_and_several_patterns(goblin, r):
    assert r.config_get("port") == {"port": str(goblin.port)}
    assert r.execute_command("CONFIG", "GET", "databases") == [b"databases", b"16"]
    both = r.execute_command("CONFIG", "GET", "maxmemory*", "save", "maxmemory")
    assert dict(zip(both[::2], both[1::2])) == {b"maxmemory": b"0", b"maxmemory-policy": b"noeviction",
                                                b"maxmemory-clients": b"0", b"maxmemory-samples": b"5",
                                                b"maxmemory-eviction-tenacity": b"10", b"save": b""}
    assert r.config_get("no-such-parameter") == {}
    assert r.config_get("bind") == {"bind": "127.0.0.1"}


def test_config_set_errors_are_redis_errors_and_change_nothing(r):
    with pytest.raises(redis.ResponseError, match=r"Unknown option or number of arguments for CONFIG SET - 'nope'"):
        r.config_set("nope", "1")
    with pytest.raises(redis.ResponseError, match=r"argument 'port'\) - can't set immutable config"):
        r.config_set("port", "1")
    with pytest.raises(redis.ResponseError, match=r"argument must be 'yes' or 'no'"):
        r.config_set("protected-mode", "maybe")
    with pytest.raises(redis.ResponseError, match=r"argument must be a memory value"):
        r.config_set("maxmemory", "lots")
    with pytest.raises(redis.ResponseError, match="wrong number of arguments for 'config|set'"):
        r.execute_command("CONFIG", "SET", "timeout")
    # several pairs: one bad value leaves the good one unapplied too
    with pytest.raises(redis.ResponseError):
        r.execute_command("CONFIG", "SET", "timeout", "30", "maxmemory", "lots")
    assert r.config_get("timeout") == {"timeout": "0"}
    assert r.execute_command("CONFIG", "SET", "timeout", "0", "maxmemory", "10mb") == b"OK"
    assert r.config_get("maxmemory") == {"maxmemory": str(10 * 1024 * 1024)}
    r.config_set("maxmemory", 0)
    with pytest.raises(redis.ResponseError, match="Invalid save parameters"):
        r.config_set("save", "900")
    assert r.config_set("save", "900 1") is True and r.config_get("save") == {"save": "900 1"}
    assert r.config_set("save", "") is True
    with pytest.raises(redis.ResponseError, match="unknown subcommand 'BOGUS'. Try CONFIG HELP."):
        r.execute_command("CONFIG", "BOGUS")


def test_config_resetstat_zeroes_the_counters(r):
    r.set("a", 1)
    r.get("a")
    assert r.info("commandstats")["cmdstat_get"]["calls"] >= 1
    assert r.config_resetstat() is True
    stats = r.info("stats")
    assert stats["total_commands_processed"] <= 1
    assert stats["keyspace_hits"] == 0
    assert "cmdstat_get" not in r.info("commandstats")


def test_proto_max_bulk_len_is_enforced_as_configured(goblin, r):
    r.config_set("proto-max-bulk-len", "1mb")
    try:
        with raw_connection(goblin.port) as sock:
            sock.sendall(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2000000\r\n")
            assert sock.read_until(b"\r\n") == b"-ERR Protocol error: invalid bulk length\r\n"
            assert sock.recv(100) == b""
    finally:
        r.config_set("proto-max-bulk-len", "512mb")


# ---- CLIENT ------------------------------------------------------------------------------


def test_client_setname_getname_id_info_and_setinfo(r):
    assert r.client_getname() is None
    assert r.client_setname("api-1") is True
    assert r.client_getname() == "api-1"
    with pytest.raises(redis.ResponseError, match="cannot contain spaces"):
        r.client_setname("has space")
    assert r.execute_command("CLIENT", "SETINFO", "LIB-NAME", "mylib") == b"OK"
    with pytest.raises(redis.ResponseError, match="Unrecognized option 'colour'"):
        r.execute_command("CLIENT", "SETINFO", "colour", "red")
    info = r.client_info()
    assert info["name"] == "api-1" and info["lib-name"] == "mylib" and int(info["id"]) == r.client_id()
    assert info["transport"] == "tcp" and info["db"] == 0


def test_client_list_shows_ring_sessions_and_resp_clients_and_kill_closes_them(goblin, r):
    r.client_setname("lister")
    ring = RingClient(name=goblin.name, runtime_dir=goblin.runtime_dir, client_name="ringer", timeout=10)
    victim = raw_connection(goblin.port)
    try:
        assert victim.request("CLIENT", "SETNAME", "victim") == b"+OK\r\n"
        clients = {c["name"]: c for c in r.client_list()}
        assert {"lister", "ringer", "victim"} <= set(clients)
        assert clients["ringer"]["transport"] == "ring" and clients["victim"]["transport"] == "tcp"
        assert [c["name"] for c in r.client_list(client_id=[clients["victim"]["id"]])] == ["victim"]
        assert r.client_kill_filter(_id=clients["victim"]["id"]) == 1
        victim.settimeout(10)
        assert victim.recv(100) == b""
        assert r.client_kill(clients["ringer"]["addr"]) is True
        with pytest.raises(Exception):
            for _ in range(100):
                ring.ping()
        with pytest.raises(redis.ResponseError, match="No such client"):
            r.client_kill("10.9.9.9:1")
        assert r.ping()   # SKIPME yes by default: a filter never kills the caller
        assert r.client_kill_filter(_id=r.client_id()) == 0
    finally:
        victim.close()
        ring.close()


# ---- INFO --------------------------------------------------------------------------------


def test_info_has_the_sections_redis_py_and_exporters_read(r, resp):
    r.set("k", "v")
    r.execute_command("SELECT", 3)
    r.set("volatile", "v", ex=100)
    info = r.info()
    for section_field in ("redis_version", "goblin_version", "uptime_in_seconds", "connected_clients",
                          "blocked_clients", "maxclients", "used_memory", "used_memory_rss", "used_memory_peak",
                          "maxmemory", "loading", "rdb_last_save_time", "total_commands_processed",
                          "instantaneous_ops_per_sec", "expired_keys", "keyspace_hits", "total_error_replies",
                          "role", "used_cpu_sys", "cluster_enabled"):
        assert section_field in info, section_field
    assert info["role"] == "master" and info["redis_version"].startswith("7.")
    assert info["db3"] == {"keys": 1, "expires": 1, "avg_ttl": 0}
    assert "cmdstat_set" not in info                      # commandstats is not a default section
    assert r.info("commandstats")["cmdstat_set"]["calls"] >= 2
    both = r.info("server", "clients") if r.info.__code__.co_argcount > 2 else r.execute_command("INFO", "server", "clients")
    assert "redis_version" in both and "connected_clients" in both and "used_memory" not in both
    everything = r.info("all")
    assert "cmdstat_info" in everything and "used_memory" in everything


def test_errorstats_and_failed_calls_count_error_replies(r):
    r.config_resetstat()
    r.rpush("list", "x")
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        r.get("list")
    with pytest.raises(redis.ResponseError):
        r.execute_command("DPING")
    with pytest.raises(redis.ResponseError):
        r.execute_command("GET")
    errors = r.info("errorstats")
    assert errors["errorstat_WRONGTYPE"]["count"] == 1 and errors["errorstat_ERR"]["count"] == 2
    commands = r.info("commandstats")
    assert commands["cmdstat_get"]["failed_calls"] == 1 and commands["cmdstat_get"]["rejected_calls"] == 1
    assert r.info("stats")["total_error_replies"] == 3


def test_commands_over_the_ring_count_under_their_redis_names(r, ring):
    r.config_resetstat()
    ring.rpush("q", "a", "b")
    ring.lpop("q")
    ring.set("s", "1")
    stats = r.info("commandstats")
    assert stats["cmdstat_rpush"]["calls"] == 1
    assert stats["cmdstat_lpop"]["calls"] == 1
    assert stats["cmdstat_set"]["calls"] == 1


# ---- OBJECT, FUNCTION and the small ones --------------------------------------------------


def test_object_encoding_refcount_idletime_freq(r):
    r.set("int", 12345)
    r.set("short", "hello")
    r.set("long", "x" * 100)
    r.rpush("small-list", "a")
    r.rpush("big-list", *[f"value-{i}" for i in range(1000)])
    assert r.object("encoding", "int") == b"int"
    assert r.object("encoding", "short") == b"embstr"
    assert r.object("encoding", "long") == b"raw"
    assert r.object("encoding", "small-list") == b"listpack"
    assert r.object("encoding", "big-list") == b"quicklist"
    assert r.object("refcount", "short") == 1
    assert 0 <= r.object("idletime", "short") <= 1
    assert r.object("encoding", "absent") is None
    with pytest.raises(redis.ResponseError, match="LFU maxmemory policy is not selected"):
        r.object("freq", "short")
    with pytest.raises(redis.ResponseError, match="unknown subcommand 'COLOUR'"):
        r.execute_command("OBJECT", "COLOUR", "short")
    assert len(r.execute_command("OBJECT", "HELP")) > 4


def test_function_flush_and_list_on_a_server_with_no_functions(r):
    assert r.function_flush() is True
    assert r.execute_command("FUNCTION", "FLUSH", "ASYNC") == b"OK"
    assert r.function_list() == []
    with pytest.raises(redis.ResponseError, match="FUNCTION FLUSH only supports SYNC|ASYNC option"):   # Redis 7.0's text
        r.execute_command("FUNCTION", "FLUSH", "LATER")


def test_time_echo_lastsave_and_unknown_commands(r):
    seconds, micros = r.time()
    assert abs(seconds - time.time()) < 5 and 0 <= micros < 1_000_000
    assert r.echo("hi\r\nthere") == b"hi\r\nthere"
    assert abs(r.lastsave().timestamp() - time.time()) < 3600
    with pytest.raises(redis.ResponseError, match=r"unknown command 'DPING', with args beginning with: 'x' "):
        r.execute_command("DPING", "x")


def test_quit_replies_ok_then_closes(goblin):
    with raw_connection(goblin.port) as sock:
        assert sock.request("QUIT") == b"+OK\r\n"
        assert sock.recv(100) == b""
