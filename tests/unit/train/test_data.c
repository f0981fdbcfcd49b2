/* Training data (include/tfm/data.h): datasets from aligned text (encoded with a tokenizer trained
 * on the committed fixture) and from id files — ids, BOS/EOS placement, skip counts, every error
 * naming its file and line — and the batcher: each pair once per epoch, the token budget, low
 * padding, exact max_dims, seeded determinism, exact seek, fixed validation order; line-count
 * batches. The real Bible corpus is
 * test_data_corpus.c (slow). */
#define _POSIX_C_SOURCE 200809L

#include "batch_check.h"
#include "core_internal.h"
#include "test_util.h"
#include "tfm/data.h"
#include "tfm/ids.h"
#include "tfm/tokenizer.h"

#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#define FIXTURE "tests/fixtures/tok_train.txt"
#define FIXTURE_EN_LINES 245 /* lines 1..245 are English, the rest Spanish (tests/fixtures/tok_README.md) */

static char g_tmpdir[256];

static const char *tmp_path(const char *name) {
    static char buf[8][512];
    static int slot = 0;
    char *b = buf[slot++ & 7];
    snprintf(b, sizeof buf[0], "%s/%s", g_tmpdir, name);
    return b;
}

static void write_file(const char *path, const void *data, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
}

static void write_str(const char *path, const char *s) { write_file(path, s, strlen(s)); }

/* The lines of a file (without "\n"); *n set to their count. */
static char **read_lines(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        exit(1);
    }
    char **lines = NULL;
    size_t count = 0, cap = 0, bcap = 0;
    char *buf = NULL;
    ssize_t got;
    while ((got = getline(&buf, &bcap, f)) >= 0) {
        size_t len = (size_t)got;
        if (len > 0 && buf[len - 1] == '\n') buf[--len] = '\0';
        if (count == cap) {
            cap = cap ? cap * 2 : 64;
            lines = realloc(lines, cap * sizeof *lines);
        }
        lines[count++] = strdup(buf);
    }
    free(buf);
    fclose(f);
    *n = count;
    return lines;
}

static void free_lines(char **lines, size_t n) {
    for (size_t i = 0; i < n; i++) free(lines[i]);
    free(lines);
}

static int contains(const char *hay, const char *needle) { return strstr(hay, needle) != NULL; }

/* ---- the text corpus built from the fixture ------------------------------------------------- */

/* Aligned pairs made from the fixture: English line i with Spanish line i (not translations of each
 * other, which does not matter here), plus lines that exercise the reader. The expected text of
 * each file line (what decode must give back) is kept in want_src/want_tgt; blank[i] marks a line
 * pair that must be skipped as empty. */
typedef struct {
    char **src, **tgt; /* expected text of each line (no line end) */
    int *blank;
    size_t n;
} text_corpus;

static void corpus_free(text_corpus *c) {
    free_lines(c->src, c->n);
    free_lines(c->tgt, c->n);
    free(c->blank);
    memset(c, 0, sizeof *c);
}

static text_corpus make_corpus(const char *src_path, const char *tgt_path) {
    size_t nf = 0;
    char **fx = read_lines(test_path(FIXTURE), &nf);
    CHECK(nf > FIXTURE_EN_LINES + 200, "fixture has %zu lines", nf);
    size_t n_pairs = nf - FIXTURE_EN_LINES; /* 244 */
    text_corpus c;
    c.n = n_pairs + 3;
    c.src = calloc(c.n, sizeof *c.src);
    c.tgt = calloc(c.n, sizeof *c.tgt);
    c.blank = calloc(c.n, sizeof *c.blank);
    FILE *fs = fopen(src_path, "wb"), *ft = fopen(tgt_path, "wb");
    size_t k = 0;
    for (size_t i = 0; i < n_pairs; i++) {
        if (i == 10) { /* an empty source line */
            c.src[k] = strdup("");
            c.tgt[k] = strdup("Hola.");
            c.blank[k++] = 1;
        }
        if (i == 20) { /* a target of spaces and a tab (\r\n line end on the source) */
            c.src[k] = strdup("Hello.");
            c.tgt[k] = strdup("  \t ");
            c.blank[k++] = 1;
        }
        if (i == 30) { /* both empty, \r\n line ends */
            c.src[k] = strdup("");
            c.tgt[k] = strdup("");
            c.blank[k++] = 1;
        }
        c.src[k] = strdup(fx[i]);
        c.tgt[k] = strdup(fx[FIXTURE_EN_LINES + i]);
        k++;
    }
    CHECK(k == c.n, "corpus lines %zu, want %zu", k, c.n);
    for (size_t i = 0; i < c.n; i++) {
        int crlf = i % 7 == 3 || (c.blank[i] && i > 20); /* some \r\n line ends */
        const char *end = crlf ? "\r\n" : "\n";
        int last = i + 1 == c.n;
        fprintf(fs, "%s%s", c.src[i], last ? "" : end); /* the last source line has no newline */
        fprintf(ft, "%s%s", c.tgt[i], end);
    }
    fclose(fs);
    fclose(ft);
    free_lines(fx, nf);
    return c;
}

/* decode(ids) == want (the tokenizer round-trips exactly). */
static int decodes_to(const tfm_tokenizer *tok, const int32_t *ids, size_t n, const char *want) {
    char *text = NULL;
    size_t len = 0;
    int ok = tfm_tokenizer_decode(tok, ids, n, &text, &len) == TFM_OK && len == strlen(want) &&
             memcmp(text, want, len) == 0;
    free(text);
    return ok;
}

