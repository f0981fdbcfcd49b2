/* Encoder-only BERT (docs/BERT.md): a tiny random Hugging Face BertModel
 * (tests/golden/bert_tiny, tests/reference/make_bert_fixture.py) loads by its HF names and gives
 * transformers' last hidden states and sentence-transformers' pooled, normalised vectors to 1e-4;
 * a saved copy reloads as a tfm checkpoint; bad HF models fail naming what is wrong. */
#include "golden_txt.h"
#include "model_internal.h"
#include "test_util.h"
#include "tfm/embed.h"
#include "tfm/score.h"
#include "tfm/train.h"
#include "tfm/wordpiece.h"

#include <sys/stat.h>

#define DIR "tests/golden/bert_tiny"
#define N_SENT 7
#define D 16
#define MAX_S 16

static int32_t ids[N_SENT][MAX_S];
static size_t lens[N_SENT];

static int read_ref_ids(void) {
    for (int i = 0; i < N_SENT; i++) {
        char name[32];
        float v[MAX_S];
        /* the count is the sentence's length: find it by trying each (golden_txt checks counts) */
        lens[i] = 0;
        FILE *f = fopen(test_path(DIR "/ref.txt"), "r");
        if (!f) return 0;
        char tok[64];
        size_t n = 0;
        snprintf(name, sizeof name, "ids_%d", i);
        while (fscanf(f, "%63s", tok) == 1)
            if (strcmp(tok, name) == 0 && fscanf(f, "%zu", &n) == 1) break;
        fclose(f);
        if (n < 2 || n > MAX_S || !golden_txt_read(test_path(DIR "/ref.txt"), name, v, n)) return 0;
        lens[i] = n;
        for (size_t t = 0; t < n; t++) ids[i][t] = (int32_t)v[t];
    }
    return 1;
}

/* The last hidden states of all sentences as one padded batch against hidden_i. */
static double hidden_diff(const tfm_model *m) {
    tfm_context *ctx;
    if (tfm_context_create(m, &ctx) != TFM_OK) return 1e9;
    size_t S = 0;
    for (int i = 0; i < N_SENT; i++) S = lens[i] > S ? lens[i] : S;
    int32_t src[N_SENT * MAX_S];
    for (int i = 0; i < N_SENT; i++)
        for (size_t t = 0; t < S; t++) src[i * S + t] = t < lens[i] ? ids[i][t] : m->cfg.pad_id;
    double worst = 1e9;
    if (context_reserve(ctx, N_SENT, (int)S, 1, 0) == TFM_OK) {
        model_forward(ctx, N_SENT, (int)S, 1, src, NULL, 0, NULL);
        worst = 0.0;
        for (int i = 0; i < N_SENT; i++) {
            float want[MAX_S * D];
            char name[32];
            snprintf(name, sizeof name, "hidden_%d", i);
            if (!golden_txt_read(test_path(DIR "/ref.txt"), name, want, lens[i] * D)) return 1e9;
            const float *got = ctx->acts.stack[0].out + i * S * D;
            for (size_t k = 0; k < lens[i] * D; k++) worst = fmax(worst, fabs((double)got[k] - want[k]));
        }
    }
    tfm_context_free(ctx);
    return worst;
}

static void test_load_and_hidden(void) {
    tfm_model *m = NULL;
    tfm_status st = tfm_model_load(test_path(DIR), &m); /* a folder: recognised as Hugging Face */
    CHECK(st == TFM_OK, "load %s: %s", DIR, tfm_last_error());
    if (!m) return;
    const tfm_config *c = tfm_model_config(m);
    CHECK(c->arch == TFM_ARCH_ENCODER_ONLY && c->d_model == D && c->n_heads == 4 && c->n_enc_layers == 2 &&
              c->d_ff == 32 && c->src_vocab == 60 && c->max_len == 32 && c->type_vocab == 2 && c->embed_norm == 1 &&
              c->activation == TFM_ACT_GELU && c->pe == TFM_PE_LEARNED && !c->norm_first,
          "config from config.json");
    CHECK_NEAR(c->layer_norm_eps, 1e-12, 1e-18, "layer_norm_eps");
    /* 60·16 words + 32·16 positions + 2·16 types + 2·16 LN + 2 layers · (3·16·16+3·16 q|k|v + 16·16+16
     * W_O + 2·32 + 32·16 + 32 + 16·32 + 16 FFN + 4·16 LN) */
    const size_t layer = 3 * 256 + 48 + 256 + 16 + 512 + 32 + 512 + 16 + 64;
    CHECK(tfm_config_param_count(c) == 960 + 512 + 32 + 32 + 2 * layer, "parameter count %zu",
          tfm_config_param_count(c));
    const double diff = hidden_diff(m);
    CHECK(diff <= 1e-4, "last hidden states vs transformers: max |diff| %.3g", diff);
    printf("hidden states: max |diff| %.3g\n", diff);

    /* a tfm checkpoint of it reloads with the same numbers (type_vocab, embed_norm in metadata) */
    char tmp[4096], path[4200];
    if (test_make_tmpdir(tmp, sizeof tmp, "bert")) {
        snprintf(path, sizeof path, "%s/bert.safetensors", tmp);
        CHECK(tfm_model_save(m, path) == TFM_OK, "save: %s", tfm_last_error());
        tfm_model *m2 = NULL;
        CHECK(tfm_model_load(path, &m2) == TFM_OK, "reload: %s", tfm_last_error());
        if (m2) {
            CHECK(tfm_model_config(m2)->type_vocab == 2 && tfm_model_config(m2)->embed_norm == 1, "reloaded config");
            CHECK(hidden_diff(m2) == diff, "the reloaded model computes the same");
        }
        tfm_model_free(m2);
        remove(path);
        rmdir(tmp);
    }

    /* an encoder-only model has no generator: scoring and training refuse it */
    tfm_context *ctx;
    if (tfm_context_create(m, &ctx) == TFM_OK) {
        int32_t s[3] = {2, 5, 3}, t[3] = {2, 5, 3};
        double lp;
        int nt;
        CHECK(tfm_model_score(ctx, 1, 3, 3, s, t, &lp, &nt, NULL) == TFM_ERR_UNSUPPORTED, "score refuses");
        tfm_context_free(ctx);
    }
    tfm_train_config tc = tfm_train_config_default();
    tfm_trainer *tr = NULL;
    CHECK(tfm_trainer_create(m, &tc, 1, 4, 4, &tr) == TFM_ERR_UNSUPPORTED, "trainer refuses: %s", tfm_last_error());
    tfm_model_free(m);
}

