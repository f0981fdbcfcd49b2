/* Datasets (include/tfm/data.h): aligned text files encoded with the tokenizer, or aligned token-id
 * files, held in memory as two flat id arrays with per-pair offsets. */
#include "core_internal.h"
#include "data_internal.h"
#include "tfm/fileio.h"
#include "tfm/ids.h"
#include "tfm/text.h"
#include "utf8.h"

#include <stdlib.h>
#include <string.h>

/* ---- growable arrays ---------------------------------------------------------------------- */

typedef struct {
    int32_t *v;
    size_t n, cap;
} i32_vec;

typedef struct {
    size_t *v;
    size_t n, cap;
} size_vec;

static int i32_reserve(i32_vec *a, size_t extra) {
    if (a->n + extra <= a->cap) return 1;
    size_t cap = a->cap ? a->cap : 1 << 16;
    while (cap < a->n + extra) {
        if (cap > SIZE_MAX / 2 / sizeof *a->v) return 0;
        cap *= 2;
    }
    int32_t *p = realloc(a->v, cap * sizeof *p);
    if (!p) return 0;
    a->v = p;
    a->cap = cap;
    return 1;
}

static int size_push(size_vec *a, size_t x) {
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 1 << 12;
        if (cap > SIZE_MAX / sizeof *a->v) return 0;
        size_t *p = realloc(a->v, cap * sizeof *p);
        if (!p) return 0;
        a->v = p;
        a->cap = cap;
    }
    a->v[a->n++] = x;
    return 1;
}

/* ---- one side of a text corpus: a line reader (include/tfm/fileio.h) and its current line ---- */

typedef struct {
    tfm_line_reader *r;
    const char *path;
    const char *line; /* the current line, NUL-terminated */
    size_t lineno;    /* lines returned so far */
} line_reader;

static tfm_status reader_open(line_reader *r, const char *path) {
    memset(r, 0, sizeof *r);
    r->path = path;
    return tfm_line_reader_open(path, TFM_DATA_MAX_LINE_BYTES, &r->r);
}

static void reader_close(line_reader *r) {
    tfm_line_reader_free(r->r);
    memset(r, 0, sizeof *r);
}

/* The next line into r->line / *len, without its "\n" or "\r\n"; *got = 0 at end of file. */
static tfm_status reader_next(line_reader *r, int *got, size_t *len) {
    TRY(tfm_line_reader_next(r->r, &r->line, len));
    r->lineno = tfm_line_reader_line_number(r->r);
    *got = r->line != NULL;
    return TFM_OK;
}

/* ---- the dataset --------------------------------------------------------------------------- */

