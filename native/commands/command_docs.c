/* command_docs.c — COMMAND and its subcommands: COUNT, LIST, INFO, DOCS, GETKEYS,
 * GETKEYSANDFLAGS, HELP.
 *
 * Everything COMMAND says comes from the command table's rows (the commands/<family>.def files, read through
 * exec/command.h's registry): names, arities, flags, key specs, ACL categories, group,
 * summary, complexity and arguments, replied in the shapes Redis 7 uses. Subcommands of
 * containers (CONFIG, CLIENT, MEMORY, COMMAND, OBJECT, FUNCTION) are rows named
 * "container|sub"; goblin.pma.X and goblin.seg.X rows carry X's facts and say their engine.
 * Nothing here is on a hot path: argument descriptions are short strings (the DSL below)
 * parsed each time they are replied.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "commands/commands.h"
#include "exec/db.h"
#include "core/bytes.h"
#include "core/glob.h"

/* ---- the rows ---- */

/* A row of the command table (exec/command.h; the rows are the commands/<family>.def files): the top-level
 * commands, then the subcommand rows ("config|get"), seen as one sequence. */
typedef gr_command_t command_doc_t;
typedef gr_key_spec_t key_spec_t;
#define MAX_KEY_SPECS GR_MAX_KEY_SPECS

static inline size_t subcommand_row_count(void) {
    size_t n = 0;
    while (gr_subcommand_at(n)) n++;
    return n;
}

#define DOC_COUNT (gr_command_count() + subcommand_row_count())

static const command_doc_t *doc_at(size_t index) {
    size_t top = gr_command_count();
    return index < top ? gr_command_at(index) : gr_subcommand_at(index - top);
}

/* Redis's orders, which COMMAND INFO follows: flags in commandFlagsReply's order,
 * categories in the ACL category table's. */
static const char *const flag_names[] = {GR_CMD_FLAG_NAMES};
#define FLAG_COUNT (sizeof flag_names / sizeof flag_names[0])

static const char *const acl_names[] = {
    "keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap", "hyperloglog", "geo",
    "stream", "pubsub", "admin", "fast", "slow", "blocking", "dangerous", "connection", "transaction", "scripting",
    "array",   /* Redis 8.8 */
};
#define ACL_COUNT (sizeof acl_names / sizeof acl_names[0])

/* ---- small helpers ---- */

static void reply_text(gr_reply_t *reply, const char *text) { gr_reply_bulk(reply, (const uint8_t *)text, strlen(text)); }
/* Flags, ACL categories and tips are simple strings in Redis's replies; redis-cli asserts it. */
static void reply_flag(gr_reply_t *reply, const char *text) { gr_reply_status(reply, text, strlen(text)); }

/* Each space-separated word of list in turn: returns the word's length (0 at the end). */
static size_t next_word(const char **list, const char **word) {
    const char *at = *list ? *list : "";
    while (*at == ' ') at++;
    size_t n = 0;
    while (at[n] && at[n] != ' ') n++;
    *word = at;
    *list = at + n;
    return n;
}

static size_t word_count(const char *list) {
    const char *word;
    size_t count = 0;
    while (next_word(&list, &word)) count++;
    return count;
}

static int has_word(const char *list, const char *target) {
    const char *word;
    size_t n, target_length = strlen(target);
    while ((n = next_word(&list, &word)))
        if (n == target_length && strncasecmp(word, target, n) == 0) return 1;
    return 0;
}

static void reply_words(gr_reply_t *reply, const char *list) {
    gr_reply_array_begin(reply, word_count(list));
    const char *word;
    size_t n;
    while ((n = next_word(&list, &word))) gr_reply_status(reply, word, n);   /* Redis sends flags as status */
}

static size_t key_spec_count(const command_doc_t *doc) {
    size_t n = 0;
    while (doc && n < MAX_KEY_SPECS && doc->keys[n].begin) n++;
    return n;
}

/* ---- which row describes a name ---- */

/* A command as COMMAND reports it: its name and arity, its row (NULL: none), and for
 * goblin.pma.X / goblin.seg.X the engine whose copy of X it is. */
typedef struct command_ref {
    const char *name;
    int arity;
    const command_doc_t *doc;
    const char *engine;
} command_ref_t;

