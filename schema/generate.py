#!/usr/bin/env python3
"""Regenerate everything mechanical that follows from schema/goblin.xml, in two passes.

1. sbe-tool (Java): the C flyweights in native/generated/.
2. schema/glue.py (no Java): the template ids (native/exec/templates.h), every encode /
   decode / size case and enum check of the codec (native/ring/codec_generated.[ch]), the
   template lists the codec tests walk, and the field-use comment in native/ring/codec.h.

Both outputs are committed, so building goblin-ring needs no Java. This script is how they
are made and how CI proves they are current:

    python schema/generate.py           # fetch sbe-all (once), regenerate both passes
    python schema/generate.py --glue    # the second pass only (no Java)
    python schema/generate.py --check   # regenerate both into memory / a temporary folder,
                                        # compare; exit 1 naming every file that differs

The sbe-all jar comes from Maven (the dependency plugin's `copy` goal, both versions pinned
below) into a cache outside the repository: $GOBLIN_SBE_CACHE, else ~/.cache/goblin-ring/sbe.
Validation warnings are fatal (but the one ACCEPTED_WARNING names), so a schema that would
not be valid for every SBE target language is refused here rather than later.
"""

from __future__ import annotations

import argparse
import filecmp
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SBE_VERSION = "1.38.1"  # newest sbe-all whose classes target Java 17 (class file major 61)
DEPENDENCY_PLUGIN_VERSION = "3.8.1"
SBE_ARTIFACT = f"uk.co.real-logic:sbe-all:{SBE_VERSION}"

# Every validation warning is fatal but this one: sbe-tool advises numInGroup be uint8 or
# uint16 (some targets' generators assume it). goblin-ring's groups count in uint32 so that one
# message holds any argument count Redis accepts (RPUSH of 100,000 values); its only codec is
# the C one, whose flyweights and glue both handle a uint32 count.
ACCEPTED_WARNING = re.compile(r'"numInGroup" should be UINT8 or UINT16')

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "schema" / "goblin.xml"
GENERATED = ROOT / "native" / "generated"
STAMP_NAME = "STAMP"

sys.path.insert(0, str(ROOT / "schema"))
import glue  # noqa: E402  (schema/glue.py: the second pass)


def write_glue() -> list[Path]:
    written = []
    for path, text in glue.outputs(ROOT).items():
        if not path.is_file() or path.read_text() != text:
            path.write_text(text)
        written.append(path)
    return written


def stale_glue() -> list[str]:
    return sorted(str(path.relative_to(ROOT)) for path, text in glue.outputs(ROOT).items()
                  if not path.is_file() or path.read_text() != text)


def cache_dir() -> Path:
    configured = os.environ.get("GOBLIN_SBE_CACHE")
    if configured:
        return Path(configured)
    return Path.home() / ".cache" / "goblin-ring" / "sbe"


def fetch_sbe_jar() -> Path:
    """Return the path of the pinned sbe-all jar, fetching it with Maven if needed."""
    directory = cache_dir()
    jar = directory / f"sbe-all-{SBE_VERSION}.jar"
    if jar.is_file():
        return jar
    directory.mkdir(parents=True, exist_ok=True)
    command = [
        "mvn", "-B", "-q",
        f"org.apache.maven.plugins:maven-dependency-plugin:{DEPENDENCY_PLUGIN_VERSION}:copy",
        f"-Dartifact={SBE_ARTIFACT}",
        f"-DoutputDirectory={directory}",
    ]
    try:
        subprocess.run(command, check=True, cwd=directory)
    except FileNotFoundError:
        sys.exit("generate.py: Maven (mvn) is not installed; it is needed only to regenerate codecs")
    except subprocess.CalledProcessError as error:
        sys.exit(f"generate.py: fetching {SBE_ARTIFACT} failed (exit {error.returncode})")
    if not jar.is_file():
        sys.exit(f"generate.py: Maven ran but {jar} is missing")
    return jar


