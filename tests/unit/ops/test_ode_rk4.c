/* The RK4 integrator of src/ops/ode_rk4.c:
 *  1. order of accuracy on a linear ODE with a known solution, dy/dt = A·y with
 *     A = −0.1·I + 2·[[0, 1], [−1, 0]], y(t) = e^{−0.1 t}·R(2t)·y(0): the error at t = 4 with
 *     h = 0.4, 0.2, 0.1 must fall by 2⁴ per halving (observed order in [3.6, 4.4]); errors there are
 *     2e-2 .. 1e-4, far above float rounding (~1e-6), so the order is measurable in float;
 *  2. integrating 0..m then m..n gives bit for bit what 0..n gives (the cached table is extended
 *     this way at inference);
 *  3. the backward against central differences, on a nonlinear, time-dependent field with a stash,
 *     f(t, y) = tanh(A·y + t·c): L = Σ_i w_i·y_i over every sampled state, gradients of A, c and
 *     y(0).
 * Precision of 3: the solver runs in float, L is summed in double. With step ε = 5e-3 on O(1)
 * inputs (A scaled to 0.6 so that tanh stays in its curved but unsaturated range) the truncation
 * error O(ε²·L''') and the rounding noise of L (~1e-6 relative over 30 steps, divided by 2ε) are
 * each ~1e-5; measured: 3e-5 (A), 4e-5 (c), 1e-5 (y(0)). The tolerance 5e-4 is 10x that, while
 * mutations of the backward give 5e-3 (a dropped h·z̄4 term) to 2e-1 (the weight of k̄2 h/6
 * instead of h/3), and a wrong weight in the forward's combination gives order ~0 (all tried). */
#include "ode_rk4.h"
#include "test_util.h"

#include <math.h>
#include <stdint.h>

/* ---- a linear field: f(t, y) = A·y (n = 2), no stash ---- */
typedef struct {
    float A[4];
} lin_ctx;

static void lin_eval(const ode_field *f, float t, const float *y, float *dy, float *stash) {
    (void)t;
    (void)stash;
    const lin_ctx *c = f->ctx;
    dy[0] = c->A[0] * y[0] + c->A[1] * y[1];
    dy[1] = c->A[2] * y[0] + c->A[3] * y[1];
}

static void lin_vjp(const ode_field *f, float t, const float *y, const float *stash, const float *a, float *ay) {
    (void)f;
    (void)t;
    (void)y;
    (void)stash;
    (void)a;
    (void)ay; /* not differentiated in this test */
}

static double order_error(float h, size_t steps) {
    lin_ctx c = {{-0.1f, 2.0f, -2.0f, -0.1f}};
    ode_field f = {2, 0, lin_eval, lin_vjp, &c};
    float y[2 * 41], work[10];
    y[0] = 1.0f;
    y[1] = 0.5f;
    ode_rk4_forward(&f, 0.0f, h, 0, steps, y, NULL, NULL, work);
    const double t = (double)steps * (double)h, e = exp(-0.1 * t), cs = cos(2.0 * t), sn = sin(2.0 * t);
    const double want0 = e * (cs * 1.0 + sn * 0.5), want1 = e * (-sn * 1.0 + cs * 0.5);
    return fmax(fabs(y[2 * steps] - want0), fabs(y[2 * steps + 1] - want1));
}

static void test_order(void) {
    const double e1 = order_error(0.4f, 10), e2 = order_error(0.2f, 20), e3 = order_error(0.1f, 40);
    const double p1 = log2(e1 / e2), p2 = log2(e2 / e3);
    printf("rk4 errors at t=4: h=0.4 %.3g, h=0.2 %.3g, h=0.1 %.3g; observed order %.2f, %.2f\n", e1, e2, e3, p1, p2);
    CHECK(p1 > 3.6 && p1 < 4.4, "order between h=0.4 and 0.2 is %.2f, want 4", p1);
    CHECK(p2 > 3.6 && p2 < 4.4, "order between h=0.2 and 0.1 is %.2f, want 4", p2);
    CHECK(e3 < 2e-4, "error at h=0.1 is %.3g", e3);
}

static void test_extend(void) {
    lin_ctx c = {{-0.1f, 2.0f, -2.0f, -0.1f}};
    ode_field f = {2, 0, lin_eval, lin_vjp, &c};
    float a[2 * 41], b[2 * 41], work[10];
    a[0] = b[0] = 0.3f;
    a[1] = b[1] = -0.7f;
    ode_rk4_forward(&f, 0.5f, 0.1f, 0, 40, a, NULL, NULL, work);
    ode_rk4_forward(&f, 0.5f, 0.1f, 0, 17, b, NULL, NULL, work);
    ode_rk4_forward(&f, 0.5f, 0.1f, 17, 40, b, NULL, NULL, work);
    CHECK(memcmp(a, b, sizeof a) == 0, "integrating 0..17 then 17..40 differs from 0..40");
}

