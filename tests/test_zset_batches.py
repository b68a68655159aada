"""The ring client's sorted-set batch calls: zadd_many, zscore_many and
zrange_arrays, one C call each, checked against what the same server answers over RESP to the
plain commands: scores exact (any double, inf), ZADD's flags, missing
members and keys, WRONGTYPE, both encodings (compact and standard), and replies larger than one
ring message."""

import math

import numpy
import pytest

from goblin_ring import DataError, ResponseError


def random_scores(count, seed=5):
    rng = numpy.random.default_rng(seed)
    scores = rng.standard_normal(count) * 10.0 ** rng.integers(-300, 300, count)
    scores[:6] = [0.0, -0.0, math.inf, -math.inf, 2 ** 53, -(2 ** 53) - 2]
    scores[6:10] = [0.1, 1 / 3, 5e-324, 1.7976931348623157e308]
    return scores


@pytest.mark.parametrize("count", [100, 3000], ids=["compact", "standard"])
def test_zadd_many_stores_every_score_exactly_as_zadd_would(ring, resp, count):
    ring.flushall()
    members = numpy.array([b"m%07d" % i for i in range(count)], dtype="S8")
    scores = random_scores(count)
    assert ring.zadd_many("z", members, scores) == count
    assert resp.zcard("z") == count
    for i in (*range(12), count // 2, count - 1):
        stored = resp.zscore("z", members[i])
        assert stored == scores[i], i           # -0.0 reads back as 0, as Redis prints it
    expected = resp.zrange("z", 0, -1, withscores=True)
    got_members, got_scores = ring.zrange_arrays("z", 0, -1)
    assert got_members == [m for m, _ in expected]
    assert got_scores.dtype == numpy.float64 and got_scores.tolist() == [s for _, s in expected]
    assert resp.execute_command("OBJECT", "ENCODING", "z") == (b"listpack" if count <= 128 else b"skiplist")


def test_zadd_many_takes_sequences_and_counts_what_zadd_counts(ring, resp):
    ring.flushall()
    assert ring.zadd_many("z", [b"a", "b", b"c"], [1, 2.5, 3]) == 3
    assert ring.zadd_many("z", [b"a", b"d"], numpy.array([10.0, 4.0]), per_message=1) == 1   # a rescored
    assert resp.zrange("z", 0, -1, withscores=True) == [(b"b", 2.5), (b"c", 3.0), (b"d", 4.0), (b"a", 10.0)]
    assert ring.zadd_many("z", [b"a", b"e"], [11, 5], ch=True) == 2          # a changed, e added
    assert ring.zadd_many("z", [b"a", b"f"], [12, 6], xx=True) == 0          # f not added
    assert ring.zadd_many("z", [b"a", b"g"], [13, 7], nx=True) == 1          # a not rescored
    assert ring.zadd_many("z", [b"a", b"b"], [1, 100], gt=True, ch=True) == 1   # only b grew
    assert resp.zscore("z", "a") == 12.0 and resp.zscore("z", "b") == 100.0 and resp.zscore("z", "f") is None
    assert ring.zadd_many("z", [], []) == 0
    with pytest.raises(ValueError):
        ring.zadd_many("z", [b"a", b"b"], [1.0])
    with pytest.raises(DataError):
        ring.zadd_many("z", [b"a"], [1.0], nx=True, xx=True)
    with pytest.raises(ResponseError, match="not a valid float"):
        ring.zadd_many("z", [b"x"], [math.nan])
    assert resp.zscore("z", "x") is None


def test_zscore_many_reads_every_score_nan_where_there_is_none(ring, resp):
    ring.flushall()
    resp.zadd("z", {f"m{i}": i / 4 for i in range(500)})
    asked = [b"m%d" % i for i in range(0, 500, 7)] + [b"absent", b"m499"]
    got = ring.zscore_many("z", asked, per_message=16)
    assert got.dtype == numpy.float64 and len(got) == len(asked)
    assert got[:-2].tolist() == [i / 4 for i in range(0, 500, 7)]
    assert math.isnan(got[-2]) and got[-1] == 499 / 4
    assert numpy.isnan(ring.zscore_many("nokey", numpy.array([b"a", b"b"]))).all()
    assert len(ring.zscore_many("z", [])) == 0


def test_zrange_arrays_answers_as_zrange_withscores_for_any_range(ring, resp):
    ring.flushall()
    resp.zadd("z", {f"m{i:03d}": (i * 37) % 101 - 50.5 for i in range(300)})
    for start, end in ((0, -1), (10, 19), (-5, -1), (290, 400), (5, 2), (-1000, 3)):
        for desc in (False, True):
            expected = resp.zrange("z", start, end, desc=desc, withscores=True)
            members, scores = ring.zrange_arrays("z", start, end, desc=desc)
            assert members == [m for m, _ in expected] and scores.tolist() == [s for _, s in expected]
    members, scores = ring.zrange_arrays("nokey", 0, -1)
    assert members == [] and len(scores) == 0
    with pytest.raises(DataError):
        ring.zrange_arrays("z", "0", -1)


def test_zrange_arrays_reply_larger_than_one_ring_message(ring, resp):
    ring.flushall()
    count = 60_000
    members = numpy.array([b"member-%09d" % i for i in range(count)], dtype="S16")
    scores = numpy.arange(count, dtype=numpy.float64) * 1.5
    assert ring.zadd_many("big", members, scores) == count
    got_members, got_scores = ring.zrange_arrays("big", 0, -1)
    assert len(got_members) == count and got_members[12345] == members[12345]
    assert numpy.array_equal(got_scores, scores)
    assert numpy.array_equal(ring.zscore_many("big", members), scores)


def test_batches_on_another_type_raise_wrongtype_and_leave_it(ring, resp):
    ring.flushall()
    resp.set("s", "x")
    for call in (lambda: ring.zadd_many("s", [b"a"], [1.0]), lambda: ring.zscore_many("s", [b"a"]),
                 lambda: ring.zrange_arrays("s", 0, -1)):
        with pytest.raises(ResponseError, match="^WRONGTYPE"):
            call()
    assert resp.get("s") == b"x"
    assert ring.ping()                          # the session is usable after each error


def test_zincrby_and_zscore_plain_forms_answer_as_the_shared_methods(goblin, ring, resp):
    from goblin_ring import ConnectionError as GoblinConnectionError, RingClient
    from goblin_ring.client.commands.sortedsets import SortedSetCommands

    ring.flushall()
    assert ring.zincrby("z", 1, 42) == 1.0 and ring.zincrby(b"z", 2.5, b"42") == 3.5
    assert ring.zincrby("z", -0.5, "x") == SortedSetCommands.zscore(ring, "z", "x") == -0.5
    assert ring.zscore("z", 42) == 3.5 and ring.zscore("z", "absent") is None and ring.zscore("nokey", "a") is None
    with pytest.raises(ResponseError, match="^ERR value is not a valid float$"):
        ring.zincrby("z", "abc", "x")
    resp.set("s", "v")
    for call in (lambda: ring.zincrby("s", 1, "a"), lambda: ring.zscore("s", "a")):
        with pytest.raises(ResponseError, match="^WRONGTYPE"):
            call()
    other = RingClient(name=goblin.name, runtime_dir=goblin.runtime_dir)
    other.close()
    for call in (lambda: other.zincrby("z", 1, "a"), lambda: other.zscore("z", "a")):
        with pytest.raises(GoblinConnectionError):
            call()
