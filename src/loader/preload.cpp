#include "loader/preload.hpp"

#include "core/filesystem.hpp"

#include <string_view>

namespace cudadiag::loader {
namespace {

void add_entries(std::string_view list, std::string_view separators, bool from_file,
                 const std::string& source, std::vector<Preload>& out) {
  std::size_t start = 0;
  while (start <= list.size()) {
    const auto at = list.find_first_of(separators, start);
    const auto entry = list.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start);
    if (!entry.empty()) {
      out.push_back({std::string(entry), from_file, source});
    }
    if (at == std::string_view::npos) {
      break;
    }
    start = at + 1;
  }
}

} // namespace

std::vector<Preload> system_preloads(const Environment& env, const SystemLayout& layout) {
  std::vector<Preload> all;
  if (const auto value = env.get("LD_PRELOAD"); value && !value->empty()) {
    add_entries(*value, " :", false, "LD_PRELOAD", all);
  }
  if (!layout.ld_so_preload.empty()) {
    if (auto text = fs::read_file_prefix(layout.ld_so_preload, std::size_t{64} << 10U)) {
      add_entries(*text, " \t\n\r:", true, std::string(k_ld_so_preload_name), all);
    }
  }
  return all;
}

} // namespace cudadiag::loader
