/* BLEU, chrF2 and the 13a tokeniser against values pinned from sacreBLEU 2.6.0
 * (tests/fixtures/bleu/expected.tsv and tok13a.out, made by tests/reference/bleu_expected.py),
 * plus hand-computed cases, the streaming API, and the error paths. */
#include "test_util.h"

#include "bleu_internal.h"
#include "tfm/bleu.h"

#include <stdint.h>

#define FIX "tests/fixtures/bleu/"

/* Reads a whole file into a NUL-terminated malloc'ed buffer (NULL if it cannot). */
static char *slurp(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (cap - n < 2) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) free(buf);
            buf = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf) buf[n] = '\0';
    if (size) *size = n;
    return buf;
}

/* Splits buf in place at every '\n' (a last line without '\n' counts); returns the line count. */
static size_t split_lines(char *buf, size_t size, char **lines, size_t max) {
    size_t n = 0, start = 0;
    while (start < size && n < max) {
        char *nl = memchr(buf + start, '\n', size - start);
        size_t end = nl ? (size_t)(nl - buf) : size;
        buf[end] = '\0';
        lines[n++] = buf + start;
        start = end + 1;
    }
    return n;
}

static void test_expected_table(void) {
    size_t size;
    char *tsv = slurp(test_path(FIX "expected.tsv"), &size);
    CHECK(tsv != NULL, "cannot read %s", test_path(FIX "expected.tsv"));
    if (!tsv) return;
    char *lines[256];
    size_t n = split_lines(tsv, size, lines, 256), rows = 0;
    for (size_t i = 0; i < n; i++) {
        char *l = lines[i];
        if (l[0] == '#') {
            if (strncmp(l, "# BLEU|", 7) == 0)
                CHECK(strcmp(l + 2, tfm_bleu_signature()) == 0, "BLEU signature '%s' vs pinned '%s'",
                      tfm_bleu_signature(), l + 2);
            if (strncmp(l, "# chrF2|", 8) == 0)
                CHECK(strcmp(l + 2, tfm_chrf_signature()) == 0, "chrF signature '%s' vs pinned '%s'",
                      tfm_chrf_signature(), l + 2);
            continue;
        }
        if (!l[0]) continue;
        char *f[6];
        int nf = 0;
        for (char *p = l; nf < 6; nf++) {
            f[nf] = p;
            char *tab = strchr(p, '\t');
            if (!tab) {
                nf++;
                break;
            }
            *tab = '\0';
            p = tab + 1;
        }
        CHECK(nf == 6, "expected.tsv line %zu has %d fields", i + 1, nf);
        if (nf != 6) continue;
        rows++;
        char hyp[512], ref[512];
        snprintf(hyp, sizeof hyp, "%s", test_path(FIX));
        snprintf(hyp + strlen(hyp), sizeof hyp - strlen(hyp), "%s.hyp", f[0]);
        snprintf(ref, sizeof ref, "%.*s.ref", (int)(strlen(hyp) - 4), hyp);
        tfm_bleu_stats b = {0};
        tfm_chrf_stats c = {0};
        size_t nl = 0;
        tfm_status st = tfm_bleu_chrf_files(hyp, ref, &b, &c, &nl);
        CHECK(st == TFM_OK, "%s: %s", f[0], tfm_last_error());
        if (st != TFM_OK) continue;
        CHECK(nl == (size_t)strtoul(f[1], NULL, 10), "%s: %zu lines, want %s", f[0], nl, f[1]);
        tfm_bleu_score s = tfm_bleu_compute(&b);
        char name[128], line[512];
        snprintf(name, sizeof name, "%s BLEU", f[0]);
        CHECK_NEAR(s.score, strtod(f[2], NULL), 1e-9, name);
        tfm_bleu_format(&s, line, sizeof line);
        CHECK(strcmp(line, f[3]) == 0, "%s:\n  got  %s\n  want %s", f[0], line, f[3]);
        double chrf = tfm_chrf_compute(&c);
        snprintf(name, sizeof name, "%s chrF2", f[0]);
        CHECK_NEAR(chrf, strtod(f[4], NULL), 1e-9, name);
        snprintf(line, sizeof line, "chrF2 = %.2f", chrf);
        CHECK(strcmp(line, f[5]) == 0, "%s: got '%s', want '%s'", f[0], line, f[5]);
        CHECK(b.n_segments == nl && c.n_segments == nl, "%s: segment counts", f[0]);
    }
    CHECK(rows >= 14, "expected.tsv holds only %zu rows", rows);
    free(tsv);
}

