/* command.h — the command table's row, the registry exec builds from it, and argv to a typed
 * request: the one place a command's arguments are validated.
 *
 * The rows live in commands/ (a .def file per family, assembled by commands/command_table.c),
 * which hands them to exec when the library loads (gr_exec_install_commands): exec never
 * names a command function, it calls through the row's pointers. From the rows exec derives
 * the name lookup, arity checks, template -> command (commandstats, the ring's requests),
 * OOM admission and NOAUTH exemption (the flag words), and dispatch: one indexed call through
 * the row's handler.
 *
 * gr_request_from_argv looks argv[0] up, checks the arity, parses and validates every argument
 * with Redis's error texts, and fills a gr_request_t (exec/request.h) — the same struct the ring
 * decodes from SBE. It is pure: it touches no database and writes no reply, so the server's RESP
 * path, the ring client (client/client.c) and the bench's load generator all call it and
 * validation lives once.
 */
#ifndef GR_COMMAND_H
#define GR_COMMAND_H

#include <stddef.h>
#include <stdint.h>

#include "exec/reply.h"
#include "exec/request.h"

/* cffi-cdef-begin: everything up to cffi-cdef-end is also read by native/build_ffi.py. */
/* Why argv could not become a request: the error code (exec/reply.h, the schema's ErrorCode)
 * and Redis's full error text ("ERR wrong number of arguments for 'get' command"), NUL
 * terminated. 512 bytes: Redis's unknown-command text quotes up to 128 bytes of the name and
 * 128 of the arguments, so it can pass 256. */
typedef struct gr_build_error {
    gr_error_code_t code;
    char text[512];
} gr_build_error_t;

/* Look argv[0] up in the command table, check arity, parse and validate every argument with
 * Redis's texts, and fill *request (items point into argv; the caller gives items[] with
 * item_capacity >= argc). A command with no typed template is returned as GR_T_COMMAND with
 * items = argv. Returns the command's table index, or -1 with *error. */
int gr_request_from_argv(size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                         gr_request_t *request, gr_bytes_t *items, uint32_t item_capacity,
                         gr_build_error_t *error);
/* Command flags, Redis's words in COMMAND INFO's order; a row names them as words
 * (.flags = "write denyoom fast") and the registry keeps them as these bits. */
enum {
    GR_CMD_FLAG_WRITE = 1u << 0, GR_CMD_FLAG_READONLY = 1u << 1, GR_CMD_FLAG_DENYOOM = 1u << 2,
    GR_CMD_FLAG_MODULE = 1u << 3, GR_CMD_FLAG_ADMIN = 1u << 4, GR_CMD_FLAG_PUBSUB = 1u << 5,
    GR_CMD_FLAG_NOSCRIPT = 1u << 6, GR_CMD_FLAG_BLOCKING = 1u << 7, GR_CMD_FLAG_LOADING = 1u << 8,
    GR_CMD_FLAG_STALE = 1u << 9, GR_CMD_FLAG_SKIP_MONITOR = 1u << 10, GR_CMD_FLAG_SKIP_SLOWLOG = 1u << 11,
    GR_CMD_FLAG_ASKING = 1u << 12, GR_CMD_FLAG_FAST = 1u << 13, GR_CMD_FLAG_NO_AUTH = 1u << 14,
    GR_CMD_FLAG_MAY_REPLICATE = 1u << 15, GR_CMD_FLAG_NO_MANDATORY_KEYS = 1u << 16,
    GR_CMD_FLAG_NO_ASYNC_LOADING = 1u << 17, GR_CMD_FLAG_NO_MULTI = 1u << 18, GR_CMD_FLAG_MOVABLEKEYS = 1u << 19,
    GR_CMD_FLAG_ALLOW_BUSY = 1u << 20,
};

