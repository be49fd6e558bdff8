#include "report/closure_text.hpp"

#include "core/text.hpp"
#include "report/json_report.hpp"
#include "report/text_layout.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <vector>

namespace cudadiag::report {
namespace {

using linkage::AnswerClosure;

std::string milliseconds(double value) {
  std::array<char, 32> text{};
  static_cast<void>(std::snprintf(text.data(), text.size(), value < 100 ? "%.1f ms" : "%.0f ms", value));
  return text.data();
}

// "libnvJitLink.so.12 12.1.105 /x/libnvJitLink.so.12 (LD_LIBRARY_PATH; not the selected nvJitLink)"
std::string object_line(const AnswerClosure& answer, std::size_t index) {
  const auto& object = answer.closure.objects[index];
  const auto& facts = answer.facts[index];
  std::string line = object.file->elf->soname.value_or(fs::basename(object.path));
  if (!facts.version.empty()) {
    line += " " + facts.version;
  }
  line += "  " + object.path + " (" + std::string(loader::to_string(object.route));
  if (!facts.component.empty()) {
    line += facts.selected ? "; the selected " + facts.component : "; not the selected " + facts.component;
  }
  return to_valid_utf8(line + ")");
}

class TreeWriter {
public:
  TreeWriter(const AnswerClosure& answer, TextStyle style)
      : m_answer(answer), m_style(style), m_shown(answer.closure.objects.size(), false) {}

  std::string write() {
    const auto& objects = m_answer.closure.objects;
    for (std::size_t i = 0; i < objects.size(); ++i) {
      if (objects[i].route == loader::Route::preloaded) {
        node(i, "    ", "    ");
      }
    }
    if (!objects.empty() &&
        m_answer.closure.objects[m_answer.closure.root].route != loader::Route::preloaded) {
      node(m_answer.closure.root, "    ", "    ");
    }
    return std::move(m_out);
  }

private:
  // One object and, the first time it is shown, its dependencies beneath it (ASCII, as `tree`).
  void node(std::size_t index, const std::string& first, const std::string& rest) {
    const bool again = m_shown[index];
    m_shown[index] = true;
    m_out += wrap(object_line(m_answer, index) + (again ? " (see above)" : ""), m_style.width, first,
                  rest + "    ");
    if (again) {
      return;
    }
    // The system's own libraries (libc, libm, libstdc++ from ld.so.cache or the default dirs) go on
    // one line: the tree is about where the CUDA libraries come from.
    std::vector<std::size_t> shown;
    std::vector<std::string> system;
    for (const auto dependency : m_answer.closure.objects[index].dependencies) {
      if (is_system(dependency)) {
        m_shown[dependency] = true;
        system.push_back(m_answer.closure.objects[dependency].file->elf->soname.value_or(
            fs::basename(m_answer.closure.objects[dependency].path)));
      } else {
        shown.push_back(dependency);
      }
    }
    for (std::size_t i = 0; i < shown.size(); ++i) {
      const bool last = i + 1 == shown.size() && system.empty();
      node(shown[i], rest + (last ? "`-- " : "|-- "), rest + (last ? "    " : "|   "));
    }
    if (!system.empty()) {
      m_out += wrap("system: " + join(system, ", "), m_style.width, rest + "`-- ", rest + "        ");
    }
  }

  [[nodiscard]] bool is_system(std::size_t index) const {
    const auto& object = m_answer.closure.objects[index];
    return m_answer.facts[index].component.empty() &&
           (object.route == loader::Route::ld_so_cache || object.route == loader::Route::default_dirs);
  }

