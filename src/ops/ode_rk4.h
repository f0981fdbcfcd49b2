/* A fixed-step classic Runge–Kutta (RK4) integrator for dy/dt = f(t, y; θ) and its backward pass
 * (backpropagation through the stages), over caller-provided memory. Used by the FLOATER position
 * encoding (src/model/pe_floater.c), whose positions are samples of an ODE's solution.
 *
 * One step from (t_i, y_i), t_i = t0 + i·h (Butcher 2016, "Numerical Methods for ODEs", §23;
 * Kutta 1901):
 *   k1 = f(t_i, y_i)                 z2 = y_i + (h/2)·k1
 *   k2 = f(t_i + h/2, z2)            z3 = y_i + (h/2)·k2
 *   k3 = f(t_i + h/2, z3)            z4 = y_i + h·k3
 *   k4 = f(t_i + h, z4)
 *   y_{i+1} = y_i + (h/6)·(k1 + 2·k2 + 2·k3 + k4)
 * The global error is O(h⁴) (tests/unit/ops/test_ode_rk4.c measures the order on a linear ODE).
 *
 * Backward (discretise-then-differentiate: the exact gradient of the computed y's, not the adjoint
 * ODE): given ȳ_{i+1} = dL/dy_{i+1},
 *   k̄4 = (h/6)·ȳ_{i+1}                      z̄4 = J4ᵀ k̄4
 *   k̄3 = (h/3)·ȳ_{i+1} + h·z̄4              z̄3 = J3ᵀ k̄3
 *   k̄2 = (h/3)·ȳ_{i+1} + (h/2)·z̄3          z̄2 = J2ᵀ k̄2
 *   k̄1 = (h/6)·ȳ_{i+1} + (h/2)·z̄2          z̄1 = J1ᵀ k̄1
 *   ȳ_i += ȳ_{i+1} + z̄1 + z̄2 + z̄3 + z̄4
 * with Jj = ∂f/∂y at stage j, and the field's vjp accumulating k̄jᵀ ∂f/∂θ into its own gradients.
 * The stage inputs zj are rebuilt from y_i and the stored slopes; what f needs beyond (t, z) for
 * its vjp (e.g. an MLP's hidden activations) is its "stash", stored per stage by the forward. */
#ifndef TFM_ODE_RK4_H
#define TFM_ODE_RK4_H

#include <stddef.h>

typedef struct ode_field ode_field;
struct ode_field {
    size_t n;       /* state dimension */
    size_t n_stash; /* floats one evaluation saves for its vjp (0: none) */
    /** dy (n) = f(t, y). When stash is not NULL, writes the n_stash floats vjp needs there. */
    void (*eval)(const ode_field *f, float t, const float *y, float *dy, float *stash);
    /** At an evaluation (t, y) with its stash: given a = dL/d(dy) (n), ACCUMULATES aᵀ·∂f/∂y into
     * ay (n) and aᵀ·∂f/∂θ into the field's own parameter gradients (held in ctx). */
    void (*vjp)(const ode_field *f, float t, const float *y, const float *stash, const float *a, float *ay);
    void *ctx; /* the field's parameters (and gradients) */
};

/** Floats of scratch ode_rk4_forward and ode_rk4_backward need: 5·n. */
size_t ode_rk4_work_floats(const ode_field *f);

/** Integrates steps first..last−1 (step i from t_i = t0 + i·h to t_{i+1}): y is (last+1, n), row
 * `first` given on entry, rows first+1..last written. k (last, 4, n) and stash (last, 4, n_stash),
 * when not NULL, receive step i's four slopes and stashes at row i (what ode_rk4_backward reads);
 * NULL at inference. work: ode_rk4_work_floats(f) floats. Serial and deterministic: integrating
 * 0..m then m..n gives bit for bit what 0..n gives. */
void ode_rk4_forward(const ode_field *f, float t0, float h, size_t first, size_t last, float *y, float *k, float *stash,
                     float *work);

/** Backward of ode_rk4_forward over steps 0..n_steps−1 (y, k, stash as it left them): dy
 * (n_steps+1, n) holds on entry dL/dy_i from outside the ODE (the direct gradient of each sampled
 * state) and on return the total dL/dy_i — row 0 is dL/dy(t0). Parameter gradients accumulate
 * through f->vjp. work: ode_rk4_work_floats(f) floats. */
void ode_rk4_backward(const ode_field *f, float t0, float h, size_t n_steps, const float *y, const float *k,
                      const float *stash, float *dy, float *work);

#endif
