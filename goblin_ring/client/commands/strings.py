"""strings.py — StringCommands: the string commands (redis-py's BasicKeyCommands' string
half), written once for both transports (see core.py)."""

from __future__ import annotations

from typing import Any, Mapping

from .core import (CommandsCore, DataError, as_bool, as_float, bool_ok, encode, keys_of, milliseconds_of,
                   seconds_of, unix_milliseconds_of, unix_seconds_of)


def expire_words(ex: Any, px: Any, exat: Any, pxat: Any) -> list:
    """The one expiry option of SET or GETEX as argv words; redis-py's check."""
    given = [(b"EX", ex, seconds_of), (b"PX", px, milliseconds_of), (b"EXAT", exat, unix_seconds_of),
             (b"PXAT", pxat, unix_milliseconds_of)]
    chosen = [[word, encode(convert(value))] for word, value, convert in given if value is not None]
    if len(chosen) > 1:
        raise DataError("``ex``, ``px``, ``exat`` and ``pxat`` are mutually exclusive.")
    return chosen[0] if chosen else []


def _set_reply(reply: Any) -> Any:
    return True if bool_ok(reply) else None


class StringCommands(CommandsCore):

    def set(self, name: Any, value: Any, ex: Any = None, px: Any = None, nx: bool = False, xx: bool = False,
            keepttl: bool = False, get: bool = False, exat: Any = None, pxat: Any = None) -> Any:
        """SET; True (or None when NX/XX stopped it), or with get=True the old value."""
        words = expire_words(ex, px, exat, pxat)
        if keepttl:
            if words:
                raise DataError("``keepttl`` can't be combined with ``ex``, ``px``, ``exat`` or ``pxat``.")
            words = [b"KEEPTTL"]
        if nx and xx:
            raise DataError("``nx`` and ``xx`` are mutually exclusive.")
        argv = [b"SET", encode(name), encode(value), *words]
        if nx:
            argv.append(b"NX")
        if xx:
            argv.append(b"XX")
        if get:
            argv.append(b"GET")
        return self._execute(tuple(argv), None if get else _set_reply)

    def setnx(self, name: Any, value: Any) -> bool:
        return self._execute((b"SETNX", encode(name), encode(value)), as_bool)

    def setex(self, name: Any, time: Any, value: Any) -> bool:
        return self._execute((b"SETEX", encode(name), encode(seconds_of(time)), encode(value)), bool_ok)

    def psetex(self, name: Any, time_ms: Any, value: Any) -> bool:
        return self._execute((b"PSETEX", encode(name), encode(milliseconds_of(time_ms)), encode(value)), bool_ok)

    def get(self, name: Any) -> bytes | None:
        return self._execute((b"GET", encode(name)))

    def getdel(self, name: Any) -> bytes | None:
        return self._execute((b"GETDEL", encode(name)))

    def getex(self, name: Any, ex: Any = None, px: Any = None, exat: Any = None, pxat: Any = None,
              persist: bool = False) -> bytes | None:
        words = expire_words(ex, px, exat, pxat)
        if persist:
            if words:
                raise DataError("``persist`` is an exclusive option, it can't be combined with an expiry.")
            words = [b"PERSIST"]
        return self._execute((b"GETEX", encode(name), *words))

    def _mset(self, word: bytes, mapping: Mapping, convert) -> Any:
        items: list = []
        for key, value in mapping.items():
            items += [encode(key), encode(value)]
        return self._execute((word, *items), convert)

    def mset(self, mapping: Mapping) -> bool:
        return self._mset(b"MSET", mapping, bool_ok)

    def msetnx(self, mapping: Mapping) -> bool:
        return self._mset(b"MSETNX", mapping, as_bool)

    def mget(self, keys: Any, *args: Any) -> list:
        return self._execute((b"MGET", *keys_of(keys, args)))

    def incr(self, name: Any, amount: int = 1) -> int:
        return self._execute((b"INCRBY", encode(name), encode(amount)))

    incrby = incr

    def decr(self, name: Any, amount: int = 1) -> int:
        return self._execute((b"DECRBY", encode(name), encode(amount)))

    decrby = decr

    def incrbyfloat(self, name: Any, amount: float = 1.0) -> float:
        return self._execute((b"INCRBYFLOAT", encode(name), encode(amount)), as_float)

    def append(self, key: Any, value: Any) -> int:
        return self._execute((b"APPEND", encode(key), encode(value)))

    def strlen(self, name: Any) -> int:
        return self._execute((b"STRLEN", encode(name)))

    def getrange(self, key: Any, start: int, end: int) -> bytes:
        return self._execute((b"GETRANGE", encode(key), encode(start), encode(end)))

    def substr(self, name: Any, start: int, end: int = -1) -> bytes:
        return self.getrange(name, start, end)

    def setrange(self, name: Any, offset: int, value: Any) -> int:
        return self._execute((b"SETRANGE", encode(name), encode(offset), encode(value)))

    def getset(self, name: Any, value: Any) -> bytes | None:
        """GETSET: store value, return the old one (SET name value GET; any expiry is dropped)."""
        return self._execute((b"GETSET", encode(name), encode(value)))

    def lcs(self, key1: Any, key2: Any, len: bool = False, idx: bool = False, minmatchlen: int = 0,
            withmatchlen: bool = False) -> Any:
        """LCS: the longest common subsequence (bytes), its length (len=True), or with idx=True
        the matching ranges, as Redis replies them: [b"matches", [[[a0, a1], [b0, b1](, n)], ...],
        b"len", n] (a dict over RESP3)."""
        argv = [b"LCS", encode(key1), encode(key2)]
        if len:
            argv.append(b"LEN")
        if idx:
            argv.append(b"IDX")
        if minmatchlen:
            argv += [b"MINMATCHLEN", encode(minmatchlen)]
        if withmatchlen:
            argv.append(b"WITHMATCHLEN")
        return self._execute(tuple(argv))
