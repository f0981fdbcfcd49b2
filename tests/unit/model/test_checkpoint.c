/* Checkpoints: round trips, tied embeddings, the tokenizer blob, and every malformed or foreign
 * file of docs/FORMATS.md rejected with a message naming the tensor, key or byte offset; extra
 * tensors (checkpoint.h, a trainer's train_state.*) written and read back with their checks. */
#define _GNU_SOURCE /* mkdtemp, memmem */
#include "checkpoint.h"
#include "test_util.h"
#include "tfm/tfm.h"

#include <dirent.h>
#include <math.h>
#include <stdint.h>

static const char *GOLDEN = "tests/golden/post_ln_relu/model.safetensors";
static char g_tmpdir[256];

static unsigned char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *p = malloc((size_t)len + 1);
    *n = fread(p, 1, (size_t)len, f);
    fclose(f);
    return p;
}

static void spit(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    fwrite(data, 1, n, f);
    fclose(f);
}

/* Writes header + data as a safetensors file (header length recomputed). */
static void write_st(const char *path, const char *header, const unsigned char *data, size_t data_len) {
    FILE *f = fopen(path, "wb");
    uint64_t n = strlen(header);
    unsigned char len8[8];
    for (int i = 0; i < 8; i++) len8[i] = (unsigned char)(n >> (8 * i));
    fwrite(len8, 1, 8, f);
    fwrite(header, 1, n, f);
    fwrite(data, 1, data_len, f);
    fclose(f);
}

/* The golden file's header as a string, and its data section. */
static char *golden_header(unsigned char **data, size_t *data_len) {
    size_t n;
    unsigned char *all = slurp(test_path(GOLDEN), &n);
    uint64_t h = 0;
    for (int i = 7; i >= 0; i--) h = (h << 8) | all[i];
    char *header = malloc(h + 1);
    memcpy(header, all + 8, h);
    header[h] = '\0';
    *data_len = n - 8 - h;
    *data = malloc(*data_len);
    memcpy(*data, all + 8 + h, *data_len);
    free(all);
    return header;
}

/* header with the first occurrence of `from` replaced by `to` */
static char *replace(const char *s, const char *from, const char *to) {
    const char *p = strstr(s, from);
    if (!p) return NULL;
    size_t a = (size_t)(p - s), lf = strlen(from), lt = strlen(to), ls = strlen(s);
    char *out = malloc(ls - lf + lt + 1);
    memcpy(out, s, a);
    memcpy(out + a, to, lt);
    memcpy(out + a + lt, p + lf, ls - a - lf + 1);
    return out;
}

static void expect_fail(const char *label, const char *path, tfm_status want, const char *needle) {
    tfm_model *m = NULL;
    tfm_status st = tfm_model_load(path, &m);
    CHECK(st == want, "%s: status %s, want %s (%s)", label, tfm_status_name(st), tfm_status_name(want), tfm_last_error());
    CHECK(strstr(tfm_last_error(), needle) != NULL, "%s: message '%s' lacks '%s'", label, tfm_last_error(), needle);
    CHECK(m == NULL, "%s: no model on failure", label);
    tfm_model_free(m);
}

static void mutated(const char *label, const char *from, const char *to, const char *needle, tfm_status want,
                    long data_delta) {
    unsigned char *data;
    size_t dl;
    char *h = golden_header(&data, &dl);
    char *m = replace(h, from, to);
    CHECK(m != NULL, "%s: pattern '%s' not in the golden header", label, from);
    if (m) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s.safetensors", g_tmpdir, label);
        write_st(path, m, data, (size_t)((long)dl + data_delta));
        expect_fail(label, path, want, needle);
    }
    free(m);
    free(h);
    free(data);
}

