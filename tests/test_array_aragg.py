"""ARAGG (Redis 8.10's array aggregate) and ARGREP's RANGE predicate over both transports (the
`client` fixture is parametrised over the ring and RESP): a random model test against a Python
reading of the same grammar (random sparse arrays of integers, decimals and words; random
ranges, predicates, AND/OR, LIMIT, NOCASE and operation lists), the error replies, missing keys,
WRONGTYPE, and the COMMAND INFO / DOCS rows. No Redis or valkey build here has arrays, so the
reference is redis/redis's aragg.json (arity, flags, reply shapes) and ARGREP's/AROP's texts."""

from __future__ import annotations

import fnmatch
import math
import random
import re

import pytest

from goblin_ring import ResponseError
from servers import GoblinServer

INT = re.compile(rb"-?(0|[1-9][0-9]*)\Z")
WORDS = [b"apple", b"Apple", b"banana", b"x1", b"cherry", b"BANANA", b"12abc", b"", b"a b"]


@pytest.fixture(scope="module")
def goblin(tmp_path_factory):
    with GoblinServer(tmp_path_factory.mktemp("runtime")).start() as server:
        yield server


def error_of(call, *args) -> str:
    with pytest.raises(ResponseError) as caught:
        call(*args)
    text = str(caught.value)
    return text[4:] if text.startswith("ERR ") else text


# ---- the model ----

def number_of(value: bytes):
    """AROP's reading: an int64, else a whole-text float (the generator only makes forms strtold
    and float() agree on), else None."""
    if INT.match(value) and -2**63 <= int(value) < 2**63:
        return int(value)
    try:
        return float(value) if value and not value[:1].isspace() else None
    except ValueError:
        return None


def fold(text: bytes, nocase: bool) -> bytes:
    return text.lower() if nocase else text


def predicate_hit(predicate: tuple, value: bytes, nocase: bool) -> bool:
    kind = predicate[0]
    if kind == "RANGE":
        number = number_of(value)
        if number is None:
            return False
        low, high = float(predicate[1]), float(predicate[2])
        return low < number < high if len(predicate) == 4 else low <= number <= high
    pattern = predicate[1].encode()
    if kind == "EXACT":
        return fold(value, nocase) == fold(pattern, nocase)
    if kind == "MATCH":
        return fold(pattern, nocase) in fold(value, nocase)
    if kind == "GLOB":
        return fnmatch.fnmatchcase(fold(value, nocase).decode(), fold(pattern, nocase).decode())
    return re.search(pattern, value, re.IGNORECASE if nocase else 0) is not None


def visited(array: dict, start, end) -> list:
    """The set indexes from start to end in walk order ("-"/"+": the first and last index)."""
    if not array:
        return []
    last = max(array)
    start = 0 if start == "-" else last if start == "+" else start
    end = 0 if end == "-" else last if end == "+" else end
    low, high = min(start, end), max(start, end)
    return sorted((i for i in array if low <= i <= high), reverse=start > end)


def model_matches(array, start, end, predicates, combinator, limit, nocase) -> list:
    hits = []
    for index in visited(array, start, end):
        results = [predicate_hit(p, array[index], nocase) for p in predicates]
        if not predicates or (all(results) if combinator == "AND" else any(results)):
            hits.append(index)
            if limit is not None and len(hits) == limit:
                break
    return hits


def model_aggregate(values: list, operations: list) -> list:
    numbers = [n for n in map(number_of, values) if n is not None]
    bits = [n if isinstance(n, int) else int(n) for n in numbers]
    replies = []
    for op in operations:
        if op == "COUNT":
            replies.append(len(values))
        elif op in ("AND", "OR", "XOR"):
            if not bits:
                replies.append(None)
                continue
            total = bits[0]
            for b in bits[1:]:
                total = total & b if op == "AND" else total | b if op == "OR" else total ^ b
            replies.append(total)
        elif not numbers:
            replies.append(None)
        else:
            replies.append({"SUM": math.fsum(numbers), "MIN": min(numbers), "MAX": max(numbers),
                            "AVG": math.fsum(numbers) / len(numbers)}[op])
    return replies


def random_value(rng: random.Random) -> bytes:
    kind = rng.random()
    if kind < 0.4:
        return str(rng.randint(-60, 60)).encode()
    if kind < 0.7:
        return f"{rng.randint(-600, 600) / 10}".encode()
    return rng.choice(WORDS)


