/* geo.h — GEO's coordinate coding over sorted-set scores, as Redis's geohash and geohash_helper
 * compute it, so that every score, position, distance and search area is Redis's to the last bit.
 * The commands are cmd_geo.c; the points live in an ordinary sorted set (engines/zset/).
 *
 * Layout of a point's score (a double holding a 52-bit integer, exact):
 *
 *   bit 51 ............................................................ bit 0
 *   lon25 lat25 lon24 lat24 ... lon0 lat0        (longitude bits odd, latitude bits even)
 *
 * lat_i / lon_i are the bits of (latitude - (-85.05112878)) / 170.10225756 * 2^26 and
 * (longitude + 180) / 360 * 2^26, truncated: a cell of 26 steps per axis (about 0.6 m). A
 * position read back is the cell's centre. A search turns its circle or box into the cell at
 * the step that covers it plus its 8 neighbours (some dropped when the area cannot reach them),
 * each one score range [min, max) of the set, and filters the points in them by distance
 * (haversine on Redis's Earth radius, 6372797.560856 m).
 */
#ifndef GR_GEO_H
#define GR_GEO_H

#include <stdint.h>

#define GR_GEO_LONG_MIN -180.0
#define GR_GEO_LONG_MAX 180.0
#define GR_GEO_LAT_MIN -85.05112878
#define GR_GEO_LAT_MAX 85.05112878
#define GR_GEO_STEP_MAX 26

/* A cell: its interleaved bits at a step (bits 0 and step 0 is "no cell"). */
typedef struct gr_geo_cell {
    uint64_t bits;
    uint8_t step;
} gr_geo_cell_t;

/* A search shape, lengths in the user's unit (conversion: metres per unit). */
typedef struct gr_geo_shape {
    int is_box;
    double longitude, latitude;    /* the centre */
    double radius;                 /* a circle */
    double width, height;          /* a box */
    double conversion;
} gr_geo_shape_t;

/* The score of a position (52 bits); 0 and -1 when outside Redis's ranges. */
int gr_geo_score_of(double longitude, double latitude, uint64_t *score);
/* The centre of the cell a score names: 1, or 0 when it cannot be decoded. */
int gr_geo_position_of(double score, double *longitude, double *latitude);
/* GEOHASH's 11 characters for a score (decoded, then re-coded on the standard -90..90 range). */
int gr_geo_hash_text(double score, char out[11]);
/* Redis's great-circle distance in metres. */
double gr_geo_distance(double lon1, double lat1, double lon2, double lat2);
/* Whether a point is inside the shape: 1 with *distance (metres) from the centre, else 0. */
int gr_geo_within(const gr_geo_shape_t *shape, double longitude, double latitude, double *distance);
/* The 9 cells a shape's search reads, in Redis's order (centre, N, S, E, W, NE, NW, SE, SW);
 * a dropped one has bits 0 and step 0. */
void gr_geo_search_cells(const gr_geo_shape_t *shape, gr_geo_cell_t cells[9]);
/* The score range [*min, *max) of a cell's points. */
void gr_geo_cell_scores(gr_geo_cell_t cell, uint64_t *min, uint64_t *max);

#endif
