/* transformer.c — sentence embeddings with an encoder-only model (BERT; docs/BERT.md).
 *
 * A Hugging Face BERT folder (config.json with model_type "bert", model.safetensors, tokenizer.json
 * or vocab.txt, and sentence-transformers' modules.json / 1_Pooling/config.json /
 * sentence_bert_config.json when present) loads directly: no conversion step. all-MiniLM-L6-v2
 * (scripts/get-minilm) is the model tested against sentence-transformers.
 *
 * Thread-safety: an embedder is read-only once opened; each thread embeds with its own context
 * (tfm/model.h). */
#ifndef TFM_EMBED_H
#define TFM_EMBED_H

#include "tfm/export.h"

#include "tfm/model.h"
#include "tfm/status.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Loads a Hugging Face BERT (transformers' BertModel or a BertFor* checkpoint, whose "bert."
 * prefix is accepted) as an encoder-only model: `path` is the model folder or its model.safetensors
 * (config.json must be beside it). The config maps to: d_model = hidden_size, n_heads =
 * num_attention_heads, n_enc_layers = num_hidden_layers, d_ff = intermediate_size, src_vocab =
 * vocab_size, max_len = max_position_embeddings, type_vocab = type_vocab_size, layer_norm_eps,
 * pad_id = pad_token_id; post-LN, exact GELU, learned positions, embed_norm 1 (Devlin et al. 2019,
 * §3). The query/key/value projections of each layer are packed into in_proj (rows W_Q, W_K,
 * W_V). The pooler and pre-training heads (pooler.*, cls.*) and embeddings.position_ids are
 * ignored. tfm_model_load calls this for a folder, or a safetensors file without tfm metadata that
 * has a config.json beside it. Errors: TFM_ERR_UNSUPPORTED naming config.json and the model_type
 * (anything but "bert"), hidden_act (anything but "gelu") or position_embedding_type (anything
 * but "absolute"); TFM_ERR_FORMAT naming the file and tensor (missing, not F32, misshaped, or a
 * tensor that belongs to no BERT encoder of that config); TFM_ERR_IO; TFM_ERR_NOMEM. */
TFM_API tfm_status tfm_model_load_hf(const char *path, tfm_model **out);

/** An encoder-only model, its WordPiece tokenizer and its pooling: what turns a sentence into a
 * vector. */
typedef struct tfm_embedder tfm_embedder;

/** Opens the model at `path` (tfm_model_load: a HF folder/file, or a tfm checkpoint of arch
 * encoder-only) with the tokenizer beside it (tokenizer.json, else vocab.txt, in the same folder)
 * and the sentence-transformers settings there: pooling mean (default), cls or max; L2
 * normalisation when modules.json lists Normalize or there is no modules.json; truncation at
 * sentence_bert_config.json's max_seq_length (all-MiniLM-L6-v2: 256), else the tokenizer's
 * max_length, never past the model's max_len. Errors: those of the loaders (file named);
 * TFM_ERR_UNSUPPORTED for a model that is not encoder-only or a pooling mode not run here;
 * TFM_ERR_FORMAT when the tokenizer's vocabulary is larger than the model's; TFM_ERR_IO when no
 * tokenizer file is found (both names given). */
TFM_API tfm_status tfm_embedder_open(const char *path, tfm_embedder **out);

/** The width of a vector (d_model: 384 for all-MiniLM-L6-v2). */
TFM_API int tfm_embedder_dim(const tfm_embedder *e);

/** The truncation length in tokens, [CLS] and [SEP] included. */
TFM_API int tfm_embedder_max_tokens(const tfm_embedder *e);

/** The number of tokens tfm_embedder_encode reads for one text (len bytes of UTF-8) into *n: its
 * WordPiece ids with [CLS] and [SEP], truncated to tfm_embedder_max_tokens (what tfm serve reports
 * as an embedding's usage.prompt_tokens). Errors: TFM_ERR_FORMAT for invalid UTF-8 (byte offset
 * named); TFM_ERR_INVALID_ARG (NULL arguments); TFM_ERR_NOMEM. */
TFM_API tfm_status tfm_embedder_count_tokens(const tfm_embedder *e, const char *text, size_t len, size_t *n);

/** The model (owned by the embedder), e.g. to create contexts. */
TFM_API const tfm_model *tfm_embedder_model(const tfm_embedder *e);

/** Embeds n texts (texts[i] of lens[i] bytes of UTF-8; an empty text gives the vector of
 * "[CLS] [SEP]", as sentence-transformers does) into out (n, dim), row i for text i: WordPiece
 * ids with [CLS]/[SEP], truncated to max_tokens; the encoder's last hidden states H (S, d); then
 * the pooling — mean: Σ_t H[t] / S over the tokens of the text (the attention mask: padding not
 * counted), cls: H[0], max: max_t H[t] — and, if the model says so, v / max(‖v‖₂, 1e-12).
 * Texts are sorted by length and run in batches of similar lengths (at most 64 texts, 2,048 padded
 * tokens and 2^19 attention cells B·S² a batch); the ops' threads share each batch. `ctx` is a context of the
 * embedder's model. Errors name text i (from 1) as "name:i" when `name` is given (the
 * file, when the texts are its lines) else "text i": TFM_ERR_FORMAT "name:i: invalid UTF-8 at
 * byte offset N (byte 0xXX)"; TFM_ERR_RANGE for an id outside the model's vocabulary or the
 * padding id (a literal [PAD] in the text); TFM_ERR_INVALID_ARG (NULL arguments, a context of another model);
 * TFM_ERR_NOMEM. */
TFM_API tfm_status tfm_embedder_encode(const tfm_embedder *e, tfm_context *ctx, const char *const *texts, const size_t *lens,
                                       size_t n, const char *name, float *out);

/** Releases an embedder and its model and tokenizer (NULL is fine). */
TFM_API void tfm_embedder_free(tfm_embedder *e);

#ifdef __cplusplus
}
#endif
#endif
