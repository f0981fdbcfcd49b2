/* NLLB-200's tokenizer (nllb_tok.h, transformers' NllbTokenizer 4.40.2; docs/NLLB.md) as a
 * tfm_tokenizer kind (tok_kind.h): the folder's sentencepiece.bpe.model and, when present,
 * tokenizer_config.json and special_tokens_map.json (the language codes), kept as one blob
 * (core/parts.h) under PARTS_MAGIC_NLLB. encode gives a whole source row ([src_lang] pieces </s>),
 * decode the text of output ids; the languages are set by tfm_tokenizer_set_langs. */
#include "nllb_tok.h"
#include "parts.h"
#include "tok_kind.h"

#include <stdlib.h>
#include <string.h>

static const char *const k_special_names[4] = {"<s>", "<pad>", "</s>", "<unk>"};

/* Optional part `name` into data and n (NULL, 0 when absent; the blob is checked by the required part). */
static void optional_part(const void *blob, size_t len, const char *name, char **data, size_t *n) {
    const unsigned char *d = NULL;
    *data = NULL;
    *n = 0;
    if (parts_find(blob, len, PARTS_MAGIC_NLLB, name, &d, n) == TFM_OK) *data = (char *)d;
    else tfm_clear_error();
}

static tfm_status nllb_load(const void *blob, size_t len, void **state) {
    *state = NULL;
    nllb_files f;
    memset(&f, 0, sizeof f);
    const unsigned char *spm;
    TRY(parts_find(blob, len, PARTS_MAGIC_NLLB, "sentencepiece.bpe.model", &spm, &f.spm_len));
    f.spm = (char *)spm; /* read only: nllb_tok_from_files does not keep or change the bytes */
    optional_part(blob, len, "tokenizer_config.json", &f.config, &f.config_len);
    optional_part(blob, len, "special_tokens_map.json", &f.map, &f.map_len);
    snprintf(f.spm_name, sizeof f.spm_name, "sentencepiece.bpe.model");
    snprintf(f.config_name, sizeof f.config_name, "tokenizer_config.json");
    snprintf(f.map_name, sizeof f.map_name, "special_tokens_map.json");
    return nllb_tok_from_files(&f, (nllb_tok **)state);
}

static void nllb_free(void *state) { nllb_tok_free(state); }
static int nllb_vocab_size(const void *state) { return nllb_tok_size(state); }
static tok_specials nllb_specials(const void *state) {
    (void)state;
    return (tok_specials){NLLB_PAD_ID, NLLB_BOS_ID, NLLB_EOS_ID, NLLB_UNK_ID};
}

static int32_t nllb_piece_to_id(const void *state, const char *piece) {
    for (int i = 0; i < 4; i++)
        if (strcmp(piece, k_special_names[i]) == 0) return i;
    const int32_t lang = nllb_tok_lang_id(state, piece);
    if (lang >= 0) return lang;
    if (strcmp(piece, "<mask>") == 0) return nllb_tok_mask_id(state);
    const int32_t id = tfm_tokenizer_piece_to_id(nllb_tok_spm(state), piece);
    return id > 0 ? id + 1 : NLLB_UNK_ID; /* NllbTokenizer._convert_token_to_id */
}

static const char *nllb_id_to_piece(const void *state, int32_t id) {
    if (id < 0 || id >= nllb_tok_size(state)) return NULL;
    if (id < 4) return k_special_names[id];
    if (id == nllb_tok_mask_id(state)) return "<mask>";
    const char *lang = nllb_tok_lang_of(state, id);
    if (lang) return lang;
    return tfm_tokenizer_id_to_piece(nllb_tok_spm(state), id - 1);
}

static tfm_status nllb_encode(const void *state, const char *text, size_t len, int32_t **ids, size_t *n_ids) {
    return nllb_tok_encode(state, text, len, ids, n_ids);
}

static tfm_status nllb_decode(const void *state, const int32_t *ids, size_t n_ids, char **text, size_t *len) {
    return nllb_tok_decode(state, ids, n_ids, text, len);
}

static tfm_status nllb_set_langs(void *state, const char *src, const char *tgt, int legacy) {
    return nllb_tok_set_langs(state, src, tgt, legacy);
}

static int32_t nllb_forced_first(const void *state) { return nllb_tok_tgt_lang(state); }

static const char *nllb_lang(const void *state, size_t k, int32_t *id) {
    const char *code = nllb_tok_lang(state, k);
    if (code && id) *id = nllb_tok_lang_id(state, code);
    return code;
}

const tok_kind tok_kind_nllb = {
    .magic = PARTS_MAGIC_NLLB,
    .load = nllb_load,
    .free = nllb_free,
    .vocab_size = nllb_vocab_size,
    .specials = nllb_specials,
    .piece_to_id = nllb_piece_to_id,
    .id_to_piece = nllb_id_to_piece,
    .encode = nllb_encode,
    .decode = nllb_decode,
    .set_langs = nllb_set_langs,
    .forced_first = nllb_forced_first,
    .lang = nllb_lang,
    .model_may_be_larger = 1,
};
