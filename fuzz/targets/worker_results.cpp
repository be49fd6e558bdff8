// What a worker answers, decoded into typed facts (src/verify/facts_codec: the five probes;
// src/linkage/link_map: the load check). The parent hands a decoder only a result object the
// bounded parser accepted (src/worker/process: depth 32), so this target does the same. A decoded
// link map survives its own encoding unchanged.
#include "core/bounded_json.hpp"
#include "linkage/link_map.hpp"
#include "targets.hpp"
#include "verify/facts_codec.hpp"

namespace cudadiag::fuzz {

int worker_results(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto parsed =
      cudadiag::bounded_json::parse(text, {.max_depth = 32, .max_bytes = std::size_t{1} << 20U});
  if (std::get_if<nlohmann::json>(&parsed) == nullptr) {
    return 0;
  }
  for (const std::string_view kind : {"driver", "nvml", "nvrtc", "nvjitlink", "cudart"}) {
    const auto facts = verify::decode(kind, text);
    static_cast<void>(verify::to_json(facts).dump());
  }
  if (const auto facts = linkage::decode_link_map(text)) {
    const auto again = linkage::decode_link_map(linkage::encode(*facts));
    check(again.has_value() && again->error == facts->error && again->failed_at == facts->failed_at &&
              again->before.size() == facts->before.size() && again->after.size() == facts->after.size(),
          "a decoded link map re-encodes to the same facts");
  }
  return 0;
}

} // namespace cudadiag::fuzz
