#include "versions/version_sources.hpp"

#include "core/bounded_json.hpp"
#include "core/filesystem.hpp"
#include "core/text.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <exception>
#include <vector>

namespace cudadiag::versions {
namespace {

constexpr size_t k_metadata_max_bytes = 64 * 1024;
constexpr size_t k_version_json_max_bytes = 1024 * 1024;
constexpr std::uint64_t k_conda_record_max_bytes = 4 * 1024 * 1024;
constexpr size_t k_header_max_bytes = 512 * 1024; // CUDA_VERSION sits near the top of the 1.1 MiB cuda.h
constexpr size_t k_header_head_bytes = 16 * 1024; // read first; the rest only when the macros are not in it
constexpr size_t k_version_max_length = 64;

constexpr std::string_view k_dist_info_suffix = ".dist-info";
constexpr std::string_view k_json_suffix = ".json";

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
char to_lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return to_lower(x) == to_lower(y); });
}

} // namespace

bool is_dotted_digits(std::string_view text) {
  if (text.empty() || text.size() > k_version_max_length) {
    return false;
  }
  bool previous_was_digit = false;
  for (const char c : text) {
    if (is_digit(c)) {
      previous_was_digit = true;
    } else if (c == '.' && previous_was_digit) {
      previous_was_digit = false;
    } else {
      return false;
    }
  }
  return previous_was_digit;
}

