/* transformer.c — the one table of names for each enum: what checkpoint metadata
 * (docs/FORMATS.md) stores and what the `tfm` flags accept. Names are lowercase ASCII:
 *   tfm_arch        encoder-decoder, decoder-only, encoder-only
 *   tfm_activation  relu, gelu, silu
 *   tfm_pe          sinusoidal, none, learned, floater, shaw, t5, rope, alibi
 *   tfm_pe_layout   interleaved, concat
 *   tfm_rope_pairing interleaved, half
 *   tfm_optimizer   adam, sgd
 *   tfm_schedule    constant, noam
 *   tfm_beam_stop   finished, bound
 *   tfm_suppress    pad_bos, pad, none
 * For each enum E: tfm_E_name(value) gives the name (NULL for a value outside the enum), and
 * tfm_E_from_name(name, &value) the value. A name that is not in the table gives
 * TFM_ERR_INVALID_ARG with the message "KIND 'NAME' must be A, B or C" (KIND: "arch",
 * "activation", "position encoding", "sinusoidal layout", "rope pairing", "optimizer", "schedule",
 * "beam stop rule", "suppressed ids"); *value is then unchanged.
 * tfm_E_names() lists the names as that English list ("relu or gelu"), for help and messages. */
#ifndef TFM_NAMES_H
#define TFM_NAMES_H

#include "tfm/export.h"

#include "tfm/decode.h"
#include "tfm/model.h"
#include "tfm/status.h"
#include "tfm/train.h"

#ifdef __cplusplus
extern "C" {
#endif

TFM_API const char *tfm_arch_name(tfm_arch arch);
TFM_API tfm_status tfm_arch_from_name(const char *name, tfm_arch *arch);
TFM_API const char *tfm_arch_names(void);

TFM_API const char *tfm_activation_name(tfm_activation activation);
TFM_API tfm_status tfm_activation_from_name(const char *name, tfm_activation *activation);
TFM_API const char *tfm_activation_names(void);

TFM_API const char *tfm_pe_name(tfm_pe pe);
TFM_API tfm_status tfm_pe_from_name(const char *name, tfm_pe *pe);
TFM_API const char *tfm_pe_names(void);

TFM_API const char *tfm_pe_layout_name(tfm_pe_layout layout);
TFM_API tfm_status tfm_pe_layout_from_name(const char *name, tfm_pe_layout *layout);
TFM_API const char *tfm_pe_layout_names(void);

TFM_API const char *tfm_rope_pairing_name(tfm_rope_pairing pairing);
TFM_API tfm_status tfm_rope_pairing_from_name(const char *name, tfm_rope_pairing *pairing);
TFM_API const char *tfm_rope_pairing_names(void);

TFM_API const char *tfm_optimizer_name(tfm_optimizer optimizer);
TFM_API tfm_status tfm_optimizer_from_name(const char *name, tfm_optimizer *optimizer);
TFM_API const char *tfm_optimizer_names(void);

TFM_API const char *tfm_schedule_name(tfm_schedule schedule);
TFM_API tfm_status tfm_schedule_from_name(const char *name, tfm_schedule *schedule);
TFM_API const char *tfm_schedule_names(void);

TFM_API const char *tfm_beam_stop_name(tfm_beam_stop stop);
TFM_API tfm_status tfm_beam_stop_from_name(const char *name, tfm_beam_stop *stop);
TFM_API const char *tfm_beam_stop_names(void);

TFM_API const char *tfm_suppress_name(tfm_suppress suppress);
TFM_API tfm_status tfm_suppress_from_name(const char *name, tfm_suppress *suppress);
TFM_API const char *tfm_suppress_names(void);

#ifdef __cplusplus
}
#endif
#endif
