#include "image/image.hpp"

#include "core/bounded_json.hpp"
#include "core/filesystem.hpp"
#include "core/mapped_file.hpp"
#include "core/system_root.hpp"
#include "core/unique_fd.hpp"

#include <fcntl.h>
#include <ftw.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <sys/stat.h>
#include <unordered_map>
#include <unordered_set>

namespace cudadiag::image {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr std::size_t k_block = 512;
constexpr std::size_t k_max_json = std::size_t{16} << 20U; // a manifest, index or config
constexpr int k_max_index_depth = 4;                       // nested image indexes
constexpr std::string_view k_whiteout = ".wh.";
constexpr std::string_view k_opaque = ".wh..wh..opq";

#if defined(__aarch64__)
constexpr std::string_view k_host_architecture = "arm64";
#else
constexpr std::string_view k_host_architecture = "amd64";
#endif

// ---- bytes in: a layer as it is stored, plain or gzip-compressed ------------------------------

class Stream {
public:
  virtual ~Stream() = default;
  // Up to `length` bytes into `out`: how many (0 at the end), or why not.
  virtual Expected<std::size_t> read(char* out, std::size_t length) = 0;
};

class MemoryStream final : public Stream {
public:
  explicit MemoryStream(std::string_view data) : m_data(data) {}
  Expected<std::size_t> read(char* out, std::size_t length) override {
    const auto take = std::min(length, m_data.size() - m_at);
    std::memcpy(out, m_data.data() + m_at, take);
    m_at += take;
    return take;
  }

private:
  std::string_view m_data;
  std::size_t m_at = 0;
};

class GzipStream final : public Stream {
public:
  explicit GzipStream(std::string_view data) : m_data(data) {
    m_ok = inflateInit2(&m_stream, 15 + 32) == Z_OK; // gzip or zlib header, detected
  }
  ~GzipStream() override { inflateEnd(&m_stream); }
  GzipStream(const GzipStream&) = delete;
  GzipStream& operator=(const GzipStream&) = delete;

  Expected<std::size_t> read(char* out, std::size_t length) override {
    if (!m_ok) {
      return Error{"cannot start gzip decompression"};
    }
    std::size_t done = 0;
    while (done < length && !m_ended) {
      if (m_stream.avail_in == 0 && m_at < m_data.size()) {
        const auto take = std::min<std::size_t>(m_data.size() - m_at, std::numeric_limits<uInt>::max());
        m_stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(m_data.data() + m_at));
        m_stream.avail_in = static_cast<uInt>(take);
        m_at += take;
      }
      m_stream.next_out = reinterpret_cast<Bytef*>(out + done);
      m_stream.avail_out =
          static_cast<uInt>(std::min<std::size_t>(length - done, std::numeric_limits<uInt>::max()));
      const auto before = m_stream.avail_out;
      const int status = inflate(&m_stream, Z_NO_FLUSH);
      done += before - m_stream.avail_out;
      if (status == Z_STREAM_END) {
        m_ended = true;
      } else if (status == Z_BUF_ERROR && m_stream.avail_in == 0 && m_at >= m_data.size()) {
        return Error{"truncated gzip data"};
      } else if (status != Z_OK && status != Z_BUF_ERROR) {
        return Error{std::string("corrupt gzip data (") +
                     (m_stream.msg != nullptr ? m_stream.msg : "inflate") + ")"};
      }
    }
    return done;
  }

private:
  std::string_view m_data;
  std::size_t m_at = 0;
  z_stream m_stream{};
  bool m_ok = false;
  bool m_ended = false;
};

bool is_gzip(std::string_view data) {
  return data.size() >= 2 && static_cast<unsigned char>(data[0]) == 0x1fU &&
         static_cast<unsigned char>(data[1]) == 0x8bU;
}
bool is_zstd(std::string_view data) {
  return data.substr(0, 4) == std::string_view("\x28\xb5\x2f\xfd", 4);
}

Expected<std::unique_ptr<Stream>> open_stream(std::string_view blob) {
  if (is_zstd(blob)) {
    return Error{"a zstd-compressed layer, which cudadiag cannot read (only tar and tar+gzip)"};
  }
  if (is_gzip(blob)) {
    return std::unique_ptr<Stream>(std::make_unique<GzipStream>(blob));
  }
  return std::unique_ptr<Stream>(std::make_unique<MemoryStream>(blob));
}

