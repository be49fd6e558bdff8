#include "verify/facts_codec.hpp"

#include <nlohmann/json.hpp>

#include <type_traits>
#include <utility>

namespace cudadiag::verify {

const LoadFacts* load_facts(const ProbeFacts& facts) {
  return std::visit(
      [](const auto& answer) -> const LoadFacts* {
        if constexpr (std::is_same_v<std::decay_t<decltype(answer)>, std::monostate>) {
          return nullptr;
        } else {
          return &answer;
        }
      },
      facts);
}

namespace {

using json = nlohmann::json;

// ---- encoding ----------------------------------------------------------------------------------

template <class T> json nullable(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

void put_load(json& out, const LoadFacts& facts) {
  out["library"] = facts.library;
  out["loaded"] = facts.loaded;
  out["dlopen_error"] = nullable(facts.dlopen_error);
  out["missing_symbols"] = facts.missing_symbols;
  if (facts.probe_error) {
    out["probe_error"] = *facts.probe_error;
  }
}

json cu_result_json(const std::optional<CuResultInfo>& info) {
  if (!info) {
    return nullptr;
  }
  return {{"code", info->code}, {"name", nullable(info->name)}, {"description", nullable(info->description)}};
}

json driver_device_json(const DriverDevice& device) {
  json out = {{"ordinal", device.ordinal}};
  if (device.error) {
    out["error"] = *device.error;
    return out;
  }
  json attributes = json::object();
  for (const auto& [key, value] : device.attributes) {
    attributes[key] = nullable(value);
  }
  out["name"] = nullable(device.name);
  out["uuid"] = nullable(device.uuid);
  out["pci_bus_id"] = nullable(device.pci_bus_id);
  out["compute_capability"] = nullable(device.compute_capability);
  out["sm_count"] = nullable(device.sm_count);
  out["total_memory_bytes"] = nullable(device.total_memory_bytes);
  out["memory_clock_khz"] = nullable(device.memory_clock_khz);
  out["memory_bus_width_bits"] = nullable(device.memory_bus_width_bits);
  out["peak_bandwidth_gbps"] = nullable(device.peak_bandwidth_gbps);
  out["l2_cache_bytes"] = nullable(device.l2_cache_bytes);
  out["compute_mode"] = nullable(device.compute_mode);
  out["attributes"] = attributes;
  out["errors"] = device.errors;
  return out;
}

json driver_json(const DriverFacts& facts) {
  json out = json::object();
  put_load(out, facts);
  if (facts.internal_error) {
    out["error"] = *facts.internal_error;
    return out;
  }
  json devices = json::array();
  for (const auto& device : facts.devices) {
    devices.push_back(driver_device_json(device));
  }
  out["get_proc_address"] = nullable(facts.get_proc_address);
  out["get_proc_address_error"] = cu_result_json(facts.get_proc_address_error);
  out["init"] = cu_result_json(facts.init);
  out["driver_version"] = nullable(facts.driver_version);
  out["driver_version_error"] = cu_result_json(facts.driver_version_error);
  out["device_count"] = nullable(facts.device_count);
  out["devices"] = devices;
  out["is_stub"] = facts.is_stub;
  return out;
}

json nvml_device_json(const NvmlDevice& device) {
  json out = {{"index", device.index},
              {"name", nullable(device.name)},
              {"uuid", nullable(device.uuid)},
              {"pci_bus_id", nullable(device.pci_bus_id)},
              {"pci_device_id", nullable(device.pci_device_id)},
              {"pcie", nullptr},
              {"ecc", nullptr},
              {"ecc_uncorrected_aggregate", nullable(device.ecc_uncorrected_aggregate)},
              {"remapped_rows", nullptr},
              {"persistence_mode", nullable(device.persistence_mode)},
              {"mig_mode", nullptr},
              {"clocks_event_reasons", nullptr},
              {"errors", json(device.errors)}};
  if (device.pcie) {
    out["pcie"] = {{"gen_current", nullable(device.pcie->gen_current)},
                   {"gen_max", nullable(device.pcie->gen_max)},
                   {"width_current", nullable(device.pcie->width_current)},
                   {"width_max", nullable(device.pcie->width_max)}};
  }
  if (device.ecc) {
    out["ecc"] = {{"current", nullable(device.ecc->current)}, {"pending", nullable(device.ecc->pending)}};
  }
  if (device.remapped_rows) {
    out["remapped_rows"] = {{"correctable", device.remapped_rows->correctable},
                            {"uncorrectable", device.remapped_rows->uncorrectable},
                            {"pending", device.remapped_rows->pending},
                            {"failed", device.remapped_rows->failed}};
  }
  if (device.mig_mode) {
    out["mig_mode"] = {{"current", device.mig_mode->current}, {"pending", device.mig_mode->pending}};
  }
  if (device.clocks_event_reasons) {
    out["clocks_event_reasons"] = {{"mask", device.clocks_event_reasons->mask},
                                   {"active", device.clocks_event_reasons->active}};
  }
  return out;
}

json nvml_json(const NvmlFacts& facts) {
  json out = json::object();
  put_load(out, facts);
  if (!facts.loaded) {
    return out;
  }
  json devices = json::array();
  for (const auto& device : facts.devices) {
    devices.push_back(nvml_device_json(device));
  }
  out["init"] = facts.init ? json{{"code", facts.init->code},
                                  {"name", nullable(facts.init->name)},
                                  {"description", nullable(facts.init->description)}}
                           : json(nullptr);
  out["driver_version"] = nullable(facts.driver_version);
  out["nvml_version"] = nullable(facts.nvml_version);
  out["cuda_driver_version"] = nullable(facts.cuda_driver_version);
  out["cuda_driver_version_api"] = nullable(facts.cuda_driver_version_api);
  out["device_count"] = nullable(facts.device_count);
  out["devices"] = devices;
  out["errors"] = json(facts.errors);
  return out;
}

json nvrtc_json(const NvrtcFacts& facts) {
  json out = json::object();
  put_load(out, facts);
  out["version"] = nullable(facts.version);
  if (facts.version_error) {
    out["version_error"] = *facts.version_error;
  }
  out["supported_archs"] = nullable(facts.supported_archs);
  out["builtins"] = facts.builtins ? to_json(*facts.builtins) : json(nullptr);
  out["compile_check"] = nullptr;
  if (const auto& check = facts.compile_check) {
    out["compile_check"] = {{"ok", check->ok},
                            {"step", check->step},
                            {"code", check->code},
                            {"name", nullable(check->name)},
                            {"log", check->log}};
  }
  return out;
}

json nvjitlink_json(const NvJitLinkFacts& facts) {
  json out = json::object();
  put_load(out, facts);
  out["version"] = nullable(facts.version);
  if (facts.version_error) {
    out["version_error"] = *facts.version_error;
  }
  out["version_api"] = nullable(facts.version_api);
  out["versioned_symbol"] = nullable(facts.versioned_symbol);
  out["entry_point_versions"] = facts.entry_point_versions;
  out["create_check"] = nullptr;
  if (const auto& check = facts.create_check) {
    out["create_check"] = {{"ok", check->ok},
                           {"options", check->options},
                           {"code", check->code},
                           {"name", nullable(check->name)}};
  }
  return out;
}

json cudart_json(const CudartFacts& facts) {
  json out = json::object();
  put_load(out, facts);
  out["runtime_version"] = nullable(facts.runtime_version);
  if (facts.runtime_version_error) {
    out["runtime_version_error"] = facts.runtime_version_error->code;
    out["runtime_version_error_name"] = nullable(facts.runtime_version_error->name);
  }
  out["driver_version"] = nullable(facts.driver_version);
  out["driver_version_error"] = nullptr;
  if (facts.driver_version_error) {
    out["driver_version_error"] = facts.driver_version_error->code;
    out["driver_version_error_name"] = nullable(facts.driver_version_error->name);
  }
  return out;
}

// ---- decoding ----------------------------------------------------------------------------------

// object[key] (a copy), null when absent. Like json_fields.hpp: find, then read through the iterator.
json member(const json& object, const char* key) {
  if (object.is_object()) {
    const auto it = object.find(key);
    if (it != object.end()) {
      return *it;
    }
  }
  return nullptr;
}

std::optional<std::string> get_string(const json& object, const char* key) {
  if (object.is_object()) {
    const auto it = object.find(key);
    if (it != object.end() && it->is_string()) {
      return it->get<std::string>();
    }
  }
  return std::nullopt;
}

template <class Int> std::optional<Int> get_integer(const json& object, const char* key) {
  if (object.is_object()) {
    const auto it = object.find(key);
    if (it != object.end() && it->is_number_integer()) {
      return it->get<Int>();
    }
  }
  return std::nullopt;
}

std::optional<double> get_double(const json& object, const char* key) {
  if (object.is_object()) {
    const auto it = object.find(key);
    if (it != object.end() && it->is_number()) {
      return it->get<double>();
    }
  }
  return std::nullopt;
}

std::optional<bool> get_bool(const json& object, const char* key) {
  if (object.is_object()) {
    const auto it = object.find(key);
    if (it != object.end() && it->is_boolean()) {
      return it->get<bool>();
    }
  }
  return std::nullopt;
}

std::vector<std::string> get_strings(const json& object, const char* key) {
  std::vector<std::string> out;
  if (const auto value = member(object, key); value.is_array()) {
    for (const auto& item : value) {
      if (item.is_string()) {
        out.push_back(item.get<std::string>());
      }
    }
  }
  return out;
}

std::map<std::string, std::string> get_string_map(const json& object, const char* key) {
  std::map<std::string, std::string> out;
  if (const auto value = member(object, key); value.is_object()) {
    for (const auto& [name, text] : value.items()) {
      if (text.is_string()) {
        out[name] = text.get<std::string>();
      }
    }
  }
  return out;
}

void get_load(const json& in, LoadFacts& facts) {
  facts.library = get_string(in, "library").value_or("");
  facts.loaded = get_bool(in, "loaded").value_or(false);
  facts.dlopen_error = get_string(in, "dlopen_error");
  facts.missing_symbols = get_strings(in, "missing_symbols");
  facts.probe_error = get_string(in, "probe_error");
}

std::optional<CuResultInfo> get_cu_result(const json& in, const char* key) {
  const auto value = member(in, key);
  if (!value.is_object()) {
    return std::nullopt;
  }
  return CuResultInfo{get_integer<int>(value, "code").value_or(0), get_string(value, "name"),
                      get_string(value, "description")};
}

DriverDevice get_driver_device(const json& in) {
  DriverDevice device;
  device.ordinal = get_integer<int>(in, "ordinal").value_or(0);
  device.error = get_string(in, "error");
  device.name = get_string(in, "name");
  device.uuid = get_string(in, "uuid");
  device.pci_bus_id = get_string(in, "pci_bus_id");
  device.compute_capability = get_string(in, "compute_capability");
  device.sm_count = get_integer<int>(in, "sm_count");
  device.total_memory_bytes = get_integer<std::uint64_t>(in, "total_memory_bytes");
  device.memory_clock_khz = get_integer<int>(in, "memory_clock_khz");
  device.memory_bus_width_bits = get_integer<int>(in, "memory_bus_width_bits");
  device.peak_bandwidth_gbps = get_double(in, "peak_bandwidth_gbps");
  device.l2_cache_bytes = get_integer<int>(in, "l2_cache_bytes");
  device.compute_mode = get_integer<int>(in, "compute_mode");
  if (const auto attributes = member(in, "attributes"); attributes.is_object()) {
    for (const auto& [key, value] : attributes.items()) {
      device.attributes[key] = value.is_boolean() ? std::optional(value.get<bool>()) : std::nullopt;
    }
  }
  device.errors = get_strings(in, "errors");
  return device;
}

DriverFacts get_driver(const json& in) {
  DriverFacts facts;
  get_load(in, facts);
  facts.internal_error = get_string(in, "error");
  facts.get_proc_address = get_string(in, "get_proc_address");
  facts.get_proc_address_error = get_cu_result(in, "get_proc_address_error");
  facts.init = get_cu_result(in, "init");
  facts.driver_version = get_integer<int>(in, "driver_version");
  facts.driver_version_error = get_cu_result(in, "driver_version_error");
  facts.device_count = get_integer<int>(in, "device_count");
  if (const auto devices = member(in, "devices"); devices.is_array()) {
    for (const auto& device : devices) {
      facts.devices.push_back(get_driver_device(device));
    }
  }
  facts.is_stub = get_bool(in, "is_stub").value_or(false);
  return facts;
}

NvmlDevice get_nvml_device(const json& in) {
  NvmlDevice device;
  device.index = get_integer<unsigned>(in, "index").value_or(0);
  device.name = get_string(in, "name");
  device.uuid = get_string(in, "uuid");
  device.pci_bus_id = get_string(in, "pci_bus_id");
  device.pci_device_id = get_integer<unsigned>(in, "pci_device_id");
  if (const auto pcie = member(in, "pcie"); pcie.is_object()) {
    device.pcie =
        NvmlPcie{get_integer<unsigned>(pcie, "gen_current"), get_integer<unsigned>(pcie, "gen_max"),
                 get_integer<unsigned>(pcie, "width_current"), get_integer<unsigned>(pcie, "width_max")};
  }
  if (const auto ecc = member(in, "ecc"); ecc.is_object()) {
    device.ecc = NvmlEcc{get_bool(ecc, "current"), get_bool(ecc, "pending")};
  }
  device.ecc_uncorrected_aggregate = get_integer<std::uint64_t>(in, "ecc_uncorrected_aggregate");
  if (const auto rows = member(in, "remapped_rows"); rows.is_object()) {
    device.remapped_rows =
        NvmlRemappedRows{get_integer<unsigned>(rows, "correctable").value_or(0),
                         get_integer<unsigned>(rows, "uncorrectable").value_or(0),
                         get_bool(rows, "pending").value_or(false), get_bool(rows, "failed").value_or(false)};
  }
  device.persistence_mode = get_bool(in, "persistence_mode");
  if (const auto mig = member(in, "mig_mode"); mig.is_object()) {
    device.mig_mode =
        NvmlMigMode{get_bool(mig, "current").value_or(false), get_bool(mig, "pending").value_or(false)};
  }
  if (const auto reasons = member(in, "clocks_event_reasons"); reasons.is_object()) {
    device.clocks_event_reasons = NvmlClocksEventReasons{
        get_integer<std::uint64_t>(reasons, "mask").value_or(0), get_strings(reasons, "active")};
  }
  device.errors = get_string_map(in, "errors");
  return device;
}

NvmlFacts get_nvml(const json& in) {
  NvmlFacts facts;
  get_load(in, facts);
  if (const auto init = member(in, "init"); init.is_object()) {
    facts.init = NvmlReturnInfo{get_integer<unsigned>(init, "code").value_or(0), get_string(init, "name"),
                                get_string(init, "description")};
  }
  facts.driver_version = get_string(in, "driver_version");
  facts.nvml_version = get_string(in, "nvml_version");
  facts.cuda_driver_version = get_integer<int>(in, "cuda_driver_version");
  facts.cuda_driver_version_api = get_string(in, "cuda_driver_version_api");
  facts.device_count = get_integer<unsigned>(in, "device_count");
  if (const auto devices = member(in, "devices"); devices.is_array()) {
    for (const auto& device : devices) {
      facts.devices.push_back(get_nvml_device(device));
    }
  }
  facts.errors = get_string_map(in, "errors");
  return facts;
}

NvrtcFacts get_nvrtc(const json& in) {
  NvrtcFacts facts;
  get_load(in, facts);
  facts.version = get_string(in, "version");
  facts.version_error = get_integer<int>(in, "version_error");
  if (const auto archs = member(in, "supported_archs"); archs.is_array()) {
    std::vector<int> list;
    for (const auto& arch : archs) {
      if (arch.is_number_integer()) {
        list.push_back(arch.get<int>());
      }
    }
    facts.supported_archs = std::move(list);
  }
  if (const auto builtins = member(in, "builtins"); builtins.is_object()) {
    facts.builtins =
        NvrtcBuiltins{get_string(builtins, "expected").value_or(""), get_string(builtins, "path"),
                      get_bool(builtins, "loadable").value_or(false), get_string(builtins, "error"),
                      get_string(builtins, "used")};
  }
  if (const auto check = member(in, "compile_check"); check.is_object()) {
    facts.compile_check =
        NvrtcCompileCheck{get_bool(check, "ok").value_or(false), get_string(check, "step").value_or(""),
                          get_integer<int>(check, "code").value_or(0), get_string(check, "name"),
                          get_string(check, "log").value_or("")};
  }
  return facts;
}

NvJitLinkFacts get_nvjitlink(const json& in) {
  NvJitLinkFacts facts;
  get_load(in, facts);
  facts.version = get_string(in, "version");
  facts.version_error = get_integer<int>(in, "version_error");
  facts.version_api = get_string(in, "version_api");
  facts.versioned_symbol = get_string(in, "versioned_symbol");
  facts.entry_point_versions = get_strings(in, "entry_point_versions");
  if (const auto check = member(in, "create_check"); check.is_object()) {
    facts.create_check =
        NvJitLinkCreateCheck{get_bool(check, "ok").value_or(false), get_strings(check, "options"),
                             get_integer<int>(check, "code").value_or(0), get_string(check, "name")};
  }
  return facts;
}

CudartFacts get_cudart(const json& in) {
  CudartFacts facts;
  get_load(in, facts);
  facts.runtime_version = get_integer<int>(in, "runtime_version");
  if (const auto code = get_integer<int>(in, "runtime_version_error")) {
    facts.runtime_version_error = CudartError{*code, get_string(in, "runtime_version_error_name")};
  }
  facts.driver_version = get_integer<int>(in, "driver_version");
  if (const auto code = get_integer<int>(in, "driver_version_error")) {
    facts.driver_version_error = CudartError{*code, get_string(in, "driver_version_error_name")};
  }
  return facts;
}

} // namespace

json to_json(const ProbeFacts& facts) {
  return std::visit(
      [](const auto& answer) -> json {
        using T = std::decay_t<decltype(answer)>;
        if constexpr (std::is_same_v<T, DriverFacts>) {
          return driver_json(answer);
        } else if constexpr (std::is_same_v<T, NvmlFacts>) {
          return nvml_json(answer);
        } else if constexpr (std::is_same_v<T, NvrtcFacts>) {
          return nvrtc_json(answer);
        } else if constexpr (std::is_same_v<T, NvJitLinkFacts>) {
          return nvjitlink_json(answer);
        } else if constexpr (std::is_same_v<T, CudartFacts>) {
          return cudart_json(answer);
        } else {
          return nullptr;
        }
      },
      facts);
}

std::string encode(const ProbeFacts& facts) {
  return to_json(facts).dump(-1, ' ', false, json::error_handler_t::replace);
}

ProbeFacts decode(std::string_view kind, std::string_view text) {
  const auto in = json::parse(text, nullptr, false);
  if (!in.is_object()) {
    return std::monostate{};
  }
  if (kind == "driver") {
    return get_driver(in);
  }
  if (kind == "nvml") {
    return get_nvml(in);
  }
  if (kind == "nvrtc") {
    return get_nvrtc(in);
  }
  if (kind == "nvjitlink") {
    return get_nvjitlink(in);
  }
  if (kind == "cudart") {
    return get_cudart(in);
  }
  return std::monostate{};
}

json to_json(const NvrtcBuiltins& builtins) {
  return {{"expected", builtins.expected},
          {"path", nullable(builtins.path)},
          {"loadable", builtins.loadable},
          {"error", nullable(builtins.error)},
          {"used", nullable(builtins.used)}};
}

json devices_to_json(const std::vector<Device>& devices) {
  json out = json::array();
  for (const auto& device : devices) {
    json entry;
    if (device.driver) {
      entry = driver_device_json(*device.driver);
    } else {
      // A GPU NVML sees but the driver API does not (hidden by CUDA_VISIBLE_DEVICES, or cuInit failed).
      entry = {{"ordinal", nullptr},
               {"name", device.nvml ? device.nvml->name.value_or("") : ""},
               {"uuid", device.nvml ? device.nvml->uuid.value_or("") : ""},
               {"visible_to_cuda", false}};
    }
    if (device.nvml) {
      entry["nvml"] = nvml_device_json(*device.nvml);
    }
    out.push_back(std::move(entry));
  }
  return out;
}

} // namespace cudadiag::verify