static size_t encoded_len(const tfm_tokenizer *tok, const char *s) {
    int32_t *ids = NULL;
    size_t n = 0;
    if (tfm_tokenizer_encode(tok, s, strlen(s), &ids, &n) != TFM_OK) n = (size_t)-1;
    free(ids);
    return n;
}

static void test_text_pairs(const tfm_tokenizer *tok) {
    const char *sp = tmp_path("c.en"), *tp = tmp_path("c.es");
    text_corpus c = make_corpus(sp, tp);
    tfm_dataset *ds = NULL;
    tfm_dataset_stats st;
    double t0 = tfm_now_s();
    tfm_status s = tfm_dataset_from_text(tok, sp, tp, 100000, TFM_TOK_BOS_ID, TFM_TOK_EOS_ID, &ds, &st);
    double dt = tfm_now_s() - t0;
    CHECK(s == TFM_OK && ds, "text dataset: %s", tfm_last_error());
    if (!ds) {
        corpus_free(&c);
        return;
    }
    printf("fixture corpus: %zu lines encoded in %.3f s\n", st.n_lines, dt);
    CHECK(st.n_lines == c.n, "stats.n_lines %zu, want %zu", st.n_lines, c.n);
    CHECK(st.n_skipped_empty == 3 && st.n_skipped_long == 0, "skipped %zu empty (want 3), %zu long (want 0)",
          st.n_skipped_empty, st.n_skipped_long);
    CHECK(st.n_pairs == c.n - 3 && tfm_dataset_size(ds) == st.n_pairs, "pairs %zu / %zu, want %zu", st.n_pairs,
          tfm_dataset_size(ds), c.n - 3);
    size_t k = 0, bad_text = 0, bad_marks = 0, bad_line = 0, src_tok = 0, tgt_tok = 0;
    int max_s = 0, max_t = 0;
    for (size_t line = 0; line < c.n && k < tfm_dataset_size(ds); line++) {
        if (c.blank[line]) continue;
        const int32_t *src = NULL, *tgt = NULL;
        size_t ls = 0, lt = 0;
        tfm_dataset_pair(ds, k, &src, &ls, &tgt, &lt);
        if (tfm_dataset_line(ds, k) != line + 1) bad_line++;
        if (!decodes_to(tok, src, ls, c.src[line]) || !decodes_to(tok, tgt + 1, lt - 2, c.tgt[line])) bad_text++;
        int marks_ok = lt >= 3 && tgt[0] == TFM_TOK_BOS_ID && tgt[lt - 1] == TFM_TOK_EOS_ID;
        for (size_t j = 0; j < ls; j++) marks_ok = marks_ok && src[j] > TFM_TOK_UNK_ID;
        for (size_t j = 1; j + 1 < lt; j++) marks_ok = marks_ok && tgt[j] > TFM_TOK_UNK_ID;
        if (!marks_ok) bad_marks++;
        if (ls != encoded_len(tok, c.src[line]) || lt != encoded_len(tok, c.tgt[line]) + 2) bad_text++;
        src_tok += ls;
        tgt_tok += lt;
        if ((int)ls > max_s) max_s = (int)ls;
        if ((int)lt > max_t) max_t = (int)lt;
        k++;
    }
    CHECK(k == tfm_dataset_size(ds), "walked %zu pairs", k);
    CHECK(bad_text == 0, "%zu pairs do not decode back to their lines (or differ from a direct encode)", bad_text);
    CHECK(bad_marks == 0, "%zu target rows lack BOS first / EOS last or hold reserved ids inside", bad_marks);
    CHECK(bad_line == 0, "%zu pairs report the wrong file line", bad_line);
    CHECK(st.src_tokens == src_tok && st.tgt_tokens == tgt_tok, "token counts %zu/%zu, want %zu/%zu", st.src_tokens,
          st.tgt_tokens, src_tok, tgt_tok);
    CHECK(st.max_src_len == max_s && st.max_tgt_len == max_t, "max lengths %d/%d, want %d/%d", st.max_src_len,
          st.max_tgt_len, max_s, max_t);
    tfm_dataset_free(ds);

    /* Other BOS/EOS ids are placed as given. */
    s = tfm_dataset_from_text(tok, sp, tp, 100000, 7, 9, &ds, NULL);
    CHECK(s == TFM_OK, "bos 7 eos 9: %s", tfm_last_error());
    if (s == TFM_OK) {
        const int32_t *tgt = NULL;
        size_t lt = 0;
        tfm_dataset_pair(ds, 5, NULL, NULL, &tgt, &lt);
        CHECK(tgt[0] == 7 && tgt[lt - 1] == 9, "custom BOS/EOS: %d .. %d", (int)tgt[0], (int)tgt[lt - 1]);
        tfm_dataset_free(ds);
    }

    /* Length limits: skip counts match a direct count, and pairs at exactly the limit are kept. */
    int hit_src_edge = 0, hit_tgt_edge = 0;
    for (int max_len = 8; max_len <= 64; max_len += 4) {
        size_t want_long = 0;
        for (size_t line = 0; line < c.n; line++) {
            if (c.blank[line]) continue;
            size_t ls = encoded_len(tok, c.src[line]), lt = encoded_len(tok, c.tgt[line]) + 2;
            if (ls > (size_t)max_len || lt > (size_t)max_len + 1) want_long++;
        }
        s = tfm_dataset_from_text(tok, sp, tp, max_len, TFM_TOK_BOS_ID, TFM_TOK_EOS_ID, &ds, &st);
        if (want_long == c.n - 3) {
            CHECK(s == TFM_ERR_FORMAT && !ds && contains(tfm_last_error(), "no usable pair"),
                  "max_len %d: every pair too long should be 'no usable pair', got %d: %s", max_len, (int)s,
                  tfm_last_error());
            continue;
        }
        CHECK(s == TFM_OK, "max_len %d: %s", max_len, tfm_last_error());
        if (s != TFM_OK) continue;
        CHECK(st.n_skipped_long == want_long && st.n_skipped_empty == 3 && st.n_pairs == c.n - 3 - want_long,
              "max_len %d: skipped %zu long (want %zu), %zu empty, kept %zu", max_len, st.n_skipped_long, want_long,
              st.n_skipped_empty, st.n_pairs);
        for (size_t i = 0; i < tfm_dataset_size(ds); i++) {
            size_t ls = 0, lt = 0;
            tfm_dataset_pair(ds, i, NULL, &ls, NULL, &lt);
            CHECK(ls <= (size_t)max_len && lt <= (size_t)max_len + 1, "max_len %d: pair %zu has %zu/%zu ids", max_len,
                  i, ls, lt);
            hit_src_edge |= ls == (size_t)max_len;
            hit_tgt_edge |= lt == (size_t)max_len + 1;
        }
        tfm_dataset_free(ds);
    }
    CHECK(hit_src_edge && hit_tgt_edge, "a source of exactly max_len ids (%d) and a target row of max_len + 1 (%d) kept",
          hit_src_edge, hit_tgt_edge);
    corpus_free(&c);
}

