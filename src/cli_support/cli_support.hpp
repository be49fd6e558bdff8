#pragma once
// What the `cudadiag` executable needs beyond the public API (include/cudadiag/): the runs only the
// CLI makes, its terminal renderings, the report files it writes, bundles, diffs and the worker
// entry point. cli/ includes the public headers and this one, nothing else of src/. Every function
// throws cudadiag::Exception, with a one-line message naming the bad input, for a usage error.
// (Only the public value types are included here: the core's namespace cudadiag::verify, which
// this header's implementation sees, shares its name with the function cudadiag::verify().)

#include "cudadiag/types.hpp"

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudadiag::cli_support {

// `cudadiag __worker ...`: the isolated child process of verification and the self-test.
int worker_main(int argc, char** argv);

// ---- Runs: the public API's plans (discover, verify, self_test) with what only the CLI adds.

enum class Stages { discover, verify, self_test };

struct RunExtras {
  Stages stages = Stages::discover;
  bool self_test_needs_gpu = false; // the plain report: the self-test runs only on a usable GPU
  // `cudadiag find NAME`: only the first component of Options::components' one name (the library,
  // when a name is both), or with `headers` its header set.
  bool single_component = false;
  bool headers = false;
  std::vector<std::string> requirements;               // --require SPEC, in order
  std::string policy_file;                             // --policy FILE
  std::optional<std::size_t> expect_gpus;              // --expect-gpus N (wins over the policy's)
  std::function<void(std::string_view line)> progress; // the self-test: a line as tests start and finish
  // What the run is doing now ("loading libraries in isolated workers"), for a live line.
  std::function<void(std::string_view activity)> activity;
  // What happened: detail 1 each stage and its duration, 2 each search step and worker message,
  // 3 each file examined.
  std::function<void(int detail, std::string_view message)> log;
};

// The report. Usage errors: an invalid option, an unreadable or invalid policy, a malformed
// requirement, an unusable --python or --ld-so-cache.
Report run(const Options& options, const RunExtras& extras);

// For usage messages: the catalog's component names (header sets only, or all), each once, in
// catalog order; the self-test keys in the order the tests run.
std::vector<std::string> component_names(bool headers_only);
// `cudadiag find NAME`: the one component NAME means, as "KIND/NAME" for Options::components.
// NAME is "KIND/NAME" (KIND: lib, headers, binary, static, bitcode, or the JSON's spelling) or a bare
// name: the library of that name, else the binary, else the header set, else the static or bitcode
// library ("nvcc" is the compiler; "headers/nvcc" its headers). With headers_only, the header set.
// nullopt when nothing is named so.
std::optional<std::string> find_target(std::string_view name, bool headers_only);
// The library `name` means when case is ignored, when `name` itself is a header set's name and no
// library's ("nvjitlink": the nvJitLink library, or the nvjitlink headers): `find` asks which one
// was meant rather than pick the headers. nullopt otherwise (a KIND/NAME is never ambiguous).
std::optional<std::string> library_differing_in_case(std::string_view name);
// The frameworks `find --for` knows ("torch", "jax").
std::vector<std::string> framework_names();
// The known component name closest to `name` ("nvjitlnk" -> "nvJitLink"), for "did you mean";
// nullopt when nothing is close.
std::optional<std::string> closest_component_name(std::string_view name);
std::vector<std::string> self_test_keys();

// ---- Terminal renderings.

inline constexpr std::size_t k_min_width = 20;     // narrower terminals are rendered at this width
inline constexpr std::size_t k_default_width = 80; // not a terminal, no COLUMNS, no --width

// How text output looks: ANSI colours on or off, and the columns every line fits.
struct Terminal {
  bool color = false;
  std::size_t width = k_default_width;
  bool full = false; // the report's details layer (--full, -v) instead of the one-screen summary
};

// `cudadiag find --for FRAMEWORK NAME`: the copy of library NAME the framework's own CUDA library
// binds (torch's libtorch_cuda.so after libtorch_global_deps.so, JAX's PJRT plugin), predicted from
// the files (linkage/framework_load.hpp). text: its path, or with `explain` how it is reached and
// whether CUDA Python would load the same file. exit_code: 0 found, 1 the framework does not load
// it, 2 usage (unknown framework or library, the framework is not installed); error: why, when not 0.
struct FrameworkFind {
  int exit_code = 0;
  std::string text;
  std::string error;
};
FrameworkFind find_for_framework(const Options& options, std::string_view framework, std::string_view name,
                                 bool explain, const Terminal& terminal);

// to_json(report)'s text in pieces, written out one after the other (report::render_json_pieces).
std::vector<std::string> render_json_pieces(const Report& report);
std::string render_text(const Report& report, const Terminal& terminal);          // `cudadiag`
std::string render_selftest_text(const Report& report, const Terminal& terminal); // `cudadiag selftest`
// `cudadiag fix`: the best plan of each warning and error as a commented shell script, never run
// (or its JSON document, docs/schema/fix.schema.json); `planned` says whether any plan was printed.
struct FixOutput {
  bool planned = false;
  std::string text;
};
FixOutput render_fix(const Report& report, bool json);
// `cudadiag find NAME --all` (candidates, one per line, full paths, for scripts) and `--explain`
// (every place searched, the candidates and both decisions; full paths, wrapped to the width) of
// the report's first component; "" when the report has none.
std::string render_candidates(const Report& report, const Terminal& terminal);
std::string render_explanation(const Report& report, const Terminal& terminal);
std::string render_inspection_text(const ProcessInspection& inspection, const Terminal& terminal);
// `text` broken into lines of at most `width` columns (words kept whole where they fit), the first
// starting with `first_prefix`, the others with `continuation_prefix`; each line ends with '\n'.
std::string wrap_text(std::string_view text, std::size_t width, std::string_view first_prefix,
                      std::string_view continuation_prefix);
// `text` in at most `width` columns, shortened in the middle with "…" when longer.
std::string shorten_middle(std::string_view text, std::size_t width);
// `text` with bytes that are not UTF-8 written as \xNN.
std::string to_valid_utf8(std::string_view text);
// `text` with control characters (escape sequences from outside data) made visible, for a terminal.
std::string escape_controls(std::string_view text);
// The JSON document --json prints for a command that failed before it had a report
// (docs/schema/error.schema.json), two-space indented with a trailing newline.
std::string error_document(std::string_view message, int exit_code);

// ---- Help.

// The finding ids the findings reference (docs/findings.md, compiled in) documents, in page order.
std::vector<std::string> finding_ids();
// `cudadiag explain ID`: the reference of one finding (cause, severity rule, evidence, remedy) as
// terminal text fitted to the width; nullopt for an id the reference does not know.
std::optional<std::string> explain_finding(std::string_view id, const Terminal& terminal);
// `cudadiag explain ID --json`: {id, severity, summary, remedy, reference} (docs/schema/explain.schema.json;
// reference: the text explain_finding prints, unwrapped), two-space indented; nullopt for an unknown id.
std::optional<std::string> explain_finding_json(std::string_view id);
// `cudadiag --version --json`: {name, version, schema_version} (docs/schema/version.schema.json).
std::string version_json();
// The choice closest to `word` by edit distance (a typo: at most a third of the word's length,
// and at least 1, apart), or nullopt.
std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string>& choices);

