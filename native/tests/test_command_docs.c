/* test_command_docs.c — COMMAND's metadata and reply shapes (command_docs.c).
 *
 * The file under test is included, not linked, so its DSL parser can be checked directly
 * against every row of the command table: each argument string parses and names its key
 * arguments against its key specs, every subcommand row has a container, and every command
 * row can run (a builder and typed handler, or an argv handler). The replies are driven through
 * gr_cmd_command into a recording writer that checks the nesting (each array or map
 * followed by exactly as many elements as it announced) and logs the reply as text —
 * "*2 $a $b" — so individual replies can be compared exactly.
 */
#include "commands/command_docs.c"

#include <stdio.h>
#include <stdlib.h>

#include "tests/test_helpers.h"

/* ---- the recording writer ---- */

#define MAX_DEPTH 32

typedef struct recorder {
    gr_reply_t base;
    char *log;
    size_t length, capacity;
    size_t remaining[MAX_DEPTH];   /* elements still owed at each open level */
    int depth;
    int values;                    /* complete top-level values */
    int malformed;
} recorder_t;

static void log_text(recorder_t *r, const char *text, size_t n) {
    if (r->length + n + 2 > r->capacity) {
        r->capacity = (r->length + n + 2) * 2;
        r->log = realloc(r->log, r->capacity);
        if (!r->log) abort();
    }
    if (r->length) r->log[r->length++] = ' ';
    memcpy(r->log + r->length, text, n);
    r->length += n;
    r->log[r->length] = '\0';
}

/* One element written: it fills a slot of the innermost open level (closing levels that
 * are complete), or is a new top-level value. */
static void element_done(recorder_t *r) {
    while (r->depth > 0) {
        if (r->remaining[r->depth - 1] == 0) { r->malformed = 1; return; }
        if (--r->remaining[r->depth - 1] > 0) return;
        r->depth--;
    }
    r->values++;
}

static void open_level(recorder_t *r, size_t count) {
    if (count == 0) { element_done(r); return; }
    if (r->depth == MAX_DEPTH) { r->malformed = 1; return; }
    r->remaining[r->depth++] = count;
}

static void scalar(recorder_t *r, char prefix, const char *text, size_t n) {
    char line[512];
    size_t m = n < sizeof line - 2 ? n : sizeof line - 2;
    line[0] = prefix;
    memcpy(line + 1, text, m);
    log_text(r, line, m + 1);
    element_done(r);
}

static void op_integer(gr_reply_t *b, int64_t v) { char t[32]; int n = snprintf(t, sizeof t, "%lld", (long long)v); scalar((recorder_t *)b, ':', t, (size_t)n); }
static void op_bulk(gr_reply_t *b, const uint8_t *d, size_t n) { scalar((recorder_t *)b, '$', (const char *)d, n); }
static void op_nil(gr_reply_t *b) { scalar((recorder_t *)b, '_', "", 0); }
static void op_status(gr_reply_t *b, const char *t, size_t n) { scalar((recorder_t *)b, '+', t, n); }
static void op_error(gr_reply_t *b, gr_error_code_t c, const char *t, size_t n) { (void)c; scalar((recorder_t *)b, '-', t, n); }
static void op_array_begin(gr_reply_t *b, size_t n) {
    char t[32]; int m = snprintf(t, sizeof t, "*%zu", n); log_text((recorder_t *)b, t, (size_t)m); open_level((recorder_t *)b, n);
}
static void op_map_begin(gr_reply_t *b, size_t pairs) {
    char t[32]; int m = snprintf(t, sizeof t, "%%%zu", pairs); log_text((recorder_t *)b, t, (size_t)m); open_level((recorder_t *)b, 2 * pairs);
}
static void op_keyed(gr_reply_t *b, const uint8_t *k, size_t kn, size_t n) { (void)k; (void)kn; (void)n; ((recorder_t *)b)->malformed = 1; }
static void op_pair(gr_reply_t *b, const uint8_t *k, size_t kn, const uint8_t *v, size_t vn) { (void)k; (void)kn; (void)v; (void)vn; ((recorder_t *)b)->malformed = 1; }
static void op_verbatim(gr_reply_t *b, const uint8_t *t, size_t n) { scalar((recorder_t *)b, '=', (const char *)t, n); }
static void op_double(gr_reply_t *b, double v) { char t[48]; int n = snprintf(t, sizeof t, "%g", v); scalar((recorder_t *)b, ',', t, (size_t)n); }

