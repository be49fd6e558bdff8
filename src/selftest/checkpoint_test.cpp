// The checkpoint self-test: the driver's process checkpoint and restore (cuCheckpointProcess*, CUDA
// 12.8 / R570 and newer), proved on a second process. The selftest worker is the controller; the
// target is `cudadiag __worker checkpoint_target ...`, started fresh (nothing inherited across a
// fork: the driver fails a process that forked without exec). The target allocates device memory,
// fills it with a keyed pattern by kernel (kernels/ptx/memtest.ptx, seeded random), and reports its
// pid, pointer and context. The controller then, timing each call and checking the state after it:
//   GetState (running) -> Lock (timeoutMs; locked) -> Checkpoint (checkpointed) -> NVML: the target
//   holds no device memory -> Restore (locked) -> Unlock (running)
// and the target checks that its context and the pointer's context are unchanged, verifies the
// pattern by kernel, and writes and verifies another one (kernels launch again).
//
// Ending the target: a live restored CUDA context must not be torn down by a kill (a kill of one
// has hung whole hosts: NVIDIA/cuda-checkpoint#53, where suspending first avoids it). Whatever
// happened, the controller locks and checkpoints the target again before it ends (a target already
// checkpointed is left so), then tells it to exit; only a target that does not end within
// k_end_grace is killed (it hangs in the driver; nothing else can end it). A failed restore is never
// retried (after one, every later restore fails: NVIDIA/cuda-checkpoint#44). The target itself
// ends the same way when its controller is gone (its socket closes) or on SIGTERM (the session
// sweeps send it, worker/process.hpp term_grace): it locks and checkpoints itself, then exits.
//
// Knobs (the environment): CUDADIAG_CHECKPOINT_MIB (the target's memory, default 256),
// CUDADIAG_CHECKPOINT_LOCK_MS (the lock's timeoutMs, default 5000), CUDADIAG_CHECKPOINT_TARGET
// ("device", the default; "managed": the memory is managed (UVM), which the driver cannot checkpoint;
// "busy": a kernel spins for 10 s when the target reports ready, so a short lock times out).
//
// Socket protocol (SOCK_SEQPACKET, one JSON object per message):
//   target -> controller  {"op": "started", "pid"}  (before it loads the driver)
//   target -> controller  {"op": "ready", "ok": true, "pid", "pointer", "context", "bytes"}
//                         | {"op": "ready", "ok": false, "error", "code"}
//   controller -> target  {"op": "verify"} | {"op": "exit"}
//   target -> controller  {"op": "verified", "ok", "context_same", "pointer_context_same",
//                          "wrong_words", "first_wrong_index", "wrong_words_again", "verify_ms",
//                          "error", "code"}

#include "core/environment.hpp"
#include "core/text.hpp"
#include "core/unique_fd.hpp"
#include "selftest/selftest_codec.hpp"
#include "selftest/selftest_worker.hpp"
#include "selftest/test_context.hpp"
#include "worker/process.hpp"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <charconv>
#include <chrono>
#include <cstring>
#include <functional>
#include <future>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <thread>

