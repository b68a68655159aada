"""streams.py — StreamCommands: the X* family with redis-py's names, signatures and reply shapes
(RESP2 callbacks: entries as (id, {field: value}) tuples, XREAD as [[stream, entries], ...],
XPENDING as dicts, XINFO as dicts with str keys), written once for both transports (core.py).
Over the ring every command travels as argv (a CommandRequest); the server is
native/commands/cmd_stream*.c.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ...errors import DataError
from .core import CommandsCore, bool_ok, encode


def _pairs_to_dict(reply: Any, decode_keys: bool = False) -> dict:
    if reply is None:
        return {}
    if isinstance(reply, dict):
        return {(k.decode() if decode_keys and isinstance(k, bytes) else k): v for k, v in reply.items()}
    keys = reply[::2]
    if decode_keys:
        keys = [k.decode() if isinstance(k, bytes) else k for k in keys]
    return dict(zip(keys, reply[1::2]))


def parse_stream_list(reply: Any) -> Any:
    """redis-py's parse_stream_list: [(id, {field: value}), ...]; a missing entry as (None, None)."""
    if reply is None:
        return None
    return [(r[0], _pairs_to_dict(r[1])) if r is not None else (None, None) for r in reply]


def parse_xread(reply: Any) -> Any:
    """RESP2's [[stream, entries], ...] (an empty list for nil); RESP3's map as redis-py's RESP3
    callback gives it."""
    if reply is None:
        return []
    if isinstance(reply, dict):
        return {key: [parse_stream_list(value)] for key, value in reply.items()}
    return [[r[0], parse_stream_list(r[1])] for r in reply]


def parse_xpending(reply: list) -> dict:
    consumers = [{"name": n, "pending": int(p)} for n, p in reply[3] or []]
    return {"pending": reply[0], "min": reply[1], "max": reply[2], "consumers": consumers}


def parse_xpending_range(reply: list) -> list:
    k = ("message_id", "consumer", "time_since_delivered", "times_delivered")
    return [dict(zip(k, r)) for r in reply]


def parse_list_of_dicts(reply: list) -> list:
    return [_pairs_to_dict(r, decode_keys=True) for r in reply]


def parse_xinfo_stream(reply: Any, full: bool = False) -> dict:
    data = _pairs_to_dict(reply, decode_keys=True)
    if not full:
        for edge in ("first-entry", "last-entry"):
            entry = data.get(edge)
            if entry is not None and entry[0] is not None:
                data[edge] = (entry[0], _pairs_to_dict(entry[1]))
        return data
    data["entries"] = {entry_id: _pairs_to_dict(entry) for entry_id, entry in data["entries"]}
    data["groups"] = [_pairs_to_dict(group, decode_keys=True) for group in data["groups"]]
    for group in data["groups"]:
        group["consumers"] = [_pairs_to_dict(c, decode_keys=True) for c in group["consumers"]]
    return data


def _trim_words(maxlen: Any, minid: Any, approximate: bool, limit: Any, command: str) -> list:
    if maxlen is not None and minid is not None:
        raise DataError("Only one of ```maxlen``` or ```minid``` may be specified")
    words: list = []
    if maxlen is not None:
        if not isinstance(maxlen, int) or maxlen < 0:
            raise DataError(f"{command} maxlen must be non-negative integer")
        words += [b"MAXLEN", *([b"~"] if approximate else []), encode(maxlen)]
    if minid is not None:
        words += [b"MINID", *([b"~"] if approximate else []), encode(minid)]
    if limit is not None:
        words += [b"LIMIT", encode(limit)]
    return words


def _streams_words(streams: Mapping) -> list:
    if not isinstance(streams, dict) or len(streams) == 0:
        raise DataError("XREAD streams must be a non empty dict")
    keys, ids = [], []
    for key, stream_id in streams.items():
        keys.append(encode(key))
        ids.append(encode(stream_id))
    return [b"STREAMS", *keys, *ids]


