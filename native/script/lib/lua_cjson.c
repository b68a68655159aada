/* The `cjson` library of Redis's Lua environment (Lua CJSON 2.1.0's interface, as Redis 7
 * ships it): cjson.encode(value) and cjson.decode(text), the configuration functions
 * encode_sparse_array, encode_max_depth, decode_max_depth, encode_number_precision,
 * encode_keep_buffer, encode_invalid_numbers, decode_invalid_numbers, cjson.new() (a module
 * table with its own configuration), cjson.null (a NULL light userdata standing for JSON null),
 * _NAME and _VERSION. Written here to the library's documented behaviour, Redis as reference:
 *   - encode: numbers with "%.<precision>g" (precision 14 by default), NaN/Inf refused unless
 *     encode_invalid_numbers allows them ("nan", "inf", "-inf") or maps them to null; strings
 *     escape '"', '\', '/' and control characters (\b \t \n \f \r, others \u00XX, and DEL);
 *     a table whose keys are all positive integers is an array (holes are null) unless it is
 *     excessively sparse (max key > safe and > ratio * items: an error, or an object when
 *     convert is on); anything else, including {}, is an object with number or string keys;
 *     nesting past encode_max_depth is "Cannot serialise, excessive nesting (N)";
 *   - decode: RFC 4627 JSON plus, while decode_invalid_numbers is on (the default), hex,
 *     leading zeros and '+', Infinity and NaN; errors say "Expected <what> but found <token>
 *     at character <n>"; null decodes to cjson.null; nesting past decode_max_depth is
 *     "Found too many nested data structures (N) at character <n>".
 * The configuration lives in a userdata every function holds as its upvalue. Output is built
 * with Lua's allocator (lua_strbuf.h) in buffers the configuration keeps (in its environment
 * table); encode_keep_buffer off frees the output buffer after each encode, as the library
 * does with its C buffer. Neither codec keeps anything on the Lua stack beyond what the
 * original does, so Lua's C stack limit stops deep nesting at the same depth as in Redis.
 * Registered by lua_libraries.c. */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "script/lib/lua_libraries.h"
#include "script/lib/lua_strbuf.h"

#define CJSON_DEFAULT_MAX_DEPTH 1000
#define CJSON_DEFAULT_PRECISION 14

typedef struct {
    int sparse_convert;
    int sparse_ratio;
    int sparse_safe;
    int encode_max_depth;
    int decode_max_depth;
    int number_precision;
    int keep_buffer;
    int encode_invalid_numbers; /* 0 refuse, 1 allow, 2 encode as null */
    int decode_invalid_numbers;
    gr_strbuf_t *encode_buffer;  /* kept between encodes while keep_buffer is on */
    gr_strbuf_t *decode_scratch; /* decoded string bytes (input length + 1) */
} cjson_config_t;

static cjson_config_t *cjson_config(lua_State *L) {
    return (cjson_config_t *)lua_touserdata(L, lua_upvalueindex(1));
}

/* ---- configuration ---- */

/* Checks a configuration function got at most `count` arguments and pads them with nils. */
static cjson_config_t *cjson_config_arguments(lua_State *L, int count) {
    luaL_argcheck(L, lua_gettop(L) <= count, count + 1, "found too many arguments");
    while (lua_gettop(L) < count) lua_pushnil(L);
    return cjson_config(L);
}

/* Sets *setting from an integer argument in [min, max] when given; pushes the setting. */
static void cjson_integer_option(lua_State *L, int index, int *setting, int min, int max) {
    if (!lua_isnil(L, index)) {
        int value = (int)luaL_checkinteger(L, index);
        char message[64];
        snprintf(message, sizeof message, "expected integer between %d and %d", min, max);
        luaL_argcheck(L, min <= value && value <= max, 1, message);
        *setting = value;
    }
    lua_pushinteger(L, *setting);
}

/* Sets *setting from a boolean or one of `names` when given; pushes the setting back as a
 * boolean (off/on) or its name. */
static void cjson_enum_option(lua_State *L, int index, int *setting, const char *const *names) {
    static const char *const on_off[] = {"off", "on", NULL};
    if (names == NULL) names = on_off;
    if (!lua_isnil(L, index)) {
        if (lua_isboolean(L, index)) *setting = lua_toboolean(L, index);
        else *setting = luaL_checkoption(L, index, NULL, names);
    }
    if (*setting == 0 || *setting == 1) lua_pushboolean(L, *setting);
    else lua_pushstring(L, names[*setting]);
}

