/* cudadiag version macros: the version of the headers being compiled against.
 * cudadiag_version() (cudadiag.h) and cudadiag::version() (cudadiag.hpp) report the version of the
 * library actually loaded; compare the two to detect a header/library mismatch. The build checks
 * that these numbers equal project(VERSION) in CMakeLists.txt. */
#ifndef CUDADIAG_VERSION_H
#define CUDADIAG_VERSION_H

#define CUDADIAG_VERSION_MAJOR 0
#define CUDADIAG_VERSION_MINOR 1
#define CUDADIAG_VERSION_PATCH 0

#define CUDADIAG_VERSION_STRING "0.1.0"

/* MAJOR * 10000 + MINOR * 100 + PATCH: 0.1.0 is 100, 1.2.3 is 10203. */
#define CUDADIAG_VERSION_NUMBER                                                                              \
  (CUDADIAG_VERSION_MAJOR * 10000 + CUDADIAG_VERSION_MINOR * 100 + CUDADIAG_VERSION_PATCH)

#endif /* CUDADIAG_VERSION_H */
