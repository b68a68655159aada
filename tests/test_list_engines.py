"""The list engine choice: --list-implementation pma, the GOBLIN.PMA.* and
GOBLIN.SEG.* command families over both transports (client.pma / client.seg), the
wrong-engine WRONGTYPE, a qualified blocking waiter woken by a plain push, commandstats
names, and the shapes of GOBLIN.LIST.INTERNALS."""

import psutil
import pytest

from goblin_ring import RespClient, RingClient, WrongTypeError
from resp_wire import raw_connection
from servers import GoblinServer
from test_blocking_commands import WAIT, Background, wait_for_blocked

LIST_COMMANDS = ["lpush", "rpush", "lpushx", "rpushx", "lpop", "rpop", "llen", "lindex", "lrange", "lset",
                 "linsert", "lrem", "ltrim", "lpos", "lmove", "rpoplpush", "lmpop", "blpop", "brpop", "blmove",
                 "brpoplpush", "blmpop"]
INTERNALS_FIELDS = ["representation", "elements", "live_value_bytes", "dead_value_bytes", "value_bytes_allocated",
                    None, "front_slack", "back_slack", "order_structure_bytes", "total_allocated_bytes"]


def values(n, prefix="v"):
    return [f"{prefix}{i}".encode() for i in range(n)]


@pytest.fixture(scope="module")
def pma_goblin(tmp_path_factory):
    with GoblinServer(tmp_path_factory.mktemp("runtime"), "--list-implementation", "pma").start() as server:
        yield server


def connect(server, transport):
    if transport == "ring":
        return RingClient(name=server.name, runtime_dir=server.runtime_dir, timeout=WAIT)
    return RespClient(port=server.port, socket_timeout=WAIT)


def encoding(client, key):
    return client.execute_command("OBJECT", "ENCODING", key)


def internals(client, key):
    flat = client.execute_command("GOBLIN.LIST.INTERNALS", key)
    return None if flat is None else dict(zip([k.decode() for k in flat[0::2]], flat[1::2]))


def test_each_qualified_family_creates_lists_of_its_engine(client):
    assert client.pma.rpush("p", *values(200)) == 200
    assert client.seg.rpush("s", *values(200)) == 200
    assert encoding(client, "p") == b"pma"
    assert encoding(client, "s") == b"quicklist"
    assert internals(client, "p")["representation"] == b"pma"
    assert internals(client, "s")["representation"] == b"segmented"
    client.pma.rpush("small", "a")
    assert encoding(client, "small") == b"listpack"   # compact until the thresholds


def test_a_qualified_command_on_the_other_engine_is_wrongtype_naming_both(client):
    client.pma.rpush("p", "a")
    client.seg.rpush("s", "a")
    with pytest.raises(WrongTypeError, match=r"^WRONGTYPE .*held by the pma engine \(GOBLIN\.SEG\.LINDEX wants segmented\)"):
        client.seg.lindex("p", 0)
    with pytest.raises(WrongTypeError, match=r"held by the segmented engine \(GOBLIN\.PMA\.RPUSH wants pma\)"):
        client.pma.rpush("s", "b")
    with pytest.raises(WrongTypeError, match="segmented engine"):
        client.pma.lmove("p", "s")   # the destination is checked too, and nothing moves
    assert client.lrange("p", 0, -1) == [b"a"] and client.lrange("s", 0, -1) == [b"a"]
    client.set("str", "x")
    with pytest.raises(WrongTypeError, match="Operation against a key holding the wrong kind of value"):
        client.pma.llen("str")


def test_plain_commands_work_on_lists_of_either_engine(client):
    for view, key in ((client.pma, "p"), (client.seg, "s")):
        view.rpush(key, *values(300))
        assert client.lindex(key, 150) == b"v150"
        assert client.lmpop(1, key, direction="LEFT", count=8) == [key.encode(), values(8)]
        assert client.rpop(key, 3) == [b"v299", b"v298", b"v297"]
        assert client.llen(key) == 289