static int cjson_encode_sparse_array(lua_State *L) {
    cjson_config_t *config = cjson_config_arguments(L, 3);
    cjson_enum_option(L, 1, &config->sparse_convert, NULL);
    cjson_integer_option(L, 2, &config->sparse_ratio, 0, INT_MAX);
    cjson_integer_option(L, 3, &config->sparse_safe, 0, INT_MAX);
    return 3;
}

static int cjson_encode_max_depth(lua_State *L) {
    cjson_config_t *config = cjson_config_arguments(L, 1);
    cjson_integer_option(L, 1, &config->encode_max_depth, 1, INT_MAX);
    return 1;
}

static int cjson_decode_max_depth(lua_State *L) {
    cjson_config_t *config = cjson_config_arguments(L, 1);
    cjson_integer_option(L, 1, &config->decode_max_depth, 1, INT_MAX);
    return 1;
}

static int cjson_encode_number_precision(lua_State *L) {
    cjson_config_t *config = cjson_config_arguments(L, 1);
    cjson_integer_option(L, 1, &config->number_precision, 1, 14);
    return 1;
}

static int cjson_encode_keep_buffer(lua_State *L) {
    cjson_config_t *config = cjson_config_arguments(L, 1);
    cjson_enum_option(L, 1, &config->keep_buffer, NULL);
    return 1;
}

static int cjson_encode_invalid_numbers(lua_State *L) {
    static const char *const names[] = {"off", "on", "null", NULL};
    cjson_config_t *config = cjson_config_arguments(L, 1);
    cjson_enum_option(L, 1, &config->encode_invalid_numbers, names);
    return 1;
}

static int cjson_decode_invalid_numbers(lua_State *L) {
    cjson_config_t *config = cjson_config_arguments(L, 1);
    cjson_enum_option(L, 1, &config->decode_invalid_numbers, NULL);
    return 1;
}

/* ---- encoding ---- */

static void cjson_encode_error(lua_State *L, int index, const char *reason) {
    luaL_error(L, "Cannot serialise %s: %s", luaL_typename(L, index), reason);
}

static void cjson_encode_string(lua_State *L, gr_strbuf_t *buffer, int index) {
    size_t length;
    const char *text = lua_tolstring(L, index, &length);
    static const char hex[] = "0123456789abcdef";
    gr_strbuf_reserve(buffer, length * 6 + 2);
    char *out = buffer->data + buffer->length;
    *out++ = '"';
    for (size_t at = 0; at < length; at++) {
        unsigned char byte = (unsigned char)text[at];
        const char *escape = NULL;
        switch (byte) {
        case '"': escape = "\\\""; break;
        case '\\': escape = "\\\\"; break;
        case '/': escape = "\\/"; break;
        case '\b': escape = "\\b"; break;
        case '\t': escape = "\\t"; break;
        case '\n': escape = "\\n"; break;
        case '\f': escape = "\\f"; break;
        case '\r': escape = "\\r"; break;
        default: break;
        }
        if (escape != NULL) {
            *out++ = escape[0];
            *out++ = escape[1];
        } else if (byte < 0x20 || byte == 0x7f) {
            memcpy(out, "\\u00", 4);
            out[4] = hex[byte >> 4];
            out[5] = hex[byte & 15];
            out += 6;
        } else {
            *out++ = (char)byte;
        }
    }
    *out++ = '"';
    buffer->length = (size_t)(out - buffer->data);
}

