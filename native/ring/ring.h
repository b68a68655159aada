/* ring.h — the shared-memory SPSC ring that carries goblin-ring's fast path.
 *
 * One ring is one shared segment with exactly one producer process and one consumer
 * process, in the style of Agrona's OneToOneRingBuffer: 8-aligned records with a
 * {length, type} header, a padding record at the wrap, a length written negative while a
 * record is being filled and published positive with a release store, and head, tail,
 * cached head and sleeper flag each on their own 128-byte line. A session uses
 * two: the request ring (client produces, server consumes) and the reply ring (the other
 * way). The implementation is ring.c; its tests are native/tests/test_ring.c and its
 * microbenchmark native/tests/bench_ring.c. The ring knows nothing of SBE beyond carrying
 * the schema id and version in its descriptor: a record's type is the SBE template id.
 *
 * Segment layout (offsets in bytes; GR_RING_LINE = 128):
 *
 *     0     line 0  descriptor   magic, layout_version, sbe_schema_id, sbe_schema_version,
 *                                capacity, max_message_length — written once, magic LAST
 *   128     line 1  tail         tail_position            producer writes
 *   256     line 2  head cache   head_cache_position      producer only (its view of head)
 *   384     line 3  head         head_position            consumer writes
 *   512     line 4  sleeping     consumer_sleeping (u32), futex_seq (u32)   both write
 *   640     line 5  invalidation_epoch (u64)                    producer writes
 *                     CLIENT TRACKING over the ring (layout 2): the server bumps it (release)
 *                     when an invalidation could not be written into this reply ring at once
 *                     (ring full, replies staged); the client reads it with the tail and drops
 *                     its whole near-cache when it moved. Zero, unused, on request rings.
 *   768     lines 6-7 reserved (zero), so the data starts 1024-aligned and a later layout
 *                     can add two lines without moving it. (No heartbeats: a session's
 *                     liveness is its control socket, whose EOF each side sees.)
 *  1024     data: `capacity` bytes, capacity a power of two in [4096, 1 GiB]
 *
 * Positions (tail, head) are byte counts since init, never wrapped; index = position & mask.
 *
 * A record, starting at an 8-aligned index:
 *
 *      0              4              8                               length   align8(length)
 *     +--------------+--------------+-------------------------------+ - - - - +
 *     | length (i32) |  type (i32)  | payload: length - 8 bytes     | (pad)   |
 *     +--------------+--------------+-------------------------------+ - - - - +
 *     length = 8 + payload bytes (not aligned); the next record starts at align8(length).
 *     length < 0: claimed, being filled — the consumer stops here.
 *     length = 0: nothing written yet (consumed bytes are zeroed, see gr_ring_read).
 *     length > 0: published; type > 0 is the caller's (SBE template id),
 *                 type = GR_RING_PADDING_TYPE is skipped (the wrap filler, or an abort).
 *
 * A record never straddles the end of the data: if it does not fit before the end, a
 * padding record covers the rest and the record goes at index 0. The largest payload is
 * max_message_length = capacity / 8 (256 KiB for the default 2 MiB).
 *
 * Nothing the peer writes into the segment can make this code read or write outside it:
 * every index is masked, every record the consumer reads is checked against the data's
 * end and max_message_length, and an inconsistent head or record marks the process-local
 * view corrupt (gr_ring_is_corrupt) instead of being followed.
 */
#ifndef GR_RING_H
#define GR_RING_H

#include <stddef.h>
#include <stdint.h>

/* cffi-cdef-begin: everything up to cffi-cdef-end is also read by native/build_ffi.py. */
#define GR_RING_MAGIC 0x474f424c494e5231    /* "GOBLINR1" read as a big-endian uint64 */
#define GR_RING_LAYOUT_VERSION 2
#define GR_RING_LINE 128
#define GR_RING_DATA_OFFSET 1024
#define GR_RING_RECORD_HEADER_LENGTH 8
#define GR_RING_RECORD_ALIGNMENT 8
#define GR_RING_PADDING_TYPE -1          /* bare, not (-1): cffi's cdef takes only a literal */
#define GR_RING_MIN_CAPACITY 4096
#define GR_RING_DEFAULT_CAPACITY 2097152
#define GR_RING_MAX_CAPACITY 1073741824

