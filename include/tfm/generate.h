/* transformer.c — text generation with a decoder-only language model (docs/LM.md): sampling on
 * the KV cache, one token at a time, with temperature, top-k and top-p (nucleus) truncation,
 * reproducible for a seed; and the per-token negative log-likelihood (perplexity) of text. */
#ifndef TFM_GENERATE_H
#define TFM_GENERATE_H

#include "tfm/export.h"

#include "tfm/bpe.h"
#include "tfm/model.h"
#include "tfm/tokenizer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Thread-safety (tfm/model.h): these calls read the model and write only the context they are
 * given; threads with their own contexts may call them concurrently on one model. */

/** Streams the text of a growing id sequence (tfm generate): after each new id the whole
 * sequence is decoded again and only the bytes that can no longer change are handed out, so the
 * concatenation of everything handed out equals tfm_tokenizer_decode of the final sequence.
 * SentencePiece decodes an unfinished UTF-8 sequence of byte-fallback pieces as one U+FFFD per
 * byte (at most 3 bytes: a 4-byte character lacks at most 3), so every trailing U+FFFD, up to 3,
 * is held back until a later piece, or the end, settles it. If a decode ever fails to extend what
 * was handed out (not expected of SentencePiece), `diverged` is set and nothing more is handed out;
 * the caller then has `text` (the last decode) to show in full. Fields are read-only to callers. */
typedef struct {
    const tfm_tokenizer *tok; /* SentencePiece, or NULL with bpe */
    const tfm_bpe *bpe;       /* byte-level BPE (tfm_text_stream_init_bpe), or NULL */
    int clean_up;             /* bpe: transformers' clean_up_tokenization_spaces */
    int32_t *ids;   /* [cap] the prompt, then each pushed id */
    size_t n, cap;
    char *text;     /* the last decode (NUL-terminated, len bytes) */
    size_t len;
    char *shown;    /* the bytes handed out so far (n_shown); a copy, to detect a change */
    size_t n_shown, shown_cap;
    int diverged;
} tfm_text_stream;

/** Starts a stream for `n_prompt` prompt ids plus at most `max_new` pushed ids. Errors:
 * TFM_ERR_INVALID_ARG (NULL argument), TFM_ERR_NOMEM. On error *s is empty (free is safe). */
TFM_API tfm_status tfm_text_stream_init(tfm_text_stream *s, const tfm_tokenizer *tok, const int32_t *prompt,
                                        size_t n_prompt, size_t max_new);

/** tfm_text_stream_init for a byte-level BPE tokenizer (tfm/bpe.h; a Hugging Face language
 * model's): decodes with tfm_bpe_decode, special tokens left out (transformers' decode with
 * skip_special_tokens=True), and with clean_up = 1 (tokenizer_config.json's
 * clean_up_tokenization_spaces) transformers' clean-up of the decoded text: " ." " ?" " !" " ,"
 * lose their space, " ' " becomes "'", " n't" " 'm" " 's" " 've" " 're" lose their space, in that
 * order. A trailing U+FFFD (an unfinished UTF-8 sequence) and, with clean_up, a trailing space or
 * start of one of those patterns wait for the next id, so the streamed bytes equal the final
 * text. Errors as tfm_text_stream_init. */
TFM_API tfm_status tfm_text_stream_init_bpe(tfm_text_stream *s, const tfm_bpe *bpe, int clean_up, const int32_t *prompt,
                                            size_t n_prompt, size_t max_new);

/** Appends `n` ids (n may be 0: then only re-decodes, e.g. to show the prompt) and hands out in
 * *out (*out_len bytes, pointing into s->text, valid until the next call) the newly settled bytes;
 * `final` = 1 settles everything (call it once after the last id). Errors: TFM_ERR_RANGE (more
 * than max_new ids pushed, or an id outside the vocabulary), TFM_ERR_NOMEM; then *out_len is 0. */
TFM_API tfm_status tfm_text_stream_push(tfm_text_stream *s, const int32_t *ids, size_t n, int final, const char **out,
                                        size_t *out_len);

/** Frees the stream's buffers (s itself is the caller's); s may be NULL. */
TFM_API void tfm_text_stream_free(tfm_text_stream *s);

