/* The mteval-v13a tokeniser as sacreBLEU 2.6.0 applies it (tokenizer_13a.py, tokenizer_re.py),
 * reimplemented as byte passes over UTF-8. Each pass reproduces one str.replace() or one
 * re.sub() of the original in order: re.sub scans left to right and never overlaps matches, so a
 * pattern of two fixed characters becomes "at position i, test s[i] and s[i+1]; on a match emit
 * the replacement and skip both, else copy s[i]". The regexes only name ASCII characters, and a
 * UTF-8 continuation or lead byte is never ASCII, so scanning bytes gives the same result as
 * scanning code points. Word splitting uses Python's whitespace set (bleu_is_py_space). */
#include "bleu_internal.h"
#include "core_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    char *p;
    size_t len, cap;
    int oom;
} sbuf;

static void sb_reserve(sbuf *b, size_t extra) {
    if (b->oom) return;
    if (extra > SIZE_MAX - b->len - 1) {
        b->oom = 1;
        return;
    }
    size_t need = b->len + extra + 1;
    if (need <= b->cap) return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->oom = 1;
        return;
    }
    b->p = p;
    b->cap = cap;
}

static void sb_put(sbuf *b, const char *s, size_t n) {
    sb_reserve(b, n);
    if (b->oom) return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void sb_putc(sbuf *b, char c) { sb_put(b, &c, 1); }

/* Python's str.replace(from, to) over the whole of s: left to right, non-overlapping. */
static void replace_all(sbuf *out, const char *s, size_t n, const char *from, const char *to) {
    size_t fl = strlen(from), tl = strlen(to), i = 0;
    sb_reserve(out, n);
    while (i < n) {
        if (n - i >= fl && memcmp(s + i, from, fl) == 0) {
            sb_put(out, to, tl);
            i += fl;
        } else {
            sb_putc(out, s[i++]);
        }
    }
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* re.compile(r'([\{-\~\[-\` -\&\(-\+\:-\@\/])') : the ASCII punctuation except ' , - . and,
 * through the range " -&", the space itself. */
static int is_13a_punct(char c) {
    return (c >= '{' && c <= '~') || (c >= '[' && c <= '`') || (c >= ' ' && c <= '&') ||
           (c >= '(' && c <= '+') || (c >= ':' && c <= '@') || c == '/';
}

/* One pass of the three two-character rules of tokenizer_re.py:
 *   rule 1: ([^0-9])([\.,]) -> "\1 \2 "   (period/comma not preceded by a digit)
 *   rule 2: ([\.,])([^0-9]) -> " \1 \2"   (period/comma not followed by a digit)
 *   rule 3: ([0-9])(-)      -> "\1 \2 "   (dash after a digit) */
static void pair_rule(sbuf *out, const char *s, size_t n, int rule) {
    size_t i = 0;
    sb_reserve(out, n + n / 2);
    while (i < n) {
        if (i + 1 < n) {
            char a = s[i], b = s[i + 1];
            int hit = rule == 1 ? (!is_digit(a) && (b == '.' || b == ','))
                    : rule == 2 ? ((a == '.' || a == ',') && !is_digit(b))
                                : (is_digit(a) && b == '-');
            if (hit) {
                char rep[4];
                if (rule == 2) {
                    rep[0] = ' ', rep[1] = a, rep[2] = ' ', rep[3] = b;
                } else {
                    rep[0] = a, rep[1] = ' ', rep[2] = b, rep[3] = ' ';
                }
                sb_put(out, rep, 4);
                i += 2;
                continue;
            }
        }
        sb_putc(out, s[i++]);
    }
}

/* Length of s[0..n) without trailing Python whitespace (str.rstrip()). */
static size_t rstrip_len(const char *s, size_t n) {
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, keep = 0;
    while (i < n) {
        uint32_t cp;
        size_t k = utf8_decode(u + i, n - i, &cp);
        if (k == 0) k = 1; /* callers validate first; never loop forever */
        i += k;
        if (!bleu_is_py_space(cp)) keep = i;
    }
    return keep;
}

/* ' '.join(s.split()) with Python's whitespace set. */
static void split_join(sbuf *out, const char *s, size_t n) {
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    int in_word = 0, any = 0;
    sb_reserve(out, n);
    while (i < n) {
        uint32_t cp;
        size_t k = utf8_decode(u + i, n - i, &cp);
        if (k == 0) k = 1, cp = u[i];
        if (bleu_is_py_space(cp)) {
            in_word = 0;
        } else {
            if (!in_word && any) sb_putc(out, ' ');
            sb_put(out, s + i, k);
            in_word = any = 1;
        }
        i += k;
    }
    if (!any) sb_put(out, "", 0); /* make sure the buffer exists and is terminated */
}

/* Moves `b` into `a` (freeing a's storage) and resets b, for chaining passes. */
static void sb_swap_in(sbuf *a, sbuf *b) {
    int oom = a->oom | b->oom; /* an allocation failure anywhere in the chain sticks */
    free(a->p);
    *a = *b;
    a->oom = oom;
    memset(b, 0, sizeof *b);
}

tfm_status bleu_tokenize_13a(const char *line, size_t n, char **out, size_t *out_len) {
    sbuf cur = {0}, nxt = {0};
    int oom = 0;
    n = rstrip_len(line, n); /* BLEU._preprocess_segment: sent.rstrip() */

    /* Language-independent part of Tokenizer13a. */
    replace_all(&cur, line, n, "<skipped>", "");
    replace_all(&nxt, cur.p ? cur.p : "", cur.len, "-\n", "");
    sb_swap_in(&cur, &nxt);
    replace_all(&nxt, cur.p ? cur.p : "", cur.len, "\n", " ");
    sb_swap_in(&cur, &nxt);
    if (cur.len > 0 && memchr(cur.p, '&', cur.len)) {
        static const char *const ent[4][2] = {
            {"&quot;", "\""}, {"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"}};
        for (int e = 0; e < 4; e++) {
            replace_all(&nxt, cur.p, cur.len, ent[e][0], ent[e][1]);
            sb_swap_in(&cur, &nxt);
        }
    }
    oom |= cur.oom;

    /* f' {line} ', then the language-dependent regexes of TokenizerRegexp. */
    sb_putc(&nxt, ' ');
    for (size_t i = 0; i < cur.len; i++) {
        char c = cur.p[i];
        if (is_13a_punct(c)) {
            char rep[3] = {' ', c, ' '};
            sb_put(&nxt, rep, 3);
        } else {
            sb_putc(&nxt, c);
        }
    }
    sb_putc(&nxt, ' ');
    sb_swap_in(&cur, &nxt);
    for (int rule = 1; rule <= 3; rule++) {
        pair_rule(&nxt, cur.p, cur.len, rule);
        sb_swap_in(&cur, &nxt);
    }
    split_join(&nxt, cur.p, cur.len);
    sb_swap_in(&cur, &nxt);
    oom |= cur.oom;

    if (oom || !cur.p) {
        free(cur.p);
        free(nxt.p);
        return tfm_set_error(TFM_ERR_NOMEM, "13a tokenizer: out of memory on a %zu-byte line", n);
    }
    *out = cur.p;
    *out_len = cur.len;
    return TFM_OK;
}
