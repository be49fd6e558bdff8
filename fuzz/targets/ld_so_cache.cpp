#include "loader/ld_so_cache.hpp"

#include "targets.hpp"

namespace cudadiag::fuzz {

int ld_so_cache(const std::uint8_t* data, std::size_t size) {
  const auto cache = loader::parse_ld_so_cache(std::span(reinterpret_cast<const std::byte*>(data), size));
  if (!cache) {
    return 0;
  }
  for (const auto& entry : cache->entries()) {
    static_cast<void>(entry.arch_label());
    static_cast<void>(cache->resolve(entry.soname));
  }
  // What the parser accepted, written back out in the new format, parses to the same entries.
  const auto rebuilt = loader::build_ld_so_cache(cache->entries());
  const auto again = loader::parse_ld_so_cache(
      std::span(reinterpret_cast<const std::byte*>(rebuilt.data()), rebuilt.size()));
  check(again.has_value(), "a rebuilt ld.so.cache parses");
  check(again->entries().size() == cache->entries().size(), "a rebuilt ld.so.cache keeps its entries");
  return 0;
}

} // namespace cudadiag::fuzz
