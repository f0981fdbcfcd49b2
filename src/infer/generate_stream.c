/* The text stream of tfm generate (include/tfm/generate.h, tfm_text_stream): re-decode the whole
 * sequence after each id and hand out only the settled bytes. */
#include "core_internal.h"
#include "tfm/generate.h"

#include <stdlib.h>
#include <string.h>

#define FFFD "\xEF\xBF\xBD" /* U+FFFD in UTF-8 */

/* Either tokenizer (tok or bpe). */
static tfm_status stream_init(tfm_text_stream *s, const tfm_tokenizer *tok, const tfm_bpe *bpe, int clean_up,
                              const int32_t *prompt, size_t n_prompt, size_t max_new) {
    RETURN_IF(!s, TFM_ERR_INVALID_ARG, "tfm_text_stream_init: NULL stream");
    memset(s, 0, sizeof *s);
    RETURN_IF((!tok && !bpe) || (n_prompt && !prompt), TFM_ERR_INVALID_ARG, "tfm_text_stream_init: NULL argument");
    s->bpe = bpe;
    s->clean_up = bpe && clean_up;
    RETURN_IF(max_new > SIZE_MAX / sizeof(int32_t) - n_prompt - 1, TFM_ERR_RANGE,
              "tfm_text_stream_init: %zu new ids do not fit in memory", max_new);
    s->tok = tok;
    s->cap = n_prompt + max_new;
    s->ids = malloc(sizeof(int32_t) * (s->cap ? s->cap : 1));
    RETURN_IF(!s->ids, TFM_ERR_NOMEM, "tfm_text_stream_init: out of memory (%zu ids)", s->cap);
    if (n_prompt) memcpy(s->ids, prompt, n_prompt * sizeof *prompt);
    s->n = n_prompt;
    return TFM_OK;
}

tfm_status tfm_text_stream_init(tfm_text_stream *s, const tfm_tokenizer *tok, const int32_t *prompt,
                                size_t n_prompt, size_t max_new) {
    return stream_init(s, tok, NULL, 0, prompt, n_prompt, max_new);
}

tfm_status tfm_text_stream_init_bpe(tfm_text_stream *s, const tfm_bpe *bpe, int clean_up, const int32_t *prompt,
                                    size_t n_prompt, size_t max_new) {
    return stream_init(s, NULL, bpe, clean_up, prompt, n_prompt, max_new);
}

/* transformers' clean_up_tokenization (tokenization_utils_base.py), its replacements in order. */
static const char *const k_cleanup[][2] = {{" .", "."},   {" ?", "?"},     {" !", "!"},   {" ,", ","},
                                           {" ' ", "'"},  {" n't", "n't"}, {" 'm", "'m"}, {" 's", "'s"},
                                           {" 've", "'ve"}, {" 're", "'re"}};
#define N_CLEANUP (sizeof k_cleanup / sizeof *k_cleanup)

/* text[0..*len) with every occurrence of `from` replaced by the shorter `to`, in place, left to
 * right without overlaps (Python's str.replace). */
static void replace_all(char *text, size_t *len, const char *from, const char *to) {
    const size_t nf = strlen(from), nt = strlen(to);
    size_t r = 0, w = 0;
    while (r < *len) {
        if (r + nf <= *len && memcmp(text + r, from, nf) == 0) {
            memmove(text + w, to, nt);
            w += nt, r += nf;
        } else {
            text[w++] = text[r++];
        }
    }
    *len = w;
    text[w] = '\0';
}

/* Bytes at the end of text[0..len) that could still become a clean-up pattern: the longest suffix
 * that is a proper prefix of one. */
static size_t cleanup_pending(const char *text, size_t len) {
    size_t best = 0;
    for (size_t k = 0; k < N_CLEANUP; k++) {
        const size_t n = strlen(k_cleanup[k][0]);
        for (size_t m = n - 1; m > best; m--)
            if (m <= len && memcmp(text + len - m, k_cleanup[k][0], m) == 0) {
                best = m;
                break;
            }
    }
    return best;
}

/* End of the settled part of text[0..len): before the trailing U+FFFDs (up to 3) unless final. */
static size_t settled_end(const char *text, size_t len, int final) {
    size_t end = len;
    for (int k = 0; !final && k < 3 && end >= 3 && memcmp(text + end - 3, FFFD, 3) == 0; k++) end -= 3;
    return end;
}

tfm_status tfm_text_stream_push(tfm_text_stream *s, const int32_t *ids, size_t n, int final, const char **out,
                                size_t *out_len) {
    RETURN_IF(!s || !out || !out_len || (n && !ids), TFM_ERR_INVALID_ARG, "tfm_text_stream_push: NULL argument");
    *out = NULL;
    *out_len = 0;
    RETURN_IF(n > s->cap - s->n, TFM_ERR_RANGE, "tfm_text_stream_push: %zu ids exceed the stream's room of %zu",
              n, s->cap - s->n);
    if (n) memcpy(s->ids + s->n, ids, n * sizeof *ids);
    char *text = NULL;
    size_t len = 0;
    if (s->bpe) {
        TRY(tfm_bpe_decode(s->bpe, s->ids, s->n + n, 1, &text, &len));
        for (size_t k = 0; s->clean_up && k < N_CLEANUP; k++) replace_all(text, &len, k_cleanup[k][0], k_cleanup[k][1]);
    } else {
        TRY(tfm_tokenizer_decode(s->tok, s->ids, s->n + n, &text, &len));
    }
    s->n += n;
    free(s->text);
    s->text = text;
    s->len = len;
    if (s->diverged) return TFM_OK;
    if (len < s->n_shown || (s->n_shown && memcmp(text, s->shown, s->n_shown) != 0)) { /* nothing shown yet: shown may be NULL */
        s->diverged = 1;
        return TFM_OK;
    }
    size_t end = settled_end(text, len, final);
    if (s->clean_up && !final && end == len) end -= cleanup_pending(text, len);
    if (end <= s->n_shown) return TFM_OK;
    if (end > s->shown_cap) {
        size_t cap = s->shown_cap ? s->shown_cap : 64;
        while (cap < end) cap *= 2;
        char *p = realloc(s->shown, cap);
        RETURN_IF(!p, TFM_ERR_NOMEM, "tfm_text_stream_push: out of memory (%zu bytes of text)", cap);
        s->shown = p;
        s->shown_cap = cap;
    }
    memcpy(s->shown + s->n_shown, text + s->n_shown, end - s->n_shown);
    *out = text + s->n_shown;
    *out_len = end - s->n_shown;
    s->n_shown = end;
    return TFM_OK;
}

void tfm_text_stream_free(tfm_text_stream *s) {
    if (!s) return;
    free(s->ids);
    free(s->text);
    free(s->shown);
    memset(s, 0, sizeof *s);
}
