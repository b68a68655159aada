"""config_file.py — read a redis.conf-style configuration file for goblin-ring-server.

    goblin-ring-server /etc/goblin.conf --port 7000     # flags override the file

The syntax is redis.conf's: one directive per line, `#` comments, arguments split as Redis's
sdssplitargs splits them ("double quotes" with \\n \\r \\t \\b \\a \\\\ \\" \\xHH escapes, 'single
quotes' with \\'), `include path` read in place (relative to the including file's directory
when not absolute), directive names case-insensitive. A directive is either one of the
server's flags (port, bind, dir, save, name, ring-size, ...: the same words as --port, --dir)
or a parameter CONFIG GET knows, applied at start as CONFIG SET would apply it. Anything else
stops the server with Redis's message naming the file, the line and what is wrong.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


class ConfigFileError(ValueError):
    """A line the server cannot take; str() is Redis's multi-line fatal config message."""


@dataclass
class Directive:
    name: str            # lower case
    args: list[str]
    path: str
    line_number: int
    line: str

    def where(self) -> str:
        return f"{self.path}:{self.line_number}"


def fatal(directive_path: str, line_number: int, line: str, why: str) -> ConfigFileError:
    return ConfigFileError("\n*** FATAL CONFIG FILE ERROR ***\n"
                           f"Reading the configuration file {directive_path}, at line {line_number}\n"
                           f">>> '{line.strip()}'\n{why}")


_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "a": "\a"}


def split_arguments(line: str) -> list[str] | None:
    """Redis's sdssplitargs: the words of line, or None when its quotes are unbalanced (or a
    closing quote is not followed by a space)."""
    words: list[str] = []
    i, n = 0, len(line)
    while True:
        while i < n and line[i].isspace():
            i += 1
        if i >= n:
            return words
        word: list[str] = []
        in_double = in_single = False
        while True:
            if in_double:
                if i >= n:
                    return None
                c = line[i]
                if c == "\\" and i + 3 < n and line[i + 1] == "x" and _is_hex(line[i + 2]) and _is_hex(line[i + 3]):
                    word.append(chr(int(line[i + 2:i + 4], 16)))
                    i += 3
                elif c == "\\" and i + 1 < n:
                    i += 1
                    word.append(_ESCAPES.get(line[i], line[i]))
                elif c == '"':
                    if i + 1 < n and not line[i + 1].isspace():
                        return None
                    in_double = False
                    i += 1
                    break
                else:
                    word.append(c)
            elif in_single:
                if i >= n:
                    return None
                c = line[i]
                if c == "\\" and i + 1 < n and line[i + 1] == "'":
                    i += 1
                    word.append("'")
                elif c == "'":
                    if i + 1 < n and not line[i + 1].isspace():
                        return None
                    in_single = False
                    i += 1
                    break
                else:
                    word.append(c)
            else:
                if i >= n:
                    break
                c = line[i]
                if c.isspace():
                    break
                if c == '"':
                    in_double = True
                elif c == "'":
                    in_single = True
                else:
                    word.append(c)
            i += 1
        words.append("".join(word))


def _is_hex(c: str) -> bool:
    return c in "0123456789abcdefABCDEF"


def read_config_file(path: str | Path, depth: int = 0) -> list[Directive]:
    """Every directive of the file, includes expanded in place, in order."""
    path = Path(path)
    if depth > 16:
        raise ConfigFileError(f"config file {path}: includes nested more than 16 deep")
    try:
        text = path.read_text()
    except OSError as error:
        raise ConfigFileError(f"config file {path}: {error.strerror}") from None
    directives: list[Directive] = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        words = split_arguments(stripped)
        if words is None:
            raise fatal(str(path), number, line, "Unbalanced quotes in configuration line")
        if not words:
            continue
        name = words[0].lower()
        if name == "include":
            if len(words) != 2:
                raise fatal(str(path), number, line, "Bad directive or wrong number of arguments")
            included = Path(words[1])
            if not included.is_absolute():
                included = path.parent / included
            directives.extend(read_config_file(included, depth + 1))
            continue
        directives.append(Directive(name, words[1:], str(path), number, line))
    return directives
