/* The residual connection x + Sublayer(x) (Vaswani et al. 2017, §3.1; He et al. 2016). Each loop
 * is a pool job (pool.h) of OPS_ELEM_CHUNK elements per chunk. */
#include "ops.h"
#include "parallel.h"
#include "pool.h"

/* A residual pass, as its chunks see it. */
typedef struct {
    float *y, *y2;        /* forward: out; backward: da, db (either may be NULL) */
    const float *a, *b;   /* forward: a, b; backward: a = dout */
} res_job;

static void forward_range(void *arg, size_t i0, size_t i1) {
    const res_job *j = arg;
    float *out = j->y;
    const float *a = j->a, *b = j->b;
    for (size_t i = i0; i < i1; i++) out[i] = a[i] + b[i];
}

void residual_forward(float *out, const float *a, const float *b, size_t n) {
    res_job j = {out, NULL, a, b};
    ops_pool_for(n, OPS_ELEM_CHUNK, ops_team(n), forward_range, &j);
}

static void backward_range(void *arg, size_t i0, size_t i1) {
    const res_job *j = arg;
    float *da = j->y, *db = j->y2;
    const float *dout = j->a;
    for (size_t i = i0; i < i1; i++) {
        if (da) da[i] += dout[i];
        if (db) db[i] += dout[i];
    }
}

void residual_backward(float *da, float *db, const float *dout, size_t n) {
    res_job j = {da, db, dout, NULL};
    ops_pool_for(n, OPS_ELEM_CHUNK, ops_team(n), backward_range, &j);
}
