"""lists.py — ListCommands: the list commands, blocking ones included (redis-py's
ListCommands), written once for both transports (see core.py); and EngineView, the same
methods aimed at one list engine.

`client.pma` and `client.seg` are views whose list methods reach one list engine through the
GOBLIN.PMA.* / GOBLIN.SEG.* names (over the ring, C builds the same typed request with its
`engine` field set). A list they create has that engine; a list of the other engine answers
WRONGTYPE (WrongTypeError).
"""

from __future__ import annotations

from typing import Any

from .core import CommandsCore, as_pair, bool_ok, encode, encode_values, keys_of, timeout_of


class ListCommands(CommandsCore):

    def lpush(self, name: Any, *values: Any) -> int:
        return self._execute((b"LPUSH", encode(name), *encode_values(values)))

    def rpush(self, name: Any, *values: Any) -> int:
        return self._execute((b"RPUSH", encode(name), *encode_values(values)))

    def lpushx(self, name: Any, *values: Any) -> int:
        return self._execute((b"LPUSHX", encode(name), *encode_values(values)))

    def rpushx(self, name: Any, *values: Any) -> int:
        return self._execute((b"RPUSHX", encode(name), *encode_values(values)))

    def lpop(self, name: Any, count: int | None = None) -> Any:
        if count is None:
            return self._execute((b"LPOP", encode(name)))
        return self._execute((b"LPOP", encode(name), encode(count)))

    def rpop(self, name: Any, count: int | None = None) -> Any:
        if count is None:
            return self._execute((b"RPOP", encode(name)))
        return self._execute((b"RPOP", encode(name), encode(count)))

    def llen(self, name: Any) -> int:
        return self._execute((b"LLEN", encode(name)))

    def lindex(self, name: Any, index: int) -> bytes | None:
        return self._execute((b"LINDEX", encode(name), encode(index)))

    def lrange(self, name: Any, start: int, end: int) -> list:
        return self._execute((b"LRANGE", encode(name), encode(start), encode(end)))

    def lset(self, name: Any, index: int, value: Any) -> bool:
        return self._execute((b"LSET", encode(name), encode(index), encode(value)), bool_ok)

    def linsert(self, name: Any, where: str, refvalue: Any, value: Any) -> int:
        return self._execute((b"LINSERT", encode(name), encode(where), encode(refvalue), encode(value)))

    def lrem(self, name: Any, count: int, value: Any) -> int:
        return self._execute((b"LREM", encode(name), encode(count), encode(value)))

    def ltrim(self, name: Any, start: int, end: int) -> bool:
        return self._execute((b"LTRIM", encode(name), encode(start), encode(end)), bool_ok)

    def lpos(self, name: Any, value: Any, rank: int | None = None, count: int | None = None,
             maxlen: int | None = None) -> Any:
        argv: list = [b"LPOS", encode(name), encode(value)]
        if rank is not None:
            argv += [b"RANK", encode(rank)]
        if count is not None:
            argv += [b"COUNT", encode(count)]
        if maxlen is not None:
            argv += [b"MAXLEN", encode(maxlen)]
        return self._execute(tuple(argv))

    def lmove(self, first_list: Any, second_list: Any, src: str = "LEFT", dest: str = "RIGHT") -> bytes | None:
        return self._execute((b"LMOVE", encode(first_list), encode(second_list), encode(src), encode(dest)))

    def rpoplpush(self, src: Any, dst: Any) -> bytes | None:
        return self._execute((b"RPOPLPUSH", encode(src), encode(dst)))

    def lmpop(self, num_keys: int, *args: Any, direction: str, count: int | None = 1) -> list | None:
        """[key, [values...]] from the first non-empty list, or None."""
        argv = [b"LMPOP", encode(num_keys), *map(encode, args), encode(direction)]
        if count != 1 and count is not None:
            argv += [b"COUNT", encode(count)]
        return self._execute(tuple(argv))

    # ---- blocking: the timeout (seconds, float; 0 = forever) is the server's ----

    def blpop(self, keys: Any, timeout: Any = 0) -> tuple | None:
        """(key, value) from the first non-empty list, waiting up to timeout seconds; None on timeout."""
        return self._execute((b"BLPOP", *keys_of(keys), encode(timeout_of(timeout))), as_pair)

    def brpop(self, keys: Any, timeout: Any = 0) -> tuple | None:
        return self._execute((b"BRPOP", *keys_of(keys), encode(timeout_of(timeout))), as_pair)

    def blmove(self, first_list: Any, second_list: Any, timeout: Any, src: str = "LEFT",
               dest: str = "RIGHT") -> bytes | None:
        return self._execute((b"BLMOVE", encode(first_list), encode(second_list), encode(src), encode(dest),
                              encode(timeout_of(timeout))))

    def brpoplpush(self, src: Any, dst: Any, timeout: Any = 0) -> bytes | None:
        return self._execute((b"BRPOPLPUSH", encode(src), encode(dst), encode(timeout_of(timeout))))

    def blmpop(self, timeout: Any, numkeys: int, *args: Any, direction: str, count: int | None = 1) -> list | None:
        """[key, [values...]] from the first non-empty list, waiting up to timeout seconds; None on timeout."""
        argv = [b"BLMPOP", encode(timeout_of(timeout)), encode(numkeys), *map(encode, args), encode(direction)]
        if count != 1 and count is not None:
            argv += [b"COUNT", encode(count)]
        return self._execute(tuple(argv))


ENGINE_SEGMENTED, ENGINE_PMA = 1, 2   # ListEngine (schema/goblin.xml)
_ENGINE_PREFIX = {ENGINE_SEGMENTED: b"GOBLIN.SEG.", ENGINE_PMA: b"GOBLIN.PMA."}


class EngineView(ListCommands):
    """The list commands of `client`, aimed at one list engine (see the module docstring)."""

    def __init__(self, client: CommandsCore, engine: int) -> None:
        self._client = client
        self._engine = engine
        self._prefix = _ENGINE_PREFIX[engine]

    def __repr__(self) -> str:
        return f"<{self._prefix.decode().rstrip('.').lower()} view of {self._client!r}>"

    def _execute(self, argv: tuple, convert=None) -> Any:
        return self._client._execute((self._prefix + argv[0], *argv[1:]), convert)


class EngineViews:
    """`client.pma` and `client.seg`."""

    @property
    def pma(self) -> EngineView:
        """List commands on the PMA engine (GOBLIN.PMA.*)"""
        return EngineView(self, ENGINE_PMA)

    @property
    def seg(self) -> EngineView:
        """List commands on the segmented engine (GOBLIN.SEG.*)"""
        return EngineView(self, ENGINE_SEGMENTED)
