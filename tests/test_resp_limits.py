"""RESP clients that try to bring the server down, each against its own server:
a huge multibulk paced in small pieces (parsed in linear time while others are served), a
client that never reads (client-output-buffer-limit), buffers past maxmemory-clients, a
query buffer past client-query-buffer-limit, and a descriptor limit (`ulimit -n`): maxclients
lowered with Redis's log line, and accept backing off without spinning or flooding the log.
Any argument count Redis accepts works: RPUSH with 70,000 and 200,000 values."""

from __future__ import annotations

import os
import socket
import subprocess
import time

import pytest
import redis

from resp_wire import encode_command as pack, raw_connection
from servers import GoblinServer


def raw(server: GoblinServer):
    return raw_connection(server.port, timeout=30)


def read_until_closed(conn) -> bytes:
    """What arrives before the server closes; a reset (it closed with our input unread) ends it too."""
    try:
        return conn.read_until_closed()
    except ConnectionResetError:
        return b""


def send_until_closed(conn, data: bytes) -> None:
    """Send data; the server may close the connection part way (that is what is tested)."""
    try:
        conn.sendall(data)
    except OSError:
        pass


def cpu_seconds(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.fixture
def server(tmp_path):
    started = GoblinServer(tmp_path).start()
    yield started
    assert started.stop() == 0


def test_rpush_takes_any_argument_count_redis_accepts(server):
    r = redis.Redis(port=server.port)
    assert r.rpush("seventy", *range(70_000)) == 70_000
    assert r.rpush("many", *range(200_000)) == 200_000
    assert r.lindex("many", -1) == b"199999"
    assert r.lrange("seventy", 0, 2) == [b"0", b"1", b"2"]


def test_a_huge_multibulk_paced_in_small_pieces_is_parsed_once_while_others_are_served(tmp_path):
    # --spin-us 0: the server sleeps between pieces, so its CPU time is parsing, not spinning
    server = GoblinServer(tmp_path, "--spin-us", "0").start()
    try:
        values = [b"%099d" % i for i in range(70_000)]           # 7 MB of arguments
        frame = pack("RPUSH", "paced", *values)
        other = redis.Redis(port=server.port)
        sender = raw(server)
        before = cpu_seconds(server.pid)
        piece, slowest_ping = 1024, 0.0
        for at in range(0, len(frame), piece):
            sender.sendall(frame[at:at + piece])
            if at % (2 * piece) == 0:            # another client is served between pieces (one read each)
                start = time.perf_counter()
                assert other.ping()
                slowest_ping = max(slowest_ping, time.perf_counter() - start)
        assert sender.recv(100) == b":70000\r\n"
        used = cpu_seconds(server.pid) - before
        # Re-parsing from *N on every read (the old parser: 3,500 reads of up to 7 MB) cost
        # seconds here; parsing where the last read stopped costs milliseconds.
        assert used < 1.5, f"the server spent {used:.2f} s of CPU on a 7 MB frame"
        assert slowest_ping < 1.0
        assert other.llen("paced") == 70_000
        assert other.lindex("paced", 69_999) == values[-1]
        sender.close()
    finally:
        assert server.stop() == 0


def test_a_client_that_never_reads_is_closed_at_the_output_buffer_limit_and_logged(server):
    r = redis.Redis(port=server.port)
    assert r.config_get("client-output-buffer-limit") == {
        "client-output-buffer-limit": "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"}
    r.rpush("wide", *[b"v" * 100] * 1000)                          # each LRANGE answers ~110 KB
    assert r.config_set("client-output-buffer-limit", "normal 1mb 0 0")
    greedy = raw(server)
    greedy.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    request = pack("LRANGE", "wide", 0, -1) * 100
    try:
        for _ in range(10):                                         # up to 110 MB of replies, never read
            greedy.sendall(request)
    except OSError:
        pass                                                        # closed under us: what we want
    lines = server.wait_for_log("for overcoming of output buffer limits", timeout=30)
    assert "scheduled to be closed ASAP" in lines[-1] and " cmd=lrange" in lines[-1]
    read_until_closed(greedy)                                       # EOF: the server closed it
    greedy.close()
    assert r.ping()
    assert len(r.client_list()) == 1
    assert r.config_set("client-output-buffer-limit", "normal 0 0 0")


def test_buffers_past_maxmemory_clients_evict_the_largest_client(server):
    r = redis.Redis(port=server.port)
    assert r.config_get("maxmemory-clients") == {"maxmemory-clients": "0"}
    assert r.config_set("maxmemory-clients", "2mb")
    hog = raw(server)
    send_until_closed(hog, b"*2\r\n$4\r\nECHO\r\n$6000000\r\n" + b"a" * 3_000_000)   # half of a 6 MB argument
    line = server.wait_for_log("Evicting client: ", timeout=30)[-1]
    assert "qbuf=" in line
    assert read_until_closed(hog) == b""
    hog.close()
    assert r.ping()
    assert r.config_set("maxmemory-clients", "0")


def test_a_query_buffer_past_client_query_buffer_limit_closes_the_client(server):
    r = redis.Redis(port=server.port)
    assert r.config_get("client-query-buffer-limit") == {"client-query-buffer-limit": "1073741824"}
    assert r.config_set("client-query-buffer-limit", "1mb")
    flood = raw(server)
    send_until_closed(flood, b"*2\r\n$4\r\nECHO\r\n$3000000\r\n" + b"a" * 2_000_000)
    server.wait_for_log("Closing client that reached max query buffer length", timeout=30)
    assert read_until_closed(flood) == b""
    flood.close()
    assert r.ping()
    assert r.config_set("client-query-buffer-limit", "1gb")


def test_client_buffer_settings_take_redis_values_and_errors(server):
    r = redis.Redis(port=server.port)
    assert r.config_set("client-output-buffer-limit", "pubsub 64mb 16mb 30 normal 10mb 5mb 10")
    assert r.config_get("client-output-buffer-limit")["client-output-buffer-limit"] == \
        "normal 10485760 5242880 10 slave 268435456 67108864 60 pubsub 67108864 16777216 30"
    prefix = "CONFIG SET failed (possibly related to argument 'client-output-buffer-limit') - "
    for value, why in (("bogus 1mb 0 0", "Invalid client class specified in buffer limit configuration."),
                       ("normal 1mb 0", "Wrong number of arguments in buffer limit configuration."),
                       ("normal x 0 0", "Error in hard, soft or soft_seconds setting in buffer limit configuration.")):
        with pytest.raises(redis.ResponseError, match="^" + prefix.replace("(", r"\(").replace(")", r"\)") + why):
            r.config_set("client-output-buffer-limit", value)
    assert r.config_set("client-output-buffer-limit", "normal 0 0 0 pubsub 32mb 8mb 60")
    assert r.config_set("maxmemory-clients", "10%")
    assert r.config_get("maxmemory-clients") == {"maxmemory-clients": "10%"}
    assert r.config_set("maxmemory-clients", "0")
    with pytest.raises(redis.ResponseError, match="argument must be between 1048576"):
        r.config_set("client-query-buffer-limit", "1000")


def test_a_low_descriptor_limit_lowers_maxclients_with_redis_log_line_and_config_set_errors(tmp_path):
    server = GoblinServer(tmp_path)
    server.args = ["prlimit", "--nofile=64:64", *server.args]         # ulimit -n 64
    server.start()
    try:
        assert any("maxclients has been reduced to 32 to compensate for low ulimit" in line for line in server.log)
        r = redis.Redis(port=server.port)
        assert r.config_get("maxclients") == {"maxclients": "32"}
        extra = [raw(server) for _ in range(32)]
        assert extra[-1].recv(100) == b"-ERR max number of clients reached\r\n"   # 31 + r = 32
        for sock in extra:
            sock.close()
        with pytest.raises(redis.ResponseError, match="The operating system is not able to handle the specified "
                                                      "number of clients, try with 32"):
            r.config_set("maxclients", "1000")
        assert r.config_set("maxclients", "20")
        assert r.config_get("maxclients") == {"maxclients": "20"}
    finally:
        assert server.stop() == 0


def test_descriptor_exhaustion_on_accept_backs_off_without_spinning_or_flooding_the_log(tmp_path):
    server = GoblinServer(tmp_path).start()
    clients: list = []
    try:
        # The limit drops under the running server (maxclients stays high): accept() gets EMFILE.
        subprocess.run(["prlimit", f"--pid={server.pid}", "--nofile=64:64"], check=True)
        clients = [raw(server) for _ in range(80)]
        server.wait_for_log("Error accepting a client connection: Too many open files", timeout=10)
        before = cpu_seconds(server.pid)
        time.sleep(0.5)                 # a measurement window, not synchronisation
        assert cpu_seconds(server.pid) - before < 0.2, "the server spun on a listener it could not accept from"
        for sock in clients:
            sock.close()
        clients = []
        server.wait_for_log("Accepting clients again", timeout=10)
        assert redis.Redis(port=server.port).ping()
    finally:
        for sock in clients:
            sock.close()
        assert server.stop() == 0
    # One line when accepts start failing and one when they succeed again, per episode (the
    # backlog drained after the close may start a second; wait_for_log may drop a line read
    # past its marker); a flood would be thousands of lines.
    log = "\n".join(server.log)
    assert 1 <= log.count("Error accepting a client connection") <= 3, log
    assert 1 <= log.count("Accepting clients again") <= 3, log


def test_ring_sessions_count_toward_maxclients_at_resp_accept(tmp_path):
    from goblin_ring import RingClient

    server = GoblinServer(tmp_path, "--maxclients", "2").start()
    try:
        with RingClient(name=server.name, runtime_dir=server.runtime_dir, timeout=10) as ring:
            assert ring.ping()
            with raw(server) as first:
                assert first.request("PING") == b"+PONG\r\n"          # the ring session + this one = 2
                with raw(server) as third:
                    assert third.read_until(b"\r\n") == b"-ERR max number of clients reached\r\n"
    finally:
        assert server.stop() == 0


def test_client_list_shows_each_clients_descriptor_and_buffers(server):
    with raw(server) as partial:
        partial.sendall(b"*2\r\n$4\r\nECHO\r\n$100000\r\n" + b"a" * 50_000)   # half an argument, held
        r = redis.Redis(port=server.port)
        assert r.ping()                      # partial's bytes were read before this (one epoll FIFO)
        held = next(c for c in r.client_list() if c["id"] != str(r.client_id()))
        assert int(held["qbuf"]) == 50_000 + len("*2\r\n$4\r\nECHO\r\n$100000\r\n")
        assert int(held["tot-mem"]) >= int(held["qbuf"]) and int(held["fd"]) > 2 and held["omem"] == "0"
