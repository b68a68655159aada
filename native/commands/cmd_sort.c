/* cmd_sort.c — SORT and SORT_RO (argv handlers; rows in sort.def): the elements of a list or a
 * set or a sorted set, ordered numerically or by bytes,
 * weighted BY other keys (or hash fields: "key->field"), projected through GET patterns, cut by LIMIT, and
 * answered or STOREd as a list.
 *
 * Semantics are Redis 7's sortCommandGeneric, in its order: options (the first bad one
 * answers), the key's type, BY without '*' meaning "do not sort" (a list or a sorted set then
 * keeps its own order, DESC reversing it, and only the LIMIT range is read; a set is sorted
 * ALPHA anyway when STOREd, so the stored list is deterministic), LIMIT clamped to the length, then
 * the weights, one qsort, and the reply. Numeric weights are parsed as Redis parses them
 * (parse_score; a refused one makes the reply "ERR One or more scores can't be converted
 * into double"); equal weights fall back to the elements' bytes. ALPHA compares bytes up to the first NUL (strcoll in the C locale) for a
 * reply, and whole byte strings for STORE, as Redis 7 does.
 *
 * The elements are copied into one arena first, so neither lookups of BY/GET keys nor a STORE
 * onto the sorted key itself can invalidate them.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "commands/commands.h"
#include "core/number.h"
#include "engines/hash/hash.h"
#include "engines/list/list.h"
#include "engines/set/set.h"
#include "engines/string_value.h"
#include "engines/zset/zset.h"
#include "exec/blocking.h"
#include "exec/db.h"
#include "core/bytes.h"
#include "exec/lookup.h"
#include "exec/transaction.h"

/* ---- the elements, copied ---- */

typedef struct sort_item {
    size_t offset;              /* the element's bytes in the arena */
    uint32_t length;
    uint8_t has_weight;         /* ALPHA BY: a weight was found */
    double score;               /* numeric: the weight */
    size_t weight_offset;       /* ALPHA BY: the weight's bytes, copied into the arena too (a later */
    uint32_t weight_length;     /* lookup may expire a hash's fields under a pointer into it) */
} sort_item_t;

typedef struct sort_vector {
    sort_item_t *items;
    size_t count, capacity;
    uint8_t *arena;
    size_t arena_length, arena_capacity;
    int failed;                 /* out of memory */
} sort_vector_t;

/* Copy bytes to the arena's end: 0 and *offset, or -1 (v->failed) when out of memory. */
static int arena_append(sort_vector_t *v, const uint8_t *data, size_t length, size_t *offset) {
    if (v->failed) return -1;
    if (length > v->arena_capacity - v->arena_length) {
        size_t capacity = v->arena_capacity ? v->arena_capacity : 256;
        while (capacity - v->arena_length < length) capacity *= 2;
        uint8_t *grown = realloc(v->arena, capacity);
        if (!grown) { v->failed = 1; return -1; }
        v->arena = grown;
        v->arena_capacity = capacity;
    }
    if (length) memcpy(v->arena + v->arena_length, data, length);
    *offset = v->arena_length;
    v->arena_length += length;
    return 0;
}

static void vector_push(sort_vector_t *v, const uint8_t *data, size_t length) {
    if (v->failed) return;
    if (v->count == v->capacity) {
        size_t capacity = v->capacity ? v->capacity * 2 : 16;
        sort_item_t *grown = realloc(v->items, capacity * sizeof *grown);
        if (!grown) { v->failed = 1; return; }
        v->items = grown;
        v->capacity = capacity;
    }
    size_t offset;
    if (arena_append(v, data, length, &offset) != 0) return;
    v->items[v->count++] = (sort_item_t){.offset = offset, .length = (uint32_t)length};
}

static void vector_release(sort_vector_t *v) {
    free(v->items);
    free(v->arena);
}

static inline gr_bytes_t element_of(const sort_vector_t *v, const sort_item_t *item) {
    return (gr_bytes_t){v->arena + item->offset, item->length};
}

