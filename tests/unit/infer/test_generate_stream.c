/* tfm_text_stream (src/infer/generate_stream.c): the bytes streamed one id at a time equal the
 * decode of the whole sequence, also when a character arrives as several byte-fallback pieces
 * (fuzz/tok400.model has byte fallback and few pieces, so "’" (3 bytes) and "😀" (4 bytes) are
 * spelled byte by byte). */
#include "test_util.h"
#include "tfm/generate.h"

/* Streams ids[0..n) one at a time after a prompt of np ids, then final; returns the concatenation
 * (malloc'd, *len bytes). */
static char *stream_all(const tfm_tokenizer *tok, const int32_t *ids, size_t np, size_t n, size_t *len) {
    tfm_text_stream s;
    char *acc = malloc(4096);
    *len = 0;
    const char *p;
    size_t k;
    int ok = tfm_text_stream_init(&s, tok, ids, np, n - np) == TFM_OK;
    ok = ok && tfm_text_stream_push(&s, NULL, 0, 0, &p, &k) == TFM_OK;
    if (ok && k) memcpy(acc + *len, p, k), *len += k;
    for (size_t i = np; ok && i < n; i++) {
        ok = tfm_text_stream_push(&s, ids + i, 1, 0, &p, &k) == TFM_OK;
        if (ok && k) memcpy(acc + *len, p, k), *len += k;
        /* what was streamed is always a prefix of the decode so far */
        CHECK(!ok || (*len <= s.len && memcmp(acc, s.text, *len) == 0), "after id %zu: streamed bytes are no prefix",
              i);
    }
    ok = ok && tfm_text_stream_push(&s, NULL, 0, 1, &p, &k) == TFM_OK;
    if (ok && k) memcpy(acc + *len, p, k), *len += k;
    CHECK(ok && !s.diverged, "stream: %s", ok ? "diverged" : tfm_last_error());
    tfm_text_stream_free(&s);
    return acc;
}

int main(void) {
    tfm_tokenizer *tok = NULL;
    if (tfm_tokenizer_load_file(test_path("fuzz/tok400.model"), &tok) != TFM_OK) {
        fprintf(stderr, "load fuzz/tok400.model: %s\n", tfm_last_error());
        return 1;
    }
    const char *texts[] = {"it\xE2\x80\x99s a \xF0\x9F\x98\x80 face", "\xF0\x9F\x98\x80\xF0\x9F\x98\x80 x",
                           "a\xE2\x80\x99\xE2\x80\x99\xF0\x9F\x98\x80"};
    for (size_t t = 0; t < sizeof texts / sizeof texts[0]; t++) {
        int32_t *ids = NULL;
        size_t n = 0;
        CHECK(tfm_tokenizer_encode(tok, texts[t], strlen(texts[t]), &ids, &n) == TFM_OK, "encode: %s",
              tfm_last_error());
        CHECK(n > strlen(texts[t]) / 2, "text %zu: only %zu ids (expected byte pieces)", t, n);
        char *want = NULL;
        size_t wlen = 0;
        CHECK(tfm_tokenizer_decode(tok, ids, n, &want, &wlen) == TFM_OK, "decode: %s", tfm_last_error());
        for (size_t np = 0; np <= 2 && np <= n; np++) { /* with no prompt, and the first ids as the prompt */
            size_t len = 0;
            char *got = stream_all(tok, ids, np, n, &len);
            CHECK(want && len == wlen && memcmp(got, want, len) == 0, "text %zu prompt %zu: streamed %.*s, decode %s",
                  t, np, (int)len, got, want ? want : "?");
            free(got);
        }
        free(want);
        free(ids);
    }
    /* an id beyond the room given at init is refused */
    tfm_text_stream s;
    const int32_t one = 5;
    const char *p;
    size_t k;
    CHECK(tfm_text_stream_init(&s, tok, NULL, 0, 0) == TFM_OK, "init: %s", tfm_last_error());
    CHECK(tfm_text_stream_push(&s, &one, 1, 0, &p, &k) == TFM_ERR_RANGE && k == 0, "push past cap accepted");
    tfm_text_stream_free(&s);
    tfm_tokenizer_free(tok);
    return test_finish("generate_stream");
}
