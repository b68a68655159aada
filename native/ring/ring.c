/* ring.c — the shared-memory SPSC ring: setup, the producer's claim/commit, the consumer's
 * batched read, and the sleeper-flag wait protocol over a process-shared futex.
 *
 * ring.h holds the layout (segment diagram, record diagram) and the API; this file is the
 * code and the reasoning about memory order. Two rules carry the correctness:
 *   1. A record becomes visible to the consumer only through the release store of its
 *      positive length; the consumer acquire-loads the length before it reads type or
 *      payload. Tail moves at claim time and is never what the consumer trusts.
 *   2. The consumer zeroes the bytes it consumed before it releases head, so any index the
 *      producer has not yet claimed reads as length 0 ("nothing here") however many laps
 *      the ring has made; the producer acquire-loads head before writing into freed space.
 * Every shared word is accessed through the gr_load_* / gr_store_* / gr_fence helpers below
 * (x86-64: acquire/release are plain moves, the fence is an mfence), so the compiler keeps
 * the order we need and the C11 model has no data race to speak of.
 */
#include "ring/ring.h"
#include "core/clock.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* ---- memory ordering: the only way this file touches a shared word ---- */

/* A word only this process writes (producer's tail, consumer's head): relaxed is enough to
 * read it back; atomic so that a peer reading it concurrently never sees a torn value. */
#define gr_load_relaxed(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define gr_store_relaxed(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
/* Pairs with a gr_store_release by the other process: everything it wrote before the
 * store is visible to us after the load. */
#define gr_load_acquire(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define gr_store_release(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
/* Full (sequentially consistent) fence: orders an earlier store before a later load, the
 * one reordering x86 does; used only by the sleeper protocol, once per sleep / per batch. */
#define gr_fence() __atomic_thread_fence(__ATOMIC_SEQ_CST)
/* A spin-wait hint to the core (PAUSE). */
#define gr_cpu_relax() __builtin_ia32_pause()

#define GR_ALIGN8(x) (((x) + (uint64_t)(GR_RING_RECORD_ALIGNMENT - 1)) & ~(uint64_t)(GR_RING_RECORD_ALIGNMENT - 1))

/* ---- the layout ring.h promises ---- */

_Static_assert(GR_RING_LINE == 128, "lines are 128 bytes (two 64-byte lines: the adjacent-line prefetcher)");
_Static_assert(offsetof(gr_ring_header_t, magic) == 0, "descriptor: magic");
_Static_assert(offsetof(gr_ring_header_t, layout_version) == 8, "descriptor: layout_version");
_Static_assert(offsetof(gr_ring_header_t, sbe_schema_id) == 12, "descriptor: sbe_schema_id");
_Static_assert(offsetof(gr_ring_header_t, sbe_schema_version) == 14, "descriptor: sbe_schema_version");
_Static_assert(offsetof(gr_ring_header_t, capacity) == 16, "descriptor: capacity");
_Static_assert(offsetof(gr_ring_header_t, max_message_length) == 24, "descriptor: max_message_length");
_Static_assert(offsetof(gr_ring_header_t, tail_position) == 1 * GR_RING_LINE, "line 1: tail");
_Static_assert(offsetof(gr_ring_header_t, head_cache_position) == 2 * GR_RING_LINE, "line 2: head cache");
_Static_assert(offsetof(gr_ring_header_t, head_position) == 3 * GR_RING_LINE, "line 3: head");
_Static_assert(offsetof(gr_ring_header_t, consumer_sleeping) == 4 * GR_RING_LINE, "line 4: sleeper flag");
_Static_assert(offsetof(gr_ring_header_t, futex_seq) == 4 * GR_RING_LINE + 4, "line 4: futex word");
_Static_assert(offsetof(gr_ring_header_t, invalidation_epoch) == 5 * GR_RING_LINE, "line 5: invalidation epoch");
_Static_assert(offsetof(gr_ring_header_t, reserved) == 6 * GR_RING_LINE, "lines 6-7: reserved");
_Static_assert(sizeof(gr_ring_header_t) == GR_RING_DATA_OFFSET, "the data starts right after the header");
_Static_assert(GR_RING_DATA_OFFSET % GR_RING_LINE == 0, "data starts on a line");
_Static_assert((uint64_t)GR_RING_MAX_CAPACITY / 8 + GR_RING_RECORD_HEADER_LENGTH <= INT32_MAX,
               "the largest record's length fits the int32 length field");
