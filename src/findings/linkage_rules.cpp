#include "findings/linkage_rules.hpp"

#include "core/text.hpp"
#include "probes/catalog.hpp"

#include <algorithm>
#include <functional>
#include <map>

namespace cudadiag::findings {
namespace {

using linkage::AnswerClosure;
using loader::LoadedObject;
using loader::Route;

std::string answer_words(const std::string& answer) {
  if (answer == "python") {
    return "CUDA Python (cuda-pathfinder, its dependencies loaded first)";
  }
  if (answer == "direct") {
    return "loading the selected file by its path (as a framework's RUNPATH or ctypes.CDLL does)";
  }
  return "dlopen(SONAME) in a plain process";
}

// "libnvJitLink.so.12 (/x/libnvJitLink.so.12, 12.1.105, found through LD_LIBRARY_PATH)"
std::string describe(const AnswerClosure& answer, std::size_t index) {
  const auto& object = answer.closure.objects[index];
  const auto& facts = answer.facts[index];
  std::string text = object.file->elf->soname.value_or(fs::basename(object.path)) + " (" + object.path;
  if (!facts.version.empty()) {
    text += ", " + facts.version;
  }
  text += ", " + std::string(loader::to_string(object.route));
  if (object.route == Route::rpath || object.route == Route::runpath) {
    if (object.needed_by) {
      text += " of " + fs::basename(answer.closure.objects[*object.needed_by].path);
    }
  }
  return text + ")";
}

// How to stop the loader from reaching `object` the way it did.
std::string route_remedy(const AnswerClosure& answer, std::size_t index,
                         const discovery::DiscoveryResult& discovery, const Environment& env) {
  const auto& object = answer.closure.objects[index];
  discovery::Sighting via;
  via.path = object.path;
  via.search_dir = object.search_dir;
  switch (object.route) {
  case Route::ld_library_path: via.found_via = "LD_LIBRARY_PATH"; break;
  case Route::ld_so_cache: via.found_via = "ld.so.cache"; break;
  case Route::default_dirs: via.found_via = "default-dirs"; break;
  case Route::rpath:
  case Route::runpath: {
    const auto owner = object.needed_by ? fs::basename(answer.closure.objects[*object.needed_by].path) : "";
    return std::string("it comes through the ") + (object.route == Route::rpath ? "DT_RPATH" : "DT_RUNPATH") +
           " of " + owner + " (" + object.search_dir + "): replace the copy there with a matching release";
  }
  default: {
    // A root or a preload: how discovery reached that file names the remedy.
    for (const auto& component : discovery.components) {
      const auto& answer_choice = component.selected ? component.selected : component.loader;
      if (answer_choice && answer_choice->candidate < component.candidates.size() &&
          component.candidates[answer_choice->candidate].realpath == object.file->realpath) {
        return remedy_for_route(answer_choice->via, discovery, env);
      }
    }
    const bool wheel = object.path.find("-packages/") != std::string::npos;
    via.found_via = wheel ? "site-packages" : "";
    if (!wheel) {
      return "replace " + object.path + " with a release that matches the library that needs it";
    }
  }
  }
  return remedy_for_route(via, discovery, env);
}

Finding with_remedy(Finding finding, std::string remedy) {
  finding.remedy = std::move(remedy);
  return finding;
}

struct Problem {
  Finding finding;
  std::vector<std::string> answers;
};

class Collector {
public:
  Collector(const discovery::DiscoveryResult& discovery, const Environment& env)
      : m_discovery(discovery), m_env(env) {}

  void add(const std::string& key, const std::string& component, const AnswerClosure& answer,
           const std::function<Finding()>& make_one) {
    auto [at, inserted] = m_problems.try_emplace(key);
    if (inserted) {
      at->second.finding = make_one();
      m_order.push_back(key);
    }
    auto& problem = at->second;
    auto& components = problem.finding.components;
    if (std::find(components.begin(), components.end(), component) == components.end()) {
      components.push_back(component);
    }
    for (const auto& name : answer.answers) {
      if (std::find(problem.answers.begin(), problem.answers.end(), component + ":" + name) ==
          problem.answers.end()) {
        problem.answers.push_back(component + ":" + name);
      }
    }
  }

