/* Properties of the relative position encodings t5, alibi and rope (src/model/pe_t5.c,
 * pe_alibi.c, pe_rope.c), beside their PyTorch parity (test_golden_rel.c):
 *   - ALiBi's slopes: 8 heads 1/2 .. 1/256; 6 heads the paper's 1/4, 1/16, 1/64, 1/256, 1/2, 1/8;
 *   - T5's bucket ids of offsets −200..200 (32 buckets, max distance 128), bidirectional and
 *     causal, against a table written out from the reference formula (make_golden_rel.py
 *     --buckets prints it);
 *   - RoPE: a known rotation; q·k after rotation depends only on the offset (both positions
 *     shifted by s give the same score) and does depend on it; the two pairings give the same
 *     logits once W_Q and W_K rows are permuted within each head;
 *   - per encoding, on a model trained a little on a copy task: cached decoding == recompute,
 *     greedy and beam 4; a sentence alone == inside a padded batch; save/reload scores the same;
 *   - per encoding, the whole model's gradient against central differences, with dropout: every
 *     entry of the T5 tables, a sample of every other tensor. */
#include "model_internal.h"
#include "ops.h"
#include "pe.h"
#include "test_util.h"
#include "tfm/tfm.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* ---- ALiBi ---------------------------------------------------------------------------------- */

static void alibi_slopes(void) {
    for (size_t h = 0; h < 8; h++)
        CHECK(pe_alibi_slope(h, 8) == ldexpf(1.0f, -(int)h - 1), "alibi 8 heads: slope %zu is %g, want 2^-%zu", h,
              (double)pe_alibi_slope(h, 8), h + 1);
    const float six[6] = {1.0f / 4, 1.0f / 16, 1.0f / 64, 1.0f / 256, 1.0f / 2, 1.0f / 8};
    for (size_t h = 0; h < 6; h++)
        CHECK(pe_alibi_slope(h, 6) == six[h], "alibi 6 heads: slope %zu is %g, want %g", h,
              (double)pe_alibi_slope(h, 6), (double)six[h]);
    CHECK(pe_alibi_slope(0, 1) == 1.0f / 256, "alibi 1 head: %g", (double)pe_alibi_slope(0, 1));
}

/* ---- T5 buckets ----------------------------------------------------------------------------- */

typedef struct {
    int first, last, bucket;
} bucket_run;

/* Hugging Face's T5Attention._relative_position_bucket, 32 buckets, max distance 128, offset
 * n = key − query; runs of equal ids over n = −200..200. */
static const bucket_run k_bidir[] = {
    {-200, -91, 15}, {-90, -64, 14}, {-63, -46, 13}, {-45, -32, 12}, {-31, -23, 11}, {-22, -16, 10}, {-15, -12, 9},
    {-11, -8, 8},    {-7, -7, 7},    {-6, -6, 6},    {-5, -5, 5},    {-4, -4, 4},    {-3, -3, 3},    {-2, -2, 2},
    {-1, -1, 1},     {0, 0, 0},      {1, 1, 17},     {2, 2, 18},     {3, 3, 19},     {4, 4, 20},     {5, 5, 21},
    {6, 6, 22},      {7, 7, 23},     {8, 11, 24},    {12, 15, 25},   {16, 22, 26},   {23, 31, 27},   {32, 45, 28},
    {46, 63, 29},    {64, 90, 30},   {91, 200, 31}};
static const bucket_run k_causal[] = {
    {-200, -113, 31}, {-112, -99, 30}, {-98, -87, 29}, {-86, -77, 28}, {-76, -67, 27}, {-66, -59, 26},
    {-58, -52, 25},   {-51, -46, 24},  {-45, -40, 23}, {-39, -35, 22}, {-34, -31, 21}, {-30, -27, 20},
    {-26, -24, 19},   {-23, -21, 18},  {-20, -19, 17}, {-18, -16, 16}, {-15, -15, 15}, {-14, -14, 14},
    {-13, -13, 13},   {-12, -12, 12},  {-11, -11, 11}, {-10, -10, 10}, {-9, -9, 9},    {-8, -8, 8},
    {-7, -7, 7},      {-6, -6, 6},     {-5, -5, 5},    {-4, -4, 4},    {-3, -3, 3},    {-2, -2, 2},
    {-1, -1, 1},      {0, 200, 0}};

