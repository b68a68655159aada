"""persistence.py — PersistenceCommands: SAVE, BGSAVE, LASTSAVE, SHUTDOWN, WAITAOF and DEBUG DIGEST /
DIGEST-VALUE (redis-py's names and return types where it has them), written once for both
transports (see core.py). The server side is native/commands/cmd_persistence.c."""

from __future__ import annotations

import datetime
from typing import Any

from .core import CommandsCore, bool_ok, encode


class PersistenceCommands(CommandsCore):

    def save(self) -> bool:
        """Write the snapshot now (the server serves nothing else meanwhile)."""
        return self._execute((b"SAVE",), bool_ok)

    def bgsave(self, schedule: bool = False) -> bool:
        """Write the snapshot from a forked child while the server serves on; True when it
        started (or, with schedule, was scheduled behind another child)."""
        return self._execute((b"BGSAVE", b"SCHEDULE") if schedule else (b"BGSAVE",), lambda reply: True)

    def lastsave(self) -> datetime.datetime:
        """When the last successful save finished (the server's start when none has)."""
        return self._execute((b"LASTSAVE",), datetime.datetime.fromtimestamp)

    def shutdown(self, save: bool = False, nosave: bool = False, now: bool = False, force: bool = False) -> None:
        """Stop the server, saving first as its save rules say (or as save/nosave say). The
        server closes the connection without a reply: the ConnectionError that follows is
        the success; a reply means it refused (raised as ResponseError)."""
        from ...errors import ConnectionError as GoblinConnectionError

        argv = [b"SHUTDOWN"] + [word for flag, word in ((save, b"SAVE"), (nosave, b"NOSAVE"), (now, b"NOW"),
                                                      (force, b"FORCE")) if flag]
        try:
            self._execute(tuple(argv))
        except (GoblinConnectionError, OSError, EOFError):
            return None
        raise RuntimeError("SHUTDOWN seems to have failed.")

    def waitaof(self, num_local: int, num_replicas: int, timeout: int) -> list[int]:
        """WAITAOF: wait (timeout in milliseconds, 0 forever) until this connection's writes are
        fsynced to the append-only file; [local acknowledgements, replica acknowledgements]
        (goblin has no replicas: the second is 0, and asking for one waits out the timeout)."""
        return self._execute((b"WAITAOF", encode(num_local), encode(num_replicas), encode(timeout)))

    def debug_digest(self) -> str:
        """DEBUG DIGEST: 40 hex digits over every database's keys, values and expiries; equal
        data gives the equal digest on goblin and on redis-server."""
        return _text(self._execute((b"DEBUG", b"DIGEST")))

    def debug_digest_value(self, *keys: Any) -> list[str]:
        """DEBUG DIGEST-VALUE: each key's value digest (all zeros for a missing key)."""
        return [_text(d) for d in self._execute((b"DEBUG", b"DIGEST-VALUE", *map(encode, keys)))]


def _text(reply: Any) -> str:
    return reply.decode() if isinstance(reply, bytes) else reply
