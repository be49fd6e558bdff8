// The bundle's content: every file present and listed in the manifest, raw evidence from the
// configured sources, and no planted secret anywhere — in any file, in any form.
#include "bundle/bundle.hpp"
#include "bundle/gzip.hpp"
#include "bundle/tar_archive.hpp"
#include "core/filesystem.hpp"
#include "report/json_report.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>

#include <set>

namespace {

using cudadiag::Environment;
using nlohmann::json;
namespace bundle = cudadiag::bundle;

constexpr const char* k_token = "tok_PLANTED_0123456789";
constexpr const char* k_password = "pw-PLANTED-9876";
constexpr const char* k_multiline = "PLANTED-line1\nPLANTED-line2";

json example_report() {
  const auto text =
      cudadiag::fs::read_file_prefix(CUDADIAG_SOURCE_DIR "/docs/examples/h200-host-report.json", 1U << 24U);
  REQUIRE(text);
  return json::parse(*text);
}

struct PlantedWorld {
  cudadiag::testing::TempTree tree;
  Environment env;
  bundle::BundleOptions options;

  PlantedWorld() {
    env.set("HF_TOKEN", k_token);
    env.set("NVIDIA_API_KEY", k_token);
    env.set("DB_PASSWORD", k_password);
    env.set("MULTI_SECRET", k_multiline);
    env.set("PIP_INDEX_URL", std::string("https://user:") + k_password + "@pypi.example.com/simple");
    env.set("LD_LIBRARY_PATH", std::string("/opt/") + k_token +
                                   "/lib\n:/odd\xff"
                                   "dir");
    env.set("CUDA_HOME", "/usr/local/cuda");
    env.set("PATH", tree.path("bin"));
    env.set("HOME", "/home/alice");
    env.set("USER", "alice");
    env.cwd = tree.root();
    // nvidia-smi that prints the secret and a credential URL.
    tree.write("bin/nvidia-smi",
               std::string("#!/bin/sh\necho \"Driver Version: 580.95.05\"\necho \"token $HF_TOKEN\"\n"
                           "echo \"proxy https://bob:") +
                   k_password + "@proxy:3128\"\n",
               0755);
    options.sources.proc_driver_version = tree.write("proc/version", "NVRM version: 580.95.05\n");
    options.sources.os_release = tree.write("etc/os-release", "PRETTY_NAME=\"Test OS\"\nID=test\n");
    options.sources.proc_driver_gpus = tree.mkdir("proc/gpus");
    options.sources.proc_version = tree.write("proc/kernel-version", "Linux version 6.1\n");
    options.sources.cpuinfo = tree.write("proc/cpuinfo", "flags : fpu hypervisor\n");
    options.sources.init_cgroup = tree.write("proc/1/cgroup", "0::/\n");
    options.sources.container_markers = {tree.path("dockerenv")};
    options.sources.dmi_dir = tree.mkdir("dmi");
    options.sources.dev_dir = tree.mkdir("dev");
    tree.write("dev/nvidia0", "");
    options.created_unix = 1764670272;
  }
};

// The report as it would be made in that environment: the variables it shows carry the secrets.
json planted_report(const Environment& env) {
  auto report = example_report();
  report["environment"]["variables"]["LD_LIBRARY_PATH"] =
      cudadiag::report::to_valid_utf8(*env.get("LD_LIBRARY_PATH"));
  report["environment"]["variables"]["CUDA_MODULE_LOADING"] = k_multiline;
  report["environment"]["variables"]["PYTHONPATH"] = std::string("https://x:") + k_password + "@host/";
  report["findings"][0]["message"] = std::string("copy under /opt/") + k_token + "/lib";
  return report;
}

void check_no_secret(const std::string& where, const std::string& content) {
  for (const std::string_view secret : {k_token, k_password, "PLANTED-line1", "PLANTED-line2"}) {
    CHECK_MESSAGE(content.find(secret) == std::string::npos, where << " contains " << secret);
  }
}

} // namespace

TEST_CASE("bundle: every file is there, listed in the manifest with how it was obtained") {
  PlantedWorld world;
  const auto assembled = bundle::assemble_bundle(planted_report(world.env), world.env, world.options);
  std::set<std::string> names;
  for (const auto& file : assembled.files) {
    names.insert(file.name);
  }
  for (const char* name :
       {"manifest.json", "report.json", "report.md", "report.html", "trace.txt", "evidence/environment.txt",
        "evidence/proc-driver-nvidia-version.txt", "evidence/nvidia-smi-q.txt", "evidence/ld-so-cache.txt",
        "evidence/python-packages.txt", "evidence/os.txt"}) {
    CHECK_MESSAGE(names.count(name) == 1, name);
  }
  REQUIRE(assembled.files.front().name == "manifest.json");
  const auto manifest = json::parse(assembled.files.front().content);
  CHECK(manifest["bundle_format"] == 1);
  CHECK(manifest["files"].size() == assembled.files.size() - 1);
  for (const auto& entry : manifest["files"]) {
    CHECK_FALSE(entry["source"].get<std::string>().empty());
  }
  CHECK(manifest["redaction"]["withheld_variables"] ==
        json::array({"DB_PASSWORD", "HF_TOKEN", "MULTI_SECRET", "NVIDIA_API_KEY"}));
  CHECK(manifest["redaction"]["paths_redacted"] == false);

  const auto smi = std::find_if(assembled.files.begin(), assembled.files.end(),
                                [](const auto& file) { return file.name == "evidence/nvidia-smi-q.txt"; });
  REQUIRE(smi != assembled.files.end());
  CHECK(smi->content.find("Driver Version: 580.95.05") != std::string::npos);
  CHECK(smi->source.find("exit 0") != std::string::npos);
  const auto os = std::find_if(assembled.files.begin(), assembled.files.end(),
                               [](const auto& file) { return file.name == "evidence/os.txt"; });
  CHECK(os->content.find("PRETTY_NAME=\"Test OS\"") != std::string::npos);
  CHECK(os->content.find("hypervisor flag: yes") != std::string::npos);
  CHECK(os->content.find("nvidia0") != std::string::npos);
}

