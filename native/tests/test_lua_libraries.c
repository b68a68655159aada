/* test_lua_libraries.c — the Lua libraries of native/script/lib (cjson, cmsgpack, bit,
 * struct) in a Lua 5.1 state with base, table, string and math, as Redis sets one up.
 *
 *   test_lua_libraries [rounds]   C unit tests of edge cases, then fuzzing of cjson.decode,
 *                                 cmsgpack.unpack and struct.unpack with random bytes (rounds)
 *   test_lua_libraries --eval     runs the Lua chunk on stdin; prints its first return value
 *                                 as the RESP2 reply redis-server's EVAL would send
 *   test_lua_libraries --batch    the same for many chunks: stdin is a sequence of
 *                                 "<byte count>\n<chunk>", each run in a fresh state
 *
 * The chunk is named "@user_script", so positions in errors read "user_script:N:" as in
 * Redis; a failed chunk prints "-" and the message (CR and LF as spaces, as Redis does).
 * tests/test_lua_libraries.py compares these replies with redis-server 7.0's. The RESP2
 * conversion is Redis's: a number is its integer part, true is :1, false and nil are null
 * bulks, a table with an err / ok string field an error / status, any other table the array
 * of its elements 1..n up to the first nil. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "script/lib/lua_libraries.h"
#include "tests/test_helpers.h"

/* ---- the state ---- */

static lua_State *open_state(void) {
    lua_State *L = luaL_newstate();
    if (L == NULL) return NULL;
    lua_CFunction openers[] = {luaopen_base, luaopen_table, luaopen_string, luaopen_math};
    for (size_t index = 0; index < sizeof openers / sizeof openers[0]; index++) {
        lua_pushcfunction(L, openers[index]);
        lua_call(L, 0, 0);
    }
    gr_lua_open_libraries(L);
    lua_settop(L, 0);
    return L;
}

/* ---- RESP2 as Redis converts a Lua value ---- */

typedef struct {
    char *data;
    size_t length, capacity;
} out_t;

static void out_add(out_t *out, const void *bytes, size_t length) {
    if (out->capacity - out->length < length) {
        size_t capacity = out->capacity ? out->capacity : 256;
        while (capacity - out->length < length) capacity *= 2;
        out->data = realloc(out->data, capacity);
        if (out->data == NULL) abort();
        out->capacity = capacity;
    }
    memcpy(out->data + out->length, bytes, length);
    out->length += length;
}

static void out_printf(out_t *out, const char *format, long long value) {
    char text[64];
    int length = snprintf(text, sizeof text, format, value);
    out_add(out, text, (size_t)length);
}

/* A line of a status or error: CR and LF become spaces. */
static void out_line(out_t *out, char type, const char *text, size_t length) {
    out_add(out, &type, 1);
    for (size_t at = 0; at < length; at++) {
        char byte = text[at] == '\r' || text[at] == '\n' ? ' ' : text[at];
        out_add(out, &byte, 1);
    }
    out_add(out, "\r\n", 2);
}

static long long number_to_integer(double value) { /* as x86-64 casts */
    if (value >= -9223372036854775808.0 && value < 9223372036854775808.0) return (long long)value;
    return INT64_MIN;
}

