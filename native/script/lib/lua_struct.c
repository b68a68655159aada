/* The `struct` library of Redis's Lua environment: struct.pack(fmt, ...), struct.unpack(fmt,
 * data [, offset]) and struct.size(fmt), converting between Lua values and binary records,
 * written here to the library's documented format language with the bounds checks Redis added
 * (size overflow, integer size limit, offset checks) and Redis's error texts.
 *
 * Format: ' ' ignored; '<' little, '>' big endian; '!n' max alignment n (power of 2, default
 * the platform's max, 8); 'x' a zero byte; 'b'/'B' char, 'h'/'H' short, 'l'/'L' long,
 * 'T' size_t, 'i'/'I'[n] an n-byte int (default 4, at most 32), lower case signed; 'f' float,
 * 'd' double; 's' a zero-terminated string; 'c'[n] n bytes (pack: 'c0' takes the whole
 * string; unpack: 'c0' takes its length from the previously read number). A record starts
 * native-endian (little here) with alignment 1. Integers travel as 64-bit values converted
 * from Lua's doubles the way x86-64 converts (out-of-range doubles become 2^63) and wider
 * fields are padded with zeros, sign-extended on unpack by x86's shift rule, as Redis's build
 * does. Registered by lua_libraries.c. */
#include <ctype.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "script/lib/lua_libraries.h"

#define STRUCT_MAX_INT_SIZE 32
#define STRUCT_MAX_ALIGN 8

typedef struct {
    int little_endian;
    size_t align;
} struct_header_t;

/* A count after an option; `fallback` when none is written. */
static int struct_number(lua_State *L, const char **format, int fallback) {
    if (!isdigit((unsigned char)**format)) return fallback;
    int value = 0;
    while (isdigit((unsigned char)**format)) {
        int digit = **format - '0';
        if (value > INT_MAX / 10 || value * 10 > INT_MAX - digit) luaL_error(L, "integral size overflow");
        value = value * 10 + digit;
        (*format)++;
    }
    return value;
}

/* Bytes the option takes (0 for controls, 's' and 'c0'); reads the option's count. */
static size_t struct_option_size(lua_State *L, char option, const char **format) {
    switch (option) {
    case 'b': case 'B': return sizeof(char);
    case 'h': case 'H': return sizeof(short);
    case 'l': case 'L': return sizeof(long);
    case 'T': return sizeof(size_t);
    case 'f': return sizeof(float);
    case 'd': return sizeof(double);
    case 'x': return 1;
    case 'c': return (size_t)struct_number(L, format, 1);
    case 'i': case 'I': {
        int size = struct_number(L, format, sizeof(int));
        if (size > STRUCT_MAX_INT_SIZE)
            luaL_error(L, "integral size %d is larger than limit of %d", size, STRUCT_MAX_INT_SIZE);
        return (size_t)size;
    }
    default: return 0;
    }
}

/* Padding before a field of `size` bytes at offset `position`. */
static size_t struct_padding(size_t position, const struct_header_t *header, char option, size_t size) {
    if (size == 0 || option == 'c') return 0;
    if (size > header->align) size = header->align;
    return (size - (position & (size - 1))) & (size - 1);
}

/* ' ', '<', '>', '!' and anything else (an invalid-option argument error). */
static void struct_control(lua_State *L, char option, const char **format, struct_header_t *header) {
    switch (option) {
    case ' ': return;
    case '>': header->little_endian = 0; return;
    case '<': header->little_endian = 1; return;
    case '!': {
        int align = struct_number(L, format, STRUCT_MAX_ALIGN);
        if (align <= 0 || (align & (align - 1)) != 0) luaL_error(L, "alignment %d is not a power of 2", align);
        header->align = (size_t)align;
        return;
    }
    default:
        luaL_argerror(L, 1, lua_pushfstring(L, "invalid format option '%c'", option));
    }
}

/* Double to 64 bits as x86-64's conversions do it (out of range: 2^63). */
static uint64_t struct_double_to_int64(double value) {
    if (value >= -9223372036854775808.0 && value < 9223372036854775808.0) return (uint64_t)(int64_t)value;
    return UINT64_C(1) << 63;
}
static uint64_t struct_double_to_bits(double value) {
    if (value < 0) return struct_double_to_int64(value);
    if (!(value >= 9223372036854775808.0)) return struct_double_to_int64(value);
    return struct_double_to_int64(value - 9223372036854775808.0) ^ (UINT64_C(1) << 63);
}

static void struct_put_integer(lua_State *L, luaL_Buffer *buffer, int argument, int little_endian, size_t size) {
    uint64_t value = struct_double_to_bits(luaL_checknumber(L, argument));
    char bytes[STRUCT_MAX_INT_SIZE];
    for (size_t step = 0; step < size; step++) {
        bytes[little_endian ? step : size - 1 - step] = (char)(value & 0xff);
        value >>= 8;
    }
    luaL_addlstring(buffer, bytes, size);
}

static lua_Number struct_get_integer(const char *data, int little_endian, int is_signed, size_t size) {
    uint64_t value = 0;
    for (size_t step = 0; step < size; step++) {
        size_t index = little_endian ? size - 1 - step : step;
        value = (value << 8) | (unsigned char)data[index];
    }
    if (!is_signed) return (lua_Number)value;
    if (size == 0) return 0;
    uint64_t mask = ~UINT64_C(0) << ((size * 8 - 1) & 63); /* x86 masks the shift count */
    if (value & mask) value |= mask;
    return (lua_Number)(int64_t)value;
}

