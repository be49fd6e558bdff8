// Each finding the verification stage can emit, from worker outcomes built by hand (the worker
// itself is tested in test_worker_process.cpp) over a synthetic discovery.
#include "checks.hpp"
#include "findings/verification_rules.hpp"
#include "synthetic_world.hpp"
#include "verify/facts_codec.hpp"

#include <doctest/doctest.h>

#include <algorithm>

using cudadiag::findings::evaluate_verification;
using cudadiag::findings::Finding;
using cudadiag::findings::Severity;
using cudadiag::testing::SyntheticWorld;
using cudadiag::testing::with_id;
using cudadiag::verify::LibraryStep;
using cudadiag::verify::Verification;
using nlohmann::json;

namespace {

LibraryStep ok_step(std::string id, std::string kind, std::string path, json result) {
  LibraryStep step;
  step.id = std::move(id);
  step.kind = std::move(kind);
  step.path = std::move(path);
  step.status = cudadiag::worker::StepStatus::ok;
  result["library"] = step.path;
  if (!result.contains("loaded")) {
    result["loaded"] = true;
  }
  if (!result.contains("dlopen_error")) {
    result["dlopen_error"] = nullptr;
  }
  if (!result.contains("missing_symbols")) {
    result["missing_symbols"] = json::array();
  }
  step.facts =
      cudadiag::verify::decode(step.kind, result.dump()); // the facts a worker sending `result` gives
  return step;
}

// A world with nvrtc, nvJitLink and cudart on LD_LIBRARY_PATH (versions from version.json) and a driver.
struct Stack {
  SyntheticWorld world;
  std::string lib;
  Stack(std::string_view toolkit_version = "13.0.88") {
    world.toolkit("tk", toolkit_version);
    lib = world.tree.path("tk/lib64");
    for (const char* name : {"libnvrtc.so.13", "libnvJitLink.so.13", "libcudart.so.13"}) {
      world.library(std::string("tk/lib64/") + name);
    }
    world.library("drv/libcuda.so.1");
    world.env.set("LD_LIBRARY_PATH", lib + ":" + world.tree.path("drv"));
  }
  std::vector<Finding> evaluate(std::vector<LibraryStep> steps) const {
    Verification verification;
    verification.ran = true;
    verification.steps = std::move(steps);
    return evaluate_verification(world.discover(), verification);
  }
  [[nodiscard]] std::string path(std::string_view file) const { return lib + "/" + std::string(file); }
  [[nodiscard]] std::string driver() const { return world.tree.path("drv/libcuda.so.1"); }
};

json driver_result(int init_code, int driver_version) {
  return {{"init",
           {{"code", init_code},
            {"name", init_code == 0 ? "CUDA_SUCCESS" : "CUDA_ERROR_X"},
            {"description", "d"}}},
          {"driver_version", driver_version},
          {"device_count", 0},
          {"devices", json::array()}};
}

} // namespace

TEST_CASE("verification rules: the PTX ISA table follows DESIGN.md") {
  using cudadiag::findings::ptx_isa_for_cuda;
  CHECK(ptx_isa_for_cuda(13, 0) == std::optional(std::pair{9, 0}));
  CHECK(ptx_isa_for_cuda(12, 6) == std::optional(std::pair{8, 5}));
  CHECK(ptx_isa_for_cuda(12, 9) == std::optional(std::pair{8, 8}));
  CHECK_FALSE(ptx_isa_for_cuda(12, 7).has_value());
}

TEST_CASE("verification rules: a healthy stack gives no finding") {
  Stack stack;
  const auto found = stack.evaluate({
      ok_step("cuda", "driver", stack.driver(), driver_result(0, 13000)),
      ok_step("nvrtc", "nvrtc", stack.path("libnvrtc.so.13"),
              {{"version", "13.0"},
               {"builtins", {{"expected", "libnvrtc-builtins.so.13.0"}, {"loadable", true}}}}),
      ok_step("nvJitLink", "nvjitlink", stack.path("libnvJitLink.so.13"), {{"version", "13.0"}}),
      ok_step("cudart", "cudart", stack.path("libcudart.so.13"), {{"runtime_version", 13000}}),
  });
  for (const auto& finding : found) {
    MESSAGE(finding.id << ": " << finding.message);
  }
  CHECK(found.empty());
}

