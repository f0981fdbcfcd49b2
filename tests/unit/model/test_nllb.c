/* An NLLB / M2M100 Hugging Face folder (src/model/io/fmt_hf_m2m100.c, docs/NLLB.md) against
 * transformers 4.40.2 (tests/reference/make_nllb_golden.py): the logits of a padded batch within
 * 1e-4 at every non-pad decoder position; greedy and beam-4 search with the target language code
 * forced first (spa_Latn, and fra_Latn, which the model never saw first) give transformers'
 * generate() ids and texts on every fixture sentence, one
 * sentence at a time and all in one batch, on the KV cache and recomputing; the model saved as a
 * tfm checkpoint keeps its traits and tokenizer and translates the same; the tokenizer it carries,
 * through the public API (tfm_tokenizer_set_langs, tfm_translate_text), gives transformers' texts;
 * a folder whose
 * config.json disagrees with its tensors' shapes is refused naming the tensor. */
#include "golden_f32.h"
#include "nllb_tok.h"
#include "test_lines.h"
#include "test_util.h"
#include "tfm/tfm.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FIX "tests/fixtures/nllb"
#define GOLD "tests/golden/nllb/"
#define TOL_LOGIT 1e-4

enum { MAXB = 8, MAXS = 64, MAXO = 64 };

/* rows of an ids file, padded with `pad` to (n, L) plus `extra` pad columns; lens[n] */
static int read_rows(const char *path, int32_t *dst, int *lens, int *n, int *L, int pad, int extra) {
    test_lines l;
    if (!test_lines_read(test_path(path), &l)) return 0;
    int32_t tmp[MAXB][MAXS];
    *n = (int)l.n;
    *L = 0;
    for (size_t i = 0; i < l.n && i < MAXB; i++) {
        lens[i] = (int)test_parse_ids(l.text[i], tmp[i], MAXS);
        if (lens[i] > *L) *L = lens[i];
    }
    *L += extra;
    for (int i = 0; i < *n; i++)
        for (int t = 0; t < *L; t++) dst[i * *L + t] = t < lens[i] ? tmp[i][t] : pad;
    test_lines_free(&l);
    return *n > 0 && *n <= MAXB;
}

static void check_logits(tfm_context *ctx, const tfm_config *c) {
    static int32_t src[MAXB * MAXS], tgt[MAXB * MAXS];
    int slen[MAXB], tlen[MAXB], B, S, B2, T;
    CHECK(read_rows(GOLD "src.ids", src, slen, &B, &S, c->pad_id, 0) &&
              read_rows(GOLD "dec.ids", tgt, tlen, &B2, &T, c->pad_id, 1) && B == B2,
          "src.ids / dec.ids");
    const size_t V = (size_t)c->tgt_vocab, n = (size_t)B * (size_t)(T - 1) * V;
    float *logits = malloc(n * sizeof *logits);
    size_t n_ref = 0;
    float *ref = read_f32(test_path(GOLD "logits.f32"), &n_ref);
    CHECK(ref && n_ref == n, "logits.f32 has %zu floats, want %zu", n_ref, n);
    CHECK(tfm_model_score(ctx, B, S, T, src, tgt, NULL, NULL, logits) == TFM_OK, "score: %s", tfm_last_error());
    if (ref && n_ref == n) {
        double worst = 0.0;
        for (int b = 0; b < B; b++)
            for (int t = 0; t < tlen[b]; t++) /* padded decoder positions are not compared */
                for (size_t v = 0; v < V; v++) {
                    const size_t i = ((size_t)b * (size_t)(T - 1) + (size_t)t) * V + v;
                    const double e = fabs((double)logits[i] - (double)ref[i]);
                    if (!(e <= worst)) worst = e;
                }
        CHECK(worst <= TOL_LOGIT, "max |logit - transformers| = %.3g > %g", worst, TOL_LOGIT);
        printf("nllb: max |logit - transformers| = %.3g\n", worst);
    }
    free(ref);
    free(logits);
}