static void malformed(void) {
    char path[512];
    snprintf(path, sizeof path, "%s/none.safetensors", g_tmpdir);
    expect_fail("missing file", path, TFM_ERR_IO, "cannot open");
    snprintf(path, sizeof path, "%s/short.safetensors", g_tmpdir);
    spit(path, "abc", 3);
    expect_fail("3-byte file", path, TFM_ERR_FORMAT, "shorter than the 8-byte");
    unsigned char huge[16] = {0, 0, 0, 0, 0, 1, 0, 0, '{', '}'};
    snprintf(path, sizeof path, "%s/huge.safetensors", g_tmpdir);
    spit(path, huge, sizeof huge);
    expect_fail("header over 100 MB", path, TFM_ERR_FORMAT, "100 MB limit");
    unsigned char past[16] = {200, 0, 0, 0, 0, 0, 0, 0, '{', '}'};
    snprintf(path, sizeof path, "%s/past.safetensors", g_tmpdir);
    spit(path, past, sizeof past);
    expect_fail("header past the end", path, TFM_ERR_FORMAT, "runs past the end");
    snprintf(path, sizeof path, "%s/zip.pt", g_tmpdir);
    spit(path, "PK\x03\x04zzzzzzzzzzzz", 16);
    expect_fail("zip (PyTorch .pt)", path, TFM_ERR_FORMAT, "zip archive");
    snprintf(path, sizeof path, "%s/text.txt", g_tmpdir);
    spit(path, "hello world, not a model\n", 25);
    expect_fail("text file", path, TFM_ERR_FORMAT, "safetensors");

    mutated("bad_json", "\"__metadata__\":{", "\"__metadata__\":{{", "bad JSON", TFM_ERR_FORMAT, 0);
    mutated("duplicate", "\"generator.bias\":", "\"generator.weight\":", "'generator.weight' appears twice",
            TFM_ERR_FORMAT, 0);
    mutated("wrong_dtype", "\"generator.bias\":{\"dtype\":\"F32\"", "\"generator.bias\":{\"dtype\":\"I32\"",
            "'generator.bias' has dtype I32, expected F32", TFM_ERR_FORMAT, 0);
    mutated("unknown_dtype", "\"generator.bias\":{\"dtype\":\"F32\"", "\"generator.bias\":{\"dtype\":\"Q7\"",
            "unknown dtype", TFM_ERR_FORMAT, 0);
    mutated("wrong_shape", "\"generator.bias\":{\"dtype\":\"F32\",\"shape\":[19]",
            "\"generator.bias\":{\"dtype\":\"F32\",\"shape\":[1,19]", "'generator.bias' has shape [1, 19], expected [19]",
            TFM_ERR_FORMAT, 0);
    mutated("size_mismatch", "\"generator.bias\":{\"dtype\":\"F32\",\"shape\":[19]",
            "\"generator.bias\":{\"dtype\":\"F32\",\"shape\":[20]", "'generator.bias': data_offsets", TFM_ERR_FORMAT, 0);
    mutated("overflow", "\"generator.bias\":{\"dtype\":\"F32\",\"shape\":[19]",
            "\"generator.bias\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,4294967296]", "overflows 64 bits",
            TFM_ERR_FORMAT, 0);
    mutated("missing_tensor", "\"generator.bias\":", "\"tokenizer.something\":", "'generator.bias' is missing",
            TFM_ERR_FORMAT, 0);
    mutated("unknown_tensor", "\"generator.bias\":", "\"generator.biases\":", "unknown tensor 'generator.biases'",
            TFM_ERR_FORMAT, 0);
    mutated("truncated_data", "\"__metadata__\"", "\"__metadata__\"", "past the end of the file", TFM_ERR_FORMAT, -4);
    mutated("overlap", "\"generator.bias\":{\"dtype\":\"F32\",\"shape\":[19],\"data_offsets\":[",
            "\"generator.bias\":{\"dtype\":\"F32\",\"shape\":[19],\"data_offsets\":[0,76],\"x\":[", "overlap",
            TFM_ERR_FORMAT, 0);
    mutated("n_heads", "\"n_heads\":\"4\"", "\"n_heads\":\"3\"", "n_heads (3) must be positive and divide d_model (16)",
            TFM_ERR_INVALID_ARG, 0);
    /* metadata describing a model of terabytes in a file of kilobytes: the shapes are refused before
     * anything of the model's size is allocated (before: out of memory, or an abort under ASan) */
    mutated("config_larger_than_file", "\"d_model\":\"16\",\"n_heads\":\"4\",\"n_enc_layers\":\"2\",\"n_dec_layers\":\"2\",\"d_ff\":\"32\"",
            "\"d_model\":\"65536\",\"n_heads\":\"4\",\"n_enc_layers\":\"2\",\"n_dec_layers\":\"2\",\"d_ff\":\"1048576\"",
            ", expected [23, 65536]", TFM_ERR_FORMAT, 0);
    mutated("not_integer", "\"d_model\":\"16\"", "\"d_model\":\"16x\"", "d_model='16x' is not an integer",
            TFM_ERR_FORMAT, 0);
    mutated("no_arch", "\"arch\":", "\"arcx\":", "metadata key 'arch' is missing", TFM_ERR_FORMAT, 0);
    mutated("metadata_not_string", "\"max_len\":\"64\"", "\"max_len\":64", "metadata value of 'max_len' is not a string",
            TFM_ERR_FORMAT, 0);
}