static void test_tokenizer_table(void) {
    size_t si, so;
    char *in = slurp(test_path(FIX "tok13a.in"), &si), *out = slurp(test_path(FIX "tok13a.out"), &so);
    CHECK(in && out, "cannot read tok13a.in / tok13a.out");
    if (in && out) {
        static char *li[1024], *lo[1024];
        size_t ni = split_lines(in, si, li, 1024), no = split_lines(out, so, lo, 1024);
        CHECK(ni == no && ni >= 300, "tok13a.in has %zu lines, tok13a.out %zu", ni, no);
        for (size_t i = 0; i < ni && i < no; i++) {
            char *t = NULL;
            size_t tl = 0;
            tfm_status st = bleu_tokenize_13a(li[i], strlen(li[i]), &t, &tl);
            CHECK(st == TFM_OK && strcmp(t, lo[i]) == 0 && tl == strlen(lo[i]),
                  "tok13a.in line %zu: got '%s', want '%s'", i + 1, t ? t : "(null)", lo[i]);
            free(t);
        }
    }
    free(in);
    free(out);
}

static char *tok(const char *s) {
    char *t = NULL;
    size_t tl;
    if (bleu_tokenize_13a(s, strlen(s), &t, &tl) != TFM_OK) return NULL;
    return t;
}

