/* Continuous batching of generations (include/tfm/generate.h, tfm_gen_batch): rows join one running
 * batch at any step and leave it when they end, on a ragged KV cache (kv_cache_ragged: each row at
 * its own position, in its own slot). A row's input is prefilled into its slot one chunk per step
 * after it is added (model_prefill_chunk: the chunks of model_prefill_row, as tfm_generate
 * prefills), so a long prompt does not stall the running rows for its whole prefill; then each
 * step samples its next token exactly as tfm_generate does (the same draw numbers, stops and
 * limits). */
#include "decode_internal.h"
#include "tfm/generate.h"
#include "tfm/names.h"

#include <stdlib.h>
#include <string.h>

#define GEN_BATCH_MAX_ROWS 128 /* tfm_generate_batch's most rows, the batched steps' panels */
#define GEN_BATCH_START_CAP 64 /* positions a slot holds at first; kv_cache_grow adds more */

/* One slot's generation, as tfm_generate's loop keeps it. */
typedef struct {
    tfm_sample_config sc;
    int32_t *prefix; /* (max_len + 1) the input (BOS + prompt, or the prefix), then each token */
    int P;           /* the input's last position: its logits give token 0 */
    int limit;       /* the most tokens it may generate */
    int pos;         /* the position it reads at the next step */
    int n_tokens;
    int used;        /* the slot is taken (from add until its end is reported) */
    int empty;       /* limit 0: ends at the next step without a cache row */
    int pending;     /* prefilling: one chunk a step; after the last, token 0, then a cache row */
    int filled;      /* pending: positions of its input prefilled so far (model_prefill_chunk) */
} gen_row;

struct tfm_gen_batch {
    tfm_context *ctx;
    const tfm_config *cfg;
    int rows;        /* capacity R */
    int in_step;     /* 1 while a step's callbacks run */
    gen_row *row;    /* [R], by slot */
    int32_t *ids;    /* (R · (max_len + 1)) the slots' prefixes */
    int32_t *tokens; /* (R) one step's inputs, by step row */
    int *keep;       /* (R) the step rows that stay */
    int32_t *scratch; /* (V) tfm_sample_token's */
};

tfm_status tfm_gen_batch_create(tfm_context *ctx, int rows, tfm_gen_batch **out) {
    RETURN_IF(!out, TFM_ERR_INVALID_ARG, "gen_batch: NULL argument");
    *out = NULL;
    RETURN_IF(!ctx || rows < 1 || rows > GEN_BATCH_MAX_ROWS, TFM_ERR_INVALID_ARG,
              "gen_batch: a context and 1..%d rows (got %d)", GEN_BATCH_MAX_ROWS, rows);
    const tfm_config *cfg = context_config(ctx);
    RETURN_IF(cfg->arch != TFM_ARCH_DECODER_ONLY, TFM_ERR_INVALID_ARG,
              "generate needs a decoder-only model, this one is %s", tfm_arch_name(cfg->arch));
    tfm_gen_batch *gb = calloc(1, sizeof *gb);
    RETURN_IF(!gb, TFM_ERR_NOMEM, "gen_batch: out of memory");
    const size_t R = (size_t)rows, L = (size_t)cfg->max_len + 1;
    gb->ctx = ctx;
    gb->cfg = cfg;
    gb->rows = rows;
    gb->row = calloc(R, sizeof *gb->row);
    gb->ids = malloc(R * L * sizeof *gb->ids);
    gb->tokens = malloc(R * sizeof *gb->tokens);
    gb->keep = malloc(R * sizeof *gb->keep);
    gb->scratch = malloc((size_t)cfg->tgt_vocab * sizeof *gb->scratch);
    if (!gb->row || !gb->ids || !gb->tokens || !gb->keep || !gb->scratch) {
        tfm_gen_batch_free(gb);
        return tfm_set_error(TFM_ERR_NOMEM, "gen_batch: out of memory (%d rows)", rows);
    }
    for (size_t r = 0; r < R; r++) gb->row[r].prefix = gb->ids + r * L;
    const int cap = cfg->max_len < GEN_BATCH_START_CAP ? cfg->max_len : GEN_BATCH_START_CAP;
    tfm_status st = kv_cache_reserve(ctx, rows, 0, cap);
    if (st != TFM_OK) {
        tfm_gen_batch_free(gb);
        return st;
    }
    model_decode_start(ctx, NULL); /* decoder-only: no memory to encode; the cache's length is 0 */
    kv_cache_ragged(ctx);
    *out = gb;
    return TFM_OK;
}

