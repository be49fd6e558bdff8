#include "diff/report_input.hpp"

#include "bundle/bundle.hpp"
#include "bundle/gzip.hpp"
#include "bundle/tar_archive.hpp"
#include "core/bounded_json.hpp"
#include "core/filesystem.hpp"
#include "core/json_fields.hpp"
#include "report/json_report.hpp"

namespace cudadiag::diff {
namespace {

using nlohmann::json;

std::string who(std::string_view side, const std::string& path) {
  return std::string(side) + " (" + report::to_valid_utf8(path) + ")";
}

} // namespace

// The report inside a bundle: the member named report.json at the top or one directory down.
Expected<std::string> report_text_from_bundle(const std::string& bytes, const std::string& name) {
  auto tar = bundle::gzip_decompress(bytes, k_max_input_bytes);
  if (!tar) {
    return Error{name + " is a damaged gzip file: " + tar.error().message};
  }
  auto entries = bundle::read_tar(*tar);
  if (!entries) {
    return Error{name + " is gzip-compressed but not a cudadiag bundle: " + entries.error().message};
  }
  for (const auto& entry : *entries) {
    const auto slash = entry.name.find('/');
    const bool top = entry.name == bundle::k_report_member;
    const bool one_down =
        slash != std::string::npos && entry.name.substr(slash + 1) == bundle::k_report_member;
    if (!entry.directory && (top || one_down)) {
      return entry.content;
    }
  }
  return Error{name + " is an archive without a report.json: not a cudadiag bundle"};
}

namespace {

std::string parse_failure(const std::string& name, const bounded_json::Failure& failure, std::size_t size) {
  using bounded_json::Problem;
  switch (failure.problem) {
  case Problem::truncated:
    return name + " is truncated JSON: it ends after " + std::to_string(size) +
           " bytes, before the document is complete (was the file cut off while being written or copied?)";
  case Problem::empty:
    return name + " is empty: expected a cudadiag report (cudadiag --json > FILE) or bundle";
  case Problem::syntax:
    return name + " is not JSON (syntax error at byte " + std::to_string(failure.byte) +
           "): expected a cudadiag report (cudadiag --json > FILE) or bundle (cudadiag bundle)";
  case Problem::too_deep:
  case Problem::too_large:
  case Problem::number_out_of_range: break;
  }
  return name + " " + failure.message() + ": not a cudadiag report";
}

} // namespace

Expected<LoadedReport> load_report(const std::string& path, std::string_view side) {
  const auto name = who(side, path);
  if (fs::is_directory(path)) {
    return Error{name + " is a directory: expected a report JSON file or a bundle (.tar.gz)"};
  }
  auto bytes = fs::read_file_prefix(path, k_max_input_bytes + 1);
  if (!bytes) {
    return Error{"cannot read " + name + ": " + bytes.error().message};
  }
  return report_from_bytes(std::move(*bytes), path, side);
}

Expected<LoadedReport> report_from_bytes(std::string text, const std::string& path, std::string_view side) {
  const auto name = who(side, path);
  if (text.size() > k_max_input_bytes) {
    return Error{name + " is larger than " + std::to_string(k_max_input_bytes >> 20U) +
                 " MiB: not a cudadiag report"};
  }
  LoadedReport loaded;
  loaded.label = path;
  loaded.kind = "report";
  if (bundle::looks_like_gzip(text)) {
    auto inner = report_text_from_bundle(text, name);
    if (!inner) {
      return inner.error();
    }
    text = std::move(*inner);
    loaded.kind = "bundle";
  }
  auto parsed = bounded_json::parse(text, {.max_depth = k_max_report_depth, .max_bytes = k_max_input_bytes});
  if (const auto* failure = std::get_if<bounded_json::Failure>(&parsed)) {
    return Error{
        parse_failure(loaded.kind == "bundle" ? name + "'s report.json" : name, *failure, text.size())};
  }
  loaded.document = std::move(std::get<json>(parsed));
  const auto& document = loaded.document;
  const auto version = json_fields::integer(document, "schema_version");
  const bool ours = document.is_object() && document.contains("tool") &&
                    json_fields::string_or(document["tool"], "name") == "cudadiag";
  if (!version || !ours) {
    return Error{name +
                 " is JSON but not a cudadiag report (it lacks schema_version and tool.name \"cudadiag\")"};
  }
  loaded.schema_version = static_cast<int>(*version);
  return loaded;
}

std::optional<std::string> incomparable(const LoadedReport& a, const LoadedReport& b) {
  if (a.schema_version != b.schema_version) {
    return "A (" + a.label + ") has schema_version " + std::to_string(a.schema_version) + " and B (" +
           b.label + ") has schema_version " + std::to_string(b.schema_version) +
           ": reports of different schema versions cannot be compared; make both with the same cudadiag "
           "release";
  }
  if (a.schema_version != report::k_schema_version) {
    return "both reports have schema_version " + std::to_string(a.schema_version) + "; this cudadiag (" +
           CUDADIAG_VERSION + ") reads schema_version " + std::to_string(report::k_schema_version) +
           ": use the cudadiag release that wrote them";
  }
  return std::nullopt;
}

} // namespace cudadiag::diff