// Exactly `length` bytes, or an Error (a short read is a truncated archive).
Expected<void> read_exact(Stream& in, char* out, std::size_t length, std::string_view what) {
  std::size_t done = 0;
  while (done < length) {
    auto got_or = in.read(out + done, length - done);
    if (!got_or) {
      return std::move(got_or).error();
    }
    auto& got = *got_or;
    if (got == 0) {
      return Error{"truncated archive: " + std::string(what) + " needs " + std::to_string(length) +
                   " bytes, " + std::to_string(done) + " left"};
    }
    done += got;
  }
  return {};
}

// ---- tar headers ------------------------------------------------------------------------------

std::string_view field(const std::array<char, k_block>& block, std::size_t offset, std::size_t length) {
  const std::string_view text(block.data() + offset, length);
  return text.substr(0, text.find('\0'));
}

// An octal field, or GNU's base-256 (high bit set); nullopt when it is neither.
std::optional<std::uint64_t> number(const std::array<char, k_block>& block, std::size_t offset,
                                    std::size_t length) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(block.data() + offset);
  if ((bytes[0] & 0x80U) != 0) {
    std::uint64_t value = bytes[0] & 0x7fU;
    for (std::size_t i = 1; i < length; ++i) {
      if (value > (std::numeric_limits<std::uint64_t>::max() >> 8U)) {
        return std::nullopt;
      }
      value = (value << 8U) | bytes[i];
    }
    return value;
  }
  std::uint64_t value = 0;
  bool digits = false;
  for (std::size_t i = 0; i < length; ++i) {
    const char c = static_cast<char>(bytes[i]);
    if (c == ' ' || c == '\0') {
      if (digits) {
        break;
      }
      continue;
    }
    if (c < '0' || c > '7' || value > (std::numeric_limits<std::uint64_t>::max() >> 3U)) {
      return std::nullopt;
    }
    value = value * 8 + static_cast<std::uint64_t>(c - '0');
    digits = true;
  }
  return value;
}

bool checksum_ok(const std::array<char, k_block>& block) {
  const auto stored = number(block, 148, 8);
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < k_block; ++i) {
    sum += (i >= 148 && i < 156) ? std::uint64_t{' '} : std::uint64_t{static_cast<unsigned char>(block[i])};
  }
  return stored && *stored == sum;
}

// A pax record set's `key` ("path", "linkpath"), if present.
std::optional<std::string> pax_value(std::string_view records, std::string_view key) {
  std::optional<std::string> found;
  while (!records.empty()) {
    const auto space = records.find(' ');
    if (space == std::string_view::npos) {
      break;
    }
    std::size_t length = 0;
    for (const char c : records.substr(0, space)) {
      if (c < '0' || c > '9') {
        return found;
      }
      length = length * 10 + static_cast<std::size_t>(c - '0');
    }
    if (length <= space || length > records.size()) {
      return found;
    }
    const auto record = records.substr(space + 1, length - space - 2); // without the newline
    if (const auto equals = record.find('=');
        equals != std::string_view::npos && record.substr(0, equals) == key) {
      found = std::string(record.substr(equals + 1));
    }
    records.remove_prefix(length);
  }
  return found;
}

// ---- the tree ---------------------------------------------------------------------------------

int remove_entry(const char* path, const struct stat* /*st*/, int type, struct FTW* /*ftw*/) {
  if (type == FTW_DP) {
    ::rmdir(path);
  } else {
    ::unlink(path);
  }
  return 0;
}

void remove_tree(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    return;
  }
  if (!S_ISDIR(st.st_mode)) {
    ::unlink(path.c_str());
    return;
  }
  ::nftw(path.c_str(), remove_entry, 32, FTW_DEPTH | FTW_PHYS);
}

// A member name as the root names it ("/usr/lib/x"), or why it is refused. "" for the root itself.
Expected<std::string> member_path(std::string_view name, std::size_t max_name) {
  if (name.size() > max_name) {
    return Error{"a name of " + std::to_string(name.size()) + " bytes (the limit is " +
                 std::to_string(max_name) + ")"};
  }
  if (!name.empty() && name.front() == '/') {
    return Error{"an absolute path"};
  }
  std::string out;
  std::size_t start = 0;
  while (start <= name.size()) {
    const auto end = std::min(name.find('/', start), name.size());
    const auto part = name.substr(start, end - start);
    if (part == "..") {
      return Error{"a '..' component"};
    }
    if (!part.empty() && part != ".") {
      out.append("/").append(part);
    }
    start = end + 1;
  }
  return out;
}

struct Applier {
  Image& image;
  const Limits& limits;
  Clock::time_point deadline;
  std::string tree;
  std::size_t layer = 0;
  std::unordered_set<std::string> this_layer; // the paths this layer made (whiteouts spare them)

