"""hashes.py — HashCommands: the hash commands, field expiry included (redis-py's
HashCommands: names, signatures and return types), written once for both transports
(see core.py). The batch helpers hset_many / hmget_many are RingClient's (ring.py): one C call
for a whole batch.
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping, Sequence

from ...errors import DataError
from .core import (CommandsCore, as_bool, as_float, bool_ok, encode, encode_values, milliseconds_of, seconds_of,
                   unix_milliseconds_of, unix_seconds_of)


def pairs_to_dict(reply: Any) -> dict:
    """A map reply (RESP2 and the ring: a flat list of field, value) as a dict."""
    if isinstance(reply, dict):
        return reply
    return dict(zip(reply[::2], reply[1::2]))


def parse_hscan(reply: list, no_values: bool = False) -> tuple[int, Any]:
    cursor, data = reply
    if no_values:
        return int(cursor), data
    return int(cursor), pairs_to_dict(data)


def _expiry_words(ex: Any, px: Any, exat: Any, pxat: Any) -> list:
    """redis-py's extract_expire_flags: at most one of EX/PX/EXAT/PXAT with its number."""
    words: list = []
    if ex is not None:
        words += [b"EX", encode(seconds_of(ex))]
    if px is not None:
        words += [b"PX", encode(milliseconds_of(px))]
    if exat is not None:
        words += [b"EXAT", encode(unix_seconds_of(exat))]
    if pxat is not None:
        words += [b"PXAT", encode(unix_milliseconds_of(pxat))]
    return words


def _conditions(nx: bool, xx: bool, gt: bool, lt: bool) -> list:
    if nx + xx + gt + lt > 1:
        raise ValueError("Only one of 'nx', 'xx', 'gt', 'lt' can be specified.")
    return [word for flag, word in ((nx, b"NX"), (xx, b"XX"), (gt, b"GT"), (lt, b"LT")) if flag]


def _pairs(command: str, key: Any, value: Any, mapping: Mapping | None, items: Sequence | None) -> list:
    if key is None and not mapping and not items:
        raise DataError(f"'{command}' with no key value pairs")
    if items and len(items) % 2 != 0:
        raise DataError(f"'{command}' with odd number of items. 'items' must contain a list of key/value pairs.")
    pieces: list = []
    if items:
        pieces.extend(map(encode, items))
    if key is not None:
        pieces += [encode(key), encode(value)]
    if mapping:
        for field, field_value in mapping.items():
            pieces += [encode(field), encode(field_value)]
    return pieces


