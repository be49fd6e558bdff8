#include "inspect/process_maps.hpp"
#include "targets.hpp"

namespace cudadiag::fuzz {

int proc_maps(const std::uint8_t* data, std::size_t size) {
  static_cast<void>(inspect::parse_proc_maps(std::string_view(reinterpret_cast<const char*>(data), size)));
  return 0;
}

} // namespace cudadiag::fuzz
