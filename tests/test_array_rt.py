"""The RT array engine through the server: GOBLIN.RT.<ARCMD> and
--array-implementation rt create RT arrays, every GOBLIN.RT command against a Python dict on
both transports (indexes near 2^64-2 included), GOBLIN.RT.ARRESERVE failing closed at its
bounds with nothing allocated, LOCK / --mlock and the locked bytes ARINFO and INFO memory
report, DUMP/RESTORE and COPY keeping the engine and the reservation, and --mlock refused
clearly when RLIMIT_MEMLOCK does not allow it."""

from __future__ import annotations

import random
import shutil
import subprocess
import sys

import pytest

from goblin_ring import ResponseError, RespClient, RingClient
from conftest import make_client
from servers import GoblinServer

TOP = 2**64 - 2


@pytest.fixture(scope="module")
def rt_server(tmp_path_factory):
    with GoblinServer(tmp_path_factory.mktemp("runtime"), "--array-implementation", "rt").start() as server:
        yield server


@pytest.fixture(params=["ring", "resp"])
def rt_client(request, rt_server):
    c = make_client(rt_server, request.param)
    c.flushall()
    yield c
    c.close()


def arinfo(client, key) -> dict:
    reply = client.execute_command("ARINFO", key)
    if isinstance(reply, dict):
        return {bytes(k).decode(): v for k, v in reply.items()}
    return {k.decode(): v for k, v in zip(reply[::2], reply[1::2])}


def info_memory(client) -> dict:
    text = client.execute_command("INFO", "memory")
    text = text.decode() if isinstance(text, bytes) else text
    return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)


def as_int(reply) -> int:
    """An integer reply; past 2^63-1 Redis's arrays answer a bulk string (RESP2) instead."""
    return int(reply)


def encoding(client, key) -> bytes:
    value = client.execute_command("OBJECT", "ENCODING", key)
    return value if isinstance(value, bytes) else str(value).encode()


def test_arrays_take_the_engine_their_command_or_the_server_names(client, rt_client):
    client.execute_command("ARSET", "plain", 0, "v")
    client.execute_command("GOBLIN.RT.ARSET", "forced", 0, "v")
    rt_client.execute_command("ARSET", "default-rt", 0, "v")
    assert encoding(client, "forced") == b"rt"
    assert encoding(client, "plain") != b"rt"
    assert encoding(rt_client, "default-rt") == b"rt"
    assert client.execute_command("TYPE", "forced") in (b"array", "array")


def test_goblin_rt_commands_refuse_a_classic_array_and_plain_commands_read_both(client):
    client.execute_command("ARSET", "classic", 5, "x")
    with pytest.raises(ResponseError, match="WRONGTYPE.*classic"):
        client.execute_command("GOBLIN.RT.ARGET", "classic", 5)
    client.execute_command("GOBLIN.RT.ARSET", "rt", 5, "y")
    assert client.execute_command("ARGET", "rt", 5) == b"y"
    client.execute_command("SET", "string", "s")
    with pytest.raises(ResponseError, match="WRONGTYPE"):
        client.execute_command("GOBLIN.RT.ARGET", "string", 0)


def test_every_goblin_rt_command_agrees_with_a_dict(client):
    rng = random.Random(19)
    pool = sorted({*range(0, 600), *range(65_000, 66_000, 7), *(TOP - k for k in range(40)),
                   *(rng.randrange(TOP) for _ in range(200))})
    model: dict[int, bytes] = {}
    key = "model"
    for step in range(2500):
        op = rng.random()
        i = rng.choice(pool)
        if op < 0.3:
            value = b"%d-%s" % (step, b"x" * rng.choice((0, 3, 16, 40, 700)))
            created = client.execute_command("GOBLIN.RT.ARSET", key, i, value)
            assert created == (0 if i in model else 1)
            model[i] = value
        elif op < 0.4:
            picks = rng.sample(pool, 5)
            args = [x for j in picks for x in (j, b"m%d" % j)]
            new = client.execute_command("GOBLIN.RT.ARMSET", key, *args)
            assert new == sum(1 for j in picks if j not in model)
            model.update({j: b"m%d" % j for j in picks})
        elif op < 0.6:
            assert client.execute_command("GOBLIN.RT.ARGET", key, i) == model.get(i)
        elif op < 0.7:
            picks = rng.sample(pool, 4)
            assert client.execute_command("GOBLIN.RT.ARMGET", key, *picks) == [model.get(j) for j in picks]
        elif op < 0.82:
            assert client.execute_command("GOBLIN.RT.ARDEL", key, i) == (1 if model.pop(i, None) is not None else 0)
        elif op < 0.86:
            hi = min(i + rng.randrange(0, 300), TOP)
            gone = [j for j in model if i <= j <= hi]
            assert client.execute_command("GOBLIN.RT.ARDELRANGE", key, i, hi) == len(gone)
            for j in gone:
                del model[j]
        elif op < 0.93:
            hi = min(i + 15, TOP)
            assert client.execute_command("GOBLIN.RT.ARGETRANGE", key, i, hi) == [model.get(j) for j in range(i, hi + 1)]
        else:
            assert client.execute_command("GOBLIN.RT.ARCOUNT", key) == len(model)
            if not model or max(model) < 2**63 - 1 or isinstance(client, RingClient):
                # (RespClient reads no ":" integer past 2^63-1; test_array_commands.py covers ARLEN there)
                assert as_int(client.execute_command("GOBLIN.RT.ARLEN", key)) == (max(model) + 1 if model else 0)
        if model:
            assert client.execute_command("EXISTS", key) == 1
        else:
            assert client.execute_command("EXISTS", key) == 0   # deleting the last slot removed the key
    if model:
        assert encoding(client, key) == b"rt"