static void t5_buckets_table(const char *what, const bucket_run *runs, size_t n_runs, int bidir) {
    int n = -200, bad = 0;
    for (size_t r = 0; r < n_runs; r++) {
        CHECK(runs[r].first == n, "%s: the table has a gap at %d", what, n);
        for (n = runs[r].first; n <= runs[r].last; n++) {
            const int got = pe_t5_bucket(n, bidir, 32, 128);
            if (got != runs[r].bucket && bad++ < 5) CHECK(0, "%s: offset %d: bucket %d, want %d", what, n, got, runs[r].bucket);
        }
    }
    CHECK(n == 201 && bad == 0, "%s: %d wrong buckets", what, bad);
    /* far beyond the table: the last bucket of the half */
    CHECK(pe_t5_bucket(100000, bidir, 32, 128) == (bidir ? 31 : 0) && pe_t5_bucket(-100000, bidir, 32, 128) == (bidir ? 15 : 31),
          "%s: distant offsets", what);
}

/* ---- RoPE ----------------------------------------------------------------------------------- */

static float dot(const float *a, const float *b, size_t n) {
    double s = 0.0;
    for (size_t i = 0; i < n; i++) s += (double)a[i] * (double)b[i];
    return (float)s;
}

/* q·k of q rotated to position i and k to position j (one head of d_k). */
static float rotated_score(const float *q0, const float *k0, size_t d_k, size_t i, size_t j, tfm_rope_pairing pr) {
    float q[64], k[64];
    memcpy(q, q0, d_k * sizeof(float));
    memcpy(k, k0, d_k * sizeof(float));
    pe_rope_rotate(q, d_k, 1, 1, d_k, i, pr, 0);
    pe_rope_rotate(k, d_k, 1, 1, d_k, j, pr, 0);
    return dot(q, k, d_k);
}

static void rope_rotation(void) {
    /* d_k = 2: one pair of frequency 1, so position p rotates by p radians */
    float x[2] = {1.0f, 0.0f};
    pe_rope_rotate(x, 2, 1, 1, 2, 1, TFM_ROPE_INTERLEAVED, 0);
    CHECK(fabsf(x[0] - cosf(1.0f)) < 1e-6f && fabsf(x[1] - sinf(1.0f)) < 1e-6f, "rope: (1, 0) at position 1 is (%g, %g)",
          (double)x[0], (double)x[1]);
    pe_rope_rotate(x, 2, 1, 1, 2, 1, TFM_ROPE_INTERLEAVED, 1);
    CHECK(fabsf(x[0] - 1.0f) < 1e-6f && fabsf(x[1]) < 1e-6f, "rope: the inverse rotation does not undo it");
    /* d_k = 4, half pairing: pairs (0, 2) at frequency 1 and (1, 3) at 10000^(−1/2) */
    float y[4] = {1.0f, 1.0f, 0.0f, 0.0f};
    pe_rope_rotate(y, 4, 1, 1, 4, 3, TFM_ROPE_HALF, 0);
    CHECK(fabsf(y[0] - cosf(3.0f)) < 1e-6f && fabsf(y[2] - sinf(3.0f)) < 1e-6f && fabsf(y[1] - cosf(0.03f)) < 1e-6f &&
              fabsf(y[3] - sinf(0.03f)) < 1e-6f,
          "rope half: (1, 1, 0, 0) at position 3 is (%g, %g, %g, %g)", (double)y[0], (double)y[1], (double)y[2],
          (double)y[3]);

    enum { DK = 16 };
    float q[DK], k[DK];
    uint32_t s = 99;
    for (int i = 0; i < DK; i++) {
        s = s * 1664525u + 1013904223u;
        q[i] = (float)(s >> 8) / 16777216.0f - 0.5f;
        s = s * 1664525u + 1013904223u;
        k[i] = (float)(s >> 8) / 16777216.0f - 0.5f;
    }
    const size_t shifts[] = {1, 5, 37, 1000, 4096};
    for (int pr = 0; pr < 2; pr++) {
        const tfm_rope_pairing pairing = (tfm_rope_pairing)pr;
        int depends = 0; /* pairs i != j whose score differs from the unrotated q·k */
        for (size_t i = 0; i < 12; i++)
            for (size_t j = 0; j < 12; j++) {
                const float base = rotated_score(q, k, DK, i, j, pairing);
                if (i != j && fabsf(base - dot(q, k, DK)) > 1e-3f) depends++;
                for (size_t si = 0; si < sizeof shifts / sizeof shifts[0]; si++) {
                    const float moved = rotated_score(q, k, DK, i + shifts[si], j + shifts[si], pairing);
                    CHECK(fabsf(moved - base) <= 1e-4f, "rope %s: q·k at (%zu, %zu) is %.7f, shifted by %zu %.7f",
                          tfm_rope_pairing_name(pairing), i, j, (double)base, shifts[si], (double)moved);
                }
            }
        CHECK(depends > 100, "rope %s: the score does not depend on the offset as it should (%d)",
              tfm_rope_pairing_name(pairing), depends);
    }
}

