/* Loading a WordPiece tokenizer (include/tfm/wordpiece.h): a BERT vocab.txt, or the parts of a
 * Hugging Face tokenizer.json (the `tokenizers` serialisation, format version "1.0") that BERT's
 * WordPiece uses. The file is read line by line with the project's line reader (so NUL bytes and
 * lines are reported with their numbers); tokenizer.json is parsed with cJSON. */
#include "core_internal.h"
#include "tfm/fileio.h"
#include "utf8.h"
#include "wordpiece_internal.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

/* ---- the file as lines --------------------------------------------------------------------- */

typedef struct {
    char *buf;       /* every line followed by '\n' */
    size_t len, cap;
    size_t *line_off; /* [n_lines] */
    size_t n_lines, cap_lines;
} lines_t;

static void lines_free(lines_t *t) {
    free(t->buf);
    free(t->line_off);
}

static tfm_status read_lines(const char *path, lines_t *t) {
    tfm_line_reader *r = NULL;
    TRY(tfm_line_reader_open(path, 0, &r));
    tfm_status st = TFM_OK;
    for (;;) {
        const char *line;
        size_t n;
        st = tfm_line_reader_next(r, &line, &n);
        if (st != TFM_OK || !line) break;
        if (t->len + n + 2 > t->cap) {
            size_t cap = t->cap ? t->cap : 1 << 16;
            while (cap < t->len + n + 2) cap *= 2;
            char *p = realloc(t->buf, cap);
            if (!p) {
                st = tfm_set_error(TFM_ERR_NOMEM, "%s: out of memory", path);
                break;
            }
            t->buf = p;
            t->cap = cap;
        }
        if (t->n_lines == t->cap_lines) {
            size_t cap = t->cap_lines ? t->cap_lines * 2 : 4096;
            size_t *p = realloc(t->line_off, cap * sizeof *p);
            if (!p) {
                st = tfm_set_error(TFM_ERR_NOMEM, "%s: out of memory", path);
                break;
            }
            t->line_off = p;
            t->cap_lines = cap;
        }
        t->line_off[t->n_lines++] = t->len;
        memcpy(t->buf + t->len, line, n);
        t->len += n;
        t->buf[t->len++] = '\n';
    }
    tfm_line_reader_free(r);
    if (st == TFM_OK && !t->buf) st = tfm_set_error(TFM_ERR_FORMAT, "%s: empty file, not a vocabulary", path);
    if (st == TFM_OK) t->buf[t->len] = '\0'; /* room was kept: cJSON may read one past */
    return st;
}

/* ---- the tokenizer being built --------------------------------------------------------------- */

static tfm_status alloc_tables(const char *path, struct tfm_wordpiece *wp, size_t V) {
    wp->V = V;
    wp->off = malloc(V * sizeof *wp->off);
    wp->len = malloc(V * sizeof *wp->len);
    wp->sorted = malloc(V * sizeof *wp->sorted);
    RETURN_IF(!wp->off || !wp->len || !wp->sorted, TFM_ERR_NOMEM, "%s: out of memory for %zu tokens", path, V);
    return TFM_OK;
}

static tfm_status build_index(const char *path, struct tfm_wordpiece *wp, const lines_t *vocab_lines) {
    int32_t a = -1, b = -1;
    int r = wp_index_build(wp, &a, &b);
    RETURN_IF(r < 0, TFM_ERR_NOMEM, "%s: out of memory indexing %zu tokens", path, wp->V);
    if (r == 0 && vocab_lines)
        return tfm_set_error(TFM_ERR_FORMAT, "%s:%d: token '%s' already on line %d", path, b + 1,
                             wp->blob + wp->off[b], a + 1);
    RETURN_IF(r == 0, TFM_ERR_FORMAT, "%s: model.vocab: token '%s' has two ids, %d and %d", path,
              wp->blob + wp->off[b], a, b);
    return TFM_OK;
}

static tfm_status add_special(const char *path, struct tfm_wordpiece *wp, int32_t id) {
    for (size_t k = 0; k < wp->n_special; k++)
        if (wp->special[k] == id) return TFM_OK;
    int32_t *p = realloc(wp->special, (wp->n_special + 1) * sizeof *p);
    RETURN_IF(!p, TFM_ERR_NOMEM, "%s: out of memory", path);
    wp->special = p;
    wp->special[wp->n_special++] = id;
    return TFM_OK;
}

