/* cmd_geo.c — the GEO commands: GEOADD, GEOPOS, GEODIST, GEOHASH, GEOSEARCH, GEOSEARCHSTORE,
 * GEORADIUS(_RO) and GEORADIUSBYMEMBER(_RO). Rows in geo.def; the cells and distances are
 * engines/geo.c; the points are an ordinary sorted set (cmd_zset_shared.h's helpers).
 *
 * Every search runs as Redis 7.0's georadiusGeneric: the arguments in its order (so the same
 * error wins), the 9 cells around the centre read as score ranges in Redis's order (a cell equal
 * to the one read before it skipped), points filtered by distance, COUNT without ANY sorting by
 * distance, COUNT ANY stopping at the first count found. Distances reply as "%.4f" text in the
 * unit asked for; positions as Redis's long-double "human" text over RESP2 (RESP3: doubles).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands/cmd_zset_shared.h"
#include "core/bytes.h"
#include "engines/geo.h"
#include "exec/propagate.h"
#include "exec/lookup.h"

#define NOT_A_FLOAT "ERR value is not a valid float"

/* Redis's getDoubleFromObjectOrReply: 0, or -1 after replying (message: Redis's default or the
 * caller's, with "ERR " before it). */
static int double_or_reply(const uint8_t *data, size_t length, double *out, const char *message, gr_reply_t *reply) {
    if (gr_zcmd_parse_double(data, length, out) == 0) return 0;
    reply_error(reply, message ? message : NOT_A_FLOAT);
    return -1;
}

/* Redis's extractLongLatOrReply: two doubles in Redis's ranges. */
static int position_or_reply(const uint8_t *const *argv, const size_t *argv_length, size_t i, double *longitude,
                             double *latitude, gr_reply_t *reply) {
    if (double_or_reply(argv[i], argv_length[i], longitude, NULL, reply) != 0) return -1;
    if (double_or_reply(argv[i + 1], argv_length[i + 1], latitude, NULL, reply) != 0) return -1;
    if (*longitude < GR_GEO_LONG_MIN || *longitude > GR_GEO_LONG_MAX || *latitude < GR_GEO_LAT_MIN ||
        *latitude > GR_GEO_LAT_MAX) {
        char message[160];
        snprintf(message, sizeof message, "ERR invalid longitude,latitude pair %f,%f", *longitude, *latitude);
        reply_error(reply, message);
        return -1;
    }
    return 0;
}

/* Metres per unit, or -1 after replying. */
static double unit_or_reply(const uint8_t *data, size_t length, gr_reply_t *reply) {
    if (gr_word_is(data, length, "m")) return 1;
    if (gr_word_is(data, length, "km")) return 1000;
    if (gr_word_is(data, length, "ft")) return 0.3048;
    if (gr_word_is(data, length, "mi")) return 1609.34;
    reply_error(reply, "ERR unsupported unit provided. please use M, KM, FT, MI");
    return -1;
}

/* A member's position: 1, or 0 when it is absent or its score is no cell. */
static int member_position(const gr_zset_t *zset, const uint8_t *member, size_t length, double *longitude,
                           double *latitude) {
    double score;
    if (!gr_zset_score(zset, member, length, &score)) return 0;
    return gr_geo_position_of(score, longitude, latitude);
}

/* Redis's addReplyHumanLongDouble: "%.17Lf" without trailing zeros over RESP2; a double over RESP3. */
static void reply_coordinate(gr_server_t *db, gr_reply_t *reply, double value) {
    if (protocol_of(db) >= 3) {
        gr_reply_double(reply, value);
        return;
    }
    char text[400];
    int length = snprintf(text, sizeof text, "%.17Lf", (long double)value);
    if (length < 0 || (size_t)length >= sizeof text) length = 0;
    if (memchr(text, '.', (size_t)length)) {
        while (length > 0 && text[length - 1] == '0') length--;
        if (length > 0 && text[length - 1] == '.') length--;
    }
    if (length == 2 && text[0] == '-' && text[1] == '0') { text[0] = '0'; length = 1; }
    gr_reply_bulk(reply, (const uint8_t *)text, (size_t)length);
}

