"""The Lua libraries Redis loads into scripts (cjson, cmsgpack, bit, struct), written in
native/script/lib, against redis-server 7.0: every case of tests/lua_library_cases.py runs in
the C host (native/tests/test_lua_libraries.c --batch: a Lua 5.1 state with base, table,
string, math and the four libraries) and through redis-server's EVAL, and the replies must be
equal (errors by message text). The same corpus runs through goblin's own EVAL, over RESP
(raw frames, against redis-server's) and over the ring (RingClient.eval, against redis-py's
values from redis-server). (The host's own C unit tests run in test_native_programs.)
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import redis

import goblin_ring.errors

import lua_library_cases as corpus
from resp_wire import raw_connection

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "native" / "tests"))
import run_c_tests  # noqa: E402


@pytest.fixture(scope="module")
def host_binary(tmp_path_factory) -> Path:
    binary = tmp_path_factory.mktemp("lua-host") / "test_lua_libraries"
    run_c_tests.build("test_lua_libraries", binary, sanitize=False)
    return binary


class HostRunner:
    """Runs scripts in the C host, all of the corpus in one process (one fresh Lua state per
    script); answers a script it has not seen by running it alone."""

    def __init__(self, binary: Path, scripts: list[str]):
        self.binary = binary
        self.replies = dict(zip(scripts, self._batch(scripts)))

    def _batch(self, scripts: list[str]) -> list[object]:
        payload = b"".join(b"%d\n%s" % (len(encoded), encoded) for encoded in (s.encode() for s in scripts))
        result = subprocess.run([str(self.binary), "--batch"], input=payload, capture_output=True, timeout=120)
        assert result.returncode == 0, result.stderr.decode(errors="replace")
        replies, at, data = [], 0, result.stdout
        for _ in scripts:
            value, at = corpus._parse(data, at)
            replies.append(value)
        assert at == len(data), "the host printed more replies than it was given scripts"
        return replies

    def __call__(self, script: str) -> object:
        if script not in self.replies:
            self.replies[script] = self._batch([script])[0]
        return self.replies[script]


def all_scripts() -> list[str]:
    return [corpus.script_of(body) for _, body in corpus.CASES] + [corpus.RESET]


def test_the_corpus_is_large_and_covers_all_four_libraries():
    libraries = {name.split(".")[0] for name, _ in corpus.CASES}
    assert libraries == {"bit", "struct", "cmsgpack", "cjson"}
    for library in libraries:
        assert sum(name.startswith(library + ".") for name, _ in corpus.CASES) >= 80, library


def test_every_case_replies_as_redis_server_7_does(host_binary, redis_server):
    host = HostRunner(host_binary, all_scripts())
    with raw_connection(redis_server.port) as connection:
        redis = corpus.resp_eval_runner(connection)
        differences = corpus.compare_runners(host, redis)
    assert not differences, f"{len(differences)} of {len(corpus.CASES)} cases differ (host, then redis):\n" + \
        "\n".join(differences[:40])


def test_errors_are_compared_by_message_without_redis_wrapping(host_binary, redis_server):
    host = HostRunner(host_binary, [corpus.script_of("return cjson.decode('[1,2')")])
    expected = corpus.ReplyError("Expected comma or array end but found T_END at character 5")
    assert corpus.normalize(host(corpus.script_of("return cjson.decode('[1,2')"))) == expected
    with raw_connection(redis_server.port) as connection:
        raw = corpus.resp_eval_runner(connection)("return cjson.decode('[1,2')")
    assert isinstance(raw, corpus.ReplyError) and raw.message.startswith("ERR user_script:1: ")
    assert corpus.normalize(raw) == expected


def test_a_case_that_differs_is_reported():
    """The comparison can fail: two runners that disagree on one case give one difference."""
    cases = [("same", "return 1"), ("differs", "return 2")]
    answers = {corpus.RESET: 1, corpus.script_of("return 1"): 1, corpus.script_of("return 2"): 2}
    other = {**answers, corpus.script_of("return 2"): 5}
    differences = corpus.compare_runners(answers.__getitem__, other.__getitem__, cases)
    assert [line.split(":")[0] for line in differences] == ["differs"]



def test_every_case_replies_through_goblin_eval_over_resp_as_redis_server_7_does(goblin, redis_server):
    """The corpus through goblin's own EVAL (the libraries inside its sandbox), raw RESP frames."""
    with raw_connection(goblin.port) as ours, raw_connection(redis_server.port) as theirs:
        differences = corpus.compare_runners(corpus.resp_eval_runner(ours), corpus.resp_eval_runner(theirs))
    assert not differences, f"{len(differences)} of {len(corpus.CASES)} cases differ (goblin, then redis):\n" + \
        "\n".join(differences[:40])


def client_eval_runner(client) -> corpus.Runner:
    """EVAL <script> 0 through a redis-py-shaped client; an error reply becomes a ReplyError."""
    def run(script: str) -> object:
        try:
            return client.eval(script, 0)
        except (redis.exceptions.ResponseError, goblin_ring.errors.ResponseError) as error:
            return corpus.ReplyError(str(error))
    return run


def test_every_case_replies_over_the_ring_as_redis_py_gets_them_from_redis_server(ring, redis_server):
    """The corpus through RingClient.eval against redis-py on redis-server: the same Python values."""
    theirs = redis.Redis(port=redis_server.port)
    try:
        differences = corpus.compare_runners(client_eval_runner(ring), client_eval_runner(theirs))
    finally:
        theirs.close()
    assert not differences, f"{len(differences)} of {len(corpus.CASES)} cases differ (ring, then redis-py):\n" + \
        "\n".join(differences[:40])