/* Searches every sentence (alone, then all together) and compares ids and text with name.ids / .txt. */
static void check_search(tfm_context *ctx, const nllb_tok *tok, const tfm_config *c, int beam, const char *lang,
                         const char *name) {
    char p[256];
    test_lines sent, want_ids, want_txt;
    snprintf(p, sizeof p, GOLD "%s.ids", name);
    CHECK(test_lines_read(test_path(GOLD "sentences.txt"), &sent) && test_lines_read(test_path(p), &want_ids), "%s", p);
    snprintf(p, sizeof p, GOLD "%s.txt", name);
    CHECK(test_lines_read(test_path(p), &want_txt) && want_txt.n == sent.n && want_ids.n == sent.n, "%s", p);
    const int B = (int)sent.n;
    static int32_t src[MAXB * MAXS], out[MAXB * MAXO];
    int32_t *ids[MAXB];
    size_t n_ids[MAXB];
    int S = 0, len[MAXB];
    for (int b = 0; b < B && b < MAXB; b++) {
        CHECK(nllb_tok_encode(tok, sent.text[b], sent.len[b], &ids[b], &n_ids[b]) == TFM_OK, "encode");
        if ((int)n_ids[b] > S) S = (int)n_ids[b];
    }
    tfm_decode_config dc = tfm_decode_config_default();
    dc.beam = beam;
    dc.lenpen = 1.0f;
    dc.max_len_a = 0.0f;
    dc.max_len_b = 60; /* past transformers' max_new_tokens 48: every fixture output ended before */
    dc.force_first = 1;
    dc.first_id = nllb_tok_lang_id(tok, lang);
    for (int cache = 1; cache >= 0; cache--) {
        dc.use_cache = cache;
        for (int batched = 0; batched <= 1; batched++) {
            const int rows = batched ? B : 1;
            for (int b0 = 0; b0 < B; b0 += rows) {
                const int L = batched ? S : (int)n_ids[b0];
                for (int r = 0; r < rows; r++)
                    for (int t = 0; t < L; t++) src[r * L + t] = t < (int)n_ids[b0 + r] ? ids[b0 + r][t] : c->pad_id;
                CHECK(tfm_model_translate(ctx, &dc, rows, L, src, out, MAXO, len) == TFM_OK, "translate: %s",
                      tfm_last_error());
                for (int r = 0; r < rows; r++) {
                    const int i = b0 + r;
                    int32_t want[MAXO];
                    const size_t nw = test_parse_ids(want_ids.text[i], want, MAXO);
                    int same = len[r] == (int)nw + 1 && out[r * MAXO] == dc.first_id;
                    for (size_t k = 0; same && k < nw; k++) same = out[r * MAXO + 1 + (int)k] == want[k];
                    CHECK(same, "%s (cache %d, batch %d) sentence %d: %d ids, not transformers' %zu", name, cache, rows,
                          i + 1, len[r] - 1, nw);
                    char *text = NULL;
                    size_t tl = 0;
                    CHECK(nllb_tok_decode(tok, out + r * MAXO, (size_t)len[r], &text, &tl) == TFM_OK && text &&
                              strcmp(text, want_txt.text[i]) == 0,
                          "%s sentence %d: '%s', want '%s'", name, i + 1, text ? text : "", want_txt.text[i]);
                    free(text);
                }
            }
        }
    }
    for (int b = 0; b < B && b < MAXB; b++) free(ids[b]);
    test_lines_free(&sent);
    test_lines_free(&want_ids);
    test_lines_free(&want_txt);
}

/* golden/nllb/lenpen.tsv (make_lenpen_golden.py): beam 4 at length_penalty 0.6, 1.0, 2.0 on
 * sentences where transformers' length (generated_len: the forced code, the tokens and EOS) and
 * fairseq's (the code not counted) rank differently: tfm gives transformers' ids, on the KV cache
 * and recomputing (cfg->lenpen_count_forced, set by the M2M100 format). */
static void check_lenpen(tfm_context *ctx, const nllb_tok *tok, const tfm_config *c) {
    enum { LS = 256 };
    test_lines cases;
    CHECK(test_lines_read(test_path(GOLD "lenpen.tsv"), &cases) && cases.n >= 3, "lenpen.tsv");
    CHECK(c->lenpen_count_forced == 1, "the M2M100 format sets lenpen_count_forced");
    for (size_t i = 0; i < cases.n; i++) {
        char *f[4] = {cases.text[i], NULL, NULL, NULL};
        for (int k = 1; k < 4 && f[k - 1]; k++)
            if ((f[k] = strchr(f[k - 1], '\t')) != NULL) *f[k]++ = '\0';
        CHECK(f[3] != NULL, "lenpen.tsv line %zu: 4 tab-separated fields", i + 1);
        if (!f[3]) continue;
        char *other = strchr(f[3], '\t'); /* the other rule's ids: for the reader */
        if (other) *other = '\0';
        int32_t *ids = NULL, src[LS], out[MAXO], want[MAXO];
        size_t n_ids = 0;
        int len = 0;
        CHECK(nllb_tok_encode(tok, f[2], strlen(f[2]), &ids, &n_ids) == TFM_OK && n_ids <= LS, "encode line %zu", i + 1);
        const size_t nw = test_parse_ids(f[3], want, MAXO);
        tfm_decode_config dc = tfm_decode_config_default();
        dc.beam = 4;
        dc.lenpen = strtof(f[0], NULL);
        dc.max_len_a = 0.0f;
        dc.max_len_b = 60;
        dc.force_first = 1;
        dc.first_id = nllb_tok_lang_id(tok, f[1]);
        for (int cache = 1; ids && n_ids <= LS && cache >= 0; cache--) {
            dc.use_cache = cache;
            memcpy(src, ids, n_ids * sizeof *src);
            CHECK(tfm_model_translate(ctx, &dc, 1, (int)n_ids, src, out, MAXO, &len) == TFM_OK, "translate: %s",
                  tfm_last_error());
            int same = len == (int)nw + 1 && out[0] == dc.first_id;
            for (size_t k = 0; same && k < nw; k++) same = out[1 + k] == want[k];
            CHECK(same, "lenpen.tsv line %zu (lenpen %s, %s, cache %d): %d ids, not transformers' %zu", i + 1, f[0],
                  f[1], cache, len - 1, nw);
        }
        free(ids);
    }
    test_lines_free(&cases);
}