static void reply_distance(gr_reply_t *reply, double distance) {
    char text[400];
    int length = snprintf(text, sizeof text, "%.4f", distance);
    gr_reply_bulk(reply, (const uint8_t *)text, length > 0 && (size_t)length < sizeof text ? (size_t)length : 0);
}

/* ---- GEOADD: ZADD with cells for scores ---- */

void gr_cmd_geoadd(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                   gr_reply_t *reply) {
    int nx = 0, xx = 0;
    size_t first = 2;
    for (; first < argc; first++) {
        if (gr_word_is(argv[first], argv_length[first], "nx")) nx = 1;
        else if (gr_word_is(argv[first], argv_length[first], "xx")) xx = 1;
        else if (!gr_word_is(argv[first], argv_length[first], "ch")) break;
    }
    if ((argc - first) % 3 || (nx && xx)) { reply_syntax(reply); return; }
    size_t elements = (argc - first) / 3;
    size_t zadd_argc = first + elements * 2;
    const uint8_t **zadd_argv = malloc(zadd_argc * sizeof *zadd_argv);
    size_t *zadd_length = malloc(zadd_argc * sizeof *zadd_length);
    char (*scores)[24] = malloc((elements ? elements : 1) * sizeof *scores);
    if (!zadd_argv || !zadd_length || !scores) {
        free(zadd_argv); free(zadd_length); free(scores);
        gr_reply_oom(reply);
        return;
    }
    zadd_argv[0] = (const uint8_t *)"zadd";
    zadd_length[0] = 4;
    for (size_t i = 1; i < first; i++) {
        zadd_argv[i] = argv[i];
        zadd_length[i] = argv_length[i];
    }
    int failed = 0;
    for (size_t e = 0; e < elements && !failed; e++) {
        size_t at = first + e * 3;
        double longitude, latitude;
        uint64_t score;
        if (position_or_reply(argv, argv_length, at, &longitude, &latitude, reply) != 0) { failed = 1; break; }
        gr_geo_score_of(longitude, latitude, &score);
        int n = snprintf(scores[e], sizeof scores[e], "%llu", (unsigned long long)score);
        zadd_argv[first + e * 2] = (const uint8_t *)scores[e];
        zadd_length[first + e * 2] = (size_t)n;
        zadd_argv[first + e * 2 + 1] = argv[at + 2];
        zadd_length[first + e * 2 + 1] = argv_length[at + 2];
    }
    if (!failed) {
        int64_t dirty_before = db->dirty;
        gr_cmd_zadd(db, zadd_argc, zadd_argv, zadd_length, reply);
        /* Redis rewrites the command: what is propagated is the ZADD it became */
        if (db->dirty != dirty_before) gr_effect_argv(db, zadd_argc, zadd_argv, zadd_length);
    }
    free(zadd_argv);
    free(zadd_length);
    free(scores);
}

/* ---- GEOPOS, GEODIST, GEOHASH ---- */

void gr_cmd_geopos(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                   gr_reply_t *reply) {
    gr_zset_t *zset = NULL;
    int found = gr_zcmd_find_or_reply(db, arg(argv, argv_length, 1), &zset, 0, reply);
    if (found < 0) return;
    gr_reply_array_begin(reply, argc - 2);
    for (size_t i = 2; i < argc; i++) {
        double longitude, latitude;
        if (!found || !member_position(zset, argv[i], argv_length[i], &longitude, &latitude)) {
            gr_reply_nil_array(reply);
            continue;
        }
        gr_reply_array_begin(reply, 2);
        reply_coordinate(db, reply, longitude);
        reply_coordinate(db, reply, latitude);
    }
}

