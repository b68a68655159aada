"""goblin_ring.client — RingClient (shared memory) and RespClient (TCP/UDS), one API."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

from .resp import RespClient, RespPipeline
from .ring import RingClient, RingPipeline


def connect(url: str, **options):
    """ring://NAME[?runtime_dir=...] -> RingClient; redis://host:port or unix:///path -> RespClient."""
    parsed = urlparse(url)
    query = {k: v[-1] for k, v in parse_qs(parsed.query).items()}
    if parsed.scheme == "ring":
        name = parsed.netloc or parsed.path.lstrip("/") or "goblin"
        if "runtime_dir" in query:
            options.setdefault("runtime_dir", query["runtime_dir"])
        return RingClient(name=name, **options)
    if parsed.scheme == "redis":
        return RespClient(host=parsed.hostname or "127.0.0.1", port=parsed.port or 6379, **options)
    if parsed.scheme == "unix":
        return RespClient(unix_socket_path=parsed.path, **options)
    raise ValueError(f"unsupported URL scheme {parsed.scheme!r}: use ring://NAME, redis://HOST:PORT or unix:///PATH")


__all__ = ["RingClient", "RingPipeline", "RespClient", "RespPipeline", "connect"]
