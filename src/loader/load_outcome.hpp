#pragma once
// What loading an object does, the loader layer's one answer: predicted from the files by the
// closure stage (loader/closure.hpp) or, for `hangs`, only ever observed (by the load check or a
// worker): it loads; dlopen returns an error (glibc's reason beside it); the process dies (SIGBUS: a
// segment lies past the end of a truncated file).

#include <string_view>

namespace cudadiag::loader {

enum class LoadOutcome { loads, fails, crashes, hangs };
constexpr std::string_view to_string(LoadOutcome outcome) {
  switch (outcome) {
  case LoadOutcome::loads: return "loads";
  case LoadOutcome::fails: return "fails";
  case LoadOutcome::crashes: return "crashes";
  case LoadOutcome::hangs: return "hangs";
  }
  return "";
}

} // namespace cudadiag::loader
