/* Decoding: the KV cache gives exactly the tokens of the recompute-everything path (greedy and
 * beam) on a trained small model; beam 1 equals greedy; on a tiny vocabulary beam search finds the
 * sequence an exhaustive search ranks best, with length penalty 0 (total log-probability) and 1
 * (per-token average); the length limit holds. */
#include "decode_internal.h"
#include "model_internal.h"
#include "copy_task.h"
#include "test_util.h"
#include "tfm/tfm.h"

#include <stdint.h>

static void cache_equals_recompute(tfm_context *m) {
    enum { B = 4, S = 6, MAXO = 40 };
    const int32_t src[B * S] = {5, 6, 7, 0, 0, 0, 9, 4, 12, 13, 8, 0, 14, 14, 0, 0, 0, 0, 10, 11, 12, 13, 4, 5};
    int32_t o1[B * MAXO], o2[B * MAXO];
    int l1[B], l2[B];
    for (int beam = 1; beam <= 4; beam += 3) {
        tfm_decode_config dc = tfm_decode_config_default();
        dc.beam = beam;
        CHECK(tfm_model_translate(m, &dc, B, S, src, o1, MAXO, l1) == TFM_OK, "cached beam %d: %s", beam,
              tfm_last_error());
        dc.use_cache = 0;
        CHECK(tfm_model_translate(m, &dc, B, S, src, o2, MAXO, l2) == TFM_OK, "recompute: %s", tfm_last_error());
        for (int b = 0; b < B; b++) {
            int same = l1[b] == l2[b];
            for (int i = 0; same && i < l1[b]; i++) same = o1[b * MAXO + i] == o2[b * MAXO + i];
            CHECK(same, "beam %d row %d: cached (%d tokens) and reference (%d tokens) outputs differ", beam, b, l1[b],
                  l2[b]);
        }
        /* and a sentence decoded alone gives what it gives inside the batch */
        dc.use_cache = 1;
        CHECK(tfm_model_translate(m, &dc, 1, S, src + 3 * S, o2, MAXO, l2) == TFM_OK && l2[0] == l1[3] &&
                  memcmp(o2, o1 + 3 * MAXO, (size_t)l2[0] * sizeof(int32_t)) == 0,
              "beam %d: row 3 alone differs from row 3 in the batch", beam);
        if (beam == 1) { /* the copy task is learnt: row 0 (5 6 7) becomes 6 7 8 */
            CHECK(l1[0] == 3 && o1[0] == 6 && o1[1] == 7 && o1[2] == 8, "row 0 translated to %d tokens: %d %d %d", l1[0],
                  o1[0], o1[1], o1[2]);
        }
    }
    /* beam search with one beam is greedy search: with the FINISHED rule (the default) for any
     * length penalty, since the one beam stops at its first EOS; with the BOUND rule only for
     * α = 0 (with a length penalty a single beam may go on past an EOS it already finished) */
    tfm_decode_config g = tfm_decode_config_default();
    CHECK(tfm_model_translate(m, &g, B, S, src, o1, MAXO, l1) == TFM_OK, "greedy");
    for (int rule = 0; rule < 3; rule++) {
        tfm_decode_config b1 = g;
        b1.beam = 1;
        b1.lenpen = rule == 1 ? 0.0f : rule == 2 ? 0.6f : 1.0f;
        b1.beam_stop = rule == 1 ? TFM_BEAM_STOP_BOUND : TFM_BEAM_STOP_FINISHED;
        CHECK(beam_search(m, &b1, B, S, src, o2, MAXO, l2) == TFM_OK, "beam_search K=1: %s", tfm_last_error());
        int same = memcmp(l1, l2, sizeof l1) == 0;
        for (int b = 0; same && b < B; b++)
            same = memcmp(o1 + b * MAXO, o2 + b * MAXO, (size_t)l1[b] * sizeof(int32_t)) == 0;
        CHECK(same, "beam search with K=1 (stop rule %s, lenpen %g) differs from greedy", tfm_beam_stop_name(b1.beam_stop),
              (double)b1.lenpen);
    }
}

enum { EX_L = 3, EX_NTOK = 3, EX_MAXO = 8 }; /* outputs: ids 3, 4, 5 (pad and BOS are never output) */

/* Every sequence of up to EX_L tokens (EOS excluded), scored by teacher forcing: the best under
 * (Σ log p) / (len + 1)^α into best_seq / *best_len. Returns 0 if scoring failed. */
static int exhaustive_best(tfm_context *m, const int32_t *src, float alpha, int *best_seq, int *best_len) {
    double best = -INFINITY;
    *best_len = -1;
    for (int len = 0; len <= EX_L; len++) {
        int n = 1;
        for (int i = 0; i < len; i++) n *= EX_NTOK;
        for (int code = 0; code < n; code++) {
            int32_t tgt[EX_L + 2];
            int seq[EX_L];
            tgt[0] = 1;
            for (int i = 0, k = code; i < len; i++, k /= EX_NTOK) {
                seq[i] = 3 + k % EX_NTOK;
                tgt[1 + i] = seq[i];
            }
            tgt[1 + len] = 2;
            double lp;
            int nt;
            if (tfm_model_score(m, 1, 3, len + 2, src, tgt, &lp, &nt, NULL) != TFM_OK) return 0;
            double ns = alpha == 0.0f ? lp : lp / pow(len + 1, alpha);
            if (ns > best + 1e-9) {
                best = ns;
                *best_len = len;
                memcpy(best_seq, seq, sizeof seq);
            }
        }
    }
    return 1;
}

