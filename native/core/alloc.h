/* alloc.h — the counting allocator every engine allocates through.
 *
 * All engine memory goes through gr_mem_alloc/realloc/free so that INFO used_memory,
 * MEMORY USAGE and GOBLIN.MEMORY report real bytes: each call adds or subtracts the
 * allocator's usable size (malloc_usable_size) to a total and to a per-category total.
 * The implementation is alloc.c. The server executes all commands on one thread, so the
 * counters are plain integers; a helper thread that builds or frees data aside (a replica's
 * full-sync load, server/replica.c) points its own calls at counters of its own
 * (gr_mem_thread_counters) and the serving thread adds them in when it takes the thread's
 * result (gr_mem_absorb), so no counter is written by two threads.
 */
#ifndef GR_ALLOC_H
#define GR_ALLOC_H

#include <stddef.h>
#include <stdint.h>

/* cffi-cdef-begin */
/* What the bytes are for; GOBLIN.MEMORY reports one total per category. A value type's
 * engine allocates under its own category, named by its row in the type registry
 * (exec/value_type.h); a new type's engine takes a free number from GR_MEM_FIRST_FREE up in
 * its own header, and the registry refuses two types on one category. */
typedef enum gr_mem_category {
    GR_MEM_KEYSPACE = 0,   /* the key table and key bytes */
    GR_MEM_LIST = 1,       /* list engines (compact and segmented) */
    GR_MEM_STRING = 2,     /* string values */
    GR_MEM_SESSION = 3,    /* per-session server state (not the rings themselves) */
    GR_MEM_OTHER = 4,
    GR_MEM_FIRST_FREE = 5, /* 5 .. GR_MEM_CATEGORY_COUNT - 1: for the engines of new types */
    GR_MEM_CATEGORY_COUNT = 16
} gr_mem_category_t;

/* Lifecycle-free: these behave like malloc/realloc/free, but counted.
 * gr_mem_alloc returns NULL on allocation failure (callers reply with an OOM error). */
void *gr_mem_alloc(size_t size, gr_mem_category_t category);
/* Zeroed, as calloc: a large block comes straight from fresh pages, so nothing is written and
 * its pages are touched only as they are used (an index allocated in one write stays cheap). */
void *gr_mem_calloc(size_t count, size_t size, gr_mem_category_t category);
void *gr_mem_realloc(void *ptr, size_t size, gr_mem_category_t category);
void gr_mem_free(void *ptr, gr_mem_category_t category);
/* The bytes the allocator really holds for ptr (0 for NULL). */
size_t gr_mem_usable(const void *ptr);

/* For a server process: a fixed malloc mmap threshold (GR_MEM_MMAP_THRESHOLD). glibc's
 * default raises the threshold each time a large block is freed, after which large blocks
 * (list arenas, connection buffers) come from the heap and their pages stay with the
 * process when freed: measured, a PMA list over RESP kept 59 bytes of RSS per item after
 * its operations instead of 28. 0 on success. */
#define GR_MEM_MMAP_THRESHOLD 262144   /* 256 KiB */
int gr_mem_configure_for_server(void);

/* Queries */
int64_t gr_mem_used_total(void);
int64_t gr_mem_used_by(gr_mem_category_t category);
int64_t gr_mem_allocations(void);   /* live allocation count */
/* cffi-cdef-end */

/* Counters a helper thread counts into instead of the process's (zero them first). */
typedef struct gr_mem_counters {
    int64_t total;
    int64_t allocations;
    int64_t by_category[GR_MEM_CATEGORY_COUNT];
} gr_mem_counters_t;
/* The calling thread counts into own from now on (NULL: the process's counters again). */
void gr_mem_thread_counters(gr_mem_counters_t *own);
/* Adds a helper thread's counters (after it finished with them) to the process's. */
void gr_mem_absorb(const gr_mem_counters_t *delta);

#endif
