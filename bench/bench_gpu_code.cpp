// The GPU-code reader (src/elf/gpu_code) against cuobjdump on the same files, in one run:
//   bench_gpu_code [--cuobjdump PATH] FILE...
// For each file: the codes read, fatbinaries and entries, the reader's wall time (first read, then
// the median of 5 warm reads), and when cuobjdump is given, its own answer
// (--list-elf --list-ptx: the distinct sm_XX of its ELF and PTX lines), its time and whether the
// two agree. cuobjdump prints family-specific cubins without their "f", so sm_100f and sm_100 count
// as one there.
#include "elf/gpu_code.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace {

double milliseconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// cuobjdump's codes as "sm_90"/"compute_90" names ("ELF file 1: x.sm_90a.cubin", "PTX file 1: x.sm_90.ptx").
std::set<std::string> cuobjdump_codes(const std::string& cuobjdump, const std::string& file, double& ms) {
  const auto start = std::chrono::steady_clock::now();
  const std::string command = "'" + cuobjdump + "' --list-elf --list-ptx '" + file + "' 2>/dev/null";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(command.c_str(), "r"), ::pclose);
  std::set<std::string> out;
  if (!pipe) {
    return out;
  }
  static const std::regex line(R"((ELF|PTX) file +[0-9]+: .*\.(sm_[0-9]+[af]?)\.(cubin|ptx))");
  std::array<char, 4096> buffer{};
  while (std::fgets(buffer.data(), buffer.size(), pipe.get()) != nullptr) {
    std::cmatch match;
    if (std::regex_search(buffer.data(), match, line)) {
      std::string code = match[2].str();
      if (match[1] == "PTX") {
        code = "compute_" + code.substr(3);
      }
      out.insert(code);
    }
  }
  ms = milliseconds_since(start);
  return out;
}

} // namespace

int main(int argc, char** argv) {
  std::string cuobjdump;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--cuobjdump" && i + 1 < argc) {
      cuobjdump = argv[++i];
    } else {
      files.push_back(arg);
    }
  }
  int disagreements = 0;
  for (const auto& file : files) {
    auto start = std::chrono::steady_clock::now();
    const auto first = cudadiag::elf::read_gpu_code(file);
    const double first_ms = milliseconds_since(start);
    if (!first) {
      std::printf("%s: %s\n", file.c_str(), first.error().message.c_str());
      continue;
    }
    std::vector<double> warm;
    for (int run = 0; run < 5; ++run) {
      start = std::chrono::steady_clock::now();
      static_cast<void>(cudadiag::elf::read_gpu_code(file));
      warm.push_back(milliseconds_since(start));
    }
    std::sort(warm.begin(), warm.end());
    std::set<std::string> ours;
    std::string listed;
    for (const auto& code : first->codes) {
      listed += " " + code.name();
      std::string name = code.name();
      if (code.kind == cudadiag::elf::GpuCodeKind::sass && code.variant == 'f') {
        name.pop_back(); // cuobjdump's spelling
      }
      ours.insert(name);
    }
    std::printf(
        "%s\n  read: %llu fatbinaries, %llu entries, first %.2f ms, warm median %.2f ms%s%s\n  codes:%s\n",
        file.c_str(), static_cast<unsigned long long>(first->fatbinaries),
        static_cast<unsigned long long>(first->entries), first_ms, warm[2],
        first->problem ? "; problem: " : "", first->problem ? first->problem->c_str() : "", listed.c_str());
    if (!cuobjdump.empty()) {
      double ms = 0;
      const auto theirs = cuobjdump_codes(cuobjdump, file, ms);
      const bool agree = theirs == ours;
      disagreements += agree ? 0 : 1;
      std::string their_list;
      for (const auto& code : theirs) {
        their_list += " " + code;
      }
      std::printf("  cuobjdump: %.1f ms (%.0fx the warm read),%s; %s\n", ms, warm[2] > 0 ? ms / warm[2] : 0.0,
                  their_list.c_str(), agree ? "same codes" : "DIFFERENT codes");
    }
  }
  return disagreements == 0 ? 0 : 1;
}
