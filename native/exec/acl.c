/* acl.c — the ACL user table, ACL SETUSER's rule grammar, the checks admission makes, and the
 * descriptions ACL LIST / GETUSER print; see acl.h.
 *
 * Command bits are kept exactly as Redis 7.0 keeps them: one per command and one per
 * subcommand (the command table's stat slots); +cmd / -cmd on a command with subcommands sets
 * or clears all of them, +cmd|sub one; +@category walks every command and subcommand in it. A
 * command is checked by its subcommand's slot when it has one. Categories per slot are worked
 * out once from the rows (flags imply some, as Redis's setImplicitACLCategories; .acl names the
 * others). Changes are made on a copy of the user and kept only when every rule is valid.
 */
#include "exec/acl.h"

#include <errno.h>
#include <stdarg.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/glob.h"
#include "exec/command.h"
#include "exec/server_text.h"

/* ---- categories: Redis 7.0's ACLCommandCategories, in its order ---- */

static const char *const CATEGORY_NAMES[] = {
    "keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap", "hyperloglog", "geo",
    "stream", "pubsub", "admin", "fast", "slow", "blocking", "dangerous", "connection", "transaction", "scripting",
};
#define CATEGORY_COUNT (sizeof CATEGORY_NAMES / sizeof CATEGORY_NAMES[0])
enum { CAT_READ = 1, CAT_WRITE = 2, CAT_PUBSUB = 12, CAT_ADMIN = 13, CAT_FAST = 14, CAT_SLOW = 15,
       CAT_BLOCKING = 16, CAT_DANGEROUS = 17, CAT_SCRIPTING = 20 };

size_t gr_acl_category_count(void) { return CATEGORY_COUNT; }
const char *gr_acl_category_name(size_t index) { return index < CATEGORY_COUNT ? CATEGORY_NAMES[index] : NULL; }

int gr_acl_category_index(const uint8_t *name, size_t length) {
    for (size_t i = 0; i < CATEGORY_COUNT; i++)
        if (strlen(CATEGORY_NAMES[i]) == length && !strncasecmp(CATEGORY_NAMES[i], (const char *)name, length))
            return (int)i;
    return -1;
}

/* Per slot: its categories (bits by CATEGORY_NAMES index), its container (a subcommand's
 * command, else -1) and, for a command, its subcommands' slots [first, end). */
static struct {
    int ready;
    size_t slots;
    uint32_t categories[GR_ACL_SLOTS];
    int16_t container[GR_ACL_SLOTS];
    int16_t first_sub[GR_ACL_SLOTS], end_sub[GR_ACL_SLOTS];
} facts;

static int has_word(const char *words, const char *word) {
    size_t n = strlen(word);
    for (const char *p = words; p && *p;) {
        while (*p == ' ') p++;
        const char *end = p;
        while (*end && *end != ' ') end++;
        if ((size_t)(end - p) == n && !strncmp(p, word, n)) return 1;
        p = end;
    }
    return 0;
}

static const gr_command_t *row_of(size_t slot) {
    size_t count = gr_command_count();
    return slot < count ? gr_command_at(slot) : gr_subcommand_at(slot - count);
}

static void learn_facts(void) {
    if (facts.ready) return;
    size_t count = gr_command_count();
    size_t slots = 0;
    while (slots < GR_ACL_SLOTS && gr_command_stat_name(slots)) slots++;
    facts.slots = slots;
    for (size_t slot = 0; slot < slots; slot++) {
        const gr_command_t *row = row_of(slot);
        uint32_t flags = gr_command_flags((int)slot), bits = 0;
        for (size_t c = 0; c < CATEGORY_COUNT; c++)
            if (row && has_word(row->acl, CATEGORY_NAMES[c])) bits |= 1u << c;
        if (flags & GR_CMD_FLAG_WRITE) bits |= 1u << CAT_WRITE;
        if ((flags & GR_CMD_FLAG_READONLY) && !(bits & (1u << CAT_SCRIPTING))) bits |= 1u << CAT_READ;
        if (flags & GR_CMD_FLAG_ADMIN) bits |= 1u << CAT_ADMIN | 1u << CAT_DANGEROUS;
        if (flags & GR_CMD_FLAG_PUBSUB) bits |= 1u << CAT_PUBSUB;
        if (flags & GR_CMD_FLAG_FAST) bits |= 1u << CAT_FAST;
        if (flags & GR_CMD_FLAG_BLOCKING) bits |= 1u << CAT_BLOCKING;
        if (!(bits & (1u << CAT_FAST))) bits |= 1u << CAT_SLOW;
        facts.categories[slot] = bits;
        facts.container[slot] = -1;
        facts.first_sub[slot] = facts.end_sub[slot] = 0;
    }
    for (size_t slot = count; slot < slots; slot++) {
        const char *name = gr_command_stat_name(slot), *bar = strchr(name, '|');
        int container = bar ? gr_command_index((const uint8_t *)name, (size_t)(bar - name)) : -1;
        facts.container[slot] = (int16_t)container;
        if (container < 0) continue;
        if (facts.end_sub[container] == 0) facts.first_sub[container] = (int16_t)slot;
        facts.end_sub[container] = (int16_t)(slot + 1);
    }
    facts.ready = 1;
}

int gr_acl_slot_in_category(int slot, int category) {
    learn_facts();
    return slot >= 0 && (size_t)slot < facts.slots && category >= 0 && (facts.categories[slot] >> category & 1);
}

/* ---- users ---- */

static void set_bit(gr_acl_user_t *user, size_t slot, int allow) {
    if (slot >= GR_ACL_SLOTS) return;
    if (allow) user->allowed[slot >> 6] |= 1ull << (slot & 63);
    else user->allowed[slot >> 6] &= ~(1ull << (slot & 63));   /* +@all's flag stays, as Redis's */
}

/* Redis's ACLChangeSelectorPerm: a command and all its subcommands. */
static void change_command(gr_acl_user_t *user, size_t slot, int allow) {
    set_bit(user, slot, allow);
    if (facts.container[slot] < 0)
        for (int sub = facts.first_sub[slot]; sub < facts.end_sub[slot]; sub++)
            if (facts.container[sub] == (int)slot) set_bit(user, (size_t)sub, allow);
}

static void change_category(gr_acl_user_t *user, int category, int allow) {
    for (size_t slot = 0; slot < facts.slots; slot++)
        if (facts.categories[slot] >> category & 1) {
            if (facts.container[slot] < 0) change_command(user, slot, allow);
            else set_bit(user, slot, allow);
        }
}

