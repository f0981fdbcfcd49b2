/* Model-facing helpers shared by greedy.c and beam.c (decode_common.c); the searches themselves.
 * Dependencies go one way: translate.c → greedy.c, beam.c → decode_common.c → the model. */
#ifndef TFM_DECODE_INTERNAL_H
#define TFM_DECODE_INTERNAL_H

#include "core_internal.h"
#include "kv_cache.h"
#include "model_context.h"
#include "tfm/decode.h"
#include "tfm/generate.h"

/** The output length limit of a source row: min(floor(a · n + b), max_len − 1), n its non-pad
 * tokens. */
int decode_limit(const tfm_model *m, const tfm_decode_config *dc, const int32_t *src_row, int S);

/** The number of tokens a hypothesis still going at the length limit `limit` keeps before its EOS:
 * limit, or with cfg->forced_eos limit − 1 (transformers' ForcedEOSTokenLogitsProcessor makes the
 * last allowed token EOS, at log p 0 — decode_eos_logp); 0 when limit is 0. */
int decode_end(const tfm_config *cfg, int limit);

/** The log-probability a hypothesis ending at the length limit adds for its EOS: 0 with
 * cfg->forced_eos (the forced token: every other logit −∞, so log_softmax gives EOS 0), else
 * EOS' own, logit − lse. */
float decode_eos_logp(const tfm_config *cfg, const float *logits, float lse);

/** Makes the ids cfg->suppress names (pad and BOS by default; pad only for Marian) impossible
 * outputs of a logit or log-probability row (−∞). */
void forbid_specials(const tfm_config *cfg, float *row);

/** The n best log-probabilities x[j] − lse of a row of logits x (V), their ids written to idx
 * (n ≥ 1 entries) in descending order, ties to the lower id, idx[V..n) = −1 when n > V; the
 * float x[j] − lse is compared, as if the row had been through log_softmax_forward, so two logits
 * that round to one log-probability tie. Once n are held, blocks of 16 logits of which none beats
 * the n-th are skipped by one vector test (beam search's candidates; docs/KERNELS.md, "The serial
 * parts of a beam step"). */
void beam_top_n(const float *x, float lse, size_t V, int n, int *idx);

/** The length n of the length penalty (Σ log p) / n^lenpen of a hypothesis that ends (EOS) at step
 * t, after t tokens: t + 1 (its tokens and EOS: fairseq's rule, and transformers 4.40's
 * generated_len = cur_len − decoder_prompt_len), less a forced first token (dc->force_first)
 * unless cfg->lenpen_count_forced (transformers counts it: ForcedBOSTokenLogitsProcessor's token
 * is generated), at least 1. */
int beam_penalty_len(const tfm_config *cfg, const tfm_decode_config *dc, int t);

/** Starts decoding B rows of src (B, S) for up to cap positions: on the KV cache (dc->use_cache)
 * lays the context's cache out and encodes the sources once; the reference path has nothing to
 * prepare. Errors: TFM_ERR_NOMEM, TFM_ERR_INVALID_ARG. */
tfm_status decode_begin(tfm_context *ctx, const tfm_decode_config *dc, int B, int S, const int32_t *src, int cap);

/** decode_begin for beam search: B sentences src (B, S), `beams` rows each (row r = i·beams + k
 * decodes sentence i; decode_step then takes B·beams rows). On the KV cache each sentence is
 * encoded once and its cross-attention keys/values are stored once (kv_cache_reserve_beams); the
 * reference path has nothing to prepare (its decode_step reads a (B·beams, S) source). Errors as
 * decode_begin. */
tfm_status decode_begin_beams(tfm_context *ctx, const tfm_decode_config *dc, int B, int beams, int S,
                              const int32_t *src, int cap);

/** The logits (B, V_tgt) of position t of every row, given prefix (B, cap): row b holds BOS and
 * the t tokens chosen so far at prefix[b·cap .. b·cap + t]. On the KV cache only prefix[·, t] is
 * read (the earlier positions are cached: call this for t = 0, 1, 2, ... in order) and src is not
 * read (the memory was encoded by decode_begin*); the reference path recomputes the whole prefix
 * (B, t + 1) of src (B, S) through model_forward. *logits points into the context (valid until its
 * next call). Errors: TFM_ERR_NOMEM. */
