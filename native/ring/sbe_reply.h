/* sbe_reply.h — the gr_reply_t that answers a ring session in SBE reply messages.
 *
 * The command layer writes through reply.h; this writer encodes each reply with the codec
 * (ring/codec.h) into a staging area of framed messages, which session.c then copies into the
 * session's reply ring (as much as fits; the rest waits, and the session reads no more
 * requests until it has drained: back-pressure instead of loss).
 *
 * A reply of any shape is one message. Scalars are IntegerReply, BulkReply, StatusReply or
 * ErrorReply; anything with an array in it is one ArrayReply whose elements are the reply's
 * tree in pre-order (root first; an ARRAY or MAP element counts the children that follow),
 * streamed element by element into staging with the codec's gr_stream_array_reply_* and
 * closed when the root's last descendant is written. Nested arrays (COMMAND INFO, EXEC),
 * maps (HELLO, CONFIG GET), errors inside arrays all have their element kind. A message
 * larger than one ring record is written in fragments by session.c (ring/fragment.h); its
 * size is bounded only by memory, as a Redis client's output buffer is by default.
 * A Pub/Sub message for a subscribed session is a PushMessage frame staged the same way, in
 * order with the replies (gr_sbe_reply_stage_push), when it cannot go straight into the ring.
 *
 * Staged frame:  +----------------+----------------+---------------------------+
 *                | template (u32) | length (u32)   | SBE message (length bytes)|
 *                +----------------+----------------+---------------------------+
 */
#ifndef GR_SBE_REPLY_H
#define GR_SBE_REPLY_H

#include <stddef.h>
#include <stdint.h>

#include "exec/reply.h"
#include "ring/codec.h"   /* gr_reply_message_t */

#define GR_SBE_REPLY_MAX_DEPTH 32   /* nesting deeper than any Redis reply */

typedef struct gr_sbe_reply {
    gr_reply_t base;
    uint8_t *stage;
    size_t stage_length;
    size_t stage_capacity;
    uint64_t request_id;       /* set before each command */
    size_t head_sent;          /* bytes of the first staged frame's message already in the ring */
    /* the ArrayReply being streamed */
    int depth;                 /* open containers; 0: no array open */
    uint64_t remaining[GR_SBE_REPLY_MAX_DEPTH];   /* children still to come, per open container */
    size_t array_frame;        /* stage offset of its frame */
    uint32_t array_count;      /* elements written */
    gr_reply_message_t array_head;   /* its head's fields (template, request id), kept zeroed */
    /* Pub/Sub messages that arrived while an ArrayReply was open (a PUBLISH inside EXEC to
     * this session's own channel): staged frames appended as soon as the array closes. */
    uint8_t *deferred;
    size_t deferred_length, deferred_capacity;
} gr_sbe_reply_t;

int gr_sbe_reply_init(gr_sbe_reply_t *reply);
void gr_sbe_reply_free(gr_sbe_reply_t *reply);
/* Frames staged but not yet delivered: iterate with gr_sbe_reply_frame_at. */
int gr_sbe_reply_frame_at(const gr_sbe_reply_t *reply, size_t offset, uint32_t *template_id,
                          const uint8_t **message, uint32_t *length, size_t *next_offset);
/* Drop the first `bytes` of staging (frames delivered). */
void gr_sbe_reply_consume(gr_sbe_reply_t *reply, size_t bytes);
/* Stage one PushMessage (a Pub/Sub message, ring/session.c's subscriber) behind every frame
 * already staged, or, while an ArrayReply is open, right after it closes. 0, or -1 when out of
 * memory (base.failed is set). */
int gr_sbe_reply_stage_push(gr_sbe_reply_t *reply, const gr_reply_message_t *push);
/* Stage one push (a CLIENT TRACKING InvalidateMessage about the running command's own write)
 * at stage offset `offset` — where that command's reply starts — so the client reads it before
 * the reply. Only with no ArrayReply open and nothing deferred; the bytes staged, or -1
 * (nothing changed). */
long gr_sbe_reply_insert_push(gr_sbe_reply_t *reply, size_t offset, const gr_reply_message_t *push);
/* Bytes staged or deferred: what the session's output buffer holds beyond its reply ring. */
size_t gr_sbe_reply_pending_bytes(const gr_sbe_reply_t *reply);

#endif
