/* geo.c — GEO's coordinate coding (geo.h): cells, positions, distances and search areas, with
 * the same floating-point operations in the same order as Redis, so results match bit for bit. */
#include "engines/geo.h"

#include <math.h>

#define EARTH_RADIUS_METRES 6372797.560856
#define MERCATOR_MAX 20037726.37
#define DEGREES_TO_RADIANS (M_PI / 180.0)

typedef struct range {
    double min, max;
} range_t;

typedef struct area {
    range_t longitude, latitude;
} area_t;

static const range_t LONGITUDE_RANGE = {GR_GEO_LONG_MIN, GR_GEO_LONG_MAX};
static const range_t LATITUDE_RANGE = {GR_GEO_LAT_MIN, GR_GEO_LAT_MAX};

static double radians(double degrees) { return degrees * DEGREES_TO_RADIANS; }
static double degrees(double radians_) { return radians_ / DEGREES_TO_RADIANS; }

/* ---- bit interleaving: latitude in the even bits, longitude in the odd ---- */

static uint64_t spread(uint32_t value) {
    uint64_t x = value;
    x = (x | (x << 16)) & 0x0000FFFF0000FFFFULL;
    x = (x | (x << 8)) & 0x00FF00FF00FF00FFULL;
    x = (x | (x << 4)) & 0x0F0F0F0F0F0F0F0FULL;
    x = (x | (x << 2)) & 0x3333333333333333ULL;
    x = (x | (x << 1)) & 0x5555555555555555ULL;
    return x;
}

static uint32_t gather(uint64_t x) {
    x &= 0x5555555555555555ULL;
    x = (x | (x >> 1)) & 0x3333333333333333ULL;
    x = (x | (x >> 2)) & 0x0F0F0F0F0F0F0F0FULL;
    x = (x | (x >> 4)) & 0x00FF00FF00FF00FFULL;
    x = (x | (x >> 8)) & 0x0000FFFF0000FFFFULL;
    x = (x | (x >> 16)) & 0x00000000FFFFFFFFULL;
    return (uint32_t)x;
}

/* ---- cells ---- */

static int encode(range_t longitude_range, range_t latitude_range, double longitude, double latitude, uint8_t step,
                  gr_geo_cell_t *cell) {
    if (step == 0 || step > 32) return 0;
    if (longitude > GR_GEO_LONG_MAX || longitude < GR_GEO_LONG_MIN || latitude > GR_GEO_LAT_MAX ||
        latitude < GR_GEO_LAT_MIN)
        return 0;
    cell->bits = 0;
    cell->step = step;
    if (latitude < latitude_range.min || latitude > latitude_range.max || longitude < longitude_range.min ||
        longitude > longitude_range.max)
        return 0;
    double latitude_offset = (latitude - latitude_range.min) / (latitude_range.max - latitude_range.min);
    double longitude_offset = (longitude - longitude_range.min) / (longitude_range.max - longitude_range.min);
    latitude_offset *= (double)(1ULL << step);
    longitude_offset *= (double)(1ULL << step);
    cell->bits = spread((uint32_t)latitude_offset) | (spread((uint32_t)longitude_offset) << 1);
    return 1;
}

static int decode(gr_geo_cell_t cell, area_t *area) {
    if (cell.bits == 0 && cell.step == 0) return 0;
    uint32_t latitude_index = gather(cell.bits), longitude_index = gather(cell.bits >> 1);
    double latitude_scale = LATITUDE_RANGE.max - LATITUDE_RANGE.min;
    double longitude_scale = LONGITUDE_RANGE.max - LONGITUDE_RANGE.min;
    double cells = (double)(1ULL << cell.step);
    area->latitude.min = LATITUDE_RANGE.min + (latitude_index * 1.0 / cells) * latitude_scale;
    area->latitude.max = LATITUDE_RANGE.min + ((latitude_index + 1) * 1.0 / cells) * latitude_scale;
    area->longitude.min = LONGITUDE_RANGE.min + (longitude_index * 1.0 / cells) * longitude_scale;
    area->longitude.max = LONGITUDE_RANGE.min + ((longitude_index + 1) * 1.0 / cells) * longitude_scale;
    return 1;
}

static uint64_t align52(gr_geo_cell_t cell) { return cell.bits << (52 - cell.step * 2); }

