#include "linkage/link_map.hpp"

#include "core/bounded_json.hpp"
#include "core/filesystem.hpp"
#include "worker/child.hpp"

#include <nlohmann/json.hpp>

#include <dlfcn.h>
#include <link.h>

namespace cudadiag::linkage {
namespace {

using nlohmann::json;

// The loader's objects with a path for a name (not the program itself, not the vDSO), in link map order.
std::vector<MappedObject> link_map_now() {
  std::vector<MappedObject> objects;
  ::dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* out) {
        if (info->dlpi_name != nullptr && info->dlpi_name[0] == '/') {
          static_cast<std::vector<MappedObject>*>(out)->push_back(MappedObject{info->dlpi_name, {}});
        }
        return 0;
      },
      &objects);
  for (auto& object : objects) {
    if (auto resolved = fs::real_path(object.name)) {
      object.realpath = std::move(*resolved);
    }
  }
  return objects;
}

json objects_json(const std::vector<MappedObject>& objects) {
  json out = json::array();
  for (const auto& object : objects) {
    out.push_back({{"name", object.name}, {"realpath", object.realpath}});
  }
  return out;
}

std::optional<std::string> optional_string(const json& object, const char* key) {
  const auto found = object.find(key);
  return found != object.end() && found->is_string() ? std::optional(found->get<std::string>())
                                                     : std::nullopt;
}

std::optional<std::vector<MappedObject>> objects_from(const json& object, const char* key) {
  const auto found = object.find(key);
  if (found == object.end() || !found->is_array()) {
    return std::nullopt;
  }
  std::vector<MappedObject> objects;
  for (const auto& item : *found) {
    auto name = item.is_object() ? optional_string(item, "name") : std::nullopt;
    auto realpath = item.is_object() ? optional_string(item, "realpath") : std::nullopt;
    if (!name || !realpath) {
      return std::nullopt;
    }
    objects.push_back({std::move(*name), std::move(*realpath)});
  }
  return objects;
}

} // namespace

LinkMapFacts load_and_list(const std::string& root, const std::vector<std::string>& preloads) {
  LinkMapFacts facts;
  facts.before = link_map_now();
  std::vector<std::string> order = preloads;
  order.push_back(root);
  for (const auto& name : order) {
    worker::report_phase("dlopen " + name);
    ::dlerror();
    if (::dlopen(name.c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr) {
      const char* message = ::dlerror();
      facts.error = message != nullptr ? message : "dlopen failed (no dlerror text)";
      facts.failed_at = name;
      break;
    }
  }
  worker::report_phase("reading the link map");
  facts.after = link_map_now();
  return facts;
}

std::string join_preloads(const std::vector<std::string>& preloads) {
  std::string joined;
  for (const auto& path : preloads) {
    joined += (joined.empty() ? "" : "\n") + path;
  }
  return joined;
}

std::vector<std::string> split_preloads(std::string_view joined) {
  std::vector<std::string> paths;
  while (!joined.empty()) {
    const auto end = joined.find('\n');
    paths.emplace_back(joined.substr(0, end));
    joined = end == std::string_view::npos ? std::string_view() : joined.substr(end + 1);
  }
  return paths;
}

std::string encode(const LinkMapFacts& facts) {
  const json out = {{"error", facts.error ? json(*facts.error) : json(nullptr)},
                    {"failed_at", facts.failed_at ? json(*facts.failed_at) : json(nullptr)},
                    {"before", objects_json(facts.before)},
                    {"after", objects_json(facts.after)}};
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::optional<LinkMapFacts> decode_link_map(std::string_view text) {
  const auto parsed = bounded_json::parse(text);
  const auto* in = std::get_if<json>(&parsed);
  if (in == nullptr || !in->is_object()) {
    return std::nullopt;
  }
  LinkMapFacts facts;
  facts.error = optional_string(*in, "error");
  facts.failed_at = optional_string(*in, "failed_at");
  auto before = objects_from(*in, "before");
  auto after = objects_from(*in, "after");
  if (!before || !after) {
    return std::nullopt;
  }
  facts.before = std::move(*before);
  facts.after = std::move(*after);
  return facts;
}

} // namespace cudadiag::linkage
