/* Byte-level BPE (include/tfm/bpe.h) against Hugging Face `tokenizers`: a BPE of 400 merges
 * trained by tests/reference/make_bpe_golden.py, saved with four setups (GPT-2, Llama-3, Qwen2,
 * SmolLM) and as vocab.json + merges.txt, must give exactly the ids of ids.V.txt on every line
 * of tests/fixtures/bpe/lines.txt (Bible verses and a stress text) and multi.txt (CR, LF, NUL);
 * decode gives the text back, and `tokenizers`' bytes (U+FFFD for ill-formed UTF-8) on
 * decode.txt; a word of 100,000 characters encodes in well under a second (the merge loop is not
 * quadratic); malformed files give errors naming the file and the line or key. */
#include "core_internal.h"
#include "bpe_internal.h"
#include "test_lines.h"
#include "test_util.h"
#include "tfm/bpe.h"
#include "tfm/fileio.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#define FIX "tests/fixtures/bpe/"

/* Hex "41c3a9" into bytes (in place: the result is never longer); returns the length. */
static size_t unhex(char *s) {
    size_t n = 0;
    for (size_t i = 0; s[i] && s[i + 1] && s[i] != '\t'; i += 2) {
        unsigned v;
        sscanf(s + i, "%2x", &v);
        s[n++] = (char)v;
    }
    return n;
}


static int32_t want[1 << 15];

static int same_ids(const tfm_bpe *b, const char *name, size_t line, const char *text, size_t len, const char *ids) {
    const size_t nw = test_parse_ids(ids, want, sizeof want / sizeof *want);
    int32_t *got = NULL;
    size_t n = 0;
    tfm_status st = tfm_bpe_encode(b, text, len, 1, &got, &n);
    const int same = st == TFM_OK && n == nw && (n == 0 || memcmp(got, want, n * sizeof *got) == 0);
    CHECK(same, "%s case %zu: ids differ from tokenizers' (status %d %s)", name, line, (int)st, tfm_last_error());
    if (!same) {
        fprintf(stderr, "  text: %.*s\n  want:", (int)(len > 200 ? 200 : len), text);
        for (size_t i = 0; i < nw && i < 40; i++) fprintf(stderr, " %s(%d)", tfm_bpe_id_to_token(b, want[i]), want[i]);
        fprintf(stderr, "\n  got: ");
        for (size_t i = 0; i < n && i < 40; i++) fprintf(stderr, " %s(%d)", tfm_bpe_id_to_token(b, got[i]), got[i]);
        fputc('\n', stderr);
    }
    free(got);
    return same;
}

/* Every line of lines.txt and multi.txt against ids.NAME.txt; round trip when `round_trip`. */
static void compare(const tfm_bpe *b, const char *name, const char *ids_file, int round_trip) {
    test_lines lines = {0}, multi = {0}, ids = {0};
    CHECK(test_lines_read(test_path(FIX "lines.txt"), &lines) &&
              test_lines_read(test_path(FIX "multi.txt"), &multi) && test_lines_read(test_path(ids_file), &ids),
          "%s: fixtures readable", name);
    CHECK(ids.n == lines.n + multi.n && lines.n > 100, "%s: %zu id lines for %zu + %zu inputs", name, ids.n, lines.n,
          multi.n);
    for (size_t i = 0; i < multi.n; i++) multi.len[i] = unhex(multi.text[i]);
    size_t ok = 0, rt = 0;
    for (size_t i = 0; i < ids.n && i < lines.n + multi.n; i++) {
        const char *t = i < lines.n ? lines.text[i] : multi.text[i - lines.n];
        const size_t len = i < lines.n ? lines.len[i] : multi.len[i - lines.n];
        ok += (size_t)same_ids(b, name, i + 1, t, len, ids.text[i]);
        if (!round_trip) continue;
        int32_t *got = NULL;
        size_t n = 0, tl = 0;
        char *back = NULL;
        int good = tfm_bpe_encode(b, t, len, 1, &got, &n) == TFM_OK &&
                   tfm_bpe_decode(b, got, n, 0, &back, &tl) == TFM_OK && tl == len && memcmp(back, t, len) == 0;
        CHECK(good, "%s case %zu: decode(encode(text)) == text", name, i + 1);
        rt += (size_t)good;
        free(got);
        free(back);
    }
    printf("%s: %zu/%zu equal to tokenizers; %zu round trips\n", name, ok, ids.n, rt);
    test_lines_free(&lines);
    test_lines_free(&multi);
    test_lines_free(&ids);
}

