/* WordPiece (include/tfm/wordpiece.h) against Hugging Face `tokenizers`: every line of
 * tests/fixtures/wordpiece/lines.txt (302 Bible verses in English and Spanish, 71 hand-written
 * lines) must give exactly the ids of ids.txt, without truncation and with tokenizer.json's
 * (128), from vocab.txt and from a tokenizer.json rebuilt from tokenizer.novocab.json; the
 * normaliser's options (ids.VARIANT.txt), inputs with LF/CR/NUL (bytes.txt), and every error.
 * The fixtures come from tests/reference/make_wordpiece_ref.py. When scripts/get-minilm has run,
 * the real data/all-MiniLM-L6-v2/tokenizer.json is checked too; and the ids of
 * tests/fixtures/minilm/ref.txt (sentence-transformers' own tokenisation, truncated at 256). */
#include "core_internal.h"
#include "test_lines.h"
#include "test_util.h"
#include "tfm/fileio.h"
#include "tfm/wordpiece.h"
#include "wordpiece_internal.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <unistd.h>

#define FIX "tests/fixtures/wordpiece/"


static void print_tokens(const tfm_wordpiece *wp, const char *what, const int32_t *ids, size_t n) {
    fprintf(stderr, "  %s:", what);
    for (size_t i = 0; i < n; i++) {
        const char *t = tfm_wordpiece_id_to_token(wp, ids[i]);
        fprintf(stderr, " %s(%d)", t ? t : "?", ids[i]);
    }
    fputc('\n', stderr);
}

/* Encodes text and compares with the expected id line (untruncated ids: when they are longer
 * than the limit, the expectation is their first limit-1 ids and [SEP], which
 * make_wordpiece_ref.py checked is what `tokenizers` truncation gives); names the case on failure. */
static int expect_ids(const tfm_wordpiece *wp, const char *name, size_t lineno, const char *text, size_t len,
                      size_t max_tokens, const char *want_line) {
    int32_t want[2048];
    size_t nw = test_parse_ids(want_line, want, 2048);
    size_t limit = max_tokens ? max_tokens : tfm_wordpiece_settings_of(wp)->max_length;
    if (nw > limit) {
        want[limit - 1] = want[nw - 1];
        nw = limit;
    }
    int32_t *ids = NULL;
    size_t n = 0;
    tfm_status st = tfm_wordpiece_encode(wp, text, len, 1, max_tokens, &ids, &n);
    int same = st == TFM_OK && n == nw && (n == 0 || memcmp(ids, want, n * sizeof *ids) == 0);
    CHECK(same, "%s line %zu: ids differ from tokenizers' (status %d %s)", name, lineno, (int)st, tfm_last_error());
    if (!same) {
        fprintf(stderr, "  text: %.*s\n", (int)(len > 300 ? 300 : len), text);
        print_tokens(wp, "want", want, nw);
        print_tokens(wp, "got ", ids, n);
    }
    free(ids);
    return same;
}

/* Every line of `lines` from `first` on against the aligned lines of the ids file. */
static size_t compare_file(const tfm_wordpiece *wp, const char *name, const test_lines *lines, size_t first,
                           const char *ids_path, size_t max_tokens) {
    test_lines want;
    if (!test_lines_read(test_path(ids_path), &want)) {
        CHECK(0, "%s: cannot read %s", name, ids_path);
        return 0;
    }
    CHECK(want.n == lines->n - first, "%s: %s has %zu lines, want %zu", name, ids_path, want.n, lines->n - first);
    size_t ok = 0;
    for (size_t i = 0; i < want.n && first + i < lines->n; i++) {
        int same = expect_ids(wp, name, first + i + 1, lines->text[first + i], lines->len[first + i], max_tokens,
                              want.text[i]);
        ok += same;
    }
    printf("%s: %zu/%zu lines equal to tokenizers\n", name, ok, want.n);
    test_lines_free(&want);
    return ok;
}

/* Writes tokenizer.novocab.json with model.vocab filled from vocab.txt and the normalizer fields
 * `changes` ("key=true|false" ...) applied; returns 1 on success. */
