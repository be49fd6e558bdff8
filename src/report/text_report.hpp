#pragma once
// Terminal renderings of a report. Colour is decided by the caller (TTY and NO_COLOR rules live
// in the CLI); these functions only format.

#include "report/report.hpp"
#include "report/terminal_style.hpp"

#include <string>

namespace cudadiag::report {

// The full report: a one-line verdict, the components table, Python environments, findings with remedies.
std::string render_text(const Report& report, TextStyle style);
// `cudadiag selftest`: the verdict, devices, the self-test results and the findings.
std::string render_selftest_text(const Report& report, TextStyle style);

// `cudadiag find NAME`: the path a program would load (the Python selection, else the native one).
// Empty when not found.
std::string chosen_path(const discovery::ComponentResult& component);
// `find --all`: one candidate per line: path first, then markers, version, found_via, rejection.
std::string render_candidates(const discovery::ComponentResult& component, TextStyle style);
// `find --explain`: the search trace, then the candidates and why each answer was chosen, then
// (for a found library, when `linkage` is given) the dependency closure of each answer.
std::string render_explanation(const discovery::ComponentResult& component, TextStyle style,
                               const linkage::ComponentLinkage* linkage = nullptr);

} // namespace cudadiag::report