static tfm_model *tiny_model(uint64_t seed) {
    tfm_config c = tfm_config_default();
    c.d_model = 16;
    c.n_heads = 2;
    c.d_ff = 16;
    c.n_enc_layers = c.n_dec_layers = 1;
    c.src_vocab = c.tgt_vocab = 6; /* pad bos eos + 3 tokens that may be output */
    c.max_len = 8;
    tfm_model *m = NULL;
    return tfm_model_create(&c, seed, &m) == TFM_OK ? m : NULL;
}

/* On a tiny vocabulary, beam search (K large enough to keep every prefix) returns the sequence
 * an exhaustive search ranks best, with α = 0 and α = 1 — on a model chosen so that the two
 * penalties prefer different sequences (so a search ignoring lenpen would fail). */
static void exhaustive(void) {
    const int32_t src[3] = {3, 4, 3};
    tfm_model *m = NULL;
    tfm_context *ctx = NULL;
    int seq0[EX_L], len0 = -1, seq1[EX_L], len1 = -1;
    for (uint64_t seed = 1; seed <= 200 && !m; seed++) {
        m = tiny_model(seed);
        CHECK(m && tfm_context_create(m, &ctx) == TFM_OK && exhaustive_best(ctx, src, 0.0f, seq0, &len0) &&
                  exhaustive_best(ctx, src, 1.0f, seq1, &len1),
              "exhaustive scoring: %s", tfm_last_error());
        if (len0 == len1 && memcmp(seq0, seq1, (size_t)len0 * sizeof(int)) == 0) {
            tfm_context_free(ctx);
            tfm_model_free(m);
            ctx = NULL;
            m = NULL;
        }
    }
    CHECK(m != NULL, "no tiny model where lenpen 0 and 1 prefer different outputs");
    if (!m) return;
    for (int a = 0; a < 2; a++) {
        const int *want = a ? seq1 : seq0;
        const int want_len = a ? len1 : len0;
        tfm_decode_config dc = tfm_decode_config_default();
        dc.beam = 32;
        dc.beam_stop = TFM_BEAM_STOP_BOUND; /* the exact rule: FINISHED may stop before the best */
        dc.lenpen = (float)a;
        dc.max_len_a = 0.0f;
        dc.max_len_b = EX_L;
        int32_t out[EX_MAXO];
        int olen;
        CHECK(tfm_model_translate(ctx, &dc, 1, 3, src, out, EX_MAXO, &olen) == TFM_OK, "beam: %s", tfm_last_error());
        int same = olen == want_len;
        for (int i = 0; same && i < olen; i++) same = out[i] == want[i];
        CHECK(same, "lenpen %d: beam found %d tokens (%d %d %d), exhaustive best has %d (%d %d %d)", a, olen,
              olen > 0 ? out[0] : -1, olen > 1 ? out[1] : -1, olen > 2 ? out[2] : -1, want_len,
              want_len > 0 ? want[0] : -1, want_len > 1 ? want[1] : -1, want_len > 2 ? want[2] : -1);
    }
    tfm_context_free(ctx);
    tfm_model_free(m);
}

/* A checkpoint saved and loaded back translates exactly as the model in memory did. */
static void save_load_same_translations(tfm_context *ctx) {
    enum { B = 3, S = 5, MAXO = 40 };
    const int32_t src[B * S] = {5, 6, 7, 8, 9, 14, 4, 0, 0, 0, 11, 12, 13, 0, 0};
    int32_t o1[B * MAXO], o2[B * MAXO];
    int l1[B], l2[B];
    tfm_decode_config dc = tfm_decode_config_default();
    dc.beam = 3;
    char dir[4096], path[4200];
    if (!test_make_tmpdir(dir, sizeof dir, "decode")) {
        CHECK(0, "no temporary folder for the checkpoint");
        return;
    }
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    tfm_model *r = NULL;
    tfm_context *rc = NULL;
    CHECK(tfm_model_translate(ctx, &dc, B, S, src, o1, MAXO, l1) == TFM_OK, "translate: %s", tfm_last_error());
    CHECK(tfm_model_save(tfm_context_model(ctx), path) == TFM_OK && tfm_model_load(path, &r) == TFM_OK &&
              tfm_context_create(r, &rc) == TFM_OK,
          "save/load: %s", tfm_last_error());
    if (rc) {
        CHECK(tfm_model_translate(rc, &dc, B, S, src, o2, MAXO, l2) == TFM_OK, "translate reloaded");
        int same = memcmp(l1, l2, sizeof l1) == 0;
        for (int b = 0; same && b < B; b++) same = memcmp(o1 + b * MAXO, o2 + b * MAXO, (size_t)l1[b] * sizeof(int32_t)) == 0;
        CHECK(same, "the reloaded checkpoint translates differently");
    }
    tfm_context_free(rc);
    tfm_model_free(r);
    remove(path);
    rmdir(dir);
}

int main(void) {
    tfm_model *m = copy_task_model(300);
    tfm_context *ctx = NULL;
    CHECK(m != NULL && tfm_context_create(m, &ctx) == TFM_OK, "training the copy model failed: %s", tfm_last_error());
    if (ctx) cache_equals_recompute(ctx);
    if (ctx) save_load_same_translations(ctx);
    tfm_context_free(ctx);
    tfm_model_free(m);
    exhaustive();
    return test_finish("decode");
}
