/* transformer.c — WordPiece tokenizer, as BERT and sentence encoders such as all-MiniLM-L6-v2 use it.
 *
 * Gives the ids Hugging Face `tokenizers` gives for the same tokenizer.json (checked on a few
 * hundred lines by tests/unit/text/test_wordpiece.c; docs/WORDPIECE.md). Encoding is, in order:
 *   1. special tokens ("[CLS]", "[SEP]", "[UNK]", "[PAD]", "[MASK]", or tokenizer.json's
 *      `added_tokens`) written literally in the text are found first, leftmost-longest, on the raw
 *      text, and become their ids; the text between them goes through steps 2–4;
 *   2. BERT's normaliser (Devlin et al. 2019, §3 and the BasicTokenizer of the reference code;
 *      `BertNormalizer` of tokenizer.json): clean_text drops U+0000, U+FFFD and every other-control
 *      character (categories Cc, Cf, Co; tab, LF and CR excepted) and turns whitespace into a space;
 *      handle_chinese_chars puts spaces around each CJK ideograph; strip_accents decomposes (NFD)
 *      and drops non-spacing marks (Mn); lowercase maps each character to its full lower case;
 *   3. BERT's pre-tokeniser: words are split at whitespace, and every punctuation character (ASCII
 *      ! to /, : to @, [ to `, { to ~, and Unicode categories P*) is a word of its own;
 *   4. WordPiece (Schuster & Nakajima 2012; Wu et al. 2016, §4.1): each word becomes the longest
 *      vocabulary entry that starts it, then the longest entry "##..." that continues it, and so
 *      on; a word with a part that no entry matches, or longer than max_input_chars_per_word (100)
 *      characters, becomes one [UNK];
 *   5. [CLS] first and [SEP] last, then truncation to the maximum length (the content is cut,
 *      [SEP] is kept).
 * Unicode properties (categories, canonical decompositions, lower case) come from utf8proc.
 *
 * Ids are the vocabulary's line numbers (vocab.txt, from 0) or tokenizer.json's model.vocab.
 * Arrays this API returns are allocated with malloc(); release them with free(). A tokenizer is
 * immutable once loaded: encoding may run in several threads at once. */
#ifndef TFM_WORDPIECE_H
#define TFM_WORDPIECE_H

#include "tfm/export.h"

#include "tfm/status.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** An opaque loaded WordPiece tokenizer. */
typedef struct tfm_wordpiece tfm_wordpiece;

/** What a loaded tokenizer does (tfm_wordpiece_settings()). */
typedef struct {
    int clean_text;               /* 1: drop controls, whitespace becomes ' ' (step 2) */
    int handle_chinese_chars;     /* 1: spaces around CJK ideographs */
    int strip_accents;            /* 1: NFD, then drop Mn */
    int lowercase;                /* 1: full lower-case mapping */
    size_t max_input_chars_per_word; /* longer words become [UNK] (100 for BERT) */
    size_t max_length;            /* the default truncation length of tfm_wordpiece_encode, in
                                     tokens with [CLS] and [SEP]: tokenizer.json's truncation
                                     max_length, else 512 (BERT's positions) */
    int32_t cls_id, sep_id, unk_id, pad_id; /* -1 where the vocabulary lacks the token */
} tfm_wordpiece_settings;

/** Loads a tokenizer from a Hugging Face tokenizer.json (a file whose first non-blank byte is
 * '{') or from a BERT vocab.txt (one token a line, line n holding id n; UTF-8, "\n" or "\r\n").
 * tokenizer.json: model.type must be "WordPiece"; the normalizer "BertNormalizer" (or null: no
 * normalisation) — strip_accents null means "as lowercase"; the pre_tokenizer "BertPreTokenizer";
 * special tokens from `added_tokens` (each normalized = false, no lstrip/rstrip/single_word);
 * the post_processor must add [CLS] ... [SEP] (TemplateProcessing or BertProcessing) or be null
 * (nothing added: then add_special of tfm_wordpiece_encode adds nothing either).
 * vocab.txt: BERT-base-uncased settings (clean_text, handle_chinese_chars, strip_accents and
 * lowercase on, max 100 characters a word, max_length 512); the special tokens are [PAD], [UNK],
 * [CLS], [SEP], [MASK] where the vocabulary has them.
 * Errors: TFM_ERR_IO (file named); TFM_ERR_FORMAT naming the file and line: invalid UTF-8 or a
 * NUL byte, an empty or duplicated token, bad JSON, ids not exactly 0..V-1, no [UNK];
 * TFM_ERR_UNSUPPORTED naming what tokenizer.json asks for that is not BERT's WordPiece (another
 * model, normalizer, pre-tokenizer, post-processor, or option); TFM_ERR_NOMEM. On error *out is
 * NULL. */
TFM_API tfm_status tfm_wordpiece_load(const char *path, tfm_wordpiece **out);

/** Encodes `len` bytes of UTF-8 text (a NUL byte is a character like any other: step 2 drops it)
 * into ids. add_special = 1 puts [CLS] first and [SEP] last, as the tokenizer's post-processor
 * says; 0 adds nothing. max_tokens is the most ids returned, specials included: 0 means the
 * tokenizer's max_length, SIZE_MAX no limit; a longer encoding keeps its first ids and, with
 * add_special, still ends in [SEP] (Hugging Face's truncation of a single sequence).
 * *ids is malloc'd (free() it; NULL when *n_ids is 0). Errors: TFM_ERR_FORMAT "invalid UTF-8 at
 * byte offset N (byte 0xXX)", N counted from 0 (the caller adds the file and line);
 * TFM_ERR_RANGE for max_tokens below 2 with add_special; TFM_ERR_INVALID_ARG for NULL
 * arguments; TFM_ERR_NOMEM. On error *ids is NULL and *n_ids 0. */
TFM_API tfm_status tfm_wordpiece_encode(const tfm_wordpiece *wp, const char *text, size_t len, int add_special,
                                        size_t max_tokens, int32_t **ids, size_t *n_ids);

/** The tokenizer's settings (never NULL; owned by the tokenizer). */
TFM_API const tfm_wordpiece_settings *tfm_wordpiece_settings_of(const tfm_wordpiece *wp);

/** Number of tokens V in the vocabulary; valid ids are [0, V). */
TFM_API size_t tfm_wordpiece_vocab_size(const tfm_wordpiece *wp);

/** The token of an id (NUL-terminated, owned by the tokenizer), or NULL for an id outside [0, V). */
TFM_API const char *tfm_wordpiece_id_to_token(const tfm_wordpiece *wp, int32_t id);

/** The id of a token given exactly (e.g. "##ing", "[CLS]"), or -1 if the vocabulary lacks it. */
TFM_API int32_t tfm_wordpiece_token_to_id(const tfm_wordpiece *wp, const char *token);

/** Releases a tokenizer (NULL is fine). */
TFM_API void tfm_wordpiece_free(tfm_wordpiece *wp);

#ifdef __cplusplus
}
#endif
#endif
