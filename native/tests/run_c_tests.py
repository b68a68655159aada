#!/usr/bin/env python3
"""Compile and run goblin-ring's standalone C test programs (native/tests/test_*.c).

    python native/tests/run_c_tests.py              # -O2, as the pytest suite runs them
    python native/tests/run_c_tests.py --sanitize   # -fsanitize=address,undefined, as CI adds

Each program prints "N passed, M failed" and exits non-zero on a failure. PROGRAMS names the
sources each one links; arguments keep the default runs short (stress sizes are flags).
Sources are compiled to objects once per process (keyed by file, its mtime and size, and the
flags), on every core, and each program links the objects it names: most programs link the
same server layers, which used to be recompiled for each of them.
"""

from __future__ import annotations

import argparse
import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

NATIVE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(NATIVE))
from sources import sources as native_sources  # noqa: E402  (the one globbed source list)

# Stress sizes: GOBLIN_RING_STRESS_MESSAGES (default 200000; a full stress run is 5000000),
# GOBLIN_LIST_OPS, GOBLIN_CODEC_FUZZ, GOBLIN_SET_OPS, GOBLIN_STREAM_STEPS.
# Each program links whole layers (native/sources.py globs them) plus single files of a
# layer it only needs a part of; its own test source is added last.
SERVER_LAYERS = ["core", "engines", "exec", "persist", "script", "commands", "resp"]
PROGRAMS: dict[str, dict] = {
    "test_codec": {"files": ["ring/codec.c", "ring/codec_generated.c"], "args": [os.environ.get("GOBLIN_CODEC_FUZZ", "200000")]},
    "test_fragment": {"files": ["ring/ring.c", "ring/fragment.c"], "args": []},
    "test_ring": {"files": ["ring/ring.c"], "args": [os.environ.get("GOBLIN_RING_STRESS_MESSAGES", "200000")]},
    "test_list": {"layers": ["core"], "files": ["engines/list/list_compact.c", "engines/list/list_seg.c",
                                                "engines/list/list_pma.c", "engines/list/list.c"], "args": []},
    # -DGR_LPMA_DEBUG: the engine checks every invariant after every mutation
    "test_list_pma": {"layers": ["core"], "files": ["engines/list/list_seg.c", "engines/list/list_pma.c"],
                      "flags": ["-DGR_LPMA_DEBUG"], "args": []},
    "test_keyspace": {"layers": ["core"], "files": ["engines/keyspace.c"], "args": []},
    "test_hash": {"layers": ["core"], "files": ["engines/hash/hash_compact.c", "engines/hash/hash.c",
                                                 "engines/table/table.c"],
                  "args": [os.environ.get("GOBLIN_HASH_STEPS", "200000")]},
    "test_zset": {"layers": ["core"], "files": ["engines/zset/zset.c", "engines/zset/zset_index.c", "engines/zset/zset_packed.c",
                                                 "engines/table/table.c"],
                  "args": [os.environ.get("GOBLIN_ZSET_STEPS", "200000")]},
    "test_array_rt": {"layers": ["core"], "files": ["engines/array/array_rt.c"],
                      "args": [os.environ.get("GOBLIN_ARRAY_RT_STEPS", "100000")]},
    # the stream engine against a model (entries, trims, groups, PELs, snapshot body, copy, memory);
    # `test_stream --measure N` reports bytes per entry
    "test_stream": {"layers": ["core"], "files": ["engines/stream/stream.c", "engines/stream/stream_group.c",
                                                   "engines/stream/stream_save.c"],
                    "args": [os.environ.get("GOBLIN_STREAM_STEPS", "100000")]},
    "test_snapshot_io": {"layers": ["core"], "args": []},
    # helper threads' allocator counters (a replica's full sync loaded and freed aside)
    "test_alloc": {"layers": ["core"], "args": []},
    # growing ZADDs and HSETs through the command path, each write's CPU and wall time reported
    "test_write_tail": {"layers": SERVER_LAYERS, "files": ["ring/codec.c", "ring/codec_generated.c"],
                        "args": [os.environ.get("GOBLIN_WRITE_TAIL", "20000")]},
    "test_pubsub": {"layers": ["core"], "files": ["exec/pubsub.c"], "args": []},
    # the ARRAY value and its classic engine against a model; args: steps, engine kind
    "test_array": {"layers": ["core"], "files": ["engines/array/array.c", "engines/array/array_classic.c"],
                   "args": [os.environ.get("GOBLIN_ARRAY_STEPS", "200000"), "1"]},
    # the same model over the RT engine (its ops table, array_rt_ops.c): kind 2
    "test_array_on_rt": {"source": "test_array", "layers": ["core"],
                         "files": ["engines/array/array.c", "engines/array/array_classic.c",
                                   "engines/array/array_rt.c", "engines/array/array_rt_ops.c"],
                         "args": [os.environ.get("GOBLIN_ARRAY_STEPS", "200000"), "2"]},
    # the table engine sets and hashes share (`test_table --measure N` reports bytes/entry)
    "test_table": {"layers": ["core"], "files": ["engines/table/table.c", "engines/keyspace.c"],
                   "args": [os.environ.get("GOBLIN_TABLE_OPS", "300000")]},
    "test_bitmap": {"files": ["engines/bitmap.c"], "args": [os.environ.get("GOBLIN_BITMAP_ROUNDS", "20000")]},
    "test_set": {"layers": ["core"], "files": ["engines/set/set_intset.c", "engines/set/set.c", "engines/table/table.c"],
                 "args": [os.environ.get("GOBLIN_SET_OPS", "20000")]},
    "test_commands": {"layers": SERVER_LAYERS, "files": ["ring/codec.c", "ring/codec_generated.c"], "args": []},
    "test_blocking": {"layers": SERVER_LAYERS, "files": ["ring/codec.c", "ring/codec_generated.c"],
                      "args": [os.environ.get("GOBLIN_BLOCKING_ROUNDS", "20000")]},
    # the C serving loop over loopback sockets
    "test_server": {"layers": [*SERVER_LAYERS, "server"], "files": ["ring/codec.c", "ring/codec_generated.c",
                    "ring/ring.c", "ring/fragment.c", "ring/sbe_reply.c", "ring/session.c"], "args": []},
    # a ring session as a Pub/Sub subscriber: session.c's deliver, client_pubsub.c's reader, in one process
    "test_pubsub_ring": {"layers": SERVER_LAYERS, "files": ["ring/codec.c", "ring/codec_generated.c", "ring/ring.c",
                         "ring/fragment.c", "ring/sbe_reply.c", "ring/session.c", "client/client.c",
                         "client/client_pubsub.c", "client/client_pubsub_state.c", "client/plain_reply.c"], "args": []},
    # the batched reply operation (bulks) against one bulk a value, in the ring's and RESP's writers
    "test_reply_writers": {"layers": SERVER_LAYERS, "files": ["ring/codec.c", "ring/codec_generated.c", "ring/sbe_reply.c"],
                           "args": [os.environ.get("GOBLIN_REPLY_SCRIPTS", "3000")]},
    # SORT over a RESP connection fed bytes: BY ... LIMIT's partial sort against the full sort
    "test_sort": {"layers": SERVER_LAYERS, "files": ["ring/codec.c", "ring/codec_generated.c"], "args": []},
    "test_transaction": {"layers": SERVER_LAYERS, "files": ["ring/codec.c", "ring/codec_generated.c"], "args": []},
    # the snapshot file: a random keyspace round-trips, every flipped byte and cut is refused
    "test_snapshot": {"layers": SERVER_LAYERS, "files": ["ring/codec.c", "ring/codec_generated.c"], "args": []},
    # Redis's RDB files: a random keyspace round-trips; cuts, flips and damage behind a zeroed checksum refused
    "test_rdb": {"layers": SERVER_LAYERS, "files": ["ring/codec.c", "ring/codec_generated.c"], "args": []},
    # a value type kept out of the product: registry row, blocking spec, type-blind commands
    "test_value_types": {"layers": SERVER_LAYERS, "files": ["ring/codec.c", "ring/codec_generated.c"], "args": []},
    # includes commands/command_docs.c itself, to reach its static table and parser
    "test_command_docs": {"layers": SERVER_LAYERS, "files": ["ring/codec.c", "ring/codec_generated.c"], "exclude": ["commands/command_docs.c"],
                          "args": []},
    # cjson, cmsgpack, bit and struct (native/script/lib) in a Lua 5.1 state: edge cases, then
    # random bytes into their decoders; `--eval` / `--batch` make it the host that
    # tests/test_lua_libraries.py compares with redis-server's EVAL
    "test_lua_libraries": {"files": ["script/lib/lua_libraries.c", "script/lib/lua_cjson.c",
                                     "script/lib/lua_cmsgpack.c", "script/lib/lua_bit.c",
                                     "script/lib/lua_struct.c"],
                           "pkg_config": ["lua5.1"], "args": [os.environ.get("GOBLIN_LUA_LIB_ROUNDS", "20000")]},
}

