/* tfm eval --by-length: BLEU, chrF2, line count and hypothesis/reference length ratio per
 * source-length bucket (cli/len_buckets.h), the length counted in subword tokens of the model's
 * tokenizer (tfm_tokenizer_encode: no BOS/EOS; a blank line has 0). */
#ifndef TFM_CLI_EVAL_LENGTHS_H
#define TFM_CLI_EVAL_LENGTHS_H

#include "len_buckets.h"
#include "tfm/tfm.h"

#include <stddef.h>

/* Scores hyp[i] against ref[i] per bucket of src[i]'s length and prints the table to standard
 * output; with csv (not NULL) also writes it there as CSV (atomically, cli_output), columns
 * bucket,lo,hi,lines,bleu,chrf2,len_ratio,hyp_tokens,ref_tokens (hi "inf" for the open bucket;
 * bleu, chrf2 and len_ratio "nan" for an empty bucket; len_ratio = hyp_tokens / ref_tokens,
 * sacreBLEU's "ratio" with its 13a tokens). Returns 0 on error (printed). */
int eval_by_length(const char *cmd, const tfm_tokenizer *tok, char *const *src, char *const *hyp, char *const *ref,
                   size_t n, const len_buckets *b, const char *csv);

#endif
