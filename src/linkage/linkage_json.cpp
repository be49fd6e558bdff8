#include "linkage/linkage_json.hpp"

#include <string>

namespace cudadiag::linkage {
namespace {

// Each writer below names its members in ascending order, the order a JSON object's keys have in
// the document (JsonStream refuses any other).

void optional_index(JsonStream& out, const std::optional<std::size_t>& index) {
  if (index) {
    out.unsigned_integer(*index);
  } else {
    out.null();
  }
}

// "" is written as null.
void string_or_null(JsonStream& out, const std::string& value) {
  if (value.empty()) {
    out.null();
  } else {
    out.string(value);
  }
}

void write_object(JsonStream& out, const loader::LoadedObject& object, const ObjectFacts& facts) {
  out.begin_object();
  out.key("component");
  string_or_null(out, facts.component);
  out.key("dependencies");
  out.unsigned_integers(object.dependencies);
  out.key("found_via");
  out.string(to_string(object.route));
  out.key("loader");
  out.boolean(facts.loader);
  out.key("needed_as");
  out.strings(object.names);
  out.key("needed_by");
  optional_index(out, object.needed_by);
  out.key("path");
  out.string(object.path);
  out.key("realpath");
  out.string(object.file->realpath);
  out.key("search_dir");
  out.string(object.search_dir);
  out.key("selected");
  out.boolean(facts.selected);
  out.key("soname");
  out.optional_string(object.file->elf->soname);
  out.key("version");
  string_or_null(out, facts.version);
  out.end_object();
}

void write_check(JsonStream& out, const std::optional<LoadCheck>& check) {
  if (!check) {
    out.null();
    return;
  }
  out.begin_object();
  out.key("agrees");
  out.boolean(check->agrees());
  out.key("already_in_worker");
  out.strings(check->already_in_worker);
  out.key("also_loaded");
  out.strings(check->also_loaded);
  out.key("cache");
  if (check->proven_at) {
    out.begin_object();
    out.key("proven_at");
    out.string(utc_time(*check->proven_at));
    out.key("proven_ms");
    out.value(check->proven_ms);
    out.end_object();
  } else {
    out.null();
  }
  out.key("detail");
  out.string(check->detail);
  out.key("differences");
  out.strings(check->differences);
  out.key("elapsed_ms");
  out.value(check->elapsed_ms);
  out.key("error");
  out.optional_string(check->error);
  out.key("failed_at");
  out.optional_string(check->failed_at);
  out.key("loads");
  out.boolean(check->loads());
  out.key("status");
  out.string(worker::to_string(check->status));
  out.end_object();
}

void write_providers(JsonStream& out, const std::vector<Provider>& providers) {
  out.begin_array();
  for (const auto& provider : providers) {
    out.begin_object();
    out.key("found_via");
    out.string(provider.found_via);
    out.key("path");
    out.string(provider.path);
    out.key("version");
    out.string(provider.version);
    out.end_object();
  }
  out.end_array();
}

void write_problems(JsonStream& out, const loader::Closure& closure, const AnswerClosure& answer) {
  out.key("missing");
  out.begin_array();
  for (const auto& item : closure.missing) {
    out.begin_object();
    out.key("name");
    out.string(item.name);
    out.key("needed_by");
    out.unsigned_integer(item.needed_by);
    out.key("searched");
    out.strings(item.searched);
    out.end_object();
  }
  out.end_array();
  out.key("missing_versions");
  out.begin_array();
  for (const auto& item : closure.missing_versions) {
    out.begin_object();
    out.key("bound");
    out.unsigned_integer(item.bound);
    out.key("file");
    out.string(item.file);
    out.key("needed_by");
    out.unsigned_integer(item.needed_by);
    out.key("version");
    out.string(item.version);
    out.end_object();
  }
  out.end_array();
  out.key("objects");
  out.begin_array();
  for (std::size_t i = 0; i < closure.objects.size(); ++i) {
    write_object(out, closure.objects[i], answer.facts[i]);
  }
  out.end_array();
}

void write_closure(JsonStream& out, const AnswerClosure& answer) {
  const auto& closure = answer.closure;
  out.begin_object();
  out.key("answers");
  out.strings(answer.answers);
  out.key("broken");
  out.begin_array();
  for (const auto& item : closure.broken) {
    out.begin_object();
    out.key("error");
    out.string(item.error);
    out.key("name");
    out.string(item.name);
    out.key("needed_by");
    out.unsigned_integer(item.needed_by);
    out.key("path");
    out.string(item.path);
    out.end_object();
  }
  out.end_array();
  out.key("check");
  write_check(out, answer.check);
  out.key("crash");
  out.optional_string(closure.crash);
  out.key("ignored_preloads");
  out.strings(closure.ignored_preloads);
  out.key("load_name");
  out.string(answer.load_name);
  out.key("loads");
  out.boolean(closure.loads());
  write_problems(out, closure, answer); // missing, missing_versions, objects
  out.key("outcome");
  out.string(probes::to_string(closure.outcome()));
  out.key("references_checked");
  out.unsigned_integer(closure.references_checked);
  out.key("root");
  optional_index(out, closure.objects.empty() ? std::nullopt : std::optional<std::size_t>(closure.root));
  out.key("root_error");
  out.optional_string(closure.root_error);
  out.key("unchecked");
  out.begin_array();
  for (const auto& item : closure.unchecked) {
    out.begin_object();
    out.key("object");
    out.unsigned_integer(item.object);
    out.key("reason");
    out.string(item.reason);
    out.end_object();
  }
  out.end_array();
  out.key("unresolved");
  out.begin_array();
  for (std::size_t i = 0; i < closure.unresolved.size(); ++i) {
    const auto& item = closure.unresolved[i];
    out.begin_object();
    out.key("bound");
    optional_index(out, item.bound);
    out.key("needed_by");
    out.unsigned_integer(item.needed_by);
    out.key("providers");
    write_providers(out, answer.providers[i]);
    out.key("symbol");
    out.string(item.symbol);
    out.key("version");
    out.string(item.version);
    out.key("version_file");
    out.string(item.version_file);
    out.end_object();
  }
  out.end_array();
  out.end_object();
}

void write_import(JsonStream& out, const std::optional<FrameworkImport>& import_model) {
  if (!import_model) {
    out.null();
    return;
  }
  out.begin_object();
  out.key("branch");
  out.string(import_model->branch);
  out.key("import_error");
  out.optional_string(import_model->import_error);
  out.key("load_order");
  out.strings(import_model->load_order);
  out.key("model");
  out.string(import_model->model);
  out.key("preloads");
  out.begin_array();
  for (const auto& preload : import_model->preloads) {
    out.begin_object();
    out.key("folder");
    out.string(preload.folder);
    out.key("outcome");
    out.string(preload.outcome);
    out.key("passed_over");
    out.strings(preload.passed_over);
    out.key("path");
    string_or_null(out, preload.path);
    out.key("pattern");
    out.string(preload.pattern);
    out.key("required");
    out.boolean(preload.required);
    out.end_object();
  }
  out.end_array();
  out.key("statement");
  out.string(import_model->statement);
  out.end_object();
}

} // namespace

void write_linkage(JsonStream& out, const Linkage& linkage) {
  out.begin_object();
  out.key("components");
  // Each library's closures on their own: written in parallel.
  out.array_of(linkage.components.size(), [&](JsonStream& element, std::size_t i) {
    const auto& component = linkage.components[i];
    element.begin_object();
    element.key("closures");
    element.begin_array();
    for (const auto& answer : component.closures) {
      write_closure(element, answer);
    }
    element.end_array();
    element.key("name");
    element.string(component.spec->name);
    element.end_object();
  });
  out.key("elapsed_ms");
  out.value(linkage.elapsed_ms);
  out.key("files_read");
  out.unsigned_integer(linkage.files_read);
  out.key("frameworks");
  out.array_of(linkage.frameworks.size(), [&](JsonStream& element, std::size_t i) {
    const auto& framework = linkage.frameworks[i];
    element.begin_object();
    element.key("closure");
    write_closure(element, framework.closure);
    element.key("fails");
    const auto fails = framework_failure(framework.closure.closure, framework.import_model);
    element.optional_string(fails.empty() ? std::nullopt : std::optional<std::string>(fails));
    element.key("framework");
    element.string(framework.framework);
    element.key("import");
    write_import(element, framework.import_model);
    element.key("library");
    element.string(framework.library);
    element.key("loads");
    element.boolean(framework.loads());
    element.key("outcome");
    element.string(probes::to_string(framework_outcome(framework.closure.closure, framework.import_model)));
    element.key("version");
    element.string(framework.version);
    element.end_object();
  });
  out.key("load_check");
  out.begin_object();
  out.key("cache");
  out.begin_object();
  out.key("facts");
  out.unsigned_integer(linkage.load_cache.facts);
  out.key("hits");
  out.unsigned_integer(linkage.load_cache.hits);
  out.key("mode");
  out.string(to_string(linkage.load_cache.mode));
  out.key("path");
  string_or_null(out, linkage.load_cache.path);
  out.key("problem");
  string_or_null(out, linkage.load_cache.problem);
  out.key("stored");
  out.unsigned_integer(linkage.load_cache.stored);
  out.end_object();
  out.key("cut");
  if (linkage.load_check_cut.empty()) {
    out.null();
  } else {
    out.string(linkage.load_check_cut);
  }
  out.key("elapsed_ms");
  out.value(linkage.load_check_ms);
  out.key("ran");
  out.boolean(linkage.load_checked);
  out.key("skipped_reason");
  if (linkage.load_checked) {
    out.null();
  } else {
    out.string(linkage.load_check_skipped);
  }
  out.end_object();
  out.key("ran");
  out.boolean(linkage.ran);
  out.end_object();
}

} // namespace cudadiag::linkage
