/* Element-wise activations of the position-wise FFN. Each loop is a pool job (pool.h) of
 * OPS_ELEM_CHUNK elements per chunk. */
#include "ops.h"
#include "parallel.h"
#include "pool.h"

#include <math.h>

/* An activation pass, as its chunks see it. */
typedef struct {
    float *y;              /* forward: out; backward: dinp */
    const float *x, *dout; /* x: inp */
} act_job;

static void relu_forward_range(void *arg, size_t i0, size_t i1) {
    const act_job *j = arg;
    float *out = j->y;
    const float *inp = j->x;
    for (size_t i = i0; i < i1; i++) out[i] = inp[i] > 0.0f ? inp[i] : 0.0f;
}

void relu_forward(float *out, const float *inp, size_t n) {
    act_job j = {out, inp, NULL};
    ops_pool_for(n, OPS_ELEM_CHUNK, ops_team(n), relu_forward_range, &j);
}

static void gelu_forward_range(void *arg, size_t i0, size_t i1) {
    const act_job *j = arg;
    float *out = j->y;
    const float *inp = j->x;
    const float inv_sqrt2 = 0.70710678118654752f;
    for (size_t i = i0; i < i1; i++) {
        float x = inp[i];
        out[i] = 0.5f * x * (1.0f + erff(x * inv_sqrt2));
    }
}

void gelu_forward(float *out, const float *inp, size_t n) {
    act_job j = {out, inp, NULL};
    ops_pool_for(n, OPS_ELEM_CHUNK, ops_team(n), gelu_forward_range, &j);
}

static void relu_backward_range(void *arg, size_t i0, size_t i1) {
    const act_job *j = arg;
    float *dinp = j->y;
    const float *inp = j->x, *dout = j->dout;
    for (size_t i = i0; i < i1; i++)
        if (inp[i] > 0.0f) dinp[i] += dout[i];
}

void relu_backward(float *dinp, const float *dout, const float *inp, size_t n) {
    act_job j = {dinp, inp, dout};
    ops_pool_for(n, OPS_ELEM_CHUNK, ops_team(n), relu_backward_range, &j);
}

static void gelu_backward_range(void *arg, size_t i0, size_t i1) {
    const act_job *j = arg;
    float *dinp = j->y;
    const float *inp = j->x, *dout = j->dout;
    /* d/dx [x·Φ(x)] = Φ(x) + x·φ(x) (Hendrycks & Gimpel 2016, exact form). */
    const float inv_sqrt2 = 0.70710678118654752f, inv_sqrt_2pi = 0.39894228040143268f;
    for (size_t i = i0; i < i1; i++) {
        float x = inp[i];
        float cdf = 0.5f * (1.0f + erff(x * inv_sqrt2));
        float pdf = inv_sqrt_2pi * expf(-0.5f * x * x);
        dinp[i] += dout[i] * (cdf + x * pdf);
    }
}

void gelu_backward(float *dinp, const float *dout, const float *inp, size_t n) {
    act_job j = {dinp, inp, dout};
    ops_pool_for(n, OPS_ELEM_CHUNK, ops_team(n), gelu_backward_range, &j);
}

static void silu_forward_range(void *arg, size_t i0, size_t i1) {
    const act_job *j = arg;
    float *out = j->y;
    const float *inp = j->x;
    for (size_t i = i0; i < i1; i++) {
        float x = inp[i];
        out[i] = x / (1.0f + expf(-x));
    }
}

void silu_forward(float *out, const float *inp, size_t n) {
    act_job j = {out, inp, NULL};
    ops_pool_for(n, OPS_ELEM_CHUNK, ops_team(n), silu_forward_range, &j);
}

static void silu_backward_range(void *arg, size_t i0, size_t i1) {
    const act_job *j = arg;
    float *dinp = j->y;
    const float *inp = j->x, *dout = j->dout;
    /* d/dx [x·σ(x)] = σ(x)·(1 + x·(1 − σ(x))) */
    for (size_t i = i0; i < i1; i++) {
        float x = inp[i];
        float sg = 1.0f / (1.0f + expf(-x));
        dinp[i] += dout[i] * (sg * (1.0f + x * (1.0f - sg)));
    }
}

void silu_backward(float *dinp, const float *dout, const float *inp, size_t n) {
    act_job j = {dinp, inp, dout};
    ops_pool_for(n, OPS_ELEM_CHUNK, ops_team(n), silu_backward_range, &j);
}