/* Tokeniser rules written out by hand (independent of the pinned table). */
static void test_tokenizer_rules(void) {
    static const char *const cases[][2] = {
        {"Hello, world.", "Hello , world ."},
        {"$1,000.50 and 3.14.", "$ 1,000.50 and 3.14 ."},
        {"x-ray 5-6", "x-ray 5 - 6"},
        {"&quot;a&quot; &amp;lt;", "\" a \" <"},  /* one pass per entity, in order: */
        {"&amp;quot;x", "& quot ; x"},              /* &quot; is undone before &amp; */
        {"a<skipped>b", "ab"},
        {"it's U.S.A.", "it's U . S . A ."},
        {"\xc2\xbfQu\xc3\xa9?\xc2\xa0\xc2\xa1S\xc3\xad!", "\xc2\xbfQu\xc3\xa9 ? \xc2\xa1S\xc3\xad !"},
        {"  a \t b \xe3\x80\x80 c\r", "a b c"},
        {"", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *t = tok(cases[i][0]);
        CHECK(t && strcmp(t, cases[i][1]) == 0, "13a('%s') = '%s', want '%s'", cases[i][0],
              t ? t : "(null)", cases[i][1]);
        free(t);
    }
}

/* Counts worked out by hand from the definitions (Papineni et al. 2002; Popović 2015). */
static void test_hand_counts(void) {
    tfm_bleu_stats b = {0};
    /* hyp "the the the the cat": unigrams clip "the" to 1 (ref has one) + "cat" = 2 of 5;
     * bigrams: the-the x3, the-cat x1; ref bigrams "the cat" -> 1 of 4; trigrams 0 of 3;
     * 4-grams 0 of 2. */
    CHECK(tfm_bleu_add(&b, "the the the the cat", "the cat") == TFM_OK, "add");
    CHECK(b.hyp_len == 5 && b.ref_len == 2, "lengths %llu %llu", (unsigned long long)b.hyp_len,
          (unsigned long long)b.ref_len);
    CHECK(b.correct[0] == 2 && b.correct[1] == 1 && b.correct[2] == 0 && b.correct[3] == 0,
          "correct %llu %llu %llu %llu", (unsigned long long)b.correct[0],
          (unsigned long long)b.correct[1], (unsigned long long)b.correct[2],
          (unsigned long long)b.correct[3]);
    CHECK(b.total[0] == 5 && b.total[1] == 4 && b.total[2] == 3 && b.total[3] == 2, "totals");
    tfm_bleu_score s = tfm_bleu_compute(&b);
    /* exp smoothing: p3 = 100/(2*3), p4 = 100/(4*2); no brevity penalty (c > r). */
    double want = exp((log(40.0) + log(25.0) + log(100.0 / 6.0) + log(12.5)) / 4.0);
    CHECK_NEAR(s.score, want, 1e-12, "hand BLEU");
    CHECK_NEAR(s.bp, 1.0, 0.0, "hand BP");

    /* Brevity penalty: c = 4, r = 8 -> exp(1 - 8/4); every precision is 100. */
    tfm_bleu_stats b2 = {0};
    CHECK(tfm_bleu_add(&b2, "a b c d", "a b c d e f g h") == TFM_OK, "add");
    tfm_bleu_score s2 = tfm_bleu_compute(&b2);
    CHECK_NEAR(s2.bp, exp(1.0 - 2.0), 1e-15, "BP");
    CHECK_NEAR(s2.score, exp(-1.0) * 100.0, 1e-9, "BLEU with BP");

    /* chrF: "ab" vs "abc": orders 1,2 count (ref has 3 and 2 n-grams; hyp 2 and 1);
     * order 3: ref has 1 trigram, hyp 0 -> hyp count 0 -> not in the effective order.
     * P = (1 + 1)/2 = 1, R = (2/3 + 1/2)/2 = 7/12, F2 = 5PR/(4P+R). */
    tfm_chrf_stats c = {0};
    CHECK(tfm_chrf_add(&c, "a b", "abc") == TFM_OK, "chrf add");
    CHECK(c.hyp[0] == 2 && c.ref[0] == 3 && c.match[0] == 2 && c.hyp[1] == 1 && c.ref[1] == 2 &&
              c.match[1] == 1 && c.hyp[2] == 0 && c.ref[2] == 1 && c.ref[3] == 0,
          "chrF counts");
    double r = 7.0 / 12.0;
    CHECK_NEAR(tfm_chrf_compute(&c), 100.0 * 5.0 * r / (4.0 + r), 1e-12, "hand chrF2");

    /* chrF works on code points: "ñ" is one character (2 bytes), so "ña" has one bigram. */
    tfm_chrf_stats u = {0};
    CHECK(tfm_chrf_add(&u, "\xc3\xb1" "a", "\xc3\xb1" "a") == TFM_OK, "chrf add utf8");
    CHECK(u.hyp[0] == 2 && u.hyp[1] == 1 && u.hyp[2] == 0, "chrF counts code points, not bytes");
    CHECK_NEAR(tfm_chrf_compute(&u), 100.0, 1e-12, "identical chrF");

    /* Reference with no n-grams of an order: the hypothesis n-grams of that order are not counted. */
    tfm_chrf_stats e = {0};
    CHECK(tfm_chrf_add(&e, "abc", "") == TFM_OK, "chrf empty ref");
    CHECK(e.hyp[0] == 0 && e.ref[0] == 0, "empty reference zeroes the hypothesis count");
    CHECK_NEAR(tfm_chrf_compute(&e), 0.0, 0.0, "chrF of nothing");
}

/* The streaming API gives what the file reader gives, and statistics add up. */
static void test_streaming(void) {
    size_t sh, sr;
    char *h = slurp(test_path(FIX "realistic.hyp"), &sh), *r = slurp(test_path(FIX "realistic.ref"), &sr);
    CHECK(h && r, "read realistic fixture");
    if (h && r) {
        static char *lh[128], *lr[128];
        size_t nh = split_lines(h, sh, lh, 128), nr = split_lines(r, sr, lr, 128);
        CHECK(nh == 50 && nr == 50, "realistic has 50 lines");
        tfm_bleu_stats all = {0}, a = {0}, b = {0};
        tfm_chrf_stats call = {0}, ca = {0}, cb = {0};
        for (size_t i = 0; i < nh && i < nr; i++) {
            CHECK(tfm_bleu_add(&all, lh[i], lr[i]) == TFM_OK, "add %zu", i);
            CHECK(tfm_chrf_add(&call, lh[i], lr[i]) == TFM_OK, "chrf add %zu", i);
            CHECK(tfm_bleu_add(i < 20 ? &a : &b, lh[i], lr[i]) == TFM_OK, "add half");
            CHECK(tfm_chrf_add(i < 20 ? &ca : &cb, lh[i], lr[i]) == TFM_OK, "chrf add half");
        }
        tfm_bleu_stats fb = {0};
        tfm_chrf_stats fc = {0};
        CHECK(tfm_bleu_chrf_files(test_path(FIX "realistic.hyp"), test_path(FIX "realistic.ref"), &fb,
                                  &fc, NULL) == TFM_OK,
              "files: %s", tfm_last_error());
        CHECK(memcmp(&fb, &all, sizeof fb) == 0, "file stats == streamed stats");
        CHECK(memcmp(&fc, &call, sizeof fc) == 0, "file chrF stats == streamed stats");
        a.n_segments += b.n_segments, a.hyp_len += b.hyp_len, a.ref_len += b.ref_len;
        for (int n = 0; n < TFM_BLEU_MAX_ORDER; n++) a.correct[n] += b.correct[n], a.total[n] += b.total[n];
        CHECK(memcmp(&a, &all, sizeof a) == 0, "two halves sum to the whole");
        ca.n_segments += cb.n_segments;
        for (int n = 0; n < TFM_CHRF_CHAR_ORDER; n++)
            ca.hyp[n] += cb.hyp[n], ca.ref[n] += cb.ref[n], ca.match[n] += cb.match[n];
        CHECK(memcmp(&ca, &call, sizeof ca) == 0, "chrF halves sum to the whole");
    }
    free(h);
    free(r);
}

static int contains(const char *hay, const char *needle) { return strstr(hay, needle) != NULL; }

static void test_errors(void) {
    tfm_bleu_stats b = {0}, b0;
    tfm_chrf_stats c = {0}, c0;
    CHECK(tfm_bleu_add(&b, "x", "x") == TFM_OK && tfm_chrf_add(&c, "x", "x") == TFM_OK, "seed stats");
    b0 = b, c0 = c;
    size_t n = 99;

    tfm_status st = tfm_bleu_chrf_files(test_path(FIX "no_such_file.hyp"), test_path(FIX "identical.ref"),
                                        &b, &c, &n);
    CHECK(st == TFM_ERR_IO && contains(tfm_last_error(), "no_such_file.hyp"), "missing file: %d '%s'",
          st, tfm_last_error());

    st = tfm_bleu_chrf_files(test_path(FIX "errors/three_lines.txt"),
                             test_path(FIX "errors/two_lines_no_eol.txt"), &b, &c, &n);
    CHECK(st == TFM_ERR_FORMAT && contains(tfm_last_error(), "three_lines.txt") &&
              contains(tfm_last_error(), "two_lines_no_eol.txt") && contains(tfm_last_error(), " 3 ") &&
              contains(tfm_last_error(), " 2 "),
          "line count mismatch: '%s'", tfm_last_error());

    st = tfm_bleu_chrf_files(test_path(FIX "errors/three_lines.txt"), test_path(FIX "errors/bad_utf8.txt"),
                             &b, &c, &n);
    CHECK(st == TFM_ERR_FORMAT && contains(tfm_last_error(), "bad_utf8.txt:3:") &&
              contains(tfm_last_error(), "UTF-8"),
          "invalid UTF-8 names file and line: '%s'", tfm_last_error());

    st = tfm_bleu_chrf_files(test_path(FIX "errors/surrogate.txt"), test_path(FIX "errors/surrogate.txt"),
                             &b, &c, &n);
    CHECK(st == TFM_ERR_FORMAT && contains(tfm_last_error(), "surrogate.txt:1:"), "surrogate: '%s'",
          tfm_last_error());

    st = tfm_bleu_chrf_files(test_path(FIX "errors/nul.txt"), test_path(FIX "errors/nul.txt"), &b, &c, &n);
    CHECK(st == TFM_ERR_FORMAT && contains(tfm_last_error(), "nul.txt:2:"), "NUL byte: '%s'",
          tfm_last_error());

    CHECK(memcmp(&b, &b0, sizeof b) == 0 && memcmp(&c, &c0, sizeof c) == 0 && n == 99,
          "statistics untouched by failed calls");

    CHECK(tfm_bleu_add(&b, "ok", "bad \xff") == TFM_ERR_FORMAT, "tfm_bleu_add rejects invalid UTF-8");
    CHECK(tfm_chrf_add(&c, "bad \xc0\x80", "ok") == TFM_ERR_FORMAT, "tfm_chrf_add rejects overlong");
    CHECK(memcmp(&b, &b0, sizeof b) == 0 && memcmp(&c, &c0, sizeof c) == 0, "add untouched on error");
    CHECK(tfm_bleu_add(NULL, "a", "a") == TFM_ERR_INVALID_ARG, "NULL stats");

    /* Two empty files are refused, as sacreBLEU refuses them (tfm_bleu_check_segments); the
     * formula on zero statistics still gives 0. */
    tfm_bleu_stats z = {0};
    tfm_chrf_stats zc = {0};
    st = tfm_bleu_chrf_files(test_path(FIX "errors/empty.txt"), test_path(FIX "errors/empty.txt"), &z, &zc, &n);
    CHECK(st == TFM_ERR_FORMAT && contains(tfm_last_error(), "nothing to score") && n == 99,
          "empty files: %d, %zu lines, '%s'", st, n, tfm_last_error());
    tfm_bleu_score s = tfm_bleu_compute(&z);
    char line[256];
    tfm_bleu_format(&s, line, sizeof line);
    CHECK(strcmp(line, "BLEU = 0.00 0.0/0.0/0.0/0.0 (BP = 1.000 ratio = 0.000 hyp_len = 0 ref_len = 0)") == 0,
          "empty corpus line '%s'", line);
    CHECK_NEAR(tfm_chrf_compute(&zc), 0.0, 0.0, "empty chrF");
}

static void test_utf8_and_spaces(void) {
    static const struct {
        const char *s;
        int valid;
    } u[] = {
        {"plain", 1}, {"\xc3\xb1", 1}, {"\xe2\x80\x94", 1}, {"\xf0\x9f\x98\x80", 1}, {"\xf4\x8f\xbf\xbf", 1},
        {"\xc3", 0},  {"\xc0\x80", 0}, {"\xe0\x80\x80", 0}, {"\xed\xa0\x80", 0},     {"\xf4\x90\x80\x80", 0},
        {"\xf8\x88\x80\x80\x80", 0},   {"\x80", 0},         {"\xe2\x80", 0},
    };
    for (size_t i = 0; i < sizeof u / sizeof u[0]; i++)
        CHECK((utf8_first_invalid(u[i].s, strlen(u[i].s)) == strlen(u[i].s)) == u[i].valid, "utf8 case %zu", i);
    static const uint32_t spaces[] = {0x9,    0xA,    0xB,    0xC,    0xD,    0x1C,   0x1F,   0x20,
                                      0x85,   0xA0,   0x1680, 0x2000, 0x200A, 0x2028, 0x2029, 0x202F,
                                      0x205F, 0x3000};
    static const uint32_t others[] = {0x0, 0x8, 0xE, 0x1B, 0x21, 0x84, 0x200B, 0x180E, 0xFEFF, 0x2060};
    for (size_t i = 0; i < sizeof spaces / sizeof spaces[0]; i++)
        CHECK(bleu_is_py_space(spaces[i]), "U+%04X is Python whitespace", (unsigned)spaces[i]);
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
        CHECK(!bleu_is_py_space(others[i]), "U+%04X is not Python whitespace", (unsigned)others[i]);
}

int main(void) {
    test_expected_table();
    test_tokenizer_table();
    test_tokenizer_rules();
    test_hand_counts();
    test_streaming();
    test_errors();
    test_utf8_and_spaces();
    return test_finish("test_bleu");
}