  std::vector<Finding> take() {
    std::vector<Finding> out;
    for (const auto& key : m_order) {
      auto& problem = m_problems[key];
      problem.finding.evidence["answers"] = problem.answers;
      std::vector<std::string> words;
      for (const auto& answer : problem.answers) {
        const auto colon = answer.find(':');
        const auto phrase = answer.substr(0, colon) + ": " + answer_words(answer.substr(colon + 1));
        words.push_back(phrase);
      }
      problem.finding.message += " Affects " + join(words, "; ") + ".";
      out.push_back(std::move(problem.finding));
    }
    return out;
  }

  const discovery::DiscoveryResult& m_discovery;
  const Environment& m_env;

private:
  std::map<std::string, Problem> m_problems;
  std::vector<std::string> m_order;
};

// One finding per (needing object, bound object): every symbol the one needs and the other lacks.
void unresolved_symbols(Collector& out, const std::string& component, const AnswerClosure& answer) {
  const auto& closure = answer.closure;
  std::map<std::pair<std::size_t, std::optional<std::size_t>>, std::vector<std::size_t>> groups;
  std::vector<std::pair<std::size_t, std::optional<std::size_t>>> order;
  for (std::size_t i = 0; i < closure.unresolved.size(); ++i) {
    const auto group = std::make_pair(closure.unresolved[i].needed_by, closure.unresolved[i].bound);
    if (groups[group].empty()) {
      order.push_back(group);
    }
    groups[group].push_back(i);
  }
  for (const auto& group : order) {
    const auto& members = groups[group];
    const auto& first = closure.unresolved[members.front()];
    const auto& needing = closure.objects[first.needed_by];
    const std::string bound_path = first.bound ? closure.objects[*first.bound].file->realpath : "";
    out.add("sym|" + needing.file->realpath + "|" + bound_path, component, answer, [&] {
      const auto spelled = [](const loader::UnresolvedSymbol& item) {
        return item.symbol + (item.version.empty() ? "" : ", version " + item.version);
      };
      std::vector<std::string> names;
      for (const auto index : members) {
        names.push_back(closure.unresolved[index].symbol);
      }
      std::string message =
          describe(answer, first.needed_by) + " needs " +
          (members.size() == 1 ? "the symbol " + spelled(first)
                               : std::to_string(members.size()) + " symbols (" + join(names, ", ") +
                                     (first.version.empty() ? "" : ", version " + first.version) + ")") +
          ", which ";
      if (first.bound) {
        message += "the copy the loader binds, " + describe(answer, *first.bound) + ", does not define";
      } else {
        message += "no object of its closure defines";
      }
      message += ": dlopen fails with \"undefined symbol: " + spelled(first) + "\".";
      Evidence evidence = {
          {"symbol", first.symbol},
          {"symbols", names},
          {"version", first.version},
          {"needed_by", needing.path},
          {"bound", first.bound ? EvidenceValue(closure.objects[*first.bound].path) : EvidenceValue()},
          {"bound_via",
           first.bound ? EvidenceValue(std::string(loader::to_string(closure.objects[*first.bound].route)))
                       : EvidenceValue()}};
      std::string remedy;
      if (first.bound) {
        remedy = route_remedy(answer, *first.bound, out.m_discovery, out.m_env);
      }
      const auto& providers = answer.providers[members.front()];
      Evidence::List provider_list;
      for (const auto& provider : providers) {
        provider_list.push_back(
            {{"path", provider.path}, {"found_via", provider.found_via}, {"version", provider.version}});
      }
      evidence["providers"] = std::move(provider_list);
      if (!providers.empty()) {
        const auto& best = providers.front();
        message += " " + best.path + (best.version.empty() ? "" : " (" + best.version + ")") +
                   ", found through " + best.found_via + ", defines " +
                   (members.size() == 1 ? "it." : "them.");
        remedy += std::string(remedy.empty() ? "" : "; ") + "then " + best.path +
                  " is bound, which defines " + (members.size() == 1 ? "it" : "them");
      } else if (remedy.empty()) {
        remedy = "install a release of the dependency that defines " + first.symbol;
      } else {
        remedy += "; no copy found on this machine defines " + first.symbol + ": install a release of " +
                  (first.version_file.empty() ? std::string("the dependency") : first.version_file) +
                  " at least as new as the one " + fs::basename(needing.path) + " was built against";
      }
      return with_remedy(make_finding("lib.undefined_symbol", std::move(message), {}, std::move(evidence)),
                         remedy);
    });
  }
}

void missing_versions(Collector& out, const std::string& component, const AnswerClosure& answer) {
  const auto& closure = answer.closure;
  for (const auto& missing : closure.missing_versions) {
    const auto& needing = closure.objects[missing.needed_by];
    const auto& bound = closure.objects[missing.bound];
    const auto key = "ver|" + missing.version + "|" + needing.file->realpath + "|" + bound.file->realpath;
    out.add(key, component, answer, [&] {
      std::string message = describe(answer, missing.needed_by) + " requires version " + missing.version +
                            " of " + missing.file + ", and the copy the loader binds, " +
                            describe(answer, missing.bound) +
                            ", does not define it: dlopen fails with \"version `" + missing.version +
                            "' not found (required by " + needing.path + ")\".";
      Evidence evidence = {{"version", missing.version},
                           {"file", missing.file},
                           {"needed_by", needing.path},
                           {"bound", bound.path}};
      return with_remedy(
          make_finding("lib.missing_symbol_version", std::move(message), {}, std::move(evidence)),
          route_remedy(answer, missing.bound, out.m_discovery, out.m_env) + "; the loader must bind a " +
              missing.file + " that defines " + missing.version);
    });
  }
}

void missing_dependencies(Collector& out, const std::string& component, const AnswerClosure& answer) {
  const auto& closure = answer.closure;
  for (const auto& missing : closure.missing) {
    const auto& needing = closure.objects[missing.needed_by];
    out.add("dep|" + missing.name + "|" + needing.file->realpath, component, answer, [&] {
      std::string message =
          describe(answer, missing.needed_by) + " needs " + missing.name +
          ", which no directory the loader searches holds (searched: " +
          (missing.searched.empty() ? std::string("nothing") : join(missing.searched, ", ")) +
          "): dlopen fails with \"" + missing.name +
          ": cannot open shared object file: No such file or directory\".";
      std::string remedy = "install the package that provides " + missing.name;
      for (const auto& other : out.m_discovery.components) {
        const auto& names = other.spec->file_names;
        if (std::find(names.begin(), names.end(), missing.name) != names.end() && !other.candidates.empty()) {
          remedy = "a copy exists at " + other.candidates.front().first.path + " (" +
                   other.candidates.front().first.found_via +
                   "): add its directory to LD_LIBRARY_PATH or install " + missing.name +
                   " where the loader looks";
        }
      }
      Evidence evidence = {
          {"name", missing.name}, {"needed_by", needing.path}, {"searched", missing.searched}};
      return with_remedy(make_finding("lib.missing_dependency", std::move(message), {}, std::move(evidence)),
                         remedy);
    });
  }
  for (const auto& broken : closure.broken) {
    const auto& needing = closure.objects[broken.needed_by];
    // One finding per broken file (the cause), listing every component whose closure reaches it.
    out.add("broken|" + broken.path, component, answer, [&] {
      const bool crashes = broken.error.rfind("crashes (SIGBUS)", 0) == 0;
      std::string message = describe(answer, broken.needed_by) + " needs " + broken.name +
                            ", and the loader stops at " + broken.path + ": " + broken.error +
                            (crashes ? "; the process dies." : "; dlopen fails.");
      Evidence evidence = {
          {"name", broken.name}, {"needed_by", needing.path}, {"path", broken.path}, {"error", broken.error}};
      return with_remedy(make_finding("lib.missing_dependency", std::move(message), {}, std::move(evidence)),
                         "remove or replace " + broken.path + " (" + broken.error + ")");
    });
  }
}

// Two files of one catalog component in one closure: what process.duplicate_lib sees in a running
// process, predicted.
void duplicates(Collector& out, const std::string& component, const AnswerClosure& answer) {
  std::map<std::string, std::vector<std::size_t>> by_component;
  for (std::size_t i = 0; i < answer.facts.size(); ++i) {
    if (!answer.facts[i].component.empty()) {
      by_component[answer.facts[i].component].push_back(i);
    }
  }
  for (const auto& entry : by_component) {
    const auto& name = entry.first; // named, not a structured binding: lambdas below capture it (clang 14)
    const auto& objects = entry.second;
    if (objects.size() < 2) {
      continue;
    }
    std::vector<std::string> paths;
    std::vector<std::string> described;
    for (const auto index : objects) {
      paths.push_back(answer.closure.objects[index].file->realpath);
      described.push_back(describe(answer, index));
    }
    std::vector<std::string> sonames;
    for (const auto index : objects) {
      sonames.push_back(answer.closure.objects[index].file->elf->soname.value_or(""));
    }
    // Two SONAMEs (two majors: libnvJitLink.so.12 preloaded, .so.13 through a RUNPATH) bind
    // separately and both work; only two files under one SONAME are the duplicate inspect reports.
    if (!std::all_of(sonames.begin(), sonames.end(), [&](const auto& s) { return s == sonames[0]; })) {
      continue;
    }
    out.add("dup|" + name + "|" + join(paths, "|"), component, answer, [&] {
      Evidence evidence = {{"component", name}, {"paths", paths}, {"sonames", sonames}};
      // Different SONAMEs (two majors) bind separately and work, but their state is not shared: a warning.
      return make_finding("process.duplicate_lib",
                          "Loading it maps " + std::to_string(objects.size()) + " files of " + name +
                              " into one process: " + join(described, " and ") + ".",
                          {}, std::move(evidence));
    });
  }
}

// Whether two versions name one release: equal, or one extends the other ("12.1.3" and "12.1.3.1").
bool same_release(const std::string& a, const std::string& b) {
  const auto& shorter = a.size() <= b.size() ? a : b;
  const auto& longer = a.size() <= b.size() ? b : a;
  return longer.compare(0, shorter.size(), shorter) == 0 &&
         (longer.size() == shorter.size() || longer[shorter.size()] == '.');
}

// Two members of one release group (the catalog's release_group: cuBLAS and cuBLASLt, cuDNN 9 and
// its sub-libraries, ...) bound in one closure with different versions: one finding per pair of
// files, whichever closures bind them, naming both files and how each was reached.
void release_mismatch(Collector& out, const std::string& component, const AnswerClosure& answer) {
  std::vector<std::pair<std::size_t, std::string_view>> members; // object index, its group
  for (std::size_t i = 0; i < answer.facts.size(); ++i) {
    const auto& facts = answer.facts[i];
    if (facts.component.empty() || facts.version.empty()) {
      continue;
    }
    const auto* spec = probes::find_component(facts.component, probes::ComponentKind::dynamic_lib);
    if (spec != nullptr && !spec->release_group.empty()) {
      members.emplace_back(i, spec->release_group);
    }
  }
  for (std::size_t x = 0; x < members.size(); ++x) {
    for (std::size_t y = x + 1; y < members.size(); ++y) {
      auto first = members[x].first;
      auto second = members[y].first;
      const auto& group = members[x].second;
      if (group != members[y].second || answer.facts[first].component == answer.facts[second].component ||
          same_release(answer.facts[first].version, answer.facts[second].version)) {
        continue;
      }
      // The one that needs the other first: "libcublas.so.11 (...) is bound with libcublasLt.so.11 (...)".
      if (answer.closure.objects[first].needed_by == second) {
        std::swap(first, second);
      }
      const auto& one = answer.closure.objects[first];
      const auto& other = answer.closure.objects[second];
      const auto key_a = std::min(one.file->realpath, other.file->realpath);
      const auto key_b = std::max(one.file->realpath, other.file->realpath);
      out.add("rel|" + std::string(group) + "|" + key_a + "|" + key_b, component, answer, [&] {
        const auto& a = answer.facts[first];
        const auto& b = answer.facts[second];
        Evidence evidence = {
            {"group", std::string(group)},
            {"pair", std::vector<std::string>{a.component, b.component}},
            {"paths", std::vector<std::string>{one.path, other.path}},
            {"versions", std::vector<std::string>{a.version, b.version}},
            {"reached_via", std::vector<std::string>{std::string(loader::to_string(one.route)),
                                                     std::string(loader::to_string(other.route))}}};
        auto finding = make_finding("lib.release_mismatch",
                                    a.component + " and " + b.component + " must come from one " +
                                        std::string(group) + " release, but this load binds " +
                                        describe(answer, first) + " with " + describe(answer, second) +
                                        ": calls from one into the other can fail (undefined symbols at "
                                        "load, errors at the first call).",
                                    {}, std::move(evidence));
        finding.components = {a.component, b.component};
        const auto reached = other.needed_by ? second : first;
        return with_remedy(std::move(finding), "install " + a.component + " and " + b.component +
                                                   " from one release; " +
                                                   route_remedy(answer, reached, out.m_discovery, out.m_env));
      });
    }
  }
}

// What loading the closure in a worker showed, where it contradicts the prediction: a library
// that does not load although nothing predicted it (or crashes its process), or a link map that
// differs from the predicted closure (then the closure findings above may be wrong).
void load_check(Collector& out, const std::string& component, const AnswerClosure& answer) {
  if (!answer.check || answer.check->agrees()) {
    return;
  }
  const auto& check = *answer.check;
  const auto& closure = answer.closure;
  const std::string root = closure.objects.empty() ? answer.load_name : closure.objects[closure.root].path;
  Evidence evidence = {
      {"load_name", answer.load_name},   {"status", std::string(worker::to_string(check.status))},
      {"detail", check.detail},          {"error", check.error},
      {"failed_at", check.failed_at},    {"predicted_loads", closure.loads()},
      {"differences", check.differences}};
  if (check.status != worker::StepStatus::ok || (check.error && closure.loads())) {
    out.add("load|" + root + "|" + answer.load_name, component, answer, [&] {
      const bool ended = check.status != worker::StepStatus::ok;
      std::string message =
          root +
          (ended ? " could not be loaded in its worker: " + check.detail
                 : " does not load: dlopen(\"" + check.failed_at.value_or(answer.load_name) +
                       "\") fails with \"" + *check.error + "\"") +
          (closure.loads() ? "; the closure cudadiag predicted loads." : ".");
      std::string remedy;
      if (check.status == worker::StepStatus::crashed || check.status == worker::StepStatus::timeout) {
        remedy =
            "a library's initialisation " +
            std::string(check.status == worker::StepStatus::timeout ? "hangs" : "crashes") +
            " the process that loads it (the worker's last phase names the file): reinstall the package that "
            "provides it and report it to its vendor with the support bundle (`cudadiag bundle`)";
      } else if (ended) {
        remedy = "cudadiag's worker could not do the load (" + check.detail +
                 "): run `cudadiag --json -vv` and report it with the support bundle (`cudadiag bundle`)";
      } else {
        remedy = "the loader's message names the cause (the file, symbol or version it stops at); `cudadiag "
                 "--json` "
                 "shows which file each dependency bound (linkage); cudadiag did not predict this failure: "
                 "please report it with the support bundle (`cudadiag bundle`)";
      }
      return with_remedy(make_finding("lib.load_failed", std::move(message), {}, evidence), remedy);
    });
    return;
  }
  out.add("mispredicted|" + root + "|" + answer.load_name, component, answer, [&] {
    return make_finding("lib.closure_mispredicted",
                        "Loading " + root + " in a worker does not do what cudadiag predicted: " +
                            join(check.differences, "; ") + ".",
                        {}, evidence);
  });
}

} // namespace

std::vector<Finding> evaluate_linkage(const discovery::DiscoveryResult& discovery,
                                      const linkage::Linkage& linkage, const Environment& env) {
  Collector out(discovery, env);
  for (const auto& component : linkage.components) {
    const std::string name(component.spec->name);
    for (const auto& answer : component.closures) {
      missing_dependencies(out, name, answer);
      missing_versions(out, name, answer);
      unresolved_symbols(out, name, answer);
      duplicates(out, name, answer);
      release_mismatch(out, name, answer);
      load_check(out, name, answer);
    }
  }
  auto found = out.take();
  // One cause, one finding: a component whose CUDA Python answer fails only because a dependency
  // cuda-pathfinder loads first fails in its closure is listed by that closure's findings.
  for (const auto& component : discovery.components) {
    const auto cause = load_cause(discovery, component);
    if (!cause || !cause->closure || cause->owner == &component) {
      continue;
    }
    const std::string owner(cause->owner->spec->name);
    const std::string name(component.spec->name);
    for (auto& finding : found) {
      auto& components = finding.components;
      if (finding.severity != Severity::error ||
          std::find(components.begin(), components.end(), owner) == components.end() ||
          std::find(components.begin(), components.end(), name) != components.end()) {
        continue;
      }
      components.push_back(name);
      finding.message += "; it breaks " + name + " too (cuda-pathfinder loads " + owner + " first)";
    }
  }
  return found;
}

} // namespace cudadiag::findings
