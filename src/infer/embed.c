/* Sentence embeddings (include/tfm/embed.h): tokenise, sort by length, batch, run the encoder,
 * pool, normalise — as sentence-transformers' Transformer → Pooling → Normalize modules do. */
#include "batch_plan.h"
#include "io/hf.h"
#include "model_context.h"
#include "tfm/embed.h"
#include "tfm/wordpiece.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define EMBED_MAX_BATCH 64
#define EMBED_MAX_BATCH_TOKENS 2048      /* B · S */
#define EMBED_MAX_BATCH_CELLS (1u << 19) /* B · S · S: the attention weights, per head and layer */

struct tfm_embedder {
    tfm_model *model;
    tfm_wordpiece *wp;
    hf_st_settings st;
    int max_tokens;
};

static int file_exists(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

static tfm_status open_parts(const char *path, tfm_embedder *e) {
    char dir[4096], tok[4200];
    TRY(hf_model_dir(path, dir, sizeof dir));
    TRY(tfm_model_load(path, &e->model));
    const tfm_config *c = tfm_model_config(e->model);
    RETURN_IF(c->arch != TFM_ARCH_ENCODER_ONLY, TFM_ERR_UNSUPPORTED,
              "%s: %s model does not embed sentences (tfm embed needs an encoder-only model, e.g. BERT)", path,
              c->arch == TFM_ARCH_ENCODER_DECODER ? "an encoder-decoder" : "a decoder-only");
    snprintf(tok, sizeof tok, "%s/tokenizer.json", dir);
    if (!file_exists(tok)) snprintf(tok, sizeof tok, "%s/vocab.txt", dir);
    RETURN_IF(!file_exists(tok), TFM_ERR_IO, "%s: no tokenizer.json nor vocab.txt beside the model", dir);
    TRY(tfm_wordpiece_load(tok, &e->wp));
    RETURN_IF(tfm_wordpiece_vocab_size(e->wp) > (size_t)c->src_vocab, TFM_ERR_FORMAT,
              "%s: %zu tokens, but the model's vocabulary has %d", tok, tfm_wordpiece_vocab_size(e->wp), c->src_vocab);
    TRY(hf_st_settings_load(dir, &e->st));
    size_t max = e->st.max_seq_length > 0 ? (size_t)e->st.max_seq_length : tfm_wordpiece_settings_of(e->wp)->max_length;
    if (max > (size_t)c->max_len) max = (size_t)c->max_len;
    e->max_tokens = (int)max;
    return TFM_OK;
}

tfm_status tfm_embedder_open(const char *path, tfm_embedder **out) {
    RETURN_IF(!path || !out, TFM_ERR_INVALID_ARG, "tfm_embedder_open: NULL argument");
    *out = NULL;
    tfm_embedder *e = calloc(1, sizeof *e);
    RETURN_IF(!e, TFM_ERR_NOMEM, "out of memory opening %s", path);
    tfm_status st = open_parts(path, e);
    if (st != TFM_OK) {
        tfm_embedder_free(e);
        return st;
    }
    *out = e;
    return TFM_OK;
}

int tfm_embedder_dim(const tfm_embedder *e) { return tfm_model_config(e->model)->d_model; }
int tfm_embedder_max_tokens(const tfm_embedder *e) { return e->max_tokens; }
const tfm_model *tfm_embedder_model(const tfm_embedder *e) { return e->model; }

tfm_status tfm_embedder_count_tokens(const tfm_embedder *e, const char *text, size_t len, size_t *n) {
    RETURN_IF(!e || !text || !n, TFM_ERR_INVALID_ARG, "tfm_embedder_count_tokens: NULL argument");
    int32_t *ids = NULL;
    TRY(tfm_wordpiece_encode(e->wp, text, len, 1, (size_t)e->max_tokens, &ids, n));
    free(ids);
    return TFM_OK;
}

void tfm_embedder_free(tfm_embedder *e) {
    if (!e) return;
    tfm_model_free(e->model);
    tfm_wordpiece_free(e->wp);
    free(e);
}

/* Pools the S_i token vectors H (S_i, d) of one text into v (d) and normalises it (embed.h). */
static void pool(const tfm_embedder *e, const float *H, size_t S_i, size_t d, float *v) {
    if (e->st.pooling == HF_POOL_CLS) {
        memcpy(v, H, d * sizeof *v);
    } else if (e->st.pooling == HF_POOL_MAX) {
        memcpy(v, H, d * sizeof *v);
        for (size_t t = 1; t < S_i; t++)
            for (size_t c = 0; c < d; c++) v[c] = fmaxf(v[c], H[t * d + c]);
    } else { /* mean over the attention mask, float sums as sentence-transformers */
        memset(v, 0, d * sizeof *v);
        for (size_t t = 0; t < S_i; t++)
            for (size_t c = 0; c < d; c++) v[c] += H[t * d + c];
        for (size_t c = 0; c < d; c++) v[c] /= (float)S_i;
    }
    if (!e->st.normalize) return;
    double ss = 0.0;
    for (size_t c = 0; c < d; c++) ss += (double)v[c] * v[c];
    const float inv = (float)(1.0 / fmax(sqrt(ss), 1e-12)); /* torch.nn.functional.normalize */
    for (size_t c = 0; c < d; c++) v[c] *= inv;
}

/* Runs the texts order[0..B) (ids[i] of n_ids[i] tokens, the longest last) through the encoder and
 * pools each into its row of out. */
static tfm_status run_batch(const tfm_embedder *e, tfm_context *ctx, int32_t *const *ids, const size_t *n_ids,
                            const size_t *order, size_t B, int32_t *src, float *out) {
    const tfm_config *c = tfm_model_config(e->model);
    const size_t S = n_ids[order[B - 1]], d = (size_t)c->d_model;
    for (size_t b = 0; b < B; b++) {
        const size_t i = order[b];
        memcpy(src + b * S, ids[i], n_ids[i] * sizeof *src);
        for (size_t t = n_ids[i]; t < S; t++) src[b * S + t] = c->pad_id;
    }
    TRY(context_reserve(ctx, (int)B, (int)S, 1, 0));
    model_forward(ctx, (int)B, (int)S, 1, src, NULL, 0, NULL);
    const float *H = context_stack_output(ctx, 0);
    for (size_t b = 0; b < B; b++) pool(e, H + b * S * d, n_ids[order[b]], d, out + order[b] * d);
    return TFM_OK;
}

tfm_status tfm_embedder_encode(const tfm_embedder *e, tfm_context *ctx, const char *const *texts, const size_t *lens,
                               size_t n, const char *name, float *out) {
    RETURN_IF(!e || !ctx || (n && (!texts || !lens || !out)), TFM_ERR_INVALID_ARG, "tfm_embedder_encode: NULL argument");
    RETURN_IF(tfm_context_model(ctx) != e->model, TFM_ERR_INVALID_ARG, "tfm_embedder_encode: the context is of another model");
    if (n == 0) return TFM_OK;
    int32_t **ids = calloc(n, sizeof *ids);
    size_t *n_ids = calloc(n, sizeof *n_ids);
    int32_t *src = NULL;
    batch_plan plan = {0};
    tfm_status st = ids && n_ids ? TFM_OK : tfm_set_error(TFM_ERR_NOMEM, "out of memory embedding %zu texts", n);
    const int32_t V = tfm_model_config(e->model)->src_vocab, pad = tfm_model_config(e->model)->pad_id;
    for (size_t i = 0; i < n && st == TFM_OK; i++) {
        st = tfm_wordpiece_encode(e->wp, texts[i], lens[i], 1, (size_t)e->max_tokens, &ids[i], &n_ids[i]);
        if (st != TFM_OK) {
            st = name ? tfm_error_prefix(st, "%s:%zu: ", name, i + 1) : tfm_error_prefix(st, "text %zu: ", i + 1);
            break;
        }
        if (n_ids[i] == 0)
            st = tfm_set_error(TFM_ERR_FORMAT, "%s%s%zu: the tokenizer gave no tokens", name ? name : "text ",
                               name ? ":" : "", i + 1);
        for (size_t t = 0; t < n_ids[i] && st == TFM_OK; t++)
            if (ids[i][t] < 0 || ids[i][t] >= V || ids[i][t] == pad)
                st = tfm_set_error(TFM_ERR_RANGE, "%s%s%zu: token %zu has id %d, %s", name ? name : "text ",
                                   name ? ":" : "", i + 1, t, ids[i][t],
                                   ids[i][t] == pad ? "the padding id (a literal [PAD] in the text?)"
                                                    : "outside the model's vocabulary");
    }
    /* batches of consecutive lengths: grow while B · S tokens and B · S² attention cells fit */
    const batch_limits lim = {.max_rows = EMBED_MAX_BATCH, .max_tokens = EMBED_MAX_BATCH_TOKENS,
                              .max_cells = EMBED_MAX_BATCH_CELLS};
    if (st == TFM_OK) st = batch_plan_make(&plan, n_ids, n, lim);
    if (st == TFM_OK) {
        src = malloc(plan.max_tokens * sizeof *src);
        if (!src) st = tfm_set_error(TFM_ERR_NOMEM, "out of memory embedding %zu texts", n);
    }
    for (size_t j = 0; j < plan.n_batches && st == TFM_OK; j++)
        st = run_batch(e, ctx, ids, n_ids, plan.order + plan.batch[j].start, plan.batch[j].rows, src, out);
    if (ids)
        for (size_t i = 0; i < n; i++) free(ids[i]);
    free(ids);
    free(n_ids);
    batch_plan_free(&plan);
    free(src);
    return st;
}