TEST_CASE("bundle: no planted secret survives anywhere, and the manifest says what was redacted") {
  PlantedWorld world;
  const auto assembled = bundle::assemble_bundle(planted_report(world.env), world.env, world.options);
  for (const auto& file : assembled.files) {
    check_no_secret(file.name, file.content);
  }
  const auto manifest = json::parse(assembled.files.front().content);
  CHECK(manifest["redaction"]["replacements"]["secret_values"].get<int>() >= 4);
  CHECK(manifest["redaction"]["replacements"]["url_credentials"].get<int>() >= 3);
  const auto environment = std::find_if(assembled.files.begin(), assembled.files.end(), [](const auto& file) {
    return file.name == "evidence/environment.txt";
  });
  CHECK(environment->content.find("NVIDIA_API_KEY=<redacted>") != std::string::npos);
  CHECK(environment->content.find("PIP_INDEX_URL=https://<redacted>@pypi.example.com/simple") !=
        std::string::npos);
  // A value with a newline and an invalid byte stays on one line, escaped.
  CHECK(environment->content.find("LD_LIBRARY_PATH=/opt/<redacted:HF_TOKEN>/lib\\n:/odd\\xffdir") !=
        std::string::npos);
  // The user name and home are kept unless asked.
  CHECK(environment->content.find("HOME=/home/alice") != std::string::npos);
}

TEST_CASE("bundle: --redact-paths hides the home directory and user name in every file") {
  PlantedWorld world;
  world.options.redaction.paths = true;
  auto report = planted_report(world.env);
  report["environment"]["cwd"] = "/home/alice/project";
  const auto assembled = bundle::assemble_bundle(report, world.env, world.options);
  for (const auto& file : assembled.files) {
    CHECK_MESSAGE(file.content.find("alice") == std::string::npos, file.name);
  }
}

TEST_CASE("bundle: the archive holds the files under one directory and is written atomically") {
  PlantedWorld world;
  world.options.output = world.tree.path("out/support.tar.gz");
  world.tree.mkdir("out");
  const auto written = bundle::write_bundle(planted_report(world.env), world.env, world.options);
  REQUIRE(written);
  CHECK(written->path == world.options.output);
  const auto bytes = cudadiag::fs::read_file_prefix(written->path, 1U << 26U).value();
  CHECK(bytes.size() == written->bytes);
  check_no_secret("the compressed archive", bytes);
  const auto entries = bundle::read_tar(bundle::gzip_decompress(bytes, 1U << 28U).value()).value();
  std::set<std::string> names;
  for (const auto& entry : entries) {
    names.insert(entry.name);
    check_no_secret(entry.name, entry.content);
  }
  CHECK(names.count("support/") == 1);
  CHECK(names.count("support/report.json") == 1);
  CHECK(names.count("support/evidence/nvidia-smi-q.txt") == 1);
  CHECK(cudadiag::fs::list_directory(world.tree.path("out")).value() ==
        std::vector<std::string>{"support.tar.gz"});

  world.options.output = world.tree.path("missing-dir/x.tar.gz");
  const auto failed = bundle::write_bundle(planted_report(world.env), world.env, world.options);
  REQUIRE_FALSE(failed);
  CHECK(failed.error().message.find("missing-dir") != std::string::npos);
}

TEST_CASE("bundle: evidence that cannot be collected is listed with the reason") {
  PlantedWorld world;
  world.options.sources.proc_driver_version = world.tree.path("no-driver/version");
  world.env.set("PATH", world.tree.path("empty"));
  const auto assembled = bundle::assemble_bundle(planted_report(world.env), world.env, world.options);
  std::set<std::string> missing;
  for (const auto& item : assembled.not_collected) {
    missing.insert(item.what);
  }
  CHECK(missing.count(world.tree.path("no-driver/version")) == 1);
  CHECK(missing.count("nvidia-smi -q") == 1);
  const auto manifest = json::parse(assembled.files.front().content);
  CHECK(manifest["not_collected"].size() == assembled.not_collected.size());
}

TEST_CASE("bundle: default file name from the host and the time (UTC)") {
  const json report = {{"host", {{"hostname", "gpu node/1"}}}};
  CHECK(bundle::default_bundle_name(report, 1764670272) ==
        "cudadiag-bundle-gpu-node-1-20251202-101112.tar.gz");
}
