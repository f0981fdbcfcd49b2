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

/* Opens `path` (the `what` file: "hypothesis" or "reference") for reading. */
static tfm_status open_text(const char *path, const char *what, FILE **f) {
    *f = fopen(path, "rb");
    RETURN_IF(!*f, TFM_ERR_IO, "cannot open %s file '%s': %s", what, path, strerror(errno));
    return TFM_OK;
}

/* Reads the lines of the open file f (`path`, the `what` file) and closes it; NUL bytes are refused
 * with file:line, UTF-8 is checked later by tfm_bleu_check_segments. The line reader strips "\n"
 * and "\r\n"; sacreBLEU keeps the "\r" but then ignores it as trailing whitespace (BLEU's
 * rstrip(), chrF's removal of whitespace). */
static tfm_status text_lines_read(FILE *f, const char *path, const char *what, text_lines *t) {
    memset(t, 0, sizeof *t);
    tfm_line_reader *r = NULL;
    tfm_status st = tfm_line_reader_from_stream(f, path, 0, &r);
    const char *line = NULL;
    size_t len = 0;
    while (st == TFM_OK && (st = tfm_line_reader_next(r, &line, &len)) == TFM_OK && line) {
        if (!text_lines_push(t, line, len))
            st = tfm_set_error(TFM_ERR_NOMEM, "out of memory reading the %s file '%s' (line %zu)", what, path,
                               tfm_line_reader_line_number(r));
    }
    tfm_line_reader_free(r);
    fclose(f);
    if (st != TFM_OK) text_lines_free(t);
    return st;
}

/* The line pointers of t, or NULL when out of memory (an empty t gives a 1-element array). */
static const char **text_lines_ptrs(const text_lines *t) {
    const char **p = malloc((t->n_lines ? t->n_lines : 1) * sizeof *p);
    for (size_t i = 0; p && i < t->n_lines; i++) p[i] = t->data + t->starts[i];
    return p;
}

/* TFM_ERR_FORMAT naming path:line and the byte if a line of `lines` is not UTF-8. */
static tfm_status check_utf8_lines(const char *path, const char *what, const char *const *lines, size_t n) {
    for (size_t i = 0; i < n; i++) {
        const size_t len = strlen(lines[i]), bad = utf8_first_invalid(lines[i], len);
        RETURN_IF(bad < len, TFM_ERR_FORMAT, "%s:%zu: invalid UTF-8 at byte column %zu (byte 0x%02X) in the %s file",
                  path, i + 1, bad + 1, (unsigned)(unsigned char)lines[i][bad], what);
    }
    return TFM_OK;
}

tfm_status tfm_bleu_check_segments(const char *hyp_role, const char *hyp_path, const char *const *hyp, size_t n_hyp,
                                   const char *ref_path, const char *const *ref, size_t n_ref) {
    RETURN_IF(!hyp_role || !hyp_path || !ref_path || (!hyp && n_hyp) || (!ref && n_ref), TFM_ERR_INVALID_ARG,
              "tfm_bleu_check_segments: NULL argument");
    TRY(check_utf8_lines(hyp_path, hyp_role, hyp, n_hyp));
    TRY(check_utf8_lines(ref_path, "reference", ref, n_ref));
    RETURN_IF(n_hyp != n_ref, TFM_ERR_FORMAT,
              "line counts differ: %s file '%s' has %zu lines, reference file '%s' has %zu lines", hyp_role,
              hyp_path, n_hyp, ref_path, n_ref);
    RETURN_IF(n_hyp == 0, TFM_ERR_FORMAT,
              "'%s' and '%s' have no lines: nothing to score (sacreBLEU refuses empty input too)", hyp_path,
              ref_path);
    return TFM_OK;
}

tfm_status tfm_bleu_chrf_files(const char *hyp_path, const char *ref_path, tfm_bleu_stats *bleu,
                               tfm_chrf_stats *chrf, size_t *n_lines) {
    RETURN_IF(!hyp_path || !ref_path, TFM_ERR_INVALID_ARG, "tfm_bleu_chrf_files: NULL path");
    text_lines h, r;
    FILE *fh = NULL, *fr = NULL; /* both inputs opened before either is read: fail early */
    TRY(open_text(hyp_path, "hypothesis", &fh));
    tfm_status st = open_text(ref_path, "reference", &fr);
    if (st != TFM_OK) {
        fclose(fh);
        return st;
    }
    st = text_lines_read(fh, hyp_path, "hypothesis", &h);
    if (st != TFM_OK) {
        fclose(fr);
        return st;
    }
    st = text_lines_read(fr, ref_path, "reference", &r);
    if (st != TFM_OK) {
        text_lines_free(&h);
        return st;
    }
    const char **hp = text_lines_ptrs(&h), **rp = text_lines_ptrs(&r);
    st = hp && rp ? tfm_bleu_check_segments("hypothesis", hyp_path, hp, h.n_lines, ref_path, rp, r.n_lines)
                  : tfm_set_error(TFM_ERR_NOMEM, "out of memory reading '%s' and '%s'", hyp_path, ref_path);
    free(hp);
    free(rp);
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
