"""One RingClient shared by threads, and carried through fork: every thread's values are its
own, a blocking call stalls only its thread, a forked child gets a session of its own while the
parent keeps its, and multiprocessing works with fork and with spawn.

GOBLIN_THREAD_CALLS sets the calls per thread (the issue's stress size is 50000; the default
keeps the suite short)."""

from __future__ import annotations

import gc
import multiprocessing
import os
import threading

import pytest

from goblin_ring import ConnectionError, RingClient

CALLS = int(os.environ.get("GOBLIN_THREAD_CALLS", "3000"))
THREADS = 8


def _client(goblin, **options) -> RingClient:
    return RingClient(name=goblin.name, runtime_dir=goblin.runtime_dir, timeout=10.0, **options)


def _connected_clients(client: RingClient) -> int:
    return int(client.info("clients")["connected_clients"])


def _mixed_calls(client: RingClient, worker: int, calls: int) -> None:
    """calls commands of several kinds on keys of this worker's own, each reply checked."""
    key, queue, hash_key, board = (f"w{worker}:{name}" for name in ("s", "q", "h", "z"))
    for i in range(calls):
        step = i % 8
        if step == 0:
            assert client.set(key, b"%d:%d" % (worker, i)) is True
        elif step == 1:
            assert client.get(key) == b"%d:%d" % (worker, i - 1)
        elif step == 2:
            assert client.rpush(queue, b"%d" % i) >= 1
        elif step == 3:
            assert client.lpop(queue) == b"%d" % (i - 1)
        elif step == 4:
            assert client.hset(hash_key, "f", i) in (0, 1)
            assert client.hget(hash_key, "f") == b"%d" % i
        elif step == 5:
            assert client.zincrby(board, 1, "m") == float(i // 8 + 1)
        elif step == 6:
            client.rpush(queue, b"a", b"b")
            assert client.lrange(queue, 0, -1) == [b"a", b"b"]
            assert client.blpop([queue, "none"], 1) == (queue.encode(), b"a")
            assert client.rpop(queue) == b"b"
        else:
            assert client.incr("shared-counter") >= 1


def _run_threads(target, count: int = THREADS) -> None:
    errors: list[BaseException] = []

    def run(worker: int) -> None:
        try:
            target(worker)
        except BaseException as error:  # noqa: BLE001 - reported by the test thread
            errors.append(error)

    threads = [threading.Thread(target=run, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


def test_eight_threads_share_one_ring_client_and_every_reply_is_their_own(goblin):
    with _client(goblin) as client:
        client.flushall()
        _run_threads(lambda worker: _mixed_calls(client, worker, CALLS))
        increments = sum(1 for i in range(CALLS) if i % 8 == 7) * THREADS
        assert client.get("shared-counter") == b"%d" % increments
        for worker in range(THREADS):
            assert client.zscore(f"w{worker}:z", "m") == float(sum(1 for i in range(CALLS) if i % 8 == 5))


def test_eight_threads_each_run_pipelines_on_one_ring_client(goblin):
    with _client(goblin) as client:
        client.flushall()

        def pipelines(worker: int) -> None:
            key = f"p{worker}"
            for round_ in range(max(CALLS // 50, 4)):
                with client.pipeline() as pipe:
                    for i in range(25):
                        pipe.rpush(key, b"%d" % i)
                        pipe.lindex(key, -1)
                    results = pipe.execute()
                base = round_ * 25
                assert results[0::2] == list(range(base + 1, base + 26))
                assert results[1::2] == [b"%d" % i for i in range(25)]
                with client.pipeline(transaction=True) as pipe:
                    pipe.set(f"{key}:t", round_).get(f"{key}:t").llen(key)
                    assert pipe.execute() == [True, b"%d" % round_, base + 25]

        _run_threads(pipelines)


def test_watch_and_transaction_stay_on_the_thread_that_watched(goblin):
    with _client(goblin) as client:
        client.flushall()
        client.set("watched", "0")

        def transaction(worker: int) -> None:
            key = f"watched:{worker}"
            client.set(key, 0)
            with client.pipeline(transaction=True) as pipe:
                pipe.watch(key)
                value = int(client.get(key))
                pipe.set(key, value + 1)
                assert pipe.execute() == [True]
            assert client.get(key) == b"1"

        _run_threads(transaction)


def test_a_blocking_call_in_one_thread_does_not_stall_the_others(goblin):
    with _client(goblin) as client:
        client.flushall()
        client.ping()                               # the test thread owns the first session
        popped: list = []
        waiter = threading.Thread(target=lambda: popped.append(client.blpop("blocked-queue", 0)))
        waiter.start()
        for i in range(200):                        # meanwhile, this thread's calls are answered
            assert client.set("free", i) is True
        assert waiter.is_alive() and popped == []
        assert client.rpush("blocked-queue", "go") == 1
        waiter.join(10)
        assert popped == [(b"blocked-queue", b"go")]


def test_a_thread_session_ends_with_its_thread_and_max_connections_caps_them(goblin):
    with _client(goblin, max_connections=3) as client:
        client.ping()
        before = _connected_clients(client)
        release = threading.Event()
        started = threading.Barrier(3)

        def hold() -> None:
            client.ping()
            started.wait()
            release.wait()

        holders = [threading.Thread(target=hold) for _ in range(2)]
        for thread in holders:
            thread.start()
        started.wait()
        assert _connected_clients(client) == before + 2
        refused: list = []

        def one_too_many() -> None:
            try:
                client.ping()
            except ConnectionError as error:
                refused.append(str(error))

        extra = threading.Thread(target=one_too_many)
        extra.start()
        extra.join()
        assert refused == ["Too many connections"]
        release.set()
        for thread in holders:
            thread.join()
        gc.collect()
        assert _connected_clients(client) == before     # the ended threads' sessions are closed


def _child(code) -> int:
    """Run code in a forked child; its exit status: 0 when code returned True."""
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            status = 0 if code() else 2
        finally:
            os._exit(status)
    return pid


def _exit_status(pid: int) -> int:
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def test_a_forked_child_uses_the_inherited_client_on_a_session_of_its_own(goblin):
    with _client(goblin) as client:
        client.flushall()
        client.set("owner", "parent")
        parent_session = client.session_id
        before = _connected_clients(client)

        def in_child() -> bool:
            assert client.get("owner") == b"parent"
            assert client.session_id != parent_session
            for i in range(500):
                assert client.set("child", i) is True
                assert client.get("child") == b"%d" % i
            with client.pipeline() as pipe:
                pipe.rpush("child-list", "a").rpush("child-list", "b").lrange("child-list", 0, -1)
                assert pipe.execute() == [1, 2, [b"a", b"b"]]
            return _connected_clients(client) == before + 1

        pid = _child(in_child)
        for i in range(500):                        # the parent's session works on meanwhile
            assert client.set("parent", i) is True
            assert client.get("parent") == b"%d" % i
        assert _exit_status(pid) == 0
        assert client.session_id == parent_session
        assert client.get("child") == b"499"
        assert client.lrange("child-list", 0, -1) == [b"a", b"b"]
        assert client.ping() is True


def test_a_child_that_only_closes_the_inherited_client_leaves_the_parents_session(goblin):
    with _client(goblin) as client:
        client.set("k", "v")
        pid = _child(lambda: client.close() is None)
        assert _exit_status(pid) == 0
        assert client.get("k") == b"v"


def test_a_fork_while_another_thread_is_mid_call(goblin):
    with _client(goblin) as client:
        client.flushall()
        stop = threading.Event()
        running = threading.Event()
        done: list = []

        def busy() -> None:                         # owns the first session, always mid-call
            i = 0
            while not stop.is_set():
                assert client.set("busy", i) is True
                assert client.get("busy") == b"%d" % i
                running.set()
                i += 1
            done.append(i)

        blocked: list = []
        waiter = threading.Thread(target=lambda: blocked.append(client.blpop("fork-queue", 0)))
        worker = threading.Thread(target=busy)
        worker.start()
        waiter.start()
        assert running.wait(10)                     # "busy" is set before the first fork
        children = []
        for n in range(5):
            children.append(_child(lambda: client.incr("forked") >= 1 and client.get("busy") is not None
                                   and client.rpush(f"from-child-{n}", n) == 1))
        for pid in children:
            assert _exit_status(pid) == 0
        stop.set()
        worker.join()
        assert client.rpush("fork-queue", "done") == 1
        waiter.join(10)
        assert blocked == [(b"fork-queue", b"done")] and done and done[0] > 0
        assert client.get("forked") == b"5"


_inherited: RingClient | None = None


def _incr_with_inherited_client(key: str) -> int:
    return _inherited.incr(key)


def _incr_with_own_client(name: str, runtime_dir: str, key: str) -> int:
    with RingClient(name=name, runtime_dir=runtime_dir) as client:
        return client.incr(key)


def test_multiprocessing_with_fork_uses_the_inherited_client(goblin):
    global _inherited
    _inherited = _client(goblin)
    try:
        _inherited.delete("mp-fork")
        with multiprocessing.get_context("fork").Pool(2) as pool:
            results = pool.map(_incr_with_inherited_client, ["mp-fork"] * 40)
        assert sorted(results) == list(range(1, 41))
        assert _inherited.get("mp-fork") == b"40"
    finally:
        _inherited.close()
        _inherited = None


def test_multiprocessing_with_spawn_attaches_by_name(goblin):
    with _client(goblin) as client:
        client.delete("mp-spawn")
        with multiprocessing.get_context("spawn").Pool(2) as pool:
            results = pool.starmap(_incr_with_own_client,
                                   [(goblin.name, str(goblin.runtime_dir), "mp-spawn")] * 10)
        assert sorted(results) == list(range(1, 11))
        assert client.get("mp-spawn") == b"10"


def test_a_pubsub_session_made_before_a_fork_is_refused_in_the_child(goblin):
    with _client(goblin) as client:
        pubsub = client.pubsub()
        pubsub.subscribe("news")
        assert pubsub.get_message(timeout=5)["type"] == "subscribe"

        def in_child() -> bool:
            with pytest.raises(ConnectionError):
                pubsub.get_message(timeout=0)
            return client.publish("news", "from child") == 1

        assert _exit_status(_child(in_child)) == 0
        assert pubsub.get_message(timeout=5)["data"] == b"from child"
        pubsub.close()


def test_closing_the_client_while_another_thread_is_parked_in_blpop_ends_that_call(goblin):
    client = _client(goblin)
    client.ping()                                   # this thread owns the first session
    outcome: list = []

    def parked() -> None:
        try:
            outcome.append(client.blpop("never-pushed", 0))
        except ConnectionError as error:
            outcome.append(error)

    waiter = threading.Thread(target=parked)
    waiter.start()
    with RingClient(name=goblin.name, runtime_dir=goblin.runtime_dir) as admin:
        while int(admin.info("clients")["blocked_clients"]) == 0:
            pass
        client.close()                              # frees nothing the parked thread is using
        waiter.join(10)
        assert not waiter.is_alive()
        assert len(outcome) == 1 and isinstance(outcome[0], ConnectionError)
        while int(admin.info("clients")["blocked_clients"]) != 0:
            pass
        assert admin.ping() is True