void gr_cmd_geodist(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                    gr_reply_t *reply) {
    double metres_per_unit = 1;
    if (argc == 5) {
        metres_per_unit = unit_or_reply(argv[4], argv_length[4], reply);
        if (metres_per_unit < 0) return;
    } else if (argc > 5) {
        reply_syntax(reply);
        return;
    }
    gr_zset_t *zset = NULL;
    int found = gr_zcmd_find_or_reply(db, arg(argv, argv_length, 1), &zset, 0, reply);
    if (found < 0) return;
    double lon1, lat1, lon2, lat2, score;
    if (!found || !gr_zset_score(zset, argv[2], argv_length[2], &score) ||
        !gr_zset_score(zset, argv[3], argv_length[3], &score)) {
        gr_reply_nil(reply);
        return;
    }
    if (!member_position(zset, argv[2], argv_length[2], &lon1, &lat1) ||
        !member_position(zset, argv[3], argv_length[3], &lon2, &lat2)) {
        gr_reply_nil(reply);
        return;
    }
    reply_distance(reply, gr_geo_distance(lon1, lat1, lon2, lat2) / metres_per_unit);
}

void gr_cmd_geohash(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                    gr_reply_t *reply) {
    gr_zset_t *zset = NULL;
    int found = gr_zcmd_find_or_reply(db, arg(argv, argv_length, 1), &zset, 0, reply);
    if (found < 0) return;
    gr_reply_array_begin(reply, argc - 2);
    for (size_t i = 2; i < argc; i++) {
        double score;
        char text[11];
        if (!found || !gr_zset_score(zset, argv[i], argv_length[i], &score) || !gr_geo_hash_text(score, text)) {
            gr_reply_nil(reply);
            continue;
        }
        gr_reply_bulk(reply, (const uint8_t *)text, sizeof text);
    }
}

/* ---- searches ---- */

enum { SEARCH_COORDS = 1, SEARCH_MEMBER = 2, SEARCH_NO_STORE = 4, SEARCH_GEOSEARCH = 8, SEARCH_STORE_FORM = 16 };
enum { SORT_NONE, SORT_ASC, SORT_DESC };

typedef struct point {
    double longitude, latitude, distance, score;
    size_t member_offset, member_length;   /* in the search's member bytes */
} point_t;

typedef struct points {
    point_t *items;
    size_t count, capacity;
    uint8_t *members;
    size_t members_length, members_capacity;
    int failed;
} points_t;

static void points_append(points_t *p, const point_t *point, const uint8_t *member, size_t length) {
    if (p->failed) return;
    if (p->count == p->capacity) {
        size_t capacity = p->capacity ? p->capacity * 2 : 16;
        point_t *items = realloc(p->items, capacity * sizeof *items);
        if (!items) { p->failed = 1; return; }
        p->items = items;
        p->capacity = capacity;
    }
    if (p->members_length + length > p->members_capacity) {
        size_t capacity = p->members_capacity ? p->members_capacity * 2 : 256;
        while (capacity < p->members_length + length) capacity *= 2;
        uint8_t *members = realloc(p->members, capacity);
        if (!members) { p->failed = 1; return; }
        p->members = members;
        p->members_capacity = capacity;
    }
    point_t *slot = &p->items[p->count++];
    *slot = *point;
    slot->member_offset = p->members_length;
    slot->member_length = length;
    if (length) memcpy(p->members + p->members_length, member, length);
    p->members_length += length;
}

/* The points of one cell's score range [min, max) inside the shape, stopping at limit (0: none). */
static void points_in_cell(const gr_zset_t *zset, gr_geo_cell_t cell, const gr_geo_shape_t *shape, points_t *out,
                           size_t limit) {
    uint64_t min, max;
    gr_geo_cell_scores(cell, &min, &max);
    gr_zset_iter_t iter;
    gr_zset_entry_t entry;
    gr_zset_iter_start(zset, gr_zset_count_below_score(zset, (double)min, 0), &iter);
    while (gr_zset_iter_next(&iter, &entry)) {
        if (!(entry.score < (double)max)) break;
        point_t point = {0};
        if (!gr_geo_position_of(entry.score, &point.longitude, &point.latitude)) continue;
        if (!gr_geo_within(shape, point.longitude, point.latitude, &point.distance)) continue;
        point.score = entry.score;
        points_append(out, &point, entry.member, entry.member_length);
        if (out->failed || (limit && out->count >= limit)) break;
    }
}

