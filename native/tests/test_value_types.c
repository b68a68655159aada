/* test_value_types.c — the value-type registry (exec/value_type.h) and the blocking layer's
 * spec (exec/blocking.h) shown with a type kept out of the product.
 *
 * "box" stands for a further type: its engine is the few functions
 * below (in the product it would be engines/box/, allocating under its own memory
 * category), its registry row is box_type, and its blocking spec is box_block. Nothing
 * else changes: TYPE, SCAN TYPE, OBJECT ENCODING, MEMORY USAGE, GOBLIN.MEMORY, INFO memory,
 * COPY, DEL and FLUSHDB (which free through the row), and a client blocked on a box key are all
 * served by the server's type-blind code, checked here over a RESP connection fed bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "exec/blocking.h"
#include "exec/db.h"
#include "exec/value_type.h"
#include "resp/resp_conn.h"
#include "engines/set/set.h"
#include "tests/test_helpers.h"

/* ---- the box engine: a counted bag of bytes (engines/box/ in the product) ---- */

#define GR_MEM_BOX ((gr_mem_category_t)(GR_MEM_CATEGORY_COUNT - 1))   /* the engine's own allocator category (the last free one; product types take theirs from GR_MEM_FIRST_FREE up) */
enum { GR_TYPE_BOX = 9 };

typedef struct box {
    size_t length;
    uint8_t bytes[];
} box_t;

static box_t *box_new(const char *text) {
    size_t length = strlen(text);
    box_t *box = gr_mem_alloc(sizeof *box + length, GR_MEM_BOX);
    if (box) { box->length = length; memcpy(box->bytes, text, length); }
    return box;
}
static void box_free(void *value) { gr_mem_free(value, GR_MEM_BOX); }
static size_t box_allocated_bytes(const void *value) { return gr_mem_usable(value); }
static const char *box_encoding(const void *value) { return ((const box_t *)value)->length < 16 ? "smallbox" : "bigbox"; }
static void *box_duplicate(const struct gr_server *db, const void *value) {
    (void)db;
    const box_t *box = value;
    box_t *copy = gr_mem_alloc(sizeof *copy + box->length, GR_MEM_BOX);
    if (copy) memcpy(copy, box, sizeof *copy + box->length);
    return copy;
}

/* Its snapshot form (core/snapshot_io.h): the bytes, length-prefixed. */
static int box_save(const void *value, gr_snapshot_writer_t *out) {
    const box_t *box = value;
    return gr_snapshot_write_bytes(out, box->bytes, box->length);
}
static void *box_load(const struct gr_server *db, gr_snapshot_reader_t *in) {
    (void)db;
    const uint8_t *data;
    size_t length;
    if (gr_snapshot_read_bytes(in, &data, &length) != 0) return NULL;
    box_t *box = gr_mem_alloc(sizeof *box + length, GR_MEM_BOX);
    if (box) { box->length = length; memcpy(box->bytes, data, length); }
    return box;
}

/* ---- its registry row ---- */

static const gr_value_type_t box_type = {
    .id = GR_TYPE_BOX, .name = "box", .memory = GR_MEM_BOX,
    .free = box_free, .allocated_bytes = box_allocated_bytes, .encoding = box_encoding,
    .duplicate = box_duplicate, .save = box_save, .load = box_load,
};

/* ---- its blocking spec: a waiter on a box key takes the box (as BZPOPMIN takes a member) ---- */

static int box_ready(const gr_ks_entry_t *entry) { return entry->type == GR_TYPE_BOX; }

static int box_serve(gr_server_t *db, const gr_request_t *r, gr_reply_t *reply) {
    for (uint32_t i = 0; i < r->item_count; i++) {
        gr_ks_entry_t *entry = gr_db_lookup(db, r->items[i]);
        if (!entry || entry->type != GR_TYPE_BOX) continue;
        const box_t *box = entry->value;
        gr_reply_pair(reply, r->items[i].data, r->items[i].length, box->bytes, box->length);
        gr_ks_delete(db->keyspace, r->items[i].data, r->items[i].length);
        return 1;
    }
    return 0;
}

static void box_timeout(const gr_request_t *r, gr_reply_t *reply) { (void)r; gr_reply_nil_array(reply); }

static const gr_block_spec_t box_block = {"boxpop", GR_BLOCK_KEYS_IN_ITEMS, box_ready, box_serve, box_timeout, -1, 0, NULL, NULL, NULL};

/* ---- the harness ---- */

static void add_box(gr_server_t *db, const char *key, const char *text) {
    box_t *box = box_new(text);
    CHECK(box && gr_ks_add(db->keyspaces[0], (const uint8_t *)key, strlen(key), GR_TYPE_BOX, box), "add %s", key);
}