class HashCommands(CommandsCore):

    def hset(self, name: Any, key: Any = None, value: Any = None, mapping: Mapping | None = None,
             items: Sequence | None = None) -> int:
        return self._execute((b"HSET", encode(name), *_pairs("hset", key, value, mapping, items)))

    def hsetnx(self, name: Any, key: Any, value: Any) -> int:
        return self._execute((b"HSETNX", encode(name), encode(key), encode(value)))

    def hmset(self, name: Any, mapping: Mapping) -> bool:
        if not mapping:
            raise DataError("'hmset' with 'mapping' of length 0")
        return self._execute((b"HMSET", encode(name), *_pairs("hmset", None, None, mapping, None)), bool_ok)

    def hget(self, name: Any, key: Any) -> bytes | None:
        return self._execute((b"HGET", encode(name), encode(key)))

    def hmget(self, name: Any, keys: Any, *args: Any) -> list:
        if isinstance(keys, (bytes, str, int, float, bytearray, memoryview)):
            fields = (keys, *args)
        else:
            fields = (*keys, *args)
        return self._execute((b"HMGET", encode(name), *encode_values(fields)))

    def hdel(self, name: Any, *keys: Any) -> int:
        return self._execute((b"HDEL", encode(name), *encode_values(keys)))

    def hlen(self, name: Any) -> int:
        return self._execute((b"HLEN", encode(name)))

    def hexists(self, name: Any, key: Any) -> bool:
        return self._execute((b"HEXISTS", encode(name), encode(key)), as_bool)

    def hstrlen(self, name: Any, key: Any) -> int:
        return self._execute((b"HSTRLEN", encode(name), encode(key)))

    def hgetall(self, name: Any) -> dict:
        return self._execute((b"HGETALL", encode(name)), pairs_to_dict)

    def hkeys(self, name: Any) -> list:
        return self._execute((b"HKEYS", encode(name)))

    def hvals(self, name: Any) -> list:
        return self._execute((b"HVALS", encode(name)))

    def hincrby(self, name: Any, key: Any, amount: int = 1) -> int:
        return self._execute((b"HINCRBY", encode(name), encode(key), encode(amount)))

    def hincrbyfloat(self, name: Any, key: Any, amount: float = 1.0) -> float:
        return self._execute((b"HINCRBYFLOAT", encode(name), encode(key), encode(amount)), as_float)

    def hscan(self, name: Any, cursor: int = 0, match: Any = None, count: int | None = None,
              no_values: bool | None = None) -> tuple[int, Any]:
        argv: list = [b"HSCAN", encode(name), encode(cursor)]
        if match is not None:
            argv += [b"MATCH", encode(match)]
        if count is not None:
            argv += [b"COUNT", encode(count)]
        if no_values:
            argv.append(b"NOVALUES")
        return self._execute(tuple(argv), lambda reply: parse_hscan(reply, bool(no_values)))

    def hscan_iter(self, name: Any, match: Any = None, count: int | None = None,
                   no_values: bool | None = None) -> Iterator:
        cursor = None
        while cursor != 0:
            cursor, data = self.hscan(name, cursor or 0, match=match, count=count, no_values=no_values)
            if no_values:
                yield from data
            else:
                yield from data.items()

    def hrandfield(self, key: Any, count: int | None = None, withvalues: bool = False) -> Any:
        argv: list = [b"HRANDFIELD", encode(key)]
        if count is not None:
            argv.append(encode(count))
        if withvalues:
            argv.append(b"WITHVALUES")
        return self._execute(tuple(argv))

    def hgetdel(self, name: Any, *keys: Any) -> list:
        return self._execute((b"HGETDEL", encode(name), b"FIELDS", encode(len(keys)), *encode_values(keys)))

    def hgetex(self, name: Any, *keys: Any, ex: Any = None, px: Any = None, exat: Any = None, pxat: Any = None,
               persist: bool = False) -> list:
        if not keys:
            raise DataError("'hgetex' should have at least one key provided")
        if (ex is not None) + (px is not None) + (exat is not None) + (pxat is not None) + bool(persist) > 1:
            raise DataError("``ex``, ``px``, ``exat``, ``pxat``, and ``persist`` are mutually exclusive.")
        words = _expiry_words(ex, px, exat, pxat) + ([b"PERSIST"] if persist else [])
        return self._execute((b"HGETEX", encode(name), *words, b"FIELDS", encode(len(keys)),
                              *encode_values(keys)))

    def hsetex(self, name: Any, key: Any = None, value: Any = None, mapping: Mapping | None = None,
               items: Sequence | None = None, ex: Any = None, px: Any = None, exat: Any = None, pxat: Any = None,
               data_persist_option: Any = None, keepttl: bool = False) -> int:
        pieces = _pairs("hsetex", key, value, mapping, items)
        if (ex is not None) + (px is not None) + (exat is not None) + (pxat is not None) + bool(keepttl) > 1:
            raise DataError("``ex``, ``px``, ``exat``, ``pxat``, and ``keepttl`` are mutually exclusive.")
        words = _expiry_words(ex, px, exat, pxat)
        if data_persist_option:
            words.insert(0, encode(getattr(data_persist_option, "value", data_persist_option)))
        if keepttl:
            words.append(b"KEEPTTL")
        return self._execute((b"HSETEX", encode(name), *words, b"FIELDS", encode(len(pieces) // 2), *pieces))

    def _hexpire(self, command: bytes, name: Any, when: Any, fields: tuple, nx: bool, xx: bool, gt: bool,
                 lt: bool) -> list:
        return self._execute((command, encode(name), encode(when), *_conditions(nx, xx, gt, lt), b"FIELDS",
                              encode(len(fields)), *encode_values(fields)))

    def hexpire(self, name: Any, seconds: Any, *fields: Any, nx: bool = False, xx: bool = False, gt: bool = False,
                lt: bool = False) -> list:
        return self._hexpire(b"HEXPIRE", name, seconds_of(seconds), fields, nx, xx, gt, lt)

    def hpexpire(self, name: Any, milliseconds: Any, *fields: Any, nx: bool = False, xx: bool = False,
                 gt: bool = False, lt: bool = False) -> list:
        return self._hexpire(b"HPEXPIRE", name, milliseconds_of(milliseconds), fields, nx, xx, gt, lt)

    def hexpireat(self, name: Any, unix_time_seconds: Any, *fields: Any, nx: bool = False, xx: bool = False,
                  gt: bool = False, lt: bool = False) -> list:
        return self._hexpire(b"HEXPIREAT", name, unix_seconds_of(unix_time_seconds), fields, nx, xx, gt, lt)

    def hpexpireat(self, name: Any, unix_time_milliseconds: Any, *fields: Any, nx: bool = False, xx: bool = False,
                   gt: bool = False, lt: bool = False) -> list:
        return self._hexpire(b"HPEXPIREAT", name, unix_milliseconds_of(unix_time_milliseconds), fields, nx, xx, gt,
                             lt)

    def _field_times(self, command: bytes, name: Any, fields: tuple) -> list:
        return self._execute((command, encode(name), b"FIELDS", encode(len(fields)), *encode_values(fields)))

    def httl(self, key: Any, *fields: Any) -> list:
        return self._field_times(b"HTTL", key, fields)

    def hpttl(self, key: Any, *fields: Any) -> list:
        return self._field_times(b"HPTTL", key, fields)

    def hexpiretime(self, key: Any, *fields: Any) -> list:
        return self._field_times(b"HEXPIRETIME", key, fields)

    def hpexpiretime(self, key: Any, *fields: Any) -> list:
        return self._field_times(b"HPEXPIRETIME", key, fields)

    def hpersist(self, name: Any, *fields: Any) -> list:
        return self._field_times(b"HPERSIST", name, fields)
