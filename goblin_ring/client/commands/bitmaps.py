"""bitmaps.py — BitmapCommands: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD and
BITFIELD_RO with redis-py's names, signatures and return types, written once for both
transports (see core.py); and BitFieldOperation, redis-py's builder that `bitfield()` returns.

    r.setbit("b", 7, 1)                                    # 0: the bit it held
    r.bitcount("b", 0, -1, mode="BIT")                     # 1
    r.bitfield("b").set("u8", 0, 255).incrby("i4", "#1", 3, overflow="SAT").get("u8", 0).execute()
"""

from __future__ import annotations

from typing import Any

from ...errors import DataError
from .core import CommandsCore, encode, keys_of


class BitFieldOperation:
    """redis-py's BITFIELD builder: chain get/set/incrby/overflow, then execute() runs them as
    one BITFIELD and returns its list (on a pipeline, execute() queues it). An OVERFLOW word
    is sent only when the mode changes from the last one sent (WRAP, Redis's default, at
    first), as redis-py does."""

    def __init__(self, client: Any, key: Any, default_overflow: str | None = None):
        self.client = client
        self.key = key
        self._default_overflow = default_overflow
        self.operations: list[tuple] = []
        self._last_overflow = "WRAP"
        self.reset()

    def reset(self) -> None:
        """Forget the queued operations (execute() does this after sending them)."""
        self.operations = []
        self._last_overflow = "WRAP"
        self.overflow(self._default_overflow or self._last_overflow)

    def overflow(self, overflow: str) -> "BitFieldOperation":
        """How later INCRBY and SET operations handle overflow: WRAP, SAT or FAIL."""
        overflow = overflow.upper()
        if overflow != self._last_overflow:
            self._last_overflow = overflow
            self.operations.append(("OVERFLOW", overflow))
        return self

    def incrby(self, fmt: str, offset: Any, increment: int, overflow: str | None = None) -> "BitFieldOperation":
        """Add increment to the field of type fmt ("u8", "i5") at offset (bits, or "#N" for N
        fields of that width); the reply element is the new value (None if FAIL refused it)."""
        if overflow is not None:
            self.overflow(overflow)
        self.operations.append(("INCRBY", fmt, offset, increment))
        return self

    def get(self, fmt: str, offset: Any) -> "BitFieldOperation":
        self.operations.append(("GET", fmt, offset))
        return self

    def set(self, fmt: str, offset: Any, value: int) -> "BitFieldOperation":
        """Store value; the reply element is the old value."""
        self.operations.append(("SET", fmt, offset, value))
        return self

    @property
    def command(self) -> list:
        command: list = ["BITFIELD", self.key]
        for operation in self.operations:
            command.extend(operation)
        return command

    def execute(self) -> Any:
        command = self.command
        self.reset()
        return self.client._execute(tuple(encode(word) for word in command))


class BitmapCommands(CommandsCore):

    def setbit(self, name: Any, offset: int, value: int) -> int:
        """Set (any true value) or clear the bit; returns the bit it held."""
        return self._execute((b"SETBIT", encode(name), encode(offset), b"1" if value else b"0"))

    def getbit(self, name: Any, offset: int) -> int:
        return self._execute((b"GETBIT", encode(name), encode(offset)))

    def bitcount(self, key: Any, start: int | None = None, end: int | None = None, mode: str | None = None) -> int:
        """Set bits in the string, or within [start, end] in bytes (mode "BYTE") or bits ("BIT")."""
        argv = [b"BITCOUNT", encode(key)]
        if start is not None and end is not None:
            argv += [encode(start), encode(end)]
        elif start is not None or end is not None:
            raise DataError("Both start and end must be specified")
        if mode is not None:
            argv.append(encode(mode))
        return self._execute(tuple(argv))

    def bitpos(self, key: Any, bit: int, start: int | None = None, end: int | None = None,
               mode: str | None = None) -> int:
        """Position of the first bit equal to bit (0 or 1), optionally from start to end."""
        if bit not in (0, 1):
            raise DataError("bit must be 0 or 1")
        argv = [b"BITPOS", encode(key), encode(bit)]
        if start is not None:
            argv.append(encode(start))
        if start is not None and end is not None:
            argv.append(encode(end))
        elif start is None and end is not None:
            raise DataError("start argument is not set, when end is specified")
        if mode is not None:
            argv.append(encode(mode))
        return self._execute(tuple(argv))

    def bitop(self, operation: str, dest: Any, *keys: Any) -> int:
        """AND, OR, XOR (of keys) or NOT (of one key) into dest; returns dest's length."""
        return self._execute((b"BITOP", encode(operation), encode(dest), *keys_of(keys)))

    def bitfield(self, key: Any, default_overflow: str | None = None) -> BitFieldOperation:
        """A builder for one BITFIELD command on key (redis-py's BitFieldOperation)."""
        return BitFieldOperation(self, key, default_overflow=default_overflow)

    def bitfield_ro(self, key: Any, encoding: str, offset: Any, items: list | None = None) -> list:
        """BITFIELD_RO: the field (encoding, offset), then each (encoding, offset) of items."""
        argv = [b"BITFIELD_RO", encode(key), b"GET", encode(encoding), encode(offset)]
        for item_encoding, item_offset in items or []:
            argv += [b"GET", encode(item_encoding), encode(item_offset)]
        return self._execute(tuple(argv))