/* tfm_gen_batch_add (bos = 1) and tfm_gen_batch_add_prefix (bos = 0). */
static tfm_status add(tfm_gen_batch *gb, const tfm_sample_config *sc, int bos, const int32_t *prompt, int n_prompt,
                      int max_tokens, int *slot) {
    RETURN_IF(!gb || !slot, TFM_ERR_INVALID_ARG, "gen_batch_add: NULL argument");
    *slot = -1;
    RETURN_IF(gb->in_step, TFM_ERR_INVALID_ARG, "gen_batch_add: not from a step's callback");
    int limit;
    TRY(generate_check(gb->cfg, sc, bos, prompt, n_prompt, max_tokens, &limit));
    int s = 0;
    while (s < gb->rows && gb->row[s].used) s++;
    RETURN_IF(s == gb->rows, TFM_ERR_RANGE, "gen_batch_add: all %d rows are generating", gb->rows);
    const int P = n_prompt + bos - 1;
    gen_row *r = &gb->row[s];
    if (bos) r->prefix[0] = gb->cfg->bos_id;
    if (n_prompt > 0) memcpy(r->prefix + bos, prompt, (size_t)n_prompt * sizeof *prompt);
    if (limit > 0) { /* positions 0 .. P + limit − 1 are read: the cache must hold them */
        const int need = P + limit, have = kv_cache_positions(gb->ctx);
        if (need > have) {
            const int cap = 2 * have < gb->cfg->max_len ? 2 * have : gb->cfg->max_len;
            TRY(kv_cache_grow(gb->ctx, need > cap ? need : cap));
        }
        /* the input's P + 1 positions are prefilled into slot s by the steps, a chunk each: the
         * workspace holds the longest input still prefilling (a row's bits do not depend on it) */
        int cap_P = P + 1;
        for (int k = 0; k < gb->rows; k++)
            if (gb->row[k].used && gb->row[k].pending && gb->row[k].P + 1 > cap_P) cap_P = gb->row[k].P + 1;
        TRY(model_prefill_reserve(gb->ctx, cap_P));
    }
    r->sc = *sc;
    r->P = P;
    r->limit = limit;
    r->pos = P + 1;
    r->n_tokens = 0;
    r->used = 1;
    r->empty = limit == 0;
    r->pending = limit > 0;
    r->filled = 0;
    *slot = s;
    return TFM_OK;
}

tfm_status tfm_gen_batch_add(tfm_gen_batch *gb, const tfm_sample_config *sc, const int32_t *prompt, int n_prompt,
                             int max_tokens, int *slot) {
    return add(gb, sc, 1, prompt, n_prompt, max_tokens, slot);
}

tfm_status tfm_gen_batch_add_prefix(tfm_gen_batch *gb, const tfm_sample_config *sc, const int32_t *prefix,
                                    int n_prefix, int max_tokens, int *slot) {
    return add(gb, sc, 0, prefix, n_prefix, max_tokens, slot);
}

/* Reports the end of slot s and frees it. */
static void row_end(tfm_gen_batch *gb, int s, tfm_gen_end why, tfm_row_end_fn on_end, void *user) {
    gb->row[s].used = 0;
    gb->row[s].empty = 0;
    gb->row[s].pending = 0;
    gb->row[s].filled = 0;
    if (on_end) on_end(s, why, gb->row[s].n_tokens, user);
}

/* Token k of slot s from logits (V), as tfm_generate chooses and stops: 1 if the row goes on. */
static int row_token(tfm_gen_batch *gb, int s, float *logits, tfm_row_token_fn on_token, tfm_row_end_fn on_end,
                     void *user) {
    gen_row *r = &gb->row[s];
    const int t = r->pos - 1, k = t - r->P; /* position t (its input read) predicts token k */
    const int32_t y = tfm_sample_token(&r->sc, gb->cfg, logits, gb->cfg->tgt_vocab, (uint64_t)k, gb->scratch);
    if (tfm_config_is_eos(gb->cfg, y)) {
        row_end(gb, s, TFM_GEN_EOS, on_end, user);
        return 0;
    }
    r->prefix[t + 1] = y;
    r->n_tokens++;
    if (on_token && on_token(s, y, user)) {
        row_end(gb, s, TFM_GEN_STOPPED, on_end, user);
        return 0;
    }
    if (k + 1 >= r->limit) {
        row_end(gb, s, TFM_GEN_LENGTH, on_end, user);
        return 0;
    }
    return 1;
}

