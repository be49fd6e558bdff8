#include "python/search_context.hpp"

namespace cudadiag::python {
namespace {

// Reads up to four digits at `at`, advancing it; nullopt if there is no digit.
std::optional<unsigned> read_number(std::string_view text, size_t& at) {
  unsigned value = 0;
  size_t digits = 0;
  while (at < text.size() && text[at] >= '0' && text[at] <= '9' && digits < 4) {
    value = value * 10U + static_cast<unsigned>(text[at] - '0');
    ++at;
    ++digits;
  }
  if (digits == 0 || (at < text.size() && text[at] >= '0' && text[at] <= '9')) {
    return std::nullopt;
  }
  return value;
}

} // namespace

std::optional<PyVersion> parse_major_minor(std::string_view text, bool whole) {
  size_t at = 0;
  const auto major = read_number(text, at);
  if (!major || at >= text.size() || text[at] != '.') {
    return std::nullopt;
  }
  ++at;
  const auto minor = read_number(text, at);
  if (!minor) {
    return std::nullopt;
  }
  if (at < text.size() && (whole || text[at] != '.')) {
    return std::nullopt;
  }
  return PyVersion{*major, *minor};
}

std::optional<PyVersion> version_from_exe_name(std::string_view name) {
  constexpr std::string_view k_stem = "python";
  if (name.substr(0, k_stem.size()) != k_stem) {
    return std::nullopt;
  }
  return parse_major_minor(name.substr(k_stem.size()), true);
}

std::string python_dir_name(const PyVersion& version) {
  return "python" + version.text();
}

std::optional<std::string> absolute_path(const Context& ctx, std::string_view what, const std::string& value,
                                         bool quiet) {
  if (!value.empty() && value.front() == '/') {
    return fs::lexically_normal(value);
  }
  if (ctx.env.cwd.empty()) {
    ctx.note(std::string(what) + "=" + value + " is relative and the working directory is unknown; ignored");
    return std::nullopt;
  }
  auto absolute = fs::lexically_normal(fs::join(ctx.env.cwd, value));
  if (!quiet) {
    ctx.note(std::string(what) + "=" + value +
             " is relative; taken relative to the working directory: " + absolute);
  }
  return absolute;
}

std::string real_or_same(const std::string& path) {
  auto real = fs::real_path(path);
  return real ? *real : path;
}

Expected<std::string> read_bounded(const Context& ctx, const std::string& path) {
  auto content = fs::read_file_prefix(path, k_max_file_bytes);
  if (content && content->size() == k_max_file_bytes) {
    const auto size = fs::file_size(path);
    if (size && *size > k_max_file_bytes) {
      ctx.note(path + " is larger than 64 KiB; only its first 64 KiB were read");
    }
  }
  return content;
}

} // namespace cudadiag::python
