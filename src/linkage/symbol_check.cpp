#include "linkage/symbol_check.hpp"

#include <set>
#include <utility>

namespace cudadiag::linkage {
namespace {

// The object bound for DT_NEEDED name `file` of object `index`: its dependency known by that name.
std::optional<std::size_t> bound_for(const Closure& closure, std::size_t index, const std::string& file) {
  for (const auto dependency : closure.objects[index].dependencies) {
    const auto& object = closure.objects[dependency];
    if (object.file->elf->soname == file) {
      return dependency;
    }
    for (const auto& name : object.names) {
      if (name == file) {
        return dependency;
      }
    }
  }
  return std::nullopt;
}

} // namespace

void check_symbols(Closure& closure, ObjectStore& store) {
  std::vector<const elf::DynamicSymbols*> scope;
  for (std::size_t index = 0; index < closure.objects.size(); ++index) {
    const auto& symbols = store.symbols(*closure.objects[index].file);
    if (!symbols) {
      closure.unchecked.push_back({index, symbols.error().message});
      scope.push_back(nullptr);
    } else {
      scope.push_back(&*symbols);
    }
  }
  for (std::size_t index = 0; index < closure.objects.size(); ++index) {
    if (scope[index] == nullptr) {
      continue;
    }
    // Versions first: glibc checks them when the object is mapped, before any relocation.
    std::set<std::pair<std::string, std::string>> missing; // (file, version)
    for (const auto& need : scope[index]->version_needs()) {
      const auto bound = bound_for(closure, index, need.file);
      if (!bound || scope[*bound] == nullptr || !scope[*bound]->has_version_definitions() ||
          scope[*bound]->defines_version(need.version)) {
        continue;
      }
      missing.emplace(need.file, need.version);
      if (!need.weak) {
        closure.missing_versions.push_back({need.version, need.file, index, *bound});
      }
    }
    for (const auto& reference : scope[index]->references()) {
      if (reference.weak || missing.count({reference.version_file, reference.version}) != 0) {
        continue;
      }
      ++closure.references_checked;
      bool defined = false;
      const auto hash = elf::gnu_hash(reference.name); // once, for every object of the scope
      for (std::size_t i = 0; !defined && i < scope.size(); ++i) {
        defined = scope[i] != nullptr && scope[i]->defines(reference, hash);
      }
      if (!defined) {
        std::optional<std::size_t> bound;
        if (!reference.version_file.empty()) {
          bound = bound_for(closure, index, reference.version_file);
        }
        closure.unresolved.push_back({reference.name, reference.version, reference.version_file, index, bound});
      }
    }
  }
}

} // namespace cudadiag::linkage
