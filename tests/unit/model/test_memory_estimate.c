/* tfm-test: slow (about 15 s idle: two training runs of 300-1400 MB, one step each, a beam search and two greedy runs)
 * Memory up front (include/tfm/memory.h): the training estimate is within 20 % of the peak resident
 * memory that `tfm train` really reaches (ru_maxrss of the child process, from wait4) for two
 * configurations, one where the parameters and Adam's state dominate (vocabulary 16,000, short
 * batches) and one where the activations do (long sequences, 8 heads); the decoding estimate within
 * 20 % of `tfm translate --beam 8`'s peak, where the KV cache dominates, and of a translate whose
 * lines are long in bytes but short in tokens, which --max-memory 1.5 × its peak must allow; and the
 * pieces of the API (sizes as text, MemAvailable, the refusal message, the batches of
 * tfm_memory_estimate_translate) on fixed cases. */
#define _DEFAULT_SOURCE /* wait4 */
#include "ops.h"
#include "test_util.h"

#include "tfm/tfm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/* Writes n pairs of id files with lengths in [lo, hi] (target rows BOS ... EOS). */
static void write_ids(const char *src, const char *tgt, int n, int lo, int hi, int vocab, unsigned seed) {
    FILE *fs = fopen(src, "w"), *ft = fopen(tgt, "w");
    srand(seed);
    for (int i = 0; i < n; i++) {
        int ls = lo + rand() % (hi - lo + 1), lt = lo + rand() % (hi - lo + 1);
        for (int k = 0; k < ls; k++) fprintf(fs, k ? " %d" : "%d", 3 + rand() % (vocab - 3));
        fprintf(ft, "1");
        for (int k = 0; k < lt - 2; k++) fprintf(ft, " %d", 3 + rand() % (vocab - 3));
        fprintf(ft, " 2\n");
        fputc('\n', fs);
    }
    fclose(fs);
    fclose(ft);
}

/* Runs argv (argv[0] the program) with stdout to /dev/null; returns its peak RSS in bytes (0 on
 * failure). */
