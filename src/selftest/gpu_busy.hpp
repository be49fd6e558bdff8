#pragma once
// Who else uses the GPU while the self-test runs. NVML lists the running compute and graphics
// processes on the device; cudadiag's own (the main process that started the workers, and every
// process below it: the workers, the ipc peer, a checkpoint target) are never "other". What is left
// is a BusyFacts per test (selftest/result_facts.hpp): the gpu.busy finding names those processes,
// and figures taken while they ran are not blamed on the GPU (findings/selftest_rules.cpp, the
// score). Where NVML cannot say (NOT_SUPPORTED, no _v3 entry point, or pids of another PID
// namespace: a container that does not share the host's), the answer is unknown, never idle.

#include "selftest/nvml_health.hpp"
#include "selftest/result_facts.hpp"

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace cudadiag::selftest {

// How a pid's parent and name are read: /proc by default; the tests pass a table of their own.
struct ProcessTable {
  std::function<std::optional<unsigned>(unsigned pid)> parent; // ppid; nullopt when unreadable
  std::function<std::string(unsigned pid)> name;               // comm; "" when unreadable
};
// /proc/PID/stat's ppid and /proc/PID/comm under `proc_root`.
ProcessTable proc_process_table(std::string proc_root = "/proc");

// Whether `pid` is `session` or below it (parents walked at most 64 steps; an unreadable parent ends
// the walk: not ours).
bool in_session(unsigned pid, unsigned session, const ProcessTable& table);

// The listing judged from inside a worker: `self` is the worker (it holds a context, so NVML must
// list it: when it does not, the pids are another namespace's and the answer is unknown), `session`
// the cudadiag process. The others are named with their memory; under MIG, only those in the
// worker's own GPU instance count (another instance has SMs and memory of its own).
BusyFacts attribute_processes(const ProcessListing& listing, unsigned self, unsigned session,
                              const ProcessTable& table);

// Lists the device's processes from construction until stop(), every `interval` on a thread of its
// own (the first listing at once, the last at stop()), and returns what all listings saw.
class BusySampler {
public:
  BusySampler(const NvmlDevice& device, unsigned self, unsigned session, ProcessTable table,
              std::chrono::milliseconds interval);
  ~BusySampler();
  BusySampler(const BusySampler&) = delete;
  BusySampler& operator=(const BusySampler&) = delete;
  BusyFacts stop();

private:
  void sample();
  const NvmlDevice& m_device;
  unsigned m_self, m_session;
  ProcessTable m_table;
  std::chrono::milliseconds m_interval;
  std::atomic<bool> m_stop{false};
  std::mutex m_lock;
  std::optional<BusyFacts> m_seen;
  std::thread m_thread;
};

} // namespace cudadiag::selftest
