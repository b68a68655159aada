"""config.py — the server's command line and the embedded default configuration.

Every flag has a default, so `goblin-ring-server` with no arguments is a working server:
name `goblin`, RESP on 127.0.0.1:6379, rings of 2 MiB (and no larger for any client unless
--max-ring-size says so), adaptive polling, segmented lists.
"""

from __future__ import annotations

import argparse
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from ..control import default_runtime_dir
from .config_file import ConfigFileError, Directive, read_config_file

DEFAULT_RING_SIZE = 2 * 1024 * 1024
MIN_RING_SIZE = 64 * 1024
MAX_RING_SIZE = 1024 * 1024 * 1024
LIST_IMPLEMENTATIONS = ("segmented", "pma")
ARRAY_IMPLEMENTATIONS = ("classic", "rt")
ZSET_IMPLEMENTATIONS = ("standard", "packed")
NAME_PATTERN = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


class ConfigError(ValueError):
    """A configuration the server refuses to start with; the message says why."""


# shutdown-on-sigterm / shutdown-on-sigint's words (Redis 7's)
SHUTDOWN_FLAGS = {"default", "save", "nosave", "now", "force"}

# maxmemory-policy's values (native/exec/evict.h), Redis's names
MAXMEMORY_POLICIES = ("noeviction", "allkeys-lru", "allkeys-lfu", "allkeys-random", "volatile-lru", "volatile-lfu",
                      "volatile-random", "volatile-ttl")

# Redis's default save rules (redis.conf), what the server uses without --save.
DEFAULT_SAVE_RULES = "3600 1 300 100 60 10000"


