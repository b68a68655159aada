/* Generated SBE (Simple Binary Encoding) message codec */

#ifndef _GOBLIN_FCALLREQUEST_H_
#define _GOBLIN_FCALLREQUEST_H_

#include <errno.h>
#if !defined(__STDC_LIMIT_MACROS)
#define __STDC_LIMIT_MACROS 1
#endif
#include <limits.h>
#define SBE_FLOAT_NAN NAN
#define SBE_DOUBLE_NAN NAN
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "elementKind.h"
#include "messageHeader.h"
#include "booleanType.h"
#include "expireCondition.h"
#include "groupSizeEncoding.h"
#include "setCondition.h"
#include "listEnd.h"
#include "setVariant.h"
#include "varDataEncoding.h"
#include "expireMode.h"
#include "ttlKind.h"
#include "insertPosition.h"
#include "listEngine.h"
#include "timeUnit.h"
#include "errorCode.h"
#include "trimStrategy.h"
#include "pushKind.h"

#ifdef __cplusplus
#define SBE_ONE_DEF inline
#else
#define SBE_ONE_DEF static inline
#endif

/*
 * Define some byte ordering macros
 */
#if defined(WIN32) || defined(_WIN32)
    #define SBE_BIG_ENDIAN_ENCODE_16(v) _byteswap_ushort(v)
    #define SBE_BIG_ENDIAN_ENCODE_32(v) _byteswap_ulong(v)
    #define SBE_BIG_ENDIAN_ENCODE_64(v) _byteswap_uint64(v)
    #define SBE_LITTLE_ENDIAN_ENCODE_16(v) (v)
    #define SBE_LITTLE_ENDIAN_ENCODE_32(v) (v)
    #define SBE_LITTLE_ENDIAN_ENCODE_64(v) (v)
#elif __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    #define SBE_BIG_ENDIAN_ENCODE_16(v) __builtin_bswap16(v)
    #define SBE_BIG_ENDIAN_ENCODE_32(v) __builtin_bswap32(v)
    #define SBE_BIG_ENDIAN_ENCODE_64(v) __builtin_bswap64(v)
    #define SBE_LITTLE_ENDIAN_ENCODE_16(v) (v)
    #define SBE_BIG_ENDIAN_ENCODE_32(v) __builtin_bswap32(v)
    #define SBE_BIG_ENDIAN_ENCODE_64(v) __builtin_bswap64(v)
    #define SBE_LITTLE_ENDIAN_ENCODE_16(v) (v)
    #define SBE_LITTLE_ENDIAN_ENCODE_32(v) (v)
    #define SBE_LITTLE_ENDIAN_ENCODE_64(v) (v)
#elif __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    #define SBE_LITTLE_ENDIAN_ENCODE_16(v) __builtin_bswap16(v)
    #define SBE_LITTLE_ENDIAN_ENCODE_32(v) __builtin_bswap32(v)
    #define SBE_LITTLE_ENDIAN_ENCODE_64(v) __builtin_bswap64(v)
    #define SBE_BIG_ENDIAN_ENCODE_16(v) (v)
    #define SBE_BIG_ENDIAN_ENCODE_32(v) (v)
    #define SBE_BIG_ENDIAN_ENCODE_64(v) (v)
#else
    #error "Byte Ordering of platform not determined. Set __BYTE_ORDER__ manually before including this file."
#endif

#if !defined(SBE_BOUNDS_CHECK_EXPECT)
#  if defined(SBE_NO_BOUNDS_CHECK)
#    define SBE_BOUNDS_CHECK_EXPECT(exp, c) (false)
#  elif defined(_MSC_VER)
#    define SBE_BOUNDS_CHECK_EXPECT(exp, c) (exp)
#  else 
#    define SBE_BOUNDS_CHECK_EXPECT(exp, c) (__builtin_expect(exp, c))
#  endif

#endif

#define SBE_NULLVALUE_INT8 INT8_MIN
#define SBE_NULLVALUE_INT16 INT16_MIN
#define SBE_NULLVALUE_INT32 INT32_MIN
#define SBE_NULLVALUE_INT64 INT64_MIN
#define SBE_NULLVALUE_UINT8 UINT8_MAX
#define SBE_NULLVALUE_UINT16 UINT16_MAX
#define SBE_NULLVALUE_UINT32 UINT32_MAX
#define SBE_NULLVALUE_UINT64 UINT64_MAX

