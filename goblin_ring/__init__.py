"""goblin-ring: a Redis-compatible data server and typed client for co-located processes.

The fast path is a pair of shared-memory SPSC rings per session carrying SBE messages; the
compatibility path is RESP over TCP. See README.md and ARCHITECTURE.md.
"""

from ._version import __version__
from .errors import (
    CodecError, ConnectionError, DataError, GoblinError, MessageTooLargeError, ProtocolError,
    ResponseError, RingFullError, TimeoutError, WrongTypeError,
)

from .client import RespClient, RingClient, connect  # noqa: E402

__all__ = ["RespClient", "RingClient", "connect",
           
    "__version__", "CodecError", "ConnectionError", "DataError", "GoblinError", "MessageTooLargeError",
    "ProtocolError", "ResponseError", "RingFullError", "TimeoutError", "WrongTypeError",
]