static const gr_reply_ops_t recorder_ops = {
    op_integer, op_bulk, op_nil, op_nil, op_status, op_error,
    op_array_begin, op_keyed, op_pair, op_map_begin, op_verbatim, op_double, op_array_begin,
    op_array_begin,
    NULL,   /* unsigned_integer */
    NULL,   /* bulks: reply.h calls bulk once a value */
    NULL,   /* boolean */
    NULL,   /* big_number */
};

/* Run "COMMAND ..." given as space-separated words; returns the log (valid until the
 * next call) and whether the reply was exactly one well-formed value. */
static recorder_t recorder;

static const char *run(const char *line, int *well_formed) {
    char copy[512];
    snprintf(copy, sizeof copy, "%s", line);
    const uint8_t *argv[64];
    size_t lengths[64], argc = 0;
    for (char *word = strtok(copy, " "); word && argc < 64; word = strtok(NULL, " ")) {
        argv[argc] = (const uint8_t *)word;
        lengths[argc++] = strlen(word);
    }
    free(recorder.log);
    memset(&recorder, 0, sizeof recorder);
    recorder.base.ops = &recorder_ops;
    log_text(&recorder, "", 0);
    recorder.length = 0;
    gr_cmd_command(NULL, argc, argv, lengths, &recorder.base);
    *well_formed = !recorder.malformed && recorder.depth == 0 && recorder.values == 1;
    return recorder.log;
}

static void expect(const char *line, const char *expected) {
    int ok;
    const char *got = run(line, &ok);
    CHECK(ok && strcmp(got, expected) == 0, "%s -> %s (expected %s)%s", line, got, expected, ok ? "" : " [malformed]");
}

static void expect_well_formed(const char *line) {
    int ok;
    const char *got = run(line, &ok);
    CHECK(ok && got[0] != '-', "%s -> malformed or error: %.200s", line, got);
}

/* ---- checks on the table itself ---- */

static size_t count_keys(const arg_tree_t *t, int node) {
    size_t n = 0;
    for (; node >= 0; node = t->nodes[node].next) {
        const arg_node_t *a = &t->nodes[node];
        if (a->type_length == 3 && strncmp(a->type, "key", 3) == 0) n++;
        n += count_keys(t, a->first_child);
    }
    return n;
}

static void test_every_row_is_consistent(void) {
    for (size_t i = 0; i < DOC_COUNT; i++) {
        const command_doc_t *doc = doc_at(i);
        arg_tree_t tree;
        int parsed = parse_arguments(doc, &tree);
        CHECK(parsed == 0 && (doc->arguments[0] == '\0') == (tree.first < 0), "%s: arguments do not parse: %s",
              doc->name, doc->arguments);
        size_t keys = parsed == 0 ? count_keys(&tree, tree.first) : 0;
        size_t specs = 0;   /* a "not_key" spec (SSUBSCRIBE's shard channels) names no key argument */
        for (size_t k = 0; k < key_spec_count(doc); k++) specs += !has_word(doc->keys[k].flags, "not_key");
        CHECK((keys > 0) == (specs > 0), "%s: %zu key arguments but %zu key specs", doc->name, keys, specs);
        CHECK(doc->summary[0] && doc->since[0] && doc->group[0] && doc->complexity[0], "%s: empty doc field", doc->name);
        const char *bar = strchr(doc->name, '|');
        if (bar) {
            CHECK(doc->arity != 0, "%s: a subcommand needs its arity", doc->name);
            CHECK(find_doc(doc->name, (size_t)(bar - doc->name)) != NULL, "%s: no container row", doc->name);
        }
        const char *word, *list = doc->flags;
        size_t n;
        while ((n = next_word(&list, &word))) {
            int known = 0;
            for (size_t f = 0; f < FLAG_COUNT; f++) known |= strlen(flag_names[f]) == n && strncmp(flag_names[f], word, n) == 0;
            CHECK(known, "%s: unknown flag %.*s", doc->name, (int)n, word);
        }
        list = doc->acl;
        while ((n = next_word(&list, &word))) {
            int known = 0;
            for (size_t c = 0; c < ACL_COUNT; c++) known |= strlen(acl_names[c]) == n && strncmp(acl_names[c], word, n) == 0;
            CHECK(known, "%s: unknown ACL category %.*s", doc->name, (int)n, word);
        }
        CHECK(find_doc(doc->name, strlen(doc->name)) == doc, "%s: duplicate row", doc->name);
        if (!bar) {   /* a top-level row runs one way or both: built and typed, or as argv */
            CHECK((doc->build && doc->handler && doc->template_id) || (!doc->build && doc->argv_handler),
                  "%s: no way to run it from argv", doc->name);
            CHECK(!doc->handler || doc->template_id, "%s: a typed handler without a template", doc->name);
        }
    }
}

