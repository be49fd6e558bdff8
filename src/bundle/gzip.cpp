#include "bundle/gzip.hpp"

#include <zlib.h>

#include <array>
#include <limits>

namespace cudadiag::bundle {
namespace {

// zlib's windowBits: 15 (32 KiB window) + 16 selects the gzip wrapper.
constexpr int k_gzip_window_bits = 15 + 16;
constexpr int k_memory_level = 8;
constexpr std::size_t k_chunk = std::size_t{64} * 1024;

// zlib counts in uInt; feed it in pieces no larger than that.
uInt chunk_size(std::size_t left) {
  return static_cast<uInt>(std::min<std::size_t>(left, std::numeric_limits<uInt>::max()));
}

} // namespace

bool looks_like_gzip(std::string_view data) {
  return data.size() >= 2 && static_cast<unsigned char>(data[0]) == 0x1fU &&
         static_cast<unsigned char>(data[1]) == 0x8bU;
}

Expected<std::string> gzip_compress(std::string_view data) {
  z_stream stream{};
  if (deflateInit2(&stream, Z_BEST_COMPRESSION, Z_DEFLATED, k_gzip_window_bits, k_memory_level,
                   Z_DEFAULT_STRATEGY) != Z_OK) {
    return Error{"zlib deflateInit2 failed"};
  }
  std::string out;
  std::array<unsigned char, k_chunk> buffer{};
  std::size_t offset = 0;
  int status = Z_OK;
  do {
    const uInt take = chunk_size(data.size() - offset);
    // zlib does not write through next_in; its API predates const.
    stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data() + offset)); // NOLINT
    stream.avail_in = take;
    offset += take;
    const int flush = offset == data.size() ? Z_FINISH : Z_NO_FLUSH;
    do {
      stream.next_out = buffer.data();
      stream.avail_out = static_cast<uInt>(buffer.size());
      status = deflate(&stream, flush);
      if (status == Z_STREAM_ERROR) {
        deflateEnd(&stream);
        return Error{"zlib deflate failed"};
      }
      out.append(reinterpret_cast<const char*>(buffer.data()), buffer.size() - stream.avail_out);
    } while (stream.avail_out == 0);
  } while (status != Z_STREAM_END);
  deflateEnd(&stream);
  return out;
}

Expected<std::string> gzip_decompress(std::string_view data, std::size_t max_output) {
  if (!looks_like_gzip(data)) {
    return Error{"not gzip data (bad magic)"};
  }
  std::string out;
  std::array<unsigned char, k_chunk> buffer{};
  std::size_t offset = 0;
  // One inflate stream per gzip member; `cat a.gz b.gz` is valid gzip.
  while (offset < data.size()) {
    z_stream stream{};
    if (inflateInit2(&stream, k_gzip_window_bits) != Z_OK) {
      return Error{"zlib inflateInit2 failed"};
    }
    int status = Z_OK;
    while (status != Z_STREAM_END) {
      if (stream.avail_in == 0) {
        if (offset == data.size()) {
          inflateEnd(&stream);
          return Error{"truncated gzip data"};
        }
        const uInt take = chunk_size(data.size() - offset);
        stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data() + offset)); // NOLINT
        stream.avail_in = take;
        offset += take;
      }
      stream.next_out = buffer.data();
      stream.avail_out = static_cast<uInt>(buffer.size());
      status = inflate(&stream, Z_NO_FLUSH);
      if (status != Z_OK && status != Z_STREAM_END && status != Z_BUF_ERROR) {
        std::string message = stream.msg != nullptr ? stream.msg : "zlib error " + std::to_string(status);
        inflateEnd(&stream);
        return Error{"corrupt gzip data: " + message};
      }
      const std::size_t produced = buffer.size() - stream.avail_out;
      if (status == Z_BUF_ERROR && stream.avail_in != 0 && produced == 0) {
        inflateEnd(&stream);
        return Error{"corrupt gzip data: inflate made no progress"};
      }
      if (out.size() + produced > max_output) {
        inflateEnd(&stream);
        return Error{"gzip data expands beyond " + std::to_string(max_output) + " bytes"};
      }
      out.append(reinterpret_cast<const char*>(buffer.data()), produced);
    }
    // Input the finished member did not consume belongs to the next member (or is padding).
    offset -= stream.avail_in;
    inflateEnd(&stream);
    if (offset < data.size() && !looks_like_gzip(data.substr(offset))) {
      break; // trailing zero padding some writers append; nothing more to read
    }
  }
  return out;
}

} // namespace cudadiag::bundle
