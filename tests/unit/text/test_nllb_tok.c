/* NLLB-200's tokenizer (src/text/nllb_tok.h) against transformers 4.40.2's NllbTokenizer on the
 * fixture folder of tests/reference/make_nllb_golden.py: the language codes' ids, the source ids
 * of every fixture sentence (one with two characters outside the SentencePiece vocabulary: <unk>)
 * with today's rule and with legacy_behaviour, the decoding of the model's greedy and beam outputs
 * to transformers' text; an unknown language code's error says how to list the valid ones; a
 * folder without sentencepiece.bpe.model names the file; a contradictory added_tokens_decoder is
 * refused naming the file; codes from special_tokens_map.json or, with no JSON, NLLB-200's 202. */
#include "core_internal.h"
#include "golden_txt.h"
#include "nllb_tok.h"
#include "test_lines.h"
#include "test_util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FIX "tests/fixtures/nllb"
#define GOLD "tests/golden/nllb/"

static void check_ids(nllb_tok *t, const test_lines *sent, const char *prefix) {
    for (size_t i = 0; i < sent->n; i++) {
        char name[32];
        float want[256];
        int32_t *ids = NULL;
        size_t n = 0;
        CHECK(nllb_tok_encode(t, sent->text[i], sent->len[i], &ids, &n) == TFM_OK, "encode %zu: %s", i,
              tfm_last_error());
        snprintf(name, sizeof name, "%s_%zu", prefix, i);
        if (!golden_txt_read(test_path(GOLD "ids.txt"), name, want, n)) {
            CHECK(0, "%s: no %zu ids in ids.txt", name, n);
        } else {
            int same = 1;
            for (size_t k = 0; k < n; k++) same &= ids[k] == (int32_t)want[k];
            CHECK(same, "%s: ids differ from transformers' on '%s'", name, sent->text[i]);
        }
        free(ids);
    }
}

/* greedy.ids / beam4.ids rows, with the forced language code first and EOS last as a search
 * returns them, decode to greedy.txt / beam4.txt */
static void check_decode(const nllb_tok *t, const char *ids_file, const char *txt_file) {
    test_lines ids, txt;
    CHECK(test_lines_read(test_path(ids_file), &ids) && test_lines_read(test_path(txt_file), &txt) && ids.n == txt.n &&
              ids.n > 0,
          "read %s, %s", ids_file, txt_file);
    const int32_t spa = nllb_tok_lang_id(t, "spa_Latn");
    for (size_t i = 0; i < ids.n && i < txt.n; i++) {
        int32_t row[512];
        row[0] = spa;
        size_t n = 1 + test_parse_ids(ids.text[i], row + 1, 500);
        row[n++] = NLLB_EOS_ID;
        char *s = NULL;
        size_t len = 0;
        CHECK(nllb_tok_decode(t, row, n, &s, &len) == TFM_OK, "decode: %s", tfm_last_error());
        CHECK(s && len == txt.len[i] && memcmp(s, txt.text[i], len) == 0, "%s line %zu: got '%s', want '%s'", ids_file,
              i + 1, s ? s : "(null)", txt.text[i]);
        free(s);
    }
    test_lines_free(&ids);
    test_lines_free(&txt);
}

static void check_bad_folders(void) {
    char dir[4096], path[4200];
    nllb_tok *t = NULL;
    if (!test_make_tmpdir(dir, sizeof dir, "nllb-tok")) {
        CHECK(0, "tmpdir");
        return;
    }
    CHECK(nllb_tok_load(dir, &t) == TFM_ERR_IO && !t && strstr(tfm_last_error(), "sentencepiece.bpe.model"),
          "missing sentencepiece.bpe.model: %s", tfm_last_error());
    /* the fixture's model, with an added_tokens_decoder that puts a code among the pieces */
    snprintf(path, sizeof path, "%s/sentencepiece.bpe.model", dir);
    char *buf = NULL;
    size_t len = 0;
    FILE *in = fopen(test_path(FIX "/sentencepiece.bpe.model"), "rb");
    if (in) {
        buf = malloc(1 << 20);
        len = fread(buf, 1, 1 << 20, in);
        fclose(in);
    }
    FILE *o = fopen(path, "wb");
    if (o && buf) fwrite(buf, 1, len, o);
    if (o) fclose(o);
    free(buf);
    char cfg[4200];
    snprintf(cfg, sizeof cfg, "%s/tokenizer_config.json", dir);
    o = fopen(cfg, "w");
    if (o) {
        fputs("{\"added_tokens_decoder\": {\"1\": {\"content\": \"<pad>\"}, \"200\": {\"content\": \"eng_Latn\"}}}", o);
        fclose(o);
    }
    CHECK(nllb_tok_load(dir, &t) == TFM_ERR_FORMAT && !t && strstr(tfm_last_error(), "tokenizer_config.json") &&
              strstr(tfm_last_error(), "200"),
          "code among the pieces: %s", tfm_last_error());
    /* special_tokens_map.json's additional_special_tokens (strings or objects): ids after the pieces */
    remove(cfg);
    char map[4200];
    snprintf(map, sizeof map, "%s/special_tokens_map.json", dir);
    o = fopen(map, "w");
    if (o) {
        fputs("{\"additional_special_tokens\": [\"fra_Latn\", {\"content\": \"deu_Latn\"}]}", o);
        fclose(o);
    }
    CHECK(nllb_tok_load(dir, &t) == TFM_OK && nllb_tok_n_langs(t) == 2 && nllb_tok_lang_id(t, "fra_Latn") == 501 &&
              nllb_tok_lang_id(t, "deu_Latn") == 502 && nllb_tok_mask_id(t) == 503 && nllb_tok_size(t) == 504 &&
              nllb_tok_lang_id(t, "eng_Latn") == -1,
          "special_tokens_map.json: %s", tfm_last_error());
    int32_t *ids = NULL;
    size_t n = 0;
    CHECK(t && nllb_tok_encode(t, "a", 1, &ids, &n) == TFM_ERR_INVALID_ARG && strstr(tfm_last_error(), "--src-lang"),
          "no eng_Latn: no source language until one is set");
    free(ids);
    nllb_tok_free(t);
    t = NULL;
    remove(map);
    /* no JSON at all: NLLB-200's 202 codes after the pieces */
    CHECK(nllb_tok_load(dir, &t) == TFM_OK, "default codes: %s", tfm_last_error());
    CHECK(t && nllb_tok_n_langs(t) == 202 && nllb_tok_lang_id(t, "eng_Latn") == 501 + 46 &&
              nllb_tok_size(t) == 501 + 202 + 1,
          "default codes: %zu codes, eng_Latn %d, size %d", t ? nllb_tok_n_langs(t) : 0,
          t ? nllb_tok_lang_id(t, "eng_Latn") : -1, t ? nllb_tok_size(t) : 0);
    nllb_tok_free(t);
    remove(path);
    rmdir(dir);
}