static int make_tokenizer_json(const char *dir, const char *file, const char *const *changes, size_t n_changes,
                               char *path, size_t path_size) {
    test_lines vocab, js;
    if (!test_lines_read(test_path(FIX "vocab.txt"), &vocab)) return 0;
    if (!test_lines_read(test_path(FIX "tokenizer.novocab.json"), &js)) return 0;
    size_t total = 0;
    for (size_t i = 0; i < js.n; i++) total += js.len[i] + 1;
    char *text = malloc(total + 1), *p = text;
    for (size_t i = 0; i < js.n; i++) {
        memcpy(p, js.text[i], js.len[i]);
        p += js.len[i];
        *p++ = '\n';
    }
    *p = '\0';
    cJSON *root = cJSON_Parse(text);
    free(text);
    cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
    cJSON *v = cJSON_CreateObject();
    for (size_t i = 0; i < vocab.n; i++) cJSON_AddNumberToObject(v, vocab.text[i], (double)i);
    cJSON_ReplaceItemInObjectCaseSensitive(model, "vocab", v);
    cJSON *nz = cJSON_GetObjectItemCaseSensitive(root, "normalizer");
    for (size_t k = 0; k < n_changes; k++) {
        char key[64];
        const char *eq = strchr(changes[k], '=');
        snprintf(key, sizeof key, "%.*s", (int)(eq - changes[k]), changes[k]);
        cJSON_ReplaceItemInObjectCaseSensitive(nz, key, cJSON_CreateBool(strcmp(eq + 1, "true") == 0));
    }
    char *out = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    snprintf(path, path_size, "%s/%s", dir, file);
    FILE *f = fopen(path, "wb");
    int ok = f && out && fputs(out, f) >= 0;
    if (f) ok = (fclose(f) == 0) && ok;
    free(out);
    test_lines_free(&vocab);
    test_lines_free(&js);
    return ok;
}

static void write_file(const char *path, const char *text, size_t len) {
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(text, 1, len, f);
        fclose(f);
    }
}

/* Loading the file of len bytes `text` (strlen when len is 0) must fail with `want` and a message
 * naming the file and containing `needle`. */
static void expect_load_error_n(const char *dir, const char *text, size_t len, tfm_status want, const char *needle) {
    char path[4200];
    snprintf(path, sizeof path, "%s/bad.txt", dir);
    write_file(path, text, len ? len : strlen(text));
    tfm_wordpiece *wp = NULL;
    tfm_status st = tfm_wordpiece_load(path, &wp);
    CHECK(st == want && wp == NULL && strstr(tfm_last_error(), needle) && strstr(tfm_last_error(), path),
          "loading [%.60s]: status %d (want %d), message '%s' should name the file and say '%s'", text, (int)st,
          (int)want, tfm_last_error(), needle);
    tfm_wordpiece_free(wp);
    unlink(path);
}

static void expect_load_error(const char *dir, const char *text, tfm_status want, const char *needle) {
    expect_load_error_n(dir, text, 0, want, needle);
}

