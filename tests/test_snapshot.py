"""Snapshots: SAVE/BGSAVE write the whole keyspace to dir/dbfilename and
the next server loads it back equal — every type and encoding, every database, expiry as absolute
times — judged by DEBUG DIGEST, whose value equals redis-server's for the same data. A BGSAVE child
killed mid-write leaves the previous file loadable; a corrupt byte anywhere, or a cut, is refused
at start with the file and the offset named; the save rules, SHUTDOWN and SIGTERM save as Redis's do.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from goblin_ring import ResponseError, RespClient, RingClient
from servers import GoblinServer, RedisServer, free_port, wait_for_line


def start(tmp_path: Path, *extra: str) -> GoblinServer:
    """A goblin server whose snapshot lives in tmp_path/data (shared by the servers of one test)."""
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    runtime = tmp_path / f"rt{len(list(tmp_path.glob('rt*')))}"
    runtime.mkdir()
    return GoblinServer(runtime, "--dir", str(data), *extra).start()


def resp(server: GoblinServer) -> RespClient:
    return RespClient(port=server.port, socket_timeout=10.0)


def ring(server: GoblinServer) -> RingClient:
    return RingClient(name=server.name, runtime_dir=server.runtime_dir, timeout=10.0)


def config_get(c, name: str) -> str:
    reply = c.execute_command("CONFIG", "GET", name)
    return dict(zip(reply[::2], reply[1::2]))[name.encode()].decode()


def config_set(c, name: str, value) -> None:
    assert c.execute_command("CONFIG", "SET", name, value) == b"OK"


def until(condition, timeout: float = 10.0, what: str = "condition"):
    """Poll condition() (a server-side state a test cannot be told about) until true or time out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def snapshot_file(tmp_path: Path) -> Path:
    return tmp_path / "data" / "dump.grdb"


# Every type in every encoding goblin has, over both transports, in two databases, with expiry.
def populate(r, w) -> None:
    """r and w: a RingClient and a RespClient of one server (both transports write)."""
    for c, tag in ((r, b"ring"), (w, b"resp")):
        c.set(tag + b":int", 12345)
        c.set(tag + b":embstr", b"short")
        c.set(tag + b":raw", b"x" * 200)
        c.set(tag + b":bin", bytes(range(256)))
        c.rpush(tag + b":list:small", b"a", b"b", b"c")
        c.rpush(tag + b":list:big", *[b"v%05d" % i for i in range(3000)])
        c.pma.rpush(tag + b":list:pma", *[b"p%d" % i for i in range(500)])
        c.sadd(tag + b":set:int", *range(100))
        c.sadd(tag + b":set:small", b"a", b"b", b"c")
        c.sadd(tag + b":set:big", *[b"m%d" % i for i in range(1000)])
        c.hset(tag + b":hash:small", mapping={b"f1": b"v1", b"f2": b"v2"})
        c.hset(tag + b":hash:big", mapping={b"f%d" % i: b"v%d" % i for i in range(1000)})
        c.zadd(tag + b":zset:small", {b"a": 1.5, b"b": -0.25, b"c": 1e300})
        c.zadd(tag + b":zset:big", {b"m%d" % i: i * 0.1 for i in range(1000)})
        c.armset(tag + b":array:dense", {i: b"d%d" % i for i in range(600)})         # classic, dense slices
        c.armset(tag + b":array:sparse", {i * 977: b"s%d" % i for i in range(300)})   # classic, sparse slices
        c.arinsert(tag + b":array:sparse", b"appended")                              # moves the append cursor
        c.arset(tag + b":array:far", 2**64 - 2, b"last index")
        c.execute_command("GOBLIN.RT.ARMSET", tag + b":array:rt", *[x for i in range(50) for x in (i * 3, b"r%d" % i)])
        c.execute_command("GOBLIN.RT.ARRESERVE", tag + b":array:reserved", 1000, 65536)
        c.execute_command("GOBLIN.RT.ARSET", tag + b":array:reserved", 7, b"seven")
        c.set(tag + b":volatile", b"v", px=3_600_000)
        c.expire(tag + b":list:big", 7200)
    w.hset(b"hash:ttl", mapping={b"a": b"1", b"b": b"2"})
    w.hexpire(b"hash:ttl", 3600, b"a")
    w.select(3)
    w.set(b"db3", b"three", ex=1000)
    w.zadd(b"db3:z", {b"x": 1})
    w.select(0)


