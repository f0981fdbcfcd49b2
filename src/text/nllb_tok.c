/* NLLB-200's tokenizer (nllb_tok.h): SentencePiece ids shifted into fairseq's dictionary, the
 * language codes, the source rule, decoding as transformers' NllbTokenizer. */
#include "bpe_internal.h"
#include "core_internal.h"
#include "nllb_tok_internal.h"
#include "tok_kind.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct nllb_tok {
    tfm_tokenizer *sp;
    int n_sp;         /* SentencePiece pieces */
    int size;         /* all tokens: 4 specials' ids overlap pieces 0..2, so n_sp + 1 + langs + mask */
    size_t n_langs;
    char **langs;     /* code k has id lang_id[k] */
    int32_t *lang_id;
    int32_t mask_id;
    int32_t src_lang; /* -1: not set */
    int32_t tgt_lang; /* -1: not set */
    int legacy;
};

static const char *const k_specials[4] = {"<s>", "<pad>", "</s>", "<unk>"};

static int file_exists(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

static tfm_status add_lang(nllb_tok *t, const char *code, int32_t id) {
    char **l = realloc(t->langs, (t->n_langs + 1) * sizeof *l);
    if (l) t->langs = l;
    int32_t *i = realloc(t->lang_id, (t->n_langs + 1) * sizeof *i);
    if (i) t->lang_id = i;
    const size_t n = strlen(code) + 1;
    char *c = l && i ? malloc(n) : NULL;
    RETURN_IF(!c, TFM_ERR_NOMEM, "NLLB tokenizer: out of memory");
    memcpy(c, code, n);
    t->langs[t->n_langs] = c;
    t->lang_id[t->n_langs++] = id;
    return TFM_OK;
}

/* tokenizer_config.json's added_tokens_decoder: {"id": {"content": ...}, ...}. The specials must sit
 * at 0..3; every other entry but <mask> is a language code at the id written. */
static tfm_status langs_from_decoder(nllb_tok *t, const char *path, const cJSON *dec) {
    RETURN_IF(!cJSON_IsObject(dec), TFM_ERR_FORMAT, "%s: added_tokens_decoder is not an object", path);
    for (const cJSON *it = dec->child; it; it = it->next) {
        char *end;
        errno = 0;
        const long id = strtol(it->string, &end, 10);
        const cJSON *content = cJSON_GetObjectItemCaseSensitive(it, "content");
        RETURN_IF(*it->string == '\0' || *end || errno || id < 0 || id > 16777216 || !cJSON_IsString(content),
                  TFM_ERR_FORMAT, "%s: added_tokens_decoder entry '%.40s' is not an id with a string 'content'",
                  path, it->string);
        const char *s = content->valuestring;
        if (id < 4) {
            RETURN_IF(strcmp(s, k_specials[id]) != 0, TFM_ERR_FORMAT,
                      "%s: added_tokens_decoder puts '%.40s' at id %ld where NLLB has %s", path, s, id,
                      k_specials[id]);
            continue;
        }
        RETURN_IF(id <= t->n_sp, TFM_ERR_FORMAT,
                  "%s: added token '%.40s' at id %ld falls among the %d SentencePiece pieces of "
                  "sentencepiece.bpe.model (language codes start at %d)",
                  path, s, id, t->n_sp, t->n_sp + 1);
        if (strcmp(s, "<mask>") == 0) t->mask_id = (int32_t)id;
        else TRY(add_lang(t, s, (int32_t)id));
    }
    return TFM_OK;
}

/* additional_special_tokens: a list of strings or {"content": ...} objects; NULL/absent: none. */
static tfm_status langs_from_list(nllb_tok *t, const char *path, const cJSON *list) {
    RETURN_IF(!cJSON_IsArray(list), TFM_ERR_FORMAT, "%s: additional_special_tokens is not a list", path);
    int32_t id = t->n_sp + 1;
    for (const cJSON *it = list->child; it; it = it->next) {
        const cJSON *c = cJSON_IsObject(it) ? cJSON_GetObjectItemCaseSensitive(it, "content") : it;
        RETURN_IF(!cJSON_IsString(c), TFM_ERR_FORMAT, "%s: additional_special_tokens holds a non-string", path);
        TRY(add_lang(t, c->valuestring, id++));
    }
    return TFM_OK;
}

/* The language codes: from tokenizer_config.json's added_tokens_decoder, else the
 * additional_special_tokens of tokenizer_config.json or special_tokens_map.json, else NLLB-200's. */
static tfm_status load_langs(nllb_tok *t, const nllb_files *files) {
    const char *const name[2] = {files->config_name, files->map_name};
    const char *const text[2] = {files->config, files->map};
    const size_t len[2] = {files->config_len, files->map_len};
    for (int f = 0; f < 2 && t->n_langs == 0; f++) {
        if (!text[f]) continue;
        cJSON *root = NULL;
        TRY(bpe_parse_json(name[f], text[f], len[f], &root));
        tfm_status st = TFM_OK;
        const cJSON *dec = cJSON_GetObjectItemCaseSensitive(root, "added_tokens_decoder");
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "additional_special_tokens");
        if (!cJSON_IsObject(root)) st = tfm_set_error(TFM_ERR_FORMAT, "%s: not a JSON object", name[f]);
        else if (f == 0 && dec && !cJSON_IsNull(dec)) st = langs_from_decoder(t, name[f], dec);
        if (st == TFM_OK && t->n_langs == 0 && list && !cJSON_IsNull(list)) st = langs_from_list(t, name[f], list);
        cJSON_Delete(root);
        TRY(st);
    }
    if (t->n_langs == 0) /* NllbTokenizer's default additional_special_tokens */
        for (size_t k = 0; k < NLLB_N_DEFAULT_LANGS; k++)
            TRY(add_lang(t, nllb_default_langs[k], t->n_sp + 1 + (int32_t)k));
    int32_t top = t->n_sp;
    for (size_t k = 0; k < t->n_langs; k++)
        if (t->lang_id[k] > top) top = t->lang_id[k];
    if (t->mask_id < 0) t->mask_id = top + 1;
    t->size = (t->mask_id > top ? t->mask_id : top) + 1;
    return TFM_OK;
}

