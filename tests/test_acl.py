"""ACL users over both transports: requirepass and ACL users apply to ring sessions (the attach
authenticates, or AUTH over the session), and ACL's commands and NOPERM refusals answer as
redis-server 7.0's do (differential: the same commands sent to both, replies compared).

Every server here is started by its test or module on a free port with its own ring name."""

from __future__ import annotations

import os
import threading

import pytest
import redis

from goblin_ring import AuthenticationError, DataError, ResponseError, RingClient
from goblin_ring.asyncio import RingClient as AsyncRingClient
from goblin_ring.redispy import RingConnectionPool
from servers import GoblinServer


def ring_of(server: GoblinServer, **credentials) -> RingClient:
    return RingClient(name=server.name, runtime_dir=server.runtime_dir, timeout=10, **credentials)


@pytest.fixture(scope="module")
def protected(tmp_path_factory):
    with GoblinServer(tmp_path_factory.mktemp("runtime"), "--requirepass", "s3cret").start() as server:
        yield server


# ---- requirepass and users on the ring ---------------------------------------------------


def test_a_ring_session_without_credentials_gets_noauth_until_auth(protected):
    with ring_of(protected) as ring:
        with pytest.raises(ResponseError, match=r"^NOAUTH Authentication required\.$"):
            ring.get("k")
        with pytest.raises(ResponseError, match="^NOAUTH"):
            ring.execute_command("SET", "k", "v")          # the argv path too
        with pytest.raises(ResponseError, match="^WRONGPASS invalid username-password pair or user is disabled."):
            ring.execute_command("AUTH", "wrong")
        assert ring.execute_command("AUTH", "s3cret") == b"OK"
        assert ring.set("k", "v") is True
        assert ring.get("k") == b"v"


def test_the_attach_authenticates_with_redis_s_arguments(protected):
    with ring_of(protected, password="s3cret") as ring:            # the default user's
        ring.set("attach", "1")
        assert ring.get("attach") == b"1"
    with ring_of(protected, username="default", password="s3cret") as ring:
        assert ring.get("attach") == b"1"


@pytest.mark.parametrize("credentials", [dict(password="wrong"), dict(username="nobody", password="s3cret"),
                                         dict(username="default", password="")])
def test_an_attach_with_bad_credentials_is_refused_with_wrongpass(protected, credentials):
    with pytest.raises(AuthenticationError, match=r"^WRONGPASS invalid username-password pair or user is disabled\.$"):
        ring_of(protected, **credentials)


def test_a_huge_password_is_an_error_not_a_crash(protected):
    with pytest.raises(AuthenticationError, match="^WRONGPASS"):
        ring_of(protected, password="x" * 3000)
    with pytest.raises(DataError, match="more than the control socket's"):   # said before it is sent
        ring_of(protected, password="x" * 100_000)
    with ring_of(protected, password="s3cret") as ring:   # the server still serves
        with pytest.raises(ResponseError, match="^WRONGPASS"):
            ring.execute_command("AUTH", "y" * 1_000_000)
    with ring_of(protected, password="s3cret") as ring:
        assert ring.ping() is True


def test_requirepass_set_at_runtime_applies_to_new_ring_sessions(tmp_path):
    with GoblinServer(tmp_path / "runtime").start() as server:
        with ring_of(server) as before:
            before.set("k", "v")
            assert before.execute_command("CONFIG", "SET", "requirepass", "late") == b"OK"
            assert before.get("k") == b"v"          # as Redis: connections already in stay in
            with ring_of(server) as after:
                with pytest.raises(ResponseError, match="^NOAUTH"):
                    after.get("k")
            with ring_of(server, password="late") as after:
                assert after.get("k") == b"v"
            assert before.execute_command("CONFIG", "SET", "requirepass", "") == b"OK"
            with ring_of(server) as after:
                assert after.get("k") == b"v"