#define E100 -50100 // E_BUF_SHORT
#define E103 -50103 // VAL_UNKNOWN_ENUM
#define E104 -50104 // I_OUT_RANGE_NUM
#define E105 -50105 // I_OUT_RANGE_NUM
#define E106 -50106 // I_OUT_RANGE_NUM
#define E107 -50107 // BUF_SHORT_FLYWEIGHT
#define E108 -50108 // BUF_SHORT_NXT_GRP_IND
#define E109 -50109 // STR_TOO_LONG_FOR_LEN_TYP
#define E110 -50110 // CNT_OUT_RANGE

#ifndef SBE_STRERROR_DEFINED
#define SBE_STRERROR_DEFINED
SBE_ONE_DEF const char *sbe_strerror(const int errnum)
{
    switch (errnum)
    {
        case E100:
            return "buffer too short";
        case E103:
            return "unknown value for enum";
        case E104:
            return "index out of range";
        case E105:
            return "index out of range";
        case E106:
            return "length too large";
        case E107:
            return "buffer too short for flyweight";
        case E108:
            return "buffer too short to support next group index";
        case E109:
            return "std::string too long for length type";
        case E110:
            return "count outside of allowed range";
        default:
            return "unknown error";
    }
}
#endif

struct goblin_fCallRequest
{
    char *buffer;
    uint64_t buffer_length;
    uint64_t offset;
    uint64_t position;
    uint64_t acting_block_length;
    uint64_t acting_version;
};

enum goblin_fCallRequest_meta_attribute
{
    goblin_fCallRequest_meta_attribute_EPOCH,
    goblin_fCallRequest_meta_attribute_TIME_UNIT,
    goblin_fCallRequest_meta_attribute_SEMANTIC_TYPE,
    goblin_fCallRequest_meta_attribute_PRESENCE
};

union goblin_fCallRequest_float_as_uint
{
    float fp_value;
    uint32_t uint_value;
};

union goblin_fCallRequest_double_as_uint
{
    double fp_value;
    uint64_t uint_value;
};

struct goblin_fCallRequest_string_view
{
    const char* data;
    size_t length;
};

SBE_ONE_DEF uint64_t goblin_fCallRequest_sbe_position(
    const struct goblin_fCallRequest *const codec)
{
    return codec->position;
}

SBE_ONE_DEF bool goblin_fCallRequest_set_sbe_position(
    struct goblin_fCallRequest *const codec,
    const uint64_t position)
{
    if (SBE_BOUNDS_CHECK_EXPECT((position > codec->buffer_length), false))
    {
        errno = E100;
        return false;
    }
    codec->position = position;

    return true;
}

SBE_ONE_DEF uint64_t *goblin_fCallRequest_sbe_position_ptr(
    struct goblin_fCallRequest *const codec)
{
    return &codec->position;
}

SBE_ONE_DEF struct goblin_fCallRequest *goblin_fCallRequest_reset(
    struct goblin_fCallRequest *const codec,
    char *buffer,
    const uint64_t offset,
    const uint64_t buffer_length,
    const uint64_t acting_block_length,
    const uint64_t acting_version)
{
    codec->buffer = buffer;
    codec->offset = offset;
    codec->buffer_length = buffer_length;
    codec->acting_block_length = acting_block_length;
    codec->acting_version = acting_version;
    if (!goblin_fCallRequest_set_sbe_position(codec, offset + acting_block_length))
    {
        return NULL;
    }

    return codec;
}

SBE_ONE_DEF struct goblin_fCallRequest *goblin_fCallRequest_copy(
    struct goblin_fCallRequest *const codec,
    const struct goblin_fCallRequest *const other)
{
     codec->buffer = other->buffer;
     codec->offset = other->offset;
     codec->buffer_length = other->buffer_length;
     codec->acting_block_length = other->acting_block_length;
     codec->acting_version = other->acting_version;
     codec->position = other->position;

     return codec;
}

SBE_ONE_DEF uint16_t goblin_fCallRequest_sbe_block_length(void)
{
    return (uint16_t)13;
}

#define GOBLIN_F_CALL_REQUEST_SBE_TEMPLATE_ID (uint16_t)801

SBE_ONE_DEF uint16_t goblin_fCallRequest_sbe_template_id(void)
{
    return (uint16_t)801;
}

SBE_ONE_DEF uint16_t goblin_fCallRequest_sbe_schema_id(void)
{
    return (uint16_t)4711;
}

SBE_ONE_DEF uint16_t goblin_fCallRequest_sbe_schema_version(void)
{
    return (uint16_t)1;
}

SBE_ONE_DEF const char* goblin_fCallRequest_sbe_semantic_version(void)
{
    return "0.1.0";
}

SBE_ONE_DEF const char *goblin_fCallRequest_sbe_semantic_type(void)
{
    return "";
}

SBE_ONE_DEF uint64_t goblin_fCallRequest_offset(
    const struct goblin_fCallRequest *const codec)
{
    return codec->offset;
}