static const command_doc_t *find_doc(const char *name, size_t length) {
    const command_doc_t *doc;
    for (size_t i = 0; (doc = doc_at(i)); i++)
        if (strlen(doc->name) == length && strncasecmp(doc->name, name, length) == 0) return doc;
    return NULL;
}

static command_ref_t top_level_ref(size_t index) {
    command_ref_t ref = {NULL, 0, NULL, NULL};
    ref.name = gr_command_name(index, &ref.arity);
    if (!ref.name) return ref;
    ref.doc = gr_command_at(index);
    if (ref.doc->engine) ref.engine = ref.doc->engine == 2 ? "pma" : "seg";
    return ref;
}

/* The index of the top-level command named name, or -1. */
static long find_top_level(const uint8_t *name, size_t length) { return gr_command_index(name, length); }

/* The row of container|sub, or NULL. */
static const command_doc_t *find_subcommand(const char *container, const uint8_t *sub, size_t sub_length) {
    char name[96];
    size_t n = strlen(container);
    if (n + 1 + sub_length >= sizeof name) return NULL;
    memcpy(name, container, n);
    name[n] = '|';
    memcpy(name + n + 1, sub, sub_length);
    return find_doc(name, n + 1 + sub_length);
}

/* "config" -> the rows "config|..." in table order: visit each with i from 0. */
static const command_doc_t *subcommand_at(const char *container, size_t *cursor) {
    size_t n = strlen(container);
    for (const command_doc_t *doc; (doc = gr_subcommand_at(*cursor)); (*cursor)++) {
        if (strncasecmp(doc->name, container, n) == 0 && doc->name[n] == '|') { (*cursor)++; return doc; }
    }
    return NULL;
}

static size_t subcommand_count(const command_ref_t *ref) {
    if (ref->engine || strchr(ref->name, '|')) return 0;
    size_t cursor = 0, count = 0;
    while (subcommand_at(ref->name, &cursor)) count++;
    return count;
}

static command_ref_t subcommand_ref(const command_doc_t *doc) {
    command_ref_t ref = {doc->name, doc->arity, doc, NULL};
    return ref;
}

/* A name as COMMAND INFO / DOCS take it: "get", or "config|get" (case-insensitive).
 * Returns 0 when the server has no such command. */
static int resolve(const uint8_t *name, size_t length, command_ref_t *out) {
    const uint8_t *bar = memchr(name, '|', length);
    long index = find_top_level(name, bar ? (size_t)(bar - name) : length);
    if (index < 0) return 0;
    *out = top_level_ref((size_t)index);
    if (!bar) return 1;
    if (out->engine) return 0;
    const command_doc_t *sub = find_subcommand(out->name, bar + 1, length - (size_t)(bar - name) - 1);
    if (!sub) return 0;
    *out = subcommand_ref(sub);
    return 1;
}

/* ---- flags, categories and the legacy key range ---- */

static void legacy_range(const command_doc_t *doc, int *first, int *last, int *step, int *movable) {
    gr_command_legacy_range(doc, first, last, step, movable);
}

static int command_has_flag(const command_doc_t *doc, const char *flag) {
    if (!doc) return 0;
    if (strcmp(flag, "movablekeys") == 0) {
        int first, last, step, movable;
        legacy_range(doc, &first, &last, &step, &movable);
        return movable;
    }
    return has_word(doc->flags, flag);
}

/* Redis's setImplicitACLCategories on top of the row's own categories. */
static int has_category(const command_doc_t *doc, const char *category) {
    if (!doc) return strcmp(category, "slow") == 0;
    if (has_word(doc->acl, category)) return 1;
    static const char *const implied[][2] = {
        {"write", "write"}, {"readonly", "read"}, {"admin", "admin"}, {"admin", "dangerous"},
        {"pubsub", "pubsub"}, {"fast", "fast"}, {"blocking", "blocking"},
    };
    for (size_t i = 0; i < sizeof implied / sizeof implied[0]; i++)
        if (strcmp(implied[i][1], category) == 0 && has_word(doc->flags, implied[i][0])) return 1;
    return strcmp(category, "slow") == 0 && !has_word(doc->flags, "fast");
}

/* ---- COMMAND INFO ---- */

