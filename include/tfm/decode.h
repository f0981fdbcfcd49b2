/* transformer.c — decoding: greedy search and beam search over the encoder–decoder, on a KV cache
 * (keys and values of decoded positions kept, the encoder's computed once per sentence). */
#ifndef TFM_DECODE_H
#define TFM_DECODE_H

#include "tfm/export.h"

#include "tfm/model.h"
#include "tfm/tokenizer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Thread-safety (tfm/model.h): these calls read the model and write only the context they are
 * given; threads with their own contexts may call them concurrently on one model. */

/** When beam search stops working on a sentence (its result is always its best finished
 * hypothesis by the length-penalised score):
 *   TFM_BEAM_STOP_FINISHED  once K hypotheses have finished, an EOS counting only when it is among
 *                           the K best candidates of a step (fairseq's rule; CTranslate2's with
 *                           patience 1 and a length penalty). The default: on a trained model a
 *                           sentence stops a few steps after its best hypothesis ends.
 *   TFM_BEAM_STOP_BOUND     only when no live beam can still beat the best finished hypothesis:
 *                           its score can only fall and its length grow to the limit + 1, so
 *                           score / (limit + 1)^lenpen bounds what it can reach (tensor2tensor's
 *                           rule, the paper's code). Exact for the beam, often decodes to the
 *                           length limit with lenpen > 0: 1.3-1.5x the time of FINISHED
 *                           at beam 4 on the demo's model (README). */
typedef enum { TFM_BEAM_STOP_FINISHED = 0, TFM_BEAM_STOP_BOUND = 1 } tfm_beam_stop;

typedef struct {
    int beam;         /* beam size K; 1 is greedy search */
    float lenpen;     /* length penalty α as fairseq's lenpen: a finished hypothesis scores
                         (Σ log p) / length^α, length counting its tokens and EOS; 0 ranks by total
                         log-probability, 1 by the per-token average */
    float max_len_a;  /* at most floor(a · source length + b) output tokens (EOS excluded), */
    int max_len_b;    /* never more than the model's max_len − 1; with the model's forced_eos
                         (Marian) the last of them is a forced EOS (docs/MARIAN.md) */
    int use_cache;    /* 1: KV cache; 0: recompute the whole prefix every step (the reference path,
                         for tests: it gives the same tokens, only slower) */
    tfm_beam_stop beam_stop; /* beam > 1: when a sentence stops (above) */
    int force_first;  /* 1: every output starts with first_id whatever the logits say: a multilingual
                         model's target language code (NLLB's forced BOS, transformers'
                         forced_bos_token_id). It scores log-probability 0; the length of the length
                         penalty counts it only when the model's lenpen_count_forced is set (Marian,
                         NLLB: transformers' generated_len counts it; fairseq's rule, the default,
                         does not). It is out[0] of each row. 0: none (default) */
    int first_id;     /* the forced first token when force_first; inside the target vocabulary */
} tfm_decode_config;

/** beam 1 (greedy), lenpen 1.0, max length 1.5 · source + 10, KV cache on, beam stop FINISHED, no
 * forced first token. */
TFM_API tfm_decode_config tfm_decode_config_default(void);

/** Checks a decoding configuration: beam in [1, 256], max_len_a >= 0 and max_len_b >= 0, lenpen in
 * [0, 10], a known beam_stop. Every decoding call checks its config this way first. Errors:
 * TFM_ERR_INVALID_ARG naming the field. */
TFM_API tfm_status tfm_decode_config_validate(const tfm_decode_config *cfg);

/** Translates B source rows src (B, S) with the context's model (its KV cache and workspace are
 * the context's, grown as needed), each padded at the end with pad_id, decoding from BOS
 * until EOS or the length limit (BOS: tfm_config_decoder_start, docs/MODELS.md; the ids the
 * configuration suppresses are never output). out (B, max_out) receives each row's tokens without BOS and EOS,
 * out_len[B] their counts (tokens past max_out are dropped; max_out >= the limit keeps all).
 * Ties between equally likely tokens go to the lowest id.
 * Errors: TFM_ERR_INVALID_ARG (bad sizes or config), TFM_ERR_RANGE (an id outside the source
 * vocabulary, or S > max_len), TFM_ERR_NOMEM. */
TFM_API tfm_status tfm_model_translate(tfm_context *ctx, const tfm_decode_config *cfg, int B, int S,
                                       const int32_t *src, int32_t *out, int max_out, int *out_len);

