"""BZPOPMIN, BZPOPMAX and BZMPOP over both transports: the ready path replies like ZPOPMIN/ZMPOP,
an empty key parks the client until a ZADD (or a ZUNIONSTORE / RESTORE / COPY creating the key)
from either transport serves it, first come first served; the server's timeout answers nil; a
ring wait longer than the client's own timeout still gets its value; Redis's errors."""

from __future__ import annotations

import time

import pytest

from goblin_ring import ResponseError, RingClient
from test_blocking_commands import WAIT, Background, other_client, wait_for_blocked


@pytest.fixture
def admin(goblin):
    from goblin_ring import RespClient
    with RespClient(port=goblin.port, socket_timeout=WAIT) as c:
        c.flushall()
        yield c


def test_ready_paths_reply_like_zpopmin_and_zmpop(client):
    client.zadd("z", {"a": 1, "b": 2, "c": 3})
    assert client.bzpopmin(["nokey", "z"], 1) == (b"z", b"a", 1.0)
    assert client.bzpopmax("z", 1) == (b"z", b"c", 3.0)
    assert client.bzmpop(1, 2, ["nokey", "z"], min=True, count=5) == [b"z", [[b"b", 2.0]]]
    assert client.exists("z") == 0


def test_errors_match_redis(client):
    client.set("s", "x")
    for argv, error in [(("BZPOPMIN", "z", "x"), "^ERR timeout is not a float or out of range$"),
                        (("BZPOPMIN", "z", "-1"), "^ERR timeout is negative$"),
                        (("BZMPOP", "0", "0", "z", "MIN"), "^ERR numkeys should be greater than 0$"),
                        (("BZMPOP", "0", "1", "z", "LEFT"), "^ERR syntax error$"),
                        (("BZMPOP", "0", "1", "z", "MIN", "COUNT", "0"), "^ERR count should be greater than 0$"),
                        (("BZPOPMIN", "s", "0"), "^WRONGTYPE"),
                        (("BZPOPMIN", "z"), "^ERR wrong number of arguments for 'bzpopmin' command$")]:
        with pytest.raises(ResponseError, match=error):
            client.execute_command(*argv)


@pytest.mark.parametrize("waiter_transport", ["ring", "resp"])
@pytest.mark.parametrize("writer_transport", ["ring", "resp"])
def test_a_zadd_from_either_transport_wakes_a_waiter_on_either(goblin, admin, waiter_transport, writer_transport):
    with other_client(goblin, waiter_transport) as waiter, other_client(goblin, writer_transport) as writer:
        blocked = Background(lambda: waiter.bzpopmax(["k1", "k2"], 0))
        wait_for_blocked(admin, 1)
        writer.zadd("k2", {"low": 1, "high": 2})
        assert blocked.result() == (b"k2", b"high", 2.0)
        assert admin.zrange("k2", 0, -1) == [b"low"]


@pytest.mark.parametrize("transport", ["ring", "resp"])
def test_bzmpop_blocks_then_takes_up_to_count_from_the_created_key(goblin, admin, transport):
    with other_client(goblin, transport) as waiter:
        blocked = Background(lambda: waiter.bzmpop(0, 2, ["a", "b"], min=True, count=2))
        wait_for_blocked(admin, 1)
        admin.zadd("src", {"x": 5, "y": 6, "z": 7})
        admin.zunionstore("b", ["src"])   # a store creating the key serves the waiter too
        assert blocked.result() == [b"b", [[b"x", 5.0], [b"y", 6.0]]]


def test_waiters_are_served_first_come_first_served(goblin, admin):
    with other_client(goblin, "ring") as first, other_client(goblin, "resp") as second:
        one = Background(lambda: first.bzpopmin("q", 0))
        wait_for_blocked(admin, 1)
        two = Background(lambda: second.bzpopmin("q", 0))
        wait_for_blocked(admin, 2)
        admin.zadd("q", {"m1": 1})
        assert one.result() == (b"q", b"m1", 1.0)
        admin.zadd("q", {"m2": 2})
        assert two.result() == (b"q", b"m2", 2.0)


@pytest.mark.parametrize("transport", ["ring", "resp"])
def test_the_server_times_out_a_wait_with_the_nil_reply(goblin, admin, transport):
    with other_client(goblin, transport) as waiter:
        started = time.monotonic()
        assert waiter.bzpopmin(["never1", "never2"], 0.2) is None
        assert 0.19 <= time.monotonic() - started < 5
        assert waiter.bzmpop(0.05, 1, ["never1"], max=True) is None
        assert waiter.ping()
        assert admin.info("clients")["blocked_clients"] == 0


def test_a_ring_wait_longer_than_the_client_timeout_still_gets_its_value(goblin, admin):
    with RingClient(name=goblin.name, runtime_dir=goblin.runtime_dir, timeout=0.05) as waiter:
        blocked = Background(lambda: waiter.bzpopmin("late", 0))
        wait_for_blocked(admin, 1)
        time.sleep(0.2)   # not synchronisation: a delay longer than the client's own timeout
        admin.zadd("late", {"still-delivered": 1})
        assert blocked.result() == (b"late", b"still-delivered", 1.0)


def test_inside_exec_a_blocking_pop_answers_at_once(client):
    pipe = client.pipeline(transaction=True)
    pipe.bzpopmin("empty", 0)
    assert pipe.execute() == [None]