def test_every_list_command_behaves_the_same_through_a_qualified_view(client):
    def script(c):
        out = [c.rpush("k", *values(150)), c.lpush("k", "h"), c.rpushx("k", "t"), c.lpushx("none", "x"),
               c.lpop("k"), c.rpop("k", 2), c.llen("k"), c.lindex("k", 75), c.lrange("k", 10, 14),
               c.lset("k", 3, "set"), c.linsert("k", "BEFORE", "v5", "ins"), c.lrem("k", 1, "v7"),
               c.lpos("k", "v9"), c.lmove("k", "k2", "LEFT", "RIGHT"), c.rpoplpush("k", "k2"),
               c.lmpop(2, "none", "k", direction="RIGHT", count=8), c.ltrim("k", 0, 99), c.llen("k"),
               c.blpop(["k"], 0.01), c.brpop(["k"], 0.01), c.blmove("k", "k2", 0.01),
               c.brpoplpush("k", "k2", 0.01), c.blmpop(0.01, 1, "k", direction="LEFT", count=3),
               c.blpop(["none"], 0.01), c.lrange("k", 0, -1), c.lrange("k2", 0, -1)]
        client.delete("k", "k2")
        return out
    plain = script(client)
    assert script(client.pma) == plain
    assert script(client.seg) == plain


def test_every_list_command_has_both_qualified_forms_in_command_info(resp):
    names = [f"goblin.{engine}.{name}" for engine in ("pma", "seg") for name in LIST_COMMANDS]
    info = resp.execute_command("COMMAND", "INFO", *names)
    assert all(entry is not None for entry in info)
    assert [entry[0] for entry in info] == [name.encode() for name in names]


def test_commandstats_name_the_qualified_command_on_both_transports(goblin):
    with RespClient(port=goblin.port) as r:
        r.execute_command("CONFIG", "RESETSTAT")
        r.pma.rpush("p", "a")
        with connect(goblin, "ring") as ring:
            ring.pma.lindex("p", 0)
            ring.seg.rpush("s", "a")
        stats = r.info("commandstats")
        r.delete("p", "s")
    assert stats["cmdstat_goblin.pma.rpush"]["calls"] == 1
    assert stats["cmdstat_goblin.pma.lindex"]["calls"] == 1
    assert stats["cmdstat_goblin.seg.rpush"]["calls"] == 1


@pytest.mark.parametrize("transport", ["ring", "resp"])
def test_a_pma_blpop_is_woken_by_a_plain_rpush_on_a_pma_server(pma_goblin, transport):
    with RespClient(port=pma_goblin.port, socket_timeout=WAIT) as admin, connect(pma_goblin, transport) as waiter:
        admin.flushall()
        waiting = Background(lambda: waiter.pma.blpop(["q"], 5))
        wait_for_blocked(admin, 1)
        assert admin.rpush("q", "job") == 1
        assert waiting.result() == (b"q", b"job")


def test_a_pma_waiter_gets_wrongtype_when_a_plain_push_creates_a_segmented_list(goblin):
    with RespClient(port=goblin.port, socket_timeout=WAIT) as admin, connect(goblin, "resp") as waiter:
        admin.flushall()
        waiting = Background(lambda: waiter.pma.blmpop(5, 1, "q", direction="LEFT", count=2))
        wait_for_blocked(admin, 1)
        admin.rpush("q", "job")
        with pytest.raises(WrongTypeError, match=r"segmented engine \(GOBLIN\.PMA\.BLMPOP wants pma\)"):
            waiting.result()
        assert admin.lrange("q", 0, -1) == [b"job"]


