#pragma once
// The report's file renderings as one table: each row is a format the CLI writes with its option
// (`--junit FILE`) and, when it names a bundle file, one that every support bundle holds. Adding a
// format is a renderer and a row here.

#include "report/report.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace cudadiag::report {

struct OutputFormat {
  std::string_view flag;        // the CLI option that writes it to a file ("--junit")
  std::string_view bundle_file; // its name inside a bundle ("report.md"); "" when bundles leave it out
  std::string_view help;        // the option's help text
  // The rendering of a report's JSON document (with its "policy" object when it has one); `fail_on`
  // is the level the summary was computed under.
  std::string (*render)(const nlohmann::json& document, FailOn fail_on);
};

// Every format, in the order the CLI writes them.
const std::vector<OutputFormat>& output_formats();

} // namespace cudadiag::report