static void test_a_malformed_argument_string_is_refused(void) {
    const char *bad[] = {"key:nosuchtype", "[NX|XX", "key:key)", "name=", "[]", ":string", "a|b"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        command_doc_t doc = {.name = "x", .flags = "", .acl = "", .arguments = bad[i]};
        arg_tree_t tree;
        CHECK(parse_arguments(&doc, &tree) != 0, "accepted the malformed arguments %s", bad[i]);
    }
}

/* ---- replies ---- */

static void test_every_reply_is_well_formed(void) {
    expect_well_formed("COMMAND");
    expect_well_formed("COMMAND INFO");
    expect_well_formed("COMMAND DOCS");
    expect_well_formed("COMMAND LIST");
    expect_well_formed("COMMAND HELP");
    const char *name;
    for (size_t i = 0; (name = gr_command_name(i, NULL)); i++) {
        char line[160];
        snprintf(line, sizeof line, "COMMAND INFO %s", name);
        expect_well_formed(line);
        snprintf(line, sizeof line, "COMMAND DOCS %s", name);
        expect_well_formed(line);
    }
    for (size_t i = 0; i < DOC_COUNT; i++) {
        char line[160];
        snprintf(line, sizeof line, "COMMAND DOCS %s", doc_at(i)->name);
        expect_well_formed(line);
    }
}

static void test_info_entries_match_redis(void) {
    expect("COMMAND INFO get",
           "*1 *10 $get :2 *2 +readonly +fast :1 :1 :1 *3 +@read +@string +@fast *0 "
           "*1 %3 $flags *2 +RO +access $begin_search %2 $type $index $spec %1 $index :1 "
           "$find_keys %2 $type $range $spec %3 $lastkey :0 $keystep :1 $limit :0 *0");
    expect("COMMAND INFO nosuch GET", "*2 _ *10 $get :2 *2 +readonly +fast :1 :1 :1 *3 +@read +@string +@fast *0 "
           "*1 %3 $flags *2 +RO +access $begin_search %2 $type $index $spec %1 $index :1 "
           "$find_keys %2 $type $range $spec %3 $lastkey :0 $keystep :1 $limit :0 *0");
    expect("COMMAND INFO config|get",
           "*1 *10 $config|get :-3 *4 +admin +noscript +loading +stale :0 :0 :0 *3 +@admin +@slow +@dangerous *0 *0 *0");
    expect("COMMAND INFO config|nosuch get|x", "*2 _ _");
    /* the legacy first/last/step, as Redis derives it from the key specs */
    int ok;
    CHECK(strstr(run("COMMAND INFO rename", &ok), "$rename :3 *1 +write :1 :2 :1") != NULL, "rename: %s", recorder.log);
    CHECK(strstr(run("COMMAND INFO mset", &ok), "$mset :-3 *2 +write +denyoom :1 :-1 :2") != NULL, "mset: %s", recorder.log);
    CHECK(strstr(run("COMMAND INFO lmpop", &ok), "$lmpop :-4 *2 +write +movablekeys :0 :0 :0") != NULL, "lmpop: %s",
          recorder.log);
    CHECK(strstr(run("COMMAND INFO lmove", &ok), ":1 :2 :1 *3 +@write +@list +@slow") != NULL, "lmove: %s", recorder.log);
    CHECK(strstr(run("COMMAND INFO hello", &ok),
                 "*6 +noscript +loading +stale +fast +no_auth +allow_busy :0 :0 :0 *2 +@fast +@connection") != NULL,
          "hello: %s", recorder.log);
}