tfm_status tfm_gen_batch_step(tfm_gen_batch *gb, tfm_row_token_fn on_token, tfm_row_end_fn on_end, void *user) {
    RETURN_IF(!gb, TFM_ERR_INVALID_ARG, "gen_batch_step: NULL batch");
    RETURN_IF(gb->in_step, TFM_ERR_INVALID_ARG, "gen_batch_step: not from a step's callback");
    gb->in_step = 1;
    for (int s = 0; s < gb->rows; s++) /* rows with nothing to generate end without a step */
        if (gb->row[s].used && gb->row[s].empty) row_end(gb, s, TFM_GEN_LENGTH, on_end, user);
    /* the rows of the cache: one decoding step, each at its own position, its input its last token */
    const int B = kv_cache_rows(gb->ctx);
    const int32_t *slot_of = kv_cache_row_slots(gb->ctx);
    if (B > 0) {
        for (int b = 0; b < B; b++) {
            const gen_row *r = &gb->row[slot_of[b]];
            gb->tokens[b] = r->prefix[r->pos];
        }
        model_decode_step(gb->ctx, gb->tokens, 1);
        float *logits = kv_cache_logits(gb->ctx);
        const size_t V = (size_t)gb->cfg->tgt_vocab;
        int n = 0;
        for (int b = 0; b < B; b++) {
            gb->row[slot_of[b]].pos++;
            if (row_token(gb, slot_of[b], logits + (size_t)b * V, on_token, on_end, user)) gb->keep[n++] = b;
        }
        kv_cache_compact(gb->ctx, gb->keep, n);
    }
    /* rows prefilling: the next chunk of each (after the step, whose logits it would overwrite); a
     * row whose last chunk ran gets token 0 from its logits (row s of the step's), then joins */
    for (int s = 0; s < gb->rows; s++) {
        gen_row *r = &gb->row[s];
        if (!r->used || !r->pending) continue;
        r->filled = model_prefill_chunk(gb->ctx, s, r->prefix, r->P + 1, r->filled);
        if (r->filled <= r->P) continue;
        r->pending = 0;
        float *logits = kv_cache_logits(gb->ctx) + (size_t)s * (size_t)gb->cfg->tgt_vocab;
        if (row_token(gb, s, logits, on_token, on_end, user)) kv_cache_add_row(gb->ctx, s, r->pos);
    }
    gb->in_step = 0;
    return TFM_OK;
}

tfm_status tfm_gen_batch_cancel(tfm_gen_batch *gb, int slot) {
    RETURN_IF(!gb || gb->in_step || slot < 0 || slot >= gb->rows || !gb->row[slot].used, TFM_ERR_INVALID_ARG,
              "gen_batch_cancel: slot %d holds no row (or called from a step's callback)", slot);
    const int B = kv_cache_rows(gb->ctx);
    const int32_t *slot_of = kv_cache_row_slots(gb->ctx);
    int n = 0;
    for (int b = 0; b < B; b++)
        if (slot_of[b] != slot) gb->keep[n++] = b;
    if (n < B) kv_cache_compact(gb->ctx, gb->keep, n);
    gb->row[slot].used = 0;
    gb->row[slot].empty = 0;
    gb->row[slot].pending = 0;
    gb->row[slot].filled = 0;
    return TFM_OK;
}

int tfm_gen_batch_rows(const tfm_gen_batch *gb) {
    if (!gb) return 0;
    int n = 0;
    for (int s = 0; s < gb->rows; s++) n += gb->row[s].used;
    return n;
}

void tfm_gen_batch_free(tfm_gen_batch *gb) {
    if (!gb) return;
    free(gb->row);
    free(gb->ids);
    free(gb->tokens);
    free(gb->keep);
    free(gb->scratch);
    free(gb);
}
