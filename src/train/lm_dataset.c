/* Language-model datasets (include/tfm/data.h, docs/LM.md): plain UTF-8 text files, one sequence
 * per line — BOS + the line's subwords + EOS, cut to BOS + max_len subwords (no EOS) when longer —
 * held as a tfm_dataset whose sources are empty, so the batcher, trainer and loop of the
 * encoder–decoder run it unchanged. */
#include "core_internal.h"
#include "data_internal.h"
#include "tfm/fileio.h"
#include "tfm/text.h"
#include "utf8.h"

#include <stdlib.h>
#include <string.h>

/* The arrays being built. */
typedef struct {
    int32_t *ids;
    size_t n_ids, cap_ids;
    size_t *off, *lines; /* [n + 1], [n] */
    size_t n, cap;
} lm_builder;

static int push_row(lm_builder *b, const int32_t *row, size_t len, size_t line) {
    if (b->n_ids + len > b->cap_ids) {
        size_t cap = b->cap_ids ? b->cap_ids : 1 << 16;
        while (cap < b->n_ids + len) cap *= 2;
        int32_t *p = realloc(b->ids, cap * sizeof *p);
        if (!p) return 0;
        b->ids = p;
        b->cap_ids = cap;
    }
    if (b->n + 2 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 1 << 12;
        size_t *o = realloc(b->off, cap * sizeof *o);
        if (!o) return 0;
        b->off = o;
        size_t *l = realloc(b->lines, cap * sizeof *l);
        if (!l) return 0;
        b->lines = l;
        b->cap = cap;
    }
    if (b->n == 0) b->off[0] = 0;
    memcpy(b->ids + b->n_ids, row, len * sizeof *row);
    b->n_ids += len;
    b->lines[b->n] = line;
    b->off[++b->n] = b->n_ids;
    return 1;
}

/* Reads one file's lines into b. row is scratch of max_len + 1 ids. */
static tfm_status read_file(const tfm_tokenizer *tok, const char *path, int max_len, int bos_id, int eos_id,
                            lm_builder *b, int32_t *row, tfm_lm_text_stats *st) {
    tfm_line_reader *r = NULL;
    TRY(tfm_line_reader_open(path, TFM_DATA_MAX_LINE_BYTES, &r));
    tfm_status s = TFM_OK;
    size_t lines = 0;
    for (;;) {
        const char *line;
        size_t len;
        if ((s = tfm_line_reader_next(r, &line, &len)) != TFM_OK || !line) break;
        lines = tfm_line_reader_line_number(r);
        st->n_lines++;
        size_t bad = utf8_first_invalid(line, len);
        if (bad < len) {
            s = tfm_set_error(TFM_ERR_FORMAT, "%s:%zu: invalid UTF-8 at byte offset %zu of the line", path, lines, bad);
            break;
        }
        if (tfm_text_is_blank(line, len)) {
            st->n_blank++;
            continue;
        }
        int32_t *ids = NULL;
        size_t n = 0;
        if ((s = tfm_tokenizer_encode(tok, line, len, &ids, &n)) != TFM_OK) {
            s = tfm_error_prefix(s, "%s:%zu: ", path, lines);
            break;
        }
        const int cut = n > (size_t)max_len - 1;
        const size_t keep = cut ? (size_t)max_len : n;
        row[0] = bos_id;
        memcpy(row + 1, ids, keep * sizeof *ids);
        if (!cut) row[keep + 1] = eos_id;
        free(ids);
        const size_t L = cut ? keep + 1 : keep + 2;
        if (!push_row(b, row, L, lines)) {
            s = tfm_set_error(TFM_ERR_NOMEM, "out of memory reading %s", path);
            break;
        }
        st->n_cut += (size_t)cut;
        st->tokens += L;
        if ((int)L > st->max_row_len) st->max_row_len = (int)L;
    }
    tfm_line_reader_free(r);
    if (s == TFM_OK && lines == 0) s = tfm_set_error(TFM_ERR_FORMAT, "%s: the file is empty (no lines)", path);
    return s;
}

tfm_status tfm_dataset_from_lm_text(const tfm_tokenizer *tok, const char *const *paths, size_t n_paths, int max_len,
                                    int bos_id, int eos_id, tfm_dataset **out, tfm_lm_text_stats *stats) {
    RETURN_IF(!out, TFM_ERR_INVALID_ARG, "LM dataset: NULL output");
    *out = NULL;
    RETURN_IF(!tok || !paths || n_paths == 0, TFM_ERR_INVALID_ARG, "LM dataset: no tokenizer or no files");
    RETURN_IF(max_len < 1, TFM_ERR_INVALID_ARG, "LM dataset: max_len must be >= 1, got %d", max_len);
    const int V = tfm_tokenizer_vocab_size(tok);
    RETURN_IF(bos_id < 0 || bos_id >= V || eos_id < 0 || eos_id >= V, TFM_ERR_INVALID_ARG,
              "LM dataset: bos_id %d / eos_id %d outside the vocabulary [0, %d)", bos_id, eos_id, V);
    tfm_lm_text_stats st;
    memset(&st, 0, sizeof st);
    lm_builder b;
    memset(&b, 0, sizeof b);
    size_t names = 1;
    for (size_t i = 0; i < n_paths; i++) names += strlen(paths[i]) + 1;
    int32_t *row = malloc(sizeof(int32_t) * ((size_t)max_len + 2));
    char *joined = malloc(names);
    size_t *src_off = NULL;
    int32_t *src_ids = malloc(sizeof(int32_t));
    tfm_dataset *ds = calloc(1, sizeof *ds);
    char *empty = malloc(1);
    tfm_status s = row && joined && src_ids && ds && empty ? TFM_OK : tfm_set_error(TFM_ERR_NOMEM, "out of memory");
    if (s == TFM_OK) {
        joined[0] = '\0';
        for (size_t i = 0; i < n_paths; i++) {
            if (i) strcat(joined, ",");
            strcat(joined, paths[i]);
        }
        empty[0] = '\0';
    }
    for (size_t i = 0; s == TFM_OK && i < n_paths; i++) {
        s = read_file(tok, paths[i], max_len, bos_id, eos_id, &b, row, &st);
        st.n_files++;
    }
    if (s == TFM_OK && b.n == 0)
        s = tfm_set_error(TFM_ERR_FORMAT, "%s: no usable line (%zu lines, all blank)", joined, st.n_lines);
    if (s == TFM_OK) {
        src_off = calloc(b.n + 1, sizeof *src_off);
        if (!src_off) s = tfm_set_error(TFM_ERR_NOMEM, "out of memory");
    }
    free(row);
    if (s != TFM_OK) {
        free(b.ids);
        free(b.off);
        free(b.lines);
        free(joined);
        free(src_ids);
        free(src_off);
        free(ds);
        free(empty);
        return s;
    }
    /* pair i: no source, target row i; the source "file" is named as empty */
    ds->n = b.n;
    ds->src_ids = src_ids;
    ds->src_off = src_off;
    ds->tgt_ids = b.ids;
    ds->tgt_off = b.off;
    ds->lines = b.lines;
    ds->src_path = empty;
    ds->tgt_path = joined;
    st.n_sequences = b.n;
    if (stats) *stats = st;
    *out = ds;
    return TFM_OK;
}
