/* cmd_bitmap.c — the bitmap commands: SETBIT, GETBIT, BITCOUNT (BYTE|BIT ranges), BITPOS,
 * BITOP (AND, OR, XOR, NOT), BITFIELD (GET, SET, INCRBY, OVERFLOW WRAP|SAT|FAIL, #offsets,
 * i1..i64 and u1..u63) and BITFIELD_RO. Rows in bitmap.def; the bit work is engines/bitmap.c.
 *
 * Each handler parses argv in the order Redis 7.0 does, so every error (and which error
 * wins when several apply) is Redis's: SETBIT/GETBIT check the offset before the key,
 * BITCOUNT looks the key up first (a missing key counts 0 whatever the range says), BITPOS
 * checks the bit, then the key, then the range, BITFIELD parses every operation before it
 * touches the key. Offsets are bounded as Redis bounds them: the byte holding the bit must
 * lie below proto-max-bulk-len (and below the string engine's 512 MB). Writes validate and
 * allocate first, then change the string; a write that changes nothing (SETBIT of the bit
 * already there, BITFIELD SET of the same value) neither touches WATCH nor counts as dirty,
 * as in Redis.
 */
#include <stdlib.h>
#include <string.h>

#include "commands/commands.h"
#include "engines/bitmap.h"
#include "engines/string_value.h"
#include "exec/db.h"
#include "core/bytes.h"
#include "exec/lookup.h"
#include "exec/transaction.h"

#define NOT_INTEGER "ERR value is not an integer or out of range"
#define BAD_OFFSET "ERR bit offset is not an integer or out of range"

static gr_bytes_t arg_bytes(const uint8_t *const *argv, const size_t *argv_length, size_t i) {
    gr_bytes_t bytes = {argv[i], (uint32_t)argv_length[i]};
    return bytes;
}

/* Redis's getLongLongFromObjectOrReply: 0, or -1 after replying the integer error. */
static int int64_or_reply(const uint8_t *arg, size_t length, int64_t *out, gr_reply_t *reply) {
    if (gr_bytes_to_int64(arg, length, out) == 0) return 0;
    gr_reply_error_text(reply, GR_ERR_NOT_INTEGER, NOT_INTEGER);
    return -1;
}

static void reply_syntax_error(gr_reply_t *reply) { gr_reply_error_text(reply, GR_ERR_SYNTAX, "ERR syntax error"); }

/* The largest string a bit command may address, in bytes. */
static uint64_t byte_limit(const gr_server_t *db) {
    uint64_t limit = db->config.proto_max_bulk_len > 0 ? (uint64_t)db->config.proto_max_bulk_len : GR_STRING_MAX_LENGTH;
    return limit < GR_STRING_MAX_LENGTH ? limit : GR_STRING_MAX_LENGTH;
}

/* Redis's getBitOffsetFromArgument: a non-negative integer whose byte lies below the limit;
 * with bits > 0, "#N" means N * bits (BITFIELD). 0, or -1 after replying. */
static int bit_offset_or_reply(const gr_server_t *db, const uint8_t *arg, size_t length, unsigned bits, uint64_t *offset,
                               gr_reply_t *reply) {
    int multiply = bits > 0 && length > 0 && arg[0] == '#';
    int64_t value;
    if (gr_bytes_to_int64(arg + multiply, length - (size_t)multiply, &value) != 0) {
        gr_reply_error_text(reply, GR_ERR_OUT_OF_RANGE, BAD_OFFSET);
        return -1;
    }
    if (multiply) value = (int64_t)((uint64_t)value * bits);   /* wraps as Redis's multiplication does */
    if (value < 0 || (uint64_t)(value >> 3) >= byte_limit(db)) {
        gr_reply_error_text(reply, GR_ERR_OUT_OF_RANGE, BAD_OFFSET);
        return -1;
    }
    *offset = (uint64_t)value;
    return 0;
}

