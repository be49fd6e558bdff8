// Who else uses the GPU (selftest/gpu_busy.hpp): this run's own processes are never "other", a
// listing without this worker is unknown, the context sets gpu.busy's severity, and figures taken
// while the GPU was busy are kept out of the score and of selftest.slow / gpu.throttled.

#include "checks.hpp"
#include "core/run_context.hpp"
#include "findings/selftest_rules.hpp"
#include "report/selftest_json.hpp"
#include "selftest/gpu_busy.hpp"
#include "selftest/score.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>

#include <unistd.h>

#include <map>

using namespace cudadiag;

namespace {

// A process tree: 100 (cudadiag) -> 200 (worker) -> 300 (ipc peer); 100 -> 210 (another worker);
// 1 -> 500 (python3, someone else's), 1 -> 600 (unnamed).
selftest::ProcessTable busy_test_table() {
  static const std::map<unsigned, unsigned> parents{{100, 1},   {200, 100}, {300, 200},
                                                    {210, 100}, {500, 1},   {600, 1}};
  static const std::map<unsigned, std::string> names{{100, "cudadiag"}, {200, "cudadiag"}, {500, "python3"}};
  selftest::ProcessTable table;
  table.parent = [](unsigned pid) -> std::optional<unsigned> {
    const auto found = parents.find(pid);
    return found == parents.end() ? std::nullopt : std::optional<unsigned>(found->second);
  };
  table.name = [](unsigned pid) {
    const auto found = names.find(pid);
    return found == names.end() ? std::string() : found->second;
  };
  return table;
}

selftest::ProcessListing busy_test_listing(std::vector<unsigned> pids) {
  selftest::ProcessListing listing;
  listing.known = true;
  for (const auto pid : pids) {
    listing.processes.push_back({pid, std::uint64_t{pid} << 20U, true, false, std::nullopt});
  }
  return listing;
}

selftest::TestResult busy_test_result(const std::string& key, double value, const std::string& metric,
                                      bool busy) {
  selftest::TestResult result;
  result.key = key;
  result.device = 0;
  result.status = cudadiag::selftest::TestStatus::pass;
  result.metrics = {{metric, value, "GB/s"}};
  if (busy) {
    result.busy =
        selftest::BusyFacts{true, "", {{500, "python3", std::uint64_t{10} << 30U, true, false}}, 93U};
  } else {
    result.busy = selftest::BusyFacts{true, "", {}, 0U};
  }
  return result;
}

std::vector<verify::Device> busy_test_devices() {
  verify::DriverDevice device;
  device.ordinal = 0;
  device.peak_bandwidth_gbps = selftest::k_reference_peak_gbps;
  return {{device, std::nullopt}};
}

} // namespace

TEST_CASE("gpu busy: this run's processes are its own, everyone else is named with their memory") {
  const auto table = busy_test_table();
  CHECK(selftest::in_session(100, 100, table));
  CHECK(selftest::in_session(300, 100, table)); // the ipc peer, below the worker
  CHECK(selftest::in_session(210, 100, table)); // another device's worker
  CHECK_FALSE(selftest::in_session(500, 100, table));
  CHECK_FALSE(selftest::in_session(999, 100, table)); // unreadable: not ours

  const auto facts =
      selftest::attribute_processes(busy_test_listing({100, 200, 210, 300, 500, 600}), 200, 100, table);
  CHECK(facts.known);
  CHECK(facts.busy());
  REQUIRE(facts.others.size() == 2);
  CHECK(facts.others[0].pid == 500);
  CHECK(facts.others[0].name == "python3");
  CHECK(facts.others[0].used_memory_bytes == std::uint64_t{500} << 20U);
  CHECK(facts.others[1].pid == 600);
  CHECK(facts.others[1].name.empty());

  const auto alone = selftest::attribute_processes(busy_test_listing({200, 300}), 200, 100, table);
  CHECK(alone.known);
  CHECK_FALSE(alone.busy());
}