static void reply_value(lua_State *L, out_t *out, int depth) {
    if (depth > 100 || !lua_checkstack(L, 4)) {
        out_line(out, '-', "ERR reached lua stack limit", 27);
        return;
    }
    switch (lua_type(L, -1)) {
    case LUA_TSTRING: {
        size_t length;
        const char *text = lua_tolstring(L, -1, &length);
        out_printf(out, "$%lld\r\n", (long long)length);
        out_add(out, text, length);
        out_add(out, "\r\n", 2);
        return;
    }
    case LUA_TBOOLEAN:
        if (lua_toboolean(L, -1)) out_add(out, ":1\r\n", 4);
        else out_add(out, "$-1\r\n", 5);
        return;
    case LUA_TNUMBER:
        out_printf(out, ":%lld\r\n", number_to_integer(lua_tonumber(L, -1)));
        return;
    case LUA_TTABLE: {
        const char *fields[] = {"err", "ok"};
        for (int which = 0; which < 2; which++) {
            lua_pushstring(L, fields[which]);
            lua_rawget(L, -2);
            if (lua_type(L, -1) == LUA_TSTRING) {
                size_t length;
                const char *text = lua_tolstring(L, -1, &length);
                out_line(out, which == 0 ? '-' : '+', text, length);
                lua_pop(L, 1);
                return;
            }
            lua_pop(L, 1);
        }
        int count = 0;
        while (1) {
            lua_rawgeti(L, -1, count + 1);
            int nil = lua_isnil(L, -1);
            lua_pop(L, 1);
            if (nil) break;
            count++;
        }
        out_printf(out, "*%lld\r\n", count);
        for (int index = 1; index <= count; index++) {
            lua_rawgeti(L, -1, index);
            reply_value(L, out, depth + 1);
            lua_pop(L, 1);
        }
        return;
    }
    default:
        out_add(out, "$-1\r\n", 5);
    }
}

/* Runs one chunk in a fresh state; appends its reply to out. */
static void run_chunk(const char *chunk, size_t length, out_t *out) {
    lua_State *L = open_state();
    if (L == NULL) {
        out_line(out, '-', "ERR cannot open a Lua state", 27);
        return;
    }
    int status = luaL_loadbuffer(L, chunk, length, "@user_script");
    if (status == 0) status = lua_pcall(L, 0, 1, 0);
    if (status != 0) {
        size_t message_length = 0;
        const char *message = lua_tolstring(L, -1, &message_length);
        if (message == NULL) message = "(error object is not a string)", message_length = strlen(message);
        out_line(out, '-', message, message_length);
    } else {
        reply_value(L, out, 0);
    }
    lua_close(L);
}

static char *read_all(FILE *file, size_t *length) {
    size_t capacity = 65536, used = 0;
    char *data = malloc(capacity);
    size_t got;
    while (data != NULL && (got = fread(data + used, 1, capacity - used, file)) > 0) {
        used += got;
        if (used == capacity) data = realloc(data, capacity *= 2);
    }
    *length = used;
    return data;
}

static int host_main(int batch) {
    size_t length;
    char *input = read_all(stdin, &length);
    if (input == NULL) return 2;
    out_t out = {0};
    if (!batch) {
        run_chunk(input, length, &out);
    } else {
        size_t at = 0;
        while (at < length) {
            char *end;
            unsigned long long size = strtoull(input + at, &end, 10);
            if (end == input + at || *end != '\n' || size > length - (size_t)(end + 1 - input)) {
                fprintf(stderr, "bad batch framing at byte %zu\n", at);
                return 2;
            }
            at = (size_t)(end + 1 - input);
            run_chunk(input + at, (size_t)size, &out);
            at += (size_t)size;
        }
    }
    fwrite(out.data, 1, out.length, stdout);
    free(out.data);
    free(input);
    return 0;
}

/* ---- unit tests ---- */

/* The reply of a chunk, as a NUL-terminated string (freed by the caller). */
static char *reply_of(const char *chunk) {
    out_t out = {0};
    run_chunk(chunk, strlen(chunk), &out);
    out_add(&out, "", 1);
    return out.data;
}

#define EXPECT(chunk, expected) do { char *got_ = reply_of(chunk); \
    CHECK(strcmp(got_, expected) == 0, "%s\n  got      %s\n  expected %s", chunk, got_, expected); \
    free(got_); } while (0)

static void test_registration(void) {
    EXPECT("return {type(cjson), type(cmsgpack), type(bit), type(struct)}",
           "*4\r\n$5\r\ntable\r\n$5\r\ntable\r\n$5\r\ntable\r\n$5\r\ntable\r\n");
    EXPECT("return cjson.null == nil", "$-1\r\n");
    EXPECT("return cjson._VERSION .. cmsgpack._VERSION", "$23\r\n2.1.0lua-cmsgpack 0.4.0\r\n");
    /* cjson.new's configuration is its own */
    EXPECT("local other = cjson.new() other.encode_number_precision(3) "
           "return {cjson.encode(1/3), other.encode(1/3)}",
           "*2\r\n$16\r\n0.33333333333333\r\n$5\r\n0.333\r\n");
}

