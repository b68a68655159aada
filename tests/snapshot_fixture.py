"""snapshot_fixture.py — writes tests/data/snapshot-format1.grdb, the snapshot file that
test_snapshot.py's compatibility test loads: every type in its small and large encodings, a key
in each of the 16 databases, key and hash-field expiries far in the future (year 2100).

The committed file was written by the server of snapshot format 1 (the format before the bulk
restore; the bulk restore reads that format unchanged). A later format must still load it; this
module regenerates it only when that file is meant to change:
    python tests/snapshot_fixture.py            # prints the digest and key counts to pin
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
FIXTURE = HERE / "data" / "snapshot-format1.grdb"
FAR = 4_102_444_800_000   # 2100-01-01, unix ms


def populate(c) -> None:
    """c: a RespClient. The same calls give the same data (and the same DEBUG DIGEST) anywhere."""
    c.set("str:int", 12345)
    c.set("str:raw", b"x" * 100)
    c.rpush("list:small", "a", "b", "c")
    c.rpush("list:big", *[b"job:%06d" % i for i in range(400)])
    c.pma.rpush("list:pma", *[b"p%d" % i for i in range(200)])
    c.sadd("set:int", *range(50))
    c.sadd("set:small", "a", "b")
    c.sadd("set:big", *[b"m%d" % i for i in range(300)])
    c.hset("hash:small", mapping={"f": "v"})
    c.hset("hash:big", mapping={b"f%d" % i: b"v%d" % i for i in range(300)})
    c.hpexpireat("hash:big", FAR, "f7")
    c.zadd("zset:small", {"a": 1.5, "b": -0.25})
    c.zadd("zset:big", {b"m%d" % i: (i * 37) % 101 / 4 for i in range(500)})
    c.execute_command("ZADD", "zset:inf", "-inf", "lo", "+inf", "hi", "0", "zero")
    c.armset("array:dense", {i: b"d%d" % i for i in range(300)})
    c.armset("array:sparse", {i * 977: b"s%d" % i for i in range(50)})
    c.execute_command("GOBLIN.RT.ARMSET", "array:rt", *[x for i in range(20) for x in (i * 3, b"r%d" % i)])
    c.set("volatile", "v")
    c.pexpireat("volatile", FAR)
    for db in range(1, 16):
        c.select(db)
        c.set(f"db{db}", db)
        c.pexpireat(f"db{db}", FAR)
    c.select(0)


def main() -> int:
    sys.path.insert(0, str(HERE))
    from goblin_ring import RespClient
    from servers import GoblinServer
    with tempfile.TemporaryDirectory() as scratch:
        data = Path(scratch, "data")
        data.mkdir()
        with GoblinServer(Path(scratch), "--dir", str(data)).start() as server:
            with RespClient(port=server.port) as c:
                populate(c)
                digest = c.debug_digest()
                c.save()
        FIXTURE.parent.mkdir(exist_ok=True)
        FIXTURE.write_bytes((data / "dump.grdb").read_bytes())
    print(f"{FIXTURE}: {FIXTURE.stat().st_size} bytes, digest {digest}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