static void reply_key_spec(gr_reply_t *reply, const key_spec_t *spec) {
    gr_reply_map_begin(reply, 3);
    reply_text(reply, "flags");
    reply_words(reply, spec->flags);
    reply_text(reply, "begin_search");
    gr_reply_map_begin(reply, 2);
    reply_text(reply, "type");
    reply_text(reply, spec->keyword ? "keyword" : "index");
    reply_text(reply, "spec");
    if (spec->keyword) {
        gr_reply_map_begin(reply, 2);
        reply_text(reply, "keyword");
        reply_text(reply, spec->keyword);
        reply_text(reply, "startfrom");
        gr_reply_integer(reply, spec->begin);
    } else {
        gr_reply_map_begin(reply, 1);
        reply_text(reply, "index");
        gr_reply_integer(reply, spec->begin);
    }
    reply_text(reply, "find_keys");
    gr_reply_map_begin(reply, 2);
    reply_text(reply, "type");
    reply_text(reply, spec->keynum ? "keynum" : "range");
    reply_text(reply, "spec");
    gr_reply_map_begin(reply, 3);
    if (spec->keynum) {
        reply_text(reply, "keynumidx"); gr_reply_integer(reply, spec->last);
        reply_text(reply, "firstkey"); gr_reply_integer(reply, spec->first);
        reply_text(reply, "keystep"); gr_reply_integer(reply, spec->step);
    } else {
        reply_text(reply, "lastkey"); gr_reply_integer(reply, spec->last);
        reply_text(reply, "keystep"); gr_reply_integer(reply, spec->step);
        reply_text(reply, "limit"); gr_reply_integer(reply, spec->limit);
    }
}

/* [name, arity, [flags], first, last, step, [categories], [tips], [key specs], [subcommands]] */
static void reply_info(gr_reply_t *reply, const command_ref_t *ref) {
    const command_doc_t *doc = ref->doc;
    gr_reply_array_begin(reply, 10);
    reply_text(reply, ref->name);
    gr_reply_integer(reply, ref->arity);

    size_t flags = 0;
    for (size_t i = 0; i < FLAG_COUNT; i++) flags += (size_t)command_has_flag(doc, flag_names[i]);
    gr_reply_array_begin(reply, flags);
    for (size_t i = 0; i < FLAG_COUNT; i++) if (command_has_flag(doc, flag_names[i])) reply_flag(reply, flag_names[i]);

    int first = 0, last = 0, step = 0, movable = 0;
    if (doc) legacy_range(doc, &first, &last, &step, &movable);
    gr_reply_integer(reply, first);
    gr_reply_integer(reply, last);
    gr_reply_integer(reply, step);

    size_t categories = 0;
    for (size_t i = 0; i < ACL_COUNT; i++) categories += (size_t)has_category(doc, acl_names[i]);
    gr_reply_array_begin(reply, categories);
    for (size_t i = 0; i < ACL_COUNT; i++) {
        if (!has_category(doc, acl_names[i])) continue;
        char text[32];
        int n = snprintf(text, sizeof text, "@%s", acl_names[i]);
        gr_reply_status(reply, text, (size_t)n);
    }

    reply_words(reply, doc ? doc->tips : NULL);
    size_t specs = key_spec_count(doc);
    gr_reply_array_begin(reply, specs);
    for (size_t i = 0; i < specs; i++) reply_key_spec(reply, &doc->keys[i]);

    gr_reply_array_begin(reply, subcommand_count(ref));
    const command_doc_t *sub;
    size_t cursor = 0;
    while (!ref->engine && (sub = subcommand_at(ref->name, &cursor))) {
        command_ref_t sub_ref = subcommand_ref(sub);
        reply_info(reply, &sub_ref);
    }
}

static void reply_all_info(gr_reply_t *reply) {
    size_t count = gr_command_count();
    gr_reply_array_begin(reply, count);
    for (size_t i = 0; i < count; i++) {
        command_ref_t ref = top_level_ref(i);
        reply_info(reply, &ref);
    }
}

/* ---- arguments: the DSL parsed into a tree ---- */

#define MAX_ARG_NODES 96

typedef struct arg_node {
    const char *name;
    const char *type;
    const char *token;
    uint8_t name_length, type_length, token_length;
    uint8_t name_is_token;    /* reply the token in lower case as the name */
    uint8_t optional, multiple;
    int8_t key_spec_index;    /* -1: not a key, or the command has no key specs */
    int16_t first_child, next;
} arg_node_t;

typedef struct arg_tree {
    arg_node_t nodes[MAX_ARG_NODES];
    int count;
    int error;
    int first;                /* the top-level list */
    const char *at;
} arg_tree_t;

