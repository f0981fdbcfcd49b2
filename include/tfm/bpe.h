/* transformer.c — byte-level BPE, the tokenizer of GPT-2 and of the Llama-3 / SmolLM / Qwen
 * families (docs/BPE.md).
 *
 * Gives the ids Hugging Face `tokenizers` gives for the same files (checked line by line on a
 * trained fixture and a stress text by tests/unit/text/test_bpe.c). Encoding is, in order:
 *   1. `added_tokens` written literally in the text are found first, leftmost-longest (those with
 *      normalized = false on the raw text, the others, normalised themselves, after step 2), and
 *      become their ids; the text between them goes through steps 2-5;
 *   2. the normaliser: none, or NFC (Qwen's tokenizer.json);
 *   3. the pre-tokeniser splits the text into pieces by a pattern implemented by hand over
 *      Unicode categories (utf8proc): GPT-2's
 *        's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 *      or, where tokenizer.json's Split says so, Llama-3's / Qwen2's pattern (case-insensitive
 *      contractions, one optional non-letter before letters, digits in groups of 1-3 / 1,
 *      punctuation runs with their line ends, line-end runs); optionally every digit alone first
 *      (a Digits pre-tokenizer with individual_digits, as SmolLM's);
 *   4. each piece's UTF-8 bytes become the printable characters of GPT-2's byte-to-unicode table
 *      (Radford et al. 2019, the `bytes_to_unicode` of openai/gpt-2 encoder.py);
 *   5. BPE (Sennrich et al. 2016, "Neural Machine Translation of Rare Words with Subword Units";
 *      GPT-2's byte-level variant): the adjacent pair of lowest merge rank is merged, again and
 *      again, with a heap over a linked list of symbols (O(n log n) for a word of n bytes);
 *   6. the post-processor's template may put a BOS token first (Llama-3's TemplateProcessing)
 *      and/or an EOS token last.
 * Decoding maps ids back to tokens, tokens' characters back to bytes, and replaces each maximal
 * ill-formed UTF-8 subsequence by U+FFFD, as `tokenizers`' ByteLevel decoder (Rust's
 * String::from_utf8_lossy) does.
 *
 * Arrays this API returns are allocated with malloc(); release them with free(). A tokenizer is
 * immutable once loaded: encoding may run in several threads at once. */
#ifndef TFM_BPE_H
#define TFM_BPE_H

#include "tfm/export.h"

#include "tfm/status.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** An opaque loaded byte-level BPE tokenizer. */
typedef struct tfm_bpe tfm_bpe;

/** Loads a Hugging Face tokenizer.json whose model is BPE with a ByteLevel pre-tokenizer and
 * decoder. Accepted (anything else is refused, naming the key): normalizer null or NFC;
 * pre_tokenizer ByteLevel (use_regex: GPT-2's pattern) or a Sequence of an optional Digits
 * (individual_digits true), an optional Split (pattern GPT-2's, Llama-3's or Qwen2's, behavior
 * Isolated, not inverted) and ByteLevel; add_prefix_space false; model BPE with dropout null,
 * byte_fallback false, no continuing_subword_prefix / end_of_word_suffix, merges as "a b"
 * strings or ["a", "b"] pairs, optional unk_token, fuse_unk, ignore_merges; decoder ByteLevel;
 * post_processor null, ByteLevel, TemplateProcessing (single = at most one special token, $A, at
 * most one special token) or a Sequence of those; added_tokens with lstrip, rstrip and
 * single_word false; truncation and padding null.
 * Errors: TFM_ERR_IO (file named); TFM_ERR_FORMAT naming the file and the key (and merge index):
 * bad JSON (with line:column), a merge that is not two tokens, a merge whose parts or whose
 * result are not in model.vocab, duplicated ids; TFM_ERR_UNSUPPORTED naming what is not
 * byte-level BPE as above; TFM_ERR_NOMEM. On error *out is NULL. */
TFM_API tfm_status tfm_bpe_load(const char *path, tfm_bpe **out);

