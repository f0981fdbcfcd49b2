/* The library's version (include/tfm/version.h). */
#include "tfm/version.h"

const char *tfm_version(void) { return TFM_VERSION_STRING; }
