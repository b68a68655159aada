"""goblin_ring.client — RingClient (shared memory) and RespClient (TCP/UDS), one API.

RingClient is imported on first use: RespClient works without the compiled extension."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

from typing import Any

from .resp import RespClient, RespPipeline


def __getattr__(name: str) -> Any:
    if name in ("RingClient", "RingPipeline"):
        from . import ring
        return getattr(ring, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def connect(url: str, **options):
    """ring://NAME[?runtime_dir=...] -> RingClient; redis://host:port or unix:///path -> RespClient."""
    parsed = urlparse(url)
    query = {k: v[-1] for k, v in parse_qs(parsed.query).items()}
    if parsed.scheme == "ring":
        name = parsed.netloc or parsed.path.lstrip("/") or "goblin"
        if "runtime_dir" in query:
            options.setdefault("runtime_dir", query["runtime_dir"])
        from .ring import RingClient
        return RingClient(name=name, **options)
    if parsed.scheme == "redis":
        return RespClient(host=parsed.hostname or "127.0.0.1", port=parsed.port or 6379, **options)
    if parsed.scheme == "unix":
        return RespClient(unix_socket_path=parsed.path, **options)
    raise ValueError(f"unsupported URL scheme {parsed.scheme!r}: use ring://NAME, redis://HOST:PORT or unix:///PATH")


__all__ = ["RingClient", "RingPipeline", "RespClient", "RespPipeline", "connect"]
