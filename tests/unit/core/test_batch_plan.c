/* The length-bucketed batch planner (src/core/batch_plan.h) that tfm_translate_text, its memory
 * estimate, the sentence embedder and tfm_perplexity_text share. On random lengths (blank entries
 * included) and on hand-made cases, for several limits:
 *   - every entry of length > 0 is in exactly one batch, entries of length 0 in none (and first);
 *   - order is a permutation sorted by (length, input index), so writing each batch's results to
 *     order[...] restores the input order;
 *   - each batch keeps its limits (rows, rows × longest, rows × longest²) unless it holds one entry,
 *     its len is its longest entry, and it is greedy: the next entry would have broken a limit;
 *   - max_rows / max_len / max_tokens are the maxima over the batches;
 *   - n = 0, all blank, max_rows 0 refused; one entry under a huge max_rows plans one batch of one. */
#include "test_util.h"

#include "batch_plan.h"

/* The checks above on plan p of len[0..n) under lim; tag names the case. */
static void check_plan(const char *tag, const batch_plan *p, const size_t *len, size_t n, batch_limits lim) {
    int *seen = calloc(n ? n : 1, sizeof *seen);
    int ok_perm = p->n == n, ok_sorted = 1, ok_limits = 1, ok_greedy = 1, ok_len = 1, ok_cover = 1;
    for (size_t k = 0; k < n && ok_perm; k++) {
        if (p->order[k] >= n || seen[p->order[k]]++) ok_perm = 0;
        if (k > 0) {
            const size_t a = p->order[k - 1], b = p->order[k];
            if (len[a] > len[b] || (len[a] == len[b] && a > b)) ok_sorted = 0;
        }
    }
    CHECK(ok_perm, "%s: order is not a permutation of 0..%zu", tag, n);
    CHECK(ok_sorted, "%s: order is not sorted by (length, index)", tag);
    size_t blank = 0;
    for (size_t i = 0; i < n; i++) blank += len[i] == 0;
    CHECK(p->skipped == blank, "%s: skipped %zu, %zu blank entries", tag, p->skipped, blank);
    int *in_batch = calloc(n ? n : 1, sizeof *in_batch);
    size_t next = p->skipped, max_rows = 0, max_len = 0, max_tokens = 0;
    for (size_t j = 0; j < p->n_batches && ok_perm; j++) {
        const batch_span *s = &p->batch[j];
        if (s->start != next || s->rows < 1 || s->start + s->rows > n) {
            ok_cover = 0;
            break;
        }
        next += s->rows;
        size_t longest = 0;
        for (size_t r = 0; r < s->rows; r++) {
            const size_t i = p->order[s->start + r];
            in_batch[i]++;
            if (len[i] > longest) longest = len[i];
        }
        if (longest != s->len) ok_len = 0;
        if (s->rows > 1 && (s->rows > lim.max_rows || (lim.max_tokens && s->rows * s->len > lim.max_tokens) ||
                            (lim.max_cells && s->rows * s->len * s->len > lim.max_cells)))
            ok_limits = 0;
        if (s->start + s->rows < n) { /* greedy: taking the next entry would break a limit */
            const size_t L = len[p->order[s->start + s->rows]], R = s->rows + 1;
            if (R <= lim.max_rows && (!lim.max_tokens || R * L <= lim.max_tokens) &&
                (!lim.max_cells || R * L * L <= lim.max_cells))
                ok_greedy = 0;
        }
        if (s->rows > max_rows) max_rows = s->rows;
        if (s->len > max_len) max_len = s->len;
        if (s->rows * s->len > max_tokens) max_tokens = s->rows * s->len;
    }
    CHECK(ok_cover && next == n, "%s: the batches do not cover order[skipped..n) in turn", tag);
    for (size_t i = 0; i < n && ok_cover; i++)
        if (in_batch[i] != (len[i] > 0)) ok_cover = 0;
    CHECK(ok_cover, "%s: an entry is in no batch or in two, or a blank one is batched", tag);
    CHECK(ok_len, "%s: a batch's len is not its longest entry", tag);
    CHECK(ok_limits, "%s: a batch of several entries breaks a limit", tag);
    CHECK(ok_greedy, "%s: a batch stopped while the next entry fitted", tag);
    CHECK(p->max_rows == max_rows && p->max_len == max_len && p->max_tokens == max_tokens,
          "%s: maxima %zu/%zu/%zu, want %zu/%zu/%zu", tag, p->max_rows, p->max_len, p->max_tokens, max_rows,
          max_len, max_tokens);
    /* results written per batch to their input index come back in the input's order */
    size_t *back = calloc(n ? n : 1, sizeof *back);
    int restored = 1;
    for (size_t j = 0; j < p->n_batches; j++)
        for (size_t r = 0; r < p->batch[j].rows; r++) {
            const size_t i = p->order[p->batch[j].start + r];
            back[i] = 1000 * len[i] + i + 1;
        }
    for (size_t i = 0; i < n; i++) restored &= back[i] == (len[i] ? 1000 * len[i] + i + 1 : 0);
    CHECK(restored, "%s: scattering the batches' results does not restore the input order", tag);
    free(back);
    free(in_batch);
    free(seen);
}

static void plan_and_check(const char *tag, const size_t *len, size_t n, batch_limits lim) {
    batch_plan p;
    const tfm_status st = batch_plan_make(&p, len, n, lim);
    CHECK(st == TFM_OK, "%s: %s", tag, tfm_last_error());
    if (st == TFM_OK) check_plan(tag, &p, len, n, lim);
    batch_plan_free(&p);
}

