/* Corpus BLEU (Papineni et al. 2002) as sacreBLEU 2.6.0 computes it by default (metrics/bleu.py:
 * 13a tokens, orders 1..4, one reference, "exp" smoothing, no effective order).
 *
 * Per pair: tokenise both sides, give every distinct token a small integer id (sorting the token
 * strings, so equal strings get equal ids without hashing), then for each order n sort the
 * hypothesis n-grams and the reference n-grams as fixed-width id tuples and walk both sorted
 * lists once, adding min(count in hyp, count in ref) for every distinct hypothesis n-gram. */
#include "tfm/bleu.h"

#include "bleu_internal.h"
#include "core_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *p;
    size_t len;
    size_t pos; /* index in the concatenated token list: hyp tokens, then ref tokens */
} token_ref;

typedef struct {
    uint32_t w[TFM_BLEU_MAX_ORDER]; /* token ids; unused tail slots are 0 for every key */
} ngram_key;

static int cmp_token(const void *a, const void *b) {
    const token_ref *x = a, *y = b;
    size_t m = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->p, y->p, m);
    if (c != 0) return c;
    return (x->len > y->len) - (x->len < y->len);
}

static int cmp_key(const void *a, const void *b) {
    const ngram_key *x = a, *y = b;
    for (int i = 0; i < TFM_BLEU_MAX_ORDER; i++)
        if (x->w[i] != y->w[i]) return x->w[i] < y->w[i] ? -1 : 1;
    return 0;
}

/* Splits a 13a-tokenised string (tokens separated by single spaces) into toks[*nt..]. */
static size_t split_tokens(const char *s, size_t n, token_ref *toks, size_t nt) {
    size_t i = 0;
    while (i < n) {
        size_t j = i;
        while (j < n && s[j] != ' ') j++;
        if (j > i) {
            toks[nt].p = s + i;
            toks[nt].len = j - i;
            toks[nt].pos = nt;
            nt++;
        }
        i = j + 1;
    }
    return nt;
}

static size_t count_spaces(const char *s, size_t n) {
    size_t c = 0;
    for (size_t i = 0; i < n; i++) c += s[i] == ' ';
    return c;
}

/* Fills keys with the order-n n-grams of ids[0..len) and sorts them; returns how many. */
static size_t make_keys(ngram_key *keys, const uint32_t *ids, size_t len, int n) {
    size_t nn = (size_t)n;
    if (len < nn) return 0;
    size_t cnt = len - nn + 1;
    for (size_t i = 0; i < cnt; i++) {
        memset(&keys[i], 0, sizeof keys[i]);
        for (size_t k = 0; k < nn; k++) keys[i].w[k] = ids[i + k];
    }
    qsort(keys, cnt, sizeof *keys, cmp_key);
    return cnt;
}

/* Sum over distinct keys of hyp of min(count in hyp, count in ref); both sorted. */
static uint64_t clipped_matches(const ngram_key *h, size_t nh, const ngram_key *r, size_t nr) {
    uint64_t m = 0;
    size_t i = 0, j = 0;
    while (i < nh) {
        size_t i2 = i + 1;
        while (i2 < nh && cmp_key(&h[i2], &h[i]) == 0) i2++;
        while (j < nr && cmp_key(&r[j], &h[i]) < 0) j++;
        size_t j2 = j;
        while (j2 < nr && cmp_key(&r[j2], &h[i]) == 0) j2++;
        size_t ch = i2 - i, cr = j2 - j;
        m += ch < cr ? ch : cr;
        i = i2;
        j = j2;
    }
    return m;
}

static tfm_status pair_stats(const char *ht, size_t hn, const char *rt, size_t rn, tfm_bleu_stats *d) {
    /* A tokenised string with k spaces holds at most k+1 tokens. */
    size_t cap = count_spaces(ht, hn) + count_spaces(rt, rn) + 2, bytes;
    RETURN_IF(!size_mul_ok(cap, sizeof(token_ref) + sizeof(uint32_t) + sizeof(ngram_key), &bytes),
              TFM_ERR_NOMEM, "BLEU: a segment pair with %zu tokens is too large", cap);
    token_ref *toks = malloc(cap * sizeof *toks);
    uint32_t *ids = malloc(cap * sizeof *ids);
    ngram_key *keys = malloc(cap * sizeof *keys);
    if (!toks || !ids || !keys) {
        free(toks), free(ids), free(keys);
        return tfm_set_error(TFM_ERR_NOMEM, "BLEU: out of memory for %zu tokens", cap);
    }
    size_t nh = split_tokens(ht, hn, toks, 0);
    size_t nt = split_tokens(rt, rn, toks, nh);
    size_t nr = nt - nh;
    if (nt > UINT32_MAX) {
        free(toks), free(ids), free(keys);
        return tfm_set_error(TFM_ERR_RANGE, "BLEU: a segment pair has %zu tokens (max %u)", nt,
                             (unsigned)UINT32_MAX);
    }

    /* Intern: equal strings get equal ids. */
    qsort(toks, nt, sizeof *toks, cmp_token);
    uint32_t next_id = 0;
    for (size_t i = 0; i < nt; i++) {
        if (i > 0 && cmp_token(&toks[i], &toks[i - 1]) != 0) next_id++;
        ids[toks[i].pos] = next_id;
    }

    d->hyp_len = nh;
    d->ref_len = nr;
    for (int n = 1; n <= TFM_BLEU_MAX_ORDER; n++) {
        /* keys[0..cnt_h) for the hypothesis, keys[nh..nh+cnt_r) for the reference. */
        size_t cnt_h = make_keys(keys, ids, nh, n);
        size_t cnt_r = make_keys(keys + nh, ids + nh, nr, n);
        d->total[n - 1] = cnt_h;
        d->correct[n - 1] = clipped_matches(keys, cnt_h, keys + nh, cnt_r);
    }
    free(toks), free(ids), free(keys);
    return TFM_OK;
}