static void test_bit(void) {
    EXPECT("return bit.tobit(0xffffffff)", ":-1\r\n");
    EXPECT("return bit.tobit(2^32 + 5)", ":5\r\n");
    EXPECT("return bit.tobit(1.5) .. ',' .. bit.tobit(2.5) .. ',' .. bit.tobit(-1.5)", "$6\r\n2,2,-2\r\n");
    EXPECT("return bit.tohex(-1, -4) .. bit.tohex(255, 2) .. bit.tohex(1, 20)", "$14\r\nFFFFff00000001\r\n");
    EXPECT("return bit.arshift(-256, 4)", ":-16\r\n");
    EXPECT("return bit.rshift(-256, 28)", ":15\r\n");
    EXPECT("return bit.lshift(1, 32 + 3)", ":8\r\n");
    EXPECT("return bit.rol(0x80000001, 1)", ":3\r\n");
    EXPECT("return bit.ror(3, 1)", ":-2147483647\r\n");
    EXPECT("return bit.bswap(0x01020304)", ":67305985\r\n");
    EXPECT("return bit.band()", "-user_script:1: bad argument #1 to 'band' (number expected, got no value)\r\n");
    EXPECT("return bit.bor(1, 'x')", "-user_script:1: bad argument #2 to 'bor' (number expected, got string)\r\n");
    EXPECT("return bit.bxor('3', 5)", ":6\r\n");
}

static void test_struct(void) {
    EXPECT("return struct.pack('>i2<i2', 258, 258)", "$4\r\n\x01\x02\x02\x01\r\n");
    EXPECT("return {struct.unpack('>h', '\\255\\254')}", "*2\r\n:-2\r\n:3\r\n");
    EXPECT("return struct.size('!4bxhi')", ":8\r\n");
    EXPECT("return struct.pack('s', 'ab') .. struct.pack('c0', 'xyz')", "$6\r\nab\x00xyz\r\n");
    EXPECT("return {struct.unpack('bc0', '\\3abcd')}", "*2\r\n$3\r\nabc\r\n:5\r\n");
    EXPECT("return struct.pack('i33', 1)", "-user_script:1: integral size 33 is larger than limit of 32\r\n");
    EXPECT("return struct.pack('i99999999999', 1)", "-user_script:1: integral size overflow\r\n");
    EXPECT("return struct.unpack('i', 'abc')",
           "-user_script:1: bad argument #2 to 'unpack' (data string too short)\r\n");
    EXPECT("return struct.unpack('b', 'a', 0)",
           "-user_script:1: bad argument #3 to 'unpack' (offset must be 1 or greater)\r\n");
    EXPECT("return struct.unpack('s', 'abc')", "-user_script:1: unfinished string in data\r\n");
    EXPECT("return struct.size('!3')", "-user_script:1: alignment 3 is not a power of 2\r\n");
    EXPECT("return struct.pack('c5', 'ab')", "-user_script:1: bad argument #3 to 'pack' (string too short)\r\n");
    EXPECT("return struct.unpack('d', struct.pack('d', 0.1)) == 0.1", ":1\r\n");
}

