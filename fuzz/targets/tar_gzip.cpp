// The bundle's archive code: gzip_decompress and read_tar on the bytes as given, and a TarWriter
// round trip of members named by the input's lines (empty prefixes, long names, odd bytes).
#include "bundle/gzip.hpp"
#include "bundle/tar_archive.hpp"
#include "targets.hpp"

namespace cudadiag::fuzz {

int tar_gzip(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (bundle::looks_like_gzip(bytes)) {
    if (const auto tar = bundle::gzip_decompress(bytes, std::size_t{1} << 24U)) {
      static_cast<void>(bundle::read_tar(*tar));
    }
  } else {
    static_cast<void>(bundle::read_tar(bytes));
  }

  bundle::TarWriter writer(0);
  std::vector<std::pair<std::string, std::string>> added;
  std::string_view rest = bytes;
  while (!rest.empty() && added.size() < 16) {
    const auto newline = rest.find('\n');
    const auto line = rest.substr(0, newline);
    rest = newline == std::string_view::npos ? std::string_view() : rest.substr(newline + 1);
    const auto tab = line.find('\t');
    const auto name = std::string(line.substr(0, tab));
    const auto content = tab == std::string_view::npos ? std::string() : std::string(line.substr(tab + 1));
    if (writer.add_file(name, content)) {
      added.emplace_back(name, content);
    }
  }
  const auto archive = writer.finish();
  const auto entries = bundle::read_tar(archive);
  check(entries.has_value(), "what TarWriter wrote reads back");
  check(entries->size() == added.size(), "every member TarWriter took reads back");
  for (std::size_t i = 0; i < added.size(); ++i) {
    check((*entries)[i].name == added[i].first && (*entries)[i].content == added[i].second,
          "a member reads back with its name and content");
  }
  const auto packed = bundle::gzip_compress(archive);
  check(packed.has_value(), "gzip_compress succeeds");
  const auto unpacked = bundle::gzip_decompress(*packed, archive.size() + 1);
  check(unpacked.has_value() && *unpacked == archive, "gzip round trip");
  return 0;
}

} // namespace cudadiag::fuzz