/* A string value to read: 1 with *value, 0 when the key is missing, -1 after WRONGTYPE. */
static int readable_bits(gr_server_t *db, gr_bytes_t key, gr_bytes_t *value, gr_reply_t *reply) {
    gr_ks_entry_t *entry = gr_db_lookup(db, key);
    value->data = NULL;
    value->length = 0;
    if (!entry) return 0;
    if (entry->type != GR_TYPE_STRING) { gr_reply_wrongtype(reply); return -1; }
    const gr_string_t *s = entry->value;
    value->data = s->data;
    value->length = s->length;
    return 1;
}

/* Redis's lookupStringForBitCommand: the string at key, created or zero-extended so that bit
 * max_bit exists. *grown says how many bytes were added (a new key counts all of them).
 * NULL after replying WRONGTYPE or OOM (nothing changed then). */
static gr_string_t *writable_bits(gr_server_t *db, gr_bytes_t key, uint64_t max_bit, size_t *grown, gr_reply_t *reply) {
    size_t needed = (size_t)(max_bit >> 3) + 1;
    gr_ks_entry_t *entry = gr_db_find_live(db, key);
    if (entry && entry->type != GR_TYPE_STRING) { gr_reply_wrongtype(reply); return NULL; }
    if (!entry) {
        gr_string_t *s = gr_string_new_zeroed(needed);
        if (!s) { gr_reply_oom(reply); return NULL; }
        if (!gr_ks_add(db->keyspace, key.data, key.length, GR_TYPE_STRING, s)) {
            gr_string_free(s);
            gr_reply_oom(reply);
            return NULL;
        }
        *grown = needed;
        return s;
    }
    gr_string_t *s = entry->value;
    *grown = 0;
    if (s->length >= needed) return s;
    size_t old_length = s->length;
    gr_string_t *resized = gr_string_resize(s, needed);
    if (!resized) { gr_reply_oom(reply); return NULL; }
    entry->value = resized;
    *grown = needed - old_length;
    return resized;
}

/* ---- SETBIT, GETBIT ---- */

void gr_cmd_setbit(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                   gr_reply_t *reply) {
    (void)argc;   /* the row's arity fixes it */
    uint64_t offset;
    if (bit_offset_or_reply(db, argv[2], argv_length[2], 0, &offset, reply) != 0) return;
    int64_t on;
    if (gr_bytes_to_int64(argv[3], argv_length[3], &on) != 0 || (on & ~1)) {
        gr_reply_error_text(reply, GR_ERR_OUT_OF_RANGE, "ERR bit is not an integer or out of range");
        return;
    }
    gr_bytes_t key = arg_bytes(argv, argv_length, 1);
    size_t grown;
    gr_string_t *s = writable_bits(db, key, offset, &grown, reply);
    if (!s) return;
    uint8_t *byte = &s->data[offset >> 3];
    int shift = 7 - (int)(offset & 7);
    int old = (*byte >> shift) & 1;
    if (grown || old != on) {
        *byte = (uint8_t)((*byte & ~(1u << shift)) | ((unsigned)on << shift));
        gr_watch_touch_current(db, key);
        gr_db_count_changes(db, 1);
    }
    gr_reply_integer(reply, old);
}

void gr_cmd_getbit(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                   gr_reply_t *reply) {
    (void)argc;   /* the row's arity fixes it */
    uint64_t offset;
    if (bit_offset_or_reply(db, argv[2], argv_length[2], 0, &offset, reply) != 0) return;
    gr_bytes_t value;
    int found = readable_bits(db, arg_bytes(argv, argv_length, 1), &value, reply);
    if (found < 0) return;
    gr_reply_integer(reply, found ? gr_bits_get(value.data, value.length, offset) : 0);
}

/* ---- BITCOUNT, BITPOS ---- */

