#!/usr/bin/env python3
"""check_layers.py — enforce native/'s layers: who may include whom, and who may call whom.

    python native/check_layers.py          # prints the rules and every violation; exit 1 on any

Two checks, both over every C file under the layer folders (native/sources.py's LAYERS):
  1. includes: each `#include "..."` of a goblin header must name a layer the file's own
     layer may use (RULES below); generated/ may be included only by GENERATED_USERS.
  2. calls: every object is compiled (gcc -c) and `nm` lists the symbols it defines and the
     ones it needs; a symbol needed in layer A and defined in layer B must have B in A's
     allowed set. Since each layer may use only layers below it (plus itself), this also
     proves there is no call cycle between layers: a cycle would need an upward edge.
Function pointers in tables are not symbols, so a lower layer may call a higher one only
through a table the higher one hands it at start-up (the command table, the type registry).
  3. exec/ and persist/ name no command: what a command does besides its reply (events,
     propagated effect, blocking, when it may run) is said by its row or its handler, so no
     string literal in their code is a command's name (commands/*.def) and no template id but
     GR_T_COMMAND appears there. A keyspace event's name given to a gr_notify*/record call is
     an event, not a command ("del"); NOT_COMMANDS lists the other words that are commands'
     names too, and why they are not naming one there.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

NATIVE = Path(__file__).resolve().parent
sys.path.insert(0, str(NATIVE))
from sources import LAYERS, lua_flags, sources  # noqa: E402

# Which layers each layer may include and call (itself included).
RULES: dict[str, set[str]] = {
    "core": {"core"},
    "engines": {"core", "engines"},
    "exec": {"core", "engines", "exec"},
    "persist": {"core", "engines", "exec", "persist"},
    "script": {"core", "engines", "exec", "persist", "script"},
    "commands": {"core", "engines", "exec", "persist", "script", "commands"},
    "resp": {"core", "exec", "resp"},
    "ring": {"core", "exec", "ring"},
    "server": {"core", "exec", "persist", "resp", "ring", "server"},
    "client": {"core", "exec", "commands", "ring", "client"},
}
# The sbe-tool output (native/generated/) is the ring codec's business alone.
GENERATED_USERS = re.compile(r"^ring/codec[^/]*\.[ch]$")

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(relative: str) -> str:
    return relative.split("/", 1)[0]


def layer_files() -> list[Path]:
    files = []
    for layer in LAYERS:
        files.extend(sorted(p for p in (NATIVE / layer).rglob("*") if p.suffix in (".c", ".h")))
    return files


def include_violations() -> list[str]:
    problems = []
    for path in layer_files():
        relative = path.relative_to(NATIVE).as_posix()
        layer = layer_of(relative)
        for target in INCLUDE.findall(path.read_text()):
            target_layer = layer_of(target)
            if target_layer == "generated":
                if not GENERATED_USERS.match(relative):
                    problems.append(f"include: {relative} includes {target} (generated/ is for ring/codec only)")
            elif target_layer not in LAYERS:
                problems.append(f"include: {relative} includes {target}, which is in no layer folder")
            elif target_layer not in RULES[layer]:
                problems.append(f"include: {relative} ({layer}) includes {target} ({target_layer})")
    return problems


def symbols(objects: dict[str, Path]) -> tuple[dict[str, str], dict[str, set[str]]]:
    defined: dict[str, str] = {}
    needed: dict[str, set[str]] = defaultdict(set)
    for relative, obj in objects.items():
        out = subprocess.run(["nm", "--defined-only", "-g", str(obj)], capture_output=True, text=True,
                             check=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 3:
                defined[parts[2]] = relative
        out = subprocess.run(["nm", "--undefined-only", str(obj)], capture_output=True, text=True,
                             check=True).stdout
        for line in out.splitlines():
            needed[relative].add(line.split()[-1])
    return defined, needed


def call_violations() -> list[str]:
    problems = []
    with tempfile.TemporaryDirectory(prefix="goblin-layers-") as scratch:
        objects = {}
        for source in sources():
            relative = source.relative_to(NATIVE).as_posix()
            obj = Path(scratch) / (relative.replace("/", "__") + ".o")
            subprocess.run(["gcc", "-c", "-O0", "-std=gnu11", "-D_GNU_SOURCE", "-DGR_PACKAGE_VERSION=\"x\"",
                            "-DGR_SCHEMA_DIGEST=\"x\"", f"-I{NATIVE}", *lua_flags()[0], str(source), "-o", str(obj)],
                           check=True)
            objects[relative] = obj
        defined, needed = symbols(objects)
        for relative, names in sorted(needed.items()):
            layer = layer_of(relative)
            for name in sorted(names):
                home = defined.get(name)
                if home and layer_of(home) not in RULES[layer]:
                    problems.append(f"call: {relative} ({layer}) uses {name} from {home} ({layer_of(home)})")
    return problems


COMMAND_ROW = re.compile(r'^COMMAND\(\s*"([^"]+)"', re.M)
STRING_LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
TEMPLATE_ID = re.compile(r"\bGR_T_(?!COMMAND\b)[A-Z0-9_]+\b")
EVENT_CALL = re.compile(r"\b(gr_notify\w*|gr_call_notify\w*|record)\s*\(")
NAME_BLIND_LAYERS = ("exec", "persist")
NOT_COMMANDS = {
    ("exec/value_type.c", "set"): "TYPE's answer for a set",
    ("exec/command.h", "pubsub"): "a command flag's word",
    ("exec/propagate.c", "select"): "the effect stream's database switch, as Redis's feedAppendOnlyFile",
    ("exec/propagate.c", "multi"): "the effect stream's transaction framing",
    ("persist/aof.c", "multi"): "the effect stream's transaction framing, read back",
    ("persist/aof.c", "exec"): "the effect stream's transaction framing, read back",
    ("exec/propagate.c", "del"): "an expired key's propagated deletion, as Redis's propagateDeletion",
    ("persist/aof.c", "restore"): "the rewrite's own record of a key: one that fails to load is a corrupt file",
    ("persist/persistence.c", "save"): "a shutdown flag's word (SHUTDOWN SAVE, shutdown-on-sigterm save)",
    ("exec/db.c", "command"): "the latency monitor's event for a slow call (LATENCY LATEST's 'command')",
    ("exec/acl.c", "set"): "an ACL category's name (@set), Redis's ACLCommandCategories",
    ("exec/acl.c", "pubsub"): "an ACL category's name (@pubsub), Redis's ACLCommandCategories",
    ("exec/acl.c", "reset"): "an ACL SETUSER rule's word (reset: resetpass resetkeys resetchannels off -@all)",
}


def command_names() -> set[str]:
    names = set()
    for row_file in (NATIVE / "commands").glob("*.def"):
        for name in COMMAND_ROW.findall(row_file.read_text()):
            names.add(name.lower())
            names.update(part.lower() for part in name.split("|"))
    return names


def command_name_violations() -> list[str]:
    names = command_names()
    problems = []
    for layer in NAME_BLIND_LAYERS:
        for path in sorted(p for p in (NATIVE / layer).rglob("*") if p.suffix in (".c", ".h")):
            if path.name == "templates_generated.h":   # the template ids' definitions
                continue
            relative = path.relative_to(NATIVE).as_posix()
            code = COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), path.read_text())
            for number, line in enumerate(code.splitlines(), 1):
                for literal in STRING_LITERAL.findall(line):
                    if literal.lower() in names and (relative, literal.lower()) not in NOT_COMMANDS and not EVENT_CALL.search(line):
                        problems.append(f"name: {relative}:{number} names the command \"{literal}\"")
                for template in TEMPLATE_ID.findall(line):
                    problems.append(f"name: {relative}:{number} branches on the template {template}")
    return problems


def main() -> int:
    print("layers, lowest first, and what each may include and call:")
    for layer in LAYERS:
        print(f"  {layer:9} -> {', '.join(l for l in LAYERS if l in RULES[layer])}")
    print("  generated/ -> included only by ring/codec*.[ch]")
    problems = include_violations() + call_violations() + command_name_violations()
    for problem in problems:
        print(problem)
    print(f"{len(problems)} layer violations")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