TEST_CASE("verification rules: driver.init_failed decodes cuInit errors with code-specific remedies") {
  using cudadiag::findings::Repair;
  Stack stack;
  const std::vector<std::pair<int, Repair>> cases = {
      {35, Repair::reinstall_package}, {100, Repair::fix_environment}, {803, Repair::reboot},
      {804, Repair::fix_environment},  {999, Repair::reboot},          {3, Repair::fix_environment},
      {46, Repair::reinstall_package}}; // 46 (busy or unavailable): no row, the id's default
  for (const auto& [code, repair] : cases) {
    CAPTURE(code);
    const auto found =
        stack.evaluate({ok_step("cuda", "driver", stack.driver(), driver_result(code, 13000))});
    const auto* finding = with_id(found, "driver.init_failed");
    REQUIRE(finding != nullptr);
    CHECK(finding->evidence.at("code") == code);
    CHECK(finding->message.find(std::to_string(code)) != std::string::npos);
    CHECK(finding->repair == repair);
  }
  const auto stub = stack.evaluate({ok_step("cuda", "driver", stack.driver(), driver_result(34, 13000))});
  CHECK(with_id(stub, "driver.stub") != nullptr);
  CHECK(with_id(stub, "driver.init_failed") == nullptr);
}

TEST_CASE(
    "verification rules: driver.too_old and nvrtc.ptx_newer_than_driver from the driver's CUDA version") {
  Stack stack;
  const auto found = stack.evaluate({
      ok_step("cuda", "driver", stack.driver(), driver_result(0, 12080)),
      ok_step("nvrtc", "nvrtc", stack.path("libnvrtc.so.13"), {{"version", "13.0"}}),
  });
  CHECK(with_id(found, "driver.too_old") != nullptr);
  const auto* ptx = with_id(found, "nvrtc.ptx_newer_than_driver");
  REQUIRE(ptx != nullptr);
  CHECK(ptx->evidence.at("nvrtc_ptx_isa") == "9.0");
  CHECK(ptx->evidence.at("driver_ptx_isa") == "8.7");

  // Same ISA (12.6 NVRTC on a 12.5 driver: both 8.5) is fine; 12.9 on 12.8 is not.
  Stack cuda12("12.6.77");
  CHECK(with_id(cuda12.evaluate(
                    {ok_step("cuda", "driver", cuda12.driver(), driver_result(0, 12050)),
                     ok_step("nvrtc", "nvrtc", cuda12.path("libnvrtc.so.13"), {{"version", "12.6"}})}),
                "nvrtc.ptx_newer_than_driver") == nullptr);
  CHECK(with_id(cuda12.evaluate(
                    {ok_step("cuda", "driver", cuda12.driver(), driver_result(0, 12080)),
                     ok_step("nvrtc", "nvrtc", cuda12.path("libnvrtc.so.13"), {{"version", "12.9"}})}),
                "nvrtc.ptx_newer_than_driver") != nullptr);
}

TEST_CASE("verification rules: nvjitlink.version_mismatch for another major or an older minor") {
  Stack stack;
  auto evaluate = [&](const char* nvrtc, const char* nvjitlink) {
    return stack.evaluate(
        {ok_step("nvrtc", "nvrtc", stack.path("libnvrtc.so.13"), {{"version", nvrtc}}),
         ok_step("nvJitLink", "nvjitlink", stack.path("libnvJitLink.so.13"), {{"version", nvjitlink}})});
  };
  CHECK(with_id(evaluate("13.0", "12.9"), "nvjitlink.version_mismatch") != nullptr);
  CHECK(with_id(evaluate("12.6", "12.4"), "nvjitlink.version_mismatch") != nullptr);
  CHECK(with_id(evaluate("12.4", "12.6"), "nvjitlink.version_mismatch") == nullptr);
  CHECK(with_id(evaluate("13.0", "13.0"), "nvjitlink.version_mismatch") == nullptr);
}

