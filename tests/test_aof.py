"""test_aof.py — the append-only log: every write from either transport is recorded and
replayed at start, expiry survives as absolute times, randomness and blocking pops are logged
as what they did, a cut-short tail is handled as aof-load-truncated says, kill -9 loses no
acknowledged write with appendfsync always, and BGREWRITEAOF compacts the file."""

from __future__ import annotations

import os
import random
import re
import threading
import time

import pytest

from goblin_ring import RespClient, RingClient
from goblin_ring.errors import ResponseError
from servers import GoblinServer
from test_differential import KEYS, outcome, random_command


def start(runtime_dir, data_dir, *extra, name=None):
    return GoblinServer(runtime_dir, "--appendonly", "yes", "--dir", str(data_dir), *extra, name=name).start()


def client_of(server, transport):
    if transport == "ring":
        return RingClient(name=server.name, runtime_dir=server.runtime_dir, timeout=10.0)
    return RespClient(port=server.port, socket_timeout=10.0)


def state(client, keys=None, databases=(0, 3)):
    """Every key's type, contents and absolute expiry, per database: what a user would check."""
    result = {}
    for db in databases:
        client.select(db)
        for key in sorted(keys if keys is not None else client.keys("*")):
            kind = client.type(key)
            kind = kind.decode() if isinstance(kind, bytes) else kind
            if kind == "none":
                continue
            if kind == "string":
                value = client.get(key)
            elif kind == "list":
                value = client.lrange(key, 0, -1)
            elif kind == "set":
                value = sorted(client.smembers(key))
            elif kind == "hash":
                value = sorted(client.hgetall(key).items())
            elif kind == "zset":
                value = client.zrange(key, 0, -1, withscores=True)
            else:
                value = client.dump(key)
            result[(db, key if isinstance(key, bytes) else key.encode())] = (kind, value, client.pexpiretime(key))
    client.select(0)
    return result


def test_writes_from_both_transports_are_replayed_at_start(dirs):
    runtime, data = dirs
    server = start(runtime, data)
    with client_of(server, "ring") as ring, client_of(server, "resp") as resp:
        ring.rpush("jobs", "a", "b", "c")
        resp.rpush("jobs", "d")
        ring.lpop("jobs")
        resp.set("greeting", "hello", ex=1000)
        ring.incrbyfloat("price", 1.25)
        resp.hset("user", mapping={"name": "ann", "visits": "1"})
        ring.execute_command("HINCRBYFLOAT", "user", "visits", "0.5")
        resp.sadd("tags", "x", "y", "z")
        ring.zadd("board", {"ann": 3, "bob": 1})
        resp.select(3)
        resp.set("elsewhere", "3")
        before = state(resp)
    server.stop_cleanly()
    with start(runtime, data, name=server.name) as again, client_of(again, "resp") as resp:
        assert state(resp) == before
        assert resp.lrange("jobs", 0, -1) == [b"b", b"c", b"d"]


def test_both_transports_log_the_same_command_the_same_way(dirs):
    runtime, data = dirs
    with start(runtime, data) as server:
        for transport in ("ring", "resp"):
            with client_of(server, transport) as c:
                c.rpush(f"list-{transport}", "v1", "v2")
                c.set(f"key-{transport}", "v", nx=True)
                c.lpop(f"list-{transport}", 2)
                c.expireat(f"key-{transport}", 4_102_444_800)
        server.stop_cleanly()
    text = (data / "appendonly.aof").read_bytes()
    _, ring_part, resp_part = text.split(b"*4\r\n$5\r\nRPUSH\r\n$9\r\nlist-")
    assert ring_part.startswith(b"ring") and ring_part.replace(b"ring", b"resp") == resp_part


