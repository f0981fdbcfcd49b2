/* tfm tokenize — train a SentencePiece unigram vocabulary, or turn text lines into id lines and
 * back (include/tfm/tokenizer.h); --wordpiece encodes with a BERT WordPiece tokenizer instead
 * (include/tfm/wordpiece.h), --bpe encodes and decodes with a byte-level BPE (include/tfm/bpe.h). Encode and decode keep files aligned: exactly one output line
 * per input line, an empty line giving an empty line. */
#define _POSIX_C_SOURCE 200809L

#include "args.h"
#include "commands.h"
#include "text_io.h"

#include "tfm/bpe.h"
#include "tfm/fileio.h"
#include "tfm/text.h"
#include "tfm/tokenizer.h"
#include "tfm/wordpiece.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CMD "tokenize"

/* The next input line into *line (NULL at the end); prints the reader's error and returns 0 on
 * failure (a read error, a NUL byte). */
static int next_line(tfm_line_reader *in, const char **line, size_t *len) {
    if (tfm_line_reader_next(in, line, len) == TFM_OK) return 1;
    cli_error(CMD, "%s", tfm_last_error());
    return 0;
}

static int encode_lines(const tfm_tokenizer *tok, tfm_line_reader *in, FILE *out, int add_bos, int add_eos) {
    const char *in_name = tfm_line_reader_name(in), *line = NULL;
    size_t n = 0;
    int ok = 1;
    while ((ok = next_line(in, &line, &n)) && line) {
        const size_t line_no = tfm_line_reader_line_number(in);
        int32_t *ids = NULL;
        size_t n_ids = 0;
        if (tfm_tokenizer_encode(tok, line, n, &ids, &n_ids) != TFM_OK) {
            cli_error(CMD, "%s:%zu: %s", in_name, line_no, tfm_last_error());
            ok = 0;
            break;
        }
        const char *sep = "";
        if (add_bos) {
            fprintf(out, "%d", tfm_tokenizer_bos_id(tok));
            sep = " ";
        }
        for (size_t i = 0; i < n_ids; i++, sep = " ") fprintf(out, "%s%d", sep, (int)ids[i]);
        if (add_eos) fprintf(out, "%s%d", sep, tfm_tokenizer_eos_id(tok));
        fputc('\n', out);
        free(ids);
    }
    return ok;
}

/* An encoder of one line for encode_id_lines: the ids (malloc'd) or a status with its message. */
typedef tfm_status (*line_encoder)(const void *ctx, const char *line, size_t n, int32_t **ids, size_t *n_ids);

/* Lines of text to lines of ids, one for one; names file:line in an error. */
static int encode_id_lines(line_encoder enc, const void *ctx, tfm_line_reader *in, FILE *out) {
    const char *line = NULL;
    size_t n = 0;
    int ok = 1;
    while ((ok = next_line(in, &line, &n)) && line) {
        int32_t *ids = NULL;
        size_t n_ids = 0;
        if (enc(ctx, line, n, &ids, &n_ids) != TFM_OK) {
            cli_error(CMD, "%s:%zu: %s", tfm_line_reader_name(in), tfm_line_reader_line_number(in), tfm_last_error());
            return 0;
        }
        for (size_t i = 0; i < n_ids; i++) fprintf(out, i ? " %d" : "%d", (int)ids[i]);
        fputc('\n', out);
        free(ids);
    }
    return ok;
}

/* --encode --wordpiece: BERT WordPiece ids, [CLS] first and [SEP] last, at most max_tokens. */
typedef struct {
    const tfm_wordpiece *wp;
    size_t max_tokens;
} wordpiece_ctx;

static tfm_status encode_wordpiece(const void *ctx, const char *line, size_t n, int32_t **ids, size_t *n_ids) {
    const wordpiece_ctx *c = ctx;
    return tfm_wordpiece_encode(c->wp, line, n, 1, c->max_tokens, ids, n_ids);
}

/* --encode --bpe: ids with the post-processor's BOS/EOS (as `tokenizers`' encode). */
static tfm_status encode_bpe(const void *ctx, const char *line, size_t n, int32_t **ids, size_t *n_ids) {
    return tfm_bpe_encode(ctx, line, n, 1, ids, n_ids);
}

