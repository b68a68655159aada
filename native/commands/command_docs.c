/* command_docs.c — COMMAND and its subcommands: COUNT, LIST, INFO, DOCS, GETKEYS,
 * GETKEYSANDFLAGS, HELP.
 *
 * The names and arities of the commands this server runs live in resp_commands.c's table
 * (read through gr_command_count and gr_command_name); this file holds everything else a
 * client library or redis-cli asks COMMAND about — flags, key specs, ACL categories, group,
 * summary, complexity and arguments — in a table keyed by name, and replies with it in the
 * shapes Redis 7 uses. Subcommands of containers (CONFIG, CLIENT, MEMORY, COMMAND, OBJECT,
 * FUNCTION) are rows named "container|sub". A command of resp_commands.c without a row
 * still gets a complete INFO entry (no flags, no keys) and a placeholder DOCS entry;
 * goblin.pma.X and goblin.seg.X borrow X's row. Nothing here is on a hot path: argument
 * descriptions are short strings (the DSL below) parsed each time they are replied.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "exec/db.h"
#include "exec/server_text.h"
#include "core/glob.h"

/* ---- the metadata table ---- */

/* One Redis 7 key spec with an "index" begin_search. find_keys is either
 *   range:  keys from argv[begin] to argv[begin + last] (last < 0: argc + last), every step
 *   keynum: argv[begin + keynum_index] holds the key count; keys start at begin + first
 * flags are Redis's key-spec flags as words ("RW access delete"). begin 0: no spec. */
typedef struct key_spec {
    int8_t begin;
    int8_t keynum;
    int8_t last;         /* range: lastkey; keynum: keynumidx */
    int8_t step;
    int8_t first;        /* keynum: firstkey (relative to begin) */
    const char *flags;
} key_spec_t;

#define MAX_KEY_SPECS 2

/* Arguments, one string per command, parsed by parse_arguments():
 *   name:type          an argument; type is key string integer double pattern unix-time
 *   TOKEN              a pure token (its name is the token in lower case)
 *   TOKEN name:type    an argument introduced by a token ("EX seconds:integer")
 *   [ ... ]            optional;  ( ... ) grouping;  a|b|c inside either: one of them
 *   several items in a group: a block (a leading TOKEN becomes the block's token)
 *   name=[ ... ]       names the group;  ... after an item: it repeats ("key:key...")
 */
typedef struct command_doc {
    const char *name;       /* "get", or "config|get" for a subcommand */
    int arity;              /* subcommands only: top-level arities are resp_commands.c's */
    const char *flags;      /* Redis command flags as words: "write denyoom fast" */
    const char *acl;        /* ACL categories beyond those the flags imply: "list" */
    const char *tips;       /* command tips as words, or NULL */
    const char *group;
    const char *since;
    const char *complexity;
    const char *summary;
    const char *arguments;  /* the DSL above; "" when the command takes none */
    key_spec_t keys[MAX_KEY_SPECS];
} command_doc_t;

#define R(b, l, s, f) {.begin = (b), .keynum = 0, .last = (l), .step = (s), .first = 0, .flags = (f)}
#define K(b, idx, fst, s, f) {.begin = (b), .keynum = 1, .last = (idx), .step = (s), .first = (fst), .flags = (f)}
#define DOC(n, fl, acl_, grp, snc, cx, sum, args, ...) \
    {.name = (n), .arity = 0, .flags = (fl), .acl = (acl_), .tips = NULL, .group = (grp), .since = (snc), \
     .complexity = (cx), .summary = (sum), .arguments = (args), .keys = {__VA_ARGS__}}
#define DOCT(n, tp, fl, acl_, grp, snc, cx, sum, args, ...) \
    {.name = (n), .arity = 0, .flags = (fl), .acl = (acl_), .tips = (tp), .group = (grp), .since = (snc), \
     .complexity = (cx), .summary = (sum), .arguments = (args), .keys = {__VA_ARGS__}}
#define SUB(n, ar, fl, acl_, grp, snc, cx, sum, args, ...) \
    {.name = (n), .arity = (ar), .flags = (fl), .acl = (acl_), .tips = NULL, .group = (grp), .since = (snc), \
     .complexity = (cx), .summary = (sum), .arguments = (args), .keys = {__VA_ARGS__}}
