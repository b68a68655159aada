"""The raw-RESP test harness (resp_wire.py) itself: frame_end finds where one RESP2/RESP3
reply ends, waits on a partial one, and refuses bytes that are not RESP, so the tests that
read replies frame by frame cannot pass on a misread."""

import pytest

from resp_wire import encode_command, frame_end

WHOLE_FRAMES = [
    b"+OK\r\n", b"-ERR no\r\n", b":42\r\n", b"_\r\n", b",3.5\r\n", b"#t\r\n", b"(123\r\n",
    b"$-1\r\n", b"$0\r\n\r\n", b"$5\r\nhe\r\nl\r\n", b"=8\r\ntxt:abcd\r\n", b"*-1\r\n", b"*0\r\n",
    b"*2\r\n$1\r\na\r\n*1\r\n:1\r\n", b"%1\r\n$1\r\nk\r\n~2\r\n:1\r\n:2\r\n",
    b"|1\r\n+key\r\n+value\r\n:7\r\n",    # an attribute, then the reply it annotates
]


@pytest.mark.parametrize("frame", WHOLE_FRAMES)
def test_a_whole_frame_ends_at_its_last_byte_and_every_prefix_waits(frame):
    assert frame_end(frame + b"+NEXT\r\n") == len(frame)
    for cut in range(len(frame)):
        assert frame_end(frame[:cut]) is None, frame[:cut]


def test_bytes_that_are_not_resp_are_refused():
    with pytest.raises(ValueError):
        frame_end(b"hello\r\n")


def test_a_command_is_encoded_as_a_multibulk_of_bytes():
    assert encode_command("SET", b"k", 5) == b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\n5\r\n"
    assert frame_end(encode_command("PING")) == len(encode_command("PING"))
