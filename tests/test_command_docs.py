"""COMMAND over RESP with redis-py and redis-cli: INFO, DOCS, LIST, COUNT, GETKEYS and HELP
answer for every command the server has, agree with what the server enforces, and have
the shapes a real redis-server replies with.

The module shares conftest's goblin and redis servers (COMMAND changes nothing). COMMAND
INFO with an unknown name and COMMAND DOCS are read through a bare connection, because
redis-py's COMMAND callback parses every COMMAND reply as COMMAND INFO's (and refuses the
nil entry).
"""

from __future__ import annotations

import shutil
import subprocess

import pytest
import redis


def connect(port: int, protocol: int) -> redis.Redis:
    client = redis.Redis(port=port, protocol=protocol, decode_responses=True, socket_timeout=10)
    try:
        client.ping()
    except redis.ResponseError as error:
        client.close()
        if "NOPROTO" in str(error):
            pytest.skip("this server does not speak RESP3 yet (HELLO 3 answers NOPROTO)")
        raise
    return client


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def client(request, goblin):
    c = connect(goblin.port, request.param)
    yield c
    c.close()


@pytest.fixture
def resp2(goblin):
    c = connect(goblin.port, 2)
    yield c
    c.close()


def raw(client: redis.Redis, *args):
    """Send one command and return the reply as parsed, without redis-py's callbacks."""
    connection = client.connection_pool.get_connection()
    try:
        connection.send_command(*args)
        reply = connection.read_response()
    finally:
        client.connection_pool.release(connection)
    if isinstance(reply, redis.ResponseError):
        raise reply
    return reply


def as_map(reply):
    """RESP3 maps arrive as dicts, RESP2 maps as flat [key, value, ...] arrays."""
    if isinstance(reply, dict):
        return reply
    assert isinstance(reply, list) and len(reply) % 2 == 0, reply
    return dict(zip(reply[::2], reply[1::2]))


def key_spec(spec) -> dict:
    spec = as_map(spec)
    return {
        "flags": spec["flags"],
        "begin_search": {k: (as_map(v) if k == "spec" else v) for k, v in as_map(spec["begin_search"]).items()},
        "find_keys": {k: (as_map(v) if k == "spec" else v) for k, v in as_map(spec["find_keys"]).items()},
    }


def argument_tree(arguments) -> list:
    """The identifiers of a DOCS argument list (names, types, tokens, flags), not its prose."""
    tree = []
    for argument in arguments:
        argument = as_map(argument)
        tree.append((argument["name"], argument["type"], argument.get("token"), tuple(argument.get("flags", [])),
                     argument.get("key_spec_index"), tuple(argument_tree(argument.get("arguments", [])))))
    return tree


def sample_line(name: str, arity: int) -> list[str]:
    """A command line of the right length for name ("memory|usage" -> MEMORY USAGE ...)."""
    words = name.split("|")
    length = arity if arity > 0 else max(-arity, 5)
    return words + [f"arg{i}" for i in range(len(words), length)]


def test_every_listed_command_has_info_with_its_arity_and_docs_with_a_summary(client):
    names = raw(client, "COMMAND", "LIST")
    assert "get" in names and "config|get" in names and "command|docs" in names
    infos = raw(client, "COMMAND", "INFO", *names)
    assert len(infos) == len(names)
    for name, info in zip(names, infos):
        assert info is not None, name
        assert info[0] == name and isinstance(info[1], int) and info[1] != 0, info
        assert len(info) == 10, info
    docs = as_map(raw(client, "COMMAND", "DOCS", *names))
    assert set(docs) == set(names)
    for name, doc in docs.items():
        doc = as_map(doc)
        assert doc["summary"] and doc["since"] and doc["group"], (name, doc)