_Static_assert(GR_RING_MAGIC == 0x474f424c494e5231ULL, "magic is \"GOBLINR1\"");

/* ---- helpers ---- */

__attribute__((format(printf, 3, 4)))
static int fail(char *error, size_t error_size, const char *format, ...)
{
    if (error != NULL && error_size > 0) {
        va_list arguments;
        va_start(arguments, format);
        vsnprintf(error, error_size, format, arguments);
        va_end(arguments);
    }
    return -1;
}

static int capacity_is_valid(uint64_t capacity)
{
    return capacity >= GR_RING_MIN_CAPACITY && capacity <= GR_RING_MAX_CAPACITY
        && (capacity & (capacity - 1)) == 0;
}

/* The record header's two words at an 8-aligned data index. */
static inline int32_t *record_length_word(uint8_t *data, uint64_t index)
{
    return (int32_t *)(void *)(data + index);
}

static inline int32_t *record_type_word(uint8_t *data, uint64_t index)
{
    return (int32_t *)(void *)(data + index + 4);
}

static void fill_view(gr_ring_t *ring, void *memory, uint64_t capacity)
{
    memset(ring, 0, sizeof(*ring));
    ring->base = memory;
    ring->header = memory;
    ring->data = (uint8_t *)memory + GR_RING_DATA_OFFSET;
    ring->capacity = capacity;
    ring->mask = capacity - 1;
    ring->max_message_length = capacity / 8;
}

/* ---- lifecycle ---- */

size_t gr_ring_segment_size(uint64_t capacity)
{
    return capacity_is_valid(capacity) ? (size_t)(GR_RING_DATA_OFFSET + capacity) : 0;
}

static int ring_init(gr_ring_t *ring, void *memory, size_t memory_size, uint64_t capacity,
                     uint16_t schema_id, uint16_t schema_version, int zero_data, char *error, size_t error_size)
{
    if (ring == NULL || memory == NULL)
        return fail(error, error_size, "ring init: ring and memory must not be NULL");
    if (!capacity_is_valid(capacity))
        return fail(error, error_size,
                    "ring init: capacity %llu is not a power of two between %d and %d",
                    (unsigned long long)capacity, GR_RING_MIN_CAPACITY, GR_RING_MAX_CAPACITY);
    const size_t needed = gr_ring_segment_size(capacity);
    if (memory_size < needed)
        return fail(error, error_size,
                    "ring init: memory is %zu bytes, a ring of capacity %llu needs %zu",
                    memory_size, (unsigned long long)capacity, needed);
    if ((uintptr_t)memory % 8 != 0)
        return fail(error, error_size, "ring init: memory %p is not 8-byte aligned", memory);

    gr_ring_header_t *header = memory;
    /* Positions 0, flag clear; and every data index must read length 0: zeroed here, or
     * already zero in a fresh segment (gr_ring_init_fresh), whose pages we then never touch. */
    memset(memory, 0, zero_data ? needed : (size_t)GR_RING_DATA_OFFSET);
    header->layout_version = GR_RING_LAYOUT_VERSION;
    header->sbe_schema_id = schema_id;
    header->sbe_schema_version = schema_version;
    header->capacity = capacity;
    header->max_message_length = capacity / 8;
    /* Publishes the zeroed segment and the descriptor to an attacher, which acquire-loads
     * the magic before reading anything else: a valid magic means a whole ring. */
    gr_store_release(&header->magic, (uint64_t)GR_RING_MAGIC);

    fill_view(ring, memory, capacity);
    return 0;
}

int gr_ring_init(gr_ring_t *ring, void *memory, size_t memory_size, uint64_t capacity,
                 uint16_t schema_id, uint16_t schema_version, char *error, size_t error_size)
{
    return ring_init(ring, memory, memory_size, capacity, schema_id, schema_version, 1, error, error_size);
}

int gr_ring_init_fresh(gr_ring_t *ring, void *memory, size_t memory_size, uint64_t capacity,
                       uint16_t schema_id, uint16_t schema_version, char *error, size_t error_size)
{
    return ring_init(ring, memory, memory_size, capacity, schema_id, schema_version, 0, error, error_size);
}