static inline gr_bytes_t weight_of(const sort_vector_t *v, const sort_item_t *item) {
    return (gr_bytes_t){v->arena + item->weight_offset, item->weight_length};
}

/* ---- what can be sorted ---- */

/* The number of elements of a sortable value, or -1 for a type SORT refuses (WRONGTYPE). */
static long sortable_length(const gr_ks_entry_t *entry) {
    if (entry->type == GR_TYPE_LIST) return (long)gr_list_length(entry->value);
    if (entry->type == GR_TYPE_SET) return (long)gr_set_count(entry->value);
    if (entry->type == GR_TYPE_ZSET) return (long)gr_zset_count(entry->value);
    return -1;
}

/* Copy elements [start, start + count) in list order, or, with reverse, the count elements
 * from index `start` towards the head (Redis's DESC without sorting). */
static void collect_list_range(sort_vector_t *v, const gr_list_t *list, long start, long count, int reverse) {
    gr_list_iter_t iter;
    gr_value_t item;
    gr_list_iter_init(&iter, list, start, reverse ? GR_LIST_TAIL : GR_LIST_HEAD);
    for (long i = 0; i < count && gr_list_iter_next(&iter, &item); i++) vector_push(v, item.data, item.length);
}

/* The same for a sorted set: ranks from `start` up, or with reverse down (Redis walks its
 * skiplist from the rank the same way). */
static void collect_zset_range(sort_vector_t *v, const gr_zset_t *zset, long start, long count, int reverse) {
    gr_zset_entry_t entry;
    if (!reverse) {
        gr_zset_iter_t iter;
        gr_zset_iter_start(zset, (size_t)start, &iter);
        for (long i = 0; i < count && gr_zset_iter_next(&iter, &entry); i++) vector_push(v, entry.member, entry.member_length);
        return;
    }
    for (long i = 0; i < count && start - i >= 0 && gr_zset_at(zset, (size_t)(start - i), &entry); i++)
        vector_push(v, entry.member, entry.member_length);
}

/* Every element of a sortable value, in its own order. */
static void collect_elements(sort_vector_t *v, const gr_ks_entry_t *entry) {
    if (entry->type == GR_TYPE_LIST) {
        collect_list_range(v, entry->value, 0, (long)gr_list_length(entry->value), 0);
        return;
    }
    if (entry->type == GR_TYPE_SET) {   /* every member (a set has no order of its own) */
        gr_set_iter_t iter;
        gr_set_member_t member;
        gr_set_iter_start(entry->value, &iter);
        while (gr_set_iter_next(&iter, &member)) vector_push(v, member.data, member.length);
        return;
    }
    if (entry->type == GR_TYPE_ZSET) collect_zset_range(v, entry->value, 0, (long)gr_zset_count(entry->value), 0);
}

/* ---- BY and GET patterns ---- */

/* A pattern's length as C sees it (Redis treats patterns as C strings: up to the first NUL). */
static size_t c_length(gr_bytes_t text) {
    const uint8_t *nul = memchr(text.data, 0, text.length);
    return nul ? (size_t)(nul - text.data) : text.length;
}

static const uint8_t *find_arrow(const uint8_t *from, const uint8_t *end) {
    for (const uint8_t *p = from; p + 1 < end; p++)
        if (p[0] == '-' && p[1] == '>') return p;
    return NULL;
}

/* A hash field's value, for a "key->field" pattern: 1 with *value, or 0 when the key is no hash
 * or has no such field. A field whose TTL has passed counts as absent; it is left for the hash
 * commands' lazy expiry or the cron to reclaim (SORT only reads). */
static int hash_field_of(const gr_server_t *db, const gr_ks_entry_t *entry, gr_bytes_t field, gr_bytes_t *value) {
    if (entry->type != GR_TYPE_HASH) return 0;
    gr_hash_entry_t found;
    if (!gr_hash_get(entry->value, field.data, field.length, &found)) return 0;
    const int64_t expire_at = gr_hash_field_expire(entry->value, field.data, field.length);
    if (expire_at >= 0 && expire_at <= gr_db_now_ms(db)) return 0;
    *value = (gr_bytes_t){found.value, (uint32_t)found.value_length};
    return 1;
}

