/* command.c — the registry exec builds from the command table (command.h): name lookup,
 * arity, argv -> typed request (gr_request_from_argv), template -> command, and the flag bits
 * admission reads. The rows themselves are the commands/<family>.def files, handed over by
 * commands/command_table.c when the library loads; nothing here names a command.
 */
#include "exec/command.h"
#include "exec/blocking.h"
#include "core/bytes.h"
#include "core/number.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_COMMANDS 512        /* = GR_COMMAND_STAT_SLOTS (exec/db.h) */
#define LOOKUP_SLOTS 1024       /* power of two, well above the command count */
#define MAX_TEMPLATE 1024       /* template ids the template -> command index covers */

static struct registry {
    const gr_command_t *commands;
    size_t count;
    const gr_command_t *subcommands;
    size_t subcommand_count;
    uint32_t flags[MAX_COMMANDS];
    int16_t by_name[LOOKUP_SLOTS];            /* open addressing, -1 empty */
    int16_t first_of_template[MAX_TEMPLATE];  /* -1: no command; then next_of_template */
    int16_t next_of_template[MAX_COMMANDS];
    uint8_t template_blocks[MAX_TEMPLATE];    /* 1: a row of this template can block */
    uint64_t argv_blocking_name_lengths;      /* bit n: an argv row of an n-byte name can block */
    int16_t first_subcommand[MAX_COMMANDS];   /* a container's first subcommand row, -1: none */
    uint32_t subcommand_flags[MAX_COMMANDS];  /* GR_CMD_FLAG_* of each subcommand row */
} registry;

static const char *const flag_names[] = {GR_CMD_FLAG_NAMES};

static uint32_t name_hash(const uint8_t *name, size_t length) {
    uint32_t hash = 2166136261u;   /* FNV-1a over the lowercased name */
    for (size_t i = 0; i < length; i++) hash = (hash ^ (uint32_t)tolower(name[i])) * 16777619u;
    return hash;
}


static uint32_t flag_bits(const char *words) {
    uint32_t bits = 0;
    const char *at = words ? words : "";
    while (*at) {
        while (*at == ' ') at++;
        size_t n = 0;
        while (at[n] && at[n] != ' ') n++;
        for (size_t f = 0; f < sizeof flag_names / sizeof flag_names[0]; f++)
            if (n && strlen(flag_names[f]) == n && strncmp(flag_names[f], at, n) == 0) bits |= 1u << f;
        at += n;
    }
    return bits;
}

void gr_exec_install_commands(const gr_command_t *commands, size_t count, const gr_command_t *subcommands,
                              size_t subcommand_count) {
    if (count > MAX_COMMANDS) count = MAX_COMMANDS;
    registry.commands = commands;
    registry.count = count;
    registry.subcommands = subcommands;
    registry.subcommand_count = subcommand_count;
    for (size_t i = 0; i < subcommand_count && i < MAX_COMMANDS; i++) registry.subcommand_flags[i] = flag_bits(subcommands[i].flags);
    memset(registry.by_name, 0xff, sizeof registry.by_name);
    memset(registry.first_of_template, 0xff, sizeof registry.first_of_template);
    memset(registry.first_subcommand, 0xff, sizeof registry.first_subcommand);
    int16_t last_of_template[MAX_TEMPLATE];
    for (size_t i = 0; i < count; i++) {
        const gr_command_t *c = &commands[i];
        registry.flags[i] = flag_bits(c->flags);
        uint32_t slot = name_hash((const uint8_t *)c->name, strlen(c->name)) & (LOOKUP_SLOTS - 1);
        while (registry.by_name[slot] >= 0) slot = (slot + 1) & (LOOKUP_SLOTS - 1);
        registry.by_name[slot] = (int16_t)i;
        registry.next_of_template[i] = -1;
        if (c->blocking && c->template_id) registry.template_blocks[c->template_id] = 1;
        if (c->blocking && !c->template_id && strlen(c->name) < 64)
            registry.argv_blocking_name_lengths |= 1ull << strlen(c->name);
        if (c->template_id == 0 || c->template_id >= MAX_TEMPLATE || !c->handler) continue;
        if (registry.first_of_template[c->template_id] < 0) registry.first_of_template[c->template_id] = (int16_t)i;
        else registry.next_of_template[last_of_template[c->template_id]] = (int16_t)i;
        last_of_template[c->template_id] = (int16_t)i;
    }
}

size_t gr_command_count(void) { return registry.count; }

/* ---- subcommands by their full name ("client|list"): commandstats, CLIENT LIST's cmd= ---- */

static size_t container_length(const char *name) {
    const char *bar = strchr(name, '|');
    return bar ? (size_t)(bar - name) : 0;
}

