/* BERT's basic tokenizer on code points: the normaliser and the pre-tokeniser (wordpiece.h steps 2
 * and 3), defined as Hugging Face `tokenizers` defines them (normalizers/bert.rs,
 * pre_tokenizers/bert.rs), which follows the BasicTokenizer of Google's BERT code
 * (tokenization.py). Character properties come from utf8proc (its Unicode version:
 * utf8proc_unicode_version()); the few definitions of our own are the ones BERT states:
 *   whitespace   Unicode White_Space = categories Zs, Zl, Zp and U+0009..U+000D, U+0085
 *                (Rust's char::is_whitespace, which `tokenizers` uses);
 *   control      categories Cc, Cf, Co (and Cs, which UTF-8 cannot hold), tab/LF/CR excepted.
 *                Unassigned code points (Cn) are kept: `tokenizers` keeps them (they become
 *                [UNK]), measured with tokenizers 0.23 (docs/WORDPIECE.md);
 *   punctuation  ASCII 0x21..0x2F, 0x3A..0x40, 0x5B..0x60, 0x7B..0x7E (so $ + < = > ^ ` | ~,
 *                symbols in Unicode, count too) and categories Pc, Pd, Ps, Pe, Pi, Pf, Po;
 *   CJK          the CJK Unified Ideographs blocks as `tokenizers` lists them (note its range
 *                starts at U+2B920 where BERT's Python says U+2B820: we follow `tokenizers`). */
#include "wordpiece_internal.h"

#include <stdlib.h>
#include <utf8proc.h>

int wp_cps_push(wp_cps *a, uint32_t c) {
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 256;
        uint32_t *p = realloc(a->v, cap * sizeof *p);
        if (!p) return 0;
        a->v = p;
        a->cap = cap;
    }
    a->v[a->n++] = c;
    return 1;
}

static utf8proc_category_t category(uint32_t c) { return utf8proc_category((utf8proc_int32_t)c); }

static int is_whitespace(uint32_t c) {
    if ((c >= 0x09 && c <= 0x0D) || c == 0x85) return 1;
    utf8proc_category_t k = category(c);
    return k == UTF8PROC_CATEGORY_ZS || k == UTF8PROC_CATEGORY_ZL || k == UTF8PROC_CATEGORY_ZP;
}

static int is_control(uint32_t c) {
    if (c == '\t' || c == '\n' || c == '\r') return 0;
    utf8proc_category_t k = category(c);
    return k == UTF8PROC_CATEGORY_CC || k == UTF8PROC_CATEGORY_CF || k == UTF8PROC_CATEGORY_CO ||
           k == UTF8PROC_CATEGORY_CS;
}

static int is_punctuation(uint32_t c) {
    if ((c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) ||
        (c >= 0x7B && c <= 0x7E))
        return 1;
    utf8proc_category_t k = category(c);
    return k >= UTF8PROC_CATEGORY_PC && k <= UTF8PROC_CATEGORY_PO; /* Pc Pd Ps Pe Pi Pf Po */
}

