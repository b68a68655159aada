"""CLIENT UNBLOCK id [TIMEOUT|ERROR]: a client blocked in BLPOP, BLMOVE or
BLMPOP over either transport is answered from another connection of either transport — with
its timeout reply, or with Redis's "-UNBLOCKED client unblocked via CLIENT UNBLOCK" — and
goes on with its later commands; the reply is 1 for a blocked client, 0 otherwise; argument
errors are redis-server's own. Synchronisation is INFO blocked_clients, never a sleep."""

from __future__ import annotations

import pytest

from goblin_ring import ResponseError, RespClient
from test_blocking_commands import Background, other_client, wait_for_blocked

WAIT = 10.0

BLOCKING_CALLS = {
    "blpop": lambda c: c.blpop(["nothing", "nothing2"], timeout=0),
    "blmove": lambda c: c.blmove("nothing", "destination", 0, "LEFT", "RIGHT"),
    "blmpop": lambda c: c.blmpop(0, 2, "nothing", "nothing2", direction="LEFT", count=3),
}


def block_in_a_thread(admin, waiter, call) -> tuple:
    """Run call(waiter) in a thread of its own, once that thread has asked CLIENT ID: a RingClient
    used from a second thread is that thread's own session (client/ring.py), so the id to
    unblock is the one the blocking thread sees. (Background thread, its client id.)"""
    ids: list = []
    blocked = Background(lambda: ids.append(waiter.execute_command("CLIENT", "ID")) or call(waiter))
    wait_for_blocked(admin, 1)
    return blocked, ids[0]


@pytest.fixture
def admin(goblin):
    with RespClient(port=goblin.port, socket_timeout=WAIT) as c:
        c.flushall()
        yield c


@pytest.mark.parametrize("command", sorted(BLOCKING_CALLS))
@pytest.mark.parametrize("waiter_transport", ["ring", "resp"])
@pytest.mark.parametrize("unblocker_transport", ["ring", "resp"])
def test_unblock_answers_a_blocked_client_as_its_timeout_would(goblin, admin, command, waiter_transport,
                                                                unblocker_transport):
    with other_client(goblin, waiter_transport) as waiter, other_client(goblin, unblocker_transport) as unblocker:
        blocked, waiter_id = block_in_a_thread(admin, waiter, BLOCKING_CALLS[command])
        reason = () if command == "blpop" else ("TIMEOUT",)   # TIMEOUT is the default
        assert unblocker.execute_command("CLIENT", "UNBLOCK", waiter_id, *reason) == 1
        assert blocked.result() is None
        assert admin.info("clients")["blocked_clients"] == 0
        assert unblocker.execute_command("CLIENT", "UNBLOCK", waiter_id) == 0   # no longer blocked
        # it waits on nothing any more: a push stays where it is, and the client goes on
        admin.rpush("nothing", "kept")
        assert waiter.lrange("nothing", 0, -1) == [b"kept"]
        assert waiter.ping() is True


@pytest.mark.parametrize("waiter_transport", ["ring", "resp"])
@pytest.mark.parametrize("unblocker_transport", ["ring", "resp"])
def test_unblock_error_answers_with_redis_unblocked_error(goblin, admin, waiter_transport, unblocker_transport):
    with other_client(goblin, waiter_transport) as waiter, other_client(goblin, unblocker_transport) as unblocker:
        blocked, waiter_id = block_in_a_thread(admin, waiter, lambda c: c.blpop(["nothing"], timeout=0))
        assert unblocker.execute_command("CLIENT", "UNBLOCK", waiter_id, "error") == 1
        with pytest.raises(ResponseError, match="^UNBLOCKED client unblocked via CLIENT UNBLOCK$"):
            blocked.result()
        assert waiter.rpush("after", "x") == 1


def test_a_pipelined_command_behind_the_blocked_one_runs_after_the_unblock(goblin, admin):
    with other_client(goblin, "resp") as waiter:
        waiter_id = waiter.execute_command("CLIENT", "ID")
        pipe = waiter.pipeline()
        pipe.blpop(["nothing"], timeout=0)
        pipe.rpush("behind", "ran")
        blocked = Background(pipe.execute)
        wait_for_blocked(admin, 1)
        assert admin.llen("behind") == 0                        # parked behind the BLPOP
        assert admin.execute_command("CLIENT", "UNBLOCK", waiter_id) == 1
        assert blocked.result() == [None, 1]
        assert admin.lrange("behind", 0, -1) == [b"ran"]


def test_a_client_that_is_not_blocked_or_does_not_exist_is_not_unblocked(goblin, admin):
    with other_client(goblin, "ring") as idle:
        idle_id = idle.execute_command("CLIENT", "ID")
        assert admin.execute_command("CLIENT", "UNBLOCK", idle_id) == 0
        assert admin.execute_command("CLIENT", "UNBLOCK", idle_id, "ERROR") == 0
        assert idle.ping() is True
    assert admin.execute_command("CLIENT", "UNBLOCK", 987654321) == 0
    assert admin.execute_command("CLIENT", "UNBLOCK", -5) == 0


ARGUMENT_CASES = [("CLIENT", "UNBLOCK"), ("CLIENT", "UNBLOCK", "abc"), ("CLIENT", "UNBLOCK", "1", "soon"),
                  ("CLIENT", "UNBLOCK", "abc", "soon"), ("CLIENT", "UNBLOCK", "1", "2", "3"),
                  ("CLIENT", "UNBLOCK", "0", "error"), ("CLIENT", "UNBLOCK", "1.5")]


def outcome(client, argv):
    try:
        return ("ok", client.execute_command(*argv))
    except ResponseError as error:
        return ("error", str(error))


def test_argument_errors_are_redis_servers(redis_server, client):
    with RespClient(port=redis_server.port, socket_timeout=WAIT) as reference:
        for argv in ARGUMENT_CASES:
            assert outcome(client, argv) == outcome(reference, argv), argv
    help_lines = client.execute_command("CLIENT", "HELP")
    assert b"UNBLOCK <clientid> [TIMEOUT|ERROR]" in help_lines