/* What the hot path can say. */
typedef enum gr_ring_status {
    GR_RING_OK = 0,
    GR_RING_FULL = 1,        /* claim/write: not enough free space now; retry after the consumer reads */
    /* 2 and 4 were EMPTY and PEER_GONE, never returned: gr_ring_read returns a count, and a
     * dead peer is seen on the control socket (GR_CLIENT_PEER_GONE), not by the ring. */
    GR_RING_TOO_LARGE = 3,   /* payload longer than max_message_length: refused, never truncated */
    GR_RING_TIMEOUT = 5,     /* a wait's timeout elapsed */
    GR_RING_INVALID = 6      /* the caller's arguments (type <= 0), or a ring marked corrupt */
} gr_ring_status_t;

/* The shared segment's header: 8 lines of 128 bytes (offsets checked in ring.c). */
typedef struct gr_ring_header {
    /* line 0 (0): descriptor, written by gr_ring_init with magic last, read-only after */
    uint64_t magic;                  /* 0   GR_RING_MAGIC */
    uint32_t layout_version;         /* 8   GR_RING_LAYOUT_VERSION */
    uint16_t sbe_schema_id;          /* 12 */
    uint16_t sbe_schema_version;     /* 14 */
    uint64_t capacity;               /* 16  data bytes, a power of two */
    uint64_t max_message_length;     /* 24  capacity / 8: the largest payload */
    uint8_t pad_descriptor[96];      /* 32 .. 127 */
    /* line 1 (128): producer-owned */
    uint64_t tail_position;          /* 128 end of the last claimed record */
    uint8_t pad_tail[120];
    /* line 2 (256): producer-only */
    uint64_t head_cache_position;    /* 256 the producer's last look at head */
    uint8_t pad_head_cache[120];
    /* line 3 (384): consumer-owned */
    uint64_t head_position;          /* 384 start of the first unconsumed record */
    uint8_t pad_head[120];
    /* line 4 (512): the sleeper protocol, written by both */
    uint32_t consumer_sleeping;      /* 512 1 while the consumer is (about to be) asleep */
    uint32_t futex_seq;              /* 516 the futex word; the producer bumps it to wake */
    uint8_t pad_sleep[120];
    /* line 5 (640): the reply ring's invalidation epoch (CLIENT TRACKING), producer writes */
    uint64_t invalidation_epoch;     /* 640 */
    uint8_t pad_epoch[120];
    /* lines 6-7 (768): reserved, zero */
    uint8_t reserved[256];
} gr_ring_header_t;                  /* sizeof == GR_RING_DATA_OFFSET */

/* A process-local view of one segment. Each process has its own; nothing here is shared. */
typedef struct gr_ring {
    uint8_t *base;                   /* the mapping */
    gr_ring_header_t *header;        /* == base */
    uint8_t *data;                   /* base + GR_RING_DATA_OFFSET */
    uint64_t capacity;               /* copied from the descriptor once it was checked */
    uint64_t mask;                   /* capacity - 1 */
    uint64_t max_message_length;
    uint64_t sleep_count;            /* consumer: futex waits entered by this process */
    uint64_t wake_count;             /* producer: times gr_ring_producer_should_wake returned 1 */
    int corrupt;                     /* set when the peer left an impossible head or record */
} gr_ring_t;

/* Consumer callback, once per record. payload points into the shared segment and is valid
 * only during the call (length bytes, 8-aligned; never NULL, even for length 0).
 * Return 0: consumed, continue; 1: consumed, stop the batch; -1: NOT consumed, stop (the
 * record stays and is handed over again by the next gr_ring_read). */
typedef int (*gr_ring_handler_t)(void *context, int32_t type, const uint8_t *payload, size_t length);

/* Lifecycle */
/* Bytes to map for a ring of `capacity` (GR_RING_DATA_OFFSET + capacity); 0 if capacity
 * is not a power of two in [GR_RING_MIN_CAPACITY, GR_RING_MAX_CAPACITY]. */
size_t gr_ring_segment_size(uint64_t capacity);
/* Creator: zeroes the segment, writes the descriptor (magic last, release) and fills *ring.
 * memory must be 8-aligned (a mapping is). 0, or -1 with a message in error. */
int gr_ring_init(gr_ring_t *ring, void *memory, size_t memory_size, uint64_t capacity,
                 uint16_t schema_id, uint16_t schema_version, char *error, size_t error_size);
/* The same for memory known to read as zero (a new shared-memory segment: ftruncate and
 * fallocate give zero pages): only the header line is written, so no data page is touched
 * (no time spent zeroing, no memory faulted in) until a record is written there. */
int gr_ring_init_fresh(gr_ring_t *ring, void *memory, size_t memory_size, uint64_t capacity,
                       uint16_t schema_id, uint16_t schema_version, char *error, size_t error_size);