static int is_chinese(uint32_t c) {
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
           (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

static int combining_class(uint32_t c) { return utf8proc_get_property((utf8proc_int32_t)c)->combining_class; }

/* Runs up to this long are insertion-sorted in place; longer ones counting-sorted. */
#define WP_SHORT_RUN 32

/* Stable sort of v[0..m) (one run of non-starters) by combining class: insertion sort for a
 * short run, else a counting sort over the classes 0..255 through scratch (grown to m). Returns
 * 0 when out of memory. */
static int sort_run(uint32_t *v, size_t m, wp_cps *scratch) {
    if (m <= WP_SHORT_RUN) {
        for (size_t i = 1; i < m; i++) {
            const uint32_t c = v[i];
            const int cc = combining_class(c);
            size_t j = i;
            while (j > 0 && combining_class(v[j - 1]) > cc) { /* an equal class stops it: stable */
                v[j] = v[j - 1];
                j--;
            }
            v[j] = c;
        }
        return 1;
    }
    if (scratch->cap < m) {
        uint32_t *p = realloc(scratch->v, m * sizeof *p);
        if (!p) return 0;
        scratch->v = p;
        scratch->cap = m;
    }
    size_t start[257] = {0};
    for (size_t i = 0; i < m; i++) start[combining_class(v[i]) + 1]++;
    for (size_t c = 1; c < 257; c++) start[c] += start[c - 1];
    for (size_t i = 0; i < m; i++) scratch->v[start[combining_class(v[i])]++] = v[i];
    for (size_t i = 0; i < m; i++) v[i] = scratch->v[i];
    return 1;
}

/* The canonical ordering algorithm (Unicode §3.11, D109): within each maximal run of characters
 * whose canonical combining class is not 0, a stable sort by that class. O(n) overall (a run of
 * m > WP_SHORT_RUN marks costs O(m + 256)): a line of 600 KB of marks is one run. scratch's
 * contents are overwritten. Returns 0 when out of memory. */
static int canonical_order(uint32_t *v, size_t n, wp_cps *scratch) {
    scratch->n = 0;
    size_t i = 0;
    while (i < n) {
        if (combining_class(v[i]) == 0) {
            i++;
            continue;
        }
        size_t j = i + 1;
        while (j < n && combining_class(v[j]) != 0) j++;
        if (!sort_run(v + i, j - i, scratch)) return 0;
        i = j;
    }
    return 1;
}

/* NFD (canonical decomposition, Hangul included, then canonical order), then drop every Mn. in's
 * contents are spent: its array is the canonical ordering's scratch. */
static int strip_accents(wp_cps *in, wp_cps *out) {
    out->n = 0;
    for (size_t i = 0; i < in->n; i++) {
        utf8proc_int32_t d[32];
        utf8proc_ssize_t k = utf8proc_decompose_char((utf8proc_int32_t)in->v[i], d, 32, UTF8PROC_DECOMPOSE, NULL);
        if (k < 0 || k > 32) { /* cannot happen for a valid code point (decompositions are ≤ 4 long) */
            d[0] = (utf8proc_int32_t)in->v[i];
            k = 1;
        }
        for (utf8proc_ssize_t j = 0; j < k; j++)
            if (!wp_cps_push(out, (uint32_t)d[j])) return 0;
    }
    if (!canonical_order(out->v, out->n, in)) return 0;
    size_t m = 0;
    for (size_t i = 0; i < out->n; i++)
        if (category(out->v[i]) != UTF8PROC_CATEGORY_MN) out->v[m++] = out->v[i];
    out->n = m;
    return 1;
}

/* Full lower case (Rust's char::to_lowercase): utf8proc's simple mapping, plus the one
 * unconditional multi-character mapping of SpecialCasing.txt, U+0130 → U+0069 U+0307. */
static int lowercase(const wp_cps *in, wp_cps *out) {
    out->n = 0;
    for (size_t i = 0; i < in->n; i++) {
        uint32_t c = in->v[i];
        if (c == 0x130) {
            if (!wp_cps_push(out, 0x69) || !wp_cps_push(out, 0x307)) return 0;
        } else if (!wp_cps_push(out, (uint32_t)utf8proc_tolower((utf8proc_int32_t)c))) {
            return 0;
        }
    }
    return 1;
}

int wp_normalize(const tfm_wordpiece_settings *s, const uint32_t *in, size_t n, wp_cps *out, wp_cps *tmp) {
    wp_cps *cur = out, *next = tmp;
    cur->n = 0;
    for (size_t i = 0; i < n; i++) { /* clean_text */
        uint32_t c = in[i];
        if (s->clean_text) {
            if (c == 0 || c == 0xFFFD || is_control(c)) continue;
            if (is_whitespace(c)) c = ' ';
        }
        if (s->handle_chinese_chars && is_chinese(c)) {
            if (!wp_cps_push(cur, ' ') || !wp_cps_push(cur, c) || !wp_cps_push(cur, ' ')) return 0;
        } else if (!wp_cps_push(cur, c)) {
            return 0;
        }
    }
    if (s->strip_accents) {
        if (!strip_accents(cur, next)) return 0;
        wp_cps *t = cur; cur = next; next = t;
    }
    if (s->lowercase) {
        if (!lowercase(cur, next)) return 0;
        wp_cps *t = cur; cur = next; next = t;
    }
    if (cur != out) { /* the result is in tmp: swap the two arrays */
        wp_cps t = *out;
        *out = *tmp;
        *tmp = t;
    }
    return 1;
}

int wp_next_word(const uint32_t *cps, size_t n, size_t *pos, size_t *start, size_t *end) {
    size_t i = *pos;
    while (i < n && is_whitespace(cps[i])) i++;
    if (i == n) {
        *pos = n;
        return 0;
    }
    *start = i;
    if (is_punctuation(cps[i])) {
        i++;
    } else {
        while (i < n && !is_whitespace(cps[i]) && !is_punctuation(cps[i])) i++;
    }
    *end = *pos = i;
    return 1;
}