/* Float and double fields travel in the record's byte order. */
static void struct_order_bytes(char *bytes, size_t size, int little_endian) {
    const int host_little = 1;
    if (little_endian == *(const char *)&host_little) return;
    for (size_t low = 0, high = size - 1; low < high; low++, high--) {
        char swap = bytes[low];
        bytes[low] = bytes[high];
        bytes[high] = swap;
    }
}

static int struct_pack(lua_State *L) {
    const char *format = luaL_checkstring(L, 1);
    struct_header_t header = {1, 1};
    int argument = 2;
    size_t total = 0;
    luaL_Buffer buffer;
    lua_pushnil(L); /* keeps the arguments apart from the buffer's stack slots */
    luaL_buffinit(L, &buffer);
    while (*format != '\0') {
        char option = *format++;
        size_t size = struct_option_size(L, option, &format);
        size_t padding = struct_padding(total, &header, option, size);
        total += padding;
        while (padding-- > 0) luaL_addchar(&buffer, '\0');
        switch (option) {
        case 'b': case 'B': case 'h': case 'H': case 'l': case 'L': case 'T': case 'i': case 'I':
            struct_put_integer(L, &buffer, argument++, header.little_endian, size);
            break;
        case 'x':
            luaL_addchar(&buffer, '\0');
            break;
        case 'f': {
            float value = (float)luaL_checknumber(L, argument++);
            struct_order_bytes((char *)&value, size, header.little_endian);
            luaL_addlstring(&buffer, (char *)&value, size);
            break;
        }
        case 'd': {
            double value = luaL_checknumber(L, argument++);
            struct_order_bytes((char *)&value, size, header.little_endian);
            luaL_addlstring(&buffer, (char *)&value, size);
            break;
        }
        case 'c': case 's': {
            size_t length;
            const char *text = luaL_checklstring(L, argument++, &length);
            if (size == 0) size = length;
            /* the argument number named is the next one: Redis's library reports it so */
            luaL_argcheck(L, length >= size, argument, "string too short");
            luaL_addlstring(&buffer, text, size);
            if (option == 's') {
                luaL_addchar(&buffer, '\0');
                size++;
            }
            break;
        }
        default:
            struct_control(L, option, &format, &header);
        }
        total += size;
    }
    luaL_pushresult(&buffer);
    return 1;
}

static int struct_unpack(lua_State *L) {
    const char *format = luaL_checkstring(L, 1);
    size_t length;
    const char *data = luaL_checklstring(L, 2, &length);
    size_t position = (size_t)luaL_optinteger(L, 3, 1);
    luaL_argcheck(L, position > 0, 3, "offset must be 1 or greater");
    position--;
    struct_header_t header = {1, 1};
    lua_settop(L, 2);
    while (*format != '\0') {
        char option = *format++;
        size_t size = struct_option_size(L, option, &format);
        position += struct_padding(position, &header, option, size);
        luaL_argcheck(L, size <= length && position <= length - size, 2, "data string too short");
        luaL_checkstack(L, 2, "too many results");
        switch (option) {
        case 'b': case 'B': case 'h': case 'H': case 'l': case 'L': case 'T': case 'i': case 'I':
            lua_pushnumber(L, struct_get_integer(data + position, header.little_endian,
                                                 islower((unsigned char)option), size));
            break;
        case 'x':
            break;
        case 'f': {
            float value;
            memcpy(&value, data + position, size);
            struct_order_bytes((char *)&value, sizeof value, header.little_endian);
            lua_pushnumber(L, value);
            break;
        }
        case 'd': {
            double value;
            memcpy(&value, data + position, size);
            struct_order_bytes((char *)&value, sizeof value, header.little_endian);
            lua_pushnumber(L, value);
            break;
        }
        case 'c':
            if (size == 0) {
                if (lua_gettop(L) <= 2 || !lua_isnumber(L, -1)) luaL_error(L, "format 'c0' needs a previous size");
                size = (size_t)struct_double_to_bits(lua_tonumber(L, -1));
                lua_pop(L, 1);
                luaL_argcheck(L, size <= length && position <= length - size, 2, "data string too short");
            }
            lua_pushlstring(L, data + position, size);
            break;
        case 's': {
            const char *end = memchr(data + position, '\0', length - position);
            if (end == NULL) luaL_error(L, "unfinished string in data");
            size = (size_t)(end - (data + position)) + 1;
            lua_pushlstring(L, data + position, size - 1);
            break;
        }
        default:
            struct_control(L, option, &format, &header);
        }
        position += size;
    }
    lua_pushinteger(L, (lua_Integer)(position + 1));
    return lua_gettop(L) - 2;
}

static int struct_size(lua_State *L) {
    const char *format = luaL_checkstring(L, 1);
    struct_header_t header = {1, 1};
    size_t position = 0;
    while (*format != '\0') {
        char option = *format++;
        size_t size = struct_option_size(L, option, &format);
        position += struct_padding(position, &header, option, size);
        if (option == 's') luaL_argerror(L, 1, "option 's' has no fixed size");
        else if (option == 'c' && size == 0) luaL_argerror(L, 1, "option 'c0' has no fixed size");
        if (!isalnum((unsigned char)option)) struct_control(L, option, &format, &header);
        position += size;
    }
    lua_pushinteger(L, (lua_Integer)position);
    return 1;
}

static const luaL_Reg struct_functions[] = {
    {"pack", struct_pack},
    {"unpack", struct_unpack},
    {"size", struct_size},
    {NULL, NULL},
};

int gr_luaopen_struct(lua_State *L) {
    luaL_register(L, "struct", struct_functions);
    return 1;
}