static void free_patterns(gr_acl_pattern_t *patterns, uint32_t count) {
    for (uint32_t i = 0; i < count; i++) free(patterns[i].text);
    free(patterns);
}

static void user_release(gr_acl_user_t *user) {
    free(user->name);
    free(user->passwords);
    free_patterns(user->keys, user->key_count);
    free_patterns(user->channels, user->channel_count);
    for (uint32_t i = 0; i < user->selector_count; i++) user_release(&user->selectors[i]);
    free(user->selectors);
    user->selectors = NULL;
    user->selector_count = 0;
}

static int copy_patterns(gr_acl_pattern_t **to, const gr_acl_pattern_t *from, uint32_t count) {
    *to = NULL;
    if (!count) return 0;
    *to = calloc(count, sizeof **to);
    if (!*to) return -1;
    for (uint32_t i = 0; i < count; i++) {
        (*to)[i] = from[i];
        (*to)[i].text = malloc(from[i].length + 1);
        if (!(*to)[i].text) return -1;
        memcpy((*to)[i].text, from[i].text, from[i].length + 1);
    }
    return 0;
}

/* A deep copy (name included); 0 or -1 out of memory (the copy is then released). */
static int user_copy(gr_acl_user_t *to, const gr_acl_user_t *from) {
    *to = *from;
    to->name = NULL, to->passwords = NULL, to->keys = to->channels = NULL;
    to->selectors = NULL, to->selector_count = 0;
    to->next = NULL;
    int failed = 0;
    if (from->name) {
        to->name = malloc(from->name_length + 1);
        if (to->name) memcpy(to->name, from->name, from->name_length + 1);
        else failed = 1;
    }
    if (from->selector_count) {
        to->selectors = calloc(from->selector_count, sizeof *to->selectors);
        if (!to->selectors) failed = 1;
        for (uint32_t i = 0; to->selectors && i < from->selector_count; i++) {
            if (user_copy(&to->selectors[i], &from->selectors[i]) != 0) { failed = 1; break; }
            to->selector_count = i + 1;
        }
    }
    if (from->password_count) {
        to->passwords = malloc(from->password_count * sizeof *to->passwords);
        if (to->passwords) memcpy(to->passwords, from->passwords, from->password_count * sizeof *to->passwords);
        else failed = 1;
    }
    uint32_t keys = to->key_count, channels = to->channel_count;
    to->key_count = to->channel_count = 0;
    if (copy_patterns(&to->keys, from->keys, keys) != 0) failed = 1;
    to->key_count = to->keys ? keys : 0;
    if (copy_patterns(&to->channels, from->channels, channels) != 0) failed = 1;
    to->channel_count = to->channels ? channels : 0;
    if (failed) { user_release(to); return -1; }
    return 0;
}

static gr_acl_user_t *user_new(const uint8_t *name, size_t length) {
    gr_acl_user_t *user = calloc(1, sizeof *user);
    if (!user) return NULL;
    user->name = malloc(length + 1);
    if (!user->name) { free(user); return NULL; }
    memcpy(user->name, name, length);
    user->name[length] = '\0';
    user->name_length = length;
    return user;   /* Redis's new user: off, no passwords, no keys, resetchannels, -@all */
}

static void insert_sorted(gr_acl_t *acl, gr_acl_user_t *user) {
    gr_acl_user_t **at = &acl->users;
    while (*at) {
        size_t n = (*at)->name_length < user->name_length ? (*at)->name_length : user->name_length;
        int order = memcmp((*at)->name, user->name, n);
        if (order > 0 || (order == 0 && (*at)->name_length > user->name_length)) break;
        at = &(*at)->next;
    }
    user->next = *at;
    *at = user;
}

gr_acl_t *gr_acl_new(void) {
    learn_facts();
    gr_acl_t *acl = calloc(1, sizeof *acl);
    if (!acl) return NULL;
    gr_acl_user_t *user = user_new((const uint8_t *)"default", 7);
    if (!user) { free(acl); return NULL; }
    user->enabled = user->nopass = user->allkeys = user->allchannels = user->allcommands = 1;
    memset(user->allowed, 0xff, sizeof user->allowed);
    acl->users = acl->default_user = user;
    acl->log_max_len = 128;
    return acl;
}

/* ---- ACL LOG ---- */

#define LOG_GROUPING_MS 60000   /* Redis's ACL_LOG_GROUPING_MAX_TIME_DELTA */
#define LOG_SCAN 10             /* entries looked at for one to merge with */

static void log_entry_free(gr_acl_log_entry_t *entry) {
    free(entry->object);
    free(entry->username);
    free(entry->client_info);
    free(entry);
}

static char *copy_bytes(const uint8_t *bytes, size_t length) {
    char *copy = malloc(length + 1);
    if (!copy) return NULL;
    if (length) memcpy(copy, bytes, length);
    copy[length] = '\0';
    return copy;
}

void gr_acl_log_reset(gr_acl_t *acl) {
    for (gr_acl_log_entry_t *entry = acl->log, *next; entry; entry = next) {
        next = entry->next;
        log_entry_free(entry);
    }
    acl->log = NULL;
    acl->log_length = 0;
}

void gr_acl_log_add(gr_acl_t *acl, int reason, int context, const uint8_t *object, size_t object_length,
                    const uint8_t *username, size_t username_length, char *client_info, int64_t now_ms) {
    gr_acl_log_entry_t **at = &acl->log;
    for (int scanned = 0; *at && scanned < LOG_SCAN; scanned++, at = &(*at)->next) {
        gr_acl_log_entry_t *entry = *at;
        if (entry->reason != reason || entry->context != context || now_ms - entry->updated_ms > LOG_GROUPING_MS ||
            entry->object_length != object_length || memcmp(entry->object, object, object_length) ||
            entry->username_length != username_length || memcmp(entry->username, username, username_length))
            continue;
        *at = entry->next;   /* to the front, with this refusal's client and time */
        entry->next = acl->log;
        acl->log = entry;
        entry->count++;
        entry->updated_ms = now_ms;
        free(entry->client_info);
        entry->client_info = client_info;
        return;
    }
    gr_acl_log_entry_t *entry = calloc(1, sizeof *entry);
    if (!entry || !(entry->object = copy_bytes(object, object_length)) ||
        !(entry->username = copy_bytes(username, username_length))) {
        if (entry) log_entry_free(entry);
        free(client_info);
        return;   /* out of memory: the refusal stands, its record is lost */
    }
    entry->count = 1;
    entry->reason = (uint8_t)reason;
    entry->context = (uint8_t)context;
    entry->object_length = object_length;
    entry->username_length = username_length;
    entry->client_info = client_info;
    entry->entry_id = acl->log_next_id++;
    entry->created_ms = entry->updated_ms = now_ms;
    entry->next = acl->log;
    acl->log = entry;
    acl->log_length++;
    if (acl->log_length <= acl->log_max_len) return;
    gr_acl_log_entry_t **last = &acl->log;   /* trimmed to acllog-max-len, oldest first */
    int64_t kept = 0;
    while (*last && kept < acl->log_max_len) last = &(*last)->next, kept++;
    for (gr_acl_log_entry_t *gone = *last, *next; gone; gone = next) {
        next = gone->next;
        log_entry_free(gone);
    }
    *last = NULL;
    acl->log_length = kept;
}

