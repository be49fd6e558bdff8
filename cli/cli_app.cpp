#include "cli_app.hpp"

#include "bundle_command.hpp"
#include "ci_options.hpp"
#include "cli_support/cli_support.hpp"
#include "core/timeline.hpp"
#include "cudadiag/cudadiag.hpp"
#include "diff_command.hpp"
#include "exit_codes.hpp"
#include "fleet_command.hpp"
#include "help.hpp"
#include "output.hpp"

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <sys/ioctl.h>
#include <system_error>

namespace cudadiag::cli {
namespace {

struct GlobalOptions {
  bool json = false;
  bool no_color = false;
  std::string color = "auto"; // --color auto|always|never
  int width = 0;              // --width N; 0: the terminal's, else COLUMNS, else 80
  int verbosity = 0;
  bool full = false; // --full: the report's details layer
  std::string log_level;
  std::string python;
  std::string ld_so_cache;
  std::string ld_so_conf;
  std::string root;             // --root DIR
  std::string image;            // --image REF
  std::string assume_driver;    // --assume-driver VERSION
  std::string assume_gpu;       // --assume-gpu sm_NN,brand=NAME
  std::string env_file;         // --env-file FILE
  std::vector<std::string> env; // --env KEY=VALUE, repeated
  std::string fail_on = "error";
  bool no_load = false;
  bool no_load_check = false;        // --no-load-check
  bool no_cache = false;             // --no-cache
  bool verify_record_hashes = false; // --verify-record-hashes
  bool no_selftest = false;
  double timeout_seconds = 15;
  std::string context;    // --context interactive|ci|fleet; "": from the environment
  bool exclusive = false; // --exclusive
};

struct SelftestCommandOptions {
  std::string level = "quick";
  std::string only;           // comma-separated test keys
  std::string device = "all"; // an ordinal or "all"
};

// The largest number a process id (pid_t) can hold; one above the machine's pid_max is a well-formed
// id that names no process (exit 1), one above this is no id at all (exit 2).
constexpr long long k_max_pid = std::numeric_limits<pid_t>::max();

struct InspectOptions {
  int pid = 0;
};

struct ExplainOptions {
  std::string id;
};

struct CompletionOptions {
  std::string shell;
};

// The values of the options that take one of a fixed set (checked by CLI11, offered by completion).
const std::vector<std::string> k_color_modes = {"auto", "always", "never"};
const std::vector<std::string> k_log_levels = {"trace",   "debug", "info",     "warn",
                                               "warning", "error", "critical", "off"};
const std::vector<std::string> k_severities = {"error", "warning"};
const std::vector<std::string> k_levels = {"quick", "full"};
const std::vector<std::string> k_contexts = {"interactive", "ci", "fleet"};
const std::vector<std::string> k_shells = {"bash", "zsh", "fish"};

struct FindOptions {
  std::string name;
  bool all = false;
  bool explain = false;
  bool headers = false;
  std::string for_framework; // --for: the copy this framework's own library binds
};

// The environment as the CLI reads it, once: colour, width and CI rules only (the report's own
// snapshot is captured by the library).
bool variable_non_empty(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0';
}

// TERM=dumb: a terminal that understands no escape sequence (no colour, no live line).
bool dumb_terminal() {
  const char* term = std::getenv("TERM");
  return term != nullptr && std::string_view(term) == "dumb";
}

// Colour on `fd`: --color always|never (--no-color is never) decide; auto colours a terminal
// unless NO_COLOR is set to a non-empty value (no-color.org) or TERM is "dumb".
bool color_on(const GlobalOptions& options, int fd) {
  if (options.no_color || options.color == "never") {
    return false;
  }
  if (options.color == "always") {
    return true;
  }
  return ::isatty(fd) == 1 && !variable_non_empty("NO_COLOR") && !dumb_terminal();
}

bool color(const GlobalOptions& options) {
  return color_on(options, STDOUT_FILENO);
}

// The width text output fits: --width, else the terminal's (TIOCGWINSZ on stdout), else COLUMNS,
// else 80.
std::size_t output_width(const GlobalOptions& options) {
  if (options.width > 0) {
    return static_cast<std::size_t>(options.width);
  }
  struct winsize size {};
  if (::isatty(STDOUT_FILENO) == 1 && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) {
    return std::max<std::size_t>(size.ws_col, cli_support::k_min_width);
  }
  if (const char* columns = std::getenv("COLUMNS"); columns != nullptr) {
    int value = 0;
    const auto* end = columns + std::strlen(columns);
    if (std::from_chars(columns, end, value).ptr == end && value > 0) {
      return std::clamp<std::size_t>(static_cast<std::size_t>(value), cli_support::k_min_width, 1000);
    }
  }
  return cli_support::k_default_width;
}

// The check of an option that takes a whole number from `low` to `high`: CLI11's message becomes
// "NAME: `VALUE` is not WHAT from LOW to HIGH" (no range in floating point, no guess at another option).
CLI::Validator whole_number(std::string what, long long low, long long high) {
  return CLI::Validator(
      [what, low, high](const std::string& value) -> std::string {
        long long number = 0;
        const auto* end = value.data() + value.size();
        const auto parsed = std::from_chars(value.data(), end, number);
        if (parsed.ec == std::errc() && parsed.ptr == end && number >= low && number <= high) {
          return {};
        }
        return "`" + value + "` is not " + what + " from " + std::to_string(low) + " to " +
               std::to_string(high);
      },
      what);
}

// The check of an option whose value names a file or program: an empty value is a mistake, not "the default".
CLI::Validator non_empty(std::string what) {
  return CLI::Validator(
      [what](const std::string& value) -> std::string {
        return value.empty() ? "takes " + what + ", not an empty string" : std::string();
      },
      what);
}

cli_support::Terminal terminal(const GlobalOptions& options) {
  return {color(options), output_width(options), options.full || options.verbosity > 0};
}

void configure_logging(const GlobalOptions& options) {
  const bool paint = color_on(options, STDERR_FILENO);
  auto logger =
      spdlog::stderr_color_mt("cudadiag", paint ? spdlog::color_mode::always : spdlog::color_mode::never);
  logger->sinks().push_back(error_recorder()); // for the JSON error document (output.hpp)
  spdlog::set_default_logger(logger);
  spdlog::set_formatter(safe_log_formatter()); // "cudadiag: LEVEL: message", escapes escaped
  auto level = options.verbosity >= 2   ? spdlog::level::debug
               : options.verbosity == 1 ? spdlog::level::info
                                        : spdlog::level::warn;
  if (!options.log_level.empty()) {
    level = spdlog::level::from_str(options.log_level);
  }
  spdlog::set_level(level);
}

// The worker every loading stage re-runs: this very executable.
std::string self_executable() {
  char* real = ::realpath("/proc/self/exe", nullptr);
  if (real == nullptr) {
    return "/proc/self/exe";
  }
  std::string path(real);
  std::free(real);
  return path;
}

// One KEY=VALUE of --env or --env-file (docker's format: a line without '=' names no value and is
// refused, as the caller's value would leak in); `where` names it in the error.
void add_variable(std::map<std::string, std::optional<std::string>>& out, std::string_view line,
                  const std::string& where) {
  const auto equals = line.find('=');
  if (equals == 0 || equals == std::string_view::npos) {
    throw Exception(where + ": expected KEY=VALUE, not \"" + std::string(line) + "\"");
  }
  out[std::string(line.substr(0, equals))] = std::string(line.substr(equals + 1));
}

// The run's whole environment when --env-file or --env gives it: the file's lines (blank ones and
// '#' comments skipped), then --env's; nullopt: this process's.
std::optional<std::map<std::string, std::optional<std::string>>>
given_environment(const GlobalOptions& options) {
  if (options.env_file.empty() && options.env.empty()) {
    return std::nullopt;
  }
  std::map<std::string, std::optional<std::string>> out;
  if (!options.env_file.empty()) {
    std::FILE* file = std::fopen(options.env_file.c_str(), "re");
    if (file == nullptr) {
      throw Exception("--env-file " + options.env_file + ": " + std::strerror(errno));
    }
    std::string text;
    std::array<char, 4096> chunk{};
    std::size_t got = 0;
    while ((got = std::fread(chunk.data(), 1, chunk.size(), file)) > 0 && text.size() < (1U << 20U)) {
      text.append(chunk.data(), got);
    }
    std::fclose(file);
    std::istringstream lines(text);
    std::string line;
    for (int number = 1; std::getline(lines, line); ++number) {
      if (!line.empty() && line.back() == '\r') {
        line.pop_back();
      }
      if (line.empty() || line.front() == '#') {
        continue;
      }
      add_variable(out, line, "--env-file " + options.env_file + ":" + std::to_string(number));
    }
  }
  for (const auto& item : options.env) {
    add_variable(out, item, "--env");
  }
  return out;
}

Options api_options(const GlobalOptions& options) {
  Options out;
  out.python = options.python;
  out.ld_so_cache = options.ld_so_cache;
  out.ld_so_conf = options.ld_so_conf;
  // Without a root the configuration is this machine's file, which must exist; under one it is the
  // root's, looked up there.
  if (options.root.empty() && options.image.empty() && !options.ld_so_conf.empty() &&
      ::access(options.ld_so_conf.c_str(), F_OK) != 0) {
    throw Exception("--ld-so-conf: File does not exist: " + options.ld_so_conf);
  }
  out.root = options.root;
  out.image = options.image;
  out.assume_driver = options.assume_driver;
  out.assume_gpu = options.assume_gpu;
  if (auto environment = given_environment(options)) {
    out.inherit_environment = false;
    out.environment = std::move(*environment);
  }
  out.fail_on_warning = options.fail_on == "warning";
  out.timeout_seconds = options.timeout_seconds;
  out.executable = self_executable();
  if (!options.context.empty()) {
    out.context = options.context == "fleet" ? Context::fleet
                  : options.context == "ci"  ? Context::ci
                                             : Context::interactive;
  }
  out.exclusive = options.exclusive;
  out.load_check = !options.no_load_check;
  out.verify_record_hashes = options.verify_record_hashes;
  out.cache = options.no_cache ? Cache::off : Cache::read_write;
  return out;
}

// A live progress line on stderr for a person watching a terminal: not with --json, not in CI,
// not when -v or --log-level asks for log lines instead.
bool live_progress(const GlobalOptions& options) {
  return ::isatty(STDERR_FILENO) == 1 && !options.json && !variable_non_empty("CI") && !dumb_terminal() &&
         options.verbosity == 0 && options.log_level.empty();
}

// Feedback while a run works: the live line, or log lines (-v: stages and self-test lines, -vv:
// search steps and worker messages, --log-level trace: every file examined).
void attach_feedback(cli_support::RunExtras& extras, ProgressLine& line, bool live) {
  if (live) {
    extras.progress = [&line](std::string_view text) { line.update("self-test: " + std::string(text)); };
    extras.activity = [&line](std::string_view text) { line.update(std::string(text) + " …"); };
  } else if (spdlog::should_log(spdlog::level::info)) {
    extras.progress = [](std::string_view text) { spdlog::info("self-test: {}", text); };
  }
  if (spdlog::should_log(spdlog::level::info)) {
    extras.log = [](int detail, std::string_view message) {
      spdlog::log(detail <= 1   ? spdlog::level::info
                  : detail == 2 ? spdlog::level::debug
                                : spdlog::level::trace,
                  "{}", message);
    };
  }
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) {
    out += (out.empty() ? "" : ", ") + item;
  }
  return out;
}

// Splits "a,b" into keys and checks each against the self-tests; "" when all are known.
std::string parse_test_keys(const std::string& list, std::vector<std::string>& keys) {
  const auto known = cli_support::self_test_keys();
  std::size_t start = 0;
  while (start <= list.size()) {
    const auto comma = list.find(',', start);
    const auto key = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!key.empty()) {
      if (std::find(known.begin(), known.end(), key) == known.end()) {
        return "unknown self-test '" + key + "'; known: " + joined(known);
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

// What the full report (and the bundle, which carries it) runs: verification unless --no-load,
// then the quick self-test when a GPU is usable unless --no-selftest.
cli_support::RunExtras full_report(const GlobalOptions& options, const CiOptions& ci) {
  cli_support::RunExtras extras = run_extras(ci);
  extras.stages = options.no_load       ? cli_support::Stages::discover
                  : options.no_selftest ? cli_support::Stages::verify
                                        : cli_support::Stages::self_test;
  extras.self_test_needs_gpu = true;
  return extras;
}

// The report of a run, left to the operating system on purpose (this runs once per process; the
// pointer is kept in a static, so that leak checkers see it reachable): the process ends right after
// printing it, and freeing the report's many strings one by one took longer than the kernel
// unmapping the heap.
const Report& run_kept(const GlobalOptions& options, const cli_support::RunExtras& extras) {
  static const Report* kept = nullptr;
  const timeline::Span span("report");
  kept = new Report(cli_support::run(api_options(options), extras));
  return *kept;
}

// Writes the --junit/--html/--markdown files, then prints the report; its exit code.
int print_report(const Report& report, const GlobalOptions& options, const CiOptions& ci,
                 const std::function<std::string(const Report&)>& render) {
  if (const auto problem = cli_support::write_outputs(report, output_files(ci))) {
    spdlog::error("{}", *problem);
    return k_exit_usage;
  }
  const auto start = std::chrono::steady_clock::now();
  const timeline::Span span("output");
  const auto styled = cli_support::styled_exit(report, ci.exit_style, options.json);
  std::size_t bytes = 0;
  if (!styled.status_line && options.json) {
    // Half a megabyte for the whole catalog: written piece by piece as it was rendered.
    const auto pieces = cli_support::render_json_pieces(report);
    for (const auto& piece : pieces) {
      bytes += piece.size();
    }
    write_stdout(pieces);
  } else {
    const auto text = styled.status_line ? *styled.status_line : render(report);
    bytes = text.size();
    write_stdout(text);
  }
  spdlog::info("output: {:.2f} ms ({} bytes)",
               std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count(),
               bytes);
  return styled.exit_code;
}

int run_report(const GlobalOptions& options, const CiOptions& ci) {
  const auto start = std::chrono::steady_clock::now();
  auto extras = full_report(options, ci);
  ProgressLine line(live_progress(options), output_width(options));
  attach_feedback(extras, line, live_progress(options));
  const Report& report = run_kept(options, extras);
  line.clear();
  spdlog::info("report took {:.2f} ms",
               std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  const auto shown = terminal(options);
  return print_report(report, options, ci,
                      [shown](const Report& done) { return cli_support::render_text(done, shown); });
}

// `cudadiag fix`: discovery and verification (no self-test: its findings have no plan), then the
// script or its JSON. Exit 1 when a plan was printed, 0 when there is nothing to fix.
int run_fix(const GlobalOptions& options) {
  cli_support::RunExtras extras;
  extras.stages = options.no_load ? cli_support::Stages::discover : cli_support::Stages::verify;
  ProgressLine line(live_progress(options), output_width(options));
  attach_feedback(extras, line, live_progress(options));
  const Report& report = run_kept(options, extras);
  line.clear();
  const auto fix = cli_support::render_fix(report, options.json);
  write_stdout(fix.text);
  return fix.planned ? 1 : 0;
}

int run_selftest_command(const GlobalOptions& options, const SelftestCommandOptions& command,
                         const CiOptions& ci) {
  if (options.no_load) {
    spdlog::error("selftest runs code from the libraries it tests; it cannot be combined with --no-load");
    return k_exit_usage;
  }
  auto api = api_options(options);
  api.self_test_level = command.level == "full" ? SelfTestLevel::full : SelfTestLevel::quick;
  if (const auto problem = parse_test_keys(command.only, api.self_tests); !problem.empty()) {
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
    api.device = ordinal;
  }
  auto extras = run_extras(ci);
  extras.stages = cli_support::Stages::self_test;
  ProgressLine line(live_progress(options), output_width(options));
  attach_feedback(extras, line, live_progress(options));
  const auto report = cli_support::run(api, extras);
  line.clear();
  // --device N names a GPU: when the driver reports GPUs but not N, the input is wrong.
  if (api.device && !report.devices.empty()) {
    const bool known = std::any_of(report.devices.begin(), report.devices.end(),
                                   [&](const Device& device) { return device.ordinal == api.device; });
    if (!known) {
      spdlog::error("--device {}: there is no GPU {} (the driver reports {} GPU{})", *api.device, *api.device,
                    report.devices.size(), report.devices.size() == 1 ? "" : "s");
      return k_exit_usage;
    }
  }
  // The same CI gates as the report: `selftest --require selftest.sort>=30Gkeys --junit FILE`.
  const auto shown = terminal(options);
  return print_report(report, options, ci,
                      [shown](const Report& done) { return cli_support::render_selftest_text(done, shown); });
}

// `find --for FRAMEWORK NAME`: what the framework's own CUDA library binds.
int run_find_for(const GlobalOptions& options, const FindOptions& find) {
  if (options.json || find.all || find.headers) {
    spdlog::error("find --for prints one path (--explain: how it is reached); it does not combine with {}",
                  options.json ? "--json"
                  : find.all   ? "--all"
                               : "--headers");
    return k_exit_usage;
  }
  const auto found = cli_support::find_for_framework(api_options(options), find.for_framework, find.name,
                                                     find.explain, terminal(options));
  write_stdout(found.text);
  if (found.exit_code == k_exit_usage) {
    spdlog::error("{}", found.error);
  } else if (found.exit_code != 0) {
    spdlog::warn("{}", found.error);
  }
  return found.exit_code;
}

int run_find(const GlobalOptions& options, const FindOptions& find) {
  if (!find.for_framework.empty()) {
    return run_find_for(options, find);
  }
  if (!find.headers) {
    // "nvjitlink" is the nvjitlink header set, and case aside the nvJitLink library: `LIB=$(cudadiag
    // find nvjitlink)` must not get a header directory.
    if (const auto library = cli_support::library_differing_in_case(find.name)) {
      spdlog::error("'{}' is ambiguous; did you mean {} (library) or --headers {}?", find.name, *library,
                    find.name);
      return k_exit_usage;
    }
  }
  const auto target = cli_support::find_target(find.name, find.headers);
  if (!target) {
    const auto known = cli_support::component_names(find.headers);
    if (const auto closest = cli_support::closest_component_name(find.name)) {
      spdlog::error("unknown component '{}'; did you mean {}?", find.name, *closest);
    } else {
      spdlog::error("unknown component '{}'; known: {}", find.name, joined(known));
    }
    return k_exit_usage;
  }
  auto api = api_options(options);
  api.components = {*target};
  cli_support::RunExtras extras;
  extras.single_component = true;
  extras.headers = find.headers;
  const auto report = cli_support::run(api, extras);
  const auto& component = report.components.front();
  // CUDA Python's load failed before it raised "not found": the file it failed on is its answer (a
  // native dlopen's answer is told on stderr).
  const auto* python_failed =
      !component.selected && component.python_failed ? &*component.python_failed : nullptr;
  const auto* answer = component.selected ? &*component.selected
                       : python_failed    ? python_failed
                       : component.loader ? &*component.loader
                                          : nullptr;
  // The answer exists but loading it fails (a broken first file): print it, say why, exit 1.
  const bool fails = answer != nullptr && !answer->fails.empty();
  const int code = answer == nullptr || fails ? k_exit_not_found : 0;
  if (options.json) {
    write_stdout(to_json(report));
    return code;
  }
  const auto shown = terminal(options);
  if (find.explain) {
    write_stdout(cli_support::render_explanation(report, shown));
  } else if (find.all) {
    write_stdout(cli_support::render_candidates(report, shown));
  } else if (answer != nullptr) {
    write_stdout(cli_support::escape_controls(cli_support::to_valid_utf8(answer->path)) + "\n");
  }
  if (python_failed != nullptr) {
    const auto& native = component.loader;
    spdlog::error(
        "{} does not load in CUDA Python: its system search's dlopen reaches {} and the load {}: {}; "
        "cuda-pathfinder then raises DynamicLibNotFoundError{}",
        find.name, cli_support::to_valid_utf8(python_failed->path),
        python_failed->outcome == "crashes" ? "crashes the process" : "fails",
        cli_support::to_valid_utf8(python_failed->fails),
        native && native->fails.empty()
            ? " (a native dlopen loads " + cli_support::to_valid_utf8(native->path) +
                  ", which is not CUDA Python's answer)"
            : "");
  } else if (answer == nullptr && find.explain) {
    spdlog::warn("{} not found", find.name);
  } else if (answer == nullptr) {
    spdlog::warn("{} not found (run `cudadiag find --explain {}` for the search trace)", find.name,
                 find.name);
  } else if (fails) {
    spdlog::error("{} is the answer but loading it {}: {}", cli_support::to_valid_utf8(answer->path),
                  answer->outcome == "crashes" ? "crashes the process" : "fails",
                  cli_support::to_valid_utf8(answer->fails));
  }
  return code;
}

int run_explain(const GlobalOptions& options, const ExplainOptions& explain) {
  if (options.json) {
    if (const auto json = cli_support::explain_finding_json(explain.id)) {
      write_stdout(*json);
      return 0;
    }
  } else if (const auto text = cli_support::explain_finding(explain.id, terminal(options))) {
    write_stdout(*text);
    return 0;
  }
  const auto ids = cli_support::finding_ids();
  const auto guess = cli_support::closest_match(explain.id, ids);
  spdlog::error(
      "no finding '{}'{}; docs/findings.md lists the ids (and `cudadiag completion` completes them)",
      explain.id, guess ? " (did you mean '" + *guess + "'?)" : std::string());
  return k_exit_usage;
}

// The completion model with the fixed value sets of the options that have one.
std::vector<cli_support::CompletionCommand>
with_choices(std::vector<cli_support::CompletionCommand> commands) {
  const auto test_keys = cli_support::self_test_keys();
  const auto frameworks = cli_support::framework_names();
  const std::vector<std::pair<std::string, const std::vector<std::string>*>> choices = {
      {"--color", &k_color_modes}, {"--log-level", &k_log_levels}, {"--fail-on", &k_severities},
      {"--level", &k_levels},      {"--only", &test_keys},         {"--for", &frameworks},
      {"--context", &k_contexts}};
  for (auto& command : commands) {
    for (auto& option : command.options) {
      for (const auto& [name, values] : choices) {
        if (std::find(option.names.begin(), option.names.end(), name) != option.names.end()) {
          option.choices = *values;
        }
      }
    }
  }
  return commands;
}

int run_inspect(const GlobalOptions& options, const InspectOptions& inspect) {
  ProcessInspection inspection;
  try {
    inspection = inspect_process(inspect.pid);
  } catch (const Exception& error) {
    spdlog::error("{}", error.what());
    return k_exit_not_found;
  }
  write_stdout(options.json ? to_json(inspection)
                            : cli_support::render_inspection_text(inspection, terminal(options)));
  const bool errors = std::any_of(inspection.findings.begin(), inspection.findings.end(),
                                  [](const Finding& finding) { return finding.severity == Severity::error; });
  return errors ? 1 : 0;
}

int run_command(int argc, char** argv) {
  try {
    CLI::App app{"cudadiag: which CUDA components will this process load, and do they agree?", "cudadiag"};
    app.formatter(make_help_formatter(output_width(GlobalOptions{})));
    app.set_version_flag("--version", "cudadiag " + version());
    GlobalOptions options;
    app.add_flag("--json", options.json, "Print the report as JSON (schema_version 1) on stdout");
    app.add_option(
           "--color", options.color,
           "Colour: auto (default: on a terminal, unless NO_COLOR is non-empty or TERM=dumb), always, "
           "never")
        ->check(CLI::IsMember(k_color_modes));
    app.add_flag("--no-color", options.no_color, "Never colour the output (the same as --color never)");
    app.add_option("--width", options.width,
                   "Fit text output to N columns (default: the terminal's width, else COLUMNS, else 80)")
        ->check(whole_number("a width in columns", static_cast<long long>(cli_support::k_min_width), 1000));
    app.add_flag("-v,--verbose", options.verbosity,
                 "More log output on stderr: -v each stage and its duration, -vv also each search step and "
                 "worker message");
    app.add_flag("--full", options.full,
                 "The report's details: every component with its whole path, the loads, dependency closures, "
                 "devices, Python environments and every finding (also with -v)");
    app.add_option("--log-level", options.log_level,
                   "Log level on stderr: trace (also every file examined), debug, info, warn, error, off")
        ->check(CLI::IsMember(k_log_levels));
    app.add_option("--python", options.python,
                   "Use this Python interpreter's site-packages (runs it once to ask; default: found without "
                   "running Python)")
        ->check(non_empty("an interpreter's path or name"));
    app.add_option("--ld-so-cache", options.ld_so_cache, "Read this loader cache instead of /etc/ld.so.cache")
        ->check(non_empty("a loader cache file"));
    app.add_option(
           "--ld-so-conf", options.ld_so_conf,
           "Read this loader configuration (and its includes) instead of /etc/ld.so.conf; remedies name "
           "the file that lists a directory")
        ->check(non_empty("a loader configuration file"));
    app.add_option("--root", options.root,
                   "Read another system from this directory (a container's root file system): every path "
                   "inside it, --ld-so-cache and --ld-so-conf too; nothing is loaded; not with --python")
        ->check(CLI::ExistingDirectory);
    app.add_option("--image", options.image,
                   "Read a container image as --root reads a directory: an OCI image layout directory, a "
                   "docker/podman save archive (.tar, .tar.gz) or an unpacked root file system; its config's "
                   "Env is the environment (--env on top)")
        ->check(CLI::ExistingPath);
    app.add_option("--assume-driver", options.assume_driver,
                   "Under --root/--image: judge the container for a GPU host with this driver (570.86.10); "
                   "default: this machine's")
        ->check(non_empty("a driver version"));
    app.add_option("--assume-gpu", options.assume_gpu,
                   "Under --root/--image: the host's GPU, sm_NN and/or brand=NAME (sm_90,brand=tesla)")
        ->check(non_empty("sm_NN,brand=NAME"));
    app.add_option("--env-file", options.env_file,
                   "The run's environment is this file's KEY=VALUE lines (and --env's), not this process's")
        ->check(CLI::ExistingFile);
    app.add_option("--env", options.env,
                   "KEY=VALUE: a variable of the run's environment, which is then --env-file's and --env's "
                   "only (repeatable)")
        ->expected(1)
        ->take_all();
    app.add_option("--fail-on", options.fail_on, "Exit 1 on findings of this severity or worse")
        ->check(CLI::IsMember(k_severities));
    app.add_flag("--no-load", options.no_load,
                 "Inspect files only: load no library, run no code from them (skips verification)");
    app.add_flag("--no-load-check", options.no_load_check,
                 "Verify without loading every dependency closure in a worker to prove its prediction "
                 "(faster the first time; the default proves every closure)");
    app.add_flag("--no-cache", options.no_cache,
                 "Load every closure again instead of taking proven loads of unchanged files from the "
                 "per-user cache (~/.cache/cudadiag; also CUDADIAG_CACHE=0)");
    app.add_flag("--verify-record-hashes", options.verify_record_hashes,
                 "Compare every library file of the Python environment's CUDA distributions with the "
                 "SHA-256 in its dist-info RECORD, not only its size (reads each file whole)");
    app.add_option("--timeout", options.timeout_seconds,
                   "Seconds each library may take to load and answer (default 15)")
        ->check(CLI::Range(0.1, 3600.0));
    app.add_flag("--no-selftest", options.no_selftest,
                 "Skip the quick GPU self-test the report runs when a GPU is usable");
    app.add_option(
           "--context", options.context,
           "Where cudadiag runs: interactive, ci or fleet (default: fleet under Slurm or in a Kubernetes "
           "pod, ci when CI=true, else interactive); a GPU another process uses is a warning in ci and fleet")
        ->check(CLI::IsMember(k_contexts));
    app.add_flag("--exclusive", options.exclusive,
                 "The self-test needs the GPU to itself: another process on it is an error (gpu.busy)");

    FindOptions find;
    auto* find_command = app.add_subcommand("find", "Print the path of one component (exit 1 if not found)");
    find_command
        ->add_option("name", find.name,
                     "Component name as cuda-pathfinder spells it (nvrtc, nvJitLink, cccl, nvcc, ...), or "
                     "KIND/NAME (headers/cudart, static/cudadevrt, bitcode/device, binary/nvcc)")
        ->required();
    find_command->add_flag("--all", find.all, "List every candidate, one per line");
    find_command->add_flag(
        "--explain", find.explain,
        "Show the search trace, why the answer was chosen and each answer's dependency closure");
    find_command->add_flag("--headers", find.headers,
                           "Look for the header set of that name (e.g. cudart headers)");
    find_command->add_option(
        "--for", find.for_framework,
        "The copy a Python framework's own CUDA library binds (torch, jax), which may not be "
        "the one CUDA Python picks");
    find_command->fallthrough();

    InspectOptions inspect;
    auto* inspect_command = app.add_subcommand(
        "inspect", "List the CUDA libraries a running process has mapped (exit 1 on an error finding)");
    inspect_command->add_option("--pid", inspect.pid, "The process to inspect")
        ->required()
        ->check(whole_number("a process id", 1, k_max_pid));
    inspect_command->fallthrough();
    SelftestCommandOptions selftest_options;
    auto* selftest_command = app.add_subcommand(
        "selftest",
        "Run the GPU self-test: JIT chain, bundled PTX, CUB reduce/sort, PCIe, "
        "FP32 compute, memory patterns, IPC, green contexts, math libraries (exit 1 on a failure)");
    selftest_command
        ->add_option("--level", selftest_options.level,
                     "quick (default; a few seconds) or full (2^28+ elements; under a minute)")
        ->check(CLI::IsMember(k_levels));
    selftest_command->add_option("--only", selftest_options.only,
                                 "Comma-separated tests: jit, ptx, reduce, sort, pcie, compute, memory, ipc, "
                                 "green_ctx, libs, checkpoint");
    selftest_command->add_option("--device", selftest_options.device,
                                 "A CUDA device ordinal, or 'all' (default; one worker per GPU)");
    selftest_command->fallthrough();
    CiOptions ci;
    add_ci_options(app, ci);
    BundleCommandOptions bundle_options;
    auto* bundle_command = add_bundle_command(app, bundle_options);
    DiffCommandOptions diff_options;
    auto* diff_command = add_diff_command(app, diff_options);
    FleetCommandOptions fleet_options;
    auto* fleet_command = add_fleet_command(app, fleet_options);
    ExplainOptions explain;
    auto* explain_command =
        app.add_subcommand("explain", "Print a finding's reference: what raises it, its severity rule, its "
                                      "evidence and the remedy (the text of docs/findings.md)");
    explain_command->add_option("id", explain.id, "A finding id, e.g. driver.stub")->required();
    explain_command->fallthrough();
    auto* fix_command = app.add_subcommand(
        "fix", "Print the best plan for each warning and error as a commented shell script; never runs it "
               "(exit 1 when a plan was printed, 0 when there is nothing to fix)");
    fix_command->fallthrough();
    CompletionOptions completion;
    auto* completion_command = app.add_subcommand(
        "completion",
        "Print a shell completion script: subcommands, options, component names and finding ids "
        "(`source <(cudadiag completion bash)`)");
    completion_command->add_option("shell", completion.shell, "bash, zsh or fish")
        ->required()
        ->check(CLI::IsMember(k_shells));
    completion_command->fallthrough();
    app.require_subcommand(0, 1);

    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& error) {
      if (error.get_exit_code() ==
          0) { // --help, --version: written as the report is, so a failed write is an error
        if (dynamic_cast<const CLI::CallForVersion*>(&error) != nullptr && json_requested(argc, argv)) {
          write_stdout(cli_support::version_json());
          return 0;
        }
        std::ostringstream out;
        std::ostringstream err;
        app.exit(error, out, err);
        write_stdout(out.str());
        std::fputs(err.str().c_str(), stderr);
        return 0;
      }
      const auto message = usage_error_message(app, error, argc, argv);
      std::fprintf(stderr, "cudadiag: error: %s\n", cli_support::escape_controls(message).c_str());
      record_error(message);
      return k_exit_usage;
    }
    configure_logging(options);
    try {
      if (ci.any() && !bundle_command->parsed() && !selftest_command->parsed() &&
          app.get_subcommands().size() == 1) {
        spdlog::error("{} apply to the report, `bundle` and `selftest` only", ci_option_names());
        return k_exit_usage;
      }
      if (options.json) {
        // stdout carries one JSON document: an output file that is stdout would be a second one.
        auto files = output_files(ci);
        if (bundle_command->parsed() && !bundle_options.output.empty()) {
          files.push_back({"bundle --output", bundle_options.output});
        }
        if (fleet_command->parsed() && !fleet_options.html.empty()) {
          files.push_back({"fleet --html", fleet_options.html});
        }
        if (const auto clash = cli_support::output_on_standard_output(files)) {
          spdlog::error("{} {} is standard output, which --json writes: name a file, or drop --json",
                        clash->flag, clash->path);
          return k_exit_usage;
        }
      }
      if (fleet_command->parsed()) {
        return run_fleet(fleet_options, options.json, terminal(options), argv, self_executable());
      }
      if (diff_command->parsed()) {
        return run_diff(diff_options, options.json, terminal(options));
      }
      if (bundle_command->parsed()) {
        auto extras = full_report(options, ci);
        ProgressLine line(live_progress(options), output_width(options));
        attach_feedback(extras, line, live_progress(options));
        const Report& report = run_kept(options, extras);
        return run_bundle(report, ci, bundle_options, options.json, line);
      }
      if (find_command->parsed()) {
        return run_find(options, find);
      }
      if (explain_command->parsed()) {
        return run_explain(options, explain);
      }
      if (fix_command->parsed()) {
        return run_fix(options);
      }
      if (completion_command->parsed()) {
        if (options.json) {
          spdlog::error("completion prints a shell script; it does not combine with --json");
          return k_exit_usage;
        }
        const auto model = completion_model(app, [](const std::string& command) -> std::vector<std::string> {
          if (command == "find") {
            return cli_support::component_names(false);
          }
          if (command == "explain") {
            return cli_support::finding_ids();
          }
          if (command == "completion") {
            return k_shells;
          }
          return {};
        });
        write_stdout(*cli_support::completion_script(completion.shell, with_choices(model)));
        return 0;
      }
      if (inspect_command->parsed()) {
        return run_inspect(options, inspect);
      }
      if (selftest_command->parsed()) {
        return run_selftest_command(options, selftest_options, ci);
      }
      return run_report(options, ci);
    } catch (const Exception& error) {
      spdlog::error("{}", error.what()); // a usage error: it names the bad input
      return k_exit_usage;
    }
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

// In a build configured with -DCUDADIAG_TIMELINE=ON: the spans of this process (core/timeline.hpp;
// times from its start) into the file CUDADIAG_TIMELINE_OUT names, for bench/timeline_summary.py.
void write_timeline() {
  const char* path = std::getenv("CUDADIAG_TIMELINE_OUT");
  if (!timeline::enabled || path == nullptr || *path == '\0') {
    return;
  }
  if (std::FILE* out = std::fopen(path, "w")) {
    std::fprintf(out, "## call 1\n");
    timeline::write(out);
    std::fclose(out);
  }
}

} // namespace

int run(int argc, char** argv) {
  if (argc >= 2 && std::string_view(argv[1]) == "__worker") {
    return cli_support::worker_main(argc, argv); // the isolated child of verification and the self-test
  }
  ignore_sigpipe();
  const int code = finish_output(run_command(argc, argv), json_requested(argc, argv));
  write_timeline();
  return code;
}

} // namespace cudadiag::cli