namespace cudadiag::selftest {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr int k_target_socket_fd = 4;
constexpr std::size_t k_max_message = 65536;
constexpr std::uint64_t k_default_mib = 256;
constexpr unsigned k_default_lock_timeout_ms = 5000;
// The lock that parks a target before it ends waits this long for its submitted work.
constexpr unsigned k_park_lock_timeout_ms = 15000;
constexpr auto k_ready_timeout = std::chrono::seconds(60); // the target's cuInit, context and fill
// Kept before the test's deadline for parking and ending the target.
constexpr auto k_end_margin = std::chrono::seconds(25);
// How long a target told to exit may take before it is killed; and the SIGTERM grace of its step.
constexpr auto k_end_grace = std::chrono::seconds(10);
constexpr auto k_term_grace = std::chrono::seconds(20);
// A target that hears nothing for this long parks and ends itself.
constexpr auto k_target_idle_limit = std::chrono::seconds(900);
constexpr std::uint64_t k_busy_spin_ns = 10'000'000'000ULL; // "busy": one kernel spinning for 10 s
constexpr unsigned k_threads = 256;
constexpr std::size_t k_error_words = 65;       // memtest.cu: a count and 32 (index, values) records
constexpr unsigned long long k_random_mode = 2; // memtest.cu: hash(i, arg)

// --- messages ------------------------------------------------------------------------------------

void send_message(int socket, const Evidence& message) {
  const std::string text = encode_evidence(message);
  if (::send(socket, text.data(), text.size(), MSG_NOSIGNAL) < 0) {
    throw std::runtime_error(std::string("send: ") + std::strerror(errno));
  }
}

enum class Wait { message, closed, timeout, signal };

// Waits up to `timeout` for the next message on `socket` (or, when `signal_fd` >= 0, a signal there).
Wait wait_message(int socket, int signal_fd, milliseconds timeout, Evidence& message) {
  std::array<pollfd, 2> fds{pollfd{socket, POLLIN, 0}, pollfd{signal_fd, POLLIN, 0}};
  const auto until = Clock::now() + timeout;
  for (;;) {
    const auto left = std::chrono::duration_cast<milliseconds>(until - Clock::now()).count();
    if (left <= 0) {
      return Wait::timeout;
    }
    const int ready =
        ::poll(fds.data(), signal_fd >= 0 ? 2 : 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (ready < 0 && errno == EINTR) {
      continue;
    }
    if (ready <= 0) {
      continue;
    }
    if (signal_fd >= 0 && fds[1].revents != 0) {
      return Wait::signal;
    }
    std::string buffer(k_max_message, '\0');
    const auto got = ::recv(socket, buffer.data(), buffer.size(), 0);
    if (got <= 0) {
      return Wait::closed;
    }
    buffer.resize(static_cast<std::size_t>(got));
    auto decoded = decode_evidence(buffer);
    if (!decoded) {
      return Wait::closed; // an unreadable message: the other side is not believed any more
    }
    message = std::move(*decoded);
    return Wait::message;
  }
}

std::string text_field(const Evidence& message, std::string_view name) {
  const auto* text = message.string(name);
  return text != nullptr ? *text : std::string();
}
std::optional<std::int64_t> integer_field(const Evidence& message, std::string_view name) {
  const auto* value = message.find(name);
  return value != nullptr ? value->integer() : std::nullopt;
}
bool flag_field(const Evidence& message, std::string_view name) {
  const auto* value = message.find(name);
  return value != nullptr && value->boolean() != nullptr && *value->boolean();
}

std::string hex_pointer(std::uint64_t value) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

std::string_view state_name(cu::CUprocessState state) {
  switch (state) {
  case cu::CU_PROCESS_STATE_RUNNING: return "running";
  case cu::CU_PROCESS_STATE_LOCKED: return "locked";
  case cu::CU_PROCESS_STATE_CHECKPOINTED: return "checkpointed";
  case cu::CU_PROCESS_STATE_FAILED: return "failed";
  }
  return "unknown";
}

std::uint64_t env_number(const Environment& env, std::string_view name, std::uint64_t fallback,
                         std::uint64_t low, std::uint64_t high) {
  const auto text = env.non_empty(name);
  std::uint64_t value = 0;
  if (!text) {
    return fallback;
  }
  const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), value);
  return error == std::errc{} && end == text->data() + text->size() && value >= low && value <= high
             ? value
             : fallback;
}

// Locks (when running) and checkpoints `pid`, so that it can end without tearing down a live
// context. Returns what was done: {"state_before", "lock", "checkpoint", "state_after", "ms"}.
Evidence park(const Gpu& gpu, int pid) {
  const auto& api = gpu.api();
  const auto started = Clock::now();
  Evidence done;
  cu::CUprocessState state = cu::CU_PROCESS_STATE_FAILED;
  const auto got = api.checkpoint_get_state(pid, &state);
  done["state_before"] = got == cu::CUDA_SUCCESS ? std::string(state_name(state)) : gpu.error_name(got);
  if (got == cu::CUDA_SUCCESS && state == cu::CU_PROCESS_STATE_RUNNING) {
    cu::CUcheckpointLockArgs args{};
    args.timeoutMs = k_park_lock_timeout_ms;
    const auto locked = api.checkpoint_lock(pid, &args);
    done["lock"] = gpu.error_name(locked);
    state = locked == cu::CUDA_SUCCESS ? cu::CU_PROCESS_STATE_LOCKED : state;
  }
  if (got == cu::CUDA_SUCCESS && state == cu::CU_PROCESS_STATE_LOCKED) {
    const auto saved = api.checkpoint_checkpoint(pid, nullptr);
    done["checkpoint"] = gpu.error_name(saved);
  }
  cu::CUprocessState after = cu::CU_PROCESS_STATE_FAILED;
  done["state_after"] = api.checkpoint_get_state(pid, &after) == cu::CUDA_SUCCESS
                            ? EvidenceValue(std::string(state_name(after)))
                            : EvidenceValue();
  done["ms"] = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
  return done;
}