def test_an_authenticated_client_keeps_its_user_in_threads_and_after_fork(protected):
    with ring_of(protected, password="s3cret") as ring:
        ring.set("shared", "0")
        results = []

        def work():
            results.append(ring.incr("shared"))   # a thread's own session, attached with the credentials

        threads = [threading.Thread(target=work) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(results) == [1, 2, 3, 4]
        pid = os.fork()
        if pid == 0:
            status = 1
            try:
                status = 0 if ring.incr("shared") == 5 else 2   # the child's fresh session
            finally:
                os._exit(status)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert ring.get("shared") == b"5"


def test_the_redis_py_pool_and_the_asyncio_client_pass_credentials(protected):
    pool = RingConnectionPool(name=protected.name, runtime_dir=str(protected.runtime_dir), password="s3cret")
    client = redis.Redis(connection_pool=pool)
    try:
        client.set("pool", "1")
        assert client.get("pool") == b"1"
    finally:
        client.close()
        pool.disconnect()
    bad = RingConnectionPool(name=protected.name, runtime_dir=str(protected.runtime_dir), password="nope")
    with pytest.raises(redis.AuthenticationError):
        redis.Redis(connection_pool=bad).get("pool")
    bad.disconnect()

    import asyncio

    async def main():
        client = AsyncRingClient(name=protected.name, runtime_dir=protected.runtime_dir, password="s3cret")
        try:
            return await client.get("pool")
        finally:
            await client.aclose()

    assert asyncio.run(main()) == b"1"


# ---- ACL commands: differential against redis-server 7.0 ---------------------------------


@pytest.fixture(scope="module")
def pair(tmp_path_factory, redis_server):
    """A goblin server and redis-server 7.0, each with a client; users are removed after each test."""
    with GoblinServer(tmp_path_factory.mktemp("runtime")).start() as server:
        yield server, redis.Redis(port=server.port, socket_timeout=10), redis.Redis(port=redis_server.port,
                                                                                   socket_timeout=10)


@pytest.fixture
def both(pair):
    server, goblin, reference = pair
    yield server, goblin, reference
    for client in (goblin, reference):
        for user in client.execute_command("ACL", "USERS"):
            if user != b"default":
                client.execute_command("ACL", "DELUSER", user)


def outcome(client, *command):
    try:
        return client.execute_command(*command)
    except redis.ResponseError as error:
        return f"error: {error}"


def rules_of(text: bytes) -> tuple:
    """A command description with its single commands as a set: Redis lists those in its
    command dict's order, which is a hash order; the categories before them are in order."""
    words = text.split()
    head = [w for w in words if w.startswith((b"+@", b"-@"))]
    return tuple(head), frozenset(w for w in words if not w.startswith((b"+@", b"-@")))


def normalised(reply):
    if isinstance(reply, dict):
        return {k: rules_of(v) if k == b"commands" else v for k, v in reply.items()}
    if isinstance(reply, list) and reply and isinstance(reply[0], bytes) and reply[0].startswith(b"user "):
        return [(line.split(b" -@all")[0].split(b" +@all")[0], rules_of(line[line.find(b" +@") if b" +@all" in line
                                                                              else line.find(b" -@all"):]))
                for line in reply]
    return reply


SETUP_AND_QUERIES = [
    ("SETUSER", "alice", "on", ">abc", "~k*", "%R~r*", "%W~w*", "&ch*", "+get", "+@list", "-lpop", "+config|get"),
    ("GETUSER", "alice"),
    ("LIST",),
    ("SETUSER", "bob", "on", "nopass", "+@all", "-@dangerous", "~*", "&*"),
    ("GETUSER", "bob"),
    ("SETUSER", "carol", "reset", "+client", "-client|kill", "#" + "ab" * 32, "!" + "ab" * 32),
    ("GETUSER", "carol"),
    ("SETUSER", "dave", "on", ">one", ">two", "<one", "allkeys", "allchannels", "allcommands", "-get"),
    ("GETUSER", "dave"),
    ("SETUSER", "dave", "resetpass", "resetkeys", "resetchannels", "nocommands", "off"),
    ("GETUSER", "dave"),
    ("USERS",),
    ("LIST",),
    ("WHOAMI",),
    ("GETUSER", "nobody"),
    ("DELUSER", "dave", "nobody"),
    ("USERS",),
    ("CAT",),
    ("DRYRUN", "alice", "get", "k1"),
    ("DRYRUN", "alice", "get", "zz"),
    ("DRYRUN", "alice", "set", "k1", "v"),
    ("DRYRUN", "alice", "config", "get", "maxmemory"),
    ("DRYRUN", "alice", "config", "set", "maxmemory", "0"),
    ("DRYRUN", "nobody", "get", "k"),
    ("DRYRUN", "alice", "nosuchcommand", "k"),
    ("DRYRUN", "alice", "get"),
    ("DRYRUN", "alice", "rpush", "r1", "x"),
    ("DRYRUN", "alice", "lrange", "r1", "0", "1"),
    ("DRYRUN", "alice", "rpush", "w1", "x"),
    ("DRYRUN", "alice", "lrange", "w1", "0", "1"),
]

BAD_INPUT = [
    ("SETUSER", "x", "bogus"), ("SETUSER", "x", "+nosuchcommand"), ("SETUSER", "x", "+@nosuchcategory"),
    ("SETUSER", "x", "~*", "~more"), ("SETUSER", "x", "&*", "&more"), ("SETUSER", "x", "<notthere"),
    ("SETUSER", "x", "!" + "0" * 64), ("SETUSER", "x", "#abc"), ("SETUSER", "x", "#" + "A" * 64),
    ("SETUSER", "x", "#" + "g" * 64), ("SETUSER", "x", "%X~k"), ("SETUSER", "x", "%~k"), ("SETUSER", "x", ""),
    ("SETUSER", "x y"), ("SETUSER", "x", "+config|nosuch"), ("SETUSER", "x", "+config|get|x"),
    ("SETUSER", "x", "on", "bogus"),   # nothing of a refused SETUSER is kept: x is not made
    ("USERS",), ("DELUSER", "default"), ("GETUSER",), ("WHOAMI", "extra"), ("NOSUCH",), ("CAT", "nosuch"),
    ("CAT", "a", "b"), ("GENPASS", "0"), ("GENPASS", "4097"), ("GENPASS", "x"), ("GENPASS", "1", "2"),
    ("SETUSER", "huge", ">" + "p" * 1_000_000), ("GETUSER", "huge"),
]


def test_acl_subcommands_answer_as_redis(both):
    _, goblin, reference = both
    for command in SETUP_AND_QUERIES:
        assert normalised(outcome(goblin, "ACL", *command)) == normalised(outcome(reference, "ACL", *command)), command


def test_bad_acl_input_is_an_error_as_redis(both):
    _, goblin, reference = both
    for command in BAD_INPUT:
        assert normalised(outcome(goblin, "ACL", *command)) == normalised(outcome(reference, "ACL", *command)), \
            command[:3]


def test_acl_cat_of_a_category_lists_redis_s_commands_in_it(both):
    _, goblin, reference = both
    def command_list(client):   # read raw: redis-py's COMMAND reply callback does not take COMMAND LIST
        connection = client.connection_pool.get_connection()
        try:
            connection.send_command("COMMAND", "LIST")
            return set(connection.read_response())
        finally:
            client.connection_pool.release(connection)

    common = command_list(goblin) & command_list(reference)
    for category in ("list", "string", "hash", "dangerous", "fast", "pubsub", "connection", "transaction"):
        ours = {name for name in goblin.execute_command("ACL", "CAT", category) if name in common}
        theirs = {name for name in reference.execute_command("ACL", "CAT", category) if name in common}
        assert ours == theirs, (category, ours ^ theirs)


def test_what_is_not_built_says_so(both):
    _, goblin, _ = both
    for rule, text in (("+get|sub", "First-arg rules"),):
        with pytest.raises(redis.ResponseError, match=text):
            goblin.execute_command("ACL", "SETUSER", "x", rule)
    assert goblin.execute_command("ACL", "GETUSER", "x") is None


def test_genpass_gives_the_bits_asked_for_in_hex(both):
    _, goblin, _ = both
    assert len(goblin.execute_command("ACL", "GENPASS")) == 64
    assert len(goblin.execute_command("ACL", "GENPASS", "5")) == 2
    assert len(goblin.execute_command("ACL", "GENPASS", "4096")) == 1024
    assert goblin.execute_command("ACL", "GENPASS") != goblin.execute_command("ACL", "GENPASS")


# ---- NOPERM: the same refusals over RESP (against redis-server) and over the ring ----------


RESTRICTED = ("on", ">pw", "~k*", "%R~r*", "&news*", "+get", "+set", "+@list", "-lpop", "+config|get",
              "+publish", "+subscribe", "+psubscribe", "+multi", "+exec", "+eval", "+mget", "+acl|whoami")
CALLS = [
    ("GET", "k1"), ("GET", "other"), ("SET", "k1", "v"), ("SET", "r1", "v"), ("GET", "r1"), ("LPUSH", "k2", "a"),
    ("LPOP", "k2"), ("LLEN", "k2"), ("DEL", "k1"), ("CONFIG", "GET", "maxmemory"), ("CONFIG", "SET", "maxmemory", "0"),
    ("PUBLISH", "news.today", "x"), ("PUBLISH", "sport", "x"), ("MGET", "k1", "k2"), ("MGET", "k1", "zz"),
    ("EVAL", "return redis.call('get', KEYS[1])", "1", "k1"), ("EVAL", "return redis.call('del', KEYS[1])", "1", "k1"),
    ("ACL", "WHOAMI"), ("FLUSHALL",),
]


def test_noperm_refusals_match_redis_over_resp(both):
    server, goblin, reference = both
    for client in (goblin, reference):
        client.execute_command("ACL", "SETUSER", "restricted", *RESTRICTED)
    as_goblin = redis.Redis(port=server.port, username="restricted", password="pw", socket_timeout=10)
    as_redis = redis.Redis(port=reference.connection_pool.connection_kwargs["port"], username="restricted",
                           password="pw", socket_timeout=10)
    try:
        for call in CALLS:
            ours, theirs = outcome(as_goblin, *call), outcome(as_redis, *call)
            if call[0] == "EVAL" and isinstance(theirs, str):   # Redis 7.0 wraps a script's error with its location
                theirs = theirs.split(" script:")[0].replace("ERR ", "", 1) if "NOPERM" in theirs else theirs
                ours = ours.split(" script:")[0].replace("ERR ", "", 1) if isinstance(ours, str) else ours
                assert ("NOPERM" in ours) == ("NOPERM" in theirs), call
                continue
            assert ours == theirs, call
        for client in (as_goblin, as_redis):   # a refused command inside MULTI fails the EXEC
            pipe = client.pipeline()
            pipe.get("k1").execute_command("DEL", "k1")
            with pytest.raises(redis.ResponseError):
                pipe.execute()
    finally:
        as_goblin.close()
        as_redis.close()


def test_the_ring_refuses_what_the_user_may_not_run(both):
    server, goblin, _ = both
    goblin.flushall()
    goblin.execute_command("ACL", "SETUSER", "restricted", *RESTRICTED)
    with ring_of(server, username="restricted", password="pw") as ring:
        assert ring.execute_command("ACL", "WHOAMI") == b"restricted"
        assert ring.set("k1", "v") is True
        assert ring.get("k1") == b"v"                                   # typed GET: allowed key
        with pytest.raises(ResponseError, match=r"^NOPERM this user has no permissions to access one of the keys "
                                                r"used as arguments$"):
            ring.get("other")                                           # typed GET: a key outside ~k*
        with pytest.raises(ResponseError, match=r"^NOPERM this user has no permissions to run the 'lpop' command$"):
            ring.lpop("k2")
        with pytest.raises(ResponseError, match=r"^NOPERM this user has no permissions to run the 'del' command$"):
            ring.delete("k1")
        with pytest.raises(ResponseError, match=r"^NOPERM this user has no permissions to run the 'config\|set' command$"):
            ring.execute_command("CONFIG", "SET", "maxmemory", "0")
        with pytest.raises(ResponseError, match="channels used as arguments"):
            ring.execute_command("PUBLISH", "sport", "x")
        assert ring.execute_command("PUBLISH", "news.x", "y") == 0
        assert ring.rpush("k2", "a") == 1
        assert ring.llen("k2") == 1
    # AUTH mid-session changes the user the ring session acts as
    with ring_of(server) as ring:
        assert ring.execute_command("ACL", "WHOAMI") == b"default"
        assert ring.execute_command("AUTH", "restricted", "pw") == b"OK"
        with pytest.raises(ResponseError, match="^NOPERM"):
            ring.execute_command("FLUSHALL")
    # a deleted user's sessions are closed
    ring = ring_of(server, username="restricted", password="pw")
    try:
        assert goblin.execute_command("ACL", "DELUSER", "restricted") == 1
        with pytest.raises(Exception):
            ring.get("k1")
    finally:
        ring.close()
