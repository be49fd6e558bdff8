#include "ci_options.hpp"

#include <algorithm>

namespace cudadiag::cli {

bool CiOptions::any() const {
  return !requirements.empty() || !policy_file.empty() || exit_style != "cudadiag" || expect_gpus > 0 ||
         std::any_of(files.begin(), files.end(), [](const auto& file) { return !file.second.empty(); });
}

void add_ci_options(CLI::App& app, CiOptions& options) {
  // One value per occurrence, collected as each is parsed (a vector option would also take the
  // words after it, and trips GCC 12's -Wnull-dereference inside CLI11 2.1).
  app.add_option_function<std::string>(
         "--require", [&options](const std::string& spec) { options.requirements.push_back(spec); },
         "CI gate, repeatable: nvrtc>=12.4, cccl, driver>=580, selftest.sort>=30Gkeys, no-errors, ... "
         "(an unmet one is a policy.unmet error finding)")
      ->trigger_on_parse()
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->type_name("SPEC");
  app.add_option(
         "--policy", options.policy_file,
         "CI gates from a file (JSON or TOML): require = [SPEC, ...], fail_on = \"error\"|\"warning\"")
      ->type_name("FILE");
  app.add_option(
         "--expect-gpus", options.expect_gpus,
         "The GPUs this node must show: fewer at the PCI bus, the driver, NVML or CUDA is a gpu.missing "
         "error naming the layer that lost them")
      ->check(CLI::Range(1, 4096))
      ->type_name("N");
  for (const auto& format : cli_support::output_formats()) {
    app.add_option(format.flag, options.files[format.flag], format.help)->type_name("FILE");
  }
  app.add_option("--exit-style", options.exit_style,
                 "Exit codes for a health framework: cudadiag (default), npd (0 ok, 1 problem, 2 unknown) or "
                 "nagios (0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN); npd and nagios print one status line")
      ->check(CLI::IsMember({"cudadiag", "npd", "nagios"}));
}

std::string ci_option_names() {
  std::string names = "--require, --policy, --expect-gpus";
  for (const auto& format : cli_support::output_formats()) {
    names += ", " + format.flag;
  }
  return names + " and --exit-style";
}

cli_support::RunExtras run_extras(const CiOptions& options) {
  cli_support::RunExtras extras;
  extras.requirements = options.requirements;
  extras.policy_file = options.policy_file;
  if (options.expect_gpus > 0) {
    extras.expect_gpus = static_cast<std::size_t>(options.expect_gpus);
  }
  return extras;
}

std::vector<cli_support::OutputFile> output_files(const CiOptions& options) {
  std::vector<cli_support::OutputFile> files;
  for (const auto& [flag, path] : options.files) {
    if (!path.empty()) {
      files.push_back({flag, path});
    }
  }
  return files;
}

} // namespace cudadiag::cli
