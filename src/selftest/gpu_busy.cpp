#include "selftest/gpu_busy.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace cudadiag::selftest {

ProcessTable proc_process_table(std::string proc_root) {
  ProcessTable table;
  table.parent = [proc_root](unsigned pid) -> std::optional<unsigned> {
    std::ifstream in(proc_root + "/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(in, line)) {
      return std::nullopt;
    }
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses; it ends at the last ')'.
    const auto close = line.rfind(')');
    if (close == std::string::npos) {
      return std::nullopt;
    }
    std::istringstream rest(line.substr(close + 1));
    std::string state;
    long long ppid = -1;
    if (!(rest >> state >> ppid) || ppid < 0) {
      return std::nullopt;
    }
    return static_cast<unsigned>(ppid);
  };
  table.name = [proc_root](unsigned pid) {
    std::ifstream in(proc_root + "/" + std::to_string(pid) + "/comm");
    std::string name;
    std::getline(in, name);
    return name;
  };
  return table;
}

bool in_session(unsigned pid, unsigned session, const ProcessTable& table) {
  for (int step = 0; step < 64 && pid > 1; ++step) {
    if (pid == session) {
      return true;
    }
    const auto parent = table.parent(pid);
    if (!parent) {
      return false;
    }
    pid = *parent;
  }
  return pid == session;
}

BusyFacts attribute_processes(const ProcessListing& listing, unsigned self, unsigned session,
                              const ProcessTable& table) {
  BusyFacts facts;
  if (!listing.known) {
    facts.unknown_reason = listing.unknown_reason;
    return facts;
  }
  const bool lists_self = std::any_of(listing.processes.begin(), listing.processes.end(),
                                      [self](const NvmlProcess& p) { return p.pid == self; });
  if (!lists_self) {
    facts.unknown_reason =
        listing.processes.empty()
            ? "NVML lists no process on the GPU, not even this worker (its process list is not visible here)"
            : "NVML lists " + std::to_string(listing.processes.size()) +
                  " processes but not this worker: its pids are another PID namespace's (a container), so "
                  "which are cudadiag's cannot be told";
    return facts;
  }
  facts.known = true;
  // Under MIG, a process in another GPU instance has SMs and memory of its own: it is not sharing.
  const auto own = std::find_if(listing.processes.begin(), listing.processes.end(),
                                [self](const NvmlProcess& p) { return p.pid == self; });
  for (const auto& process : listing.processes) {
    if (process.pid == self || in_session(process.pid, session, table)) {
      continue;
    }
    if (own->gpu_instance && process.gpu_instance && *own->gpu_instance != *process.gpu_instance) {
      continue;
    }
    facts.others.push_back(GpuProcess{process.pid, table.name(process.pid), process.used_memory_bytes,
                                      process.compute, process.graphics});
  }
  return facts;
}

BusySampler::BusySampler(const NvmlDevice& device, unsigned self, unsigned session, ProcessTable table,
                         std::chrono::milliseconds interval)
    : m_device(device), m_self(self), m_session(session), m_table(std::move(table)), m_interval(interval) {
  sample();
  m_thread = std::thread([this] {
    while (true) {
      const auto wake = std::chrono::steady_clock::now() + m_interval;
      while (std::chrono::steady_clock::now() < wake) {
        if (m_stop.load()) {
          return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
      sample();
    }
  });
}

BusySampler::~BusySampler() {
  static_cast<void>(stop());
}

void BusySampler::sample() {
  auto facts = attribute_processes(m_device.processes(), m_self, m_session, m_table);
  const std::lock_guard lock(m_lock);
  if (!m_seen) {
    m_seen = std::move(facts);
  } else {
    merge_busy(*m_seen, facts);
  }
}

BusyFacts BusySampler::stop() {
  if (!m_stop.exchange(true) && m_thread.joinable()) {
    m_thread.join();
    sample(); // the last listing, as the test ends
  }
  const std::lock_guard lock(m_lock);
  return m_seen.value_or(BusyFacts{});
}

} // namespace cudadiag::selftest