def schema_digest() -> str:
    return hashlib.sha256(SCHEMA.read_bytes()).hexdigest()


def stamp_text() -> str:
    return f"sbe-all {SBE_VERSION}\nschema-sha256 {schema_digest()}\n"


def generate_into(output: Path) -> None:
    """Run sbe-tool for the C target and write the codecs (and the stamp) under output."""
    jar = fetch_sbe_jar()
    with tempfile.TemporaryDirectory(prefix="goblin-sbe-") as raw:
        command = [
            "java",
            "-Dsbe.target.language=C",
            f"-Dsbe.output.dir={raw}",
            "-Dsbe.validation.stop.on.error=true",
            "-Dsbe.generate.ir=false",
            "-jar", str(jar), str(SCHEMA),
        ]
        try:
            completed = subprocess.run(command, capture_output=True, text=True)
        except FileNotFoundError:
            sys.exit("generate.py: Java (java) is not installed; it is needed only to regenerate codecs")
        warnings = [line for line in (completed.stdout + completed.stderr).splitlines()
                    if line.startswith("WARNING") and not ACCEPTED_WARNING.search(line)]
        if completed.returncode != 0 or warnings:
            sys.stderr.write(completed.stdout + completed.stderr)
            sys.exit(f"generate.py: sbe-tool refused the schema (exit {completed.returncode}, "
                     f"{len(warnings)} warnings not accepted)")
        package_dir = Path(raw) / "goblin"
        if output.exists():
            shutil.rmtree(output)
        output.mkdir(parents=True)
        shutil.copytree(package_dir, output / "goblin")
    (output / STAMP_NAME).write_text(stamp_text())


def relative_files(directory: Path) -> set[str]:
    return {str(path.relative_to(directory)) for path in directory.rglob("*") if path.is_file()}


def differing_files(expected: Path, actual: Path) -> list[str]:
    expected_files = relative_files(expected)
    actual_files = relative_files(actual)
    differences = sorted(expected_files ^ actual_files)
    for name in sorted(expected_files & actual_files):
        if not filecmp.cmp(expected / name, actual / name, shallow=False):
            differences.append(name)
    return sorted(differences)


def report_stale(headline: str, names: list[str]) -> bool:
    """Print the headline and every stale file to stderr; True if there was any."""
    if names:
        print(headline, file=sys.stderr)
        for name in names:
            print(f"  {name}", file=sys.stderr)
    return bool(names)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="compare the committed codecs with freshly generated ones")
    parser.add_argument("--glue", action="store_true",
                        help="run only the second pass (no Java): templates.h, codec_generated.[ch], codec.h")
    arguments = parser.parse_args()

    if arguments.glue and not arguments.check:
        written = write_glue()
        print(f"generated {len(written)} glue files from schema/goblin.xml")
        return 0
    if not arguments.check:
        generate_into(GENERATED)
        print(f"generated {len(relative_files(GENERATED))} files in {GENERATED.relative_to(ROOT)}")
        write_glue()
        print("generated the codec glue (exec/templates.h, ring/codec_generated.[ch], ring/codec.h)")
        return 0

    if report_stale("the codec glue differs from schema/goblin.xml; run: python schema/generate.py --glue",
                    stale_glue()):
        return 1
    if arguments.glue:
        print("the codec glue is current")
        return 0

    with tempfile.TemporaryDirectory(prefix="goblin-check-") as scratch:
        fresh = Path(scratch) / "generated"
        generate_into(fresh)
        if not GENERATED.is_dir():
            print("native/generated/ is missing; run: python schema/generate.py", file=sys.stderr)
            return 1
        differences = differing_files(fresh, GENERATED)
    if report_stale("committed codecs differ from schema/goblin.xml; run: python schema/generate.py",
                    [f"native/generated/{name}" for name in differences]):
        return 1
    print(f"native/generated/ and the codec glue are current (sbe-all {SBE_VERSION})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
