/* sbe_reply.h — the gr_reply_t that answers a ring session in SBE reply messages.
 *
 * The command layer writes through reply.h; this writer encodes each reply with the
 * generated codecs into a staging area of framed messages, which session.c then copies
 * into the session's reply ring (as many as fit; the rest waits, and the session reads
 * no more requests until it has drained: back-pressure instead of loss).
 *
 * An array reply larger than one ring message is split into ArrayReply chunks that share
 * totalCount and carry their firstIndex. A single value larger than the ring's largest
 * message cannot be delivered: the whole reply becomes an ErrorReply (TOO_LARGE), never a
 * truncated value.
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

typedef struct gr_sbe_reply {
    gr_reply_t base;
    uint8_t *stage;
    size_t stage_length;
    size_t stage_capacity;
    size_t max_message;        /* the reply ring's largest payload */
    uint64_t request_id;       /* set before each command */
    /* array state */
    int in_array;
    int poisoned;              /* 0, or the gr_error_code_t the array turned into */
    uint8_t shape;
    size_t array_start;        /* stage offset to roll back to */
    uint32_t total, next_index, remaining;
    const uint8_t *key;
    size_t key_length;
    size_t chunk_frame;        /* stage offset of the open chunk's frame */
    size_t chunk_end;          /* stage offset where the open chunk's next element goes */
    uint32_t chunk_count, chunk_first;
    int chunk_open;
    char poison_text[160];
} gr_sbe_reply_t;

int gr_sbe_reply_init(gr_sbe_reply_t *reply, size_t max_message);
void gr_sbe_reply_free(gr_sbe_reply_t *reply);
/* Frames staged but not yet delivered: iterate with gr_sbe_reply_frame_at. */
int gr_sbe_reply_frame_at(const gr_sbe_reply_t *reply, size_t offset, uint32_t *template_id,
                          const uint8_t **message, uint32_t *length, size_t *next_offset);
/* Drop the first `bytes` of staging (frames delivered). */
void gr_sbe_reply_consume(gr_sbe_reply_t *reply, size_t bytes);

#endif