#define SUBT(n, tp, ar, fl, acl_, grp, snc, cx, sum, args, ...) \
    {.name = (n), .arity = (ar), .flags = (fl), .acl = (acl_), .tips = (tp), .group = (grp), .since = (snc), \
     .complexity = (cx), .summary = (sum), .arguments = (args), .keys = {__VA_ARGS__}}

#define KEY1_RO R(1, 0, 1, "RO access")
#define KEY1_RW R(1, 0, 1, "RW access update")
#define WHERE "where=(LEFT|RIGHT)"
#define EXPIRE_CONDITION "condition=[NX|XX|GT|LT]"
#define FLUSH_TYPE "flush-type=[ASYNC|SYNC]"
#define SUB_HELP(container, acl_, grp, snc) \
    SUB(container "|help", 2, "loading stale", acl_, grp, snc, "O(1)", "List the subcommands and what they do", "")

static const command_doc_t docs[] = {
    /* lists */
    DOC("lpush", "write denyoom fast", "list", "list", "1.0.0", "O(1) for each element added",
        "Insert elements at the head of a list, creating it if needed", "key:key element:string...",
        R(1, 0, 1, "RW insert")),
    DOC("rpush", "write denyoom fast", "list", "list", "1.0.0", "O(1) for each element added",
        "Append elements to the tail of a list, creating it if needed", "key:key element:string...",
        R(1, 0, 1, "RW insert")),
    DOC("lpushx", "write denyoom fast", "list", "list", "2.2.0", "O(1) for each element added",
        "Insert elements at the head of a list only if the list exists", "key:key element:string...",
        R(1, 0, 1, "RW insert")),
    DOC("rpushx", "write denyoom fast", "list", "list", "2.2.0", "O(1) for each element added",
        "Append elements to the tail of a list only if the list exists", "key:key element:string...",
        R(1, 0, 1, "RW insert")),
    DOC("lpop", "write fast", "list", "list", "1.0.0", "O(N) where N is the number of elements popped",
        "Remove and return elements from the head of a list", "key:key [count:integer]",
        R(1, 0, 1, "RW access delete")),
    DOC("rpop", "write fast", "list", "list", "1.0.0", "O(N) where N is the number of elements popped",
        "Remove and return elements from the tail of a list", "key:key [count:integer]",
        R(1, 0, 1, "RW access delete")),
    DOC("llen", "readonly fast", "list", "list", "1.0.0", "O(1)", "Return the number of elements in a list",
        "key:key", R(1, 0, 1, "RO")),
    DOC("lindex", "readonly", "list", "list", "1.0.0", "O(N) where N is the distance walked to the index",
        "Return the element at an index of a list", "key:key index:integer", KEY1_RO),
    DOC("lrange", "readonly", "list", "list", "1.0.0", "O(S+N) where S is the start offset and N the elements returned",
        "Return a range of elements of a list", "key:key start:integer stop:integer", KEY1_RO),
    DOC("lset", "write denyoom", "list", "list", "1.0.0", "O(N) where N is the distance walked to the index",
        "Replace the element at an index of a list", "key:key index:integer element:string", R(1, 0, 1, "RW update")),
    DOC("linsert", "write denyoom", "list", "list", "2.2.0", "O(N) where N is the distance walked to the pivot",
        "Insert an element before or after another element of a list",
        "key:key where=(BEFORE|AFTER) pivot:string element:string", R(1, 0, 1, "RW insert")),
    DOC("lrem", "write", "list", "list", "1.0.0", "O(N+M) where N is the list's length and M the elements removed",
        "Remove occurrences of an element from a list", "key:key count:integer element:string",
        R(1, 0, 1, "RW delete")),
    DOC("ltrim", "write", "list", "list", "1.0.0", "O(N) where N is the number of elements removed",
        "Keep only a range of a list's elements", "key:key start:integer stop:integer", R(1, 0, 1, "RW delete")),
    DOC("lpos", "readonly", "list", "list", "6.0.6", "O(N) where N is the number of elements scanned",
        "Return the positions of the elements of a list equal to a value",
        "key:key element:string [RANK rank:integer] [COUNT num-matches:integer] [MAXLEN len:integer]",
        KEY1_RO),
    DOC("lmove", "write denyoom", "list", "list", "6.2.0", "O(1)",
        "Pop an element from one end of a list and push it onto an end of another",
        "source:key destination:key wherefrom=(LEFT|RIGHT) whereto=(LEFT|RIGHT)",
        R(1, 0, 1, "RW access delete"), R(2, 0, 1, "RW insert")),
    DOC("rpoplpush", "write denyoom", "list", "list", "1.2.0", "O(1)",
        "Pop the tail of a list and push it onto the head of another", "source:key destination:key",
        R(1, 0, 1, "RW access delete"), R(2, 0, 1, "RW insert")),
    DOC("lmpop", "write", "list", "list", "7.0.0", "O(N+M) where N is the keys given and M the elements popped",
        "Pop elements from the first non-empty list of several",
        "numkeys:integer key:key... " WHERE " [COUNT count:integer]", K(1, 0, 1, 1, "RW access delete")),
    DOC("blpop", "write noscript blocking", "list", "list", "2.0.0", "O(N) where N is the number of keys given",
        "Pop the head of the first non-empty list, waiting for one if all are empty", "key:key... timeout:double",
        R(1, -2, 1, "RW access delete")),
    DOC("brpop", "write noscript blocking", "list", "list", "2.0.0", "O(N) where N is the number of keys given",
        "Pop the tail of the first non-empty list, waiting for one if all are empty", "key:key... timeout:double",
        R(1, -2, 1, "RW access delete")),
    DOC("blmove", "write denyoom noscript blocking", "list", "list", "6.2.0", "O(1)",
        "LMOVE that waits for the source list to have an element",
        "source:key destination:key wherefrom=(LEFT|RIGHT) whereto=(LEFT|RIGHT) timeout:double",
        R(1, 0, 1, "RW access delete"), R(2, 0, 1, "RW insert")),
    DOC("brpoplpush", "write denyoom noscript blocking", "list", "list", "2.2.0", "O(1)",
        "RPOPLPUSH that waits for the source list to have an element", "source:key destination:key timeout:double",
        R(1, 0, 1, "RW access delete"), R(2, 0, 1, "RW insert")),
    DOC("blmpop", "write blocking", "list", "list", "7.0.0", "O(N+M) where N is the keys given and M the elements popped",
        "LMPOP that waits for one of the lists to have an element",
        "timeout:double numkeys:integer key:key... " WHERE " [COUNT count:integer]", K(2, 0, 1, 1, "RW access delete")),
    DOC("goblin.list.internals", "readonly", "list", "goblin", "0.1.0", "O(N) where N is the number of segments",
        "Describe how a list is laid out in memory: encoding, segments and their fill", "key:key", R(1, 0, 1, "RO")),

    /* keys */
    DOCT("del", "request_policy:multi_shard response_policy:agg_sum", "write", "keyspace", "generic", "1.0.0",
         "O(N) where N is the number of keys, plus the size of each value freed", "Delete keys", "key:key...",
         R(1, -1, 1, "RM delete")),
    DOCT("unlink", "request_policy:multi_shard response_policy:agg_sum", "write fast", "keyspace", "generic", "4.0.0",
         "O(1) for each key", "Delete keys, freeing large values out of the command's way", "key:key...",
         R(1, -1, 1, "RM delete")),
    DOCT("exists", "request_policy:multi_shard response_policy:agg_sum", "readonly fast", "keyspace", "generic",
         "3.0.3", "O(N) where N is the number of keys", "Count how many of the given keys exist", "key:key...",
         R(1, -1, 1, "RO")),
    DOC("type", "readonly fast", "keyspace", "generic", "1.0.0", "O(1)", "Return the type of the value at a key",
        "key:key", R(1, 0, 1, "RO")),
    DOCT("dbsize", "request_policy:all_shards response_policy:agg_sum", "readonly fast", "keyspace", "server",
         "1.0.0", "O(1)", "Return the number of keys in the selected database", ""),
    DOCT("flushdb", "request_policy:all_shards response_policy:all_succeeded", "write", "keyspace dangerous",
         "server", "1.0.0", "O(N) where N is the number of keys in the database", "Delete every key of the selected database",
         FLUSH_TYPE),
    DOCT("flushall", "request_policy:all_shards response_policy:all_succeeded", "write", "keyspace dangerous",
         "server", "1.0.0", "O(N) where N is the number of keys in all databases", "Delete every key of every database",
         FLUSH_TYPE),
    DOCT("keys", "request_policy:all_shards nondeterministic_output_order", "readonly", "keyspace dangerous",
         "generic", "1.0.0", "O(N) where N is the number of keys in the database", "Return the keys matching a glob pattern",
         "pattern:pattern"),
    DOCT("scan", "nondeterministic_output request_policy:special", "readonly", "keyspace",
         "generic", "2.8.0", "O(1) per call, O(N) for a whole iteration", "Iterate over the keys of the database with a cursor",
         "cursor:integer [MATCH pattern:pattern] [COUNT count:integer] [TYPE type:string]"),
    DOC("rename", "write", "keyspace", "generic", "1.0.0", "O(1)", "Give a key a new name, replacing any key of that name",
        "key:key newkey:key", R(1, 0, 1, "RW access delete"), R(2, 0, 1, "OW update")),

    /* strings */
    DOC("set", "write denyoom", "string", "string", "1.0.0", "O(1)",
        "Store a string at a key, with optional conditions and expiry",
        "key:key value:string condition=[NX|XX] [GET] expiration=[EX seconds:integer|PX milliseconds:integer|"
        "EXAT unix-time-seconds:unix-time|PXAT unix-time-milliseconds:unix-time|KEEPTTL]",
        R(1, 0, 1, "RW access update variable_flags")),
    DOC("setnx", "write denyoom fast", "string", "string", "1.0.0", "O(1)", "Store a string at a key unless the key exists",
        "key:key value:string", R(1, 0, 1, "OW insert")),
    DOC("setex", "write denyoom", "string", "string", "2.0.0", "O(1)", "Store a string at a key with a time to live in seconds",
        "key:key seconds:integer value:string", R(1, 0, 1, "OW update")),
    DOC("psetex", "write denyoom", "string", "string", "2.6.0", "O(1)",
        "Store a string at a key with a time to live in milliseconds", "key:key milliseconds:integer value:string",
        R(1, 0, 1, "OW update")),
    DOC("get", "readonly fast", "string", "string", "1.0.0", "O(1)", "Return the string stored at a key", "key:key",
        KEY1_RO),
    DOC("getdel", "write fast", "string", "string", "6.2.0", "O(1)", "Return the string at a key and delete the key",
        "key:key", R(1, 0, 1, "RW access delete")),
    DOC("getex", "write fast", "string", "string", "6.2.0", "O(1)", "Return the string at a key and change its expiry",
        "key:key expiration=[EX seconds:integer|PX milliseconds:integer|EXAT unix-time-seconds:unix-time|"
        "PXAT unix-time-milliseconds:unix-time|PERSIST]",
        KEY1_RW),
    DOCT("mset", "request_policy:multi_shard response_policy:all_succeeded", "write denyoom", "string", "string",
         "1.0.1", "O(N) where N is the number of keys", "Store several strings at once", "key_value=(key:key value:string)...",
         R(1, -1, 2, "OW update")),
    DOCT("msetnx", "request_policy:multi_shard response_policy:agg_min", "write denyoom", "string", "string", "1.0.1", "O(N) where N is the number of keys",
        "Store several strings at once, only if none of the keys exists", "key_value=(key:key value:string)...",
        R(1, -1, 2, "OW insert")),
    DOCT("mget", "request_policy:multi_shard", "readonly fast", "string", "string", "1.0.0",
         "O(N) where N is the number of keys", "Return the strings stored at several keys", "key:key...",
         R(1, -1, 1, "RO access")),
    DOC("incr", "write denyoom fast", "string", "string", "1.0.0", "O(1)", "Add one to the integer stored at a key",
        "key:key", KEY1_RW),
    DOC("decr", "write denyoom fast", "string", "string", "1.0.0", "O(1)", "Subtract one from the integer stored at a key",
        "key:key", KEY1_RW),
    DOC("incrby", "write denyoom fast", "string", "string", "1.0.0", "O(1)", "Add an integer to the integer stored at a key",
        "key:key increment:integer", KEY1_RW),
    DOC("decrby", "write denyoom fast", "string", "string", "1.0.0", "O(1)",
        "Subtract an integer from the integer stored at a key", "key:key decrement:integer", KEY1_RW),
    DOC("incrbyfloat", "write denyoom fast", "string", "string", "2.6.0", "O(1)",
        "Add a floating-point number to the number stored at a key", "key:key increment:double", KEY1_RW),
    DOC("append", "write denyoom fast", "string", "string", "2.0.0", "O(1) amortised",
        "Append bytes to the string at a key, creating it if needed", "key:key value:string", R(1, 0, 1, "RW insert")),
    DOC("strlen", "readonly fast", "string", "string", "2.2.0", "O(1)", "Return the length of the string at a key",
        "key:key", R(1, 0, 1, "RO")),
    DOC("getrange", "readonly", "string", "string", "2.4.0", "O(N) where N is the length returned",
        "Return a substring of the string at a key", "key:key start:integer end:integer", KEY1_RO),
    DOC("substr", "readonly", "string", "string", "1.0.0", "O(N) where N is the length returned",
        "Return a substring of the string at a key (the old name of GETRANGE)", "key:key start:integer end:integer",
        KEY1_RO),
    DOC("setrange", "write denyoom", "string", "string", "2.2.0", "O(1), plus the copy when the string grows",
        "Overwrite part of the string at a key from an offset", "key:key offset:integer value:string",
        R(1, 0, 1, "RW update")),

    /* expiry */
    DOC("expire", "write fast", "keyspace", "generic", "1.0.0", "O(1)", "Give a key a time to live in seconds",
        "key:key seconds:integer " EXPIRE_CONDITION, R(1, 0, 1, "RW update")),
    DOC("pexpire", "write fast", "keyspace", "generic", "2.6.0", "O(1)", "Give a key a time to live in milliseconds",
        "key:key milliseconds:integer " EXPIRE_CONDITION, R(1, 0, 1, "RW update")),
    DOC("expireat", "write fast", "keyspace", "generic", "1.2.0", "O(1)", "Make a key expire at a unix time in seconds",
        "key:key unix-time-seconds:unix-time " EXPIRE_CONDITION, R(1, 0, 1, "RW update")),
    DOC("pexpireat", "write fast", "keyspace", "generic", "2.6.0", "O(1)",
        "Make a key expire at a unix time in milliseconds",
        "key:key unix-time-milliseconds:unix-time " EXPIRE_CONDITION, R(1, 0, 1, "RW update")),
    DOCT("ttl", "nondeterministic_output", "readonly fast", "keyspace", "generic", "1.0.0", "O(1)",
         "Return a key's remaining time to live in seconds", "key:key", KEY1_RO),
    DOCT("pttl", "nondeterministic_output", "readonly fast", "keyspace", "generic", "2.6.0", "O(1)",
         "Return a key's remaining time to live in milliseconds", "key:key", KEY1_RO),
    DOC("expiretime", "readonly fast", "keyspace", "generic", "7.0.0", "O(1)",
        "Return the unix time in seconds at which a key expires", "key:key", KEY1_RO),
    DOC("pexpiretime", "readonly fast", "keyspace", "generic", "7.0.0", "O(1)",
        "Return the unix time in milliseconds at which a key expires", "key:key", KEY1_RO),
    DOC("persist", "write fast", "keyspace", "generic", "2.2.0", "O(1)", "Remove a key's expiry", "key:key",
        R(1, 0, 1, "RW update")),

    /* databases */
    DOC("select", "loading stale fast", "connection", "connection", "1.0.0", "O(1)",
        "Switch the connection to another database", "index:integer"),
    DOC("move", "write fast", "keyspace", "generic", "1.0.0", "O(1)", "Move a key to another database",
        "key:key db:integer", R(1, 0, 1, "RW access update")),
    DOC("swapdb", "write fast", "keyspace dangerous", "server", "4.0.0", "O(1)", "Exchange the contents of two databases",
        "index1:integer index2:integer"),

    /* connection and server */
    DOCT("ping", "request_policy:all_shards response_policy:all_succeeded", "fast", "connection", "connection",
         "1.0.0", "O(1)", "Check the server answers; echoes the message if one is given", "[message:string]"),
    DOC("echo", "loading stale fast", "connection", "connection", "1.0.0", "O(1)", "Return the message given", "message:string"),
    DOCT("info", "nondeterministic_output request_policy:all_shards response_policy:special", "loading stale",
         "dangerous", "server", "1.0.0", "O(1)", "Report the server's state and counters, by section",
         "[section:string...]"),
    DOC("goblin.memory", "loading stale", "", "goblin", "0.1.0", "O(1)",
        "Report the bytes goblin-ring's allocator holds, by category", ""),
    DOC("hello", "noscript loading stale fast no_auth allow_busy", "connection", "connection", "6.0.0", "O(1)",
        "Pick the protocol version, optionally authenticate and name the connection",
        "arguments=[protover:integer username_password=[AUTH username:string password:string] [SETNAME clientname:string]]"),
    DOC("auth", "noscript loading stale fast no_auth allow_busy", "connection", "connection", "1.0.0", "O(N) where N is the password length",
        "Authenticate the connection", "[username:string] password:string"),
    DOC("reset", "noscript loading stale fast no_auth allow_busy", "connection", "connection", "6.2.0", "O(1)",
        "Return the connection to its initial state", ""),
    DOC("quit", "noscript loading stale fast no_auth allow_busy", "connection", "connection", "1.0.0", "O(1)",
        "Close the connection after the reply", ""),
    DOCT("time", "nondeterministic_output", "loading stale fast", "", "server", "2.6.0", "O(1)",
         "Return the server's clock as seconds and microseconds", ""),
    DOCT("lastsave", "nondeterministic_output", "loading stale fast", "admin dangerous", "server", "1.0.0", "O(1)",
         "Return the unix time of the last successful save", ""),

    /* containers and their subcommands */
    DOCT("command", "nondeterministic_output_order", "loading stale", "connection", "server", "2.8.13", "O(N) where N is the number of commands",
        "Describe the server's commands", ""),
    SUB("command|count", 2, "loading stale", "connection", "server", "2.8.13", "O(1)", "Return the number of commands", ""),
    SUBT("command|list", "nondeterministic_output_order", -2, "loading stale", "connection", "server", "7.0.0", "O(N) where N is the number of commands",
        "Return the command names, optionally filtered",
        "[FILTERBY filterby=(MODULE module-name:string|ACLCAT category:string|PATTERN pattern:pattern)]"),
    SUBT("command|info", "nondeterministic_output_order", -2, "loading stale", "connection", "server", "2.8.13", "O(N) where N is the number of commands asked about",
        "Return the flags, key positions and categories of commands", "[command-name:string...]"),
    SUBT("command|docs", "nondeterministic_output_order", -2, "loading stale", "connection", "server", "7.0.0", "O(N) where N is the number of commands asked about",
        "Return the summaries and arguments of commands", "[command-name:string...]"),
    SUB("command|getkeys", -4, "loading stale", "connection", "server", "2.8.13", "O(N) where N is the number of arguments",
        "Return the keys a full command line would touch", "command:string arg:string..."),
    SUB("command|getkeysandflags", -4, "loading stale", "connection", "server", "7.0.0",
        "O(N) where N is the number of arguments", "Return the keys a full command line would touch, with their access flags",
        "command:string arg:string..."),
    SUB_HELP("command", "connection", "server", "5.0.0"),

    DOC("config", "", "", "server", "2.0.0", "Depends on the subcommand", "Read or reset the server's configuration", ""),
    SUB("config|get", -3, "admin noscript loading stale", "", "server", "2.0.0", "O(N) where N is the number of parameters",
        "Return the configuration parameters matching glob patterns", "parameter:string..."),
    SUBT("config|set", "request_policy:all_nodes response_policy:all_succeeded", -4, "admin noscript loading stale", "", "server", "2.0.0", "O(N) where N is the number of parameters",
        "Change configuration parameters", "data=(parameter:string value:string)..."),
    SUB("config|resetstat", 2, "admin noscript loading stale", "", "server", "2.0.0", "O(1)",
        "Reset the counters INFO reports", ""),
    SUB("config|rewrite", 2, "admin noscript loading stale", "", "server", "2.8.0", "O(1)",
        "Write the running configuration back to the configuration file", ""),
    SUB_HELP("config", "", "server", "5.0.0"),

    DOC("client", "", "", "connection", "2.4.0", "Depends on the subcommand", "Inspect and manage client connections", ""),
    SUB("client|id", 2, "noscript loading stale", "connection", "connection", "5.0.0", "O(1)",
        "Return the connection's id", ""),
    SUBT("client|info", "nondeterministic_output", 2, "noscript loading stale", "connection", "connection", "6.2.0", "O(1)",
        "Describe this connection", ""),
    SUBT("client|list", "nondeterministic_output", -2, "admin noscript loading stale", "connection", "connection", "2.4.0",
        "O(N) where N is the number of connections", "Describe every connection",
        "[TYPE client-type=(NORMAL|MASTER|REPLICA|PUBSUB)] [ID client-id:integer...]"),
    SUB("client|kill", -3, "admin noscript loading stale", "connection", "connection", "2.4.0",
        "O(N) where N is the number of connections", "Close connections chosen by address or id",
        "filter=(ip-port:string|[ID client-id:integer] [ADDR ip-port:string] [LADDR ip-port:string] [SKIPME yes/no:string])"),
    SUB("client|getname", 2, "noscript loading stale", "connection", "connection", "2.6.9", "O(1)",
        "Return the connection's name", ""),
    SUB("client|setname", 3, "noscript loading stale", "connection", "connection", "2.6.9", "O(1)",
        "Name the connection", "connection-name:string"),
    SUB("client|setinfo", 4, "noscript loading stale", "connection", "connection", "7.2.0", "O(1)",
        "Record the client library's name or version", "attr=(LIB-NAME libname:string|LIB-VER libver:string)"),
    SUB_HELP("client", "connection", "connection", "5.0.0"),

    DOC("memory", "", "", "server", "4.0.0", "Depends on the subcommand", "Report memory use", ""),
    SUB("memory|usage", -3, "readonly", "", "server", "4.0.0", "O(N) where N is the number of elements sampled",
        "Estimate the bytes a key and its value take", "key:key [SAMPLES count:integer]", R(2, 0, 1, "RO")),
    SUBT("memory|stats", "nondeterministic_output request_policy:all_shards response_policy:special", 2, "", "", "server", "4.0.0", "O(1)", "Report memory use in detail", ""),
    SUBT("memory|doctor", "nondeterministic_output request_policy:all_shards response_policy:special", 2, "", "", "server", "4.0.0", "O(1)", "Give advice about memory use", ""),
    SUBT("memory|malloc-stats", "nondeterministic_output request_policy:all_shards response_policy:special", 2, "", "", "server", "4.0.0", "Depends on the allocator", "Report the allocator's statistics", ""),
    SUBT("memory|purge", "request_policy:all_shards response_policy:all_succeeded", 2, "", "", "server", "4.0.0", "Depends on the allocator", "Ask the allocator to return free memory", ""),
    SUB_HELP("memory", "", "server", "4.0.0"),

    DOC("object", "", "", "generic", "2.2.3", "Depends on the subcommand", "Inspect how a value is stored", ""),
    SUBT("object|encoding", "nondeterministic_output", 3, "readonly", "keyspace", "generic", "2.2.3", "O(1)",
        "Return the internal encoding of the value at a key", "key:key", R(2, 0, 1, "RO")),
    SUBT("object|freq", "nondeterministic_output", 3, "readonly", "keyspace", "generic", "4.0.0", "O(1)",
        "Return the access frequency counter of a key", "key:key", R(2, 0, 1, "RO")),
    SUBT("object|idletime", "nondeterministic_output", 3, "readonly", "keyspace", "generic", "2.2.3", "O(1)",
        "Return the seconds since a key was last read or written", "key:key", R(2, 0, 1, "RO")),
    SUBT("object|refcount", "nondeterministic_output", 3, "readonly", "keyspace", "generic", "2.2.3", "O(1)",
        "Return the reference count of the value at a key", "key:key", R(2, 0, 1, "RO")),
    SUB("object|help", 2, "loading stale", "keyspace", "generic", "6.2.0", "O(1)",
        "List the subcommands and what they do", ""),

    DOC("function", "", "", "scripting", "7.0.0", "Depends on the subcommand", "Manage function libraries", ""),
    SUBT("function|load", "request_policy:all_shards response_policy:all_succeeded", -3, "write denyoom noscript", "scripting", "scripting", "7.0.0",
        "O(1), plus the time to compile the code", "Load a function library", "[REPLACE] function-code:string"),
    SUBT("function|delete", "request_policy:all_shards response_policy:all_succeeded", 3, "write noscript", "scripting", "scripting", "7.0.0", "O(1)",
        "Delete a function library", "library-name:string"),
    SUBT("function|flush", "request_policy:all_shards response_policy:all_succeeded", -2, "write noscript", "scripting", "scripting", "7.0.0", "O(N) where N is the number of functions",
        "Delete every function library", FLUSH_TYPE),
    SUBT("function|list", "nondeterministic_output_order", -2, "noscript", "scripting", "scripting", "7.0.0", "O(N) where N is the number of functions",
        "Describe the loaded libraries and their functions",
        "[LIBRARYNAME library-name-pattern:pattern] [WITHCODE]"),
    SUB("function|dump", 2, "noscript", "scripting", "scripting", "7.0.0", "O(N) where N is the number of functions",
        "Serialise every library", ""),
    SUBT("function|restore", "request_policy:all_shards response_policy:all_succeeded", -3, "write denyoom noscript", "scripting", "scripting", "7.0.0",
        "O(N) where N is the number of functions", "Load libraries from a FUNCTION DUMP payload",
        "serialized-value:string policy=[FLUSH|APPEND|REPLACE]"),
    SUBT("function|kill", "request_policy:all_shards response_policy:one_succeeded", 2, "noscript allow_busy", "scripting", "scripting", "7.0.0", "O(1)",
        "Stop the function that is running", ""),
    SUBT("function|stats", "nondeterministic_output request_policy:all_shards response_policy:special", 2, "noscript allow_busy", "scripting", "scripting", "7.0.0", "O(1)",
        "Report the running function and the engines", ""),
    SUB_HELP("function", "scripting", "scripting", "7.0.0"),
};