static int new_node(arg_tree_t *t) {
    if (t->count >= MAX_ARG_NODES) { t->error = 1; return -1; }
    arg_node_t *node = &t->nodes[t->count];
    memset(node, 0, sizeof *node);
    node->key_spec_index = -1;
    node->first_child = node->next = -1;
    return t->count++;
}

static int is_delimiter(char c) { return c == '\0' || c == ' ' || c == '[' || c == ']' || c == '(' || c == ')' || c == '|'; }

static int is_pure_token(const arg_tree_t *t, int node) {
    const arg_node_t *n = &t->nodes[node];
    return n->type_length == 10 && strncmp(n->type, "pure-token", 10) == 0 && n->first_child < 0 && !n->optional &&
           !n->multiple;
}

static void set_type(arg_node_t *node, const char *type) {
    node->type = type;
    node->type_length = (uint8_t)strlen(type);
}

static int parse_alternatives(arg_tree_t *t, char close);

static int known_type(const char *type, size_t length) {
    static const char *const types[] = {"key", "string", "integer", "double", "pattern", "unix-time"};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strlen(types[i]) == length && strncmp(types[i], type, length) == 0) return 1;
    return 0;
}

static int take_ellipsis(arg_tree_t *t) {
    if (strncmp(t->at, "...", 3) != 0) return 0;
    t->at += 3;
    return 1;
}

/* One item: a word (argument or token) or a bracketed group. -1 on a malformed string. */
static int parse_element(arg_tree_t *t) {
    while (*t->at == ' ') t->at++;
    const char *word = t->at;
    size_t n = 0;
    while (!is_delimiter(word[n]) && strncmp(word + n, "...", 3) != 0) n++;
    const char *group_name = NULL;
    size_t group_name_length = 0;
    if (n > 1 && word[n - 1] == '=') {
        group_name = word;
        group_name_length = n - 1;
        t->at += n;
        n = 0;
    }
    if (n == 0) {
        char open = *t->at, close = open == '[' ? ']' : ')';
        if (open != '[' && open != '(') { t->error = 1; return -1; }
        t->at++;
        int node = parse_alternatives(t, close);
        if (node < 0) return -1;
        if (*t->at != close) { t->error = 1; return -1; }
        t->at++;
        arg_node_t *group = &t->nodes[node];
        if (open == '[') group->optional = 1;
        if (group_name) {
            group->name = group_name;
            group->name_length = (uint8_t)group_name_length;
            group->name_is_token = 0;
        }
        if (take_ellipsis(t)) group->multiple = 1;
        return node;
    }
    t->at += n;
    int node = new_node(t);
    if (node < 0) return -1;
    arg_node_t *item = &t->nodes[node];
    const char *colon = memchr(word, ':', n);
    if (!colon) {
        item->token = word;
        item->token_length = (uint8_t)n;
        item->name = word;
        item->name_length = (uint8_t)n;
        item->name_is_token = 1;
        set_type(item, "pure-token");
    } else {
        item->name = word;
        item->name_length = (uint8_t)(colon - word);
        item->type = colon + 1;
        item->type_length = (uint8_t)(n - (size_t)(colon - word) - 1);
        if (item->name_length == 0 || !known_type(item->type, item->type_length)) { t->error = 1; return -1; }
    }
    if (take_ellipsis(t)) item->multiple = 1;
    return node;
}

/* Items up to '|', the closing bracket or the end, folded into one node:
 * "TOKEN x" becomes x with a token, several items a block. */
static int parse_sequence(arg_tree_t *t, char close) {
    int first = -1, last = -1, count = 0;
    for (;;) {
        while (*t->at == ' ') t->at++;
        char c = *t->at;
        if (c == '\0' || c == '|' || c == close) break;
        if (c == ']' || c == ')') { t->error = 1; return -1; }
        int item = parse_element(t);
        if (item < 0) return -1;
        if (last >= 0) t->nodes[last].next = (int16_t)item;
        else first = item;
        last = item;
        count++;
    }
    if (count == 0) { t->error = 1; return -1; }
    if (count == 1) return first;
    int rest = t->nodes[first].next;
    if (is_pure_token(t, first) && count == 2 && !is_pure_token(t, rest)) {
        t->nodes[rest].token = t->nodes[first].token;
        t->nodes[rest].token_length = t->nodes[first].token_length;
        return rest;
    }
    int block = new_node(t);
    if (block < 0) return -1;
    arg_node_t *b = &t->nodes[block];
    set_type(b, "block");
    if (is_pure_token(t, first)) {
        b->token = b->name = t->nodes[first].token;
        b->token_length = b->name_length = t->nodes[first].token_length;
        b->name_is_token = 1;
        b->first_child = (int16_t)rest;
    } else {
        b->name = "block";
        b->name_length = 5;
        b->first_child = (int16_t)first;
    }
    return block;
}

