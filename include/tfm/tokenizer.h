/* transformer.c — subword tokenizer: a SentencePiece unigram model (Kudo 2018) behind a C API.
 * The same API runs the tokenizers of other model families loaded from their folders
 * (docs/MODELS.md, "Tokenizers of other families"): a Marian (opus-mt) model's tokenizer
 * (docs/MARIAN.md) encodes as MarianTokenizer — vocab.json's ids, the >>xx<< code, </s> appended —
 * has no BOS (bos_id −1), and decodes with its target model.
 *
 * One joint vocabulary for source and target text. Ids reserved by every model tfm trains
 * (docs/FORMATS.md): pad = 0, bos = 1, eos = 2, unk = 3. The model is a serialized SentencePiece
 * ModelProto, the same bytes `spm_train` writes to `*.model`, so either tool reads the other's
 * models; inside a checkpoint it is stored as the U8 tensor `tokenizer.model`.
 *
 * Text is UTF-8. Models trained here use
 *   - identity normalization (no NFKC, no whitespace collapsing): the text is tokenized exactly as
 *     given, so for every valid UTF-8 string x, decode(encode(x)) == x, byte for byte — spaces
 *     (leading, trailing, repeated), tabs, accents, any script, emoji;
 *   - byte fallback: a character that is not a piece of the vocabulary is encoded as its UTF-8
 *     bytes (pieces "<0x00>".."<0xFF>", 256 ids), never as unk.
 * Encoding rejects invalid UTF-8 (TFM_ERR_FORMAT naming the byte offset) rather than replacing it.
 * Models trained elsewhere (e.g. with NFKC) load and work; their round trips are as exact as their
 * own normalization allows.
 *
 * Arrays and strings this API returns are allocated with malloc(); release them with free().
 * A tokenizer is immutable after it is made: encode/decode may be called from several threads
 * at once. Training is not thread-safe (SentencePiece keeps global state). */
#ifndef TFM_TOKENIZER_H
#define TFM_TOKENIZER_H

#include "tfm/export.h"

#include "tfm/model.h"
#include "tfm/status.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Reserved ids of every model tfm trains. */
enum { TFM_TOK_PAD_ID = 0, TFM_TOK_BOS_ID = 1, TFM_TOK_EOS_ID = 2, TFM_TOK_UNK_ID = 3 };

/** An opaque loaded model. */
typedef struct tfm_tokenizer tfm_tokenizer;

/** Training options; start from tfm_tokenizer_train_opts_default(). */
typedef struct {
    int vocab_size;           /* pieces in the vocabulary, reserved and byte pieces included
                                 (default 8000). Must be reachable: the 4 reserved ids + 256 byte
                                 pieces + every distinct character kept by character_coverage,
                                 and (unless vocab_size_at_most) at most what the text supports;
                                 otherwise training fails with TFM_ERR_INVALID_ARG naming the
                                 limit ("vocab_size 8000 is more than the text supports: at most
                                 2762 pieces"). */
    int vocab_size_at_most;   /* 1: vocab_size is an upper bound: a text that supports fewer
                                 pieces gets as many as it supports (SentencePiece's
                                 hard_vocab_limit false; tfm_tokenizer_vocab_size tells how many);
                                 0 (default): exactly vocab_size or an error */
    float character_coverage; /* fraction of characters covered by character pieces, (0, 1]
                                 (default 1.0); rarer characters fall back to bytes */
    int input_sentence_size;  /* at most this many lines are sampled for training: 0 = all, else
                                 over 100 (default 2,000,000); sampling is seeded, so
                                 deterministic */
    int max_sentence_length;  /* lines longer than this many bytes are skipped in training
                                 (default 8192) */
    int num_threads;          /* training threads (default 2) */
    int byte_fallback;        /* 1: unknown characters become byte pieces (default 1) */
    unsigned seed;            /* seed of SentencePiece's sampling (default 1) */
    int verbose;              /* 1: let SentencePiece log its progress to stderr (default 0) */
} tfm_tokenizer_train_opts;

/** Fills *opts with the defaults documented on each field. */
TFM_API void tfm_tokenizer_train_opts_default(tfm_tokenizer_train_opts *opts);

/** Trains a joint unigram vocabulary on the lines of the UTF-8 text files `paths[0..n_paths)`
 * (each line one sentence; "\n" or "\r\n" line ends; blank lines, tfm_text_is_blank, are skipped). Training happens in
 * memory; no file is written. The same files and options give the same model, byte for byte.
 * Errors: TFM_ERR_INVALID_ARG for no files or an option out of range; TFM_ERR_IO for a file that
 * cannot be read (named); TFM_ERR_FORMAT for invalid UTF-8 or a NUL byte (file, 1-based line and
 * byte offset in the line named) or text with no sentences; TFM_ERR_INVALID_ARG for a vocab_size
 * the text cannot reach (SentencePiece's message); TFM_ERR_NOMEM. On error *out is NULL. */
TFM_API tfm_status tfm_tokenizer_train(const char *const *paths, size_t n_paths,
                                       const tfm_tokenizer_train_opts *opts, tfm_tokenizer **out);

/** Loads a model from the bytes of a serialized SentencePiece ModelProto (a `.model` file's
 * contents). The bytes are copied. Errors: TFM_ERR_FORMAT if they are not a valid model;
 * TFM_ERR_NOMEM. On error *out is NULL. */
TFM_API tfm_status tfm_tokenizer_load_bytes(const void *data, size_t len, tfm_tokenizer **out);