/** How each token is chosen from the logits z (V) of the newest position. Pad and BOS are never
 * chosen. T = temperature:
 *   T = 0      greedy: the most likely token (ties: the lowest id); top_k/top_p are ignored;
 *   T > 0      p_i ∝ exp(z_i / T), then truncated — top_k > 0 keeps the k most likely tokens
 *              (Fan et al. 2018), top_p < 1 keeps the smallest most-likely-first set whose
 *              probability (renormalised over what top_k kept, as Hugging Face's warpers) reaches top_p (nucleus sampling, Holtzman et al. 2020, §3.1; the most
 *              likely token is always kept, so top_p → 0 is greedy) — renormalised and drawn with
 *              one uniform number. */
typedef struct {
    float temperature; /* >= 0; 0 = greedy */
    int top_k;         /* >= 0; 0 = no top-k cut */
    float top_p;       /* in (0, 1]; 1 = no nucleus cut */
    uint64_t seed;     /* the draw of step n is a pure function of (seed, n): counter-based
                          (splitmix64, src/core/hash.h), so a run is reproducible and does not
                          depend on anything drawn before */
} tfm_sample_config;

/** temperature 1, top_k 0, top_p 1, seed 1. */
TFM_API tfm_sample_config tfm_sample_config_default(void);

/** Checks a sampling configuration. Errors: TFM_ERR_INVALID_ARG naming the field. */
TFM_API tfm_status tfm_sample_config_validate(const tfm_sample_config *cfg);

/** Called with each generated token as soon as it is chosen (EOS is not passed); return nonzero
 * to stop generating. */
typedef int (*tfm_token_fn)(int32_t id, void *user);

/** Generates up to max_tokens tokens after BOS + prompt[0..n_prompt) with the context's decoder-only
 * model, on its KV cache (use_cache = 1; BOS + the prompt go through the decoder as one causal
 * forward, the linear layers on all their positions at once, which fills the cache and gives the
 * first token — the batched prefill, docs/LLM.md — then each chosen token is one decoding step) or,
 * for tests, recomputing the whole prefix every step (use_cache = 0: the same tokens,
 * except where rounding decides: the two paths' logits differ in their last bits, so the draw can
 * differ when u falls within that rounding of a boundary of the cumulative sum, about 1e-7 per
 * token, or when a --top-k/--top-p cut falls between two probabilities equal within rounding;
 * docs/LM.md).
 * Stops at EOS (not stored), after max_tokens, when the model's max_len positions are used up
 * (max_len − n_prompt tokens at most: every position read is below max_len), or when `on_token`
 * (nullable) returns nonzero.
 * out[max_out] receives the tokens (those past max_out are dropped), *out_len their count.
 * Errors: TFM_ERR_INVALID_ARG (not decoder-only, bad config, max_tokens < 0); TFM_ERR_RANGE
 * (a prompt id outside the vocabulary, or BOS + prompt of more than max_len positions; exactly
 * max_len gets at most one token); TFM_ERR_NOMEM. */
TFM_API tfm_status tfm_generate(tfm_context *ctx, const tfm_sample_config *cfg, const int32_t *prompt, int n_prompt,
                                int max_tokens, int use_cache, int32_t *out, int max_out, int *out_len,
                                tfm_token_fn on_token, void *user);

/** tfm_generate_batch's callback: token `id` of row `row`; return nonzero to stop that row. */
typedef int (*tfm_row_token_fn)(int row, int32_t id, void *user);

/** B generations at once whose prompts have the same length: row b is BOS + prompts[b · n_prompt ..
 * + n_prompt), sampled with sc[b] for up to max_tokens[b] tokens, into out (B, max_out) and
 * out_len[b]; each row as tfm_generate would do it alone (its stops, its limits, its draws
 * numbered from 0), on one KV cache whose every step decodes all live rows at the same position.
 * A row stops at EOS, after its budget, at the model's max_len, or when on_token (nullable)
 * returns nonzero for it; it then leaves the following steps. A row's logits are computed from
 * that row alone (docs/KERNELS.md "Same bits for a row alone or in a batch"): each row's BOS +
 * prompt is prefilled alone (tfm_generate's prefill, bit for bit), and with B <= 8 the
 * decoding steps run the kernels of a single row, so every row's tokens are bit for bit those of
 * tfm_generate with the same prompt, configuration and use_cache; with 9-128 rows the step's
 * linear layers round differently (docs/KERNELS.md "Batched steps") and a draw that falls within
 * that rounding of a boundary can differ. The batching of continuous-batching servers (Yu et al.
 * 2022, "Orca", iteration-level scheduling), restricted to rows at one position (tfm_gen_batch below:
 * rows joining and leaving at any step).
 * Errors: tfm_generate's, naming the row; TFM_ERR_INVALID_ARG for B < 1. On error out_len is
 * what was generated so far. */