@dataclass
class ServerConfig:
    name: str = "goblin"
    runtime_dir: str | None = None
    bind: str = "127.0.0.1"
    port: int = 6379
    unixsocket: str | None = None
    list_implementation: str = "segmented"
    server_core: int | None = None
    poll: str = "adaptive"
    ring_size: int = DEFAULT_RING_SIZE
    max_ring_size: int | None = None     # the most a client may ask for; None: ring_size
    spin_us: int = 200
    requirepass: str = ""
    aclfile: str = ""         # Redis's ACL file: loaded at start, ACL LOAD / ACL SAVE's file
    protected_mode: bool = True
    maxclients: int = 10_000
    timeout: int = 0
    maxmemory: int = 0
    maxmemory_policy: str = "noeviction"
    # persistence: the data directory, and the append-only log (native/persist/aof.h)
    dir: str | None = None               # None: the runtime dir
    appendonly: bool = False
    appendfsync: str = "everysec"
    appendfilename: str = "appendonly.aof"
    aof_load_truncated: bool = True
    # Snapshots (native/persist/): dbfilename in dir, the save rules in Redis's syntax (None:
    # Redis's default "3600 1 300 100 60 10000"; "": never), and whether a refused file
    # (truncated, corrupt) lets the server start empty instead of refusing to start.
    dbfilename: str = "dump.grdb"
    save: str | None = None
    start_empty_on_bad_snapshot: bool = False
    # Redis's RDB format (native/persist/rdb_format.h): --import-rdb starts from a Redis RDB file
    # instead of dir/dbfilename (a dbfilename that holds one is read the same way by itself);
    # --export-rdb writes the loaded data as a Redis RDB (version 10) and exits without serving.
    import_rdb: str | None = None
    export_rdb: str | None = None
    # Replication (native/server/replica.c): "HOST PORT" of a Redis primary to replicate from
    # (the config file's `replicaof`, and masterauth / masteruser, are CONFIG parameters)
    replicaof: str | None = None
    masterauth: str | None = None
    # Redis's persistence-error settings: writes refused (-MISCONF) after a failed BGSAVE, and
    # what SIGTERM / SIGINT's shutdown does ("default", or of "save nosave now force")
    stop_writes_on_bgsave_error: bool = True
    shutdown_on_sigterm: str = "default"
    shutdown_on_sigint: str = "default"
    # arrays: the engine new arrays get (classic or rt), and mlockall of the whole server
    array_implementation: str = "classic"
    mlock: bool = False
    # sorted sets: the encoding of sets past the compact size, standard or packed
    # (int32 members, float32 scores, numeric tie order; native/engines/zset/zset.h); CONFIG SET
    # zset-implementation changes it at run time, GOBLIN.ZSET.CONVERT picks it per key
    zset_implementation: str = "standard"
    # the redis.conf-style file the server started from (CONFIG REWRITE writes it back), and
    # its directives that are CONFIG parameters rather than flags, applied at start in order
    config_file: str | None = None
    settings: list = field(default_factory=list)

    def validate(self) -> None:
        if self.import_rdb and self.appendonly:
            raise ConfigError("--import-rdb with --appendonly yes: the append-only file would not hold the imported "
                              "data; import first (and save), then restart with --appendonly yes")
        for flag, value in (("--shutdown-on-sigterm", self.shutdown_on_sigterm),
                            ("--shutdown-on-sigint", self.shutdown_on_sigint)):
            words = value.lower().split()
            if not words or not set(words) <= SHUTDOWN_FLAGS:
                raise ConfigError(f"{flag} {value!r}: use default, or any of save, nosave, now, force")
            if {"save", "nosave"} <= set(words):
                raise ConfigError(f"{flag} {value!r}: save and nosave can't be used together")
        if not NAME_PATTERN.match(self.name):
            raise ConfigError(f"--name {self.name!r}: use 1-64 letters, digits, '_', '.' or '-'")
        if self.list_implementation not in LIST_IMPLEMENTATIONS:
            raise ConfigError(
                f"--list-implementation {self.list_implementation!r} is not available; "
                f"choose one of: {', '.join(LIST_IMPLEMENTATIONS)}")
        if self.array_implementation not in ARRAY_IMPLEMENTATIONS:
            raise ConfigError(f"--array-implementation {self.array_implementation!r} is not available; "
                              f"choose one of: {', '.join(ARRAY_IMPLEMENTATIONS)}")
        if self.zset_implementation not in ZSET_IMPLEMENTATIONS:
            raise ConfigError(f"--zset-implementation {self.zset_implementation!r} is not available; "
                              f"choose one of: {', '.join(ZSET_IMPLEMENTATIONS)}")
        if self.poll not in ("busy", "adaptive"):
            raise ConfigError(f"--poll {self.poll!r}: choose busy or adaptive")
        size = self.ring_size
        if size < MIN_RING_SIZE or size > MAX_RING_SIZE or size & (size - 1):
            raise ConfigError(f"--ring-size {size}: a power of two from {MIN_RING_SIZE} to {MAX_RING_SIZE}")
        if self.max_ring_size is None:
            self.max_ring_size = size
        top = self.max_ring_size
        if top < MIN_RING_SIZE or top > MAX_RING_SIZE or top & (top - 1):
            raise ConfigError(f"--max-ring-size {top}: a power of two from {MIN_RING_SIZE} to {MAX_RING_SIZE}")
        if top < size:
            raise ConfigError(f"--max-ring-size {top} is smaller than --ring-size {size}")
        if not 0 <= self.port <= 65535:
            raise ConfigError(f"--port {self.port}: 0 (disabled) to 65535")
        if len(self.requirepass) > 255 or any(c in self.requirepass for c in "\0\r\n"):
            raise ConfigError("--requirepass: at most 255 bytes, without NUL or newlines")
        if not 1 <= self.maxclients <= 1_000_000:
            raise ConfigError(f"--maxclients {self.maxclients}: 1 to 1000000")
        if self.timeout < 0:
            raise ConfigError(f"--timeout {self.timeout}: seconds, 0 (never) or more")
        if self.maxmemory < 0:
            raise ConfigError(f"--maxmemory {self.maxmemory}: bytes, 0 (no limit) or more")
        if self.appendfsync not in ("always", "everysec", "no"):
            raise ConfigError(f"--appendfsync {self.appendfsync!r}: choose always, everysec or no")
        if not self.appendfilename or "/" in self.appendfilename:
            raise ConfigError(f"--appendfilename {self.appendfilename!r}: a file name in --dir, not a path")
        if self.dir is not None and not os.path.isdir(self.dir):
            raise ConfigError(f"--dir {self.dir}: no such directory")
        if not self.dbfilename or "/" in self.dbfilename:
            raise ConfigError(f"--dbfilename {self.dbfilename!r}: a file name, not a path")
        if self.server_core is not None and not 0 <= self.server_core < (os.cpu_count() or 1):
            raise ConfigError(f"--server-core {self.server_core}: this machine has cores 0 to "
                              f"{(os.cpu_count() or 1) - 1}")


