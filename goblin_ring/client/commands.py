"""commands.py — the typed command API shared by RingClient, RespClient and their pipelines.

One lowercase method per command, with redis-py's names, signatures and return types
(bytes or None for a bulk, int for an integer, list for an array, True for an OK that
redis-py turns into True), so code written for redis-py moves over unchanged.

Each method describes its command once: the RESP argv, and the typed fields of the SBE
request (native/ring/codec.h's table). A transport implements `_execute(template, argv,
fields, convert)`: RespClient sends argv, RingClient fills a gr_request_t.

`client.pma` and `client.seg` are views whose list methods reach one list engine: the same
typed request with its `engine` field set (ListEngine 2 / 1) over the ring, and the
GOBLIN.PMA.* / GOBLIN.SEG.* name over RESP. A list they create has that engine; a list of
the other engine answers WRONGTYPE (WrongTypeError).
"""

from __future__ import annotations

import datetime
from typing import Any, Callable, Iterable, Iterator, Mapping

from .._native import lib

LEFT, RIGHT = 0, 1
T = lib  # template ids: T.GR_T_LINDEX, ...


def encode(value: Any) -> bytes:
    """redis-py's rules: bytes as they are, str as UTF-8, numbers as their decimal text."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, bool):
        raise TypeError("bool is not a valid value; convert it to bytes, str or a number first")
    if isinstance(value, (int, float)):
        return repr(value).encode()
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"invalid value type {type(value).__name__}; use bytes, str, int or float")


def end_of(word: str, argument: str = "direction") -> int:
    upper = word.upper() if isinstance(word, str) else encode(word).decode().upper()
    if upper == "LEFT":
        return LEFT
    if upper == "RIGHT":
        return RIGHT
    raise ValueError(f"{argument} must be LEFT or RIGHT, not {word!r}")


def bool_ok(reply: Any) -> bool:
    return reply == b"OK" or reply == "OK"


def parse_info(reply: bytes) -> dict:
    """INFO's text as redis-py returns it: a dict of field -> int, float or str."""
    info: dict[str, Any] = {}
    for line in reply.decode(errors="replace").splitlines():
        if not line or line.startswith("#") or ":" not in line:
            continue
        key, _, value = line.partition(":")
        if key.startswith("db") and "=" in value:
            info[key] = {k: _number(v) for k, _, v in (p.partition("=") for p in value.split(","))}
        else:
            info[key] = _number(value)
    return info


def _number(text: str) -> Any:
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


def raise_first_error(results: list) -> list:
    """A pipeline's raise_on_error=True, as in redis-py: the first command error is raised."""
    from ..errors import ResponseError

    for value in results:
        if isinstance(value, ResponseError):
            raise value
    return results


def seconds_of(value: Any) -> int:
    """redis-py accepts a timedelta wherever it takes seconds."""
    if isinstance(value, datetime.timedelta):
        return int(value.total_seconds())
    return int(value)


def milliseconds_of(value: Any) -> int:
    if isinstance(value, datetime.timedelta):
        return int(value.total_seconds() * 1000)
    return int(value)


def unix_seconds_of(value: Any) -> int:
    """... and a datetime wherever it takes a unix time."""
    if isinstance(value, datetime.datetime):
        return int(value.timestamp())
    return int(value)


def unix_milliseconds_of(value: Any) -> int:
    if isinstance(value, datetime.datetime):
        return int(value.timestamp() * 1000)
    return int(value)


def as_bool(reply: Any) -> bool:
    return bool(reply)


def blocking_timeout(value: Any) -> float | None:
    """Seconds for the typed path, or None when the server should word the error."""
    if value is None:
        return 0.0
    if isinstance(value, datetime.timedelta):
        value = value.total_seconds()
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return None
    return seconds if 0 <= seconds <= 9.2e15 else None


def as_pair(reply: Any) -> tuple | None:
    """BLPOP/BRPOP: redis-py's (key, value) tuple, or None on timeout."""
    return tuple(reply) if reply else None


