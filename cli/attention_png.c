/* tfm attention --png (attention_png.h): heatmaps with cairo's image surface and PNG writer. */
#include "attention_png.h"

#include "args.h"
#include "output.h"

#include <stdio.h>

#ifdef TFM_HAVE_CAIRO
#include <cairo.h>

#define CELL_PX 22
#define FONT_PX 12.0
#define PAD_PX 8

const char *attention_png_library(void) {
    static char name[48];
    snprintf(name, sizeof name, "cairo %s", cairo_version_string());
    return name;
}

/* cairo's PNG writer into a FILE (an atomic output). */
static cairo_status_t write_file(void *closure, const unsigned char *data, unsigned int length) {
    return fwrite(data, 1, length, (FILE *)closure) == length ? CAIRO_STATUS_SUCCESS : CAIRO_STATUS_WRITE_ERROR;
}

/* The widest of n labels in the current font, in pixels. */
static double widest(cairo_t *cr, const char *const *lab, int n) {
    double most = 0.0;
    for (int i = 0; i < n; i++) {
        cairo_text_extents_t e;
        cairo_text_extents(cr, lab[i], &e);
        if (e.x_advance > most) most = e.x_advance;
    }
    return most;
}

int attention_png_write(const char *cmd, const char *path, const char *title, const float *w, int Tq, int Tk,
                        const char *const *qlab, const char *const *klab, int *width, int *height) {
    /* measure the labels on a scratch surface, then size the image */
    cairo_surface_t *probe = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 1, 1);
    cairo_t *cr = cairo_create(probe);
    cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, FONT_PX);
    cairo_text_extents_t te;
    cairo_text_extents(cr, title, &te);
    const int left = PAD_PX + (int)(widest(cr, qlab, Tq) + 0.999) + PAD_PX;
    const int top = PAD_PX + (int)(FONT_PX * 1.5) + (int)(widest(cr, klab, Tk) + 0.999) + PAD_PX;
    int W = left + Tk * CELL_PX + PAD_PX, H = top + Tq * CELL_PX + PAD_PX;
    if (W < (int)te.x_advance + 2 * PAD_PX) W = (int)te.x_advance + 2 * PAD_PX;
    cairo_destroy(cr);
    cairo_surface_destroy(probe);

    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, W, H);
    cr = cairo_create(s);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, FONT_PX);
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_move_to(cr, PAD_PX, PAD_PX + FONT_PX);
    cairo_show_text(cr, title);
    for (int q = 0; q < Tq; q++)
        for (int k = 0; k < Tk; k++) {
            const double v = w[(size_t)q * (size_t)Tk + (size_t)k];
            const double x = v < 0 ? 0 : v > 1 ? 1 : v; /* white (0) to dark blue (1) */
            cairo_set_source_rgb(cr, 1.0 - 0.92 * x, 1.0 - 0.75 * x, 1.0 - 0.45 * x);
            cairo_rectangle(cr, left + k * CELL_PX, top + q * CELL_PX, CELL_PX, CELL_PX);
            cairo_fill(cr);
        }
    cairo_set_source_rgb(cr, 0.6, 0.6, 0.6); /* the grid's frame */
    cairo_set_line_width(cr, 1.0);
    cairo_rectangle(cr, left + 0.5, top + 0.5, Tk * CELL_PX - 1.0, Tq * CELL_PX - 1.0);
    cairo_stroke(cr);
    cairo_set_source_rgb(cr, 0, 0, 0);
    for (int q = 0; q < Tq; q++) { /* query labels, right-aligned left of their row */
        cairo_text_extents(cr, qlab[q], &te);
        cairo_move_to(cr, left - PAD_PX / 2 - te.x_advance, top + q * CELL_PX + CELL_PX / 2 + FONT_PX / 3);
        cairo_show_text(cr, qlab[q]);
    }
    for (int k = 0; k < Tk; k++) { /* key labels, vertical, reading upwards from the grid */
        cairo_save(cr);
        cairo_move_to(cr, left + k * CELL_PX + CELL_PX / 2 + FONT_PX / 3, top - PAD_PX / 2);
        cairo_rotate(cr, -1.5707963267948966);
        cairo_show_text(cr, klab[k]);
        cairo_restore(cr);
    }
    cairo_destroy(cr);
    cli_output o;
    int ok = cairo_surface_status(s) == CAIRO_STATUS_SUCCESS;
    if (!ok) cli_error(cmd, "cairo could not draw %s: %s", path, cairo_status_to_string(cairo_surface_status(s)));
    if (ok && (ok = cli_output_open(cmd, path, &o))) {
        const cairo_status_t st = cairo_surface_write_to_png_stream(s, write_file, o.f);
        if (st != CAIRO_STATUS_SUCCESS) cli_error(cmd, "cannot write %s: %s", path, cairo_status_to_string(st));
        ok = cli_output_close(cmd, &o, st == CAIRO_STATUS_SUCCESS);
    }
    cairo_surface_destroy(s);
    *width = W;
    *height = H;
    return ok;
}

#else

const char *attention_png_library(void) { return NULL; }

int attention_png_write(const char *cmd, const char *path, const char *title, const float *w, int Tq, int Tk,
                        const char *const *qlab, const char *const *klab, int *width, int *height) {
    (void)path, (void)title, (void)w, (void)Tq, (void)Tk, (void)qlab, (void)klab;
    *width = *height = 0;
    cli_error(cmd, "this tfm was built without cairo: install libcairo2-dev and rebuild for --png");
    return 0;
}

#endif