SBE_ONE_DEF struct goblin_fCallRequest *goblin_fCallRequest_wrap_and_apply_header(
    struct goblin_fCallRequest *const codec,
    char *buffer,
    const uint64_t offset,
    const uint64_t buffer_length,
    struct goblin_messageHeader *const hdr)
{
    goblin_messageHeader_wrap(
        hdr, buffer + offset, 0, goblin_messageHeader_sbe_schema_version(), buffer_length);

    goblin_messageHeader_set_blockLength(hdr, goblin_fCallRequest_sbe_block_length());
    goblin_messageHeader_set_templateId(hdr, goblin_fCallRequest_sbe_template_id());
    goblin_messageHeader_set_schemaId(hdr, goblin_fCallRequest_sbe_schema_id());
    goblin_messageHeader_set_version(hdr, goblin_fCallRequest_sbe_schema_version());

    goblin_fCallRequest_reset(
        codec,
        buffer + offset + goblin_messageHeader_encoded_length(),
        0,
        buffer_length - goblin_messageHeader_encoded_length(),
        goblin_fCallRequest_sbe_block_length(),
        goblin_fCallRequest_sbe_schema_version());

    return codec;
}

SBE_ONE_DEF struct goblin_fCallRequest *goblin_fCallRequest_wrap_for_encode(
    struct goblin_fCallRequest *const codec,
    char *buffer,
    const uint64_t offset,
    const uint64_t buffer_length)
{
    return goblin_fCallRequest_reset(
        codec,
        buffer,
        offset,
        buffer_length,
        goblin_fCallRequest_sbe_block_length(),
        goblin_fCallRequest_sbe_schema_version());
}

SBE_ONE_DEF struct goblin_fCallRequest *goblin_fCallRequest_wrap_for_decode(
    struct goblin_fCallRequest *const codec,
    char *buffer,
    const uint64_t offset,
    const uint64_t acting_block_length,
    const uint64_t acting_version,
    const uint64_t buffer_length)
{
    return goblin_fCallRequest_reset(
        codec,
        buffer,
        offset,
        buffer_length,
        acting_block_length,
        acting_version);
}

SBE_ONE_DEF struct goblin_fCallRequest *goblin_fCallRequest_sbe_rewind(
    struct goblin_fCallRequest *const codec)
{
    return goblin_fCallRequest_wrap_for_decode(
        codec,
        codec->buffer,
        codec->offset,
        codec->acting_block_length,
        codec->acting_version,
        codec->buffer_length);
}

SBE_ONE_DEF uint64_t goblin_fCallRequest_encoded_length(
    const struct goblin_fCallRequest *const codec)
{
    return goblin_fCallRequest_sbe_position(codec) - codec->offset;
}

SBE_ONE_DEF const char *goblin_fCallRequest_buffer(
    const struct goblin_fCallRequest *const codec)
{
    return codec->buffer;
}

SBE_ONE_DEF char *goblin_fCallRequest_mut_buffer(
    struct goblin_fCallRequest *const codec)
{
    return codec->buffer;
}

SBE_ONE_DEF uint64_t goblin_fCallRequest_buffer_length(
    const struct goblin_fCallRequest *const codec)
{
    return codec->buffer_length;
}

SBE_ONE_DEF uint64_t goblin_fCallRequest_acting_version(
    const struct goblin_fCallRequest *const codec)
{
    return codec->acting_version;
}

SBE_ONE_DEF const char *goblin_fCallRequest_requestId_meta_attribute(
    const enum goblin_fCallRequest_meta_attribute attribute)
{
    switch (attribute)
    {
        case goblin_fCallRequest_meta_attribute_EPOCH: return "";
        case goblin_fCallRequest_meta_attribute_TIME_UNIT: return "";
        case goblin_fCallRequest_meta_attribute_SEMANTIC_TYPE: return "";
        case goblin_fCallRequest_meta_attribute_PRESENCE: return "required";
    }

    return "";
}

SBE_ONE_DEF uint16_t goblin_fCallRequest_requestId_id(void)
{
    return 1;
}

SBE_ONE_DEF uint64_t goblin_fCallRequest_requestId_since_version(void)
{
    return 0;
}

SBE_ONE_DEF bool goblin_fCallRequest_requestId_in_acting_version(
    const struct goblin_fCallRequest *const codec)
{
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wtautological-compare"
#endif
    return codec->acting_version >= goblin_fCallRequest_requestId_since_version();
#if defined(__clang__)
#pragma clang diagnostic pop
#endif
}

SBE_ONE_DEF size_t goblin_fCallRequest_requestId_encoding_offset(void)
{
    return 0;
}

