/* version.c — the build stamp declared in version.h. */
#include "ring/version.h"

#include "ring/codec.h"

#ifndef GR_PACKAGE_VERSION
#error "GR_PACKAGE_VERSION must be defined by the build (native/build_ffi.py)"
#endif
#ifndef GR_SCHEMA_DIGEST
#error "GR_SCHEMA_DIGEST must be defined by the build (native/build_ffi.py)"
#endif

const char *gr_build_package_version(void) { return GR_PACKAGE_VERSION; }
const char *gr_build_schema_digest(void) { return GR_SCHEMA_DIGEST; }
int gr_build_schema_id(void) { return GR_SCHEMA_ID; }
int gr_build_schema_version(void) { return GR_SCHEMA_VERSION; }
