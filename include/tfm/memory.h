/* transformer.c — memory up front: what a training or decoding run will need, compared with what
 * the machine has, before any of the work (docs/FUZZING.md, "Memory up front").
 *
 * Every large block tfm uses is an arena sized before the first step (parameters, gradients and
 * optimizer state, the activation workspace, the backward workspace, the KV cache), so the
 * estimate adds up those arenas with the very layout functions that size them, plus the data and a
 * measured constant for the process itself (code, libraries, thread stacks). A run that would not
 * fit fails at once, naming the estimate and the flag to lower, instead of being killed for want
 * of memory halfway. */
#ifndef TFM_MEMORY_H
#define TFM_MEMORY_H

#include "tfm/export.h"

#include "tfm/data.h"
#include "tfm/decode.h"
#include "tfm/model.h"
#include "tfm/status.h"
#include "tfm/train.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Resident memory of a `tfm` process apart from the arenas (code, BLIS, SentencePiece, OpenMP
 * threads, stdio): 13 MiB, the peak RSS of `tfm --version` (12.7 MiB on 2026-12-03; 7.9 MiB for
 * `tfm train` on a 1+1-layer, d_model 8 model when first measured; docs/FUZZING.md). */
#define TFM_MEMORY_BASE_BYTES ((size_t)13 << 20)

/** An estimate, in bytes, part by part; total is their sum. */
typedef struct {
    size_t params;      /* P · 4: the parameters (P = tfm_config_param_count) */
    size_t grads;       /* training: P · 4 */
    size_t optimizer;   /* training: Adam's m and v, 2 · P · 4 (SGD: 0) */
    size_t activations; /* the context's workspace for the largest batch (training: the saved forward
                           activations, dropout masks, logits); decoding: the encoder's pass */
    size_t workspace;   /* training: the backward workspace of the largest batch, target rows,
                           losses and their log-sum-exps, and validation's context; decoding on
                           the KV cache with a decoder-only model: the batched prefill's workspace
                           (the prompt in chunks of 256 positions: linear in the positions), else 0 */
    size_t cache;       /* decoding with the KV cache: keys and values of every decoded position of
                           every row (beam rows included) and the memory's cross-attention K|V */
    size_t data;        /* training: the dataset's ids and the batchers; decoding: the text */
    size_t base;        /* TFM_MEMORY_BASE_BYTES */
    size_t total;
} tfm_memory_estimate;

/** Estimates a training run of `cfg` with `optimizer` on the kernels `kernels` (the trainer's
 * tfm_train_config.kernels; NULL: the default, tuned ones — the reference attention keeps every
 * attention's weights and needs more) over the batches of `train` (and `valid`, may be NULL):
 * parameters, gradients, optimizer state, and for the activation and backward workspaces the
 * largest over every batch shape of an epoch (tfm_train_loop reserves exactly those), the dataset
 * ids (data_bytes: what the datasets hold, e.g. from tfm_memory_dataset_bytes) and base.
 * Formula, with P parameters: 4P (params) + 4P (grads) + 8P (Adam) + max over shapes of the arena
 * layouts + data + base. Errors: TFM_ERR_INVALID_ARG (NULL), TFM_ERR_NOMEM (sizes overflow). */
TFM_API tfm_status tfm_memory_estimate_train(const tfm_config *cfg, tfm_optimizer optimizer,
                                             const tfm_kernel_opts *kernels, const tfm_batcher *train,
                                             const tfm_batcher *valid, size_t data_bytes, tfm_memory_estimate *out);

/** Bytes a dataset holds in memory: its ids (4 bytes each), offsets and line numbers, and the
 * per-pair indexes a batcher over it keeps (3 words a pair). */
TFM_API size_t tfm_memory_dataset_bytes(const tfm_dataset *ds);

