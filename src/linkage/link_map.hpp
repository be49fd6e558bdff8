#pragma once
// What a process really loads: the worker side of the load check (load_check.hpp). In a worker,
// the preloads and then the root are dlopened in order with RTLD_NOW | RTLD_GLOBAL (as
// cuda-pathfinder and ctypes do), and the loader's own list of objects (dl_iterate_phdr) is read
// before and after. The result travels to the parent as JSON text (encode / decode).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudadiag::linkage {

// One object of the process's link map.
struct MappedObject {
  std::string name;     // the loader's name for it (l_name: the path as opened)
  std::string realpath; // symlinks resolved; "" when it cannot be resolved
};

struct LinkMapFacts {
  std::optional<std::string> error;     // dlerror() of the first dlopen that failed
  std::optional<std::string> failed_at; // what that dlopen was given
  std::vector<MappedObject> before;     // the worker's own objects, before any dlopen
  std::vector<MappedObject> after;      // every object after the last dlopen (or the failed one)
};

// Loads `preloads` (absolute paths, in order) and then `root` (a path, or a bare SONAME that the
// loader searches for as dlopen(SONAME) in a fresh process does). Stops at the first failure.
// Reports each dlopen as the phase "dlopen NAME". Meant for a worker: nothing is ever unloaded.
LinkMapFacts load_and_list(const std::string& root, const std::vector<std::string>& preloads);

// The worker's `ROOT PRELOADS` arguments: PRELOADS is the paths joined with '\n' ("" for none).
std::string join_preloads(const std::vector<std::string>& preloads);
std::vector<std::string> split_preloads(std::string_view joined);

std::string encode(const LinkMapFacts& facts);
// nullopt when `text` is not a link map result (a hostile or broken worker).
std::optional<LinkMapFacts> decode_link_map(std::string_view text);

} // namespace cudadiag::linkage