/* from_text fails with `want`, *out NULL, and a message holding each of the needles. */
static void expect_text_error(const tfm_tokenizer *tok, const char *sp, const char *tp, int max_len, tfm_status want,
                              const char *case_name, const char *needle1, const char *needle2, const char *needle3) {
    tfm_dataset *ds = (tfm_dataset *)1;
    tfm_status s = tfm_dataset_from_text(tok, sp, tp, max_len, TFM_TOK_BOS_ID, TFM_TOK_EOS_ID, &ds, NULL);
    const char *msg = tfm_last_error();
    int ok = s == want && ds == NULL && (!needle1 || contains(msg, needle1)) && (!needle2 || contains(msg, needle2)) &&
             (!needle3 || contains(msg, needle3));
    CHECK(ok, "%s: status %d (want %d), message '%s'", case_name, (int)s, (int)want, msg);
    if (s == TFM_OK && ds) tfm_dataset_free(ds);
}

static void test_text_errors(const tfm_tokenizer *tok) {
    const char *a = tmp_path("e_a.txt"), *b = tmp_path("e_b.txt");
    char want[600], want2[600];

    write_str(a, "one\ntwo\nthree\n");
    write_str(b, "uno\ndos\n");
    expect_text_error(tok, a, b, 64, TFM_ERR_FORMAT, "line-count mismatch", a, b, "has 3 lines");
    CHECK(contains(tfm_last_error(), "has 2"), "mismatch message gives both counts: %s", tfm_last_error());
    expect_text_error(tok, b, a, 64, TFM_ERR_FORMAT, "line-count mismatch (shorter source)", "has 2 lines", "has 3", b);
    write_str(b, "uno\ndos\ntres\ncuatro\ncinco"); /* the longer one ends without a newline */
    expect_text_error(tok, a, b, 64, TFM_ERR_FORMAT, "line-count mismatch (last line unterminated)", "has 3 lines",
                      "has 5", NULL);

    write_str(a, "one\ntwo\nthree\n");
    write_str(b, "uno\nd\xff" "os\ntres\n");
    snprintf(want, sizeof want, "%s:2:", b);
    expect_text_error(tok, a, b, 64, TFM_ERR_FORMAT, "invalid UTF-8 in the target", want, "UTF-8", "offset 1");
    write_str(a, "one\n\ntwo\n");
    write_str(b, "uno\n\xc3(\ndos\n"); /* invalid even though its source line is empty */
    expect_text_error(tok, a, b, 64, TFM_ERR_FORMAT, "invalid UTF-8 on a pair that would be skipped", want, NULL, NULL);
    write_file(a, "one\ntw\0o\n", 9);
    write_str(b, "uno\ndos\n");
    snprintf(want, sizeof want, "%s:2:", a);
    expect_text_error(tok, a, b, 64, TFM_ERR_FORMAT, "NUL byte", want, NULL, NULL);
    write_str(a, "one\ntwo\n\xed\xa0\x80\n"); /* a UTF-16 surrogate */
    write_str(b, "uno\ndos\ntres\n");
    snprintf(want, sizeof want, "%s:3:", a);
    expect_text_error(tok, a, b, 64, TFM_ERR_FORMAT, "surrogate in UTF-8", want, NULL, NULL);

    const char *missing = tmp_path("no-such-file.en");
    expect_text_error(tok, missing, b, 64, TFM_ERR_IO, "missing source file", missing, NULL, NULL);
    write_str(a, "one\ntwo\nthree\n");
    expect_text_error(tok, a, missing, 64, TFM_ERR_IO, "missing target file", missing, NULL, NULL);
    expect_text_error(tok, g_tmpdir, b, 64, TFM_ERR_IO, "a directory as the source", g_tmpdir, NULL, NULL);

    const char *empty = tmp_path("empty.txt");
    write_str(empty, "");
    expect_text_error(tok, empty, empty, 64, TFM_ERR_FORMAT, "both files empty", empty, "empty", NULL);
    expect_text_error(tok, a, empty, 64, TFM_ERR_FORMAT, "empty target file", empty, "empty", NULL);
    expect_text_error(tok, empty, a, 64, TFM_ERR_FORMAT, "empty source file", empty, "empty", NULL);
    write_str(a, "\n \n\t\n");
    write_str(b, "x\n\n y\n");
    expect_text_error(tok, a, b, 64, TFM_ERR_FORMAT, "only blank pairs", "no usable pair", "3 with an empty side", NULL);
    write_str(a, "In the beginning God created the heavens and the earth.\n");
    write_str(b, "En el principio creó Dios los cielos y la tierra.\n");
    expect_text_error(tok, a, b, 2, TFM_ERR_FORMAT, "every pair too long", "no usable pair", "1 longer than max_len 2",
                      NULL);

    /* Line length: exactly the limit (+ "\r\n") is read (the pair is skipped as its target is blank,
     * so nothing megabyte-long gets encoded); one byte more is an error naming file:line. */
    size_t big = (size_t)TFM_DATA_MAX_LINE_BYTES;
    char *text = malloc(big + 64);
    memcpy(text, "ok\n", 3);
    memset(text + 3, 'a', big);
    memcpy(text + 3 + big, "\r\nend\n", 6);
    write_file(a, text, big + 9);
    write_str(b, "bien\n\nfin\n");
    tfm_dataset *ds = NULL;
    tfm_dataset_stats st;
    tfm_status s = tfm_dataset_from_text(tok, a, b, 64, TFM_TOK_BOS_ID, TFM_TOK_EOS_ID, &ds, &st);
    CHECK(s == TFM_OK && st.n_pairs == 2 && st.n_skipped_empty == 1, "a line of exactly the limit: %s",
          tfm_last_error());
    tfm_dataset_free(ds);
    memset(text + 3, 'a', big + 1);
    memcpy(text + 4 + big, "\nend\n", 5);
    write_file(a, text, big + 9);
    snprintf(want, sizeof want, "%s:2:", a);
    snprintf(want2, sizeof want2, "%d bytes", TFM_DATA_MAX_LINE_BYTES);
    expect_text_error(tok, a, b, 64, TFM_ERR_FORMAT, "a line over the limit", want, want2, NULL);
    free(text);

    write_str(a, "one\n");
    write_str(b, "uno\n");
    expect_text_error(tok, a, b, 0, TFM_ERR_INVALID_ARG, "max_len 0", NULL, NULL, NULL);
    tfm_dataset *d2 = (tfm_dataset *)1;
    s = tfm_dataset_from_text(tok, a, b, 64, tfm_tokenizer_vocab_size(tok), TFM_TOK_EOS_ID, &d2, NULL);
    CHECK(s == TFM_ERR_INVALID_ARG && d2 == NULL, "a BOS id outside the vocabulary: %d", (int)s);
}