static int parse_alternatives(arg_tree_t *t, char close) {
    int first = parse_sequence(t, close);
    if (first < 0 || *t->at != '|') return first;
    int last = first;
    while (*t->at == '|') {
        t->at++;
        int next = parse_sequence(t, close);
        if (next < 0) return -1;
        t->nodes[last].next = (int16_t)next;
        last = next;
    }
    int oneof = new_node(t);
    if (oneof < 0) return -1;
    set_type(&t->nodes[oneof], "oneof");
    t->nodes[oneof].name = "oneof";
    t->nodes[oneof].name_length = 5;
    t->nodes[oneof].first_child = (int16_t)first;
    return oneof;
}

/* Key arguments are numbered in order against the key specs (the last spec takes any
 * beyond), as Redis's key_spec_index. */
static void number_keys(arg_tree_t *t, int node, int *next_index, int specs) {
    for (; node >= 0; node = t->nodes[node].next) {
        arg_node_t *n = &t->nodes[node];
        if (specs > 0 && n->type_length == 3 && strncmp(n->type, "key", 3) == 0) {
            n->key_spec_index = (int8_t)(*next_index < specs ? *next_index : specs - 1);
            (*next_index)++;
        }
        number_keys(t, n->first_child, next_index, specs);
    }
}

/* Parse a row's arguments; 0, or -1 for a malformed string (t->first is then -1). */
static int parse_arguments(const command_doc_t *doc, arg_tree_t *t) {
    memset(t, 0, sizeof *t);
    t->first = -1;
    t->at = doc && doc->arguments ? doc->arguments : "";
    int last = -1;
    for (;;) {
        while (*t->at == ' ') t->at++;
        if (*t->at == '\0') break;
        int item = parse_element(t);
        if (item < 0 || t->error) { t->first = -1; return -1; }
        if (last >= 0) t->nodes[last].next = (int16_t)item;
        else t->first = item;
        last = item;
    }
    int next_index = 0;
    number_keys(t, t->first, &next_index, (int)key_spec_count(doc));
    return 0;
}

static size_t sibling_count(const arg_tree_t *t, int node) {
    size_t n = 0;
    for (; node >= 0; node = t->nodes[node].next) n++;
    return n;
}

static void reply_argument(gr_reply_t *reply, const arg_tree_t *t, int node) {
    const arg_node_t *n = &t->nodes[node];
    size_t pairs = 2 + (n->key_spec_index >= 0) + (n->token != NULL) + (n->optional || n->multiple) +
                   (n->first_child >= 0);
    gr_reply_map_begin(reply, pairs);
    reply_text(reply, "name");
    char name[64];
    size_t length = n->name_length < sizeof name ? n->name_length : sizeof name - 1;
    for (size_t i = 0; i < length; i++) name[i] = n->name_is_token ? (char)tolower((unsigned char)n->name[i]) : n->name[i];
    gr_reply_bulk(reply, (const uint8_t *)name, length);
    reply_text(reply, "type");
    gr_reply_bulk(reply, (const uint8_t *)n->type, n->type_length);
    if (n->key_spec_index >= 0) {
        reply_text(reply, "key_spec_index");
        gr_reply_integer(reply, n->key_spec_index);
    }
    if (n->token) {
        reply_text(reply, "token");
        gr_reply_bulk(reply, (const uint8_t *)n->token, n->token_length);
    }
    if (n->optional || n->multiple) {
        reply_text(reply, "flags");
        gr_reply_array_begin(reply, (size_t)n->optional + (size_t)n->multiple);
        if (n->optional) reply_flag(reply, "optional");
        if (n->multiple) reply_flag(reply, "multiple");
    }
    if (n->first_child >= 0) {
        reply_text(reply, "arguments");
        gr_reply_array_begin(reply, sibling_count(t, n->first_child));
        for (int child = n->first_child; child >= 0; child = t->nodes[child].next) reply_argument(reply, t, child);
    }
}

