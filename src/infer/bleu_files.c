/* Reading a hypothesis file and a reference file line by line for BLEU / chrF, the way sacreBLEU's
 * command line reads them (Python text mode with newline="\n": only "\n" ends a line, so a "\r"
 * before it stays in the line and is then ignored as trailing whitespace). */
#include "tfm/bleu.h"

#include "bleu_internal.h"
#include "core_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *data;     /* the whole file, each "\n" replaced by NUL; NUL-terminated */
    size_t size;
    size_t *starts; /* byte offset of each line */
    size_t n_lines;
} text_lines;

static void text_lines_free(text_lines *t) {
    free(t->data);
    free(t->starts);
    memset(t, 0, sizeof *t);
}

static tfm_status read_all(const char *path, const char *what, char **out, size_t *out_size) {
    FILE *f = fopen(path, "rb");
    RETURN_IF(!f, TFM_ERR_IO, "cannot open %s file '%s': %s", what, path, strerror(errno));
    size_t cap = 1 << 16, size = 0;
    char *buf = malloc(cap);
    if (!buf) {
        fclose(f);
        return tfm_set_error(TFM_ERR_NOMEM, "out of memory reading '%s'", path);
    }
    for (;;) {
        if (cap - size < 2) {
            char *nb = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                fclose(f);
                return tfm_set_error(TFM_ERR_NOMEM, "out of memory reading '%s' (%zu bytes so far)",
                                     path, size);
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + size, 1, cap - size - 1, f);
        size += got;
        if (got == 0) break;
    }
    int err = ferror(f), saved = errno;
    fclose(f);
    if (err) {
        free(buf);
        return tfm_set_error(TFM_ERR_IO, "cannot read %s file '%s': %s", what, path, strerror(saved));
    }
    buf[size] = '\0';
    *out = buf;
    *out_size = size;
    return TFM_OK;
}

/* Reads `path` and splits it into NUL-terminated lines, checking each is UTF-8 without NUL. */
static tfm_status text_lines_read(const char *path, const char *what, text_lines *t) {
    memset(t, 0, sizeof *t);
    TRY(read_all(path, what, &t->data, &t->size));
    size_t n = 0;
    for (size_t i = 0; i < t->size; i++) n += t->data[i] == '\n';
    if (t->size > 0 && t->data[t->size - 1] != '\n') n++; /* a last line without "\n" */
    t->starts = malloc((n + 1) * sizeof *t->starts);
    if (!t->starts) {
        text_lines_free(t);
        return tfm_set_error(TFM_ERR_NOMEM, "out of memory splitting '%s' into %zu lines", path, n);
    }
    size_t start = 0, line = 0;
    while (start < t->size) {
        char *nl = memchr(t->data + start, '\n', t->size - start);
        size_t end = nl ? (size_t)(nl - t->data) : t->size;
        const char *s = t->data + start;
        size_t len = end - start, bad;
        const char *nul = memchr(s, '\0', len);
        if (nul) {
            tfm_status st = tfm_set_error(TFM_ERR_FORMAT,
                                          "%s:%zu: NUL byte at byte column %zu in the %s file (not text)",
                                          path, line + 1, (size_t)(nul - s) + 1, what);
            text_lines_free(t);
            return st;
        }
        if (!bleu_utf8_valid(s, len, &bad)) {
            tfm_status st = tfm_set_error(TFM_ERR_FORMAT,
                                          "%s:%zu: invalid UTF-8 at byte column %zu (byte 0x%02X) in the %s file",
                                          path, line + 1, bad + 1, (unsigned)(unsigned char)s[bad], what);
            text_lines_free(t);
            return st;
        }
        t->data[end] = '\0'; /* the "\n", or the terminator past the end */
        t->starts[line++] = start;
        start = end + 1;
    }
    TFM_ASSERT(line == n);
    t->n_lines = n;
    return TFM_OK;
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
            char msg[512]; /* copied: the message buffer cannot be an argument of its own write */
            snprintf(msg, sizeof msg, "%s", tfm_last_error());
            st = tfm_set_error(st, "%s:%zu / %s:%zu: %s", hyp_path, i + 1, ref_path, i + 1, msg);
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
