"""server.py — ServerCommands: connection, server and database commands (redis-py's
ManagementCommands), written once for both transports (see core.py)."""

from __future__ import annotations

from typing import Any

from .core import CommandsCore, bool_ok, encode, parse_info


class ServerCommands(CommandsCore):

    def ping(self, message: Any = None) -> Any:
        """True for PONG; with a message, the message back."""
        if message is None:
            return self._execute((b"PING",), _is_pong)
        return self._execute((b"PING", encode(message)))

    def echo(self, value: Any) -> bytes:
        return self._execute((b"ECHO", encode(value)))

    def info(self, section: str | None = None) -> dict:
        argv = (b"INFO",) if section is None else (b"INFO", encode(section))
        return self._execute(argv, parse_info)

    def dbsize(self) -> int:
        return self._execute((b"DBSIZE",))

    def flushdb(self, asynchronous: bool = False) -> bool:
        return self._execute((b"FLUSHDB", b"ASYNC") if asynchronous else (b"FLUSHDB",), bool_ok)

    def flushall(self, asynchronous: bool = False) -> bool:
        return self._execute((b"FLUSHALL", b"ASYNC") if asynchronous else (b"FLUSHALL",), bool_ok)

    def execute_command(self, *args: Any) -> Any:
        """Any command as argv, its reply unconverted."""
        return self._execute(tuple(encode(a) for a in args))

    def watch(self, *names: Any) -> bool:
        """WATCH keys for this connection's next transaction (a pipeline(transaction=True))."""
        return self._execute((b"WATCH", *map(encode, names)), bool_ok)

    def unwatch(self) -> bool:
        return self._execute((b"UNWATCH",), bool_ok)

    def memory_usage(self, key: Any, samples: int | None = None) -> int | None:
        argv = (b"MEMORY", b"USAGE", encode(key))
        return self._execute(argv if samples is None else (*argv, b"SAMPLES", encode(samples)))

    def goblin_memory(self) -> dict:
        """GOBLIN.MEMORY: the allocator's totals, overall and per data type, in bytes."""
        return self._execute((b"GOBLIN.MEMORY",), _pairs_to_dict)

    def select(self, index: int) -> bool:
        """SELECT for this connection (a pooled RESP client: for its one connection)."""
        return self._execute((b"SELECT", encode(index)), bool_ok)

    def swapdb(self, first: int, second: int) -> bool:
        return self._execute((b"SWAPDB", encode(first), encode(second)), bool_ok)

    # ---- configuration and the append-only log ----
    def config_get(self, pattern: str = "*") -> dict:
        """CONFIG GET: {name: value} as str, as redis-py gives."""
        return self._execute((b"CONFIG", b"GET", encode(pattern)), _config_dict)

    def config_set(self, name: str, value: Any) -> bool:
        return self._execute((b"CONFIG", b"SET", encode(name), encode(value)), bool_ok)

    def bgrewriteaof(self) -> bool:
        """BGREWRITEAOF: True once the rewrite started or was scheduled."""
        return self._execute((b"BGREWRITEAOF",), lambda reply: True)


def _is_pong(reply: Any) -> bool:
    return reply == b"PONG"


def _pairs_to_dict(reply: list) -> dict:
    return {reply[i].decode(): reply[i + 1] for i in range(0, len(reply), 2)}


def _config_dict(reply: Any) -> dict:
    items = list(reply.items()) if isinstance(reply, dict) else [(reply[i], reply[i + 1]) for i in range(0, len(reply), 2)]
    return {k.decode() if isinstance(k, bytes) else k: v.decode() if isinstance(v, bytes) else v for k, v in items}
