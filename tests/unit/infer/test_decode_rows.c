/* A row's bits do not depend on which other rows share its product (docs/KERNELS.md, "Decoding"):
 *  - ops_gemm: every tile runs the kernel (gemm_small or BLIS) of the product's full tile, so a
 *    row in a partial last tile gets the bits it gets inside a full tile;
 *  - decoding: as finished sentences leave the step (decode_compact), the rows kept run the
 *    kernels chosen for the rows the call started with, so beam search (beam 1 too) gives the
 *    same ids and scores (greedy: ids), bit for bit, as the same batch decoded with every row kept to the end —
 *    where the rows cross linear_rows_max() (128 with AVX-512, 8 on the plain path). */
#include "cpu.h"
#include "decode_internal.h"
#include "model_internal.h"
#include "gemm_small.h"
#include "ops.h"
#include "parallel.h"
#include "test_util.h"
#include "tfm/tfm.h"

#include <math.h>
#include <stdint.h>

/* Row r of op(A)·Bᵀ is the same bits in products of M = 129 (the last tile partial: one row) and
 * M = 256 (every tile full): both tile as 128 × 128 (parallel.h) and every tile, the one-row tile
 * included, runs the kernel chosen for the full 128 × 128 × K tile (past GEMM_SMALL_MAX_MACS: the
 * small kernel for A·Bᵀ where AVX2+FMA is, else BLIS). */
static void gemm_partial_tile(void) {
    enum { N = 256, K = 1000, M1 = 129, M2 = 256 };
    float *A = malloc(sizeof(float) * M2 * K), *B = malloc(sizeof(float) * N * K);
    float *C1 = malloc(sizeof(float) * M1 * N), *C2 = malloc(sizeof(float) * M2 * N);
    if (!A || !B || !C1 || !C2) { CHECK(0, "out of memory"); return; }
    test_fill_uniform(A, (size_t)M2 * K, 11);
    test_fill_uniform(B, (size_t)N * K, 12);
    for (int threads = 1; threads <= 2; threads++) {
        ops_set_threads(threads);
        ops_gemm(KERN, 0, 1, M1, N, K, 1.0f, A, K, B, K, 0.0f, C1, N);
        ops_gemm(KERN, 0, 1, M2, N, K, 1.0f, A, K, B, K, 0.0f, C2, N);
        int bad = 0;
        for (int r = 0; r < M1; r++) bad += memcmp(C1 + (size_t)r * N, C2 + (size_t)r * N, N * sizeof(float)) != 0;
        CHECK(bad == 0, "ops_gemm %d threads: %d of %d rows differ between M = %d and M = %d", threads, bad, M1, M1, M2);
        /* linear_forward over the same rows: the tiled path as well (129, 256 > linear_rows_max()) */
        linear_forward(KERN, C1, A, B, NULL, M1, K, N);
        linear_forward(KERN, C2, A, B, NULL, M2, K, N);
        bad = 0;
        for (int r = 0; r < M1; r++) bad += memcmp(C1 + (size_t)r * N, C2 + (size_t)r * N, N * sizeof(float)) != 0;
        CHECK(bad == 0, "linear_forward %d threads: %d of %d rows differ between M = %d and M = %d", threads, bad, M1,
              M1, M2);
    }
    ops_set_threads(0);
    free(A), free(B), free(C1), free(C2);
}

enum { S = 30, MAXO = 40, MAXB = 48 };

/* B sentences of lengths 2 … 28 (so they finish at different steps: max_len_a = 1), decoded with
 * `beam`; compaction on and off, and the encoder run one sentence per pass (encode_tokens 1, as
 * a batch of long sentences is: ENCODE_TOKENS), must give the same ids, lengths and scores, bit
 * for bit. */