/* A model of `pe` (rope: pairing pr) with every parameter moved off its initial value. */
static tfm_model *small_model(tfm_pe pe, tfm_rope_pairing pr, int d, int H, uint64_t seed) {
    tfm_config c = tfm_config_default();
    c.d_model = d;
    c.n_heads = H;
    c.d_ff = 2 * d;
    c.n_enc_layers = c.n_dec_layers = 2;
    c.src_vocab = c.tgt_vocab = 16;
    c.max_len = 32;
    c.pe = pe;
    c.rope_pairing = pr;
    tfm_model *m = NULL;
    if (tfm_model_create(&c, seed, &m) != TFM_OK) return NULL;
    return m;
}

/* Interleaved pairs (2p, 2p+1) and half pairs (p, p + d_k/2) are the same rotations on permuted
 * dimensions: a "half" model whose W_Q and W_K rows (and biases) are those of an "interleaved"
 * model permuted within each head (half row p ← interleaved row 2p, half row p + d_k/2 ←
 * interleaved row 2p + 1) has the same scores, so the same logits. */
static void permuted_pairings(tfm_model *mi, tfm_model *mh) {
    const size_t d = 16, dk = 8;
    memcpy(mh->param_arena.base, mi->param_arena.base, mi->n_params * sizeof(float));
    for (int s = 0; s < 2; s++)
        for (int l = 0; l < 2; l++) {
            const mha_params *pi = &mi->p.stack[s].layers[l].self_attn;
            mha_params *ph = &mh->p.stack[s].layers[l].self_attn;
            for (size_t blk = 0; blk < 2; blk++) /* Q rows [0, d), K rows [d, 2d) */
                for (size_t h = 0; h < 2; h++)
                    for (size_t p = 0; p < dk / 2; p++)
                        for (int odd = 0; odd < 2; odd++) {
                            const size_t from = blk * d + h * dk + 2 * p + (size_t)odd;
                            const size_t to = blk * d + h * dk + p + (size_t)odd * dk / 2;
                            memcpy(ph->in_proj_weight + to * d, pi->in_proj_weight + from * d, d * sizeof(float));
                            ph->in_proj_bias[to] = pi->in_proj_bias[from];
                        }
        }
    enum { B = 2, S = 6, T = 7 };
    const int32_t src[B * S] = {5, 6, 7, 8, 9, 10, 11, 4, 3, 0, 0, 0};
    const int32_t tgt[B * T] = {1, 6, 7, 8, 9, 10, 2, 1, 12, 5, 4, 2, 0, 0};
    double lp_i[B], lp_h[B];
    int n_i[B], n_h[B];
    tfm_context *ci = NULL, *ch = NULL;
    CHECK(tfm_context_create(mi, &ci) == TFM_OK && tfm_context_create(mh, &ch) == TFM_OK &&
              tfm_model_score(ci, B, S, T, src, tgt, lp_i, n_i, NULL) == TFM_OK &&
              tfm_model_score(ch, B, S, T, src, tgt, lp_h, n_h, NULL) == TFM_OK,
          "rope score: %s", tfm_last_error());
    const size_t n = (size_t)(B * (T - 1) * 16);
    double worst = 0.0, apart = 0.0;
    for (size_t i = 0; ci && ch && i < n; i++) worst = fmax(worst, fabs((double)ci->acts.logits[i] - (double)ch->acts.logits[i]));
    CHECK(worst <= 1e-5, "rope: interleaved and permuted half models' logits differ by %.3g", worst);
    /* and without the permutation they do differ (the test can tell the pairings apart) */
    memcpy(mh->param_arena.base, mi->param_arena.base, mi->n_params * sizeof(float));
    CHECK(ch && tfm_model_score(ch, B, S, T, src, tgt, lp_h, n_h, NULL) == TFM_OK, "rope score");
    for (size_t i = 0; ci && ch && i < n; i++) apart = fmax(apart, fabs((double)ci->acts.logits[i] - (double)ch->acts.logits[i]));
    CHECK(apart > 1e-3, "rope: the pairings give the same logits without the permutation (%.3g)", apart);
    printf("rope pairings: permuted max |logit diff| %.3g, unpermuted %.3g\n", worst, apart);
    tfm_context_free(ci);
    tfm_context_free(ch);
}

