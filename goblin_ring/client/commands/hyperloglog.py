"""hyperloglog.py — HyperLogLogCommands: PFADD, PFCOUNT and PFMERGE with redis-py's names,
signatures and return types, written once for both transports (see core.py).

    r.pfadd("visitors", "alice", "bob")      # 1: a register changed (or the key was made)
    r.pfcount("visitors", "visitors:eu")     # the approximate size of their union
    r.pfmerge("all", "visitors", "other")    # True
"""

from __future__ import annotations

from typing import Any

from .core import CommandsCore, bool_ok, encode


class HyperLogLogCommands(CommandsCore):
    def pfadd(self, name: Any, *values: Any) -> int:
        """Add values to the HyperLogLog at name (made when missing); 1 when its estimate may
        have changed, else 0."""
        return self._execute((b"PFADD", encode(name), *(encode(v) for v in values)))

    def pfcount(self, *sources: Any) -> int:
        """The approximate number of distinct values added to one HyperLogLog, or to the union
        of several."""
        return self._execute((b"PFCOUNT", *(encode(s) for s in sources)))

    def pfmerge(self, dest: Any, *sources: Any) -> bool:
        """Merge the sources into dest (dest's own registers included); True."""
        return self._execute((b"PFMERGE", encode(dest), *(encode(s) for s in sources)), bool_ok)
