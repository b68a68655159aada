"""Transactions on both transports (exec/transaction.c): MULTI/EXEC/DISCARD for ring sessions
as for RESP connections, queue-time errors answered EXECABORT, WATCH/UNWATCH with keys touched
by any client over either transport, expiry and FLUSHDB/SWAPDB as Redis 7, blocking commands
inside EXEC, the typed clients' pipeline(transaction=True) and redis-py's WATCH pipelines
racing from two clients. The differential test (test_differential.py) compares random
transactions and WATCH races with redis-server."""

import threading

import pytest
import redis

from goblin_ring import ResponseError, WatchError
from conftest import make_client

TRANSPORTS = ["ring", "resp"]


@pytest.fixture(params=TRANSPORTS)
def pair(request, goblin):
    """A client on the transport under test and another on the other transport."""
    other = "resp" if request.param == "ring" else "ring"
    first, second = make_client(goblin, request.param), make_client(goblin, other)
    first.flushall()
    yield first, second
    first.close()
    second.close()


def raw(client, *argv):
    """A command's raw reply (no conversion), or its error."""
    try:
        return client.execute_command(*argv)
    except ResponseError as error:
        return error


def test_multi_queues_and_exec_answers_every_reply_in_order(pair):
    client, _ = pair
    assert raw(client, "MULTI") == b"OK"
    assert raw(client, "SET", "k", "1") == b"QUEUED"
    assert raw(client, "INCRBY", "k", "41") == b"QUEUED"
    assert raw(client, "GET", "k") == b"QUEUED"
    assert raw(client, "EXEC") == [b"OK", 42, b"42"]
    assert client.get("k") == b"42"


def test_discard_drops_the_queue_and_without_multi_is_an_error(pair):
    client, _ = pair
    assert raw(client, "MULTI") == b"OK"
    assert raw(client, "SET", "dropped", "1") == b"QUEUED"
    assert raw(client, "DISCARD") == b"OK"
    assert client.exists("dropped") == 0
    assert str(raw(client, "EXEC")) == "ERR EXEC without MULTI"
    assert str(raw(client, "DISCARD")) == "ERR DISCARD without MULTI"
    assert raw(client, "MULTI") == b"OK"
    assert str(raw(client, "MULTI")) == "ERR MULTI calls can not be nested"
    assert str(raw(client, "WATCH", "x")) == "ERR WATCH inside MULTI is not allowed"
    assert raw(client, "EXEC") == []                  # neither error failed the transaction


def test_reset_inside_multi_drops_the_queue_and_the_watches(pair):
    client, other = pair
    client.watch("r")
    assert raw(client, "MULTI") == b"OK"
    assert raw(client, "SET", "r", "1") == b"QUEUED"
    assert raw(client, "RESET") == b"RESET"            # runs at once, as in Redis
    assert str(raw(client, "EXEC")) == "ERR EXEC without MULTI"
    other.set("r", "touched")                          # no longer watched: the next EXEC runs
    with client.pipeline(transaction=True) as pipe:
        pipe.get("r")
        assert pipe.execute() == [b"touched"]


@pytest.mark.parametrize("bad", [("NOSUCHCOMMAND", "x"), ("GET",), ("SET", "k")])
def test_a_queue_time_error_makes_exec_answer_execabort_and_run_nothing(pair, bad):
    client, _ = pair
    assert raw(client, "MULTI") == b"OK"
    assert raw(client, "SET", "never", "1") == b"QUEUED"
    assert isinstance(raw(client, *bad), ResponseError)
    assert str(raw(client, "EXEC")) == "EXECABORT Transaction discarded because of previous errors."
    assert client.exists("never") == 0


def test_typed_pipeline_transactions_run_and_report_execabort(pair):
    client, _ = pair
    with client.pipeline(transaction=True) as pipe:
        pipe.rpush("tx", "a", "b").lpop("tx").set("after", 1).llen("tx").get("after").incr("n")
        assert pipe.execute() == [2, b"a", True, 1, b"1", 1]
    with pytest.raises(ResponseError, match="EXECABORT"):
        with client.pipeline(transaction=True) as pipe:
            pipe.set("never", 1).execute_command("NOSUCHCOMMAND")
            pipe.execute()
    assert client.exists("never") == 0


@pytest.mark.parametrize("toucher_is_other_transport", [False, True], ids=["same-transport", "other-transport"])
def test_a_watched_key_touched_by_another_client_makes_exec_fail(pair, toucher_is_other_transport, goblin):
    client, other = pair
    toucher = other if toucher_is_other_transport else make_client(goblin, "ring" if other is client else "resp")
    client.set("balance", 10)
    with client.pipeline(transaction=True) as pipe:
        assert pipe.watch("balance") is True
        toucher.incr("balance")                         # after WATCH, before EXEC
        pipe.set("balance", 0).set("ran", 1)
        with pytest.raises(WatchError):
            pipe.execute()
    assert client.get("balance") == b"11" and client.exists("ran") == 0
    with client.pipeline(transaction=True) as pipe:    # EXEC unwatched everything: this one runs
        pipe.set("balance", 0)
        assert pipe.execute() == [True]
    if toucher is not other:
        toucher.close()


def test_untouched_watched_keys_and_unwatch_let_exec_run(pair):
    client, other = pair
    client.set("w", 1)
    assert client.watch("w", "missing") is True
    other.set("unrelated", 1)                          # another key: no effect
    other.get("w")                                     # a read is not a touch
    with client.pipeline(transaction=True) as pipe:
        pipe.incr("w")
        assert pipe.execute() == [2]
    assert client.watch("w") is True
    other.set("w", 5)
    assert client.unwatch() is True                    # forgets the touched key
    with client.pipeline(transaction=True) as pipe:
        pipe.incr("w")
        assert pipe.execute() == [6]


