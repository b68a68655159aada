"""arrays.py — ArrayCommands: Redis 8.8's 18 AR* commands (sparse arrays indexed 0 .. 2^64-2)
and Redis 8.10's ARAGG (with ARGREP's RANGE predicate),
written once for both transports (see core.py), with redis-py 8's method names (arset, arget,
armset, ...) and redis-py 8.2's signatures and reply shapes (armset takes {index: value},
arscan and argrep WITHVALUES give [[index, value], ...], arinfo a dict). The batch calls
armset_many / armget_many (numpy index columns, one C call each: native/client/client_array.c)
are RingClient's, as hset_many is.

Unsigned replies past 2^63-1 (ARLEN of an array holding index 2^64-2) arrive over the ring as
a bulk of digits (its integer reply is signed); the conversions here make them ints again.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ...errors import DataError
from .core import CommandsCore, encode, encode_values

GREP_PREDICATES = ("exact", "match", "glob", "re", "range")
AROP_OPERATIONS = ("SUM", "MIN", "MAX", "AND", "OR", "XOR", "MATCH", "USED")
ARAGG_OPERATIONS = ("SUM", "MIN", "MAX", "COUNT", "AVG", "AND", "OR", "XOR")


def _predicate_words(command: str, predicates: Sequence[tuple], combinator: Any, limit: int | None,
                     nocase: bool) -> list:
    """ARGREP's and ARAGG's predicate and option words: (type, pattern) for EXACT/MATCH/GLOB/RE,
    (RANGE, min, max) or (RANGE, min, max, True) for RANGE ... EXCLUSIVE."""
    words: list = []
    for predicate in predicates:
        kind, *operands = predicate
        word = _word(kind)
        name = word.lower().decode()
        if name not in GREP_PREDICATES:
            raise DataError(f"{command} predicate must be one of {GREP_PREDICATES}, not {kind!r}")
        if name == "range":
            if len(operands) not in (2, 3):
                raise DataError(f"{command} RANGE takes (RANGE, min, max[, exclusive]), not {predicate!r}")
            words += [word, encode(operands[0]), encode(operands[1])]
            if len(operands) == 3 and operands[2]:
                words.append(b"EXCLUSIVE")
        else:
            if len(operands) != 1:
                raise DataError(f"{command} {name.upper()} takes (type, pattern), not {predicate!r}")
            words += [word, encode(operands[0])]
    if combinator is not None:
        words.append(_word(combinator))
    if limit is not None:
        words += [b"LIMIT", encode(limit)]
    if nocase:
        words.append(b"NOCASE")
    return words


def as_unsigned(reply: Any) -> Any:
    """An integer reply that may come as digits (past 2^63-1 over the ring): an int; None stays."""
    if reply is None or type(reply) is int:
        return reply
    return int(reply)


def as_pairs(reply: list) -> list:
    """ARSCAN / ARGREP WITHVALUES: [[index, value], ...] (redis-py's shape), indexes as ints."""
    return [[as_unsigned(index), value] for index, value in reply]


def as_indexes(reply: list) -> list:
    return [as_unsigned(index) for index in reply]


def as_info(reply: Any) -> dict:
    """ARINFO's map (RESP3 map, RESP2/ring flat list) as {str: int | float}."""
    items = reply.items() if isinstance(reply, dict) else zip(reply[::2], reply[1::2])
    info = {}
    for name, value in items:
        if isinstance(value, (bytes, bytearray)):
            text = value.decode()
            value = int(text) if text.lstrip("-").isdigit() else float(text)
        info[name.decode() if isinstance(name, (bytes, bytearray)) else name] = value
    return info


def _word(value: Any) -> bytes:
    """An enum member of redis-py's (ArrayPredicateType.EXACT, ArrayAggregateOperations.SUM, ...)
    or a plain word, as the command's word."""
    value = getattr(value, "value", value)
    return value.upper().encode() if isinstance(value, str) else encode(value)


class ArrayCommands(CommandsCore):
    """The AR* commands (Redis 8.8's array type)."""

    # ---- writes ----

    def arset(self, name: Any, index: int, *values: Any) -> int:
        """ARSET: values at index, index + 1, ...; the number of slots that were empty."""
        if not values:
            raise DataError("ARSET requires at least one value")
        return self._execute((b"ARSET", encode(name), encode(index), *encode_values(values)))

    def armset(self, name: Any, mapping: Mapping[int, Any]) -> int:
        """ARMSET: {index: value, ...}; the slots that were empty."""
        pairs = list(mapping.items()) if mapping else []
        if not pairs:
            raise DataError("ARMSET requires at least one index/value pair")
        words: list = []
        for index, value in pairs:
            words += [encode(index), encode(value)]
        return self._execute((b"ARMSET", encode(name), *words))

    def ardel(self, name: Any, *indexes: int) -> int:
        """ARDEL: the slots deleted (the key goes when its last slot does)."""
        return self._execute((b"ARDEL", encode(name), *map(encode, indexes)))

    def ardelrange(self, name: Any, *ranges: tuple) -> int:
        """ARDELRANGE (start, end) [(start, end) ...]: the slots deleted (either order in a pair)."""
        if not ranges:
            raise DataError("ARDELRANGE requires at least one (start, end) range")
        words: list = []
        for low, high in ranges:
            words += [encode(low), encode(high)]
        return self._execute((b"ARDELRANGE", encode(name), *words), as_unsigned)

    def arinsert(self, name: Any, *values: Any) -> int:
        """ARINSERT: values after the append cursor; the last index written."""
        return self._execute((b"ARINSERT", encode(name), *encode_values(values)), as_unsigned)

    def arring(self, name: Any, size: int, *values: Any) -> int:
        """ARRING: values into a ring of size slots; the last index written."""
        return self._execute((b"ARRING", encode(name), encode(size), *encode_values(values)), as_unsigned)

    def arseek(self, name: Any, index: int) -> int:
        """ARSEEK: the next append goes to index; 1, or 0 when the key does not exist."""
        return self._execute((b"ARSEEK", encode(name), encode(index)))

    # ---- reads ----

    def arget(self, name: Any, index: int) -> bytes | None:
        return self._execute((b"ARGET", encode(name), encode(index)))

    def armget(self, name: Any, *indices: int) -> list:
        """ARMGET: bytes or None per index."""
        return self._execute((b"ARMGET", encode(name), *map(encode, indices)))

    def argetrange(self, name: Any, start: int, end: int) -> list:
        """ARGETRANGE: every position from start to end (reversed when start > end), None for holes."""
        return self._execute((b"ARGETRANGE", encode(name), encode(start), encode(end)))

    def arlen(self, name: Any) -> int:
        """ARLEN: the highest set index + 1."""
        return self._execute((b"ARLEN", encode(name)), as_unsigned)

    def arcount(self, name: Any) -> int:
        """ARCOUNT: the number of set slots."""
        return self._execute((b"ARCOUNT", encode(name)), as_unsigned)

    def arscan(self, name: Any, start: int, end: int, limit: int | None = None) -> list:
        """ARSCAN: [[index, value], ...] of the set slots from start to end (reversed when start > end)."""
        words = [b"LIMIT", encode(limit)] if limit is not None else []
        return self._execute((b"ARSCAN", encode(name), encode(start), encode(end), *words), as_pairs)

    def argrep(self, name: Any, start: Any, end: Any, predicates: Sequence[tuple], combinator: Any = None,
               limit: int | None = None, withvalues: bool = False, nocase: bool = False) -> list:
        """ARGREP: the indexes (withvalues: [[index, value], ...]) whose value passes the predicates,
        [(type, pattern), ...] with type EXACT/MATCH/GLOB/RE (redis-py's ArrayPredicateType or a
        word) or (RANGE, min, max[, exclusive]), combined by combinator AND/OR (the server's default: OR). start and end may be "-"
        and "+" (the first and last index)."""
        if not predicates:
            raise DataError("ARGREP requires at least one predicate")
        words = _predicate_words("ARGREP", predicates, combinator, limit, nocase)
        if withvalues:
            words.append(b"WITHVALUES")
        return self._execute((b"ARGREP", encode(name), encode(start), encode(end), *words),
                             as_pairs if withvalues else as_indexes)

    def arop(self, name: Any, start: int, end: int, operation: Any, value: Any = None) -> Any:
        """AROP: a bulk string for SUM/MIN/MAX, an integer for AND/OR/XOR/MATCH/USED, None when
        nothing in range counts (operation: redis-py's ArrayAggregateOperations or a word)."""
        words = [encode(value)] if value is not None else []
        return self._execute((b"AROP", encode(name), encode(start), encode(end), _word(operation), *words))

    def aragg(self, name: Any, start: Any, end: Any, operations: Sequence[Any], predicates: Sequence[tuple] = (),
              combinator: Any = None, limit: int | None = None, nocase: bool = False) -> list:
        """ARAGG: one reply per operation (SUM/MIN/MAX/COUNT/AVG/AND/OR/XOR), in order, over the
        values from start to end ("-"/"+" allowed) that pass the predicates (as argrep's; none:
        every value) and LIMIT: an int for COUNT/AND/OR/XOR, a bulk string for SUM/MIN/MAX/AVG,
        None when no value could be aggregated."""
        if isinstance(operations, (str, bytes)):
            operations = [operations]
        words = _predicate_words("ARAGG", predicates, combinator, limit, nocase)
        ops = [_word(op) for op in operations]
        return self._execute((b"ARAGG", encode(name), encode(start), encode(end), *words, b"AGGREGATE", *ops))

    def arnext(self, name: Any) -> int | None:
        """ARNEXT: where the next append goes (None when the index space is used up)."""
        return self._execute((b"ARNEXT", encode(name)), as_unsigned)

    def arlastitems(self, name: Any, count: int, rev: bool = False) -> list:
        """ARLASTITEMS: the count newest positions up to the append cursor, oldest first (rev: newest first)."""
        return self._execute((b"ARLASTITEMS", encode(name), encode(count), *((b"REV",) if rev else ())))

    def arinfo(self, name: Any, full: bool = False) -> dict:
        """ARINFO [FULL]: count, len, next-insert-index and the engine's layout figures."""
        return self._execute((b"ARINFO", encode(name), *((b"FULL",) if full else ())), as_info)