static void points_in_area(const gr_zset_t *zset, const gr_geo_shape_t *shape, points_t *out, size_t limit) {
    gr_geo_cell_t cells[9];
    gr_geo_search_cells(shape, cells);
    size_t last = 0;
    for (size_t i = 0; i < 9; i++) {
        if (cells[i].bits == 0 && cells[i].step == 0) continue;
        /* as Redis: a cell equal to the last one read (not the centre) is read once */
        if (last && cells[i].bits == cells[last].bits && cells[i].step == cells[last].step) continue;
        if (out->count && limit && out->count >= limit) break;
        points_in_cell(zset, cells[i], shape, out, limit);
        if (out->failed) return;
        last = i;
    }
}

static int nearer_first(const void *a, const void *b) {
    double x = ((const point_t *)a)->distance, y = ((const point_t *)b)->distance;
    return x > y ? 1 : x < y ? -1 : 0;
}

static int farther_first(const void *a, const void *b) { return -nearer_first(a, b); }

/* Redis's georadiusGeneric for every search command. source: the index of the key searched. */
static void search(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                   gr_reply_t *reply, size_t source, int flags) {
    gr_zset_t *zset = NULL;
    int found = gr_zcmd_find_or_reply(db, arg(argv, argv_length, source), &zset, 0, reply);
    if (found < 0) return;
    gr_geo_shape_t shape = {0};
    gr_bytes_t store_key = {NULL, 0};
    int has_store = 0, store_distances = 0;
    size_t base;
    if (flags & SEARCH_COORDS) {
        base = 6;
        if (position_or_reply(argv, argv_length, 2, &shape.longitude, &shape.latitude, reply) != 0) return;
    } else if (flags & SEARCH_MEMBER) {
        base = 5;
        if (found && !member_position(zset, argv[2], argv_length[2], &shape.longitude, &shape.latitude)) {
            reply_error(reply, "ERR could not decode requested zset member");
            return;
        }
    } else {
        base = 2;
        if (flags & SEARCH_STORE_FORM) {
            base = 3;
            store_key = arg(argv, argv_length, 1);
            has_store = 1;
        }
    }
    if ((flags & (SEARCH_COORDS | SEARCH_MEMBER)) && (found || (flags & SEARCH_COORDS))) {
        /* radius unit */
        if (double_or_reply(argv[base - 2], argv_length[base - 2], &shape.radius, "ERR need numeric radius", reply) != 0)
            return;
        if (shape.radius < 0) { reply_error(reply, "ERR radius cannot be negative"); return; }
        shape.conversion = unit_or_reply(argv[base - 1], argv_length[base - 1], reply);
        if (shape.conversion < 0) return;
    }

    int with_distance = 0, with_hash = 0, with_coordinates = 0, any = 0, sort = SORT_NONE;
    int from_member = 0, from_position = 0, by_radius = 0, by_box = 0;
    long long count = 0;
    size_t remaining = argc > base ? argc - base : 0;
    for (size_t i = 0; i < remaining; i++) {
        const uint8_t *word = argv[base + i];
        size_t length = argv_length[base + i];
        if (gr_word_is(word, length, "withdist")) with_distance = 1;
        else if (gr_word_is(word, length, "withhash")) with_hash = 1;
        else if (gr_word_is(word, length, "withcoord")) with_coordinates = 1;
        else if (gr_word_is(word, length, "any")) any = 1;
        else if (gr_word_is(word, length, "asc")) sort = SORT_ASC;
        else if (gr_word_is(word, length, "desc")) sort = SORT_DESC;
        else if (gr_word_is(word, length, "count") && i + 1 < remaining) {
            int64_t value;
            if (gr_bytes_to_int64(argv[base + i + 1], argv_length[base + i + 1], &value) != 0) {
                reply_not_integer(reply);
                return;
            }
            if (value <= 0) { reply_error(reply, "ERR COUNT must be > 0"); return; }
            count = value;
            i++;
        } else if ((gr_word_is(word, length, "store") || gr_word_is(word, length, "storedist")) && i + 1 < remaining &&
                   !(flags & SEARCH_NO_STORE) && !(flags & SEARCH_GEOSEARCH)) {
            store_key = arg(argv, argv_length, base + i + 1);
            has_store = 1;
            store_distances = gr_word_is(word, length, "storedist");
            i++;
        } else if (gr_word_is(word, length, "storedist") && (flags & SEARCH_GEOSEARCH) && (flags & SEARCH_STORE_FORM)) {
            store_distances = 1;
        } else if (gr_word_is(word, length, "frommember") && i + 1 < remaining && (flags & SEARCH_GEOSEARCH) &&
                   !from_position) {
            if (found && !member_position(zset, argv[base + i + 1], argv_length[base + i + 1], &shape.longitude,
                                          &shape.latitude)) {
                reply_error(reply, "ERR could not decode requested zset member");
                return;
            }
            from_member = 1;
            i++;
        } else if (gr_word_is(word, length, "fromlonlat") && i + 2 < remaining && (flags & SEARCH_GEOSEARCH) &&
                   !from_member) {
            if (position_or_reply(argv, argv_length, base + i + 1, &shape.longitude, &shape.latitude, reply) != 0) return;
            from_position = 1;
            i += 2;
        } else if (gr_word_is(word, length, "byradius") && i + 2 < remaining && (flags & SEARCH_GEOSEARCH) && !by_box) {
            if (double_or_reply(argv[base + i + 1], argv_length[base + i + 1], &shape.radius, "ERR need numeric radius",
                                reply) != 0)
                return;
            if (shape.radius < 0) { reply_error(reply, "ERR radius cannot be negative"); return; }
            shape.conversion = unit_or_reply(argv[base + i + 2], argv_length[base + i + 2], reply);
            if (shape.conversion < 0) return;
            shape.is_box = 0;
            by_radius = 1;
            i += 2;
        } else if (gr_word_is(word, length, "bybox") && i + 3 < remaining && (flags & SEARCH_GEOSEARCH) && !by_radius) {
            if (double_or_reply(argv[base + i + 1], argv_length[base + i + 1], &shape.width, "ERR need numeric width",
                                reply) != 0 ||
                double_or_reply(argv[base + i + 2], argv_length[base + i + 2], &shape.height,
                                "ERR need numeric height", reply) != 0)
                return;
            if (shape.height < 0 || shape.width < 0) {
                reply_error(reply, "ERR height or width cannot be negative");
                return;
            }
            shape.conversion = unit_or_reply(argv[base + i + 3], argv_length[base + i + 3], reply);
            if (shape.conversion < 0) return;
            shape.is_box = 1;
            by_box = 1;
            i += 3;
        } else {
            reply_syntax(reply);
            return;
        }
    }
    if (has_store && (with_distance || with_hash || with_coordinates)) {
        reply_error(reply, (flags & SEARCH_STORE_FORM)
                               ? "ERR GEOSEARCHSTORE is not compatible with WITHDIST, WITHHASH and WITHCOORD options"
                               : "ERR STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH and WITHCOORD options");
        return;
    }
    const char *name = (flags & SEARCH_STORE_FORM) ? "geosearchstore" : "geosearch";
    char message[128];
    if ((flags & SEARCH_GEOSEARCH) && !(from_member || from_position)) {
        snprintf(message, sizeof message, "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for %s", name);
        reply_error(reply, message);
        return;
    }
    if ((flags & SEARCH_GEOSEARCH) && !(by_radius || by_box)) {
        snprintf(message, sizeof message, "ERR exactly one of BYRADIUS and BYBOX can be specified for %s", name);
        reply_error(reply, message);
        return;
    }
    if (any && !count) { reply_error(reply, "ERR the ANY argument requires COUNT argument"); return; }

    if (!found) {
        if (has_store) {
            if (gr_db_delete_key(db, store_key)) gr_db_count_changes(db, 1);
            gr_reply_integer(reply, 0);
        } else {
            gr_reply_array_begin(reply, 0);
        }
        return;
    }
    if (count != 0 && sort == SORT_NONE && !any) sort = SORT_ASC;

    points_t points = {0};
    points_in_area(zset, &shape, &points, any ? (size_t)count : 0);
    if (points.failed) {
        free(points.items);
        free(points.members);
        gr_reply_oom(reply);
        return;
    }
    size_t returned = (count == 0 || points.count < (size_t)count) ? points.count : (size_t)count;
    if (sort != SORT_NONE && points.count > 1)
        qsort(points.items, points.count, sizeof *points.items, sort == SORT_ASC ? nearer_first : farther_first);

    if (!has_store) {
        size_t options = (size_t)with_distance + (size_t)with_hash + (size_t)with_coordinates;
        gr_reply_array_begin(reply, returned);
        for (size_t i = 0; i < returned; i++) {
            const point_t *point = &points.items[i];
            if (options) gr_reply_array_begin(reply, options + 1);
            gr_reply_bulk(reply, points.members + point->member_offset, point->member_length);
            if (with_distance) reply_distance(reply, point->distance / shape.conversion);
            if (with_hash) gr_reply_integer(reply, (int64_t)point->score);
            if (with_coordinates) {
                gr_reply_array_begin(reply, 2);
                reply_coordinate(db, reply, point->longitude);
                reply_coordinate(db, reply, point->latitude);
            }
        }
    } else {
        entry_sink_t sink = {gr_zset_new(), limits_of(db), 0};
        if (!sink.zset) sink.failed = 1;
        for (size_t i = 0; i < returned && !sink.failed; i++) {
            const point_t *point = &points.items[i];
            gr_zset_entry_t entry = {0};
            entry.member = points.members + point->member_offset;
            entry.member_length = point->member_length;
            entry.score = store_distances ? point->distance / shape.conversion : point->score;
            gr_zcmd_sink_add(&sink, &entry);
        }
        if (sink.failed) {
            gr_zset_free(sink.zset);
            gr_reply_oom(reply);
        } else {
            gr_zcmd_store_result(db, store_key, sink.zset, reply);
            if (returned > 1) gr_db_count_changes(db, (int64_t)returned - 1);   /* Redis counts each stored member */
        }
    }
    free(points.items);
    free(points.members);
}

