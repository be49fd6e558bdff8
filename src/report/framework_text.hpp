#pragma once
// The report's "Python frameworks" section: per framework of the primary Python environment, its
// version, the CUDA it was built for (and its GPU code when read), how many of its CUDA pins hold,
// what it loads (torch's libtorch_cuda.so, JAX's PJRT plugin: each catalog library of the predicted
// closure, its copy and how it is reached, against CUDA Python's choice; CuPy and other
// cuda-pathfinder users: the components table's "selected"), and the ids of its findings.

#include "report/report.hpp"
#include "report/terminal_style.hpp"

#include <string>

namespace cudadiag::report {

// "" when the primary environment has no framework.
std::string render_frameworks_section(const Report& report, TextStyle style);

} // namespace cudadiag::report