static void test_cmsgpack(void) {
    EXPECT("return cmsgpack.pack({1, 2, 3})", "$4\r\n\x93\x01\x02\x03\r\n");
    EXPECT("return cmsgpack.pack({})", "$1\r\n\x90\r\n");
    EXPECT("return cmsgpack.pack(-1, -33, 255, 1.5)", "$10\r\n\xff\xd0\xdf\xcc\xff\xca\x3f\xc0\x00\x00\r\n");
    EXPECT("return cmsgpack.pack({a = true})", "$4\r\n\x81\xa1" "a\xc3\r\n");
    EXPECT("return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 2)}", "*3\r\n:2\r\n:1\r\n:2\r\n");
    EXPECT("return {cmsgpack.unpack_one(cmsgpack.pack(1, 2), 1)}", "*2\r\n:-1\r\n:2\r\n");
    EXPECT("return cmsgpack.unpack('\\145')", "-user_script:1: Missing bytes in input.\r\n");
    EXPECT("return cmsgpack.unpack('\\193')", "-user_script:1: Bad data format in input.\r\n");
    EXPECT("return cmsgpack.unpack('\\129\\192\\1')", "-table index is nil\r\n");
    EXPECT("return cmsgpack.pack()",
           "-user_script:1: bad argument #0 to 'pack' (MessagePack pack needs input.)\r\n");
    /* 20 nested tables: the 17th level and deeper are nil */
    EXPECT("local t = {} local c = t for i = 1, 20 do c[1] = {} c = c[1] end "
           "return #cmsgpack.pack(t) .. ',' .. cmsgpack.pack(t):byte(-1)", "$6\r\n17,192\r\n");
}

static void test_cjson(void) {
    EXPECT("return cjson.encode({})", "$2\r\n{}\r\n");
    EXPECT("return cjson.encode({1, nil, 3})", "$10\r\n[1,null,3]\r\n");
    EXPECT("return cjson.encode('a/b\\1')", "$12\r\n\"a\\/b\\u0001\"\r\n");
    EXPECT("return cjson.encode(0.1)", "$3\r\n0.1\r\n");
    EXPECT("return cjson.encode({[20] = 1})", "-user_script:1: Cannot serialise table: excessively sparse array\r\n");
    EXPECT("return cjson.encode(1/0)", "-user_script:1: Cannot serialise number: must not be NaN or Inf\r\n");
    EXPECT("return cjson.encode({[true] = 1})",
           "-user_script:1: Cannot serialise boolean: table key must be a number or string\r\n");
    EXPECT("return cjson.decode('[1,2')", "-user_script:1: Expected comma or array end but found T_END at character 5\r\n");
    EXPECT("return cjson.decode('\"\\\\ud800\"')",
           "-user_script:1: Expected value but found invalid unicode escape code at character 2\r\n");
    EXPECT("return cjson.decode('[null]')[1] == cjson.null", ":1\r\n");
    EXPECT("return cjson.decode('\"\\\\ud83d\\\\ude00\"')", "$4\r\n\xf0\x9f\x98\x80\r\n");
    EXPECT("return cjson.decode(string.rep('[', 1001))",
           "-user_script:1: Found too many nested data structures (1001) at character 1001\r\n");
    EXPECT("local t = {} local c = t for i = 1, 1000 do c[1] = {} c = c[1] end return cjson.encode(t)",
           "-user_script:1: Cannot serialise, excessive nesting (1001)\r\n");
    EXPECT("return cjson.encode_max_depth(0)",
           "-user_script:1: bad argument #1 to 'encode_max_depth' (expected integer between 1 and 2147483647)\r\n");
    EXPECT("return cjson.encode_keep_buffer('x')",
           "-user_script:1: bad argument #1 to 'encode_keep_buffer' (invalid option 'x')\r\n");
}

/* The codecs' buffers come from the state's allocator: a counting allocator sees a 4 MB encode
 * (so a runtime that bounds its allocator bounds these libraries too), refuses past a limit
 * (an error, not a crash), and has every byte back at lua_close (LeakSanitizer checks too). */
typedef struct {
    size_t in_use, peak, limit;
} counting_t;

static void *counting_allocate(void *context, void *block, size_t old_size, size_t new_size) {
    counting_t *counter = context;
    if (new_size == 0) {
        counter->in_use -= block ? old_size : 0;
        free(block);
        return NULL;
    }
    size_t in_use = counter->in_use - (block ? old_size : 0) + new_size;
    if (in_use > counter->limit) return NULL;
    void *grown = realloc(block, new_size);
    if (grown == NULL) return NULL;
    counter->in_use = in_use;
    if (in_use > counter->peak) counter->peak = in_use;
    return grown;
}

