"""test_sentinel.py — Redis Sentinel (redis-server 7.0 --sentinel) monitors and fails over goblin.

Three real sentinels watch one primary and two replicas, every process on its own free port with
its own directory (a sentinel rewrites its own config file), and the sentinels' timers shortened
(down-after-milliseconds 1000, SENTINEL DEBUG info/publish/ask/ping periods) so that a whole
failover takes a couple of seconds. For each mix — goblin primary + goblin replicas, a
redis-server primary + goblin replicas, a goblin primary + redis-server replicas — the sentinels
find the primary, its replicas (from its INFO) and each other (hello messages PUBLISHed to and
SUBSCRIBEd on goblin's __sentinel__:hello channel); the primary is killed (or frozen with DEBUG
SLEEP); a replica is promoted (REPLICAOF NO ONE in Sentinel's MULTI ... CONFIG REWRITE ... CLIENT
KILL ... EXEC), the other repointed (REPLICAOF host port) and continued with +CONTINUE,
get-master-addr-by-name moves, a write on the new primary reaches the other replica; the old
primary, restarted (or woken: a full resync, its history having run on), is turned into a replica
of the new one; SENTINEL FAILOVER moves the primary again. In the goblin-only set every node wants a password (requirepass, masterauth)
and the sentinels log in with auth-pass. replica-priority 0 keeps a replica from ever being
promoted; replica-announced no hides one from SENTINEL replicas. Sentinel's SCRIPT KILL ends a
busy script on a goblin primary. An all-redis-server set, failed over the same way in the same
run, gives the time to compare (printed; run with -s to see it). Without a sentinel: the replica
settings Sentinel reads (CONFIG GET/SET, INFO) and its MULTI ... EXEC transaction byte for byte
against redis-server 7.0, replica-announce-ip/port in the primary's INFO and ROLE, and CONFIG
REWRITE of replicaof.

Every wait polls a condition with a deadline; nothing sleeps to synchronise.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from goblin_ring import RespClient
from goblin_ring.errors import ConnectionError as GoblinConnectionError, ResponseError
from resp_wire import encode_command, raw_connection
from servers import GoblinServer, free_port, stop_process
from test_rdb_redis import Redis

MASTER = "mymaster"
DOWN_AFTER_MS = 1000
FAILOVER_TIMEOUT_MS = 2000
FREEZE_S = 6          # DEBUG SLEEP of a primary: long enough for the failover to end before it wakes
# Sentinel's own periods, shortened through SENTINEL DEBUG (Redis 7.0): INFO to each instance
# every second (10 s by default: replicas that attach later are found sooner), a hello message
# every 500 ms (2 s), the other sentinels asked about a down primary every 500 ms (1 s).
# A ping every 250 ms (1 s) also lets a dropped link reconnect sooner: with the default, the link to
# a just-promoted primary can stay down for a whole second and make it look down for a moment.
SENTINEL_DEBUG = ("info-period", 1000, "publish-period", 500, "ask-period", 500, "ping-period", 250)


def wait_until(predicate, timeout: float = 20.0, what: str = "") -> None:
    """Poll predicate (errors count as not yet) until it holds, or fail after timeout seconds."""
    deadline = time.monotonic() + timeout
    last_error = None
    while True:
        try:
            if predicate():
                return
        except (OSError, ResponseError, GoblinConnectionError) as error:
            last_error = error
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}" + (f" (last error: {last_error})" if last_error else ""))
        time.sleep(0.02)


def text(value) -> str:
    return value.decode() if isinstance(value, bytes) else value


def pairs(flat) -> dict[str, str]:
    """SENTINEL's flat [name, value, ...] replies as a dict of str."""
    return {text(flat[i]): text(flat[i + 1]) for i in range(0, len(flat), 2)}


def info(client, section: str = "replication") -> dict[str, str]:
    return dict(line.split(":", 1) for line in text(client.execute_command("INFO", section)).splitlines() if ":" in line)


