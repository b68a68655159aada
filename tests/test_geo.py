"""GEO commands against redis-server 7.0: GEOADD (NX/XX/CH), GEOPOS, GEODIST, GEOHASH, GEOSEARCH,
GEOSEARCHSTORE, GEORADIUS(_RO) and GEORADIUSBYMEMBER(_RO).

- Seeded random indexes (points spread over the globe, and dense clusters) and random searches
  (circles and boxes from coordinates and from members, every unit, WITHDIST/WITHCOORD/WITHHASH,
  ASC/DESC, COUNT with and without ANY, STORE/STOREDIST) run on redis-server and on goblin over
  the ring and over RESP; raw replies must be byte-equal (the "%.4f" distances, the 17-digit
  coordinates, the cells), and the typed client methods must return what redis-py returns.
- Errors: every argument error of the search family, in Redis's order.
- RESP3: redis-py speaking RESP3 reads the same values from both servers.

GOBLIN_GEO_QUERIES sets the number of random searches per index (default 60).
"""

from __future__ import annotations

import os
import random

import pytest
import redis

from goblin_ring import ResponseError, RespClient

QUERIES = int(os.environ.get("GOBLIN_GEO_QUERIES", "60"))


def raw(client, *argv):
    try:
        return ("ok", client.execute_command(*argv))
    except ResponseError as error:
        return ("error", str(error))
    except redis.ResponseError as error:
        return ("error", str(error))


def fill(client, rng_seed):
    rng = random.Random(rng_seed)
    world = []
    for i in range(2000):
        world += [f"{rng.uniform(-180, 180):.6f}", f"{rng.uniform(-85.05, 85.05):.6f}", f"w{i}"]
    cluster = []
    for i in range(400):
        cluster += [f"{rng.uniform(12.5, 13.5):.7f}", f"{rng.uniform(41.5, 42.5):.7f}", f"c{i}"]
    poles = []
    for i in range(100):
        poles += [f"{rng.uniform(-180, 180):.5f}", rng.choice(["85.05", "-85.05", f"{rng.uniform(80, 85):.4f}"]), f"p{i}"]
    client.execute_command("GEOADD", "world", *world)
    client.execute_command("GEOADD", "cluster", *cluster)
    client.execute_command("GEOADD", "poles", *poles)
    client.execute_command("GEOADD", "tiny", "13.1", "41.1", "a", "13.2", "41.2", "b", "-179.999", "0", "edge")


def random_search(rng):
    key, prefix, size = rng.choice([("world", "w", 2000), ("cluster", "c", 400), ("poles", "p", 100), ("tiny", "a", 1)])
    if key == "cluster":
        lon, lat, radius = rng.uniform(12.4, 13.6), rng.uniform(41.4, 42.6), rng.choice([0, 0.5, 2, 10, 40, 150])
    else:
        lon, lat, radius = rng.uniform(-180, 180), rng.uniform(-85, 85), rng.choice([0, 5, 300, 2000, 9000, 25000])
    unit, scale = rng.choice([("km", 1), ("m", 1000), ("mi", 0.621371), ("ft", 3280.84)])
    radius_text = f"{radius * scale:.3f}"
    member = f"{prefix}{rng.randrange(size)}" if key != "tiny" else rng.choice(["a", "b", "edge"])
    options = rng.choice([[], ["WITHDIST"], ["WITHCOORD"], ["WITHHASH"], ["WITHDIST", "WITHCOORD", "WITHHASH"],
                          ["ASC"], ["DESC", "WITHDIST"], ["COUNT", "5"], ["COUNT", "3", "ANY"],
                          ["COUNT", "7", "DESC", "WITHDIST"], ["COUNT", "100000"]])
    form = rng.randrange(6)
    if form == 0:
        return ("GEORADIUS", key, f"{lon:.5f}", f"{lat:.5f}", radius_text, unit, *options)
    if form == 1:
        return ("GEORADIUS_RO", key, f"{lon:.5f}", f"{lat:.5f}", radius_text, unit, *options)
    if form == 2:
        return ("GEORADIUSBYMEMBER", key, member, radius_text, unit, *options)
    if form == 3:
        return ("GEOSEARCH", key, "FROMLONLAT", f"{lon:.5f}", f"{lat:.5f}", "BYRADIUS", radius_text, unit, *options)
    if form == 4:
        width = f"{radius * scale * rng.uniform(0.5, 3):.3f}"
        return ("GEOSEARCH", key, "FROMMEMBER", member, "BYBOX", width, radius_text, unit, *options)
    store = [o for o in options if o.upper() not in ("WITHDIST", "WITHCOORD", "WITHHASH")]
    if rng.random() < 0.5:
        return ("GEOSEARCHSTORE", "dest", key, "FROMLONLAT", f"{lon:.5f}", f"{lat:.5f}", "BYBOX", radius_text,
                radius_text, unit, *store, *(["STOREDIST"] if rng.random() < 0.5 else []))
    return ("GEORADIUS", key, f"{lon:.5f}", f"{lat:.5f}", radius_text, unit, *store,
            rng.choice(["STORE", "STOREDIST"]), "dest")