/** Loads a model from a `.model` file. Errors: TFM_ERR_IO (file named), those of
 * tfm_tokenizer_load_bytes() (the message names the file). */
TFM_API tfm_status tfm_tokenizer_load_file(const char *path, tfm_tokenizer **out);

/** The model as serialized ModelProto bytes (malloc'd, *len bytes; free() them). Loading them
 * with tfm_tokenizer_load_bytes() gives a tokenizer that encodes and decodes identically.
 * Errors: TFM_ERR_NOMEM. */
TFM_API tfm_status tfm_tokenizer_serialize(const tfm_tokenizer *tok, uint8_t **bytes, size_t *len);

/** Writes the serialized model to `path` atomically (a temporary file in the same folder, then
 * rename): readers see the old file or the new one, never a part. Errors: TFM_ERR_IO naming the
 * file. */
TFM_API tfm_status tfm_tokenizer_save_file(const tfm_tokenizer *tok, const char *path);

/** Number of pieces V; valid ids are [0, V). */
TFM_API int tfm_tokenizer_vocab_size(const tfm_tokenizer *tok);

/** The padding id as the model defines it (-1 if none); 0 for models tfm trains. */
TFM_API int tfm_tokenizer_pad_id(const tfm_tokenizer *tok);
/** The begin-of-sequence id (-1 if none); 1 for models tfm trains. */
TFM_API int tfm_tokenizer_bos_id(const tfm_tokenizer *tok);
/** The end-of-sequence id (-1 if none); 2 for models tfm trains. */
TFM_API int tfm_tokenizer_eos_id(const tfm_tokenizer *tok);
/** The unknown-piece id (-1 if none); 3 for models tfm trains. */
TFM_API int tfm_tokenizer_unk_id(const tfm_tokenizer *tok);

/** The id of a piece (e.g. "▁the", "<0x41>"), or the unk id if the vocabulary lacks it. */
TFM_API int32_t tfm_tokenizer_piece_to_id(const tfm_tokenizer *tok, const char *piece);

/** The piece of an id (NUL-terminated, owned by the tokenizer), or NULL if id is outside [0, V). */
TFM_API const char *tfm_tokenizer_id_to_piece(const tfm_tokenizer *tok, int32_t id);

/** Encodes `len` bytes of UTF-8 text into ids (no BOS/EOS added). *ids is malloc'd (free() it;
 * it may be NULL when *n_ids is 0, e.g. for empty text). Newlines are ordinary characters here:
 * split lines before encoding. Errors: TFM_ERR_FORMAT for invalid UTF-8 or a NUL byte (the message
 * gives the byte offset); TFM_ERR_NOMEM. On error *ids is NULL and *n_ids 0. */
TFM_API tfm_status tfm_tokenizer_encode(const tfm_tokenizer *tok, const char *text, size_t len,
                                        int32_t **ids, size_t *n_ids);

/** Decodes ids into UTF-8 text: *text is malloc'd, NUL-terminated, *len bytes without the NUL
 * (free() it). Pad, BOS and EOS ids are skipped; unk decodes as " ⁇ "; byte pieces that do not
 * form valid UTF-8 decode as U+FFFD, so the text is always valid UTF-8. Errors: TFM_ERR_RANGE for
 * an id outside [0, V) (its position named); TFM_ERR_NOMEM. On error *text is NULL. */
TFM_API tfm_status tfm_tokenizer_decode(const tfm_tokenizer *tok, const int32_t *ids, size_t n_ids,
                                        char **text, size_t *len);

/** Checks that a tokenizer fits a model: the same number of pieces as both vocabularies and the
 * same pad, BOS and EOS ids. Errors: TFM_ERR_INVALID_ARG saying what differs. */
TFM_API tfm_status tfm_tokenizer_check_model(const tfm_tokenizer *tok, const tfm_config *cfg);

/** Sets the languages of a multilingual tokenizer (NLLB-200, docs/NLLB.md): `src_lang` the source
 * language code (NULL: keep the tokenizer's default, eng_Latn for NLLB), `tgt_lang` the target one
 * (NULL: none), `legacy` 1 for NLLB's earlier source rule (pieces </s> [src_lang]; transformers'
 * legacy_behaviour). encode then gives whole source rows and tfm_tokenizer_forced_first the
 * target's token. Not thread-safe: call before sharing the tokenizer. A tokenizer without language
 * codes accepts only NULL, NULL. Errors: TFM_ERR_INVALID_ARG for an unknown code (the message names
 * it, lists some valid ones and says `tfm translate --model DIR --list-langs` lists all) or for
 * codes given to a tokenizer that has none; nothing changes then. */
TFM_API tfm_status tfm_tokenizer_set_langs(tfm_tokenizer *tok, const char *src_lang, const char *tgt_lang, int legacy);

/** The token a search must output first for the target language set by tfm_tokenizer_set_langs
 * (tfm_decode_config.force_first / first_id), or -1 when there is none. */
TFM_API int32_t tfm_tokenizer_forced_first(const tfm_tokenizer *tok);

/** Language code k (0, 1, ... in id order) of a multilingual tokenizer and, when id is not NULL,
 * its id; NULL past the last code and for a tokenizer without codes. */
TFM_API const char *tfm_tokenizer_lang(const tfm_tokenizer *tok, size_t k, int32_t *id);

/** Releases a tokenizer (NULL is fine). */
TFM_API void tfm_tokenizer_free(tfm_tokenizer *tok);

#ifdef __cplusplus
}
#endif
#endif