/* ---- COMMAND DOCS ---- */

static void reply_doc(gr_reply_t *reply, const command_ref_t *ref) {
    const command_doc_t *doc = ref->doc;
    char summary[256];
    if (!doc) {
        snprintf(summary, sizeof summary, "%s", "A goblin-ring command without documentation yet");
    } else if (ref->engine) {
        snprintf(summary, sizeof summary, "%s, on the %s list engine", doc->summary, ref->engine);
    } else {
        snprintf(summary, sizeof summary, "%s", doc->summary);
    }
    const char *group = ref->engine ? "goblin" : doc ? doc->group
                       : strncasecmp(ref->name, "goblin.", 7) == 0 ? "goblin" : "generic";
    arg_tree_t *tree = NULL;
    arg_tree_t storage;
    if (doc && doc->arguments && doc->arguments[0] && parse_arguments(doc, &storage) == 0 && storage.first >= 0)
        tree = &storage;
    size_t subcommands = subcommand_count(ref);
    gr_reply_map_begin(reply, 3 + (doc != NULL) + (tree != NULL) + (subcommands > 0));
    reply_text(reply, "summary");
    reply_text(reply, summary);
    reply_text(reply, "since");
    reply_text(reply, doc && !ref->engine ? doc->since : "0.1.0");
    reply_text(reply, "group");
    reply_text(reply, group);
    if (doc) {
        reply_text(reply, "complexity");
        reply_text(reply, doc->complexity);
    }
    if (tree) {
        reply_text(reply, "arguments");
        gr_reply_array_begin(reply, sibling_count(tree, tree->first));
        for (int node = tree->first; node >= 0; node = tree->nodes[node].next) reply_argument(reply, tree, node);
    }
    if (subcommands > 0) {
        reply_text(reply, "subcommands");
        gr_reply_map_begin(reply, subcommands);
        const command_doc_t *sub;
        size_t cursor = 0;
        while ((sub = subcommand_at(ref->name, &cursor))) {
            command_ref_t sub_ref = subcommand_ref(sub);
            reply_text(reply, sub->name);
            reply_doc(reply, &sub_ref);
        }
    }
}

static void command_docs(size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    command_ref_t ref;
    if (argc == 2) {
        size_t count = gr_command_count();
        gr_reply_map_begin(reply, count);
        for (size_t i = 0; i < count; i++) {
            ref = top_level_ref(i);
            reply_text(reply, ref.name);
            reply_doc(reply, &ref);
        }
        return;
    }
    size_t found = 0;
    for (size_t i = 2; i < argc; i++) found += (size_t)resolve(argv[i], argv_length[i], &ref);
    gr_reply_map_begin(reply, found);
    for (size_t i = 2; i < argc; i++) {
        if (!resolve(argv[i], argv_length[i], &ref)) continue;
        reply_text(reply, ref.name);
        reply_doc(reply, &ref);
    }
}

/* ---- COMMAND LIST ---- */

typedef enum { FILTER_NONE, FILTER_PATTERN, FILTER_ACLCAT, FILTER_MODULE } filter_kind_t;

static int passes_filter(const command_ref_t *ref, filter_kind_t kind, const uint8_t *value, size_t length) {
    switch (kind) {
    case FILTER_NONE: return 1;
    case FILTER_MODULE: return 0;   /* no modules here */
    case FILTER_PATTERN:
        return gr_glob_match(value, length, (const uint8_t *)ref->name, strlen(ref->name), 1);
    case FILTER_ACLCAT:
        for (size_t i = 0; i < ACL_COUNT; i++)
            if (gr_word_is(value, length, acl_names[i])) return has_category(ref->doc, acl_names[i]);
        return 0;
    }
    return 0;
}

/* Visits every command and subcommand, in table order; emit 0 counts, 1 replies names. */
static size_t list_commands(gr_reply_t *reply, int emit, filter_kind_t kind, const uint8_t *value, size_t length) {
    size_t count = 0, total = gr_command_count();
    for (size_t i = 0; i < total; i++) {
        command_ref_t ref = top_level_ref(i);
        if (passes_filter(&ref, kind, value, length)) {
            count++;
            if (emit) reply_text(reply, ref.name);
        }
        const command_doc_t *sub;
        size_t cursor = 0;
        while (!ref.engine && (sub = subcommand_at(ref.name, &cursor))) {
            command_ref_t sub_ref = subcommand_ref(sub);
            if (!passes_filter(&sub_ref, kind, value, length)) continue;
            count++;
            if (emit) reply_text(reply, sub->name);
        }
    }
    return count;
}