@pytest.fixture
def reference(redis_server):
    client = RespClient(port=redis_server.port, socket_timeout=10)
    client.flushall()
    fill(client, 11)
    yield client
    client.close()


@pytest.mark.parametrize("seed", [1, 2])
def test_random_searches_reply_byte_for_byte_like_redis(seed, reference, ring, resp):
    resp.flushall()
    fill(resp, 11)
    rng = random.Random(seed)
    for step in range(QUERIES * 4):
        argv = random_search(rng)
        client = ring if step % 2 else resp
        expected = raw(reference, *argv)
        assert raw(client, *argv) == expected, argv
        if argv[0] in ("GEOSEARCHSTORE",) or "STORE" in argv or "STOREDIST" in argv:
            assert raw(client, "ZRANGE", "dest", "0", "-1", "WITHSCORES") == \
                raw(reference, "ZRANGE", "dest", "0", "-1", "WITHSCORES")


def test_positions_distances_and_hashes_match_redis(reference, client):
    client.flushall()
    fill(client, 11)
    members = [f"w{i}" for i in range(0, 2000, 7)] + ["nope", "c3", "p5"]
    for key in ("world", "cluster", "poles", "tiny", "missing"):
        for argv in (("GEOPOS", key, *members), ("GEOHASH", key, *members)):
            assert raw(client, *argv) == raw(reference, *argv)
    rng = random.Random(5)
    for _ in range(200):
        key = rng.choice(["world", "poles"])
        a, b = f"{key[0]}{rng.randrange(100)}", f"{key[0]}{rng.randrange(100)}"
        argv = ("GEODIST", key, a, b, *rng.choice([[], ["km"], ["MI"], ["ft"], ["m"]]))
        assert raw(client, *argv) == raw(reference, *argv)