TFM_API tfm_status tfm_generate_batch(tfm_context *ctx, int B, const tfm_sample_config *sc, const int32_t *prompts,
                                      int n_prompt, const int *max_tokens, int use_cache, int32_t *out, int max_out,
                                      int *out_len, tfm_row_token_fn on_token, void *user);
/** Continuous batching (Yu et al. 2022, "Orca", iteration-level scheduling): generations that join
 * one running batch at any step and leave it when they end, on one context's KV cache, whose rows
 * sit at different positions. Each row is tfm_generate's (tfm_gen_batch_add) or
 * tfm_generate_prefix's (tfm_gen_batch_add_prefix) generation of its prompt with its sampling
 * configuration and budget: its input is prefilled into its slot of the cache over the steps after it
 * is added, one chunk of up to 256 positions a step (that row alone, the chunks tfm_generate's
 * prefill runs, so a long prompt does not stall the other rows for its whole prefill; docs/LLM.md),
 * then it gets one token per step,
 * beside the other rows at their own positions. A row's logits are computed from that row alone (its own
 * positions, position encoding and keys), and with a capacity of at most 8 rows every step runs
 * the kernels of a single row (docs/KERNELS.md "Same bits for a row alone or in a batch"), so each
 * row's tokens are bit for bit those of tfm_generate alone with the same prompt and configuration
 * on the KV cache, whatever joins or leaves meanwhile; with 9-128 rows the steps' linear layers
 * round differently (docs/KERNELS.md "Batched steps") and a draw within that rounding of a
 * boundary can differ. The batch owns the context's KV cache until tfm_gen_batch_free: any other
 * decoding call on that context (tfm_generate, a translation, ...) meanwhile ruins the batch. */
typedef struct tfm_gen_batch tfm_gen_batch;

/** Why a row of a tfm_gen_batch ended. */
typedef enum {
    TFM_GEN_EOS = 0,    /* it chose an end-of-sequence id (not passed to on_token) */
    TFM_GEN_LENGTH = 1, /* its max_tokens, or the model's max_len positions, used up */
    TFM_GEN_STOPPED = 2 /* on_token returned nonzero for it */
} tfm_gen_end;

/** tfm_gen_batch_step's end callback: the row in `slot` ended (`why`) after n_tokens tokens; its
 * slot is free for tfm_gen_batch_add once the step returns. */
typedef void (*tfm_row_end_fn)(int slot, tfm_gen_end why, int n_tokens, void *user);

/** Starts a continuous batch of at most `rows` (1..128) generations at a time on ctx, whose model
 * is decoder-only. Reserves the KV cache for `rows` rows of a few positions; tfm_gen_batch_add grows
 * it when a row needs more (at most max_len positions a row), so a step never allocates.
 * Errors: TFM_ERR_INVALID_ARG (NULL argument, rows outside 1..128, not decoder-only),
 * TFM_ERR_NOMEM. *out is NULL on error. */
TFM_API tfm_status tfm_gen_batch_create(tfm_context *ctx, int rows, tfm_gen_batch **out);

/** Adds a generation of up to max_tokens tokens after BOS + prompt[0..n_prompt) (tfm_generate's
 * input), sampled with *sc (copied), in a free slot returned in *slot (0..rows−1): its input is
 * prefilled by the following tfm_gen_batch_steps, one chunk of up to 256 positions each (the cache
 * and the prefill's workspace grow here if they must, never in a step), and it gets its first
 * token at the step that prefills its last chunk: the next one for an input of up to 256
 * positions. A row with nothing to generate (max_tokens 0) ends at the next step without a
 * token. Not from inside a step's callbacks. Errors: TFM_ERR_INVALID_ARG (NULL argument, bad
 * config, max_tokens < 0, called from a callback), TFM_ERR_RANGE (no free slot: `rows` live
 * already; a prompt id outside the vocabulary; BOS + prompt of more than max_len positions),
 * TFM_ERR_NOMEM (growing the cache or the prefill's workspace: no row is added and the live rows
 * are unchanged, but the cache may stay grown when its growth succeeded and the workspace's
 * failed). */