static void test_errors(const tfm_wordpiece *wp, const char *dir) {
    int32_t *ids = (int32_t *)1;
    size_t n = 7;
    CHECK(tfm_wordpiece_encode(wp, "ab\xC3(", 4, 1, 0, &ids, &n) == TFM_ERR_FORMAT && ids == NULL && n == 0 &&
              strstr(tfm_last_error(), "invalid UTF-8 at byte offset 2 (byte 0xC3)"),
          "invalid UTF-8: %s", tfm_last_error());
    CHECK(tfm_wordpiece_encode(wp, "\xED\xA0\x80", 3, 1, 0, &ids, &n) == TFM_ERR_FORMAT, "a surrogate is invalid");
    CHECK(tfm_wordpiece_encode(wp, "abc", 3, 1, 1, &ids, &n) == TFM_ERR_RANGE && ids == NULL,
          "max_tokens 1 with [CLS] and [SEP]");
    CHECK(tfm_wordpiece_encode(wp, "hello world", 11, 1, 2, &ids, &n) == TFM_OK && n == 2 && ids[0] == 101 &&
              ids[1] == 102,
          "max_tokens 2 keeps [CLS] [SEP] only");
    free(ids);
    CHECK(tfm_wordpiece_encode(wp, "hello world", 11, 0, 0, &ids, &n) == TFM_OK && n == 2 && ids[0] == 7592 &&
              ids[1] == 2088,
          "add_special 0: no [CLS]/[SEP]");
    free(ids);
    CHECK(tfm_wordpiece_encode(wp, "", 0, 0, 0, &ids, &n) == TFM_OK && n == 0 && ids == NULL, "empty text, no specials");
    CHECK(tfm_wordpiece_encode(wp, " \t ", 3, 1, 0, &ids, &n) == TFM_OK && n == 2, "blank text gives [CLS] [SEP]");
    free(ids);

    tfm_wordpiece *x = NULL;
    CHECK(tfm_wordpiece_load("/nonexistent/vocab.txt", &x) == TFM_ERR_IO && !x &&
              strstr(tfm_last_error(), "/nonexistent/vocab.txt"),
          "missing file: %s", tfm_last_error());
    expect_load_error(dir, "[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\nworld\nhello\n", TFM_ERR_FORMAT,
                      ":7: token 'hello' already on line 5");
    expect_load_error(dir, "[PAD]\n[UNK]\n\n[CLS]\n[SEP]\n", TFM_ERR_FORMAT, ":3: empty token");
    expect_load_error(dir, "[PAD]\n[UNK]\nab\xFF\n", TFM_ERR_FORMAT, ":3: invalid UTF-8");
    expect_load_error(dir, "[PAD]\n[CLS]\n[SEP]\nhello\n", TFM_ERR_FORMAT, "lacks [UNK]");
    expect_load_error_n(dir, "[UNK]\n[CLS]\nhe\0llo\n[SEP]\n", 25, TFM_ERR_FORMAT, ":3: NUL byte");
    expect_load_error(dir, "", TFM_ERR_FORMAT, "empty file");
    expect_load_error(dir, "{\n  \"model\": {\n    \"type\": \"WordPiece\",\n    \"vocab\": {\"a\": 0,}\n", TFM_ERR_FORMAT,
                      ":4:");
    expect_load_error(dir, "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}}}", TFM_ERR_UNSUPPORTED,
                      "model.type is BPE");
    expect_load_error(dir, "{\"model\": {\"type\": \"WordPiece\", \"vocab\": {\"[UNK]\": 0, \"a\": 2}}}", TFM_ERR_FORMAT,
                      "token 'a' has id 2");
    expect_load_error(dir, "{\"model\": {\"type\": \"WordPiece\", \"vocab\": {\"[UNK]\": 0, \"a\": 0}}}", TFM_ERR_FORMAT,
                      "id 0 is given to '[UNK]' and 'a'");
    expect_load_error(dir, "{\"model\": {\"type\": \"WordPiece\", \"vocab\": {\"a\": 0}}}", TFM_ERR_FORMAT,
                      "unk_token '[UNK]' is not in model.vocab");
    const char *head = "{\"model\": {\"type\": \"WordPiece\", \"vocab\": {\"[UNK]\": 0, \"[CLS]\": 1, \"[SEP]\": 2}},";
    char buf[1024];
    snprintf(buf, sizeof buf, "%s \"normalizer\": {\"type\": \"Sequence\"}}", head);
    expect_load_error(dir, buf, TFM_ERR_UNSUPPORTED, "normalizer.type is Sequence");
    snprintf(buf, sizeof buf, "%s \"normalizer\": null, \"pre_tokenizer\": {\"type\": \"Whitespace\"}}", head);
    expect_load_error(dir, buf, TFM_ERR_UNSUPPORTED, "pre_tokenizer.type is Whitespace");
    snprintf(buf, sizeof buf, "%s \"pre_tokenizer\": {\"type\": \"BertPreTokenizer\"}, \"added_tokens\": [{\"id\": 0, "
             "\"content\": \"[UNK]\", \"normalized\": true}]}", head);
    expect_load_error(dir, buf, TFM_ERR_UNSUPPORTED, "normalized = true");
    snprintf(buf, sizeof buf, "%s \"pre_tokenizer\": {\"type\": \"BertPreTokenizer\"}, \"added_tokens\": [{\"id\": 5, "
             "\"content\": \"[UNK]\"}]}", head);
    expect_load_error(dir, buf, TFM_ERR_FORMAT, "'[UNK]' with id 5");
    snprintf(buf, sizeof buf, "%s \"pre_tokenizer\": {\"type\": \"BertPreTokenizer\"}, \"truncation\": {\"max_length\": "
             "64, \"direction\": \"Left\"}}", head);
    expect_load_error(dir, buf, TFM_ERR_UNSUPPORTED, "truncation.direction");
    snprintf(buf, sizeof buf, "%s \"pre_tokenizer\": {\"type\": \"BertPreTokenizer\"}, \"post_processor\": {\"type\": "
             "\"RobertaProcessing\"}}", head);
    expect_load_error(dir, buf, TFM_ERR_UNSUPPORTED, "post_processor.type is RobertaProcessing");
    snprintf(buf, sizeof buf, "%s \"pre_tokenizer\": {\"type\": \"BertPreTokenizer\"}, \"post_processor\": {\"type\": "
             "\"BertProcessing\", \"cls\": [\"[CLS]\", 1], \"sep\": [\"[SEP]\", 7]}}", head);
    expect_load_error(dir, buf, TFM_ERR_FORMAT, "post_processor.sep: token '[SEP]' with id 7");

    /* a minimal tokenizer.json that loads: no normaliser, BertProcessing, ids of its own */
    snprintf(buf, sizeof buf, "%s \"normalizer\": null, \"pre_tokenizer\": {\"type\": \"BertPreTokenizer\"}, "
             "\"post_processor\": {\"type\": \"BertProcessing\", \"cls\": [\"[CLS]\", 1], \"sep\": [\"[SEP]\", 2]}}",
             head);
    char path[4200];
    snprintf(path, sizeof path, "%s/mini.json", dir);
    write_file(path, buf, strlen(buf));
    CHECK(tfm_wordpiece_load(path, &x) == TFM_OK, "minimal tokenizer.json: %s", tfm_last_error());
    if (x) {
        const tfm_wordpiece_settings *s = tfm_wordpiece_settings_of(x);
        CHECK(!s->clean_text && !s->lowercase && !s->strip_accents && !s->handle_chinese_chars &&
                  s->max_length == 512 && s->cls_id == 1 && s->sep_id == 2 && s->unk_id == 0 && s->pad_id == -1,
              "minimal tokenizer.json settings");
        CHECK(tfm_wordpiece_encode(x, "x y", 3, 1, 0, &ids, &n) == TFM_OK && n == 4 && ids[0] == 1 && ids[1] == 0 &&
                  ids[2] == 0 && ids[3] == 2,
              "unknown words are [UNK] between [CLS] and [SEP]");
        free(ids);
        tfm_wordpiece_free(x);
    }
    unlink(path);
}

