"""geo.py — GeoCommands: GEOADD, GEODIST, GEOHASH, GEOPOS, GEORADIUS, GEORADIUSBYMEMBER,
GEOSEARCH and GEOSEARCHSTORE with redis-py's names, signatures, client-side DataErrors and reply
conversions (positions as (longitude, latitude) float tuples, distances as floats, geohashes as
str), written once for both transports (see core.py).

    r.geoadd("Sicily", (13.361389, 38.115556, "Palermo", 15.087269, 37.502669, "Catania"))
    r.geodist("Sicily", "Palermo", "Catania", unit="km")          # 166.2742
    r.geosearch("Sicily", longitude=15, latitude=37, radius=200, unit="km", withdist=True)
"""

from __future__ import annotations

from typing import Any, Sequence

from ...errors import DataError
from .core import CommandsCore, encode

UNITS = ("m", "km", "mi", "ft")


def _text(value: Any) -> Any:
    return value.decode() if isinstance(value, bytes) else value


def _positions(reply: list) -> list:
    return [(float(p[0]), float(p[1])) if p is not None else None for p in reply]


def _search_result(withdist: bool, withcoord: bool, withhash: bool, store: bool = False):
    """redis-py's parse_geosearch_generic: plain members, or per member [member, dist?, hash?,
    (lon, lat)?] cast in that order; a STORE form's count as it is."""
    if store or not (withdist or withcoord or withhash):
        return None
    casts = [lambda member: member]
    if withdist:
        casts.append(float)
    if withhash:
        casts.append(int)
    if withcoord:
        casts.append(lambda ll: (float(ll[0]), float(ll[1])))
    return lambda reply: [[cast(value) for cast, value in zip(casts, item)] for item in reply]


def _unit(unit: Any) -> bytes:
    if unit and unit.lower() not in UNITS:
        raise DataError("GEORADIUS invalid unit")
    return encode(unit) if unit else b"m"


