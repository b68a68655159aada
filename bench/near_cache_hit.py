"""near_cache_hit.py — issue 34's near-cache target, broken down: what one cached GET costs
next to its parts, in the same run (ns per loop iteration; loops in functions over 200,000 fresh
bytes names of 2,000 cached keys):

    id(n)                the floor: a builtin call from a Python loop
    dict.get(n)          a dict lookup
    cffi check           gr_client_cache_check alone, through cffi, in a lambda
    NEW cached get       client.get = NearCache.get (native/python/near_cache.c): the whole hit
    OLD python hit       the hit path before it, re-created: cffi check + OrderedDict get +
                         move_to_end + counter
    uncached GET         a plain RingClient's GET

    taskset -c 1 python bench/near_cache_hit.py [rounds]     (the server is pinned to core 0)
"""
import sys, tempfile, time
from collections import OrderedDict
from pathlib import Path
from goblin_ring import CacheConfig, RingClient
from goblin_ring._native import lib
from goblin_ring.bench.servers import GoblinServer

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
N = 200000
_check = lib.gr_client_cache_check

def loop(f, names):
    t = time.perf_counter()
    for n in names: f(n)
    return (time.perf_counter() - t) / len(names) * 1e9

class Stats: hits = 0

def old_style(r):
    pointer = r._core.pointer
    entries = OrderedDict(((b"GET", k), b"v" * 64) for k in (b"k%d" % i for i in range(2000)))
    to_end, stats, missing = entries.move_to_end, Stats(), object()
    def get(name):
        key = name if type(name) is bytes else name.encode()
        status = _check(pointer)
        if status:
            raise RuntimeError(status)
        argv = (b"GET", key)
        value = entries.get(argv, missing)
        if value is not missing:
            stats.hits += 1
            to_end(argv)
            return value
    return get

with tempfile.TemporaryDirectory() as d, GoblinServer(Path(d), 0) as s:
    w = RingClient(name=s.name, runtime_dir=d)
    r = RingClient(name=s.name, runtime_dir=d, cache_config=CacheConfig(max_size=10000))
    for i in range(2000): w.set(b"k%d" % i, b"v" * 64)
    names = [b"k%d" % (i % 2000) for i in range(N)]
    for n in names[:2000]: r.get(n)
    d2 = {b"k%d" % i: b"v" * 64 for i in range(2000)}
    pointer = r._core.pointer
    check = lambda n: _check(pointer)
    old = old_style(r)
    print("ns/iteration: id | dict.get | cffi check (lambda) | NEW cached get | OLD python hit | uncached GET | new/old | uncached/new")
    for _ in range(ROUNDS):
        a, b, c = loop(id, names), loop(d2.get, names), loop(check, names)
        new, o = loop(r.get, names), loop(old, names)
        u = loop(w.get, names[:N // 10])
        print(f"{a:5.0f} {b:5.0f} {c:6.0f} {new:6.0f} {o:6.0f} {u:7.0f}   {o / new:4.1f}x {u / new:5.1f}x")
    assert r.get(b"k1") == b"v" * 64
    r.close(); w.close()
