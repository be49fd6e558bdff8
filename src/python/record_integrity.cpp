#include "python/record_integrity.hpp"

#include "core/filesystem.hpp"
#include "core/sha256.hpp"
#include "core/text.hpp"
#include "python/framework_requirements.hpp"

#include <charconv>
#include <map>

namespace cudadiag::python {

namespace {

constexpr std::size_t k_record_max_bytes = std::size_t{64} << 20;

// The fields of one RECORD line. Paths with a comma are quoted (csv); such names never name a
// library, so a quoted line is skipped.
struct RecordLine {
  std::string_view path;
  std::string_view hash;
  std::string_view size;
};

std::optional<RecordLine> parse_record_line(std::string_view line) {
  if (!line.empty() && line.back() == '\r') {
    line.remove_suffix(1);
  }
  if (line.empty() || line.front() == '"') {
    return std::nullopt;
  }
  const auto first = line.find(',');
  if (first == std::string_view::npos) {
    return std::nullopt;
  }
  const auto second = line.find(',', first + 1);
  if (second == std::string_view::npos) {
    return std::nullopt;
  }
  return RecordLine{line.substr(0, first), line.substr(first + 1, second - first - 1),
                    line.substr(second + 1)};
}

} // namespace

bool record_checked(std::string_view canonical) {
  return canonical.starts_with("nvidia-") || canonical.starts_with("cuda-") || is_framework(canonical);
}

bool is_library_file_name(std::string_view name) {
  for (auto at = name.find(".so"); at != std::string_view::npos && at > 0; at = name.find(".so", at + 1)) {
    const auto rest = name.substr(at + 3);
    if (rest.empty() || (rest.front() == '.' && rest.size() > 1 &&
                         rest.find_first_not_of("0123456789.") == std::string_view::npos)) {
      return true;
    }
  }
  return false;
}

RecordCheck check_records(const std::vector<Distribution>& installed, bool hashes) {
  RecordCheck out;
  out.hashes = hashes;
  std::map<std::string, RecordedFile> files; // by absolute path
  std::vector<std::string> order;
  for (const auto& distribution : installed) {
    if (!record_checked(distribution.canonical_name)) {
      continue;
    }
    const auto record =
        fs::read_file_prefix(fs::join(distribution.dist_info, "RECORD"), k_record_max_bytes + 1);
    if (!record || record->size() > k_record_max_bytes) {
      continue;
    }
    ++out.distributions;
    const auto site = fs::parent(distribution.dist_info);
    // conda rewrites its install prefix inside binaries, padded to the same size: their digests
    // are no longer the RECORD's although nothing was replaced.
    const auto installer = fs::read_file_prefix(fs::join(distribution.dist_info, "INSTALLER"), 64);
    const bool relocated = installer && trim(*installer) == "conda";
    for (const auto raw : split_lines(*record)) {
      const auto line = parse_record_line(raw);
      if (!line || !is_library_file_name(fs::basename(line->path))) {
        continue;
      }
      RecordClaim claim;
      claim.digest_comparable = !relocated;
      claim.distribution = distribution.canonical_name;
      claim.version = distribution.version;
      claim.dist_info = distribution.dist_info;
      if (line->hash.starts_with("sha256=")) {
        claim.sha256 = std::string(line->hash.substr(7));
      }
      std::uint64_t size = 0;
      const auto* end = line->size.data() + line->size.size();
      if (!line->size.empty() && std::from_chars(line->size.data(), end, size).ptr == end) {
        claim.size = size;
      }
      const auto path = fs::lexically_normal(fs::join(site, line->path));
      auto [at, inserted] = files.try_emplace(path);
      if (inserted) {
        at->second.path = path;
        at->second.relative = std::string(line->path);
        order.push_back(path);
      }
      at->second.claims.push_back(std::move(claim));
    }
  }
  for (const auto& path : order) {
    auto& file = files[path];
    ++out.files;
    file.size = fs::file_size(file.path);
    if (hashes && file.size) {
      if (const auto digest = sha256_file(file.path)) {
        file.sha256 = sha256_record(*digest);
      }
    }
    bool any_differs = false;
    for (auto& claim : file.claims) {
      claim.size_matches = file.size && claim.size && *file.size == *claim.size;
      if (!file.sha256.empty() && !claim.sha256.empty() && claim.digest_comparable) {
        claim.hash_matches = file.sha256 == claim.sha256;
      }
      // A RECORD line without a size says nothing about it.
      any_differs = any_differs || !file.size || (claim.size && !claim.size_matches) ||
                    claim.hash_matches == std::optional<bool>(false);
    }
    if (file.claims.size() > 1) {
      out.shared.push_back(std::move(file));
    } else if (any_differs) {
      out.differing.push_back(std::move(file));
    }
  }
  return out;
}

} // namespace cudadiag::python
