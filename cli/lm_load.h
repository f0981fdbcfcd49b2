/* A decoder-only language model and its tokenizer for tfm generate / tfm perplexity: tfm's own
 * checkpoint (SentencePiece stored in it), or a Hugging Face GPT-2 / Llama folder (its byte-level
 * BPE: docs/LLM.md). */
#ifndef TFM_CLI_LM_LOAD_H
#define TFM_CLI_LM_LOAD_H

#include "tfm/tfm.h"

typedef struct {
    tfm_model *m;
    tfm_tokenizer *tok; /* tfm's own model: its SentencePiece, else NULL */
    tfm_bpe *bpe;       /* a Hugging Face folder's tokenizer, else NULL */
    int clean_up;       /* bpe: tokenizer_config.json's clean_up_tokenization_spaces */
} lm_model;

/* Loads `path` for `cmd`: the model (decoder-only, else an error naming the architecture) and its
 * tokenizer. A Hugging Face model is recognised by having no padding token (pad_id −1: tfm's own
 * models always have one); its tokenizer comes from its folder (path, or the folder of a file
 * inside it), and must fit the model's vocabulary. Returns 1, or 0 after printing the error. */
int lm_load(const char *cmd, const char *path, lm_model *out);

/* The ids of `text` as the model's tokenizer gives them: tfm's own (no BOS: the caller adds it) or
 * the Hugging Face tokenizer with its template (Llama's BOS; GPT-2 none). *ids malloc'd. Returns
 * tfm_status (the library's message set). */
tfm_status lm_encode(const lm_model *lm, const char *text, size_t len, int32_t **ids, size_t *n);

void lm_free(lm_model *lm);

#endif