TEST_CASE("verification rules: nvrtc.builtins_missing and lib.version_disagrees") {
  Stack stack;
  const auto found = stack.evaluate({ok_step("nvrtc", "nvrtc", stack.path("libnvrtc.so.13"),
                                             {{"version", "13.1"},
                                              {"builtins",
                                               {{"expected", "libnvrtc-builtins.so.13.1"},
                                                {"path", nullptr},
                                                {"loadable", false},
                                                {"error", "not found"}}}})});
  CHECK(with_id(found, "nvrtc.builtins_missing") != nullptr);
  const auto* disagrees = with_id(found, "lib.version_disagrees");
  REQUIRE(disagrees != nullptr);
  CHECK(disagrees->evidence.at("api") == "13.1");
  CHECK(disagrees->evidence.at("files") == "13.0.88");
}

namespace {

// A 13.1 toolkit reached through CUDA_HOME only: NVRTC's real file `nvrtc_file` (libnvrtc.so.13 a
// link to it, or the file itself) with libnvrtc-builtins.so.13.1 beside it, and a driver.
struct CudaHomeToolkit {
  SyntheticWorld world;
  std::string lib;
  std::string builtins;
  explicit CudaHomeToolkit(std::string_view nvrtc_file) {
    world.toolkit("tk", "13.1.80");
    lib = world.tree.path("tk/lib64");
    world.library("tk/lib64/" + std::string(nvrtc_file));
    if (nvrtc_file != "libnvrtc.so.13") {
      world.tree.symlink("tk/lib64/libnvrtc.so.13", nvrtc_file);
    }
    builtins = world.library("tk/lib64/libnvrtc-builtins.so.13.1");
    world.library("drv/libcuda.so.1");
    world.env.set("LD_LIBRARY_PATH", world.tree.path("drv"));
    world.env.set("CUDA_HOME", world.tree.path("tk"));
  }
  // The verification of NVRTC: builtins beside it loadable or not, the compile check's result.
  [[nodiscard]] std::vector<Finding> evaluate(bool loadable, bool compiled, std::string_view failure) const {
    // NVRTC's own code and log for the two failures the tests use.
    const bool builtins_failed = failure == "NVRTC_ERROR_BUILTIN_OPERATION_FAILURE";
    const json check{{"ok", compiled},
                     {"step", "nvrtcCompileProgram"},
                     {"code", compiled ? 0 : (builtins_failed ? 7 : 6)},
                     {"name", compiled ? "NVRTC_SUCCESS" : failure},
                     {"log", compiled ? ""
                             : builtins_failed
                                 ? "nvrtc: error: failed to open libnvrtc-builtins.so.13.1.\n  Make sure "
                                   "that libnvrtc-builtins.so.13.1 is installed correctly."
                                 : "cudadiag_check.cu(1): catastrophic error: damaged\n1 error detected."}};
    Verification verification;
    verification.ran = true;
    verification.steps = {
        ok_step("nvrtc", "nvrtc", lib + "/libnvrtc.so.13",
                {{"version", "13.1"},
                 {"compile_check", check},
                 {"builtins",
                  {{"expected", "libnvrtc-builtins.so.13.1"},
                   {"path", loadable ? json(builtins) : json(nullptr)},
                   {"loadable", loadable},
                   {"error", loadable ? json(nullptr) : json("not found next to libnvrtc")}}}})};
    return evaluate_verification(world.discover(), verification);
  }
};

constexpr const char* k_builtin_failure = "NVRTC_ERROR_BUILTIN_OPERATION_FAILURE";

} // namespace

