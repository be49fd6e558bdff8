// The green_ctx self-test: split the device's SMs into two partitions of the size and alignment the
// driver reports, make a green context and stream on each, and prove confinement with the %smid
// probe (each partition's launches touch at most its SMs; the two sets are disjoint; an ordinary
// launch reaches every SM). Then measure isolation: a short compute kernel's time in partition A
// alone, and while the copy kernel saturates partition B.

#include "selftest/test_context.hpp"

#include <algorithm>
#include <array>
#include <iterator>
#include <set>

namespace cudadiag::selftest {
namespace {

constexpr std::size_t k_partitions = 2;
constexpr std::uint64_t k_latency_spin_ns = 20'000; // the latency-sensitive kernel: 20 us per block
constexpr std::uint64_t k_load_elements = std::uint64_t{1} << 26U; // 1 GiB per buffer for the load
constexpr int k_load_launches = 40;

// The partition size the driver asks for (13.0+), else the documented minimum per architecture.
unsigned minimum_partition(const cu::CUdevResource& all, int cc_major) {
  if (all.sm.minSmPartitionSize > 0) {
    return std::max(all.sm.minSmPartitionSize, all.sm.smCoscheduledAlignment);
  }
  return cc_major >= 9 ? 8U : cc_major == 8 ? 4U : 2U;
}

// A green context with its stream, destroyed in reverse order.
class GreenPartition {
public:
  GreenPartition(const Gpu& gpu, cu::CUdevice device, cu::CUdevResource& resource) : m_gpu(gpu) {
    cu::CUdevResourceDesc desc = nullptr;
    gpu.check(gpu.api().dev_resource_generate_desc(&desc, &resource, 1), "cuDevResourceGenerateDesc");
    gpu.check(gpu.api().green_ctx_create(&m_green, desc, device, cu::k_green_ctx_default_stream),
              "cuGreenCtxCreate");
    gpu.check(gpu.api().ctx_from_green_ctx(&m_context, m_green), "cuCtxFromGreenCtx");
    gpu.check(gpu.api().green_ctx_stream_create(&m_stream, m_green, cu::k_stream_non_blocking, 0),
              "cuGreenCtxStreamCreate");
    cu::CUdevResource granted{};
    gpu.check(gpu.api().green_ctx_get_dev_resource(m_green, &granted, cu::CU_DEV_RESOURCE_TYPE_SM),
              "cuGreenCtxGetDevResource");
    m_sm_count = granted.sm.smCount;
  }
  ~GreenPartition() {
    if (m_stream != nullptr) {
      static_cast<void>(m_gpu.api().stream_destroy(m_stream));
    }
    if (m_green != nullptr) {
      static_cast<void>(m_gpu.api().green_ctx_destroy(m_green));
    }
  }
  GreenPartition(const GreenPartition&) = delete;
  GreenPartition& operator=(const GreenPartition&) = delete;