/* Redis's lookupKeyByPattern: "#" is the element itself; otherwise the first '*' is replaced
 * by the element and the key read (a string; or, after "->", a hash's field). 1 with *value,
 * or 0 when there is no '*', no key, or a key of another type. */
static int lookup_by_pattern(gr_server_t *db, gr_bytes_t pattern, gr_bytes_t element, gr_bytes_t *value,
                             uint8_t **scratch, size_t *scratch_capacity) {
    const size_t visible = c_length(pattern);
    if (visible == 1 && pattern.data[0] == '#') {
        *value = element;
        return 1;
    }
    const uint8_t *star = memchr(pattern.data, '*', visible);
    if (!star) return 0;
    const uint8_t *arrow = find_arrow(star + 1, pattern.data + visible);
    size_t field_length = 0;
    if (arrow && arrow + 2 < pattern.data + visible)
        field_length = pattern.length - (size_t)(arrow - pattern.data) - 2;
    const size_t prefix = (size_t)(star - pattern.data);
    const size_t postfix = pattern.length - (prefix + 1) - (field_length ? field_length + 2 : 0);
    const size_t key_length = prefix + element.length + postfix;
    if (key_length > *scratch_capacity) {
        uint8_t *grown = realloc(*scratch, key_length);
        if (!grown) return 0;
        *scratch = grown;
        *scratch_capacity = key_length;
    }
    uint8_t *key = *scratch;
    memcpy(key, pattern.data, prefix);
    if (element.length) memcpy(key + prefix, element.data, element.length);
    memcpy(key + prefix + element.length, star + 1, postfix);
    gr_ks_entry_t *entry = gr_db_lookup(db, (gr_bytes_t){key, (uint32_t)key_length});
    if (!entry) return 0;
    if (field_length) {
        gr_bytes_t field = {arrow + 2, (uint32_t)field_length};
        return hash_field_of(db, entry, field, value);
    }
    if (entry->type != GR_TYPE_STRING) return 0;
    const gr_string_t *s = entry->value;
    *value = (gr_bytes_t){s->data, s->length};
    return 1;
}

/* ---- weights and order ---- */

/* Redis's numeric weight: strtod over the text up to its first NUL (so "" is 0, leading space
 * and hexadecimal are numbers), refusing trailing bytes, NaN and ERANGE (overflow, and an
 * underflow, subnormals included, as glibc reports it). 0 and *score, or -1.
 * (redis-server 7.0 does not clear errno before its strtod, so after one ERANGE it refuses
 * later SORTs of non-integer weights until something else resets errno; goblin does not copy
 * that.) */
static int parse_score(gr_bytes_t text, double *score, char *buffer, size_t buffer_size, char **heap) {
    const size_t length = c_length(text);
    char *copy = buffer;
    if (length + 1 > buffer_size) {
        char *grown = realloc(*heap, length + 1);
        if (!grown) return -1;
        *heap = copy = grown;
    }
    memcpy(copy, text.data, length);
    copy[length] = '\0';
    char *end;
    errno = 0;
    const double value = strtod(copy, &end);
    if (*end != '\0' || errno == ERANGE || isnan(value)) return -1;
    *score = value;
    return 0;
}

typedef struct sort_order {
    const sort_vector_t *vector;
    int desc, alpha, by_pattern, store;
} sort_order_t;

/* Binary order: bytes, then length (Redis's compareStringObjects). */
static int compare_binary(gr_bytes_t a, gr_bytes_t b) {
    const size_t n = a.length < b.length ? a.length : b.length;
    const int cmp = n ? memcmp(a.data, b.data, n) : 0;
    if (cmp) return cmp;
    return a.length < b.length ? -1 : a.length > b.length;
}

