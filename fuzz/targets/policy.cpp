// A policy file: the first byte picks the name it is read under (x.json, x.toml, or no extension:
// sniffed), the rest is its text.
#include "policy/policy_file.hpp"
#include "policy/toml_subset.hpp"
#include "targets.hpp"

namespace cudadiag::fuzz {

int policy(const std::uint8_t* data, std::size_t size) {
  if (size == 0) {
    return 0;
  }
  constexpr const char* k_names[] = {"gate.json", "gate.toml", "gate"};
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  static_cast<void>(policy::policy_from_text(k_names[data[0] % 3], text));
  // Whatever the TOML subset accepts is valid JSON data (the old invalid-UTF-8 crash was a dump()).
  if (const auto document = policy::parse_toml_subset(text)) {
    static_cast<void>(document->dump());
  }
  return 0;
}

} // namespace cudadiag::fuzz
