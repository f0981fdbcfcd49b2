/* bench_tfm decode: greedy or beam-K decoding of the first N sentences of a text file with a
 * checkpoint's model, in batches of B sentences (sorted by source length first, as `tfm translate`
 * does, so each batch pads little), on the KV cache. Tokenising is outside the timing. Each of the
 * R repetitions decodes every sentence; the report gives the median and minimum seconds, output
 * tokens per second and the analytic GFLOP/s (bench_flops_decode).
 * --ids-out FILE writes, per sentence in file order, "source ids<TAB>output ids<TAB>log p" where
 * log p = ln p(output, EOS | source) by tfm_model_score, for bench/ct2_check.py. */
#include "kernel_env.h"
#include "bench.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int32_t *ids;
    size_t len, index;
} sentence;

static int by_length(const void *a, const void *b) {
    const sentence *x = a, *y = b;
    if (x->len != y->len) return x->len < y->len ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static int by_index(const void *a, const void *b) {
    const sentence *x = a, *y = b;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Reads up to n non-blank lines of path and tokenises them (cut to max_len tokens). */
static int read_sentences(const char *path, const tfm_tokenizer *tok, int max_len, int n, sentence *s, int *n_read) {
    tfm_line_reader *r = NULL;
    if (tfm_line_reader_open(path, 1 << 20, &r) != TFM_OK) return -1;
    int k = 0;
    const char *line;
    size_t len;
    while (k < n && tfm_line_reader_next(r, &line, &len) == TFM_OK && line) {
        if (tfm_text_is_blank(line, len)) continue;
        if (tfm_tokenizer_encode(tok, line, len, &s[k].ids, &s[k].len) != TFM_OK) {
            tfm_line_reader_free(r);
            return -1;
        }
        if (s[k].len > (size_t)max_len) s[k].len = (size_t)max_len;
        if (s[k].len == 0) { /* nothing the tokenizer keeps: not a sentence to time */
            free(s[k].ids);
            continue;
        }
        s[k].index = (size_t)k;
        k++;
    }
    tfm_line_reader_free(r);
    *n_read = k;
    return 0;
}

int bench_cmd_decode(int argc, char **argv) {
    const char *model_path = NULL, *src_path = NULL, *ids_out = NULL;
    int beam = 1, batch = 1, n = 64, reps = 3;
    tfm_beam_stop stop = TFM_BEAM_STOP_FINISHED;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--model") == 0 && v) model_path = v, i++;
        else if (strcmp(argv[i], "--src") == 0 && v) src_path = v, i++;
        else if (strcmp(argv[i], "--ids-out") == 0 && v) ids_out = v, i++;
        else if (strcmp(argv[i], "--beam") == 0) beam = bench_int_arg(argv[i], v), i++;
        else if (strcmp(argv[i], "--batch") == 0) batch = bench_int_arg(argv[i], v), i++;
        else if (strcmp(argv[i], "--sentences") == 0) n = bench_int_arg(argv[i], v), i++;
        else if (strcmp(argv[i], "--reps") == 0) reps = bench_int_arg(argv[i], v), i++;
        else if (strcmp(argv[i], "--beam-stop") == 0 && v) {
            if (tfm_beam_stop_from_name(v, &stop) != TFM_OK) {
                fprintf(stderr, "bench_tfm decode: --beam-stop: %s\n", tfm_last_error());
                return 2;
            }
            i++;
        } else {
            fprintf(stderr, "usage: bench_tfm decode --model M --src FILE [--beam K] [--batch B] [--sentences N] "
                            "[--reps R] [--beam-stop finished|bound] [--ids-out FILE]\n");
            return 2;
        }
    }
    if (!model_path || !src_path) {
        fprintf(stderr, "bench_tfm decode: --model and --src are required\n");
        return 2;
    }
    tfm_model *m = NULL;
    tfm_tokenizer *tok = NULL;
    tfm_context *ctx = NULL;
    size_t tok_len = 0;
    const unsigned char *tok_bytes = NULL;
    if (tfm_model_load(model_path, &m) != TFM_OK || !(tok_bytes = tfm_model_tokenizer(m, &tok_len)) ||
        tfm_tokenizer_load_bytes(tok_bytes, tok_len, &tok) != TFM_OK || tfm_context_create_opts(m, cli_kernels(), &ctx) != TFM_OK) {
        fprintf(stderr, "bench_tfm decode: %s: %s\n", model_path,
                tok_bytes || !m ? tfm_last_error() : "the checkpoint holds no tokenizer");
        return 1;
    }
    const tfm_config *c = tfm_model_config(m);
    sentence *s = calloc((size_t)n, sizeof *s);
    int ns = 0;
    if (!s || read_sentences(src_path, tok, c->max_len, n, s, &ns) != 0 || ns == 0) {
        fprintf(stderr, "bench_tfm decode: %s: %s\n", src_path, ns == 0 && s ? "no sentence" : tfm_last_error());
        return 1;
    }
    qsort(s, (size_t)ns, sizeof *s, by_length);
    const int max_out = c->max_len;
    int32_t *srcb = malloc(sizeof(int32_t) * (size_t)batch * (size_t)c->max_len);
    int32_t *outb = malloc(sizeof(int32_t) * (size_t)batch * (size_t)max_out);
    int *out_len = malloc(sizeof(int) * (size_t)batch);
    int32_t *keep = malloc(sizeof(int32_t) * (size_t)ns * (size_t)max_out); /* the last rep's outputs */
    int *keep_len = malloc(sizeof(int) * (size_t)ns);
    double *times = malloc(sizeof(double) * (size_t)reps);
    if (!srcb || !outb || !out_len || !keep || !keep_len || !times) {
        fprintf(stderr, "bench_tfm decode: out of memory\n");
        return 1;
    }
    tfm_decode_config dc = tfm_decode_config_default();
    dc.beam = beam;
    dc.beam_stop = stop;
    double src_tokens = 0.0;
    for (int i = 0; i < ns; i++) src_tokens += (double)s[i].len;
    printf("tfm decode: %s, %d sentences (%.0f source tokens) of %s, beam %d (stop rule %s), batch %d, %d threads\n",
           model_path, ns, src_tokens, src_path, beam, tfm_beam_stop_name(stop), batch, tfm_get_threads());
    size_t out_tokens = 0;
    for (int r = 0; r < reps; r++) {
        const double t0 = bench_now_s();
        out_tokens = 0;
        /* as tfm_translate_text: memory for the longest batch once, not regrown batch by batch */
        if (tfm_context_reserve_decode(ctx, &dc, ns < batch ? ns : batch, (int)s[ns - 1].len) != TFM_OK) {
            fprintf(stderr, "bench_tfm decode: %s\n", tfm_last_error());
            return 1;
        }
        for (int i = 0; i < ns; i += batch) {
            const int B = ns - i < batch ? ns - i : batch;
            const int S = (int)s[i + B - 1].len; /* sorted: the last is the longest */
            for (int b = 0; b < B; b++) {
                for (int p = 0; p < S; p++) srcb[(size_t)b * (size_t)S + (size_t)p] = c->pad_id;
                memcpy(srcb + (size_t)b * (size_t)S, s[i + b].ids, sizeof(int32_t) * s[i + b].len);
            }
            if (tfm_model_translate(ctx, &dc, B, S, srcb, outb, max_out, out_len) != TFM_OK) {
                fprintf(stderr, "bench_tfm decode: %s\n", tfm_last_error());
                return 1;
            }
            for (int b = 0; b < B; b++) {
                memcpy(keep + (size_t)(i + b) * (size_t)max_out, outb + (size_t)b * (size_t)max_out,
                       sizeof(int32_t) * (size_t)out_len[b]);
                keep_len[i + b] = out_len[b];
                out_tokens += (size_t)out_len[b];
            }
        }
        times[r] = bench_now_s() - t0;
        printf("  rep %d: %.4f s, %zu output tokens\n", r + 1, times[r], out_tokens);
    }
    /* the analytic count: every batch's padded source, each sentence's own output positions */
    double hyp_steps = 0.0, hyp_pos = 0.0, flop = 0.0;
    for (int i = 0; i < ns; i += batch) {
        const int B = ns - i < batch ? ns - i : batch;
        const double S = (double)s[i + B - 1].len;
        hyp_steps = hyp_pos = 0.0;
        for (int b = 0; b < B; b++) {
            const double L = keep_len[i + b] + 1.0; /* the tokens and EOS */
            hyp_steps += beam * L;
            hyp_pos += beam * L * (L - 1.0) / 2.0;
        }
        flop += bench_flops_decode(c, B, S, hyp_steps, hyp_pos);
    }
    double med, mn;
    bench_median_min(times, reps, &med, &mn);
    int status = 0;
    if (ids_out) { /* per sentence in file order: source ids, output ids, ln p(output + EOS | source) */
        FILE *f = fopen(ids_out, "w");
        int32_t *tg = malloc(sizeof(int32_t) * (size_t)(max_out + 2));
        int32_t *slot = malloc(sizeof(int32_t) * (size_t)ns); /* sorted position of each file index */
        if (!f || !tg || !slot) {
            fprintf(stderr, "bench_tfm decode: cannot write %s\n", ids_out);
            return 1;
        }
        for (int i = 0; i < ns; i++) slot[s[i].index] = i;
        for (int k = 0; k < ns && status == 0; k++) {
            const int i = slot[k], L = keep_len[i];
            tg[0] = c->bos_id;
            memcpy(tg + 1, keep + (size_t)i * (size_t)max_out, sizeof(int32_t) * (size_t)L);
            tg[L + 1] = c->eos_id;
            double lp = 0.0;
            if (tfm_model_score(ctx, 1, (int)s[i].len, L + 2, s[i].ids, tg, &lp, NULL, NULL) != TFM_OK) {
                fprintf(stderr, "bench_tfm decode: scoring sentence %d: %s\n", k + 1, tfm_last_error());
                status = 1;
            }
            for (size_t p = 0; p < s[i].len; p++) fprintf(f, p ? " %d" : "%d", s[i].ids[p]);
            fputc('\t', f);
            for (int p = 0; p < L; p++) fprintf(f, p ? " %d" : "%d", tg[p + 1]);
            fprintf(f, "\t%.6f\n", lp);
        }
        free(slot);
        free(tg);
        if (fclose(f) != 0) status = 1;
    }
    printf("RESULT decode impl=tfm beam=%d batch=%d sentences=%d out_tokens=%zu med_s=%.6f min_s=%.6f "
           "gflop=%.4f reps=%d threads=%d rss_mib=%.1f\n",
           beam, batch, ns, out_tokens, med, mn, flop * 1e-9, reps, tfm_get_threads(), bench_peak_rss_mib());
    qsort(s, (size_t)ns, sizeof *s, by_index);
    for (int i = 0; i < ns; i++) free(s[i].ids);
    free(s), free(srcb), free(outb), free(out_len), free(keep), free(keep_len), free(times);
    tfm_context_free(ctx);
    tfm_tokenizer_free(tok);
    tfm_model_free(m);
    return status;
}