static void test_buffers_are_the_states_memory(void) {
    counting_t counter = {0, 0, 64u << 20};
    lua_State *L = lua_newstate(counting_allocate, &counter);
    lua_CFunction openers[] = {luaopen_base, luaopen_table, luaopen_string, luaopen_math};
    for (size_t index = 0; index < sizeof openers / sizeof openers[0]; index++) {
        lua_pushcfunction(L, openers[index]);
        lua_call(L, 0, 0);
    }
    gr_lua_open_libraries(L);
    size_t before = counter.in_use;
    const char *chunk = "local s = string.rep('\\1', 2^20) collectgarbage() "
                        "return #cjson.encode(s) + #cmsgpack.pack(s) + #cjson.decode(cjson.encode(s))";
    CHECK(luaL_loadstring(L, chunk) == 0 && lua_pcall(L, 0, 1, 0) == 0, "4 MB encode: %s", lua_tostring(L, -1));
    CHECK(lua_tonumber(L, -1) == (1 << 20) * 6 + 2 + (1 << 20) + 5 + (1 << 20), "sizes: %g", lua_tonumber(L, -1));
    CHECK(counter.peak - before >= (6u << 20), "the encode buffer was counted (peak grew by %zu)", counter.peak - before);
    lua_settop(L, 0);
    size_t kept = counter.in_use;
    CHECK(luaL_dostring(L, "cjson.encode_keep_buffer(false) cjson.encode(1)") == 0, "keep_buffer off");
    lua_gc(L, LUA_GCCOLLECT, 0);
    CHECK(kept - counter.in_use >= (6u << 20), "keep_buffer off frees the kept buffer (%zu freed)", kept - counter.in_use);
    counter.limit = counter.in_use + (2u << 20); /* then 2 MB more at most: the encode buffer is refused */
    chunk = "return #cjson.encode(string.rep('\\1', 2^19))";
    int status = luaL_loadstring(L, chunk) == 0 ? lua_pcall(L, 0, 1, 0) : -1;
    CHECK((status == LUA_ERRMEM || status == LUA_ERRRUN) && strcmp(lua_tostring(L, -1), "not enough memory") == 0,
          "a bounded allocator refuses the encode: status %d, %.60s", status, lua_tostring(L, -1));
    counter.limit = (size_t)-1;
    lua_close(L);
    CHECK(counter.in_use == 0, "%zu bytes still allocated after lua_close", counter.in_use);
}

static void test_nesting_past_the_stack_limit_is_an_error(void) {
    EXPECT("cjson.decode_max_depth(2^31 - 1) return cjson.decode(string.rep('[', 100000))",
           "-user_script:1: Found too many nested data structures (7999) at character 7999\r\n");
    EXPECT("cjson.encode_max_depth(2^31 - 1) local t = {} local c = t for i = 1, 100000 do c[1] = {} c = c[1] end "
           "return cjson.encode(t)", "-user_script:1: Cannot serialise, excessive nesting (7998)\r\n");
    EXPECT("return cmsgpack.unpack(string.rep('\\145', 100000))",
           "-user_script:1: stack overflow (in function mp_decode_to_lua_array)\r\n");
    EXPECT("cjson.encode_keep_buffer(false) local a = cjson.encode({1, 'x'}) cjson.encode_keep_buffer(true) "
           "return a .. cjson.encode({2})", "$10\r\n[1,\"x\"][2]\r\n");
}

/* Random bytes into the decoders: an error or a value, never a crash (run under ASan by
 * run_c_tests.py --sanitize). Inputs are mutations of valid encodings, so they get deep. */
