#pragma once
// The dependency closures as text: a tree per closure (each object's SONAME, version, path, how it
// was found, and whether it is the copy the catalog selected), what stops the load, and what
// loading it in a worker showed. Used by the report's "Dependency closures" section (a summary
// line, and the tree of every closure that does not load or was mispredicted) and by
// `cudadiag find --explain NAME` (every closure of that library).

#include "linkage/linkage.hpp"
#include "report/terminal_style.hpp"

#include <string>
#include <string_view>

namespace cudadiag::report {

// One closure: a title line (`label`, the answers, how the root is opened, the outcome), then the
// tree, then what stops the load and what the worker saw.
std::string render_closure(const linkage::AnswerClosure& closure, TextStyle style,
                           std::string_view label = {});

// The report's section: how many closures, how long, what the load check found; the trees of the
// closures that fail to load or were mispredicted. "" when the closure stage did not run.
std::string render_closures_section(const linkage::Linkage& linkage, TextStyle style);

} // namespace cudadiag::report
