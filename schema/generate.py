#!/usr/bin/env python3
"""Regenerate the C codecs in native/generated/ from schema/goblin.xml with sbe-tool.

The codecs are committed, so building goblin-ring needs no Java. This script is how they
are made and how CI proves they are current:

    python schema/generate.py           # fetch sbe-all (once), regenerate native/generated/
    python schema/generate.py --check   # regenerate into a temporary folder, compare;
                                        # exit 1 naming every file that differs

The sbe-all jar comes from Maven (the dependency plugin's `copy` goal, both versions pinned
below) into a cache outside the repository: $GOBLIN_SBE_CACHE, else ~/.cache/goblin-ring/sbe.
Validation warnings are fatal, so a schema that would not be valid for every SBE target
language is refused here rather than later.
"""

from __future__ import annotations

import argparse
import filecmp
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SBE_VERSION = "1.38.1"  # newest sbe-all whose classes target Java 17 (class file major 61)
DEPENDENCY_PLUGIN_VERSION = "3.8.1"
SBE_ARTIFACT = f"uk.co.real-logic:sbe-all:{SBE_VERSION}"

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "schema" / "goblin.xml"
GENERATED = ROOT / "native" / "generated"
STAMP_NAME = "STAMP"


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
            "-Dsbe.validation.warnings.fatal=true",
            "-Dsbe.validation.stop.on.error=true",
            "-Dsbe.generate.ir=false",
            "-jar", str(jar), str(SCHEMA),
        ]
        try:
            subprocess.run(command, check=True)
        except FileNotFoundError:
            sys.exit("generate.py: Java (java) is not installed; it is needed only to regenerate codecs")
        except subprocess.CalledProcessError as error:
            sys.exit(f"generate.py: sbe-tool refused the schema (exit {error.returncode})")
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="compare the committed codecs with freshly generated ones")
    arguments = parser.parse_args()

    if not arguments.check:
        generate_into(GENERATED)
        print(f"generated {len(relative_files(GENERATED))} files in {GENERATED.relative_to(ROOT)}")
        return 0

    with tempfile.TemporaryDirectory(prefix="goblin-check-") as scratch:
        fresh = Path(scratch) / "generated"
        generate_into(fresh)
        if not GENERATED.is_dir():
            print("native/generated/ is missing; run: python schema/generate.py", file=sys.stderr)
            return 1
        differences = differing_files(fresh, GENERATED)
    if differences:
        print("committed codecs differ from schema/goblin.xml; run: python schema/generate.py",
              file=sys.stderr)
        for name in differences:
            print(f"  native/generated/{name}", file=sys.stderr)
        return 1
    print(f"native/generated/ is current (sbe-all {SBE_VERSION})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
