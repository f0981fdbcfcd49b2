/* Fixed-step classic RK4 and its backward (ode_rk4.h): the stages written out, no allocation. */
#include "ode_rk4.h"

#include <string.h>

size_t ode_rk4_work_floats(const ode_field *f) { return 5 * f->n; }

/* z = y + c·k over n */
static void axpy_to(float *z, const float *y, float c, const float *k, size_t n) {
    for (size_t j = 0; j < n; j++) z[j] = y[j] + c * k[j];
}

/* Stage times of step i: t_i, t_i + h/2, t_i + h/2, t_i + h (t_i = t0 + i·h, not accumulated). */
static void stage_times(float t0, float h, size_t i, float ts[4]) {
    const float ti = t0 + (float)i * h;
    ts[0] = ti;
    ts[1] = ts[2] = ti + 0.5f * h;
    ts[3] = ti + h;
}

void ode_rk4_forward(const ode_field *f, float t0, float h, size_t first, size_t last, float *y, float *k, float *stash,
                     float *work) {
    const size_t n = f->n, ns = f->n_stash;
    const float c[4] = {0.0f, 0.5f * h, 0.5f * h, h}; /* stage j input: y_i + c[j]·k_{j−1} */
    for (size_t i = first; i < last; i++) {
        const float *yi = y + i * n;
        float *ks = k ? k + i * 4 * n : work; /* slopes k1..k4, (4, n) */
        float *z = work + 4 * n;
        float ts[4];
        stage_times(t0, h, i, ts);
        for (int j = 0; j < 4; j++) {
            const float *in = yi;
            if (j > 0) {
                axpy_to(z, yi, c[j], ks + (size_t)(j - 1) * n, n);
                in = z;
            }
            f->eval(f, ts[j], in, ks + (size_t)j * n, stash ? stash + (i * 4 + (size_t)j) * ns : NULL);
        }
        float *yn = y + (i + 1) * n;
        const float h6 = h / 6.0f;
        for (size_t m = 0; m < n; m++)
            yn[m] = yi[m] + h6 * (ks[m] + 2.0f * ks[n + m] + 2.0f * ks[2 * n + m] + ks[3 * n + m]);
    }
}

void ode_rk4_backward(const ode_field *f, float t0, float h, size_t n_steps, const float *y, const float *k,
                      const float *stash, float *dy, float *work) {
    const size_t n = f->n, ns = f->n_stash;
    float *kbar = work, *zbar = work + n, *z = work + 2 * n;
    /* k̄j = w_k[j]·ȳ_{i+1} + w_z[j]·z̄_{j+1}: the weights of k_j in y_{i+1} and in z_{j+1} */
    const float w_k[4] = {h / 6.0f, h / 3.0f, h / 3.0f, h / 6.0f};
    const float w_z[4] = {0.5f * h, 0.5f * h, h, 0.0f};
    for (size_t ii = n_steps; ii-- > 0;) {
        const float *yi = y + ii * n, *ks = k + ii * 4 * n;
        const float *abar = dy + (ii + 1) * n; /* total dL/dy_{i+1} */
        float *ybar = dy + ii * n;
        float ts[4];
        stage_times(t0, h, ii, ts);
        memset(zbar, 0, n * sizeof *zbar); /* z̄5 does not exist: stage 4 feeds only y_{i+1} */
        for (int j = 3; j >= 0; j--) {
            for (size_t m = 0; m < n; m++) kbar[m] = w_k[j] * abar[m] + w_z[j] * zbar[m];
            const float *in = yi;
            if (j > 0) {
                const float c = j == 3 ? h : 0.5f * h;
                axpy_to(z, yi, c, ks + (size_t)(j - 1) * n, n);
                in = z;
            }
            memset(zbar, 0, n * sizeof *zbar);
            f->vjp(f, ts[j], in, stash ? stash + (ii * 4 + (size_t)j) * ns : NULL, kbar, zbar);
            for (size_t m = 0; m < n; m++) ybar[m] += zbar[m]; /* zj = y_i + ...: ∂zj/∂y_i = I */
        }
        for (size_t m = 0; m < n; m++) ybar[m] += abar[m]; /* y_{i+1} = y_i + ... */
    }
}
