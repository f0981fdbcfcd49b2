/* The pre-tokeniser of byte-level BPE (bpe_internal.h): the regular expressions of GPT-2,
 * Llama-3 and Qwen2 written out by hand over Unicode categories from utf8proc, with the
 * semantics of the Oniguruma engine `tokenizers` uses (leftmost match, alternatives tried in
 * order, greedy quantifiers that backtrack):
 *   \p{L}  categories Lu Ll Lt Lm Lo;   \p{N}  Nd Nl No;
 *   \s     Unicode White_Space: U+0009..U+000D, U+0085 and categories Zs, Zl, Zp (so NBSP is
 *          whitespace);
 *   (?i:'s|...)  ASCII case folding plus U+017F LATIN SMALL LETTER LONG S, which folds to 's'.
 * Each pattern matches every character of its input, so the pieces are exactly its matches
 * (Split with behavior Isolated). A match is computed on the piece it is given: the look-ahead
 * (?!\S) sees the piece's end as the end of the text, as in `tokenizers`, where each earlier
 * split is a string of its own. Digits (individual_digits) makes every \p{N} character a piece. */
#include "bpe_internal.h"

#include <utf8proc.h>

static utf8proc_category_t cat(uint32_t c) { return utf8proc_category((utf8proc_int32_t)c); }

static int is_L(uint32_t c) {
    utf8proc_category_t k = cat(c);
    return k >= UTF8PROC_CATEGORY_LU && k <= UTF8PROC_CATEGORY_LO;
}

static int is_N(uint32_t c) {
    utf8proc_category_t k = cat(c);
    return k >= UTF8PROC_CATEGORY_ND && k <= UTF8PROC_CATEGORY_NO;
}

static int is_space(uint32_t c) {
    if (c < 0x80) return c == ' ' || (c >= 0x09 && c <= 0x0D);
    if (c == 0x85) return 1;
    utf8proc_category_t k = cat(c);
    return k == UTF8PROC_CATEGORY_ZS || k == UTF8PROC_CATEGORY_ZL || k == UTF8PROC_CATEGORY_ZP;
}

/* [^\s\p{L}\p{N}] */
static int is_other(uint32_t c) { return !is_space(c) && !is_L(c) && !is_N(c); }

static int is_crlf(uint32_t c) { return c == '\r' || c == '\n'; }

/* Lower case for the contractions: ASCII, and U+017F as 's'. */
static uint32_t fold(uint32_t c, int ci) {
    if (!ci) return c;
    if (c >= 'A' && c <= 'Z') return c + 32;
    return c == 0x17F ? 's' : c;
}

/* 's|'t|'re|'ve|'m|'ll|'d at c[i] (case-insensitive when ci): the end, or i when none. */
static size_t contraction(const uint32_t *c, size_t n, size_t i, int ci) {
    if (c[i] != '\'' || i + 1 >= n) return i;
    const uint32_t a = fold(c[i + 1], ci), b = i + 2 < n ? fold(c[i + 2], ci) : 0;
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return i + 2;
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return i + 3;
    return i;
}

static size_t run(const uint32_t *c, size_t n, size_t i, int (*cls)(uint32_t)) {
    while (i < n && cls(c[i])) i++;
    return i;
}

/* \s+(?!\S)|\s+ at a whitespace character c[i]: the run, less its last character when a
 * non-space follows and the run is longer than one. */
static size_t spaces(const uint32_t *c, size_t n, size_t i) {
    const size_t e = run(c, n, i, is_space);
    return e < n && e - 1 > i ? e - 1 : e;
}

/* GPT-2: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+ */
static size_t match_gpt2(const uint32_t *c, size_t n, size_t i) {
    size_t e = contraction(c, n, i, 0);
    if (e > i) return e;
    const size_t j = c[i] == ' ' && i + 1 < n ? i + 1 : i;
    if (is_L(c[j])) return run(c, n, j, is_L);
    if (is_N(c[j])) return run(c, n, j, is_N);
    if (is_other(c[j])) return run(c, n, j, is_other);
    return spaces(c, n, i); /* c[i] is whitespace */
}

/* Llama-3 (max_digits 3) and Qwen2 (1):
 * (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|
 * \s*[\r\n]+|\s+(?!\S)|\s+ */
static size_t match_llama3(const uint32_t *c, size_t n, size_t i, size_t max_digits) {
    size_t e = contraction(c, n, i, 1);
    if (e > i) return e;
    if (!is_crlf(c[i]) && !is_L(c[i]) && !is_N(c[i]) && i + 1 < n && is_L(c[i + 1])) return run(c, n, i + 1, is_L);
    if (is_L(c[i])) return run(c, n, i, is_L);
    if (is_N(c[i])) {
        for (e = i + 1; e < n && e - i < max_digits && is_N(c[e]);) e++;
        return e;
    }
    const size_t j = c[i] == ' ' && i + 1 < n && is_other(c[i + 1]) ? i + 1 : i;
    if (is_other(c[j])) return run(c, n, run(c, n, j, is_other), is_crlf);
    /* c[i] is whitespace: \s*[\r\n]+ ends after the run's last CR or LF */
    const size_t r = run(c, n, i, is_space);
    for (e = r; e > i; e--)
        if (is_crlf(c[e - 1])) return e;
    return spaces(c, n, i);
}

/* The end of the match of a pattern step at c[i] (always past i). */
static size_t match(bpe_step step, const uint32_t *c, size_t n, size_t i) {
    if (step == BPE_STEP_GPT2) return match_gpt2(c, n, i);
    return match_llama3(c, n, i, step == BPE_STEP_LLAMA3 ? 3 : 1);
}

/* Splits [s, e) by step k and hands each part to step k + 1 (after the last: to piece). */
static int apply(const struct tfm_bpe *b, size_t k, const uint32_t *cps, size_t s, size_t e, bpe_piece_fn piece,
                 void *ctx) {
    if (k == b->n_steps) return piece(ctx, s, e);
    const bpe_step step = b->steps[k];
    for (size_t i = s; i < e;) {
        size_t j;
        if (step == BPE_STEP_DIGITS) { /* a digit alone, or the run up to the next digit */
            j = i + 1;
            if (!is_N(cps[i]))
                while (j < e && !is_N(cps[j])) j++;
        } else {
            j = s + match(step, cps + s, e - s, i - s);
        }
        if (!apply(b, k + 1, cps, i, j, piece, ctx)) return 0;
        i = j;
    }
    return 1;
}

int bpe_pretokenize(const struct tfm_bpe *b, const uint32_t *cps, size_t n, bpe_piece_fn piece, void *ctx) {
    return n == 0 || apply(b, 0, cps, 0, n, piece, ctx);
}
