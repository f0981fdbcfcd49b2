/* NLLB-200's tokenizer (transformers' NllbTokenizer, models/nllb/tokenization_nllb.py; docs/NLLB.md):
 * a SentencePiece BPE model (sentencepiece.bpe.model) whose ids are shifted into fairseq's
 * dictionary, plus the language codes.
 *
 * Ids (fairseq's Dictionary, "fairseq offset" 1):
 *   0 <s>, 1 <pad>, 2 </s>, 3 <unk>;
 *   SentencePiece piece i (i >= 1) → i + 1; SentencePiece's id 0 (its <unk>) → 3;
 *   the language codes after the n_sp SentencePiece pieces: code k → n_sp + 1 + k (eng_Latn is
 *   256047 in NLLB-200), then <mask>.
 * A source sentence is [src_lang] pieces </s> (NllbTokenizer's default), or with
 * legacy_behaviour pieces </s> [src_lang] (its earlier rule). Decoding skips <s> <pad> </s>
 * <unk>, the language codes, <mask> and ids past the tokenizer (a model's vocab_size may exceed
 * it: NLLB-200 has 256206 rows for 256204 tokens), joins the pieces, turns U+2581 into spaces and
 * strips white space at both ends as Python's str.strip() (hf_spm_text), as
 * NllbTokenizer.decode(skip_special_tokens=True, clean_up_tokenization_spaces=False).
 *
 * Text is only text: a language code or "<mask>" written in the input is encoded as its
 * SentencePiece pieces, not as the special token (transformers would match it as an added token).
 *
 * An nllb_tok is immutable once loaded and its source language set: encode and decode may run in
 * several threads at once. */
#ifndef TFM_NLLB_TOK_H
#define TFM_NLLB_TOK_H

#include "tfm/status.h"
#include "tfm/tokenizer.h"

#include <stddef.h>
#include <stdint.h>

enum { NLLB_BOS_ID = 0, NLLB_PAD_ID = 1, NLLB_EOS_ID = 2, NLLB_UNK_ID = 3 };

typedef struct nllb_tok nllb_tok;

/** The tokenizer's files of a Hugging Face folder, as bytes (a model keeps them as one blob). */
typedef struct {
    char *spm;    /* sentencepiece.bpe.model: required */
    size_t spm_len;
    char *config; /* tokenizer_config.json, or NULL */
    size_t config_len;
    char *map;    /* special_tokens_map.json, or NULL */
    size_t map_len;
    char spm_name[4200], config_name[4200], map_name[4200]; /* their paths or names, for messages */
} nllb_files;

/** Reads the files of the folder `dir` into *files (nllb_files_free them). Errors: TFM_ERR_IO naming
 * sentencepiece.bpe.model when it is missing, or a file that cannot be read; TFM_ERR_NOMEM. */
tfm_status nllb_files_read(const char *dir, nllb_files *files);
void nllb_files_free(nllb_files *files);

/** The tokenizer of `files` (nllb_tok_load's rules; the bytes are not kept). Errors: those of
 * nllb_tok_load but the missing file. */
tfm_status nllb_tok_from_files(const nllb_files *files, nllb_tok **out);

/** Loads the tokenizer of the Hugging Face folder `dir`: `dir`/sentencepiece.bpe.model (required)
 * and the language codes, from the first of: tokenizer_config.json's added_tokens_decoder (ids as
 * written there), tokenizer_config.json's or special_tokens_map.json's
 * additional_special_tokens (ids n_sp + 1 + k), NLLB-200's 202 codes (FAIRSEQ_LANGUAGE_CODES of
 * tokenization_nllb.py). The source language starts as eng_Latn when the tokenizer has it (as
 * transformers), else unset (nllb_tok_set_langs must set one before encoding).
 * Errors: TFM_ERR_IO naming sentencepiece.bpe.model when it is missing or unreadable;
 * TFM_ERR_FORMAT naming the file and key for a malformed JSON file, an added token at an id that
 * contradicts the layout above, or a model that is not SentencePiece; TFM_ERR_NOMEM. */
tfm_status nllb_tok_load(const char *dir, nllb_tok **out);

/** Releases a tokenizer (NULL is fine). */
void nllb_tok_free(nllb_tok *t);

/** Number of tokens: the specials, the pieces, the language codes and <mask>. */
int nllb_tok_size(const nllb_tok *t);

/** The id of language code `code` (e.g. "spa_Latn"), or -1 if the tokenizer has no such code. */
int32_t nllb_tok_lang_id(const nllb_tok *t, const char *code);

/** The number of language codes, and code k (0 <= k < n) in id order. */
size_t nllb_tok_n_langs(const nllb_tok *t);
const char *nllb_tok_lang(const nllb_tok *t, size_t k);

/** Sets the source language code `src` (NULL: keep it; eng_Latn at first, as transformers), the
 * target one `tgt` (NULL: none; nllb_tok_tgt_lang gives its id, the token a search must output
 * first) and the source rule (legacy 0: [src] pieces </s>; 1: pieces </s> [src]). Not
 * thread-safe: call before sharing the tokenizer. Errors: TFM_ERR_INVALID_ARG for an unknown code
 * (nllb_tok_unknown_lang's message, as --src-lang / --tgt-lang); nothing changes then. */
tfm_status nllb_tok_set_langs(nllb_tok *t, const char *src, const char *tgt, int legacy);

/** The target language's id (nllb_tok_set_langs), or -1 when none is set. */
int32_t nllb_tok_tgt_lang(const nllb_tok *t);

/** The id of <mask>. */
int32_t nllb_tok_mask_id(const nllb_tok *t);

/** The language code of id `id`, or NULL if it is not one. */
const char *nllb_tok_lang_of(const nllb_tok *t, int32_t id);

/** The error for an unknown language code `code` given as `what` ("--src-lang"): names the code,
 * lists the first few codes and says `tfm translate --model DIR --list-langs` lists all.
 * Returns TFM_ERR_INVALID_ARG. */
tfm_status nllb_tok_unknown_lang(const nllb_tok *t, const char *what, const char *code);

/** Encodes UTF-8 text as a source sentence: [src_lang] pieces </s> (legacy: pieces </s>
 * [src_lang]). *ids is malloc'd (free() it). Errors: TFM_ERR_INVALID_ARG (no source language
 * set); those of tfm_tokenizer_encode (invalid UTF-8, NUL); TFM_ERR_NOMEM. */
tfm_status nllb_tok_encode(const nllb_tok *t, const char *text, size_t len, int32_t **ids, size_t *n_ids);

/** Decodes ids to text (see above); *text is malloc'd, NUL-terminated, *len bytes. Errors:
 * TFM_ERR_RANGE for a negative id (its position named); TFM_ERR_NOMEM. */
tfm_status nllb_tok_decode(const nllb_tok *t, const int32_t *ids, size_t n_ids, char **text, size_t *len);

/** The SentencePiece model underneath (owned by t). */
const tfm_tokenizer *nllb_tok_spm(const nllb_tok *t);

#endif
