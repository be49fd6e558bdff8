#pragma once
// The core's values as the public API's value types. Pure functions: no I/O.

#include "api/report_data.hpp"
#include "cudadiag/types.hpp"

#include <memory>

namespace cudadiag::api {

Verdict verdict_of(const std::vector<findings::Finding>& found);
Finding to_public(const findings::Finding& finding);
LoadedLibrary to_public(const inspect::LoadedComponent& component);

// The public report for `data` (which it keeps for to_json): findings, components, devices,
// verification state, and the self-test's tests and score when it ran.
Report to_public(std::shared_ptr<const detail::ReportData> data);
ProcessInspection to_public(std::shared_ptr<const detail::InspectionData> data);

} // namespace cudadiag::api
