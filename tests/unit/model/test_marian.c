/* A Hugging Face Marian folder (tests/fixtures/marian, made by tests/reference/make_marian_golden.py
 * with transformers 4.40.2): the configuration it maps to, the tokenizer's ids on the fixture text
 * (language codes, unknown pieces) equal to MarianTokenizer's, the logits of a padded batch within
 * 1e-4 of MarianMTModel's, a save as a tfm checkpoint that loads back the same, and every bad
 * folder refused with a message naming the file and the tensor. Greedy and beam outputs are
 * tests/cli/test_marian_cli.sh. */
#include "golden_txt.h"
#include "model_internal.h"
#include "parts.h"
#include "safetensors.h"
#include "test_lines.h"
#include "test_st.h"
#include "test_util.h"
#include "tfm/decode.h"
#include "tfm/score.h"
#include "tfm/tokenizer.h"

#include <dirent.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#define DIR "tests/fixtures/marian"
static char g_tmp[512];
static const char *make_folder(const char *tag, const char *skip, char *dir, size_t n);
static void edit_file(const char *dir, const char *name, const char *from, const char *to);
static void expect_error(const char *label, const char *dir, tfm_status want, const char *needle1,
                         const char *needle2);

/* The fixture's model and tokenizer, or NULL. */
static tfm_model *load_fixture(tfm_tokenizer **tok) {
    tfm_model *m = NULL;
    CHECK(tfm_model_load(test_path(DIR), &m) == TFM_OK, "load %s: %s", DIR, tfm_last_error());
    if (!m) return NULL;
    size_t len = 0;
    const unsigned char *bytes = tfm_model_tokenizer(m, &len);
    CHECK(bytes && tfm_tokenizer_load_bytes(bytes, len, tok) == TFM_OK, "the model's tokenizer: %s", tfm_last_error());
    return m;
}

static void test_config(const tfm_model *m) {
    const tfm_config *c = tfm_model_config(m);
    CHECK(c->arch == TFM_ARCH_ENCODER_DECODER && c->d_model == 32 && c->n_heads == 4 && c->n_enc_layers == 2 &&
              c->n_dec_layers == 2 && c->d_ff == 64 && c->src_vocab == 182 && c->tgt_vocab == 182 && c->max_len == 64,
          "sizes from config.json");
    CHECK(c->norm_first == 0 && c->no_final_norm == 1 && c->activation == TFM_ACT_SILU && c->pe == TFM_PE_SINUSOIDAL &&
              c->pe_layout == TFM_PE_LAYOUT_CONCAT && c->pe_offset == 0 && c->embed_scale == 0.0f &&
              c->tie_embeddings == 1,
          "Marian's traits: post-LN, no final norms, SiLU, concat sinusoid from 0, √d_model, shared embeddings");
    CHECK(c->pad_id == 181 && c->eos_id == 0 && tfm_config_decoder_start(c) == 181 && c->suppress == TFM_SUPPRESS_PAD,
          "pad 181, EOS 0, the decoder starts from pad, pad suppressed");
}

/* Each line of dir/ref/tok_src.txt encodes to the ids of dir/ref/tok_ids.txt (MarianTokenizer's). */
static void test_tokenizer_lines(const tfm_tokenizer *tok, const char *dir) {
    char ps[700], pi[700];
    snprintf(ps, sizeof ps, "%s/ref/tok_src.txt", test_path(dir));
    snprintf(pi, sizeof pi, "%s/ref/tok_ids.txt", test_path(dir));
    FILE *fs = fopen(ps, "r"), *fi = fopen(pi, "r");
    CHECK(fs && fi, "open the tokenizer references");
    char line[1024], want[4096];
    int n = 0, same = 0;
    while (fs && fi && fgets(line, sizeof line, fs) && fgets(want, sizeof want, fi)) {
        line[strcspn(line, "\n")] = '\0';
        int32_t *ids = NULL;
        size_t k = 0;
        char got[4096] = "";
        if (tfm_tokenizer_encode(tok, line, strlen(line), &ids, &k) == TFM_OK) {
            size_t at = 0;
            for (size_t i = 0; i < k && at < sizeof got - 16; i++)
                at += (size_t)snprintf(got + at, sizeof got - at, "%s%d", i ? " " : "", (int)ids[i]);
        }
        free(ids);
        want[strcspn(want, "\n")] = '\0';
        n++;
        same += strcmp(got, want) == 0;
        CHECK(strcmp(got, want) == 0, "'%s': ids [%s], transformers [%s]", line, got, want);
    }
    if (fs) fclose(fs);
    if (fi) fclose(fi);
    CHECK(n >= 20, "only %d tokenizer lines", n);
    printf("tokenizer (%s): %d/%d lines equal to MarianTokenizer\n", dir, same, n);
}