static void cjson_encode_number(lua_State *L, cjson_config_t *config, gr_strbuf_t *buffer, int index) {
    double value = lua_tonumber(L, index);
    if (isinf(value) || isnan(value)) {
        if (config->encode_invalid_numbers == 0) cjson_encode_error(L, index, "must not be NaN or Inf");
        if (config->encode_invalid_numbers == 2) {
            gr_strbuf_add(buffer, "null", 4);
            return;
        }
        if (isnan(value)) { /* never "-nan" */
            gr_strbuf_add(buffer, "nan", 3);
            return;
        }
    }
    char text[64];
    int length;
    /* An integer with fewer digits than the precision is what "%.<precision>g" prints it as
     * (-0 aside), so it skips printf, the cost of most encodes. */
    static const double powers_of_ten[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14};
    if (value == floor(value) && fabs(value) < powers_of_ten[config->number_precision] && (value != 0 || !signbit(value)))
        length = snprintf(text, sizeof text, "%lld", (long long)value);
    else
        length = snprintf(text, sizeof text, "%.*g", config->number_precision, value);
    gr_strbuf_add(buffer, text, (size_t)length);
}

/* x86-64's double to int conversion: out of range is INT_MIN (Redis's cjson stores the
 * largest array key in an int). */
static int cjson_double_to_int(double value) {
    return value > -2147483649.0 && value < 2147483648.0 ? (int)value : INT_MIN;
}

/* For the table on the stack top: its array length (> 0) when all keys are positive
 * integers, 0 for an empty table, -1 when it is to be an object. */
static int cjson_array_length(lua_State *L, cjson_config_t *config) {
    int max = 0, items = 0;
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        double key;
        if (lua_type(L, -2) == LUA_TNUMBER && (key = lua_tonumber(L, -2)) != 0 && floor(key) == key && key >= 1) {
            if (key > max) max = cjson_double_to_int(key);
            items++;
            lua_pop(L, 1);
            continue;
        }
        lua_pop(L, 2);
        return -1;
    }
    if (config->sparse_ratio > 0 && max > items * config->sparse_ratio && max > config->sparse_safe) {
        if (!config->sparse_convert) cjson_encode_error(L, -1, "excessively sparse array");
        return -1;
    }
    return max;
}

static void cjson_encode_value(lua_State *L, cjson_config_t *config, gr_strbuf_t *buffer, int depth);

static void cjson_encode_table(lua_State *L, cjson_config_t *config, gr_strbuf_t *buffer, int depth) {
    depth++;
    if (depth > config->encode_max_depth || !lua_checkstack(L, 3))
        luaL_error(L, "Cannot serialise, excessive nesting (%d)", depth);
    int length = cjson_array_length(L, config);
    if (length > 0) {
        gr_strbuf_add_char(buffer, '[');
        for (int index = 1; index <= length; index++) {
            if (index > 1) gr_strbuf_add_char(buffer, ',');
            lua_rawgeti(L, -1, index);
            cjson_encode_value(L, config, buffer, depth);
            lua_pop(L, 1);
        }
        gr_strbuf_add_char(buffer, ']');
        return;
    }
    gr_strbuf_add_char(buffer, '{');
    int first = 1;
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        if (!first) gr_strbuf_add_char(buffer, ',');
        first = 0;
        int key_type = lua_type(L, -2);
        if (key_type == LUA_TNUMBER) {
            gr_strbuf_add_char(buffer, '"');
            cjson_encode_number(L, config, buffer, -2);
            gr_strbuf_add(buffer, "\":", 2);
        } else if (key_type == LUA_TSTRING) {
            cjson_encode_string(L, buffer, -2);
            gr_strbuf_add_char(buffer, ':');
        } else {
            cjson_encode_error(L, -2, "table key must be a number or string");
        }
        cjson_encode_value(L, config, buffer, depth);
        lua_pop(L, 1);
    }
    gr_strbuf_add_char(buffer, '}');
}

/* Encodes the value on the stack top (left there). */
static void cjson_encode_value(lua_State *L, cjson_config_t *config, gr_strbuf_t *buffer, int depth) {
    switch (lua_type(L, -1)) {
    case LUA_TSTRING: cjson_encode_string(L, buffer, -1); break;
    case LUA_TNUMBER: cjson_encode_number(L, config, buffer, -1); break;
    case LUA_TBOOLEAN:
        if (lua_toboolean(L, -1)) gr_strbuf_add(buffer, "true", 4);
        else gr_strbuf_add(buffer, "false", 5);
        break;
    case LUA_TTABLE: cjson_encode_table(L, config, buffer, depth); break;
    case LUA_TNIL: gr_strbuf_add(buffer, "null", 4); break;
    case LUA_TLIGHTUSERDATA:
        if (lua_touserdata(L, -1) == NULL) {
            gr_strbuf_add(buffer, "null", 4);
            break;
        }
        /* fall through */
    default:
        cjson_encode_error(L, -1, "type not supported");
    }
}

