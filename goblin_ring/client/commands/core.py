"""core.py — what every command group shares: the transport hook and redis-py's conversions.

A command method builds its Redis argv (bytes) and says how to convert the reply; a
transport implements `_execute(argv, convert)`. RespClient sends the argv as RESP;
RingClient hands it to C in one call, where native/client/client.c builds, validates and
encodes the typed SBE request (gr_request_from_argv, the same function the RESP path uses),
so no argument is validated here: Python keeps only redis-py's argument conversion
(bytes/str/number encoding, timedelta and datetime, keyword flags to words) and redis-py's
own client-side DataErrors. Nothing here needs the compiled extension.
"""

from __future__ import annotations

import datetime
from typing import Any, Callable

from ...errors import DataError, ResponseError

Convert = Callable[[Any], Any] | None


def encode(value: Any) -> bytes:
    """redis-py's rules: bytes as they are, str as UTF-8, numbers as their decimal text."""
    kind = type(value)
    if kind is bytes:
        return value
    if kind is str:
        return value.encode()
    if kind is int:
        return b"%d" % value
    if isinstance(value, bool):
        raise DataError("Invalid input of type: 'bool'. Convert to a bytes, string, int or float first.")
    if isinstance(value, bytes):
        return bytes(value)
    if isinstance(value, str):
        return str.encode(value)
    if isinstance(value, int):
        return b"%d" % value
    if isinstance(value, float):
        return repr(float(value)).encode()
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    raise DataError(f"Invalid input of type: '{type(value).__name__}'. "
                    "Convert to a bytes, string, int or float first.")


def encode_values(values: tuple) -> tuple:
    """A command's variadic values, encoded. When every one is already bytes-like (the common
    case for a batch of values) they pass through as they are, checked at C speed by one
    join; bytearray and memoryview values are then sent as their bytes by either transport."""
    try:
        b"".join(values)
    except TypeError:
        return tuple(map(encode, values))
    return values


def keys_of(keys: Any, args: tuple = ()) -> list[bytes]:
    """redis-py's list_or_args: one key or an iterable of keys, then any more; encoded."""
    kind = type(keys)
    if kind is list or kind is tuple:
        names = keys
    elif isinstance(keys, (bytes, str, bytearray, memoryview, int, float)):
        names = (keys,)
    else:
        names = list(keys)
    if args:
        names = (*names, *args)
    return [k if type(k) is bytes else encode(k) for k in names]


def seconds_of(value: Any) -> int:
    """redis-py accepts a timedelta wherever it takes seconds."""
    if isinstance(value, datetime.timedelta):
        return int(value.total_seconds())
    return value


def milliseconds_of(value: Any) -> int:
    if isinstance(value, datetime.timedelta):
        return int(value.total_seconds() * 1000)
    return value


def unix_seconds_of(value: Any) -> int:
    """... and a datetime wherever it takes a unix time."""
    if isinstance(value, datetime.datetime):
        return int(value.timestamp())
    return value


def unix_milliseconds_of(value: Any) -> int:
    if isinstance(value, datetime.datetime):
        return int(value.timestamp() * 1000)
    return value


def timeout_of(value: Any) -> Any:
    """A blocking command's timeout: None is 0 (forever), a timedelta its seconds."""
    if value is None:
        return 0
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    return value


# ---- reply conversions ----

def bool_ok(reply: Any) -> bool:
    return reply == b"OK" or reply == "OK"


def as_bool(reply: Any) -> bool:
    return bool(reply)


def as_float(reply: Any) -> float:
    return float(reply)


def as_pair(reply: Any) -> tuple | None:
    """BLPOP/BRPOP: redis-py's (key, value) tuple, or None on timeout."""
    return tuple(reply) if reply else None


def parse_scan(reply: list) -> tuple[int, list]:
    cursor, keys = reply
    return int(cursor), keys


def parse_info(reply: bytes) -> dict:
    """INFO's text as redis-py returns it: a dict of field -> int, float or str, and a dict for
    a value of k=v pairs (db0, cmdstat_*, errorstat_*)."""
    info: dict[str, Any] = {}
    for line in reply.decode(errors="replace").splitlines():
        if not line or line.startswith("#") or ":" not in line:
            continue
        key, _, value = line.partition(":")
        if "=" in value and ("," in value or key.startswith(("db", "errorstat_"))):
            info[key] = {k: _number(v) for k, _, v in (p.rpartition("=") for p in value.split(","))}
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
    for value in results:
        if isinstance(value, ResponseError):
            raise value
    return results


class CommandsCore:
    """The one hook a transport implements; the command groups call only this."""

    def _execute(self, argv: tuple, convert: Convert = None) -> Any:  # pragma: no cover
        raise NotImplementedError
