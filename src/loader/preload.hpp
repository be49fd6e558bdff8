#pragma once
// The objects glibc loads into every process before the program's own libraries: LD_PRELOAD's
// entries (split on spaces and colons), then /etc/ld.so.preload's (split on whitespace and colons).
// An entry without a slash is searched as a DT_NEEDED name of the program is (LD_LIBRARY_PATH, the
// loader cache, the default directories); one that cannot be loaded is ignored (glibc prints
// "object '...' cannot be preloaded ... ignored" and goes on). A preloaded object satisfies every
// later dlopen or DT_NEEDED of its SONAME.

#include "core/environment.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace cudadiag::loader {

// What a finding and found_via call the preload file, whatever root it is read under.
inline constexpr std::string_view k_ld_so_preload_name = "/etc/ld.so.preload";

struct Preload {
  std::string entry;      // as written
  bool from_file = false; // /etc/ld.so.preload (the layout's), else LD_PRELOAD
  std::string source;     // "LD_PRELOAD" or "/etc/ld.so.preload": what found_via and a finding name
};

// `env`'s LD_PRELOAD and `layout.ld_so_preload`'s entries, in glibc's order. The file is read
// through the layout (at most 64 KiB); missing or unreadable: no entries from it.
std::vector<Preload> system_preloads(const Environment& env, const SystemLayout& layout);

} // namespace cudadiag::loader
