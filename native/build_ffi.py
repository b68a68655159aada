"""build_ffi.py — the one cffi build script (named in pyproject.toml's cffi_modules).

It compiles every C source of goblin-ring into the extension goblin_ring._goblin_native.
The cdef is not written here: it is read from the public headers listed in CDEF_HEADERS,
between their `cffi-cdef-begin` and `cffi-cdef-end` markers, so the declarations cffi
sees are the ones the C includes and the two cannot drift.

The build is stamped with the package version (from goblin_ring/_version.py) and the
sha256 of schema/goblin.xml; goblin_ring/_native.py refuses a stale build at import.
"""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path

from cffi import FFI

NATIVE = Path(__file__).resolve().parent
ROOT = NATIVE.parent

sys.path.insert(0, str(NATIVE))
from sources import lua_flags, sources  # noqa: E402  (native/sources.py: the one globbed source list)

# Order matters only for the cdef: a header's types must come before their first use.
CDEF_HEADERS = [
    "core/alloc.h",
    "core/bytes.h",
    "ring/version.h",
    "exec/templates_generated.h",
    "exec/request.h",
    "exec/reply.h",
    "exec/command.h",
    "ring/codec.h",
    "ring/codec_generated.h",
    "ring/ring.h",
    "ring/fragment.h",
    "exec/db.h",
    "persist/aof.h",
    "persist/persistence.h",
    "ring/session.h",
    "client/client.h",
    "client/client_batch.h",
    "client/client_stream.h",
    "client/client_pubsub.h",

    "client/client_array.h",
    "client/plain_reply.h",
    "server/server.h",
    "client/bench_load.h",
]

CDEF_REGION = re.compile(r"/\* cffi-cdef-begin[^*]*\*/(.*?)/\* cffi-cdef-end \*/", re.S)


def read_cdef() -> str:
    parts = []
    for name in CDEF_HEADERS:
        text = (NATIVE / name).read_text()
        regions = CDEF_REGION.findall(text)
        if not regions:
            raise RuntimeError(f"native/{name} has no cffi-cdef-begin/cffi-cdef-end region")
        parts.extend(regions)
    return "\n".join(parts)


def package_version() -> str:
    text = (ROOT / "goblin_ring" / "_version.py").read_text()
    match = re.search(r'__version__\s*=\s*"([^"]+)"', text)
    if not match:
        raise RuntimeError("goblin_ring/_version.py has no __version__")
    return match.group(1)


def schema_digest() -> str:
    return hashlib.sha256((ROOT / "schema" / "goblin.xml").read_bytes()).hexdigest()


def check_generated_codecs_match_schema() -> None:
    stamp = (NATIVE / "generated" / "STAMP").read_text()
    if f"schema-sha256 {schema_digest()}" not in stamp:
        raise RuntimeError(
            "native/generated/ was generated from another schema/goblin.xml; "
            "run: python schema/generate.py (needs Java 17 and Maven)")


check_generated_codecs_match_schema()


# Lua 5.1 (native/script/), from pkg-config; without it the build stops naming the package
LUA_CFLAGS, LUA_LIBS = lua_flags()
LUA_INCLUDE_DIRS = [f[2:] for f in LUA_CFLAGS if f.startswith("-I")]
LUA_LIBRARY_DIRS = [f[2:] for f in LUA_LIBS if f.startswith("-L")]
LUA_LIBRARIES = [f[2:] for f in LUA_LIBS if f.startswith("-l")]

ffibuilder = FFI()
ffibuilder.cdef(read_cdef())
ffibuilder.set_source(
    "goblin_ring._goblin_native",
    "\n".join(f'#include "{name}"' for name in CDEF_HEADERS),
    sources=[str(path.relative_to(ROOT)) for path in sources()],
    include_dirs=[str(NATIVE.relative_to(ROOT)), *LUA_INCLUDE_DIRS],
    library_dirs=LUA_LIBRARY_DIRS,
    define_macros=[
        ("_GNU_SOURCE", None),
        ("GR_PACKAGE_VERSION", f'"{package_version()}"'),
        ("GR_SCHEMA_DIGEST", f'"{schema_digest()}"'),
    ],
    extra_compile_args=["-O3", "-std=gnu11", "-Wall", "-Wextra", "-Wno-unused-parameter",
                        "-fno-strict-aliasing", "-fno-semantic-interposition"],
    # calls between the library's own files bind at link time, not through the PLT
    extra_link_args=["-Wl,-Bsymbolic-functions"],
    libraries=["rt", "pthread", *LUA_LIBRARIES],
)

if __name__ == "__main__":
    ffibuilder.compile(tmpdir=str(ROOT / "build" / "cffi"), verbose=True)
