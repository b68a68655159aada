#!/usr/bin/env python3
"""GEOSEARCH BYRADIUS 100 km over 1M points (lon 5..15, lat 40..50), goblin RESP vs redis-server,
side by side: pipelined windows of 16 from one client, best of 3 rounds of 400 searches."""
import os, random, subprocess, sys, tempfile, time
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent.parent / "tests"))
from servers import GoblinServer, RedisServer
import redis
os.sched_setaffinity(0, {1})
rng = random.Random(42)
points = [(rng.uniform(5, 15), rng.uniform(40, 50), b"p%08d" % i) for i in range(1_000_000)]
crng = random.Random(7)
centres = [(crng.uniform(6, 14), crng.uniform(41, 49)) for _ in range(400)]
def run(port):
    c = redis.Redis(port=port)
    p = c.pipeline(transaction=False)
    for i in range(0, len(points), 1000):
        p.execute_command("GEOADD", "g", *[w for pt in points[i:i+1000] for w in pt])
        if i % 50000 == 0: p.execute()
    p.execute()
    assert c.zcard("g") == 1_000_000
    best = 0
    found = 0
    for _ in range(3):
        t = time.perf_counter()
        for j in range(0, 400, 16):
            p = c.pipeline(transaction=False)
            for x, y in centres[j:j+16]:
                p.execute_command("GEOSEARCH", "g", "FROMLONLAT", x, y, "BYRADIUS", 100, "km", "ASC")
            found = sum(len(r) for r in p.execute())
        best = max(best, 400 / (time.perf_counter() - t))
    c.close()
    return best, found
with tempfile.TemporaryDirectory() as d:
    g = GoblinServer(__import__("pathlib").Path(d), "--server-core", "0").start()
    try: gr = run(g.port)
    finally: g.stop()
r = RedisServer().start()
subprocess.run(["taskset", "-pc", "0", str(r.process.pid)], capture_output=True)
try: rr = run(r.port)
finally: r.stop()
print(f"goblin RESP {gr[0]:.1f} searches/s, redis {rr[0]:.1f} searches/s, ratio {gr[0]/rr[0]:.2f}x (last window hits: goblin {gr[1]}, redis {rr[1]})")
