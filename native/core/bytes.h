/* bytes.h — gr_bytes_t, a borrowed byte string (pointer + length), shared by every layer.
 *
 * It lives in core/ so that engines (the table engine hands entries out as gr_bytes_t) and
 * exec/ (requests, replies) name one type. Nothing here owns memory: who returns a gr_bytes_t
 * says how long its bytes stay valid.
 */
#ifndef GR_BYTES_H
#define GR_BYTES_H

#include <stdint.h>

/* cffi-cdef-begin: read by native/build_ffi.py (exec/request.h's types use it). */
typedef struct gr_bytes {
    const uint8_t *data;
    uint32_t length;
} gr_bytes_t;
/* cffi-cdef-end */

#endif
