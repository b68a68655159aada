"""lua_library_cases.py — a corpus of Lua snippets over the four libraries Redis loads into
its scripting environment (cjson, cmsgpack, bit, struct), and the machinery to run it through
anything that answers "run this script, give me the reply":

    differences = compare_runners(run_a, run_b)       # [] when every case agrees

A runner is a callable taking the script's text and returning its reply parsed by
parse_reply (bytes for a bulk, int, None for a null, list, Status, ReplyError). For a RESP
server, resp_eval_runner(port) sends `EVAL <script> 0` over one raw connection;
tests/test_lua_libraries.py also has the C host (native/tests/test_lua_libraries.c --batch).
Each case's body is Lua ending in `return`; the script sent is PRELUDE + body, so a body can
`return repr(v)` / `return reprs(...)` to see values exactly (numbers with 17 digits, tables
with sorted keys, strings %q-quoted, cjson.null by name) where Redis's reply conversion would
truncate numbers or stop arrays at the first nil. Errors compare by message: normalize()
strips Redis's "ERR ", "user_script:N: " and " script: <sha>, on @user_script:N." wrapping.

Redis keeps one Lua state across EVALs, so a case that changes cjson's configuration is
followed by RESET (compare_runners does this for cases that name a setter).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

PRELUDE = """\
local function repr(v)
  local t = type(v)
  if t == "string" then return string.format("%q", v)
  elseif t == "number" then return string.format("%.17g", v)
  elseif t == "table" then
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = k end
    table.sort(keys, function(a, b)
      local ta, tb = type(a), type(b)
      if ta ~= tb then return ta < tb end
      if ta == "number" or ta == "string" then return a < b end
      return tostring(a) < tostring(b)
    end)
    local parts = {}
    for _, k in ipairs(keys) do parts[#parts + 1] = "[" .. repr(k) .. "]=" .. repr(v[k]) end
    return "{" .. table.concat(parts, ",") .. "}"
  elseif t == "userdata" then
    if v == cjson.null then return "cjson.null" end
    return "userdata"
  else return tostring(v) end
end
local function reprs(...)
  local parts = {}
  for i = 1, select("#", ...) do parts[i] = repr((select(i, ...))) end
  return table.concat(parts, ", ")
end
local function hex(s)
  return (string.gsub(s, ".", function(c) return string.format("%02x", string.byte(c)) end))
end
local function perr(f, ...)
  local result = {pcall(f, ...)}
  if result[1] then return "ok: " .. reprs(unpack(result, 2, table.maxn(result))) end
  return "error: " .. tostring(result[2])
end
"""

RESET = """\
cjson.encode_sparse_array(false, 2, 10)
cjson.encode_max_depth(1000)
cjson.decode_max_depth(1000)
cjson.encode_number_precision(14)
cjson.encode_keep_buffer(true)
cjson.encode_invalid_numbers(false)
cjson.decode_invalid_numbers(true)
return 1
"""

_SETTERS = re.compile(r"cjson\.(encode_sparse_array|encode_max_depth|decode_max_depth|encode_number_precision|"
                      r"encode_keep_buffer|encode_invalid_numbers|decode_invalid_numbers)")


def needs_reset(body: str) -> bool:
    return bool(_SETTERS.search(body))


def script_of(body: str) -> str:
    return PRELUDE + body


# ---- the corpus ------------------------------------------------------------------------

CASES: list[tuple[str, str]] = []


def case(name: str, body: str) -> None:
    assert all(name != existing for existing, _ in CASES), name
    CASES.append((name, body))


# -- bit --
BIT_VALUES = ["0", "1", "-1", "2^31", "2^31-1", "-2^31", "-2^31-1", "2^32", "2^32+1", "2^32-1", "2^52",
              "2^53", "2^53+2", "2^60+2^40", "2^64", "-2^64", "1.5", "2.5", "-1.5", "-2.5", "0.5", "-0.5",
              "0.49999999", "1e300", "-1e300", "1/0", "-1/0", "0/0", "'0x10'", "' 12 '", "'1e3'", "0x7fffffff",
              "123456789", "-987654321", "2^51+0.5"]
for index, value in enumerate(BIT_VALUES):
    case(f"bit.tobit/{index}", f"return reprs(bit.tobit({value}), bit.bnot({value}), bit.bswap({value}))")
    case(f"bit.tohex/{index}", f"return reprs(bit.tohex({value}), bit.tohex({value}, 4), bit.tohex({value}, -3))")
for index, width in enumerate(["0", "1", "2", "7", "8", "9", "100", "-1", "-8", "-9", "-2^31", "2^32+2", "1.5",
                               "'3'", "-0"]):
    case(f"bit.tohex.width/{index}", f"return reprs(bit.tohex(0x1234abcd, {width}), bit.tohex(-1, {width}))")
SHIFT_COUNTS = ["0", "1", "4", "31", "32", "33", "-1", "-31", "100", "2^40+3", "1.5", "2.5"]
for index, count in enumerate(SHIFT_COUNTS):
    for op in ["lshift", "rshift", "arshift", "rol", "ror"]:
        case(f"bit.{op}/{index}", f"return reprs(bit.{op}(0x87654321, {count}), bit.{op}(1, {count}), "
                                  f"bit.{op}(-1, {count}), bit.{op}(2^40+5, {count}))")
for op in ["band", "bor", "bxor"]:
    case(f"bit.{op}/one", f"return reprs(bit.{op}(5), bit.{op}(-1), bit.{op}(2^32+7))")
    case(f"bit.{op}/two", f"return reprs(bit.{op}(0xf0f0, 0xff00), bit.{op}(-1, 0x12345678), bit.{op}(2^31, 2^31))")
    case(f"bit.{op}/many", f"return reprs(bit.{op}(1, 2, 4, 8, 16, 3), bit.{op}(0xffff, 0xff0f, 0xf0ff, -1))")
    case(f"bit.{op}/strings", f"return reprs(bit.{op}('12', '0x0f'), bit.{op}(' 7 ', 3))")
    case(f"bit.{op}/no-arguments", f"return bit.{op}()")
    case(f"bit.{op}/not-a-number", f"return bit.{op}(1, 2, {{}})")
    case(f"bit.{op}/nil-middle", f"return bit.{op}(1, nil, 3)")
for fn in ["tobit", "bnot", "bswap", "tohex"]:
    case(f"bit.{fn}/no-argument", f"return bit.{fn}()")
    case(f"bit.{fn}/string", f"return bit.{fn}('abc')")
    case(f"bit.{fn}/boolean", f"return bit.{fn}(true)")
for fn in ["lshift", "rshift", "arshift", "rol", "ror"]:
    case(f"bit.{fn}/missing-count", f"return bit.{fn}(1)")
    case(f"bit.{fn}/bad-count", f"return bit.{fn}(1, 'x')")
case("bit.tohex/bad-width", "return bit.tohex(1, 'x')")
case("bit.tohex/nil-width", "return bit.tohex(1, nil)")
case("bit.identities", "local r = {} for i = 0, 40 do local x = bit.tobit(i * 123456789) "
                       "r[#r+1] = bit.bxor(bit.band(x, 0xff00ff), bit.rol(x, i)) + bit.ror(x, i) end return reprs(unpack(r))")
case("bit.functions", "local t = {} for k, v in pairs(bit) do t[#t+1] = k .. ':' .. type(v) end table.sort(t) return t")

# -- struct --
STRUCT_ROUND_TRIPS = [
    ("b", "-128"), ("b", "127"), ("B", "255"), ("B", "0"), ("b", "200"), ("B", "-1"), ("b", "1.9"), ("b", "-1.9"),
    ("h", "-32768"), ("H", "65535"), ("h", "40000"), ("<h", "258"), (">h", "258"), (">H", "65534"),
    ("l", "-1"), ("L", "2^53"), ("l", "-2^53"), ("<l", "2^40+1"), (">L", "2^63"), ("L", "2^64"), ("l", "2^63"),
    ("T", "12345"), (">T", "1"), ("i", "-2"), ("I", "2^32-1"), ("I", "2^32"), ("i", "2^31"),
    ("i1", "-1"), ("I1", "255"), ("i2", "-300"), ("<i3", "-2"), (">i3", "-2"), (">I3", "2^24-1"), ("<I5", "2^39+7"),
    ("i7", "-12345678901"), ("<i8", "-2^62"), (">I8", "2^62+1"), ("<i9", "-2"), (">i9", "-2"), ("<I9", "2^63+2^60"),
    ("<i12", "-5"), (">i16", "-5"), ("<I16", "7"), ("<i32", "-1"), (">I32", "1"), ("i0", "5"), ("I0", "0"),
    ("f", "1.5"), ("f", "0.1"), (">f", "-2.25"), ("<f", "1e39"), ("f", "1/0"), ("d", "0.1"), (">d", "-1e300"),
    ("<d", "2^-1074"), ("d", "-0.0"), (">d", "1/0"), ("d", "-1/0"),
    ("i", "1/0"), ("i", "-1/0"), ("<i8", "2^63"), ("<i8", "-2^63-4096"), ("<I8", "0/0"), ("<I8", "-1"),
]
for index, (fmt, value) in enumerate(STRUCT_ROUND_TRIPS):
    case(f"struct.roundtrip/{index}", f"local s = struct.pack('{fmt}', {value}) "
                                      f"return reprs(hex(s), struct.size('{fmt}'), struct.unpack('{fmt}', s))")
STRUCT_PACKS = [
    ("<!4bxhi", "1, 2, 3"), (">!4bxhi", "1, 2, 3"), ("!bd", "1, 2.5"), ("!2bd", "1, 2.5"), ("!bhd", "1, 2, 3"),
    ("x!8d", "1"), ("bxxxh", "1, 2"), ("<hbi", "1, 2, 3"), ("!4 b i", "1, 2"), ("  ", ""), ("<>!", ""),
    ("s", "'hello'"), ("ss", "'a', ''"), ("c3", "'abcdef'"), ("c0", "'abc'"), ("c0s", "'', 'x'"), ("c1c2", "'a', 'bc'"),
    ("!4bs i", "1, 'ab', 2"), ("!4bc3i", "1, 'abc', 2"), ("b", "'12'"), ("d", "'1e2'"), ("c2", "12"),
    ("<!8bT", "1, 2"), ("!16bd", "1, 2"), ("!1bd", "1, 2"), (">!4hLb", "1, 2, 3"), ("Q", ""),
]
for index, (fmt, args) in enumerate(STRUCT_PACKS):
    comma = ", " if args else ""
    case(f"struct.pack/{index}", f"return perr(function() return hex(struct.pack('{fmt}'{comma}{args})) end)")
STRUCT_UNPACKS = [
    ("b", r"'\1\2'", "1"), ("b", r"'\1\2'", "2"), ("b", r"'\1\2'", "3"), ("b", r"'\1\2'", "0"), ("b", r"'\1\2'", "-1"),
    ("b", r"'\1\2'", "2.7"), ("b", r"'\1\2'", "'2'"), ("b", r"'\1\2'", "'x'"), ("", "''", "1"), ("", "''", "2"),
    ("", "''", "5"), ("x", "''", "1"), ("i0", "''", "nil"), ("bc0", r"'\3abc'", "nil"), ("bc0", r"'\3ab'", "nil"),
    ("Bc0Bc0", r"'\1a\2bc'", "nil"), ("c0", "'3abc'", "nil"), ("c0", "'3'", "nil"), ("hc0", r"'\0\0'", "nil"),
    ("s", r"'abc'", "nil"), ("s", r"'abc\0def'", "nil"), ("ss", r"'a\0\0'", "nil"), ("s", r"'\0'", "nil"),
    ("!4bi", r"'\1\0\0\0\2\0\0\0'", "nil"), ("!4bi", r"'\1\0\0\0\2\0\0'", "nil"), ("!4bi", r"'x\1\0\0\0\2\0\0\0'", "2"),
    ("<i3", r"'\255\255\127'", "nil"), (">i3", r"'\128\0\0'", "nil"), ("<i9", r"'\128\0\0\0\0\0\0\0\0'", "nil"),
    ("<i16", r"'\128' .. string.rep('\0', 15)", "nil"), ("<i12", r"'\0\128' .. string.rep('\0', 10)", "nil"),
    ("<I9", r"'\128\0\0\0\0\0\0\0\1'", "nil"), ("<I8", r"string.rep('\255', 8)", "nil"),
    ("<i8", r"'\0\0\0\0\0\0\0\128'", "nil"), ("f", r"'\0\0\192\127'", "nil"), (">d", r"'\127\240\0\0\0\0\0\0'", "nil"),
    ("c2c2", "'abcd'", "nil"), ("c5", "'abcd'", "nil"), ("x", "'a'", "nil"), ("xb", r"'a\5'", "nil"),
    ("z", "'a'", "nil"), ("!3b", "'a'", "nil"), ("!0b", "'a'", "nil"), ("i33", "'a'", "nil"),
    ("c2147483647", "'a'", "nil"), ("i99999999999", "'a'", "nil"), ("<!2bh", r"'\1\0\2\0'", "nil"),
]
for index, (fmt, data, offset) in enumerate(STRUCT_UNPACKS):
    case(f"struct.unpack/{index}", f"return perr(struct.unpack, '{fmt}', {data}, {offset})")
STRUCT_SIZES = ["", "b", "bhilfdT", "!bhilfdT", "!4bhilfdT", "<>!2bd", "i7", "c10", "c0", "s", "x!8d", "!3", "!0",
                "Q", "!8Q", "i33", "i32", "c99999999999", "=", " <>", "bxxxx", "!16bd", "!4c3i", "I2i3I4i5"]
for index, fmt in enumerate(STRUCT_SIZES):
    case(f"struct.size/{index}", f"return perr(struct.size, '{fmt}')")
STRUCT_ERRORS = [
    "struct.pack('c5', 'ab')", "struct.pack('s', 1)", "struct.pack('s', {})", "struct.pack('b')",
    "struct.pack('b', 'x')", "struct.pack('b', nil)", "struct.pack('bbb', 1, 2)", "struct.pack(1)",
    "struct.pack()", "struct.pack({})", "struct.pack('i33', 1)", "struct.pack('!5b', 1)",
    "struct.pack('z', 1)", "struct.unpack('b')", "struct.unpack()", "struct.unpack('b', {})",
    "struct.size()", "struct.size(nil)", "struct.size('s')", "struct.pack('d', 'x')", "struct.pack('f')",
    "struct.unpack('b', 'a', {})", "struct.pack('c0', 5)", "struct.pack('bc0', 1, nil)",
]
for index, expression in enumerate(STRUCT_ERRORS):
    case(f"struct.error/{index}", f"return {expression}")
    case(f"struct.pcall/{index}", f"return perr(function() return {expression} end)")
case("struct.many-results", "return perr(struct.unpack, string.rep('b', 9000), string.rep('a', 9000))")
case("struct.some-results", "return select('#', struct.unpack(string.rep('b', 500), string.rep('a', 500)))")
case("struct.functions", "local t = {} for k, v in pairs(struct) do t[#t+1] = k .. ':' .. type(v) end table.sort(t) return t")
case("struct.pack-result-is-string", "return struct.pack('>I2', 0x4142)")

# -- cmsgpack --
MSGPACK_NUMBERS = ["0", "1", "127", "128", "255", "256", "65535", "65536", "2^32-1", "2^32", "2^53", "2^63-2^10",
                   "2^63", "2^64", "-1", "-32", "-33", "-128", "-129", "-32768", "-32769", "-2^31", "-2^31-1",
                   "-2^53", "-2^63", "-2^63-2^11", "1.5", "-1.5", "0.1", "0.25", "1e39", "1e-50", "-0.0", "1/0",
                   "-1/0", "0/0", "2^-149", "3.4028234663852886e38", "16777217", "16777216.5", "'12'"]
for index, value in enumerate(MSGPACK_NUMBERS):
    case(f"cmsgpack.number/{index}", f"local s = cmsgpack.pack({value}) return reprs(hex(s), cmsgpack.unpack(s))")
for length in [0, 1, 31, 32, 255, 256, 65535, 65536]:
    case(f"cmsgpack.string/{length}", f"local v = string.rep('x', {length}) local s = cmsgpack.pack(v) "
                                      f"return reprs(#s, hex(s:sub(1, 6)), cmsgpack.unpack(s) == v)")
for length in [0, 1, 15, 16, 65535, 65536]:
    case(f"cmsgpack.array/{length}", f"local v = {{}} for i = 1, {length} do v[i] = i % 3 end local s = cmsgpack.pack(v) "
                                     f"local back = cmsgpack.unpack(s) return reprs(#s, hex(s:sub(1, 6)), #back, back[{length}])")
for count in [1, 15, 16, 65536]:
    case(f"cmsgpack.map/{count}", f"local v = {{}} for i = 1, {count} do v['k' .. i] = i end local s = cmsgpack.pack(v) "
                                  f"local back, n = cmsgpack.unpack(s), 0 for k, x in pairs(back) do n = n + 1 "
                                  f"assert(v[k] == x) end return reprs(#s, hex(s:sub(1, 3)), n)")
MSGPACK_TABLES = [
    "{}", "{1, 2, 3}", "{1, 2, nil, 4}", "{[1] = 5, [3] = 4}", "{[2] = 'b', [1] = 'a'}", "{['1'] = 5}",
    "{[1.5] = 1}", "{[0] = 1}", "{[-1] = 1}", "{a = 1}", "{true}", "{[true] = 1}", "{{}, {{}}}",
    "{1, 'a', 2.5, false}", "{x = {y = {z = 'deep'}}}", "{1, 2, x = 3}", "{cjson.null}", "{[2] = 1}",
    "{n = 0/0}", "{[1] = 1, [2] = 2, [4] = 4}",
]
for index, value in enumerate(MSGPACK_TABLES):
    case(f"cmsgpack.table/{index}", f"local s = cmsgpack.pack({value}) return reprs(#s, cmsgpack.unpack(s))")
case("cmsgpack.table/ordered-small", "return hex(cmsgpack.pack({1, {2, 3}, {4, {5}}}))")
case("cmsgpack.table/map-one", "return hex(cmsgpack.pack({k = 'v'}))")
case("cmsgpack.table/mixed-one", "return hex(cmsgpack.pack({[1] = 'a', [3] = 'c'}))")
case("cmsgpack.nesting/16", "local t = {} local c = t for i = 1, 15 do c[1] = {} c = c[1] end return hex(cmsgpack.pack(t))")
case("cmsgpack.nesting/17", "local t = {} local c = t for i = 1, 16 do c[1] = {} c = c[1] end return hex(cmsgpack.pack(t))")
case("cmsgpack.nesting/20", "local t = {} local c = t for i = 1, 20 do c[1] = {} c = c[1] end return hex(cmsgpack.pack(t))")
case("cmsgpack.nesting/map-20", "local t = {} local c = t for i = 1, 20 do c.k = {} c = c.k end return hex(cmsgpack.pack(t))")
case("cmsgpack.nesting/cycle", "local t = {} t[1] = t return hex(cmsgpack.pack(t))")
case("cmsgpack.pack/multiple", "return hex(cmsgpack.pack(1, 'a', {2}, nil, true))")
case("cmsgpack.pack/function", "return hex(cmsgpack.pack(function() end, type, coroutine and 1 or 2))")
case("cmsgpack.pack/userdata", "return hex(cmsgpack.pack(cjson.null))")
case("cmsgpack.pack/none", "return cmsgpack.pack()")
case("cmsgpack.pack/none-pcall", "return perr(cmsgpack.pack)")
case("cmsgpack.pack/nil", "return hex(cmsgpack.pack(nil))")
case("cmsgpack.pack/too-many", "local t = {} for i = 1, 7990 do t[i] = i end return perr(cmsgpack.pack, unpack(t))")
case("cmsgpack.pack/many", "local t = {} for i = 1, 3000 do t[i] = i end local s = cmsgpack.pack(unpack(t)) "
                           "return reprs(#s, select('#', cmsgpack.unpack(s)))")
case("cmsgpack.pack/4001", "local t = {} for i = 1, 4001 do t[i] = i end return perr(cmsgpack.pack, unpack(t))")
case("cmsgpack.pack/4000", "local t = {} for i = 1, 4000 do t[i] = i end return perr(function() return #cmsgpack.pack(unpack(t)) end)")
MSGPACK_INPUTS = [
    r"'\192\194\195'", r"'\204\255\205\1\0\206\0\1\0\0\207\0\0\0\1\0\0\0\0'",
    r"'\208\128\209\128\0\210\128\0\0\0\211\128\0\0\0\0\0\0\0'", r"'\211\255\255\255\255\255\255\255\255'",
    r"'\207\255\255\255\255\255\255\255\255'", r"'\202\63\192\0\0\203\63\185\153\153\153\153\153\154'",
    r"'\202\127\192\0\0'", r"'\203\127\248\0\0\0\0\0\1'", r"'\224\255\127\0'",
    r"'\160\161a\217\3abc\218\0\2ab\219\0\0\0\1a'", r"'\196\3abc\197\0\1x\198\0\0\0\2yz'",
    r"'\144\145\1\220\0\2\1\2\221\0\0\0\1\3'", r"'\128\129\1\2\222\0\1\161k\161v\223\0\0\0\1\3\4'",
    r"'\129\161a\129\161b\145\192'", r"'\130\1\2\1\3'", r"'\129\192\1'", r"'\129\202\127\192\0\0\1'",
    r"'\193'", r"'\199\1\1x'", r"'\200\0\1\1x'", r"'\201\0\0\0\1\1x'", r"'\212\1\1'", r"'\213\1\1\1'",
    r"'\214\1\1\1\1\1'", r"'\215\1' .. string.rep('\1', 8)", r"'\216\1' .. string.rep('\1', 16)",
    r"'\1\193'", r"'\204'", r"'\205\1'", r"'\206\1\2\3'", r"'\207\1'", r"'\208'", r"'\209\1'", r"'\210'",
    r"'\211\1\2'", r"'\202\1\2'", r"'\203\1\2\3\4\5\6\7'", r"'\162a'", r"'\217'", r"'\217\3ab'", r"'\218\0'",
    r"'\218\0\3ab'", r"'\219\0\0\0'", r"'\219\0\0\0\3ab'", r"'\196'", r"'\196\2a'", r"'\145'", r"'\146\1'",
    r"'\220\0\2\1'", r"'\220\0'", r"'\221\0\0\0\2\1'", r"'\129\1'", r"'\129'", r"'\222\0\1\1'",
    r"'\223\0\0\0\1\1'", r"'\145\193'", r"'\129\1\193'", r"''", r"'\1\2\3'",
    r"'\221\255\255\255\255'", r"'\223\255\255\255\255'", r"'\219\255\255\255\255'",
]
for index, data in enumerate(MSGPACK_INPUTS):
    case(f"cmsgpack.unpack/{index}", f"return perr(cmsgpack.unpack, {data})")
case("cmsgpack.unpack/error-direct", r"return cmsgpack.unpack('\145')")
case("cmsgpack.unpack/bad-direct", r"return cmsgpack.unpack('\193')")
case("cmsgpack.unpack/nil-key-direct", r"return cmsgpack.unpack('\129\192\1')")
case("cmsgpack.unpack/no-argument", "return cmsgpack.unpack()")
case("cmsgpack.unpack/table-argument", "return cmsgpack.unpack({})")
case("cmsgpack.unpack/number-argument", "return reprs(cmsgpack.unpack(5))")
case("cmsgpack.unpack/deep-arrays", r"return perr(cmsgpack.unpack, string.rep('\145', 10000))")
case("cmsgpack.unpack/deep-maps", r"return perr(cmsgpack.unpack, string.rep('\129\1', 10000))")
case("cmsgpack.unpack/deep-ok", r"return perr(function() return #cmsgpack.pack(cmsgpack.unpack(string.rep('\145', 100) .. '\1')) end)")
case("cmsgpack.unpack/many-values", r"return perr(cmsgpack.unpack, string.rep('\192', 10000))")
case("cmsgpack.unpack/7000-values", r"return select('#', cmsgpack.unpack(string.rep('\1', 7000)))")
LIMITS = [("2", "nil"), ("0", "nil"), ("3", "nil"), ("5", "nil"), ("1", "2"), ("1", "3"), ("1", "4"), ("-1", "nil"),
          ("0", "1"), ("2", "1"), ("1", "-1"), ("1", "0"), ("1.5", "1"), ("'2'", "nil"), ("nil", "nil"), ("'x'", "nil"),
          ("1", "'x'"), ("1", "1.9")]
for index, (limit, offset) in enumerate(LIMITS):
    case(f"cmsgpack.unpack_limit/{index}", f"return perr(cmsgpack.unpack_limit, cmsgpack.pack(1, 2, 3), {limit}, {offset})")
for index, offset in enumerate(["nil", "0", "1", "2", "3", "4", "-1", "5", "'1'", "'x'", "1.5"]):
    case(f"cmsgpack.unpack_one/{index}", f"return perr(cmsgpack.unpack_one, cmsgpack.pack({{1}}, 'ab', 3), {offset})")
case("cmsgpack.unpack_one/empty", "return perr(cmsgpack.unpack_one, '')")
case("cmsgpack.unpack_one/truncated", r"return perr(cmsgpack.unpack_one, '\1\146\1')")
case("cmsgpack.unpack_one/truncated-second", r"return perr(cmsgpack.unpack_one, '\1\146\1', 1)")
case("cmsgpack.unpack_limit/walk", "local s = cmsgpack.pack('a', {b = 1}, {1, 2}, 4.5) local out, offset = {}, 0 "
                                   "while offset >= 0 do local r = {cmsgpack.unpack_one(s, offset)} offset = r[1] "
                                   "out[#out+1] = reprs(unpack(r)) end return out")
case("cmsgpack.unpack_limit/missing", "return cmsgpack.unpack_limit('\\1')")
case("cmsgpack.fields", "local t = {} for k, v in pairs(cmsgpack) do t[#t+1] = k .. ':' .. type(v) .. "
                        "(type(v) == 'string' and v or '') end table.sort(t) return t")
case("cmsgpack.roundtrip/mixed", "local v = {a = {1, 2, {c = 'x'}}, b = -1.5, c = 'str', d = true, e = {}} "
                                 "return repr(cmsgpack.unpack(cmsgpack.pack(v)))")

# -- cjson: encode --
CJSON_VALUES = [
    "nil", "true", "false", "0", "1", "-1", "0.1", "1/3", "1e15", "1e16", "-0.0", "123456789012345", "2^53",
    "1e-7", "100", "3.14159265358979", "1e308", "2^63", "-2^63", "5e-324", "12345678901234567890", "0.5",
    "'hello'", "''", "'a\"b'", "'a\\\\b'", "'a/b'", "'\\0'", "'\\127'", "'\\128\\255'", "'é€'",
    "'\\b\\f\\n\\r\\t\\v'", "'\\1\\31\\32'", "cjson.null", "{}", "{1, 2, 3}", "{'a', {'b', {}}}",
    "{1, nil, 3}", "{nil, nil, 3}", "{[1] = 1, [3] = 3}", "{[10] = 1}", "{[11] = 1}", "{[20] = 1, [19] = 1}",
    "{[21] = 1, [1] = 1}", "{[1] = 1, [2] = 2, [5] = 5}", "{[2] = 1}", "{[1.5] = 1}", "{[0] = 1}", "{[-1] = 1}",
    "{a = 1}", "{[1] = 1, a = 2}", "{['1'] = 1}", "{[1e10] = 1}", "{[2^31] = 1}", "{[2^32] = 1}",
    "{a = {b = {c = {}}}}", "{cjson.null, cjson.null}", "{a = cjson.null}", "{true, false}",
    "{[1/0] = 1}", "{[0/0] = 1}", "{0/0}", "{1/0}", "{[true] = 1}", "{[{}] = 1}", "{function() end}",
    "function() end", "coroutine and coroutine.create(function() end) or 1", "{1, 2, {3, {4, {5}}}}",
    "{{}, {}}", "{['a/b'] = '\\n'}", "{[100] = 1, [99] = 1, [98] = 1}",
]
for index, value in enumerate(CJSON_VALUES):
    case(f"cjson.encode/{index}", f"return perr(cjson.encode, {value})")
case("cjson.encode/all-bytes", "local s = {} for i = 0, 255 do s[#s+1] = string.char(i) end return cjson.encode(table.concat(s))")
case("cjson.encode/direct-error", "return cjson.encode(1/0)")
case("cjson.encode/direct-sparse", "return cjson.encode({[20] = 1})")
case("cjson.encode/no-argument", "return cjson.encode()")
case("cjson.encode/two-arguments", "return cjson.encode(1, 2)")
case("cjson.encode/two-keys", "local s = cjson.encode({a = 1, b = 2}) return s == '{\"a\":1,\"b\":2}' or s == '{\"b\":2,\"a\":1}'")
case("cjson.encode/depth-1000", "local t = {} local c = t for i = 1, 999 do c[1] = {} c = c[1] end return #cjson.encode(t)")
case("cjson.encode/depth-1001", "local t = {} local c = t for i = 1, 1000 do c[1] = {} c = c[1] end return perr(cjson.encode, t)")
case("cjson.encode/depth-object", "local t = {} local c = t for i = 1, 1000 do c.k = {} c = c.k end return perr(cjson.encode, t)")
case("cjson.encode/cycle", "local t = {} t[1] = t return perr(cjson.encode, t)")
case("cjson.encode/big-array", "local t = {} for i = 1, 10000 do t[i] = i end local s = cjson.encode(t) return reprs(#s, s:sub(1, 20), s:sub(-20))")
case("cjson.encode/long-string", "local s = cjson.encode(string.rep('\\1/', 5000)) return reprs(#s, s:sub(1, 30))")

# -- cjson: configuration --
for index, precision in enumerate(["1", "3", "6", "14", "15", "0", "-1", "'x'", "'5'", "2.7", "true"]):
    case(f"cjson.precision/{index}", f"return perr(function() local p = cjson.encode_number_precision({precision}) "
                                     f"return p, cjson.encode({{1/3, 123456.789, 1e20, 0.1, 100}}) end)")
case("cjson.precision/get", "return cjson.encode_number_precision()")
case("cjson.precision/too-many", "return perr(cjson.encode_number_precision, 3, 4)")
SPARSE = [
    ("true", "{[20] = 1}"), ("false", "{[20] = 1}"), ("true, 0", "{[1000] = 1}"), ("false, 0", "{[30] = 1}"),
    ("false, 1", "{[1] = 1, [3] = 1}"), ("true, 1", "{[11] = 1, [12] = 1}"), ("false, 3, 0", "{[1] = 1, [3] = 1}"),
    ("false, 2, 0", "{[3] = 1}"), ("false, 2, 20", "{[20] = 1}"), ("true, 2, 20", "{[21] = 1}"), ("nil, nil, 3", "{[4] = 1}"),
    ("'on'", "{[20] = 1}"), ("'off'", "{[20] = 1}"), ("'yes'", "{}"), ("false, -1", "{}"), ("false, 2, -1", "{}"),
    ("false, 'x'", "{}"), ("false, 2, 10, 4", "{}"), ("1", "{}"), ("nil, 2^31", "{}"), ("nil, 2^31-1", "{[5] = 1}"),
]
for index, (arguments, table) in enumerate(SPARSE):
    case(f"cjson.sparse/{index}", f"return perr(function() return cjson.encode_sparse_array({arguments}), "
                                  f"cjson.encode({table}) end)")
case("cjson.sparse/get", "return reprs(cjson.encode_sparse_array())")
for index, depth in enumerate(["1", "2", "3", "0", "-1", "'x'", "2^31", "2^31-1", "1.9"]):
    case(f"cjson.encode_max_depth/{index}", f"return perr(function() return cjson.encode_max_depth({depth}), "
                                            f"cjson.encode({{}}), cjson.encode({{{{1}}}}), cjson.encode({{{{{{1}}}}}}) end)")
    case(f"cjson.decode_max_depth/{index}", f"return perr(function() local d = cjson.decode_max_depth({depth}) "
                                            f"return d, cjson.decode('[[1]]'), cjson.decode('{{\"a\":[1]}}') end)")
case("cjson.decode_max_depth/deep-error", "cjson.decode_max_depth(5) return perr(cjson.decode, '[[[[[[[1]]]]]]]')")
case("cjson.decode_max_depth/deep-object", "cjson.decode_max_depth(2) return perr(cjson.decode, '{\"a\":{\"b\":{}}}')")
case("cjson.encode_max_depth/get", "return reprs(cjson.encode_max_depth(), cjson.decode_max_depth())")
for index, option in enumerate(["true", "false", "'on'", "'off'", "'null'", "'x'", "nil", "1", "{}"]):
    case(f"cjson.encode_invalid_numbers/{index}", f"return perr(function() return cjson.encode_invalid_numbers({option}), "
                                                  f"cjson.encode({{0/0, 1/0, -1/0, 1, [5] = -(0/0)}}) end)")
    case(f"cjson.encode_invalid_numbers-key/{index}", f"return perr(function() cjson.encode_invalid_numbers({option}) "
                                                      f"return cjson.encode({{[1/0] = 1}}) end)")
    case(f"cjson.decode_invalid_numbers/{index}", f"return perr(function() return cjson.decode_invalid_numbers({option}), "
                                                  f"cjson.decode('[1, 0x10, -0x10, 01, +1, Infinity, -Infinity, NaN, 1.5]') end)")
    case(f"cjson.encode_keep_buffer/{index}", f"return perr(function() return cjson.encode_keep_buffer({option}), "
                                              f"cjson.encode({{1, 'a'}}) end)")
for index, text in enumerate(["0x10", "01", "+1", "NaN", "nan", "inf", "-inf", "Infinity", "-Infinity", "-0x1", "0", "-0",
                              "1e5", "infinity"]):
    case(f"cjson.decode_invalid_numbers-off/{index}", f"cjson.decode_invalid_numbers(false) return perr(cjson.decode, '{text}')")
case("cjson.new/independent", "local j = cjson.new() j.encode_number_precision(3) j.encode_sparse_array(true) "
                              "return reprs(cjson.encode(1/3), j.encode(1/3), j.encode({[30] = 1}), perr(cjson.encode, {[30] = 1}))")
case("cjson.new/fields", "local j = cjson.new() local t = {} for k, v in pairs(j) do t[#t+1] = k .. ':' .. type(v) end "
                         "table.sort(t) return reprs(unpack(t)) .. repr(j.null == cjson.null) .. j._VERSION .. j._NAME")
case("cjson.fields", "local t = {} for k, v in pairs(cjson) do t[#t+1] = k .. ':' .. type(v) end table.sort(t) return t")
case("cjson.config-too-many", "return perr(cjson.encode_keep_buffer, true, 1)")
case("cjson.sparse-too-many", "return cjson.encode_sparse_array(true, 2, 10, 1)")

# -- cjson: decode --
CJSON_TEXTS = [
    "1", "-1", "0", "-0", "1.5", "1e3", "1E+3", "1e-3", "123456789012345678", "1e400", "-1e400", "1.5e-400",
    "0.1e1", "[1.]", "[.5]", "[-]", "[1e]", "[1e+]", "[-a]", "0x1p3", "1_000", "true", "false", "null", "tru",
    "nul", "True", "\"abc\"", "\"\"", "[]", "{}", "[1,2,3]", "[1,[2,[3]]]", "{\"a\":1}", "{\"a\":{\"b\":[true,null]}}",
    "{\"a\":1,\"a\":2}", " [ 1 , 2 ] ", "\t\r\n1\n", "[1,2", "[1 2]", "[1,]", "[,1]", "{\"a\" 1}", "{1:2}",
    "{\"a\":1,}", "{\"a\":}", "{\"a\"}", "{\"a\":1 \"b\":2}", "{", "}", "[", "]", ":", ",", "", " ", "1 2",
    "\"abc", "\"\\x\"", "\"\\u00e9\"", "\"\\u20ac\"", "\"\\ud83d\\ude00\"", "\"\\u0000\"", "\"\\ud800\"",
    "\"\\udc00\"", "\"\\ud800\\u0041\"", "\"\\ud800x\"", "\"\\u12\"", "\"\\u12g4\"", "\"\\uD83D\\uDE00\"",
    "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", "\"a\tb\"", "\"\\'\"", "[null, null]", "{\"k\":null}", "\"é\"", "@",
    "[1]x", "[1] x", "[\"a\"]]", "nan", "NaN", "-nan", "inf", "Inf", "-Infinity", "infinity", "+", "-",
    "0x", "0xg", "1.2.3", "--1", "1e5e5", "[1,2]garbage", "{\"a\":[]}", "{\"\":1}", "[{}]", "[[]]",
    "{\"1\":1,\"2\":2}", "[1e308, 1e309]", "[0.1, 0.2, 0.30000000000000004]", "[\"a\\/b\"]",
]
for index, text in enumerate(CJSON_TEXTS):
    literal = text.replace("\\", "\\\\").replace("'", "\\'").replace("\t", "\\t").replace("\r", "\\r").replace("\n", "\\n")
    case(f"cjson.decode/{index}", f"return perr(cjson.decode, '{literal}')")
case("cjson.decode/nul-inside", "return perr(cjson.decode, '[1,\\0 2]')")
case("cjson.decode/nul-after", "return perr(cjson.decode, '1 \\0 2')")
case("cjson.decode/nul-first", "return perr(cjson.decode, '\\0')")
case("cjson.decode/utf16", "return perr(cjson.decode, '\\0[\\0]')")
case("cjson.decode/utf16-second", "return perr(cjson.decode, '[\\0]')")
case("cjson.decode/nul-in-string", "return perr(cjson.decode, '\"a\\0b\"')")
case("cjson.decode/escaped-nul", "return perr(cjson.decode, '\"a\\\\\\0b\"')")
case("cjson.decode/control-in-string", "return perr(cjson.decode, '\"\\1\\31\"')")
case("cjson.decode/depth-1000", "return perr(function() return #cjson.encode(cjson.decode(string.rep('[', 1000) .. string.rep(']', 1000))) end)")
case("cjson.decode/depth-1001", "return perr(cjson.decode, string.rep('[', 1001))")
case("cjson.decode/depth-objects", "return perr(cjson.decode, string.rep('{\"a\":', 1001))")
case("cjson.decode/depth-mixed", "return perr(cjson.decode, string.rep('[{\"a\":', 600))")
case("cjson.decode/direct-error", "return cjson.decode('[1,2')")
case("cjson.decode/no-argument", "return cjson.decode()")
case("cjson.decode/two-arguments", "return cjson.decode('1', '2')")
case("cjson.decode/table-argument", "return cjson.decode({})")
case("cjson.decode/number-argument", "return reprs(cjson.decode(123))")
case("cjson.decode/nil-argument", "return cjson.decode(nil)")
case("cjson.decode/null-identity", "local v = cjson.decode('[null]') return reprs(v[1] == cjson.null, type(v[1]), #v)")
case("cjson.decode/long-number", "return perr(cjson.decode, '1' .. string.rep('0', 100))")
case("cjson.decode/long-number-tail", "return perr(cjson.decode, '[' .. string.rep('1', 80) .. 'e-70]')")
case("cjson.decode/big", "local t = {} for i = 1, 5000 do t[i] = {i, 'x' .. i, {k = i / 2}} end "
                         "local back = cjson.decode(cjson.encode(t)) return reprs(#back, back[5000][2], back[4999][3].k)")
case("cjson.roundtrip/strings", "local s = {} for i = 0, 255 do s[#s+1] = string.char(i) end s = table.concat(s) "
                                "return cjson.decode(cjson.encode(s)) == s")
case("cjson.roundtrip/object", "return repr(cjson.decode(cjson.encode({a = {1, 2, {b = 'c'}}, d = false, e = 'x/y'})))")
case("cjson.roundtrip/null", "return cjson.encode(cjson.decode('{\"a\":null,\"b\":[null]}'))")
case("cjson.decode/reply-conversion", "return cjson.decode('[1, 2.9, \"x\", true, false, [1, [2]], {\"a\":1}]')")
case("cjson.decode/reply-null-stops-array", "return cjson.decode('[1, null, 3]')")


# -- sweeps: many values through each library in one case (a deterministic sequence, since
# math.random's seeding is the runtime's business) --
SWEEP_VALUES = """
local function values()
  local out = {0, 1, -1, 0.5, -0.5, 1.5, 2.5, -2.5, 1/0, -1/0}
  for e = 0, 66 do
    for _, d in ipairs({-1, 0, 1}) do out[#out+1] = 2^e + d out[#out+1] = -(2^e) + d end
  end
  local x = 12345
  for i = 1, 200 do
    x = (x * 1103515245 + 12345) % 2147483648
    out[#out+1] = (x / 65536 - 16384) * 2^((x % 90) - 40)
  end
  return out
end
"""
case("bit.sweep", SWEEP_VALUES + "local r = {} for _, v in ipairs(values()) do r[#r+1] = table.concat({bit.tobit(v), "
     "bit.bnot(v), bit.bswap(v), bit.tohex(v), bit.lshift(v, v), bit.rshift(v, 7), bit.arshift(v, v), bit.rol(v, 13), "
     "bit.ror(v, v), bit.band(v, 0x0ff0ff0f), bit.bor(v, v / 3), bit.bxor(v, 12345.5)}, ',') end return r")
for precision in [1, 5, 14]:
    case(f"cjson.sweep.precision/{precision}", SWEEP_VALUES + f"cjson.encode_number_precision({precision}) "
         "cjson.encode_invalid_numbers(true) return cjson.encode(values())")
case("cjson.sweep.decode", SWEEP_VALUES + "local r = {} for _, v in ipairs(values()) do if v == v and v ~= 1/0 and v ~= -1/0 then "
     "r[#r+1] = string.format('%.17g', v) end end local back = cjson.decode('[' .. table.concat(r, ',') .. ']') "
     "local out = {} for i, v in ipairs(back) do out[i] = string.format('%.17g', v) end return out")
case("cmsgpack.sweep", SWEEP_VALUES + "local r = {} for _, v in ipairs(values()) do local s = cmsgpack.pack(v) "
     "r[#r+1] = hex(s) .. '=' .. string.format('%.17g', cmsgpack.unpack(s)) end return r")
case("cmsgpack.sweep.table", SWEEP_VALUES + "local v = values() local s = cmsgpack.pack(v) local back = cmsgpack.unpack(s) "
     "return {hex(s), #back}")
for fmt in ["<b", "<B", ">h", "<H", "<i", ">I", "<l", ">L", "<i3", ">I5", "<i9", ">I12", "<f", ">d", "<T"]:
    case(f"struct.sweep/{fmt}", SWEEP_VALUES + f"local r = {{}} for _, v in ipairs(values()) do local s = struct.pack('{fmt}', v) "
         f"r[#r+1] = hex(s) .. '=' .. string.format('%.17g', (struct.unpack('{fmt}', s))) end return r")
case("cmsgpack.table/huge-key", "return hex(cmsgpack.pack({[2^40] = 1}))")
case("cmsgpack.table/float-keys", "local t = {} t[1.0] = 'a' t[2] = 'b' return hex(cmsgpack.pack(t))")
case("cmsgpack.table/holes-after-removal", "local t = {1, 2, 3, 4} t[4] = nil t[2] = nil return hex(cmsgpack.pack(t))")
case("cmsgpack.unpack_limit/huge", "return perr(cmsgpack.unpack_limit, cmsgpack.pack(1, 2), 2^40)")
case("cmsgpack.unpack_limit/huge-offset", "return perr(cmsgpack.unpack_limit, cmsgpack.pack(1, 2), 1, 2^40)")
case("cjson.encode/sparse-huge", "return perr(cjson.encode, {[2^40] = 1, [1] = 2})")
case("cjson.encode/sparse-int-max", "return perr(cjson.encode, {[2^31 - 1] = 1})")
case("cjson.encode/array-after-removal", "local t = {1, 2, 3, 4} t[4] = nil t[2] = nil return cjson.encode(t)")
case("struct.unpack/c0-negative", r"return perr(struct.unpack, 'bc0', '\255abc')")
case("struct.unpack/c0-huge", r"return perr(struct.unpack, 'Ic0', '\255\255\255\255abc')")
case("struct.unpack/c0-float", r"return perr(struct.unpack, 'fc0', struct.pack('f', 2.5) .. 'abc')")
# key order: Lua 5.1's table traversal decides it, and goblin's Lua must walk as Redis's does
case("cjson.encode/order-30-keys", "local t = {} for i = 1, 30 do t['key' .. i] = i end t.x = {a = 1, b = 2, [5] = 3} "
     "return cjson.encode(t)")
case("cjson.encode/order-mixed-keys", "return cjson.encode({z = 1, [7] = 2, y = {1, 2}, [1.5] = 3, ['7'] = 4, w = cjson.null})")
case("cjson.roundtrip/order", "return cjson.encode(cjson.decode('{\"b\":1,\"a\":2,\"d\":{\"y\":1,\"x\":2},\"c\":[3]}'))")
case("cmsgpack.table/order-20-keys", "local t = {} for i = 1, 20 do t['k' .. i] = i end t[100] = true return hex(cmsgpack.pack(t))")
case("cmsgpack.roundtrip/order", "local t = {} for i = 1, 12 do t['f' .. i] = {i, tostring(i)} end "
     "return hex(cmsgpack.pack(cmsgpack.unpack(cmsgpack.pack(t))))")
case("cjson.encode/method-call", "return perr(function() return cjson:encode(1) end)")
case("cjson.encode/via-local", "local f = cjson.encode return f()")
case("struct.pack/via-local", "local p = struct.pack return p('i33', 1)")
# past Lua's C stack limit (LUAI_MAXCSTACK) with the depth limits lifted
case("cjson.decode/limit-lifted-arrays", "cjson.decode_max_depth(2^31 - 1) return perr(cjson.decode, string.rep('[', 100000))")
case("cjson.decode/limit-lifted-objects", "cjson.decode_max_depth(2^31 - 1) return perr(cjson.decode, string.rep('{\"a\":', 100000))")
case("cjson.encode/limit-lifted", "cjson.encode_max_depth(2^31 - 1) local t = {} local c = t for i = 1, 100000 do c[1] = {} c = c[1] end "
     "return perr(cjson.encode, t)")
case("cjson.encode/limit-lifted-objects", "cjson.encode_max_depth(2^31 - 1) local t = {} local c = t for i = 1, 100000 do c.k = {} c = c.k end "
     "return perr(cjson.encode, t)")
for precision in [1, 4, 5, 13, 14]:
    case(f"cjson.precision-boundaries/{precision}", f"cjson.encode_number_precision({precision}) "
         "local out = {} for e = 0, 16 do local p = 10^e out[#out+1] = p - 1 out[#out+1] = p out[#out+1] = -p "
         "out[#out+1] = -(p - 1) out[#out+1] = p + 1 out[#out+1] = p / 2 end out[#out+1] = -0.0 out[#out+1] = 0 "
         "return cjson.encode(out)")
case("cjson.decode/integer-forms", "return perr(function() local t = cjson.decode('[0, -0, 7, -7, 007, -007, 123456789012345, "
     "-123456789012345, 1234567890123456, 12345678901234567890, 999999999999999, 9007199254740993, -9007199254740993]') "
     "local out = {} for i, v in ipairs(t) do out[i] = string.format('%.17g', v) .. (1 / v < 0 and 'n' or 'p') end "
     "return table.concat(out, ' ') end)")

# ---- replies -------------------------------------------------------------------------

@dataclass(frozen=True)
class ReplyError:
    message: str


@dataclass(frozen=True)
class Status:
    text: str


def parse_reply(data: bytes) -> object:
    """One RESP2 reply frame as Python values (raises ValueError on trailing bytes)."""
    value, end = _parse(data, 0)
    if end != len(data):
        raise ValueError(f"trailing bytes after a reply: {data[end:end + 40]!r}")
    return value


def _parse(data: bytes, at: int) -> tuple[object, int]:
    line_end = data.index(b"\r\n", at)
    kind, line = data[at:at + 1], data[at + 1:line_end]
    after = line_end + 2
    if kind == b"+":
        return Status(line.decode("utf-8", "replace")), after
    if kind == b"-":
        return ReplyError(line.decode("utf-8", "replace")), after
    if kind == b":":
        return int(line), after
    if kind == b"$":
        length = int(line)
        if length < 0:
            return None, after
        return data[after:after + length], after + length + 2
    if kind == b"*":
        count = int(line)
        if count < 0:
            return None, after
        items = []
        for _ in range(count):
            item, after = _parse(data, after)
            items.append(item)
        return items, after
    raise ValueError(f"not a RESP2 frame: {data[at:at + 40]!r}")


_REDIS_SUFFIX = re.compile(r" script: [0-9a-f]{40}, on @user_script:\d+\.$")
_POSITION = re.compile(r"^user_script:\d+: ")


def normalize(reply: object) -> object:
    """A reply with error texts reduced to the library's message (no "ERR ", no script position,
    no " script: <sha>, on @user_script:N." suffix), at any depth."""
    if isinstance(reply, ReplyError):
        message = reply.message
        if message.startswith("ERR "):
            message = message[4:]
        message = _REDIS_SUFFIX.sub("", message)
        message = _POSITION.sub("", message)
        return ReplyError(message)
    if isinstance(reply, list):
        return [normalize(item) for item in reply]
    return reply


Runner = Callable[[str], object]


def run_corpus(run: Runner, cases: list[tuple[str, str]] | None = None) -> dict[str, object]:
    """Every case's normalized reply from `run` (RESET run after cases that configure cjson)."""
    assert run(RESET) == 1, "resetting cjson's configuration failed"
    replies = {}
    for name, body in cases if cases is not None else CASES:
        replies[name] = normalize(run(script_of(body)))
        if needs_reset(body):
            assert run(RESET) == 1, f"resetting cjson's configuration after {name} failed"
    return replies


def compare_runners(run_a: Runner, run_b: Runner, cases: list[tuple[str, str]] | None = None) -> list[str]:
    """One line per case whose replies differ (empty when the two agree on the whole corpus)."""
    a = run_corpus(run_a, cases)
    b = run_corpus(run_b, cases)
    return [f"{name}:\n    {a[name]!r}\n    {b[name]!r}" for name in a if a[name] != b[name]]


def resp_eval_runner(connection) -> Runner:
    """A runner over a raw RESP connection (tests/resp_wire.py's RawConnection): EVAL <script> 0."""
    def run(script: str) -> object:
        return parse_reply(connection.request("EVAL", script.encode(), 0))
    return run
