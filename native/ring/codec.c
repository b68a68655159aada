/* codec.c — encode and decode every goblin-ring message through the generated SBE codecs.
 *
 * The API and the field-use table are in codec.h; the wire format is schema/goblin.xml.
 * The generated flyweights check fixed blocks and group entries against the buffer's end
 * but read a var-data length word without checking it, so every var-data field is taken
 * through take_var_data() here, which checks the length word and the bytes it announces
 * before anything is read. Encoding checks the output capacity the same way.
 */
#include "ring/codec.h"

#include <string.h>

/* The generated group encoders pass a flyweight that gcc, once everything is inlined, cannot
 * prove initialised (the generator's own pragma does not survive inlining). It is written
 * by goblin_groupSizeEncoding_wrap before any use; the warning is a false positive. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "generated/goblin/messageHeader.h"
#include "generated/goblin/attachRequest.h"
#include "generated/goblin/attachReply.h"
#include "generated/goblin/attachConfirm.h"
#include "generated/goblin/ping.h"
#include "generated/goblin/integerReply.h"
#include "generated/goblin/bulkReply.h"
#include "generated/goblin/arrayReply.h"
#include "generated/goblin/statusReply.h"
#include "generated/goblin/errorReply.h"
#include "generated/goblin/commandRequest.h"
#include "generated/goblin/delRequest.h"
#include "generated/goblin/existsRequest.h"
#include "generated/goblin/typeRequest.h"
#include "generated/goblin/dbSizeRequest.h"
#include "generated/goblin/flushDbRequest.h"
#include "generated/goblin/keysRequest.h"
#include "generated/goblin/scanRequest.h"
#include "generated/goblin/renameRequest.h"
#include "generated/goblin/memoryUsageRequest.h"
#include "generated/goblin/pushRequest.h"
#include "generated/goblin/popRequest.h"
#include "generated/goblin/lLenRequest.h"
#include "generated/goblin/lIndexRequest.h"
#include "generated/goblin/lRangeRequest.h"
#include "generated/goblin/lSetRequest.h"
#include "generated/goblin/lInsertRequest.h"
#include "generated/goblin/lRemRequest.h"
#include "generated/goblin/lTrimRequest.h"
#include "generated/goblin/lPosRequest.h"
#include "generated/goblin/lMoveRequest.h"
#include "generated/goblin/lMPopRequest.h"
#include "generated/goblin/bPopRequest.h"
#include "generated/goblin/bLMoveRequest.h"
#include "generated/goblin/bLMPopRequest.h"
#include "generated/goblin/selectRequest.h"
#include "generated/goblin/moveRequest.h"
#include "generated/goblin/swapDbRequest.h"
#include "generated/goblin/setRequest.h"
#include "generated/goblin/getRequest.h"
#include "generated/goblin/getDelRequest.h"
#include "generated/goblin/getExRequest.h"
#include "generated/goblin/mSetRequest.h"
#include "generated/goblin/mGetRequest.h"
#include "generated/goblin/incrByRequest.h"
#include "generated/goblin/incrByFloatRequest.h"
#include "generated/goblin/appendRequest.h"
#include "generated/goblin/strLenRequest.h"
#include "generated/goblin/getRangeRequest.h"
#include "generated/goblin/setRangeRequest.h"
#include "generated/goblin/expireRequest.h"
#include "generated/goblin/ttlRequest.h"
#include "generated/goblin/persistRequest.h"

/* The hand-written template numbers in codec.h must be the schema's. */
_Static_assert(GR_T_PING == GOBLIN_PING_SBE_TEMPLATE_ID, "template ids drifted from schema/goblin.xml");
_Static_assert(GR_T_ARRAY_REPLY == GOBLIN_ARRAY_REPLY_SBE_TEMPLATE_ID, "template ids drifted");
_Static_assert(GR_T_COMMAND == GOBLIN_COMMAND_REQUEST_SBE_TEMPLATE_ID, "template ids drifted");
_Static_assert(GR_T_MEMORY_USAGE == GOBLIN_MEMORY_USAGE_REQUEST_SBE_TEMPLATE_ID, "template ids drifted");
_Static_assert(GR_T_LMPOP == GOBLIN_L_M_POP_REQUEST_SBE_TEMPLATE_ID, "template ids drifted");
_Static_assert(GR_T_BLMPOP == GOBLIN_B_L_M_POP_REQUEST_SBE_TEMPLATE_ID, "template ids drifted");
_Static_assert(GR_T_ATTACH_CONFIRM == GOBLIN_ATTACH_CONFIRM_SBE_TEMPLATE_ID, "template ids drifted");
_Static_assert(GR_T_SELECT == GOBLIN_SELECT_REQUEST_SBE_TEMPLATE_ID, "template ids drifted");
_Static_assert(GR_T_SWAPDB == GOBLIN_SWAP_DB_REQUEST_SBE_TEMPLATE_ID, "template ids drifted");
_Static_assert(GR_T_SET == GOBLIN_SET_REQUEST_SBE_TEMPLATE_ID, "template ids drifted");
_Static_assert(GR_T_SETRANGE == GOBLIN_SET_RANGE_REQUEST_SBE_TEMPLATE_ID, "template ids drifted");
_Static_assert(GR_T_EXPIRE == GOBLIN_EXPIRE_REQUEST_SBE_TEMPLATE_ID, "template ids drifted");
_Static_assert(GR_T_PERSIST == GOBLIN_PERSIST_REQUEST_SBE_TEMPLATE_ID, "template ids drifted");

const char *gr_codec_status_text(gr_codec_status_t status) {
    switch (status) {
    case GR_CODEC_OK: return "ok";
    case GR_CODEC_TRUNCATED: return "message truncated";
    case GR_CODEC_BAD_SCHEMA: return "wrong SBE schema id or version";
    case GR_CODEC_UNKNOWN_TEMPLATE: return "unknown template id";
    case GR_CODEC_SHORT_BLOCK: return "block length shorter than the schema's";
    case GR_CODEC_VAR_DATA_OVERRUN: return "var-data length runs past the end of the message";
    case GR_CODEC_BAD_ENUM: return "enum field out of range";
    case GR_CODEC_TOO_MANY_ITEMS: return "group has more entries than allowed";
    case GR_CODEC_NO_SPACE: return "output buffer too small";
    }
    return "unknown codec status";
}

/* ---- shared helpers ---------------------------------------------------------------- */

typedef struct header_view {
    uint16_t block_length;
    uint16_t template_id;
    uint16_t version;
} header_view_t;

static gr_codec_status_t read_header(const uint8_t *buffer, size_t length, header_view_t *out) {
    struct goblin_messageHeader header;
    if (!goblin_messageHeader_wrap(&header, (char *)buffer, 0, GR_SCHEMA_VERSION, length))
        return GR_CODEC_TRUNCATED;
    if (goblin_messageHeader_schemaId(&header) != GR_SCHEMA_ID) return GR_CODEC_BAD_SCHEMA;
    out->version = goblin_messageHeader_version(&header);
    if (out->version < 1) return GR_CODEC_BAD_SCHEMA;
    out->block_length = goblin_messageHeader_blockLength(&header);
    out->template_id = goblin_messageHeader_templateId(&header);
    return GR_CODEC_OK;
}

gr_codec_status_t gr_codec_peek_template(const uint8_t *buffer, size_t length, uint16_t *template_id) {
    header_view_t header;
    gr_codec_status_t status = read_header(buffer, length, &header);
    if (status == GR_CODEC_OK) *template_id = header.template_id;
    return status;
}