bool parked(const Evidence& park_record) {
  const auto* after = park_record.string("state_after");
  return after != nullptr && *after == "checkpointed";
}

// --- the target -----------------------------------------------------------------------------------

// Device memory of either kind, freed on destruction.
class TargetMemory {
public:
  TargetMemory(const Gpu& gpu, std::size_t bytes, bool managed) : m_gpu(gpu) {
    if (managed) {
      gpu.require(gpu.api().mem_alloc_managed, "cuMemAllocManaged");
      gpu.check(gpu.api().mem_alloc_managed(&m_pointer, bytes, cu::k_mem_attach_global), "cuMemAllocManaged");
    } else {
      gpu.check(gpu.api().mem_alloc(&m_pointer, bytes), "cuMemAlloc (" + std::to_string(bytes) + " bytes)");
    }
  }
  ~TargetMemory() { static_cast<void>(m_gpu.api().mem_free(m_pointer)); }
  TargetMemory(const TargetMemory&) = delete;
  TargetMemory& operator=(const TargetMemory&) = delete;
  [[nodiscard]] cu::CUdeviceptr get() const { return m_pointer; }

private:
  const Gpu& m_gpu;
  cu::CUdeviceptr m_pointer = 0;
};

struct TargetState {
  const Gpu& gpu;
  cu::CUcontext context;
  const Stream& stream;
  cu::CUfunction fill, check;
  cu::CUdeviceptr pointer;
  unsigned long long elements;
  std::uint64_t seed;
  cu::CUdeviceptr errors;
  unsigned blocks;
};

// What the target holds on the GPU (run_checkpoint_target never destroys it).
struct TargetResources {
  std::optional<PrimaryContext> context;
  std::optional<Stream> stream;
  std::optional<Module> memtest;
  std::optional<Module> smid;
  std::optional<TargetMemory> memory;
  std::optional<DeviceBuffer> errors;
  std::optional<DeviceBuffer> bitmap;
  std::optional<TargetState> state;
};

// Writes the pattern `seed` and checks it: {wrong words, the first wrong index}.
std::pair<std::uint64_t, std::optional<std::uint64_t>> check_pattern(const TargetState& t, std::uint64_t seed,
                                                                     bool write_first) {
  auto pointer = t.pointer;
  auto elements = t.elements;
  auto mode = k_random_mode;
  auto arg = static_cast<unsigned long long>(seed);
  auto errors = t.errors;
  if (write_first) {
    t.gpu.launch(t.fill, t.blocks, k_threads, t.stream.get(), {&pointer, &elements, &mode, &arg});
  }
  t.stream.fill_u32(t.errors, 0, k_error_words * 2);
  t.gpu.launch(t.check, t.blocks, k_threads, t.stream.get(), {&pointer, &elements, &mode, &arg, &errors});
  std::array<std::uint64_t, k_error_words> words{};
  t.stream.download(words.data(), t.errors, sizeof words);
  return {words[0], words[0] > 0 ? std::optional(words[1]) : std::nullopt};
}

Evidence verify_target(const TargetState& t) {
  const auto& api = t.gpu.api();
  const auto started = Clock::now();
  Evidence reply = {{"op", "verified"}};
  try {
    t.gpu.require(api.ctx_get_current, "cuCtxGetCurrent");
    t.gpu.require(api.pointer_get_attribute, "cuPointerGetAttribute");
    cu::CUcontext current = nullptr;
    t.gpu.check(api.ctx_get_current(&current), "cuCtxGetCurrent");
    cu::CUcontext owner = nullptr;
    t.gpu.check(api.pointer_get_attribute(&owner, cu::CU_POINTER_ATTRIBUTE_CONTEXT, t.pointer),
                "cuPointerGetAttribute(CONTEXT)");
    reply["context_same"] = current == t.context;
    reply["pointer_context_same"] = owner == t.context;
    const auto [wrong, first] = check_pattern(t, t.seed, false);
    reply["wrong_words"] = wrong;
    reply["first_wrong_index"] = first;
    // Once more: a new pattern written and checked proves that kernels run after the restore.
    const auto [again, unused] = check_pattern(t, t.seed + 1, true);
    reply["wrong_words_again"] = again;
    reply["ok"] = true;
  } catch (const CudaFailure& failure) {
    reply["ok"] = false;
    reply["error"] = failure.what();
    reply["code"] = static_cast<int>(failure.code());
  }
  reply["verify_ms"] = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
  return reply;
}

} // namespace

