"""sources.py — the one list of goblin-ring's C sources, globbed by layer folder.

The extension (build_ffi.py) compiles every layer; each C test program (tests/run_c_tests.py)
links the layers it needs, so a new file in a layer's folder is built everywhere at once.
The layers, lowest first (check_layers.py enforces who may include whom):

    core/      allocator, varint, glob, number text: no goblin includes
    engines/   data structures (keyspace, string, list/): core only
    exec/      requests, replies, the db, blocking, the background child: core and engines
    persist/   the append-only log and snapshots (files, fork, replay, load at start): exec and below
    script/    Lua scripting (EVAL, FUNCTION): the Lua state, sandbox, redis.* API, reply
               conversions, the script cache; calls commands through exec's entry points
    commands/  the command table and its handlers per family: exec and below
    resp/      the RESP transport: exec's entry points
    ring/      the ring, the SBE codec, ring sessions: exec's entry points
    server/    the C serving loop (epoll: RESP accept/read/write, the ring drain): resp, ring, exec
    client/    the ring client and the bench's load generator: ring and exec's request types
"""

from __future__ import annotations

import subprocess
from pathlib import Path

NATIVE = Path(__file__).resolve().parent

LAYERS = ["core", "engines", "exec", "persist", "script", "commands", "resp", "ring", "server", "client"]


def sources(*layers: str) -> list[Path]:
    """Every .c file under the named layer folders (all layers when none are named), sorted."""
    found: list[Path] = []
    for layer in layers or LAYERS:
        if layer not in LAYERS:
            raise ValueError(f"unknown layer {layer!r}; layers are {LAYERS}")
        found.extend(sorted((NATIVE / layer).rglob("*.c")))
    return found


def lua_flags() -> tuple[list[str], list[str]]:
    """Lua 5.1's compile and link flags (`pkg-config lua5.1`): native/script/ embeds the Lua
    Redis's scripts run in. Without it, stop with a message naming the Debian package, rather
    than build a server that cannot run EVAL."""
    try:
        cflags = subprocess.run(["pkg-config", "--cflags", "lua5.1"], check=True, capture_output=True,
                                text=True).stdout.split()
        libs = subprocess.run(["pkg-config", "--libs", "lua5.1"], check=True, capture_output=True,
                              text=True).stdout.split()
    except (OSError, subprocess.CalledProcessError) as error:
        detail = getattr(error, "stderr", "") or str(error)
        raise SystemExit(
            "goblin-ring needs Lua 5.1 (scripting: EVAL, FUNCTION) and `pkg-config lua5.1` did not find it ("
            + detail.strip() + ").\nInstall Debian's package: apt-get install liblua5.1-0-dev pkg-config") from None
    return cflags, libs