namespace {

// A plausible package version (PEP 440 or conda): starts with a digit, bounded, and made only of
// letters, digits and ". _ + !" (and '-' where the format allows it). Rejects binary garbage.
bool is_plausible_version(std::string_view text, bool allow_dash) {
  if (text.empty() || text.size() > k_version_max_length || !is_digit(text.front())) {
    return false;
  }
  return std::all_of(text.begin(), text.end(), [allow_dash](char c) {
    return is_digit(c) || is_alpha(c) || c == '.' || c == '_' || c == '+' || c == '!' ||
           (allow_dash && c == '-');
  });
}

// PEP 503: lower case, every run of '-', '_' and '.' collapsed to one '-'.
std::string normalize_distribution_name(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (const char c : name) {
    if (c == '-' || c == '_' || c == '.') {
      if (out.empty() || out.back() != '-') {
        out.push_back('-');
      }
    } else {
      out.push_back(to_lower(c));
    }
  }
  return out;
}

// Whether normalize_distribution_name(name) == normalized, without building the normalized name
// (site-packages holds a hundred dist-info folders, each compared with every wanted name).
bool normalizes_to(std::string_view name, std::string_view normalized) {
  std::size_t at = 0;
  bool after_separator = false;
  for (const char c : name) {
    const bool separator = c == '-' || c == '_' || c == '.';
    if (separator && after_separator) {
      continue; // a run of separators is one '-'
    }
    if (at == normalized.size() || normalized[at] != (separator ? '-' : to_lower(c))) {
      return false;
    }
    ++at;
    after_separator = separator;
  }
  return at == normalized.size();
}

// Splits text at each '\n' and calls `visit(line)` until it returns true.
template <class Visit> void for_each_line(std::string_view text, Visit&& visit) {
  while (!text.empty()) {
    const auto newline = text.find('\n');
    const auto line = text.substr(0, newline);
    if (visit(line)) {
      return;
    }
    if (newline == std::string_view::npos) {
      return;
    }
    text.remove_prefix(newline + 1);
  }
}

// Calls `visit(line)` on each line of `text` that holds a '#' (only those can be preprocessor
// directives), in order, until it returns true. A header's other lines, most of them, are skipped
// by one memchr each instead of being split and trimmed.
template <class Visit> void for_each_directive_line(std::string_view text, Visit&& visit) {
  std::size_t from = 0;
  while (from < text.size()) {
    const auto hash = text.find('#', from);
    if (hash == std::string_view::npos) {
      return;
    }
    const auto newline_before = text.rfind('\n', hash);
    const auto start = newline_before == std::string_view::npos ? 0 : newline_before + 1;
    const auto end = std::min(text.find('\n', hash), text.size());
    if (visit(text.substr(start, end - start))) {
      return;
    }
    from = end + 1;
  }
}

// Decimal digits as an unsigned number; nullopt if empty, non-numeric or too large.
std::optional<std::uint64_t> parse_unsigned(std::string_view digits) {
  std::uint64_t value = 0;
  const auto* const end = digits.data() + digits.size();
  const auto [ptr, ec] = std::from_chars(digits.data(), end, value);
  if (digits.empty() || ec != std::errc() || ptr != end) {
    return std::nullopt;
  }
  return value;
}

// The value of `#define <macro> <decimal>` on this line, if the line is exactly that (optionally
// followed by a comment). Expressions such as "(CCCL_VERSION / 1000000)" are not values.
std::optional<std::uint64_t> define_value(std::string_view line, std::string_view macro) {
  line = trim(line);
  if (line.empty() || line.front() != '#') {
    return std::nullopt;
  }
  line = trim(line.substr(1));
  constexpr std::string_view k_define = "define";
  if (!line.starts_with(k_define)) {
    return std::nullopt;
  }
  line.remove_prefix(k_define.size());
  if (line.empty() || (line.front() != ' ' && line.front() != '\t')) {
    return std::nullopt;
  }
  line = trim(line);
  if (!line.starts_with(macro)) {
    return std::nullopt;
  }
  line.remove_prefix(macro.size());
  if (line.empty() || (line.front() != ' ' && line.front() != '\t')) {
    return std::nullopt; // a longer macro name (CUDA_VERSION_MAJOR) or a function-like macro
  }
  line = trim(line);
  const auto comment = line.find('/');
  if (comment != std::string_view::npos) {
    const auto rest = line.substr(comment);
    if (!rest.starts_with("//") && !rest.starts_with("/*")) {
      return std::nullopt;
    }
    line = trim(line.substr(0, comment));
  }
  return parse_unsigned(line);
}

// Calls `visit(line)` on each directive line (one holding a '#') of a header's first
// k_header_max_bytes until it returns true.
// Version macros sit near the top (CUDART_VERSION at line ~140 of the 1 MiB cuda_runtime_api.h),
// so the first k_header_head_bytes are read alone; the rest is read only when the macros are not
// there. A line cut by the end of the head is left to the second read, never parsed half.
template <class Visit> void for_each_header_line(const std::string& path, Visit&& visit) {
  const auto head = fs::read_file_prefix(path, k_header_head_bytes);
  if (!head) {
    return;
  }
  const bool whole_file = head->size() < k_header_head_bytes;
  const auto last_newline = head->rfind('\n');
  const std::size_t complete = whole_file                          ? head->size()
                               : last_newline == std::string::npos ? 0
                                                                   : last_newline + 1;
  bool done = false;
  for_each_directive_line(std::string_view(*head).substr(0, complete),
                          [&](std::string_view line) { return done = visit(line); });
  if (done || whole_file) {
    return;
  }
  const auto content = fs::read_file_prefix(path, k_header_max_bytes);
  if (content && content->size() > complete) {
    for_each_directive_line(std::string_view(*content).substr(complete), visit);
  }
}

// The first `#define <macro> <decimal>` in a header's first k_header_max_bytes.
std::optional<std::uint64_t> read_define(const std::string& path, std::string_view macro) {
  std::optional<std::uint64_t> value;
  for_each_header_line(path, [&](std::string_view line) {
    value = define_value(line, macro);
    return value.has_value();
  });
  return value;
}

// Parses a JSON file of at most `max_bytes`; a discarded (invalid) value if absent, larger or garbled.
nlohmann::json read_json_file(const std::string& path, std::uint64_t max_bytes) {
  const auto size = fs::file_size(path);
  if (!size || *size > max_bytes) {
    return nlohmann::json::value_t::discarded;
  }
  const auto content = fs::read_file_prefix(path, static_cast<size_t>(max_bytes));
  if (!content) {
    return nlohmann::json::value_t::discarded;
  }
  auto parsed =
      bounded_json::parse(*content, {.max_depth = 32, .max_bytes = static_cast<std::size_t>(max_bytes)});
  if (auto* document = std::get_if<nlohmann::json>(&parsed)) {
    return std::move(*document);
  }
  return nlohmann::json::value_t::discarded;
}

// The string member `key` of a JSON object, if there is one.
std::optional<std::string> string_member(const nlohmann::json& object, std::string_view key) {
  if (!object.is_object()) {
    return std::nullopt;
  }
  const auto it = object.find(key);
  if (it == object.end() || !it->is_string()) {
    return std::nullopt;
  }
  return it->get<std::string>();
}

// A directory's entry names: the run's shared `listing` when given, else `dir` listed now into
// `storage`; nullptr when it cannot be listed.
const std::vector<std::string_view>* entries_of(const std::string& dir,
                                                const std::vector<std::string_view>* listing,
                                                fs::DirectoryNames& storage) {
  if (listing != nullptr) {
    return listing;
  }
  auto listed = fs::list_directory_names(dir);
  if (!listed) {
    return nullptr;
  }
  storage = std::move(*listed);
  return &storage.names;
}

// The "Version:" header of a core-metadata file (RFC 822 style headers, ending at the first blank line).
std::optional<std::string> metadata_version(const std::string& metadata_path) {
  const auto content = fs::read_file_prefix(metadata_path, k_metadata_max_bytes);
  if (!content) {
    return std::nullopt;
  }
  std::optional<std::string> version;
  for_each_line(std::string_view(*content), [&](std::string_view line) {
    if (!line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
    }
    if (trim(line).empty()) {
      return true; // end of the headers: the long description follows
    }
    const auto colon = line.find(':');
    if (colon == std::string_view::npos || !equals_ignoring_case(line.substr(0, colon), "Version")) {
      return false;
    }
    const auto value = trim(line.substr(colon + 1));
    if (is_plausible_version(value, /*allow_dash=*/true)) {
      version = std::string(value);
    }
    return true; // only the first Version header counts
  });
  return version;
}

struct DistInfoDir {
  std::string name;    // nvidia_cuda_nvrtc-13.0.88.dist-info
  std::string version; // 13.0.88
};

// The version in "<dist>-<version>.dist-info" if <dist> normalises to `wanted`. Legacy installers
// may leave '-' in <dist>, so every '-' is tried as the separator.
std::optional<std::string> dist_info_version(std::string_view entry, const std::string& wanted) {
  if (!entry.ends_with(k_dist_info_suffix)) {
    return std::nullopt;
  }
  const auto stem = entry.substr(0, entry.size() - k_dist_info_suffix.size());
  for (auto dash = stem.find('-'); dash != std::string_view::npos; dash = stem.find('-', dash + 1)) {
    if (normalizes_to(stem.substr(0, dash), wanted)) {
      const auto version = stem.substr(dash + 1);
      return std::string(is_plausible_version(version, /*allow_dash=*/true) ? version : "");
    }
  }
  return std::nullopt;
}

struct CondaRecordName {
  std::string_view name;
  std::string_view version;
};

// "<name>-<version>-<build>.json" split at its last two dashes.
std::optional<CondaRecordName> parse_conda_record_name(std::string_view entry) {
  if (!entry.ends_with(k_json_suffix)) {
    return std::nullopt;
  }
  const auto stem = entry.substr(0, entry.size() - k_json_suffix.size());
  const auto build_dash = stem.rfind('-');
  if (build_dash == std::string_view::npos || build_dash == 0) {
    return std::nullopt;
  }
  const auto version_dash = stem.rfind('-', build_dash - 1);
  if (version_dash == std::string_view::npos || version_dash == 0) {
    return std::nullopt;
  }
  return CondaRecordName{stem.substr(0, version_dash),
                         stem.substr(version_dash + 1, build_dash - version_dash - 1)};
}

// One component of a dotted version: its leading digits (without leading zeros) and the rest.
struct VersionComponent {
  std::string_view number;
  std::string_view tail;
};

VersionComponent split_component(std::string_view component) {
  size_t digits = 0;
  while (digits < component.size() && is_digit(component[digits])) {
    ++digits;
  }
  auto number = component.substr(0, digits);
  while (number.size() > 1 && number.front() == '0') {
    number.remove_prefix(1);
  }
  if (number.empty()) {
    number = "0";
  }
  return {number, component.substr(digits)};
}

int sign(int value) {
  return (value > 0) - (value < 0);
}

int compare_components(std::string_view a, std::string_view b) {
  const auto left = split_component(a);
  const auto right = split_component(b);
  if (left.number.size() != right.number.size()) {
    return left.number.size() < right.number.size() ? -1 : 1;
  }
  if (const int by_number = sign(left.number.compare(right.number)); by_number != 0) {
    return by_number;
  }
  if (left.tail.empty() != right.tail.empty()) {
    return left.tail.empty() ? 1 : -1; // "0" after "0rc1"
  }
  return sign(left.tail.compare(right.tail));
}

// Pops the next '.'-separated component off `text` ("0" once `text` is exhausted).
std::string_view next_component(std::string_view& text) {
  if (text.empty()) {
    return "0";
  }
  const auto dot = text.find('.');
  const auto component = text.substr(0, dot);
  text = dot == std::string_view::npos ? std::string_view() : text.substr(dot + 1);
  return component;
}

std::optional<int> parse_int(std::string_view digits) {
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), is_digit)) {
    return std::nullopt;
  }
  int value = 0;
  const auto* const end = digits.data() + digits.size();
  const auto [ptr, ec] = std::from_chars(digits.data(), end, value);
  if (ec != std::errc() || ptr != end) {
    return std::nullopt;
  }
  return value;
}

} // namespace

