/* The claims our notes make about the sinusoidal encoding (Vaswani et al. 2017, §3.5), checked on
 * the table tfm adds (pe_sinusoidal_add, src/ops/position.c), PE(p, 2i) = sin(p·ω_i),
 * PE(p, 2i+1) = cos(p·ω_i), ω_i = 10000^(−2i/d):
 *   1. every position's vector is distinct: for d_model 16, 64 and 256, the rows of positions
 *      0..2047 (eight times the default max_len), every pair compared, are at Euclidean distance
 *      at least MIN_DIST = 0.5 (measured: 1.01, 1.47, 2.67, between neighbours); and, through
 *      claim 4 (|PE(p) − PE(p+k)|² = d − 2·Σ_i cos(kω_i) for even d), every two positions below
 *      65536 are at least MIN_DIST apart (the same minimum, at k = 1; at d_model 16 it falls to
 *      0.88 near k = 615746);
 *   2. every value lies in [−1, 1] (positions 0..4095 and far ones up to 10^9);
 *   3. relative positions are linear maps: for each offset k there is one block-diagonal rotation
 *      R_k, block i = [[cos kω_i, sin kω_i], [−sin kω_i, cos kω_i]] acting on the pair
 *      (sin, cos) of frequency i, with PE(p + k) = R_k · PE(p) for every p (all p < 2048,
 *      k in {1, 2, 7, 50, 300, 1000}; tolerance TOL_ROT, float32 table values in double math),
 *      and R_{k1+k2} = R_{k1} · R_{k2} (as matrices, and applied to the table);
 *   4. PE(p) · PE(p + k) depends on k only (it is Σ_i cos(k·ω_i)): within TOL_DOT for every p;
 *   5. zero_pad makes row 0 the zero vector and leaves every other row as it was;
 *   6. the interleaved and concatenated layouts hold the same numbers permuted: each row sorted is
 *      the same, and concat column i / d/2 + i is interleaved column 2i / 2i + 1 exactly;
 *   and scale multiplies the whole table by √d_model.
 * Claims 3 and 4 are checked in both layouts (the pairs are (2i, 2i+1) or (i, d/2 + i)). */
#include "ops.h"
#include "test_util.h"

#include <stdint.h>

#define DISTINCT_LEN 2048
#define DISTINCT_FAR 65536
#define MIN_DIST 0.5    /* claim 1 */
#define ROT_LEN 2048
#define TOL_ROT 2e-7    /* claim 3: |PE(p+k) − R_k PE(p)|_∞: float32 rounding of both sides (measured 7e-8) */
#define TOL_DOT 4e-6    /* claim 4: d products of float32 values ≤ 1 (measured 1.1e-6 at d 256) */
#define TOL_COMPOSE 1e-12

/* The table rows 0..L−1 (L, d) of the kernel with options o; caller frees. */
static float *table(size_t L, size_t d, int concat, int zero_pad, double scale) {
    float *x = calloc(L * d, sizeof *x);
    const pe_sinusoid_opts o = {concat, zero_pad, scale, 0};
    pe_sinusoidal_add(x, 1, L, d, 0, &o);
    return x;
}

/* max(w, e) that keeps a NaN (fmax drops it): an error maximum must not hide one. */
static double worse(double w, double e) { return isnan(e) || e > w ? e : w; }

static double omega(size_t i, size_t d) { return exp(-(double)(2 * i) * log(10000.0) / (double)d); }

/* Column of the sine / cosine of pair i. */
static size_t col_sin(size_t i, int concat) { return concat ? i : 2 * i; }
static size_t col_cos(size_t i, size_t d, int concat) { return concat ? d / 2 + i : 2 * i + 1; }

/* Claim 1: the smallest distance between two rows of positions < L. */
static double min_distance(const float *pe, size_t L, size_t d) {
    double best = INFINITY;
    for (size_t p = 0; p < L; p++)
        for (size_t q = p + 1; q < L; q++) {
            double s = 0.0;
            for (size_t c = 0; c < d; c++) {
                double e = (double)pe[p * d + c] - (double)pe[q * d + c];
                s += e * e;
            }
            if (s < best) best = s;
        }
    return sqrt(best);
}

