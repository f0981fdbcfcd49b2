/* tfm attention --png: one heatmap per attention head, drawn with cairo (Debian's libcairo2-dev,
 * optional at build time as libmicrohttpd is for tfm serve: without it --png says so). */
#ifndef TFM_CLI_ATTENTION_PNG_H
#define TFM_CLI_ATTENTION_PNG_H

/* "cairo 1.16.0" when this build draws PNGs, else NULL. */
const char *attention_png_library(void);

/* Draws w [Tq, Tk] (rows: queries, labelled qlab; columns: keys, klab) as a heatmap, white 0 to
 * dark blue 1, each cell CELL_PX square, the key labels above the columns (vertical), the query
 * labels left of the rows, `title` on top, written atomically to `path`. *width and *height
 * receive the image's size in pixels. Prints the error and returns 0 on failure. */
int attention_png_write(const char *cmd, const char *path, const char *title, const float *w, int Tq, int Tk,
                        const char *const *qlab, const char *const *klab, int *width, int *height);

#endif