class GeoCommands(CommandsCore):
    def geoadd(self, name: Any, values: Sequence, nx: bool = False, xx: bool = False, ch: bool = False) -> int:
        """Add (longitude, latitude, member) triples, given flat; the number added (with ch: changed too)."""
        if nx and xx:
            raise DataError("GEOADD allows either 'nx' or 'xx', not both")
        if len(values) % 3 != 0:
            raise DataError("GEOADD requires places with lon, lat and name values")
        words = [b"NX"] * nx + [b"XX"] * xx + [b"CH"] * ch
        return self._execute((b"GEOADD", encode(name), *words, *(encode(v) for v in values)))

    def geodist(self, name: Any, place1: Any, place2: Any, unit: Any = None) -> float | None:
        if unit and unit.lower() not in UNITS:
            raise DataError("GEODIST invalid unit")
        argv = (b"GEODIST", encode(name), encode(place1), encode(place2), *([encode(unit)] if unit else []))
        return self._execute(argv, lambda reply: float(reply) if reply is not None else None)

    def geohash(self, name: Any, *values: Any) -> list:
        return self._execute((b"GEOHASH", encode(name), *(encode(v) for v in values)),
                             lambda reply: [_text(h) for h in reply])

    def geopos(self, name: Any, *values: Any) -> list:
        return self._execute((b"GEOPOS", encode(name), *(encode(v) for v in values)), _positions)

    def _radius_words(self, command: str, unit: Any, withdist: bool, withcoord: bool, withhash: bool, count: Any,
                      sort: Any, store: Any, store_dist: Any, any: bool) -> list:
        words = [_unit(unit)]
        words += [b"WITHDIST"] * withdist + [b"WITHCOORD"] * withcoord + [b"WITHHASH"] * withhash
        if any and not count:
            raise DataError("``any`` can't be provided without ``count``")
        if count:
            words += [b"COUNT", encode(count)] + [b"ANY"] * bool(any)
        if sort:
            if sort not in ("ASC", "DESC"):
                raise DataError(f"{command} invalid sort")
            words.append(encode(sort))
        if store:
            words += [b"STORE", encode(store)]
        if store_dist:
            words += [b"STOREDIST", encode(store_dist)]
        return words

    def georadius(self, name: Any, longitude: float, latitude: float, radius: float, unit: Any = None,
                  withdist: bool = False, withcoord: bool = False, withhash: bool = False, count: Any = None,
                  sort: Any = None, store: Any = None, store_dist: Any = None, any: bool = False) -> Any:
        words = self._radius_words("GEORADIUS", unit, withdist, withcoord, withhash, count, sort, store, store_dist, any)
        argv = (b"GEORADIUS", encode(name), encode(longitude), encode(latitude), encode(radius), *words)
        return self._execute(argv, _search_result(withdist, withcoord, withhash, bool(store or store_dist)))

    def georadiusbymember(self, name: Any, member: Any, radius: float, unit: Any = None, withdist: bool = False,
                          withcoord: bool = False, withhash: bool = False, count: Any = None, sort: Any = None,
                          store: Any = None, store_dist: Any = None, any: bool = False) -> Any:
        words = self._radius_words("GEORADIUSBYMEMBER", unit, withdist, withcoord, withhash, count, sort, store,
                                   store_dist, any)
        argv = (b"GEORADIUSBYMEMBER", encode(name), encode(member), encode(radius), *words)
        return self._execute(argv, _search_result(withdist, withcoord, withhash, bool(store or store_dist)))

    def _search_words(self, member: Any, longitude: Any, latitude: Any, unit: Any, radius: Any, width: Any,
                      height: Any, sort: Any, count: Any, any: bool) -> list:
        if member is not None and longitude is not None:
            raise DataError("GEOSEARCH member and longitude/latitude are mutually exclusive")
        if member is None and (longitude is None or latitude is None):
            raise DataError("GEOSEARCH must have member or longitude and latitude")
        if radius is not None and (width is not None or height is not None):
            raise DataError("GEOSEARCH radius and width/height are mutually exclusive")
        if radius is None and (width is None or height is None):
            raise DataError("GEOSEARCH must have radius or width and height")
        if unit is None or unit.lower() not in UNITS:
            raise DataError("GEOSEARCH invalid unit")
        words = [b"FROMMEMBER", encode(member)] if member is not None else \
            [b"FROMLONLAT", encode(longitude), encode(latitude)]
        if radius is not None:
            words += [b"BYRADIUS", encode(radius), encode(unit)]
        else:
            words += [b"BYBOX", encode(width), encode(height), encode(unit)]
        if sort:
            if sort not in ("ASC", "DESC"):
                raise DataError("GEOSEARCH invalid sort")
            words.append(encode(sort))
        if any and not count:
            raise DataError("``any`` can't be provided without ``count``")
        if count:
            words += [b"COUNT", encode(count)] + [b"ANY"] * bool(any)
        return words

    def geosearch(self, name: Any, member: Any = None, longitude: Any = None, latitude: Any = None, unit: str = "m",
                  radius: Any = None, width: Any = None, height: Any = None, sort: Any = None, count: Any = None,
                  any: bool = False, withcoord: bool = False, withdist: bool = False, withhash: bool = False) -> list:
        words = self._search_words(member, longitude, latitude, unit, radius, width, height, sort, count, any)
        words += [b"WITHCOORD"] * withcoord + [b"WITHDIST"] * withdist + [b"WITHHASH"] * withhash
        return self._execute((b"GEOSEARCH", encode(name), *words), _search_result(withdist, withcoord, withhash))

    def geosearchstore(self, dest: Any, name: Any, member: Any = None, longitude: Any = None, latitude: Any = None,
                       unit: str = "m", radius: Any = None, width: Any = None, height: Any = None, sort: Any = None,
                       count: Any = None, any: bool = False, storedist: bool = False) -> int:
        words = self._search_words(member, longitude, latitude, unit, radius, width, height, sort, count, any)
        words += [b"STOREDIST"] * storedist
        return self._execute((b"GEOSEARCHSTORE", encode(dest), encode(name), *words))
