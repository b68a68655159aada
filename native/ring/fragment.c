/* fragment.c — writing and reassembling messages larger than one ring record; the record
 * layout, the rules and why are in fragment.h.
 */
#include "ring/fragment.h"

#include <stdlib.h>
#include <string.h>

gr_ring_status_t gr_fragment_write(gr_ring_t *ring, uint16_t template_id, const uint8_t *message, size_t length,
                                   size_t *sent) {
    if (length <= ring->max_message_length) {
        gr_ring_status_t status = gr_ring_write(ring, template_id, message, length);
        if (status == GR_RING_OK) *sent = length;
        return status;
    }
    size_t room = ring->max_message_length - GR_FRAGMENT_HEADER_LENGTH;
    while (*sent < length) {
        size_t piece = length - *sent < room ? length - *sent : room;
        uint8_t *payload;
        gr_ring_status_t status = gr_ring_claim(ring, GR_FRAGMENT_TYPE, GR_FRAGMENT_HEADER_LENGTH + piece, &payload);
        if (status != GR_RING_OK) return status;
        uint32_t header[2] = {template_id, (*sent == 0 ? GR_FRAGMENT_BEGIN : 0u) |
                                           (*sent + piece == length ? GR_FRAGMENT_END : 0u)};
        uint64_t total = length;
        memcpy(payload, header, 8);
        memcpy(payload + 8, &total, 8);
        memcpy(payload + GR_FRAGMENT_HEADER_LENGTH, message + *sent, piece);
        gr_ring_commit(ring, payload);
        *sent += piece;
    }
    return GR_RING_OK;
}

int gr_fragment_is_end(const uint8_t *payload, size_t length) {
    uint32_t flags;
    if (length < GR_FRAGMENT_HEADER_LENGTH) return 1;   /* broken: let the reader say so */
    memcpy(&flags, payload + 4, 4);
    return (flags & GR_FRAGMENT_END) != 0;
}

void gr_reassembly_reset(gr_reassembly_t *r) {
    r->active = 0;
    r->skipping = 0;
    r->length = 0;
    r->total = 0;
}

void gr_reassembly_free(gr_reassembly_t *r) {
    free(r->buffer);
    r->buffer = NULL;
    r->capacity = 0;
    gr_reassembly_reset(r);
}

void gr_reassembly_trim(gr_reassembly_t *r, size_t keep) {
    if (r->capacity > keep && !r->active) {
        free(r->buffer);
        r->buffer = NULL;
        r->capacity = 0;
    }
}

gr_reassembly_status_t gr_reassembly_take(gr_reassembly_t *r, const uint8_t *payload, size_t length) {
    if (length < GR_FRAGMENT_HEADER_LENGTH) { gr_reassembly_reset(r); return GR_REASSEMBLY_BROKEN; }
    uint32_t template_id, flags;
    uint64_t total;
    memcpy(&template_id, payload, 4);
    memcpy(&flags, payload + 4, 4);
    memcpy(&total, payload + 8, 8);
    size_t piece = length - GR_FRAGMENT_HEADER_LENGTH;
    if (flags & GR_FRAGMENT_BEGIN) {
        gr_reassembly_reset(r);   /* a BEGIN while a message was open: the writer gave that one up */
        if (template_id > UINT16_MAX || (flags & GR_FRAGMENT_END)) return GR_REASSEMBLY_BROKEN;
        r->active = 1;
        r->template_id = (uint16_t)template_id;
        r->total = total;
        if (r->limit && total > r->limit) r->skipping = 1;
    } else if (!r->active || template_id != r->template_id || total != r->total) {
        gr_reassembly_reset(r);
        return GR_REASSEMBLY_BROKEN;
    }
    if (piece > r->total - r->length) { gr_reassembly_reset(r); return GR_REASSEMBLY_BROKEN; }
    /* The buffer grows as bytes arrive (doubling, capped at the announced total), as a query
     * buffer does: announcing a large message costs the reader nothing until it is sent. */
    if (!r->skipping && r->length + piece > r->capacity) {
        size_t capacity = r->capacity ? r->capacity : 65536;
        while (capacity < r->length + piece) capacity *= 2;
        if (capacity > r->total) capacity = r->total;
        uint8_t *grown = realloc(r->buffer, capacity);
        if (!grown) r->skipping = 1;
        else { r->buffer = grown; r->capacity = capacity; }
    }
    if (!r->skipping) memcpy(r->buffer + r->length, payload + GR_FRAGMENT_HEADER_LENGTH, piece);
    r->length += piece;
    if (!(flags & GR_FRAGMENT_END)) return GR_REASSEMBLY_MORE;
    int complete = r->length == r->total, skipped = r->skipping, no_memory = skipped && !(r->limit && r->total > r->limit);
    size_t gathered = r->length;
    gr_reassembly_reset(r);
    r->length = gathered;
    if (!complete) return GR_REASSEMBLY_BROKEN;
    if (skipped) return no_memory ? GR_REASSEMBLY_NO_MEMORY : GR_REASSEMBLY_TOO_LARGE;
    return GR_REASSEMBLY_COMPLETE;
}