/* The value is argument 1, the stack top: the encoder walks it where it is. */
static int cjson_encode(lua_State *L) {
    cjson_config_t *config = cjson_config(L);
    luaL_argcheck(L, lua_gettop(L) == 1, 1, "expected 1 argument");
    gr_strbuf_t *buffer = config->encode_buffer;
    gr_strbuf_begin(buffer, L);
    cjson_encode_value(L, config, buffer, 0);
    lua_pushlstring(L, buffer->data, buffer->length);
    if (!config->keep_buffer) gr_strbuf_release(buffer);
    return 1;
}

/* ---- decoding ---- */

typedef enum {
    T_OBJ_BEGIN, T_OBJ_END, T_ARR_BEGIN, T_ARR_END, T_STRING, T_NUMBER, T_BOOLEAN, T_NULL,
    T_COLON, T_COMMA, T_END, T_WHITESPACE, T_ERROR, T_UNKNOWN,
} cjson_token_type_t;

static const char *const cjson_token_names[] = {
    "T_OBJ_BEGIN", "T_OBJ_END", "T_ARR_BEGIN", "T_ARR_END", "T_STRING", "T_NUMBER", "T_BOOLEAN",
    "T_NULL", "T_COLON", "T_COMMA", "T_END", "T_WHITESPACE", "T_ERROR", "T_UNKNOWN",
};

typedef struct {
    cjson_token_type_t type;
    size_t index;          /* 0-based offset of the token (or of the error) */
    const char *error;     /* T_ERROR: what was wrong */
    double number;
    int boolean;
    size_t string_length;  /* T_STRING: its bytes are in the parser's scratch */
} cjson_token_t;

typedef struct {
    lua_State *L;
    cjson_config_t *config;
    const char *data;      /* NUL-terminated (a Lua string); a NUL ends the input */
    const char *at;
    char *scratch;         /* decoded string bytes; never longer than the input */
    int depth;
} cjson_parser_t;

static cjson_token_type_t cjson_classify(unsigned char byte) {
    switch (byte) {
    case '\0': return T_END;
    case ' ': case '\t': case '\n': case '\r': return T_WHITESPACE;
    case '{': return T_OBJ_BEGIN;
    case '}': return T_OBJ_END;
    case '[': return T_ARR_BEGIN;
    case ']': return T_ARR_END;
    case ':': return T_COLON;
    case ',': return T_COMMA;
    case '"': case '+': case '-': case 'f': case 'i': case 'I': case 'n': case 'N': case 't':
        return T_UNKNOWN;
    default:
        return byte >= '0' && byte <= '9' ? T_UNKNOWN : T_ERROR;
    }
}

static void cjson_token_error(cjson_parser_t *parser, cjson_token_t *token, const char *what) {
    token->type = T_ERROR;
    token->index = (size_t)(parser->at - parser->data);
    token->error = what;
}

/* Text JSON does not allow as a number but strtod reads: hex, leading zeros, '+', inf, nan. */
static int cjson_is_invalid_number(const char *at) {
    if (*at == '+') return 1;
    if (*at == '-') at++;
    if (*at == '0') {
        char next = at[1];
        return (next | 0x20) == 'x' || (next >= '0' && next <= '9');
    }
    if (*at <= '9') return 0;
    return strncasecmp(at, "inf", 3) == 0 || strncasecmp(at, "nan", 3) == 0;
}

/* A number is read by strtod over the longest run of characters a number can contain
 * (digits, sign, '.', and the letters a-y for exponents, hex digits, "infinity", "nan"). */