def as_float(reply: Any) -> float:
    return float(reply)


# SetRequest variants and ExpireMode (schema/goblin.xml)
SET, SETNX, SETEX, PSETEX = 0, 1, 2, 3
MODE_NONE, MODE_EX, MODE_PX, MODE_EXAT, MODE_PXAT, MODE_KEEPTTL, MODE_PERSIST = range(7)
INT64_MIN, INT64_MAX = -2 ** 63, 2 ** 63 - 1


def int64(value: int) -> bool:
    return INT64_MIN <= value <= INT64_MAX


def expire_option(ex: Any, px: Any, exat: Any, pxat: Any) -> tuple[int, int, list]:
    """The one expiry option of SET or GETEX: (mode, value, argv words); redis-py's checks."""
    given = [(MODE_EX, b"EX", ex, seconds_of), (MODE_PX, b"PX", px, milliseconds_of),
             (MODE_EXAT, b"EXAT", exat, unix_seconds_of), (MODE_PXAT, b"PXAT", pxat, unix_milliseconds_of)]
    chosen = [(mode, word, convert(value)) for mode, word, value, convert in given if value is not None]
    if len(chosen) > 1:
        from ..errors import DataError
        raise DataError("``ex``, ``px``, ``exat`` and ``pxat`` are mutually exclusive.")
    if not chosen:
        return MODE_NONE, 0, []
    mode, word, value = chosen[0]
    return mode, value, [word, encode(value)]


def parse_scan(reply: list) -> tuple[int, list]:
    cursor, keys = reply
    return int(cursor), keys


ENGINE_SEGMENTED, ENGINE_PMA = 1, 2   # ListEngine (schema/goblin.xml)
_ENGINE_PREFIX = {ENGINE_SEGMENTED: b"GOBLIN.SEG.", ENGINE_PMA: b"GOBLIN.PMA."}