static void distinct_and_bounded(size_t d) {
    float *pe = table(DISTINCT_LEN, d, 0, 0, 1.0);
    double md = min_distance(pe, DISTINCT_LEN, d);
    printf("d_model %zu: min distance between two of the first %d positions = %.4f\n", d, DISTINCT_LEN, md);
    CHECK(md >= MIN_DIST, "d_model %zu: two positions < %d are only %.3g apart (want >= %g)", d, DISTINCT_LEN, md,
          MIN_DIST);
    /* every offset k < DISTINCT_FAR through claim 4: distance² = 2·(d/2) − 2·Σ_i cos(kω_i) */
    double far_min = INFINITY;
    for (size_t k = 1; k < DISTINCT_FAR; k++) {
        double f = 0.0;
        for (size_t i = 0; i < d / 2; i++) f += cos((double)k * omega(i, d));
        far_min = fmin(far_min, sqrt(fmax((double)d - 2.0 * f, 0.0)));
    }
    printf("d_model %zu: min distance between two positions < %d = %.4f\n", d, DISTINCT_FAR, far_min);
    CHECK(far_min >= MIN_DIST, "d_model %zu: two positions < %d are only %.3g apart", d, DISTINCT_FAR, far_min);
    int in_range = 1;
    for (size_t i = 0; i < DISTINCT_LEN * d; i++) in_range &= pe[i] >= -1.0f && pe[i] <= 1.0f;
    CHECK(in_range, "d_model %zu: a value outside [-1, 1]", d);
    const size_t far[] = {65535, 1000003, 1000000000};
    float *row = calloc(d, sizeof *row);
    const pe_sinusoid_opts o = {0, 0, 1.0, 0};
    for (size_t f = 0; f < sizeof far / sizeof far[0]; f++) {
        memset(row, 0, d * sizeof *row);
        pe_sinusoidal_add(row, 1, 1, d, far[f], &o);
        int ok = 1;
        for (size_t c = 0; c < d; c++) ok &= row[c] >= -1.0f && row[c] <= 1.0f;
        CHECK(ok, "d_model %zu: a value of position %zu outside [-1, 1]", d, far[f]);
    }
    free(row);
    free(pe);
}

/* R_k as d/2 blocks (a, b; −b, a), a = cos kω_i, b = sin kω_i. */
static void rotation(double *blk, size_t d, long k) {
    for (size_t i = 0; i < d / 2; i++) {
        blk[4 * i + 0] = cos((double)k * omega(i, d));
        blk[4 * i + 1] = sin((double)k * omega(i, d));
        blk[4 * i + 2] = -sin((double)k * omega(i, d));
        blk[4 * i + 3] = cos((double)k * omega(i, d));
    }
}

/* max over p < L − k of |PE(p + k) − R · PE(p)|_∞ with R given by its blocks. */
static double rotation_error(const float *pe, size_t L, size_t d, int concat, const double *blk, size_t k) {
    double worst = 0.0;
    for (size_t p = 0; p + k < L; p++)
        for (size_t i = 0; i < d / 2; i++) {
            const size_t cs = col_sin(i, concat), cc = col_cos(i, d, concat);
            const double s = pe[p * d + cs], c = pe[p * d + cc];
            const double rs = blk[4 * i] * s + blk[4 * i + 1] * c, rc = blk[4 * i + 2] * s + blk[4 * i + 3] * c;
            worst = worse(worse(worst, fabs(rs - pe[(p + k) * d + cs])), fabs(rc - pe[(p + k) * d + cc]));
        }
    return worst;
}

