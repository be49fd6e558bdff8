// The bounded JSON parser against nlohmann's own: the same document whenever both accept, and a
// refusal only for what nlohmann refuses too (or for depth). Worker protocol lines, report inputs,
// policies and options all go through this parser.
#include "core/bounded_json.hpp"

#include "targets.hpp"

namespace cudadiag::fuzz {

int bounded_json(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto ours =
      cudadiag::bounded_json::parse(text, {.max_depth = 64, .max_bytes = std::size_t{1} << 20U});
  const auto theirs = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (const auto* document = std::get_if<nlohmann::json>(&ours)) {
    check(!theirs.is_discarded() && *document == theirs,
          "bounded_json accepts only what nlohmann accepts, alike");
    static_cast<void>(document->dump());
  } else {
    const auto& failure = std::get<cudadiag::bounded_json::Failure>(ours);
    check(failure.problem == cudadiag::bounded_json::Problem::too_deep || theirs.is_discarded(),
          "bounded_json refuses only what nlohmann refuses, or what nests too deep");
    static_cast<void>(failure.message());
  }
  return 0;
}

} // namespace cudadiag::fuzz