int gr_ring_attach(gr_ring_t *ring, void *memory, size_t memory_size,
                   uint16_t schema_id, uint16_t schema_version, char *error, size_t error_size)
{
    if (ring == NULL || memory == NULL)
        return fail(error, error_size, "ring attach: ring and memory must not be NULL");
    if (memory_size < GR_RING_DATA_OFFSET)
        return fail(error, error_size,
                    "ring attach: memory is %zu bytes, smaller than the %d-byte ring header",
                    memory_size, GR_RING_DATA_OFFSET);
    if ((uintptr_t)memory % 8 != 0)
        return fail(error, error_size, "ring attach: memory %p is not 8-byte aligned", memory);

    const gr_ring_header_t *header = memory;
    /* Pairs with gr_ring_init's release of the magic: the descriptor fields read below
     * are the creator's. */
    const uint64_t magic = gr_load_acquire(&header->magic);
    if (magic != (uint64_t)GR_RING_MAGIC)
        return fail(error, error_size,
                    "ring attach: magic is 0x%016llx, expected 0x%016llx "
                    "(not a goblin-ring segment, or not initialised yet)",
                    (unsigned long long)magic, (unsigned long long)GR_RING_MAGIC);
    if (header->layout_version != GR_RING_LAYOUT_VERSION)
        return fail(error, error_size, "ring attach: layout_version is %u, expected %u",
                    (unsigned)header->layout_version, (unsigned)GR_RING_LAYOUT_VERSION);
    if (header->sbe_schema_id != schema_id)
        return fail(error, error_size, "ring attach: sbe_schema_id is %u, expected %u",
                    (unsigned)header->sbe_schema_id, (unsigned)schema_id);
    if (header->sbe_schema_version != schema_version)
        return fail(error, error_size, "ring attach: sbe_schema_version is %u, expected %u",
                    (unsigned)header->sbe_schema_version, (unsigned)schema_version);
    const uint64_t capacity = header->capacity;
    if (!capacity_is_valid(capacity))
        return fail(error, error_size,
                    "ring attach: capacity is %llu, expected a power of two between %d and %d",
                    (unsigned long long)capacity, GR_RING_MIN_CAPACITY, GR_RING_MAX_CAPACITY);
    if (header->max_message_length != capacity / 8)
        return fail(error, error_size,
                    "ring attach: max_message_length is %llu, expected capacity/8 = %llu",
                    (unsigned long long)header->max_message_length,
                    (unsigned long long)(capacity / 8));
    const size_t needed = gr_ring_segment_size(capacity);
    if (memory_size < needed)
        return fail(error, error_size,
                    "ring attach: memory is %zu bytes, a ring of capacity %llu needs %zu",
                    memory_size, (unsigned long long)capacity, needed);

    fill_view(ring, memory, capacity);
    return 0;
}

const char *gr_ring_status_text(gr_ring_status_t status)
{
    switch (status) {
    case GR_RING_OK: return "OK";
    case GR_RING_FULL: return "FULL";
    case GR_RING_TOO_LARGE: return "TOO_LARGE";
    case GR_RING_TIMEOUT: return "TIMEOUT";
    case GR_RING_INVALID: return "INVALID";
    }
    return "UNKNOWN";
}

int gr_ring_is_corrupt(const gr_ring_t *ring)
{
    return ring->corrupt;
}

/* ---- producer ---- */

/* The consumer's head, fresh, checked to be one the consumer could hold
 * (head <= tail <= head + capacity). On a bad head the view is marked corrupt. */
static inline int load_head(gr_ring_t *ring, uint64_t tail, uint64_t *head)
{
    /* Pairs with the consumer's release of head in gr_ring_read: the bytes below the new
     * head were consumed and zeroed, so we may overwrite them. */
    const uint64_t fresh = gr_load_acquire(&ring->header->head_position);
    if (tail - fresh > ring->capacity) {
        ring->corrupt = 1;
        return 0;
    }
    *head = fresh;
    return 1;
}

