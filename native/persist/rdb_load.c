/* rdb_load.c — read a Redis (or Valkey) RDB file into goblin's keyspace (rdb_format.h).
 *
 * The file is mapped and its CRC-64 checked first (0 in the trailer: the writer computed none,
 * as rdbchecksum no). Then one pass: opcodes (AUX, SELECTDB, RESIZEDB, EXPIRETIME(_MS), IDLE,
 * FREQ, FUNCTION2, MODULE_AUX skipped, SLOT_INFO skipped) and keys. A value's strings and
 * packed containers (listpack, ziplist, intset, zipmap) are decoded into an element vector
 * (`els_t`: pointers into the mapping for plain strings, an arena for integers turned to text
 * and for LZF-expanded bytes), and the value is built with the engines' bulk calls and the
 * server's thresholds, as a snapshot load builds it (the encodings are goblin's: a listpack
 * set of 10 members is a compact set here too). Every read is bounded: a bad file gives an
 * error naming its byte offset, never a crash, and leaves every database empty.
 *
 * Not loaded: a module's value (refused: goblin has no modules); Redis 7.0's pre-release
 * FUNCTION opcode. LRU/LFU hints (IDLE, FREQ) set a key's idle time or counter under an LRU or
 * LFU maxmemory-policy, as Redis applies them; otherwise access times start now.
 *
 * gr_rdb_restore_value is RESTORE's reader of a Redis DUMP payload: the same load_value over
 * the payload's body in memory (type byte, value, nothing after it).
 */
#include "persist/rdb_format.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "core/number.h"
#include "core/rdb_string.h"
#include "core/snapshot_io.h"
#include "engines/hash/hash.h"
#include "engines/keyspace.h"
#include "engines/list/list.h"
#include "engines/set/set.h"
#include "engines/stream/stream.h"
#include "engines/string_value.h"
#include "engines/zset/zset.h"
#include "exec/evict.h"
#include "exec/value_type.h"
#include "persist/snapshot.h"

/* ---- the cursor and its errors ---- */

typedef struct in {
    const uint8_t *data;
    size_t length, at;
    int version, valkey;
    int failed;
    size_t fail_at;
    char message[300];
} in_t;

static int fail(in_t *in, size_t at, const char *format, ...) __attribute__((format(printf, 3, 4)));
static int fail(in_t *in, size_t at, const char *format, ...) {
    if (in->failed) return -1;
    in->failed = 1;
    in->fail_at = at;
    va_list args;
    va_start(args, format);
    vsnprintf(in->message, sizeof in->message, format, args);
    va_end(args);
    return -1;
}
static int truncated(in_t *in, const char *what) {
    return fail(in, in->length, "truncated: the file ends while reading %s", what);
}

static int read_u8(in_t *in, uint8_t *out, const char *what) {
    if (in->at >= in->length) return truncated(in, what);
    *out = in->data[in->at++];
    return 0;
}
static int read_le(in_t *in, int bytes, uint64_t *out, const char *what) {
    if (in->length - in->at < (size_t)bytes) return truncated(in, what);
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--) v = (v << 8) | in->data[in->at + (size_t)i];
    in->at += (size_t)bytes;
    *out = v;
    return 0;
}
static int read_len(in_t *in, uint64_t *out, const char *what) {
    size_t at = in->at;
    gr_rdb_reader_t r = {in->data, in->length, in->at};
    int encoded;
    if (gr_rdb_read_length(&r, out, &encoded) != 0) {
        if (r.at >= in->length || at + 1 >= in->length) return truncated(in, what);
        return fail(in, at, "bad length encoding in %s", what);
    }
    if (encoded) return fail(in, at, "an encoded string where %s's length should be", what);
    in->at = r.at;
    return 0;
}

/* ---- element vectors ---- */

typedef struct el {
    const uint8_t *p;   /* NULL: in the arena at off */
    size_t off, n;
    int64_t iv;
    uint8_t is_int;
} el_t;

typedef struct els {
    el_t *v;
    size_t count, cap;
    uint8_t *arena;
    size_t used, acap;
} els_t;

static void els_reset(els_t *e) { e->count = 0, e->used = 0; }
static void els_free(els_t *e) {
    free(e->v);
    free(e->arena);
    memset(e, 0, sizeof *e);
}
static el_t *els_add(els_t *e) {
    if (e->count == e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 256;
        el_t *grown = realloc(e->v, cap * sizeof *grown);
        if (!grown) return NULL;
        e->v = grown, e->cap = cap;
    }
    el_t *x = &e->v[e->count++];
    memset(x, 0, sizeof *x);
    return x;
}
static uint8_t *els_space(els_t *e, size_t n, size_t *off) {
    if (e->acap - e->used < n) {
        size_t cap = (e->used + n) * 2;
        if (cap < 4096) cap = 4096;
        uint8_t *grown = realloc(e->arena, cap);
        if (!grown) return NULL;
        e->arena = grown, e->acap = cap;
    }
    *off = e->used;
    e->used += n;
    return e->arena + *off;
}
static inline const uint8_t *el_data(const els_t *e, const el_t *x) { return x->p ? x->p : e->arena + x->off; }
static int els_push(els_t *e, const uint8_t *p, size_t n) {
    el_t *x = els_add(e);
    if (!x) return -1;
    x->p = p, x->n = n;
    return 0;
}
static int els_push_int(els_t *e, int64_t v) {
    el_t *x = els_add(e);
    if (!x) return -1;
    uint8_t *space = els_space(e, 21, &x->off);   /* snprintf was most of a stream's load */
    if (!space) return -1;
    const size_t n = gr_int64_to_text(v, (char *)space);
    e->used -= 21 - n;
    x->n = n, x->iv = v, x->is_int = 1;
    return 0;
}
/* An element's integer value (an integer entry, or text that is one). */
static int el_int(const els_t *e, const el_t *x, int64_t *out) {
    if (x->is_int) {
        *out = x->iv;
        return 0;
    }
    const uint8_t *d = el_data(e, x);
    if (x->n == 0 || x->n > 20) return -1;
    char text[24];
    memcpy(text, d, x->n);
    text[x->n] = 0;
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || *end) return -1;
    *out = v;
    return 0;
}

static const char *strings_read = "a string";

/* One RDB string appended to e (raw: points into the file; integer: its text; LZF: expanded). */
static int read_string(in_t *in, els_t *e, const char *what) {
    size_t at = in->at;
    gr_rdb_reader_t r = {in->data, in->length, in->at};
    uint64_t length;
    int encoded;
    if (gr_rdb_read_length(&r, &length, &encoded) != 0) return truncated(in, what ? what : strings_read);
    if (!encoded) {
        if (length > in->length - r.at) return truncated(in, what ? what : strings_read);
        in->at = r.at + length;
        return els_push(e, in->data + r.at, (size_t)length) == 0 ? 0 : fail(in, at, "out of memory");
    }
    if (length <= 2) {
        int bytes = 1 << length;
        if (in->length - r.at < (size_t)bytes) return truncated(in, what ? what : strings_read);
        uint64_t raw = 0;
        for (int i = bytes - 1; i >= 0; i--) raw = (raw << 8) | in->data[r.at + (size_t)i];
        int64_t v = bytes == 1 ? (int8_t)raw : bytes == 2 ? (int16_t)raw : (int32_t)raw;
        in->at = r.at + (size_t)bytes;
        return els_push_int(e, v) == 0 ? 0 : fail(in, at, "out of memory");
    }
    if (length != 3) return fail(in, at, "unknown string encoding %u", (unsigned)length);
    uint64_t compressed, plain;
    int enc1, enc2;
    if (gr_rdb_read_length(&r, &compressed, &enc1) != 0 || gr_rdb_read_length(&r, &plain, &enc2) != 0)
        return truncated(in, "an LZF string's lengths");
    if (enc1 || enc2 || plain > ((uint64_t)1 << 32) || plain == 0)
        return fail(in, at, "bad LZF string lengths");
    if (compressed > in->length - r.at) return truncated(in, "an LZF string");
    el_t *x = els_add(e);
    if (!x) return fail(in, at, "out of memory");
    uint8_t *space = els_space(e, (size_t)plain, &x->off);
    if (!space) return fail(in, at, "out of memory");
    x->n = (size_t)plain;
    if (gr_lzf_expand(in->data + r.at, (size_t)compressed, space, (size_t)plain) != 0)
        return fail(in, at, "LZF string does not decompress to its stated length");
    in->at = r.at + compressed;
    return 0;
}