int gr_command_stat_slot(int index, size_t argc, const uint8_t *const *argv, const size_t *argv_length) {
    if (index < 0 || (size_t)index >= registry.count || argc < 2) return index;
    if (registry.first_subcommand[index] == -1) {   /* found once, remembered (-2: none) */
        const char *name = registry.commands[index].name;
        size_t n = strlen(name);
        registry.first_subcommand[index] = -2;
        for (size_t i = 0; i < registry.subcommand_count; i++)
            if (container_length(registry.subcommands[i].name) == n && !strncmp(registry.subcommands[i].name, name, n)) {
                registry.first_subcommand[index] = (int16_t)i;
                break;
            }
    }
    if (registry.first_subcommand[index] < 0) return index;
    const char *container = registry.commands[index].name;
    size_t n = strlen(container);
    for (size_t i = (size_t)registry.first_subcommand[index]; i < registry.subcommand_count; i++) {
        const char *name = registry.subcommands[i].name;
        if (container_length(name) != n || strncmp(name, container, n) != 0) break;   /* rows of a container are together */
        const char *sub = name + n + 1;
        if (strlen(sub) == argv_length[1] && !strncasecmp(sub, (const char *)argv[1], argv_length[1])) {
            size_t slot = registry.count + i;
            return slot < MAX_COMMANDS ? (int)slot : index;
        }
    }
    return index;
}

const char *gr_command_stat_name(size_t slot) {
    if (slot < registry.count) return registry.commands[slot].name;
    if (slot - registry.count < registry.subcommand_count) return registry.subcommands[slot - registry.count].name;
    return NULL;
}

const gr_command_t *gr_command_at(size_t index) {
    return index < registry.count ? &registry.commands[index] : NULL;
}

const gr_command_t *gr_subcommand_at(size_t index) {
    return index < registry.subcommand_count ? &registry.subcommands[index] : NULL;
}

const char *gr_command_name(size_t index, int *arity) {
    const gr_command_t *c = gr_command_at(index);
    if (!c) return NULL;
    if (arity) *arity = c->arity;
    return c->name;
}

uint32_t gr_command_flags(int index) {
    if (index < 0) return 0;
    if ((size_t)index < registry.count) return registry.flags[index];
    size_t sub = (size_t)index - registry.count;   /* a stat slot past the commands: a subcommand's */
    return sub < registry.subcommand_count && sub < MAX_COMMANDS ? registry.subcommand_flags[sub] : 0;
}

uint32_t gr_command_call_flags(int index, size_t argc, const uint8_t *const *argv, const size_t *argv_length) {
    return gr_command_flags(gr_command_stat_slot(index, argc, argv, argv_length));   /* a subcommand's own row */
}

int gr_command_denies_oom(int index) { return (gr_command_flags(index) & GR_CMD_FLAG_DENYOOM) != 0; }

/* Redis's populateCommandLegacyRangeSpec: one range covering contiguous step-1 range specs;
 * a command any of whose keys it cannot describe is "movablekeys". */
void gr_command_legacy_range(const gr_command_t *c, int *first, int *last, int *step, int *movable) {
    *first = *last = *step = 0;
    *movable = c && c->find_keys != NULL;   /* its own key finder: keys the specs cannot place */
    size_t specs = 0;
    while (c && specs < GR_MAX_KEY_SPECS && c->keys[specs].begin) specs++;
    if (specs == 0) return;
    for (size_t i = 0; i < specs; i++)
        if (c->keys[i].keyword) {   /* keys found by a keyword: no fixed positions */
            *movable = 1;
            return;
        }
    if (specs == 1 && !c->keys[0].keynum) {
        *first = c->keys[0].begin;
        *last = c->keys[0].last >= 0 ? c->keys[0].begin + c->keys[0].last : c->keys[0].last;
        *step = c->keys[0].step;
        return;
    }
    int lowest = 1 << 30, highest = 0, previous = 0;
    for (size_t i = 0; i < specs; i++) {
        const gr_key_spec_t *spec = &c->keys[i];
        if (spec->keynum || spec->step != 1 || (previous && previous != spec->begin - 1)) {
            *movable = 1;
            continue;
        }
        if (spec->begin < lowest) lowest = spec->begin;
        int absolute = spec->last >= 0 ? spec->begin + spec->last : spec->last;
        if ((unsigned)absolute > (unsigned)highest) highest = absolute;   /* negative (from the end) wins */
        previous = highest;
    }
    if (lowest == 1 << 30) return;
    *first = lowest;
    *last = highest;
    *step = 1;
}