static void cjson_number_token(cjson_parser_t *parser, cjson_token_t *token) {
    size_t run = 0;
    for (;;) {
        unsigned char byte = (unsigned char)parser->at[run];
        unsigned char lower = byte | 0x20;
        if ((byte >= '0' && byte <= '9') || byte == '-' || byte == '+' || byte == '.' || (lower >= 'a' && lower <= 'y'))
            run++;
        else
            break;
    }
    /* A run of at most 15 digits (after an optional '-') is an exact integer: strtod would read
     * all of it and give the same double, so it is converted here, the common case. */
    size_t digits_from = parser->at[0] == '-' ? 1 : 0;
    if (run > digits_from && run - digits_from <= 15) {
        int64_t integer = 0;
        size_t at = digits_from;
        while (at < run && parser->at[at] >= '0' && parser->at[at] <= '9') integer = integer * 10 + (parser->at[at++] - '0');
        if (at == run) {
            token->type = T_NUMBER;
            token->number = digits_from ? -(double)integer : (double)integer;
            parser->at += run;
            return;
        }
    }
    char small[64]; /* a longer number is copied to the scratch, free between tokens */
    char *copy = run < sizeof small ? small : parser->scratch;
    memcpy(copy, parser->at, run);
    copy[run] = '\0';
    char *end;
    double value = strtod(copy, &end);
    size_t used = (size_t)(end - copy);
    if (used == 0) {
        cjson_token_error(parser, token, "invalid number");
        return;
    }
    token->type = T_NUMBER;
    token->number = value;
    parser->at += used;
}

static int cjson_hex4(const char *at) {
    int value = 0;
    for (int index = 0; index < 4; index++) {
        char digit = at[index];
        int nibble;
        if (digit >= '0' && digit <= '9') nibble = digit - '0';
        else if (digit >= 'a' && digit <= 'f') nibble = digit - 'a' + 10;
        else if (digit >= 'A' && digit <= 'F') nibble = digit - 'A' + 10;
        else return -1;
        value = value * 16 + nibble;
    }
    return value;
}

/* The \uXXXX escape (a surrogate pair: two) at parser->at, appended as UTF-8; 0 when invalid. */
static int cjson_unicode_escape(cjson_parser_t *parser, char **out) {
    int code = cjson_hex4(parser->at + 2);
    size_t consumed = 6;
    if (code < 0) return 0;
    if ((code & 0xf800) == 0xd800) {
        if (code & 0x400) return 0; /* a low surrogate first */
        if (parser->at[6] != '\\' || parser->at[7] != 'u') return 0;
        int low = cjson_hex4(parser->at + 8);
        if (low < 0 || (low & 0xfc00) != 0xdc00) return 0;
        code = (((code & 0x3ff) << 10) | (low & 0x3ff)) + 0x10000;
        consumed = 12;
    }
    char *write = *out;
    if (code < 0x80) {
        *write++ = (char)code;
    } else if (code < 0x800) {
        *write++ = (char)(0xc0 | (code >> 6));
        *write++ = (char)(0x80 | (code & 0x3f));
    } else if (code < 0x10000) {
        *write++ = (char)(0xe0 | (code >> 12));
        *write++ = (char)(0x80 | ((code >> 6) & 0x3f));
        *write++ = (char)(0x80 | (code & 0x3f));
    } else {
        *write++ = (char)(0xf0 | (code >> 18));
        *write++ = (char)(0x80 | ((code >> 12) & 0x3f));
        *write++ = (char)(0x80 | ((code >> 6) & 0x3f));
        *write++ = (char)(0x80 | (code & 0x3f));
    }
    *out = write;
    parser->at += consumed;
    return 1;
}

static void cjson_string_token(cjson_parser_t *parser, cjson_token_t *token) {
    char *out = parser->scratch;
    parser->at++; /* the opening quote */
    for (;;) {
        char byte = *parser->at;
        if (byte == '"') break;
        if (byte == '\0') {
            cjson_token_error(parser, token, "unexpected end of string");
            return;
        }
        if (byte == '\\') {
            char translated;
            switch (parser->at[1]) {
            case '"': translated = '"'; break;
            case '\\': translated = '\\'; break;
            case '/': translated = '/'; break;
            case 'b': translated = '\b'; break;
            case 'f': translated = '\f'; break;
            case 'n': translated = '\n'; break;
            case 'r': translated = '\r'; break;
            case 't': translated = '\t'; break;
            case 'u':
                if (!cjson_unicode_escape(parser, &out)) {
                    cjson_token_error(parser, token, "invalid unicode escape code");
                    return;
                }
                continue;
            default:
                cjson_token_error(parser, token, "invalid escape code");
                return;
            }
            parser->at++;
            byte = translated;
        }
        *out++ = byte;
        parser->at++;
    }
    parser->at++; /* the closing quote */
    token->type = T_STRING;
    token->string_length = (size_t)(out - parser->scratch);
}

