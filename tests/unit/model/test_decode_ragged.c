/* A KV cache whose rows sit at different positions (kv_cache_ragged, src/model/kv_cache.h): rows
 * with prompts of different lengths join one decoding batch at different steps, each prefilled
 * into a cache slot other than its step row (model_prefill_row, as tfm_generate prefills), leave
 * as they finish, and each row's tokens — greedy, or sampled
 * with its own seed, temperature, top-k, top-p and budget — are those of tfm_generate of that
 * prompt alone, bit for bit, for every position encoding this build has (each decode path then
 * reads a position per row: the embeddings' tables, RoPE's rotation, ALiBi's and T5's bias,
 * Shaw's relative tables, FLOATER's ODE table), plus the sinusoidal layouts, RoPE's half pairing
 * and grouped-query attention; and the cache grows between steps (kv_cache_grow) without changing
 * a row. */
#include "kv_cache.h"
#include "model_internal.h"
#include "ops.h"
#include "prefill.h"
#include "test_lm.h"
#include "test_models.h"
#include "test_util.h"
#include "tfm/tfm.h"

enum { V = 40, R = 6, MAX_LEN = 24, MAXO = MAX_LEN };

typedef test_pe_variant variant;

/* Row r: its prompt length, the step it joins at, its cache slot, budget and sampling. */
static const int k_np[R] = {3, 0, 7, 1, 5, 2};
static const int k_join[R] = {0, 0, 2, 3, 6, 11};
static const int k_slot[R] = {4, 0, 5, 1, 3, 2};
static const int k_budget[R] = {12, 9, 30, 5, 14, 8}; /* row 2 runs into max_len */

static tfm_sample_config row_sc(int r) {
    tfm_sample_config sc = tfm_sample_config_default();
    sc.seed = (uint64_t)(21 + r);
    sc.temperature = r % 2 == 0 ? 0.0f : 1.3f; /* greedy rows and sampled rows */
    sc.top_k = r == 3 ? 6 : 0;
    sc.top_p = r == 5 ? 0.85f : 1.0f;
    return sc;
}

/* One generation as tfm_generate does it, on the ragged cache. */
typedef struct {
    int32_t prefix[MAX_LEN + 1]; /* BOS, the prompt, the tokens */
    int np, limit, pos, n_out, joined, done;
} row_state;

