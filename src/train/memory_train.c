/* The training half of the memory estimate (include/tfm/memory.h): the arenas tfm_trainer_create
 * and tfm_train_loop will allocate, counted with the layout functions that carve them, for every
 * batch shape the batchers make. */
#include "data_internal.h"
#include "activations.h"
#include "memory_internal.h"
#include "model_grad.h"

#include <string.h>

size_t tfm_memory_dataset_bytes(const tfm_dataset *ds) {
    if (!ds) return 0;
    const size_t ids = ds->src_off[ds->n] + ds->tgt_off[ds->n];
    /* ids; offsets; line numbers; a batcher's order, sorted index and batch starts (3 words a pair) */
    return ids * sizeof(int32_t) + 2 * (ds->n + 1) * sizeof(size_t) + (ds->lines ? ds->n * sizeof(size_t) : 0) +
           3 * ds->n * sizeof(size_t);
}

/* The largest activation and backward-workspace bytes over the batches of b (training = 1), or the
 * largest scoring workspace (training = 0, validation). */
static void largest_batch(const ops_kernels *kern, const tfm_config *cfg, const tfm_batcher *b, int training, size_t *act, size_t *ws,
                          size_t *rows) {
    for (size_t k = 0; k < batcher_shape_count(b); k++) {
        int B, S, T;
        batcher_shape(b, k, &B, &S, &T);
        const size_t a = activations_bytes(kern, cfg, B, S, T - 1, training);
        if (a > *act) *act = a;
        const size_t r = (size_t)B * (size_t)(T - 1);
        if (r > *rows) *rows = r;
        if (training) {
            tfm_arena counter = {NULL, 0, 0};
            grad_workspace_layout(kern, cfg, B, S, T - 1, &counter, NULL);
            if (counter.used > *ws) *ws = counter.used;
        }
    }
}

tfm_status tfm_memory_estimate_train(const tfm_config *cfg, tfm_optimizer optimizer, const tfm_kernel_opts *kernels,
                                     const tfm_batcher *train, const tfm_batcher *valid, size_t data_bytes,
                                     tfm_memory_estimate *out) {
    RETURN_IF(!cfg || !train || !out, TFM_ERR_INVALID_ARG, "memory estimate: NULL argument");
    const tfm_kernel_opts def = tfm_kernel_opts_default();
    if (!kernels) kernels = &def;
    TRY(tfm_kernel_opts_validate(kernels));
    const ops_kernels table = ops_kernels_resolve(kernels), *kern = &table;
    memset(out, 0, sizeof *out);
    int mB, mS, mT;
    tfm_batcher_max_dims(train, &mB, &mS, &mT);
    RETURN_IF(tfm_model_estimate_bytes(cfg, mB, mS, mT) == 0, TFM_ERR_NOMEM,
              "memory estimate: batches of up to %d x (%d, %d) tokens overflow the address space", mB, mS, mT);
    const size_t P = tfm_config_param_count(cfg) * sizeof(float);
    out->params = P;
    out->grads = P;
    out->optimizer = optimizer == TFM_OPTIMIZER_ADAM ? 2 * P : 0;
    size_t act = 0, ws = 0, rows = 0, vact = 0, vws = 0, vrows = 0;
    largest_batch(kern, cfg, train, 1, &act, &ws, &rows);
    if (valid) largest_batch(kern, cfg, valid, 0, &vact, &vws, &vrows);
    /* the loop's scoring context scores validation batches and, before a save that no validation
     * vouched for, the last training batch (docs/HARDENING.md): its workspace is the larger */
    size_t sact = 0, sws = 0, srows = 0;
    largest_batch(kern, cfg, train, 0, &sact, &sws, &srows);
    if (sact > vact) vact = sact;
    out->activations = act;
    /* the backward workspace, per-row losses, log-sum-exps and targets, and the scoring context */
    out->workspace = ws + rows * (2 * sizeof(float) + sizeof(int32_t)) + vact;
    /* the batchers' padded batch buffers (their per-pair indexes are in data_bytes) */
    size_t batcher = 0;
    const tfm_batcher *bs[2] = {train, valid};
    for (int i = 0; i < 2; i++) {
        if (!bs[i]) continue;
        size_t ms = 0, mt = 0;
        tfm_batcher_max_tokens(bs[i], &ms, &mt);
        batcher += (ms + mt) * sizeof(int32_t);
    }
    out->data = data_bytes + batcher;
    out->base = TFM_MEMORY_BASE_BYTES;
    memory_total(out);
    return TFM_OK;
}