std::string_view to_string(VersionSource source) {
  switch (source) {
  case VersionSource::file_name: return "file_name";
  case VersionSource::wheel_metadata: return "wheel_metadata";
  case VersionSource::toolkit_version_json: return "toolkit_version_json";
  case VersionSource::conda_meta: return "conda_meta";
  case VersionSource::header_macro: return "header_macro";
  case VersionSource::toolkit_dist_info: return "toolkit_dist_info";
  case VersionSource::dpkg_status: return "dpkg_status";
  case VersionSource::rpm_db: return "rpm_db";
  }
  return "unknown";
}

std::optional<std::string> version_from_file_name(std::string_view file_name, std::string_view soname) {
  constexpr std::string_view k_so = ".so";
  const auto name = fs::basename(file_name);
  const auto so_name = fs::basename(soname);
  const std::string_view reference = so_name.empty() ? std::string_view(name) : std::string_view(so_name);

  // The "libX.so" stem of the reference name and the version it carries itself ("13" for libnvrtc.so.13).
  std::string_view stem;
  std::string_view reference_version;
  if (const auto so = reference.find(".so."); so != std::string_view::npos) {
    stem = reference.substr(0, so + k_so.size());
    reference_version = reference.substr(so + k_so.size() + 1);
  } else if (reference.ends_with(k_so) && reference.size() > k_so.size()) {
    stem = reference;
  } else {
    return std::nullopt;
  }

  const std::string_view file(name);
  if (file.size() <= stem.size() + 1 || !file.starts_with(stem) || file[stem.size()] != '.') {
    return std::nullopt;
  }
  const auto version = file.substr(stem.size() + 1);
  if (!is_dotted_digits(version)) {
    return std::nullopt;
  }
  if (so_name.empty() ? version.find('.') == std::string_view::npos : version == reference_version) {
    return std::nullopt;
  }
  return std::string(version);
}