/* strcoll in the C locale: unsigned bytes up to the first NUL of either. */
static int compare_collated(gr_bytes_t a, gr_bytes_t b) {
    return compare_binary((gr_bytes_t){a.data, (uint32_t)c_length(a)}, (gr_bytes_t){b.data, (uint32_t)c_length(b)});
}

static int compare_items(const void *left, const void *right, void *context) {
    const sort_order_t *order = context;
    const sort_item_t *a = left, *b = right;
    int cmp;
    if (!order->alpha) {
        if (a->score > b->score) cmp = 1;
        else if (a->score < b->score) cmp = -1;
        else cmp = compare_binary(element_of(order->vector, a), element_of(order->vector, b));
    } else if (order->by_pattern) {
        if (!a->has_weight || !b->has_weight) cmp = a->has_weight == b->has_weight ? 0 : a->has_weight ? 1 : -1;
        else {
            gr_bytes_t x = weight_of(order->vector, a), y = weight_of(order->vector, b);
            cmp = order->store ? compare_binary(x, y) : compare_collated(x, y);
        }
    } else {
        gr_bytes_t x = element_of(order->vector, a), y = element_of(order->vector, b);
        cmp = order->store ? compare_binary(x, y) : compare_collated(x, y);
    }
    return order->desc ? -cmp : cmp;
}

/* ---- the partial sort SORT BY ... LIMIT uses ---- */

/* Bentley and McIlroy's quicksort ("Engineering a Sort Function", 1993, as in 4.4BSD's qsort),
 * which recurses only into the parts that overlap the LIMIT range [low, high], so the items
 * outside it are left partly ordered. Redis sorts BY a pattern with a LIMIT this way, and items
 * that compare equal (ALPHA weights that are equal or missing) then end up in this algorithm's
 * order, which a reply shows: the same steps give the same order. (No "no swaps: finish by
 * insertion" shortcut: redis-server 7.0's partial sort has none, measured against it.) */
static inline void swap_items(sort_item_t *a, sort_item_t *b) {
    sort_item_t t = *a;
    *a = *b;
    *b = t;
}

static sort_item_t *median_of_three(sort_item_t *a, sort_item_t *b, sort_item_t *c, void *order) {
    return compare_items(a, b, order) < 0
               ? (compare_items(b, c, order) < 0 ? b : compare_items(a, c, order) < 0 ? c : a)
               : (compare_items(b, c, order) > 0 ? b : compare_items(a, c, order) < 0 ? a : c);
}

static void insertion_sort(sort_item_t *a, size_t n, void *order) {
    for (sort_item_t *m = a + 1; m < a + n; m++)
        for (sort_item_t *l = m; l > a && compare_items(l - 1, l, order) > 0; l--) swap_items(l, l - 1);
}

static int overlaps(const sort_item_t *first, size_t n, const sort_item_t *low, const sort_item_t *high) {
    return !(high < first || low > first + n - 1);
}

static void partial_sort(sort_item_t *a, size_t n, void *order, const sort_item_t *low, const sort_item_t *high) {
    for (;;) {
        if (n < 7) {
            insertion_sort(a, n, order);
            return;
        }
        sort_item_t *pm = a + n / 2;
        if (n > 7) {
            sort_item_t *pl = a, *pn = a + n - 1;
            if (n > 40) {
                const size_t d = n / 8;
                pl = median_of_three(pl, pl + d, pl + 2 * d, order);
                pm = median_of_three(pm - d, pm, pm + d, order);
                pn = median_of_three(pn - 2 * d, pn - d, pn, order);
            }
            pm = median_of_three(pl, pm, pn, order);
        }
        swap_items(a, pm);
        sort_item_t *pa = a + 1, *pb = a + 1, *pc = a + n - 1, *pd = a + n - 1;
        for (;;) {
            int r;
            while (pb <= pc && (r = compare_items(pb, a, order)) <= 0) {
                if (r == 0) swap_items(pa++, pb);
                pb++;
            }
            while (pb <= pc && (r = compare_items(pc, a, order)) >= 0) {
                if (r == 0) swap_items(pc, pd--);
                pc--;
            }
            if (pb > pc) break;
            swap_items(pb++, pc--);
        }
        sort_item_t *pn = a + n;
        size_t r = (size_t)(pa - a) < (size_t)(pb - pa) ? (size_t)(pa - a) : (size_t)(pb - pa);
        for (size_t i = 0; i < r; i++) swap_items(a + i, pb - r + i);
        r = (size_t)(pd - pc) < (size_t)(pn - pd - 1) ? (size_t)(pd - pc) : (size_t)(pn - pd - 1);
        for (size_t i = 0; i < r; i++) swap_items(pb + i, pn - r + i);
        if ((r = (size_t)(pb - pa)) > 1 && overlaps(a, r, low, high)) partial_sort(a, r, order, low, high);
        if ((r = (size_t)(pd - pc)) <= 1) return;
        a = pn - r;   /* the right part: iterate rather than recurse */
        n = r;
        if (!overlaps(a, n, low, high)) return;
    }
}