SBE_ONE_DEF uint64_t goblin_fCallRequest_requestId_null_value(void)
{
    return SBE_NULLVALUE_UINT64;
}

SBE_ONE_DEF uint64_t goblin_fCallRequest_requestId_min_value(void)
{
    return UINT64_C(0x0);
}

SBE_ONE_DEF uint64_t goblin_fCallRequest_requestId_max_value(void)
{
    return UINT64_C(0xfffffffffffffffe);
}

SBE_ONE_DEF size_t goblin_fCallRequest_requestId_encoding_length(void)
{
    return 8;
}

SBE_ONE_DEF uint64_t goblin_fCallRequest_requestId(
    const struct goblin_fCallRequest *const codec)
{
    uint64_t val;
#if defined(__GNUG__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
    memcpy(&val, codec->buffer + codec->offset + 0, sizeof(uint64_t));
#if defined(__GNUG__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
    return SBE_LITTLE_ENDIAN_ENCODE_64(val);
}

SBE_ONE_DEF struct goblin_fCallRequest *goblin_fCallRequest_set_requestId(
    struct goblin_fCallRequest *const codec,
    const uint64_t value)
{
    uint64_t val = SBE_LITTLE_ENDIAN_ENCODE_64(value);
#if defined(__GNUG__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
    memcpy(codec->buffer + codec->offset + 0, &val, sizeof(uint64_t));
#if defined(__GNUG__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
    return codec;
}

SBE_ONE_DEF const char *goblin_fCallRequest_readOnly_meta_attribute(
    const enum goblin_fCallRequest_meta_attribute attribute)
{
    switch (attribute)
    {
        case goblin_fCallRequest_meta_attribute_EPOCH: return "";
        case goblin_fCallRequest_meta_attribute_TIME_UNIT: return "";
        case goblin_fCallRequest_meta_attribute_SEMANTIC_TYPE: return "";
        case goblin_fCallRequest_meta_attribute_PRESENCE: return "required";
    }

    return "";
}

SBE_ONE_DEF uint16_t goblin_fCallRequest_readOnly_id(void)
{
    return 2;
}

SBE_ONE_DEF uint64_t goblin_fCallRequest_readOnly_since_version(void)
{
    return 0;
}

SBE_ONE_DEF bool goblin_fCallRequest_readOnly_in_acting_version(
    const struct goblin_fCallRequest *const codec)
{
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wtautological-compare"
#endif
    return codec->acting_version >= goblin_fCallRequest_readOnly_since_version();
#if defined(__clang__)
#pragma clang diagnostic pop
#endif
}

SBE_ONE_DEF size_t goblin_fCallRequest_readOnly_encoding_offset(void)
{
    return 8;
}

SBE_ONE_DEF size_t goblin_fCallRequest_readOnly_encoding_length(void)
{
    return 1;
}

SBE_ONE_DEF bool goblin_fCallRequest_readOnly(
    const struct goblin_fCallRequest *const codec,
    enum goblin_booleanType *const out)
{
    uint8_t val;
    memcpy(&val, codec->buffer + codec->offset + 8, sizeof(uint8_t));

    return goblin_booleanType_get((val), out);
}

SBE_ONE_DEF struct goblin_fCallRequest *goblin_fCallRequest_set_readOnly(
    struct goblin_fCallRequest *const codec,
    const enum goblin_booleanType value)
{
    uint8_t val = (value);
    memcpy(codec->buffer + codec->offset + 8, &val, sizeof(uint8_t));

    return codec;
}

SBE_ONE_DEF const char *goblin_fCallRequest_numKeys_meta_attribute(
    const enum goblin_fCallRequest_meta_attribute attribute)
{
    switch (attribute)
    {
        case goblin_fCallRequest_meta_attribute_EPOCH: return "";
        case goblin_fCallRequest_meta_attribute_TIME_UNIT: return "";
        case goblin_fCallRequest_meta_attribute_SEMANTIC_TYPE: return "";
        case goblin_fCallRequest_meta_attribute_PRESENCE: return "required";
    }

    return "";
}

SBE_ONE_DEF uint16_t goblin_fCallRequest_numKeys_id(void)
{
    return 3;
}

SBE_ONE_DEF uint64_t goblin_fCallRequest_numKeys_since_version(void)
{
    return 0;
}

SBE_ONE_DEF bool goblin_fCallRequest_numKeys_in_acting_version(
    const struct goblin_fCallRequest *const codec)
{
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wtautological-compare"
#endif
    return codec->acting_version >= goblin_fCallRequest_numKeys_since_version();
#if defined(__clang__)
#pragma clang diagnostic pop
#endif
}