int gr_geo_score_of(double longitude, double latitude, uint64_t *score) {
    gr_geo_cell_t cell;
    if (!encode(LONGITUDE_RANGE, LATITUDE_RANGE, longitude, latitude, GR_GEO_STEP_MAX, &cell)) return -1;
    *score = align52(cell);
    return 0;
}

int gr_geo_position_of(double score, double *longitude, double *latitude) {
    gr_geo_cell_t cell = {(uint64_t)score, GR_GEO_STEP_MAX};
    area_t area;
    if (!decode(cell, &area)) return 0;
    double x = (area.longitude.min + area.longitude.max) / 2;
    if (x > GR_GEO_LONG_MAX) x = GR_GEO_LONG_MAX;
    if (x < GR_GEO_LONG_MIN) x = GR_GEO_LONG_MIN;
    double y = (area.latitude.min + area.latitude.max) / 2;
    if (y > GR_GEO_LAT_MAX) y = GR_GEO_LAT_MAX;
    if (y < GR_GEO_LAT_MIN) y = GR_GEO_LAT_MIN;
    *longitude = x;
    *latitude = y;
    return 1;
}

int gr_geo_hash_text(double score, char out[11]) {
    static const char alphabet[] = "0123456789bcdefghjkmnpqrstuvwxyz";
    double longitude, latitude;
    if (!gr_geo_position_of(score, &longitude, &latitude)) return 0;
    range_t standard_longitude = {-180, 180}, standard_latitude = {-90, 90};
    gr_geo_cell_t cell = {0, 0};
    encode(standard_longitude, standard_latitude, longitude, latitude, GR_GEO_STEP_MAX, &cell);
    for (int i = 0; i < 11; i++) {
        /* 52 bits make 10 characters and 2 bits; the 11th is written as if those bits were 0 */
        int index = i == 10 ? 0 : (int)((cell.bits >> (52 - (i + 1) * 5)) & 0x1f);
        out[i] = alphabet[index];
    }
    return 1;
}

/* ---- distances ---- */

double gr_geo_distance(double lon1, double lat1, double lon2, double lat2) {
    double lat1r = radians(lat1), lon1r = radians(lon1), lat2r = radians(lat2), lon2r = radians(lon2);
    double u = sin((lat2r - lat1r) / 2);
    double v = sin((lon2r - lon1r) / 2);
    return 2.0 * EARTH_RADIUS_METRES * asin(sqrt(u * u + cos(lat1r) * cos(lat2r) * v * v));
}

int gr_geo_within(const gr_geo_shape_t *shape, double longitude, double latitude, double *distance) {
    if (!shape->is_box) {
        *distance = gr_geo_distance(shape->longitude, shape->latitude, longitude, latitude);
        return *distance <= shape->radius * shape->conversion;
    }
    double width = shape->width * shape->conversion, height = shape->height * shape->conversion;
    double along_longitude = gr_geo_distance(longitude, latitude, shape->longitude, latitude);
    double along_latitude = gr_geo_distance(longitude, latitude, longitude, shape->latitude);
    if (along_longitude > width / 2 || along_latitude > height / 2) return 0;
    *distance = gr_geo_distance(shape->longitude, shape->latitude, longitude, latitude);
    return 1;
}

/* ---- search areas ---- */

/* The step whose cells are about as large as the search radius (Redis's estimate). */
static uint8_t step_for_radius(double metres, double latitude) {
    if (metres == 0) return 26;
    int step = 1;
    while (metres < MERCATOR_MAX) {
        metres *= 2;
        step++;
    }
    step -= 2;
    if (latitude > 66 || latitude < -66) {
        step--;
        if (latitude > 80 || latitude < -80) step--;
    }
    if (step < 1) step = 1;
    if (step > 26) step = 26;
    return (uint8_t)step;
}

/* The shape's bounding box: [0] min longitude, [1] min latitude, [2] max longitude, [3] max latitude. */
static void bounding_box(const gr_geo_shape_t *shape, double bounds[4]) {
    double height = shape->conversion * (shape->is_box ? shape->height / 2 : shape->radius);
    double width = shape->conversion * (shape->is_box ? shape->width / 2 : shape->radius);
    const double latitude_delta = degrees(height / EARTH_RADIUS_METRES);
    const double longitude_delta_top =
        degrees(width / EARTH_RADIUS_METRES / cos(radians(shape->latitude + latitude_delta)));
    const double longitude_delta_bottom =
        degrees(width / EARTH_RADIUS_METRES / cos(radians(shape->latitude - latitude_delta)));
    int southern = shape->latitude < 0;
    bounds[0] = southern ? shape->longitude - longitude_delta_bottom : shape->longitude - longitude_delta_top;
    bounds[2] = southern ? shape->longitude + longitude_delta_bottom : shape->longitude + longitude_delta_top;
    bounds[1] = shape->latitude - latitude_delta;
    bounds[3] = shape->latitude + latitude_delta;
}