#define DOC_COUNT (sizeof docs / sizeof docs[0])

/* Redis's orders, which COMMAND INFO follows: flags in commandFlagsReply's order,
 * categories in the ACL category table's. */
static const char *const flag_names[] = {
    "write", "readonly", "denyoom", "module", "admin", "pubsub", "noscript", "blocking", "loading", "stale",
    "skip_monitor", "skip_slowlog", "asking", "fast", "no_auth", "may_replicate", "no_mandatory_keys",
    "no_async_loading", "no_multi", "movablekeys", "allow_busy",
};
#define FLAG_COUNT (sizeof flag_names / sizeof flag_names[0])

static const char *const acl_names[] = {
    "keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap", "hyperloglog", "geo",
    "stream", "pubsub", "admin", "fast", "slow", "blocking", "dangerous", "connection", "transaction", "scripting",
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
    for (size_t i = 0; i < DOC_COUNT; i++)
        if (strlen(docs[i].name) == length && strncasecmp(docs[i].name, name, length) == 0) return &docs[i];
    return NULL;
}

static command_ref_t top_level_ref(size_t index) {
    command_ref_t ref = {NULL, 0, NULL, NULL};
    ref.name = gr_command_name(index, &ref.arity);
    if (!ref.name) return ref;
    size_t length = strlen(ref.name);
    ref.doc = find_doc(ref.name, length);
    static const char *const engines[] = {"pma", "seg"};
    for (size_t e = 0; !ref.doc && e < 2; e++) {
        char prefix[16];
        int n = snprintf(prefix, sizeof prefix, "goblin.%s.", engines[e]);
        if (length > (size_t)n && strncasecmp(ref.name, prefix, (size_t)n) == 0) {
            ref.doc = find_doc(ref.name + n, length - (size_t)n);
            if (ref.doc) ref.engine = engines[e];
        }
    }
    return ref;
}