/* The normaliser's steps on code points, where ids cannot show them: a canonical reordering of
 * two spacing marks that survive accent stripping (no vocabulary entry holds them), the one
 * multi-character lower case, which controls go and which whitespace becomes ' '. Expected
 * values: Python's unicodedata.normalize("NFD") and str.lower(), Unicode's PropList. */
static void test_normalize(void) {
    static const struct {
        const char *name;
        tfm_wordpiece_settings s;
        uint32_t in[6], want[6];
        size_t n_in, n_want;
    } cases[] = {
        {"NFD reorders U+1D16D (ccc 226) after U+1D165 (ccc 216)", {.strip_accents = 1},
         {'x', 0x1D16D, 0x1D165}, {'x', 0x1D165, 0x1D16D}, 3, 3},
        {"NFD keeps the order of equal classes (U+1D166, U+1D165: both 216)", {.strip_accents = 1},
         {'x', 0x1D166, 0x1D165}, {'x', 0x1D166, 0x1D165}, 3, 3},
        {"NFD decomposes Hangul, drops Mn", {.strip_accents = 1}, {0xD55C, 'e', 0x301}, {0x1112, 0x1161, 0x11AB, 'e'},
         3, 4},
        {"U+0130 lowercases to i + U+0307", {.lowercase = 1}, {0x130, 0x1E9E, 0x3A3}, {'i', 0x307, 0xDF, 0x3C3}, 3, 4},
        {"strip accents before lower case", {.lowercase = 1, .strip_accents = 1}, {0x130, 'A'}, {'i', 'a'}, 2, 2},
        {"clean_text: VT, NEL, NUL, U+FFFD go; LS becomes a space", {.clean_text = 1},
         {0x0B, 'a', 0x85, 0, 0xFFFD, 0x2028}, {'a', ' '}, 6, 2},
        {"clean_text keeps unassigned U+0378; tab and NBSP become spaces", {.clean_text = 1}, {0x378, '\t', 0xA0},
         {0x378, ' ', ' '}, 3, 3},
        {"CJK ideographs get spaces", {.handle_chinese_chars = 1}, {'a', 0x4E00, 'b'}, {'a', ' ', 0x4E00, ' ', 'b'}, 3,
         5},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        wp_cps out = {0}, tmp = {0};
        int ok = wp_normalize(&cases[k].s, cases[k].in, cases[k].n_in, &out, &tmp);
        CHECK(ok && out.n == cases[k].n_want && memcmp(out.v, cases[k].want, out.n * sizeof *out.v) == 0,
              "normalize: %s (got %zu code points)", cases[k].name, out.n);
        free(out.v);
        free(tmp.v);
    }
}

