// The ipc self-test: device memory shared with a second process (`cudadiag __worker ipc_peer`,
// started fresh: a child forked after cuInit may not use CUDA). Two paths:
//   legacy  cuIpcGetMemHandle -> 64-byte handle over the socket -> cuIpcOpenMemHandle in the peer
//   vmm     cuMemCreate(POSIX fd) -> cuMemExportToShareableHandle -> the fd over the socket with
//           SCM_RIGHTS -> cuMemImportFromShareableHandle + cuMemMap in the peer
// Each time the exporter writes a pattern, the peer verifies it and writes another, and the
// exporter verifies that. An unsupported path is a skip with its CUresult, not a failure. With more
// than one GPU, peer access between this device and each other one is checked with cuMemcpyPeer.
//
// Socket protocol (SOCK_SEQPACKET, one JSON object per message):
//   exporter -> peer  {"op": "legacy", "handle": HEX, "bytes": N, "seed": S, "uuid": U}
//                     {"op": "vmm", "bytes": N, "seed": S, "uuid": U}  + the fd (SCM_RIGHTS)
//                     {"op": "done"}
//   peer -> exporter  {"ok": true, "seed": S2} | {"ok": false, "error": TEXT, "code": CUresult|null}

#include "core/environment.hpp"
#include "core/text.hpp"
#include "core/unique_fd.hpp"
#include "selftest/selftest_codec.hpp"
#include "selftest/selftest_worker.hpp"
#include "selftest/test_context.hpp"
#include "worker/process.hpp"

#include <poll.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstring>
#include <future>
#include <sys/socket.h>

