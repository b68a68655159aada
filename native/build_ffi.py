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
from pathlib import Path

from cffi import FFI

NATIVE = Path(__file__).resolve().parent
ROOT = NATIVE.parent

# Order matters only for the cdef: a header's types must come before their first use.
CDEF_HEADERS = [
    "alloc.h",
    "version.h",
    "codec.h",
    "ring.h",
    "db.h",
    "session.h",
    "client.h",
    "resp_conn.h",
    "bench_load.h",
]

SOURCES = [
    "alloc.c",
    "version.c",
    "codec.c",
    "ring.c",
    "list_compact.c",
    "list_seg.c",
    "list_pma.c",
    "list.c",
    "keyspace.c",
    "glob.c",
    "db.c",
    "cmd_list.c",
    "blocking.c",
    "cmd_keys.c",
    "cmd_server.c",
    "server_text.c",
    "cmd_config.c",
    "cmd_connection.c",
    "command_docs.c",
    "string_value.c",
    "cmd_string.c",
    "cmd_expire.c",
    "cmd_db.c",
    "resp_commands.c",
    "sbe_reply.c",
    "session.c",
    "client.c",
    "resp_conn.c",
    "bench_load.c",
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

ffibuilder = FFI()
ffibuilder.cdef(read_cdef())
ffibuilder.set_source(
    "goblin_ring._goblin_native",
    "\n".join(f'#include "{name}"' for name in CDEF_HEADERS),
    sources=[str((NATIVE / name).relative_to(ROOT)) for name in SOURCES],
    include_dirs=[str(NATIVE.relative_to(ROOT))],
    define_macros=[
        ("_GNU_SOURCE", None),
        ("GR_PACKAGE_VERSION", f'"{package_version()}"'),
        ("GR_SCHEMA_DIGEST", f'"{schema_digest()}"'),
    ],
    extra_compile_args=["-O3", "-std=gnu11", "-Wall", "-Wextra", "-Wno-unused-parameter",
                        "-fno-strict-aliasing"],
    libraries=["rt"],
)

if __name__ == "__main__":
    ffibuilder.compile(tmpdir=str(ROOT / "build" / "cffi"), verbose=True)