  // The host path of the root's `path`, its directories made as needed (all resolved inside the tree).
  Expected<std::string> place(const std::string& path) {
    const auto slash = path.rfind('/');
    const auto parent = path.substr(0, slash);
    std::string walked;
    std::size_t start = 1;
    while (start <= parent.size() && !parent.empty()) {
      const auto end = std::min(parent.find('/', start), parent.size());
      walked = parent.substr(0, end);
      const auto host = fs::resolve_in_root(tree, walked, fs::FollowLast::yes);
      if (host.empty()) {
        return Error{"its directory " + walked + " is a symbolic link loop"};
      }
      struct stat st {};
      if (::lstat(host.c_str(), &st) != 0) {
        // Missing (also where a link points to a directory no layer made): each missing directory
        // from the tree down, none of them a link (they do not exist yet); never through "..".
        for (std::size_t at = tree.size(); at != std::string::npos;) {
          const auto next = host.find('/', at + 1);
          const auto part =
              host.substr(at + 1, next == std::string::npos ? std::string::npos : next - at - 1);
          if (part == "..") {
            return Error{"its directory " + walked + " leads out of the image through a symbolic link"};
          }
          const auto step = host.substr(0, next);
          if (::lstat(step.c_str(), &st) != 0 && ::mkdir(step.c_str(), 0755) != 0) {
            return Error{"cannot make directory " + walked + ": " + std::strerror(errno)};
          }
          at = next;
        }
      } else if (!S_ISDIR(st.st_mode)) {
        return Error{"its directory " + walked + " is not a directory in the layers below"};
      }
      start = end + 1;
    }
    const auto host_parent = fs::resolve_in_root(tree, parent.empty() ? "/" : parent, fs::FollowLast::yes);
    return host_parent + path.substr(slash);
  }

  void forget(const std::string& path) {
    for (auto it = image.origin.lower_bound(path); it != image.origin.end();) {
      if (it->first == path ||
          (it->first.size() > path.size() && it->first.compare(0, path.size(), path) == 0 &&
           it->first[path.size()] == '/')) {
        it = image.origin.erase(it);
      } else if (it->first.compare(0, path.size(), path) != 0) {
        break;
      } else {
        ++it;
      }
    }
  }

  // A whiteout in directory `directory` ("/usr/lib"): NAME from the layers below, or (opaque) every
  // entry of the directory the layers below made.
  Expected<void> whiteout(const std::string& directory, std::string_view name) {
    const auto host_directory =
        fs::resolve_in_root(tree, directory.empty() ? "/" : directory, fs::FollowLast::yes);
    if (name == k_opaque) {
      auto entries = fs::list_directory(host_directory);
      if (!entries) {
        return {};
      }
      for (const auto& entry : *entries) {
        const auto path = directory + "/" + entry;
        if (this_layer.count(path) == 0) {
          remove_tree(host_directory + "/" + entry);
          forget(path);
        }
      }
      return {};
    }
    const auto target = std::string(name.substr(k_whiteout.size()));
    if (target.empty() || target == "." || target == "..") {
      return Error{"a whiteout of nothing"};
    }
    const auto path = directory + "/" + target;
    if (this_layer.count(path) == 0) {
      remove_tree(host_directory + "/" + target);
      forget(path);
    }
    return {};
  }

  // Replaces whatever lies at `host` unless both are directories.
  static void clear_for(const std::string& host, bool directory) {
    struct stat st {};
    if (::lstat(host.c_str(), &st) == 0 && !(directory && S_ISDIR(st.st_mode))) {
      remove_tree(host);
    }
  }