int main(void) {
    nllb_tok *t = NULL;
    CHECK(nllb_tok_load(test_path(FIX), &t) == TFM_OK, "load: %s", tfm_last_error());
    if (!t) return test_finish("test_nllb_tok");
    CHECK(nllb_tok_size(t) == 505 && nllb_tok_n_langs(t) == 3, "size %d, %zu codes", nllb_tok_size(t),
          nllb_tok_n_langs(t));
    test_lines langs;
    CHECK(test_lines_read(test_path(GOLD "lang_ids.txt"), &langs) && langs.n == 3, "lang_ids.txt");
    for (size_t i = 0; i < langs.n; i++) {
        char code[64];
        int id = -1;
        CHECK(sscanf(langs.text[i], "%63s %d", code, &id) == 2 && nllb_tok_lang_id(t, code) == id,
              "%s: got %d", langs.text[i], nllb_tok_lang_id(t, code));
    }
    test_lines_free(&langs);

    test_lines sent;
    CHECK(test_lines_read(test_path(GOLD "sentences.txt"), &sent) && sent.n == 8, "sentences.txt");
    CHECK(nllb_tok_set_langs(t, "eng_Latn", NULL, 0) == TFM_OK, "src lang: %s", tfm_last_error());
    check_ids(t, &sent, "ids");
    CHECK(nllb_tok_set_langs(t, "eng_Latn", NULL, 1) == TFM_OK, "src lang: %s", tfm_last_error());
    check_ids(t, &sent, "legacy");
    test_lines_free(&sent);

    CHECK(nllb_tok_set_langs(t, "eng_Latn", "deu_Latn", 0) == TFM_ERR_INVALID_ARG &&
              strstr(tfm_last_error(), "--tgt-lang 'deu_Latn'") && strstr(tfm_last_error(), "--list-langs") &&
              strstr(tfm_last_error(), "eng_Latn"),
          "unknown code: %s", tfm_last_error());
    CHECK(nllb_tok_set_langs(t, "xx_Latn", "spa_Latn", 0) == TFM_ERR_INVALID_ARG &&
              strstr(tfm_last_error(), "--src-lang 'xx_Latn'") && nllb_tok_tgt_lang(t) == -1,
          "unknown source code: %s", tfm_last_error());
    CHECK(nllb_tok_set_langs(t, NULL, "spa_Latn", 0) == TFM_OK && nllb_tok_tgt_lang(t) == 503 &&
              nllb_tok_lang_of(t, 503) && strcmp(nllb_tok_lang_of(t, 503), "spa_Latn") == 0 &&
              nllb_tok_mask_id(t) == 504 && !nllb_tok_lang_of(t, 504),
          "target code: %d", nllb_tok_tgt_lang(t));

    check_decode(t, GOLD "greedy.ids", GOLD "greedy.txt");
    check_decode(t, GOLD "beam4.ids", GOLD "beam4.txt");
    const int32_t specials[] = {0, 1, 2, 3, 501, 502, 503, 504, 505, 506, 20};
    char *s = NULL, *one = NULL;
    size_t len = 0;
    CHECK(nllb_tok_decode(t, specials, 11, &s, &len) == TFM_OK && nllb_tok_decode(t, specials + 10, 1, &one, &len) ==
              TFM_OK && s && one && *one && strcmp(s, one) == 0,
          "specials, codes, <mask> and rows past the tokenizer are skipped: '%s' vs '%s'", s ? s : "(null)",
          one ? one : "(null)");
    free(s);
    free(one);
    const int32_t neg = -1;
    CHECK(nllb_tok_decode(t, &neg, 1, &s, &len) == TFM_ERR_RANGE, "negative id");
    nllb_tok_free(t);
    check_bad_folders();
    return test_finish("test_nllb_tok");
}