gr_ring_status_t gr_ring_claim(gr_ring_t *ring, int32_t type, size_t length, uint8_t **payload)
{
    if (type <= 0 || ring->corrupt)
        return GR_RING_INVALID;
    if (length > ring->max_message_length)
        return GR_RING_TOO_LARGE;

    gr_ring_header_t *header = ring->header;
    uint8_t *data = ring->data;
    const uint64_t capacity = ring->capacity;
    const uint64_t record_length = (uint64_t)length + GR_RING_RECORD_HEADER_LENGTH;
    const uint64_t required = GR_ALIGN8(record_length);
    const uint64_t tail = gr_load_relaxed(&header->tail_position);     /* ours alone */
    uint64_t head = gr_load_relaxed(&header->head_cache_position);     /* ours alone */

    if (tail - head > capacity || required > capacity - (tail - head)) {
        if (!load_head(ring, tail, &head))
            return GR_RING_INVALID;
        if (required > capacity - (tail - head))
            return GR_RING_FULL;
        gr_store_relaxed(&header->head_cache_position, head);
    }

    const uint64_t tail_index = tail & ring->mask;
    const uint64_t to_end = capacity - tail_index;
    uint64_t padding = 0;
    uint64_t write_index = tail_index;
    if (required > to_end) {
        /* The record goes at index 0, after a padding record over [tail_index, end). Free
         * space is [tail_index, end) + [0, head_index) here (the unread bytes cannot wrap,
         * or the check above would have failed), so index 0 needs head_index >= required. */
        uint64_t head_index = head & ring->mask;
        if (required > head_index) {
            if (!load_head(ring, tail, &head))
                return GR_RING_INVALID;
            head_index = head & ring->mask;
            if (required > head_index)
                return GR_RING_FULL;
            gr_store_relaxed(&header->head_cache_position, head);
        }
        padding = to_end;
        write_index = 0;
        gr_store_relaxed(record_type_word(data, tail_index), (int32_t)GR_RING_PADDING_TYPE);
        /* Publishes the padding record (its type) to the consumer's acquire of the length. */
        gr_store_release(record_length_word(data, tail_index), (int32_t)padding);
    }

    gr_store_relaxed(record_type_word(data, write_index), type);
    /* In progress: the consumer's acquire sees <= 0 and stops here. Nothing to publish
     * yet, so relaxed; gr_ring_commit's release publishes the record. */
    gr_store_relaxed(record_length_word(data, write_index), -(int32_t)record_length);
    /* Publishes the claimed extent to anyone measuring the ring (gr_ring_free_bytes). The
     * consumer does not read tail: readiness is the length word. */
    gr_store_release(&header->tail_position, tail + padding + required);

    *payload = data + write_index + GR_RING_RECORD_HEADER_LENGTH;
    return GR_RING_OK;
}

/* The length word of the record whose payload is `payload`, or NULL if payload is not a
 * record's payload in this ring. */
static inline int32_t *claimed_length_word(gr_ring_t *ring, uint8_t *payload)
{
    if (payload < ring->data + GR_RING_RECORD_HEADER_LENGTH || payload > ring->data + ring->capacity
        || ((uintptr_t)(payload - ring->data) & (GR_RING_RECORD_ALIGNMENT - 1)) != 0)
        return NULL;
    return (int32_t *)(void *)(payload - GR_RING_RECORD_HEADER_LENGTH);
}

void gr_ring_commit(gr_ring_t *ring, uint8_t *payload)
{
    int32_t *length_word = claimed_length_word(ring, payload);
    if (length_word == NULL)
        return;
    const int32_t length = gr_load_relaxed(length_word);   /* our own negative length */
    if (length >= 0)
        return;   /* not an open claim (double commit): nothing to publish */
    /* Publishes the record to the consumer: its acquire load of a positive length makes
     * the type and every payload byte written before this store visible. */
    gr_store_release(length_word, -length);
}

void gr_ring_abort(gr_ring_t *ring, uint8_t *payload)
{
    int32_t *length_word = claimed_length_word(ring, payload);
    if (length_word == NULL)
        return;
    const int32_t length = gr_load_relaxed(length_word);
    if (length >= 0)
        return;
    gr_store_relaxed(length_word + 1, (int32_t)GR_RING_PADDING_TYPE);
    /* Publishes the record as padding (its new type) to the consumer, which skips it. */
    gr_store_release(length_word, -length);
}

gr_ring_status_t gr_ring_write(gr_ring_t *ring, int32_t type, const void *payload, size_t length)
{
    uint8_t *destination;
    const gr_ring_status_t status = gr_ring_claim(ring, type, length, &destination);
    if (status != GR_RING_OK)
        return status;
    if (length > 0)
        memcpy(destination, payload, length);
    gr_ring_commit(ring, destination);
    return GR_RING_OK;
}

int gr_ring_check_head(gr_ring_t *ring)
{
    if (ring->corrupt)
        return 0;
    uint64_t head;
    return load_head(ring, gr_load_relaxed(&ring->header->tail_position), &head);
}

size_t gr_ring_free_bytes(const gr_ring_t *ring)
{
    /* Head first: it only grows, so a head read before tail can never exceed that tail.
     * Acquire pairs with the consumer's release (a caller may act on the answer). */
    const uint64_t head = gr_load_acquire(&ring->header->head_position);
    const uint64_t tail = gr_load_acquire(&ring->header->tail_position);
    const uint64_t used = tail - head;
    return used > ring->capacity ? 0 : (size_t)(ring->capacity - used);
}