static void test_tokenizer(const tfm_tokenizer *tok) {
    test_tokenizer_lines(tok, DIR);
    CHECK(tfm_tokenizer_bos_id(tok) == -1 && tfm_tokenizer_eos_id(tok) == 0 && tfm_tokenizer_pad_id(tok) == 181 &&
              tfm_tokenizer_unk_id(tok) == 1 && tfm_tokenizer_piece_to_id(tok, ">>fr<<") == 3 &&
              strcmp(tfm_tokenizer_id_to_piece(tok, 2), ">>es<<") == 0 && tfm_tokenizer_vocab_size(tok) == 182,
          "special ids and pieces from vocab.json");
    /* decode skips </s>, <pad> and <unk>, and cleans up the space before "." ("the ." → "the."),
     * as transformers' clean_up_tokenization does */
    const int32_t ids[] = {181, tfm_tokenizer_piece_to_id(tok, "▁the"), tfm_tokenizer_piece_to_id(tok, "▁"), 1,
                           tfm_tokenizer_piece_to_id(tok, "."), 0};
    CHECK(ids[2] != 1, "the fixture has the piece ▁");
    char *text = NULL;
    size_t len = 0;
    CHECK(tfm_tokenizer_decode(tok, ids, 6, &text, &len) == TFM_OK && text && strcmp(text, "the.") == 0,
          "decode: '%s'", text ? text : tfm_last_error());
    free(text);
}

/* The logits of ref/logits.txt's padded batch through tfm_model_score, at every position whose
 * decoder input is not padding (transformers' decoder attends to padding keys tfm masks, so
 * only those positions are defined the same). */
static void test_logits(const tfm_model *m, const char *dir, double tol, const char *label) {
    char ref[700];
    snprintf(ref, sizeof ref, "%s/ref/logits.txt", test_path(dir));
    float shape[4];
    if (!golden_txt_read(ref, "shape", shape, 4)) {
        CHECK(0, "read %s", ref);
        return;
    }
    const int B = (int)shape[0], S = (int)shape[1], T = (int)shape[2], V = (int)shape[3];
    float *srcf = malloc((size_t)B * S * sizeof *srcf), *tgtf = malloc((size_t)B * T * sizeof *tgtf);
    float *want = malloc((size_t)B * T * V * sizeof *want), *got = malloc((size_t)B * T * V * sizeof *got);
    int32_t *src = malloc((size_t)B * S * sizeof *src), *tgt = malloc((size_t)B * (T + 1) * sizeof *tgt);
    CHECK(golden_txt_read(ref, "src", srcf, (size_t)B * S) && golden_txt_read(ref, "tgt", tgtf, (size_t)B * T) &&
              golden_txt_read(ref, "logits", want, (size_t)B * T * V),
          "read the batch");
    const int pad = tfm_model_config(m)->pad_id;
    for (int i = 0; i < B * S; i++) src[i] = (int32_t)srcf[i];
    for (int b = 0; b < B; b++) { /* whole rows: the decoder input, then one more (never an input) */
        for (int t = 0; t < T; t++) tgt[b * (T + 1) + t] = (int32_t)tgtf[b * T + t];
        tgt[b * (T + 1) + T] = pad;
    }
    tfm_context *ctx = NULL;
    CHECK(tfm_context_create(m, &ctx) == TFM_OK &&
              tfm_model_score(ctx, B, S, T + 1, src, tgt, NULL, NULL, got) == TFM_OK,
          "score: %s", tfm_last_error());
    double worst = 0.0;
    size_t compared = 0;
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            if (t > 0 && tgt[b * (T + 1) + t] == pad) continue;
            for (int v = 0; v < V; v++) {
                const size_t i = ((size_t)b * T + t) * V + v;
                worst = fmax(worst, fabs((double)got[i] - want[i]));
                compared++;
            }
        }
    CHECK(worst <= tol && compared > (size_t)V * B * 2, "%s logits vs MarianMTModel: max |diff| %.3g over %zu (tol %g)",
          label, worst, compared, tol);
    printf("%s logits: max |diff| %.3g over %zu values\n", label, worst, compared);
    tfm_context_free(ctx);
    free(srcf), free(tgtf), free(want), free(got), free(src), free(tgt);
}

/* Saved as a tfm checkpoint, the model loads back with the same configuration, tokenizer and
 * logits. */