/** Loads GPT-2's two files: vocab.json (an object token -> id) and merges.txt (an optional
 * "#version" first line, then one merge "a b" a line, rank = line order). The settings are
 * GPT-2's: GPT-2's pattern, no normaliser, no post-processor; "<|endoftext|>", when the
 * vocabulary holds it, is a special token matched literally.
 * Errors as tfm_bpe_load; a bad merge names merges.txt and its line. On error *out is NULL. */
TFM_API tfm_status tfm_bpe_load_files(const char *vocab_json, const char *merges_txt, tfm_bpe **out);

/** Loads the tokenizer of a Hugging Face model folder (docs/LLM.md), given as the folder or as a
 * file inside it (its model.safetensors, as a --model flag may name it): tokenizer.json when it
 * is there (tfm_bpe_load), else GPT-2's vocab.json + merges.txt (tfm_bpe_load_files). *clean_up
 * (nullable) receives tokenizer_config.json's clean_up_tokenization_spaces (1 when the file or the
 * key is absent, transformers' default). Errors: TFM_ERR_IO naming `path` when it does not exist
 * (a mistyped folder never falls back to its parent's tokenizer); TFM_ERR_IO naming the folder and
 * the files it lacks (merges.txt without vocab.json, or the reverse, named); those of the loaders.
 * On error *out is NULL. */
TFM_API tfm_status tfm_bpe_load_dir(const char *path, tfm_bpe **out, int *clean_up);

/** Encodes `len` bytes of UTF-8 text into ids. add_special = 1 adds the post-processor's BOS/EOS
 * (if it has any); 0 adds nothing. *ids is malloc'd (free() it; NULL when *n_ids is 0).
 * Errors: TFM_ERR_FORMAT "invalid UTF-8 at byte offset N (byte 0xXX)" (N from 0; the caller adds
 * the file and line); TFM_ERR_INVALID_ARG for NULL arguments; TFM_ERR_NOMEM. On error *ids is
 * NULL and *n_ids 0. */
TFM_API tfm_status tfm_bpe_encode(const tfm_bpe *bpe, const char *text, size_t len, int add_special, int32_t **ids,
                                  size_t *n_ids);

/** Decodes ids to UTF-8 text (malloc'd, NUL-terminated, *len without the NUL). skip_special = 1
 * leaves out the special added tokens (BOS, EOS, ...). Ill-formed byte sequences become U+FFFD.
 * Errors: TFM_ERR_RANGE naming an id that has no token; TFM_ERR_INVALID_ARG; TFM_ERR_NOMEM. On
 * error *text is NULL and *len 0. */
TFM_API tfm_status tfm_bpe_decode(const tfm_bpe *bpe, const int32_t *ids, size_t n_ids, int skip_special, char **text,
                                  size_t *len);

/** One more than the largest id (model vocabulary and added tokens); an id below it may still
 * have no token (a gap), which tfm_bpe_id_to_token reports as NULL. */
TFM_API size_t tfm_bpe_vocab_size(const tfm_bpe *bpe);

/** The token of an id as stored (byte-level characters, e.g. "Ġthe"; NUL-terminated, owned by
 * the tokenizer), or NULL for an id without one. */
TFM_API const char *tfm_bpe_id_to_token(const tfm_bpe *bpe, int32_t id);

/** The id of a token given exactly as stored ("Ġthe", "<|endoftext|>"), or -1. */
TFM_API int32_t tfm_bpe_token_to_id(const tfm_bpe *bpe, const char *token);

/** The ids the post-processor adds first (BOS) and last (EOS), -1 where it adds none. */
TFM_API int32_t tfm_bpe_bos_id(const tfm_bpe *bpe);
TFM_API int32_t tfm_bpe_eos_id(const tfm_bpe *bpe);

/** Releases a tokenizer (NULL is fine). */
TFM_API void tfm_bpe_free(tfm_bpe *bpe);

#ifdef __cplusplus
}
#endif
#endif