/* config.json says d_ff 48, the tensors are 64 wide: fc1 is misshaped */
static void check_misshaped(void) {
    char dir[4096], a[4200], b[4200];
    if (!test_make_tmpdir(dir, sizeof dir, "nllb-bad")) {
        CHECK(0, "tmpdir");
        return;
    }
    snprintf(a, sizeof a, "%s/config.json", dir);
    snprintf(b, sizeof b, "%s/model.safetensors", dir);
    CHECK(test_copy_file(test_path(FIX "/config.json"), a) &&
              test_edit_file(a, "\"encoder_ffn_dim\": 64", "\"encoder_ffn_dim\": 48") &&
              test_copy_file(test_path(FIX "/model.safetensors"), b),
          "copy the fixture");
    /* decoder_ffn_dim must agree too: the shape check is the one that fires */
    CHECK(test_edit_file(a, "\"decoder_ffn_dim\": 64", "\"decoder_ffn_dim\": 48"), "edit config");
    tfm_model *m = NULL;
    CHECK(tfm_model_load(dir, &m) == TFM_ERR_FORMAT && !m && strstr(tfm_last_error(), "model.encoder.layers.0.fc1.weight") &&
              strstr(tfm_last_error(), "model.safetensors"),
          "misshaped: %s", tfm_last_error());
    remove(a);
    remove(b);
    rmdir(dir);
}

/* The tokenizer the model carries (its folder's files as one blob): through the public API, the
 * greedy texts of tfm_translate_text are transformers'; the checkpoint keeps it. */
static void check_public_tokenizer(tfm_context *ctx) {
    const tfm_model *m = tfm_context_model(ctx);
    size_t n = 0;
    const unsigned char *bytes = tfm_model_tokenizer(m, &n);
    tfm_tokenizer *tok = NULL;
    CHECK(bytes && tfm_tokenizer_load_bytes(bytes, n, &tok) == TFM_OK, "the model's tokenizer: %s", tfm_last_error());
    if (!tok) return;
    CHECK(tfm_tokenizer_check_model(tok, tfm_model_config(m)) == TFM_OK, "505 tokens fit 507 rows: %s",
          tfm_last_error());
    CHECK(tfm_tokenizer_forced_first(tok) == -1 && tfm_tokenizer_set_langs(tok, "eng_Latn", "spa_Latn", 0) == TFM_OK &&
              tfm_tokenizer_forced_first(tok) == 503 && tfm_tokenizer_piece_to_id(tok, "spa_Latn") == 503 &&
              tfm_tokenizer_id_to_piece(tok, 504) && strcmp(tfm_tokenizer_id_to_piece(tok, 504), "<mask>") == 0,
          "languages: %s", tfm_last_error());
    test_lines sent, want;
    CHECK(test_lines_read(test_path(GOLD "sentences.txt"), &sent) && test_lines_read(test_path(GOLD "greedy.txt"), &want) &&
              sent.n == want.n,
          "golden files");
    char *out[MAXB] = {NULL};
    tfm_decode_config dc = tfm_decode_config_default();
    dc.max_len_a = 0.0f;
    dc.max_len_b = 60;
    dc.force_first = 1;
    dc.first_id = tfm_tokenizer_forced_first(tok);
    CHECK(sent.n <= MAXB && tfm_translate_text(ctx, tok, &dc, (const char *const *)sent.text, sent.n, 64, out, NULL) ==
                                TFM_OK,
          "translate_text: %s", tfm_last_error());
    for (size_t i = 0; i < sent.n && i < MAXB; i++) {
        CHECK(out[i] && strcmp(out[i], want.text[i]) == 0, "translate_text %zu: '%s'", i + 1, out[i] ? out[i] : "");
        free(out[i]);
    }
    test_lines_free(&sent);
    test_lines_free(&want);
    tfm_tokenizer_free(tok);
}

