/* tokenizer.json for byte-level BPE (include/tfm/bpe.h, tfm_bpe_load): the model (vocab, merges,
 * options), normalizer, pre_tokenizer, decoder, post_processor and added_tokens of the
 * `tokenizers` serialisation. Whatever is not byte-level BPE as GPT-2, Llama-3, SmolLM and Qwen2
 * ship it is refused with TFM_ERR_UNSUPPORTED naming the key. */
#include "bpe_internal.h"
#include "core_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

/* The patterns of a Split pre-tokenizer, exactly as tokenizer.json spells them. */
static const char PAT_GPT2[] = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
static const char PAT_LLAMA3[] = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
                                 "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
static const char PAT_QWEN2[] = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
                                "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

static const cJSON *get(const cJSON *obj, const char *key) { return cJSON_GetObjectItemCaseSensitive(obj, key); }

static const char *type_of(const cJSON *obj) {
    const cJSON *t = get(obj, "type");
    return cJSON_IsString(t) ? t->valuestring : obj && !cJSON_IsNull(obj) ? "(no type)" : "null";
}

static int is_true(const cJSON *obj, const char *key) { return cJSON_IsTrue(get(obj, key)); }

/* A string option that must be absent, null or "". */
static tfm_status empty_string(const char *path, const cJSON *obj, const char *key) {
    const cJSON *j = get(obj, key);
    RETURN_IF(j && !cJSON_IsNull(j) && !(cJSON_IsString(j) && !j->valuestring[0]), TFM_ERR_UNSUPPORTED,
              "%s: model.%s is set; byte-level BPE has none", path, key);
    return TFM_OK;
}

static tfm_status load_merges(const char *path, const cJSON *merges, struct tfm_bpe *b) {
    RETURN_IF(!cJSON_IsArray(merges), TFM_ERR_FORMAT, "%s: model.merges is missing or not an array", path);
    const size_t n = (size_t)cJSON_GetArraySize(merges);
    RETURN_IF(!bpe_merges_reserve(b, n), TFM_ERR_NOMEM, "%s: out of memory for %zu merges", path, n);
    uint32_t rank = 0;
    for (const cJSON *m = merges->child; m; m = m->next, rank++) {
        char where[1100];
        snprintf(where, sizeof where, "%s: model.merges[%u]", path, (unsigned)rank);
        const char *l = NULL, *r = NULL;
        size_t nl = 0, nr = 0;
        if (cJSON_IsString(m)) { /* "a b" */
            const char *sp = strchr(m->valuestring, ' ');
            if (sp && !strchr(sp + 1, ' ')) l = m->valuestring, nl = (size_t)(sp - l), r = sp + 1, nr = strlen(r);
        } else if (cJSON_GetArraySize(m) == 2 && cJSON_IsString(m->child) && cJSON_IsString(m->child->next)) {
            l = m->child->valuestring, nl = strlen(l), r = m->child->next->valuestring, nr = strlen(r);
        }
        RETURN_IF(!l || !nl || !nr, TFM_ERR_FORMAT, "%s: a merge is \"a b\" or [\"a\", \"b\"] with two tokens", where);
        TRY(bpe_merge_strings(b, where, l, nl, r, nr, rank));
    }
    return TFM_OK;
}

static tfm_status load_model(const char *path, const cJSON *model, struct tfm_bpe *b) {
    RETURN_IF(!cJSON_IsObject(model), TFM_ERR_FORMAT, "%s: no \"model\" object", path);
    RETURN_IF(strcmp(type_of(model), "BPE") != 0, TFM_ERR_UNSUPPORTED,
              "%s: model.type is %s; only BPE is supported here", path, type_of(model));
    TRY(bpe_load_vocab(path, "model.vocab", get(model, "vocab"), b));
    const cJSON *drop = get(model, "dropout");
    RETURN_IF(drop && !cJSON_IsNull(drop), TFM_ERR_UNSUPPORTED, "%s: model.dropout is set (BPE-dropout is for "
              "training; a tokenizer to encode with has none)", path);
    RETURN_IF(is_true(model, "byte_fallback"), TFM_ERR_UNSUPPORTED,
              "%s: model.byte_fallback is true: a SentencePiece-style BPE, not byte-level", path);
    TRY(empty_string(path, model, "continuing_subword_prefix"));
    TRY(empty_string(path, model, "end_of_word_suffix"));
    b->fuse_unk = is_true(model, "fuse_unk");
    b->ignore_merges = is_true(model, "ignore_merges");
    const cJSON *unk = get(model, "unk_token");
    if (cJSON_IsString(unk)) {
        b->unk_id = bpe_lookup(b, unk->valuestring, strlen(unk->valuestring));
        RETURN_IF(b->unk_id < 0, TFM_ERR_FORMAT, "%s: model.unk_token '%s' is not in model.vocab", path,
                  unk->valuestring);
    }
    return load_merges(path, get(model, "merges"), b);
}

