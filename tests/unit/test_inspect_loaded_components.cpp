// What a process really loaded: file names matched to catalog libraries, findings from crafted
// mappings, a live fixture process with two copies of one library or the driver stub mapped, and
// this test process itself.
#include "checks.hpp"
#include "inspect/loaded_components.hpp"
#include "skip.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <sys/wait.h>
#include <thread>

extern char** environ; // NOLINT(readability-redundant-declaration): posix_spawn passes it on

using cudadiag::inspect::component_for_file;
using cudadiag::inspect::inspect_mapped;
using cudadiag::inspect::inspect_process;
using cudadiag::inspect::inspect_this_process;
using cudadiag::inspect::inspection_to_json;
using cudadiag::inspect::LoadedComponent;
using cudadiag::inspect::MappedFile;
using cudadiag::inspect::match_library_file;
using cudadiag::inspect::ProcessInspection;
using cudadiag::inspect::render_inspection_text;
using cudadiag::testing::contains;
using cudadiag::testing::TempTree;

namespace {

const cudadiag::findings::Finding* with_id(const ProcessInspection& inspection, std::string_view id) {
  for (const auto& finding : inspection.findings) {
    if (finding.id == id) {
      return &finding;
    }
  }
  return nullptr;
}

std::vector<const LoadedComponent*> named(const ProcessInspection& inspection, std::string_view name) {
  std::vector<const LoadedComponent*> out;
  for (const auto& component : inspection.components) {
    if (component.name == name) {
      out.push_back(&component);
    }
  }
  return out;
}

MappedFile mapped(std::string path, std::uint64_t inode = 0, bool deleted = false) {
  return MappedFile{std::move(path), deleted, inode, inode == 0 ? "" : "08:01"};
}

// The two_copies fixture, started with library paths on its command line. Its stdin is a pipe
// held here: closing it lets the fixture exit. The destructor closes it, reaps the process and,
// should it not exit within five seconds, kills it first.
class FixtureProcess {
public:
  explicit FixtureProcess(const std::vector<std::string>& libraries) {
    std::array<int, 2> to_child{};
    std::array<int, 2> from_child{};
    if (::pipe2(to_child.data(), O_CLOEXEC) != 0 || ::pipe2(from_child.data(), O_CLOEXEC) != 0) {
      return;
    }
    posix_spawn_file_actions_t actions;
    ::posix_spawn_file_actions_init(&actions);
    ::posix_spawn_file_actions_adddup2(&actions, to_child[0], STDIN_FILENO);
    ::posix_spawn_file_actions_adddup2(&actions, from_child[1], STDOUT_FILENO);
    std::string program = CUDADIAG_TWO_COPIES_BIN;
    std::vector<std::string> args = {program};
    args.insert(args.end(), libraries.begin(), libraries.end());
    std::vector<char*> argv;
    argv.reserve(args.size() + 1);
    for (auto& arg : args) {
      argv.push_back(arg.data());
    }
    argv.push_back(nullptr);
    if (::posix_spawn(&m_pid, program.c_str(), &actions, nullptr, argv.data(), environ) != 0) {
      m_pid = -1;
    }
    ::posix_spawn_file_actions_destroy(&actions);
    ::close(to_child[0]);
    ::close(from_child[1]);
    m_stdin = to_child[1];
    m_stdout = from_child[0];
  }
  FixtureProcess(const FixtureProcess&) = delete;
  FixtureProcess& operator=(const FixtureProcess&) = delete;

