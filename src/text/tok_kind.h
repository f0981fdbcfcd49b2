/* The kinds of tfm_tokenizer (include/tfm/tokenizer.h). A tokenizer is a SentencePiece model —
 * tfm's own, the bytes of a `.model` file — or one of the kinds below: a family's tokenizer made
 * of several files, kept as one blob (core/parts.h) whose magic line names the kind. The public
 * functions (spm_shim.cc) dispatch on the kind, so tfm_translate_text, the CLI and `tfm serve`
 * use every kind through the one API. Adding a kind: a tok_<kind>.c with its table, one line in
 * k_kinds (spm_shim.cc), its extern here, and the format that stores it (src/model/io/).
 *
 *   tok_marian.c   Marian / opus-mt: source.spm + target.spm + vocab.json (docs/MARIAN.md)
 *   tok_nllb.c     NLLB-200 / M2M100: sentencepiece.bpe.model + the language codes (docs/NLLB.md) */
#ifndef TFM_TOK_KIND_H
#define TFM_TOK_KIND_H

#include "core_internal.h"
#include "tfm/tokenizer.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** What the special ids of a kind are; -1: none. */
typedef struct {
    int pad, bos, eos, unk;
} tok_specials;

typedef struct tok_kind {
    const char *magic; /* the blob's first line (parts.h) */
    /** Reads the blob (the bytes stay the caller's) into a new state. Errors: TFM_ERR_FORMAT naming
     * the part (file) and what is wrong; TFM_ERR_NOMEM. */
    tfm_status (*load)(const void *blob, size_t len, void **state);
    void (*free)(void *state);
    int (*vocab_size)(const void *state);
    /** Optional (NULL: vocab_size): the target side's ids, where the kind has a vocabulary of its own
     * for them (Marian's target_vocab.json). */
    int (*tgt_vocab_size)(const void *state);
    tok_specials (*specials)(const void *state);
    int32_t (*piece_to_id)(const void *state, const char *piece);   /* unk when unknown */
    const char *(*id_to_piece)(const void *state, int32_t id);      /* NULL outside [0, V) */
    /** The ids the family's model reads for one line of valid UTF-8 (tfm_tokenizer_encode's
     * contract; the kind says whether it appends EOS). */
    tfm_status (*encode)(const void *state, const char *text, size_t len, int32_t **ids, size_t *n_ids);
    /** The text of output ids (tfm_tokenizer_decode's contract). */
    tfm_status (*decode)(const void *state, const int32_t *ids, size_t n_ids, char **text, size_t *len);
    /** Optional (NULL: the kind has no language codes), tfm_tokenizer_set_langs: the source and
     * target language codes and the source rule. */
    tfm_status (*set_langs)(void *state, const char *src, const char *tgt, int legacy);
    /** Optional: the token a search outputs first for the target language, or -1. */
    int32_t (*forced_first)(const void *state);
    /** Optional: language code k and its id (NULL past the last). */
    const char *(*lang)(const void *state, size_t k, int32_t *id);
    /** 1: the model may have more rows than the tokenizer has tokens (NLLB-200's config.json says
     * 256206 for its 256204 tokens); the extra ids decode to nothing. */
    int model_may_be_larger;
} tok_kind;

extern const tok_kind tok_kind_marian; /* tok_marian.c */
extern const tok_kind tok_kind_nllb;   /* tok_nllb.c */

/** In place, the text transformers' SentencePiece tokenizers decode pieces to (hf_text.c): every
 * "▁" (U+2581) a space, then white space stripped at both ends as Python's str.strip() (its
 * str.isspace() set, Unicode included). s holds n bytes of UTF-8 and room for a NUL; returns the new
 * length and NUL-terminates. */
size_t hf_spm_text(char *s, size_t n);

/** The tokenizer's number of ids on the source (target 0) or the target side (1; tgt_vocab_size). */
int tok_side_vocab_size(const tfm_tokenizer *tok, int target);

/** Whether a model of `rows` ids on one side (target 0: source, 1: target) fits the tokenizer's
 * vocabulary of that side: the same size, or for a kind with model_may_be_larger at least as many
 * (tok_model.c). */
int tok_model_rows_ok(const tfm_tokenizer *tok, int rows, int target);

/** A SentencePiece model's pieces of a text, as SentencePiece's EncodeAsPieces gives them (an
 * unknown character's piece is its surface, not "<unk>"): *pieces is one malloc'd block of n
 * NUL-terminated strings after n pointers (free(*pieces) releases all). `tok` must be a
 * SentencePiece tokenizer. Errors: TFM_ERR_FORMAT (SentencePiece's message), TFM_ERR_NOMEM. */
tfm_status spm_encode_pieces(const tfm_tokenizer *tok, const char *text, size_t len, char ***pieces, size_t *n);

/** SentencePiece's DecodePieces of n pieces (a piece the model lacks decodes as its unk surface,
 * " ⁇ "): *text malloc'd, NUL-terminated, *len bytes. Errors: TFM_ERR_FORMAT, TFM_ERR_NOMEM. */
tfm_status spm_decode_pieces(const tfm_tokenizer *tok, const char *const *pieces, size_t n, char **text, size_t *len);

#ifdef __cplusplus
}
#endif
#endif