static tfm_status load_normalizer(const char *path, const cJSON *nz, struct tfm_bpe *b) {
    if (!nz || cJSON_IsNull(nz)) return TFM_OK;
    RETURN_IF(strcmp(type_of(nz), "NFC") != 0, TFM_ERR_UNSUPPORTED,
              "%s: normalizer.type is %s; only null or NFC is supported", path, type_of(nz));
    b->nfc = 1;
    return TFM_OK;
}

static tfm_status add_step(const char *path, struct tfm_bpe *b, bpe_step s) {
    RETURN_IF(b->n_steps == BPE_MAX_STEPS, TFM_ERR_UNSUPPORTED, "%s: pre_tokenizer has too many steps", path);
    b->steps[b->n_steps++] = s;
    return TFM_OK;
}

/* One pre-tokenizer of the chain; *byte_level set when it is ByteLevel. */
static tfm_status load_pre_one(const char *path, const cJSON *pt, struct tfm_bpe *b, int *byte_level) {
    const char *type = type_of(pt);
    if (strcmp(type, "ByteLevel") == 0) {
        RETURN_IF(is_true(pt, "add_prefix_space"), TFM_ERR_UNSUPPORTED,
                  "%s: pre_tokenizer ByteLevel: add_prefix_space = true is not supported", path);
        const cJSON *re = get(pt, "use_regex");
        if (!re || cJSON_IsTrue(re)) TRY(add_step(path, b, BPE_STEP_GPT2));
        *byte_level = 1;
        return TFM_OK;
    }
    RETURN_IF(*byte_level, TFM_ERR_UNSUPPORTED, "%s: pre_tokenizer: %s after ByteLevel is not supported", path, type);
    if (strcmp(type, "Digits") == 0) {
        RETURN_IF(!is_true(pt, "individual_digits"), TFM_ERR_UNSUPPORTED,
                  "%s: pre_tokenizer Digits: only individual_digits = true is supported", path);
        return add_step(path, b, BPE_STEP_DIGITS);
    }
    RETURN_IF(strcmp(type, "Split") != 0, TFM_ERR_UNSUPPORTED,
              "%s: pre_tokenizer.type %s is not supported (ByteLevel, Sequence, Split, Digits are)", path, type);
    const cJSON *re = get(get(pt, "pattern"), "Regex"), *beh = get(pt, "behavior");
    RETURN_IF(!cJSON_IsString(re), TFM_ERR_UNSUPPORTED, "%s: pre_tokenizer Split: only a pattern {\"Regex\": ...} is "
              "supported", path);
    RETURN_IF(!cJSON_IsString(beh) || strcmp(beh->valuestring, "Isolated") != 0 || is_true(pt, "invert"),
              TFM_ERR_UNSUPPORTED, "%s: pre_tokenizer Split: only behavior Isolated, invert false is supported", path);
    const char *p = re->valuestring;
    if (strcmp(p, PAT_GPT2) == 0) return add_step(path, b, BPE_STEP_GPT2);
    if (strcmp(p, PAT_LLAMA3) == 0) return add_step(path, b, BPE_STEP_LLAMA3);
    if (strcmp(p, PAT_QWEN2) == 0) return add_step(path, b, BPE_STEP_QWEN2);
    return tfm_set_error(TFM_ERR_UNSUPPORTED, "%s: pre_tokenizer Split: the pattern '%.200s' is none of GPT-2's, "
                         "Llama-3's, Qwen2's", path, p);
}