static void round_trip(void) {
    tfm_model *a = NULL, *b = NULL;
    char p1[512], p2[512];
    snprintf(p1, sizeof p1, "%s/rt1.safetensors", g_tmpdir);
    snprintf(p2, sizeof p2, "%s/rt2.safetensors", g_tmpdir);
    CHECK(tfm_model_load(test_path(GOLDEN), &a) == TFM_OK, "load golden: %s", tfm_last_error());
    if (!a) return;
    const unsigned char blob[5] = {'s', 'p', 0, 255, 7};
    CHECK(tfm_model_set_tokenizer(a, blob, sizeof blob) == TFM_OK, "set tokenizer");
    CHECK(tfm_model_save(a, p1) == TFM_OK, "save: %s", tfm_last_error());
    CHECK(tfm_model_load(p1, &b) == TFM_OK, "reload: %s", tfm_last_error());
    if (!b) return;
    CHECK(tfm_model_save(b, p2) == TFM_OK, "save again: %s", tfm_last_error());
    size_t n1, n2;
    unsigned char *f1 = slurp(p1, &n1), *f2 = slurp(p2, &n2);
    CHECK(n1 == n2 && memcmp(f1, f2, n1) == 0, "save(load(save(m))) differs from save(m)");
    size_t tl;
    const unsigned char *tok = tfm_model_tokenizer(b, &tl);
    CHECK(tok && tl == sizeof blob && memcmp(tok, blob, tl) == 0, "tokenizer blob did not round-trip");
    /* identical scores from the original and the reloaded model */
    int32_t src[3] = {5, 6, 7}, tgt[4] = {1, 4, 5, 2};
    double la, lb;
    tfm_context *ca = NULL, *cb = NULL;
    CHECK(tfm_context_create(a, &ca) == TFM_OK && tfm_context_create(b, &cb) == TFM_OK &&
              tfm_model_score(ca, 1, 3, 4, src, tgt, &la, NULL, NULL) == TFM_OK &&
              tfm_model_score(cb, 1, 3, 4, src, tgt, &lb, NULL, NULL) == TFM_OK && la == lb,
          "reloaded model scores differently");
    tfm_context_free(ca);
    tfm_context_free(cb);
    /* an atomic save leaves no temporary file behind */
    DIR *d = opendir(g_tmpdir);
    int stray = 0;
    for (struct dirent *e; d && (e = readdir(d));) stray += strstr(e->d_name, ".tmp.") != NULL;
    if (d) closedir(d);
    CHECK(stray == 0, "%d temporary files left after saving", stray);
    CHECK(tfm_model_save(a, "/nonexistent-dir/x.safetensors") == TFM_ERR_IO &&
              strstr(tfm_last_error(), "/nonexistent-dir/x.safetensors") != NULL,
          "save into a missing directory: %s", tfm_last_error());
    free(f1);
    free(f2);
    tfm_model_free(a);
    tfm_model_free(b);
}