/* Canonical ordering of long runs of marks (the counting sort): a run of 3000 non-starters
 * U+1D16D (ccc 226, Mc), U+1D165, U+1D166 (ccc 216, Mc) and U+0301 (ccc 230, Mn: dropped) after
 * an 'x' becomes x, every 216 in input order, then every 226; and a 600 KB line of alternating
 * U+0301 / U+0316 (one run; it took 21 s with the quadratic sort) encodes in well under 5 s. */
static void test_long_runs(const tfm_wordpiece *wp) {
    enum { N = 3000 };
    static const uint32_t cycle[7] = {0x1D16D, 0x1D165, 0x301, 0x1D166, 0x1D16D, 0x1D166, 0x1D165};
    uint32_t *in = malloc(sizeof(uint32_t) * (N + 1)), *want = malloc(sizeof(uint32_t) * (N + 1));
    size_t nw = 0;
    in[0] = want[nw++] = 'x';
    for (size_t i = 0; i < N; i++) in[i + 1] = cycle[i % 7];
    for (size_t i = 1; i <= N; i++)
        if (in[i] == 0x1D165 || in[i] == 0x1D166) want[nw++] = in[i];
    for (size_t i = 1; i <= N; i++)
        if (in[i] == 0x1D16D) want[nw++] = in[i];
    wp_cps out = {0}, tmp = {0};
    tfm_wordpiece_settings s = {.strip_accents = 1};
    int ok = wp_normalize(&s, in, N + 1, &out, &tmp);
    CHECK(ok && out.n == nw && memcmp(out.v, want, nw * sizeof *want) == 0,
          "normalize: a run of %d marks is not stably sorted by combining class (got %zu code points, want %zu)", N,
          out.n, nw);
    free(out.v), free(tmp.v), free(in), free(want);

    const size_t bytes = 600000; /* U+0301 = CC 81, U+0316 = CC 96 */
    char *line = malloc(bytes + 2);
    line[0] = 'a';
    for (size_t i = 0; i < bytes / 2; i++) {
        line[1 + 2 * i] = (char)0xCC;
        line[2 + 2 * i] = (char)(i % 2 ? 0x96 : 0x81);
    }
    const double t0 = tfm_now_s();
    int32_t *ids = NULL;
    size_t n = 0;
    tfm_status st = tfm_wordpiece_encode(wp, line, bytes + 1, 1, SIZE_MAX, &ids, &n);
    const double secs = tfm_now_s() - t0;
    /* the marks are Mn: stripped, leaving the word "a" between [CLS] and [SEP] (`tokenizers` 0.19.1
     * gives "a" too, measured on the line) */
    CHECK(st == TFM_OK && n == 3 && ids[1] == tfm_wordpiece_token_to_id(wp, "a"),
          "600 KB of marks after 'a': status %d, %zu ids", (int)st, n);
    CHECK(secs < 5.0, "600 KB of combining marks took %.2f s to encode (limit 5 s)", secs);
    printf("600 KB of combining marks: %.3f s\n", secs);
    free(ids);
    free(line);
}