static tfm_status load_pre_tokenizer(const char *path, const cJSON *pt, struct tfm_bpe *b) {
    int byte_level = 0;
    if (strcmp(type_of(pt), "Sequence") == 0) {
        const cJSON *list = get(pt, "pretokenizers");
        RETURN_IF(!cJSON_IsArray(list), TFM_ERR_FORMAT, "%s: pre_tokenizer.pretokenizers is not an array", path);
        for (const cJSON *p = list->child; p; p = p->next) TRY(load_pre_one(path, p, b, &byte_level));
    } else {
        TRY(load_pre_one(path, pt, b, &byte_level));
    }
    RETURN_IF(!byte_level, TFM_ERR_UNSUPPORTED, "%s: pre_tokenizer has no ByteLevel: not a byte-level BPE", path);
    return TFM_OK;
}

/* A special token of the post-processor's template: its id, checked against the vocabulary. */
static tfm_status template_token(const char *path, const struct tfm_bpe *b, const cJSON *map, const cJSON *item,
                                 int32_t *out) {
    const cJSON *e = get(map, get(get(item, "SpecialToken"), "id")->valuestring);
    const cJSON *ids = get(e, "ids");
    RETURN_IF(cJSON_GetArraySize(ids) != 1 || !cJSON_IsNumber(ids->child), TFM_ERR_UNSUPPORTED,
              "%s: post_processor.special_tokens: each template token must give one id", path);
    const double id = ids->child->valuedouble;
    RETURN_IF(!(id >= 0 && id < (double)b->V) || !b->tok[(size_t)id], TFM_ERR_FORMAT,
              "%s: post_processor.special_tokens: id %g is not in the vocabulary", path, id);
    *out = (int32_t)id;
    return TFM_OK;
}

static int is_special_item(const cJSON *it) { return cJSON_IsString(get(get(it, "SpecialToken"), "id")); }

/* TemplateProcessing: single is [BOS]? $A [EOS]? */
static tfm_status load_template(const char *path, const cJSON *pp, struct tfm_bpe *b) {
    const cJSON *single = get(pp, "single"), *map = get(pp, "special_tokens");
    const int n = cJSON_GetArraySize(single);
    int a = -1;
    for (int i = 0; i < n; i++)
        if (get(cJSON_GetArrayItem(single, i), "Sequence")) a = i;
    int ok = a >= 0 && a <= 1 && n - a - 1 <= 1;
    for (int i = 0; ok && i < n; i++)
        if (i != a && !is_special_item(cJSON_GetArrayItem(single, i))) ok = 0;
    RETURN_IF(!ok, TFM_ERR_UNSUPPORTED, "%s: post_processor.single must be $A with at most one special token before "
              "and one after", path);
    if (a == 1) TRY(template_token(path, b, map, cJSON_GetArrayItem(single, 0), &b->bos_id));
    if (a + 1 < n) TRY(template_token(path, b, map, cJSON_GetArrayItem(single, a + 1), &b->eos_id));
    return TFM_OK;
}

static tfm_status load_post_processor(const char *path, const cJSON *pp, struct tfm_bpe *b) {
    if (!pp || cJSON_IsNull(pp)) return TFM_OK;
    const char *type = type_of(pp);
    if (strcmp(type, "ByteLevel") == 0) return TFM_OK; /* offsets only */
    if (strcmp(type, "TemplateProcessing") == 0) return load_template(path, pp, b);
    RETURN_IF(strcmp(type, "Sequence") != 0, TFM_ERR_UNSUPPORTED, "%s: post_processor.type %s is not supported "
              "(ByteLevel, TemplateProcessing, Sequence are)", path, type);
    const cJSON *list = get(pp, "processors");
    RETURN_IF(!cJSON_IsArray(list), TFM_ERR_FORMAT, "%s: post_processor.processors is not an array", path);
    for (const cJSON *p = list->child; p; p = p->next) {
        RETURN_IF(strcmp(type_of(p), "Sequence") == 0, TFM_ERR_UNSUPPORTED, "%s: nested post_processor", path);
        TRY(load_post_processor(path, p, b));
    }
    return TFM_OK;
}