static void test_round_trip(const tfm_model *m) {
    char path[600];
    snprintf(path, sizeof path, "%s/marian.safetensors", g_tmp);
    tfm_model *r = NULL;
    CHECK(tfm_model_save(m, path) == TFM_OK && tfm_model_load(path, &r) == TFM_OK, "save and load: %s",
          tfm_last_error());
    if (!r) return;
    CHECK(memcmp(tfm_model_config(m), tfm_model_config(r), sizeof(tfm_config)) == 0, "the configuration round-trips");
    size_t la, lb;
    const unsigned char *ta = tfm_model_tokenizer(m, &la), *tb = tfm_model_tokenizer(r, &lb);
    CHECK(ta && tb && la == lb && memcmp(ta, tb, la) == 0, "the tokenizer round-trips");
    int32_t src[4] = {2, 40, 41, 0}, tgt[4] = {181, 40, 41, 0};
    float la_[3 * 182], lb_[3 * 182];
    tfm_context *ca = NULL, *cb = NULL;
    CHECK(tfm_context_create(m, &ca) == TFM_OK && tfm_context_create(r, &cb) == TFM_OK &&
              tfm_model_score(ca, 1, 4, 4, src, tgt, NULL, NULL, la_) == TFM_OK &&
              tfm_model_score(cb, 1, 4, 4, src, tgt, NULL, NULL, lb_) == TFM_OK && memcmp(la_, lb_, sizeof la_) == 0,
          "the reloaded checkpoint computes the same logits");
    tfm_context_free(ca);
    tfm_context_free(cb);
    tfm_model_free(r);
}

/* Pad is never generated (suppress = pad): with its logit raised far above every other, greedy
 * and beam search still output none; the decoder starts from the pad id and stops at EOS. */
static void test_pad_suppressed(tfm_model *m) {
    const int pad = tfm_model_config(m)->pad_id;
    float *bias = m->p.generator_bias;
    const float keep = bias[pad];
    bias[pad] = 1e4f;
    int32_t src[4] = {2, 40, 41, 0}, out[2 * 8];
    int out_len[2] = {0, 0};
    tfm_context *ctx = NULL;
    tfm_decode_config dc = tfm_decode_config_default();
    dc.max_len_a = 0.0f;
    dc.max_len_b = 8;
    int pads = 0;
    CHECK(tfm_context_create(m, &ctx) == TFM_OK, "context");
    for (int beam = 1; ctx && beam <= 4; beam += 3) {
        dc.beam = beam;
        CHECK(tfm_model_translate(ctx, &dc, 1, 4, src, out, 8, out_len) == TFM_OK, "translate: %s", tfm_last_error());
        for (int i = 0; i < out_len[0]; i++) pads += out[i] == pad;
        CHECK(out_len[0] > 0, "beam %d: an output", beam);
    }
    CHECK(pads == 0, "pad generated %d times", pads);
    tfm_context_free(ctx);
    bias[pad] = keep;
}

/* ---- the length limit (forced_eos) ---------------------------------------------------------- */

/* ref/limit.tsv (make_marian_golden.py --limit): generate(num_beams=1|4, max_length=L) with
 * config.json's forced_eos_token_id, mostly on sentences that reach the limit. tfm with
 * --max-len-a 0 --max-len-b L-1 gives transformers' ids (EOS forced as the last allowed token, log
 * p 0: cfg->forced_eos, set by the Marian format), on the KV cache and recomputing; without the
 * trait some of them differ (the test can fail). Returns how many cases differ. */
static int limit_cases(tfm_model *m, const tfm_tokenizer *tok, int report) {
    enum { MAXO = 64 };
    test_lines cases;
    CHECK(test_lines_read(test_path(DIR "/ref/limit.tsv"), &cases) && cases.n >= 32, "ref/limit.tsv");
    tfm_context *ctx = NULL;
    CHECK(tfm_context_create(m, &ctx) == TFM_OK, "context: %s", tfm_last_error());
    int differ = 0, at_limit = 0;
    for (size_t i = 0; ctx && i < cases.n; i++) {
        char *f[4] = {cases.text[i], NULL, NULL, NULL};
        for (int k = 1; k < 4 && f[k - 1]; k++)
            if ((f[k] = strchr(f[k - 1], '\t')) != NULL) *f[k]++ = '\0';
        CHECK(f[3] != NULL, "limit.tsv line %zu: 4 tab-separated fields", i + 1);
        if (!f[3]) continue;
        int32_t want[MAXO], out[MAXO], *src = NULL;
        size_t nw = test_parse_ids(f[3], want, MAXO), ns = 0;
        const int L = atoi(f[1]);
        at_limit += (int)nw == L - 1;
        if (nw > 0 && want[nw - 1] == m->cfg.eos_id) nw--; /* tfm's output has no EOS */
        CHECK(tfm_tokenizer_encode(tok, f[2], strlen(f[2]), &src, &ns) == TFM_OK, "encode line %zu", i + 1);
        tfm_decode_config dc = tfm_decode_config_default();
        dc.beam = atoi(f[0]);
        dc.max_len_a = 0.0f;
        dc.max_len_b = L - 1; /* transformers' max_length counts the start token */
        for (int cache = 1; src && cache >= 0; cache--) {
            dc.use_cache = cache;
            int len = -1;
            CHECK(tfm_model_translate(ctx, &dc, 1, (int)ns, src, out, MAXO, &len) == TFM_OK, "translate: %s",
                  tfm_last_error());
            int same = len == (int)nw;
            for (size_t k = 0; same && k < nw; k++) same = out[k] == want[k];
            differ += !same;
            if (report)
                CHECK(same, "limit.tsv line %zu (beam %s, max_length %d, cache %d): %d ids, transformers %zu", i + 1,
                      f[0], L, cache, len, nw);
        }
        free(src);
    }
    if (report) CHECK(at_limit >= (int)cases.n / 2, "only %d of %zu cases reach the limit", at_limit, cases.n);
    tfm_context_free(ctx);
    test_lines_free(&cases);
    return differ;
}