static void set_defaults(struct tfm_wordpiece *wp) {
    wp->s = (tfm_wordpiece_settings){.clean_text = 1, .handle_chinese_chars = 1, .strip_accents = 1,
                                     .lowercase = 1, .max_input_chars_per_word = 100, .max_length = 512,
                                     .cls_id = -1, .sep_id = -1, .unk_id = -1, .pad_id = -1};
    wp->prefix_id = wp->suffix_id = -1;
    memcpy(wp->prefix, "##", 3);
    wp->prefix_len = 2;
}

/* ---- vocab.txt ------------------------------------------------------------------------------ */

static tfm_status load_vocab_txt(const char *path, lines_t *t, struct tfm_wordpiece *wp) {
    TRY(alloc_tables(path, wp, t->n_lines));
    for (size_t i = 0; i < t->n_lines; i++) {
        size_t end = i + 1 < t->n_lines ? t->line_off[i + 1] : t->len;
        size_t n = end - 1 - t->line_off[i];
        const char *s = t->buf + t->line_off[i];
        RETURN_IF(n == 0, TFM_ERR_FORMAT, "%s:%zu: empty token", path, i + 1);
        size_t bad = utf8_first_invalid(s, n);
        RETURN_IF(bad < n, TFM_ERR_FORMAT, "%s:%zu: invalid UTF-8 at byte offset %zu of the token", path, i + 1, bad);
        RETURN_IF(n > UINT32_MAX, TFM_ERR_FORMAT, "%s:%zu: token of %zu bytes", path, i + 1, n);
        wp->off[i] = t->line_off[i];
        wp->len[i] = (uint32_t)n;
        t->buf[end - 1] = '\0';
    }
    wp->blob = t->buf; /* the lines, each now NUL-terminated, are the tokens */
    t->buf = NULL;
    TRY(build_index(path, wp, t));
    static const char *const specials[] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
    for (size_t k = 0; k < sizeof specials / sizeof *specials; k++) {
        int32_t id = wp_lookup(wp, specials[k], strlen(specials[k]));
        if (id >= 0) TRY(add_special(path, wp, id));
    }
    wp->s.unk_id = wp_lookup(wp, "[UNK]", 5);
    wp->s.pad_id = wp_lookup(wp, "[PAD]", 5);
    wp->s.cls_id = wp->prefix_id = wp_lookup(wp, "[CLS]", 5);
    wp->s.sep_id = wp->suffix_id = wp_lookup(wp, "[SEP]", 5);
    RETURN_IF(wp->s.unk_id < 0 || wp->prefix_id < 0 || wp->suffix_id < 0, TFM_ERR_FORMAT,
              "%s: a BERT vocabulary needs the tokens [UNK], [CLS] and [SEP]; this one lacks %s", path,
              wp->s.unk_id < 0 ? "[UNK]" : wp->prefix_id < 0 ? "[CLS]" : "[SEP]");
    return TFM_OK;
}

/* ---- tokenizer.json ----------------------------------------------------------------------- */

static const cJSON *get(const cJSON *obj, const char *key) { return cJSON_GetObjectItemCaseSensitive(obj, key); }

/* A boolean field: absent or null keeps *out. */
static tfm_status get_bool(const char *path, const cJSON *obj, const char *where, const char *key, int *out) {
    const cJSON *j = get(obj, key);
    if (!j || cJSON_IsNull(j)) return TFM_OK;
    RETURN_IF(!cJSON_IsBool(j), TFM_ERR_FORMAT, "%s: %s.%s must be true or false", path, where, key);
    *out = cJSON_IsTrue(j);
    return TFM_OK;
}

/* A JSON number that is a non-negative integer below 2^53 (exact in a double). */
static int json_size(const cJSON *j, size_t *out) {
    if (!cJSON_IsNumber(j) || !(j->valuedouble >= 0 && j->valuedouble < 9007199254740992.0) ||
        j->valuedouble != (double)(uint64_t)j->valuedouble)
        return 0;
    *out = (size_t)j->valuedouble;
    return 1;
}

/* A non-negative integer field: absent or null keeps *out. */
static tfm_status get_size(const char *path, const cJSON *obj, const char *where, const char *key, size_t *out) {
    const cJSON *j = get(obj, key);
    if (!j || cJSON_IsNull(j)) return TFM_OK;
    RETURN_IF(!json_size(j, out), TFM_ERR_FORMAT, "%s: %s.%s must be a non-negative integer", path, where, key);
    return TFM_OK;
}

static const char *type_of(const cJSON *obj) {
    const cJSON *t = get(obj, "type");
    return cJSON_IsString(t) ? t->valuestring : "(no type)";
}

