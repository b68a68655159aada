"""sets.py — SetCommands: the set commands with redis-py's names, signatures and return
shapes (SMEMBERS, SINTER, SUNION and SDIFF answer a Python set; SMOVE a bool; SSCAN a
(cursor, list) pair), written once for both transports (see core.py).

Over the ring every set command travels as a CommandRequest (argv), one C call per command.
"""

from __future__ import annotations

from typing import Any, Iterator

from .core import CommandsCore, as_bool, encode, encode_values, keys_of, parse_scan


def as_set(reply: Any) -> set:
    return set(reply) if reply else set()


class SetCommands(CommandsCore):

    def sadd(self, name: Any, *values: Any) -> int:
        return self._execute((b"SADD", encode(name), *encode_values(values)))

    def srem(self, name: Any, *values: Any) -> int:
        return self._execute((b"SREM", encode(name), *encode_values(values)))

    def smembers(self, name: Any) -> set:
        return self._execute((b"SMEMBERS", encode(name)), as_set)

    def sismember(self, name: Any, value: Any) -> int:
        return self._execute((b"SISMEMBER", encode(name), encode(value)))

    def smismember(self, name: Any, values: Any, *args: Any) -> list:
        return self._execute((b"SMISMEMBER", encode(name), *keys_of(values, args)))

    def scard(self, name: Any) -> int:
        return self._execute((b"SCARD", encode(name)))

    def spop(self, name: Any, count: int | None = None) -> Any:
        if count is None:
            return self._execute((b"SPOP", encode(name)))
        return self._execute((b"SPOP", encode(name), encode(count)))

    def srandmember(self, name: Any, number: int | None = None) -> Any:
        if number is None:
            return self._execute((b"SRANDMEMBER", encode(name)))
        return self._execute((b"SRANDMEMBER", encode(name), encode(number)))

    def smove(self, src: Any, dst: Any, value: Any) -> bool:
        return self._execute((b"SMOVE", encode(src), encode(dst), encode(value)), as_bool)

    def sinter(self, keys: Any, *args: Any) -> set:
        return self._execute((b"SINTER", *keys_of(keys, args)), as_set)

    def sunion(self, keys: Any, *args: Any) -> set:
        return self._execute((b"SUNION", *keys_of(keys, args)), as_set)

    def sdiff(self, keys: Any, *args: Any) -> set:
        return self._execute((b"SDIFF", *keys_of(keys, args)), as_set)

    def sinterstore(self, dest: Any, keys: Any, *args: Any) -> int:
        return self._execute((b"SINTERSTORE", encode(dest), *keys_of(keys, args)))

    def sunionstore(self, dest: Any, keys: Any, *args: Any) -> int:
        return self._execute((b"SUNIONSTORE", encode(dest), *keys_of(keys, args)))

    def sdiffstore(self, dest: Any, keys: Any, *args: Any) -> int:
        return self._execute((b"SDIFFSTORE", encode(dest), *keys_of(keys, args)))

    def sintercard(self, numkeys: int, keys: Any, limit: int = 0) -> int:
        return self._execute((b"SINTERCARD", encode(numkeys), *keys_of(keys), b"LIMIT", encode(limit)))

    def sscan(self, name: Any, cursor: int = 0, match: Any = None, count: int | None = None) -> tuple[int, list]:
        argv: list = [b"SSCAN", encode(name), encode(cursor)]
        if match is not None:
            argv += [b"MATCH", encode(match)]
        if count is not None:
            argv += [b"COUNT", encode(count)]
        return self._execute(tuple(argv), parse_scan)

    def sscan_iter(self, name: Any, match: Any = None, count: int | None = None) -> Iterator[bytes]:
        cursor = None
        while cursor != 0:
            cursor, members = self.sscan(name, cursor or 0, match=match, count=count)
            yield from members