static void fresh_models(void) {
    tfm_config c = tfm_config_default();
    c.d_model = 32;
    c.n_heads = 4;
    c.d_ff = 64;
    c.src_vocab = c.tgt_vocab = 50;
    c.tie_embeddings = 1;
    tfm_model *a = NULL, *b = NULL;
    CHECK(tfm_model_create(&c, 7, &a) == TFM_OK && tfm_model_create(&c, 7, &b) == TFM_OK, "create: %s",
          tfm_last_error());
    char p1[512], p2[512];
    snprintf(p1, sizeof p1, "%s/fresh1.safetensors", g_tmpdir);
    snprintf(p2, sizeof p2, "%s/fresh2.safetensors", g_tmpdir);
    tfm_model_save(a, p1);
    tfm_model_save(b, p2);
    size_t n1, n2;
    unsigned char *f1 = slurp(p1, &n1), *f2 = slurp(p2, &n2);
    CHECK(n1 == n2 && memcmp(f1, f2, n1) == 0, "the same seed must give the same model");
    tfm_model *r = NULL;
    CHECK(tfm_model_load(p1, &r) == TFM_OK, "load tied: %s", tfm_last_error());
    CHECK(tfm_config_param_count(&c) < tfm_config_param_count(&(tfm_config){.arch = c.arch, .d_model = 32,
                                                                            .n_heads = 4, .n_enc_layers = 3,
                                                                            .n_dec_layers = 3, .d_ff = 64,
                                                                            .src_vocab = 50, .tgt_vocab = 50}),
          "tied embeddings must store fewer parameters");
    CHECK(tfm_model_estimate_bytes(&c, 32, 32, 32) > tfm_config_param_count(&c) * 4, "estimate covers the workspace");
    c.n_heads = 5;
    tfm_model *bad = NULL;
    CHECK(tfm_model_create(&c, 1, &bad) == TFM_ERR_INVALID_ARG && bad == NULL, "create with n_heads 5, d_model 32");
    CHECK(tfm_config_validate(&c) == TFM_ERR_INVALID_ARG, "n_heads 5 does not divide d_model 32");
    free(f1);
    free(f2);
    tfm_model_free(a);
    tfm_model_free(b);
    tfm_model_free(r);
}

/* model_save_extra / model_read_extra: the values come back; a missing tensor, another dtype or
 * another element count is refused naming the tensor, and the model still loads without them. */
