/* Cross-entropy with label smoothing (Szegedy et al. 2016; Vaswani et al. 2017, §5.4), with the
 * semantics of PyTorch's CrossEntropyLoss(label_smoothing=eps, ignore_index=pad): the smoothed
 * target spreads eps/V over all V classes, pad included; rows whose target is pad are ignored and
 * the mean runs over the others. */
#include "ops.h"
#include "parallel.h"
#include "pool.h"
#include "vmath.h"

#include <math.h>

/* log Σ_j exp(x_j) of one row, max-subtracted: float exp (vmath.h) summed in float over the
 * vector lanes (relative error of the sum ~1e-6 for V = 32000; the loss's own tolerance against
 * PyTorch is 1e-4). A row holding +∞ gives NaN, one holding NaN gives NaN. */
static float row_logsumexp(const float *x, size_t V) {
    const float mx = ops_max_f(x, V);
    if (!(mx > -INFINITY && mx < INFINITY)) return mx == -INFINITY ? -INFINITY : NAN;
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (size_t j = 0; j < V; j++) sum += ops_expf(x[j] - mx);
    return mx + logf(sum);
}

static float row_sum(const float *x, size_t V) {
    float s = 0.0f;
#pragma omp simd reduction(+ : s)
    for (size_t j = 0; j < V; j++) s += x[j];
    return s;
}

/* A cross-entropy pass, as its chunks see it (pool.h): rows of V logits. */
typedef struct {
    float *losses, *dlogits;
    float *lse_out;      /* nullable: the forward keeps each non-pad row's log-sum-exp here */
    const float *lse_in; /* nullable: the backward reads them from here instead of computing them */
    const float *logits;
    const int32_t *targets;
    int32_t pad;
    float eps, smooth, fin;
    size_t n_nonpad, V;
} ce_job;

static void forward_rows(void *arg, size_t n0, size_t n1) {
    const ce_job *j = arg;
    const size_t V = j->V;
    for (size_t n = n0; n < n1; n++) {
        if (j->targets[n] == j->pad || V == 0) {
            j->losses[n] = 0.0f;
            if (j->lse_out && j->targets[n] != j->pad) j->lse_out[n] = -INFINITY; /* V = 0: log of an empty sum */
            continue;
        }
        const float *x = j->logits + n * V;
        const float lse_f = row_logsumexp(x, V);
        if (j->lse_out) j->lse_out[n] = lse_f;
        const double lse = lse_f, sum_x = row_sum(x, V);
        /* −Σ q_j (x_j − lse) = lse − (1 − eps)·x_y − eps·mean_j(x_j), since Σ q_j = 1 */
        const double e = (double)j->eps;
        j->losses[n] = (float)(lse - (1.0 - e) * (double)x[j->targets[n]] - e * sum_x / (double)V);
    }
}

double cross_entropy_forward_lse(float *losses, float *lse, size_t *n_nonpad, const float *logits,
                                 const int32_t *targets, int32_t pad, float eps, size_t N, size_t V) {
    ce_job j = {.losses = losses, .lse_out = lse, .logits = logits, .targets = targets, .pad = pad, .eps = eps, .V = V};
    ops_pool_for(N, (size_t)ops_rows_per_chunk(V), ops_team(N * V), forward_rows, &j);
    /* Serial sum in double: the same total whatever the thread count. */
    double total = 0.0;
    size_t count = 0;
    for (size_t n = 0; n < N; n++) {
        if (targets[n] == pad) continue;
        total += losses[n];
        count++;
    }
    if (n_nonpad) *n_nonpad = count;
    return count > 0 ? total / (double)count : 0.0;
}

static void backward_rows(void *arg, size_t n0, size_t n1) {
    const ce_job *j = arg;
    const size_t V = j->V;
    const float smooth = j->smooth, fin = j->fin, eps = j->eps;
    for (size_t n = n0; n < n1; n++) {
        const float *x = j->logits + n * V;
        float *dx = j->dlogits + n * V;
        if (j->targets[n] == j->pad || j->n_nonpad == 0) {
            for (size_t k = 0; k < V; k++) dx[k] = 0.0f;
            continue;
        }
        /* d/dx_j of lse − Σ q_j x_j = softmax_j − q_j; each x_j is read before dx_j is written,
         * so dlogits may alias logits. */
        const float lse = j->lse_in ? j->lse_in[n] : row_logsumexp(x, V);
        const size_t y = (size_t)j->targets[n];
        const float x_y = x[y];
#pragma omp simd
        for (size_t k = 0; k < V; k++) dx[k] = (ops_expf(x[k] - lse) - smooth) * fin;
        dx[y] = (ops_expf(x_y - lse) - smooth - (1.0f - eps)) * fin;
    }
}

void cross_entropy_backward_lse(float *dlogits, const float *logits, const float *lse, const int32_t *targets,
                                int32_t pad, float eps, size_t n_nonpad, size_t N, size_t V) {
    const double inv_n = n_nonpad > 0 ? 1.0 / (double)n_nonpad : 0.0;
    ce_job j = {.dlogits = dlogits, .lse_in = lse, .logits = logits, .targets = targets, .pad = pad, .eps = eps,
                .smooth = V > 0 ? eps / (float)V : 0.0f, /* the eps/V every class gets */
                .fin = (float)inv_n, .n_nonpad = n_nonpad, .V = V};
    ops_pool_for(N, (size_t)ops_rows_per_chunk(V), ops_team(N * V), backward_rows, &j);
}

double cross_entropy_forward(float *losses, size_t *n_nonpad, const float *logits, const int32_t *targets, int32_t pad,
                             float eps, size_t N, size_t V) {
    return cross_entropy_forward_lse(losses, NULL, n_nonpad, logits, targets, pad, eps, N, V);
}

void cross_entropy_backward(float *dlogits, const float *logits, const int32_t *targets, int32_t pad, float eps,
                            size_t n_nonpad, size_t N, size_t V) {
    cross_entropy_backward_lse(dlogits, logits, NULL, targets, pad, eps, n_nonpad, N, V);
}