static size_t peak_rss(char *const argv[]) {
    fflush(stdout); /* else the child's freopen writes our buffered lines a second time */
    pid_t pid = fork();
    if (pid == 0) {
        setenv("GOMP_SPINCOUNT", "10000", 1); /* no re-execution (cli/main.c) */
        if (!freopen("/dev/null", "w", stdout)) _exit(127);
        execv(argv[0], argv);
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    if (pid < 0 || wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return 0;
    return (size_t)ru.ru_maxrss * 1024; /* KiB on Linux */
}

/* Runs `tfm train` for one step; returns its peak RSS in bytes (0 on failure). */
static size_t train_peak_rss(const char *tfm, const char *model, const char *src, const char *tgt, int batch,
                             const char *out) {
    char b[16];
    snprintf(b, sizeof b, "%d", batch);
    char *const argv[] = {(char *)tfm, "train", "--init", (char *)model, "--src-ids", (char *)src, "--tgt-ids",
                          (char *)tgt, "--steps", "1", "--batch-size", b, "--save", (char *)out, NULL};
    return peak_rss(argv);
}

static double mib(size_t bytes) { return (double)bytes / 1048576.0; }

static void check_config(const char *tfm, const char *dir, const char *name, tfm_config c, int pairs, int lo, int hi,
                         int batch) {
    char model[4200], src[4200], tgt[4200], out[4200];
    snprintf(model, sizeof model, "%s/%s.safetensors", dir, name);
    snprintf(src, sizeof src, "%s/%s.src", dir, name);
    snprintf(tgt, sizeof tgt, "%s/%s.tgt", dir, name);
    snprintf(out, sizeof out, "%s/%s.out.safetensors", dir, name);
    write_ids(src, tgt, pairs, lo, hi, c.src_vocab, 7);
    tfm_model *m = NULL;
    CHECK(tfm_model_create(&c, 1, &m) == TFM_OK && tfm_model_save(m, model) == TFM_OK, "%s: model made", name);
    tfm_model_free(m);
    tfm_dataset *ds = NULL;
    tfm_batcher *bt = NULL;
    tfm_memory_estimate e;
    CHECK(tfm_dataset_from_ids(src, tgt, c.max_len, &ds, NULL) == TFM_OK &&
              tfm_batcher_create_lines(ds, batch, c.pad_id, 1, 1, &bt) == TFM_OK &&
              tfm_memory_estimate_train(&c, TFM_OPTIMIZER_ADAM, NULL, bt, NULL, tfm_memory_dataset_bytes(ds), &e) == TFM_OK,
          "%s: estimate: %s", name, tfm_last_error());
    /* the reference kernels keep every attention's weights: their estimate is larger */
    const tfm_kernel_opts ref = tfm_kernel_opts_reference();
    tfm_memory_estimate er;
    CHECK(bt && tfm_memory_estimate_train(&c, TFM_OPTIMIZER_ADAM, &ref, bt, NULL, tfm_memory_dataset_bytes(ds), &er) ==
                    TFM_OK &&
              er.activations + er.workspace > e.activations + e.workspace,
          "%s: the reference kernels' estimate is not larger (%zu vs %zu bytes)", name, er.activations + er.workspace,
          e.activations + e.workspace);
    tfm_batcher_free(bt);
    tfm_dataset_free(ds);
    const size_t rss = train_peak_rss(tfm, model, src, tgt, batch, out);
    CHECK(rss > 0, "%s: tfm train ran", name);
    const double ratio = rss ? (double)e.total / (double)rss : 0.0;
    printf("%s: estimate %.1f MiB (params %.1f, grads+Adam %.1f, activations %.1f, workspace %.1f, data %.1f), "
           "peak RSS %.1f MiB, ratio %.3f\n",
           name, mib(e.total), mib(e.params), mib(e.grads + e.optimizer), mib(e.activations), mib(e.workspace),
           mib(e.data), mib(rss), ratio);
    CHECK(ratio >= 0.8 && ratio <= 1.2, "%s: estimate within 20 %% of the peak RSS (ratio %.3f)", name, ratio);
    remove(model), remove(src), remove(tgt), remove(out);
}

/* Decoding with the KV cache and beam 8: a model with fuzz/tok400.model as its tokenizer translates
 * 8 lines of 20 CJK characters, which the tokenizer's byte fallback turns into 3 pieces each plus
 * "▁" (61 ids = bytes + 1, the most a line of 60 bytes can give), so the source length is the real
 * one; the cache is sized (and zeroed) for the longest output allowed (200 tokens), whatever the
 * model emits. One encoder layer and three decoder layers: the KV cache is the largest part. */
static void check_decode(const char *tfm, const char *dir) {
    tfm_tokenizer *tok = NULL;
    uint8_t *blob = NULL;
    size_t blen = 0;
    CHECK(tfm_tokenizer_load_file(test_path("fuzz/tok400.model"), &tok) == TFM_OK &&
              tfm_tokenizer_serialize(tok, &blob, &blen) == TFM_OK,
          "decode: tokenizer: %s", tfm_last_error());
    if (!tok) return;
    tfm_config c = tfm_config_default();
    c.d_model = 256, c.n_heads = 4, c.n_enc_layers = 1, c.n_dec_layers = 3, c.d_ff = 1024, c.max_len = 256;
    c.src_vocab = c.tgt_vocab = tfm_tokenizer_vocab_size(tok);
    c.pad_id = tfm_tokenizer_pad_id(tok), c.bos_id = tfm_tokenizer_bos_id(tok), c.eos_id = tfm_tokenizer_eos_id(tok);
    char model[4200], in[4200], out[4200];
    snprintf(model, sizeof model, "%s/decode.safetensors", dir);
    snprintf(in, sizeof in, "%s/decode.in", dir);
    snprintf(out, sizeof out, "%s/decode.out", dir);
    tfm_model *m = NULL;
    CHECK(tfm_model_create(&c, 1, &m) == TFM_OK && tfm_model_set_tokenizer(m, blob, blen) == TFM_OK &&
              tfm_model_save(m, model) == TFM_OK,
          "decode: model made: %s", tfm_last_error());
    tfm_model_free(m);
    free(blob);
    FILE *f = fopen(in, "w");
    srand(3);
    size_t text = 0, longest = 0;
    for (int i = 0; i < 8; i++) {
        char line[256];
        size_t n = 0;
        for (int k = 0; k < 20; k++) { /* U+4E00..U+9FFF as 3-byte UTF-8 */
            const unsigned cp = 0x4E00u + (unsigned)(rand() % 0x5200);
            line[n++] = (char)(0xE0 | (cp >> 12));
            line[n++] = (char)(0x80 | ((cp >> 6) & 0x3F));
            line[n++] = (char)(0x80 | (cp & 0x3F));
        }
        line[n] = '\0';
        fprintf(f, "%s\n", line);
        text += 2 * (n + 1) + 2 * sizeof(char *);
        if (n > longest) longest = n;
    }
    fclose(f);
    int32_t *ids = NULL;
    size_t n_ids = 0;
    CHECK(tfm_tokenizer_encode(tok, "\xe4\xb8\x80\xe4\xb8\x80", 6, &ids, &n_ids) == TFM_OK && n_ids == 7,
          "decode: a CJK character is 3 byte pieces, plus the leading piece (%zu ids for 2)", n_ids);
    free(ids);
    tfm_tokenizer_free(tok);
    const int S = (int)longest + 1, beam = 8, batch = 64, max_out = 200; /* --max-len-a 0 --max-len-b 200 */
    tfm_memory_estimate e;
    CHECK(tfm_memory_estimate_decode_beams(&c, batch / beam, beam, S, max_out, 1, text, &e) == TFM_OK,
          "decode: estimate");
    char *const argv[] = {(char *)tfm, "translate", "--model", model, "--input", in, "--output", out, "--beam", "8",
                          "--batch-size", "64", "--max-len-a", "0", "--max-len-b", "200", NULL};
    const size_t rss = peak_rss(argv);
    CHECK(rss > 0, "decode: tfm translate ran");
    const double ratio = rss ? (double)e.total / (double)rss : 0.0;
    printf("decode (beam 8, 64 rows, S %d): estimate %.1f MiB (params %.1f, activations %.1f, KV cache %.1f, "
           "data %.1f), peak RSS %.1f MiB, ratio %.3f\n",
           S, mib(e.total), mib(e.params), mib(e.activations), mib(e.cache), mib(e.data), mib(rss), ratio);
    CHECK(ratio >= 0.8 && ratio <= 1.2, "decode: estimate within 20 %% of the peak RSS (ratio %.3f)", ratio);
    remove(model), remove(in), remove(out);
}

/* Decoding lines long in bytes but short in tokens (a common word repeated: one piece per word):
 * the estimate counts tokens, not bytes, so the run is allowed under a --max-memory of 1.5 × its
 * peak RSS, where a bound of bytes + 1 per source (the old estimate, about 4 × the tokens) would
 * refuse it. Greedy, 64 sentences a batch, d_model 64 with 8 heads: the encoder's attention
 * (rows · heads · S²) was the largest part until the KV cache's encoder ran in groups of
 * ENCODE_TOKENS (2026-12-03); now the program's own TFM_MEMORY_BASE_BYTES is, which this case
 * showed 5 MiB short (ratio 0.795). */
static void check_decode_words(const char *tfm, const char *dir) {
    tfm_tokenizer *tok = NULL;
    uint8_t *blob = NULL;
    size_t blen = 0;
    CHECK(tfm_tokenizer_load_file(test_path("fuzz/tok400.model"), &tok) == TFM_OK &&
              tfm_tokenizer_serialize(tok, &blob, &blen) == TFM_OK,
          "words: tokenizer: %s", tfm_last_error());
    if (!tok) return;
    tfm_config c = tfm_config_default();
    c.d_model = 64, c.n_heads = 8, c.n_enc_layers = 1, c.n_dec_layers = 1, c.d_ff = 256, c.max_len = 512;
    c.src_vocab = c.tgt_vocab = tfm_tokenizer_vocab_size(tok);
    c.pad_id = tfm_tokenizer_pad_id(tok), c.bos_id = tfm_tokenizer_bos_id(tok), c.eos_id = tfm_tokenizer_eos_id(tok);
    char model[4200], in[4200], out[4200];
    snprintf(model, sizeof model, "%s/words.safetensors", dir);
    snprintf(in, sizeof in, "%s/words.in", dir);
    snprintf(out, sizeof out, "%s/words.out", dir);
    tfm_model *m = NULL;
    CHECK(tfm_model_create(&c, 1, &m) == TFM_OK && tfm_model_set_tokenizer(m, blob, blen) == TFM_OK &&
              tfm_model_save(m, model) == TFM_OK,
          "words: model made: %s", tfm_last_error());
    tfm_model_free(m);
    free(blob);
    FILE *f = fopen(in, "w");
    size_t longest = 0, longest_ids = 0, text = 0, lens[64];
    for (int i = 0; i < 64; i++) {
        char line[512] = "";
        for (int k = 0; k < 70 + i / 2; k++) strcat(line, k ? " the" : "the");
        fprintf(f, "%s\n", line);
        const size_t n = strlen(line);
        int32_t *ids = NULL;
        size_t n_ids = 0;
        CHECK(tfm_tokenizer_encode(tok, line, n, &ids, &n_ids) == TFM_OK, "words: encode");
        free(ids);
        lens[i] = n_ids;
        text += 2 * (n + 1) + 2 * sizeof(char *);
        if (n > longest) longest = n;
        if (n_ids > longest_ids) longest_ids = n_ids;
    }
    fclose(f);
    tfm_tokenizer_free(tok);
    CHECK(longest_ids * 3 < longest, "words: long in bytes (%zu), short in tokens (%zu)", longest, longest_ids);
    char *const plain[] = {(char *)tfm, "translate", "--model", model, "--input", in, "--output", out,
                           "--max-len-a", "0", "--max-len-b", "5", NULL};
    const size_t rss = peak_rss(plain);
    CHECK(rss > 0, "words: tfm translate ran");
    tfm_memory_estimate by_bytes, e;
    tfm_decode_config dc = tfm_decode_config_default();
    dc.max_len_a = 0.0f, dc.max_len_b = 5;
    CHECK(tfm_memory_estimate_decode(&c, 64, (int)longest + 1, 5, 1, text, &by_bytes) == TFM_OK &&
              tfm_memory_estimate_translate(&c, &dc, 64, lens, 64, text, &e) == TFM_OK,
          "words: estimates");
    char limit[32];
    snprintf(limit, sizeof limit, "%zu", rss + rss / 2);
    const double ratio = rss ? (double)e.total / (double)rss : 0.0;
    printf("words (64 rows, %zu bytes, %zu tokens): estimate %.1f MiB (activations %.1f, KV cache %.1f), peak RSS "
           "%.1f MiB, ratio %.3f; a bytes + 1 bound would estimate %.1f MiB\n",
           longest, longest_ids, mib(e.total), mib(e.activations), mib(e.cache), mib(rss), ratio, mib(by_bytes.total));
    CHECK(ratio >= 0.8 && ratio <= 1.2, "words: estimate within 20 %% of the peak RSS (ratio %.3f)", ratio);
    CHECK(by_bytes.total > rss + rss / 2, "words: the bytes bound would refuse 1.5 x the peak (%.1f MiB)",
          mib(by_bytes.total));
    char *const capped[] = {(char *)tfm, "translate", "--model", model, "--input", in, "--output", out,
                            "--max-len-a", "0", "--max-len-b", "5", "--max-memory", limit, NULL};
    CHECK(peak_rss(capped) > 0, "words: not refused under --max-memory %s (1.5 x the peak RSS)", limit);
    remove(model), remove(in), remove(out);
}

static void check_api(void) {
    size_t b = 0;
    CHECK(tfm_memory_parse("2G", &b) == TFM_OK && b == ((size_t)2 << 30), "2G");
    CHECK(tfm_memory_parse("1.5GiB", &b) == TFM_OK && b == ((size_t)3 << 29), "1.5GiB");
    CHECK(tfm_memory_parse("512m", &b) == TFM_OK && b == ((size_t)512 << 20), "512m");
    CHECK(tfm_memory_parse("800K", &b) == TFM_OK && b == 800 * 1024, "800K");
    CHECK(tfm_memory_parse("1000", &b) == TFM_OK && b == 1000, "1000");
    const char *bad[] = {"", "G", "-1G", "2X", "2 G", "1.2.3", "99999999999999999999T", "2GG"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK(tfm_memory_parse(bad[i], &b) == TFM_ERR_INVALID_ARG, "'%s' refused", bad[i]);
    size_t avail = 0;
    CHECK(tfm_memory_available(&avail) == TFM_OK && avail > ((size_t)16 << 20), "MemAvailable read (%zu)", avail);
    char buf[32];
    tfm_memory_format((size_t)3 << 29, buf, sizeof buf);
    CHECK(strcmp(buf, "1.50 GiB") == 0, "format 1.5 GiB: %s", buf);
    tfm_memory_estimate e = {0};
    e.params = (size_t)100 << 20;
    e.total = e.params;
    CHECK(tfm_memory_check(&e, e.total, "x", "y") == TFM_OK, "fits exactly");
    CHECK(tfm_memory_check(&e, e.total - 1, "--max-memory 99M", "lower --beam") == TFM_ERR_NOMEM &&
              strstr(tfm_last_error(), "100 MiB") && strstr(tfm_last_error(), "--max-memory 99M") &&
              strstr(tfm_last_error(), "lower --beam"),
          "refusal names the estimate, the limit and the flag: %s", tfm_last_error());
    /* decoding: the KV cache grows with the beam (rows) and the output length */
    tfm_config c = tfm_config_default();
    tfm_memory_estimate d1, d4, nc;
    CHECK(tfm_memory_estimate_decode(&c, 16, 50, 85, 1, 0, &d1) == TFM_OK &&
              tfm_memory_estimate_decode(&c, 64, 50, 85, 1, 0, &d4) == TFM_OK &&
              tfm_memory_estimate_decode(&c, 16, 50, 85, 0, 0, &nc) == TFM_OK,
          "decode estimates");
    CHECK(d4.cache > 3 * d1.cache && d1.cache > 0 && nc.cache == 0 && nc.activations > d1.activations,
          "cache scales with rows; recomputation has no cache but more activations");
    /* decoding keeps no copy of the weights (until 2026-12-03 batched steps of 9–128 rows kept the
     * decoder's transposed: 207 MiB for opus-mt's shape) */
    tfm_memory_estimate r8, r9;
    CHECK(tfm_memory_estimate_decode(&c, 8, 50, 85, 1, 0, &r8) == TFM_OK &&
              tfm_memory_estimate_decode(&c, 9, 50, 85, 1, 0, &r9) == TFM_OK && r8.workspace == 0 && r9.workspace == 0,
          "decode estimates at 8 and 9 rows: no workspace (%zu, %zu bytes)", r8.workspace, r9.workspace);
    tfm_memory_estimate b4;
    CHECK(tfm_memory_estimate_decode_beams(&c, 4, 4, 50, 85, 1, 0, &b4) == TFM_OK && b4.cache < d1.cache &&
              b4.cache > d1.cache / 2 && b4.activations < d1.activations,
          "4 sentences x beam 4 hold 4 memories, not 16: cache %zu vs %zu bytes", b4.cache, d1.cache);
    CHECK(tfm_memory_estimate_decode(&c, 0, 50, 85, 1, 0, &d1) == TFM_ERR_INVALID_ARG, "0 rows refused");
    /* translate: the batches tfm_translate_text decodes, by token counts (blank lines apart, counts
     * cut at max_len): 2 sentences a batch (4 / beam 2) gives (10, 20), (50, 50) and (max_len); the
     * largest is the last, alone: 2 rows (1 sentence × beam 2) of max_len tokens, not 4 */
    tfm_decode_config dc = tfm_decode_config_default();
    dc.beam = 2, dc.max_len_a = 1.0f, dc.max_len_b = 5;
    const size_t lens[] = {50, 0, 10, 100000, 50, 0, 20};
    tfm_memory_estimate tr, big;
    CHECK(tfm_memory_estimate_translate(&c, &dc, 4, lens, 7, 100, &tr) == TFM_OK &&
              tfm_memory_estimate_decode_beams(&c, 1, 2, c.max_len, c.max_len - 1, 1, 0, &big) == TFM_OK,
          "translate estimate: %s", tfm_last_error());
    CHECK(tr.activations == big.activations && tr.cache == big.cache && tr.params == big.params &&
              tr.data == 100 + 4 * (130 + (size_t)c.max_len),
          "translate estimate: the largest batch (2 rows of max_len), token ids in data");
    CHECK(tfm_memory_estimate_translate(&c, &dc, 4, lens + 1, 1, 0, &tr) == TFM_OK && tr.activations == 0 &&
              tr.cache == 0,
          "translate estimate: a blank line decodes nothing");
    CHECK(tfm_memory_estimate_translate(&c, &dc, 0, lens, 6, 0, &tr) == TFM_ERR_INVALID_ARG, "batch 0 refused");
}

/* Built with AddressSanitizer (make test-asan), tfm's peak RSS holds ASan's shadow memory and
 * redzones too, which the estimate rightly ignores: the comparison needs an uninstrumented build. */
#if defined(__SANITIZE_ADDRESS__)
#define TFM_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TFM_TEST_ASAN 1
#endif
#endif

int main(void) {
    check_api();
#ifdef TFM_TEST_ASAN
    printf("SKIP: peak RSS under AddressSanitizer includes its shadow memory; the estimate is compared with "
           "tfm's peak RSS in the optimized build (make test)\n");
    return test_failed_ ? test_finish("memory_estimate") : TEST_SKIP;
#endif
    const char *tfm = getenv("TFM");
    if (!tfm || access(tfm, X_OK) != 0) {
        printf("SKIP: $TFM (the tfm binary) is not set; ctest sets it\n");
        return test_failed_ ? test_finish("memory_estimate") : TEST_SKIP; /* the API checks above still count */
    }
    char dir[4096];
    if (!test_make_tmpdir(dir, sizeof dir, "memory")) return 1;
    tfm_config a = tfm_config_default(); /* parameters and Adam's state dominate */
    a.d_model = 256, a.n_heads = 4, a.n_enc_layers = 2, a.n_dec_layers = 2, a.d_ff = 1024;
    a.src_vocab = a.tgt_vocab = 16000, a.max_len = 64;
    check_config(tfm, dir, "params", a, 16, 10, 30, 8);
    tfm_config b = tfm_config_default(); /* activations dominate */
    b.d_model = 64, b.n_heads = 8, b.n_enc_layers = 2, b.n_dec_layers = 2, b.d_ff = 256;
    b.src_vocab = b.tgt_vocab = 2000, b.max_len = 256;
    check_config(tfm, dir, "activations", b, 32, 150, 220, 32);
    check_decode(tfm, dir);
    check_decode_words(tfm, dir);
    rmdir(dir);
    return test_finish("memory_estimate");
}