/* BYTE or BIT as the unit word: 0 byte, 1 bit, -1 after replying a syntax error. */
static int unit_or_reply(const uint8_t *arg, size_t length, gr_reply_t *reply) {
    if (gr_word_is(arg, length, "bit")) return 1;
    if (gr_word_is(arg, length, "byte")) return 0;
    reply_syntax_error(reply);
    return -1;
}

/* A range over a string of length bytes, as BITCOUNT and BITPOS resolve it: start and end
 * (negative from the end) clamped to the string, in bytes; with is_bit, given in bits and
 * turned into whole bytes plus masks of the bits of the first and last byte that lie
 * outside the range. */
typedef struct bit_range {
    int64_t start, end;
    uint8_t first_outside, last_outside;   /* bits of data[start] / data[end] not in the range */
} bit_range_t;

static void resolve_range(int64_t start, int64_t end, int is_bit, size_t length, bit_range_t *range) {
    int64_t total = (int64_t)length;
    if (is_bit) total <<= 3;
    if (start < 0) start += total;
    if (end < 0) end += total;
    if (start < 0) start = 0;
    if (end < 0) end = 0;
    if (end >= total) end = total - 1;
    range->first_outside = range->last_outside = 0;
    if (is_bit && start <= end) {
        range->first_outside = (uint8_t)(~((1u << (8 - (start & 7))) - 1) & 0xFF);
        range->last_outside = (uint8_t)((1u << (7 - (end & 7))) - 1);
        start >>= 3;
        end >>= 3;
    }
    range->start = start;
    range->end = end;
}

void gr_cmd_bitcount(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                     gr_reply_t *reply) {
    gr_bytes_t value;
    int found = readable_bits(db, arg_bytes(argv, argv_length, 1), &value, reply);
    if (found < 0) return;
    if (!found) { gr_reply_integer(reply, 0); return; }   /* Redis 7.0: before the range is parsed */
    bit_range_t range;
    if (argc == 4 || argc == 5) {
        int64_t start, end;
        if (int64_or_reply(argv[2], argv_length[2], &start, reply) != 0) return;
        if (int64_or_reply(argv[3], argv_length[3], &end, reply) != 0) return;
        if (start < 0 && end < 0 && start > end) { gr_reply_integer(reply, 0); return; }
        int is_bit = 0;
        if (argc == 5 && (is_bit = unit_or_reply(argv[4], argv_length[4], reply)) < 0) return;
        resolve_range(start, end, is_bit, value.length, &range);
    } else if (argc == 2) {
        range.start = 0;
        range.end = (int64_t)value.length - 1;
        range.first_outside = range.last_outside = 0;
    } else {
        reply_syntax_error(reply);
        return;
    }
    if (range.start > range.end) { gr_reply_integer(reply, 0); return; }
    uint64_t count = gr_bits_count(value.data + range.start, (size_t)(range.end - range.start + 1));
    count -= (uint64_t)__builtin_popcount(value.data[range.start] & range.first_outside);
    count -= (uint64_t)__builtin_popcount(value.data[range.end] & range.last_outside);
    gr_reply_integer(reply, (int64_t)count);
}

