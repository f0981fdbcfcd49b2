/* Every kernel of src/ops that runs as a thread-pool job (parallel.h, point 6; src/ops/pool.h)
 * gives bit-identical results for 1, 2, 3 and 4 threads (parallel.h rule 3: chunk boundaries fixed
 * by the sizes, sums in a fixed order): LayerNorm, the fused residual/dropout/LayerNorm exit, the
 * fused FFN activation, fused and reference attention, log-softmax, the loss, dropout, activations,
 * residuals, embeddings, position encodings, the optimiser and row copies, each forward and backward, on sizes
 * large enough for several chunks and a team. Each kernel's outputs of a run with t threads are
 * compared with those of the run with one thread, and the case names the kernel. */
#include "ops.h"
#include "parallel.h"
#include "pool.h"
#include "test_util.h"
#include "tfm/threads.h"

#include <stdint.h>

enum {
    N = 512, C = 256, F = 512,               /* rows, model width, FFN width */
    AB = 4, AH = 4, AT = 48, AS = 48, DK = 32, /* attention: batch, heads, queries, keys, head width */
    V = 1000, NV = 128,                      /* vocabulary, loss rows */
    VOCAB = 300, SLOTS = 4, MAX_T = 4
};

/* The outputs of one run, compared byte for byte between thread counts. */
typedef struct {
    /* LayerNorm */
    float ln_out[N * C], ln_mean[N], ln_rstd[N], ln_dinp[N * C], ln_dw[C], ln_db[C];
    /* fused exit */
    float fx_res[N * C], fx_ln[N * C], fx_mean[N], fx_rstd[N], fx_dres[N * C], fx_dsub[N * C], fx_dw[C], fx_db[C];
    uint8_t fx_mask[N * C];
    /* fused FFN activation */
    float ff_act[N * F], ff_dpre[N * F], ff_db[F];
    uint8_t ff_mask[N * F];
    /* attention, fused and reference */
    float af_out[AB * AT * AH * DK], af_lse[AB * AH * AT], af_dq[AB * AT * AH * DK], af_dk[AB * AS * AH * DK],
        af_dv[AB * AS * AH * DK];
    float ar_out[AB * AT * AH * DK], ar_probs[AB * AH * AT * AS], ar_drop[AB * AH * AT * AS],
        ar_dq[AB * AT * AH * DK], ar_dk[AB * AS * AH * DK], ar_dv[AB * AS * AH * DK], ar_dprobs[AB * AH * AT * AS];
    /* log-softmax and loss */
    float ls_out[NV * V], ls_lse[NV], ls_din[NV * V], ce_losses[NV], ce_dlogits[NV * V];
    float cl_losses[NV], cl_lse[NV], cl_dlogits[NV * V]; /* the trainer's pair: the kept log-sum-exps */
    double ce_mean, cl_mean;
    /* element-wise */
    float dr_out[N * C], dr_din[N * C], ac_gelu[N * C], ac_dgelu[N * C], ac_relu[N * C], ac_drelu[N * C],
        rs_out[N * C], rs_da[N * C], rs_db[N * C];
    uint8_t dr_mask[N * C];
    /* embeddings, positions */
    float em_out[N * C], em_dtable[VOCAB * C], pe_x[N * C], pt_x[N * C], pt_dtable[AT * 2 * C];
    /* optimiser */
    float op_p[N * C], op_m[N * C], op_v[N * C], op_sgd[N * C], op_scale[N * C];
    double op_ss;
    /* row copies: row i of in_x reversed into row N − 1 − i */
    float cp_out[N * C];
} outputs;

/* Inputs, shared by every run. */
static float in_x[N * C], in_sub[N * C], in_w[C], in_b[C], in_dy[N * C], in_pre[N * F], in_dact[N * F];
static float in_q[AB * AT * AH * DK], in_k[AB * AS * AH * DK], in_v[AB * AS * AH * DK], in_do[AB * AT * AH * DK];
static float in_logits[NV * V], in_table[VOCAB * C], in_ptable[AT * 2 * C];
static int32_t in_targets[NV], in_ids[N];
static float ws[SLOTS * 3 * AT * AS + SLOTS * 2 * AT + 1024];

