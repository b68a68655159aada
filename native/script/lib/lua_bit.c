/* The `bit` library of Redis's Lua environment: LuaBitOp's operations on 32-bit integers,
 * written here to its documented semantics. Lua 5.1 numbers are doubles, so every argument is
 * first normalised to 32 bits the way LuaBitOp specifies: the double is rounded to an integer
 * (ties to even) and taken modulo 2^32 — done by adding 2^52 + 2^51 and reading the low word of
 * the sum's bit pattern, which is what makes huge and fractional inputs land where LuaBitOp's
 * do. Results are signed 32-bit values (bit.tobit(0xffffffff) is -1), except bit.tohex's
 * string; bit.tohex(x, n) writes |n| digits, at most 8 (upper case when n < 0). Registered by lua_libraries.c. */
#include <stdint.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "script/lib/lua_libraries.h"

/* The argument at index as 32 bits; not a number (nor a numeric string) is the usual
 * "number expected" argument error. */
static uint32_t bit_argument(lua_State *L, int index) {
    double value = lua_tonumber(L, index) + 6755399441055744.0; /* 2^52 + 2^51 */
    uint64_t pattern;
    memcpy(&pattern, &value, sizeof pattern);
    uint32_t bits = (uint32_t)pattern;
    if (bits == 0 && !lua_isnumber(L, index)) luaL_typerror(L, index, "number");
    return bits;
}

static int bit_return(lua_State *L, uint32_t bits) {
    lua_pushnumber(L, (lua_Number)(int32_t)bits);
    return 1;
}

static int bit_tobit(lua_State *L) { return bit_return(L, bit_argument(L, 1)); }
static int bit_bnot(lua_State *L) { return bit_return(L, ~bit_argument(L, 1)); }
static int bit_bswap(lua_State *L) {
    uint32_t bits = bit_argument(L, 1);
    return bit_return(L, (bits >> 24) | ((bits >> 8) & 0xff00u) | ((bits & 0xff00u) << 8) | (bits << 24));
}

/* band/bor/bxor fold all of their arguments (at least one). */
static int bit_band(lua_State *L) {
    uint32_t bits = bit_argument(L, 1);
    for (int index = lua_gettop(L); index > 1; index--) bits &= bit_argument(L, index);
    return bit_return(L, bits);
}
static int bit_bor(lua_State *L) {
    uint32_t bits = bit_argument(L, 1);
    for (int index = lua_gettop(L); index > 1; index--) bits |= bit_argument(L, index);
    return bit_return(L, bits);
}
static int bit_bxor(lua_State *L) {
    uint32_t bits = bit_argument(L, 1);
    for (int index = lua_gettop(L); index > 1; index--) bits ^= bit_argument(L, index);
    return bit_return(L, bits);
}

/* Shift and rotate counts use their low five bits. */
static int bit_lshift(lua_State *L) {
    uint32_t bits = bit_argument(L, 1), count = bit_argument(L, 2) & 31;
    return bit_return(L, bits << count);
}
static int bit_rshift(lua_State *L) {
    uint32_t bits = bit_argument(L, 1), count = bit_argument(L, 2) & 31;
    return bit_return(L, bits >> count);
}
static int bit_arshift(lua_State *L) {
    uint32_t bits = bit_argument(L, 1), count = bit_argument(L, 2) & 31;
    uint32_t shifted = bits >> count;
    if ((bits & 0x80000000u) && count) shifted |= ~(UINT32_MAX >> count);
    return bit_return(L, shifted);
}
static int bit_rol(lua_State *L) {
    uint32_t bits = bit_argument(L, 1), count = bit_argument(L, 2) & 31;
    return bit_return(L, count ? (bits << count) | (bits >> (32 - count)) : bits);
}
static int bit_ror(lua_State *L) {
    uint32_t bits = bit_argument(L, 1), count = bit_argument(L, 2) & 31;
    return bit_return(L, count ? (bits >> count) | (bits << (32 - count)) : bits);
}

/* bit.tohex(x [, n]): the low |n| hex digits of x (n defaults to 8, at most 8 are written);
 * a negative n asks for upper case. */
static int bit_tohex(lua_State *L) {
    uint32_t bits = bit_argument(L, 1);
    int32_t digits = lua_isnone(L, 2) ? 8 : (int32_t)bit_argument(L, 2);
    const char *alphabet = "0123456789abcdef";
    if (digits < 0) {
        digits = digits == INT32_MIN ? 8 : -digits; /* INT32_MIN: 8 digits, as LuaBitOp built by gcc */
        alphabet = "0123456789ABCDEF";
    }
    if (digits > 8) digits = 8;
    char text[8];
    for (int position = digits - 1; position >= 0; position--) {
        text[position] = alphabet[bits & 15];
        bits >>= 4;
    }
    lua_pushlstring(L, text, digits > 0 ? (size_t)digits : 0);
    return 1;
}

static const luaL_Reg bit_functions[] = {
    {"tobit", bit_tobit},   {"bnot", bit_bnot},     {"band", bit_band},     {"bor", bit_bor},
    {"bxor", bit_bxor},     {"lshift", bit_lshift}, {"rshift", bit_rshift}, {"arshift", bit_arshift},
    {"rol", bit_rol},       {"ror", bit_ror},       {"bswap", bit_bswap},   {"tohex", bit_tohex},
    {NULL, NULL},
};

int gr_luaopen_bit(lua_State *L) {
    luaL_register(L, "bit", bit_functions);
    return 1;
}