/* ---- SORT / SORT_RO ---- */

typedef struct sort_options {
    int desc, alpha, dont_sort;
    long limit_start, limit_count;
    gr_bytes_t by;              /* by.data NULL: none */
    gr_bytes_t store;           /* store.data NULL: none */
    gr_bytes_t *gets;           /* GET patterns in order (malloc'd: at most argc / 2) */
    size_t get_count;
} sort_options_t;

/* 0, or -1 with the error replied (o->gets is freed by the caller either way). */
static int parse_options(size_t argc, const uint8_t *const *argv, const size_t *argv_length, int readonly,
                         sort_options_t *o, gr_reply_t *reply) {
    memset(o, 0, sizeof *o);
    o->limit_count = -1;
    o->gets = malloc((argc / 2 + 1) * sizeof *o->gets);
    if (!o->gets) {
        gr_reply_oom(reply);
        return -1;
    }
    for (size_t j = 2; j < argc; j++) {
        const size_t left = argc - j - 1;
        const uint8_t *word = argv[j];
        const size_t length = argv_length[j];
        if (gr_word_is(word, length, "asc")) {
            o->desc = 0;
        } else if (gr_word_is(word, length, "desc")) {
            o->desc = 1;
        } else if (gr_word_is(word, length, "alpha")) {
            o->alpha = 1;
        } else if (gr_word_is(word, length, "limit") && left >= 2) {
            int64_t start, count;
            if (gr_bytes_to_int64(argv[j + 1], argv_length[j + 1], &start) != 0 ||
                gr_bytes_to_int64(argv[j + 2], argv_length[j + 2], &count) != 0) {
                gr_reply_error_text(reply, GR_ERR_NOT_INTEGER, "ERR value is not an integer or out of range");
                return -1;
            }
            o->limit_start = (long)start;
            o->limit_count = (long)count;
            j += 2;
        } else if (!readonly && gr_word_is(word, length, "store") && left >= 1) {
            o->store = (gr_bytes_t){argv[j + 1], (uint32_t)argv_length[j + 1]};
            j++;
        } else if (gr_word_is(word, length, "by") && left >= 1) {
            o->by = (gr_bytes_t){argv[j + 1], (uint32_t)argv_length[j + 1]};
            o->dont_sort = memchr(o->by.data, '*', c_length(o->by)) == NULL;   /* a constant weighs nothing */
            j++;
        } else if (gr_word_is(word, length, "get") && left >= 1) {
            o->gets[o->get_count++] = (gr_bytes_t){argv[j + 1], (uint32_t)argv_length[j + 1]};
            j++;
        } else {
            gr_reply_error_text(reply, GR_ERR_SYNTAX, "ERR syntax error");
            return -1;
        }
    }
    return 0;
}