/* Take one var-data field at *position: check the 4-byte length word fits, then that the
 * bytes it announces fit, and only then point out at them and advance. */
static gr_codec_status_t take_var_data(const char *buffer, uint64_t buffer_length,
                                       uint64_t *position, gr_bytes_t *out) {
    if (*position > buffer_length || buffer_length - *position < 4) return GR_CODEC_VAR_DATA_OVERRUN;
    uint32_t announced;
    memcpy(&announced, buffer + *position, sizeof announced);
    announced = SBE_LITTLE_ENDIAN_ENCODE_32(announced);
    if ((uint64_t)announced > buffer_length - *position - 4) return GR_CODEC_VAR_DATA_OVERRUN;
    out->data = (const uint8_t *)buffer + *position + 4;
    out->length = announced;
    *position += 4 + (uint64_t)announced;
    return GR_CODEC_OK;
}

static gr_codec_status_t put_var_data(char *buffer, uint64_t buffer_length, uint64_t *position,
                                      gr_bytes_t value) {
    if (*position > buffer_length || buffer_length - *position < 4 + (uint64_t)value.length)
        return GR_CODEC_NO_SPACE;
    uint32_t encoded = SBE_LITTLE_ENDIAN_ENCODE_32(value.length);
    memcpy(buffer + *position, &encoded, sizeof encoded);
    if (value.length) memcpy(buffer + *position + 4, value.data, value.length);
    *position += 4 + (uint64_t)value.length;
    return GR_CODEC_OK;
}

#define TRY(expression) do { gr_codec_status_t try_status_ = (expression); \
    if (try_status_ != GR_CODEC_OK) return try_status_; } while (0)

/* Decode prologue for message type M: check the block length, wrap the flyweight. */
#define DECODE_BEGIN(M, codec) \
    struct goblin_##M codec; \
    if (header.block_length < goblin_##M##_sbe_block_length()) return GR_CODEC_SHORT_BLOCK; \
    if (!goblin_##M##_wrap_for_decode(&codec, (char *)buffer, GR_MESSAGE_HEADER_LENGTH, \
                                      header.block_length, header.version, length)) \
        return GR_CODEC_TRUNCATED