SBE_ONE_DEF size_t goblin_fCallRequest_numKeys_encoding_offset(void)
{
    return 9;
}

SBE_ONE_DEF uint32_t goblin_fCallRequest_numKeys_null_value(void)
{
    return SBE_NULLVALUE_UINT32;
}

SBE_ONE_DEF uint32_t goblin_fCallRequest_numKeys_min_value(void)
{
    return UINT32_C(0x0);
}

SBE_ONE_DEF uint32_t goblin_fCallRequest_numKeys_max_value(void)
{
    return UINT32_C(0xfffffffe);
}

SBE_ONE_DEF size_t goblin_fCallRequest_numKeys_encoding_length(void)
{
    return 4;
}

SBE_ONE_DEF uint32_t goblin_fCallRequest_numKeys(
    const struct goblin_fCallRequest *const codec)
{
    uint32_t val;
#if defined(__GNUG__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
    memcpy(&val, codec->buffer + codec->offset + 9, sizeof(uint32_t));
#if defined(__GNUG__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
    return SBE_LITTLE_ENDIAN_ENCODE_32(val);
}

SBE_ONE_DEF struct goblin_fCallRequest *goblin_fCallRequest_set_numKeys(
    struct goblin_fCallRequest *const codec,
    const uint32_t value)
{
    uint32_t val = SBE_LITTLE_ENDIAN_ENCODE_32(value);
#if defined(__GNUG__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
    memcpy(codec->buffer + codec->offset + 9, &val, sizeof(uint32_t));
#if defined(__GNUG__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
    return codec;
}

struct goblin_fCallRequest_arguments
{
    char *buffer;
    uint64_t buffer_length;
    uint64_t *position_ptr;
    uint64_t block_length;
    uint64_t count;
    uint64_t index;
    uint64_t offset;
    uint64_t acting_version;
};

SBE_ONE_DEF uint64_t *goblin_fCallRequest_arguments_sbe_position_ptr(
    struct goblin_fCallRequest_arguments *const codec)
{
    return codec->position_ptr;
}

SBE_ONE_DEF struct goblin_fCallRequest_arguments *goblin_fCallRequest_arguments_wrap_for_decode(
    struct goblin_fCallRequest_arguments *const codec,
    char *const buffer,
    uint64_t *const pos,
    const uint64_t acting_version,
    const uint64_t buffer_length)
{
    codec->buffer = buffer;
    codec->buffer_length = buffer_length;
    struct goblin_groupSizeEncoding dimensions;
    if (!goblin_groupSizeEncoding_wrap(&dimensions, codec->buffer, *pos, acting_version, buffer_length))
    {
        return NULL;
    }

    codec->block_length = goblin_groupSizeEncoding_blockLength(&dimensions);
    codec->count = goblin_groupSizeEncoding_numInGroup(&dimensions);
    codec->index = -1;
    codec->acting_version = acting_version;
    codec->position_ptr = pos;
    *codec->position_ptr = *codec->position_ptr + 6;

    return codec;
}

SBE_ONE_DEF struct goblin_fCallRequest_arguments *goblin_fCallRequest_arguments_wrap_for_encode(
    struct goblin_fCallRequest_arguments *const codec,
    char *const buffer,
    const uint32_t count,
    uint64_t *const pos,
    const uint64_t acting_version,
    const uint64_t buffer_length)
{
#if defined(__GNUG__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wtype-limits"
#endif
    if (count > 2147483647)
    {
        errno = E110;
        return NULL;
    }
#if defined(__GNUG__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
    codec->buffer = buffer;
    codec->buffer_length = buffer_length;
    struct goblin_groupSizeEncoding dimensions;
    if (!goblin_groupSizeEncoding_wrap(&dimensions, codec->buffer, *pos, acting_version, buffer_length))
    {
        return NULL;
    }

    goblin_groupSizeEncoding_set_blockLength(&dimensions, (uint16_t)0);
    goblin_groupSizeEncoding_set_numInGroup(&dimensions, (uint32_t)count);
    codec->index = -1;
    codec->count = count;
    codec->block_length = 0;
    codec->acting_version = acting_version;
    codec->position_ptr = pos;
    *codec->position_ptr = *codec->position_ptr + 6;

    return codec;
}

SBE_ONE_DEF uint64_t goblin_fCallRequest_arguments_sbe_header_size(void)
{
    return 6;
}

SBE_ONE_DEF uint64_t goblin_fCallRequest_arguments_sbe_block_length(void)
{
    return 0;
}

SBE_ONE_DEF uint64_t goblin_fCallRequest_arguments_sbe_position(
    const struct goblin_fCallRequest_arguments *const codec)
{
#if defined(__GNUG__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
    return *codec->position_ptr;
#if defined(__GNUG__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
}

