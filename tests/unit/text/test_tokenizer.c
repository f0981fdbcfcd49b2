/* The SentencePiece tokenizer through its C API (include/tfm/tokenizer.h): training on the
 * committed English/Spanish fixture, exact round trips, pinned ids, reserved ids, serialization,
 * files, and the errors for bad text, bad ids, bad models and bad training input. */
#define _POSIX_C_SOURCE 200809L

#include "test_util.h"
#include "tfm/tokenizer.h"
#include "utf8.h"

#include <stdint.h>
#include <unistd.h>

#define FIXTURE "tests/fixtures/tok_train.txt"
#define VOCAB 500

static char g_tmpdir[256];

static const char *tmp_path(const char *name) {
    static char buf[4][512];
    static int slot = 0;
    char *b = buf[slot++ & 3];
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

/* The fixture's lines (without "\n"); *n set to their count. */
static char **read_lines(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        exit(1);
    }
    char **lines = NULL;
    size_t count = 0, cap = 0;
    char *buf = NULL;
    size_t bcap = 0;
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

static tfm_tokenizer *train(const char *const *paths, size_t n, int vocab) {
    tfm_tokenizer_train_opts o;
    tfm_tokenizer_train_opts_default(&o);
    o.vocab_size = vocab;
    tfm_tokenizer *tok = NULL;
    tfm_status st = tfm_tokenizer_train(paths, n, &o, &tok);
    CHECK(st == TFM_OK && tok, "training on %s: %s", paths[0], tfm_last_error());
    return tok;
}

static int same_bytes(const tfm_tokenizer *a, const tfm_tokenizer *b) {
    uint8_t *ba = NULL, *bb = NULL;
    size_t la = 0, lb = 0;
    int ok = tfm_tokenizer_serialize(a, &ba, &la) == TFM_OK && tfm_tokenizer_serialize(b, &bb, &lb) == TFM_OK &&
             la == lb && la > 0 && memcmp(ba, bb, la) == 0;
    free(ba);
    free(bb);
    return ok;
}

/* decode(encode(s)) == s byte for byte; returns 1 if so (and records a named failure if not). */
static int round_trip(const tfm_tokenizer *tok, const char *s, size_t len, const char *name) {
    int32_t *ids = NULL;
    size_t n = 0;
    char *back = NULL;
    size_t blen = 0;
    tfm_status st = tfm_tokenizer_encode(tok, s, len, &ids, &n);
    int ok = st == TFM_OK;
    if (ok) {
        for (size_t i = 0; i < n; i++) ok = ok && ids[i] > 3 && ids[i] < tfm_tokenizer_vocab_size(tok);
        st = tfm_tokenizer_decode(tok, ids, n, &back, &blen);
        ok = ok && st == TFM_OK && blen == len && memcmp(back, s, len) == 0 && back[len] == '\0';
    }
    CHECK(ok, "round trip of %s (%zu bytes): status %d (%s), decoded %zu bytes", name, len, (int)st,
          tfm_last_error(), blen);
    free(ids);
    free(back);
    return ok;
}

static void check_encode(const tfm_tokenizer *tok, const char *s, const int32_t *want, size_t n_want,
                         const char *name) {
    int32_t *ids = NULL;
    size_t n = 0;
    tfm_status st = tfm_tokenizer_encode(tok, s, strlen(s), &ids, &n);
    int ok = st == TFM_OK && n == n_want && (n == 0 || memcmp(ids, want, n * sizeof *ids) == 0);
    CHECK(ok, "pinned ids of %s: status %d, %zu ids (want %zu)", name, (int)st, n, n_want);
    if (!ok) {
        fprintf(stderr, "  got:");
        for (size_t i = 0; i < n; i++) fprintf(stderr, " %d", (int)ids[i]);
        fprintf(stderr, "\n");
    }
    free(ids);
}

static void test_reserved_and_pieces(const tfm_tokenizer *tok) {
    CHECK(tfm_tokenizer_vocab_size(tok) == VOCAB, "vocab size %d, want %d", tfm_tokenizer_vocab_size(tok), VOCAB);
    CHECK(tfm_tokenizer_pad_id(tok) == TFM_TOK_PAD_ID && TFM_TOK_PAD_ID == 0, "pad id %d", tfm_tokenizer_pad_id(tok));
    CHECK(tfm_tokenizer_bos_id(tok) == TFM_TOK_BOS_ID && TFM_TOK_BOS_ID == 1, "bos id %d", tfm_tokenizer_bos_id(tok));
    CHECK(tfm_tokenizer_eos_id(tok) == TFM_TOK_EOS_ID && TFM_TOK_EOS_ID == 2, "eos id %d", tfm_tokenizer_eos_id(tok));
    CHECK(tfm_tokenizer_unk_id(tok) == TFM_TOK_UNK_ID && TFM_TOK_UNK_ID == 3, "unk id %d", tfm_tokenizer_unk_id(tok));
    const char *want[4] = {"<pad>", "<s>", "</s>", "<unk>"};
    for (int32_t i = 0; i < 4; i++) {
        const char *p = tfm_tokenizer_id_to_piece(tok, i);
        CHECK(p && strcmp(p, want[i]) == 0, "piece of id %d is '%s', want '%s'", (int)i, p ? p : "(null)", want[i]);
        CHECK(tfm_tokenizer_piece_to_id(tok, want[i]) == i, "id of piece %s", want[i]);
    }
    /* Byte fallback: all 256 byte pieces exist, right after the reserved ids. */
    CHECK(tfm_tokenizer_piece_to_id(tok, "<0x00>") == 4 && tfm_tokenizer_piece_to_id(tok, "<0xFF>") == 259,
          "byte pieces at ids 4..259: <0x00>=%d <0xFF>=%d", (int)tfm_tokenizer_piece_to_id(tok, "<0x00>"),
          (int)tfm_tokenizer_piece_to_id(tok, "<0xFF>"));
    int32_t the = tfm_tokenizer_piece_to_id(tok, "\xe2\x96\x81the"); /* "▁the" */
    const char *p = tfm_tokenizer_id_to_piece(tok, the);
    CHECK(the > 259 && p && strcmp(p, "\xe2\x96\x81the") == 0, "piece '▁the' has id %d", (int)the);
    CHECK(tfm_tokenizer_piece_to_id(tok, "no-such-piece-xyz") == TFM_TOK_UNK_ID, "unknown piece maps to unk");
    CHECK(tfm_tokenizer_id_to_piece(tok, -1) == NULL, "piece of id -1 is NULL");
    CHECK(tfm_tokenizer_id_to_piece(tok, VOCAB) == NULL, "piece of id V is NULL");
    CHECK(tfm_tokenizer_id_to_piece(tok, VOCAB - 1) != NULL, "piece of id V-1 exists");
}

static void test_round_trips(const tfm_tokenizer *tok) {
    size_t n_lines = 0;
    char **lines = read_lines(test_path(FIXTURE), &n_lines);
    CHECK(n_lines >= 300, "fixture has %zu lines", n_lines);
    size_t ok = 0;
    for (size_t i = 0; i < n_lines; i++) {
        char name[64];
        snprintf(name, sizeof name, "fixture line %zu", i + 1);
        ok += (size_t)round_trip(tok, lines[i], strlen(lines[i]), name);
        free(lines[i]);
    }
    free(lines);
    CHECK(ok == n_lines, "%zu of %zu fixture lines round-trip", ok, n_lines);

    static const char *cases[][2] = {
        {"accented Spanish", "¿Dónde está el niño? ¡Qué año!"},
        {"Greek", "Καλημέρα κόσμε"},
        {"Cyrillic", "Привет, мир"},
        {"CJK", "你好世界、こんにちは"},
        {"emoji", "🎉👍🏽 ok"},
        {"NFKC-sensitive characters", "ﬁ ½ ＡＢＣ Ⅻ ㎏ e\xcc\x81 vs \xc3\xa9"},
        {"spaces", "  two  spaces, trailing "},
        {"tab and control", "a\tb\x01" "c\x7f"},
        {"single space", " "},
        {"unknown words", "Zyxwvut qqq jjj"},
        {"U+10FFFF", "\xf4\x8f\xbf\xbf"},
        {"unk surface text", " \xe2\x81\x87 "},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        round_trip(tok, cases[i][1], strlen(cases[i][1]), cases[i][0]);

    /* Empty text: no ids, decodes to "". */
    int32_t *ids = (int32_t *)1;
    size_t n = 99;
    CHECK(tfm_tokenizer_encode(tok, "", 0, &ids, &n) == TFM_OK && n == 0 && ids == NULL, "empty text gives no ids");
    char *text = NULL;
    size_t len = 99;
    CHECK(tfm_tokenizer_decode(tok, NULL, 0, &text, &len) == TFM_OK && len == 0 && text && text[0] == '\0',
          "no ids decode to an empty string");
    free(text);

    /* A 10,000-character word, ASCII and 2-byte characters. */
    size_t big = 10000;
    char *word = malloc(2 * big + 1);
    for (size_t i = 0; i < big; i++) word[i] = (char)('a' + (i * 7) % 26);
    round_trip(tok, word, big, "10,000-letter word");
    for (size_t i = 0; i < big; i++) memcpy(word + 2 * i, i % 3 ? "\xc3\xb1" : "\xc3\xa1", 2);
    round_trip(tok, word, 2 * big, "10,000 accented letters");
    free(word);
}

static void test_pinned(const tfm_tokenizer *tok) {
    /* Training is deterministic, so these ids are fixed for this fixture and these options; a
     * change means the model (or SentencePiece) changed, which breaks every stored id file. */
    static const int32_t en[] = {329, 264, 269, 310, 498, 323, 264, 325, 383, 371, 281, 267, 268, 293,
                                 269, 305, 267, 337, 264, 262, 277, 269, 260, 263, 315, 400, 266};
    static const int32_t es[] = {288, 397, 388, 284, 426, 263, 267, 282, 260, 280, 278, 493,
                                 284, 273, 319, 278, 321, 282, 260, 280, 278, 493, 266};
    check_encode(tok, "In the beginning God created the heavens and the earth.", en, sizeof en / sizeof en[0],
                 "English sentence");
    check_encode(tok, "Y dijo Dios: Sea la luz: y fué la luz.", es, sizeof es / sizeof es[0], "Spanish sentence");
    /* "¡" is not in the fixture: after the word-start piece "▁" it falls back to its UTF-8
     * bytes C2 A1, byte b being id 4 + b. */
    const int32_t bang[] = {tfm_tokenizer_piece_to_id(tok, "\xe2\x96\x81"), 4 + 0xC2, 4 + 0xA1};
    check_encode(tok, "¡", bang, 3, "byte fallback of ¡");
}

static void test_decode(const tfm_tokenizer *tok) {
    const char *s = "Y dijo Dios: Sea la luz.";
    int32_t *ids = NULL;
    size_t n = 0;
    CHECK(tfm_tokenizer_encode(tok, s, strlen(s), &ids, &n) == TFM_OK && n > 2, "encode for decode test");
    /* BOS first, EOS last, pads after: all skipped. */
    int32_t *framed = malloc((n + 5) * sizeof *framed);
    framed[0] = TFM_TOK_BOS_ID;
    memcpy(framed + 1, ids, n * sizeof *ids);
    framed[n + 1] = TFM_TOK_EOS_ID;
    framed[n + 2] = framed[n + 3] = framed[n + 4] = TFM_TOK_PAD_ID;
    char *text = NULL;
    size_t len = 0;
    tfm_status st = tfm_tokenizer_decode(tok, framed, n + 5, &text, &len);
    CHECK(st == TFM_OK && text && strcmp(text, s) == 0 && len == strlen(s), "decode skips pad/bos/eos: '%s'",
          text ? text : "(null)");
    free(text);

    /* Ids outside [0, V): a range error naming the position. */
    framed[2] = VOCAB;
    text = (char *)1;
    st = tfm_tokenizer_decode(tok, framed, n + 5, &text, &len);
    CHECK(st == TFM_ERR_RANGE && text == NULL && strstr(tfm_last_error(), "position 3"),
          "id V rejected: %d '%s'", (int)st, tfm_last_error());
    framed[2] = -1;
    st = tfm_tokenizer_decode(tok, framed, n + 5, &text, &len);
    CHECK(st == TFM_ERR_RANGE && strstr(tfm_last_error(), "-1"), "id -1 rejected: %d '%s'", (int)st,
          tfm_last_error());

    /* Byte pieces that are not UTF-8 (a lone lead byte) decode to U+FFFD: still valid text. */
    int32_t lone[] = {4 + 'A', 4 + 0xC3, 4 + 'B'};
    st = tfm_tokenizer_decode(tok, lone, 3, &text, &len);
    CHECK(st == TFM_OK && text && strcmp(text, "A\xef\xbf\xbd" "B") == 0, "lone byte piece decodes to U+FFFD: '%s'",
          text ? text : "(null)");
    free(text);
    free(framed);
    free(ids);
}

static void test_invalid_utf8(const tfm_tokenizer *tok) {
    static const struct {
        const char *name, *s;
        size_t len, bad_byte; /* 1-based offset the message must name */
    } cases[] = {
        {"lone continuation byte", "ab\x80" "cd", 5, 3},
        {"overlong '/'", "x\xc0\xaf", 3, 2},
        {"overlong 3-byte", "\xe0\x80\xaf", 3, 1},
        {"surrogate U+D800", "ok \xed\xa0\x80", 6, 4},
        {"above U+10FFFF", "\xf4\x90\x80\x80", 4, 1},
        {"byte F5", "\xf5\x80\x80\x80", 4, 1},
        {"byte FF", "\xff", 1, 1},
        {"truncated 3-byte at end", "é\xe2\x82", 4, 3},
        {"truncated 2-byte before ASCII", "\xc3" "a", 2, 1},
        {"NUL byte", "a\0b", 3, 2},
        {"Latin-1 text", "ni\xf1o", 4, 3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        CHECK(utf8_first_invalid(cases[i].s, cases[i].len) == cases[i].bad_byte - 1, "validator on %s: %zu",
              cases[i].name, utf8_first_invalid(cases[i].s, cases[i].len));
        int32_t *ids = (int32_t *)1;
        size_t n = 99;
        tfm_status st = tfm_tokenizer_encode(tok, cases[i].s, cases[i].len, &ids, &n);
        char want[64];
        snprintf(want, sizeof want, "at byte %zu of %zu", cases[i].bad_byte, cases[i].len);
        CHECK(st == TFM_ERR_FORMAT && ids == NULL && n == 0 && strstr(tfm_last_error(), want),
              "encode of %s: status %d, message '%s' (want '%s')", cases[i].name, (int)st, tfm_last_error(), want);
    }
    static const char *valid[] = {"", "plain", "\xc2\x80", "\xdf\xbf", "\xe0\xa0\x80", "\xef\xbf\xbf",
                                  "\xed\x9f\xbf", "\xee\x80\x80", "\xf0\x90\x80\x80", "\xf4\x8f\xbf\xbf"};
    for (size_t i = 0; i < sizeof valid / sizeof valid[0]; i++)
        CHECK(utf8_first_invalid(valid[i], strlen(valid[i])) == strlen(valid[i]), "valid UTF-8 case %zu", i);
}

static void test_serialize_and_files(const tfm_tokenizer *tok) {
    uint8_t *bytes = NULL;
    size_t len = 0;
    CHECK(tfm_tokenizer_serialize(tok, &bytes, &len) == TFM_OK && len > 1000, "serialize: %zu bytes", len);
    tfm_tokenizer *back = NULL;
    CHECK(tfm_tokenizer_load_bytes(bytes, len, &back) == TFM_OK && back, "load_bytes: %s", tfm_last_error());
    if (back) {
        CHECK(same_bytes(tok, back), "serialize(load(serialize(t))) == serialize(t)");
        CHECK(tfm_tokenizer_vocab_size(back) == VOCAB, "restored vocab size");
        size_t n_lines = 0;
        char **lines = read_lines(test_path(FIXTURE), &n_lines);
        size_t same = 0;
        for (size_t i = 0; i < n_lines; i++) {
            int32_t *a = NULL, *b = NULL;
            size_t na = 0, nb = 0;
            if (tfm_tokenizer_encode(tok, lines[i], strlen(lines[i]), &a, &na) == TFM_OK &&
                tfm_tokenizer_encode(back, lines[i], strlen(lines[i]), &b, &nb) == TFM_OK && na == nb &&
                (na == 0 || memcmp(a, b, na * sizeof *a) == 0))
                same++;
            free(a);
            free(b);
            free(lines[i]);
        }
        free(lines);
        CHECK(same == n_lines, "restored model encodes %zu of %zu lines identically", same, n_lines);
        tfm_tokenizer_free(back);
    }

    /* Files: save atomically, load back, nothing else left in the folder. */
    const char *path = tmp_path("m.model");
    CHECK(tfm_tokenizer_save_file(tok, path) == TFM_OK, "save_file: %s", tfm_last_error());
    tfm_tokenizer *loaded = NULL;
    CHECK(tfm_tokenizer_load_file(path, &loaded) == TFM_OK && loaded, "load_file: %s", tfm_last_error());
    if (loaded) {
        CHECK(same_bytes(tok, loaded), "file round trip keeps the bytes");
        tfm_tokenizer_free(loaded);
    }
    char tmp_name[600];
    snprintf(tmp_name, sizeof tmp_name, "%s.tmp.%ld", path, (long)getpid());
    CHECK(access(tmp_name, F_OK) != 0, "no temporary file left behind");
    CHECK(tfm_tokenizer_save_file(tok, tmp_path("no-such-dir/m.model")) == TFM_ERR_IO &&
              strstr(tfm_last_error(), "no-such-dir"),
          "save into a missing folder: %s", tfm_last_error());
    loaded = (tfm_tokenizer *)1;
    CHECK(tfm_tokenizer_load_file(tmp_path("missing.model"), &loaded) == TFM_ERR_IO && loaded == NULL &&
              strstr(tfm_last_error(), "missing.model"),
          "load of a missing file: %s", tfm_last_error());

    /* Garbage: a clean format error naming the file, never a crash. */
    write_file(tmp_path("garbage.model"), "this is not a model\n", 20);
    CHECK(tfm_tokenizer_load_file(tmp_path("garbage.model"), &loaded) == TFM_ERR_FORMAT && loaded == NULL &&
              strstr(tfm_last_error(), "garbage.model"),
          "load of a text file: %s", tfm_last_error());
    write_file(tmp_path("empty.model"), "", 0);
    CHECK(tfm_tokenizer_load_file(tmp_path("empty.model"), &loaded) == TFM_ERR_FORMAT,
          "load of an empty file: %s", tfm_last_error());
    CHECK(tfm_tokenizer_load_bytes(bytes, len / 2, &loaded) == TFM_ERR_FORMAT && loaded == NULL,
          "load of a truncated model: %s", tfm_last_error());
    static const char junk[][8] = {"\xff\xff\xff\xff", "\x0a\x05hi", "\x08\x01", "\x12\x00"};
    for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++) {
        tfm_status st = tfm_tokenizer_load_bytes(junk[i], strlen(junk[i]), &loaded);
        CHECK(st == TFM_ERR_FORMAT && loaded == NULL, "junk bytes %zu: status %d", i, (int)st);
    }
    /* Corrupted models (flipped bits, random bytes): each either loads and works or is refused. */
    uint8_t *copy = malloc(len);
    uint32_t rng = 12345u;
    size_t refused = 0, usable = 0;
    for (int it = 0; it < 300; it++) {
        memcpy(copy, bytes, len);
        for (int k = 0; k < 3; k++) {
            rng = rng * 1664525u + 1013904223u;
            copy[(rng >> 8) % len] ^= (uint8_t)(1u << (rng & 7));
        }
        tfm_tokenizer *t = NULL;
        if (tfm_tokenizer_load_bytes(copy, len, &t) != TFM_OK) {
            refused++;
            continue;
        }
        int32_t *ids = NULL;
        size_t n = 0;
        char *text = NULL;
        size_t tl = 0;
        if (tfm_tokenizer_encode(t, "Hello, mundo.", 13, &ids, &n) == TFM_OK &&
            tfm_tokenizer_decode(t, ids, n, &text, &tl) == TFM_OK)
            usable++;
        free(ids);
        free(text);
        tfm_tokenizer_free(t);
    }
    CHECK(refused + usable == 300 && refused > 0, "corrupted models: %zu refused, %zu usable", refused, usable);
    free(copy);
    free(bytes);
}

static void test_training(const tfm_tokenizer *tok) {
    /* Deterministic: the same input gives the same bytes. */
    const char *fixture = test_path(FIXTURE);
    tfm_tokenizer *again = train(&fixture, 1, VOCAB);
    CHECK(again && same_bytes(tok, again), "training twice gives the same model");
    tfm_tokenizer_free(again);

    /* Several files: the fixture split into its English and Spanish halves (same lines, same
     * order, CRLF line ends and blank lines in the second) gives the same model. */
    size_t n_lines = 0;
    char **lines = read_lines(fixture, &n_lines);
    FILE *en = fopen(tmp_path("en.txt"), "wb"), *es = fopen(tmp_path("es.txt"), "wb");
    for (size_t i = 0; i < n_lines; i++) {
        int spanish = strncmp(lines[i], "Y ACONTECI", 10) == 0 || (i > 0 && ftell(es) > 0);
        if (spanish) fprintf(es, "%s\r\n%s", lines[i], i % 50 == 0 ? "\r\n\n" : "");
        else fprintf(en, "%s\n", lines[i]);
        free(lines[i]);
    }
    free(lines);
    CHECK(ftell(en) > 1000 && ftell(es) > 1000, "fixture splits into English and Spanish");
    fclose(en);
    fclose(es);
    const char *two[2] = {tmp_path("en.txt"), tmp_path("es.txt")};
    tfm_tokenizer *joint = train(two, 2, VOCAB);
    CHECK(joint && same_bytes(tok, joint), "two files give the model of their concatenation");
    tfm_tokenizer_free(joint);

    /* Errors. */
    tfm_tokenizer_train_opts o;
    tfm_tokenizer_train_opts_default(&o);
    CHECK(o.vocab_size == 8000 && o.byte_fallback == 1 && o.num_threads == 2 && o.character_coverage == 1.0f,
          "defaults");
    tfm_tokenizer *t = (tfm_tokenizer *)1;
    tfm_status st = tfm_tokenizer_train(&fixture, 1, &o, &t);
    CHECK(st == TFM_ERR_INVALID_ARG && t == NULL && strstr(tfm_last_error(), "vocab_size 8000 is more than the text supports: at most ") &&
              !strstr(tfm_last_error(), ".cc("),
          "vocab 8000 on a small text: %d '%s'", (int)st, tfm_last_error());
    /* vocab_size_at_most: as many pieces as the text supports, no error */
    o.vocab_size_at_most = 1;
    st = tfm_tokenizer_train(&fixture, 1, &o, &t);
    CHECK(st == TFM_OK && t && tfm_tokenizer_vocab_size(t) > 300 && tfm_tokenizer_vocab_size(t) < 8000,
          "vocab up to 8000 on a small text: %d, %d pieces", (int)st, t ? tfm_tokenizer_vocab_size(t) : 0);
    tfm_tokenizer_free(t);
    o.vocab_size_at_most = 0;
    o.vocab_size = 300;
    st = tfm_tokenizer_train(&fixture, 1, &o, &t);
    CHECK(st == TFM_ERR_INVALID_ARG && strstr(tfm_last_error(), "required_chars"),
          "vocab 300 below the characters + bytes: %d '%s'", (int)st, tfm_last_error());
    o.vocab_size = VOCAB;
    o.character_coverage = 1.5f;
    CHECK(tfm_tokenizer_train(&fixture, 1, &o, &t) == TFM_ERR_INVALID_ARG, "character_coverage 1.5 refused");
    o.character_coverage = 1.0f;
    o.input_sentence_size = 50;
    CHECK(tfm_tokenizer_train(&fixture, 1, &o, &t) == TFM_ERR_INVALID_ARG, "input_sentence_size 50 refused");
    o.input_sentence_size = 0;
    CHECK(tfm_tokenizer_train(&fixture, 0, &o, &t) == TFM_ERR_INVALID_ARG, "no files refused");

    const char *missing[2] = {fixture, tmp_path("missing.txt")};
    st = tfm_tokenizer_train(missing, 2, &o, &t);
    CHECK(st == TFM_ERR_IO && t == NULL && strstr(tfm_last_error(), "missing.txt"), "missing training file: '%s'",
          tfm_last_error());

    {
        const char *b = "good line\nsecond line\nthird \xe9t\xe9 line\n";
        write_file(tmp_path("bad.txt"), b, strlen(b));
    }
    const char *bad = tmp_path("bad.txt");
    st = tfm_tokenizer_train(&bad, 1, &o, &t);
    CHECK(st == TFM_ERR_FORMAT && strstr(tfm_last_error(), "bad.txt:3:") && strstr(tfm_last_error(), "byte 7"),
          "invalid UTF-8 in training text: '%s'", tfm_last_error());

    write_file(tmp_path("blank.txt"), "\n\r\n\n", 4);
    const char *blank = tmp_path("blank.txt");
    st = tfm_tokenizer_train(&blank, 1, &o, &t);
    CHECK(st == TFM_ERR_FORMAT && strstr(tfm_last_error(), "no text"), "blank training text: %d '%s'", (int)st,
          tfm_last_error());
}

int main(void) {
    if (!test_make_tmpdir(g_tmpdir, sizeof g_tmpdir, "tokenizer")) return 1;
    char cmd[400];

    const char *fixture = test_path(FIXTURE);
    tfm_tokenizer *tok = train(&fixture, 1, VOCAB);
    if (tok) {
        test_reserved_and_pieces(tok);
        test_round_trips(tok);
        test_pinned(tok);
        test_decode(tok);
        test_invalid_utf8(tok);
        test_serialize_and_files(tok);
        test_training(tok);
        tfm_tokenizer_free(tok);
    }
    tfm_tokenizer_free(NULL);

    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_tmpdir);
    return test_finish("test_tokenizer");
}