/* ---- id files ------------------------------------------------------------------------------ */

static void test_id_files(void) {
    const char *a = tmp_path("i.src"), *b = tmp_path("i.tgt");
    write_str(a, "5 6 7\n\n8\r\n9 10 11 12");
    write_str(b, "1 20 2\n1 21 22 2\n1 2\n1 23 24 25 2\n");
    tfm_dataset *ds = NULL;
    tfm_dataset_stats st;
    tfm_status s = tfm_dataset_from_ids(a, b, 4, &ds, &st);
    CHECK(s == TFM_OK && ds, "id dataset: %s", tfm_last_error());
    if (ds) {
        CHECK(tfm_dataset_size(ds) == 4 && st.n_pairs == 4 && st.n_lines == 4 && st.n_skipped_empty == 0 &&
                  st.n_skipped_long == 0,
              "id dataset: %zu pairs, stats %zu/%zu/%zu/%zu", tfm_dataset_size(ds), st.n_pairs, st.n_lines,
              st.n_skipped_empty, st.n_skipped_long);
        CHECK(st.src_tokens == 8 && st.tgt_tokens == 14 && st.max_src_len == 4 && st.max_tgt_len == 5,
              "id stats tokens %zu/%zu max %d/%d", st.src_tokens, st.tgt_tokens, st.max_src_len, st.max_tgt_len);
        const int32_t *src = NULL, *tgt = NULL;
        size_t ls = 0, lt = 0;
        tfm_dataset_pair(ds, 1, &src, &ls, &tgt, &lt);
        CHECK(ls == 0 && lt == 4 && tgt[0] == 1 && tgt[1] == 21 && tgt[3] == 2, "pair 1 of the id files");
        tfm_dataset_pair(ds, 3, &src, &ls, &tgt, &lt);
        CHECK(ls == 4 && src[0] == 9 && src[3] == 12 && lt == 5 && tgt[4] == 2 && tfm_dataset_line(ds, 3) == 4,
              "pair 3 of the id files");
        CHECK(tfm_dataset_check_vocab(ds, 13, 26) == TFM_OK, "ids within the vocabularies: %s", tfm_last_error());
        char want[600];
        snprintf(want, sizeof want, "%s:4:", a);
        s = tfm_dataset_check_vocab(ds, 12, 26);
        CHECK(s == TFM_ERR_RANGE && contains(tfm_last_error(), want) && contains(tfm_last_error(), "12"),
              "source id 12 outside vocab 12: %d, %s", (int)s, tfm_last_error());
        snprintf(want, sizeof want, "%s:4:", b);
        s = tfm_dataset_check_vocab(ds, 13, 25);
        CHECK(s == TFM_ERR_RANGE && contains(tfm_last_error(), want), "target id 25 outside vocab 25: %s",
              tfm_last_error());
        tfm_dataset_free(ds);
    }
    char want[600];
    ds = (tfm_dataset *)1;
    s = tfm_dataset_from_ids(a, b, 3, &ds, NULL);
    snprintf(want, sizeof want, "%s:4:", a);
    CHECK(s == TFM_ERR_RANGE && !ds && contains(tfm_last_error(), want), "a source longer than max_len: %d, %s",
          (int)s, tfm_last_error());
    write_str(a, "5\n6\n");
    write_str(b, "1 2\n1\n");
    s = tfm_dataset_from_ids(a, b, 8, &ds, NULL);
    snprintf(want, sizeof want, "%s:2:", b);
    CHECK(s == TFM_ERR_RANGE && contains(tfm_last_error(), want), "a target of one id: %d, %s", (int)s,
          tfm_last_error());
    write_str(b, "1 2\n1 3 4 5 2\n");
    s = tfm_dataset_from_ids(a, b, 3, &ds, NULL);
    CHECK(s == TFM_ERR_RANGE && contains(tfm_last_error(), want), "a target over max_len + 1: %s", tfm_last_error());
    s = tfm_dataset_from_ids(a, b, 4, &ds, NULL);
    CHECK(s == TFM_OK, "a target of exactly max_len + 1: %s", tfm_last_error());
    tfm_dataset_free(ds);
    write_str(b, "1 2\n1 2\n1 2\n");
    s = tfm_dataset_from_ids(a, b, 8, &ds, NULL);
    CHECK(s == TFM_ERR_FORMAT && contains(tfm_last_error(), a) && contains(tfm_last_error(), b) &&
              contains(tfm_last_error(), "has 2 lines") && contains(tfm_last_error(), "has 3"),
          "id line-count mismatch: %s", tfm_last_error());
    write_str(b, "1 x 2\n1 2\n");
    s = tfm_dataset_from_ids(a, b, 8, &ds, NULL);
    CHECK(s == TFM_ERR_FORMAT && contains(tfm_last_error(), b), "a bad token in an id file: %s", tfm_last_error());
    s = tfm_dataset_from_ids(tmp_path("none.ids"), b, 8, &ds, NULL);
    CHECK(s == TFM_ERR_IO && contains(tfm_last_error(), "none.ids"), "a missing id file: %s", tfm_last_error());
}