TEST_CASE("gpu busy: under MIG only the worker's own GPU instance counts") {
  const auto table = busy_test_table();
  auto listing = busy_test_listing({200, 500, 600});
  listing.processes[0].gpu_instance = 1U; // the worker
  listing.processes[1].gpu_instance = 2U; // python3, in another instance
  listing.processes[2].gpu_instance = 1U; // 600, sharing the worker's instance
  const auto facts = selftest::attribute_processes(listing, 200, 100, table);
  REQUIRE(facts.others.size() == 1);
  CHECK(facts.others[0].pid == 600);
}

TEST_CASE("gpu busy: NOT_SUPPORTED, or pids of another namespace, are unknown, not idle") {
  const auto table = busy_test_table();
  selftest::ProcessListing unsupported;
  unsupported.unknown_reason = "nvmlDeviceGetComputeRunningProcesses_v3: NVML_ERROR_NOT_SUPPORTED";
  const auto unknown = selftest::attribute_processes(unsupported, 200, 100, table);
  CHECK_FALSE(unknown.known);
  CHECK_FALSE(unknown.busy());
  CHECK(unknown.unknown_reason == unsupported.unknown_reason);

  // A container without the host's PID namespace: NVML's pids are the host's, the worker is not among them.
  const auto foreign = selftest::attribute_processes(busy_test_listing({70001, 70002}), 200, 100, table);
  CHECK_FALSE(foreign.known);
  CHECK(testing::contains(foreign.unknown_reason, "another PID namespace"));
  CHECK_FALSE(selftest::attribute_processes(busy_test_listing({}), 200, 100, table).known);

  // Listings merge: a process seen once is seen; known when any listing was.
  selftest::BusyFacts merged = unknown;
  selftest::merge_busy(merged, selftest::attribute_processes(busy_test_listing({200, 500}), 200, 100, table));
  selftest::merge_busy(merged, selftest::attribute_processes(busy_test_listing({200, 600}), 200, 100, table));
  CHECK(merged.known);
  REQUIRE(merged.others.size() == 2);
  CHECK(merged.others[0].pid == 500);
  CHECK(merged.others[1].pid == 600);
}

TEST_CASE("gpu busy: /proc gives each pid's parent and name (comm with spaces and parentheses)") {
  const testing::TempTree tree;
  tree.write("proc/4242/stat", "4242 (my (odd) name) S 4000 4242 4242 0 -1 4194560 ...\n");
  tree.write("proc/4242/comm", "my (odd) name\n");
  tree.write("proc/4000/stat", "4000 (bash) S 1 4000 4000 0 -1 ...\n");
  const auto table = selftest::proc_process_table(tree.path("proc"));
  CHECK(table.parent(4242) == 4000U);
  CHECK(table.parent(4000) == 1U);
  CHECK_FALSE(table.parent(31337).has_value());
  CHECK(table.name(4242) == "my (odd) name");
  CHECK(table.name(31337).empty());
  CHECK(selftest::in_session(4242, 4000, table));
  // This process, read from the real /proc: its parent is the one getppid() gives.
  const auto real = selftest::proc_process_table();
  CHECK(real.parent(static_cast<unsigned>(::getpid())) == static_cast<unsigned>(::getppid()));
}

