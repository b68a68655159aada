"""goblin-ring-bench array: a --quick run over goblin's two array engines on
both transports and from Python, with redis shown as X for every AR* row (never a substitute),
its LINDEX/LSET list baseline, the depth-1 append latency rows (classic, rt, rt-reserved with
VmLck, redis RPUSH) and the scenario's targets listed."""

from test_bench import ENGINES, check_document, run_bench

SHAPED = [f"{shape}: {label}" for shape in ("dense", "sparse") for label in (
    "population (ARMSET x128 pairs), values/s", "ARGET", "ARMGET 8", "ARGETRANGE 16", "ARCOUNT", "ARLEN",
    "ARSET (overwrite)", "ARDEL + ARSET restore (pair)", "ARINSERT (append)")]
GOBLIN_COLUMNS = [f"{engine} {kind}" for engine in ("goblin-resp", "goblin-ring-native", "goblin-ring pipeline")
                  for kind in ("classic", "rt")]


def test_array_quick_run_reports_both_engines_x_for_redis_the_append_tail_and_issue_19_targets(tmp_path):
    text, document = run_bench(tmp_path, "array")
    check_document(document, "array")
    rows = {(row["column"], row["operation"]): row for row in document["rows"]}
    for operation in SHAPED:
        assert f"| {operation} |" in text, operation
        for column in GOBLIN_COLUMNS:
            assert rows[(column, operation)]["status"] == "ok", (column, operation, rows[(column, operation)])
    if "redis" in ENGINES:
        assert all(rows[("redis", operation)]["status"] == "n/a" for operation in SHAPED)
        assert "| dense: ARGET | " in text and text.split("| dense: ARGET |")[1].split("\n")[0].rstrip().endswith("| X |")
        assert rows[("redis", "LINDEX N/2 (list baseline)")]["status"] == "ok"
        assert "| redis | rpush | resp |" in text
    for column, kind, transport in (("goblin-resp classic", "classic", "resp"), ("goblin-resp rt", "rt-reserved", "resp"),
                                    ("goblin-ring-native rt", "rt", "ring"),
                                    ("goblin-ring-native rt", "rt-reserved", "ring")):
        assert f"| {column} | {kind} | {transport} |" in text, (column, kind)
    reserved = text.split("| goblin-ring-native rt | rt-reserved | ring |")[1].split("\n")[0]
    assert int(reserved.rstrip(" |").rsplit("|", 1)[1]) > 0   # VmLck after the LOCKed reservation
    targets = {target["target"] for target in document["targets"]}
    assert "Classic sparse stride 16: <= 30 RSS-delta bytes per value" in targets
    assert "rt-reserved P99.99 below classic's over ring (rt-reserved / classic)" in targets
