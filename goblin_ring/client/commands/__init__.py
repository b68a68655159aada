"""goblin_ring.client.commands — the typed command API shared by RingClient, RespClient and
their pipelines, split per type as redis-py splits it.

One lowercase method per command, with redis-py's names, signatures and return types
(bytes or None for a bulk, int for an integer, list for an array, True for an OK that
redis-py turns into True), so code written for redis-py moves over unchanged. Each method
is written once: it builds the Redis argv and names the reply conversion; the transport's
`_execute(argv, convert)` does the rest (core.py).

    core.py      the transport hook, argument encoding and reply conversions
    server.py    ServerCommands: PING, ECHO, INFO, DBSIZE, FLUSHDB, SELECT, MEMORY USAGE, ...
    keys.py      KeyCommands: DEL, EXISTS, TYPE, KEYS, SCAN, RENAME, MOVE, EXPIRE, TTL, ...
    strings.py   StringCommands: SET, GET, GETEX, GETSET, MSET, INCRBY, APPEND, GETRANGE, LCS, ...
    bitmaps.py   BitmapCommands: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD (its builder), BITFIELD_RO
    hyperloglog.py HyperLogLogCommands: PFADD, PFCOUNT, PFMERGE
    geo.py       GeoCommands: GEOADD, GEODIST, GEOHASH, GEOPOS, GEORADIUS(BYMEMBER), GEOSEARCH(STORE)
    lists.py     ListCommands (blocking ones too) and the engine views client.pma / client.seg
    hashes.py    HashCommands: HSET, HGET, HGETALL, HSCAN, HRANDFIELD, field expiry (HEXPIRE, HTTL, ...)
    sets.py      SetCommands: SADD, SMEMBERS, SINTER, SSCAN, ... (Python sets where redis-py gives them)
    persistence.py PersistenceCommands: SAVE, BGSAVE, LASTSAVE, SHUTDOWN, DEBUG DIGEST / DIGEST-VALUE
    sortedsets.py SortedSetCommands: ZADD, ZSCORE, ZRANK, ZRANGE (all forms), ZPOPMIN, ZUNION, ZSCAN, ...
    pubsub.py    PubSubCommands: PUBLISH, SPUBLISH, PUBSUB CHANNELS/NUMSUB/NUMPAT/SHARDCHANNELS/SHARDNUMSUB
    streams.py   StreamCommands: XADD, XRANGE, XREAD, XREADGROUP, XACK, XPENDING, XCLAIM, XAUTOCLAIM, XINFO, ...
    arrays.py    ArrayCommands: the 18 AR* commands (ARSET, ARGET, ARSCAN, ARINSERT, ...)
    scripting.py ScriptingCommands: EVAL, EVALSHA, SCRIPT *, register_script (Script), lock() (redis-py's Lock); FUNCTION *, FCALL, FCALL_RO
"""

from __future__ import annotations

from .arrays import ArrayCommands
from .bitmaps import BitFieldOperation, BitmapCommands
from .core import CommandsCore, bool_ok, encode, raise_first_error
from .geo import GeoCommands
from .hashes import HashCommands
from .hyperloglog import HyperLogLogCommands
from .keys import KeyCommands
from .lists import EngineView, EngineViews, ListCommands
from .persistence import PersistenceCommands
from .pubsub import PubSubCommands
from .scripting import Script, ScriptingCommands
from .server import ServerCommands
from .sets import SetCommands
from .sortedsets import SortedSetCommands
from .streams import StreamCommands
from .strings import StringCommands


class Commands(ServerCommands, KeyCommands, StringCommands, BitmapCommands, HyperLogLogCommands, GeoCommands, ListCommands, HashCommands, SetCommands,
               SortedSetCommands, StreamCommands, PubSubCommands, PersistenceCommands, ArrayCommands,
               ScriptingCommands, EngineViews):
    """Every command group; a transport subclasses this and provides _execute."""


__all__ = ["ArrayCommands", "BitFieldOperation", "BitmapCommands", "Commands", "CommandsCore", "EngineView", "GeoCommands", "HashCommands", "HyperLogLogCommands", "KeyCommands",
           "ListCommands", "PersistenceCommands", "PubSubCommands", "Script", "ScriptingCommands", "ServerCommands", "SetCommands",
           "SortedSetCommands", "StreamCommands",
           "StringCommands", "bool_ok", "encode", "raise_first_error"]