#define VAR(M, codec, out) \
    TRY(take_var_data((codec).buffer, (codec).buffer_length, goblin_##M##_sbe_position_ptr(&(codec)), &(out)))

/* Decode a group G of message M whose entries hold one var-data field F, into items. */
#define DECODE_BYTES_GROUP(M, G, F, codec, target) do { \
    struct goblin_##M##_##G group_; \
    if (!goblin_##M##_get_##G(&(codec), &group_)) return GR_CODEC_TRUNCATED; \
    uint64_t count_ = goblin_##M##_##G##_count(&group_); \
    if (count_ > (target)->item_capacity) return GR_CODEC_TOO_MANY_ITEMS; \
    (target)->item_count = (uint32_t)count_; \
    for (uint64_t i_ = 0; i_ < count_; i_++) { \
        if (!goblin_##M##_##G##_next(&group_)) return GR_CODEC_TRUNCATED; \
        TRY(take_var_data(group_.buffer, group_.buffer_length, group_.position_ptr, &(target)->items[i_])); \
    } \
} while (0)

#define ENCODE_BEGIN(M, codec) \
    struct goblin_messageHeader header_; struct goblin_##M codec; \
    if (capacity < (size_t)GR_MESSAGE_HEADER_LENGTH + (size_t)goblin_##M##_sbe_block_length()) return GR_CODEC_NO_SPACE; \
    goblin_##M##_wrap_and_apply_header(&codec, (char *)buffer, 0, capacity, &header_)

#define PUT(M, codec, value) \
    TRY(put_var_data((codec).buffer, (codec).buffer_length, goblin_##M##_sbe_position_ptr(&(codec)), (value)))

#define ENCODE_BYTES_GROUP(M, G, codec, source) do { \
    struct goblin_##M##_##G group_; \
    if ((source)->item_count > GR_GROUP_MAX_ITEMS - 1) return GR_CODEC_TOO_MANY_ITEMS; \
    if (!goblin_##M##_##G##_set_count(&(codec), &group_, (uint16_t)(source)->item_count)) return GR_CODEC_NO_SPACE; \
    for (uint32_t i_ = 0; i_ < (source)->item_count; i_++) { \
        if (!goblin_##M##_##G##_next(&group_)) return GR_CODEC_NO_SPACE; \
        TRY(put_var_data(group_.buffer, group_.buffer_length, group_.position_ptr, (source)->items[i_])); \
    } \
} while (0)

#define ENCODE_END(M, codec) \
    *length = GR_MESSAGE_HEADER_LENGTH + goblin_##M##_encoded_length(&codec); \
    return GR_CODEC_OK

static int valid_end(uint8_t value) { return value <= 1; }

/* Enum fields travel in end, to_end, flag (and SET's variant in count), and in engine for
 * the list templates (ListEngine: 0..2; never set by the others); the largest valid value
 * of each depends on the template. */
static int valid_enums(const gr_request_t *r) {
    switch (r->template_id) {
    case GR_T_SET:    return r->count <= 3 && r->end <= 2 && r->to_end <= 6 && r->flag <= 1;
    case GR_T_GETEX:  return r->to_end <= 6;
    case GR_T_EXPIRE: return r->end <= 5 && r->to_end <= 1 && r->flag <= 1;
    case GR_T_TTL:    return r->end <= 3;
    default:          return valid_end(r->end) && valid_end(r->to_end) && r->flag <= 1 && r->engine <= 2;
    }
}

/* ---- requests ------------------------------------------------------------------------ */

gr_codec_status_t gr_decode_request(const uint8_t *buffer, size_t length, gr_request_t *r) {
    header_view_t header;
    TRY(read_header(buffer, length, &header));
    gr_bytes_t *items = r->items;
    uint32_t item_capacity = r->item_capacity;
    memset(r, 0, sizeof *r);
    r->items = items;
    r->item_capacity = item_capacity;
    r->template_id = header.template_id;

    switch (header.template_id) {
    case GR_T_PING: {
        DECODE_BEGIN(ping, m);
        r->request_id = goblin_ping_requestId(&m);
        VAR(ping, m, r->arg1);
        break;
    }
    case GR_T_COMMAND: {
        DECODE_BEGIN(commandRequest, m);
        r->request_id = goblin_commandRequest_requestId(&m);
        DECODE_BYTES_GROUP(commandRequest, arguments, argument, m, r);
        break;
    }
    case GR_T_DEL: {
        DECODE_BEGIN(delRequest, m);
        r->request_id = goblin_delRequest_requestId(&m);
        r->flag = ((const uint8_t *)m.buffer)[m.offset + goblin_delRequest_unlink_encoding_offset()];
        DECODE_BYTES_GROUP(delRequest, keys, key, m, r);
        break;
    }
    case GR_T_EXISTS: {
        DECODE_BEGIN(existsRequest, m);
        r->request_id = goblin_existsRequest_requestId(&m);
        DECODE_BYTES_GROUP(existsRequest, keys, key, m, r);
        break;
    }
    case GR_T_TYPE: {
        DECODE_BEGIN(typeRequest, m);
        r->request_id = goblin_typeRequest_requestId(&m);
        VAR(typeRequest, m, r->key);
        break;
    }
    case GR_T_DBSIZE: {
        DECODE_BEGIN(dbSizeRequest, m);
        r->request_id = goblin_dbSizeRequest_requestId(&m);
        break;
    }
    case GR_T_FLUSHDB: {
        DECODE_BEGIN(flushDbRequest, m);
        r->request_id = goblin_flushDbRequest_requestId(&m);
        r->flag = ((const uint8_t *)m.buffer)[m.offset + goblin_flushDbRequest_all_encoding_offset()];
        break;
    }
    case GR_T_KEYS: {
        DECODE_BEGIN(keysRequest, m);
        r->request_id = goblin_keysRequest_requestId(&m);
        VAR(keysRequest, m, r->arg1);
        break;
    }
    case GR_T_SCAN: {
        DECODE_BEGIN(scanRequest, m);
        r->request_id = goblin_scanRequest_requestId(&m);
        r->cursor = goblin_scanRequest_cursor(&m);
        r->count = goblin_scanRequest_count(&m);
        VAR(scanRequest, m, r->arg1);
        VAR(scanRequest, m, r->arg2);
        break;
    }
    case GR_T_RENAME: {
        DECODE_BEGIN(renameRequest, m);
        r->request_id = goblin_renameRequest_requestId(&m);
        VAR(renameRequest, m, r->key);
        VAR(renameRequest, m, r->arg1);
        break;
    }
    case GR_T_MEMORY_USAGE: {
        DECODE_BEGIN(memoryUsageRequest, m);
        r->request_id = goblin_memoryUsageRequest_requestId(&m);
        VAR(memoryUsageRequest, m, r->key);
        break;
    }
    case GR_T_PUSH: {
        DECODE_BEGIN(pushRequest, m);
        r->request_id = goblin_pushRequest_requestId(&m);
        r->engine = ((const uint8_t *)m.buffer)[m.offset + goblin_pushRequest_engine_encoding_offset()];
        r->end = ((const uint8_t *)m.buffer)[m.offset + goblin_pushRequest_end_encoding_offset()];
        r->flag = ((const uint8_t *)m.buffer)[m.offset + goblin_pushRequest_onlyIfExists_encoding_offset()];
        DECODE_BYTES_GROUP(pushRequest, values, value, m, r);
        VAR(pushRequest, m, r->key);
        break;
    }
    case GR_T_POP: {
        DECODE_BEGIN(popRequest, m);
        r->request_id = goblin_popRequest_requestId(&m);
        r->engine = ((const uint8_t *)m.buffer)[m.offset + goblin_popRequest_engine_encoding_offset()];
        r->end = ((const uint8_t *)m.buffer)[m.offset + goblin_popRequest_end_encoding_offset()];
        r->flag = ((const uint8_t *)m.buffer)[m.offset + goblin_popRequest_hasCount_encoding_offset()];
        r->count = goblin_popRequest_count(&m);
        VAR(popRequest, m, r->key);
        break;
    }
    case GR_T_LLEN: {
        DECODE_BEGIN(lLenRequest, m);
        r->request_id = goblin_lLenRequest_requestId(&m);
        r->engine = ((const uint8_t *)m.buffer)[m.offset + goblin_lLenRequest_engine_encoding_offset()];
        VAR(lLenRequest, m, r->key);
        break;
    }
    case GR_T_LINDEX: {
        DECODE_BEGIN(lIndexRequest, m);
        r->request_id = goblin_lIndexRequest_requestId(&m);
        r->engine = ((const uint8_t *)m.buffer)[m.offset + goblin_lIndexRequest_engine_encoding_offset()];
        r->index = goblin_lIndexRequest_index(&m);
        VAR(lIndexRequest, m, r->key);
        break;
    }
    case GR_T_LRANGE: {
        DECODE_BEGIN(lRangeRequest, m);
        r->request_id = goblin_lRangeRequest_requestId(&m);
        r->engine = ((const uint8_t *)m.buffer)[m.offset + goblin_lRangeRequest_engine_encoding_offset()];
        r->index = goblin_lRangeRequest_start(&m);
        r->index2 = goblin_lRangeRequest_stop(&m);
        VAR(lRangeRequest, m, r->key);
        break;
    }
    case GR_T_LSET: {
        DECODE_BEGIN(lSetRequest, m);
        r->request_id = goblin_lSetRequest_requestId(&m);
        r->engine = ((const uint8_t *)m.buffer)[m.offset + goblin_lSetRequest_engine_encoding_offset()];
        r->index = goblin_lSetRequest_index(&m);
        VAR(lSetRequest, m, r->key);
        VAR(lSetRequest, m, r->arg1);
        break;
    }
    case GR_T_LINSERT: {
        DECODE_BEGIN(lInsertRequest, m);
        r->request_id = goblin_lInsertRequest_requestId(&m);
        r->engine = ((const uint8_t *)m.buffer)[m.offset + goblin_lInsertRequest_engine_encoding_offset()];
        r->flag = ((const uint8_t *)m.buffer)[m.offset + goblin_lInsertRequest_position_encoding_offset()];
        VAR(lInsertRequest, m, r->key);
        VAR(lInsertRequest, m, r->arg1);
        VAR(lInsertRequest, m, r->arg2);
        break;
    }
    case GR_T_LREM: {
        DECODE_BEGIN(lRemRequest, m);
        r->request_id = goblin_lRemRequest_requestId(&m);
        r->engine = ((const uint8_t *)m.buffer)[m.offset + goblin_lRemRequest_engine_encoding_offset()];
        r->index = goblin_lRemRequest_count(&m);
        VAR(lRemRequest, m, r->key);
        VAR(lRemRequest, m, r->arg1);
        break;
    }
    case GR_T_LTRIM: {
        DECODE_BEGIN(lTrimRequest, m);
        r->request_id = goblin_lTrimRequest_requestId(&m);
        r->engine = ((const uint8_t *)m.buffer)[m.offset + goblin_lTrimRequest_engine_encoding_offset()];
        r->index = goblin_lTrimRequest_start(&m);
        r->index2 = goblin_lTrimRequest_stop(&m);
        VAR(lTrimRequest, m, r->key);
        break;
    }
    case GR_T_LPOS: {
        DECODE_BEGIN(lPosRequest, m);
        r->request_id = goblin_lPosRequest_requestId(&m);
        r->engine = ((const uint8_t *)m.buffer)[m.offset + goblin_lPosRequest_engine_encoding_offset()];
        r->index = goblin_lPosRequest_rank(&m);
        r->flag = ((const uint8_t *)m.buffer)[m.offset + goblin_lPosRequest_hasCount_encoding_offset()];
        r->count = goblin_lPosRequest_count(&m);
        r->max_len = goblin_lPosRequest_maxLen(&m);
        VAR(lPosRequest, m, r->key);
        VAR(lPosRequest, m, r->arg1);
        break;
    }
    case GR_T_LMOVE: {
        DECODE_BEGIN(lMoveRequest, m);
        r->request_id = goblin_lMoveRequest_requestId(&m);
        r->engine = ((const uint8_t *)m.buffer)[m.offset + goblin_lMoveRequest_engine_encoding_offset()];
        r->end = ((const uint8_t *)m.buffer)[m.offset + goblin_lMoveRequest_from_encoding_offset()];
        r->to_end = ((const uint8_t *)m.buffer)[m.offset + goblin_lMoveRequest_to_encoding_offset()];
        VAR(lMoveRequest, m, r->key);
        VAR(lMoveRequest, m, r->arg1);
        break;
    }
    case GR_T_LMPOP: {
        DECODE_BEGIN(lMPopRequest, m);
        r->request_id = goblin_lMPopRequest_requestId(&m);
        r->engine = ((const uint8_t *)m.buffer)[m.offset + goblin_lMPopRequest_engine_encoding_offset()];
        r->end = ((const uint8_t *)m.buffer)[m.offset + goblin_lMPopRequest_end_encoding_offset()];
        r->count = goblin_lMPopRequest_count(&m);
        DECODE_BYTES_GROUP(lMPopRequest, keys, key, m, r);
        break;
    }
    case GR_T_BPOP: {
        DECODE_BEGIN(bPopRequest, m);
        r->request_id = goblin_bPopRequest_requestId(&m);
        r->engine = ((const uint8_t *)m.buffer)[m.offset + goblin_bPopRequest_engine_encoding_offset()];
        r->end = ((const uint8_t *)m.buffer)[m.offset + goblin_bPopRequest_end_encoding_offset()];
        r->timeout = goblin_bPopRequest_timeoutSeconds(&m);
        DECODE_BYTES_GROUP(bPopRequest, keys, key, m, r);
        break;
    }
    case GR_T_BLMOVE: {
        DECODE_BEGIN(bLMoveRequest, m);
        r->request_id = goblin_bLMoveRequest_requestId(&m);
        r->engine = ((const uint8_t *)m.buffer)[m.offset + goblin_bLMoveRequest_engine_encoding_offset()];
        r->end = ((const uint8_t *)m.buffer)[m.offset + goblin_bLMoveRequest_from_encoding_offset()];
        r->to_end = ((const uint8_t *)m.buffer)[m.offset + goblin_bLMoveRequest_to_encoding_offset()];
        r->timeout = goblin_bLMoveRequest_timeoutSeconds(&m);
        VAR(bLMoveRequest, m, r->key);
        VAR(bLMoveRequest, m, r->arg1);
        break;
    }
    case GR_T_BLMPOP: {
        DECODE_BEGIN(bLMPopRequest, m);
        r->request_id = goblin_bLMPopRequest_requestId(&m);
        r->engine = ((const uint8_t *)m.buffer)[m.offset + goblin_bLMPopRequest_engine_encoding_offset()];
        r->end = ((const uint8_t *)m.buffer)[m.offset + goblin_bLMPopRequest_end_encoding_offset()];
        r->count = goblin_bLMPopRequest_count(&m);
        r->timeout = goblin_bLMPopRequest_timeoutSeconds(&m);
        DECODE_BYTES_GROUP(bLMPopRequest, keys, key, m, r);
        break;
    }
    case GR_T_SELECT: {
        DECODE_BEGIN(selectRequest, m);
        r->request_id = goblin_selectRequest_requestId(&m);
        r->index = goblin_selectRequest_db(&m);
        break;
    }
    case GR_T_MOVE: {
        DECODE_BEGIN(moveRequest, m);
        r->request_id = goblin_moveRequest_requestId(&m);
        r->index = goblin_moveRequest_db(&m);
        VAR(moveRequest, m, r->key);
        break;
    }
    case GR_T_SWAPDB: {
        DECODE_BEGIN(swapDbRequest, m);
        r->request_id = goblin_swapDbRequest_requestId(&m);
        r->index = goblin_swapDbRequest_first(&m);
        r->index2 = goblin_swapDbRequest_second(&m);
        break;
    }
    case GR_T_SET: {
        DECODE_BEGIN(setRequest, m);
        r->request_id = goblin_setRequest_requestId(&m);
        r->count = ((const uint8_t *)m.buffer)[m.offset + goblin_setRequest_variant_encoding_offset()];
        r->end = ((const uint8_t *)m.buffer)[m.offset + goblin_setRequest_condition_encoding_offset()];
        r->to_end = ((const uint8_t *)m.buffer)[m.offset + goblin_setRequest_expireMode_encoding_offset()];
        r->flag = ((const uint8_t *)m.buffer)[m.offset + goblin_setRequest_get_encoding_offset()];
        r->index = goblin_setRequest_expireValue(&m);
        VAR(setRequest, m, r->key);
        VAR(setRequest, m, r->arg1);
        break;
    }
    case GR_T_GET: {
        DECODE_BEGIN(getRequest, m);
        r->request_id = goblin_getRequest_requestId(&m);
        VAR(getRequest, m, r->key);
        break;
    }
    case GR_T_GETDEL: {
        DECODE_BEGIN(getDelRequest, m);
        r->request_id = goblin_getDelRequest_requestId(&m);
        VAR(getDelRequest, m, r->key);
        break;
    }
    case GR_T_GETEX: {
        DECODE_BEGIN(getExRequest, m);
        r->request_id = goblin_getExRequest_requestId(&m);
        r->to_end = ((const uint8_t *)m.buffer)[m.offset + goblin_getExRequest_expireMode_encoding_offset()];
        r->index = goblin_getExRequest_expireValue(&m);
        VAR(getExRequest, m, r->key);
        break;
    }
    case GR_T_MSET: {
        DECODE_BEGIN(mSetRequest, m);
        r->request_id = goblin_mSetRequest_requestId(&m);
        r->flag = ((const uint8_t *)m.buffer)[m.offset + goblin_mSetRequest_onlyIfNoneExist_encoding_offset()];
        DECODE_BYTES_GROUP(mSetRequest, arguments, argument, m, r);
        break;
    }
    case GR_T_MGET: {
        DECODE_BEGIN(mGetRequest, m);
        r->request_id = goblin_mGetRequest_requestId(&m);
        DECODE_BYTES_GROUP(mGetRequest, keys, key, m, r);
        break;
    }
    case GR_T_INCRBY: {
        DECODE_BEGIN(incrByRequest, m);
        r->request_id = goblin_incrByRequest_requestId(&m);
        r->index = goblin_incrByRequest_delta(&m);
        r->flag = ((const uint8_t *)m.buffer)[m.offset + goblin_incrByRequest_isDecrBy_encoding_offset()];
        VAR(incrByRequest, m, r->key);
        break;
    }
    case GR_T_INCRBYFLOAT: {
        DECODE_BEGIN(incrByFloatRequest, m);
        r->request_id = goblin_incrByFloatRequest_requestId(&m);
        VAR(incrByFloatRequest, m, r->key);
        VAR(incrByFloatRequest, m, r->arg1);
        break;
    }
    case GR_T_APPEND: {
        DECODE_BEGIN(appendRequest, m);
        r->request_id = goblin_appendRequest_requestId(&m);
        VAR(appendRequest, m, r->key);
        VAR(appendRequest, m, r->arg1);
        break;
    }
    case GR_T_STRLEN: {
        DECODE_BEGIN(strLenRequest, m);
        r->request_id = goblin_strLenRequest_requestId(&m);
        VAR(strLenRequest, m, r->key);
        break;
    }
    case GR_T_GETRANGE: {
        DECODE_BEGIN(getRangeRequest, m);
        r->request_id = goblin_getRangeRequest_requestId(&m);
        r->index = goblin_getRangeRequest_start(&m);
        r->index2 = goblin_getRangeRequest_end(&m);
        VAR(getRangeRequest, m, r->key);
        break;
    }
    case GR_T_SETRANGE: {
        DECODE_BEGIN(setRangeRequest, m);
        r->request_id = goblin_setRangeRequest_requestId(&m);
        r->index = goblin_setRangeRequest_byteOffset(&m);
        VAR(setRangeRequest, m, r->key);
        VAR(setRangeRequest, m, r->arg1);
        break;
    }
    case GR_T_EXPIRE: {
        DECODE_BEGIN(expireRequest, m);
        r->request_id = goblin_expireRequest_requestId(&m);
        r->to_end = ((const uint8_t *)m.buffer)[m.offset + goblin_expireRequest_unit_encoding_offset()];
        r->flag = ((const uint8_t *)m.buffer)[m.offset + goblin_expireRequest_absolute_encoding_offset()];
        r->end = ((const uint8_t *)m.buffer)[m.offset + goblin_expireRequest_condition_encoding_offset()];
        r->index = goblin_expireRequest_value(&m);
        VAR(expireRequest, m, r->key);
        break;
    }
    case GR_T_TTL: {
        DECODE_BEGIN(ttlRequest, m);
        r->request_id = goblin_ttlRequest_requestId(&m);
        r->end = ((const uint8_t *)m.buffer)[m.offset + goblin_ttlRequest_kind_encoding_offset()];
        VAR(ttlRequest, m, r->key);
        break;
    }
    case GR_T_PERSIST: {
        DECODE_BEGIN(persistRequest, m);
        r->request_id = goblin_persistRequest_requestId(&m);
        VAR(persistRequest, m, r->key);
        break;
    }
    default:
        return GR_CODEC_UNKNOWN_TEMPLATE;
    }
    /* Enum fields are validated here once, for every template that has them. */
    if (!valid_enums(r)) return GR_CODEC_BAD_ENUM;
    return GR_CODEC_OK;
}

static size_t var_size(gr_bytes_t value) { return 4 + (size_t)value.length; }

size_t gr_request_encoded_size(const gr_request_t *r) {
    /* An upper bound: the largest request block is 48 bytes; a group header is 4. */
    size_t size = GR_MESSAGE_HEADER_LENGTH + 48 + 4;
    size += var_size(r->key) + var_size(r->arg1) + var_size(r->arg2);
    for (uint32_t i = 0; i < r->item_count; i++) size += var_size(r->items[i]);
    return size;
}

gr_codec_status_t gr_encode_request(const gr_request_t *r, uint8_t *buffer, size_t capacity, size_t *length) {
    if (!valid_enums(r)) return GR_CODEC_BAD_ENUM;
    switch (r->template_id) {
    case GR_T_PING: {
        ENCODE_BEGIN(ping, m);
        goblin_ping_set_requestId(&m, r->request_id);
        PUT(ping, m, r->arg1);
        ENCODE_END(ping, m);
    }
    case GR_T_COMMAND: {
        ENCODE_BEGIN(commandRequest, m);
        goblin_commandRequest_set_requestId(&m, r->request_id);
        ENCODE_BYTES_GROUP(commandRequest, arguments, m, r);
        ENCODE_END(commandRequest, m);
    }
    case GR_T_DEL: {
        ENCODE_BEGIN(delRequest, m);
        goblin_delRequest_set_requestId(&m, r->request_id);
        goblin_delRequest_set_unlink(&m, (enum goblin_booleanType)r->flag);
        ENCODE_BYTES_GROUP(delRequest, keys, m, r);
        ENCODE_END(delRequest, m);
    }
    case GR_T_EXISTS: {
        ENCODE_BEGIN(existsRequest, m);
        goblin_existsRequest_set_requestId(&m, r->request_id);
        ENCODE_BYTES_GROUP(existsRequest, keys, m, r);
        ENCODE_END(existsRequest, m);
    }
    case GR_T_TYPE: {
        ENCODE_BEGIN(typeRequest, m);
        goblin_typeRequest_set_requestId(&m, r->request_id);
        PUT(typeRequest, m, r->key);
        ENCODE_END(typeRequest, m);
    }
    case GR_T_DBSIZE: {
        ENCODE_BEGIN(dbSizeRequest, m);
        goblin_dbSizeRequest_set_requestId(&m, r->request_id);
        ENCODE_END(dbSizeRequest, m);
    }
    case GR_T_FLUSHDB: {
        ENCODE_BEGIN(flushDbRequest, m);
        goblin_flushDbRequest_set_requestId(&m, r->request_id);
        goblin_flushDbRequest_set_all(&m, (enum goblin_booleanType)r->flag);
        ENCODE_END(flushDbRequest, m);
    }
    case GR_T_KEYS: {
        ENCODE_BEGIN(keysRequest, m);
        goblin_keysRequest_set_requestId(&m, r->request_id);
        PUT(keysRequest, m, r->arg1);
        ENCODE_END(keysRequest, m);
    }
    case GR_T_SCAN: {
        ENCODE_BEGIN(scanRequest, m);
        goblin_scanRequest_set_requestId(&m, r->request_id);
        goblin_scanRequest_set_cursor(&m, r->cursor);
        goblin_scanRequest_set_count(&m, r->count);
        PUT(scanRequest, m, r->arg1);
        PUT(scanRequest, m, r->arg2);
        ENCODE_END(scanRequest, m);
    }
    case GR_T_RENAME: {
        ENCODE_BEGIN(renameRequest, m);
        goblin_renameRequest_set_requestId(&m, r->request_id);
        PUT(renameRequest, m, r->key);
        PUT(renameRequest, m, r->arg1);
        ENCODE_END(renameRequest, m);
    }
    case GR_T_MEMORY_USAGE: {
        ENCODE_BEGIN(memoryUsageRequest, m);
        goblin_memoryUsageRequest_set_requestId(&m, r->request_id);
        PUT(memoryUsageRequest, m, r->key);
        ENCODE_END(memoryUsageRequest, m);
    }
    case GR_T_PUSH: {
        ENCODE_BEGIN(pushRequest, m);
        goblin_pushRequest_set_requestId(&m, r->request_id);
        goblin_pushRequest_set_engine(&m, (enum goblin_listEngine)r->engine);
        goblin_pushRequest_set_end(&m, (enum goblin_listEnd)r->end);
        goblin_pushRequest_set_onlyIfExists(&m, (enum goblin_booleanType)r->flag);
        ENCODE_BYTES_GROUP(pushRequest, values, m, r);
        PUT(pushRequest, m, r->key);
        ENCODE_END(pushRequest, m);
    }
    case GR_T_POP: {
        ENCODE_BEGIN(popRequest, m);
        goblin_popRequest_set_requestId(&m, r->request_id);
        goblin_popRequest_set_engine(&m, (enum goblin_listEngine)r->engine);
        goblin_popRequest_set_end(&m, (enum goblin_listEnd)r->end);
        goblin_popRequest_set_hasCount(&m, (enum goblin_booleanType)r->flag);
        goblin_popRequest_set_count(&m, r->count);
        PUT(popRequest, m, r->key);
        ENCODE_END(popRequest, m);
    }
    case GR_T_LLEN: {
        ENCODE_BEGIN(lLenRequest, m);
        goblin_lLenRequest_set_requestId(&m, r->request_id);
        goblin_lLenRequest_set_engine(&m, (enum goblin_listEngine)r->engine);
        PUT(lLenRequest, m, r->key);
        ENCODE_END(lLenRequest, m);
    }
    case GR_T_LINDEX: {
        ENCODE_BEGIN(lIndexRequest, m);
        goblin_lIndexRequest_set_requestId(&m, r->request_id);
        goblin_lIndexRequest_set_engine(&m, (enum goblin_listEngine)r->engine);
        goblin_lIndexRequest_set_index(&m, r->index);
        PUT(lIndexRequest, m, r->key);
        ENCODE_END(lIndexRequest, m);
    }
    case GR_T_LRANGE: {
        ENCODE_BEGIN(lRangeRequest, m);
        goblin_lRangeRequest_set_requestId(&m, r->request_id);
        goblin_lRangeRequest_set_engine(&m, (enum goblin_listEngine)r->engine);
        goblin_lRangeRequest_set_start(&m, r->index);
        goblin_lRangeRequest_set_stop(&m, r->index2);
        PUT(lRangeRequest, m, r->key);
        ENCODE_END(lRangeRequest, m);
    }
    case GR_T_LSET: {
        ENCODE_BEGIN(lSetRequest, m);
        goblin_lSetRequest_set_requestId(&m, r->request_id);
        goblin_lSetRequest_set_engine(&m, (enum goblin_listEngine)r->engine);
        goblin_lSetRequest_set_index(&m, r->index);
        PUT(lSetRequest, m, r->key);
        PUT(lSetRequest, m, r->arg1);
        ENCODE_END(lSetRequest, m);
    }
    case GR_T_LINSERT: {
        ENCODE_BEGIN(lInsertRequest, m);
        goblin_lInsertRequest_set_requestId(&m, r->request_id);
        goblin_lInsertRequest_set_engine(&m, (enum goblin_listEngine)r->engine);
        goblin_lInsertRequest_set_position(&m, (enum goblin_insertPosition)r->flag);
        PUT(lInsertRequest, m, r->key);
        PUT(lInsertRequest, m, r->arg1);
        PUT(lInsertRequest, m, r->arg2);
        ENCODE_END(lInsertRequest, m);
    }
    case GR_T_LREM: {
        ENCODE_BEGIN(lRemRequest, m);
        goblin_lRemRequest_set_requestId(&m, r->request_id);
        goblin_lRemRequest_set_engine(&m, (enum goblin_listEngine)r->engine);
        goblin_lRemRequest_set_count(&m, r->index);
        PUT(lRemRequest, m, r->key);
        PUT(lRemRequest, m, r->arg1);
        ENCODE_END(lRemRequest, m);
    }
    case GR_T_LTRIM: {
        ENCODE_BEGIN(lTrimRequest, m);
        goblin_lTrimRequest_set_requestId(&m, r->request_id);
        goblin_lTrimRequest_set_engine(&m, (enum goblin_listEngine)r->engine);
        goblin_lTrimRequest_set_start(&m, r->index);
        goblin_lTrimRequest_set_stop(&m, r->index2);
        PUT(lTrimRequest, m, r->key);
        ENCODE_END(lTrimRequest, m);
    }
    case GR_T_LPOS: {
        ENCODE_BEGIN(lPosRequest, m);
        goblin_lPosRequest_set_requestId(&m, r->request_id);
        goblin_lPosRequest_set_engine(&m, (enum goblin_listEngine)r->engine);
        goblin_lPosRequest_set_rank(&m, r->index);
        goblin_lPosRequest_set_hasCount(&m, (enum goblin_booleanType)r->flag);
        goblin_lPosRequest_set_count(&m, r->count);
        goblin_lPosRequest_set_maxLen(&m, r->max_len);
        PUT(lPosRequest, m, r->key);
        PUT(lPosRequest, m, r->arg1);
        ENCODE_END(lPosRequest, m);
    }
    case GR_T_LMOVE: {
        ENCODE_BEGIN(lMoveRequest, m);
        goblin_lMoveRequest_set_requestId(&m, r->request_id);
        goblin_lMoveRequest_set_engine(&m, (enum goblin_listEngine)r->engine);
        goblin_lMoveRequest_set_from(&m, (enum goblin_listEnd)r->end);
        goblin_lMoveRequest_set_to(&m, (enum goblin_listEnd)r->to_end);
        PUT(lMoveRequest, m, r->key);
        PUT(lMoveRequest, m, r->arg1);
        ENCODE_END(lMoveRequest, m);
    }
    case GR_T_LMPOP: {
        ENCODE_BEGIN(lMPopRequest, m);
        goblin_lMPopRequest_set_requestId(&m, r->request_id);
        goblin_lMPopRequest_set_engine(&m, (enum goblin_listEngine)r->engine);
        goblin_lMPopRequest_set_end(&m, (enum goblin_listEnd)r->end);
        goblin_lMPopRequest_set_count(&m, r->count);
        ENCODE_BYTES_GROUP(lMPopRequest, keys, m, r);
        ENCODE_END(lMPopRequest, m);
    }
    case GR_T_BPOP: {
        ENCODE_BEGIN(bPopRequest, m);
        goblin_bPopRequest_set_requestId(&m, r->request_id);
        goblin_bPopRequest_set_engine(&m, (enum goblin_listEngine)r->engine);
        goblin_bPopRequest_set_end(&m, (enum goblin_listEnd)r->end);
        goblin_bPopRequest_set_timeoutSeconds(&m, r->timeout);
        ENCODE_BYTES_GROUP(bPopRequest, keys, m, r);
        ENCODE_END(bPopRequest, m);
    }
    case GR_T_BLMOVE: {
        ENCODE_BEGIN(bLMoveRequest, m);
        goblin_bLMoveRequest_set_requestId(&m, r->request_id);
        goblin_bLMoveRequest_set_engine(&m, (enum goblin_listEngine)r->engine);
        goblin_bLMoveRequest_set_from(&m, (enum goblin_listEnd)r->end);
        goblin_bLMoveRequest_set_to(&m, (enum goblin_listEnd)r->to_end);
        goblin_bLMoveRequest_set_timeoutSeconds(&m, r->timeout);
        PUT(bLMoveRequest, m, r->key);
        PUT(bLMoveRequest, m, r->arg1);
        ENCODE_END(bLMoveRequest, m);
    }
    case GR_T_BLMPOP: {
        ENCODE_BEGIN(bLMPopRequest, m);
        goblin_bLMPopRequest_set_requestId(&m, r->request_id);
        goblin_bLMPopRequest_set_engine(&m, (enum goblin_listEngine)r->engine);
        goblin_bLMPopRequest_set_end(&m, (enum goblin_listEnd)r->end);
        goblin_bLMPopRequest_set_count(&m, r->count);
        goblin_bLMPopRequest_set_timeoutSeconds(&m, r->timeout);
        ENCODE_BYTES_GROUP(bLMPopRequest, keys, m, r);
        ENCODE_END(bLMPopRequest, m);
    }
    case GR_T_SELECT: {
        ENCODE_BEGIN(selectRequest, m);
        goblin_selectRequest_set_requestId(&m, r->request_id);
        goblin_selectRequest_set_db(&m, r->index);
        ENCODE_END(selectRequest, m);
    }
    case GR_T_MOVE: {
        ENCODE_BEGIN(moveRequest, m);
        goblin_moveRequest_set_requestId(&m, r->request_id);
        goblin_moveRequest_set_db(&m, r->index);
        PUT(moveRequest, m, r->key);
        ENCODE_END(moveRequest, m);
    }
    case GR_T_SWAPDB: {
        ENCODE_BEGIN(swapDbRequest, m);
        goblin_swapDbRequest_set_requestId(&m, r->request_id);
        goblin_swapDbRequest_set_first(&m, r->index);
        goblin_swapDbRequest_set_second(&m, r->index2);
        ENCODE_END(swapDbRequest, m);
    }
    case GR_T_SET: {
        ENCODE_BEGIN(setRequest, m);
        goblin_setRequest_set_requestId(&m, r->request_id);
        goblin_setRequest_set_variant(&m, (enum goblin_setVariant)r->count);
        goblin_setRequest_set_condition(&m, (enum goblin_setCondition)r->end);
        goblin_setRequest_set_expireMode(&m, (enum goblin_expireMode)r->to_end);
        goblin_setRequest_set_get(&m, (enum goblin_booleanType)r->flag);
        goblin_setRequest_set_expireValue(&m, r->index);
        PUT(setRequest, m, r->key);
        PUT(setRequest, m, r->arg1);
        ENCODE_END(setRequest, m);
    }
    case GR_T_GET: {
        ENCODE_BEGIN(getRequest, m);
        goblin_getRequest_set_requestId(&m, r->request_id);
        PUT(getRequest, m, r->key);
        ENCODE_END(getRequest, m);
    }
    case GR_T_GETDEL: {
        ENCODE_BEGIN(getDelRequest, m);
        goblin_getDelRequest_set_requestId(&m, r->request_id);
        PUT(getDelRequest, m, r->key);
        ENCODE_END(getDelRequest, m);
    }
    case GR_T_GETEX: {
        ENCODE_BEGIN(getExRequest, m);
        goblin_getExRequest_set_requestId(&m, r->request_id);
        goblin_getExRequest_set_expireMode(&m, (enum goblin_expireMode)r->to_end);
        goblin_getExRequest_set_expireValue(&m, r->index);
        PUT(getExRequest, m, r->key);
        ENCODE_END(getExRequest, m);
    }
    case GR_T_MSET: {
        ENCODE_BEGIN(mSetRequest, m);
        goblin_mSetRequest_set_requestId(&m, r->request_id);
        goblin_mSetRequest_set_onlyIfNoneExist(&m, (enum goblin_booleanType)r->flag);
        ENCODE_BYTES_GROUP(mSetRequest, arguments, m, r);
        ENCODE_END(mSetRequest, m);
    }
    case GR_T_MGET: {
        ENCODE_BEGIN(mGetRequest, m);
        goblin_mGetRequest_set_requestId(&m, r->request_id);
        ENCODE_BYTES_GROUP(mGetRequest, keys, m, r);
        ENCODE_END(mGetRequest, m);
    }
    case GR_T_INCRBY: {
        ENCODE_BEGIN(incrByRequest, m);
        goblin_incrByRequest_set_requestId(&m, r->request_id);
        goblin_incrByRequest_set_delta(&m, r->index);
        goblin_incrByRequest_set_isDecrBy(&m, (enum goblin_booleanType)r->flag);
        PUT(incrByRequest, m, r->key);
        ENCODE_END(incrByRequest, m);
    }
    case GR_T_INCRBYFLOAT: {
        ENCODE_BEGIN(incrByFloatRequest, m);
        goblin_incrByFloatRequest_set_requestId(&m, r->request_id);
        PUT(incrByFloatRequest, m, r->key);
        PUT(incrByFloatRequest, m, r->arg1);
        ENCODE_END(incrByFloatRequest, m);
    }
    case GR_T_APPEND: {
        ENCODE_BEGIN(appendRequest, m);
        goblin_appendRequest_set_requestId(&m, r->request_id);
        PUT(appendRequest, m, r->key);
        PUT(appendRequest, m, r->arg1);
        ENCODE_END(appendRequest, m);
    }
    case GR_T_STRLEN: {
        ENCODE_BEGIN(strLenRequest, m);
        goblin_strLenRequest_set_requestId(&m, r->request_id);
        PUT(strLenRequest, m, r->key);
        ENCODE_END(strLenRequest, m);
    }
    case GR_T_GETRANGE: {
        ENCODE_BEGIN(getRangeRequest, m);
        goblin_getRangeRequest_set_requestId(&m, r->request_id);
        goblin_getRangeRequest_set_start(&m, r->index);
        goblin_getRangeRequest_set_end(&m, r->index2);
        PUT(getRangeRequest, m, r->key);
        ENCODE_END(getRangeRequest, m);
    }
    case GR_T_SETRANGE: {
        ENCODE_BEGIN(setRangeRequest, m);
        goblin_setRangeRequest_set_requestId(&m, r->request_id);
        goblin_setRangeRequest_set_byteOffset(&m, r->index);
        PUT(setRangeRequest, m, r->key);
        PUT(setRangeRequest, m, r->arg1);
        ENCODE_END(setRangeRequest, m);
    }
    case GR_T_EXPIRE: {
        ENCODE_BEGIN(expireRequest, m);
        goblin_expireRequest_set_requestId(&m, r->request_id);
        goblin_expireRequest_set_unit(&m, (enum goblin_timeUnit)r->to_end);
        goblin_expireRequest_set_absolute(&m, (enum goblin_booleanType)r->flag);
        goblin_expireRequest_set_condition(&m, (enum goblin_expireCondition)r->end);
        goblin_expireRequest_set_value(&m, r->index);
        PUT(expireRequest, m, r->key);
        ENCODE_END(expireRequest, m);
    }
    case GR_T_TTL: {
        ENCODE_BEGIN(ttlRequest, m);
        goblin_ttlRequest_set_requestId(&m, r->request_id);
        goblin_ttlRequest_set_kind(&m, (enum goblin_ttlKind)r->end);
        PUT(ttlRequest, m, r->key);
        ENCODE_END(ttlRequest, m);
    }
    case GR_T_PERSIST: {
        ENCODE_BEGIN(persistRequest, m);
        goblin_persistRequest_set_requestId(&m, r->request_id);
        PUT(persistRequest, m, r->key);
        ENCODE_END(persistRequest, m);
    }
    default:
        return GR_CODEC_UNKNOWN_TEMPLATE;
    }
}

/* ---- replies ------------------------------------------------------------------------- */

gr_codec_status_t gr_decode_reply(const uint8_t *buffer, size_t length, gr_reply_message_t *r) {
    header_view_t header;
    TRY(read_header(buffer, length, &header));
    gr_element_t *elements = r->elements;
    uint32_t element_capacity = r->element_capacity;
    memset(r, 0, sizeof *r);
    r->elements = elements;
    r->element_capacity = element_capacity;
    r->template_id = header.template_id;

    switch (header.template_id) {
    case GR_T_INTEGER_REPLY: {
        DECODE_BEGIN(integerReply, m);
        r->request_id = goblin_integerReply_requestId(&m);
        r->integer = goblin_integerReply_value(&m);
        return GR_CODEC_OK;
    }
    case GR_T_BULK_REPLY: {
        DECODE_BEGIN(bulkReply, m);
        r->request_id = goblin_bulkReply_requestId(&m);
        r->is_nil = ((const uint8_t *)m.buffer)[m.offset + goblin_bulkReply_isNil_encoding_offset()];
        if (r->is_nil > 1) return GR_CODEC_BAD_ENUM;
        VAR(bulkReply, m, r->text);
        return GR_CODEC_OK;
    }
    case GR_T_STATUS_REPLY: {
        DECODE_BEGIN(statusReply, m);
        r->request_id = goblin_statusReply_requestId(&m);
        VAR(statusReply, m, r->text);
        return GR_CODEC_OK;
    }
    case GR_T_ERROR_REPLY: {
        DECODE_BEGIN(errorReply, m);
        r->request_id = goblin_errorReply_requestId(&m);
        uint16_t code;
        memcpy(&code, m.buffer + m.offset + goblin_errorReply_code_encoding_offset(), sizeof code);
        r->error_code = SBE_LITTLE_ENDIAN_ENCODE_16(code);
        VAR(errorReply, m, r->text);
        return GR_CODEC_OK;
    }
    case GR_T_ARRAY_REPLY: {
        DECODE_BEGIN(arrayReply, m);
        r->request_id = goblin_arrayReply_requestId(&m);
        r->shape = ((const uint8_t *)m.buffer)[m.offset + goblin_arrayReply_shape_encoding_offset()];
        if (r->shape > 2) return GR_CODEC_BAD_ENUM;
        r->total_count = goblin_arrayReply_totalCount(&m);
        r->first_index = goblin_arrayReply_firstIndex(&m);
        struct goblin_arrayReply_elements group;
        if (!goblin_arrayReply_get_elements(&m, &group)) return GR_CODEC_TRUNCATED;
        if (group.block_length < goblin_arrayReply_elements_sbe_block_length()) return GR_CODEC_SHORT_BLOCK;
        uint64_t count = goblin_arrayReply_elements_count(&group);
        if (count > r->element_capacity) return GR_CODEC_TOO_MANY_ITEMS;
        r->element_count = (uint32_t)count;
        for (uint64_t i = 0; i < count; i++) {
            if (!goblin_arrayReply_elements_next(&group)) return GR_CODEC_TRUNCATED;
            gr_element_t *element = &r->elements[i];
            element->kind = ((const uint8_t *)group.buffer)[group.offset + goblin_arrayReply_elements_kind_encoding_offset()];
            if (element->kind > 2) return GR_CODEC_BAD_ENUM;
            element->integer = goblin_arrayReply_elements_integer(&group);
            TRY(take_var_data(group.buffer, group.buffer_length, group.position_ptr, &element->bytes));
        }
        VAR(arrayReply, m, r->text);
        return GR_CODEC_OK;
    }
    default:
        return GR_CODEC_UNKNOWN_TEMPLATE;
    }
}

gr_codec_status_t gr_encode_reply(const gr_reply_message_t *r, uint8_t *buffer, size_t capacity, size_t *length) {
    switch (r->template_id) {
    case GR_T_INTEGER_REPLY: {
        ENCODE_BEGIN(integerReply, m);
        goblin_integerReply_set_requestId(&m, r->request_id);
        goblin_integerReply_set_value(&m, r->integer);
        ENCODE_END(integerReply, m);
    }
    case GR_T_BULK_REPLY: {
        if (r->is_nil > 1) return GR_CODEC_BAD_ENUM;
        ENCODE_BEGIN(bulkReply, m);
        goblin_bulkReply_set_requestId(&m, r->request_id);
        goblin_bulkReply_set_isNil(&m, (enum goblin_booleanType)r->is_nil);
        PUT(bulkReply, m, r->text);
        ENCODE_END(bulkReply, m);
    }
    case GR_T_STATUS_REPLY: {
        ENCODE_BEGIN(statusReply, m);
        goblin_statusReply_set_requestId(&m, r->request_id);
        PUT(statusReply, m, r->text);
        ENCODE_END(statusReply, m);
    }
    case GR_T_ERROR_REPLY: {
        ENCODE_BEGIN(errorReply, m);
        goblin_errorReply_set_requestId(&m, r->request_id);
        uint16_t code = SBE_LITTLE_ENDIAN_ENCODE_16(r->error_code);
        memcpy(m.buffer + m.offset + goblin_errorReply_code_encoding_offset(), &code, sizeof code);
        PUT(errorReply, m, r->text);
        ENCODE_END(errorReply, m);
    }
    case GR_T_ARRAY_REPLY: {
        if (r->shape > 2) return GR_CODEC_BAD_ENUM;
        if (r->element_count > GR_GROUP_MAX_ITEMS - 1) return GR_CODEC_TOO_MANY_ITEMS;
        ENCODE_BEGIN(arrayReply, m);
        goblin_arrayReply_set_requestId(&m, r->request_id);
        goblin_arrayReply_set_shape(&m, (enum goblin_arrayShape)r->shape);
        goblin_arrayReply_set_totalCount(&m, r->total_count);
        goblin_arrayReply_set_firstIndex(&m, r->first_index);
        struct goblin_arrayReply_elements group;
        if (!goblin_arrayReply_elements_set_count(&m, &group, (uint16_t)r->element_count)) return GR_CODEC_NO_SPACE;
        for (uint32_t i = 0; i < r->element_count; i++) {
            const gr_element_t *element = &r->elements[i];
            if (element->kind > 2) return GR_CODEC_BAD_ENUM;
            if (!goblin_arrayReply_elements_next(&group)) return GR_CODEC_NO_SPACE;
            goblin_arrayReply_elements_set_kind(&group, (enum goblin_elementKind)element->kind);
            goblin_arrayReply_elements_set_integer(&group, element->integer);
            TRY(put_var_data(group.buffer, group.buffer_length, group.position_ptr, element->bytes));
        }
        PUT(arrayReply, m, r->text);
        ENCODE_END(arrayReply, m);
    }
    default:
        return GR_CODEC_UNKNOWN_TEMPLATE;
    }
}

/* ---- session handshake ------------------------------------------------------------- */

gr_codec_status_t gr_decode_attach(const uint8_t *buffer, size_t length, gr_attach_t *a) {
    header_view_t header;
    TRY(read_header(buffer, length, &header));
    memset(a, 0, sizeof *a);
    a->template_id = header.template_id;
    switch (header.template_id) {
    case GR_T_ATTACH_REQUEST: {
        DECODE_BEGIN(attachRequest, m);
        a->protocol_version = goblin_attachRequest_protocolVersion(&m);
        a->ring_capacity = goblin_attachRequest_ringCapacity(&m);
        a->pid = goblin_attachRequest_clientPid(&m);
        VAR(attachRequest, m, a->client_name);
        return GR_CODEC_OK;
    }
    case GR_T_ATTACH_REPLY: {
        DECODE_BEGIN(attachReply, m);
        a->protocol_version = goblin_attachReply_protocolVersion(&m);
        a->error_code = goblin_attachReply_errorCode(&m);
        a->session_id = goblin_attachReply_sessionId(&m);
        a->ring_capacity = goblin_attachReply_ringCapacity(&m);
        a->pid = goblin_attachReply_serverPid(&m);
        VAR(attachReply, m, a->request_ring_name);
        VAR(attachReply, m, a->reply_ring_name);
        VAR(attachReply, m, a->error_message);
        return GR_CODEC_OK;
    }
    case GR_T_ATTACH_CONFIRM: {
        DECODE_BEGIN(attachConfirm, m);
        a->session_id = goblin_attachConfirm_sessionId(&m);
        return GR_CODEC_OK;
    }
    default:
        return GR_CODEC_UNKNOWN_TEMPLATE;
    }
}

gr_codec_status_t gr_encode_attach(const gr_attach_t *a, uint8_t *buffer, size_t capacity, size_t *length) {
    switch (a->template_id) {
    case GR_T_ATTACH_REQUEST: {
        ENCODE_BEGIN(attachRequest, m);
        goblin_attachRequest_set_protocolVersion(&m, a->protocol_version);
        goblin_attachRequest_set_ringCapacity(&m, a->ring_capacity);
        goblin_attachRequest_set_clientPid(&m, a->pid);
        PUT(attachRequest, m, a->client_name);
        ENCODE_END(attachRequest, m);
    }
    case GR_T_ATTACH_REPLY: {
        ENCODE_BEGIN(attachReply, m);
        goblin_attachReply_set_protocolVersion(&m, a->protocol_version);
        goblin_attachReply_set_errorCode(&m, a->error_code);
        goblin_attachReply_set_sessionId(&m, a->session_id);
        goblin_attachReply_set_ringCapacity(&m, a->ring_capacity);
        goblin_attachReply_set_serverPid(&m, a->pid);
        PUT(attachReply, m, a->request_ring_name);
        PUT(attachReply, m, a->reply_ring_name);
        PUT(attachReply, m, a->error_message);
        ENCODE_END(attachReply, m);
    }
    case GR_T_ATTACH_CONFIRM: {
        ENCODE_BEGIN(attachConfirm, m);
        goblin_attachConfirm_set_sessionId(&m, a->session_id);
        ENCODE_END(attachConfirm, m);
    }
    default:
        return GR_CODEC_UNKNOWN_TEMPLATE;
    }
}
