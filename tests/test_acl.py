"""ACL users over both transports: requirepass and ACL users apply to ring sessions (the attach
authenticates, or AUTH over the session), and ACL's commands and NOPERM refusals answer as
redis-server 7.0's do (differential: the same commands sent to both, replies compared).

Every server here is started by its test or module on a free port with its own ring name."""

from __future__ import annotations

import os
import threading

import pytest
import redis

from goblin_ring import AuthenticationError, DataError, ResponseError, RingClient
from goblin_ring.asyncio import RingClient as AsyncRingClient
from goblin_ring.redispy import RingConnectionPool
from servers import GoblinServer


def ring_of(server: GoblinServer, **credentials) -> RingClient:
    return RingClient(name=server.name, runtime_dir=server.runtime_dir, timeout=10, **credentials)


@pytest.fixture(scope="module")
def protected(tmp_path_factory):
    with GoblinServer(tmp_path_factory.mktemp("runtime"), "--requirepass", "s3cret").start() as server:
        yield server


# ---- requirepass and users on the ring ---------------------------------------------------


def test_a_ring_session_without_credentials_gets_noauth_until_auth(protected):
    with ring_of(protected) as ring:
        with pytest.raises(ResponseError, match=r"^NOAUTH Authentication required\.$"):
            ring.get("k")
        with pytest.raises(ResponseError, match="^NOAUTH"):
            ring.execute_command("SET", "k", "v")          # the argv path too
        with pytest.raises(ResponseError, match="^WRONGPASS invalid username-password pair or user is disabled."):
            ring.execute_command("AUTH", "wrong")
        assert ring.execute_command("AUTH", "s3cret") == b"OK"
        assert ring.set("k", "v") is True
        assert ring.get("k") == b"v"


def test_the_attach_authenticates_with_redis_s_arguments(protected):
    with ring_of(protected, password="s3cret") as ring:            # the default user's
        ring.set("attach", "1")
        assert ring.get("attach") == b"1"
    with ring_of(protected, username="default", password="s3cret") as ring:
        assert ring.get("attach") == b"1"


@pytest.mark.parametrize("credentials", [dict(password="wrong"), dict(username="nobody", password="s3cret"),
                                         dict(username="default", password="")])
def test_an_attach_with_bad_credentials_is_refused_with_wrongpass(protected, credentials):
    with pytest.raises(AuthenticationError, match=r"^WRONGPASS invalid username-password pair or user is disabled\.$"):
        ring_of(protected, **credentials)


def test_a_huge_password_is_an_error_not_a_crash(protected):
    with pytest.raises(AuthenticationError, match="^WRONGPASS"):
        ring_of(protected, password="x" * 3000)
    with pytest.raises(DataError, match="more than the control socket's"):   # said before it is sent
        ring_of(protected, password="x" * 100_000)
    with ring_of(protected, password="s3cret") as ring:   # the server still serves
        with pytest.raises(ResponseError, match="^WRONGPASS"):
            ring.execute_command("AUTH", "y" * 1_000_000)
    with ring_of(protected, password="s3cret") as ring:
        assert ring.ping() is True


def test_requirepass_set_at_runtime_applies_to_new_ring_sessions(tmp_path):
    with GoblinServer(tmp_path / "runtime").start() as server:
        with ring_of(server) as before:
            before.set("k", "v")
            assert before.execute_command("CONFIG", "SET", "requirepass", "late") == b"OK"
            assert before.get("k") == b"v"          # as Redis: connections already in stay in
            with ring_of(server) as after:
                with pytest.raises(ResponseError, match="^NOAUTH"):
                    after.get("k")
            with ring_of(server, password="late") as after:
                assert after.get("k") == b"v"
            assert before.execute_command("CONFIG", "SET", "requirepass", "") == b"OK"
            with ring_of(server) as after:
                assert after.get("k") == b"v"


def test_an_authenticated_client_keeps_its_user_in_threads_and_after_fork(protected):
    with ring_of(protected, password="s3cret") as ring:
        ring.set("shared", "0")
        results = []

        def work():
            results.append(ring.incr("shared"))   # a thread's own session, attached with the credentials

        threads = [threading.Thread(target=work) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(results) == [1, 2, 3, 4]
        pid = os.fork()
        if pid == 0:
            status = 1
            try:
                status = 0 if ring.incr("shared") == 5 else 2   # the child's fresh session
            finally:
                os._exit(status)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert ring.get("shared") == b"5"


def test_the_redis_py_pool_and_the_asyncio_client_pass_credentials(protected):
    pool = RingConnectionPool(name=protected.name, runtime_dir=str(protected.runtime_dir), password="s3cret")
    client = redis.Redis(connection_pool=pool)
    try:
        client.set("pool", "1")
        assert client.get("pool") == b"1"
    finally:
        client.close()
        pool.disconnect()
    bad = RingConnectionPool(name=protected.name, runtime_dir=str(protected.runtime_dir), password="nope")
    with pytest.raises(redis.AuthenticationError):
        redis.Redis(connection_pool=bad).get("pool")
    bad.disconnect()

    import asyncio

    async def main():
        client = AsyncRingClient(name=protected.name, runtime_dir=protected.runtime_dir, password="s3cret")
        try:
            return await client.get("pool")
        finally:
            await client.aclose()

    assert asyncio.run(main()) == b"1"