void gr_cmd_bitpos(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                   gr_reply_t *reply) {
    int64_t bit;
    if (int64_or_reply(argv[2], argv_length[2], &bit, reply) != 0) return;
    if (bit != 0 && bit != 1) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR The bit argument must be 1 or 0.");
        return;
    }
    gr_bytes_t value;
    int found = readable_bits(db, arg_bytes(argv, argv_length, 1), &value, reply);
    if (found < 0) return;
    /* A missing key is an endless run of zeros. */
    if (!found) { gr_reply_integer(reply, bit ? -1 : 0); return; }
    bit_range_t range;
    int end_given = 0;
    if (argc >= 4 && argc <= 6) {
        int64_t start, end;
        int is_bit = 0;
        if (int64_or_reply(argv[3], argv_length[3], &start, reply) != 0) return;
        if (argc == 6 && (is_bit = unit_or_reply(argv[5], argv_length[5], reply)) < 0) return;
        if (argc >= 5) {
            if (int64_or_reply(argv[4], argv_length[4], &end, reply) != 0) return;
            end_given = 1;
        } else {
            end = (int64_t)value.length - 1;
        }
        resolve_range(start, end, is_bit, value.length, &range);
    } else if (argc == 3) {
        range.start = 0;
        range.end = (int64_t)value.length - 1;
        range.first_outside = range.last_outside = 0;
    } else {
        reply_syntax_error(reply);
        return;
    }
    if (range.start > range.end) { gr_reply_integer(reply, -1); return; }   /* an empty range holds no bit */
    /* Redis's bitposCommand: the first byte and the last byte through their masks (bits
     * outside the range forced to the value not sought), the bytes between whole. */
    const uint8_t *p = value.data;
    int64_t start = range.start, bytes = range.end - range.start + 1, position;
    uint8_t first = range.first_outside, last = range.last_outside, byte;
    if (first) {
        byte = bit ? (uint8_t)(p[start] & ~first) : (uint8_t)(p[start] | first);
        if (last && bytes == 1) byte = bit ? (uint8_t)(byte & ~last) : (uint8_t)(byte | last);
        position = gr_bits_first(&byte, 1, (int)bit);
        if (bytes == 1 || (position != -1 && position != 8)) goto found;
        start++;
        bytes--;
    }
    int64_t middle = bytes - (last ? 1 : 0);
    if (middle > 0) {
        position = gr_bits_first(p + start, (size_t)middle, (int)bit);
        if (bytes == middle || (position != -1 && position != middle << 3)) goto found;
        start += middle;
        bytes -= middle;
    }
    byte = bit ? (uint8_t)(p[range.end] & ~last) : (uint8_t)(p[range.end] | last);
    position = gr_bits_first(&byte, 1, (int)bit);
found:
    /* Looking for a 0 inside an explicit range: running off its end means there is none. */
    if (end_given && bit == 0 && position == bytes << 3) { gr_reply_integer(reply, -1); return; }
    if (position != -1) position += start << 3;
    gr_reply_integer(reply, position);
}

/* ---- BITOP ---- */

void gr_cmd_bitop(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                  gr_reply_t *reply) {
    gr_bits_op_t op;
    if (gr_word_is(argv[1], argv_length[1], "and")) op = GR_BITS_AND;
    else if (gr_word_is(argv[1], argv_length[1], "or")) op = GR_BITS_OR;
    else if (gr_word_is(argv[1], argv_length[1], "xor")) op = GR_BITS_XOR;
    else if (gr_word_is(argv[1], argv_length[1], "not")) op = GR_BITS_NOT;
    else { reply_syntax_error(reply); return; }
    if (op == GR_BITS_NOT && argc != 4) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR BITOP NOT must be called with a single source key.");
        return;
    }
    size_t count = argc - 3;
    const uint8_t **sources = malloc(count * sizeof *sources);
    size_t *lengths = malloc(count * sizeof *lengths);
    if (!sources || !lengths) {
        free(sources);
        free(lengths);
        gr_reply_oom(reply);
        return;
    }
    size_t longest = 0;
    for (size_t i = 0; i < count; i++) {
        gr_bytes_t value;
        if (readable_bits(db, arg_bytes(argv, argv_length, 3 + i), &value, reply) < 0) goto done;
        sources[i] = value.data;
        lengths[i] = value.length;
        if (value.length > longest) longest = value.length;
    }
    gr_bytes_t destination = arg_bytes(argv, argv_length, 2);
    gr_ks_entry_t *existing = gr_db_find_live(db, destination);
    if (longest) {
        gr_string_t *result = gr_string_new_zeroed(longest);
        if (!result) { gr_reply_oom(reply); goto done; }
        gr_bits_op(op, sources, lengths, count, result->data, longest);
        if (gr_db_set_key(db, destination, GR_TYPE_STRING, result) != 0) {
            gr_string_free(result);
            gr_reply_oom(reply);
            goto done;
        }
        gr_db_count_changes(db, 1);
    } else if (existing) {   /* every source empty or missing: the destination is deleted */
        gr_db_delete_key(db, destination);
        gr_db_count_changes(db, 1);
    }
    gr_reply_integer(reply, (int64_t)longest);