/** tfm_model_translate keeping each sentence's n_best best finished hypotheses of the beam
 * (1 <= n_best <= cfg->beam), ranked by the length-penalised score (Σ log p) / length^lenpen
 * (length counting EOS) that picks the one best: out (B · n_best, max_out), out_len and out_score
 * (B · n_best; out_score may be NULL) hold, at row i · n_best + k, the k-th best hypothesis of
 * sentence i (tokens without BOS and EOS), its length and its score; rank 0 is tfm_model_translate's
 * output bit for bit, and equal scores keep the order in which the hypotheses finished. A sentence
 * with fewer finished hypotheses than n_best (a beam cut by the length limit, or
 * TFM_BEAM_STOP_BOUND stopping early) gets out_len −1 and score −∞ in the missing ranks. Greedy
 * search (beam 1) has no scores: out_score NaN. Beam search's n-best list (Sutskever et al. 2014,
 * §3.2; fairseq's --nbest). Errors: tfm_model_translate's; TFM_ERR_INVALID_ARG for n_best outside
 * [1, beam]. */
TFM_API tfm_status tfm_model_translate_nbest(tfm_context *ctx, const tfm_decode_config *cfg, int B, int S,
                                             const int32_t *src, int n_best, int32_t *out, int max_out, int *out_len,
                                             double *out_score);

/** Reserves the context's memory for tfm_model_translate calls of up to B sentences of up to S
 * source tokens with `cfg` (its beam, use_cache and length limit): the KV cache, the decoder's
 * transposed weights and the encoder's workspace are allocated now, for the largest such call, so
 * later calls within those sizes re-carve them and allocate nothing (tfm_translate_text reserves
 * its longest batch before the first, as its batches grow in length). Optional: a call that needs
 * more grows the memory itself. With cfg->use_cache = 0 it does nothing.
 * The context holds its own copy of the decoder's weights, transposed, for calls of 9–128 rows
 * (docs/KERNELS.md, "Batched steps"): counted in tfm_memory_estimate_decode*'s `workspace`.
 * Errors: those of tfm_model_translate's checks (a model that is not encoder-decoder, B < 1, S < 0,
 * beam outside [1, 256], a bad length limit, length penalty or stop rule: TFM_ERR_INVALID_ARG;
 * S > max_len: TFM_ERR_RANGE), TFM_ERR_NOMEM. */
TFM_API tfm_status tfm_context_reserve_decode(tfm_context *ctx, const tfm_decode_config *cfg, int B, int S);

/** What tfm_translate_text did. */
typedef struct {
    size_t sentences;       /* sentences translated (empty ones included) */
    size_t src_tokens;      /* subword tokens read */
    size_t out_tokens;      /* subword tokens written (EOS excluded) */
    size_t n_truncated;     /* sources cut to the model's max_len tokens */
    size_t first_truncated; /* index of the first of them (valid if n_truncated > 0) */
    double seconds;         /* wall-clock time of encoding, decoding and detokenising */
} tfm_translate_stats;

/** Translates n UTF-8 sentences with the context's model and its tokenizer: out[i] receives a malloc'd,
 * NUL-terminated translation of src[i] (free() each), always one line: any line break the
 * model spells (a byte piece for "\n", U+2028, ...) becomes a space (tfm_text_one_line). A blank
 * sentence (tfm_text_is_blank: empty, or only white space, invisible format characters or
 * controls) gives an empty translation. The tokenizer must be the model's (tfm_tokenizer_check_model). A source longer than the model's max_len tokens is cut to max_len tokens
 * (counted in stats). Sentences are sorted by length and decoded in batches of up to
 * batch_sentences (divided by the beam size), so little is padding; the batch buffers are sized
 * from the batches there are, so a batch_sentences far above n costs nothing.
 * Errors: TFM_ERR_INVALID_ARG for a tokenizer that does not fit the model; TFM_ERR_FORMAT for
 * invalid UTF-8 ("line N: ...", N = i + 1, with the byte offset),
 * those of tfm_model_translate, TFM_ERR_NOMEM; TFM_ERR_INVALID_ARG for a NULL ctx, tok, cfg, or src/out
 * with n > 0. `stats` may be NULL. On error every out[i] is NULL. */
TFM_API tfm_status tfm_translate_text(tfm_context *ctx, const tfm_tokenizer *tok, const tfm_decode_config *cfg,
                                      const char *const *src, size_t n, int batch_sentences, char **out,
                                      tfm_translate_stats *stats);

/** tfm_translate_text with each sentence's n_best best translations (tfm_model_translate_nbest,
 * 1 <= n_best <= cfg->beam): out (n · n_best) receives at i · n_best + k the k-th best translation
 * of src[i] (malloc'd, one line; free() each), NULL where the beam finished fewer than k + 1
 * hypotheses. out[i · n_best] is tfm_translate_text's out[i], the same bytes for the same input
 * and batch_sentences (n_best does not change the search, only what it keeps); a blank sentence
 * gives "" and NULLs. stats count the best translations' tokens. On error every out entry is NULL.
 * Errors: tfm_translate_text's; TFM_ERR_INVALID_ARG for n_best outside [1, beam]. */
TFM_API tfm_status tfm_translate_text_nbest(tfm_context *ctx, const tfm_tokenizer *tok, const tfm_decode_config *cfg,
                                            const char *const *src, size_t n, int batch_sentences, int n_best,
                                            char **out, tfm_translate_stats *stats);

#ifdef __cplusplus
}
#endif
#endif