/* ---- packed containers: each appends its entries to out ---- */

static uint64_t le(const uint8_t *p, int bytes) {
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

/* A listpack: total bytes u32, count u16, entries (encoding, data, back-length), 0xFF. */
static int parse_listpack(in_t *in, size_t at, const uint8_t *p, size_t n, els_t *out) {
    if (n < 7 || le(p, 4) != n || p[n - 1] != 0xFF) return fail(in, at, "listpack header or end is bad");
    size_t pos = 6;
    while (pos < n - 1) {
        uint8_t b = p[pos];
        size_t header, data_length = 0;
        int64_t v = 0;
        int is_int = 1;
        size_t left = n - 1 - pos;
        if ((b & 0x80) == 0) header = 1, v = b;
        else if ((b & 0xC0) == 0x80) header = 1, is_int = 0, data_length = b & 0x3F;
        else if ((b & 0xE0) == 0xC0) {
            if (left < 2) goto bad;
            header = 2;
            v = ((int64_t)(b & 0x1F) << 8) | p[pos + 1];
            if (v >= 1 << 12) v -= 1 << 13;
        } else if ((b & 0xF0) == 0xE0) {
            if (left < 2) goto bad;
            header = 2, is_int = 0, data_length = ((size_t)(b & 0x0F) << 8) | p[pos + 1];
        } else if (b == 0xF0) {
            if (left < 5) goto bad;
            header = 5, is_int = 0, data_length = (size_t)le(p + pos + 1, 4);
        } else if (b >= 0xF1 && b <= 0xF4) {
            int bytes = b == 0xF1 ? 2 : b == 0xF2 ? 3 : b == 0xF3 ? 4 : 8;
            if (left < (size_t)bytes + 1) goto bad;
            uint64_t raw = le(p + pos + 1, bytes);
            header = 1 + (size_t)bytes;
            if (bytes == 2) v = (int16_t)raw;
            else if (bytes == 3) v = (int32_t)(raw << 8) >> 8;
            else if (bytes == 4) v = (int32_t)raw;
            else v = (int64_t)raw;
        } else goto bad;
        size_t entry = header + data_length;
        if (entry > left) goto bad;
        size_t back = entry <= 127 ? 1 : entry < 16383 ? 2 : entry < 2097151 ? 3 : entry < 268435455 ? 4 : 5;
        if (entry + back > left) goto bad;
        if (is_int ? els_push_int(out, v) : els_push(out, p + pos + header, data_length)) return fail(in, at, "out of memory");
        pos += entry + back;
    }
    if (pos != n - 1) goto bad;
    return 0;
bad:
    return fail(in, at, "listpack entry at byte %zu of the listpack is bad", pos);
}

/* A ziplist: bytes u32, tail u32, count u16, entries (previous length, encoding, data), 0xFF. */
static int parse_ziplist(in_t *in, size_t at, const uint8_t *p, size_t n, els_t *out) {
    if (n < 11 || le(p, 4) != n || p[n - 1] != 0xFF) return fail(in, at, "ziplist header or end is bad");
    size_t pos = 10;
    while (pos < n - 1) {
        size_t left = n - 1 - pos;
        size_t prev = p[pos] < 254 ? 1 : 5;
        if (p[pos] == 255 || prev > left) goto bad;
        pos += prev, left -= prev;
        if (!left) goto bad;
        uint8_t b = p[pos];
        size_t header = 1, data_length = 0;
        int64_t v = 0;
        int is_int = 1;
        switch (b >> 6) {
        case 0: is_int = 0, data_length = b & 0x3F; break;
        case 1:
            if (left < 2) goto bad;
            is_int = 0, header = 2, data_length = ((size_t)(b & 0x3F) << 8) | p[pos + 1];
            break;
        case 2:
            if (b != 0x80 || left < 5) goto bad;
            is_int = 0, header = 5;
            data_length = ((size_t)p[pos + 1] << 24) | ((size_t)p[pos + 2] << 16) | ((size_t)p[pos + 3] << 8) | p[pos + 4];
            break;
        default: {
            int bytes = b == 0xC0 ? 2 : b == 0xD0 ? 4 : b == 0xE0 ? 8 : b == 0xF0 ? 3 : b == 0xFE ? 1 : 0;
            if (bytes) {
                if (left < 1 + (size_t)bytes) goto bad;
                uint64_t raw = le(p + pos + 1, bytes);
                header = 1 + (size_t)bytes;
                if (bytes == 1) v = (int8_t)raw;
                else if (bytes == 2) v = (int16_t)raw;
                else if (bytes == 3) v = (int32_t)(raw << 8) >> 8;
                else if (bytes == 4) v = (int32_t)raw;
                else v = (int64_t)raw;
            } else if (b >= 0xF1 && b <= 0xFD) {
                v = (b & 0x0F) - 1;
            } else goto bad;
        }
        }
        if (header + data_length > left) goto bad;
        if (is_int ? els_push_int(out, v) : els_push(out, p + pos + header, data_length)) return fail(in, at, "out of memory");
        pos += header + data_length;
    }
    if (pos != n - 1) goto bad;
    return 0;
bad:
    return fail(in, at, "ziplist entry at byte %zu of the ziplist is bad", pos);
}

/* An intset: width u32 (2, 4 or 8), count u32, the integers little-endian, ascending. */
static int parse_intset(in_t *in, size_t at, const uint8_t *p, size_t n, els_t *out) {
    if (n < 8) return fail(in, at, "intset shorter than its header");
    uint64_t width = le(p, 4), count = le(p + 4, 4);
    if ((width != 2 && width != 4 && width != 8) || 8 + width * count != n) return fail(in, at, "intset header is bad");
    for (uint64_t i = 0; i < count; i++) {
        uint64_t raw = le(p + 8 + i * width, (int)width);
        int64_t v = width == 2 ? (int16_t)raw : width == 4 ? (int32_t)raw : (int64_t)raw;
        if (els_push_int(out, v) != 0) return fail(in, at, "out of memory");
    }
    return 0;
}

/* A zipmap (Redis 2.x hashes): count u8, then (length, key, length, free u8, value, free bytes)
 * pairs, 0xFF. A length is one byte below 254, else 254 and a u32. */
static int parse_zipmap(in_t *in, size_t at, const uint8_t *p, size_t n, els_t *out) {
    size_t pos = 1;
    if (n < 2) goto bad;
    for (;;) {
        if (pos >= n) goto bad;
        if (p[pos] == 0xFF) break;
        for (int half = 0; half < 2; half++) {
            if (pos >= n || p[pos] == 0xFF) goto bad;
            size_t length;
            if (p[pos] < 254) length = p[pos++];
            else if (p[pos] == 254 && n - pos >= 5) length = (size_t)le(p + pos + 1, 4), pos += 5;
            else goto bad;
            size_t free_bytes = 0;
            if (half == 1) {
                if (pos >= n) goto bad;
                free_bytes = p[pos++];
            }
            if (length > n - pos || free_bytes > n - pos - length) goto bad;
            if (els_push(out, p + pos, length) != 0) return fail(in, at, "out of memory");
            pos += length + free_bytes;
        }
    }
    if (pos != n - 1) goto bad;
    return 0;
bad:
    return fail(in, at, "zipmap entry at byte %zu of the zipmap is bad", pos);
}

/* Read a string holding a container (into blob) and parse it into out with parse. */
typedef int (*container_parse_t)(in_t *, size_t, const uint8_t *, size_t, els_t *);
static int read_container(in_t *in, els_t *blob, els_t *out, container_parse_t parse, const char *what) {
    size_t at = in->at;
    els_reset(blob);
    if (read_string(in, blob, what) != 0) return -1;
    if (blob->v[0].is_int) return fail(in, at, "%s is an integer", what);
    return parse(in, at, el_data(blob, &blob->v[0]), blob->v[0].n, out);
}

/* ---- building values ---- */

typedef struct loader {
    gr_server_t *db;                      /* loading in place (gr_rdb_load); NULL loading aside */
    gr_rdb_target_t *aside;               /* loading aside (gr_rdb_load_aside); NULL in place */
    gr_keyspace_t *const *keyspaces;      /* where keys go: db's or the target's */
    const gr_db_config_t *config;         /* the settings that shape values (the target's copy aside) */
    const gr_list_config_t *list_config;
    gr_list_encoding_t list_target;
    in_t *in;
    els_t key, vals, blob, blob2;
    size_t type_at;   /* the offset of the key's type byte */
    int64_t now;
} loader_t;

static int keep_library(gr_rdb_target_t *t, const uint8_t *code, size_t length);

static int64_t unix_ms(void) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

static int append_list(loader_t *L, gr_list_t *list, const els_t *e, size_t from) {
    enum { BATCH = 256 };
    gr_value_t batch[BATCH];
    for (size_t i = from; i < e->count;) {
        size_t n = 0;
        for (; n < BATCH && i < e->count; n++, i++) batch[n] = (gr_value_t){el_data(e, &e->v[i]), e->v[i].n};
        if (gr_list_push_many(list, GR_LIST_TAIL, batch, n) != 0) return fail(L->in, L->in->at, "out of memory");
    }
    return 0;
}

static void *build_set(loader_t *L, size_t at, const els_t *e) {
    if (e->count == 0) return NULL;
    const gr_db_config_t *c = L->config;
    gr_set_config_t config = {
        .max_intset_entries = c->set_max_intset_entries < 0 ? 0 : (size_t)c->set_max_intset_entries,
        .max_compact_entries = c->set_max_listpack_entries < 0 ? 0 : (size_t)c->set_max_listpack_entries,
        .max_compact_value = c->set_max_listpack_value < 0 ? 0 : (size_t)c->set_max_listpack_value,
    };
    gr_set_t *set = gr_set_new_for(&config, el_data(e, &e->v[0]), e->v[0].n, e->count);
    if (!set) goto oom;
    enum { BATCH = 64 };
    gr_bytes_t members[BATCH];
    for (size_t i = 0; i < e->count;) {
        size_t n = 0;
        for (; n < BATCH && i < e->count; n++, i++) {
            if (e->v[i].n > UINT32_MAX) goto bad;
            members[n] = (gr_bytes_t){el_data(e, &e->v[i]), (uint32_t)e->v[i].n};
        }
        int added = gr_set_add_many(set, &config, members, n);
        if (added == -2) goto bad;
        if (added != 0) goto oom;
    }
    return set;
bad:
    gr_set_free(set);
    fail(L->in, at, "a set member is repeated or too long");
    return NULL;
oom:
    gr_set_free(set);
    fail(L->in, at, "out of memory");
    return NULL;
}

/* fields/values alternate in e; expires (unix ms, 0 none) per pair, or NULL. */
static void *build_hash(loader_t *L, size_t at, const els_t *e, const int64_t *expires) {
    if (e->count == 0 || e->count % 2) {
        fail(L->in, at, "a hash's fields and values do not pair up");
        return NULL;
    }
    gr_hash_limits_t limits = {L->config->hash_max_listpack_entries, L->config->hash_max_listpack_value};
    gr_hash_t *hash = gr_hash_new();
    size_t pairs = e->count / 2;
    if (!hash || gr_hash_reserve(hash, pairs, &limits) != 0) goto oom;
    enum { BATCH = 64 };
    gr_bytes_t fields[BATCH], values[BATCH];
    for (size_t i = 0; i < pairs;) {
        size_t n = 0, first = i;
        for (; n < BATCH && i < pairs; n++, i++) {
            const el_t *f = &e->v[2 * i], *v = &e->v[2 * i + 1];
            if (f->n > UINT32_MAX || v->n > UINT32_MAX) goto bad;
            fields[n] = (gr_bytes_t){el_data(e, f), (uint32_t)f->n};
            values[n] = (gr_bytes_t){el_data(e, v), (uint32_t)v->n};
        }
        int added = gr_hash_add_many(hash, fields, values, n, &limits);
        if (added == -2) goto bad;
        if (added != 0) goto oom;
        for (size_t k = 0; expires && k < n; k++)
            if (expires[first + k] > 0 &&
                gr_hash_set_field_expire(hash, fields[k].data, fields[k].length, expires[first + k], &limits) != 0)
                goto oom;
    }
    /* fields whose time passed are dropped, as Redis drops them when it loads as a primary */
    if (expires && gr_hash_expire_due(hash, L->now) && gr_hash_count(hash) == 0) {
        gr_hash_free(hash);
        return (void *)-1;
    }
    return hash;
bad:
    gr_hash_free(hash);
    fail(L->in, at, "a hash field is repeated or too long");
    return NULL;
oom:
    gr_hash_free(hash);
    fail(L->in, at, "out of memory");
    return NULL;
}

/* A score's text (ziplist and listpack sets hold scores as text or integers). */
static int text_score(const els_t *e, const el_t *x, double *out) {
    if (x->is_int) {
        *out = (double)x->iv;
        return 0;
    }
    char text[330];
    if (x->n == 0 || x->n >= sizeof text) return -1;
    memcpy(text, el_data(e, x), x->n);
    text[x->n] = 0;
    char *end;
    *out = strtod(text, &end);
    return *end || isnan(*out) ? -1 : 0;
}

/* members in e (every other one when scores is NULL: member, score text), scores given. */
static void *build_zset(loader_t *L, size_t at, const els_t *e, const double *scores) {
    size_t count = scores ? e->count : e->count / 2;
    if (count == 0 || (!scores && e->count % 2)) {
        fail(L->in, at, "a sorted set's members and scores do not pair up");
        return NULL;
    }
    gr_zset_limits_t limits = {L->config->zset_max_listpack_entries, L->config->zset_max_listpack_value,
                               L->config->zset_packed};
    gr_zset_t *zset = NULL;
    if ((int64_t)count > limits.max_compact_entries && scores) {
        /* a big set: the engine's bulk load, fed lowest first (Redis writes a skiplist highest
         * first, so such a file is read backwards; any other order is sorted by the end) */
        const int backwards = scores[0] > scores[count - 1];
        gr_zset_t *bulk = gr_zset_bulk_begin();
        if (!bulk) goto oom;
        for (size_t k = 0; k < count; k++) {
            const size_t i = backwards ? count - 1 - k : k;
            if (gr_zset_bulk_append(bulk, el_data(e, &e->v[i]), e->v[i].n, scores[i]) != 0) {
                gr_zset_free(bulk);
                goto oom;
            }
        }
        int end = gr_zset_bulk_end(bulk);
        if (end != 0) {
            gr_zset_free(bulk);
            if (end == -1) goto oom;
            fail(L->in, at, "a sorted-set member is repeated");
            return NULL;
        }
        if (limits.packed) (void)gr_zset_convert(bulk, 1);
        return bulk;
    }
    zset = gr_zset_new();
    if (!zset) goto oom;
    for (size_t i = 0; i < count; i++) {
        const el_t *m = scores ? &e->v[i] : &e->v[2 * i];
        double score;
        if (scores) score = scores[i];
        else if (text_score(e, &e->v[2 * i + 1], &score) != 0) {
            gr_zset_free(zset);
            fail(L->in, at, "a sorted-set score is not a number");
            return NULL;
        }
        int added = gr_zset_set(zset, el_data(e, m), m->n, score, &limits);
        if (added < 0) goto oom;
        if (added == 0) {
            gr_zset_free(zset);
            fail(L->in, at, "a sorted-set member is repeated");
            return NULL;
        }
    }
    return zset;
oom:
    if (zset) gr_zset_free(zset);
    fail(L->in, at, "out of memory");
    return NULL;
}

static int read_id(in_t *in, gr_stream_id_t *id, const char *what) {
    if (in->length - in->at < 16) return truncated(in, what);
    const uint8_t *p = in->data + in->at;
    id->ms = id->seq = 0;
    for (int i = 0; i < 8; i++) id->ms = (id->ms << 8) | p[i];
    for (int i = 8; i < 16; i++) id->seq = (id->seq << 8) | p[i];
    in->at += 16;
    return 0;
}

typedef struct pending {
    gr_stream_id_t id;
    int64_t time;
    uint64_t count;
    int owned;
} pending_t;

static int pending_cmp(const void *a, const void *b) {
    return gr_stream_id_cmp(&((const pending_t *)a)->id, &((const pending_t *)b)->id);
}

static void *load_stream(loader_t *L, int type) {
    in_t *in = L->in;
    const size_t at = in->at;
    const gr_stream_limits_t limits = {(uint32_t)L->config->stream_node_max_bytes,
                                       (uint32_t)L->config->stream_node_max_entries};
    gr_stream_t *stream = gr_stream_new();
    pending_t *pel = NULL;
    const uint8_t **items = NULL;
    size_t *lengths = NULL, item_capacity = 0;
    if (!stream) goto oom;
    uint64_t nodes;
    if (read_len(in, &nodes, "a stream's node count") != 0) goto fail;
    gr_stream_id_t previous = {0, 0};
    int any = 0;
    uint64_t live = 0;
    for (uint64_t node = 0; node < nodes; node++) {
        size_t node_at = in->at;
        els_reset(&L->blob);
        if (read_string(in, &L->blob, "a stream node's key") != 0) goto fail;
        if (L->blob.v[0].n != 16 || L->blob.v[0].is_int) {
            fail(in, node_at, "a stream node's key is not a 16-byte ID");
            goto fail;
        }
        const uint8_t *k = el_data(&L->blob, &L->blob.v[0]);
        gr_stream_id_t master = {0, 0};
        for (int i = 0; i < 8; i++) master.ms = (master.ms << 8) | k[i];
        for (int i = 8; i < 16; i++) master.seq = (master.seq << 8) | k[i];
        els_reset(&L->vals);
        size_t lp_at = in->at;
        if (read_container(in, &L->blob2, &L->vals, parse_listpack, "a stream node's listpack") != 0) goto fail;
        const els_t *e = &L->vals;
        size_t i = 0;
        int64_t count, deleted, master_fields;
#define NEXT_INT(out) do { if (i >= e->count || el_int(e, &e->v[i], &(out)) != 0) { fail(in, lp_at, "a stream node's listpack is malformed"); goto fail; } i++; } while (0)
        NEXT_INT(count);
        NEXT_INT(deleted);
        NEXT_INT(master_fields);
        if (master_fields < 0 || (uint64_t)master_fields > e->count - i) {
                        fail(in, lp_at, "a stream node's master entry is malformed");
            goto fail;
        }
        size_t master_at = i;
        i += (size_t)master_fields;
        int64_t zero;
        NEXT_INT(zero);
        if (count + deleted <= 0 && nodes) { /* Redis never writes an empty node */ }
        for (int64_t entry = 0; entry < count + deleted; entry++) {
            int64_t flags, ms_diff, seq_diff, fields, lp_count;
            NEXT_INT(flags);
            NEXT_INT(ms_diff);
            NEXT_INT(seq_diff);
            if (flags & GR_RDB_STREAM_SAMEFIELDS) fields = master_fields;
            else NEXT_INT(fields);
            if (fields < 0 || (size_t)fields > (e->count - i) / ((flags & GR_RDB_STREAM_SAMEFIELDS) ? 1 : 2)) {
                                fail(in, lp_at, "a stream entry's field count is bad");
                goto fail;
            }
            gr_stream_id_t id = {master.ms + (uint64_t)ms_diff, master.seq + (uint64_t)seq_diff};
            if ((size_t)fields * 2 > item_capacity) {
                size_t cap = (size_t)fields * 2 + 16;
                const uint8_t **gi = realloc(items, cap * sizeof *gi);
                if (gi) items = gi;
                size_t *gl = realloc(lengths, cap * sizeof *gl);
                if (gl) lengths = gl;
                if (!gi || !gl) {
                                        goto oom;
                }
                item_capacity = cap;
            }
            for (int64_t f = 0; f < fields; f++) {
                const el_t *field = (flags & GR_RDB_STREAM_SAMEFIELDS) ? &e->v[master_at + (size_t)f] : &e->v[i++];
                const el_t *value = &e->v[i++];
                items[2 * f] = el_data(e, field), lengths[2 * f] = field->n;
                items[2 * f + 1] = el_data(e, value), lengths[2 * f + 1] = value->n;
            }
            NEXT_INT(lp_count);
            if (flags & GR_RDB_STREAM_DELETED) continue;
            if (any && gr_stream_id_cmp(&id, &previous) <= 0) {
                                fail(in, node_at, "stream entries are out of order");
                goto fail;
            }
            if (gr_stream_append(stream, &id, (size_t)fields, items, lengths, &limits) != 0) {
                                goto oom;
            }
            previous = id, any = 1, live++;
        }
#undef NEXT_INT
                if (i != e->count) {
            fail(in, lp_at, "a stream node's listpack has bytes after its entries");
            goto fail;
        }
    }
    uint64_t length, last_ms, last_seq;
    if (read_len(in, &length, "a stream's length") != 0 || read_len(in, &last_ms, "a stream's last ID") != 0 ||
        read_len(in, &last_seq, "a stream's last ID") != 0)
        goto fail;
    if (length != live) {
        fail(in, at, "a stream's length (%llu) disagrees with its entries (%llu)", (unsigned long long)length,
             (unsigned long long)live);
        goto fail;
    }
    gr_stream_id_t last = {last_ms, last_seq};
    if (any && gr_stream_id_cmp(&last, &previous) < 0) {
        fail(in, at, "a stream's last ID is below its entries");
        goto fail;
    }
    stream->last_id = last;
    stream->entries_added = length;
    if (type >= GR_RDB_TYPE_STREAM_LISTPACKS_2) {
        uint64_t fm, fs, dm, ds, added;
        if (read_len(in, &fm, "a stream's first ID") != 0 || read_len(in, &fs, "a stream's first ID") != 0 ||
            read_len(in, &dm, "a stream's max deleted ID") != 0 || read_len(in, &ds, "a stream's max deleted ID") != 0 ||
            read_len(in, &added, "a stream's entries added") != 0)
            goto fail;
        stream->max_deleted_entry_id = (gr_stream_id_t){dm, ds};
        stream->entries_added = added;
    }
    uint64_t groups;
    if (read_len(in, &groups, "a stream's group count") != 0) goto fail;
    for (uint64_t g = 0; g < groups; g++) {
        size_t group_at = in->at;
        uint64_t gms, gseq, pel_count;
        int64_t entries_read = GR_STREAM_INVALID_ENTRIES_READ;
        els_reset(&L->blob);
        if (read_string(in, &L->blob, "a group's name") != 0) goto fail;
        els_t *names = &L->blob;
        const el_t *name = &names->v[names->count - 1];
        if (read_len(in, &gms, "a group's last ID") != 0 || read_len(in, &gseq, "a group's last ID") != 0) goto fail;
        gr_stream_id_t group_last = {gms, gseq};
        if (type >= GR_RDB_TYPE_STREAM_LISTPACKS_2) {
            uint64_t read;
            if (read_len(in, &read, "a group's entries read") != 0) goto fail;
            entries_read = (int64_t)read;
        } else {
            entries_read = gr_stream_estimate_distance(stream, &group_last);
        }
        gr_stream_group_t *group;
        int made = gr_stream_group_create(stream, el_data(names, name), name->n, &group_last, entries_read, &group);
        if (made == 1) {
            fail(in, group_at, "a stream group's name is repeated");
            goto fail;
        }
        if (made != 0) goto oom;
        if (read_len(in, &pel_count, "a group's pending count") != 0) goto fail;
        if (pel_count > (in->length - in->at) / 18) {
            truncated(in, "a group's pending entries");
            goto fail;
        }
        free(pel);
        pel = calloc(pel_count ? pel_count : 1, sizeof *pel);
        if (!pel) goto oom;
        for (uint64_t p = 0; p < pel_count; p++) {
            uint64_t time = 0;
            if (read_id(in, &pel[p].id, "a pending entry's ID") != 0 || read_le(in, 8, &time, "a delivery time") != 0 ||
                read_len(in, &pel[p].count, "a delivery count") != 0)
                goto fail;
            pel[p].time = (int64_t)time;
            if (p && gr_stream_id_cmp(&pel[p].id, &pel[p - 1].id) <= 0) {
                fail(in, group_at, "a group's pending entries are out of order");
                goto fail;
            }
        }
        uint64_t consumers;
        if (read_len(in, &consumers, "a group's consumer count") != 0) goto fail;
        for (uint64_t c = 0; c < consumers; c++) {
            size_t consumer_at = in->at;
            els_reset(&L->blob);
            if (read_string(in, &L->blob, "a consumer's name") != 0) goto fail;
            const el_t *cname = &L->blob.v[L->blob.count - 1];
            uint64_t seen, active = 0, owned;
            if (read_le(in, 8, &seen, "a consumer's seen time") != 0) goto fail;
            if (type >= GR_RDB_TYPE_STREAM_LISTPACKS_3 && read_le(in, 8, &active, "a consumer's active time") != 0) goto fail;
            gr_stream_consumer_t *consumer;
            int cm = gr_stream_consumer_create(group, el_data(&L->blob, cname), cname->n, (int64_t)seen, &consumer);
            if (cm == 1) {
                fail(in, consumer_at, "a consumer's name is repeated");
                goto fail;
            }
            if (cm != 0) goto oom;
            consumer->seen_time = (int64_t)seen;
            if (read_len(in, &owned, "a consumer's pending count") != 0) goto fail;
            for (uint64_t o = 0; o < owned; o++) {
                pending_t key = {{0, 0}, 0, 0, 0};
                if (read_id(in, &key.id, "a consumer's pending ID") != 0) goto fail;
                pending_t *found = bsearch(&key, pel, pel_count, sizeof *pel, pending_cmp);
                if (!found || found->owned) {
                    fail(in, consumer_at, "a consumer's pending entry is not in its group's list, or has two owners");
                    goto fail;
                }
                found->owned = 1;
                if (!gr_stream_nack_add(group, consumer, &found->id, found->time, found->count)) goto oom;
            }
        }
        for (uint64_t p = 0; p < pel_count; p++)
            if (!pel[p].owned) {
                fail(in, group_at, "a group's pending entry has no consumer");
                goto fail;
            }
    }
    free(pel);
    free(items);
    free(lengths);
    return stream;
oom:
    fail(in, at, "out of memory");
fail:
    free(pel);
    free(items);
    free(lengths);
    gr_stream_free(stream);
    return NULL;
}

/* A module's serialized value (MODULE_AUX): typed items until EOF. */
static int skip_module_value(in_t *in) {
    for (;;) {
        uint64_t opcode, ignored;
        size_t at = in->at;
        if (read_len(in, &opcode, "a module value") != 0) return -1;
        switch (opcode) {
        case GR_RDB_MODULE_EOF: return 0;
        case GR_RDB_MODULE_SINT:
        case GR_RDB_MODULE_UINT:
            if (read_len(in, &ignored, "a module value") != 0) return -1;
            break;
        case GR_RDB_MODULE_FLOAT:
            if (read_le(in, 4, &ignored, "a module value") != 0) return -1;
            break;
        case GR_RDB_MODULE_DOUBLE:
            if (read_le(in, 8, &ignored, "a module value") != 0) return -1;
            break;
        case GR_RDB_MODULE_STRING: {
            els_t scratch = {0};
            int r = read_string(in, &scratch, "a module value");
            els_free(&scratch);
            if (r != 0) return -1;
            break;
        }
        default: return fail(in, at, "unknown module value opcode %llu", (unsigned long long)opcode);
        }
    }
}

/* Valkey 9's hash with field TTLs: count, then per field its name, its value and an i64 LE
 * expiry in unix ms (-1: none). */
static void *load_valkey_hash(loader_t *L) {
    in_t *in = L->in;
    const size_t at = in->at;
    uint64_t count;
    if (read_len(in, &count, "a hash's size") != 0) return NULL;
    if (count > (in->length - in->at) / 10) {
        truncated(in, "a hash's fields");
        return NULL;
    }
    int64_t *expires = malloc((count ? count : 1) * sizeof *expires);
    if (!expires) {
        fail(in, at, "out of memory");
        return NULL;
    }
    for (uint64_t i = 0; i < count; i++) {
        uint64_t expire = 0;
        if (read_string(in, &L->vals, "a hash field") != 0 || read_string(in, &L->vals, "a hash value") != 0 ||
            read_le(in, 8, &expire, "a hash field's expiry") != 0) {
            free(expires);
            return NULL;
        }
        expires[i] = (int64_t)expire < 0 ? 0 : (int64_t)expire;
    }
    void *hash = L->vals.count ? build_hash(L, at, &L->vals, expires) : (void *)-1;
    free(expires);
    return hash;
}

/* The value of type `type` at in->at: a new value and its goblin type id, or NULL (error set),
 * or (void *)-1 when the value is empty after expired parts are dropped. */
static void *load_value(loader_t *L, int type, uint8_t *gtype) {
    in_t *in = L->in;
    const size_t at = in->at;
    els_t *e = &L->vals;
    els_reset(e);
    uint64_t count;
    if (in->valkey && type > GR_RDB_TYPE_VALKEY_HASH_2) {   /* Valkey's own ids past 22 are not Redis's */
        fail(in, L->type_at, "unknown value type %d (a Valkey type this server does not read yet)", type);
        return NULL;
    }
    switch (type) {
    case GR_RDB_TYPE_STRING: {
        if (read_string(in, e, "a string value") != 0) return NULL;
        if (e->v[0].n > GR_STRING_MAX_LENGTH) {
            fail(in, at, "a string value is longer than goblin allows");
            return NULL;
        }
        *gtype = GR_TYPE_STRING;
        gr_string_t *s = gr_string_new(el_data(e, &e->v[0]), e->v[0].n);
        if (!s) fail(in, at, "out of memory");
        return s;
    }
    case GR_RDB_TYPE_LIST:
    case GR_RDB_TYPE_LIST_ZIPLIST:
    case GR_RDB_TYPE_LIST_QUICKLIST:
    case GR_RDB_TYPE_LIST_QUICKLIST_2: {
        *gtype = GR_TYPE_LIST;
        gr_list_t *list = gr_list_new_for(L->list_config, L->list_target);
        if (!list) {
            fail(in, at, "out of memory");
            return NULL;
        }
        if (type == GR_RDB_TYPE_LIST_ZIPLIST) {
            if (read_container(in, &L->blob, e, parse_ziplist, "a list's ziplist") != 0 || append_list(L, list, e, 0) != 0)
                goto list_fail;
        } else if (type == GR_RDB_TYPE_LIST) {
            if (read_len(in, &count, "a list's length") != 0) goto list_fail;
            for (uint64_t i = 0; i < count; i++) {
                if (read_string(in, e, "a list element") != 0) goto list_fail;
                if (e->count == 1024 || i + 1 == count) {
                    if (append_list(L, list, e, 0) != 0) goto list_fail;
                    els_reset(e);
                }
            }
        } else {
            if (read_len(in, &count, "a list's node count") != 0) goto list_fail;
            for (uint64_t i = 0; i < count; i++) {
                uint64_t container = GR_RDB_QUICKLIST_PACKED;
                size_t node_at = in->at;
                if (type == GR_RDB_TYPE_LIST_QUICKLIST_2 && read_len(in, &container, "a list node's container") != 0)
                    goto list_fail;
                els_reset(e);
                if (container == GR_RDB_QUICKLIST_PLAIN) {
                    if (read_string(in, e, "a list's plain node") != 0) goto list_fail;
                } else if (container == GR_RDB_QUICKLIST_PACKED) {
                    if (read_container(in, &L->blob, e, type == GR_RDB_TYPE_LIST_QUICKLIST ? parse_ziplist : parse_listpack,
                                       "a list node") != 0)
                        goto list_fail;
                } else {
                    fail(in, node_at, "unknown list node container %llu", (unsigned long long)container);
                    goto list_fail;
                }
                if (append_list(L, list, e, 0) != 0) goto list_fail;
            }
        }
        if (gr_list_length(list) == 0) {
            gr_list_free(list);
            return (void *)-1;
        }
        return list;
    list_fail:
        gr_list_free(list);
        return NULL;
    }
    case GR_RDB_TYPE_SET:
    case GR_RDB_TYPE_SET_INTSET:
    case GR_RDB_TYPE_SET_LISTPACK:
        *gtype = GR_TYPE_SET;
        if (type == GR_RDB_TYPE_SET) {
            if (read_len(in, &count, "a set's size") != 0) return NULL;
            if (count > in->length - in->at) {
                truncated(in, "a set's members");
                return NULL;
            }
            for (uint64_t i = 0; i < count; i++)
                if (read_string(in, e, "a set member") != 0) return NULL;
        } else if (read_container(in, &L->blob, e, type == GR_RDB_TYPE_SET_INTSET ? parse_intset : parse_listpack,
                                  "a set's packed members") != 0) {
            return NULL;
        }
        if (e->count == 0) return (void *)-1;
        return build_set(L, at, e);
    case GR_RDB_TYPE_ZSET:
    case GR_RDB_TYPE_ZSET_2: {
        *gtype = GR_TYPE_ZSET;
        if (read_len(in, &count, "a sorted set's size") != 0) return NULL;
        if (count > (in->length - in->at) / 2) {
            truncated(in, "a sorted set's members");
            return NULL;
        }
        double *scores = malloc((count ? count : 1) * sizeof *scores);
        if (!scores) {
            fail(in, at, "out of memory");
            return NULL;
        }
        for (uint64_t i = 0; i < count; i++) {
            if (read_string(in, e, "a sorted-set member") != 0) goto zset_fail;
            if (type == GR_RDB_TYPE_ZSET_2) {
                uint64_t bits = 0;
                if (read_le(in, 8, &bits, "a score") != 0) goto zset_fail;
                memcpy(&scores[i], &bits, sizeof bits);
            } else {
                uint8_t n = 0;
                size_t score_at = in->at;
                if (read_u8(in, &n, "a score") != 0) goto zset_fail;
                if (n == 253) scores[i] = NAN;
                else if (n == 254) scores[i] = INFINITY;
                else if (n == 255) scores[i] = -INFINITY;
                else {
                    char text[256];
                    if (in->length - in->at < n) {
                        truncated(in, "a score");
                        goto zset_fail;
                    }
                    memcpy(text, in->data + in->at, n);
                    text[n] = 0;
                    in->at += n;
                    char *end;
                    scores[i] = strtod(text, &end);
                    if (*end) {
                        fail(in, score_at, "a score is not a number");
                        goto zset_fail;
                    }
                }
            }
            if (isnan(scores[i])) {
                fail(in, in->at - 8, "a score is not a number");
                goto zset_fail;
            }
        }
        void *zset = build_zset(L, at, e, scores);
        free(scores);
        return zset;
    zset_fail:
        free(scores);
        return NULL;
    }
    case GR_RDB_TYPE_ZSET_ZIPLIST:
    case GR_RDB_TYPE_ZSET_LISTPACK:
        *gtype = GR_TYPE_ZSET;
        if (read_container(in, &L->blob, e, type == GR_RDB_TYPE_ZSET_ZIPLIST ? parse_ziplist : parse_listpack,
                           "a sorted set's packed members") != 0)
            return NULL;
        if (e->count == 0) return (void *)-1;
        return build_zset(L, at, e, NULL);
    case GR_RDB_TYPE_HASH:
        *gtype = GR_TYPE_HASH;
        if (read_len(in, &count, "a hash's size") != 0) return NULL;
        if (count > (in->length - in->at) / 2) {
            truncated(in, "a hash's fields");
            return NULL;
        }
        for (uint64_t i = 0; i < 2 * count; i++)
            if (read_string(in, e, "a hash field or value") != 0) return NULL;
        if (e->count == 0) return (void *)-1;
        return build_hash(L, at, e, NULL);
    case GR_RDB_TYPE_HASH_ZIPMAP:
    case GR_RDB_TYPE_HASH_ZIPLIST:
    case GR_RDB_TYPE_HASH_LISTPACK:
        *gtype = GR_TYPE_HASH;
        if (read_container(in, &L->blob, e,
                           type == GR_RDB_TYPE_HASH_ZIPMAP ? parse_zipmap
                           : type == GR_RDB_TYPE_HASH_ZIPLIST ? parse_ziplist : parse_listpack,
                           "a hash's packed fields") != 0)
            return NULL;
        if (e->count == 0) return (void *)-1;
        return build_hash(L, at, e, NULL);
    case GR_RDB_TYPE_HASH_METADATA_PRE_GA:   /* and Valkey's GR_RDB_TYPE_VALKEY_HASH_2 */
    case GR_RDB_TYPE_HASH_METADATA: {
        *gtype = GR_TYPE_HASH;
        if (in->valkey && type == GR_RDB_TYPE_VALKEY_HASH_2) return load_valkey_hash(L);
        uint64_t min_expire = 0;
        if (type == GR_RDB_TYPE_HASH_METADATA && read_le(in, 8, &min_expire, "a hash's least field expiry") != 0)
            return NULL;
        if (read_len(in, &count, "a hash's size") != 0) return NULL;
        if (count > (in->length - in->at) / 3) {
            truncated(in, "a hash's fields");
            return NULL;
        }
        int64_t *expires = malloc((count ? count : 1) * sizeof *expires);
        if (!expires) {
            fail(in, at, "out of memory");
            return NULL;
        }
        for (uint64_t i = 0; i < count; i++) {
            uint64_t ttl;
            if (read_len(in, &ttl, "a hash field's expiry") != 0 || read_string(in, e, "a hash field") != 0 ||
                read_string(in, e, "a hash value") != 0) {
                free(expires);
                return NULL;
            }
            expires[i] = type == GR_RDB_TYPE_HASH_METADATA ? (ttl ? (int64_t)(ttl + min_expire - 1) : 0) : (int64_t)ttl;
        }
        void *hash = e->count ? build_hash(L, at, e, expires) : (void *)-1;
        free(expires);
        return hash;
    }
    case GR_RDB_TYPE_HASH_LISTPACK_EX_PRE_GA:
    case GR_RDB_TYPE_HASH_LISTPACK_EX: {
        *gtype = GR_TYPE_HASH;
        uint64_t min_expire;
        if (type == GR_RDB_TYPE_HASH_LISTPACK_EX && read_le(in, 8, &min_expire, "a hash's least field expiry") != 0)
            return NULL;
        els_t triples = {0};
        if (read_container(in, &L->blob, &triples, parse_listpack, "a hash's packed fields") != 0 || triples.count % 3) {
            if (!in->failed) fail(in, at, "a hash's packed fields do not come in threes");
            els_free(&triples);
            return NULL;
        }
        size_t pairs = triples.count / 3;
        int64_t *expires = malloc((pairs ? pairs : 1) * sizeof *expires);
        if (!expires) {
            els_free(&triples);
            fail(in, at, "out of memory");
            return NULL;
        }
        for (size_t i = 0; i < pairs; i++) {
            int64_t ttl;
            const el_t *f = &triples.v[3 * i], *v = &triples.v[3 * i + 1];
            if (el_int(&triples, &triples.v[3 * i + 2], &ttl) != 0 || els_push(e, el_data(&triples, f), f->n) != 0 ||
                els_push(e, el_data(&triples, v), v->n) != 0) {
                fail(in, at, "a hash field's expiry is not an integer");
                free(expires);
                els_free(&triples);
                return NULL;
            }
            expires[i] = ttl;
        }
        void *hash = e->count ? build_hash(L, at, e, expires) : (void *)-1;
        free(expires);
        els_free(&triples);
        return hash;
    }
    case GR_RDB_TYPE_STREAM_LISTPACKS:
    case GR_RDB_TYPE_STREAM_LISTPACKS_2:
    case GR_RDB_TYPE_STREAM_LISTPACKS_3:
        *gtype = GR_TYPE_STREAM;
        return load_stream(L, type);
    case GR_RDB_TYPE_MODULE_PRE_GA:
    case GR_RDB_TYPE_MODULE_2:
        fail(in, L->type_at, "a module's value (RDB type %d): goblin has no modules, so this file cannot be loaded", type);
        return NULL;
    default:
        fail(in, L->type_at, "unknown value type %d", type);
        return NULL;
    }
}

/* ---- the file ---- */

int gr_rdb_is_rdb(const uint8_t *data, size_t length) {
    return (length >= 9 && memcmp(data, "REDIS", 5) == 0) || (length >= 9 && memcmp(data, "VALKEY", 6) == 0);
}

int gr_rdb_file_is_rdb(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    uint8_t head[9];
    ssize_t n = read(fd, head, sizeof head);
    close(fd);
    return n == (ssize_t)sizeof head && gr_rdb_is_rdb(head, sizeof head);
}

static int load_body(loader_t *L, gr_rdb_stats_t *stats, char *why, size_t why_size) {
    in_t *in = L->in;
    gr_keyspace_t *ks = L->keyspaces[0];
    int64_t expire = -1;
    int64_t idle_seconds = -1, frequency = -1;   /* the next key's LRU / LFU hints */
    for (;;) {
        size_t at = in->at;
        uint8_t op = 0;
        if (read_u8(in, &op, "an opcode") != 0) return -1;
        switch (op) {
        case GR_RDB_OPCODE_EOF: return 0;
        case GR_RDB_OPCODE_SELECTDB: {
            uint64_t index;
            if (read_len(in, &index, "a database number") != 0) return -1;
            if (index >= GR_DB_COUNT) return fail(in, at, "database %llu is out of range (goblin has %d)",
                                                  (unsigned long long)index, GR_DB_COUNT);
            ks = L->keyspaces[index];
            continue;
        }
        case GR_RDB_OPCODE_RESIZEDB: {
            uint64_t size, expires;
            if (read_len(in, &size, "a database size") != 0 || read_len(in, &expires, "a database size") != 0) return -1;
            /* sized once for its keys (a key takes at least 3 bytes of the file: no hint can
             * ask for more than the file could hold) */
            if (size <= (in->length - in->at) / 3) (void)gr_ks_reserve(ks, (size_t)size);
            continue;
        }
        case GR_RDB_OPCODE_AUX: {
            els_reset(&L->key);
            if (read_string(in, &L->key, "an aux field") != 0 || read_string(in, &L->key, "an aux field") != 0) return -1;
            continue;
        }
        case GR_RDB_OPCODE_EXPIRETIME_MS: {
            uint64_t ms = 0;
            if (read_le(in, 8, &ms, "an expiry") != 0) return -1;
            expire = (int64_t)ms;
            continue;
        }
        case GR_RDB_OPCODE_EXPIRETIME: {
            uint64_t seconds = 0;
            if (read_le(in, 4, &seconds, "an expiry") != 0) return -1;
            expire = (int64_t)(int32_t)seconds * 1000;
            continue;
        }
        case GR_RDB_OPCODE_IDLE: {
            uint64_t idle = 0;
            if (read_len(in, &idle, "an idle time") != 0) return -1;
            idle_seconds = idle > (uint64_t)INT64_MAX / 1000 ? INT64_MAX / 1000 : (int64_t)idle;
            continue;
        }
        case GR_RDB_OPCODE_FREQ: {
            uint8_t freq = 0;
            if (read_u8(in, &freq, "a frequency") != 0) return -1;
            frequency = freq;
            continue;
        }
        case GR_RDB_OPCODE_SLOT_INFO: {
            uint64_t a, b, c;
            if (read_len(in, &a, "slot info") != 0 || read_len(in, &b, "slot info") != 0 || read_len(in, &c, "slot info") != 0)
                return -1;
            continue;
        }
        case GR_RDB_OPCODE_MODULE_AUX: {
            uint64_t module, when_opcode, when;
            if (read_len(in, &module, "a module aux field") != 0 || read_len(in, &when_opcode, "a module aux field") != 0 ||
                read_len(in, &when, "a module aux field") != 0 || skip_module_value(in) != 0)
                return -1;
            continue;
        }
        case GR_RDB_OPCODE_FUNCTION_PRE_GA:
            return fail(in, at, "a function library in Redis 7.0's pre-release form: load this file in redis-server 7.0 "
                                "and save it again");
        case GR_RDB_OPCODE_FUNCTION2: {
            els_reset(&L->key);
            if (read_string(in, &L->key, "a function library") != 0) return -1;
            if (L->aside) {   /* the serving thread loads it at the swap: the functions engine is its alone */
                if (keep_library(L->aside, el_data(&L->key, &L->key.v[0]), L->key.v[0].n) != 0)
                    return fail(in, at, "out of memory keeping a function library");
                stats->functions++;
                continue;
            }
            char message[512] = "functions are not available";
            if (!gr_function_hooks ||
                gr_function_hooks->load(L->db, el_data(&L->key, &L->key.v[0]), L->key.v[0].n, message, sizeof message) != 0)
                return fail(in, at, "the function library does not load: %s", message);
            stats->functions++;
            continue;
        }
        default: break;
        }
        /* a key */
        if (L->aside && L->aside->cancel && __atomic_load_n(L->aside->cancel, __ATOMIC_RELAXED))
            return fail(in, at, "the load was cancelled");
        L->type_at = at;
        els_reset(&L->key);
        if (read_string(in, &L->key, "a key") != 0) return -1;
        gr_ks_prefetch(ks, el_data(&L->key, &L->key.v[0]), L->key.v[0].n);
        uint8_t gtype = 0;
        void *value = load_value(L, op, &gtype);
        if (!value) return -1;
        int64_t key_expire = expire, key_idle = idle_seconds, key_frequency = frequency;
        expire = idle_seconds = frequency = -1;
        if (value == (void *)-1) continue;   /* empty once its expired parts were dropped */
        const gr_value_type_t *row = gr_value_type(gtype);
        if (key_expire >= 0 && key_expire <= L->now) {
            row->free(value);
            stats->keys_expired++;
            continue;
        }
        const uint8_t *key = el_data(&L->key, &L->key.v[0]);
        size_t key_length = L->key.v[0].n;
        if (gr_ks_find(ks, key, key_length)) gr_ks_delete(ks, key, key_length);
        gr_ks_entry_t *entry = gr_ks_add(ks, key, key_length, gtype, value);
        if (!entry) {
            row->free(value);
            return fail(in, at, "out of memory adding a key");
        }
        if (key_expire >= 0) gr_ks_set_expire(ks, entry, key_expire);
        /* the hints apply under the policy that reads them, as Redis's objectSetLRUOrLFU */
        const int policy = L->config->maxmemory_policy;
        if (key_frequency >= 0 && (policy & GR_MAXMEMORY_FLAG_LFU))
            entry->access_ms = gr_evict_with_freq(entry->access_ms, L->now, (int)key_frequency);
        else if (key_idle >= 0 && (policy & GR_MAXMEMORY_FLAG_LRU))
            entry->access_ms = gr_evict_with_idle(entry->access_ms, L->now, (uint64_t)key_idle * 1000);
        stats->keys++;
    }
    (void)why, (void)why_size;
}

static int keep_library(gr_rdb_target_t *t, const uint8_t *code, size_t length) {
    if (t->library_count == t->library_capacity) {
        size_t capacity = t->library_capacity ? t->library_capacity * 2 : 8;
        gr_rdb_library_t *grown = realloc(t->libraries, capacity * sizeof *grown);
        if (!grown) return -1;
        t->libraries = grown;
        t->library_capacity = capacity;
    }
    uint8_t *copy = malloc(length ? length : 1);
    if (!copy) return -1;
    memcpy(copy, code, length);
    t->libraries[t->library_count++] = (gr_rdb_library_t){copy, length};
    return 0;
}

void gr_rdb_target_free_libraries(gr_rdb_target_t *t) {
    for (size_t i = 0; i < t->library_count; i++) free(t->libraries[i].code);
    free(t->libraries);
    t->libraries = NULL;
    t->library_count = t->library_capacity = 0;
}

static int load_file(loader_t *L, const char *path, gr_rdb_stats_t *stats, char *error, size_t error_size);

int gr_rdb_load(gr_server_t *db, const char *path, gr_rdb_stats_t *stats, char *error, size_t error_size) {
    loader_t L = {.db = db, .keyspaces = db->keyspaces, .config = &db->config, .list_config = &db->list_config,
                  .list_target = db->list_target};
    int result = load_file(&L, path, stats, error, error_size);
    if (result < 0)
        for (int i = 0; i < GR_DB_COUNT; i++) gr_ks_clear(db->keyspaces[i]);
    return result;
}

int gr_rdb_load_aside(gr_rdb_target_t *target, const char *path, gr_rdb_stats_t *stats, char *error, size_t error_size) {
    loader_t L = {.aside = target, .keyspaces = target->keyspaces, .config = &target->config,
                  .list_config = &target->list_config, .list_target = target->list_target};
    return load_file(&L, path, stats, error, error_size);
}

static int load_file(loader_t *L0, const char *path, gr_rdb_stats_t *stats, char *error, size_t error_size) {
    gr_rdb_stats_t local = {0};
    if (!stats) stats = &local;
    *stats = (gr_rdb_stats_t){0};
    const uint8_t *data;
    size_t length;
    int mapped = gr_persist_map_file(path, 9, "an RDB file", &data, &length, error, error_size);
    if (mapped <= 0) return mapped;
    stats->bytes = (int64_t)length;
    in_t in = {.data = data, .length = length};
    int result = -1;
    int version = 0;
    size_t digits_at = 5;
    if (memcmp(data, "VALKEY", 6) == 0) in.valkey = 1, digits_at = 6;
    else if (memcmp(data, "REDIS", 5) != 0) {
        snprintf(error, error_size, "%s: not an RDB file (bad signature at offset 0)", path);
        goto done;
    }
    for (size_t i = digits_at; i < 9; i++) {
        if (data[i] < '0' || data[i] > '9') {
            snprintf(error, error_size, "%s: bad RDB version digits at offset %zu", path, i);
            goto done;
        }
        version = version * 10 + (data[i] - '0');
    }
    in.version = stats->version = version;
    if (version < 1 || (in.valkey ? version != GR_RDB_VERSION_VALKEY : version > GR_RDB_VERSION_MAX_REDIS)) {
        snprintf(error, error_size, "%s: RDB version %d is not supported (this server reads Redis's 1 to %d and Valkey's %d) "
                 "at offset %zu", path, version, GR_RDB_VERSION_MAX_REDIS, GR_RDB_VERSION_VALKEY, digits_at);
        goto done;
    }
    in.at = 9;
    loader_t L = *L0;
    L.in = &in;
    L.now = unix_ms();
    int built = load_body(&L, stats, error, error_size);
    els_free(&L.key);
    els_free(&L.vals);
    els_free(&L.blob);
    els_free(&L.blob2);
    if (built == 0 && version >= 5) {
        /* the checksum after EOF: over every byte before it; 0 means none was computed */
        size_t eof_end = in.at;
        uint64_t stored = 0;
        if (read_le(&in, 8, &stored, "the checksum") != 0) built = -1;
        else if (stored != 0 && stored != gr_crc64(0, data, eof_end))
            built = fail(&in, eof_end, "checksum mismatch: the file's CRC-64 disagrees with its bytes");
    }
    if (built == 0 && in.at != length) built = fail(&in, in.at, "unexpected bytes after the end of the file");
    if (built != 0) {
        /* a bad checksum explains a structural error best when the bytes were damaged */
        snprintf(error, error_size, "%s: %s at offset %zu", path, in.message, in.fail_at);
        goto done;
    }
    result = 1;
done:
    munmap((void *)data, length);
    if (result < 0) stats->keys = stats->keys_expired = 0;
    return result;
}

/* ---- one value: RESTORE of a Redis DUMP payload ---- */

void *gr_rdb_restore_value(gr_server_t *db, int version, const uint8_t *data, size_t length, uint8_t *gtype,
                           int *status) {
    *status = GR_RDB_VALUE_BAD;
    in_t in = {.data = data, .length = length, .version = version, .valkey = version == GR_RDB_VERSION_VALKEY};
    loader_t L = {.db = db, .keyspaces = db->keyspaces, .config = &db->config, .list_config = &db->list_config,
                  .list_target = db->list_target, .in = &in, .now = gr_db_now_ms(db)};
    uint8_t type = 0;
    void *value = NULL;
    if (read_u8(&in, &type, "a value type") == 0) {
        if (type == GR_RDB_TYPE_MODULE_PRE_GA || type == GR_RDB_TYPE_MODULE_2) *status = GR_RDB_VALUE_MODULE;
        else value = load_value(&L, type, gtype);
    }
    els_free(&L.key);
    els_free(&L.vals);
    els_free(&L.blob);
    els_free(&L.blob2);
    if (value == (void *)-1) return NULL;   /* empty (Redis refuses an empty value too) */
    if (!value) {
        /* load_value's only error that is not the payload's fault */
        if (in.failed && strncmp(in.message, "out of memory", 13) == 0) *status = GR_RDB_VALUE_OOM;
        return NULL;
    }
    if (in.at != length) {   /* bytes after the value: not what DUMP writes */
        gr_value_type(*gtype)->free(value);
        return NULL;
    }
    *status = GR_RDB_VALUE_OK;
    return value;
}

int gr_rdb_dump_version_readable(int version) {
    return (version >= 1 && version <= GR_RDB_VERSION_MAX_REDIS) || version == GR_RDB_VERSION_VALKEY;
}