def random_predicate(rng: random.Random) -> tuple:
    kind = rng.choice(["RANGE", "RANGE", "EXACT", "MATCH", "GLOB", "RE"])
    if kind == "RANGE":
        low, high = sorted(rng.choice([rng.randint(-60, 60), rng.randint(-600, 600) / 10]) for _ in range(2))
        if rng.random() < 0.1:
            low, high = high, low                         # an empty range
        if rng.random() < 0.1:
            low = "-inf"
        if rng.random() < 0.1:
            high = "+inf"
        return ("RANGE", str(low), str(high), True) if rng.random() < 0.4 else ("RANGE", str(low), str(high))
    return (kind, rng.choice({"EXACT": ["apple", "BANANA", "12", "-3.5"], "MATCH": ["an", "A", "1", "."],
                              "GLOB": ["a*", "*an*", "?1", "*.5"], "RE": ["^a", "[0-9]$", "^-", "n{2}"]}[kind]))


def same(reply, expected) -> bool:
    if expected is None or reply is None:
        return reply is expected
    if isinstance(expected, int) and not isinstance(expected, bool) and isinstance(reply, int):
        return reply == expected
    return math.isclose(float(reply), float(expected), rel_tol=1e-12, abs_tol=1e-9)


def test_aragg_and_argrep_range_agree_with_a_model_over_random_arrays(client):
    rng = random.Random(36)
    for round_ in range(12):
        array = {rng.randint(0, 80): random_value(rng) for _ in range(rng.randint(0, 50))}
        client.delete("m")
        for index, value in array.items():
            client.arset("m", index, value)
        for _ in range(40):
            start = rng.choice(["-", "+", rng.randint(0, 90)])
            end = rng.choice(["-", "+", rng.randint(0, 90)])
            predicates = [random_predicate(rng) for _ in range(rng.choice([0, 1, 1, 2, 3]))]
            combinator = rng.choice([None, "AND", "OR"])
            limit = rng.choice([None, None, rng.randint(1, 10)])
            nocase = rng.random() < 0.3
            operations = rng.sample(["SUM", "MIN", "MAX", "COUNT", "AVG", "AND", "OR", "XOR"], rng.randint(1, 4))
            if rng.random() < 0.2:
                operations.append(operations[0])            # an operation twice: replied twice
            hits = model_matches(array, start, end, predicates, combinator, limit, nocase)
            expected = model_aggregate([array[i] for i in hits], operations)
            got = client.aragg("m", start, end, operations, predicates, combinator=combinator, limit=limit,
                               nocase=nocase)
            context = (round_, array, start, end, predicates, combinator, limit, nocase, operations)
            assert len(got) == len(operations), context
            assert all(same(g, e) for g, e in zip(got, expected)), (got, expected, context)
            if predicates:
                assert client.argrep("m", start, end, predicates, combinator=combinator, limit=limit,
                                     nocase=nocase) == hits, context


def test_aragg_reply_shapes_and_number_formats(client):
    client.execute_command("ARMSET", "t", 0, "20.1", 1, "45.0", 2, "29.9", 3, "35.2", 5, "abc", 6, "7")
    assert client.execute_command("ARGREP", "t", "-", "+", "RANGE", 30, 40) == [3]
    assert client.aragg("t", "-", "+", ["SUM", "MIN", "MAX", "COUNT", "AVG", "AND", "OR", "XOR"]) == \
        [b"137.2", b"7", b"45", 6, b"27.44", 20 & 45 & 29 & 35 & 7, 20 | 45 | 29 | 35 | 7, 20 ^ 45 ^ 29 ^ 35 ^ 7]
    # EXCLUSIVE drops both bounds; COUNT counts text that passes the predicates, the numbers skip it
    assert client.aragg("t", 0, 6, ["COUNT", "SUM", "AVG"], [("RANGE", "20.1", "35.2", True)]) == [1, b"29.9", b"29.9"]
    assert client.aragg("t", 0, 6, ["COUNT", "SUM", "AND"], [("EXACT", "abc")]) == [1, None, None]
    assert client.aragg("t", 0, 6, ["COUNT", "MAX"], [("RANGE", "-inf", "+inf")]) == [5, b"45"]
    assert client.aragg("t", 0, 6, ["COUNT", "MIN"], [("RANGE", "50", "10")]) == [0, None]
    # LIMIT stops the walk after that many matches, in walk order (reversed when start > end)
    assert client.aragg("t", "+", "-", ["COUNT", "SUM"], limit=2) == [2, b"7"]
    assert client.aragg("t", "+", "-", ["COUNT", "SUM"], limit=3) == [3, b"42.2"]
    assert client.aragg("t", "-", "+", ["SUM"], [("RANGE", 0, 100), ("MATCH", ".")], combinator="AND") == [b"130.2"]
    assert client.aragg("t", "-", "+", ["COUNT"], [("EXACT", "ABC"), ("RANGE", 40, 50)]) == [1]
    assert client.aragg("t", "-", "+", ["COUNT"], [("EXACT", "ABC"), ("RANGE", 40, 50)], nocase=True) == [2]
    # words and case: the operations and keywords are case-insensitive
    assert client.execute_command("ARAGG", "t", "-", "+", "range", "1", "8", "exclusive", "aggregate", "count", "max") \
        == [1, b"7"]
    assert client.execute_command("ARGREP", "t", "-", "+", "RANGE", "7", "7", "WITHVALUES") == [[6, b"7"]]
    assert client.execute_command("ARGREP", "t", "-", "+", "RANGE", "7", "7", "EXCLUSIVE") == []


