/* value_type.h — the value-type registry: one row per type of value a key can hold.
 *
 * A keyspace entry stores its value as (type id, pointer); everything the server must know
 * about a type without knowing the type is in its row: the name TYPE answers and SCAN TYPE
 * filters by, how to free a value, how many bytes it holds (MEMORY USAGE), its encoding name
 * (OBJECT ENCODING), how to copy one (COPY), the allocator category its engine counts under (GOBLIN.MEMORY, INFO
 * memory) and the snapshot hooks (save and load in core/snapshot_io.h's encoding, for DUMP/RESTORE
 * and whole snapshots, persist/snapshot.c) and the digest hook (DEBUG DIGEST, DIGEST-VALUE). db.c, cmd_keys.c and cmd_server.c read rows and never name a type.
 *
 * Adding a type (hash, zset, array) is: its engine folder (engines/<type>/, allocating under
 * its own gr_mem_category_t), its command rows and handlers, one row in value_type.c's
 * built-in table, and tests. native/tests/test_value_types.c shows it with a small type
 * kept out of the product, registered at run time with gr_value_type_register.
 */
#ifndef GR_VALUE_TYPE_H
#define GR_VALUE_TYPE_H

#include <stddef.h>
#include <stdint.h>

#include "core/alloc.h"
#include "core/snapshot_io.h"

/* Type ids stored in keyspace entries (gr_ks_entry_t.type); 0 is no type. */
enum { GR_TYPE_STRING = 1, GR_TYPE_LIST = 2, GR_TYPE_SET = 3 };
enum { GR_TYPE_HASH = 4 };   /* engines/hash/ */
enum { GR_TYPE_ZSET = 5 };   /* engines/zset/ */
enum { GR_TYPE_ARRAY = 6 };  /* engines/array/ */
enum { GR_TYPE_STREAM = 7 }; /* engines/stream/ */
#define GR_VALUE_TYPE_SLOTS 32   /* ids 1 .. GR_VALUE_TYPE_SLOTS - 1 */

/* DUMP's payload (cmd_keys.c: DUMP/RESTORE; persist/aof.c's rewrite writes RESTOREs): core/snapshot_io.h's
 * sealed envelope around [type id u8][the row's save body], its version 'G' in the high byte (far
 * above any RDB version, so a Redis server refuses our payloads instead of misreading them) and the
 * payload format in the low byte. */
#define GR_DUMP_VERSION_TAG 0x4700u
#define GR_DUMP_FORMAT 1u
#define GR_DUMP_VERSION (GR_DUMP_VERSION_TAG | GR_DUMP_FORMAT)

struct gr_server;

typedef struct gr_value_type {
    uint8_t id;                          /* GR_TYPE_* */
    const char *name;                    /* TYPE, SCAN TYPE, GOBLIN.MEMORY's row: "string", "list" */
    gr_mem_category_t memory;            /* what its engine allocates under */
    void (*free)(void *value);
    size_t (*allocated_bytes)(const void *value);   /* everything the value holds, the struct included */
    const char *(*encoding)(const void *value);     /* OBJECT ENCODING: "listpack", "embstr", ... */
    void *(*duplicate)(const struct gr_server *db, const void *value);   /* COPY: an equal value; NULL on OOM */
    /* Snapshots (core/snapshot_io.h). save: the value's bytes; 0, or -1 when the writer ran
     * out of memory. load: reads exactly what save wrote and builds an equal value with the
     * db's thresholds (encodings as a fresh value of that size gets); NULL with the reader's
     * error set (or, when the bytes were fine, none set: out of memory), having freed what it
     * built. A type without them cannot be DUMPed (DUMP and RESTORE refuse it).
     * digest: DEBUG DIGEST's and DIGEST-VALUE's step for a value: out holds the key's digest so
     * far (zeros, or the key name mixed in); mix in the type's Redis number, then the contents, as core/digest.h says (Redis's
     * xorObjectDigest), so equal values digest equal whatever their encoding. A type Redis
     * lacks picks a number of its own (>= 16). */
    int (*save)(const void *value, gr_snapshot_writer_t *out);
    void *(*load)(const struct gr_server *db, gr_snapshot_reader_t *in);
    void (*digest)(const void *value, uint8_t out[20]);
    /* Active expiry of a value's parts (a hash's fields), NULL for types without: remove the
     * parts due at now_ms, return how many, and set *emptied when nothing is left (the cron then
     * deletes the key). has_expiring_parts: whether any value of the type holds a part with an
     * expiry now; the cron walks the keyspace for them only then. */
    size_t (*expire_parts)(void *value, int64_t now_ms, int *emptied);
    int (*has_expiring_parts)(void);
} gr_value_type_t;

/* The row of a type id, or NULL. */
const gr_value_type_t *gr_value_type(uint8_t id);
/* The row named (case-insensitive), or NULL: SCAN's TYPE filter. */
const gr_value_type_t *gr_value_type_named(const uint8_t *name, size_t length);
/* Every row in id order: index 0 .. until NULL (GOBLIN.MEMORY, INFO memory). */
const gr_value_type_t *gr_value_type_at(size_t index);
/* Add a row (the built-in rows are in place before the first lookup): 0, or -1 when the id or
 * memory category is out of range or taken, or the name is taken. The row must outlive its use. */
int gr_value_type_register(const gr_value_type_t *type);

/* The keyspace's free callback (gr_ks_new): the row's free. */
void gr_free_value(uint8_t type, void *value, void *context);
/* The row's allocated_bytes; 0 for an unknown id. */
size_t gr_value_allocated_bytes(uint8_t type, const void *value);
/* TYPE's answer for an entry's type id: the row's name, or "none". */
const char *gr_value_type_name(uint8_t type);
/* OBJECT ENCODING's answer, or "unknown". */
const char *gr_value_encoding(uint8_t type, const void *value);

#endif
