/* Loading byte-level BPE (include/tfm/bpe.h): GPT-2's vocab.json + merges.txt, and the entry point
 * for tokenizer.json (whose keys bpe_json.c reads). Files are read whole and parsed with cJSON;
 * merges.txt line by line with the project's line reader, so errors name the line. */
#include "bpe_internal.h"
#include "core_internal.h"
#include "tfm/fileio.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

tfm_status bpe_read_file(const char *path, char **buf, size_t *len) {
    *buf = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    RETURN_IF(!f, TFM_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap + 1);
    while (b) {
        n += fread(b + n, 1, cap - n, f);
        if (n < cap) break;
        char *g = realloc(b, 2 * cap + 1);
        if (!g) {
            free(b);
            b = NULL;
            break;
        }
        b = g;
        cap *= 2;
    }
    const int err = ferror(f);
    fclose(f);
    RETURN_IF(!b, TFM_ERR_NOMEM, "%s: out of memory", path);
    if (err) {
        free(b);
        return tfm_set_error(TFM_ERR_IO, "%s: read error", path);
    }
    b[n] = '\0';
    *buf = b;
    *len = n;
    return TFM_OK;
}

tfm_status bpe_parse_json(const char *path, const char *buf, size_t len, cJSON **out) {
    *out = cJSON_ParseWithLength(buf, len);
    if (*out) return TFM_OK;
    const char *ep = cJSON_GetErrorPtr();
    size_t at = ep && ep >= buf && ep <= buf + len ? (size_t)(ep - buf) : 0, line = 1, col = 1;
    for (size_t i = 0; i < at; i++, col++)
        if (buf[i] == '\n') line++, col = 0;
    return tfm_set_error(TFM_ERR_FORMAT, "%s:%zu:%zu: not valid JSON", path, line, col);
}

/* A JSON number that is an id: an integer in [0, INT32_MAX). */
int bpe_json_id(const cJSON *j, int32_t *out) {
    if (!cJSON_IsNumber(j) || !(j->valuedouble >= 0 && j->valuedouble <= BPE_MAX_ID) ||
        j->valuedouble != (double)(int32_t)j->valuedouble)
        return 0;
    *out = (int32_t)j->valuedouble;
    return 1;
}

tfm_status bpe_load_vocab(const char *path, const char *where, const cJSON *vocab, struct tfm_bpe *b) {
    RETURN_IF(!cJSON_IsObject(vocab) || !vocab->child, TFM_ERR_FORMAT, "%s: %s is not a non-empty object", path,
              where);
    int32_t max_id = -1;
    for (const cJSON *it = vocab->child; it; it = it->next) {
        int32_t id;
        RETURN_IF(!bpe_json_id(it, &id), TFM_ERR_FORMAT, "%s: %s: token '%s' has no valid id (an integer in [0, %d])",
                  path, where, it->string, BPE_MAX_ID);
        RETURN_IF(!it->string[0], TFM_ERR_FORMAT, "%s: %s: empty token (id %d)", path, where, (int)id);
        if (id > max_id) max_id = id;
    }
    RETURN_IF(!bpe_init(b, (size_t)max_id + 1), TFM_ERR_NOMEM, "%s: out of memory for %d ids", path, (int)max_id + 1);
    for (const cJSON *it = vocab->child; it; it = it->next) {
        const int32_t id = (int32_t)it->valuedouble;
        RETURN_IF(b->tok[id], TFM_ERR_FORMAT, "%s: %s: id %d is given to '%s' and '%s'", path, where, (int)id,
                  b->tok[id], it->string);
        RETURN_IF(!bpe_set_token(b, id, it->string, strlen(it->string)), TFM_ERR_NOMEM, "%s: out of memory", path);
    }
    int32_t da = -1, db = -1;
    const int r = bpe_index(b, &da, &db);
    RETURN_IF(r == 0, TFM_ERR_NOMEM, "%s: out of memory", path);
    RETURN_IF(r < 0, TFM_ERR_FORMAT, "%s: %s: token '%s' has two ids, %d and %d", path, where, b->tok[da], (int)da,
              (int)db);
    return TFM_OK;
}

static tfm_status load_json_file(const char *path, cJSON **root) {
    char *buf;
    size_t len;
    TRY(bpe_read_file(path, &buf, &len));
    tfm_status st = bpe_parse_json(path, buf, len, root);
    free(buf);
    if (st == TFM_OK && !cJSON_IsObject(*root)) {
        cJSON_Delete(*root);
        *root = NULL;
        st = tfm_set_error(TFM_ERR_FORMAT, "%s: not a JSON object", path);
    }
    return st;
}