  Expected<void> apply(Stream& in) {
    std::optional<std::string> long_name;
    std::optional<std::string> long_link;
    std::array<char, k_block> block{};
    std::vector<char> buffer(std::size_t{1} << 20U);
    for (;;) {
      std::size_t got_header = 0;
      while (got_header < k_block) {
        auto got_or = in.read(block.data() + got_header, k_block - got_header);
        if (!got_or) {
          return std::move(got_or).error();
        }
        auto& got = *got_or;
        if (got == 0) {
          break;
        }
        got_header += got;
      }
      if (got_header == 0 || std::all_of(block.begin(), block.begin() + static_cast<long>(got_header),
                                         [](char c) { return c == '\0'; })) {
        return {}; // the end-of-archive blocks (or an archive without them)
      }
      if (got_header < k_block) {
        return Error{"truncated archive: a partial header"};
      }
      if (!checksum_ok(block)) {
        return Error{"not a tar archive (bad header checksum after member " +
                     std::to_string(image.info.members) + ")"};
      }
      std::string name(field(block, 0, 100));
      if (field(block, 257, 5) == "ustar" && !field(block, 345, 155).empty()) {
        name = std::string(field(block, 345, 155)) + "/" + name;
      }
      const auto shown = long_name.value_or(name);
      const auto size = number(block, 124, 12);
      if (!size) {
        return Error{"member " + shown + ": a bad size field"};
      }
      const char type = block[156];
      const auto padded = (*size + k_block - 1) / k_block * k_block;
      if (Clock::now() > deadline) {
        return Error{"member " + shown + ": the image took longer than " +
                     std::to_string(limits.max_time.count()) + " s to read"};
      }
      if (type == 'L' || type == 'K' || type == 'x' || type == 'g') {
        if (*size > limits.max_pax_header) {
          return Error{"member " + shown + ": a header record of " + std::to_string(*size) +
                       " bytes (the limit is " + std::to_string(limits.max_pax_header) + ")"};
        }
        std::string content(static_cast<std::size_t>(padded), '\0');
        CUDADIAG_TRY(read_exact(in, content.data(), content.size(), "member " + shown));
        content.resize(static_cast<std::size_t>(*size));
        if (type == 'L') {
          long_name = content.substr(0, content.find('\0'));
        } else if (type == 'K') {
          long_link = content.substr(0, content.find('\0'));
        } else if (type == 'x') {
          if (auto path = pax_value(content, "path")) {
            long_name = std::move(*path);
          }
          if (auto link = pax_value(content, "linkpath")) {
            long_link = std::move(*link);
          }
        }
        continue;
      }
      const auto link_target = long_link.value_or(std::string(field(block, 157, 100)));
      long_name.reset();
      long_link.reset();
      if (++image.info.members > limits.max_members) {
        return Error{"member " + shown + ": more than " + std::to_string(limits.max_members) + " members"};
      }
      auto path = member_path(shown, limits.max_name);
      if (!path) {
        return Error{"member " + shown + ": " + path.error().message};
      }
      const auto mode = static_cast<unsigned>(number(block, 100, 8).value_or(0644));
      CUDADIAG_TRY(apply_member(in, *path, shown, type, *size, mode, link_target, buffer));
      if (const auto skip = padded - *size; skip > 0) {
        CUDADIAG_TRY(read_exact(in, buffer.data(), static_cast<std::size_t>(skip), "member " + shown));
      }
    }
  }

  Expected<void> skip_content(Stream& in, std::uint64_t size, std::vector<char>& buffer,
                              const std::string& shown) {
    while (size > 0) {
      const auto take = static_cast<std::size_t>(std::min<std::uint64_t>(size, buffer.size()));
      CUDADIAG_TRY(read_exact(in, buffer.data(), take, "member " + shown));
      size -= take;
    }
    return {};
  }

