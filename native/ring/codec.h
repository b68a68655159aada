/* codec.h — typed, bounds-checked encode and decode of every goblin-ring SBE message.
 *
 * The wire format is schema/goblin.xml. Every per-message case is generated from it by
 * schema/generate.py into codec_generated.c (its constants and lists in codec_generated.h),
 * with schema/glue.py's one table saying which struct slot each schema field fills; the
 * bounds rules the cases share are hand-written once in codec_wire.h. Decoding checks the
 * header (schema id, version, template id, a block length no shorter than the schema's),
 * every group header and var-data length against the end of the buffer before reading it,
 * and every enum field against the schema's validValues, and turns a message into a plain
 * struct (gr_request_t, gr_reply_message_t, gr_attach_t) so that the server (ring/session.c) and
 * the client read fields by name. Decoding is zero copy: every gr_bytes_t points into the
 * decoded buffer. sbe-tool's flyweights (native/generated/) are not on this path; the
 * generated gr_codec_self_check proves the two agree on every offset. Which struct slot each
 * request field fills is listed at the top of codec_generated.h.
 */
#ifndef GR_CODEC_H
#define GR_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "exec/request.h"

/* cffi-cdef-begin: everything up to cffi-cdef-end is also read by native/build_ffi.py. */
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

/* One node of an ArrayReply's tree, in pre-order (ElementKind in the schema). */
typedef struct gr_element {
    uint8_t kind;       /* GR_ELEMENT_KIND_*: BULK, NIL, INTEGER, ARRAY, MAP, NIL_ARRAY, STATUS, ERROR */
    int64_t integer;    /* INTEGER: the value; ARRAY: children; MAP: pairs; ERROR: its error code */
    gr_bytes_t bytes;   /* BULK, STATUS, ERROR */
} gr_element_t;

typedef struct gr_reply_message {
    uint16_t template_id;
    uint64_t request_id;
    int64_t integer;          /* IntegerReply */
    uint8_t is_nil;           /* BulkReply */
    uint16_t error_code;      /* ErrorReply */
    gr_bytes_t text;          /* BulkReply value, StatusReply text, ErrorReply message, PushMessage payload */
    uint8_t push_kind;        /* PushMessage: GR_PUSH_KIND_MESSAGE, _PMESSAGE or _SMESSAGE */
    gr_bytes_t pattern;       /* PushMessage: the pattern that matched (PMESSAGE), else empty */
    gr_bytes_t channel;       /* PushMessage */
    uint32_t element_count;   /* ArrayReply: the tree's nodes, root first */
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
    gr_bytes_t username;      /* AttachRequest: the ACL user and password (empty: none given) */
    gr_bytes_t password;
    gr_bytes_t request_ring_name;
    gr_bytes_t reply_ring_name;
    gr_bytes_t error_message;
} gr_attach_t;

/* Header: peek at a message's template id after checking the header and schema. */
gr_codec_status_t gr_codec_peek_template(const uint8_t *buffer, size_t length, uint16_t *template_id);
const char *gr_codec_status_text(gr_codec_status_t status);

/* Requests (templates 4, 20, 100-399): gr_request_templates in codec_generated.h. */
gr_codec_status_t gr_encode_request(const gr_request_t *request, uint8_t *buffer, size_t capacity, size_t *length);
gr_codec_status_t gr_decode_request(const uint8_t *buffer, size_t length, gr_request_t *request);
/* Bytes gr_encode_request will need (header, block, groups and var-data). */
size_t gr_request_encoded_size(const gr_request_t *request);

/* Replies (templates 10-14) and the Pub/Sub PushMessage (15). */
gr_codec_status_t gr_encode_reply(const gr_reply_message_t *reply, uint8_t *buffer, size_t capacity, size_t *length);
gr_codec_status_t gr_decode_reply(const uint8_t *buffer, size_t length, gr_reply_message_t *reply);
size_t gr_reply_encoded_size(const gr_reply_message_t *reply);

/* Session handshake (templates 1-3). */
gr_codec_status_t gr_encode_attach(const gr_attach_t *attach, uint8_t *buffer, size_t capacity, size_t *length);
gr_codec_status_t gr_decode_attach(const uint8_t *buffer, size_t length, gr_attach_t *attach);
size_t gr_attach_encoded_size(const gr_attach_t *attach);
/* cffi-cdef-end */

#include "ring/codec_generated.h"   /* GR_SCHEMA_ID, GR_GROUP_MAX_ITEMS, template lists */

#endif