// `cudadiag completion bash|zsh|fish`: what a completion script completes.
struct CompletionOption {
  std::vector<std::string> names; // "-v", "--verbose"
  std::string help;
  bool takes_value = false;
  std::vector<std::string> choices; // the values it accepts, when a fixed set
};
struct CompletionCommand {
  std::string name; // "" for the top level
  std::string help;
  std::vector<CompletionOption> options;
  std::vector<std::string> words; // positional values to offer (component names, finding ids, shells)
};
// The script for `shell` ("bash", "zsh", "fish"), completing the subcommands, each one's options
// (and the top level's, which every subcommand accepts) and `words`. `commands` starts with the top
// level. nullopt for another shell.
std::optional<std::string> completion_script(std::string_view shell,
                                             const std::vector<CompletionCommand>& commands);

// ---- Report files: one row per format (src/report/output_formats.hpp).

struct OutputFormat {
  std::string flag; // "--junit"
  std::string help;
};
std::vector<OutputFormat> output_formats();

struct OutputFile {
  std::string flag; // an OutputFormat's flag
  std::string path;
};
// Writes each file, in order, as core/output_file.hpp's contract says (regular files replaced
// atomically, devices and FIFOs written through, never replaced); the message of the first that
// fails (naming it), else nullopt.
std::optional<std::string> write_outputs(const Report& report, const std::vector<OutputFile>& files);
// The first of `files` that is this process's standard output (/dev/stdout, a link to
// /proc/self/fd/1, the file or pipe stdout is redirected to): a usage error where stdout already
// carries a JSON document. nullopt when none is.
std::optional<OutputFile> output_on_standard_output(const std::vector<OutputFile>& files);