/* merges.txt: "#version..." first lines skipped, blank lines skipped, every other line "a b". */
static tfm_status load_merges_txt(const char *path, struct tfm_bpe *b) {
    tfm_line_reader *r = NULL;
    TRY(tfm_line_reader_open(path, 0, &r));
    tfm_status st = TFM_OK;
    size_t n_lines = 0;
    st = tfm_line_reader_count_rest(r, &n_lines);
    tfm_line_reader_free(r);
    r = NULL;
    if (st == TFM_OK) st = tfm_line_reader_open(path, 0, &r);
    if (st == TFM_OK && !bpe_merges_reserve(b, n_lines))
        st = tfm_set_error(TFM_ERR_NOMEM, "%s: out of memory for %zu merges", path, n_lines);
    uint32_t rank = 0;
    while (st == TFM_OK) {
        const char *line;
        size_t n;
        st = tfm_line_reader_next(r, &line, &n);
        if (st != TFM_OK || !line) break;
        const size_t no = tfm_line_reader_line_number(r);
        if (n == 0 || (rank == 0 && n >= 8 && memcmp(line, "#version", 8) == 0)) continue;
        const char *sp = memchr(line, ' ', n);
        char where[64 + 1024];
        snprintf(where, sizeof where, "%s:%zu", path, no);
        if (!sp || sp == line || sp + 1 == line + n || memchr(sp + 1, ' ', (size_t)(line + n - sp - 1))) {
            st = tfm_set_error(TFM_ERR_FORMAT, "%s: a merge is two tokens separated by one space, got '%.*s'", where,
                               (int)(n > 80 ? 80 : n), line);
            break;
        }
        st = bpe_merge_strings(b, where, line, (size_t)(sp - line), sp + 1, (size_t)(line + n - sp - 1), rank++);
    }
    tfm_line_reader_free(r);
    if (st == TFM_OK && rank == 0) st = tfm_set_error(TFM_ERR_FORMAT, "%s: no merges", path);
    return st;
}

tfm_status tfm_bpe_load_files(const char *vocab_json, const char *merges_txt, tfm_bpe **out) {
    RETURN_IF(!out, TFM_ERR_INVALID_ARG, "tfm_bpe_load_files: NULL output");
    *out = NULL;
    RETURN_IF(!vocab_json || !merges_txt, TFM_ERR_INVALID_ARG, "tfm_bpe_load_files: NULL path");
    struct tfm_bpe *b = calloc(1, sizeof *b);
    RETURN_IF(!b, TFM_ERR_NOMEM, "out of memory");
    cJSON *root = NULL;
    tfm_status st = load_json_file(vocab_json, &root);
    if (st == TFM_OK) st = bpe_load_vocab(vocab_json, "vocabulary", root, b);
    cJSON_Delete(root);
    if (st == TFM_OK) st = load_merges_txt(merges_txt, b);
    if (st == TFM_OK) { /* GPT-2's settings */
        b->steps[0] = BPE_STEP_GPT2;
        b->n_steps = 1;
        const int32_t eot = bpe_lookup(b, "<|endoftext|>", 13);
        if (eot >= 0) {
            b->added = malloc(sizeof *b->added);
            if (!b->added) st = tfm_set_error(TFM_ERR_NOMEM, "out of memory");
            else b->added[b->n_added++] = (bpe_added){eot, 1, 0, NULL, 0};
        }
    }
    if (st != TFM_OK) {
        bpe_free(b);
        return st;
    }
    *out = b;
    return TFM_OK;
}

tfm_status tfm_bpe_load(const char *path, tfm_bpe **out) {
    RETURN_IF(!out, TFM_ERR_INVALID_ARG, "tfm_bpe_load: NULL output");
    *out = NULL;
    RETURN_IF(!path, TFM_ERR_INVALID_ARG, "tfm_bpe_load: NULL path");
    struct tfm_bpe *b = calloc(1, sizeof *b);
    RETURN_IF(!b, TFM_ERR_NOMEM, "out of memory");
    cJSON *root = NULL;
    tfm_status st = load_json_file(path, &root);
    if (st == TFM_OK) st = bpe_load_tokenizer_json(path, root, b);
    cJSON_Delete(root);
    if (st != TFM_OK) {
        bpe_free(b);
        return st;
    }
    *out = b;
    return TFM_OK;
}