std::optional<FoundVersion> version_from_dist_info(const std::string& dir,
                                                   std::span<const std::string_view> distribution_names,
                                                   const std::vector<std::string_view>* listing) {
  fs::DirectoryNames read_here;
  const auto* entries = entries_of(dir, listing, read_here);
  if (entries == nullptr) {
    return std::nullopt;
  }
  const auto source =
      fs::basename(dir) == "dist-info" ? VersionSource::toolkit_dist_info : VersionSource::wheel_metadata;
  for (const auto wanted_name : distribution_names) {
    const auto wanted = normalize_distribution_name(wanted_name);
    if (wanted.empty()) {
      continue;
    }
    std::optional<DistInfoDir> best;
    for (const auto& entry : *entries) {
      auto version = dist_info_version(entry, wanted);
      if (!version || !fs::is_directory(fs::join(dir, entry))) {
        continue;
      }
      if (!best ||
          (!version->empty() && (best->version.empty() || compare_versions(*version, best->version) > 0))) {
        best = DistInfoDir{std::string(entry), std::move(*version)};
      }
    }
    if (!best) {
      continue;
    }
    const auto dist_info = fs::join(dir, best->name);
    const auto metadata = fs::join(dist_info, "METADATA");
    if (auto version = metadata_version(metadata)) {
      return FoundVersion{std::move(*version), source, metadata};
    }
    if (!best->version.empty()) {
      return FoundVersion{
          best->version, source,
          dist_info + " (version from the directory name: METADATA missing or without a Version header)"};
    }
  }
  return std::nullopt;
}

