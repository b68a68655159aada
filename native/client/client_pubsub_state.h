/* client_pubsub_state.h — the Pub/Sub state a ring client keeps, below both of its users.
 *
 * client.c's reply wait stashes here a PushMessage an ordinary call meets before its reply;
 * client_pubsub.c (the subscribed session's reader) writes the stashed ones first, and keeps
 * its own scratch here (a message arriving in fragments, the decode buffer, the count read).
 * The state is allocated on first use and freed with the client. Keeping it in its own file
 * lets client_pubsub.c build on client.c without client.c calling back into the reader.
 */
#ifndef GR_CLIENT_PUBSUB_STATE_H
#define GR_CLIENT_PUBSUB_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "ring/codec.h"
#include "ring/fragment.h"

struct gr_client_pubsub {
    uint8_t *stash;                  /* stashed PushMessages: u32 length, then the message */
    size_t stash_start, stash_length, stash_capacity;
    gr_reassembly_t fragments;       /* a message arriving in fragments */
    int fragments_ready;             /* fragments holds a complete message not yet written */
    gr_reply_message_t decoded;      /* decode scratch (elements grown to the largest reply) */
    uint64_t items;                  /* items read so far */
};

/* The state in *slot, allocated (zeroed) the first time; NULL if that allocation fails. */
struct gr_client_pubsub *gr_client_pubsub_state_of(struct gr_client_pubsub **slot);
/* Keep one PushMessage an ordinary call met while waiting for its reply. 0, or -1 (no memory). */
int gr_client_pubsub_stash(struct gr_client_pubsub **slot, const uint8_t *message, size_t length);
void gr_client_pubsub_free(struct gr_client_pubsub *state);

#endif
