#pragma once
// The library's entry points, run on the core: what cudadiag.hpp's functions do. They live in
// namespace cudadiag::api because a source file cannot see both the public cudadiag::verify()
// (cudadiag.hpp) and the core's namespace cudadiag::verify: pipeline.cpp includes the core and only
// types.hpp; cpp_api.cpp includes cudadiag.hpp and only this header.

#include "cudadiag/types.hpp"

#include <string>
#include <vector>

namespace cudadiag::api {

// Each validates `options` first (Exception naming the bad setting) and never prints.
Report run_discover(const Options& options);
Report run_verify(const Options& options);
Report run_self_test(const Options& options);
Report run_quick_check(const Options& options);
ProcessInspection run_inspect(int pid);
// discover(), verify() or self_test() (as `verify` and `self_test` say) with `requirements` as CI
// gates: each unmet one is a policy.unmet finding. Exception naming the first malformed requirement.
Report run_require(const Options& options, const std::vector<std::string>& requirements, bool verify,
                   bool self_test);

std::string render_json(const Report& report);
std::string render_json(const ProcessInspection& inspection);

} // namespace cudadiag::api