ToolkitVersions read_toolkit_version_json(const std::string& toolkit_root) {
  ToolkitVersions versions;
  const auto document = read_json_file(fs::join(toolkit_root, "version.json"), k_version_json_max_bytes);
  if (!document.is_object()) {
    return versions;
  }
  for (const auto& [key, entry] : document.items()) {
    if (auto version = string_member(entry, "version")) {
      versions.emplace(key, std::move(*version));
    }
  }
  return versions;
}

std::optional<FoundVersion> version_from_toolkit_json(const std::string& toolkit_root,
                                                      std::span<const std::string_view> keys) {
  return version_from_toolkit_json(toolkit_root, read_toolkit_version_json(toolkit_root), keys);
}

std::optional<FoundVersion> version_from_toolkit_json(const std::string& toolkit_root,
                                                      const ToolkitVersions& versions,
                                                      std::span<const std::string_view> keys) {
  for (const auto key : keys) {
    if (const auto it = versions.find(key); it != versions.end() && is_plausible_version(it->second, true)) {
      return FoundVersion{it->second, VersionSource::toolkit_version_json,
                          fs::join(toolkit_root, "version.json")};
    }
  }
  return std::nullopt;
}

std::optional<FoundVersion> toolkit_version(const std::string& toolkit_root) {
  constexpr std::string_view k_json_keys[] = {"cuda"};
  if (auto found = version_from_toolkit_json(toolkit_root, k_json_keys)) {
    return found;
  }
  constexpr std::string_view k_distributions[] = {
      "cuda-toolkit",             // the meta-package: the release's own version
      "nvidia-cuda-runtime",      // CUDA 13 runtime wheel
      "nvidia-cuda-runtime-cu12", // CUDA 12 runtime wheel
      "nvidia-cuda-runtime-cu11", // CUDA 11 runtime wheel
  };
  if (auto found = version_from_dist_info(fs::join(toolkit_root, "dist-info"), k_distributions)) {
    return found;
  }
  return cuda_version_from_header(fs::join(toolkit_root, "include"), "cuda_runtime_api.h", "CUDART_VERSION");
}

std::optional<FoundVersion> version_from_conda_meta(const std::string& prefix,
                                                    std::span<const std::string_view> package_names,
                                                    const std::vector<std::string_view>* listing) {
  const auto meta_dir = fs::join(prefix, "conda-meta");
  fs::DirectoryNames read_here;
  const auto* entries = entries_of(meta_dir, listing, read_here);
  if (entries == nullptr) {
    return std::nullopt;
  }
  for (const auto wanted : package_names) {
    if (wanted.empty()) {
      continue;
    }
    std::optional<FoundVersion> best;
    for (const auto& entry : *entries) {
      const auto record = parse_conda_record_name(entry);
      if (!record || !equals_ignoring_case(record->name, wanted) ||
          !is_plausible_version(record->version, /*allow_dash=*/false)) {
        continue;
      }
      const auto path = fs::join(meta_dir, entry);
      if (!fs::is_regular_file(path)) {
        continue;
      }
      FoundVersion found{std::string(record->version), VersionSource::conda_meta, path};
      const auto json = read_json_file(path, k_conda_record_max_bytes);
      if (json.is_object()) {
        const auto name = string_member(json, "name");
        if (name && !equals_ignoring_case(*name, wanted)) {
          continue; // a record whose content names another package
        }
        if (auto version = string_member(json, "version"); version && is_plausible_version(*version, false)) {
          found.version = std::move(*version);
        }
      } else {
        found.evidence += " (version from the file name: record too large or not valid JSON)";
      }
      if (!best || compare_versions(found.version, best->version) > 0) {
        best = std::move(found);
      }
    }
    if (best) {
      return best;
    }
  }
  return std::nullopt;
}

