"""Shared fixtures: a goblin server per test module, clients over both transports, and a
check after every test that no goblin segment was left in /dev/shm."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from goblin_ring import RespClient, RingClient
from servers import STARTED_NAMES, GoblinServer, RedisServer


@pytest.fixture(scope="module")
def goblin(tmp_path_factory):
    runtime_dir = tmp_path_factory.mktemp("runtime")
    with GoblinServer(runtime_dir).start() as server:
        yield server


@pytest.fixture(scope="module", params=["segmented", "pma"], ids=lambda name: f"list-{name}")
def goblin_each_list_implementation(request, tmp_path_factory):
    """A goblin server per --list-implementation: a module whose `goblin` fixture returns
    this one runs all its tests over both list engines."""
    runtime_dir = tmp_path_factory.mktemp("runtime")
    with GoblinServer(runtime_dir, "--list-implementation", request.param).start() as server:
        server.list_implementation = request.param
        yield server


def make_client(server: GoblinServer, transport: str):
    if transport == "ring":
        return RingClient(name=server.name, runtime_dir=server.runtime_dir, timeout=10.0)
    return RespClient(port=server.port, socket_timeout=10.0)


@pytest.fixture(params=["ring", "resp"])
def client(request, goblin):
    c = make_client(goblin, request.param)
    c.flushall()
    yield c
    c.close()


@pytest.fixture
def ring(goblin):
    c = make_client(goblin, "ring")
    yield c
    c.close()


@pytest.fixture
def resp(goblin):
    c = make_client(goblin, "resp")
    yield c
    c.close()


@pytest.fixture
def dirs(tmp_path):
    """A runtime directory (control socket) and a data directory (snapshots, the AOF), empty."""
    runtime, data = tmp_path / "runtime", tmp_path / "data"
    runtime.mkdir()
    data.mkdir()
    return runtime, data


@pytest.fixture(scope="module")
def redis_server():
    if not shutil.which("redis-server"):
        pytest.fail("redis-server is not installed; .ci/run installs it (apt-get install redis-server)")
    server = RedisServer().start()
    yield server
    server.stop()


def our_segments() -> set[str]:
    prefixes = tuple(f"goblin-{name}-" for name in STARTED_NAMES)
    return {p.name for p in Path("/dev/shm").iterdir() if prefixes and p.name.startswith(prefixes)}


@pytest.fixture(autouse=True)
def no_goblin_segments_leak():
    before = our_segments()
    yield
    after = our_segments()
    assert after - before == set(), f"segments left in /dev/shm: {sorted(after - before)}"