  const AnswerClosure& m_answer;
  TextStyle m_style;
  std::vector<bool> m_shown;
  std::string m_out;
};

std::string outcome(const AnswerClosure& answer, TextStyle style) {
  const auto& closure = answer.closure;
  std::string text = closure.loads() ? paint(style, k_green, "loads") : paint(style, k_red, "fails to load");
  if (answer.check) {
    const auto& check = *answer.check;
    if (check.status != worker::StepStatus::ok) {
      text += "; in a worker: " + paint(style, k_red, worker::to_string(check.status)) + " (" +
              to_valid_utf8(check.detail) + ")";
    } else {
      const std::string how =
          check.proven_at ? "; loaded in a worker at " + linkage::utc_time(*check.proven_at) + " (cache): "
                          : std::string("; loaded in a worker: ");
      text +=
          how + (check.agrees() ? std::string("as predicted") : paint(style, k_yellow, "not as predicted"));
    }
  }
  return text;
}

// What stops the load, and what the worker saw, one wrapped line each.
std::string problems(const AnswerClosure& answer, TextStyle style) {
  const auto& closure = answer.closure;
  const auto name = [&](std::size_t index) { return fs::basename(closure.objects[index].path); };
  std::vector<std::string> lines;
  if (closure.root_error) {
    lines.push_back("cannot open: " + *closure.root_error);
  }
  for (const auto& item : closure.missing) {
    lines.push_back("missing: " + item.name + ", needed by " + name(item.needed_by) + " (searched: " +
                    (item.searched.empty() ? std::string("nothing") : join(item.searched, ", ")) + ")");
  }
  for (const auto& item : closure.broken) {
    lines.push_back("stops at: " + item.path + ", needed by " + name(item.needed_by) + ": " + item.error);
  }
  for (const auto& item : closure.missing_versions) {
    lines.push_back("missing version: " + item.version + " of " + item.file + ", needed by " +
                    name(item.needed_by) + ", not defined by " + closure.objects[item.bound].path);
  }
  // Undefined symbols, one line per needing object, version and bound object.
  for (std::size_t i = 0; i < closure.unresolved.size(); ++i) {
    const auto& item = closure.unresolved[i];
    const auto same_group = [&](const loader::UnresolvedSymbol& other) {
      return other.needed_by == item.needed_by && other.version == item.version && other.bound == item.bound;
    };
    if (std::any_of(closure.unresolved.begin(), closure.unresolved.begin() + static_cast<std::ptrdiff_t>(i),
                    same_group)) {
      continue;
    }
    std::vector<std::string> symbols;
    for (const auto& other : closure.unresolved) {
      if (same_group(other)) {
        symbols.push_back(other.symbol);
      }
    }
    lines.push_back((symbols.size() == 1 ? "undefined symbol"
                                         : "undefined symbols (" + std::to_string(symbols.size()) + ")") +
                    std::string(item.version.empty() ? "" : ", version " + item.version) + ": " +
                    join(symbols, ", ") + "; needed by " + name(item.needed_by) +
                    (item.bound ? ", not defined by " + closure.objects[*item.bound].path : std::string()));
  }
  if (answer.check) {
    if (answer.check->error) {
      lines.push_back("dlerror in the worker: " + *answer.check->error);
    }
    for (const auto& difference : answer.check->differences) {
      lines.push_back("not as predicted: " + difference);
    }
    if (!answer.check->also_loaded.empty()) {
      lines.push_back("also loaded by the libraries' own code: " + join(answer.check->also_loaded, ", "));
    }
  }
  std::string out;
  for (const auto& line : lines) {
    out += wrap(to_valid_utf8(line), style.width, "    ", "      ");
  }
  return out;
}

} // namespace

std::string render_closure(const AnswerClosure& answer, TextStyle style, std::string_view label) {
  const bool by_name = answer.load_name.find('/') == std::string::npos;
  const auto title = std::string(label) + join(answer.answers, "+") +
                     (by_name ? " (dlopen(\"" + answer.load_name + "\"))" : std::string(" (by path)")) +
                     ": " + outcome(answer, style);
  return wrap(to_valid_utf8(title), style.width, "  ", "    ") + TreeWriter(answer, style).write() +
         problems(answer, style);
}

std::string render_closures_section(const linkage::Linkage& linkage, TextStyle style) {
  if (!linkage.ran) {
    return "";
  }
  std::size_t closures = 0;
  std::size_t checked = 0;
  std::size_t agree = 0;
  std::optional<std::int64_t> oldest_proof;
  for (const auto& component : linkage.components) {
    for (const auto& answer : component.closures) {
      ++closures;
      checked += answer.check ? 1U : 0U;
      agree += answer.check && answer.check->agrees() ? 1U : 0U;
      if (answer.check && answer.check->proven_at) {
        oldest_proof = std::min(oldest_proof.value_or(*answer.check->proven_at), *answer.check->proven_at);
      }
    }
  }
  std::string summary = std::to_string(closures) + " closures of " +
                        std::to_string(linkage.components.size()) + " libraries predicted from " +
                        std::to_string(linkage.files_read) + " files in " + milliseconds(linkage.elapsed_ms) +
                        "; ";
  if (linkage.load_checked) {
    summary += "loaded in workers: " + std::to_string(agree) + " of " + std::to_string(checked) +
               " as predicted (" + milliseconds(linkage.load_check_ms) + ")" +
               (linkage.load_check_cut.empty() ? std::string() : "; " + linkage.load_check_cut);
    if (linkage.load_cache.hits > 0 && oldest_proof) {
      summary += "; " + std::to_string(linkage.load_cache.hits) +
                 " answered from the cache of proven loads (files unchanged since " +
                 linkage::utc_time(*oldest_proof) + " or later; --no-cache loads them again)";
    }
    if (!linkage.load_cache.problem.empty()) {
      summary += "; cache " + linkage.load_cache.path + ": " + linkage.load_cache.problem;
    }
  } else {
    summary += "not loaded (" +
               (linkage.load_check_skipped.empty() ? std::string("--no-load") : linkage.load_check_skipped) +
               ")";
  }
  std::string out = "\n" + paint(style, k_bold, "Dependency closures") + "\n" +
                    wrap(to_valid_utf8(summary), style.width, "  ", "    ");
  for (const auto& component : linkage.components) {
    for (const auto& answer : component.closures) {
      if (!answer.closure.loads() || (answer.check && !answer.check->agrees())) {
        out += render_closure(answer, style, std::string(component.spec->name) + ", ");
      }
    }
  }
  return out;
}

} // namespace cudadiag::report