/* Parses a line of space/tab separated decimal ids into *ids (grown as needed). Names the line
 * and the token in any error. */
static int parse_ids(const char *line, const char *in_name, size_t line_no, int vocab, int32_t **ids, size_t *cap,
                     size_t *n) {
    *n = 0;
    const char *p = line;
    for (size_t col = 1;; col++) {
        while (*p == ' ' || *p == '\t') p++;
        if (*p == '\0') return 1;
        const char *start = p;
        while (*p != '\0' && *p != ' ' && *p != '\t') p++;
        size_t len = (size_t)(p - start);
        long long v = 0;
        int digits = 1;
        for (size_t i = 0; i < len && digits; i++) {
            if (start[i] < '0' || start[i] > '9') digits = 0;
            else if (v <= INT_MAX) v = v * 10 + (start[i] - '0');
        }
        if (!digits) {
            cli_error(CMD, "%s:%zu: token %zu '%.*s' is not a token id (a non-negative integer)", in_name, line_no,
                      col, (int)(len > 40 ? 40 : len), start);
            return 0;
        }
        if (v >= vocab) {
            cli_error(CMD, "%s:%zu: token %zu: id %.*s is outside the vocabulary [0, %d)", in_name, line_no, col,
                      (int)(len > 40 ? 40 : len), start, vocab);
            return 0;
        }
        if (*n == *cap) {
            size_t nc = *cap ? *cap * 2 : 256;
            int32_t *grown = realloc(*ids, nc * sizeof *grown);
            if (!grown) {
                cli_error(CMD, "out of memory");
                return 0;
            }
            *ids = grown;
            *cap = nc;
        }
        (*ids)[(*n)++] = (int32_t)v;
    }
}

/* A decoder of one id line for decode_id_lines: the text (malloc'd) or a status with its message. */
typedef tfm_status (*line_decoder)(const void *ctx, const int32_t *ids, size_t n_ids, char **text, size_t *len);

/* Lines of ids (each below vocab) to lines of text, one for one; names file:line in an error. */
static int decode_id_lines(line_decoder dec, const void *ctx, int vocab, tfm_line_reader *in, FILE *out) {
    const char *in_name = tfm_line_reader_name(in), *line = NULL;
    size_t line_len = 0, ids_cap = 0, n_ids = 0;
    int32_t *ids = NULL;
    int ok = 1;
    while ((ok = next_line(in, &line, &line_len)) && line) {
        const size_t line_no = tfm_line_reader_line_number(in);
        if (!parse_ids(line, in_name, line_no, vocab, &ids, &ids_cap, &n_ids)) {
            ok = 0;
            break;
        }
        char *text = NULL;
        size_t len = 0;
        if (dec(ctx, ids, n_ids, &text, &len) != TFM_OK) {
            cli_error(CMD, "%s:%zu: %s", in_name, line_no, tfm_last_error());
            ok = 0;
            break;
        }
        /* Byte pieces can spell a line break of any kind; keep one line per input line. */
        len = tfm_text_one_line(text, len);
        fwrite(text, 1, len, out);
        fputc('\n', out);
        free(text);
    }
    free(ids);
    return ok;
}

static tfm_status decode_spm(const void *ctx, const int32_t *ids, size_t n_ids, char **text, size_t *len) {
    return tfm_tokenizer_decode(ctx, ids, n_ids, text, len);
}

/* --decode --bpe: text without the special tokens. */
static tfm_status decode_bpe(const void *ctx, const int32_t *ids, size_t n_ids, char **text, size_t *len) {
    return tfm_bpe_decode(ctx, ids, n_ids, 1, text, len);
}

