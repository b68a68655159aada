/* db.h — the one keyspace and the execution context every command runs in.
 *
 * A gr_db_t owns the keyspace (keyspace.c), the list engine configuration and the
 * server-wide counters that INFO reports. Both transports execute through it on one
 * thread: the ring path decodes an SBE request into a gr_request_t (codec.c) and calls
 * gr_db_execute; the RESP path turns argv into the same gr_request_t (resp_commands.c) or,
 * for commands without a typed message, calls gr_db_execute_argv. The per-type command
 * functions live in cmd_list.c, cmd_keys.c and cmd_server.c.
 */
#ifndef GR_DB_H
#define GR_DB_H

#include <stddef.h>
#include <stdint.h>

#include "codec.h"
#include "keyspace.h"
#include "list.h"
#include "reply.h"

/* Value types stored in keyspace entries. */
enum { GR_TYPE_STRING = 1, GR_TYPE_LIST = 2 };

/* Text fields INFO reports; set by the Python server at startup. */
typedef struct gr_db_info {
    char version[32];
    char name[64];
    char mode[32];        /* "busy" or "adaptive" */
    char list_implementation[16];
    char executable[256];
    char config_file[256];
    char run_id[41];
    int64_t tcp_port;
    int64_t process_id;
    int64_t ring_capacity;
} gr_db_info_t;

typedef struct gr_db_stats {
    int64_t start_time_ms;
    int64_t commands_processed;
    int64_t connections_received;
    int64_t rejected_connections;
    int64_t connected_resp_clients;
    int64_t connected_ring_sessions;
    int64_t ring_messages;
    int64_t ring_malformed;
    int64_t keyspace_hits;
    int64_t keyspace_misses;
} gr_db_stats_t;

typedef struct gr_db {
    gr_keyspace_t *keyspace;
    gr_list_config_t list_config;
    gr_db_stats_t stats;
    gr_db_info_t info;
    /* scratch shared by the argv path: a request and its items */
    gr_request_t scratch_request;
    gr_bytes_t *scratch_items;
    uint32_t scratch_capacity;
} gr_db_t;

/* cffi-cdef-begin */
typedef struct gr_db gr_db_t;
gr_db_t *gr_db_new(uint64_t seed);
void gr_db_free(gr_db_t *db);
/* Configuration, before serving: 0 or -1 for an unknown implementation name. */
int gr_db_set_list_implementation(gr_db_t *db, const char *name);
void gr_db_set_info_text(gr_db_t *db, const char *field, const char *value);
void gr_db_set_info_number(gr_db_t *db, const char *field, int64_t value);
int64_t gr_db_key_count(gr_db_t *db);
/* cffi-cdef-end */

/* Execute one typed request (from either transport) and write its reply. */
void gr_db_execute(gr_db_t *db, const gr_request_t *request, gr_reply_t *reply);
/* Execute one command given as argv (RESP, or the ring's CommandRequest). */
void gr_db_execute_argv(gr_db_t *db, size_t argc, const uint8_t *const *argv,
                        const size_t *argv_length, gr_reply_t *reply);

/* Number of commands in the command table (COMMAND COUNT). */
size_t gr_command_count(void);

/* Shared helpers for the command files */
void gr_reply_error_text(gr_reply_t *reply, gr_error_code_t code, const char *text);
void gr_reply_arity_error(gr_reply_t *reply, const char *command);
void gr_reply_wrongtype(gr_reply_t *reply);
void gr_reply_ok(gr_reply_t *reply);
void gr_reply_oom(gr_reply_t *reply);   /* an allocation failed: Redis's OOM error, nothing changed */
gr_ks_entry_t *gr_db_lookup(gr_db_t *db, gr_bytes_t key);
void gr_free_value(uint8_t type, void *value, void *context);
size_t gr_value_allocated_bytes(uint8_t type, const void *value);
int gr_bytes_to_int64(const uint8_t *data, size_t length, int64_t *out);
size_t gr_int64_to_text(int64_t value, char *out);  /* out >= 21 bytes; returns length */

/* Command families (typed requests) */
void gr_cmd_list(gr_db_t *db, const gr_request_t *request, gr_reply_t *reply);
void gr_cmd_keys(gr_db_t *db, const gr_request_t *request, gr_reply_t *reply);
/* Argv-only commands: return 1 when handled */
int gr_cmd_server_argv(gr_db_t *db, size_t argc, const uint8_t *const *argv,
                       const size_t *argv_length, gr_reply_t *reply);

#endif