/* An id dataset of n pairs whose lengths follow a verse-like distribution (log-normal target
 * lengths, sources ~0.9x with noise), written to files under the temp dir. */
static tfm_dataset *synthetic_dataset(size_t n, uint64_t seed, int with_empty_sources) {
    const char *a = tmp_path("syn.src"), *b = tmp_path("syn.tgt");
    FILE *fa = fopen(a, "wb"), *fb = fopen(b, "wb");
    uint64_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        double u[4];
        for (int k = 0; k < 4; k++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            u[k] = ((double)(x >> 11) + 0.5) / 9007199254740992.0;
        }
        double z1 = sqrt(-2 * log(u[0])) * cos(6.283185307179586 * u[1]);
        double z2 = sqrt(-2 * log(u[2])) * cos(6.283185307179586 * u[3]);
        int t = (int)lround(exp(3.4 + 0.5 * z1));
        if (t < 1) t = 1;
        if (t > 250) t = 250;
        int s = (int)lround(0.9 * t + 0.12 * t * z2);
        if (s < 1) s = 1;
        if (s > 250) s = 250;
        if (with_empty_sources && i % 50 == 7) s = 0;
        for (int k = 0; k < s; k++) fprintf(fa, k ? " %d" : "%d", 4 + (int)((i + (size_t)k) % 500));
        fputc('\n', fa);
        fprintf(fb, "1");
        for (int k = 0; k < t; k++) fprintf(fb, " %d", 4 + (int)((i * 7 + (size_t)k) % 500));
        fprintf(fb, " 2\n");
    }
    fclose(fa);
    fclose(fb);
    tfm_dataset *ds = NULL;
    tfm_status st = tfm_dataset_from_ids(a, b, 256, &ds, NULL);
    CHECK(st == TFM_OK, "synthetic dataset: %s", tfm_last_error());
    return ds;
}

/* ---- the batcher ---------------------------------------------------------------------------- */

/* A fingerprint of the next k batches (FNV-1a over dims, ids and pair indices). */
static uint64_t batches_hash(tfm_batcher *bt, size_t k) {
    uint64_t h = 1469598103934665603ULL;
#define MIX(v) (h = (h ^ (uint64_t)(v)) * 1099511628211ULL)
    for (size_t j = 0; j < k; j++) {
        tfm_batch x;
        tfm_batcher_next(bt, &x);
        MIX(x.B);
        MIX(x.S);
        MIX(x.T);
        for (size_t q = 0; q < (size_t)x.B * (size_t)x.S; q++) MIX(x.src[q]);
        for (size_t q = 0; q < (size_t)x.B * (size_t)x.T; q++) MIX(x.tgt[q]);
        for (int r = 0; r < x.B; r++) MIX(x.pairs[r]);
    }
#undef MIX
    return h;
}

