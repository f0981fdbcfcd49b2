/* Length-bucketed batches: the one planner of every place that runs many sequences of different
 * lengths through a model at once (tfm_translate_text, tfm_memory_estimate_translate, the sentence
 * embedder, tfm_perplexity_text). Sequences are sorted by length (ties by their input index, so the
 * plan is deterministic) and consecutive runs of the sorted order form the batches, each padded to
 * its longest, so little of a batch is padding. A caller reads batch j's sequences as
 * order[batch[j].start .. + batch[j].rows) (input indices) and writes each result back to its input
 * index: the output comes in the input's order.
 *
 * Rule (greedy, shortest first): a batch starts with the next sequence and takes the following one
 * while that one would keep it within every limit: at most max_rows sequences, at most max_tokens
 * tokens (rows × the batch's longest length, padding included) and at most max_cells attention
 * cells (rows × longest²). A sequence alone always makes a batch, whatever the limits. Sequences
 * of length 0 (blank lines: nothing to run) sort first and are in no batch. */
#ifndef TFM_CORE_BATCH_PLAN_H
#define TFM_CORE_BATCH_PLAN_H

#include "core_internal.h"

typedef struct {
    size_t max_rows;   /* sequences per batch, >= 1 */
    size_t max_tokens; /* rows × longest per batch; 0: no limit */
    size_t max_cells;  /* rows × longest² per batch; 0: no limit */
} batch_limits;

typedef struct {
    size_t start; /* the batch is order[start .. start + rows) */
    size_t rows;
    size_t len; /* its longest length: the padded length of every row */
} batch_span;

typedef struct {
    size_t *order;      /* n input indices sorted by (length, index) */
    batch_span *batch;  /* n_batches batches, shortest first */
    size_t n, n_batches;
    size_t skipped;     /* sequences of length 0: order[0 .. skipped), in no batch */
    size_t max_rows;    /* the most rows of a batch (0 without batches): what a batch buffer needs */
    size_t max_len;     /* the longest length (0 without batches) */
    size_t max_tokens;  /* the most rows × len of a batch (0 without batches) */
} batch_plan;

/** Plans batches for n sequences of lengths len[0..n) under `lim` (one allocation, freed by
 * batch_plan_free; n = 0 gives an empty plan). Errors: TFM_ERR_INVALID_ARG (lim.max_rows 0, len
 * NULL with n > 0), TFM_ERR_NOMEM. On error *p is empty (batch_plan_free is still safe). */
tfm_status batch_plan_make(batch_plan *p, const size_t *len, size_t n, batch_limits lim);

/** Frees the plan's arrays and empties it. */
void batch_plan_free(batch_plan *p);

#endif
