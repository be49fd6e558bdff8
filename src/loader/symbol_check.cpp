#include "loader/symbol_check.hpp"

#include "core/parallel.hpp"
#include "core/timeline.hpp"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <set>
#include <string>
#include <utility>

namespace cudadiag::loader {
namespace {

// The object bound for DT_NEEDED name `file` of object `index`: its dependency known by that name.
std::optional<std::size_t> bound_for(const Closure& closure, std::size_t index, std::string_view file) {
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

// The order in which a reference of object `index` is looked up. Whether some object of the scope
// defines it does not depend on the order (glibc stops at the first that does, but any will do for
// "is it defined"), so the likeliest definers come first: the object bound for each DT_NEEDED name
// in turn (a versioned reference names its file: that object nearly always has it), then the rest
// of the scope. Each object appears once.
std::vector<std::size_t> lookup_order(const Closure& closure, std::size_t index, std::size_t scope_size) {
  std::vector<std::size_t> order;
  order.reserve(scope_size);
  std::vector<bool> taken(scope_size, false);
  for (const auto dependency : closure.objects[index].dependencies) {
    if (dependency < scope_size && !taken[dependency]) {
      taken[dependency] = true;
      order.push_back(dependency);
    }
  }
  for (std::size_t i = 0; i < scope_size; ++i) {
    if (!taken[i]) {
      order.push_back(i);
    }
  }
  return order;
}

// References checked per task: an object with several times as many (libtorch_cuda.so's 3,452,
// each looked up among some 40 objects) has them checked in ranges side by side.
constexpr std::size_t k_references_per_task = 1024;

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
  const auto order = lookup_order(closure, index, scope.size());
  const auto& references = scope[index]->references();
  // The references in [begin, end), into `part`, in their order.
  const auto check_range = [&](std::size_t begin, std::size_t end, ObjectCheck& part) {
    // The object bound for each version file, asked first for the references that name it.
    std::vector<std::pair<std::string_view, std::optional<std::size_t>>> bound_by_file;
    const auto bound_for_file = [&](std::string_view file) {
      for (const auto& [known, bound] : bound_by_file) {
        if (known == file) {
          return bound;
        }
      }
      bound_by_file.emplace_back(file, bound_for(closure, index, file));
      return bound_by_file.back().second;
    };
    for (std::size_t at_reference = begin; at_reference < end; ++at_reference) {
      const auto& reference = references[at_reference];
      if (reference.weak || (!missing.empty() && missing.count({std::string(reference.version_file),
                                                                std::string(reference.version)}) != 0)) {
        continue;
      }
      ++part.references_checked;
      const auto hash = elf::gnu_hash(reference.name); // once, for every object of the scope
      const auto defines = [&](std::size_t i) {
        return scope[i] != nullptr && scope[i]->defines(reference, hash);
      };
      const auto bound =
          reference.version_file.empty() ? std::nullopt : bound_for_file(reference.version_file);
      bool defined = bound && defines(*bound);
      for (std::size_t at = 0; !defined && at < order.size(); ++at) {
        defined = order[at] != bound && defines(order[at]);
      }
      if (!defined) {
        part.unresolved.push_back({std::string(reference.name), std::string(reference.version),
                                   std::string(reference.version_file), index, bound});
      }
    }
  };
  const auto tasks = (references.size() + k_references_per_task - 1) / k_references_per_task;
  if (tasks <= 1) {
    check_range(0, references.size(), out);
    return out;
  }
  std::vector<ObjectCheck> parts(tasks);
  parallel_for_each_index(tasks, parallel_threads(tasks), [&](std::size_t task) {
    check_range(task * k_references_per_task, std::min(references.size(), (task + 1) * k_references_per_task),
                parts[task]);
  });
  for (auto& part : parts) {
    out.references_checked += part.references_checked;
    std::move(part.unresolved.begin(), part.unresolved.end(), std::back_inserter(out.unresolved));
  }
  return out;
}

// Object `index` and what its DT_NEEDED entries bound to, transitively: what any process that
// loads it holds, whatever else it loads. As a key: each of those files with the files its own
// entries bound to, so that two closures share a key only when the object sees the same
// dependencies in both.
std::vector<std::size_t> own_closure(const Closure& closure, std::size_t index) {
  std::vector<std::size_t> objects{index};
  std::vector<bool> seen(closure.objects.size(), false);
  seen[index] = true;
  for (std::size_t at = 0; at < objects.size(); ++at) {
    for (const auto dependency : closure.objects[objects[at]].dependencies) {
      if (dependency < seen.size() && !seen[dependency]) {
        seen[dependency] = true;
        objects.push_back(dependency);
      }
    }
  }
  return objects;
}

// The key as bytes, each field of fixed width so that two different closures cannot spell the
// same key: per object its device and inode (16 bytes), its dependency count (8 bytes), then each
// dependency's device and inode.
std::string own_closure_key(const Closure& closure, const std::vector<std::size_t>& objects) {
  std::string key;
  const auto add = [&](std::uint64_t value) {
    key.append(reinterpret_cast<const char*>(&value), sizeof value);
  };
  const auto add_id = [&](std::size_t i) {
    const auto& file = closure.objects[i].file->identity;
    add(file.device);
    add(file.inode);
  };
  for (const auto object : objects) {
    const auto& dependencies = closure.objects[object].dependencies;
    add_id(object);
    add(dependencies.size());
    for (const auto dependency : dependencies) {
      add_id(dependency);
    }
  }
  return key;
}

// Object `index`'s check in this closure. Most objects (libc, libstdc++, a CUDA library) find
// everything they need among their own dependencies; that result holds in every closure that
// holds the object with the same dependencies (a definition found there is in any larger scope;
// the version needs are judged against those same dependencies), so it is computed once per run.
// An object that needs something from outside (the root's symbols, a preload's) is checked
// against the whole closure every time.
ObjectCheck check_object_in_closure(const Closure& closure,
                                    const std::vector<const elf::DynamicSymbols*>& scope, std::size_t index,
                                    ObjectStore& store) {
  const auto own = own_closure(closure, index);
  const auto& clean = store.clean_check(own_closure_key(closure, own), [&]() -> std::optional<std::size_t> {
    std::vector<const elf::DynamicSymbols*> own_scope(scope.size(), nullptr);
    for (const auto object : own) {
      own_scope[object] = scope[object];
    }
    const auto check = check_object(closure, own_scope, index);
    if (!check.missing_versions.empty() || !check.unresolved.empty()) {
      return std::nullopt;
    }
    return check.references_checked;
  });
  if (clean) {
    return ObjectCheck{{}, {}, *clean};
  }
  return check_object(closure, scope, index);
}

} // namespace

void check_symbols(Closure& closure, ObjectStore& store, std::size_t threads) {
  // Reading the symbol tables is most of the cost (torch's closure holds libtorch_cpu.so), and each
  // object's check is independent of the others': with threads > 1 both are spread over threads,
  // and merged in the closure's order so that the result does not depend on which finished first.
  const auto count = closure.objects.size();
  std::vector<const Expected<elf::DynamicSymbols>*> read(count);
  parallel_for_each_index(
      count, threads, [&](std::size_t index) { read[index] = &store.symbols(*closure.objects[index].file); });
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
      const timeline::Span span("check", closure.objects[index].path);
      checks[index] = check_object_in_closure(closure, scope, index, store);
    }
  });
  for (auto& check : checks) {
    closure.references_checked += check.references_checked;
    std::move(check.missing_versions.begin(), check.missing_versions.end(),
              std::back_inserter(closure.missing_versions));
    std::move(check.unresolved.begin(), check.unresolved.end(), std::back_inserter(closure.unresolved));
  }
}

} // namespace cudadiag::loader