static tfm_batcher *make_batcher(const tfm_dataset *ds, int budget, int shuffle, uint64_t seed) {
    tfm_batcher *bt = NULL;
    tfm_status s = tfm_batcher_create(ds, budget, 0, shuffle, seed, &bt);
    CHECK(s == TFM_OK, "batcher create: %s", tfm_last_error());
    if (s != TFM_OK) exit(test_finish("data"));
    return bt;
}

/* Line-count batches (tfm_batcher_create_lines, the id-file mode of tfm train): B >= pairs gives
 * one batch of every pair in dataset order; B < pairs gives pairs / B batches of exactly B rows,
 * each pair at most once per epoch, padded rows, a seeded order per epoch, exact seek. */
static void test_line_batcher(const tfm_dataset *ds) {
    const size_t n = tfm_dataset_size(ds);
    tfm_batcher *bt = NULL;
    CHECK(tfm_batcher_create_lines(ds, 0, 0, 1, 1, &bt) == TFM_ERR_INVALID_ARG && !bt, "batch_lines 0 is refused");
    CHECK(tfm_batcher_create_lines(ds, (int)n + 5, 0, 1, 3, &bt) == TFM_OK, "lines: %s", tfm_last_error());
    if (!bt) return;
    CHECK(tfm_batcher_batches_per_epoch(bt) == 1, "B >= pairs: %zu batches, want 1", tfm_batcher_batches_per_epoch(bt));
    CHECK(tfm_batcher_batching(bt) == -(int64_t)n, "batching of B >= pairs is -pairs, got %lld",
          (long long)tfm_batcher_batching(bt));
    for (int e = 0; e < 2; e++) {
        tfm_batch x;
        tfm_batcher_next(bt, &x);
        size_t in_order = 0;
        for (int r = 0; r < x.B; r++) in_order += x.pairs[r] == (size_t)r;
        CHECK(x.B == (int)n && in_order == n, "epoch %d: B %d, %zu of %zu rows in file order", e, x.B, in_order, n);
    }
    tfm_batcher_free(bt);

    const int B = 7;
    const size_t nb = n / (size_t)B;
    int *seen = malloc(n * sizeof *seen);
    for (int shuffle = 0; shuffle <= 1; shuffle++) {
        bt = NULL;
        CHECK(tfm_batcher_create_lines(ds, B, 0, shuffle, 9, &bt) == TFM_OK, "lines: %s", tfm_last_error());
        if (!bt) break;
        CHECK(tfm_batcher_batches_per_epoch(bt) == nb, "B %d over %zu pairs: %zu batches, want %zu", B, n,
              tfm_batcher_batches_per_epoch(bt), nb);
        int mB, mS, mT;
        tfm_batcher_max_dims(bt, &mB, &mS, &mT);
        memset(seen, 0, n * sizeof *seen);
        size_t bad_rows = 0, in_order = 0, rows = 0;
        for (size_t k = 0; k < nb; k++) {
            tfm_batch x;
            tfm_batcher_next(bt, &x);
            CHECK(x.B == B && x.S <= mS && x.T <= mT, "batch %zu: %d x (%d, %d) outside B %d, max (%d, %d)", k, x.B,
                  x.S, x.T, B, mS, mT);
            for (int r = 0; r < x.B; r++, rows++) {
                const int32_t *src, *tgt;
                size_t ls, lt;
                tfm_dataset_pair(ds, x.pairs[r], &src, &ls, &tgt, &lt);
                seen[x.pairs[r]]++;
                in_order += x.pairs[r] == rows;
                int ok = memcmp(x.src + (size_t)r * (size_t)x.S, src, ls * sizeof *src) == 0 &&
                         memcmp(x.tgt + (size_t)r * (size_t)x.T, tgt, lt * sizeof *tgt) == 0;
                for (size_t j = ls; j < (size_t)x.S; j++) ok &= x.src[(size_t)r * (size_t)x.S + j] == 0;
                for (size_t j = lt; j < (size_t)x.T; j++) ok &= x.tgt[(size_t)r * (size_t)x.T + j] == 0;
                bad_rows += !ok;
            }
        }
        size_t twice = 0, used = 0;
        for (size_t i = 0; i < n; i++) {
            twice += seen[i] > 1;
            used += seen[i] == 1;
        }
        CHECK(bad_rows == 0 && twice == 0 && used == nb * (size_t)B,
              "shuffle %d: %zu rows not the padded pair, %zu pairs twice, %zu used of %zu", shuffle, bad_rows, twice,
              used, nb * (size_t)B);
        if (shuffle == 0)
            CHECK(in_order == rows, "shuffle 0: %zu of %zu rows in dataset order", in_order, rows);
        else
            CHECK(in_order < rows, "shuffle 1: every row in dataset order");
        tfm_batcher_free(bt);
    }
    free(seen);

    /* seeded: same seed same batches, epochs differ; seek reproduces the batches that follow */
    tfm_batcher *a = NULL, *b = NULL;
    tfm_batcher_create_lines(ds, B, 0, 1, 5, &a);
    tfm_batcher_create_lines(ds, B, 0, 1, 5, &b);
    if (!a || !b) {
        CHECK(0, "line batchers: %s", tfm_last_error());
        tfm_batcher_free(a);
        tfm_batcher_free(b);
        return;
    }
    uint64_t e0 = batches_hash(a, nb), e1 = batches_hash(a, nb);
    CHECK(e0 == batches_hash(b, nb) && e1 == batches_hash(b, nb), "line batches: same seed, different batches");
    CHECK(e0 != e1, "line batches: epochs 0 and 1 are the same");
    uint64_t pe, pi;
    (void)batches_hash(a, nb + 2);
    tfm_batcher_position(a, &pe, &pi);
    uint64_t next = batches_hash(a, 3);
    CHECK(tfm_batcher_seek(b, pe, pi) == TFM_OK && batches_hash(b, 3) == next, "line batches: seek (%llu, %llu)",
          (unsigned long long)pe, (unsigned long long)pi);
    tfm_batcher_free(a);
    tfm_batcher_free(b);
}

