#include "linkage/symbol_check.hpp"

#include "core/parallel.hpp"

#include <iterator>
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

// What checking one object's needs found; merged into the closure in object order.
struct ObjectCheck {
  std::vector<MissingVersion> missing_versions;
  std::vector<UnresolvedSymbol> unresolved;
  std::size_t references_checked = 0;
};

ObjectCheck check_object(const Closure& closure, const std::vector<const elf::DynamicSymbols*>& scope,
                         std::size_t index) {
  ObjectCheck out;
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
      out.missing_versions.push_back({need.version, need.file, index, *bound});
    }
  }
  for (const auto& reference : scope[index]->references()) {
    if (reference.weak || missing.count({reference.version_file, reference.version}) != 0) {
      continue;
    }
    ++out.references_checked;
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
      out.unresolved.push_back({reference.name, reference.version, reference.version_file, index, bound});
    }
  }
  return out;
}

} // namespace

void check_symbols(Closure& closure, ObjectStore& store, std::size_t threads) {
  // Reading the symbol tables is most of the cost (torch's closure holds libtorch_cpu.so), and each
  // object's check is independent of the others': with threads > 1 both are spread over threads,
  // and merged in the closure's order so that the result does not depend on which finished first.
  const auto count = closure.objects.size();
  std::vector<const Expected<elf::DynamicSymbols>*> read(count);
  parallel_for_each_index(count, threads, [&](std::size_t index) { read[index] = &store.symbols(*closure.objects[index].file); });
  std::vector<const elf::DynamicSymbols*> scope;
  for (std::size_t index = 0; index < count; ++index) {
    if (!*read[index]) {
      closure.unchecked.push_back({index, read[index]->error().message});
      scope.push_back(nullptr);
    } else {
      scope.push_back(&**read[index]);
    }
  }
  std::vector<ObjectCheck> checks(count);
  parallel_for_each_index(count, threads, [&](std::size_t index) {
    if (scope[index] != nullptr) {
      checks[index] = check_object(closure, scope, index);
    }
  });
  for (auto& check : checks) {
    closure.references_checked += check.references_checked;
    std::move(check.missing_versions.begin(), check.missing_versions.end(), std::back_inserter(closure.missing_versions));
    std::move(check.unresolved.begin(), check.unresolved.end(), std::back_inserter(closure.unresolved));
  }
}

} // namespace cudadiag::linkage
