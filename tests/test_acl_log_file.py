"""ACL LOG, the ACL file (ACL LOAD / SAVE, aclfile, config-file `user` lines), against
redis-server 7.0 (differential: the same steps on both, replies compared) and valkey 9.1 for
the entry fields Redis added after 7.0 (entry-id, timestamp-created, timestamp-last-updated).

Every server here is started by its test or module on a free port with its own ring name."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
import redis

from goblin_ring import ConnectionError, ResponseError, RespClient, RingClient
from servers import GoblinServer, RedisServer

SHARED = ("count", "reason", "context", "object", "username")   # the fields 7.0 and goblin compare on


def entries(client, *args) -> list[dict]:
    raw = client.execute_command("ACL", "LOG", *args)
    out = []
    for entry in raw:
        if isinstance(entry, list):
            entry = dict(zip(entry[0::2], entry[1::2]))
        out.append({(k.decode() if isinstance(k, bytes) else k): v for k, v in entry.items()})
    return out


def comparable(log: list[dict]) -> list[tuple]:
    return [tuple((field, entry[field]) for field in SHARED) for entry in log]


def outcome(client, *command):
    try:
        return client.execute_command(*command)
    except (redis.ResponseError, redis.AuthenticationError, ResponseError) as error:
        return f"error: {error}"


def refusals(port: int) -> None:
    """The same refused calls, in order: commands, keys, channels, AUTH, in MULTI and in a script."""
    admin = redis.Redis(port=port)
    admin.execute_command("ACL", "LOG", "RESET")
    admin.execute_command("ACL", "SETUSER", "limited", "on", ">pw", "-@all", "+get", "+multi", "+exec", "+eval",
                          "+publish", "+auth", "~k*", "&news")
    user = RespClient(port=port, username="limited", password="pw", socket_timeout=10)   # AUTH only, no HELLO
    calls = [("SET", "k1", "v"), ("GET", "other"), ("GET", "other"), ("PUBLISH", "gossip", "x"), ("GET", "k1"),
             ("EVAL", "return redis.call('get', 'other')", "0"), ("EVAL", "return redis.call('set', 'k', 'v')", "0"),
             ("AUTH", "limited", "wrong"), ("AUTH", "nobody", "pw"), ("AUTH", "limited", "pw")]
    for call in calls:
        outcome(user, *call)
    for call in (("MULTI",), ("GET", "other"), ("GET", "k1"), ("EXEC",)):   # refused while queueing: "multi"
        outcome(user, *call)
    user.close()
    admin.close()


@pytest.fixture(scope="module")
def pair(tmp_path_factory, redis_server):
    with GoblinServer(tmp_path_factory.mktemp("runtime")).start() as server:
        yield server, redis_server


def test_acl_log_records_refusals_as_redis_does(pair):
    server, reference = pair
    logs = []
    for port in (server.port, reference.port):
        refusals(port)
        logs.append(entries(redis.Redis(port=port)))
    ours, theirs = logs
    assert comparable(ours) == comparable(theirs)
    reasons = {entry["reason"] for entry in ours}
    assert reasons == {b"command", b"key", b"channel", b"auth"}
    assert {entry["context"] for entry in ours} == {b"toplevel", b"multi", b"lua"}
    merged = [entry for entry in ours if entry["object"] == b"other" and entry["context"] == b"toplevel"]
    assert merged and merged[0]["count"] == 2          # the repeated GET other: one entry, counted twice
    for entry in ours:                                 # Redis 7.2's fields too
        assert entry["timestamp-last-updated"] >= entry["timestamp-created"] > 1_600_000_000_000
        assert b"user=limited" in entry["client-info"] or entry["reason"] == b"auth"
        assert float(entry["age-seconds"]) >= 0
    ids = [entry["entry-id"] for entry in ours]
    assert sorted(ids, reverse=True) == ids and len(set(ids)) == len(ids)


def test_acl_log_count_reset_and_max_len_as_redis(pair):
    server, reference = pair
    answers = []
    for port in (server.port, reference.port):
        refusals(port)
        admin = redis.Redis(port=port)
        steps = [comparable(entries(admin, "2")), comparable(entries(admin, "-1")), outcome(admin, "ACL", "LOG", "x"),
                 outcome(admin, "ACL", "LOG", "1", "2"), outcome(admin, "CONFIG", "SET", "acllog-max-len", "2"),
                 outcome(admin, "CONFIG", "GET", "acllog-max-len")]
        refusals(port)   # resets, then refuses again: trimmed to 2 as entries are added
        steps += [len(entries(admin, "100")), outcome(admin, "ACL", "LOG", "RESET"), entries(admin),
                  outcome(admin, "CONFIG", "SET", "acllog-max-len", "128")]
        answers.append(steps)
        admin.close()
    assert answers[0] == answers[1]
    assert answers[0][6] == 2


def test_entry_ids_and_timestamps_as_valkey(tmp_path, pair):
    from goblin_ring.bench.servers import valkey_executable
    path, where = valkey_executable()
    if not path:
        pytest.fail(f"valkey-server is not available ({where})")
    server, _ = pair
    valkey = RedisServer(path).start()
    try:
        shapes = []
        for port in (server.port, valkey.port):
            admin = redis.Redis(port=port)
            admin.execute_command("ACL", "SETUSER", "v", "on", "nopass", "-@all", "+get", "~k*")
            user = RespClient(port=port, username="v", password="x", socket_timeout=10)
            for call in (("SET", "a", "b"), ("GET", "z"), ("SET", "a", "b")):
                outcome(user, *call)
            first = entries(admin)
            admin.execute_command("ACL", "LOG", "RESET")
            outcome(user, "GET", "y")
            after_reset = entries(admin)
            shapes.append(([list(entry) for entry in first], [(e["object"], e["count"]) for e in first],
                           [e["entry-id"] - first[-1]["entry-id"] for e in first],
                           after_reset[0]["entry-id"] - first[-1]["entry-id"]))
            user.close()
            admin.execute_command("ACL", "DELUSER", "v")
            admin.close()
        assert shapes[0] == shapes[1]
    finally:
        valkey.stop()


def test_a_refused_ring_call_is_logged_with_the_ring_session(pair):
    server, _ = pair
    admin = redis.Redis(port=server.port)
    admin.execute_command("ACL", "LOG", "RESET")
    admin.execute_command("ACL", "SETUSER", "ringer", "on", ">pw", "-@all", "+get", "~k*")
    with RingClient(name=server.name, runtime_dir=server.runtime_dir, username="ringer", password="pw") as ring:
        with pytest.raises(ResponseError, match="NOPERM"):
            ring.get("secret")                    # the typed path
        with pytest.raises(ResponseError, match="NOPERM"):
            ring.execute_command("SET", "k", "v")  # the argv path
    log = entries(admin)
    assert [(e["reason"], e["object"], e["username"]) for e in log] == [(b"command", b"set", b"ringer"),
                                                                       (b"key", b"secret", b"ringer")]
    assert all(b"transport=ring" in e["client-info"] for e in log)
    admin.execute_command("ACL", "DELUSER", "ringer")
    admin.close()


# ---- the ACL file --------------------------------------------------------------------------

FILES = [
    "user alice on >pw ~a* +get\nuser default on nopass ~* &* +@all\n",
    "# a comment\n\nuser alice on >pw\n",
    "user alice on\nuser alice off\n",
    "foo bar\nuser carl on badrule +nosuch\n",
    'user "sp ace" on\n',
    "user\n",
    "user default on nopass ~* &* +@all\nuser default off\n",
    "user a on resetchannels &x* +@all -@dangerous ~* %R~k*\n",
    "user a on\r\nuser default on nopass ~* &* +@all\n",
    "  user b on nopass ~* +@all  \t\n\nuser default off resetkeys\n",
    "user z on nopass ~*  +@all\n",
    "user q on (bad) (+nosuch)\n",
    "user q on (~a*  +get) (&x) (~b*\t+set)\n",
]


def test_acl_load_answers_and_loads_as_redis(tmp_path, redis_server):
    """Each file (with a user z able to run ACL after it) loaded on both servers: the answer
    (errors with the file's path replaced) and ACL LIST after it are Redis's."""
    restore = "user default on nopass ~* &* +@all\nuser z on nopass ~* &* +@all\n"
    ours_file, theirs_file = tmp_path / "goblin.acl", tmp_path / "redis.acl"
    ours_file.write_text(restore)
    theirs_file.write_text(restore)
    reference = RedisServer("redis-server", "--aclfile", str(theirs_file)).start()

    def as_z(port, *command):   # a new connection each time: a load closes z's connections
        client = RespClient(port=port, username="z", password="any", socket_timeout=10)
        try:
            return outcome(client, *command)
        finally:
            client.close()

    try:
        with GoblinServer(tmp_path / "runtime", "--aclfile", str(ours_file)).start() as server:
            for text in FILES:
                results = []
                for port, path in ((server.port, ours_file), (reference.port, theirs_file)):
                    path.write_text(text + "user z on nopass ~* &* +@all\n")
                    answer = as_z(port, "ACL", "LOAD")
                    if isinstance(answer, str):
                        answer = answer.replace(str(path), "FILE")
                    results.append((answer, as_z(port, "ACL", "LIST")))
                    path.write_text(restore)
                    assert as_z(port, "ACL", "LOAD") == b"OK"
                assert results[0] == results[1], text
    finally:
        reference.stop()


def test_acl_save_writes_acl_list_and_load_disconnects_users(tmp_path, redis_server):
    path = tmp_path / "users.acl"
    path.write_text("user default on nopass ~* &* +@all\n")
    with GoblinServer(tmp_path / "runtime", "--aclfile", str(path)).start() as server:
        admin = redis.Redis(port=server.port)
        admin.execute_command("ACL", "SETUSER", "alice", "on", ">pw", "~a*", "+get")
        assert admin.execute_command("ACL", "SAVE") == b"OK"
        assert path.read_text().splitlines() == [line.decode() for line in admin.execute_command("ACL", "LIST")]
        alice = RespClient(port=server.port, username="alice", password="pw", socket_timeout=10)
        assert alice.get("a1") is None
        with RingClient(name=server.name, runtime_dir=server.runtime_dir, username="alice", password="pw") as ring:
            assert ring.get("a1") is None
            admin.execute_command("ACL", "SETUSER", "alice", "off")
            assert admin.execute_command("ACL", "LOAD") == b"OK"        # alice back on from the file
            with pytest.raises(ConnectionError):
                alice.get("a1")                                      # closed, as Redis closes it
            with pytest.raises(ConnectionError):
                ring.get("a1")
            assert b"user=alice" not in admin.execute_command("CLIENT", "LIST")
        assert redis.Redis(port=server.port, username="alice", password="pw").get("a1") is None
        path.unlink()
        assert outcome(admin, "ACL", "LOAD") == f"error: Error loading ACLs, opening file '{path}': No such file or directory"
        admin.close()


def test_without_an_aclfile_load_and_save_answer_as_redis(pair):
    server, reference = pair
    for sub in ("LOAD", "SAVE"):
        assert outcome(redis.Redis(port=server.port), "ACL", sub) == outcome(redis.Redis(port=reference.port), "ACL", sub)
    assert redis.Redis(port=server.port).config_get("aclfile") == {"aclfile": ""}


def start_failure(tmp_path, *args) -> str:
    process = subprocess.run([sys.executable, "-m", "goblin_ring.server", *args, "--name", f"t{time.monotonic_ns()}",
                              "--runtime-dir", str(tmp_path / "rt"), "--port", "0", "--save", ""],
                             capture_output=True, text=True, timeout=30)
    assert process.returncode != 0
    return process.stderr


def test_startup_refuses_a_bad_aclfile_and_users_in_both_places(tmp_path):
    bad = tmp_path / "bad.acl"
    bad.write_text("user x on nosuch\n")
    assert f"Aborting Redis startup because of ACL errors: {bad}:1: Syntax error." in start_failure(
        tmp_path, "--aclfile", str(bad))
    assert "Aborting Redis startup because of ACL errors: Error loading ACLs, opening file" in start_failure(
        tmp_path, "--aclfile", str(tmp_path / "missing.acl"))
    conf = tmp_path / "goblin.conf"
    conf.write_text(f"user alice on >pw ~* +@all\naclfile {tmp_path / 'ok.acl'}\n")
    (tmp_path / "ok.acl").write_text("user default on nopass ~* &* +@all\n")
    assert "Configuring Redis with users defined in redis.conf and at the same setting an ACL file path is invalid" \
        in start_failure(tmp_path, str(conf))
    conf.write_text("user alice on nosuch\n")
    assert "Error in user declaration 'nosuch': Syntax error" in start_failure(tmp_path, str(conf))


def test_config_file_user_lines_make_users(tmp_path):
    conf = tmp_path / "goblin.conf"
    conf.write_text('user alice on ">pass word" ~a* +get\n')
    with GoblinServer(tmp_path / "runtime", str(conf)).start() as server:
        alice = redis.Redis(port=server.port, username="alice", password="pass word")
        assert alice.get("a") is None
        with pytest.raises(redis.exceptions.NoPermissionError):
            alice.set("a", "1")
        alice.close()


# ---- typed multi-key requests over the ring: each key checked ------------------------------

TYPED = [  # (typed call, the same as a command): allowed and forbidden keys for ~k* %R~r*
    (lambda c: c.mget("k1", "k2"), ("MGET", "k1", "k2")),
    (lambda c: c.mget("k1", "r1"), ("MGET", "k1", "r1")),           # r*: read access: allowed
    (lambda c: c.mget("k1", "x1"), ("MGET", "k1", "x1")),
    (lambda c: c.mset({"k1": "a", "k2": "x1"}), ("MSET", "k1", "a", "k2", "x1")),   # values are not keys
    (lambda c: c.mset({"k1": "a", "r1": "b"}), ("MSET", "k1", "a", "r1", "b")),     # r*: no write
    (lambda c: c.msetnx({"x1": "a"}), ("MSETNX", "x1", "a")),
    (lambda c: c.exists("k1", "r1"), ("EXISTS", "k1", "r1")),
    (lambda c: c.delete("k9", "x2"), ("DEL", "k9", "x2")),
    (lambda c: c.delete("k9", "k8"), ("DEL", "k9", "k8")),
    (lambda c: c.rename("k1", "k3"), ("RENAME", "k1", "k3")),
    (lambda c: c.rename("k3", "x3"), ("RENAME", "k3", "x3")),
    (lambda c: c.lmove("kl", "kl2", "LEFT", "RIGHT"), ("LMOVE", "kl", "kl2", "LEFT", "RIGHT")),
    (lambda c: c.lmove("kl2", "rl", "LEFT", "RIGHT"), ("LMOVE", "kl2", "rl", "LEFT", "RIGHT")),
    (lambda c: c.rpoplpush("kl2", "kl"), ("RPOPLPUSH", "kl2", "kl")),
    (lambda c: c.lmpop(2, "kl", "xl", direction="LEFT"), ("LMPOP", "2", "kl", "xl", "LEFT")),
    (lambda c: c.lmpop(1, "kl", direction="LEFT"), ("LMPOP", "1", "kl", "LEFT")),
    (lambda c: c.blpop(["kl", "xl"], timeout=0.01), ("BLPOP", "kl", "xl", "0.01")),
    (lambda c: c.blpop(["kl", "kl2"], timeout=0.01), ("BLPOP", "kl", "kl2", "0.01")),
]


def test_typed_multi_key_ring_requests_check_each_key(pair):
    server, _ = pair
    admin = redis.Redis(port=server.port)
    admin.execute_command("ACL", "SETUSER", "typed", "on", ">pw", "+@all", "~k*", "%R~r*")

    def run(call):
        admin.flushall()
        admin.rpush("kl", "a", "b", "c")
        admin.set("k1", "v")
        try:
            return ("ok", call())
        except ResponseError as error:
            return ("error", str(error))

    try:
        with RingClient(name=server.name, runtime_dir=server.runtime_dir, username="typed", password="pw") as ring:
            for typed, command in TYPED:
                as_typed = run(lambda: typed(ring))
                as_command = run(lambda: ring.execute_command(*command))
                assert as_typed[0] == as_command[0], (command, as_typed, as_command)
                if as_typed[0] == "error":
                    assert as_typed[1] == as_command[1] == \
                        "NOPERM this user has no permissions to access one of the keys used as arguments"
        denied = {entry["object"] for entry in entries(admin) if entry["reason"] == b"key"}
        assert {b"x1", b"r1", b"x2", b"x3", b"rl", b"xl"} <= denied
    finally:
        admin.execute_command("ACL", "DELUSER", "typed")
        admin.close()



def test_typed_evalsha_fcall_and_xreadgroup_ring_requests_check_their_keys(pair):
    # their typed messages hold the keys first in the group (numkeys of them; XREADGROUP's half):
    # a restricted user gets over the ring what redis-py gets over RESP, key by key
    server, _ = pair
    admin = redis.Redis(port=server.port)
    admin.execute_command("ACL", "SETUSER", "typed2", "on", ">pw", "+@all", "~k*")
    sha = admin.script_load("return redis.call('get', KEYS[1])")
    echo = admin.script_load("return ARGV[1]")
    admin.execute_command("FUNCTION", "LOAD", "REPLACE",
                          "#!lua name=typedlib\nredis.register_function('tget', function(keys) return redis.call('get', keys[1]) end)")
    calls = [
        lambda c: c.evalsha(sha, 1, "k1"), lambda c: c.evalsha(sha, 1, "x1"),
        lambda c: c.evalsha(echo, 0, "x1"),                           # an argument, not a key
        lambda c: c.fcall("tget", 1, "k1"), lambda c: c.fcall("tget", 1, "x1"),
        lambda c: c.xreadgroup("g", "me", {"ks": ">"}, count=1), lambda c: c.xreadgroup("g", "me", {"xs": ">"}, count=1),
    ]

    def run(client, call):
        admin.set("k1", "v")
        admin.delete("ks", "xs")
        admin.xgroup_create("ks", "g", "0", mkstream=True)
        admin.xgroup_create("xs", "g", "0", mkstream=True)
        admin.xadd("ks", {"f": "v"}, id="1-1")
        admin.xadd("xs", {"f": "v"}, id="1-1")
        try:
            reply = call(client)
            return ("ok", repr(reply).replace("b'", "'")[:40])
        except (ResponseError, redis.exceptions.ResponseError) as error:
            return ("error", str(error))

    try:
        resp = redis.Redis(port=server.port, username="typed2", password="pw")
        with RingClient(name=server.name, runtime_dir=server.runtime_dir, username="typed2", password="pw") as ring:
            outcomes = [(run(ring, call)[0], run(resp, call)[0]) for call in calls]
        assert outcomes == [("ok", "ok"), ("error", "error"), ("ok", "ok"), ("ok", "ok"), ("error", "error"),
                            ("ok", "ok"), ("error", "error")]
        resp.close()
    finally:
        admin.execute_command("ACL", "DELUSER", "typed2")
        admin.execute_command("FUNCTION", "DELETE", "typedlib")
        admin.close()


# ---- selectors (Redis 7.0): root permissions OR any selector --------------------------------

SELECTOR_STEPS = [
    ("ACL", "SETUSER", "s", "on", ">pw", "+get", "~a*", "(~b* +set &ch +@list)", "(%R~c* -@all +get)"),
    ("ACL", "GETUSER", "s"), ("ACL", "LIST"),
    ("ACL", "SETUSER", "s2", "(~x* +get", "+set)"), ("ACL", "GETUSER", "s2"),
    ("ACL", "SETUSER", "s3", "(~x*"), ("ACL", "SETUSER", "s3", "(on)"), ("ACL", "SETUSER", "s3", "(~x* allkeys)"),
    ("ACL", "SETUSER", "s3", "()"), ("ACL", "SETUSER", "s3", "(", "+get", ")"), ("ACL", "SETUSER", "s3", "(+nosuch)"),
    ("ACL", "SETUSER", "s3", "(~* ~a)"), ("ACL", "GETUSER", "s3"), ("ACL", "LIST"),
    ("ACL", "DRYRUN", "s", "get", "a1"), ("ACL", "DRYRUN", "s", "get", "b1"), ("ACL", "DRYRUN", "s", "get", "c1"),
    ("ACL", "DRYRUN", "s", "set", "c1", "v"), ("ACL", "DRYRUN", "s", "set", "b1", "v"), ("ACL", "DRYRUN", "s", "set", "a1", "v"),
    ("ACL", "DRYRUN", "s", "lpush", "b1", "v"), ("ACL", "DRYRUN", "s", "lpush", "a1", "v"),
    ("ACL", "DRYRUN", "s", "mget", "a1", "b1"), ("ACL", "DRYRUN", "s", "mget", "c1", "b1"),
    ("ACL", "DRYRUN", "s", "hset", "a", "f", "v"), ("ACL", "DRYRUN", "s", "lmove", "b1", "a1", "left", "left"),
    ("ACL", "DRYRUN", "s", "lmove", "b1", "b2", "left", "left"),
]


def single_commands_as_sets(reply):
    """Redis lists single commands in its command dict's hash order: compare them as sets."""
    if isinstance(reply, bytes) and (b"+" in reply or b"-@" in reply):
        parts = [part.rstrip(b")") for part in reply.split(b" (")]
        return tuple((tuple(w for w in p.split() if not w.startswith((b"+", b"-")) or w.startswith((b"+@", b"-@"))),
                      frozenset(w for w in p.split() if w.startswith((b"+", b"-")) and not w.startswith((b"+@", b"-@"))))
                     for p in parts)
    if isinstance(reply, list):
        return [single_commands_as_sets(item) for item in reply]
    return reply


def test_selectors_answer_as_redis(pair):
    server, reference = pair
    answers = []
    for port in (server.port, reference.port):
        client = redis.Redis(port=port, protocol=2)
        answers.append([single_commands_as_sets(outcome(client, *step)) for step in SELECTOR_STEPS])
        for user in client.execute_command("ACL", "USERS"):
            if user != b"default":
                client.execute_command("ACL", "DELUSER", user)
        client.close()
    for step, ours, theirs in zip(SELECTOR_STEPS, *answers):
        assert ours == theirs, step


def test_selectors_admit_calls_on_both_transports(pair):
    server, reference = pair
    calls = [("GET", "a1"), ("GET", "b1"), ("SET", "b1", "v"), ("SET", "a1", "v"), ("LPUSH", "b2", "x"),
             ("GET", "c1"), ("SET", "c1", "v"), ("MGET", "a1", "b1"), ("PUBLISH", "ch", "m"), ("PUBLISH", "other", "m")]
    results = []
    for port in (server.port, reference.port):
        admin = redis.Redis(port=port)
        admin.execute_command("ACL", "SETUSER", "sel", "on", ">pw", "+get", "~a*", "(~b* +set +lpush +publish &ch)",
                              "(%R~c* -@all +get)")
        user = RespClient(port=port, username="sel", password="pw", socket_timeout=10)
        results.append([outcome(user, *call) for call in calls])
        user.close()
        if port == server.port:   # the ring: the same answers, typed and as commands
            admin.flushall()
            with RingClient(name=server.name, runtime_dir=server.runtime_dir, username="sel", password="pw") as ring:
                assert [outcome(ring, *call) for call in calls] == results[0]
                assert ring.get("c1") is None                       # typed: the second selector's
                for refused in (lambda: ring.get("b1"), lambda: ring.set("c1", "v")):
                    with pytest.raises(ResponseError, match="NOPERM"):
                        refused()
                assert ring.set("b9", "v") is True
        admin.execute_command("ACL", "DELUSER", "sel")
        admin.flushall()
        admin.close()
    assert results[0] == results[1]


# Channels are checked within the selector that allows the command and its keys (Redis 7.0's
# ACLSelectorCheckCmd): a PUBLISH whose command one selector allows and whose channel only
# another allows is refused, as Redis refuses it.
CHANNEL_USER = ("ACL", "SETUSER", "chan", "on", ">pw", "resetchannels", "-@all", "+publish", "+multi", "+exec",
                "+eval", "&a", "(+subscribe +psubscribe &b &p*)", "(+get ~k* &c)", "(resetchannels +spublish ~*)")
CHANNEL_CALLS = [("PUBLISH", "a", "m"), ("PUBLISH", "b", "m"), ("PUBLISH", "c", "m"), ("PUBLISH", "p1", "m"),
                 ("SPUBLISH", "a", "m"), ("GET", "k1"), ("SUBSCRIBE", "b", "a"), ("SUBSCRIBE", "c"),
                 ("PSUBSCRIBE", "p1"), ("EVAL", "return redis.call('publish', 'c', 'm')", "0"),
                 ("MULTI",), ("PUBLISH", "c", "m"), ("PUBLISH", "a", "m"), ("EXEC",)]
CHANNEL_DRYRUNS = [("ACL", "DRYRUN", "chan", *call) for call in
                   [("publish", "a", "m"), ("publish", "b", "m"), ("publish", "c", "m"), ("subscribe", "b", "p*"),
                    ("subscribe", "b", "a", "c"), ("psubscribe", "p*"), ("psubscribe", "p1"), ("psubscribe", "b"),
                    ("subscribe", "b"), ("spublish", "a", "m"), ("get", "k1"), ("unsubscribe", "zz")]]


def test_channels_are_checked_within_the_selector_that_allows_the_command(pair):
    server, reference = pair
    results = []
    for port in (server.port, reference.port):
        admin = redis.Redis(port=port)
        admin.execute_command("ACL", "LOG", "RESET")
        admin.execute_command("CONFIG", "RESETSTAT")
        admin.execute_command(*CHANNEL_USER)
        dryruns = [outcome(admin, *call) for call in CHANNEL_DRYRUNS]
        user = RespClient(port=port, username="chan", password="pw", socket_timeout=10)
        calls = [outcome(user, *call) for call in CHANNEL_CALLS]
        user.close()
        log = comparable(entries(admin))
        stats = admin.info("commandstats")["cmdstat_publish"]
        stats = {field: stats[field] for field in ("calls", "rejected_calls", "failed_calls")}
        ring_calls = None
        if port == server.port:   # the ring's command form: the same answers
            with RingClient(name=server.name, runtime_dir=server.runtime_dir, username="chan", password="pw") as ring:
                ring_calls = [outcome(ring, *call) for call in CHANNEL_CALLS[:6]]
        admin.execute_command("ACL", "DELUSER", "chan")
        admin.close()
        results.append((dryruns, calls, log, stats, ring_calls))
    (dry, calls, log, stats, ring_calls), (dry7, calls7, log7, stats7, _) = results
    assert dry == dry7
    assert calls == calls7
    assert ring_calls == calls7[:6]
    assert log == log7
    assert stats == stats7
    assert calls[2].startswith("error: NOPERM") and "channels" in calls[2]   # the reported hole, closed
