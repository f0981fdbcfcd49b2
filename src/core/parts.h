/* Several named byte strings in one blob: a tokenizer made of several files (Marian's source.spm,
 * target.spm and vocab.json) kept in a model as its one tokenizer.model tensor (docs/MODELS.md,
 * "Tokenizers of other families"). The layout, all lengths in decimal ASCII:
 *     "<magic>\n"  then, for each part,  "<name> <length>\n" <length bytes> "\n"
 * A magic names the kind of tokenizer ("tfm-tokenizer marian 1") and can never begin a
 * SentencePiece model (a protobuf whose first byte is a field tag, never 't'). */
#ifndef TFM_PARTS_H
#define TFM_PARTS_H

#include "core_internal.h"

#include <stddef.h>

/* The magics of the tokenizer kinds (written by src/model/io/, read by src/text/tok_*.c). */
#define PARTS_MAGIC_MARIAN "tfm-tokenizer marian 1" /* source.spm, target.spm, vocab.json */
#define PARTS_MAGIC_NLLB "tfm-tokenizer nllb 1" /* sentencepiece.bpe.model [, tokenizer_config.json,
                                                   special_tokens_map.json] */

typedef struct {
    const char *name; /* no space or newline */
    const unsigned char *data;
    size_t len;
} blob_part;

/** Packs n parts under `magic` into *out (malloc'd, *len bytes). Errors: TFM_ERR_INVALID_ARG (a
 * name with a space or newline), TFM_ERR_NOMEM. */
tfm_status parts_pack(const char *magic, const blob_part *parts, size_t n, unsigned char **out, size_t *len);

/** 1 if the blob starts with the line "<magic>\n". */
int parts_is(const void *blob, size_t len, const char *magic);

/** Checks the whole blob and points *data / *n at part `name` inside it (not copied). Errors:
 * TFM_ERR_FORMAT for a malformed blob (naming the byte offset) or a part that is absent. */
tfm_status parts_find(const void *blob, size_t len, const char *magic, const char *name, const unsigned char **data,
                      size_t *n);

#endif
