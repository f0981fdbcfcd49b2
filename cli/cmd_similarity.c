/* tfm similarity — cosine similarity of sentence vectors (include/tfm/embed.h, docs/BERT.md): of a
 * query and one text, or of a query against every line of a file, best first. */
#include "args.h"
#include "commands.h"
#include "embed_io.h"
#include "text_io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cos(a, b) = a·b / (‖a‖ ‖b‖), 0 when either is the zero vector. */
static double cosine(const float *a, const float *b, size_t d) {
    double ab = 0.0, aa = 0.0, bb = 0.0;
    for (size_t c = 0; c < d; c++) {
        ab += (double)a[c] * b[c];
        aa += (double)a[c] * a[c];
        bb += (double)b[c] * b[c];
    }
    return aa > 0.0 && bb > 0.0 ? ab / sqrt(aa * bb) : 0.0;
}

typedef struct {
    double score;
    size_t line;
} hit;

static int by_score(const void *x, const void *y) { /* best first; ties: the earlier line */
    const hit *a = x, *b = y;
    if (a->score != b->score) return a->score > b->score ? -1 : 1;
    return a->line < b->line ? -1 : a->line > b->line;
}

static int run_similarity(int argc, char **argv) {
    const char *model = NULL, *query = NULL, *text = NULL, *input = NULL;
    int top_k = 10;
    const cli_opt opts[] = {
        {"--model", OPT_STR, &model, 1, "as tfm embed --model"},
        {"--query", OPT_STR, &query, 1, "the query sentence"},
        {"--text", OPT_STR, &text, 0, "one sentence to compare with the query: prints their cosine"},
        {"--input", OPT_STR, &input, 0, "a file, one sentence per line: prints the --top-k most similar lines "
                                        "as cosine<TAB>line number<TAB>line"},
        {"--top-k", OPT_INT, &top_k, 0, "with --input: how many lines (0: all)"},
    };
    int rc = cli_parse(&cmd_similarity, argc, argv, opts, sizeof opts / sizeof opts[0]);
    if (rc == 1) return 0;
    if (rc != 0) return EXIT_USAGE;
    if ((text != NULL) == (input != NULL) || top_k < 0) {
        cli_error("similarity", "give exactly one of --text and --input%s", top_k < 0 ? ", and --top-k >= 0" : "");
        return EXIT_USAGE;
    }
    char **lines = NULL;
    size_t n = 0;
    if (input && !read_lines("similarity", input, &lines, &n)) return EXIT_RUNTIME;
    tfm_embedder *e;
    tfm_context *ctx;
    float *qv = NULL, *v = NULL;
    char *one[1] = {(char *)(text ? text : "")};
    char *q[1] = {(char *)query};
    int ok = embed_open("similarity", model, &e, &ctx) && embed_lines("similarity", e, ctx, q, 1, "--query", &qv) &&
             (text ? embed_lines("similarity", e, ctx, one, 1, "--text", &v)
                   : embed_lines("similarity", e, ctx, lines, n, strcmp(input, "-") ? input : "<stdin>", &v));
    if (ok) {
        const size_t d = (size_t)tfm_embedder_dim(e);
        if (text) {
            printf("%.6f\n", cosine(qv, v, d));
        } else {
            hit *h = malloc((n ? n : 1) * sizeof *h);
            ok = h != NULL;
            if (!ok) cli_error("similarity", "out of memory ranking %zu lines", n);
            for (size_t i = 0; ok && i < n; i++) h[i] = (hit){cosine(qv, v + i * d, d), i};
            if (ok) qsort(h, n, sizeof *h, by_score);
            const size_t k = top_k == 0 || (size_t)top_k > n ? n : (size_t)top_k;
            for (size_t i = 0; ok && i < k; i++) printf("%.6f\t%zu\t%s\n", h[i].score, h[i].line + 1, lines[h[i].line]);
            free(h);
        }
    }
    free(qv);
    free(v);
    tfm_context_free(ctx);
    tfm_embedder_free(e);
    free_lines(lines, n);
    return ok ? 0 : EXIT_RUNTIME;
}

const cli_command cmd_similarity = {
    "similarity",
    "cosine similarity of sentence vectors: a query and a text, or a query against a file (top-k)",
    "tfm similarity --model DIR_OR_FILE --query TEXT (--text TEXT | --input F [--top-k K])",
    run_similarity,
};