@pytest.mark.parametrize("transport", ["ring", "resp"])
def test_expiry_is_logged_as_an_absolute_time_and_survives_a_restart(dirs, transport):
    runtime, data = dirs
    server = start(runtime, data)
    with client_of(server, transport) as c:
        c.set("session", "s", ex=500)
        c.set("cache", "c")
        c.pexpire("cache", 700_000)
        c.setex("token", 300, "t")
        deadlines = {key: c.pexpiretime(key) for key in ("session", "cache", "token")}
    server.stop_cleanly()
    text = (data / "appendonly.aof").read_bytes()
    for deadline in deadlines.values():
        assert str(deadline).encode() in text         # absolute unix ms, not "500"
    assert b"PEXPIREAT" in text and b"PXAT" in text and b"SETEX" not in text.upper()
    time.sleep(0.05)   # replayed later: the deadlines must not move with the replay's clock
    with start(runtime, data, name=server.name) as again, client_of(again, transport) as c:
        assert {key: c.pexpiretime(key) for key in deadlines} == deadlines


def test_a_key_found_expired_is_logged_as_del(dirs):
    runtime, data = dirs
    with start(runtime, data) as server, client_of(server, "resp") as c:
        c.set("brief", "x", px=30)
        deadline = time.monotonic() + 5
        while c.get("brief") is not None and time.monotonic() < deadline:
            time.sleep(0.01)
        c.close()
        server.stop_cleanly()
    assert re.search(rb"\*2\r\n\$3\r\nDEL\r\n\$5\r\nbrief\r\n", (data / "appendonly.aof").read_bytes())


def test_spop_and_blocking_pops_are_logged_as_what_they_did(dirs):
    runtime, data = dirs
    server = start(runtime, data)
    with client_of(server, "resp") as c, client_of(server, "ring") as r:
        c.sadd("pool", *[f"m{i}" for i in range(50)])
        popped = c.spop("pool", 7)
        c.rpush("queue", "first")
        assert r.blpop(["empty", "queue"], timeout=1) == (b"queue", b"first")
        result = {}

        def wait():
            with client_of(server, "resp") as waiter:
                result["value"] = waiter.brpop(["later"], timeout=5)

        thread = threading.Thread(target=wait)
        thread.start()
        deadline = time.monotonic() + 5
        while c.info("clients")["blocked_clients"] == 0 and time.monotonic() < deadline:
            time.sleep(0.005)
        c.rpush("later", "one", "two")
        thread.join()
        assert result["value"] == (b"later", b"two")
        before = state(c)
    server.stop_cleanly()
    text = (data / "appendonly.aof").read_bytes()
    assert b"SPOP" not in text and b"BLPOP" not in text and b"BRPOP" not in text
    assert all(member in text for member in popped)
    with start(runtime, data, name=server.name) as again, client_of(again, "resp") as c:
        assert state(c) == before
        assert c.lrange("later", 0, -1) == [b"one"]


def test_multi_exec_is_logged_as_a_block(dirs):
    runtime, data = dirs
    server = start(runtime, data)
    with client_of(server, "ring") as r:
        with r.pipeline(transaction=True) as p:
            p.incr("counter")
            p.rpush("log", "entry")
            p.get("counter")
            p.execute()
    server.stop_cleanly()
    text = (data / "appendonly.aof").read_bytes()
    assert re.search(rb"MULTI\r\n.*INCR.*RPUSH.*EXEC\r\n$", text, re.S)


def test_random_commands_over_both_transports_replay_to_the_same_data(dirs):
    runtime, data = dirs
    server = start(runtime, data)
    rng = random.Random(20)
    with client_of(server, "ring") as ring, client_of(server, "resp") as resp:
        for step in range(1500):
            c = ring if step % 2 else resp
            name, args, kwargs = random_command(rng)
            outcome(c, name, args, kwargs)
            if rng.random() < 0.1:
                key = rng.choice(KEYS)
                extra = rng.choice([("sadd", (f"s{key}", *rng.sample("abcdefgh", 3))), ("spop", (f"s{key}", 2)),
                                    ("hincrbyfloat", (f"h{key}", "f", 0.1)), ("zincrby", (f"z{key}", 1.5, "m")),
                                    ("zpopmin", (f"z{key}",)), ("hset", (f"h{key}", "g", "v"))])
                try:
                    getattr(c, extra[0])(*extra[1])
                except ResponseError:
                    pass
        before = state(resp, databases=(0, 1))
    server.stop_cleanly()
    with start(runtime, data, name=server.name) as again, client_of(again, "ring") as c:
        assert state(c, databases=(0, 1)) == before


