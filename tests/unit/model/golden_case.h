/* One case of the PyTorch golden files (tests/reference/make_golden.py): the model and its id
 * files, packed into one padded batch. Shared by the forward and backward golden tests. */
#ifndef TFM_GOLDEN_CASE_H
#define TFM_GOLDEN_CASE_H

#include "test_util.h"
#include "tfm/tfm.h"

#include <stdint.h>

typedef struct {
    tfm_model *m;
    tfm_context *ctx;  /* a context of m */
    tfm_id_lines src, tgt;
    int B, S, T;       /* pairs, longest source, longest whole target row */
    int32_t *src_ids;  /* (B, S) padded with pad_id */
    int32_t *tgt_ids;  /* (B, T) */
} golden_case;

/* Rows [first, first + B) of `l`, each padded with `pad` to L ids. */
static inline void golden_pack(int32_t *dst, const tfm_id_lines *l, size_t first, int B, int L, int pad) {
    for (int b = 0; b < B; b++)
        for (int t = 0; t < L; t++) {
            size_t i = first + (size_t)b;
            dst[b * L + t] = (size_t)t < tfm_id_lines_len(l, i) ? l->ids[l->offsets[i] + (size_t)t] : pad;
        }
}

static inline int golden_max_len(const tfm_id_lines *l) {
    size_t m = 0;
    for (size_t i = 0; i < l->n_lines; i++)
        if (tfm_id_lines_len(l, i) > m) m = tfm_id_lines_len(l, i);
    return (int)m;
}

/* Loads tests/golden/<name>/; returns 0 (after a failed CHECK) if anything is missing. */
static inline int golden_case_load(const char *name, golden_case *g) {
    char p[512];
    memset(g, 0, sizeof *g);
    snprintf(p, sizeof p, "tests/golden/%s/model.safetensors", name);
    CHECK(tfm_model_load(test_path(p), &g->m) == TFM_OK && tfm_context_create(g->m, &g->ctx) == TFM_OK,
          "%s: load: %s", name, tfm_last_error());
    snprintf(p, sizeof p, "tests/golden/%s/src.ids", name);
    CHECK(tfm_id_lines_read(test_path(p), &g->src) == TFM_OK, "%s: src ids: %s", name, tfm_last_error());
    snprintf(p, sizeof p, "tests/golden/%s/tgt.ids", name);
    CHECK(tfm_id_lines_read(test_path(p), &g->tgt) == TFM_OK, "%s: tgt ids: %s", name, tfm_last_error());
    if (!g->m || !g->src.ids || !g->tgt.ids) return 0;
    const int pad = tfm_model_config(g->m)->pad_id;
    g->B = (int)g->src.n_lines;
    g->S = golden_max_len(&g->src);
    g->T = golden_max_len(&g->tgt);
    g->src_ids = malloc(sizeof(int32_t) * (size_t)(g->B * g->S) + 1);
    g->tgt_ids = malloc(sizeof(int32_t) * (size_t)(g->B * g->T));
    golden_pack(g->src_ids, &g->src, 0, g->B, g->S, pad);
    golden_pack(g->tgt_ids, &g->tgt, 0, g->B, g->T, pad);
    return 1;
}

static inline void golden_case_free(golden_case *g) {
    free(g->src_ids);
    free(g->tgt_ids);
    tfm_id_lines_free(&g->src);
    tfm_id_lines_free(&g->tgt);
    tfm_context_free(g->ctx);
    tfm_model_free(g->m);
    memset(g, 0, sizeof *g);
}

#endif