static void command_list(size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply) {
    filter_kind_t kind = FILTER_NONE;
    const uint8_t *value = NULL;
    size_t length = 0;
    if (argc != 2) {
        if (argc != 5 || !gr_word_is(argv[2], argv_length[2], "filterby")) goto syntax;
        if (gr_word_is(argv[3], argv_length[3], "pattern")) kind = FILTER_PATTERN;
        else if (gr_word_is(argv[3], argv_length[3], "aclcat")) kind = FILTER_ACLCAT;
        else if (gr_word_is(argv[3], argv_length[3], "module")) kind = FILTER_MODULE;
        else goto syntax;
        value = argv[4];
        length = argv_length[4];
    }
    gr_reply_array_begin(reply, list_commands(reply, 0, kind, value, length));
    list_commands(reply, 1, kind, value, length);
    return;
syntax:
    gr_reply_error_text(reply, GR_ERR_SYNTAX, "ERR syntax error");
}

/* ---- COMMAND GETKEYS / GETKEYSANDFLAGS ---- */

/* Redis's getKeysUsingKeySpecs over the command line argv[0..argc): with emit 0 returns
 * the number of keys (-1: the line cannot hold its keys), with emit 1 also replies them
 * (with_flags: as [key, [flags]] pairs). */
static long key_positions(const command_doc_t *doc, size_t argc, const uint8_t *const *argv,
                          const size_t *argv_length, gr_reply_t *reply, int emit, int with_flags) {
    long count = 0, n = (long)argc;
    size_t specs = key_spec_count(doc);
    for (size_t s = 0; s < specs; s++) {
        const key_spec_t *spec = &doc->keys[s];
        long first = spec->begin, last;
        if (spec->keyword) {   /* Redis's KSPEC_BS_KEYWORD (startfrom > 0), then its range with limit */
            long found = 0;
            for (long i = spec->begin; i < n - 1 && !found; i++)
                if (gr_word_is(argv[i], argv_length[i], spec->keyword)) found = i + 1;
            if (!found) continue;
            first = found;
            last = spec->last >= 0 ? first + spec->last
                 : spec->limit ? first + ((n - first) / spec->limit + spec->last) : n + spec->last;
            for (long i = first; i <= last && i < n; i += spec->step) {
                count++;
                if (!emit) continue;
                if (with_flags) gr_reply_array_begin(reply, 2);
                gr_reply_bulk(reply, argv[i], argv_length[i]);
                if (with_flags) reply_words(reply, spec->flags);
            }
            continue;
        }
        if (spec->keynum) {
            long at = first + spec->last;
            int64_t keys;
            if (at >= n || gr_bytes_to_int64(argv[at], argv_length[at], &keys) != 0 || keys < 0 || keys > n) return -1;
            first += spec->first;
            last = first + (long)keys - 1;
        } else {
            last = spec->last >= 0 ? first + spec->last : n + spec->last;
        }
        if (last >= n || last < first || first >= n) return -1;
        for (long i = first; i <= last; i += spec->step) {
            count++;
            if (!emit) continue;
            if (with_flags) gr_reply_array_begin(reply, 2);
            gr_reply_bulk(reply, argv[i], argv_length[i]);
            if (with_flags) reply_words(reply, spec->flags);
        }
    }
    return count;
}