def test_geoadd_options_and_argument_errors_match_redis(reference, client):
    client.flushall()
    for server in (client, reference):
        server.delete("g", "str")
        server.set("str", "x")
    steps = [
        ("GEOADD", "g", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania"),
        ("GEOADD", "g", "NX", "CH", "13.361389", "38.115556", "Palermo", "15", "37", "X"),
        ("GEOADD", "g", "XX", "CH", "13.4", "38.1", "Palermo", "1", "1", "new"),
        ("GEOADD", "g", "CH", "13.4", "38.1", "Palermo"),
        ("GEOADD", "g", "XX", "NX", "1", "2", "m"), ("GEOADD", "g", "ch", "1", "2"), ("GEOADD", "g", "nx", "ch", "xx"),
        ("GEOADD", "g", "181", "2", "m"), ("GEOADD", "g", "1", "85.06", "m"), ("GEOADD", "g", "x", "2", "m"),
        ("GEOADD", "g", "1", "2", "m", "1", "nan", "n"), ("GEOADD", "str", "1", "2", "m"),
        ("GEODIST", "g", "Palermo", "Catania", "yards"), ("GEODIST", "g", "Palermo", "Catania", "km", "x"),
        ("GEODIST", "g", "Palermo", "nope"), ("GEODIST", "str", "a", "b"), ("GEOPOS", "str", "a"),
        ("GEOSEARCH", "g", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km", "FROMMEMBER", "Palermo"),
        ("GEOSEARCH", "g", "FROMMEMBER", "Palermo", "BYRADIUS", "1", "km", "BYBOX", "1", "1", "km"),
        ("GEOSEARCH", "g", "BYRADIUS", "1", "km", "ASC"), ("GEOSEARCH", "g", "FROMLONLAT", "1", "2", "ASC"),
        ("GEOSEARCH", "g", "FROMLONLAT", "1", "2", "BYRADIUS", "-1", "km"),
        ("GEOSEARCH", "g", "FROMLONLAT", "1", "2", "BYBOX", "1", "-1", "km"),
        ("GEOSEARCH", "g", "FROMLONLAT", "1", "2", "BYBOX", "x", "1", "km"),
        ("GEOSEARCH", "g", "FROMMEMBER", "zz", "BYRADIUS", "1", "km"),
        ("GEOSEARCH", "g", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km", "bogus"),
        ("GEOSEARCH", "g", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km", "STORE", "x"),
        ("GEOSEARCHSTORE", "d", "g", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km", "WITHDIST"),
        ("GEORADIUS", "g", "1", "2", "3", "km", "STORE", "x", "WITHCOORD"), ("GEORADIUS", "g", "1", "2", "3", "km", "ANY"),
        ("GEORADIUS", "g", "1", "2", "3", "km", "COUNT", "0"), ("GEORADIUS", "g", "1", "2", "3", "km", "COUNT", "x"),
        ("GEORADIUS", "g", "1", "2", "x", "km"), ("GEORADIUS", "g", "1", "2", "3", "yd"),
        ("GEORADIUS", "g", "1", "200", "3", "km"), ("GEORADIUS_RO", "g", "1", "2", "3", "km", "STORE", "x"),
        ("GEORADIUSBYMEMBER", "g", "nope", "3", "km"), ("GEORADIUSBYMEMBER", "missing", "x", "3", "km", "STORE", "g2"),
        ("GEOSEARCH", "missing", "FROMMEMBER", "x", "BYRADIUS", "1", "km"),
        ("GEOSEARCHSTORE", "g", "missing", "FROMMEMBER", "x", "BYRADIUS", "1", "km"), ("EXISTS", "g"),
        ("GEOSEARCH", "str", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km"),
    ]
    for argv in steps:
        assert raw(client, *argv) == raw(reference, *argv), argv


def test_typed_methods_return_what_redis_py_returns(reference, client, redis_server):
    client.flushall()
    fill(client, 11)
    py = redis.Redis(port=redis_server.port)
    try:
        calls = [
            ("geopos", ("world", "w1", "nope", "w2"), {}),
            ("geohash", ("world", "w1", "nope"), {}),
            ("geodist", ("world", "w1", "w2"), {"unit": "km"}),
            ("geodist", ("world", "w1", "nope"), {}),
            ("georadius", ("cluster", 13, 42, 20), {"unit": "km", "withdist": True, "withcoord": True,
                                                    "withhash": True, "count": 5, "sort": "ASC"}),
            ("georadius", ("cluster", 13, 42, 20), {"unit": "km"}),
            ("georadiusbymember", ("cluster", "c1", 10), {"unit": "km", "withdist": True, "sort": "DESC"}),
            ("geosearch", ("cluster",), {"longitude": 13, "latitude": 42, "radius": 15, "unit": "km",
                                         "withcoord": True, "count": 4, "any": True}),
            ("geosearch", ("cluster",), {"member": "c2", "width": 30, "height": 20, "unit": "km", "sort": "ASC"}),
            ("geosearchstore", ("dest", "cluster"), {"member": "c2", "radius": 9, "unit": "km", "storedist": True}),
            ("georadius", ("cluster", 13, 42, 20), {"unit": "km", "store": "dest2"}),
            ("geoadd", ("fresh", (1.5, 2.5, "x", 3, 4, "y")), {"ch": True}),
        ]
        for name, args, kwargs in calls:
            assert getattr(client, name)(*args, **kwargs) == getattr(py, name)(*args, **kwargs), name
    finally:
        py.close()


def test_resp3_readers_see_the_same_values(reference, goblin, redis_server):
    goblin_client = redis.Redis(port=goblin.port, protocol=3)
    redis_client = redis.Redis(port=redis_server.port, protocol=3)
    try:
        goblin_client.flushall()
        fill(goblin_client, 11)
        for argv in (("GEOPOS", "world", "w1", "w9", "nope"), ("GEODIST", "world", "w1", "w9", "km"),
                     ("GEOSEARCH", "cluster", "FROMLONLAT", "13", "42", "BYRADIUS", "8", "km", "WITHCOORD",
                      "WITHDIST", "WITHHASH", "ASC")):
            assert goblin_client.execute_command(*argv) == redis_client.execute_command(*argv), argv
    finally:
        goblin_client.close()
        redis_client.close()