Evidence run_checkpoint_target(const std::string& libcuda_path, const std::string& ordinal_text,
                               const std::string& bytes_text, const std::string& seed_text,
                               const std::string& mode) {
  // Never killed by its parent's death (a kill can hang the host once restored): it notices the
  // socket closing instead, and parks and ends itself. SIGTERM is read from a descriptor, so that it
  // is handled between CUDA calls, never inside one; blocked before the driver starts its threads.
  ::prctl(PR_SET_PDEATHSIG, 0);
  sigset_t term;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  ::pthread_sigmask(SIG_BLOCK, &term, nullptr);
  const UniqueFd signals(::signalfd(-1, &term, SFD_CLOEXEC));
  const int socket = k_target_socket_fd;

  Evidence summary = {{"mode", mode}};
  try { // first, so that the controller can always end it
    send_message(socket, {{"op", "started"}, {"pid", static_cast<int>(::getpid())}});
  } catch (const std::exception& failure) {
    summary["error"] = failure.what();
    return summary;
  }
  const int ordinal = std::atoi(ordinal_text.c_str());
  const auto bytes = static_cast<std::size_t>(std::strtoull(bytes_text.c_str(), nullptr, 10)) / 16 * 16;
  const auto seed = static_cast<std::uint64_t>(std::strtoull(seed_text.c_str(), nullptr, 10));
  std::optional<cu::CUresult> init;
  auto loaded = Gpu::load(libcuda_path, init);
  const auto gpu = loaded ? std::move(*loaded) : nullptr;
  const auto fail_ready = [&](const std::string& why, std::optional<int> code) {
    summary["error"] = why;
    try {
      send_message(socket, {{"op", "ready"}, {"ok", false}, {"error", why}, {"code", code}});
    } catch (const std::exception&) { // the controller has gone
    }
    return summary;
  };
  if (!gpu || bytes == 0) {
    return fail_ready(gpu ? "no memory size" : loaded.error().message,
                      init ? std::optional<int>(*init) : std::nullopt);
  }
  const auto& api = gpu->api();
  // Never destroyed: the target ends checkpointed (or hung), where any CUDA call - a free, a stream
  // or context release - would block; the process's end releases them (the worker ends with _exit).
  auto& held = *new TargetResources();
  auto& context = held.context;
  auto& stream = held.stream;
  auto& memtest = held.memtest;
  auto& smid = held.smid;
  auto& memory = held.memory;
  auto& errors = held.errors;
  auto& bitmap = held.bitmap;
  auto& state = held.state;
  try {
    cu::CUdevice device = 0;
    gpu->check(api.device_get(&device, ordinal), "cuDeviceGet");
    context.emplace(*gpu, device);
    stream.emplace(*gpu);
    memtest.emplace(*gpu, k_memtest_ptx);
    memory.emplace(*gpu, bytes, mode == "managed");
    errors.emplace(*gpu, k_error_words * sizeof(std::uint64_t));
    const unsigned blocks =
        static_cast<unsigned>(gpu->attribute(device, cu::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)) * 4;
    state.emplace(TargetState{*gpu, context->get(), *stream, memtest->function("cudadiag_mem_fill"),
                              memtest->function("cudadiag_mem_check"), memory->get(), bytes / 16, seed,
                              errors->get(), blocks});
    auto pointer = memory->get();
    auto elements = static_cast<unsigned long long>(bytes / 16);
    auto pattern_mode = k_random_mode;
    auto arg = static_cast<unsigned long long>(seed);
    gpu->launch(state->fill, blocks, k_threads, stream->get(), {&pointer, &elements, &pattern_mode, &arg});
    stream->synchronize();
    if (mode == "busy") {
      smid.emplace(*gpu, k_smid_ptx);
      bitmap.emplace(*gpu, 4096);
      stream->fill_u32(bitmap->get(), 0, 1024);
      auto words = bitmap->get();
      auto spin = static_cast<unsigned long long>(k_busy_spin_ns);
      gpu->launch(smid->function("cudadiag_smid_probe"), 1, 32, stream->get(), {&words, &spin});
    }
  } catch (const CudaFailure& failure) {
    return fail_ready(failure.what(), static_cast<int>(failure.code()));
  }
  send_message(socket, {{"op", "ready"},
                        {"ok", true},
                        {"pid", static_cast<int>(::getpid())},
                        {"pointer", hex_pointer(memory->get())},
                        {"context", hex_pointer(reinterpret_cast<std::uintptr_t>(context->get()))},
                        {"bytes", bytes}});
  Evidence::List answered;
  for (;;) {
    Evidence message;
    const auto waited = wait_message(socket, signals.get(), k_target_idle_limit, message);
    if (waited == Wait::message && text_field(message, "op") == "verify") {
      auto reply = verify_target(*state);
      answered.push_back(reply);
      try {
        send_message(socket, reply);
      } catch (const std::exception&) { // gone: the next wait says so
      }
      continue;
    }
    summary["verified"] = std::move(answered);
    if (waited == Wait::message && text_field(message, "op") == "exit") {
      summary["ended"] = "told to exit";
      return summary; // the controller parked it first, or could not
    }
    summary["ended"] = waited == Wait::signal    ? "SIGTERM"
                       : waited == Wait::timeout ? "no message within the idle limit"
                                                 : "the controller's socket closed";
    summary["park"] = park(*gpu, static_cast<int>(::getpid()));
    return summary;
  }
}