static tfm_status load_model(const char *path, const cJSON *model, struct tfm_wordpiece *wp) {
    RETURN_IF(!cJSON_IsObject(model), TFM_ERR_FORMAT, "%s: no \"model\" object", path);
    RETURN_IF(strcmp(type_of(model), "WordPiece") != 0, TFM_ERR_UNSUPPORTED,
              "%s: model.type is %s; only WordPiece (BERT) tokenizers are supported here", path, type_of(model));
    const cJSON *vocab = get(model, "vocab");
    RETURN_IF(!cJSON_IsObject(vocab) || !vocab->child, TFM_ERR_FORMAT, "%s: model.vocab is not a non-empty object",
              path);
    size_t V = 0, bytes = 0;
    for (const cJSON *it = vocab->child; it; it = it->next) {
        V++;
        bytes += strlen(it->string) + 1;
    }
    RETURN_IF(V > INT32_MAX, TFM_ERR_FORMAT, "%s: model.vocab has %zu tokens", path, V);
    TRY(alloc_tables(path, wp, V));
    wp->blob = malloc(bytes);
    RETURN_IF(!wp->blob, TFM_ERR_NOMEM, "%s: out of memory for the vocabulary", path);
    for (size_t i = 0; i < V; i++) wp->len[i] = UINT32_MAX; /* not seen yet */
    size_t at = 0;
    for (const cJSON *it = vocab->child; it; it = it->next) {
        size_t id = 0;
        RETURN_IF(!json_size(it, &id) || id >= V, TFM_ERR_FORMAT,
                  "%s: model.vocab: token '%s' has id %g; the %zu ids must be 0..%zu, each once", path, it->string,
                  cJSON_IsNumber(it) ? it->valuedouble : -1.0, V, V - 1);
        RETURN_IF(wp->len[id] != UINT32_MAX, TFM_ERR_FORMAT, "%s: model.vocab: id %zu is given to '%s' and '%s'",
                  path, id, wp->blob + wp->off[id], it->string);
        size_t n = strlen(it->string);
        RETURN_IF(n == 0, TFM_ERR_FORMAT, "%s: model.vocab: empty token (id %zu)", path, id);
        wp->off[id] = at;
        wp->len[id] = (uint32_t)n;
        memcpy(wp->blob + at, it->string, n + 1);
        at += n + 1;
    }
    TRY(build_index(path, wp, NULL));

    const cJSON *unk = get(model, "unk_token");
    const char *unk_s = cJSON_IsString(unk) ? unk->valuestring : "[UNK]";
    wp->s.unk_id = wp_lookup(wp, unk_s, strlen(unk_s));
    RETURN_IF(wp->s.unk_id < 0, TFM_ERR_FORMAT, "%s: model.unk_token '%s' is not in model.vocab", path, unk_s);
    const cJSON *pre = get(model, "continuing_subword_prefix");
    if (cJSON_IsString(pre)) {
        size_t n = strlen(pre->valuestring);
        RETURN_IF(n > WP_MAX_PREFIX, TFM_ERR_UNSUPPORTED, "%s: model.continuing_subword_prefix longer than %d bytes",
                  path, WP_MAX_PREFIX);
        memcpy(wp->prefix, pre->valuestring, n + 1);
        wp->prefix_len = n;
    }
    TRY(get_size(path, model, "model", "max_input_chars_per_word", &wp->s.max_input_chars_per_word));
    return TFM_OK;
}

static tfm_status load_normalizer(const char *path, const cJSON *nz, tfm_wordpiece_settings *s) {
    if (!nz || cJSON_IsNull(nz)) {
        s->clean_text = s->handle_chinese_chars = s->strip_accents = s->lowercase = 0;
        return TFM_OK;
    }
    RETURN_IF(strcmp(type_of(nz), "BertNormalizer") != 0, TFM_ERR_UNSUPPORTED,
              "%s: normalizer.type is %s; only BertNormalizer or null is supported", path, type_of(nz));
    TRY(get_bool(path, nz, "normalizer", "clean_text", &s->clean_text));
    TRY(get_bool(path, nz, "normalizer", "handle_chinese_chars", &s->handle_chinese_chars));
    TRY(get_bool(path, nz, "normalizer", "lowercase", &s->lowercase));
    s->strip_accents = s->lowercase; /* strip_accents null: as lowercase (BERT's rule) */
    return get_bool(path, nz, "normalizer", "strip_accents", &s->strip_accents);
}

