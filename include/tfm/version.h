/* transformer.c — the library's version (docs/API.md, "Versions").
 *
 * While the major version is 0, every minor release may change the API and the ABI: the shared
 * library's SONAME is then libtfm.so.MAJOR.MINOR (libtfm.so.0.1), so a program built against 0.1
 * never loads 0.2 by accident; from 1.0 on it is libtfm.so.MAJOR. CMakeLists.txt reads the numbers
 * from this file. */
#ifndef TFM_VERSION_H
#define TFM_VERSION_H

#include "tfm/export.h"

#define TFM_VERSION_MAJOR 0
#define TFM_VERSION_MINOR 1
#define TFM_VERSION_STRING "0.1"

#ifdef __cplusplus
extern "C" {
#endif

/** The version of the library the program runs with, "MAJOR.MINOR" (TFM_VERSION_STRING of the
 * headers it was built from: compare the two to detect a mismatch). A static string. */
TFM_API const char *tfm_version(void);

#ifdef __cplusplus
}
#endif
#endif
