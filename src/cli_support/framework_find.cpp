// `cudadiag find --for FRAMEWORK NAME`: the copy of a library a framework's own CUDA library binds
// (linkage/framework_load.hpp), next to the copy CUDA Python would pick.
#include "api/plans.hpp"
#include "cli_support/cli_support.hpp"
#include "core/filesystem.hpp"
#include "core/text.hpp"
#include "linkage/framework_load.hpp"
#include "probes/catalog.hpp"

#include <algorithm>
#include <filesystem>

namespace cudadiag::cli_support {
namespace {

// "needed by libtorch_cuda.so, found through DT_RUNPATH in DIR".
std::string how_bound(const loader::Closure& closure, const loader::LoadedObject& object) {
  std::string out;
  if (object.needed_by && *object.needed_by < closure.objects.size()) {
    out += "needed by " + closure.objects[*object.needed_by].path + ", ";
  }
  out += "found through " + std::string(loader::to_string(object.route));
  if (!object.search_dir.empty()) {
    out += " in " + object.search_dir;
  }
  return out;
}

// The path as a user writes it: "torch/lib/../../nvidia" folded (the loader keeps it as opened).
std::string normal(const std::string& path) {
  return std::filesystem::path(path).lexically_normal().string();
}

} // namespace

FrameworkFind find_for_framework(const Options& options, std::string_view framework, std::string_view name,
                                 bool explain, const Terminal& terminal) {
  FrameworkFind result;
  const auto* spec = probes::find_component(name, probes::ComponentKind::dynamic_lib);
  if (spec == nullptr) {
    result.exit_code = 2;
    result.error =
        "--for answers for a library (cudnn, cublas, nccl, ...); '" + std::string(name) + "' is not one";
    return result;
  }
  Options asked = options;
  asked.components = {"lib/" + std::string(spec->name)};
  auto plan = api::make_plan(asked, api::Stages::discover);
  const auto report = pipeline::run(plan);
  if (!report) {
    result.exit_code = 2;
    result.error = report.error().message;
    return result;
  }
  const auto& discovery = report.value().discovery;
  const auto load = linkage::framework_load(discovery, framework, plan.environment, plan.discovery.layout);
  if (!load) {
    result.exit_code = 2;
    result.error = load.error().message;
    return result;
  }
  const auto& closure = load.value().closure;
  const auto* bound = linkage::object_named(closure, spec->file_names);
  std::string selected;
  for (const auto& component : discovery.components) {
    if (component.spec == spec && component.selected) {
      selected = component.selected->via.path;
    }
  }
  const std::string who = load.value().framework + " " + load.value().version;
  if (bound == nullptr) {
    result.exit_code = 1;
    result.error = who + " does not load " + std::string(spec->name) + ": none of " +
                   join(std::vector<std::string>(spec->file_names.begin(), spec->file_names.end()), ", ") +
                   " is in the dependency closure of " + load.value().library +
                   (closure.loads() ? "" : " (which does not load: run with --explain)");
  }
  if (!explain) {
    if (bound != nullptr) {
      result.text = escape_controls(to_valid_utf8(normal(bound->path))) + "\n";
    }
    return result;
  }
  // One line per fact, each wrapped to the terminal; paths and names escaped as everywhere else.
  const auto line = [&terminal](const std::string& sentence) {
    return wrap_text(escape_controls(to_valid_utf8(sentence)), terminal.width, "", "  ");
  };
  const auto& opened_first = load.value().import_model;
  const auto picked_by_glob = [&](const std::string& path) -> const linkage::FrameworkPreload* {
    if (opened_first) {
      for (const auto& glob : opened_first->preloads) {
        if (glob.path == path) {
          return &glob;
        }
      }
    }
    return nullptr;
  };
  const bool torch = load.value().framework == "torch";
  // What is opened before the framework's library, in order; a run of preloads is one phrase.
  std::string opened;
  std::size_t picks = 0;
  const auto end_picks = [&] {
    if (picks != 0) {
      opened += std::to_string(picks) +
                (torch ? " libraries its _preload_cuda_deps globs pick on sys.path (ctypes.CDLL), then "
                       : " libraries its plugin's _load_nvidia_libraries opens from the nvidia packages "
                         "(ctypes), then ");
      picks = 0;
    }
  };
  for (const auto& preload : load.value().preloads) {
    if (picked_by_glob(preload) != nullptr) {
      ++picks;
      continue;
    }
    end_picks();
    opened += preload + " (RTLD_GLOBAL), then ";
  }
  end_picks();
  result.text += line(who + " opens " + opened + load.value().library + ".");
  const auto outcome = linkage::framework_outcome(closure, opened_first);
  result.text += line("outcome: " + std::string(probes::to_string(outcome)) +
                      (outcome == loader::LoadOutcome::loads
                           ? std::string()
                           : " (" + linkage::framework_failure(closure, opened_first) + ")"));
  if (opened_first) {
    result.text +=
        line(opened_first->statement + " (" + opened_first->model + "): " + opened_first->branch + ".");
    if (opened_first->import_error) {
      result.text += line(opened_first->statement + " fails: " + *opened_first->import_error);
    }
  }
  if (bound != nullptr) {
    const auto shown = normal(bound->path);
    std::string how = how_bound(closure, *bound);
    if (const auto* glob = picked_by_glob(bound->path)) {
      how = torch ? "preloaded by torch's glob " + glob->pattern + " (the first match on sys.path" +
                        (glob->passed_over.empty() ? std::string()
                                                   : "; passed over: " + join(glob->passed_over, ", ")) +
                        ")"
                  : "preloaded by the plugin's _load_nvidia_libraries from nvidia." + glob->folder;
    }
    result.text += line(std::string(spec->name) + ": " + fs::basename(bound->names.front()) + ", " + how +
                        ": " + shown + (shown == bound->path ? "" : " (opened as " + bound->path + ")"));
    if (!selected.empty()) {
      const auto ours = fs::real_path(selected);
      const auto theirs = fs::real_path(bound->path);
      const bool same = ours && theirs && ours.value() == theirs.value();
      result.text += line("CUDA Python (cuda-pathfinder) would load " + selected +
                          (same ? ": the same file." : ": another file."));
    }
  }
  if (bound == nullptr && opened_first && torch) {
    for (const auto& glob : opened_first->preloads) {
      const auto stem = glob.pattern.substr(0, glob.pattern.find(".so") + 3);
      const bool ours = std::any_of(spec->file_names.begin(), spec->file_names.end(),
                                    [&](std::string_view file) { return file.starts_with(stem + "."); });
      if (ours) {
        result.text +=
            line("torch's glob " + glob.pattern + " " +
                 (glob.path.empty()
                      ? std::string("matched nothing on sys.path")
                      : "picked " + glob.path + " (" + glob.outcome + ")" +
                            (glob.passed_over.empty() ? std::string()
                                                      : "; passed over: " + join(glob.passed_over, ", "))) +
                 ": it is not a name " + who + " needs.");
      }
    }
  }
  for (const auto& missing : closure.missing) {
    result.text +=
        line("missing: " + missing.name + ", needed by " + closure.objects[missing.needed_by].path);
  }
  if (closure.root_error) {
    result.text += line("cannot open: " + *closure.root_error);
  }
  return result;
}

} // namespace cudadiag::cli_support
