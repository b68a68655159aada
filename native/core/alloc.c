/* alloc.c — counting allocator; the API and its purpose are described in alloc.h. */
#include "core/alloc.h"

#include <malloc.h>
#include <stdlib.h>

/* The process's counters. A thread that builds or frees data aside (a replica's full-sync load,
 * the old data's release) counts into counters of its own (gr_mem_thread_counters) and the
 * serving thread adds them in when it takes the result (gr_mem_absorb); every other thread
 * counts here. The pointer is thread-local (initial-exec: one %fs-relative load per call). */
static gr_mem_counters_t process_counters;
static __thread gr_mem_counters_t *counters __attribute__((tls_model("initial-exec"))) = &process_counters;
#define used_total (counters->total)
#define used_by_category (counters->by_category)
#define live_allocations (counters->allocations)

void *gr_mem_alloc(size_t size, gr_mem_category_t category) {
    void *ptr = malloc(size ? size : 1);
    if (!ptr) return NULL;
    int64_t usable = (int64_t)malloc_usable_size(ptr);
    used_total += usable;
    used_by_category[category] += usable;
    live_allocations++;
    return ptr;
}

void *gr_mem_calloc(size_t count, size_t size, gr_mem_category_t category) {
    void *ptr = calloc(count ? count : 1, size ? size : 1);
    if (!ptr) return NULL;
    int64_t usable = (int64_t)malloc_usable_size(ptr);
    used_total += usable;
    used_by_category[category] += usable;
    live_allocations++;
    return ptr;
}

void *gr_mem_realloc(void *ptr, size_t size, gr_mem_category_t category) {
    if (!ptr) return gr_mem_alloc(size, category);
    int64_t before = (int64_t)malloc_usable_size(ptr);
    void *grown = realloc(ptr, size ? size : 1);
    if (!grown) return NULL;
    int64_t after = (int64_t)malloc_usable_size(grown);
    used_total += after - before;
    used_by_category[category] += after - before;
    return grown;
}

void gr_mem_free(void *ptr, gr_mem_category_t category) {
    if (!ptr) return;
    int64_t usable = (int64_t)malloc_usable_size(ptr);
    used_total -= usable;
    used_by_category[category] -= usable;
    live_allocations--;
    free(ptr);
}

int gr_mem_configure_for_server(void) {
    return mallopt(M_MMAP_THRESHOLD, GR_MEM_MMAP_THRESHOLD) == 1 ? 0 : -1;
}

size_t gr_mem_usable(const void *ptr) { return ptr ? malloc_usable_size((void *)ptr) : 0; }
int64_t gr_mem_used_total(void) { return used_total; }

void gr_mem_thread_counters(gr_mem_counters_t *own) { counters = own ? own : &process_counters; }

void gr_mem_absorb(const gr_mem_counters_t *delta) {
    process_counters.total += delta->total;
    process_counters.allocations += delta->allocations;
    for (int i = 0; i < GR_MEM_CATEGORY_COUNT; i++) process_counters.by_category[i] += delta->by_category[i];
}
int64_t gr_mem_used_by(gr_mem_category_t category) {
    return (unsigned)category < GR_MEM_CATEGORY_COUNT ? used_by_category[category] : 0;
}
int64_t gr_mem_allocations(void) { return live_allocations; }
