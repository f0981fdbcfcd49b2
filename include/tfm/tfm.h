/* transformer.c — the Transformer of "Attention Is All You Need" (Vaswani et al. 2017) in C11.
 * This umbrella header includes the whole public API. */
#ifndef TFM_TFM_H
#define TFM_TFM_H

#include "tfm/export.h"
#include "tfm/version.h"
#include "tfm/status.h"
#include "tfm/threads.h"
#include "tfm/kernels.h"
#include "tfm/model.h"
#include "tfm/ids.h"
#include "tfm/score.h"
#include "tfm/attention.h"
#include "tfm/train.h"
#include "tfm/train_loop.h"
#include "tfm/decode.h"
#include "tfm/generate.h"
#include "tfm/bleu.h"
#include "tfm/tokenizer.h"
#include "tfm/data.h"
#include "tfm/fileio.h"
#include "tfm/text.h"
#include "tfm/memory.h"
#include "tfm/names.h"
#include "tfm/embed.h"
#include "tfm/wordpiece.h"
#include "tfm/bpe.h"
#include "tfm/dist.h"

#endif