tfm_status nllb_tok_from_files(const nllb_files *files, nllb_tok **out) {
    *out = NULL;
    nllb_tok *t = calloc(1, sizeof *t);
    RETURN_IF(!t, TFM_ERR_NOMEM, "NLLB tokenizer: out of memory");
    t->mask_id = -1;
    t->src_lang = -1;
    t->tgt_lang = -1;
    tfm_status st = tfm_tokenizer_load_bytes(files->spm, files->spm_len, &t->sp);
    if (st != TFM_OK) st = tfm_error_prefix(st, "%s: ", files->spm_name);
    if (st == TFM_OK) {
        t->n_sp = tfm_tokenizer_vocab_size(t->sp);
        st = load_langs(t, files);
    }
    if (st != TFM_OK) {
        nllb_tok_free(t);
        return st;
    }
    t->src_lang = nllb_tok_lang_id(t, "eng_Latn"); /* transformers' default src_lang */
    *out = t;
    return TFM_OK;
}

tfm_status nllb_files_read(const char *dir, nllb_files *files) {
    memset(files, 0, sizeof *files);
    snprintf(files->spm_name, sizeof files->spm_name, "%s/sentencepiece.bpe.model", dir);
    snprintf(files->config_name, sizeof files->config_name, "%s/tokenizer_config.json", dir);
    snprintf(files->map_name, sizeof files->map_name, "%s/special_tokens_map.json", dir);
    RETURN_IF(!file_exists(files->spm_name), TFM_ERR_IO,
              "%s: missing: an NLLB / M2M100 folder needs its SentencePiece model sentencepiece.bpe.model "
              "(docs/NLLB.md lists the files)",
              files->spm_name);
    char *spm = NULL;
    tfm_status st = bpe_read_file(files->spm_name, &spm, &files->spm_len);
    files->spm = spm;
    if (st == TFM_OK && file_exists(files->config_name))
        st = bpe_read_file(files->config_name, &files->config, &files->config_len);
    if (st == TFM_OK && file_exists(files->map_name)) st = bpe_read_file(files->map_name, &files->map, &files->map_len);
    if (st != TFM_OK) nllb_files_free(files);
    return st;
}

void nllb_files_free(nllb_files *files) {
    free(files->spm);
    free(files->config);
    free(files->map);
    files->spm = files->config = files->map = NULL;
}

tfm_status nllb_tok_load(const char *dir, nllb_tok **out) {
    *out = NULL;
    nllb_files files;
    TRY(nllb_files_read(dir, &files));
    tfm_status st = nllb_tok_from_files(&files, out);
    nllb_files_free(&files);
    return st;
}

void nllb_tok_free(nllb_tok *t) {
    if (!t) return;
    tfm_tokenizer_free(t->sp);
    for (size_t k = 0; k < t->n_langs; k++) free(t->langs[k]);
    free(t->langs);
    free(t->lang_id);
    free(t);
}

int nllb_tok_size(const nllb_tok *t) { return t->size; }
size_t nllb_tok_n_langs(const nllb_tok *t) { return t->n_langs; }
const char *nllb_tok_lang(const nllb_tok *t, size_t k) { return k < t->n_langs ? t->langs[k] : NULL; }
const tfm_tokenizer *nllb_tok_spm(const nllb_tok *t) { return t->sp; }

