#pragma once
// Terminal renderings of a report. Colour is decided by the caller (TTY and NO_COLOR rules live
// in the CLI); these functions only format.

#include "report/report.hpp"
#include "report/terminal_style.hpp"

#include <string>

namespace cudadiag::report {

// The report in three layers. By default one screen: the verdict; what to do first (errors and
// warnings, grouped by cause — one id and one remedy — each group with its one remedy); the stack,
// one line per family (driver, CUDA runtime/compiler, math libraries, cuDNN/NCCL and other NVIDIA
// libraries, toolkit binaries: the lead component's version and where the family comes from), with
// only the exceptions spelled out (a component from elsewhere, one native programs load in another
// version, one that fails or is a stub); the GPUs, the self-test and the Python environment in a
// line each; the notes, one line per id with its count. Paths there are shortened only at their
// start. With style.full, the details layer instead: the components table with whole paths, the
// loads, dependency closures, devices, self-test, Python environments, frameworks and every finding.
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
