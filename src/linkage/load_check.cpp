#include "linkage/load_check.hpp"

#include "core/filesystem.hpp"
#include "core/text.hpp"
#include "worker/process.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <thread>

namespace cudadiag::linkage {
namespace {

// Workers at once: twice the CPUs, at least 4, at most 32. A load is mostly mapping files and
// relocating (up to 0.3 s of CPU for cuDNN), so a round is short; bounded so that a loaded node (a
// health check every few seconds beside jobs) never has every closure of the catalog competing for
// its CPUs at once, where a step could pass its timeout without anything hanging.
std::size_t default_parallel() {
  return std::clamp<std::size_t>(2U * std::thread::hardware_concurrency(), 4, 32);
}

// What the prediction says stops the load, as words dlerror() would contain: the missing file's
// name, the undefined symbol, the missing version, the file that is not a library.
std::vector<std::string> predicted_causes(const loader::Closure& closure, const std::string& loaded_as) {
  std::vector<std::string> causes;
  if (closure.root_error) {
    causes.push_back(loaded_as);
  }
  for (const auto& item : closure.missing) {
    causes.push_back(item.name);
  }
  for (const auto& item : closure.broken) {
    causes.push_back(item.path);
    causes.push_back(item.name);
  }
  for (const auto& item : closure.missing_versions) {
    causes.push_back(item.version);
  }
  for (const auto& item : closure.unresolved) {
    causes.push_back(item.symbol);
  }
  return causes;
}

std::string first_cause(const loader::Closure& closure) {
  if (closure.root_error) {
    return *closure.root_error;
  }
  if (!closure.missing.empty()) {
    return closure.missing.front().name + " is not found";
  }
  if (!closure.broken.empty()) {
    return closure.broken.front().path + ": " + closure.broken.front().error;
  }
  if (!closure.missing_versions.empty()) {
    return "version " + closure.missing_versions.front().version + " is missing";
  }
  if (!closure.unresolved.empty()) {
    return "undefined symbol " + closure.unresolved.front().symbol;
  }
  return "no cause";
}

// The names an object answers to in a link map: its SONAME and every name it was needed as.
bool answers_to(const loader::LoadedObject& object, std::string_view name) {
  const auto& soname = object.file->elf ? object.file->elf->soname : std::nullopt;
  return (soname && *soname == name) ||
         std::any_of(object.names.begin(), object.names.end(),
                     [&](const std::string& needed) { return fs::basename(needed) == name; });
}

// The link map comparison of a load that succeeded.
void compare_link_maps(const loader::Closure& closure, const LinkMapFacts& real, LoadCheck& check) {
  std::set<std::string, std::less<>> before;
  for (const auto& object : real.before) {
    before.insert(object.realpath);
  }
  std::set<std::string, std::less<>> after;
  for (const auto& object : real.after) {
    after.insert(object.realpath);
  }
  std::set<std::string, std::less<>> predicted;
  for (const auto& object : closure.objects) {
    predicted.insert(object.file->realpath);
    if (after.count(object.file->realpath) != 0) {
      continue;
    }
    const auto own = std::find_if(real.before.begin(), real.before.end(), [&](const MappedObject& mapped) {
      return answers_to(object, fs::basename(mapped.name));
    });
    if (own != real.before.end()) {
      check.already_in_worker.push_back(object.path + " (the worker's " + own->name + ")");
      continue;
    }
    std::string sentence =
        "predicted " + object.path + " (" + object.file->realpath + "), not in the link map";
    for (const auto& mapped : real.after) {
      if (before.count(mapped.realpath) == 0 && answers_to(object, fs::basename(mapped.name))) {
        sentence += "; the loader took " + mapped.name + " instead";
      }
    }
    check.differences.push_back(std::move(sentence));
  }
  for (const auto& mapped : real.after) {
    if (before.count(mapped.realpath) == 0 && predicted.count(mapped.realpath) == 0) {
      check.also_loaded.push_back(mapped.name);
    }
  }
}

// The outcome already seen for a file of `closure`, or nullptr.
const ProvenOutcome* proven_outcome(const loader::Closure& closure,
                                    const std::map<std::string, ProvenOutcome>& proven) {
  if (proven.empty()) {
    return nullptr;
  }
  for (const auto& object : closure.objects) {
    const auto real = fs::real_path(object.path);
    if (const auto found = proven.find(real ? *real : object.path); found != proven.end()) {
      return &found->second;
    }
  }
  return nullptr;
}

} // namespace

LoadCheck judge(const loader::Closure& closure, const std::string& loaded_as, const LinkMapFacts& real) {
  LoadCheck check;
  check.status = worker::StepStatus::ok;
  check.error = real.error;
  check.failed_at = real.failed_at;
  const bool predicted = closure.loads();
  if (predicted && real.error) {
    check.differences.push_back("predicted to load; dlopen(\"" + real.failed_at.value_or(loaded_as) +
                                "\") failed: " + *real.error);
  } else if (!predicted && !real.error) {
    check.differences.push_back("predicted to fail (" + first_cause(closure) + "); it loaded");
  } else if (!predicted) {
    const auto causes = predicted_causes(closure, loaded_as);
    const bool named = std::any_of(causes.begin(), causes.end(), [&](const std::string& cause) {
      return !cause.empty() && real.error->find(cause) != std::string::npos;
    });
    if (!named) {
      check.differences.push_back("predicted to fail (" + first_cause(closure) +
                                  "); it failed otherwise: " + *real.error);
    }
  }
  if (!real.error) {
    compare_link_maps(closure, real, check);
  }
  return check;
}

void check_by_loading(Linkage& linkage, const LoadCheckOptions& options, const Environment& env) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<AnswerClosure*> closures;
  std::vector<std::vector<std::string>> closure_preloads;
  std::vector<worker::WorkerStep> steps;
  for (auto& component : linkage.components) {
    for (auto& answer : component.closures) {
      std::vector<std::string> preloads;
      for (const auto& object : answer.closure.objects) {
        if (object.route == loader::Route::preloaded) {
          preloads.push_back(object.path);
        }
      }
      closures.push_back(&answer);
      closure_preloads.push_back(preloads);
      std::string id(component.spec->name);
      for (const auto& name : answer.answers) {
        id += (&name == &answer.answers.front() ? " (" : "+") + name;
      }
      steps.emplace_back(id + ")", "link_map", answer.load_name,
                         std::vector<std::string>{join_preloads(preloads)});
    }
  }
  // A closure holding a file verification saw hang or crash is not loaded again; one whose load
  // the cache has proven, with every file unchanged, is judged from that proof.
  std::vector<AnswerClosure*> to_load;
  std::vector<const std::vector<std::string>*> to_load_preloads;
  std::vector<worker::WorkerStep> load_steps;
  for (std::size_t i = 0; i < closures.size(); ++i) {
    if (const auto* proven = proven_outcome(closures[i]->closure, options.proven)) {
      LoadCheck check;
      check.status = proven->status;
      check.detail = "not loaded again: " + proven->detail;
      closures[i]->check = std::move(check);
      continue;
    }
    if (options.cache != nullptr) {
      if (auto cached =
              options.cache->find(closures[i]->closure, closures[i]->load_name, closure_preloads[i])) {
        auto check = judge(closures[i]->closure, closures[i]->load_name, cached->facts);
        check.proven_at = cached->proven_at;
        check.proven_ms = cached->elapsed_ms;
        closures[i]->check = std::move(check);
        continue;
      }
    }
    to_load.push_back(closures[i]);
    to_load_preloads.push_back(&closure_preloads[i]);
    load_steps.push_back(std::move(steps[i]));
  }
  const auto budget = options.total_budget.count() > 0 ? options.total_budget : 2 * options.step_timeout;
  const auto deadline = start + budget;
  // The largest closures start first and a worker starts whenever one ends (not in rounds): the
  // few closures holding cuBLASLt (hundreds of MB, most of the stage's time in their constructors'
  // page faults and relocation) overlap each other and the small ones fill the gaps.
  std::vector<std::size_t> order(load_steps.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    order[i] = i;
  }
  std::vector<std::uint64_t> bytes(load_steps.size(), 0);
  for (std::size_t i = 0; i < to_load.size(); ++i) {
    for (const auto& object : to_load[i]->closure.objects) {
      bytes[i] += fs::file_size(object.file->realpath).value_or(0);
    }
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return bytes[a] > bytes[b]; });
  const std::size_t parallel =
      std::min(load_steps.size(), options.parallel != 0 ? options.parallel : default_parallel());
  std::vector<std::optional<worker::StepOutcome>> outcomes(load_steps.size());
  std::vector<std::chrono::milliseconds> given(load_steps.size(), options.step_timeout);
  std::atomic<std::size_t> next{0};
  const auto run_queue = [&] {
    for (std::size_t taken = next++; taken < order.size(); taken = next++) {
      const auto i = order[taken];
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        continue; // not started: cut
      }
      worker::WorkerOptions worker;
      worker.executable = options.executable;
      worker.step_timeout = std::min(options.step_timeout, left);
      given[i] = worker.step_timeout;
      auto outcome = worker::run_steps({load_steps[i]}, worker, env);
      if (!outcome.empty()) {
        outcomes[i] = std::move(outcome.front());
      }
    }
  };
  {
    std::vector<std::thread> threads;
    for (std::size_t t = 1; t < parallel; ++t) {
      threads.emplace_back(run_queue);
    }
    run_queue();
    for (auto& thread : threads) {
      thread.join();
    }
  }
  std::size_t cut = 0; // closures the bound left unloaded, or ended while they were still loading
  for (std::size_t i = 0; i < load_steps.size(); ++i) {
    if (!outcomes[i]) {
      ++cut;
      continue;
    }
    auto& answer = *to_load[i];
    const auto& outcome = *outcomes[i];
    const auto real =
        outcome.status == worker::StepStatus::ok ? decode_link_map(outcome.result) : std::nullopt;
    LoadCheck check;
    if (real) {
      check = judge(answer.closure, answer.load_name, *real);
      if (options.cache != nullptr) {
        options.cache->store(answer.closure, answer.load_name, *to_load_preloads[i], *real,
                             outcome.elapsed_ms);
      }
    } else {
      check.status = outcome.status == worker::StepStatus::ok ? worker::StepStatus::error : outcome.status;
      check.detail =
          outcome.status == worker::StepStatus::ok ? "the worker's answer is not a link map" : outcome.detail;
    }
    check.elapsed_ms = outcome.elapsed_ms;
    if (check.status == worker::StepStatus::timeout && given[i] < options.step_timeout) {
      // Ended by the stage's bound before its own --timeout: not evidence of a hang, only of a
      // slow machine. Left unchecked, and counted.
      ++cut;
      continue;
    }
    answer.check = std::move(check);
  }
  if (cut > 0) {
    linkage.load_check_cut = std::to_string(cut) + " of " + std::to_string(closures.size()) +
                             " closures not loaded: the load check's bound of " + seconds_text(budget) +
                             " (2 x --timeout) was reached";
  }
  linkage.load_checked = true;
  linkage.load_check_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

} // namespace cudadiag::linkage
