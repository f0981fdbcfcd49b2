/* Inverted dropout (Srivastava et al. 2014), applied in training as Vaswani et al. 2017, §5.4
 * describe. The keep mask comes from a counter-based hash of (seed, element index), so a run is
 * reproducible from its seed and independent of the thread count. */
#include "ops.h"
#include "parallel.h"
#include "pool.h"

/* A dropout pass, as its chunks see it (pool.h). */
typedef struct {
    float *y;             /* forward: out; backward: dinp */
    const float *x;       /* forward: inp; backward: dout */
    uint8_t *mask;        /* forward: written (may be NULL) */
    const uint8_t *mask_c; /* backward: read */
    float p, scale;
    uint64_t seed;
} drop_job;

static void forward_range(void *arg, size_t i0, size_t i1) {
    const drop_job *j = arg;
    float *out = j->y;
    const float *inp = j->x, p = j->p, scale = j->scale;
    uint8_t *mask = j->mask;
    const uint64_t seed = j->seed;
    for (size_t i = i0; i < i1; i++) {
        int keep = dropout_keep(seed, i, p);
        out[i] = keep ? inp[i] * scale : 0.0f;
        if (mask) mask[i] = (uint8_t)keep;
    }
}

void dropout_forward(float *out, uint8_t *mask, const float *inp, float p, uint64_t seed, size_t n) {
    if (p >= 1.0f) { /* everything dropped (PyTorch: zeros) */
        for (size_t i = 0; i < n; i++) {
            out[i] = 0.0f;
            if (mask) mask[i] = 0;
        }
        return;
    }
    if (p <= 0.0f) {
        for (size_t i = 0; i < n; i++) {
            out[i] = inp[i];
            if (mask) mask[i] = 1;
        }
        return;
    }
    /* as PyTorch: noise.div_(1 − p), then inp · noise */
    drop_job j = {out, inp, mask, NULL, p, 1.0f / (1.0f - p), seed};
    ops_pool_for(n, OPS_ELEM_CHUNK, ops_team(n), forward_range, &j);
}

static void backward_range(void *arg, size_t i0, size_t i1) {
    const drop_job *j = arg;
    float *dinp = j->y;
    const float *dout = j->x, scale = j->scale;
    const uint8_t *mask = j->mask_c;
    for (size_t i = i0; i < i1; i++)
        if (mask[i]) dinp[i] += dout[i] * scale;
}

void dropout_backward(float *dinp, const float *dout, const uint8_t *mask, float p, size_t n) {
    if (p >= 1.0f) return;
    drop_job j = {dinp, dout, NULL, mask, p, p > 0.0f ? 1.0f / (1.0f - p) : 1.0f, 0};
    ops_pool_for(n, OPS_ELEM_CHUNK, ops_team(n), backward_range, &j);
}
