#include "bundle/bundle.hpp"

#include "bundle/gzip.hpp"
#include "bundle/tar_archive.hpp"
#include "core/filesystem.hpp"
#include "core/json_fields.hpp"
#include "core/output_file.hpp"
#include "report/output_formats.hpp"
#include "report/report_document.hpp"

#include <array>
#include <cctype>
#include <ctime>

namespace cudadiag::bundle {
namespace {

using nlohmann::json;

// Bundles are written readable by the owner only: even redacted, they describe the machine.
constexpr unsigned k_bundle_mode = 0600;

enum class TimeFormat { iso, file_name };

// `unix_seconds` in UTC: "2026-12-02T10:11:12Z" (iso) or "20261202-101112" (file_name).
std::string utc_text(std::int64_t unix_seconds, TimeFormat format) {
  const auto time = static_cast<std::time_t>(unix_seconds);
  std::tm parts{};
  ::gmtime_r(&time, &parts);
  std::array<char, 64> text{};
  const auto written = format == TimeFormat::iso
                           ? std::strftime(text.data(), text.size(), "%Y-%m-%dT%H:%M:%SZ", &parts)
                           : std::strftime(text.data(), text.size(), "%Y%m%d-%H%M%S", &parts);
  return std::string(text.data(), written);
}

std::string answer_line(const json& component, std::string_view key) {
  const auto it = component.find(key);
  if (it == component.end() || !it->is_object()) {
    return std::string(key) + ": none\n";
  }
  return std::string(key) + ": " + report::display(*it, "path", "?") + " (" +
         report::display(*it, "found_via", "?") + ", version " + report::display(*it, "version", "unknown") +
         ") — " + report::display(*it, "reason") + "\n";
}

std::string render_trace(const json& report) {
  std::string out = "# Search trace of every component: where cudadiag looked, what it found, and why each\n"
                    "# answer was chosen (the same as `cudadiag find --explain NAME`).\n";
  for (const auto& component : report.value("components", json::array())) {
    out += "\n== " + report::display(component, "name", "?") + " (" +
           report::display(component, "kind", "?") + "): " + report::display(component, "status", "?") +
           " ==\n";
    out += answer_line(component, "selected");
    out += answer_line(component, "loader");
    out += "trace:\n";
    for (const auto& line : component.value("trace", json::array())) {
      out += "  " + (line.is_string() ? line.get<std::string>() : line.dump()) + "\n";
    }
    out += "candidates:\n";
    for (const auto& candidate : component.value("candidates", json::array())) {
      out += "  " + report::display(candidate, "path", "?") + "  version " +
             report::display(candidate, "version", "?") + " (" +
             report::display(candidate, "version_source", "?") + ")  via " +
             report::display(candidate, "found_via", "?");
      const auto rejected = report::display(candidate, "rejected");
      out += (rejected.empty() ? "" : "  rejected: " + rejected) + "\n";
    }
  }
  return out;
}

json manifest(const std::vector<BundleFile>& files, const std::vector<NotCollected>& not_collected,
              const Redactor& redactor, const BundleOptions& options, const RedactionCounts& totals) {
  json listed = json::array();
  for (const auto& file : files) {
    json entry = {{"name", file.name}, {"bytes", file.content.size()}, {"source", file.source}};
    if (file.redacted.any()) {
      entry["redacted"] = file.redacted.to_json();
    }
    listed.push_back(std::move(entry));
  }
  json missing = json::array();
  for (const auto& item : not_collected) {
    missing.push_back({{"what", item.what}, {"why", item.why}});
  }
  return {{"bundle_format", k_bundle_format_version},
          {"tool", {{"name", "cudadiag"}, {"version", CUDADIAG_VERSION}}},
          {"created", utc_text(options.created_unix, TimeFormat::iso)},
          {"files", listed},
          {"not_collected", missing},
          {"never_included",
           "the contents of any library or binary: the bundle holds only text (reports, command "
           "output, file listings and small system files)"},
          {"redaction",
           {{"rules", redactor.rules()},
            {"withheld_variables", redactor.secret_variables()},
            {"paths_redacted", redactor.options().paths},
            {"replacements", totals.to_json()}}}};
}

// The directory inside the archive: the archive's name without .tar.gz / .tgz.
std::string bundle_directory(const std::string& archive) {
  auto name = fs::basename(archive);
  for (const std::string_view suffix : {".tar.gz", ".tgz", ".gz", ".tar"}) {
    if (name.size() > suffix.size() && name.ends_with(suffix)) {
      name.resize(name.size() - suffix.size());
      break;
    }
  }
  for (auto& c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '.' && c != '-' && c != '_') {
      c = '_';
    }
  }
  return name.empty() ? "cudadiag-bundle" : name;
}

} // namespace