static void make_inputs(void) {
    test_fill_uniform(in_x, N * C, 1);
    test_fill_uniform(in_sub, N * C, 2);
    test_fill_uniform(in_w, C, 3);
    test_fill_uniform(in_b, C, 4);
    test_fill_uniform(in_dy, N * C, 5);
    test_fill_uniform(in_pre, N * F, 6);
    test_fill_uniform(in_dact, N * F, 7);
    test_fill_uniform(in_q, AB * AT * AH * DK, 8);
    test_fill_uniform(in_k, AB * AS * AH * DK, 9);
    test_fill_uniform(in_v, AB * AS * AH * DK, 10);
    test_fill_uniform(in_do, AB * AT * AH * DK, 11);
    test_fill_uniform(in_logits, NV * V, 12);
    test_fill_uniform(in_table, VOCAB * C, 13);
    test_fill_uniform(in_ptable, AT * 2 * C, 14);
    for (int n = 0; n < NV; n++) in_targets[n] = n % 7 == 0 ? 0 : (int32_t)((n * 37) % V); /* 0: pad */
    for (int n = 0; n < N; n++) in_ids[n] = (int32_t)((n * 11) % VOCAB); /* repeated ids */
}

static attn_args attn_of(float p) {
    attn_args a;
    memset(&a, 0, sizeof a);
    a.kernels = KERN;
    a.B = AB, a.T = AT, a.S = AS, a.H = AH, a.d_k = DK;
    a.q_stride = AH * DK, a.q_bstride = AT * AH * DK, a.kv_stride = AH * DK, a.kv_bstride = AS * AH * DK;
    a.causal = 1;
    a.dropout_p = p;
    a.dropout_seed = 99;
    return a;
}

