#pragma once
// PEP 508 environment markers ("python_version >= '3.10' and extra == 'cuda'"), parsed and
// evaluated as `packaging` (26) does: version comparisons for python_version,
// python_full_version, implementation_version and platform_release (through pep440's
// specifiers), string comparisons otherwise ("<"/">" never hold there, "<="/">=" are equality),
// `in`/`not in` as substring tests, `extra` compared by normalised name (PEP 685). Parsing is
// iterative and bounded (at most 64 nested parentheses), so no input exhausts the stack.
//
// Hand-written: no C++ library implements PEP 508; tests/cli/test_pep440_oracle.py compares it
// with `packaging` on generated markers and environments.

#include "core/expected.hpp"

#include <map>
#include <string>
#include <string_view>

namespace cudadiag::python {

// The marker variables' values for one Python environment (python_version "3.12",
// sys_platform "linux", ...), and `extra` when a requirement is evaluated for an extra ("" for
// none). Legacy spellings (os.name, platform.machine, python_implementation) are accepted in
// markers and looked up under the PEP 508 names.
using MarkerEnvironment = std::map<std::string, std::string, std::less<>>;

// Whether `marker` holds in `environment`; an error for a syntax error, an unknown variable, a
// variable the environment lacks, or a comparison PEP 508 leaves undefined ("~=" on a string).
Expected<bool> evaluate_marker(std::string_view marker, const MarkerEnvironment& environment);

// PEP 503's normal form of a distribution or extra name: lower case, runs of -_. as one '-'.
std::string canonical_name(std::string_view name);

} // namespace cudadiag::python
