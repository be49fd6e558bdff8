// The options JSON of cudadiag_options_from_json: accepted options survive to_json and back.
#include "api/settings.hpp"
#include "targets.hpp"

namespace cudadiag::fuzz {

int options_json(const std::uint8_t* data, std::size_t size) {
  const api::Settings base;
  const auto settings = api::apply_json(base, std::string_view(reinterpret_cast<const char*>(data), size));
  if (settings) {
    const auto text = api::to_json(*settings).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    const auto again = api::apply_json(base, text);
    check(again.has_value(), "options written by to_json are accepted");
    check(api::to_json(*again) == api::to_json(*settings), "options round-trip through to_json");
  }
  return 0;
}

} // namespace cudadiag::fuzz