static char *dup_str(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

/* A dataset that owns the given arrays (freed on failure). */
static tfm_status dataset_make(size_t n, int32_t *src_ids, size_t *src_off, int32_t *tgt_ids, size_t *tgt_off,
                               size_t *lines, const char *src_path, const char *tgt_path, tfm_dataset **out) {
    tfm_dataset *ds = calloc(1, sizeof *ds);
    char *sp = dup_str(src_path), *tp = dup_str(tgt_path);
    if (!ds || !sp || !tp) {
        free(ds);
        free(sp);
        free(tp);
        free(src_ids);
        free(src_off);
        free(tgt_ids);
        free(tgt_off);
        free(lines);
        return tfm_set_error(TFM_ERR_NOMEM, "out of memory making a dataset of %s and %s", src_path, tgt_path);
    }
    ds->n = n;
    ds->src_ids = src_ids;
    ds->src_off = src_off;
    ds->tgt_ids = tgt_ids;
    ds->tgt_off = tgt_off;
    ds->lines = lines;
    ds->src_path = sp;
    ds->tgt_path = tp;
    *out = ds;
    return TFM_OK;
}

static tfm_status check_utf8(const line_reader *r, size_t len) {
    size_t bad = utf8_first_invalid(r->line, len); /* NUL bytes were refused by the reader */
    RETURN_IF(bad < len, TFM_ERR_FORMAT, "%s:%zu: invalid UTF-8 at byte offset %zu of the line", r->path, r->lineno,
              bad);
    return TFM_OK;
}

static tfm_status encode_line(const tfm_tokenizer *tok, const line_reader *r, size_t len, int32_t **ids,
                              size_t *n) {
    tfm_status st = tfm_tokenizer_encode(tok, r->line, len, ids, n);
    return st == TFM_OK ? TFM_OK : tfm_error_prefix(st, "%s:%zu: ", r->path, r->lineno);
}

/* Everything from_text builds before it becomes a dataset. */
typedef struct {
    i32_vec src, tgt;
    size_vec src_off, tgt_off, lines;
} text_builder;

static void builder_free(text_builder *b) {
    free(b->src.v);
    free(b->tgt.v);
    free(b->src_off.v);
    free(b->tgt_off.v);
    free(b->lines.v);
    memset(b, 0, sizeof *b);
}

/* Reads and encodes both files into b; fills the counts of *st. */
static tfm_status read_pairs(const tfm_tokenizer *tok, line_reader *rs, line_reader *rt, int max_len, int bos_id,
                             int eos_id, text_builder *b, tfm_dataset_stats *st) {
    const char *sp = rs->path, *tp = rt->path;
    RETURN_IF(!size_push(&b->src_off, 0) || !size_push(&b->tgt_off, 0), TFM_ERR_NOMEM, "out of memory reading %s",
              sp);
    for (;;) {
        int got_s = 0, got_t = 0;
        size_t ls = 0, lt = 0;
        TRY(reader_next(rs, &got_s, &ls));
        TRY(reader_next(rt, &got_t, &lt));
        if (!got_s || !got_t) {
            if (got_s == got_t) break;
            line_reader *longer = got_s ? rs : rt, *shorter = got_s ? rt : rs;
            RETURN_IF(shorter->lineno == 0, TFM_ERR_FORMAT, "%s: the file is empty (no lines)", shorter->path);
            size_t rest = 0;
            TRY(tfm_line_reader_count_rest(longer->r, &rest));
            size_t nl = longer->lineno + rest, ns = rs == longer ? nl : rs->lineno, nt = rt == longer ? nl : rt->lineno;
            return tfm_set_error(TFM_ERR_FORMAT, "%s has %zu lines but %s has %zu: the files must be aligned, line by line",
                                 sp, ns, tp, nt);
        }
        st->n_lines++;
        TRY(check_utf8(rs, ls));
        TRY(check_utf8(rt, lt));
        if (tfm_text_is_blank(rs->line, ls) || tfm_text_is_blank(rt->line, lt)) { /* tfm/text.h */
            st->n_skipped_empty++;
            continue;
        }
        int32_t *si = NULL, *ti = NULL;
        size_t ns = 0, nt = 0;
        TRY(encode_line(tok, rs, ls, &si, &ns));
        tfm_status s = encode_line(tok, rt, lt, &ti, &nt);
        if (s != TFM_OK) {
            free(si);
            return s;
        }
        if (ns > (size_t)max_len || nt + 2 > (size_t)max_len + 1 || ns == 0 || nt == 0) {
            /* ns or nt 0 cannot happen for non-blank text with models tfm trains; count it as empty */
            if (ns == 0 || nt == 0) st->n_skipped_empty++;
            else st->n_skipped_long++;
            free(si);
            free(ti);
            continue;
        }
        int ok = i32_reserve(&b->src, ns) && i32_reserve(&b->tgt, nt + 2);
        if (ok) {
            memcpy(b->src.v + b->src.n, si, ns * sizeof *si);
            b->src.n += ns;
            b->tgt.v[b->tgt.n++] = bos_id;
            memcpy(b->tgt.v + b->tgt.n, ti, nt * sizeof *ti);
            b->tgt.n += nt;
            b->tgt.v[b->tgt.n++] = eos_id;
            ok = size_push(&b->src_off, b->src.n) && size_push(&b->tgt_off, b->tgt.n) &&
                 size_push(&b->lines, rs->lineno);
        }
        free(si);
        free(ti);
        RETURN_IF(!ok, TFM_ERR_NOMEM, "out of memory encoding %s and %s (line %zu)", sp, tp, rs->lineno);
        if ((int)ns > st->max_src_len) st->max_src_len = (int)ns;
        if ((int)nt + 2 > st->max_tgt_len) st->max_tgt_len = (int)nt + 2;
    }
    RETURN_IF(st->n_lines == 0, TFM_ERR_FORMAT, "%s: the file is empty (no lines)", sp);
    st->n_pairs = b->lines.n;
    st->src_tokens = b->src.n;
    st->tgt_tokens = b->tgt.n;
    RETURN_IF(st->n_pairs == 0, TFM_ERR_FORMAT,
              "%s and %s: no usable pair in %zu lines (%zu with an empty side, %zu longer than max_len %d)", sp, tp,
              st->n_lines, st->n_skipped_empty, st->n_skipped_long, max_len);
    return TFM_OK;
}

tfm_status tfm_dataset_from_text(const tfm_tokenizer *tok, const char *src_path, const char *tgt_path, int max_len,
                                 int bos_id, int eos_id, tfm_dataset **out, tfm_dataset_stats *stats) {
    RETURN_IF(!out, TFM_ERR_INVALID_ARG, "dataset: NULL output");
    *out = NULL;
    RETURN_IF(!tok || !src_path || !tgt_path, TFM_ERR_INVALID_ARG, "dataset: NULL tokenizer or path");
    RETURN_IF(max_len < 1, TFM_ERR_INVALID_ARG, "dataset: max_len must be >= 1, got %d", max_len);
    const int V = tfm_tokenizer_vocab_size(tok);
    RETURN_IF(bos_id < 0 || bos_id >= V || eos_id < 0 || eos_id >= V, TFM_ERR_INVALID_ARG,
              "dataset: bos_id %d and eos_id %d must be in the tokenizer's vocabulary [0, %d)", bos_id, eos_id, V);
    tfm_dataset_stats st;
    memset(&st, 0, sizeof st);
    line_reader rs, rt;
    text_builder b;
    memset(&rt, 0, sizeof rt);
    memset(&b, 0, sizeof b);
    tfm_status s = reader_open(&rs, src_path);
    if (s == TFM_OK) s = reader_open(&rt, tgt_path);
    if (s == TFM_OK) s = read_pairs(tok, &rs, &rt, max_len, bos_id, eos_id, &b, &st);
    reader_close(&rs);
    reader_close(&rt);
    if (s != TFM_OK) {
        builder_free(&b);
        return s;
    }
    if (stats) *stats = st;
    return dataset_make(st.n_pairs, b.src.v, b.src_off.v, b.tgt.v, b.tgt_off.v, b.lines.v, src_path, tgt_path, out);
}

static tfm_status check_id_lengths(const tfm_id_lines *src, const char *sp, const tfm_id_lines *tgt, const char *tp,
                                   int max_len, tfm_dataset_stats *st) {
    RETURN_IF(src->n_lines != tgt->n_lines, TFM_ERR_FORMAT,
              "%s has %zu lines but %s has %zu: the files must be aligned, line by line", sp, src->n_lines, tp,
              tgt->n_lines);
    for (size_t i = 0; i < src->n_lines; i++) {
        size_t ls = tfm_id_lines_len(src, i), lt = tfm_id_lines_len(tgt, i);
        RETURN_IF(ls > (size_t)max_len, TFM_ERR_RANGE, "%s:%zu: %zu ids, more than max_len %d", sp, i + 1, ls,
                  max_len);
        RETURN_IF(lt < 2 || lt > (size_t)max_len + 1, TFM_ERR_RANGE,
                  "%s:%zu: a target line needs BOS and EOS and at most max_len + 1 = %d ids, got %zu", tp, i + 1,
                  max_len + 1, lt);
        if ((int)ls > st->max_src_len) st->max_src_len = (int)ls;
        if ((int)lt > st->max_tgt_len) st->max_tgt_len = (int)lt;
    }
    st->n_lines = st->n_pairs = src->n_lines;
    st->src_tokens = src->offsets[src->n_lines];
    st->tgt_tokens = tgt->offsets[tgt->n_lines];
    return TFM_OK;
}

tfm_status tfm_dataset_from_id_lines(tfm_id_lines *src, const char *src_path, tfm_id_lines *tgt, const char *tgt_path,
                                     int max_len, tfm_dataset **out, tfm_dataset_stats *stats) {
    RETURN_IF(!out, TFM_ERR_INVALID_ARG, "dataset: NULL output");
    *out = NULL;
    RETURN_IF(!src || !tgt || !src_path || !tgt_path, TFM_ERR_INVALID_ARG, "dataset: NULL lines or path");
    RETURN_IF(max_len < 1, TFM_ERR_INVALID_ARG, "dataset: max_len must be >= 1, got %d", max_len);
    tfm_dataset_stats st;
    memset(&st, 0, sizeof st);
    TRY(check_id_lengths(src, src_path, tgt, tgt_path, max_len, &st));
    /* The id arrays and offsets have the dataset's layout already: the dataset takes them over. */
    tfm_status s = dataset_make(src->n_lines, src->ids, src->offsets, tgt->ids, tgt->offsets, NULL, src_path,
                                tgt_path, out); /* owns (or, failing, has freed) the arrays */
    memset(src, 0, sizeof *src);
    memset(tgt, 0, sizeof *tgt);
    if (s == TFM_OK && stats) *stats = st;
    return s;
}

tfm_status tfm_dataset_from_ids(const char *src_path, const char *tgt_path, int max_len, tfm_dataset **out,
                                tfm_dataset_stats *stats) {
    RETURN_IF(!out, TFM_ERR_INVALID_ARG, "dataset: NULL output");
    *out = NULL;
    RETURN_IF(!src_path || !tgt_path, TFM_ERR_INVALID_ARG, "dataset: NULL path");
    RETURN_IF(max_len < 1, TFM_ERR_INVALID_ARG, "dataset: max_len must be >= 1, got %d", max_len);
    tfm_id_lines src = {0}, tgt = {0};
    tfm_status s = tfm_id_lines_read(src_path, &src);
    if (s == TFM_OK) s = tfm_id_lines_read(tgt_path, &tgt);
    if (s == TFM_OK) s = tfm_dataset_from_id_lines(&src, src_path, &tgt, tgt_path, max_len, out, stats);
    tfm_id_lines_free(&src); /* empty after a success */
    tfm_id_lines_free(&tgt);
    return s;
}

tfm_status tfm_dataset_check_vocab(const tfm_dataset *ds, int src_vocab, int tgt_vocab) {
    for (size_t i = 0; i < ds->n; i++) {
        for (size_t k = ds->src_off[i]; k < ds->src_off[i + 1]; k++)
            RETURN_IF(ds->src_ids[k] < 0 || ds->src_ids[k] >= src_vocab, TFM_ERR_RANGE,
                      "%s:%zu: token id %d is outside the source vocabulary [0, %d)", ds->src_path,
                      tfm_dataset_line(ds, i), (int)ds->src_ids[k], src_vocab);
        for (size_t k = ds->tgt_off[i]; k < ds->tgt_off[i + 1]; k++)
            RETURN_IF(ds->tgt_ids[k] < 0 || ds->tgt_ids[k] >= tgt_vocab, TFM_ERR_RANGE,
                      "%s:%zu: token id %d is outside the target vocabulary [0, %d)", ds->tgt_path,
                      tfm_dataset_line(ds, i), (int)ds->tgt_ids[k], tgt_vocab);
    }
    return TFM_OK;
}

size_t tfm_dataset_size(const tfm_dataset *ds) { return ds->n; }

void tfm_dataset_pair(const tfm_dataset *ds, size_t i, const int32_t **src, size_t *src_len, const int32_t **tgt,
                      size_t *tgt_len) {
    TFM_ASSERT(i < ds->n);
    if (src) *src = ds->src_ids + ds->src_off[i];
    if (src_len) *src_len = dataset_src_len(ds, i);
    if (tgt) *tgt = ds->tgt_ids + ds->tgt_off[i];
    if (tgt_len) *tgt_len = dataset_tgt_len(ds, i);
}

size_t tfm_dataset_line(const tfm_dataset *ds, size_t i) {
    TFM_ASSERT(i < ds->n);
    return ds->lines ? ds->lines[i] : i + 1;
}

void tfm_dataset_free(tfm_dataset *ds) {
    if (!ds) return;
    free(ds->src_ids);
    free(ds->src_off);
    free(ds->tgt_ids);
    free(ds->tgt_off);
    free(ds->lines);
    free(ds->src_path);
    free(ds->tgt_path);
    free(ds);
}
