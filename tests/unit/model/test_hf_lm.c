/* Hugging Face language models (docs/LLM.md) against transformers 4.40.2
 * (tests/reference/make_llm_golden.py): the GPT-2 and two Llama folders of tests/fixtures (GQA 4/2
 * untied; multi-query, tied, attention_bias), the Qwen2 (q/k/v biases, GQA 4/2, tied) and the
 * Mistral (multi-query, untied) folders, loaded by tfm_model_load from their folders. For each
 * fixture prompt (its ids as the tokenizer gave them): every logit of the batched pass within 1e-4
 * of transformers'; cached decoding (one position at a time on the KV cache, which keeps only the
 * key/value heads) equal to the batched pass within 1e-5; the batched prefill of each prompt in
 * chunks of PREFILL_CHUNK (one forward: the prompts are short) and of 3 positions (each chunk
 * attending to the cache before it): the last position's logits within 1e-4 of transformers' and
 * 1e-5 of the batched pass; the prompts as one right-padded batch
 * give each row's logits alone (a model with no padding token: causal attention never reads the
 * padding after a row's last token); tfm_model_save and tfm_trainer_create refuse the models
 * (inference only). A folder missing a tensor is refused naming the tensor and its model_type. */
#include "model_internal.h"
#include "ops.h"
#include "test_st.h"
#include "test_util.h"
#include "tfm/tfm.h"

#include <stdint.h>
#include <unistd.h>

#define TOL 1e-4
#define CACHE_TOL 1e-5
#define MAX_PROMPTS 8
#define MAX_T 64

/* The prompt ids of tests/golden/hf_<name>/prompt_ids.txt: n prompts, ids[p][0..len[p]). */
static int read_prompts(const char *name, int32_t ids[MAX_PROMPTS][MAX_T], int len[MAX_PROMPTS]) {
    char p[256], line[4096];
    snprintf(p, sizeof p, "tests/golden/hf_%s/prompt_ids.txt", name);
    FILE *f = fopen(test_path(p), "r");
    CHECK(f != NULL, "%s: no prompt_ids.txt", name);
    if (!f) return 0;
    int n = 0;
    while (n < MAX_PROMPTS && fgets(line, sizeof line, f)) {
        len[n] = 0;
        for (char *s = strtok(line, " \n"); s && len[n] < MAX_T; s = strtok(NULL, " \n")) ids[n][len[n]++] = atoi(s);
        n++;
    }
    fclose(f);
    return n;
}