namespace cudadiag::selftest {
namespace {

constexpr int k_peer_socket_fd = 4; // where the peer finds its end of the socket
constexpr std::size_t k_max_message = 65536;
constexpr auto k_message_timeout = std::chrono::seconds(20);

void send_message(int socket, const Evidence& message, int pass_fd = -1) {
  const std::string text = encode_evidence(message);
  iovec io{const_cast<char*>(text.data()), text.size()};
  msghdr header{};
  header.msg_iov = &io;
  header.msg_iovlen = 1;
  std::array<char, CMSG_SPACE(sizeof(int))> control{};
  if (pass_fd >= 0) {
    header.msg_control = control.data();
    header.msg_controllen = control.size();
    cmsghdr* cmsg = CMSG_FIRSTHDR(&header);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(cmsg), &pass_fd, sizeof(int));
  }
  if (::sendmsg(socket, &header, MSG_NOSIGNAL) < 0) {
    throw std::runtime_error(std::string("sendmsg: ") + std::strerror(errno));
  }
}

// The next message (and a passed fd in `received_fd`, else -1); throws on timeout or a closed peer.
Evidence receive_message(int socket, int& received_fd) {
  received_fd = -1;
  pollfd wait{socket, POLLIN, 0};
  const int ready = ::poll(&wait, 1, static_cast<int>(std::chrono::milliseconds(k_message_timeout).count()));
  if (ready <= 0) {
    throw std::runtime_error("no answer from the other process within 20 s");
  }
  std::string buffer(k_max_message, '\0');
  iovec io{buffer.data(), buffer.size()};
  std::array<char, CMSG_SPACE(sizeof(int))> control{};
  msghdr header{};
  header.msg_iov = &io;
  header.msg_iovlen = 1;
  header.msg_control = control.data();
  header.msg_controllen = control.size();
  const auto got = ::recvmsg(socket, &header, MSG_CMSG_CLOEXEC);
  if (got <= 0) {
    throw std::runtime_error(got == 0 ? "the other process closed the socket"
                                      : std::string("recvmsg: ") + std::strerror(errno));
  }
  for (cmsghdr* cmsg = CMSG_FIRSTHDR(&header); cmsg != nullptr; cmsg = CMSG_NXTHDR(&header, cmsg)) {
    if (cmsg->cmsg_level == SOL_SOCKET && cmsg->cmsg_type == SCM_RIGHTS) {
      std::memcpy(&received_fd, CMSG_DATA(cmsg), sizeof(int));
    }
  }
  buffer.resize(static_cast<std::size_t>(got));
  auto message = decode_evidence(buffer);
  if (!message) {
    throw std::runtime_error("an unreadable message from the other process");
  }
  return std::move(*message);
}

std::uint32_t seeded_word(std::uint32_t seed, std::size_t index) {
  return (static_cast<std::uint32_t>(index) * 2654435761U) ^ (seed * 0x01000193U);
}

void write_pattern(const Gpu& gpu, cu::CUdeviceptr pointer, std::size_t bytes, std::uint32_t seed) {
  std::vector<std::uint32_t> words(bytes / sizeof(std::uint32_t));
  for (std::size_t i = 0; i < words.size(); ++i) {
    words[i] = seeded_word(seed, i);
  }
  // The ipc test has no stream of its own: its copies are the legacy stream's, in order, and
  // cuCtxSynchronize makes the pattern visible before the other process (or the peer copy) reads it.
  gpu.check(gpu.api().legacy_stream_memcpy_htod(pointer, words.data(), bytes), "cuMemcpyHtoD");
  gpu.check(gpu.api().ctx_synchronize(), "cuCtxSynchronize");
}

std::string check_pattern(const Gpu& gpu, cu::CUdeviceptr pointer, std::size_t bytes, std::uint32_t seed) {
  std::vector<std::uint32_t> words(bytes / sizeof(std::uint32_t));
  gpu.check(gpu.api().ctx_synchronize(), "cuCtxSynchronize"); // every write before this read has finished
  gpu.check(gpu.api().legacy_stream_memcpy_dtoh(words.data(), pointer, bytes), "cuMemcpyDtoH");
  std::optional<WrongData> wrong;
  compare_words(
      words, 0, [seed](std::uint64_t i) { return seeded_word(seed, i); }, wrong);
  return wrong ? describe(*wrong) + " (pattern " + std::to_string(seed) + ")" : std::string();
}

std::string device_uuid(const Gpu& gpu, cu::CUdevice device) {
  cu::CUuuid uuid{};
  gpu.check(gpu.api().device_get_uuid(&uuid, device), "cuDeviceGetUuid");
  return hex_encode(std::string_view(uuid.bytes, sizeof uuid.bytes));
}

// VMM memory mapped into this process: reserve + map + read/write access, released in reverse.
class VmmMapping {
public:
  VmmMapping(const Gpu& gpu, cu::CUmemGenericAllocationHandle handle, std::size_t bytes, cu::CUdevice device)
      : m_gpu(gpu), m_bytes(bytes) {
    const auto& api = gpu.api();
    gpu.check(api.mem_address_reserve(&m_pointer, bytes, 0, 0, 0), "cuMemAddressReserve");
    gpu.check(api.mem_map(m_pointer, bytes, 0, handle, 0), "cuMemMap");
    m_mapped = true;
    cu::CUmemAccessDesc access{};
    access.location = {cu::CU_MEM_LOCATION_TYPE_DEVICE, device};
    access.flags = cu::CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    gpu.check(api.mem_set_access(m_pointer, bytes, &access, 1), "cuMemSetAccess");
  }
  ~VmmMapping() {
    if (m_mapped) {
      static_cast<void>(m_gpu.api().mem_unmap(m_pointer, m_bytes));
    }
    if (m_pointer != 0) {
      static_cast<void>(m_gpu.api().mem_address_free(m_pointer, m_bytes));
    }
  }
  VmmMapping(const VmmMapping&) = delete;
  VmmMapping& operator=(const VmmMapping&) = delete;
  [[nodiscard]] cu::CUdeviceptr get() const { return m_pointer; }

private:
  const Gpu& m_gpu;
  std::size_t m_bytes;
  cu::CUdeviceptr m_pointer = 0;
  bool m_mapped = false;
};

class VmmAllocation {
public:
  VmmAllocation(const Gpu& gpu, cu::CUmemGenericAllocationHandle handle) : m_gpu(gpu), m_handle(handle) {}
  ~VmmAllocation() { static_cast<void>(m_gpu.api().mem_release(m_handle)); }
  VmmAllocation(const VmmAllocation&) = delete;
  VmmAllocation& operator=(const VmmAllocation&) = delete;
  [[nodiscard]] cu::CUmemGenericAllocationHandle get() const { return m_handle; }

private:
  const Gpu& m_gpu;
  cu::CUmemGenericAllocationHandle m_handle;
};

cu::CUmemAllocationProp posix_fd_prop(cu::CUdevice device) {
  cu::CUmemAllocationProp prop{};
  prop.type = cu::CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.requestedHandleTypes = cu::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  prop.location = {cu::CU_MEM_LOCATION_TYPE_DEVICE, device};
  return prop;
}

Evidence failure_reply(const std::exception& error) {
  const auto* cuda = dynamic_cast<const CudaFailure*>(&error);
  return {{"ok", false},
          {"error", error.what()},
          {"code", cuda != nullptr ? EvidenceValue(static_cast<int>(cuda->code())) : EvidenceValue()}};
}

// A message's fields, read by type; absent or of another type: the fallback.
std::string text_field(const Evidence& message, std::string_view name, std::string fallback = {}) {
  const auto* text = message.string(name);
  return text != nullptr ? *text : fallback;
}
std::uint64_t count_field(const Evidence& message, std::string_view name) {
  const auto* value = message.find(name);
  return value != nullptr && value->integer() && *value->integer() >= 0
             ? static_cast<std::uint64_t>(*value->integer())
             : 0;
}
bool reply_ok(const Evidence& reply) {
  const auto* ok = reply.find("ok");
  return ok != nullptr && ok->boolean() != nullptr && *ok->boolean();
}
EvidenceValue reply_code(const Evidence& reply) {
  const auto* code = reply.find("code");
  return code != nullptr ? *code : EvidenceValue();
}

// ---- exporter ---------------------------------------------------------------------------------

// {"status": pass|fail|skip, "reason", ...} for one path.
Evidence exchange_legacy(const Gpu& gpu, int socket, const std::string& uuid, std::size_t bytes) {
  const auto& api = gpu.api();
  if (api.ipc_get_mem_handle == nullptr || api.ipc_open_mem_handle == nullptr) {
    return {{"status", "skip"}, {"reason", "the driver lacks cuIpcGetMemHandle/cuIpcOpenMemHandle"}};
  }
  const DeviceBuffer buffer(gpu, bytes);
  write_pattern(gpu, buffer.get(), bytes, 1);
  cu::CUipcMemHandle handle{};
  if (const auto got = api.ipc_get_mem_handle(&handle, buffer.get()); got != cu::CUDA_SUCCESS) {
    return {{"status",
             got == cu::CUDA_ERROR_NOT_SUPPORTED || got == cu::CUDA_ERROR_NOT_PERMITTED ? "skip" : "fail"},
            {"reason", "cuIpcGetMemHandle: " + gpu.error_name(got) + " (" +
                           std::to_string(static_cast<int>(got)) + ")"},
            {"code", static_cast<int>(got)}};
  }
  send_message(socket, {{"op", "legacy"},
                        {"handle", hex_encode(std::string_view(handle.reserved, sizeof handle.reserved))},
                        {"bytes", bytes},
                        {"seed", 1},
                        {"uuid", uuid}});
  int unused = -1;
  const auto reply = receive_message(socket, unused);
  if (!reply_ok(reply)) {
    const auto code = static_cast<int>(reply_code(reply).integer().value_or(0));
    const bool unsupported = code == cu::CUDA_ERROR_NOT_SUPPORTED || code == cu::CUDA_ERROR_NOT_PERMITTED ||
                             code == cu::CUDA_ERROR_OPERATING_SYSTEM;
    return {{"status", unsupported ? "skip" : "fail"},
            {"reason", "peer: " + text_field(reply, "error", "failed")},
            {"code", reply_code(reply)}};
  }
  if (auto wrong = check_pattern(gpu, buffer.get(), bytes, 2); !wrong.empty()) {
    return {{"status", "fail"}, {"reason", "the peer's write did not arrive: " + wrong}};
  }
  return {{"status", "pass"}, {"bytes", bytes}};
}

Evidence exchange_vmm(const Gpu& gpu, int socket, const std::string& uuid, cu::CUdevice device,
                      std::size_t bytes) {
  const auto& api = gpu.api();
  if (api.mem_create == nullptr || api.mem_export_to_shareable_handle == nullptr || api.mem_map == nullptr) {
    return {{"status", "skip"}, {"reason", "the driver lacks the virtual memory management calls"}};
  }
  if (gpu.attribute(device, cu::CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED) == 0) {
    return {{"status", "skip"}, {"reason", "the device does not support virtual memory management"}};
  }
  if (gpu.attribute(device, cu::CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED) == 0) {
    return {{"status", "skip"}, {"reason", "the device does not support POSIX file descriptor handles"}};
  }
  const auto prop = posix_fd_prop(device);
  std::size_t granularity = 0;
  gpu.check(api.mem_get_allocation_granularity(&granularity, &prop, cu::CU_MEM_ALLOC_GRANULARITY_MINIMUM),
            "cuMemGetAllocationGranularity");
  if (granularity > 0) {
    bytes = (bytes + granularity - 1) / granularity * granularity;
  }
  cu::CUmemGenericAllocationHandle raw = 0;
  gpu.check(api.mem_create(&raw, bytes, &prop, 0), "cuMemCreate(POSIX fd)");
  const VmmAllocation allocation(gpu, raw);
  int exported = -1;
  if (const auto got = api.mem_export_to_shareable_handle(&exported, allocation.get(),
                                                          cu::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
      got != cu::CUDA_SUCCESS) {
    return {{"status",
             got == cu::CUDA_ERROR_NOT_SUPPORTED || got == cu::CUDA_ERROR_NOT_PERMITTED ? "skip" : "fail"},
            {"reason", "cuMemExportToShareableHandle: " + gpu.error_name(got)},
            {"code", static_cast<int>(got)}};
  }
  const UniqueFd fd(exported);
  const VmmMapping mapping(gpu, allocation.get(), bytes, device);
  write_pattern(gpu, mapping.get(), bytes, 3);
  send_message(socket, {{"op", "vmm"}, {"bytes", bytes}, {"seed", 3}, {"uuid", uuid}}, fd.get());
  int unused = -1;
  const auto reply = receive_message(socket, unused);
  if (!reply_ok(reply)) {
    return {{"status", "fail"},
            {"reason", "peer: " + text_field(reply, "error", "failed")},
            {"code", reply_code(reply)}};
  }
  if (auto wrong = check_pattern(gpu, mapping.get(), bytes, 4); !wrong.empty()) {
    return {{"status", "fail"}, {"reason", "the peer's write did not arrive: " + wrong}};
  }
  return {{"status", "pass"}, {"bytes", bytes}, {"granularity", granularity}};
}

// Peer access from this device to every other one: {"pairs": [...], "status", "reason"}.
Evidence check_peer_access(const Gpu& gpu, const DeviceFacts& device) {
  const auto& api = gpu.api();
  int count = 0;
  gpu.check(api.device_get_count(&count), "cuDeviceGetCount");
  if (count < 2) {
    return {{"status", "skip"}, {"reason", "one GPU: no peer to reach"}};
  }
  Evidence::List pairs;
  std::string failure;
  constexpr std::size_t k_bytes = std::size_t{1} << 20U;
  cu::CUcontext here = nullptr;
  gpu.check(api.primary_ctx_retain(&here, device.handle), "cuDevicePrimaryCtxRetain");
  for (int other = 0; other < count; ++other) {
    if (other == device.ordinal) {
      continue;
    }
    cu::CUdevice peer = 0;
    gpu.check(api.device_get(&peer, other), "cuDeviceGet");
    int can = 0;
    gpu.check(api.device_can_access_peer(&can, device.handle, peer), "cuDeviceCanAccessPeer");
    Evidence pair = {{"from", device.ordinal}, {"to", other}, {"can_access_peer", can != 0}};
    try {
      cu::CUcontext there = nullptr;
      gpu.check(api.primary_ctx_retain(&there, peer), "cuDevicePrimaryCtxRetain(peer)");
      gpu.check(api.ctx_set_current(there), "cuCtxSetCurrent(peer)");
      const DeviceBuffer remote(gpu, k_bytes);
      gpu.check(api.ctx_set_current(here), "cuCtxSetCurrent");
      const DeviceBuffer local(gpu, k_bytes);
      write_pattern(gpu, local.get(), k_bytes, 5);
      // Peer copies are the legacy stream's: the clear between them is issued there too, in order.
      gpu.check(api.legacy_stream_memcpy_peer(remote.get(), there, local.get(), here, k_bytes),
                "cuMemcpyPeer(to peer)");
      gpu.check(api.legacy_stream_memset_d32(local.get(), 0, k_bytes / 4), "cuMemsetD32");
      gpu.check(api.legacy_stream_memcpy_peer(local.get(), here, remote.get(), there, k_bytes),
                "cuMemcpyPeer(back)");
      const auto wrong = check_pattern(gpu, local.get(), k_bytes, 5);
      pair["copy"] = wrong.empty() ? "pass" : "fail: " + wrong;
      if (!wrong.empty() && failure.empty()) {
        failure = "copy to GPU " + std::to_string(other) + " and back: " + wrong;
      }
      static_cast<void>(api.primary_ctx_release(peer));
    } catch (const CudaFailure& error) {
      pair["copy"] = std::string("fail: ") + error.what();
      if (failure.empty()) {
        failure = "GPU " + std::to_string(other) + ": " + error.what();
      }
    }
    gpu.check(api.ctx_set_current(here), "cuCtxSetCurrent");
    pairs.push_back(pair);
  }
  static_cast<void>(api.primary_ctx_release(device.handle));
  return {{"status", failure.empty() ? "pass" : "fail"}, {"reason", failure}, {"pairs", pairs}};
}

} // namespace

TestResult run_ipc(const TestContext& context) {
  if (context.gpu == nullptr || !context.device) {
    return without_gpu(context);
  }
  const Gpu& gpu = *context.gpu;
  const auto& device = *context.device;
  auto result = new_result(context);
  if (context.config.executable.empty()) {
    return skipped(context, "no cudadiag executable to start the second process with");
  }

  auto sockets = seqpacket_pair();
  if (!sockets) {
    return errored(std::move(result), sockets.error().message);
  }
  auto [ours, theirs] = std::move(sockets).value();

  worker::WorkerStep step{"ipc_peer", "ipc_peer", context.config.libcuda, {}, theirs.get()};
  worker::WorkerOptions options;
  options.executable = context.config.executable;
  options.step_timeout = std::chrono::seconds(60);
  const auto env = Environment::capture();
  auto peer = std::async(std::launch::async, [&] { return worker::run_steps({step}, options, env); });

  const std::size_t bytes =
      context.config.level == Level::full ? std::size_t{256} << 20U : std::size_t{32} << 20U;
  const auto uuid = device_uuid(gpu, device.handle);
  EvidenceValue legacy;
  EvidenceValue vmm;
  try {
    legacy = exchange_legacy(gpu, ours.get(), uuid, bytes);
    vmm = exchange_vmm(gpu, ours.get(), uuid, device.handle, bytes);
    send_message(ours.get(), {{"op", "done"}});
  } catch (const std::exception& error) {
    if (legacy.is_null()) {
      legacy = {{"status", "fail"}, {"reason", error.what()}};
    } else {
      vmm = {{"status", "fail"}, {"reason", error.what()}};
    }
    try { // let the peer finish now rather than at its receive timeout
      send_message(ours.get(), {{"op", "done"}});
    } catch (const std::exception&) { // it has gone already
    }
  }
  theirs.reset();
  const auto outcomes = peer.get();
  const auto& outcome = outcomes.front();
  result.details["peer"] = {{"status", std::string(worker::to_string(outcome.status))},
                            {"detail", outcome.detail},
                            {"elapsed_ms", outcome.elapsed_ms},
                            {"result", decode_evidence(outcome.result)}};
  result.details["legacy"] = legacy;
  result.details["bytes"] = bytes;
  result.details["vmm"] = vmm.is_null() ? EvidenceValue{{"status", "skip"}, {"reason", "not reached"}} : vmm;
  const auto peers = check_peer_access(gpu, device);
  result.details["peer_access"] = peers;

  std::vector<std::string> failures;
  std::vector<std::string> skips;
  for (const auto* name : {"legacy", "vmm", "peer_access"}) {
    const auto* part = result.details.at(name).record();
    const auto status =
        part != nullptr ? parse_test_status(text_field(*part, "status", "fail")) : TestStatus::fail;
    const auto reason = part != nullptr ? text_field(*part, "reason") : std::string();
    if (status == TestStatus::fail) {
      failures.push_back(std::string(name) + ": " + reason);
    } else if (status == TestStatus::skip && std::string(name) != "peer_access") {
      skips.push_back(std::string(name) + ": " + reason);
    }
  }
  if (outcome.status != worker::StepStatus::ok && failures.empty()) {
    failures.push_back("the peer process: " + outcome.detail);
  }
  if (!failures.empty()) {
    result.status = TestStatus::fail;
    result.reason = failures.front();
  } else if (skips.size() == 2) {
    result.status = TestStatus::skip;
    result.reason = skips.front() + "; " + skips.back();
  } else if (!skips.empty()) {
    result.reason = "partly skipped: " + skips.front();
  }
  return result;
}

// ---- peer -------------------------------------------------------------------------------------

Evidence run_ipc_peer(const std::string& libcuda_path) {
  Evidence summary = {{"exchanges", Evidence::List()}};
  const int socket = k_peer_socket_fd;
  std::optional<cu::CUresult> init;
  auto loaded = Gpu::load(libcuda_path, init);
  const auto gpu = loaded ? std::move(*loaded) : nullptr;
  std::optional<PrimaryContext> context;
  cu::CUdevice device = 0;
  bool have_device = false;
  for (;;) {
    int fd = -1;
    Evidence message;
    try {
      message = receive_message(socket, fd);
    } catch (const std::exception& failure) {
      summary["error"] = failure.what();
      return summary;
    }
    const UniqueFd received(fd);
    const auto op = text_field(message, "op");
    if (op == "done") {
      return summary;
    }
    Evidence reply;
    try {
      if (!gpu) {
        throw std::runtime_error(loaded.error().message);
      }
      if (!have_device) {
        const auto wanted = text_field(message, "uuid");
        int count = 0;
        gpu->check(gpu->api().device_get_count(&count), "cuDeviceGetCount");
        for (int ordinal = 0; ordinal < count && !have_device; ++ordinal) {
          gpu->check(gpu->api().device_get(&device, ordinal), "cuDeviceGet");
          have_device = device_uuid(*gpu, device) == wanted;
        }
        if (!have_device) {
          throw std::runtime_error(
              "the exporter's GPU is not visible to the peer process (CUDA_VISIBLE_DEVICES?)");
        }
        context.emplace(*gpu, device);
      }
      const auto bytes = static_cast<std::size_t>(count_field(message, "bytes"));
      const auto seed = static_cast<unsigned>(count_field(message, "seed"));
      const auto& api = gpu->api();
      if (op == "legacy") {
        cu::CUipcMemHandle handle{};
        const auto bytes_of_handle = hex_decode(text_field(message, "handle"));
        if (!bytes_of_handle || bytes_of_handle->size() != sizeof handle.reserved) {
          throw std::runtime_error("a malformed IPC handle");
        }
        std::memcpy(handle.reserved, bytes_of_handle->data(), sizeof handle.reserved);
        cu::CUdeviceptr pointer = 0;
        gpu->check(api.ipc_open_mem_handle(&pointer, handle, cu::k_ipc_lazy_enable_peer),
                   "cuIpcOpenMemHandle");
        std::string wrong = check_pattern(*gpu, pointer, bytes, seed);
        if (wrong.empty()) {
          write_pattern(*gpu, pointer, bytes, seed + 1);
        }
        gpu->check(api.ipc_close_mem_handle(pointer), "cuIpcCloseMemHandle");
        if (!wrong.empty()) {
          throw std::runtime_error("the exporter's pattern did not arrive: " + wrong);
        }
      } else if (op == "vmm") {
        if (received.get() < 0) {
          throw std::runtime_error("no file descriptor arrived with the message");
        }
        cu::CUmemGenericAllocationHandle raw = 0;
        gpu->check(api.mem_import_from_shareable_handle(
                       &raw, reinterpret_cast<void*>(static_cast<std::intptr_t>(received.get())),
                       cu::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
                   "cuMemImportFromShareableHandle");
        const VmmAllocation allocation(*gpu, raw);
        const VmmMapping mapping(*gpu, allocation.get(), bytes, device);
        if (auto wrong = check_pattern(*gpu, mapping.get(), bytes, seed); !wrong.empty()) {
          throw std::runtime_error("the exporter's pattern did not arrive: " + wrong);
        }
        write_pattern(*gpu, mapping.get(), bytes, seed + 1);
      } else {
        throw std::runtime_error("unknown op '" + op + "'");
      }
      reply = {{"ok", true}, {"seed", seed + 1}};
    } catch (const std::exception& failure) {
      reply = failure_reply(failure);
    }
    summary["exchanges"].push_back({{"op", op}, {"reply", reply}});
    try {
      send_message(socket, reply);
    } catch (const std::exception& failure) {
      summary["error"] = failure.what();
      return summary;
    }
  }
}

} // namespace cudadiag::selftest
