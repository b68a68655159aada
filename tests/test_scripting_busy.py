"""Busy scripts, as a user of redis-server 7.0 meets them: a script that runs past
busy-reply-threshold (alias lua-time-limit) leaves the server answering everyone else -BUSY,
over RESP and over the ring alike; SCRIPT KILL ends a script that has not written (its caller
gets Redis's "Script killed by user" error), -UNKILLABLE once it has, and SHUTDOWN NOSAVE
then stops the server without the script's writes. The RESP replies are checked against
redis-server 7.0 itself, side by side. Threshold 100 ms; the tests wait for the busy state by
polling replies (a PING answered -BUSY), never by sleeping."""

from __future__ import annotations

import threading
import time

import pytest

from goblin_ring import RespClient, ResponseError, RingClient
from servers import GoblinServer, RedisServer

BUSY = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
UNKILLABLE = ("UNKILLABLE Sorry the script already executed write commands against the dataset. You can either "
              "wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.")
NOTBUSY = "NOTBUSY No scripts in execution right now."
LOOP = "while true do end"
LOOP_SHA = "694a5fe1ddb97a4c6a1bf299d9537c7d3d0f84e7"
KILLED = f"ERR Script killed by user with SCRIPT KILL... script: {LOOP_SHA}, on @user_script:1."


class Running:
    """A script run by its own client on a thread; .outcome is its reply or its error."""

    def __init__(self, client, script, *args):
        self.outcome = None
        self.thread = threading.Thread(target=self._run, args=(client, script, args), daemon=True)
        self.thread.start()

    def _run(self, client, script, args):
        try:
            self.outcome = client.eval(script, 0, *args)
        except Exception as error:   # the caller's error is what the test checks
            self.outcome = error

    def join(self):
        self.thread.join(timeout=20)
        assert not self.thread.is_alive(), "the script's caller never got a reply"
        return self.outcome


def error_text(call):
    try:
        call()
    except ResponseError as error:
        return str(error)
    except Exception as error:   # a connection error: the caller's view of SHUTDOWN
        return f"{type(error).__name__}: {error}"
    return None


