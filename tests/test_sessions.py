"""Ring sessions end to end: attach, permissions, no segment left behind, too-large
messages, bad input over the ring, and the death of either side."""

import os
import socket
import stat
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from goblin_ring import ConnectionError, RingClient, _native, control
from servers import GoblinServer

lib = _native.lib


def test_ping_round_trips_through_the_ring(ring):
    assert ring.ping() is True
    assert ring.ping("hello") == b"hello"


def test_client_is_a_context_manager_and_close_is_idempotent(goblin):
    with RingClient(name=goblin.name, runtime_dir=goblin.runtime_dir) as client:
        assert client.ping() is True
    client.close()
    with pytest.raises(ConnectionError):
        client.ping()


def test_runtime_dir_socket_and_segments_are_owner_only(goblin):
    directory = goblin.runtime_dir
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    sock_path = control.socket_path(directory, goblin.name)
    assert stat.S_IMODE(sock_path.stat().st_mode) == 0o600
    # attach by hand, and look at the segments before confirming
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(str(sock_path))
    try:
        sock.sendall(control.frame(_native.encode_attach(
            lib.GR_T_ATTACH, protocol_version=control.PROTOCOL_VERSION, ring_capacity=65536,
            pid=os.getpid(), client_name=b"perm-test")))
        message, fds = control.receive_frame(sock, max_fds=1)
        reply = _native.decode_attach(message)
        for name in (reply["request_ring_name"], reply["reply_ring_name"]):
            path = Path("/dev/shm") / name.decode().lstrip("/")
            assert stat.S_IMODE(path.stat().st_mode) == 0o600
            assert path.stat().st_uid == os.getuid()
        sock.sendall(control.frame(_native.encode_attach(lib.GR_T_ATTACH_CONFIRM,
                                                         session_id=reply["session_id"])))
        # the confirm makes the server unlink both names; a ping from another client
        # proves the server has processed our confirm (one thread, in order per socket)
        with RingClient(name=goblin.name, runtime_dir=goblin.runtime_dir) as other:
            other.ping()
        for name in (reply["request_ring_name"], reply["reply_ring_name"]):
            assert not (Path("/dev/shm") / name.decode().lstrip("/")).exists()
        for fd in fds:
            os.close(fd)
    finally:
        sock.close()


def test_resp_listener_binds_loopback_by_default(goblin):
    out = subprocess.run(["ss", "-ltnH", f"sport = :{goblin.port}"], capture_output=True, text=True)
    if out.returncode != 0:
        pytest.skip("ss is not available")
    assert f"127.0.0.1:{goblin.port}" in out.stdout


def test_a_message_larger_than_an_eighth_of_the_ring_travels_in_fragments_both_ways(goblin, resp):
    with RingClient(name=goblin.name, runtime_dir=goblin.runtime_dir, ring_size=65536) as client:
        assert client.max_message == 65536 // 8
        assert client.rpush("big", b"x" * 65536) == 1           # the request: 8 fragments
        assert client.lindex("big", 0) == b"x" * 65536          # the reply: 8 fragments
        assert client.lrange("big", 0, -1) == [b"x" * 65536]
        assert client.rpush("big", b"x" * 1000) == 2            # the session goes on
    assert resp.lindex("big", 0) == b"x" * 65536
    resp.delete("big")


def test_large_array_replies_arrive_whole_in_fragments(ring):
    values = [b"%06d" % i for i in range(50_000)]
    assert ring.rpush_many("chunky", values) == 50_000
    assert ring.lrange("chunky", 0, -1) == values      # ~1 MB: one ArrayReply in fragments
    ring.delete("chunky")


def send_raw_and_receive(client, template, message):
    core = client._core
    core.check(lib.gr_client_send_raw(core.pointer, template, message, len(message)))
    value = core.receive()
    return value


@pytest.mark.parametrize("mutation", ["unknown template", "truncated", "wrong schema id", "short block",
                                      "var-data past the end"])