done:
    free(sources);
    free(lengths);
}

/* ---- BITFIELD, BITFIELD_RO ---- */

enum { FIELD_GET = 0, FIELD_SET = 1, FIELD_INCRBY = 2 };

typedef struct field_op {
    uint64_t offset;
    int64_t value;          /* SET's value or INCRBY's increment */
    uint8_t opcode, overflow, is_signed, bits;
} field_op_t;

/* "i1".."i64" or "u1".."u63": 0, or -1 after replying Redis's error. */
static int field_type_or_reply(const uint8_t *arg, size_t length, uint8_t *is_signed, uint8_t *bits,
                               gr_reply_t *reply) {
    int64_t width;
    if (length >= 2 && (arg[0] == 'i' || arg[0] == 'u') && gr_bytes_to_int64(arg + 1, length - 1, &width) == 0 &&
        width >= 1 && width <= (arg[0] == 'i' ? 64 : 63)) {
        *is_signed = arg[0] == 'i';
        *bits = (uint8_t)width;
        return 0;
    }
    gr_reply_error_text(reply, GR_ERR_GENERIC,
                        "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.");
    return -1;
}

/* SET or INCRBY on the string: the reply element (the old value for SET, the new one for
 * INCRBY, nil when OVERFLOW FAIL refuses it); returns 1 if the field changed. */
static int apply_field_write(const field_op_t *op, gr_string_t *s, size_t grown, gr_reply_t *reply) {
    int overflow;
    if (op->is_signed) {
        int64_t old = gr_bits_field_get_signed(s->data, s->length, op->offset, op->bits), limit = 0, stored, answer;
        if (op->opcode == FIELD_INCRBY) {
            overflow = gr_bits_signed_overflow(old, op->value, op->bits, op->overflow, &limit);
            stored = overflow ? limit : (int64_t)((uint64_t)old + (uint64_t)op->value);
            answer = stored;
        } else {
            overflow = gr_bits_signed_overflow(op->value, 0, op->bits, op->overflow, &limit);
            stored = overflow ? limit : op->value;
            answer = old;
        }
        if (overflow && op->overflow == GR_BITS_FAIL) { gr_reply_nil(reply); return 0; }
        gr_reply_integer(reply, answer);
        gr_bits_field_set(s->data, op->offset, op->bits, (uint64_t)stored);
        return grown || old != stored;
    }
    uint64_t old = gr_bits_field_get_unsigned(s->data, s->length, op->offset, op->bits), limit = 0, stored, answer;
    if (op->opcode == FIELD_INCRBY) {
        overflow = gr_bits_unsigned_overflow(old, op->value, op->bits, op->overflow, &limit);
        stored = overflow ? limit : old + (uint64_t)op->value;
        answer = stored;
    } else {
        overflow = gr_bits_unsigned_overflow((uint64_t)op->value, 0, op->bits, op->overflow, &limit);
        stored = overflow ? limit : (uint64_t)op->value;
        answer = old;
    }
    if (overflow && op->overflow == GR_BITS_FAIL) { gr_reply_nil(reply); return 0; }
    gr_reply_integer(reply, (int64_t)answer);   /* u63 at most: fits */
    gr_bits_field_set(s->data, op->offset, op->bits, stored);
    return grown || old != stored;
}

