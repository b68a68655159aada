"""sortedsets.py — SortedSetCommands: the sorted-set commands (redis-py's SortedSetCommands:
names, signatures and return types: scores as float, WITHSCORES replies as lists of
(member, score) tuples), written once for both transports (see core.py).
"""

from __future__ import annotations

from typing import Any, Callable, Iterator, Mapping, Sequence

from ...errors import DataError
from .core import CommandsCore, bool_ok, encode, encode_values, keys_of, timeout_of


def as_score(reply: Any) -> float | None:
    return None if reply is None else float(reply)


def score_pairs(reply: Any, cast: Callable = float) -> list:
    """A WITHSCORES reply (flat over RESP2 and the ring, pairs over RESP3) as (member, score) tuples."""
    if not reply:
        return []
    if isinstance(reply[0], list):
        return [(member, cast(score)) for member, score in reply]
    return [(member, cast(score)) for member, score in zip(reply[::2], reply[1::2])]


def _range_words(byscore: bool, bylex: bool, desc: bool, offset: Any, num: Any, withscores: bool) -> list:
    if byscore and bylex:
        raise DataError("``byscore`` and ``bylex`` can not be specified together.")
    if (offset is not None and num is None) or (num is not None and offset is None):
        raise DataError("``offset`` and ``num`` must both be specified.")
    if bylex and withscores:
        raise DataError("``withscores`` not supported in combination with ``bylex``.")
    words: list = []
    if byscore:
        words.append(b"BYSCORE")
    if bylex:
        words.append(b"BYLEX")
    if desc:
        words.append(b"REV")
    if offset is not None:
        words += [b"LIMIT", encode(offset), encode(num)]
    if withscores:
        words.append(b"WITHSCORES")
    return words


def _limit(start: Any, num: Any) -> list:
    if (start is not None and num is None) or (num is not None and start is None):
        raise DataError("``start`` and ``num`` must both be specified")
    return [] if start is None else [b"LIMIT", encode(start), encode(num)]


def _keys_and_weights(keys: Any) -> tuple[list, list]:
    """redis-py's _zaggregate: keys as a sequence, or a mapping of key -> weight."""
    if isinstance(keys, Mapping):
        return [encode(k) for k in keys], [b"WEIGHTS", *(encode(w) for w in keys.values())]
    return [encode(k) for k in keys], []


def _blocking_pop(reply: Any) -> tuple | None:
    return None if not reply else (reply[0], reply[1], float(reply[2]))


def _pops(reply: Any) -> list:
    return score_pairs(reply)