static void run(const char *name, int want_kv_heads, int want_tied, tfm_activation want_act) {
    char p[256];
    snprintf(p, sizeof p, "tests/fixtures/%s", name);
    tfm_model *m = NULL;
    tfm_context *ctx = NULL;
    CHECK(tfm_model_load(test_path(p), &m) == TFM_OK && tfm_context_create(m, &ctx) == TFM_OK, "%s: load: %s", name,
          tfm_last_error());
    if (!m || !ctx) {
        tfm_model_free(m);
        return;
    }
    const tfm_config *c = &m->cfg;
    CHECK(c->arch == TFM_ARCH_DECODER_ONLY && c->n_kv_heads == want_kv_heads && c->tie_embeddings == want_tied &&
              c->activation == want_act,
          "%s: kv heads %d tied %d activation %d", name, c->n_kv_heads, c->tie_embeddings, (int)c->activation);
    int32_t ids[MAX_PROMPTS][MAX_T];
    int len[MAX_PROMPTS];
    const int n = read_prompts(name, ids, len);
    const size_t V = (size_t)c->tgt_vocab;
    size_t total = 0, Tmax = 0;
    for (int i = 0; i < n; i++) total += (size_t)len[i], Tmax = (size_t)len[i] > Tmax ? (size_t)len[i] : Tmax;
    float *want = malloc(sizeof(float) * total * V), *alone = malloc(sizeof(float) * total * V);
    snprintf(p, sizeof p, "tests/golden/hf_%s/logits.f32", name);
    FILE *f = fopen(test_path(p), "rb");
    CHECK(f && fread(want, sizeof(float), total * V, f) == total * V, "%s: logits.f32 missing or short", name);
    if (f) fclose(f);
    double lerr = 0.0, cerr = 0.0, berr = 0.0, perr = 0.0;
    size_t off = 0;
    for (int i = 0; i < n; i++) { /* each prompt alone, batched and cached */
        const int T = len[i];
        CHECK(context_reserve(ctx, 1, 0, T, 0) == TFM_OK, "%s: reserve: %s", name, tfm_last_error());
        model_forward(ctx, 1, 0, T, NULL, ids[i], (size_t)T, NULL);
        const double e = test_max_abs_err(ctx->acts.logits, want + off * V, (size_t)T * V);
        if (!(e <= lerr)) lerr = e;
        memcpy(alone + off * V, ctx->acts.logits, sizeof(float) * (size_t)T * V);
        CHECK(kv_cache_reserve(ctx, 1, 0, T) == TFM_OK, "%s: cache: %s", name, tfm_last_error());
        model_decode_start(ctx, NULL);
        for (int t = 0; t < T; t++) {
            model_decode_step(ctx, ids[i] + t, (size_t)T);
            const double ce = test_max_abs_err(ctx->cache.logits, alone + (off + (size_t)t) * V, V);
            if (!(ce <= cerr)) cerr = ce;
        }
        const int chunks[] = {PREFILL_CHUNK, 3};
        for (int k = 0; k < 2; k++) {
            ctx->prefill_chunk = chunks[k];
            CHECK(kv_cache_reserve(ctx, 1, 0, T) == TFM_OK, "%s: cache: %s", name, tfm_last_error());
            model_decode_start(ctx, NULL);
            CHECK(model_prefill_reserve(ctx, T) == TFM_OK, "%s: prefill: %s", name, tfm_last_error());
            model_prefill(ctx, ids[i], (size_t)T, T);
            const float *last = alone + (off + (size_t)T - 1) * V;
            const double pe = test_max_abs_err(ctx->cache.logits, last, V);
            const double pt = test_max_abs_err(ctx->cache.logits, want + (off + (size_t)T - 1) * V, V);
            if (!(pe <= perr)) perr = pe;
            if (!(pt <= lerr)) lerr = pt;
        }
        ctx->prefill_chunk = PREFILL_CHUNK;
        off += (size_t)T;
    }
    /* all prompts as one batch, right-padded with EOS */
    int32_t *batch = malloc(sizeof(int32_t) * (size_t)n * Tmax);
    for (int i = 0; i < n; i++)
        for (size_t t = 0; t < Tmax; t++) batch[(size_t)i * Tmax + t] = t < (size_t)len[i] ? ids[i][t] : c->eos_id;
    CHECK(context_reserve(ctx, n, 0, (int)Tmax, 0) == TFM_OK, "%s: reserve batch: %s", name, tfm_last_error());
    model_forward(ctx, n, 0, (int)Tmax, NULL, batch, Tmax, NULL);
    off = 0;
    for (int i = 0; i < n; i++) {
        const double e = test_max_abs_err(ctx->acts.logits + (size_t)i * Tmax * V, alone + off * V, (size_t)len[i] * V);
        if (!(e <= berr)) berr = e;
        off += (size_t)len[i];
    }
    CHECK(n >= 5 && lerr <= TOL, "%s: logits: max error %.3g > %g (%d prompts)", name, lerr, TOL, n);
    CHECK(cerr <= CACHE_TOL, "%s: cached decoding differs from the batched pass by %.3g", name, cerr);
    CHECK(berr <= CACHE_TOL, "%s: a padded batch differs from each prompt alone by %.3g", name, berr);
    CHECK(perr <= CACHE_TOL, "%s: the prefill (one forward, chunks of 3) differs from the batched pass by %.3g", name,
          perr);
    printf("%s: max |logit - transformers| = %.3g, max |cached - batched| = %.3g, max |prefill - batched| = %.3g, "
           "max |padded batch - alone| = %.3g\n",
           name, lerr, cerr, perr, berr);
    /* inference only: no checkpoint keys and no backward pass for the family's block */
    char tmp[256], out[320];
    test_make_tmpdir(tmp, sizeof tmp, "hf_lm");
    snprintf(out, sizeof out, "%s/m.safetensors", tmp);
    CHECK(tfm_model_save(m, out) == TFM_ERR_UNSUPPORTED && strstr(tfm_last_error(), "load it from its Hugging Face folder"),
          "%s: save: %s", name, tfm_last_error());
    tfm_train_config tc = tfm_train_config_default();
    tfm_trainer *tr = NULL;
    CHECK(tfm_trainer_create(m, &tc, 2, 0, 8, &tr) == TFM_ERR_UNSUPPORTED && !tr && strstr(tfm_last_error(), "inference only"),
          "%s: trainer: %s", name, tfm_last_error());
    remove(out);
    rmdir(tmp);
    free(batch);
    free(want);
    free(alone);
    tfm_context_free(ctx);
    tfm_model_free(m);
}

/* The fixture folder `name` without one tensor: the error names the file, the tensor and the
 * folder's model_type (the message once said "GPT-2 / Llama" for every family). */
static void missing_tensor(const char *name, const char *tensor) {
    char dir[4096], fix[256], fix_st[300], st[4200];
    snprintf(fix, sizeof fix, "tests/fixtures/%s", name);
    snprintf(fix_st, sizeof fix_st, "%s/model.safetensors", fix);
    if (!test_make_tmpdir(dir, sizeof dir, "hf-lm-missing")) {
        CHECK(0, "tmpdir");
        return;
    }
    snprintf(st, sizeof st, "%s/model.safetensors", dir);
    CHECK(test_copy_dir(test_path(fix), dir, "model.safetensors") &&
              test_st_rewrite(test_path(fix_st), st, tensor, NULL, 0, 0),
          "copy %s without %s: %s", name, tensor, tfm_last_error());
    tfm_model *m = NULL;
    char want[256];
    snprintf(want, sizeof want, "tensor '%s' is missing (a Hugging Face %s model needs it)", tensor, name);
    CHECK(tfm_model_load(dir, &m) == TFM_ERR_FORMAT && !m && strstr(tfm_last_error(), want) &&
              strstr(tfm_last_error(), "model.safetensors"),
          "%s without %s: '%s' (want '%s')", name, tensor, tfm_last_error(), want);
    tfm_model_free(m);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0, "remove %s", dir);
}

int main(void) {
    run("gpt2", 0, 1, TFM_ACT_GELU_TANH);
    run("llama", 2, 0, TFM_ACT_SWIGLU);
    run("llama_tied", 1, 1, TFM_ACT_SWIGLU);
    run("llama_bf16", 2, 0, TFM_ACT_SWIGLU); /* BF16 weights widened at load */
    run("gpt2_f16", 0, 1, TFM_ACT_GELU_TANH); /* F16 weights widened at load */
    run("qwen2", 2, 1, TFM_ACT_SWIGLU);   /* Qwen2: biases on q/k/v, none on o_proj */
    run("mistral", 1, 0, TFM_ACT_SWIGLU); /* Mistral: sliding_window null */
    missing_tensor("qwen2", "model.layers.1.self_attn.k_proj.bias");
    return test_finish("hf_lm");
}
