/* Learning-rate schedules: constant, and the warm-up / inverse-square-root schedule of Vaswani et
 * al. 2017, §5.3, eq. 3 ("noam"). */
#include "optim.h"

#include <math.h>

double lr_schedule(tfm_schedule kind, double factor, int64_t step, int d_model, int64_t warmup) {
    if (kind == TFM_SCHEDULE_CONSTANT) return factor;
    if (step < 1 || d_model <= 0) return 0.0;
    const double s = (double)step;
    double f = 1.0 / sqrt(s); /* step^−0.5 */
    if (warmup > 0) {
        const double w = s * pow((double)warmup, -1.5); /* step · warmup^−1.5 */
        if (w < f) f = w;
    }
    return factor * f / sqrt((double)d_model);
}
