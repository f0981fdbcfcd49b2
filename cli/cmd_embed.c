/* tfm embed — one sentence vector per input line with an encoder-only model (include/tfm/embed.h,
 * docs/BERT.md): printed as space-separated floats, or written as a .npy array. */
#include "args.h"
#include "commands.h"
#include "embed_io.h"
#include "text_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A float32 (n, d) array in NumPy's .npy format, version 1.0: magic, header length, a header
 * dictionary padded with spaces to a multiple of 64 bytes ending in '\n', then the data (C order,
 * little-endian: this build's targets are). */
static int write_npy(FILE *f, const float *v, size_t n, size_t d) {
    char dict[160];
    int len = snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': (%zu, %zu), }", n, d);
    size_t total = 10 + (size_t)len + 1;
    size_t pad = (64 - total % 64) % 64;
    size_t hlen = (size_t)len + pad + 1, bytes = 10 + hlen + n * d * sizeof(float);
    unsigned char *buf = malloc(bytes);
    if (!buf) {
        cli_error("embed", "out of memory for the .npy file");
        return 0;
    }
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (unsigned char)(hlen & 0xff);
    buf[9] = (unsigned char)(hlen >> 8);
    memcpy(buf + 10, dict, (size_t)len);
    memset(buf + 10 + len, ' ', pad);
    buf[10 + hlen - 1] = '\n';
    memcpy(buf + 10 + hlen, v, n * d * sizeof(float));
    fwrite(buf, 1, bytes, f); /* a failure is reported by cli_output_close */
    free(buf);
    return 1;
}

static int run_embed(int argc, char **argv) {
    const char *model = NULL, *input = NULL, *npy = NULL;
    const cli_opt opts[] = {
        {"--model", OPT_STR, &model, 1, "a Hugging Face BERT folder (or its model.safetensors), or an encoder-only tfm "
                                        "checkpoint with its tokenizer beside it"},
        {"--input", OPT_STR, &input, 0, "UTF-8 text, one sentence per line (default: standard input)"},
        {"--npy", OPT_STR, &npy, 0, "write the vectors as a float32 (lines, dim) .npy file instead of printing them"},
    };
    int rc = cli_parse(&cmd_embed, argc, argv, opts, sizeof opts / sizeof opts[0]);
    if (rc == 1) return 0;
    if (rc != 0) return EXIT_USAGE;
    /* a model folder's files are inputs too (docs/BERT.md: what the embedder reads) */
    char parts[4][4200];
    const char *names[4] = {"model.safetensors", "config.json", "tokenizer.json", "vocab.txt"};
    for (int i = 0; i < 4; i++) snprintf(parts[i], sizeof parts[i], "%s/%s", model, names[i]);
    const cli_path ins[] = {{"--input", input}, {"--model", model},   {"--model", parts[0]},
                            {"--model", parts[1]}, {"--model", parts[2]}, {"--model", parts[3]}},
                   outs[] = {{"--npy", npy}};
    if (!cli_outputs_ok("embed", ins, 6, outs, 1)) return EXIT_RUNTIME;
    char **lines = NULL;
    size_t n = 0;
    if (!read_lines("embed", input, &lines, &n)) return EXIT_RUNTIME;
    tfm_embedder *e;
    tfm_context *ctx;
    float *v = NULL;
    int ok = embed_open("embed", model, &e, &ctx) &&
             embed_lines("embed", e, ctx, lines, n, input && strcmp(input, "-") ? input : "<stdin>", &v);
    cli_output out;
    if (ok && (ok = cli_output_open("embed", npy, &out))) {
        const size_t d = (size_t)tfm_embedder_dim(e);
        if (npy) {
            ok = write_npy(out.f, v, n, d);
        } else {
            for (size_t i = 0; i < n; i++)
                for (size_t c = 0; c < d; c++) fprintf(out.f, "%.8g%c", (double)v[i * d + c], c + 1 < d ? ' ' : '\n');
        }
        ok = cli_output_close("embed", &out, ok);
    }
    free(v);
    tfm_context_free(ctx);
    tfm_embedder_free(e);
    free_lines(lines, n);
    return ok ? 0 : EXIT_RUNTIME;
}

const cli_command cmd_embed = {
    "embed",
    "sentence vectors of an encoder-only model (BERT, all-MiniLM-L6-v2), one per input line",
    "tfm embed --model DIR_OR_FILE [--input F] [--npy OUT.npy]",
    run_embed,
};