static void test_registration_rules(void) {
    CHECK(gr_value_type(GR_TYPE_STRING) && strcmp(gr_value_type(GR_TYPE_STRING)->name, "string") == 0, "string row");
    CHECK(gr_value_type(GR_TYPE_LIST) && gr_value_type(GR_TYPE_LIST)->memory == GR_MEM_LIST, "list row");
    CHECK(gr_value_type(GR_TYPE_BOX) == NULL, "box unknown before its row");
    CHECK(gr_value_type_register(&box_type) == 0, "box registers");
    CHECK(gr_value_type_register(&box_type) == -1, "an id registers once");
    gr_value_type_t same_category = box_type, same_name = box_type;
    same_category.id = 10, same_category.name = "other";
    same_name.id = 11, same_name.memory = (gr_mem_category_t)(GR_MEM_CATEGORY_COUNT - 2);
    CHECK(gr_value_type_register(&same_category) == -1, "one type per memory category");
    CHECK(gr_value_type_register(&same_name) == -1, "one type per name");
    CHECK(gr_value_type_named((const uint8_t *)"BOX", 3) == &box_type, "names are case-insensitive");
    for (uint8_t id = GR_TYPE_STRING; id <= GR_TYPE_ZSET; id++)
        CHECK(gr_value_type(id)->save && gr_value_type(id)->load && gr_value_type(id)->digest,
              "type %u: save, load and digest filled", id);
}

/* What a row's save wrote, loaded by its load: an equal value, and every truncation refused
 * with nothing leaked. */
static void test_the_built_in_rows_save_and_load_their_values(void) {
    gr_server_t *db = gr_db_new(7);
    gr_resp_conn_t *conn = gr_resp_conn_new(db, 1);
    expect_reply(conn, "RPUSH l a bb 12345 \"\" last\r\n", ":5\r\n");
    expect_reply(conn, "SET s hello\r\n", "+OK\r\n");
    expect_reply(conn, "SADD i 5 -3 70000\r\n", ":3\r\n");      /* an intset */
    expect_reply(conn, "SADD m 1 \"\" abc\r\n", ":3\r\n");       /* a listpack */
    const char *keys[] = {"l", "s", "i", "m"};
    for (int k = 0; k < 4; k++) {
        gr_ks_entry_t *entry = gr_ks_find(db->keyspaces[0], (const uint8_t *)keys[k], 1);
        const gr_value_type_t *row = gr_value_type(entry->type);
        gr_snapshot_writer_t w;
        gr_snapshot_writer_init(&w, GR_MEM_OTHER);
        CHECK(row->save(entry->value, &w) == 0, "%s saves", keys[k]);
        gr_snapshot_reader_t r;
        gr_snapshot_reader_init(&r, w.data, w.length);
        void *loaded = row->load(db, &r);
        CHECK(loaded && !r.error && gr_snapshot_reader_remaining(&r) == 0, "%s loads", keys[k]);
        gr_snapshot_writer_t again;
        gr_snapshot_writer_init(&again, GR_MEM_OTHER);
        CHECK(loaded && row->save(loaded, &again) == 0 && again.length == w.length &&
              memcmp(again.data, w.data, w.length) == 0, "%s: the loaded value saves the same bytes", keys[k]);
        if (loaded) row->free(loaded);
        int refused = 1;
        for (size_t cut = 0; cut < w.length; cut++) {
            gr_snapshot_reader_init(&r, w.data, cut);
            loaded = row->load(db, &r);
            refused &= loaded == NULL && r.error != NULL;
            if (loaded) row->free(loaded);
        }
        CHECK(refused, "%s: every truncation refused", keys[k]);
        gr_snapshot_writer_release(&w);
        gr_snapshot_writer_release(&again);
    }
    /* a hashtable set: its table order is its own, so compare members, not bytes */
    for (int i = 0; i < 300; i++) {
        char command[64];
        snprintf(command, sizeof command, "SADD h member%d\r\n", i);
        expect_reply(conn, command, ":1\r\n");
    }
    gr_ks_entry_t *entry = gr_ks_find(db->keyspaces[0], (const uint8_t *)"h", 1);
    const gr_value_type_t *row = gr_value_type(entry->type);
    gr_snapshot_writer_t w;
    gr_snapshot_writer_init(&w, GR_MEM_OTHER);
    CHECK(row->save(entry->value, &w) == 0, "h saves");
    gr_snapshot_reader_t r;
    gr_snapshot_reader_init(&r, w.data, w.length);
    gr_set_t *loaded = row->load(db, &r);
    CHECK(loaded && gr_set_count(loaded) == 300 && strcmp(gr_set_encoding_name(loaded), "hashtable") == 0, "h loads");
    int all = 1;
    for (int i = 0; loaded && i < 300; i++) {
        char member[32];
        all &= gr_set_contains(loaded, (const uint8_t *)member, (size_t)snprintf(member, sizeof member, "member%d", i));
    }
    CHECK(all, "h: every member loaded");
    if (loaded) row->free(loaded);
    gr_snapshot_writer_release(&w);
    /* a payload naming one member twice is refused, as Redis refuses duplicate set members */
    gr_snapshot_writer_init(&w, GR_MEM_OTHER);
    gr_snapshot_write_varint(&w, 2);
    gr_snapshot_write_bytes(&w, (const uint8_t *)"a", 1);
    gr_snapshot_write_bytes(&w, (const uint8_t *)"a", 1);
    gr_snapshot_reader_init(&r, w.data, w.length);
    CHECK(row->load(db, &r) == NULL && r.error != NULL, "a duplicate member is refused");
    gr_snapshot_writer_release(&w);
    gr_resp_conn_free(conn);
    gr_db_free(db);
}