static void test_decoders_survive_random_input(long rounds) {
    const char *seeds[] = {
        "{\"a\":[1,2.5e3,\"x\\u00e9\\ud83d\\ude00\",true,false,null,{\"b\":-0}]}",
        "[[[[[]]]],{},\"\\\\\\/\\b\\f\\n\\r\\t\",0x1F,-Infinity,NaN]",
    };
    lua_State *L = open_state();
    long survived = 0;
    for (long round = 0; round < rounds; round++) {
        char input[128];
        size_t length;
        int which = (int)below(3);
        if (which < 2) {
            length = strlen(seeds[which]);
            memcpy(input, seeds[which], length);
            for (int flips = 1 + (int)below(4); flips > 0; flips--) input[below(length)] = (char)rnd();
            length = below(length + 1);
        } else {
            length = below(sizeof input);
            for (size_t at = 0; at < length; at++) input[at] = (char)(below(4) == 0 ? 0x90 + below(16) : rnd());
        }
        const char *functions[][2] = {{"cjson", "decode"}, {"cmsgpack", "unpack"}, {"struct", "unpack"}};
        for (int function = 0; function < 3; function++) {
            lua_settop(L, 0);
            lua_getglobal(L, functions[function][0]);
            lua_getfield(L, -1, functions[function][1]);
            int arguments = 1;
            if (function == 2) { /* a random format over the input */
                const char *options = "bBhHlLTiIfdsxc0123456789<>! ";
                char format[16];
                size_t format_length = below(sizeof format);
                for (size_t at = 0; at < format_length; at++) format[at] = options[below(strlen(options))];
                lua_pushlstring(L, format, format_length);
                arguments = 2;
            }
            lua_pushlstring(L, input, length);
            if (lua_pcall(L, arguments, LUA_MULTRET, 0) == 0 || lua_isstring(L, -1)) survived++;
        }
    }
    lua_close(L);
    CHECK(survived == rounds * 3, "%ld of %ld random decodes ended cleanly", survived, rounds * 3);
    /* and what they decode re-encodes: cjson and cmsgpack round trips of random tables */
    L = open_state();
    const char *round_trip =
        "local function value(depth)\n"
        "  local kind = math.random(depth > 3 and 4 or 6)\n"
        "  if kind == 1 then return math.random(-1e6, 1e6) end\n"
        "  if kind == 2 then return math.random() * 1000 end\n"
        "  if kind == 3 then local s = {} for i = 1, math.random(0, 40) do s[i] = string.char(math.random(0, 255)) end return table.concat(s) end\n"
        "  if kind == 4 then return math.random(2) == 1 end\n"
        "  local t = {}\n"
        "  if kind == 5 then for i = 1, math.random(0, 20) do t[i] = value(depth + 1) end\n"
        "  else for i = 1, math.random(1, 20) do t['k' .. i] = value(depth + 1) end end\n"
        "  return t\n"
        "end\n"
        "local function same(a, b)\n"
        "  if type(a) ~= type(b) then return false end\n"
        "  if type(a) == 'number' then return a == b or math.abs(a - b) <= 1e-9 * math.abs(a) end\n"
        "  if type(a) ~= 'table' then return a == b end\n"
        "  for k, v in pairs(a) do if not same(v, b[k]) then return false end end\n"
        "  for k in pairs(b) do if a[k] == nil then return false end end\n"
        "  return true\n"
        "end\n"
        "cjson.encode_number_precision(14)\n"
        "local bad = 0\n"
        "for i = 1, ... do\n"
        "  local v = value(0)\n"
        "  if not same(v, cmsgpack.unpack(cmsgpack.pack(v))) then bad = bad + 1 end\n"
        "  local ok, text = pcall(cjson.encode, v)\n"
        "  if ok and not same(v, cjson.decode(text)) then bad = bad + 1 end\n"
        "end\n"
        "return bad\n";
    CHECK(luaL_loadstring(L, round_trip) == 0, "round trip chunk compiles");
    lua_pushinteger(L, rounds / 10 + 1);
    int status = lua_pcall(L, 1, 1, 0);
    CHECK(status == 0 && lua_tonumber(L, -1) == 0, "round trips: %s", lua_tostring(L, -1));
    lua_close(L);
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--eval") == 0) return host_main(0);
    if (argc > 1 && strcmp(argv[1], "--batch") == 0) return host_main(1);
    long rounds = argc > 1 ? atol(argv[1]) : 20000;
    test_registration();
    test_bit();
    test_struct();
    test_cmsgpack();
    test_cjson();
    test_buffers_are_the_states_memory();
    test_nesting_past_the_stack_limit_is_an_error();
    test_decoders_survive_random_input(rounds);
    return checks_report();
}