namespace {

// --- the controller -------------------------------------------------------------------------------

struct Cycle {
  const Gpu& gpu;
  TestResult& result;
  CheckpointFacts& facts;
  Evidence::List steps;
  int pid = 0;
  double checkpoint_ms = 0, restore_ms = 0;

  // Records a failure (or lack of support) at `step` and returns false.
  bool stop(CheckpointOutcome outcome, std::string step, std::optional<cu::CUresult> code,
            std::string detail) {
    facts.outcome = outcome;
    facts.step = std::move(step);
    if (code) {
      facts.code = static_cast<int>(*code);
      facts.driver_words = gpu.error_text(*code);
    }
    facts.detail = std::move(detail);
    return false;
  }

  std::string code_text(cu::CUresult code) const {
    const auto words = gpu.error_text(code);
    return gpu.error_name(code) + " (" + std::to_string(static_cast<int>(code)) + ")" +
           (words.empty() ? "" : ": \"" + words + "\"");
  }

  // One timed driver call on the target and the state check after it.
  bool step(std::string_view name, const std::function<cu::CUresult()>& call, cu::CUprocessState expected) {
    const auto started = Clock::now();
    const auto code = call();
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
    cu::CUprocessState state = cu::CU_PROCESS_STATE_FAILED;
    const auto read = gpu.api().checkpoint_get_state(pid, &state);
    const auto state_text =
        read == cu::CUDA_SUCCESS ? EvidenceValue(std::string(state_name(state))) : EvidenceValue();
    steps.push_back(
        {{"step", name}, {"ms", ms}, {"result", gpu.error_name(code)}, {"state_after", state_text}});
    if (code == cu::CUDA_SUCCESS) {
      add_metric(result, std::string(name) + "_ms", ms, "ms");
    }
    // Not supported before the lock succeeded: the driver cannot checkpoint here. After it: the driver
    // can, and refuses what the process holds (UVM or IPC memory, MIG, MPS): a failure of the cycle.
    if (code == cu::CUDA_ERROR_NOT_SUPPORTED && (name == "checkpoint" || name == "restore")) {
      return stop(CheckpointOutcome::failed, std::string(name), code,
                  std::string(name) + " returned " + code_text(code) +
                      " after the lock succeeded: the process holds what the driver cannot checkpoint "
                      "(managed/UVM memory, IPC memory, MIG, MPS)");
    }
    if (code == cu::CUDA_ERROR_NOT_SUPPORTED) {
      return stop(CheckpointOutcome::unsupported, std::string(name), code,
                  "cuCheckpointProcess " + std::string(name) + " returned " + code_text(code) +
                      ": this driver or runtime (a sandbox, MIG, MPS) does not checkpoint processes here");
    }
    if (code != cu::CUDA_SUCCESS) {
      std::string detail = std::string(name) + " returned " + code_text(code) + " after " +
                           std::to_string(static_cast<long long>(ms)) + " ms";
      // A lock whose timeoutMs passes: CUDA_ERROR_NOT_READY from driver 580 (measured on the H200,
      // docs/examples/checkpoint/h200-summary.json); CUDA_ERROR_TIMEOUT is what its name suggests.
      if (name == "lock" && (code == cu::CUDA_ERROR_NOT_READY || code == cu::CUDA_ERROR_TIMEOUT ||
                             ms >= 0.9 * lock_timeout_ms)) {
        detail += ": the target's submitted work did not finish within the lock's timeoutMs " +
                  std::to_string(lock_timeout_ms);
      }
      if (code == cu::CUDA_ERROR_NOT_PERMITTED) {
        detail += ": persistence mode off, or not allowed to act on the process (root or ptrace rights)";
      }
      if (name == "restore") {
        detail += "; not retried (after a failed restore the process is unrecoverable)";
      }
      return stop(CheckpointOutcome::failed, std::string(name), code, detail);
    }
    if (read != cu::CUDA_SUCCESS || state != expected) {
      return stop(CheckpointOutcome::failed, std::string(name),
                  read != cu::CUDA_SUCCESS ? std::optional(read) : std::nullopt,
                  std::string(name) + " succeeded but the target's state is " +
                      (read == cu::CUDA_SUCCESS ? std::string(state_name(state)) : code_text(read)) +
                      ", expected " + std::string(state_name(expected)));
    }
    if (name == "checkpoint") {
      checkpoint_ms = ms;
    } else if (name == "restore") {
      restore_ms = ms;
    }
    return true;
  }