static void test_type_blind_commands_serve_the_new_type(void) {
    gr_server_t *db = gr_db_new(7);
    gr_resp_conn_t *conn = gr_resp_conn_new(db, 1);
    add_box(db, "b1", "small");
    add_box(db, "b2", "a box bigger than sixteen bytes");
    expect_reply(conn, "SET s v\r\n", "+OK\r\n");
    expect_reply(conn, "TYPE b1\r\n", "+box\r\n");
    expect_reply(conn, "OBJECT ENCODING b1\r\n", "$8\r\nsmallbox\r\n");
    expect_reply(conn, "OBJECT ENCODING b2\r\n", "$6\r\nbigbox\r\n");
    feed(conn, "SCAN 0 TYPE box COUNT 100\r\n");
    const char *scan = take_output(conn);
    CHECK(strstr(scan, "b1") && strstr(scan, "b2") && !strstr(scan, "$1\r\ns\r\n"), "SCAN TYPE box: %s", scan);
    feed(conn, "MEMORY USAGE b2\r\n");
    long long usage = atoll(take_output(conn) + 1);
    CHECK(usage >= (long long)gr_mem_used_by(GR_MEM_BOX) / 2 && usage > 31, "MEMORY USAGE counts the box: %lld", usage);
    feed(conn, "GOBLIN.MEMORY\r\n");
    char memory[16384];
    snprintf(memory, sizeof memory, "%s", take_output(conn));
    char row[64];
    snprintf(row, sizeof row, "$3\r\nbox\r\n:%lld\r\n", (long long)gr_mem_used_by(GR_MEM_BOX));
    CHECK(strstr(memory, row) != NULL, "GOBLIN.MEMORY has the box row %s: %s", row, memory);
    feed(conn, "INFO memory\r\n");
    CHECK(strstr(take_output(conn), "goblin_memory_box:") != NULL, "INFO memory has the box line");
    expect_reply(conn, "COPY b1 b3\r\n", ":1\r\n");             /* copied through the row */
    expect_reply(conn, "TYPE b3\r\n", "+box\r\n");
    expect_reply(conn, "DEL b1 b3\r\n", ":2\r\n");              /* freed through the row */
    expect_reply(conn, "FLUSHDB\r\n", "+OK\r\n");
    CHECK(gr_mem_used_by(GR_MEM_BOX) == 0, "every box byte freed: %lld", (long long)gr_mem_used_by(GR_MEM_BOX));
    gr_resp_conn_free(conn);
    gr_db_free(db);
}

static void test_a_client_blocks_on_the_new_type(void) {
    gr_server_t *db = gr_db_new(8);
    gr_resp_conn_t *waiter = gr_resp_conn_new(db, 1), *other = gr_resp_conn_new(db, 2);
    expect_reply(waiter, "PING\r\n", "+PONG\r\n");              /* waiter is now the current connection */
    gr_bytes_t keys[2] = {{(const uint8_t *)"q1", 2}, {(const uint8_t *)"q2", 2}};
    gr_request_t request = {0};
    request.items = keys;
    request.item_count = request.item_capacity = 2;
    request.timeout = 0;
    gr_blocking_run(db, &box_block, &request, db->current->reply);
    CHECK(db->blocked_count == 1, "parked on q1 q2");
    expect_reply(other, "RPUSH q2 not-a-box\r\n", ":1\r\n");     /* a list under q2 does not serve a box waiter */
    CHECK(db->blocked_count == 1, "still parked");
    add_box(db, "q1", "contents");
    gr_blocking_signal(db, 0, (const uint8_t *)"q1", 2);
    gr_blocking_serve(db);
    expect_reply(waiter, NULL, "*2\r\n$2\r\nq1\r\n$8\r\ncontents\r\n");
    CHECK(db->blocked_count == 0 && gr_blocking_check(db) == 0, "served and unparked");
    CHECK(gr_db_take_woken(db) == 1, "the waiter is handed back to the server");
    gr_resp_conn_free(waiter);
    gr_resp_conn_free(other);
    gr_db_free(db);
}

int main(void) {
    test_registration_rules();
    test_the_built_in_rows_save_and_load_their_values();
    test_type_blind_commands_serve_the_new_type();
    test_a_client_blocks_on_the_new_type();
    return checks_report();
}