/* Which file sets forced_eos: config.json while generation_config.json only copies it
 * ("_from_model_config": true, the fixture's); a generation_config.json of its own decides (one
 * without forced_eos_token_id: none forced); an id other than EOS is refused. A list (transformers
 * allows an int or a list): [0] is EOS forced; two ids are refused naming the file and key. */
static void test_forced_eos_files(void) {
    char d[600], gen[700];
    tfm_model *m = NULL;
    make_folder("feos-gen", NULL, d, sizeof d);
    snprintf(gen, sizeof gen, "%s/generation_config.json", d);
    FILE *f = fopen(gen, "w");
    if (f) fputs("{\"decoder_start_token_id\": 181, \"eos_token_id\": 0, \"max_length\": 48}\n", f), fclose(f);
    CHECK(tfm_model_load(d, &m) == TFM_OK && m->cfg.forced_eos == 0,
          "generation_config.json of its own without forced_eos_token_id: forced_eos %d (%s)",
          m ? m->cfg.forced_eos : -1, tfm_last_error());
    tfm_model_free(m);
    edit_file(make_folder("feos-id", NULL, d, sizeof d), "config.json", "\"forced_eos_token_id\": 0",
              "\"forced_eos_token_id\": 5");
    expect_error("forced_eos_token_id not EOS", d, TFM_ERR_UNSUPPORTED, "config.json: forced_eos_token_id 5 is not",
                 "eos_token_id 0");
    edit_file(make_folder("feos-list1", NULL, d, sizeof d), "config.json", "\"forced_eos_token_id\": 0",
              "\"forced_eos_token_id\": [0]");
    m = NULL;
    CHECK(tfm_model_load(d, &m) == TFM_OK && m->cfg.forced_eos == 1, "forced_eos_token_id [0]: forced_eos %d (%s)",
          m ? m->cfg.forced_eos : -1, tfm_last_error());
    tfm_model_free(m);
    edit_file(make_folder("feos-list2", NULL, d, sizeof d), "config.json", "\"forced_eos_token_id\": 0",
              "\"forced_eos_token_id\": [0, 5]");
    expect_error("forced_eos_token_id [0, 5]", d, TFM_ERR_UNSUPPORTED, "config.json: 'forced_eos_token_id' lists 2 ids",
                 NULL);
}

static void test_length_limit(tfm_model *m, const tfm_tokenizer *tok) {
    CHECK(m->cfg.forced_eos == 1, "config.json's forced_eos_token_id 0 sets forced_eos");
    limit_cases(m, tok, 1);
    m->cfg.forced_eos = 0; /* the mutation: EOS with its own log p after L - 1 tokens */
    const int differ = limit_cases(m, tok, 0);
    CHECK(differ > 0, "without forced_eos every limit case still equals transformers'");
    printf("length limit: without forced_eos %d of the cases (x2: cache, no cache) differ\n", differ);
    m->cfg.forced_eos = 1;
}

/* ---- float16 weights -------------------------------------------------------------------------- */

/* float → IEEE binary16, round to nearest even (|x| < 65504; the test's own conversion, written
 * apart from the loader's widening so that each checks the other). */
static uint16_t f32_to_f16(float x) {
    const uint16_t sign = signbit(x) ? 0x8000u : 0u;
    const float a = fabsf(x);
    if (a < ldexpf(1.0f, -14)) return (uint16_t)(sign | (uint16_t)lrintf(ldexpf(a, 24))); /* subnormal: m · 2^−24 */
    int e;
    long m = lrintf(ldexpf(frexpf(a, &e), 11)); /* a = m · 2^(e−11), m in [1024, 2048] */
    if (m == 2048) m = 1024, e++;
    return (uint16_t)(sign | (uint16_t)((e + 14) << 10) | (uint16_t)(m - 1024));
}

/* A copy of the fixture folder at g_tmp/f16 whose model.safetensors holds every tensor as F16 (as
 * save_pretrained writes a model.half()). */