static void decode_same(tfm_context *ctx, int B, int beam, int greedy, const char *what) {
    static int32_t src[MAXB * S], out[3][MAXB * MAXO];
    static int len[3][MAXB];
    static double sc[3][MAXB];
    memset(src, 0, sizeof src);
    for (int b = 0; b < B; b++)
        for (int s = 0; s < 2 + (b % 14) * 2; s++) src[b * S + s] = 3 + (b * 7 + s * 3) % 37;
    tfm_decode_config dc = tfm_decode_config_default();
    dc.beam = beam;
    dc.lenpen = 0.0f;
    dc.max_len_a = 1.0f;
    dc.max_len_b = 0;
    for (int k = 0; k < 3; k++) {
        ctx->decode_compact = k != 1;
        ctx->encode_tokens = k == 2 ? 1 : ENCODE_TOKENS;
        memset(out[k], 0, sizeof out[k]);
        tfm_status st = !greedy ? beam_search_scored(ctx, &dc, B, S, src, out[k], MAXO, len[k], sc[k])
                                : greedy_search(ctx, &dc, B, S, src, out[k], MAXO, len[k]);
        CHECK(st == TFM_OK, "%s: decoding failed: %s", what, tfm_last_error());
        CHECK(ctx->acts.B == (k == 2 ? 1 : encode_rows(B, S, ENCODE_TOKENS)), "%s: the encoder ran %d sentences a pass",
              what, ctx->acts.B);
    }
    ctx->decode_compact = 1;
    ctx->encode_tokens = ENCODE_TOKENS;
    int bad = 0, bad_group = 0;
    for (int b = 0; b < B; b++)
        for (int k = 1; k < 3; k++) {
            const int differ = len[0][b] != len[k][b] ||
                               memcmp(out[0] + b * MAXO, out[k] + b * MAXO, (size_t)len[0][b] * sizeof(int32_t)) != 0 ||
                               (!greedy && memcmp(&sc[0][b], &sc[k][b], sizeof(double)) != 0);
            *(k == 1 ? &bad : &bad_group) += differ;
        }
    CHECK(bad_group == 0, "%s: %d of %d sentences differ when the encoder runs one sentence a pass", what, bad_group, B);
    CHECK(bad == 0, "%s: %d of %d sentences differ with and without compaction", what, bad, B);
}

/* A call whose rows take the panels reads the model's weights in place (until 2026-12-03 it read
 * copies transposed into the context at every call): after the model changes (here: every decoder
 * FFN's W_1 and the generator negated) the same context decodes what a fresh context decodes — and
 * something else than before the change (else the check would be empty). */
static void weights_changed(tfm_model *m, tfm_context *ctx) {
    enum { B = 12 };
    static int32_t src[B * S], out[3][B * MAXO];
    int len[3][B];
    memset(src, 0, sizeof src);
    for (int b = 0; b < B; b++)
        for (int s = 0; s < 2 + b; s++) src[b * S + s] = 3 + (b * 5 + s * 7) % 37;
    tfm_decode_config dc = tfm_decode_config_default();
    dc.max_len_a = 1.0f, dc.max_len_b = 4;
    CHECK((B > linear_rows_max(KERN) && B <= linear_panels_max(KERN)) || !linear_panels_max(KERN), "12 rows take the panels");
    CHECK(tfm_model_translate(ctx, &dc, B, S, src, out[0], MAXO, len[0]) == TFM_OK, "before: %s", tfm_last_error());
    const tfm_config *c = &m->cfg;
    model_desc md;
    model_describe(c, &md);
    for (int l = 0; l < md.stack[md.out_stack].n_layers; l++) {
        float *w1 = m->p.stack[md.out_stack].layers[l].linear1_weight;
        for (size_t i = 0; i < (size_t)c->d_ff * (size_t)c->d_model; i++) w1[i] = -w1[i];
    }
    for (size_t i = 0; i < (size_t)c->tgt_vocab * (size_t)c->d_model; i++)
        m->p.generator_weight[i] = -m->p.generator_weight[i];
    tfm_context *fresh = NULL;
    CHECK(tfm_context_create(m, &fresh) == TFM_OK, "context: %s", tfm_last_error());
    CHECK(tfm_model_translate(ctx, &dc, B, S, src, out[1], MAXO, len[1]) == TFM_OK, "after: %s", tfm_last_error());
    CHECK(fresh && tfm_model_translate(fresh, &dc, B, S, src, out[2], MAXO, len[2]) == TFM_OK, "fresh: %s",
          tfm_last_error());
    int same_fresh = memcmp(len[1], len[2], sizeof len[1]) == 0, same_before = memcmp(len[0], len[1], sizeof len[0]) == 0;
    for (int b = 0; b < B; b++) {
        same_fresh = same_fresh && memcmp(out[1] + b * MAXO, out[2] + b * MAXO, (size_t)len[1][b] * sizeof(int32_t)) == 0;
        same_before = same_before && memcmp(out[0] + b * MAXO, out[1] + b * MAXO, (size_t)len[0][b] * sizeof(int32_t)) == 0;
    }
    CHECK(same_fresh, "after the weights changed, the same context decodes otherwise than a fresh one (stale copies)");
    CHECK(!same_before, "negating W_1 and the generator changed no output: the check above proves nothing");
    tfm_context_free(fresh);
    for (size_t i = 0; i < (size_t)c->tgt_vocab * (size_t)c->d_model; i++) /* restore the model */
        m->p.generator_weight[i] = -m->p.generator_weight[i];
    for (int l = 0; l < md.stack[md.out_stack].n_layers; l++) {
        float *w1 = m->p.stack[md.out_stack].layers[l].linear1_weight;
        for (size_t i = 0; i < (size_t)c->d_ff * (size_t)c->d_model; i++) w1[i] = -w1[i];
    }
}

