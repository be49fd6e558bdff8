# CUDADIAG_FUZZ=ON: the libFuzzer build of fuzz/. Every target of the build is instrumented for
# coverage (-fsanitize=fuzzer-no-link) and checked by AddressSanitizer and UndefinedBehaviorSanitizer
# (no recovery: the first report is a crash), so use a build directory of its own:
#
#   CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCUDADIAG_FUZZ=ON && cmake --build build-fuzz --target cudadiag_fuzzers
#
# (scripts/fuzz.sh does this and more). Without clang, or with a clang whose libFuzzer runtime is not
# installed (Debian/Ubuntu: libclang-rt-dev or libclang-rt-N-dev), nothing is instrumented and
# CUDADIAG_FUZZ_UNAVAILABLE says why; the fuzz tests then report as skipped with that reason.
include(CheckCXXSourceCompiles)

set(CUDADIAG_FUZZ_UNAVAILABLE "")
if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  set(CUDADIAG_FUZZ_UNAVAILABLE "the C++ compiler is ${CMAKE_CXX_COMPILER_ID}, libFuzzer needs clang (CXX=clang++)")
else()
  set(CMAKE_REQUIRED_FLAGS "-fsanitize=fuzzer,address,undefined")
  set(CMAKE_REQUIRED_LINK_OPTIONS "-fsanitize=fuzzer,address,undefined")
  check_cxx_source_compiles(
    "#include <cstddef>\n#include <cstdint>\nextern \"C\" int LLVMFuzzerTestOneInput(const std::uint8_t*, std::size_t) { return 0; }"
    CUDADIAG_HAVE_LIBFUZZER)
  unset(CMAKE_REQUIRED_FLAGS)
  unset(CMAKE_REQUIRED_LINK_OPTIONS)
  if(NOT CUDADIAG_HAVE_LIBFUZZER)
    set(CUDADIAG_FUZZ_UNAVAILABLE
        "clang ${CMAKE_CXX_COMPILER_VERSION} cannot link -fsanitize=fuzzer: its libFuzzer runtime is missing "
        "(Debian/Ubuntu: apt-get install libclang-rt-dev, or scripts/install_dependencies.sh fuzz)")
  endif()
endif()

if(CUDADIAG_FUZZ_UNAVAILABLE)
  message(WARNING "CUDADIAG_FUZZ: no fuzz targets: ${CUDADIAG_FUZZ_UNAVAILABLE}")
else()
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=fuzzer-no-link,address,undefined;-fno-sanitize-recover=all;-fno-omit-frame-pointer;-g1>")
  add_link_options(-fsanitize=address,undefined)
endif()