static const char *make_f16_folder(char *dir, size_t n) {
    make_folder("f16", NULL, dir, n);
    char path[700];
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    st_file f;
    if (st_open(test_path(DIR "/model.safetensors"), &f) != TFM_OK) {
        CHECK(0, "open the fixture: %s", tfm_last_error());
        return dir;
    }
    st_out_tensor *out = calloc(f.n_tensors, sizeof *out);
    uint16_t **data = calloc(f.n_tensors, sizeof *data);
    for (size_t i = 0; i < f.n_tensors; i++) {
        const st_tensor *t = &f.tensors[i];
        const size_t numel = (t->end - t->begin) / 4;
        float *x = malloc(numel * sizeof *x);
        data[i] = malloc(numel * sizeof *data[i]);
        CHECK(strcmp(t->dtype, "F32") == 0 && st_read(&f, t, x) == TFM_OK, "read %s", t->name);
        for (size_t k = 0; k < numel; k++) data[i][k] = f32_to_f16(x[k]);
        free(x);
        out[i] = (st_out_tensor){t->name, "F16", t->ndim, {t->shape[0], t->ndim > 1 ? t->shape[1] : 0}, data[i],
                                 numel * sizeof(uint16_t)};
    }
    CHECK(st_write(path, NULL, 0, out, f.n_tensors) == TFM_OK, "write %s: %s", path, tfm_last_error());
    for (size_t i = 0; i < f.n_tensors; i++) free(data[i]);
    free(data);
    free(out);
    st_close(&f);
    return dir;
}

/* 1 if x is a binary16 value (|x| < 65504): a multiple of 2^−24 below 2^−14 (subnormal), else at
 * most 11 significant bits. */
static int is_half(float x) {
    const float a = fabsf(x);
    int e;
    const float m = a < ldexpf(1.0f, -14) ? ldexpf(a, 24) : ldexpf(frexpf(a, &e), 11);
    return m == floorf(m);
}

/* n loaded floats are exactly the halves of tensor `name` of the F16 file f, widened: each is a
 * binary16 value that converts back to its half bit for bit (so it is that half, exactly) and lies
 * within half a unit in the last place of the F32 original. */
static void check_widened(const st_file *f16, const st_file *f32, const char *name, const float *got, size_t n) {
    const st_tensor *th = st_find(f16, name), *tf = st_find(f32, name);
    if (!th || !tf || th->end - th->begin != n * 2) {
        CHECK(0, "%s: %zu values in both files", name, n);
        return;
    }
    uint16_t *h = malloc(n * sizeof *h);
    float *x = malloc(n * sizeof *x);
    size_t bad = 0;
    if (st_read(f16, th, h) == TFM_OK && st_read(f32, tf, x) == TFM_OK)
        for (size_t i = 0; i < n; i++)
            bad += !is_half(got[i]) || f32_to_f16(got[i]) != h[i] ||
                   fabsf(got[i] - x[i]) > ldexpf(fmaxf(fabsf(x[i]), ldexpf(1, -14)), -11);
    CHECK(bad == 0, "%s: %zu of %zu values are not the F16 values widened", name, bad, n);
    free(h), free(x);
}

/* A Marian folder saved in float16 loads (hf_read_tensor widens F16 exactly): the weights are the
 * halves widened, and the logits stay within what F16 weights allow of the F32 references. */
static void test_f16(void) {
    char d[600], path[700];
    make_f16_folder(d, sizeof d);
    tfm_model *m = NULL;
    CHECK(tfm_model_load(d, &m) == TFM_OK, "load the F16 folder: %s", tfm_last_error());
    if (!m) return;
    snprintf(path, sizeof path, "%s/model.safetensors", d);
    st_file fh, ff;
    if (st_open(path, &fh) == TFM_OK && st_open(test_path(DIR "/model.safetensors"), &ff) == TFM_OK) {
        const tfm_config *c = tfm_model_config(m);
        const size_t dm = (size_t)c->d_model, V = (size_t)c->tgt_vocab;
        check_widened(&fh, &ff, "model.shared.weight", m->p.stack[0].embed, V * dm);
        check_widened(&fh, &ff, "final_logits_bias", m->p.generator_bias, V);
        check_widened(&fh, &ff, "model.encoder.layers.0.fc1.weight", m->p.stack[0].layers[0].linear1_weight,
                      (size_t)c->d_ff * dm);
        check_widened(&fh, &ff, "model.decoder.layers.1.encoder_attn.k_proj.weight",
                      m->p.stack[1].layers[1].cross_attn.in_proj_weight + dm * dm, dm * dm);
        st_close(&fh), st_close(&ff);
    } else {
        CHECK(0, "open the F16 and F32 files: %s", tfm_last_error());
    }
    /* Weights rounded to 11 significant bits (relative error ≤ 2^−11 ≈ 4.9e-4 each) move this
     * small model's logits (|logit| ≲ 10) by a few 1e-3: 2e-2 allows that, not a wrong tensor. */
    test_logits(m, DIR, 2e-2, "F16");
    tfm_model_free(m);
}

/* ---- separate embeddings ----------------------------------------------------------------------- */

/* The fixture saved as share_encoder_decoder_embeddings false would be: model.shared.weight gone,
 * model.encoder.embed_tokens.weight and model.decoder.embed_tokens.weight (lm_head tied to the
 * latter) in its place. The matrices hold the fixture's values, so the logits must be the tied
 * model's bit for bit; the model keeps three matrices (tie_embeddings 0), the generator the
 * decoder's. */
