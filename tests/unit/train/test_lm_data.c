/* Language-model text data (docs/LM.md): tfm_dataset_from_lm_text on a small file written here —
 * one line = BOS + subwords + EOS, blank lines skipped, a line longer than max_len − 1 subwords
 * cut to BOS + max_len subwords without EOS, two files read in order with per-file line numbers,
 * invalid UTF-8 named file:line; the batcher over it (no source tokens, every row once per epoch); and
 * tfm_perplexity_text on a decoder-only model: EOS counted, blank lines skipped, cut lines' EOS
 * not scored, the same total for any batching and equal to tfm_model_score's. */
#include "test_util.h"
#include "tfm/tfm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LEN 12

static const char *LINES[] = {
    "In the beginning God created the heavens and the earth.",
    "",
    "The earth was formless and empty.",
    " \t ",
    "God said, Let there be light, and there was light. God saw the light, and saw that it was good. "
    "God divided the light from the darkness.",
    "Amen.",
};
#define N_LINES (sizeof LINES / sizeof LINES[0])

static void write_file(const char *path, const char *const *lines, size_t n) {
    FILE *f = fopen(path, "w");
    CHECK(f != NULL, "cannot write %s", path);
    if (!f) return;
    for (size_t i = 0; i < n; i++) fprintf(f, "%s\n", lines[i]);
    fclose(f);
}

static void test_dataset(const tfm_tokenizer *tok, const char *dir) {
    char a[600], b[600], bad[600];
    snprintf(a, sizeof a, "%s/a.txt", dir);
    snprintf(b, sizeof b, "%s/b.txt", dir);
    snprintf(bad, sizeof bad, "%s/bad.txt", dir);
    write_file(a, LINES, N_LINES);
    write_file(b, LINES, 1);
    const char *paths[2] = {a, b};
    const int bos = tfm_tokenizer_bos_id(tok), eos = tfm_tokenizer_eos_id(tok);
    tfm_dataset *ds = NULL;
    tfm_lm_text_stats st;
    CHECK(tfm_dataset_from_lm_text(tok, paths, 2, MAX_LEN, bos, eos, &ds, &st) == TFM_OK, "dataset: %s",
          tfm_last_error());
    if (!ds) return;
    CHECK(st.n_files == 2 && st.n_lines == N_LINES + 1 && st.n_blank == 2 && st.n_sequences == 5 && st.n_cut >= 1,
          "stats: files %zu lines %zu blank %zu sequences %zu cut %zu", st.n_files, st.n_lines, st.n_blank,
          st.n_sequences, st.n_cut);
    CHECK(tfm_dataset_size(ds) == 5, "size %zu", tfm_dataset_size(ds));
    const size_t want_line[5] = {1, 3, 5, 6, 1};
    const int line_of[5] = {0, 2, 4, 5, 0};
    size_t total = 0;
    for (size_t i = 0; i < tfm_dataset_size(ds); i++) {
        const int32_t *src, *tgt;
        size_t ls, lt;
        tfm_dataset_pair(ds, i, &src, &ls, &tgt, &lt);
        int32_t *ids = NULL;
        size_t n = 0;
        const char *text = LINES[line_of[i]];
        CHECK(tfm_tokenizer_encode(tok, text, strlen(text), &ids, &n) == TFM_OK, "encode");
        CHECK(ls == 0, "pair %zu has a source of %zu ids", i, ls);
        CHECK(tfm_dataset_line(ds, i) == want_line[i], "pair %zu: line %zu, want %zu", i, tfm_dataset_line(ds, i),
              want_line[i]);
        CHECK(tgt[0] == bos, "pair %zu does not start with BOS", i);
        if (n <= MAX_LEN - 1) {
            CHECK(lt == n + 2 && tgt[lt - 1] == eos && memcmp(tgt + 1, ids, n * sizeof *ids) == 0,
                  "pair %zu: BOS + %zu subwords + EOS, got %zu ids", i, n, lt);
        } else {
            CHECK(lt == MAX_LEN + 1 && tgt[lt - 1] != eos && memcmp(tgt + 1, ids, MAX_LEN * sizeof *ids) == 0,
                  "pair %zu (%zu subwords): cut to BOS + %d without EOS, got %zu ids", i, n, MAX_LEN, lt);
        }
        total += lt;
        free(ids);
    }
    CHECK(st.tokens == total && st.max_row_len <= MAX_LEN + 1, "tokens %zu (want %zu), longest %d", st.tokens, total,
          st.max_row_len);
    /* batches: no source, each row once per epoch */
    tfm_batcher *bt = NULL;
    CHECK(tfm_batcher_create(ds, 30, tfm_tokenizer_pad_id(tok), 1, 5, &bt) == TFM_OK, "batcher: %s", tfm_last_error());
    int seen[5] = {0};
    for (size_t k = 0; bt && k < tfm_batcher_batches_per_epoch(bt); k++) {
        tfm_batch batch;
        tfm_batcher_next(bt, &batch);
        /* an empty source is one pad column, which a decoder-only model never reads */
        CHECK(batch.S == 1 && batch.src_tokens == 0, "batch %zu: S = %d, %zu source tokens", k, batch.S,
              batch.src_tokens);
        for (int r = 0; r < batch.B; r++) seen[batch.pairs[r]]++;
    }
    for (int i = 0; i < 5; i++) CHECK(seen[i] == 1, "row %d seen %d times in an epoch", i, seen[i]);
    tfm_batcher_free(bt);
    tfm_dataset_free(ds);
    /* invalid UTF-8 names the file and line */
    const char *bad_lines[] = {"fine", "not \xff fine"};
    write_file(bad, bad_lines, 2);
    const char *bp[2] = {a, bad};
    char want[700];
    snprintf(want, sizeof want, "%s:2: invalid UTF-8", bad);
    CHECK(tfm_dataset_from_lm_text(tok, bp, 2, MAX_LEN, bos, eos, &ds, NULL) == TFM_ERR_FORMAT &&
              strstr(tfm_last_error(), want) && !ds,
          "invalid UTF-8: %s", tfm_last_error());
    const char *blank_only[] = {"", "  "};
    write_file(bad, blank_only, 2);
    CHECK(tfm_dataset_from_lm_text(tok, bp + 1, 1, MAX_LEN, bos, eos, &ds, NULL) == TFM_ERR_FORMAT &&
              strstr(tfm_last_error(), "no usable line"),
          "only blank lines: %s", tfm_last_error());
}

