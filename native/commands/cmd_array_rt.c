/* cmd_array_rt.c — the RT-only array command, GOBLIN.RT.ARRESERVE (its row is in array_rt.def).
 * Every other GOBLIN.RT.<ARCMD> is a copy of an array.def row that command_table.c makes with
 * the "goblin.rt." prefix and that cmd_array.c's handlers serve on the RT engine (the engine
 * named in the command creates new arrays and must hold existing ones). The engine is
 * engines/array/array_rt.[ch]; its ops table is array_rt_ops.c.
 *
 *   GOBLIN.RT.ARRESERVE key max-index value-bytes [LOCK]
 * allocates and prefaults (and with LOCK, or a server started with --mlock, mlocks) every
 * index 0 .. max-index and value-bytes of value space for the key's RT array — a new, empty one
 * when the key is absent, or the existing RT array's values moved into the reservation — and
 * replies OK. Afterwards no write to it allocates: one past max-index or past the byte budget
 * is refused ("ERR array engine bound reached: ...") with the array unchanged. A failed
 * reservation (too large, the array's values outside it, out of memory, mlock refused) changes
 * nothing and says why.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>

#include "commands/commands.h"
#include "core/number.h"
#include "engines/array/array.h"
#include "engines/array/array_rt.h"
#include "exec/db.h"
#include "exec/transaction.h"

static int parse_u64_or_reply(const uint8_t *data, size_t length, uint64_t *out, gr_reply_t *reply, const char *error) {
    uint64_t value = 0;
    int ok = length > 0 && length <= 20;
    for (size_t i = 0; ok && i < length; i++) {
        const uint64_t digit = (uint64_t)(data[i] - '0');
        ok = data[i] >= '0' && data[i] <= '9' && value <= (UINT64_MAX - digit) / 10;
        value = value * 10 + digit;
    }
    if (!ok) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, error);
        return -1;
    }
    *out = value;
    return 0;
}

static void reply_lock_refused(gr_reply_t *reply) {
    struct rlimit limit;
    char text[256], soft[32];
    if (getrlimit(RLIMIT_MEMLOCK, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
        snprintf(soft, sizeof soft, "%llu bytes", (unsigned long long)limit.rlim_cur);
    else
        snprintf(soft, sizeof soft, "unlimited");
    snprintf(text, sizeof text, "ERR mlock refused: %s (RLIMIT_MEMLOCK is %s); nothing was reserved",
             strerror(gr_art_last_errno()), soft);
    gr_reply_error_text(reply, GR_ERR_GENERIC, text);
}

void gr_cmd_rt_arreserve(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                         gr_reply_t *reply) {
    if (argc != 4 && argc != 5) {
        gr_reply_arity_error(reply, "goblin.rt.arreserve");
        return;
    }
    const gr_bytes_t key = {.data = argv[1], .length = (uint32_t)argv_length[1]};
    uint64_t max_index, value_bytes;
    if (parse_u64_or_reply(argv[2], argv_length[2], &max_index, reply, "ERR invalid array index") != 0) return;
    if (max_index > GR_ARRAY_INDEX_MAX) {
        gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR invalid array index");
        return;
    }
    if (parse_u64_or_reply(argv[3], argv_length[3], &value_bytes, reply,
                           "ERR value is not an integer or out of range") != 0)
        return;
    int lock = db->info.mlock_all != 0;
    if (argc == 5) {
        if (argv_length[4] != 4 || strncasecmp((const char *)argv[4], "LOCK", 4) != 0) {
            gr_reply_error_text(reply, GR_ERR_SYNTAX, "ERR syntax error");
            return;
        }
        lock = 1;
    }
    gr_ks_entry_t *entry = gr_db_find_live(db, key);
    gr_array_t *array = NULL;
    int created = 0;
    if (entry) {
        if (entry->type != GR_TYPE_ARRAY) {
            gr_reply_wrongtype(reply);
            return;
        }
        array = entry->value;
        if (array->engine->kind != GR_ARRAY_ENGINE_RT) {
            char text[160];
            snprintf(text, sizeof text, "WRONGTYPE Operation against an array held by the %s engine "
                     "(GOBLIN.RT.ARRESERVE wants rt)", array->engine->name);
            gr_reply_error_text(reply, GR_ERR_WRONGTYPE, text);
            return;
        }
    } else {
        array = gr_array_new(GR_ARRAY_ENGINE_RT);
        if (!array) {
            gr_reply_oom(reply);
            return;
        }
        created = 1;
    }
    const int status = gr_array_reserve(array, max_index, value_bytes, lock);
    if (status != 0) {
        if (created) gr_array_free(array);
        if (status == GR_ART_E_LOCK) reply_lock_refused(reply);
        else if (status == GR_ARRAY_E_NOMEM) gr_reply_oom(reply);
        else if (created) gr_reply_error_text(reply, GR_ERR_GENERIC, "ERR reservation too large");
        else gr_reply_error_text(reply, GR_ERR_GENERIC,
                                 "ERR the array holds values outside the reservation (index or bytes)");
        return;
    }
    if (created && !gr_ks_add(db->keyspace, key.data, key.length, GR_TYPE_ARRAY, array)) {
        gr_array_free(array);
        gr_reply_oom(reply);
        return;
    }
    gr_watch_touch_current(db, key);
    gr_db_count_changes(db, 1);
    gr_reply_ok(reply);
}