  [[nodiscard]] cu::CUcontext context() const { return m_context; }
  [[nodiscard]] cu::CUstream stream() const { return m_stream; }
  [[nodiscard]] unsigned sm_count() const { return m_sm_count; }

private:
  const Gpu& m_gpu;
  cu::CUgreenCtx m_green = nullptr;
  cu::CUcontext m_context = nullptr;
  cu::CUstream m_stream = nullptr;
  unsigned m_sm_count = 0;
};

EvidenceValue sm_list(const std::vector<int>& sms) {
  return EvidenceValue(sms);
}

} // namespace

TestResult run_green_ctx(const TestContext& context) {
  if (context.gpu == nullptr || !context.device) {
    return without_gpu(context);
  }
  const Gpu& gpu = *context.gpu;
  const auto& api = gpu.api();
  const auto& device = *context.device;
  if (api.device_get_dev_resource == nullptr || api.dev_sm_resource_split_by_count == nullptr ||
      api.green_ctx_create == nullptr || api.ctx_from_green_ctx == nullptr) {
    return skipped(context, "this driver (CUDA " + std::to_string(gpu.driver_version() / 1000) + "." +
                                std::to_string(gpu.driver_version() % 1000 / 10) +
                                ") has no green contexts (they need a CUDA 12.4 driver)");
  }
  if (api.green_ctx_stream_create == nullptr) {
    return skipped(context, "this driver has green contexts but no cuGreenCtxStreamCreate (needs CUDA 12.5)");
  }
  auto result = new_result(context);

  cu::CUdevResource all{};
  if (const auto got = api.device_get_dev_resource(device.handle, &all, cu::CU_DEV_RESOURCE_TYPE_SM);
      got == cu::CUDA_ERROR_NOT_SUPPORTED) {
    return skipped(context, "cuDeviceGetDevResource: " + gpu.error_name(got) + " on this device");
  } else {
    gpu.check(got, "cuDeviceGetDevResource");
  }
  const unsigned min_count = minimum_partition(all, device.cc_major);
  std::array<cu::CUdevResource, k_partitions> groups{};
  cu::CUdevResource remaining{};
  unsigned group_count = k_partitions;
  gpu.check(api.dev_sm_resource_split_by_count(groups.data(), &group_count, &all, &remaining, 0, min_count),
            "cuDevSmResourceSplitByCount(" + std::to_string(min_count) + " SMs)");
  result.details["split"] = {{"device_sms", all.sm.smCount},
                             {"min_partition_size", all.sm.minSmPartitionSize},
                             {"coscheduled_alignment", all.sm.smCoscheduledAlignment},
                             {"requested_sms_per_group", min_count},
                             {"groups", group_count},
                             {"group_sms", Evidence::List{groups[0].sm.smCount, groups[1].sm.smCount}},
                             {"remaining_sms", remaining.sm.smCount}};
  if (group_count < k_partitions) {
    return skipped(context, "the device's " + std::to_string(all.sm.smCount) + " SMs give only " +
                                std::to_string(group_count) + " partition(s) of " +
                                std::to_string(min_count));
  }

  const GreenPartition first(gpu, device.handle, groups[0]);
  const GreenPartition second(gpu, device.handle, groups[1]);
  const std::array<const GreenPartition*, k_partitions> partitions{&first, &second};

  // The probe module in each green context, and one in the primary context for the control launch.
  std::vector<std::unique_ptr<Module>> modules;
  for (const auto* partition : partitions) {
    gpu.check(api.ctx_set_current(partition->context()), "cuCtxSetCurrent(green)");
    modules.push_back(std::make_unique<Module>(gpu, k_smid_ptx));
  }
  const unsigned blocks = 4 * static_cast<unsigned>(device.sm_count);
  std::array<std::vector<int>, k_partitions> touched;
  for (std::size_t i = 0; i < k_partitions; ++i) {
    gpu.check(api.ctx_set_current(partitions[i]->context()), "cuCtxSetCurrent(green)");
    touched[i] = sms_touched(gpu, *modules[i], partitions[i]->stream(), blocks, context.sizes.probe_spin_ns);
  }

  std::vector<int> overlap;
  std::set_intersection(touched[0].begin(), touched[0].end(), touched[1].begin(), touched[1].end(),
                        std::back_inserter(overlap));

  // The isolation measurement: partition A runs a short compute-only probe (as many blocks as it
  // has SMs); partition B runs the copy kernel over 1 GiB buffers back to back.
  gpu.check(api.ctx_set_current(first.context()), "cuCtxSetCurrent(green)");
  const auto latency_kernel = modules[0]->function("cudadiag_smid_probe");
  const DeviceBuffer bitmap(gpu, 4096);
  auto bitmap_ptr = bitmap.get();
  auto spin = static_cast<unsigned long long>(k_latency_spin_ns);
  const EventTimer timer(gpu);
  auto measure_latency = [&]() {
    std::vector<double> samples;
    for (int rep = 0; rep < context.sizes.latency_repetitions; ++rep) {
      timer.start(first.stream());
      gpu.launch(latency_kernel, first.sm_count(), 128, first.stream(), {&bitmap_ptr, &spin});
      samples.push_back(timer.stop(first.stream()));
    }
    return median(samples);
  };
  const double alone_ms = measure_latency();

  gpu.check(api.ctx_set_current(second.context()), "cuCtxSetCurrent(green)");
  const Module copy_module(gpu, k_copy_ptx);
  const auto copy = copy_module.function("cudadiag_copy_u32x4");
  const DeviceBuffer load_source(gpu, k_load_elements * 16);
  const DeviceBuffer load_target(gpu, k_load_elements * 16);
  auto src = load_source.get();
  auto dst = load_target.get();
  auto count = static_cast<unsigned long long>(k_load_elements);
  for (int launch = 0; launch < k_load_launches; ++launch) {
    gpu.launch(copy, 8 * second.sm_count(), 256, second.stream(), {&dst, &src, &count});
  }
  gpu.check(api.ctx_set_current(first.context()), "cuCtxSetCurrent(green)");
  const double loaded_ms = measure_latency();
  gpu.check(api.stream_synchronize(second.stream()), "cuStreamSynchronize(load)");

  add_metric(result, "latency_alone_us", alone_ms * 1e3, "us");
  add_metric(result, "latency_under_load_us", loaded_ms * 1e3, "us");
  add_metric(result, "latency_slowdown", loaded_ms / alone_ms, "fraction", true);
  add_metric(result, "partition_sms", first.sm_count(), "count");

  result.details["partitions"] = Evidence::List();
  for (std::size_t i = 0; i < k_partitions; ++i) {
    result.details["partitions"].push_back({{"granted_sms", partitions[i]->sm_count()},
                                            {"sms_touched", touched[i].size()},
                                            {"sm_ids", sm_list(touched[i])}});
  }
  result.details["overlap_sm_ids"] = sm_list(overlap);

  // Back to the primary context for the control launch (and for the tests after this one).
  gpu.check(api.ctx_set_current(nullptr), "cuCtxSetCurrent");
  cu::CUcontext primary = nullptr;
  gpu.check(api.primary_ctx_retain(&primary, device.handle), "cuDevicePrimaryCtxRetain");
  gpu.check(api.ctx_set_current(primary), "cuCtxSetCurrent(primary)");
  static_cast<void>(api.primary_ctx_release(device.handle)); // the worker still holds its own retain
  const Module control_module(gpu, k_smid_ptx);
  const Stream control_stream(gpu);
  const auto control =
      sms_touched(gpu, control_module, control_stream.get(), blocks, context.sizes.probe_spin_ns);
  result.details["control_sms_touched"] = control.size();

  std::vector<std::string> failures;
  for (std::size_t i = 0; i < k_partitions; ++i) {
    if (touched[i].empty() || touched[i].size() > partitions[i]->sm_count()) {
      failures.push_back("partition " + std::to_string(i) + " was granted " +
                         std::to_string(partitions[i]->sm_count()) + " SMs but its launch touched " +
                         std::to_string(touched[i].size()));
    }
  }
  if (!overlap.empty()) {
    failures.push_back("the two partitions shared " + std::to_string(overlap.size()) + " SM(s)");
  }
  if (static_cast<int>(control.size()) != device.sm_count) {
    failures.push_back("an ordinary launch reached " + std::to_string(control.size()) + " of " +
                       std::to_string(device.sm_count) + " SMs");
  }
  if (!failures.empty()) {
    result.status = TestStatus::fail;
    result.reason = failures.front();
  }
  return result;
}

} // namespace cudadiag::selftest
