/* Internals of the training data (include/tfm/data.h) shared by dataset.c and batcher.c. */
#ifndef TFM_DATA_INTERNAL_H
#define TFM_DATA_INTERNAL_H

#include "tfm/data.h"

/* Pair i: source ids src_ids[src_off[i] .. src_off[i+1]), target row tgt_ids[tgt_off[i] .. tgt_off[i+1]). */
struct tfm_dataset {
    size_t n;          /* pairs, >= 1 */
    int32_t *src_ids;  /* [src_off[n]] */
    size_t *src_off;   /* [n + 1] */
    int32_t *tgt_ids;  /* [tgt_off[n]] */
    size_t *tgt_off;   /* [n + 1] */
    size_t *lines;     /* [n] 1-based line of each pair in the files, or NULL: pair i is line i + 1 */
    char *src_path;    /* the files, for messages */
    char *tgt_path;
};

static inline size_t dataset_src_len(const tfm_dataset *ds, size_t i) { return ds->src_off[i + 1] - ds->src_off[i]; }
static inline size_t dataset_tgt_len(const tfm_dataset *ds, size_t i) { return ds->tgt_off[i + 1] - ds->tgt_off[i]; }

/* The batch shapes the batcher can produce, for reserving memory before the first step: token
 * batches have batcher_shape_count() == batches per epoch and batch k of the cut (in sorted order)
 * has the same (B, S, T) in every epoch; line batches report one shape, the bound
 * tfm_batcher_max_dims() (their shapes change with each epoch's shuffle). */
size_t batcher_shape_count(const tfm_batcher *b);
void batcher_shape(const tfm_batcher *b, size_t k, int *B, int *S, int *T);

#endif