def test_aragg_on_a_missing_key_and_the_wrong_type(client):
    assert client.aragg("none", "-", "+", ["COUNT", "SUM", "MIN", "MAX", "AVG", "AND", "OR", "XOR"]) == \
        [0, None, None, None, None, None, None, None]
    assert client.aragg("none", 0, 10, ["COUNT"], [("RANGE", 1, 2)]) == [0]
    assert client.argrep("none", "-", "+", [("RANGE", 1, 2)]) == []
    client.set("s", "1")
    assert error_of(client.aragg, "s", 0, 10, ["COUNT"]).startswith("WRONGTYPE")
    assert error_of(client.argrep, "s", 0, 10, [("RANGE", 1, 2)]).startswith("WRONGTYPE")


def test_aragg_and_range_errors(client):
    client.arset("e", 0, "1", "2")
    run = client.execute_command
    assert error_of(run, "ARAGG", "e", 0, 9, "AGGREGATE") == "wrong number of arguments for 'aragg' command"
    assert error_of(run, "ARAGG", "e", 0, 9, "COUNT", "SUM") == "syntax error"            # no AGGREGATE
    assert error_of(run, "ARAGG", "e", 0, 9, "LIMIT", 2, "AGGREGATE") == "syntax error"   # no operation
    assert error_of(run, "ARAGG", "e", 0, 9, "AGGREGATE", "COUNT", "MEDIAN") == "unknown operation"
    assert error_of(run, "ARAGG", "e", 0, 9, "WITHVALUES", "AGGREGATE", "COUNT") == "syntax error"
    assert error_of(run, "ARAGG", "e", 0, 9, "BOGUS", "AGGREGATE", "COUNT") == "syntax error"
    assert error_of(run, "ARAGG", "e", 0, 9, "RANGE", "x", 1, "AGGREGATE", "COUNT") == "min or max is not a float"
    assert error_of(run, "ARAGG", "e", 0, 9, "RANGE", 1, "nan", "AGGREGATE", "COUNT") == "min or max is not a float"
    assert error_of(run, "ARAGG", "e", 0, 9, "RANGE", 1, "AGGREGATE", "COUNT") == "min or max is not a float"
    assert error_of(run, "ARAGG", "e", 0, 9, "LIMIT", 0, "AGGREGATE", "COUNT") == "LIMIT must be positive"
    assert error_of(run, "ARAGG", "e", 0, 9, "LIMIT", "x", "AGGREGATE", "COUNT") == \
        "value is not an integer or out of range"
    assert error_of(run, "ARAGG", "e", "x", 9, "AGGREGATE", "COUNT") == "invalid array index"
    assert error_of(run, "ARAGG", "e", 0, 9, "RE", "", "AGGREGATE", "COUNT") == "regular expression is empty"
    many = [word for _ in range(251) for word in ("RANGE", 0, 1)]
    assert error_of(run, "ARAGG", "e", 0, 9, *many, "AGGREGATE", "COUNT") == "too many predicates, maximum is 250"
    assert run("ARAGG", "e", 0, 9, *many[:750], "AGGREGATE", "COUNT") == [1]   # 250 predicates: the limit itself
    assert error_of(run, "ARGREP", "e", 0, 9, "RANGE", 1) == "syntax error"
    assert error_of(run, "ARGREP", "e", 0, 9, "RANGE", "a", "b") == "min or max is not a float"
    assert error_of(run, "ARGREP", "e", 0, 9, "EXCLUSIVE", "MATCH", "1") == "syntax error"


def test_command_info_and_docs_rows(client):
    info = client.execute_command("COMMAND", "INFO", "aragg")[0]
    assert info[0] in (b"aragg", "aragg") and info[1] == -6 and info[3:6] == [1, 1, 1]
    assert [bytes(f) if isinstance(f, bytes) else f.encode() for f in info[2]] == [b"readonly"]
    docs = client.execute_command("COMMAND", "DOCS", "aragg")
    row = dict(zip(docs[1][::2], docs[1][1::2]))
    assert row[b"since"] == b"8.10.0" and row[b"group"] == b"array"
    names = [dict(zip(a[::2], a[1::2]))[b"name"] for a in row[b"arguments"]]
    assert names[:4] == [b"key", b"start", b"end", b"predicate"] and b"aggregate" in names
