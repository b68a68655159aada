/* version.h — the build stamp: package version, schema id/version and schema digest that
 * this extension was compiled with. goblin_ring/_native.py compares them at import and
 * refuses a stale build. The values come from native/build_ffi.py as -D definitions. */
#ifndef GR_VERSION_H
#define GR_VERSION_H

/* cffi-cdef-begin */
const char *gr_build_package_version(void);
const char *gr_build_schema_digest(void);
int gr_build_schema_id(void);
int gr_build_schema_version(void);
/* cffi-cdef-end */

#endif