static void rope_pairings_agree(void) {
    tfm_model *mi = small_model(TFM_PE_ROPE, TFM_ROPE_INTERLEAVED, 16, 2, 3);
    tfm_model *mh = small_model(TFM_PE_ROPE, TFM_ROPE_HALF, 16, 2, 3);
    CHECK(mi && mh, "rope models: %s", tfm_last_error());
    if (mi && mh) permuted_pairings(mi, mh);
    tfm_model_free(mi);
    tfm_model_free(mh);
}

/* ---- decoding, batching, checkpoints, per encoding -------------------------------------------- */

typedef struct {
    const char *name;
    tfm_pe pe;
    tfm_rope_pairing pairing;
} variant;

static const variant k_variants[] = {{"t5", TFM_PE_T5, TFM_ROPE_INTERLEAVED},
                                     {"alibi", TFM_PE_ALIBI, TFM_ROPE_INTERLEAVED},
                                     {"rope interleaved", TFM_PE_ROPE, TFM_ROPE_INTERLEAVED},
                                     {"rope half", TFM_PE_ROPE, TFM_ROPE_HALF}};

/* The copy-with-shift task of copy_task.h (target = source + 1), `steps` steps: enough for
 * confident decisions, not a converged model. Returns the last loss (NAN on failure). */
static float train_copy(tfm_model *m, int steps) {
    enum { B = 16, S = 6, T = 8 };
    int32_t src[B * S], tgt[B * T];
    uint32_t x = 12345;
    tfm_train_config tc = tfm_train_config_default();
    tc.lr = 3e-3;
    tfm_trainer *tr = NULL;
    if (tfm_trainer_create(m, &tc, B, S, T, &tr) != TFM_OK) return NAN;
    float loss = NAN;
    for (int step = 0; step < steps; step++) {
        for (int b = 0; b < B; b++) {
            x = x * 1103515245u + 12345u;
            const int len = 2 + (int)((x >> 16) % 5);
            tgt[b * T] = 1;
            for (int s = 0; s < S; s++) {
                x = x * 1103515245u + 12345u;
                const int v = 4 + (int)((x >> 16) % 11);
                src[b * S + s] = s < len ? v : 0;
                if (s < len) tgt[b * T + 1 + s] = v + 1 > 15 ? 4 : v + 1;
            }
            tgt[b * T + 1 + len] = 2;
            for (int t = len + 2; t < T; t++) tgt[b * T + t] = 0;
        }
        tfm_step_stats st;
        if (tfm_trainer_step(tr, B, S, T, src, tgt, &st) != TFM_OK) break;
        loss = (float)st.loss;
    }
    tfm_trainer_free(tr);
    return loss;
}

static int same_rows(const int32_t *a, const int *la, const int32_t *b, const int *lb, int B, int stride) {
    for (int r = 0; r < B; r++)
        if (la[r] != lb[r] || memcmp(a + r * stride, b + r * stride, (size_t)la[r] * sizeof(int32_t)) != 0) return 0;
    return 1;
}