void gr_acl_free(gr_acl_t *acl) {
    if (!acl) return;
    gr_acl_log_reset(acl);
    free(acl->file);
    for (gr_acl_user_t *user = acl->users, *next; user; user = next) {
        next = user->next;
        user_release(user);
        free(user);
    }
    free(acl);
}

gr_acl_user_t *gr_acl_find(const gr_acl_t *acl, const uint8_t *name, size_t length) {
    for (gr_acl_user_t *user = acl->users; user; user = user->next)
        if (user->name_length == length && !memcmp(user->name, name, length)) return user;
    return NULL;
}

gr_acl_user_t *gr_acl_implicit_user(const gr_acl_t *acl) {
    const gr_acl_user_t *user = acl->default_user;
    return user->enabled && user->nopass ? acl->default_user : NULL;
}

/* Compared over every stored hash whatever matches, so the time says nothing of which did. */
gr_acl_user_t *gr_acl_authenticate(const gr_acl_t *acl, const uint8_t *name, size_t name_length,
                                   const uint8_t *password, size_t password_length) {
    gr_acl_user_t *user = gr_acl_find(acl, name, name_length);
    if (!user || !user->enabled) return NULL;
    if (user->nopass) return user;
    uint8_t hash[GR_SHA256_BYTES];
    gr_sha256(password, password_length, hash);
    int found = 0;
    for (uint32_t i = 0; i < user->password_count; i++) {
        unsigned difference = 0;
        for (size_t b = 0; b < GR_SHA256_BYTES; b++) difference |= hash[b] ^ user->passwords[i][b];
        found |= difference == 0;
    }
    return found ? user : NULL;
}

/* ---- rules ---- */

enum { E_OK = 0, E_SYNTAX, E_UNKNOWN, E_KEYS_AFTER_ALL, E_CHANNELS_AFTER_ALL, E_NO_PASSWORD, E_BAD_HASH,
       E_NO_MEMORY, E_SELECTORS, E_FIRST_ARG, E_FIRST_ARG_RULES };

static const char *const RULE_ERRORS[] = {
    [E_SYNTAX] = "Syntax error",
    [E_UNKNOWN] = "Unknown command or category name in ACL",
    [E_KEYS_AFTER_ALL] = "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have "
                         "any effect. Try 'resetkeys' to start with an empty list of patterns",
    [E_CHANNELS_AFTER_ALL] = "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does "
                             "not have any effect. Try 'resetchannels' to start with an empty list of channels",
    [E_NO_PASSWORD] = "The password you are trying to remove from the user does not exist",
    [E_BAD_HASH] = "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters",
    [E_NO_MEMORY] = "Out of memory",
    [E_SELECTORS] = "Syntax error",
    [E_FIRST_ARG] = "Allowing first-arg of a subcommand is not supported",
    [E_FIRST_ARG_RULES] = "First-arg rules (+command|first-arg) are not supported by goblin-ring yet",
};

static int word_is(const uint8_t *rule, size_t length, const char *word) {
    return strlen(word) == length && !strncasecmp((const char *)rule, word, length);
}

static int add_hash(gr_acl_user_t *user, const uint8_t hash[GR_SHA256_BYTES]) {
    user->nopass = 0;
    for (uint32_t i = 0; i < user->password_count; i++)
        if (!memcmp(user->passwords[i], hash, GR_SHA256_BYTES)) return E_OK;
    void *grown = realloc(user->passwords, (user->password_count + 1) * sizeof *user->passwords);
    if (!grown) return E_NO_MEMORY;
    user->passwords = grown;
    memcpy(user->passwords[user->password_count++], hash, GR_SHA256_BYTES);
    return E_OK;
}

static int remove_hash(gr_acl_user_t *user, const uint8_t hash[GR_SHA256_BYTES]) {
    for (uint32_t i = 0; i < user->password_count; i++)
        if (!memcmp(user->passwords[i], hash, GR_SHA256_BYTES)) {
            memmove(user->passwords[i], user->passwords[i + 1], (user->password_count - i - 1) * sizeof *user->passwords);
            user->password_count--;
            user->nopass = 0;
            return E_OK;
        }
    return E_NO_PASSWORD;
}

static int parse_hash(const uint8_t *text, size_t length, uint8_t hash[GR_SHA256_BYTES]) {
    if (length != 2 * GR_SHA256_BYTES) return E_BAD_HASH;
    for (size_t i = 0; i < length; i++) {
        int c = text[i], v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (v < 0) return E_BAD_HASH;
        if (i % 2 == 0) hash[i / 2] = (uint8_t)(v << 4);
        else hash[i / 2] |= (uint8_t)v;
    }
    return E_OK;
}

static int add_pattern(gr_acl_pattern_t **patterns, uint32_t *count, const uint8_t *text, size_t length, uint8_t flags) {
    for (uint32_t i = 0; i < *count; i++)
        if ((*patterns)[i].length == length && !memcmp((*patterns)[i].text, text, length)) {
            (*patterns)[i].flags |= flags;
            return E_OK;
        }
    if (length > UINT32_MAX - 1) return E_NO_MEMORY;
    gr_acl_pattern_t *grown = realloc(*patterns, (*count + 1) * sizeof **patterns);
    if (!grown) return E_NO_MEMORY;
    *patterns = grown;
    char *copy = malloc(length + 1);
    if (!copy) return E_NO_MEMORY;
    memcpy(copy, text, length);
    copy[length] = '\0';
    grown[(*count)++] = (gr_acl_pattern_t){copy, (uint32_t)length, flags};
    return E_OK;
}