/* The table, read by index (COMMAND, INFO commandstats, the Python client). */
typedef struct gr_command_facts {
    const char *name;        /* "get", "goblin.pma.lpush" */
    int arity;
    uint16_t template_id;    /* the typed form, or 0 (it travels as a CommandRequest) */
    uint8_t engine;          /* 1/2 for goblin.seg.X / goblin.pma.X */
    uint8_t has_builder;     /* 1: argv builds a typed request; 0: argv travels as is */
    uint32_t flags;          /* GR_CMD_FLAG_* bits */
    int first_key, last_key, key_step;   /* Redis's legacy key range, from the key specs */
} gr_command_facts_t;
/* Number of top-level commands (COMMAND COUNT). */
size_t gr_command_count(void);
/* The index-th command's name (NULL past the end) and arity. */
const char *gr_command_name(size_t index, int *arity);
/* 0 and *facts filled, or -1 past the end. */
int gr_command_facts(size_t index, gr_command_facts_t *facts);
/* The commandstats slot of a call: a subcommand's own ("client|list") when argv[1] names a
 * subcommand row of the command, else the command's index. Slots past gr_command_count() are
 * subcommands; gr_command_stat_name names any slot (NULL past the last). */
int gr_command_stat_slot(int index, size_t argc, const uint8_t *const *argv, const size_t *argv_length);
const char *gr_command_stat_name(size_t slot);
/* Index of a command by name (case-insensitive), or -1. */
int gr_command_index(const uint8_t *name, size_t length);
/* Index of the command a typed request is (its template and match fields), or -1. */
int gr_command_index_of_request(const gr_request_t *request);
/* 1 when the request is a command that may block (BLPOP, or BZPOPMIN sent as argv), with its
 * timeout in seconds as given (0: forever); else 0. The ring client waits that much longer. */
int gr_request_may_block(const gr_request_t *request, double *timeout);
/* cffi-cdef-end */

#define GR_CMD_FLAG_NAMES                                                                                    \
    "write", "readonly", "denyoom", "module", "admin", "pubsub", "noscript", "blocking", "loading", "stale", \
    "skip_monitor", "skip_slowlog", "asking", "fast", "no_auth", "may_replicate", "no_mandatory_keys",       \
    "no_async_loading", "no_multi", "movablekeys", "allow_busy"

struct gr_server;
struct gr_block_spec;   /* exec/blocking.h */

/* One Redis 7 key spec. begin_search is "index" (begin), or with keyword set "keyword": the
 * keys start after the first argv[i] equal to keyword, i searched from begin (startfrom) on.
 * find_keys is either
 *   range:  keys from argv[begin] to argv[begin + last] (last < 0: argc + last), every step;
 *           with limit (keyword specs, last -1): up to 1/limit of what follows (XREAD's keys,
 *           then as many IDs)
 *   keynum: argv[begin + last] holds the key count; keys start at begin + first, every step
 * flags are Redis's key-spec flags as words ("RW access delete"). begin 0: no spec. */
typedef struct gr_key_spec {
    int8_t begin;
    int8_t keynum;
    int8_t last;         /* range: lastkey; keynum: keynumidx */
    int8_t step;
    int8_t first;        /* keynum: firstkey (relative to begin) */
    int8_t limit;        /* range: Redis's limit (0: none) */
    const char *flags;
    const char *keyword; /* NULL: an "index" begin_search */
} gr_key_spec_t;
#define GR_MAX_KEY_SPECS 2
#define RANGE(b, l, s, f) {.begin = (b), .keynum = 0, .last = (l), .step = (s), .first = 0, .flags = (f)}
#define KEYWORD_RANGE(kw, from, l, s, lim, f) \
    {.begin = (from), .keynum = 0, .last = (l), .step = (s), .first = 0, .limit = (lim), .flags = (f), .keyword = (kw)}
#define KEYNUM(b, idx, fst, s, f) {.begin = (b), .keynum = 1, .last = (idx), .step = (s), .first = (fst), .flags = (f)}

/* The argv positions one key spec names in a command line, as Redis's getKeysUsingKeySpecs
 * finds them (a keyword's search, a range with its limit, a key count): 0 with the keys at
 * first, first + step, ... up to last (and below argc), or -1 when the line names none. ACL's
 * key check and CLIENT TRACKING's read keys use it; COMMAND GETKEYS has its own strict form. */
int gr_key_spec_positions(const gr_key_spec_t *spec, size_t argc, const uint8_t *const *argv,
                          const size_t *argv_length, size_t *first, size_t *last);

/* The request fields that tell a command from the others of its template (LPUSH from RPUSH:
 * end; DEL from UNLINK: flag). Building from argv sets them; a typed request from the ring is
 * named by the first row, in table order, whose template, engine and match fields it has. */
