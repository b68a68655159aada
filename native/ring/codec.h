/* codec.h — typed, bounds-checked encode and decode of every goblin-ring SBE message.
 *
 * The wire format is schema/goblin.xml; the generated flyweights in native/generated/goblin/
 * do the field work. This layer adds what they leave to the caller: it checks the header
 * (schema id, version, template id, a block length no shorter than the schema's), checks
 * every var-data length against the end of the buffer before reading it, and turns a
 * message into a plain struct (gr_request_t, gr_reply_message_t, gr_attach_t) so that the
 * server's ring sessions (ring/session.c) and the client read fields by name. Decoding is zero
 * copy: every gr_bytes_t points into the decoded buffer.
 *
 * Field use per request template (the schema's names in brackets):
 *   Ping           arg1 [message]
 *   CommandRequest items [arguments]
 *   DelRequest     flag [unlink], items [keys]      ExistsRequest  items [keys]
 *   TypeRequest, MemoryUsageRequest, LLenRequest      key
 *   DbSizeRequest  (none)                            FlushDbRequest flag [all]
 *   KeysRequest    arg1 [pattern]
 *   ScanRequest    cursor, count, arg1 [pattern], arg2 [typeFilter]
 *   RenameRequest  key, arg1 [newKey]
 *   PushRequest    end, flag [onlyIfExists], items [values], key
 *   PopRequest     end, flag [hasCount], count, key
 *   LIndexRequest  index, key                       LRangeRequest/LTrimRequest index [start], index2 [stop], key
 *   LSetRequest    index, key, arg1 [value]
 *   LInsertRequest flag [position: 0 BEFORE, 1 AFTER], key, arg1 [pivot], arg2 [value]
 *   LRemRequest    index [count], key, arg1 [value]
 *   LPosRequest    index [rank], flag [hasCount], count, max_len, key, arg1 [element]
 *   LMoveRequest   end [from], to_end [to], key [source], arg1 [destination]
 *   LMPopRequest   end, count, items [keys]
 *   BPopRequest    end, timeout, items [keys]
 *   BLMoveRequest  end [from], to_end [to], timeout, key [source], arg1 [destination]
 *   BLMPopRequest  end, count, timeout, items [keys]
 *   every list request above (Push .. BLMPop) also: engine [ListEngine: 0 DEFAULT, 1 SEGMENTED, 2 PMA]
 *   SelectRequest  index [db]                       MoveRequest    index [db], key
 *   SwapDbRequest  index [first], index2 [second]
 *   SetRequest     count [variant], end [condition], to_end [expireMode], flag [get],
 *                  index [expireValue], key, arg1 [value]
 *   GetRequest, GetDelRequest, StrLenRequest, PersistRequest   key
 *   GetExRequest   to_end [expireMode], index [expireValue], key
 *   MSetRequest    flag [onlyIfNoneExist], items [keys and values alternating]
 *   MGetRequest    items [keys]
 *   IncrByRequest  index [delta], flag [isDecrBy], key
 *   IncrByFloatRequest, AppendRequest   key, arg1 [increment | value]
 *   GetRangeRequest index [start], index2 [end], key
 *   SetRangeRequest index [offset], key, arg1 [value]
 *   ExpireRequest  to_end [unit], flag [absolute], end [condition], index [value], key
 *   TtlRequest     end [kind], key
 */
#ifndef GR_CODEC_H
#define GR_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "exec/request.h"

/* cffi-cdef-begin: everything up to cffi-cdef-end is also read by native/build_ffi.py. */
#define GR_SCHEMA_ID 4711
#define GR_SCHEMA_VERSION 1
#define GR_MESSAGE_HEADER_LENGTH 8
#define GR_GROUP_MAX_ITEMS 65535   /* groupSizeEncoding.numInGroup is a uint16; 65535 itself is its null */

/* What decoding can say. Never a crash, never a read past the buffer's end. */
typedef enum gr_codec_status {
    GR_CODEC_OK = 0,
    GR_CODEC_TRUNCATED = 1,         /* buffer ends before the header, block, a group or var-data */
    GR_CODEC_BAD_SCHEMA = 2,        /* schema id differs, or a version newer than ours */
    GR_CODEC_UNKNOWN_TEMPLATE = 3,  /* a template id this side does not handle here */
    GR_CODEC_SHORT_BLOCK = 4,       /* header's block length shorter than the schema's */
    GR_CODEC_VAR_DATA_OVERRUN = 5,  /* a var-data length runs past the end of the buffer */
    GR_CODEC_BAD_ENUM = 6,          /* an enum field holds a value the schema does not list */
    GR_CODEC_TOO_MANY_ITEMS = 7,    /* a group larger than the caller's item array */
    GR_CODEC_NO_SPACE = 8           /* encoding: the output buffer is too small */
} gr_codec_status_t;

typedef struct gr_element {
    uint8_t kind;       /* ElementKind: 0 BULK, 1 NIL, 2 INTEGER */
    int64_t integer;
    gr_bytes_t bytes;
} gr_element_t;

typedef struct gr_reply_message {
    uint16_t template_id;
    uint64_t request_id;
    int64_t integer;          /* IntegerReply */
    uint8_t is_nil;           /* BulkReply */
    uint16_t error_code;      /* ErrorReply */
    gr_bytes_t text;          /* BulkReply value, StatusReply text, ErrorReply message, ArrayReply key */
    uint8_t shape;            /* ArrayReply: 0 FLAT, 1 KEYED, 2 NIL_ARRAY */
    uint32_t total_count;
    uint32_t first_index;
    uint32_t element_count;
    uint32_t element_capacity;
    gr_element_t *elements;
} gr_reply_message_t;

typedef struct gr_attach {
    uint16_t template_id;     /* AttachRequest, AttachReply or AttachConfirm */
    uint16_t protocol_version;
    uint16_t error_code;
    uint32_t ring_capacity;
    uint32_t pid;             /* clientPid (request) or serverPid (reply) */
    uint64_t session_id;
    gr_bytes_t client_name;
    gr_bytes_t request_ring_name;
    gr_bytes_t reply_ring_name;
    gr_bytes_t error_message;
} gr_attach_t;

/* Header: peek at a message's template id after checking the header and schema. */
gr_codec_status_t gr_codec_peek_template(const uint8_t *buffer, size_t length, uint16_t *template_id);
const char *gr_codec_status_text(gr_codec_status_t status);

/* Requests (templates 4, 20, 100-299). */
gr_codec_status_t gr_encode_request(const gr_request_t *request, uint8_t *buffer, size_t capacity, size_t *length);
gr_codec_status_t gr_decode_request(const uint8_t *buffer, size_t length, gr_request_t *request);
/* Bytes gr_encode_request will need (header, block, groups and var-data). */
size_t gr_request_encoded_size(const gr_request_t *request);

/* Replies (templates 10-14). */
gr_codec_status_t gr_encode_reply(const gr_reply_message_t *reply, uint8_t *buffer, size_t capacity, size_t *length);
gr_codec_status_t gr_decode_reply(const uint8_t *buffer, size_t length, gr_reply_message_t *reply);

/* Session handshake (templates 1-3). */
gr_codec_status_t gr_encode_attach(const gr_attach_t *attach, uint8_t *buffer, size_t capacity, size_t *length);
gr_codec_status_t gr_decode_attach(const uint8_t *buffer, size_t length, gr_attach_t *attach);
/* cffi-cdef-end */

#endif