static tfm_bpe *load(const char *file) {
    tfm_bpe *b = NULL;
    tfm_status st = tfm_bpe_load(test_path(file), &b);
    CHECK(st == TFM_OK && b, "load %s: %s", file, tfm_last_error());
    return b;
}

/* decode.txt: ids, the hex of decode(ids) and of decode(ids, skip_special). */
static void test_decode(const tfm_bpe *b) {
    test_lines d;
    CHECK(test_lines_read(test_path(FIX "decode.txt"), &d) && d.n >= 10, "decode.txt");
    for (size_t i = 0; i < d.n; i++) {
        char *t1 = strchr(d.text[i], '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
        if (!t2) continue;
        *t1 = '\0'; /* the ids end at the tab */
        const size_t n = test_parse_ids(d.text[i], want, 1024);
        const size_t l1 = unhex(t1 + 1), l2 = unhex(t2 + 1);
        for (int skip = 0; skip < 2; skip++) {
            char *text = NULL;
            size_t len = 0;
            const size_t wl = skip ? l2 : l1;
            const char *w = skip ? t2 + 1 : t1 + 1;
            tfm_status st = tfm_bpe_decode(b, want, n, skip, &text, &len);
            CHECK(st == TFM_OK && len == wl && memcmp(text, w, len) == 0 && text[len] == '\0',
                  "decode.txt line %zu (skip_special %d): the bytes of tokenizers' decode", i + 1, skip);
            free(text);
        }
    }
    test_lines_free(&d);
    int32_t bad[2] = {5, 100000};
    char *text = (char *)1;
    size_t len = 1;
    CHECK(tfm_bpe_decode(b, bad, 2, 0, &text, &len) == TFM_ERR_RANGE && !text && !len &&
              strstr(tfm_last_error(), "id 100000 (position 1)"),
          "decode: an id outside the vocabulary is named: %s", tfm_last_error());
}

/* 100,000 letters, and 100,000 of one byte repeated: merged in well under a second. */
static void test_long_word(const tfm_bpe *b) {
    const size_t n = 100000;
    char *w = malloc(n + 1);
    for (size_t i = 0; i < n; i++) w[i] = "abcdefghijklmnopqrstuvwxyz"[(i * 7 + i / 3) % 26];
    for (int pass = 0; pass < 2; pass++) {
        if (pass) memset(w, 'a', n);
        int32_t *ids = NULL;
        size_t k = 0;
        const double t0 = tfm_now_s();
        tfm_status st = tfm_bpe_encode(b, w, n, 0, &ids, &k);
        const double dt = tfm_now_s() - t0;
        char *back = NULL;
        size_t bl = 0;
        CHECK(st == TFM_OK && k > 0 && k < n && tfm_bpe_decode(b, ids, k, 0, &back, &bl) == TFM_OK && bl == n &&
                  memcmp(back, w, n) == 0,
              "long word %d: encodes and decodes back", pass);
        CHECK(dt < 0.5, "long word %d: %zu characters in %.3f s (bound 0.5 s)", pass, n, dt);
        printf("long word %d: %zu characters -> %zu ids in %.4f s\n", pass, n, k, dt);
        free(ids);
        free(back);
    }
    free(w);
}

/* Writes text to dir/name; returns the path (one of 32 static buffers, reused in turn). */
static const char *write_file(const char *dir, const char *name, const char *text) {
    static char paths[32][4200];
    static int slot;
    char *p = paths[slot++ % 32];
    snprintf(p, 4200, "%s/%s", dir, name);
    FILE *f = fopen(p, "wb");
    fputs(text, f);
    fclose(f);
    return p;
}

static void expect_error(tfm_status st, tfm_bpe *b, tfm_status want_st, const char *want_msg, const char *what) {
    CHECK(st == want_st && !b && strstr(tfm_last_error(), want_msg), "%s: status %d, message '%s' (want '%s')", what,
          (int)st, tfm_last_error(), want_msg);
    tfm_bpe_free(b);
}

static const char VOCAB[] = "{\"a\": 0, \"b\": 1, \"ab\": 2, \"c\": 3}";

static void test_errors(void) {
    char dir[4096];
    CHECK(test_make_tmpdir(dir, sizeof dir, "bpe") != NULL, "tmpdir");
    tfm_bpe *b = NULL;
    const char *v = write_file(dir, "vocab.json", VOCAB);
    tfm_status st = tfm_bpe_load_files(v, write_file(dir, "m1.txt", "#version: 0.2\na b\na c\n"), &b);
    expect_error(st, b, TFM_ERR_FORMAT, "m1.txt:3: merge 'a c': the merged token 'ac' is not in the vocabulary",
                 "merge result missing");
    b = NULL;
    st = tfm_bpe_load_files(v, write_file(dir, "m2.txt", "a b\nab x\n"), &b);
    expect_error(st, b, TFM_ERR_FORMAT, "m2.txt:2: merge 'ab x': 'x' is not in the vocabulary", "merge part missing");
    b = NULL;
    st = tfm_bpe_load_files(v, write_file(dir, "m3.txt", "a b\nabc\n"), &b);
    expect_error(st, b, TFM_ERR_FORMAT, "m3.txt:2: a merge is two tokens", "merge of one token");
    b = NULL;
    st = tfm_bpe_load_files(v, write_file(dir, "m4.txt", "#version: 0.2\n"), &b);
    expect_error(st, b, TFM_ERR_FORMAT, "m4.txt: no merges", "no merges");
    b = NULL;
    char missing[4200];
    snprintf(missing, sizeof missing, "%s/none.txt", dir);
    st = tfm_bpe_load_files(v, missing, &b);
    expect_error(st, b, TFM_ERR_IO, "none.txt", "missing merges.txt");
    b = NULL;
    st = tfm_bpe_load_files(write_file(dir, "bad.json", "{\"a\": 0,\n \"b\": }"), write_file(dir, "m5.txt", "a b\n"),
                            &b);
    expect_error(st, b, TFM_ERR_FORMAT, "bad.json:2:", "bad JSON names line");
    b = NULL;
    st = tfm_bpe_load_files(write_file(dir, "dup.json", "{\"a\": 0, \"b\": 0}"), write_file(dir, "m6.txt", "a b\n"),
                            &b);
    expect_error(st, b, TFM_ERR_FORMAT, "dup.json: vocabulary: id 0 is given to 'a' and 'b'", "duplicated id");

    /* tokenizer.json */
    static const char *const cases[][3] = {
        {"{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1}}, \"pre_tokenizer\": {\"type\": "
         "\"ByteLevel\"}, \"decoder\": {\"type\": \"ByteLevel\"}}",
         "model.merges is missing", "missing merges"},
        {"{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1, \"ab\": 2}, \"merges\": [\"a b\", [\"a\", "
         "\"q\"]]}, \"pre_tokenizer\": {\"type\": \"ByteLevel\"}, \"decoder\": {\"type\": \"ByteLevel\"}}",
         "model.merges[1]: merge 'a q': 'q' is not in the vocabulary", "merge part not in vocab"},
        {"{\"model\": {\"type\": \"Unigram\"}}", "model.type is Unigram", "not BPE"},
        {"{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": []}, \"pre_tokenizer\": {\"type\": "
         "\"Metaspace\"}, \"decoder\": {\"type\": \"ByteLevel\"}}",
         "pre_tokenizer.type Metaspace is not supported", "not byte-level"},
        {"{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": [], \"byte_fallback\": true}}",
         "model.byte_fallback is true", "byte fallback"},
        {"{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": []}, \"pre_tokenizer\": {\"type\": "
         "\"Split\", \"pattern\": {\"Regex\": \"\\\\w+\"}, \"behavior\": \"Isolated\"}, \"decoder\": null}",
         "the pattern '\\w+' is none of", "unknown pattern"},
        {"{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": []}, \"pre_tokenizer\": {\"type\": "
         "\"ByteLevel\", \"add_prefix_space\": true}}",
         "add_prefix_space = true is not supported", "add_prefix_space"},
        {"{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": []}, \"normalizer\": {\"type\": "
         "\"NFKC\"}}",
         "normalizer.type is NFKC", "normalizer"},
        {"{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": []}, \"pre_tokenizer\": {\"type\": "
         "\"ByteLevel\"}, \"decoder\": {\"type\": \"ByteLevel\"}, \"added_tokens\": [{\"id\": 0, \"content\": "
         "\"<s>\"}]}",
         "added_tokens[0]: id 0 is 'a' in model.vocab, not '<s>'", "added token clash"},
        {"{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": []}, \"pre_tokenizer\": {\"type\": "
         "\"ByteLevel\"}, \"decoder\": {\"type\": \"ByteLevel\"}, \"added_tokens\": [{\"id\": 1, \"content\": "
         "\"<s>\", \"lstrip\": true}]}",
         "lstrip = true is not supported", "lstrip"},
        {"{\"model\": {\"type\": \"BPE\",\n\"vocab\": {\"a\": 0}, \"merges\": [}", ":2:", "bad JSON"},
        {"{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": []}, \"pre_tokenizer\": {\"type\": "
         "\"ByteLevel\"}, \"decoder\": {\"type\": \"ByteLevel\"}, \"added_tokens\": [{\"id\": 16777216, "
         "\"content\": \"<s>\"}]}",
         "added_tokens[0] needs a non-empty content and an id (an integer in [0, 16777215])", "added id past 2^24"},
        {"{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 16777216}, \"merges\": []}}",
         "token 'b' has no valid id (an integer in [0, 16777215])", "vocab id past 2^24"},
        {"[1, 2]", "not a JSON object", "not an object"},
        {"{\"truncation\": {\"max_length\": 8}, \"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": []}}", "truncation is set; only null is supported",
         "truncation"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char name[32];
        snprintf(name, sizeof name, "t%zu.json", i);
        b = NULL;
        st = tfm_bpe_load(write_file(dir, name, cases[i][0]), &b);
        expect_error(st, b, strstr(cases[i][1], "not supported") || strstr(cases[i][1], "is Unigram") ||
                                    strstr(cases[i][1], "is true") || strstr(cases[i][1], "none of") ||
                                    strstr(cases[i][1], "NFKC") || strstr(cases[i][1], "only null")
                                ? TFM_ERR_UNSUPPORTED
                                : TFM_ERR_FORMAT,
                     cases[i][1], cases[i][2]);
    }
    b = NULL;
    expect_error(tfm_bpe_load(missing, &b), b, TFM_ERR_IO, "none.txt", "missing tokenizer.json");
}