TFM_API tfm_status tfm_gen_batch_add(tfm_gen_batch *gb, const tfm_sample_config *sc, const int32_t *prompt,
                                     int n_prompt, int max_tokens, int *slot);

/** tfm_gen_batch_add without the BOS (tfm_generate_prefix's input): prefix[0..n_prefix), n_prefix
 * >= 1, is the whole input. Errors as tfm_gen_batch_add, and TFM_ERR_INVALID_ARG for an empty
 * prefix. */
TFM_API tfm_status tfm_gen_batch_add_prefix(tfm_gen_batch *gb, const tfm_sample_config *sc, const int32_t *prefix,
                                            int n_prefix, int max_tokens, int *slot);

/** One step of every row in the batch (nothing when it is empty): each row gets its next token —
 * the rows that had their first token from one decoding step of them all, each at its own
 * position; a row still prefilling, the next chunk of its input, and its first token from that
 * prefill if it was the last chunk — passed to on_token(slot, id, user) (nullable) at once unless
 * it is an end-of-sequence id. A row that ends at this step — EOS,
 * its budget or max_len used up, on_token nonzero — is passed to on_end (nullable) and leaves the
 * batch. Rows are visited in the order they joined the decoding step, the new ones last (by slot).
 * No allocation. Errors: TFM_ERR_INVALID_ARG
 * (NULL gb, or called from its own callback). */
TFM_API tfm_status tfm_gen_batch_step(tfm_gen_batch *gb, tfm_row_token_fn on_token, tfm_row_end_fn on_end,
                                      void *user);

/** Ends the row in `slot` now, between steps (a client gone): it leaves the batch and its slot is
 * free; on_end is not called. Errors: TFM_ERR_INVALID_ARG (NULL gb, a slot that holds no row, or
 * called from a step's callback). */
TFM_API tfm_status tfm_gen_batch_cancel(tfm_gen_batch *gb, int slot);

/** Rows in the batch now (added, not ended); 0 for NULL. */
TFM_API int tfm_gen_batch_rows(const tfm_gen_batch *gb);

/** Frees the batch (gb may be NULL); the context stays the caller's. */
TFM_API void tfm_gen_batch_free(tfm_gen_batch *gb);

/** tfm_generate without the BOS: `prefix` (n_prefix >= 1 ids) is the whole input, its first id at
 * position 0 — for models whose tokenizer writes its own start (a Hugging Face language model's
 * template: Llama's BOS; GPT-2 adds none; docs/LLM.md). Token k is predicted at position
 * n_prefix − 1 + k (at most max_len − n_prefix + 1 tokens). Errors as tfm_generate, and
 * TFM_ERR_INVALID_ARG for an empty prefix. */
TFM_API tfm_status tfm_generate_prefix(tfm_context *ctx, const tfm_sample_config *cfg, const int32_t *prefix,
                                       int n_prefix, int max_tokens, int use_cache, int32_t *out, int max_out,
                                       int *out_len, tfm_token_fn on_token, void *user);

/** Chooses one token from logits (V) as tfm_sample_config says, for draw number `step` (the
 * counter of the seed's stream). Overwrites logits with the truncated, renormalised distribution
 * (probabilities; 0 outside the kept set) — useful to tests. The draw is the inverse CDF of the
 * kept tokens in id order (not most likely first), and a top-k/top-p cut also keeps every token
 * whose logit is within 1e-4 of the last one kept, so logits that differ only in the order
 * rounding gives near-equal probabilities draw the same token (docs/LM.md). scratch needs V ints.
 * Returns the id.
 * No allocation; never fails for a validated config. */
TFM_API int32_t tfm_sample_token(const tfm_sample_config *cfg, const tfm_config *model_cfg, float *logits, int V,
                                 uint64_t step, int32_t *scratch);