def state(c) -> dict:
    """What a user checks after a restart: digest, key counts per db, encodings, TTLs."""
    encodings = {}
    for key in sorted(c.keys(b"*")):
        encodings[key] = c.execute_command("OBJECT", "ENCODING", key)
    return {"digest": c.debug_digest(), "keys": c.dbsize(), "encodings": encodings,
            "db3": c.execute_command("SELECT", 3) and sorted(c.keys(b"*"))}


def test_every_type_and_encoding_round_trips_through_save_and_a_restart(tmp_path):
    with start(tmp_path) as first:
        with ring(first) as r, resp(first) as w:
            populate(r, w)
            before = state(w)
            w.select(0)
            ttl_before = w.pttl(b"ring:volatile")
            hash_ttl_before = w.httl(b"hash:ttl", b"a")
            before_arinfo = w.arinfo(b"resp:array:reserved")
            before_arnext = w.arnext(b"resp:array:sparse")
            assert w.save() is True
            assert snapshot_file(tmp_path).exists()
            assert w.info("persistence")["rdb_changes_since_last_save"] == 0
    with start(tmp_path) as second:
        assert any("DB loaded from disk" in line for line in second.log)
        with resp(second) as w:
            assert state(w) == before
            w.select(0)
            assert 0 < w.pttl(b"ring:volatile") <= ttl_before
            assert w.ttl(b"resp:list:big") > 7000
            assert w.httl(b"hash:ttl", b"a")[0] <= hash_ttl_before[0] and w.httl(b"hash:ttl", b"b") == [-1]
            assert w.lrange(b"ring:list:big", 0, 2) == [b"v00000", b"v00001", b"v00002"]
            assert w.zscore(b"resp:zset:small", b"c") == 1e300
            assert w.get(b"resp:bin") == bytes(range(256))
            assert w.arget(b"ring:array:far", 2**64 - 2) == b"last index"
            assert w.arnext(b"resp:array:sparse") == before_arnext == 1    # the cursor the ARINSERT moved
            assert w.arinfo(b"resp:array:reserved") == before_arinfo
            assert w.info("persistence")["rdb_last_load_keys_loaded"] == before["keys"] + 2


