"""errors.py — goblin-ring's exception tree, shared by both transports.

GoblinError is the root and is never raised itself. Server replies become ResponseError
(or a subclass picked by the reply's error code); transport trouble becomes
RingFullError, TimeoutError or ConnectionError. ERROR_CLASSES maps the schema's ErrorCode
numbers (native/exec/reply.h, schema/goblin.xml) to classes for both transports.
"""

from __future__ import annotations


class GoblinError(Exception):
    """Root of every goblin-ring error."""


class ResponseError(GoblinError):
    """The server answered with an error reply."""

    def __init__(self, message: str, code: int = 1):
        super().__init__(message)
        self.code = code


class WrongTypeError(ResponseError):
    """WRONGTYPE: the key holds another kind of value."""


class NoScriptError(ResponseError):
    """NOSCRIPT: EVALSHA of a script the server does not have (redis-py's NoScriptError)."""


class WatchError(GoblinError):
    """A transaction's EXEC found a WATCHed key touched and ran nothing (redis-py's WatchError)."""


class PubSubError(GoblinError):
    """A PubSub object used wrongly (redis-py's PubSubError): run_in_thread with a subscription
    that has no handler, a subscribe with no names."""


class DataError(GoblinError):
    """Arguments the client refuses before sending (redis-py's DataError), e.g. both nx and xx."""


class ProtocolError(GoblinError):
    """A frame or message the other side could not parse."""


class CodecError(ProtocolError):
    """An SBE message failed to encode or decode; .status is the gr_codec_status_t."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


class ConnectionError(GoblinError):  # noqa: A001 - deliberate, like redis-py's
    """The peer is gone or could not be reached."""


class AuthenticationError(ConnectionError):
    """The server refused the credentials (WRONGPASS), as redis-py's AuthenticationError."""


class TimeoutError(GoblinError):  # noqa: A001
    """A wait ran out of time."""


class RingFullError(GoblinError):
    """The request ring had no room for the message."""


class MessageTooLargeError(GoblinError):
    """A message larger than the ring's maximum (capacity / 8); never truncated."""


class StaleBuildError(ImportError):
    """The compiled extension does not match this source tree."""


ERROR_CLASSES: dict[int, type[ResponseError]] = {2: WrongTypeError}


def error_from_reply(message: str, code: int | None = None) -> ResponseError:
    """Build the exception for an error reply, by code (ring) or by text prefix (RESP)."""
    if code is None:
        code = 2 if message.startswith("WRONGTYPE") else 1
    if message.startswith("NOSCRIPT "):
        return NoScriptError(message, code)
    return ERROR_CLASSES.get(code, ResponseError)(message, code)
