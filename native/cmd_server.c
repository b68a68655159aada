/* cmd_server.c — server and connection commands that have no typed SBE message:
 * PING, ECHO, INFO, MEMORY, GOBLIN.MEMORY, CONFIG, CLIENT, SELECT, COMMAND, HELLO, TIME, QUIT.
 *
 * They arrive as argv from resp_commands.c (over RESP, or over the ring inside a
 * CommandRequest). INFO's fields follow Redis's names so that redis-py and exporters read
 * them unchanged; used_memory is the counting allocator's total (alloc.c).
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "db.h"
#include "glob.h"

#define REDIS_COMPATIBLE_VERSION "7.2.4"

static int argv_is(const uint8_t *arg, size_t length, const char *word) {
    size_t n = strlen(word);
    return length == n && strncasecmp((const char *)arg, word, n) == 0;
}

static int64_t rss_bytes(void) {
    FILE *statm = fopen("/proc/self/statm", "r");
    if (!statm) return 0;
    long pages_total = 0, pages_resident = 0;
    int read = fscanf(statm, "%ld %ld", &pages_total, &pages_resident);
    fclose(statm);
    return read == 2 ? (int64_t)pages_resident * sysconf(_SC_PAGESIZE) : 0;
}

static void human_bytes(int64_t bytes, char *out, size_t size) {
    const char *units[] = {"B", "K", "M", "G", "T"};
    double value = (double)bytes;
    int unit = 0;
    while (value >= 1024 && unit < 4) { value /= 1024; unit++; }
    snprintf(out, size, unit ? "%.2f%s" : "%.0f%s", value, units[unit]);
}

typedef struct text_buffer { char *data; size_t length, capacity; } text_buffer_t;

static void append(text_buffer_t *text, const char *format, ...) __attribute__((format(printf, 2, 3)));
static void append(text_buffer_t *text, const char *format, ...) {
    va_list args;
    for (;;) {
        size_t room = text->capacity - text->length;
        va_start(args, format);
        int n = vsnprintf(text->data + text->length, room, format, args);
        va_end(args);
        if (n < 0) return;
        if ((size_t)n < room) { text->length += (size_t)n; return; }
        size_t capacity = text->capacity * 2 + (size_t)n;
        char *grown = realloc(text->data, capacity);
        if (!grown) return;
        text->data = grown;
        text->capacity = capacity;
    }
}

static int section_wanted(const char *section, const char *asked) {
    if (!asked || !strcasecmp(asked, "default") || !strcasecmp(asked, "all") || !strcasecmp(asked, "everything"))
        return 1;
    return strcasecmp(section, asked) == 0;
}

static void info(gr_db_t *db, const char *asked, gr_reply_t *reply) {
    text_buffer_t text = {malloc(2048), 0, 2048};
    if (!text.data) { gr_reply_error_text(reply, GR_ERR_OUT_OF_MEMORY, "OOM"); return; }
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    int64_t now_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
    int64_t uptime = (now_ms - db->stats.start_time_ms) / 1000;
    int first = 1;
#define SECTION(name) if (section_wanted(name, asked) && (append(&text, "%s# %s\r\n", first ? "" : "\r\n", name), first = 0, 1))
    SECTION("Server") {
        append(&text, "redis_version:%s\r\ngoblin_version:%s\r\nredis_mode:standalone\r\nos:Linux\r\n"
                      "arch_bits:64\r\nmultiplexing_api:epoll\r\nprocess_id:%lld\r\nrun_id:%s\r\n"
                      "tcp_port:%lld\r\nserver_time_usec:%lld\r\nuptime_in_seconds:%lld\r\nuptime_in_days:%lld\r\n"
                      "executable:%s\r\nconfig_file:%s\r\ngoblin_name:%s\r\ngoblin_poll_mode:%s\r\n"
                      "goblin_list_implementation:%s\r\ngoblin_ring_capacity:%lld\r\n",
               REDIS_COMPATIBLE_VERSION, db->info.version, (long long)db->info.process_id, db->info.run_id,
               (long long)db->info.tcp_port, (long long)now.tv_sec * 1000000 + now.tv_nsec / 1000,
               (long long)uptime, (long long)uptime / 86400, db->info.executable, db->info.config_file,
               db->info.name, db->info.mode, db->info.list_implementation, (long long)db->info.ring_capacity);
    }
    SECTION("Clients") {
        append(&text, "connected_clients:%lld\r\ngoblin_ring_sessions:%lld\r\nblocked_clients:0\r\n",
               (long long)(db->stats.connected_resp_clients + db->stats.connected_ring_sessions),
               (long long)db->stats.connected_ring_sessions);
    }
    SECTION("Memory") {
        char used_human[32], rss_human[32];
        int64_t used = gr_mem_used_total(), rss = rss_bytes();
        human_bytes(used, used_human, sizeof used_human);
        human_bytes(rss, rss_human, sizeof rss_human);
        append(&text, "used_memory:%lld\r\nused_memory_human:%s\r\nused_memory_rss:%lld\r\nused_memory_rss_human:%s\r\n"
                      "maxmemory:0\r\nmaxmemory_policy:noeviction\r\nmem_allocator:libc\r\n"
                      "goblin_memory_keyspace:%lld\r\ngoblin_memory_list:%lld\r\n",
               (long long)used, used_human, (long long)rss, rss_human,
               (long long)gr_mem_used_by(GR_MEM_KEYSPACE), (long long)gr_mem_used_by(GR_MEM_LIST));
    }
    SECTION("Persistence") {
        append(&text, "loading:0\r\nrdb_changes_since_last_save:0\r\nrdb_bgsave_in_progress:0\r\naof_enabled:0\r\n");
    }
    SECTION("Stats") {
        append(&text, "total_connections_received:%lld\r\ntotal_commands_processed:%lld\r\n"
                      "rejected_connections:%lld\r\nkeyspace_hits:%lld\r\nkeyspace_misses:%lld\r\n"
                      "goblin_ring_messages:%lld\r\ngoblin_ring_malformed:%lld\r\n",
               (long long)db->stats.connections_received, (long long)db->stats.commands_processed,
               (long long)db->stats.rejected_connections, (long long)db->stats.keyspace_hits,
               (long long)db->stats.keyspace_misses, (long long)db->stats.ring_messages,
               (long long)db->stats.ring_malformed);
    }
    SECTION("Keyspace") {
        if (gr_ks_size(db->keyspace))
            append(&text, "db0:keys=%zu,expires=0,avg_ttl=0\r\n", gr_ks_size(db->keyspace));
    }
#undef SECTION
    gr_reply_bulk(reply, (const uint8_t *)text.data, text.length);
    free(text.data);
}

static void goblin_memory(gr_reply_t *reply) {
    static const struct { const char *name; int category; } rows[] = {
        {"keyspace", GR_MEM_KEYSPACE}, {"list", GR_MEM_LIST}, {"string", GR_MEM_STRING},
        {"session", GR_MEM_SESSION}, {"other", GR_MEM_OTHER},
    };
    gr_reply_array_begin(reply, 4 + 2 * (sizeof rows / sizeof rows[0]));
    gr_reply_bulk(reply, (const uint8_t *)"total", 5);
    gr_reply_integer(reply, gr_mem_used_total());
    gr_reply_bulk(reply, (const uint8_t *)"allocations", 11);
    gr_reply_integer(reply, gr_mem_allocations());
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        gr_reply_bulk(reply, (const uint8_t *)rows[i].name, strlen(rows[i].name));
        gr_reply_integer(reply, gr_mem_used_by((gr_mem_category_t)rows[i].category));
    }
}

static void reply_unknown_subcommand(gr_reply_t *reply, const uint8_t *sub, size_t length, const char *command) {
    char text[256];
    snprintf(text, sizeof text, "ERR unknown subcommand '%.*s'. Try %s HELP.", (int)(length > 64 ? 64 : length),
             (const char *)sub, command);
    gr_reply_error_text(reply, GR_ERR_GENERIC, text);
}

static void config_get(gr_db_t *db, const uint8_t *pattern, size_t pattern_length, gr_reply_t *reply) {
    char port[24], databases[] = "1";
    snprintf(port, sizeof port, "%lld", (long long)db->info.tcp_port);
    const char *pairs[][2] = {
        {"port", port}, {"bind", "127.0.0.1"}, {"databases", databases}, {"save", ""},
        {"appendonly", "no"}, {"maxmemory", "0"}, {"maxmemory-policy", "noeviction"},
        {"proto-max-bulk-len", "536870912"}, {"list-implementation", db->info.list_implementation},
    };
    size_t count = sizeof pairs / sizeof pairs[0], matched = 0;
    int matches[16];
    for (size_t i = 0; i < count; i++) {
        matches[i] = gr_glob_match(pattern, pattern_length, (const uint8_t *)pairs[i][0], strlen(pairs[i][0]), 1);
        matched += (size_t)matches[i];
    }
    gr_reply_array_begin(reply, 2 * matched);
    for (size_t i = 0; i < count; i++) {
        if (!matches[i]) continue;
        gr_reply_bulk(reply, (const uint8_t *)pairs[i][0], strlen(pairs[i][0]));
        gr_reply_bulk(reply, (const uint8_t *)pairs[i][1], strlen(pairs[i][1]));
    }
}

int gr_cmd_server_argv(gr_db_t *db, size_t argc, const uint8_t *const *argv,
                       const size_t *argv_length, gr_reply_t *reply) {
    const uint8_t *name = argv[0];
    size_t name_length = argv_length[0];
    db->stats.commands_processed++;

    if (argv_is(name, name_length, "ping")) {
        if (argc > 2) gr_reply_arity_error(reply, "ping");
        else if (argc == 2) gr_reply_bulk(reply, argv[1], argv_length[1]);
        else gr_reply_status(reply, "PONG", 4);
    } else if (argv_is(name, name_length, "echo")) {
        gr_reply_bulk(reply, argv[1], argv_length[1]);
    } else if (argv_is(name, name_length, "info")) {
        char section[32] = {0};
        if (argc >= 2) snprintf(section, sizeof section, "%.*s", (int)(argv_length[1] > 31 ? 31 : argv_length[1]),
                                (const char *)argv[1]);
        info(db, argc >= 2 ? section : NULL, reply);
    } else if (argv_is(name, name_length, "goblin.memory")) {
        goblin_memory(reply);
    } else if (argv_is(name, name_length, "memory")) {
        if (argv_is(argv[1], argv_length[1], "usage")) {
            if (argc != 3 && !(argc == 5 && argv_is(argv[3], argv_length[3], "samples"))) {
                if (argc < 3) gr_reply_arity_error(reply, "memory|usage");
                else gr_reply_error_text(reply, GR_ERR_SYNTAX, "ERR syntax error");
                return 1;
            }
            gr_request_t request = {0};
            request.template_id = GR_T_MEMORY_USAGE;
            request.key.data = argv[2];
            request.key.length = (uint32_t)argv_length[2];
            gr_db_run(db, &request, reply);
            db->stats.commands_processed--;
        } else {
            reply_unknown_subcommand(reply, argv[1], argv_length[1], "MEMORY");
        }
    } else if (argv_is(name, name_length, "config")) {
        if (argv_is(argv[1], argv_length[1], "get") && argc >= 3) {
            config_get(db, argv[2], argv_length[2], reply);
        } else if (argv_is(argv[1], argv_length[1], "resetstat") && argc == 2) {
            db->stats.commands_processed = 0;
            db->stats.keyspace_hits = db->stats.keyspace_misses = 0;
            gr_reply_ok(reply);
        } else if (argv_is(argv[1], argv_length[1], "set") && argc >= 4) {
            char text[200];
            snprintf(text, sizeof text, "ERR Unknown option or number of arguments for CONFIG SET - '%.*s'",
                     (int)(argv_length[2] > 64 ? 64 : argv_length[2]), (const char *)argv[2]);
            gr_reply_error_text(reply, GR_ERR_GENERIC, text);
        } else {
            reply_unknown_subcommand(reply, argv[1], argv_length[1], "CONFIG");
        }
    } else if (argv_is(name, name_length, "client")) {
        if (argv_is(argv[1], argv_length[1], "setinfo") || argv_is(argv[1], argv_length[1], "setname")) gr_reply_ok(reply);
        else if (argv_is(argv[1], argv_length[1], "getname")) gr_reply_nil(reply);
        else reply_unknown_subcommand(reply, argv[1], argv_length[1], "CLIENT");
    } else if (argv_is(name, name_length, "command")) {
        gr_cmd_command(db, argc, argv, argv_length, reply);
    } else if (argv_is(name, name_length, "hello")) {
        if (argc >= 2 && !(argv_length[1] == 1 && argv[1][0] == '2')) {
            gr_reply_error_text(reply, GR_ERR_GENERIC, "NOPROTO sorry, this protocol version is not supported.");
        } else {
            gr_reply_array_begin(reply, 14);
            gr_reply_bulk(reply, (const uint8_t *)"server", 6); gr_reply_bulk(reply, (const uint8_t *)"redis", 5);
            gr_reply_bulk(reply, (const uint8_t *)"version", 7);
            gr_reply_bulk(reply, (const uint8_t *)REDIS_COMPATIBLE_VERSION, strlen(REDIS_COMPATIBLE_VERSION));
            gr_reply_bulk(reply, (const uint8_t *)"proto", 5); gr_reply_integer(reply, 2);
            gr_reply_bulk(reply, (const uint8_t *)"id", 2); gr_reply_integer(reply, 1);
            gr_reply_bulk(reply, (const uint8_t *)"mode", 4); gr_reply_bulk(reply, (const uint8_t *)"standalone", 10);
            gr_reply_bulk(reply, (const uint8_t *)"role", 4); gr_reply_bulk(reply, (const uint8_t *)"master", 6);
            gr_reply_bulk(reply, (const uint8_t *)"modules", 7); gr_reply_array_begin(reply, 0);
        }
    } else if (argv_is(name, name_length, "time")) {
        struct timeval now;
        gettimeofday(&now, NULL);
        char seconds[24], micros[24];
        size_t s = gr_int64_to_text(now.tv_sec, seconds), u = gr_int64_to_text(now.tv_usec, micros);
        gr_reply_array_begin(reply, 2);
        gr_reply_bulk(reply, (const uint8_t *)seconds, s);
        gr_reply_bulk(reply, (const uint8_t *)micros, u);
    } else if (argv_is(name, name_length, "quit")) {
        gr_reply_ok(reply);
    } else {
        db->stats.commands_processed--;
        return 0;
    }
    return 1;
}