static void relative_claims(size_t d, int concat) {
    const char *lay = concat ? "concat" : "interleaved";
    float *pe = table(ROT_LEN, d, concat, 0, 1.0);
    const long ks[] = {1, 2, 7, 50, 300, 1000};
    double *r1 = malloc(sizeof(double) * 2 * d), *r2 = malloc(sizeof(double) * 2 * d),
           *r12 = malloc(sizeof(double) * 2 * d), *prod = malloc(sizeof(double) * 2 * d);
    double worst_rot = 0.0, worst_dot = 0.0;
    for (size_t a = 0; a < sizeof ks / sizeof ks[0]; a++) {
        const size_t k = (size_t)ks[a];
        rotation(r1, d, ks[a]);
        double e = rotation_error(pe, ROT_LEN, d, concat, r1, k);
        CHECK(e <= TOL_ROT, "%s d_model %zu: PE(p+%zu) != R_%zu PE(p): max error %.3g", lay, d, k, k, e);
        worst_rot = worse(worst_rot, e);
        /* claim 4: the dot product of rows k apart is Σ_i cos(kω_i), whatever p */
        double want = 0.0;
        for (size_t i = 0; i < d / 2; i++) want += cos((double)k * omega(i, d));
        for (size_t p = 0; p + k < ROT_LEN; p++) {
            double dot = 0.0;
            for (size_t c = 0; c < d; c++) dot += (double)pe[p * d + c] * (double)pe[(p + k) * d + c];
            worst_dot = worse(worst_dot, fabs(dot - want));
        }
        /* R_{k1+k2} = R_{k1} R_{k2}: the blocks multiply, and the product maps PE(p) to PE(p+k1+k2) */
        for (size_t b = 0; b < sizeof ks / sizeof ks[0]; b++) {
            const size_t k2 = (size_t)ks[b];
            if (k + k2 >= ROT_LEN) continue;
            rotation(r2, d, ks[b]);
            rotation(r12, d, ks[a] + ks[b]);
            double ce = 0.0;
            for (size_t i = 0; i < d / 2; i++) {
                const double *x = r1 + 4 * i, *y = r2 + 4 * i;
                double *z = prod + 4 * i;
                z[0] = x[0] * y[0] + x[1] * y[2];
                z[1] = x[0] * y[1] + x[1] * y[3];
                z[2] = x[2] * y[0] + x[3] * y[2];
                z[3] = x[2] * y[1] + x[3] * y[3];
                for (int j = 0; j < 4; j++) ce = worse(ce, fabs(z[j] - r12[4 * i + (size_t)j]));
            }
            CHECK(ce <= TOL_COMPOSE, "%s d_model %zu: R_%zu R_%zu != R_%zu (%.3g)", lay, d, k, k2, k + k2, ce);
            double pe_err = rotation_error(pe, ROT_LEN, d, concat, prod, k + k2);
            CHECK(pe_err <= TOL_ROT, "%s d_model %zu: R_%zu R_%zu PE(p) != PE(p+%zu): %.3g", lay, d, k, k2, k + k2,
                  pe_err);
        }
    }
    CHECK(worst_dot <= TOL_DOT, "%s d_model %zu: PE(p)·PE(p+k) varies with p by %.3g", lay, d, worst_dot);
    printf("%s d_model %zu: max |PE(p+k) - R_k PE(p)| = %.3g, max |PE(p)·PE(p+k) - f(k)| = %.3g\n", lay, d,
           worst_rot, worst_dot);
    free(r1);
    free(r2);
    free(r12);
    free(prod);
    free(pe);
}

static int cmp_float(const void *a, const void *b) {
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Claims 5 and 6, and scale. */
static void options(size_t d) {
    const size_t L = 300;
    float *base = table(L, d, 0, 0, 1.0), *cat = table(L, d, 1, 0, 1.0), *zp = table(L, d, 0, 1, 1.0),
          *sc = table(L, d, 0, 0, sqrt((double)d)), *zc = table(L, d, 1, 1, 1.0);
    int zero = 1, rest = 1, perm = 1, sorted = 1, zero_c = 1;
    for (size_t c = 0; c < d; c++) {
        zero &= zp[c] == 0.0f;
        zero_c &= zc[c] == 0.0f;
    }
    CHECK(zero && zero_c, "d_model %zu: zero_pad leaves row 0 non-zero", d);
    CHECK(base[1] != 0.0f, "d_model %zu: the plain table's row 0 must have cos 0 = 1", d);
    rest = memcmp(zp + d, base + d, (L - 1) * d * sizeof(float)) == 0;
    CHECK(rest, "d_model %zu: zero_pad changed a row other than 0", d);
    float *r1 = malloc(d * sizeof *r1), *r2 = malloc(d * sizeof *r2);
    double worst_scale = 0.0;
    for (size_t p = 0; p < L; p++) {
        for (size_t i = 0; i < d / 2; i++)
            perm &= cat[p * d + i] == base[p * d + 2 * i] && cat[p * d + d / 2 + i] == base[p * d + 2 * i + 1];
        memcpy(r1, base + p * d, d * sizeof *r1);
        memcpy(r2, cat + p * d, d * sizeof *r2);
        qsort(r1, d, sizeof *r1, cmp_float);
        qsort(r2, d, sizeof *r2, cmp_float);
        sorted &= memcmp(r1, r2, d * sizeof *r1) == 0;
        for (size_t c = 0; c < d; c++)
            worst_scale = worse(worst_scale, fabs((double)sc[p * d + c] - sqrt((double)d) * (double)base[p * d + c]));
    }
    CHECK(perm, "d_model %zu: concat column i / d/2+i is not interleaved column 2i / 2i+1", d);
    CHECK(sorted, "d_model %zu: the two layouts do not hold the same numbers", d);
    /* |x| ≤ 1 rounded to float before or after the product: within one ulp of √d */
    CHECK(worst_scale <= sqrt((double)d) * 1.2e-7, "d_model %zu: scale is not the table times sqrt(d): %.3g", d,
          worst_scale);
    free(r1);
    free(r2);
    free(base);
    free(cat);
    free(zp);
    free(sc);
    free(zc);
}

int main(void) {
    const size_t dims[] = {16, 64, 256};
    for (size_t i = 0; i < 3; i++) {
        distinct_and_bounded(dims[i]);
        relative_claims(dims[i], 0);
        relative_claims(dims[i], 1);
        options(dims[i]);
    }
    return test_finish("pe_sinusoid");
}
