#pragma once
// What a framework does at run time with the release of a CUDA library it gets: its own version
// checks, read from its released code, as opposed to the pins pip resolved it with. Two uses:
// - the severity of an unmet pin (python.requirement_unmet): an `==` pin the framework's own check
//   tolerates is info, one it refuses an error in its own words;
// - the copy a framework binds (linkage.frameworks, `find --for`'s answer) against what it needs
//   (framework.version_rule), when that copy is not the distribution the pin names.
//
// torch's rule (torch/backends/cudnn/__init__.py, `_init`, run by torch.backends.cudnn.version()
// and at the first cuDNN call; read in pytorch/pytorch's released file, the same rule in its form
// before 1.13 `'cuDNN version incompatibility: PyTorch was compiled against {} but linked against {}'`
// and from 1.13 on (pytorch/pytorch#80877) with "found runtime version" and the LD_LIBRARY_PATH hint): the
// runtime cuDNN must have torch's compile-time major, and from cuDNN 7 on a minor at least the compile-time
// one (before cuDNN 7: the same minor); the patch level is not compared.
// PYTORCH_SKIP_CUDNN_COMPATIBILITY_CHECK=1 (torch 2.x) skips the raise. torch's wheels pin (`==`) the
// nvidia-cudnn-cuNN release their build used, so the pin stands for the compile-time version
// (getCompileVersion(): CUDNN_MAJOR, CUDNN_MINOR, CUDNN_PATCHLEVEL of the build's cudnn_version.h).

#include "core/environment.hpp"
#include "discovery/discovery.hpp"
#include "findings/findings.hpp"
#include "linkage/linkage.hpp"
#include "python/framework_requirements.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudadiag::findings {

// torch's cuDNN compatibility rule applied to `compiled` (the cuDNN torch was built with, e.g. the
// pin's "9.5.1.17") and `runtime` (the cuDNN it gets, "9.10.2.21"). `words` is torch's RuntimeError
// text when it refuses (its 2.x wording, with the LD_LIBRARY_PATH sentence `env` selects; the 1.x
// wording "compiled against X but linked against Y" before torch 1.13), else a sentence saying why it is
// accepted. nullopt when either version is not dotted digits.
struct TorchCudnnVerdict {
  bool compatible = false;
  bool skipped = false; // incompatible, but PYTORCH_SKIP_CUDNN_COMPATIBILITY_CHECK=1 silences torch
  std::string words;
};
std::optional<TorchCudnnVerdict> torch_cudnn_check(std::string_view torch_version, std::string_view compiled,
                                                   std::string_view runtime, const Environment& env);

// What the framework's own run-time check says of an unmet pin whose distribution is installed in
// another release: the severity it deserves (info: the framework accepts it; warning: it is
// accepted only because a variable silences the check; error: the framework refuses it) and the
// sentence saying so. nullopt when no run-time rule of that framework covers the pin (the pin's
// own severity stands).
struct PinJudgement {
  Severity severity = Severity::error;
  std::string why;  // appended to the finding's message
  std::string rule; // the evidence's "runtime_rule": the check that judged it
};
std::optional<PinJudgement> judge_unmet_pin(const python::FrameworkRequirement& requirement,
                                            const Environment& env);

// The release of the file `path` as discovery read it for `component` (compared by real path);
// nullopt when discovery has no comparable version of that file (none, another numbering).
std::optional<std::string> release_of_file(const discovery::DiscoveryResult& discovery,
                                           std::string_view component, const std::string& path);

// Two frameworks' pins on one distribution that no release satisfies (torch 2.7.1's
// nvidia-cudnn-cu12==9.5.1.17 and jax-cuda12-plugin 0.11.2's nvidia-cudnn-cu12<10.0,>=9.10.2.21):
// the two cannot share the environment, whatever is installed. `first` and `second` point into
// the list given, in its order.
struct PinConflict {
  const python::FrameworkRequirement* first = nullptr;
  const python::FrameworkRequirement* second = nullptr;
};
std::vector<PinConflict> pin_conflicts(const std::vector<python::FrameworkRequirement>& checked);

// Whether some release satisfies both specifier sets ("==9.5.1.17", "<10.0,>=9.10.2.21"), tried
// on the versions the clauses name and the next release after each (9.10.2.21.1): the releases
// where two sets of PEP 440 clauses can meet. True when either set cannot be parsed.
bool specifiers_overlap(std::string_view first, std::string_view second);

// Releases of a framework whose pin on `dependency` satisfies `specifier` (the other framework's),
// from the releases' METADATA read for this table (tests/fixtures/releases, tests/fixtures/
// python_metadata): "torch 2.8.0 (nvidia-cudnn-cu12==9.10.2.21)". Empty when none is known.
std::vector<std::string> releases_whose_pin_fits(std::string_view framework, std::string_view dependency,
                                                 std::string_view specifier);

// framework.version_rule for the copy torch binds (linkage.frameworks): a cuDNN that is not the
// nvidia-cudnn-cuNN distribution torch pins (LD_LIBRARY_PATH, ld.so.cache, another wheel), judged
// with torch's rule against the pin: error in torch's words when it refuses, info when it accepts
// another release. A copy whose release cannot be read is not judged.
std::vector<Finding> evaluate_bound_needs(const discovery::DiscoveryResult& discovery,
                                          const linkage::Linkage& linkage, const Environment& env);

} // namespace cudadiag::findings