class StreamCommands(CommandsCore):
    def xadd(self, name: Any, fields: Mapping, id: Any = "*", maxlen: Any = None, approximate: bool = True,
             nomkstream: bool = False, minid: Any = None, limit: Any = None) -> Any:
        if type(fields) is dict and fields and maxlen is None and minid is None and limit is None and not nomkstream:
            argv = [b"XADD", encode(name), encode(id)]   # the plain form, without the option checks
            for pair in fields.items():
                argv += map(encode, pair)
            return self._execute(tuple(argv))
        words = _trim_words(maxlen, minid, approximate, limit, "XADD")
        if nomkstream:
            words.append(b"NOMKSTREAM")
        if not isinstance(fields, dict) or len(fields) == 0:
            raise DataError("XADD fields must be a non-empty dict")
        pairs = [encode(x) for pair in fields.items() for x in pair]
        return self._execute((b"XADD", encode(name), *words, encode(id), *pairs))

    def xlen(self, name: Any) -> int:
        return self._execute((b"XLEN", encode(name)))

    def xrange(self, name: Any, min: Any = "-", max: Any = "+", count: Any = None) -> list:
        words = [b"COUNT", encode(count)] if count is not None else []
        return self._execute((b"XRANGE", encode(name), encode(min), encode(max), *words), parse_stream_list)

    def xrevrange(self, name: Any, max: Any = "+", min: Any = "-", count: Any = None) -> list:
        words = [b"COUNT", encode(count)] if count is not None else []
        return self._execute((b"XREVRANGE", encode(name), encode(max), encode(min), *words), parse_stream_list)

    def xdel(self, name: Any, *ids: Any) -> int:
        return self._execute((b"XDEL", encode(name), *map(encode, ids)))

    def xtrim(self, name: Any, maxlen: Any = None, approximate: bool = True, minid: Any = None,
              limit: Any = None) -> int:
        if maxlen is None and minid is None:
            raise DataError("One of ```maxlen``` or ```minid``` must be specified")
        return self._execute((b"XTRIM", encode(name), *_trim_words(maxlen, minid, approximate, limit, "XTRIM")))

    def xsetid(self, name: Any, id: Any, entries_added: Any = None, max_deleted_id: Any = None) -> bool:
        words = ([b"ENTRIESADDED", encode(entries_added)] if entries_added is not None else []) + \
                ([b"MAXDELETEDID", encode(max_deleted_id)] if max_deleted_id is not None else [])
        return self._execute((b"XSETID", encode(name), encode(id), *words), bool_ok)

    def xread(self, streams: Mapping, count: Any = None, block: Any = None) -> Any:
        words: list = []
        if count is not None:
            if not isinstance(count, int) or count < 1:
                raise DataError("XREAD count must be a positive integer")
            words += [b"COUNT", encode(count)]
        if block is not None:
            if not isinstance(block, int) or block < 0:
                raise DataError("XREAD block must be a non-negative integer")
            words += [b"BLOCK", encode(block)]
        return self._execute((b"XREAD", *words, *_streams_words(streams)), parse_xread)

    def xreadgroup(self, groupname: Any, consumername: Any, streams: Mapping, count: Any = None, block: Any = None,
                   noack: bool = False) -> Any:
        words: list = [b"GROUP", encode(groupname), encode(consumername)]
        if count is not None:
            if not isinstance(count, int) or count < 1:
                raise DataError("XREADGROUP count must be a positive integer")
            words += [b"COUNT", encode(count)]
        if block is not None:
            if not isinstance(block, int) or block < 0:
                raise DataError("XREADGROUP block must be a non-negative integer")
            words += [b"BLOCK", encode(block)]
        if noack:
            words.append(b"NOACK")
        return self._execute((b"XREADGROUP", *words, *_streams_words(streams)), parse_xread)

    def xack(self, name: Any, groupname: Any, *ids: Any) -> int:
        return self._execute((b"XACK", encode(name), encode(groupname), *map(encode, ids)))

    def xgroup_create(self, name: Any, groupname: Any, id: Any = "$", mkstream: bool = False,
                      entries_read: Any = None) -> bool:
        words = ([b"MKSTREAM"] if mkstream else []) + ([b"ENTRIESREAD", encode(entries_read)]
                                                       if entries_read is not None else [])
        return self._execute((b"XGROUP", b"CREATE", encode(name), encode(groupname), encode(id), *words), bool_ok)

    def xgroup_setid(self, name: Any, groupname: Any, id: Any, entries_read: Any = None) -> bool:
        words = [b"ENTRIESREAD", encode(entries_read)] if entries_read is not None else []
        return self._execute((b"XGROUP", b"SETID", encode(name), encode(groupname), encode(id), *words), bool_ok)

    def xgroup_destroy(self, name: Any, groupname: Any) -> bool:
        return self._execute((b"XGROUP", b"DESTROY", encode(name), encode(groupname)), bool)

    def xgroup_createconsumer(self, name: Any, groupname: Any, consumername: Any) -> int:
        return self._execute((b"XGROUP", b"CREATECONSUMER", encode(name), encode(groupname), encode(consumername)))

    def xgroup_delconsumer(self, name: Any, groupname: Any, consumername: Any) -> int:
        return self._execute((b"XGROUP", b"DELCONSUMER", encode(name), encode(groupname), encode(consumername)))

    def xpending(self, name: Any, groupname: Any) -> dict:
        return self._execute((b"XPENDING", encode(name), encode(groupname)), parse_xpending)

    def xpending_range(self, name: Any, groupname: Any, min: Any, max: Any, count: int, consumername: Any = None,
                       idle: Any = None) -> list:
        words = [b"IDLE", encode(idle)] if idle is not None else []
        tail = [encode(consumername)] if consumername is not None else []
        return self._execute((b"XPENDING", encode(name), encode(groupname), *words, encode(min), encode(max),
                              encode(count), *tail), parse_xpending_range)

    def xclaim(self, name: Any, groupname: Any, consumername: Any, min_idle_time: int, message_ids: Sequence,
               idle: Any = None, time: Any = None, retrycount: Any = None, force: bool = False,
               justid: bool = False) -> list:
        if not isinstance(min_idle_time, int) or min_idle_time < 0:
            raise DataError("XCLAIM min_idle_time must be a non negative integer")
        if not isinstance(message_ids, (list, tuple)) or not message_ids:
            raise DataError("XCLAIM message_ids must be a non empty list or tuple of message IDs to claim")
        words: list = []
        for word, value in ((b"IDLE", idle), (b"TIME", time), (b"RETRYCOUNT", retrycount)):
            if value is not None:
                if not isinstance(value, int):
                    raise DataError(f"XCLAIM {word.decode().lower()} must be an integer")
                words += [word, encode(value)]
        words += ([b"FORCE"] if force else []) + ([b"JUSTID"] if justid else [])
        return self._execute((b"XCLAIM", encode(name), encode(groupname), encode(consumername), encode(min_idle_time),
                              *map(encode, message_ids), *words), None if justid else parse_stream_list)

    def xautoclaim(self, name: Any, groupname: Any, consumername: Any, min_idle_time: int, start_id: Any = "0-0",
                   count: Any = None, justid: bool = False) -> list:
        if not isinstance(min_idle_time, int) or min_idle_time < 0:
            raise DataError("XAUTOCLAIM min_idle_time must be a non negative integer")
        words: list = []
        if count is not None:
            if not isinstance(count, int) or count < 1:
                raise DataError("XAUTOCLAIM count must be an integer >= 0")
            words += [b"COUNT", encode(count)]
        if justid:
            words.append(b"JUSTID")

        def convert(reply: list) -> list:
            if justid:
                return reply[1]
            return [reply[0], parse_stream_list(reply[1]), *reply[2:]]
        return self._execute((b"XAUTOCLAIM", encode(name), encode(groupname), encode(consumername),
                              encode(min_idle_time), encode(start_id), *words), convert)

    def xinfo_groups(self, name: Any) -> list:
        return self._execute((b"XINFO", b"GROUPS", encode(name)), parse_list_of_dicts)

    def xinfo_consumers(self, name: Any, groupname: Any) -> list:
        return self._execute((b"XINFO", b"CONSUMERS", encode(name), encode(groupname)), parse_list_of_dicts)

    def xinfo_stream(self, name: Any, full: bool = False) -> dict:
        words = [b"FULL"] if full else []
        return self._execute((b"XINFO", b"STREAM", encode(name), *words), lambda r: parse_xinfo_stream(r, full))