/* The pre-tokeniser alone: the end offsets (in code points) of the pieces tokenizers 0.23.3's
 * pre_tokenize_str gives under gpt2.json and llama3.json (cases the id fixtures cannot tell
 * apart: where a split moves but no merge crosses it). */
typedef struct {
    size_t ends[16], n;
} piece_ends;

static int collect(void *ctx, size_t s, size_t e) {
    piece_ends *p = ctx;
    (void)s;
    if (p->n < 16) p->ends[p->n] = e;
    p->n++;
    return 1;
}

static void test_pretokenize(void) {
    static const struct {
        bpe_step step;
        const char *text;
        size_t ends[8];
    } cases[] = {
        {BPE_STEP_LLAMA3, "'\u017Fthe", {2, 5}},  {BPE_STEP_LLAMA3, "a   b", {1, 3, 5}},
        {BPE_STEP_LLAMA3, "x \n\n y", {1, 4, 6}}, {BPE_STEP_LLAMA3, "12345", {3, 5}},
        {BPE_STEP_LLAMA3, "(hello", {6}},         {BPE_STEP_LLAMA3, " !!\n\nx", {5, 6}},
        {BPE_STEP_LLAMA3, "\u00A0\u00A0x", {1, 3}}, {BPE_STEP_LLAMA3, "IT'S", {2, 4}},
        {BPE_STEP_GPT2, "a   b", {1, 3, 5}},      {BPE_STEP_GPT2, "  \t x", {3, 5}},
        {BPE_STEP_GPT2, "it's", {2, 4}},          {BPE_STEP_GPT2, "'\u017F", {1, 2}},
        {BPE_STEP_GPT2, "\u00A0\u00A0x", {1, 2, 3}}, {BPE_STEP_GPT2, "x  ", {1, 3}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        struct tfm_bpe b = {.steps = {cases[k].step}, .n_steps = 1};
        uint32_t cps[32];
        size_t n = 0;
        const char *t = cases[k].text;
        for (size_t i = 0; t[i] && n < 32; n++) {
            utf8proc_int32_t c;
            i += (size_t)utf8proc_iterate((const utf8proc_uint8_t *)t + i, -1, &c);
            cps[n] = (uint32_t)c;
        }
        piece_ends got = {.n = 0};
        bpe_pretokenize(&b, cps, n, collect, &got);
        size_t want_n = 0;
        while (want_n < 8 && cases[k].ends[want_n]) want_n++;
        CHECK(got.n == want_n && memcmp(got.ends, cases[k].ends, want_n * sizeof(size_t)) == 0,
              "pre-tokenizer case %zu (%s): pieces as tokenizers'", k, cases[k].step == BPE_STEP_GPT2 ? "gpt2" : "llama3");
    }
}

/* ignore_merges (Llama-3): a piece that is a token is that token, even where the merges would not
 * reach it; bytes whose character is not a token are dropped (no unk_token). The ids are those
 * tokenizers 0.23.3 gives for the same file: "abc abc" -> [4, 0, 3] with ignore_merges, [0, 3, 0, 3]
 * without ("Ġ" is not a token); "xabc" -> [0, 3] either way. */
static void test_ignore_merges(void) {
    char dir[4096];
    CHECK(test_make_tmpdir(dir, sizeof dir, "bpe-im") != NULL, "tmpdir");
    for (int im = 0; im < 2; im++) {
        char js[1024];
        snprintf(js, sizeof js,
                 "{\"model\": {\"type\": \"BPE\", \"ignore_merges\": %s, \"vocab\": {\"a\": 0, \"b\": 1, \"c\": 2, "
                 "\"bc\": 3, \"abc\": 4}, \"merges\": [\"b c\"]}, \"pre_tokenizer\": {\"type\": \"ByteLevel\"}, "
                 "\"decoder\": {\"type\": \"ByteLevel\"}}",
                 im ? "true" : "false");
        tfm_bpe *b = NULL;
        CHECK(tfm_bpe_load(write_file(dir, im ? "im.json" : "no_im.json", js), &b) == TFM_OK, "load: %s",
              tfm_last_error());
        if (!b) continue;
        static const int32_t want_im[] = {4, 0, 3}, want_no[] = {0, 3, 0, 3}, want_x[] = {0, 3};
        int32_t *ids = NULL;
        size_t n = 0;
        tfm_bpe_encode(b, "abc abc", 7, 1, &ids, &n);
        CHECK(n == (im ? 3u : 4u) && memcmp(ids, im ? want_im : want_no, n * sizeof *ids) == 0,
              "ignore_merges %d: 'abc abc' gives tokenizers' ids", im);
        free(ids);
        tfm_bpe_encode(b, "xabc", 4, 1, &ids, &n);
        CHECK(n == 2 && memcmp(ids, want_x, sizeof want_x) == 0, "ignore_merges %d: 'x' (not a token) dropped", im);
        free(ids);
        tfm_bpe_free(b);
    }
}

int main(void) {
    tfm_bpe *g = load(FIX "gpt2.json");
    if (!g) return test_finish("bpe");
    CHECK(tfm_bpe_vocab_size(g) == 657 && tfm_bpe_token_to_id(g, "<|endoftext|>") == 0 &&
              tfm_bpe_token_to_id(g, "Ġ") >= 0 && tfm_bpe_bos_id(g) == -1 && tfm_bpe_eos_id(g) == -1 &&
              tfm_bpe_id_to_token(g, 657) == NULL && tfm_bpe_id_to_token(g, -1) == NULL,
          "gpt2.json: 657 ids, <|endoftext|> = 0, no BOS/EOS");
    compare(g, "gpt2.json", FIX "ids.gpt2.txt", 1);
    test_decode(g);
    test_long_word(g);
    tfm_bpe_free(g);

    tfm_bpe *f = NULL;
    tfm_status st = tfm_bpe_load_files(test_path(FIX "vocab.json"), test_path(FIX "merges.txt"), &f);
    CHECK(st == TFM_OK, "vocab.json + merges.txt: %s", tfm_last_error());
    if (f) compare(f, "vocab.json+merges.txt", FIX "ids.gpt2.txt", 1);
    tfm_bpe_free(f);

    static const char *const variants[][2] = {
        {FIX "llama3.json", FIX "ids.llama3.txt"},
        {FIX "qwen2.json", FIX "ids.qwen2.txt"},
        {FIX "smollm.json", FIX "ids.smollm.txt"},
    };
    for (size_t i = 0; i < 3; i++) {
        tfm_bpe *b = load(variants[i][0]);
        if (b) compare(b, variants[i][0], variants[i][1], i == 2);
        if (b && i == 0)
            CHECK(tfm_bpe_bos_id(b) == tfm_bpe_token_to_id(b, "<|begin_of_text|>") && tfm_bpe_bos_id(b) == 657,
                  "llama3.json: BOS is <|begin_of_text|>");
        tfm_bpe_free(b);
    }
    test_errors();
    test_ignore_merges();
    test_pretokenize();
    int32_t *ids = (int32_t *)1;
    size_t n = 1;
    g = load(FIX "gpt2.json");
    CHECK(g && tfm_bpe_encode(g, "ok \xE9 no", 6, 0, &ids, &n) == TFM_ERR_FORMAT && !ids && !n &&
              strstr(tfm_last_error(), "invalid UTF-8 at byte offset 3 (byte 0xE9)"),
          "invalid UTF-8 named with its offset: %s", tfm_last_error());
    tfm_bpe_free(g);
    return test_finish("bpe");
}
