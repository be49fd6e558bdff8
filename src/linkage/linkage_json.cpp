#include "linkage/linkage_json.hpp"

#include "core/parallel.hpp"

#include <utility>

namespace cudadiag::linkage {
namespace {

using nlohmann::json;

json index_or_null(const std::optional<std::size_t>& index) { return index ? json(*index) : json(nullptr); }

json object_to_json(const LoadedObject& object, const ObjectFacts& facts) {
  return {{"path", object.path},
          {"realpath", object.file->realpath},
          {"soname", object.file->elf->soname ? json(*object.file->elf->soname) : json(nullptr)},
          {"needed_as", object.names},
          {"needed_by", index_or_null(object.needed_by)},
          {"found_via", std::string(to_string(object.route))},
          {"search_dir", object.search_dir},
          {"dependencies", object.dependencies},
          {"component", facts.component.empty() ? json(nullptr) : json(facts.component)},
          {"version", facts.version.empty() ? json(nullptr) : json(facts.version)},
          {"selected", facts.selected},
          {"loader", facts.loader}};
}

json optional_text(const std::optional<std::string>& text) { return text ? json(*text) : json(nullptr); }

json check_to_json(const std::optional<LoadCheck>& check) {
  if (!check) {
    return nullptr;
  }
  return {{"status", check->status},
          {"detail", check->detail},
          {"loads", check->loads()},
          {"error", optional_text(check->error)},
          {"failed_at", optional_text(check->failed_at)},
          {"agrees", check->agrees()},
          {"differences", check->differences},
          {"already_in_worker", check->already_in_worker},
          {"also_loaded", check->also_loaded},
          {"elapsed_ms", check->elapsed_ms}};
}

json closure_to_json(const AnswerClosure& answer) {
  const auto& closure = answer.closure;
  json objects = json::array();
  for (std::size_t i = 0; i < closure.objects.size(); ++i) {
    objects.push_back(object_to_json(closure.objects[i], answer.facts[i]));
  }
  json missing = json::array();
  for (const auto& item : closure.missing) {
    missing.push_back({{"name", item.name}, {"needed_by", item.needed_by}, {"searched", item.searched}});
  }
  json broken = json::array();
  for (const auto& item : closure.broken) {
    broken.push_back({{"name", item.name}, {"path", item.path}, {"needed_by", item.needed_by}, {"error", item.error}});
  }
  json versions = json::array();
  for (const auto& item : closure.missing_versions) {
    versions.push_back(
        {{"version", item.version}, {"file", item.file}, {"needed_by", item.needed_by}, {"bound", item.bound}});
  }
  json unresolved = json::array();
  for (std::size_t i = 0; i < closure.unresolved.size(); ++i) {
    const auto& item = closure.unresolved[i];
    auto providers = providers_to_json(answer.providers[i]);
    unresolved.push_back({{"symbol", item.symbol},
                          {"version", item.version},
                          {"version_file", item.version_file},
                          {"needed_by", item.needed_by},
                          {"bound", index_or_null(item.bound)},
                          {"providers", std::move(providers)}});
  }
  json unchecked = json::array();
  for (const auto& item : closure.unchecked) {
    unchecked.push_back({{"object", item.object}, {"reason", item.reason}});
  }
  return {{"answers", answer.answers},
          {"load_name", answer.load_name},
          {"loads", closure.loads()},
          {"root", closure.objects.empty() ? json(nullptr) : json(closure.root)},
          {"root_error", optional_text(closure.root_error)},
          {"objects", std::move(objects)},
          {"missing", std::move(missing)},
          {"broken", std::move(broken)},
          {"missing_versions", std::move(versions)},
          {"unresolved", std::move(unresolved)},
          {"unchecked", std::move(unchecked)},
          {"references_checked", closure.references_checked},
          {"check", check_to_json(answer.check)}};
}

json import_to_json(const std::optional<FrameworkImport>& import_model) {
  if (!import_model) {
    return nullptr;
  }
  json preloads = json::array();
  for (const auto& preload : import_model->preloads) {
    preloads.push_back({{"folder", preload.folder},
                        {"pattern", preload.pattern},
                        {"required", preload.required},
                        {"path", preload.path.empty() ? json(nullptr) : json(preload.path)},
                        {"passed_over", preload.passed_over},
                        {"outcome", preload.outcome}});
  }
  return {{"statement", import_model->statement},
          {"model", import_model->model},
          {"branch", import_model->branch},
          {"preloads", std::move(preloads)},
          {"load_order", import_model->load_order},
          {"import_error", optional_text(import_model->import_error)}};
}

} // namespace

json providers_to_json(const std::vector<Provider>& providers) {
  json out = json::array();
  for (const auto& provider : providers) {
    out.push_back({{"path", provider.path}, {"found_via", provider.found_via}, {"version", provider.version}});
  }
  return out;
}

json linkage_to_json(const Linkage& linkage) {
  // Each library's closures on their own (a third of a report's bytes): built in parallel.
  json components = json::array_t(parallel_map<json>(linkage.components.size(), [&](std::size_t i) {
    const auto& component = linkage.components[i];
    json closures = json::array();
    for (const auto& answer : component.closures) {
      closures.push_back(closure_to_json(answer));
    }
    return json{{"name", std::string(component.spec->name)}, {"closures", std::move(closures)}};
  }));
  json frameworks = json::array();
  for (const auto& framework : linkage.frameworks) {
    frameworks.push_back({{"framework", framework.framework},
                          {"version", framework.version},
                          {"library", framework.library},
                          {"loads", framework.loads()},
                          {"import", import_to_json(framework.import_model)},
                          {"closure", closure_to_json(framework.closure)}});
  }
  return {{"ran", linkage.ran},
          {"elapsed_ms", linkage.elapsed_ms},
          {"files_read", linkage.files_read},
          {"load_check",
           {{"ran", linkage.load_checked},
            {"skipped_reason", linkage.load_checked ? json(nullptr) : json(linkage.load_check_skipped)},
            {"elapsed_ms", linkage.load_check_ms}}},
          {"components", std::move(components)},
          {"frameworks", std::move(frameworks)}};
}

} // namespace cudadiag::linkage