/* Replace (or, for an empty result, delete) the STORE key with the list of values. */
static void store_result(gr_server_t *db, const sort_options_t *o, gr_list_t *result, int64_t stored, gr_reply_t *reply) {
    if (stored > 0) {
        if (gr_db_set_key(db, o->store, GR_TYPE_LIST, result) != 0) {
            gr_list_free(result);
            gr_reply_oom(reply);
            return;
        }
        gr_db_count_changes(db, stored);
    } else {
        gr_list_free(result);
        if (gr_db_find_live(db, o->store) && gr_db_delete_key(db, o->store)) gr_db_count_changes(db, 1);
    }
    gr_reply_integer(reply, stored);
}

static void sort_generic(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                         gr_reply_t *reply, int readonly) {
    sort_options_t o;
    if (parse_options(argc, argv, argv_length, readonly, &o, reply) != 0) {
        free(o.gets);
        return;
    }
    gr_bytes_t key = {argv[1], (uint32_t)argv_length[1]};
    gr_ks_entry_t *entry = gr_db_lookup(db, key);
    long length = 0;
    if (entry && (length = sortable_length(entry)) < 0) {
        free(o.gets);
        gr_reply_wrongtype(reply);
        return;
    }
    /* a missing key sorts as an empty list; lists and sorted sets have an order of their own */
    const int is_list = !entry || entry->type == GR_TYPE_LIST;
    const int is_zset = entry && entry->type == GR_TYPE_ZSET;
    if (o.dont_sort && !is_list && !is_zset && o.store.data) {   /* a STOREd set is ordered, so the result is reproducible */
        o.dont_sort = 0;
        o.alpha = 1;
        o.by.data = NULL;
    }

    /* LIMIT, clamped to the length */
    long start = o.limit_start < 0 ? 0 : o.limit_start > length ? length : o.limit_start;
    long count = o.limit_count < -1 ? -1 : o.limit_count > length ? length : o.limit_count;
    long end = count < 0 ? length - 1 : start + count - 1;
    if (start >= length) {
        start = length - 1;
        end = length - 2;
    }
    if (end >= length) end = length - 1;

    sort_vector_t v = {0};
    if (entry && is_list && o.dont_sort) {
        /* list order (reversed by DESC), reading only the LIMIT range */
        if (end >= start) collect_list_range(&v, entry->value, o.desc ? length - start - 1 : start, end - start + 1, o.desc);
        end -= start;
        start = 0;
    } else if (is_zset && o.dont_sort) {
        /* score order (reversed by DESC), reading only the LIMIT range, as Redis's skiplist walk */
        if (end >= start) collect_zset_range(&v, entry->value, o.desc ? length - start - 1 : start, end - start + 1, o.desc);
        end -= start;
        start = 0;
    } else if (entry) {
        collect_elements(&v, entry);
    }
    if (v.failed) {
        vector_release(&v);
        free(o.gets);
        gr_reply_oom(reply);
        return;
    }

    int conversion_error = 0;
    uint8_t *key_scratch = NULL;
    size_t key_scratch_capacity = 0;
    if (!o.dont_sort) {
        char number[128];
        char *number_heap = NULL;
        for (size_t j = 0; j < v.count; j++) {
            sort_item_t *item = &v.items[j];
            gr_bytes_t weight;
            if (o.by.data) {
                if (!lookup_by_pattern(db, o.by, element_of(&v, item), &weight, &key_scratch, &key_scratch_capacity))
                    continue;
            } else {
                weight = element_of(&v, item);
            }
            if (o.alpha) {
                if (o.by.data && arena_append(&v, weight.data, weight.length, &item->weight_offset) == 0) {
                    item->weight_length = weight.length;
                    item->has_weight = 1;
                }
            } else if (parse_score(weight, &item->score, number, sizeof number, &number_heap) != 0) {
                conversion_error = 1;
            }
        }
        free(number_heap);
        if (v.failed) {
            free(key_scratch);
            free(o.gets);
            vector_release(&v);
            gr_reply_oom(reply);
            return;
        }
        sort_order_t order = {&v, o.desc, o.alpha, o.by.data != NULL, o.store.data != NULL};
        if (v.count > 1 && end >= start) {   /* nothing picked: no order to find */
            if (o.by.data && (start != 0 || end != (long)v.count - 1))
                partial_sort(v.items, v.count, &order, v.items + start, v.items + end);
            else
                qsort_r(v.items, v.count, sizeof v.items[0], compare_items, &order);
        }
    }

    const long picked = end - start + 1;
    const int64_t output = o.get_count ? (int64_t)o.get_count * picked : picked;
    if (conversion_error) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR One or more scores can't be converted into double");
    } else if (!o.store.data) {
        gr_reply_array_begin(reply, (size_t)output);
        for (long j = start; j <= end; j++) {
            gr_bytes_t element = element_of(&v, &v.items[j]);
            if (!o.get_count) gr_reply_bulk(reply, element.data, element.length);
            for (size_t g = 0; g < o.get_count; g++) {
                gr_bytes_t value;
                if (lookup_by_pattern(db, o.gets[g], element, &value, &key_scratch, &key_scratch_capacity))
                    gr_reply_bulk(reply, value.data, value.length);
                else
                    gr_reply_nil(reply);
            }
        }
    } else {
        gr_list_t *result = gr_list_new_for(&db->list_config, db->list_target);
        int failed = result == NULL;
        for (long j = start; j <= end && !failed; j++) {
            gr_bytes_t element = element_of(&v, &v.items[j]);
            if (!o.get_count) failed = gr_list_push(result, GR_LIST_TAIL, element.data, element.length) != 0;
            for (size_t g = 0; g < o.get_count && !failed; g++) {
                gr_bytes_t value = {(const uint8_t *)"", 0};   /* a missing GET stores "" */
                lookup_by_pattern(db, o.gets[g], element, &value, &key_scratch, &key_scratch_capacity);
                failed = gr_list_push(result, GR_LIST_TAIL, value.data, value.length) != 0;
            }
        }
        if (failed) {
            if (result) gr_list_free(result);
            gr_reply_oom(reply);
        } else {
            store_result(db, &o, result, output, reply);
        }
    }
    free(key_scratch);
    free(o.gets);
    vector_release(&v);
}

