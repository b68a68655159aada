"""keys.py — KeyCommands: generic key commands, expiry, DUMP/RESTORE and SORT (redis-py's
BasicKeyCommands and ScanCommands, minus the string commands), written once for both
transports (see core.py)."""

from __future__ import annotations

from typing import Any, Iterator

from ...errors import DataError
from .core import (CommandsCore, Convert, as_bool, bool_ok, encode, keys_of, milliseconds_of, parse_scan,
                   seconds_of, unix_milliseconds_of, unix_seconds_of)


class KeyCommands(CommandsCore):

    def delete(self, *names: Any) -> int:
        return self._execute((b"DEL", *keys_of(names)))

    def unlink(self, *names: Any) -> int:
        return self._execute((b"UNLINK", *keys_of(names)))

    def exists(self, *names: Any) -> int:
        return self._execute((b"EXISTS", *keys_of(names)))

    def type(self, name: Any) -> bytes:
        return self._execute((b"TYPE", encode(name)))

    def keys(self, pattern: Any = "*") -> list:
        return self._execute((b"KEYS", encode(pattern)))

    def scan(self, cursor: int = 0, match: Any = None, count: int | None = None,
             _type: str | None = None) -> tuple[int, list]:
        argv: list = [b"SCAN", encode(cursor)]
        if match is not None:
            argv += [b"MATCH", encode(match)]
        if count is not None:
            argv += [b"COUNT", encode(count)]
        if _type is not None:
            argv += [b"TYPE", encode(_type)]
        return self._execute(tuple(argv), parse_scan)

    def scan_iter(self, match: Any = None, count: int | None = None, _type: str | None = None) -> Iterator[bytes]:
        cursor = None
        while cursor != 0:
            cursor, keys = self.scan(cursor or 0, match=match, count=count, _type=_type)
            yield from keys

    def rename(self, src: Any, dst: Any) -> bool:
        return self._execute((b"RENAME", encode(src), encode(dst)), bool_ok)

    def move(self, name: Any, db: int) -> bool:
        return self._execute((b"MOVE", encode(name), encode(db)), as_bool)

    def copy(self, source: Any, destination: Any, destination_db: int | None = None, replace: bool = False) -> bool:
        argv = [b"COPY", encode(source), encode(destination)]
        if destination_db is not None:
            argv += [b"DB", encode(destination_db)]
        if replace:
            argv.append(b"REPLACE")
        return self._execute(tuple(argv), as_bool)

    def renamenx(self, src: Any, dst: Any) -> bool:
        return self._execute((b"RENAMENX", encode(src), encode(dst)), as_bool)

    def touch(self, *args: Any) -> int:
        return self._execute((b"TOUCH", *keys_of(args)))

    def randomkey(self) -> bytes | None:
        return self._execute((b"RANDOMKEY",))

    def object(self, infotype: str, key: Any) -> Any:
        return self._execute((b"OBJECT", encode(infotype), encode(key)))

    # ---- DUMP / RESTORE: payloads are goblin's own (versioned, checksummed), not Redis's ----

    def dump(self, name: Any) -> bytes | None:
        return self._execute((b"DUMP", encode(name)))

    def restore(self, name: Any, ttl: float, value: bytes, replace: bool = False, absttl: bool = False,
                idletime: int | None = None, frequency: int | None = None) -> bool:
        argv = [b"RESTORE", encode(name), encode(int(ttl)), encode(value)]
        if replace:
            argv.append(b"REPLACE")
        if absttl:
            argv.append(b"ABSTTL")
        if idletime is not None:
            argv += [b"IDLETIME", encode(int(idletime))]
        if frequency is not None:
            argv += [b"FREQ", encode(int(frequency))]
        return self._execute(tuple(argv), bool_ok)

    # ---- SORT / SORT_RO (redis-py's signatures; groups=True pairs GET values into tuples) ----

    def _sort_argv(self, word: bytes, name: Any, start: int | None, num: int | None, by: Any, get: Any,
                   desc: bool, alpha: bool, store: Any, groups: bool) -> tuple[list, Convert]:
        if (start is None) != (num is None):
            raise DataError("``start`` and ``num`` must both be specified")
        argv: list = [word, encode(name)]
        if by is not None:
            argv += [b"BY", encode(by)]
        if start is not None:
            argv += [b"LIMIT", encode(start), encode(num)]
        patterns = [] if get is None else [get] if isinstance(get, (bytes, str)) else list(get)
        for pattern in patterns:
            argv += [b"GET", encode(pattern)]
        if desc:
            argv.append(b"DESC")
        if alpha:
            argv.append(b"ALPHA")
        if store is not None:
            argv += [b"STORE", encode(store)]
        convert = None
        if groups:
            if len(patterns) < 2 or isinstance(get, (bytes, str)):
                raise DataError('when using "groups" the "get" argument must be specified and contain at '
                                "least two keys")
            width = len(patterns)
            convert = (lambda reply: reply if not isinstance(reply, list) else
                       list(zip(*[reply[i::width] for i in range(width)])))
        return argv, convert

    def sort(self, name: Any, start: int | None = None, num: int | None = None, by: Any = None, get: Any = None,
             desc: bool = False, alpha: bool = False, store: Any = None, groups: bool = False) -> Any:
        argv, convert = self._sort_argv(b"SORT", name, start, num, by, get, desc, alpha, store, groups)
        return self._execute(tuple(argv), convert)

    def sort_ro(self, key: Any, start: int | None = None, num: int | None = None, by: Any = None, get: Any = None,
                desc: bool = False, alpha: bool = False) -> list:
        argv, _ = self._sort_argv(b"SORT_RO", key, start, num, by, get, desc, alpha, None, False)
        return self._execute(tuple(argv))

    # ---- expiry ----

    def _expire(self, word: bytes, name: Any, value: Any, nx: bool, xx: bool, gt: bool, lt: bool) -> bool:
        argv = [word, encode(name), encode(value)]
        for flag, option in ((nx, b"NX"), (xx, b"XX"), (gt, b"GT"), (lt, b"LT")):
            if flag:
                argv.append(option)
        return self._execute(tuple(argv), as_bool)

    def expire(self, name: Any, time: Any, nx: bool = False, xx: bool = False, gt: bool = False,
               lt: bool = False) -> bool:
        return self._expire(b"EXPIRE", name, seconds_of(time), nx, xx, gt, lt)

    def pexpire(self, name: Any, time: Any, nx: bool = False, xx: bool = False, gt: bool = False,
                lt: bool = False) -> bool:
        return self._expire(b"PEXPIRE", name, milliseconds_of(time), nx, xx, gt, lt)

    def expireat(self, name: Any, when: Any, nx: bool = False, xx: bool = False, gt: bool = False,
                 lt: bool = False) -> bool:
        return self._expire(b"EXPIREAT", name, unix_seconds_of(when), nx, xx, gt, lt)

    def pexpireat(self, name: Any, when: Any, nx: bool = False, xx: bool = False, gt: bool = False,
                  lt: bool = False) -> bool:
        return self._expire(b"PEXPIREAT", name, unix_milliseconds_of(when), nx, xx, gt, lt)

    def ttl(self, name: Any) -> int:
        return self._execute((b"TTL", encode(name)))

    def pttl(self, name: Any) -> int:
        return self._execute((b"PTTL", encode(name)))

    def expiretime(self, key: Any) -> int:
        return self._execute((b"EXPIRETIME", encode(key)))

    def pexpiretime(self, key: Any) -> int:
        return self._execute((b"PEXPIRETIME", encode(key)))

    def persist(self, name: Any) -> bool:
        return self._execute((b"PERSIST", encode(name)), as_bool)