static tfm_status load_added_tokens(const char *path, const cJSON *added, struct tfm_bpe *b) {
    if (!added || cJSON_IsNull(added)) return TFM_OK;
    RETURN_IF(!cJSON_IsArray(added), TFM_ERR_FORMAT, "%s: added_tokens is not an array", path);
    const int n = cJSON_GetArraySize(added);
    b->added = malloc((size_t)(n ? n : 1) * sizeof *b->added);
    RETURN_IF(!b->added, TFM_ERR_NOMEM, "%s: out of memory", path);
    int k = 0;
    for (const cJSON *t = added->child; t; t = t->next, k++) {
        const cJSON *content = get(t, "content"), *idj = get(t, "id");
        int32_t id;
        RETURN_IF(!cJSON_IsString(content) || !content->valuestring[0] || !bpe_json_id(idj, &id), TFM_ERR_FORMAT,
                  "%s: added_tokens[%d] needs a non-empty content and an id (an integer in [0, %d])", path, k,
                  BPE_MAX_ID);
        static const char *const refused[3] = {"lstrip", "rstrip", "single_word"};
        for (int f = 0; f < 3; f++)
            RETURN_IF(is_true(t, refused[f]), TFM_ERR_UNSUPPORTED, "%s: added_tokens[%d] ('%s'): %s = true is not "
                      "supported", path, k, content->valuestring, refused[f]);
        const char *s = content->valuestring;
        const size_t len = strlen(s);
        RETURN_IF(!bpe_grow(b, (size_t)id + 1), TFM_ERR_NOMEM, "%s: out of memory", path);
        if (b->tok[id]) {
            RETURN_IF(b->tok_len[id] != len || memcmp(b->tok[id], s, len) != 0, TFM_ERR_FORMAT,
                      "%s: added_tokens[%d]: id %d is '%s' in model.vocab, not '%s'", path, k, (int)id, b->tok[id], s);
        } else {
            RETURN_IF(!bpe_set_token(b, id, s, len), TFM_ERR_NOMEM, "%s: out of memory", path);
        }
        bpe_added *a = &b->added[b->n_added++];
        *a = (bpe_added){id, is_true(t, "special"), is_true(t, "normalized"), NULL, 0};
        if (a->normalized && b->nfc) { /* matched in normalised text: as `tokenizers`, in its normal form */
            utf8proc_uint8_t *m = NULL;
            utf8proc_ssize_t r = utf8proc_map((const utf8proc_uint8_t *)s, (utf8proc_ssize_t)len, &m,
                                              UTF8PROC_STABLE | UTF8PROC_COMPOSE);
            RETURN_IF(r <= 0, TFM_ERR_FORMAT, "%s: added_tokens[%d] ('%s'): no NFC form (%s)", path, k, s,
                      r < 0 ? utf8proc_errmsg(r) : "empty");
            a->match = (char *)m;
            a->match_len = (size_t)r;
        }
    }
    int32_t da = -1, db = -1;
    const int r = bpe_index(b, &da, &db);
    RETURN_IF(r == 0, TFM_ERR_NOMEM, "%s: out of memory", path);
    RETURN_IF(r < 0, TFM_ERR_FORMAT, "%s: added_tokens: token '%s' has two ids, %d and %d", path, b->tok[da], (int)da,
              (int)db);
    return TFM_OK;
}

tfm_status bpe_load_tokenizer_json(const char *path, const cJSON *root, struct tfm_bpe *b) {
    TRY(load_model(path, get(root, "model"), b));
    static const char *const unset[2] = {"truncation", "padding"}; /* batch shaping is the caller's: refused when set */
    for (int k = 0; k < 2; k++) {
        const cJSON *j = get(root, unset[k]);
        RETURN_IF(j && !cJSON_IsNull(j), TFM_ERR_UNSUPPORTED, "%s: %s is set; only null is supported", path, unset[k]);
    }
    TRY(load_normalizer(path, get(root, "normalizer"), b));
    TRY(load_pre_tokenizer(path, get(root, "pre_tokenizer"), b));
    const cJSON *dec = get(root, "decoder");
    RETURN_IF(strcmp(type_of(dec), "ByteLevel") != 0, TFM_ERR_UNSUPPORTED,
              "%s: decoder.type is %s; only ByteLevel is supported", path, type_of(dec));
    TRY(load_added_tokens(path, get(root, "added_tokens"), b));
    return load_post_processor(path, get(root, "post_processor"), b); /* its ids may be added tokens */
}
