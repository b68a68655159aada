/* hyperloglog.h — the HyperLogLog engine: Redis's exact HLL representation inside a string value,
 * so that a value made by redis-server (read with GET, DUMP or an RDB) counts and merges the same
 * here, and the reverse. The commands are cmd_hyperloglog.c.
 *
 * Layout (a string value; every multi-byte field little-endian):
 *
 *   +------+----------+-----------+--------------------+-------------------------------------+
 *   | HYLL | encoding | 3 unused  | cached cardinality | registers                           |
 *   | 4 B  | 1 B      | 3 B (0)   | 8 B, bit 63 of it: | dense: 16384 x 6 bits = 12288 B     |
 *   |      | 0 dense  |           | "stale, recount"   | sparse: opcodes, 16384 registers in |
 *   |      | 1 sparse |           |                    | all (below)                         |
 *   +------+----------+-----------+--------------------+-------------------------------------+
 *    0      4          5           8                    16
 *
 * An element's register: MurmurHash64A(element, seed 0xadc83b19); the low 14 bits pick the
 * register, and the register keeps the largest (trailing zero bits of the other 50, plus 1) seen.
 * Dense register i is the 6 bits starting at bit 6*i of the register bytes, low bits first
 * (a register may straddle two bytes).
 *
 * Sparse opcodes run over the registers in order:
 *   00xxxxxx           ZERO:  xxxxxx+1 registers (1..64) hold 0
 *   01xxxxxx yyyyyyyy  XZERO: (xxxxxx<<8 | yyyyyyyy)+1 registers (1..16384) hold 0
 *   1vvvvvxx           VAL:   xx+1 registers (1..4) hold vvvvv+1 (1..32)
 * A new HLL is sparse: the header and one XZERO of 16384 (18 bytes). A register above 32, or a
 * sparse form longer than hll-sparse-max-bytes, turns the value dense (12304 bytes) for good.
 * Updates rewrite the opcodes as Redis's hllSparseSet does, byte for byte, so both servers give
 * the same string for the same adds.
 */
#ifndef GR_HYPERLOGLOG_H
#define GR_HYPERLOGLOG_H

#include <stddef.h>
#include <stdint.h>

#include "engines/string_value.h"

#define GR_HLL_REGISTERS 16384
#define GR_HLL_HEADER_BYTES 16
#define GR_HLL_DENSE_BYTES (GR_HLL_HEADER_BYTES + GR_HLL_REGISTERS * 6 / 8)
#define GR_HLL_DENSE 0
#define GR_HLL_SPARSE 1

/* Results of the changing functions. */
#define GR_HLL_CORRUPT (-1)   /* the sparse opcodes do not describe 16384 registers */
#define GR_HLL_NO_MEMORY (-2)

/* Redis's isHLLObjectOrReply, after the type check: 1 when bytes are a HyperLogLog (magic,
 * a known encoding, a dense one exactly GR_HLL_DENSE_BYTES long), else 0. */
int gr_hll_is_valid(const uint8_t *data, size_t length);
/* A new empty HLL (sparse), or NULL on OOM. */
gr_string_t *gr_hll_new(void);
int gr_hll_encoding(const gr_string_t *hll);

/* Adds an element: 1 when a register grew, 0 when none did, or GR_HLL_CORRUPT / GR_HLL_NO_MEMORY.
 * *hll may move. sparse_max_bytes is hll-sparse-max-bytes. The cached count is not touched. */
int gr_hll_add(gr_string_t **hll, const uint8_t *element, size_t length, size_t sparse_max_bytes);
/* Raises register index to count if below it, in either encoding (Redis's hllSparseSet /
 * hllDenseSet): 1 raised, 0 not, or an error as above. */
int gr_hll_raise_register(gr_string_t **hll, uint32_t index, uint8_t count, size_t sparse_max_bytes);
/* Sparse to dense: 1 converted, 0 already dense, or an error as above. */
int gr_hll_to_dense(gr_string_t **hll);

/* max[i] = max(max[i], register i of the HLL): 0, or GR_HLL_CORRUPT. */
int gr_hll_merge_into(uint8_t max[GR_HLL_REGISTERS], const gr_string_t *hll);
/* The estimated cardinality (Redis 5+'s estimator): of an HLL (*corrupt set to 1 when its sparse
 * form is broken), or of plain one-byte registers (PFCOUNT of several keys). */
uint64_t gr_hll_count(const gr_string_t *hll, int *corrupt);
uint64_t gr_hll_count_registers(const uint8_t registers[GR_HLL_REGISTERS]);

/* The cached cardinality: 1 with *count when valid, else 0; set stores and validates it;
 * invalidate marks it stale (after any register change). */
int gr_hll_cached_count(const gr_string_t *hll, uint64_t *count);
void gr_hll_set_cached_count(gr_string_t *hll, uint64_t count);
void gr_hll_invalidate_cache(gr_string_t *hll);

/* Register index of a dense HLL's registers. */
uint8_t gr_hll_dense_register(const gr_string_t *hll, uint32_t index);
/* PFDEBUG DECODE's text of a sparse HLL ("z:N", "Z:N", "v:value,len" separated by spaces) into
 * out (the length it needs is returned; out may be NULL to ask). */
size_t gr_hll_decode_sparse(const gr_string_t *hll, char *out, size_t size);
/* The hash Redis uses (MurmurHash64A, 64-bit, little-endian reads) — exposed for tests. */
uint64_t gr_hll_murmur64a(const void *key, size_t length, uint64_t seed);
/* PFSELFTEST: 0 when the engine passes its checks, else -1 with a message in error. */
int gr_hll_selftest(char *error, size_t error_size);

#endif