static int run_train(const char *inputs, const char *save, const tfm_tokenizer_train_opts *opts) {
    if (!inputs || !save) {
        cli_error(CMD, "--train needs --input F[,F2...] and --save-model M");
        return EXIT_USAGE;
    }
    char *list = strdup(inputs);
    size_t n = 1;
    for (const char *c = inputs; *c; c++) n += *c == ',';
    const char **paths = malloc(n * sizeof *paths);
    if (!list || !paths) {
        free(list);
        free(paths);
        cli_error(CMD, "out of memory");
        return EXIT_RUNTIME;
    }
    size_t k = 0;
    for (char *tok = list, *next; tok; tok = next) {
        next = strchr(tok, ',');
        if (next) *next++ = '\0';
        if (*tok) paths[k++] = tok;
    }
    int rc = EXIT_RUNTIME;
    tfm_tokenizer *tok = NULL;
    /* fail early: the destination (not one of the inputs) and every input first */
    cli_path *ins = malloc((k ? k : 1) * sizeof *ins);
    const cli_path out = {"--save-model", save};
    for (size_t i = 0; ins && i < k; i++) ins[i] = (cli_path){"--input", paths[i]};
    int inputs_ok = ins && cli_outputs_ok(CMD, ins, k, &out, 1);
    if (!ins) cli_error(CMD, "out of memory");
    free(ins);
    for (size_t i = 0; inputs_ok && i < k; i++) {
        FILE *f = fopen(paths[i], "rb");
        if (!f) {
            cli_error(CMD, "%s: cannot open: %s", paths[i], strerror(errno));
            inputs_ok = 0;
        } else {
            fclose(f);
        }
    }
    if (!inputs_ok) {
        rc = EXIT_RUNTIME;
    } else if (k == 0) {
        cli_error(CMD, "--input names no file");
        rc = EXIT_USAGE;
    } else if (tfm_tokenizer_train(paths, k, opts, &tok) != TFM_OK ||
               tfm_tokenizer_save_file(tok, save) != TFM_OK) {
        cli_error(CMD, "%s", tfm_last_error());
    } else {
        fprintf(stderr, "tfm tokenize: trained a %d-piece unigram vocabulary on %zu file%s; saved %s\n",
                tfm_tokenizer_vocab_size(tok), k, k == 1 ? "" : "s", save);
        rc = 0;
    }
    tfm_tokenizer_free(tok);
    free(paths);
    free(list);
    return rc;
}

static int run_wordpiece(const char *path, const char *input, const char *output, size_t max_tokens) {
    const cli_path ins[] = {{"--input", input}, {"--wordpiece", path}}, outs[] = {{"--output", output}};
    if (!cli_outputs_ok(CMD, ins, 2, outs, 1)) return EXIT_RUNTIME; /* fail early: before loading anything */
    tfm_wordpiece *wp = NULL;
    if (tfm_wordpiece_load(path, &wp) != TFM_OK) {
        cli_error(CMD, "%s", tfm_last_error());
        return EXIT_RUNTIME;
    }
    tfm_line_reader *in = NULL;
    if ((input ? tfm_line_reader_open(input, 0, &in) : tfm_line_reader_from_stream(stdin, "<stdin>", 0, &in)) !=
        TFM_OK) {
        cli_error(CMD, "%s", tfm_last_error());
        tfm_wordpiece_free(wp);
        return EXIT_RUNTIME;
    }
    cli_output out;
    int ok = cli_output_open(CMD, output, &out);
    const wordpiece_ctx ctx = {wp, max_tokens};
    if (ok) ok = cli_output_close(CMD, &out, encode_id_lines(encode_wordpiece, &ctx, in, out.f));
    tfm_line_reader_free(in);
    tfm_wordpiece_free(wp);
    return ok ? 0 : EXIT_RUNTIME;
}

