/* Corpus chrF (Popović 2015) as sacreBLEU 2.6.0 computes it by default (metrics/chrf.py: character
 * order 6, word order 0, β = 2, whitespace removed, eps_smoothing off).
 *
 * Per pair: decode both sides to code points, dropping whitespace; for each order n sort the
 * n-gram windows of each side as fixed-width tuples and walk both sorted lists once for the clipped
 * match count. Corpus score: sum the counts over pairs, then per order P_n = match/hyp and
 * R_n = match/ref, average P and R over the orders where both hyp and ref counts are non-zero
 * (sacreBLEU's "effective order"), and F_β = (1+β²)·P·R / (β²·P + R), in percent. */
#include "tfm/bleu.h"

#include "bleu_internal.h"
#include "core_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    uint32_t c[TFM_CHRF_CHAR_ORDER]; /* code points; unused tail slots are 0 for every key */
} char_key;

static int cmp_char_key(const void *a, const void *b) {
    const char_key *x = a, *y = b;
    for (int i = 0; i < TFM_CHRF_CHAR_ORDER; i++)
        if (x->c[i] != y->c[i]) return x->c[i] < y->c[i] ? -1 : 1;
    return 0;
}

/* Decodes s (valid UTF-8) into cps, skipping Python whitespace; returns the count. */
static size_t decode_no_space(const char *s, size_t n, uint32_t *cps) {
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, m = 0;
    while (i < n) {
        uint32_t cp;
        size_t k = utf8_decode(u + i, n - i, &cp);
        TFM_ASSERT(k > 0); /* validated by the caller */
        if (!bleu_is_py_space(cp)) cps[m++] = cp;
        i += k;
    }
    return m;
}

static size_t make_char_keys(char_key *keys, const uint32_t *cps, size_t len, int n) {
    size_t nn = (size_t)n;
    if (len < nn) return 0;
    size_t cnt = len - nn + 1;
    for (size_t i = 0; i < cnt; i++) {
        memset(&keys[i], 0, sizeof keys[i]);
        for (size_t k = 0; k < nn; k++) keys[i].c[k] = cps[i + k];
    }
    qsort(keys, cnt, sizeof *keys, cmp_char_key);
    return cnt;
}

static uint64_t clipped_char_matches(const char_key *h, size_t nh, const char_key *r, size_t nr) {
    uint64_t m = 0;
    size_t i = 0, j = 0;
    while (i < nh) {
        size_t i2 = i + 1;
        while (i2 < nh && cmp_char_key(&h[i2], &h[i]) == 0) i2++;
        while (j < nr && cmp_char_key(&r[j], &h[i]) < 0) j++;
        size_t j2 = j;
        while (j2 < nr && cmp_char_key(&r[j2], &h[i]) == 0) j2++;
        size_t ch = i2 - i, cr = j2 - j;
        m += ch < cr ? ch : cr;
        i = i2;
        j = j2;
    }
    return m;
}

tfm_status tfm_chrf_add(tfm_chrf_stats *stats, const char *hyp, const char *ref) {
    RETURN_IF(!stats || !hyp || !ref, TFM_ERR_INVALID_ARG, "tfm_chrf_add: NULL argument");
    const size_t hl = strlen(hyp), rl = strlen(ref), hbad = utf8_first_invalid(hyp, hl),
                 rbad = utf8_first_invalid(ref, rl);
    RETURN_IF(hbad < hl, TFM_ERR_FORMAT, "chrF: hypothesis is not valid UTF-8 at byte %zu", hbad);
    RETURN_IF(rbad < rl, TFM_ERR_FORMAT, "chrF: reference is not valid UTF-8 at byte %zu", rbad);

    /* A string of b bytes has at most b code points. */
    size_t cap = hl + rl + 1, bytes;
    RETURN_IF(!size_mul_ok(cap, sizeof(uint32_t) + sizeof(char_key), &bytes), TFM_ERR_NOMEM,
              "chrF: a segment pair of %zu bytes is too large", cap);
    uint32_t *cps = malloc(cap * sizeof *cps);
    char_key *keys = malloc(cap * sizeof *keys);
    if (!cps || !keys) {
        free(cps), free(keys);
        return tfm_set_error(TFM_ERR_NOMEM, "chrF: out of memory for a %zu-byte segment pair", cap);
    }
    size_t nh = decode_no_space(hyp, hl, cps);
    size_t nr = decode_no_space(ref, rl, cps + nh);
    for (int n = 1; n <= TFM_CHRF_CHAR_ORDER; n++) {
        size_t cnt_h = make_char_keys(keys, cps, nh, n);
        size_t cnt_r = make_char_keys(keys + nh, cps + nh, nr, n);
        uint64_t m = clipped_char_matches(keys, cnt_h, keys + nh, cnt_r);
        /* sacreBLEU counts hypothesis n-grams only where the reference has n-grams of order n. */
        stats->hyp[n - 1] += cnt_r > 0 ? cnt_h : 0;
        stats->ref[n - 1] += cnt_r;
        stats->match[n - 1] += m;
    }
    stats->n_segments++;
    free(cps), free(keys);
    return TFM_OK;
}

double tfm_chrf_compute(const tfm_chrf_stats *stats) {
    const double factor = (double)TFM_CHRF_BETA * TFM_CHRF_BETA;
    double avg_prec = 0.0, avg_rec = 0.0;
    int eff_order = 0;
    for (int n = 0; n < TFM_CHRF_CHAR_ORDER; n++) {
        if (stats->hyp[n] > 0 && stats->ref[n] > 0) {
            avg_prec += (double)stats->match[n] / (double)stats->hyp[n];
            avg_rec += (double)stats->match[n] / (double)stats->ref[n];
            eff_order++;
        }
    }
    if (eff_order == 0) return 0.0;
    avg_prec /= eff_order;
    avg_rec /= eff_order;
    if (avg_prec + avg_rec == 0.0) return 0.0;
    double score = (1.0 + factor) * avg_prec * avg_rec;
    score /= factor * avg_prec + avg_rec;
    return 100.0 * score;
}

const char *tfm_chrf_signature(void) {
    return "chrF2|nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:" TFM_SACREBLEU_VERSION;
}
