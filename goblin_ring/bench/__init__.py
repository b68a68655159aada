"""goblin_ring.bench — goblin-ring-bench, the microbenchmark CLI.

Scenarios (scenarios.py): list100k, the reference 100k-list table; pingpong, the transport
floor; latency, depth-1 RPUSH percentiles. Engines (engines.py) are goblin over the ring
(Python RingClient, and the C load generator native/client/bench_load.c), goblin over RESP, and the
incumbents redis-server and valkey-server, each started here on a free port (servers.py),
pinned, one at a time. report.py writes Markdown, JSON, CSV and the ratio chart.
"""