/** Estimates decoding with `cfg`: `rows` rows decoded together (sentences × beam), sources of at
 * most max_src tokens, at most max_out output tokens; use_cache 1 for the KV cache (the cache of
 * (rows, max_src, max_out + 1) positions plus the encoder's activations; for a decoder-only model,
 * whose prompt and output share the max_out + 1 positions, plus the workspace of a prefill of that
 * many positions, docs/LLM.md), 0 for recomputation (the activations of (rows, max_src, max_out +
 * 1)); text_bytes for the input and output lines.
 * Errors: TFM_ERR_INVALID_ARG (bad sizes), TFM_ERR_NOMEM (sizes overflow). */
TFM_API tfm_status tfm_memory_estimate_decode(const tfm_config *cfg, int rows, int max_src, int max_out, int use_cache,
                                              size_t text_bytes, tfm_memory_estimate *out);

/** tfm_memory_estimate_decode for beam search: `sentences` sentences of `beams` rows each. On the
 * KV cache each sentence is encoded once and its memory (cross-attention keys/values, source mask)
 * stored once for its beams: the cache of (sentences · beams, max_src, max_out + 1) positions with
 * the memory of `sentences` rows, plus the encoder's activations for `sentences` rows; without the
 * cache, as tfm_memory_estimate_decode of sentences · beams rows. beams 1 is
 * tfm_memory_estimate_decode. Errors: as tfm_memory_estimate_decode. */
TFM_API tfm_status tfm_memory_estimate_decode_beams(const tfm_config *cfg, int sentences, int beams, int max_src, int max_out,
                                                    int use_cache, size_t text_bytes, tfm_memory_estimate *out);

/** Estimates tfm_translate_text's run over n sources of src_len[i] tokens each (0: a blank line,
 * which is not decoded; a count above cfg->max_len is cut to it, as decoding does), decoded with
 * dc in batches of batch_sentences sentences (divided by dc->beam, at least 1) sorted by length as
 * tfm_translate_text sorts them. Each batch is estimated as tfm_memory_estimate_decode_beams estimates it
 * (its sentences of dc->beam rows each, max_src = its longest source S, max_out = min(max_len − 1,
 * floor(a·S + b))), and the activations and the KV cache are each the largest over the batches
 * (the context's two arenas grow to the largest batch and stay). data = text_bytes plus 4 bytes
 * per source token (the encoded sources tfm_translate_text keeps). No batch (n = 0, or every line
 * blank): parameters, data and base only.
 * Errors: TFM_ERR_INVALID_ARG (NULL, batch_sentences < 1, bad dc), TFM_ERR_NOMEM (out of memory,
 * sizes overflow). */
TFM_API tfm_status tfm_memory_estimate_translate(const tfm_config *cfg, const tfm_decode_config *dc, int batch_sentences,
                                                 const size_t *src_len, size_t n, size_t text_bytes,
                                                 tfm_memory_estimate *out);

/** The memory the machine can give a new run: MemAvailable of /proc/meminfo, in bytes.
 * Errors: TFM_ERR_IO if /proc/meminfo cannot be read or has no MemAvailable line. */
TFM_API tfm_status tfm_memory_available(size_t *bytes);

/** Parses a size such as "2G", "512M", "1.5GiB", "800k", "1000000" (bytes): a non-negative decimal
 * number, optionally with a unit K, M, G or T (binary: 2^10, 2^20, ...; "B", "iB" and lower case
 * accepted), no spaces. Errors: TFM_ERR_INVALID_ARG naming the text. */
TFM_API tfm_status tfm_memory_parse(const char *text, size_t *bytes);

/** Writes `bytes` for people ("1.50 GiB", "12.0 MiB", "900 B") into buf (snprintf-like). */
TFM_API int tfm_memory_format(size_t bytes, char *buf, size_t cap);

/** Compares an estimate with a limit: TFM_OK if e->total <= limit; otherwise TFM_ERR_NOMEM with a
 * message giving the estimate part by part, the limit and where it comes from (limit_name, e.g.
 * "--max-memory 2G" or "MemAvailable of /proc/meminfo"), and `advice` (the flags to lower). */
TFM_API tfm_status tfm_memory_check(const tfm_memory_estimate *e, size_t limit, const char *limit_name, const char *advice);

#ifdef __cplusplus
}
#endif
#endif