static void test_tokens_and_vectors(void) {
    tfm_wordpiece *wp = NULL;
    CHECK(tfm_wordpiece_load(test_path(DIR "/vocab.txt"), &wp) == TFM_OK, "vocab: %s", tfm_last_error());
    tfm_embedder *e = NULL;
    CHECK(tfm_embedder_open(test_path(DIR), &e) == TFM_OK, "embedder: %s", tfm_last_error());
    if (!wp || !e) goto done;
    CHECK(tfm_embedder_dim(e) == D && tfm_embedder_max_tokens(e) == MAX_S, "dim %d, max tokens %d",
          tfm_embedder_dim(e), tfm_embedder_max_tokens(e));
    char lines[N_SENT][256];
    const char *texts[N_SENT];
    size_t tl[N_SENT];
    FILE *f = fopen(test_path(DIR "/sentences.txt"), "r");
    CHECK(f != NULL, "sentences.txt");
    if (!f) goto done;
    for (int i = 0; i < N_SENT; i++) {
        if (!fgets(lines[i], sizeof lines[i], f)) lines[i][0] = 0;
        lines[i][strcspn(lines[i], "\n")] = 0;
        texts[i] = lines[i];
        tl[i] = strlen(lines[i]);
        int32_t *got;
        size_t n;
        CHECK(tfm_wordpiece_encode(wp, texts[i], tl[i], 1, MAX_S, &got, &n) == TFM_OK, "encode %d", i);
        CHECK(n == lens[i] && memcmp(got, ids[i], n * sizeof *got) == 0, "sentence %d: ids as BertTokenizer", i);
        free(got);
        size_t counted = 0;
        CHECK(tfm_embedder_count_tokens(e, texts[i], tl[i], &counted) == TFM_OK && counted == lens[i],
              "sentence %d: tfm_embedder_count_tokens %zu, BertTokenizer %zu", i, counted, (size_t)lens[i]);
    }
    fclose(f);
    tfm_context *ctx;
    if (tfm_context_create(tfm_embedder_model(e), &ctx) != TFM_OK) goto done;
    float out[N_SENT * D];
    CHECK(tfm_embedder_encode(e, ctx, texts, tl, N_SENT, NULL, out) == TFM_OK, "encode: %s", tfm_last_error());
    double worst = 0.0;
    for (int i = 0; i < N_SENT; i++) {
        float want[D];
        char name[32];
        snprintf(name, sizeof name, "vec_%d", i);
        if (!golden_txt_read(test_path(DIR "/ref.txt"), name, want, D)) worst = 1e9;
        for (int k = 0; k < D; k++) worst = fmax(worst, fabs((double)out[i * D + k] - want[k]));
    }
    CHECK(worst <= 1e-4, "pooled vectors vs sentence-transformers' recipe: max |diff| %.3g", worst);
    printf("vectors: max |diff| %.3g\n", worst);
    /* one at a time gives the same vectors as the batch (padding does not leak) */
    float one[D];
    CHECK(tfm_embedder_encode(e, ctx, &texts[1], &tl[1], 1, NULL, one) == TFM_OK, "single");
    double d1 = 0.0;
    for (int k = 0; k < D; k++) d1 = fmax(d1, fabs((double)one[k] - out[D + k]));
    CHECK(d1 <= 1e-6, "alone vs in a batch: %.3g", d1);
    /* invalid UTF-8 names the text */
    const char *badt[2] = {"good", "caf\xc3"};
    size_t badl[2] = {4, 4};
    CHECK(tfm_embedder_encode(e, ctx, badt, badl, 2, "in.txt", out) == TFM_ERR_FORMAT &&
              strstr(tfm_last_error(), "in.txt:2: invalid UTF-8"),
          "invalid UTF-8: %s", tfm_last_error());
    tfm_context_free(ctx);
done:
    tfm_embedder_free(e);
    tfm_wordpiece_free(wp);
}