/** What tfm_perplexity_text measured: perplexity = exp(nll / tokens). */
typedef struct {
    size_t lines;          /* non-blank lines scored */
    size_t skipped_blank;  /* blank lines skipped (tfm_text_is_blank) */
    size_t truncated;      /* lines cut to the model's max_len − 1 tokens (their EOS is then not scored) */
    size_t tokens;         /* predicted tokens: every subword of each line, plus its EOS */
    double nll;            /* Σ −ln p(token | BOS, earlier tokens), nats */
    double perplexity;     /* exp(nll / tokens) */
} tfm_perplexity_stats;

/** Scores n lines of UTF-8 text, each a sequence BOS + its tokens + EOS (docs/LM.md): the negative
 * log-likelihood of every token and of EOS given everything before it in its line (BOS is given,
 * not predicted). Blank lines are skipped. A line longer than max_len − 1 tokens keeps its first
 * max_len tokens and its EOS is not scored. Lines are sorted by length and scored in batches of
 * at most batch_tokens tokens (rows × the longest, padding included; at least one line a batch);
 * the total is summed in the lines' order, so it does not depend on batch_tokens. Memory grows
 * with the lines given, not with batch_tokens. Errors: TFM_ERR_INVALID_ARG (not decoder-only, or a tokenizer that does not fit the
 * model); TFM_ERR_FORMAT for invalid UTF-8 ("line N: ...", N = i + 1); TFM_ERR_NOMEM. */
TFM_API tfm_status tfm_perplexity_text(tfm_context *ctx, const tfm_tokenizer *tok, const char *const *lines, size_t n,
                                       int batch_tokens, tfm_perplexity_stats *stats);

/** Where tfm_perplexity_text_detail puts the loss per position and per line; every array is the
 * caller's and may be NULL. Position p is the decoder input position that predicts the token
 * (p = 0: the first subword, predicted from BOS alone; p = k: the token after k subwords), so
 * Σ_p nll_at[p] over every position a line reaches is that line's loss, and over all lines the
 * file's (stats->nll, up to the order of the double additions). */
typedef struct {
    size_t n_positions; /* entries of nll_at and tokens_at (max_len covers every position) */
    double *nll_at;     /* [n_positions] Σ over lines of −ln p(token predicted at position p), nats */
    size_t *tokens_at;  /* [n_positions] tokens predicted at position p */
    double *line_nll;   /* [n] each line's Σ −ln p (0 for a blank line) */
    size_t *line_tokens; /* [n] each line's predicted tokens (0 for a blank line) */
} tfm_perplexity_detail;

/** tfm_perplexity_text, and with `detail` (nullable) the loss per position and per line (above),
 * summed in the lines' order, so independent of batch_tokens. Holds every token's log-probability
 * until the end (4 bytes a token). Errors: those of tfm_perplexity_text. */
TFM_API tfm_status tfm_perplexity_text_detail(tfm_context *ctx, const tfm_tokenizer *tok, const char *const *lines,
                                              size_t n, int batch_tokens, tfm_perplexity_stats *stats,
                                              tfm_perplexity_detail *detail);
/** Perplexity of id sequences as transformers computes a causal LM's loss (`model(ids,
 * labels=ids).loss`), summed over sequences (docs/LLM.md): each rows[i] (len[i] ids, as the
 * tokenizer and its template gave them; no BOS or EOS added here) is scored teacher-forced, every
 * id after the first predicted; a row longer than max_len keeps its first max_len ids (counted in
 * truncated). Rows of fewer than 2 ids predict nothing. Batched by length in at most batch_tokens
 * tokens as tfm_perplexity_text (the result does not depend on the batching); the padding of a
 * batch is never read by a real position (causal attention, right padding), so models without a
 * padding token (pad_id −1) score exactly. stats->lines counts the rows, skipped_blank is 0.
 * Errors: TFM_ERR_INVALID_ARG (not decoder-only, NULL arguments); TFM_ERR_RANGE (an id outside the
 * vocabulary: "row N position P"); TFM_ERR_NOMEM. */
TFM_API tfm_status tfm_perplexity_ids(tfm_context *ctx, const int32_t *const *rows, const size_t *len, size_t n,
                                      int batch_tokens, tfm_perplexity_stats *stats);

#ifdef __cplusplus
}
#endif
#endif
