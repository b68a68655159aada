/* acl.h — ACL users: the user table, each user's passwords, command bitmap, key and channel
 * patterns, and the rules ACL SETUSER applies (Redis 7.0's grammar and error texts).
 *
 * Every connection (db.h) points at the user it authenticated as, or at NULL before it has:
 * admission (gr_db_admit) then refuses with NOAUTH unless the default user is on and nopass, as
 * Redis's authRequired. A user's allowed commands are a bitmap over the command table's stat
 * slots (exec/command.h: row index, then subcommands past gr_command_count()), built when its
 * rules change, so admitting a command costs one bit test; keys and channels are matched only
 * for a user without allkeys / allchannels. Passwords are kept as their SHA-256 (core/sha256.h),
 * as Redis keeps them. requirepass is the default user's password (gr_acl_set_requirepass).
 * The implementation is acl.c; ACL's commands are commands/cmd_acl.c.
 */
#ifndef GR_ACL_H
#define GR_ACL_H

#include <stddef.h>
#include <stdint.h>

#include "core/sha256.h"

#define GR_ACL_SLOTS 512   /* == GR_COMMAND_STAT_SLOTS (db.h): commands and subcommands */
#define GR_ACL_WORDS (GR_ACL_SLOTS / 64)

enum { GR_ACL_READ = 1, GR_ACL_WRITE = 2 };
enum { GR_ACL_SANITIZE = 1, GR_ACL_SKIP_SANITIZE = 2 };   /* flags shown, as Redis's; not acted on */   /* a key pattern's %R~ / %W~ (both: ~) */

typedef struct gr_acl_pattern {
    char *text;
    uint32_t length;
    uint8_t flags;                     /* keys: GR_ACL_READ | GR_ACL_WRITE */
} gr_acl_pattern_t;

typedef struct gr_acl_user {
    uint64_t allowed[GR_ACL_WORDS];    /* by stat slot: the hot path's one bit test */
    uint8_t enabled, nopass, allkeys, allchannels, allcommands;
    uint8_t payload;                   /* RESTORE's payload rule: 0 unset, GR_ACL_SANITIZE, GR_ACL_SKIP_SANITIZE */
    char *name;
    size_t name_length;
    uint8_t (*passwords)[GR_SHA256_BYTES];
    uint32_t password_count;
    gr_acl_pattern_t *keys;
    uint32_t key_count;
    gr_acl_pattern_t *channels;
    uint32_t channel_count;
    /* Redis 7.0's selectors, "(~k* +get)": each a set of commands, keys and channels of its own
     * (the fields above; name NULL). A call is allowed when the user's root permissions or
     * any one selector allow all of it. */
    struct gr_acl_user *selectors;
    uint32_t selector_count;
    struct gr_acl_user *next;          /* the table, sorted by name (ACL USERS, ACL LIST) */
} gr_acl_user_t;

/* ACL LOG (Redis 7's): one entry per refusal, newest first; a refusal equal to one of the 10
 * newest entries (same reason, context, object and user, within 60 s of its last update) bumps
 * that entry's count and moves it to the front instead of adding one. */
enum { GR_ACL_LOG_COMMAND, GR_ACL_LOG_KEY, GR_ACL_LOG_CHANNEL, GR_ACL_LOG_AUTH };
enum { GR_ACL_LOG_TOPLEVEL, GR_ACL_LOG_MULTI, GR_ACL_LOG_LUA };

typedef struct gr_acl_log_entry {
    int64_t count, entry_id, created_ms, updated_ms;
    uint8_t reason, context;
    char *object, *username, *client_info;
    size_t object_length, username_length;
    struct gr_acl_log_entry *next;
} gr_acl_log_entry_t;

typedef struct gr_acl {
    gr_acl_user_t *users;
    gr_acl_user_t *default_user;
    gr_acl_log_entry_t *log;           /* newest first */
    int64_t log_length, log_max_len;   /* acllog-max-len: 128 */
    int64_t log_next_id;               /* entry-id: counts the entries ever made (RESET keeps it) */
    char *file;                        /* aclfile (CONFIG, fixed at start), or NULL */
} gr_acl_t;

/* The table with the default user: on, nopass, ~*, &*, +@all. NULL when out of memory. */
gr_acl_t *gr_acl_new(void);
void gr_acl_free(gr_acl_t *acl);
gr_acl_user_t *gr_acl_find(const gr_acl_t *acl, const uint8_t *name, size_t length);
/* The user a name and password log in as: on, and nopass or one of its passwords; else NULL. */
gr_acl_user_t *gr_acl_authenticate(const gr_acl_t *acl, const uint8_t *name, size_t name_length,
                                   const uint8_t *password, size_t password_length);