static void command_getkeys(size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply,
                            int with_flags) {
    const uint8_t *const *line = argv + 2;
    const size_t *line_length = argv_length + 2;
    size_t line_argc = argc - 2;
    long index = find_top_level(line[0], line_length[0]);
    if (index < 0) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR Invalid command specified");
        return;
    }
    command_ref_t ref = top_level_ref((size_t)index);
    if (line_argc >= 2 && subcommand_count(&ref) > 0) {
        const command_doc_t *sub = find_subcommand(ref.name, line[1], line_length[1]);
        if (!sub) {
            gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR Invalid command specified");
            return;
        }
        ref = subcommand_ref(sub);
    }
    if (key_spec_count(ref.doc) == 0) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR The command has no key arguments");
        return;
    }
    if ((ref.arity > 0 && (size_t)ref.arity != line_argc) || (long)line_argc < -(long)ref.arity) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR Invalid number of arguments specified for command");
        return;
    }
    if (ref.doc && ref.doc->find_keys) {   /* the row's own finder (SORT's STORE key) */
        size_t positions[8];
        const char *flags[8];
        size_t found = ref.doc->find_keys(line_argc, line, line_length, positions, flags, 8);
        if (found == 0) {
            gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR Invalid arguments specified for command");
            return;
        }
        gr_reply_array_begin(reply, found);
        for (size_t i = 0; i < found; i++) {
            if (with_flags) gr_reply_array_begin(reply, 2);
            gr_reply_bulk(reply, line[positions[i]], line_length[positions[i]]);
            if (with_flags) reply_words(reply, flags[i]);
        }
        return;
    }
    long count = key_positions(ref.doc, line_argc, line, line_length, reply, 0, with_flags);
    if (count <= 0) {
        if (command_has_flag(ref.doc, "no_mandatory_keys")) gr_reply_array_begin(reply, 0);
        else gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR Invalid arguments specified for command");
        return;
    }
    gr_reply_array_begin(reply, (size_t)count);
    key_positions(ref.doc, line_argc, line, line_length, reply, 1, with_flags);
}

/* ---- COMMAND itself ---- */

static void command_help(gr_reply_t *reply) {
    static const char *const lines[] = {
        "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "(no subcommand)",
        "    Describe every command: name, arity, flags, key positions, categories.",
        "COUNT",
        "    The number of commands.",
        "LIST [FILTERBY (MODULE <name>|ACLCAT <category>|PATTERN <glob>)]",
        "    The names of the commands and subcommands, optionally filtered.",
        "INFO [<command-name> ...]",
        "    Describe the named commands (all of them when none is named).",
        "DOCS [<command-name> ...]",
        "    Summaries and arguments of the named commands (all when none is named).",
        "GETKEYS <full-command>",
        "    The keys a full command line would touch.",
        "GETKEYSANDFLAGS <full-command>",
        "    The same keys with their access flags.",
        "HELP",
        "    Print this help.",
    };
    size_t count = sizeof lines / sizeof lines[0];
    gr_reply_array_begin(reply, count);
    for (size_t i = 0; i < count; i++) gr_reply_status(reply, lines[i], strlen(lines[i]));
}

void gr_cmd_command(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                    gr_reply_t *reply) {
    (void)db;
    if (argc == 1) {
        reply_all_info(reply);
        return;
    }
    const command_doc_t *sub = find_subcommand("command", argv[1], argv_length[1]);
    if (!sub) {
        char text[160];
        snprintf(text, sizeof text, "ERR unknown subcommand '%.*s'. Try COMMAND HELP.",
                 (int)(argv_length[1] > 64 ? 64 : argv_length[1]), (const char *)argv[1]);
        gr_reply_error_text(reply, GR_ERR_GENERIC, text);
        return;
    }
    if ((sub->arity > 0 && (size_t)sub->arity != argc) || (long)argc < -(long)sub->arity) {
        gr_reply_arity_error(reply, sub->name);
        return;
    }
    const char *name = sub->name + strlen("command|");
    if (strcmp(name, "count") == 0) {
        gr_reply_integer(reply, (int64_t)gr_command_count());
    } else if (strcmp(name, "list") == 0) {
        command_list(argc, argv, argv_length, reply);
    } else if (strcmp(name, "info") == 0) {
        if (argc == 2) { reply_all_info(reply); return; }
        gr_reply_array_begin(reply, argc - 2);
        for (size_t i = 2; i < argc; i++) {
            command_ref_t ref;
            if (resolve(argv[i], argv_length[i], &ref)) reply_info(reply, &ref);
            else gr_reply_nil(reply);   /* Redis: a null bulk (RESP2 $-1) */
        }
    } else if (strcmp(name, "docs") == 0) {
        command_docs(argc, argv, argv_length, reply);
    } else if (strcmp(name, "getkeys") == 0) {
        command_getkeys(argc, argv, argv_length, reply, 0);
    } else if (strcmp(name, "getkeysandflags") == 0) {
        command_getkeys(argc, argv, argv_length, reply, 1);
    } else {
        command_help(reply);
    }
}
