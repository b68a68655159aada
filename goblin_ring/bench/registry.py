"""registry.py — goblin-ring-bench's scenarios by name, as the CLI offers them.

Each scenario is a function (method, engines, progress) -> result dict (scenarios.py says
what the dict holds). The scenario modules import their shared helpers from scenarios.py;
this module imports every scenario, and nothing imports it but the CLI, so no scenario module
is in an import circle with the list of them.
"""

from __future__ import annotations

from typing import Callable

from .aof_rows import aof_write_cost
from .scenario_cache import cache_scenario
from .client_rows import client
from .scenario_eviction import eviction_scenario
from .scenario_array import array_scenario
from .scenario_hash import hash_scenario
from .scenario_persistence import persistence_scenario
from .scenario_probabilistic import geo_scenario, hyperloglog_scenario
from .scenario_pubsub import pubsub_scenario
from .scenario_script import script_scenario
from .scenario_set import set_scenario
from .scenario_stream import stream_scenario
from .scenario_zset import zset_scenario
from .scenario_zset_replay import zset_replay_scenario
from .scenarios import latency, list100k, pingpong
from .workqueue import workqueue

SCENARIOS: dict[str, Callable[..., dict]] = {
    "list100k": list100k,
    "pingpong": pingpong,
    "latency": latency,
    "workqueue": workqueue,
    "client": client,
    "hash": hash_scenario,
    "set": set_scenario,
    "zset": zset_scenario,
    "zset-replay": zset_replay_scenario,
    "aof": aof_write_cost,
    "persistence": persistence_scenario,
    "pubsub": pubsub_scenario,
    "array": array_scenario,
    "hyperloglog": hyperloglog_scenario,
    "geo": geo_scenario,
    "stream": stream_scenario,
    "script": script_scenario,
    "eviction": eviction_scenario,
    "cache": cache_scenario,
}
