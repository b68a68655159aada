"""Generic key and server commands over both transports: DEL, UNLINK, EXISTS, TYPE, DBSIZE,
FLUSHDB, FLUSHALL, KEYS, SCAN, RENAME, PING, ECHO, INFO, MEMORY USAGE, GOBLIN.MEMORY; and
the ways in: connect(url), the Unix socket, and redis-py itself."""

import pytest
import redis

from goblin_ring import ResponseError, RespClient, connect
from servers import GoblinServer


def test_del_unlink_exists_count_keys(client):
    client.rpush("a", "1")
    client.rpush("b", "1")
    assert client.exists("a", "b", "a", "missing") == 3
    assert client.delete("a", "missing") == 1
    assert client.unlink("b", "b") == 1
    assert client.exists("a", "b") == 0


def test_type_and_dbsize_and_flush(client):
    client.rpush("l", "x")
    assert client.type("l") == b"list"
    assert client.type("missing") == b"none"
    assert client.dbsize() == 1
    assert client.flushdb() is True
    assert client.dbsize() == 0
    client.rpush("l", "x")
    assert client.flushall() is True
    assert client.dbsize() == 0


def test_keys_matches_glob_patterns(client):
    for name in ("user:1", "user:2", "user:10", "order:1"):
        client.rpush(name, "x")
    assert sorted(client.keys("user:?")) == [b"user:1", b"user:2"]
    assert sorted(client.keys("user:*")) == [b"user:1", b"user:10", b"user:2"]
    assert sorted(client.keys()) == [b"order:1", b"user:1", b"user:10", b"user:2"]
    assert client.keys("nothing*") == []


def test_scan_visits_every_key_with_match_count_and_type(client):
    names = {f"k{i}".encode() for i in range(500)}
    with client.pipeline() as pipe:
        for name in names:
            pipe.rpush(name, "x")
        pipe.execute()
    assert set(client.scan_iter(count=37)) == names
    assert set(client.scan_iter(match="k1*")) == {n for n in names if n.startswith(b"k1")}
    assert set(client.scan_iter(_type="list")) == names
    assert set(client.scan_iter(_type="string")) == set()
    cursor, batch = client.scan(0, count=10)
    assert isinstance(cursor, int) and len(batch) >= 1
    with pytest.raises(ResponseError, match="invalid cursor"):
        client.execute_command("SCAN", "not-a-cursor")


def test_scan_reads_its_cursor_as_redis_does(client):
    # strtoul's reading, as SSCAN/HSCAN/ZSCAN: "" is cursor 0, "-1" wraps to 2^64-1 (accepted,
    # not "invalid cursor"), 2^64 and trailing bytes are refused.
    client.rpush("only", "x")
    assert client.execute_command("SCAN", "") == client.execute_command("SCAN", "0")
    cursor, keys = client.execute_command("SCAN", "-1")
    assert int(cursor) >= 0 and isinstance(keys, list)
    for bad in ("18446744073709551616", "1x", " 1"):
        with pytest.raises(ResponseError, match="^ERR invalid cursor$"):
            client.execute_command("SCAN", bad)


def test_rename_moves_the_value_and_overwrites(client):
    client.rpush("src", "a", "b")
    client.rpush("dst", "old")
    assert client.rename("src", "dst") is True
    assert client.lrange("dst", 0, -1) == [b"a", b"b"]
    assert client.exists("src") == 0
    with pytest.raises(ResponseError, match="no such key"):
        client.rename("src", "other")


def test_ping_and_echo(client):
    assert client.ping() is True
    assert client.ping("hi") == b"hi"
    assert client.echo(b"\x00bytes") == b"\x00bytes"


def test_info_reports_server_clients_memory_and_keyspace(client):
    client.rpush("l", *range(1000))
    info = client.info()
    assert info["redis_version"].count(".") == 2
    assert info["goblin_version"]
    assert info["connected_clients"] >= 1
    assert info["used_memory"] > 0
    assert info["db0"]["keys"] == 1
    memory = client.info("memory")
    assert "used_memory" in memory and "redis_version" not in memory


def test_memory_usage_and_goblin_memory_count_real_bytes(client):
    assert client.memory_usage("missing") is None
    before = client.goblin_memory()
    client.rpush("l", *[b"x" * 16] * 10_000)
    usage = client.memory_usage("l")
    after = client.goblin_memory()
    assert 10_000 * 16 <= usage <= 10_000 * 24
    assert after["list"] - before["list"] >= 10_000 * 16
    assert after["total"] == sum(after[k] for k in ("keyspace", "list", "string", "session", "other"))
    client.delete("l")
    assert client.goblin_memory()["list"] == before["list"]


def test_unknown_command_and_bad_arity_keep_the_connection(resp):
    with pytest.raises(ResponseError, match="unknown command"):
        resp.execute_command("DPING")
    with pytest.raises(ResponseError, match="wrong number of arguments for 'llen' command"):
        resp.execute_command("LLEN")
    assert resp.ping() is True


def test_connect_picks_the_transport_from_the_url(goblin):
    with connect(f"ring://{goblin.name}?runtime_dir={goblin.runtime_dir}") as ring:
        assert type(ring).__name__ == "RingClient" and ring.ping()
    with connect(f"redis://127.0.0.1:{goblin.port}") as resp:
        assert type(resp).__name__ == "RespClient" and resp.ping()
    with pytest.raises(ValueError):
        connect("http://example")


def test_resp_over_a_unix_socket(tmp_path):
    path = tmp_path / "goblin.sock"
    with GoblinServer(tmp_path, "--port", "0", "--unixsocket", str(path)).start() as server:
        assert oct(path.stat().st_mode & 0o777) == "0o600"
        with RespClient(unix_socket_path=str(path)) as client:
            client.rpush("l", "a")
            assert client.lrange("l", 0, -1) == [b"a"]
    assert not path.exists()


def test_redis_py_works_against_goblin_over_resp2(goblin):
    # redis-py 8 asks for RESP3 (HELLO 3) by default; RESP3 arrives with the compatibility
    # issue, until then goblin answers NOPROTO as a RESP2-only Redis would, and protocol=2 works.
    r = redis.Redis(port=goblin.port, protocol=2)
    r.flushall()
    assert r.ping() is True
    assert r.rpush("q", "a", "b", "c") == 3
    assert r.lrange("q", 0, -1) == [b"a", b"b", b"c"]
    assert r.lpop("q", 2) == [b"a", b"b"]
    assert r.lmove("q", "r", "LEFT", "RIGHT") == b"c"
    with r.pipeline(transaction=False) as pipe:
        pipe.rpush("p", 1).rpush("p", 2).llen("p")
        assert pipe.execute() == [1, 2, 2]
    assert r.info()["redis_version"]
    r.close()


def test_a_value_written_over_the_ring_is_read_over_resp_at_once(ring, resp):
    ring.rpush("shared", "from-ring")
    assert resp.lrange("shared", 0, -1) == [b"from-ring"]
    resp.rpush("shared", "from-resp")
    assert ring.lrange("shared", 0, -1) == [b"from-ring", b"from-resp"]
    ring.delete("shared")