/* ---- a nonlinear field with a stash: f(t, y) = tanh(A·y + t·c), n = 3 ---- */
#define N 3
#define STEPS 30
typedef struct {
    float A[N * N], c[N];
    double gA[N * N], gc[N]; /* accumulated by the vjp */
} tanh_ctx;

static void tanh_eval(const ode_field *f, float t, const float *y, float *dy, float *stash) {
    const tanh_ctx *c = f->ctx;
    for (int i = 0; i < N; i++) {
        float s = t * c->c[i];
        for (int j = 0; j < N; j++) s += c->A[i * N + j] * y[j];
        dy[i] = tanhf(s);
        if (stash) stash[i] = dy[i];
    }
}

static void tanh_vjp(const ode_field *f, float t, const float *y, const float *stash, const float *a, float *ay) {
    tanh_ctx *c = f->ctx;
    for (int i = 0; i < N; i++) {
        const float g = a[i] * (1.0f - stash[i] * stash[i]);
        for (int j = 0; j < N; j++) {
            ay[j] += c->A[i * N + j] * g;
            c->gA[i * N + j] += (double)g * y[j];
        }
        c->gc[i] += (double)g * t;
    }
}

static tanh_ctx g_ctx;
static float g_y0[N], g_w[(STEPS + 1) * N];

static double loss(void) {
    ode_field f = {N, N, tanh_eval, tanh_vjp, &g_ctx};
    float y[(STEPS + 1) * N], work[5 * N];
    memcpy(y, g_y0, sizeof g_y0);
    ode_rk4_forward(&f, 0.2f, 0.1f, 0, STEPS, y, NULL, NULL, work);
    double L = 0.0;
    for (size_t i = 0; i < sizeof y / sizeof y[0]; i++) L += (double)g_w[i] * y[i];
    return L;
}

static double check_param(const char *name, float *x, size_t n, const double *analytic) {
    double err = 0.0, scale = 1.0;
    double num[N * N];
    for (size_t i = 0; i < n; i++) {
        const float keep = x[i], eps = 5e-3f;
        x[i] = keep + eps;
        const float up = x[i];
        const double lp = loss();
        x[i] = keep - eps;
        const float dn = x[i];
        const double lm = loss();
        x[i] = keep;
        num[i] = (lp - lm) / ((double)up - (double)dn);
        scale = fmax(scale, fabs(num[i]));
    }
    for (size_t i = 0; i < n; i++) err = fmax(err, fabs(analytic[i] - num[i]) / scale);
    printf("rk4 backward %-4s max relative error %.2e\n", name, err);
    return err;
}

static void test_backward(void) {
    uint64_t s = 0x9e3779b97f4a7c15ULL;
    float r[N * N + N + N];
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        r[i] = (float)((double)(s >> 11) / 9007199254740992.0 * 2.0 - 1.0);
    }
    for (int i = 0; i < N * N; i++) g_ctx.A[i] = 0.6f * r[i];
    for (int i = 0; i < N; i++) g_ctx.c[i] = 0.8f * r[N * N + i], g_y0[i] = r[N * N + N + i];
    for (size_t i = 0; i < sizeof g_w / sizeof g_w[0]; i++) g_w[i] = (float)((i * 37 % 11) - 5) / 5.0f;

    ode_field f = {N, N, tanh_eval, tanh_vjp, &g_ctx};
    float y[(STEPS + 1) * N], k[STEPS * 4 * N], stash[STEPS * 4 * N], dy[(STEPS + 1) * N], work[5 * N];
    memcpy(y, g_y0, sizeof g_y0);
    ode_rk4_forward(&f, 0.2f, 0.1f, 0, STEPS, y, k, stash, work);
    memcpy(dy, g_w, sizeof dy); /* dL/dy_i = w_i */
    ode_rk4_backward(&f, 0.2f, 0.1f, STEPS, y, k, stash, dy, work);
    double gy0[N];
    for (int i = 0; i < N; i++) gy0[i] = dy[i];
    const double eA = check_param("A", g_ctx.A, N * N, g_ctx.gA);
    const double ec = check_param("c", g_ctx.c, N, g_ctx.gc);
    const double ey = check_param("y0", g_y0, N, gy0);
    CHECK(eA < 5e-4, "dL/dA relative error %.2e", eA);
    CHECK(ec < 5e-4, "dL/dc relative error %.2e", ec);
    CHECK(ey < 5e-4, "dL/dy(0) relative error %.2e", ey);
}

int main(void) {
    test_order();
    test_extend();
    test_backward();
    return test_finish("test_ode_rk4");
}