def test_command_count_info_and_the_parsed_command_table_agree(client):
    table = client.command()
    count = client.command_count()
    assert count == len(table) == len([n for n in raw(client, "COMMAND", "LIST") if "|" not in n])
    assert len(raw(client, "COMMAND", "INFO")) == count
    get = table["get"]
    assert (get["arity"], get["first_key_pos"], get["last_key_pos"], get["step_count"]) == (2, 1, 1, 1)
    assert set(get["flags"]) == {"readonly", "fast"}
    assert set(get["acl_categories"]) == {"@read", "@string", "@fast"}
    [info] = raw(client, "COMMAND", "INFO", "GET")
    assert info[0] == "get"
    assert raw(client, "COMMAND", "INFO", "nosuch", "get", "config|nosuch")[0::2] == [None, None]
    config = client.execute_command("COMMAND", "INFO", "config")["config"]
    assert {sub[0] for sub in config["subcommands"]} >= {"config|get", "config|set", "config|resetstat"}


def test_the_arity_info_reports_is_the_arity_the_server_enforces(resp2):
    for name, info in resp2.command().items():
        arity = info["arity"]
        if abs(arity) < 2:
            continue
        too_short = [name] + ["x"] * (abs(arity) - 2)
        with pytest.raises(redis.ResponseError, match=f"wrong number of arguments for '{name}' command"):
            raw(resp2, *too_short)


def test_getkeys_of_mset_and_lmpop_returns_their_keys(client):
    assert client.command_getkeys("MSET", "a", "1", "b", "2") == ["a", "b"]
    assert raw(client, "COMMAND", "GETKEYS", "LMPOP", "2", "x", "y", "LEFT") == ["x", "y"]
    assert raw(client, "COMMAND", "GETKEYS", "memory", "usage", "k") == ["k"]
    assert raw(client, "COMMAND", "GETKEYSANDFLAGS", "LMOVE", "s", "d", "LEFT", "RIGHT") == [
        ["s", ["RW", "access", "delete"]], ["d", ["RW", "insert"]]]


def test_key_positions_in_info_agree_with_getkeys(resp2):
    names = raw(resp2, "COMMAND", "LIST")
    checked = 0
    for info in raw(resp2, "COMMAND", "INFO", *names):
        name, arity, flags, first, last, step = info[:6]
        if "movablekeys" in flags or info[9]:   # containers: GETKEYS needs a real subcommand
            continue
        line = sample_line(name, arity)
        if first == 0:
            if not info[8]:   # no key specs at all (GETKEYS itself needs a word after the name)
                with pytest.raises(redis.ResponseError, match="The command has no key arguments"):
                    raw(resp2, "COMMAND", "GETKEYS", *(line if len(line) > 1 else line + ["x"]))
            continue
        end = last if last >= 0 else len(line) + last
        expected = [line[i] for i in range(first, end + 1, step)]
        assert raw(resp2, "COMMAND", "GETKEYS", *line) == expected, (name, line)
        checked += 1
    assert checked > 30


def test_getkeys_refuses_what_redis_refuses(resp2):
    cases = [
        (("NOSUCH", "a"), "Invalid command specified"),
        (("CONFIG", "NOSUCH", "a"), "Invalid command specified"),
        (("CONFIG", "GET", "a"), "The command has no key arguments"),
        (("GET", "a", "b"), "Invalid number of arguments specified for command"),
        (("LMPOP", "0", "a", "LEFT"), "Invalid arguments specified for command"),
        (("LMPOP", "9", "a", "LEFT"), "Invalid arguments specified for command"),
    ]
    for line, message in cases:
        with pytest.raises(redis.ResponseError, match=message):
            raw(resp2, "COMMAND", "GETKEYS", *line)
    with pytest.raises(redis.ResponseError, match="wrong number of arguments for 'command\\|getkeys' command"):
        raw(resp2, "COMMAND", "GETKEYS", "GET")