/* Every row of a model generated on one ragged cache == tfm_generate alone. */
static void ragged_case(const variant *v, tfm_model *m) {
    tfm_context *ctx = NULL;
    CHECK(tfm_context_create(m, &ctx) == TFM_OK, "%s: context: %s", v->label, tfm_last_error());
    if (!ctx) return;
    const tfm_config *cfg = tfm_model_config(m);
    int32_t prompts[R][MAX_LEN], want[R][MAXO];
    int want_len[R];
    for (int r = 0; r < R; r++) {
        for (int i = 0; i < k_np[r]; i++) prompts[r][i] = 3 + (r * 11 + i * 7) % (V - 3);
        const tfm_sample_config sc = row_sc(r);
        CHECK(tfm_generate(ctx, &sc, prompts[r], k_np[r], k_budget[r], 1, want[r], MAXO, &want_len[r], NULL, NULL) ==
                  TFM_OK,
              "%s: alone: %s", v->label, tfm_last_error());
    }
    /* the cache starts short (8 positions) and grows as rows need more */
    CHECK(kv_cache_reserve(ctx, R, 0, 8) == TFM_OK, "%s: reserve: %s", v->label, tfm_last_error());
    model_decode_start(ctx, NULL);
    kv_cache_ragged(ctx);
    row_state rs[R];
    memset(rs, 0, sizeof rs);
    int step_row[R], n_rows = 0, grew = 0, max_apart = 0;
    int32_t tokens[R], scratch[V];
    for (int step = 0; step < 64; step++) {
        for (int r = 0; r < R; r++) {
            if (k_join[r] != step) continue;
            row_state *s = &rs[r];
            s->np = k_np[r];
            s->prefix[0] = cfg->bos_id;
            memcpy(s->prefix + 1, prompts[r], (size_t)k_np[r] * sizeof(int32_t));
            s->limit = k_budget[r] < MAX_LEN - s->np ? k_budget[r] : MAX_LEN - s->np;
            s->joined = 1;
            const int need = s->np + s->limit; /* positions it reads */
            if (need > ctx->cache.cap_T) {
                CHECK(kv_cache_grow(ctx, need) == TFM_OK, "%s: grow: %s", v->label, tfm_last_error());
                grew++;
            }
            /* as tfm_generate: BOS + prompt prefilled (into the row's slot), token 0 from its logits */
            CHECK(model_prefill_reserve(ctx, s->np + 1) == TFM_OK, "%s: %s", v->label, tfm_last_error());
            model_prefill_row(ctx, k_slot[r], s->prefix, s->np + 1);
            float row[V];
            memcpy(row, kv_cache_logits(ctx) + (size_t)k_slot[r] * V, sizeof row);
            const tfm_sample_config sc = row_sc(r);
            const int32_t y = tfm_sample_token(&sc, cfg, row, V, 0, scratch);
            s->pos = s->np + 1;
            if (tfm_config_is_eos(cfg, y) || s->limit <= 1) s->done = 1;
            if (!tfm_config_is_eos(cfg, y)) s->prefix[s->pos] = y, s->n_out++;
            if (s->done) continue;
            kv_cache_add_row(ctx, k_slot[r], s->pos);
            step_row[n_rows++] = r;
        }
        if (n_rows == 0) {
            int left = 0;
            for (int r = 0; r < R; r++) left += !rs[r].joined;
            if (!left) break;
            continue;
        }
        int lo = MAX_LEN, hi = 0;
        for (int b = 0; b < n_rows; b++) {
            const row_state *s = &rs[step_row[b]];
            tokens[b] = s->prefix[s->pos];
            lo = s->pos < lo ? s->pos : lo;
            hi = s->pos > hi ? s->pos : hi;
        }
        if (hi - lo > max_apart) max_apart = hi - lo;
        model_decode_step(ctx, tokens, 1);
        const float *logits = kv_cache_logits(ctx);
        int keep[R], n_keep = 0;
        for (int b = 0; b < n_rows; b++) {
            row_state *s = &rs[step_row[b]];
            const int t = s->pos++, k = t - s->np; /* position t predicts token k */
            float row[V];
            memcpy(row, logits + (size_t)b * V, sizeof row);
            const tfm_sample_config sc = row_sc(step_row[b]);
            const int32_t y = tfm_sample_token(&sc, cfg, row, V, (uint64_t)k, scratch);
            if (tfm_config_is_eos(cfg, y) || k + 1 >= s->limit) s->done = 1;
            if (!tfm_config_is_eos(cfg, y)) {
                s->prefix[t + 1] = y;
                s->n_out++;
            }
            if (!s->done) keep[n_keep++] = b;
        }
        kv_cache_compact(ctx, keep, n_keep);
        for (int j = 0; j < n_keep; j++) step_row[j] = step_row[keep[j]];
        n_rows = n_keep;
        CHECK(ctx->cache.B == n_rows, "%s: the cache holds %d rows, the test %d", v->label, ctx->cache.B, n_rows);
    }
    int same = 0;
    for (int r = 0; r < R; r++) {
        const row_state *s = &rs[r];
        const int ok = s->done && s->n_out == want_len[r] &&
                       memcmp(s->prefix + 1 + s->np, want[r], (size_t)want_len[r] * sizeof(int32_t)) == 0;
        CHECK(ok, "%s: row %d (prompt %d, joined at step %d): %d tokens in the batch, %d alone (or other tokens)",
              v->label, r, s->np, k_join[r], s->n_out, want_len[r]);
        same += ok;
    }
    CHECK(grew > 0 && max_apart >= 5, "%s: the cache grew %d times, rows were at most %d positions apart", v->label,
          grew, max_apart);
    printf("%-20s %d of %d rows equal to tfm_generate alone (rows up to %d positions apart, %d growths)\n", v->label,
           same, R, max_apart, grew);
    tfm_context_free(ctx);
}

int main(void) {
    ops_set_threads(1); /* a tiny model: OpenMP barriers would cost more than the work */
    variant vs[32];
    const tfm_config base = test_lm_config(V, MAX_LEN);
    int n = test_pe_variants(&base, vs, 28, NULL);
    for (int i = 0, n0 = n; i < n0; i++) {
        if (vs[i].c.pe == TFM_PE_SHAW && !vs[i].c.pe_shaw_values) {
            vs[n] = vs[i];
            vs[n].label = "shaw values k=2";
            vs[n].c.pe_shaw_values = 1;
            vs[n++].c.pe_max_distance = 2;
        }
        if (vs[i].c.pe == TFM_PE_ROPE && vs[i].c.rope_pairing == TFM_ROPE_INTERLEAVED) {
            vs[n] = vs[i]; /* a Llama-like block: rotate-half, grouped-query attention, RMSNorm */
            vs[n].label = "rope half, gqa";
            vs[n].c.rope_pairing = TFM_ROPE_HALF;
            vs[n].c.n_heads = 4;
            vs[n].c.n_kv_heads = 2;
            vs[n].c.norm_first = 1;
            vs[n++].c.norm = TFM_NORM_RMS;
        }
    }
    CHECK(n >= 8, "only %d variants: the build lacks an encoding", n);
    for (int i = 0; i < n; i++) {
        CHECK(tfm_config_validate(&vs[i].c) == TFM_OK, "%s: %s", vs[i].label, tfm_last_error());
        tfm_model *m = test_model_moved(&vs[i].c, vs[i].label, 300 + (uint64_t)i);
        if (!m) continue;
        ragged_case(&vs[i], m);
        tfm_model_free(m);
    }
    return test_finish("decode_ragged");
}