void gr_cmd_georadius(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                      gr_reply_t *reply) {
    search(db, argc, argv, argv_length, reply, 1, SEARCH_COORDS);
}

void gr_cmd_georadius_ro(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                         gr_reply_t *reply) {
    search(db, argc, argv, argv_length, reply, 1, SEARCH_COORDS | SEARCH_NO_STORE);
}

void gr_cmd_georadiusbymember(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                              gr_reply_t *reply) {
    search(db, argc, argv, argv_length, reply, 1, SEARCH_MEMBER);
}

void gr_cmd_georadiusbymember_ro(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                                 gr_reply_t *reply) {
    search(db, argc, argv, argv_length, reply, 1, SEARCH_MEMBER | SEARCH_NO_STORE);
}

void gr_cmd_geosearch(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                      gr_reply_t *reply) {
    search(db, argc, argv, argv_length, reply, 1, SEARCH_GEOSEARCH);
}

void gr_cmd_geosearchstore(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                           gr_reply_t *reply) {
    search(db, argc, argv, argv_length, reply, 2, SEARCH_GEOSEARCH | SEARCH_STORE_FORM);
}

/* ---- COMMAND GETKEYS: the STORE / STOREDIST destination ---- */

static size_t radius_keys(size_t argc, const uint8_t *const *argv, const size_t *argv_length, size_t *positions,
                          const char **flags, size_t capacity, size_t first_option) {
    if (capacity < 2 || argc < 2) return 0;
    positions[0] = 1;
    flags[0] = "RO access";
    size_t count = 1;
    for (size_t i = first_option; i + 1 < argc; i++) {
        if (gr_word_is(argv[i], argv_length[i], "store") || gr_word_is(argv[i], argv_length[i], "storedist")) {
            positions[1] = i + 1;
            flags[1] = "OW update";
            count = 2;
            i++;
        }
    }
    return count;
}

size_t gr_georadius_find_keys(size_t argc, const uint8_t *const *argv, const size_t *argv_length, size_t *positions,
                              const char **flags, size_t capacity) {
    return radius_keys(argc, argv, argv_length, positions, flags, capacity, 6);
}

size_t gr_georadiusbymember_find_keys(size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                                      size_t *positions, const char **flags, size_t capacity) {
    return radius_keys(argc, argv, argv_length, positions, flags, capacity, 5);
}