/* load_error PATH STATUS NEEDLE: tfm_model_load fails with STATUS and a message holding NEEDLE. */
static void load_error(const char *path, tfm_status want, const char *needle) {
    tfm_model *m = NULL;
    tfm_status st = tfm_model_load(path, &m);
    CHECK(st == want && m == NULL && strstr(tfm_last_error(), needle), "%s: status %d, error '%s', want '%s'", path,
          (int)st, tfm_last_error(), needle);
    tfm_model_free(m);
}

/* A folder with the tiny model's weights and its config.json with `key` set to the JSON `value`. */
static void config_error(const char *key, const char *value, tfm_status want, const char *needle) {
    char tmp[4096], p[4200];
    if (!test_make_tmpdir(tmp, sizeof tmp, "bert-cfg")) return;
    snprintf(p, sizeof p, "%s/model.safetensors", tmp);
    CHECK(test_copy_file(test_path(DIR "/model.safetensors"), p), "copy");
    snprintf(p, sizeof p, "%s/config.json", tmp);
    FILE *f = fopen(p, "w");
    if (f) {
        static const char *const base[][2] = {
            {"model_type", "\"bert\""}, {"hidden_size", "16"}, {"num_attention_heads", "4"},
            {"num_hidden_layers", "2"}, {"intermediate_size", "32"}, {"vocab_size", "60"},
            {"max_position_embeddings", "32"}, {"type_vocab_size", "2"}, {"hidden_act", "\"gelu\""}};
        fprintf(f, "{\"%s\": %s", key, value);
        for (size_t k = 0; k < sizeof base / sizeof base[0]; k++)
            if (strcmp(base[k][0], key) != 0) fprintf(f, ", \"%s\": %s", base[k][0], base[k][1]);
        fprintf(f, "}\n");
        fclose(f);
    }
    load_error(tmp, want, needle);
    remove(p);
    snprintf(p, sizeof p, "%s/model.safetensors", tmp);
    remove(p);
    rmdir(tmp);
}

static void test_errors(void) {
    load_error(test_path(DIR "/missing_tensor.safetensors"), TFM_ERR_FORMAT,
               "tensor 'encoder.layer.1.output.dense.weight' is missing");
    load_error(test_path(DIR "/bad_shape.safetensors"), TFM_ERR_FORMAT,
               "tensor 'encoder.layer.0.intermediate.dense.weight' has shape [16, 32], expected [32, 16]");
    config_error("model_type", "\"t5\"", TFM_ERR_UNSUPPORTED, "model_type 't5' is not supported");
    config_error("hidden_act", "\"relu\"", TFM_ERR_UNSUPPORTED, "hidden_act 'relu' is not supported");
    config_error("num_hidden_layers", "1", TFM_ERR_FORMAT, "unexpected tensor 'encoder.layer.1.");
    config_error("hidden_size", "32", TFM_ERR_FORMAT, "embeddings.word_embeddings.weight' has shape [60, 16]");
    config_error("position_embedding_type", "\"relative_key\"", TFM_ERR_UNSUPPORTED, "position_embedding_type");
    /* no config.json at all: a folder is a HF model, so say what it lacks */
    char tmp[4096];
    if (test_make_tmpdir(tmp, sizeof tmp, "bert-empty")) {
        load_error(tmp, TFM_ERR_IO, "no config.json");
        rmdir(tmp);
    }
    /* config.json without model.safetensors: missing weights, or a pickle refused with the
     * transformers command that converts it (a pickle runs code when read: never unpickled) */
    if (test_make_tmpdir(tmp, sizeof tmp, "bert-bin")) {
        char cfg[4200], bin[4200];
        snprintf(cfg, sizeof cfg, "%s/config.json", tmp);
        snprintf(bin, sizeof bin, "%s/pytorch_model.bin", tmp);
        CHECK(test_copy_file(test_path(DIR "/config.json"), cfg), "copy config.json");
        load_error(tmp, TFM_ERR_IO, "no model.safetensors");
        FILE *f = fopen(bin, "wb");
        if (f) {
            fputs("\x80\x02}q\x00.", f); /* a pickle's first bytes: it must never be read */
            fclose(f);
        }
        load_error(tmp, TFM_ERR_UNSUPPORTED, "only pytorch_model.bin (a Python pickle, which tfm does not read)");
        load_error(tmp, TFM_ERR_UNSUPPORTED, "from transformers import AutoModel as M; M.from_pretrained('");
        load_error(tmp, TFM_ERR_UNSUPPORTED, "save_pretrained(");
        remove(bin);
        remove(cfg);
        rmdir(tmp);
    }
}

int main(void) {
    CHECK(read_ref_ids(), "read the reference ids of %s/ref.txt", DIR);
    test_load_and_hidden();
    test_tokens_and_vectors();
    test_errors();
    return test_finish("bert");
}