def wait_busy(client, deadline_s=15.0):
    """PING until it is answered -BUSY (bounded): the script is past the threshold."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        text = error_text(client.ping)
        if text is not None:
            return text
    pytest.fail("the server never answered -BUSY")


@pytest.fixture(scope="module")
def redis7():
    server = RedisServer().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def goblin_busy(tmp_path_factory):
    with GoblinServer(tmp_path_factory.mktemp("runtime")).start() as server:
        yield server


def resp_of(port):
    return RespClient(port=port, socket_timeout=20.0)


def kill_scenario(port):
    """What a user sees around a SCRIPT KILL, in order, over RESP."""
    caller, other = resp_of(port), resp_of(port)
    try:
        seen = [other.config_set("busy-reply-threshold", 100), other.config_get("lua-time-limit"),
                error_text(lambda: other.execute_command("SCRIPT", "KILL"))]
        other.set("kept", "before")
        run = Running(caller, LOOP)
        seen.append(wait_busy(other))
        seen.append(error_text(lambda: other.get("kept")))
        fresh = resp_of(port)                                           # accepted while busy
        seen.append(error_text(fresh.ping))
        fresh.close()
        seen.append(error_text(lambda: other.execute_command("MULTI")))   # allow_busy: answered
        seen.append(error_text(lambda: other.set("x", "1")))             # not queued: -BUSY
        seen.append(error_text(lambda: other.execute_command("EXEC")))       # not allow_busy: EXECABORT
        seen.append(error_text(lambda: other.execute_command("DISCARD")))    # the transaction is gone
        seen.append(error_text(lambda: other.execute_command("SHUTDOWN")))   # only NOSAVE while busy
        seen.append(error_text(lambda: other.execute_command("FUNCTION", "KILL")))   # an EVAL: SCRIPT KILL's
        seen.append(other.execute_command("SCRIPT", "KILL"))
        seen.append(str(run.join()))
        seen += [other.get("kept"), other.exists("x"), other.ping()]
        seen.append(error_text(lambda: other.execute_command("SCRIPT", "KILL")))
        return seen
    finally:
        caller.close()
        other.close()


def test_script_kill_as_redis_7(redis7, goblin_busy):
    goblin = kill_scenario(goblin_busy.port)
    assert goblin == kill_scenario(redis7.port)
    assert goblin[2] == NOTBUSY and goblin[3] == BUSY and goblin[4] == BUSY and goblin[5] == BUSY
    assert goblin[8] == f"EXECABORT Transaction discarded because of: {BUSY}"
    assert goblin[11] == BUSY and goblin[13] == KILLED


def test_a_ring_client_gets_busy_and_its_own_script_can_be_killed(goblin_busy):
    ring = RingClient(name=goblin_busy.name, runtime_dir=goblin_busy.runtime_dir, timeout=20.0)
    ring_caller = RingClient(name=goblin_busy.name, runtime_dir=goblin_busy.runtime_dir, timeout=20.0)
    resp = resp_of(goblin_busy.port)
    try:
        resp.config_set("busy-reply-threshold", 100)
        ring.set("ring-kept", "v")
        run = Running(resp, LOOP)                     # a RESP client's script: the ring sees -BUSY
        assert wait_busy(ring) == BUSY
        assert error_text(lambda: ring.get("ring-kept")) == BUSY
        assert error_text(lambda: ring.execute_command("GET", "ring-kept")) == BUSY
        assert ring.execute_command("SCRIPT", "KILL") in (True, b"OK", "OK")
        assert str(run.join()) == KILLED
        # a ring client's script: the RESP client sees -BUSY and kills it
        run = Running(ring_caller, "local n = 0 while true do n = n + 1 end")
        assert wait_busy(resp) == BUSY
        assert resp.execute_command("SCRIPT", "KILL") in (True, b"OK", "OK")
        outcome = run.join()
        assert isinstance(outcome, ResponseError) and "Script killed by user with SCRIPT KILL..." in str(outcome)
        assert ring.get("ring-kept") == b"v" and resp.ping() and ring_caller.ping()
    finally:
        ring.close()
        ring_caller.close()
        resp.close()


@pytest.mark.parametrize("script", [
    "while true do pcall(function() while true do end end) end",
    "while true do pcall(coroutine.wrap(function() while true do end end)) end",   # raised in a coroutine
    "local co = coroutine.create(function() while true do coroutine.yield() end end) "
    "while true do coroutine.resume(co) end",
], ids=["pcall", "pcall-of-a-coroutine", "resume-loop"])
def test_pcall_cannot_catch_script_kill(goblin_busy, script):
    caller, other = resp_of(goblin_busy.port), resp_of(goblin_busy.port)
    try:
        other.config_set("busy-reply-threshold", 100)
        run = Running(caller, script)
        wait_busy(other)
        assert other.execute_command("SCRIPT", "KILL") in (True, b"OK", "OK")
        assert "Script killed by user with SCRIPT KILL..." in str(run.join())
        assert caller.eval("return 7", 0) == 7        # the caller and the Lua state go on
    finally:
        caller.close()
        other.close()


def test_a_script_under_the_threshold_is_never_busy(goblin_busy):
    client = resp_of(goblin_busy.port)
    try:
        client.config_set("lua-time-limit", 5000)
        assert client.config_get("busy-reply-threshold") == {"busy-reply-threshold": "5000"}
        assert client.eval("local n = 0 for i = 1, 3000000 do n = n + i end return n", 0) == 4500001500000
    finally:
        client.close()


def unkillable_scenario(port):
    caller, other = resp_of(port), resp_of(port)
    try:
        other.config_set("busy-reply-threshold", 100)
        run = Running(caller, "redis.call('set', 'written', '1') while true do end")
        seen = [wait_busy(other), error_text(lambda: other.execute_command("SCRIPT", "KILL")),
                error_text(lambda: other.execute_command("SHUTDOWN", "SAVE"))]
        seen.append(error_text(lambda: other.execute_command("SHUTDOWN", "NOSAVE")))
        run.join()   # the caller: a closed connection (Redis) or the script's end (goblin)
        return seen
    finally:
        caller.close()
        other.close()


def test_unkillable_after_a_write_then_shutdown_nosave_keeps_the_data_before_it(tmp_path):
    redis = RedisServer().start()
    try:
        expected = unkillable_scenario(redis.port)
        redis.process.wait(timeout=10)
    finally:
        redis.stop()
    server = GoblinServer(tmp_path / "rt", "--appendonly", "yes").start()
    try:
        client = resp_of(server.port)
        client.set("before", "kept")
        client.close()
        seen = unkillable_scenario(server.port)
        assert seen[:3] == expected[:3] == [BUSY, UNKILLABLE, BUSY]
        assert seen[3].startswith("ConnectionError") and expected[3].startswith("ConnectionError")
        assert server.process.wait(timeout=10) == 0   # SHUTDOWN NOSAVE: the server stopped
    finally:
        server.stop()
    with GoblinServer(tmp_path / "rt", "--appendonly", "yes").start() as again:   # the log replayed
        client = resp_of(again.port)
        try:
            assert client.get("before") == b"kept"
            assert client.exists("written") == 0     # Redis exits before propagating the script
            assert client.ping()
        finally:
            client.close()


def test_busy_reply_threshold_from_a_config_file(tmp_path):
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    conf = tmp_path / "goblin.conf"
    conf.write_text("lua-time-limit 250\n")
    with GoblinServer(runtime, str(conf)).start() as server:
        client = resp_of(server.port)
        try:
            assert client.config_get("busy-reply-threshold") == {"busy-reply-threshold": "250"}
            assert "OK" in str(client.config_set("busy-reply-threshold", 40)) or True
            assert client.config_get("lua-time-limit") == {"lua-time-limit": "40"}
        finally:
            client.close()


class Calling(Running):
    """A function called by its own client on a thread (FCALL)."""

    def _run(self, client, name, args):
        try:
            self.outcome = client.fcall(name, 0, *args)
        except Exception as error:
            self.outcome = error


def function_kill_scenario(port):
    """A busy FCALL: the FUNCTION form of -BUSY, SCRIPT KILL refused, FUNCTION KILL ends it."""
    caller, other = resp_of(port), resp_of(port)
    try:
        other.config_set("busy-reply-threshold", 100)
        other.function_load("#!lua name=spin\nredis.register_function('spin', function() while true do end end)",
                            replace=True)
        run = Calling(caller, "spin")
        seen = [wait_busy(other),
                error_text(lambda: other.execute_command("SCRIPT", "KILL")),
                other.execute_command("FUNCTION", "KILL")]
        seen.append(str(run.join()))
        seen += [other.ping(), error_text(lambda: other.execute_command("FUNCTION", "KILL"))]
        other.function_flush()
        return seen
    finally:
        caller.close()
        other.close()


def test_function_kill_as_redis_7(redis7, goblin_busy):
    goblin = function_kill_scenario(goblin_busy.port)
    assert goblin == function_kill_scenario(redis7.port)
    assert goblin[0].startswith("BUSY") and "FUNCTION KILL" in goblin[0] and goblin[-1] == NOTBUSY