tfm_status decode_step(tfm_context *ctx, const tfm_decode_config *dc, int B, int S, const int32_t *src,
                       const int32_t *prefix, int t, int cap, float **logits);

/** decode_begin for B rows of a decoder-only model (no source) whose decoding starts with a
 * prefill of P positions (decode_prefill): on the KV cache also lays out the prefill's workspace
 * for P (model_prefill_reserve), so neither the prefill nor a step allocates. The reference path
 * has nothing to prepare. Errors as decode_begin. */
tfm_status decode_begin_prefill(tfm_context *ctx, const tfm_decode_config *dc, int B, int cap, int P);

/** The logits (B, V_tgt) of position t of every row, given prefix (B, cap) holding positions
 * 0..t of each row, as the first call after decode_begin_prefill(P = t + 1): on the KV cache the
 * batched prefill (model_prefill: positions [0, t] of each row alone as causal forwards of up to
 * PREFILL_CHUNK positions, their keys/values into the cache), after which decode_step continues at t + 1; the reference path is
 * decode_step(t). Every generation on the cache starts this way, so their bits agree
 * (tfm_generate, tfm_generate_prefix, tfm_generate_batch). Errors as decode_step. */
tfm_status decode_prefill(tfm_context *ctx, const tfm_decode_config *dc, int B, const int32_t *prefix, int t, int cap,
                          float **logits);

/** Beam bookkeeping after a step: row b continues row rows[b] (the KV cache follows; the
 * reference path keeps no state). */
void decode_reorder(tfm_context *ctx, const tfm_decode_config *dc, const int *rows);

/** Drops finished rows from the following steps: on the KV cache, rows keep[0..n) (strictly
 * increasing) become rows 0..n−1 (kv_cache_compact) and 1 is returned; the caller then passes the
 * n kept rows' prefixes, in that order, to decode_step. The reference path, and n == the current
 * rows or n < 1, change nothing: 0; so does a context whose decode_compact is 0 (tests: every row
 * then stays in the step until the call ends). */
int decode_compact(tfm_context *ctx, const tfm_decode_config *dc, const int *keep, int n);

/** Checks a generation's arguments as tfm_generate (bos = 1: BOS + prompt) or tfm_generate_prefix
 * (bos = 0) does — a decoder-only model, the sampling configuration, max_tokens >= 0, the prompt's
 * ids and length — and sets *limit to the most tokens it may generate: min(max_tokens, max_len −
 * P), P = n_prompt + bos − 1 the input's last position. Errors: tfm_generate's. */
tfm_status generate_check(const tfm_config *cfg, const tfm_sample_config *sc, int bos, const int32_t *prompt,
                          int n_prompt, int max_tokens, int *limit);

/** Greedy search (beam 1); same contract as tfm_model_translate, arguments already checked. */
tfm_status greedy_search(tfm_context *ctx, const tfm_decode_config *dc, int B, int S, const int32_t *src,
                         int32_t *out, int max_out, int *out_len);

/** Beam search (beam > 1); same contract as tfm_model_translate, arguments already checked. */
tfm_status beam_search(tfm_context *ctx, const tfm_decode_config *dc, int B, int S, const int32_t *src,
                       int32_t *out, int max_out, int *out_len);

/** beam_search, and (out_score nullable, (B)) the normalised score (Σ log p) / (len + 1)^lenpen of
 * each sentence's output (−∞ for a sentence whose limit allowed no hypothesis). */
tfm_status beam_search_scored(tfm_context *ctx, const tfm_decode_config *dc, int B, int S, const int32_t *src,
                              int32_t *out, int max_out, int *out_len, double *out_score);

/** beam_search keeping each sentence's N best finished hypotheses (1 <= N <= beam; tfm_model_translate_nbest's
 * contract, arguments checked): out (B·N, max_out), out_len and out_score (nullable) (B·N), row
 * i·N + k the k-th best of sentence i; the best (k = 0) is beam_search's, bit for bit. */
tfm_status beam_search_nbest(tfm_context *ctx, const tfm_decode_config *dc, int B, int S, const int32_t *src,
                             int N, int32_t *out, int max_out, int *out_len, double *out_score);

#endif