def cut(path, keep):
    with open(path, "r+b") as f:
        f.truncate(keep)


def test_a_cut_short_last_command_is_dropped_and_the_file_truncated(dirs):
    runtime, data = dirs
    server = start(runtime, data)
    with client_of(server, "resp") as c:
        c.set("kept", "yes")
        c.rpush("lost", "x" * 100)
    server.stop_cleanly()
    path = data / "appendonly.aof"
    whole = path.stat().st_size
    cut(path, whole - 30)
    with start(runtime, data, name=server.name) as again, client_of(again, "resp") as c:
        assert c.get("kept") == b"yes" and c.exists("lost") == 0
    assert any("truncated to offset" in line for line in again.log)
    assert path.read_bytes().endswith(b"yes\r\n")


def test_a_cut_short_file_is_refused_with_aof_load_truncated_no(dirs):
    runtime, data = dirs
    server = start(runtime, data)
    with client_of(server, "resp") as c:
        c.set("kept", "yes")
        c.set("other", "value")
    server.stop_cleanly()
    path = data / "appendonly.aof"
    size = path.stat().st_size
    cut(path, size - 3)
    refused = GoblinServer(runtime, "--appendonly", "yes", "--dir", str(data), "--aof-load-truncated", "no",
                           name=server.name)
    with pytest.raises(RuntimeError, match="exited before") as refusal:
        refused.start()
    assert refused.process.wait(timeout=10) != 0
    refused.process.stderr.close()
    message = str(refusal.value)
    assert str(path) in message and re.search(r"offset \d+", message)
    assert path.stat().st_size == size - 3          # untouched


def test_a_corrupt_byte_is_refused_naming_the_offset(dirs):
    runtime, data = dirs
    server = start(runtime, data)
    with client_of(server, "resp") as c:
        c.set("a", "1")
        c.set("b", "2")
    server.stop_cleanly()
    path = data / "appendonly.aof"
    text = bytearray(path.read_bytes())
    second = text.index(b"*3", 10)
    text[second] = ord("?")
    path.write_bytes(bytes(text))
    refused = GoblinServer(runtime, "--appendonly", "yes", "--dir", str(data), name=server.name)
    with pytest.raises(RuntimeError, match="exited before") as refusal:
        refused.start()
    assert refused.process.wait(timeout=10) != 0
    refused.process.stderr.close()
    message = str(refusal.value)
    assert f"offset {second}" in message and str(path) in message


def test_config_set_appendonly_yes_writes_the_data_then_logs(dirs):
    runtime, data = dirs
    server = GoblinServer(runtime, "--dir", str(data)).start()
    with client_of(server, "resp") as c:
        c.rpush("before", *[str(i) for i in range(1000)])
        c.set("ttl", "x", ex=1000)
        assert c.config_get("appendonly") == {"appendonly": "no"}
        assert c.config_set("appendonly", "yes")
        assert c.config_get("appendonly") == {"appendonly": "yes"}
        assert c.info("persistence")["aof_enabled"] == 1
        c.rpush("after", "z")
        assert c.config_set("appendfsync", "always")
        assert c.config_get("appendfsync") == {"appendfsync": "always"}
        with pytest.raises(ResponseError, match="always, everysec, no"):
            c.config_set("appendfsync", "sometimes")
        before = state(c)
    server.stop_cleanly()
    with start(runtime, data, name=server.name) as again, client_of(again, "ring") as c:
        assert state(c) == before


