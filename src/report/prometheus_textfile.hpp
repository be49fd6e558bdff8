#pragma once
// The report as a Prometheus text exposition for node_exporter's textfile collector
// (`--collector.textfile.directory`; `cudadiag --prometheus DIR/cudadiag.prom`). Every metric has
// HELP and TYPE lines; all are gauges:
//   cudadiag_up 1                                        the report was made
//   cudadiag_findings{id,severity}                       how many findings of that id and severity
//   cudadiag_component_info{name,kind,version,found_via} 1 per component found (CUDA Python's answer,
//                                                        else the loader's)
//   cudadiag_selftest_value{device,test,metric,unit}     every self-test figure
//   cudadiag_selftest_score                              the self-test score (absent without one)
//   cudadiag_last_run_timestamp_seconds                  when the report was made (Unix time)
// Reads the report's JSON document; label values are escaped as the format requires (\\, \", \n).

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace cudadiag::report {

// `text` as a label value: backslash, double quote and line feed escaped; invalid UTF-8 replaced.
std::string prometheus_label_value(std::string_view text);

} // namespace cudadiag::report
