/* Symbol visibility and deprecation markers shared by the C and C++ headers.
 * libcudadiag is built with -fvisibility=hidden and a linker version script: only declarations
 * marked CUDADIAG_API are exported (tests/abi/exported_symbols.txt lists them). */
#ifndef CUDADIAG_EXPORT_H
#define CUDADIAG_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define CUDADIAG_API __attribute__((visibility("default")))
/* Marks an API that will be removed: it stays for at least one minor release after being marked
 * (docs/api.md "Versioning policy"), and compilers warn at every use with `message`. */
#define CUDADIAG_DEPRECATED(message) __attribute__((deprecated(message)))
#else
#define CUDADIAG_API
#define CUDADIAG_DEPRECATED(message)
#endif

#endif /* CUDADIAG_EXPORT_H */