enum { GR_MATCH_END = 1, GR_MATCH_TO_END = 2, GR_MATCH_FLAG = 4, GR_MATCH_COUNT = 8 };
typedef struct gr_request_match {
    uint8_t fields;      /* GR_MATCH_* bits */
    uint8_t end, to_end, flag;
    uint32_t count;
} gr_request_match_t;

/* What a builder sees: argv (arity already checked), the request with its template, engine,
 * match fields and key (argv[1]) already set, and where to say why argv is refused. */
typedef struct gr_build_context {
    size_t argc;
    const uint8_t *const *argv;
    const size_t *argv_length;
    gr_request_t *request;
    gr_build_error_t *error;
    const struct gr_command *command;
} gr_build_context_t;

/* 0 with ctx->request filled, or -1 with ctx->error filled. */
typedef int (*gr_request_builder_t)(gr_build_context_t *ctx);
typedef void (*gr_command_handler_t)(struct gr_server *db, const gr_request_t *request, gr_reply_t *reply);
typedef void (*gr_argv_handler_t)(struct gr_server *db, size_t argc, const uint8_t *const *argv,
                                  const size_t *argv_length, gr_reply_t *reply);

/* What a row's default keyspace event does for a key the command left missing: nothing more,
 * "del" after the event (a list, set, hash or sorted set it emptied), or "del" instead of the
 * event (a STORE with an empty result, an expiry already past). */
enum { GR_GONE_NOTHING = 0, GR_GONE_ALSO_DEL = 1, GR_GONE_ONLY_DEL = 2 };

/* Where a command may run besides anywhere (a row's .runs): in a RESP2 connection's subscribed
 * mode (PING, the (P|S)SUBSCRIBE family, QUIT, RESET), and at once inside MULTI instead of
 * being queued (MULTI, EXEC, DISCARD, WATCH, QUIT, RESET); inside MULTI over maxmemory, where
 * every other command is refused with OOM (EXEC, DISCARD, QUIT, RESET: Redis 7.0's
 * processCommand); and where a read may not: refused like the writes while the disk fails
 * (PING, as Redis refuses it, so a health check sees it). */
enum {
    GR_RUNS_WHEN_SUBSCRIBED = 1, GR_RUNS_AT_ONCE_IN_MULTI = 2, GR_RUNS_NOT_ON_DISK_ERROR = 4,
    GR_RUNS_IN_MULTI_OVER_MAXMEMORY = 8
};

/* One row. A command runs one of two ways: typed (template_id, build, handler: argv is built
 * into a gr_request_t, the ring may send that request directly) or as argv (argv_handler,
 * build NULL). A row may have both: MEMORY is argv from RESP, and its USAGE is the ring's typed
 * MemoryUsageRequest. A subcommand row ("config|get") documents its container's subcommand;
 * the container's handler runs it. */
typedef struct gr_command {
    const char *name;
    int arity;
    const char *flags;          /* Redis's command flags as words */
    const char *acl;            /* ACL categories beyond those the flags imply ("list") */
    const char *tips;           /* command tips as words, or NULL */
    const char *group, *since, *complexity, *summary;
    const char *arguments;      /* COMMAND DOCS arguments in command_docs.c's DSL; "" for none */
    gr_key_spec_t keys[GR_MAX_KEY_SPECS];
    uint16_t template_id;       /* 0: no typed form */
    uint8_t engine;             /* gr_request_t.engine: 0, or 1/2 for goblin.seg.X/goblin.pma.X */
    gr_request_match_t match;
    gr_request_builder_t build;
    gr_command_handler_t handler;
    gr_argv_handler_t argv_handler;
    const struct gr_block_spec *blocking;   /* NULL unless the command can block */
    uint8_t runs;                           /* GR_RUNS_* bits */
    /* Its keyspace event (exec/call.h): every key it touches gets it, unless the handler states
     * its events with gr_call_notify; gone says what a key the command left missing gets
     * (GR_GONE_*). {0}: none. */
    struct { int type; const char *event; int gone; } notify;
    /* A typed request back to argv, written with propagate.h's gr_effect_* calls: the effect a
     * typed write propagates when its handler states none. NULL for argv-only rows. */
    void (*render)(struct gr_server *db, const gr_request_t *request);
    /* Keys its key specs cannot describe (SORT's STORE destination), as Redis's getkeys_proc:
     * fills positions (argv indexes) and flags (key-spec flag words) of every key, at most
     * capacity, and returns the count. NULL for most rows; a row with one is "movablekeys" and
     * COMMAND GETKEYS asks it. */
    size_t (*find_keys)(size_t argc, const uint8_t *const *argv, const size_t *argv_length, size_t *positions,
                        const char **flags, size_t capacity);
    /* Where a typed request of a row with more than one key holds its keys (GR_REQUEST_KEYS_*),
     * so that ACL checks each of them for a user without allkeys; 0 (none said): such a request
     * is refused for that user. Single-key rows need none: their key is request->key. */
    uint8_t request_keys;
    /* Which arguments are pub/sub channels ACL checks (Redis 7.0's getChannelsFromCommand):
     * GR_ACL_CHANNELS_* ; 0 for the rest (the unsubscribes too: not checked, as Redis). */
    uint8_t acl_channels;
} gr_command_t;