def test_arreserve_fails_closed_at_its_bounds_with_nothing_allocated(client):
    assert client.execute_command("GOBLIN.RT.ARRESERVE", "r", 999, 16 * 100) in (b"OK", "OK", True)
    assert encoding(client, "r") == b"rt-reserved"
    assert client.execute_command("ARCOUNT", "r") == 0
    for i in range(100):
        assert client.execute_command("ARSET", "r", i, b"%016d" % i) == 1
    used = int(info_memory(client)["goblin_memory_array"])
    with pytest.raises(ResponseError, match="bound"):
        client.execute_command("ARSET", "r", 100, b"%016d" % 100)       # past the byte budget
    with pytest.raises(ResponseError, match="bound"):
        client.execute_command("ARSET", "r", 1000, b"x")               # past max-index
    with pytest.raises(ResponseError, match="bound"):
        client.execute_command("ARSET", "r", 7, b"y" * 17)              # a bigger value needs new bytes
    assert int(info_memory(client)["goblin_memory_array"]) == used
    assert client.execute_command("ARCOUNT", "r") == 100
    assert client.execute_command("ARGET", "r", 7) == b"%016d" % 7
    assert client.execute_command("ARSET", "r", 7, b"z" * 9) == 0       # same size class: in place
    assert client.execute_command("ARDEL", "r", 50) == 1
    assert client.execute_command("ARSET", "r", 100, b"%016d" % 100) == 1   # the freed bytes are reused
    assert int(info_memory(client)["goblin_memory_array"]) == used
    info = arinfo(client, "r")
    assert info["rt-reserved"] == 1 and info["rt-max-index"] == 999
    assert info["rt-used-bytes"] == 100 * 16
    assert info["rt-reserved-bytes"] >= 1600 + 4 * 2048


def test_arreserve_moves_an_existing_rt_array_into_the_reservation_or_changes_nothing(client):
    client.execute_command("GOBLIN.RT.ARMSET", "m", 3, "a", 300, "b")
    with pytest.raises(ResponseError, match="outside the reservation"):
        client.execute_command("GOBLIN.RT.ARRESERVE", "m", 100, 64)
    assert encoding(client, "m") == b"rt"
    assert client.execute_command("GOBLIN.RT.ARRESERVE", "m", 400, 64) in (b"OK", "OK", True)
    assert encoding(client, "m") == b"rt-reserved"
    assert client.execute_command("ARMGET", "m", 3, 300, 4) == [b"a", b"b", None]


def test_arreserve_argument_and_type_errors(client):
    client.execute_command("SET", "s", "v")
    client.execute_command("ARSET", "classic", 0, "v")
    cases = [
        (("s", 10, 10), "WRONGTYPE"),
        (("classic", 10, 10), "WRONGTYPE.*classic"),
        (("k", -1, 10), "invalid array index"),
        (("k", 2**64 - 1, 10), "invalid array index"),
        (("k", "abc", 10), "invalid array index"),
        (("k", 10, -5), "not an integer"),
        (("k", 10, 10, "LOCKED"), "syntax error"),
        (("k", TOP, 16), "too large"),
    ]
    for args, error in cases:
        with pytest.raises(ResponseError, match=error):
            client.execute_command("GOBLIN.RT.ARRESERVE", *args)
    with pytest.raises(ResponseError, match="wrong number of arguments"):
        client.execute_command("GOBLIN.RT.ARRESERVE", "k", 10)
    assert client.execute_command("EXISTS", "k") == 0


def test_lock_reports_locked_bytes_in_arinfo_and_info_memory_and_frees_them(client):
    before = info_memory(client)
    assert client.execute_command("GOBLIN.RT.ARRESERVE", "locked", 65535, 1 << 20, "LOCK") in (b"OK", "OK", True)
    info = arinfo(client, "locked")
    assert info["rt-locked-bytes"] >= info["rt-reserved-bytes"] > (1 << 20)
    during = info_memory(client)
    assert int(during["array_rt_locked_bytes"]) - int(before["array_rt_locked_bytes"]) == info["rt-locked-bytes"]
    assert int(during["array_rt_reserved_bytes"]) - int(before["array_rt_reserved_bytes"]) == info["rt-reserved-bytes"]
    assert int(during["vmlck_bytes"]) >= int(before["vmlck_bytes"]) + info["rt-reserved-bytes"] - 8192
    assert info["vmlck-bytes"] >= info["rt-reserved-bytes"] - 8192
    client.execute_command("DEL", "locked")
    after = info_memory(client)
    assert int(after["array_rt_locked_bytes"]) == int(before["array_rt_locked_bytes"])
    assert int(after["vmlck_bytes"]) <= int(before["vmlck_bytes"]) + 8192