static void cjson_next_token(cjson_parser_t *parser, cjson_token_t *token) {
    unsigned char byte;
    for (;;) {
        byte = (unsigned char)*parser->at;
        token->type = cjson_classify(byte);
        if (token->type != T_WHITESPACE) break;
        parser->at++;
    }
    token->index = (size_t)(parser->at - parser->data);
    if (token->type == T_ERROR) {
        cjson_token_error(parser, token, "invalid token");
        return;
    }
    if (token->type == T_END) return;
    if (token->type != T_UNKNOWN) {
        parser->at++;
        return;
    }
    if (byte == '"') {
        cjson_string_token(parser, token);
    } else if (byte == '-' || (byte >= '0' && byte <= '9')) {
        if (!parser->config->decode_invalid_numbers && cjson_is_invalid_number(parser->at))
            cjson_token_error(parser, token, "invalid number");
        else
            cjson_number_token(parser, token);
    } else if (strncmp(parser->at, "true", 4) == 0) {
        token->type = T_BOOLEAN;
        token->boolean = 1;
        parser->at += 4;
    } else if (strncmp(parser->at, "false", 5) == 0) {
        token->type = T_BOOLEAN;
        token->boolean = 0;
        parser->at += 5;
    } else if (strncmp(parser->at, "null", 4) == 0) {
        token->type = T_NULL;
        parser->at += 4;
    } else if (parser->config->decode_invalid_numbers && cjson_is_invalid_number(parser->at)) {
        cjson_number_token(parser, token);
    } else {
        cjson_token_error(parser, token, "invalid token");
    }
}

static void cjson_parse_error(cjson_parser_t *parser, const char *expected, const cjson_token_t *token) {
    const char *found = token->type == T_ERROR ? token->error : cjson_token_names[token->type];
    luaL_error(parser->L, "Expected %s but found %s at character %d", expected, found, (int)token->index + 1);
}

static void cjson_descend(cjson_parser_t *parser, int slots) {
    parser->depth++;
    if (parser->depth <= parser->config->decode_max_depth && lua_checkstack(parser->L, slots)) return;
    luaL_error(parser->L, "Found too many nested data structures (%d) at character %d", parser->depth,
               (int)(parser->at - parser->data));
}

static void cjson_parse_value(cjson_parser_t *parser, cjson_token_t *token);

static void cjson_parse_object(cjson_parser_t *parser) {
    lua_State *L = parser->L;
    cjson_token_t token;
    cjson_descend(parser, 3);
    lua_newtable(L);
    cjson_next_token(parser, &token);
    if (token.type == T_OBJ_END) {
        parser->depth--;
        return;
    }
    for (;;) {
        if (token.type != T_STRING) cjson_parse_error(parser, "object key string", &token);
        lua_pushlstring(L, parser->scratch, token.string_length);
        cjson_next_token(parser, &token);
        if (token.type != T_COLON) cjson_parse_error(parser, "colon", &token);
        cjson_next_token(parser, &token);
        cjson_parse_value(parser, &token);
        lua_rawset(L, -3);
        cjson_next_token(parser, &token);
        if (token.type == T_OBJ_END) {
            parser->depth--;
            return;
        }
        if (token.type != T_COMMA) cjson_parse_error(parser, "comma or object end", &token);
        cjson_next_token(parser, &token);
    }
}

static void cjson_parse_array(cjson_parser_t *parser) {
    lua_State *L = parser->L;
    cjson_token_t token;
    cjson_descend(parser, 2);
    lua_newtable(L);
    cjson_next_token(parser, &token);
    if (token.type == T_ARR_END) {
        parser->depth--;
        return;
    }
    for (int index = 1;; index++) {
        cjson_parse_value(parser, &token);
        lua_rawseti(L, -2, index);
        cjson_next_token(parser, &token);
        if (token.type == T_ARR_END) {
            parser->depth--;
            return;
        }
        if (token.type != T_COMMA) cjson_parse_error(parser, "comma or array end", &token);
        cjson_next_token(parser, &token);
    }
}