static void test_batcher_order(const tfm_dataset *ds, int budget) {
    tfm_batcher *a = make_batcher(ds, budget, 1, 42), *b = make_batcher(ds, budget, 1, 42),
                *c = make_batcher(ds, budget, 1, 43);
    const size_t nb = tfm_batcher_batches_per_epoch(a);
    CHECK(nb >= 8, "want several batches for the order tests, got %zu", nb);
    CHECK(tfm_batcher_batches_per_epoch(c) == nb, "batches per epoch depend on the seed");
    uint64_t ha = batches_hash(a, 3 * nb), hb = batches_hash(b, 3 * nb), hc = batches_hash(c, 3 * nb);
    CHECK(ha == hb, "same seed, different batches");
    CHECK(ha != hc, "different seeds, same batches");
    tfm_batcher_free(a);
    tfm_batcher_free(b);
    tfm_batcher_free(c);

    /* Epochs differ from each other (reshuffled). */
    a = make_batcher(ds, budget, 1, 42);
    uint64_t e0 = batches_hash(a, nb), e1 = batches_hash(a, nb);
    CHECK(e0 != e1, "epochs 0 and 1 give the same batches");
    tfm_batcher_free(a);

    /* Seek: from a fresh batcher, (epoch, index) reproduces what follows, bit for bit. */
    a = make_batcher(ds, budget, 1, 7);
    const size_t total = 3 * nb + 5;
    uint64_t *pe = malloc(total * sizeof *pe), *pi = malloc(total * sizeof *pi), *hs = malloc(total * sizeof *hs);
    for (size_t k = 0; k < total; k++) {
        tfm_batcher_position(a, &pe[k], &pi[k]);
        hs[k] = batches_hash(a, 1);
    }
    size_t probes[] = {0, 1, nb / 2, nb - 1, nb, nb + 3, 2 * nb - 1, 2 * nb + 2};
    for (size_t p = 0; p < sizeof probes / sizeof probes[0]; p++) {
        size_t k = probes[p];
        tfm_batcher *r = make_batcher(ds, budget, 1, 7);
        /* move it somewhere else first, so seek really has to re-plan */
        (void)batches_hash(r, nb + 2);
        CHECK(tfm_batcher_seek(r, pe[k], pi[k]) == TFM_OK, "seek (%llu, %llu)", (unsigned long long)pe[k],
              (unsigned long long)pi[k]);
        size_t same = 0;
        for (size_t j = k; j < total; j++) same += batches_hash(r, 1) == hs[j];
        CHECK(same == total - k, "after seek to (%llu, %llu): %zu of %zu batches match", (unsigned long long)pe[k],
              (unsigned long long)pi[k], same, total - k);
        tfm_batcher_free(r);
    }
    /* (e, nb) is (e + 1, 0); past that is an error that leaves the position alone. */
    tfm_batcher *r = make_batcher(ds, budget, 1, 7);
    CHECK(tfm_batcher_seek(r, 1, nb) == TFM_OK, "seek (1, nb)");
    uint64_t e = 0, i = 0;
    tfm_batcher_position(r, &e, &i);
    CHECK(e == 2 && i == 0, "seek (1, nb) reports (%llu, %llu), want (2, 0)", (unsigned long long)e,
          (unsigned long long)i);
    CHECK(batches_hash(r, 1) == hs[2 * nb], "seek (1, nb) continues with epoch 2's first batch");
    CHECK(tfm_batcher_seek(r, 0, nb + 1) == TFM_ERR_RANGE, "seek past an epoch's end is TFM_ERR_RANGE");
    tfm_batcher_position(r, &e, &i);
    CHECK(e == 2 && i == 1, "a failed seek moved the batcher to (%llu, %llu)", (unsigned long long)e,
          (unsigned long long)i);
    tfm_batcher_free(r);
    free(pe);
    free(pi);
    free(hs);
    tfm_batcher_free(a);

    /* shuffle = 0: the same batches each epoch and for any seed, shortest targets first. */
    a = make_batcher(ds, budget, 0, 1);
    b = make_batcher(ds, budget, 0, 999);
    uint64_t f0 = batches_hash(a, nb), f1 = batches_hash(a, nb), g0 = batches_hash(b, nb);
    CHECK(f0 == f1 && f0 == g0, "shuffle=0: the order changes between epochs or seeds");
    int sorted = 1, prevT = 0;
    for (size_t k = 0; k < nb; k++) {
        tfm_batch x;
        tfm_batcher_next(a, &x);
        sorted = sorted && x.T >= prevT;
        prevT = x.T;
    }
    CHECK(sorted, "shuffle=0: batches do not come shortest first");
    tfm_batcher_free(a);
    tfm_batcher_free(b);
}