/* The other side: checks magic, layout version, schema id and version, capacity and that
 * the segment fits memory_size, then fills *ring. 0, or -1 with a message naming the field
 * and both values. */
int gr_ring_attach(gr_ring_t *ring, void *memory, size_t memory_size,
                   uint16_t schema_id, uint16_t schema_version, char *error, size_t error_size);
const char *gr_ring_status_text(gr_ring_status_t status);
int gr_ring_is_corrupt(const gr_ring_t *ring);

/* Producer (one process, one thread) */
/* Reserve a record of `length` payload bytes; *payload points to them, contiguous.
 * OK, FULL, TOO_LARGE (length > max_message_length), INVALID (type <= 0, or corrupt).
 * Finish every claim with gr_ring_commit or gr_ring_abort; the consumer stops at an
 * unfinished one. */
gr_ring_status_t gr_ring_claim(gr_ring_t *ring, int32_t type, size_t length, uint8_t **payload);
/* Publish a claimed record (release store of its positive length). */
void gr_ring_commit(gr_ring_t *ring, uint8_t *payload);
/* Give a claimed record back: it becomes padding the consumer skips. */
void gr_ring_abort(gr_ring_t *ring, uint8_t *payload);
/* claim + copy + commit. */
gr_ring_status_t gr_ring_write(gr_ring_t *ring, int32_t type, const void *payload, size_t length);
/* Producer: 1 if the consumer's head is one it could hold (head <= tail <= head + capacity);
 * else marks the ring corrupt and returns 0. Claims check this only when the cached head
 * says the ring is full; call it when idle to catch a peer that moved head past tail. */
int gr_ring_check_head(gr_ring_t *ring);
/* capacity - (tail - head): the bytes not holding unconsumed records. A message whose
 * aligned record fits this may still be FULL at the wrap (the padding needs room too). */
size_t gr_ring_free_bytes(const gr_ring_t *ring);

/* Consumer (one process, one thread) */
/* Hand up to message_limit records (0 = no limit) to handler, then zero the consumed bytes
 * and release head once for the whole batch. Returns the records consumed (padding is not
 * counted). Stops at the first unpublished record, a handler's 1 or -1, or a corrupt
 * record (which also sets ring->corrupt). */
size_t gr_ring_read(gr_ring_t *ring, gr_ring_handler_t handler, void *context, size_t message_limit);
/* 1 if no published record (other than padding) waits at head; 0 for a corrupt ring, so
 * that a waiter returns and finds out. Meant for the consumer side. */
int gr_ring_is_empty(const gr_ring_t *ring);

/* Waiting: the consumer sleeps, the producer wakes; no wakeup is lost.
 *   consumer: seq = prepare_sleep (reads seq, sets the flag, full fence);
 *             if (!still_empty_after_prepare) cancel_sleep, go read;
 *             else futex_wait(seq, timeout) (or epoll on an eventfd), then cancel_sleep.
 *   producer: commit ...; if (producer_should_wake) futex_wake (or write the eventfd).
 * gr_ring_wait_readable wraps the consumer half for a futex sleeper. */
uint32_t gr_ring_prepare_sleep(gr_ring_t *ring);
int gr_ring_still_empty_after_prepare(gr_ring_t *ring);
void gr_ring_cancel_sleep(gr_ring_t *ring);
/* FUTEX_WAIT (process-shared) on futex_seq while it equals seq; timeout_ns < 0 = no
 * timeout. OK when woken, when seq had already changed, or on a signal; TIMEOUT. */
gr_ring_status_t gr_ring_futex_wait(gr_ring_t *ring, uint32_t seq, int64_t timeout_ns);
/* After a batch of commits: full fence, read the flag; if set, clear it, bump futex_seq
 * and return 1 (the caller then wakes the consumer); else 0. */
int gr_ring_producer_should_wake(gr_ring_t *ring);
/* FUTEX_WAKE (process-shared) on futex_seq. */
void gr_ring_futex_wake(gr_ring_t *ring);
/* Spin spin_iterations times (pause), then sleep on the futex until readable. OK when a
 * record is readable, TIMEOUT after timeout_ns (< 0 = none), INVALID if the ring is corrupt. */
gr_ring_status_t gr_ring_wait_readable(gr_ring_t *ring, uint32_t spin_iterations, int64_t timeout_ns);

/* CLOCK_MONOTONIC nanoseconds, for wait deadlines */
uint64_t gr_ring_now_ns(void);
/* cffi-cdef-end */

#endif