static void bitfield(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                     gr_reply_t *reply, int read_only_command) {
    /* Parse every operation first (Redis replies a parse error before touching the key). */
    field_op_t *ops = malloc((argc / 3 + 1) * sizeof *ops);
    if (!ops) { gr_reply_oom(reply); return; }
    size_t count = 0;
    int writes = 0;
    uint8_t overflow = GR_BITS_WRAP;
    uint64_t highest_written_bit = 0;
    for (size_t j = 2; j < argc; j++) {
        size_t remaining = argc - j - 1;
        const uint8_t *word = argv[j];
        size_t word_length = argv_length[j];
        uint8_t opcode;
        if (gr_word_is(word, word_length, "get") && remaining >= 2) {
            opcode = FIELD_GET;
        } else if (gr_word_is(word, word_length, "set") && remaining >= 3) {
            opcode = FIELD_SET;
        } else if (gr_word_is(word, word_length, "incrby") && remaining >= 3) {
            opcode = FIELD_INCRBY;
        } else if (gr_word_is(word, word_length, "overflow") && remaining >= 1) {
            j++;
            if (gr_word_is(argv[j], argv_length[j], "wrap")) overflow = GR_BITS_WRAP;
            else if (gr_word_is(argv[j], argv_length[j], "sat")) overflow = GR_BITS_SAT;
            else if (gr_word_is(argv[j], argv_length[j], "fail")) overflow = GR_BITS_FAIL;
            else {
                gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR Invalid OVERFLOW type specified");
                goto done;
            }
            continue;
        } else {
            reply_syntax_error(reply);
            goto done;
        }
        field_op_t *op = &ops[count];
        memset(op, 0, sizeof *op);
        op->opcode = opcode;
        op->overflow = overflow;
        if (field_type_or_reply(argv[j + 1], argv_length[j + 1], &op->is_signed, &op->bits, reply) != 0) goto done;
        if (bit_offset_or_reply(db, argv[j + 2], argv_length[j + 2], op->bits, &op->offset, reply) != 0) goto done;
        if (opcode != FIELD_GET) {
            writes = 1;
            if (highest_written_bit < op->offset + op->bits - 1) highest_written_bit = op->offset + op->bits - 1;
            if (int64_or_reply(argv[j + 3], argv_length[j + 3], &op->value, reply) != 0) goto done;
        }
        count++;
        j += opcode == FIELD_GET ? 2 : 3;
    }
    gr_bytes_t key = arg_bytes(argv, argv_length, 1);
    gr_string_t *s = NULL;
    size_t grown = 0;
    gr_bytes_t read_only = {NULL, 0};
    if (!writes) {
        if (readable_bits(db, key, &read_only, reply) < 0) goto done;
    } else {
        if (read_only_command) {
            gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR BITFIELD_RO only supports the GET subcommand");
            goto done;
        }
        s = writable_bits(db, key, highest_written_bit, &grown, reply);
        if (!s) goto done;
    }
    gr_reply_array_begin(reply, count);
    int64_t changes = 0;
    for (size_t i = 0; i < count; i++) {
        const field_op_t *op = &ops[i];
        if (op->opcode != FIELD_GET) {
            changes += apply_field_write(op, s, grown, reply);
            continue;
        }
        const uint8_t *data = s ? s->data : read_only.data;
        size_t length = s ? s->length : read_only.length;
        if (op->is_signed) gr_reply_integer(reply, gr_bits_field_get_signed(data, length, op->offset, op->bits));
        else gr_reply_integer(reply, (int64_t)gr_bits_field_get_unsigned(data, length, op->offset, op->bits));
    }
    if (changes) {
        gr_watch_touch_current(db, key);
        gr_db_count_changes(db, changes);
    }
done:
    free(ops);
}

void gr_cmd_bitfield(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                     gr_reply_t *reply) {
    bitfield(db, argc, argv, argv_length, reply, 0);
}

void gr_cmd_bitfield_ro(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                        gr_reply_t *reply) {
    bitfield(db, argc, argv, argv_length, reply, 1);
}
