/* request.h — the typed request every command runs from, whichever transport brought it.
 *
 * The ring decodes an SBE request message into a gr_request_t (ring/codec.c); the RESP path
 * and the ring client build the same struct from argv (commands/). Template ids are the
 * schema's (schema/goblin.xml); see ring/codec.h for which fields each template uses.
 */
#ifndef GR_REQUEST_H
#define GR_REQUEST_H

#include <stddef.h>
#include <stdint.h>

/* cffi-cdef-begin: everything up to cffi-cdef-end is also read by native/build_ffi.py. */
/* Template ids, mirrored from schema/goblin.xml (checked against the generated codecs in codec.c). */
enum gr_template {
    GR_T_ATTACH_REQUEST = 1, GR_T_ATTACH_REPLY = 2, GR_T_ATTACH_CONFIRM = 3, GR_T_PING = 4,
    GR_T_INTEGER_REPLY = 10, GR_T_BULK_REPLY = 11, GR_T_ARRAY_REPLY = 12,
    GR_T_STATUS_REPLY = 13, GR_T_ERROR_REPLY = 14,
    GR_T_COMMAND = 20,
    GR_T_DEL = 100, GR_T_EXISTS = 101, GR_T_TYPE = 102, GR_T_DBSIZE = 103, GR_T_FLUSHDB = 104,
    GR_T_KEYS = 105, GR_T_SCAN = 106, GR_T_RENAME = 107, GR_T_MEMORY_USAGE = 108,
    GR_T_PUSH = 200, GR_T_POP = 201, GR_T_LLEN = 202, GR_T_LINDEX = 203, GR_T_LRANGE = 204,
    GR_T_LSET = 205, GR_T_LINSERT = 206, GR_T_LREM = 207, GR_T_LTRIM = 208, GR_T_LPOS = 209,
    GR_T_LMOVE = 210, GR_T_LMPOP = 211,
    GR_T_BPOP = 220, GR_T_BLMOVE = 221, GR_T_BLMPOP = 222,
    GR_T_SELECT = 110, GR_T_MOVE = 111, GR_T_SWAPDB = 112,
    GR_T_SET = 300, GR_T_GET = 301, GR_T_GETDEL = 302, GR_T_GETEX = 303, GR_T_MSET = 304,
    GR_T_MGET = 305, GR_T_INCRBY = 306, GR_T_INCRBYFLOAT = 307, GR_T_APPEND = 308,
    GR_T_STRLEN = 309, GR_T_GETRANGE = 310, GR_T_SETRANGE = 311,
    GR_T_EXPIRE = 320, GR_T_TTL = 321, GR_T_PERSIST = 322
};

typedef struct gr_bytes {
    const uint8_t *data;
    uint32_t length;
} gr_bytes_t;

typedef struct gr_request {
    uint16_t template_id;
    uint64_t request_id;
    uint8_t end;        /* ListEnd: 0 LEFT, 1 RIGHT (LMOVE: from) */
    uint8_t to_end;     /* LMOVE/BLMOVE: to */
    uint8_t flag;       /* see the table above */
    uint8_t engine;     /* ListEngine, list requests only: 0 DEFAULT, 1 SEGMENTED, 2 PMA */
    uint32_t count;
    uint32_t max_len;
    int64_t index;
    int64_t index2;
    uint64_t cursor;
    double timeout;
    gr_bytes_t key;
    gr_bytes_t arg1;
    gr_bytes_t arg2;
    uint32_t item_count;     /* entries in the message's group */
    uint32_t item_capacity;  /* decode: size of items[]; encode: unused */
    gr_bytes_t *items;
} gr_request_t;

/* cffi-cdef-end */

#endif