static void test_docs_describe_arguments_as_redis_does(void) {
    expect("COMMAND DOCS get nosuch",
           "%1 $get %5 $summary $Return the string stored at a key $since $1.0.0 $group $string $complexity $O(1) "
           "$arguments *1 %3 $name $key $type $key $key_spec_index :0");
    int ok;
    const char *set = run("COMMAND DOCS set", &ok);
    CHECK(ok && strstr(set, "%4 $name $condition $type $oneof $flags *1 +optional $arguments *2 "
                            "%3 $name $nx $type $pure-token $token $NX %3 $name $xx $type $pure-token $token $XX") != NULL,
          "set condition: %s", set);
    CHECK(strstr(set, "%4 $name $get $type $pure-token $token $GET $flags *1 +optional") != NULL, "set get: %s", set);
    CHECK(strstr(set, "$name $expiration $type $oneof $flags *1 +optional $arguments *5 "
                      "%3 $name $seconds $type $integer $token $EX") != NULL, "set expiration: %s", set);
    const char *mset = run("COMMAND DOCS mset", &ok);
    CHECK(ok && strstr(mset, "%4 $name $key_value $type $block $flags *1 +multiple $arguments *2 "
                             "%3 $name $key $type $key $key_spec_index :0 %2 $name $value $type $string") != NULL,
          "mset: %s", mset);
    const char *lmove = run("COMMAND DOCS lmove", &ok);
    CHECK(ok && strstr(lmove, "$destination $type $key $key_spec_index :1") != NULL, "lmove: %s", lmove);
    const char *config = run("COMMAND DOCS config", &ok);
    CHECK(ok && strstr(config, "$subcommands %5 $config|get %5 $summary") != NULL, "config: %s", config);
}

static void test_getkeys_follows_the_key_specs(void) {
    expect("COMMAND GETKEYS MSET a 1 b 2", "*2 $a $b");
    expect("COMMAND GETKEYS MSET a 1 b", "*2 $a $b");
    expect("COMMAND GETKEYS lmpop 2 a b LEFT COUNT 3", "*2 $a $b");
    expect("COMMAND GETKEYS LMOVE s d LEFT RIGHT", "*2 $s $d");
    expect("COMMAND GETKEYS memory usage k", "*1 $k");
    expect("COMMAND GETKEYSANDFLAGS rename a b", "*2 *2 $a *3 +RW +access +delete *2 $b *2 +OW +update");
    expect("COMMAND GETKEYS lmpop 0 a LEFT", "-ERR Invalid arguments specified for command");
    expect("COMMAND GETKEYS lmpop 5 a LEFT", "-ERR Invalid arguments specified for command");
    expect("COMMAND GETKEYS lmpop x a LEFT", "-ERR Invalid arguments specified for command");
    expect("COMMAND GETKEYS nosuch a", "-ERR Invalid command specified");
    expect("COMMAND GETKEYS config|get x", "-ERR Invalid command specified");
    expect("COMMAND GETKEYS config nosuch x", "-ERR Invalid command specified");
    expect("COMMAND GETKEYS config get x", "-ERR The command has no key arguments");
    expect("COMMAND GETKEYS ping x", "-ERR The command has no key arguments");
    expect("COMMAND GETKEYS get a b", "-ERR Invalid number of arguments specified for command");
}