void gr_cmd_sort(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    sort_generic(db, argc, argv, argv_length, reply, 0);
}

void gr_cmd_sort_ro(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                    gr_reply_t *reply) {
    sort_generic(db, argc, argv, argv_length, reply, 1);
}

/* ---- COMMAND GETKEYS: the keys a SORT line names ---- */

/* Redis's sortGetKeys: argv[1], then the last STORE's key, skipping the arguments of LIMIT (2),
 * GET and BY (1) so that a pattern spelled "store" is not taken for the option. */
static size_t sort_keys(size_t argc, const uint8_t *const *argv, const size_t *argv_length, size_t *positions,
                        const char **flags, size_t capacity, int readonly) {
    if (capacity < 2 || argc < 2) return 0;
    positions[0] = 1;
    flags[0] = "RO access";
    size_t count = 1;
    for (size_t i = 2; i < argc && !readonly; i++) {
        if (gr_word_is(argv[i], argv_length[i], "limit")) i += 2;
        else if (gr_word_is(argv[i], argv_length[i], "get") || gr_word_is(argv[i], argv_length[i], "by")) i += 1;
        else if (gr_word_is(argv[i], argv_length[i], "store") && i + 1 < argc) {
            positions[1] = i + 1;
            flags[1] = "OW update";
            count = 2;
        }
    }
    return count;
}

size_t gr_sort_find_keys(size_t argc, const uint8_t *const *argv, const size_t *argv_length, size_t *positions,
                         const char **flags, size_t capacity) {
    return sort_keys(argc, argv, argv_length, positions, flags, capacity, 0);
}

size_t gr_sort_ro_find_keys(size_t argc, const uint8_t *const *argv, const size_t *argv_length, size_t *positions,
                            const char **flags, size_t capacity) {
    return sort_keys(argc, argv, argv_length, positions, flags, capacity, 1);
}