  Expected<void> apply_member(Stream& in, const std::string& path, const std::string& shown, char type,
                              std::uint64_t size, unsigned mode, const std::string& link_target,
                              std::vector<char>& buffer) {
    const auto fail = [&shown](const std::string& why) { return Error{"member " + shown + ": " + why}; };
    if (path.empty()) {
      return skip_content(in, size, buffer, shown); // the root directory itself
    }
    const auto slash = path.rfind('/');
    const auto directory = path.substr(0, slash);
    const std::string_view base = std::string_view(path).substr(slash + 1);
    if (base.substr(0, k_whiteout.size()) == k_whiteout) {
      if (auto done = whiteout(directory, base); !done) {
        return fail(done.error().message);
      }
      return skip_content(in, size, buffer, shown);
    }
    auto host = place(path);
    if (!host) {
      return fail(host.error().message);
    }
    this_layer.insert(path);
    switch (type) {
    case '0':
    case '\0':
    case '7': {
      if (image.info.bytes_written + size > limits.max_bytes) {
        return fail("the image holds more than " + std::to_string(limits.max_bytes) + " bytes (the limit)");
      }
      clear_for(*host, false);
      const UniqueFd fd(::open(host->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
      if (fd.get() < 0) {
        return fail(std::string("cannot write it: ") + std::strerror(errno));
      }
      auto left = size;
      while (left > 0) {
        const auto take = static_cast<std::size_t>(std::min<std::uint64_t>(left, buffer.size()));
        CUDADIAG_TRY(read_exact(in, buffer.data(), take, "member " + shown));
        for (std::size_t done = 0; done < take;) {
          const auto wrote = ::write(fd.get(), buffer.data() + done, take - done);
          if (wrote < 0 && errno == EINTR) {
            continue;
          }
          if (wrote <= 0) {
            return fail(std::string("cannot write it: ") + std::strerror(errno));
          }
          done += static_cast<std::size_t>(wrote);
        }
        left -= take;
      }
      image.info.bytes_written += size;
      // Read-only, executable where the member was.
      ::fchmod(fd.get(), 0444 | (mode & 0111U));
      image.origin[path] = layer;
      return {};
    }
    case '1': {
      auto target = member_path(link_target, limits.max_name);
      if (!target || target->empty()) {
        return fail("a hard link to " + link_target + " (" + (target ? "the root" : target.error().message) +
                    "), outside the image");
      }
      const auto host_target = fs::resolve_in_root(tree, *target, fs::FollowLast::no);
      struct stat st {};
      if (host_target.empty() || ::lstat(host_target.c_str(), &st) != 0 || S_ISDIR(st.st_mode)) {
        return fail("a hard link to " + link_target + ", which no earlier member made");
      }
      clear_for(*host, false);
      if (::link(host_target.c_str(), host->c_str()) != 0) {
        return fail(std::string("cannot link it: ") + std::strerror(errno));
      }
      image.origin[path] = layer;
      return skip_content(in, size, buffer, shown);
    }
    case '2': {
      if (link_target.empty() || link_target.size() > limits.max_name) {
        return fail("a symbolic link with an empty or over-long target");
      }
      if (link_target.front() != '/') {
        // Lexically from the link's directory: a relative target that climbs above the root.
        long depth = static_cast<long>(std::count(directory.begin(), directory.end(), '/'));
        std::size_t start = 0;
        while (start <= link_target.size()) {
          const auto end = std::min(link_target.find('/', start), link_target.size());
          const auto part = std::string_view(link_target).substr(start, end - start);
          if (part == "..") {
            if (--depth < 0) {
              return fail("a symbolic link to " + link_target + ", out of the image's root");
            }
          } else if (!part.empty() && part != ".") {
            ++depth;
          }
          start = end + 1;
        }
      }
      clear_for(*host, false);
      if (::symlink(link_target.c_str(), host->c_str()) != 0) {
        return fail(std::string("cannot make the link: ") + std::strerror(errno));
      }
      image.origin[path] = layer;
      return skip_content(in, size, buffer, shown);
    }
    case '5': {
      clear_for(*host, true);
      struct stat st {};
      if (::lstat(host->c_str(), &st) != 0 && ::mkdir(host->c_str(), 0755) != 0) {
        return fail(std::string("cannot make the directory: ") + std::strerror(errno));
      }
      return skip_content(in, size, buffer, shown);
    }
    default: // devices, FIFOs, sparse and vendor types: nothing discovery reads
      return skip_content(in, size, buffer, shown);
    }
  }
};

// ---- where the blobs are ----------------------------------------------------------------------

// A blob's bytes by its path in the layout ("blobs/sha256/<hex>") or archive member name.
using BlobReader = std::function<Expected<std::string_view>(const std::string& name)>;

Expected<std::string> blob_name(const json& descriptor) {
  if (!descriptor.is_object() || !descriptor.contains("digest") || !descriptor["digest"].is_string()) {
    return Error{"a descriptor without a digest"};
  }
  const auto digest = descriptor["digest"].get<std::string>();
  const auto colon = digest.find(':');
  const auto algorithm = digest.substr(0, colon == std::string::npos ? 0 : colon);
  const auto encoded = colon == std::string::npos ? std::string() : digest.substr(colon + 1);
  const auto lower_alnum = [](const std::string& text, bool hex) {
    return !text.empty() && std::all_of(text.begin(), text.end(), [hex](char c) {
      return (c >= '0' && c <= '9') || (c >= 'a' && c <= (hex ? 'f' : 'z'));
    });
  };
  if (!lower_alnum(algorithm, false) || !lower_alnum(encoded, true)) {
    return Error{"a malformed digest \"" + digest + "\""};
  }
  return "blobs/" + algorithm + "/" + encoded;
}

Expected<json> read_json(const BlobReader& read, const std::string& name) {
  auto bytes_or = read(name);
  if (!bytes_or) {
    return std::move(bytes_or).error();
  }
  auto& bytes = *bytes_or;
  return bounded_json::parse_or_error(bytes, name, {.max_depth = 64, .max_bytes = k_max_json});
}

std::vector<std::string> strings(const json& value) {
  std::vector<std::string> out;
  if (value.is_array()) {
    for (const auto& item : value) {
      if (item.is_string()) {
        out.push_back(item.get<std::string>());
      }
    }
  }
  return out;
}

void read_config(Image& image, const json& document) {
  image.info.has_config = true;
  const auto found = document.find("config");
  if (found == document.end() || !found->is_object()) {
    return;
  }
  const auto& config = *found;
  const auto text = [&config](const char* key) {
    const auto it = config.find(key);
    return it != config.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  image.info.config.env = strings(config.value("Env", json::array()));
  image.info.config.entrypoint = strings(config.value("Entrypoint", json::array()));
  image.info.config.cmd = strings(config.value("Cmd", json::array()));
  image.info.config.working_dir = text("WorkingDir");
  image.info.config.user = text("User");
  if (const auto labels = config.find("Labels"); labels != config.end() && labels->is_object()) {
    for (const auto& [key, value] : labels->items()) {
      if (value.is_string()) {
        image.info.config.labels[key] = value.get<std::string>();
      }
    }
  }
}

struct Manifest {
  json document;
  std::string digest; // "sha256:…", as the index names it
};

// The image manifest an OCI index leads to for this machine's platform (the first without a
// platform when none names it), following nested indexes.
Expected<Manifest> pick_manifest(const BlobReader& read, const json& index, int depth) {
  if (depth > k_max_index_depth) {
    return Error{"image indexes nested deeper than " + std::to_string(k_max_index_depth)};
  }
  const auto manifests = index.find("manifests");
  if (manifests == index.end() || !manifests->is_array() || manifests->empty()) {
    return Error{"an image index without manifests"};
  }
  const json* chosen = nullptr;
  for (const auto& entry : *manifests) {
    const auto platform = entry.find("platform");
    if (platform == entry.end() || !platform->is_object()) {
      chosen = chosen != nullptr ? chosen : &entry;
      continue;
    }
    if (platform->value("os", "") == "linux" && platform->value("architecture", "") == k_host_architecture) {
      chosen = &entry;
      break;
    }
  }
  if (chosen == nullptr) {
    return Error{"no manifest for linux/" + std::string(k_host_architecture) + " in the image index"};
  }
  auto name_or = blob_name(*chosen);
  if (!name_or) {
    return std::move(name_or).error();
  }
  auto& name = *name_or;
  auto document_or = read_json(read, name);
  if (!document_or) {
    return std::move(document_or).error();
  }
  auto& document = *document_or;
  const auto media = chosen->value("mediaType", document.value("mediaType", ""));
  if (media.find("index") != std::string::npos || media.find("manifest.list") != std::string::npos ||
      document.contains("manifests")) {
    return pick_manifest(read, document, depth + 1);
  }
  return Manifest{std::move(document), (*chosen)["digest"].get<std::string>()};
}

Expected<void> load_oci(Image& image, const BlobReader& read) {
  auto index_or = read_json(read, "index.json");
  if (!index_or) {
    return std::move(index_or).error();
  }
  auto& index = *index_or;
  auto manifest_or = pick_manifest(read, index, 0);
  if (!manifest_or) {
    return std::move(manifest_or).error();
  }
  image.info.manifest_digest = manifest_or->digest;
  auto& manifest = manifest_or->document;
  const auto config = manifest.find("config");
  if (config == manifest.end()) {
    return Error{"the manifest " + image.info.manifest_digest + " names no config"};
  }
  auto config_name_or = blob_name(*config);
  if (!config_name_or) {
    return std::move(config_name_or).error();
  }
  auto& config_name = *config_name_or;
  image.info.config_digest = (*config)["digest"].get<std::string>();
  auto config_document_or = read_json(read, config_name);
  if (!config_document_or) {
    return std::move(config_document_or).error();
  }
  auto& config_document = *config_document_or;
  read_config(image, config_document);
  const auto layers = manifest.find("layers");
  if (layers == manifest.end() || !layers->is_array()) {
    return Error{"the manifest " + image.info.manifest_digest + " lists no layers"};
  }
  for (const auto& layer : *layers) {
    auto name_or = blob_name(layer);
    if (!name_or) {
      return std::move(name_or).error();
    }
    auto& name = *name_or;
    image.info.layers.push_back(Layer{layer["digest"].get<std::string>(), name});
  }
  return {};
}

Expected<void> load_docker_manifest(Image& image, const BlobReader& read) {
  auto manifest_or = read_json(read, "manifest.json");
  if (!manifest_or) {
    return std::move(manifest_or).error();
  }
  auto& manifest = *manifest_or;
  if (!manifest.is_array() || manifest.empty() || !manifest[0].is_object()) {
    return Error{"manifest.json is not an array of images"};
  }
  const auto& entry = manifest[0];
  const auto config = entry.value("Config", "");
  if (config.empty()) {
    return Error{"manifest.json names no Config"};
  }
  auto config_document_or = read_json(read, config);
  if (!config_document_or) {
    return std::move(config_document_or).error();
  }
  auto& config_document = *config_document_or;
  read_config(image, config_document);
  // "blobs/sha256/<hex>" (Docker 25 and later) or "<hex>.json" (before).
  auto hex = config.substr(config.rfind('/') + 1);
  if (hex.size() > 5 && hex.compare(hex.size() - 5, 5, ".json") == 0) {
    hex.resize(hex.size() - 5);
  }
  image.info.config_digest = "sha256:" + hex;
  for (const auto& layer : strings(entry.value("Layers", json::array()))) {
    const auto slash = layer.find('/');
    const bool blob = layer.rfind("blobs/", 0) == 0;
    image.info.layers.push_back(
        Layer{blob ? "sha256:" + layer.substr(layer.rfind('/') + 1) : layer.substr(0, slash), layer});
  }
  return {};
}

// The members of an outer archive (docker save) by name: views into its mapping.
Expected<std::unordered_map<std::string, std::string_view>> index_archive(std::string_view data) {
  std::unordered_map<std::string, std::string_view> members;
  std::size_t offset = 0;
  std::optional<std::string> long_name;
  while (offset + k_block <= data.size()) {
    std::array<char, k_block> block{};
    std::memcpy(block.data(), data.data() + offset, k_block);
    if (std::all_of(block.begin(), block.end(), [](char c) { return c == '\0'; })) {
      break;
    }
    if (!checksum_ok(block)) {
      return Error{"not a tar archive (bad header checksum at offset " + std::to_string(offset) + ")"};
    }
    std::string name(field(block, 0, 100));
    if (field(block, 257, 5) == "ustar" && !field(block, 345, 155).empty()) {
      name = std::string(field(block, 345, 155)) + "/" + name;
    }
    const auto size = number(block, 124, 12);
    offset += k_block;
    if (!size || *size > data.size() - offset) {
      return Error{"truncated archive: member " + long_name.value_or(name) + " needs " +
                   (size ? std::to_string(*size) : std::string("?")) + " bytes, " +
                   std::to_string(data.size() - offset) + " left"};
    }
    const auto content = data.substr(offset, static_cast<std::size_t>(*size));
    offset += static_cast<std::size_t>((*size + k_block - 1) / k_block * k_block);
    const char type = block[156];
    if (type == 'L' || type == 'x') {
      long_name = type == 'L' ? std::string(content.substr(0, content.find('\0')))
                              : pax_value(content, "path").value_or(name);
      continue;
    }
    auto member = long_name.value_or(name);
    long_name.reset();
    while (member.rfind("./", 0) == 0) {
      member.erase(0, 2);
    }
    if (type == '0' || type == '\0') {
      members[member] = content;
    }
  }
  return members;
}

Expected<std::string> make_work_dir(const std::string& work_dir) {
  std::string base = work_dir;
  if (base.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    base = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  }
  std::string pattern = base + "/cudadiag-image-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    return Error{"cannot make a directory in " + base + ": " + std::strerror(errno)};
  }
  return pattern;
}

// Inflates a .tar.gz archive into `out` (bounded): the archive's members are then read in place.
Expected<void> inflate_to(std::string_view data, const std::string& out, std::uint64_t max_bytes) {
  GzipStream in(data);
  const UniqueFd fd(::open(out.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (fd.get() < 0) {
    return Error{"cannot write " + out + ": " + std::strerror(errno)};
  }
  std::vector<char> buffer(std::size_t{1} << 20U);
  std::uint64_t total = 0;
  for (;;) {
    auto got_or = in.read(buffer.data(), buffer.size());
    if (!got_or) {
      return std::move(got_or).error();
    }
    auto& got = *got_or;
    if (got == 0) {
      return {};
    }
    total += got;
    if (total > max_bytes) {
      return Error{"the archive inflates to more than " + std::to_string(max_bytes) + " bytes (the limit)"};
    }
    if (::write(fd.get(), buffer.data(), got) != static_cast<ssize_t>(got)) {
      return Error{"cannot write " + out + ": " + std::strerror(errno)};
    }
  }
}

} // namespace

Image::Image(Image&& other) noexcept
    : info(std::move(other.info)), root(std::move(other.root)), origin(std::move(other.origin)),
      m_owned_tree(std::exchange(other.m_owned_tree, {})) {}

Image& Image::operator=(Image&& other) noexcept {
  if (this != &other) {
    if (!m_owned_tree.empty()) {
      remove_tree(m_owned_tree);
    }
    info = std::move(other.info);
    root = std::move(other.root);
    origin = std::move(other.origin);
    m_owned_tree = std::exchange(other.m_owned_tree, {});
  }
  return *this;
}

Image::~Image() {
  if (!m_owned_tree.empty()) {
    remove_tree(m_owned_tree);
  }
}

const Layer* Image::layer_of(const std::string& path) const {
  const auto found = origin.find(path);
  return found == origin.end() || found->second >= info.layers.size() ? nullptr : &info.layers[found->second];
}

Expected<Image> open_image(const std::string& reference, const std::string& work_dir, const Limits& limits) {
  Image image;
  image.info.reference = reference;
  const auto named = [&reference](const Error& error) {
    return Error{"--image " + reference + ": " + error.message};
  };
  if (fs::is_directory(reference) && !fs::exists(fs::join(reference, "oci-layout"))) {
    auto real = fs::real_path(reference);
    if (!real) {
      return named(real.error());
    }
    image.info.format = "rootfs";
    image.root = *real;
    return image;
  }
  auto work = make_work_dir(work_dir);
  if (!work) {
    return named(work.error());
  }
  image.m_owned_tree = *work;
  const auto tree = *work + "/rootfs";
  if (::mkdir(tree.c_str(), 0755) != 0) {
    return named(Error{std::string("cannot make the tree: ") + std::strerror(errno)});
  }
  std::deque<fs::MappedFile> mapped; // a deque: a view stays valid while more are mapped
  std::unordered_map<std::string, std::string_view> members;
  BlobReader read;
  if (fs::is_directory(reference)) {
    image.info.format = "oci-layout";
    read = [&reference, &mapped](const std::string& name) -> Expected<std::string_view> {
      auto file = fs::map_file(fs::join(reference, name), std::numeric_limits<std::uint64_t>::max());
      if (!file) {
        return Error{name + ": " + file.error().message};
      }
      mapped.push_back(std::move(*file));
      return mapped.back().text();
    };
  } else {
    image.info.format = "docker-archive";
    auto file = fs::map_file(reference, std::numeric_limits<std::uint64_t>::max());
    if (!file) {
      return named(file.error());
    }
    mapped.push_back(std::move(*file));
    if (is_gzip(mapped.back().text())) {
      const auto inflated = *work + "/archive.tar";
      if (auto done = inflate_to(mapped.back().text(), inflated, limits.max_bytes); !done) {
        return named(done.error());
      }
      auto plain = fs::map_file(inflated, std::numeric_limits<std::uint64_t>::max());
      if (!plain) {
        return named(plain.error());
      }
      mapped.push_back(std::move(*plain));
    }
    auto indexed = index_archive(mapped.back().text());
    if (!indexed) {
      return named(indexed.error());
    }
    members = std::move(*indexed);
    read = [&members](const std::string& name) -> Expected<std::string_view> {
      const auto found = members.find(name);
      if (found == members.end()) {
        return Error{"the archive has no member " + name};
      }
      return found->second;
    };
  }
  Applier applier{image, limits, Clock::now() + limits.max_time, tree, 0, {}};
  const bool docker_manifest = image.info.format == "docker-archive" && members.count("manifest.json") != 0;
  if (auto loaded = docker_manifest ? load_docker_manifest(image, read) : load_oci(image, read); !loaded) {
    return named(loaded.error());
  }
  for (std::size_t i = 0; i < image.info.layers.size(); ++i) {
    const auto& layer = image.info.layers[i];
    const auto what = [&](const Error& error) {
      return named(Error{"layer " + std::to_string(i + 1) + " (" + layer.digest + "): " + error.message});
    };
    auto blob = read(layer.source);
    if (!blob) {
      return what(blob.error());
    }
    auto stream = open_stream(*blob);
    if (!stream) {
      return what(stream.error());
    }
    applier.layer = i;
    applier.this_layer.clear();
    if (auto applied = applier.apply(**stream); !applied) {
      return what(applied.error());
    }
  }
  mapped.clear();
  ::unlink((*work + "/archive.tar").c_str());
  auto real = fs::real_path(tree);
  if (!real) {
    return named(real.error());
  }
  image.root = *real;
  return image;
}

} // namespace cudadiag::image