static void run_all(outputs *o) {
    memset(o, 0, sizeof *o);
    const float p = 0.1f, eps = 1e-5f;
    /* LayerNorm */
    layernorm_forward(o->ln_out, o->ln_mean, o->ln_rstd, in_x, in_w, in_b, N, C, eps);
    layernorm_backward(o->ln_dinp, o->ln_dw, o->ln_db, in_dy, in_x, in_w, o->ln_mean, o->ln_rstd, N, C);
    /* fused exit */
    residual_dropout_layernorm_forward(o->fx_res, o->fx_mask, o->fx_ln, o->fx_mean, o->fx_rstd, in_x, in_sub, in_w,
                                       in_b, p, 5, N, C, eps);
    layernorm_dropout_backward(o->fx_dres, o->fx_dsub, o->fx_dw, o->fx_db, in_dy, o->fx_res, in_w, o->fx_mean,
                               o->fx_rstd, o->fx_mask, p, N, C);
    /* fused FFN activation (GELU, dropout) */
    ffn_act_dropout_forward(o->ff_act, o->ff_mask, in_pre, 1, p, 6, (size_t)N * F);
    ffn_act_dropout_backward(o->ff_dpre, o->ff_db, in_dact, o->ff_mask, in_pre, 1, p, N, F);
    /* attention */
    const attn_args a = attn_of(p);
    attn_fused_forward(o->af_out, o->af_lse, in_q, in_k, in_v, &a, ws, SLOTS);
    attn_fused_backward(o->af_dq, o->af_dk, o->af_dv, in_do, o->af_out, o->af_lse, in_q, in_k, in_v, &a, ws, SLOTS);
    attn_forward(o->ar_out, o->ar_probs, o->ar_drop, in_q, in_k, in_v, &a);
    attn_backward(o->ar_dq, o->ar_dk, o->ar_dv, o->ar_dprobs, in_do, o->ar_probs, o->ar_drop, in_q, in_k, in_v, &a);
    /* log-softmax, loss */
    log_softmax_forward(o->ls_out, in_logits, NV, V);
    log_softmax_lse(o->ls_lse, in_logits, NULL, NV, V);
    log_softmax_backward(o->ls_din, in_logits, o->ls_out, NV, V);
    size_t n_nonpad = 0;
    o->ce_mean = cross_entropy_forward(o->ce_losses, &n_nonpad, in_logits, in_targets, 0, 0.1f, NV, V);
    cross_entropy_backward(o->ce_dlogits, in_logits, in_targets, 0, 0.1f, n_nonpad, NV, V);
    size_t n_kept = 0;
    for (size_t i = 0; i < NV; i++) o->cl_lse[i] = -1.0f; /* pad rows' values stay as they were */
    o->cl_mean = cross_entropy_forward_lse(o->cl_losses, o->cl_lse, &n_kept, in_logits, in_targets, 0, 0.1f, NV, V);
    cross_entropy_backward_lse(o->cl_dlogits, in_logits, o->cl_lse, in_targets, 0, 0.1f, n_kept, NV, V);
    /* element-wise */
    dropout_forward(o->dr_out, o->dr_mask, in_x, p, 7, (size_t)N * C);
    dropout_backward(o->dr_din, in_dy, o->dr_mask, p, (size_t)N * C);
    gelu_forward(o->ac_gelu, in_x, (size_t)N * C);
    gelu_backward(o->ac_dgelu, in_dy, in_x, (size_t)N * C);
    relu_forward(o->ac_relu, in_x, (size_t)N * C);
    relu_backward(o->ac_drelu, in_dy, in_x, (size_t)N * C);
    residual_forward(o->rs_out, in_x, in_sub, (size_t)N * C);
    residual_backward(o->rs_da, o->rs_db, in_dy, (size_t)N * C);
    /* embeddings, positions */
    embedding_forward(o->em_out, in_ids, in_table, 16.0f, N, C);
    embedding_backward(o->em_dtable, in_dy, in_ids, 16.0f, N, C);
    const pe_sinusoid_opts pe = {0, 0, 1.0, 0};
    memcpy(o->pe_x, in_x, sizeof o->pe_x);
    pe_sinusoidal_add(o->pe_x, 8, N / 8, C, 3, &pe); /* B = 8, T = 64 */
    memcpy(o->pt_x, in_x, sizeof o->pt_x);
    pos_table_add(o->pt_x, in_ptable, 8, AT, C, 5); /* B = 8, T = AT: the first 8·AT rows */
    pos_table_backward(o->pt_dtable, in_dy, 8, AT, C, 5);
    /* optimiser */
    memcpy(o->op_p, in_x, sizeof o->op_p);
    memcpy(o->op_m, in_sub, sizeof o->op_m);
    for (size_t i = 0; i < (size_t)N * C; i++) o->op_v[i] = in_sub[i] * in_sub[i];
    adam_update(o->op_p, o->op_m, o->op_v, in_dy, 0.75f, (size_t)N * C, 0.9f, 0.1f, 0.98f, 0.02f, 1e-3f, 0.5f, 1e-9f);
    memcpy(o->op_sgd, in_x, sizeof o->op_sgd);
    sgd_update(o->op_sgd, in_dy, 0.75f, (size_t)N * C, 0.01f);
    memcpy(o->op_scale, in_x, sizeof o->op_scale);
    scale_inplace(o->op_scale, 0.5f, (size_t)N * C);
    o->op_ss = sum_squares(in_dy, (size_t)N * C);
    static float *dst[N];
    static const float *src[N];
    for (size_t i = 0; i < N; i++) dst[i] = o->cp_out + (N - 1 - i) * C, src[i] = in_x + i * C;
    ops_copy_rows(dst, src, N, C);
}

/* Compares field `f` of two runs. */
#define SAME(f, t) CHECK(memcmp(ref->f, run->f, sizeof ref->f) == 0, "%s differs between 1 and %d threads", #f, t)