def test_a_pma_server_makes_pma_lists_and_says_so(pma_goblin):
    with RespClient(port=pma_goblin.port) as r:
        r.flushall()
        r.rpush("l", *values(200))
        assert encoding(r, "l") == b"pma"
        assert r.info("server")["goblin_list_implementation"] == "pma"
        assert r.execute_command("CONFIG", "GET", "list-implementation") == [b"list-implementation", b"pma"]
        with pytest.raises(WrongTypeError, match="held by the pma engine"):
            r.seg.rpush("l", "x")
        r.seg.rpush("s", *values(200))
        assert encoding(r, "s") == b"quicklist"
        r.flushall()


@pytest.mark.parametrize("engine", ["pma", "seg"])
def test_list_internals_is_a_flat_array_over_resp2(resp, engine):
    getattr(resp, engine).rpush("l", *values(1000))
    report = resp.execute_command("GOBLIN.LIST.INTERNALS", "l")
    units = "slots" if engine == "pma" else "leaves"
    assert [k.decode() for k in report[0::2]] == [f or units for f in INTERNALS_FIELDS]
    fields = dict(zip([k.decode() for k in report[0::2]], report[1::2]))
    assert fields["representation"] == (b"pma" if engine == "pma" else b"segmented")
    assert fields["elements"] == 1000
    assert fields["live_value_bytes"] == sum(len(v) + 1 for v in values(1000))
    assert all(isinstance(fields[f], int) for f in INTERNALS_FIELDS[1:] if f)
    assert fields[units] >= (1000 if engine == "pma" else 1)
    assert fields["total_allocated_bytes"] >= fields["value_bytes_allocated"] + fields["order_structure_bytes"]
    resp.delete("l")


def test_list_internals_is_a_map_over_resp3_and_checks_its_key(goblin):
    with RespClient(port=goblin.port) as r:
        r.flushall()
        r.rpush("small", "abc")
        r.set("str", "x")
        assert internals(r, "small")["representation"] == b"listpack"
        assert internals(r, "missing") is None
        with pytest.raises(WrongTypeError):
            internals(r, "str")
        with pytest.raises(Exception, match="wrong number of arguments"):
            r.execute_command("GOBLIN.LIST.INTERNALS")
    with raw_connection(goblin.port, timeout=WAIT) as sock:
        assert sock.request("HELLO", "3").startswith(b"%7\r\n")
        reply = sock.request("GOBLIN.LIST.INTERNALS", "small")
        assert reply.startswith(b"%10\r\n$14\r\nrepresentation\r\n$8\r\nlistpack\r\n$8\r\nelements\r\n:1\r\n")


def test_memory_a_big_list_frees_goes_back_to_the_os(pma_goblin):
    """Memory a big list frees (here: a compaction after LTRIM drops two thirds) must leave the
    server's RSS, also after an earlier big free: glibc's sliding mmap threshold would put the
    second list's arena on the heap, where freeing it returns nothing."""
    server = psutil.Process(pma_goblin.pid)
    client = RespClient(port=pma_goblin.port, socket_timeout=WAIT)
    batch = [b"%016d" % i for i in range(1000)]

    def fill(key, batches):
        with client.pipeline() as pipe:
            for _ in range(batches):
                pipe.execute_command("GOBLIN.PMA.LPUSH", key, *batch)
            pipe.execute()
        assert client.llen(key) == batches * len(batch)

    fill("first", 600)
    assert client.delete("first") == 1
    before = server.memory_info().rss
    fill("second", 300)
    grown = server.memory_info().rss - before
    assert grown > 4_000_000, f"300k values of 16 B take megabytes, but RSS grew {grown} bytes"
    assert client.ltrim("second", 0, 99_999) is True
    assert client.llen("second") == 100_000 and client.lindex("second", 0) == batch[-1]
    held = internals(client, "second")["total_allocated_bytes"]
    kept = server.memory_info().rss - before
    assert kept < 2 * held + 1_000_000, f"RSS kept {kept} bytes for a list that holds {held}"
    assert client.delete("second") == 1
    client.close()