def writer(server, transport, acknowledged, stop):
    with client_of(server, transport) as c:
        i = 0
        while not stop.is_set():
            try:
                c.rpush(f"acked-{transport}", i)
            except Exception:
                return
            acknowledged.append(i)
            i += 1


@pytest.mark.parametrize("policy", ["always", "everysec"])
def test_kill_9_under_load_loses_no_acknowledged_write(dirs, policy):
    """always: nothing acknowledged may be lost. everysec may lose at most about a second of
    writes (a power loss's worth: the file is written before every reply, fsynced each
    second); the test measures the loss against the writers' rate — after a kill -9 the
    kernel still has every written byte, so it finds none."""
    runtime, data = dirs
    server = start(runtime, data, "--appendfsync", policy)
    acked = {"ring": [], "resp": []}
    stop = threading.Event()
    threads = [threading.Thread(target=writer, args=(server, t, acked[t], stop)) for t in acked]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 10
    while min(len(v) for v in acked.values()) < 2000 and time.monotonic() < deadline:
        time.sleep(0.01)
    server.process.kill()          # kill -9 while both writers are in flight
    server.process.wait()
    elapsed = time.monotonic() - started
    stop.set()
    for thread in threads:
        thread.join()
    server.process.stderr.close()
    with start(runtime, data, name=server.name) as again, client_of(again, "resp") as c:
        for transport, values in acked.items():
            stored = [int(v) for v in c.lrange(f"acked-{transport}", 0, -1)]
            assert len(stored) <= len(values) + 1     # at most the one in flight when killed
            lost = [v for v in values if v >= len(stored) or stored[v] != v]
            if policy == "always":
                assert lost == []
            else:
                assert len(lost) <= len(values) / elapsed * 1.0, (len(lost), len(values), elapsed)
            assert stored[:len(values) - len(lost)] == values[:len(values) - len(lost)]


def test_bgrewriteaof_compacts_the_file_and_keeps_the_data(dirs):
    runtime, data = dirs
    server = start(runtime, data)
    with client_of(server, "resp") as c, client_of(server, "ring") as r:
        for i in range(300):
            c.incr("counter")
            r.rpush("list", i)
            r.lpop("list")
        c.hset("hash", mapping={f"f{i}": i for i in range(200)})
        c.zadd("zset", {f"m{i}": i / 3 for i in range(200)})
        c.sadd("set", *range(100))
        c.set("volatile", "v", ex=5000)
        c.select(3)
        c.set("db3", "here")
        c.select(0)
        path = data / "appendonly.aof"
        grown = path.stat().st_size
        assert c.bgrewriteaof()
        c.rpush("during", "a")          # written while the child may still run
        deadline = time.monotonic() + 20
        while c.info("persistence")["aof_rewrite_in_progress"] and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.25)                # the cron reaps the child within 100 ms
        c.rpush("during", "b")          # after the swap: appended to the new file
        info = c.info("persistence")
        assert info["aof_rewrites"] == 1 and info["aof_last_bgrewrite_status"] == "ok"
        assert path.stat().st_size < grown
        before = state(c)
    server.stop_cleanly()
    with start(runtime, data, name=server.name) as again, client_of(again, "resp") as c:
        assert state(c) == before
        assert c.lrange("during", 0, -1) == [b"a", b"b"]


def test_info_persistence_reports_the_log(dirs):
    runtime, data = dirs
    with start(runtime, data) as server, client_of(server, "resp") as c:
        c.set("k", "v")
        info = c.info("persistence")
        assert info["aof_enabled"] == 1 and info["aof_last_write_status"] == "ok"
        assert info["aof_current_size"] == os.path.getsize(data / "appendonly.aof") > 0
        assert c.config_get("appendfilename") == {"appendfilename": "appendonly.aof"}
        assert c.config_get("aof-load-truncated") == {"aof-load-truncated": "yes"}