SBE_ONE_DEF bool goblin_fCallRequest_arguments_set_sbe_position(
    struct goblin_fCallRequest_arguments *const codec,
    const uint64_t position)
{
    if (SBE_BOUNDS_CHECK_EXPECT((position > codec->buffer_length), false))
    {
       errno = E100;
       return false;
    }
    *codec->position_ptr = position;

    return true;
}

SBE_ONE_DEF uint64_t goblin_fCallRequest_arguments_count(
    const struct goblin_fCallRequest_arguments *const codec)
{
    return codec->count;
}

SBE_ONE_DEF bool goblin_fCallRequest_arguments_has_next(
    const struct goblin_fCallRequest_arguments *const codec)
{
#if defined(__GNUG__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
    return codec->index + 1 < codec->count;
#if defined(__GNUG__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
}

SBE_ONE_DEF struct goblin_fCallRequest_arguments *goblin_fCallRequest_arguments_next(
    struct goblin_fCallRequest_arguments *const codec)
{
    codec->offset = *codec->position_ptr;
#if defined(__GNUG__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
    if (SBE_BOUNDS_CHECK_EXPECT(((codec->offset + codec->block_length) > codec->buffer_length), false))
#if defined(__GNUG__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
    {
        errno = E108;
        return NULL;
    }
    *codec->position_ptr = codec->offset + codec->block_length;
    ++codec->index;

    return codec;
}

SBE_ONE_DEF struct goblin_fCallRequest_arguments *goblin_fCallRequest_arguments_for_each(
    struct goblin_fCallRequest_arguments *const codec,
    void (*func)(struct goblin_fCallRequest_arguments *, void *),
    void *const context)
{
    while (goblin_fCallRequest_arguments_has_next(codec))
    {
        if (!goblin_fCallRequest_arguments_next(codec))
        {
            return NULL;
        }
        func(codec, context);
    }

    return codec;
}

SBE_ONE_DEF const char *goblin_fCallRequest_arguments_argument_meta_attribute(
    const enum goblin_fCallRequest_meta_attribute attribute)
{
    switch (attribute)
    {
        case goblin_fCallRequest_meta_attribute_EPOCH: return "";
        case goblin_fCallRequest_meta_attribute_TIME_UNIT: return "";
        case goblin_fCallRequest_meta_attribute_SEMANTIC_TYPE: return "";
        case goblin_fCallRequest_meta_attribute_PRESENCE: return "required";
    }

    return "";
}

SBE_ONE_DEF const char *goblin_fCallRequest_arguments_argument_character_encoding(void)
{
    return "null";
}

SBE_ONE_DEF uint64_t goblin_fCallRequest_arguments_argument_since_version(void)
{
    return 0;
}

SBE_ONE_DEF bool goblin_fCallRequest_arguments_argument_in_acting_version(
    const struct goblin_fCallRequest_arguments *const codec)
{
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wtautological-compare"
#endif
    return codec->acting_version >= goblin_fCallRequest_arguments_argument_since_version();
#if defined(__clang__)
#pragma clang diagnostic pop
#endif
}

SBE_ONE_DEF uint16_t goblin_fCallRequest_arguments_argument_id(void)
{
    return 5;
}

SBE_ONE_DEF uint64_t goblin_fCallRequest_arguments_argument_header_length(void)
{
    return 4;
}

SBE_ONE_DEF uint32_t goblin_fCallRequest_arguments_argument_length(
    const struct goblin_fCallRequest_arguments *const codec)
{
    uint32_t length;
    memcpy(&length, codec->buffer + goblin_fCallRequest_arguments_sbe_position(codec), sizeof(uint32_t));

    return SBE_LITTLE_ENDIAN_ENCODE_32(length);
}

SBE_ONE_DEF const char *goblin_fCallRequest_arguments_argument(
    struct goblin_fCallRequest_arguments *const codec)
{
    uint32_t length_field_value;
    memcpy(&length_field_value, codec->buffer + goblin_fCallRequest_arguments_sbe_position(codec), sizeof(uint32_t));
    const char *field_ptr = (codec->buffer + goblin_fCallRequest_arguments_sbe_position(codec) + 4);

    if (!goblin_fCallRequest_arguments_set_sbe_position(
        codec, goblin_fCallRequest_arguments_sbe_position(codec) + 4 + SBE_LITTLE_ENDIAN_ENCODE_32(length_field_value)))
    {
        return NULL;
    }

    return field_ptr;
}