/* ---- consumer ---- */

size_t gr_ring_read(gr_ring_t *ring, gr_ring_handler_t handler, void *context, size_t message_limit)
{
    if (ring->corrupt)
        return 0;
    gr_ring_header_t *header = ring->header;
    uint8_t *data = ring->data;
    const uint64_t capacity = ring->capacity;
    const uint64_t head = gr_load_relaxed(&header->head_position);   /* ours alone */
    uint64_t bytes = 0;
    size_t count = 0;

    /* At most one lap per call: head is not released until the end, so the producer
     * cannot have published more than capacity bytes past it. */
    while (bytes < capacity) {
        const uint64_t index = (head + bytes) & ring->mask;
        /* Pairs with the producer's release in gr_ring_commit / gr_ring_abort / the wrap
         * padding: a positive length makes its type and payload visible to us. */
        const int32_t length = gr_load_acquire(record_length_word(data, index));
        if (length <= 0)
            break;   /* 0: nothing written yet; < 0: claimed, still being filled */
        const uint64_t aligned = GR_ALIGN8((uint64_t)length);
        if (length < GR_RING_RECORD_HEADER_LENGTH || aligned > capacity - index) {
            ring->corrupt = 1;   /* a record that cannot be: do not follow it */
            break;
        }
        const int32_t type = gr_load_relaxed(record_type_word(data, index));
        if (type == GR_RING_PADDING_TYPE) {
            bytes += aligned;
            continue;
        }
        const uint64_t payload_length = (uint64_t)length - GR_RING_RECORD_HEADER_LENGTH;
        if (type <= 0 || payload_length > ring->max_message_length) {
            ring->corrupt = 1;
            break;
        }
        const int verdict = handler(context, type, data + index + GR_RING_RECORD_HEADER_LENGTH,
                                    (size_t)payload_length);
        if (verdict < 0)
            break;   /* not consumed: it stays at head for the next call */
        bytes += aligned;
        count++;
        if (verdict > 0 || count == message_limit)
            break;
    }

    if (bytes > 0) {
        /* Zero what we consumed (at most one wrap: records never straddle the end), so
         * these indices read as length 0 until the producer claims them again. */
        const uint64_t head_index = head & ring->mask;
        const uint64_t first = bytes < capacity - head_index ? bytes : capacity - head_index;
        memset(data + head_index, 0, (size_t)first);
        if (bytes > first)
            memset(data, 0, (size_t)(bytes - first));
        /* Publishes the freed, zeroed bytes to the producer (its acquire of head in
         * gr_ring_claim): once per batch, not per record. */
        gr_store_release(&header->head_position, head + bytes);
    }
    return count;
}

int gr_ring_is_empty(const gr_ring_t *ring)
{
    if (ring->corrupt)
        return 0;   /* let a waiter return and find out */
    uint8_t *data = ring->data;
    const uint64_t capacity = ring->capacity;
    /* Acquire: callable from either side; the consumer could read it relaxed. */
    const uint64_t head = gr_load_acquire(&ring->header->head_position);
    uint64_t bytes = 0;
    while (bytes < capacity) {   /* skip published padding: it is nothing to read */
        const uint64_t index = (head + bytes) & ring->mask;
        /* Pairs with the producer's release of a positive length (as in gr_ring_read). In
         * the sleeper protocol this is the load after the consumer's full fence. */
        const int32_t length = gr_load_acquire(record_length_word(data, index));
        if (length <= 0)
            return 1;
        if (gr_load_relaxed(record_type_word(data, index)) != GR_RING_PADDING_TYPE)
            return 0;
        const uint64_t aligned = GR_ALIGN8((uint64_t)length);
        if (length < GR_RING_RECORD_HEADER_LENGTH || aligned > capacity - index)
            return 0;   /* impossible record: gr_ring_read will say so */
        bytes += aligned;
    }
    return 1;
}

/* ---- waiting ---- */

uint32_t gr_ring_prepare_sleep(gr_ring_t *ring)
{
    gr_ring_header_t *header = ring->header;
    /* Read the futex word BEFORE raising the flag (the acquire keeps the flag store after
     * it): a producer that sees our flag bumps the word afterwards, so FUTEX_WAIT on this
     * value cannot sleep through that wake. */
    const uint32_t seq = gr_load_acquire(&header->futex_seq);
    gr_store_relaxed(&header->consumer_sleeping, 1u);
    /* Full fence: our flag store is globally visible before our re-check loads the record
     * at head. Pairs with the fence in gr_ring_producer_should_wake (record store, fence,
     * flag load): either we see the producer's record or the producer sees our flag. */
    gr_fence();
    return seq;
}

