/* cmd_lolwut.c — LOLWUT [VERSION v] [columns squares-per-row squares-per-column]: version 5 draws
 * Georg Nees' "Schotter" (1968) as Redis 5 does — rows of squares shaken more the lower they are,
 * drawn on a pixel canvas and printed as Braille characters (2x4 pixels each); any other version
 * prints the version line alone, as Redis 7.0 does for the versions it has no art for. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands/commands.h"
#include "core/bytes.h"
#include "exec/server_text.h"

typedef struct canvas {
    int width, height;
    uint8_t *pixels;
} canvas_t;

static void set_pixel(canvas_t *c, int x, int y) {
    if (x >= 0 && y >= 0 && x < c->width && y < c->height) c->pixels[y * c->width + x] = 1;
}

static int pixel(const canvas_t *c, int x, int y) {
    return x >= 0 && y >= 0 && x < c->width && y < c->height && c->pixels[y * c->width + x];
}

/* Bresenham's line. */
static void draw_line(canvas_t *c, int x1, int y1, int x2, int y2) {
    int dx = abs(x2 - x1), dy = abs(y2 - y1), sx = x1 < x2 ? 1 : -1, sy = y1 < y2 ? 1 : -1;
    int error = dx - dy;
    for (;;) {
        set_pixel(c, x1, y1);
        if (x1 == x2 && y1 == y2) break;
        int twice = error * 2;
        if (twice > -dy) { error -= dy; x1 += sx; }
        if (twice < dx) { error += dx; y1 += sy; }
    }
}

/* A square of side size centred on (x, y), turned by angle radians. */
static void draw_square(canvas_t *c, int x, int y, float size, float angle) {
    int px[4], py[4];
    size = roundf(size / 1.4142135623f);   /* the half-diagonal of the square inscribed in the circle */
    float k = (float)M_PI / 4 + angle;
    for (int j = 0; j < 4; j++) {
        px[j] = (int)roundf(sinf(k) * size + (float)x);
        py[j] = (int)roundf(cosf(k) * size + (float)y);
        k += (float)M_PI / 2;
    }
    for (int j = 0; j < 4; j++) draw_line(c, px[j], py[j], px[(j + 1) % 4], py[(j + 1) % 4]);
}

static float shake(int row, int rows) {
    float r = (float)rand() / (float)RAND_MAX / (float)rows * (float)row;
    return rand() % 2 ? -r : r;
}

/* The canvas as lines of Braille characters (U+2800 plus one bit per pixel of a 2x4 block). */
static char *render(const canvas_t *c, size_t *length) {
    size_t capacity = (size_t)(c->width / 2 + 2) * (size_t)(c->height / 4 + 2) * 3 + 16, n = 0;
    char *text = malloc(capacity);
    if (!text) return NULL;
    for (int y = 0; y < c->height; y += 4) {
        for (int x = 0; x < c->width; x += 2) {
            int bits = pixel(c, x, y) | pixel(c, x, y + 1) << 1 | pixel(c, x, y + 2) << 2 | pixel(c, x + 1, y) << 3 |
                       pixel(c, x + 1, y + 1) << 4 | pixel(c, x + 1, y + 2) << 5 | pixel(c, x, y + 3) << 6 |
                       pixel(c, x + 1, y + 3) << 7;
            unsigned code = 0x2800u + (unsigned)bits;
            text[n++] = (char)(0xE0 | (code >> 12));
            text[n++] = (char)(0x80 | ((code >> 6) & 0x3F));
            text[n++] = (char)(0x80 | (code & 0x3F));
        }
        if (y != c->height - 1) text[n++] = '\n';   /* as Redis: after every row but one ending on the last pixel row */
    }
    *length = n;
    return text;
}

static char *schotter(int columns, int per_row, int per_column, size_t *length) {
    canvas_t c;
    c.width = columns * 2;
    int padding = c.width > 4 ? 2 : 0;
    float side = (float)(c.width - padding * 2) / (float)per_row;
    c.height = (int)(side * (float)per_column) + padding * 2;
    c.pixels = calloc((size_t)c.width * (size_t)(c.height > 0 ? c.height : 1), 1);
    if (!c.pixels) return NULL;
    for (int y = 0; y < per_column; y++) {
        for (int x = 0; x < per_row; x++) {
            int sx = (int)((float)x * side + side / 2 + (float)padding);
            int sy = (int)((float)y * side + side / 2 + (float)padding);
            float angle = 0;
            if (y > 1) {
                angle = shake(y, per_column);
                sx += (int)(shake(y, per_column) * side / 3);
                sy += (int)(shake(y, per_column) * side / 3);
            }
            draw_square(&c, sx, sy, side, angle);
        }
    }
    char *text = render(&c, length);
    free(c.pixels);
    return text;
}

void gr_cmd_lolwut(gr_server_t *db, size_t argc, const uint8_t *const *argv, const size_t *argv_length,
                   gr_reply_t *reply) {
    (void)db;
    int64_t version = 7, numbers[3] = {66, 8, 12};   /* Redis's defaults: 66 columns, 8 x 12 squares */
    size_t j = 1;
    if (argc >= 3 && gr_word_is(argv[1], argv_length[1], "version")) {
        if (gr_bytes_to_int64(argv[2], argv_length[2], &version) != 0) {
            gr_reply_error_text(reply, GR_ERR_NOT_INTEGER, "ERR value is not an integer or out of range");
            return;
        }
        j = 3;
    }
    char line[128];
    int line_length;
    if (version != 5) {
        line_length = snprintf(line, sizeof line, "Redis ver. %s\n", GR_REDIS_COMPATIBLE_VERSION);
        gr_reply_verbatim(reply, (const uint8_t *)line, (size_t)line_length);
        return;
    }
    for (int i = 0; j < argc && i < 3; i++, j++) {
        if (gr_bytes_to_int64(argv[j], argv_length[j], &numbers[i]) != 0) {
            gr_reply_error_text(reply, GR_ERR_NOT_INTEGER, "ERR value is not an integer or out of range");
            return;
        }
    }
    static const int64_t top[3] = {1000, 200, 200};
    for (int i = 0; i < 3; i++) numbers[i] = numbers[i] < 1 ? 1 : numbers[i] > top[i] ? top[i] : numbers[i];
    size_t art_length;
    char *art = schotter((int)numbers[0], (int)numbers[1], (int)numbers[2], &art_length);
    if (!art) { gr_reply_oom(reply); return; }
    line_length = snprintf(line, sizeof line, "\nGeorg Nees - schotter, plotter on paper, 1968. Redis ver. %s\n",
                           GR_REDIS_COMPATIBLE_VERSION);
    char *text = malloc(art_length + (size_t)line_length);
    if (!text) { free(art); gr_reply_oom(reply); return; }
    memcpy(text, art, art_length);
    memcpy(text + art_length, line, (size_t)line_length);
    gr_reply_verbatim(reply, (const uint8_t *)text, art_length + (size_t)line_length);
    free(text);
    free(art);
}