def test_dump_restore_and_copy_keep_the_engine_and_the_reservation(client):
    client.execute_command("GOBLIN.RT.ARRESERVE", "src", 5000, 4096)
    client.execute_command("ARMSET", "src", 0, "zero", 4999, "last")
    client.execute_command("GOBLIN.RT.ARSET", "plain-rt", 2**62, "far")
    for key in ("src", "plain-rt"):
        dumped = client.execute_command("DUMP", key)
        client.execute_command("RESTORE", f"{key}-restored", 0, dumped)
        client.execute_command("COPY", key, f"{key}-copied")
        for other in (f"{key}-restored", f"{key}-copied"):
            assert encoding(client, other) == encoding(client, key)
            assert as_int(client.execute_command("ARLEN", other)) == as_int(client.execute_command("ARLEN", key))
    assert client.execute_command("ARMGET", "src-restored", 0, 4999) == [b"zero", b"last"]
    assert arinfo(client, "src-copied")["rt-max-index"] == 5000
    assert client.execute_command("ARGET", "plain-rt-restored", 2**62) == b"far"
    with pytest.raises(ResponseError, match="bound"):
        client.execute_command("ARSET", "src-restored", 5001, "x")


def test_mlock_locks_the_server_and_every_reservation(tmp_path):
    with GoblinServer(tmp_path, "--mlock").start() as server:
        c = RespClient(port=server.port, socket_timeout=10.0)
        try:
            memory = info_memory(c)
            assert memory["mlock_all"] == "yes" and int(memory["vmlck_bytes"]) > 0
            c.execute_command("GOBLIN.RT.ARRESERVE", "k", 4095, 65536)     # no LOCK: --mlock locks it
            assert arinfo(c, "k")["rt-locked-bytes"] > 65536
        finally:
            c.close()


@pytest.mark.skipif(not shutil.which("setpriv") or not shutil.which("prlimit"), reason="needs setpriv and prlimit")
def test_mlock_refused_by_rlimit_memlock_stops_the_server_with_the_reason(tmp_path):
    argv = ["setpriv", "--inh-caps=-ipc_lock", "--bounding-set=-ipc_lock", "prlimit", "--memlock=65536:65536",
            sys.executable, "-m", "goblin_ring.server", "--name", "mlockrefused", "--runtime-dir", str(tmp_path),
            "--port", "0", "--mlock"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "--mlock" in done.stderr and "RLIMIT_MEMLOCK is 65536 bytes" in done.stderr


def test_a_multi_value_write_past_a_reservation_fails_whole(client):
    client.execute_command("GOBLIN.RT.ARRESERVE", "w", 99, 16 * 10)
    assert client.execute_command("ARSET", "w", 0, *[b"%016d" % i for i in range(8)]) == 8
    client.execute_command("ARSEEK", "w", 8)   # the next append goes to 8
    for command in (("ARSET", "w", 8, *[b"%016d" % i for i in range(3)]),             # 3 x 16 > 32 left
                    ("ARMSET", "w", 20, b"a" * 16, 30, b"b" * 16, 40, b"c" * 16),
                    ("ARMSET", "w", 50, b"a", 100, b"b"),                             # index past max-index
                    ("ARINSERT", "w", b"a" * 16, b"b" * 16, b"c" * 16)):
        with pytest.raises(ResponseError, match="bound"):
            client.execute_command(*command)
        assert client.execute_command("ARCOUNT", "w") == 8, command
    assert client.execute_command("ARMSET", "w", 8, b"a" * 16, 9, b"b" * 16) == 2   # exactly the budget
    client.execute_command("GOBLIN.RT.ARRESERVE", "empty", 9, 8)
    with pytest.raises(ResponseError, match="bound"):
        client.execute_command("ARSET", "empty", 0, b"x" * 9)
    assert client.execute_command("EXISTS", "empty") == 1   # a refused write leaves the reservation


def test_a_reserved_array_stays_a_key_when_empty_and_round_trips_through_dump(client):
    client.execute_command("GOBLIN.RT.ARRESERVE", "kept", 99, 64)
    dumped = client.execute_command("DUMP", "kept")
    client.execute_command("RESTORE", "kept-restored", 0, dumped)
    assert encoding(client, "kept-restored") == b"rt-reserved"
    assert client.execute_command("ARSET", "kept", 5, "v") == 1
    assert client.execute_command("ARDEL", "kept", 5) == 1
    assert client.execute_command("EXISTS", "kept") == 1       # the reservation outlives its last value
    assert arinfo(client, "kept")["rt-max-index"] == 99
    client.execute_command("GOBLIN.RT.ARSET", "unreserved", 5, "v")
    client.execute_command("ARDEL", "unreserved", 5)
    assert client.execute_command("EXISTS", "unreserved") == 0   # Redis's rule for every other array