int gr_ring_still_empty_after_prepare(gr_ring_t *ring)
{
    return gr_ring_is_empty(ring);
}

void gr_ring_cancel_sleep(gr_ring_t *ring)
{
    /* Relaxed: lowering the flag only saves the producer a wake; anyone who sleeps again
     * goes back through gr_ring_prepare_sleep's fence and re-check. */
    gr_store_relaxed(&ring->header->consumer_sleeping, 0u);
}

gr_ring_status_t gr_ring_futex_wait(gr_ring_t *ring, uint32_t seq, int64_t timeout_ns)
{
    struct timespec timeout;
    struct timespec *timeout_pointer = NULL;
    if (timeout_ns >= 0) {
        timeout.tv_sec = (time_t)(timeout_ns / 1000000000);
        timeout.tv_nsec = (long)(timeout_ns % 1000000000);
        timeout_pointer = &timeout;
    }
    ring->sleep_count++;
    /* FUTEX_WAIT, not the _PRIVATE variant: the word lives in memory shared between
     * processes, and the kernel must key the wait on the page, not our address space.
     * The kernel compares the word with seq atomically with queueing us. */
    const long result = syscall(SYS_futex, &ring->header->futex_seq, FUTEX_WAIT, seq,
                                timeout_pointer, NULL, 0);
    if (result == 0)
        return GR_RING_OK;
    if (errno == ETIMEDOUT)
        return GR_RING_TIMEOUT;
    return GR_RING_OK;   /* EAGAIN: the word had changed, a wake is done; EINTR: re-check */
}

int gr_ring_producer_should_wake(gr_ring_t *ring)
{
    gr_ring_header_t *header = ring->header;
    /* Full fence: our committed length stores (releases, which x86 may still hold in the
     * store buffer) are globally visible before we load the sleeper flag. Pairs with the
     * fence in gr_ring_prepare_sleep. */
    gr_fence();
    if (gr_load_relaxed(&header->consumer_sleeping) == 0)
        return 0;
    /* Take the flag: if the consumer cleared it meanwhile it is awake and re-checking. */
    if (__atomic_exchange_n(&header->consumer_sleeping, 0u, __ATOMIC_ACQ_REL) == 0)
        return 0;
    /* Change the futex word (release: after our records), so a consumer between its
     * prepare and FUTEX_WAIT fails the kernel's compare and does not sleep. */
    __atomic_fetch_add(&header->futex_seq, 1u, __ATOMIC_RELEASE);
    ring->wake_count++;
    return 1;
}

void gr_ring_futex_wake(gr_ring_t *ring)
{
    /* Process-shared FUTEX_WAKE (see gr_ring_futex_wait). One consumer, but waking all
     * costs the same and survives a second waiter (a debugger, a monitor). */
    syscall(SYS_futex, &ring->header->futex_seq, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

gr_ring_status_t gr_ring_wait_readable(gr_ring_t *ring, uint32_t spin_iterations, int64_t timeout_ns)
{
    if (ring->corrupt)
        return GR_RING_INVALID;
    if (!gr_ring_is_empty(ring))
        return GR_RING_OK;
    for (uint32_t i = 0; i < spin_iterations; i++) {
        gr_cpu_relax();
        if (!gr_ring_is_empty(ring))
            return GR_RING_OK;
    }
    const uint64_t deadline = timeout_ns >= 0 ? gr_ring_now_ns() + (uint64_t)timeout_ns : 0;
    for (;;) {
        int64_t remaining = -1;
        if (timeout_ns >= 0) {
            const uint64_t now = gr_ring_now_ns();
            if (now >= deadline)
                return GR_RING_TIMEOUT;
            remaining = (int64_t)(deadline - now);
        }
        const uint32_t seq = gr_ring_prepare_sleep(ring);
        if (!gr_ring_still_empty_after_prepare(ring)) {
            gr_ring_cancel_sleep(ring);
            return GR_RING_OK;
        }
        gr_ring_futex_wait(ring, seq, remaining);
        gr_ring_cancel_sleep(ring);
        if (!gr_ring_is_empty(ring))
            return GR_RING_OK;
    }
}

/* ---- time ---- */

uint64_t gr_ring_now_ns(void)
{
    return (uint64_t)gr_monotonic_ns();
}