TEST_CASE("verification rules: nvrtc.builtins_not_on_search_path, a warning where CUDA Python preloads the "
          "builtins") {
  const CudaHomeToolkit toolkit("libnvrtc.so.13.1.80");
  const auto found = toolkit.evaluate(true, false, k_builtin_failure);
  const auto* finding = with_id(found, "nvrtc.builtins_not_on_search_path");
  REQUIRE(finding != nullptr);
  CHECK(finding->severity == Severity::warning);
  CHECK(finding->components == std::vector<std::string>{"nvrtc"});
  CHECK(finding->evidence.at("directory") == toolkit.lib);
  CHECK(finding->evidence.at("builtins").at("path") == toolkit.builtins);
  CHECK(finding->evidence.at("cuda_python_preload") == toolkit.builtins);
  CHECK(finding->evidence.at("compile_check").at("code") == 7);
  CHECK(finding->message.find(toolkit.lib) != std::string::npos);
  CHECK(finding->message.find("CUDA Python preloads it") != std::string::npos);
  CHECK(finding->remedy.find("/etc/ld.so.conf.d/") != std::string::npos);
  CHECK(finding->remedy.find(toolkit.builtins) != std::string::npos);
  CHECK(with_id(found, "nvrtc.builtins_missing") == nullptr);

  // A compile that worked, or failed for another reason, is no evidence of the search; builtins
  // that do not load beside NVRTC are nvrtc.builtins_missing's (an error: the compile failed).
  CHECK(with_id(toolkit.evaluate(true, true, ""), "nvrtc.builtins_not_on_search_path") == nullptr);
  CHECK(with_id(toolkit.evaluate(true, false, "NVRTC_ERROR_COMPILATION"),
                "nvrtc.builtins_not_on_search_path") == nullptr);
  const auto missing = toolkit.evaluate(false, false, k_builtin_failure);
  CHECK(with_id(missing, "nvrtc.builtins_not_on_search_path") == nullptr);
  REQUIRE(with_id(missing, "nvrtc.builtins_missing") != nullptr);
  CHECK(with_id(missing, "nvrtc.builtins_missing")->severity == Severity::error);
  // One finding explains a failed compile: the builtins' findings leave out nvrtc.compile_failed.
  CHECK(with_id(found, "nvrtc.compile_failed") == nullptr);
  CHECK(with_id(missing, "nvrtc.compile_failed") == nullptr);
}

TEST_CASE("verification rules: nvrtc.compile_failed when the compile check fails for a reason the builtins "
          "do not explain") {
  const CudaHomeToolkit toolkit("libnvrtc.so.13.1.80");
  const auto found = toolkit.evaluate(true, false, "NVRTC_ERROR_COMPILATION");
  const auto* finding = with_id(found, "nvrtc.compile_failed");
  REQUIRE(finding != nullptr);
  CHECK(finding->severity == Severity::error);
  CHECK(finding->components == std::vector<std::string>{"nvrtc"});
  CHECK(finding->evidence.at("compile_check").at("name") == "NVRTC_ERROR_COMPILATION");
  CHECK(finding->evidence.at("compile_check").at("step") == "nvrtcCompileProgram");
  // The message names the call, the result and the log's first line only.
  CHECK(finding->message.find("nvrtcCompileProgram returned NVRTC_ERROR_COMPILATION (6): "
                              "cudadiag_check.cu(1): catastrophic error: damaged") != std::string::npos);
  CHECK(finding->message.find('\n') == std::string::npos);
  CHECK(found.size() == 1);
  CHECK(with_id(toolkit.evaluate(true, true, ""), "nvrtc.compile_failed") == nullptr);
}

TEST_CASE(
    "verification rules: nvrtc.builtins_not_on_search_path is an error where CUDA Python preloads nothing") {
  // NVRTC's real file is libnvrtc.so.13 itself (a toolkit copied from a wheel): cuda-pathfinder
  // cannot name the builtins from it, so CUDA Python's compiles fail too.
  const CudaHomeToolkit toolkit("libnvrtc.so.13");
  const auto found = toolkit.evaluate(true, false, k_builtin_failure);
  const auto* finding = with_id(found, "nvrtc.builtins_not_on_search_path");
  REQUIRE(finding != nullptr);
  CHECK(finding->severity == Severity::error);
  CHECK(finding->evidence.at("cuda_python_preload").is_null());
  CHECK(finding->message.find("CUDA Python's too") != std::string::npos);
  CHECK(finding->remedy.find("libnvrtc.so.MAJOR.MINOR.PATCH") != std::string::npos);
}

TEST_CASE("verification rules: cccl.version_mismatch when CCCL's major is not NVRTC's CUDA major - 10") {
  Stack stack;
  stack.world.tree.write("tk/include/cuda/std/version", "// anchor\n");
  stack.world.tree.write("tk/include/cuda/std/__cccl/version.h", "#define CCCL_VERSION 2008002\n");
  stack.world.env.set("CUDA_HOME", stack.world.tree.path("tk"));
  const auto found =
      stack.evaluate({ok_step("nvrtc", "nvrtc", stack.path("libnvrtc.so.13"), {{"version", "13.0"}})});
  const auto* mismatch = with_id(found, "cccl.version_mismatch");
  REQUIRE(mismatch != nullptr);
  CHECK(mismatch->evidence.at("cccl") == "2.8.2");
}

