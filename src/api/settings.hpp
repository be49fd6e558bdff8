#pragma once
// Options as the C API carries them: the C++ Options plus which stages cudadiag_report_new runs,
// settable from a JSON object (the keys are listed at cudadiag_options_from_json in cudadiag.h).

#include "core/expected.hpp"
#include "cudadiag/types.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace cudadiag::api {

struct Settings {
  Options options;
  bool verify = false;    // cudadiag_report_new: verify() instead of discover()
  bool self_test = false; // cudadiag_report_new: self_test() (implies verify)
};

// A one-line message naming the first invalid setting (an unknown component or self-test key, a
// timeout outside (0, 3600] seconds, a negative device, an empty variable name or one holding '='),
// or nullopt when `options` is valid.
std::optional<std::string> validate(const Options& options);

// `base` with the keys present in `json` applied. Error (naming the key, or the parse position) when
// `json` is not a JSON object, holds an unknown key or a value of the wrong type, or the result
// does not validate; `base` itself is never modified.
Expected<Settings> apply_json(const Settings& base, std::string_view json);

// Every key, with its current value; apply_json(x, to_json(y).dump()) gives y.
nlohmann::json to_json(const Settings& settings);

} // namespace cudadiag::api