/* bytes.txt: hex of the input bytes, a tab, the ids. */
static void test_bytes(const tfm_wordpiece *wp) {
    test_lines l;
    if (!test_lines_read(test_path(FIX "bytes.txt"), &l)) {
        CHECK(0, "cannot read bytes.txt");
        return;
    }
    CHECK(l.n >= 5, "bytes.txt has %zu cases", l.n);
    for (size_t i = 0; i < l.n; i++) {
        const char *tab = strchr(l.text[i], '\t');
        if (!tab) {
            CHECK(0, "bytes.txt:%zu: no tab", i + 1);
            continue;
        }
        char text[256];
        size_t n = (size_t)(tab - l.text[i]) / 2;
        for (size_t k = 0; k < n && k < sizeof text; k++) {
            unsigned v;
            sscanf(l.text[i] + 2 * k, "%2x", &v);
            text[k] = (char)v;
        }
        expect_ids(wp, "bytes.txt", i + 1, text, n, SIZE_MAX, tab + 1);
    }
    test_lines_free(&l);
}

/* tests/fixtures/minilm/ref.txt: the ids sentence-transformers fed the model (its tokenizer
 * through transformers, truncated at max_seq_length 256) for each reference sentence. */
static void test_minilm_ids(const tfm_wordpiece *wp) {
    test_lines l;
    if (!test_lines_read(test_path("tests/fixtures/minilm/ref.txt"), &l)) {
        CHECK(0, "cannot read tests/fixtures/minilm/ref.txt");
        return;
    }
    size_t n = 0, ok = 0;
    for (size_t i = 0; i < l.n; i++) {
        if (l.text[i][0] == '#') continue;
        char *tab1 = strchr(l.text[i], '\t'), *tab2 = tab1 ? strchr(tab1 + 1, '\t') : NULL;
        if (!tab2) {
            CHECK(0, "minilm/ref.txt:%zu: want sentence, ids and vector", i + 1);
            continue;
        }
        *tab2 = '\0';
        n++;
        ok += expect_ids(wp, "minilm/ref.txt", i + 1, l.text[i], (size_t)(tab1 - l.text[i]), 256, tab1 + 1);
    }
    CHECK(n >= 20, "minilm/ref.txt has %zu sentences", n);
    printf("minilm/ref.txt (max_seq_length 256): %zu/%zu sentences' ids equal to sentence-transformers'\n", ok, n);
    test_lines_free(&l);
}