static void test_list_count_help_and_errors(void) {
    char count[32];
    snprintf(count, sizeof count, ":%zu", gr_command_count());
    expect("COMMAND COUNT", count);
    expect("COMMAND LIST FILTERBY PATTERN config|g*", "*1 $config|get");
    expect("COMMAND LIST FILTERBY pattern LLE?", "*1 $llen");
    expect("COMMAND LIST FILTERBY MODULE x", "*0");
    expect("COMMAND LIST FILTERBY ACLCAT nosuch", "*0");
    expect("COMMAND LIST FILTERBY PATTERN", "-ERR syntax error");
    expect("COMMAND LIST x", "-ERR syntax error");
    expect("COMMAND LIST FILTERBY COLOUR red", "-ERR syntax error");
    expect("COMMAND COUNT x", "-ERR wrong number of arguments for 'command|count' command");
    expect("COMMAND GETKEYS get", "-ERR wrong number of arguments for 'command|getkeys' command");
    expect("COMMAND HELP x", "-ERR wrong number of arguments for 'command|help' command");
    expect("COMMAND nosuch", "-ERR unknown subcommand 'nosuch'. Try COMMAND HELP.");
    int ok;
    const char *all = run("COMMAND LIST", &ok);
    CHECK(ok && strstr(all, "$config $config|get") && strstr(all, "$command|docs"), "list: %.300s", all);
    const char *cats = run("COMMAND LIST FILTERBY ACLCAT list", &ok);
    CHECK(ok && strstr(cats, "$lpush") && !strstr(cats, "$get"), "aclcat list: %s", cats);
}

/* A reference with no row behind it (the writer's fallback), and a goblin.pma./goblin.seg.
 * copy of a list command: both still get complete entries. */
static void test_commands_without_a_row_and_engine_copies_get_entries(void) {
    command_ref_t bare = {"goblin.nodoc", -2, NULL, NULL};
    free(recorder.log);
    memset(&recorder, 0, sizeof recorder);
    recorder.base.ops = &recorder_ops;
    reply_info(&recorder.base, &bare);
    CHECK(!recorder.malformed && recorder.values == 1 && recorder.log &&
          strcmp(recorder.log, "*10 $goblin.nodoc :-2 *0 :0 :0 :0 *1 +@slow *0 *0 *0") == 0, "bare info: %s", recorder.log);
    free(recorder.log);
    memset(&recorder, 0, sizeof recorder);
    recorder.base.ops = &recorder_ops;
    reply_doc(&recorder.base, &bare);
    CHECK(!recorder.malformed && recorder.values == 1 && strstr(recorder.log, "$group $goblin"), "bare doc: %s", recorder.log);

    command_ref_t copy = {"goblin.pma.lpush", -3, find_doc("lpush", 5), "pma"};
    free(recorder.log);
    memset(&recorder, 0, sizeof recorder);
    recorder.base.ops = &recorder_ops;
    reply_doc(&recorder.base, &copy);
    CHECK(!recorder.malformed && recorder.values == 1 && strstr(recorder.log, "on the pma list engine") &&
          strstr(recorder.log, "$group $goblin") && strstr(recorder.log, "$key_spec_index :0"), "pma doc: %s", recorder.log);
    free(recorder.log);
    memset(&recorder, 0, sizeof recorder);
    recorder.base.ops = &recorder_ops;
    reply_info(&recorder.base, &copy);
    CHECK(!recorder.malformed && recorder.values == 1 &&
          strncmp(recorder.log, "*10 $goblin.pma.lpush :-3 *3 +write +denyoom +fast :1 :1 :1", 59) == 0, "pma info: %s",
          recorder.log);
}

int main(void) {
    test_commands_without_a_row_and_engine_copies_get_entries();
    test_every_row_is_consistent();
    test_a_malformed_argument_string_is_refused();
    test_every_reply_is_well_formed();
    test_info_entries_match_redis();
    test_docs_describe_arguments_as_redis_does();
    test_getkeys_follows_the_key_specs();
    test_list_count_help_and_errors();
    free(recorder.log);
    return checks_report();
}