std::optional<FoundVersion> cccl_version_from_headers(const std::string& include_dir) {
  constexpr std::string_view k_cccl_headers[] = {
      "cuda/version",              // the documented entry point; includes <cuda/std/version>
      "cuda/std/version",          // includes the generated version header
      "cuda/std/__cccl/version.h", // where CCCL 2.x and 3.x define CCCL_VERSION
  };
  for (const auto header : k_cccl_headers) {
    const auto path = fs::join(include_dir, header);
    // The first definition of each macro, in one read of the header: CCCL_VERSION when it is
    // positive, else the three parts.
    constexpr std::string_view k_macros[] = {"CCCL_VERSION", "CCCL_MAJOR_VERSION", "CCCL_MINOR_VERSION",
                                             "CCCL_PATCH_VERSION"};
    std::optional<std::uint64_t> values[std::size(k_macros)];
    for_each_header_line(path, [&](std::string_view line) {
      for (std::size_t i = 0; i < std::size(k_macros); ++i) {
        if (!values[i]) {
          values[i] = define_value(line, k_macros[i]);
        }
      }
      return (values[0] && *values[0] > 0) || (values[0] && values[1] && values[2] && values[3]);
    });
    const auto& [version, major, minor, patch] = values;
    if (version && *version > 0) {
      return FoundVersion{std::to_string(*version / 1000000) + "." + std::to_string(*version / 1000 % 1000) +
                              "." + std::to_string(*version % 1000),
                          VersionSource::header_macro, path};
    }
    if (major && minor && patch) {
      return FoundVersion{std::to_string(*major) + "." + std::to_string(*minor) + "." +
                              std::to_string(*patch),
                          VersionSource::header_macro, path};
    }
  }
  constexpr std::pair<std::string_view, std::string_view> k_legacy_headers[] = {
      {"thrust/version.h", "THRUST_VERSION"}, // major*100000 + minor*100 + subminor
      {"cub/version.cuh", "CUB_VERSION"},     // same encoding
  };
  for (const auto& [header, macro] : k_legacy_headers) {
    const auto path = fs::join(include_dir, header);
    if (const auto value = read_define(path, macro); value && *value > 0) {
      return FoundVersion{std::to_string(*value / 100000) + "." + std::to_string(*value / 100 % 1000) + "." +
                              std::to_string(*value % 100),
                          VersionSource::header_macro, path};
    }
  }
  return std::nullopt;
}

std::optional<FoundVersion> cuda_version_from_header(const std::string& include_dir,
                                                     std::string_view header_name, std::string_view macro) {
  if (macro.empty()) {
    return std::nullopt;
  }
  const auto path = fs::join(include_dir, header_name);
  const auto value = read_define(path, macro);
  if (!value || *value < 1000) {
    return std::nullopt;
  }
  return FoundVersion{std::to_string(*value / 1000) + "." + std::to_string(*value % 1000 / 10),
                      VersionSource::header_macro, path};
}

std::optional<FoundVersion> version_from_macros(const std::string& include_dir, std::string_view header_name,
                                                std::string_view major, std::string_view minor,
                                                std::string_view patch) {
  if (header_name.empty() || major.empty() || minor.empty()) {
    return std::nullopt;
  }
  const auto path = fs::join(include_dir, header_name);
  std::optional<std::uint64_t> values[3];
  const std::string_view names[3] = {major, minor, patch};
  for_each_header_line(path, [&](std::string_view line) {
    for (int i = 0; i < 3; ++i) {
      if (!values[i] && !names[i].empty()) {
        values[i] = define_value(line, names[i]);
      }
    }
    return values[0] && values[1] && (patch.empty() || values[2]);
  });
  if (!values[0] || !values[1]) {
    return std::nullopt;
  }
  auto version = std::to_string(*values[0]) + "." + std::to_string(*values[1]);
  if (values[2]) {
    version += "." + std::to_string(*values[2]);
  }
  return FoundVersion{std::move(version), VersionSource::header_macro, path};
}

int compare_versions(std::string_view a, std::string_view b) {
  while (!a.empty() || !b.empty()) {
    const auto left = next_component(a);
    const auto right = next_component(b);
    if (const int order = compare_components(left, right); order != 0) {
      return order;
    }
  }
  return 0;
}

std::optional<std::pair<int, int>> major_minor(std::string_view version) {
  const auto dot = version.find('.');
  if (dot == std::string_view::npos) {
    return std::nullopt;
  }
  const auto rest = version.substr(dot + 1);
  const auto major = parse_int(version.substr(0, dot));
  const auto minor = parse_int(rest.substr(0, rest.find('.')));
  if (!major || !minor) {
    return std::nullopt;
  }
  return std::pair{*major, *minor};
}

} // namespace cudadiag::versions
