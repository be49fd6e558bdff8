#pragma once
// The one place verification facts meet JSON: the wire codec of the worker protocol (a probe's
// answer as the text of its {"result": ...} line, and back) and their rendering in the report
// ("verification.steps[].result" and "devices"; docs/schema/report.schema.json). Decoding what
// encode wrote gives the same facts back; the rendering is the wire object itself.

#include "verify/facts.hpp"

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace cudadiag::verify {

// The JSON object text of an answer ("null" for monostate). Bytes that are not UTF-8 in the
// libraries' strings are replaced; never throws but for allocation.
std::string encode(const ProbeFacts& facts);

// The facts a worker of probe kind `kind` ("driver", "nvml", "nvrtc", "nvjitlink", "cudart") sent
// as `text`; monostate when the kind is unknown or the text is not such an object.
ProbeFacts decode(std::string_view kind, std::string_view text);

// The report's rendering of an answer: the wire object, null for monostate.
nlohmann::json to_json(const ProbeFacts& facts);

// The rendering of NVRTC's builtins library (a part of to_json's nvrtc object; finding evidence).
nlohmann::json to_json(const NvrtcBuiltins& builtins);

// The report's "devices" array: each GPU's driver facts with its NVML facts under "nvml"; a GPU
// only NVML sees is {"ordinal": null, "name", "uuid", "visible_to_cuda": false, "nvml"}.
nlohmann::json devices_to_json(const std::vector<Device>& devices);

} // namespace cudadiag::verify
