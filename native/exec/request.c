/* request.c — copying a gr_request_t (request.h) so exec can keep it after the transport's
 * buffer is reused: one allocation holds the struct, the items array and every byte the
 * request points at, so a copy is freed with one call and owns nothing else.
 */
#include "exec/request.h"

#include <string.h>

#include "core/alloc.h"

static size_t aligned(size_t n) { return (n + 7) & ~(size_t)7; }

static gr_bytes_t copy_bytes(gr_bytes_t source, uint8_t **at) {
    gr_bytes_t copy = {*at, source.length};
    if (source.length) memcpy(*at, source.data, source.length);
    *at += source.length;
    return copy;
}

gr_request_t *gr_request_clone(const gr_request_t *request) {
    size_t bytes = aligned(sizeof *request) + aligned((size_t)request->item_count * sizeof(gr_bytes_t));
    bytes += (size_t)request->key.length + request->arg1.length + request->arg2.length;
    for (uint32_t i = 0; i < request->item_count; i++) bytes += request->items[i].length;
    uint8_t *block = gr_mem_alloc(bytes, GR_MEM_SESSION);
    if (!block) return NULL;
    gr_request_t *clone = (gr_request_t *)block;
    *clone = *request;
    clone->items = (gr_bytes_t *)(block + aligned(sizeof *request));
    clone->item_capacity = request->item_count;
    uint8_t *at = (uint8_t *)clone->items + aligned((size_t)request->item_count * sizeof(gr_bytes_t));
    clone->key = copy_bytes(request->key, &at);
    clone->arg1 = copy_bytes(request->arg1, &at);
    clone->arg2 = copy_bytes(request->arg2, &at);
    for (uint32_t i = 0; i < request->item_count; i++) clone->items[i] = copy_bytes(request->items[i], &at);
    return clone;
}

void gr_request_free_clone(gr_request_t *clone) { gr_mem_free(clone, GR_MEM_SESSION); }