static void extra_tensors(void) {
    tfm_model *m = NULL;
    CHECK(tfm_model_load(GOLDEN, &m) == TFM_OK, "load golden: %s", tfm_last_error());
    if (!m) return;
    char path[512];
    snprintf(path, sizeof path, "%s/extra.safetensors", g_tmpdir);
    int64_t step = 42, pos[3] = {1, -2, 3};
    double loss = 2.5;
    unsigned char bytes[5] = {9, 8, 7, 6, 5};
    ckpt_tensor out[4] = {{"train_state.step", "I64", 1, &step},
                          {"train_state.position", "I64", 3, pos},
                          {"train_state.loss", "F64", 1, &loss},
                          {"train_state.bytes", "U8", 5, bytes}};
    CHECK(model_save_extra(m, path, out, 4) == TFM_OK, "save extra: %s", tfm_last_error());
    int64_t step2 = 0, pos2[3] = {0, 0, 0};
    double loss2 = 0.0;
    unsigned char bytes2[5] = {0};
    ckpt_tensor in[4] = {{"train_state.step", "I64", 1, &step2},
                         {"train_state.position", "I64", 3, pos2},
                         {"train_state.loss", "F64", 1, &loss2},
                         {"train_state.bytes", "U8", 5, bytes2}};
    CHECK(model_read_extra(path, in, 4, "not what we want") == TFM_OK, "read extra: %s", tfm_last_error());
    CHECK(step2 == 42 && pos2[0] == 1 && pos2[1] == -2 && pos2[2] == 3 && loss2 == 2.5 &&
              memcmp(bytes, bytes2, 5) == 0,
          "extra tensors came back as %lld [%lld %lld %lld] %g", (long long)step2, (long long)pos2[0],
          (long long)pos2[1], (long long)pos2[2], loss2);
    tfm_model *r = NULL;
    CHECK(tfm_model_load(path, &r) == TFM_OK, "a model load skips train_state.: %s", tfm_last_error());
    tfm_model_free(r);
    const struct {
        ckpt_tensor t;
        const char *needle;
    } bad[] = {{{"train_state.none", "I64", 1, &step2}, "no tensor 'train_state.none': not what we want"},
               {{"train_state.step", "F64", 1, &loss2}, "tensor 'train_state.step' must be F64 with 8 bytes"},
               {{"train_state.position", "I64", 2, pos2}, "tensor 'train_state.position' must be I64 with 16 bytes"},
               {{"train_state.bytes", "U8", 4, bytes2}, "tensor 'train_state.bytes' must be U8 with 4 bytes"},
               {{"train_state.step", "F16", 1, &step2}, "tensor 'train_state.step' has dtype 'F16'"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const tfm_status st = model_read_extra(path, &bad[i].t, 1, "not what we want");
        CHECK(st != TFM_OK && strstr(tfm_last_error(), bad[i].needle) && strstr(tfm_last_error(), path),
              "%s: status %d, message %s", bad[i].needle, (int)st, tfm_last_error());
    }
    tfm_model_free(m);
}

/* The score of one fixed pair under model m (log-probability), or NAN on error. */
static double score_of(const tfm_model *m) {
    int32_t src[4] = {5, 6, 7, 2}, tgt[4] = {1, 4, 5, 2};
    double lp = NAN;
    tfm_context *c = NULL;
    if (tfm_context_create(m, &c) != TFM_OK || tfm_model_score(c, 1, 4, 4, src, tgt, &lp, NULL, NULL) != TFM_OK)
        lp = NAN;
    tfm_context_free(c);
    return lp;
}

/* A small model of `c` (seed 3): its score, or NAN. */
static double score_cfg(const tfm_config *c) {
    tfm_model *m = NULL;
    double lp = tfm_model_create(c, 3, &m) == TFM_OK ? score_of(m) : NAN;
    tfm_model_free(m);
    return lp;
}

/* The family traits of include/tfm/model.h (docs/MODELS.md): a default model's file has none of
 * their keys (files are written as before them), a golden file written before them loads with
 * the defaults, a model with every trait set round-trips through its checkpoint, and each trait
 * changes what the model computes (or, set to its default's value, does not). */
static void family_traits(void) {
    static const char *const keys[] = {"embed_scale", "pe_offset", "no_final_norm", "decoder_start_id", "suppress",
                                       "lenpen_count_forced", "forced_eos"};
    tfm_config c = tfm_config_default();
    c.d_model = 32;
    c.n_heads = 4;
    c.d_ff = 64;
    c.n_enc_layers = c.n_dec_layers = 2;
    c.src_vocab = c.tgt_vocab = 50;
    tfm_model *a = NULL, *b = NULL, *g = NULL;
    char p1[512], p2[512];
    snprintf(p1, sizeof p1, "%s/traits1.safetensors", g_tmpdir);
    snprintf(p2, sizeof p2, "%s/traits2.safetensors", g_tmpdir);
    CHECK(tfm_model_create(&c, 3, &a) == TFM_OK && tfm_model_save(a, p1) == TFM_OK, "save: %s", tfm_last_error());
    size_t n1 = 0, n2 = 0;
    unsigned char *f1 = slurp(p1, &n1);
    for (size_t k = 0; f1 && k < sizeof keys / sizeof keys[0]; k++)
        CHECK(!memmem(f1, n1, keys[k], strlen(keys[k])), "a default model's file has the key '%s'", keys[k]);
    free(f1);
    tfm_model_free(a);
    a = NULL;
    CHECK(tfm_model_load(test_path(GOLDEN), &g) == TFM_OK, "load golden: %s", tfm_last_error());
    if (g) {
        const tfm_config *gc = tfm_model_config(g);
        CHECK(gc->embed_scale == 0.0f && gc->pe_offset == 0 && gc->no_final_norm == 0 && gc->decoder_start_id == -1 &&
                  gc->suppress == TFM_SUPPRESS_PAD_BOS && gc->lenpen_count_forced == 0 &&
                  gc->forced_eos == 0 &&
                  tfm_config_decoder_start(gc) == gc->bos_id,
              "a file written before the traits loads with their defaults");
    }
    tfm_model_free(g);

    /* each trait acts: the score moves away from the default's */
    const double base = score_cfg(&c);
    tfm_config t = c;
    t.embed_scale = sqrtf(32.0f);
    CHECK(score_cfg(&t) == base, "embed_scale √d_model is the default: %.9g vs %.9g", score_cfg(&t), base);
    t.embed_scale = 1.0f;
    CHECK(isfinite(score_cfg(&t)) && score_cfg(&t) != base, "embed_scale 1 changes the score");
    t = c;
    t.pe_offset = 2;
    CHECK(isfinite(score_cfg(&t)) && score_cfg(&t) != base, "pe_offset 2 changes the score");
    t = c;
    t.activation = TFM_ACT_SILU;
    CHECK(isfinite(score_cfg(&t)) && score_cfg(&t) != base, "SiLU changes the score");
    t = c;
    t.no_final_norm = 1;
    CHECK(tfm_config_param_count(&t) == tfm_config_param_count(&c) - 4 * 32, "no_final_norm drops two LayerNorms");
    CHECK(isfinite(score_cfg(&t)) && score_cfg(&t) != base, "no_final_norm changes the score");

    /* every trait set: save, load, the same configuration, score and file */
    t = c;
    t.embed_scale = 1.5f;
    t.pe_offset = 3;
    t.pe_layout = TFM_PE_LAYOUT_CONCAT;
    t.no_final_norm = 1;
    t.activation = TFM_ACT_SILU;
    t.decoder_start_id = t.pad_id;
    t.suppress = TFM_SUPPRESS_PAD;
    t.lenpen_count_forced = 1;
    t.forced_eos = 1;
    CHECK(tfm_model_create(&t, 5, &a) == TFM_OK && tfm_model_save(a, p1) == TFM_OK, "save traits: %s",
          tfm_last_error());
    CHECK(tfm_model_load(p1, &b) == TFM_OK, "load traits: %s", tfm_last_error());
    if (a && b) {
        const tfm_config *bc = tfm_model_config(b);
        CHECK(bc->embed_scale == 1.5f && bc->pe_offset == 3 && bc->no_final_norm == 1 &&
                  bc->activation == TFM_ACT_SILU && bc->decoder_start_id == t.pad_id &&
                  bc->suppress == TFM_SUPPRESS_PAD && bc->lenpen_count_forced == 1 && bc->forced_eos == 1 &&
                  tfm_config_decoder_start(bc) == t.pad_id,
              "the traits did not round-trip");
        CHECK(score_of(a) == score_of(b) && isfinite(score_of(a)), "reloaded traits score differently");
        CHECK(tfm_model_save(b, p2) == TFM_OK, "save again");
        f1 = slurp(p1, &n1);
        unsigned char *f2 = slurp(p2, &n2);
        CHECK(f1 && f2 && n1 == n2 && memcmp(f1, f2, n1) == 0, "save(load(save(m))) differs with traits");
        CHECK(f1 && !memmem(f1, n1, "transformer.encoder.norm.weight", 31), "no_final_norm file has a final norm");
        free(f1);
        free(f2);
    }
    tfm_model_free(a);
    tfm_model_free(b);
    t = c;
    t.lenpen_count_forced = 2;
    CHECK(tfm_config_validate(&t) == TFM_ERR_INVALID_ARG && strstr(tfm_last_error(), "lenpen_count_forced"),
          "lenpen_count_forced 2: %s", tfm_last_error());
    t = c;
    t.forced_eos = 2;
    CHECK(tfm_config_validate(&t) == TFM_ERR_INVALID_ARG && strstr(tfm_last_error(), "forced_eos"), "forced_eos 2: %s",
          tfm_last_error());
    t = c;
    t.decoder_start_id = 50;
    CHECK(tfm_config_validate(&t) == TFM_ERR_INVALID_ARG && strstr(tfm_last_error(), "decoder_start_id"),
          "decoder_start_id outside the vocabulary: %s", tfm_last_error());
    t = c;
    t.pe = TFM_PE_LEARNED;
    t.pe_offset = 2;
    CHECK(tfm_config_validate(&t) == TFM_ERR_INVALID_ARG && strstr(tfm_last_error(), "pe_offset"),
          "pe_offset on a learned table: %s", tfm_last_error());
    mutated("bad_suppress", "\"tie_embeddings\":\"0\"", "\"tie_embeddings\":\"0\",\"suppress\":\"eos\"",
            "suppressed ids 'eos' must be", TFM_ERR_FORMAT, 0);
}

int main(void) {
    if (!test_make_tmpdir(g_tmpdir, sizeof g_tmpdir, "ckpt")) return 2;
    malformed();
    round_trip();
    fresh_models();
    extra_tensors();
    family_traits();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_tmpdir);
    return test_finish("checkpoint");
}