TEST_CASE("verification rules: worker outcomes become verify.* findings naming the library") {
  Stack stack;
  LibraryStep crashed;
  crashed.id = "cuda";
  crashed.kind = "driver";
  crashed.path = stack.driver();
  crashed.status = cudadiag::worker::StepStatus::crashed;
  crashed.signal = 11;
  crashed.last_phase = "cuInit";
  crashed.detail = "killed by SIGSEGV while loading " + stack.driver() + " (in cuInit)";
  LibraryStep hung = crashed;
  hung.id = "nvml";
  hung.status = cudadiag::worker::StepStatus::timeout;
  hung.signal.reset();
  hung.detail = "did not finish within 1 s";
  auto not_loaded =
      ok_step("nvrtc", "nvrtc", stack.path("libnvrtc.so.13"),
              {{"loaded", false}, {"dlopen_error", "libgone.so: cannot open shared object file"}});
  auto missing = ok_step("nvJitLink", "nvjitlink", stack.path("libnvJitLink.so.13"),
                         {{"missing_symbols", json::array({"nvJitLinkVersion"})}});
  const auto found = stack.evaluate({crashed, hung, not_loaded, missing});
  const auto* crash = with_id(found, "verify.crashed");
  REQUIRE(crash != nullptr);
  CHECK(crash->message.find("SIGSEGV") != std::string::npos);
  CHECK(crash->evidence.at("phase") == "cuInit");
  CHECK(with_id(found, "verify.timeout") != nullptr);
  const auto* load = with_id(found, "verify.load_failed");
  REQUIRE(load != nullptr);
  CHECK(load->message.find("libgone.so") != std::string::npos);
  const auto* lacks = with_id(found, "verify.missing_symbols");
  REQUIRE(lacks != nullptr);
  // Words a terminal can wrap between, not a JSON array that breaks mid-word.
  CHECK(lacks->message.ends_with(" lacks 1 symbol: nvJitLinkVersion"));
}

TEST_CASE("verification rules: a crashing driver is one finding listing the workers it took down") {
  Stack stack;
  LibraryStep driver;
  driver.id = "cuda";
  driver.kind = "driver";
  driver.path = stack.driver();
  driver.status = cudadiag::worker::StepStatus::crashed;
  driver.signal = 11;
  driver.last_phase = "dlopen";
  driver.detail = "killed by SIGSEGV while loading " + stack.driver();
  LibraryStep nvrtc = driver;
  nvrtc.id = "nvrtc";
  nvrtc.kind = "nvrtc";
  nvrtc.path = stack.path("libnvrtc.so.13");
  nvrtc.detail = "killed by SIGSEGV while compiling";
  LibraryStep nvjitlink = nvrtc;
  nvjitlink.id = "nvJitLink";
  nvjitlink.kind = "nvjitlink";
  nvjitlink.path = stack.path("libnvJitLink.so.13");
  const auto found = stack.evaluate({driver, nvrtc, nvjitlink});
  CHECK(std::count_if(found.begin(), found.end(), [](const auto& f) { return f.id == "verify.crashed"; }) ==
        1);
  const auto* crash = with_id(found, "verify.crashed");
  REQUIRE(crash != nullptr);
  CHECK(crash->message.find("the driver library libcuda crashed") != std::string::npos);
  CHECK(crash->message.find("nvrtc, nvJitLink") != std::string::npos);
  CHECK(crash->components == std::vector<std::string>{"cuda", "nvrtc", "nvJitLink"});
  REQUIRE(crash->evidence.contains("also_broke"));
}

TEST_CASE("verification rules: a libcuda from a compat/ directory is reported as forward compatibility") {
  Stack stack;
  const auto found = stack.evaluate(
      {ok_step("cuda", "driver", "/usr/local/cuda/compat/libcuda.so.1", driver_result(0, 13000))});
  const auto* compat = with_id(found, "driver.forward_compat");
  REQUIRE(compat != nullptr);
  CHECK(compat->severity == Severity::info);
}
