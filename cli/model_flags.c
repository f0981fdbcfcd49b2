#include "model_flags.h"

#include <string.h>

model_flags model_flags_default(void) {
    model_flags f;
    f.c = tfm_config_default();
    f.arch = "encoder-decoder";
    f.activation = "relu";
    f.pe = "sinusoidal";
    return f;
}

int model_flags_resolve(const char *cmd, model_flags *f) {
    if (strcmp(f->arch, "encoder-decoder") != 0) {
        cli_error(cmd, "--arch '%s': this build supports encoder-decoder", f->arch);
        return 0;
    }
    f->c.arch = TFM_ARCH_ENCODER_DECODER;
    if (strcmp(f->activation, "relu") == 0) f->c.activation = TFM_ACT_RELU;
    else if (strcmp(f->activation, "gelu") == 0) f->c.activation = TFM_ACT_GELU;
    else {
        cli_error(cmd, "--activation must be relu or gelu, got '%s'", f->activation);
        return 0;
    }
    if (strcmp(f->pe, "sinusoidal") != 0) {
        cli_error(cmd, "--pe must be sinusoidal, got '%s'", f->pe);
        return 0;
    }
    if (tfm_config_validate(&f->c) != TFM_OK) {
        cli_error(cmd, "%s", tfm_last_error());
        return 0;
    }
    return 1;
}