TEST_CASE("gpu busy: --context from the environment snapshot, and gpu.busy's severity in each context") {
  Environment env;
  CHECK(detect_run_context(env) == RunContext::interactive);
  env.set("CI", "true");
  CHECK(detect_run_context(env) == RunContext::ci);
  env.set("CI", "false");
  CHECK(detect_run_context(env) == RunContext::interactive);
  env.set("CI", "true");
  env.set("SLURM_JOB_ID", "4711");
  CHECK(detect_run_context(env) == RunContext::fleet); // fleet before ci
  env.unset("SLURM_JOB_ID");
  env.set("KUBERNETES_SERVICE_HOST", "10.96.0.1");
  CHECK(detect_run_context(env) == RunContext::fleet);
  for (const auto context : {RunContext::interactive, RunContext::ci, RunContext::fleet}) {
    CHECK(parse_run_context(run_context_name(context)) == context);
  }
  CHECK_FALSE(parse_run_context("batch"));

  CHECK(findings::gpu_busy_severity(RunContext::interactive, false) == findings::Severity::info);
  CHECK(findings::gpu_busy_severity(RunContext::ci, false) == findings::Severity::warning);
  CHECK(findings::gpu_busy_severity(RunContext::fleet, false) == findings::Severity::warning);
  for (const auto context : {RunContext::interactive, RunContext::ci, RunContext::fleet}) {
    CHECK(findings::gpu_busy_severity(context, true) == findings::Severity::error);
  }
}

TEST_CASE("gpu busy: figures taken while busy leave the score and are not blamed on the GPU") {
  selftest::SelfTestRun run;
  run.ran = true;
  run.level = selftest::Level::full;
  // The copy at 43% of expected while python3 ran, the reduce at 40% on an idle GPU.
  auto ptx = busy_test_result("ptx", 0.43 * 4260.0, "copy_gbps", true);
  ptx.clocks = selftest::ClockSummary{5,
                                      std::nullopt,
                                      std::nullopt,
                                      700.0,
                                      70U,
                                      std::vector<std::string>{"sw_power_cap"},
                                      std::vector<std::string>{"sw_power_cap"}};
  auto reduce = busy_test_result("reduce", 0.40 * 4620.0, "f32_gbps", false);
  run.tests = {ptx, reduce};
  run.score = selftest::score(run.tests, busy_test_devices(), run.level);
  REQUIRE(run.score.components.size() == 2);
  CHECK(run.score.components[0].busy);
  CHECK_FALSE(run.score.components[1].busy);
  CHECK(run.score.busy_excluded == 1);
  REQUIRE(run.score.value);
  CHECK(*run.score.value == doctest::Approx(40.0)); // the idle figure alone

  for (const auto context : {RunContext::interactive, RunContext::ci, RunContext::fleet}) {
    for (const bool exclusive : {false, true}) {
      run.context = context;
      run.exclusive = exclusive;
      const auto found = findings::evaluate_selftest(run);
      const auto* busy = testing::with_id(found, "gpu.busy");
      REQUIRE(busy != nullptr);
      CHECK(busy->severity == findings::gpu_busy_severity(context, exclusive));
      CHECK(testing::contains(busy->message, "pid 500 (python3) using 10240 MiB"));
      CHECK(testing::contains(busy->message, "ptx.copy_gbps 43%"));
      CHECK(testing::contains(busy->message, "sw_power_cap"));
      CHECK(busy->evidence.at("context") == std::string(run_context_name(context)));
      // The busy copy figure is not slowness or throttling of the GPU; the idle reduce is slow.
      std::size_t slow = 0;
      for (const auto& finding : found) {
        CHECK(finding.id != "gpu.throttled");
        if (finding.id == "selftest.slow") {
          ++slow;
          CHECK(testing::contains(finding.message, "reduce.f32_gbps"));
        }
      }
      CHECK(slow == 1);
    }
  }

  // The report's score object says which figures were left out.
  const auto json = report::score_to_json(run.score);
  CHECK(json.at("busy_excluded") == 1);
  CHECK(json.at("components").at(0).at("busy") == true);

  // An idle GPU, or one NVML could not describe, raises no gpu.busy.
  run.tests[0].busy = selftest::BusyFacts{false, "NVML_ERROR_NOT_SUPPORTED", {}, {}};
  run.score = selftest::score(run.tests, busy_test_devices(), run.level);
  CHECK(run.score.busy_excluded == 0);
  CHECK(testing::with_id(findings::evaluate_selftest(run), "gpu.busy") == nullptr);
}