std::string default_bundle_name(const json& report, std::int64_t created_unix) {
  std::string host = report::display(report.value("host", json::object()), "hostname", "host");
  for (auto& c : host) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '.' && c != '-') {
      c = '-';
    }
  }
  return "cudadiag-bundle-" + (host.empty() ? std::string("host") : host) + "-" +
         utc_text(created_unix, TimeFormat::file_name) + ".tar.gz";
}

AssembledBundle assemble_bundle(const json& report, const Environment& env, const BundleOptions& options) {
  const Redactor redactor(env, options.redaction);
  RedactionCounts report_counts;
  const auto redacted_report = redactor.apply_json(report, report_counts);

  std::vector<BundleFile> files;
  files.push_back(
      {"report.json", redacted_report.dump(2, ' ', false, json::error_handler_t::replace) + "\n",
       "the report as `cudadiag --json` prints it: discovery, verification in isolated workers, the "
       "self-test when it ran, findings",
       report_counts});
  for (const auto& format : report::output_formats()) {
    if (!format.bundle_file.empty()) {
      files.push_back({std::string(format.bundle_file),
                       format.render(redacted_report, options.fail_on),
                       "rendered from report.json",
                       {}});
    }
  }
  files.push_back(
      {"trace.txt", render_trace(redacted_report), "every component's search trace, from report.json", {}});

  auto evidence = collect_evidence(report, env, options.sources);
  for (auto& file : evidence.files) {
    file.source = redactor.apply(file.source, file.redacted);
    files.push_back(std::move(file));
  }
  // Every file through the text rules: the evidence for the first time, the rendered report files
  // as a safety net (a secret in a form the structured pass could not see).
  RedactionCounts totals;
  for (auto& file : files) {
    file.content = redactor.apply(file.content, file.redacted);
    totals += file.redacted;
  }
  RedactionCounts ignored;
  for (auto& item : evidence.not_collected) {
    item.what = redactor.apply(item.what, ignored);
    item.why = redactor.apply(item.why, ignored);
  }
  const auto described = manifest(files, evidence.not_collected, redactor, options, totals);
  files.insert(
      files.begin(),
      BundleFile{"manifest.json",
                 redactor.apply(described.dump(2, ' ', false, json::error_handler_t::replace), ignored) +
                     "\n",
                 "this list",
                 {}});
  return {std::move(files), std::move(evidence.not_collected)};
}

Expected<BundleResult> write_bundle(const json& report, const Environment& env,
                                    const BundleOptions& options) {
  // No output, a path ending in '/' or an existing directory: the default name, inside it.
  const auto cwd = env.cwd.empty() ? std::string(".") : env.cwd;
  const auto named = options.output.empty() ? cwd : options.output;
  const bool into_directory =
      options.output.empty() || options.output.back() == '/' || fs::is_directory(options.output);
  const auto path =
      into_directory ? fs::join(named, default_bundle_name(report, options.created_unix)) : named;
  const auto directory = bundle_directory(path);
  const auto assembled = assemble_bundle(report, env, options);
  TarWriter tar(options.created_unix);
  if (auto added = tar.add_directory(directory); !added) {
    return added.error();
  }
  if (auto added = tar.add_directory(directory + "/evidence"); !added) {
    return added.error();
  }
  BundleResult result;
  result.not_collected = assembled.not_collected;
  for (const auto& file : assembled.files) {
    if (auto added = tar.add_file(directory + "/" + file.name, file.content); !added) {
      return added.error();
    }
    result.files.push_back(file.name);
    if (file.name != "manifest.json") {
      result.redacted += file.redacted;
    }
  }
  auto compressed = gzip_compress(tar.finish());
  if (!compressed) {
    return compressed.error();
  }
  // The bundle holds paths and the environment: a new file is the user's alone, and a file it
  // replaces never becomes more readable than that.
  output::OutputFileOptions private_file;
  private_file.mode = k_bundle_mode;
  private_file.private_content = true;
  if (auto written = output::write_output_file(path, *compressed, private_file); !written) {
    return written.error();
  }
  result.path = path;
  result.bytes = compressed->size();
  return result;
}

} // namespace cudadiag::bundle
