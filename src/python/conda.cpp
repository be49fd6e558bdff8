#include "python/conda.hpp"

#include "core/bounded_json.hpp"
#include "python/site_dirs.hpp"
#include "python/venv.hpp"

namespace cudadiag::python {

std::optional<PythonEnvironment> from_conda_prefix(const Context& ctx) {
  const auto value = ctx.env.non_empty("CONDA_PREFIX");
  if (!value) {
    ctx.note("CONDA_PREFIX is not set or empty");
    return std::nullopt;
  }
  const auto prefix = absolute_path(ctx, "CONDA_PREFIX", *value);
  if (!prefix) {
    return std::nullopt;
  }
  if (!fs::is_directory(*prefix)) {
    ctx.note("CONDA_PREFIX=" + *prefix + " is not a directory; ignored");
    return std::nullopt;
  }
  std::string version_from = "lib/pythonX.Y/site-packages";
  auto version = newest_python_entry(fs::join(*prefix, "lib"), [](const std::string& p) {
    return fs::is_directory(fs::join(p, "site-packages"));
  });
  if (!version) {
    version_from = "conda-meta";
    if (auto names = fs::list_directory(fs::join(*prefix, "conda-meta"))) {
      for (const auto& name : *names) {
        constexpr std::string_view k_stem = "python-";
        if (name.compare(0, k_stem.size(), k_stem) == 0 && name.ends_with(".json")) {
          auto found = parse_major_minor(std::string_view(name).substr(k_stem.size()));
          if (found && (!version || *found > *version)) {
            version = found;
          }
        }
      }
    }
  }
  if (!version) {
    ctx.note("CONDA_PREFIX=" + *prefix +
             " holds no Python (no lib/pythonX.Y/site-packages, no conda-meta/python-X.Y*.json)");
    return std::nullopt;
  }
  PythonEnvironment pe;
  pe.label = "CONDA_PREFIX";
  pe.prefix = *prefix;
  pe.base_prefix = *prefix;
  pe.version = version->text();
  pe.interpreter = interpreter_in(*prefix);
  pe.user_site_enabled = !ctx.no_user_site;
  pe.how = "$CONDA_PREFIX=" + *prefix + ", Python " + pe.version + " from " + version_from;
  fill_site_dirs(ctx, pe, {pe.prefix}, detect_flavor(ctx, pe.prefix, *version));
  return pe;
}

std::optional<std::string> owning_conda_package(const std::string& prefix, const std::string& relative) {
  constexpr std::size_t k_record_max_bytes = std::size_t{4} << 20U;
  const auto meta = fs::join(prefix, "conda-meta");
  const auto entries = fs::list_directory(meta);
  if (!entries) {
    return std::nullopt;
  }
  for (const auto& entry : *entries) {
    if (entry.size() < 6 || !entry.ends_with(".json")) {
      continue;
    }
    const auto text = fs::read_file_prefix(fs::join(meta, entry), k_record_max_bytes);
    if (text && text->find("\"" + relative + "\"") != std::string::npos) {
      const auto parsed = bounded_json::parse(*text, {.max_bytes = k_record_max_bytes});
      if (const auto* record = std::get_if<nlohmann::json>(&parsed);
          record != nullptr && record->is_object() && record->contains("name") &&
          (*record)["name"].is_string()) {
        return (*record)["name"].get<std::string>();
      }
      return entry.substr(0, entry.rfind('-', entry.rfind('-') - 1));
    }
  }
  return std::nullopt;
}

} // namespace cudadiag::python