static void decode_checks(const variant *v, tfm_context *ctx) {
    enum { B = 4, S = 6, MAXO = 20 };
    const int32_t src[B * S] = {5, 6, 7, 0, 0, 0, 9, 4, 12, 13, 8, 0, 14, 14, 0, 0, 0, 0, 10, 11, 12, 13, 4, 5};
    int32_t o1[B * MAXO], o2[B * MAXO];
    int l1[B], l2[B];
    for (int beam = 1; beam <= 4; beam += 3) {
        tfm_decode_config dc = tfm_decode_config_default();
        dc.beam = beam;
        CHECK(tfm_model_translate(ctx, &dc, B, S, src, o1, MAXO, l1) == TFM_OK, "%s: cached beam %d: %s", v->name, beam,
              tfm_last_error());
        dc.use_cache = 0;
        CHECK(tfm_model_translate(ctx, &dc, B, S, src, o2, MAXO, l2) == TFM_OK, "%s: recompute: %s", v->name,
              tfm_last_error());
        CHECK(same_rows(o1, l1, o2, l2, B, MAXO), "%s beam %d: cached and recomputed outputs differ", v->name, beam);
        dc.use_cache = 1;
        /* alone: row 0 without its padding (S = 3), row 3 (full length) */
        CHECK(tfm_model_translate(ctx, &dc, 1, 3, src, o2, MAXO, l2) == TFM_OK && same_rows(o1, l1, o2, l2, 1, MAXO),
              "%s beam %d: row 0 alone (unpadded) differs from row 0 in the batch", v->name, beam);
        CHECK(tfm_model_translate(ctx, &dc, 1, S, src + 3 * S, o2, MAXO, l2) == TFM_OK &&
                  same_rows(o1 + 3 * MAXO, l1 + 3, o2, l2, 1, MAXO),
              "%s beam %d: row 3 alone differs from row 3 in the batch", v->name, beam);
        CHECK(l1[0] > 0 && l1[3] > 0, "%s beam %d: empty outputs", v->name, beam);
    }
}

/* The logits of every position of a padded batch, computed step by step on the KV cache
 * (model_decode_step, queries at pos0 = 0, 1, ...), equal those of the whole-sequence forward
 * (pos0 = 0, T queries): a position term that ignored the cached keys' positions would differ here
 * even where the decoded tokens happen not to change. */
static void cached_logits(const variant *v, tfm_context *ctx) {
    enum { B = 2, S = 5, T = 7 };
    const int32_t src[B * S] = {5, 6, 7, 8, 9, 11, 12, 0, 0, 0};
    const int32_t tgt[B * T] = {1, 6, 7, 8, 9, 10, 2, 1, 12, 13, 5, 14, 6, 2};
    const size_t V = (size_t)ctx->m->cfg.tgt_vocab;
    float whole[B * T * 16];
    CHECK(V == 16 && context_reserve(ctx, B, S, T, 0) == TFM_OK, "%s: reserve", v->name);
    model_forward(ctx, B, S, T, src, tgt, T, NULL);
    memcpy(whole, ctx->acts.logits, sizeof whole);
    CHECK(kv_cache_reserve(ctx, B, S, T) == TFM_OK, "%s: cache: %s", v->name, tfm_last_error());
    model_decode_start(ctx, src);
    double worst = 0.0;
    for (int t = 0; t < T; t++) {
        model_decode_step(ctx, tgt + t, T);
        for (size_t b = 0; b < B; b++)
            for (size_t i = 0; i < V; i++)
                worst = fmax(worst, fabs((double)ctx->cache.logits[b * V + i] - (double)whole[(b * T + (size_t)t) * V + i]));
    }
    CHECK(worst <= 1e-4, "%s: cached decoding steps' logits differ from the whole sequence's by %.3g", v->name, worst);
}

/* Saved and loaded back: the same encoding and options, the same scores bit for bit. */
static void save_reload(const variant *v, tfm_context *ctx) {
    enum { B = 2, S = 5, T = 6 };
    const int32_t src[B * S] = {5, 6, 7, 8, 9, 11, 12, 0, 0, 0};
    const int32_t tgt[B * T] = {1, 6, 7, 8, 9, 2, 1, 12, 13, 2, 0, 0};
    double a[B], b[B];
    int na[B], nb[B];
    char dir[4096], path[4200];
    if (!test_make_tmpdir(dir, sizeof dir, "pe-rel")) {
        CHECK(0, "no temporary folder");
        return;
    }
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    tfm_model *r = NULL;
    tfm_context *rc = NULL;
    CHECK(tfm_model_score(ctx, B, S, T, src, tgt, a, na, NULL) == TFM_OK &&
              tfm_model_save(tfm_context_model(ctx), path) == TFM_OK && tfm_model_load(path, &r) == TFM_OK &&
              tfm_context_create(r, &rc) == TFM_OK && tfm_model_score(rc, B, S, T, src, tgt, b, nb, NULL) == TFM_OK,
          "%s: save/reload: %s", v->name, tfm_last_error());
    if (rc) {
        const tfm_config *c = tfm_model_config(r);
        CHECK(c->pe == v->pe && c->rope_pairing == v->pairing, "%s: reloaded as pe %s, pairing %s", v->name,
              tfm_pe_name(c->pe), tfm_rope_pairing_name(c->rope_pairing));
        CHECK(memcmp(a, b, sizeof a) == 0 && memcmp(na, nb, sizeof na) == 0, "%s: reloaded scores %.9g %.9g, were %.9g %.9g",
              v->name, b[0], b[1], a[0], a[1]);
    }
    tfm_context_free(rc);
    tfm_model_free(r);
    remove(path);
    rmdir(dir);
}