static void test_untied(const tfm_model *tied) {
    char d[600], path[700];
    make_folder("untied", NULL, d, sizeof d);
    edit_file(d, "config.json", "\"share_encoder_decoder_embeddings\": true",
              "\"share_encoder_decoder_embeddings\": false");
    snprintf(path, sizeof path, "%s/model.safetensors", d);
    st_file f;
    if (st_open(test_path(DIR "/model.safetensors"), &f) != TFM_OK) {
        CHECK(0, "open the fixture: %s", tfm_last_error());
        return;
    }
    st_out_tensor *out = calloc(f.n_tensors + 1, sizeof *out);
    void **data = calloc(f.n_tensors, sizeof *data);
    size_t n = 0;
    for (size_t i = 0; i < f.n_tensors; i++) {
        const st_tensor *t = &f.tensors[i];
        data[i] = malloc(t->end - t->begin);
        st_read(&f, t, data[i]);
        out[n++] = (st_out_tensor){t->name, t->dtype, t->ndim, {t->shape[0], t->ndim > 1 ? t->shape[1] : 0}, data[i],
                                   t->end - t->begin};
        if (strcmp(t->name, "model.shared.weight") == 0) {
            out[n - 1].name = "model.encoder.embed_tokens.weight";
            out[n] = out[n - 1];
            out[n++].name = "model.decoder.embed_tokens.weight";
        }
    }
    CHECK(n == f.n_tensors + 1 && st_write(path, NULL, 0, out, n) == TFM_OK, "write %s: %s", path, tfm_last_error());
    for (size_t i = 0; i < f.n_tensors; i++) free(data[i]);
    free(data), free(out);
    st_close(&f);
    tfm_model *m = NULL;
    CHECK(tfm_model_load(d, &m) == TFM_OK, "load the untied folder: %s", tfm_last_error());
    if (!m) return;
    const tfm_config *c = tfm_model_config(m);
    const size_t V = (size_t)c->tgt_vocab, dm = (size_t)c->d_model;
    CHECK(!c->tie_embeddings && m->p.stack[0].embed != m->p.stack[1].embed &&
              m->p.generator_weight != m->p.stack[1].embed &&
              memcmp(m->p.generator_weight, m->p.stack[1].embed, V * dm * sizeof(float)) == 0,
          "three matrices, the generator the decoder's embedding");
    int32_t src[4] = {2, 40, 41, 0}, tgt[4] = {181, 40, 41, 0};
    float la[3 * 182], lb[3 * 182];
    tfm_context *ca = NULL, *cb = NULL;
    CHECK(V == 182 && tfm_context_create(tied, &ca) == TFM_OK && tfm_context_create(m, &cb) == TFM_OK &&
              tfm_model_score(ca, 1, 4, 4, src, tgt, NULL, NULL, la) == TFM_OK &&
              tfm_model_score(cb, 1, 4, 4, src, tgt, NULL, NULL, lb) == TFM_OK && memcmp(la, lb, sizeof la) == 0,
          "the untied folder computes the tied fixture's logits");
    tfm_context_free(ca), tfm_context_free(cb);
    tfm_model_free(m);
}

/* ---- separate vocabularies (tests/fixtures/marian_sep) ------------------------------------------ */

/* make_marian_golden.py --separate: share_encoder_decoder_embeddings false, vocab.json 182 source
 * ids, target_vocab.json 140 target ids, lm_head untied. The configuration, MarianTokenizer's source
 * ids, the logits (V = 140) within 1e-4, and the tokenizer fitting the model side by side. */
static void test_separate(void) {
    const char *dir = "tests/fixtures/marian_sep";
    tfm_model *m = NULL;
    CHECK(tfm_model_load(test_path(dir), &m) == TFM_OK, "load %s: %s", dir, tfm_last_error());
    if (!m) return;
    const tfm_config *c = tfm_model_config(m);
    CHECK(c->src_vocab == 182 && c->tgt_vocab == 140 && c->tie_embeddings == 0 && c->pad_id == 2 && c->eos_id == 0 &&
              tfm_config_decoder_start(c) == 2,
          "separate vocabularies: src_vocab %d, tgt_vocab %d, tie %d, pad %d", c->src_vocab, c->tgt_vocab,
          c->tie_embeddings, c->pad_id);
    size_t len = 0;
    const unsigned char *bytes = tfm_model_tokenizer(m, &len);
    tfm_tokenizer *tok = NULL;
    CHECK(bytes && tfm_tokenizer_load_bytes(bytes, len, &tok) == TFM_OK, "the model's tokenizer: %s", tfm_last_error());
    if (tok) {
        test_tokenizer_lines(tok, dir);
        CHECK(tfm_tokenizer_check_model(tok, c) == TFM_OK, "182 source and 140 target ids fit: %s", tfm_last_error());
        tfm_config other = *c;
        other.tgt_vocab = 182;
        CHECK(tfm_tokenizer_check_model(tok, &other) != TFM_OK && strstr(tfm_last_error(), "140 target pieces"),
              "a model of 182 target ids does not fit: %s", tfm_last_error());
    }
    test_logits(m, dir, 1e-4, "separate");
    tfm_tokenizer_free(tok);
    tfm_model_free(m);
}

