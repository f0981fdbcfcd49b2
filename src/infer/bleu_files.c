/* Reading a hypothesis file and a reference file line by line for BLEU / chrF, as sacreBLEU's
 * command line reads them (Python text mode with newline="\n": only "\n" ends a line). */
#include "tfm/bleu.h"
#include "tfm/fileio.h"

#include "bleu_internal.h"
#include "core_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *data; /* the lines, each NUL-terminated, one after the other */
    size_t size, cap;
    size_t *starts; /* byte offset of each line in data */
    size_t n_lines, cap_lines;
} text_lines;

static void text_lines_free(text_lines *t) {
    free(t->data);
    free(t->starts);
    memset(t, 0, sizeof *t);
}

static int text_lines_push(text_lines *t, const char *line, size_t len) {
    if (t->n_lines == t->cap_lines) {
        size_t cap = t->cap_lines ? 2 * t->cap_lines : 1024;
        size_t *p = cap > SIZE_MAX / sizeof *p ? NULL : realloc(t->starts, cap * sizeof *p);
        if (!p) return 0;
        t->starts = p;
        t->cap_lines = cap;
    }
    if (t->cap - t->size < len + 1) {
        size_t cap = t->cap ? t->cap : 1 << 16;
        while (cap - t->size < len + 1) {
            if (cap > SIZE_MAX / 2) return 0;
            cap *= 2;
        }
        char *p = realloc(t->data, cap);
        if (!p) return 0;
        t->data = p;
        t->cap = cap;
    }
    memcpy(t->data + t->size, line, len + 1);
    t->starts[t->n_lines++] = t->size;
    t->size += len + 1;
    return 1;
}

/* Reads the lines of `path` (the `what` file: "hypothesis" or "reference"), checking that each is
 * UTF-8 without NUL bytes. The line reader strips "\n" and "\r\n"; sacreBLEU keeps the "\r" but
 * then ignores it as trailing whitespace (BLEU's rstrip(), chrF's removal of whitespace). */
static tfm_status text_lines_read(const char *path, const char *what, text_lines *t) {
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "rb");
    RETURN_IF(!f, TFM_ERR_IO, "cannot open %s file '%s': %s", what, path, strerror(errno));
    tfm_line_reader *r = NULL;
    tfm_status st = tfm_line_reader_from_stream(f, path, 0, &r);
    const char *line = NULL;
    size_t len = 0;
    while (st == TFM_OK && (st = tfm_line_reader_next(r, &line, &len)) == TFM_OK && line) {
        const size_t bad = utf8_first_invalid(line, len);
        if (bad < len) {
            st = tfm_set_error(TFM_ERR_FORMAT, "%s:%zu: invalid UTF-8 at byte column %zu (byte 0x%02X) in the %s file",
                               path, tfm_line_reader_line_number(r), bad + 1, (unsigned)(unsigned char)line[bad], what);
        } else if (!text_lines_push(t, line, len)) {
            st = tfm_set_error(TFM_ERR_NOMEM, "out of memory reading the %s file '%s' (line %zu)", what, path,
                               tfm_line_reader_line_number(r));
        }
    }
    tfm_line_reader_free(r);
    fclose(f);
    if (st != TFM_OK) text_lines_free(t);
    return st;
}

tfm_status tfm_bleu_chrf_files(const char *hyp_path, const char *ref_path, tfm_bleu_stats *bleu,
                               tfm_chrf_stats *chrf, size_t *n_lines) {
    RETURN_IF(!hyp_path || !ref_path, TFM_ERR_INVALID_ARG, "tfm_bleu_chrf_files: NULL path");
    text_lines h, r;
    TRY(text_lines_read(hyp_path, "hypothesis", &h));
    tfm_status st = text_lines_read(ref_path, "reference", &r);
    if (st != TFM_OK) {
        text_lines_free(&h);
        return st;
    }
    if (h.n_lines != r.n_lines) {
        st = tfm_set_error(TFM_ERR_FORMAT,
                           "line counts differ: hypothesis file '%s' has %zu lines, reference file "
                           "'%s' has %zu lines",
                           hyp_path, h.n_lines, ref_path, r.n_lines);
    }
    /* Accumulate into copies so the caller's statistics are untouched on error. */
    tfm_bleu_stats b = bleu ? *bleu : (tfm_bleu_stats){0};
    tfm_chrf_stats c = chrf ? *chrf : (tfm_chrf_stats){0};
    for (size_t i = 0; st == TFM_OK && i < h.n_lines; i++) {
        const char *hs = h.data + h.starts[i], *rs = r.data + r.starts[i];
        if (bleu) st = tfm_bleu_add(&b, hs, rs);
        if (st == TFM_OK && chrf) st = tfm_chrf_add(&c, hs, rs);
        if (st != TFM_OK) {
            st = tfm_error_prefix(st, "%s:%zu / %s:%zu: ", hyp_path, i + 1, ref_path, i + 1);
        }
    }
    if (st == TFM_OK) {
        if (bleu) *bleu = b;
        if (chrf) *chrf = c;
        if (n_lines) *n_lines = h.n_lines;
    }
    text_lines_free(&h);
    text_lines_free(&r);
    return st;
}