/* The index of the top-level command named name in resp_commands.c's table, or -1. */
static long find_top_level(const uint8_t *name, size_t length) {
    const char *candidate;
    for (size_t i = 0; (candidate = gr_command_name(i, NULL)); i++)
        if (gr_word_is(name, length, candidate)) return (long)i;
    return -1;
}

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
    for (; *cursor < DOC_COUNT; (*cursor)++) {
        const command_doc_t *doc = &docs[*cursor];
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

/* Redis's populateCommandLegacyRangeSpec: one range covering contiguous step-1 range
 * specs; a command any of whose keys it cannot describe gets "movablekeys". */
static void legacy_range(const command_doc_t *doc, int *first, int *last, int *step, int *movable) {
    *first = *last = *step = 0;
    *movable = 0;
    size_t specs = key_spec_count(doc);
    if (specs == 0) return;
    if (specs == 1 && !doc->keys[0].keynum) {
        *first = doc->keys[0].begin;
        *last = doc->keys[0].last >= 0 ? doc->keys[0].begin + doc->keys[0].last : doc->keys[0].last;
        *step = doc->keys[0].step;
        return;
    }
    int lowest = 1 << 30, highest = 0, previous = 0;
    for (size_t i = 0; i < specs; i++) {
        const key_spec_t *spec = &doc->keys[i];
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
    reply_text(reply, "index");
    reply_text(reply, "spec");
    gr_reply_map_begin(reply, 1);
    reply_text(reply, "index");
    gr_reply_integer(reply, spec->begin);
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
        reply_text(reply, "limit"); gr_reply_integer(reply, 0);
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

void gr_cmd_command(gr_db_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
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