enum {
    GR_ACL_CHANNELS_ONE = 1,        /* argument 1: PUBLISH, SPUBLISH */
    GR_ACL_CHANNELS_ALL = 2,        /* arguments 1..: SUBSCRIBE, SSUBSCRIBE */
    GR_ACL_CHANNELS_PATTERN = 4,    /* with ALL: PSUBSCRIBE's patterns (equal to the user's, not matched) */
};

enum {
    GR_REQUEST_KEYS_ITEMS = 1,      /* every item is a key (spec 0's access): DEL's, MGET's, BLPOP's, LMPOP's */
    GR_REQUEST_KEYS_ITEM_PAIRS,     /* items 0, 2, 4 ... are keys (spec 0), the others values */
    GR_REQUEST_KEYS_KEY_ARG1,       /* key (spec 0) and arg1 (spec 1): a source and a destination */
    GR_REQUEST_KEYS_COUNTED_ITEMS,  /* the first `count` items (numkeys): EVALSHA's, FCALL's */
    GR_REQUEST_KEYS_FIRST_HALF,     /* the first half of the items, the IDs after them: XREADGROUP's */
};

/* Called once, when the library loads, by commands/command_table.c. The rows must outlive
 * every use (they are static). */
void gr_exec_install_commands(const gr_command_t *commands, size_t count, const gr_command_t *subcommands,
                              size_t subcommand_count);
/* The rows, for COMMAND (command_docs.c): NULL past the end. */
const gr_command_t *gr_command_at(size_t index);
const gr_command_t *gr_subcommand_at(size_t index);
uint32_t gr_command_flags(int index);   /* GR_CMD_FLAG_* bits; 0 for -1 */
/* The flags of what argv runs: its subcommand's row ("client|list") when it names one, else the
 * command's (a script's checks: noscript, write). */
uint32_t gr_command_call_flags(int index, size_t argc, const uint8_t *const *argv, const size_t *argv_length);
/* Redis's legacy first/last/step, derived from the key specs; *movable when they cannot say. */
void gr_command_legacy_range(const gr_command_t *command, int *first, int *last, int *step, int *movable);

/* The two halves of gr_request_from_argv, for the server's argv path, which admits the
 * command (NOAUTH, OOM) between them as Redis does: the index of a command that exists with a
 * valid arity, else -1 with *error ... */
int gr_command_lookup(size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_build_error_t *error);
/* ... then its arguments parsed into *request: index, or -1 with *error. */
int gr_command_build(int index, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                     gr_request_t *request, gr_bytes_t *items, uint32_t item_capacity, gr_build_error_t *error);
/* MULTI's queue-time check: 0 if the command exists with a valid arity, else the error is written. */
int gr_command_check(size_t argc, const uint8_t *const *argv, const size_t *argv_length, gr_reply_t *reply);
/* The table name of the command a typed request is ("rpush", "goblin.pma.lmpop"), or NULL. */
const char *gr_request_command_name(const gr_request_t *request);
/* 1 if the command may grow memory (refused with OOM over maxmemory): its denyoom flag. */
int gr_command_denies_oom(int index);
/* Write error as the reply (its code and text). */
void gr_reply_build_error(gr_reply_t *reply, const gr_build_error_t *error);

#endif