/* --bpe tokenizer.json, or --bpe vocab.json,merges.txt (GPT-2's two files, cut at the first comma). */
static int run_bpe(const char *spec, int encode, const char *input, const char *output) {
    char *vocab = strdup(spec);
    if (!vocab) {
        cli_error(CMD, "out of memory");
        return EXIT_RUNTIME;
    }
    char *merges = strchr(vocab, ',');
    if (merges) *merges++ = '\0';
    const cli_path ins[] = {{"--input", input}, {"--bpe", vocab}, {"--bpe", merges}}, outs[] = {{"--output", output}};
    int rc = EXIT_RUNTIME;
    tfm_bpe *bpe = NULL;
    tfm_line_reader *in = NULL;
    if (!cli_outputs_ok(CMD, ins, merges ? 3 : 2, outs, 1)) goto done; /* fail early: before loading anything */
    if ((merges ? tfm_bpe_load_files(vocab, merges, &bpe) : tfm_bpe_load(vocab, &bpe)) != TFM_OK ||
        (input ? tfm_line_reader_open(input, 0, &in) : tfm_line_reader_from_stream(stdin, "<stdin>", 0, &in)) !=
            TFM_OK) {
        cli_error(CMD, "%s", tfm_last_error());
        goto done;
    }
    cli_output out;
    int ok = cli_output_open(CMD, output, &out);
    const size_t V = tfm_bpe_vocab_size(bpe);
    if (ok)
        ok = cli_output_close(CMD, &out, encode ? encode_id_lines(encode_bpe, bpe, in, out.f)
                                                : decode_id_lines(decode_bpe, bpe, V > INT_MAX ? INT_MAX : (int)V, in,
                                                                  out.f));
    rc = ok ? 0 : EXIT_RUNTIME;
done:
    tfm_line_reader_free(in);
    tfm_bpe_free(bpe);
    free(vocab);
    return rc;
}