static void test_random(void) {
    const batch_limits lims[] = {
        {.max_rows = 1},
        {.max_rows = 7},
        {.max_rows = 64, .max_tokens = 2048, .max_cells = 1u << 19}, /* the embedder's */
        {.max_rows = 150, .max_tokens = 300},                        /* perplexity's at --batch-tokens 300 */
        {.max_rows = 5, .max_tokens = 40, .max_cells = 400},
        {.max_rows = 100000000},                                      /* a huge --batch-size */
    };
    uint64_t seed = 27;
    for (int rep = 0; rep < 40; rep++) {
        const size_t n = 1 + (size_t)(hash_next(&seed) % 500);
        const size_t maxlen = 1 + (size_t)(hash_next(&seed) % 200);
        size_t *len = malloc(n * sizeof *len);
        for (size_t i = 0; i < n; i++) /* about one in 8 blank; many ties */
            len[i] = hash_next(&seed) % 8 == 0 ? 0 : 1 + (size_t)(hash_next(&seed) % maxlen);
        for (size_t k = 0; k < sizeof lims / sizeof lims[0]; k++) {
            char tag[64];
            snprintf(tag, sizeof tag, "random %d, limits %zu", rep, k);
            plan_and_check(tag, len, n, lims[k]);
        }
        free(len);
    }
}

static void test_cases(void) {
    /* by hand: lengths 3 1 0 2 1 0 5 4 in rows of at most 2 */
    const size_t len[] = {3, 1, 0, 2, 1, 0, 5, 4};
    batch_plan p;
    CHECK(batch_plan_make(&p, len, 8, (batch_limits){.max_rows = 2}) == TFM_OK, "by hand: %s", tfm_last_error());
    const size_t want_order[] = {2, 5, 1, 4, 3, 0, 7, 6};
    int same = p.n == 8;
    for (size_t k = 0; same && k < 8; k++) same = p.order[k] == want_order[k];
    CHECK(same, "by hand: order");
    CHECK(p.skipped == 2 && p.n_batches == 3 && p.batch[0].len == 1 && p.batch[1].len == 3 && p.batch[2].len == 5 &&
              p.max_rows == 2 && p.max_len == 5 && p.max_tokens == 10,
          "by hand: %zu skipped, %zu batches, maxima %zu %zu %zu", p.skipped, p.n_batches, p.max_rows, p.max_len,
          p.max_tokens);
    check_plan("by hand", &p, len, 8, (batch_limits){.max_rows = 2});
    batch_plan_free(&p);
    CHECK(p.order == NULL && p.n_batches == 0, "batch_plan_free empties the plan");

    /* a token limit: 4 entries of 10 under 25 tokens → batches of 2 */
    const size_t tens[] = {10, 10, 10, 10};
    CHECK(batch_plan_make(&p, tens, 4, (batch_limits){.max_rows = 100, .max_tokens = 25}) == TFM_OK &&
              p.n_batches == 2 && p.max_rows == 2 && p.max_tokens == 20,
          "token limit: %zu batches of at most %zu", p.n_batches, p.max_rows);
    batch_plan_free(&p);
    /* an entry longer than the token limit still makes a batch, alone */
    const size_t long_one[] = {2, 50};
    CHECK(batch_plan_make(&p, long_one, 2, (batch_limits){.max_rows = 100, .max_tokens = 25}) == TFM_OK &&
              p.n_batches == 2 && p.batch[1].rows == 1 && p.batch[1].len == 50,
          "an entry over the token limit: %zu batches", p.n_batches);
    batch_plan_free(&p);
    /* one entry under a huge row limit: one batch of one row (buffers sized from it) */
    const size_t one[] = {7};
    CHECK(batch_plan_make(&p, one, 1, (batch_limits){.max_rows = SIZE_MAX}) == TFM_OK && p.n_batches == 1 &&
              p.max_rows == 1 && p.max_tokens == 7,
          "one entry, max_rows SIZE_MAX: %zu batches, %zu rows", p.n_batches, p.max_rows);
    batch_plan_free(&p);
    /* huge lengths and limits: no overflow in rows × len² */
    const size_t big[] = {(size_t)1 << 40, (size_t)1 << 40};
    CHECK(batch_plan_make(&p, big, 2, (batch_limits){.max_rows = 10, .max_cells = SIZE_MAX}) == TFM_OK &&
              p.n_batches == 2,
          "lengths 2^40 under max_cells SIZE_MAX: %zu batches, want 2 (2^81 cells do not fit)", p.n_batches);
    batch_plan_free(&p);
    /* nothing to batch */
    CHECK(batch_plan_make(&p, NULL, 0, (batch_limits){.max_rows = 4}) == TFM_OK && p.n_batches == 0 && p.max_rows == 0,
          "n = 0");
    batch_plan_free(&p);
    const size_t blanks[] = {0, 0, 0};
    CHECK(batch_plan_make(&p, blanks, 3, (batch_limits){.max_rows = 4}) == TFM_OK && p.n_batches == 0 &&
              p.skipped == 3 && p.max_tokens == 0,
          "all blank: %zu batches", p.n_batches);
    batch_plan_free(&p);
    /* refused */
    CHECK(batch_plan_make(&p, one, 1, (batch_limits){.max_rows = 0}) == TFM_ERR_INVALID_ARG &&
              strstr(tfm_last_error(), "max_rows") && p.order == NULL,
          "max_rows 0: %s", tfm_last_error());
    CHECK(batch_plan_make(&p, NULL, 3, (batch_limits){.max_rows = 1}) == TFM_ERR_INVALID_ARG, "len NULL with n 3");
}

int main(void) {
    test_cases();
    test_random();
    return test_finish("batch_plan");
}