static void per_variant(const variant *v) {
    tfm_model *m = small_model(v->pe, v->pairing, 32, 4, 11);
    CHECK(m != NULL, "%s: create: %s", v->name, tfm_last_error());
    if (!m) return;
    const float loss0 = train_copy(m, 1), loss = train_copy(m, 60);
    CHECK(loss < 0.8f * loss0, "%s: training did not lower the loss (%.3f -> %.3f)", v->name, (double)loss0, (double)loss);
    printf("%s: copy task loss %.3f -> %.3f\n", v->name, (double)loss0, (double)loss);
    tfm_context *ctx = NULL;
    CHECK(tfm_context_create(m, &ctx) == TFM_OK, "%s: context", v->name);
    if (ctx) {
        cached_logits(v, ctx);
        decode_checks(v, ctx);
        save_reload(v, ctx);
    }
    tfm_context_free(ctx);
    tfm_model_free(m);
}

/* ---- whole-model gradient check, per encoding ---------------------------------------------------
 * As test_model_gradcheck.c (whose header derives the step and tolerance): central differences of
 * the label-smoothed loss with dropout 0.2 (fixed masks), GELU (no kinks), error relative to the
 * tensor's largest gradient; every entry of a T5 table, about 16 entries of each other tensor. */
#define GC_H 3e-3f
#define GC_FLOOR 1e-3
#define GC_TOL 1e-2
enum { GB = 2, GS = 5, GT = 7, GTD = GT - 1 };
static const int32_t GSRC[GB * GS] = {3, 7, 10, 4, 5, 6, 9, 3, 0, 0};
static const int32_t GTGT[GB * GT] = {1, 4, 8, 12, 5, 6, 2, 1, 9, 3, 2, 0, 0, 0};

static double gc_loss(tfm_context *ctx, const dropout_cfg *drop, const int32_t *y, float *losses) {
    const tfm_config *c = &ctx->m->cfg;
    model_forward(ctx, GB, GS, GTD, GSRC, GTGT, GT, drop);
    size_t n = 0;
    return cross_entropy_forward(losses, &n, ctx->acts.logits, y, c->pad_id, 0.1f, GB * GTD, (size_t)c->tgt_vocab);
}

