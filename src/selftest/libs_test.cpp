// The libs self-test: one verified call into each CUDA math library, loaded by absolute path from
// the file discovery selected (its catalog dependencies first, RTLD_NOW | RTLD_GLOBAL, so that the
// selected copies are the ones bound), called through the typed mirrors of cuda_api/math_libs.hpp on
// one stream of the worker's context, and checked against a host reference. cuBLASLt also gives the
// tensor-core figure: a bf16 8192^3 GEMM (FP32 accumulation) against SMs x max SM clock x dense
// BF16 FLOP/clock/SM; cuBLAS an SGEMM figure against the FP32 FMA peak. A library that was not
// found is skipped with the reason; a failed call or a wrong answer fails the test.

// GCC 13 at -O2 reports "may be used uninitialized" inside std::variant's move constructor when an
// Evidence value built from a temporary is inlined into the long functions below (a false positive
// of its middle end with std::variant, not a read of uninitialized memory); GCC 12 does not.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "cuda_api/math_libs.hpp"
#include "selftest/health.hpp"
#include "selftest/libs.hpp"
#include "selftest/libs_worker.hpp"
#include "selftest/test_context.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>

namespace cudadiag::selftest {
namespace libs {

void expect_success(int status, const std::string& call, const std::string& text) {
  if (status != 0) {
    throw LibraryFailure(call + " returned " + std::to_string(status) +
                         (text.empty() ? "" : " (" + text + ")"));
  }
}

void expect_symbols(const cuda_api::MissingSymbols& missing, const std::string& library) {
  if (missing.empty()) {
    return;
  }
  std::string names;
  for (const auto& name : missing.sorted()) {
    names += (names.empty() ? "" : ", ") + name;
  }
  throw LibraryFailure(library + " does not export " + names);
}

namespace {

namespace api = cuda_api;

// --- cuBLASLt: the bf16 tensor-core GEMM ------------------------------------------------------

constexpr std::uint64_t k_gemm_size = 8192;                       // m = n = k
constexpr std::size_t k_pattern_elements = std::size_t{1} << 19U; // 1 MiB of bf16, repeated
constexpr std::size_t k_lt_workspace = std::size_t{32} << 20U;    // cuBLAS's advice for Hopper
constexpr int k_gemm_repetitions = 10;
constexpr std::size_t k_samples = 16; // output elements checked against the host

struct LtApi {
  api::cublaslt::CreateFn create = nullptr;
  api::cublaslt::DestroyFn destroy = nullptr;
  api::cublaslt::GetVersionFn get_version = nullptr;
  api::cublaslt::MatmulDescCreateFn desc_create = nullptr;
  api::cublaslt::MatmulDescDestroyFn desc_destroy = nullptr;
  api::cublaslt::MatmulDescSetAttributeFn desc_set = nullptr;
  api::cublaslt::MatrixLayoutCreateFn layout_create = nullptr;
  api::cublaslt::MatrixLayoutDestroyFn layout_destroy = nullptr;
  api::cublaslt::MatmulPreferenceCreateFn pref_create = nullptr;
  api::cublaslt::MatmulPreferenceDestroyFn pref_destroy = nullptr;
  api::cublaslt::MatmulPreferenceSetAttributeFn pref_set = nullptr;
  api::cublaslt::MatmulAlgoGetHeuristicFn heuristic = nullptr;
  api::cublaslt::MatmulFn matmul = nullptr;
};

LtApi resolve_lt(const api::DlHandle& library) {
  api::MissingSymbols missing;
  const api::SymbolResolver r(library, missing);
  LtApi a;
  a.create = r.require<api::cublaslt::CreateFn>("cublasLtCreate");
  a.destroy = r.require<api::cublaslt::DestroyFn>("cublasLtDestroy");
  a.get_version = r.require<api::cublaslt::GetVersionFn>("cublasLtGetVersion");
  a.desc_create = r.require<api::cublaslt::MatmulDescCreateFn>("cublasLtMatmulDescCreate");
  a.desc_destroy = r.require<api::cublaslt::MatmulDescDestroyFn>("cublasLtMatmulDescDestroy");
  a.desc_set = r.require<api::cublaslt::MatmulDescSetAttributeFn>("cublasLtMatmulDescSetAttribute");
  a.layout_create = r.require<api::cublaslt::MatrixLayoutCreateFn>("cublasLtMatrixLayoutCreate");
  a.layout_destroy = r.require<api::cublaslt::MatrixLayoutDestroyFn>("cublasLtMatrixLayoutDestroy");
  a.pref_create = r.require<api::cublaslt::MatmulPreferenceCreateFn>("cublasLtMatmulPreferenceCreate");
  a.pref_destroy = r.require<api::cublaslt::MatmulPreferenceDestroyFn>("cublasLtMatmulPreferenceDestroy");
  a.pref_set =
      r.require<api::cublaslt::MatmulPreferenceSetAttributeFn>("cublasLtMatmulPreferenceSetAttribute");
  a.heuristic = r.require<api::cublaslt::MatmulAlgoGetHeuristicFn>("cublasLtMatmulAlgoGetHeuristic");
  a.matmul = r.require<api::cublaslt::MatmulFn>("cublasLtMatmul");
  expect_symbols(missing, "libcublasLt");
  return a;
}

// Fills `buffer` with `pattern` repeated: one upload, then copies that double the filled part.
void fill_repeated(const LibsRun& run, const DeviceBuffer& buffer,
                   const std::vector<std::uint16_t>& pattern) {
  upload(run, buffer, pattern);
  const std::size_t size = buffer.size();
  for (std::size_t filled = pattern.size() * sizeof(std::uint16_t); filled < size; filled *= 2) {
    run.gpu.check(run.gpu.api().memcpy_dtod_async(buffer.get() + filled, buffer.get(),
                                                  std::min(filled, size - filled), run.stream.get()),
                  "cuMemcpyDtoDAsync");
  }
}

std::vector<std::uint16_t> bf16_pattern(std::uint64_t seed) {
  std::vector<std::uint16_t> pattern;
  pattern.reserve(k_pattern_elements);
  for (const float value : uniform_values(k_pattern_elements, seed)) {
    pattern.push_back(bf16_from_float(value));
  }
  return pattern;
}

// The peak of a figure: SMs x max SM clock x `flops_per_clock_per_sm`, and what a healthy device
// reaches, peak x `efficiency` (the expectation the score holds it against). Adds the metrics
// PREFIX_peak_tflops, PREFIX_expected_tflops and PREFIX_fraction_of_peak and the fields to
// `figure`, or says there why the peak is unknown.
void add_expectation(const LibsRun& run, Evidence& figure, double measured, int flops_per_clock_per_sm,
                     double efficiency, const std::string& prefix) {
  const auto& device = *run.context.device;
  const auto clock = max_sm_clock(run.context);
  figure["flops_per_clock_per_sm"] =
      flops_per_clock_per_sm == 0 ? EvidenceValue() : EvidenceValue(flops_per_clock_per_sm);
  figure["sm_clock_mhz"] = clock.mhz != 0 ? EvidenceValue(clock.mhz) : EvidenceValue();
  figure["sm_clock_source"] = clock.mhz != 0 ? EvidenceValue(clock.source) : EvidenceValue();
  if (flops_per_clock_per_sm > 0 && clock.mhz != 0) {
    const double peak = device.sm_count * (clock.mhz * 1e6) * flops_per_clock_per_sm / 1e12;
    add_metric(run.result, prefix + "_peak_tflops", peak, "TFLOP/s");
    add_metric(run.result, prefix + "_expected_tflops", peak * efficiency, "TFLOP/s");
    add_metric(run.result, prefix + "_fraction_of_peak", measured / peak, "fraction");
    figure["peak_tflops"] = peak;
    figure["expected_tflops"] = peak * efficiency;
    figure["expected_share_of_peak"] = efficiency;
  } else {
    figure["expected_unknown"] = flops_per_clock_per_sm == 0
                                     ? "compute capability " + std::to_string(device.cc_major) + "." +
                                           std::to_string(device.cc_minor) + " is not in the table"
                                     : std::string("neither NVML nor the driver gave the SM clock");
  }
}

// Times `launch` (warmed up by time first): {median, best, max} ms over `repetitions` runs.
Evidence time_runs(const LibsRun& run, int repetitions, const std::function<void()>& launch,
                   double& median_ms) {
  const int warm_runs = warm_up(run.gpu, run.stream.get(), run.context.sizes.warm_ms, launch);
  const EventTimer timer(run.gpu);
  std::vector<double> ms;
  for (int rep = 0; rep < repetitions; ++rep) {
    timer.start(run.stream.get());
    launch();
    ms.push_back(timer.stop(run.stream.get()));
  }
  median_ms = median(ms);
  return {{"warmup_runs", warm_runs},
          {"repetitions", repetitions},
          {"median_ms", median_ms},
          {"best_ms", *std::min_element(ms.begin(), ms.end())},
          {"max_ms", *std::max_element(ms.begin(), ms.end())}};
}

} // namespace

void check_cublaslt(const LibsRun& run, const api::DlHandle& library, Evidence& record) {
  const auto a = resolve_lt(library);
  record["version"] = a.get_version();
  record["version_call"] = "cublasLtGetVersion";
  const auto& device = *run.context.device;
  if (device.cc_major < 8) {
    throw LibrarySkip("bf16 tensor-core GEMMs need compute capability 8.0 or newer (this device: " +
                      std::to_string(device.cc_major) + "." + std::to_string(device.cc_minor) + ")");
  }
  namespace lt = api::cublaslt;
  const std::uint64_t m = k_gemm_size;
  const std::uint64_t n = k_gemm_size;
  const std::uint64_t k = k_gemm_size;
  const auto pattern_a = bf16_pattern(1);
  const auto pattern_b = bf16_pattern(2);
  const DeviceBuffer a_matrix(run.gpu, k * m * sizeof(std::uint16_t)); // stored k x m: op(A) = A^T
  const DeviceBuffer b_matrix(run.gpu, k * n * sizeof(std::uint16_t));
  const DeviceBuffer d_matrix(run.gpu, m * n * sizeof(std::uint16_t));
  const DeviceBuffer workspace(run.gpu, k_lt_workspace);
  fill_repeated(run, a_matrix, pattern_a);
  fill_repeated(run, b_matrix, pattern_b);

  lt::Handle handle = nullptr;
  expect_success(a.create(&handle), "cublasLtCreate");
  const Defer destroy_handle([&] { a.destroy(handle); });
  lt::MatmulDesc desc = nullptr;
  expect_success(a.desc_create(&desc, api::cublas::k_compute_32f, api::data_type::k_r_32f),
                 "cublasLtMatmulDescCreate");
  const Defer destroy_desc([&] { a.desc_destroy(desc); });
  const std::int32_t transpose = api::cublas::k_op_t;
  const std::int32_t keep = api::cublas::k_op_n;
  expect_success(a.desc_set(desc, lt::k_matmul_desc_transa, &transpose, sizeof transpose),
                 "cublasLtMatmulDescSetAttribute(TRANSA)");
  expect_success(a.desc_set(desc, lt::k_matmul_desc_transb, &keep, sizeof keep),
                 "cublasLtMatmulDescSetAttribute(TRANSB)");
  std::array<lt::MatrixLayout, 3> layouts{};
  const Defer destroy_layouts([&] {
    for (auto* layout : layouts) {
      if (layout != nullptr) {
        a.layout_destroy(layout);
      }
    }
  });
  const auto bf16 = api::data_type::k_r_16bf;
  expect_success(a.layout_create(&layouts[0], bf16, k, m, static_cast<std::int64_t>(k)),
                 "cublasLtMatrixLayoutCreate(A)");
  expect_success(a.layout_create(&layouts[1], bf16, k, n, static_cast<std::int64_t>(k)),
                 "cublasLtMatrixLayoutCreate(B)");
  expect_success(a.layout_create(&layouts[2], bf16, m, n, static_cast<std::int64_t>(m)),
                 "cublasLtMatrixLayoutCreate(D)");
  lt::MatmulPreference preference = nullptr;
  expect_success(a.pref_create(&preference), "cublasLtMatmulPreferenceCreate");
  const Defer destroy_preference([&] { a.pref_destroy(preference); });
  const std::uint64_t workspace_bytes = k_lt_workspace;
  expect_success(
      a.pref_set(preference, lt::k_matmul_pref_max_workspace_bytes, &workspace_bytes, sizeof workspace_bytes),
      "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)");
  lt::MatmulHeuristicResult heuristic{};
  int algorithms = 0;
  expect_success(a.heuristic(handle, desc, layouts[0], layouts[1], layouts[2], layouts[2], preference, 1,
                             &heuristic, &algorithms),
                 "cublasLtMatmulAlgoGetHeuristic");
  if (algorithms < 1) {
    throw LibrarySkip("cuBLASLt has no algorithm for a bf16 GEMM (FP32 accumulation) on this device");
  }
  const float alpha = 1.0F;
  const float beta = 0.0F;
  const auto launch = [&] {
    expect_success(a.matmul(handle, desc, &alpha, device_pointer(a_matrix), layouts[0],
                            device_pointer(b_matrix), layouts[1], &beta, device_pointer(d_matrix), layouts[2],
                            device_pointer(d_matrix), layouts[2], &heuristic.algo, device_pointer(workspace),
                            heuristic.workspaceSize, run.stream.get()),
                   "cublasLtMatmul");
  };
  double median_ms = 0;
  Evidence figure = time_runs(run, k_gemm_repetitions, launch, median_ms);
  const double tflops = 2.0 * static_cast<double>(m * n * k) / (median_ms / 1e3) / 1e12;
  add_metric(run.result, "bf16_gemm_tflops", tflops, "TFLOP/s", true);
  figure["shape"] = Evidence::List{m, n, k};
  figure["layout"] = "TN (op(A) = A^T), bf16 in and out, FP32 accumulation (CUBLAS_COMPUTE_32F)";
  figure["algo_workspace_bytes"] = heuristic.workspaceSize;
  figure["waves"] = heuristic.wavesCount;
  figure["tflops"] = tflops;
  add_expectation(run, figure, tflops, bf16_dense_flops_per_clock_per_sm(device.cc_major, device.cc_minor),
                  k_bf16_gemm_efficiency, "bf16");
  record["gemm"] = figure;

  // Sampled elements of D against the host: bf16 output rounding (2^-8 relative, doubled) and FP32
  // accumulation (1e-4 of sum |a||b|).
  std::array<std::uint16_t, k_samples> got{};
  std::array<std::pair<std::uint64_t, std::uint64_t>, k_samples> where{};
  for (std::size_t s = 0; s < k_samples; ++s) {
    where[s] = {(s * 1237U + 5U) % m, (s * 3571U + 11U) % n};
    run.gpu.check(run.gpu.api().memcpy_dtoh_async(&got[s],
                                                  d_matrix.get() + (where[s].first + where[s].second * m) * 2,
                                                  sizeof(std::uint16_t), run.stream.get()),
                  "cuMemcpyDtoHAsync");
  }
  run.stream.synchronize();
  for (std::size_t s = 0; s < k_samples; ++s) {
    const auto [i, j] = where[s];
    double expected = 0;
    double bound = 0;
    for (std::uint64_t p = 0; p < k; ++p) {
      const double av = float_from_bf16(pattern_a[(p + i * k) % k_pattern_elements]);
      const double bv = float_from_bf16(pattern_b[(p + j * k) % k_pattern_elements]);
      expected += av * bv;
      bound += std::fabs(av * bv);
    }
    const double value = float_from_bf16(got[s]);
    if (!(std::fabs(value - expected) <= std::ldexp(std::fabs(expected), -7) + 1e-4 * bound)) {
      throw LibraryFailure("bf16 GEMM: D(" + std::to_string(i) + ", " + std::to_string(j) + ") is " +
                           std::to_string(value) + ", the host computes " + std::to_string(expected));
    }
  }
  record["checked"] = std::to_string(k_samples) + " elements of D against the host (double)";
}

// --- cuBLAS: SGEMM -------------------------------------------------------------------------------

namespace {

constexpr int k_small = 64;        // the checked SGEMM: 64 x 64 x 64
constexpr int k_sgemm_size = 4096; // the timed one
constexpr int k_sgemm_repetitions = 5;

struct BlasApi {
  api::cublas::CreateFn create = nullptr;
  api::cublas::DestroyFn destroy = nullptr;
  api::cublas::GetVersionFn get_version = nullptr;
  api::cublas::SetStreamFn set_stream = nullptr;
  api::cublas::SgemmFn sgemm = nullptr;
};

} // namespace

void check_cublas(const LibsRun& run, const api::DlHandle& library, Evidence& record) {
  api::MissingSymbols missing;
  const api::SymbolResolver r(library, missing);
  BlasApi a;
  a.create = r.require<api::cublas::CreateFn>("cublasCreate_v2");
  a.destroy = r.require<api::cublas::DestroyFn>("cublasDestroy_v2");
  a.get_version = r.require<api::cublas::GetVersionFn>("cublasGetVersion_v2");
  a.set_stream = r.require<api::cublas::SetStreamFn>("cublasSetStream_v2");
  a.sgemm = r.require<api::cublas::SgemmFn>("cublasSgemm_v2");
  expect_symbols(missing, "libcublas");

  api::cublas::Handle handle = nullptr;
  expect_success(a.create(&handle), "cublasCreate_v2");
  const Defer destroy_handle([&] { a.destroy(handle); });
  int version = 0;
  expect_success(a.get_version(handle, &version), "cublasGetVersion_v2");
  record["version"] = version;
  record["version_call"] = "cublasGetVersion_v2";
  expect_success(a.set_stream(handle, run.stream.get()), "cublasSetStream_v2");

  // Checked: C = A B (column-major 64 x 64), against the host in double. The tolerance (2e-3 of
  // sum |a||b|) admits TF32 (NVIDIA_TF32_OVERRIDE) and catches any wrong element.
  const auto host_a = uniform_values(k_small * k_small, 3);
  const auto host_b = uniform_values(k_small * k_small, 4);
  const std::size_t bytes = host_a.size() * sizeof(float);
  const DeviceBuffer da(run.gpu, bytes);
  const DeviceBuffer db(run.gpu, bytes);
  const DeviceBuffer dc(run.gpu, bytes);
  upload(run, da, host_a);
  upload(run, db, host_b);
  const float one = 1.0F;
  const float zero = 0.0F;
  const auto* pa = static_cast<const float*>(device_pointer(da));
  const auto* pb = static_cast<const float*>(device_pointer(db));
  auto* pc = static_cast<float*>(device_pointer(dc));
  expect_success(a.sgemm(handle, api::cublas::k_op_n, api::cublas::k_op_n, k_small, k_small, k_small, &one,
                         pa, k_small, pb, k_small, &zero, pc, k_small),
                 "cublasSgemm_v2");
  const auto got = download<float>(run, dc.get(), host_a.size());
  std::vector<double> bound;
  const auto expected = gemm_reference(host_a, host_b, k_small, k_small, k_small, &bound);
  for (std::size_t e = 0; e < got.size(); ++e) {
    if (!(std::fabs(static_cast<double>(got[e]) - expected[e]) <= 2e-3 * bound[e] + 1e-6)) {
      throw LibraryFailure("SGEMM 64x64x64: C(" + std::to_string(e % k_small) + ", " +
                           std::to_string(e / k_small) + ") is " + std::to_string(got[e]) +
                           ", the host computes " + std::to_string(expected[e]));
    }
  }
  record["checked"] = "SGEMM 64x64x64 against the host (double), every element";

  // Timed: 4096^3 with A = 1 and B = 0.5 everywhere, so every element of C is 2048 exactly.
  constexpr std::size_t big = std::size_t{k_sgemm_size} * k_sgemm_size;
  const DeviceBuffer ba(run.gpu, big * sizeof(float));
  const DeviceBuffer bb(run.gpu, big * sizeof(float));
  const DeviceBuffer bc(run.gpu, big * sizeof(float));
  run.stream.fill_u32(ba.get(), 0x3F800000U, big); // on the stream the GEMMs run on, before them
  run.stream.fill_u32(bb.get(), 0x3F000000U, big);
  const auto launch = [&] {
    expect_success(a.sgemm(handle, api::cublas::k_op_n, api::cublas::k_op_n, k_sgemm_size, k_sgemm_size,
                           k_sgemm_size, &one, static_cast<const float*>(device_pointer(ba)), k_sgemm_size,
                           static_cast<const float*>(device_pointer(bb)), k_sgemm_size, &zero,
                           static_cast<float*>(device_pointer(bc)), k_sgemm_size),
                   "cublasSgemm_v2");
  };
  double median_ms = 0;
  Evidence figure = time_runs(run, k_sgemm_repetitions, launch, median_ms);
  const double flops = 2.0 * k_sgemm_size * static_cast<double>(k_sgemm_size) * k_sgemm_size;
  const double tflops = flops / (median_ms / 1e3) / 1e12;
  add_metric(run.result, "sgemm_tflops", tflops, "TFLOP/s");
  figure["shape"] = Evidence::List{k_sgemm_size, k_sgemm_size, k_sgemm_size};
  figure["tflops"] = tflops;
  const auto& device = *run.context.device;
  add_expectation(run, figure, tflops, 2 * fma_per_clock_per_sm(device.cc_major, device.cc_minor),
                  k_sgemm_efficiency, "sgemm");
  record["sgemm"] = figure;
  const auto corner = download<float>(run, bc.get() + (big - 1) * sizeof(float), 1);
  const auto first = download<float>(run, bc.get(), 1);
  if (corner[0] != 2048.0F || first[0] != 2048.0F) {
    throw LibraryFailure("SGEMM 4096^3 of ones by halves gave " + std::to_string(first[0]) + " and " +
                         std::to_string(corner[0]) + ", not 2048");
  }
}

} // namespace libs

namespace {

// The libraries loaded so far, by catalog name. Never dlclosed: a math library that created CUDA
// state (and NCCL's threads) is not unloaded inside the worker.
class Loader {
public:
  explicit Loader(const TestContext& context) : m_context(context), m_config(context.config) {}
  ~Loader() {
    for (auto& [name, handle] : m_handles) {
      handle.release();
    }
  }
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  // `library` after its dependencies, each the file discovery selected, RTLD_NOW | RTLD_GLOBAL.
  // nullptr when discovery found no copy of it; throws LibraryFailure when a dlopen fails. A
  // dependency discovery did not find is left to the loader (listed in the record).
  const cuda_api::DlHandle* load(const std::string& library, Evidence& record) {
    const auto order = libs::load_order(library);
    Evidence::List dependencies;
    Evidence::List unbound;
    for (const auto& name : order) {
      const auto found = m_config.libraries.find(name);
      if (found == m_config.libraries.end() || found->second.empty()) {
        if (name == library) {
          return nullptr;
        }
        unbound.emplace_back(name);
        continue;
      }
      auto loaded = m_handles.find(name);
      if (loaded == m_handles.end()) {
        auto handle = load_bounded(m_context, found->second, RTLD_NOW | RTLD_GLOBAL);
        if (!handle.loaded()) {
          throw libs::LibraryFailure("dlopen " + found->second +
                                     (name == library ? "" : " (dependency " + name + ")") + ": " +
                                     handle.error());
        }
        loaded = m_handles.emplace(name, std::move(handle)).first;
      }
      if (name == library) {
        record["path"] = found->second;
      } else {
        dependencies.push_back({{"name", name}, {"path", found->second}});
      }
    }
    record["dependencies"] = dependencies;
    if (!unbound.empty()) {
      record["dependencies_not_found"] = unbound;
    }
    return &m_handles.at(library);
  }

private:
  const TestContext& m_context;
  const WorkerConfig& m_config;
  std::map<std::string, cuda_api::DlHandle> m_handles;
};

struct LibraryRow {
  std::string_view name;
  libs::Check check;
};
// In the order of libs::k_libraries (the figure first).
// clang-format off
constexpr std::array<LibraryRow, 8> k_checks{{
    {"cublasLt", libs::check_cublaslt},
    {"cublas",   libs::check_cublas},
    {"cufft",    libs::check_cufft},
    {"curand",   libs::check_curand},
    {"cusparse", libs::check_cusparse},
    {"cusolver", libs::check_cusolver},
    {"cudnn",    libs::check_cudnn},
    {"nccl",     libs::check_nccl},
}};
// clang-format on
static_assert(k_checks.size() == libs::k_libraries.size());

// One library's check: load it (dependencies first), call it, and say how that went.
struct Checked {
  Evidence record;
  libs::Outcome outcome;
};

Checked check_library(const LibraryRow& row, const libs::LibsRun& run, Loader& loader) {
  const auto started = std::chrono::steady_clock::now();
  Checked out{{{"library", row.name}}, {std::string(row.name), libs::LibraryStatus::ok, ""}};
  try {
    const auto* handle = loader.load(std::string(row.name), out.record);
    if (handle == nullptr) {
      out.outcome.status = libs::LibraryStatus::skip;
      out.outcome.reason = "not found (discovery selected no copy of " + std::string(row.name) + ")";
    } else {
      row.check(run, *handle, out.record);
    }
  } catch (const libs::LibrarySkip& skip) {
    out.outcome.status = libs::LibraryStatus::skip;
    out.outcome.reason = skip.what();
  } catch (const std::exception& error) {
    out.outcome.status = libs::LibraryStatus::fail;
    out.outcome.reason = error.what();
    // Whatever the library left queued must not run into the next one's buffers.
    static_cast<void>(run.gpu.api().stream_synchronize(run.stream.get()));
  }
  out.record["status"] = std::string(libs::to_string(out.outcome.status));
  out.record["reason"] = out.outcome.reason.empty() ? EvidenceValue() : EvidenceValue(out.outcome.reason);
  out.record["ms"] =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  return out;
}

} // namespace

TestResult run_libs(const TestContext& context) {
  if (context.gpu == nullptr || !context.device) {
    return without_gpu(context);
  }
  auto result = new_result(context);
  const Gpu& gpu = *context.gpu;
  gpu.require(gpu.api().memcpy_htod_async, "cuMemcpyHtoDAsync");
  gpu.require(gpu.api().memcpy_dtoh_async, "cuMemcpyDtoHAsync");
  gpu.require(gpu.api().memcpy_dtod_async, "cuMemcpyDtoDAsync");
  gpu.require(gpu.api().memset_d32_async, "cuMemsetD32Async");
  const Stream stream(gpu);
  const libs::LibsRun run{context, gpu, stream, result};
  Loader loader(context);
  const auto& only = context.config.libs_checked;
  Evidence::List records;
  std::vector<libs::Outcome> outcomes;
  for (const auto& row : k_checks) {
    if (!only.empty() && std::find(only.begin(), only.end(), row.name) == only.end()) {
      continue;
    }
    auto checked = check_library(row, run, loader);
    records.push_back(std::move(checked.record));
    outcomes.push_back(std::move(checked.outcome));
  }
  result.details["libraries"] = std::move(records);
  const auto verdict = libs::verdict(outcomes);
  result.status = verdict.status;
  result.reason = verdict.reason;
  return result;
}

} // namespace cudadiag::selftest
