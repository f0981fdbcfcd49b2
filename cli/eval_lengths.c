/* tfm eval --by-length (eval_lengths.h). */
#include "eval_lengths.h"

#include "args.h"
#include "output.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    size_t lines;
    tfm_bleu_stats bleu;
    tfm_chrf_stats chrf;
} bucket_stats;

/* One row of the table: the bucket's scores, NAN where it is empty. */
static void bucket_scores(const bucket_stats *s, double *bleu, double *chrf, double *ratio, tfm_bleu_score *sc) {
    *sc = tfm_bleu_compute(&s->bleu);
    *bleu = s->lines ? sc->score : NAN;
    *chrf = s->lines ? tfm_chrf_compute(&s->chrf) : NAN;
    *ratio = s->lines && sc->ref_len ? sc->ratio : NAN;
}

static int write_csv(const char *cmd, const char *path, const len_buckets *b, const bucket_stats *bs) {
    cli_output o;
    if (!cli_output_open(cmd, path, &o)) return 0;
    fprintf(o.f, "bucket,lo,hi,lines,bleu,chrf2,len_ratio,hyp_tokens,ref_tokens\n");
    for (int i = 0; i <= b->n_edges; i++) {
        char label[48], hi[24];
        double bleu, chrf, ratio;
        tfm_bleu_score sc;
        bucket_scores(&bs[i], &bleu, &chrf, &ratio, &sc);
        if (len_bucket_hi(b, i) < 0)
            snprintf(hi, sizeof hi, "inf");
        else
            snprintf(hi, sizeof hi, "%d", len_bucket_hi(b, i));
        fprintf(o.f, "%s,%d,%s,%zu,%.4f,%.4f,%.4f,%llu,%llu\n", len_bucket_label(b, i, label, sizeof label),
                len_bucket_lo(b, i), hi, bs[i].lines, bleu, chrf, ratio, (unsigned long long)sc.hyp_len,
                (unsigned long long)sc.ref_len);
    }
    return cli_output_close(cmd, &o, 1);
}

int eval_by_length(const char *cmd, const tfm_tokenizer *tok, char *const *src, char *const *hyp, char *const *ref,
                   size_t n, const len_buckets *b, const char *csv) {
    bucket_stats *bs = calloc((size_t)b->n_edges + 1, sizeof *bs);
    if (!bs) {
        cli_error(cmd, "out of memory");
        return 0;
    }
    int ok = 1;
    for (size_t i = 0; ok && i < n; i++) {
        size_t len = 0;
        const size_t bytes = strlen(src[i]);
        if (!tfm_text_is_blank(src[i], bytes)) {
            int32_t *ids = NULL;
            if (tfm_tokenizer_encode(tok, src[i], bytes, &ids, &len) != TFM_OK) {
                cli_error(cmd, "source line %zu: %s", i + 1, tfm_last_error());
                ok = 0;
                break;
            }
            free(ids);
        }
        bucket_stats *s = &bs[len_bucket_of(b, len)];
        s->lines++;
        if (tfm_bleu_add(&s->bleu, hyp[i], ref[i]) != TFM_OK || tfm_chrf_add(&s->chrf, hyp[i], ref[i]) != TFM_OK) {
            cli_error(cmd, "line %zu: %s", i + 1, tfm_last_error());
            ok = 0;
        }
    }
    if (ok) {
        printf("by source length (subword tokens of the model's tokenizer):\n%-12s %7s %7s %7s %8s\n", "tokens",
               "lines", "BLEU", "chrF2", "hyp/ref");
        for (int i = 0; i <= b->n_edges; i++) {
            char label[48];
            double bleu, chrf, ratio;
            tfm_bleu_score sc;
            bucket_scores(&bs[i], &bleu, &chrf, &ratio, &sc);
            len_bucket_label(b, i, label, sizeof label);
            if (bs[i].lines)
                printf("%-12s %7zu %7.2f %7.2f %8.3f\n", label, bs[i].lines, bleu, chrf, ratio);
            else
                printf("%-12s %7zu %7s %7s %8s\n", label, bs[i].lines, "-", "-", "-");
        }
    }
    if (ok && csv) ok = write_csv(cmd, csv, b, bs);
    free(bs);
    return ok;
}
