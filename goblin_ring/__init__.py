"""goblin-ring: a Redis-compatible data server and typed client for co-located processes.

The fast path is a pair of shared-memory SPSC rings per session carrying SBE messages; the
compatibility path is RESP over TCP. See README.md and ARCHITECTURE.md.
"""

from ._version import __version__
from .errors import (
    AuthenticationError, CodecError, ConnectionError, DataError, GoblinError, MessageTooLargeError, NoScriptError, ProtocolError,
    ResponseError, RingFullError, TimeoutError, WatchError, WrongTypeError,
)

from .client import RespClient, connect  # noqa: E402
from .client.cache import CacheConfig  # noqa: E402


def __getattr__(name: str):
    """RingClient (and the native modules) load on first use, so RespClient works without the
    compiled extension; a missing or stale build raises StaleBuildError here."""
    if name == "RingClient":
        from .client.ring import RingClient
        return RingClient
    if name in ("_native", "selfcheck"):
        import importlib
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "CacheConfig", "RespClient", "RingClient", "connect", "__version__", "AuthenticationError", "CodecError", "ConnectionError", "DataError",
    "GoblinError", "MessageTooLargeError", "NoScriptError",
    "ProtocolError", "ResponseError", "RingFullError", "TimeoutError", "WatchError", "WrongTypeError",
]
