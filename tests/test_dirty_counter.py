"""The dirty counter: INFO persistence's rdb_changes_since_last_save counts
every change as Redis's server.dirty does. A seeded random run of the differential test's
commands (strings, lists, expiry, keys, COPY) compares the counter's step after every
command with redis-server's, on both transports; fixed cases pin the rules a reader would
check by hand, including the blocked pop served by a push (counted, as Redis 7.2 and valkey
do; redis-server 7.0 leaves BLPOP's and BLMOVE's served pop uncounted)."""

import os
import random
import threading

import pytest

from goblin_ring import ResponseError, RespClient
from test_differential import outcome, random_command

OPS = int(os.environ.get("GOBLIN_DIFF_OPS", "4000")) // 2


def dirty(client):
    return client.info("persistence")["rdb_changes_since_last_save"]


def test_info_persistence_has_redis_servers_fields(redis_server, client):
    with RespClient(port=redis_server.port, socket_timeout=10) as reference:
        theirs = reference.info("persistence")
    ours = client.info("persistence")
    assert {field for field in ours if not field.startswith("goblin_")} == set(theirs)
    for field in ("loading", "rdb_bgsave_in_progress", "rdb_saves", "aof_enabled", "aof_rewrite_in_progress",
                  "rdb_last_bgsave_time_sec", "aof_last_rewrite_time_sec", "rdb_last_bgsave_status"):
        assert ours[field] == theirs[field], field


@pytest.mark.parametrize("seed", [21, 22])
def test_every_random_commands_change_count_is_redis_servers(seed, redis_server, ring, resp):
    with RespClient(port=redis_server.port, socket_timeout=10) as reference:
        for c in (reference, ring, resp):
            c.flushall()
        rng = random.Random(seed)
        theirs_before, ours_before = dirty(reference), dirty(resp)
        for step in range(OPS):
            name, args, kwargs = random_command(rng)
            expected = outcome(reference, name, args, kwargs)
            client = ring if step % 2 == 0 else resp
            assert outcome(client, name, args, kwargs) == expected, f"step {step}: {name}{args}{kwargs}"
            theirs, ours = dirty(reference), dirty(resp)
            assert ours - ours_before == theirs - theirs_before, f"step {step}: {name}{args}{kwargs} -> {expected}"
            theirs_before, ours_before = theirs, ours


def changes(client, *argv):
    before = dirty(client)
    client.execute_command(*argv)
    return dirty(client) - before


def test_writes_count_what_they_changed_and_no_op_writes_count_nothing(client):
    assert changes(client, "SET", "s", "1") == 1
    assert changes(client, "SET", "s", "2", "NX") == 0
    assert changes(client, "MSET", "a", "1", "b", "2", "c", "3") == 3
    assert changes(client, "INCRBY", "a", "5") == 1
    assert changes(client, "RPUSH", "l", "1", "2", "3", "4", "5") == 5
    assert changes(client, "LPOP", "l", "2") == 2
    assert changes(client, "LREM", "l", "0", "nothing-matches") == 0
    assert changes(client, "LTRIM", "l", "0", "0") == 2
    assert changes(client, "LPOP", "no-such-list") == 0
    assert changes(client, "DEL", "a", "b", "no-such-key") == 2
    assert changes(client, "EXPIRE", "c", "100") == 1
    assert changes(client, "PERSIST", "c") == 1
    assert changes(client, "PERSIST", "c") == 0
    assert changes(client, "SWAPDB", "0", "1") == 1
    assert changes(client, "SWAPDB", "0", "1") == 1
    assert changes(client, "FLUSHALL") == 3            # the keys it removed: s, c, l
    assert changes(client, "FLUSHALL") == 0


def test_an_error_and_a_read_count_nothing(client):
    client.set("s", "x")
    before = dirty(client)
    for argv in (("INCR", "s"), ("LPUSH", "s", "v"), ("SET", "s", "v", "EX", "0")):
        with pytest.raises(ResponseError):
            client.execute_command(*argv)
    assert client.get("s") == b"x" and client.lrange("nope", 0, -1) == []
    assert dirty(client) == before


def test_keys_removed_by_expiry_are_not_counted(client):
    client.set("short", "v", px=1)
    client.set("keep", "v")
    before = dirty(client)
    while client.exists("short"):       # lazy expiry, once its millisecond has passed
        pass
    assert client.get("short") is None and client.delete("short") == 0
    assert dirty(client) == before


def test_a_blocked_pop_served_by_a_push_counts_the_push_and_the_pop(goblin, client):
    waiter = RespClient(port=goblin.port, socket_timeout=10)
    try:
        served = []
        thread = threading.Thread(target=lambda: served.append(waiter.blpop(["queue"], timeout=5)))
        thread.start()
        with RespClient(port=goblin.port, socket_timeout=10) as watcher:
            while watcher.info("clients")["blocked_clients"] == 0:
                pass
        before = dirty(client)
        client.rpush("queue", "a", "b")
        thread.join()
        assert served == [(b"queue", b"a")]
        assert dirty(client) - before == 3
    finally:
        waiter.close()


def test_a_transaction_counts_each_of_its_writes(client):
    before = dirty(client)
    with client.pipeline(transaction=True) as pipe:
        pipe.set("t", "1")
        pipe.rpush("tl", "a", "b")
        pipe.get("t")
        pipe.execute()
    assert dirty(client) - before == 3