def prepare_runtime_dir(path: str | os.PathLike | None) -> Path:
    """Create the runtime directory 0700, or check an existing one is ours, real and private.
    Every refusal is a ConfigError with a one-line reason (the server exits 2 with it)."""
    directory = Path(path) if path else default_runtime_dir()
    try:
        info = directory.lstat()
    except FileNotFoundError:
        try:
            directory.mkdir(mode=0o700, parents=True)
        except FileExistsError:
            pass                          # created meanwhile: checked below like any other
        except OSError as error:
            raise ConfigError(f"runtime dir {directory} cannot be created: {error.strerror}") from None
        info = directory.lstat()
    except OSError as error:
        raise ConfigError(f"runtime dir {directory} cannot be examined: {error.strerror}") from None
    if stat.S_ISLNK(info.st_mode):
        raise ConfigError(f"runtime dir {directory} is a symbolic link; give a real directory (--runtime-dir)")
    if not stat.S_ISDIR(info.st_mode):
        raise ConfigError(f"runtime dir {directory} is not a directory (--runtime-dir)")
    if info.st_uid != os.getuid():
        raise ConfigError(f"runtime dir {directory} belongs to uid {info.st_uid}, not {os.getuid()} (--runtime-dir)")
    if stat.S_IMODE(info.st_mode) != 0o700:
        try:
            os.chmod(directory, 0o700)
        except OSError as error:
            raise ConfigError(f"runtime dir {directory} cannot be made private (0700): {error.strerror}") from None
    return directory


