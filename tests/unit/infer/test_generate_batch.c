/* tfm_generate_batch (include/tfm/generate.h): rows with prompts of one length, each its own
 * sampling configuration, seed and budget, on one KV cache — every row's tokens == tfm_generate of
 * that row alone, bit for bit, for B = 1..8, with and without the cache; rows leave as they finish
 * (budgets 0..12, an on_token stop) without changing the others; bad arguments refused. */
#include "test_lm.h"
#include "test_util.h"
#include "tfm/tfm.h"

#include <string.h>

enum { V = 40, NP = 3, MAXB = 8, MAXO = 16 };

typedef struct {
    int stop_row, stop_after, seen[MAXB];
} stopper;

static int on_row(int row, int32_t id, void *user) {
    (void)id;
    stopper *s = user;
    s->seen[row]++;
    return row == s->stop_row && s->seen[row] >= s->stop_after;
}


int main(void) {
    /* max_len 14: a budget of 12 after a 3-token prompt runs into max_len: 11 tokens at most */
    tfm_config c = test_lm_config(V, 14);
    tfm_model *m = NULL;
    tfm_context *ctx = NULL;
    CHECK(tfm_model_create(&c, 7, &m) == TFM_OK && tfm_context_create(m, &ctx) == TFM_OK, "model: %s", tfm_last_error());
    if (!ctx) return test_finish("generate_batch");
    int32_t prompts[MAXB * NP];
    tfm_sample_config sc[MAXB];
    int budget[MAXB];
    for (int b = 0; b < MAXB; b++) {
        for (int i = 0; i < NP; i++) prompts[b * NP + i] = 3 + (b * 7 + i * 5) % (V - 3);
        sc[b] = tfm_sample_config_default();
        sc[b].seed = (uint64_t)(11 + b);
        sc[b].temperature = b % 3 == 0 ? 0.0f : 1.5f; /* greedy rows and wide draws */
        sc[b].top_k = b % 4 == 1 ? 5 : 0;
        sc[b].top_p = b % 4 == 2 ? 0.9f : 1.0f;
        budget[b] = (b * 5) % 13; /* 0, 5, 10, 2, 7, 12, 4, 9 */
    }
    int checked = 0, rows_stopped_early = 0;
    for (int cache = 0; cache <= 1; cache++)
        for (int B = 1; B <= MAXB; B++) {
            int32_t out[MAXB * MAXO];
            int len[MAXB];
            stopper stop = {.stop_row = B > 2 ? 2 : -1, .stop_after = 3};
            CHECK(tfm_generate_batch(ctx, B, sc, prompts, NP, budget, cache, out, MAXO, len, on_row, &stop) == TFM_OK,
                  "batch of %d: %s", B, tfm_last_error());
            for (int b = 0; b < B; b++) {
                int32_t one[MAXO];
                int n1 = 0;
                test_stop_after s1 = {0, b == stop.stop_row ? stop.stop_after : 1 << 30};
                CHECK(tfm_generate(ctx, &sc[b], prompts + b * NP, NP, budget[b], cache, one, MAXO, &n1,
                                   test_stop_after_fn, &s1) == TFM_OK,
                      "alone: %s", tfm_last_error());
                CHECK(len[b] == n1 && memcmp(out + b * MAXO, one, (size_t)n1 * sizeof *one) == 0,
                      "cache %d, B %d, row %d: %d tokens in the batch, %d alone (or other tokens)", cache, B, b, len[b], n1);
                CHECK(stop.seen[b] == len[b], "row %d: on_token saw %d tokens of %d", b, stop.seen[b], len[b]);
                rows_stopped_early += len[b] < budget[b];
                checked++;
            }
        }
    printf("generate_batch: %d rows equal to tfm_generate alone; %d ended before their budget\n", checked,
           rows_stopped_early);
    CHECK(rows_stopped_early > 0, "no row left the batch early: compaction untested");
    /* refusals */
    int32_t out[MAXO];
    int len[MAXB];
    int bad_budget[1] = {-1};
    CHECK(tfm_generate_batch(ctx, 0, sc, prompts, NP, budget, 1, out, MAXO, len, NULL, NULL) == TFM_ERR_INVALID_ARG,
          "B 0");
    CHECK(tfm_generate_batch(ctx, 1, sc, prompts, NP, bad_budget, 1, out, MAXO, len, NULL, NULL) == TFM_ERR_INVALID_ARG,
          "max_tokens -1");
    int32_t bad_prompt[NP] = {1, V, 2};
    CHECK(tfm_generate_batch(ctx, 1, sc, bad_prompt, NP, budget + 1, 1, out, MAXO, len, NULL, NULL) == TFM_ERR_RANGE &&
              strstr(tfm_last_error(), "row 0") != NULL,
          "an id outside the vocabulary: %s", tfm_last_error());
    tfm_sample_config bad_sc = sc[0];
    bad_sc.top_p = 0.0f;
    CHECK(tfm_generate_batch(ctx, 1, &bad_sc, prompts, NP, budget + 1, 1, out, MAXO, len, NULL, NULL) ==
              TFM_ERR_INVALID_ARG,
          "top_p 0");
    tfm_context_free(ctx);
    tfm_model_free(m);
    return test_finish("generate_batch");
}