SBE_ONE_DEF uint64_t goblin_fCallRequest_arguments_get_argument(
    struct goblin_fCallRequest_arguments *const codec,
    char *dst,
    const uint64_t length)
{
    uint64_t length_of_length_field = 4;
    uint64_t length_position = goblin_fCallRequest_arguments_sbe_position(codec);
    if (!goblin_fCallRequest_arguments_set_sbe_position(codec, length_position + length_of_length_field))
    {
        return 0;
    }

    uint32_t length_field_value;
    memcpy(&length_field_value, codec->buffer + length_position, sizeof(uint32_t));
    uint64_t data_length = SBE_LITTLE_ENDIAN_ENCODE_32(length_field_value);
    uint64_t bytes_to_copy = length < data_length ? length : data_length;
    uint64_t pos = goblin_fCallRequest_arguments_sbe_position(codec);

    if (!goblin_fCallRequest_arguments_set_sbe_position(codec, pos + data_length))
    {
        return 0;
    }

    memcpy(dst, codec->buffer + pos, bytes_to_copy);

    return bytes_to_copy;
}

SBE_ONE_DEF struct goblin_fCallRequest_string_view goblin_fCallRequest_arguments_get_argument_as_string_view(
    struct goblin_fCallRequest_arguments *const codec)
{
    uint32_t length_field_value = goblin_fCallRequest_arguments_argument_length(codec);
    const char *field_ptr = codec->buffer + goblin_fCallRequest_arguments_sbe_position(codec) + 4;
    if (!goblin_fCallRequest_arguments_set_sbe_position(
        codec, goblin_fCallRequest_arguments_sbe_position(codec) + 4 + length_field_value))
    {
        struct goblin_fCallRequest_string_view ret = {NULL, 0};
        return ret;
    }

    struct goblin_fCallRequest_string_view ret = {field_ptr, length_field_value};

    return ret;
}

SBE_ONE_DEF struct goblin_fCallRequest_arguments *goblin_fCallRequest_arguments_put_argument(
    struct goblin_fCallRequest_arguments *const codec,
    const char *src,
    const uint32_t length)
{
    uint64_t length_of_length_field = 4;
    uint64_t length_position = goblin_fCallRequest_arguments_sbe_position(codec);
    uint32_t length_field_value = SBE_LITTLE_ENDIAN_ENCODE_32(length);
    if (!goblin_fCallRequest_arguments_set_sbe_position(codec, length_position + length_of_length_field))
    {
        return NULL;
    }

    memcpy(codec->buffer + length_position, &length_field_value, sizeof(uint32_t));
    uint64_t pos = goblin_fCallRequest_arguments_sbe_position(codec);

    if (!goblin_fCallRequest_arguments_set_sbe_position(codec, pos + length))
    {
        return NULL;
    }

    memcpy(codec->buffer + pos, src, length);

    return codec;
}

SBE_ONE_DEF uint16_t goblin_fCallRequest_arguments_id(void)
{
    return 4;
}

SBE_ONE_DEF struct goblin_fCallRequest_arguments *goblin_fCallRequest_get_arguments(
    struct goblin_fCallRequest *const codec,
    struct goblin_fCallRequest_arguments *const property)
{
    return goblin_fCallRequest_arguments_wrap_for_decode(
        property,
        codec->buffer,
        goblin_fCallRequest_sbe_position_ptr(codec),
        codec->acting_version,
        codec->buffer_length);
}

SBE_ONE_DEF struct goblin_fCallRequest_arguments *goblin_fCallRequest_arguments_set_count(
    struct goblin_fCallRequest *const codec,
    struct goblin_fCallRequest_arguments *const property,
    const uint32_t count)
{
    return goblin_fCallRequest_arguments_wrap_for_encode(
        property,
        codec->buffer,
        count,
        goblin_fCallRequest_sbe_position_ptr(codec),
        codec->acting_version,
        codec->buffer_length);
}

SBE_ONE_DEF uint64_t goblin_fCallRequest_arguments_since_version(void)
{
    return 0;
}

SBE_ONE_DEF bool goblin_fCallRequest_arguments_in_acting_version(
    const struct goblin_fCallRequest *const codec)
{
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wtautological-compare"
#endif
    return codec->acting_version >= goblin_fCallRequest_arguments_since_version();
#if defined(__clang__)
#pragma clang diagnostic pop
#endif
}

SBE_ONE_DEF const char *goblin_fCallRequest_function_meta_attribute(
    const enum goblin_fCallRequest_meta_attribute attribute)
{
    switch (attribute)
    {
        case goblin_fCallRequest_meta_attribute_EPOCH: return "";
        case goblin_fCallRequest_meta_attribute_TIME_UNIT: return "";
        case goblin_fCallRequest_meta_attribute_SEMANTIC_TYPE: return "";
        case goblin_fCallRequest_meta_attribute_PRESENCE: return "required";
    }

    return "";
}