static int run_tokenize(int argc, char **argv) {
    int train = 0, encode = 0, decode = 0, add_bos = 0, add_eos = 0, verbose = 0;
    const char *input = NULL, *output = NULL, *save = NULL, *model = NULL, *wordpiece = NULL, *bpe = NULL;
    int max_tokens = 0;
    tfm_tokenizer_train_opts o;
    tfm_tokenizer_train_opts_default(&o);
    int seed = (int)o.seed;
    const cli_opt opts[] = {
        {"--train", OPT_FLAG, &train, 0, "train a vocabulary on --input, write it to --save-model"},
        {"--encode", OPT_FLAG, &encode, 0, "text lines -> lines of space-separated ids (no BOS/EOS added)"},
        {"--decode", OPT_FLAG, &decode, 0, "id lines -> text lines (pad/BOS/EOS skipped)"},
        {"--tokenizer", OPT_STR, &model, 0, "model file for --encode/--decode"},
        {"--input", OPT_STR, &input, 0, "--train: F[,F2...] UTF-8 text; else input file (default stdin)"},
        {"--output", OPT_STR, &output, 0, "--encode/--decode output file (default stdout)"},
        {"--save-model", OPT_STR, &save, 0, "--train: where to write the model (atomically)"},
        {"--vocab-size", OPT_INT, &o.vocab_size, 0, "--train: pieces, reserved and 256 byte pieces included"},
        {"--character-coverage", OPT_FLOAT, &o.character_coverage, 0, "--train: share of characters kept"},
        {"--input-sentence-size", OPT_INT, &o.input_sentence_size, 0, "--train: lines sampled, 0 = all"},
        {"--max-sentence-length", OPT_INT, &o.max_sentence_length, 0, "--train: longer lines (bytes) skipped"},
        {"--byte-fallback", OPT_INT, &o.byte_fallback, 0, "--train: 1 = unknown characters as bytes"},
        {"--threads", OPT_INT, &o.num_threads, 0, "--train: threads"},
        {"--seed", OPT_INT, &seed, 0, "--train: seed of the line sampling"},
        {"--verbose", OPT_FLAG, &verbose, 0, "--train: show SentencePiece's log"},
        {"--add-bos", OPT_FLAG, &add_bos, 0, "--encode: start every line with the BOS id"},
        {"--add-eos", OPT_FLAG, &add_eos, 0, "--encode: end every line with the EOS id"},
        {"--wordpiece", OPT_STR, &wordpiece, 0, "--encode with a BERT WordPiece tokenizer.json or vocab.txt"},
        {"--bpe", OPT_STR, &bpe, 0, "--encode/--decode with a byte-level BPE tokenizer.json, or vocab.json,merges.txt"},
        {"--max-tokens", OPT_INT, &max_tokens, 0, "--wordpiece: at most this many ids, [CLS]/[SEP] included "
                                                   "(0: the tokenizer's own limit)"},
    };
    int rc = cli_parse(&cmd_tokenize, argc, argv, opts, sizeof opts / sizeof opts[0]);
    if (rc == 1) return 0;
    if (rc != 0) return EXIT_USAGE;
    if (train + encode + decode != 1) {
        cli_error(CMD, "give exactly one of --train, --encode, --decode");
        fprintf(stderr, "usage: %s\n(try: tfm %s --help)\n", cmd_tokenize.usage, CMD);
        return EXIT_USAGE;
    }
    if (seed < 0) {
        cli_error(CMD, "--seed must be non-negative, got %d", seed);
        return EXIT_USAGE;
    }
    o.seed = (unsigned)seed;
    o.verbose = verbose;
    if (train) return run_train(input, save, &o);
    if (bpe) {
        if (wordpiece || model || add_bos || add_eos || max_tokens) {
            cli_error(CMD, "--bpe F goes with --encode or --decode alone (not --tokenizer, --wordpiece, --add-bos, "
                           "--add-eos, --max-tokens: the tokenizer's own template adds BOS/EOS)");
            return EXIT_USAGE;
        }
        return run_bpe(bpe, encode, input, output);
    }
    if (wordpiece || max_tokens) {
        if (!encode || !wordpiece || model || add_bos || add_eos || max_tokens < 0 || max_tokens == 1) {
            cli_error(CMD, "--wordpiece F goes with --encode only (not --tokenizer, --add-bos, --add-eos); "
                           "--max-tokens needs it and 0 or at least 2");
            return EXIT_USAGE;
        }
        return run_wordpiece(wordpiece, input, output, (size_t)max_tokens);
    }

    if (!model) {
        cli_error(CMD, "--%s needs --tokenizer M", encode ? "encode" : "decode");
        return EXIT_USAGE;
    }
    const cli_path ins[] = {{"--input", input}, {"--tokenizer", model}}, outs[] = {{"--output", output}};
    if (!cli_outputs_ok(CMD, ins, 2, outs, 1)) return EXIT_RUNTIME; /* fail early: before loading anything */
    tfm_tokenizer *tok = NULL;
    if (tfm_tokenizer_load_file(model, &tok) != TFM_OK) {
        cli_error(CMD, "%s", tfm_last_error());
        return EXIT_RUNTIME;
    }
    tfm_line_reader *in = NULL;
    if ((input ? tfm_line_reader_open(input, 0, &in) : tfm_line_reader_from_stream(stdin, "<stdin>", 0, &in)) !=
        TFM_OK) {
        cli_error(CMD, "%s", tfm_last_error());
        tfm_tokenizer_free(tok);
        return EXIT_RUNTIME;
    }
    cli_output out;
    int ok = cli_output_open(CMD, output, &out);
    if (ok) {
        ok = encode ? encode_lines(tok, in, out.f, add_bos, add_eos)
                    : decode_id_lines(decode_spm, tok, tfm_tokenizer_vocab_size(tok), in, out.f);
        ok = cli_output_close(CMD, &out, ok);
    }
    tfm_line_reader_free(in);
    tfm_tokenizer_free(tok);
    return ok ? 0 : EXIT_RUNTIME;
}

const cli_command cmd_tokenize = {
    "tokenize",
    "train a SentencePiece unigram vocabulary; encode text to id lines (or BERT WordPiece or byte-level BPE ids), "
    "decode id lines to text",
    "tfm tokenize --train --input F[,F2...] [--vocab-size N] --save-model M\n"
    "       tfm tokenize --encode --tokenizer M [--input F] [--output F]\n"
    "       tfm tokenize --encode --wordpiece tokenizer.json|vocab.txt [--max-tokens N] [--input F] [--output F]\n"
    "       tfm tokenize --encode|--decode --bpe tokenizer.json|vocab.json,merges.txt [--input F] [--output F]\n"
    "       tfm tokenize --decode --tokenizer M [--input F] [--output F]",
    run_tokenize,
};
