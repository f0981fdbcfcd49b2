/* Beam search (as in Sutskever et al. 2014; Vaswani et al. 2017, §6.1 used beam 4, α 0.6) with
 * fairseq's length penalty: a finished hypothesis scores (Σ log p) / length^α, length counting
 * its tokens and EOS (a forced first token counted only with cfg->lenpen_count_forced, as
 * transformers' generated_len). K live beams per sentence on the KV cache; finished hypotheses are kept
 * apart; a sentence stops (tfm_beam_stop) when K hypotheses have finished (fairseq, CTranslate2)
 * or, with TFM_BEAM_STOP_BOUND, when no live beam can beat its best finished hypothesis
 * (tensor2tensor). */
#include "arena.h"
#include "decode_internal.h"
#include "ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    float score; /* accumulated log-probability */
    int beam;
    int token;
} cand;

static int cand_cmp(const void *a, const void *b) {
    const cand *x = a, *y = b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    if (x->beam != y->beam) return x->beam < y->beam ? -1 : 1;
    return x->token < y->token ? -1 : x->token > y->token;
}

void beam_top_n(const float *x, float lse, size_t V, int n, int *idx) {
    int k = 0;
    float last = -INFINITY; /* the n-th best so far, once there are n */
    for (size_t j = 0; j < V; j++) {
        if (k == n && j % 16 == 0 && V - j >= 16) {
            /* once full, most of a vocabulary is below the n-th best: 16 entries at a time are
             * tested (the test below, vectorised) and skipped together when none passes it */
            int any = 0;
            for (size_t q = 0; q < 16; q++) any |= x[j + q] - lse > last;
            if (!any) {
                j += 15;
                continue;
            }
        }
        const float v = x[j] - lse;
        if (k == n && !(v > last)) continue;
        int p = k < n ? k++ : n - 1; /* insertion: drop the last if full */
        while (p > 0 && v > x[idx[p - 1]] - lse) {
            idx[p] = idx[p - 1];
            p--;
        }
        idx[p] = (int)j;
        if (k == n) last = x[idx[n - 1]] - lse;
    }
    for (int i = k; i < n; i++) idx[i] = -1;
}

static double normalized(double score, int len, float alpha) { return alpha == 0.0f ? score : score / pow(len, alpha); }

int beam_penalty_len(const tfm_config *cfg, const tfm_decode_config *dc, int t) {
    const int n = t + 1 - (dc->force_first && !cfg->lenpen_count_forced ? 1 : 0);
    return n > 1 ? n : 1;
}

tfm_status beam_search(tfm_context *ctx, const tfm_decode_config *dc, int B, int S, const int32_t *src,
                       int32_t *out, int max_out, int *out_len) {
    return beam_search_nbest(ctx, dc, B, S, src, 1, out, max_out, out_len, NULL);
}

tfm_status beam_search_scored(tfm_context *ctx, const tfm_decode_config *dc, int B, int S, const int32_t *src,
                              int32_t *out, int max_out, int *out_len, double *out_score) {
    return beam_search_nbest(ctx, dc, B, S, src, 1, out, max_out, out_len, out_score);
}

/* Keeps a finished hypothesis (its t tokens h, normalised score ns) among sentence i's N best:
 * sorted by score, an equal score after those already kept (so the first of equals stays first,
 * as the single best did before there were N). */
