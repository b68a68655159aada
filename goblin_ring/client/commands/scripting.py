"""scripting.py — ScriptingCommands: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO, SCRIPT LOAD/EXISTS/
FLUSH/KILL, register_script (redis-py's Script: EVALSHA, then SCRIPT LOAD and EVALSHA again on
NOSCRIPT), lock() (redis-py's Lock, whose release, extend and reacquire are scripts), and Redis 7
functions (function_load/list/delete/flush/dump/restore/stats/kill, fcall, fcall_ro, with
redis-py's argument and reply shapes), written once for both transports (see core.py). The
scripts and functions run in the server's Lua (native/script/)."""

from __future__ import annotations

import hashlib
from typing import Any, Iterable

from ...errors import NoScriptError
from .core import CommandsCore, bool_ok, encode


class Script:
    """A script bound to a client, as redis-py's Script: calling it runs EVALSHA with the keys
    and arguments given; a server that does not have it (NOSCRIPT) gets SCRIPT LOAD, then
    EVALSHA again. `client=` runs it through another client (redis-py's Lock passes its own)."""

    def __init__(self, registered_client: Any, script: Any):
        self.registered_client = registered_client
        self.script = encode(script)
        self.sha = hashlib.sha1(self.script).hexdigest()

    def __call__(self, keys: Iterable = (), args: Iterable = (), client: Any = None) -> Any:
        client = self.registered_client if client is None else client
        keys = tuple(keys)
        arguments = (*keys, *tuple(args))
        try:
            return client.evalsha(self.sha, len(keys), *arguments)
        except NoScriptError:
            self.sha = client.script_load(self.script)
            return client.evalsha(self.sha, len(keys), *arguments)


_lock_class = None


def _goblin_lock_class():
    """redis-py's Lock with script slots of its own: redis-py keeps the registered release/
    extend/reacquire scripts on the class, so a redis.Redis used first must not lend ours its
    Script objects (they catch redis-py's NoScriptError, not goblin's)."""
    global _lock_class
    if _lock_class is None:
        try:
            from redis.lock import Lock
        except ImportError as error:  # pragma: no cover - redis-py is the [redis] extra
            raise ImportError("lock() is redis-py's Lock: pip install 'goblin-ring[redis]'") from error

        class GoblinLock(Lock):
            lua_release = None
            lua_extend = None
            lua_reacquire = None

        _lock_class = GoblinLock
    return _lock_class


class ScriptingCommands(CommandsCore):

    def eval(self, script: Any, numkeys: int, *keys_and_args: Any) -> Any:
        """EVAL script numkeys key... arg...: the script's reply, converted as Redis converts it."""
        return self._execute((b"EVAL", encode(script), encode(numkeys), *map(encode, keys_and_args)))

    def evalsha(self, sha: Any, numkeys: int, *keys_and_args: Any) -> Any:
        """EVALSHA sha numkeys key... arg...; NoScriptError when the server has no such script."""
        return self._execute((b"EVALSHA", encode(sha), encode(numkeys), *map(encode, keys_and_args)))

    def eval_ro(self, script: Any, numkeys: int, *keys_and_args: Any) -> Any:
        return self._execute((b"EVAL_RO", encode(script), encode(numkeys), *map(encode, keys_and_args)))

    def evalsha_ro(self, sha: Any, numkeys: int, *keys_and_args: Any) -> Any:
        return self._execute((b"EVALSHA_RO", encode(sha), encode(numkeys), *map(encode, keys_and_args)))

    def script_load(self, script: Any) -> str:
        """SCRIPT LOAD: the script's SHA1 as str (redis-py's type)."""
        return self._execute((b"SCRIPT", b"LOAD", encode(script)), _text)

    def script_exists(self, *shas: Any) -> list[bool]:
        return self._execute((b"SCRIPT", b"EXISTS", *map(encode, shas)), lambda reply: [bool(x) for x in reply])

    def script_flush(self, sync_type: str | None = None) -> bool:
        argv = (b"SCRIPT", b"FLUSH") if sync_type is None else (b"SCRIPT", b"FLUSH", encode(sync_type))
        return self._execute(argv, bool_ok)

    def script_kill(self) -> bool:
        return self._execute((b"SCRIPT", b"KILL"), bool_ok)

    # ---- Redis 7 functions (redis-py's FunctionCommands shapes) ----

    def function_load(self, code: Any, replace: bool | None = False) -> Any:
        """FUNCTION LOAD [REPLACE] code: the library's name (bytes, as redis-py gives it)."""
        argv = (b"FUNCTION", b"LOAD", b"REPLACE", encode(code)) if replace else (b"FUNCTION", b"LOAD", encode(code))
        return self._execute(argv)

    def function_delete(self, library: Any) -> bool:
        return self._execute((b"FUNCTION", b"DELETE", encode(library)), bool_ok)

    def function_flush(self, mode: str = "SYNC") -> bool:
        return self._execute((b"FUNCTION", b"FLUSH", encode(mode)), bool_ok)

    def function_list(self, library: Any = "*", withcode: bool | None = False) -> list:
        """FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE]: redis-py's RESP2 shape, a list of
        flat [b'library_name', name, b'engine', b'LUA', b'functions', [...], ...] lists."""
        argv = [b"FUNCTION", b"LIST"]
        if library is not None:
            argv += [b"LIBRARYNAME", encode(library)]
        if withcode:
            argv.append(b"WITHCODE")
        return self._execute(tuple(argv))

    def function_dump(self) -> bytes:
        return self._execute((b"FUNCTION", b"DUMP"))

    def function_restore(self, payload: Any, policy: str | None = "APPEND") -> bool:
        argv = (b"FUNCTION", b"RESTORE", encode(payload))
        if policy is not None:
            argv += (encode(policy),)
        return self._execute(argv, bool_ok)

    def function_kill(self) -> Any:
        return self._execute((b"FUNCTION", b"KILL"))

    def function_stats(self) -> Any:
        return self._execute((b"FUNCTION", b"STATS"))

    def fcall(self, function: Any, numkeys: int, *keys_and_args: Any) -> Any:
        """FCALL function numkeys key... arg...: the function's reply."""
        return self._execute((b"FCALL", encode(function), encode(numkeys), *map(encode, keys_and_args)))

    def fcall_ro(self, function: Any, numkeys: int, *keys_and_args: Any) -> Any:
        return self._execute((b"FCALL_RO", encode(function), encode(numkeys), *map(encode, keys_and_args)))

    def register_script(self, script: Any) -> Script:
        """A Script bound to this client: call it with keys= and args=."""
        return Script(self, script)

    def lock(self, name: Any, timeout: float | None = None, sleep: float = 0.1, blocking: bool = True,
             blocking_timeout: float | None = None, lock_class: Any = None, thread_local: bool = True) -> Any:
        """redis-py's Lock over this client (needs the [redis] extra): acquire, extend, reacquire
        and release as redis-py does them, its scripts run by this server."""
        cls = lock_class or _goblin_lock_class()
        return cls(self, name, timeout=timeout, sleep=sleep, blocking=blocking, blocking_timeout=blocking_timeout,
                   thread_local=thread_local)


def _text(reply: Any) -> Any:
    return reply.decode() if isinstance(reply, bytes) else reply