int main(void) {
    tfm_wordpiece *wp = NULL;
    tfm_status st = tfm_wordpiece_load(test_path(FIX "vocab.txt"), &wp);
    CHECK(st == TFM_OK, "load vocab.txt: %s", tfm_last_error());
    if (st != TFM_OK) return test_finish("wordpiece");
    const tfm_wordpiece_settings *s = tfm_wordpiece_settings_of(wp);
    CHECK(tfm_wordpiece_vocab_size(wp) == 30522 && s->cls_id == 101 && s->sep_id == 102 && s->unk_id == 100 &&
              s->pad_id == 0 && s->max_length == 512 && s->max_input_chars_per_word == 100 && s->lowercase &&
              s->strip_accents && s->clean_text && s->handle_chinese_chars,
          "vocab.txt: BERT-uncased settings and special ids");
    CHECK(tfm_wordpiece_token_to_id(wp, "##ing") == 2075 && tfm_wordpiece_token_to_id(wp, "[MASK]") == 103 &&
              tfm_wordpiece_token_to_id(wp, "no such token") == -1 &&
              strcmp(tfm_wordpiece_id_to_token(wp, 7592), "hello") == 0 && tfm_wordpiece_id_to_token(wp, 30522) == NULL &&
              tfm_wordpiece_id_to_token(wp, -1) == NULL,
          "token <-> id");

    test_lines lines;
    CHECK(test_lines_read(test_path(FIX "lines.txt"), &lines) && lines.n >= 300, "lines.txt: %zu lines", lines.n);
    size_t hand = 0; /* the hand-written lines are the last ones: as many as ids.cased.txt has */
    test_lines tmp;
    if (test_lines_read(test_path(FIX "ids.cased.txt"), &tmp)) hand = tmp.n, test_lines_free(&tmp);
    CHECK(hand > 0 && hand < lines.n, "ids.cased.txt: %zu lines", hand);

    compare_file(wp, "vocab.txt, no truncation", &lines, 0, FIX "ids.txt", SIZE_MAX);
    compare_file(wp, "vocab.txt, truncation 128", &lines, 0, FIX "ids.txt", 128);
    test_bytes(wp);
    test_minilm_ids(wp);

    char dir[4096], path[4200];
    CHECK(test_make_tmpdir(dir, sizeof dir, "wordpiece") != NULL, "tmpdir");
    /* tokenizer.json: the real file's options with vocab.txt's tokens; its truncation (128) is
     * the default max_length */
    CHECK(make_tokenizer_json(dir, "tokenizer.json", NULL, 0, path, sizeof path), "write tokenizer.json");
    tfm_wordpiece *tj = NULL;
    CHECK(tfm_wordpiece_load(path, &tj) == TFM_OK, "load tokenizer.json: %s", tfm_last_error());
    if (tj) {
        CHECK(tfm_wordpiece_settings_of(tj)->max_length == 128, "tokenizer.json truncation 128");
        compare_file(tj, "tokenizer.json, its truncation", &lines, 0, FIX "ids.txt", 0);
        tfm_wordpiece_free(tj);
    }
    unlink(path);
    static const struct {
        const char *name, *changes[2];
        size_t n;
    } variants[] = {
        {"cased", {"lowercase=false"}, 1},
        {"keep_accents", {"strip_accents=false"}, 1},
        {"strip_cased", {"lowercase=false", "strip_accents=true"}, 2},
        {"raw", {"clean_text=false", "handle_chinese_chars=false"}, 2},
    };
    for (size_t v = 0; v < sizeof variants / sizeof *variants; v++) {
        char ids_path[256], name[64];
        snprintf(ids_path, sizeof ids_path, FIX "ids.%s.txt", variants[v].name);
        snprintf(name, sizeof name, "normalizer %s", variants[v].name);
        tj = NULL;
        CHECK(make_tokenizer_json(dir, "variant.json", variants[v].changes, variants[v].n, path, sizeof path) &&
                  tfm_wordpiece_load(path, &tj) == TFM_OK,
              "%s: %s", name, tfm_last_error());
        if (tj) compare_file(tj, name, &lines, lines.n - hand, ids_path, SIZE_MAX);
        tfm_wordpiece_free(tj);
        unlink(path);
    }

    /* the real tokenizer.json, when scripts/get-minilm has fetched it */
    const char *real = test_path("data/all-MiniLM-L6-v2/tokenizer.json");
    if (access(real, R_OK) == 0) {
        tj = NULL;
        CHECK(tfm_wordpiece_load(real, &tj) == TFM_OK, "load %s: %s", real, tfm_last_error());
        if (tj) compare_file(tj, "data/all-MiniLM-L6-v2/tokenizer.json", &lines, 0, FIX "ids.txt", 0);
        tfm_wordpiece_free(tj);
    } else {
        printf("note: %s absent (scripts/get-minilm fetches it); its copy in the fixtures was tested\n", real);
    }

    test_normalize();
    test_long_runs(wp);
    test_errors(wp, dir);
    rmdir(dir);
    test_lines_free(&lines);
    tfm_wordpiece_free(wp);
    return test_finish("wordpiece");
}