/* tfm_context_reserve_decode: memory for the largest call up front, so calls within it (batches
 * sorted by length grow batch by batch) re-carve the same blocks instead of reallocating them. */
static void reserve_up_front(tfm_context *ctx) {
    enum { B = 12 };
    static int32_t src[B * S], out[B * MAXO];
    int len[B];
    tfm_decode_config dc = tfm_decode_config_default();
    CHECK(tfm_context_reserve_decode(ctx, &dc, 0, 5) == TFM_ERR_INVALID_ARG && strstr(tfm_last_error(), "B >= 1"),
          "B = 0 refused: %s", tfm_last_error());
    CHECK(tfm_context_reserve_decode(ctx, &dc, 4, ctx->m->cfg.max_len + 1) == TFM_ERR_RANGE, "S > max_len refused");
    tfm_decode_config bad = dc;
    bad.beam = 257;
    CHECK(tfm_context_reserve_decode(ctx, &bad, 4, 5) == TFM_ERR_INVALID_ARG && strstr(tfm_last_error(), "[1, 256]"),
          "beam 257 refused: %s", tfm_last_error());
    bad = dc;
    bad.max_len_a = NAN;
    CHECK(tfm_context_reserve_decode(ctx, &bad, 4, 5) == TFM_ERR_INVALID_ARG, "max_len_a NaN refused");
    for (int beam = 1; beam <= 4; beam += 3) {
        dc.beam = beam;
        CHECK(tfm_context_reserve_decode(ctx, &dc, B, S) == TFM_OK, "reserve: %s", tfm_last_error());
        /* an arena only grows (freed and allocated bigger): its capacity shows any regrowth */
        const size_t cache = ctx->cache.arena.cap, act = ctx->act_arena.cap;
        for (int n = 2; n <= B; n += 5) /* 2, 7 and 12 sentences of 3 … S tokens: within the reserve */
            for (int w = 3; w <= S; w += 9) {
                memset(src, 0, sizeof src);
                for (int b = 0; b < n; b++)
                    for (int p = 0; p < w; p++) src[b * w + p] = 3 + (b + p) % 30;
                CHECK(tfm_model_translate(ctx, &dc, n, w, src, out, MAXO, len) == TFM_OK, "translate: %s",
                      tfm_last_error());
            }
        CHECK(ctx->cache.arena.cap == cache && ctx->cache.arena.cap > 0 && ctx->act_arena.cap == act,
              "beam %d: a call within the reserve reallocated the KV cache or the workspace", beam);
    }
}

int main(void) {
    gemm_partial_tile();

    tfm_config c = tfm_config_default();
    c.d_model = 64, c.n_heads = 4, c.d_ff = 128, c.n_enc_layers = c.n_dec_layers = 2;
    c.src_vocab = c.tgt_vocab = 40, c.max_len = 40;
    tfm_model *m = NULL;
    tfm_context *ctx = NULL;
    if (tfm_model_create(&c, 7, &m) != TFM_OK || tfm_context_create(m, &ctx) != TFM_OK) {
        CHECK(0, "model: %s", tfm_last_error());
        return test_finish("decode_rows");
    }
    weights_changed(m, ctx);
    reserve_up_front(ctx);
    const int avx512 = ctx->kernels.isa == OPS_ISA_AVX512;
    tfm_context_free(ctx);
    for (int wide = avx512; wide >= 0; wide--) {
        /* a context of each instruction set: AVX-512's kernels, and the others' (AVX2 or plain) */
        tfm_kernel_opts ko = tfm_kernel_opts_default();
        ko.isa = wide ? TFM_ISA_AVX512 : TFM_ISA_AVX2;
        ctx = NULL;
        if (tfm_context_create_opts(m, &ko, &ctx) != TFM_OK) {
            CHECK(0, "context: %s", tfm_last_error());
            break;
        }
        char what[96];
        /* 160 rows → fewer than 128 (AVX-512 kernel limit), and → fewer than 8 (plain limit) */
        snprintf(what, sizeof what, "%s, 40 sentences x beam 4", wide ? "AVX-512" : "plain");
        decode_same(ctx, 40, 4, 0, what);
        snprintf(what, sizeof what, "%s, 12 sentences x beam 1", wide ? "AVX-512" : "plain");
        decode_same(ctx, 12, 1, 0, what);
        snprintf(what, sizeof what, "%s, 12 sentences greedy (ids only)", wide ? "AVX-512" : "plain");
        decode_same(ctx, 12, 1, 1, what);
        snprintf(what, sizeof what, "%s, 48 sentences x beam 3", wide ? "AVX-512" : "plain");
        decode_same(ctx, 48, 3, 0, what);
        tfm_context_free(ctx);
    }
    tfm_model_free(m);
    return test_finish("decode_rows");
}