/* A tfm checkpoint of the model (tfm_model_save) loads back with the family's traits: the same
 * greedy ids. */
static void check_save_load(tfm_context *ctx, const nllb_tok *tok, const tfm_config *c) {
    char dir[4096], path[4200];
    if (!test_make_tmpdir(dir, sizeof dir, "nllb-save")) {
        CHECK(0, "tmpdir");
        return;
    }
    snprintf(path, sizeof path, "%s/nllb.safetensors", dir);
    tfm_model *m2 = NULL;
    tfm_context *ctx2 = NULL;
    CHECK(tfm_model_save(tfm_context_model(ctx), path) == TFM_OK && tfm_model_load(path, &m2) == TFM_OK &&
              tfm_context_create(m2, &ctx2) == TFM_OK,
          "save and load: %s", tfm_last_error());
    if (ctx2) {
        const tfm_config *c2 = tfm_model_config(m2);
        CHECK(c2->pe_offset == c->pe_offset && c2->embed_scale == c->embed_scale &&
                  c2->decoder_start_id == c->decoder_start_id && c2->suppress == c->suppress &&
                  c2->norm_first == c->norm_first && c2->pe_layout == c->pe_layout,
              "the traits survive the checkpoint");
        int32_t *ids = NULL, out[2][MAXO];
        size_t n = 0;
        int len[2] = {0, 0};
        tfm_decode_config dc = tfm_decode_config_default();
        dc.force_first = 1;
        dc.first_id = nllb_tok_lang_id(tok, "spa_Latn");
        CHECK(nllb_tok_encode(tok, "Jonah went down to Joppa.", 25, &ids, &n) == TFM_OK, "encode");
        CHECK(tfm_model_translate(ctx, &dc, 1, (int)n, ids, out[0], MAXO, &len[0]) == TFM_OK &&
                  tfm_model_translate(ctx2, &dc, 1, (int)n, ids, out[1], MAXO, &len[1]) == TFM_OK,
              "translate: %s", tfm_last_error());
        CHECK(len[0] == len[1] && len[0] > 1 && memcmp(out[0], out[1], (size_t)len[0] * sizeof(int32_t)) == 0,
              "the checkpoint translates as the folder (%d vs %d ids)", len[0], len[1]);
        size_t n1 = 0, n2 = 0;
        const unsigned char *b1 = tfm_model_tokenizer(tfm_context_model(ctx), &n1), *b2 = tfm_model_tokenizer(m2, &n2);
        CHECK(b1 && b2 && n1 == n2 && memcmp(b1, b2, n1) == 0, "the checkpoint keeps the tokenizer");
        free(ids);
    }
    tfm_context_free(ctx2);
    tfm_model_free(m2);
    remove(path);
    rmdir(dir);
}

int main(void) {
    tfm_model *m = NULL;
    tfm_context *ctx = NULL;
    nllb_tok *tok = NULL;
    CHECK(tfm_model_load(test_path(FIX), &m) == TFM_OK, "load: %s", tfm_last_error());
    CHECK(m && tfm_context_create(m, &ctx) == TFM_OK, "context: %s", tfm_last_error());
    CHECK(nllb_tok_load(test_path(FIX), &tok) == TFM_OK, "tokenizer: %s", tfm_last_error());
    if (ctx && tok) {
        const tfm_config *c = tfm_model_config(m);
        CHECK(c->src_vocab == 507 && c->pad_id == 1 && c->eos_id == 2 && c->norm_first == 1 && c->pe_offset == 2,
              "config: vocab %d pad %d eos %d norm_first %d pe_offset %d", c->src_vocab, c->pad_id, c->eos_id,
              c->norm_first, c->pe_offset);
        check_logits(ctx, c);
        check_search(ctx, tok, c, 1, "spa_Latn", "greedy");
        check_search(ctx, tok, c, 4, "spa_Latn", "beam4");
        /* a code never first in training: the forcing itself decides these */
        check_search(ctx, tok, c, 1, "fra_Latn", "greedy_fra");
        check_search(ctx, tok, c, 4, "fra_Latn", "beam4_fra");
        check_lenpen(ctx, tok, c);
        check_save_load(ctx, tok, c);
        check_public_tokenizer(ctx);
    }
    check_misshaped();
    nllb_tok_free(tok);
    tfm_context_free(ctx);
    tfm_model_free(m);
    return test_finish("test_nllb");
}
