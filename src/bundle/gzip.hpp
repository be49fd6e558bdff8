#pragma once
// gzip (RFC 1952) compression and decompression of in-memory data, through zlib. Bundles are small
// (a report and some text files), so whole buffers are handled at once.

#include "core/expected.hpp"

#include <cstddef>
#include <string>
#include <string_view>

namespace cudadiag::bundle {

// `data` as one gzip member (best compression). Errors only when zlib itself fails.
Expected<std::string> gzip_compress(std::string_view data);

// The concatenated content of every gzip member in `data`. Errors: "not gzip data (bad magic)",
// "truncated gzip data", "corrupt gzip data: <zlib message>", "gzip data expands beyond N bytes"
// (output is refused past `max_output` bytes, so a crafted file cannot exhaust memory).
Expected<std::string> gzip_decompress(std::string_view data, std::size_t max_output);

// Whether `data` starts with the gzip magic bytes 1f 8b.
bool looks_like_gzip(std::string_view data);

} // namespace cudadiag::bundle