class SortedSetCommands(CommandsCore):

    def zadd(self, name: Any, mapping: Mapping, nx: bool = False, xx: bool = False, ch: bool = False,
             incr: bool = False, gt: bool = False, lt: bool = False) -> Any:
        if not mapping:
            raise DataError("ZADD requires at least one element/score pair")
        if nx and xx:
            raise DataError("ZADD allows either 'nx' or 'xx', not both")
        if gt and lt:
            raise DataError("ZADD allows either 'gt' or 'lt', not both")
        if incr and len(mapping) != 1:
            raise DataError("ZADD option 'incr' only works when passing a single element/score pair")
        if nx and (gt or lt):
            raise DataError("Only one of 'nx', 'lt', or 'gr' may be defined.")
        argv: list = [b"ZADD", encode(name)]
        argv += [word for flag, word in ((nx, b"NX"), (xx, b"XX"), (gt, b"GT"), (lt, b"LT"), (ch, b"CH"),
                                         (incr, b"INCR")) if flag]
        for member, score in mapping.items():
            argv += [encode(score), encode(member)]
        return self._execute(tuple(argv), as_score if incr else None)

    def zincrby(self, name: Any, amount: float, value: Any) -> float:
        return self._execute((b"ZINCRBY", encode(name), encode(amount), encode(value)), as_score)

    def zscore(self, name: Any, value: Any) -> float | None:
        return self._execute((b"ZSCORE", encode(name), encode(value)), as_score)

    def zmscore(self, key: Any, members: Sequence) -> list:
        if not members:
            raise DataError("ZMSCORE members must be a non-empty list")
        return self._execute((b"ZMSCORE", encode(key), *encode_values(tuple(members))),
                             lambda reply: [as_score(r) for r in reply])

    def zcard(self, name: Any) -> int:
        return self._execute((b"ZCARD", encode(name)))

    def zcount(self, name: Any, min: Any, max: Any) -> int:
        return self._execute((b"ZCOUNT", encode(name), encode(min), encode(max)))

    def zlexcount(self, name: Any, min: Any, max: Any) -> int:
        return self._execute((b"ZLEXCOUNT", encode(name), encode(min), encode(max)))

    def _zrank(self, command: bytes, name: Any, value: Any, withscore: bool) -> Any:
        argv: list = [command, encode(name), encode(value)]
        if withscore:
            argv.append(b"WITHSCORE")
            return self._execute(tuple(argv), lambda r: None if r is None else [r[0], float(r[1])])
        return self._execute(tuple(argv))

    def zrank(self, name: Any, value: Any, withscore: bool = False) -> Any:
        return self._zrank(b"ZRANK", name, value, withscore)

    def zrevrank(self, name: Any, value: Any, withscore: bool = False) -> Any:
        return self._zrank(b"ZREVRANK", name, value, withscore)

    def zrange(self, name: Any, start: Any, end: Any, desc: bool = False, withscores: bool = False,
               score_cast_func: Callable = float, byscore: bool = False, bylex: bool = False,
               offset: Any = None, num: Any = None) -> list:
        words = _range_words(byscore, bylex, desc, offset, num, withscores)
        convert = (lambda r: score_pairs(r, score_cast_func)) if withscores else None
        return self._execute((b"ZRANGE", encode(name), encode(start), encode(end), *words), convert)

    def zrangestore(self, dest: Any, name: Any, start: Any, end: Any, byscore: bool = False, bylex: bool = False,
                    desc: bool = False, offset: Any = None, num: Any = None) -> int:
        words = _range_words(byscore, bylex, desc, offset, num, False)
        return self._execute((b"ZRANGESTORE", encode(dest), encode(name), encode(start), encode(end), *words))

    def zrevrange(self, name: Any, start: int, end: int, withscores: bool = False,
                  score_cast_func: Callable = float) -> list:
        argv = (b"ZREVRANGE", encode(name), encode(start), encode(end), *([b"WITHSCORES"] if withscores else []))
        return self._execute(argv, (lambda r: score_pairs(r, score_cast_func)) if withscores else None)

    def zrangebyscore(self, name: Any, min: Any, max: Any, start: Any = None, num: Any = None,
                      withscores: bool = False, score_cast_func: Callable = float) -> list:
        argv = (b"ZRANGEBYSCORE", encode(name), encode(min), encode(max), *_limit(start, num),
                *([b"WITHSCORES"] if withscores else []))
        return self._execute(argv, (lambda r: score_pairs(r, score_cast_func)) if withscores else None)

    def zrevrangebyscore(self, name: Any, max: Any, min: Any, start: Any = None, num: Any = None,
                         withscores: bool = False, score_cast_func: Callable = float) -> list:
        argv = (b"ZREVRANGEBYSCORE", encode(name), encode(max), encode(min), *_limit(start, num),
                *([b"WITHSCORES"] if withscores else []))
        return self._execute(argv, (lambda r: score_pairs(r, score_cast_func)) if withscores else None)

    def zrangebylex(self, name: Any, min: Any, max: Any, start: Any = None, num: Any = None) -> list:
        return self._execute((b"ZRANGEBYLEX", encode(name), encode(min), encode(max), *_limit(start, num)))

    def zrevrangebylex(self, name: Any, max: Any, min: Any, start: Any = None, num: Any = None) -> list:
        return self._execute((b"ZREVRANGEBYLEX", encode(name), encode(max), encode(min), *_limit(start, num)))

    def zrem(self, name: Any, *values: Any) -> int:
        return self._execute((b"ZREM", encode(name), *encode_values(values)))

    def zremrangebyrank(self, name: Any, min: int, max: int) -> int:
        return self._execute((b"ZREMRANGEBYRANK", encode(name), encode(min), encode(max)))

    def zremrangebyscore(self, name: Any, min: Any, max: Any) -> int:
        return self._execute((b"ZREMRANGEBYSCORE", encode(name), encode(min), encode(max)))

    def zremrangebylex(self, name: Any, min: Any, max: Any) -> int:
        return self._execute((b"ZREMRANGEBYLEX", encode(name), encode(min), encode(max)))

    def zpopmin(self, name: Any, count: int | None = None) -> list:
        argv = (b"ZPOPMIN", encode(name), *([encode(count)] if count is not None else []))
        return self._execute(argv, _pops)

    def zpopmax(self, name: Any, count: int | None = None) -> list:
        argv = (b"ZPOPMAX", encode(name), *([encode(count)] if count is not None else []))
        return self._execute(argv, _pops)

    def zmpop(self, num_keys: int, keys: Sequence, min: bool = False, max: bool = False, count: int = 1) -> Any:
        if min == max:
            raise DataError("Either min or max must be set, not both")
        argv = (b"ZMPOP", encode(num_keys), *(encode(k) for k in keys), b"MIN" if min else b"MAX",
                b"COUNT", encode(count))
        return self._execute(argv, lambda r: None if r is None else [r[0], [[m, float(s)] for m, s in r[1]]])

    def zrandmember(self, key: Any, count: int | None = None, withscores: bool = False) -> Any:
        argv: list = [b"ZRANDMEMBER", encode(key)]
        if count is not None:
            argv.append(encode(count))
        if withscores:
            argv.append(b"WITHSCORES")
            return self._execute(tuple(argv), score_pairs)
        return self._execute(tuple(argv))

    def zscan(self, name: Any, cursor: int = 0, match: Any = None, count: int | None = None,
              score_cast_func: Callable = float) -> tuple[int, list]:
        argv: list = [b"ZSCAN", encode(name), encode(cursor)]
        if match is not None:
            argv += [b"MATCH", encode(match)]
        if count is not None:
            argv += [b"COUNT", encode(count)]
        return self._execute(tuple(argv), lambda r: (int(r[0]), score_pairs(r[1], score_cast_func)))

    def zscan_iter(self, name: Any, match: Any = None, count: int | None = None,
                   score_cast_func: Callable = float) -> Iterator:
        cursor = None
        while cursor != 0:
            cursor, data = self.zscan(name, cursor or 0, match=match, count=count, score_cast_func=score_cast_func)
            yield from data

    def _zaggregate(self, command: bytes, dest: Any, keys: Any, aggregate: Any = None, withscores: bool = False,
                    weights_allowed: bool = True) -> Any:
        names, weights = _keys_and_weights(keys)
        if weights and not weights_allowed:
            raise DataError(f"{command.decode()} takes no weights")
        argv: list = [command] + ([encode(dest)] if dest is not None else []) + [encode(len(names)), *names, *weights]
        if aggregate:
            argv += [b"AGGREGATE", encode(aggregate)]
        if withscores:
            argv.append(b"WITHSCORES")
            return self._execute(tuple(argv), score_pairs)
        return self._execute(tuple(argv))

    def zunion(self, keys: Any, aggregate: Any = None, withscores: bool = False) -> list:
        return self._zaggregate(b"ZUNION", None, keys, aggregate, withscores)

    def zunionstore(self, dest: Any, keys: Any, aggregate: Any = None) -> int:
        return self._zaggregate(b"ZUNIONSTORE", dest, keys, aggregate)

    def zinter(self, keys: Any, aggregate: Any = None, withscores: bool = False) -> list:
        return self._zaggregate(b"ZINTER", None, keys, aggregate, withscores)

    def zinterstore(self, dest: Any, keys: Any, aggregate: Any = None) -> int:
        return self._zaggregate(b"ZINTERSTORE", dest, keys, aggregate)

    def zdiff(self, keys: Any, withscores: bool = False) -> list:
        return self._zaggregate(b"ZDIFF", None, keys, None, withscores, weights_allowed=False)

    def zdiffstore(self, dest: Any, keys: Any) -> int:
        return self._zaggregate(b"ZDIFFSTORE", dest, keys, None, weights_allowed=False)

    def zintercard(self, numkeys: int, keys: Sequence, limit: int = 0) -> int:
        return self._execute((b"ZINTERCARD", encode(numkeys), *keys_of(keys), b"LIMIT", encode(limit)))

    # ---- blocking: the timeout (seconds, float; 0 = forever) is the server's ----

    def bzpopmin(self, keys: Any, timeout: Any = 0) -> tuple | None:
        """(key, member, score) from the first non-empty sorted set, waiting up to timeout
        seconds; None on timeout."""
        return self._execute((b"BZPOPMIN", *keys_of(keys), encode(timeout_of(timeout))), _blocking_pop)

    def bzpopmax(self, keys: Any, timeout: Any = 0) -> tuple | None:
        return self._execute((b"BZPOPMAX", *keys_of(keys), encode(timeout_of(timeout))), _blocking_pop)

    def bzmpop(self, timeout: float, numkeys: int, keys: Sequence, min: bool = False, max: bool = False,
               count: int = 1) -> Any:
        """[key, [[member, score]...]] from the first non-empty sorted set, waiting up to
        timeout seconds; None on timeout."""
        if min == max:
            raise DataError("Either min or max must be set, not both")
        argv = (b"BZMPOP", encode(timeout_of(timeout)), encode(numkeys), *(encode(k) for k in keys),
                b"MIN" if min else b"MAX", b"COUNT", encode(count))
        return self._execute(argv, lambda r: None if r is None else [r[0], [[m, float(s)] for m, s in r[1]]])

    # ---- goblin's own ----

    def zset_internals(self, name: Any) -> dict | None:
        """GOBLIN.ZSET.INTERNALS: the set's representation, OBJECT ENCODING, leaves, index and
        their bytes, as a dict of str -> str or int; None for a missing key."""
        def shape(reply: Any) -> dict | None:
            if reply is None:
                return None
            pairs = reply.items() if isinstance(reply, dict) else zip(reply[::2], reply[1::2])
            return {k.decode(): (v.decode() if isinstance(v, bytes) else v) for k, v in pairs}
        return self._execute((b"GOBLIN.ZSET.INTERNALS", encode(name)), shape)

    def zset_optimize(self, name: Any) -> int:
        """GOBLIN.OPTIMIZE: compact a sorted set after a bulk load; the allocated bytes released."""
        return self._execute((b"GOBLIN.OPTIMIZE", encode(name)))

    def zset_convert(self, name: Any, encoding: Any) -> bool:
        """GOBLIN.ZSET.CONVERT: rebuild the set at name in encoding "packed" or "standard"; True.
        ResponseError for a missing key, another encoding, or a set that does not fit packed
        (int32 decimal members, scores exact in float32): the set is then unchanged."""
        return self._execute((b"GOBLIN.ZSET.CONVERT", encode(name), encode(encoding)), bool_ok)