@pytest.mark.parametrize("write", [
    ("lpush", ("l", "x")), ("rpop", ("l",)), ("del", ("l",)), ("expire", ("l", 100)), ("rename", ("l", "l2")),
    ("lset", ("l", 0, "y")), ("ltrim", ("l", 0, 0)), ("lmove", ("l", "l", "LEFT", "RIGHT")),
])
def test_every_kind_of_list_write_touches_the_key(pair, write):
    client, other = pair
    client.rpush("l", "a", "b")
    client.watch("l")
    name, args = write
    other.execute_command(name.upper(), *args)
    with pytest.raises(WatchError):
        with client.pipeline(transaction=True) as pipe:
            pipe.ping()
            pipe.execute()


def test_writes_that_change_nothing_do_not_touch(pair):
    client, other = pair
    client.set("s", "v")
    client.watch("s", "absent")
    other.execute_command("SET", "s", "other", "NX")   # refused: s exists
    other.execute_command("RPUSHX", "absent", "x")     # no list: nothing pushed
    other.execute_command("DEL", "absent")             # nothing deleted
    other.execute_command("PERSIST", "s")              # no expiry to remove
    with client.pipeline(transaction=True) as pipe:
        pipe.get("s")
        assert pipe.execute() == [b"v"]


def test_flushdb_touches_watched_keys_that_exist_and_swapdb_those_replaced(pair):
    client, other = pair
    client.set("exists", 1)
    client.watch("never-there")
    other.flushdb()                                    # the watched key did not exist: no change
    with client.pipeline(transaction=True) as pipe:
        pipe.ping()
        assert pipe.execute() == [True]
    client.set("exists", 1)
    client.watch("exists")
    other.flushall()
    with pytest.raises(WatchError):
        with client.pipeline(transaction=True) as pipe:
            pipe.ping()
            pipe.execute()
    other.execute_command("SELECT", 1)
    other.set("swapped-in", 1)
    client.watch("swapped-in")                          # absent in db 0, present in db 1
    other.swapdb(0, 1)
    with pytest.raises(WatchError):
        with client.pipeline(transaction=True) as pipe:
            pipe.ping()
            pipe.execute()
    other.swapdb(0, 1)
    other.execute_command("SELECT", 0)


def test_a_watched_key_that_expires_before_exec_fails_it(pair):
    client, other = pair
    client.execute_command("SET", "short", "v", "PX", "30")
    deadline_ms = int(client.execute_command("PEXPIRETIME", "short"))
    client.watch("short")
    seconds, micros = other.execute_command("TIME")      # the server's clock, read without touching the key
    while int(seconds) * 1000 + int(micros) // 1000 <= deadline_ms:
        seconds, micros = other.execute_command("TIME")
    with pytest.raises(WatchError):
        with client.pipeline(transaction=True) as pipe:
            pipe.ping()
            pipe.execute()


def test_a_blocking_command_inside_exec_does_not_block_and_waiters_are_served_after(pair):
    client, other = pair
    blocked = threading.Thread(target=lambda: results.append(other.blpop(["queue"], timeout=10)))
    results: list = []
    blocked.start()
    while int(client.info("clients")["blocked_clients"]) < 1:
        pass
    with client.pipeline(transaction=True) as pipe:
        pipe.blpop(["nothing-here"], timeout=5).rpush("queue", "job").llen("queue")
        assert pipe.execute() == [None, 1, 1]           # BLPOP answered nil at once; the push stayed
    blocked.join(10)                                    # until EXEC ended: then the waiter took it
    assert results == [[b"queue", b"job"]] or results == [(b"queue", b"job")]
    assert client.llen("queue") == 0


@pytest.mark.parametrize("transports", [("resp", "resp"), ("ring", "resp"), ("ring", "ring")])
def test_optimistic_increments_from_two_clients_lose_nothing(goblin, transports):
    """Two clients race WATCH/GET/MULTI/SET/EXEC increments (retrying on WatchError): the
    final count is every increment, whichever transports they use."""
    clients = [make_client(goblin, kind) for kind in transports]
    clients[0].set("counter", 0)
    rounds, retries = 150, [0, 0]

    def work(index):
        client = clients[index]
        for _ in range(rounds):
            while True:
                with client.pipeline(transaction=True) as pipe:
                    pipe.watch("counter")
                    value = int(client.get("counter"))
                    pipe.set("counter", value + 1)
                    try:
                        pipe.execute()
                        break
                    except WatchError:
                        retries[index] += 1

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert int(clients[0].get("counter")) == 2 * rounds
    for client in clients:
        client.close()


def test_redis_py_transaction_helper_with_watch_retries_until_it_wins(goblin):
    with redis.Redis(port=goblin.port) as r, redis.Redis(port=goblin.port) as rival:
        r.set("stock", 5)
        attempts = []

        def buy(pipe):
            stock = int(pipe.get("stock"))
            if not attempts:
                rival.decr("stock")                     # touched between WATCH and EXEC, once
            attempts.append(stock)
            pipe.multi()
            pipe.set("stock", stock - 1)

        assert r.transaction(buy, "stock") == [True]
        assert attempts == [5, 4] and r.get("stock") == b"3"
        with r.pipeline() as pipe:                      # WATCH, then a rival SET: WatchError
            pipe.watch("stock")
            rival.set("stock", 100)
            pipe.multi()
            pipe.set("stock", 0)
            with pytest.raises(redis.WatchError):
                pipe.execute()
        assert r.get("stock") == b"100"
