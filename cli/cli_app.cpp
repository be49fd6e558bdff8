#include "cli_app.hpp"

#include "bundle_command.hpp"
#include "ci_options.hpp"
#include "diff_command.hpp"
#include "fleet_command.hpp"
#include "output.hpp"
#include "core/environment.hpp"
#include "core/filesystem.hpp"
#include "inspect/loaded_components.hpp"
#include "report/json_report.hpp"
#include "report/report.hpp"
#include "report/text_report.hpp"
#include "selftest/selftest.hpp"
#include "verify/worker.hpp"

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <functional>
#include <iostream>

namespace cudadiag::cli {
namespace {

constexpr int k_exit_usage = 2;
constexpr int k_exit_internal = 3;
constexpr int k_exit_not_found = 1;

struct GlobalOptions {
  bool json = false;
  bool no_color = false;
  int verbosity = 0;
  std::string log_level;
  std::string python;
  std::string ld_so_cache;
  std::string fail_on = "error";
  bool no_load = false;
  bool no_selftest = false;
  double timeout_seconds = 15;
};

struct SelftestCommandOptions {
  std::string level = "quick";
  std::string only;          // comma-separated test keys
  std::string device = "all"; // an ordinal or "all"
};

struct InspectOptions {
  int pid = 0;
};

struct FindOptions {
  std::string name;
  bool all = false;
  bool explain = false;
  bool headers = false;
};

void configure_logging(const GlobalOptions& options, const Environment& env) {
  const bool color = !options.no_color && !env.get("NO_COLOR");
  auto logger = spdlog::stderr_color_mt("cudadiag", color ? spdlog::color_mode::automatic : spdlog::color_mode::never);
  logger->sinks().push_back(error_recorder()); // for the JSON error document (output.hpp)
  spdlog::set_default_logger(logger);
  spdlog::set_formatter(safe_log_formatter()); // "cudadiag: LEVEL: message", escapes escaped
  auto level = options.verbosity >= 2 ? spdlog::level::debug
               : options.verbosity == 1 ? spdlog::level::info
                                        : spdlog::level::warn;
  if (!options.log_level.empty()) {
    level = spdlog::level::from_str(options.log_level);
  }
  spdlog::set_level(level);
}

report::TextStyle text_style(const GlobalOptions& options, const Environment& env) {
  const bool tty = ::isatty(STDOUT_FILENO) == 1;
  return report::TextStyle{tty && !options.no_color && !env.get("NO_COLOR")};
}

report::ReportOptions report_options(const GlobalOptions& options) {
  report::ReportOptions out;
  if (!options.python.empty()) {
    out.discovery.python_exe = options.python;
  }
  if (!options.ld_so_cache.empty()) {
    out.discovery.layout.ld_so_cache = options.ld_so_cache;
  }
  out.fail_on = options.fail_on == "warning" ? report::FailOn::warning : report::FailOn::error;
  return out;
}

// The full report loads the core libraries in isolated workers: this very executable, re-run.
void enable_verification(report::ReportOptions& settings, const GlobalOptions& options) {
  settings.verify.enabled = !options.no_load;
  settings.verify.step_timeout =
      std::chrono::milliseconds(static_cast<long long>(options.timeout_seconds * 1000.0));
  auto self = fs::real_path("/proc/self/exe");
  settings.verify.executable = self ? *self : std::string("/proc/self/exe");
}

// The GPU self-test: the default report runs the quick level when a GPU is usable; `selftest`
// runs what it is asked for (and says why a test cannot run when there is no GPU).
void enable_selftest(report::ReportOptions& settings, const GlobalOptions& options, const Environment& env) {
  settings.selftest.enabled = !options.no_load && !options.no_selftest;
  settings.selftest.require_gpu = true;
  settings.selftest.executable = settings.verify.executable;
  settings.selftest.startup_timeout = settings.verify.step_timeout;
  if (::isatty(STDERR_FILENO) == 1 && !options.json && env.get("CI").value_or("").empty()) {
    settings.selftest.progress = [](std::string_view line) {
      const auto safe = report::escape_controls(line, {}); // device names come from the driver
      std::fprintf(stderr, "cudadiag: self-test: %s\n", safe.c_str());
    };
  }
}

// Splits "a,b" into keys and checks each against the test catalog; "" when all are known.
std::string parse_test_keys(const std::string& list, std::vector<std::string>& keys) {
  std::string known;
  for (const auto& info : selftest::test_catalog()) {
    known += (known.empty() ? "" : ", ") + std::string(info.key);
  }
  std::size_t start = 0;
  while (start <= list.size()) {
    const auto comma = list.find(',', start);
    const auto key = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!key.empty()) {
      const auto& catalog = selftest::test_catalog();
      if (std::none_of(catalog.begin(), catalog.end(), [&key](const auto& info) { return info.key == key; })) {
        return "unknown self-test '" + key + "'; known: " + known;
      }
      keys.push_back(key);
    }
    if (comma == std::string::npos) {
      break;
    }
    start = comma + 1;
  }
  return {};
}

std::string known_names(std::optional<probes::ComponentKind> kind) {
  std::string out;
  for (const auto& spec : probes::catalog()) {
    if (!kind || spec.kind == *kind) {
      out += (out.empty() ? "" : ", ") + std::string(spec.name);
    }
  }
  return out;
}

// What the full report (and the bundle, which carries it) runs, under the policy's fail-on level.
report::ReportOptions full_report_settings(const GlobalOptions& options, const policy::Policy& policy,
                                           const Environment& env) {
  auto settings = report_options(options);
  enable_verification(settings, options);
  enable_selftest(settings, options, env);
  settings.fail_on = policy::stricter(settings.fail_on, policy.fail_on);
  return settings;
}

// Gates a finished report and prints it: policy findings join it before the summary and exit code
// are final; --junit/--html/--markdown files are written from the same document --json prints.
int gate_and_print(report::Report& report, const GlobalOptions& options, const CiOptions& ci, const policy::Policy& policy,
                   report::FailOn fail_on, const std::function<std::string(const report::Report&)>& render) {
  const auto document = gate_and_write(report, policy, fail_on, ci);
  if (!document) {
    spdlog::error("{}", document.error().message);
    return k_exit_usage;
  }
  const auto styled = styled_result(*document, report.summary.exit_code, options.json, ci);
  write_stdout(styled.status_line ? *styled.status_line
               : options.json     ? document->dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"
                                  : render(report));
  return styled.exit_code;
}

int run_report(const GlobalOptions& options, const CiOptions& ci, const policy::Policy& policy, const Environment& env) {
  const auto start = std::chrono::steady_clock::now();
  const auto settings = full_report_settings(options, policy, env);
  auto report = report::make_report(env, settings);
  spdlog::info("report took {:.2f} ms",
               std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  return gate_and_print(report, options, ci, policy, settings.fail_on,
                        [&](const report::Report& done) { return report::render_text(done, text_style(options, env)); });
}

int run_selftest_command(const GlobalOptions& options, const SelftestCommandOptions& command, const CiOptions& ci,
                         const policy::Policy& policy, const Environment& env) {
  auto settings = report_options(options);
  if (options.no_load) {
    spdlog::error("selftest runs code from the libraries it tests; it cannot be combined with --no-load");
    return k_exit_usage;
  }
  enable_verification(settings, options);
  enable_selftest(settings, options, env);
  settings.selftest.enabled = true;
  settings.selftest.require_gpu = false;
  settings.selftest.level = command.level == "full" ? selftest::Level::full : selftest::Level::quick;
  if (const auto problem = parse_test_keys(command.only, settings.selftest.only); !problem.empty()) {
    spdlog::error("{}", problem);
    return k_exit_usage;
  }
  if (command.device != "all") {
    int ordinal = -1;
    const auto* end = command.device.data() + command.device.size();
    if (std::from_chars(command.device.data(), end, ordinal).ptr != end || ordinal < 0) {
      spdlog::error("--device takes a device ordinal (0, 1, ...) or 'all', not '{}'", command.device);
      return k_exit_usage;
    }
    settings.selftest.device = ordinal;
  }
  settings.fail_on = policy::stricter(settings.fail_on, policy.fail_on);
  auto report = report::make_report(env, settings);
  // The same CI gates as the report: `selftest --require selftest.sort>=30Gkeys --junit FILE`.
  return gate_and_print(report, options, ci, policy, settings.fail_on, [&](const report::Report& done) {
    return report::render_selftest_text(done, text_style(options, env));
  });
}

int run_find(const GlobalOptions& options, const FindOptions& find, const Environment& env) {
  const auto kind = find.headers ? std::optional(probes::ComponentKind::headers) : std::nullopt;
  const auto* spec = probes::find_component(find.name, kind);
  if (spec == nullptr) {
    spdlog::error("unknown component '{}'; known: {}", find.name, known_names(kind));
    return k_exit_usage;
  }
  auto settings = report_options(options);
  settings.discovery.only = {find.name};
  auto report = report::make_report(env, settings);
  // Keep only the asked-for component (a name may exist as library and headers).
  auto& components = report.discovery.components;
  std::erase_if(components, [spec](const auto& component) { return component.spec != spec; });
  std::erase_if(report.findings, [spec](const auto& finding) {
    return !finding.components.empty() &&
           std::find(finding.components.begin(), finding.components.end(), spec->name) == finding.components.end();
  });
  report.summary = report::summarize(report.findings, settings.fail_on);
  const auto& component = components.front();
  const auto path = report::chosen_path(component);
  const int code = path.empty() ? k_exit_not_found : 0;
  if (options.json) {
    write_stdout(report::render_json(report));
    return code;
  }
  const auto style = text_style(options, env);
  if (find.explain) {
    write_stdout(report::render_explanation(component, style));
  } else if (find.all) {
    write_stdout(report::render_candidates(component, style));
  } else if (!path.empty()) {
    write_stdout(report::escape_controls(report::to_valid_utf8(path), {}) + "\n");
  }
  if (path.empty()) {
    spdlog::warn("{} not found (run `cudadiag find --explain {}` for the search trace)", find.name, find.name);
  }
  return code;
}

int run_inspect(const GlobalOptions& options, const InspectOptions& inspect, const Environment& env) {
  auto inspection = inspect::inspect_process(inspect.pid);
  if (!inspection) {
    spdlog::error("{}", inspection.error().message);
    return k_exit_not_found;
  }
  if (options.json) {
    write_stdout(inspect::inspection_to_json(*inspection).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
                 "\n");
  } else {
    write_stdout(inspect::render_inspection_text(*inspection));
  }
  (void)env;
  const bool errors = std::any_of(inspection->findings.begin(), inspection->findings.end(),
                                  [](const auto& finding) { return finding.severity == findings::Severity::error; });
  return errors ? 1 : 0;
}

int run_command(int argc, char** argv) {
  try {
    CLI::App app{"cudadiag: which CUDA components will this process load, and do they agree?", "cudadiag"};
    app.set_version_flag("--version", std::string("cudadiag ") + CUDADIAG_VERSION);
    GlobalOptions options;
    app.add_flag("--json", options.json, "Print the report as JSON (schema_version 1) on stdout");
    app.add_flag("--no-color", options.no_color, "Never colour the output (also: NO_COLOR set, or stdout not a TTY)");
    app.add_flag("-v,--verbose", options.verbosity, "More log output on stderr (repeat for debug)");
    app.add_option("--log-level", options.log_level, "Log level on stderr: trace, debug, info, warn, error, off")
        ->check(CLI::IsMember({"trace", "debug", "info", "warn", "warning", "error", "critical", "off"}));
    app.add_option("--python", options.python,
                   "Use this Python interpreter's site-packages (runs it once to ask; default: found without running Python)");
    app.add_option("--ld-so-cache", options.ld_so_cache, "Read this loader cache instead of /etc/ld.so.cache");
    app.add_option("--fail-on", options.fail_on, "Exit 1 on findings of this severity or worse")
        ->check(CLI::IsMember({"error", "warning"}));
    app.add_flag("--no-load", options.no_load,
                 "Inspect files only: load no library, run no code from them (skips verification)");
    app.add_option("--timeout", options.timeout_seconds, "Seconds each library may take to load and answer (default 15)")
        ->check(CLI::Range(0.1, 3600.0));
    app.add_flag("--no-selftest", options.no_selftest,
                 "Skip the quick GPU self-test the report runs when a GPU is usable");

    FindOptions find;
    auto* find_command = app.add_subcommand("find", "Print the path of one component (exit 1 if not found)");
    find_command->add_option("name", find.name, "Component name as cuda-pathfinder spells it (nvrtc, nvJitLink, cccl, nvcc, ...)")
        ->required();
    find_command->add_flag("--all", find.all, "List every candidate, one per line");
    find_command->add_flag("--explain", find.explain, "Show the search trace and why the answer was chosen");
    find_command->add_flag("--headers", find.headers, "Look for the header set of that name (e.g. cudart headers)");
    find_command->fallthrough();

    InspectOptions inspect;
    auto* inspect_command =
        app.add_subcommand("inspect", "List the CUDA libraries a running process has mapped (exit 1 on an error finding)");
    inspect_command->add_option("--pid", inspect.pid, "The process to inspect")->required()->check(CLI::PositiveNumber);
    inspect_command->fallthrough();
    SelftestCommandOptions selftest_options;
    auto* selftest_command = app.add_subcommand(
        "selftest", "Run the GPU self-test: JIT chain, bundled PTX, CUB reduce/sort, IPC, green contexts (exit 1 on a failure)");
    selftest_command->add_option("--level", selftest_options.level, "quick (default; a few seconds) or full (2^28+ elements; under a minute)")
        ->check(CLI::IsMember({"quick", "full"}));
    selftest_command->add_option("--only", selftest_options.only, "Comma-separated tests: jit, ptx, reduce, sort, ipc, green_ctx");
    selftest_command->add_option("--device", selftest_options.device, "A CUDA device ordinal, or 'all' (default; one worker per GPU)");
    selftest_command->fallthrough();
    CiOptions ci;
    add_ci_options(app, ci);
    BundleCommandOptions bundle_options;
    auto* bundle_command = add_bundle_command(app, bundle_options);
    DiffCommandOptions diff_options;
    auto* diff_command = add_diff_command(app, diff_options);
    FleetCommandOptions fleet_options;
    auto* fleet_command = add_fleet_command(app, fleet_options);
    app.require_subcommand(0, 1);

    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& error) {
      const int code = app.exit(error);
      if (code == 0) {
        note_stdout_written(); // --help, --version
        return 0;
      }
      record_error(error.what());
      return k_exit_usage;
    }
    const auto env = Environment::capture();
    configure_logging(options, env);
    const auto policy = load_policy(ci);
    if (!policy) {
      spdlog::error("{}", policy.error().message);
      return k_exit_usage;
    }
    if (ci.any() && !bundle_command->parsed() && !selftest_command->parsed() && app.get_subcommands().size() == 1) {
      spdlog::error("--require, --policy, --junit, --html, --markdown, --prometheus and --exit-style apply to the report, `bundle` and `selftest` only");
      return k_exit_usage;
    }
    if (fleet_command->parsed()) {
      return run_fleet(fleet_options, options.json, text_style(options, env));
    }
    if (diff_command->parsed()) {
      return run_diff(diff_options, options.json, text_style(options, env));
    }
    if (bundle_command->parsed()) {
      return run_bundle(full_report_settings(options, *policy, env), *policy, ci, bundle_options, options.json, env);
    }
    if (find_command->parsed()) {
      return run_find(options, find, env);
    }
    if (inspect_command->parsed()) {
      return run_inspect(options, inspect, env);
    }
    if (selftest_command->parsed()) {
      return run_selftest_command(options, selftest_options, ci, *policy, env);
    }
    return run_report(options, ci, *policy, env);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "cudadiag: internal error: %s\n", error.what());
    record_error(std::string("internal error: ") + error.what());
    return k_exit_internal;
  } catch (...) {
    std::fprintf(stderr, "cudadiag: internal error\n");
    record_error("internal error");
    return k_exit_internal;
  }
}

} // namespace

int run(int argc, char** argv) {
  if (argc >= 2 && std::string_view(argv[1]) == "__worker") {
    return verify::worker_main(argc, argv);  // the isolated child of verification; see verify/worker.hpp
  }
  ignore_sigpipe();
  return finish_output(run_command(argc, argv), json_requested(argc, argv));
}

} // namespace cudadiag::cli
