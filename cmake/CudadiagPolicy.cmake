# Compiler policy shared by every target, expressed as INTERFACE targets so that nothing is set
# globally and consumers of an installed cudadiag inherit none of it.
add_library(cudadiag_warnings INTERFACE)
target_compile_options(cudadiag_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
  -Wunused -Woverloaded-virtual -Wconversion -Wsign-conversion -Wnull-dereference
  -Wdouble-promotion -Wformat=2 -Wimplicit-fallthrough)
if(CUDADIAG_WERROR)
  target_compile_options(cudadiag_warnings INTERFACE -Werror)
endif()
