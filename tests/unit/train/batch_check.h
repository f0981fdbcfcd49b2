/* Checks of the batcher shared by test_data.c (the fixture) and test_data_corpus.c (the real
 * corpus): every batch against its dataset, every pair once per epoch, exact max_dims, padding. */
#ifndef TFM_TEST_BATCH_CHECK_H
#define TFM_TEST_BATCH_CHECK_H

#include "test_util.h"
#include "tfm/data.h"

#include <stdint.h>

typedef struct {
    size_t batches;
    double src_slots, tgt_slots, src_tokens, tgt_tokens; /* B·S, B·T, non-pad */
} pad_tally;

static double pad_fraction(const pad_tally *p) {
    return 1.0 - (p->src_tokens + p->tgt_tokens) / (p->src_slots + p->tgt_slots);
}

/* Checks one batch against the dataset: rows are the named pairs, padded with pad, dims within
 * max_dims, the budget kept (or a singleton). Returns 1 if all is well. */
static int check_batch(const tfm_dataset *ds, const tfm_batcher *bt, const tfm_batch *x, int budget, int pad,
                       const char *ctx, pad_tally *tally) {
    int mB = 0, mS = 0, mT = 0;
    size_t mst = 0, mtt = 0;
    tfm_batcher_max_dims(bt, &mB, &mS, &mT);
    tfm_batcher_max_tokens(bt, &mst, &mtt);
    int ok = x->B >= 1 && x->S >= 1 && x->T >= 2 && x->B <= mB && x->S <= mS && x->T <= mT &&
             (size_t)x->B * (size_t)x->S <= mst && (size_t)x->B * (size_t)x->T <= mtt;
    CHECK(ok, "%s: batch dims %d x (%d, %d) outside max_dims %d x (%d, %d)", ctx, x->B, x->S, x->T, mB, mS, mT);
    long cost = (long)x->B * (x->S > x->T ? x->S : x->T);
    int over = x->B > 1 && cost > budget;
    CHECK(!over, "%s: batch of %d rows costs %ld tokens > budget %d", ctx, x->B, cost, budget);
    ok = ok && !over;
    size_t st = 0, tt = 0, need_s = 1, need_t = 2;
    for (int r = 0; r < x->B && ok; r++) {
        const int32_t *src = NULL, *tgt = NULL;
        size_t ls = 0, lt = 0;
        tfm_dataset_pair(ds, x->pairs[r], &src, &ls, &tgt, &lt);
        const int32_t *rs = x->src + (size_t)r * (size_t)x->S, *rt = x->tgt + (size_t)r * (size_t)x->T;
        int row_ok = ls <= (size_t)x->S && lt <= (size_t)x->T && memcmp(rs, src, ls * sizeof *src) == 0 &&
                     memcmp(rt, tgt, lt * sizeof *tgt) == 0;
        for (size_t j = ls; j < (size_t)x->S; j++) row_ok = row_ok && rs[j] == pad;
        for (size_t j = lt; j < (size_t)x->T; j++) row_ok = row_ok && rt[j] == pad;
        CHECK(row_ok, "%s: row %d is not pair %zu padded with %d", ctx, r, x->pairs[r], pad);
        ok = ok && row_ok;
        st += ls;
        tt += lt;
        if (ls > need_s) need_s = ls;
        if (lt > need_t) need_t = lt;
    }
    if (ok) {
        CHECK(st == x->src_tokens && tt == x->tgt_tokens, "%s: token counts %zu/%zu, want %zu/%zu", ctx,
              x->src_tokens, x->tgt_tokens, st, tt);
        CHECK(need_s == (size_t)x->S && need_t == (size_t)x->T, "%s: batch wider than its rows (%d, %d) vs (%zu, %zu)",
              ctx, x->S, x->T, need_s, need_t);
    }
    if (tally) {
        tally->batches++;
        tally->src_slots += (double)x->B * x->S;
        tally->tgt_slots += (double)x->B * x->T;
        tally->src_tokens += (double)x->src_tokens;
        tally->tgt_tokens += (double)x->tgt_tokens;
    }
    return ok;
}

/* Runs `epochs` epochs: each pair exactly once per epoch, every batch checked, the max dims
 * reached (they are exact), the position advancing as documented. Fills *tally for epoch 0. */
static void check_epochs(const tfm_dataset *ds, int budget, int pad, int shuffle, uint64_t seed, int epochs,
                         const char *name, pad_tally *tally) {
    tfm_batcher *bt = NULL;
    tfm_status s = tfm_batcher_create(ds, budget, pad, shuffle, seed, &bt);
    CHECK(s == TFM_OK && bt, "%s: create: %s", name, tfm_last_error());
    if (!bt) return;
    const size_t n = tfm_dataset_size(ds), nb = tfm_batcher_batches_per_epoch(bt);
    unsigned char *seen = malloc(n);
    int mB = 0, mS = 0, mT = 0, gotB = 0, gotS = 0, gotT = 0;
    tfm_batcher_max_dims(bt, &mB, &mS, &mT);
    uint64_t e = 99, i = 99;
    tfm_batcher_position(bt, &e, &i);
    CHECK(e == 0 && i == 0, "%s: a fresh batcher is at (%llu, %llu)", name, (unsigned long long)e,
          (unsigned long long)i);
    char ctx[160];
    uint64_t shapes0 = 0; /* an order-free fingerprint of the epoch's batch shapes: the same every epoch */
    for (int ep = 0; ep < epochs; ep++) {
        uint64_t shapes = 0;
        memset(seen, 0, n);
        size_t dup = 0, bad = 0;
        for (size_t k = 0; k < nb; k++) {
            tfm_batch x;
            tfm_batcher_position(bt, &e, &i);
            if (e != (uint64_t)ep || i != k) bad++;
            CHECK(tfm_batcher_next(bt, &x) == TFM_OK, "%s: next", name);
            snprintf(ctx, sizeof ctx, "%s epoch %d batch %zu", name, ep, k);
            if (!check_batch(ds, bt, &x, budget, pad, ctx, ep == 0 ? tally : NULL)) bad++;
            for (int r = 0; r < x.B; r++) {
                if (x.pairs[r] >= n || seen[x.pairs[r]]) dup++;
                else seen[x.pairs[r]] = 1;
            }
            shapes += ((uint64_t)x.B * 1000003u + (uint64_t)x.S) * 0x9E3779B97F4A7C15ULL * (uint64_t)(x.T + 17) +
                      ((uint64_t)x.S << 40) + ((uint64_t)x.T << 20);
            if (x.B > gotB) gotB = x.B;
            if (x.S > gotS) gotS = x.S;
            if (x.T > gotT) gotT = x.T;
        }
        size_t missing = 0;
        for (size_t k = 0; k < n; k++) missing += !seen[k];
        if (ep == 0) shapes0 = shapes;
        CHECK(shapes == shapes0, "%s epoch %d: the batch shapes differ from epoch 0's", name, ep);
        CHECK(dup == 0 && missing == 0 && bad == 0, "%s epoch %d: %zu repeated, %zu missing pairs, %zu bad batches",
              name, ep, dup, missing, bad);
    }
    tfm_batcher_position(bt, &e, &i);
    CHECK(e == (uint64_t)epochs && i == 0, "%s: after %d epochs at (%llu, %llu)", name, epochs, (unsigned long long)e,
          (unsigned long long)i);
    CHECK(gotB == mB && gotS == mS && gotT == mT, "%s: max_dims %d/%d/%d are not reached (%d/%d/%d)", name, mB, mS,
          mT, gotB, gotS, gotT);
    free(seen);
    tfm_batcher_free(bt);
}

#endif