/* Moving a cell by one along longitude (the odd bits) or latitude (the even bits), wrapping. */
static void move(gr_geo_cell_t *cell, int along_longitude, int d) {
    if (d == 0) return;
    uint64_t odd = cell->bits & 0xaaaaaaaaaaaaaaaaULL;
    uint64_t even = cell->bits & 0x5555555555555555ULL;
    unsigned shift = 64 - cell->step * 2;
    if (along_longitude) {
        uint64_t fill = 0x5555555555555555ULL >> shift;
        if (d > 0) odd = odd + (fill + 1);
        else odd = (odd | fill) - (fill + 1);
        odd &= 0xaaaaaaaaaaaaaaaaULL >> shift;
    } else {
        uint64_t fill = 0xaaaaaaaaaaaaaaaaULL >> shift;
        if (d > 0) even = even + (fill + 1);
        else even = (even | fill) - (fill + 1);
        even &= 0x5555555555555555ULL >> shift;
    }
    cell->bits = odd | even;
}

static gr_geo_cell_t neighbour(gr_geo_cell_t cell, int east, int north) {
    move(&cell, 1, east);
    move(&cell, 0, north);
    return cell;
}

/* cells: centre, N, S, E, W, NE, NW, SE, SW */
static void cell_and_neighbours(gr_geo_cell_t centre, gr_geo_cell_t cells[9]) {
    cells[0] = centre;
    cells[1] = neighbour(centre, 0, 1);
    cells[2] = neighbour(centre, 0, -1);
    cells[3] = neighbour(centre, 1, 0);
    cells[4] = neighbour(centre, -1, 0);
    cells[5] = neighbour(centre, 1, 1);
    cells[6] = neighbour(centre, -1, 1);
    cells[7] = neighbour(centre, 1, -1);
    cells[8] = neighbour(centre, -1, -1);
}

void gr_geo_search_cells(const gr_geo_shape_t *shape, gr_geo_cell_t cells[9]) {
    double bounds[4];
    bounding_box(shape, bounds);
    double radius_metres = shape->is_box
        ? sqrt((shape->width / 2) * (shape->width / 2) + (shape->height / 2) * (shape->height / 2))
        : shape->radius;
    radius_metres *= shape->conversion;
    uint8_t step = step_for_radius(radius_metres, shape->latitude);
    gr_geo_cell_t centre = {0, 0};
    area_t area = {{0, 0}, {0, 0}};
    encode(LONGITUDE_RANGE, LATITUDE_RANGE, shape->longitude, shape->latitude, step, &centre);
    cell_and_neighbours(centre, cells);
    decode(centre, &area);

    /* A neighbour that does not reach the edge of the box: the cells are too small, go one up. */
    area_t north, south, east, west;
    decode(cells[1], &north);
    decode(cells[2], &south);
    decode(cells[3], &east);
    decode(cells[4], &west);
    int too_small = north.latitude.max < bounds[3] || south.latitude.min > bounds[1] ||
                    east.longitude.max < bounds[2] || west.longitude.min > bounds[0];
    if (step > 1 && too_small) {
        step--;
        encode(LONGITUDE_RANGE, LATITUDE_RANGE, shape->longitude, shape->latitude, step, &centre);
        cell_and_neighbours(centre, cells);
        decode(centre, &area);
    }

    /* Drop the neighbours the box cannot reach. */
    static const gr_geo_cell_t none = {0, 0};
    if (step >= 2) {
        if (area.latitude.min < bounds[1]) cells[2] = cells[8] = cells[7] = none;    /* south */
        if (area.latitude.max > bounds[3]) cells[1] = cells[5] = cells[6] = none;    /* north */
        if (area.longitude.min < bounds[0]) cells[4] = cells[8] = cells[6] = none;   /* west */
        if (area.longitude.max > bounds[2]) cells[3] = cells[7] = cells[5] = none;   /* east */
    }
}

void gr_geo_cell_scores(gr_geo_cell_t cell, uint64_t *min, uint64_t *max) {
    *min = align52(cell);
    cell.bits++;
    *max = align52(cell);
}
