/* The `shaw` position encoding (Shaw et al. 2018; docs/POSITION.md): golden parity with the PyTorch
 * twin tests/reference/make_golden_shaw.py — logits, per-pair scores, the label-smoothed loss and
 * every gradient (the relative tables included), encoder and decoder, padding in both, keys only
 * (post-LN, k = 2) and keys + values (pre-LN, k = 3), sequences of 9 so offsets beyond ±k share the
 * edge rows; a pair alone == inside the batch; the KV cache: teacher-forced cached steps give the
 * batched logits at every position, and greedy and beam-4 translations equal the recompute path,
 * a sentence alone equals it inside a batch; save, reload and score give identical scores; the
 * relative terms' gradients do not depend on the thread count; a clip distance far beyond the
 * sequence equals a naive reimplementation and leaves unreachable rows unread; pe_max_distance
 * beyond max_len − 1 is refused. */
#include "golden_f32.h"
#include "model_internal.h"
#include "ops.h"
#include "safetensors.h"
#include "golden_case.h"
#include "golden_grads.h"

#include <stdint.h>
#include <unistd.h>

#define TOL_LOGIT 1e-4
#define TOL_SCORE 1e-4
#define TOL_GRAD 1e-4
#define TOL_LOSS 1e-5
#define TOL_ALONE 1e-5
#define TOL_CACHE 1e-4
#define LABEL_SMOOTHING 0.1f

static double max_abs_diff(const float *a, const float *b, size_t n) {
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)a[i] - (double)b[i]);
        if (!(e <= worst)) worst = isnan(e) ? INFINITY : e;
    }
    return worst;
}

/* Logits and scores against PyTorch; each pair alone scores what it scores in the batch. Leaves
 * the batch's logits (B, T−1, V) in *logits_out and the scores in lp. */
static void forward_parity(const char *name, golden_case *g, float *logits, double *lp) {
    char p[512];
    const tfm_config *c = tfm_model_config(g->m);
    const int B = g->B, S = g->S, T = g->T, V = c->tgt_vocab;
    int *nt = malloc(sizeof(int) * (size_t)B);
    CHECK(tfm_model_score(g->ctx, B, S, T, g->src_ids, g->tgt_ids, lp, nt, logits) == TFM_OK, "%s: score: %s", name,
          tfm_last_error());
    size_t n_ref = 0;
    snprintf(p, sizeof p, "tests/golden/%s/logits.f32", name);
    float *ref = read_f32(test_path(p), &n_ref);
    const size_t n = (size_t)(B * (T - 1) * V);
    CHECK(ref && n_ref == n, "%s: golden logits have %zu floats, want %zu", name, n_ref, n);
    if (ref && n_ref == n) {
        double worst = max_abs_diff(logits, ref, n);
        CHECK(worst <= TOL_LOGIT, "%s: max |logit - PyTorch| = %.3g > %g", name, worst, TOL_LOGIT);
        printf("%s: max |logit - PyTorch| = %.3g\n", name, worst);
    }
    free(ref);
    snprintf(p, sizeof p, "tests/golden/%s/scores.txt", name);
    FILE *f = fopen(test_path(p), "r");
    CHECK(f != NULL, "%s: cannot open scores.txt", name);
    for (int b = 0; f && b < B; b++) {
        double want;
        int wn;
        CHECK(fscanf(f, "%lf %d", &want, &wn) == 2, "%s: scores.txt line %d", name, b + 1);
        CHECK_NEAR(lp[b], want, TOL_SCORE, name);
        CHECK(nt[b] == wn, "%s: pair %d predicted %d tokens, want %d", name, b, nt[b], wn);
    }
    if (f) fclose(f);
    int32_t *sb = malloc(sizeof(int32_t) * (size_t)S), *tb = malloc(sizeof(int32_t) * (size_t)T);
    for (int b = 0; b < B; b++) {
        int ls = (int)tfm_id_lines_len(&g->src, (size_t)b), lt = (int)tfm_id_lines_len(&g->tgt, (size_t)b), na;
        double alone;
        golden_pack(sb, &g->src, (size_t)b, 1, ls, c->pad_id);
        golden_pack(tb, &g->tgt, (size_t)b, 1, lt, c->pad_id);
        CHECK(tfm_model_score(g->ctx, 1, ls, lt, sb, tb, &alone, &na, NULL) == TFM_OK, "%s: alone: %s", name,
              tfm_last_error());
        CHECK(fabs(alone - lp[b]) <= TOL_ALONE && na == nt[b], "%s: pair %d alone %.9g vs in batch %.9g", name, b,
              alone, lp[b]);
    }
    free(sb);
    free(tb);
    free(nt);
}