class Sentinel:
    """redis-server --sentinel on its own port, directory, config file and log file."""

    def __init__(self, directory: Path, master_port: int, quorum: int = 2, password: str | None = None):
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.config = directory / "sentinel.conf"
        self.logfile = directory / "sentinel.log"
        self.config.write_text(
            f"port {self.port}\nbind 127.0.0.1\ndaemonize no\ndir {directory}\nlogfile {self.logfile}\n"
            f"sentinel monitor {MASTER} 127.0.0.1 {master_port} {quorum}\n"
            f"sentinel down-after-milliseconds {MASTER} {DOWN_AFTER_MS}\n"
            f"sentinel failover-timeout {MASTER} {FAILOVER_TIMEOUT_MS}\n"
            f"sentinel parallel-syncs {MASTER} 1\n"
            + (f"sentinel auth-pass {MASTER} {password}\n" if password else ""))
        self.process = subprocess.Popen([shutil.which("redis-server"), str(self.config), "--sentinel"],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        self.client = RespClient(port=self.port, socket_timeout=10) if self._answers() else None
        assert self.client, f"sentinel did not start: {self.log()[-2000:]}"
        assert self.client.execute_command("SENTINEL", "DEBUG", *SENTINEL_DEBUG) == b"OK"

    def _answers(self) -> bool:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and self.process.poll() is None:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return True
            except OSError:
                pass
            time.sleep(0.02)
        return False

    def log(self) -> str:
        return self.logfile.read_text(errors="replace") if self.logfile.exists() else ""

    def command(self, *args):
        return self.client.execute_command("SENTINEL", *args)

    def master_port(self) -> int:
        host, port = self.command("get-master-addr-by-name", MASTER)
        assert host == b"127.0.0.1"
        return int(port)

    def replicas(self) -> dict[int, dict[str, str]]:
        return {int(r["port"]): r for r in map(pairs, self.command("replicas", MASTER))}

    def sentinels(self) -> list[dict[str, str]]:
        return [pairs(s) for s in self.command("sentinels", MASTER)]

    def stop(self) -> None:
        if self.client:
            self.client.close()
        stop_process(self.process)


class Node:
    """One data server of the set, goblin or redis-server, that can be killed and restarted on its port."""

    def __init__(self, kind: str, directory: Path, *extra: str, password: str | None = None):
        """password: requirepass, and masterauth to log in to its primary, on every node."""
        self.kind, self.directory, self.password = kind, directory, password
        self.extra = (*extra, *(("--requirepass", password, "--masterauth", password) if password else ()))
        self.port = free_port()
        self.server = None
        self.names: list[str] = []          # goblin ring names used, for the /dev/shm check
        self.frozen = False                 # inside DEBUG SLEEP: not asked anything
        self.start()

    def start(self, *more: str) -> "Node":
        if self.kind == "goblin":
            self.server = GoblinServer(self.directory, *self.extra, *more, port=self.port).start()
            self.names.append(self.server.name)
        else:
            # no 5 s wait before a diskless sync (Redis 7.0's default delay): replicas repointed by
            # Sentinel attach at once, as to a goblin primary
            self.server = Redis(self.directory, "--repl-diskless-sync-delay", "0", *self.extra, *more, port=self.port)
        self._client = RespClient(port=self.port, socket_timeout=10, password=self.password)
        return self

    def command(self, *args):
        """One command; a connection closed under it (Sentinel's CLIENT KILL TYPE normal after each
        REPLICAOF it sends) is opened again once, as a client library's retry would."""
        try:
            return self._client.execute_command(*args)
        except GoblinConnectionError:
            self._client.close()
            self._client = RespClient(port=self.port, socket_timeout=10, password=self.password)
            return self._client.execute_command(*args)

    def kill(self) -> None:
        """SIGKILL: the primary disappears mid-flight, as a crashed host."""
        self._client.close()
        if self.kind == "goblin":
            self.server.kill()
        else:
            self.server.client.close()
            self.server.process.kill()
            self.server.process.wait()
            self.server.process.stdout.close()
        self.server = None

    def stop(self) -> None:
        if self.server is None:
            return
        self._client.close()
        self.server.stop()
        self.server = None

    def info(self, section: str) -> dict[str, str]:
        return dict(line.split(":", 1) for line in text(self.command("INFO", section)).splitlines() if ":" in line)

    def role(self) -> list:
        return self.command("ROLE")

    def replica_of(self, port: int) -> bool:
        """A replica of 127.0.0.1:port whose link is up."""
        role = self.role()
        return role[0] == b"slave" and role[2] == port and role[3] == b"connected"

    def leftover_segments(self) -> list[str]:
        return sorted(p.name for p in Path("/dev/shm").iterdir()
                      if any(p.name.startswith(f"goblin-{name}-") for name in self.names))


@pytest.fixture(scope="module")
def sentinel_runs(tmp_path_factory):
    """Skip (with the reason) only where redis-server cannot run as a sentinel."""
    if not shutil.which("redis-server"):
        pytest.skip("redis-server is not installed (apt-get install redis-server): no sentinel to run")
    probe = tmp_path_factory.mktemp("probe")
    (probe / "s.conf").write_text(f"port {free_port()}\nbind 127.0.0.1\ndir {probe}\n")
    process = subprocess.Popen([shutil.which("redis-server"), str(probe / "s.conf"), "--sentinel"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        line = b""
        deadline = time.monotonic() + 10
        while b"Sentinel ID is" not in line and time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line and process.poll() is not None:
                pytest.skip("redis-server cannot run as a sentinel here (redis-server CONF --sentinel exited)")
    finally:
        process.terminate()
        process.wait()
        process.stdout.close()


class Deployment:
    """A primary, two replicas and three sentinels."""

    def __init__(self, tmp_path: Path, primary_kind: str, replica_kind: str, replica_config=({}, {}),
                 password: str | None = None):
        self.nodes: list[Node] = []
        self.sentinels: list[Sentinel] = []
        try:
            primary = self.add(Node(primary_kind, tmp_path / "p", password=password))
            for i, settings in enumerate(replica_config):
                replica = self.add(Node(replica_kind, tmp_path / f"r{i}", "--replicaof", "127.0.0.1", str(primary.port),
                                        password=password))
                for name, value in settings.items():
                    assert replica.command("CONFIG", "SET", name, value) == b"OK"
            for node in self.nodes[1:]:
                wait_until(lambda: node.replica_of(primary.port), what=f"{node.kind} replica {node.port} linked")
            self.sentinels = [Sentinel(tmp_path / f"s{i}", primary.port, password=password) for i in range(3)]
        except BaseException:
            self.close()
            raise

    def add(self, node: Node) -> Node:
        self.nodes.append(node)
        return node

    def by_port(self, port: int) -> Node:
        return next(node for node in self.nodes if node.port == port)

    def settled(self, primary_port: int, expected_replicas: int) -> bool:
        """Every sentinel names this primary, sees its replicas linked to it, knows the other two sentinels."""
        for s in self.sentinels:
            if s.master_port() != primary_port:
                return False
            replicas = s.replicas().values()   # each linked, reporting itself a replica of this primary
            if len(replicas) != expected_replicas or any(
                    r["flags"] != "slave" or r["role-reported"] != "slave" or r["master-link-status"] != "ok"
                    or r["master-port"] != str(primary_port) for r in replicas):
                return False
            if len(s.sentinels()) != 2:
                return False
        return True

    def agreed_primary(self) -> int | None:
        """The port every sentinel names, if the node there is a primary and every other live node
        its replica with the link up; else None."""
        ports = {s.master_port() for s in self.sentinels}
        if len(ports) != 1:
            return None
        port = ports.pop()
        primary = self.by_port(port)
        if primary.server is None or primary.role()[0] != b"master":
            return None
        if not all(node.replica_of(port) for node in self.nodes if node is not primary and node.server and not node.frozen):
            return None
        return port

    def write_reaches_replicas(self, primary_port: int, key: str) -> None:
        primary = self.by_port(primary_port)
        assert primary.command("SET", key, f"written-on-{primary.port}") == b"OK"
        for node in self.nodes:
            if node is not primary and node.server and not node.frozen:
                wait_until(lambda: node.command("GET", key) == f"written-on-{primary.port}".encode(),
                           what=f"{key} on replica {node.port}")

    def failover_after(self, old: Node, outage) -> tuple[int, float, float]:
        """outage() takes the primary away; (new primary's port, seconds until every sentinel names
        another primary, seconds until the whole set is in place: roles, links)."""
        started = time.monotonic()
        outage()
        wait_until(lambda: all(s.master_port() != old.port for s in self.sentinels), timeout=30,
                   what="every sentinel to name a new primary")
        switched = time.monotonic() - started
        wait_until(lambda: self.agreed_primary() not in (None, old.port), timeout=30,
                   what="the new primary and its replica in place")
        return self.agreed_primary(), switched, time.monotonic() - started

    def close(self) -> None:
        for s in self.sentinels:
            s.stop()
        leftovers = []
        for node in self.nodes:
            node.stop()
            leftovers += node.leftover_segments()
        assert leftovers == []

    def logs(self) -> str:
        """What the sentinels saw, for a failure's report."""
        out = []
        for s in self.sentinels:
            try:
                view = f"master {s.command('master', MASTER)}\nreplicas {s.command('replicas', MASTER)}"
            except Exception as error:  # noqa: BLE001 - a report, whatever went wrong
                view = f"(no view: {error})"
            out.append(f"--- sentinel {s.port}\n{view}\n{s.log()[-4000:]}")
        for node in self.nodes:
            if node.server:
                try:
                    view = f"{node.command('ROLE')}\n{text(node.command('CLIENT', 'LIST'))}"
                except Exception as error:  # noqa: BLE001
                    view = f"(no view: {error})"
                out.append(f"--- {node.kind} {node.port}\n{view}")
        return "\n".join(out)


TIMES: dict[str, tuple[float, float]] = {}


def full_cycle(tmp_path: Path, primary_kind: str, replica_kind: str, replica_config=({}, {}),
               outage: str = "kill", password: str | None = None) -> Deployment:
    """Discover; take the primary away and fail over; the old primary back as a replica; then
    SENTINEL FAILOVER. outage "kill": SIGKILL, restarted empty (no snapshot) on its port; "freeze":
    DEBUG SLEEP, after which it wakes with its data, still believing it is the primary."""
    d = Deployment(tmp_path, primary_kind, replica_kind, replica_config, password)
    try:
        primary = d.nodes[0]
        wait_until(lambda: d.settled(primary.port, 2), what="sentinels to find the replicas and each other")
        # Sentinel's two connections to each instance, named by CLIENT SETNAME, one subscribed to hello
        names = [line.split(" name=", 1)[1].split(" ", 1)[0]
                 for line in text(primary.command("CLIENT", "LIST")).splitlines()]
        assert sum(n.startswith("sentinel-") and n.endswith("-cmd") for n in names) == 3
        assert sum(n.startswith("sentinel-") and n.endswith("-pubsub") for n in names) == 3
        assert primary.command("PUBSUB", "NUMSUB", "__sentinel__:hello") == [b"__sentinel__:hello", 3]
        master = pairs(d.sentinels[0].command("master", MASTER))
        assert master["flags"] == "master" and master["role-reported"] == "master"
        assert master["num-slaves"] == "2" and master["num-other-sentinels"] == "2"
        for port, replica in d.sentinels[0].replicas().items():
            assert replica["master-link-status"] == "ok" and replica["master-port"] == str(primary.port)
            assert replica["role-reported"] == "slave"
        d.write_reaches_replicas(primary.port, "before")

        frozen = raw_connection(primary.port, timeout=FREEZE_S + 10) if outage == "freeze" else None

        def take_away():
            if frozen:
                primary.frozen = True
                frozen.sendall(encode_command("DEBUG", "SLEEP", FREEZE_S))
            else:
                primary.kill()

        new_port, switched, done = d.failover_after(primary, take_away)
        TIMES[f"{primary_kind} primary, {replica_kind} replicas"] = (switched, done)
        print(f"\nfailover ({primary_kind} primary, {replica_kind} replicas): every sentinel names the new "
              f"primary {switched:.2f} s after the {outage}, roles and links in place at {done:.2f} s")
        new = d.by_port(new_port)
        assert new.command("GET", "before") == f"written-on-{primary.port}".encode()
        # the replica repointed at the promoted one continued where it was (PSYNC on the old
        # history, +CONTINUE): a failover costs no full resync
        stats = new.info("stats")
        assert (stats["sync_full"], stats["sync_partial_ok"]) == ("0", "1")
        d.write_reaches_replicas(new_port, "after-failover")

        # the old primary comes back and Sentinel makes it a replica of the new one
        if frozen:      # it wakes with its data and its old history
            assert frozen.read_reply() == b"+OK\r\n"
            frozen.close()
            primary.frozen = False
        else:           # restarted on its port, empty (no snapshot): a full sync
            primary.start()
        wait_until(lambda: d.agreed_primary() not in (None, primary.port) and primary.role()[0] == b"slave",
                   timeout=30, what="the old primary converted to a replica")
        current = d.agreed_primary()
        if frozen:
            # Waking, it first runs what queued in the freeze: the sentinels' hello PUBLISHes, which a
            # primary propagates (Redis's PROPAGATE_REPL), so its history has passed the point where
            # the new primary took over and it resyncs in full -- as an all-redis-server set does
            # (checked: the same full_cycle with a frozen redis-server primary gives these counts).
            stats = d.by_port(current).info("stats")
            assert (stats["sync_full"], stats["sync_partial_ok"]) == ("1", "1")
            assert primary.command("GET", "before") == f"written-on-{primary.port}".encode()
        d.write_reaches_replicas(current, "after-restart")
        wait_until(lambda: d.settled(current, 2), what="sentinels to see both replicas of the new primary")

        # a manual failover: SENTINEL FAILOVER picks a replica and promotes it
        started = time.monotonic()
        assert d.sentinels[1].command("FAILOVER", MASTER) == b"OK"
        wait_until(lambda: d.agreed_primary() not in (None, current), timeout=30,
                   what="SENTINEL FAILOVER's new primary and its replicas in place")
        print(f"SENTINEL FAILOVER: done in {time.monotonic() - started:.2f} s")
        d.write_reaches_replicas(d.agreed_primary(), "after-manual-failover")
        return d
    except BaseException:
        print(d.logs())
        d.close()
        raise


@pytest.mark.usefixtures("sentinel_runs")
def test_goblin_primary_and_goblin_replicas_fail_over_and_a_zero_priority_replica_is_never_promoted(tmp_path):
    # the second replica has replica-priority 0: Sentinel lists it, repoints it, never promotes it;
    # every goblin wants a password (requirepass; masterauth for its primary): Sentinel's
    # `auth-pass` logs it in on both of its connections
    d = full_cycle(tmp_path, "goblin", "goblin", replica_config=({}, {"replica-priority": 0}), password="s3cret")
    try:
        zero = d.nodes[2]
        assert zero.role()[0] == b"slave"
        assert zero.command("CONFIG", "GET", "slave-priority") == [b"slave-priority", b"0"]
        replicas = d.sentinels[0].replicas()
        assert replicas[zero.port]["slave-priority"] == "0"
        assert all(r["slave-priority"] == "100" for port, r in replicas.items() if port != zero.port)
        # two failovers so far, neither picked it; the first promoted the other replica
        assert "+selected-slave slave 127.0.0.1:%d " % zero.port not in "".join(s.log() for s in d.sentinels)
    finally:
        d.close()


@pytest.mark.usefixtures("sentinel_runs")
def test_redis_primary_fails_over_to_goblin_replicas(tmp_path):
    d = full_cycle(tmp_path, "redis", "goblin")
    d.close()


@pytest.mark.usefixtures("sentinel_runs")
def test_a_frozen_goblin_primary_fails_over_to_redis_replicas_and_rejoins_as_redis_does(tmp_path):
    """The goblin primary is frozen (DEBUG SLEEP) rather than killed: it wakes a primary with the old
    history and the sentinels' queued hello messages, Sentinel demotes it, and it resyncs from the
    promoted redis-server, as a frozen redis-server primary does."""
    d = full_cycle(tmp_path, "goblin", "redis", outage="freeze")
    d.close()


@pytest.mark.usefixtures("sentinel_runs")
def test_an_all_redis_set_fails_over_in_the_same_time(tmp_path):
    """The baseline: the same cycle with redis-server everywhere, timed alike."""
    d = full_cycle(tmp_path, "redis", "redis")
    d.close()
    print("\nfailover times, kill -> every sentinel names the new primary / -> roles and links in place:")
    for name, (a, b) in TIMES.items():
        print(f"  {name:45s} {a:5.2f} s / {b:5.2f} s")


@pytest.mark.usefixtures("sentinel_runs")
def test_sentinel_kills_a_busy_script_on_a_goblin_primary(tmp_path):
    """A script past busy-reply-threshold makes PING answer -BUSY; once the primary is down in its
    eyes, Sentinel sends SCRIPT KILL and the primary is up again (one sentinel, quorum 2: no failover)."""
    goblin = GoblinServer(tmp_path / "g").start()
    sentinel = None
    try:
        client = RespClient(port=goblin.port, socket_timeout=30)
        client.execute_command("CONFIG", "SET", "busy-reply-threshold", 100)
        sentinel = Sentinel(tmp_path / "s", goblin.port)
        wait_until(lambda: pairs(sentinel.command("master", MASTER))["runid"] != "", what="the sentinel's first INFO")
        outcome = []
        runner = threading.Thread(target=lambda: outcome.append(
            _error_of(client, "EVAL", "while true do end", 0)))
        runner.start()
        runner.join(timeout=20)
        assert not runner.is_alive(), "the busy script was never killed"
        assert outcome and "Script killed by user with SCRIPT KILL" in outcome[0]
        log = sentinel.log()
        assert "+sdown master mymaster" in log
        wait_until(lambda: "-sdown master mymaster" in sentinel.log(), what="the primary up again in the sentinel's eyes")
        assert RespClient(port=goblin.port).execute_command("PING") == b"PONG"
        assert "script_kill_sent" not in pairs(sentinel.command("master", MASTER))["flags"]
        client.close()
    finally:
        if sentinel:
            sentinel.stop()
        goblin.stop_cleanly()


def _error_of(client, *command) -> str:
    try:
        return repr(client.execute_command(*command))
    except ResponseError as error:
        return str(error)


# ---- what Sentinel reads and sends, one command at a time, against redis-server 7.0 ----

REPLICA_SETTINGS = ("replica-priority", "slave-priority", "replica-announce-ip", "slave-announce-ip",
                    "replica-announce-port", "slave-announce-port", "replica-announced")


def test_the_replica_settings_sentinel_reads_answer_as_redis_does(tmp_path):
    goblin = GoblinServer(tmp_path / "g").start()
    redis = Redis(tmp_path / "r", "--repl-diskless-sync-delay", "0")
    try:
        g, r = RespClient(port=goblin.port), redis.client

        def both(*command):
            answers = []
            for client in (g, r):
                try:
                    answers.append(client.execute_command(*command))
                except ResponseError as error:
                    answers.append(f"error: {error}")
            assert answers[0] == answers[1], command
            return answers[0]

        for name in REPLICA_SETTINGS:
            both("CONFIG", "GET", name)
        for name, value in (("replica-priority", -1), ("replica-priority", "x"), ("slave-priority", 2**31),
                            ("replica-announce-port", 65536), ("replica-announced", "maybe")):
            assert both("CONFIG", "SET", name, value).startswith("error: ERR CONFIG SET failed")
        for name, value in (("replica-priority", 7), ("replica-announced", "no"), ("replica-announce-port", 7000),
                            ("slave-announce-ip", "127.0.0.9")):
            assert both("CONFIG", "SET", name, value) == b"OK"
        for name in REPLICA_SETTINGS:
            both("CONFIG", "GET", name)
        # a replica of a port nobody listens on: its link never came up
        unused = free_port()
        both("REPLICAOF", "127.0.0.1", unused)
        fields = ("role", "master_link_status", "slave_priority", "replica_announced")
        for client in (g, r):
            wait_until(lambda: "master_link_down_since_seconds" in info(client), what="the link down")
        assert [info(g)[f] for f in fields] == [info(r)[f] for f in fields] == ["slave", "down", "7", "0"]
        assert info(g)["master_link_down_since_seconds"] == info(r)["master_link_down_since_seconds"] == "-1"
        both("REPLICAOF", "NO", "ONE")

        # Sentinel's transaction, byte for byte: no config file -> CONFIG REWRITE's error inside
        # EXEC's reply, the rest done (the replica promoted; two normal clients killed, g or r above
        # and victim, never the caller; one pubsub client)
        for server in (goblin.port, redis.port):
            with raw_connection(server) as victim, raw_connection(server) as subscriber, \
                    raw_connection(server) as sentinel:
                assert victim.request("PING") == b"+PONG\r\n"
                assert subscriber.request("SUBSCRIBE", "__sentinel__:hello").startswith(b"*3\r\n")
                assert sentinel.request("REPLICAOF", "127.0.0.1", unused) == b"+OK\r\n"
                assert sentinel.request("MULTI") == b"+OK\r\n"
                for command in (("SLAVEOF", "NO", "ONE"), ("CONFIG", "REWRITE"), ("CLIENT", "KILL", "TYPE", "normal"),
                                ("CLIENT", "KILL", "TYPE", "pubsub")):
                    assert sentinel.request(*command) == b"+QUEUED\r\n"
                assert sentinel.request("EXEC") == (b"*4\r\n+OK\r\n-ERR The server is running without a config file\r\n"
                                                    b":2\r\n:1\r\n")
                assert sentinel.request("ROLE").startswith(b"*3\r\n$6\r\nmaster\r\n")
                assert victim.read_until_closed() == b"" and subscriber.read_until_closed() == b""
                assert sentinel.request("CLIENT", "SETNAME", "sentinel-0123abcd-cmd") == b"+OK\r\n"
                assert sentinel.request("SCRIPT", "KILL") == b"-NOTBUSY No scripts in execution right now.\r\n"
        g.close()
    finally:
        redis.stop()
        goblin.stop_cleanly()


def test_replica_announce_ip_and_port_are_what_the_primary_reports(tmp_path):
    """replica-announce-ip/port (a replica behind NAT, in a container) reach the primary through
    REPLCONF ip-address / listening-port, so its INFO and ROLE (what Sentinel reads) name them:
    a goblin replica of a redis-server primary and of a goblin primary alike."""
    redis = Redis(tmp_path / "r", "--repl-diskless-sync-delay", "0")
    primary = GoblinServer(tmp_path / "p").start()
    replica = GoblinServer(tmp_path / "g").start()
    try:
        c = RespClient(port=replica.port)
        assert c.execute_command("CONFIG", "SET", "replica-announce-ip", "127.0.0.2", "replica-announce-port", 7777) == b"OK"
        for port, client in ((redis.port, redis.client), (primary.port, RespClient(port=primary.port))):
            assert c.execute_command("REPLICAOF", "127.0.0.1", port) == b"OK"
            wait_until(lambda: info(client).get("slave0", "").startswith("ip=127.0.0.2,port=7777,state=online"),
                       what="the announced address in the primary's INFO")
            assert client.execute_command("ROLE")[2][0][:2] == [b"127.0.0.2", b"7777"]
        assert c.execute_command("REPLICAOF", "NO", "ONE") == b"OK"
        c.close()
    finally:
        redis.stop()
        replica.stop_cleanly()
        primary.stop_cleanly()


def test_config_rewrite_keeps_the_config_file_s_replicaof_in_step(tmp_path):
    """Sentinel's CONFIG REWRITE after each REPLICAOF it sends: a goblin started with a config file
    writes the primary it follows (none: no line, as Redis) and starts from it again."""
    redis = Redis(tmp_path / "r", "--repl-diskless-sync-delay", "0")
    directory = tmp_path / "g"
    directory.mkdir()
    config = directory / "goblin.conf"
    config.write_text(f"# my settings\nreplicaof 127.0.0.1 {redis.port}\nreplica-priority 10\n")
    goblin = GoblinServer(directory, str(config)).start()
    try:
        c = RespClient(port=goblin.port)
        wait_until(lambda: c.execute_command("ROLE")[3] == b"connected", what="the replica linked")
        assert info(c)["slave_priority"] == "10"
        assert c.execute_command("REPLICAOF", "NO", "ONE") == b"OK"
        assert c.execute_command("CONFIG", "REWRITE") == b"OK"
        lines = config.read_text().splitlines()
        assert lines[0] == "# my settings" and "replica-priority 10" in lines
        assert not [line for line in lines if line.startswith(("replicaof", "slaveof"))]
        for _ in range(2):                          # a second rewrite adds no second marker
            assert c.execute_command("REPLICAOF", "127.0.0.1", redis.port).startswith(b"OK")   # then "OK Already..."
            assert c.execute_command("CONFIG", "REWRITE") == b"OK"
        lines = config.read_text().splitlines()
        assert lines.count(f"replicaof 127.0.0.1 {redis.port}") == 1
        assert lines.count("# Generated by CONFIG REWRITE") == 1
        c.close()
        goblin.stop_cleanly()
        goblin = GoblinServer(directory, str(config), port=goblin.port).start()
        c = RespClient(port=goblin.port)
        wait_until(lambda: c.execute_command("ROLE")[:4] == [b"slave", b"127.0.0.1", redis.port, b"connected"],
                   what="the restarted goblin following the primary its file names")
        c.close()
    finally:
        redis.stop()
        goblin.stop_cleanly()


@pytest.mark.usefixtures("sentinel_runs")
def test_a_goblin_replica_with_replica_announced_no_is_hidden_from_sentinel_replicas(tmp_path):
    primary = GoblinServer(tmp_path / "p").start()
    replica = GoblinServer(tmp_path / "r", "--replicaof", "127.0.0.1", str(primary.port)).start()
    sentinel = None
    try:
        client = RespClient(port=replica.port)
        assert client.execute_command("CONFIG", "SET", "replica-announced", "no") == b"OK"
        sentinel = Sentinel(tmp_path / "s", primary.port)
        # Sentinel knows it (num-slaves, from the primary's INFO) but, once it has read the replica's
        # own INFO (replica_announced:0), no longer lists it
        wait_until(lambda: pairs(sentinel.command("master", MASTER))["num-slaves"] == "1", what="the replica found")
        wait_until(lambda: sentinel.command("replicas", MASTER) == [], what="the replica hidden")
        assert pairs(sentinel.command("master", MASTER))["num-slaves"] == "1"
        assert client.execute_command("CONFIG", "SET", "replica-announced", "yes") == b"OK"
        wait_until(lambda: [r["replica-announced"] for r in map(pairs, sentinel.command("replicas", MASTER))] == ["1"],
                   what="the replica listed once announced")
        client.close()
    finally:
        if sentinel:
            sentinel.stop()
        replica.stop_cleanly()
        primary.stop_cleanly()
