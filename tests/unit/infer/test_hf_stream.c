/* tfm_text_stream_init_bpe (src/infer/generate_stream.c) on the GPT-2 fixture's tokenizer
 * (tests/fixtures/gpt2, tfm_bpe_load_dir): streamed one id at a time, the bytes equal
 * transformers 4.40.2's tokenizer.decode(ids, skip_special_tokens=True) with its
 * clean_up_tokenization_spaces (the strings below were printed by it), the stream never diverges
 * (what a pattern such as " n't" would remove is held back until it is settled), and the clean-up
 * is off when tokenizer_config.json says so (clean_up = 0: the raw decode). A mistyped folder is
 * an error naming it, never its parent's tokenizer. */
#include "test_util.h"
#include "tfm/bpe.h"
#include "tfm/generate.h"

static const char *const TEXT[2] = {
    "They said , \"we 're here\" . I 'm sure it 's fine ; don 't , won n't ! ok ? yes ' no", "a ' b"};
static const char *const WANT[2] = {"They said, \"we're here\". I'm sure it's fine ; don 't, wonn't! ok? yes'no", "a'b"};

static void one(const tfm_bpe *bpe, int clean_up, const char *text, const char *want) {
    int32_t *ids = NULL;
    size_t n = 0;
    CHECK(tfm_bpe_encode(bpe, text, strlen(text), 1, &ids, &n) == TFM_OK && n > 1, "encode: %s", tfm_last_error());
    tfm_text_stream s;
    char acc[512];
    size_t len = 0, k;
    const char *p;
    int ok = tfm_text_stream_init_bpe(&s, bpe, clean_up, ids, 1, n - 1) == TFM_OK;
    for (size_t i = 0; ok && i <= n; i++) { /* the prompt (1 id), each id, then final */
        ok = tfm_text_stream_push(&s, i == 0 || i == n ? NULL : ids + i, i == 0 || i == n ? 0 : 1, i == n, &p, &k) == TFM_OK;
        if (ok && k && len + k < sizeof acc) memcpy(acc + len, p, k), len += k;
    }
    acc[len] = '\0';
    CHECK(ok && !s.diverged && strcmp(acc, want) == 0 && strcmp(s.text, want) == 0,
          "clean_up %d: streamed '%s', final '%s', want '%s' (diverged %d)", clean_up, acc, ok ? s.text : "", want,
          ok ? s.diverged : -1);
    tfm_text_stream_free(&s);
    free(ids);
}

int main(void) {
    tfm_bpe *bpe = NULL;
    int clean_up = -1;
    CHECK(tfm_bpe_load_dir(test_path("tests/fixtures/gpt2"), &bpe, &clean_up) == TFM_OK && clean_up == 1,
          "load: %s (clean_up %d)", tfm_last_error(), clean_up);
    if (!bpe) return test_finish("hf_stream");
    for (int i = 0; i < 2; i++) {
        one(bpe, 1, TEXT[i], WANT[i]);
        one(bpe, 0, TEXT[i], TEXT[i]);
    }
    tfm_bpe_free(bpe);
    /* the folder given as a file inside it (a --model flag naming model.safetensors) */
    bpe = NULL;
    CHECK(tfm_bpe_load_dir(test_path("tests/fixtures/gpt2/model.safetensors"), &bpe, NULL) == TFM_OK,
          "load through model.safetensors: %s", tfm_last_error());
    tfm_bpe_free(bpe);
    /* a mistyped folder inside the fixture (which holds tokenizer.json): an error naming it, not
     * the fixture's tokenizer */
    bpe = NULL;
    const char *typo = test_path("tests/fixtures/gpt2/qwen2-typo");
    tfm_status st = tfm_bpe_load_dir(typo, &bpe, NULL);
    CHECK(st == TFM_ERR_IO && !bpe && strstr(tfm_last_error(), typo), "mistyped folder: status %d, '%s'", (int)st,
          tfm_last_error());
    tfm_bpe_free(bpe);
    return test_finish("hf_stream");
}