/* The loss and every parameter's gradient against PyTorch. */
static void backward_parity(const char *name, golden_case *g) {
    char p[512];
    tfm_model *m = g->m;
    const tfm_config *c = &m->cfg;
    const int B = g->B, S = g->S, T = g->T, Td = T - 1;
    const size_t V = (size_t)c->tgt_vocab, N = (size_t)(B * Td);
    int32_t *y = malloc(sizeof(int32_t) * N);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < Td; t++) y[b * Td + t] = g->tgt_ids[b * T + t + 1];
    tfm_context *ctx = NULL;
    CHECK(tfm_context_create(m, &ctx) == TFM_OK && context_reserve(ctx, B, S, Td, 1) == TFM_OK, "%s: reserve", name);
    model_forward(ctx, B, S, Td, g->src_ids, g->tgt_ids, (size_t)T, NULL);
    float *losses = malloc(sizeof(float) * N);
    size_t n_nonpad = 0;
    double loss = cross_entropy_forward(losses, &n_nonpad, ctx->acts.logits, y, c->pad_id, LABEL_SMOOTHING, N, V);
    cross_entropy_backward(ctx->acts.logits, ctx->acts.logits, y, c->pad_id, LABEL_SMOOTHING, n_nonpad, N, V);
    float *gbase = calloc(m->n_params, sizeof(float));
    CHECK(gbase && golden_backward(ctx, gbase, B, S, T, g->src_ids, g->tgt_ids, NULL), "%s: backward", name);

    const double want_loss = golden_loss(name);
    CHECK_NEAR(loss, want_loss, TOL_LOSS, name);
    st_file gf;
    snprintf(p, sizeof p, "tests/golden/%s/grads.safetensors", name);
    CHECK(st_open(test_path(p), &gf) == TFM_OK, "%s: grads file: %s", name, tfm_last_error());
    float *ref = malloc(sizeof(float) * m->n_params);
    double worst = 0.0;
    int n_rel = 0;
    for (size_t k = 0; k < m->n_entries; k++) {
        const param_entry *e = &m->entries[k];
        const st_tensor *t = st_find(&gf, e->name);
        CHECK(t != NULL && t->end - t->begin == e->numel * sizeof(float), "%s: golden gradient of %s", name, e->name);
        if (!t || t->end - t->begin != e->numel * sizeof(float)) continue;
        st_read(&gf, t, ref);
        double err = max_abs_diff(gbase + e->offset, ref, e->numel);
        CHECK(err <= TOL_GRAD, "%s: gradient of %s: max error %.3g > %g", name, e->name, err, TOL_GRAD);
        if (!(err <= worst)) worst = err;
        n_rel += strstr(e->name, ".rel_") != NULL;
    }
    const int want_rel = (c->n_enc_layers + c->n_dec_layers) * (c->pe_shaw_values ? 2 : 1);
    CHECK(n_rel == want_rel, "%s: %d relative tables, want %d", name, n_rel, want_rel);
    printf("%s: loss %.7f (PyTorch %.7f), max |grad - PyTorch| = %.3g over %zu tensors (%d relative tables)\n", name,
           loss, want_loss, worst, m->n_entries, n_rel);
    st_close(&gf);
    free(ref);
    free(gbase);
    free(losses);
    free(y);
    tfm_context_free(ctx);
}

/* Teacher forcing through the KV cache: step t's logits equal the batched forward's at position t
 * (the cached keys keep their absolute positions, so the offsets j − i are those of the batch). */
static void cache_teacher_forced(const char *name, golden_case *g, const float *logits) {
    const tfm_config *c = tfm_model_config(g->m);
    const int B = g->B, S = g->S, Td = g->T - 1, V = c->tgt_vocab;
    tfm_context *ctx = g->ctx;
    CHECK(kv_cache_reserve(ctx, B, S, Td) == TFM_OK, "%s: kv_cache_reserve: %s", name, tfm_last_error());
    model_decode_start(ctx, g->src_ids);
    double worst = 0.0;
    for (int t = 0; t < Td; t++) {
        model_decode_step(ctx, g->tgt_ids + t, (size_t)g->T);
        for (int b = 0; b < B; b++) {
            if (g->tgt_ids[b * g->T + t] == c->pad_id) continue; /* padded positions: nothing to compare */
            double e = max_abs_diff(ctx->cache.logits + (size_t)b * (size_t)V,
                                    logits + ((size_t)b * (size_t)Td + (size_t)t) * (size_t)V, (size_t)V);
            if (!(e <= worst)) worst = e;
        }
    }
    printf("%s: max |cached step logit - batched logit| = %.3g\n", name, worst);
    CHECK(worst <= TOL_CACHE, "%s: cached steps differ from the batched forward by %.3g", name, worst);
}