COMMON_FLAGS = ["-std=gnu11", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Werror", f"-I{NATIVE}"]
SANITIZE_FLAGS = ["-O1", "-g", "-fno-omit-frame-pointer", "-fsanitize=address,undefined",
                  "-fno-sanitize-recover=all"]


def build(name: str, output: Path, sanitize: bool) -> None:
    spec = PROGRAMS[name]
    sources = [str(path) for path in native_sources(*spec["layers"])] if spec.get("layers") else []
    sources += [str(NATIVE / name) for name in spec.get("files", [])]
    excluded = {str(NATIVE / name) for name in spec.get("exclude", [])}
    sources = [source for source in sources if source not in excluded]
    sources.append(str(NATIVE / "tests" / f"{spec.get('source', name)}.c"))
    flags = (SANITIZE_FLAGS if sanitize else ["-O2"]) + spec.get("flags", [])
    libraries = []
    packages = list(spec.get("pkg_config", []))   # this program's own system libraries (Lua)
    if "script" in spec.get("layers", []) and "lua5.1" not in packages:
        packages.append("lua5.1")                  # the script layer includes Lua's headers
    for package in packages:
        flags += pkg_config(package, "--cflags")
        libraries += pkg_config(package, "--libs")
    objects = compile_objects(sources, flags)
    subprocess.run(["gcc", *flags, *objects, "-o", str(output), *libraries, "-lrt", "-lm", "-pthread"],
                   check=True)


_compiled: dict[tuple, str] = {}      # (source, mtime_ns, size, flags) -> its object, this process
_object_directory: Path | None = None


def compile_objects(sources: list[str], flags: list[str]) -> list[str]:
    """The object of each source built with these flags: compiled now (in parallel) unless this
    process already compiled the same file, unchanged, with the same flags."""
    global _object_directory
    if _object_directory is None:
        _object_directory = Path(tempfile.mkdtemp(prefix="goblin-cobjects-"))
        atexit.register(shutil.rmtree, _object_directory, True)
    objects, missing = [], []
    for source in sources:
        status = os.stat(source)
        key = (source, status.st_mtime_ns, status.st_size, tuple(flags))
        if key not in _compiled and all(key != waiting[0] for waiting in missing):
            target = _object_directory / f"{len(_compiled) + len(missing)}-{Path(source).stem}.o"
            missing.append((key, source, str(target)))
        objects.append(_compiled.get(key) or next(target for k, _, target in missing if k == key))

    def compile_one(item):
        _, source, target = item
        return subprocess.run(["gcc", *COMMON_FLAGS, *flags, "-c", source, "-o", target],
                              capture_output=True, text=True)

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        results = list(pool.map(compile_one, missing))
    failed = None
    for (key, _, target), result in zip(missing, results):
        sys.stderr.write(result.stderr)
        if result.returncode == 0:
            _compiled[key] = target
        elif failed is None:
            failed = result
    if failed is not None:
        raise subprocess.CalledProcessError(failed.returncode, failed.args, failed.stdout, failed.stderr)
    return objects


def pkg_config(package: str, what: str) -> list[str]:
    result = subprocess.run(["pkg-config", what, package], capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"pkg-config cannot find {package}: install its development package "
                         f"(Debian: apt-get install liblua5.1-0-dev pkg-config)")
    return result.stdout.split()


def run(name: str, sanitize: bool, extra_args: list[str] | None = None) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory(prefix="goblin-ctest-") as scratch:
        binary = Path(scratch) / name
        build(name, binary, sanitize)
        arguments = extra_args if extra_args is not None else PROGRAMS[name]["args"]
        return subprocess.run([str(binary), *arguments], capture_output=True, text=True,
                              timeout=600)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sanitize", action="store_true")
    parser.add_argument("--verbose", action="store_true", help="print each program's whole output")
    parser.add_argument("names", nargs="*", help="programs to run (default: all)")
    arguments = parser.parse_args()
    names = arguments.names or list(PROGRAMS)
    failures = 0
    for name in names:
        result = run(name, arguments.sanitize)
        summary = (result.stdout.strip().splitlines() or ["(no output)"])[-1]
        status = "ok" if result.returncode == 0 else f"FAILED (exit {result.returncode})"
        print(f"{name}{' [asan+ubsan]' if arguments.sanitize else ''}: {status}: {summary}")
        if arguments.verbose and result.returncode == 0:
            sys.stdout.write(result.stdout)
        if result.returncode != 0:
            failures += 1
            sys.stdout.write(result.stdout)
            sys.stderr.write(result.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