int main(void) {
    make_inputs();
    if (attn_fused_workspace_floats(AT, AS, SLOTS) > sizeof ws / sizeof ws[0]) {
        CHECK(0, "the test's attention workspace is too small");
        return test_finish("test_pool_kernels");
    }
    static outputs runs[2];
    outputs *ref = &runs[0], *run = &runs[1];
    tfm_set_threads(1);
    run_all(ref);
    for (int t = 2; t <= MAX_T; t++) {
        tfm_set_threads(t);
        size_t par0 = 0, par1 = 0;
        ops_pool_counts(&par0, NULL);
        run_all(run);
        ops_pool_counts(&par1, NULL);
        /* the kernels really ran as jobs offered to workers (a busy machine may back off some) */
        CHECK(par1 > par0, "%d threads: no job was offered to a worker", t);
        SAME(ln_out, t); SAME(ln_mean, t); SAME(ln_rstd, t); SAME(ln_dinp, t); SAME(ln_dw, t); SAME(ln_db, t);
        SAME(fx_res, t); SAME(fx_ln, t); SAME(fx_mean, t); SAME(fx_rstd, t); SAME(fx_dres, t); SAME(fx_dsub, t);
        SAME(fx_dw, t); SAME(fx_db, t); SAME(fx_mask, t);
        SAME(ff_act, t); SAME(ff_dpre, t); SAME(ff_db, t); SAME(ff_mask, t);
        SAME(af_out, t); SAME(af_lse, t); SAME(af_dq, t); SAME(af_dk, t); SAME(af_dv, t);
        SAME(ar_out, t); SAME(ar_probs, t); SAME(ar_drop, t); SAME(ar_dq, t); SAME(ar_dk, t); SAME(ar_dv, t);
        SAME(ar_dprobs, t);
        SAME(ls_out, t); SAME(ls_lse, t); SAME(ls_din, t); SAME(ce_losses, t); SAME(ce_dlogits, t);
        CHECK(ref->ce_mean == run->ce_mean, "cross_entropy_forward's mean differs between 1 and %d threads", t);
        SAME(cl_losses, t); SAME(cl_lse, t); SAME(cl_dlogits, t);
        CHECK(ref->cl_mean == run->cl_mean, "cross_entropy_forward_lse's mean differs between 1 and %d threads", t);
        SAME(dr_out, t); SAME(dr_din, t); SAME(dr_mask, t); SAME(ac_gelu, t); SAME(ac_dgelu, t); SAME(ac_relu, t);
        SAME(ac_drelu, t); SAME(rs_out, t); SAME(rs_da, t); SAME(rs_db, t);
        SAME(em_out, t); SAME(em_dtable, t); SAME(pe_x, t); SAME(pt_x, t); SAME(pt_dtable, t);
        SAME(op_p, t); SAME(op_m, t); SAME(op_v, t); SAME(op_sgd, t); SAME(op_scale, t);
        CHECK(ref->op_ss == run->op_ss, "sum_squares differs between 1 and %d threads", t);
        SAME(cp_out, t);
    }
    /* the outputs are not trivially equal: a few spot checks that the kernels ran */
    int ran = 0;
    for (size_t i = 0; i < (size_t)N * C; i++) ran |= ref->ln_out[i] != 0.0f;
    CHECK(ran, "layernorm_forward wrote nothing");
    CHECK(ref->af_out[AH * DK] != 0.0f && ref->ar_out[AH * DK] != 0.0f, "the attentions wrote nothing");
    CHECK(ref->op_ss > 0.0, "sum_squares is 0");
    int copied = 1;
    for (size_t i = 0; i < N; i++) copied &= memcmp(ref->cp_out + (N - 1 - i) * C, in_x + i * C, C * sizeof(float)) == 0;
    CHECK(copied, "ops_copy_rows: a row is not its source");
    /* the kept pair gives the recomputing pair's bits */
    CHECK(ref->cl_mean == ref->ce_mean && memcmp(ref->cl_losses, ref->ce_losses, sizeof ref->ce_losses) == 0 &&
              memcmp(ref->cl_dlogits, ref->ce_dlogits, sizeof ref->ce_dlogits) == 0,
          "cross_entropy_forward_lse / backward_lse differ from the recomputing pair");
    tfm_set_threads(0);
    return test_finish("test_pool_kernels");
}