  unsigned lock_timeout_ms = k_default_lock_timeout_ms;
};

std::string version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

} // namespace

TestResult run_checkpoint(const TestContext& context) {
  if (context.gpu == nullptr || !context.device) {
    return without_gpu(context);
  }
  if (context.config.level == Level::quick && !context.config.tests_named) {
    return skipped(context, "runs at --level full, or when named (--only checkpoint): it takes seconds and "
                            "suspends a second process's GPU state");
  }
  const Gpu& gpu = *context.gpu;
  const auto& api = gpu.api();
  auto result = new_result(context);
  CheckpointFacts facts;
  facts.driver_version = gpu.driver_version();
  if (context.nvml != nullptr) {
    facts.persistence_mode = context.nvml->persistence_mode();
  }
  const auto finish = [&]() -> TestResult {
    if (facts.outcome == CheckpointOutcome::restored) {
      result.status = TestStatus::pass;
    } else if (facts.outcome == CheckpointOutcome::unsupported) {
      result.status = TestStatus::skip;
      result.reason = facts.detail;
    } else {
      result.status = TestStatus::fail;
      result.reason =
          (facts.outcome == CheckpointOutcome::corrupt ? "wrong after restore: " : "") + facts.detail;
    }
    result.checkpoint = facts;
    return result;
  };
  // The gate: CUDA 12.8 (R570) and all six entry points, through the one driver resolver.
  if (gpu.driver_version() < cu::k_checkpoint_version) {
    facts.outcome = CheckpointOutcome::unsupported;
    facts.step = "gate";
    facts.detail = "the driver supports CUDA " + version_text(gpu.driver_version()) +
                   "; process checkpoint and restore need CUDA 12.8 (driver R570) or newer";
    return finish();
  }
  std::vector<std::string> missing;
  const std::array<std::pair<const char*, bool>, 6> entries{{
      {"cuCheckpointProcessGetState", api.checkpoint_get_state != nullptr},
      {"cuCheckpointProcessLock", api.checkpoint_lock != nullptr},
      {"cuCheckpointProcessCheckpoint", api.checkpoint_checkpoint != nullptr},
      {"cuCheckpointProcessRestore", api.checkpoint_restore != nullptr},
      {"cuCheckpointProcessUnlock", api.checkpoint_unlock != nullptr},
      {"cuCheckpointProcessGetRestoreThreadId", api.checkpoint_get_restore_thread_id != nullptr},
  }};
  for (const auto& [name, found] : entries) {
    if (!found) {
      missing.emplace_back(name);
    }
  }
  if (!missing.empty()) {
    facts.outcome = CheckpointOutcome::unsupported;
    facts.step = "gate";
    facts.detail = "the driver (CUDA " + version_text(gpu.driver_version()) + ") does not export " +
                   join(missing, ", ") +
                   "; process checkpoint and restore need driver R570 (CUDA 12.8) or newer";
    return finish();
  }
  if (context.config.executable.empty()) {
    return skipped(context, "no cudadiag executable to start the target process with");
  }

  const auto env = Environment::capture();
  const auto mib = env_number(env, "CUDADIAG_CHECKPOINT_MIB", k_default_mib, 1, std::uint64_t{1} << 20U);
  const auto bytes = static_cast<std::size_t>(mib << 20U);
  const auto mode = env.non_empty("CUDADIAG_CHECKPOINT_TARGET").value_or("device");
  Cycle cycle{gpu, result, facts, {}, 0, 0, 0};
  cycle.lock_timeout_ms = static_cast<unsigned>(
      env_number(env, "CUDADIAG_CHECKPOINT_LOCK_MS", k_default_lock_timeout_ms, 1, 600'000));
  result.details["target"] = {{"bytes", bytes}, {"mode", mode}, {"lock_timeout_ms", cycle.lock_timeout_ms}};

  auto sockets = seqpacket_pair();
  if (!sockets) {
    return errored(std::move(result), sockets.error().message);
  }
  auto [ours, theirs] = std::move(sockets).value();
  // The controller's own bound: the test's deadline less the time parking and ending the target take.
  const auto now = Clock::now();
  const auto deadline =
      context.deadline - k_end_margin > now ? context.deadline - k_end_margin : now + std::chrono::seconds(5);
  const auto left = [&deadline] {
    return std::max(milliseconds(1), std::chrono::duration_cast<milliseconds>(deadline - Clock::now()));
  };
  const auto seed = static_cast<std::uint64_t>(Clock::now().time_since_epoch().count()) & 0xffffffffULL;
  worker::WorkerStep step{
      "checkpoint_target",
      "checkpoint_target",
      context.config.libcuda,
      {std::to_string(context.device->ordinal), std::to_string(bytes), std::to_string(seed), mode},
      theirs.get(),
      k_term_grace};
  worker::WorkerOptions options;
  options.executable = context.config.executable;
  options.step_timeout = left() + k_end_grace;
  // The driver copies the target's device memory into the target's own host memory at checkpoint.
  if (const auto limit = worker::memory_limit_mb(env); limit > 0) {
    options.memory_limit_mb = limit + 2 * mib;
  }
  auto target = std::async(std::launch::async, [&] { return worker::run_steps({step}, options, env); });

  Evidence ready;
  const auto ready_until = Clock::now() + std::min(left(), milliseconds(k_ready_timeout));
  auto waited = Wait::timeout;
  int started_pid = 0;
  for (;;) {
    waited = wait_message(
        ours.get(), -1,
        std::max(milliseconds(1), std::chrono::duration_cast<milliseconds>(ready_until - Clock::now())),
        ready);
    if (waited == Wait::message && text_field(ready, "op") == "started") {
      started_pid = static_cast<int>(integer_field(ready, "pid").value_or(0));
      theirs.reset(); // the target has its end: a closed socket now means it has gone
      continue;
    }
    break;
  }
  theirs.reset();
  bool ran = false;
  if (waited != Wait::message || text_field(ready, "op") != "ready") {
    cycle.stop(CheckpointOutcome::failed, "target", std::nullopt,
               waited == Wait::timeout
                   ? "the target process did not report ready in time (its cuInit, context "
                     "and memory fill hang)"
                   : "the target process ended before it was ready");
  } else if (!flag_field(ready, "ok")) {
    const auto code = integer_field(ready, "code");
    cycle.stop(CheckpointOutcome::failed, "target",
               code ? std::optional(static_cast<cu::CUresult>(*code)) : std::nullopt,
               "the target process could not prepare its memory: " + text_field(ready, "error"));
  } else {
    cycle.pid = static_cast<int>(integer_field(ready, "pid").value_or(0));
    result.details["target"]["pid"] = cycle.pid;
    result.details["target"]["pointer"] = text_field(ready, "pointer");
    ran = true;
  }

  const int pid = cycle.pid;
  bool restored = false;
  if (ran) {
    cu::CUprocessState first = cu::CU_PROCESS_STATE_FAILED;
    ran = cycle.step(
        "get_state", [&] { return api.checkpoint_get_state(pid, &first); }, cu::CU_PROCESS_STATE_RUNNING);
    if (ran) {
      cu::CUcheckpointLockArgs args{};
      args.timeoutMs = cycle.lock_timeout_ms;
      ran = cycle.step(
                "lock", [&] { return api.checkpoint_lock(pid, &args); }, cu::CU_PROCESS_STATE_LOCKED) &&
            cycle.step(
                "checkpoint", [&] { return api.checkpoint_checkpoint(pid, nullptr); },
                cu::CU_PROCESS_STATE_CHECKPOINTED);
    }
    if (ran && context.nvml != nullptr) {
      // Checkpointed: the target must hold no device memory now (else the GPU was not released).
      const auto listing = context.nvml->processes();
      Evidence release = {{"known", listing.known}};
      if (listing.known) {
        // Listed with memory: not released. Listed without a figure (NVML_VALUE_NOT_AVAILABLE): unknown.
        std::uint64_t held = 0;
        for (const auto& process : listing.processes) {
          if (static_cast<int>(process.pid) == pid) {
            release["listed"] = true;
            held = std::max<std::uint64_t>(held, process.used_memory_bytes.value_or(0));
          }
        }
        release["held_bytes"] = held;
        if (held > 0) {
          ran =
              cycle.stop(CheckpointOutcome::failed, "release", std::nullopt,
                         "checkpoint succeeded but NVML still lists the target with " +
                             std::to_string(held >> 20U) + " MiB of device memory: the GPU was not released");
        }
      } else {
        release["unknown_reason"] = listing.unknown_reason;
      }
      result.details["release"] = release;
    }
    if (ran) {
      ran =
          cycle.step(
              "restore", [&] { return api.checkpoint_restore(pid, nullptr); }, cu::CU_PROCESS_STATE_LOCKED) &&
          cycle.step(
              "unlock", [&] { return api.checkpoint_unlock(pid, nullptr); }, cu::CU_PROCESS_STATE_RUNNING);
      restored = ran;
    }
    if (restored) {
      Evidence reply;
      send_message(ours.get(), {{"op", "verify"}});
      const auto answer = wait_message(ours.get(), -1, left(), reply);
      if (answer != Wait::message) {
        cycle.stop(CheckpointOutcome::failed, "verify", std::nullopt,
                   answer == Wait::timeout
                       ? "the restored target did not answer within the test's time bound (it hangs)"
                       : "the restored target ended before it answered");
      } else {
        result.details["verify"] = reply;
        const auto code = integer_field(reply, "code");
        const auto wrong = integer_field(reply, "wrong_words").value_or(0);
        const auto again = integer_field(reply, "wrong_words_again").value_or(0);
        if (const auto verify_ms = reply.find("verify_ms"); verify_ms != nullptr && verify_ms->number()) {
          add_metric(result, "verify_ms", *verify_ms->number(), "ms");
        }
        if (!flag_field(reply, "ok")) {
          cycle.stop(CheckpointOutcome::corrupt, "verify",
                     code ? std::optional(static_cast<cu::CUresult>(*code)) : std::nullopt,
                     "the restored context failed: " + text_field(reply, "error"));
        } else if (!flag_field(reply, "context_same") || !flag_field(reply, "pointer_context_same")) {
          cycle.stop(CheckpointOutcome::corrupt, "verify", std::nullopt,
                     "the target's context changed across checkpoint and restore (current context same: " +
                         std::string(flag_field(reply, "context_same") ? "yes" : "no") +
                         ", the pointer's context same: " +
                         (flag_field(reply, "pointer_context_same") ? "yes" : "no") + ")");
        } else if (wrong > 0) {
          cycle.stop(CheckpointOutcome::corrupt, "verify", std::nullopt,
                     std::to_string(wrong) + " of " + std::to_string(bytes / 4) +
                         " words differ after restore (first at word " +
                         std::to_string(integer_field(reply, "first_wrong_index").value_or(0)) + ")");
        } else if (again > 0) {
          cycle.stop(CheckpointOutcome::corrupt, "verify", std::nullopt,
                     "a kernel launched after restore wrote " + std::to_string(again) + " wrong words");
        } else {
          facts.outcome = CheckpointOutcome::restored;
        }
      }
    }
  }

  // Ending the target: parked (locked and checkpointed) first, whatever happened; killed only when
  // it does not end after that.
  Evidence ending;
  if (pid > 0) {
    ending["park"] = park(gpu, pid);
    facts.target_ended_checkpointed = parked(*ending["park"].record());
    if (const auto ms = ending["park"].record()->find("ms"); ms != nullptr && ms->number()) {
      add_metric(result, "park_ms", *ms->number(), "ms");
    }
  }
  try {
    send_message(ours.get(), {{"op", "exit"}});
  } catch (const std::exception&) { // it has gone already
  }
  // It did not end after parking (it hangs inside the driver), or never got as far as a context.
  if (const int known = pid > 0 ? pid : started_pid;
      target.wait_for(k_end_grace) != std::future_status::ready && known > 0) {
    ::kill(known, SIGKILL);
    ending["killed"] = true;
  }
  const auto outcomes = target.get();
  const auto& outcome = outcomes.front();
  ending["status"] = std::string(worker::to_string(outcome.status));
  ending["detail"] = outcome.detail;
  ending["result"] = decode_evidence(outcome.result);
  result.details["end"] = ending;
  result.details["steps"] = std::move(cycle.steps);

  if (facts.outcome == CheckpointOutcome::restored || cycle.checkpoint_ms > 0) {
    const double gib = static_cast<double>(bytes) / static_cast<double>(1ULL << 30U);
    if (cycle.checkpoint_ms > 0) {
      add_metric(result, "checkpoint_gibps", gib / (cycle.checkpoint_ms / 1e3), "GiB/s");
    }
    if (cycle.restore_ms > 0) {
      add_metric(result, "restore_gibps", gib / (cycle.restore_ms / 1e3), "GiB/s");
      add_metric(result, "checkpoint_restore_gibps",
                 2 * gib / ((cycle.checkpoint_ms + cycle.restore_ms) / 1e3), "GiB/s", true);
    }
  }
  return finish();
}

} // namespace cudadiag::selftest