tfm_status tfm_bleu_add(tfm_bleu_stats *stats, const char *hyp, const char *ref) {
    RETURN_IF(!stats || !hyp || !ref, TFM_ERR_INVALID_ARG, "tfm_bleu_add: NULL argument");
    const size_t hl = strlen(hyp), rl = strlen(ref), hbad = utf8_first_invalid(hyp, hl),
                 rbad = utf8_first_invalid(ref, rl);
    RETURN_IF(hbad < hl, TFM_ERR_FORMAT, "BLEU: hypothesis is not valid UTF-8 at byte %zu", hbad);
    RETURN_IF(rbad < rl, TFM_ERR_FORMAT, "BLEU: reference is not valid UTF-8 at byte %zu", rbad);

    char *ht = NULL, *rt = NULL;
    size_t hn = 0, rn = 0;
    tfm_status st = bleu_tokenize_13a(hyp, hl, &ht, &hn);
    if (st == TFM_OK) st = bleu_tokenize_13a(ref, rl, &rt, &rn);
    tfm_bleu_stats d = {0};
    if (st == TFM_OK) st = pair_stats(ht, hn, rt, rn, &d);
    free(ht);
    free(rt);
    TRY(st);

    stats->n_segments++;
    stats->hyp_len += d.hyp_len;
    stats->ref_len += d.ref_len;
    for (int n = 0; n < TFM_BLEU_MAX_ORDER; n++) {
        stats->correct[n] += d.correct[n];
        stats->total[n] += d.total[n];
    }
    return TFM_OK;
}

/* sacreBLEU's my_log: log, with log(0) floored to -9999999999. */
static double floored_log(double x) { return x == 0.0 ? -9999999999.0 : log(x); }

tfm_bleu_score tfm_bleu_compute(const tfm_bleu_stats *stats) {
    tfm_bleu_score s;
    memset(&s, 0, sizeof s);
    s.hyp_len = stats->hyp_len;
    s.ref_len = stats->ref_len;
    const double c = (double)stats->hyp_len, r = (double)stats->ref_len;
    s.ratio = stats->ref_len ? c / r : 0.0;

    /* Brevity penalty (Papineni et al. 2002, §2.2.2): exp(1 - r/c) when c < r. */
    s.bp = 1.0;
    if (stats->hyp_len < stats->ref_len) s.bp = stats->hyp_len > 0 ? exp(1.0 - r / c) : 0.0;

    int any_match = 0;
    for (int n = 0; n < TFM_BLEU_MAX_ORDER; n++) any_match |= stats->correct[n] != 0;
    if (!any_match) return s; /* score 0, precisions 0 (sacreBLEU issue #141) */

    /* mteval-v13a "exp" smoothing: the k-th order without any match gets 1 / (2^k · total).
     * An order with no hypothesis n-grams at all stops the loop; its precision stays 0. */
    double smooth = 1.0;
    for (int n = 0; n < TFM_BLEU_MAX_ORDER; n++) {
        if (stats->total[n] == 0) break;
        if (stats->correct[n] == 0) {
            smooth *= 2.0;
            s.precisions[n] = 100.0 / (smooth * (double)stats->total[n]);
        } else {
            s.precisions[n] = 100.0 * (double)stats->correct[n] / (double)stats->total[n];
        }
    }
    /* Geometric mean of the precisions (uniform weights), times the brevity penalty. */
    double sum = 0.0;
    for (int n = 0; n < TFM_BLEU_MAX_ORDER; n++) sum += floored_log(s.precisions[n]);
    s.score = s.bp * exp(sum / TFM_BLEU_MAX_ORDER);
    return s;
}

int tfm_bleu_format(const tfm_bleu_score *s, char *buf, size_t cap) {
    return snprintf(buf, cap,
                    "BLEU = %.2f %.1f/%.1f/%.1f/%.1f (BP = %.3f ratio = %.3f hyp_len = %llu "
                    "ref_len = %llu)",
                    s->score, s->precisions[0], s->precisions[1], s->precisions[2],
                    s->precisions[3], s->bp, s->ratio, (unsigned long long)s->hyp_len,
                    (unsigned long long)s->ref_len);
}

const char *tfm_bleu_signature(void) {
    return "BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:" TFM_SACREBLEU_VERSION;
}