class Commands:
    """The command methods. Subclasses provide _execute."""

    def _execute(self, template: int, argv: tuple, fields: dict,
                 convert: Callable[[Any], Any] | None = None) -> Any:  # pragma: no cover
        raise NotImplementedError

    # ---- connection and server ----

    def ping(self, message: Any = None) -> Any:
        if message is None:
            return self._execute(T.GR_T_PING, (b"PING",), {}, lambda r: r == b"PONG")
        value = encode(message)
        return self._execute(T.GR_T_PING, (b"PING", value), {"arg1": value})

    def echo(self, value: Any) -> bytes:
        return self._execute(T.GR_T_COMMAND, (b"ECHO", encode(value)), None)

    def info(self, section: str | None = None) -> dict:
        argv = (b"INFO",) if section is None else (b"INFO", encode(section))
        return self._execute(T.GR_T_COMMAND, argv, None, parse_info)

    def dbsize(self) -> int:
        return self._execute(T.GR_T_DBSIZE, (b"DBSIZE",), {})

    def flushdb(self, asynchronous: bool = False) -> bool:
        argv = (b"FLUSHDB", b"ASYNC") if asynchronous else (b"FLUSHDB",)
        return self._execute(T.GR_T_FLUSHDB, argv, {}, bool_ok)

    def flushall(self, asynchronous: bool = False) -> bool:
        argv = (b"FLUSHALL", b"ASYNC") if asynchronous else (b"FLUSHALL",)
        return self._execute(T.GR_T_FLUSHDB, argv, {"flag": 1}, bool_ok)

    def execute_command(self, *args: Any) -> Any:
        """Any command as argv (over the ring: a CommandRequest)."""
        return self._execute(T.GR_T_COMMAND, tuple(encode(a) for a in args), None)

    def memory_usage(self, key: Any, samples: int | None = None) -> int | None:
        k = encode(key)
        argv = (b"MEMORY", b"USAGE", k) if samples is None else (b"MEMORY", b"USAGE", k, b"SAMPLES", encode(samples))
        return self._execute(T.GR_T_MEMORYUSAGE, argv, {"key": k})

    def goblin_memory(self) -> dict:
        """GOBLIN.MEMORY: the allocator's totals, overall and per data type, in bytes."""
        def to_dict(reply: list) -> dict:
            return {reply[i].decode(): reply[i + 1] for i in range(0, len(reply), 2)}
        return self._execute(T.GR_T_COMMAND, (b"GOBLIN.MEMORY",), None, to_dict)

    # ---- generic keys ----

    def delete(self, *names: Any) -> int:
        keys = [encode(n) for n in names]
        return self._execute(T.GR_T_DEL, (b"DEL", *keys), {"items": keys})

    def unlink(self, *names: Any) -> int:
        keys = [encode(n) for n in names]
        return self._execute(T.GR_T_DEL, (b"UNLINK", *keys), {"items": keys, "flag": 1})

    def exists(self, *names: Any) -> int:
        keys = [encode(n) for n in names]
        return self._execute(T.GR_T_EXISTS, (b"EXISTS", *keys), {"items": keys})

    def type(self, name: Any) -> bytes:
        k = encode(name)
        return self._execute(T.GR_T_TYPE, (b"TYPE", k), {"key": k})

    def keys(self, pattern: Any = "*") -> list:
        p = encode(pattern)
        return self._execute(T.GR_T_KEYS, (b"KEYS", p), {"arg1": p})

    def scan(self, cursor: int = 0, match: Any = None, count: int | None = None,
             _type: str | None = None) -> tuple[int, list]:
        argv: list = [b"SCAN", encode(cursor)]
        fields: dict = {"cursor": int(cursor)}
        if match is not None:
            argv += [b"MATCH", encode(match)]
            fields["arg1"] = encode(match)
        if count is not None:
            argv += [b"COUNT", encode(count)]
            fields["count"] = int(count)
        if _type is not None:
            argv += [b"TYPE", encode(_type)]
            fields["arg2"] = encode(_type)
        return self._execute(T.GR_T_SCAN, tuple(argv), fields, parse_scan)

    def scan_iter(self, match: Any = None, count: int | None = None, _type: str | None = None) -> Iterator[bytes]:
        cursor = None
        while cursor != 0:
            cursor, keys = self.scan(cursor or 0, match=match, count=count, _type=_type)
            yield from keys

    def rename(self, src: Any, dst: Any) -> bool:
        s, d = encode(src), encode(dst)
        return self._execute(T.GR_T_RENAME, (b"RENAME", s, d), {"key": s, "arg1": d}, bool_ok)

    # ---- strings ----

    def set(self, name: Any, value: Any, ex: Any = None, px: Any = None, nx: bool = False, xx: bool = False,
            keepttl: bool = False, get: bool = False, exat: Any = None, pxat: Any = None) -> Any:
        """SET; True (or None when NX/XX stopped it), or with get=True the old value."""
        k, v = encode(name), encode(value)
        mode, expire_value, words = expire_option(ex, px, exat, pxat)
        if keepttl:
            if words:
                from ..errors import DataError
                raise DataError("``keepttl`` can't be combined with ``ex``, ``px``, ``exat`` or ``pxat``.")
            mode, words = MODE_KEEPTTL, [b"KEEPTTL"]
        if nx and xx:
            from ..errors import DataError
            raise DataError("``nx`` and ``xx`` are mutually exclusive.")
        argv = [b"SET", k, v, *words]
        if nx:
            argv.append(b"NX")
        if xx:
            argv.append(b"XX")
        if get:
            argv.append(b"GET")
        fields = {"key": k, "arg1": v, "count": SET, "end": 1 if nx else 2 if xx else 0, "to_end": mode,
                  "flag": 1 if get else 0, "index": expire_value}
        if not int64(expire_value):
            fields = None   # let the server word the error
        convert = None if get else (lambda r: True if bool_ok(r) else None)
        return self._execute(T.GR_T_SET, tuple(argv), fields, convert)

    def setnx(self, name: Any, value: Any) -> bool:
        k, v = encode(name), encode(value)
        return self._execute(T.GR_T_SET, (b"SETNX", k, v), {"key": k, "arg1": v, "count": SETNX}, as_bool)

    def setex(self, name: Any, time: Any, value: Any) -> bool:
        k, v, t = encode(name), encode(value), seconds_of(time)
        fields = {"key": k, "arg1": v, "count": SETEX, "index": t} if int64(t) else None
        return self._execute(T.GR_T_SET, (b"SETEX", k, encode(t), v), fields, bool_ok)

    def psetex(self, name: Any, time_ms: Any, value: Any) -> bool:
        k, v, t = encode(name), encode(value), milliseconds_of(time_ms)
        fields = {"key": k, "arg1": v, "count": PSETEX, "index": t} if int64(t) else None
        return self._execute(T.GR_T_SET, (b"PSETEX", k, encode(t), v), fields, bool_ok)

    def get(self, name: Any) -> bytes | None:
        k = encode(name)
        return self._execute(T.GR_T_GET, (b"GET", k), {"key": k})

    def getdel(self, name: Any) -> bytes | None:
        k = encode(name)
        return self._execute(T.GR_T_GETDEL, (b"GETDEL", k), {"key": k})

    def getex(self, name: Any, ex: Any = None, px: Any = None, exat: Any = None, pxat: Any = None,
              persist: bool = False) -> bytes | None:
        k = encode(name)
        mode, expire_value, words = expire_option(ex, px, exat, pxat)
        if persist:
            if words:
                from ..errors import DataError
                raise DataError("``persist`` is an exclusive option, it can't be combined with an expiry.")
            mode, words = MODE_PERSIST, [b"PERSIST"]
        fields = {"key": k, "to_end": mode, "index": expire_value} if int64(expire_value) else None
        return self._execute(T.GR_T_GETEX, (b"GETEX", k, *words), fields)

    def _mset(self, word: bytes, only_if_none_exist: int, mapping: Mapping, convert) -> Any:
        items: list = []
        for key, value in mapping.items():
            items += [encode(key), encode(value)]
        return self._execute(T.GR_T_MSET, (word, *items), {"items": items, "flag": only_if_none_exist}, convert)

    def mset(self, mapping: Mapping) -> bool:
        return self._mset(b"MSET", 0, mapping, bool_ok)

    def msetnx(self, mapping: Mapping) -> bool:
        return self._mset(b"MSETNX", 1, mapping, as_bool)

    def mget(self, keys: Any, *args: Any) -> list:
        names = [keys] if isinstance(keys, (bytes, str, int, float)) else list(keys)
        items = [encode(k) for k in (*names, *args)]
        return self._execute(T.GR_T_MGET, (b"MGET", *items), {"items": items})

    def _incrby(self, word: bytes, name: Any, amount: int, decrement: bool) -> int:
        k = encode(name)
        typed = isinstance(amount, int) and int64(amount)   # else the server words the error, as for redis-py
        fields = {"key": k, "index": amount, "flag": 1 if decrement else 0} if typed else None
        return self._execute(T.GR_T_INCRBY, (word, k, encode(amount)), fields)

    def incr(self, name: Any, amount: int = 1) -> int:
        return self._incrby(b"INCRBY", name, amount, False)

    incrby = incr

    def decr(self, name: Any, amount: int = 1) -> int:
        return self._incrby(b"DECRBY", name, amount, True)

    decrby = decr

    def incrbyfloat(self, name: Any, amount: float = 1.0) -> float:
        k, a = encode(name), encode(amount)
        return self._execute(T.GR_T_INCRBYFLOAT, (b"INCRBYFLOAT", k, a), {"key": k, "arg1": a}, as_float)

    def append(self, key: Any, value: Any) -> int:
        k, v = encode(key), encode(value)
        return self._execute(T.GR_T_APPEND, (b"APPEND", k, v), {"key": k, "arg1": v})

    def strlen(self, name: Any) -> int:
        k = encode(name)
        return self._execute(T.GR_T_STRLEN, (b"STRLEN", k), {"key": k})

    def getrange(self, key: Any, start: int, end: int) -> bytes:
        k = encode(key)
        fields = {"key": k, "index": int(start), "index2": int(end)} if int64(start) and int64(end) else None
        return self._execute(T.GR_T_GETRANGE, (b"GETRANGE", k, encode(start), encode(end)), fields)

    def substr(self, name: Any, start: int, end: int = -1) -> bytes:
        return self.getrange(name, start, end)

    def setrange(self, name: Any, offset: int, value: Any) -> int:
        k, v = encode(name), encode(value)
        fields = {"key": k, "index": int(offset), "arg1": v} if int64(offset) else None
        return self._execute(T.GR_T_SETRANGE, (b"SETRANGE", k, encode(offset), v), fields)

    # ---- expiry ----

    def _expire(self, word: bytes, milliseconds: int, absolute: int, name: Any, value: int,
                nx: bool, xx: bool, gt: bool, lt: bool) -> bool:
        k = encode(name)
        argv = [word, k, encode(value)]
        for flag, option in ((nx, b"NX"), (xx, b"XX"), (gt, b"GT"), (lt, b"LT")):
            if flag:
                argv.append(option)
        conflicting = (nx and (xx or gt or lt)) or (gt and lt)
        if conflicting or not int64(value):
            return self._execute(T.GR_T_COMMAND, tuple(argv), None, as_bool)   # the server's error text
        condition = 1 if nx else 3 if gt else 5 if (lt and xx) else 4 if lt else 2 if xx else 0
        fields = {"key": k, "index": value, "to_end": milliseconds, "flag": absolute, "end": condition}
        return self._execute(T.GR_T_EXPIRE, tuple(argv), fields, as_bool)

    def expire(self, name: Any, time: Any, nx: bool = False, xx: bool = False, gt: bool = False,
               lt: bool = False) -> bool:
        return self._expire(b"EXPIRE", 0, 0, name, seconds_of(time), nx, xx, gt, lt)

    def pexpire(self, name: Any, time: Any, nx: bool = False, xx: bool = False, gt: bool = False,
                lt: bool = False) -> bool:
        return self._expire(b"PEXPIRE", 1, 0, name, milliseconds_of(time), nx, xx, gt, lt)

    def expireat(self, name: Any, when: Any, nx: bool = False, xx: bool = False, gt: bool = False,
                 lt: bool = False) -> bool:
        return self._expire(b"EXPIREAT", 0, 1, name, unix_seconds_of(when), nx, xx, gt, lt)

    def pexpireat(self, name: Any, when: Any, nx: bool = False, xx: bool = False, gt: bool = False,
                  lt: bool = False) -> bool:
        return self._expire(b"PEXPIREAT", 1, 1, name, unix_milliseconds_of(when), nx, xx, gt, lt)

    def _ttl(self, word: bytes, kind: int, name: Any) -> int:
        k = encode(name)
        return self._execute(T.GR_T_TTL, (word, k), {"key": k, "end": kind})

    def ttl(self, name: Any) -> int:
        return self._ttl(b"TTL", 0, name)

    def pttl(self, name: Any) -> int:
        return self._ttl(b"PTTL", 1, name)

    def expiretime(self, key: Any) -> int:
        return self._ttl(b"EXPIRETIME", 2, key)

    def pexpiretime(self, key: Any) -> int:
        return self._ttl(b"PEXPIRETIME", 3, key)

    def persist(self, name: Any) -> bool:
        k = encode(name)
        return self._execute(T.GR_T_PERSIST, (b"PERSIST", k), {"key": k}, as_bool)

    # ---- databases ----

    def select(self, index: int) -> bool:
        """SELECT for this connection (a pooled RESP client: for its one connection)."""
        fields = {"index": int(index)} if int64(int(index)) else None
        return self._execute(T.GR_T_SELECT, (b"SELECT", encode(index)), fields, bool_ok)

    def move(self, name: Any, db: int) -> bool:
        k = encode(name)
        fields = {"key": k, "index": int(db)} if int64(int(db)) else None
        return self._execute(T.GR_T_MOVE, (b"MOVE", k, encode(db)), fields, as_bool)

    def swapdb(self, first: int, second: int) -> bool:
        fields = {"index": int(first), "index2": int(second)} if int64(int(first)) and int64(int(second)) else None
        return self._execute(T.GR_T_SWAPDB, (b"SWAPDB", encode(first), encode(second)), fields, bool_ok)

    # ---- lists ----

    def _push(self, word: bytes, end: int, only_if_exists: int, name: Any, values: tuple) -> int:
        k = encode(name)
        items = [encode(v) for v in values]
        return self._execute(T.GR_T_PUSH, (word, k, *items),
                             {"key": k, "items": items, "end": end, "flag": only_if_exists})

    def lpush(self, name: Any, *values: Any) -> int:
        return self._push(b"LPUSH", LEFT, 0, name, values)

    def rpush(self, name: Any, *values: Any) -> int:
        return self._push(b"RPUSH", RIGHT, 0, name, values)

    def lpushx(self, name: Any, *values: Any) -> int:
        return self._push(b"LPUSHX", LEFT, 1, name, values)

    def rpushx(self, name: Any, *values: Any) -> int:
        return self._push(b"RPUSHX", RIGHT, 1, name, values)

    def _pop(self, word: bytes, end: int, name: Any, count: int | None) -> Any:
        k = encode(name)
        if count is None:
            return self._execute(T.GR_T_POP, (word, k), {"key": k, "end": end})
        if count < 0:
            # the server's own error text, as redis-py would see it
            return self._execute(T.GR_T_COMMAND, (word, k, encode(count)), None)
        return self._execute(T.GR_T_POP, (word, k, encode(count)),
                             {"key": k, "end": end, "flag": 1, "count": min(int(count), 2 ** 32 - 1)})

    def lpop(self, name: Any, count: int | None = None) -> Any:
        return self._pop(b"LPOP", LEFT, name, count)

    def rpop(self, name: Any, count: int | None = None) -> Any:
        return self._pop(b"RPOP", RIGHT, name, count)

    def llen(self, name: Any) -> int:
        k = encode(name)
        return self._execute(T.GR_T_LLEN, (b"LLEN", k), {"key": k})

    def lindex(self, name: Any, index: int) -> bytes | None:
        k = encode(name)
        return self._execute(T.GR_T_LINDEX, (b"LINDEX", k, encode(index)), {"key": k, "index": int(index)})

    def lrange(self, name: Any, start: int, end: int) -> list:
        k = encode(name)
        return self._execute(T.GR_T_LRANGE, (b"LRANGE", k, encode(start), encode(end)),
                             {"key": k, "index": int(start), "index2": int(end)})

    def lset(self, name: Any, index: int, value: Any) -> bool:
        k, v = encode(name), encode(value)
        return self._execute(T.GR_T_LSET, (b"LSET", k, encode(index), v),
                             {"key": k, "index": int(index), "arg1": v}, bool_ok)

    def linsert(self, name: Any, where: str, refvalue: Any, value: Any) -> int:
        k, pivot, v = encode(name), encode(refvalue), encode(value)
        upper = where.upper() if isinstance(where, str) else encode(where).decode().upper()
        if upper not in ("BEFORE", "AFTER"):
            return self._execute(T.GR_T_COMMAND, (b"LINSERT", k, encode(where), pivot, v), None)
        return self._execute(T.GR_T_LINSERT, (b"LINSERT", k, upper.encode(), pivot, v),
                             {"key": k, "flag": 0 if upper == "BEFORE" else 1, "arg1": pivot, "arg2": v})

    def lrem(self, name: Any, count: int, value: Any) -> int:
        k, v = encode(name), encode(value)
        return self._execute(T.GR_T_LREM, (b"LREM", k, encode(count), v), {"key": k, "index": int(count), "arg1": v})

    def ltrim(self, name: Any, start: int, end: int) -> bool:
        k = encode(name)
        return self._execute(T.GR_T_LTRIM, (b"LTRIM", k, encode(start), encode(end)),
                             {"key": k, "index": int(start), "index2": int(end)}, bool_ok)

    def lpos(self, name: Any, value: Any, rank: int | None = None, count: int | None = None,
             maxlen: int | None = None) -> Any:
        k, v = encode(name), encode(value)
        argv: list = [b"LPOS", k, v]
        if rank is not None:
            argv += [b"RANK", encode(rank)]
        if count is not None:
            argv += [b"COUNT", encode(count)]
        if maxlen is not None:
            argv += [b"MAXLEN", encode(maxlen)]
        typed_ok = (rank is None or (rank != 0 and -2 ** 63 < rank < 2 ** 63)) and \
            (count is None or 0 <= count < 2 ** 32) and (maxlen is None or 0 <= maxlen < 2 ** 32)
        if not typed_ok:   # let the server word the error
            return self._execute(T.GR_T_COMMAND, tuple(argv), None)
        fields = {"key": k, "arg1": v, "index": 1 if rank is None else int(rank),
                  "flag": 0 if count is None else 1, "count": count or 0, "max_len": maxlen or 0}
        return self._execute(T.GR_T_LPOS, tuple(argv), fields)

    def lmove(self, first_list: Any, second_list: Any, src: str = "LEFT", dest: str = "RIGHT") -> bytes | None:
        s, d = encode(first_list), encode(second_list)
        return self._execute(T.GR_T_LMOVE, (b"LMOVE", s, d, encode(src), encode(dest)),
                             {"key": s, "arg1": d, "end": end_of(src, "src"), "to_end": end_of(dest, "dest")})

    def rpoplpush(self, src: Any, dst: Any) -> bytes | None:
        s, d = encode(src), encode(dst)
        return self._execute(T.GR_T_LMOVE, (b"RPOPLPUSH", s, d), {"key": s, "arg1": d, "end": RIGHT, "to_end": LEFT})

    # ---- blocking: the timeout (seconds, float; 0 = forever) is the server's ----

    def _bpop(self, word: bytes, end: int, keys: Any, timeout: Any) -> tuple | None:
        names = [encode(k) for k in ([keys] if isinstance(keys, (str, bytes, bytearray, memoryview, int, float))
                                     else list(keys))]
        argv = (word, *names, encode(0 if timeout is None else timeout))
        seconds = blocking_timeout(timeout)
        if seconds is None or not names:      # the server words the error
            return self._execute(T.GR_T_COMMAND, argv, None, as_pair)
        return self._execute(T.GR_T_BPOP, argv, {"items": names, "end": end, "timeout": seconds}, as_pair)

    def blpop(self, keys: Any, timeout: Any = 0) -> tuple | None:
        """(key, value) from the first non-empty list, waiting up to timeout seconds; None on timeout."""
        return self._bpop(b"BLPOP", LEFT, keys, timeout)

    def brpop(self, keys: Any, timeout: Any = 0) -> tuple | None:
        return self._bpop(b"BRPOP", RIGHT, keys, timeout)

    def blmove(self, first_list: Any, second_list: Any, timeout: Any, src: str = "LEFT",
               dest: str = "RIGHT") -> bytes | None:
        s, d = encode(first_list), encode(second_list)
        argv = (b"BLMOVE", s, d, encode(src), encode(dest), encode(timeout))
        seconds = blocking_timeout(timeout)
        if seconds is None:
            return self._execute(T.GR_T_COMMAND, argv, None)
        return self._execute(T.GR_T_BLMOVE, argv, {"key": s, "arg1": d, "end": end_of(src, "src"),
                                                   "to_end": end_of(dest, "dest"), "timeout": seconds})

    def brpoplpush(self, src: Any, dst: Any, timeout: Any = 0) -> bytes | None:
        s, d = encode(src), encode(dst)
        argv = (b"BRPOPLPUSH", s, d, encode(0 if timeout is None else timeout))
        seconds = blocking_timeout(timeout)
        if seconds is None:
            return self._execute(T.GR_T_COMMAND, argv, None)
        return self._execute(T.GR_T_BLMOVE, argv, {"key": s, "arg1": d, "end": RIGHT, "to_end": LEFT,
                                                   "timeout": seconds})

    def blmpop(self, timeout: Any, numkeys: int, *args: Any, direction: str, count: int | None = 1) -> list | None:
        """[key, [values...]] from the first non-empty list, waiting up to timeout seconds; None on timeout."""
        keys = [encode(a) for a in args]
        argv: list = [b"BLMPOP", encode(timeout), encode(numkeys), *keys, encode(direction)]
        if count != 1 and count is not None:
            argv += [b"COUNT", encode(count)]
        seconds = blocking_timeout(timeout)
        if seconds is None or numkeys != len(keys) or not keys or (count is not None and not 0 < count < 2 ** 32):
            return self._execute(T.GR_T_COMMAND, tuple(argv), None)
        return self._execute(T.GR_T_BLMPOP, tuple(argv), {"items": keys, "end": end_of(direction),
                                                          "count": count or 1, "timeout": seconds})

    def lmpop(self, num_keys: int, *args: Any, direction: str, count: int | None = 1) -> list | None:
        keys = [encode(a) for a in args]
        argv: list = [b"LMPOP", encode(num_keys), *keys, encode(direction)]
        if count != 1 and count is not None:
            argv += [b"COUNT", encode(count)]
        if num_keys != len(keys) or not keys or (count is not None and not 0 < count < 2 ** 32):
            return self._execute(T.GR_T_COMMAND, tuple(argv), None)
        return self._execute(T.GR_T_LMPOP, tuple(argv),
                             {"items": keys, "end": end_of(direction), "count": count or 1})