/* ---- bad folders ------------------------------------------------------------------------------ */

/* A fresh copy of the fixture folder `fixture` (its files, not ref/) at g_tmp/<tag>, without the
 * file `skip` (NULL: all). */
static const char *copy_fixture(const char *fixture, const char *tag, const char *skip, char *dir, size_t n) {
    snprintf(dir, n, "%s/%s", g_tmp, tag);
    CHECK(test_copy_dir(test_path(fixture), dir, skip), "copy %s to %s", fixture, dir);
    return dir;
}

/* A fresh copy of tests/fixtures/marian at g_tmp/<tag>, without the file `skip` (NULL: all). */
static const char *make_folder(const char *tag, const char *skip, char *dir, size_t n) {
    return copy_fixture(DIR, tag, skip, dir, n);
}

/* Replaces `from` by `to` (first occurrence) in dir/name. */
static void edit_file(const char *dir, const char *name, const char *from, const char *to) {
    char path[700];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    CHECK(test_edit_file(path, from, to), "'%s' not in %s", from, name);
}

/* Rewrites dir/model.safetensors without tensor `drop`, and with tensor `reshape` (if any) given
 * the shape [rows, cols] (same bytes). */
static void edit_tensors(const char *dir, const char *drop, const char *reshape, uint64_t rows, uint64_t cols) {
    char path[700];
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    CHECK(test_st_rewrite(test_path(DIR "/model.safetensors"), path, drop, reshape, rows, cols), "rewrite %s: %s", path,
          tfm_last_error());
}

static void expect_error(const char *label, const char *dir, tfm_status want, const char *needle1,
                         const char *needle2) {
    tfm_model *m = NULL;
    tfm_status st = tfm_model_load(dir, &m);
    CHECK(st == want && !m && strstr(tfm_last_error(), needle1) && (!needle2 || strstr(tfm_last_error(), needle2)),
          "%s: status %d, message '%s' (want %d, '%s'%s%s)", label, (int)st, tfm_last_error(), (int)want, needle1,
          needle2 ? ", " : "", needle2 ? needle2 : "");
    tfm_model_free(m);
}

static void test_bad_folders(void) {
    char d[600];
    expect_error("no source.spm", make_folder("nospm", "source.spm", d, sizeof d), TFM_ERR_IO, "source.spm",
                 "cannot open");
    expect_error("no vocab.json", make_folder("novocab", "vocab.json", d, sizeof d), TFM_ERR_IO, "vocab.json", NULL);
    expect_error("no config.json", make_folder("nocfg", "config.json", d, sizeof d), TFM_ERR_IO, "no config.json",
                 NULL);
    make_folder("bin", "model.safetensors", d, sizeof d);
    char bin[700];
    snprintf(bin, sizeof bin, "%s/pytorch_model.bin", d);
    FILE *f = fopen(bin, "wb");
    if (f) fputs("PK\003\004 not read", f), fclose(f);
    expect_error("pytorch_model.bin only", d, TFM_ERR_UNSUPPORTED, "AutoModelForSeq2SeqLM",
                 "save_pretrained('");
    make_folder("nobin", "model.safetensors", d, sizeof d);
    expect_error("no weights", d, TFM_ERR_IO, "no model.safetensors", NULL);
    edit_file(make_folder("type", NULL, d, sizeof d), "config.json", "\"marian\"", "\"mbart\"");
    expect_error("unknown model_type", d, TFM_ERR_UNSUPPORTED, "model_type 'mbart' is not supported", "'marian'");
    edit_file(make_folder("act", NULL, d, sizeof d), "config.json", "\"swish\"", "\"tanh\"");
    expect_error("unknown activation", d, TFM_ERR_UNSUPPORTED, "activation_function 'tanh'", "config.json");
    edit_file(make_folder("vocab", NULL, d, sizeof d), "config.json", "\"vocab_size\": 182", "\"vocab_size\": 183");
    expect_error("vocab_size disagrees", d, TFM_ERR_FORMAT, "model.shared.weight", "expected [183, 32]");
    edit_file(make_folder("vjson", NULL, d, sizeof d), "vocab.json", "\"<pad>\": 181", "\"<pad>\": 181, \"extra\": 182");
    expect_error("vocab.json disagrees", d, TFM_ERR_FORMAT, "vocab.json: 183 pieces", "vocab_size is 182");
    edit_tensors(make_folder("missing", NULL, d, sizeof d), "model.decoder.layers.1.fc2.weight", NULL, 0, 0);
    expect_error("missing tensor", d, TFM_ERR_FORMAT, "tensor 'model.decoder.layers.1.fc2.weight' is missing",
                 "model.safetensors");
    edit_tensors(make_folder("shape", NULL, d, sizeof d), NULL, "model.encoder.layers.0.fc1.weight", 32, 64);
    expect_error("misshaped tensor", d, TFM_ERR_FORMAT, "tensor 'model.encoder.layers.0.fc1.weight' has shape [32, 64]",
                 "expected [64, 32]");
    edit_file(make_folder("layers", NULL, d, sizeof d), "config.json", "\"encoder_layers\": 2", "\"encoder_layers\": 1");
    expect_error("a layer beyond config.json", d, TFM_ERR_FORMAT, "unexpected tensor 'model.encoder.layers.1.", NULL);
    edit_file(make_folder("ffn", NULL, d, sizeof d), "config.json", "\"decoder_ffn_dim\": 64",
              "\"decoder_ffn_dim\": 48");
    expect_error("encoder and decoder FFN widths differ", d, TFM_ERR_UNSUPPORTED,
                 "config.json: 'encoder_ffn_dim' (64) differs from 'decoder_ffn_dim' (48)", NULL);
}