// ---- --exit-style: exit codes for health frameworks (src/report/exit_style.hpp).

struct StyledExit {
  int exit_code = 0;                      // the report's exit code in that style
  std::optional<std::string> status_line; // npd and nagios without --json: what stdout carries instead
};
// `style` is "cudadiag", "npd" or "nagios" (anything else: cudadiag's own codes).
StyledExit styled_exit(const Report& report, std::string_view style, bool json);

// ---- `cudadiag bundle`.

struct BundleRequest {
  std::string output; // "" = cudadiag-bundle-HOST-TIME.tar.gz in the working directory; a directory: in it
  bool redact_paths = false;
  double smi_timeout_seconds = 10;
};
struct BundleWritten {
  std::string path; // the archive
  std::string json; // the --json answer: {bundle, bytes, files, redacted, not_collected, summary}
  std::vector<std::string> notes; // "what: why" for each piece of evidence not collected
};
// Writes the bundle of `report` (which then carries nothing else). Usage error: nothing could be
// written (the message names the target).
BundleWritten write_bundle(const Report& report, const BundleRequest& request);

// ---- `cudadiag diff A B`.

struct DiffRequest {
  std::string a, b; // reports or bundles
  double tolerance_percent = 10;
};
struct DiffOutcome {
  bool equivalent = true;
  std::string rendered; // text, or the JSON document with `json`
};
// Usage error: an input that is unreadable, not a report, truncated, or of another schema version.
DiffOutcome diff(const DiffRequest& request, bool json, const Terminal& terminal);

// ---- `cudadiag fleet REPORT...|-` (src/fleet/).

struct FleetRequest {
  std::vector<std::string> inputs; // report files, bundles, directories, "-" for stdin
  double tolerance_percent = 10;
  std::string html; // also write the summary as HTML to this file
};
struct FleetOutcome {
  int exit_code = 0;
  std::string rendered;            // text, or the JSON document with `json`
  std::vector<std::string> errors; // usage errors, one line each (exit_code 2 then, nothing rendered)
};
FleetOutcome fleet(const FleetRequest& request, bool json, const Terminal& terminal);
// The report parser this program was linked with: "simdjson" or "nlohmann" (fleet/report_reader.hpp).
std::string_view fleet_parser();
// The program `cudadiag fleet` runs in its place when this one parses with nlohmann_json and the
// build made one with simdjson (cli/CMakeLists.txt): `cudadiag-fleet` beside `executable` (this
// program's real path; a build tree), else where the install puts it relative to the bin directory
// (libexec/cudadiag/cudadiag-fleet). nullopt: parse here.
std::optional<std::string> faster_fleet_program(const std::string& executable);

} // namespace cudadiag::cli_support