int gr_command_facts(size_t index, gr_command_facts_t *facts) {
    const gr_command_t *c = gr_command_at(index);
    if (!c) return -1;
    int movable;
    memset(facts, 0, sizeof *facts);
    facts->name = c->name;
    facts->arity = c->arity;
    facts->template_id = c->handler ? c->template_id : 0;
    facts->engine = c->engine;
    facts->has_builder = c->build != NULL;
    facts->flags = registry.flags[index];
    gr_command_legacy_range(c, &facts->first_key, &facts->last_key, &facts->key_step, &movable);
    if (movable) facts->flags |= GR_CMD_FLAG_MOVABLEKEYS;
    return 0;
}

int gr_command_index(const uint8_t *name, size_t length) {
    uint32_t slot = name_hash(name, length) & (LOOKUP_SLOTS - 1);
    for (int16_t at; (at = registry.by_name[slot]) >= 0; slot = (slot + 1) & (LOOKUP_SLOTS - 1)) {
        const char *candidate = registry.commands[at].name;
        if (strlen(candidate) == length && strncasecmp(candidate, (const char *)name, length) == 0) return at;
    }
    return -1;
}

static int matches(const gr_command_t *c, const gr_request_t *r) {
    const gr_request_match_t *m = &c->match;
    if (c->engine != r->engine) return 0;
    if ((m->fields & GR_MATCH_END) && m->end != r->end) return 0;
    if ((m->fields & GR_MATCH_TO_END) && m->to_end != r->to_end) return 0;
    if ((m->fields & GR_MATCH_FLAG) && m->flag != r->flag) return 0;
    if ((m->fields & GR_MATCH_COUNT) && m->count != r->count) return 0;
    return 1;
}

int gr_command_index_of_request(const gr_request_t *request) {
    if (request->template_id >= MAX_TEMPLATE) return -1;
    for (int16_t at = registry.first_of_template[request->template_id]; at >= 0; at = registry.next_of_template[at])
        if (matches(&registry.commands[at], request)) return at;
    return -1;
}

const char *gr_request_command_name(const gr_request_t *request) {
    int index = gr_command_index_of_request(request);
    return index >= 0 ? registry.commands[index].name : NULL;
}

/* ---- argv -> request ---- */

static int refuse(gr_build_error_t *error, gr_error_code_t code, const char *text) {
    error->code = code;
    snprintf(error->text, sizeof error->text, "%s", text);
    return -1;
}

/* Redis's text: the name and up to 128 bytes of the arguments, quoted, newlines blanked. */
static int unknown_command(gr_build_error_t *error, size_t argc, const uint8_t *const *argv,
                           const size_t *argv_length) {
    char *text = error->text;
    size_t size = sizeof error->text;
    int used = snprintf(text, size, "ERR unknown command '%.*s', with args beginning with: ",
                        (int)(argv_length[0] > 128 ? 128 : argv_length[0]), (const char *)argv[0]);
    size_t args_length = 0;
    for (size_t i = 1; i < argc && args_length < 128 && used < (int)size - 4; i++) {
        int room = 128 - (int)args_length;
        int n = (int)argv_length[i] < room ? (int)argv_length[i] : room;
        int wrote = snprintf(text + used, size - (size_t)used, "'%.*s' ", n, (const char *)argv[i]);
        if (wrote < 0) break;
        used += wrote;
        args_length += (size_t)wrote;
    }
    if (used >= (int)size) used = (int)size - 1;
    for (int i = 0; i < used; i++)
        if (text[i] == '\r' || text[i] == '\n' || text[i] == '\0') text[i] = ' ';
    text[used] = '\0';
    error->code = GR_ERR_UNKNOWN_COMMAND;
    return -1;
}

int gr_command_lookup(size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_build_error_t *error) {
    if (argc == 0) return refuse(error, GR_ERR_MALFORMED, "ERR empty command");
    int index = gr_command_index(argv[0], argv_length[0]);
    if (index < 0) return unknown_command(error, argc, argv, argv_length);
    const gr_command_t *c = &registry.commands[index];
    if (c->arity > 0 ? (int64_t)argc != c->arity : (int64_t)argc < -(int64_t)c->arity) {
        error->code = GR_ERR_WRONG_ARITY;
        snprintf(error->text, sizeof error->text, "ERR wrong number of arguments for '%s' command", c->name);
        return -1;
    }
    return index;
}

