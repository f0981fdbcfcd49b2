/* Token-id files (docs/FORMATS.md): strict parsing with file:line:column errors. */
#include "core_internal.h"
#include "tfm/fileio.h"
#include "tfm/ids.h"
#include "tfm/text.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int32_t *ids;
    size_t n, cap;
    size_t *offsets;
    size_t n_lines, cap_lines;
} id_builder;

static int push_id(id_builder *b, int32_t v) {
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 4096;
        int32_t *p = realloc(b->ids, cap * sizeof *p);
        if (!p) return 0;
        b->ids = p;
        b->cap = cap;
    }
    b->ids[b->n++] = v;
    return 1;
}

static int push_line_end(id_builder *b) {
    if (b->n_lines + 2 > b->cap_lines) {
        size_t cap = b->cap_lines ? b->cap_lines * 2 : 1024;
        size_t *p = realloc(b->offsets, cap * sizeof *p);
        if (!p) return 0;
        b->offsets = p;
        b->cap_lines = cap;
    }
    b->offsets[++b->n_lines] = b->n;
    return 1;
}

/* Parses one line (without its newline) into b. A blank line (tfm/text.h: e.g. only U+00A0 or a
 * vertical tab) holds no ids, like an empty one. */
static tfm_status parse_line(id_builder *b, const char *line, size_t len, const char *path, size_t lineno) {
    size_t i = tfm_text_is_blank(line, len) ? len : 0;
    while (i < len) {
        while (i < len && (line[i] == ' ' || line[i] == '\t')) i++;
        if (i >= len) break;
        size_t start = i;
        while (i < len && line[i] != ' ' && line[i] != '\t') i++;
        size_t tlen = i - start;
        const char *tok = line + start;
        int digits = tlen > 0;
        for (size_t k = 0; k < tlen; k++)
            if (tok[k] < '0' || tok[k] > '9') digits = 0;
        if (!digits) {
            RETURN_IF(tok[0] == '-', TFM_ERR_FORMAT, "%s:%zu:%zu: negative token id '%.*s'", path, lineno,
                      start + 1, (int)(tlen > 32 ? 32 : tlen), tok);
            return tfm_set_error(TFM_ERR_FORMAT, "%s:%zu:%zu: '%.*s' is not a token id (a non-negative integer)",
                                 path, lineno, start + 1, (int)(tlen > 32 ? 32 : tlen), tok);
        }
        uint64_t v = 0;
        for (size_t k = 0; k < tlen && v <= INT32_MAX; k++) v = v * 10 + (uint64_t)(tok[k] - '0');
        RETURN_IF(v > INT32_MAX, TFM_ERR_RANGE, "%s:%zu:%zu: token id '%.*s' is too large (max %d)", path, lineno,
                  start + 1, (int)(tlen > 32 ? 32 : tlen), tok, INT32_MAX);
        RETURN_IF(!push_id(b, (int32_t)v), TFM_ERR_NOMEM, "%s: out of memory reading ids", path);
    }
    RETURN_IF(!push_line_end(b), TFM_ERR_NOMEM, "%s: out of memory reading ids", path);
    return TFM_OK;
}

tfm_status tfm_id_lines_read(const char *path, tfm_id_lines *out) {
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    RETURN_IF(!f, TFM_ERR_IO, "cannot open id file %s: %s", path, strerror(errno));
    id_builder b = {0};
    tfm_line_reader *r = NULL;
    tfm_status st = tfm_line_reader_from_stream(f, path, TFM_IDS_MAX_LINE_BYTES, &r);
    if (st == TFM_OK && !push_line_end(&b)) st = tfm_set_error(TFM_ERR_NOMEM, "%s: out of memory reading ids", path);
    if (st == TFM_OK) { /* start over with offsets[0] = 0 and no lines */
        b.offsets[0] = 0;
        b.n_lines = 0;
    }
    const char *line = NULL;
    size_t len = 0;
    while (st == TFM_OK && (st = tfm_line_reader_next(r, &line, &len)) == TFM_OK && line)
        st = parse_line(&b, line, len, path, tfm_line_reader_line_number(r));
    if (st == TFM_OK && b.n_lines == 0) st = tfm_set_error(TFM_ERR_FORMAT, "%s: the id file is empty (no lines)", path);
    tfm_line_reader_free(r);
    fclose(f);
    if (st != TFM_OK) {
        free(b.ids);
        free(b.offsets);
        return st;
    }
    out->ids = b.ids ? b.ids : malloc(sizeof(int32_t)); /* never NULL, even with no ids at all */
    out->offsets = b.offsets;
    out->n_lines = b.n_lines;
    if (!out->ids) {
        free(b.offsets);
        memset(out, 0, sizeof *out);
        return tfm_set_error(TFM_ERR_NOMEM, "%s: out of memory reading ids", path);
    }
    return TFM_OK;
}

tfm_status tfm_id_lines_check_vocab(const tfm_id_lines *lines, const char *path, int vocab) {
    for (size_t i = 0; i < lines->n_lines; i++)
        for (size_t k = lines->offsets[i]; k < lines->offsets[i + 1]; k++)
            RETURN_IF(lines->ids[k] >= vocab, TFM_ERR_RANGE,
                      "%s:%zu: token id %d is outside the vocabulary [0, %d)", path, i + 1, lines->ids[k], vocab);
    return TFM_OK;
}

void tfm_id_lines_free(tfm_id_lines *lines) {
    free(lines->ids);
    free(lines->offsets);
    memset(lines, 0, sizeof *lines);
}