static void gradcheck(const variant *v) {
    tfm_config c = tfm_config_default();
    c.d_model = 8;
    c.n_heads = 2;
    c.d_ff = 12;
    c.n_enc_layers = 1;
    c.n_dec_layers = v->pe == TFM_PE_T5 ? 2 : 1; /* t5: two decoder layers share the decoder's table */
    c.src_vocab = 11;
    c.tgt_vocab = 13;
    c.max_len = 16;
    c.activation = TFM_ACT_GELU;
    c.pe = v->pe;
    c.rope_pairing = v->pairing;
    if (v->pe == TFM_PE_T5) { /* short sentences: few buckets so the log buckets are used */
        c.pe_buckets = 8;
        c.pe_max_distance = 10;
    }
    tfm_model *m = NULL;
    tfm_context *ctx = NULL;
    CHECK(tfm_model_create(&c, 7, &m) == TFM_OK && tfm_context_create(m, &ctx) == TFM_OK &&
              context_reserve(ctx, GB, GS, GTD, 1) == TFM_OK,
          "%s gradcheck: %s", v->name, tfm_last_error());
    if (!ctx) {
        tfm_model_free(m);
        return;
    }
    float *base = (float *)m->param_arena.base;
    uint32_t s = 2024;
    for (size_t i = 0; i < m->n_params; i++) { /* biases off 0, LayerNorm weights off 1 */
        s = s * 1664525u + 1013904223u;
        base[i] += 0.2f * ((float)(s >> 8) / 16777216.0f - 0.5f);
    }
    const dropout_cfg drop = {0.2f, 0x5eed};
    int32_t y[GB * GTD];
    float losses[GB * GTD];
    for (int b = 0; b < GB; b++)
        for (int t = 0; t < GTD; t++) y[b * GTD + t] = GTGT[b * GT + t + 1];
    float *g = calloc(m->n_params, sizeof(float));
    model_params gp;
    params_layout(&c, &gp, g, NULL, NULL);
    tfm_arena counter = {NULL, 0, 0}, wa = {NULL, 0, 0};
    grad_workspace ws;
    grad_workspace_layout(KERN, &c, GB, GS, GTD, &counter, NULL);
    CHECK(arena_init(&wa, counter.used, "test workspace") == TFM_OK, "%s: workspace", v->name);
    grad_workspace_layout(KERN, &c, GB, GS, GTD, &wa, &ws);
    gc_loss(ctx, &drop, y, losses);
    size_t n_tok = 0;
    cross_entropy_forward(losses, &n_tok, ctx->acts.logits, y, c.pad_id, 0.1f, GB * GTD, (size_t)c.tgt_vocab);
    cross_entropy_backward(ctx->acts.logits, ctx->acts.logits, y, c.pad_id, 0.1f, n_tok, GB * GTD, (size_t)c.tgt_vocab);
    model_backward(ctx, &gp, &ws, GSRC, GTGT, GT, &drop);
    double worst = 0.0;
    const char *worst_name = "";
    int pe_tables = 0;
    for (size_t k = 0; k < m->n_entries; k++) {
        const param_entry *e = &m->entries[k];
        double max_diff = 0.0, max_num = 0.0;
        const int table = strstr(e->name, "relative_attention_bias") != NULL;
        /* the T5 tables whole; of the others (covered by test_model_gradcheck) about 16 entries */
        const size_t step = table || e->numel <= 16 ? 1 : e->numel / 16;
        for (size_t i = 0; i < e->numel; i += step) {
            float *x = base + e->offset + i;
            const float x0 = *x, xp = x0 + GC_H, xm = x0 - GC_H;
            *x = xp;
            const double lp = gc_loss(ctx, &drop, y, losses);
            *x = xm;
            const double lm = gc_loss(ctx, &drop, y, losses);
            *x = x0;
            const double num = (lp - lm) / ((double)xp - (double)xm), ana = g[e->offset + i];
            max_num = fmax(max_num, fabs(num));
            if (!(fabs(ana - num) <= max_diff)) max_diff = fabs(ana - num);
        }
        const double err = max_diff / fmax(GC_FLOOR, max_num);
        CHECK(err <= GC_TOL, "%s: gradient of %s: error %.3g > %g", v->name, e->name, err, GC_TOL);
        if (table) {
            pe_tables++;
            CHECK(max_num > 1e-3, "%s: %s has (nearly) no gradient (%.3g)", v->name, e->name, max_num);
        }
        if (!(err <= worst)) {
            worst = err;
            worst_name = e->name;
        }
    }
    CHECK(pe_tables == (v->pe == TFM_PE_T5 ? 2 : 0), "%s: %d T5 tables", v->name, pe_tables);
    printf("%s: gradient check worst error %.2e (%s)\n", v->name, worst, worst_name);
    arena_free(&wa);
    free(g);
    tfm_context_free(ctx);
    tfm_model_free(m);
}

int main(void) {
    ops_set_threads(1); /* tiny models: OpenMP barriers would cost more than the work */
    alibi_slopes();
    t5_buckets_table("t5 bidirectional", k_bidir, sizeof k_bidir / sizeof k_bidir[0], 1);
    t5_buckets_table("t5 causal", k_causal, sizeof k_causal / sizeof k_causal[0], 0);
    rope_rotation();
    rope_pairings_agree();
    for (size_t i = 0; i < sizeof k_variants / sizeof k_variants[0]; i++) {
        per_variant(&k_variants[i]);
        gradcheck(&k_variants[i]);
    }
    return test_finish("pe_rel");
}