/* A special token of the post-processor: its id, checked against the vocabulary. */
static tfm_status special_id(const char *path, const struct tfm_wordpiece *wp, const char *where, const char *tok,
                             double id, int32_t *out) {
    int32_t v = wp_lookup(wp, tok, strlen(tok));
    RETURN_IF(v < 0 || (double)v != id, TFM_ERR_FORMAT, "%s: %s: token '%s' with id %g is not that id of model.vocab",
              path, where, tok, id);
    *out = v;
    return TFM_OK;
}

static tfm_status load_post_processor(const char *path, const cJSON *pp, struct tfm_wordpiece *wp) {
    if (!pp || cJSON_IsNull(pp)) return TFM_OK; /* nothing added */
    const char *type = type_of(pp);
    if (strcmp(type, "BertProcessing") == 0) {
        const cJSON *cls = get(pp, "cls"), *sep = get(pp, "sep");
        RETURN_IF(cJSON_GetArraySize(cls) != 2 || cJSON_GetArraySize(sep) != 2 ||
                      !cJSON_IsString(cls->child) || !cJSON_IsNumber(cls->child->next) ||
                      !cJSON_IsString(sep->child) || !cJSON_IsNumber(sep->child->next),
                  TFM_ERR_FORMAT, "%s: post_processor (BertProcessing): cls and sep must be [token, id]", path);
        TRY(special_id(path, wp, "post_processor.cls", cls->child->valuestring, cls->child->next->valuedouble,
                       &wp->prefix_id));
        return special_id(path, wp, "post_processor.sep", sep->child->valuestring, sep->child->next->valuedouble,
                          &wp->suffix_id);
    }
    RETURN_IF(strcmp(type, "TemplateProcessing") != 0, TFM_ERR_UNSUPPORTED,
              "%s: post_processor.type is %s; only TemplateProcessing, BertProcessing or null is supported", path,
              type);
    /* single must be exactly [SpecialToken X, Sequence A, SpecialToken Y]: BERT's "[CLS] $A [SEP]" */
    const cJSON *single = get(pp, "single"), *map = get(pp, "special_tokens");
    const cJSON *x = cJSON_GetArrayItem(single, 0), *a = cJSON_GetArrayItem(single, 1),
                *y = cJSON_GetArrayItem(single, 2);
    const cJSON *xs = get(x, "SpecialToken"), *as = get(a, "Sequence"), *ys = get(y, "SpecialToken");
    RETURN_IF(cJSON_GetArraySize(single) != 3 || !xs || !as || !ys || !cJSON_IsString(get(xs, "id")) ||
                  !cJSON_IsString(get(ys, "id")),
              TFM_ERR_UNSUPPORTED,
              "%s: post_processor.single must be [CLS] $A [SEP] (one special token, the sequence, one special "
              "token)",
              path);
    const char *names[2] = {get(xs, "id")->valuestring, get(ys, "id")->valuestring};
    int32_t *dst[2] = {&wp->prefix_id, &wp->suffix_id};
    for (int k = 0; k < 2; k++) {
        const cJSON *e = get(map, names[k]);
        const cJSON *ids = get(e, "ids"), *toks = get(e, "tokens");
        RETURN_IF(cJSON_GetArraySize(ids) != 1 || !cJSON_IsNumber(ids->child) || cJSON_GetArraySize(toks) != 1 ||
                      !cJSON_IsString(toks->child),
                  TFM_ERR_UNSUPPORTED, "%s: post_processor.special_tokens['%s'] must give one token and one id", path,
                  names[k]);
        TRY(special_id(path, wp, "post_processor.special_tokens", toks->child->valuestring, ids->child->valuedouble,
                       dst[k]));
    }
    return TFM_OK;
}

static tfm_status load_added_tokens(const char *path, const cJSON *added, struct tfm_wordpiece *wp) {
    if (!added || cJSON_IsNull(added)) return TFM_OK;
    RETURN_IF(!cJSON_IsArray(added), TFM_ERR_FORMAT, "%s: added_tokens is not an array", path);
    int k = 0;
    for (const cJSON *t = added->child; t; t = t->next, k++) {
        const cJSON *content = get(t, "content"), *id = get(t, "id");
        RETURN_IF(!cJSON_IsString(content) || !cJSON_IsNumber(id), TFM_ERR_FORMAT,
                  "%s: added_tokens[%d] needs a string content and a numeric id", path, k);
        int flags[4] = {0, 0, 0, 0};
        static const char *const names[4] = {"normalized", "lstrip", "rstrip", "single_word"};
        for (int f = 0; f < 4; f++) TRY(get_bool(path, t, "added_tokens[]", names[f], &flags[f]));
        for (int f = 0; f < 4; f++)
            RETURN_IF(flags[f], TFM_ERR_UNSUPPORTED, "%s: added_tokens[%d] ('%s'): %s = true is not supported", path,
                      k, content->valuestring, names[f]);
        int32_t v = -1;
        TRY(special_id(path, wp, "added_tokens", content->valuestring, id->valuedouble, &v));
        TRY(add_special(path, wp, v));
    }
    return TFM_OK;
}

