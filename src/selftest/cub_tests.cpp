// The reduce and sort self-tests: the real cub::DeviceReduce::Sum and cub::DeviceRadixSort::SortKeys,
// compiled by nvcc into libcudadiag_cub_selftest.so (kernels/cub_selftest.cu; ABI in
// kernels/cub_selftest.h), run in the device's primary context that the worker made current. The
// module's static CUDA runtime dlopens "libcuda.so.1", which resolves to the driver the worker
// already loaded by absolute path, so CUB runs on the driver discovery selected.

#include "core/expected.hpp"
#include "cuda_api/library.hpp"
#include "kernels/cub_selftest.h"
#include "selftest/test_context.hpp"

#include <cstring>

namespace cudadiag::selftest {
namespace {

struct CubModule {
  cuda_api::DlHandle handle;
  cuda_api::MissingSymbols missing;
  decltype(&cudadiag_cub_selftest_abi) abi = nullptr;
  decltype(&cudadiag_cub_selftest_info) info = nullptr;
  decltype(&cudadiag_cub_selftest_run) run = nullptr;

  explicit CubModule(const std::string& path) : handle(path) {
    const cuda_api::SymbolResolver sym(handle, missing);
    abi = sym.require<decltype(abi)>("cudadiag_cub_selftest_abi");
    info = sym.require<decltype(info)>("cudadiag_cub_selftest_info");
    run = sym.require<decltype(run)>("cudadiag_cub_selftest_run");
    // Never unloaded: the static CUDA runtime inside registers exit-time teardown.
    handle.release();
  }
};

// Whether the test can use the loaded module, or why it cannot run.
Expected<void> usable_module(const TestContext& context, const CubModule* module) {
  if (module == nullptr) {
    return Error{context.config.module_missing_reason.empty() ? "the CUB self-test module was not built"
                                                              : context.config.module_missing_reason};
  }
  if (!module->missing.empty()) {
    return Error{"cannot use " + context.config.module_path + ": " +
                 (module->handle.error().empty() ? "it lacks " + module->missing.names().front()
                                                 : module->handle.error())};
  }
  if (const auto abi = module->abi(); abi != CUDADIAG_CUB_SELFTEST_ABI) {
    return Error{context.config.module_path + " has ABI " + std::to_string(abi) + ", this cudadiag needs " +
                 std::to_string(CUDADIAG_CUB_SELFTEST_ABI) + " (a module from another cudadiag version)"};
  }
  return {};
}

struct CaseSpec {
  cudadiag_cub_case which;
  const char* name; // metric prefix
};

// Why a case does not count: it failed, or it was skipped (the device lacked the memory).
struct CaseProblem {
  bool skipped = false;
  std::string why;
};

// Runs one case; adds its details and metrics to `result` whatever happens.
Expected<void, CaseProblem> run_case(const CubModule& module, const TestContext& context,
                                     const CaseSpec& spec, std::uint64_t count, int repetitions,
                                     cu::CUstream stream, TestResult& result, bool primary) {
  cudadiag_cub_params params{};
  params.which = spec.which;
  params.count = count;
  params.warmup = context.sizes.cub_warmup;
  params.repetitions = repetitions;
  params.stream = stream;
  params.warmup_ms = context.sizes.warm_ms;
  cudadiag_cub_result out{};
  static_cast<void>(module.run(&params, &out));
  Evidence entry = {{"count", count},
                    {"repetitions", repetitions},
                    {"median_ms", out.median_ms},
                    {"best_ms", out.best_ms},
                    {"max_ms", out.max_ms},
                    {"spread", out.median_ms > 0 ? (out.max_ms - out.best_ms) / out.median_ms : 0.0},
                    {"warmup_runs", out.warmup_runs},
                    {"warmup_elapsed_ms", out.warmup_elapsed_ms},
                    {"device_bytes", out.device_bytes},
                    {"temp_storage_bytes", out.temp_storage_bytes}};
  Expected<void, CaseProblem> ran;
  if (out.cuda_error != 0) {
    const std::string name(out.error_name, ::strnlen(out.error_name, sizeof out.error_name));
    const std::string where(out.error_where, ::strnlen(out.error_where, sizeof out.error_where));
    const auto problem = where + ": " + name + " (" + std::to_string(out.cuda_error) + ")";
    entry["error"] = problem;
    ran =
        out.cuda_error == 2 // cudaErrorMemoryAllocation
            ? CaseProblem{true, std::string(spec.name) + " needs more device memory than is free: " + problem}
            : CaseProblem{false, problem};
  } else if (out.verified != 1) {
    const auto problem = std::string(spec.name) + " gave a wrong result: " +
                         std::string(out.mismatch, ::strnlen(out.mismatch, sizeof out.mismatch));
    entry["error"] = problem;
    ran = CaseProblem{false, problem};
  } else if (out.median_ms > 0) {
    const double seconds = out.median_ms / 1e3;
    if (out.bytes_per_run > 0) {
      const double gbps = out.bytes_per_run / seconds / 1e9;
      entry["gbps"] = gbps;
      add_metric(result, std::string(spec.name) + "_gbps", gbps, "GB/s", primary);
      if (context.device && context.device->peak_gbps > 0) {
        add_metric(result, std::string(spec.name) + "_fraction_of_peak", gbps / context.device->peak_gbps,
                   "fraction");
      }
    }
    if (out.keys_per_run > 0) {
      const double gkeys = out.keys_per_run / seconds / 1e9;
      entry["gkeys_per_s"] = gkeys;
      add_metric(result, std::string(spec.name) + "_gkeys_per_s", gkeys, "Gkeys/s", primary);
    }
  }
  result.details[spec.name] = entry;
  return ran;
}

TestResult run_cases(const TestContext& context, const std::vector<CaseSpec>& cases, std::uint64_t count,
                     int repetitions) {
  if (context.gpu == nullptr || !context.device) {
    return without_gpu(context);
  }
  std::optional<CubModule> module;
  if (!context.config.module_path.empty()) {
    module.emplace(context.config.module_path);
  }
  if (auto usable = usable_module(context, module ? &*module : nullptr); !usable) {
    return skipped(context, usable.error().message);
  }
  auto result = new_result(context);
  cudadiag_cub_module_info info{};
  const auto info_error = module->info(&info);
  result.details["module"] = {{"path", context.config.module_path},
                              {"archs", std::string(info.archs, ::strnlen(info.archs, sizeof info.archs))},
                              {"cuda_version_built", info.cuda_version_built},
                              {"cccl_version", info.cccl_version},
                              {"runtime_version", info.runtime_version},
                              {"driver_version", info.driver_version},
                              {"info_error", info_error}};
  const Stream stream(*context.gpu);
  std::vector<std::string> failures;
  std::vector<std::string> skips;
  bool primary = true;
  for (const auto& spec : cases) {
    if (auto ran = run_case(*module, context, spec, count, repetitions, stream.get(), result, primary);
        !ran) {
      (ran.error().skipped ? skips : failures).push_back(ran.error().why);
    }
    primary = false;
  }
  if (!failures.empty()) {
    result.status = TestStatus::fail;
    result.reason = failures.front();
  } else if (skips.size() == cases.size()) {
    result.status = TestStatus::skip;
    result.reason = skips.front();
  } else if (!skips.empty()) {
    result.reason = "partly skipped: " + skips.front();
  }
  return result;
}

} // namespace

TestResult run_reduce(const TestContext& context) {
  return run_cases(context, {{CUDADIAG_CUB_REDUCE_F32, "f32"}, {CUDADIAG_CUB_REDUCE_I32, "i32"}},
                   context.sizes.reduce_count, context.sizes.reduce_repetitions);
}

TestResult run_sort(const TestContext& context) {
  return run_cases(context, {{CUDADIAG_CUB_SORT_U32, "u32"}, {CUDADIAG_CUB_SORT_U64, "u64"}},
                   context.sizes.sort_count, context.sizes.sort_repetitions);
}

} // namespace cudadiag::selftest