def test_bad_input_over_the_ring_gets_an_error_reply_and_others_are_untouched(goblin, mutation):
    with RingClient(name=goblin.name, runtime_dir=goblin.runtime_dir) as victim, \
            RingClient(name=goblin.name, runtime_dir=goblin.runtime_dir) as bystander:
        bystander.rpush("safe", "kept")
        message = bytearray(_native.encode_request(lib.GR_T_LLEN, request_id=1, key=b"safe"))
        template = lib.GR_T_LLEN
        if mutation == "unknown template":
            struct.pack_into("<H", message, 2, 299)
            template = 299
        elif mutation == "truncated":
            message = message[:12]
        elif mutation == "wrong schema id":
            struct.pack_into("<H", message, 4, 1)
        elif mutation == "short block":
            struct.pack_into("<H", message, 0, 3)
        else:
            struct.pack_into("<I", message, len(message) - 8, 1_000_000)
        value = send_raw_and_receive(victim, template, bytes(message))
        assert isinstance(value, Exception) and "malformed request" in str(value) or \
            "unknown template" in str(value) or "schema" in str(value), value
        assert victim.llen("safe") == 1                  # the victim's session still works
        assert bystander.lrange("safe", 0, -1) == [b"kept"]
        bystander.delete("safe")


CHILD_DIES_MID_WRITE = r"""
import os, signal, sys
from goblin_ring import RingClient, _native
client = RingClient(name=sys.argv[1], runtime_dir=sys.argv[2])
client.rpush("from-child", "before")
core = client._core
# claim a record in the request ring and die before publishing it
ring = _native.ffi.new("gr_ring_t *")
err = _native.ffi.new("char[]", 256)
segment = client._segments[0]
assert _native.lib.gr_ring_attach(ring, segment.pointer, segment.size, 4711, 1, err, 256) == 0
payload = _native.ffi.new("uint8_t **")
assert _native.lib.gr_ring_claim(ring, 203, 64, payload) == 0
print("claimed", flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_client_killed_mid_write_is_freed_and_others_keep_their_data(goblin):
    with RingClient(name=goblin.name, runtime_dir=goblin.runtime_dir) as survivor:
        survivor.rpush("survivor", "a", "b")
        child = subprocess.run([sys.executable, "-c", CHILD_DIES_MID_WRITE, goblin.name, str(goblin.runtime_dir)],
                               capture_output=True, text=True, timeout=30)
        assert child.returncode == -9 and "claimed" in child.stdout, child.stderr
        started = time.monotonic()
        goblin.wait_for_log("closed: control socket closed", timeout=1.0)
        assert time.monotonic() - started < 1.0
        assert survivor.lrange("survivor", 0, -1) == [b"a", b"b"]
        assert survivor.lrange("from-child", 0, -1) == [b"before"]
        survivor.delete("survivor", "from-child")


def test_the_owning_thread_waiting_on_a_killed_server_raises_within_a_second(tmp_path):
    """The wait in C (the session's own thread: its first caller) notices the server's death.
    The test below makes its call from a second thread, which attaches a session of its own
    (client/ring.py) and so meets the death during that attach instead."""
    server = GoblinServer(tmp_path, "--port", "0").start()
    try:
        client = RingClient(name=server.name, runtime_dir=tmp_path)
        assert client.ping()
        os.kill(server.pid, 19)                           # SIGSTOP: the next call will wait
        killer = threading.Thread(target=server.kill)
        killed_at = time.monotonic()
        killer.start()
        with pytest.raises(ConnectionError):
            client.ping()
        raised_at = time.monotonic()
        killer.join(10)
        assert raised_at - killed_at < 1.0
        client.close()
    finally:
        if server.process is not None:
            server.stop()


def test_a_client_waiting_on_a_killed_server_raises_within_a_second(tmp_path):
    server = GoblinServer(tmp_path, "--port", "0").start()
    try:
        client = RingClient(name=server.name, runtime_dir=tmp_path)
        assert client.ping()
        os.kill(server.pid, 19)                           # SIGSTOP: the next call will wait
        outcome = {}

        def call():
            try:
                client.ping()
            except ConnectionError as error:
                outcome["error"] = error
                outcome["at"] = time.monotonic()

        waiter = threading.Thread(target=call)
        waiter.start()
        killed_at = time.monotonic()
        server.kill()
        waiter.join(timeout=5)
        assert "error" in outcome, "the client did not raise ConnectionError"
        assert outcome["at"] - killed_at < 1.0
        client.close()
    finally:
        if server.process is not None:
            server.stop()


def test_a_restarted_server_sweeps_segments_a_crashed_one_left(tmp_path):
    server = GoblinServer(tmp_path, "--port", "0").start()
    name = server.name
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(str(control.socket_path(tmp_path, name)))
    sock.sendall(control.frame(_native.encode_attach(lib.GR_T_ATTACH, protocol_version=control.PROTOCOL_VERSION,
                                                     ring_capacity=65536, pid=os.getpid())))
    _message, fds = control.receive_frame(sock, max_fds=1)   # attached, never confirmed
    for fd in fds:
        os.close(fd)
    assert len(server.leftover_segments()) == 2
    server.kill()                                             # crash: nobody unlinks
    sock.close()
    assert len(server.leftover_segments()) == 2
    again = GoblinServer(tmp_path, "--port", "0", name=name).start()
    try:
        assert any("swept 2 stale segment(s)" in line for line in again.log)
        assert again.leftover_segments() == []
    finally:
        assert again.stop() == 0
    assert not control.socket_path(tmp_path, name).exists()


def test_a_second_server_with_the_same_name_refuses_to_start(goblin):
    other = GoblinServer(goblin.runtime_dir, "--port", "0", name=goblin.name)
    with pytest.raises(RuntimeError, match="already running"):
        other.start()
    other.process.wait()
    other.process.stderr.close()


def test_sigterm_stops_the_server_cleanly_and_tells_sessions(tmp_path):
    server = GoblinServer(tmp_path, "--port", "0").start()
    client = RingClient(name=server.name, runtime_dir=tmp_path)
    client.rpush("k", "v")
    assert server.stop() == 0
    with pytest.raises(ConnectionError):
        client.ping()
    client.close()
    assert server.leftover_segments() == []
    assert not control.socket_path(tmp_path, server.name).exists()


def test_an_unknown_list_implementation_is_a_clear_startup_error(tmp_path):
    server = GoblinServer(tmp_path, "--port", "0", "--list-implementation", "btree")
    with pytest.raises(RuntimeError, match="--list-implementation 'btree' is not available"):
        server.start()
    assert server.process.wait() == 2
    server.process.stderr.close()


def test_batch_calls_make_one_c_call_for_many_values(ring):
    import numpy

    values = numpy.array([b"%016d" % i for i in range(5000)], dtype="S16")
    assert ring.rpush_many("batch", values) == 5000
    assert ring.lpush_many("batch", [b"front"]) == 5001
    indexes = numpy.array([0, 1, 2500, -1, 6000], dtype=numpy.int64)
    assert ring.lindex_many("batch", indexes) == [b"front", b"0000000000000000", b"0000000000002499",
                                                  b"0000000000004999", None]
    ring.delete("batch")


def test_an_idle_adaptive_server_and_client_use_almost_no_cpu(goblin, ring):
    import psutil

    ring.ping()
    server = psutil.Process(goblin.pid)
    me = psutil.Process()
    server_before, me_before = sum(server.cpu_times()[:2]), sum(me.cpu_times()[:2])
    time.sleep(1.0)          # a measurement window, not synchronisation: nothing happens in it
    server_used = sum(server.cpu_times()[:2]) - server_before
    client_used = sum(me.cpu_times()[:2]) - me_before
    assert server_used < 0.1, f"idle server used {server_used:.3f} s of CPU in 1 s"
    assert client_used < 0.1, f"idle client used {client_used:.3f} s of CPU in 1 s"