/* Pushes the value that starts with `token`. */
static void cjson_parse_value(cjson_parser_t *parser, cjson_token_t *token) {
    lua_State *L = parser->L;
    switch (token->type) {
    case T_STRING: lua_pushlstring(L, parser->scratch, token->string_length); break;
    case T_NUMBER: lua_pushnumber(L, token->number); break;
    case T_BOOLEAN: lua_pushboolean(L, token->boolean); break;
    case T_OBJ_BEGIN: cjson_parse_object(parser); break;
    case T_ARR_BEGIN: cjson_parse_array(parser); break;
    case T_NULL: lua_pushlightuserdata(L, NULL); break;
    default: cjson_parse_error(parser, "value", token);
    }
}

static int cjson_decode(lua_State *L) {
    cjson_config_t *config = cjson_config(L);
    luaL_argcheck(L, lua_gettop(L) == 1, 1, "expected 1 argument");
    size_t length;
    const char *text = luaL_checklstring(L, 1, &length);
    if (length >= 2 && (text[0] == '\0' || text[1] == '\0'))
        luaL_error(L, "JSON parser does not support UTF-16 or UTF-32");
    gr_strbuf_t *scratch = config->decode_scratch;
    gr_strbuf_begin(scratch, L);
    gr_strbuf_reserve(scratch, length + 1);
    cjson_parser_t parser = {L, config, text, text, scratch->data, 0};
    cjson_token_t token;
    cjson_next_token(&parser, &token);
    cjson_parse_value(&parser, &token);
    cjson_next_token(&parser, &token);
    if (token.type != T_END) cjson_parse_error(&parser, "the end", &token);
    if (scratch->capacity > 65536) gr_strbuf_release(scratch); /* keep only a small one */
    return 1;
}

/* ---- the module ---- */

static int cjson_new(lua_State *L);

static const luaL_Reg cjson_functions[] = {
    {"encode", cjson_encode},
    {"decode", cjson_decode},
    {"encode_sparse_array", cjson_encode_sparse_array},
    {"encode_max_depth", cjson_encode_max_depth},
    {"decode_max_depth", cjson_decode_max_depth},
    {"encode_number_precision", cjson_encode_number_precision},
    {"encode_keep_buffer", cjson_encode_keep_buffer},
    {"encode_invalid_numbers", cjson_encode_invalid_numbers},
    {"decode_invalid_numbers", cjson_decode_invalid_numbers},
    {"new", cjson_new},
    {NULL, NULL},
};

/* Pushes a new module table with a configuration of its own, at the defaults. */
static int cjson_new(lua_State *L) {
    lua_newtable(L);
    cjson_config_t *config = lua_newuserdata(L, sizeof *config);
    lua_createtable(L, 2, 0); /* its environment keeps its two buffers alive */
    *config = (cjson_config_t){
        .sparse_convert = 0,
        .sparse_ratio = 2,
        .sparse_safe = 10,
        .encode_max_depth = CJSON_DEFAULT_MAX_DEPTH,
        .decode_max_depth = CJSON_DEFAULT_MAX_DEPTH,
        .number_precision = CJSON_DEFAULT_PRECISION,
        .keep_buffer = 1,
        .encode_invalid_numbers = 0,
        .decode_invalid_numbers = 1,
    };
    config->encode_buffer = gr_strbuf_new(L);
    lua_rawseti(L, -2, 1);
    config->decode_scratch = gr_strbuf_new(L);
    lua_rawseti(L, -2, 2);
    lua_setfenv(L, -2);
    for (const luaL_Reg *function = cjson_functions; function->name != NULL; function++) {
        lua_pushvalue(L, -1);
        lua_pushcclosure(L, function->func, 1);
        lua_setfield(L, -3, function->name);
    }
    lua_pop(L, 1);
    lua_pushlightuserdata(L, NULL);
    lua_setfield(L, -2, "null");
    lua_pushliteral(L, "cjson");
    lua_setfield(L, -2, "_NAME");
    lua_pushliteral(L, "2.1.0");
    lua_setfield(L, -2, "_VERSION");
    return 1;
}

int gr_luaopen_cjson(lua_State *L) {
    cjson_new(L);
    lua_pushvalue(L, -1);
    lua_setglobal(L, "cjson");
    return 1;
}