def parse_size(text: str) -> int:
    """Bytes, with an optional K/M/G suffix (powers of 1024): 2MiB, 512m, 65536."""
    units = {"k": 1024, "m": 1024 ** 2, "g": 1024 ** 3}
    text = text.strip().lower().removesuffix("b").removesuffix("i")
    if text and text[-1] in units:
        return int(text[:-1]) * units[text[-1]]
    return int(text)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="goblin-ring-server",
        description="goblin-ring server: SBE over shared-memory rings, RESP over TCP, one keyspace.")
    parser.add_argument("config_file", nargs="?", metavar="CONFIG_FILE",
                        help="a redis.conf-style file: the flags below as directives (port 7000, save 900 1) "
                             "and any parameter CONFIG GET knows; flags given here override it")
    parser.add_argument("--name", default="goblin", help="ring and control socket name (default: goblin)")
    parser.add_argument("--runtime-dir", help="directory of the control socket "
                        "(default: $XDG_RUNTIME_DIR/goblin-ring, else /tmp/goblin-ring-<uid>)")
    parser.add_argument("--bind", default="127.0.0.1", help="RESP listen address (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=6379, help="RESP TCP port; 0 disables (default: 6379)")
    parser.add_argument("--unixsocket", help="also serve RESP on this Unix socket path (mode 0600)")
    parser.add_argument("--list-implementation", default="segmented", help="list engine (default: segmented)")
    parser.add_argument("--server-core", type=int, help="pin the serving thread to this CPU core")
    parser.add_argument("--poll", default="adaptive", choices=("busy", "adaptive"),
                        help="busy: spin on the rings (use with --server-core); adaptive: spin, then sleep")
    parser.add_argument("--ring-size", type=parse_size, default=DEFAULT_RING_SIZE,
                        help="bytes per ring, a power of two (default: 2MiB)")
    parser.add_argument("--max-ring-size", type=parse_size, default=None,
                        help="the largest ring a client may ask for at attach; larger asks are refused "
                             "(default: --ring-size)")
    parser.add_argument("--spin-us", type=int, default=200,
                        help="adaptive mode: microseconds of idle spinning before sleeping (default: 200)")
    parser.add_argument("--requirepass", default=os.environ.get("GOBLIN_REQUIREPASS", ""),
                        help="RESP clients must AUTH with this password (default: $GOBLIN_REQUIREPASS, else none; "
                             "the environment keeps it out of the process list)")
    parser.add_argument("--aclfile", default="",
                        help="an ACL file of `user <name> <rules>` lines (Redis's syntax), loaded at start and by "
                             "ACL LOAD, written by ACL SAVE (default: none; users may instead be `user` lines of "
                             "the config file, not both)")
    parser.add_argument("--protected-mode", default="yes", choices=("yes", "no"),
                        help="without a password, serve only loopback and Unix-socket clients (default: yes)")
    parser.add_argument("--maxclients", type=int, default=10_000, help="RESP clients at once (default: 10000)")
    parser.add_argument("--timeout", type=int, default=0,
                        help="close RESP clients idle this many seconds; 0 never (default: 0)")
    parser.add_argument("--maxmemory-policy", default="noeviction", choices=MAXMEMORY_POLICIES,
                        help="over --maxmemory, evict keys by this policy before a command that adds data "
                             "(Redis's: *-lru, *-lfu, *-random, volatile-ttl), or refuse it with OOM "
                             "(noeviction, the default)")
    parser.add_argument("--maxmemory", type=parse_size, default=0,
                        help="refuse commands that add data once used memory exceeds this (default: 0, no limit)")
    parser.add_argument("--dir", help="directory of the snapshot and append-only files (default: the runtime dir)")
    parser.add_argument("--appendonly", default="no", choices=("yes", "no"),
                        help="log every write to the append-only file and replay it at start (default: no)")
    parser.add_argument("--appendfsync", default="everysec", choices=("always", "everysec", "no"),
                        help="when the log reaches the disk: before each reply, once a second, or when the "
                             "kernel decides (default: everysec)")
    parser.add_argument("--appendfilename", default="appendonly.aof",
                        help="the append-only file's name in --dir (default: appendonly.aof)")
    parser.add_argument("--aof-load-truncated", default="yes", choices=("yes", "no"),
                        help="at start, drop a last command cut short instead of refusing to start (default: yes)")
    parser.add_argument("--dbfilename", default="dump.grdb", help="snapshot file name (default: dump.grdb)")
    parser.add_argument("--import-rdb", metavar="PATH", default=None,
                        help="start with the data of a Redis RDB file (redis-server 5.0-7.4, Valkey 7-9) instead of "
                             "the snapshot in --dir; the next save writes goblin's own snapshot")
    parser.add_argument("--export-rdb", metavar="PATH", default=None,
                        help="load the data as usual (or --import-rdb), write it to PATH as a Redis RDB file "
                             "(version 10, redis-server 7.0 and later load it) and exit without serving")
    parser.add_argument("--replicaof", nargs=2, metavar=("HOST", "PORT"), default=None,
                        help="start as a replica of the Redis primary at HOST PORT (REPLICAOF at run time)")
    parser.add_argument("--masterauth", metavar="PASSWORD", default=None,
                        help="the password the replica gives its primary (AUTH)")
    parser.add_argument("--save", action="append", nargs="*", metavar="SECONDS CHANGES",
                        help='snapshot rules, Redis\'s syntax: --save "3600 1 300 100" (or --save 3600 1 '
                             '--save 300 100); --save "" never saves (default: 3600 1 300 100 60 10000)')
    parser.add_argument("--stop-writes-on-bgsave-error", default="yes", choices=("yes", "no"),
                        help="after a failed background save, refuse writes (-MISCONF) until a save "
                             "succeeds, when save rules are set (default: yes)")
    parser.add_argument("--shutdown-on-sigterm", default="default",
                        help='what SIGTERM\'s shutdown does, Redis\'s words: "default" (save when save rules '
                             'are set; keep serving if that fails), or any of "save nosave now force" '
                             '(force: stop even when the save or the log\'s flush fails) (default: default)')
    parser.add_argument("--shutdown-on-sigint", default="default",
                        help="the same for SIGINT (default: default)")
    parser.add_argument("--start-empty-on-bad-snapshot", action="store_true",
                        help="a truncated or corrupt snapshot file is logged and skipped instead of "
                             "refusing to start")
    parser.add_argument("--array-implementation", default="classic", choices=ARRAY_IMPLEMENTATIONS,
                        help="the engine new arrays get: classic (memory first) or rt (predictable writes; "
                             "GOBLIN.RT.<ARCMD> reaches it per command) (default: classic)")
    parser.add_argument("--zset-implementation", default="standard", choices=ZSET_IMPLEMENTATIONS,
                        help="the encoding of sorted sets past the compact size: standard, or packed (int32 "
                             "decimal members and float32 scores, 8 bytes an entry, tied members in numeric "
                             "order; a set converts to standard when a member or score does not fit) "
                             "(default: standard)")
    parser.add_argument("--mlock", action="store_true",
                        help="lock all of the server's memory, present and future (mlockall), and every RT "
                             "reservation; refused at start when RLIMIT_MEMLOCK does not allow it")
    return parser


# Flags that take no value: a directive turns them on with "yes".
SWITCHES = {"start-empty-on-bad-snapshot", "mlock"}


def _flag_words(parser: argparse.ArgumentParser) -> set[str]:
    return {option[2:] for action in parser._actions for option in action.option_strings
            if option.startswith("--") and option != "--help"}


def _directives_as_flags(directives: list[Directive], parser: argparse.ArgumentParser,
                         explicit: list[str]) -> tuple[list[str], list[Directive]]:
    """The file's flag directives as command-line words (put before the real command line, so
    that its flags win), and the rest: CONFIG parameters to apply at start."""
    flags, settings = [], []
    words = _flag_words(parser)
    explicit_save = any(word == "--save" or word.startswith("--save=") for word in explicit)
    for directive in directives:
        name = directive.name
        if name not in words:
            settings.append(directive)
            continue
        if name == "save":
            if not explicit_save:
                flags.append("--save=" + " ".join(directive.args))
            continue
        if name in SWITCHES:
            if len(directive.args) != 1 or directive.args[0].lower() not in ("yes", "no"):
                raise ConfigError(str(fatal_line(directive, "argument must be 'yes' or 'no'")))
            if directive.args[0].lower() == "yes":
                flags.append(f"--{name}")
            continue
        nargs = next((action.nargs for action in parser._actions if f"--{name}" in action.option_strings), None)
        if isinstance(nargs, int) and nargs > 1:    # replicaof HOST PORT
            if len(directive.args) != nargs:
                raise ConfigError(str(fatal_line(directive, "Bad directive or wrong number of arguments")))
            flags += [f"--{name}", *directive.args]
            continue
        if len(directive.args) != 1:
            raise ConfigError(str(fatal_line(directive, "Bad directive or wrong number of arguments")))
        flags.append(f"--{name}={directive.args[0]}")
    return flags, settings


def fatal_line(directive: Directive, why: str) -> ConfigFileError:
    from .config_file import fatal
    return fatal(directive.path, directive.line_number, directive.line, why)


def config_from_args(argv: list[str] | None = None) -> ServerConfig:
    import sys
    explicit = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    arguments = parser.parse_args(explicit)
    settings: list[Directive] = []
    config_path = None
    if arguments.config_file:
        config_path = os.path.abspath(arguments.config_file)
        try:
            directives = read_config_file(config_path)
        except ConfigFileError as error:
            raise ConfigError(str(error)) from None
        file_flags, settings = _directives_as_flags(directives, parser, explicit)
        arguments = parser.parse_args(file_flags + explicit)
    config = ServerConfig(
        name=arguments.name, runtime_dir=arguments.runtime_dir, bind=arguments.bind,
        port=arguments.port, unixsocket=arguments.unixsocket,
        list_implementation=arguments.list_implementation, server_core=arguments.server_core,
        poll=arguments.poll, ring_size=arguments.ring_size, max_ring_size=arguments.max_ring_size,
        spin_us=arguments.spin_us,
        requirepass=arguments.requirepass, aclfile=arguments.aclfile, protected_mode=arguments.protected_mode == "yes",
        maxclients=arguments.maxclients, timeout=arguments.timeout, maxmemory=arguments.maxmemory,
        maxmemory_policy=arguments.maxmemory_policy,
        dir=arguments.dir, appendonly=arguments.appendonly == "yes", appendfsync=arguments.appendfsync,
        appendfilename=arguments.appendfilename, aof_load_truncated=arguments.aof_load_truncated == "yes",
        dbfilename=arguments.dbfilename,
        save=None if arguments.save is None else " ".join(word for group in arguments.save for word in group).strip(),
        start_empty_on_bad_snapshot=arguments.start_empty_on_bad_snapshot,
        import_rdb=arguments.import_rdb, export_rdb=arguments.export_rdb,
        replicaof=" ".join(arguments.replicaof) if arguments.replicaof else None, masterauth=arguments.masterauth,
        stop_writes_on_bgsave_error=arguments.stop_writes_on_bgsave_error == "yes",
        shutdown_on_sigterm=arguments.shutdown_on_sigterm, shutdown_on_sigint=arguments.shutdown_on_sigint,
        array_implementation=arguments.array_implementation, mlock=arguments.mlock,
        zset_implementation=arguments.zset_implementation,
        config_file=config_path, settings=settings)
    config.validate()
    return config
