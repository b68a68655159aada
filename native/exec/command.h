/* command.h — argv to a typed request: the one place a command's arguments are validated.
 *
 * gr_request_from_argv looks argv[0] up in the command table (commands/), checks the arity,
 * parses and validates every argument with Redis's error texts, and fills a gr_request_t
 * (exec/request.h) — the same struct the ring decodes from SBE. It is pure: it touches no
 * database and writes no reply, so the server's RESP path, the ring client (client/client.c)
 * and the bench's load generator all call it and validation lives once.
 */
#ifndef GR_COMMAND_H
#define GR_COMMAND_H

#include <stddef.h>
#include <stdint.h>

#include "exec/reply.h"
#include "exec/request.h"

/* cffi-cdef-begin: everything up to cffi-cdef-end is also read by native/build_ffi.py. */
/* Why argv could not become a request: the error code (exec/reply.h, the schema's ErrorCode)
 * and Redis's full error text ("ERR wrong number of arguments for 'get' command"), NUL
 * terminated. 512 bytes: Redis's unknown-command text quotes up to 128 bytes of the name and
 * 128 of the arguments, so it can pass 256. */
typedef struct gr_build_error {
    gr_error_code_t code;
    char text[512];
} gr_build_error_t;

/* Look argv[0] up in the command table, check arity, parse and validate every argument with
 * Redis's texts, and fill *request (items point into argv; the caller gives items[] with
 * item_capacity >= argc). A command with no typed template is returned as GR_T_COMMAND with
 * items = argv. Returns the command's table index, or -1 with *error. */
int gr_request_from_argv(size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                         gr_request_t *request, gr_bytes_t *items, uint32_t item_capacity,
                         gr_build_error_t *error);
/* cffi-cdef-end */

#endif