static void test_perplexity(const tfm_tokenizer *tok) {
    tfm_config c = tfm_config_default();
    c.arch = TFM_ARCH_DECODER_ONLY;
    c.n_enc_layers = 0;
    c.n_dec_layers = 1;
    c.d_model = 16;
    c.n_heads = 2;
    c.d_ff = 16;
    c.max_len = MAX_LEN;
    c.src_vocab = c.tgt_vocab = tfm_tokenizer_vocab_size(tok);
    c.pad_id = tfm_tokenizer_pad_id(tok);
    c.bos_id = tfm_tokenizer_bos_id(tok);
    c.eos_id = tfm_tokenizer_eos_id(tok);
    c.norm_first = 1;
    tfm_model *m = NULL;
    tfm_context *ctx = NULL;
    CHECK(tfm_model_create(&c, 3, &m) == TFM_OK && tfm_context_create(m, &ctx) == TFM_OK, "model: %s",
          tfm_last_error());
    if (!ctx) return;
    tfm_perplexity_stats a, b;
    CHECK(tfm_perplexity_text(ctx, tok, LINES, N_LINES, 3000, &a) == TFM_OK, "perplexity: %s", tfm_last_error());
    CHECK(tfm_perplexity_text(ctx, tok, LINES, N_LINES, 1, &b) == TFM_OK, "perplexity, small batches");
    CHECK(a.lines == 4 && a.skipped_blank == 2 && a.truncated >= 1, "lines %zu blank %zu cut %zu", a.lines,
          a.skipped_blank, a.truncated);
    CHECK(a.tokens == b.tokens && fabs(a.nll - b.nll) < 1e-3, "batching changed the result: %zu %.6f vs %zu %.6f",
          a.tokens, a.nll, b.tokens, b.nll);
    /* the expected count: every subword and EOS of each kept line; a cut line max_len subwords, no EOS */
    size_t want_tokens = 0;
    double want_nll = 0.0;
    for (size_t i = 0; i < N_LINES; i++) {
        if (tfm_text_is_blank(LINES[i], strlen(LINES[i]))) continue;
        int32_t *ids = NULL;
        size_t n = 0;
        tfm_tokenizer_encode(tok, LINES[i], strlen(LINES[i]), &ids, &n);
        const int cut = n > MAX_LEN - 1;
        const int T = cut ? MAX_LEN + 1 : (int)n + 2;
        int32_t row[MAX_LEN + 2];
        row[0] = c.bos_id;
        for (int t = 1; t < T; t++) row[t] = t - 1 < (int)n ? ids[t - 1] : c.eos_id;
        double lp;
        int nt;
        CHECK(tfm_model_score(ctx, 1, 0, T, NULL, row, &lp, &nt, NULL) == TFM_OK, "score line %zu", i);
        want_tokens += (size_t)nt;
        want_nll -= lp;
        free(ids);
    }
    CHECK(a.tokens == want_tokens && fabs(a.nll - want_nll) < 1e-3 &&
              fabs(a.perplexity - exp(want_nll / (double)want_tokens)) < 1e-6 * a.perplexity,
          "perplexity %zu tokens nll %.6f, want %zu and %.6f", a.tokens, a.nll, want_tokens, want_nll);
    const char *bad[] = {"ok", "bad \xc3"};
    CHECK(tfm_perplexity_text(ctx, tok, bad, 2, 3000, &b) == TFM_ERR_FORMAT && strstr(tfm_last_error(), "line 2: "),
          "invalid UTF-8: %s", tfm_last_error());
    tfm_context_free(ctx);
    tfm_model_free(m);
}

int main(void) {
    char dir[512];
    if (!test_make_tmpdir(dir, sizeof dir, "lm_data")) return test_finish("lm_data");
    const char *fixture = test_path("tests/fixtures/tok_train.txt");
    tfm_tokenizer_train_opts o;
    tfm_tokenizer_train_opts_default(&o);
    o.vocab_size = 500;
    tfm_tokenizer *tok = NULL;
    CHECK(tfm_tokenizer_train(&fixture, 1, &o, &tok) == TFM_OK, "tokenizer: %s", tfm_last_error());
    if (tok) {
        test_dataset(tok, dir);
        test_perplexity(tok);
    }
    tfm_tokenizer_free(tok);
    return test_finish("lm_data");
}