int gr_command_build(int index, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                     gr_request_t *request, gr_bytes_t *items, uint32_t item_capacity, gr_build_error_t *error) {
    const gr_command_t *c = &registry.commands[index];
    memset(request, 0, sizeof *request);
    request->items = items;
    request->item_capacity = item_capacity;
    if (!c->build) {   /* no typed form from argv: the request carries argv itself */
        request->template_id = GR_T_COMMAND;
        if (argc > item_capacity) return refuse(error, GR_ERR_TOO_LARGE, "ERR too many arguments");
        for (size_t i = 0; i < argc; i++) items[i] = (gr_bytes_t){argv[i], (uint32_t)argv_length[i]};
        request->item_count = (uint32_t)argc;
        return index;
    }
    request->template_id = c->template_id;
    request->engine = c->engine;
    const gr_request_match_t *m = &c->match;
    if (m->fields & GR_MATCH_END) request->end = m->end;
    if (m->fields & GR_MATCH_TO_END) request->to_end = m->to_end;
    if (m->fields & GR_MATCH_FLAG) request->flag = m->flag;
    if (m->fields & GR_MATCH_COUNT) request->count = m->count;
    if (argc > 1) request->key = (gr_bytes_t){argv[1], (uint32_t)argv_length[1]};
    gr_build_context_t ctx = {argc, argv, argv_length, request, error, c};
    return c->build(&ctx) == 0 ? index : -1;
}

int gr_request_from_argv(size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                         gr_request_t *request, gr_bytes_t *items, uint32_t item_capacity,
                         gr_build_error_t *error) {
    int index = gr_command_lookup(argc, argv, argv_length, error);
    if (index < 0) return -1;
    return gr_command_build(index, argc, argv, argv_length, request, items, item_capacity, error);
}

void gr_reply_build_error(gr_reply_t *reply, const gr_build_error_t *error) {
    gr_reply_error(reply, error->code, error->text, strlen(error->text));
}

int gr_command_check(size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    gr_build_error_t error;
    if (gr_command_lookup(argc, argv, argv_length, &error) >= 0) return 0;
    gr_reply_build_error(reply, &error);
    return -1;
}

/* ---- blocking commands, as the ring client sees them ---- */

int gr_request_may_block(const gr_request_t *request, double *timeout) {
    if (request->template_id != GR_T_COMMAND) {
        if (request->template_id >= MAX_TEMPLATE || !registry.template_blocks[request->template_id]) return 0;
        *timeout = request->timeout;
        return *timeout >= 0;   /* negative: a typed read that may block but was not asked to (no BLOCK) */
    }
    if (request->item_count == 0 || request->items[0].length >= 64 ||
        !(registry.argv_blocking_name_lengths & (1ull << request->items[0].length)))
        return 0;   /* most argv commands: no blocking row has a name of that length */
    const gr_command_t *row = gr_command_at((size_t)gr_command_index(request->items[0].data, request->items[0].length));
    if (!row || !row->blocking) return 0;
    int8_t at = row->blocking->timeout_arg;
    int64_t index = at < 0 ? (int64_t)request->item_count + at : at;
    if (row->blocking->timeout_keyword) {   /* the argument after the keyword (XREAD's BLOCK ms) */
        index = 0;
        for (uint32_t i = 1; i + 1 < request->item_count && !index; i++)
            if (gr_word_is(request->items[i].data, request->items[i].length, row->blocking->timeout_keyword))
                index = (int64_t)i + 1;
    }
    if (index < 1 || index >= (int64_t)request->item_count) return 0;
    const gr_bytes_t *text = &request->items[index];
    char copy[64] = "";
    if (text->length < sizeof copy) memcpy(copy, text->data, text->length);
    *timeout = strtod(copy, NULL);   /* the server checks the text; this only sizes the wait */
    if (row->blocking->timeout_in_ms) *timeout /= 1000.0;
    return 1;
}

int gr_key_spec_positions(const gr_key_spec_t *spec, size_t argc, const uint8_t *const *argv,
                          const size_t *argv_length, size_t *first, size_t *last) {
    const long n = (long)argc;
    long start, end;
    if (spec->keyword) {   /* the keys follow the first keyword from begin on, then a range with limit */
        long found = 0;
        for (long i = spec->begin; i < n - 1 && !found; i++)
            if (gr_word_is(argv[i], argv_length[i], spec->keyword)) found = i + 1;
        if (!found) return -1;
        start = found;
        end = spec->last >= 0 ? start + spec->last
            : spec->limit ? start + ((n - start) / spec->limit + spec->last) : n + spec->last;
    } else if (!spec->keynum) {
        start = spec->begin;
        end = spec->last >= 0 ? start + spec->last : n + spec->last;
    } else {   /* a key count at begin + last, the keys from begin + first */
        long at = spec->begin + spec->last;
        int64_t count;
        if (at >= n || gr_bytes_to_int64(argv[at], argv_length[at], &count) != 0 || count <= 0 || count > n) return -1;
        start = spec->begin + spec->first;
        end = start + (long)(count - 1) * (spec->step > 0 ? spec->step : 1);
    }
    if (end < start || start >= n) return -1;
    *first = (size_t)start;
    *last = (size_t)end;
    return 0;
}
