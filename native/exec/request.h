/* request.h — the typed request every command runs from, whichever transport brought it.
 *
 * The ring decodes an SBE request message into a gr_request_t (ring/codec.c); the RESP path
 * and the ring client build the same struct from argv (commands/). Template ids are the
 * schema's (schema/goblin.xml, generated into exec/templates_generated.h); ring/codec_generated.h
 * lists which slots each template uses, generated from schema/glue.py's one slot table.
 */
#ifndef GR_REQUEST_H
#define GR_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#include "core/bytes.h"                 /* gr_bytes_t */
#include "exec/templates_generated.h"   /* the GR_T_* template ids, generated from the schema */

/* cffi-cdef-begin: everything up to cffi-cdef-end is also read by native/build_ffi.py. */
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

/* A deep copy of request in one counted allocation (alloc.h, GR_MEM_SESSION): the struct,
 * its items and every byte its key, arg1, arg2 and items point at. Exec keeps such copies
 * past the transport's buffers: a parked waiter (blocking.c), a queued MULTI command
 * (transaction.c). NULL when out of memory; free with gr_request_free_clone. */
gr_request_t *gr_request_clone(const gr_request_t *request);
void gr_request_free_clone(gr_request_t *clone);

#endif