/* Greedy and beam 4: the cache gives the recompute path's tokens; row 2 alone gives what it gives
 * in the batch. Outputs longer than k + 1 tokens: later steps see offsets past the clip. */
static void cache_translate(const char *name, golden_case *g) {
    enum { MAXO = 32 };
    const int B = g->B, S = g->S;
    int32_t *o1 = malloc(sizeof(int32_t) * (size_t)(B * MAXO)), *o2 = malloc(sizeof(int32_t) * (size_t)(B * MAXO));
    int *l1 = malloc(sizeof(int) * (size_t)B), *l2 = malloc(sizeof(int) * (size_t)B);
    for (int beam = 1; beam <= 4; beam += 3) {
        tfm_decode_config dc = tfm_decode_config_default();
        dc.beam = beam;
        /* the bound rule decodes this untrained model's beams on to long outputs, past the clip (the
         * default stops once 4 hypotheses have ended, here after 4 tokens) */
        dc.beam_stop = TFM_BEAM_STOP_BOUND;
        CHECK(tfm_model_translate(g->ctx, &dc, B, S, g->src_ids, o1, MAXO, l1) == TFM_OK, "%s: cached beam %d: %s",
              name, beam, tfm_last_error());
        dc.use_cache = 0;
        CHECK(tfm_model_translate(g->ctx, &dc, B, S, g->src_ids, o2, MAXO, l2) == TFM_OK, "%s: recompute: %s", name,
              tfm_last_error());
        int longest = 0;
        for (int b = 0; b < B; b++) {
            int same = l1[b] == l2[b];
            for (int i = 0; same && i < l1[b]; i++) same = o1[b * MAXO + i] == o2[b * MAXO + i];
            CHECK(same, "%s beam %d row %d: cached (%d tokens) and recompute (%d tokens) differ", name, beam, b, l1[b],
                  l2[b]);
            if (l1[b] > longest) longest = l1[b];
        }
        const int k = tfm_model_config(g->m)->pe_max_distance;
        CHECK(longest > k + 1, "%s beam %d: the longest output has %d tokens: the clip k = %d is never reached", name,
              beam, longest, k);
        dc.use_cache = 1;
        CHECK(tfm_model_translate(g->ctx, &dc, 1, S, g->src_ids + 2 * S, o2, MAXO, l2) == TFM_OK && l2[0] == l1[2] &&
                  memcmp(o2, o1 + 2 * MAXO, (size_t)l2[0] * sizeof(int32_t)) == 0,
              "%s beam %d: row 2 alone differs from row 2 in the batch", name, beam);
    }
    free(o1);
    free(o2);
    free(l1);
    free(l2);
}

/* Save, reload (the relative tables and the pe options travel in the checkpoint), score: equal. */
static void save_reload(const char *name, golden_case *g, const double *lp) {
    char dir[256], path[320];
    CHECK(test_make_tmpdir(dir, sizeof dir, "pe_shaw") != NULL, "%s: tmpdir", name);
    snprintf(path, sizeof path, "%s/%s.safetensors", dir, name);
    tfm_model *r = NULL;
    tfm_context *rc = NULL;
    CHECK(tfm_model_save(g->m, path) == TFM_OK && tfm_model_load(path, &r) == TFM_OK &&
              tfm_context_create(r, &rc) == TFM_OK,
          "%s: save/reload: %s", name, tfm_last_error());
    if (rc) {
        const tfm_config *a = tfm_model_config(g->m), *b = tfm_model_config(r);
        CHECK(b->pe == TFM_PE_SHAW && b->pe_max_distance == a->pe_max_distance &&
                  b->pe_shaw_values == a->pe_shaw_values,
              "%s: reloaded pe options differ", name);
        double *lp2 = malloc(sizeof(double) * (size_t)g->B);
        int *nt = malloc(sizeof(int) * (size_t)g->B);
        CHECK(tfm_model_score(rc, g->B, g->S, g->T, g->src_ids, g->tgt_ids, lp2, nt, NULL) == TFM_OK, "%s: score: %s",
              name, tfm_last_error());
        for (int i = 0; i < g->B; i++)
            CHECK(lp2[i] == lp[i], "%s: pair %d scores %.9g after reload, %.9g before", name, i, lp2[i], lp[i]);
        free(lp2);
        free(nt);
    }
    tfm_context_free(rc);
    tfm_model_free(r);
    remove(path);
    rmdir(dir);
}