SBE_ONE_DEF const char *goblin_fCallRequest_function_character_encoding(void)
{
    return "null";
}

SBE_ONE_DEF uint64_t goblin_fCallRequest_function_since_version(void)
{
    return 0;
}

SBE_ONE_DEF bool goblin_fCallRequest_function_in_acting_version(
    const struct goblin_fCallRequest *const codec)
{
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wtautological-compare"
#endif
    return codec->acting_version >= goblin_fCallRequest_function_since_version();
#if defined(__clang__)
#pragma clang diagnostic pop
#endif
}

SBE_ONE_DEF uint16_t goblin_fCallRequest_function_id(void)
{
    return 10;
}

SBE_ONE_DEF uint64_t goblin_fCallRequest_function_header_length(void)
{
    return 4;
}

SBE_ONE_DEF uint32_t goblin_fCallRequest_function_length(
    const struct goblin_fCallRequest *const codec)
{
    uint32_t length;
    memcpy(&length, codec->buffer + goblin_fCallRequest_sbe_position(codec), sizeof(uint32_t));

    return SBE_LITTLE_ENDIAN_ENCODE_32(length);
}

SBE_ONE_DEF const char *goblin_fCallRequest_function(
    struct goblin_fCallRequest *const codec)
{
    uint32_t length_field_value;
    memcpy(&length_field_value, codec->buffer + goblin_fCallRequest_sbe_position(codec), sizeof(uint32_t));
    const char *field_ptr = (codec->buffer + goblin_fCallRequest_sbe_position(codec) + 4);

    if (!goblin_fCallRequest_set_sbe_position(
        codec, goblin_fCallRequest_sbe_position(codec) + 4 + SBE_LITTLE_ENDIAN_ENCODE_32(length_field_value)))
    {
        return NULL;
    }

    return field_ptr;
}

SBE_ONE_DEF uint64_t goblin_fCallRequest_get_function(
    struct goblin_fCallRequest *const codec,
    char *dst,
    const uint64_t length)
{
    uint64_t length_of_length_field = 4;
    uint64_t length_position = goblin_fCallRequest_sbe_position(codec);
    if (!goblin_fCallRequest_set_sbe_position(codec, length_position + length_of_length_field))
    {
        return 0;
    }

    uint32_t length_field_value;
    memcpy(&length_field_value, codec->buffer + length_position, sizeof(uint32_t));
    uint64_t data_length = SBE_LITTLE_ENDIAN_ENCODE_32(length_field_value);
    uint64_t bytes_to_copy = length < data_length ? length : data_length;
    uint64_t pos = goblin_fCallRequest_sbe_position(codec);

    if (!goblin_fCallRequest_set_sbe_position(codec, pos + data_length))
    {
        return 0;
    }

    memcpy(dst, codec->buffer + pos, bytes_to_copy);

    return bytes_to_copy;
}

SBE_ONE_DEF struct goblin_fCallRequest_string_view goblin_fCallRequest_get_function_as_string_view(
    struct goblin_fCallRequest *const codec)
{
    uint32_t length_field_value = goblin_fCallRequest_function_length(codec);
    const char *field_ptr = codec->buffer + goblin_fCallRequest_sbe_position(codec) + 4;
    if (!goblin_fCallRequest_set_sbe_position(
        codec, goblin_fCallRequest_sbe_position(codec) + 4 + length_field_value))
    {
        struct goblin_fCallRequest_string_view ret = {NULL, 0};
        return ret;
    }

    struct goblin_fCallRequest_string_view ret = {field_ptr, length_field_value};

    return ret;
}

SBE_ONE_DEF struct goblin_fCallRequest *goblin_fCallRequest_put_function(
    struct goblin_fCallRequest *const codec,
    const char *src,
    const uint32_t length)
{
    uint64_t length_of_length_field = 4;
    uint64_t length_position = goblin_fCallRequest_sbe_position(codec);
    uint32_t length_field_value = SBE_LITTLE_ENDIAN_ENCODE_32(length);
    if (!goblin_fCallRequest_set_sbe_position(codec, length_position + length_of_length_field))
    {
        return NULL;
    }

    memcpy(codec->buffer + length_position, &length_field_value, sizeof(uint32_t));
    uint64_t pos = goblin_fCallRequest_sbe_position(codec);

    if (!goblin_fCallRequest_set_sbe_position(codec, pos + length))
    {
        return NULL;
    }

    memcpy(codec->buffer + pos, src, length);

    return codec;
}

#endif