/* tokenizer_config.json's separate_vocabs decides, as in transformers' MarianTokenizer; where it and
 * the files disagree the folder is refused, naming both. */
static void test_separate_vocabs_flag(void) {
    const char *sep = "tests/fixtures/marian_sep";
    char d[600];
    copy_fixture(sep, "sep-noflag", NULL, d, sizeof d);
    edit_file(d, "tokenizer_config.json", "\"separate_vocabs\": true", "\"separate_vocabs\": false");
    expect_error("target_vocab.json without the flag", d, TFM_ERR_FORMAT, "target_vocab.json is there but",
                 "tokenizer_config.json does not set separate_vocabs true");
    copy_fixture(sep, "sep-notc", "tokenizer_config.json", d, sizeof d);
    expect_error("target_vocab.json, no tokenizer_config.json", d, TFM_ERR_FORMAT, "target_vocab.json is there but",
                 "there is no tokenizer_config.json");
    copy_fixture(sep, "sep-notv", "target_vocab.json", d, sizeof d);
    expect_error("the flag without target_vocab.json", d, TFM_ERR_IO, "tokenizer_config.json: separate_vocabs is true",
                 "target_vocab.json does not exist");
    edit_file(make_folder("flag-str", NULL, d, sizeof d), "tokenizer_config.json", "\"separate_vocabs\": false",
              "\"separate_vocabs\": \"no\"");
    expect_error("separate_vocabs not a boolean", d, TFM_ERR_FORMAT, "tokenizer_config.json: 'separate_vocabs'", NULL);
    /* agreeing flag and files load: the shared fixture without tokenizer_config.json (flag false),
     * and the shared fixture with its vocab.json also as target_vocab.json and the flag true (the
     * same ids either way: MarianTokenizer decodes with target_vocab.json then) */
    tfm_model *m = NULL;
    CHECK(tfm_model_load(make_folder("notc", "tokenizer_config.json", d, sizeof d), &m) == TFM_OK,
          "no tokenizer_config.json, no target_vocab.json: %s", tfm_last_error());
    tfm_model_free(m);
    m = NULL;
    make_folder("both", NULL, d, sizeof d);
    char from[700], to[700];
    snprintf(from, sizeof from, "%s/vocab.json", d);
    snprintf(to, sizeof to, "%s/target_vocab.json", d);
    CHECK(test_copy_file(from, to), "copy vocab.json");
    edit_file(d, "tokenizer_config.json", "\"separate_vocabs\": false", "\"separate_vocabs\": true");
    CHECK(tfm_model_load(d, &m) == TFM_OK, "separate_vocabs true with target_vocab.json: %s", tfm_last_error());
    size_t len = 0;
    const unsigned char *bytes = m ? tfm_model_tokenizer(m, &len) : NULL;
    const unsigned char *d0;
    size_t n0;
    CHECK(bytes && parts_find(bytes, len, PARTS_MAGIC_MARIAN, "target_vocab.json", &d0, &n0) == TFM_OK,
          "the flag true: target_vocab.json is attached");
    tfm_model_free(m);
}

int main(void) {
    if (!test_make_tmpdir(g_tmp, sizeof g_tmp, "marian")) return 2;
    tfm_tokenizer *tok = NULL;
    tfm_model *m = load_fixture(&tok);
    if (m && tok) {
        test_config(m);
        test_tokenizer(tok);
        test_logits(m, DIR, 1e-4, "F32");
        test_round_trip(m);
        test_pad_suppressed(m);
        test_length_limit(m, tok);
        test_untied(m);
    }
    tfm_tokenizer_free(tok);
    tfm_model_free(m);
    test_bad_folders();
    test_separate_vocabs_flag();
    test_forced_eos_files();
    test_f16();
    test_separate();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_tmp);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_tmp);
    return test_finish("marian");
}