static void clear_patterns(gr_acl_pattern_t **patterns, uint32_t *count) {
    free_patterns(*patterns, *count);
    *patterns = NULL;
    *count = 0;
}

/* A key rule: ~pattern, %R~pattern, %W~pattern, %RW~pattern. */
static int key_rule(gr_acl_user_t *user, const uint8_t *rule, size_t length) {
    uint8_t flags = 0;
    size_t offset;
    if (rule[0] == '~') {
        flags = GR_ACL_READ | GR_ACL_WRITE, offset = 1;
    } else {
        offset = 1;
        while (offset < length && rule[offset] != '~') {
            if (rule[offset] == 'R' || rule[offset] == 'r') flags |= GR_ACL_READ;
            else if (rule[offset] == 'W' || rule[offset] == 'w') flags |= GR_ACL_WRITE;
            else return E_SYNTAX;
            offset++;
        }
        if (offset == length || flags == 0) return E_SYNTAX;
        offset++;
    }
    if (user->allkeys) return E_KEYS_AFTER_ALL;
    const uint8_t *pattern = rule + offset;
    size_t pattern_length = length - offset;
    if (pattern_length == 1 && pattern[0] == '*' && flags == (GR_ACL_READ | GR_ACL_WRITE)) {
        clear_patterns(&user->keys, &user->key_count);
        user->allkeys = 1;
        return E_OK;
    }
    return add_pattern(&user->keys, &user->key_count, pattern, pattern_length, flags);
}

static int channel_rule(gr_acl_user_t *user, const uint8_t *pattern, size_t length) {
    if (user->allchannels) return E_CHANNELS_AFTER_ALL;
    if (length == 1 && pattern[0] == '*') {
        clear_patterns(&user->channels, &user->channel_count);
        user->allchannels = 1;
        return E_OK;
    }
    return add_pattern(&user->channels, &user->channel_count, pattern, length, 0);
}

/* +name, -name, +@category, -@category, +name|sub, -name|sub. */
static int command_rule(gr_acl_user_t *user, const uint8_t *rule, size_t length) {
    int allow = rule[0] == '+';
    const uint8_t *name = rule + 1;
    size_t name_length = length - 1;
    if (name_length && name[0] == '@') {
        if (word_is(name + 1, name_length - 1, "all")) {
            memset(user->allowed, allow ? 0xff : 0, sizeof user->allowed);
            user->allcommands = (uint8_t)allow;
            return E_OK;
        }
        int category = gr_acl_category_index(name + 1, name_length - 1);
        if (category < 0) return E_UNKNOWN;
        change_category(user, category, allow);
        return E_OK;
    }
    const uint8_t *bar = memchr(name, '|', name_length);
    if (!bar) {
        int index = gr_command_index(name, name_length);
        if (index < 0) return E_UNKNOWN;
        change_command(user, (size_t)index, allow);
        return E_OK;
    }
    int index = gr_command_index(name, (size_t)(bar - name));
    if (index < 0) return E_UNKNOWN;
    size_t sub_length = name_length - (size_t)(bar - name) - 1;
    if (facts.end_sub[index] == 0) return E_FIRST_ARG_RULES;   /* Redis 7.0's +select|0: not built */
    for (int slot = facts.first_sub[index]; slot < facts.end_sub[index]; slot++) {
        const char *full = gr_command_stat_name((size_t)slot);
        const char *sub = strchr(full, '|') + 1;
        if (facts.container[slot] == index && strlen(sub) == sub_length && !strncasecmp(sub, (const char *)bar + 1, sub_length)) {
            set_bit(user, (size_t)slot, allow);
            return E_OK;
        }
    }
    return memchr(bar + 1, '|', sub_length) ? E_FIRST_ARG : E_UNKNOWN;
}

static void reset_keys(gr_acl_user_t *user) { clear_patterns(&user->keys, &user->key_count); user->allkeys = 0; }
static void reset_channels(gr_acl_user_t *user) {
    clear_patterns(&user->channels, &user->channel_count);
    user->allchannels = 0;
}
static void reset_passwords(gr_acl_user_t *user) {
    free(user->passwords);
    user->passwords = NULL;
    user->password_count = 0;
    user->nopass = 0;
}

static void clear_selectors(gr_acl_user_t *user) {
    for (uint32_t i = 0; i < user->selector_count; i++) user_release(&user->selectors[i]);
    free(user->selectors);
    user->selectors = NULL;
    user->selector_count = 0;
}

/* A rule inside a selector: only keys, channels and commands, as Redis's ACLSetSelector. */
static int selector_rule(gr_acl_user_t *selector, const uint8_t *rule, size_t length) {
    if (word_is(rule, length, "allkeys")) { reset_keys(selector); selector->allkeys = 1; return E_OK; }
    if (word_is(rule, length, "resetkeys")) { reset_keys(selector); return E_OK; }
    if (word_is(rule, length, "allchannels")) { reset_channels(selector); selector->allchannels = 1; return E_OK; }
    if (word_is(rule, length, "resetchannels")) { reset_channels(selector); return E_OK; }
    if (word_is(rule, length, "allcommands")) return command_rule(selector, (const uint8_t *)"+@all", 5);
    if (word_is(rule, length, "nocommands")) return command_rule(selector, (const uint8_t *)"-@all", 5);
    switch (rule[0]) {
    case '~': case '%': return key_rule(selector, rule, length);
    case '&': return channel_rule(selector, rule + 1, length - 1);
    case '+': case '-': return command_rule(selector, rule, length);
    default: return E_SYNTAX;
    }
}