def test_debug_digest_equals_redis_servers_for_the_same_data(tmp_path):
    port = free_port()
    redis = subprocess.Popen([shutil.which("redis-server"), "--port", str(port), "--save", "", "--appendonly", "no",
                              "--enable-debug-command", "yes", "--dir", str(tmp_path)],
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        wait_for_line(redis, redis.stdout, "Ready to accept connections")
        with start(tmp_path) as goblin, resp(goblin) as ours, RespClient(port=port, socket_timeout=10) as theirs:
            for c in (ours, theirs):
                c.set("s", "text")
                c.set("n", 42)
                c.rpush("l", "a", "b", "a")
                c.sadd("si", 1, 2, 3)
                c.sadd("ss", "x", "y")
                c.hset("h", mapping={"f": "1", "g": "2"})
                c.zadd("z", {"a": 0.1, "b": 2.5, "c": -3})
                c.zadd("zbig", {f"m{i}": i / 3 for i in range(300)})
                c.zadd("zpacked", {str(i): i % 7 for i in range(-150, 150)})   # ties: orders differ, digests not
                c.set("e", "v", ex=100)
                c.select(5)
                c.set("other-db", "x")
                c.select(0)
            assert ours.execute_command("GOBLIN.ZSET.CONVERT", "zpacked", "packed") == b"OK"
            assert ours.object("encoding", "zpacked") == b"packed"
            assert ours.debug_digest() == theirs.debug_digest()
            keys = ["s", "n", "l", "si", "ss", "h", "z", "zbig", "zpacked", "e", "missing"]
            assert ours.debug_digest_value(*keys) == theirs.debug_digest_value(*keys)
            assert ours.debug_digest_value("missing") == ["0" * 40]
            ours.flushall()
            assert ours.debug_digest() == "0" * 40
    finally:
        redis.terminate()
        redis.wait()
        redis.stdout.close()


def test_bgsave_writes_from_a_child_while_the_server_serves(tmp_path):
    with start(tmp_path) as server, resp(server) as w:
        for i in range(200):
            w.set(f"k{i}", i)
        digest = w.debug_digest()
        lastsave = w.lastsave()
        config_set(w, "rdb-key-save-delay", 2000)          # 200 keys: ~0.4 s of writing
        assert w.bgsave() is True
        assert w.info("persistence")["rdb_bgsave_in_progress"] == 1
        with pytest.raises(ResponseError, match="Background save already in progress"):
            w.bgsave()
        with pytest.raises(ResponseError, match="Background save already in progress"):
            w.bgsave(schedule=True)
        with pytest.raises(ResponseError, match="Background save already in progress"):
            w.save()
        w.set("written-during-the-save", 1)                # the parent serves meanwhile
        until(lambda: w.info("persistence")["rdb_bgsave_in_progress"] == 0, what="the BGSAVE child")
        info = w.info("persistence")
        assert info["rdb_last_bgsave_status"] == "ok" and info["rdb_saves"] == 1
        assert info["rdb_changes_since_last_save"] == 1    # the write made after the fork
        assert w.lastsave() >= lastsave
        assert not list((tmp_path / "data").glob("temp-*"))
    with start(tmp_path) as again, resp(again) as w:
        assert w.debug_digest() == digest                  # the image at the fork, without the later write
        assert w.exists("written-during-the-save") == 0


def child_of(pid: int) -> int:
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return int(children[0]) if children else 0


def test_kill_9_during_bgsave_keeps_the_previous_snapshot_loadable(tmp_path):
    with start(tmp_path) as server, resp(server) as w:
        w.rpush("old", *range(100))
        w.save()
        old_digest = w.debug_digest()
        old_bytes = snapshot_file(tmp_path).read_bytes()
        for i in range(300):
            w.set(f"new{i}", "x" * 100)
        config_set(w, "rdb-key-save-delay", 5000)
        w.bgsave()
        child = until(lambda: child_of(server.pid), what="the BGSAVE child")
        until(lambda: list((tmp_path / "data").glob("temp-*.grdb")), what="the child's temp file")
        os.kill(child, signal.SIGKILL)
        until(lambda: w.info("persistence")["rdb_bgsave_in_progress"] == 0, what="the child reaped")
        assert w.info("persistence")["rdb_last_bgsave_status"] == "err"
        assert snapshot_file(tmp_path).read_bytes() == old_bytes
        assert not list((tmp_path / "data").glob("temp-*"))    # the dead child's file is removed
        # and the server itself killed -9 while a child writes: the old file is still whole
        w.bgsave()
        until(lambda: child_of(server.pid), what="the second BGSAVE child")
        server.kill()
    for leftover in (tmp_path / "data").glob("temp-*"):        # the orphaned child may still be writing
        until(lambda: not Path(f"/proc/{leftover.name[5:-5]}").exists(), what="the orphaned child")
    with start(tmp_path) as again, resp(again) as w:
        digest = w.debug_digest()
        assert digest == old_digest or w.dbsize() == 301         # the old file, or the orphan's finished one


@pytest.fixture
def saved_file(tmp_path):
    """A snapshot of ~1.3 MB (two checksum chunks) and its digest."""
    with start(tmp_path) as server, resp(server) as w:
        w.rpush("l", *[b"%08d" % i for i in range(60_000)])
        w.hset("h", mapping={f"f{i}": "v" * 20 for i in range(30_000)})
        w.zadd("z", {f"m{i}": i for i in range(20_000)})
        w.set("s", "v")
        w.save()
        digest = w.debug_digest()
    return snapshot_file(tmp_path), digest


def refused_start(tmp_path: Path, *extra: str) -> str:
    """Start a server over a bad file: it must exit 2 with its reason on stderr."""
    runtime = tmp_path / "rt-refused"
    runtime.mkdir(exist_ok=True)
    done = subprocess.run([sys.executable, "-m", "goblin_ring.server", "--name", f"bad{os.getpid()}",
                           "--runtime-dir", str(runtime), "--port", "0", "--save", "",
                           "--dir", str(tmp_path / "data"), *extra],
                          capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert done.returncode == 2, done.stderr
    assert not (runtime / f"bad{os.getpid()}.sock").exists()
    return done.stderr


@pytest.mark.parametrize("where", [0, 9, 100, 1_000_000, 1_200_000, -20, -1])
def test_a_corrupt_byte_anywhere_is_refused_naming_the_file_and_where(tmp_path, saved_file, where):
    path, _ = saved_file
    data = bytearray(path.read_bytes())
    assert len(data) > 1_250_000
    position = where % len(data)
    data[position] ^= 0x40
    path.write_bytes(bytes(data))
    error = refused_start(tmp_path)
    assert str(path) in error and "offset" in error
    if 12 <= position < len(data) - 30:
        chunk = position // (1 << 20)
        assert f"between offsets {chunk << 20} and" in error


def test_a_truncated_file_is_refused_and_a_flag_starts_empty(tmp_path, saved_file):
    path, _ = saved_file
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    error = refused_start(tmp_path)
    assert f"ends at offset {len(data) // 2}" in error and str(path) in error
    with start(tmp_path, "--start-empty-on-bad-snapshot") as server, resp(server) as w:
        assert w.dbsize() == 0
        assert any("snapshot refused, starting empty" in line for line in server.log)


def test_the_good_file_loads_equal_after_the_corruption_checks(tmp_path, saved_file):
    path, digest = saved_file
    with start(tmp_path) as server, resp(server) as w:
        assert w.debug_digest() == digest
        assert w.llen("l") == 60_000 and w.hlen("h") == 30_000 and w.zcard("z") == 20_000


def test_a_file_that_is_not_a_snapshot_is_refused(tmp_path):
    (tmp_path / "data").mkdir()
    snapshot_file(tmp_path).write_bytes(b"NOTASNAP9" + b"\0" * 100)
    assert "not a goblin snapshot" in refused_start(tmp_path)
    # one that begins as Redis's RDB is read as one (persist/rdb_load.c): this one is refused there
    snapshot_file(tmp_path).write_bytes(b"REDIS0009" + b"\0" * 100)
    assert "truncated" in refused_start(tmp_path) and "offset 109" in refused_start(tmp_path)


def test_save_rules_take_redis_syntax_and_fire_a_bgsave(tmp_path):
    with start(tmp_path, "--save", "3600 1 300 100") as server, resp(server) as w:
        assert config_get(w, "save") == "3600 1 300 100"
        config_set(w, "save", "1 2")
        assert config_get(w, "save") == "1 2"
        with pytest.raises(ResponseError, match="Invalid save parameters"):
            config_set(w, "save", "1")
        with pytest.raises(ResponseError, match="Invalid save parameters"):
            config_set(w, "save", "x 1")
        saves = w.info("persistence")["rdb_saves"]
        w.set("a", 1)
        w.set("b", 2)                                      # two changes: the rule "1 2" fires after 1 s
        until(lambda: w.info("persistence")["rdb_saves"] > saves, timeout=15, what="the save rule")
        assert snapshot_file(tmp_path).exists()
        config_set(w, "save", "")
        assert config_get(w, "save") == ""


def test_config_dir_and_dbfilename(tmp_path):
    with start(tmp_path) as server, resp(server) as w:
        assert config_get(w, "dir") == str(tmp_path / "data")
        assert config_get(w, "dbfilename") == "dump.grdb"
        other = tmp_path / "other"
        other.mkdir()
        config_set(w, "dir", str(other))
        config_set(w, "dbfilename", "mine.grdb")
        w.set("k", "v")
        w.save()
        assert (other / "mine.grdb").exists()
        with pytest.raises(ResponseError, match="can't be a path"):
            config_set(w, "dbfilename", "a/b")
        with pytest.raises(ResponseError, match="No such file or directory"):
            config_set(w, "dir", str(tmp_path / "missing"))


def test_shutdown_saves_by_its_rules_or_as_told(tmp_path):
    with start(tmp_path) as server, resp(server) as w:          # no save rules: plain SHUTDOWN does not save
        w.set("k", "1")
        w.shutdown()
        assert server.process.wait(timeout=10) == 0
    assert not snapshot_file(tmp_path).exists()
    with start(tmp_path) as server, resp(server) as w:
        w.set("k", "2")
        w.shutdown(save=True)
        assert server.process.wait(timeout=10) == 0
    with start(tmp_path, "--save", "3600 1") as server, resp(server) as w:
        assert w.get("k") == b"2"
        w.set("k", "3")
        with pytest.raises(ResponseError, match="syntax error"):
            w.execute_command("SHUTDOWN", "SAVE", "NOSAVE")
        with pytest.raises(ResponseError, match="No shutdown in progress"):
            w.execute_command("SHUTDOWN", "ABORT")
        w.shutdown(nosave=True)
        server.process.wait(timeout=10)
    with start(tmp_path, "--save", "3600 1") as server, resp(server) as w:
        assert w.get("k") == b"2"
        w.set("k", "4")
    # SIGTERM (the with block's stop) with save rules saved
    with start(tmp_path) as server, resp(server) as w:
        assert w.get("k") == b"4"


def test_both_transports_are_persisted_alike(tmp_path):
    with start(tmp_path) as server, ring(server) as r, resp(server) as w:
        r.rpush("ring-list", "a", "b")
        r.zadd("ring-z", {"m": 2})
        r.set("ring-s", "v", ex=500)
        digest = w.debug_digest()
        assert r.debug_digest() == digest
        assert r.bgsave() is True
        until(lambda: w.info("persistence")["rdb_bgsave_in_progress"] == 0, what="the BGSAVE")
    with start(tmp_path) as server, ring(server) as r:
        assert r.debug_digest() == digest
        assert 0 < r.ttl("ring-s") <= 500


def test_flushall_kills_a_bgsave_and_saves_by_the_rules(tmp_path):
    with start(tmp_path, "--save", "3600 1") as server, resp(server) as w:
        for i in range(100):
            w.set(f"k{i}", i)
        config_set(w, "rdb-key-save-delay", 20000)        # 100 keys: 2 s of writing
        w.bgsave()
        assert w.info("persistence")["rdb_bgsave_in_progress"] == 1
        w.flushall()
        info = w.info("persistence")
        assert info["rdb_bgsave_in_progress"] == 0 and info["rdb_last_bgsave_status"] == "ok"
        assert not list((tmp_path / "data").glob("temp-*"))
    with start(tmp_path) as again, resp(again) as w:
        assert w.dbsize() == 0 and snapshot_file(tmp_path).exists()


def test_array_digest_follows_slots_values_and_cursor(tmp_path):
    with start(tmp_path) as server, resp(server) as w:
        w.armset(b"a", {0: b"x", 5: b"y"})
        w.copy(b"a", b"same")
        digest = w.debug_digest_value(b"a")[0]
        assert digest != "0" * 40 and w.debug_digest_value(b"same") == [digest]
        for change in ((b"ARSET", b"same", 5, b"z"), (b"ARSET", b"same", 6, b"y"), (b"ARDEL", b"same", 0)):
            w.execute_command("DEL", b"same")
            w.copy(b"a", b"same")
            w.execute_command(*change)
            assert w.debug_digest_value(b"same") != [digest], change
        w.execute_command("DEL", b"same")
        w.copy(b"a", b"same")
        w.execute_command("ARSEEK", b"same", 3)                      # only the append cursor differs
        assert w.debug_digest_value(b"same") != [digest]


# The compatibility fixture: a snapshot of format 1 (tests/snapshot_fixture.py wrote it; a later
# format must keep loading it). Its digest and counts were read from the server that saved it.
FORMAT1_DIGEST = "98b76e92079d57d4c1aaa55109adfdb00bb61877"


def test_a_format_1_snapshot_still_loads_every_type_database_and_expiry(tmp_path):
    from snapshot_fixture import FAR, FIXTURE
    (tmp_path / "data").mkdir()
    shutil.copy(FIXTURE, snapshot_file(tmp_path))
    with start(tmp_path) as server, resp(server) as w:
        assert w.debug_digest() == FORMAT1_DIGEST
        assert w.dbsize() == 17
        assert w.execute_command("OBJECT", "ENCODING", "zset:big") == b"skiplist"
        assert w.execute_command("OBJECT", "ENCODING", "set:int") == b"intset"
        assert w.execute_command("OBJECT", "ENCODING", "list:pma") == b"pma"
        assert w.zrange("zset:inf", 0, -1) == [b"lo", b"zero", b"hi"]
        assert w.lrange("list:big", 398, -1) == [b"job:000398", b"job:000399"]
        assert w.pexpiretime("volatile") == FAR and w.hpexpiretime("hash:big", "f7") == [FAR]
        for db in range(1, 16):
            w.select(db)
            assert w.dbsize() == 1 and w.get(f"db{db}") == str(db).encode() and w.pexpiretime(f"db{db}") == FAR


def test_a_big_sorted_set_loaded_in_bulk_answers_by_rank_score_and_member_and_takes_writes(tmp_path, saved_file):
    """The saved file's 20,000-member set is rebuilt leaf by leaf with its index built once:
    every member is found by ZSCORE at the score and by ZRANK at the rank ZRANGE gives it."""
    with start(tmp_path) as server, resp(server) as w:
        entries = w.zrange("z", 0, -1, withscores=True)
        assert len(entries) == 20_000 and [s for _, s in entries] == sorted(s for _, s in entries)
        with w.pipeline(transaction=False) as pipe:
            for member, _ in entries:
                pipe.zscore("z", member)
                pipe.zrank("z", member)
            replies = pipe.execute()
        assert replies[0::2] == [s for _, s in entries] and replies[1::2] == list(range(20_000))
        cursor, seen = 0, set()
        while True:
            cursor, page = w.zscan("z", cursor, count=500)
            seen.update(member for member, _ in page)
            if cursor == 0:
                break
        assert len(seen) == 20_000
        assert w.zadd("z", {"new": 0.5}) == 1 and w.zrem("z", entries[7][0]) == 1 and w.zcard("z") == 20_000
        assert w.zrank("z", "new") == 1 and w.zrank("z", entries[8][0]) == 8   # one in before it, one out