class EngineView:
    """The list commands of `client`, aimed at one list engine (see the module docstring)."""

    def __init__(self, client: Commands, engine: int) -> None:
        self._client = client
        self._engine = engine
        self._prefix = _ENGINE_PREFIX[engine]

    def __repr__(self) -> str:
        return f"<{self._prefix.decode().rstrip('.').lower()} view of {self._client!r}>"

    def _execute(self, template: int, argv: tuple, fields: dict | None, convert=None) -> Any:
        argv = (self._prefix + argv[0], *argv[1:])
        if fields is not None:
            fields = {**fields, "engine": self._engine}
        return self._client._execute(template, argv, fields, convert)


LIST_METHODS = ("_push", "lpush", "rpush", "lpushx", "rpushx", "_pop", "lpop", "rpop", "llen", "lindex",
                "lrange", "lset", "linsert", "lrem", "ltrim", "lpos", "lmove", "rpoplpush", "lmpop",
                "_bpop", "blpop", "brpop", "blmove", "brpoplpush", "blmpop")
for _name in LIST_METHODS:
    setattr(EngineView, _name, getattr(Commands, _name))
Commands.pma = property(lambda self: EngineView(self, ENGINE_PMA),
                        doc="List commands on the PMA engine (GOBLIN.PMA.*)")
Commands.seg = property(lambda self: EngineView(self, ENGINE_SEGMENTED),
                        doc="List commands on the segmented engine (GOBLIN.SEG.*)")