  ~FixtureProcess() {
    close_fd(m_stdin);
    close_fd(m_stdout);
    if (m_pid <= 0) {
      return;
    }
    int status = 0;
    for (int waited_ms = 0; waited_ms < 5000; waited_ms += 10) {
      if (::waitpid(m_pid, &status, WNOHANG) == m_pid) {
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ::kill(m_pid, SIGKILL);
    ::waitpid(m_pid, &status, 0);
  }

  [[nodiscard]] int pid() const { return m_pid; }

  // Whether the fixture printed "ready" within ten seconds (all libraries mapped).
  bool wait_ready() {
    std::string seen;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (m_pid > 0 && !contains(seen, "ready\n") && std::chrono::steady_clock::now() < deadline) {
      pollfd poll_fd{m_stdout, POLLIN, 0};
      if (::poll(&poll_fd, 1, 100) <= 0) {
        continue;
      }
      std::array<char, 64> buffer{};
      const ssize_t got = ::read(m_stdout, buffer.data(), buffer.size());
      if (got <= 0) {
        return false;
      }
      seen.append(buffer.data(), static_cast<std::size_t>(got));
    }
    return contains(seen, "ready\n");
  }

  // Closes the fixture's stdin and returns its exit status (-1 if it did not exit normally).
  int finish() {
    close_fd(m_stdin);
    int status = 0;
    const bool reaped = ::waitpid(m_pid, &status, 0) == m_pid;
    m_pid = -1;
    return reaped && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

private:
  static void close_fd(int& fd) {
    if (fd >= 0) {
      ::close(fd);
      fd = -1;
    }
  }
  pid_t m_pid = -1;
  int m_stdin = -1;
  int m_stdout = -1;
};

} // namespace

TEST_CASE("inspect: component_for_file matches declared SONAMEs and their versioned file names") {
  struct Row {
    std::string_view path;
    std::string_view component; // "" for no match
    std::string_view variant;
  };
  const std::vector<Row> rows = {
      {"/usr/local/cuda/lib64/libnvrtc.so.13", "nvrtc", ""},
      {"/usr/local/cuda/lib64/libnvrtc.so.13.0.88", "nvrtc", ""},
      {"libnvrtc.so.12.4.127", "nvrtc", ""},
      {"libnvrtc.so.11.2", "nvrtc", ""},
      {"/usr/lib/x86_64-linux-gnu/libcuda.so.1", "cuda", ""},
      {"/usr/lib/x86_64-linux-gnu/libcuda.so.580.95.05", "cuda", ""},
      {"/usr/local/cuda/lib64/stubs/libcuda.so", "cuda", ""},
      {"/x/libnvidia-ml.so.580.95.05", "nvml", ""},
      {"/x/libcudart.so.13.0.96", "cudart", ""},
      {"/x/libcublas.so.13", "cublas", ""},
      {"/x/libcublasLt.so.13.1.0.3", "cublasLt", ""},
      {"/x/libnvvm.so", "nvvm", ""},
      {"/x/libnvvm.so.4.0.0", "nvvm", ""},
      {"/x/libnvJitLink.so.13", "nvJitLink", ""},
      {"/usr/local/cuda/lib64/libnvrtc.alt.so.13", "nvrtc", "alt"},
      {"/x/libnvrtc-builtins.so.13.0", "", ""},
      {"/x/libnvrtc-builtins.alt.so.13.0", "", ""},
      {"/x/libcudart_static.a", "", ""},
      {"/x/libcudadebugger.so.1", "", ""},
      {"/x/libcuda.so.1.bak", "", ""},
      {"/x/libcuda.so.", "", ""},
      {"/x/libnvrtc.so.13.", "", ""},
      {"/x/libcudart.so.13.0a", "", ""},
      {"/x/libcudart.so.13..0", "", ""},
      {"/x/libcudart.so.bak", "", ""},
      {"/x/libcudnn_ops.so.9", "cudnn_ops", ""}, // cuDNN 9's sub-library, a component beyond CUDA Python's
      {"/x/libcudart.so.11.0", "cudart", ""},    // an older SONAME: the loader's and frameworks'
      {"/x/libnvToolsExt-24de1d56.so.1", "",
       ""}, // a vendored copy's hashed name is discovery's, not inspect's
      {"/libcuda.so.1/libc.so.6", "", ""},
      {"/x/libc.so.6", "", ""},
      {"", "", ""},
  };
  for (const auto& row : rows) {
    CAPTURE(row.path);
    const auto* spec = component_for_file(row.path);
    if (row.component.empty()) {
      CHECK(spec == nullptr);
      continue;
    }
    REQUIRE(spec != nullptr);
    CHECK(spec->name == row.component);
    CHECK(spec->kind == cudadiag::probes::ComponentKind::dynamic_lib);
    CHECK(match_library_file(row.path)->variant == row.variant);
  }
  CHECK(match_library_file("libnvrtc.so.13.0.88")->soname == "libnvrtc.so.13");
  CHECK(match_library_file("libnvrtc.so.12.4.127")->soname == "libnvrtc.so.12");
  CHECK(match_library_file("libcuda.so.580.95.05")->soname == "libcuda.so.1");
  CHECK(match_library_file("libnvvm.so")->soname == "libnvvm.so");
  CHECK(match_library_file("libnvrtc.alt.so.13")->soname == "libnvrtc.alt.so.13");
}

TEST_CASE("inspect: two different files of one component are a process.duplicate_lib error") {
  TempTree tree;
  const auto a = tree.write("a/libcudart.so.13.0.96", "x");
  const auto b = tree.write("b/libcudart.so.13.1.80", "y");
  tree.symlink("a-link", "a");
  const auto libc = tree.write("sys/libc.so.6", "c");
  // The same file under a second name (a symlinked directory) is one copy, not two.
  const auto inspection = inspect_mapped(
      {mapped(libc), mapped(a), mapped(tree.path("a-link/libcudart.so.13.0.96")), mapped(b)}, 4321);
  CHECK(inspection.pid == 4321);
  const auto cudart = named(inspection, "cudart");
  REQUIRE(cudart.size() == 3);
  REQUIRE(inspection.components.size() == 3);
  REQUIRE(cudart[0]->version.has_value());
  CHECK(cudart[0]->version->version == "13.0.96");
  CHECK(cudart[0]->realpath == a);
  CHECK(cudart[2]->version->version == "13.1.80");
  const auto* finding = with_id(inspection, "process.duplicate_lib");
  REQUIRE(finding != nullptr);
  CHECK(inspection.findings.size() == 1);
  CHECK(finding->severity == cudadiag::findings::Severity::error);
  CHECK(finding->components == std::vector<std::string>{"cudart"});
  CHECK(contains(finding->message, "process 4321 has 2 different copies of cudart"));
  CHECK(contains(finding->message, a + " (13.0.96)"));
  CHECK(contains(finding->message, b + " (13.1.80)"));
  CHECK_FALSE(finding->remedy.empty());
  REQUIRE(finding->evidence.at("copies").size() == 2);
  CHECK(finding->evidence.at("copies").at(1).at("version") == "13.1.80");
  CHECK(finding->evidence.at("pid") == 4321);

  // Mapped files known by device and inode are told apart by them, whatever their paths.
  const auto by_inode = inspect_mapped({mapped(a, 7), mapped(b, 7)}, 1);
  CHECK(with_id(by_inode, "process.duplicate_lib") == nullptr);
  const auto single = inspect_mapped({mapped(a, 7), mapped(a, 7)}, 1);
  CHECK(single.findings.empty());
}

TEST_CASE("inspect: a mapped libcuda from a stubs/ directory is driver.stub") {
  TempTree tree;
  const auto stub = tree.write("cuda/lib64/stubs/libcuda.so.1", "tiny");
  tree.symlink("linked-lib", "cuda/lib64/stubs");
  const auto through_link = tree.path("linked-lib/libcuda.so.1");
  for (const auto& path : {stub, through_link}) {
    CAPTURE(path);
    const auto inspection = inspect_mapped({mapped(path)}, 0);
    REQUIRE(inspection.components.size() == 1);
    CHECK(inspection.components[0].is_stub);
    const auto* finding = with_id(inspection, "driver.stub");
    REQUIRE(finding != nullptr);
    CHECK(finding->severity == cudadiag::findings::Severity::error);
    CHECK(contains(finding->message, "this process has the CUDA Toolkit's link-time stub " + path));
    CHECK(contains(finding->message, "CUDA_ERROR_STUB_LIBRARY (34)"));
  }
  // Discovery's rule: a small libcuda outside stubs/ (a shim, a test double) is not called a stub.
  const auto small = inspect_mapped({mapped(tree.write("usr/lib/libcuda.so.1", "shim"))}, 0);
  REQUIRE(small.components.size() == 1);
  CHECK_FALSE(small.components[0].is_stub);
  CHECK(small.findings.empty());
  // A stub nvrtc is not a driver problem.
  const auto nvrtc = tree.write("cuda/lib64/stubs/libnvrtc.so.13", "n");
  const auto other = inspect_mapped({mapped(nvrtc)}, 0);
  REQUIRE(other.components.size() == 1);
  CHECK(other.components[0].is_stub);
  CHECK(other.findings.empty());
}

TEST_CASE("inspect: this process's library facts are kept while the file is unchanged, read again when it "
          "changes") {
  const std::string toolkit_stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (::access(toolkit_stub.c_str(), R_OK) != 0) {
    CUDADIAG_SKIP(toolkit_stub << " is not present: no stub-shaped ELF file to keep facts of");
  }
  TempTree tree;
  const auto path = tree.copy_file(toolkit_stub, "usr/lib/libcuda.so.1");
  // Facts of a file changed within the timestamps' granularity (2 s) are never kept: age it first.
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));
  for (int call = 0; call < 2; ++call) { // read, then answered from what was kept
    const auto inspection = inspect_mapped({mapped(path, 5)}, 0);
    REQUIRE(inspection.components.size() == 1);
    CHECK(inspection.components[0].is_stub);
  }
  // Rewritten in place: its size and ctime change, so the kept facts do not answer.
  tree.write("usr/lib/libcuda.so.1", "shim");
  const auto rewritten = inspect_mapped({mapped(path, 5)}, 0);
  REQUIRE(rewritten.components.size() == 1);
  CHECK_FALSE(rewritten.components[0].is_stub);
}

TEST_CASE("inspect: a deleted mapping keeps its name's version and no realpath") {
  TempTree tree;
  // A new file now lies at the old path; the mapping is the old, deleted one.
  const auto now = tree.write("lib/libnvrtc.so.13.0.88", "new");
  const auto inspection = inspect_mapped({mapped(now, 9, true)}, 77);
  REQUIRE(inspection.components.size() == 1);
  const auto& nvrtc = inspection.components[0];
  CHECK(nvrtc.deleted);
  CHECK_FALSE(nvrtc.realpath.has_value());
  REQUIRE(nvrtc.version.has_value());
  CHECK(nvrtc.version->version == "13.0.88");
  CHECK(contains(nvrtc.version->evidence, "deleted"));
  CHECK(contains(render_inspection_text(inspection), "[deleted]"));
}

TEST_CASE("inspect: inspection_to_json and render_inspection_text") {
  TempTree tree;
  const std::string invalid_utf8_dir = std::string("we") + '\xff' + "ird";
  const auto odd = tree.write(invalid_utf8_dir + "/libcudart.so.13.0.96", "x");
  const auto other = tree.write("b/libcudart.so.13.1.80", "y");
  const auto stub = tree.write("stubs/libcuda.so.1", "s");
  const auto inspection = inspect_mapped({mapped(odd), mapped(other), mapped(stub)}, 99);
  const auto document = inspection_to_json(inspection);
  CHECK_NOTHROW((void)document.dump());
  CHECK(document["pid"] == 99);
  REQUIRE(document["components"].size() == 3);
  const auto& first = document["components"][0];
  CHECK(first["name"] == "cudart");
  CHECK(first["version"] == "13.0.96");
  CHECK(first["version_source"] == "file_name");
  CHECK(first["is_stub"] == false);
  CHECK(first["deleted"] == false);
  CHECK(first["variant"].is_null());
  CHECK(contains(first["path"].get<std::string>(), "we\\xffird"));
  CHECK(document["components"][2]["is_stub"] == true);
  REQUIRE(document["findings"].size() == 2);
  CHECK(document["findings"][0]["id"] == "process.duplicate_lib");
  CHECK(document["findings"][1]["id"] == "driver.stub");
  CHECK(document["findings"][1]["severity"] == "error");

  const auto text = render_inspection_text(inspection);
  CHECK(contains(text, "Process 99: 3 CUDA libraries mapped"));
  CHECK(contains(text, "13.1.80"));
  CHECK(contains(text, "[stub]"));
  CHECK(contains(text, "ERROR   process.duplicate_lib"));
  CHECK(contains(text, "remedy: "));
  CHECK(text.find('\033') == std::string::npos);
  CHECK(contains(render_inspection_text(inspection, {.color = true}), "\033["));
  CHECK(contains(render_inspection_text(ProcessInspection{}), "This process: no CUDA libraries mapped"));
}

TEST_CASE("inspect: a live process with two copies of libcudart mapped") {
  TempTree tree;
  const auto a = tree.copy_file(CUDADIAG_TWO_COPIES_LIB, "wheel/nvidia/cu13/lib/libcudart.so.13.0.96");
  const auto b = tree.copy_file(CUDADIAG_TWO_COPIES_LIB, "toolkit/lib64/libcudart.so.13.1.80");
  FixtureProcess fixture({a, b});
  REQUIRE(fixture.pid() > 0);
  REQUIRE(fixture.wait_ready());
  const auto inspection = inspect_process(fixture.pid());
  REQUIRE(inspection.has_value());
  CHECK(inspection->pid == fixture.pid());
  const auto cudart = named(*inspection, "cudart");
  REQUIRE(cudart.size() == 2);
  // /proc/PID/maps lists by address, not by load order.
  const bool a_first = cudart[0]->path == a;
  const auto* in_a = cudart[a_first ? 0 : 1];
  const auto* in_b = cudart[a_first ? 1 : 0];
  CHECK(in_a->path == a);
  CHECK(in_b->path == b);
  REQUIRE(in_a->version.has_value());
  REQUIRE(in_b->version.has_value());
  CHECK(in_a->version->version == "13.0.96");
  CHECK(in_b->version->version == "13.1.80");
  const auto* finding = with_id(*inspection, "process.duplicate_lib");
  REQUIRE(finding != nullptr);
  CHECK(contains(finding->message,
                 "process " + std::to_string(fixture.pid()) + " has 2 different copies of cudart"));
  CHECK(fixture.finish() == 0);
}

TEST_CASE("inspect: a live process with the toolkit's stub libcuda mapped") {
  TempTree tree;
  const auto stub = tree.copy_file(CUDADIAG_TWO_COPIES_LIB, "cuda/lib64/stubs/libcuda.so.1");
  FixtureProcess fixture({stub});
  REQUIRE(fixture.wait_ready());
  const auto inspection = inspect_process(fixture.pid());
  REQUIRE(inspection.has_value());
  const auto cuda = named(*inspection, "cuda");
  REQUIRE(cuda.size() == 1);
  CHECK(cuda[0]->is_stub);
  CHECK(with_id(*inspection, "driver.stub") != nullptr);
  CHECK(with_id(*inspection, "process.duplicate_lib") == nullptr);
  CHECK(fixture.finish() == 0);
}

TEST_CASE("inspect: inspect_process passes on the reader's errors") {
  const auto result = inspect_process(-5);
  REQUIRE_FALSE(result.has_value());
  CHECK(contains(result.error().message, "invalid PID -5"));
}

TEST_CASE("inspect: this test process maps no CUDA library until it loads one") {
  const auto before = inspect_this_process();
  CHECK(before.pid == 0);
  CHECK(before.components.empty());
  CHECK(before.findings.empty());

  const std::string nvjitlink = "/usr/local/cuda/lib64/libnvJitLink.so.13";
  if (::access(nvjitlink.c_str(), R_OK) != 0) {
    CUDADIAG_SKIP(nvjitlink << " is not present: the loaded case is not checked");
  }
  void* handle = ::dlopen(nvjitlink.c_str(), RTLD_LAZY | RTLD_LOCAL);
  REQUIRE_MESSAGE(handle != nullptr, ::dlerror());
  const auto after = inspect_this_process();
  ::dlclose(handle);
  const auto loaded = named(after, "nvJitLink");
  REQUIRE(loaded.size() == 1);
  CHECK(loaded[0]->path == nvjitlink);
  CHECK(loaded[0]->realpath.has_value());
  REQUIRE(loaded[0]->version.has_value());
  CHECK(loaded[0]->version->version.starts_with("13."));
  CHECK(after.findings.empty());
}
