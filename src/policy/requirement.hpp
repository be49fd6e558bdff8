#pragma once
// One CI requirement, as written after --require or in a policy file. Grammar:
//
//   NAME                        the component is found (cuda-pathfinder's names: nvrtc, cccl, nvcc, ...;
//                               a name that is both a library and a header set means the library)
//   NAME OP VERSION             its version (what CUDA Python loads, else what the loader loads)
//   driver OP VERSION           the NVIDIA driver version (580.95.05; NVML, else libcuda's file name)
//   driver.cuda OP VERSION      the CUDA version the driver supports (cuDriverGetVersion, 13.0)
//   selftest                    the self-test ran and passed
//   selftest.KEY                every result of test KEY (jit, ptx, reduce, sort, ipc, green_ctx) passed
//   selftest.KEY OP NUMBER[UNIT]         its headline figure, on every device that ran it
//   selftest.KEY.METRIC OP NUMBER[UNIT]  the named figure (e.g. selftest.sort.u64_gkeys_per_s>=10)
//   selftest.score OP NUMBER    the self-test score (0..100)
//   findings.SEVERITY OP COUNT  how many error / warning / info findings the report has
//   no-errors, no-warnings      findings.error==0, findings.warning==0
//   gpu.idle                    the self-test ran and NVML listed no other process on its GPUs while
//                               it did (no gpu.busy); a GPU whose processes NVML cannot list is not
//                               known to be idle: unmet (the policy form of --exclusive)
//
//   OP is one of >= > <= < == = !=. Versions compare numerically component by component, at the
//   precision written: nvrtc==13.0 holds for 13.0.88, nvrtc>12.4 does not hold for 12.4.1.
//   UNIT, when given, must match the figure's unit (GB/s, Gkeys/s, ms, us, fraction, count; "/s"
//   may be left out: 30Gkeys). Spaces around OP are allowed.

#include "core/expected.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace cudadiag::policy {

enum class Subject {
  component,
  driver,
  driver_cuda,
  selftest,
  selftest_test,
  selftest_score,
  findings,
  gpu_idle
};
enum class Op { ge, gt, le, lt, eq, ne };
std::string_view to_string(Op op); // ">=", ">", ...

struct Requirement {
  std::string text; // the spec as written (trimmed)
  Subject subject = Subject::component;
  std::string name;     // component name, self-test key or severity
  std::string metric;   // selftest.KEY.METRIC: the metric's name ("" = headline figure)
  std::optional<Op> op; // nullopt: a presence requirement
  std::string value;    // version or number, as written
  std::string unit;     // selftest figures: as written ("" = any)
};

// Parses one spec. Errors name the bad token: "bad requirement 'nvrtc>>12': '>12' is not a
// version", "unknown component 'nvrtcc' in requirement 'nvrtcc>=12.4' (known: ...)".
Expected<Requirement> parse_requirement(std::string_view spec);

// Whether `observed` OP `wanted` holds for dotted versions, `observed` cut to `wanted`'s precision.
bool version_satisfies(std::string_view observed, Op op, std::string_view wanted);
// Whether `observed` OP `wanted` holds for numbers.
bool number_satisfies(double observed, Op op, double wanted);

// "Gkeys/s" and "Gkeys" are the same unit for a requirement; comparison ignores case.
bool same_unit(std::string_view metric_unit, std::string_view wanted_unit);

} // namespace cudadiag::policy
