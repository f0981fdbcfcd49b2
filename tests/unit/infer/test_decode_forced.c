/* A forced first token (tfm_decode_config.force_first, include/tfm/decode.h; NLLB's target
 * language code): greedy and beam search, on the KV cache and recomputing, put first_id first
 * whatever the logits; it scores log-probability 0 and the length penalty does not count it
 * (transformers 4.40's generated_len), so a hypothesis' score at α = 1 is its score at α = 0
 * divided by its output length (the forced token and the others, EOS excluded, + EOS − 1 = out_len),
 * and at α = 0 it is the teacher-forced log-probability of the tokens after the forced one and EOS;
 * a forced id outside the target vocabulary is refused. */
#include "copy_task.h"
#include "decode_internal.h"
#include "test_util.h"
#include "tfm/tfm.h"

#include <math.h>
#include <stdint.h>

enum { B = 3, S = 6, MAXO = 32 };

int main(void) {
    tfm_model *m = copy_task_model(300);
    tfm_context *ctx = NULL;
    CHECK(m && tfm_context_create(m, &ctx) == TFM_OK, "model: %s", tfm_last_error());
    if (!ctx) return test_finish("test_decode_forced");
    const int32_t src[B * S] = {5, 6, 7, 0, 0, 0, 9, 10, 11, 12, 13, 0, 4, 8, 0, 0, 0, 0};
    int32_t out[B * MAXO];
    int len[B];
    for (int beam = 1; beam <= 4; beam += 3)
        for (int cache = 0; cache <= 1; cache++) {
            tfm_decode_config dc = tfm_decode_config_default();
            dc.beam = beam;
            dc.use_cache = cache;
            dc.force_first = 1;
            dc.first_id = 14; /* the copy task would start with src[0] + 1, never 14 here */
            CHECK(tfm_model_translate(ctx, &dc, B, S, src, out, MAXO, len) == TFM_OK, "translate: %s", tfm_last_error());
            for (int b = 0; b < B; b++)
                CHECK(len[b] >= 1 && out[b * MAXO] == 14, "beam %d cache %d row %d: first token %d (len %d), want 14",
                      beam, cache, b, len[b] ? out[b * MAXO] : -1, len[b]);
        }
    /* the length penalty's length: K = 1 follows one path whatever α, so the two scores differ by
     * the length alone */
    double s0[B], s1[B];
    int len1[B];
    tfm_decode_config dc = tfm_decode_config_default();
    dc.force_first = 1;
    dc.first_id = 14;
    dc.lenpen = 0.0f;
    CHECK(beam_search_scored(ctx, &dc, B, S, src, out, MAXO, len, s0) == TFM_OK, "scored: %s", tfm_last_error());
    dc.lenpen = 1.0f;
    CHECK(beam_search_scored(ctx, &dc, B, S, src, out, MAXO, len1, s1) == TFM_OK, "scored: %s", tfm_last_error());
    for (int b = 0; b < B; b++) {
        CHECK(len[b] == len1[b] && len[b] >= 2, "row %d: lengths %d, %d", b, len[b], len1[b]);
        CHECK_NEAR(s0[b] / s1[b], (double)len[b], 1e-9, "α=0 score / α=1 score = out_len");
    }
    /* the α = 0 score is Σ log p of the tokens after the forced one and EOS: teacher-forced
     * scores of [BOS, 14, rest..., EOS] less that of [BOS, 14] (the forced token scores 0) */
    for (int b = 0; b < B; b++) {
        int32_t row[MAXO + 2], two[2] = {1, 14};
        row[0] = 1;
        for (int k = 0; k < len[b]; k++) row[1 + k] = out[b * MAXO + k];
        row[1 + len[b]] = 2;
        double whole = 0.0, first = 0.0;
        CHECK(tfm_model_score(ctx, 1, S, len[b] + 2, src + b * S, row, &whole, NULL, NULL) == TFM_OK &&
                  tfm_model_score(ctx, 1, S, 2, src + b * S, two, &first, NULL, NULL) == TFM_OK,
              "score: %s", tfm_last_error());
        CHECK_NEAR(s0[b], whole - first, 1e-4, "α=0 score = Σ log p after the forced token");
    }
    dc.first_id = 16;
    CHECK(tfm_model_translate(ctx, &dc, B, S, src, out, MAXO, len) == TFM_ERR_INVALID_ARG, "first_id 16 of 16 accepted");
    dc.first_id = 4;
    dc.force_first = 2;
    CHECK(tfm_model_translate(ctx, &dc, B, S, src, out, MAXO, len) == TFM_ERR_INVALID_ARG, "force_first 2 accepted");
    tfm_context_free(ctx);
    tfm_model_free(m);
    return test_finish("test_decode_forced");
}