int32_t nllb_tok_lang_id(const nllb_tok *t, const char *code) {
    for (size_t k = 0; code && k < t->n_langs; k++)
        if (strcmp(t->langs[k], code) == 0) return t->lang_id[k];
    return -1;
}

tfm_status nllb_tok_unknown_lang(const nllb_tok *t, const char *what, const char *code) {
    char some[200] = "";
    size_t at = 0;
    for (size_t k = 0; k < t->n_langs && k < 4 && at < sizeof some; k++)
        at += (size_t)snprintf(some + at, sizeof some - at, "%s%s", k ? ", " : "", t->langs[k]);
    return tfm_set_error(TFM_ERR_INVALID_ARG,
                         "%s '%.60s' is not a language code of this model (it has %zu: %s%s; "
                         "`tfm translate --model DIR --list-langs` lists them all)",
                         what, code ? code : "(none)", t->n_langs, some, t->n_langs > 4 ? ", ..." : "");
}

tfm_status nllb_tok_set_langs(nllb_tok *t, const char *src, const char *tgt, int legacy) {
    const int32_t s = src ? nllb_tok_lang_id(t, src) : t->src_lang, g = tgt ? nllb_tok_lang_id(t, tgt) : -1;
    if (src && s < 0) return nllb_tok_unknown_lang(t, "--src-lang", src);
    if (tgt && g < 0) return nllb_tok_unknown_lang(t, "--tgt-lang", tgt);
    t->src_lang = s;
    t->tgt_lang = g;
    t->legacy = legacy != 0;
    return TFM_OK;
}

int32_t nllb_tok_tgt_lang(const nllb_tok *t) { return t->tgt_lang; }
int32_t nllb_tok_mask_id(const nllb_tok *t) { return t->mask_id; }

const char *nllb_tok_lang_of(const nllb_tok *t, int32_t id) {
    for (size_t k = 0; k < t->n_langs; k++)
        if (t->lang_id[k] == id) return t->langs[k];
    return NULL;
}

tfm_status nllb_tok_encode(const nllb_tok *t, const char *text, size_t len, int32_t **ids, size_t *n_ids) {
    *ids = NULL;
    *n_ids = 0;
    RETURN_IF(t->src_lang < 0, TFM_ERR_INVALID_ARG, "NLLB tokenizer: no source language set (--src-lang)");
    int32_t *sp = NULL;
    size_t n = 0;
    TRY(tfm_tokenizer_encode(t->sp, text, len, &sp, &n));
    int32_t *o = malloc((n + 2) * sizeof *o);
    if (!o) {
        free(sp);
        return tfm_set_error(TFM_ERR_NOMEM, "NLLB tokenizer: out of memory for %zu ids", n + 2);
    }
    size_t k = 0;
    if (!t->legacy) o[k++] = t->src_lang;
    /* NllbTokenizer._convert_token_to_id: SentencePiece id 0 (its <unk>) → <unk>, others + 1 */
    for (size_t i = 0; i < n; i++) o[k++] = sp[i] ? sp[i] + 1 : NLLB_UNK_ID;
    o[k++] = NLLB_EOS_ID;
    if (t->legacy) o[k++] = t->src_lang;
    free(sp);
    *ids = o;
    *n_ids = k;
    return TFM_OK;
}

tfm_status nllb_tok_decode(const nllb_tok *t, const int32_t *ids, size_t n_ids, char **text, size_t *len) {
    *text = NULL;
    *len = 0;
    size_t cap = 1;
    for (size_t i = 0; i < n_ids; i++) {
        RETURN_IF(ids[i] < 0, TFM_ERR_RANGE, "NLLB decode: id %d at position %zu is negative", (int)ids[i], i + 1);
        if (ids[i] > NLLB_UNK_ID && ids[i] <= t->n_sp) cap += strlen(tfm_tokenizer_id_to_piece(t->sp, ids[i] - 1));
    }
    char *s = malloc(cap);
    RETURN_IF(!s, TFM_ERR_NOMEM, "NLLB decode: out of memory");
    size_t n = 0;
    for (size_t i = 0; i < n_ids; i++) {
        /* specials, language codes, <mask> and rows past the tokenizer are not text */
        if (ids[i] <= NLLB_UNK_ID || ids[i] > t->n_sp) continue;
        const char *p = tfm_tokenizer_id_to_piece(t->sp, ids[i] - 1);
        const size_t l = strlen(p);
        memcpy(s + n, p, l);
        n += l;
    }
    n = hf_spm_text(s, n); /* NllbTokenizer.convert_tokens_to_string: "▁" → " ", str.strip() */
    *text = s;
    *len = n;
    return TFM_OK;
}