static void keep_finished(double *best, int *best_len, int32_t *best_tok, int *n_kept, int i, int N, int cap,
                          double ns, const int32_t *h, int t) {
    double *bs = best + (size_t)i * (size_t)N;
    int *bl = best_len + (size_t)i * (size_t)N;
    int32_t *bt = best_tok + (size_t)i * (size_t)N * (size_t)cap;
    if (!(ns > -INFINITY)) return; /* as the single best: only a score above −∞ is kept */
    int p = n_kept[i];
    while (p > 0 && ns > bs[p - 1]) p--;
    if (p == N) return; /* not among the N best */
    const int last = n_kept[i] < N ? n_kept[i] : N - 1; /* the slot the shift fills */
    for (int q = last; q > p; q--) {
        bs[q] = bs[q - 1];
        bl[q] = bl[q - 1];
        memcpy(bt + (size_t)q * (size_t)cap, bt + (size_t)(q - 1) * (size_t)cap, (size_t)bl[q] * sizeof *bt);
    }
    bs[p] = ns;
    bl[p] = t;
    memcpy(bt + (size_t)p * (size_t)cap, h, (size_t)t * sizeof *bt);
    if (n_kept[i] < N) n_kept[i]++;
}

tfm_status beam_search_nbest(tfm_context *ctx, const tfm_decode_config *dc, int B, int S, const int32_t *src,
                             int N, int32_t *out, int max_out, int *out_len, double *out_score) {
    const tfm_model *m = tfm_context_model(ctx);
    const tfm_config *cfg = tfm_model_config(m);
    const int K = dc->beam, R = B * K, C = 2 * K;
    const size_t V = (size_t)cfg->tgt_vocab;
    int cap = 1; /* positions: the longest output limit + 1 */
    for (int i = 0; i < B; i++) {
        const int lim = decode_limit(m, dc, src + (size_t)i * (size_t)S, S);
        if (lim + 1 > cap) cap = lim + 1;
    }
    /* The search's buffers, carved from one arena: a counting pass (no memory) sizes it, the second
     * pass hands out the pointers; the arena comes zeroed (done, n_finished). */
    int *limit, *act, *keep, *parent, *topi, *best_len, *n_finished, *n_kept;
    int32_t *srcK, *hist, *prefix, *hist2, *tok, *best_tok;
    float *score, *score2, *lse;
    uint8_t *idle, *done;
    cand *cands;
    double *best;
    tfm_arena arena = {0};
    tfm_status st = TFM_OK;
    for (int pass = 0; pass < 2 && st == TFM_OK; pass++) {
        if (pass == 1) st = arena_init(&arena, arena.used, "beam search");
#define TAKE(n, type) ((type *)arena_take_bytes(&arena, (size_t)(n) * sizeof(type)))
        limit = TAKE(B, int);
        /* the reference path recomputes every row from its source: each sentence copied per beam;
         * the KV cache encodes each sentence once and its beams share that memory */
        srcK = dc->use_cache ? NULL : TAKE((size_t)R * (size_t)S, int32_t);
        hist = TAKE((size_t)R * (size_t)cap, int32_t);   /* tokens of each live beam */
        prefix = TAKE((size_t)R * (size_t)cap, int32_t); /* BOS + hist: the step's input */
        hist2 = TAKE((size_t)R * (size_t)cap, int32_t);
        score = TAKE(R, float);
        score2 = TAKE(R, float);
        lse = TAKE(R, float);   /* log Σ exp of each row's logits */
        idle = TAKE(R, uint8_t); /* rows without a live hypothesis this step */
        act = TAKE(B, int);     /* the sentence of each group of K step rows */
        keep = TAKE(R, int);
        tok = TAKE(R, int32_t);
        parent = TAKE(R, int);
        topi = TAKE(C, int);
        cands = TAKE((size_t)K * (size_t)C, cand);
        best = TAKE((size_t)B * (size_t)N, double); /* the N best finished normalised scores per sentence, */
        best_tok = TAKE((size_t)B * (size_t)N * (size_t)cap, int32_t); /* best first; their tokens */
        best_len = TAKE((size_t)B * (size_t)N, int);
        n_kept = TAKE(B, int); /* how many of the N are filled */
        done = TAKE(B, uint8_t);
        n_finished = TAKE(B, int); /* finished hypotheses per sentence */
#undef TAKE
    }
    for (int i = 0; st == TFM_OK && i < B; i++) /* the step that must end each hypothesis (forced_eos: one earlier) */
        limit[i] = decode_end(cfg, decode_limit(m, dc, src + (size_t)i * (size_t)S, S));
    if (st == TFM_OK) {
        for (int r = 0; srcK && r < R; r++)
            memcpy(srcK + (size_t)r * (size_t)S, src + (size_t)(r / K) * (size_t)S, (size_t)S * sizeof *srcK);
        st = decode_begin_beams(ctx, dc, B, K, S, src, cap);
    }
    if (st == TFM_OK) {
        for (int r = 0; r < R; r++) {
            score[r] = r % K == 0 ? 0.0f : -INFINITY; /* one live beam at the start: no duplicates */
            tok[r] = tfm_config_decoder_start(cfg);
        }
        for (int i = 0; i < B; i++) act[i] = i;
        for (size_t i = 0; i < (size_t)B * (size_t)N; i++) {
            best[i] = -INFINITY;
            best_len[i] = 0;
        }
    }
    /* Step rows: nA groups of K, group a decoding sentence act[a] (rows a·K .. a·K + K − 1 of the
     * cache, of score, tok, parent, hist). On the cache a finished sentence's group leaves the
     * step (decode_compact); the reference path keeps all B. */
    int live_sentences = B, nA = B;
    for (int t = 0; st == TFM_OK && t < cap && live_sentences > 0; t++) {
        float *logits;
        const int Rt = nA * K;
        for (int r = 0; r < Rt; r++) {
            int32_t *p = prefix + (size_t)r * (size_t)cap;
            if (dc->use_cache) { /* the KV cache reads only position t: tok[r] (BOS at t = 0) */
                p[t] = tok[r];
                continue;
            }
            p[0] = tfm_config_decoder_start(cfg);
            memcpy(p + 1, hist + (size_t)r * (size_t)cap, (size_t)t * sizeof *hist);
        }
        st = decode_step(ctx, dc, Rt, S, dc->use_cache ? src : srcK, prefix, t, cap, &logits);
        if (st != TFM_OK) break;
        /* log p = logit − lse, formed only for the few entries read: the V log-probabilities of
         * a row are never written, and rows without a live hypothesis get no lse */
        for (int r = 0; r < Rt; r++) idle[r] = done[act[r / K]] || score[r] == -INFINITY;
        log_softmax_lse(lse, logits, idle, (size_t)Rt, V);
        for (int a = 0; a < nA; a++) {
            const int i = act[a];
            float *sc2 = score2 + (size_t)a * (size_t)K;
            if (done[i]) {
                for (int k = 0; k < K; k++) sc2[k] = -INFINITY, parent[a * K + k] = a * K + k;
                continue;
            }
            int nc = 0;
            for (int k = 0; k < K; k++) {
                const int r = a * K + k;
                if (score[r] == -INFINITY) continue;
                float *lg = logits + (size_t)r * V;
                forbid_specials(cfg, lg); /* after the lse: pad and BOS keep their share of it */
                if (t == limit[i]) { /* length limit: this hypothesis must end here (on a forced EOS: log p 0) */
                    double s = (double)score[r] + decode_eos_logp(cfg, lg, lse[r]);
                    keep_finished(best, best_len, best_tok, n_kept, i, N, cap,
                                  normalized(s, beam_penalty_len(cfg, dc, t), dc->lenpen), hist + (size_t)r * (size_t)cap, t);
                    continue;
                }
                if (t == 0 && dc->force_first) { /* decode.h: the forced first token, log p = 0 */
                    cands[nc++] = (cand){score[r], k, dc->first_id};
                    continue;
                }
                beam_top_n(lg, lse[r], V, C < (int)V ? C : (int)V, topi);
                for (int j = 0; j < C && j < (int)V && topi[j] >= 0; j++)
                    cands[nc++] = (cand){score[r] + (lg[topi[j]] - lse[r]), k, topi[j]};
            }
            qsort(cands, (size_t)nc, sizeof *cands, cand_cmp);
            int n_new = 0;
            for (int j = 0; j < nc && n_new < K; j++) {
                const int r = a * K + cands[j].beam;
                if (cands[j].token == cfg->eos_id) {
                    /* an EOS among the K best candidates finishes a hypothesis (kept apart) */
                    if (j < K) {
                        n_finished[i]++;
                        keep_finished(best, best_len, best_tok, n_kept, i, N, cap,
                                      normalized(cands[j].score, beam_penalty_len(cfg, dc, t), dc->lenpen),
                                      hist + (size_t)r * (size_t)cap, t);
                    }
                    continue;
                }
                sc2[n_new] = cands[j].score;
                parent[a * K + n_new] = r;
                tok[a * K + n_new] = cands[j].token;
                n_new++;
            }
            for (int k = n_new; k < K; k++) { /* fewer continuations than beams: dead rows */
                sc2[k] = -INFINITY;
                parent[a * K + k] = a * K + k;
                tok[a * K + k] = cfg->pad_id;
            }
            int stop = n_new == 0;
            if (dc->beam_stop == TFM_BEAM_STOP_BOUND) {
                /* a live beam's score can only fall, and its length grow to at most limit + 1, so
                 * s / (limit + 1)^α bounds what it can still reach (α >= 0, s <= 0) */
                double bound = -INFINITY;
                for (int k = 0; k < n_new; k++) {
                    double b = normalized(sc2[k], beam_penalty_len(cfg, dc, limit[i]), dc->lenpen);
                    if (b > bound) bound = b;
                }
                stop |= best[(size_t)i * (size_t)N] > -INFINITY && best[(size_t)i * (size_t)N] >= bound;
            } else {
                stop |= n_finished[i] >= K;
            }
            if (stop) {
                done[i] = 1;
                live_sentences--;
                for (int k = 0; k < K; k++) sc2[k] = -INFINITY;
            }
        }
        /* new beams: history = parent's history + token; the cache follows the parents */
        for (int r = 0; r < Rt; r++) {
            memcpy(hist2 + (size_t)r * (size_t)cap, hist + (size_t)parent[r] * (size_t)cap, (size_t)t * sizeof *hist);
            if (t < cap) hist2[(size_t)r * (size_t)cap + (size_t)t] = tok[r];
        }
        int32_t *sw = hist;
        hist = hist2;
        hist2 = sw;
        memcpy(score, score2, (size_t)Rt * sizeof *score);
        decode_reorder(ctx, dc, parent);
        /* finished sentences leave: the groups still decoding move to the front, in order */
        int n = 0, nA2 = 0;
        for (int a = 0; a < nA; a++)
            if (!done[act[a]])
                for (int k = 0; k < K; k++) keep[n++] = a * K + k;
        if (live_sentences > 0 && decode_compact(ctx, dc, keep, n)) {
            for (int j = 0; j < n; j++) {
                const int r = keep[j];
                if (j % K == 0) act[nA2++] = act[r / K];
                if (r == j) continue;
                score[j] = score[r];
                tok[j] = tok[r];
                memcpy(hist + (size_t)j * (size_t)cap, hist + (size_t)r * (size_t)cap, (size_t)(t + 1) * sizeof *hist);
            }
            nA = nA2;
        }
    }
    for (size_t i = 0; st == TFM_OK && i < (size_t)B * (size_t)N; i++) {
        const int filled = (int)(i % (size_t)N) < n_kept[i / (size_t)N];
        out_len[i] = !filled && i % (size_t)N > 0 ? -1 : best_len[i] < max_out ? best_len[i] : max_out;
        if (out_score) out_score[i] = best[i];
        if (out_len[i] > 0)
            memcpy(out + i * (size_t)max_out, best_tok + i * (size_t)cap, (size_t)out_len[i] * sizeof *out);
    }
    arena_free(&arena);
    return st;
}
