"""Bad input over RESP from a raw socket: a truncated frame waits without disturbing other
clients, oversize lengths get Redis's protocol error and a closed connection, and the
server stays up with every other client's data intact. Error classes map by code."""

import pytest

from goblin_ring import ResponseError, WrongTypeError
from goblin_ring.errors import error_from_reply
from resp_wire import raw_connection


def test_a_truncated_frame_waits_and_others_are_served(goblin, resp):
    resp.rpush("kept", "v")
    slow = raw_connection(goblin.port)
    slow.sendall(b"*3\r\n$5\r\nRPUSH\r\n$4\r\nkept\r\n$9\r\nhalf")      # stops mid-bulk
    assert resp.lrange("kept", 0, -1) == [b"v"]                        # others unaffected
    slow.sendall(b"-done\r\n")
    assert slow.read_reply() == b":2\r\n"
    slow.close()
    assert resp.lrange("kept", 0, -1) == [b"v", b"half-done"]
    resp.delete("kept")


@pytest.mark.parametrize("frame, error", [
    (b"*1\r\n$536870913\r\n", b"-ERR Protocol error: invalid bulk length\r\n"),
    (b"*2147483648\r\n", b"-ERR Protocol error: invalid multibulk length\r\n"),   # above INT_MAX, as Redis 7
    (b"*1\r\n:5\r\n", b"-ERR Protocol error: expected '$', got ':'\r\n"),
    (b"ECHO \"open\r\n", b"-ERR Protocol error: unbalanced quotes in request\r\n"),
])
def test_protocol_errors_answer_and_close_and_the_server_stays_up(goblin, resp, frame, error):
    resp.rpush("survives", "x")
    sock = raw_connection(goblin.port)
    sock.sendall(frame)
    assert sock.read_until_closed() == error
    sock.close()
    assert resp.lrange("survives", 0, -1) == [b"x"]
    resp.delete("survives")


def test_inline_commands_work_as_redis_cli_and_telnet_send_them(goblin):
    sock = raw_connection(goblin.port)
    sock.sendall(b"RPUSH inline \"two words\" 'x'\r\nLRANGE inline 0 -1\nQUIT\r\n")
    assert sock.read_until_closed() == b":2\r\n*2\r\n$9\r\ntwo words\r\n$1\r\nx\r\n+OK\r\n"
    sock.close()


def test_error_classes_follow_the_error_code_and_the_text():
    assert isinstance(error_from_reply("WRONGTYPE Operation against a key", None), WrongTypeError)
    assert isinstance(error_from_reply("WRONGTYPE x", 2), WrongTypeError)
    error = error_from_reply("ERR no such key", 6)
    assert type(error) is ResponseError and error.code == 6
