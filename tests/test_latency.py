"""LATENCY and INFO latencystats against redis-server 7.0: the monitor (latency-monitor-threshold,
LATEST, HISTORY, GRAPH, DOCTOR, RESET) fed by the same slow command on both servers (DEBUG SLEEP),
and the per-command histograms (LATENCY HISTOGRAM, latency-tracking, the percentiles INFO reports)."""

from __future__ import annotations

import pytest

from goblin_ring import ResponseError, RespClient
from servers import RedisServer

REDIS_LABELS = {((1032 << k) - 1) // 1000 for k in range(40)}   # 1, 2, 4, 8, 16, 33, 66, 132, ...


@pytest.fixture
def both(resp):
    server = RedisServer("redis-server", "--enable-debug-command", "yes").start()
    reference = RespClient(port=server.port, socket_timeout=10)
    try:
        for client in (reference, resp):
            client.config_set("latency-monitor-threshold", "0")
            client.execute_command("LATENCY", "RESET")
        yield reference, resp
    finally:
        resp.config_set("latency-monitor-threshold", "0")
        resp.execute_command("LATENCY", "RESET")
        reference.close()
        server.stop()


def raw(client, *argv):
    try:
        return ("ok", client.execute_command(*argv))
    except ResponseError as error:
        return ("error", str(error))


def test_the_monitor_records_a_slow_command_and_reports_it_as_redis(both):
    reference, goblin = both
    assert raw(goblin, "LATENCY", "DOCTOR") == raw(reference, "LATENCY", "DOCTOR")   # disabled: the same words
    for client in (reference, goblin):
        client.config_set("latency-monitor-threshold", "5")
        client.execute_command("DEBUG", "SLEEP", "0.03")
    for client in (reference, goblin):
        latest = client.execute_command("LATENCY", "LATEST")
        assert len(latest) == 1 and latest[0][0] == b"command" and latest[0][2] >= 30 and latest[0][3] >= 30
        history = client.execute_command("LATENCY", "HISTORY", "command")
        assert len(history) == 1 and history[0][1] >= 30
    assert raw(goblin, "LATENCY", "HISTORY", "nope") == raw(reference, "LATENCY", "HISTORY", "nope")
    ours = goblin.execute_command("LATENCY", "GRAPH", "command").decode().split("\n")
    theirs = reference.execute_command("LATENCY", "GRAPH", "command").decode().split("\n")
    assert ours[0].startswith("command - high ") and ours[1] == "-" * 80
    assert ours[2:6] == theirs[2:6]           # the four sparkline rows of one sample
    assert ours[6] == theirs[6] == " "        # the blank row above the labels
    assert ours[-2] == theirs[-2] == "s"      # "<n>s" written downwards
    doctor = goblin.execute_command("LATENCY", "DOCTOR").decode()
    assert doctor.startswith("Dave, I have observed latency spikes in this Redis instance.")
    assert "1. command: 1 latency spikes" in doctor
    for argv in (("LATENCY", "GRAPH", "nope"), ("LATENCY", "HISTORY"), ("LATENCY", "LATEST", "x"),
                 ("LATENCY", "NOPE"), ("LATENCY", "RESET", "nope"), ("LATENCY", "RESET", "command"),
                 ("LATENCY", "LATEST"), ("LATENCY", "GRAPH", "command")):
        assert raw(goblin, *argv) == raw(reference, *argv), argv


def test_histograms_count_every_call_in_redis_buckets(both):
    reference, goblin = both
    goblin.execute_command("CONFIG", "RESETSTAT")
    for i in range(500):
        goblin.set(f"h{i}", "v")
    histogram = goblin.execute_command("LATENCY", "HISTOGRAM", "set", "nosuchcommand")
    histogram = dict(zip(histogram[::2], histogram[1::2])) if isinstance(histogram, list) else histogram
    assert list(histogram) == [b"set"]
    entry = histogram[b"set"]
    entry = dict(zip(entry[::2], entry[1::2])) if isinstance(entry, list) else entry
    assert entry[b"calls"] == 500
    buckets = entry[b"histogram_usec"]
    pairs = list(zip(buckets[::2], buckets[1::2])) if isinstance(buckets, list) else list(buckets.items())
    labels, counts = [p[0] for p in pairs], [p[1] for p in pairs]
    assert set(labels) <= REDIS_LABELS and labels == sorted(labels)
    assert counts == sorted(counts) and counts[-1] == 500            # cumulative, ending at every call
    stats = goblin.info("latencystats")
    line = stats["latency_percentiles_usec_set"]
    assert set(line) == {"p50", "p99", "p99.9"} and 0 < line["p50"] <= line["p99"] <= line["p99.9"]
    for argv in (("CONFIG", "SET", "latency-tracking-info-percentiles", "50 101"),
                 ("CONFIG", "SET", "latency-tracking-info-percentiles", "x"),
                 ("CONFIG", "SET", "latency-tracking-info-percentiles", "90 99.99"),
                 ("CONFIG", "GET", "latency-tracking-info-percentiles"),
                 ("CONFIG", "SET", "latency-monitor-threshold", "-1")):
        assert raw(goblin, *argv) == raw(reference, *argv), argv
    assert set(goblin.info("latencystats")["latency_percentiles_usec_set"]) == {"p90", "p99.99"}
    goblin.config_set("latency-tracking-info-percentiles", "50 99 99.9")
    goblin.config_set("latency-tracking", "no")
    try:
        goblin.set("after", "v")
        entry = goblin.execute_command("LATENCY", "HISTOGRAM", "set")
        flat = entry[1] if isinstance(entry, list) else entry[b"set"]
        calls_in_buckets = (flat[3][-1] if isinstance(flat, list) else list(flat[b"histogram_usec"].values())[-1])
        assert calls_in_buckets == 500                                  # the untracked call is not in them
    finally:
        goblin.config_set("latency-tracking", "yes")
