#pragma once
// The library's entry points, run on the core: what cudadiag.hpp's functions do. They live in
// namespace cudadiag::api because a source file cannot see both the public cudadiag::verify()
// (cudadiag.hpp) and the core's namespace cudadiag::verify: pipeline.cpp includes the core and only
// types.hpp; cpp_api.cpp includes cudadiag.hpp and only this header.

#include "cudadiag/types.hpp"

#include <string>

namespace cudadiag::api {

// Each validates `options` first (Exception naming the bad setting) and never prints.
Report run_discover(const Options& options);
Report run_verify(const Options& options);
Report run_self_test(const Options& options);
Report run_quick_check(const Options& options);
ProcessInspection run_inspect(int pid);

std::string render_json(const Report& report);
std::string render_json(const ProcessInspection& inspection);

} // namespace cudadiag::api
