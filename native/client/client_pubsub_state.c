/* client_pubsub_state.c — the Pub/Sub state a ring client keeps (client_pubsub_state.h): its
 * allocation, the stash of PushMessages met by ordinary calls, and its release.
 */
#include "client/client_pubsub_state.h"

#include <stdlib.h>
#include <string.h>

struct gr_client_pubsub *gr_client_pubsub_state_of(struct gr_client_pubsub **slot) {
    if (!*slot) *slot = calloc(1, sizeof **slot);
    return *slot;
}

void gr_client_pubsub_free(struct gr_client_pubsub *state) {
    if (!state) return;
    free(state->stash);
    gr_reassembly_free(&state->fragments);
    free(state->decoded.elements);
    free(state);
}

int gr_client_pubsub_stash(struct gr_client_pubsub **slot, const uint8_t *message, size_t length) {
    struct gr_client_pubsub *state = gr_client_pubsub_state_of(slot);
    if (!state || length > UINT32_MAX) return -1;
    if (state->stash_start == state->stash_length) state->stash_start = state->stash_length = 0;
    size_t need = 4 + length;
    if (state->stash_capacity - state->stash_length < need) {
        size_t capacity = state->stash_capacity ? state->stash_capacity : 4096;
        while (capacity - state->stash_length < need) capacity *= 2;
        uint8_t *grown = realloc(state->stash, capacity);
        if (!grown) return -1;
        state->stash = grown;
        state->stash_capacity = capacity;
    }
    uint32_t n = (uint32_t)length;
    memcpy(state->stash + state->stash_length, &n, 4);
    memcpy(state->stash + state->stash_length + 4, message, length);
    state->stash_length += need;
    return 0;
}
