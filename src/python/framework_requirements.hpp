#pragma once
// The CUDA pins of the Python frameworks installed in an environment (torch, JAX and its CUDA
// plugins, CuPy, TensorFlow, Triton, vLLM, numba-cuda, CUDA Python, nvmath-python, the cuda-toolkit
// meta-distribution), checked against what is installed there: each framework's Requires-Dist on
// nvidia-*, cuda-*, triton, torch, jax* and cupy-* distributions whose marker holds in the
// environment — with the extras requested there (requested_extras: torch's cuda-toolkit[cublas,...],
// jax[cuda12]'s plugin[with-cuda]) — must be installed in a version its specifier allows.

#include "python/distributions.hpp"
#include "python/pep508.hpp"
#include "python/python_environments.hpp"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace cudadiag::python {

// One CUDA requirement of a framework, as checked in the environment.
struct FrameworkRequirement {
  std::string framework;                    // the distribution that asks ("torch")
  std::string framework_version;            // "2.11.0"
  std::string requirement;                  // the Requires-Dist text
  std::string dependency;                   // the distribution asked for ("nvidia-cudnn-cu13")
  std::string specifier;                    // "==9.19.0.56"; "" for any version
  std::optional<std::string> installed;     // its installed version; nullopt when not installed
  std::string installed_at;                 // its dist-info directory, when installed
  std::optional<std::string> through_extra; // the extra that asks for it, when one does
  bool met = false;                         // installed in a version the specifier allows
};

// A CUDA requirement of a framework that was not judged, and why: its extra is not requested (the
// requirement applies only under an extra that nothing installed asks for and whose distributions
// are not all installed), or its marker cannot be evaluated here.
struct UnjudgedRequirement {
  std::string framework;
  std::string framework_version;
  std::string requirement; // the Requires-Dist text
  std::string dependency;
  std::string reason; // "extra [with-cuda] not requested: 3 of its 12 distributions installed"
};

// Every CUDA requirement of the frameworks, judged or not.
struct FrameworkPins {
  std::vector<FrameworkRequirement> checked;
  std::vector<UnjudgedRequirement> not_judged;
};

// Whether `canonical` (a PEP 503 name) is a framework whose requirements are checked.
bool is_framework(std::string_view canonical);

// The marker variables of `environment` on this machine (Linux; its CPU; CPython; the
// environment's Python version when known).
MarkerEnvironment marker_environment(const PythonEnvironment& environment);

// The extras of each installed distribution (PEP 503 names, both) that count as requested: those an
// applying requirement of an installed distribution names, followed through the extras so asked
// (torch -> cuda-toolkit[cublas] -> its `nvidia-cublas==...; extra == "cublas"`), and those whose
// own distributions (beyond what the distribution requires anyway) are all installed: the trace
// `pip install "jax[cuda12]"` leaves (jax's `cuda12` adds the plugin; the plugin's `with-cuda` the
// nvidia wheels, whose pins, `nvidia-cudnn-cu12>=9.10.2.21; extra == "with-cuda"`, are then judged).
// An extra requested only by that second rule does not ask in turn: jax's `cuda12` and
// `cuda12-local` add the same distribution and differ only in asking for the plugin's `with-cuda`.
std::map<std::string, std::set<std::string>, std::less<>>
requested_extras(const std::vector<Distribution>& installed, const MarkerEnvironment& markers);

// The frameworks' CUDA requirements in `installed`: `checked` as checked_framework_requirements
// lists them, `not_judged` those under an extra that is not requested or with a marker that cannot
// be evaluated here (a requirement whose marker is false here is neither).
FrameworkPins judge_framework_requirements(const std::vector<Distribution>& installed,
                                           const MarkerEnvironment& markers);

// Every CUDA requirement of a framework in `installed`, met or not, in the order of the
// distributions and of their Requires-Dist lines. Requirements whose marker does not hold, or cannot
// be evaluated here (a variable the environment lacks), are not judged and not listed.
std::vector<FrameworkRequirement> checked_framework_requirements(const std::vector<Distribution>& installed,
                                                                 const MarkerEnvironment& markers);

// The requirements of checked_framework_requirements that are not met.
std::vector<FrameworkRequirement> unmet_framework_requirements(const std::vector<Distribution>& installed,
                                                               const MarkerEnvironment& markers);

} // namespace cudadiag::python