def test_list_filters_help_and_unknown_subcommands(resp2):
    assert raw(resp2, "COMMAND", "LIST", "FILTERBY", "PATTERN", "CONFIG|G*") == ["config|get"]
    in_list = raw(resp2, "COMMAND", "LIST", "FILTERBY", "ACLCAT", "list")
    assert "lpush" in in_list and "get" not in in_list
    assert raw(resp2, "COMMAND", "LIST", "FILTERBY", "MODULE", "anything") == []
    with pytest.raises(redis.ResponseError, match="syntax error"):
        raw(resp2, "COMMAND", "LIST", "FILTERBY", "PATTERN")
    help_lines = raw(resp2, "COMMAND", "HELP")
    assert help_lines[0].startswith("COMMAND <subcommand>") and any(line.startswith("GETKEYS") for line in help_lines)
    with pytest.raises(redis.ResponseError, match="unknown subcommand 'nosuch'. Try COMMAND HELP."):
        raw(resp2, "COMMAND", "nosuch")
    with pytest.raises(redis.ResponseError, match="wrong number of arguments for 'command\\|count' command"):
        raw(resp2, "COMMAND", "COUNT", "extra")


def test_docs_of_set_describe_its_options(client):
    set_doc = as_map(as_map(raw(client, "COMMAND", "DOCS", "set", "nosuch"))["set"])
    assert set(set_doc) >= {"summary", "since", "group", "complexity", "arguments"}
    arguments = {a[0]: a for a in argument_tree(set_doc["arguments"])}
    assert arguments["key"][1:5] == ("key", None, (), 0)
    assert arguments["expiration"][1] == "oneof"
    assert ("seconds", "integer", "EX", (), None, ()) in arguments["expiration"][5]
    assert ("keepttl", "pure-token", "KEEPTTL", (), None, ()) in arguments["expiration"][5]
    config_doc = as_map(as_map(raw(client, "COMMAND", "DOCS", "config"))["config"])
    assert "config|get" in as_map(config_doc["subcommands"])


def test_redis_cli_prints_the_docs_of_set(goblin):
    if not shutil.which("redis-cli"):
        pytest.skip("redis-cli is not installed")
    result = subprocess.run(["redis-cli", "-p", str(goblin.port), "COMMAND", "DOCS", "set"],
                            capture_output=True, text=True, timeout=20)
    assert result.returncode == 0, result.stderr
    assert "expiration" in result.stdout and "unix-time-milliseconds" in result.stdout


@pytest.mark.parametrize("protocol", [2, 3], ids=["resp2", "resp3"])
def test_info_and_docs_have_the_shapes_a_redis_server_replies_with(goblin, redis_server, protocol):
    ours, theirs = connect(goblin.port, protocol), connect(redis_server.port, protocol)
    try:
        names = ["get", "set", "mset", "lmove", "lpos", "lmpop", "rename", "expire", "config|get", "hello"]
        for our_info, their_info in zip(raw(ours, "COMMAND", "INFO", *names), raw(theirs, "COMMAND", "INFO", *names)):
            name = their_info[0]
            assert our_info[:7] == their_info[:7], name      # name, arity, flags, first/last/step, categories
            assert [key_spec(s) for s in our_info[8]] == [key_spec(s) for s in their_info[8]], name
            assert isinstance(our_info[7], list) and isinstance(our_info[9], list)
        our_docs = as_map(raw(ours, "COMMAND", "DOCS", *names))
        their_docs = as_map(raw(theirs, "COMMAND", "DOCS", *names))
        assert set(our_docs) == set(their_docs)
        for name in names:
            mine, redis_doc = as_map(our_docs[name]), as_map(their_docs[name])
            assert set(mine) <= set(redis_doc), name
            assert mine["group"] == redis_doc["group"] and mine["since"] == redis_doc["since"], name
            if name == "config|get":   # Redis wraps its one repeated argument in a block; we do not
                continue
            assert argument_tree(mine.get("arguments", [])) == argument_tree(redis_doc.get("arguments", [])), name
        for line in (["MSET", "a", "1", "b", "2"], ["LMOVE", "s", "d", "LEFT", "RIGHT"], ["LMPOP", "2", "a", "b", "LEFT"]):
            assert raw(ours, "COMMAND", "GETKEYS", *line) == raw(theirs, "COMMAND", "GETKEYS", *line)
    finally:
        ours.close()
        theirs.close()