static tfm_status load_truncation(const char *path, const cJSON *tr, tfm_wordpiece_settings *s) {
    if (!tr || cJSON_IsNull(tr)) return TFM_OK; /* 512 */
    const cJSON *dir = get(tr, "direction");
    RETURN_IF(dir && !(cJSON_IsString(dir) && strcmp(dir->valuestring, "Right") == 0), TFM_ERR_UNSUPPORTED,
              "%s: truncation.direction must be Right (keep the first tokens)", path);
    TRY(get_size(path, tr, "truncation", "max_length", &s->max_length));
    RETURN_IF(s->max_length < 2, TFM_ERR_FORMAT, "%s: truncation.max_length %zu leaves no room for [CLS] and [SEP]",
              path, s->max_length);
    return TFM_OK;
}

static tfm_status load_tokenizer_json(const char *path, const lines_t *t, struct tfm_wordpiece *wp) {
    cJSON *root = cJSON_ParseWithLength(t->buf, t->len);
    if (!root) {
        const char *ep = cJSON_GetErrorPtr();
        size_t at = ep && ep >= t->buf && ep <= t->buf + t->len ? (size_t)(ep - t->buf) : 0, line = 1, col = 1;
        for (size_t i = 0; i < at; i++, col++)
            if (t->buf[i] == '\n') line++, col = 0;
        return tfm_set_error(TFM_ERR_FORMAT, "%s:%zu:%zu: not valid JSON", path, line, col);
    }
    tfm_status st = TFM_OK;
    if (!cJSON_IsObject(root)) st = tfm_set_error(TFM_ERR_FORMAT, "%s: not a JSON object", path);
    if (st == TFM_OK) st = load_model(path, get(root, "model"), wp);
    if (st == TFM_OK) st = load_normalizer(path, get(root, "normalizer"), &wp->s);
    if (st == TFM_OK) {
        const cJSON *pt = get(root, "pre_tokenizer");
        if (strcmp(type_of(pt), "BertPreTokenizer") != 0)
            st = tfm_set_error(TFM_ERR_UNSUPPORTED, "%s: pre_tokenizer.type is %s; only BertPreTokenizer is supported",
                               path, pt && !cJSON_IsNull(pt) ? type_of(pt) : "null");
    }
    if (st == TFM_OK) st = load_post_processor(path, get(root, "post_processor"), wp);
    if (st == TFM_OK) st = load_added_tokens(path, get(root, "added_tokens"), wp);
    if (st == TFM_OK) st = load_truncation(path, get(root, "truncation"), &wp->s);
    cJSON_Delete(root);
    if (st != TFM_OK) return st;
    wp->s.cls_id = wp->prefix_id >= 0 ? wp->prefix_id : wp_lookup(wp, "[CLS]", 5);
    wp->s.sep_id = wp->suffix_id >= 0 ? wp->suffix_id : wp_lookup(wp, "[SEP]", 5);
    wp->s.pad_id = wp_lookup(wp, "[PAD]", 5);
    return TFM_OK;
}

tfm_status tfm_wordpiece_load(const char *path, tfm_wordpiece **out) {
    RETURN_IF(!out, TFM_ERR_INVALID_ARG, "tfm_wordpiece_load: NULL output");
    *out = NULL;
    RETURN_IF(!path, TFM_ERR_INVALID_ARG, "tfm_wordpiece_load: NULL path");
    lines_t t = {0};
    struct tfm_wordpiece *wp = calloc(1, sizeof *wp);
    RETURN_IF(!wp, TFM_ERR_NOMEM, "%s: out of memory", path);
    set_defaults(wp);
    tfm_status st = read_lines(path, &t);
    if (st == TFM_OK) {
        size_t i = 0;
        while (i < t.len && (t.buf[i] == ' ' || t.buf[i] == '\t' || t.buf[i] == '\n')) i++;
        st = i < t.len && t.buf[i] == '{' ? load_tokenizer_json(path, &t, wp) : load_vocab_txt(path, &t, wp);
    }
    lines_free(&t);
    if (st != TFM_OK) {
        wp_free(wp);
        return st;
    }
    *out = wp;
    return TFM_OK;
}
