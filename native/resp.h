/* resp.h — the RESP request parser: bytes from a client in, one command's argv out.
 *
 * It knows framing only: no sockets, no buffers of its own for input, no command table.
 * The transport (resp_conn.c) owns the input gr_buf_t and calls gr_resp_parse on its live
 * bytes; replies are written by resp_reply.c. The implementation is resp.c, and it follows
 * Redis's networking.c (processMultibulkBuffer, processInlineBuffer) and sds.c
 * (sdssplitargs): same accepted input, same protocol error texts.
 *
 * Two request forms, told apart by the first byte of the frame:
 *
 *   multibulk   *<argc>\r\n  then argc times  $<length>\r\n<length bytes>\r\n
 *               argv points straight into the caller's buffer (zero copy).
 *   inline      any line not starting with '*', ended by \n or \r\n, split like
 *               sdssplitargs: blanks separate; "double quotes" take \n \r \t \b \a \\ \"
 *               and \xHH escapes; 'single quotes' take \' ; a closing quote must be
 *               followed by a blank or the end of the line. The unescaped arguments are
 *               copied into the parser's scratch.
 *
 *   the caller's buffer                          the parser's command
 *   *2\r\n$3\r\nGET\r\n$1\r\nk\r\n*1\r\n...       argc = 2
 *               ^            ^                    argv[0] -> "GET", argv_length[0] = 3
 *               argv[0]      argv[1]              argv[1] -> "k",   argv_length[1] = 1
 *   |<--- consumed = 20 bytes -->|
 *
 * Lifetime: the command (argc, the argv arrays, and the inline scratch) belongs to the
 * parser and is valid until the next gr_resp_parse or gr_resp_parser_free; a multibulk
 * argv also points into the caller's buffer, so it is valid only while those bytes stay
 * where they are (consume them after executing, not before). A pipeline is parsed by
 * calling gr_resp_parse on buffer + consumed-so-far until it returns INCOMPLETE, then
 * consuming the total once.
 *
 * Progress across reads: when a multibulk frame is incomplete, the parser remembers how
 * far it got (arguments complete, the pending bulk's length), so a frame arriving in many
 * reads is not re-scanned from its start each time. The rule that makes this safe: after
 * INCOMPLETE, the next call must pass a buffer that starts with the same frame (the same
 * unconsumed bytes, possibly moved by a compaction or a realloc, with more appended).
 * A caller that drops its input instead (disconnect, error) calls gr_resp_parser_reset.
 * A violation cannot make the parser read outside [buffer, buffer + length); it can only
 * yield wrong arguments.
 *
 * Thread-safety: a parser serves one connection on one thread.
 */
#ifndef GR_RESP_H
#define GR_RESP_H

#include <stddef.h>
#include <stdint.h>

#define GR_RESP_DEFAULT_MAX_BULK_LENGTH (512ULL * 1024 * 1024)   /* proto-max-bulk-len */
#define GR_RESP_DEFAULT_MAX_MULTIBULK_LENGTH (1024U * 1024)
#define GR_RESP_DEFAULT_MAX_INLINE_LENGTH (64U * 1024)           /* PROTO_INLINE_MAX_SIZE */

typedef struct gr_resp_limits {
    uint64_t max_bulk_length;       /* a longer $<length> is "invalid bulk length" */
    uint32_t max_multibulk_length;  /* a larger *<argc> is "invalid multibulk length" */
    uint32_t max_inline_length;     /* longest inline line, and longest *<argc> / $<length>
                                       line, before "too big ..." */
} gr_resp_limits_t;

typedef enum gr_resp_parse_status {
    GR_RESP_COMMAND = 0,         /* *command holds a command; consume *consumed bytes after use */
    GR_RESP_INCOMPLETE = 1,      /* the frame has not fully arrived: keep the bytes, read more */
    GR_RESP_PROTOCOL_ERROR = 2,  /* reply "-ERR Protocol error: <error_text>", then close */
    GR_RESP_EMPTY_LINE = 3,      /* nothing to run (empty inline line, *0, *-1 ...): consume
                                    *consumed bytes and parse on */
    GR_RESP_NO_MEMORY = 4        /* the argv arrays or scratch could not grow: drop the client */
} gr_resp_parse_status_t;

typedef struct gr_resp_command {
    size_t argc;                 /* >= 1 */
    const uint8_t **argv;        /* argv[i] .. argv[i] + argv_length[i]; not NUL-terminated */
    size_t *argv_length;
    int is_inline;               /* 1 if it came as an inline line (argv in parser scratch) */
} gr_resp_command_t;

typedef struct gr_resp_parser {
    gr_resp_limits_t limits;
    gr_resp_command_t command;
    size_t *argv_offset;         /* multibulk arguments as offsets from the frame start */
    size_t argv_capacity;        /* entries in argv, argv_length and argv_offset */
    uint8_t *scratch;            /* unescaped inline arguments */
    size_t scratch_capacity;
    /* A multibulk frame that has not fully arrived; pending_count == 0: none. */
    size_t pending_count;        /* the frame's argc */
    size_t pending_parsed;       /* arguments complete so far */
    size_t pending_offset;       /* offset of the next $<length> line, or of the pending bulk's data */
    int64_t pending_bulk_length; /* the pending bulk's length once its line is read, else -1 */
    char error_text[40];         /* "expected '$', got 'X'" is formatted here */
} gr_resp_parser_t;

/* ---- Lifecycle ---- */

/* limits == NULL takes the GR_RESP_DEFAULT_* values. Allocates nothing until the first
 * command needs it. */
void gr_resp_parser_init(gr_resp_parser_t *parser, const gr_resp_limits_t *limits);
void gr_resp_parser_free(gr_resp_parser_t *parser);
/* Forget a partially parsed frame (the caller dropped its input). Keeps the memory. */
void gr_resp_parser_reset(gr_resp_parser_t *parser);
/* The defaults, for callers that start from them and change one limit. */
gr_resp_limits_t gr_resp_limits_default(void);

/* ---- Parsing ---- */

/* Parse at most one frame from buffer[0, length). Never reads past length.
 *   COMMAND         *command set, *consumed = the frame's bytes
 *   EMPTY_LINE      *consumed = the bytes to skip
 *   INCOMPLETE      *consumed = 0 (see "Progress across reads" above)
 *   PROTOCOL_ERROR  *error_text = the text after "Protocol error: " (static, or in the
 *                   parser until its next call); the stream cannot be resynchronised
 *   NO_MEMORY       *consumed = 0
 * *command is NULL unless COMMAND; *error_text is NULL unless PROTOCOL_ERROR (error_text
 * itself may be NULL if the caller does not want it). */
gr_resp_parse_status_t gr_resp_parse(gr_resp_parser_t *parser, const uint8_t *buffer, size_t length,
                                     size_t *consumed, gr_resp_command_t **command,
                                     const char **error_text);

/* ---- Queries ---- */

/* After INCOMPLETE: the least number of bytes, counted from the frame start, the frame
 * is known to need (the pending bulk's data and its CRLF), or 0 when not yet known. A
 * transport can reserve that much at once instead of growing by doubling through a
 * large value. */
size_t gr_resp_parser_bytes_wanted(const gr_resp_parser_t *parser);

#endif