static int is_space(uint8_t c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

/* "(rules)": a new selector (no keys, resetchannels, -@all) with the space-separated rules. */
static int add_selector(gr_acl_user_t *user, const uint8_t *inner, size_t length) {
    gr_acl_user_t selector;
    memset(&selector, 0, sizeof selector);
    for (size_t at = 0; at < length;) {
        while (at < length && is_space(inner[at])) at++;
        size_t end = at;
        while (end < length && !is_space(inner[end])) end++;
        if (end > at) {
            int status = selector_rule(&selector, inner + at, end - at);
            if (status != E_OK) { user_release(&selector); return status; }
        }
        at = end;
    }
    gr_acl_user_t *grown = realloc(user->selectors, (user->selector_count + 1) * sizeof *grown);
    if (!grown) { user_release(&selector); return E_NO_MEMORY; }
    user->selectors = grown;
    grown[user->selector_count++] = selector;
    return E_OK;
}

static int apply_rule(gr_acl_user_t *user, const uint8_t *rule, size_t length) {
    if (length == 0) return E_OK;   /* an empty rule changes nothing, as Redis */
    if (word_is(rule, length, "on")) { user->enabled = 1; return E_OK; }
    if (word_is(rule, length, "off")) { user->enabled = 0; return E_OK; }
    if (word_is(rule, length, "nopass")) { reset_passwords(user); user->nopass = 1; return E_OK; }
    if (word_is(rule, length, "resetpass")) { reset_passwords(user); return E_OK; }
    if (word_is(rule, length, "allkeys")) { reset_keys(user); user->allkeys = 1; return E_OK; }
    if (word_is(rule, length, "resetkeys")) { reset_keys(user); return E_OK; }
    if (word_is(rule, length, "allchannels")) { reset_channels(user); user->allchannels = 1; return E_OK; }
    if (word_is(rule, length, "resetchannels")) { reset_channels(user); return E_OK; }
    if (word_is(rule, length, "allcommands")) return command_rule(user, (const uint8_t *)"+@all", 5);
    if (word_is(rule, length, "nocommands")) return command_rule(user, (const uint8_t *)"-@all", 5);
    if (word_is(rule, length, "reset")) {
        reset_passwords(user);
        reset_keys(user);
        reset_channels(user);
        user->enabled = 0;
        user->payload = GR_ACL_SANITIZE;
        clear_selectors(user);
        return command_rule(user, (const uint8_t *)"-@all", 5);
    }
    if (word_is(rule, length, "clearselectors")) { clear_selectors(user); return E_OK; }
    if (word_is(rule, length, "sanitize-payload")) { user->payload = GR_ACL_SANITIZE; return E_OK; }
    if (word_is(rule, length, "skip-sanitize-payload")) { user->payload = GR_ACL_SKIP_SANITIZE; return E_OK; }
    uint8_t hash[GR_SHA256_BYTES];
    switch (rule[0]) {
    case '>': gr_sha256(rule + 1, length - 1, hash); return add_hash(user, hash);
    case '<': gr_sha256(rule + 1, length - 1, hash); return remove_hash(user, hash);
    case '#': { int status = parse_hash(rule + 1, length - 1, hash); return status ? status : add_hash(user, hash); }
    case '!': { int status = parse_hash(rule + 1, length - 1, hash); return status ? status : remove_hash(user, hash); }
    case '~': case '%': return key_rule(user, rule, length);
    case '&': return channel_rule(user, rule + 1, length - 1);
    case '+': case '-': return command_rule(user, rule, length);
    case '(': return length >= 2 && rule[length - 1] == ')' ? add_selector(user, rule + 1, length - 2) : E_SYNTAX;
    default: return E_SYNTAX;
    }
}

static int set_user_merged(gr_acl_t *acl, const uint8_t *name, size_t name_length, size_t rule_count,
                           const uint8_t *const *rules, const size_t *rule_lengths, char *error, size_t error_size);

/* Redis's ACLMergeSelectorArguments: arguments from one starting with "(" (and not ending with
 * ")") to the next ending with ")" are one selector, joined by spaces. The merged rules point
 * into rules or into *buffer (malloc'd, the caller frees it); count, or -1 with the argument
 * whose parenthesis is never closed in *unmatched (-2: out of memory). */
static long merge_selectors(size_t count, const uint8_t *const *rules, const size_t *lengths, const uint8_t **out,
                            size_t *out_lengths, uint8_t **buffer, size_t *unmatched) {
    size_t total = 0;
    for (size_t i = 0; i < count; i++) total += lengths[i] + 1;
    *buffer = malloc(total ? total : 1);
    if (!*buffer) return -2;
    size_t used = 0, merged = 0;
    long open = -1;
    for (size_t i = 0; i < count; i++) {
        const uint8_t *rule = rules[i];
        size_t length = lengths[i];
        int closes = length && rule[length - 1] == ')';
        if (open < 0 && length && rule[0] == '(' && !closes) {
            open = (long)i;
            out[merged] = *buffer + used;
            memcpy(*buffer + used, rule, length);
            used += length;
            continue;
        }
        if (open >= 0) {
            (*buffer)[used++] = ' ';
            memcpy(*buffer + used, rule, length);
            used += length;
            if (closes) {
                out_lengths[merged] = (size_t)(*buffer + used - out[merged]);
                merged++;
                open = -1;
            }
            continue;
        }
        out[merged] = rule;
        out_lengths[merged++] = length;
    }
    if (open >= 0) { *unmatched = (size_t)open; return -1; }
    return (long)merged;
}

int gr_acl_set_user(gr_acl_t *acl, const uint8_t *name, size_t name_length, size_t rule_count,
                    const uint8_t *const *given_rules, const size_t *given_lengths, char *error, size_t error_size) {
    learn_facts();
    const uint8_t **rules = malloc((rule_count ? rule_count : 1) * sizeof *rules);
    size_t *rule_lengths = malloc((rule_count ? rule_count : 1) * sizeof *rule_lengths), unmatched = 0;
    uint8_t *buffer = NULL;
    long merged = rules && rule_lengths ? merge_selectors(rule_count, given_rules, given_lengths, rules, rule_lengths,
                                                          &buffer, &unmatched) : -2;
    if (merged < 0) {
        if (merged == -1)
            snprintf(error, error_size, "ERR Unmatched parenthesis in acl selector starting at '%.*s'.",
                     (int)(given_lengths[unmatched] > 128 ? 128 : given_lengths[unmatched]),
                     (const char *)given_rules[unmatched]);
        else
            snprintf(error, error_size, "ERR Out of memory");
        free(rules);
        free(rule_lengths);
        free(buffer);
        return -1;
    }
    int status = set_user_merged(acl, name, name_length, (size_t)merged, rules, rule_lengths, error, error_size);
    free(rules);
    free(rule_lengths);
    free(buffer);
    return status;
}

static int set_user_merged(gr_acl_t *acl, const uint8_t *name, size_t name_length, size_t rule_count,
                           const uint8_t *const *rules, const size_t *rule_lengths, char *error, size_t error_size) {
    gr_acl_user_t *existing = gr_acl_find(acl, name, name_length), work;
    if (existing) {
        if (user_copy(&work, existing) != 0) { snprintf(error, error_size, "ERR Out of memory"); return -1; }
    } else {
        gr_acl_user_t *fresh = user_new(name, name_length);
        if (!fresh) { snprintf(error, error_size, "ERR Out of memory"); return -1; }
        work = *fresh;
        free(fresh);
    }
    for (size_t i = 0; i < rule_count; i++) {
        int status = apply_rule(&work, rules[i], rule_lengths[i]);
        if (status != E_OK) {
            int shown = rule_lengths[i] > 128 ? 128 : (int)rule_lengths[i];
            snprintf(error, error_size, "ERR Error in ACL SETUSER modifier '%.*s': %s", shown, (const char *)rules[i],
                     RULE_ERRORS[status]);
            user_release(&work);
            return -1;
        }
    }
    if (existing) {
        gr_acl_user_t *next = existing->next;
        user_release(existing);
        *existing = work;
        existing->next = next;
        return 0;
    }
    gr_acl_user_t *user = malloc(sizeof *user);
    if (!user) { user_release(&work); snprintf(error, error_size, "ERR Out of memory"); return -1; }
    *user = work;
    insert_sorted(acl, user);
    return 0;
}

int gr_acl_delete_user(gr_acl_t *acl, gr_acl_user_t *user) {
    for (gr_acl_user_t **at = &acl->users; *at; at = &(*at)->next)
        if (*at == user) {
            *at = user->next;
            user_release(user);
            free(user);
            return 1;
        }
    return 0;
}

void gr_acl_set_requirepass(gr_acl_t *acl, const char *password) {
    gr_acl_user_t *user = acl->default_user;
    reset_passwords(user);
    if (!password[0]) { user->nopass = 1; return; }
    uint8_t hash[GR_SHA256_BYTES];
    gr_sha256((const uint8_t *)password, strlen(password), hash);
    if (add_hash(user, hash) != E_OK) user->nopass = 0;   /* out of memory: no password logs in */
}

/* ---- checks ---- */

int gr_acl_allows_key(const gr_acl_user_t *user, const uint8_t *key, size_t length, int access) {
    if (user->allkeys) return 1;
    for (uint32_t i = 0; i < user->key_count; i++) {
        const gr_acl_pattern_t *p = &user->keys[i];
        if ((p->flags & access) != access) continue;
        if (gr_glob_match((const uint8_t *)p->text, p->length, key, length, 0)) return 1;
    }
    return 0;
}

int gr_acl_selector_allows_channel(const gr_acl_user_t *user, const uint8_t *channel, size_t length, int is_pattern) {
    if (user->allchannels) return 1;
    for (uint32_t i = 0; i < user->channel_count; i++) {
        const gr_acl_pattern_t *p = &user->channels[i];
        if (is_pattern ? p->length == length && !memcmp(p->text, channel, length)
                       : gr_glob_match((const uint8_t *)p->text, p->length, channel, length, 0))
            return 1;
    }
    return 0;
}

/* ---- descriptions ---- */

static int bit_of(const uint64_t *bits, size_t slot) { return (int)(bits[slot >> 6] >> (slot & 63) & 1); }

static void count_category(const gr_acl_user_t *user, int category, unsigned long *on, unsigned long *off) {
    *on = *off = 0;
    for (size_t slot = 0; slot < facts.slots; slot++)
        if (facts.categories[slot] >> category & 1) {
            if (bit_of(user->allowed, slot)) (*on)++;
            else (*off)++;
        }
}

/* Redis 7.0's ACLDescribeSelectorCommandRules: +@all or -@all, then the categories that fit
 * best (each applied to a scratch user), then the single commands still different. */
char *gr_acl_describe_commands(const gr_acl_user_t *user) {
    learn_facts();
    gr_text_t text;
    if (gr_text_init(&text, 128) != 0) return NULL;
    int additive = !user->allcommands;
    gr_acl_user_t fake, temp;
    memset(&fake, 0, sizeof fake);
    memset(&temp, 0, sizeof temp);
    if (!additive) memset(fake.allowed, 0xff, sizeof fake.allowed);
    memcpy(temp.allowed, user->allowed, sizeof temp.allowed);
    gr_text_append(&text, additive ? "-@all " : "+@all ");
    char applied[CATEGORY_COUNT] = {0};
    for (;;) {
        int best = -1;
        unsigned long min_diff = (unsigned long)-1, max_same = 0;
        for (size_t c = 0; c < CATEGORY_COUNT; c++) {
            if (applied[c]) continue;
            unsigned long on, off;
            count_category(&temp, (int)c, &on, &off);
            unsigned long diff = additive ? off : on, same = additive ? on : off;
            if (same > diff && (diff < min_diff || (diff == min_diff && same > max_same)))
                best = (int)c, min_diff = diff, max_same = same;
        }
        if (best < 0) break;
        change_category(&fake, best, additive);
        change_category(&temp, best, !additive);
        gr_text_append(&text, "%s@%s ", additive ? "+" : "-", CATEGORY_NAMES[best]);
        applied[best] = 1;
    }
    size_t count = gr_command_count();
    for (size_t slot = 0; slot < count && slot < facts.slots; slot++) {
        int mine = bit_of(user->allowed, slot);
        if (mine != bit_of(fake.allowed, slot)) {
            gr_text_append(&text, "%s%s ", mine ? "+" : "-", gr_command_stat_name(slot));
            change_command(&fake, slot, mine);
        }
        for (int sub = facts.first_sub[slot]; sub < facts.end_sub[slot]; sub++) {
            if (facts.container[sub] != (int)slot) continue;
            int sub_mine = bit_of(user->allowed, (size_t)sub);
            if (sub_mine != bit_of(fake.allowed, (size_t)sub)) {
                gr_text_append(&text, "%s%s ", sub_mine ? "+" : "-", gr_command_stat_name((size_t)sub));
                set_bit(&fake, (size_t)sub, sub_mine);
            }
        }
    }
    if (text.failed) { gr_text_free(&text); return NULL; }
    if (text.length) text.data[--text.length] = '\0';   /* the last space */
    return text.data;
}

static void describe_keys(const gr_acl_user_t *user, gr_text_t *text) {
    if (user->allkeys) { gr_text_append(text, "~* "); return; }
    for (uint32_t i = 0; i < user->key_count; i++) {
        const gr_acl_pattern_t *p = &user->keys[i];
        const char *prefix = p->flags == (GR_ACL_READ | GR_ACL_WRITE) ? "~" : p->flags == GR_ACL_READ ? "%R~" : "%W~";
        gr_text_append(text, "%s%s ", prefix, p->text);
    }
}

static void describe_channels(const gr_acl_user_t *user, gr_text_t *text) {
    if (user->allchannels) { gr_text_append(text, "&* "); return; }
    gr_text_append(text, "resetchannels ");
    for (uint32_t i = 0; i < user->channel_count; i++) gr_text_append(text, "&%s ", user->channels[i].text);
}

char *gr_acl_describe_channels(const gr_acl_user_t *user) {
    gr_text_t text;
    if (gr_text_init(&text, 32) != 0) return NULL;
    if (user->allchannels) gr_text_append(&text, "&*");
    for (uint32_t i = 0; !user->allchannels && i < user->channel_count; i++)
        gr_text_append(&text, "%s&%s", i ? " " : "", user->channels[i].text);
    if (text.failed) { gr_text_free(&text); return NULL; }
    text.data[text.length] = '\0';
    return text.data;
}

char *gr_acl_describe_user(const gr_acl_user_t *user) {
    char *commands = gr_acl_describe_commands(user);
    if (!commands) return NULL;
    gr_text_t text;
    if (gr_text_init(&text, 128) != 0) { free(commands); return NULL; }
    gr_text_append(&text, "user %s %s ", user->name, user->enabled ? "on" : "off");
    if (user->nopass) gr_text_append(&text, "nopass ");
    if (user->payload) gr_text_append(&text, "%s ", user->payload == GR_ACL_SANITIZE ? "sanitize-payload" : "skip-sanitize-payload");
    for (uint32_t i = 0; i < user->password_count; i++) {
        gr_text_append(&text, "#");
        for (size_t b = 0; b < GR_SHA256_BYTES; b++) gr_text_append(&text, "%02x", user->passwords[i][b]);
        gr_text_append(&text, " ");
    }
    describe_keys(user, &text);
    describe_channels(user, &text);
    gr_text_append(&text, "%s", commands);
    free(commands);
    for (uint32_t i = 0; i < user->selector_count; i++) {   /* " (~k* resetchannels -@all +get)" */
        const gr_acl_user_t *selector = &user->selectors[i];
        char *selector_commands = gr_acl_describe_commands(selector);
        if (!selector_commands) { text.failed = 1; break; }
        gr_text_append(&text, " (");
        describe_keys(selector, &text);
        describe_channels(selector, &text);
        gr_text_append(&text, "%s)", selector_commands);
        free(selector_commands);
    }
    if (text.failed) { gr_text_free(&text); return NULL; }
    return text.data;
}

/* For ACL GETUSER's keys field: "~k* %R~r*" (no trailing space). NULL: out of memory. */
char *gr_acl_describe_keys(const gr_acl_user_t *user) {
    gr_text_t text;
    if (gr_text_init(&text, 32) != 0) return NULL;
    describe_keys(user, &text);
    if (text.failed) { gr_text_free(&text); return NULL; }
    if (text.length) text.length--;
    text.data[text.length] = '\0';   /* also when nothing was written */
    return text.data;
}

/* ---- the ACL file (aclfile): ACL LOAD, ACL SAVE, the load at start ---- */

/* Redis 7.0's loader: lines trimmed of " \t\r\n", empty ones skipped, each split on single
 * spaces (no quoting: a quote is part of a word), "user <name> <rules>"; every rule is tried
 * on a scratch user so that all of a file's errors are reported, and nothing changes unless
 * there are none. */
static void append_error(gr_text_t *errors, const char *format, ...) __attribute__((format(printf, 2, 3)));
static void append_error(gr_text_t *errors, const char *format, ...) {
    char line[700];
    va_list args;
    va_start(args, format);
    vsnprintf(line, sizeof line, format, args);
    va_end(args);
    gr_text_append(errors, "%s", line);
}

static int is_trim(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

gr_acl_t *gr_acl_load_file(const char *path, char **errors_out) {
    *errors_out = NULL;
    gr_text_t errors;
    if (gr_text_init(&errors, 256) != 0) return NULL;
    FILE *file = fopen(path, "r");
    char *content = NULL;
    size_t size = 0;
    if (file) {
        size_t capacity = 0;
        for (;;) {
            if (size + 4096 > capacity) {
                capacity = capacity ? capacity * 2 : 65536;
                char *grown = realloc(content, capacity);
                if (!grown) { errno = ENOMEM; break; }
                content = grown;
            }
            size_t n = fread(content + size, 1, capacity - size, file);
            size += n;
            if (n == 0) break;
        }
        int failed = ferror(file) || !content;
        fclose(file);
        if (failed) { free(content); content = NULL; file = NULL; }
    }
    if (!file) {
        gr_text_append(&errors, "Error loading ACLs, opening file '%s': %s", path, strerror(errno ? errno : EIO));
        *errors_out = errors.data;
        return NULL;
    }
    gr_acl_t *loaded = gr_acl_new();
    gr_acl_user_t *scratch = user_new((const uint8_t *)"scratch", 7);
    uint8_t *defined = calloc(1, 1);   /* names seen in this file, NUL separated, for duplicates */
    size_t defined_size = 0;
    if (!loaded || !scratch || !defined) {
        gr_acl_free(loaded);
        if (scratch) { user_release(scratch); free(scratch); }
        free(defined);
        free(content);
        gr_text_free(&errors);
        return NULL;
    }
    size_t at = 0;
    for (int line_number = 1; at < size; line_number++) {
        size_t end = at;
        while (end < size && content[end] != '\n') end++;
        size_t first = at, last = end;
        at = end + 1;
        while (first < last && is_trim(content[first])) first++;
        while (last > first && is_trim(content[last - 1])) last--;
        if (first == last) continue;
        /* words: split on every single space */
        const uint8_t *words[256];
        size_t lengths[256], count = 0;
        size_t w = first;
        for (size_t i = first; i <= last && count < 256; i++)
            if (i == last || content[i] == ' ') {
                words[count] = (const uint8_t *)content + w;
                lengths[count++] = i - w;
                w = i + 1;
            }
        if (count < 2 || lengths[0] != 4 || memcmp(words[0], "user", 4) != 0) {
            append_error(&errors, "%s:%d should start with user keyword followed by the username. ", path, line_number);
            continue;
        }
        int duplicate = 0;
        for (size_t d = 0; d < defined_size;) {
            size_t n = strlen((const char *)defined + d);
            if (n == lengths[1] && !memcmp(defined + d, words[1], n)) duplicate = 1;
            d += n + 1;
        }
        if (duplicate) {
            append_error(&errors, "WARNING: Duplicate user '%.*s' found on line %d. ", (int)lengths[1], (const char *)words[1],
                         line_number);
            continue;
        }
        uint8_t *grown = realloc(defined, defined_size + lengths[1] + 1);
        if (grown) {
            defined = grown;
            memcpy(defined + defined_size, words[1], lengths[1]);
            defined[defined_size + lengths[1]] = '\0';
            defined_size += lengths[1] + 1;
        }
        size_t errors_before = errors.length, unmatched = 0;
        const uint8_t *merged_rules[256];
        size_t merged_lengths[256];
        uint8_t *merged_buffer = NULL;
        long merged = merge_selectors(count - 2, words + 2, lengths + 2, merged_rules, merged_lengths, &merged_buffer,
                                      &unmatched);
        if (merged < 0) {
            if (merged == -1)
                append_error(&errors, "%s:%d: Unmatched parenthesis in acl selector starting at '%.*s'. ", path,
                             line_number, (int)(lengths[2 + unmatched] > 128 ? 128 : lengths[2 + unmatched]),
                             (const char *)words[2 + unmatched]);
            free(merged_buffer);
            continue;
        }
        for (long j = 0; j < merged; j++) words[2 + j] = merged_rules[j], lengths[2 + j] = merged_lengths[j];
        count = 2 + (size_t)merged;
        apply_rule(scratch, (const uint8_t *)"reset", 5);
        for (size_t j = 2; j < count; j++) {
            while (lengths[j] && (words[j][lengths[j] - 1] == '\t' || words[j][lengths[j] - 1] == '\r')) lengths[j]--;
            while (lengths[j] && words[j][0] == '\t') words[j]++, lengths[j]--;
            int status = apply_rule(scratch, words[j], lengths[j]);
            if (status == E_OK) continue;
            if (status == E_UNKNOWN)   /* as Redis 7.0 words it: only unknown names get this prefix */
                append_error(&errors, "%s:%d: Error in applying operation '%.*s': %s. ", path, line_number,
                             (int)(lengths[j] > 128 ? 128 : lengths[j]), (const char *)words[j], RULE_ERRORS[status]);
            else
                append_error(&errors, "%s:%d: %s. ", path, line_number, RULE_ERRORS[status]);
        }
        if (errors.length != errors_before || errors_before != 0) { free(merged_buffer); continue; }   /* fails anyway */
        /* a new user starts as Redis's new user; the default user is reset first (without the
         * sanitize-payload flag reset sets, as Redis 7.0 shows it after a load) */
        int is_default = lengths[1] == 7 && !memcmp(words[1], "default", 7);
        const uint8_t *rules[258];
        size_t rule_lengths[258], rule_count = 0;
        if (is_default) rules[rule_count] = (const uint8_t *)"reset", rule_lengths[rule_count++] = 5;
        for (size_t j = 2; j < count; j++) rules[rule_count] = words[j], rule_lengths[rule_count++] = lengths[j];
        char why[512];
        if (is_default) loaded->default_user->payload = 0;
        int set = gr_acl_set_user(loaded, words[1], lengths[1], rule_count, rules, rule_lengths, why, sizeof why);
        free(merged_buffer);
        if (set != 0) {
            append_error(&errors, "%s:%d: %s. ", path, line_number, why);
        } else if (is_default) {
            int payload_rule = 0;
            for (size_t j = 2; j < count; j++)
                payload_rule |= word_is(words[j], lengths[j], "sanitize-payload") || word_is(words[j], lengths[j], "skip-sanitize-payload");
            if (!payload_rule) loaded->default_user->payload = 0;
        }
    }
    /* a file without "user default" leaves the new table's default user: on nopass ~* &* +@all */
    user_release(scratch);
    free(scratch);
    free(defined);
    free(content);
    if (errors.failed) { gr_acl_free(loaded); gr_text_free(&errors); return NULL; }
    if (errors.length) {
        gr_text_append(&errors, "WARNING: ACL errors detected, no change to the previously active ACL rules was performed");
        gr_acl_free(loaded);
        *errors_out = errors.data;
        return NULL;
    }
    gr_text_free(&errors);
    return loaded;
}

void gr_acl_replace(gr_acl_t *acl, gr_acl_t *loaded) {
    gr_acl_user_t *old_default = acl->default_user, *new_default = loaded->default_user;
    for (gr_acl_user_t *user = acl->users, *next; user; user = next) {   /* all but the default user */
        next = user->next;
        if (user == old_default) continue;
        user_release(user);
        free(user);
    }
    /* the default user's record stays where connections point; it takes the new one's rules */
    gr_acl_user_t kept_next_placeholder = *new_default;
    user_release(old_default);
    *old_default = kept_next_placeholder;
    acl->users = NULL;
    for (gr_acl_user_t *user = loaded->users, *next; user; user = next) {
        next = user->next;
        if (user == new_default) { free(new_default); user = old_default; }
        user->next = NULL;
        insert_sorted(acl, user);
    }
    loaded->users = loaded->default_user = NULL;
    gr_acl_free(loaded);
}

int gr_acl_save_file(const gr_acl_t *acl, const char *path) {
    char temporary[4200];
    if (snprintf(temporary, sizeof temporary, "%s.tmp-%d", path, (int)getpid()) >= (int)sizeof temporary) return -1;
    FILE *file = fopen(temporary, "w");
    if (!file) return -1;
    int failed = 0;
    for (const gr_acl_user_t *user = acl->users; user && !failed; user = user->next) {
        char *line = gr_acl_describe_user(user);
        if (!line || fprintf(file, "%s\n", line) < 0) failed = 1;
        free(line);
    }
    if (fflush(file) != 0 || fsync(fileno(file)) != 0) failed = 1;
    if (fclose(file) != 0) failed = 1;
    if (failed || rename(temporary, path) != 0) { unlink(temporary); return -1; }
    return 0;
}