/* requirepass: the default user gets resetpass and >password, or nopass when it is empty. */
void gr_acl_set_requirepass(gr_acl_t *acl, const char *password);
/* The user a connection without one acts as: the default user when it is on and nopass
 * (Redis's authRequired is false), else NULL (NOAUTH). */
gr_acl_user_t *gr_acl_implicit_user(const gr_acl_t *acl);

/* ACL SETUSER: apply rules left to right to a copy of the user (made when it does not exist),
 * and keep them only when all are valid, as Redis. 0, or -1 with Redis's error text in error
 * ("Error in ACL SETUSER modifier '%s': ..."). *created says whether the user is new. */
int gr_acl_set_user(gr_acl_t *acl, const uint8_t *name, size_t name_length, size_t rule_count,
                    const uint8_t *const *rules, const size_t *rule_lengths, char *error, size_t error_size);
/* ACL DELUSER: 1 when it existed (removed and freed), 0 otherwise. The caller has detached
 * connections from it first. The default user cannot be deleted (the caller refuses it). */
int gr_acl_delete_user(gr_acl_t *acl, gr_acl_user_t *user);

/* Admission's checks, for a user allowed the command: the command's own bit (by slot). */
static inline int gr_acl_allows_slot(const gr_acl_user_t *user, int slot) {
    return slot >= 0 && slot < GR_ACL_SLOTS && (user->allowed[slot >> 6] >> (slot & 63) & 1);
}
/* A key for the given access (GR_ACL_READ/WRITE bits; 0: any one pattern matching at all). */
int gr_acl_allows_key(const gr_acl_user_t *user, const uint8_t *key, size_t length, int access);
/* A channel (or, is_pattern: a PSUBSCRIBE pattern, which must equal one of the patterns), by one
 * selector's (or the root's) channel patterns alone: admission checks them within the selector
 * that allows the command (gr_db_acl_check). */
int gr_acl_selector_allows_channel(const gr_acl_user_t *selector, const uint8_t *channel, size_t length, int is_pattern);

/* Descriptions, as ACL LIST / GETUSER print them; each returns a malloc'd text (NULL: out of
 * memory). flags: "on nopass" ...; commands: "+@all", "-@all +@list -lpop" ...;
 * keys "~* %R~x"; channels "&*"; the whole line is "user NAME flags #hashes keys channels commands". */
char *gr_acl_describe_commands(const gr_acl_user_t *user);
char *gr_acl_describe_user(const gr_acl_user_t *user);
char *gr_acl_describe_keys(const gr_acl_user_t *user);   /* GETUSER's keys: "~k* %R~r*" */
char *gr_acl_describe_channels(const gr_acl_user_t *user);   /* GETUSER's channels: "&*", "&a &b", "" */

/* ACL LOG: record a refusal at now_ms; client_info is taken over (malloc'd, may be NULL). */
void gr_acl_log_add(gr_acl_t *acl, int reason, int context, const uint8_t *object, size_t object_length,
                    const uint8_t *username, size_t username_length, char *client_info, int64_t now_ms);
void gr_acl_log_reset(gr_acl_t *acl);

/* The ACL file (Redis 7.0's syntax: "user <name> <rules>" lines): a new table made from it, or
 * NULL with *errors (malloc'd: Redis's texts, every error of the file; NULL when out of memory).
 * gr_acl_replace then puts its users in acl's place (the default user's record is kept, with
 * the loaded rules; the caller has detached connections from the other users) and frees it.
 * gr_acl_save_file writes ACL LIST's lines to a temporary file renamed over path: 0 or -1. */
gr_acl_t *gr_acl_load_file(const char *path, char **errors);
void gr_acl_replace(gr_acl_t *acl, gr_acl_t *loaded);
int gr_acl_save_file(const gr_acl_t *acl, const char *path);

/* Categories: Redis's names, in ACL CAT order; -1 for an unknown name. */
size_t gr_acl_category_count(void);
const char *gr_acl_category_name(size_t index);
int gr_acl_category_index(const uint8_t *name, size_t length);
/* Whether the command in a stat slot is in a category (its row's flags and .acl words). */
int gr_acl_slot_in_category(int slot, int category);

#endif