static void test_batcher(const tfm_dataset *fixture_ds) {
    tfm_batcher *bt = (tfm_batcher *)1;
    CHECK(tfm_batcher_create(fixture_ds, 0, 0, 1, 1, &bt) == TFM_ERR_INVALID_ARG && bt == NULL,
          "batch_tokens 0 is an invalid argument");
    CHECK(tfm_batcher_create(fixture_ds, 100, 0, 2, 1, &bt) == TFM_ERR_INVALID_ARG, "shuffle 2 is invalid");

    /* Each pair once per epoch, within budget, exact max dims — for budgets from "every pair alone"
     * to "everything in a few batches", shuffled and not, with an unusual pad id. */
    const int budgets[] = {1, 16, 60, 400, 3000, 1000000};
    for (size_t k = 0; k < sizeof budgets / sizeof budgets[0]; k++) {
        for (int sh = 0; sh <= 1; sh++) {
            char name[80];
            snprintf(name, sizeof name, "fixture, budget %d, shuffle %d", budgets[k], sh);
            pad_tally tally = {0};
            check_epochs(fixture_ds, budgets[k], sh ? 0 : 5, sh, 11, 3, name, &tally);
            if (budgets[k] == 1)
                CHECK(tally.batches == tfm_dataset_size(fixture_ds), "budget 1: %zu batches, want one per pair",
                      tally.batches);
            if (budgets[k] == 1000000) CHECK(tally.batches == 1, "a huge budget: %zu batches, want 1", tally.batches);
            if (budgets[k] == 400 && sh) {
                printf("fixture (%zu pairs), budget 400: %zu batches, padding %.1f%%\n", tfm_dataset_size(fixture_ds),
                       tally.batches, 100 * pad_fraction(&tally));
                CHECK(pad_fraction(&tally) < 0.15, "fixture padding %.1f%% >= 15%%", 100 * pad_fraction(&tally));
            }
        }
    }
    test_batcher_order(fixture_ds, 400);

    /* A realistic length distribution: padding stays low. */
    tfm_dataset *syn = synthetic_dataset(20000, 3, 0);
    if (syn) {
        pad_tally tally = {0};
        check_epochs(syn, 3000, 0, 1, 5, 2, "synthetic, budget 3000", &tally);
        double pf = pad_fraction(&tally);
        printf("synthetic (20000 verse-like pairs), budget 3000: %zu batches, padding %.2f%% (source %.2f%%, target "
               "%.2f%%)\n",
               tally.batches, 100 * pf, 100 * (1 - tally.src_tokens / tally.src_slots),
               100 * (1 - tally.tgt_tokens / tally.tgt_slots));
        CHECK(pf < 0.08, "synthetic padding %.2f%% >= 8%%", 100 * pf);
        CHECK(1 - tally.tgt_tokens / tally.tgt_slots < 0.02, "synthetic target padding %.2f%% >= 2%%",
              100 * (1 - tally.tgt_tokens / tally.tgt_slots));
        tfm_dataset_free(syn);
    }
    /* Empty sources (allowed in id files) give a source width of at least 1, all pads. */
    syn = synthetic_dataset(3000, 9, 1);
    if (syn) {
        check_epochs(syn, 500, 0, 1, 5, 2, "synthetic with empty sources", NULL);
        check_epochs(syn, 1, 0, 1, 5, 1, "synthetic with empty sources, singletons", NULL);
        tfm_dataset_free(syn);
    }
}

int main(void) {
    snprintf(g_tmpdir, sizeof g_tmpdir, "%s/tfm-data-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(g_tmpdir)) {
        fprintf(stderr, "cannot make a temp dir\n");
        return 1;
    }
    const char *fx = test_path(FIXTURE);
    tfm_tokenizer_train_opts o;
    tfm_tokenizer_train_opts_default(&o);
    o.vocab_size = 500;
    tfm_tokenizer *tok = NULL;
    tfm_status s = tfm_tokenizer_train(&fx, 1, &o, &tok);
    CHECK(s == TFM_OK, "tokenizer on %s: %s", fx, tfm_last_error());
    if (s != TFM_OK) return test_finish("data");

    test_text_pairs(tok);
    test_text_errors(tok);
    test_id_files();

    const char *sp = tmp_path("b.en"), *tp = tmp_path("b.es");
    text_corpus c = make_corpus(sp, tp);
    corpus_free(&c);
    tfm_dataset *ds = NULL;
    s = tfm_dataset_from_text(tok, sp, tp, 256, TFM_TOK_BOS_ID, TFM_TOK_EOS_ID, &ds, NULL);
    CHECK(s == TFM_OK, "fixture dataset: %s", tfm_last_error());
    if (ds) test_batcher(ds);
    if (ds) test_line_batcher(ds);
    tfm_dataset_free(ds);
    tfm_tokenizer_free(tok);


    /* clean up the temp dir */
    const char *names[] = {"c.en", "c.es", "e_a.txt", "e_b.txt", "empty.txt", "i.src", "i.tgt", "syn.src", "syn.tgt",
                           "b.en", "b.es"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) unlink(tmp_path(names[k]));
    rmdir(g_tmpdir);
    return test_finish("data");
}