/* attn_backward's relative terms give bit-identical gradients for 1 and 3 threads (the table
 * gradients are summed per row in a fixed order), at sizes large enough to open parallel regions. */
static void thread_independent(void) {
    enum { TB = 4, TH = 4, TDK = 16, TD = TH * TDK, TT = 48, TK = 5, TR = 2 * TK + 1 };
    const size_t n_q = (size_t)TB * TT * 3 * TD, n_p = (size_t)TB * TH * TT * TT, n_o = (size_t)TB * TT * TD;
    float *qkv = malloc(sizeof(float) * n_q), *dout = malloc(sizeof(float) * n_o), *out = malloc(sizeof(float) * n_o);
    float *probs = malloc(sizeof(float) * n_p), *pdrop = malloc(sizeof(float) * n_p), *dprobs = malloc(sizeof(float) * n_p);
    float tables[2 * TR * TDK], grads[2][2 * TR * TDK];
    float *dqkv[2] = {calloc(n_q, sizeof(float)), calloc(n_q, sizeof(float))};
    uint32_t x = 7;
    for (size_t i = 0; i < n_q; i++) qkv[i] = (float)((x = x * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f;
    for (size_t i = 0; i < n_o; i++) dout[i] = (float)((x = x * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f;
    for (size_t i = 0; i < 2 * TR * TDK; i++) tables[i] = (float)((x = x * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f;
    const int threads[2] = {1, 3}, before = tfm_get_threads();
    for (int r = 0; r < 2; r++) {
        tfm_set_threads(threads[r]);
        attn_args a = attn_args_make(KERN, TB, TT, TT, TH, TDK, 3 * TD, 3 * TD);
        a.causal = 1;
        a.dropout_p = 0.1f;
        a.dropout_seed = 5;
        a.rel_k = tables;
        a.rel_v = tables + TR * TDK;
        a.rel_clip = TK;
        a.drel_k = grads[r];
        a.drel_v = grads[r] + TR * TDK;
        memset(grads[r], 0, sizeof grads[r]);
        attn_forward(out, probs, pdrop, qkv, qkv + TD, qkv + 2 * TD, &a);
        attn_backward(dqkv[r], dqkv[r] + TD, dqkv[r] + 2 * TD, dprobs, dout, probs, pdrop, qkv, qkv + TD, qkv + 2 * TD, &a);
    }
    tfm_set_threads(before);
    CHECK(memcmp(grads[0], grads[1], sizeof grads[0]) == 0, "d rel_k / d rel_v differ between 1 and 3 threads");
    CHECK(memcmp(dqkv[0], dqkv[1], n_q * sizeof(float)) == 0, "dq/dk/dv with relative terms differ between 1 and 3 threads");
    free(qkv), free(dout), free(out), free(probs), free(pdrop), free(dprobs), free(dqkv[0]), free(dqkv[1]);
}

/* A clip distance far beyond the sequence (k = 40, sequences of 12 keys): attn_forward and
 * attn_backward, which visit only the table rows a query reaches, equal a naive per-(t, s)
 * reimplementation of Shaw et al. eq. 3–4 (scores, outputs, dS, dQ, both table gradients), for the
 * encoder (bidirectional, whole sequence), the decoder (causal) and a cached block (T = 3 at
 * q_pos0 = 9 of 12, causal), and for k = 0 and 3. The rows no query reaches hold NaN: reading
 * one would show; their gradients must stay 0. */
static void far_clip_case(size_t T, size_t S, size_t q_pos0, int causal, size_t k) {
    enum { NB = 2, NH = 2, DK = 4, D = NH * DK };
    const size_t R = 2 * k + 1, n_q = NB * T * D, n_kv = NB * S * D, n_p = NB * NH * T * S;
    const float scale = 0.5f; /* 1/√d_k */
    float *q = malloc(sizeof(float) * n_q), *kk = malloc(sizeof(float) * n_kv), *v = malloc(sizeof(float) * n_kv);
    float *dout = malloc(sizeof(float) * n_q), *out = malloc(sizeof(float) * n_q);
    float *dq = calloc(n_q, sizeof(float)), *dk = calloc(n_kv, sizeof(float)), *dv = calloc(n_kv, sizeof(float));
    float *probs = malloc(sizeof(float) * n_p), *dprobs = malloc(sizeof(float) * n_p);
    float *tk = malloc(sizeof(float) * R * DK), *tv = malloc(sizeof(float) * R * DK);
    float *gk = calloc(R * DK, sizeof(float)), *gv = calloc(R * DK, sizeof(float));
    double *ngk = calloc(R * DK, sizeof(double)), *ngv = calloc(R * DK, sizeof(double));
    int *reached = calloc(R, sizeof(int));
    uint32_t x = (uint32_t)(T * 131 + S * 7 + q_pos0 + k * 1000 + (size_t)causal);
#define RND() ((float)((x = x * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f)
    for (size_t i = 0; i < n_q; i++) q[i] = RND(), dout[i] = RND();
    for (size_t i = 0; i < n_kv; i++) kk[i] = RND(), v[i] = RND();
    for (size_t t = 0; t < T; t++) {
        const size_t pos = q_pos0 + t, lim = causal ? (pos + 1 < S ? pos + 1 : S) : S;
        for (size_t s = 0; s < lim; s++) {
            long off = (long)s - (long)pos;
            off = off < -(long)k ? -(long)k : off > (long)k ? (long)k : off;
            reached[(size_t)((long)k + off)] = 1;
        }
    }
    for (size_t r = 0; r < R; r++)
        for (size_t c = 0; c < DK; c++) {
            tk[r * DK + c] = reached[r] ? RND() : NAN;
            tv[r * DK + c] = reached[r] ? RND() : NAN;
        }
#undef RND
    attn_args a = attn_args_make(KERN, NB, T, S, NH, DK, D, D);
    a.causal = causal;
    a.q_pos0 = q_pos0;
    a.rel_k = tk, a.rel_v = tv, a.rel_clip = k, a.drel_k = gk, a.drel_v = gv;
    attn_forward(out, probs, NULL, q, kk, v, &a);
    attn_backward(dq, dk, dv, dprobs, dout, probs, NULL, q, kk, v, &a);
    double worst = 0.0;
    char what[160];
    snprintf(what, sizeof what, "shaw k = %zu, T = %zu, S = %zu, q_pos0 = %zu, %s", k, T, S, q_pos0,
             causal ? "causal" : "bidirectional");
    for (size_t b = 0; b < NB; b++)
        for (size_t h = 0; h < NH; h++)
            for (size_t t = 0; t < T; t++) {
                const size_t pos = q_pos0 + t, lim = causal ? (pos + 1 < S ? pos + 1 : S) : S;
                const float *Q = q + (b * T + t) * D + h * DK, *dO = dout + (b * T + t) * D + h * DK;
                double p[64], dp[64], o[DK] = {0}, dqn[DK] = {0}, mx = -INFINITY, z = 0.0, pdp = 0.0;
                size_t rr[64];
                for (size_t s = 0; s < lim; s++) {
                    long off = (long)s - (long)pos;
                    off = off < -(long)k ? -(long)k : off > (long)k ? (long)k : off;
                    rr[s] = (size_t)((long)k + off);
                    double e = 0.0;
                    for (size_t c = 0; c < DK; c++)
                        e += (double)Q[c] * ((double)kk[(b * S + s) * D + h * DK + c] + (double)tk[rr[s] * DK + c]);
                    p[s] = e * scale;
                    if (p[s] > mx) mx = p[s];
                }
                for (size_t s = 0; s < lim; s++) z += (p[s] = exp(p[s] - mx));
                const float *P = probs + ((b * NH + h) * T + t) * S, *dS = dprobs + ((b * NH + h) * T + t) * S;
                for (size_t s = 0; s < lim; s++) {
                    p[s] /= z;
                    worst = fmax(worst, fabs(p[s] - (double)P[s]));
                    dp[s] = 0.0;
                    for (size_t c = 0; c < DK; c++) {
                        const double vv = (double)v[(b * S + s) * D + h * DK + c] + (double)tv[rr[s] * DK + c];
                        o[c] += p[s] * vv;
                        dp[s] += (double)dO[c] * vv;
                    }
                    pdp += p[s] * dp[s];
                }
                for (size_t s = 0; s < lim; s++) {
                    const double ds = p[s] * (dp[s] - pdp);
                    worst = fmax(worst, fabs(ds - (double)dS[s]));
                    for (size_t c = 0; c < DK; c++) {
                        dqn[c] += scale * ds * ((double)kk[(b * S + s) * D + h * DK + c] + (double)tk[rr[s] * DK + c]);
                        ngk[rr[s] * DK + c] += scale * ds * (double)Q[c];
                        ngv[rr[s] * DK + c] += p[s] * (double)dO[c];
                    }
                }
                for (size_t c = 0; c < DK; c++) {
                    worst = fmax(worst, fabs(o[c] - (double)out[(b * T + t) * D + h * DK + c]));
                    worst = fmax(worst, fabs(dqn[c] - (double)dq[(b * T + t) * D + h * DK + c]));
                }
            }
    size_t dead_touched = 0;
    for (size_t i = 0; i < R * DK; i++) {
        if (!reached[i / DK]) {
            dead_touched += gk[i] != 0.0f || gv[i] != 0.0f;
            continue;
        }
        worst = fmax(worst, fabs(ngk[i] - (double)gk[i]));
        worst = fmax(worst, fabs(ngv[i] - (double)gv[i]));
    }
    CHECK(worst <= 1e-5, "%s: max |attention - naive| = %.3g (probs, dS, out, dQ, table gradients)", what, worst);
    CHECK(dead_touched == 0, "%s: %zu gradients of rows no query reaches are not 0", what, dead_touched);
    free(q), free(kk), free(v), free(dout), free(out), free(dq), free(dk), free(dv), free(probs), free(dprobs);
    free(tk), free(tv), free(gk), free(gv), free(ngk), free(ngv), free(reached);
}

static void far_clip(void) {
    far_clip_case(12, 12, 0, 0, 40);
    far_clip_case(12, 12, 0, 1, 40);
    far_clip_case(3, 12, 9, 1, 40);
    far_clip_case(12, 12, 0, 0, 3);
    far_clip_case(3, 12, 9, 1, 3);
    far_clip_case(5, 7, 0, 0, 0);
}

/* pe_max_distance beyond max_len − 1 is refused by name (its rows could never be used); max_len − 1
 * and the default (0: 16) are accepted whatever max_len. */
static void max_distance_refused(void) {
    tfm_config c = tfm_config_default();
    c.pe = TFM_PE_SHAW;
    c.max_len = 1024;
    c.pe_max_distance = 1023;
    CHECK(tfm_config_validate(&c) == TFM_OK, "shaw k = max_len - 1 refused: %s", tfm_last_error());
    c.pe_max_distance = 1024;
    CHECK(tfm_config_validate(&c) == TFM_ERR_INVALID_ARG && strstr(tfm_last_error(), "pe_max_distance (1024)") &&
              strstr(tfm_last_error(), "max_len - 1 (1023)"),
          "shaw k = max_len accepted or unclear: %s", tfm_last_error());
    c.pe_max_distance = 1048576;
    CHECK(tfm_config_validate(&c) == TFM_ERR_INVALID_ARG, "shaw k = 1048576 with max_len 1024 accepted");
    c.max_len = 8;
    c.pe_max_distance = 0;
    CHECK(tfm_config_validate(&c) == TFM_OK, "shaw default k with max_len 8 refused: %s", tfm_last_error());
}

static void run_case(const char *name) {
    golden_case g;
    if (!golden_case_load(name, &g)) {
        golden_case_free(&g);
        return;
    }
    const int V = tfm_model_config(g.m)->tgt_vocab;
    float *logits = malloc(sizeof(float) * (size_t)(g.B * (g.T - 1) * V));
    double *lp = malloc(sizeof(double) * (size_t)g.B);
    forward_parity(name, &g, logits, lp);
    backward_parity(name, &g);
    cache_teacher_forced(name, &g, logits);
    cache_translate(name, &g);
    save_reload(name, &g, lp);
    free(logits);
    free(lp);
    golden_case_free(&g);
}

int main(void) {
    run_case("shaw_keys");
    run_case("shaw_values");
    thread_independent();
    far_clip();
    max_distance_refused();
    return test_finish("pe_shaw");
}
